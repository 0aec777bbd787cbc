//! The dispatch table: for each range of a device's wafers, each rectangle of PEs and each
//! state, the uniform entry a dispatch binds (`DispatchUniform`).

use super::super::uniforms::DispatchUniform;
use crate::wafer::WaferGeometry;

/// The PE rectangles `[x0, y0, x1, y1]` of a dispatch table: all, top band, right band,
/// interior; then for time blocks or direct reads beyond link bands `band` PEs wide, the left
/// band, the low band right of it, and the region beyond them.
pub fn rectangles(g: &WaferGeometry, band: u32) -> [[u32; 4]; 7] {
    let edge = g.w().div_ceil(g.n);
    let (x, y) = (g.pes_x.saturating_sub(edge), g.pes_y.saturating_sub(edge));
    let (px, py) = (g.pes_x, g.pes_y);
    [
        [0, 0, px, py],
        [0, y, px, py],
        [x, 0, px, y],
        [0, 0, x, y],
        [0, 0, band.min(px), py],
        [band.min(px), 0, px, band.min(py)],
        [band.min(px), band.min(py), px, py],
    ]
}

/// The PE rectangles of the dispatch table, by index (see [`rectangles`]).
pub const ALL_PES: usize = 0;
pub const TOP_BAND: usize = 1;
pub const RIGHT_BAND: usize = 2;
pub const INTERIOR: usize = 3;
pub const LEFT_LINK_BAND: usize = 4;
pub const LOW_LINK_BAND: usize = 5;
pub const BEYOND_BANDS: usize = 6;
pub const RECTS: u64 = 7;

/// The wafer ranges of the dispatch table: all the device's wafers, then the aligned blocks of
/// every power-of-two size (`count = 2^l` wafers from a multiple of `count`), so that any run
/// of consecutive wafers takes a few dispatches.
pub struct Ranges {
    wafers: usize,
    /// Index of the first block of each size `2^l`.
    level_start: Vec<usize>,
    len: usize,
}

impl Ranges {
    pub fn new(wafers: usize) -> Self {
        let (mut level_start, mut len) = (vec![], 1);
        for level in 0..usize::BITS {
            if wafers >> level == 0 {
                break;
            }
            level_start.push(len);
            len += wafers >> level;
        }
        Self {
            wafers,
            level_start,
            len,
        }
    }

    /// `(first, count)` of every range, by index.
    fn all(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let blocks = self.level_start.iter().enumerate().flat_map(|(level, _)| {
            let count = 1 << level;
            (0..self.wafers / count).map(move |i| (i * count, count))
        });
        std::iter::once((0, self.wafers)).chain(blocks)
    }

    pub fn index(&self, first: usize, count: usize) -> usize {
        match (first, count) {
            (0, c) if c == self.wafers => 0,
            _ => self.level_start[count.trailing_zeros() as usize] + first / count,
        }
    }

    /// `(first, count, state)` dispatches covering `items` (`(local wafer, state)` pairs in
    /// increasing wafer order): runs of consecutive wafers with one state, each the whole
    /// device or split into aligned blocks.
    pub fn cover(&self, items: &[(usize, u64)]) -> Vec<(usize, usize, u64)> {
        let mut out = vec![];
        let mut i = 0;
        while i < items.len() {
            let (first, state) = items[i];
            let mut end = first + 1;
            while i + (end - first) < items.len() && items[i + (end - first)] == (end, state) {
                end += 1;
            }
            i += end - first;
            if (first, end) == (0, self.wafers) {
                out.push((0, self.wafers, state));
                continue;
            }
            let mut at = first;
            while at < end {
                // The largest aligned block from `at` that fits in the run.
                let aligned = if at == 0 {
                    usize::MAX
                } else {
                    1 << at.trailing_zeros()
                };
                let count = aligned.min(1 << (end - at).ilog2());
                out.push((at, count, state));
                at += count;
            }
        }
        out
    }
}

/// The dispatch entries, `stride` bytes apart: for each range, each PE rectangle and each
/// state modulo `period` (parity, ring slot and place in a time block).
pub fn dispatch_table(ranges: &Ranges, period: u64, rects: &[[u32; 4]; 7], stride: u64) -> Vec<u8> {
    let period = period as usize;
    let entries = ranges.len * rects.len() * period;
    let mut table = vec![0u8; entries * stride as usize];
    for (range, (first, count)) in ranges.all().enumerate() {
        for (r, &pes) in rects.iter().enumerate() {
            for step in 0..period {
                let entry = DispatchUniform {
                    first: first as u32,
                    count: count as u32,
                    step: step as u32,
                    pad: 0,
                    pes,
                };
                let at = ((range * rects.len() + r) * period + step) * stride as usize;
                table[at..at + std::mem::size_of::<DispatchUniform>()]
                    .copy_from_slice(bytemuck::bytes_of(&entry));
            }
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run of wafers is covered exactly once by ranges of the table.
    #[test]
    fn runs_of_wafers_are_covered_by_ranges_of_the_table() {
        for wafers in 1..=13 {
            let ranges = Ranges::new(wafers);
            let table: Vec<(usize, usize)> = ranges.all().collect();
            assert_eq!(table.len(), ranges.len);
            for first in 0..wafers {
                for end in first + 1..=wafers {
                    let items: Vec<(usize, u64)> = (first..end).map(|l| (l, 7)).collect();
                    let mut covered = vec![];
                    for (f, c, state) in ranges.cover(&items) {
                        assert_eq!(state, 7);
                        assert_eq!(
                            table[ranges.index(f, c)],
                            (f, c),
                            "{wafers}: [{first}, {end})"
                        );
                        covered.extend(f..f + c);
                    }
                    assert_eq!(covered, (first..end).collect::<Vec<_>>(), "{wafers}");
                }
            }
            // Different states split the run.
            let mixed = [(0, 1), (1, 1), (2, 2)];
            if wafers >= 3 {
                let cover = ranges.cover(&mixed);
                assert!(cover
                    .iter()
                    .all(|&(f, c, s)| (f..f + c).all(|l| mixed[l].1 == s)));
            }
        }
    }
}
