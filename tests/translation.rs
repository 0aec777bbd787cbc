//! Domain translation itself: where every grid point sits after T steps (docs/design.md, section 3),
//! and the direction data moves in `sendrecv`.

mod common;

use glam::UVec2;
use wafer_emu::engine::cpu::CpuCluster;
use wafer_emu::engine::gpu::{GpuCluster, Placement};
use wafer_emu::field::InitialCondition;
use wafer_emu::kernels::{HeatCoefficients, KernelKind};
use wafer_emu::model::{Problem, Simulator};
use wafer_emu::wafer::WaferGeometry;

/// The identity stencil (all coefficients zero) on points that hold their own index: the raw
/// SRAM then shows which global point each owned cell holds.
fn tracer(pes: (u32, u32), n: u32) -> Problem {
    let still = HeatCoefficients {
        a: 0.0,
        c: 0.0,
        d: 0.0,
        e: 0.0,
        dt: 1.0,
    };
    let geometry = WaferGeometry::new(pes.0, pes.1, n, 2).unwrap();
    Problem::heat(KernelKind::Heat5, still, geometry, InitialCondition::Index).unwrap()
}

/// Checks every owned cell against `X in [PX*n - p*t, PX*n - p*t + n)` (mod the global size),
/// written out here independently of the library's own mapping.
fn assert_owned_ranges(g: &WaferGeometry, sram: &[f32], t: u64) {
    let UVec2 { x: nx, y: ny } = g.global_size();
    let w = g.w();
    for pe in 0..g.pe_count() {
        let (px, py) = ((pe as u32) % g.pes_x, (pe as u32) / g.pes_x);
        let x0 = (px as i64 * g.n as i64 - t as i64).rem_euclid(nx as i64);
        let y0 = (py as i64 * g.n as i64 - t as i64).rem_euclid(ny as i64);
        for i in 0..g.n {
            for j in 0..g.n {
                let x = (x0 + j as i64) % nx as i64;
                let y = (y0 + i as i64) % ny as i64;
                let held = sram[g.sram_index(pe, UVec2::new(j, i) + w)];
                assert_eq!(
                    held,
                    (y * nx as i64 + x) as f32,
                    "PE ({px}, {py}) cell ({i}, {j}) after {t} steps"
                );
            }
        }
        assert_eq!(
            g.owned_origin(UVec2::new(px, py), t),
            UVec2::new(x0 as u32, y0 as u32)
        );
    }
}

#[test]
fn owned_ranges_follow_the_design_formula_on_cpu() {
    for (pes, n) in [((2, 2), 1), ((3, 5), 2), ((4, 2), 3), ((2, 3), 8)] {
        let problem = tracer(pes, n);
        let mut wafer = CpuCluster::new(&problem).unwrap();
        for t in [0, 1, 5, 13, 40] {
            wafer.advance(t - wafer.step()).unwrap();
            assert_owned_ranges(&problem.geometry, &wafer.sram(), t);
        }
    }
}

#[test]
fn owned_ranges_follow_the_design_formula_on_gpu() {
    let Some(ctx) = common::gpu() else { return };
    for (pes, n) in [((2, 2), 1), ((3, 5), 2), ((4, 2), 3), ((2, 3), 8)] {
        let problem = tracer(pes, n);
        let mut wafer = GpuCluster::new(ctx.clone(), &problem, &Placement::default()).unwrap();
        for t in [0, 1, 5, 13, 40] {
            wafer.advance(t - wafer.step()).unwrap();
            assert_owned_ranges(&problem.geometry, &wafer.sram().unwrap(), t);
        }
    }
}

/// Checks every comm cell against the point `sendrecv` must have put there when it last ran,
/// at step `s`: the owned point with the same frame coordinate, `X = PX*n + j - w - p*s`.
fn assert_comm_layers(g: &WaferGeometry, sram: &[f32], s: u64, what: &str) {
    let UVec2 { x: nx, y: ny } = g.global_size();
    let frame = |pe: u32, m: u32, size: u32| {
        (pe as i64 * g.n as i64 + m as i64 - g.w() as i64 - s as i64).rem_euclid(size as i64)
    };
    for pe in 0..g.pe_count() {
        let UVec2 { x: px, y: py } = g.pe_coords(pe);
        for k in 0..g.comm_cells() as u32 {
            let cell = g.comm_cell(k);
            let (i, j) = (cell.y, cell.x);
            let point = frame(py, i, ny) * nx as i64 + frame(px, j, nx);
            let held = sram[g.sram_index(pe, cell)];
            assert_eq!(
                held, point as f32,
                "{what}: PE ({px}, {py}) comm cell ({i}, {j})"
            );
        }
    }
}

/// The comm layers hold exactly the points `sendrecv` must deliver, on both backends. The CPU
/// keeps Table 3's SRAM (the layer received in the last step); the GPU swaps `x` and `y`
/// instead of copying, so its current buffer holds the layer received the step before.
#[test]
fn comm_layers_hold_the_points_sendrecv_delivers() {
    let shapes = [((2, 2), 1), ((3, 5), 1), ((3, 2), 2), ((2, 2), 9)];
    for (pes, n) in shapes {
        let problem = tracer(pes, n);
        let mut cpu = CpuCluster::new(&problem).unwrap();
        for t in [1, 2, 7] {
            cpu.advance(t - cpu.step()).unwrap();
            assert_comm_layers(
                &problem.geometry,
                &cpu.sram(),
                t - 1,
                &format!("CPU {pes:?} n = {n} t = {t}"),
            );
        }
    }
    let Some(ctx) = common::gpu() else { return };
    for (pes, n) in shapes {
        let problem = tracer(pes, n);
        let mut gpu = GpuCluster::new(ctx.clone(), &problem, &Placement::default()).unwrap();
        for t in [2, 3, 8] {
            gpu.advance(t - gpu.step()).unwrap();
            let what = format!("GPU {pes:?} n = {n} t = {t}");
            assert_comm_layers(&problem.geometry, &gpu.sram().unwrap(), t - 2, &what);
        }
    }
}

/// Every comm cell is filled from an owned cell of a PE to its left and/or below (at most
/// ceil(w/n) hops), never from the right or above: data moves only right and up, so no PE
/// writes into a left or lower neighbour. Each PE's compute writes only its own block.
#[test]
fn sendrecv_only_moves_data_right_and_up() {
    for (pes, n) in [
        ((2, 2), 1),
        ((3, 5), 1),
        ((3, 5), 2),
        ((4, 4), 3),
        ((2, 2), 8),
    ] {
        let g = WaferGeometry::new(pes.0, pes.1, n, 2).unwrap();
        let max_hops = g.w().div_ceil(n);
        for pe in 0..g.pe_count() {
            let UVec2 { x: px, y: py } = g.pe_coords(pe);
            for k in 0..g.comm_cells() as u32 {
                let cell = g.comm_cell(k);
                let (i, j) = (cell.y, cell.x);
                let src = g.comm_source(UVec2::new(px, py), cell);
                assert!(
                    src.hops_right + src.hops_up > 0,
                    "cell ({i}, {j}) receives from itself"
                );
                assert_eq!(
                    src.hops_right > 0,
                    j < g.w(),
                    "cell ({i}, {j}) of ({px}, {py})"
                );
                assert_eq!(
                    src.hops_up > 0,
                    i < g.w(),
                    "cell ({i}, {j}) of ({px}, {py})"
                );
                assert!(src.hops_right <= max_hops && src.hops_up <= max_hops);
                let expected_x = (px + pes.0 * max_hops - src.hops_right) % pes.0;
                let expected_y = (py + pes.1 * max_hops - src.hops_up) % pes.1;
                assert_eq!(g.pe_coords(src.pe), UVec2::new(expected_x, expected_y));
                let (si, sj) = (src.cell.y, src.cell.x);
                assert!(
                    si >= g.w() && sj >= g.w(),
                    "source ({si}, {sj}) is not an owned cell"
                );
            }
        }
    }
}
