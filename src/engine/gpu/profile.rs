//! Where a GPU run spends its time: while a profile is recorded, every dispatch sits between
//! two timestamps (`TIMESTAMP_QUERY_INSIDE_PASSES`), and the durations are summed per kernel.

use crate::{Error, Result};

/// The device features a profile needs.
pub const PROFILE_FEATURES: wgpu::Features =
    wgpu::Features::TIMESTAMP_QUERY.union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);

/// Timestamps per query set (wgpu's most).
const QUERIES_PER_SET: u32 = wgpu::QUERY_SET_MAX_QUERIES;
/// Query sets one profile may fill: 512 Ki dispatches; later dispatches are counted, not timed.
const MAX_SETS: usize = 256;

/// The timestamps of a profile being recorded: two per dispatch, and the dispatch's kernel.
#[derive(Default)]
pub(crate) struct Recording {
    sets: Vec<wgpu::QuerySet>,
    labels: Vec<String>,
    untimed: u64,
}

impl Recording {
    /// Records `dispatch` between two timestamps, or bare once every set is full.
    pub(crate) fn around(
        &mut self,
        device: &wgpu::Device,
        pass: &mut wgpu::ComputePass<'_>,
        label: &str,
        dispatch: impl FnOnce(&mut wgpu::ComputePass<'_>),
    ) {
        let per_set = QUERIES_PER_SET as usize / 2;
        let slot = self.labels.len() % per_set;
        if slot == 0 && self.labels.len() / per_set == self.sets.len() {
            if self.sets.len() == MAX_SETS {
                self.untimed += 1;
                return dispatch(pass);
            }
            self.sets
                .push(device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("profile"),
                    ty: wgpu::QueryType::Timestamp,
                    count: QUERIES_PER_SET,
                }));
        }
        let set = &self.sets[self.labels.len() / per_set];
        pass.write_timestamp(set, 2 * slot as u32);
        dispatch(pass);
        pass.write_timestamp(set, 2 * slot as u32 + 1);
        self.labels.push(label.to_string());
    }

    /// Reads the timestamps back (every recorded dispatch must have been submitted) and sums
    /// them per kernel, in the order the kernels first ran.
    pub(crate) fn finish(self, ctx: &super::GpuContext) -> Result<Profile> {
        let mut ticks: Vec<u64> = vec![];
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let mut buffers = vec![];
        for (k, set) in self.sets.iter().enumerate() {
            let used = (self.labels.len() - k * QUERIES_PER_SET as usize / 2)
                .min(QUERIES_PER_SET as usize / 2) as u32
                * 2;
            let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("profile timestamps"),
                size: used as u64 * 8,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            encoder.resolve_query_set(set, 0..used, &buffer, 0);
            buffers.push(buffer);
        }
        ctx.submit_and_wait(encoder.finish())?;
        for buffer in &buffers {
            ticks.extend(ctx.read_buffer::<u64>(buffer)?);
        }
        let period = ctx.queue.get_timestamp_period() as f64 * 1e-9;
        let mut kernels: Vec<KernelTime> = vec![];
        for (label, span) in self.labels.iter().zip(ticks.chunks(2)) {
            let seconds = span[1].checked_sub(span[0]).ok_or_else(|| {
                Error::Gpu(format!(
                    "profile: a timestamp of {label} ran backwards ({} then {})",
                    span[0], span[1]
                ))
            })? as f64
                * period;
            match kernels.iter_mut().find(|k| &k.label == label) {
                Some(k) => {
                    k.dispatches += 1;
                    k.seconds += seconds;
                }
                None => kernels.push(KernelTime {
                    label: label.clone(),
                    dispatches: 1,
                    seconds,
                }),
            }
        }
        Ok(Profile {
            kernels,
            untimed: self.untimed,
        })
    }
}

/// The GPU time of one kernel (a pipeline) over a profiled run.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTime {
    pub label: String,
    pub dispatches: u64,
    pub seconds: f64,
}

/// A profiled run: each kernel's dispatches and time, in the order the kernels first ran.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub kernels: Vec<KernelTime>,
    /// Dispatches past the profile's capacity, run without timestamps.
    pub untimed: u64,
}

impl Profile {
    /// The time every timed dispatch took together.
    pub fn seconds(&self) -> f64 {
        self.kernels.iter().map(|k| k.seconds).sum()
    }
}
