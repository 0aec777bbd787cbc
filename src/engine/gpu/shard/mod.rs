//! The wafers of a cluster that one device holds: their SRAM (Table 3's `x` and `y` for every
//! wafer, wafer-major), the link ring buffers, and the dispatches of the schedule's phases.

mod dispatch;
mod kernels;
mod plan;

use std::sync::Arc;

use super::constants;
use super::context::GpuContext;
use super::layout::SramLayout;
use super::shaders;
use super::tuning::Tuning;
use super::uniforms::{ClusterUniform, DispatchUniform, WaferUniform, BLOCK_COLS};
use crate::blocking;
use crate::cluster::{ClusterGeometry, Direction, LinkId};
use crate::field::GlobalField;
use crate::model::Problem;
use crate::wafer::StageSlots;
use crate::Result;
use dispatch::{
    dispatch_table, rectangles, Ranges, ALL_PES, BEYOND_BANDS, INTERIOR, LEFT_LINK_BAND,
    LOW_LINK_BAND, RECTS, RIGHT_BAND, TOP_BAND,
};
use kernels::{halo_cells, Blocking, Builder, Kernel, Remap, Resources, Spread};
use plan::Shape;
#[cfg(test)]
pub(crate) use plan::TILE_SLACK;
pub use plan::{direct_reads, fused_block, tile_cap, TimeBlock, TimeBlocks};

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

/// Bytes of one wafer's SRAM slot in the layout the engine of `fused` and `time_block`
/// picks for `problem` under `tuning`: what one storage binding must hold.
pub(super) fn wafer_bytes(
    tuning: &Tuning,
    problem: &Problem,
    (fused, time_block): (bool, u32),
) -> u64 {
    let layout = Shape::new(tuning, problem, fused, time_block).layout(&problem.cluster.wafer);
    (layout.wafer_cells() + SRAM_TAIL as u64) * problem.spec().fields.len() as u64 * 4
}

/// The SRAM slots of the wafers `wafers` (cluster indices) in banks of `per_bank` wafers,
/// holding `problem`'s initial state in `layout`.
fn upload_banks(
    ctx: &GpuContext,
    problem: &Problem,
    wafers: &[usize],
    layout: &SramLayout,
    per_bank: usize,
) -> Result<Vec<Bank>> {
    let state = problem.initial_state();
    let slots = StageSlots::count(problem.spec().stages.len());
    let bank = |first: usize| {
        let mine = &wafers[first..(first + per_bank).min(wafers.len())];
        let mut initial = vec![];
        let plane = layout.wafer_cells() * mine.len() as u64 + SRAM_TAIL as u64;
        for field in &state {
            initial.extend(layout.lay_out(&problem.cluster.scatter(field, mine)?));
            initial.resize(initial.len() + SRAM_TAIL as usize, 0.0);
        }
        let sram = (0..slots)
            .map(|slot| ctx.storage_buffer(&format!("sram slot {slot}"), &initial))
            .collect::<Result<Vec<_>>>()?;
        Ok(Bank {
            first,
            count: mine.len(),
            plane,
            sram,
            ranges: Ranges::new(mine.len()),
        })
    };
    (0..wafers.len()).step_by(per_bank).map(bank).collect()
}

/// The ring buffers of every link of cluster `c`, right then up, `ring` slots of `fields`
/// planes each.
fn link_buffers(
    ctx: &GpuContext,
    c: &ClusterGeometry,
    ring: u32,
    fields: usize,
) -> Result<[wgpu::Buffer; 2]> {
    let buffer = |dir: Direction| {
        let cells = c.count() * ring as usize * c.package_cells(dir) * fields;
        let what = format!("the {} links of {} wafers", dir.name(), c.count());
        ctx.check_binding(&what, cells as u64 * 4)?;
        ctx.storage_buffer(&format!("{} links", dir.name()), &vec![0.0; cells])
    };
    Ok([buffer(Direction::Right)?, buffer(Direction::Up)?])
}

/// The buffers of `bank` (local wafers of `wafers`) that its kernels bind by name, beside the
/// SRAM, the links and the constants: uniforms, clocks, the time blocks' strip history and
/// Point stages' halo.
fn bank_buffers(
    ctx: &GpuContext,
    (problem, shape, layout): (&Problem, &Shape, &SramLayout),
    bank: &Bank,
    wafers: &[usize],
    ring: u32,
) -> Result<Vec<(&'static str, wgpu::Buffer)>> {
    let (c, fields) = (problem.cluster, problem.spec().fields.len());
    let ids: Vec<u32> = wafers[bank.first..bank.first + bank.count]
        .iter()
        .map(|&k| k as u32)
        .collect();
    let rows = (ctx.tuning.wafer_rows, shape.region_start);
    let wafer = WaferUniform::new(problem, bank.plane, rows, layout);
    let cluster = ClusterUniform::new(&c, ring, fields, layout);
    let strips = blocking::strip_cells(c.wafer_points(), c.wafer.w());
    // And a spare last cell, where register blocks store what they keep nowhere.
    let history = bank.count * fields * shape.remaps as usize * strips + 1;
    ctx.check_binding("the time blocks' strip history", history as u64 * 4)?;
    let mut named = vec![
        ("wafer", ctx.uniform_buffer("wafer", &wafer)),
        ("cluster", ctx.uniform_buffer("cluster", &cluster)),
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
        (
            "history",
            ctx.storage_buffer("history", &vec![0.0; history])?,
        ),
    ];
    // Point stages' `compute_edges` (with no link bands: the dense grid).
    if shape.dense && !shape.rows3 {
        let halo = bank.count * fields * halo_cells(&c.wafer);
        ctx.check_binding("the halo of the step's start", halo as u64 * 4)?;
        named.push(("halo", ctx.storage_buffer("halo", &vec![0.0; halo])?));
    }
    Ok(named)
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
        let shape = Shape::new(&ctx.tuning, problem, fused, time_block);
        let layout = shape.layout(&g);
        let what = format!(
            "a wafer of {}x{} PEs with n = {} and {fields} field(s)",
            g.pes_x, g.pes_y, g.n
        );
        let adapter = &ctx.adapter.info.name;
        let per_bank =
            wafers_per_bank((&what, adapter), layout.wafer_cells(), fields, max_binding)?;
        let banks = upload_banks(&ctx, problem, &wafers, &layout, per_bank)?;
        let links = link_buffers(&ctx, &c, ring, fields)?;
        let dispatch_stride = (std::mem::size_of::<DispatchUniform>() as u64)
            .next_multiple_of(ctx.adapter.limits.min_uniform_buffer_offset_alignment as u64);
        let rects = rectangles(&g, shape.band);
        let period = blocking::lcm(2 * ring as u64, shape.remaps as u64);
        let (pages, consts) = constants::upload(&ctx, problem.kernel.constants(), max_binding)?;
        let resources = banks
            .iter()
            .map(|bank| {
                let mut named =
                    bank_buffers(&ctx, (problem, &shape, &layout), bank, &wafers, ring)?;
                named.extend(consts.iter().cloned());
                let table = dispatch_table(&bank.ranges, period, &rects, dispatch_stride);
                Ok(Resources {
                    named,
                    dispatches: ctx.uniform_bytes("dispatches", &table),
                    sram: &bank.sram,
                    links: &links,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let builder = Builder {
            ctx: &ctx,
            resources: &resources,
            problem,
            shape: &shape,
            pages,
            wafers: wafers.len(),
        };
        let remap = builder.remap();
        let (pack_up, pack_right) = builder.packs(None);
        let blocking = builder.blocking();
        drop(resources);
        Ok(Self {
            pack_up,
            pack_right,
            remap,
            engine: shape.words(g.n),
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
