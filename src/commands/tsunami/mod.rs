//! `wafer-emu tsunami`: the asteroid impact of the paper's section 5.2.3 on real relief, on the
//! emulated wafer or cluster of any adapter or the CPU backend. It writes PNG frames (global
//! and a region), maximum-amplitude and first-arrival maps, gauge records and a CF NetCDF
//! file, and prints the emulated machine's time for the same run beside the wall time.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::UVec2;

use super::checkpoint;
use crate::blocking;
use crate::engine::{self, EngineKind, EngineRequest};
use crate::field::GlobalField;
use crate::kernels::swe::{check_centres, ShallowWater};
use crate::kernels::Kernel;
use crate::model::{Problem, Simulator};
use crate::tsunami::netcdf::TsunamiFile;
use crate::tsunami::{Gauge, Impact, Tracker, MEGATON_TNT};
use crate::{invalid, Result};

mod outputs;
mod pictures;

use outputs::{exact_arrivals, netcdf_header, netcdf_maps, write_outputs};
use pictures::{water_only, write_frames};

/// A box of latitudes and longitudes (degrees) shown in its own frames.
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub name: String,
    pub south: f64,
    pub north: f64,
    pub west: f64,
    pub east: f64,
}

impl Region {
    /// `sf-bay` (the approaches to San Francisco Bay, like Figure 11) or
    /// `SOUTH,NORTH,WEST,EAST`.
    pub fn parse(s: &str) -> Result<Self> {
        if s == "sf-bay" {
            return Ok(Self {
                name: "sf-bay".into(),
                south: 35.5,
                north: 39.5,
                west: -126.0,
                east: -121.0,
            });
        }
        let bad = || {
            invalid!("region '{s}': allowed sf-bay or SOUTH,NORTH,WEST,EAST in degrees with SOUTH < NORTH and WEST < EAST")
        };
        let v: Vec<f64> = s
            .split(',')
            .map(|p| p.trim().parse().map_err(|_| bad()))
            .collect::<Result<_>>()?;
        let [south, north, west, east] = v[..] else {
            return Err(bad());
        };
        if !(south < north && west < east && east - west <= 360.0) {
            return Err(bad());
        }
        Ok(Self {
            name: "region".into(),
            south,
            north,
            west,
            east,
        })
    }
}

/// A validated `tsunami`.
#[derive(Clone, Debug)]
pub struct TsunamiConfig {
    pub impact: Impact,
    /// Grid spacing in longitude, degrees.
    pub resolution: f64,
    pub hours: f64,
    pub swe: Arc<dyn ShallowWater>,
    pub problem: Problem,
    pub engine: EngineRequest,
    /// What runs (`auto`: the CPU backend's time blocks fitted between two samples).
    pub engine_kind: EngineKind,
    pub out: PathBuf,
    /// Minutes of model time between frames.
    pub frame_minutes: f64,
    /// Seconds of model time between samples of the gauges and maps.
    pub sample_seconds: f64,
    /// The frames' colour range is `-eta_range ..= eta_range` metres; `None`: each frame's
    /// own (the 99.5th percentile of `|eta|` where the wave has arrived).
    pub eta_range: Option<f32>,
    /// How far (m) a gauge on land may move to the nearest water; `None`: two cells.
    pub gauge_radius: Option<f64>,
    pub region: Option<Region>,
    pub gauges: Vec<Gauge>,
    /// `|eta|` in metres that counts as arrival.
    pub threshold: f32,
    /// Also write the frames into the NetCDF file.
    pub netcdf_frames: bool,
    /// Write into an output folder that already holds results.
    pub force: bool,
    /// Minutes of model time between checkpoints.
    pub checkpoint_every: Option<f64>,
    /// Continue from the checkpoint in `out`.
    pub resume: bool,
}

impl TsunamiConfig {
    /// The settings a checkpoint must share with the run that continues it, beside the
    /// problem: all but the model hours, the output folder and where it runs.
    fn checkpoint_key(&self) -> String {
        format!(
            "{:?} {} {} {} {:?} {:?} {:?} {} {} {:?}",
            self.impact,
            self.resolution,
            self.frame_minutes,
            self.sample_seconds,
            self.eta_range,
            self.region,
            self.gauges,
            self.threshold,
            self.netcdf_frames,
            self.gauge_radius,
        )
    }

    /// Steps nearest to `seconds` of model time, at least one.
    fn steps_in(&self, seconds: f64) -> u64 {
        ((seconds / self.swe.dt()).round() as u64).max(1)
    }

    /// Steps between two samples of the gauges and the tracker.
    fn sample_every(&self) -> u64 {
        self.steps_in(self.sample_seconds)
    }

    /// Seconds after the impact at `step`: whole sampling intervals exactly where the step
    /// is a sample's (the time step divides the interval).
    fn time_of(&self, step: u64) -> f64 {
        let every = self.sample_every();
        match step % every {
            0 => (step / every) as f64 * self.sample_seconds,
            _ => step as f64 * self.swe.dt(),
        }
    }

    /// Samples from the impact to `steps`.
    fn samples(&self, steps: u64) -> usize {
        (steps / self.sample_every() + 1) as usize
    }
}

/// The grid of a resolution: `nx` from the spacing, `ny` rows of about the same Mercator size
/// between the cut latitudes, both multiples of `n`.
pub fn grid_for(resolution: f64, (south, north): (f64, f64), n: u32) -> Result<UVec2> {
    if !(1.0 / 60.0 - 1e-9..=10.0).contains(&resolution) {
        return Err(invalid!(
            "resolution {resolution} degrees: allowed 1 arc-minute (0.0167) to 10 degrees"
        ));
    }
    let nx = (360.0 / resolution).round() as u32;
    if !nx.is_multiple_of(n) {
        return Err(invalid!(
            "resolution {resolution} degrees gives {nx} columns, not a multiple of n = {n}: choose another --n or a resolution that divides 360/n degrees"
        ));
    }
    let merc = |lat: f64| {
        (std::f64::consts::FRAC_PI_4 + lat.to_radians() / 2.0)
            .tan()
            .ln()
    };
    let rows = (merc(north) - merc(south)) / (2.0 * std::f64::consts::PI / nx as f64);
    let ny = ((rows / n as f64).round() as u32).max(1) * n;
    Ok(UVec2::new(nx, ny))
}

/// What a tsunami run did.
#[derive(Clone, Debug)]
pub struct TsunamiReport {
    pub lines: Vec<(String, String)>,
    /// The scenario, grid, steps, speed and emulated time as data.
    pub data: serde_json::Value,
    /// What ran ([`engine::plan`]).
    pub plan: engine::EnginePlan,
    pub files: Vec<PathBuf>,
    pub tracker: Tracker,
    /// On a flat ocean, each gauge's exact first arrival.
    pub exact: Option<Vec<Option<f64>>>,
    /// The state at the end.
    pub state: Vec<GlobalField>,
}

impl TsunamiReport {
    /// The report as JSON: the summary lines, every gauge's arrival and maximum, the files.
    pub fn json(&self) -> serde_json::Value {
        let t = &self.tracker;
        let mut json = serde_json::json!({
            "command": "tsunami",
            "schema": 1,
            "version": env!("CARGO_PKG_VERSION"),
            "summary": self.lines.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "plan": self.plan,
            "ranks": crate::engine::cpu::ranks::world().map_or(1, |w| w.size),
            "threshold_m": t.threshold,
            "gauges": t.gauges.iter().map(|r| serde_json::json!({
                "name": r.gauge.name,
                "lat_deg": r.gauge.lat,
                "lon_deg": r.gauge.lon,
                "depth_m": r.depth,
                "arrival_s": r.arrival(t.threshold),
                "max_amplitude_m": r.max_amplitude(),
            })).collect::<Vec<_>>(),
            "exact_arrivals_s": self.exact,
            "files": self.files,
        });
        if let (Some(json), Some(data)) = (json.as_object_mut(), self.data.as_object()) {
            json.extend(data.clone());
        }
        json
    }
}

impl fmt::Display for TsunamiReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (key, value) in &self.lines {
            writeln!(f, "{key:<16}{value}")?;
        }
        writeln!(f, "\ngauges (first |eta| > {} m):", self.tracker.threshold)?;
        for (k, r) in self.tracker.gauges.iter().enumerate() {
            let arrival = r.arrival(self.tracker.threshold);
            write!(
                f,
                "  {:<28} depth {:>5.0} m  arrival {:>8}  max {:.3} m",
                r.gauge.name,
                r.depth,
                arrival.map_or("-".into(), |t| format!("{:.3} h", t / 3600.0)),
                r.max_amplitude()
            )?;
            if let Some(Some(exact)) = self.exact.as_ref().map(|e| e[k]) {
                let error = arrival.map_or(String::new(), |t| {
                    format!(" ({:+.1} %)", 100.0 * (t - exact) / exact)
                });
                write!(f, "  exact {:.3} h{error}", exact / 3600.0)?;
            }
            writeln!(f)?;
        }
        if self.exact.is_some() {
            writeln!(f, "  (exact: the linear waves of the same hump on the same flat ocean without rotation)")?;
        }
        for file in &self.files {
            writeln!(f, "wrote           {}", file.display())?;
        }
        Ok(())
    }
}

/// `3 h 05 min`.
fn clock(seconds: f64) -> String {
    let minutes = (seconds / 60.0).round() as u64;
    format!("{} h {:02} min", minutes / 60, minutes % 60)
}

/// A rank other than 0 under mpirun: the same problem and plan as rank 0's, its own wafers
/// stepped as rank 0 orders; it writes nothing.
pub fn follow(config: &TsunamiConfig) -> Result<()> {
    let steps = config.steps_in(config.hours * 3600.0);
    let (offset, resumed) = resume_point(config, steps)?;
    let problem = resumed.as_ref().unwrap_or(&config.problem);
    let run = engine::RunLength {
        steps: steps - offset,
        interval: config.sample_every(),
    };
    let plan = engine::spread_plan(&config.engine, config.engine_kind, problem, run)?;
    engine::follow(&plan, problem, &config.engine.placement)
}

/// Runs the scenario; `on_progress(model seconds done, model seconds in all)`.
pub fn tsunami(
    config: &TsunamiConfig,
    on_warning: &mut dyn FnMut(&str),
    on_progress: &mut dyn FnMut(f64, f64),
) -> Result<TsunamiReport> {
    crate::io::check_output_dir(&config.out, config.force || config.resume)?;
    let swe = &*config.swe;
    // A region off the grid is refused before anything is written.
    if let Some(region) = &config.region {
        pictures::View::of(swe, region)?;
    }
    let steps = config.steps_in(config.hours * 3600.0);
    let (offset, resumed) = resume_point(config, steps)?;
    let (mut tracker, notes) =
        Tracker::new(swe, &config.gauges, config.threshold, config.gauge_radius)?;
    notes.iter().for_each(|w| on_warning(w));
    super::watch_signals();
    let (ctx, warnings) = config.engine.open_for(config.problem.spec())?;
    warnings.iter().for_each(|w| on_warning(w));
    let problem = resumed.as_ref().unwrap_or(&config.problem);
    let run = engine::RunLength {
        steps: steps - offset,
        interval: config.sample_every(),
    };
    let placement = (&config.engine.placement, run);
    let request = (&config.engine, config.engine_kind);
    let plan = engine::plan_for(request, ctx.as_ref(), problem, run, on_warning)?;
    let sim = engine::simulator(&plan, ctx.as_ref(), problem, placement.0)?;
    let _claim = checkpoint::claim(&config.out, config.resume)?;
    let depth = swe.depth_field();
    let header = netcdf_header(config, &tracker, &depth, steps);
    let path = config.out.join("tsunami.nc");
    let (frames, netcdf) = match config.resume {
        true => {
            let dir = checkpoint::latest(&config.out);
            tracker.restore(&dir)?;
            let frames = Frames::restore(&dir)?;
            let kept = config.netcdf_frames as u64 * frames.times.len() as u64;
            (frames, TsunamiFile::resume(&path, &header, kept)?)
        }
        false => (Frames::default(), TsunamiFile::create(&path, &header)?),
    };
    let mut stepper = Stepper {
        config,
        problem,
        plan,
        sim,
        tracker,
        frames,
        netcdf,
        steps,
        offset,
        stepping: Duration::ZERO,
        in_blocks: 0,
    };
    let state = stepper.run(on_progress)?;
    stepper.report(state)
}

/// The step and the problem to resume from: the checkpoint's with `--resume`, else step 0
/// and none (the config's own problem); an error where the checkpoint lies past `steps`.
fn resume_point(config: &TsunamiConfig, steps: u64) -> Result<(u64, Option<Problem>)> {
    if !config.resume {
        return Ok((0, None));
    }
    let dt = config.swe.dt();
    let key = config.checkpoint_key();
    let (step, resumed) = checkpoint::resume(&config.out, (&config.problem, &key))?;
    if step > steps {
        return Err(crate::invalid!(
            "the checkpoint is at {} of model time, beyond --duration {}h: allowed --duration {}s or more",
            clock(step as f64 * dt),
            config.hours,
            (step as f64 * dt).ceil()
        ));
    }
    Ok((step, Some(resumed)))
}

/// The scenario's run: the engine from step `offset` to `steps`, what it samples and draws,
/// and how long it stepped.
struct Stepper<'a> {
    config: &'a TsunamiConfig,
    problem: &'a Problem,
    plan: engine::EnginePlan,
    sim: Box<dyn Simulator>,
    tracker: Tracker,
    frames: Frames,
    netcdf: TsunamiFile,
    steps: u64,
    offset: u64,
    stepping: Duration,
    /// Steps advanced within time blocks.
    in_blocks: u64,
}

impl Stepper<'_> {
    /// The step nearest to `k` frame intervals in, where frame `k` is drawn (past the last
    /// step, the last step draws a frame of its own time).
    fn nominal_frame_step(&self, k: u64) -> u64 {
        let dt = self.config.swe.dt();
        (k as f64 * self.config.frame_minutes * 60.0 / dt).round() as u64
    }

    /// The step frame `k` is drawn at.
    fn frame_step(&self, k: u64) -> u64 {
        self.nominal_frame_step(k).min(self.steps)
    }

    /// Checkpoints every this many steps, if at all.
    fn checkpoint_every(&self) -> Option<u64> {
        let every = self.config.checkpoint_every;
        every.map(|minutes| self.config.steps_in(minutes * 60.0))
    }

    /// Samples, draws and checkpoints to the last step; its state.
    fn run(&mut self, on_progress: &mut dyn FnMut(f64, f64)) -> Result<Vec<GlobalField>> {
        let config = self.config;
        let total_s = config.hours * 3600.0;
        loop {
            let step = self.sim.step() + self.offset;
            let (time, last) = (config.time_of(step), step == self.steps);
            let state = self.sim.state()?;
            // A checkpoint's own step was sampled, and framed, before it was taken.
            if !(config.resume && step == self.offset) {
                self.observe(step, &state)?;
            }
            let every = self.checkpoint_every();
            let stop = super::stop_requested() && !last;
            let due = every.is_some_and(|k| step.is_multiple_of(k) && step > self.offset);
            if (stop && every.is_some()) || due {
                let extra = [
                    self.tracker.checkpoint_files(),
                    self.frames.checkpoint_files(),
                ];
                let key = config.checkpoint_key();
                let problem = (self.problem, key.as_str());
                checkpoint::write(&config.out, problem, step, &state, &extra.concat())?;
            }
            if stop {
                return Err(match every {
                    Some(_) => checkpoint::stopped(&config.out, step),
                    None => super::stopped_unsaved(step),
                });
            }
            on_progress(time.min(total_s), total_s);
            if last {
                return Ok(state);
            }
            self.advance(step)?;
        }
    }

    /// Checks the state at `step`, samples it where a sample is due, and draws it where a
    /// frame is due (or at the last step).
    fn observe(&mut self, step: u64, state: &[GlobalField]) -> Result<()> {
        let (config, swe) = (self.config, &*self.config.swe);
        let time = config.time_of(step);
        let centres = swe.at_centres(state);
        check_centres(swe, &centres, step)?;
        if step.is_multiple_of(config.sample_every()) {
            self.tracker.sample(time, &centres);
        }
        let due = step >= self.nominal_frame_step(self.frames.done);
        if !due && step != self.steps {
            return Ok(());
        }
        // Named by the frame's nominal time (the title has the exact one), the last step's
        // extra frame by its own.
        let minute = match due {
            true => self.frames.done as f64 * config.frame_minutes,
            false => time / 60.0,
        };
        let eta = water_only(swe, &centres[0]);
        let files = write_frames(config, &eta, &self.tracker, (time, minute))?;
        let frames = &mut self.frames;
        frames.done += due as u64;
        frames.files.extend(files);
        frames.times.push(time);
        let [u, v] = [&centres[1], &centres[2]].map(|f| water_only(swe, f));
        self.netcdf
            .append_frame(time, [&eta.data, &u.data, &v.data])?;
        self.netcdf.update(&netcdf_maps(&self.tracker))
    }

    /// Advances from `step` to the next sample, frame or checkpoint.
    fn advance(&mut self, step: u64) -> Result<()> {
        let sample_every = self.config.sample_every();
        let next_checkpoint = self
            .checkpoint_every()
            .map_or(self.steps, |k| (step / k + 1) * k);
        // Samples on multiples of the interval, so that a frame between two leaves the
        // later advances aligned with the time blocks (`blocking::fitting`).
        let next = ((step / sample_every + 1) * sample_every)
            .min(self.frame_step(self.frames.done).max(step + 1))
            .min(next_checkpoint)
            .min(self.steps);
        let started = Instant::now();
        let from = self.sim.step();
        self.sim.advance(next - step)?;
        self.stepping += started.elapsed();
        let advanced = (from, self.sim.step());
        self.in_blocks += blocking::steps_in_blocks(self.sim.time_block(), advanced);
        Ok(())
    }

    /// Writes the maps, the tables and the summary after the last step's `state`.
    fn report(mut self, state: Vec<GlobalField>) -> Result<TsunamiReport> {
        let config = self.config;
        self.netcdf.update(&netcdf_maps(&self.tracker))?;
        let exact = exact_arrivals(config, &self.tracker);
        let mut files = self.frames.files.clone();
        files.extend(write_outputs(config, &self.tracker, exact.as_deref())?);
        files.push(config.out.join("tsunami.nc"));
        let mut engine = self.sim.describe();
        let run = self.steps - self.offset;
        if self.sim.time_block() > 1 {
            let _ = write!(engine, ", {} of {run} steps in them", self.in_blocks);
        }
        let steps = (self.steps, run);
        let (mut lines, data) = report_lines(config, self.problem, steps, (self.stepping, engine))?;
        let at = lines
            .iter()
            .position(|(key, _)| key == "engine")
            .map_or(0, |k| k + 1);
        lines.insert(at, ("plan".into(), self.plan.line()));
        let summary = config.out.join("summary.txt");
        let report = TsunamiReport {
            lines,
            data,
            plan: self.plan,
            files,
            tracker: self.tracker,
            exact,
            state,
        };
        crate::io::write_atomic(&summary, report.to_string().as_bytes())?;
        Ok(TsunamiReport {
            files: [report.files.clone(), vec![summary]].concat(),
            ..report
        })
    }
}

/// The frames written so far: how many nominal ones, the model times of all (a last step's
/// own frame included) and their picture files. The NetCDF file holds the frames themselves.
#[derive(Default)]
struct Frames {
    /// Nominal frames drawn: the next is due `done` frame intervals in.
    done: u64,
    times: Vec<f64>,
    files: Vec<PathBuf>,
}

impl Frames {
    /// As a checkpoint file: the count, the times' bits and the files as JSON.
    fn checkpoint_files(&self) -> Vec<(&'static str, Vec<u8>)> {
        let meta = serde_json::json!({
            "done": self.done,
            "times": self.times.iter().map(|t| t.to_bits()).collect::<Vec<_>>(),
            "files": self.files,
        });
        vec![("frames.json", meta.to_string().into_bytes())]
    }

    /// From the checkpoint folder `dir` ([`Frames::checkpoint_files`]).
    fn restore(dir: &Path) -> Result<Self> {
        let path = dir.join("frames.json");
        let meta: serde_json::Value = serde_json::from_slice(&crate::io::read_bytes(&path)?)
            .map_err(|e| crate::invalid!("{}: {e}", path.display()))?;
        let bad = || crate::invalid!("{}: not a tsunami's frames", path.display());
        let done = meta["done"].as_u64().ok_or_else(bad)?;
        let times = meta["times"].as_array().ok_or_else(bad)?;
        let files = meta["files"].as_array().ok_or_else(bad)?;
        if (times.len() as u64) < done {
            return Err(bad());
        }
        Ok(Self {
            done,
            times: times
                .iter()
                .map(|t| t.as_u64().map(f64::from_bits).ok_or_else(bad))
                .collect::<Result<_>>()?,
            files: files
                .iter()
                .map(|f| f.as_str().map(PathBuf::from).ok_or_else(bad))
                .collect::<Result<_>>()?,
        })
    }
}

/// The summary lines: scenario, grid, speed and the emulated machine's time; and the same as
/// data for the JSON.
fn report_lines(
    config: &TsunamiConfig,
    problem: &Problem,
    (steps, stepped): (u64, u64),
    (stepping, engine): (Duration, String),
) -> Result<(Vec<(String, String)>, serde_json::Value)> {
    let swe = &*config.swe;
    let i = &config.impact;
    let grid = swe.grid();
    let points = grid.x as f64 * grid.y as f64;
    let secs = stepping.as_secs_f64().max(1e-9);
    let mut lines = vec![
        ("impact".into(), format!("{} m over {} km^2 (R = {:.1} km) at lat {}, lon {}", i.height, i.area_km2, i.radius() / 1e3, i.lat, i.lon)),
        ("hump".into(), format!("volume {:.3e} m^3, potential energy {:.3e} J = {:.0} Mt TNT (raised cosine on a plane)", i.volume(), i.potential_energy(), i.potential_energy() / MEGATON_TNT)),
        ("kernel".into(), format!("{}: {}", swe.spec().name, swe.spec().summary)),
        ("grid".into(), format!("{} x {} ({} degrees), {}", grid.x, grid.y, config.resolution, problem.cluster.describe())),
        ("relief".into(), format!("{}, bilinearly resampled; centres shallower than {} m are land", swe.config().bathymetry, swe.config().least_depth)),
        ("model time".into(), format!("{} in {steps} steps of {:.3} s, samples every {} s", clock(steps as f64 * swe.dt()), swe.dt(), config.sample_seconds)),
        ("engine".into(), engine),
        ("wall time".into(), format!("{secs:.2} s stepping {stepped} steps, {:.3e} point updates/s", points * stepped as f64 / secs)),
    ];
    let mut data = serde_json::json!({
        "impact": {
            "lat_deg": i.lat, "lon_deg": i.lon, "height_m": i.height, "area_km2": i.area_km2,
            "radius_m": i.radius(), "volume_m3": i.volume(), "potential_energy_j": i.potential_energy(),
        },
        "kernel": swe.spec().name,
        "parameters": swe.parameters().into_iter().map(|(k, v)| (k.to_string(), v)).collect::<serde_json::Map<_, _>>(),
        "grid": [grid.x, grid.y],
        "resolution_deg": config.resolution,
        "wafers": [problem.cluster.wafers_x, problem.cluster.wafers_y],
        "pes_per_wafer": [problem.cluster.wafer.pes_x, problem.cluster.wafer.pes_y],
        "n": problem.cluster.wafer.n,
        "steps": steps,
        "stepped": stepped,
        "dt_s": swe.dt(),
        "duration_s": steps as f64 * swe.dt(),
        "sample_every_s": config.sample_seconds,
        "frame_every_s": config.frame_minutes * 60.0,
        "stepping_seconds": secs,
        "updates_per_second": points * stepped as f64 / secs,
        "emulated": null,
    });
    if let Some(p) = super::run::emulated_timing(problem)? {
        let seconds = p.cycles_per_step * steps as f64 / p.config.params.clock_hz;
        data["emulated"] = serde_json::json!({
            "seconds": seconds,
            "cycles_per_step": p.cycles_per_step,
            "clock_hz": p.config.params.clock_hz,
            "flops_per_point": problem.spec().flops_per_point(),
        });
        let mut text = format!(
            "{seconds:.3e} s on the emulated cluster ({:.0} cycles per step at {} GHz, {} FLOPs per point and step)",
            p.cycles_per_step,
            p.config.params.clock_hz / 1e9,
            problem.spec().flops_per_point()
        );
        let _ = write!(
            text,
            ", {:.0}x faster than the model's own time",
            steps as f64 * swe.dt() / seconds
        );
        lines.push(("emulated".into(), text));
    }
    Ok((lines, data))
}

/// The problem of a configuration: the kernel on the cluster.
pub fn problem(
    swe: &Arc<dyn ShallowWater>,
    cluster: crate::cluster::ClusterGeometry,
) -> Result<Problem> {
    Problem::new(swe.clone() as Arc<dyn Kernel>, cluster)
}
