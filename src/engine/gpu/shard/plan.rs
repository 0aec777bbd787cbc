//! What a shard runs, decided once from the tuning, the problem and the request: the fused
//! engine's tiles, its time blocks, its direct reads and the SRAM layout they need.

use super::super::layout::SramLayout;
use super::super::point_blocks::PointBlock;
use super::super::row_blocks::RowBlock;
use super::super::tuning::{DirectGrid, Tuning};
use super::super::uniforms::BLOCK_COLS;
use crate::blocking;
use crate::kernels::{Driver, KernelSpec};
use crate::model::Problem;
use crate::wafer::{StageSlots, WaferGeometry};

/// The fused engine's time blocks ([`crate::blocking`]): one dispatch advances the region
/// beyond the link bands (`band` PEs wide) `steps` steps, a workgroup per span of `span`
/// points with [`TimeBlock::planes`] tiles of `tile_values` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBlock {
    pub steps: u32,
    pub band: u32,
    pub span: glam::UVec2,
    pub tile_values: u32,
}

impl TimeBlock {
    /// The blocking of `steps` steps for `spec` on wafer `g` with tiles of `cap` values in
    /// all, or why there is none.
    pub fn plan(
        spec: &KernelSpec,
        g: &WaferGeometry,
        steps: u32,
        cap: u32,
    ) -> std::result::Result<Self, String> {
        let driver = spec.stages[0].driver;
        let one_driver = spec.stages.iter().all(|s| s.driver == driver);
        if !one_driver || (driver == Driver::Rows3 && spec.stages.len() > 1) {
            return Err(format!(
                "the GPU blocks kernels whose stages share one driver, and Rows3 kernels of one stage, not {}",
                spec.name
            ));
        }
        let band = blocking::link_band(spec, g, steps)?;
        let reach = blocking::remaps(spec, steps) * g.w();
        let region = glam::UVec2::new(g.pes_x - band, g.pes_y - band) * g.n;
        let spare = Self::pitch_spare(spec);
        let per_tile = cap / Self::planes(spec);
        let side = (per_tile as f64).sqrt() as u32;
        let x = side.saturating_sub(reach + spare).min(region.x);
        let y = (per_tile / (x + reach + spare).max(1))
            .saturating_sub(reach)
            .min(region.y);
        if x == 0 || y == 0 {
            return Err(format!(
                "a span with its {reach}-point reach does not fit tiles of {per_tile} values"
            ));
        }
        Ok(Self {
            steps,
            band,
            span: glam::UVec2::new(x, y),
            tile_values: (x + reach + spare) * (y + reach),
        })
    }

    /// Tiles a workgroup holds: every field in every SRAM slot ([`StageSlots`]).
    pub fn planes(spec: &KernelSpec) -> u32 {
        (StageSlots::count(spec.stages.len()) * spec.fields.len()) as u32
    }

    /// Values past a tile row's last column: a Rows3 driver writes whole blocks of columns
    /// (`PITCH_SPARE`, composed into `shaders/fused_blocked.wgsl`).
    pub fn pitch_spare(spec: &KernelSpec) -> u32 {
        match spec.stages[0].driver {
            Driver::Rows3 => BLOCK_COLS - 1,
            Driver::Point => 0,
        }
    }
}

/// How the fused engine blocks in time: tiles in workgroup memory over Table 3's layout, or
/// rows carried in registers over the dense grid of the direct reads (heat's by vec4s or
/// across a subgroup's lanes, or Point stages').
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeBlocks {
    Tiles(TimeBlock),
    Rows(RowBlock),
    Points(PointBlock),
}

impl TimeBlocks {
    /// How the fused engine blocks `steps` steps of `problem` with `tuning`: in registers
    /// where [`RowBlock::applies`] or [`PointBlock::applies`], else in tiles; or why it
    /// cannot.
    pub fn plan(
        tuning: &Tuning,
        problem: &Problem,
        steps: u32,
    ) -> std::result::Result<Self, String> {
        let (spec, g) = (problem.spec(), &problem.cluster.wafer);
        if RowBlock::applies(tuning, spec, g) {
            return RowBlock::plan(spec, g, steps, tuning.block_lanes).map(Self::Rows);
        }
        if PointBlock::applies(tuning, spec, g, steps) {
            return PointBlock::plan(spec, g, problem.geometry.global_size(), steps)
                .map(Self::Points);
        }
        let cap = tile_cap(tuning.tile_bytes);
        match fused_block(g, spec.fields.len(), cap) {
            None => Err(format!(
                "they need a fused tile, and one PE of n = {} with its halo does not fit a workgroup's {cap} values",
                g.n
            )),
            Some(_) => TimeBlock::plan(spec, g, steps, cap).map(Self::Tiles),
        }
    }

    pub fn steps(&self) -> u32 {
        match self {
            Self::Tiles(b) => b.steps,
            Self::Rows(b) => b.steps,
            Self::Points(b) => b.steps,
        }
    }

    /// Width in PEs of the link bands that the dispatch table's rectangles cut (those of
    /// tiles; register blocks cut theirs in points).
    pub fn band(&self) -> u32 {
        match self {
            Self::Tiles(b) => b.band,
            Self::Rows(_) | Self::Points(_) => 0,
        }
    }

    /// Where the blocked region starts along x and y, in points.
    pub fn region_start(&self, g: &WaferGeometry) -> u32 {
        match self {
            Self::Tiles(b) => b.band * g.n,
            Self::Rows(b) => b.band,
            Self::Points(b) => b.band,
        }
    }
}

/// Values a fused Rows3 window may read past the tile's last row (`BLOCK_COLS + 2`;
/// `TILE_SLACK` in `shaders/common.wgsl`, checked by a test).
pub(crate) const TILE_SLACK: u32 = BLOCK_COLS + 2;

/// Values of a fused workgroup's tile of `bytes` of workgroup memory, less the slack
/// (`TILE_CAP` in `shaders/fused_tile.wgsl`, composed in).
pub fn tile_cap(bytes: u32) -> u32 {
    (bytes / 4).saturating_sub(TILE_SLACK)
}

/// PEs per fused workgroup (a block as wide, then as tall, as a tile of `cap` values holds
/// with every field and the halo), or `None` when not even one PE's points fit.
pub fn fused_block(g: &WaferGeometry, fields: usize, cap: u32) -> Option<glam::UVec2> {
    let (n, w) = (g.n, g.w());
    let cells = cap / fields as u32;
    let side = (cells as f64).sqrt() as u32;
    let x = (side.saturating_sub(w) / n).min(g.pes_x);
    let y = ((cells / (x * n + w).max(1)).saturating_sub(w) / n).min(g.pes_y);
    (x > 0 && y > 0).then_some(glam::UVec2::new(x, y))
}

/// Whether the fused engine reads `spec`'s windows on wafer `g` directly (with the tuning's
/// `fused=direct`): they write no comm layers, so no stage may read one (a Point window is
/// at most 3x3).
pub fn direct_reads(tuning: &Tuning, spec: &KernelSpec, g: &WaferGeometry) -> bool {
    let driver = spec.stages[0].driver;
    tuning.fused_direct
        && spec.stages.iter().all(|s| s.driver == driver)
        && (driver == Driver::Rows3 || g.w() <= 2)
}

/// PEs of the link bands that direct reads without time blocks leave to Table 3's sendrecv
/// and compute: none where their `compute_edges` reads the links past the wafer's low edges
/// (Rows3 stages; Point stages where the direct reads go by blocks of columns, lavapipe's
/// tuning); else a Point stage's window reaches w points beyond, ceil(w / n) PEs.
fn direct_band(tuning: &Tuning, spec: &KernelSpec, g: &WaferGeometry) -> u32 {
    match spec.stages[0].driver {
        Driver::Point if tuning.direct_cols == 1 => g.w().div_ceil(g.n),
        _ => 0,
    }
}

/// The engine a shard runs, with what it takes from the tuning.
#[derive(Clone, Debug)]
pub(super) struct Shape {
    /// The fused engine was asked for.
    pub fused: bool,
    /// PEs per fused workgroup's tile; `None` without the fused engine, or without room.
    pub block: Option<glam::UVec2>,
    /// Values of a fused tile.
    pub cap: u32,
    /// Steps per time block asked for.
    pub time_block: u32,
    /// The time blocks, none, or why there are none of the steps asked for.
    pub plan: std::result::Result<Option<TimeBlocks>, String>,
    /// Remaps per time block (1 without).
    pub remaps: u32,
    /// The fused engine reads the neighbours' cells directly ([`direct_reads`]).
    pub direct: bool,
    /// Width in PEs of the link bands that the dispatch table's rectangles cut.
    pub band: u32,
    /// Where the blocked region starts along x and y, in points.
    pub region_start: u32,
    /// The kernel's stages are Rows3 stages.
    pub rows3: bool,
    /// The owned points live in one dense grid per wafer, not in Table 3's blocks.
    pub dense: bool,
    /// Heat's direct reads load vec4s of the dense grid.
    pub vec4: bool,
}

impl Shape {
    /// The engine of `problem` with `tuning`: fused or explicit, in time blocks of
    /// `time_block` steps where that is more than one.
    pub fn new(tuning: &Tuning, problem: &Problem, fused: bool, time_block: u32) -> Self {
        let (spec, g) = (problem.spec(), &problem.cluster.wafer);
        let cap = tile_cap(tuning.tile_bytes);
        let plan = match (time_block > 1, fused) {
            (false, _) => Ok(None),
            (true, false) => Err("it needs the fused engine".to_string()),
            (true, true) => TimeBlocks::plan(tuning, problem, time_block).map(Some),
        };
        let blocked = plan.clone().ok().flatten();
        let direct = fused && direct_reads(tuning, spec, g);
        let band = match blocked {
            Some(b) => b.band(),
            None if direct => direct_band(tuning, spec, g),
            None => 0,
        };
        let rows3 = spec.stages[0].driver == Driver::Rows3;
        // Direct reads without Table 3's link bands read no comm layer: they keep the owned
        // points as one dense grid (heat's unless the tuning says otherwise), and load vec4s
        // where the wafer's width allows and they go by blocks of 8 columns (runs of points
        // for Point stages); time blocks in registers too.
        let dense = direct
            && match blocked {
                Some(TimeBlocks::Rows(_) | TimeBlocks::Points(_)) => true,
                Some(TimeBlocks::Tiles(_)) => false,
                None => band == 0 && (tuning.direct_grid == DirectGrid::Dense || !rows3),
            };
        Self {
            fused,
            block: fused
                .then(|| fused_block(g, spec.fields.len(), cap))
                .flatten(),
            cap,
            time_block,
            remaps: blocked.map_or(1, |b| blocking::remaps(spec, b.steps())),
            direct,
            band,
            region_start: blocked.map_or(0, |b| b.region_start(g)),
            rows3,
            dense,
            vec4: dense && (g.pes_x * g.n).is_multiple_of(4) && tuning.direct_cols == BLOCK_COLS,
            plan,
        }
    }

    /// The time blocks, if there are any.
    pub fn blocked(&self) -> Option<TimeBlocks> {
        self.plan.as_ref().ok().copied().flatten()
    }

    /// Whether the time blocks are tiles in workgroup memory.
    pub fn tiled(&self) -> bool {
        matches!(self.blocked(), Some(TimeBlocks::Tiles(_)))
    }

    /// Whether Table 3's `sendrecv` and `compute` run the link bands of the direct reads.
    pub fn explicit_bands(&self) -> bool {
        self.band > 0 && !self.dense
    }

    /// How the SRAM holds each PE's points on wafer `g`.
    pub fn layout(&self, g: &WaferGeometry) -> SramLayout {
        match self.dense {
            true => SramLayout::dense(g),
            false => SramLayout::table3(g),
        }
    }

    /// The engine on wafers of `n` points per PE side, in words.
    pub fn words(&self, n: u32) -> String {
        self.stage_words(n) + &self.block_words()
    }

    fn stage_words(&self, n: u32) -> String {
        let (band, blocked) = (self.band, self.blocked());
        match (self.block, self.fused) {
            _ if self.dense => format!(
                "fused, reading the neighbours' cells and the links directly, by {} of the owned points' dense grid",
                if self.vec4 { "vec4s" } else { "values" }
            ),
            _ if self.direct && blocked.is_none() && band == 0 => {
                "fused, reading the neighbours' cells and the links directly".into()
            }
            _ if self.direct && blocked.is_none() => format!(
                "fused, reading the neighbours' cells directly beyond the {band}-PE link bands, which run the explicit sendrecv and compute"
            ),
            (Some(b), _) if self.direct => format!(
                "fused, blocks of {}x{} PEs on the {band}-PE link bands, reading the neighbours' cells directly beyond",
                b.x, b.y
            ),
            (Some(b), _) => format!("fused, blocks of {}x{} PEs", b.x, b.y),
            (None, true) => format!(
                "explicit sendrecv and compute (fused asked, but one PE of n = {n} with its halo does not fit a workgroup's {} values)",
                self.cap
            ),
            (None, _) => "explicit sendrecv and compute".into(),
        }
    }

    fn block_words(&self) -> String {
        match &self.plan {
            Ok(Some(TimeBlocks::Tiles(b))) => format!(
                "; time blocks of {} steps beyond {}-PE link bands, spans of {}x{} points",
                b.steps, b.band, b.span.x, b.span.y
            ),
            Ok(Some(TimeBlocks::Rows(b))) => format!(
                "; time blocks of {} steps beyond {}-point link bands, carried in registers{}",
                b.steps,
                b.band,
                b.lanes
                    .map(|l| format!(" across subgroups of {l} lanes"))
                    .unwrap_or_default()
            ),
            Ok(Some(TimeBlocks::Points(b))) => format!(
                "; time blocks of {} steps beyond {}-point link bands, carried in registers",
                b.steps, b.band
            ),
            Ok(None) => String::new(),
            Err(why) => format!("; no time blocks of {} steps: {why}", self.time_block),
        }
    }
}
