//! A plain copy kernel: the adapter's own bandwidth ceiling, measured beside the stencils.

use std::sync::Arc;

use super::context::{GpuContext, Pipeline};
use super::shaders;
use crate::Result;

pub struct CopyKernel {
    ctx: Arc<GpuContext>,
    elements: u64,
    pipeline: Pipeline,
    groups: [wgpu::BindGroup; 2],
    size: (u32, u32),
    // Kept alive for the bind groups.
    _buffers: [wgpu::Buffer; 2],
}

impl CopyKernel {
    /// Two buffers of `elements` f32 values (rounded up to a multiple of 16: whole invocations).
    pub fn new(ctx: Arc<GpuContext>, elements: u64) -> Result<Self> {
        let elements = elements.div_ceil(16) * 16;
        ctx.check_binding("the copy kernel", elements * 4)?;
        let data = vec![1.0f32; elements as usize];
        let buffers = [
            ctx.storage_buffer("copy a", &data)?,
            ctx.storage_buffer("copy b", &data)?,
        ];
        let pipeline = ctx.pipeline("copy", &shaders::copy(), ctx.tuning.copy.entry());
        let groups = [0, 1]
            .map(|x| ctx.bind_group(&pipeline, &[("src", &buffers[x]), ("dst", &buffers[1 - x])]));
        let size = ctx.dispatch_size((elements / 4).div_ceil(4));
        Ok(Self {
            ctx,
            elements,
            pipeline,
            groups,
            size,
            _buffers: buffers,
        })
    }

    /// Runs `passes` copies back and forth and waits.
    pub fn run(&self, passes: u64) -> Result<()> {
        self.ctx.run_steps(0, passes, self.elements, |pass, k| {
            pass.set_pipeline(&self.pipeline.raw);
            pass.set_bind_group(0, &self.groups[(k % 2) as usize], &[]);
            self.ctx.dispatch(pass, &self.pipeline, self.size);
        })
    }
}
