//! `wafer-emu tsunami`: its arguments and the validated `TsunamiConfig`.

use std::path::PathBuf;

use clap::Args;

use crate::blocking::TIME_BLOCKS;
use crate::commands::tsunami::{self, Region, TsunamiConfig};
use crate::engine::{longest_auto_block, EngineKind, EngineRequest, Hardware};
use crate::kernels::swe::{SweConfig, Walls};
use crate::kernels::KernelKind;
use crate::tsunami::{Gauge, Impact};
use crate::wafer::WaferGeometry;
use crate::wafer::MAX_N;
use crate::{invalid, Result};

use super::args::{
    bathymetry, parse_colour_range, parse_model_time, parse_pair, renamed, ClusterArgs,
    ColourRange, EngineArgs, JsonArgs,
};

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct TsunamiArgs {
    /// The shallow-water kernel: swe-c (forward-backward on a C-grid, fourth-order gravity
    /// waves: arrival times nearer the exact ones) or swe (the paper's Lax-Wendroff)
    #[arg(long, default_value = "swe-c")]
    pub kernel: String,
    /// Latitude of the impact in degrees
    #[arg(long, default_value_t = Impact::PAPER.lat, allow_negative_numbers = true)]
    pub lat: f64,
    /// Longitude of the impact in degrees (east positive)
    #[arg(long, default_value_t = Impact::PAPER.lon, allow_negative_numbers = true)]
    pub lon: f64,
    /// Height of the hump of water at its centre, metres
    #[arg(long, default_value_t = Impact::PAPER.height, allow_negative_numbers = true)]
    pub height: f64,
    /// Area the hump covers, km^2 (its radius is sqrt(area / pi))
    #[arg(long, default_value_t = Impact::PAPER.area_km2, allow_negative_numbers = true)]
    pub area: f64,
    /// Model time after the impact: 14h, 90min, 600s
    #[arg(long, value_name = "TIME", default_value = "14h", value_parser = |s: &str| parse_model_time(s, "h"))]
    pub duration: f64,
    #[arg(long, hide = true, allow_negative_numbers = true)]
    pub hours: Option<String>,
    /// Grid spacing: degrees (0.5, 0.5deg), arc-minutes (30min, 1min), or auto: 5 arc-minutes
    /// on a GPU, 6 on the CPU backend, 12 on a software adapter (each under ten minutes on its
    /// hardware; finer grids lead the wave's arrival by fewer kilometres, docs/design.md)
    #[arg(long, default_value = "auto")]
    pub resolution: String,
    /// Grid points per PE side (the columns, 360 degrees / resolution, must be a multiple), or
    /// auto: 16 on the CPU backend (its copies run longer), else 8
    #[arg(long, default_value = "auto")]
    pub n: String,
    /// Cut latitudes SOUTH,NORTH in degrees (walls)
    #[arg(long, default_value = "-70,70", value_parser = parse_pair, allow_hyphen_values = true)]
    pub lat_range: (f64, f64),
    /// Sea floor: auto (etopo1-1deg at 1 degree and coarser, etopo1-6min below), etopo1-1deg,
    /// etopo1-6min, flat:DEPTH_M or FILE.json; bilinearly resampled to the grid
    #[arg(long, default_value = "auto")]
    pub relief: String,
    /// Courant number of the time step
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub cfl: f64,
    /// Switch the Coriolis force off
    #[arg(long)]
    pub no_coriolis: bool,
    /// Centres shallower than this at rest (metres) are land: the coast of a coarse grid
    #[arg(long, value_name = "M", default_value_t = crate::kernels::swe::DEFAULT_LEAST_DEPTH, allow_negative_numbers = true)]
    pub least_depth: f64,
    /// Model time between frames (PNG, and NetCDF records): 60min, 2h
    #[arg(long, value_name = "TIME", default_value = "60min", value_parser = |s: &str| parse_model_time(s, "min"))]
    pub frame_every: f64,
    /// Model time between samples of the gauges and the maps: 60s, 5min
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = |s: &str| parse_model_time(s, "s"))]
    pub sample_every: f64,
    /// The frames' colour range LO,HI in metres of eta, centred on sea level (-2,2: the same
    /// scale in every frame), or auto: each frame its own, the 99.5th percentile of |eta| where
    /// the wave has arrived
    #[arg(long, value_name = "LO,HI", default_value = "auto", value_parser = parse_colour_range, allow_hyphen_values = true)]
    pub range: ColourRange,
    /// A gauge that falls on land at the resolution moves to the nearest water within this
    /// many km (a note says where it went); beyond, the run is refused naming the gauge.
    /// auto: two cells at the gauge's latitude
    #[arg(
        long,
        value_name = "KM",
        default_value = "auto",
        allow_negative_numbers = true
    )]
    pub gauge_radius: String,
    /// Also draw this region: sf-bay, SOUTH,NORTH,WEST,EAST, or none
    #[arg(long, default_value = "sf-bay", allow_hyphen_values = true)]
    pub region: String,
    /// More gauges from a CSV of NAME,LAT,LON lines (the defaults are kept)
    #[arg(long, value_name = "FILE")]
    pub gauges: Option<PathBuf>,
    /// |eta| in metres that counts as the wave's arrival
    #[arg(long, default_value_t = 0.01, allow_negative_numbers = true)]
    pub threshold: f32,
    /// Output folder
    #[arg(long, default_value = "tsunami")]
    pub out: PathBuf,
    /// Write into an output folder that already holds results, removing first the files that
    /// earlier runs wrote there (other files stay; without it such a folder is refused; a
    /// folder another run is writing is always refused)
    #[arg(long)]
    pub force: bool,
    /// Leave the frames out of the NetCDF file (maps and depth only)
    #[arg(long)]
    pub no_netcdf_frames: bool,
    /// Write a checkpoint (the state, the maps, the gauges and the frames so far) into
    /// OUT/checkpoint every TIME of model time (30min, 2h); on SIGINT or SIGTERM write one and
    /// stop
    #[arg(long, value_name = "TIME", value_parser = |s: &str| parse_model_time(s, "min"))]
    pub checkpoint_every: Option<f64>,
    /// Continue the tsunami whose folder is DIR from its checkpoint (the same command line
    /// otherwise; --duration may grow; DIR is the output folder, whose files stay; --out is not
    /// used), bit for bit as if it had not stopped
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// What runs: the emulated wafer with Table 3's explicit dispatches (wafer), with fused
    /// dispatches (fused; GPU only), the plain global-grid kernel (global), or auto: on the
    /// CPU backend time blocks no longer than `run`'s auto ones (5 for swe-c, 9 for swe), the length
    /// that runs the most steps in blocks between two samples (none when samples come every
    /// step or two), on a GPU and a CPU adapter the fused engine's direct reads (the explicit
    /// wafer under a WAFER_EMU_TUNING with fused=tile); time blocks
    /// whenever --time-block is given. On one adapter every engine writes the same bits
    #[arg(
        long = "engine",
        default_value = "auto",
        value_name = "auto|wafer|fused|global"
    )]
    pub engine_kind: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub json: JsonArgs,
}

/// What the tsunami's defaults take from the hardware that `engine` opens.
struct HardwareDefaults {
    /// Grid spacing in degrees for `--resolution auto`: 5 arc-minutes on a GPU, 6 on the CPU
    /// backend, 12 on a software adapter.
    resolution: f64,
    /// Points per PE side for `--n auto`: 16 on the CPU backend, 8 elsewhere.
    n: u32,
    /// Where the CPU backend's `auto` engine blocks in time, the block lengths whose multiples
    /// the steps per sample round up to, so that every step runs in a block (8 steps would
    /// leave 2 outside blocks of 3; rounded up to 9, a shorter step runs all of them in
    /// blocks, and runs nearly twice as fast).
    step_counts: Vec<u32>,
}

impl HardwareDefaults {
    fn of(engine: &EngineRequest, kind: KernelKind, blocks: bool) -> Result<Self> {
        let (ctx, _) = engine.open_for(kind.spec())?;
        let hardware = Hardware::of(ctx.as_ref());
        let (minutes, n) = match hardware {
            Hardware::Gpu(_) => (5.0, 8),
            Hardware::Cpu => (6.0, 16),
            Hardware::SoftwareAdapter(_) => (12.0, 8),
        };
        let longest = longest_auto_block(hardware, kind.spec());
        let step_counts = match hardware {
            Hardware::Cpu if blocks => TIME_BLOCKS
                .into_iter()
                .filter(|&k| k > 1 && k <= longest)
                .collect(),
            _ => vec![],
        };
        Ok(Self {
            resolution: minutes / 60.0,
            n,
            step_counts,
        })
    }
}

/// `0.5`, `0.5deg` or `30min` as degrees.
fn parse_resolution(s: &str) -> Result<f64> {
    let bad = || invalid!("resolution '{s}': use degrees (0.5, 0.5deg) or arc-minutes (30min)");
    let (number, per_degree) = match s.strip_suffix("min") {
        Some(v) => (v, 60.0),
        None => (s.strip_suffix("deg").unwrap_or(s), 1.0),
    };
    let v: f64 = number.trim().parse().map_err(|_| bad())?;
    match v > 0.0 && v.is_finite() {
        true => Ok(v / per_degree),
        false => Err(bad()),
    }
}

impl TsunamiArgs {
    /// The validated configuration.
    pub fn config(&self) -> Result<TsunamiConfig> {
        if let Some(hours) = &self.hours {
            return Err(renamed("hours", hours, &format!("--duration {hours}h")));
        }
        let impact = Impact {
            lat: self.lat,
            lon: self.lon,
            height: self.height,
            area_km2: self.area,
        };
        impact.validate()?;
        let mut engine = self.engine.request()?;
        let engine_kind = self.cluster.engine_kind(&self.engine_kind)?;
        let blocks = engine_kind == EngineKind::Auto && self.cluster.time_block.0.is_none();
        let kind = KernelKind::parse(&self.kernel)?;
        let defaults = HardwareDefaults::of(&engine, kind, blocks)?;
        let resolution = match self.resolution.as_str() {
            "auto" => defaults.resolution,
            text => parse_resolution(text)?,
        };
        let n = match self.n.as_str() {
            "auto" => defaults.n,
            text => match text.parse::<u32>() {
                Ok(n) if (1..=MAX_N).contains(&n) => n,
                _ => return Err(invalid!("n = {text}: allowed auto or 1..={MAX_N}")),
            },
        };
        let eta_range = match self.range.0 {
            None => None,
            Some((lo, hi)) if lo == -hi => Some(hi as f32),
            Some((lo, hi)) => {
                return Err(invalid!(
                    "range {lo},{hi}: the frames' palette is centred on sea level: allowed -R,R such as -{hi},{hi}"
                ))
            }
        };
        if !(self.threshold > 0.0 && self.threshold.is_finite()) {
            return Err(invalid!(
                "threshold = {} m: allowed a finite number above 0",
                self.threshold
            ));
        }
        let gauge_radius = match self.gauge_radius.as_str() {
            "auto" => None,
            text => match text.parse::<f64>() {
                Ok(km) if (0.0..=2000.0).contains(&km) => Some(km * 1e3),
                _ => {
                    return Err(invalid!(
                        "gauge-radius '{text}': allowed auto or 0 to 2000 km"
                    ))
                }
            },
        };
        let relief = match self.relief.as_str() {
            "auto" if resolution >= 1.0 => "etopo1-1deg",
            "auto" => "etopo1-6min",
            other => other,
        };
        let base = SweConfig {
            lat_range: self.lat_range,
            bathymetry: bathymetry(relief)?,
            init: impact.init(),
            cfl: self.cfl,
            coriolis: !self.no_coriolis,
            walls: Walls::NoSlip,
            least_depth: self.least_depth,
            sample_interval: Some(self.sample_every),
            step_counts: defaults.step_counts,
        };
        base.validate()?;
        let grid = tsunami::grid_for(resolution, self.lat_range, n)?;
        let (wx, wy) = self.cluster.wafers;
        let pes = grid / n;
        if wx == 0 || wy == 0 || !pes.x.is_multiple_of(wx) || !pes.y.is_multiple_of(wy) {
            return Err(invalid!(
                "{wx}x{wy} wafers cannot share the {}x{} PEs of this grid evenly: choose wafer counts that divide them",
                pes.x,
                pes.y
            ));
        }
        let wafer = WaferGeometry::new(pes.x / wx, pes.y / wy, n, kind.spec().comm_width)?;
        let (cluster, links, placement) = self.cluster.config(wafer)?;
        let swe = kind.shallow_water(base, grid)?;
        impact.check_place(swe.as_ref(), self.lat_range)?;
        let problem = tsunami::problem(&swe, cluster)?.with_links(links)?;
        let gauges = match &self.gauges {
            Some(path) => [Gauge::defaults(), Gauge::read_csv(path)?].concat(),
            None => Gauge::defaults(),
        };
        let region = match self.region.as_str() {
            "none" => None,
            r => Some(Region::parse(r)?),
        };
        engine.placement = placement;
        Ok(TsunamiConfig {
            impact,
            resolution,
            hours: self.duration / 3600.0,
            swe,
            problem,
            engine,
            engine_kind,
            out: self.resume.clone().unwrap_or_else(|| self.out.clone()),
            checkpoint_every: self.checkpoint_every.map(|s| s / 60.0),
            resume: self.resume.is_some(),
            frame_minutes: self.frame_every / 60.0,
            sample_seconds: self.sample_every,
            eta_range,
            gauge_radius,
            region,
            gauges,
            threshold: self.threshold,
            netcdf_frames: !self.no_netcdf_frames,
            force: self.force,
        })
    }
}
