//! `wafer-emu bench`: the emulated wafer, the global kernel, the CPU backend and the copy
//! ceilings (GPU and CPU) on the same global grid, timed interleaved in one run so that the
//! ratios survive a noisy machine.

use std::fmt;
use std::time::Instant;

mod variants;

pub use variants::{variants, CopyEngine, Lineup, RowEngine, RowShape, Variant};

use crate::cluster::ClusterGeometry;
use crate::engine::gpu::{GpuContext, Placement, Profile};
use crate::engine::{auto_time_block, EngineRequest, Hardware};
use crate::kernels::KernelKind;
use crate::model::Problem;
use crate::wafer::WaferGeometry;
use crate::{invalid, Result};

/// Bytes one point update of `kind` moves at least: every stage reads and writes each field.
pub fn bytes_per_update(kind: KernelKind) -> f64 {
    let spec = kind.spec();
    (8 * spec.fields.len() * spec.stages.len()) as f64
}

/// A validated `bench`.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub kernel: KernelKind,
    /// Global grid side (square).
    pub grid: u32,
    /// Points per PE side to compare, each with `grid / n` PEs per side.
    pub ns: Vec<u32>,
    pub steps: u64,
    pub reps: usize,
    pub engine: EngineRequest,
    /// Also time the CPU backend.
    pub cpu: bool,
    /// Also time the same grid as a cluster of this many wafers (`(1, 1)`: no cluster rows).
    pub wafers: (u32, u32),
    /// Devices for an extra multi-device cluster row (1: none).
    pub devices: u32,
    /// Steps per time block of the extra time-block rows (GPU fused engine, CPU backend; 1:
    /// none), or `None`: each engine's own, as `auto` takes them ([`auto_time_block`]); the
    /// timed steps are rounded up to whole blocks of every row.
    pub time_block: Option<u32>,
    /// After the timed repetitions, one more run of each GPU variant with every dispatch
    /// timed on the GPU ([`Profile`]).
    pub profile: bool,
}

/// Most steps (and repetitions) a bench times: a billion steps of one point, far beyond a
/// measurement's need, and clear of overflow when rounded up to whole time blocks.
pub const MAX_BENCH_STEPS: u64 = 1_000_000_000;

impl BenchConfig {
    /// Checks that every `n` divides the grid and the counts are positive.
    pub fn validate(&self) -> Result<()> {
        if let Some(world) = crate::engine::cpu::ranks::world() {
            if self.ns.len() != 1 || self.wafers == (1, 1) || !self.cpu {
                return Err(invalid!(
                    "under mpirun ({} ranks) bench times one CPU cluster over the ranks: give one --n, --wafers beyond 1x1, and not --no-cpu",
                    world.size
                ));
            }
        }
        for (name, v) in [("steps", self.steps), ("reps", self.reps as u64)] {
            if !(1..=MAX_BENCH_STEPS).contains(&v) {
                return Err(invalid!("{name} = {v}: allowed 1..={MAX_BENCH_STEPS}"));
            }
        }
        let most = crate::wafer::MAX_PES as u64 * crate::wafer::MAX_N as u64;
        if self.grid == 0 || self.grid as u64 > most {
            return Err(invalid!(
                "grid = {}: allowed 1..={most} points per side",
                self.grid
            ));
        }
        let Some(&n) = self.ns.first() else {
            return Err(invalid!("no n given: allowed one or more values of n"));
        };
        for &n in &self.ns {
            if n == 0 || !self.grid.is_multiple_of(n) {
                return Err(invalid!(
                    "n = {n} must divide the grid side {} (n >= 1)",
                    self.grid
                ));
            }
            let (pes, most) = (self.grid / n, crate::wafer::MAX_PES);
            if pes > most {
                return Err(invalid!(
                    "n = {n} leaves {pes} PEs per side of a {} grid: allowed at most {most} (a larger n)",
                    self.grid
                ));
            }
            self.cluster(n)?;
        }
        Placement {
            devices: self.devices,
            time_block: self.time_block.unwrap_or(1),
            ..Placement::default()
        }
        .validate(&self.cluster(n)?)
    }

    /// The config with `steps` rounded up to whole time blocks of `blocks` steps each (they
    /// start at multiples of their length), so that every repetition runs only whole blocks.
    fn whole_blocks(&self, blocks: &[u32], on_warning: &mut dyn FnMut(&str)) -> Self {
        let every = blocks
            .iter()
            .fold(1, |m, &k| crate::blocking::lcm(m, k as u64));
        let steps = self.steps.next_multiple_of(every);
        if steps != self.steps {
            on_warning(&format!(
                "steps = {} rounded up to {steps}, whole time blocks of every row",
                self.steps
            ));
        }
        Self {
            steps,
            ..self.clone()
        }
    }

    /// Steps per time block of the rows of `problem` on `hardware`.
    pub(crate) fn block(&self, hardware: Hardware, problem: &Problem) -> u32 {
        self.time_block
            .unwrap_or_else(|| auto_time_block(hardware, problem))
    }

    /// The grid at `n` points per PE as a cluster of `self.wafers` wafers.
    pub(crate) fn cluster(&self, n: u32) -> Result<ClusterGeometry> {
        let pes = self.grid / n;
        let (wx, wy) = self.wafers;
        if wx == 0 || wy == 0 || !pes.is_multiple_of(wx) || !pes.is_multiple_of(wy) {
            return Err(invalid!(
                "{wx}x{wy} wafers must divide the {pes}x{pes} PEs of the grid at n = {n}"
            ));
        }
        let w = self.kernel.spec().comm_width;
        ClusterGeometry::new(wx, wy, WaferGeometry::new(pes / wx, pes / wy, n, w)?)
    }
}

/// One timed variant: median point updates per second over the repetitions.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub name: String,
    pub engine: RowEngine,
    pub shape: Option<RowShape>,
    /// Median point updates per second; and the slowest and fastest repetition's.
    pub updates_per_second: f64,
    pub min_updates_per_second: f64,
    pub max_updates_per_second: f64,
    /// The row this one is compared with in the `/wafer` column.
    pub baseline: Option<String>,
    /// With `--profile`: the GPU time per kernel of one more run of `steps` steps.
    pub profile: Option<Profiled>,
}

/// A profiled run of a variant: the GPU time of each kernel, and the run's wall time.
#[derive(Clone, Debug)]
pub struct Profiled {
    pub profile: Profile,
    pub wall_seconds: f64,
}

/// All rows of one bench run.
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub config: BenchConfig,
    pub engine: String,
    pub rows: Vec<BenchRow>,
    /// Variants too large for the device or machine: name and reason.
    pub skipped: Vec<(String, String)>,
}

/// A rank other than 0 under mpirun: the bench's cluster row over the ranks, its wafers stepped
/// as rank 0 orders (it runs one `n`).
pub fn follow(config: &BenchConfig) -> Result<()> {
    config.validate()?;
    let kernel = variants::configure(config)?;
    let (problem, plan) = variants::cpu_cluster(config, &kernel, config.ns[0])?;
    crate::engine::follow(&plan, &problem, &Placement::default())
}

/// Runs the bench: every variant once per repetition, interleaved; the median is reported.
pub fn bench(config: &BenchConfig, on_warning: &mut dyn FnMut(&str)) -> Result<BenchReport> {
    let (
        Lineup {
            mut variants,
            skipped,
            ctx,
        },
        engine,
    ) = variants(config, on_warning)?;
    let blocks: Vec<u32> = variants.iter().map(|v| v.engine.time_block()).collect();
    let config = &config.whole_blocks(&blocks, on_warning);
    let mut samples = vec![vec![]; variants.len()];
    for _ in 0..config.reps {
        for (variant, times) in variants.iter_mut().zip(&mut samples) {
            let started = Instant::now();
            variant.run(config.steps)?;
            times.push(started.elapsed().as_secs_f64());
        }
    }
    let mut profiles = vec![];
    for variant in &mut variants {
        profiles.push(match (&ctx, config.profile) {
            (Some(ctx), true) => profile(ctx, variant, config.steps)?,
            _ => None,
        });
    }
    let points = config.grid as f64 * config.grid as f64;
    let rows = variants
        .into_iter()
        .zip(samples)
        .zip(profiles)
        .map(|((variant, mut times), profile)| {
            times.sort_by(f64::total_cmp);
            let rate = |seconds: f64| points * config.steps as f64 / seconds;
            BenchRow {
                name: variant.name,
                engine: variant.engine,
                shape: variant.shape,
                updates_per_second: rate(times[times.len() / 2]),
                min_updates_per_second: rate(times[times.len() - 1]),
                max_updates_per_second: rate(times[0]),
                baseline: variant.baseline,
                profile,
            }
        })
        .collect();
    Ok(BenchReport {
        config: config.clone(),
        engine,
        rows,
        skipped,
    })
}

/// One more run of `variant` with its dispatches on `ctx` timed; `None` for a variant that
/// dispatches nothing there (the CPU rows).
fn profile(ctx: &GpuContext, variant: &mut Variant, steps: u64) -> Result<Option<Profiled>> {
    ctx.start_profile()?;
    let started = Instant::now();
    let run = variant.run(steps);
    let wall_seconds = started.elapsed().as_secs_f64();
    let profile = ctx.finish_profile()?;
    run?;
    Ok(profile
        .filter(|p| !p.kernels.is_empty())
        .map(|profile| Profiled {
            profile,
            wall_seconds,
        }))
}

impl BenchReport {
    /// The report as JSON: the parameters and every row's median, slowest and fastest rate.
    pub fn json(&self) -> serde_json::Value {
        let c = &self.config;
        serde_json::json!({
            "command": "bench",
            "schema": 1,
            "version": env!("CARGO_PKG_VERSION"),
            "kernel": c.kernel.name(),
            "grid": c.grid,
            "n": c.ns,
            "steps": c.steps,
            "reps": c.reps,
            "time_block": c.time_block.map_or(serde_json::json!("auto"), |k| serde_json::json!(k)),
            "wafers": [c.wafers.0, c.wafers.1],
            "devices": c.devices,
            "adapter": self.engine,
            "skipped": self.skipped.iter().map(|(name, why)| serde_json::json!({"variant": name, "reason": why})).collect::<Vec<_>>(),
            "rows": self.rows.iter().map(|r| serde_json::json!({
                "variant": r.name,
                "engine": r.engine,
                "n": r.shape.map(|s| s.n),
                "wafers": r.shape.map(|s| s.wafers),
                "devices": r.shape.map(|s| s.devices),
                "ranks": r.shape.map(|s| s.ranks),
                "time_block": r.engine.time_block(),
                "updates_per_second": {
                    "median": r.updates_per_second,
                    "min": r.min_updates_per_second,
                    "max": r.max_updates_per_second,
                },
                "baseline": r.baseline,
                "profile": r.profile.as_ref().map(|p| serde_json::json!({
                    "steps": c.steps,
                    "wall_seconds": p.wall_seconds,
                    "untimed_dispatches": p.profile.untimed,
                    "kernels": p.profile.kernels.iter().map(|k| serde_json::json!({
                        "kernel": k.label,
                        "dispatches": k.dispatches,
                        "gpu_seconds": k.seconds,
                    })).collect::<Vec<_>>(),
                })),
            })).collect::<Vec<_>>(),
        })
    }
}

/// Bytes a copy row moves per point update: one f32 read and one written.
const COPY_BYTES: f64 = 8.0;

impl BenchReport {
    /// With `--profile`: per GPU row, the GPU time per step of its dispatches and of each
    /// kernel, against the profiled run's wall time.
    fn write_profiles(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let steps = self.config.steps as f64;
        let ms = |seconds: f64| seconds * 1e3 / steps;
        let profiled: Vec<_> = self
            .rows
            .iter()
            .filter_map(|r| r.profile.as_ref().map(|p| (r, p)))
            .collect();
        if profiled.is_empty() {
            return Ok(());
        }
        writeln!(
            f,
            "GPU time per step (one more run of each variant, a timestamp before and after each dispatch on the first device):"
        )?;
        for (row, p) in profiled {
            let busy = p.profile.seconds();
            writeln!(
                f,
                "  {}: dispatches {:.3} ms of {:.3} ms wall ({:.0} %)",
                row.name,
                ms(busy),
                ms(p.wall_seconds),
                100.0 * busy / p.wall_seconds
            )?;
            for k in &p.profile.kernels {
                writeln!(
                    f,
                    "    {:<24} {:>9.3} ms {:>5.1} % {:>7.1} dispatches",
                    k.label,
                    ms(k.seconds),
                    100.0 * k.seconds / busy.max(f64::MIN_POSITIVE),
                    k.dispatches as f64 / steps
                )?;
            }
            if p.profile.untimed > 0 {
                writeln!(
                    f,
                    "    ({} dispatches past the profile's capacity, untimed)",
                    p.profile.untimed
                )?;
            }
        }
        Ok(())
    }

    fn row(&self, prefix: &str) -> Option<&BenchRow> {
        self.rows.iter().find(|r| r.name.starts_with(prefix))
    }

    fn rate(&self, prefix: &str) -> Option<f64> {
        self.row(prefix).map(|r| r.updates_per_second)
    }

    /// Bytes per second `row` moves at least: the copies 8 per update, the kernel's rows
    /// [`bytes_per_update`].
    fn bandwidth(&self, row: &BenchRow) -> f64 {
        let copy = ["GPU copy", "CPU copy"]
            .iter()
            .any(|p| row.name.starts_with(p));
        let bytes = match copy {
            true => COPY_BYTES,
            false => bytes_per_update(self.config.kernel),
        };
        row.updates_per_second * bytes
    }
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        writeln!(
            f,
            "{} on a {g}x{g} grid, {} steps x {} reps (median), adapter: {}",
            c.kernel.name(),
            c.steps,
            c.reps,
            self.engine,
            g = c.grid
        )?;
        let width = self.rows.iter().map(|r| r.name.len()).fold(48, usize::max);
        writeln!(
            f,
            "{:<width$} {:>9} {:>7} {:>9} {:>8} {:>7}",
            "variant", "G upd/s", "GB/s", "/ceiling", "/global", "/wafer"
        )?;
        let global = self.rate("GPU global");
        for row in &self.rows {
            let copy = match row.name.starts_with("GPU") {
                true => self.row("GPU copy"),
                false => self.row("CPU copy"),
            };
            let of_ceiling = copy.map_or("-".into(), |copy| {
                format!("{:.2}", self.bandwidth(row) / self.bandwidth(copy))
            });
            let ratio = |base: Option<f64>| {
                base.map_or("-".into(), |b| format!("{:.2}", row.updates_per_second / b))
            };
            let emulated = ["GPU emulated", "GPU cluster", "GPU fused"]
                .iter()
                .any(|p| row.name.starts_with(p));
            let vs_global = if emulated { ratio(global) } else { "-".into() };
            let baseline = row
                .baseline
                .as_ref()
                .and_then(|name| self.rows.iter().find(|r| &r.name == name));
            let vs_wafer = match baseline {
                Some(b) => ratio(Some(b.updates_per_second)),
                None => "-".into(),
            };
            writeln!(
                f,
                "{:<width$} {:>9.3} {:>7.2} {:>9} {:>8} {:>7}",
                row.name,
                row.updates_per_second / 1e9,
                self.bandwidth(row) / 1e9,
                of_ceiling,
                vs_global,
                vs_wafer
            )?;
        }
        for (name, why) in &self.skipped {
            writeln!(f, "{name:<48} skipped: {why}")?;
        }
        self.write_profiles(f)?;
        write!(
            f,
            "GB/s counts {} bytes per point update (each field read and written once per stage; the copies {COPY_BYTES}); /ceiling compares GB/s",
            bytes_per_update(c.kernel)
        )
    }
}
