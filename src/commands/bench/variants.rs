//! The bench's variants: what each row runs (an engine plan or a copy kernel), built for the
//! bench's problems on the GPU and the CPU backend.

use std::sync::Arc;

use rayon::prelude::*;

use super::BenchConfig;
use crate::engine::cpu::{ranks, CpuCluster};
use crate::engine::gpu::{
    direct_reads, fused_block, tile_cap, CopyKernel, GpuContext, GpuGlobal, Placement, TimeBlocks,
};
use crate::engine::{self, Backend, EnginePlan, Hardware};
use crate::kernels::Kernel;
use crate::model::{Problem, Simulator};
use crate::wafer::WaferGeometry;
use crate::{invalid, Result};

/// One thing to time: runs `steps` steps (or copy passes) and waits for them.
pub struct Variant<'a> {
    pub name: String,
    /// What runs, as data: an engine plan, or a copy kernel.
    pub engine: RowEngine,
    /// The problem's points per PE side, its wafers and devices (none for a copy kernel).
    pub shape: Option<RowShape>,
    /// The variant this one is compared with (a cluster's: the one big wafer of the same `n`).
    pub baseline: Option<String>,
    run: Box<dyn FnMut(u64) -> Result<()> + 'a>,
}

/// What a bench row runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum RowEngine {
    /// An engine of the problem, as `run` plans it.
    Plan(EnginePlan),
    /// A copy kernel on the backend: the memory ceiling.
    Copy { engine: CopyEngine, on: Backend },
}

impl RowEngine {
    /// Steps per time block (1: none); the variant runs whole blocks.
    pub fn time_block(&self) -> u32 {
        match self {
            RowEngine::Plan(plan) => plan.time_block(),
            RowEngine::Copy { .. } => 1,
        }
    }
}

/// The name a copy kernel's `engine` field carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyEngine {
    Copy,
}

/// A bench row's problem: points per PE side, wafers of the cluster and devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RowShape {
    pub n: u32,
    pub wafers: [u32; 2],
    pub devices: u32,
    /// MPI ranks the wafers are spread over (1: this process alone).
    pub ranks: u32,
}

impl<'a> Variant<'a> {
    fn copy(name: &str, on: Backend, run: impl FnMut(u64) -> Result<()> + 'a) -> Self {
        Self {
            name: name.into(),
            engine: RowEngine::Copy {
                engine: CopyEngine::Copy,
                on,
            },
            shape: None,
            baseline: None,
            run: Box::new(run),
        }
    }

    /// Runs `steps` steps and waits until they are done.
    pub fn run(&mut self, steps: u64) -> Result<()> {
        (self.run)(steps)
    }
}

/// The variants of a bench and those that did not fit (name and reason).
#[derive(Default)]
pub struct Lineup {
    pub variants: Vec<Variant<'static>>,
    pub skipped: Vec<(String, String)>,
    /// The device the GPU variants run on (the first of a multi-device cluster's).
    pub ctx: Option<Arc<GpuContext>>,
}

impl Lineup {
    /// Adds the variant `make` builds; one too large for the device or machine is recorded as
    /// skipped and the bench goes on.
    fn add(
        &mut self,
        name: String,
        make: impl FnOnce(String) -> Result<Variant<'static>>,
    ) -> Result<()> {
        match make(name.clone()) {
            Ok(variant) => self.variants.push(variant),
            Err(crate::Error::TooLarge(why)) => self.skipped.push((name, why)),
            Err(e) => return Err(e),
        }
        Ok(())
    }
}

/// The variants of a bench on its engine, and the engine's description. Each has run a
/// warm-up (pipelines compiled, caches filled).
pub fn variants(
    config: &BenchConfig,
    on_warning: &mut dyn FnMut(&str),
) -> Result<(Lineup, String)> {
    config.validate()?;
    let (ctx, warnings) = config.engine.open()?;
    warnings.iter().for_each(|w| on_warning(w));
    if config.profile {
        ctx.as_ref()
            .ok_or_else(|| {
                invalid!(
                    "--profile times GPU dispatches: it needs a GPU adapter, not the CPU backend"
                )
            })?
            .check_profile()?;
    }
    // Under mpirun the cluster row over the ranks takes them, no other row.
    let spread = ranks::take();
    let kernel = configure(config)?;
    let problems: Vec<Problem> = config
        .ns
        .iter()
        .map(|&n| problem(config, &kernel, n))
        .collect::<Result<_>>()?;
    let mut lineup = Lineup {
        ctx: ctx.clone(),
        ..Lineup::default()
    };
    let blocks = |hardware| problems.iter().map(|p| config.block(hardware, p)).collect();
    if let Some(ctx) = &ctx {
        let gpu_blocks: Vec<u32> = blocks(Hardware::of(Some(ctx)));
        add_gpu_variants(&mut lineup, ctx, &problems, &gpu_blocks)?;
        if config.wafers != (1, 1) {
            add_cluster_variants(&mut lineup, ctx, config, &kernel)?;
        }
    }
    if config.cpu || ctx.is_none() {
        let cpu_blocks: Vec<u32> = blocks(Hardware::Cpu);
        add_cpu_variants(&mut lineup, &problems, (config.grid, &cpu_blocks))?;
    }
    if config.wafers != (1, 1) && (config.cpu || ctx.is_none()) {
        add_cpu_cluster_variants(&mut lineup, config, &kernel, spread)?;
    }
    // A whole time block, so that its pipelines are compiled too.
    for variant in lineup.variants.iter_mut() {
        variant.run(variant.engine.time_block() as u64)?;
    }
    Ok((
        lineup,
        ctx.map_or("CPU backend".to_string(), |c| {
            format!("{}, tuning {}", c.describe(), c.tuning.line())
        }),
    ))
}

/// The kernel from random values (every bit exercised, no denormals of a decaying tail) on the
/// bench's grid, configured once for every variant.
pub(super) fn configure(config: &BenchConfig) -> Result<Arc<dyn Kernel>> {
    let options = config.kernel.random_options(1);
    config
        .kernel
        .configure(&options, glam::UVec2::splat(config.grid))
}

fn problem(config: &BenchConfig, kernel: &Arc<dyn Kernel>, n: u32) -> Result<Problem> {
    let w = config.kernel.spec().comm_width;
    let wafer = WaferGeometry::new(config.grid / n, config.grid / n, n, w)?;
    Problem::new(kernel.clone(), wafer)
}

/// The grid as a cluster on one device and, when asked, on several.
fn add_cluster_variants(
    lineup: &mut Lineup,
    ctx: &Arc<GpuContext>,
    config: &BenchConfig,
    kernel: &Arc<dyn Kernel>,
) -> Result<()> {
    for &n in &config.ns {
        let cluster = config.cluster(n)?;
        let problem = Problem::new(kernel.clone(), cluster)?;
        let mut devices = vec![1];
        if config.devices > 1 {
            devices.push(config.devices);
        }
        for d in devices {
            let placement = Placement {
                devices: d,
                ..Placement::default()
            };
            let plan = EnginePlan::gpu_wafer(false, 1);
            let g = cluster.wafer;
            let name = format!(
                "GPU cluster {}x{} of {}x{} PEs, n = {}, {d} dev",
                cluster.wafers_x, cluster.wafers_y, g.pes_x, g.pes_y, n
            );
            lineup.add(name, |name| {
                let sim = engine::simulator(&plan, Some(ctx), &problem, &placement)?;
                let mut variant = stepper(name, (plan, &problem, d), sim);
                variant.baseline = Some(wafer_name("GPU", &problem.geometry));
                Ok(variant)
            })?;
        }
    }
    Ok(())
}

/// The variant that steps `sim`, which runs `plan` on `problem` over `devices` devices.
fn stepper(
    name: String,
    (plan, problem, devices): (EnginePlan, &Problem, u32),
    mut sim: Box<dyn Simulator>,
) -> Variant<'static> {
    let c = &problem.cluster;
    Variant {
        name,
        engine: RowEngine::Plan(plan),
        shape: Some(RowShape {
            n: c.wafer.n,
            wafers: [c.wafers_x, c.wafers_y],
            devices,
            ranks: 1,
        }),
        baseline: None,
        run: Box::new(move |steps| sim.advance(steps)),
    }
}

/// The grid as a cluster of `--wafers` on the CPU backend, in this process and, under mpirun,
/// over the ranks: the same problem and plan, so the second row's ratio to the first is what
/// the packages' trips between ranks cost.
fn add_cpu_cluster_variants(
    lineup: &mut Lineup,
    config: &BenchConfig,
    kernel: &Arc<dyn Kernel>,
    mut spread: Option<Box<dyn ranks::Ranks>>,
) -> Result<()> {
    for &n in &config.ns {
        let (problem, plan) = cpu_cluster(config, kernel, n)?;
        let c = problem.cluster;
        let name = format!(
            "CPU cluster {}x{} of {}x{} PEs, n = {n}",
            c.wafers_x, c.wafers_y, c.wafer.pes_x, c.wafer.pes_y
        );
        if let Some(ranks) = spread.take() {
            let size = ranks.size();
            lineup.add(format!("{name}, over {size} MPI ranks"), |spread| {
                let sim = CpuCluster::on_ranks(&problem, Some(ranks))?
                    .with_time_block(&problem, plan.time_block());
                let mut variant = stepper(spread, (plan, &problem, 1), Box::new(sim));
                variant.baseline = Some(name.clone());
                if let Some(shape) = variant.shape.as_mut() {
                    shape.ranks = size as u32;
                }
                Ok(variant)
            })?;
        }
        lineup.add(name, |name| {
            let sim = CpuCluster::new(&problem)?.with_time_block(&problem, plan.time_block());
            Ok(stepper(name, (plan, &problem, 1), Box::new(sim)))
        })?;
    }
    Ok(())
}

/// The bench's grid at `n` points per PE as a cluster of `--wafers` on the CPU backend, and
/// its plan (the CPU backend's auto time block, or `--time-block`).
pub fn cpu_cluster(
    config: &BenchConfig,
    kernel: &Arc<dyn Kernel>,
    n: u32,
) -> Result<(Problem, EnginePlan)> {
    let problem = Problem::new(kernel.clone(), config.cluster(n)?)?;
    let time_block = config.block(Hardware::Cpu, &problem);
    Ok((problem, EnginePlan::CpuWafer { time_block }))
}

fn wafer_name(device: &str, g: &WaferGeometry) -> String {
    format!(
        "{device} emulated wafer {}x{} PEs, n = {}",
        g.pes_x, g.pes_y, g.n
    )
}

fn add_gpu_variants(
    lineup: &mut Lineup,
    ctx: &Arc<GpuContext>,
    problems: &[Problem],
    blocks: &[u32],
) -> Result<()> {
    lineup.add("GPU copy kernel (ceiling)".into(), |name| {
        let copy = CopyKernel::new(ctx.clone(), problems[0].geometry.points())?;
        Ok(Variant::copy(&name, Backend::Adapter, move |steps| {
            copy.run(steps)
        }))
    })?;
    lineup.add("GPU global kernel".into(), |name| {
        let global = GpuGlobal::new(ctx.clone(), &problems[0])?;
        let name = match global.bands() {
            1 => name,
            k => format!("{name} in {k} bands of rows"),
        };
        let plan = EnginePlan::Global {
            on: Backend::Adapter,
        };
        Ok(stepper(name, (plan, &problems[0], 1), Box::new(global)))
    })?;
    let built = |name, problem, (fused, time_block)| {
        let plan = EnginePlan::gpu_wafer(fused, time_block);
        let sim = engine::simulator(&plan, Some(ctx), problem, &Placement::default())?;
        Ok(stepper(name, (plan, problem, 1), sim))
    };
    for (problem, &time_block) in problems.iter().zip(blocks) {
        let explicit = wafer_name("GPU", &problem.geometry);
        lineup.add(explicit.clone(), |name| built(name, problem, (false, 1)))?;
        let g = problem.geometry;
        let name = format!("GPU fused wafer {}x{} PEs, n = {}", g.pes_x, g.pes_y, g.n);
        let cap = tile_cap(ctx.tuning.tile_bytes);
        let tile = fused_block(&g, problem.spec().fields.len(), cap);
        if tile.is_none() && !direct_reads(&ctx.tuning, problem.spec(), &g) {
            let why = format!("n = {} leaves no room for one PE in a fused tile", g.n);
            lineup.skipped.push((name, why));
            continue;
        }
        lineup.add(name.clone(), |name| {
            let mut variant = built(name, problem, (true, 1))?;
            variant.baseline = Some(explicit.clone());
            Ok(variant)
        })?;
        if time_block > 1 {
            let name = format!("{name}, time blocks of {time_block}");
            if let Err(why) = TimeBlocks::plan(&ctx.tuning, problem, time_block) {
                lineup.skipped.push((name, why));
                continue;
            }
            lineup.add(name, |name| {
                let mut variant = built(name, problem, (true, time_block))?;
                variant.baseline = Some(explicit.clone());
                Ok(variant)
            })?;
        }
    }
    Ok(())
}

fn add_cpu_variants(
    lineup: &mut Lineup,
    problems: &[Problem],
    (grid, blocks): (u32, &[u32]),
) -> Result<()> {
    let size = grid as usize * grid as usize;
    let (mut a, mut b) = (vec![1.0f32; size], vec![0.0f32; size]);
    lineup.variants.push(Variant::copy(
        "CPU copy (memory ceiling)",
        Backend::Cpu,
        move |steps| {
            for _ in 0..steps {
                b.par_chunks_mut(1 << 16)
                    .zip(a.par_chunks(1 << 16))
                    .for_each(|(d, s)| d.copy_from_slice(s));
                std::mem::swap(&mut a, &mut b);
            }
            Ok(())
        },
    ));
    for (problem, &time_block) in problems.iter().zip(blocks) {
        let plain = wafer_name("CPU", &problem.geometry);
        let built = |name, time_block| {
            let plan = EnginePlan::CpuWafer { time_block };
            let sim = engine::simulator(&plan, None, problem, &Placement::default())?;
            Ok(stepper(name, (plan, problem, 1), sim))
        };
        lineup.add(plain.clone(), |name| built(name, 1))?;
        if time_block > 1 {
            let name = format!("{plain}, time blocks of {time_block}");
            let g = problem.cluster.wafer;
            if let Err(why) = crate::blocking::link_band(problem.spec(), &g, time_block) {
                lineup.skipped.push((name, why));
                continue;
            }
            lineup.add(name, |name| {
                let mut variant = built(name, time_block)?;
                variant.baseline = Some(plain.clone());
                Ok(variant)
            })?;
        }
    }
    Ok(())
}
