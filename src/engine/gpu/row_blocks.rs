//! Time blocks carried in registers, over the dense grid of heat's direct reads
//! (`src/engine/gpu/layout.rs`), where a workgroup tile would live in workgroup memory, which
//! lavapipe reads through per-lane loops ([`super::TimeBlock`]). An invocation takes 8 columns
//! of the region beyond the link bands by `DIRECT_ROWS` rows (`shaders/wafer_blocked_vec4.wgsl`)
//! and walks its rows upwards from `2 K` rows below them: each row it loads is level 0, and
//! since output point `(c, r)` of a remap reads the points `c - 2 .. c`, `r - 2 .. r`, level
//! `l`'s row `r` follows at once from level `l - 1`'s rows `r - 2 .. r`, over the
//! `8 + 2 (K - l)` columns that level `K`'s 8 still need. Each level keeps its last two rows;
//! the generated code ([`RowBlock::levels_wgsl`]) names every value, so that they stay in
//! registers (arrays of this size end up in memory on llvmpipe). The link bands are cut in
//! points, not PEs: as wide as the block's remaps reach, rounded up to whole vec4s, and stepped
//! one remap at a time by the direct reads (`compute_bands`).
//!
//! A GPU's shape of the same blocks ([`Tuning::block_lanes`]): a subgroup's lanes take one
//! column each, so that neighbouring invocations load and store neighbouring points, and a
//! remap's window takes the two columns left of a lane from the two lanes left of it by a
//! subgroup shuffle (`shaders/wafer_blocked_lanes.wgsl`). Level `l` is then right in lanes
//! `2 l` and up: a subgroup of `S` lanes advances `S - 2 K` columns.

use super::tuning::Tuning;
use super::uniforms::BLOCK_COLS;
use crate::blocking;
use crate::kernels::{Driver, KernelSpec};
use crate::wafer::WaferGeometry;

/// Columns a remap's window reaches left of (and rows below) its output point.
const REACH: u32 = 2;

/// Time blocks of `steps` steps carried in registers beyond link bands `band` points wide
/// (whatever the PEs: the region starts at point `(band, band)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowBlock {
    pub steps: u32,
    pub band: u32,
    /// The subgroup size where the lanes carry the blocks ([`Tuning::block_lanes`]).
    pub lanes: Option<u32>,
}

/// Rows an invocation of the link bands' direct reads walks: the bands are 8 to 44 points
/// wide, and with the region's 64 rows a band 16 points wide took one or two workgroups
/// (0.57 against 0.35 ms per step, heat5 2048^2 at n = 8 on lavapipe).
pub const BAND_ROWS: u32 = 8;

impl RowBlock {
    /// Whether the fused engine blocks `spec` on `g` this way with `tuning`: heat's direct
    /// reads of the dense grid (one Rows3 stage of one field, a wafer whose width is a
    /// multiple of 4), by vec4s (blocks of 8 columns) or a subgroup's lanes.
    pub fn applies(tuning: &Tuning, spec: &KernelSpec, g: &WaferGeometry) -> bool {
        super::direct_reads(tuning, spec, g)
            && (tuning.direct_cols == BLOCK_COLS || tuning.block_lanes.is_some())
            && spec.stages.len() == 1
            && spec.fields.len() == 1
            && spec.stages[0].driver == Driver::Rows3
            && (g.pes_x * g.n).is_multiple_of(4)
    }

    /// The blocking of `steps` steps on `g`, across subgroups of `lanes` lanes if given: link
    /// bands as wide as the block's remaps reach, in whole vec4s ([`blocking::point_band`]); or
    /// why the wafer has no region, or the subgroup no column to advance.
    pub fn plan(
        spec: &KernelSpec,
        g: &WaferGeometry,
        steps: u32,
        lanes: Option<u32>,
    ) -> Result<Self, String> {
        if let Some(lanes) = lanes.filter(|&l| l <= REACH * steps) {
            return Err(format!(
                "a subgroup of {lanes} lanes advances {REACH} columns fewer per step: allowed up to {} steps",
                (lanes - 1) / REACH
            ));
        }
        let band = blocking::point_band(spec, g, steps)?;
        Ok(Self { steps, band, lanes })
    }

    /// Columns a block advances: 8, or a subgroup's lanes less the reach of its remaps.
    pub fn block_cols(&self) -> u32 {
        self.lanes.map_or(BLOCK_COLS, |l| l - REACH * self.steps)
    }

    /// Blocks per wafer of the region (`compute_blocked`), of its top row and its right
    /// column, for blocks that walk `rows` rows; and of the bands (`compute_bands`, blocks of
    /// 8 columns by `BAND_ROWS`).
    pub fn blocks(&self, g: &WaferGeometry, rows: u32) -> (u64, u64, u64, u64) {
        let count = |points: glam::UVec2, (cols, rows): (u32, u32)| {
            (
                points.x.div_ceil(cols) as u64,
                points.y.div_ceil(rows) as u64,
            )
        };
        let size = g.global_size();
        let (x, y) = count(size - self.band, (self.block_cols(), rows));
        let left = count(glam::UVec2::new(self.band, size.y), (BLOCK_COLS, BAND_ROWS));
        let low = count(
            glam::UVec2::new(size.x - self.band, self.band),
            (BLOCK_COLS, BAND_ROWS),
        );
        (x * y, x, y, left.0 * left.1 + low.0 * low.1)
    }

    /// Values level `l` keeps per row.
    fn width(&self, l: u32) -> u32 {
        BLOCK_COLS + REACH * (self.steps - l)
    }

    /// Columns loaded left of the block: the reach, rounded up to whole vec4s.
    fn lead(&self) -> u32 {
        (REACH * self.steps).next_multiple_of(4)
    }

    /// The generated WGSL of the levels: `LEAD_QUADS`; the private values `a{l}_{i}` and
    /// `b{l}_{i}`, the last two rows of levels 0 to K - 1 (column `i` of the level's own);
    /// `advance_levels` (loads a row, computes every level's row, returns level K's 8 values);
    /// `keep_right` (the right strip's 2 cells of every inner state of the row just computed)
    /// and `keep_top` (the top strip's inner states, after the last row; its first `cols`
    /// columns, the others to `trash`).
    pub fn levels_wgsl(&self) -> String {
        let k = self.steps;
        let quads = self.lead() / 4;
        let mut s = format!("const LEAD_QUADS: u32 = {quads}u;\n");
        for l in 0..k {
            for i in 0..self.width(l) {
                s += &format!("var<private> a{l}_{i}: f32;\nvar<private> b{l}_{i}: f32;\n");
            }
        }
        s += "fn advance_levels(row: u32, q: Quads) -> array<f32, 8> {\n";
        for quad in 0..quads {
            s += &format!("    let q{quad} = x4[row + q.mid - {}u];\n", quads - quad);
        }
        s += &format!("    let q{quads} = x4[row + q.mid];\n");
        s += &format!("    let q{} = x4[row + q.right];\n", quads + 1);
        let drop = self.lead() - REACH * k;
        for i in 0..self.width(0) {
            let c = i + drop;
            let lane = ["x", "y", "z", "w"][(c % 4) as usize];
            s += &format!("    let v0_{i} = q{}.{lane};\n", c / 4);
        }
        for l in 1..=k {
            let p = l - 1;
            let row =
                |r: &str, i: u32| format!("vec3({r}{p}_{i}, {r}{p}_{}, {r}{p}_{})", i + 1, i + 2);
            for i in 0..self.width(l) {
                s += &format!(
                    "    let v{l}_{i} = stencil_point(params, {}, {}, {});\n",
                    row("a", i),
                    row("b", i),
                    row("v", i)
                );
            }
            for i in 0..self.width(p) {
                s += &format!("    a{p}_{i} = b{p}_{i};\n    b{p}_{i} = v{p}_{i};\n");
            }
        }
        let out: Vec<String> = (0..BLOCK_COLS).map(|i| format!("v{k}_{i}")).collect();
        s += &format!("    return array<f32, 8>({});\n}}\n", out.join(", "));
        // Level j's value at block column c, in the row last computed (b) or the one before.
        let value = |row: &str, j: u32, c: u32| format!("{row}{j}_{}", c + REACH * (k - j));
        s += "fn keep_right(at: u32, stride: u32, from_6: bool) {\n";
        for j in 1..k {
            for dx in 0..2 {
                s += &format!(
                    "    history[at + {j}u * stride + {dx}u] = select({}, {}, from_6);\n",
                    value("b", j, 2 + dx),
                    value("b", j, 6 + dx)
                );
            }
        }
        s += "}\nfn keep_top(at: u32, stride: u32, width: u32, trash: u32, cols: u32) {\n";
        for j in 1..k {
            for c in 0..BLOCK_COLS {
                let at = format!("select(trash, at + {j}u * stride + {c}u, {c}u < cols)");
                s += &format!("    history[{at}] = {};\n", value("a", j, c));
                let at = format!("select(trash, at + {j}u * stride + width + {c}u, {c}u < cols)");
                s += &format!("    history[{at}] = {};\n", value("b", j, c));
            }
        }
        s += "}\n";
        s
    }

    /// The generated WGSL of the levels across a subgroup's lanes: `LANES`; the private rows
    /// `a{l}` and `b{l}`, the window rows of level `l`'s last two rows at this lane's column
    /// (the two lanes left of it, then its own); `advance_levels` (takes this lane's value of
    /// a new row, computes every level's row, returns the last level's value) and
    /// `keep_levels` (every inner state at this lane's column, of the row just computed or,
    /// unless `last`, the one before, `stride` cells apart from `at` on).
    pub fn lanes_wgsl(&self, lanes: u32) -> String {
        let k = self.steps;
        let mut s = format!("const LANES: u32 = {lanes}u;\n");
        for l in 0..k {
            s += &format!("var<private> a{l}: vec3<f32>;\nvar<private> b{l}: vec3<f32>;\n");
        }
        s += "fn advance_levels(v0: f32) -> f32 {\n";
        for l in 0..k {
            s += &format!("    let r{l} = lane_row(v{l});\n");
            s += &format!(
                "    let v{} = stencil_point(params, a{l}, b{l}, r{l});\n",
                l + 1
            );
            s += &format!("    a{l} = b{l};\n    b{l} = r{l};\n");
        }
        s += &format!("    return v{k};\n}}\n");
        s += "fn keep_levels(at: u32, stride: u32, last: bool) {\n";
        for j in 1..k {
            s += &format!("    history[at + {j}u * stride] = select(a{j}.z, b{j}.z, last);\n");
        }
        s += "}\n";
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::KernelKind;

    #[test]
    fn bands_reach_as_far_as_the_remaps_in_whole_vec4s() {
        let spec = KernelKind::Heat5.spec();
        // steps, band: 3 steps reach 6 points, widened to 8; 5 reach 10, widened to 12.
        for (steps, band) in [(3, 8), (5, 12), (7, 16), (9, 20), (15, 32), (21, 44)] {
            for n in [1, 2, 7, 16] {
                let g = WaferGeometry::new(48, 48, n, spec.comm_width).unwrap();
                assert_eq!(RowBlock::plan(spec, &g, steps, None).unwrap().band, band);
            }
        }
        let g = WaferGeometry::new(12, 20, 1, spec.comm_width).unwrap();
        let err = RowBlock::plan(spec, &g, 5, None).unwrap_err();
        assert!(
            err.contains("12x20-point wafer") && err.contains("12-point"),
            "{err}"
        );
    }

    #[test]
    fn a_subgroup_advances_its_lanes_less_the_reach() {
        let spec = KernelKind::Heat5.spec();
        let g = WaferGeometry::new(48, 48, 2, spec.comm_width).unwrap();
        for (lanes, steps, cols) in [(32, 5, 22), (32, 15, 2), (8, 3, 2), (8, 1, 6)] {
            let plan = RowBlock::plan(spec, &g, steps, Some(lanes)).unwrap();
            assert_eq!(plan.block_cols(), cols);
        }
        let err = RowBlock::plan(spec, &g, 4, Some(8)).unwrap_err();
        assert!(
            err.contains("8 lanes") && err.contains("up to 3 steps"),
            "{err}"
        );
    }
}
