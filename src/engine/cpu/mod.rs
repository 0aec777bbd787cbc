//! The CPU backend: the emulated cluster run natively with rayon (for machines with no
//! adapter), and the plain global-grid reference kernel.

use std::collections::VecDeque;
use std::sync::Arc;

use glam::UVec2;
use rayon::prelude::*;

mod global;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod ranks;
mod spread;
mod time_block;

pub use global::{stage_on_grid, CpuGlobal};

use self::ranks::{owner, Order, Package, Ranks};
use self::time_block::{CpuBlocks, History};
use crate::blocking::{self, InBlock};
use crate::cluster::package::copy_run;
use crate::cluster::{package, ClusterGeometry, Direction, LinkId, LinkStats, Scheduler};
use crate::field::GlobalField;
use crate::kernels::{Block, BlockIn, BlockOut, Kernel, MAX_FIELDS};
use crate::model::{Problem, Simulator};
use crate::wafer::{StageSlots, WaferGeometry};
use crate::Result;

/// One wafer's SRAM: `slots[slot][field]`, each a field's blocks for every PE.
type Sram = Vec<Vec<Vec<f32>>>;

/// The emulated cluster on the CPU: every wafer's SRAM blocks, the links as queues of
/// packages, and the same schedule as the GPU (`cluster::schedule`). A 1x1 cluster is the
/// single wafer, its links joining its opposite edges.
pub struct CpuCluster {
    kernel: Arc<dyn Kernel>,
    cluster: ClusterGeometry,
    sram: Vec<Sram>,
    /// Packages sent and not yet used, by dense link index.
    links: Vec<VecDeque<Package>>,
    scheduler: Scheduler,
    /// Remaps (stages) done.
    remaps: u64,
    /// Set when an `advance` failed part way: the wafers are then at different steps.
    failed: bool,
    /// Time blocks in use, or why the ones asked for are not; each wafer's strip history.
    blocks: std::result::Result<Option<CpuBlocks>, (u32, String)>,
    histories: Vec<History>,
    /// Each wafer's lower strips of every field, reused from remap to remap.
    strips: Vec<Vec<Vec<f32>>>,
    /// The processes the wafers are spread over (`None`: every wafer is here), and this
    /// one's rank among how many.
    ranks: Option<std::sync::Mutex<Box<dyn Ranks>>>,
    place: (usize, usize),
    /// How long a rank waits for a package from another.
    link_timeout: std::time::Duration,
    /// Time this rank spent in exchanges with the others, and the messages it sent and took.
    exchanged: (std::time::Duration, u64),
}

impl CpuCluster {
    /// Lays out the problem's initial state on the wafers; refuses clusters that would not
    /// fit this machine's available memory.
    pub fn new(problem: &Problem) -> Result<Self> {
        Self::on_ranks(problem, None)
    }

    /// The cluster with its wafers spread over `ranks` ([`ranks::owner`]): this process holds
    /// and steps its own wafers only, and keeps the whole schedule.
    pub fn on_ranks(problem: &Problem, ranks: Option<Box<dyn Ranks>>) -> Result<Self> {
        let c = problem.cluster;
        let (fields, stages) = (problem.spec().fields.len(), problem.spec().stages.len());
        let planes = (StageSlots::count(stages) * fields) as u64;
        let place = ranks.as_ref().map_or((0, 1), |r| (r.rank(), r.size()));
        let share = place.1 as u64;
        check_memory(
            "the emulated cluster",
            (planes * c.sram_cells() / share + (planes + 1) * problem.geometry.points()) * 4,
        )?;
        let scheduler = Scheduler::new(c, &problem.link_specs);
        scheduler.preflight()?;
        let state = problem.initial_state();
        let here = |k: usize| owner(k, c.count(), place.1) == place.0;
        let sram = (0..c.count())
            .map(|k| {
                if !here(k) {
                    return Ok(vec![]);
                }
                let fields: Vec<Vec<f32>> = state
                    .iter()
                    .map(|f| c.scatter(f, &[k]))
                    .collect::<Result<_>>()?;
                Ok(vec![fields; StageSlots::count(stages)])
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            kernel: problem.kernel.clone(),
            cluster: c,
            sram,
            links: vec![VecDeque::new(); problem.link_specs.len()],
            scheduler,
            remaps: 0,
            failed: false,
            blocks: Ok(None),
            histories: vec![History::new(); c.count()],
            strips: vec![vec![]; c.count()],
            ranks: ranks.map(std::sync::Mutex::new),
            place,
            link_timeout: std::time::Duration::from_secs(60),
            exchanged: (std::time::Duration::ZERO, 0),
        })
    }

    /// Runs time blocks of `steps` steps where the wafer allows it (every kernel can be
    /// blocked on the CPU; [`crate::blocking`]); `describe` says why where it does not.
    pub fn with_time_block(mut self, problem: &Problem, steps: u32) -> Self {
        self.blocks = CpuBlocks::plan(problem, steps).map_err(|why| (steps, why));
        if let Ok(Some(blocks)) = &self.blocks {
            self.histories = vec![blocks.history(&self.cluster); self.cluster.count()];
        }
        self
    }

    /// Where `state` stands in the time blocks of the run `run`.
    fn position(&self, state: u64, run: (u64, u64)) -> (InBlock, Option<CpuBlocks>) {
        match self.blocks {
            Ok(Some(b)) => (blocking::position(b.remaps as u64, state, run), Some(b)),
            _ => (InBlock::No, None),
        }
    }

    /// The value packed at frame point `(x, y)` of field `f` of wafer `k` in the state of slot `cur`,
    /// `state`: a block's inner state keeps its region's strips in the history.
    fn packed(
        &self,
        (k, f): (usize, usize),
        (cur, state): (usize, u64),
        run: (u64, u64),
    ) -> impl Fn(u32, u32) -> f32 + '_ {
        let plane = &self.sram[k][cur][f];
        let (at, blocks) = self.position(state, run);
        let c = &self.cluster;
        move |x, y| match blocks {
            Some(b) if at == InBlock::Inner && b.in_region(c, (x, y)) => {
                b.kept(c, &self.histories[k], (f, state % b.remaps as u64), (x, y))
            }
            _ => plane[package::owned_index(c, x, y)],
        }
    }

    fn check_usable(&self) -> Result<()> {
        match self.failed {
            false => Ok(()),
            true => Err(crate::invalid!(
                "the cluster stopped at mixed steps after an earlier failure"
            )),
        }
    }

    /// The raw SRAM of every wafer's first field, wafer-major, as Table 3 leaves it after
    /// the last step: owned cells of the current step, comm layers as received in the last
    /// `sendrecv` (into the state that stage remapped).
    pub fn sram(&self) -> Vec<f32> {
        let stages = self.kernel.spec().stages.len();
        let last = StageSlots::of(stages, self.remaps.saturating_sub(1));
        let now = StageSlots::state(self.remaps / stages as u64);
        let g = self.cluster.wafer;
        let (w, s) = (g.w() as usize, g.stride() as usize);
        let mut out = vec![];
        for sram in &self.sram {
            let mut plane = sram[now][0].clone();
            if self.remaps > 0 {
                let received = &sram[last.cur][0];
                for (cell, (value, from)) in plane.iter_mut().zip(received).enumerate() {
                    let cell = cell % g.block_cells();
                    if cell / s < w || cell % s < w {
                        *value = *from;
                    }
                }
            }
            out.extend(plane);
        }
        out
    }

    fn package(&mut self, link: LinkId) -> Package {
        self.links[link.index()]
            .pop_front()
            .expect("the schedule waited for it")
    }
}

/// One remap of a wafer of the cluster `c`, a row of PEs per task: `sendrecv` fills the comm
/// layers of every field of the remapped state from the lower strips (gathered first, from
/// the wafer's own cells and the package from below, into the wafer's reused `strips`), the PEs to the left and the package
/// from the left; `compute` writes the stage's output to the `out` slot, for small PEs or
/// heavy stages over the whole row of PEs in one call ([`compute_band`]), else PE by PE right
/// after each PE received, while its block is in cache. With `bands`, inside a time block,
/// only the link bands `bands` PEs wide step (PE by PE).
fn remap_wafer(
    c: &ClusterGeometry,
    kernel: &dyn Kernel,
    (k, remap): (usize, u64),
    (sram, strips): (&mut Sram, &mut Vec<Vec<f32>>),
    [left, below]: &[Package; 2],
    bands: Option<usize>,
) {
    let spec = kernel.spec();
    let slots = StageSlots::of(spec.stages.len(), remap);
    let stage = (remap % spec.stages.len() as u64) as usize;
    strips.resize_with(spec.fields.len(), Vec::new);
    for ((strips, plane), below) in strips.iter_mut().zip(&sram[slots.cur]).zip(below) {
        package::lower_strips_into(c, plane, below, bands, strips);
    }
    let strips = &*strips;
    let mut cur = std::mem::take(&mut sram[slots.cur]);
    let mut out = std::mem::take(&mut sram[slots.out]);
    // A step's later stages read its start from the slot the first stage received into.
    let base = (slots.base != slots.cur).then(|| &sram[slots.base][..]);
    let g = c.wafer;
    let whole = c.whole().expect("validated");
    let row_cells = g.pes_x as usize * g.block_cells();
    let first = k * g.pe_count();
    let shift = spec.shift_after(remap + 1);
    // Small PEs and heavy stages pay a call's set-up per PE more than a band's copies, as
    // long as the band stays in cache.
    let band_cells = g.stride() as usize * (g.pes_x * g.n + g.w()) as usize;
    let band_bytes = 4 * spec.fields.len() * band_cells;
    let banded = (g.n < BAND_BELOW_N || spec.flops_per_point() >= BAND_FROM_FLOPS)
        && band_bytes <= BAND_MAX_BYTES
        && bands.is_none();
    chunks_out(&mut cur, row_cells)
        .into_par_iter()
        .zip(chunks_out(&mut out, row_cells))
        .enumerate()
        .for_each(|(py, (mut cur_row, mut out_row))| {
            let rows = py * row_cells..(py + 1) * row_cells;
            let receive = |row: &mut [&mut [f32]; MAX_FIELDS], px: usize| {
                for ((row, strips), left) in row.iter_mut().zip(strips).zip(left) {
                    package::receive(c, row, (px, py), strips, left);
                }
            };
            let pe_at = |px: usize| {
                let pe = c.block_pe(first + py * g.pes_x as usize + px);
                whole.owned_point(pe, UVec2::splat(g.w()), shift)
            };
            if banded {
                (0..g.pes_x as usize).for_each(|px| receive(&mut cur_row, px));
                let base_row = base.map(|b| fields_at(b, rows.clone()));
                let states = (cur_row.each_ref().map(|r| &r[..]), base_row);
                compute_band(c, (kernel, stage), states, &mut out_row, pe_at(0));
                return;
            }
            for px in 0..blocking::stepping_pes(bands, py, g.pes_x as usize) {
                receive(&mut cur_row, px);
                let cur_row = cur_row.each_ref().map(|r| &r[..]);
                let base_row = base.map_or(cur_row, |b| fields_at(b, rows.clone()));
                let states = (cur_row, base_row);
                compute_pe(c, (kernel, stage), states, &mut out_row, (px, pe_at(px)));
            }
        });
    sram[slots.cur] = cur;
    sram[slots.out] = out;
}

/// PEs narrower than this compute a whole row of PEs per call ([`compute_band`]).
const BAND_BELOW_N: u32 = 8;
/// Stages of at least this many FLOPs per point do so at every `n`.
const BAND_FROM_FLOPS: u64 = 64;
/// Largest band of every field (in bytes) worth it: beyond, it falls out of cache.
const BAND_MAX_BYTES: usize = 2 << 20;

/// A stage on a whole row of PEs in one call: their blocks copied into bands (`cur`, and
/// `base` when it is another slot), computed as one run per owned row, and the output copied
/// back into every PE's owned cells of `out`. `at` is the first PE's first owned point.
fn compute_band(
    c: &ClusterGeometry,
    kernel: (&dyn Kernel, usize),
    (cur, base): ([&[f32]; MAX_FIELDS], Option<[&[f32]; MAX_FIELDS]>),
    out: &mut [&mut [f32]; MAX_FIELDS],
    at: UVec2,
) {
    let g = c.wafer;
    let fields = kernel.0.spec().fields.len();
    let bands = |rows: [&[f32]; MAX_FIELDS]| -> Vec<Vec<f32>> {
        rows[..fields].iter().map(|row| band_of(&g, row)).collect()
    };
    let cur_band = bands(cur);
    let base_band = base.map(bands);
    let (width, n) = ((g.pes_x * g.n) as usize, g.n as usize);
    let mut out_band = vec![vec![0.0; width * n]; fields];
    let all = 0..cur_band[0].len();
    let input = BlockIn {
        cur: fields_at(&cur_band, all.clone()),
        base: fields_at(base_band.as_ref().unwrap_or(&cur_band), all),
        stride: width + g.w() as usize,
    };
    let mut output = BlockOut {
        fields: chunks_out(&mut out_band, width * n)
            .pop()
            .expect("one band"),
        stride: width,
    };
    let points = Block {
        at,
        rows: n,
        len: width,
    };
    stage_block(kernel, points, &input, &mut output);
    for (band, out) in out_band.iter().zip(out.iter_mut()) {
        scatter_band(&g, band, out);
    }
}

/// The blocks of a row of PEs as one band: the row's window rows `0 .. n + w`, each `W + w`
/// values from frame column `-w` (the first PE's comm columns, then every PE's owned ones),
/// so that a stage runs over the whole row of PEs in one call.
fn band_of(g: &WaferGeometry, row: &[f32]) -> Vec<f32> {
    let (n, w, s, block) = (
        g.n as usize,
        g.w() as usize,
        g.stride() as usize,
        g.block_cells(),
    );
    let width = g.pes_x as usize * n + w;
    let mut band = vec![0.0; s * width];
    for (r, line) in band.chunks_exact_mut(width).enumerate() {
        copy_run(&mut line[..w], &row[r * s..]);
        for (px, run) in line[w..].chunks_exact_mut(n).enumerate() {
            copy_run(run, &row[px * block + r * s + w..]);
        }
    }
    band
}

/// A row of PEs' output band (`n` rows of `W` values) into every PE's owned cells of `out`.
fn scatter_band(g: &WaferGeometry, band: &[f32], out: &mut [f32]) {
    let (n, w, s, block) = (
        g.n as usize,
        g.w() as usize,
        g.stride() as usize,
        g.block_cells(),
    );
    let width = g.pes_x as usize * n;
    for i in 0..n {
        for px in 0..g.pes_x as usize {
            let at = px * block + (i + w) * s + w;
            copy_run(&mut out[at..at + n], &band[i * width + px * n..]);
        }
    }
}

/// Runs stage `stage` of `kernel` on `block`, split where its runs pass the grid's last
/// column.
fn stage_block(
    (kernel, stage): (&dyn Kernel, usize),
    block: Block,
    input: &BlockIn,
    out: &mut BlockOut,
) {
    let first = ((kernel.grid().x - block.at.x) as usize).min(block.len);
    kernel.stage_block(
        stage,
        Block {
            len: first,
            ..block
        },
        input,
        out,
    );
    if first < block.len {
        let rest = Block {
            at: UVec2::new(0, block.at.y),
            len: block.len - first,
            ..block
        };
        kernel.stage_block(stage, rest, &input.skip(first), &mut out.part(first));
    }
}

/// Every field's plane cut into chunks of `cells`, by chunk.
fn chunks_out<P: AsMut<[f32]>>(out: &mut [P], cells: usize) -> Vec<[&mut [f32]; MAX_FIELDS]> {
    let count = out
        .first_mut()
        .map_or(0, |plane| plane.as_mut().len().div_ceil(cells));
    let mut chunks: Vec<[&mut [f32]; MAX_FIELDS]> =
        (0..count).map(|_| Default::default()).collect();
    for (f, plane) in out.iter_mut().enumerate() {
        for (chunk, cut) in chunks.iter_mut().zip(plane.as_mut().chunks_mut(cells)) {
            chunk[f] = cut;
        }
    }
    chunks
}

/// Every field's `range` of `planes` (unused fields empty).
fn fields_at(planes: &[Vec<f32>], range: std::ops::Range<usize>) -> [&[f32]; MAX_FIELDS] {
    std::array::from_fn(|f| planes.get(f).map_or(&[][..], |p| &p[range.clone()]))
}

/// A stage on PE `px` of a row of PEs (`cur` and `base` hold the row's blocks of every
/// field, `out` the output slot's): row `i` of its owned points, `y[i+w][w..w+n]`, from rows
/// `i ..= i+w` of its block, its first owned point being global point `at`.
fn compute_pe(
    c: &ClusterGeometry,
    kernel: (&dyn Kernel, usize),
    (cur, base): ([&[f32]; MAX_FIELDS], [&[f32]; MAX_FIELDS]),
    out: &mut [&mut [f32]; MAX_FIELDS],
    (px, at): (usize, UVec2),
) {
    let g = c.wafer;
    let (block, s, w, n) = (
        g.block_cells(),
        g.stride() as usize,
        g.w() as usize,
        g.n as usize,
    );
    let cells = px * block..(px + 1) * block;
    let input = BlockIn {
        cur: cur.map(|r| r.get(cells.clone()).unwrap_or_default()),
        base: base.map(|r| r.get(cells.clone()).unwrap_or_default()),
        stride: s,
    };
    let owned = px * block + w * s + w..(px + 1) * block;
    let mut out = BlockOut {
        fields: out
            .each_mut()
            .map(|o| o.get_mut(owned.clone()).unwrap_or_default()),
        stride: s,
    };
    let points = Block {
        at,
        rows: n,
        len: n,
    };
    stage_block(kernel, points, &input, &mut out);
}

impl CpuCluster {
    /// Runs `steps` more steps of this process's wafers, exchanging packages with the other
    /// ranks phase by phase.
    fn advance_here(&mut self, steps: u64) -> Result<()> {
        self.check_usable()?;
        let stages = self.kernel.spec().stages.len() as u64;
        let target = self.remaps + steps * stages;
        let run = (self.remaps, target);
        let fields = self.kernel.spec().fields.len();
        let c = self.cluster;
        let (me, size) = self.place;
        let here = |k: usize| owner(k, c.count(), size) == me;
        while let Some(round) = self
            .scheduler
            .next_round(target)
            .inspect_err(|_| self.failed = true)?
        {
            let mut outgoing = vec![];
            for &(k, state) in round.up.iter().filter(|(k, _)| here(*k)) {
                let cur = StageSlots::of(stages as usize, state).cur;
                let package = (0..fields)
                    .map(|f| package::pack_up_with(&c, self.packed((k, f), (cur, state), run)))
                    .collect();
                let link = LinkId {
                    from: k,
                    dir: Direction::Up,
                };
                self.send(link, package, &mut outgoing);
            }
            self.exchange(&round.up, Direction::Up, outgoing)?;
            let mut outgoing = vec![];
            for &(k, state) in round.right.iter().filter(|(k, _)| here(*k)) {
                let cur = StageSlots::of(stages as usize, state).cur;
                let below = &self.links[c.incoming(k, Direction::Up).index()][0];
                let package = (0..fields)
                    .map(|f| {
                        let value = self.packed((k, f), (cur, state), run);
                        package::pack_right_with(&c, value, &below[f])
                    })
                    .collect();
                let link = LinkId {
                    from: k,
                    dir: Direction::Right,
                };
                self.send(link, package, &mut outgoing);
            }
            self.exchange(&round.right, Direction::Right, outgoing)?;
            // The stepping wafers run in parallel, each with its two packages.
            let mut inputs: Vec<Option<(u64, [Package; 2])>> = vec![None; c.count()];
            for &(k, state) in round.step.iter().filter(|(k, _)| here(*k)) {
                let packages = Direction::ALL.map(|dir| self.package(c.incoming(k, dir)));
                inputs[k] = Some((state, packages));
            }
            let kernel = &*self.kernel;
            let blocks = self.blocks.clone().ok().flatten();
            self.sram
                .par_iter_mut()
                .zip(self.histories.par_iter_mut())
                .zip(self.strips.par_iter_mut())
                .zip(&inputs)
                .enumerate()
                .for_each(|(k, (((sram, history), strips), input))| {
                    let Some((state, packages)) = input else {
                        return;
                    };
                    // Inside a time block only the link bands step one at a time.
                    let bands = blocks.and_then(|b| {
                        match blocking::position(b.remaps as u64, *state, run) {
                            InBlock::No => return None,
                            InBlock::Start => {
                                b.advance_region(&c, kernel, (k, *state), sram, history)
                            }
                            InBlock::Inner => {}
                        }
                        Some(b.band as usize)
                    });
                    remap_wafer(&c, kernel, (k, *state), (sram, strips), packages, bands);
                });
        }
        self.remaps = target;
        Ok(())
    }
}

impl Drop for CpuCluster {
    /// Rank 0 lets the other ranks end with it.
    fn drop(&mut self) {
        let _ = self.lead(Order::Done);
    }
}

impl Simulator for CpuCluster {
    fn advance(&mut self, steps: u64) -> Result<()> {
        // No steps is no order: an order to advance 0 steps would read as `Done`.
        if steps == 0 {
            return self.check_usable();
        }
        self.lead(Order::Advance(steps))?;
        self.advance_here(steps)
    }

    fn step(&self) -> u64 {
        self.remaps / self.kernel.spec().stages.len() as u64
    }

    fn state(&self) -> Result<Vec<GlobalField>> {
        self.check_usable()?;
        self.lead(Order::Gather)?;
        self.gathered()
    }

    fn time_block(&self) -> u32 {
        self.blocks
            .as_ref()
            .ok()
            .and_then(|b| b.as_ref())
            .map_or(1, |b| b.steps)
    }

    fn describe(&self) -> String {
        let blocks = match &self.blocks {
            Ok(None) => String::new(),
            Ok(Some(b)) => format!(
                "; time blocks of {} steps beyond {}-PE link bands",
                b.steps, b.band
            ),
            Err((steps, why)) => format!("; no time blocks of {steps} steps: {why}"),
        };
        let spread = match (self.place.1, self.exchanged) {
            (1, _) => String::new(),
            (ranks, (time, messages)) => format!(
                ", over {ranks} MPI ranks; rank 0 exchanged {messages} messages in {:.3} s",
                time.as_secs_f64()
            ),
        };
        format!(
            "emulated {} on the CPU ({} threads{blocks}){spread}",
            self.cluster.describe(),
            rayon::current_num_threads()
        )
    }

    fn link_stats(&self) -> Option<Vec<LinkStats>> {
        Some(self.scheduler.stats())
    }
}

/// Refuses to allocate `bytes` when the process may allocate less ([`crate::memory`]).
fn check_memory(what: &str, bytes: u64) -> Result<()> {
    crate::memory::check_host_memory(what, bytes, "use fewer PEs or a smaller n")
}
