//! The emulated cluster on the GPU: its wafers placed on one device (links are ring buffers
//! on the device) or spread over several (one thread and queue per device; links between
//! devices are host-side queues). Every device follows the same deterministic schedule
//! (`cluster::schedule`), so the values and the link statistics do not depend on the
//! placement or on the threads' timing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::context::{GpuContext, MAX_STEPS_PER_SUBMISSION, UPDATES_PER_SUBMISSION};
use super::shard::{Part, Shard};
use crate::blocking::{self, InBlock};
use crate::cluster::host_link::{HostLink, WaitFailed};
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

/// The least time a device gets to finish one submission before it counts as hung (the link
/// timeout when that is longer).
const MIN_DEVICE_TIMEOUT: Duration = Duration::from_secs(300);

/// One device's part: its wafers, its copy of the schedule, and what it has uploaded.
struct DeviceRunner {
    device: usize,
    shard: Shard,
    scheduler: Scheduler,
    /// Device of every wafer.
    owner: Arc<Vec<usize>>,
    /// Local index of every wafer on this device.
    local: Vec<Option<usize>>,
    /// Last state uploaded from each incoming host link, by dense link index.
    uploaded: Vec<Option<u64>>,
    /// Time spent waiting on each host link: for its packages or for room in it.
    waited: Vec<Duration>,
    /// Whether steps compute the edge first and defer the interior (this device sends
    /// packages to another and its wafers have interior PEs).
    split: bool,
    /// `(local wafer, state)` whose interior compute of the step from `state` is deferred.
    deferred: Vec<(usize, u64)>,
    /// The last submission not yet waited for: the device runs it while the next one is
    /// recorded.
    in_flight: Option<wgpu::SubmissionIndex>,
    /// The states this `run_to` goes from and to (time blocks lie inside).
    run: (u64, u64),
    /// Staging buffers for outgoing packages, free for reuse, by direction.
    free_staging: [Vec<wgpu::Buffer>; 2],
    rng: u64,
}

/// What a thread waits for on a host link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiting {
    Package,
    Room,
}

/// The schedule's phases of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Up,
    Right,
    Step,
}

/// Commands being recorded: an encoder and, while dispatches go in, its compute pass.
struct Recorder {
    encoder: Option<wgpu::CommandEncoder>,
    pass: Option<wgpu::ComputePass<'static>>,
    /// Host-bound packages copied out since the last flush: link, state, staging buffer.
    downloads: Vec<(usize, u64, wgpu::Buffer)>,
    updates: u64,
    rounds: u64,
}

impl Recorder {
    fn new() -> Self {
        Self {
            encoder: None,
            pass: None,
            downloads: vec![],
            updates: 0,
            rounds: 0,
        }
    }

    fn encoder(&mut self, ctx: &GpuContext) -> &mut wgpu::CommandEncoder {
        self.pass = None;
        self.encoder
            .get_or_insert_with(|| ctx.device.create_command_encoder(&Default::default()))
    }

    fn pass(&mut self, ctx: &GpuContext) -> &mut wgpu::ComputePass<'static> {
        if self.pass.is_none() {
            let pass = self
                .encoder(ctx)
                .begin_compute_pass(&Default::default())
                .forget_lifetime();
            self.pass = Some(pass);
        }
        self.pass.as_mut().expect("just opened")
    }

    /// Submits what is recorded without waiting.
    fn submit(&mut self, ctx: &GpuContext) -> Option<wgpu::SubmissionIndex> {
        self.pass = None;
        let encoder = self.encoder.take()?;
        Some(ctx.queue.submit([encoder.finish()]))
    }

    fn is_full(&self) -> bool {
        self.updates >= UPDATES_PER_SUBMISSION || self.rounds >= MAX_STEPS_PER_SUBMISSION
    }
}

/// The shared state of one `advance` across device threads.
struct Shared<'a> {
    cluster: ClusterGeometry,
    host_links: &'a [Option<HostLink>],
    timeout: Duration,
    jitter: Option<(u64, Duration)>,
    abort: AtomicBool,
}

impl DeviceRunner {
    /// Runs this device's wafers to state `target`, following the schedule.
    fn run_to(&mut self, (from, target): (u64, u64), shared: &Shared) -> Result<()> {
        self.run = (from, target);
        let mut rec = Recorder::new();
        let points = shared.cluster.wafer.points();
        while let Some(round) = self.scheduler.next_round(target)? {
            if shared.abort.load(Ordering::SeqCst) {
                return Err(Error::Aborted(format!(
                    "device {} stopped at round {} because another device failed",
                    self.device, round.number
                )));
            }
            for (phase, items) in [
                (Phase::Up, &round.up),
                (Phase::Right, &round.right),
                (Phase::Step, &round.step),
            ] {
                let mine: Vec<(usize, usize, u64)> = items
                    .iter()
                    .filter_map(|&(k, s)| self.local[k].map(|l| (k, l, s)))
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                self.sleep(shared);
                for &(k, _, s) in &mine {
                    for link in inputs(&shared.cluster, phase, k) {
                        self.upload(&mut rec, link, s, shared)?;
                    }
                }
                let local: Vec<(usize, u64)> = mine.iter().map(|&(_, l, s)| (l, s)).collect();
                self.record(&mut rec, phase, &local);
                let dir = match phase {
                    Phase::Up => Direction::Up,
                    Phase::Right => Direction::Right,
                    Phase::Step => {
                        rec.updates += points * mine.len() as u64;
                        continue;
                    }
                };
                for &(k, _, s) in &mine {
                    let link = LinkId { from: k, dir };
                    if shared.host_links[link.index()].is_some() {
                        self.download(&mut rec, link, s);
                    }
                }
            }
            rec.rounds += 1;
            // Packages leave at the end of their round at the latest.
            if rec.is_full() || !rec.downloads.is_empty() {
                self.flush(&mut rec, shared, false)?;
            }
        }
        let deferred = std::mem::take(&mut self.deferred);
        self.shard
            .compute(rec.pass(&self.shard.ctx), &deferred, Part::Interior);
        self.flush(&mut rec, shared, true)
    }

    /// Records one phase for `items`, `(local wafer, state)` pairs. A step first completes
    /// any deferred interior (its `sendrecv` reads every owned cell); when `split`, it then
    /// computes the edge only and defers the interior to the next flush.
    /// With time blocks, steps inside a block compute its parts, and packages of its inner
    /// states come partly from the history.
    fn record(&mut self, rec: &mut Recorder, phase: Phase, items: &[(usize, u64)]) {
        let pass = rec.pass(&self.shard.ctx);
        let block = self.shard.block_remaps();
        let of = |at: InBlock| -> Vec<(usize, u64)> {
            items
                .iter()
                .copied()
                .filter(|&(_, s)| blocking::position(block, s, self.run) == at)
                .collect()
        };
        let (plain, start, inner) = (of(InBlock::No), of(InBlock::Start), of(InBlock::Inner));
        match phase {
            Phase::Up | Phase::Right => {
                let dir = match phase {
                    Phase::Up => Direction::Up,
                    _ => Direction::Right,
                };
                self.shard.pack(pass, dir, &plain, false);
                self.shard.pack(pass, dir, &start, false);
                self.shard.pack(pass, dir, &inner, true);
            }
            Phase::Step => {
                let deferred = std::mem::take(&mut self.deferred);
                self.shard.compute(pass, &deferred, Part::Interior);
                self.shard.sendrecv(pass, items);
                self.shard.compute(pass, &start, Part::BlockStart);
                self.shard.compute(pass, &inner, Part::LinkBands);
                if self.split {
                    self.shard.compute(pass, &plain, Part::Edge);
                    self.deferred = plain;
                } else {
                    self.shard.compute(pass, &plain, Part::All);
                }
            }
        }
    }

    /// Makes package `state` of an incoming host link present in this device's ring.
    fn upload(
        &mut self,
        rec: &mut Recorder,
        link: LinkId,
        state: u64,
        shared: &Shared,
    ) -> Result<()> {
        let i = link.index();
        let Some(host) = &shared.host_links[i] else {
            return Ok(());
        };
        if self.uploaded[i] == Some(state) {
            return Ok(());
        }
        let package = match host.try_pop() {
            Some(p) => p,
            None => {
                self.flush(rec, shared, true)?;
                let started = Instant::now();
                let popped = host.pop(shared.timeout, &shared.abort);
                self.waited[i] += started.elapsed();
                popped.map_err(|why| self.wait_error(why, link, state, Waiting::Package, shared))?
            }
        };
        if package.0 != state {
            return Err(Error::Gpu(format!(
                "the {} delivered the step-{} package where step {state} was due",
                link.describe(&shared.cluster),
                package.0
            )));
        }
        // `write_buffer` lands before the next submission: submit what is recorded first.
        rec.submit(&self.shard.ctx);
        let (ring, offset, _) = self.shard.slot(link, state);
        self.shard
            .ctx
            .queue
            .write_buffer(ring, offset, bytemuck::cast_slice(&package.1));
        self.uploaded[i] = Some(state);
        Ok(())
    }

    /// Copies package `state` of an outgoing host link out of this device's ring.
    fn download(&mut self, rec: &mut Recorder, link: LinkId, state: u64) {
        let (ring, offset, size) = self.shard.slot(link, state);
        let ctx = &self.shard.ctx;
        let staging = self.free_staging[link.dir as usize]
            .pop()
            .unwrap_or_else(|| {
                ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("package out"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            });
        rec.encoder(ctx)
            .copy_buffer_to_buffer(ring, offset, &staging, 0, size);
        rec.downloads.push((link.index(), state, staging));
    }

    /// Submits what is recorded, then the deferred interior computes; waits for the former
    /// only, and hands the copied-out packages to their host links in schedule order while
    /// the interior runs. Without packages to hand over and unless `finish`, waits only for
    /// the previous submission.
    fn flush(&mut self, rec: &mut Recorder, shared: &Shared, finish: bool) -> Result<()> {
        let ctx = self.shard.ctx.clone();
        let packed = rec.submit(&ctx);
        let deferred = std::mem::take(&mut self.deferred);
        if !deferred.is_empty() {
            self.shard
                .compute(rec.pass(&ctx), &deferred, Part::Interior);
            rec.submit(&ctx);
        }
        for (_, _, staging) in &rec.downloads {
            staging.map_async(wgpu::MapMode::Read, .., |_| {});
        }
        // Without packages to read, the device keeps one submission queued behind the one
        // it runs, rather than idle while the next is recorded.
        let wait = match finish || !rec.downloads.is_empty() {
            true => {
                self.in_flight = None;
                Some(packed)
            }
            false => std::mem::replace(&mut self.in_flight, packed).map(Some),
        };
        if let Some(index) = wait {
            self.wait_for(index, shared)?;
        }
        for (link, state, staging) in std::mem::take(&mut rec.downloads) {
            let cells: Vec<f32> = bytemuck::cast_slice(
                &staging
                    .get_mapped_range(..)
                    .map_err(|e| Error::Gpu(format!("reading a package failed: {e}")))?,
            )
            .to_vec();
            staging.unmap();
            let id = LinkId::of_index(link);
            self.free_staging[id.dir as usize].push(staging);
            let host = shared.host_links[link]
                .as_ref()
                .expect("downloads go to host links");
            let started = Instant::now();
            let pushed = host.push((state, cells), shared.timeout, &shared.abort);
            self.waited[link] += started.elapsed();
            pushed.map_err(|why| self.wait_error(why, id, state, Waiting::Room, shared))?;
        }
        rec.updates = 0;
        rec.rounds = 0;
        Ok(())
    }

    /// Waits for the device to finish submission `index` (everything submitted when `None`),
    /// within the run's timeout.
    fn wait_for(&self, index: Option<wgpu::SubmissionIndex>, shared: &Shared) -> Result<()> {
        let limit = shared.timeout.max(MIN_DEVICE_TIMEOUT);
        let wait = wgpu::PollType::Wait {
            submission_index: index,
            timeout: Some(limit),
        };
        self.shard.ctx.device.poll(wait).map(|_| ()).map_err(|e| {
            Error::Timeout(format!(
                "device {} (wafers {}) did not finish its work of round {} within {limit:?}: {e}; the device may be lost or hung",
                self.device,
                self.wafer_list(&shared.cluster),
                self.scheduler.rounds()
            ))
        })
    }

    /// The error for a wait on a host link that did not end well.
    fn wait_error(
        &self,
        why: WaitFailed,
        link: LinkId,
        state: u64,
        waiting: Waiting,
        shared: &Shared,
    ) -> Error {
        let c = &shared.cluster;
        let to = c.neighbour(link.from, link.dir);
        let (wafer, what, other) = match waiting {
            Waiting::Room => (
                link.from,
                "room to send its",
                format!("to device {}", self.owner[to]),
            ),
            Waiting::Package => (to, "its", format!("from device {}", self.owner[link.from])),
        };
        let glam::UVec2 { x, y } = c.coords(wafer);
        let message = format!(
            "wafer ({x},{y}) on device {} waited {:?} for {what} step-{state} package on the {} {other}",
            self.device,
            shared.timeout,
            link.describe(c)
        );
        match why {
            WaitFailed::TimedOut => Error::Timeout(format!(
                "{message}; that device may be lost or hung, or --link-timeout too short"
            )),
            WaitFailed::Aborted => Error::Aborted(format!("{message}, when another device failed")),
        }
    }

    fn wafer_list(&self, c: &ClusterGeometry) -> String {
        let names: Vec<String> = self
            .shard
            .wafers
            .iter()
            .map(|&k| format!("{:?}", c.coords(k)))
            .collect();
        names.join(" ")
    }

    fn sleep(&mut self, shared: &Shared) {
        if let Some((_, max)) = shared.jitter {
            // xorshift64: a cheap, seeded sequence per device.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            std::thread::sleep(max.mul_f64((self.rng % 1024) as f64 / 1024.0));
        }
    }
}

/// The links a wafer needs in a phase: the up package from below to forward its corner, and
/// both incoming packages to step.
fn inputs(c: &ClusterGeometry, phase: Phase, k: usize) -> Vec<LinkId> {
    match phase {
        Phase::Up => vec![],
        Phase::Right => vec![c.incoming(k, Direction::Up)],
        Phase::Step => vec![
            c.incoming(k, Direction::Right),
            c.incoming(k, Direction::Up),
        ],
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
