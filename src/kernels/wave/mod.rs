//! The linear wave equation `u_tt = c^2 (u_xx + u_yy)` on a periodic grid of unit spacing, in
//! two fields: `u` and `v = dt u_t`. One stage of symplectic Euler, `v += r lap(u)` then
//! `u += v` with `r = (c dt)^2`, from the 3 x 3 window centred on the point (`w = 2`,
//! `p = 1`). It is leapfrog in `u`, so a standing mode follows its discrete dispersion
//! relation exactly. The smallest kernel with two fields and a Point stage: a kernel is this
//! folder and one line of the registry.

use crate::kernels::{parameter_number, Parameters};
use std::sync::Arc;

use glam::UVec2;

use super::{Block, BlockIn, BlockOut, CostModel, Driver, Kernel, KernelKind, KernelSpec, Stage};
use crate::field::{GlobalField, InitialCondition};
use crate::Result;

/// `(c dt)^2` in grid units: half the stability limit of the 5-point Laplacian (0.5).
pub const R: f32 = 0.25;

const STAGES: [Stage; 1] = [Stage {
    name: "wave",
    origin: -1,
    flops: 8,
    driver: Driver::Point,
}];

/// The paper has no row for this kernel: heat5's Table 6 row scaled by the FLOPs per point
/// (8 against 9), an estimate for the timing model.
const COST_SCALE: f64 = 8.0 / 9.0;

/// Words one PE receives per step: Table 6's `4n + 4` of heat for each of the two fields.
fn two_fields_io(n: u64) -> u64 {
    2 * (4 * n + 4)
}

pub static WAVE: KernelSpec = KernelSpec {
    kind: KernelKind::Wave,
    name: "wave",
    summary: "linear wave equation in two fields, symplectic Euler (8 FLOPs per point)",
    fields: &["u", "v"],
    stages: &STAGES,
    comm_width: 2,
    wgsl: include_str!("wave.wgsl"),
    cost: CostModel {
        a0: 105.0 * COST_SCALE,
        a1: 3.74 * COST_SCALE,
        a2: 6.72 * COST_SCALE,
    },
    paper_io: (two_fields_io, "8n+8 (heat's 4n+4 per field)"),
    travelling_constants: 0,
    // The two initial fields and their copies in the engine's layout.
    setup_bytes_per_point: 16,
    default_pes: (64, 64),
    options: &[],
    params_layout: || (std::mem::size_of::<WaveParams>(), WaveParams::offsets()),
    configure: |options, grid| {
        let init = InitialCondition::parse(options.init.as_deref().unwrap_or("gauss"))?;
        Ok(Arc::new(Wave::new(init, grid)?))
    },
    shallow_water: None,
    random_init: Some(|seed| format!("random:{seed}")),
};

/// `struct Params` of `wave.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WaveParams {
    pub r: f32,
    pub _pad: [f32; 3],
}

impl WaveParams {
    /// Member offsets by WGSL name, for the seam test.
    pub fn offsets() -> Vec<(&'static str, usize)> {
        vec![
            ("r", std::mem::offset_of!(WaveParams, r)),
            ("_pad0", std::mem::offset_of!(WaveParams, _pad)),
            ("_pad1", std::mem::offset_of!(WaveParams, _pad) + 4),
            ("_pad2", std::mem::offset_of!(WaveParams, _pad) + 8),
        ]
    }
}

/// The wave kernel configured for one grid.
#[derive(Clone, Debug)]
pub struct Wave {
    init: InitialCondition,
    grid: UVec2,
    /// The kernel reads no constant field; one value keeps the binding valid.
    constants: [f32; 1],
}

impl Wave {
    /// `u` starts as `init` and `v` at rest (random too where `init` is).
    pub fn new(init: InitialCondition, grid: UVec2) -> Result<Self> {
        WAVE.check_setup_memory(grid)?;
        Ok(Self {
            init,
            grid,
            constants: [0.0],
        })
    }
}

impl Kernel for Wave {
    fn spec(&self) -> &'static KernelSpec {
        &WAVE
    }

    fn grid(&self) -> UVec2 {
        self.grid
    }

    fn params(&self) -> Vec<u8> {
        let params = WaveParams {
            r: R,
            _pad: [0.0; 3],
        };
        bytemuck::bytes_of(&params).to_vec()
    }

    fn constants(&self) -> &[f32] {
        &self.constants
    }

    fn initial_state(&self) -> Vec<GlobalField> {
        let UVec2 { x: nx, y: ny } = self.grid;
        let v = match self.init {
            InitialCondition::Random { seed } => {
                InitialCondition::Random { seed: !seed }.field(nx, ny)
            }
            _ => GlobalField::zeros(nx, ny),
        };
        vec![self.init.field(nx, ny), v]
    }

    fn stage_block(&self, _stage: usize, block: Block, input: &BlockIn, out: &mut BlockOut) {
        wave_block(R, block, input, out);
    }

    fn parameters(&self) -> Parameters {
        vec![
            ("courant_squared", parameter_number(R)),
            ("init", self.init.to_string().into()),
        ]
    }
}

/// The CPU twin of `wave.wgsl`: the same operations in the same order.
fn wave_block(r: f32, block: Block, input: &BlockIn, out: &mut BlockOut) {
    let len = block.len;
    for i in 0..block.rows {
        let [below, row, above] = [0, 1, 2].map(|dy| input.cur(0, i, dy, len + 2));
        let v = input.cur(1, i, 1, len + 2);
        let [out_u, out_v, ..] = out.runs(i, len);
        for j in 0..len {
            let here = row[j + 1];
            let lap = ((row[j + 2] + row[j]) + (above[j + 1] + below[j + 1])) - 4.0 * here;
            let next = v[j + 1] + r * lap;
            out_u[j] = here + next;
            out_v[j] = next;
        }
    }
}

/// The exact solution of the scheme for `u` started as the mode `cos(2 pi (kx x / nx + ky y /
/// ny))` at rest: `u_t = cos(t theta + theta / 2) / cos(theta / 2)` times the mode, where
/// `cos theta = 1 - r lambda / 2` and `lambda = 4 sin^2(pi kx / nx) + 4 sin^2(pi ky / ny)`
/// is the mode's eigenvalue of `-lap`.
pub fn mode_amplitude(kx: u32, ky: u32, grid: UVec2, steps: u64) -> f64 {
    use std::f64::consts::PI;
    let s = |k: u32, size: u32| (PI * k as f64 / size as f64).sin().powi(2);
    let lambda = 4.0 * (s(kx, grid.x) + s(ky, grid.y));
    let theta = (1.0 - R as f64 * lambda / 2.0).acos();
    (steps as f64 * theta + theta / 2.0).cos() / (theta / 2.0).cos()
}
