//! `wafer-emu predict`: the timing model run to its steady state, and what follows from it:
//! steps/s, cycles per step, utilisation, FLOP/s, FLOP/J, the limiting bound.

use std::fmt;
use std::sync::Arc;

use super::clocks::{ClusterClocks, ClusterShape, Costs, TICKS_PER_CYCLE};
use super::gpu::GpuClocks;
use super::params::{Method, TimingParams};
use crate::engine::gpu::GpuContext;
use crate::Result;

/// Shortest measurement window; the steady state is reached when two windows in a row give
/// the same ticks per step. A window also spans the wafer's larger side, so that a latency
/// wave has crossed the wafer within it, and a whole number of exchanges.
const MIN_WINDOW: u64 = 64;

/// Relative change of the mean rate between two windows that counts as steady under jitter.
const JITTER_TOLERANCE: f64 = 1e-4;

fn window(shape: &ClusterShape, exchange_every: u32) -> u64 {
    let span = MIN_WINDOW.max(shape.pes_x.max(shape.pes_y) as u64);
    span.div_ceil(exchange_every as u64) * exchange_every as u64
}

/// A validated `predict`.
#[derive(Clone, Debug)]
pub struct PredictConfig {
    pub params: TimingParams,
    /// The cluster to predict.
    pub shape: ClusterShape,
    /// Simulate every wafer instead of one wafer linked to itself.
    pub full: bool,
    /// Give up on a steady state after this many steps.
    pub max_steps: u64,
    /// Record the clocks of every `stride`-th PE (both directions) every `every` steps.
    pub telemetry: Option<TelemetryPlan>,
}

impl PredictConfig {
    /// One self-linked wafer standing for `shape`, no telemetry, up to `max_steps` steps.
    pub fn shortcut(params: TimingParams, shape: ClusterShape, max_steps: u64) -> Self {
        Self {
            params,
            shape,
            full: false,
            max_steps,
            telemetry: None,
        }
    }
}

/// Which clocks to sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TelemetryPlan {
    pub every: u64,
    pub stride: u32,
}

/// Sampled clocks: `[wafers_x][wafers_y][pes_x / stride][pes_y / stride][samples]`, cycles.
#[derive(Clone, Debug, PartialEq)]
pub struct Telemetry {
    pub shape: [usize; 5],
    pub cycles: Vec<f64>,
}

/// Which resource limits the step rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Compute,
    Bandwidth,
    Latency,
    /// The link's credits: a package waits for the one `capacity` earlier to be consumed.
    Credit,
}

/// What the model predicts.
#[derive(Clone, Debug)]
pub struct Prediction {
    pub config: PredictConfig,
    /// Shape actually simulated (one wafer for the shortcut).
    pub simulated: ClusterShape,
    pub engine: String,
    pub steps: u64,
    /// Whether two windows in a row agreed (else the rate is of the last window).
    pub steady: bool,
    pub cycles_per_step: f64,
    /// Cycles per step each resource alone would allow.
    pub compute_cycles: f64,
    pub bandwidth_cycles: f64,
    pub latency_cycles: f64,
    /// `(latency + serialisation + edge) / capacity`: a package leaves only once the one
    /// `capacity` packages earlier arrived and was consumed.
    pub credit_cycles: f64,
    pub telemetry: Option<Telemetry>,
    /// With `full`, this cluster's step rate over one self-linked wafer's (weak scaling).
    pub weak_scaling: Option<f64>,
}

/// Something that advances clocks: the CPU recurrence or its GPU twin.
trait Clocks {
    fn advance(&mut self, steps: u64) -> Result<()>;
    fn clocks(&self) -> Result<Vec<u64>>;
}

impl Clocks for ClusterClocks {
    fn advance(&mut self, steps: u64) -> Result<()> {
        ClusterClocks::advance(self, steps);
        Ok(())
    }
    fn clocks(&self) -> Result<Vec<u64>> {
        Ok(self.clocks.clone())
    }
}

impl Clocks for GpuClocks {
    fn advance(&mut self, steps: u64) -> Result<()> {
        GpuClocks::advance(self, steps)
    }
    fn clocks(&self) -> Result<Vec<u64>> {
        GpuClocks::clocks(self)
    }
}

/// Runs the model until two measurement windows agree, on the GPU if `ctx` is given. With
/// `full` on several wafers, also runs one wafer to measure weak-scaling efficiency.
pub fn predict(config: &PredictConfig, ctx: Option<Arc<GpuContext>>) -> Result<Prediction> {
    predict_with_progress(config, ctx, &mut |_, _| {})
}

/// [`predict`], reporting `(steps simulated, at most)` after every measurement window.
pub fn predict_with_progress(
    config: &PredictConfig,
    ctx: Option<Arc<GpuContext>>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Prediction> {
    let mut prediction = run_model(config, ctx.clone(), progress)?;
    if config.full && config.shape.wafer_count() > 1 {
        let single = PredictConfig {
            full: false,
            telemetry: None,
            ..config.clone()
        };
        let one = run_model(&single, ctx, progress)?;
        prediction.weak_scaling = Some(one.cycles_per_step / prediction.cycles_per_step);
    }
    Ok(prediction)
}

fn run_model(
    config: &PredictConfig,
    ctx: Option<Arc<GpuContext>>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Prediction> {
    let simulated = if config.full {
        config.shape
    } else {
        ClusterShape {
            wafers_x: 1,
            wafers_y: 1,
            ..config.shape
        }
    };
    let cpu = ClusterClocks::new(&config.params, simulated)?;
    let costs = cpu.costs;
    let (engine, mut clocks) = open_clocks(config, ctx, cpu)?;
    let mut sampler = config.telemetry.map(|plan| Sampler::new(plan, &simulated));
    let window = (window(&simulated, costs.exchange_every), costs.jitter > 0);
    let run = steady_rate(
        config,
        (clocks.as_mut(), sampler.as_mut()),
        window,
        progress,
    )?;
    let (horizontal, vertical) = (costs.latency_h as f64, costs.latency_v as f64);
    Ok(Prediction {
        config: config.clone(),
        simulated,
        engine,
        steps: run.steps,
        steady: run.steady,
        cycles_per_step: run.rate / TICKS_PER_CYCLE,
        compute_cycles: (costs.interior + costs.edge) as f64 / TICKS_PER_CYCLE,
        bandwidth_cycles: costs.serialise_h.max(costs.serialise_v) as f64
            / costs.exchange_every as f64
            / TICKS_PER_CYCLE,
        latency_cycles: latency_ticks(config, &costs) / TICKS_PER_CYCLE,
        credit_cycles: ((horizontal + costs.serialise_h as f64)
            .max(vertical + costs.serialise_v as f64)
            + costs.edge as f64)
            / costs.capacity as f64
            / costs.exchange_every as f64
            / TICKS_PER_CYCLE,
        telemetry: sampler.map(Sampler::finish),
        weak_scaling: None,
    })
}

/// The clocks that run the model, on the GPU of `ctx` or on the CPU (`cpu`), and their
/// engine in words.
fn open_clocks(
    config: &PredictConfig,
    ctx: Option<Arc<GpuContext>>,
    cpu: ClusterClocks,
) -> Result<(String, Box<dyn Clocks>)> {
    if ctx.is_some() && config.max_steps > u32::MAX as u64 {
        return Err(crate::invalid!(
            "max-steps = {} is beyond the GPU clocks' 32-bit step counter: allowed up to {}",
            config.max_steps,
            u32::MAX
        ));
    }
    Ok(match ctx {
        Some(ctx) => (
            format!("GPU: {}", ctx.describe()),
            Box::new(GpuClocks::new(ctx, &cpu)?),
        ),
        None => (
            format!("CPU ({} threads)", rayon::current_num_threads()),
            Box::new(cpu),
        ),
    })
}

/// How far the model ran: its steps, its rate in ticks per step, and whether that rate was
/// steady (two windows agreed) before `max_steps`.
struct Measured {
    steps: u64,
    rate: f64,
    steady: bool,
}

/// Advances `clocks` by windows of `full_window` steps (recording the sampler's steps) until
/// two windows agree on the rate, within a tolerance where the links have `jitter`, or
/// `max_steps` are done.
fn steady_rate(
    config: &PredictConfig,
    (clocks, mut sampler): (&mut dyn Clocks, Option<&mut Sampler>),
    (full_window, jitter): (u64, bool),
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Measured> {
    let (mut steps, mut last_max, mut last_rate) = (0, 0u64, None::<f64>);
    // With jitter the links differ and the steady state can repeat over several windows:
    // measure the mean rate from the end of the first window on (start-up included), and stop
    // once a window moves that mean by less than JITTER_TOLERANCE.
    let mut measured_from: Option<(u64, u64)> = None;
    while steps < config.max_steps {
        let window = full_window.min(config.max_steps - steps);
        match sampler.as_deref_mut() {
            Some(sampler) => {
                for _ in 0..window {
                    clocks.advance(1)?;
                    steps += 1;
                    if steps % sampler.plan.every == 0 {
                        sampler.record(&clocks.clocks()?);
                    }
                }
            }
            None => {
                clocks.advance(window)?;
                steps += window;
            }
        }
        progress(steps, config.max_steps);
        let max = clocks.clocks()?.into_iter().max().unwrap_or(0);
        let rate = match (jitter, measured_from) {
            (false, _) | (_, None) => (max - last_max) as f64 / window as f64,
            (true, Some((from_steps, from_max))) => {
                (max - from_max) as f64 / (steps - from_steps) as f64
            }
        };
        last_max = max;
        let agrees = match (jitter, last_rate, measured_from) {
            (false, Some(last), _) => last == rate,
            (true, Some(last), Some((from, _))) => {
                steps - from > full_window && (last - rate).abs() <= JITTER_TOLERANCE * rate
            }
            _ => false,
        };
        last_rate = Some(rate);
        if agrees && window == full_window {
            return Ok(Measured {
                steps,
                rate,
                steady: true,
            });
        }
        if jitter && measured_from.is_none() {
            measured_from = Some((steps, max));
        }
    }
    let rate = last_rate.unwrap_or(0.0);
    Ok(Measured {
        steps,
        rate,
        steady: false,
    })
}

/// Ticks per step that the links' latency costs the method, at best.
fn latency_ticks(config: &PredictConfig, costs: &Costs) -> f64 {
    let (horizontal, vertical) = (costs.latency_h as f64, costs.latency_v as f64);
    match config.params.method {
        // The dependency chains run right (one PE per step, a horizontal link every wafer
        // width of steps) and up (a vertical link every wafer height); a corner rides one of
        // them (Table 3 forwards it), so the slower chain sets the bound, not their sum.
        Method::DomainTranslation => {
            (horizontal / config.shape.pes_x as f64).max(vertical / config.shape.pes_y as f64)
                + costs.edge as f64
        }
        // Two neighbours wait for each other across the link every exchange.
        Method::StaticDecomposition => vertical.max(horizontal) + costs.edge as f64,
        Method::OverlappingGhosts { g } => {
            (vertical.max(horizontal) + costs.edge as f64) / g as f64
        }
    }
}

struct Sampler {
    plan: TelemetryPlan,
    shape: ClusterShape,
    /// Per sample, the sampled clocks in `[wafer_x][wafer_y][x][y]` order.
    samples: Vec<Vec<f64>>,
}

impl Sampler {
    fn new(plan: TelemetryPlan, shape: &ClusterShape) -> Self {
        Self {
            plan,
            shape: *shape,
            samples: vec![],
        }
    }

    fn dims(&self) -> [usize; 4] {
        let s = &self.shape;
        let stride = self.plan.stride;
        [
            s.wafers_x as usize,
            s.wafers_y as usize,
            s.pes_x.div_ceil(stride) as usize,
            s.pes_y.div_ceil(stride) as usize,
        ]
    }

    fn record(&mut self, clocks: &[u64]) {
        let s = self.shape;
        let [kx, ky, sx, sy] = self.dims();
        let (span_x, stride) = (s.span().0, self.plan.stride as usize);
        let mut sample = Vec::with_capacity(kx * ky * sx * sy);
        for wx in 0..kx {
            for wy in 0..ky {
                for x in 0..sx {
                    for y in 0..sy {
                        let gx = wx * s.pes_x as usize + x * stride;
                        let gy = wy * s.pes_y as usize + y * stride;
                        sample.push(clocks[gy * span_x + gx] as f64 / TICKS_PER_CYCLE);
                    }
                }
            }
        }
        self.samples.push(sample);
    }

    /// Samples last in memory, as the paper's instrumentation lays them out.
    fn finish(self) -> Telemetry {
        let [kx, ky, sx, sy] = self.dims();
        let per_sample = kx * ky * sx * sy;
        let count = self.samples.len();
        let mut cycles = vec![0.0; per_sample * count];
        for (k, sample) in self.samples.iter().enumerate() {
            for (i, &c) in sample.iter().enumerate() {
                cycles[i * count + k] = c;
            }
        }
        Telemetry {
            shape: [kx, ky, sx, sy, count],
            cycles,
        }
    }
}

impl Prediction {
    /// Steps per second of the emulated machine.
    pub fn steps_per_second(&self) -> f64 {
        self.config.params.clock_hz / self.cycles_per_step
    }
    /// FLOPs of one PE per step.
    pub fn flops_per_pe_step(&self) -> f64 {
        let n = self.config.shape.n as f64;
        self.config.params.kernel.flops_per_point() as f64 * n * n
    }
    /// Fraction of peak FLOP/s.
    pub fn utilisation(&self) -> f64 {
        self.flops_per_pe_step() / (self.cycles_per_step * self.config.params.peak_flops_per_cycle)
    }
    /// FLOP/s of the whole cluster.
    pub fn flops(&self) -> f64 {
        self.flops_per_pe_step() * self.config.shape.pe_count() as f64 * self.steps_per_second()
    }
    /// FLOP per joule at the nodes' power.
    pub fn flops_per_joule(&self) -> f64 {
        self.flops() / (self.config.shape.wafer_count() as f64 * self.config.params.node_power_w)
    }
    /// The bound whose cycles per step are largest.
    pub fn limiting(&self) -> Bound {
        let bounds = [
            (Bound::Compute, self.compute_cycles),
            (Bound::Bandwidth, self.bandwidth_cycles),
            (Bound::Latency, self.latency_cycles),
            (Bound::Credit, self.credit_cycles),
        ];
        bounds
            .into_iter()
            .fold(
                (Bound::Compute, 0.0),
                |best, b| if b.1 > best.1 { b } else { best },
            )
            .0
    }
}

impl Prediction {
    /// The prediction as JSON, with every parameter it was run with.
    pub fn json(&self) -> serde_json::Value {
        let (s, p) = (&self.config.shape, &self.config.params);
        serde_json::json!({
            "command": "predict",
            "schema": 1,
            "version": env!("CARGO_PKG_VERSION"),
            "kernel": p.kernel.name(),
            "cluster": {
                "wafers": [s.wafers_x, s.wafers_y],
                "pes_per_wafer": [s.pes_x, s.pes_y],
                "n": s.n,
            },
            "parameters": p.json(),
            "simulated": {
                "full": self.config.full,
                "steps": self.steps,
                "steady": self.steady,
                "engine": self.engine,
            },
            "cycles_per_step": self.cycles_per_step,
            "steps_per_second": self.steps_per_second(),
            "utilisation": self.utilisation(),
            "flops_per_second": self.flops(),
            "flops_per_joule": self.flops_per_joule(),
            "bounds_cycles": {
                "compute": self.compute_cycles,
                "bandwidth": self.bandwidth_cycles,
                "latency": self.latency_cycles,
                "credit": self.credit_cycles,
            },
            "limited_by": format!("{:?}", self.limiting()).to_lowercase(),
            "weak_scaling": self.weak_scaling,
        })
    }
}

impl fmt::Display for Prediction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        let (s, p) = (&c.shape, &c.params);
        writeln!(
            f,
            "emulated machine (timing model; not the emulator's wall clock)"
        )?;
        writeln!(
            f,
            "kernel         {} ({} FLOPs per point), {}",
            p.kernel.name(),
            p.kernel.flops_per_point(),
            p.method.name()
        )?;
        writeln!(
            f,
            "cluster        {}x{} wafers of {}x{} PEs, n = {} ({} points per PE, {:.4e} points)",
            s.wafers_x,
            s.wafers_y,
            s.pes_x,
            s.pes_y,
            s.n,
            s.n * s.n,
            s.pe_count() as f64 * (s.n * s.n) as f64
        )?;
        let how = if c.full {
            "every wafer".to_string()
        } else {
            "one wafer linked to itself (all wafers are identical)".into()
        };
        writeln!(
            f,
            "simulated      {how}, {} steps on {}{}",
            self.steps,
            self.engine,
            if self.steady {
                ""
            } else {
                " (no steady state reached)"
            }
        )?;
        writeln!(
            f,
            "clock          {:.3} GHz, peak {} FLOP/cycle per PE",
            p.clock_hz / 1e9,
            p.peak_flops_per_cycle
        )?;
        writeln!(
            f,
            "I/O per PE     {} words per step (Table 3's package layout)",
            p.io_words_per_pe(s.n)
        )?;
        writeln!(f, "cycles/step    {:.2}", self.cycles_per_step)?;
        writeln!(
            f,
            "bounds         compute {:.2}, bandwidth {:.2}, latency {:.2}, credits {:.2} cycles/step (lower bounds): {:?}-bound",
            self.compute_cycles,
            self.bandwidth_cycles,
            self.latency_cycles,
            self.credit_cycles,
            self.limiting()
        )?;
        writeln!(f, "steps/s        {:.4e}", self.steps_per_second())?;
        match self.weak_scaling {
            Some(e) => writeln!(
                f,
                "weak scaling   {:.6} % of one wafer's step rate",
                100.0 * e
            )?,
            None => writeln!(
                f,
                "weak scaling   100 % (one wafer stands for all; --full measures it)"
            )?,
        }
        writeln!(
            f,
            "utilisation    {:.1} % of peak",
            100.0 * self.utilisation()
        )?;
        writeln!(f, "FLOP/s         {:.4e}", self.flops())?;
        writeln!(
            f,
            "FLOP/J         {:.4e} at {} kW per node",
            self.flops_per_joule(),
            p.node_power_w / 1e3
        )
    }
}
