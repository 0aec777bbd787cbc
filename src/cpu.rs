//! The CPU backend: the emulated wafer run natively with rayon (for machines with no adapter),
//! and the plain global-grid reference kernel.

use rayon::prelude::*;

use crate::field::GlobalField;
use crate::kernels::{heat5_point, heat9_point, KernelKind, Neighbourhood, Weights};
use crate::model::{Problem, Simulator};
use crate::wafer::WaferGeometry;
use crate::Result;

/// The emulated wafer on the CPU: every PE's SRAM block, `sendrecv` then `compute` per step.
pub struct CpuWafer {
    kernel: KernelKind,
    weights: Weights,
    geometry: WaferGeometry,
    /// Current and next SRAM contents (Table 3's `x` and `y`, swapped instead of copied).
    x: Vec<f32>,
    y: Vec<f32>,
    /// For every comm cell of every PE, the SRAM index of the owned cell it receives.
    sources: Vec<u32>,
    /// The packages in flight during `sendrecv`, one slot per comm cell.
    packages: Vec<f32>,
    step: u64,
}

impl CpuWafer {
    /// Lays out the problem's initial field on the wafer.
    pub fn new(problem: &Problem) -> Self {
        let geometry = problem.geometry;
        let x = geometry.scatter(&problem.initial_field());
        let sources = comm_sources(&geometry);
        Self {
            kernel: problem.kernel,
            weights: problem.weights(),
            geometry,
            y: x.clone(),
            x,
            packages: vec![0.0; sources.len()],
            sources,
            step: 0,
        }
    }

    /// The raw SRAM of the whole wafer (`x` of Table 3).
    pub fn sram(&self) -> &[f32] {
        &self.x
    }

    /// Table 3's `sendrecv`: every comm cell receives the owned cell that the geometry names.
    fn sendrecv(&mut self) {
        let x = &self.x;
        self.packages
            .par_iter_mut()
            .zip(self.sources.par_iter())
            .with_min_len(4096)
            .for_each(|(slot, &src)| *slot = x[src as usize]);
        let (g, block) = (self.geometry, self.geometry.block_cells());
        let comm = g.comm_cells();
        self.x
            .par_chunks_mut(block)
            .zip(self.packages.par_chunks(comm))
            .for_each(|(sram, package)| {
                for (k, &v) in package.iter().enumerate() {
                    let (i, j) = g.comm_cell(k as u32);
                    sram[(i * g.stride() + j) as usize] = v;
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
fn compute_block(g: &WaferGeometry, x: &[f32], y: &mut [f32], point: impl Fn(&Neighbourhood) -> f32) {
    let (s, w, p) = (g.stride() as usize, g.w() as usize, g.p as usize);
    for i in 0..g.n as usize {
        let rows = [i + p - 1, i + p, i + p + 1].map(|r| &x[r * s..(r + 1) * s]);
        let out = &mut y[(i + w) * s + w..(i + w) * s + s];
        for (j, o) in out.iter_mut().enumerate() {
            let c = j + p;
            let nb = rows.map(|r| [r[c - 1], r[c], r[c + 1]]);
            *o = point(&nb);
        }
    }
}

/// The `sendrecv` source index of every comm cell, PE by PE in [`WaferGeometry::comm_cell`]
/// order.
fn comm_sources(g: &WaferGeometry) -> Vec<u32> {
    (0..g.pe_count())
        .flat_map(|pe| (0..g.comm_cells() as u32).map(move |k| (pe, k)))
        .map(|(pe, k)| {
            let src = g.comm_source(g.pe_coords(pe), g.comm_cell(k));
            g.sram_index(src.pe, src.cell.0, src.cell.1) as u32
        })
        .collect()
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
        format!("emulated wafer on the CPU ({} threads)", rayon::current_num_threads())
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
    pub fn new(problem: &Problem) -> Self {
        let u = problem.initial_field();
        Self {
            kernel: problem.kernel,
            weights: problem.weights(),
            next: u.data.clone(),
            u,
            step: 0,
        }
    }

    fn step_once(&mut self) {
        let (nx, ny) = (self.u.nx as usize, self.u.ny as usize);
        let (u, kernel, weights) = (&self.u.data, self.kernel, self.weights);
        self.next.par_chunks_mut(nx).enumerate().for_each(|(y, out)| {
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
