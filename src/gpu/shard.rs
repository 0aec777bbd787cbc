//! The wafers of a cluster that one device holds: their SRAM (Table 3's `x` and `y` for every
//! wafer, wafer-major), the link ring buffers, and the dispatches of the schedule's phases.

use std::sync::Arc;

use super::constants;
use super::context::{GpuContext, Pipeline};
use super::layout::SramLayout;
use super::point_blocks::PointBlock;
use super::row_blocks::RowBlock;
use super::shaders;
use super::tuning::{DirectGrid, Tuning};
use super::uniforms::{ClusterUniform, DispatchUniform, WaferUniform, BLOCK_COLS};
use crate::blocking;
use crate::cluster::{ClusterGeometry, Direction, LinkId};
use crate::field::GlobalField;
use crate::kernels::{Driver, KernelSpec, Stage};
use crate::model::Problem;
use crate::wafer::{StageSlots, WaferGeometry};
use crate::Result;

/// Spare cells after the last SRAM block of each field: a compute invocation reads whole
/// windows of `BLOCK_COLS + 2` values, which for the last PE's last rows can reach past its
/// block; whole vec4s, so that every plane starts on one.
const SRAM_TAIL: u32 = (BLOCK_COLS + 2).next_multiple_of(4);

/// Which PEs of each wafer a compute dispatch covers. Packages are packed from the edge
/// (the top and right bands of PEs, `ceil(w/n)` wide), so a device that sends packages to
/// another can compute the edge, send, and compute the interior while the packages travel.
/// With time blocks, a block's first step computes the blocked region for the whole block
/// and the link bands for one step (`BlockStart`); its other steps only the link bands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    All,
    Edge,
    Interior,
    BlockStart,
    LinkBands,
}

/// The PE rectangles `[x0, y0, x1, y1]` of a dispatch table: all, top band, right band,
/// interior; then for time blocks or direct reads beyond link bands `band` PEs wide, the left
/// band, the low band right of it, and the region beyond them.
fn rectangles(g: &WaferGeometry, band: u32) -> [[u32; 4]; 7] {
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

/// Cells per field and wafer of the halo that a Point stage's `compute_edges` keeps at a
/// step's first stage (`shaders/wafer_point_edges.wgsl`): w rows below the wafer, from w
/// columns left of it, and w columns left of it.
fn halo_cells(g: &WaferGeometry) -> usize {
    let size = g.global_size();
    (g.w() * (size.x + size.y + g.w())) as usize
}

/// Invocations of `sendrecv_cells` per PE: one per `cells` cells of each comm line (the w
/// rows of the lower strip, the w columns of the left one) of each field.
fn comm_line_threads(g: &WaferGeometry, fields: usize, cells: u32) -> u64 {
    let lines = 2 * g.w() as u64;
    fields as u64 * lines * g.stride().div_ceil(cells) as u64
}

/// Cells of a comm line per sendrecv invocation: the tuning's, or twice as many as often as
/// a dispatch over `wafers` wafers would outrun the shaders' 32-bit invocation ids.
fn sendrecv_cells(tuning: u32, g: &WaferGeometry, fields: usize, wafers: usize) -> u32 {
    let mut cells = tuning.max(1);
    while cells < g.stride()
        && comm_line_threads(g, fields, cells) * (g.pe_count() * wafers) as u64 > u32::MAX as u64
    {
        cells *= 2;
    }
    cells
}

/// How many invocations a kernel runs per wafer of a dispatch.
#[derive(Clone, Copy, Debug)]
enum Spread {
    /// This many, whatever the rectangle.
    Wafer(u64),
    /// This many per PE of the rectangle.
    Pe(u64),
    /// A workgroup per block of this many PEs (the fused engine's tiles).
    PeBlocks(glam::UVec2),
    /// One per block of this many points of the rectangle's owned points (direct reads).
    Points(glam::UVec2),
}

/// One pipeline, how many invocations it runs, and for each bank its bind groups by remap (modulo
/// `2 * stages`, where the SRAM slots repeat) and its dispatch table's group.
struct Kernel {
    pipeline: Pipeline,
    /// Per bank: `None` for the remaps this pipeline never runs (another stage's).
    groups: Vec<Vec<Option<wgpu::BindGroup>>>,
    dispatch_groups: Vec<wgpu::BindGroup>,
    spread: Spread,
}

/// What runs a remap: Table 3's `sendrecv` and one `compute` per stage; or the fused engine's
/// clock tick in place of `sendrecv` and its tiled stages, which receive as they compute; or,
/// with direct reads, the tick and each stage's direct kernel beyond the link bands, and on
/// the bands ([`direct_band`], or those of time blocks) Table 3's `sendrecv` and `compute` or
/// the tiled stages, or where there are none the points by the wafer's low edges (which
/// tick for Rows3 stages; Point stages, which read the clock, keep the tick before them).
struct Remap {
    /// `sendrecv` or the tick; none where the edges tick.
    receive: Option<Kernel>,
    /// Each stage's kernel on every PE, or with direct reads on the link bands (none without
    /// bands).
    stages: Vec<Kernel>,
    /// With direct reads, each stage's kernel beyond the link bands; empty otherwise.
    direct: Vec<Kernel>,
    /// With direct reads and no bands, each stage's kernel of the points within reach of the
    /// wafer's low edges (Rows3 `compute_edges`); empty otherwise.
    edges: Vec<Kernel>,
    /// With direct reads on explicit bands, their `sendrecv` (without the clock, which the
    /// tick keeps).
    band_receive: Option<Kernel>,
}

impl Remap {
    /// Whether this is the fused engine (tiles or direct reads).
    fn fused(&self) -> bool {
        !self.direct.is_empty()
            || self
                .stages
                .iter()
                .any(|k| matches!(k.spread, Spread::PeBlocks(_)))
    }
}

/// A run of the device's wafers whose SRAM slots share one buffer each: as many as one
/// storage binding holds. Links are shared by all banks.
struct Bank {
    /// Local index of the bank's first wafer; `count` wafers.
    first: usize,
    count: usize,
    /// Cells of one field's plane in each of the bank's SRAM slots.
    plane: u64,
    /// The SRAM slots ([`StageSlots`]), each with `fields` planes.
    sram: Vec<wgpu::Buffer>,
    ranges: Ranges,
}

/// The PE rectangles of the dispatch table, by index (see [`rectangles`]).
const ALL_PES: usize = 0;
const TOP_BAND: usize = 1;
const RIGHT_BAND: usize = 2;
const INTERIOR: usize = 3;
const LEFT_LINK_BAND: usize = 4;
const LOW_LINK_BAND: usize = 5;
const BEYOND_BANDS: usize = 6;
const RECTS: u64 = 7;

/// The time blocking in use: remaps per block, the dispatch of a block's blocked region, and
/// the packing of its inner states.
struct Blocking {
    remaps: u64,
    /// The region's kernels: one of tiles; in registers, heat's blocks within, at the top and
    /// at the right, or shallow water's one.
    region: Vec<Kernel>,
    /// In registers, each stage's direct reads of the link bands (tiles step the bands with
    /// the stages).
    bands: Vec<Kernel>,
    pack_up: Kernel,
    pack_right: Kernel,
}

pub struct Shard {
    pub ctx: Arc<GpuContext>,
    cluster: ClusterGeometry,
    /// Cluster index of each wafer this device holds, in SRAM order.
    pub wafers: Vec<usize>,
    /// Slots per link ring buffer.
    ring: u32,
    /// Stages per step.
    stages: usize,
    /// State fields: planes of every SRAM slot and package.
    fields: usize,
    /// The wafers' SRAM, split into banks that each fit one storage binding.
    banks: Vec<Bank>,
    /// How the banks lay out each PE's block.
    layout: SramLayout,
    /// Ring buffers of every link of the cluster, by direction, then sending wafer.
    links: [wgpu::Buffer; 2],
    pack_up: Kernel,
    pack_right: Kernel,
    /// What runs a remap.
    remap: Remap,
    /// Which engine that is, in words.
    engine: String,
    /// Dispatch entries: `(range, rectangle, state mod period)`, `dispatch_stride` bytes
    /// apart; the period is a multiple of `2 ring` and of the remaps of a time block.
    dispatch_stride: u64,
    period: u64,
    rects: [[u32; 4]; 7],
    blocking: Option<Blocking>,
}

/// The buffers the kernels bind for one bank, by the names the shaders give them.
struct Resources<'a> {
    named: Vec<(&'static str, wgpu::Buffer)>,
    dispatches: wgpu::Buffer,
    sram: &'a [wgpu::Buffer],
    links: &'a [wgpu::Buffer; 2],
}

/// Wafers per bank: as many as one storage binding of `max_bytes` on `adapter` holds, each
/// wafer's `fields` planes of `sram_cells` plus the spare tail; an error when not even one
/// does.
fn wafers_per_bank(
    (what, adapter): (&str, &str),
    sram_cells: u64,
    fields: usize,
    max_bytes: u64,
) -> Result<usize> {
    let cells = max_bytes / 4 / fields as u64;
    let most = cells.saturating_sub(SRAM_TAIL as u64) / sram_cells;
    if most == 0 {
        return Err(crate::Error::TooLarge(format!(
            "{what} needs {} MiB per field, but {adapter} allows {} MiB per storage binding: use fewer PEs or a smaller n",
            ((sram_cells + SRAM_TAIL as u64) * fields as u64 * 4).div_ceil(1 << 20),
            max_bytes >> 20
        )));
    }
    Ok(most.min(usize::MAX as u64) as usize)
}

impl Resources<'_> {
    /// The named buffers plus the SRAM slots of `remap` and the links.
    fn for_remap(&self, stages: usize, remap: u64) -> Vec<(&str, &wgpu::Buffer)> {
        let slots = StageSlots::of(stages, remap);
        let [right, up] = self.links;
        let mut all: Vec<(&str, &wgpu::Buffer)> = self.named.iter().map(|(n, b)| (*n, b)).collect();
        all.extend([
            ("field", &self.sram[slots.cur]),
            ("x", &self.sram[slots.cur]),
            ("x4", &self.sram[slots.cur]),
            ("y4", &self.sram[slots.out]),
            ("x0", &self.sram[slots.base]),
            ("x0_4", &self.sram[slots.base]),
            ("y", &self.sram[slots.out]),
            ("next", &self.sram[1 - slots.base]),
            ("up_links", up),
            ("right_links", right),
        ]);
        all
    }
}

impl Blocking {
    fn pack(&self, dir: Direction) -> &Kernel {
        if dir == Direction::Up {
            &self.pack_up
        } else {
            &self.pack_right
        }
    }
}

impl Shard {
    /// Uploads the initial state of the wafers `wafers` (cluster indices) to `ctx`, with link
    /// rings of `ring` slots.
    pub fn new(
        ctx: Arc<GpuContext>,
        problem: &Problem,
        wafers: Vec<usize>,
        ring: u32,
        (max_binding, fused, time_block): (u64, bool, u32),
    ) -> Result<Self> {
        let (c, spec) = (problem.cluster, problem.spec());
        let g = c.wafer;
        let (fields, stages) = (spec.fields.len(), spec.stages.len());
        let what = format!(
            "a wafer of {}x{} PEs with n = {} and {fields} field(s)",
            g.pes_x, g.pes_y, g.n
        );
        let cap = tile_cap(ctx.tuning.tile_bytes);
        let block = fused.then(|| fused_block(&g, fields, cap)).flatten();
        let plan = match (time_block > 1, fused) {
            (false, _) => Ok(None),
            (true, false) => Err("it needs the fused engine".to_string()),
            (true, true) => TimeBlocks::plan(&ctx.tuning, problem, time_block).map(Some),
        };
        let blocked = plan.clone().ok().flatten();
        let remaps = blocked.map_or(1, |b| blocking::remaps(spec, b.steps()));
        let direct = fused && direct_reads(&ctx.tuning, spec, &g);
        let direct_band = if direct {
            direct_band(&ctx.tuning, spec, &g)
        } else {
            0
        };
        let band = blocked.map_or(direct_band, |b| b.band());
        let region_start = blocked.map_or(0, |b| b.region_start(&g));
        let tiled = matches!(blocked, Some(TimeBlocks::Tiles(_)));
        let rows3 = spec.stages[0].driver == Driver::Rows3;
        // Direct reads without Table 3's link bands read no comm layer: they keep the owned
        // points as one dense grid (heat's unless the tuning says otherwise), and load vec4s
        // where the wafer's width allows and they go by blocks of 8 columns (runs of points
        // for Point stages); time blocks in registers too.
        let dense = direct
            && match blocked {
                Some(TimeBlocks::Rows(_) | TimeBlocks::Points(_)) => true,
                Some(TimeBlocks::Tiles(_)) => false,
                None => band == 0 && (ctx.tuning.direct_grid == DirectGrid::Dense || !rows3),
            };
        let vec4 =
            dense && (g.pes_x * g.n).is_multiple_of(4) && ctx.tuning.direct_cols == BLOCK_COLS;
        let layout = match dense {
            true => SramLayout::dense(&g),
            false => SramLayout::table3(&g),
        };
        let adapter = &ctx.adapter.info.name;
        let per_bank =
            wafers_per_bank((&what, adapter), layout.wafer_cells(), fields, max_binding)?;
        let state = problem.initial_state();
        let banks = (0..wafers.len())
            .step_by(per_bank)
            .map(|first| {
                let mine = &wafers[first..(first + per_bank).min(wafers.len())];
                let mut initial = vec![];
                let plane = layout.wafer_cells() * mine.len() as u64 + SRAM_TAIL as u64;
                for field in &state {
                    initial.extend(layout.lay_out(&c.scatter(field, mine)?));
                    initial.resize(initial.len() + SRAM_TAIL as usize, 0.0);
                }
                let sram = (0..StageSlots::count(stages))
                    .map(|slot| ctx.storage_buffer(&format!("sram slot {slot}"), &initial))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Bank {
                    first,
                    count: mine.len(),
                    plane,
                    sram,
                    ranges: Ranges::new(mine.len()),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        drop(state);
        let link_buffer = |dir: Direction| {
            let cells = c.count() * ring as usize * c.package_cells(dir) * fields;
            let what = format!("the {} links of {} wafers", dir.name(), c.count());
            ctx.check_binding(&what, cells as u64 * 4)?;
            ctx.storage_buffer(&format!("{} links", dir.name()), &vec![0.0; cells])
        };
        let links = [link_buffer(Direction::Right)?, link_buffer(Direction::Up)?];
        let dispatch_stride = (std::mem::size_of::<DispatchUniform>() as u64)
            .next_multiple_of(ctx.adapter.limits.min_uniform_buffer_offset_alignment as u64);
        let rects = rectangles(&g, band);
        let period = blocking::lcm(2 * ring as u64, remaps as u64);
        let (pages, consts) = constants::upload(&ctx, problem.kernel.constants(), max_binding)?;
        let rows = ctx.tuning.wafer_rows;
        let resources = banks
            .iter()
            .map(|bank| {
                let ids: Vec<u32> = wafers[bank.first..bank.first + bank.count]
                    .iter()
                    .map(|&k| k as u32)
                    .collect();
                let mut named = vec![
                    (
                        "wafer",
                        ctx.uniform_buffer(
                            "wafer",
                            &WaferUniform::new(problem, bank.plane, (rows, region_start), &layout),
                        ),
                    ),
                    (
                        "cluster",
                        ctx.uniform_buffer(
                            "cluster",
                            &ClusterUniform::new(&c, ring, fields, &layout),
                        ),
                    ),
                    (
                        "wafer_ids",
                        ctx.storage_buffer("wafer ids", bytemuck::cast_slice(&ids))?,
                    ),
                    (
                        "params",
                        ctx.uniform_bytes("params", &problem.kernel.params()),
                    ),
                    (
                        "clock",
                        ctx.storage_buffer("clock", &vec![0.0; 4 * bank.count])?,
                    ),
                ];
                let strips = blocking::strip_cells(c.wafer_points(), g.w());
                // And a spare last cell, where register blocks store what they keep nowhere.
                let history = bank.count * fields * remaps as usize * strips + 1;
                ctx.check_binding("the time blocks' strip history", history as u64 * 4)?;
                named.push((
                    "history",
                    ctx.storage_buffer("history", &vec![0.0; history])?,
                ));
                // Point stages' `compute_edges` (with no link bands: the dense grid).
                if dense && !rows3 {
                    let halo = bank.count * fields * halo_cells(&g);
                    ctx.check_binding("the halo of the step's start", halo as u64 * 4)?;
                    named.push(("halo", ctx.storage_buffer("halo", &vec![0.0; halo])?));
                }
                named.extend(consts.iter().cloned());
                Ok(Resources {
                    named,
                    dispatches: ctx.uniform_bytes(
                        "dispatches",
                        &dispatch_table(&bank.ranges, period, &rects, dispatch_stride),
                    ),
                    sram: &bank.sram,
                    links: &links,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let build =
            |label: &str, source: &str, entry: &str, spread: Spread, stage: Option<usize>| {
                kernel(
                    &ctx,
                    &resources,
                    stages,
                    (label, source, entry),
                    spread,
                    stage,
                )
            };
        let n = g.n as u64;
        // Invocations per PE of a Rows3 compute: blocks of `cols` columns by `rows` rows.
        let rows3_threads = |n: u64, cols: u32| n.div_ceil(cols as u64) * n.div_ceil(rows as u64);
        let (entry, cells, sendrecv_per_pe) = match ctx.tuning.sendrecv_cells {
            None => ("sendrecv", 1, fields as u64),
            Some(cells) => {
                let cells = sendrecv_cells(cells, &g, fields, wafers.len());
                (
                    "sendrecv_cells",
                    cells,
                    comm_line_threads(&g, fields, cells),
                )
            }
        };
        let sendrecv = |keeps_clock| {
            let source = shaders::cluster_sendrecv(cells, keeps_clock);
            build(
                "sendrecv",
                &source,
                entry,
                Spread::Pe(sendrecv_per_pe),
                None,
            )
        };
        let explicit_stages = || {
            let cols = ctx.tuning.wafer_cols;
            let stage_kernel = |(k, stage): (usize, &Stage)| {
                let (entry, threads) = match stage.driver {
                    Driver::Rows3 if cols == 1 => ("compute_columns", rows3_threads(n, 1)),
                    Driver::Rows3 => ("compute", rows3_threads(n, cols)),
                    Driver::Point => ("compute", n * n),
                };
                let source = shaders::wafer_stage(spec, stage, pages);
                build(stage.name, &source, entry, Spread::Pe(threads), Some(k))
            };
            spec.stages.iter().enumerate().map(stage_kernel).collect()
        };
        // Each stage's direct reads, a Rows3 invocation walking `rows` rows, a Point one
        // taking its tuning's block of points.
        let direct_stages = |rows: u32| {
            let direct_kernel = |(k, stage): (usize, &Stage)| {
                let (entry, size) = match (stage.driver, ctx.tuning.direct_cols) {
                    (Driver::Rows3, _) if vec4 => {
                        ("compute_direct_vec4", glam::UVec2::new(BLOCK_COLS, rows))
                    }
                    (Driver::Rows3, 1) => ("compute_direct_columns", glam::UVec2::new(1, rows)),
                    (Driver::Rows3, _) => ("compute_direct", glam::UVec2::new(BLOCK_COLS, rows)),
                    (Driver::Point, _) => ("compute_direct", ctx.tuning.point_block()),
                };
                let source = shaders::wafer_direct(spec, k, pages, size, vec4);
                let label = format!("{} direct", stage.name);
                build(&label, &source, entry, Spread::Points(size), Some(k))
            };
            spec.stages.iter().enumerate().map(direct_kernel).collect()
        };
        // The points within reach of the wafer's low edges, of each stage: for Rows3 within 2
        // (less the first two rows, which vec4 reads take), and the tick; for Point within w,
        // and at a step's first stage of several the halo cells it keeps.
        let edge_stages = || {
            let size = g.global_size().as_u64vec2();
            let w = g.w() as u64;
            let edge_kernel = |(k, stage): (usize, &Stage)| {
                let points = match stage.driver {
                    Driver::Rows3 => {
                        let rows = if vec4 { 0 } else { 2 };
                        rows * size.x + 2 * (size.y - rows) + 1
                    }
                    Driver::Point => {
                        let kept = (k == 0 && stages > 1) as u64 * halo_cells(&g) as u64;
                        w * (size.x + size.y - w) + kept
                    }
                };
                let source = shaders::wafer_edges(spec, k, pages, vec4);
                let label = format!("{} edges", stage.name);
                build(
                    &label,
                    &source,
                    "compute_edges",
                    Spread::Wafer(points),
                    Some(k),
                )
            };
            spec.stages.iter().enumerate().map(edge_kernel).collect()
        };
        let tick = || {
            let source = shaders::cluster_sendrecv(cells, true);
            build("tick", &source, "tick", Spread::Wafer(1), None)
        };
        let tiled_stages = |block| {
            let tiled_kernel = |(k, stage): (usize, &Stage)| {
                let entry = match (stage.driver, ctx.tuning.fused_cols) {
                    (Driver::Rows3, 1) => "compute_columns",
                    _ => "compute",
                };
                let source = shaders::wafer_fused(spec, k, (block, cap), pages, &ctx.tuning);
                build(stage.name, &source, entry, Spread::PeBlocks(block), Some(k))
            };
            spec.stages.iter().enumerate().map(tiled_kernel).collect()
        };
        let explicit_bands = band > 0 && !dense;
        let remap = match (block, tiled || !direct) {
            (Some(block), true) => Remap {
                receive: Some(tick()),
                stages: tiled_stages(block),
                direct: if direct {
                    direct_stages(ctx.tuning.direct_rows)
                } else {
                    vec![]
                },
                edges: vec![],
                band_receive: None,
            },
            (_, false) => Remap {
                // Rows3 edges tick; Point stages read the clock, ticked before them.
                receive: (explicit_bands || !rows3).then(tick),
                stages: if explicit_bands {
                    explicit_stages()
                } else {
                    vec![]
                },
                direct: direct_stages(ctx.tuning.direct_rows),
                edges: if explicit_bands {
                    vec![]
                } else {
                    edge_stages()
                },
                band_receive: explicit_bands.then(|| sendrecv(false)),
            },
            (None, true) => Remap {
                receive: Some(sendrecv(true)),
                stages: explicit_stages(),
                direct: vec![],
                edges: vec![],
                band_receive: None,
            },
        };
        let mut engine = match (block, fused) {
            _ if dense => format!(
                "fused, reading the neighbours' cells and the links directly, by {} of the owned points' dense grid",
                if vec4 { "vec4s" } else { "values" }
            ),
            _ if direct && blocked.is_none() && band == 0 => {
                "fused, reading the neighbours' cells and the links directly".into()
            }
            _ if direct && blocked.is_none() => format!(
                "fused, reading the neighbours' cells directly beyond the {band}-PE link bands, which run the explicit sendrecv and compute"
            ),
            (Some(b), _) if direct => format!(
                "fused, blocks of {}x{} PEs on the {band}-PE link bands, reading the neighbours' cells directly beyond",
                b.x, b.y
            ),
            (Some(b), _) => format!("fused, blocks of {}x{} PEs", b.x, b.y),
            (None, true) => format!(
                "explicit sendrecv and compute (fused asked, but one PE of n = {} with its halo does not fit a workgroup's {cap} values)",
                g.n
            ),
            (None, false) => "explicit sendrecv and compute".into(),
        };
        engine += &match &plan {
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
            Err(why) => format!("; no time blocks of {time_block} steps: {why}"),
        };
        let package_threads = |dir| (c.package_cells(dir) * fields) as u64;
        let packs = |region: Option<u32>| {
            let pack = shaders::cluster_pack(remaps, region);
            (
                build(
                    "pack up",
                    &pack,
                    "pack_up",
                    Spread::Wafer(package_threads(Direction::Up)),
                    None,
                ),
                build(
                    "pack right",
                    &pack,
                    "pack_right",
                    Spread::Wafer(package_threads(Direction::Right)),
                    None,
                ),
            )
        };
        let (pack_up, pack_right) = packs(None);
        let region = |plan| match plan {
            TimeBlocks::Tiles(plan) => {
                let spans = (glam::UVec2::new(g.pes_x, g.pes_y) - plan.band) * g.n;
                let spans =
                    spans.x.div_ceil(plan.span.x) as u64 * spans.y.div_ceil(plan.span.y) as u64;
                let source = shaders::wafer_blocked(spec, &plan, pages, &ctx.tuning);
                let spread = Spread::Wafer(spans * super::context::WORKGROUP as u64);
                (
                    vec![build("time block", &source, "compute", spread, Some(0))],
                    vec![],
                )
            }
            TimeBlocks::Rows(plan) => {
                let rows = ctx.tuning.direct_rows;
                let source = shaders::wafer_row_blocked(spec, &plan, rows);
                let (blocks, top, right, band_blocks) = plan.blocks(&g, rows);
                let entries = match plan.lanes {
                    Some(lanes) => vec![("time block", "compute_blocked", blocks * lanes as u64)],
                    None => vec![
                        ("time block", "compute_blocked", blocks),
                        ("time block top", "compute_blocked_top", top),
                        ("time block right", "compute_blocked_right", right),
                    ],
                };
                let block_kernel = |(label, entry, invocations)| {
                    build(label, &source, entry, Spread::Wafer(invocations), Some(0))
                };
                let band_rows = glam::UVec2::new(BLOCK_COLS, super::row_blocks::BAND_ROWS);
                let band_source = shaders::wafer_direct(spec, 0, pages, band_rows, true);
                let band_kernel = build(
                    "time block bands",
                    &band_source,
                    "compute_bands",
                    Spread::Wafer(band_blocks),
                    Some(0),
                );
                let region = entries.into_iter().map(block_kernel).collect();
                (region, vec![band_kernel])
            }
            TimeBlocks::Points(plan) => {
                let rows = ctx.tuning.direct_rows;
                let source = shaders::wafer_point_blocked(spec, &plan, pages, rows);
                let spread = Spread::Wafer(plan.blocks(&g, rows));
                let region = build("time block", &source, "compute_blocked", spread, Some(0));
                let run = ctx.tuning.point_block();
                let band_kernel = |(k, stage): (usize, &Stage)| {
                    let source = shaders::wafer_direct(spec, k, pages, run, vec4);
                    let label = format!("{} bands", stage.name);
                    let spread = Spread::Wafer(plan.band_blocks(&g, run));
                    build(&label, &source, "compute_bands", spread, Some(k))
                };
                let bands = spec.stages.iter().enumerate().map(band_kernel).collect();
                (vec![region], bands)
            }
        };
        let blocking = blocked.map(|plan| {
            let (pack_up, pack_right) = packs(Some(plan.region_start(&g)));
            let (region, bands) = region(plan);
            Blocking {
                remaps: remaps as u64,
                region,
                bands,
                pack_up,
                pack_right,
            }
        });
        drop(resources);
        Ok(Self {
            pack_up,
            pack_right,
            remap,
            engine,
            ctx,
            cluster: c,
            wafers,
            ring,
            stages,
            fields,
            banks,
            layout,
            links,
            dispatch_stride,
            period,
            rects,
            blocking,
        })
    }

    /// Remaps per time block (1 without time blocking).
    pub fn block_remaps(&self) -> u64 {
        self.blocking.as_ref().map_or(1, |b| b.remaps)
    }

    /// Steps per time block (1: none).
    pub fn time_block(&self) -> u32 {
        let stages = self.stages as u64;
        self.blocking
            .as_ref()
            .map_or(1, |b| (b.remaps / stages) as u32)
    }

    /// Packs the packages in direction `dir` (up or right) of `items`, `(local wafer, state)` pairs; of
    /// inner states of their time blocks when `inner`.
    pub fn pack(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        dir: Direction,
        items: &[(usize, u64)],
        inner: bool,
    ) {
        let (kernel, rect) = match (&self.blocking, inner) {
            (Some(b), true) => (b.pack(dir), BEYOND_BANDS),
            _ if dir == Direction::Up => (&self.pack_up, ALL_PES),
            _ => (&self.pack_right, ALL_PES),
        };
        self.dispatch(pass, kernel, items, rect);
    }

    /// Fills the comm layers of `items` (Table 3's `sendrecv`); the fused engine only
    /// advances their clocks (its tiled stages receive as they compute, its direct reads need
    /// no comm layers, and their explicit bands receive in `compute`), or with direct reads
    /// of a Rows3 stage does nothing (its edges tick).
    pub fn sendrecv(&self, pass: &mut wgpu::ComputePass<'_>, items: &[(usize, u64)]) {
        if let Some(receive) = &self.remap.receive {
            self.dispatch(pass, receive, items, ALL_PES);
        }
    }

    /// Which engine runs the stages, in words.
    pub fn engine(&self) -> &str {
        &self.engine
    }

    /// Computes `part` of the owned points of `items` (Table 3's `compute` of the stage each
    /// item's state is at).
    pub fn compute(&self, pass: &mut wgpu::ComputePass<'_>, items: &[(usize, u64)], part: Part) {
        let rects: &[usize] = match part {
            Part::All => &[ALL_PES],
            Part::Edge => &[TOP_BAND, RIGHT_BAND],
            Part::Interior => &[INTERIOR],
            Part::BlockStart | Part::LinkBands => &[LEFT_LINK_BAND, LOW_LINK_BAND],
        };
        if let Some(b) = &self.blocking {
            if part == Part::BlockStart {
                for region in &b.region {
                    self.dispatch(pass, region, items, BEYOND_BANDS);
                }
            }
            // Register blocks: each stage's bands, then its edges.
            if !b.bands.is_empty() && matches!(part, Part::BlockStart | Part::LinkBands) {
                for (k, bands) in b.bands.iter().enumerate() {
                    let mine = self.of_stage(items, k);
                    if !mine.is_empty() {
                        self.dispatch(pass, bands, &mine, ALL_PES);
                        self.edges(pass, k, &mine);
                    }
                }
                return;
            }
        }
        for k in 0..self.stages {
            let mine = self.of_stage(items, k);
            if mine.is_empty() {
                continue;
            }
            let kernel = self.remap.stages.get(k);
            match self.remap.direct.get(k) {
                Some(direct) if part == Part::All => {
                    let mut rest = ALL_PES;
                    if let Some(kernel) = kernel {
                        for band in [LEFT_LINK_BAND, LOW_LINK_BAND] {
                            if let Some(receive) = &self.remap.band_receive {
                                self.dispatch(pass, receive, &mine, band);
                            }
                            self.dispatch(pass, kernel, &mine, band);
                        }
                        rest = BEYOND_BANDS;
                    }
                    self.dispatch(pass, direct, &mine, rest);
                    self.edges(pass, k, &mine);
                }
                _ => {
                    let kernel = kernel.expect("direct reads run whole stages only (Part::All)");
                    for &rect in rects {
                        self.dispatch(pass, kernel, &mine, rect);
                    }
                }
            }
        }
    }

    /// The items whose state is at stage `k`.
    fn of_stage(&self, items: &[(usize, u64)], k: usize) -> Vec<(usize, u64)> {
        let stages = self.stages as u64;
        items
            .iter()
            .copied()
            .filter(|&(_, state)| state % stages == k as u64)
            .collect()
    }

    /// The points of stage `k` within reach of the wafer's low edges, where the direct reads
    /// have them, after the rest (whose vec4s also store the first columns).
    fn edges(&self, pass: &mut wgpu::ComputePass<'_>, k: usize, items: &[(usize, u64)]) {
        if let Some(edges) = self.remap.edges.get(k) {
            self.dispatch(pass, edges, items, ALL_PES);
        }
    }

    /// Whether the interior PEs, which no package reads, can be computed after the packages
    /// left: there are some, and `sendrecv` filled their comm layers already (not in the fused
    /// engine, whose link bands read the links in `compute`, while their slots are current).
    pub fn can_defer_interior(&self) -> bool {
        let [x0, y0, x1, y1] = self.rects[INTERIOR];
        x1 > x0 && y1 > y0 && !self.remap.fused()
    }

    /// Records `kernel` over rectangle `rect` for `items`: per bank, a few dispatches per
    /// run of consecutive wafers holding the same state, one when every wafer takes part.
    fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        kernel: &Kernel,
        items: &[(usize, u64)],
        rect: usize,
    ) {
        let [x0, y0, x1, y1] = self.rects[rect];
        let pes = (x1 - x0) as u64 * (y1 - y0) as u64;
        if items.is_empty() || pes == 0 {
            return;
        }
        let blocks = |b: glam::UVec2, points_per_pe: u32| {
            let size = glam::UVec2::new(x1 - x0, y1 - y0) * points_per_pe;
            size.x.div_ceil(b.x) as u64 * size.y.div_ceil(b.y) as u64
        };
        let per_wafer = match kernel.spread {
            Spread::Wafer(threads) => threads,
            Spread::Pe(threads) => threads * pes,
            Spread::PeBlocks(b) => blocks(b, 1) * super::context::WORKGROUP as u64,
            Spread::Points(b) => blocks(b, self.cluster.wafer.n),
        };
        let period = self.period;
        pass.set_pipeline(&kernel.pipeline.raw);
        for (b, bank) in self.banks.iter().enumerate() {
            let mine: Vec<(usize, u64)> = items
                .iter()
                .filter(|(local, _)| (bank.first..bank.first + bank.count).contains(local))
                .map(|&(local, state)| (local - bank.first, state))
                .collect();
            let groups = &kernel.groups[b];
            for (first, count, state) in bank.ranges.cover(&mine) {
                let range = bank.ranges.index(first, count) as u64;
                let entry = (range * RECTS + rect as u64) * period + state % period;
                let group = groups[(state % groups.len() as u64) as usize]
                    .as_ref()
                    .expect("a stage runs only at its own remaps");
                pass.set_bind_group(0, group, &[]);
                pass.set_bind_group(
                    shaders::DISPATCH_GROUP,
                    &kernel.dispatch_groups[b],
                    &[(entry * self.dispatch_stride) as u32],
                );
                let size = self.ctx.dispatch_size(per_wafer * count as u64);
                self.ctx.dispatch(pass, &kernel.pipeline, size);
            }
        }
    }

    /// The ring buffer of links in direction `dir` and the byte range of package `state`'s
    /// slot on `link` (every field's plane).
    pub fn slot(&self, link: LinkId, state: u64) -> (&wgpu::Buffer, u64, u64) {
        let cells = (self.cluster.package_cells(link.dir) * self.fields) as u64;
        let slot = link.from as u64 * self.ring as u64 + state % self.ring as u64;
        (self.link_buffer(link.dir), slot * cells * 4, cells * 4)
    }

    /// The SRAM of this device's wafers after `steps` whole steps in Table 3's layout, one
    /// vector per field.
    pub fn sram(&self, steps: u64) -> Result<Vec<Vec<f32>>> {
        let mut out = vec![vec![]; self.fields];
        for bank in &self.banks {
            let all: Vec<f32> = self.ctx.read_buffer(&bank.sram[StageSlots::state(steps)])?;
            let cells = (self.layout.wafer_cells() * bank.count as u64) as usize;
            for (field, plane) in out.iter_mut().zip(all.chunks(bank.plane as usize)) {
                field.extend(self.layout.read_table3(&plane[..cells]));
            }
        }
        Ok(out)
    }

    /// SRAM buffers per slot: one per bank.
    pub fn banks(&self) -> usize {
        self.banks.len()
    }

    /// Cells of one field of one wafer in this device's SRAM layout.
    pub fn wafer_cells(&self) -> u64 {
        self.layout.wafer_cells()
    }

    /// Writes this device's wafers' owned cells after `steps` whole steps (the grid
    /// translated by `shift`) into the global fields.
    pub fn gather_into(&self, out: &mut [GlobalField], steps: u64, shift: u64) -> Result<()> {
        for (field, sram) in out.iter_mut().zip(self.sram(steps)?) {
            self.cluster.gather_into(field, &sram, &self.wafers, shift);
        }
        Ok(())
    }

    fn link_buffer(&self, dir: Direction) -> &wgpu::Buffer {
        &self.links[dir as usize]
    }

    /// The ring buffers of the links in direction `dir`, raw (for tests of the packages).
    pub fn link_ring(&self, dir: Direction) -> Result<Vec<f32>> {
        self.ctx.read_buffer(self.link_buffer(dir))
    }
}

/// One kernel with its bind groups for every bank, running `spread` invocations; a compute
/// `stage` binds only at that stage's remaps.
fn kernel(
    ctx: &GpuContext,
    banks: &[Resources],
    stages: usize,
    (label, source, entry): (&str, &str, &str),
    spread: Spread,
    stage: Option<usize>,
) -> Kernel {
    let pipeline = ctx.pipeline(label, source, entry);
    let declared = super::shaders::reflect(source);
    let groups = banks
        .iter()
        .map(|r| {
            (0..2 * stages as u64)
                .map(|remap| {
                    if stage.is_some_and(|k| remap % stages as u64 != k as u64) {
                        return None;
                    }
                    let buffers: Vec<(&str, &wgpu::Buffer)> = r
                        .for_remap(stages, remap)
                        .into_iter()
                        .filter(|(name, _)| {
                            declared.iter().any(|b| b.group == 0 && b.name == *name)
                        })
                        .collect();
                    Some(ctx.bind_group(&pipeline, &buffers))
                })
                .collect()
        })
        .collect();
    let dispatch_groups = banks
        .iter()
        .map(|r| {
            ctx.dispatch_group(
                &pipeline,
                &r.dispatches,
                std::mem::size_of::<DispatchUniform>() as u64,
            )
        })
        .collect();
    Kernel {
        pipeline,
        groups,
        dispatch_groups,
        spread,
    }
}

/// The wafer ranges of the dispatch table: all the device's wafers, then the aligned blocks of
/// every power-of-two size (`count = 2^l` wafers from a multiple of `count`), so that any run
/// of consecutive wafers takes a few dispatches.
struct Ranges {
    wafers: usize,
    /// Index of the first block of each size `2^l`.
    level_start: Vec<usize>,
    len: usize,
}

impl Ranges {
    fn new(wafers: usize) -> Self {
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

    fn index(&self, first: usize, count: usize) -> usize {
        match (first, count) {
            (0, c) if c == self.wafers => 0,
            _ => self.level_start[count.trailing_zeros() as usize] + first / count,
        }
    }

    /// `(first, count, state)` dispatches covering `items` (`(local wafer, state)` pairs in
    /// increasing wafer order): runs of consecutive wafers with one state, each the whole
    /// device or split into aligned blocks.
    fn cover(&self, items: &[(usize, u64)]) -> Vec<(usize, usize, u64)> {
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
fn dispatch_table(ranges: &Ranges, period: u64, rects: &[[u32; 4]; 7], stride: u64) -> Vec<u8> {
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
