//! Shallow-water equations of section 4.2.2 in latitude-longitude form on a Mercator grid:
//! primitive variables `u, v` (east and north velocity, m/s) and `h` (surface height above a
//! reference sphere just below the deepest point, m); water depth `s = h - b`.
//!
//! Grid: `nx` columns uniform in longitude (periodic), `ny` rows uniform in Mercator
//! `y = ln tan(pi/4 + lat/2)` between two cut latitudes; the first and last rows are land, the
//! walls. With `dlat = cos(lat) dy`, both derivatives carry the metric `1 / (a cos lat)`:
//!
//! ```text
//! u_t + m (u u_lam + v u_y) - (f + u tan/a) v + g m h_lam = 0
//! v_t + m (u v_lam + v v_y) + (f + u tan/a) u + g m h_y   = 0
//! h_t + k [ (s u cos)_lam + (s v cos)_y ]               = 0,   m = 1/(a cos), k = 1/(a cos^2)
//! ```
//!
//! The continuity equation in this flux form conserves `sum cos^2(lat) s` exactly up to
//! rounding. Lax-Wendroff in Richtmyer form, two half steps: `swe_predict` computes each corner
//! from the 2 x 2 centres below-left of it (half a time step), `swe_correct` each centre from
//! the 2 x 2 corners around it and its own value at the step's start (a whole time step). Both
//! read only from below-left in the SRAM frame, so the grid translates by half a cell per half
//! step. Land (the shoreline mask) enforces no-slip: velocities are zero at every centre and
//! corner that touches land, and land centres keep their height.
//!
//! FLOPs: the stages declare the paper's counts (Table 4: 94 + 61 = 155 per step), which the
//! timing model charges the emulated machine. This code's own count (common subexpressions
//! once) is 100 for the predictor and 96 for the corrector, 196 per step: it recomputes the
//! corner means and fluxes that the paper's code keeps as extra fields.

pub mod relief;
mod scheme;

use std::f64::consts::PI;

use glam::UVec2;

use super::{Block, BlockIn, BlockOut, CostModel, Driver, Kernel, KernelSpec, Stage};
use crate::field::{grid_values, GlobalField};
use crate::output::{ticks, Axes, Palette, Picture};
use crate::{invalid, Error, Result};
use relief::{Relief, ReliefGrid};

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
    kind: super::KernelKind::Swe,
    name: "swe",
    summary: "shallow-water equations on a Mercator grid, Lax-Wendroff in two half steps",
    fields: &["u", "v", "h"],
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
};

/// Gravity (m/s^2), Earth's radius (m) and rotation rate (1/s), as in Williamson et al. 1992.
pub const GRAVITY: f64 = 9.80616;
pub const EARTH_RADIUS: f64 = 6.37122e6;
pub const OMEGA: f64 = 7.292e-5;
/// Density of sea water (kg/m^3), for energies.
pub const WATER_DENSITY: f64 = 1025.0;
/// The reference sphere lies this far below the deepest point.
const BELOW_DEEPEST: f64 = 10.0;

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

/// The sea floor.
#[derive(Clone, Debug, PartialEq)]
pub enum Bathymetry {
    /// An ocean of this depth (m) everywhere but the walls.
    Flat(f64),
    /// ETOPO1 relief from the project's assets, bilinearly resampled to the grid.
    Etopo(ReliefGrid),
    /// A relief grid described by a JSON file ([`Relief::from_descriptor`]), resampled alike.
    File(std::path::PathBuf),
}

/// Initial state over an ocean at rest at sea level.
#[derive(Clone, Debug, PartialEq)]
pub enum SweInit {
    /// The lake at rest.
    Rest,
    /// A raised-cosine hump of water `height/2 (1 + cos(pi r / radius))` for `r < radius`
    /// (great-circle distance, m) centred at `(lat, lon)` in degrees.
    Hump {
        lat: f64,
        lon: f64,
        height: f64,
        radius: f64,
    },
    /// Williamson et al. (1992) test case 2, alpha = 0: zonal flow `u0 cos(lat)` in
    /// geostrophic balance over a flat sea floor.
    Williamson2 { u0: f64 },
    /// Small pseudo-random perturbations of every field (every bit exercised).
    Random { seed: u64 },
}

/// The command line's form, which [`SweInit::parse`] reads back.
impl std::fmt::Display for SweInit {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Self::Rest => write!(f, "rest"),
            Self::Hump {
                lat,
                lon,
                height,
                radius,
            } => write!(f, "hump:{lat},{lon},{height},{}", radius / 1e3),
            Self::Williamson2 { .. } => write!(f, "williamson2"),
            Self::Random { seed } => write!(f, "random:{seed}"),
        }
    }
}

/// The command line's form (`--relief`).
impl std::fmt::Display for Bathymetry {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Self::Flat(depth) => write!(f, "flat:{depth}"),
            Self::Etopo(grid) => write!(f, "{}", grid.name()),
            Self::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl SweInit {
    /// Parses `rest`, `hump[:LAT,LON,HEIGHT_M,RADIUS_KM]`, `williamson2` or `random:SEED`.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || {
            invalid!(
                "unknown shallow-water initial condition '{s}': allowed rest, hump, hump:LAT,LON,HEIGHT_M,RADIUS_KM, williamson2, random:SEED"
            )
        };
        match s.split_once(':') {
            None if s == "rest" => Ok(Self::Rest),
            None if s == "hump" => Ok(Self::default_hump()),
            None if s == "williamson2" => Ok(Self::Williamson2 {
                u0: 2.0 * PI * EARTH_RADIUS / (12.0 * 86400.0),
            }),
            Some(("hump", args)) => {
                let v: Vec<f64> = args
                    .split(',')
                    .map(|a| a.trim().parse::<f64>().map_err(|_| bad()))
                    .collect::<Result<_>>()?;
                let [lat, lon, height, radius_km] = v[..] else {
                    return Err(bad());
                };
                if !(radius_km > 0.0 && height.is_finite() && lat.abs() <= 90.0) {
                    return Err(invalid!(
                        "hump {s}: allowed |LAT| <= 90, a finite height and RADIUS_KM > 0"
                    ));
                }
                Ok(Self::Hump {
                    lat,
                    lon,
                    height,
                    radius: radius_km * 1e3,
                })
            }
            Some(("random", seed)) => Ok(Self::Random {
                seed: seed.trim().parse().map_err(|_| bad())?,
            }),
            _ => Err(bad()),
        }
    }

    /// A 500 km, 10 m hump in the open Pacific.
    pub fn default_hump() -> Self {
        Self::Hump {
            lat: 20.0,
            lon: -150.0,
            height: 10.0,
            radius: 500e3,
        }
    }
}

/// Everything that defines a shallow-water run besides the grid size.
#[derive(Clone, Debug, PartialEq)]
pub struct SweConfig {
    /// Cut latitudes in degrees, south and north (walls).
    pub lat_range: (f64, f64),
    pub bathymetry: Bathymetry,
    pub init: SweInit,
    /// Courant number of the time step (`dt` from the fastest gravity wave).
    pub cfl: f64,
    /// Coriolis force on.
    pub coriolis: bool,
    pub walls: Walls,
}

/// What the first and last rows, the walls at the cut latitudes, do to the flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Walls {
    /// Land: no-slip, like every shoreline.
    #[default]
    NoSlip,
    /// The wall rows keep their initial state and let the flow next to them run on: the exact
    /// solution of a steady case (Williamson's test case 2) continued past the cut.
    Prescribed,
}

/// The command line's form, which [`Walls::parse`] reads back.
impl std::fmt::Display for Walls {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            Self::NoSlip => "no-slip",
            Self::Prescribed => "prescribed",
        })
    }
}

impl Walls {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "no-slip" => Ok(Self::NoSlip),
            "prescribed" => Ok(Self::Prescribed),
            _ => Err(invalid!(
                "unknown wall condition '{s}': allowed no-slip, prescribed"
            )),
        }
    }
}

impl Default for SweConfig {
    fn default() -> Self {
        Self {
            lat_range: (-70.0, 70.0),
            bathymetry: Bathymetry::Etopo(ReliefGrid::OneDegree),
            init: SweInit::default_hump(),
            cfl: 0.5,
            coriolis: true,
            walls: Walls::NoSlip,
        }
    }
}

impl SweConfig {
    /// Checks the ranges; errors name the value and the allowed range.
    pub fn validate(&self) -> Result<()> {
        let (south, north) = self.lat_range;
        if !(-89.0..=89.0).contains(&south) || !(-89.0..=89.0).contains(&north) || south >= north {
            return Err(invalid!(
                "cut latitudes {south}..{north}: allowed -89 <= south < north <= 89 degrees"
            ));
        }
        if !(self.cfl > 0.0 && self.cfl <= 1.0) {
            return Err(invalid!("CFL number {}: allowed 0 < CFL <= 1", self.cfl));
        }
        if let Bathymetry::Flat(depth) = self.bathymetry {
            if !(depth > 0.0 && depth <= 12e3) {
                return Err(invalid!("flat depth {depth} m: allowed 0 < depth <= 12000"));
            }
        }
        Ok(())
    }
}

/// Planes of the grid in the constants: centre bathymetry and mask, corner bathymetry and mask
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

    /// Field `field` (0 b, 1 mask, 2 corner b, 3 corner mask) at `(x, y)`, wrapped.
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

/// The Mercator grid: longitude of column `x` and latitude of centre row `y` (or of the
/// corner row `y`, half a row lower), in radians.
#[derive(Clone, Copy, Debug)]
struct Mercator {
    nx: u32,
    ny: u32,
    y_south: f64,
    dy: f64,
}

impl Mercator {
    fn new(grid: UVec2, (south, north): (f64, f64)) -> Self {
        let merc = |lat: f64| (PI / 4.0 + lat.to_radians() / 2.0).tan().ln();
        let y_south = merc(south);
        Self {
            nx: grid.x,
            ny: grid.y,
            y_south,
            dy: (merc(north) - y_south) / grid.y as f64,
        }
    }

    fn dlam(&self) -> f64 {
        2.0 * PI / self.nx as f64
    }

    fn lon(&self, x: f64) -> f64 {
        -PI + (x + 0.5) * self.dlam()
    }

    /// Latitude of centre row `y` (`y + 0.5` cells above the south cut); corner rows at `y`.
    fn lat(&self, y: f64) -> f64 {
        2.0 * (self.y_south + (y + 0.5) * self.dy).exp().atan() - PI / 2.0
    }

    /// In degrees, each centre column's longitude and each centre row's latitude: computed
    /// once per column and row, not per point.
    fn axes_degrees(&self) -> (Vec<f64>, Vec<f64>) {
        let lons = (0..self.nx)
            .map(|x| self.lon(x as f64).to_degrees())
            .collect();
        let lats = (0..self.ny)
            .map(|y| self.lat(y as f64).to_degrees())
            .collect();
        (lons, lats)
    }

    /// The (fractional) column and row of the centre at `lat`, `lon` (radians).
    fn cell(&self, lat: f64, lon: f64) -> (f64, f64) {
        let x = (lon + PI).rem_euclid(2.0 * PI) / self.dlam() - 0.5;
        let y = ((PI / 4.0 + lat / 2.0).tan().ln() - self.y_south) / self.dy - 0.5;
        (x, y)
    }
}

/// A shallow-water kernel configured for one grid.
#[derive(Clone, Debug)]
pub struct Swe {
    config: SweConfig,
    grid: UVec2,
    params: SweParams,
    constants: Constants,
    /// Sea level above the reference sphere (m).
    sea_level: f64,
    /// Speed above which the run counts as blown up (m/s).
    speed_limit: f64,
    mercator: Mercator,
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
        let mercator = Mercator::new(grid, config.lat_range);
        let elevation = elevation(&config.bathymetry, &mercator)?;
        let deepest = elevation.iter().cloned().fold(f64::INFINITY, f64::min);
        let sea_level = BELOW_DEEPEST - deepest.min(0.0);
        let (nx, ny) = (grid.x, grid.y);
        let sea = |x: u32, y: u32| elevation[(y * nx + x) as usize] < 0.0;
        let wall = |y: u32| y == 0 || y + 1 == ny;
        let wet = |x: u32, y: u32| !wall(y) && sea(x, y);
        let flows = |x, y| sea(x, y) && (!wall(y) || config.walls == Walls::Prescribed);
        let mut data =
            Vec::with_capacity(PLANES * (nx * ny) as usize + 2 * ROW_TERMS * ny as usize);
        let b = |x: u32, y: u32| (elevation[(y % ny * nx + x % nx) as usize] + sea_level) as f32;
        let centres = |f: &(dyn Fn(u32, u32) -> f32 + Sync)| grid_values(nx, ny, f);
        data.extend(centres(&|x, y| b(x, y)));
        data.extend(centres(&|x, y| wet(x, y) as u32 as f32));
        // Corner (x, y) touches centres (x-1, y-1), (x, y-1), (x-1, y), (x, y).
        let around = |x: u32, y: u32| {
            let (xl, yl) = ((x + nx - 1) % nx, (y + ny - 1) % ny);
            [(xl, yl), (x, yl), (xl, y), (x, y)]
        };
        data.extend(centres(&|x, y| {
            let [sw, se, nw, ne] = around(x, y).map(|(i, j)| b(i, j));
            0.25 * ((sw + se) + (nw + ne))
        }));
        data.extend(centres(&|x, y| {
            around(x, y).iter().all(|&(i, j)| flows(i, j)) as u32 as f32
        }));
        let omega = if config.coriolis { OMEGA } else { 0.0 };
        for offset in [0.0, -0.5] {
            let lat = |y: u32| mercator.lat(y as f64 + offset);
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
                inv_dlam: (1.0 / mercator.dlam()) as f32,
                inv_dy: (1.0 / mercator.dy) as f32,
                half_dt: 0.0,
                pad: 0.0,
            },
            config,
            grid,
            constants,
            sea_level,
            speed_limit: 0.0,
            mercator,
        };
        let dt = kernel.stable_dt()?;
        kernel.params.dt = dt as f32;
        kernel.params.half_dt = (0.5 * dt) as f32;
        Ok(kernel)
    }

    /// The time step: the Courant number times the shortest crossing time of a cell by the
    /// fastest wave, `min (a cos(lat) min(dlam, dy)) / (sqrt(g s) + |u|)` over wet cells of
    /// the initial state.
    fn stable_dt(&mut self) -> Result<f64> {
        let state = self.initial_state();
        let (nx, ny) = (self.grid.x, self.grid.y);
        let step = self.mercator.dlam().min(self.mercator.dy);
        let mut best = f64::INFINITY;
        let mut fastest: f64 = 0.0;
        for y in 0..ny {
            let size = EARTH_RADIUS * self.mercator.lat(y as f64).cos() * step;
            for x in 0..nx {
                if self.constants.at(1, x, y) < 0.5 {
                    continue;
                }
                let i = (y * nx + x) as usize;
                let depth = (state[2].data[i] - self.constants.at(0, x, y)) as f64;
                let speed = (GRAVITY * depth.max(0.0)).sqrt()
                    + (state[0].data[i] as f64).hypot(state[1].data[i] as f64);
                fastest = fastest.max(speed);
                best = best.min(size / speed.max(1e-9));
            }
        }
        if !best.is_finite() {
            return Err(invalid!(
                "the {nx}x{ny} shallow-water grid has no water between the walls: choose another relief or latitude range"
            ));
        }
        // Waves do not outrun the initial fastest one by this much in a stable run.
        self.speed_limit = 20.0 * fastest.max(1.0);
        Ok(self.config.cfl * best)
    }

    /// The time step in seconds.
    pub fn dt(&self) -> f64 {
        self.params.dt as f64
    }

    /// Sea level above the reference sphere (m): `eta = h - sea_level`.
    pub fn sea_level(&self) -> f64 {
        self.sea_level
    }

    /// Latitude and longitude (degrees) of centre `(x, y)`.
    pub fn lat_lon(&self, x: u32, y: u32) -> (f64, f64) {
        (
            self.mercator.lat(y as f64).to_degrees(),
            self.mercator.lon(x as f64).to_degrees(),
        )
    }

    /// Whether centre `(x, y)` is water.
    pub fn is_wet(&self, x: u32, y: u32) -> bool {
        self.constants.at(1, x, y) > 0.5
    }

    /// Whether centre `(x, y)` may hold a flow: water, or sea in a prescribed wall row.
    pub fn flows(&self, x: u32, y: u32) -> bool {
        let wall = y == 0 || y + 1 == self.grid.y;
        match wall && self.config.walls == Walls::Prescribed {
            true => (self.bed(x, y) as f64) < self.sea_level,
            false => self.is_wet(x, y),
        }
    }

    /// Bathymetry `b` of centre `(x, y)` above the reference sphere.
    pub fn bed(&self, x: u32, y: u32) -> f32 {
        self.constants.at(0, x, y)
    }

    /// The centre nearest to `lat`, `lon` (degrees), or `None` outside the cut latitudes.
    pub fn cell_at(&self, lat: f64, lon: f64) -> Option<UVec2> {
        let (x, y) = self.mercator.cell(lat.to_radians(), lon.to_radians());
        let (x, y) = (x.round().rem_euclid(self.grid.x as f64), y.round());
        (y >= 0.0 && y < self.grid.y as f64).then(|| UVec2::new(x as u32, y as u32))
    }

    /// Longitude and latitude ticks of the window of `size` centres from `origin` (columns
    /// wrap around the globe).
    pub fn axes(&self, origin: UVec2, size: UVec2) -> Axes {
        let nx = self.grid.x;
        let lon = |x: u32| self.lat_lon(x % nx, origin.y).1;
        let lat = |y: u32| self.lat_lon(origin.x, y).0;
        let west = lon(origin.x);
        let east = west + (size.x - 1) as f64 * 360.0 / nx as f64;
        let rows: Vec<f64> = (origin.y..origin.y + size.y).map(lat).collect();
        // Fraction of the height at latitude `v`, by interpolating between the rows.
        let y_at = |v: f64| match rows.len() {
            0 | 1 => 0.5,
            len => {
                let k = rows.partition_point(|&r| r < v).clamp(1, len - 1);
                let (a, b) = (rows[k - 1], rows[k]);
                ((k - 1) as f64 + (v - a) / (b - a) + 0.5) / len as f64
            }
        };
        let x_at = |v: f64| {
            ((v - west) / (east - west).max(1e-9) * (size.x - 1) as f64 + 0.5) / size.x as f64
        };
        let steps = [1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 90.0];
        let south_north = (rows[0], rows[rows.len() - 1]);
        Axes {
            x: ticks((west, east), x_at, ("W", "E"), &steps),
            y: ticks(south_north, y_at, ("S", "N"), &steps),
        }
    }

    /// Grey level of every land centre (lighter with height), `None` on water.
    pub fn land_shading(&self) -> Vec<Option<f32>> {
        let UVec2 { x: nx, y: ny } = self.grid;
        (0..ny)
            .flat_map(|y| (0..nx).map(move |x| (x, y)))
            .map(|(x, y)| {
                let height = self.bed(x, y) as f64 - self.sea_level;
                (!self.is_wet(x, y))
                    .then_some((0.45 + 0.4 * (height / 4000.0).clamp(0.0, 1.0)) as f32)
            })
            .collect()
    }

    /// Area of a cell of row `y` in m^2: `a^2 cos^2(lat) dlam dy`.
    pub fn cell_area(&self, y: u32) -> f64 {
        EARTH_RADIUS.powi(2) * self.area_weight(y) * self.mercator.dlam() * self.mercator.dy
    }

    /// Total energy in J (water density 1025 kg/m^3) over wet centres: kinetic
    /// `1/2 rho s (u^2 + v^2)` and potential `1/2 rho g eta^2` relative to the sea at rest,
    /// summed in f64.
    pub fn energy(&self, state: &[GlobalField]) -> f64 {
        let (u, v, h) = (&state[0], &state[1], &state[2]);
        (0..self.grid.y)
            .map(|y| {
                let row: f64 = (0..self.grid.x)
                    .filter(|&x| self.is_wet(x, y))
                    .map(|x| {
                        let (uu, vv, hh) =
                            (u.at(x, y) as f64, v.at(x, y) as f64, h.at(x, y) as f64);
                        let eta = hh - self.sea_level;
                        let s = hh - self.bed(x, y) as f64;
                        0.5 * s * (uu * uu + vv * vv) + 0.5 * GRAVITY * eta * eta
                    })
                    .sum();
                row * self.cell_area(y)
            })
            .sum::<f64>()
            * WATER_DENSITY
    }

    /// Area weight `cos^2(lat)` of centre row `y`: the sum of `cos^2 s` is what the scheme
    /// conserves.
    pub fn area_weight(&self, y: u32) -> f64 {
        self.mercator.lat(y as f64).cos().powi(2)
    }

    /// Total water volume in m^3: `a^2 dlam dy sum cos^2(lat) s` over wet centres, summed in
    /// f64 row by row.
    pub fn volume(&self, h: &GlobalField) -> f64 {
        let cell = EARTH_RADIUS.powi(2) * self.mercator.dlam() * self.mercator.dy;
        (0..h.ny)
            .map(|y| {
                let row: f64 = (0..h.nx)
                    .filter(|&x| self.is_wet(x, y))
                    .map(|x| (h.at(x, y) - self.bed(x, y)) as f64)
                    .sum();
                row * self.area_weight(y)
            })
            .sum::<f64>()
            * cell
    }

    fn initial_field(&self, f: impl Fn(u32, u32, f64, f64) -> f64 + Sync) -> GlobalField {
        // Those of lat_lon, in radians.
        let radians = |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(f64::to_radians).collect() };
        let (lons, lats) = self.mercator.axes_degrees();
        let (lons, lats) = (radians(lons), radians(lats));
        GlobalField::from_fn(self.grid.x, self.grid.y, |x, y| {
            f(x, y, lats[y as usize], lons[x as usize]) as f32
        })
    }
}

/// An initial field as a function of the centre `(x, y)` and its latitude and longitude
/// (radians).
type Profile<'a> = Box<dyn Fn(u32, u32, f64, f64) -> f64 + Sync + 'a>;

/// Elevation (m, positive up) of every centre, row-major.
fn elevation(bathymetry: &Bathymetry, m: &Mercator) -> Result<Vec<f64>> {
    let relief = match bathymetry {
        Bathymetry::Flat(depth) => return Ok(vec![-depth; (m.nx * m.ny) as usize]),
        Bathymetry::Etopo(grid) => Relief::builtin(*grid)?,
        Bathymetry::File(path) => Relief::from_descriptor(path)?,
    };
    let (lons, lats) = m.axes_degrees();
    Ok(grid_values(m.nx, m.ny, |x, y| {
        relief.elevation(lons[x as usize], lats[y as usize])
    }))
}

/// Great-circle distance (m) between two points given in radians.
pub fn distance((lat1, lon1): (f64, f64), (lat2, lon2): (f64, f64)) -> f64 {
    let h = ((lat2 - lat1) / 2.0).sin().powi(2)
        + lat1.cos() * lat2.cos() * ((lon2 - lon1) / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS * h.sqrt().min(1.0).asin()
}

impl Kernel for Swe {
    fn spec(&self) -> &'static KernelSpec {
        &SWE
    }

    fn grid(&self) -> UVec2 {
        self.grid
    }

    fn params(&self) -> Vec<u8> {
        bytemuck::bytes_of(&self.params).to_vec()
    }

    fn constants(&self) -> &[f32] {
        &self.constants.data
    }

    fn initial_state(&self) -> Vec<GlobalField> {
        let sea = self.sea_level;
        let (wet, flows) = (|x, y| self.is_wet(x, y), |x, y| self.flows(x, y));
        let (u, v, eta): (Profile, Profile, Profile) = match self.config.init.clone() {
            SweInit::Rest => (
                Box::new(|_, _, _, _| 0.0),
                Box::new(|_, _, _, _| 0.0),
                Box::new(|_, _, _, _| 0.0),
            ),
            SweInit::Hump {
                lat,
                lon,
                height,
                radius,
            } => {
                let centre = (lat.to_radians(), lon.to_radians());
                (
                    Box::new(|_, _, _, _| 0.0),
                    Box::new(|_, _, _, _| 0.0),
                    Box::new(move |x, y, la, lo| {
                        let r = distance(centre, (la, lo));
                        match r < radius && wet(x, y) {
                            true => 0.5 * height * (1.0 + (PI * r / radius).cos()),
                            false => 0.0,
                        }
                    }),
                )
            }
            SweInit::Williamson2 { u0 } => {
                let omega = if self.config.coriolis { OMEGA } else { 0.0 };
                (
                    Box::new(move |x, y, la: f64, _| if flows(x, y) { u0 * la.cos() } else { 0.0 }),
                    Box::new(|_, _, _, _| 0.0),
                    Box::new(move |_, _, la: f64, _| {
                        -(EARTH_RADIUS * omega * u0 + u0 * u0 / 2.0) * la.sin().powi(2) / GRAVITY
                    }),
                )
            }
            SweInit::Random { seed } => {
                let r = move |x: u32, y: u32, k: u64| {
                    let z =
                        crate::field::splitmix64(seed ^ (k << 56) ^ ((y as u64) << 28) ^ x as u64);
                    (z >> 40) as f64 / (1u64 << 24) as f64 - 0.5
                };
                (
                    Box::new(move |x, y, _, _| if flows(x, y) { r(x, y, 1) } else { 0.0 }),
                    Box::new(move |x, y, _, _| if flows(x, y) { r(x, y, 2) } else { 0.0 }),
                    Box::new(move |x, y, _, _| 10.0 * r(x, y, 3)),
                )
            }
        };
        vec![
            self.initial_field(u),
            self.initial_field(v),
            self.initial_field(move |x, y, la, lo| sea + eta(x, y, la, lo)),
        ]
    }

    fn stage_block(&self, stage: usize, block: Block, input: &BlockIn, out: &mut BlockOut) {
        match stage {
            0 => scheme::swe_predict(&self.params, &self.constants, block, input, out),
            _ => scheme::swe_correct(&self.params, &self.constants, block, input, out),
        }
    }

    /// Velocities and the surface height above sea level over water, in a diverging palette
    /// symmetric about zero up to the 99th percentile of the magnitude over water (so that a
    /// few coastal extremes do not wash the waves out); land in grey, lighter with height.
    fn picture(&self, field: usize, value: &GlobalField) -> Picture {
        let (nx, ny) = (self.grid.x, self.grid.y);
        let offset = if field == 2 {
            self.sea_level as f32
        } else {
            0.0
        };
        let values = GlobalField::from_fn(nx, ny, |x, y| value.at(x, y) - offset);
        let wet = |x, y| self.is_wet(x, y);
        let mut sizes: Vec<f32> = (0..ny)
            .flat_map(|y| (0..nx).map(move |x| (x, y)))
            .filter(|&(x, y)| wet(x, y))
            .map(|(x, y)| values.at(x, y).abs())
            .filter(|v| v.is_finite())
            .collect();
        sizes.sort_by(f32::total_cmp);
        let extreme = sizes.get(sizes.len() * 99 / 100).copied().unwrap_or(0.0);
        let extreme = if extreme > 0.0 { extreme } else { 1.0 };
        let land = self.land_shading();
        Picture {
            values,
            label: ["u (m/s)", "v (m/s)", "eta (m)"][field].into(),
            palette: Palette::Diverging,
            range: (-extreme, extreme),
            land: Some(land),
            title: None,
            axes: Some(self.axes(UVec2::ZERO, self.grid)),
        }
    }

    fn describe(&self) -> Vec<(String, String)> {
        let c = &self.config;
        vec![
            (
                "latitudes".into(),
                format!("{} .. {} degrees (walls)", c.lat_range.0, c.lat_range.1),
            ),
            ("bathymetry".into(), c.bathymetry.to_string()),
            ("init".into(), c.init.to_string()),
            ("dt".into(), format!("{:.4} s (CFL {})", self.dt(), c.cfl)),
            ("coriolis".into(), c.coriolis.to_string()),
            ("walls".into(), c.walls.to_string()),
            (
                "sea level".into(),
                format!("{:.1} m above the reference sphere", self.sea_level),
            ),
        ]
    }

    fn seconds_per_step(&self) -> Option<f64> {
        Some(self.dt())
    }

    fn check_state(&self, state: &[GlobalField], step: u64) -> Result<()> {
        let (u, v, h) = (&state[0], &state[1], &state[2]);
        for y in 0..h.ny {
            for x in 0..h.nx {
                let (uu, vv, hh) = (u.at(x, y), v.at(x, y), h.at(x, y));
                let speed = (uu as f64).hypot(vv as f64);
                if hh.is_finite() && speed <= self.speed_limit {
                    continue;
                }
                let (lat, lon) = self.lat_lon(x, y);
                let depth = (hh - self.bed(x, y)) as f64;
                let size = EARTH_RADIUS
                    * lat.to_radians().cos()
                    * self.mercator.dlam().min(self.mercator.dy);
                let cfl = self.dt() * (speed + (GRAVITY * depth.max(0.0)).sqrt()) / size;
                return Err(Error::BlowUp(format!(
                    "the shallow-water run blew up at step {step}: at lat {lat:.2}, lon {lon:.2} u = {uu}, v = {vv}, h = {hh} (speed limit {:.0} m/s), local CFL number {cfl:.3}; try a smaller --cfl",
                    self.speed_limit
                )));
            }
        }
        Ok(())
    }
}
