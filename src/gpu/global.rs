//! The plain global-grid kernel on the GPU: the reference the emulated wafer equals bit for bit.

use std::sync::Arc;

use super::context::GpuContext;
use super::shaders;
use super::uniforms::{GridUniform, WeightsUniform, BLOCK_COLS, ROWS_PER_THREAD};
use crate::field::GlobalField;
use crate::model::{Problem, Simulator};
use crate::Result;

pub struct GpuGlobal {
    ctx: Arc<GpuContext>,
    nx: u32,
    ny: u32,
    fields: [wgpu::Buffer; 2],
    pipeline: wgpu::ComputePipeline,
    groups: [wgpu::BindGroup; 2],
    size: (u32, u32),
    step: u64,
}

impl GpuGlobal {
    pub fn new(ctx: Arc<GpuContext>, problem: &Problem) -> Result<Self> {
        let initial = problem.initial_field();
        let (nx, ny) = (initial.nx, initial.ny);
        ctx.check_binding(
            &format!("a {nx}x{ny} global grid"),
            initial.data.len() as u64 * 4,
        )?;
        let fields = [
            ctx.storage_buffer("u", &initial.data)?,
            ctx.storage_buffer("v", &initial.data)?,
        ];
        let grid = ctx.uniform_buffer("grid", &GridUniform::new(nx, ny));
        let weights = ctx.uniform_buffer("weights", &WeightsUniform::new(&problem.weights()));
        let pipeline = ctx.pipeline(
            "global compute",
            &shaders::global_compute(problem.kernel),
            "compute",
        );
        let groups = [0, 1]
            .map(|x| ctx.bind_group(&pipeline, &[&grid, &weights, &fields[x], &fields[1 - x]]));
        let threads =
            (nx as u64).div_ceil(BLOCK_COLS as u64) * (ny as u64).div_ceil(ROWS_PER_THREAD as u64);
        Ok(Self {
            size: ctx.dispatch_size(threads),
            ctx,
            nx,
            ny,
            fields,
            pipeline,
            groups,
            step: 0,
        })
    }
}

impl Simulator for GpuGlobal {
    fn advance(&mut self, steps: u64) -> Result<()> {
        let points = self.nx as u64 * self.ny as u64;
        self.ctx.run_steps(self.step, steps, points, |pass, step| {
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.groups[(step % 2) as usize], &[]);
            pass.dispatch_workgroups(self.size.0, self.size.1, 1);
        })?;
        self.step += steps;
        Ok(())
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn field(&self) -> Result<GlobalField> {
        let data = self
            .ctx
            .read_buffer(&self.fields[(self.step % 2) as usize])?;
        Ok(GlobalField {
            nx: self.nx,
            ny: self.ny,
            data,
        })
    }

    fn describe(&self) -> String {
        format!("global-grid kernel on {}", self.ctx.describe())
    }
}
