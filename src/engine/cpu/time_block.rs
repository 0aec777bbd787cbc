//! The CPU backend's time blocks ([`crate::blocking`]), for every kernel: at a block's start
//! the region beyond the link bands advances its `K` steps span by span, each span with its
//! reach copied into tiles that stay in cache (one per field and SRAM slot) and stepped there,
//! stage by stage, with the kernel's own `stage_block`; the strips of the inner states go to
//! the wafer's history, for the packages.

use glam::UVec2;
use rayon::prelude::*;

use super::{chunks_out, stage_block, Sram};
use crate::blocking::{self, strip_cells, strip_index};
use crate::cluster::package::copy_runs;
use crate::cluster::ClusterGeometry;
use crate::kernels::{Block, BlockIn, BlockOut, Kernel, MAX_FIELDS};
use crate::model::Problem;
use crate::wafer::StageSlots;

/// Points of a span along x: the wider, the less of its reach is computed twice (512 ran 3 to
/// 15 % faster than 256 for heat5, heat9 and shallow water at n = 8 and heat5 at n = 32, in
/// three alternating runs each, with blocks of 15 and 9; 1024 no faster than 512).
const SPAN_X: u32 = 512;

/// Points of a span about along y (whole rows of PEs, at least one). Heat ran 2 to 33 % faster
/// at n = 8 with 128 rows than with 256 (its two tiles 0.7 MiB against 1.3 MiB, once the
/// stencil stopped waiting on the shuffle port), level at n = 32 and at 64 rows, in three
/// alternating runs; shallow water's nine tiles took 128 rows already.
const SPAN_Y: u32 = 128;

/// The time blocks of one cluster: steps per block, the link bands' width in PEs, and the
/// remaps per block and state fields of the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuBlocks {
    pub steps: u32,
    pub band: u32,
    pub remaps: u32,
    fields: usize,
}

/// A wafer's strips of every field at every inner state (remap) of its current block,
/// `strip_cells` each, field-major (as `history_index` in `shaders/time_block.wgsl`).
pub type History = Vec<f32>;

/// One task's tiles: `[slot * fields + f]`, slots as the SRAM's ([`StageSlots`]).
type Tiles = Vec<Vec<f32>>;

impl CpuBlocks {
    /// Blocks of `steps` steps for `problem`, `None` for one step, or why there are none.
    pub fn plan(problem: &Problem, steps: u32) -> Result<Option<Self>, String> {
        if steps < 2 {
            return Ok(None);
        }
        blocking::check_steps(steps)?;
        let spec = problem.spec();
        let band = blocking::link_band(spec, &problem.cluster.wafer, steps)?;
        Ok(Some(Self {
            steps,
            band,
            remaps: blocking::remaps(spec, steps),
            fields: spec.fields.len(),
        }))
    }

    /// An empty history for one wafer.
    pub fn history(&self, c: &ClusterGeometry) -> History {
        let states = self.remaps as usize * self.fields;
        vec![0.0; states * strip_cells(c.wafer_points(), c.wafer.w())]
    }

    /// Points a block reaches: `w` per remap.
    fn reach(&self, c: &ClusterGeometry) -> u32 {
        self.remaps * c.wafer.w()
    }

    /// Whether frame point `(x, y)` lies in the blocked region.
    pub fn in_region(&self, c: &ClusterGeometry, (x, y): (u32, u32)) -> bool {
        let start = self.band * c.wafer.n;
        x >= start && y >= start
    }

    /// The history cell of frame point `(x, y)` of field `f` at inner state `j` of the block.
    fn cell(&self, c: &ClusterGeometry, (f, j): (usize, usize), (x, y): (u32, u32)) -> usize {
        let (frame, w) = (c.wafer_points(), c.wafer.w());
        (f * self.remaps as usize + j) * strip_cells(frame, w) + strip_index(frame, w, (x, y))
    }

    /// The value of frame point `(x, y)` of field `f` of the region at inner state `j`.
    pub fn kept(
        &self,
        c: &ClusterGeometry,
        history: &History,
        (f, j): (usize, u64),
        p: (u32, u32),
    ) -> f32 {
        history[self.cell(c, (f, j as usize), p)]
    }

    /// Advances the region of wafer `k` from remap `remap` (a block's start) by the block's
    /// steps, from the slot of that state into the slot of the state after the block (which
    /// the bands' last remap also writes), keeping the strips of the inner states in `history`.
    pub fn advance_region(
        &self,
        c: &ClusterGeometry,
        kernel: &dyn Kernel,
        (k, remap): (usize, u64),
        sram: &mut Sram,
        history: &mut History,
    ) {
        let (g, stages) = (c.wafer, kernel.spec().stages.len());
        let step = remap / stages as u64;
        let (from, to) = (
            StageSlots::state(step),
            StageSlots::state(step + self.steps as u64),
        );
        let mut out = std::mem::take(&mut sram[to]);
        let cur = &sram[from];
        let row_cells = g.pes_x as usize * g.block_cells();
        let start = self.band as usize * row_cells;
        let reach = self.reach(c);
        let tile_count = StageSlots::count(stages) * self.fields;
        let pe_rows = (SPAN_Y / g.n).max(1) as usize;
        // Tiles per task, as large as its largest span's.
        let tile = ((SPAN_X + reach) * (pe_rows as u32 * g.n + reach)) as usize;
        let mut region: Vec<&mut [f32]> = out.iter_mut().map(|p| &mut p[start..]).collect();
        let kept: Vec<(usize, f32)> = chunks_out(&mut region, pe_rows * row_cells)
            .into_par_iter()
            .enumerate()
            .flat_map_iter(|(i, mut rows)| {
                let y0 = (self.band as usize + i * pe_rows) as u32 * g.n;
                let y1 = (y0 + pe_rows as u32 * g.n).min(c.wafer_points().y);
                let offset = start + i * pe_rows * row_cells;
                let mut tiles: Tiles = vec![vec![0.0; tile]; tile_count];
                let mut kept = vec![];
                let x0s = (self.band * g.n..c.wafer_points().x).step_by(SPAN_X as usize);
                for x0 in x0s {
                    let x1 = (x0 + SPAN_X).min(c.wafer_points().x);
                    let span = Span {
                        c,
                        blocks: self,
                        origin: UVec2::new(x0, y0),
                        size: UVec2::new(x1 - x0, y1 - y0),
                    };
                    let out = (&mut rows, offset);
                    kept.extend(span.advance(kernel, (k, remap), &mut tiles, cur, out));
                }
                kept
            })
            .collect();
        for (at, value) in kept {
            history[at] = value;
        }
        sram[to] = out;
    }
}

/// One span of the region: `size` points from frame point `origin`, with its reach to the
/// left and below.
struct Span<'a> {
    c: &'a ClusterGeometry,
    blocks: &'a CpuBlocks,
    origin: UVec2,
    size: UVec2,
}

impl Span<'_> {
    /// Points the block reaches left of and below the span.
    fn reach(&self) -> u32 {
        self.blocks.reach(self.c)
    }

    /// Its tile's width and height.
    fn dims(&self) -> (usize, usize) {
        let d = self.size + self.reach();
        (d.x as usize, d.y as usize)
    }

    /// The tile's lower-left frame point.
    fn corner(&self) -> UVec2 {
        self.origin - self.reach()
    }

    /// Steps the span through the block's remaps from remap `remap`, the slot `cur` of every
    /// field, between `tiles` (each at least its tile's size; slot 0 the block's start), and
    /// writes it into the PE rows `rows` (from cell `offset` of the wafer's SRAM) of every
    /// field; returns the history cells of its strip points at the inner states.
    fn advance(
        &self,
        kernel: &dyn Kernel,
        (k, remap): (usize, u64),
        tiles: &mut Tiles,
        cur: &[Vec<f32>],
        (rows, offset): (&mut [&mut [f32]; MAX_FIELDS], usize),
    ) -> Vec<(usize, f32)> {
        let (tw, th) = self.dims();
        let (fields, stages) = (self.blocks.fields, kernel.spec().stages.len());
        let stride = self.c.wafer.stride() as usize;
        for (tile, plane) in tiles.iter_mut().zip(cur) {
            self.copy_rows(self.corner(), (tw, th), |sram, (r, x), runs| {
                copy_runs(
                    (&mut tile[r * tw + x..], tw),
                    (&plane[sram..], stride),
                    runs,
                );
            });
        }
        let remaps = self.blocks.remaps as usize;
        let mut kept = vec![];
        for j in 1..=remaps {
            let out = self.remap(kernel, (k, remap), j, tiles);
            if j < remaps {
                kept.extend(self.strips(&tiles[out * fields..][..fields], j));
            }
        }
        let last = StageSlots::of(stages, remaps as u64 - 1).out;
        let reach = self.reach() as usize;
        let size = (self.size.x as usize, self.size.y as usize);
        for (f, rows) in rows[..fields].iter_mut().enumerate() {
            let tile = &tiles[last * fields + f];
            self.copy_rows(self.origin, size, |sram, (r, x), runs| {
                let from = (r + reach) * tw + x + reach;
                copy_runs(
                    (&mut rows[sram - offset..], stride),
                    (&tile[from..], tw),
                    runs,
                );
            });
        }
        kept
    }

    /// Inner remap `j` (from 1) of the block from remap `remap`: the stage's output over the
    /// valid part of the tile, which shrinks by `w` per remap; returns the slot written.
    fn remap(
        &self,
        kernel: &dyn Kernel,
        (k, remap): (usize, u64),
        j: usize,
        tiles: &mut Tiles,
    ) -> usize {
        let (tw, th) = self.dims();
        let (fields, stages) = (self.blocks.fields, kernel.spec().stages.len());
        let slots = StageSlots::of(stages, j as u64 - 1);
        let w = self.c.wafer.w() as usize;
        let lo = j * w;
        let window = (lo - w) * tw + lo - w;
        let mut outs: Vec<Vec<f32>> = (0..fields)
            .map(|f| std::mem::take(&mut tiles[slots.out * fields + f]))
            .collect();
        let slot = |s: usize| -> [&[f32]; MAX_FIELDS] {
            std::array::from_fn(|f| match f < fields {
                true => &tiles[s * fields + f][window..],
                false => &[][..],
            })
        };
        let input = BlockIn {
            cur: slot(slots.cur),
            base: slot(slots.base),
            stride: tw,
        };
        let mut output = BlockOut {
            fields: std::array::from_fn(|_| &mut [][..]),
            stride: tw,
        };
        for (field, out) in output.fields.iter_mut().zip(&mut outs) {
            *field = &mut out[lo * tw + lo..];
        }
        let block = Block {
            at: self.global_point(k, self.corner() + lo as u32, remap + j as u64, kernel),
            rows: th - lo,
            len: tw - lo,
        };
        stage_block((kernel, (j - 1) % stages), block, &input, &mut output);
        for (f, out) in outs.into_iter().enumerate() {
            tiles[slots.out * fields + f] = out;
        }
        slots.out
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

    /// The span's points of the wafer's top and right strips in every field's `tiles`, as
    /// history cells of inner state `j`.
    fn strips(&self, tiles: &[Vec<f32>], j: usize) -> Vec<(usize, f32)> {
        let (frame, w) = (self.c.wafer_points(), self.c.wafer.w());
        let (tw, _) = self.dims();
        let (end, corner) = (self.origin + self.size, self.corner());
        // The span's rows in the top strip, then its columns in the right strip.
        let top = self.origin.y.max(frame.y - w)..end.y;
        let right = self.origin.x.max(frame.x - w)..end.x;
        let points: Vec<(u32, u32)> = top
            .clone()
            .flat_map(|y| (self.origin.x..end.x).map(move |x| (x, y)))
            .chain(
                (self.origin.y..end.y.min(top.start))
                    .flat_map(|y| right.clone().map(move |x| (x, y))),
            )
            .collect();
        let mut kept = vec![];
        for (f, tile) in tiles.iter().enumerate() {
            for &(x, y) in &points {
                let t = (y - corner.y) as usize * tw + (x - corner.x) as usize;
                kept.push((self.blocks.cell(self.c, (f, j), (x, y)), tile[t]));
            }
        }
        kept
    }

    /// Calls `copy(sram cell, (row, column), (rows, len))` for the `size` points from frame
    /// point `from` (rows and columns counted from it), PE by PE: `rows` runs of `len` points
    /// of one PE's block (contiguous in SRAM, `stride` apart), from its cell `sram`.
    fn copy_rows(
        &self,
        from: UVec2,
        (sx, sy): (usize, usize),
        mut copy: impl FnMut(usize, (usize, usize), (usize, usize)),
    ) {
        let g = self.c.wafer;
        let (n, w, stride, block) = (
            g.n as usize,
            g.w() as usize,
            g.stride() as usize,
            g.block_cells(),
        );
        let (x0, y0) = (from.x as usize, from.y as usize);
        let mut y = y0;
        while y < y0 + sy {
            let rows = (n - y % n).min(y0 + sy - y);
            let mut x = x0;
            while x < x0 + sx {
                let run = (n - x % n).min(x0 + sx - x);
                let pe = y / n * g.pes_x as usize + x / n;
                let cell = pe * block + (y % n + w) * stride + x % n + w;
                copy(cell, (y - y0, x - x0), (rows, run));
                x += run;
            }
            y += rows;
        }
    }
}
