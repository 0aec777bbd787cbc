//! The plain global-grid kernel on the GPU: the reference the emulated wafer equals bit for
//! bit. Its SRAM slots follow the wafer's ([`StageSlots`]), one plane per state field.

use std::sync::Arc;

use super::constants;
use super::context::{GpuContext, Pipeline};
use super::shaders;
use super::uniforms::{GridUniform, BLOCK_COLS};
use crate::field::GlobalField;
use crate::kernels::{Driver, KernelSpec, Stage};
use crate::model::{Problem, Simulator};
use crate::wafer::StageSlots;
use crate::Result;

/// Cells past the end of each row where the rows are vec4s (a multiple of 4, and of 32 so that
/// a GPU's rows stay 128-byte aligned): rows a power of two apart share a CPU's cache sets,
/// and a lavapipe invocation walks `global_rows` of them.
const ROW_SKEW: u32 = 32;

/// One stage: its pipeline, its bind groups at the remaps it runs (by remap modulo
/// `2 * stages`) and its dispatch size.
struct StageKernel {
    pipeline: Pipeline,
    groups: Vec<Option<wgpu::BindGroup>>,
    size: (u32, u32),
}

pub struct GpuGlobal {
    ctx: Arc<GpuContext>,
    spec: &'static KernelSpec,
    nx: u32,
    ny: u32,
    /// Cells from a row to the next in the slots.
    pitch: u32,
    slots: Vec<wgpu::Buffer>,
    stages: Vec<StageKernel>,
    remaps: u64,
}

impl GpuGlobal {
    pub fn new(ctx: Arc<GpuContext>, problem: &Problem) -> Result<Self> {
        let spec = problem.spec();
        let state = problem.initial_state();
        let (nx, ny) = (state[0].nx, state[0].ny);
        let rows3 = spec.stages.iter().all(|s| s.driver == Driver::Rows3);
        // Rows of whole vec4s: blocks of 8 for Rows3 stages, one vec4 for Point stages.
        let vec4_rows = nx.is_multiple_of(if rows3 { BLOCK_COLS } else { 4 });
        let pitch = if vec4_rows && rows3 {
            nx + ROW_SKEW
        } else {
            nx
        };
        let slots = upload_slots(&ctx, &state, pitch, spec.stages.len())?;
        let grid = GridUniform::new(nx, ny, pitch, ctx.tuning.global_rows);
        let max_binding = ctx.adapter.max_binding_bytes();
        let (pages, consts) = constants::upload(&ctx, problem.kernel.constants(), max_binding)?;
        let mut named = vec![
            ("grid", ctx.uniform_buffer("grid", &grid)),
            (
                "params",
                ctx.uniform_bytes("params", &problem.kernel.params()),
            ),
        ];
        named.extend(consts);
        let kernel = |(k, stage): (usize, &Stage)| {
            let source =
                shaders::global_stage(spec, stage, pages, vec4_rows, ctx.tuning.point_block());
            let pipeline = ctx.pipeline(stage.name, &source, "compute");
            let stages = spec.stages.len();
            let groups = (0..2 * stages as u64)
                .map(|remap| {
                    (remap % stages as u64 == k as u64).then(|| {
                        let s = StageSlots::of(stages, remap);
                        let named = named.iter().map(|(n, b)| (*n, b));
                        let slots = [
                            ("x", &slots[s.cur]),
                            ("x0", &slots[s.base]),
                            ("x4", &slots[s.cur]),
                            ("x0_4", &slots[s.base]),
                            ("y", &slots[s.out]),
                        ];
                        ctx.bind_declared(&pipeline, named.chain(slots))
                    })
                })
                .collect();
            StageKernel {
                size: ctx.dispatch_size(invocations(&ctx, stage.driver, (nx, ny))),
                pipeline,
                groups,
            }
        };
        let stages = spec.stages.iter().enumerate().map(kernel).collect();
        Ok(Self {
            ctx,
            spec,
            nx,
            ny,
            pitch,
            slots,
            stages,
            remaps: 0,
        })
    }
}

/// The SRAM slots of the global grid, each holding `state`, rows `pitch` cells apart.
fn upload_slots(
    ctx: &GpuContext,
    state: &[GlobalField],
    pitch: u32,
    stages: usize,
) -> Result<Vec<wgpu::Buffer>> {
    let (nx, ny) = (state[0].nx, state[0].ny);
    ctx.check_binding(
        &format!("a {nx}x{ny} global grid of {} field(s)", state.len()),
        pitch as u64 * ny as u64 * state.len() as u64 * 4,
    )?;
    let mut initial = vec![0.0; pitch as usize * ny as usize * state.len()];
    for (rows, field) in initial
        .chunks_exact_mut(pitch as usize)
        .zip(state.iter().flat_map(|f| f.data.chunks_exact(nx as usize)))
    {
        rows[..nx as usize].copy_from_slice(field);
    }
    (0..StageSlots::count(stages))
        .map(|slot| ctx.storage_buffer(&format!("global slot {slot}"), &initial))
        .collect()
}

/// Invocations of a stage of `driver` over an `nx` by `ny` grid: blocks of 8 columns by the
/// tuning's `global_rows` for Rows3, its Point block otherwise.
fn invocations(ctx: &GpuContext, driver: Driver, (nx, ny): (u32, u32)) -> u64 {
    let block = match driver {
        Driver::Rows3 => glam::UVec2::new(BLOCK_COLS, ctx.tuning.global_rows),
        Driver::Point => ctx.tuning.point_block(),
    };
    (nx as u64).div_ceil(block.x as u64) * (ny as u64).div_ceil(block.y as u64)
}

impl Simulator for GpuGlobal {
    fn advance(&mut self, steps: u64) -> Result<()> {
        let points = self.nx as u64 * self.ny as u64;
        let stages = self.stages.len() as u64;
        self.ctx
            .run_steps(self.remaps, steps * stages, points, |pass, remap| {
                let kernel = &self.stages[(remap % stages) as usize];
                let group = kernel.groups[(remap % (2 * stages)) as usize]
                    .as_ref()
                    .expect("a stage runs at its own remaps");
                pass.set_pipeline(&kernel.pipeline.raw);
                pass.set_bind_group(0, group, &[]);
                self.ctx.dispatch(pass, &kernel.pipeline, kernel.size);
            })?;
        self.remaps += steps * stages;
        Ok(())
    }

    fn step(&self) -> u64 {
        self.remaps / self.stages.len() as u64
    }

    fn state(&self) -> Result<Vec<GlobalField>> {
        let data: Vec<f32> = self
            .ctx
            .read_buffer(&self.slots[StageSlots::state(self.step())])?;
        let (nx, pitch) = (self.nx as usize, self.pitch as usize);
        Ok(data
            .chunks(pitch * self.ny as usize)
            .take(self.spec.fields.len())
            .map(|plane| GlobalField {
                nx: self.nx,
                ny: self.ny,
                data: plane
                    .chunks(pitch)
                    .flat_map(|row| &row[..nx])
                    .copied()
                    .collect(),
            })
            .collect())
    }

    fn describe(&self) -> String {
        format!("global-grid kernel on {}", self.ctx.describe())
    }
}
