//! The paper's shallow-water kernel (`swe`, section 4.2.2): primitive variables `u, v` (east
//! and north velocity at the cell centres, m/s) and `eta` (the surface above the sea at rest,
//! m); water depth `s = eta + d` over the depth at rest `d`. With `dlat = cos(lat) dy`, both
//! derivatives carry the metric `1 / (a cos lat)`:
//!
//! ```text
//! u_t + m (u u_lam + v u_y) - (f + u tan/a) v + g m eta_lam = 0
//! v_t + m (u v_lam + v v_y) + (f + u tan/a) u + g m eta_y   = 0
//! eta_t + k [ (s u cos)_lam + (s v cos)_y ]               = 0,   m = 1/(a cos), k = 1/(a cos^2)
//! ```
//!
//! The continuity equation in this flux form conserves `sum cos^2(lat) s` up to rounding.
//! Lax-Wendroff in Richtmyer form, two half steps: `swe_predict` computes each corner from the
//! 2 x 2 centres below-left of it (half a time step), `swe_correct` each centre from the 2 x 2
//! corners around it and its own value at the step's start (a whole time step). Both read only
//! from below-left in the SRAM frame, so the grid translates by half a cell per half step.
//! Land (the shoreline mask) enforces no-slip: velocities are zero at every centre and corner
//! that touches land, and land centres keep their state.
//!
//! The surface is stored relative to its rest level, so a lake at rest is exact (every
//! difference and mean of zeros is zero) and a centimetre signal keeps f32's relative
//! precision rather than a millimetre ulp of a height above a sphere below the deepest point.
//!
//! FLOPs: the stages declare the paper's counts (Table 4: 94 + 61 = 155 per step), which the
//! timing model charges the emulated machine. This code's own count (common subexpressions
//! once) is 100 for the predictor and 96 for the corrector, 196 per step: it recomputes the
//! corner means and fluxes that the paper's code keeps as extra fields.

use crate::kernels::Parameters;
use std::sync::Arc;

use glam::UVec2;

use super::{
    initial_surface, scheme, Ocean, ShallowWater, SweConfig, Walls, EARTH_RADIUS, GRAVITY, OMEGA,
    WATER_DENSITY,
};
use crate::field::{grid_values, GlobalField};
use crate::kernels::{
    Block, BlockIn, BlockOut, CostModel, Driver, Kernel, KernelKind, KernelSpec, OptionGroup, Stage,
};
use crate::render::Picture;
use crate::{invalid, Result};

const STAGES: [Stage; 2] = [
    Stage {
        name: "swe_predict",
        origin: -1,
        flops: 94,
        driver: Driver::Point,
    },
    Stage {
        name: "swe_correct",
        origin: 0,
        flops: 61,
        driver: Driver::Point,
    },
];

/// Table 6: the paper's SWE receives `64n + 80` words per PE and step.
fn table6_io(n: u64) -> u64 {
    64 * n + 80
}

pub static SWE: KernelSpec = KernelSpec {
    kind: KernelKind::Swe,
    name: "swe",
    summary:
        "shallow-water equations on a Mercator grid, the paper's Lax-Wendroff in two half steps",
    fields: &["u", "v", "eta"],
    stages: &STAGES,
    comm_width: 1,
    wgsl: include_str!("swe.wgsl"),
    cost: CostModel {
        a0: 1026.0,
        a1: 183.2,
        a2: 137.6,
    },
    paper_io: (table6_io, "64n+80"),
    // Bathymetry, shoreline mask and the sine, cosine and secant of latitude.
    travelling_constants: 5,
    // The relief in f64, the four constant planes and the three state fields.
    setup_bytes_per_point: 40,
    default_pes: super::DEFAULT_PES,
    options: &[OptionGroup::ShallowWater],
    params_layout: || (std::mem::size_of::<SweParams>(), SweParams::offsets()),
    configure: |options, grid| Ok(Arc::new(Swe::new(super::config_of(options)?, grid)?)),
    shallow_water: Some(|config, grid| Ok(Arc::new(Swe::new(config, grid)?))),
    random_init: Some(super::random_init),
};

/// `struct Params` of `swe.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SweParams {
    pub nx: u32,
    pub ny: u32,
    pub dt: f32,
    pub g: f32,
    pub inv_dlam: f32,
    pub inv_dy: f32,
    pub half_dt: f32,
    pub pad: f32,
}

impl SweParams {
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
            ("half_dt", offset_of!(Self, half_dt)),
        ]
    }
}

/// Planes of the grid in the constants: centre depth at rest and mask, corner depth and mask
/// (`CONSTS` in `swe.wgsl`).
pub const PLANES: usize = 4;

/// Row terms of centre rows, and again of corner rows (`ROW_CONSTS = 2 ROW_TERMS` in
/// `swe.wgsl`).
pub const ROW_TERMS: usize = 5;

/// The constant fields in the layout `swe.wgsl` reads through `consts_at`: the [`PLANES`]
/// (corner `(x, y)` is the one below-left of centre `(x, y)`), then the [`ROW_TERMS`] of
/// every centre row and of every corner row.
#[derive(Clone, Debug)]
pub struct Constants {
    nx: u32,
    ny: u32,
    data: Vec<f32>,
    /// The four planes again for the CPU twin, each row with one wrapped column on either
    /// side (`nx + 2` values from column -1), so that a run of points reads them as slices.
    padded: Vec<f32>,
}

impl Constants {
    fn new(nx: u32, ny: u32, data: Vec<f32>) -> Self {
        let mut c = Self {
            nx,
            ny,
            data,
            padded: vec![],
        };
        let padded = grid_values(nx + 2, PLANES as u32 * ny, |x, row| {
            c.at((row / ny) as usize, x + nx - 1, row % ny)
        });
        c.padded = padded;
        c
    }

    /// `len` values of field `field` (as in [`Self::at`]) of row `y` from column `from`
    /// (`-1 <= from` and `from + len <= nx + 1`).
    pub fn run(&self, field: usize, y: u32, from: i64, len: usize) -> &[f32] {
        let row = (field * self.ny as usize + y as usize) * (self.nx as usize + 2);
        &self.padded[row + (from + 1) as usize..][..len]
    }

    fn plane(&self) -> usize {
        self.nx as usize * self.ny as usize
    }

    /// Field `field` (0 depth, 1 mask, 2 corner depth, 3 corner mask) at `(x, y)`, wrapped.
    pub fn at(&self, field: usize, x: u32, y: u32) -> f32 {
        let (x, y) = ((x % self.nx) as usize, (y % self.ny) as usize);
        self.data[field * self.plane() + y * self.nx as usize + x]
    }

    /// Row term `term` of centre rows or corner rows.
    pub fn row_term(&self, corner: bool, term: usize, y: u32) -> f32 {
        let index =
            (corner as usize * ROW_TERMS + term) * self.ny as usize + (y % self.ny) as usize;
        self.data[PLANES * self.plane() + index]
    }
}

/// The paper's shallow-water kernel configured for one grid.
#[derive(Clone, Debug)]
pub struct Swe {
    ocean: Ocean,
    params: SweParams,
    constants: Constants,
}

impl Swe {
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
        SWE.check_setup_memory(grid)?;
        let ocean = Ocean::new(config, grid)?;
        let (config, sphere) = (&ocean.config, &ocean.sphere);
        let (nx, ny) = (grid.x, grid.y);
        let wall = |y: u32| y == 0 || y + 1 == ny;
        let flows = |x, y| match wall(y) {
            true => config.walls == Walls::Prescribed && sphere.depth(x, y) > 0.0,
            false => sphere.is_wet(x, y),
        };
        let mut data =
            Vec::with_capacity(PLANES * (nx * ny) as usize + 2 * ROW_TERMS * ny as usize);
        let depth = |x: u32, y: u32| sphere.depth(x, y) as f32;
        data.extend(grid_values(nx, ny, depth));
        data.extend(grid_values(nx, ny, |x, y| {
            sphere.is_wet(x, y) as u32 as f32
        }));
        // Corner (x, y) touches centres (x-1, y-1), (x, y-1), (x-1, y), (x, y).
        let around = |x: u32, y: u32| {
            let (xl, yl) = ((x + nx - 1) % nx, (y + ny - 1) % ny);
            [(xl, yl), (x, yl), (xl, y), (x, y)]
        };
        data.extend(grid_values(nx, ny, |x, y| {
            let [sw, se, nw, ne] = around(x, y).map(|(i, j)| depth(i, j));
            0.25 * ((sw + se) + (nw + ne))
        }));
        data.extend(grid_values(nx, ny, |x, y| {
            around(x, y).iter().all(|&(i, j)| flows(i, j)) as u32 as f32
        }));
        let omega = if config.coriolis { OMEGA } else { 0.0 };
        for offset in [0.0, -0.5] {
            let lat = |y: u32| sphere.mercator.lat(y as f64 + offset);
            let terms: [&dyn Fn(f64) -> f64; ROW_TERMS] = [
                &|l| 1.0 / (EARTH_RADIUS * l.cos()),
                &|l| l.tan() / EARTH_RADIUS,
                &|l| 2.0 * omega * l.sin(),
                &|l| l.cos(),
                &|l| 1.0 / (EARTH_RADIUS * l.cos() * l.cos()),
            ];
            for term in terms {
                data.extend((0..ny).map(|y| term(lat(y)) as f32));
            }
        }
        let constants = Constants::new(nx, ny, data);
        let mut kernel = Self {
            params: SweParams {
                nx,
                ny,
                dt: 0.0,
                g: GRAVITY as f32,
                inv_dlam: (1.0 / sphere.mercator.dlam()) as f32,
                inv_dy: (1.0 / sphere.mercator.dy) as f32,
                half_dt: 0.0,
                pad: 0.0,
            },
            constants,
            ocean,
        };
        let (dt, limit) = super::stable_dt(&kernel, &kernel.initial_state())?;
        let dt = kernel.ocean.config.step_dividing(dt);
        kernel.params.dt = dt as f32;
        kernel.params.half_dt = (0.5 * dt) as f32;
        (kernel.ocean.dt, kernel.ocean.speed_limit) = (kernel.params.dt as f64, limit);
        Ok(kernel)
    }

    /// Whether centre `(x, y)` may hold a flow: water, or sea in a prescribed wall row.
    fn flows(&self, x: u32, y: u32) -> bool {
        let (sphere, walls) = (&self.ocean.sphere, self.ocean.config.walls);
        let wall = y == 0 || y + 1 == sphere.mercator.ny;
        match wall && walls == Walls::Prescribed {
            true => sphere.depth(x, y) > 0.0,
            false => sphere.is_wet(x, y),
        }
    }
}

impl ShallowWater for Swe {
    fn ocean(&self) -> &Ocean {
        &self.ocean
    }

    fn at_centres(&self, state: &[GlobalField]) -> [GlobalField; 3] {
        [state[2].clone(), state[0].clone(), state[1].clone()]
    }

    /// Kinetic `1/2 rho s (u^2 + v^2)` and potential `1/2 rho g eta^2` energy over wet
    /// centres, summed in f64.
    fn energy(&self, state: &[GlobalField]) -> f64 {
        let (u, v, eta) = (&state[0], &state[1], &state[2]);
        let sphere = self.sphere();
        let rows: f64 = (0..eta.ny)
            .map(|y| {
                let row: f64 = (0..eta.nx)
                    .filter(|&x| sphere.is_wet(x, y))
                    .map(|x| {
                        let (uu, vv, e) =
                            (u.at(x, y) as f64, v.at(x, y) as f64, eta.at(x, y) as f64);
                        let s = e + sphere.depth(x, y);
                        0.5 * s * (uu * uu + vv * vv) + 0.5 * GRAVITY * e * e
                    })
                    .sum();
                row * sphere.cell_area(y)
            })
            .sum();
        rows * WATER_DENSITY
    }
}

impl Kernel for Swe {
    fn spec(&self) -> &'static KernelSpec {
        &SWE
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
        let flows = |x, y| self.flows(x, y);
        let [u, v, eta] = initial_surface(self.sphere(), self.config(), (&flows, &flows));
        let field = |data| GlobalField {
            nx: grid.x,
            ny: grid.y,
            data,
        };
        vec![field(u), field(v), field(eta)]
    }

    fn stage_block(&self, stage: usize, block: Block, input: &BlockIn, out: &mut BlockOut) {
        match stage {
            0 => scheme::swe_predict(&self.params, &self.constants, block, input, out),
            _ => scheme::swe_correct(&self.params, &self.constants, block, input, out),
        }
    }

    fn picture(&self, field: usize, value: &GlobalField) -> Picture {
        super::picture(
            self.sphere(),
            ["u (m/s)", "v (m/s)", "eta (m)"][field],
            value,
        )
    }

    fn parameters(&self) -> Parameters {
        super::parameters(self)
    }

    fn shallow_water(&self) -> Option<&dyn ShallowWater> {
        Some(self)
    }
}
