//! One device's thread of a cluster: it records the rounds of its wafers, submits when it
//! needs a package from another device, exchanges packages through the host links, and
//! waits within bounds.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::context::{GpuContext, MAX_STEPS_PER_SUBMISSION, UPDATES_PER_SUBMISSION};
use super::shard::{Part, Shard};
use crate::blocking::{self, InBlock};
use crate::cluster::host_link::{HostLink, WaitFailed};
use crate::cluster::{ClusterGeometry, Direction, LinkId, Scheduler};
use crate::{Error, Result};

/// The least time a device gets to finish one submission before it counts as hung (the link
/// timeout when that is longer).
pub(super) const MIN_DEVICE_TIMEOUT: Duration = Duration::from_secs(300);

/// One device's part: its wafers, its copy of the schedule, and what it has uploaded.
pub(super) struct DeviceRunner {
    pub(super) device: usize,
    pub(super) shard: Shard,
    pub(super) scheduler: Scheduler,
    /// Device of every wafer.
    pub(super) owner: Arc<Vec<usize>>,
    /// Local index of every wafer on this device.
    pub(super) local: Vec<Option<usize>>,
    /// Last state uploaded from each incoming host link, by dense link index.
    pub(super) uploaded: Vec<Option<u64>>,
    /// Time spent waiting on each host link: for its packages or for room in it.
    pub(super) waited: Vec<Duration>,
    /// Whether steps compute the edge first and defer the interior (this device sends
    /// packages to another and its wafers have interior PEs).
    pub(super) split: bool,
    /// `(local wafer, state)` whose interior compute of the step from `state` is deferred.
    pub(super) deferred: Vec<(usize, u64)>,
    /// The last submission not yet waited for: the device runs it while the next one is
    /// recorded.
    pub(super) in_flight: Option<wgpu::SubmissionIndex>,
    /// The states this `run_to` goes from and to (time blocks lie inside).
    pub(super) run: (u64, u64),
    /// Staging buffers for outgoing packages, free for reuse, by direction.
    pub(super) free_staging: [Vec<wgpu::Buffer>; 2],
    pub(super) rng: u64,
}

/// What a thread waits for on a host link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Waiting {
    Package,
    Room,
}

/// The schedule's phases of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Up,
    Right,
    Step,
}

/// Commands being recorded: an encoder and, while dispatches go in, its compute pass.
pub(super) struct Recorder {
    pub(super) encoder: Option<wgpu::CommandEncoder>,
    pub(super) pass: Option<wgpu::ComputePass<'static>>,
    /// Host-bound packages copied out since the last flush: link, state, staging buffer.
    pub(super) downloads: Vec<(usize, u64, wgpu::Buffer)>,
    pub(super) updates: u64,
    pub(super) rounds: u64,
}

impl Recorder {
    pub(super) fn new() -> Self {
        Self {
            encoder: None,
            pass: None,
            downloads: vec![],
            updates: 0,
            rounds: 0,
        }
    }

    pub(super) fn encoder(&mut self, ctx: &GpuContext) -> &mut wgpu::CommandEncoder {
        self.pass = None;
        self.encoder
            .get_or_insert_with(|| ctx.device.create_command_encoder(&Default::default()))
    }

    pub(super) fn pass(&mut self, ctx: &GpuContext) -> &mut wgpu::ComputePass<'static> {
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
    pub(super) fn submit(&mut self, ctx: &GpuContext) -> Option<wgpu::SubmissionIndex> {
        self.pass = None;
        let encoder = self.encoder.take()?;
        Some(ctx.queue.submit([encoder.finish()]))
    }

    pub(super) fn is_full(&self) -> bool {
        self.updates >= UPDATES_PER_SUBMISSION || self.rounds >= MAX_STEPS_PER_SUBMISSION
    }
}

/// The shared state of one `advance` across device threads.
pub(super) struct Shared<'a> {
    pub(super) cluster: ClusterGeometry,
    pub(super) host_links: &'a [Option<HostLink>],
    pub(super) timeout: Duration,
    pub(super) jitter: Option<(u64, Duration)>,
    pub(super) abort: AtomicBool,
}

impl DeviceRunner {
    /// Runs this device's wafers to state `target`, following the schedule.
    pub(super) fn run_to(&mut self, (from, target): (u64, u64), shared: &Shared) -> Result<()> {
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
    pub(super) fn record(&mut self, rec: &mut Recorder, phase: Phase, items: &[(usize, u64)]) {
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
    pub(super) fn upload(
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
    pub(super) fn download(&mut self, rec: &mut Recorder, link: LinkId, state: u64) {
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
    pub(super) fn flush(
        &mut self,
        rec: &mut Recorder,
        shared: &Shared,
        finish: bool,
    ) -> Result<()> {
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
    pub(super) fn wait_for(
        &self,
        index: Option<wgpu::SubmissionIndex>,
        shared: &Shared,
    ) -> Result<()> {
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
    pub(super) fn wait_error(
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

    pub(super) fn wafer_list(&self, c: &ClusterGeometry) -> String {
        let names: Vec<String> = self
            .shard
            .wafers
            .iter()
            .map(|&k| format!("{:?}", c.coords(k)))
            .collect();
        names.join(" ")
    }

    pub(super) fn sleep(&mut self, shared: &Shared) {
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
pub(super) fn inputs(c: &ClusterGeometry, phase: Phase, k: usize) -> Vec<LinkId> {
    match phase {
        Phase::Up => vec![],
        Phase::Right => vec![c.incoming(k, Direction::Up)],
        Phase::Step => vec![
            c.incoming(k, Direction::Right),
            c.incoming(k, Direction::Up),
        ],
    }
}
