//! The packages on the links, on the CPU: the twins of `shaders/cluster_pack.wgsl` (up and
//! right packages) and of the link side of `shaders/cluster_sendrecv.wgsl` (filling a wafer's
//! comm layers from its own cells and its incoming packages).
//!
//! Up package: the sender's top strip, frame rows `[H-w, H)` by columns `[0, W)`, row-major.
//! Right package: frame rows `[-w, H)` by the sender's last `w` columns `[W-w, W)`, row-major;
//! its first `w` rows are the corner, forwarded from the up package that came from below.

use glam::UVec2;

use super::ClusterGeometry;
use crate::wafer::WaferGeometry;

/// SRAM index (within one wafer's SRAM) of the owned cell at local frame point `(x, y)`.
fn owned_index(c: &ClusterGeometry, x: u32, y: u32) -> usize {
    let g = &c.wafer;
    let pe = (y / g.n * g.pes_x + x / g.n) as usize;
    g.sram_index(pe, UVec2::new(x % g.n, y % g.n) + g.w())
}

/// The up package of one wafer's SRAM.
pub fn pack_up(c: &ClusterGeometry, sram: &[f32]) -> Vec<f32> {
    let (
        UVec2 {
            x: width,
            y: height,
        },
        w,
    ) = (c.wafer_points(), c.wafer.w());
    (height - w..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .map(|(x, y)| sram[owned_index(c, x, y)])
        .collect()
}

/// The right package of one wafer's SRAM, with the corner from `below_up`, the up package
/// this wafer received from below.
pub fn pack_right(c: &ClusterGeometry, sram: &[f32], below_up: &[f32]) -> Vec<f32> {
    let (
        UVec2 {
            x: width,
            y: height,
        },
        w,
    ) = (c.wafer_points(), c.wafer.w());
    let mut package = Vec::with_capacity(c.package_cells(super::Direction::Right));
    for row in 0..height + w {
        for x in width - w..width {
            package.push(match row.checked_sub(w) {
                Some(y) => sram[owned_index(c, x, y)],
                None => below_up[(row * width + x) as usize],
            });
        }
    }
    package
}

/// Table 3's `sendrecv` for PE `pe` of one wafer: the PE's comm layer, in the order
/// [`write_comm_layer`] stores it (the `w` lower rows of the block, whole, then the `w` left
/// columns of each owned row), from the grid points of the same frame coordinates. Points on
/// the wafer come from its SRAM `sram` (to the left and/or below), the others from the right
/// package of the wafer to the left (`left`) or the up package of the wafer below (`below`).
/// Runs of owned columns are copied whole.
pub fn receive(
    c: &ClusterGeometry,
    sram: &[f32],
    pe: usize,
    layer: &mut [f32],
    left: &[f32],
    below: &[f32],
) {
    let g = &c.wafer;
    let (n, w, s) = (g.n as usize, g.w() as i64, g.stride() as usize);
    let width = c.wafer_points().x as i64;
    let UVec2 { x: px, y: py } = g.pe_coords(pe);
    let (x0, y0) = ((px * g.n) as i64 - w, (py * g.n) as i64 - w);
    let fetch = |x: i64, y: i64| match (x >= 0, y >= 0) {
        (true, true) => sram[owned_index(c, x as u32, y as u32)],
        (true, false) => below[((y + w) * width + x) as usize],
        (false, _) => left[((y + w) * w + x + w) as usize],
    };
    let (strip, columns) = layer.split_at_mut(w as usize * s);
    for line in 0..w {
        // Row `line` of the lower strip: w cells that may lie to the left, then one owned row.
        let y = y0 + line;
        let row = &mut strip[line as usize * s..(line as usize + 1) * s];
        for j in 0..w {
            row[j as usize] = fetch(x0 + j, y);
        }
        let owned = match y {
            0.. => &sram[owned_index(c, px * g.n, y as u32)..][..n],
            _ => &below[((y + w) * width) as usize + (px * g.n) as usize..][..n],
        };
        row[w as usize..].copy_from_slice(owned);
        // Column `line` of the left strip, rows [w, n + w).
        let x = x0 + line;
        for i in 0..n {
            columns[i * w as usize + line as usize] = match x {
                0.. => sram[owned_index(c, x as u32, py * g.n) + i * s],
                _ => left[((py * g.n) as usize + i + w as usize) * w as usize + (x + w) as usize],
            };
        }
    }
}

/// Stores a comm layer from [`receive`] into a PE's SRAM block.
pub fn write_comm_layer(g: &WaferGeometry, block: &mut [f32], layer: &[f32]) {
    let (w, s) = (g.w() as usize, g.stride() as usize);
    let (strip, columns) = layer.split_at(w * s);
    block[..w * s].copy_from_slice(strip);
    for (i, cells) in columns.chunks(w).enumerate() {
        block[(i + w) * s..][..w].copy_from_slice(cells);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::InitialCondition;

    /// Packages carried between the wafers fill every comm cell with the value the whole
    /// cluster's single-wafer `sendrecv` would copy there.
    #[test]
    fn packages_fill_the_comm_layers_like_one_big_wafer() {
        for (wafers, pes, n) in [
            ((1, 1), (1, 2), 2),
            ((3, 2), (2, 1), 3),
            ((2, 3), (3, 2), 1),
        ] {
            let wafer = WaferGeometry::new(pes.0, pes.1, n, 2).unwrap();
            let c = ClusterGeometry::new(wafers.0, wafers.1, wafer).unwrap();
            let whole = c.whole().unwrap();
            let size = whole.global_size();
            let field = InitialCondition::Index.field(size.x, size.y);
            let all: Vec<usize> = (0..c.count()).collect();
            let per = wafer.sram_cells() as usize;
            let sram = c.scatter(&field, &all).unwrap();
            let ups: Vec<_> = all
                .iter()
                .map(|&k| pack_up(&c, &sram[k * per..(k + 1) * per]))
                .collect();
            let rights: Vec<_> = all
                .iter()
                .map(|&k| {
                    let below = &ups[c.upstream(k, super::super::Direction::Up)];
                    pack_right(&c, &sram[k * per..(k + 1) * per], below)
                })
                .collect();
            let reference = ClusterGeometry::from(whole).scatter(&field, &[0]).unwrap();
            for k in all {
                let left = &rights[c.upstream(k, super::super::Direction::Right)];
                let below = &ups[c.upstream(k, super::super::Direction::Up)];
                let part = &sram[k * per..(k + 1) * per];
                let mut blocks = part.to_vec();
                let mut layer = vec![0.0; wafer.comm_cells()];
                for (b, block) in blocks.chunks_mut(wafer.block_cells()).enumerate() {
                    receive(&c, part, b, &mut layer, left, below);
                    write_comm_layer(&wafer, block, &layer);
                }
                let part = &blocks;
                for b in 0..wafer.pe_count() {
                    let pe = c.block_pe(k * wafer.pe_count() + b);
                    for cell in 0..wafer.comm_cells() as u32 {
                        let cell = wafer.comm_cell(cell);
                        let src = whole.comm_source(pe, cell);
                        let expected = reference[whole.sram_index(src.pe, src.cell)];
                        assert_eq!(
                            part[wafer.sram_index(b, cell)],
                            expected,
                            "{wafers:?} wafers of {pes:?} PEs, n = {n}: wafer {k} PE {b} cell {cell}"
                        );
                    }
                }
            }
        }
    }
}
