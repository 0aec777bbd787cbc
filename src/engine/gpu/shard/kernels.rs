//! A shard's kernels: each pipeline with its bind groups for every bank, and what builds the
//! ones its [`Shape`] runs.

use super::super::constants::Pages;
use super::super::context::{GpuContext, Pipeline, WORKGROUP};
use super::super::point_blocks::PointBlock;
use super::super::row_blocks::{RowBlock, BAND_ROWS};
use super::super::shaders;
use super::super::uniforms::{DispatchUniform, BLOCK_COLS};
use super::plan::{Shape, TimeBlock, TimeBlocks};
use crate::cluster::Direction;
use crate::kernels::{Driver, KernelSpec, Stage};
use crate::model::Problem;
use crate::wafer::{StageSlots, WaferGeometry};

/// Cells per field and wafer of the halo that a Point stage's `compute_edges` keeps at a
/// step's first stage (`shaders/wafer_point_edges.wgsl`): w rows below the wafer, from w
/// columns left of it, and w columns left of it.
pub fn halo_cells(g: &WaferGeometry) -> usize {
    let size = g.global_size();
    (g.w() * (size.x + size.y + g.w())) as usize
}

/// Invocations of `sendrecv_cells` per PE: one per `cells` cells of each comm line (the w
/// rows of the lower strip, the w columns of the left one) of each field.
pub fn comm_line_threads(g: &WaferGeometry, fields: usize, cells: u32) -> u64 {
    let lines = 2 * g.w() as u64;
    fields as u64 * lines * g.stride().div_ceil(cells) as u64
}

/// Cells of a comm line per sendrecv invocation: the tuning's, or twice as many as often as
/// a dispatch over `wafers` wafers would outrun the shaders' 32-bit invocation ids.
pub fn sendrecv_cells(tuning: u32, g: &WaferGeometry, fields: usize, wafers: usize) -> u32 {
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
pub enum Spread {
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
pub struct Kernel {
    pub pipeline: Pipeline,
    /// Per bank: `None` for the remaps this pipeline never runs (another stage's).
    pub groups: Vec<Vec<Option<wgpu::BindGroup>>>,
    pub dispatch_groups: Vec<wgpu::BindGroup>,
    pub spread: Spread,
}

/// What runs a remap: Table 3's `sendrecv` and one `compute` per stage; or the fused engine's
/// clock tick in place of `sendrecv` and its tiled stages, which receive as they compute; or,
/// with direct reads, the tick and each stage's direct kernel beyond the link bands, and on
/// the bands (`plan::direct_band`, or those of time blocks) Table 3's `sendrecv` and `compute` or
/// the tiled stages, or where there are none the points by the wafer's low edges (which
/// tick for Rows3 stages; Point stages, which read the clock, keep the tick before them).
pub struct Remap {
    /// `sendrecv` or the tick; none where the edges tick.
    pub receive: Option<Kernel>,
    /// Each stage's kernel on every PE, or with direct reads on the link bands (none without
    /// bands).
    pub stages: Vec<Kernel>,
    /// With direct reads, each stage's kernel beyond the link bands; empty otherwise.
    pub direct: Vec<Kernel>,
    /// With direct reads and no bands, each stage's kernel of the points within reach of the
    /// wafer's low edges (Rows3 `compute_edges`); empty otherwise.
    pub edges: Vec<Kernel>,
    /// With direct reads on explicit bands, their `sendrecv` (without the clock, which the
    /// tick keeps).
    pub band_receive: Option<Kernel>,
}

impl Remap {
    /// Whether this is the fused engine (tiles or direct reads).
    pub fn fused(&self) -> bool {
        !self.direct.is_empty()
            || self
                .stages
                .iter()
                .any(|k| matches!(k.spread, Spread::PeBlocks(_)))
    }
}

/// The time blocking in use: remaps per block, the dispatch of a block's blocked region, and
/// the packing of its inner states.
pub struct Blocking {
    pub remaps: u64,
    /// The region's kernels: one of tiles; in registers, heat's blocks within, at the top and
    /// at the right, or shallow water's one.
    pub region: Vec<Kernel>,
    /// In registers, each stage's direct reads of the link bands (tiles step the bands with
    /// the stages).
    pub bands: Vec<Kernel>,
    pub pack_up: Kernel,
    pub pack_right: Kernel,
}

/// The buffers the kernels bind for one bank, by the names the shaders give them.
pub struct Resources<'a> {
    pub named: Vec<(&'static str, wgpu::Buffer)>,
    pub dispatches: wgpu::Buffer,
    pub sram: &'a [wgpu::Buffer],
    pub links: &'a [wgpu::Buffer; 2],
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
    pub fn pack(&self, dir: Direction) -> &Kernel {
        if dir == Direction::Up {
            &self.pack_up
        } else {
            &self.pack_right
        }
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
    let groups = banks
        .iter()
        .map(|r| {
            (0..2 * stages as u64)
                .map(|remap| {
                    let mine = stage.is_none_or(|k| remap % stages as u64 == k as u64);
                    mine.then(|| ctx.bind_declared(&pipeline, r.for_remap(stages, remap)))
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

/// Builds the kernels of a shard of `wafers` wafers running `shape`, binding `resources`.
pub struct Builder<'a> {
    pub ctx: &'a GpuContext,
    pub resources: &'a [Resources<'a>],
    pub problem: &'a Problem,
    pub shape: &'a Shape,
    pub pages: Pages,
    pub wafers: usize,
}

impl Builder<'_> {
    fn spec(&self) -> &KernelSpec {
        self.problem.spec()
    }

    fn wafer(&self) -> WaferGeometry {
        self.problem.cluster.wafer
    }

    fn build(
        &self,
        label: &str,
        source: &str,
        entry: &str,
        spread: Spread,
        stage: Option<usize>,
    ) -> Kernel {
        let stages = self.spec().stages.len();
        let names = (label, source, entry);
        kernel(self.ctx, self.resources, stages, names, spread, stage)
    }

    /// One kernel per stage, from `of(k, stage)`.
    fn per_stage(&self, of: impl Fn(usize, &Stage) -> Kernel) -> Vec<Kernel> {
        let stages = self.spec().stages.iter().enumerate();
        stages.map(|(k, stage)| of(k, stage)).collect()
    }

    /// The `sendrecv` entry point, the cells of a comm line per invocation and the
    /// invocations per PE.
    fn sendrecv_shape(&self) -> (&'static str, u32, u64) {
        let (g, fields) = (self.wafer(), self.spec().fields.len());
        match self.ctx.tuning.sendrecv_cells {
            None => ("sendrecv", 1, fields as u64),
            Some(cells) => {
                let cells = sendrecv_cells(cells, &g, fields, self.wafers);
                let threads = comm_line_threads(&g, fields, cells);
                ("sendrecv_cells", cells, threads)
            }
        }
    }

    /// Table 3's `sendrecv`, which advances the clock where it `keeps_clock`.
    fn sendrecv(&self, keeps_clock: bool) -> Kernel {
        let (entry, cells, per_pe) = self.sendrecv_shape();
        let source = shaders::cluster_sendrecv(cells, keeps_clock);
        self.build("sendrecv", &source, entry, Spread::Pe(per_pe), None)
    }

    /// The clock tick alone.
    fn tick(&self) -> Kernel {
        let source = shaders::cluster_sendrecv(self.sendrecv_shape().1, true);
        self.build("tick", &source, "tick", Spread::Wafer(1), None)
    }

    /// Table 3's `compute` of each stage.
    fn explicit_stages(&self) -> Vec<Kernel> {
        let (n, tuning) = (self.wafer().n as u64, &self.ctx.tuning);
        // Invocations per PE of a Rows3 compute: blocks of `cols` columns by `rows` rows.
        let rows3 = |cols: u32| n.div_ceil(cols as u64) * n.div_ceil(tuning.wafer_rows as u64);
        self.per_stage(|k, stage| {
            let (entry, threads) = match stage.driver {
                Driver::Rows3 if tuning.wafer_cols == 1 => ("compute_columns", rows3(1)),
                Driver::Rows3 => ("compute", rows3(tuning.wafer_cols)),
                Driver::Point => ("compute", n * n),
            };
            let source = shaders::wafer_stage(self.spec(), stage, self.pages);
            self.build(stage.name, &source, entry, Spread::Pe(threads), Some(k))
        })
    }

    /// Each stage's direct reads: a Rows3 invocation walks the tuning's `direct_rows` rows,
    /// a Point one takes its tuning's block of points.
    fn direct_stages(&self) -> Vec<Kernel> {
        let (tuning, vec4) = (&self.ctx.tuning, self.shape.vec4);
        let rows = tuning.direct_rows;
        self.per_stage(|k, stage| {
            let (entry, size) = match (stage.driver, tuning.direct_cols) {
                (Driver::Rows3, _) if vec4 => {
                    ("compute_direct_vec4", glam::UVec2::new(BLOCK_COLS, rows))
                }
                (Driver::Rows3, 1) => ("compute_direct_columns", glam::UVec2::new(1, rows)),
                (Driver::Rows3, _) => ("compute_direct", glam::UVec2::new(BLOCK_COLS, rows)),
                (Driver::Point, _) => ("compute_direct", tuning.point_block()),
            };
            let source = shaders::wafer_direct(self.spec(), k, self.pages, size, vec4);
            let label = format!("{} direct", stage.name);
            self.build(&label, &source, entry, Spread::Points(size), Some(k))
        })
    }

    /// The points within reach of the wafer's low edges, of each stage: for Rows3 within 2
    /// (less the first two rows, which vec4 reads take), and the tick; for Point within w,
    /// and at a step's first stage of several the halo cells it keeps.
    fn edge_stages(&self) -> Vec<Kernel> {
        let g = self.wafer();
        let (size, w) = (g.global_size().as_u64vec2(), g.w() as u64);
        let several = self.spec().stages.len() > 1;
        self.per_stage(|k, stage| {
            let points = match stage.driver {
                Driver::Rows3 => {
                    let rows = if self.shape.vec4 { 0 } else { 2 };
                    rows * size.x + 2 * (size.y - rows) + 1
                }
                Driver::Point => {
                    let kept = (k == 0 && several) as u64 * halo_cells(&g) as u64;
                    w * (size.x + size.y - w) + kept
                }
            };
            let source = shaders::wafer_edges(self.spec(), k, self.pages, self.shape.vec4);
            let label = format!("{} edges", stage.name);
            let spread = Spread::Wafer(points);
            self.build(&label, &source, "compute_edges", spread, Some(k))
        })
    }

    /// Each stage's fused tiles of `block` PEs.
    fn tiled_stages(&self, block: glam::UVec2) -> Vec<Kernel> {
        let tuning = &self.ctx.tuning;
        self.per_stage(|k, stage| {
            let entry = match (stage.driver, tuning.fused_cols) {
                (Driver::Rows3, 1) => "compute_columns",
                _ => "compute",
            };
            let tile = (block, self.shape.cap);
            let source = shaders::wafer_fused(self.spec(), k, tile, self.pages, tuning);
            self.build(stage.name, &source, entry, Spread::PeBlocks(block), Some(k))
        })
    }

    /// What runs a remap.
    pub fn remap(&self) -> Remap {
        let s = self.shape;
        let explicit_bands = s.explicit_bands();
        match (s.block, s.tiled() || !s.direct) {
            (Some(block), true) => Remap {
                receive: Some(self.tick()),
                stages: self.tiled_stages(block),
                direct: if s.direct {
                    self.direct_stages()
                } else {
                    vec![]
                },
                edges: vec![],
                band_receive: None,
            },
            (_, false) => Remap {
                // Rows3 edges tick; Point stages read the clock, ticked before them.
                receive: (explicit_bands || !s.rows3).then(|| self.tick()),
                stages: match explicit_bands {
                    true => self.explicit_stages(),
                    false => vec![],
                },
                direct: self.direct_stages(),
                edges: match explicit_bands {
                    true => vec![],
                    false => self.edge_stages(),
                },
                band_receive: explicit_bands.then(|| self.sendrecv(false)),
            },
            (None, true) => Remap {
                receive: Some(self.sendrecv(true)),
                stages: self.explicit_stages(),
                direct: vec![],
                edges: vec![],
                band_receive: None,
            },
        }
    }

    /// The packs up and right, of every PE's state, or within time blocks of the states the
    /// blocked region from `region` on keeps.
    pub fn packs(&self, region: Option<u32>) -> (Kernel, Kernel) {
        let pack = shaders::cluster_pack(self.shape.remaps, region);
        let fields = self.spec().fields.len();
        let build = |dir: Direction, label, entry| {
            let threads = (self.problem.cluster.package_cells(dir) * fields) as u64;
            self.build(label, &pack, entry, Spread::Wafer(threads), None)
        };
        (
            build(Direction::Up, "pack up", "pack_up"),
            build(Direction::Right, "pack right", "pack_right"),
        )
    }

    /// The time blocks' kernels, if there are any.
    pub fn blocking(&self) -> Option<Blocking> {
        let plan = self.shape.blocked()?;
        let (pack_up, pack_right) = self.packs(Some(plan.region_start(&self.wafer())));
        let (region, bands) = match plan {
            TimeBlocks::Tiles(plan) => (vec![self.tile_region(&plan)], vec![]),
            TimeBlocks::Rows(plan) => self.row_region(&plan),
            TimeBlocks::Points(plan) => self.point_region(&plan),
        };
        Some(Blocking {
            remaps: self.shape.remaps as u64,
            region,
            bands,
            pack_up,
            pack_right,
        })
    }

    /// Tiles: a workgroup per span of the blocked region.
    fn tile_region(&self, plan: &TimeBlock) -> Kernel {
        let g = self.wafer();
        let spans = (glam::UVec2::new(g.pes_x, g.pes_y) - plan.band) * g.n;
        let spans = spans.x.div_ceil(plan.span.x) as u64 * spans.y.div_ceil(plan.span.y) as u64;
        let source = shaders::wafer_blocked(self.spec(), plan, self.pages, &self.ctx.tuning);
        let spread = Spread::Wafer(spans * WORKGROUP as u64);
        self.build("time block", &source, "compute", spread, Some(0))
    }

    /// Heat's blocks in registers, within and at the top and right (or across lanes, all
    /// in one), and the kernel of their link bands.
    fn row_region(&self, plan: &RowBlock) -> (Vec<Kernel>, Vec<Kernel>) {
        let (g, rows) = (self.wafer(), self.ctx.tuning.direct_rows);
        let source = shaders::wafer_row_blocked(self.spec(), plan, rows);
        let (blocks, top, right, band_blocks) = plan.blocks(&g, rows);
        let entries = match plan.lanes {
            Some(lanes) => vec![("time block", "compute_blocked", blocks * lanes as u64)],
            None => vec![
                ("time block", "compute_blocked", blocks),
                ("time block top", "compute_blocked_top", top),
                ("time block right", "compute_blocked_right", right),
            ],
        };
        let region = entries.into_iter().map(|(label, entry, invocations)| {
            self.build(label, &source, entry, Spread::Wafer(invocations), Some(0))
        });
        let band_rows = glam::UVec2::new(BLOCK_COLS, BAND_ROWS);
        let band_source = shaders::wafer_direct(self.spec(), 0, self.pages, band_rows, true);
        let spread = Spread::Wafer(band_blocks);
        let bands = self.build(
            "time block bands",
            &band_source,
            "compute_bands",
            spread,
            Some(0),
        );
        (region.collect(), vec![bands])
    }

    /// Shallow water's blocks in registers, and each stage's kernel of their link bands.
    fn point_region(&self, plan: &PointBlock) -> (Vec<Kernel>, Vec<Kernel>) {
        let (g, rows, run) = (
            self.wafer(),
            self.ctx.tuning.direct_rows,
            self.ctx.tuning.point_block(),
        );
        let source = shaders::wafer_point_blocked(self.spec(), plan, self.pages, rows);
        let spread = Spread::Wafer(plan.blocks(&g, rows));
        let region = self.build("time block", &source, "compute_blocked", spread, Some(0));
        let bands = self.per_stage(|k, stage| {
            let source = shaders::wafer_direct(self.spec(), k, self.pages, run, self.shape.vec4);
            let label = format!("{} bands", stage.name);
            let spread = Spread::Wafer(plan.band_blocks(&g, run));
            self.build(&label, &source, "compute_bands", spread, Some(k))
        });
        (vec![region], bands)
    }
}
