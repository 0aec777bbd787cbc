//! `swe-c`: the shallow-water equations of section 4.2.2 on the paper's Mercator globe,
//! forward-backward in time on a staggered C-grid, with fourth-order gravity-wave terms.
//!
//! **Grid locations.** `eta` (the surface above the sea at rest, m) at the cell centres; `u`
//! (east velocity, m/s) at each cell's east face, `(x + 1/2, y)`; `v` (north velocity) at its
//! north face, `(x, y + 1/2)`. Each is stored at its cell's index.
//!
//! **Step.** Three stages, each one remap:
//!
//! ```text
//! east faces:   u+ = u + dt [ -g G_x(eta) + (f + u tan/a) v~ - adv(u) ]
//! north faces:  v+ = v + dt [ -g G_y(eta) - (f + u+~ tan/a) u+~ - adv(v) ]
//! continuity:   eta+ = eta - dt / (a cos^2) [ cos D_lam(F_x) + D_y(cos F_y) ] - k lap(lap(eta)),
//!               F = (H + eta~) (u+, v+)
//! ```
//!
//! `G` is the gradient across a face over the distance between the two centres, `D` the
//! flux difference across a cell; `v~` and `u~` are four-face means, `eta~` the upwind
//! surface, `H` the face's depth at rest. Where the four cells along a face's line are water,
//! `G` and the `H u` part of `D` take the fourth-order staggered differences `(27 (b - a) -
//! (c - z)) / 24` (`z, a | b, c`); elsewhere the two-point ones. Each cell's flux divergence
//! uses, face by face, the weights that face's gradient gives that cell, so the linear scheme
//! keeps the discrete energy `1/2 g eta^2 + 1/2 H u u+` exactly (forward-backward is
//! symplectic); advection is first-order upwind and the `eta u` flux upwind, which only take
//! energy out. The Coriolis force turns `u` with the old `v` and then `v` with the new `u`,
//! which is symplectic too: no energy from rotation, and a balanced (geostrophic) flow stays
//! put. The flux form keeps the volume `sum eta area` up to rounding. A weak biharmonic filter
//! of the surface ([`FILTER`], its Laplacian kept as a fourth field between the stages) damps
//! the grid-scale checkerboard, which a C-grid would otherwise carry undamped.
//!
//! **Why this scheme.** The paper's Lax-Wendroff (`swe`) has every field at the centres, a
//! second-order error four times the C-grid's along the axes, and a stationary checkerboard;
//! with the 1 cm threshold on a 200 m hump the numerical front runs ahead of the exact one by
//! 7 to 9 cells at the default resolution (docs/design.md has the convergence table). This one
//! leads by about 3.5: the gain that fourth-order terms buy before the grid itself sets the
//! limit. It runs on the wafer as every kernel does: its windows are 4 x 4 (`w = 3`), the
//! face stages centred (origin -1, translation 2 each), the continuity one reaching back
//! (origin -2, translation 1): five points per step.
//!
//! **Coasts.** A face is open when both cells are water; it closes for a step when the cell
//! it would drain holds less than [`DRY`] metres, so no depth goes negative. The face depth is
//! the mean of the two cells' depths, capped at twice the shallower one: a fixed depth per
//! face (so the energy above holds) that never lets a deep neighbour drain a shallow cell.

mod scheme;

use crate::kernels::Parameters;
use std::sync::Arc;

use glam::UVec2;

use crate::field::{grid_values, GlobalField};
use crate::kernels::swe::sphere::Sphere;
use crate::kernels::swe::{
    self, Ocean, ShallowWater, SweConfig, Walls, EARTH_RADIUS, GRAVITY, OMEGA, WATER_DENSITY,
};
use crate::kernels::{
    Block, BlockIn, BlockOut, CostModel, Driver, Kernel, KernelKind, KernelSpec, OptionGroup, Stage,
};
use crate::render::Picture;
use crate::{invalid, Result};

/// A face closes when the cell it would drain holds less water than this (m).
pub const DRY: f32 = 1.0;

/// The biharmonic filter of the surface, per step: `eta -= FILTER lap(lap(eta))` in cells.
/// It takes `64 FILTER` (1/128) of the grid-scale checkerboard out each step and
/// `FILTER (k dx)^4` of a wave, 1e-6 of one 20 cells long.
pub const FILTER: f32 = 1.0 / 8192.0;

const STAGES: [Stage; 3] = [
    Stage {
        name: "swe_c_east",
        origin: -1,
        flops: EAST_FLOPS,
        driver: Driver::Point,
    },
    Stage {
        name: "swe_c_north",
        origin: -1,
        flops: NORTH_FLOPS,
        driver: Driver::Point,
    },
    Stage {
        name: "swe_c_continuity",
        origin: -2,
        flops: CONTINUITY_FLOPS,
        driver: Driver::Point,
    },
];

/// FLOPs per point of each stage as written (common subexpressions once; selects and the
/// fourth-order weights from their flags counted).
const EAST_FLOPS: u64 = 50;
const NORTH_FLOPS: u64 = 39;
const CONTINUITY_FLOPS: u64 = 64;

/// The paper has no row for this kernel: its Table 6 SWE row scaled by the FLOPs per step
/// (125 against 155), an estimate for the timing model.
const COST_SCALE: f64 = (EAST_FLOPS + NORTH_FLOPS + CONTINUITY_FLOPS) as f64 / 155.0;

/// Words per PE and step of the paper's SWE code, which this kernel has no figure of its own
/// for: its own package layout is what the timing model charges.
fn paper_io(n: u64) -> u64 {
    64 * n + 80
}

pub static SWE_C: KernelSpec = KernelSpec {
    kind: KernelKind::SweC,
    name: "swe-c",
    summary: "shallow-water equations on a Mercator grid, forward-backward on a C-grid with fourth-order gravity waves",
    fields: &["u", "v", "eta", "lap_eta"],
    stages: &STAGES,
    comm_width: 3,
    wgsl: include_str!("swe_c.wgsl"),
    cost: CostModel {
        a0: 1026.0 * COST_SCALE,
        a1: 183.2 * COST_SCALE,
        a2: 137.6 * COST_SCALE,
    },
    paper_io: (paper_io, "64n+80 (the paper's SWE)"),
    // Depths at the centre and the faces and the fourth-order flags of the faces.
    travelling_constants: 6,
    // The relief in f64, the constant planes and their padded copy, the three state fields.
    setup_bytes_per_point: 68,
    default_pes: swe::DEFAULT_PES,
    options: &[OptionGroup::ShallowWater],
    params_layout: || (std::mem::size_of::<SweCParams>(), SweCParams::offsets()),
    configure: |options, grid| Ok(Arc::new(SweC::new(swe::config_of(options)?, grid)?)),
    shallow_water: Some(|config, grid| Ok(Arc::new(SweC::new(config, grid)?))),
    random_init: Some(swe::random_init),
};

/// `struct Params` of `swe_c.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SweCParams {
    pub nx: u32,
    pub ny: u32,
    pub dt: f32,
    pub g: f32,
    pub inv_dlam: f32,
    pub inv_dy: f32,
    pub dry: f32,
    pub damping: f32,
}

impl SweCParams {
    /// Member offsets by WGSL name, for the seam test.
    pub fn offsets() -> Vec<(&'static str, usize)> {
        use std::mem::offset_of;
        vec![
            ("nx", offset_of!(Self, nx)),
            ("ny", offset_of!(Self, ny)),
            ("dt", offset_of!(Self, dt)),
            ("g", offset_of!(Self, g)),
            ("inv_dlam", offset_of!(Self, inv_dlam)),
            ("inv_dy", offset_of!(Self, inv_dy)),
            ("dry", offset_of!(Self, dry)),
            ("damping", offset_of!(Self, damping)),
        ]
    }
}

/// The constant planes (`CONSTS` of `swe_c.wgsl`), each `nx * ny`, row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Plane {
    /// Depth at rest of a cell that holds water, 0 elsewhere.
    Depth,
    /// Depth at rest of the cell's east face where it is open, 0 where closed.
    EastDepth,
    /// The same of its north face.
    NorthDepth,
    /// 1 where the east face's gradient is fourth-order (four water cells along the row).
    EastOrder4,
    /// 1 where the north face's is.
    NorthOrder4,
    /// 1 where the cell and its faces keep their initial state (sea in prescribed walls).
    Fixed,
}

/// Planes of the grid in the constants.
pub const PLANES: usize = 6;

/// The row terms (`ROW_CONSTS` of `swe_c.wgsl`), `ny` values each after the planes: of the
/// centre row (`c`) and of its north edge (`v`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum RowTerm {
    /// `cos(lat)` of the centre row and of its north edge.
    CosC,
    CosV,
    /// Coriolis `2 Omega sin(lat)`.
    CoriolisC,
    CoriolisV,
    /// `tan(lat) / a`.
    TanC,
    TanV,
    /// `1 / (a cos dlam)` and `1 / (a cos dy)`, the inverse distances between centres along
    /// and across the row (at the centre row and at its north edge).
    AlongC,
    AcrossC,
    AlongV,
    AcrossV,
    /// `1 / (a cos^2)` of the centre row.
    Continuity,
}

/// Row terms per row.
pub const ROW_TERMS: usize = 11;

/// The constants in the layout `swe_c.wgsl` reads through `consts_at`, and the planes again
/// for the CPU twin, each row padded with `PAD` wrapped columns either side.
#[derive(Clone, Debug)]
pub struct Constants {
    nx: u32,
    ny: u32,
    data: Vec<f32>,
    padded: Vec<f32>,
}

/// Wrapped columns on either side of a padded row: a window reaches two columns.
const PAD: u32 = 2;

impl Constants {
    fn new(nx: u32, ny: u32, data: Vec<f32>) -> Self {
        let mut c = Self {
            nx,
            ny,
            data,
            padded: vec![],
        };
        let width = nx + 2 * PAD;
        c.padded = grid_values(width, PLANES as u32 * ny, |x, row| {
            c.at((row / ny) as usize, x + nx - PAD, row % ny)
        });
        c
    }

    fn plane_len(&self) -> usize {
        self.nx as usize * self.ny as usize
    }

    /// Plane `plane` at `(x, y)`, wrapped.
    pub fn at(&self, plane: usize, x: u32, y: u32) -> f32 {
        let (x, y) = ((x % self.nx) as usize, (y % self.ny) as usize);
        self.data[plane * self.plane_len() + y * self.nx as usize + x]
    }

    /// `len` values of plane `plane` of row `y` (wrapped) from column `from`
    /// (`-PAD <= from`, `from + len <= nx + PAD`).
    pub fn run(&self, plane: Plane, y: u32, from: i64, len: usize) -> &[f32] {
        let y = (y % self.ny) as usize;
        let row = (plane as usize * self.ny as usize + y) * (self.nx + 2 * PAD) as usize;
        &self.padded[row + (from + PAD as i64) as usize..][..len]
    }

    /// Rows of the grid.
    pub fn ny(&self) -> u32 {
        self.ny
    }

    /// Row term `term` of row `y` (wrapped).
    pub fn row(&self, term: RowTerm, y: u32) -> f32 {
        let y = (y % self.ny) as usize;
        self.data[PLANES * self.plane_len() + term as usize * self.ny as usize + y]
    }
}

/// `swe-c` configured for one grid.
#[derive(Clone, Debug)]
pub struct SweC {
    ocean: Ocean,
    params: SweCParams,
    constants: Constants,
}

impl SweC {
    /// Resamples the relief onto the grid, builds the constant fields and picks `dt`.
    pub fn new(config: SweConfig, grid: UVec2) -> Result<Self> {
        config.validate()?;
        if grid.x < 4 || grid.y < 4 {
            return Err(invalid!(
                "a shallow-water grid of {}x{} points is too small: allowed at least 4x4",
                grid.x,
                grid.y
            ));
        }
        SWE_C.check_setup_memory(grid)?;
        let ocean = Ocean::new(config, grid)?;
        let (config, sphere) = (&ocean.config, &ocean.sphere);
        let data = constant_fields(sphere, config);
        let mut kernel = Self {
            params: SweCParams {
                nx: grid.x,
                ny: grid.y,
                dt: 0.0,
                g: GRAVITY as f32,
                inv_dlam: (1.0 / sphere.mercator.dlam()) as f32,
                inv_dy: (1.0 / sphere.mercator.dy) as f32,
                dry: DRY,
                damping: FILTER,
            },
            constants: Constants::new(grid.x, grid.y, data),
            ocean,
        };
        let (dt, limit) = swe::stable_dt(&kernel, &kernel.initial_state())?;
        kernel.params.dt = kernel.ocean.config.step_dividing(dt) as f32;
        (kernel.ocean.dt, kernel.ocean.speed_limit) = (kernel.params.dt as f64, limit);
        Ok(kernel)
    }

    /// The constant `plane` at `(x, y)`, wrapped.
    fn plane(&self, plane: Plane, x: u32, y: u32) -> f32 {
        self.constants.at(plane as usize, x, y)
    }
}

/// The planes and row terms of `sphere` in the layout of [`Constants`].
fn constant_fields(sphere: &Sphere, config: &SweConfig) -> Vec<f32> {
    let UVec2 { x: nx, y: ny } = sphere.grid();
    let wall = |y: u32| y == 0 || y + 1 == ny;
    let prescribed = config.walls == Walls::Prescribed;
    // Cells that hold water: water, and sea in the walls where they are prescribed.
    let holds = |x: u32, y: u32| {
        let y = y % ny;
        match wall(y) {
            true => prescribed && sphere.depth(x, y) >= config.least_depth.max(f64::MIN_POSITIVE),
            false => sphere.is_wet(x, y),
        }
    };
    let depth = |x: u32, y: u32| if holds(x, y) { sphere.depth(x, y) } else { 0.0 };
    let face = |a: f64, b: f64| (0.5 * (a + b)).min(2.0 * a.min(b));
    let east = |x: u32| (x + 1) % nx;
    // A north face across the y-wrap joins the two walls: closed.
    let north_open = |x: u32, y: u32| y + 1 < ny && holds(x, y) && holds(x, y + 1);
    let east_open = |x: u32, y: u32| holds(x, y) && holds(east(x), y);
    let column = |x: u32, k: i64| (x as i64 + k).rem_euclid(nx as i64) as u32;
    let row = |y: u32, k: i64| (y as i64 + k).clamp(0, ny as i64 - 1) as u32;
    let order4_east = |x: u32, y: u32| (-1..=2).all(|k| holds(column(x, k), y));
    let order4_north =
        |x: u32, y: u32| y >= 1 && y + 2 < ny && (-1..=2).all(|k| holds(x, row(y, k)));
    let planes: [&(dyn Fn(u32, u32) -> f64 + Sync); PLANES] = [
        &|x, y| depth(x, y),
        &|x, y| match east_open(x, y) {
            true => face(depth(x, y), depth(east(x), y)),
            false => 0.0,
        },
        &|x, y| match north_open(x, y) {
            true => face(depth(x, y), depth(x, y + 1)),
            false => 0.0,
        },
        &|x, y| (east_open(x, y) && order4_east(x, y)) as u32 as f64,
        &|x, y| (north_open(x, y) && order4_north(x, y)) as u32 as f64,
        &|_, y| (prescribed && wall(y)) as u32 as f64,
    ];
    let m = &sphere.mercator;
    let omega = if config.coriolis { OMEGA } else { 0.0 };
    let (dlam, dy) = (m.dlam(), m.dy);
    let a = EARTH_RADIUS;
    let terms: [&dyn Fn(f64) -> f64; ROW_TERMS] = [
        &|c| c.cos(),
        &|v| v.cos(),
        &|c| 2.0 * omega * c.sin(),
        &|v| 2.0 * omega * v.sin(),
        &|c| c.tan() / a,
        &|v| v.tan() / a,
        &|c| 1.0 / (a * c.cos() * dlam),
        &|c| 1.0 / (a * c.cos() * dy),
        &|v| 1.0 / (a * v.cos() * dlam),
        &|v| 1.0 / (a * v.cos() * dy),
        &|c| 1.0 / (a * c.cos().powi(2)),
    ];
    // Even terms are of the centre row, odd ones (but the last) of its north edge.
    let at_edge = |t: usize| t % 2 == 1 && t + 1 < ROW_TERMS;
    let mut data = Vec::with_capacity(PLANES * (nx * ny) as usize + ROW_TERMS * ny as usize);
    for plane in planes {
        data.extend(grid_values(nx, ny, |x, y| plane(x, y) as f32));
    }
    for (t, term) in terms.iter().enumerate() {
        let edge = if at_edge(t) { 0.5 } else { 0.0 };
        data.extend((0..ny).map(|y| term(m.lat(y as f64 + edge)) as f32));
    }
    data
}

impl ShallowWater for SweC {
    fn ocean(&self) -> &Ocean {
        &self.ocean
    }

    /// `u` and `v` at a centre are the means of its two faces'.
    fn at_centres(&self, state: &[GlobalField]) -> [GlobalField; 3] {
        use rayon::prelude::*;
        let (u, v, eta) = (&state[0], &state[1], &state[2]);
        let (nx, ny) = (eta.nx as usize, eta.ny as usize);
        let [mut u_c, mut v_c] = [(); 2].map(|_| GlobalField::zeros(eta.nx, eta.ny));
        fn rows(f: &GlobalField, y: usize) -> &[f32] {
            &f.data[y * f.nx as usize..][..f.nx as usize]
        }
        // A centre's u is the mean of its west and east faces', its v of its south and north.
        u_c.data
            .par_chunks_mut(nx)
            .enumerate()
            .for_each(|(y, out)| {
                let east = rows(u, y);
                out[0] = 0.5 * (east[nx - 1] + east[0]);
                for (o, w) in out[1..].iter_mut().zip(east.windows(2)) {
                    *o = 0.5 * (w[0] + w[1]);
                }
            });
        v_c.data
            .par_chunks_mut(nx)
            .enumerate()
            .for_each(|(y, out)| {
                let (south, north) = (rows(v, (y + ny - 1) % ny), rows(v, y));
                for ((o, s), n) in out.iter_mut().zip(south).zip(north) {
                    *o = 0.5 * (s + n);
                }
            });
        [eta.clone(), u_c, v_c]
    }

    /// Potential `1/2 rho g eta^2` over wet centres and kinetic `1/2 rho D u u+` over open
    /// faces, `D` the face's depth at rest plus the mean surface of its two cells and `u+` the
    /// velocity the next momentum stage gives (the staggered scheme's time-centred energy).
    fn energy(&self, state: &[GlobalField]) -> f64 {
        let east = crate::engine::cpu::stage_on_grid(self, 0, state);
        let next = crate::engine::cpu::stage_on_grid(self, 1, &east);
        let (eta, sphere) = (&state[2], self.sphere());
        let (nx, ny) = (eta.nx, eta.ny);
        let m = &sphere.mercator;
        let area = |lat: f64| (EARTH_RADIUS * lat.cos()).powi(2) * m.dlam() * m.dy;
        let total: f64 = (0..ny)
            .map(|y| {
                let (centre, edge) = (area(m.lat(y as f64)), area(m.lat(y as f64 + 0.5)));
                (0..nx)
                    .map(|x| {
                        let e = eta.at(x, y) as f64;
                        let mut sum = match sphere.is_wet(x, y) {
                            true => 0.5 * GRAVITY * e * e * centre,
                            false => 0.0,
                        };
                        let faces = [
                            (Plane::EastDepth, 0, (x + 1) % nx, y, centre),
                            (Plane::NorthDepth, 1, x, (y + 1) % ny, edge),
                        ];
                        for (plane, f, xn, yn, a) in faces {
                            let h = self.plane(plane, x, y) as f64;
                            if h > 0.0 {
                                let depth = h + 0.5 * (e + eta.at(xn, yn) as f64);
                                let (now, then) = (state[f].at(x, y), next[f].at(x, y));
                                sum += 0.5 * depth * now as f64 * then as f64 * a;
                            }
                        }
                        sum
                    })
                    .sum::<f64>()
            })
            .sum();
        total * WATER_DENSITY
    }
}

impl Kernel for SweC {
    fn spec(&self) -> &'static KernelSpec {
        &SWE_C
    }

    fn grid(&self) -> UVec2 {
        self.sphere().grid()
    }

    fn params(&self) -> Vec<u8> {
        bytemuck::bytes_of(&self.params).to_vec()
    }

    fn constants(&self) -> &[f32] {
        &self.constants.data
    }

    fn initial_state(&self) -> Vec<GlobalField> {
        let grid = self.grid();
        let open = |plane| move |x, y| self.plane(plane, x, y) > 0.0;
        let (east, north) = (open(Plane::EastDepth), open(Plane::NorthDepth));
        let [u, v, eta] = swe::initial_surface(self.sphere(), self.config(), (&east, &north));
        // The surface's Laplacian, which each momentum stage writes for the filter.
        let lap = vec![0.0; eta.len()];
        [u, v, eta, lap]
            .into_iter()
            .map(|data| GlobalField {
                nx: grid.x,
                ny: grid.y,
                data,
            })
            .collect()
    }

    fn stage_block(&self, stage: usize, block: Block, input: &BlockIn, out: &mut BlockOut) {
        match stage {
            0 => scheme::east_faces(&self.params, &self.constants, block, input, out),
            1 => scheme::north_faces(&self.params, &self.constants, block, input, out),
            _ => scheme::continuity(&self.params, &self.constants, block, input, out),
        }
    }

    fn picture(&self, field: usize, value: &GlobalField) -> Picture {
        let label = [
            "u (m/s, east faces)",
            "v (m/s, north faces)",
            "eta (m)",
            "Laplacian of eta (m, cells)",
        ][field];
        swe::picture(self.sphere(), label, value)
    }

    fn parameters(&self) -> Parameters {
        swe::parameters(self)
    }

    fn shallow_water(&self) -> Option<&dyn ShallowWater> {
        Some(self)
    }
}
