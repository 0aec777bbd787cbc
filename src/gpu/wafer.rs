//! The emulated wafer on the GPU: each field is one storage buffer holding every PE's SRAM
//! block; a step is the `sendrecv` remap dispatch then the `compute` dispatch (Table 3).

use std::sync::Arc;

use super::context::GpuContext;
use super::shaders;
use super::uniforms::{WaferUniform, WeightsUniform, BLOCK_COLS, ROWS_PER_THREAD};
use crate::field::GlobalField;
use crate::model::{Problem, Simulator};
use crate::wafer::WaferGeometry;
use crate::Result;

/// Spare cells after the last SRAM block: a compute invocation reads whole windows of
/// `BLOCK_COLS + 2` values, which for the last PE's last rows can reach past its block.
const SRAM_TAIL: u32 = BLOCK_COLS + 2;

pub struct GpuWafer {
    ctx: Arc<GpuContext>,
    geometry: WaferGeometry,
    /// Table 3's `x` and `y`; `x` is `sram[step % 2]`.
    sram: [wgpu::Buffer; 2],
    sendrecv: wgpu::ComputePipeline,
    compute: wgpu::ComputePipeline,
    /// Bind groups by parity of the step.
    sendrecv_groups: [wgpu::BindGroup; 2],
    compute_groups: [wgpu::BindGroup; 2],
    sendrecv_size: (u32, u32),
    compute_size: (u32, u32),
    step: u64,
}

impl GpuWafer {
    /// Uploads the problem's initial field; fails if a field does not fit one binding.
    pub fn new(ctx: Arc<GpuContext>, problem: &Problem) -> Result<Self> {
        let g = problem.geometry;
        ctx.check_binding(
            &format!("a {}x{} wafer with n = {}", g.pes_x, g.pes_y, g.n),
            (g.sram_cells() + SRAM_TAIL as u64) * 4,
        )?;
        let mut initial = g.scatter(&problem.initial_field());
        initial.resize(initial.len() + SRAM_TAIL as usize, 0.0);
        let sram = [
            ctx.storage_buffer("sram x", &initial)?,
            ctx.storage_buffer("sram y", &initial)?,
        ];
        let wafer = ctx.uniform_buffer("wafer", &WaferUniform::new(&g));
        let weights = ctx.uniform_buffer("weights", &WeightsUniform::new(&problem.weights()));
        let sendrecv = ctx.pipeline("sendrecv", &shaders::sendrecv(), "sendrecv");
        let compute = ctx.pipeline(
            "wafer compute",
            &shaders::wafer_compute(problem.kernel),
            "compute",
        );
        let sendrecv_groups = [0, 1].map(|x| ctx.bind_group(&sendrecv, &[&wafer, &sram[x]]));
        let compute_groups =
            [0, 1].map(|x| ctx.bind_group(&compute, &[&wafer, &weights, &sram[x], &sram[1 - x]]));
        let pes = g.pe_count() as u64;
        let n = g.n as u64;
        let compute_threads =
            pes * n.div_ceil(BLOCK_COLS as u64) * n.div_ceil(ROWS_PER_THREAD as u64);
        Ok(Self {
            sendrecv_size: ctx.dispatch_size(pes),
            compute_size: ctx.dispatch_size(compute_threads),
            ctx,
            geometry: g,
            sram,
            sendrecv,
            compute,
            sendrecv_groups,
            compute_groups,
            step: 0,
        })
    }

    /// The raw SRAM of the whole wafer (`x` of Table 3), PE-major.
    pub fn sram(&self) -> Result<Vec<f32>> {
        let mut sram = self.ctx.read_buffer(&self.sram[(self.step % 2) as usize])?;
        sram.truncate(self.geometry.sram_cells() as usize);
        Ok(sram)
    }
}

impl Simulator for GpuWafer {
    fn advance(&mut self, steps: u64) -> Result<()> {
        self.ctx
            .run_steps(self.step, steps, self.geometry.points(), |pass, step| {
                let x = (step % 2) as usize;
                pass.set_pipeline(&self.sendrecv);
                pass.set_bind_group(0, &self.sendrecv_groups[x], &[]);
                pass.dispatch_workgroups(self.sendrecv_size.0, self.sendrecv_size.1, 1);
                pass.set_pipeline(&self.compute);
                pass.set_bind_group(0, &self.compute_groups[x], &[]);
                pass.dispatch_workgroups(self.compute_size.0, self.compute_size.1, 1);
            })?;
        self.step += steps;
        Ok(())
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn field(&self) -> Result<GlobalField> {
        Ok(self.geometry.gather(&self.sram()?, self.step))
    }

    fn describe(&self) -> String {
        format!("emulated wafer on {}", self.ctx.describe())
    }
}
