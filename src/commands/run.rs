//! `wafer-emu run`: advance a problem on the chosen engine, with snapshots in global
//! coordinates, an optional bit-for-bit check against the global kernel, and a summary.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::checkpoint;
use crate::cluster::{LinkStats, LinkTable};
use crate::engine::{self, EngineKind, EngineRequest};
use crate::field::GlobalField;
use crate::kernels::swe::ShallowWater;
use crate::model::{Problem, Simulator};
use crate::timing::{self, ClusterShape, PredictConfig, Prediction, TimingParams};
use crate::tsunami::netcdf::{write_surface, Attribute};
use crate::{invalid, Error, Result};

/// A validated `run`.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub problem: Problem,
    pub steps: u64,
    pub engine: EngineRequest,
    /// The emulated wafer, or the plain global-grid kernel.
    pub engine_kind: EngineKind,
    /// Output folder; `None` writes nothing.
    pub out: Option<PathBuf>,
    /// Also write the field every this many steps.
    pub snapshot_every: Option<u64>,
    /// Also run the other engine (global kernel for the wafer, and back) and compare bits.
    pub check: bool,
    /// Write into an output folder that already holds results.
    pub force: bool,
    /// A fixed colour range for every snapshot's pictures.
    pub range: Option<(f32, f32)>,
    /// Write a checkpoint into `out/checkpoint` every this many steps.
    pub checkpoint_every: Option<u64>,
    /// Continue from the checkpoint in `out` (the step it was taken at, its fields).
    pub resume: bool,
}

/// The picture of field `f` at `step`: the kernel's, titled with the kernel, field, step and
/// model time, with grid-point axes where the kernel gives none and `--range` applied.
fn picture(config: &RunConfig, f: usize, field: &GlobalField, step: u64) -> crate::render::Picture {
    let kernel = &config.problem.kernel;
    let mut picture = kernel.picture(f, field);
    let mut title = format!(
        "{} {}, step {step}",
        kernel.spec().name,
        kernel.spec().fields[f]
    );
    if let Some(seconds) = kernel.seconds_per_step() {
        title += &format!(", t = {:.2} h", seconds * step as f64 / 3600.0);
    }
    picture.title = Some(title);
    picture
        .axes
        .get_or_insert_with(|| crate::render::Axes::grid(field.nx, field.ny));
    if let Some(range) = config.range {
        picture.range = range;
    }
    picture
}

/// How the bit-for-bit check came out.
#[derive(Clone, Debug)]
pub struct CheckResult {
    pub reference: String,
    pub differing_points: usize,
}

/// What a run did, printed as its summary.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub problem: Problem,
    pub steps: u64,
    /// What ran, as decided ([`engine::plan`]) and in words.
    pub plan: engine::EnginePlan,
    pub engine: String,
    /// Wall time spent stepping (no setup, readback or output).
    pub stepping: Duration,
    /// Smallest and largest value of every state field at the end.
    pub final_field_range: Vec<(f32, f32)>,
    pub outputs: Vec<PathBuf>,
    pub check: Option<CheckResult>,
    /// What the timing model says the real wafer would do (`None` for wafers too large to
    /// model quickly here; `wafer-emu predict` models any size).
    pub emulated: Option<Prediction>,
    /// What each link carried (engines that emulate links).
    pub links: Option<Vec<LinkStats>>,
    /// Shallow water's total energy (J) and volume (m^3) at the run's start and end.
    pub conserved: Option<Conserved>,
}

/// What a shallow-water run keeps: energy and volume, at its start and its end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Conserved {
    pub energy_j: [f64; 2],
    pub volume_m3: [f64; 2],
}

impl Conserved {
    /// The energy and volume of `state`, where `problem` is shallow water.
    fn of(problem: &Problem, state: &[GlobalField]) -> Option<(f64, f64)> {
        let swe = problem.kernel.shallow_water()?;
        Some((swe.energy(state), swe.volume(state)))
    }

    /// The energy's change over the run relative to its start (none from rest).
    pub fn energy_drift(&self) -> Option<f64> {
        let [start, end] = self.energy_j;
        (start > 0.0).then(|| (end - start) / start)
    }
}

/// Largest wafer (in PEs) whose timing `run` models alongside its values.
const MAX_TIMED_PES: usize = 1 << 20;

/// The timing model of the run's own cluster: domain translation, the paper's parameters for
/// its kernel.
pub(crate) fn emulated_timing(problem: &Problem) -> Result<Option<Prediction>> {
    let g = problem.cluster.wafer;
    if g.pe_count() > MAX_TIMED_PES {
        return Ok(None);
    }
    let shape = ClusterShape {
        wafers_x: problem.cluster.wafers_x,
        wafers_y: problem.cluster.wafers_y,
        pes_x: g.pes_x,
        pes_y: g.pes_y,
        n: g.n,
        p: problem.spec().shift_per_step(),
    };
    let params = TimingParams::paper(problem.spec().kind);
    let config = PredictConfig::shortcut(params, shape, 4096);
    Ok(Some(timing::predict(&config, None)?))
}

/// Progress reports per run, at most. The chunks of steps between them depend on the step
/// count only, so that the link statistics (every wafer is held at the end of each chunk)
/// are the same on every run and every engine, and hold whole time blocks.
const PROGRESS_REPORTS: u64 = 100;

/// Runs the configuration; `on_warning` gets warnings (software adapter, CPU fallback) before
/// the work starts and `on_progress(done, total)` follows the stepping.
pub fn run(
    config: &RunConfig,
    on_warning: &mut dyn FnMut(&str),
    on_progress: &mut dyn FnMut(u64, u64),
) -> Result<RunReport> {
    if let Some(dir) = &config.out {
        crate::io::check_output_dir(dir, config.force || config.resume)?;
    }
    let (offset, resumed) = resume_point(config)?;
    super::watch_signals();
    // A cluster that cannot progress fails now, whichever engine runs first.
    let problem = resumed.as_ref().unwrap_or(&config.problem);
    crate::cluster::Scheduler::new(problem.cluster, &problem.link_specs).preflight()?;
    let (ctx, warnings) = config.engine.open_for(config.problem.spec())?;
    warnings.iter().for_each(|w| on_warning(w));
    if ctx.is_none() && config.engine.placement.devices > 1 {
        on_warning("warning: the CPU backend runs every wafer on one device: --devices is ignored");
    }
    if ctx.is_none() && config.engine_kind == EngineKind::Fused {
        on_warning("warning: the CPU backend has no fused engine: --engine fused runs its wafer");
    }
    if config.engine_kind == EngineKind::Global && config.engine.placement.time_block > 1 {
        on_warning("warning: the global kernel has no wafers to block: --time-block is ignored");
    }
    // Its snapshots and checkpoints read the state too, but their intervals are left to the
    // engine: a block that does not fit between two of them runs as single steps.
    let run = engine::RunLength::whole(config.steps - offset);
    let engine = (&config.engine.placement, run);
    let request = (&config.engine, config.engine_kind);
    let plan = engine::plan_for(request, ctx.as_ref(), problem, run, on_warning)?;
    let mut sim = engine::simulator(&plan, ctx.as_ref(), problem, engine.0)?;
    // The check's engine is opened now, so that one that does not fit is refused before any
    // work or file; both are held at the end anyway, to compare their states.
    let reference = match config.check {
        true => Some(
            engine::plan(config.engine_kind.other(), ctx.as_ref(), problem, engine)
                .and_then(|plan| engine::simulator(&plan, ctx.as_ref(), problem, engine.0))
                .map_err(|e| match e {
                    Error::TooLarge(why) => {
                        Error::TooLarge(format!("--check: {why}, or drop --check"))
                    }
                    e => e,
                })?,
        ),
        false => None,
    };
    let _claim = (config.out.as_deref())
        .map(|dir| checkpoint::claim(dir, config.resume))
        .transpose()?;
    let start = Conserved::of(problem, &problem.initial_state());
    let mut outputs = vec![];
    let (state, stepping) = step_through(
        config,
        (problem, offset),
        sim.as_mut(),
        &mut outputs,
        on_progress,
    )?;
    let check = reference
        .map(|reference| check_against(reference, config.steps - offset, &state))
        .transpose()?;
    let report = RunReport {
        problem: problem.clone(),
        steps: config.steps - offset,
        plan,
        engine: sim.describe(),
        stepping,
        final_field_range: state.iter().map(GlobalField::range).collect(),
        outputs,
        check,
        emulated: emulated_timing(problem)?,
        links: sim.link_stats(),
        conserved: start
            .zip(Conserved::of(problem, &state))
            .map(|((e0, v0), (e1, v1))| Conserved {
                energy_j: [e0, e1],
                volume_m3: [v0, v1],
            }),
    };
    if let Some(dir) = &config.out {
        let path = dir.join("summary.txt");
        crate::io::write_atomic(&path, format!("{report:#}").as_bytes())?;
    }
    Ok(report)
}

/// A rank other than 0 under mpirun: the same problem and plan as rank 0's, its own wafers
/// stepped as rank 0 orders; it writes nothing.
pub fn follow(config: &RunConfig) -> Result<()> {
    let (offset, resumed) = resume_point(config)?;
    let problem = resumed.as_ref().unwrap_or(&config.problem);
    let run = engine::RunLength::whole(config.steps - offset);
    let plan = engine::spread_plan(&config.engine, config.engine_kind, problem, run)?;
    engine::follow(&plan, problem, &config.engine.placement)
}

/// The step and the problem to resume from: the checkpoint's with `--resume`, else step 0
/// and none (the config's own problem); an error where the checkpoint lies past `--steps`.
fn resume_point(config: &RunConfig) -> Result<(u64, Option<Problem>)> {
    let Some(dir) = config.out.as_ref().filter(|_| config.resume) else {
        return Ok((0, None));
    };
    let (step, resumed) = checkpoint::resume(dir, (&config.problem, ""))?;
    if step > config.steps {
        return Err(invalid!(
            "the checkpoint is at step {step}, beyond --steps {}: allowed --steps >= {step}",
            config.steps
        ));
    }
    Ok((step, Some(resumed)))
}

/// Steps `sim` (at step `offset` of `problem`) to the config's last step, reading its state
/// for the snapshots, the checkpoints and the end; adds each snapshot's files to `outputs`.
/// The last state, and the time spent stepping.
fn step_through(
    config: &RunConfig,
    (problem, offset): (&Problem, u64),
    sim: &mut dyn Simulator,
    outputs: &mut Vec<PathBuf>,
    on_progress: &mut dyn FnMut(u64, u64),
) -> Result<(Vec<GlobalField>, Duration)> {
    let mut stepping = Duration::ZERO;
    // Whole time blocks of any length per chunk: a block runs only inside one `advance`.
    let chunk = config
        .steps
        .div_ceil(PROGRESS_REPORTS)
        .next_multiple_of(crate::blocking::WHOLE_BLOCKS);
    // A kernel that can blow up is read back and checked every few steps too.
    let mut watch = problem
        .kernel
        .shallow_water()
        .map(|_| Watch::new(sim.time_block(), offset, chunk));
    loop {
        let step = sim.step() + offset;
        let last = step == config.steps;
        let every = |k: Option<u64>| k.is_some_and(|k| step.is_multiple_of(k));
        let stop = super::stop_requested() && !last;
        let checkpointing = config.checkpoint_every.is_some();
        let checkpoint =
            (stop && checkpointing) || (every(config.checkpoint_every) && step > offset);
        let snapshot = every(config.snapshot_every) && config.out.is_some();
        // One read-back serves the check, the checkpoint, the snapshot and the last step.
        let watched = watch.as_ref().is_some_and(|w| w.due(step));
        let reading = Instant::now();
        let state = match last || snapshot || checkpoint || watched {
            true => Some(sim.state()?),
            false => None,
        };
        // A blown-up state never replaces the last sound checkpoint; its snapshot is kept.
        if let Some(state) = &state {
            if let Err(blown) = problem.kernel.check_state(state, step) {
                if let Some(dir) = config.out.as_ref().filter(|_| snapshot || last) {
                    outputs.extend(write_snapshot(config, (dir, problem), state, step)?);
                }
                return Err(blown);
            }
        }
        if let Some(watch) = watch.as_mut().filter(|_| state.is_some()) {
            let per_step = stepping.as_secs_f64() / sim.step().max(1) as f64;
            watch.checked(step, reading.elapsed(), per_step);
        }
        if let (Some(dir), Some(state), true) = (&config.out, &state, checkpoint) {
            checkpoint::write(dir, (problem, ""), step, state, &[])?;
        }
        if stop {
            return Err(match config.out.as_ref().filter(|_| checkpointing) {
                Some(dir) => checkpoint::stopped(dir, step),
                None => super::stopped_unsaved(step),
            });
        }
        if let Some(state) = state.filter(|_| last || snapshot) {
            if let Some(dir) = &config.out {
                outputs.extend(write_snapshot(config, (dir, problem), &state, step)?);
            }
            if last {
                return Ok((state, stepping));
            }
        }
        let next = |every: Option<u64>| every.map_or(config.steps, |k| (step / k + 1) * k);
        let until = next(config.snapshot_every)
            .min(next(config.checkpoint_every))
            .min(watch.as_ref().map_or(config.steps, |w| w.next))
            .min(config.steps);
        let started = Instant::now();
        sim.advance(chunk.min(until - step))?;
        stepping += started.elapsed();
        on_progress(sim.step() + offset, config.steps);
    }
}

/// Steps between two checks per check's worth of time: a check costs about 1/20 of the stepping.
const CHECK_SHARE: f64 = 20.0;

/// When a run of a kernel that can blow up reads its state back to check it: every few steps,
/// as many as keep a check's cost near a twentieth of the steps' between two checks, in whole time
/// blocks, at most a progress chunk apart.
struct Watch {
    block: u64,
    most: u64,
    /// The step of the next check.
    next: u64,
}

impl Watch {
    fn new(block: u32, from: u64, most: u64) -> Self {
        let block = u64::from(block.max(1));
        Self {
            block,
            most: most.max(block),
            next: from + block,
        }
    }

    fn due(&self, step: u64) -> bool {
        step >= self.next
    }

    /// After a check at `step` that took `check`, with steps of `per_step` seconds each (0
    /// before the first step: then the next check comes after one block).
    fn checked(&mut self, step: u64, check: Duration, per_step: f64) {
        let ratio = match per_step > 0.0 {
            true => CHECK_SHARE * check.as_secs_f64() / per_step,
            false => 0.0,
        };
        let every = (ratio.ceil() as u64).next_multiple_of(self.block);
        self.next = step + every.clamp(self.block, self.most);
    }
}

/// Writes every field of `state` at `step` into `dir` (.npy, and the pictures asked for).
fn write_snapshot(
    config: &RunConfig,
    (dir, problem): (&Path, &Problem),
    state: &[GlobalField],
    step: u64,
) -> Result<Vec<PathBuf>> {
    let spec = problem.spec();
    let mut files = vec![];
    for (f, (name, field)) in spec.fields.iter().zip(state).enumerate() {
        let stem = format!("{}_{name}_step{step:08}", spec.name);
        let picture = picture(config, f, field, step);
        files.extend(crate::render::write_field(dir, &stem, field, &picture)?);
    }
    if let Some(swe) = problem.kernel.shallow_water() {
        let path = dir.join(format!("{}_step{step:08}.nc", spec.name));
        write_surface_netcdf(swe, &path, state, step)?;
        files.push(path);
    }
    Ok(files)
}

/// Shallow water's state as NetCDF: `eta`, `u`, `v` at the centres over their latitudes and
/// longitudes (NaN on land), as the tsunami writes them.
fn write_surface_netcdf(
    swe: &dyn ShallowWater,
    path: &Path,
    state: &[GlobalField],
    step: u64,
) -> Result<()> {
    let sphere = swe.sphere();
    let grid = sphere.grid();
    let lat: Vec<f64> = (0..grid.y).map(|y| sphere.lat_lon(0, y).0).collect();
    let lon: Vec<f64> = (0..grid.x).map(|x| sphere.lat_lon(x, 0).1).collect();
    let water = |f: &GlobalField| {
        GlobalField::from_fn(f.nx, f.ny, |x, y| match sphere.is_wet(x, y) {
            true => f.at(x, y),
            false => f32::NAN,
        })
    };
    let [eta, u, v] = swe.at_centres(state).map(|f| water(&f));
    let attributes: Vec<(String, Attribute)> = swe
        .parameters()
        .into_iter()
        .map(|(k, v)| {
            let value = match v.as_f64() {
                Some(x) => Attribute::Number(x),
                None => Attribute::Text(crate::kernels::parameter_text(&v)),
            };
            (k.to_string(), value)
        })
        .collect();
    let time = step as f64 * swe.dt();
    write_surface(path, (&lat, &lon), time, [&eta, &u, &v], &attributes)
}

/// Runs the same problem on the other engine and counts the points whose bits differ.
fn check_against(
    mut reference: Box<dyn Simulator>,
    steps: u64,
    state: &[GlobalField],
) -> Result<CheckResult> {
    reference.advance(steps)?;
    let other = reference.state()?;
    let differing_points = state
        .iter()
        .zip(&other)
        .flat_map(|(a, b)| a.data.iter().zip(&b.data))
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    Ok(CheckResult {
        reference: reference.describe(),
        differing_points,
    })
}

impl RunReport {
    /// The report as JSON: every parameter, the run's shape and speed, the check, every
    /// link's statistics and the emulated machine's timing.
    pub fn json(&self) -> serde_json::Value {
        let p = &self.problem;
        let c = &p.cluster;
        serde_json::json!({
            "command": "run",
            "schema": 1,
            "version": env!("CARGO_PKG_VERSION"),
            "kernel": p.spec().name,
            "parameters": p.kernel.parameters().into_iter().map(|(k, v)| (k.to_string(), v)).collect::<serde_json::Map<_, _>>(),
            "wafers": [c.wafers_x, c.wafers_y],
            "pes_per_wafer": [c.wafer.pes_x, c.wafer.pes_y],
            "n": c.wafer.n,
            "w": c.wafer.w,
            "grid": p.geometry.global_size(),
            "steps": self.steps,
            "plan": self.plan,
            "ranks": crate::engine::cpu::ranks::world().map_or(1, |w| w.size),
            "engine_summary": self.engine,
            "stepping_seconds": self.stepping.as_secs_f64(),
            "updates_per_second": self.updates_per_second(),
            "field_range": self.problem.spec().fields.iter().zip(&self.final_field_range).map(|(name, (lo, hi))| (name.to_string(), serde_json::json!([lo, hi]))).collect::<serde_json::Map<_, _>>(),
            "energy_j": self.conserved.map(|c| c.energy_j),
            "energy_drift": self.conserved.and_then(|c| c.energy_drift()),
            "volume_m3": self.conserved.map(|c| c.volume_m3),
            "volume_drift_m3": self.conserved.map(|c| c.volume_m3[1] - c.volume_m3[0]),
            "check": self.check.as_ref().map(|c| serde_json::json!({
                "reference": c.reference,
                "differing_points": c.differing_points,
            })),
            "links": self.links,
            "emulated": self.emulated.as_ref().map(|e| e.json()),
        })
    }

    /// Point updates per second of wall time while stepping.
    pub fn updates_per_second(&self) -> f64 {
        (self.problem.geometry.points() * self.steps) as f64
            / self.stepping.as_secs_f64().max(1e-12)
    }
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = &self.problem.geometry;
        let glam::UVec2 { x: nx, y: ny } = g.global_size();
        let secs = self.stepping.as_secs_f64();
        let flops = self.problem.flops_per_step() as f64 * self.steps as f64;
        let spec = self.problem.spec();
        writeln!(
            f,
            "kernel        {} ({} FLOPs per point and step, {} stage(s))",
            spec.name,
            spec.flops_per_point(),
            spec.stages.len()
        )?;
        for (key, value) in self.problem.kernel.parameters() {
            writeln!(f, "  {key:<13} {}", crate::kernels::parameter_text(&value))?;
        }
        if let Some(dt) = self.problem.kernel.seconds_per_step() {
            writeln!(
                f,
                "model time    {:.1} s ({:.2} h)",
                dt * self.steps as f64,
                dt * self.steps as f64 / 3600.0
            )?;
        }
        let c = &self.problem.cluster;
        writeln!(
            f,
            "cluster       {}x{} wafers of {}x{} PEs, n = {}, w = {} (SRAM block {}x{})",
            c.wafers_x,
            c.wafers_y,
            c.wafer.pes_x,
            c.wafer.pes_y,
            g.n,
            g.w,
            g.stride(),
            g.stride()
        )?;
        writeln!(f, "global grid   {nx} x {ny} = {} points", g.points())?;
        writeln!(f, "steps         {}", self.steps)?;
        writeln!(f, "engine        {}", self.engine)?;
        writeln!(f, "plan          {}", self.plan.line())?;
        writeln!(
            f,
            "wall time     {secs:.3} s stepping (emulator wall clock, not emulated time)"
        )?;
        writeln!(
            f,
            "updates/s     {:.4e} point-updates/s",
            self.updates_per_second()
        )?;
        writeln!(
            f,
            "FLOPs         {flops:.4e} executed, {:.4e} FLOP/s",
            flops / secs.max(1e-12)
        )?;
        for (name, (lo, hi)) in spec.fields.iter().zip(&self.final_field_range) {
            match lo <= hi {
                true => writeln!(f, "range of {name:<5}[{lo:.6e}, {hi:.6e}]")?,
                false => writeln!(f, "range of {name:<5}none: every value is NaN")?,
            }
        }
        if let Some(c) = &self.conserved {
            let energy = c
                .energy_drift()
                .map_or("from rest".into(), |d| format!("{d:+.3e}"));
            writeln!(
                f,
                "conserved     energy {:.4e} J ({energy}), volume {:.4e} m^3 ({:+.3e} m^3)",
                c.energy_j[1],
                c.volume_m3[1],
                c.volume_m3[1] - c.volume_m3[0]
            )?;
        }
        if let Some(check) = &self.check {
            let verdict = match check.differing_points {
                0 => "bit-identical".to_string(),
                k => format!("DIFFERS at {k} points"),
            };
            writeln!(f, "check         {verdict} to the {}", check.reference)?;
        }
        if let Some(links) = &self.links {
            writeln!(f, "links         (rounds: the schedule's logical clock)")?;
            // The same formatter, so that `{:#}` lists every link.
            fmt::Display::fmt(&LinkTable(links), f)?;
        }
        if let Some(prediction) = &self.emulated {
            write!(f, "\n{prediction}\n")?;
        }
        for path in &self.outputs {
            writeln!(f, "wrote         {}", path.display())?;
        }
        Ok(())
    }
}
