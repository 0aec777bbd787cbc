//! Time blocks, as both backends run them: data only moves right and up, so `K` steps of a
//! span of points need only the `K S w` points left of and below it at the block's first state
//! (`S` stages per step, each remap reaching `w` further). The PEs within `ceil(K S w / n)` of
//! the wafer's left and low edges (the link bands) would need `K S` packages from the links;
//! they step one remap at a time, and the region beyond them advances `K` steps at once.
//! Blocks start at multiples of `K` steps and lie wholly inside one `advance`; `K` is odd, so
//! that the region's result lands in the SRAM slot that the bands' last remap writes. The
//! packages of a block's inner states leave one per remap, their region points from a history
//! of the top and right strips.

use crate::kernels::KernelSpec;
use crate::wafer::WaferGeometry;

/// A multiple of every allowed block: runs that advance in chunks of it keep every block
/// whole, whichever `K` the engine uses.
pub const WHOLE_BLOCKS: u64 = 315;

/// The allowed steps per time block (1: none): odd, so that the region's result lands in the
/// SRAM slot of the bands' last remap, and dividing [`WHOLE_BLOCKS`].
pub const TIME_BLOCKS: [u32; 7] = [1, 3, 5, 7, 9, 15, 21];

/// Checks a block length against [`TIME_BLOCKS`].
pub fn check_steps(steps: u32) -> Result<(), String> {
    if !TIME_BLOCKS.contains(&steps) {
        let allowed: Vec<String> = TIME_BLOCKS.iter().map(u32::to_string).collect();
        return Err(format!(
            "time-block = {steps} is out of range: allowed {} (1: none)",
            allowed.join(", ")
        ));
    }
    Ok(())
}

/// The least common multiple of `a` and `b`.
pub fn lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// The allowed block of at most `longest` steps that runs the most steps in blocks when a run
/// advances `interval` steps at a time (a block runs only inside one `advance`), the longer on
/// a tie; 1 where none fits.
pub fn fitting(longest: u32, interval: u64) -> u32 {
    // Steps in blocks over `WHOLE_BLOCKS` advances, a whole number of periods of both.
    let blocked = |k: u32| -> u64 {
        let advance = |m: u64| (m * interval, (m + 1) * interval);
        (0..WHOLE_BLOCKS)
            .map(|m| steps_in_blocks(k, advance(m)))
            .sum()
    };
    TIME_BLOCKS
        .into_iter()
        .filter(|&k| k > 1 && k <= longest && u64::from(k) <= interval)
        .max_by_key(|&k| (blocked(k), k))
        .unwrap_or(1)
}

/// Steps that an advance from step `from` to `to` runs in blocks of `k` steps: those of the
/// blocks that start at multiples of `k` and end inside it.
pub fn steps_in_blocks(k: u32, (from, to): (u64, u64)) -> u64 {
    let k = u64::from(k);
    match k > 1 {
        true => (to / k).saturating_sub(from.div_ceil(k)) * k,
        false => 0,
    }
}

/// Remaps (stages) in a block of `steps` steps of `spec`.
pub fn remaps(spec: &KernelSpec, steps: u32) -> u32 {
    steps * spec.stages.len() as u32
}

/// The width in points of link bands cut in points (the GPU's blocks in registers): as far as
/// the remaps of blocks of `steps` steps of `spec` reach, in whole vec4s; or why no point of
/// wafer `g` lies clear of them.
pub fn point_band(spec: &KernelSpec, g: &WaferGeometry, steps: u32) -> Result<u32, String> {
    let band = (remaps(spec, steps) * g.w()).next_multiple_of(4);
    let size = g.global_size();
    if band >= size.x || band >= size.y {
        return Err(format!(
            "no point of the {}x{}-point wafer lies clear of {band}-point link bands",
            size.x, size.y
        ));
    }
    Ok(band)
}

/// The width in PEs of the link bands of blocks of `steps` steps of `spec` on wafer `g`, or
/// why the wafer has no region to block: every remap reaches `w` points further.
pub fn link_band(spec: &KernelSpec, g: &WaferGeometry, steps: u32) -> Result<u32, String> {
    let reach = remaps(spec, steps) * g.w();
    let band = reach.div_ceil(g.n);
    if band >= g.pes_x || band >= g.pes_y {
        return Err(format!(
            "no PE of the {}x{} wafer lies {reach} points clear of its low edges",
            g.pes_x, g.pes_y
        ));
    }
    Ok(band)
}

/// PEs of PE row `py` (of `pes_x`) that step one remap at a time: all of them outside a
/// block (`band` is `None`), inside one those of the link bands, `band` PEs wide.
pub fn stepping_pes(band: Option<usize>, py: usize, pes_x: usize) -> usize {
    match band {
        Some(b) if py >= b => b,
        _ => pes_x,
    }
}

/// Where a wafer's state stands in the time blocks of a run from state `from` to `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InBlock {
    No,
    Start,
    Inner,
}

/// Where remap `state` stands in the blocks of `remaps` remaps of a run from remap `from` to
/// `target`.
pub fn position(remaps: u64, state: u64, (from, target): (u64, u64)) -> InBlock {
    let start = state - state % remaps.max(1);
    if remaps < 2 || start < from || start + remaps > target {
        InBlock::No
    } else if start == state {
        InBlock::Start
    } else {
        InBlock::Inner
    }
}

/// Index in a wafer's strip history (one field, one inner state: the top strip, `w` rows of
/// `W` cells, then the right strip, `H` rows of `w` cells; the corner belongs to the top) of
/// frame point `(x, y)` of a wafer of `frame` points (`history_index` in
/// `shaders/time_block.wgsl`).
pub fn strip_index(frame: glam::UVec2, w: u32, (x, y): (u32, u32)) -> usize {
    if y + w >= frame.y {
        ((y + w - frame.y) * frame.x + x) as usize
    } else {
        (w * frame.x + y * w + x + w - frame.x) as usize
    }
}

/// Cells of one field's strips of one inner state (remap).
pub fn strip_cells(frame: glam::UVec2, w: u32) -> usize {
    (w * (frame.x + frame.y)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_allowed_block_is_odd_and_divides_whole_blocks_and_others_are_refused() {
        for steps in TIME_BLOCKS {
            assert!(check_steps(steps).is_ok(), "{steps}");
            assert!(
                steps % 2 == 1 && WHOLE_BLOCKS.is_multiple_of(steps as u64),
                "{steps}"
            );
        }
        for steps in [0, 2, 4, 11, 13, 17, 35, 315] {
            let err = check_steps(steps).unwrap_err();
            assert!(err.contains(&format!("time-block = {steps} ")), "{err}");
            assert!(err.contains("allowed 1, 3, 5, 7, 9, 15, 21"), "{err}");
        }
    }

    #[test]
    fn the_fitting_block_runs_the_most_steps_between_reads() {
        // interval, longest, block: 10 = 2 x 5 all in blocks (9 would leave 1 of 10 out),
        // 11 best in blocks of 3 (9 of every 11), 1 and 2 in none, 40 = 8 x 5.
        for (interval, longest, block) in [
            (10, 9, 5),
            (11, 9, 3),
            (1, 9, 1),
            (2, 9, 1),
            (40, 9, 5),
            (45, 15, 15),
            (63, 21, 21),
            (315, 9, 9),
            (7, 21, 7),
        ] {
            assert_eq!(fitting(longest, interval), block, "{interval} {longest}");
        }
        // Blocks start at multiples of k and end inside the advance.
        for (k, advance, steps) in [(5, (10, 16), 5), (5, (16, 20), 0), (5, (0, 59), 55)] {
            assert_eq!(steps_in_blocks(k, advance), steps, "{k} {advance:?}");
        }
        assert_eq!(steps_in_blocks(1, (0, 10)), 0);
    }

    #[test]
    fn blocks_lie_inside_the_run_and_start_at_multiples() {
        let at = |s| position(3, s, (4, 13));
        let positions: Vec<InBlock> = (4..13).map(at).collect();
        use InBlock::*;
        assert_eq!(
            positions,
            [No, No, Start, Inner, Inner, Start, Inner, Inner, No]
        );
        assert_eq!(position(1, 6, (0, 100)), No);
    }

    #[test]
    fn strips_cover_the_top_rows_and_right_columns_once() {
        let frame = glam::UVec2::new(7, 5);
        let w = 2;
        let mut seen = vec![0; strip_cells(frame, w)];
        for y in 0..frame.y {
            for x in 0..frame.x {
                if y + w >= frame.y || x + w >= frame.x {
                    seen[strip_index(frame, w, (x, y))] += 1;
                }
            }
        }
        // The right strip's rows under the top strip are used; its top w rows are not.
        let unused = (w * w) as usize;
        assert_eq!(
            seen.iter().filter(|&&c| c == 1).count(),
            seen.len() - unused
        );
        assert!(seen.iter().all(|&c| c <= 1));
    }
}
