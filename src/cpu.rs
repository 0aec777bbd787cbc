//! The CPU backend: the emulated wafer run natively with rayon (for machines with no adapter),
//! and the plain global-grid reference kernel.

use rayon::prelude::*;

use crate::field::GlobalField;
use crate::kernels::{heat5_point, heat9_point, KernelKind, Neighbourhood, Weights};
use crate::model::{Problem, Simulator};
use crate::wafer::WaferGeometry;
use crate::{Error, Result};

/// The emulated wafer on the CPU: every PE's SRAM block, `sendrecv` then `compute` per step.
pub struct CpuWafer {
    kernel: KernelKind,
    weights: Weights,
    geometry: WaferGeometry,
    /// The SRAM before and after a step (Table 3's `x`, and `y` with the received comm layer).
    x: Vec<f32>,
    y: Vec<f32>,
    step: u64,
}

impl CpuWafer {
    /// Lays out the problem's initial field on the wafer; refuses wafers that would not fit
    /// this machine's available memory.
    pub fn new(problem: &Problem) -> Result<Self> {
        let geometry = problem.geometry;
        check_memory(
            "the emulated wafer",
            (2 * geometry.sram_cells() + 2 * geometry.points()) * 4,
        )?;
        let x = geometry.scatter(&problem.initial_field());
        Ok(Self {
            kernel: problem.kernel,
            weights: problem.weights(),
            geometry,
            y: x.clone(),
            x,
            step: 0,
        })
    }

    /// The raw SRAM of the whole wafer as Table 3 leaves it after the last step: owned cells
    /// of the current step, comm layers as received in the last `sendrecv`.
    pub fn sram(&self) -> &[f32] {
        &self.x
    }

    /// One step, a row of PEs per task so that each PE's left neighbour is still in cache. Each
    /// PE copies its block to a scratch block, receives its comm layer there (`sendrecv`),
    /// computes its owned points into `y` (`compute`) and keeps the received layer in `y`.
    fn step_once(&mut self) {
        let (g, kernel, weights, x) = (self.geometry, self.kernel, self.weights, &self.x);
        let block = g.block_cells();
        let (w, s) = (g.w() as usize, g.stride() as usize);
        let pe_row = g.pes_x as usize * block;
        self.y
            .par_chunks_mut(pe_row)
            .enumerate()
            .for_each(|(py, y_row)| {
                let mut scratch = vec![0.0; block];
                for (px, y) in y_row.chunks_mut(block).enumerate() {
                    let pe = py * g.pes_x as usize + px;
                    scratch.copy_from_slice(&x[pe * block..(pe + 1) * block]);
                    receive(&g, x, pe, &mut scratch);
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
        std::mem::swap(&mut self.x, &mut self.y);
    }
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

/// Table 3's `sendrecv` for PE `pe`: fills the comm layer of its `block` from the owned cells
/// of the PEs to its left and below in `x`. Runs of owned columns are copied whole.
fn receive(g: &WaferGeometry, x: &[f32], pe: usize, block: &mut [f32]) {
    let (w, s, n) = (g.w(), g.stride() as usize, g.n as usize);
    let coords = g.pe_coords(pe);
    let source = |cell: (u32, u32)| {
        let src = g.comm_source(coords, cell);
        g.sram_index(src.pe, src.cell.0, src.cell.1)
    };
    // The lower strip: w cells from the left, then a whole owned row, for each of w rows.
    for (i, row) in block.chunks_mut(s).take(w as usize).enumerate() {
        let i = i as u32;
        for j in 0..w {
            row[j as usize] = x[source((i, j))];
        }
        let start = source((i, w));
        row[w as usize..].copy_from_slice(&x[start..start + n]);
    }
    // The left strip: column j comes from one column of the same rows to the left.
    for j in 0..w {
        let column = source((w, j)) - w as usize * s;
        for (i, row) in block.chunks_mut(s).enumerate().skip(w as usize) {
            row[j as usize] = x[column + i * s];
        }
    }
}

impl Simulator for CpuWafer {
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
        Ok(self.geometry.gather(&self.x, self.step))
    }

    fn describe(&self) -> String {
        format!(
            "emulated wafer on the CPU ({} threads)",
            rayon::current_num_threads()
        )
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
