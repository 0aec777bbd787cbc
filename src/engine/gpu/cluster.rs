//! The emulated cluster on the GPU: its wafers placed on one device (links are ring buffers
//! on the device) or spread over several (one thread and queue per device; links between
//! devices are host-side queues). Every device follows the same deterministic schedule
//! (`cluster::schedule`), so the values and the link statistics do not depend on the
//! placement or on the threads' timing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::context::GpuContext;
use super::device_runner::{DeviceRunner, Shared};
use super::shard::Shard;
use crate::blocking::{self};
use crate::cluster::host_link::HostLink;
use crate::cluster::{ClusterGeometry, Direction, LinkId, LinkStats, Scheduler};
use crate::field::GlobalField;
use crate::kernels::Kernel;
use crate::model::{Problem, Simulator};
use crate::{invalid, Error, Result};

/// How the cluster is placed on devices and how its threads behave.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Devices (each with its own queue and thread); wafers are split into contiguous runs.
    pub devices: u32,
    /// How long a device thread waits for a package or for room before it gives up.
    pub timeout: Duration,
    /// Random sleeps of up to this long before each phase, per device thread (shakes the
    /// threads' timing in tests; `None` in normal runs).
    pub jitter: Option<(u64, Duration)>,
    /// Most bytes one SRAM buffer may hold, below the adapter's storage-binding limit
    /// (`None`: that limit). Wafers beyond it go to further buffers (banks).
    pub max_binding: Option<u64>,
    /// Run each stage as one fused dispatch, a workgroup per block of PEs, where the block
    /// fits workgroup memory (the explicit `sendrecv` and `compute` dispatches otherwise).
    pub fused: bool,
    /// Steps per time block (1: none; odd), where the kernel and the wafer allow it: the
    /// fused engine on the GPU, the CPU backend ([`crate::blocking`]).
    pub time_block: u32,
    /// Each wafer asked for is a block of this many sub-wafers of the cluster placed
    /// ([`super::split`]); devices take whole blocks.
    pub sub_wafers: glam::UVec2,
}

impl Default for Placement {
    fn default() -> Self {
        Self {
            devices: 1,
            timeout: Duration::from_secs(60),
            jitter: None,
            max_binding: None,
            fused: false,
            time_block: 1,
            sub_wafers: glam::UVec2::ONE,
        }
    }
}

/// Largest number of devices.
pub const MAX_DEVICES: u32 = 64;

impl Placement {
    /// The wafers asked for, of which `cluster` holds blocks of [`Placement::sub_wafers`].
    fn wafers(&self, cluster: &ClusterGeometry) -> glam::UVec2 {
        glam::UVec2::new(cluster.wafers_x, cluster.wafers_y) / self.sub_wafers
    }

    /// Checks the device count against the cluster.
    pub fn validate(&self, cluster: &ClusterGeometry) -> Result<()> {
        let wafers = self.wafers(cluster);
        let most = MAX_DEVICES.min(wafers.x * wafers.y);
        if self.devices == 0 || self.devices > most {
            return Err(invalid!(
                "devices = {} is out of range: allowed 1..={most} (at most one per wafer of the {}x{} cluster)",
                self.devices,
                wafers.x,
                wafers.y
            ));
        }
        if self.timeout.is_zero() {
            return Err(invalid!("link timeout = 0 s: allowed more than 0"));
        }
        blocking::check_steps(self.time_block).map_err(|why| invalid!("{why}"))
    }

    /// The device of wafer `k`: contiguous runs of the wafers asked for per device.
    pub fn device_of(&self, cluster: &ClusterGeometry, k: usize) -> usize {
        let (wafers, at) = (self.wafers(cluster), cluster.coords(k) / self.sub_wafers);
        let asked = (at.y * wafers.x + at.x) as usize;
        asked * self.devices as usize / (wafers.x * wafers.y) as usize
    }
}

/// The cluster engine (a 1x1 cluster is the single wafer, its links joining its edges).
pub struct GpuCluster {
    cluster: ClusterGeometry,
    kernel: Arc<dyn Kernel>,
    runners: Vec<DeviceRunner>,
    host_links: Vec<Option<HostLink>>,
    placement: Placement,
    /// Remaps (stages) done.
    remaps: u64,
    /// Why an earlier `advance` failed: the wafers are then at different steps for good.
    failed: Option<String>,
}

/// Stops the other device threads when its thread ends with an error or a panic.
struct AbortOnFailure<'a> {
    shared: &'a Shared<'a>,
    ok: bool,
}

impl Drop for AbortOnFailure<'_> {
    fn drop(&mut self) {
        if !self.ok {
            self.shared.abort.store(true, Ordering::SeqCst);
            self.shared
                .host_links
                .iter()
                .flatten()
                .for_each(HostLink::wake);
        }
    }
}

impl GpuCluster {
    /// Places the problem's cluster on `ctx` and, for more devices, on its peers.
    pub fn new(ctx: Arc<GpuContext>, problem: &Problem, placement: &Placement) -> Result<Self> {
        let c = problem.cluster;
        placement.validate(&c)?;
        let specs = problem.link_specs.clone();
        Scheduler::new(c, &specs).preflight()?;
        let ring = specs.iter().map(|s| s.capacity).max().unwrap_or(1).max(1);
        let owner: Arc<Vec<usize>> =
            Arc::new((0..c.count()).map(|k| placement.device_of(&c, k)).collect());
        let crosses = |k: usize, dir: Direction| owner[k] != owner[c.neighbour(k, dir)];
        let host_links = (0..specs.len())
            .map(|i| {
                let id = LinkId::of_index(i);
                crosses(id.from, id.dir).then(|| HostLink::new(specs[i].capacity))
            })
            .collect();
        let mut runners = vec![];
        for (device, ctx) in ctx
            .peers(placement.devices as usize)?
            .into_iter()
            .enumerate()
        {
            let wafers: Vec<usize> = (0..c.count()).filter(|&k| owner[k] == device).collect();
            let mut local = vec![None; c.count()];
            for (l, &k) in wafers.iter().enumerate() {
                local[k] = Some(l);
            }
            let sends = wafers
                .iter()
                .any(|&k| Direction::ALL.iter().any(|&dir| crosses(k, dir)));
            let max_binding = Self::max_binding(&ctx, placement);
            let options = (max_binding, placement.fused, placement.time_block);
            let shard = Shard::new(ctx, problem, wafers, ring, options)?;
            runners.push(DeviceRunner {
                device,
                split: sends && shard.can_defer_interior(),
                deferred: vec![],
                in_flight: None,
                run: (0, 0),
                free_staging: [vec![], vec![]],
                shard,
                scheduler: Scheduler::new(c, &specs),
                owner: owner.clone(),
                local,
                uploaded: vec![None; specs.len()],
                waited: vec![Duration::ZERO; specs.len()],
                rng: placement.jitter.map_or(1, |(seed, _)| seed) ^ (device as u64 + 1) << 32,
            });
        }
        Ok(Self {
            cluster: c,
            kernel: problem.kernel.clone(),
            runners,
            host_links,
            placement: placement.clone(),
            remaps: 0,
            failed: None,
        })
    }

    /// Most bytes one SRAM buffer may hold on `ctx`'s adapter as `placement` places it.
    pub fn max_binding(ctx: &GpuContext, placement: &Placement) -> u64 {
        ctx.adapter
            .max_binding_bytes()
            .min(placement.max_binding.unwrap_or(u64::MAX))
    }

    /// Bytes of one wafer's SRAM slot (every field) of `problem` on `ctx` as `placement`
    /// places it: one buffer must hold at least that.
    pub fn wafer_bytes(ctx: &GpuContext, problem: &Problem, placement: &Placement) -> u64 {
        let engine = (placement.fused, placement.time_block);
        super::shard::wafer_bytes(&ctx.tuning, problem, engine)
    }

    /// Refuses to go on after a failed `advance`.
    fn check_usable(&self) -> Result<()> {
        match &self.failed {
            None => Ok(()),
            Some(why) => Err(Error::Gpu(format!(
                "the cluster stopped at mixed steps after an earlier failure ({why})"
            ))),
        }
    }

    /// Link statistics so far, by dense link index: the schedule's counts and the time the
    /// device threads waited on the link.
    pub fn link_stats(&self) -> Vec<LinkStats> {
        let mut stats = self.runners[0].scheduler.stats();
        for runner in &self.runners {
            for (s, waited) in stats.iter_mut().zip(&runner.waited) {
                s.wait_ms += waited.as_secs_f64() * 1e3;
            }
        }
        stats
    }

    /// The raw SRAM of every wafer's first field (`x` of Table 3), wafer-major in cluster
    /// order.
    pub fn sram(&self) -> Result<Vec<f32>> {
        let mut sram = vec![];
        for runner in &self.runners {
            sram.extend(runner.shard.sram(self.step())?.swap_remove(0));
        }
        Ok(sram)
    }

    /// SRAM buffers per slot over all devices: one per bank of wafers that fits a binding.
    pub fn banks(&self) -> usize {
        self.runners.iter().map(|r| r.shard.banks()).sum()
    }

    /// Cells of one field of one wafer in the devices' SRAM layout (Table 3's, or the fused
    /// engine's dense grid).
    pub fn wafer_cells(&self) -> u64 {
        self.runners[0].shard.wafer_cells()
    }

    /// The cluster it emulates.
    pub fn cluster(&self) -> ClusterGeometry {
        self.cluster
    }

    /// What runs, the cluster named `wafers`: engine, devices and adapter.
    pub fn describe_as(&self, wafers: &str) -> String {
        let adapter = self.runners[0].shard.ctx.describe();
        let engine = self.runners[0].shard.engine();
        match self.runners.len() {
            1 => format!("emulated {wafers} ({engine}) on {adapter}"),
            d => format!(
                "emulated {wafers} ({engine}) on {d} devices (one thread each) of {adapter}"
            ),
        }
    }

    /// The raw ring buffers of the links in direction `dir` on device 0.
    pub fn link_ring(&self, dir: Direction) -> Result<Vec<f32>> {
        self.runners[0].shard.link_ring(dir)
    }
}

impl Simulator for GpuCluster {
    fn advance(&mut self, steps: u64) -> Result<()> {
        self.check_usable()?;
        let (from, target) = (
            self.remaps,
            self.remaps + steps * self.kernel.spec().stages.len() as u64,
        );
        let shared = Shared {
            cluster: self.cluster,
            host_links: &self.host_links,
            timeout: self.placement.timeout,
            jitter: self.placement.jitter,
            abort: AtomicBool::new(false),
        };
        let results: Vec<Result<()>> = match self.runners.as_mut_slice() {
            [only] => vec![only.run_to((from, target), &shared)],
            runners => std::thread::scope(|scope| {
                let handles: Vec<_> = runners
                    .iter_mut()
                    .map(|runner| {
                        let shared = &shared;
                        scope.spawn(move || {
                            let mut guard = AbortOnFailure { shared, ok: false };
                            let result = runner.run_to((from, target), shared);
                            guard.ok = result.is_ok();
                            result
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(Error::Gpu("a device thread panicked".into())))
                    })
                    .collect()
            }),
        };
        // The first failure that is not another thread's abort is the cause.
        let mut errors: Vec<Error> = results.into_iter().filter_map(Result::err).collect();
        errors.sort_by_key(|e| matches!(e, Error::Aborted(_)));
        if let Some(e) = errors.into_iter().next() {
            self.failed = Some(e.to_string());
            return Err(e);
        }
        self.remaps = target;
        Ok(())
    }

    fn step(&self) -> u64 {
        self.remaps / self.kernel.spec().stages.len() as u64
    }

    fn state(&self) -> Result<Vec<GlobalField>> {
        self.check_usable()?;
        let glam::UVec2 { x: nx, y: ny } = self.cluster.whole()?.global_size();
        let spec = self.kernel.spec();
        let mut state = vec![GlobalField::zeros(nx, ny); spec.fields.len()];
        let shift = spec.shift_after(self.remaps);
        for runner in &self.runners {
            runner.shard.gather_into(&mut state, self.step(), shift)?;
        }
        Ok(state)
    }

    fn describe(&self) -> String {
        self.describe_as(&self.cluster.describe())
    }

    fn link_stats(&self) -> Option<Vec<LinkStats>> {
        Some(GpuCluster::link_stats(self))
    }

    fn time_block(&self) -> u32 {
        self.runners[0].shard.time_block()
    }
}
