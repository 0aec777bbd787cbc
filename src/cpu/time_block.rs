//! The CPU backend's time blocks ([`crate::blocking`]): at a block's start the region beyond
//! the link bands advances its `K` steps span by span, each span with its reach copied into a
//! tile that stays in cache and stepped there with the kernel's own `stage_block`; the strips
//! of the inner states go to the wafer's history, for the packages.

use glam::UVec2;
use rayon::prelude::*;

use super::{stage_block, Sram};
use crate::blocking::{self, strip_cells, strip_index};
use crate::cluster::ClusterGeometry;
use crate::kernels::{Block, BlockIn, BlockOut, Kernel, MAX_FIELDS};
use crate::model::Problem;
use crate::wafer::StageSlots;

/// Points of a span along x, and at least along y (whole rows of PEs).
const SPAN_X: u32 = 256;
const SPAN_Y: u32 = 64;

/// The time blocks of one cluster: steps per block and the link bands' width in PEs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuBlocks {
    pub steps: u32,
    pub band: u32,
}

/// A wafer's strips of every inner state of its current block (`strip_cells` per state).
pub type History = Vec<f32>;

impl CpuBlocks {
    /// Blocks of `steps` steps for `problem`, `None` for one step, or why there are none.
    pub fn plan(problem: &Problem, steps: u32) -> Result<Option<Self>, String> {
        if steps < 2 {
            return Ok(None);
        }
        blocking::check_steps(steps)?;
        let band = blocking::link_band(problem.spec(), &problem.cluster.wafer, steps)?;
        Ok(Some(Self { steps, band }))
    }

    /// An empty history for one wafer.
    pub fn history(&self, c: &ClusterGeometry) -> History {
        vec![0.0; self.steps as usize * strip_cells(c.wafer_points(), c.wafer.w())]
    }

    /// Whether frame point `(x, y)` lies in the blocked region.
    pub fn in_region(&self, c: &ClusterGeometry, (x, y): (u32, u32)) -> bool {
        let start = self.band * c.wafer.n;
        x >= start && y >= start
    }

    /// The value of frame point `(x, y)` of the region at inner state `j` of the block.
    pub fn kept(&self, c: &ClusterGeometry, history: &History, j: u64, (x, y): (u32, u32)) -> f32 {
        let frame = c.wafer_points();
        history
            [j as usize * strip_cells(frame, c.wafer.w()) + strip_index(frame, c.wafer.w(), (x, y))]
    }

    /// Advances the region of wafer `k` from `state` (a block's start) by the block's steps,
    /// from the slot of `state` into the slot of `state + 1` (which the bands' last step
    /// also writes), keeping the strips of the inner states in `history`.
    pub fn advance_region(
        &self,
        c: &ClusterGeometry,
        kernel: &dyn Kernel,
        (k, state): (usize, u64),
        sram: &mut Sram,
        history: &mut History,
    ) {
        let g = c.wafer;
        let slots = StageSlots::of(1, state);
        let mut out = std::mem::take(&mut sram[slots.out][0]);
        let cur = &sram[slots.cur][0];
        let row_cells = g.pes_x as usize * g.block_cells();
        let pe_rows = (SPAN_Y / g.n).max(1) as usize;
        let start = self.band as usize * row_cells;
        let reach = self.steps * g.w();
        // Two tiles per task, as large as its largest span's.
        let tile = ((SPAN_X + reach) * (pe_rows as u32 * g.n + reach)) as usize;
        let kept: Vec<(usize, f32)> = out[start..]
            .par_chunks_mut(pe_rows * row_cells)
            .enumerate()
            .flat_map_iter(|(i, rows)| {
                let y0 = (self.band as usize + i * pe_rows) as u32 * g.n;
                let y1 = (y0 + pe_rows as u32 * g.n).min(c.wafer_points().y);
                let offset = start + i * pe_rows * row_cells;
                let mut tiles = [vec![0.0; tile], vec![0.0; tile]];
                let mut kept = vec![];
                let x0s = (self.band * g.n..c.wafer_points().x).step_by(SPAN_X as usize);
                for x0 in x0s {
                    let x1 = (x0 + SPAN_X).min(c.wafer_points().x);
                    let span = Span {
                        c,
                        origin: UVec2::new(x0, y0),
                        size: UVec2::new(x1 - x0, y1 - y0),
                        reach,
                    };
                    let out = (rows as &mut [f32], offset);
                    kept.extend(span.advance(
                        kernel,
                        (k, state),
                        (self.steps, &mut tiles),
                        cur,
                        out,
                    ));
                }
                kept
            })
            .collect();
        for (at, value) in kept {
            history[at] = value;
        }
        sram[slots.out][0] = out;
    }
}

/// One span of the region: `size` points from frame point `origin`, with `reach` points to
/// its left and below.
struct Span<'a> {
    c: &'a ClusterGeometry,
    origin: UVec2,
    size: UVec2,
    reach: u32,
}

impl Span<'_> {
    /// Its tile's width and height.
    fn dims(&self) -> (usize, usize) {
        let d = self.size + self.reach;
        (d.x as usize, d.y as usize)
    }

    /// The tile's lower-left frame point.
    fn corner(&self) -> UVec2 {
        self.origin - self.reach
    }

    /// Steps the span `steps` steps from the slot of `state` (`cur`) between `tiles` (each at
    /// least its tile's size) and writes it into the PE rows `rows` (from cell `offset` of the
    /// wafer's SRAM) of the next slot; returns the history cells of its strip points at the
    /// inner states.
    fn advance(
        &self,
        kernel: &dyn Kernel,
        (k, state): (usize, u64),
        (steps, tiles): (u32, &mut [Vec<f32>; 2]),
        cur: &[f32],
        (rows, offset): (&mut [f32], usize),
    ) -> Vec<(usize, f32)> {
        let (tw, th) = self.dims();
        self.copy_rows(self.corner(), (tw, th), |sram, tile, len| {
            copy(&mut tiles[0][tile..tile + len], &cur[sram..sram + len]);
        });
        let w = self.c.wafer.w() as usize;
        let mut kept = vec![];
        for j in 1..=steps as usize {
            let [a, b] = &mut *tiles;
            let (src, dst) = if j % 2 == 1 { (&*a, b) } else { (&*b, a) };
            let lo = j * w;
            let corner = self.corner() + lo as u32;
            let window = one_field(&src[(lo - w) * tw + lo - w..]);
            let input = BlockIn {
                cur: window,
                base: window,
                stride: tw,
            };
            let mut fields: [&mut [f32]; MAX_FIELDS] = Default::default();
            fields[0] = &mut dst[lo * tw + lo..];
            let mut output = BlockOut { fields, stride: tw };
            let at = self.global_point(k, corner, state + j as u64, kernel);
            let block = Block {
                at,
                rows: th - lo,
                len: tw - lo,
            };
            stage_block((kernel, 0), block, &input, &mut output);
            if j < steps as usize {
                kept.extend(self.strips(dst, j));
            }
        }
        let last = &tiles[steps as usize % 2];
        let reach = self.reach as usize;
        let size = (self.size.x as usize, self.size.y as usize);
        self.copy_rows(self.origin, size, |sram, tile, len| {
            let (ty, tx) = (tile / size.0, tile % size.0);
            let from = (ty + reach) * tw + tx + reach;
            copy(
                &mut rows[sram - offset..sram - offset + len],
                &last[from..from + len],
            );
        });
        kept
    }

    /// Global point of frame point `p` of wafer `k` at `state`.
    fn global_point(&self, k: usize, p: UVec2, state: u64, kernel: &dyn Kernel) -> UVec2 {
        let g = self.c.wafer;
        let pe = self
            .c
            .block_pe(k * g.pe_count() + (p.y / g.n * g.pes_x + p.x / g.n) as usize);
        let whole = self.c.whole().expect("validated");
        whole.owned_point(pe, p % g.n + g.w(), kernel.spec().shift_after(state))
    }

    /// The span's points of the wafer's top and right strips in `tile`, as history cells of
    /// inner state `j`.
    fn strips(&self, tile: &[f32], j: usize) -> Vec<(usize, f32)> {
        let (frame, w) = (self.c.wafer_points(), self.c.wafer.w());
        let (tw, _) = self.dims();
        let base = j * strip_cells(frame, w);
        let (end, corner) = (self.origin + self.size, self.corner());
        let mut kept = vec![];
        // The span's rows in the top strip, then its columns in the right strip.
        let top = self.origin.y.max(frame.y - w)..end.y;
        let right = self.origin.x.max(frame.x - w)..end.x;
        let points = top
            .clone()
            .flat_map(|y| (self.origin.x..end.x).map(move |x| (x, y)))
            .chain(
                (self.origin.y..end.y.min(top.start))
                    .flat_map(|y| right.clone().map(move |x| (x, y))),
            );
        for (x, y) in points {
            let t = (y - corner.y) as usize * tw + (x - corner.x) as usize;
            kept.push((base + strip_index(frame, w, (x, y)), tile[t]));
        }
        kept
    }

    /// Calls `copy(sram cell, tile index, len)` for the `size` points from frame point `from`
    /// (tile indices row-major over `size`), a run of one PE's row at a time.
    fn copy_rows(
        &self,
        from: UVec2,
        (sx, sy): (usize, usize),
        mut copy: impl FnMut(usize, usize, usize),
    ) {
        let g = self.c.wafer;
        let (n, w, stride, block) = (
            g.n as usize,
            g.w() as usize,
            g.stride() as usize,
            g.block_cells(),
        );
        let (x0, x1) = (from.x as usize, from.x as usize + sx);
        for r in 0..sy {
            let y = from.y as usize + r;
            let row = (y / n) * g.pes_x as usize * block + (y % n + w) * stride + w;
            let (mut x, mut pe, mut off) = (x0, x0 / n, x0 % n);
            while x < x1 {
                let run = (n - off).min(x1 - x);
                copy(row + pe * block + off, r * sx + x - x0, run);
                (x, pe, off) = (x + run, pe + 1, 0);
            }
        }
    }
}

/// Copies a short run (a plain loop: one PE's row is often too short for `memmove`).
fn copy(to: &mut [f32], from: &[f32]) {
    to.iter_mut().zip(from).for_each(|(t, f)| *t = *f);
}

/// A single field's slice in the kernels' per-field array (other fields empty).
fn one_field(slice: &[f32]) -> [&[f32]; MAX_FIELDS] {
    std::array::from_fn(|f| if f == 0 { slice } else { &[][..] })
}
