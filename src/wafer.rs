//! The wafer: `Ww x Wh` PEs, each with an SRAM block `[n+w][n+w]` per field (docs/design.md,
//! section 2, the paper's Table 3). Its edges join the neighbouring wafers of its cluster, or
//! its own opposite edges, through links (`crate::cluster`); as a whole it is a torus.
//!
//! Memory convention. Inside a block, row `i` and column `j` run over `[0, n+w)`; `[0, w)` on
//! the low sides is the comm layer and `[w, n+w)` holds the `n x n` owned points. A cell is the
//! vector `(j, i)` (column along x, row along y), like PE coordinates `(px, py)` and grid
//! points `(X, Y)`. The wafer's blocks are stored PE-major: PE `(px, py)` is block
//! `py * Ww + px`.
//!
//! Frame coordinate. Cell `m` of PE `P` (along one axis) sits at frame coordinate
//! `U = P*n + m - w`. A comm cell and the owned cell of another PE with the same `U` (mod the
//! global size) hold the same grid point at the same step: that is what `sendrecv` copies. The
//! compute writes at `U` the stencil centred at `U - p`, so a grid point moves by `+p` in the
//! frame every step, and after a translation by `shift` points the owned cell at `U` holds
//! global point `X = U - shift` (`shift = p*t` after `t` steps of a one-stage kernel; the
//! kernel's [`crate::kernels::KernelSpec::shift_after`] in general).

use glam::UVec2;

use crate::{invalid, Result};

/// Shape of one wafer: PE counts, points per PE side and the kernel's comm width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaferGeometry {
    /// PEs along x (`Ww`).
    pub pes_x: u32,
    /// PEs along y (`Wh`).
    pub pes_y: u32,
    /// Grid points per PE side: a PE owns `n x n` points.
    pub n: u32,
    /// Comm width `w`: the comm layer on the low sides of every SRAM block.
    pub w: u32,
}

/// Where a comm-layer cell's value comes from in `sendrecv`: an owned cell of a PE that is
/// `hops_right` columns to the left and `hops_up` rows below (data moves right and up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommSource {
    pub hops_right: u32,
    pub hops_up: u32,
    /// Block index of the sending PE.
    pub pe: usize,
    /// The owned cell (column, row) in the sender's block.
    pub cell: UVec2,
}

/// Largest supported `n`: blocks must stay addressable with 32-bit indices on every adapter.
pub const MAX_N: u32 = 4096;
/// Largest supported PE count per side, of a wafer or of a whole cluster (the CS-3 has 744 x
/// 1116; the paper's largest cluster, 8 x 8 of them, 5952 x 8928).
pub const MAX_PES: u32 = 16384;

impl WaferGeometry {
    /// Checks the shape and returns it; errors name the value and the allowed range.
    pub fn new(pes_x: u32, pes_y: u32, n: u32, w: u32) -> Result<Self> {
        if n == 0 || n > MAX_N {
            return Err(invalid!("n = {n} is out of range: allowed 1..={MAX_N}"));
        }
        for (name, v) in [("PEs along x", pes_x), ("PEs along y", pes_y)] {
            if v == 0 || v > MAX_PES {
                return Err(invalid!(
                    "{name} = {v} is out of range: allowed 1..={MAX_PES}"
                ));
            }
        }
        if w == 0 || w > 8 {
            return Err(invalid!(
                "comm width w = {w} is out of range: allowed 1..=8"
            ));
        }
        let geometry = Self { pes_x, pes_y, n, w };
        let UVec2 { x: nx, y: ny } = geometry.global_size();
        if nx < w || ny < w {
            return Err(invalid!(
                "a {pes_x}x{pes_y} PE wafer with n = {n} is {nx}x{ny} points, narrower than its comm width w = {w}: allowed PEs x n >= {w} along both sides"
            ));
        }
        if geometry.sram_cells() > u32::MAX as u64 / 2 {
            return Err(invalid!(
                "a {pes_x}x{pes_y} wafer with n = {n} has {} SRAM cells per field: at most {} allowed",
                geometry.sram_cells(),
                u32::MAX / 2
            ));
        }
        Ok(geometry)
    }

    /// Comm width `w`.
    pub fn w(&self) -> u32 {
        self.w
    }
    /// Side of one SRAM block, `n + w`.
    pub fn stride(&self) -> u32 {
        self.n + self.w()
    }
    /// Cells in one SRAM block.
    pub fn block_cells(&self) -> usize {
        (self.stride() as usize).pow(2)
    }
    /// Comm-layer cells in one SRAM block.
    pub fn comm_cells(&self) -> usize {
        self.block_cells() - (self.n as usize).pow(2)
    }
    /// Number of PEs.
    pub fn pe_count(&self) -> usize {
        self.pes_x as usize * self.pes_y as usize
    }
    /// SRAM cells of one field over the whole wafer.
    pub fn sram_cells(&self) -> u64 {
        self.pe_count() as u64 * self.block_cells() as u64
    }
    /// Global grid size `(Ww*n, Wh*n)`.
    pub fn global_size(&self) -> UVec2 {
        UVec2::new(self.pes_x, self.pes_y) * self.n
    }
    /// Number of grid points.
    pub fn points(&self) -> u64 {
        self.global_size().as_u64vec2().element_product()
    }

    /// Index of `cell` (column, row) of block `pe` in a wafer-wide field.
    pub fn sram_index(&self, pe: usize, cell: UVec2) -> usize {
        pe * self.block_cells() + (cell.y * self.stride() + cell.x) as usize
    }

    /// Global point held by owned `cell` of PE `pe` after the grid translated by `shift`
    /// points: `X = PX*n + (j - w) - shift` (docs/design.md, section 2).
    pub fn owned_point(&self, pe: UVec2, cell: UVec2, shift: u64) -> UVec2 {
        let size = self.global_size();
        let back = UVec2::new(
            (shift % size.x as u64) as u32,
            (shift % size.y as u64) as u32,
        );
        let frame = pe * self.n + cell - self.w();
        (frame % size + size - back) % size
    }

    /// The first owned global point `(X0, Y0)` of PE `pe` after a translation by `shift`; it
    /// owns `[X0, X0+n) x [Y0, Y0+n)` modulo the global size.
    pub fn owned_origin(&self, pe: UVec2, shift: u64) -> UVec2 {
        self.owned_point(pe, UVec2::splat(self.w()), shift)
    }

    /// The source of comm `cell` of PE `pe` in `sendrecv`. Panics in debug builds if `cell`
    /// is an owned cell.
    pub fn comm_source(&self, pe: UVec2, cell: UVec2) -> CommSource {
        let w = self.w();
        debug_assert!(cell.min_element() < w, "{cell} is an owned cell");
        let axis = |pe: u32, m: u32, pes: u32| {
            // Frame coordinate of the cell, made non-negative by one turn of the torus.
            let size = (pes * self.n) as u64;
            let turns = (w as u64).div_ceil(size);
            let u = pe as u64 * self.n as u64 + m as u64 + turns * size - w as u64;
            let unrolled_src = u / self.n as u64;
            let hops = (pe as u64 + turns * pes as u64 - unrolled_src) as u32;
            let src_pe = (unrolled_src % pes as u64) as u32;
            (hops, src_pe, (u % self.n as u64) as u32 + w)
        };
        let (hops_right, sx, sj) = axis(pe.x, cell.x, self.pes_x);
        let (hops_up, sy, si) = axis(pe.y, cell.y, self.pes_y);
        CommSource {
            hops_right,
            hops_up,
            pe: (sy * self.pes_x + sx) as usize,
            cell: UVec2::new(sj, si),
        }
    }

    /// Comm cell `k` (column, row) of a block, in the order `sendrecv` enumerates them: the
    /// lower strip (rows `[0, w)`, all columns, corner included), then the left strip.
    pub fn comm_cell(&self, k: u32) -> UVec2 {
        let (w, stride) = (self.w(), self.stride());
        let lower = w * stride;
        if k < lower {
            UVec2::new(k % stride, k / stride)
        } else {
            let k = k - lower;
            UVec2::new(k % w, w + k / w)
        }
    }

    /// PE coordinates of block `pe`.
    pub fn pe_coords(&self, pe: usize) -> UVec2 {
        UVec2::new(
            (pe % self.pes_x as usize) as u32,
            (pe / self.pes_x as usize) as u32,
        )
    }
}

/// Which SRAM slots one stage uses. A kernel's state ping-pongs between slots 0 and 1 from
/// step to step; stage `k` of `S` (but the last) writes slot `2 + k`, so that the next stage
/// still reads the step's start (`base`) with the comm layer it received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageSlots {
    /// The state this stage remaps (its comm layer is filled by `sendrecv`).
    pub cur: usize,
    /// The state at the start of the step.
    pub base: usize,
    /// Where the stage writes.
    pub out: usize,
}

impl StageSlots {
    /// Slots of remap number `remap` of a kernel with `stages` stages.
    pub fn of(stages: usize, remap: u64) -> Self {
        let (step, k) = (remap / stages as u64, (remap % stages as u64) as usize);
        let start = (step % 2) as usize;
        Self {
            cur: if k == 0 { start } else { 1 + k },
            base: start,
            out: if k + 1 == stages { 1 - start } else { 2 + k },
        }
    }

    /// Slots a kernel of `stages` stages needs.
    pub fn count(stages: usize) -> usize {
        stages + 1
    }

    /// The slot holding the state after `steps` whole steps.
    pub fn state(steps: u64) -> usize {
        (steps % 2) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_cells_cover_the_layer_once() {
        let g = WaferGeometry::new(2, 3, 3, 2).unwrap();
        let mut seen = vec![0u32; g.block_cells()];
        for k in 0..g.comm_cells() as u32 {
            let cell = g.comm_cell(k);
            assert!(cell.min_element() < g.w());
            seen[g.sram_index(0, cell)] += 1;
        }
        let owned = (g.n as usize).pow(2);
        assert_eq!(seen.iter().filter(|&&c| c == 1).count(), g.comm_cells());
        assert_eq!(seen.iter().filter(|&&c| c == 0).count(), owned);
    }

    #[test]
    fn bad_shapes_are_named() {
        let err = WaferGeometry::new(1, 1, 0, 2).unwrap_err().to_string();
        assert!(err.contains("n = 0") && err.contains("1..="), "{err}");
        let err = WaferGeometry::new(0, 1, 4, 2).unwrap_err().to_string();
        assert!(err.contains("PEs along x = 0"), "{err}");
    }

    #[test]
    fn stages_read_the_slot_the_last_one_wrote() {
        for stages in 1..=3 {
            let mut state = 0;
            for remap in 0..4 * stages as u64 {
                let s = StageSlots::of(stages, remap);
                assert_eq!(s.cur, state, "{stages} stages, remap {remap}");
                assert!(s.out != s.cur && s.out != s.base && s.out < StageSlots::count(stages));
                state = s.out;
                if (remap + 1) % stages as u64 == 0 {
                    assert_eq!(state, StageSlots::state((remap + 1) / stages as u64));
                }
            }
        }
    }
}
