//! `wafer-emu run`: its arguments, the kernels' flags, and the validated `RunConfig`.

use std::path::PathBuf;

use clap::Args;

use crate::commands::run::RunConfig;
use crate::kernels::swe::{SweConfig, Walls};
use crate::kernels::{HeatCoefficients, KernelKind, KernelOptions, OptionGroup};
use crate::model::Problem;
use crate::wafer::WaferGeometry;
use crate::{invalid, Result};

use super::args::{
    bathymetry, kernel_help, parse_colour_range, parse_pair, parse_pes, renamed, ClusterArgs,
    ColourRange, EngineArgs, JsonArgs,
};

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
    pub snapshot_every_steps: Option<u64>,
    /// Write a checkpoint (every field and the step) into OUT/checkpoint every K steps; on
    /// SIGINT or SIGTERM the run writes one and stops
    #[arg(long, value_name = "K")]
    pub checkpoint_every_steps: Option<u64>,
    #[arg(long, hide = true)]
    pub snapshot_every: Option<String>,
    #[arg(long, hide = true)]
    pub checkpoint_every: Option<String>,
    /// Continue the run whose folder is DIR from its checkpoint, to --steps, bit for bit as if
    /// it had not stopped (the same command line otherwise; DIR is the output folder, whose
    /// files stay; --out is not used)
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Colour range LO,HI of every picture (the same scale across snapshots), or auto: each
    /// picture its own
    #[arg(long, value_name = "LO,HI", default_value = "auto", value_parser = parse_colour_range, allow_hyphen_values = true)]
    pub range: ColourRange,
    /// What runs: the emulated wafers with Table 3's explicit sendrecv and compute dispatches
    /// (wafer), the same wafers with each stage one dispatch of workgroups that are blocks of
    /// PEs (fused; GPU only, the explicit dispatches where one PE's points do not fit a
    /// workgroup), the plain global-grid kernel (global: no PEs, no translation), or the
    /// faster emulated engine (auto: time blocks on the CPU backend for every kernel, of 15
    /// steps for heat5, heat9 and wave, 9 for swe and 5 for swe-c, shorter where the wafer is too
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

impl RunArgs {
    /// The validated configuration.
    pub fn config(&self) -> Result<RunConfig> {
        for (old, value) in [
            ("snapshot-every", &self.snapshot_every),
            ("checkpoint-every", &self.checkpoint_every),
        ] {
            if let Some(k) = value {
                let new = format!("--{old}-steps {k} (run counts steps)");
                return Err(renamed(old, k, &new));
            }
        }
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
        if self.snapshot_every_steps == Some(0) {
            return Err(invalid!(
                "snapshot-every-steps = 0: allowed 1 or more steps"
            ));
        }
        let mut engine = self.engine.request()?;
        engine.placement = placement;
        Ok(RunConfig {
            problem,
            steps: self.steps,
            engine,
            force: self.force,
            range: self.range.0.map(|(lo, hi)| (lo as f32, hi as f32)),
            engine_kind: self.cluster.engine_kind(&self.engine_kind)?,
            out: match (&self.resume, self.no_output) {
                (Some(_), true) => {
                    return Err(invalid!(
                        "--resume continues the run in its output folder: it cannot go with --no-output"
                    ))
                }
                (Some(dir), false) => Some(dir.clone()),
                (None, no_output) => (!no_output).then(|| self.out.clone()),
            },
            snapshot_every: self.snapshot_every_steps,
            check: self.check,
            checkpoint_every: match self.checkpoint_every_steps {
                Some(0) => {
                    return Err(invalid!("checkpoint-every-steps = 0: allowed 1 or more steps"))
                }
                Some(_) if self.no_output => {
                    return Err(invalid!(
                        "--checkpoint-every-steps writes into the output folder: it cannot go with --no-output"
                    ))
                }
                k => k,
            },
            resume: self.resume.is_some(),
        })
    }
}
