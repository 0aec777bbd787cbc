//! Choosing where to run: a GPU adapter (from flags, then `WGPU_BACKEND` / `WGPU_ADAPTER_NAME`)
//! with the CPU backend as the fallback when no adapter exists and none was asked for.

pub mod cpu;
pub mod gpu;
mod plan;

pub use plan::{Backend, EnginePlan};

use std::sync::Arc;

use glam::UVec2;

use crate::blocking::TIME_BLOCKS;
use crate::cluster::Scheduler;
use crate::engine::cpu::{CpuCluster, CpuGlobal};
use crate::engine::gpu::point_blocks;
use crate::engine::gpu::split::{self, SplitCluster};
use crate::engine::gpu::{
    parse_backend, AdapterRequest, GpuCluster, GpuContext, GpuGlobal, Placement, PointBlock,
    RowBlock, TimeBlocks, Tuning, NATIVE_BACKENDS, TUNING_VAR,
};
use crate::kernels::{Driver, KernelSpec};
use crate::model::{Problem, Simulator};
use crate::{Error, Result};

/// Where the user asked to run.
#[derive(Clone, Debug, PartialEq)]
pub enum BackendChoice {
    /// The best adapter; the CPU backend if there is none.
    Auto,
    /// The CPU backend (rayon), no adapter at all.
    Cpu,
    /// These GPU backends only: no adapter is an error.
    Gpu(wgpu::Backends),
}

/// A validated request for an engine.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineRequest {
    pub backend: BackendChoice,
    /// Case-insensitive substring of the adapter name.
    pub adapter: Option<String>,
    /// How a cluster spreads over devices.
    pub placement: Placement,
}

impl EngineRequest {
    /// From the `--backend` and `--adapter` flags, falling back to `WGPU_BACKEND` and
    /// `WGPU_ADAPTER_NAME`.
    pub fn new(backend: Option<&str>, adapter: Option<&str>) -> Result<Self> {
        let env = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let (backend, from) = match backend {
            Some(b) => (Some(b.to_owned()), "--backend"),
            None => (env("WGPU_BACKEND"), "WGPU_BACKEND"),
        };
        let backend = match backend {
            None => BackendChoice::Auto,
            Some(b) if b.eq_ignore_ascii_case("auto") => BackendChoice::Auto,
            Some(b) if b.eq_ignore_ascii_case("cpu") => BackendChoice::Cpu,
            Some(b) => {
                BackendChoice::Gpu(parse_backend(&b).map_err(|e| crate::invalid!("{from}: {e}"))?)
            }
        };
        let adapter = adapter
            .map(str::to_owned)
            .or_else(|| env("WGPU_ADAPTER_NAME"));
        Ok(Self {
            backend,
            adapter,
            placement: Placement::default(),
        })
    }

    /// Opens the context to run `spec` on: as [`EngineRequest::open`], but with `auto` a
    /// software adapter gives way to the CPU backend for kernels it has no fast path for
    /// (Point windows wider than 3 x 3, which neither direct reads nor register blocks take):
    /// there the CPU backend runs several times faster.
    pub fn open_for(&self, spec: &KernelSpec) -> Result<(Option<Arc<GpuContext>>, Vec<String>)> {
        let (ctx, warnings) = self.open()?;
        let slow = |ctx: &GpuContext| ctx.adapter.is_software() && !fast_on_software(spec);
        match ctx {
            Some(ctx) if self.backend == BackendChoice::Auto && slow(&ctx) => {
                let note = format!(
                    "note: {} has no fast path for {}'s {}x{} windows; running on the CPU backend, which is faster there (--backend vulkan to use it anyway)",
                    ctx.describe(),
                    spec.name,
                    spec.comm_width + 1,
                    spec.comm_width + 1
                );
                Ok((None, vec![note]))
            }
            ctx => Ok((ctx, warnings)),
        }
    }

    /// Opens the GPU context this request names; `Ok(None)` means: use the CPU backend.
    pub fn open(&self) -> Result<(Option<Arc<GpuContext>>, Vec<String>)> {
        let request = |backends| AdapterRequest {
            backends,
            name: self.adapter.clone(),
        };
        match &self.backend {
            BackendChoice::Cpu => Ok((None, vec![])),
            BackendChoice::Gpu(backends) => GpuContext::new(&request(*backends)).map(with_warnings),
            BackendChoice::Auto => match GpuContext::new(&request(NATIVE_BACKENDS)) {
                // The CPU backend outruns llvmpipe's GL once its compile times count.
                Ok(ctx) if ctx.adapter.is_software_gl() => Ok((
                    None,
                    vec![format!(
                        "warning: {} is a software GL adapter; running on the CPU backend (--backend gl to use it anyway)",
                        ctx.describe()
                    )],
                )),
                Ok(ctx) => Ok(with_warnings(ctx)),
                Err(Error::NoAdapter(why)) if self.adapter.is_none() => Ok((
                    None,
                    vec![format!(
                        "warning: no GPU adapter found{why}; running on the CPU backend"
                    )],
                )),
                Err(e) => Err(e),
            },
        }
    }
}

/// Whether a software adapter has a fast path for `spec`: Rows3 stages, or Point windows of
/// at most 3 x 3 (the direct reads of `gpu::shard::direct_reads`).
fn fast_on_software(spec: &KernelSpec) -> bool {
    spec.stages.iter().all(|s| s.driver == Driver::Rows3) || spec.comm_width <= 2
}

fn with_warnings(ctx: Arc<GpuContext>) -> (Option<Arc<GpuContext>>, Vec<String>) {
    let mut warnings = vec![];
    if ctx.adapter.is_software() {
        warnings.push(format!(
            "warning: {} is a software adapter (runs on the CPU); numbers are not GPU numbers",
            ctx.describe()
        ));
    }
    if std::env::var_os(TUNING_VAR).is_some() {
        warnings.push(format!(
            "warning: {TUNING_VAR} sets the kernels' shapes: {}",
            ctx.tuning.line()
        ));
    }
    (Some(ctx), warnings)
}

/// What runs the arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// The emulated engine that is faster for the problem (see [`EngineKind::resolve`]).
    Auto,
    /// The engine `Auto` picks when it may not block in time (`--time-block 1`).
    AutoWithoutBlocks,
    /// The emulated wafer: PEs, Table 3's `sendrecv` and `compute` dispatches and SRAM
    /// layout, domain translation.
    Wafer,
    /// The emulated wafer with each stage one dispatch, a workgroup per block of PEs that
    /// receives into workgroup memory and computes there (on the CPU backend: `Wafer`).
    Fused,
    /// The plain global-grid kernel: no PEs, no translation (the reference).
    Global,
}

impl EngineKind {
    /// Parses `auto`, `wafer`, `fused` or `global`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "auto" => Ok(Self::Auto),
            "wafer" => Ok(Self::Wafer),
            "fused" => Ok(Self::Fused),
            "global" => Ok(Self::Global),
            _ => Err(crate::invalid!(
                "unknown engine '{name}': allowed auto, wafer, fused, global"
            )),
        }
    }

    /// The engine a `--check` compares against: the global kernel, or for it the emulated
    /// wafer on the engine `auto` picks (the one that fits, where only one does).
    pub fn other(self) -> Self {
        match self {
            Self::Auto | Self::AutoWithoutBlocks | Self::Wafer | Self::Fused => Self::Global,
            Self::Global => Self::Auto,
        }
    }

    /// The engine and placement `auto` stands for on `problem` on `hardware`: time blocks of
    /// [`auto_time_block`] steps, on an adapter with the fused engine where
    /// [`Hardware::blocks`] says; time blocks whenever they are asked for; the fused engine
    /// without them where [`Hardware::fuses`] says; the explicit wafer otherwise. Other kinds
    /// stand for themselves. Where the `run` reads its state before its end, `auto`'s blocks
    /// fit between two reads ([`RunLength::fit`]: a block runs only inside one `advance`).
    /// The measurements behind each choice: `docs/performance.md`, "What auto picks".
    pub fn resolve(
        self,
        problem: &Problem,
        placement: &Placement,
        hardware: Hardware,
        run: RunLength,
    ) -> (Self, Placement) {
        match self {
            Self::Auto if placement.time_block > 1 => (Self::Fused, placement.clone()),
            Self::Auto if hardware.blocks(problem, run) => (
                Self::Fused,
                Placement {
                    time_block: run.fit(auto_time_block(hardware, problem)),
                    ..placement.clone()
                },
            ),
            Self::Auto | Self::AutoWithoutBlocks if hardware.fuses(problem) => {
                (Self::Fused, placement.clone())
            }
            Self::Auto | Self::AutoWithoutBlocks => (Self::Wafer, placement.clone()),
            kind => (kind, placement.clone()),
        }
    }
}

/// How far a run goes: its steps, and the most it advances between two reads of its state
/// (samples, snapshots, checkpoints), which time blocks must fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLength {
    pub steps: u64,
    pub interval: u64,
}

impl RunLength {
    /// A run that reads its state only at the end.
    pub fn whole(steps: u64) -> Self {
        Self {
            steps,
            interval: steps,
        }
    }

    /// The block of at most `longest` steps to take: where the run reads its state before
    /// its end, the one that runs the most steps in blocks between two reads
    /// ([`crate::blocking::fitting`]).
    pub fn fit(self, longest: u32) -> u32 {
        match self.interval < self.steps {
            true => crate::blocking::fitting(longest, self.interval),
            false => longest,
        }
    }

    /// Whether the run's point updates in blocks of `k` steps of `problem` pay for compiling
    /// shallow water's blocks in registers ([`POINT_BLOCK_UPDATES_PER_THREAD`]; none where a
    /// block does not fit between two reads).
    fn pays_for_point_blocks(self, problem: &Problem, k: u32) -> bool {
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get()) as u64;
        self.interval >= u64::from(k)
            && self.steps * problem.geometry.points() >= POINT_BLOCK_UPDATES_PER_THREAD * threads
    }
}

/// Point updates in blocks per thread of the CPU adapter above which `auto` takes shallow
/// water's time blocks in registers there: their pipeline takes seconds to compile on one
/// thread, which only a long enough run wins back.
pub const POINT_BLOCK_UPDATES_PER_THREAD: u64 = 100_000_000;

/// What `auto` tells apart when it picks an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hardware {
    /// The CPU backend, no adapter.
    Cpu,
    /// A CPU adapter (lavapipe, llvmpipe), with the tuning its engines run under.
    SoftwareAdapter(Tuning),
    /// A GPU, with the tuning its engines run under.
    Gpu(Tuning),
}

impl Hardware {
    /// What the context runs on (`None`: the CPU backend).
    pub fn of(ctx: Option<&Arc<GpuContext>>) -> Self {
        match ctx {
            None => Self::Cpu,
            Some(ctx) if ctx.adapter.is_software() => Self::SoftwareAdapter(ctx.tuning),
            Some(ctx) => Self::Gpu(ctx.tuning),
        }
    }

    /// Whether `auto` blocks `problem` in time here: on the CPU backend every kernel at every
    /// `n`; on a GPU single-stage kernels up to n = 8 (above, the direct reads win), with the
    /// fused engine's tiles or what the tuning puts first ([`TimeBlocks::plan`]); on a CPU
    /// adapter where its tuning blocks in registers over the dense grid
    /// ([`RowBlock::applies`]: heat where the wafer's width in points is a multiple of 4),
    /// never in tiles (slower than the global kernel there), and shallow water's blocks in
    /// registers ([`PointBlock::applies`]) for a `run` long enough to pay for their compile
    /// ([`POINT_BLOCK_UPDATES_PER_THREAD`]).
    pub fn blocks(self, problem: &Problem, run: RunLength) -> bool {
        let (spec, g) = (problem.spec(), &problem.cluster.wafer);
        match self {
            Self::Cpu => true,
            Self::SoftwareAdapter(tuning) => {
                let longest = point_blocks::LONGEST;
                RowBlock::applies(&tuning, spec, g)
                    || (PointBlock::applies(&tuning, spec, g, longest)
                        && run.pays_for_point_blocks(problem, longest))
            }
            Self::Gpu(_) => spec.stages.len() == 1 && g.n <= 8,
        }
    }

    /// Whether `auto` takes the fused engine without time blocks for `problem` (its direct
    /// reads: none where the tuning has `fused=tile`): on a GPU every kernel at every `n` it
    /// does not block; on a CPU adapter single-stage kernels up to n = 32 (beyond, the
    /// explicit wafer is as fast) and shallow water at every `n`.
    pub fn fuses(self, problem: &Problem) -> bool {
        let n = problem.cluster.wafer.n;
        match self {
            Self::Cpu => false,
            Self::Gpu(tuning) => tuning.fused_direct,
            Self::SoftwareAdapter(tuning) => {
                tuning.fused_direct && (problem.spec().stages.len() > 1 || n <= 32)
            }
        }
    }
}

/// The longest time block `auto` takes for a kernel of `spec` on `hardware` where the wafer
/// allows it ([`auto_time_block`]).
pub fn longest_auto_block(hardware: Hardware, spec: &KernelSpec) -> u32 {
    match (hardware, spec.stages.len()) {
        (Hardware::SoftwareAdapter(_), 1) | (Hardware::Gpu(_), _) => 5,
        (Hardware::SoftwareAdapter(_), _) => point_blocks::LONGEST,
        (Hardware::Cpu, _) => {
            let stages = spec.stages.len() as u32;
            let fits = |k: &u32| k * stages <= CPU_BLOCK_REMAPS;
            TIME_BLOCKS.into_iter().filter(fits).max().unwrap_or(1)
        }
    }
}

/// The most remaps a CPU time block of `auto` spans: past it the reach that every span
/// computes twice costs more than the block saves (docs/performance.md: heat past 15 steps,
/// the paper's shallow water past 9, `swe-c`'s three stages past 5).
const CPU_BLOCK_REMAPS: u32 = 18;

/// Steps per time block that `auto` uses for `problem`: on a GPU 5; on a CPU adapter 5, 3
/// for shallow water (the longest it carries in registers); on the CPU backend the longest
/// of at most [`CPU_BLOCK_REMAPS`] remaps (15 steps of one stage, 9 of two, 5 of three);
/// shorter where that block does not fit the wafer (no point clear of its link bands, or on
/// an adapter no plan under its tuning, [`TimeBlocks::plan`]), none where none does.
pub fn auto_time_block(hardware: Hardware, problem: &Problem) -> u32 {
    let spec = problem.spec();
    let longest = longest_auto_block(hardware, spec);
    let wafer = &problem.cluster.wafer;
    let fits = |k| match hardware {
        Hardware::SoftwareAdapter(tuning) | Hardware::Gpu(tuning) => {
            TimeBlocks::plan(&tuning, problem, k).is_ok()
        }
        Hardware::Cpu => crate::blocking::link_band(spec, wafer, k).is_ok(),
    };
    TIME_BLOCKS
        .into_iter()
        .filter(|&k| k <= longest && fits(k))
        .max()
        .unwrap_or(1)
}

/// What `kind` runs `problem` as on `hardware`: [`EngineKind::resolve`], the fused engine
/// placed as such.
fn placed(
    kind: EngineKind,
    problem: &Problem,
    hardware: Hardware,
    (placement, run): (&Placement, RunLength),
) -> (EngineKind, Placement) {
    let (kind, placement) = kind.resolve(problem, placement, hardware, run);
    let fused = placement.fused || kind == EngineKind::Fused;
    (kind, Placement { fused, ..placement })
}

/// Sub-wafers per wafer the engine of `kind` runs `problem` as on the context's adapter
/// ([`split::parts`]): (1, 1) where one wafer's SRAM in that engine fits a storage binding,
/// on the CPU backend and for the global kernel.
pub fn sub_wafers(
    kind: EngineKind,
    ctx: Option<&Arc<GpuContext>>,
    problem: &Problem,
    engine: (&Placement, RunLength),
) -> Result<UVec2> {
    let Some(ctx) = ctx.filter(|_| kind != EngineKind::Global) else {
        return Ok(UVec2::ONE);
    };
    let hardware = Hardware::of(Some(ctx));
    let bytes = |p: &Problem| {
        Ok(GpuCluster::wafer_bytes(
            ctx,
            p,
            &placed(kind, p, hardware, engine).1,
        ))
    };
    let binding = GpuCluster::max_binding(ctx, engine.0);
    let parts = split::parts(problem, (binding, &ctx.adapter.info.name), bytes);
    match parts {
        // The fused engine's dense grid may hold what Table 3's blocks do not.
        Err(Error::TooLarge(why))
            if kind == EngineKind::Wafer
                && sub_wafers(EngineKind::Fused, Some(ctx), problem, engine).is_ok() =>
        {
            Err(Error::TooLarge(format!("{why}; --engine fused fits it")))
        }
        parts => parts,
    }
}

/// The engine of `kind` for `problem` on the context's adapter, or on the CPU without one:
/// `auto` resolved ([`EngineKind::resolve`]), wafers larger than a storage binding as
/// sub-wafers ([`sub_wafers`]).
pub fn plan(
    kind: EngineKind,
    ctx: Option<&Arc<GpuContext>>,
    problem: &Problem,
    engine: (&Placement, RunLength),
) -> Result<EnginePlan> {
    let parts = sub_wafers(kind, ctx, problem, engine)?;
    let emulated = split::split(problem, parts)?;
    let (kind, placement) = placed(kind, &emulated, Hardware::of(ctx), engine);
    Ok(match (kind, ctx) {
        (EngineKind::Auto | EngineKind::AutoWithoutBlocks, _) => {
            unreachable!("auto is resolved above")
        }
        (EngineKind::Global, Some(_)) => EnginePlan::Global {
            on: Backend::Adapter,
        },
        (EngineKind::Global, None) => EnginePlan::Global { on: Backend::Cpu },
        (EngineKind::Wafer | EngineKind::Fused, None) => EnginePlan::CpuWafer {
            time_block: placement.time_block,
        },
        (EngineKind::Wafer | EngineKind::Fused, Some(_)) => EnginePlan::GpuWafer {
            fused: placement.fused,
            time_block: placement.time_block,
            sub_wafers: parts.to_array(),
        },
    })
}

/// The plan of a command's engine: [`plan`] in one process; under mpirun [`spread_plan`], with
/// a warning for ranks that hold no wafer.
pub fn plan_for(
    (engine, kind): (&EngineRequest, EngineKind),
    ctx: Option<&Arc<GpuContext>>,
    problem: &Problem,
    run: RunLength,
    on_warning: &mut dyn FnMut(&str),
) -> Result<EnginePlan> {
    if cpu::ranks::world().is_none() {
        return plan(kind, ctx, problem, (&engine.placement, run));
    }
    if let Some(warning) = idle_ranks(problem) {
        on_warning(&warning);
    }
    spread_plan(engine, kind, problem, run)
}

/// Under mpirun, the plan every rank computes alike from the same command line: the emulated
/// wafers on the CPU backend (the only engine this version spreads over ranks).
pub fn spread_plan(
    engine: &EngineRequest,
    kind: EngineKind,
    problem: &Problem,
    run: RunLength,
) -> Result<EnginePlan> {
    let ranks = cpu::ranks::world().map_or(1, |w| w.size);
    if engine.backend != BackendChoice::Cpu {
        return Err(crate::invalid!(
            "under mpirun ({ranks} ranks) the wafers run on the CPU backend: add --backend cpu"
        ));
    }
    match plan(kind, None, problem, (&engine.placement, run))? {
        plan @ EnginePlan::CpuWafer { .. } => Ok(plan),
        _ => Err(crate::invalid!(
            "under mpirun the global kernel has no wafers to spread: use --engine auto or wafer"
        )),
    }
}

/// Under mpirun, the warning for ranks that hold no wafer of `problem` (more ranks than wafers).
fn idle_ranks(problem: &Problem) -> Option<String> {
    let (ranks, wafers) = (cpu::ranks::world()?.size, problem.cluster.count());
    (ranks > wafers).then(|| {
        format!(
            "warning: more MPI ranks ({ranks}) than wafers ({wafers}): the extra ranks hold no wafer and only follow"
        )
    })
}

/// A rank other than 0 under mpirun: steps its wafers of `problem` as `plan` says, as rank 0
/// orders, until it says the run is over.
pub fn follow(plan: &EnginePlan, problem: &Problem, placement: &Placement) -> Result<()> {
    CpuCluster::on_ranks(problem, cpu::ranks::take())?
        .with_time_block(problem, plan.time_block())
        .with_link_timeout(placement.timeout)
        .serve()
}

/// The engine `plan` says for `problem`, the cluster placed on devices as `placement` says.
pub fn simulator(
    plan: &EnginePlan,
    ctx: Option<&Arc<GpuContext>>,
    problem: &Problem,
    placement: &Placement,
) -> Result<Box<dyn Simulator>> {
    Ok(match (*plan, ctx) {
        (
            EnginePlan::GpuWafer {
                fused,
                time_block,
                sub_wafers,
            },
            Some(ctx),
        ) => {
            let parts = UVec2::from_array(sub_wafers);
            if parts != UVec2::ONE {
                // A link that cannot progress is named as asked for, not as the sub-wafers' link.
                Scheduler::new(problem.cluster, &problem.link_specs).preflight()?;
            }
            let placement = Placement {
                fused,
                time_block,
                sub_wafers: parts,
                ..placement.clone()
            };
            let cluster = GpuCluster::new(ctx.clone(), &split::split(problem, parts)?, &placement)?;
            match parts == UVec2::ONE {
                true => Box::new(cluster),
                false => Box::new(SplitCluster::new(cluster, problem.cluster, parts)),
            }
        }
        (EnginePlan::CpuWafer { time_block }, _) => {
            let ranks = cpu::ranks::take();
            let cluster = CpuCluster::on_ranks(problem, ranks)?;
            Box::new(
                cluster
                    .with_time_block(problem, time_block)
                    .with_link_timeout(placement.timeout),
            )
        }
        (
            EnginePlan::Global {
                on: Backend::Adapter,
            },
            Some(ctx),
        ) => {
            let binding = GpuCluster::max_binding(ctx, placement);
            Box::new(GpuGlobal::within(ctx.clone(), problem, binding)?)
        }
        (EnginePlan::Global { .. }, _) => Box::new(CpuGlobal::new(problem)?),
        (EnginePlan::GpuWafer { .. }, None) => {
            return Err(crate::invalid!("the plan {} needs an adapter", plan.line()))
        }
    })
}
