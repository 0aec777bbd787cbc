//! Heat equation `u' = A u_xx + C u_yy + D u_x + E u_y`, forward Euler (section 4.2.1).
//! Grid spacing is 1 in both directions; `dt` is the time step. One field, one stage: the
//! 3 x 3 window centred on the point (`w = 2`, `p = 1`), driven in rolling rows.

use crate::kernels::{parameter_number, Parameters};
use glam::UVec2;
use multiversion::multiversion;

use std::sync::Arc;

use super::{
    Block, BlockIn, BlockOut, CostModel, Driver, Kernel, KernelKind, KernelOptions, KernelSpec,
    Neighbourhood, OptionGroup, Stage,
};
use crate::field::{GlobalField, InitialCondition};
use crate::{invalid, Result};

/// One stage: the window centred on the point.
const fn stage(name: &'static str, flops: u64) -> [Stage; 1] {
    [Stage {
        name,
        origin: -1,
        flops,
        driver: Driver::Rows3,
    }]
}

const HEAT5_STAGES: [Stage; 1] = stage("heat5", 9);
const HEAT9_STAGES: [Stage; 1] = stage("heat9", 17);

/// Table 6: both heat codes receive `4n + 4` words per PE and step.
fn table6_io(n: u64) -> u64 {
    4 * n + 4
}

pub static HEAT5: KernelSpec = KernelSpec {
    kind: KernelKind::Heat5,
    name: "heat5",
    summary: "5-point heat equation, forward Euler (9 FLOPs per point)",
    fields: &["u"],
    stages: &HEAT5_STAGES,
    comm_width: 2,
    wgsl: concat!(include_str!("params.wgsl"), include_str!("heat5.wgsl")),
    cost: CostModel {
        a0: 105.0,
        a1: 3.74,
        a2: 6.72,
    },
    paper_io: (table6_io, "4n+4"),
    travelling_constants: 0,
    // The initial field and its copy in the engine's layout.
    setup_bytes_per_point: 8,
    default_pes: (64, 64),
    options: &[OptionGroup::Heat],
    params_layout: || {
        let rows = std::mem::offset_of!(HeatParams, rows);
        (std::mem::size_of::<HeatParams>(), vec![("rows", rows)])
    },
    configure: |options, grid| configure(KernelKind::Heat5, options, grid),
    random_init: Some(random_init),
    shallow_water: None,
};

pub static HEAT9: KernelSpec = KernelSpec {
    kind: KernelKind::Heat9,
    name: "heat9",
    summary: "9-point heat equation, forward Euler (17 FLOPs per point)",
    fields: &["u"],
    stages: &HEAT9_STAGES,
    comm_width: 2,
    wgsl: concat!(include_str!("params.wgsl"), include_str!("heat9.wgsl")),
    cost: CostModel {
        a0: 97.0,
        a1: 3.5,
        a2: 9.37,
    },
    paper_io: (table6_io, "4n+4"),
    travelling_constants: 0,
    // The initial field and its copy in the engine's layout.
    setup_bytes_per_point: 8,
    default_pes: (64, 64),
    options: &[OptionGroup::Heat],
    params_layout: || {
        let rows = std::mem::offset_of!(HeatParams, rows);
        (std::mem::size_of::<HeatParams>(), vec![("rows", rows)])
    },
    configure: |options, grid| configure(KernelKind::Heat9, options, grid),
    random_init: Some(random_init),
    shallow_water: None,
};

/// A heat kernel of `kind` from the options (`init` in [`InitialCondition`]'s syntax,
/// `gauss` by default).
fn configure(kind: KernelKind, options: &KernelOptions, grid: UVec2) -> Result<Arc<dyn Kernel>> {
    let init = InitialCondition::parse(options.init.as_deref().unwrap_or("gauss"))?;
    Ok(Arc::new(Heat::new(kind, options.heat, init, grid)?))
}

/// Random values in `[0, 1)` from `seed`.
fn random_init(seed: u64) -> String {
    format!("random:{seed}")
}

/// A heat kernel configured for one grid.
#[derive(Clone, Debug)]
pub struct Heat {
    kind: KernelKind,
    pub coefficients: HeatCoefficients,
    weights: Weights,
    init: InitialCondition,
    grid: UVec2,
    /// Heat reads no constant field; one value keeps the binding valid.
    constants: [f32; 1],
}

/// `struct Params` of `params.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct HeatParams {
    pub rows: [[f32; 4]; 3],
}

impl Heat {
    /// Checks the coefficients (stable, every weight non-negative) for `kind` on `grid`.
    pub fn new(
        kind: KernelKind,
        coefficients: HeatCoefficients,
        init: InitialCondition,
        grid: UVec2,
    ) -> Result<Self> {
        coefficients.validate()?;
        kind.spec().check_setup_memory(grid)?;
        let weights = match kind {
            KernelKind::Heat5 => coefficients.five_point(),
            KernelKind::Heat9 => coefficients.nine_point(),
            other => return Err(invalid!("{} is not a heat kernel", other.name())),
        };
        if let Some(w) = weights.rows.iter().flatten().find(|&&w| w < 0.0) {
            let HeatCoefficients { a, c, d, e, dt } = coefficients;
            return Err(invalid!(
                "A = {a}, C = {c}, D = {d}, E = {e}, dt = {dt} give {} a negative weight ({w}), \
                 which makes forward Euler unstable: allowed every weight >= 0 \
                 (for heat5: |D| <= 2A, |E| <= 2C, dt <= 0.5/(A+C))",
                kind.name()
            ));
        }
        Ok(Self {
            kind,
            coefficients,
            weights,
            init,
            grid,
            constants: [0.0],
        })
    }

    /// The stencil weights.
    pub fn weights(&self) -> Weights {
        self.weights
    }
}

impl Kernel for Heat {
    fn spec(&self) -> &'static KernelSpec {
        self.kind.spec()
    }

    fn grid(&self) -> UVec2 {
        self.grid
    }

    fn params(&self) -> Vec<u8> {
        let params = HeatParams {
            rows: self.weights.rows.map(|[a, b, c]| [a, b, c, 0.0]),
        };
        bytemuck::bytes_of(&params).to_vec()
    }

    fn constants(&self) -> &[f32] {
        &self.constants
    }

    fn initial_state(&self) -> Vec<GlobalField> {
        vec![self.init.field(self.grid.x, self.grid.y)]
    }

    fn stage_block(&self, _stage: usize, block: Block, input: &BlockIn, out: &mut BlockOut) {
        match self.kind {
            KernelKind::Heat9 => heat9_block(&self.weights, block, input, out),
            _ => heat5_block(&self.weights, block, input, out),
        }
    }

    fn parameters(&self) -> Parameters {
        let HeatCoefficients { a, c, d, e, dt } = self.coefficients;
        vec![
            ("coef_a", parameter_number(a)),
            ("coef_c", parameter_number(c)),
            ("coef_d", parameter_number(d)),
            ("coef_e", parameter_number(e)),
            ("dt", parameter_number(dt)),
            ("init", self.init.to_string().into()),
        ]
    }
}

/// The PDE coefficients and the time step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeatCoefficients {
    pub a: f32,
    pub c: f32,
    pub d: f32,
    pub e: f32,
    pub dt: f32,
}

impl Default for HeatCoefficients {
    /// Pure diffusion `A = C = 1`, no advection, `dt = 0.2` (stable for both stencils).
    fn default() -> Self {
        Self {
            a: 1.0,
            c: 1.0,
            d: 0.0,
            e: 0.0,
            dt: 0.2,
        }
    }
}

/// Stencil weights `rows[dy+1][dx+1]` applied to the 3 x 3 neighbourhood.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    pub rows: [[f32; 3]; 3],
}

impl HeatCoefficients {
    /// Checks that the coefficients are finite, diffusion is non-negative and forward Euler is
    /// stable (`dt * 2 (A + C) <= 1`, which keeps every weight of the 5-point stencil of pure
    /// diffusion non-negative).
    pub fn validate(&self) -> Result<()> {
        let all = [
            ("A", self.a),
            ("C", self.c),
            ("D", self.d),
            ("E", self.e),
            ("dt", self.dt),
        ];
        for (name, v) in all {
            if !v.is_finite() {
                return Err(invalid!("{name} = {v} must be a finite number"));
            }
        }
        if self.a < 0.0 || self.c < 0.0 {
            return Err(invalid!(
                "A = {} and C = {} must be >= 0 (diffusion, not anti-diffusion)",
                self.a,
                self.c
            ));
        }
        if self.dt <= 0.0 {
            return Err(invalid!("dt = {} must be > 0", self.dt));
        }
        let limit = 0.5 / (self.a + self.c).max(f32::MIN_POSITIVE);
        if self.dt > limit {
            return Err(invalid!(
                "dt = {} is unstable for A = {}, C = {}: allowed 0 < dt <= {limit}",
                self.dt,
                self.a,
                self.c
            ));
        }
        Ok(())
    }

    /// Central differences: the 5 weights of Table 3 (`avec`).
    pub fn five_point(&self) -> Weights {
        let (ax, cy) = (self.dt * self.a, self.dt * self.c);
        let (dx, ey) = (0.5 * self.dt * self.d, 0.5 * self.dt * self.e);
        Weights {
            rows: [
                [0.0, cy - ey, 0.0],
                [ax - dx, 1.0 - 2.0 * (ax + cy), ax + dx],
                [0.0, cy + ey, 0.0],
            ],
        }
    }

    /// Compact 9-point scheme: each one-dimensional difference is averaged over the three rows
    /// (or columns) with weights 1/12, 10/12, 1/12 for second and 1/6, 4/6, 1/6 for first
    /// derivatives. For `A = C` the Laplacian part is the isotropic (Mehrstellen) 9-point one.
    pub fn nine_point(&self) -> Weights {
        let second = [1.0 / 12.0, 10.0 / 12.0, 1.0 / 12.0];
        let first = [1.0 / 6.0, 4.0 / 6.0, 1.0 / 6.0];
        let mut rows = [[0.0f64; 3]; 3];
        let dt = self.dt as f64;
        let (a, c, d, e) = (self.a as f64, self.c as f64, self.d as f64, self.e as f64);
        for k in 0..3 {
            // d_xx and d_x along row k, smoothed across rows.
            let (sx, fx) = (a * second[k] * dt, d * first[k] * dt / 2.0);
            rows[k][0] += sx - fx;
            rows[k][1] -= 2.0 * sx;
            rows[k][2] += sx + fx;
            // d_yy and d_y along column k, smoothed across columns.
            let (sy, fy) = (c * second[k] * dt, e * first[k] * dt / 2.0);
            rows[0][k] += sy - fy;
            rows[1][k] -= 2.0 * sy;
            rows[2][k] += sy + fy;
        }
        rows[1][1] += 1.0;
        Weights {
            rows: rows.map(|r| r.map(|v| v as f32)),
        }
    }
}

/// Points a row computes at once: one AVX-512 register, two AVX2 ones.
const LANES: usize = 16;

/// `out[j]` from columns `j ..= j+2` of three rows (below, middle, above) of `out.len() + 2`
/// values, `LANES` points at a time, the last `LANES` overlapping the ones before where the
/// row is not whole lanes (a scalar tail cost a third of the loop at n = 8).
#[inline(always)]
fn stencil_row(
    weights: &Weights,
    rows: [&[f32]; 3],
    out: &mut [f32],
    point: impl Fn(&Weights, &Neighbourhood) -> f32 + Copy,
) {
    let n = out.len();
    if n < LANES {
        return stencil_run(weights, rows, out, point);
    }
    let mut j = 0;
    while j + LANES < n {
        stencil_lanes(weights, rows, j, out, point);
        j += LANES;
    }
    stencil_lanes(weights, rows, n - LANES, out, point);
}

/// `out[j .. j+LANES]` as one vector sum: each row's three columns are read as three
/// overlapping vectors (one vector and permutes of it kept the shuffle port as busy as the
/// arithmetic), from fixed-length windows, so without bounds checks.
#[inline(always)]
fn stencil_lanes(
    weights: &Weights,
    [below, mid, above]: [&[f32]; 3],
    j: usize,
    out: &mut [f32],
    point: impl Fn(&Weights, &Neighbourhood) -> f32,
) {
    let columns = |row: &[f32]| -> [[f32; LANES]; 3] {
        let window: &[f32; LANES + 2] = row[j..j + LANES + 2].try_into().unwrap();
        [0, 1, 2].map(|dx| window[dx..dx + LANES].try_into().unwrap())
    };
    let (b, m, a) = (columns(below), columns(mid), columns(above));
    let run: &mut [f32; LANES] = (&mut out[j..j + LANES]).try_into().unwrap();
    for (l, out) in run.iter_mut().enumerate() {
        *out = point(
            weights,
            &[
                [b[0][l], b[1][l], b[2][l]],
                [m[0][l], m[1][l], m[2][l]],
                [a[0][l], a[1][l], a[2][l]],
            ],
        );
    }
}

/// `out[j]` from columns `j ..= j+2` of three rows, point by point; the rows are cut to exact
/// lengths so that the loop has no bounds checks.
#[inline(always)]
fn stencil_run(
    weights: &Weights,
    [below, mid, above]: [&[f32]; 3],
    out: &mut [f32],
    point: impl Fn(&Weights, &Neighbourhood) -> f32,
) {
    let n = out.len();
    let (b, m, a) = (&below[..n + 2], &mid[..n + 2], &above[..n + 2]);
    for (j, out) in out.iter_mut().enumerate() {
        *out = point(
            weights,
            &[
                [b[j], b[j + 1], b[j + 2]],
                [m[j], m[j + 1], m[j + 2]],
                [a[j], a[j + 1], a[j + 2]],
            ],
        );
    }
}

/// Every run of a block from its three window rows.
#[inline(always)]
fn stencil_block(
    weights: &Weights,
    Block { rows, len, .. }: Block,
    input: &BlockIn,
    out: &mut BlockOut,
    point: impl Fn(&Weights, &Neighbourhood) -> f32 + Copy,
) {
    for i in 0..rows {
        let window = [0, 1, 2].map(|dy| input.cur(0, i, dy, len + 2));
        let [run, ..] = out.runs(i, len);
        stencil_row(weights, window, run, point);
    }
}

#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn heat5_block(weights: &Weights, block: Block, input: &BlockIn, out: &mut BlockOut) {
    stencil_block(weights, block, input, out, heat5_point)
}

#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn heat9_block(weights: &Weights, block: Block, input: &BlockIn, out: &mut BlockOut) {
    stencil_block(weights, block, input, out, heat9_point)
}

/// Table 3's order: left, down, right, up, centre (5 multiplies, 4 adds).
#[inline(always)]
pub fn heat5_point(w: &Weights, nb: &Neighbourhood) -> f32 {
    let mut y = w.rows[1][0] * nb[1][0];
    y += w.rows[0][1] * nb[0][1];
    y += w.rows[1][2] * nb[1][2];
    y += w.rows[2][1] * nb[2][1];
    y += w.rows[1][1] * nb[1][1];
    y
}

/// Row by row from below-left (9 multiplies, 8 adds).
#[inline(always)]
pub fn heat9_point(w: &Weights, nb: &Neighbourhood) -> f32 {
    let mut y = w.rows[0][0] * nb[0][0];
    y += w.rows[0][1] * nb[0][1];
    y += w.rows[0][2] * nb[0][2];
    y += w.rows[1][0] * nb[1][0];
    y += w.rows[1][1] * nb[1][1];
    y += w.rows[1][2] * nb[1][2];
    y += w.rows[2][0] * nb[2][0];
    y += w.rows[2][1] * nb[2][1];
    y += w.rows[2][2] * nb[2][2];
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_and_bad_dt_is_named() {
        let c = HeatCoefficients {
            a: 0.7,
            c: 0.3,
            d: 0.2,
            e: -0.1,
            dt: 0.2,
        };
        for w in [c.five_point(), c.nine_point()] {
            let sum: f32 = w.rows.iter().flatten().sum();
            assert!((sum - 1.0).abs() < 1e-6, "{w:?}");
        }
        let err = HeatCoefficients { dt: 0.6, ..c }
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("dt = 0.6") && err.contains("dt <= 0.5"),
            "{err}"
        );
    }
}
