//! The packages on the links, on the CPU: the twins of `shaders/cluster_pack.wgsl` (up and
//! right packages) and of the link side of `shaders/cluster_sendrecv.wgsl` (filling a wafer's
//! comm layers from its own cells and its incoming packages).
//!
//! Up package: the sender's top strip, frame rows `[H-w, H)` by columns `[0, W)`, row-major.
//! Right package: frame rows `[-w, H)` by the sender's last `w` columns `[W-w, W)`, row-major;
//! its first `w` rows are the corner, forwarded from the up package that came from below.

use glam::UVec2;

use super::ClusterGeometry;

/// SRAM index (within one wafer's SRAM) of the owned cell at local frame point `(x, y)`.
pub fn owned_index(c: &ClusterGeometry, x: u32, y: u32) -> usize {
    let g = &c.wafer;
    let pe = (y / g.n * g.pes_x + x / g.n) as usize;
    g.sram_index(pe, UVec2::new(x % g.n, y % g.n) + g.w())
}

/// The up package of one wafer's SRAM.
pub fn pack_up(c: &ClusterGeometry, sram: &[f32]) -> Vec<f32> {
    pack_up_with(c, |x, y| sram[owned_index(c, x, y)])
}

/// The up package of the state whose frame point `(x, y)` holds `value(x, y)`.
pub fn pack_up_with(c: &ClusterGeometry, value: impl Fn(u32, u32) -> f32) -> Vec<f32> {
    let (
        UVec2 {
            x: width,
            y: height,
        },
        w,
    ) = (c.wafer_points(), c.wafer.w());
    (height - w..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .map(|(x, y)| value(x, y))
        .collect()
}

/// The right package of one wafer's SRAM, with the corner from `below_up`, the up package
/// this wafer received from below.
pub fn pack_right(c: &ClusterGeometry, sram: &[f32], below_up: &[f32]) -> Vec<f32> {
    pack_right_with(c, |x, y| sram[owned_index(c, x, y)], below_up)
}

/// The right package of the state whose frame point `(x, y)` holds `value(x, y)`.
pub fn pack_right_with(
    c: &ClusterGeometry,
    value: impl Fn(u32, u32) -> f32,
    below_up: &[f32],
) -> Vec<f32> {
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
                Some(y) => value(x, y),
                None => below_up[(row * width + x) as usize],
            });
        }
    }
    package
}

/// The lower strips of one field of a wafer, what each row of PEs receives from below:
/// for PE row `py`, frame rows `[py n - w, py n)` over the columns `[0, W)`, row-major, from
/// the wafer's own cells (`sram`) or, below the wafer, from the up package `below`.
pub fn lower_strips(c: &ClusterGeometry, sram: &[f32], below: &[f32]) -> Vec<f32> {
    let mut strips = vec![];
    lower_strips_into(c, sram, below, None, &mut strips);
    strips
}

/// [`lower_strips`] into `strips` (reused: the cells no PE reads keep what they held), for
/// the PEs of the link bands, `bands` PEs wide (all of them with `None`): PE rows at or
/// above the low band only need the columns of the left band.
pub fn lower_strips_into(
    c: &ClusterGeometry,
    sram: &[f32],
    below: &[f32],
    bands: Option<usize>,
    strips: &mut Vec<f32>,
) {
    let g = &c.wafer;
    let (n, w) = (g.n as usize, g.w() as usize);
    let width = c.wafer_points().x as usize;
    strips.resize(g.pes_y as usize * w * width, 0.0);
    for (k, row) in strips.chunks_mut(width).enumerate() {
        let (py, line) = (k / w, k % w);
        let pes = crate::blocking::stepping_pes(bands, py, g.pes_x as usize);
        match (py * n + line).checked_sub(w) {
            Some(y) => {
                for (px, run) in row.chunks_mut(n).take(pes).enumerate() {
                    copy_run(run, &sram[owned_index(c, (px * n) as u32, y as u32)..][..n]);
                }
            }
            None => row.copy_from_slice(&below[(py * n + line) * width..][..width]),
        }
    }
}

/// Table 3's `sendrecv` for PE `px` of PE row `py` of one field: fills the comm layer of its
/// block in `row` (the row's `pes_x` blocks) with the grid points of the same frame
/// coordinates: the lower `w` rows from `strips` ([`lower_strips`]) or, left of the wafer,
/// from `left`, the right package of the wafer to the left; the left `w` columns from the
/// owned cells of the PEs to its left in `row`, or from `left`.
pub fn receive(
    c: &ClusterGeometry,
    row: &mut [f32],
    (px, py): (usize, usize),
    strips: &[f32],
    left: &[f32],
) {
    let g = &c.wafer;
    let (n, w, s) = (g.n as usize, g.w() as usize, g.stride() as usize);
    let (width, block) = (c.wafer_points().x as usize, g.block_cells());
    let at = px * block;
    // Frame point of the block's cell (0, 0), shifted by w so that it is never negative.
    let (x0, y0) = (px * n, py * n);
    let from_left = |x: usize, y: usize| left[y * w + x];
    for line in 0..w {
        let strip = &strips[(py * w + line) * width..][..width];
        let lower = &mut row[at + line * s..][..s];
        match x0.checked_sub(w) {
            Some(x) => copy_run(lower, &strip[x..x + s]),
            None => {
                for (j, cell) in lower.iter_mut().enumerate() {
                    *cell = match (x0 + j).checked_sub(w) {
                        Some(x) => strip[x],
                        None => from_left(x0 + j, y0 + line),
                    };
                }
            }
        }
        match (x0 + line).checked_sub(w) {
            Some(x) => {
                let column = (x / n) * block + w * s + x % n + w;
                for i in 0..n {
                    row[at + (i + w) * s + line] = row[column + i * s];
                }
            }
            None => {
                for i in 0..n {
                    row[at + (i + w) * s + line] = from_left(x0 + line, y0 + i + w);
                }
            }
        }
    }
}

/// `to[..] = from[..to.len()]` for the short runs of one PE's row: eight values at a time,
/// inline; a call to `memmove` per run costs more than the copy at small `n` (LLVM turns a
/// plain loop, or one over `chunks_exact`, back into that call; one over arrays it leaves).
#[inline]
pub fn copy_run(to: &mut [f32], from: &[f32]) {
    let (to8, to_rest) = to.as_chunks_mut::<8>();
    let (from8, from_rest) = from[..to8.len() * 8 + to_rest.len()].as_chunks::<8>();
    for (to, from) in to8.iter_mut().zip(from8) {
        *to = *from;
    }
    for (to, from) in to_rest.iter_mut().zip(from_rest) {
        *to = *from;
    }
}

/// `rows` runs of `len` values, `from_stride` apart in `from`, into runs `to_stride` apart in
/// `to` (one PE's block of a span; both strides at least `len`): runs of a common `n` as
/// fixed-size arrays, so that each is a register move or two with no loop.
pub fn copy_runs(
    (to, to_stride): (&mut [f32], usize),
    (from, from_stride): (&[f32], usize),
    (rows, len): (usize, usize),
) {
    fn fixed<const L: usize>(to: &mut [f32], ts: usize, from: &[f32], fs: usize) {
        for (to, from) in to.chunks_mut(ts).zip(from.chunks(fs)) {
            to[..L].copy_from_slice(&from[..L]);
        }
    }
    debug_assert!(to_stride >= len && from_stride >= len);
    if rows == 0 {
        return;
    }
    let to = &mut to[..(rows - 1) * to_stride + len];
    let from = &from[..(rows - 1) * from_stride + len];
    match len {
        4 => fixed::<4>(to, to_stride, from, from_stride),
        8 => fixed::<8>(to, to_stride, from, from_stride),
        16 => fixed::<16>(to, to_stride, from, from_stride),
        _ => {
            for (to, from) in to.chunks_mut(to_stride).zip(from.chunks(from_stride)) {
                copy_run(&mut to[..len], from);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::InitialCondition;
    use crate::wafer::WaferGeometry;

    #[test]
    fn copy_runs_copies_each_run_and_nothing_else() {
        let from: Vec<f32> = (0..400).map(|v| v as f32).collect();
        for len in [1, 3, 4, 7, 8, 9, 16, 17] {
            for rows in [0, 1, 5] {
                let (fs, ts) = (len + 3, len + 6);
                let mut to = vec![-1.0; 200];
                copy_runs((&mut to[2..], ts), (&from[5..], fs), (rows, len));
                for (k, v) in to.iter().enumerate() {
                    let (r, c) = (
                        (k as isize - 2).div_euclid(ts as isize),
                        (k as isize - 2).rem_euclid(ts as isize),
                    );
                    let inside = k >= 2 && (r as usize) < rows && (c as usize) < len;
                    let expected = if inside {
                        (5 + r as usize * fs + c as usize) as f32
                    } else {
                        -1.0
                    };
                    assert_eq!(*v, expected, "len {len}, rows {rows}, cell {k}");
                }
            }
        }
    }

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
                let strips = lower_strips(&c, part, below);
                let row_cells = wafer.pes_x as usize * wafer.block_cells();
                for (py, row) in blocks.chunks_mut(row_cells).enumerate() {
                    for px in 0..wafer.pes_x as usize {
                        receive(&c, row, (px, py), &strips, left);
                    }
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
