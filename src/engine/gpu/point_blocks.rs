//! Time blocks of Point stages carried in registers, over the dense grid of the direct reads
//! (`src/engine/gpu/layout.rs`; `shaders/wafer_blocked_point.wgsl`). An invocation takes [`COLS`]
//! columns of the region beyond the link bands and walks their rows upwards from `L` rows
//! below them (`L = K S` remaps of a block of `K` steps of `S` stages): each row it loads is
//! level 0, the block's first state, and since remap `l`'s output point `(c, r)` reads the
//! points `c - 1 .. c`, `r - 1 .. r` of remap `l - 1` (its window) and of the step's start
//! (`base`), level `l`'s row follows at once from level `l - 1`'s last two rows, over the
//! `COLS + L - l` columns that level `L`'s still need. The generated code
//! ([`PointBlock::levels_wgsl`]) names every value, so that they stay in registers (arrays
//! indexed by a loop end up in memory on llvmpipe), and fills the small arrays through which
//! the kernel's stage functions read their windows. Each level takes its constants at the
//! global points its frame points hold: the frame translates by `shift_after(l)` after `l`
//! remaps. The link bands, cut in points (the block's reach in whole vec4s, whatever `n`),
//! step one remap at a time by the direct reads.

use super::tuning::Tuning;
use super::uniforms::BLOCK_COLS;
use crate::blocking;
use crate::kernels::{Driver, KernelSpec, Stage};
use crate::wafer::WaferGeometry;

/// Columns of an invocation's block: against 8, 1.2x the steps/s (shallow water 1024^2 on
/// lavapipe, blocks of 3 steps) for twice the compile time.
pub const COLS: u32 = 16;

/// The longest block: the generated code grows with the square of the remaps, and lavapipe
/// compiled shallow water's blocks of 3 steps in 7 s, of 5 in 40 s.
pub const LONGEST: u32 = 3;

/// Time blocks of `steps` steps of a Point kernel beyond link bands `band` points wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointBlock {
    pub steps: u32,
    pub band: u32,
}

impl PointBlock {
    /// Whether the fused engine blocks `steps` steps of `spec` on `g` this way with
    /// `tuning`: at most `LONGEST` (3), of Point stages whose windows are 2 x 2, read directly
    /// by runs over the dense grid (lavapipe's tuning), on a wafer whose width is a multiple
    /// of 4.
    pub fn applies(tuning: &Tuning, spec: &KernelSpec, g: &WaferGeometry, steps: u32) -> bool {
        steps <= LONGEST
            && super::direct_reads(tuning, spec, g)
            && tuning.direct_cols == BLOCK_COLS
            && spec.comm_width == 1
            && spec.stages.iter().all(|s| s.driver == Driver::Point)
            && (g.pes_x * g.n).is_multiple_of(4)
    }

    /// The blocking of `steps` steps on `g` of a `global` grid: link bands as wide as the
    /// block's remaps reach, in whole vec4s ([`blocking::point_band`]); or why the wafer has
    /// no point clear of them or the global grid is narrower than a block's reads (whose
    /// columns wrap around it once).
    pub fn plan(
        spec: &KernelSpec,
        g: &WaferGeometry,
        global: glam::UVec2,
        steps: u32,
    ) -> Result<Self, String> {
        let band = blocking::point_band(spec, g, steps)?;
        let width = COLS + blocking::remaps(spec, steps);
        if global.x < width {
            return Err(format!(
                "a block reads {width} columns, more than the {}-point global grid",
                global.x
            ));
        }
        Ok(Self { steps, band })
    }

    /// Blocks per wafer of the region, for invocations that walk `rows` rows.
    pub fn blocks(&self, g: &WaferGeometry, rows: u32) -> u64 {
        let region = g.global_size() - self.band;
        region.x.div_ceil(COLS) as u64 * region.y.div_ceil(rows) as u64
    }

    /// Blocks per wafer of the bands' direct reads (`compute_bands` of
    /// `shaders/wafer_point_direct.wgsl`), by runs of `run` points: the left band, then the
    /// low band right of it.
    pub fn band_blocks(&self, g: &WaferGeometry, run: glam::UVec2) -> u64 {
        let size = g.global_size();
        let count =
            |points: glam::UVec2| (points.x.div_ceil(run.x) * points.y.div_ceil(run.y)) as u64;
        count(glam::UVec2::new(self.band, size.y))
            + count(glam::UVec2::new(size.x - self.band, self.band))
    }

    /// The generated WGSL of the levels of `spec`, whose Point stages read `consts` constant
    /// planes and `row_consts` row constants: `LEVELS` (L), `SHIFT` (the frame's translation
    /// over a block) and `BLOCK_COLS`; `set_columns(g0, nx)`, which fixes the global columns
    /// of every level for a block whose output starts at global column `g0`;
    /// `advance_levels(y0, size)`, which loads level 0's row (the driver's `state_at(f, i)`,
    /// value `i` of field `f`) at global row `y0` of a grid of `size` points, computes every
    /// level's row and returns level L's values of each field (at global row `y0 - SHIFT`);
    /// `keep_right` and `keep_top`, which keep the inner states' strips.
    pub fn levels_wgsl(&self, spec: &KernelSpec, consts: u32, row_consts: u32) -> String {
        let levels = Levels {
            spec,
            fields: spec.fields.len() as u32,
            consts,
            row_consts,
            last: blocking::remaps(spec, self.steps),
        };
        [
            levels.declarations(),
            levels.set_columns(),
            levels.advance(),
            levels.keep_right(),
            levels.keep_top(),
        ]
        .concat()
    }
}

/// The generator of the levels' WGSL. Its names: `v{l}_{f}_{i}`, value `i` of field `f` in
/// level `l`'s row just computed, and `b{l}_{f}_{i}` in its row before; `q{l}_{c}_{i}` and
/// `p{l}_{c}_{i}` the same of constant plane `c` at level `l`'s windows' upper and lower rows
/// (loaded by the first step's levels, the others take them from the level a step before:
/// [`Levels::reused`]), `rq{l}_{t}` and `rp{l}_{t}` of row constant `t`; `col_{l}`, the
/// global column of level `l`'s first window.
struct Levels<'a> {
    spec: &'a KernelSpec,
    fields: u32,
    consts: u32,
    row_consts: u32,
    /// L.
    last: u32,
}

impl Levels<'_> {
    /// Values level `l` computes per row.
    fn width(&self, l: u32) -> u32 {
        COLS + self.last - l
    }

    /// The frame's translation after `l` remaps.
    fn shift(&self, l: u32) -> u32 {
        self.spec.shift_after(l as u64) as u32
    }

    /// The stage that computes level `l` (from 1).
    fn stage(&self, l: u32) -> &Stage {
        &self.spec.stages[(l - 1) as usize % self.spec.stages.len()]
    }

    /// Declarations of `var<private> {prefix}{l}_{x}_{i}`, `x` below `count`, `i` up to
    /// `width` (excluded).
    fn privates(prefix: &str, l: u32, count: u32, width: u32) -> String {
        let mut s = String::new();
        for x in 0..count {
            for i in 0..width {
                s += &format!("var<private> {prefix}{l}_{x}_{i}: f32;\n");
            }
        }
        s
    }

    fn declarations(&self) -> String {
        let mut s = format!(
            "const LEVELS: u32 = {}u;\nconst SHIFT: u32 = {}u;\nconst BLOCK_COLS: u32 = {COLS}u;\n",
            self.last,
            self.shift(self.last)
        );
        for l in 0..=self.last {
            s += &format!("var<private> col_{l}: u32;\n");
        }
        for l in 0..self.last {
            s += &Self::privates("b", l, self.fields, self.width(l));
        }
        for l in 1..=self.last {
            s += &Self::privates("p", l, self.consts, self.width(l) + 1);
            for t in 0..self.row_consts {
                s += &format!("var<private> rp{l}_{t}: f32;\n");
            }
        }
        s
    }

    /// The global column of level `l`'s first window less `g0` (level 0: of its first
    /// value).
    fn first_column(&self, l: u32) -> i32 {
        let origin = if l == 0 { 0 } else { self.stage(l).origin };
        let lead = |l: u32| l as i32 - self.shift(l) as i32;
        lead(l) - lead(self.last) + origin
    }

    fn set_columns(&self) -> String {
        let mut s = "fn set_columns(g0: u32, nx: u32) {\n".to_string();
        for l in 0..=self.last {
            s += &format!(
                "    col_{l} = (g0 + {}u * nx - {}u) % nx;\n",
                self.last + 2,
                -self.first_column(l)
            );
        }
        s + "}\n"
    }

    fn advance(&self) -> String {
        let mut s = "fn advance_levels(y0: u32, size: vec2<u32>) -> array<array<f32, BLOCK_COLS>, FIELDS> {\n".to_string();
        for f in 0..self.fields {
            for i in 0..self.width(0) {
                s += &format!("    let v0_{f}_{i} = state_at({f}u, {i}u);\n");
            }
        }
        for l in 1..=self.last {
            s += &self.level(l);
        }
        s += &self.keep_rows();
        let out: Vec<String> = (0..self.fields)
            .map(|f| {
                let row: Vec<String> = (0..COLS)
                    .map(|i| format!("v{}_{f}_{i}", self.last))
                    .collect();
                format!("array<f32, BLOCK_COLS>({})", row.join(", "))
            })
            .collect();
        s + &format!(
            "    return array<array<f32, BLOCK_COLS>, FIELDS>({});\n}}\n",
            out.join(", ")
        )
    }

    /// Level `l`'s row: its constants' upper rows, then each point.
    fn level(&self, l: u32) -> String {
        let reach = (self.stage(l).origin + self.spec.comm_width as i32) as u32;
        let width = self.width(l);
        let mut s = format!("    let y{l} = back(y0, {}u, size.y);\n", self.shift(l));
        s += &format!("    let cy{l} = wrap_up(y{l} + {reach}u, size.y);\n");
        let reused = self.reused(l);
        for c in 0..self.consts {
            for i in 0..=width {
                let value = match reused {
                    Some((j, on)) => format!("p{j}_{c}_{}", i + on),
                    None => {
                        format!("load_const({c}u, vec2(wrap_up(col_{l} + {i}u, size.x), cy{l}))")
                    }
                };
                s += &format!("    let q{l}_{c}_{i} = {value};\n");
            }
        }
        for t in 0..self.row_consts {
            let value = match reused {
                Some((j, _)) => format!("rp{j}_{t}"),
                None => format!("load_row_const({t}u, cy{l})"),
            };
            s += &format!("    let rq{l}_{t} = {value};\n");
            s += &format!("    wrow[{t}] = array<f32, 2>(rp{l}_{t}, rq{l}_{t});\n");
        }
        for i in 0..width {
            s += &self.point(l, i);
        }
        s
    }

    /// Where level `l`'s constants lie already when a step translates the frame by one
    /// point: level `j = l - S` (the same stage a step before) loaded them at the frame row
    /// before, `S - 1` values further on: `Some((j, S - 1))`; `None` for the first step's
    /// levels, which load theirs.
    fn reused(&self, l: u32) -> Option<(u32, u32)> {
        let stages = self.spec.stages.len() as u32;
        (l > stages && self.spec.shift_per_step() == 1).then(|| (l - stages, stages - 1))
    }

    /// Every level's rows just computed, kept as its rows before for the next row.
    fn keep_rows(&self) -> String {
        let mut s = String::new();
        for l in 0..self.last {
            for f in 0..self.fields {
                for i in 0..self.width(l) {
                    s += &format!("    b{l}_{f}_{i} = v{l}_{f}_{i};\n");
                }
            }
        }
        for l in 1..=self.last {
            for c in 0..self.consts {
                for i in 0..=self.width(l) {
                    s += &format!("    p{l}_{c}_{i} = q{l}_{c}_{i};\n");
                }
            }
            for t in 0..self.row_consts {
                s += &format!("    rp{l}_{t} = rq{l}_{t};\n");
            }
        }
        s
    }

    /// Point `i` of level `l`: its windows, the stage, its values. The step's start is level
    /// `l - 1 - k` for stage `k`, whose window at the same frame point starts `k` values on.
    fn point(&self, l: u32, i: u32) -> String {
        let stage = self.stage(l);
        let k = (l - 1) % self.spec.stages.len() as u32;
        let window = |prefix: &str, level: u32, at: u32| {
            let [a, b] = [at, at + 1].map(|x| format!("{level}_{prefix}_{x}"));
            format!("array<f32, 4>(b{a}, b{b}, v{a}, v{b})")
        };
        let mut s = String::new();
        for f in 0..self.fields {
            let f = f.to_string();
            s += &format!("    win[{f}] = {};\n", window(&f, l - 1, i));
            s += &format!("    win0[{f}] = {};\n", window(&f, l - 1 - k, i + k));
        }
        for c in 0..self.consts {
            let [a, b] = [i, i + 1].map(|x| format!("{l}_{c}_{x}"));
            s += &format!("    wconst[{c}] = array<f32, 4>(p{a}, p{b}, q{a}, q{b});\n");
        }
        s += &format!(
            "    let o{l}_{i} = {}(vec2(wrap_up(col_{l} + {}u, size.x), y{l}));\n",
            stage.name,
            i as i32 - stage.origin
        );
        for f in 0..self.fields {
            s += &format!("    let v{l}_{f}_{i} = o{l}_{i}[{f}];\n");
        }
        s
    }

    /// Level `l`'s value of field `f` at block column `c`, in the row last computed.
    fn kept(&self, l: u32, f: u32, c: u32) -> String {
        format!("b{l}_{f}_{}", c + self.last - l)
    }

    /// `keep_right(at, stride, c)`: of every inner state (levels 1 to L - 1) and field, the
    /// value at block column `c` (3 more than a multiple of 4) of the row just computed, to
    /// `history[at + (f L + l) stride]`.
    fn keep_right(&self) -> String {
        let mut s = "fn keep_right(at: u32, stride: u32, c: u32) {\n".to_string();
        for l in 1..self.last {
            for f in 0..self.fields {
                let mut pick = self.kept(l, f, 3);
                for c in (7..COLS).step_by(4) {
                    pick = format!("select({pick}, {}, c == {c}u)", self.kept(l, f, c));
                }
                let state = f * self.last + l;
                s += &format!("    history[at + {state}u * stride] = {pick};\n");
            }
        }
        s + "}\n"
    }

    /// `keep_top(at, stride, trash, cols)`: after the last row, the block's first `cols`
    /// columns of every inner state's row to `history[at + (f L + l) stride + c]`, the
    /// others to `trash`.
    fn keep_top(&self) -> String {
        let mut s = "fn keep_top(at: u32, stride: u32, trash: u32, cols: u32) {\n".to_string();
        for l in 1..self.last {
            for f in 0..self.fields {
                let state = f * self.last + l;
                for c in 0..COLS {
                    s += &format!(
                        "    history[select(trash, at + {state}u * stride + {c}u, {c}u < cols)] = {};\n",
                        self.kept(l, f, c)
                    );
                }
            }
        }
        s + "}\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::KernelKind;

    #[test]
    fn bands_reach_as_far_as_the_remaps_in_whole_vec4s() {
        let spec = KernelKind::Swe.spec();
        // Blocks of 3 steps reach 6 points, widened to 8, at any n.
        for n in [1, 2, 3, 8, 12] {
            let g = WaferGeometry::new(24, 24, n, spec.comm_width).unwrap();
            let plan = PointBlock::plan(spec, &g, g.global_size(), 3).unwrap();
            assert_eq!(plan.band, 8, "n = {n}");
        }
        let g = WaferGeometry::new(8, 20, 1, spec.comm_width).unwrap();
        let err = PointBlock::plan(spec, &g, g.global_size(), 3).unwrap_err();
        assert!(
            err.contains("8x20-point wafer") && err.contains("8-point"),
            "{err}"
        );
        let g = WaferGeometry::new(5, 5, 4, spec.comm_width).unwrap();
        let err = PointBlock::plan(spec, &g, g.global_size(), 3).unwrap_err();
        assert!(
            err.contains("22 columns") && err.contains("20-point"),
            "{err}"
        );
    }
}
