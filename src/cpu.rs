//! The CPU backend: the emulated cluster run natively with rayon (for machines with no
//! adapter), and the plain global-grid reference kernel.

use std::collections::VecDeque;
use std::sync::Arc;

use glam::UVec2;
use rayon::prelude::*;

use crate::cluster::{package, ClusterGeometry, Direction, LinkId, LinkStats, Scheduler};
use crate::field::GlobalField;
use crate::kernels::{Driver, Kernel, Neighbourhood, Rows3, Window, MAX_WINDOW};
use crate::model::{Problem, Simulator};
use crate::wafer::{StageSlots, WaferGeometry};
use crate::{Error, Result};

/// A package on a link: one vector per state field.
type Package = Vec<Vec<f32>>;

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
}

impl CpuCluster {
    /// Lays out the problem's initial state on the wafers; refuses clusters that would not
    /// fit this machine's available memory.
    pub fn new(problem: &Problem) -> Result<Self> {
        let c = problem.cluster;
        let (fields, stages) = (problem.spec().fields.len(), problem.spec().stages.len());
        let planes = (StageSlots::count(stages) * fields) as u64;
        check_memory(
            "the emulated cluster",
            (planes * c.sram_cells() + (planes + 1) * problem.geometry.points()) * 4,
        )?;
        let scheduler = Scheduler::new(c, &problem.link_specs);
        scheduler.preflight()?;
        let state = problem.initial_state();
        let sram = (0..c.count())
            .map(|k| {
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
        })
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

/// One remap of a wafer of the cluster `c`: `sendrecv` fills the comm layers of every field of
/// the remapped state from its own cells and the packages from the left and from below, then
/// `compute` writes the stage's output.
fn remap_wafer(
    c: &ClusterGeometry,
    kernel: &dyn Kernel,
    (k, remap): (usize, u64),
    sram: &mut Sram,
    [left, below]: &[Package; 2],
) {
    let spec = kernel.spec();
    let slots = StageSlots::of(spec.stages.len(), remap);
    for (f, plane) in sram[slots.cur].iter_mut().enumerate() {
        receive_plane(c, plane, &left[f], &below[f]);
    }
    let stage = spec.stages[(remap % spec.stages.len() as u64) as usize];
    let mut out = std::mem::take(&mut sram[slots.out]);
    let (cur, base) = (&sram[slots.cur], &sram[slots.base]);
    match (stage.driver, kernel.rows3()) {
        (Driver::Rows3, Some(rule)) => compute_rows3(&c.wafer, rule, &cur[0], &mut out[0]),
        _ => {
            let shift = spec.shift_after(remap + 1);
            let first = k * c.wafer.pe_count();
            let pe_of = |b: usize| c.block_pe(first + b);
            let stage = (remap % spec.stages.len() as u64) as usize;
            compute_points(c, kernel, stage, (cur, base), &mut out, (shift, &pe_of));
        }
    }
    sram[slots.out] = out;
}

/// Table 3's `sendrecv` on every PE of one field: each block gets its comm layer from its
/// wafer's owned cells and the packages.
fn receive_plane(c: &ClusterGeometry, plane: &mut Vec<f32>, left: &[f32], below: &[f32]) {
    let block = c.wafer.block_cells();
    let mut received = plane.clone();
    let source = &*plane;
    received
        .par_chunks_mut(block)
        .enumerate()
        .for_each(|(pe, out)| package::receive(c, source, pe, out, left, below));
    *plane = received;
}

/// A [`Driver::Rows3`] stage on every PE: a row of PEs per task.
fn compute_rows3(g: &WaferGeometry, rule: Rows3, x: &[f32], y: &mut [f32]) {
    let block = g.block_cells();
    y.par_chunks_mut(g.pes_x as usize * block)
        .enumerate()
        .for_each(|(py, y_row)| {
            for (px, y) in y_row.chunks_mut(block).enumerate() {
                let pe = py * g.pes_x as usize + px;
                let x = &x[pe * block..(pe + 1) * block];
                compute_block(g, x, y, |nb| (rule.point)(&rule.weights, nb));
            }
        });
}

/// One PE's Rows3 compute over its `n x n` owned points.
#[inline(always)]
fn compute_block(
    g: &WaferGeometry,
    x: &[f32],
    y: &mut [f32],
    point: impl Fn(&Neighbourhood) -> f32,
) {
    let (s, n, w) = (g.stride() as usize, g.n as usize, g.w() as usize);
    for i in 0..n {
        // Rows i ..= i+2 from column 0: n + 2 values each.
        let row = |r: usize| &x[r * s..r * s + n + 2];
        let out = &mut y[(i + w) * s + w..(i + w) * s + w + n];
        update_row(row(i), row(i + 1), row(i + 2), out, &point);
    }
}

/// `out[j]` from columns `j ..= j+2` of three rows (below, middle, above) of `out.len() + 2`
/// values; the slices are cut to exact lengths so that the loop vectorises without bounds checks.
#[inline(always)]
fn update_row(
    below: &[f32],
    mid: &[f32],
    above: &[f32],
    out: &mut [f32],
    point: &impl Fn(&Neighbourhood) -> f32,
) {
    let n = out.len();
    let (b, m, a) = (&below[..n + 2], &mid[..n + 2], &above[..n + 2]);
    for j in 0..n {
        out[j] = point(&[
            [b[j], b[j + 1], b[j + 2]],
            [m[j], m[j + 1], m[j + 2]],
            [a[j], a[j + 1], a[j + 2]],
        ]);
    }
}

/// A [`Driver::Point`] stage on every PE of a wafer: `y[i+w][j+w]` from the window
/// `[i, i+w] x [j, j+w]` of the remapped state and the step's start, at the global point the
/// written cell holds after the translation by `shift`.
fn compute_points(
    c: &ClusterGeometry,
    kernel: &dyn Kernel,
    stage: usize,
    (cur, base): (&[Vec<f32>], &[Vec<f32>]),
    out: &mut [Vec<f32>],
    (shift, pe_of): (u64, &(dyn Fn(usize) -> (u32, u32) + Sync)),
) {
    let g = c.wafer;
    let whole = c.whole().expect("validated");
    let (block, s, w) = (g.block_cells(), g.stride() as usize, g.w() as usize);
    let fields = cur.len();
    let blocks: Vec<Vec<Vec<f32>>> = (0..g.pe_count())
        .into_par_iter()
        .map(|pe| {
            let at_block = |plane: &[f32], cell: usize| plane[pe * block + cell];
            let mut fresh = vec![vec![0.0; g.n as usize * g.n as usize]; fields];
            let coords = pe_of(pe);
            let mut window = Window::default();
            for i in 0..g.n as usize {
                for j in 0..g.n as usize {
                    for f in 0..fields {
                        for dy in 0..=w.min(MAX_WINDOW - 1) {
                            for dx in 0..=w.min(MAX_WINDOW - 1) {
                                let cell = (i + dy) * s + j + dx;
                                window.cur[f][dy][dx] = at_block(&cur[f], cell);
                                window.base[f][dy][dx] = at_block(&base[f], cell);
                            }
                        }
                    }
                    let cell = ((i + w) as u32, (j + w) as u32);
                    let (x, y) = whole.owned_point(coords, cell, shift);
                    let values = kernel.point(stage, UVec2::new(x, y), &window);
                    for f in 0..fields {
                        fresh[f][i * g.n as usize + j] = values[f];
                    }
                }
            }
            fresh
        })
        .collect();
    for (pe, fresh) in blocks.into_iter().enumerate() {
        for (f, values) in fresh.into_iter().enumerate() {
            for (i, row) in values.chunks(g.n as usize).enumerate() {
                let at = pe * block + (i + w) * s + w;
                out[f][at..at + row.len()].copy_from_slice(row);
            }
        }
    }
}

impl Simulator for CpuCluster {
    fn advance(&mut self, steps: u64) -> Result<()> {
        self.check_usable()?;
        let stages = self.kernel.spec().stages.len() as u64;
        let target = self.remaps + steps * stages;
        let c = self.cluster;
        while let Some(round) = self
            .scheduler
            .next_round(target)
            .inspect_err(|_| self.failed = true)?
        {
            for &(k, state) in &round.up {
                let cur = StageSlots::of(stages as usize, state).cur;
                let package = self.sram[k][cur]
                    .iter()
                    .map(|plane| package::pack_up(&c, plane))
                    .collect();
                let link = LinkId {
                    from: k,
                    dir: Direction::Up,
                };
                self.links[link.index()].push_back(package);
            }
            for &(k, state) in &round.right {
                let cur = StageSlots::of(stages as usize, state).cur;
                let below = &self.links[c.incoming(k, Direction::Up).index()][0];
                let package = self.sram[k][cur]
                    .iter()
                    .zip(below)
                    .map(|(plane, below)| package::pack_right(&c, plane, below))
                    .collect();
                let link = LinkId {
                    from: k,
                    dir: Direction::Right,
                };
                self.links[link.index()].push_back(package);
            }
            // The stepping wafers run in parallel, each with its two packages.
            let mut inputs: Vec<Option<(u64, [Package; 2])>> = vec![None; c.count()];
            for &(k, state) in &round.step {
                let packages = Direction::ALL.map(|dir| self.package(c.incoming(k, dir)));
                inputs[k] = Some((state, packages));
            }
            let kernel = &*self.kernel;
            self.sram
                .par_iter_mut()
                .zip(&inputs)
                .enumerate()
                .for_each(|(k, (sram, input))| {
                    if let Some((state, packages)) = input {
                        remap_wafer(&c, kernel, (k, *state), sram, packages);
                    }
                });
        }
        self.remaps = target;
        Ok(())
    }

    fn step(&self) -> u64 {
        self.remaps / self.kernel.spec().stages.len() as u64
    }

    fn state(&self) -> Result<Vec<GlobalField>> {
        self.check_usable()?;
        let (nx, ny) = self.cluster.whole()?.global_size();
        let slot = StageSlots::state(self.step());
        let shift = self.kernel.spec().shift_after(self.remaps);
        let fields = self.kernel.spec().fields.len();
        let all: Vec<usize> = (0..self.cluster.count()).collect();
        Ok((0..fields)
            .map(|f| {
                let mut field = GlobalField::zeros(nx, ny);
                let sram: Vec<f32> = self.sram.iter().flat_map(|w| w[slot][f].clone()).collect();
                self.cluster.gather_into(&mut field, &sram, &all, shift);
                field
            })
            .collect())
    }

    fn describe(&self) -> String {
        format!(
            "emulated {} on the CPU ({} threads)",
            self.cluster.describe(),
            rayon::current_num_threads()
        )
    }

    fn link_stats(&self) -> Option<Vec<LinkStats>> {
        Some(self.scheduler.stats())
    }
}

/// The plain global-grid kernel on the CPU: periodic, no PEs, no translation. Its slots
/// follow the wafer's ([`StageSlots`]), one global field per state field.
pub struct CpuGlobal {
    kernel: Arc<dyn Kernel>,
    grid: UVec2,
    /// `slots[slot][field]`.
    slots: Vec<Vec<Vec<f32>>>,
    remaps: u64,
}

impl CpuGlobal {
    pub fn new(problem: &Problem) -> Result<Self> {
        let spec = problem.spec();
        let planes = StageSlots::count(spec.stages.len()) * spec.fields.len();
        check_memory(
            "the global grid",
            planes as u64 * problem.geometry.points() * 4,
        )?;
        let state: Vec<Vec<f32>> = problem
            .initial_state()
            .into_iter()
            .map(|f| f.data)
            .collect();
        Ok(Self {
            grid: problem.kernel.grid(),
            kernel: problem.kernel.clone(),
            slots: vec![state; StageSlots::count(spec.stages.len())],
            remaps: 0,
        })
    }

    fn remap(&mut self) {
        let spec = self.kernel.spec();
        let k = (self.remaps % spec.stages.len() as u64) as usize;
        let slots = StageSlots::of(spec.stages.len(), self.remaps);
        let mut out = std::mem::take(&mut self.slots[slots.out]);
        let (cur, base) = (&self.slots[slots.cur], &self.slots[slots.base]);
        let stage = spec.stages[k];
        match (stage.driver, self.kernel.rows3()) {
            (Driver::Rows3, Some(rule)) => global_rows3(self.grid, rule, &cur[0], &mut out[0]),
            _ => {
                let context = (&*self.kernel, k, stage.origin, spec.comm_width);
                global_points(self.grid, context, (cur, base), &mut out);
            }
        }
        self.slots[slots.out] = out;
        self.remaps += 1;
    }
}

/// A Rows3 stage on the periodic global grid.
fn global_rows3(grid: UVec2, rule: Rows3, u: &[f32], next: &mut [f32]) {
    let (nx, ny) = (grid.x as usize, grid.y as usize);
    next.par_chunks_mut(nx).enumerate().for_each(|(y, out)| {
        let rows = [(y + ny - 1) % ny, y, (y + 1) % ny].map(|r| &u[r * nx..(r + 1) * nx]);
        for (x, o) in out.iter_mut().enumerate() {
            let cols = [(x + nx - 1) % nx, x, (x + 1) % nx];
            let nb = rows.map(|r| cols.map(|c| r[c]));
            *o = (rule.point)(&rule.weights, &nb);
        }
    });
}

/// A Point stage on the periodic global grid: every point from the window at `origin`.
fn global_points(
    grid: UVec2,
    (kernel, stage, origin, w): (&dyn Kernel, usize, i32, u32),
    (cur, base): (&[Vec<f32>], &[Vec<f32>]),
    out: &mut [Vec<f32>],
) {
    let (nx, ny) = (grid.x as i64, grid.y as i64);
    let fields = cur.len();
    let rows: Vec<Vec<[f32; crate::kernels::MAX_FIELDS]>> = (0..ny)
        .into_par_iter()
        .map(|y| {
            let mut window = Window::default();
            (0..nx)
                .map(|x| {
                    for dy in 0..=w as i64 {
                        let row = (y + origin as i64 + dy).rem_euclid(ny);
                        for dx in 0..=w as i64 {
                            let col = (x + origin as i64 + dx).rem_euclid(nx);
                            let at = (row * nx + col) as usize;
                            for f in 0..fields {
                                window.cur[f][dy as usize][dx as usize] = cur[f][at];
                                window.base[f][dy as usize][dx as usize] = base[f][at];
                            }
                        }
                    }
                    kernel.point(stage, UVec2::new(x as u32, y as u32), &window)
                })
                .collect()
        })
        .collect();
    for (y, row) in rows.into_iter().enumerate() {
        for (x, values) in row.into_iter().enumerate() {
            for f in 0..fields {
                out[f][y * nx as usize + x] = values[f];
            }
        }
    }
}

impl Simulator for CpuGlobal {
    fn advance(&mut self, steps: u64) -> Result<()> {
        for _ in 0..steps * self.kernel.spec().stages.len() as u64 {
            self.remap();
        }
        Ok(())
    }

    fn step(&self) -> u64 {
        self.remaps / self.kernel.spec().stages.len() as u64
    }

    fn state(&self) -> Result<Vec<GlobalField>> {
        let slot = &self.slots[StageSlots::state(self.step())];
        Ok(slot
            .iter()
            .map(|data| GlobalField {
                nx: self.grid.x,
                ny: self.grid.y,
                data: data.clone(),
            })
            .collect())
    }

    fn describe(&self) -> String {
        "global-grid reference on the CPU".into()
    }
}

/// Refuses to allocate `bytes` when the machine reports less memory available (Linux's
/// `MemAvailable`; elsewhere nothing is checked).
fn check_memory(what: &str, bytes: u64) -> Result<()> {
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
            line.split_whitespace()
                .nth(1)?
                .parse::<u64>()
                .ok()
                .map(|kib| kib * 1024)
        });
    match available {
        Some(available) if bytes > available => Err(Error::TooLarge(format!(
            "{what} needs {} MiB on the CPU backend but only {} MiB are available: use fewer PEs or a smaller n",
            bytes.div_ceil(1 << 20),
            available >> 20
        ))),
        _ => Ok(()),
    }
}
