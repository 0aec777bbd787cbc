//! Command-line arguments, and their conversion into validated configurations in one place.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::cluster::{ClusterGeometry, LinkConfig, LinkSpec};
use crate::commands::bench::BenchConfig;
use crate::commands::predict::PredictCommand;
use crate::commands::reproduce::{ReproduceConfig, TABLE5_SIZES};
use crate::commands::run::RunConfig;
use crate::commands::tsunami::{self, Region, TsunamiConfig};
use crate::engine::{EngineKind, EngineRequest};
use crate::gpu::Placement;
use crate::kernels::swe::relief::ReliefGrid;
use crate::kernels::swe::{Bathymetry, SweConfig, Walls};
use crate::kernels::{HeatCoefficients, KernelKind, KernelOptions, OptionGroup};
use crate::model::Problem;
use crate::output::JsonTarget;
use crate::timing::params::node_preset;
use crate::timing::{ClusterShape, PredictConfig, TelemetryPlan, TimingParams};
use crate::tsunami::{Gauge, Impact};
use crate::wafer::WaferGeometry;
use crate::wafer::MAX_N;
use crate::{invalid, Result};

#[derive(Debug, Parser)]
#[command(
    name = "wafer-emu",
    version,
    args_override_self = true,
    about = "Emulates wafer-scale dataflow processors on any GPU and runs Domain Translation stencil codes on them"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// A run file, given after the command (`wafer-emu run --config FILE.toml`): TOML whose
    /// keys are the command's long flags (`steps = 100`, `check = true`, `link =
    /// ["0,0,up:delay=1"]`, `kernel = "swe"`); flags given on the command line override it,
    /// unknown keys are refused by name
    #[arg(long, global = true, value_name = "FILE.toml")]
    pub config: Option<PathBuf>,
}

/// Expands `--config FILE.toml` into the flags the file holds, placed before the command
/// line's own (later flags override earlier ones). `kernel` is the positional kernel, used
/// when the command line gives none right after the command.
pub fn with_config(args: Vec<String>) -> Result<Vec<String>> {
    let Some(at) = args.iter().position(|a| a == "--config") else {
        return Ok(args);
    };
    let path = args
        .get(at + 1)
        .ok_or_else(|| invalid!("--config needs a FILE.toml"))?;
    let text =
        std::fs::read_to_string(path).map_err(|e| invalid!("cannot read run file {path}: {e}"))?;
    let table: toml::Table = text.parse().map_err(|e| invalid!("run file {path}: {e}"))?;
    let name = args.get(1).filter(|a| !a.starts_with('-')).ok_or_else(|| {
        invalid!("--config goes after the command: wafer-emu run --config {path}")
    })?;
    let (kernel, flags) = toml_flags(path, name, &table)?;
    let rest: Vec<String> = args[2..]
        .iter()
        .enumerate()
        .filter(|&(k, _)| k + 2 != at && k + 2 != at + 1)
        .map(|(_, a)| a.clone())
        .collect();
    let positional_given = rest.first().is_some_and(|a| !a.starts_with('-'));
    let mut out = vec![args[0].clone(), name.clone()];
    out.extend(kernel.filter(|_| !positional_given));
    out.extend(flags);
    out.extend(rest);
    Ok(out)
}

/// The flags of command `name` that a TOML table says (keys are long flags, `_` for `-`), and
/// its `kernel`; unknown keys are refused by name (`source` names the file in messages).
pub fn toml_flags(
    source: &str,
    name: &str,
    table: &toml::Table,
) -> Result<(Option<String>, Vec<String>)> {
    let path = source;
    let cli = <Cli as clap::CommandFactory>::command();
    let command = cli
        .find_subcommand(name)
        .ok_or_else(|| invalid!("unknown command '{name}'"))?;
    let args: Vec<&clap::Arg> = command
        .get_arguments()
        .filter(|a| a.get_long().is_some_and(|long| long != "config"))
        .collect();
    let takes_kernel = command.get_positionals().any(|a| a.get_id() == "kernel");
    let (mut kernel, mut flags) = (None, vec![]);
    for (key, value) in table {
        if key == "kernel" && takes_kernel {
            kernel = Some(toml_scalar(path, key, value)?);
            continue;
        }
        let long = key.replace('_', "-");
        let Some(arg) = args.iter().find(|a| a.get_long() == Some(long.as_str())) else {
            let known: Vec<&str> = takes_kernel
                .then_some("kernel")
                .into_iter()
                .chain(args.iter().filter_map(|a| a.get_long()))
                .collect();
            return Err(invalid!(
                "run file {path}: unknown key '{key}': allowed {}",
                known.join(", ")
            ));
        };
        let flag = format!("--{long}");
        match (arg.get_action(), value) {
            (clap::ArgAction::SetTrue, toml::Value::Boolean(on)) => {
                flags.extend(on.then_some(flag))
            }
            (clap::ArgAction::SetTrue, other) => {
                return Err(invalid!(
                    "run file {path}: '{key}' is a switch: allowed true or false, not {}",
                    other.type_str()
                ))
            }
            (clap::ArgAction::Append, toml::Value::Array(items)) => {
                for item in items {
                    flags.extend([flag.clone(), toml_scalar(path, key, item)?]);
                }
            }
            (_, toml::Value::Array(_)) => {
                return Err(invalid!(
                    "run file {path}: '{key}' takes one value, not a list"
                ))
            }
            (_, other) => flags.extend([flag, toml_scalar(path, key, other)?]),
        }
    }
    Ok((kernel, flags))
}

/// The text of a run file's value for `key`: a string or a number.
fn toml_scalar(path: &str, key: &str, value: &toml::Value) -> Result<String> {
    match value {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        other => Err(invalid!(
            "run file {path}: '{key}' is {}: allowed a string or a number",
            other.type_str()
        )),
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a stencil kernel on an emulated wafer or cluster of wafers and write the field (.npy,
    /// .png), a summary and the link statistics.
    Run(RunArgs),
    /// List the GPU adapters wgpu finds, best first, with the limits that matter here.
    Adapters(AdaptersArgs),
    /// Time the emulated wafer (and a cluster) against the global kernel, the CPU backend and the
    /// copy ceilings.
    Bench(BenchArgs),
    /// Predict the real machine's speed from the timing model (cycles, steps/s, utilisation).
    Predict(PredictArgs),
    /// Regenerate the paper's performance results from the timing model (CSV, PNG, report.md).
    Reproduce(ReproduceArgs),
    /// The asteroid tsunami of the paper's section 5.2.3 on real relief: frames, maps, gauges
    /// and a CF NetCDF file.
    Tsunami(TsunamiArgs),
    /// Run many `run` or `predict` cases from a sweep file (TOML: `command`, `[base]`,
    /// `[vary]` lists, `[[case]]`): one folder per case and one results table (JSONL and
    /// CSV); resumable, and shardable for Slurm array jobs.
    Sweep(SweepArgs),
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub action: Option<SweepAction>,
    /// The sweep file
    pub file: Option<PathBuf>,
    /// The sweep's folder: a folder per case, results.jsonl and results.csv
    #[arg(long, default_value = "sweep")]
    pub out: PathBuf,
    /// Run every N-th case starting at case I (default: SLURM_ARRAY_TASK_ID /
    /// SLURM_ARRAY_TASK_COUNT when set, else every case); a shard writes its own table
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum SweepAction {
    /// Join the shards' tables of a sweep folder into results.jsonl and results.csv
    Merge {
        /// The sweep folder
        dir: PathBuf,
    },
    /// Draw a figure of the results against a parameter, one line per value of another
    Plot {
        /// The sweep folder
        dir: PathBuf,
        /// The parameter (or figure) along x, a column of results.csv
        #[arg(long)]
        x: String,
        /// The figure along y, a column of results.csv
        #[arg(long)]
        y: String,
        /// One line per value of this column
        #[arg(long)]
        by: Option<String>,
        /// Logarithmic x axis
        #[arg(long)]
        log_x: bool,
        /// Logarithmic y axis
        #[arg(long)]
        log_y: bool,
        /// The PNG to write (default DIR/Y_vs_X.png)
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// `--json FILE` on every command.
#[derive(Debug, Args)]
pub struct JsonArgs {
    /// Also write the report, with every parameter, as JSON to FILE (`-` for standard output)
    #[arg(long = "json", value_name = "FILE")]
    pub path: Option<PathBuf>,
}

impl JsonArgs {
    /// The validated target (a file is checked before any work).
    pub fn target(&self) -> Result<Option<JsonTarget>> {
        self.path.as_deref().map(JsonTarget::parse).transpose()
    }

    /// The validated target of a command that writes into the output folder `out`
    /// ([`JsonTarget::check_beside`]).
    pub fn target_beside(&self, out: Option<&std::path::Path>) -> Result<Option<JsonTarget>> {
        let target = self.target()?;
        if let (Some(target), Some(out)) = (&target, out) {
            target.check_beside(out)?;
        }
        Ok(target)
    }
}

#[derive(Debug, Args)]
pub struct AdaptersArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub json: JsonArgs,
}

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
    /// Model hours after the impact
    #[arg(long, default_value_t = 14.0, allow_negative_numbers = true)]
    pub hours: f64,
    /// Grid spacing: degrees (0.5, 0.5deg), arc-minutes (30min, 1min), or auto: 5 arc-minutes
    /// on a GPU, 12 on the CPU backend or a software adapter (each under ten minutes on its
    /// hardware; finer grids lead the wave's arrival by fewer kilometres, docs/design.md)
    #[arg(long, default_value = "auto")]
    pub resolution: String,
    /// Grid points per PE side (the columns, 360 degrees / resolution, must be a multiple)
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=crate::wafer::MAX_N as i64))]
    pub n: u32,
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
    /// Model minutes between frames (PNG, and NetCDF records)
    #[arg(long, default_value_t = 60.0, allow_negative_numbers = true)]
    pub frame_every: f64,
    /// Model seconds between samples of the gauges and the maps
    #[arg(long, default_value_t = 60.0, allow_negative_numbers = true)]
    pub sample_every: f64,
    /// The frames show eta from -RANGE to RANGE metres (the same scale in every frame), or
    /// auto: each frame its own, the 99.5th percentile of |eta| where the wave has arrived
    #[arg(long, default_value = "auto", allow_negative_numbers = true)]
    pub range: String,
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
    /// OUT/checkpoint every MIN minutes of model time; on SIGINT or SIGTERM write one and stop
    #[arg(long, value_name = "MIN")]
    pub checkpoint_every: Option<f64>,
    /// Continue the tsunami whose folder is DIR from its checkpoint (the same command line
    /// otherwise; --hours may grow; DIR is the output folder, whose files stay; --out is not
    /// used), bit for bit as if it had not stopped
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// What runs: the emulated wafer with Table 3's explicit dispatches (wafer), with fused
    /// dispatches (fused; GPU only), the plain global-grid kernel (global), or auto: on the
    /// CPU backend time blocks no longer than `run`'s auto ones for shallow water (9), the length
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

/// The tsunami's default grid spacing in degrees for the hardware `engine` opens: 5
/// arc-minutes on a GPU, 12 on the CPU backend or a software adapter.
fn auto_resolution(engine: &EngineRequest, kind: KernelKind) -> Result<f64> {
    let (ctx, _) = engine.open_for(kind.spec())?;
    let gpu = ctx.is_some_and(|ctx| !ctx.adapter.is_software());
    Ok(if gpu { 5.0 / 60.0 } else { 12.0 / 60.0 })
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
        let impact = Impact {
            lat: self.lat,
            lon: self.lon,
            height: self.height,
            area_km2: self.area,
        };
        impact.validate()?;
        let mut engine = self.engine.request()?;
        let resolution = match self.resolution.as_str() {
            "auto" => auto_resolution(&engine, KernelKind::parse(&self.kernel)?)?,
            text => parse_resolution(text)?,
        };
        for (name, v, max) in [
            ("hours", self.hours, 240.0),
            ("frame-every", self.frame_every, 1e5),
            ("sample-every", self.sample_every, 1e5),
        ] {
            if !(v > 0.0 && v <= max) {
                return Err(invalid!("{name} = {v}: allowed 0 < {name} <= {max}"));
            }
        }
        let eta_range = match self.range.as_str() {
            "auto" => None,
            text => match text.parse::<f32>() {
                Ok(v) if v > 0.0 && v.is_finite() => Some(v),
                _ => {
                    return Err(invalid!(
                        "range '{text}': allowed auto or a number of metres above 0"
                    ))
                }
            },
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
        };
        base.validate()?;
        let kind = KernelKind::parse(&self.kernel)?;
        if self.n == 0 || self.n > MAX_N {
            return Err(invalid!(
                "n = {} is out of range: allowed 1..={MAX_N}",
                self.n
            ));
        }
        let grid = tsunami::grid_for(resolution, self.lat_range, self.n)?;
        let (wx, wy) = self.cluster.wafers;
        let pes = grid / self.n;
        if wx == 0 || wy == 0 || !pes.x.is_multiple_of(wx) || !pes.y.is_multiple_of(wy) {
            return Err(invalid!(
                "{wx}x{wy} wafers cannot share the {}x{} PEs of this grid evenly: choose wafer counts that divide them",
                pes.x,
                pes.y
            ));
        }
        let wafer = WaferGeometry::new(pes.x / wx, pes.y / wy, self.n, kind.spec().comm_width)?;
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
            hours: self.hours,
            swe,
            problem,
            engine,
            engine_kind: EngineKind::parse(&self.engine_kind)?,
            out: self.resume.clone().unwrap_or_else(|| self.out.clone()),
            checkpoint_every: match self.checkpoint_every {
                Some(m) if !(m.is_finite() && m > 0.0 && m <= 1e5) => {
                    return Err(invalid!(
                        "checkpoint-every = {m} minutes: allowed more than 0, at most 1e5"
                    ))
                }
                m => m,
            },
            resume: self.resume.is_some(),
            frame_minutes: self.frame_every,
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

/// The sea floor named on the command line.
fn bathymetry(relief: &str) -> Result<Bathymetry> {
    Ok(match relief.split_once(':') {
        Some(("flat", depth)) => Bathymetry::Flat(depth.trim().parse().map_err(|_| {
            invalid!("relief '{relief}': flat:DEPTH_M needs a depth in metres")
        })?),
        _ if relief.ends_with(".json") => Bathymetry::File(relief.into()),
        _ => Bathymetry::Etopo(ReliefGrid::parse(relief).map_err(|_| {
            invalid!(
                "unknown relief '{relief}': allowed etopo1-1deg, etopo1-6min, flat:DEPTH_M or FILE.json"
            )
        })?),
    })
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct ReproduceArgs {
    /// Output folder for the CSVs, plots and report.md
    #[arg(long, default_value = "reproduce")]
    pub out: PathBuf,
    /// Write into an output folder that already holds results, removing first the files that
    /// earlier runs wrote there (other files stay; without it such a folder is refused; a
    /// folder another run is writing is always refused)
    #[arg(long)]
    pub force: bool,
    /// PEs per wafer: paper (both node sizes of the paper's Table 5, 744x1116 and 720x720;
    /// about 20 minutes on 2 cores), cs3 (744x1116), square (720x720), WxH, or a comma list;
    /// the report says which size each paper figure matches
    #[arg(long, default_value = "paper")]
    pub pes: String,
    /// Most extra latency of one link in microseconds (each link draws its own, uniform from
    /// 0); above 0, Figure 7 also simulates every cluster in full on wafers an eighth of the
    /// first size along each side
    #[arg(long, value_name = "US", default_value_t = 0.0)]
    pub link_jitter: f64,
    #[command(flatten)]
    pub json: JsonArgs,
}

impl ReproduceArgs {
    /// The validated configuration.
    pub fn config(&self) -> Result<ReproduceConfig> {
        let sizes = match self.pes.as_str() {
            "paper" => TABLE5_SIZES.to_vec(),
            list => list
                .split(',')
                .map(|s| parse_node(s.trim()))
                .collect::<Result<Vec<_>>>()?,
        };
        for &(pes_x, pes_y) in &sizes {
            ClusterShape {
                wafers_x: 1,
                wafers_y: 1,
                pes_x,
                pes_y,
                n: 1,
                p: 1,
            }
            .validate()?;
        }
        if !(self.link_jitter.is_finite() && (0.0..=1e6).contains(&self.link_jitter)) {
            return Err(invalid!(
                "link-jitter = {} us: allowed 0 to 1e6 us",
                self.link_jitter
            ));
        }
        Ok(ReproduceConfig {
            out: self.out.clone(),
            sizes,
            force: self.force,
            link_jitter_s: self.link_jitter * 1e-6,
        })
    }
}

/// A node preset name or WxH.
fn parse_node(s: &str) -> Result<(u32, u32)> {
    node_preset(s).or_else(|e| parse_pes(s).map_err(|_| e))
}

/// Where to run.
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// auto (best adapter, CPU backend if none), cpu, vulkan, gl, metal or dx12 [env: WGPU_BACKEND]
    #[arg(long)]
    pub backend: Option<String>,
    /// Use the adapter whose name contains this (case-insensitive) [env: WGPU_ADAPTER_NAME]
    #[arg(long)]
    pub adapter: Option<String>,
}

impl EngineArgs {
    pub fn request(&self) -> Result<EngineRequest> {
        EngineRequest::new(self.backend.as_deref(), self.adapter.as_deref())
    }
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    #[arg(help = kernel_help())]
    pub kernel: String,
    /// PEs of each wafer, WxH (or one number for a square) [default: 64x64; swe: 45x20,
    /// with n = 8 the 360 x 160 grid of the 1-degree relief]
    #[arg(long, value_parser = parse_pes)]
    pub pes: Option<(u32, u32)>,
    /// Grid points per PE side (each PE owns n x n points)
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=crate::wafer::MAX_N as i64))]
    pub n: u32,
    /// Time steps (a shallow-water step is two half steps, two remaps)
    #[arg(long, default_value_t = 1000)]
    pub steps: u64,
    #[command(flatten)]
    pub heat: HeatArgs,
    #[command(flatten)]
    pub swe: SweArgs,
    /// Initial condition. Heat: gauss (default), mode:KX,KY, random:SEED or index. Shallow
    /// water: hump (default: 10 m, 500 km, 20N 150W), hump:LAT,LON,HEIGHT_M,RADIUS_KM, rest,
    /// williamson2 or random:SEED
    #[arg(long)]
    pub init: Option<String>,
    /// Output folder for the fields and summary.txt
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Write into an output folder that already holds results, removing first the files that
    /// earlier runs wrote there (other files stay; without it such a folder is refused; a
    /// folder another run is writing is always refused)
    #[arg(long)]
    pub force: bool,
    /// Write no files, only print the summary
    #[arg(long)]
    pub no_output: bool,
    /// Also write the field every K steps (step 0 included)
    #[arg(long, value_name = "K")]
    pub snapshot_every: Option<u64>,
    /// Write a checkpoint (every field and the step) into OUT/checkpoint every K steps; on
    /// SIGINT or SIGTERM the run writes one and stops
    #[arg(long, value_name = "K")]
    pub checkpoint_every: Option<u64>,
    /// Continue the run whose folder is DIR from its checkpoint, to --steps, bit for bit as if
    /// it had not stopped (the same command line otherwise; DIR is the output folder, whose
    /// files stay; --out is not used)
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Colour range LO,HI of every picture (the same scale across snapshots); by default each
    /// picture's own range
    #[arg(long, value_name = "LO,HI", value_parser = parse_pair, allow_hyphen_values = true)]
    pub range: Option<(f64, f64)>,
    /// What runs: the emulated wafers with Table 3's explicit sendrecv and compute dispatches
    /// (wafer), the same wafers with each stage one dispatch of workgroups that are blocks of
    /// PEs (fused; GPU only, the explicit dispatches where one PE's points do not fit a
    /// workgroup), the plain global-grid kernel (global: no PEs, no translation), or the
    /// faster emulated engine (auto: time blocks on the CPU backend for every kernel, of 15
    /// steps for heat5 and heat9 and of 9 for shallow water, shorter where the wafer is too
    /// small for them; of 5 on a GPU with the fused engine for single-stage kernels (heat5,
    /// heat9) at n <= 8, and on a GPU the fused engine's direct reads, without time blocks,
    /// for every other kernel and n; on a CPU adapter such as lavapipe time blocks of 5 in
    /// registers for single-stage kernels wherever the wafer's width in points is a multiple
    /// of 4, the direct reads for them elsewhere at n <= 32 and for shallow water at every n,
    /// with its time blocks of 3 in registers for a run of 1e8 point updates or more per CPU
    /// thread (their compile takes seconds); time blocks whenever
    /// --time-block is given; the explicit wafer otherwise; a
    /// WAFER_EMU_TUNING without direct reads or register blocks narrows this)
    #[arg(
        long = "engine",
        default_value = "auto",
        value_name = "auto|wafer|fused|global"
    )]
    pub engine_kind: String,
    /// Also run the other engine on the same adapter and compare bits
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub json: JsonArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The cluster: wafers, their links, and the devices they run on.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// Wafers of the cluster, WxH, each with --pes PEs, joined on a torus by links
    #[arg(long, default_value = "1x1", value_parser = parse_pes)]
    pub wafers: (u32, u32),
    /// Delay of every link, in rounds (one round = one step of an unhindered wafer)
    #[arg(long, default_value_t = LinkSpec::default().delay, value_parser = clap::value_parser!(u32).range(0..=crate::cluster::link::MAX_DELAY as i64))]
    pub link_delay: u32,
    /// Capacity of every link, in packages (0 cannot progress and is reported)
    #[arg(long, default_value_t = LinkSpec::default().capacity)]
    pub link_capacity: u32,
    /// One link's own delay and capacity, WX,WY,right|up:delay=D,capacity=C (repeatable)
    #[arg(long = "link", value_name = "SPEC")]
    pub links: Vec<String>,
    /// Devices to spread the wafers over, each with its own queue and thread (several
    /// adapters of the same kind are used in turn)
    #[arg(long, default_value_t = 1)]
    pub devices: u32,
    /// Seconds a device thread waits for a package or link room before it reports a hang
    #[arg(long, default_value_t = 60.0)]
    pub link_timeout: f64,
    /// Steps per time block (the fused engine on a GPU, or the CPU backend): the PEs clear
    /// of the bands along the wafer's left and low edges (whose points read the links)
    /// advance this many steps at once (1, 3, 5, 7, 9, 15 or 21; 1: none; every kernel)
    #[arg(long, default_value_t = 1)]
    pub time_block: u32,
}

impl ClusterArgs {
    /// The cluster of wafers of `wafer`, its links, and the placement.
    fn config(&self, wafer: WaferGeometry) -> Result<(ClusterGeometry, LinkConfig, Placement)> {
        let cluster = ClusterGeometry::new(self.wafers.0, self.wafers.1, wafer)?;
        let mut links = LinkConfig::uniform(self.link_delay, self.link_capacity);
        for spec in &self.links {
            let parsed = links.parse_override(spec)?;
            links.overrides.push(parsed);
        }
        links.resolve(&cluster)?;
        if !(self.link_timeout > 0.0 && self.link_timeout <= 86_400.0) {
            return Err(invalid!(
                "link-timeout = {} s is out of range: allowed (0, 86400]",
                self.link_timeout
            ));
        }
        let placement = Placement {
            devices: self.devices,
            time_block: self.time_block,
            timeout: Duration::from_secs_f64(self.link_timeout),
            ..Placement::default()
        };
        placement.validate(&cluster)?;
        Ok((cluster, links, placement))
    }
}

/// The heat equation u' = A u_xx + C u_yy + D u_x + E u_y, forward Euler with step dt
/// (kernels heat5 and heat9; given for swe, they are refused).
#[derive(Debug, Args)]
pub struct HeatArgs {
    /// Diffusion along x (A) [default: 1]
    #[arg(long = "coef-a", allow_negative_numbers = true)]
    pub a: Option<f32>,
    /// Diffusion along y (C) [default: 1]
    #[arg(long = "coef-c", allow_negative_numbers = true)]
    pub c: Option<f32>,
    /// Advection along x (D) [default: 0]
    #[arg(long = "coef-d", allow_negative_numbers = true)]
    pub d: Option<f32>,
    /// Advection along y (E) [default: 0]
    #[arg(long = "coef-e", allow_negative_numbers = true)]
    pub e: Option<f32>,
    /// Time step [default: 0.2]
    #[arg(long, allow_negative_numbers = true)]
    pub dt: Option<f32>,
}

impl HeatArgs {
    /// The coefficients given, the defaults for the rest.
    fn coefficients(&self) -> HeatCoefficients {
        let default = HeatCoefficients::default();
        HeatCoefficients {
            a: self.a.unwrap_or(default.a),
            c: self.c.unwrap_or(default.c),
            d: self.d.unwrap_or(default.d),
            e: self.e.unwrap_or(default.e),
            dt: self.dt.unwrap_or(default.dt),
        }
    }

    /// The first of these flags given, if any.
    fn given(&self) -> Option<&'static str> {
        let flags = [
            ("--coef-a", self.a),
            ("--coef-c", self.c),
            ("--coef-d", self.d),
            ("--coef-e", self.e),
            ("--dt", self.dt),
        ];
        flags.into_iter().find_map(|(flag, v)| v.map(|_| flag))
    }
}

/// The shallow-water equations (kernels swe and swe-c; given for heat5 or heat9, they are
/// refused).
#[derive(Debug, Args)]
pub struct SweArgs {
    /// Cut latitudes SOUTH,NORTH in degrees: walls, rows between uniform in Mercator y
    /// [default: -70,70]
    #[arg(long, value_parser = parse_pair, allow_hyphen_values = true)]
    pub lat_range: Option<(f64, f64)>,
    /// Sea floor: etopo1-1deg, etopo1-6min (ETOPO1 relief, bilinearly resampled), flat:DEPTH_M
    /// or FILE.json, a descriptor of a raw i16 grid like those in assets/relief/ [default:
    /// etopo1-1deg]
    #[arg(long)]
    pub relief: Option<String>,
    /// Wall rows at the cut latitudes: no-slip (land) or prescribed (they keep their initial
    /// state, for steady test cases) [default: no-slip]
    #[arg(long)]
    pub walls: Option<String>,
    /// Courant number of the time step [default: 0.5]
    #[arg(long, allow_negative_numbers = true)]
    pub cfl: Option<f64>,
    /// Switch the Coriolis force off
    #[arg(long)]
    pub no_coriolis: bool,
    /// Centres shallower than this at rest (metres) are land: the coast of a coarse grid
    /// [default: 10]
    #[arg(long, value_name = "M", allow_negative_numbers = true)]
    pub least_depth: Option<f64>,
}

impl SweArgs {
    fn config(&self) -> Result<SweConfig> {
        let default = SweConfig::default();
        let config = SweConfig {
            lat_range: self.lat_range.unwrap_or(default.lat_range),
            bathymetry: match &self.relief {
                Some(relief) => bathymetry(relief)?,
                None => default.bathymetry,
            },
            cfl: self.cfl.unwrap_or(default.cfl),
            coriolis: !self.no_coriolis,
            walls: match &self.walls {
                Some(walls) => Walls::parse(walls)?,
                None => default.walls,
            },
            least_depth: self.least_depth.unwrap_or(default.least_depth),
            ..default
        };
        config.validate()?;
        Ok(config)
    }

    /// The first of these flags given, if any.
    fn given(&self) -> Option<&'static str> {
        let flags = [
            ("--lat-range", self.lat_range.is_some()),
            ("--relief", self.relief.is_some()),
            ("--walls", self.walls.is_some()),
            ("--cfl", self.cfl.is_some()),
            ("--no-coriolis", self.no_coriolis),
            ("--least-depth", self.least_depth.is_some()),
        ];
        flags
            .into_iter()
            .find_map(|(flag, given)| given.then_some(flag))
    }
}

fn parse_pair(s: &str) -> std::result::Result<(f64, f64), String> {
    let bad = || format!("'{s}' is not a pair of numbers: use SOUTH,NORTH such as -70,70");
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct BenchArgs {
    #[arg(default_value = "heat5", help = kernel_help())]
    pub kernel: String,
    /// Side of the square global grid, the same for every variant
    #[arg(long, default_value_t = 1024)]
    pub grid: u32,
    /// Points per PE side to compare (comma-separated); the wafer has grid/n PEs per side
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16,32", value_parser = clap::value_parser!(u32).range(1..=crate::wafer::MAX_N as i64))]
    pub n: Vec<u32>,
    /// Steps per timed repetition (rounded up to whole time blocks)
    #[arg(long, default_value_t = 20)]
    pub steps: u64,
    /// Repetitions (the median is reported)
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Skip the CPU backend
    #[arg(long)]
    pub no_cpu: bool,
    /// Also time the grid as a cluster of WxH wafers (one device, and --devices)
    #[arg(long, default_value = "1x1", value_parser = parse_pes)]
    pub wafers: (u32, u32),
    /// Devices for the multi-device cluster row
    #[arg(long, default_value_t = 1)]
    pub devices: u32,
    /// Steps per time block of extra rows: the GPU's fused engine and the CPU backend, every kernel; auto: each engine's own, as `run --engine auto` takes them (on a GPU 5, on a CPU adapter 5 for heat and 3 for shallow water, in registers; on the CPU backend 15 for heat and 9 for shallow water; shorter where the wafer is too small); or 1, 3, 5, 7, 9, 15 or 21 for every engine (1: none)
    #[arg(long, default_value = "auto", value_parser = parse_time_block)]
    pub time_block: BenchTimeBlock,
    /// After the timed runs, run each GPU variant once more with a GPU timestamp before and after every dispatch, and print the GPU time per step of each kernel
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub json: JsonArgs,
}

/// A bench's `--time-block`: `auto` (`None`: each engine's own) or steps for every engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchTimeBlock(pub Option<u32>);

/// `auto` or a number of steps, checked with the rest of the configuration.
fn parse_time_block(s: &str) -> std::result::Result<BenchTimeBlock, String> {
    match s {
        "auto" => Ok(BenchTimeBlock(None)),
        k => k.parse().map(|k| BenchTimeBlock(Some(k))).map_err(|_| {
            format!("'{s}' is not a time block: use auto or a number of steps such as 5")
        }),
    }
}

/// The kernels of the registry with their summaries, for help texts.
fn kernel_help() -> String {
    let kernels: Vec<String> = KernelKind::ALL
        .iter()
        .map(|k| format!("{}: {}", k.name(), k.spec().summary))
        .collect();
    format!("Kernel: {}", kernels.join("; "))
}

fn parse_pes(s: &str) -> std::result::Result<(u32, u32), String> {
    let bad = || format!("'{s}' is not a count WxH: use two counts such as 64x64, or one number");
    let (w, h) = s.split_once(['x', 'X']).unwrap_or((s, s));
    Ok((
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    ))
}

impl RunArgs {
    /// The validated configuration.
    pub fn config(&self) -> Result<RunConfig> {
        let kind = KernelKind::parse(&self.kernel)?;
        let pes = self.pes.unwrap_or(kind.spec().default_pes);
        let geometry = WaferGeometry::new(pes.0, pes.1, self.n, kind.spec().comm_width)?;
        // Another kernel's flags would be ignored: refused instead.
        let given = [
            (OptionGroup::Heat, self.heat.given()),
            (OptionGroup::ShallowWater, self.swe.given()),
        ];
        let foreign = given.into_iter().find_map(|(group, flag)| {
            let read = kind.spec().options.contains(&group);
            flag.filter(|_| !read).map(|flag| (flag, group.readers()))
        });
        if let Some((flag, kernels)) = foreign {
            return Err(invalid!(
                "{flag} is a flag of {}: it does not apply to {}",
                kernels.join(", "),
                kind.name()
            ));
        }
        let options = KernelOptions {
            heat: self.heat.coefficients(),
            swe: self.swe.config()?,
            init: self.init.clone(),
        };
        let (cluster, links, placement) = self.cluster.config(geometry)?;
        let kernel = kind.configure(&options, cluster.whole()?.global_size())?;
        let problem = Problem::new(kernel, cluster)?.with_links(links)?;
        if self.snapshot_every == Some(0) {
            return Err(invalid!("snapshot-every = 0: allowed 1 or more steps"));
        }
        let mut engine = self.engine.request()?;
        engine.placement = placement;
        Ok(RunConfig {
            problem,
            steps: self.steps,
            engine,
            force: self.force,
            range: match self.range {
                Some((lo, hi)) if lo.is_nan() || hi.is_nan() || lo >= hi => {
                    return Err(invalid!("range {lo},{hi}: allowed LO < HI"))
                }
                r => r.map(|(lo, hi)| (lo as f32, hi as f32)),
            },
            engine_kind: EngineKind::parse(&self.engine_kind)?,
            out: match (&self.resume, self.no_output) {
                (Some(_), true) => {
                    return Err(invalid!(
                        "--resume continues the run in its output folder: it cannot go with --no-output"
                    ))
                }
                (Some(dir), false) => Some(dir.clone()),
                (None, no_output) => (!no_output).then(|| self.out.clone()),
            },
            snapshot_every: self.snapshot_every,
            check: self.check,
            checkpoint_every: match self.checkpoint_every {
                Some(0) => return Err(invalid!("checkpoint-every = 0: allowed 1 or more steps")),
                Some(_) if self.no_output => {
                    return Err(invalid!(
                        "--checkpoint-every writes into the output folder: it cannot go with --no-output"
                    ))
                }
                k => k,
            },
            resume: self.resume.is_some(),
        })
    }
}

impl BenchArgs {
    /// The validated configuration.
    pub fn config(&self) -> Result<BenchConfig> {
        let config = BenchConfig {
            kernel: KernelKind::parse(&self.kernel)?,
            grid: self.grid,
            ns: self.n.clone(),
            steps: self.steps,
            reps: self.reps,
            engine: self.engine.request()?,
            cpu: !self.no_cpu,
            wafers: self.wafers,
            devices: self.devices,
            time_block: self.time_block.0,
            profile: self.profile,
        };
        config.validate()?;
        Ok(config)
    }
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct PredictArgs {
    #[arg(default_value = "heat5", help = kernel_help())]
    pub kernel: String,
    /// Wafers (nodes) of the cluster, WxH
    #[arg(long, default_value = "8x8", value_parser = parse_pes)]
    pub wafers: (u32, u32),
    /// PEs per wafer: cs3 (744x1116), square (720x720) or WxH
    #[arg(long, default_value = "cs3")]
    pub pes: String,
    /// Grid points per PE side
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=crate::wafer::MAX_N as i64))]
    pub n: u32,
    /// dt (domain translation, the default), static, or ghosts:G (overlapping ghosts of width G)
    #[arg(long)]
    pub method: Option<String>,
    /// Clock in GHz (the paper: 0.75 and 1.2)
    #[arg(long)]
    pub clock_ghz: Option<f64>,
    /// Inter-wafer link latency in microseconds (default 10)
    #[arg(long)]
    pub link_latency_us: Option<f64>,
    /// Bandwidth per wafer side and direction in Gbit/s (default 300)
    #[arg(long)]
    pub link_bandwidth_gbps: Option<f64>,
    /// Any other parameter, KEY=VALUE (a0, a1, a2, hop_latency_ns, link_capacity, node_power_kw, ...)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// A file of KEY = VALUE lines, applied before the flags
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,
    /// Simulate every wafer instead of one wafer linked to itself (slow for large clusters)
    #[arg(long)]
    pub full: bool,
    /// Give up on a steady state after this many steps
    #[arg(long, default_value_t = 20_000)]
    pub max_steps: u64,
    /// Run the clocks on cpu or gpu
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Write sampled clocks as .npy, shape (wafers_x, wafers_y, pes_x/stride, pes_y/stride,
    /// samples), of the simulated wafers (1 x 1 without --full)
    #[arg(long, value_name = "FILE")]
    pub telemetry: Option<PathBuf>,
    /// Sample the clocks every K steps
    #[arg(long, default_value_t = 16)]
    pub sample_every: u64,
    /// Sample every S-th PE in each direction
    #[arg(long, default_value_t = 32)]
    pub sample_stride: u32,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub json: JsonArgs,
}

impl PredictArgs {
    /// The validated command.
    pub fn command(&self) -> Result<PredictCommand> {
        let model = self.config()?;
        let gpu = match self.device.as_str() {
            "gpu" => Some(self.engine.request()?),
            _ => None,
        };
        Ok(PredictCommand {
            model,
            gpu,
            telemetry: self.telemetry.clone(),
        })
    }

    /// The validated model configuration.
    fn config(&self) -> Result<PredictConfig> {
        let kernel = KernelKind::parse(&self.kernel)?;
        let mut params = TimingParams::paper(kernel);
        if let Some(path) = &self.params {
            params.load(path)?;
        }
        let flags = [
            ("clock_ghz", self.clock_ghz),
            ("link_latency_us", self.link_latency_us),
            ("link_bandwidth_gbps", self.link_bandwidth_gbps),
        ];
        for (key, value) in flags {
            if let Some(v) = value {
                params.set(key, &v.to_string())?;
            }
        }
        if let Some(method) = &self.method {
            params.set("method", method)?;
        }
        for pair in &self.set {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| invalid!("--set '{pair}' is not KEY=VALUE"))?;
            params.set(key.trim(), value)?;
        }
        params.validate()?;
        let (pes_x, pes_y) = parse_node(&self.pes)?;
        let shape = ClusterShape {
            wafers_x: self.wafers.0,
            wafers_y: self.wafers.1,
            pes_x,
            pes_y,
            n: self.n,
            p: kernel.spec().shift_per_step(),
        };
        shape.validate()?;
        let at_peak =
            kernel.flops_per_point() as f64 * (self.n as f64).powi(2) / params.peak_flops_per_cycle;
        if params.cost.cycles(self.n) < at_peak {
            return Err(invalid!(
                "the cost model gives f({n}) = {:.0} cycles per step, fewer than the FLOPs need at peak ({at_peak:.0}): allowed a model at or below peak (raise a0, a1, a2 or lower peak_flops_per_cycle)",
                params.cost.cycles(self.n),
                n = self.n
            ));
        }
        if self.max_steps == 0 {
            return Err(invalid!("max-steps = 0: allowed 1 or more"));
        }
        if !matches!(self.device.as_str(), "cpu" | "gpu") {
            return Err(invalid!(
                "unknown device '{}': allowed cpu, gpu",
                self.device
            ));
        }
        let telemetry = match &self.telemetry {
            None => None,
            Some(_) if self.sample_every == 0 || self.sample_stride == 0 => {
                return Err(invalid!(
                    "sample-every = {} and sample-stride = {} must both be >= 1",
                    self.sample_every,
                    self.sample_stride
                ))
            }
            Some(_) => {
                let wafers = match self.full {
                    true => shape.wafer_count() as u64,
                    false => 1,
                };
                let per_sample = wafers
                    * shape.pes_x.div_ceil(self.sample_stride) as u64
                    * shape.pes_y.div_ceil(self.sample_stride) as u64;
                let samples = self.max_steps / self.sample_every + 1;
                // The samples, then their flattened copy, 8 bytes each.
                let bytes = per_sample.saturating_mul(samples).saturating_mul(16);
                crate::memory::check_host_memory(
                    "the telemetry",
                    bytes,
                    "sample less often (--sample-every), fewer PEs (--sample-stride) or fewer steps (--max-steps)",
                )?;
                Some(TelemetryPlan {
                    every: self.sample_every,
                    stride: self.sample_stride,
                })
            }
        };
        Ok(PredictConfig {
            params,
            shape,
            full: self.full,
            max_steps: self.max_steps,
            telemetry,
        })
    }
}
