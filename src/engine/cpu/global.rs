//! The plain global-grid reference kernel on the CPU.

use std::sync::Arc;

use glam::UVec2;
use rayon::prelude::*;

use super::{check_memory, chunks_out, fields_at};
use crate::field::GlobalField;
use crate::kernels::{Block, BlockIn, BlockOut, Kernel};
use crate::model::{Problem, Simulator};
use crate::wafer::StageSlots;
use crate::Result;

/// The plain global-grid kernel on the CPU: periodic, no PEs, no translation. Its slots
/// follow the wafer's ([`StageSlots`]), one global field per state field.
pub struct CpuGlobal {
    kernel: Arc<dyn Kernel>,
    grid: UVec2,
    /// `slots[slot][field]`.
    slots: Vec<Vec<Vec<f32>>>,
    remaps: u64,
}

impl CpuGlobal {
    pub fn new(problem: &Problem) -> Result<Self> {
        let spec = problem.spec();
        let planes = StageSlots::count(spec.stages.len()) * spec.fields.len();
        check_memory(
            "the global grid",
            planes as u64 * problem.geometry.points() * 4,
        )?;
        let state: Vec<Vec<f32>> = problem
            .initial_state()
            .into_iter()
            .map(|f| f.data)
            .collect();
        Ok(Self {
            grid: problem.kernel.grid(),
            kernel: problem.kernel.clone(),
            slots: vec![state; StageSlots::count(spec.stages.len())],
            remaps: 0,
        })
    }

    fn remap(&mut self) {
        let spec = self.kernel.spec();
        let k = (self.remaps % spec.stages.len() as u64) as usize;
        let slots = StageSlots::of(spec.stages.len(), self.remaps);
        let mut out = std::mem::take(&mut self.slots[slots.out]);
        let states = (&self.slots[slots.cur][..], &self.slots[slots.base][..]);
        global_stage(self.grid, (&*self.kernel, k), states, &mut out);
        self.slots[slots.out] = out;
        self.remaps += 1;
    }
}

/// Rows of the global grid per task.
const BAND: usize = 16;

/// A stage on the periodic global grid, a band of rows per task: every point from the window
/// at the stage's `origin`, the band's window rows copied with their wrap.
fn global_stage(
    grid: UVec2,
    kernel: (&dyn Kernel, usize),
    (cur, base): (&[Vec<f32>], &[Vec<f32>]),
    out: &mut [Vec<f32>],
) {
    let spec = kernel.0.spec();
    let (origin, w) = (
        spec.stages[kernel.1].origin as i64,
        spec.comm_width as usize,
    );
    let (nx, ny) = (grid.x as usize, grid.y as usize);
    let wrap = |i: i64, n: usize| i.rem_euclid(n as i64) as usize;
    chunks_out(out, BAND * nx)
        .par_iter_mut()
        .enumerate()
        .for_each(|(band, outs)| {
            let (y0, rows) = (band * BAND, outs[0].len() / nx);
            // Rows y0 + origin ..= y0 + rows - 1 + origin + w of every field, from column
            // `origin`, nx + w values each.
            let copy = |plane: &Vec<f32>| -> Vec<f32> {
                (0..(rows + w) as i64)
                    .flat_map(|dy| {
                        let r = wrap(y0 as i64 + origin + dy, ny) * nx;
                        (0..nx + w).map(move |x| plane[r + wrap(x as i64 + origin, nx)])
                    })
                    .collect()
            };
            let (cur_rows, base_rows): (Vec<_>, Vec<_>) = (
                cur.iter().map(copy).collect(),
                base.iter().map(copy).collect(),
            );
            let all = 0..(rows + w) * (nx + w);
            let input = BlockIn {
                cur: fields_at(&cur_rows, all.clone()),
                base: fields_at(&base_rows, all),
                stride: nx + w,
            };
            let mut out = BlockOut {
                fields: outs.each_mut().map(|o| &mut o[..]),
                stride: nx,
            };
            let block = Block {
                at: UVec2::new(0, y0 as u32),
                rows,
                len: nx,
            };
            kernel.0.stage_block(kernel.1, block, &input, &mut out);
        });
}

impl Simulator for CpuGlobal {
    fn advance(&mut self, steps: u64) -> Result<()> {
        for _ in 0..steps * self.kernel.spec().stages.len() as u64 {
            self.remap();
        }
        Ok(())
    }

    fn step(&self) -> u64 {
        self.remaps / self.kernel.spec().stages.len() as u64
    }

    fn state(&self) -> Result<Vec<GlobalField>> {
        let slot = &self.slots[StageSlots::state(self.step())];
        Ok(slot
            .iter()
            .map(|data| GlobalField {
                nx: self.grid.x,
                ny: self.grid.y,
                data: data.clone(),
            })
            .collect())
    }

    fn describe(&self) -> String {
        "global-grid reference on the CPU".into()
    }
}

/// Stage `stage` of `kernel` on the whole periodic grid from `state` (also the step's start):
/// the fields it writes, for diagnostics that need the scheme's next value.
pub fn stage_on_grid(kernel: &dyn Kernel, stage: usize, state: &[GlobalField]) -> Vec<GlobalField> {
    let grid = kernel.grid();
    let planes: Vec<Vec<f32>> = state.iter().map(|f| f.data.clone()).collect();
    let mut out = vec![vec![0.0; planes[0].len()]; planes.len()];
    global_stage(grid, (kernel, stage), (&planes, &planes), &mut out);
    out.into_iter()
        .map(|data| GlobalField {
            nx: grid.x,
            ny: grid.y,
            data,
        })
        .collect()
}
