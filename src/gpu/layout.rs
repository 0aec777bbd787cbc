//! How a device stores each PE's SRAM block: Table 3's `(n + w) x (n + w)` cells (comm rows
//! and columns first, then the owned cells), or, where the fused engine's direct reads load
//! and store vec4s, the same rows padded so that every row and every PE's first owned column
//! start on a multiple of 4 cells. Readbacks ([`SramLayout::read_table3`]) always give Table 3.

use crate::wafer::WaferGeometry;

/// Cells of one vec4.
const VEC4: u32 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SramLayout {
    /// Cells from one row of a block to the next.
    pub pitch: u32,
    /// The column of a block's first owned cell (its comm columns lie just before it).
    pub column0: u32,
    /// The column of a block's first comm column: where Table 3's row starts.
    lead: u32,
    /// Rows of a block (`n + w`), and cells of Table 3's row.
    rows: u32,
    /// Cells of one block.
    pub block: u32,
    pes: u32,
}

impl SramLayout {
    /// Table 3's layout.
    pub fn table3(g: &WaferGeometry) -> Self {
        Self::with(g, g.stride(), g.w())
    }

    /// Rows of a multiple of 4 cells, owned cells from a column that is one too.
    pub fn padded(g: &WaferGeometry) -> Self {
        let column0 = g.w().next_multiple_of(VEC4);
        Self::with(g, (column0 + g.n).next_multiple_of(VEC4), column0)
    }

    fn with(g: &WaferGeometry, pitch: u32, column0: u32) -> Self {
        let rows = g.stride();
        Self {
            pitch,
            column0,
            lead: column0 - g.w(),
            rows,
            block: rows * pitch,
            pes: g.pe_count() as u32,
        }
    }

    /// Whether this is Table 3's layout.
    pub fn is_table3(&self) -> bool {
        self.pitch == self.rows
    }

    /// SRAM cells of one field of one wafer.
    pub fn wafer_cells(&self) -> u64 {
        self.block as u64 * self.pes as u64
    }

    /// Wafers' SRAM in Table 3's layout, in this one (padding cells zero).
    pub fn lay_out(&self, table3: &[f32]) -> Vec<f32> {
        if self.is_table3() {
            return table3.to_vec();
        }
        let side = self.rows as usize;
        let blocks = table3.len() / (side * side);
        let mut out = vec![0.0; blocks * self.block as usize];
        for (b, block) in table3.chunks_exact(side * side).enumerate() {
            for (r, row) in block.chunks_exact(side).enumerate() {
                let at = b * self.block as usize + r * self.pitch as usize + self.lead as usize;
                out[at..at + side].copy_from_slice(row);
            }
        }
        out
    }

    /// Wafers' SRAM in this layout, in Table 3's.
    pub fn read_table3(&self, sram: &[f32]) -> Vec<f32> {
        if self.is_table3() {
            return sram.to_vec();
        }
        let side = self.rows as usize;
        let blocks = sram.len() / self.block as usize;
        let mut out = Vec::with_capacity(blocks * side * side);
        for block in sram.chunks_exact(self.block as usize) {
            for row in block.chunks_exact(self.pitch as usize).take(side) {
                out.extend_from_slice(&row[self.lead as usize..self.lead as usize + side]);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Padded rows start on a multiple of 4 cells, and so does every PE's first owned cell;
    /// Table 3's SRAM goes there and back unchanged, padding cells zero.
    #[test]
    fn padded_rows_align_the_owned_cells_and_keep_table3() {
        for (n, pes) in [(4, (3, 2)), (8, (1, 1)), (12, (2, 3)), (128, (1, 2))] {
            let g = WaferGeometry::new(pes.0, pes.1, n, 1).unwrap();
            let layout = SramLayout::padded(&g);
            assert_eq!((layout.pitch % 4, layout.column0 % 4), (0, 0), "n = {n}");
            assert!(layout.column0 >= g.w() && layout.pitch >= layout.column0 + n);
            let table3: Vec<f32> = (0..g.sram_cells() * 2).map(|i| i as f32 + 1.0).collect();
            let padded = layout.lay_out(&table3);
            assert_eq!(padded.len() as u64, layout.wafer_cells() * 2);
            assert_eq!(layout.read_table3(&padded), table3, "n = {n}");
            let nonzero = padded.iter().filter(|&&v| v != 0.0).count();
            assert_eq!(nonzero, table3.len(), "n = {n}: padding cells are zero");
            // Owned cell (0, 0) of PE 1 sits at an aligned offset.
            let owned = table3[g.sram_index(1, glam::UVec2::splat(g.w()))];
            let at = padded.iter().position(|&v| v == owned).unwrap();
            assert_eq!(at % 4, 0, "n = {n}");
        }
        let g = WaferGeometry::new(3, 2, 5, 1).unwrap();
        let table3: Vec<f32> = (0..g.sram_cells()).map(|i| i as f32).collect();
        let layout = SramLayout::table3(&g);
        assert!(layout.is_table3());
        assert_eq!(layout.lay_out(&table3), table3);
    }
}
