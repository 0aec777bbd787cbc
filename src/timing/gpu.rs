//! The clocks on the GPU (`shaders/clocks.wgsl`), the twin of [`ClusterClocks`]: the same
//! recurrence, the same integer ticks, so both give the same clocks exactly.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use super::clocks::{directions, ClusterClocks};
use crate::engine::gpu::{shaders, GpuContext};
use crate::Result;

/// `struct Model` of `shaders/clocks.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct ModelUniform {
    interior: [u32; 2],
    edge: [u32; 2],
    hop: [u32; 2],
    latency_h: [u32; 2],
    latency_v: [u32; 2],
    serialise_h: [u32; 2],
    serialise_v: [u32; 2],
    wafers_x: u32,
    wafers_y: u32,
    pes_x: u32,
    pes_y: u32,
    directions: u32,
    capacity: u32,
    exchange_every: u32,
    strips: u32,
}

fn split(t: u64) -> [u32; 2] {
    [t as u32, (t >> 32) as u32]
}

fn join(v: &[u32]) -> u64 {
    v[0] as u64 | (v[1] as u64) << 32
}

/// An error unless `start` is a fresh model: at step 0, without jitter, every link with the
/// latency and serialisation of its direction.
fn check_fresh(start: &ClusterClocks) -> Result<()> {
    let costs = start.costs;
    let uniform_links = start.links.iter().all(|l| {
        let expected = match l.direction.is_horizontal() {
            false => (costs.latency_v, costs.serialise_v),
            true => (costs.latency_h, costs.serialise_h),
        };
        (l.latency, l.serialise) == expected
    });
    if costs.jitter > 0 {
        return Err(crate::invalid!(
            "link_jitter_us > 0 runs on the CPU clocks only: allowed --device cpu, or link_jitter_us = 0"
        ));
    }
    if start.step != 0 || !uniform_links {
        return Err(crate::invalid!(
            "the GPU clocks start from a fresh model (step 0, links as the parameters say)"
        ));
    }
    Ok(())
}

impl ModelUniform {
    /// The model of `start`, whose links carry `strips` strips in all.
    fn of(start: &ClusterClocks, strips: u32) -> Self {
        let (shape, costs) = (start.shape, start.costs);
        Self {
            interior: split(costs.interior),
            edge: split(costs.edge),
            hop: split(costs.hop),
            latency_h: split(costs.latency_h),
            latency_v: split(costs.latency_v),
            serialise_h: split(costs.serialise_h),
            serialise_v: split(costs.serialise_v),
            wafers_x: shape.wafers_x,
            wafers_y: shape.wafers_y,
            pes_x: shape.pes_x,
            pes_y: shape.pes_y,
            directions: directions(start.method).len() as u32,
            capacity: costs.capacity,
            exchange_every: costs.exchange_every,
            strips,
        }
    }
}

/// Clocks of a cluster advanced on the GPU.
pub struct GpuClocks {
    ctx: Arc<GpuContext>,
    clocks: [wgpu::Buffer; 2],
    pipelines: [crate::engine::gpu::Pipeline; 4],
    groups: [wgpu::BindGroup; 2],
    strip_size: (u32, u32),
    pe_size: (u32, u32),
    pes: u64,
    step: u64,
}

impl GpuClocks {
    /// Uploads the model of `start`, which must be fresh: at step 0, every link with the
    /// latency and serialisation of its direction.
    pub fn new(ctx: Arc<GpuContext>, start: &ClusterClocks) -> Result<Self> {
        check_fresh(start)?;
        let (shape, costs) = (start.shape, start.costs);
        let strips: usize = start.links.iter().map(|l| l.arrivals.len()).sum();
        let model = ModelUniform::of(start, strips as u32);
        let pes = shape.pe_count();
        let words = |count: usize| vec![0.0f32; 2 * count.max(1)];
        ctx.check_binding("the clocks", pes as u64 * 8)?;
        ctx.check_binding(
            "the link credits",
            (strips * costs.capacity as usize) as u64 * 8,
        )?;
        let clocks = [
            ctx.storage_buffer("clocks a", &words(pes))?,
            ctx.storage_buffer("clocks b", &words(pes))?,
        ];
        let free_at = ctx.storage_buffer("free_at", &words(strips))?;
        let arrivals = ctx.storage_buffer("arrivals", &words(strips))?;
        let consumed = ctx.storage_buffer("consumed", &words(strips * costs.capacity as usize))?;
        let counters = ctx.storage_buffer("counters", &[0.0; 2])?;
        let uniform = ctx.uniform_buffer("model", &model);
        let source = shaders::clocks();
        let pipelines =
            ["send", "pes", "consume", "tick"].map(|entry| ctx.pipeline(entry, &source, entry));
        let groups = [0, 1].map(|x| {
            let buffers = [
                ("model", &uniform),
                ("old", &clocks[x]),
                ("clocks", &clocks[1 - x]),
                ("free_at", &free_at),
                ("arrivals", &arrivals),
                ("consumed", &consumed),
                ("counters", &counters),
            ];
            ctx.bind_group(&pipelines[1], &buffers)
        });
        Ok(Self {
            strip_size: ctx.dispatch_size(strips as u64),
            pe_size: ctx.dispatch_size(pes as u64),
            pes: pes as u64,
            ctx,
            clocks,
            pipelines,
            groups,
            step: 0,
        })
    }

    /// Runs `steps` steps.
    pub fn advance(&mut self, steps: u64) -> Result<()> {
        let sizes = [self.strip_size, self.pe_size, self.strip_size, (1, 1)];
        self.ctx
            .run_steps(self.step, steps, self.pes, |pass, step| {
                pass.set_bind_group(0, &self.groups[(step % 2) as usize], &[]);
                for (pipeline, size) in self.pipelines.iter().zip(sizes) {
                    pass.set_pipeline(&pipeline.raw);
                    self.ctx.dispatch(pass, pipeline, size);
                }
            })?;
        self.step += steps;
        Ok(())
    }

    /// The clocks of the current step, PEs row-major over the cluster.
    pub fn clocks(&self) -> Result<Vec<u64>> {
        let words: Vec<u32> = self
            .ctx
            .read_buffer(&self.clocks[(self.step % 2) as usize])?;
        Ok(words.chunks(2).map(join).collect())
    }
}
