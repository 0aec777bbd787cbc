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
    /// Current and next SRAM contents (Table 3's `x` and `y`, swapped instead of copied).
    x: Vec<f32>,
    y: Vec<f32>,
    /// The packages in flight during `sendrecv`, one slot per comm cell.
    packages: Vec<f32>,
    step: u64,
}

impl CpuWafer {
    /// Lays out the problem's initial field on the wafer; refuses wafers that would not fit
    /// this machine's available memory.
    pub fn new(problem: &Problem) -> Result<Self> {
        let geometry = problem.geometry;
        let cells =
            2 * geometry.sram_cells() + (geometry.pe_count() * geometry.comm_cells()) as u64;
        check_memory("the emulated wafer", (cells + 2 * geometry.points()) * 4)?;
        let x = geometry.scatter(&problem.initial_field());
        Ok(Self {
            kernel: problem.kernel,
            weights: problem.weights(),
            geometry,
            y: x.clone(),
            x,
            packages: vec![0.0; geometry.pe_count() * geometry.comm_cells()],
            step: 0,
        })
    }

    /// The raw SRAM of the whole wafer (`x` of Table 3).
    pub fn sram(&self) -> &[f32] {
        &self.x
    }

    /// Table 3's `sendrecv`: every PE packs what its comm layer receives from the PEs to its
    /// left and below, then unpacks it into its comm layer.
    fn sendrecv(&mut self) {
        let (g, x) = (self.geometry, &self.x);
        self.packages
            .par_chunks_mut(g.comm_cells())
            .enumerate()
            .for_each(|(pe, package)| pack(&g, x, pe, package));
        let (w, s) = (g.w() as usize, g.stride() as usize);
        self.x
            .par_chunks_mut(g.block_cells())
            .zip(self.packages.par_chunks(g.comm_cells()))
            .for_each(|(sram, package)| {
                let (lower, left) = package.split_at(w * s);
                sram[..w * s].copy_from_slice(lower);
                for (row, cells) in sram[w * s..].chunks_mut(s).zip(left.chunks(w)) {
                    row[..w].copy_from_slice(cells);
                }
            });
    }

    /// Table 3's `compute`: `y[i+w][j+w] = S(x)[i+p][j+p]`, PE-local.
    fn compute(&mut self) {
        let (g, kernel, weights) = (self.geometry, self.kernel, self.weights);
        let block = g.block_cells();
        self.y
            .par_chunks_mut(block)
            .zip(self.x.par_chunks(block))
            .for_each(|(y, x)| match kernel {
                KernelKind::Heat5 => compute_block(&g, x, y, |nb| heat5_point(&weights, nb)),
                KernelKind::Heat9 => compute_block(&g, x, y, |nb| heat9_point(&weights, nb)),
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
/// values; written with windows so that the loop carries no bounds checks.
#[inline(always)]
fn update_row(
    below: &[f32],
    mid: &[f32],
    above: &[f32],
    out: &mut [f32],
    point: &impl Fn(&Neighbourhood) -> f32,
) {
    let rows = below.windows(3).zip(mid.windows(3)).zip(above.windows(3));
    for (o, ((b, m), a)) in out.iter_mut().zip(rows) {
        *o = point(&[[b[0], b[1], b[2]], [m[0], m[1], m[2]], [a[0], a[1], a[2]]]);
    }
}

/// Gathers the comm layer of PE `pe` from the owned cells of its sources, in
/// [`WaferGeometry::comm_cell`] order: the lower strip row by row (corner included), then `w`
/// cells of each remaining row. Runs of owned columns are copied whole.
fn pack(g: &WaferGeometry, x: &[f32], pe: usize, package: &mut [f32]) {
    let (w, s) = (g.w(), g.stride() as usize);
    let coords = g.pe_coords(pe);
    let value = |cell: (u32, u32)| {
        let src = g.comm_source(coords, cell);
        x[g.sram_index(src.pe, src.cell.0, src.cell.1)]
    };
    let (lower, left) = package.split_at_mut(w as usize * s);
    for (i, row) in lower.chunks_mut(s).enumerate() {
        let i = i as u32;
        for j in 0..w {
            row[j as usize] = value((i, j));
        }
        let src = g.comm_source(coords, (i, w));
        let start = g.sram_index(src.pe, src.cell.0, w);
        row[w as usize..].copy_from_slice(&x[start..start + g.n as usize]);
    }
    for j in 0..w {
        let src = g.comm_source(coords, (w, j));
        for (i, row) in left.chunks_mut(w as usize).enumerate() {
            row[j as usize] = x[g.sram_index(src.pe, w + i as u32, src.cell.1)];
        }
    }
}

impl Simulator for CpuWafer {
    fn advance(&mut self, steps: u64) -> Result<()> {
        for _ in 0..steps {
            self.sendrecv();
            self.compute();
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
