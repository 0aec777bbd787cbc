//! The CPU backend: the emulated cluster run natively with rayon (for machines with no
//! adapter), and the plain global-grid reference kernel.

use std::collections::VecDeque;

use rayon::prelude::*;

use crate::cluster::{package, ClusterGeometry, Direction, LinkId, LinkStats, Scheduler};

use crate::field::GlobalField;
use crate::kernels::{heat5_point, heat9_point, KernelKind, Neighbourhood, Weights};
use crate::model::{Problem, Simulator};
use crate::wafer::WaferGeometry;
use crate::{Error, Result};

/// The emulated cluster on the CPU: every wafer's SRAM blocks, the links as queues of
/// packages, and the same schedule as the GPU (`cluster::schedule`). A 1x1 cluster is the
/// single wafer, its links joining its opposite edges.
pub struct CpuCluster {
    kernel: KernelKind,
    weights: Weights,
    cluster: ClusterGeometry,
    /// Each wafer's SRAM before and after a step (Table 3's `x`, and `y` with the received
    /// comm layer).
    x: Vec<Vec<f32>>,
    y: Vec<Vec<f32>>,
    /// Packages sent and not yet used, by dense link index.
    links: Vec<VecDeque<Vec<f32>>>,
    scheduler: Scheduler,
    step: u64,
    /// Set when an `advance` failed part way: the wafers are then at different steps.
    failed: bool,
}

impl CpuCluster {
    /// Lays out the problem's initial field on the wafers; refuses clusters that would not
    /// fit this machine's available memory.
    pub fn new(problem: &Problem) -> Result<Self> {
        let c = problem.cluster;
        check_memory(
            "the emulated cluster",
            (2 * c.sram_cells() + 2 * problem.geometry.points()) * 4,
        )?;
        let specs = problem.links.resolve(&c)?;
        let scheduler = Scheduler::new(c, &specs);
        scheduler.preflight()?;
        let field = problem.initial_field();
        let x = (0..c.count())
            .map(|k| c.scatter(&field, &[k]))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            kernel: problem.kernel,
            weights: problem.weights(),
            cluster: c,
            y: x.clone(),
            x,
            links: vec![VecDeque::new(); specs.len()],
            scheduler,
            step: 0,
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

    /// The raw SRAM of every wafer, wafer-major, as Table 3 leaves it after the last step:
    /// owned cells of the current step, comm layers as received in the last `sendrecv`.
    pub fn sram(&self) -> Vec<f32> {
        self.x.concat()
    }
}

/// One step of a wafer of the cluster `c` from its SRAM `x` into `y` (then swapped), with the
/// packages from the left and from below; a row of PEs per task so that each PE's left
/// neighbour is still in cache. Each PE copies its block to a scratch block, receives its comm
/// layer there (`sendrecv`), computes its owned points into `y` (`compute`) and keeps the
/// received layer in `y`.
fn step_wafer(
    c: &ClusterGeometry,
    (kernel, weights): (KernelKind, Weights),
    (x, y): (&mut Vec<f32>, &mut Vec<f32>),
    [left, below]: &[Vec<f32>; 2],
) {
    let g = c.wafer;
    let block = g.block_cells();
    let (w, s) = (g.w() as usize, g.stride() as usize);
    let source = &*x;
    y.par_chunks_mut(g.pes_x as usize * block)
        .enumerate()
        .for_each(|(py, y_row)| {
            let mut scratch = vec![0.0; block];
            for (px, y) in y_row.chunks_mut(block).enumerate() {
                let pe = py * g.pes_x as usize + px;
                scratch.copy_from_slice(&source[pe * block..(pe + 1) * block]);
                package::receive(c, source, pe, &mut scratch, left, below);
                match kernel {
                    KernelKind::Heat5 => {
                        compute_block(&g, &scratch, y, |nb| heat5_point(&weights, nb))
                    }
                    KernelKind::Heat9 => {
                        compute_block(&g, &scratch, y, |nb| heat9_point(&weights, nb))
                    }
                }
                y[..w * s].copy_from_slice(&scratch[..w * s]);
                for (out, row) in y[w * s..].chunks_mut(s).zip(scratch[w * s..].chunks(s)) {
                    out[..w].copy_from_slice(&row[..w]);
                }
            }
        });
    std::mem::swap(x, y);
}

/// One PE's compute over its `n x n` owned points.
#[inline(always)]
fn compute_block(
    g: &WaferGeometry,
    x: &[f32],
    y: &mut [f32],
    point: impl Fn(&Neighbourhood) -> f32,
) {
    let (s, n, w, p) = (
        g.stride() as usize,
        g.n as usize,
        g.w() as usize,
        g.p as usize,
    );
    for i in 0..n {
        // Rows i+p-1 ..= i+p+1 from column p-1: n + 2 values each.
        let row = |r: usize| &x[r * s + p - 1..r * s + p + 1 + n];
        let out = &mut y[(i + w) * s + w..(i + w) * s + w + n];
        update_row(row(i + p - 1), row(i + p), row(i + p + 1), out, &point);
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

impl Simulator for CpuCluster {
    fn advance(&mut self, steps: u64) -> Result<()> {
        self.check_usable()?;
        let target = self.step + steps;
        let c = self.cluster;
        while let Some(round) = self
            .scheduler
            .next_round(target)
            .inspect_err(|_| self.failed = true)?
        {
            for &(k, _) in &round.up {
                let package = package::pack_up(&c, &self.x[k]);
                self.links[LinkId {
                    from: k,
                    dir: Direction::Up,
                }
                .index()]
                .push_back(package);
            }
            for &(k, _) in &round.right {
                let below = &self.links[c.incoming(k, Direction::Up).index()][0];
                let package = package::pack_right(&c, &self.x[k], below);
                let link = LinkId {
                    from: k,
                    dir: Direction::Right,
                }
                .index();
                self.links[link].push_back(package);
            }
            // The stepping wafers run in parallel, each with its two packages.
            let mut inputs: Vec<Option<[Vec<f32>; 2]>> = vec![None; c.count()];
            for &(k, _) in &round.step {
                inputs[k] = Some(Direction::ALL.map(|dir| {
                    let link = c.incoming(k, dir).index();
                    self.links[link]
                        .pop_front()
                        .expect("the schedule waited for it")
                }));
            }
            let rule = (self.kernel, self.weights);
            self.x
                .par_iter_mut()
                .zip(self.y.par_iter_mut())
                .zip(&inputs)
                .for_each(|(sram, packages)| {
                    if let Some(packages) = packages {
                        step_wafer(&c, rule, sram, packages);
                    }
                });
        }
        self.step = target;
        Ok(())
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn field(&self) -> Result<GlobalField> {
        self.check_usable()?;
        let (nx, ny) = self.cluster.whole()?.global_size();
        let mut field = GlobalField::zeros(nx, ny);
        let all: Vec<usize> = (0..self.cluster.count()).collect();
        self.cluster
            .gather_into(&mut field, &self.sram(), &all, self.step);
        Ok(field)
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

/// The plain global-grid kernel on the CPU: periodic, no PEs, no translation.
pub struct CpuGlobal {
    kernel: KernelKind,
    weights: Weights,
    u: GlobalField,
    next: Vec<f32>,
    step: u64,
}

impl CpuGlobal {
    pub fn new(problem: &Problem) -> Result<Self> {
        check_memory("the global grid", 3 * problem.geometry.points() * 4)?;
        let u = problem.initial_field();
        Ok(Self {
            kernel: problem.kernel,
            weights: problem.weights(),
            next: u.data.clone(),
            u,
            step: 0,
        })
    }

    fn step_once(&mut self) {
        let (nx, ny) = (self.u.nx as usize, self.u.ny as usize);
        let (u, kernel, weights) = (&self.u.data, self.kernel, self.weights);
        self.next
            .par_chunks_mut(nx)
            .enumerate()
            .for_each(|(y, out)| {
                let rows = [(y + ny - 1) % ny, y, (y + 1) % ny].map(|r| &u[r * nx..(r + 1) * nx]);
                for (x, o) in out.iter_mut().enumerate() {
                    let cols = [(x + nx - 1) % nx, x, (x + 1) % nx];
                    let nb = rows.map(|r| cols.map(|c| r[c]));
                    *o = kernel.point(&weights, &nb);
                }
            });
        std::mem::swap(&mut self.u.data, &mut self.next);
    }
}

impl Simulator for CpuGlobal {
    fn advance(&mut self, steps: u64) -> Result<()> {
        for _ in 0..steps {
            self.step_once();
        }
        self.step += steps;
        Ok(())
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn field(&self) -> Result<GlobalField> {
        Ok(self.u.clone())
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
