//! The shallow-water equations of section 4.2.2 in latitude-longitude form on a Mercator
//! grid, in two kernels over the same globe ([`sphere::Sphere`]): `swe`, the paper's
//! Lax-Wendroff with every field at the cell centres ([`lw`]), and `swe-c`, forward-backward
//! on a staggered C-grid with fourth-order gravity-wave terms (`crate::kernels::swe_c`). Both
//! store the surface `eta` relative to the sea at rest. This module holds what they share:
//! the configuration, the initial states, the time step, the pictures and the diagnostics a
//! modeller reads ([`ShallowWater`]).

pub mod lw;
pub mod relief;
mod scheme;
pub mod sphere;

use crate::kernels::Parameters;
use std::f64::consts::PI;

use crate::field::GlobalField;
use crate::kernels::Kernel;
use crate::render::{Palette, Picture};
use crate::{invalid, Error, Result};
use relief::ReliefGrid;
use sphere::Sphere;

pub use lw::{Constants, Swe, SweParams, PLANES, ROW_TERMS, SWE};
pub use sphere::distance;

/// Gravity (m/s^2), Earth's radius (m) and rotation rate (1/s), as in Williamson et al. 1992.
pub const GRAVITY: f64 = 9.80616;
pub const EARTH_RADIUS: f64 = 6.37122e6;
pub const OMEGA: f64 = 7.292e-5;
/// Density of sea water (kg/m^3), for energies.
pub const WATER_DENSITY: f64 = 1025.0;
/// Centres shallower than this at rest (m) are land by default.
pub const DEFAULT_LEAST_DEPTH: f64 = 10.0;
/// The wafer `run` takes by default: 45 x 20 PEs of 8 x 8 points, a 360 x 160 grid.
pub const DEFAULT_PES: (u32, u32) = (45, 20);

/// The configuration the options give (`init` in [`SweInit`]'s syntax).
pub fn config_of(options: &crate::kernels::KernelOptions) -> Result<SweConfig> {
    let mut config = options.swe.clone();
    if let Some(init) = options.init.as_deref() {
        config.init = SweInit::parse(init)?;
    }
    Ok(config)
}

/// Random perturbations of the state at rest from `seed`.
pub fn random_init(seed: u64) -> String {
    format!("random:{seed}")
}

/// Subsamples per side of a cell when the hump is averaged over it.
const HUMP_SAMPLES: u32 = 8;

/// The sea floor.
#[derive(Clone, Debug, PartialEq)]
pub enum Bathymetry {
    /// An ocean of this depth (m) everywhere but the walls.
    Flat(f64),
    /// ETOPO1 relief from the project's assets, bilinearly resampled to the grid.
    Etopo(ReliefGrid),
    /// A relief grid described by a JSON file ([`relief::Relief::from_descriptor`]), resampled alike.
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
    /// Centres shallower than this at rest (m) are land: the coast of a coarse grid.
    pub least_depth: f64,
    /// Seconds that a whole number of steps must make (the tsunami's sampling interval), if
    /// any: the time step is then the largest stable one that divides it.
    pub sample_interval: Option<f64>,
    /// Time-block lengths whose multiples the steps per sampling interval round up to, the
    /// nearest multiple at or above the fewest stable steps (so that every step runs in a
    /// block of the engine); none: the fewest.
    pub step_counts: Vec<u32>,
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
            least_depth: DEFAULT_LEAST_DEPTH,
            sample_interval: None,
            step_counts: vec![],
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
        if !(0.0..=1000.0).contains(&self.least_depth) {
            return Err(invalid!(
                "least depth {} m: allowed 0 to 1000 m",
                self.least_depth
            ));
        }
        if let Some(t) = self.sample_interval {
            if !(t > 0.0 && t.is_finite()) {
                return Err(invalid!("sampling interval {t} s: allowed more than 0"));
            }
        }
        Ok(())
    }

    /// The stable time step `dt`, shortened to divide the sampling interval where there is
    /// one into a whole number of steps, rounded up to the nearest multiple of one of
    /// `step_counts`.
    pub fn step_dividing(&self, dt: f64) -> f64 {
        let Some(t) = self.sample_interval else {
            return dt;
        };
        let fewest = (t / dt).ceil();
        let steps = self
            .step_counts
            .iter()
            .map(|&k| (fewest / k as f64).ceil() * k as f64)
            .min_by(f64::total_cmp);
        t / steps.unwrap_or(fewest)
    }
}

/// What a shallow-water kernel is configured with: its configuration, the globe, its time
/// step and the speed beyond which a run counts as blown up.
#[derive(Clone, Debug)]
pub struct Ocean {
    pub config: SweConfig,
    /// The grid, the relief on it and the water.
    pub sphere: Sphere,
    /// The time step in seconds (the f32 the kernel steps with).
    pub dt: f64,
    /// Speed above which the run counts as blown up (m/s).
    pub speed_limit: f64,
}

impl Ocean {
    /// The globe of `config` on `grid`; the kernel sets the time step and speed limit.
    pub(crate) fn new(config: SweConfig, grid: glam::UVec2) -> Result<Self> {
        let sphere = Sphere::new(
            &config.bathymetry,
            grid,
            config.lat_range,
            config.least_depth,
        )?;
        Ok(Self {
            config,
            sphere,
            dt: 0.0,
            speed_limit: 0.0,
        })
    }
}

/// What the tsunami, the pictures and the physics tests read of a shallow-water kernel.
pub trait ShallowWater: Kernel {
    fn ocean(&self) -> &Ocean;

    fn sphere(&self) -> &Sphere {
        &self.ocean().sphere
    }

    fn config(&self) -> &SweConfig {
        &self.ocean().config
    }

    /// The time step in seconds.
    fn dt(&self) -> f64 {
        self.ocean().dt
    }

    /// Speed above which the run counts as blown up (m/s).
    fn speed_limit(&self) -> f64 {
        self.ocean().speed_limit
    }

    /// `eta` (m above the sea at rest), `u` and `v` (m/s, east and north) at the cell centres.
    fn at_centres(&self, state: &[GlobalField]) -> [GlobalField; 3];
    /// Total energy in J relative to the sea at rest (density [`WATER_DENSITY`]), summed in
    /// f64: the kernel's own discrete energy.
    fn energy(&self, state: &[GlobalField]) -> f64;

    /// The water above the sea at rest in m^3: `sum eta * area` over wet centres, in f64.
    fn volume(&self, state: &[GlobalField]) -> f64 {
        let eta = &self.at_centres(state)[0];
        let sphere = self.sphere();
        (0..eta.ny)
            .map(|y| {
                let row: f64 = (0..eta.nx)
                    .filter(|&x| sphere.is_wet(x, y))
                    .map(|x| eta.at(x, y) as f64)
                    .sum();
                row * sphere.cell_area(y)
            })
            .sum()
    }

    /// The depth of the sea at rest, NaN on land.
    fn depth_field(&self) -> GlobalField {
        let sphere = self.sphere();
        let grid = sphere.grid();
        GlobalField::from_fn(grid.x, grid.y, |x, y| match sphere.is_wet(x, y) {
            true => sphere.depth(x, y) as f32,
            false => f32::NAN,
        })
    }
}

/// The time step for `cfl` and the blow-up speed limit: the Courant number times the
/// shortest crossing time of a cell by the fastest wave, `min (a cos(lat) min(dlam, dy)) /
/// (sqrt(g s) + |u|)` over wet centres of `state`; waves do not outrun the fastest by
/// 20 times in a stable run.
pub(crate) fn stable_dt(kernel: &dyn ShallowWater, state: &[GlobalField]) -> Result<(f64, f64)> {
    let sphere = kernel.sphere();
    let [eta, u, v] = kernel.at_centres(state);
    let m = &sphere.mercator;
    let step = m.dlam().min(m.dy);
    let (mut best, mut fastest) = (f64::INFINITY, 0.0f64);
    for y in 0..m.ny {
        let size = EARTH_RADIUS * m.lat(y as f64).cos() * step;
        for x in (0..m.nx).filter(|&x| sphere.is_wet(x, y)) {
            let depth = eta.at(x, y) as f64 + sphere.depth(x, y);
            let speed =
                (GRAVITY * depth.max(0.0)).sqrt() + (u.at(x, y) as f64).hypot(v.at(x, y) as f64);
            fastest = fastest.max(speed);
            best = best.min(size / speed.max(1e-9));
        }
    }
    if !best.is_finite() {
        return Err(invalid!(
            "the {}x{} shallow-water grid has no water between the walls: choose another relief, latitude range or least depth",
            m.nx,
            m.ny
        ));
    }
    Ok((kernel.config().cfl * best, 20.0 * fastest.max(1.0)))
}

/// Whether a flow may be at a point `(x, y)` of the grid.
pub(crate) type Flows<'a> = dyn Fn(u32, u32) -> bool + Sync + 'a;

/// The initial `u`, `v` and `eta` at the centres of `sphere` (row-major): velocities zero
/// where `flows_u` or `flows_v` say no flow may be.
pub(crate) fn initial_surface(
    sphere: &Sphere,
    config: &SweConfig,
    (flows_u, flows_v): (&Flows<'_>, &Flows<'_>),
) -> [Vec<f32>; 3] {
    let zero = || sphere.field_of(|_, _, _, _| 0.0);
    match config.init {
        SweInit::Rest => [zero(), zero(), zero()],
        SweInit::Hump {
            lat,
            lon,
            height,
            radius,
        } => [zero(), zero(), hump(sphere, (lat, lon), height, radius)],
        SweInit::Williamson2 { u0 } => {
            let omega = if config.coriolis { OMEGA } else { 0.0 };
            [
                sphere.field_of(|x, y, la, _| match flows_u(x, y) {
                    true => u0 * la.cos(),
                    false => 0.0,
                }),
                zero(),
                sphere.field_of(|_, _, la, _| {
                    -(EARTH_RADIUS * omega * u0 + u0 * u0 / 2.0) * la.sin().powi(2) / GRAVITY
                }),
            ]
        }
        SweInit::Random { seed } => {
            let r = move |x: u32, y: u32, k: u64| {
                let z = crate::field::splitmix64(seed ^ (k << 56) ^ ((y as u64) << 28) ^ x as u64);
                (z >> 40) as f64 / (1u64 << 24) as f64 - 0.5
            };
            [
                sphere.field_of(|x, y, _, _| if flows_u(x, y) { r(x, y, 1) } else { 0.0 }),
                sphere.field_of(|x, y, _, _| if flows_v(x, y) { r(x, y, 2) } else { 0.0 }),
                sphere.field_of(|x, y, _, _| {
                    if sphere.is_wet(x, y) {
                        10.0 * r(x, y, 3)
                    } else {
                        0.0
                    }
                }),
            ]
        }
    }
}

/// A raised-cosine hump `height/2 (1 + cos(pi r / radius))` for great-circle distances
/// `r < radius` from `(lat, lon)` (degrees), as the average over each wet cell (so that the
/// grid holds the hump's volume however coarse it is), zero on land.
fn hump(sphere: &Sphere, (lat, lon): (f64, f64), height: f64, radius: f64) -> Vec<f32> {
    let centre = (lat.to_radians(), lon.to_radians());
    let shape = |la: f64, lo: f64| {
        let r = distance(centre, (la, lo));
        match r < radius {
            true => 0.5 * height * (1.0 + (PI * r / radius).cos()),
            false => 0.0,
        }
    };
    sphere.field_of(|x, y, la, lo| {
        // A cell whose centre lies a diagonal beyond the rim holds none of it.
        let diagonal = 2.0 * sphere.mercator.cell_width(y as f64);
        match sphere.is_wet(x, y) && distance(centre, (la, lo)) < radius + diagonal {
            true => sphere.cell_average(x, y, HUMP_SAMPLES, shape),
            false => 0.0,
        }
    })
}

/// A field drawn over water in a diverging palette symmetric about zero up to the 99th
/// percentile of the magnitude over water (so that a few coastal extremes do not wash the
/// waves out); land in grey, lighter with height.
pub(crate) fn picture(sphere: &Sphere, label: &str, value: &GlobalField) -> Picture {
    let (nx, ny) = (value.nx, value.ny);
    let mut sizes: Vec<f32> = (0..ny)
        .flat_map(|y| (0..nx).map(move |x| (x, y)))
        .filter(|&(x, y)| sphere.is_wet(x, y))
        .map(|(x, y)| value.at(x, y).abs())
        .filter(|v| v.is_finite())
        .collect();
    sizes.sort_by(f32::total_cmp);
    let extreme = sizes.get(sizes.len() * 99 / 100).copied().unwrap_or(0.0);
    let extreme = if extreme > 0.0 { extreme } else { 1.0 };
    Picture {
        values: value.clone(),
        label: label.into(),
        palette: Palette::Diverging,
        range: (-extreme, extreme),
        land: Some(sphere.land_shading()),
        title: None,
        axes: Some(sphere.axes(glam::UVec2::ZERO, sphere.grid())),
        scale: crate::render::Scale::Linear,
        marks: vec![],
    }
}

/// The parameters of a shallow-water kernel ([`Kernel::parameters`]).
pub(crate) fn parameters(kernel: &dyn ShallowWater) -> Parameters {
    let c = kernel.config();
    vec![
        (
            "lat_range_deg",
            serde_json::json!([c.lat_range.0, c.lat_range.1]),
        ),
        ("relief", c.bathymetry.to_string().into()),
        ("least_depth_m", c.least_depth.into()),
        ("init", c.init.to_string().into()),
        ("dt_s", kernel.dt().into()),
        ("cfl", c.cfl.into()),
        ("coriolis", c.coriolis.into()),
        ("walls", c.walls.to_string().into()),
    ]
}

/// A blown-up state (a non-finite surface or a speed above the kernel's limit) as an error
/// naming where.
pub(crate) fn check_state(
    kernel: &dyn ShallowWater,
    state: &[GlobalField],
    step: u64,
) -> Result<()> {
    check_centres(kernel, &kernel.at_centres(state), step)
}

/// [`check_state`] on the state's values at the centres.
pub fn check_centres(
    kernel: &dyn ShallowWater,
    [eta, u, v]: &[GlobalField; 3],
    step: u64,
) -> Result<()> {
    use rayon::prelude::*;
    let sphere = kernel.sphere();
    let m = &sphere.mercator;
    let limit = kernel.speed_limit();
    let sound = |k: usize| {
        let (uu, vv) = (u.data[k] as f64, v.data[k] as f64);
        eta.data[k].is_finite() & (uu * uu + vv * vv <= limit * limit)
    };
    // Whole rows at a time: the test of a row vectorises, and only a bad one is searched.
    let nx = eta.nx as usize;
    let row_sound = |y: usize| (y * nx..(y + 1) * nx).fold(true, |all, k| all & sound(k));
    let Some(row) = (0..eta.ny as usize)
        .into_par_iter()
        .find_first(|&y| !row_sound(y))
    else {
        return Ok(());
    };
    let first = (row * nx..(row + 1) * nx)
        .find(|&k| !sound(k))
        .expect("a bad row holds a bad point");
    let (x, y) = (first as u32 % eta.nx, first as u32 / eta.nx);
    let (uu, vv, e) = (u.at(x, y), v.at(x, y), eta.at(x, y));
    let speed = (uu as f64).hypot(vv as f64);
    let (lat, lon) = sphere.lat_lon(x, y);
    let depth = e as f64 + sphere.depth(x, y);
    let size = EARTH_RADIUS * lat.to_radians().cos() * m.dlam().min(m.dy);
    let cfl = kernel.dt() * (speed + (GRAVITY * depth.max(0.0)).sqrt()) / size;
    Err(Error::BlowUp {
        step,
        message: format!(
            "the shallow-water run blew up at step {step}: at lat {lat:.2}, lon {lon:.2} u = {uu}, v = {vv}, eta = {e} (speed limit {limit:.0} m/s), local CFL number {cfl:.3}; try a smaller --cfl"
        ),
    })
}
