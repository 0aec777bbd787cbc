//! How a device stores its wafers' SRAM: Table 3's PE-major blocks of `(n + w) x (n + w)`
//! cells (comm rows and columns first, then the owned cells), or, where only the fused
//! engine's direct reads touch it (they read no comm layer), the owned points alone as one
//! row-major grid per wafer, so that neighbouring owned columns are neighbouring cells
//! whatever `n` (and 4 columns from a multiple of 4 one aligned vec4 where the wafer's width is
//! a multiple of 4), each row [`ROW_SKEW`] cells longer. Readbacks
//! ([`SramLayout::read_table3`]) always give Table 3's layout, the comm cells of the dense one
//! zero (as the direct reads leave them).

use crate::wafer::WaferGeometry;

/// Cells past the end of each row of the dense grid (a multiple of 4): rows a power of two
/// apart share cache sets, and a direct-read invocation walks dozens of them (on lavapipe,
/// heat5 2048^2, the direct kernel took 6.7 to 11.8 ms per step without the skew at n = 4 to
/// 128 and 4.9 to 5.8 ms with it).
const ROW_SKEW: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SramLayout {
    /// Cells from an owned row to the next within a PE.
    pub pitch: u32,
    /// Where a PE's first owned row and column lie in its block: `(w, w)`, or `(0, 0)`.
    pub first: u32,
    /// Cells from a PE's block to the next along x, and along y.
    pub pe_step: glam::UVec2,
    dense: bool,
    g: WaferGeometry,
}

impl SramLayout {
    /// Table 3's layout.
    pub fn table3(g: &WaferGeometry) -> Self {
        let block = g.block_cells() as u32;
        Self {
            pitch: g.stride(),
            first: g.w(),
            pe_step: glam::UVec2::new(block, block * g.pes_x),
            dense: false,
            g: *g,
        }
    }

    /// The owned points alone, one row-major grid per wafer (rows skewed).
    pub fn dense(g: &WaferGeometry) -> Self {
        let pitch = g.pes_x * g.n + ROW_SKEW;
        Self {
            pitch,
            first: 0,
            pe_step: glam::UVec2::new(g.n, g.n * pitch),
            dense: true,
            g: *g,
        }
    }

    /// SRAM cells of one field of one wafer.
    pub fn wafer_cells(&self) -> u64 {
        match self.dense {
            true => self.pitch as u64 * (self.g.pes_y * self.g.n) as u64,
            false => self.g.sram_cells(),
        }
    }

    /// Wafers' SRAM in Table 3's layout, in this one (comm cells dropped where dense).
    pub fn lay_out(&self, table3: &[f32]) -> Vec<f32> {
        if !self.dense {
            return table3.to_vec();
        }
        let wafers = table3.len() / self.g.sram_cells() as usize;
        let mut out = vec![0.0; wafers * self.wafer_cells() as usize];
        self.for_each_owned_row(wafers, |table3_at, at, n| {
            out[at..at + n].copy_from_slice(&table3[table3_at..table3_at + n]);
        });
        out
    }

    /// Wafers' SRAM in this layout, in Table 3's (comm cells zero where dense).
    pub fn read_table3(&self, sram: &[f32]) -> Vec<f32> {
        if !self.dense {
            return sram.to_vec();
        }
        let wafers = sram.len() / self.wafer_cells() as usize;
        let mut out = vec![0.0; wafers * self.g.sram_cells() as usize];
        self.for_each_owned_row(wafers, |table3_at, at, n| {
            out[table3_at..table3_at + n].copy_from_slice(&sram[at..at + n]);
        });
        out
    }

    /// Calls `f(table3_at, at, n)` for every owned row of `wafers` wafers: its first cell in
    /// Table 3's layout and in the dense one, and its length.
    fn for_each_owned_row(&self, wafers: usize, mut f: impl FnMut(usize, usize, usize)) {
        let g = &self.g;
        let (n, w) = (g.n as usize, g.w());
        for wafer in 0..wafers {
            for pe in 0..g.pe_count() {
                let at_pe = g.pe_coords(pe).as_usizevec2() * n;
                for i in 0..n {
                    let table3_at = wafer * g.sram_cells() as usize
                        + g.sram_index(pe, glam::UVec2::new(w, w + i as u32));
                    let at = wafer * self.wafer_cells() as usize
                        + (at_pe.y + i) * self.pitch as usize
                        + at_pe.x;
                    f(table3_at, at, n);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dense layout holds the owned points as one row-major grid per wafer (rows skewed);
    /// Table 3's SRAM goes there and back with its owned cells unchanged and its comm cells
    /// zero.
    #[test]
    fn the_dense_layout_is_the_owned_grid_and_keeps_the_owned_cells() {
        for (n, pes) in [(1, (2, 3)), (2, (3, 2)), (4, (1, 1)), (5, (2, 3))] {
            let g = WaferGeometry::new(pes.0, pes.1, n, 1).unwrap();
            let layout = SramLayout::dense(&g);
            let table3: Vec<f32> = (0..g.sram_cells() * 2).map(|i| i as f32 + 1.0).collect();
            let dense = layout.lay_out(&table3);
            assert_eq!(dense.len() as u64, layout.wafer_cells() * 2, "n = {n}");
            assert_eq!(layout.pitch, g.pes_x * n + ROW_SKEW);
            let back = layout.read_table3(&dense);
            for (k, (&a, &b)) in table3.iter().zip(&back).enumerate() {
                let cell = (k as u64 % g.sram_cells()) as usize;
                let (pe, at) = (cell / g.block_cells(), cell % g.block_cells());
                let (i, j) = (at as u32 / g.stride(), at as u32 % g.stride());
                let owned = i >= g.w() && j >= g.w();
                assert_eq!(b, if owned { a } else { 0.0 }, "n = {n}, cell {k}");
                if owned {
                    // Frame point (x, y) of the wafer sits at y * pitch + x.
                    let p = g.pe_coords(pe) * n + glam::UVec2::new(j, i) - g.w();
                    let wafer = k / g.sram_cells() as usize;
                    let at = wafer * layout.wafer_cells() as usize
                        + p.y as usize * layout.pitch as usize
                        + p.x as usize;
                    assert_eq!(dense[at], a, "n = {n}, cell {k}");
                }
            }
        }
        let g = WaferGeometry::new(3, 2, 5, 1).unwrap();
        let table3: Vec<f32> = (0..g.sram_cells()).map(|i| i as f32).collect();
        assert_eq!(SramLayout::table3(&g).lay_out(&table3), table3);
    }
}
