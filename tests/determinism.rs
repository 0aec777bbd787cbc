//! The determinism contract (docs/design.md, section 5) on one wafer: the emulated wafer
//! (explicit and fused engines, with the adapter's tuning and with a GPU's column layouts)
//! equals the plain global-grid kernel bit for bit on the same adapter, and the CPU backend
//! within a bound.

mod common;

use std::sync::Arc;
use wafer_emu::engine::cpu::{CpuCluster, CpuGlobal};

use wafer_emu::engine::gpu::{GpuCluster, GpuContext, GpuGlobal, Placement, Tuning};
use wafer_emu::kernels::KernelKind;
use wafer_emu::model::Simulator;

const SHAPES: [(u32, u32); 4] = [(1, 1), (2, 2), (3, 5), (8, 8)];
const NS: [u32; 4] = [1, 2, 3, 8];
/// Checkpoints after 0, 1, 7 and 64 steps.
const CHECKPOINTS: [u64; 4] = [0, 1, 7, 64];

/// The explicit and the fused engine on `problem` (heat `kernel` on `pes` PEs of `n` points)
/// against the global kernel.
fn assert_engines_equal_global(
    ctx: &Arc<GpuContext>,
    kernel: KernelKind,
    (pes, n): ((u32, u32), u32),
    seed: u64,
) {
    let problem = common::problem(kernel, pes, n, seed);
    for fused in [false, true] {
        let placement = Placement {
            fused,
            ..Placement::default()
        };
        let mut wafer = GpuCluster::new(ctx.clone(), &problem, &placement).unwrap();
        let mut global = GpuGlobal::new(ctx.clone(), &problem).unwrap();
        let (name, (x, y)) = (kernel.name(), pes);
        let what = format!(
            "{name} (fused {fused}) on {x}x{y} PEs, n = {n}, tuning {}",
            ctx.tuning.line()
        );
        assert_same_bits(&mut wafer, &mut global, &what);
    }
}

fn bits(field: &wafer_emu::field::GlobalField) -> Vec<u32> {
    field.data.iter().map(|v| v.to_bits()).collect()
}

/// Runs two simulators side by side and compares bits at every checkpoint.
fn assert_same_bits(a: &mut dyn Simulator, b: &mut dyn Simulator, what: &str) {
    for &t in &CHECKPOINTS {
        a.advance(t - a.step()).unwrap();
        b.advance(t - b.step()).unwrap();
        let (fa, fb) = (a.field().unwrap(), b.field().unwrap());
        let diff = bits(&fa)
            .iter()
            .zip(bits(&fb))
            .filter(|(x, y)| *x != y)
            .count();
        assert_eq!(diff, 0, "{what}: {diff} points differ after {t} steps");
    }
}

/// The adapter's own context, and the same device shaped as a GPU (sendrecv by cell, direct
/// reads by single columns) with the wafer's compute by single columns, and with the fused
/// engine's tiles by single columns.
fn contexts() -> Vec<Arc<GpuContext>> {
    let Some(ctx) = common::gpu() else {
        return vec![];
    };
    let gpu = Tuning::gpu(ctx.adapter.limits.max_compute_workgroup_storage_size);
    let columns = ctx.retuned(Tuning {
        wafer_cols: 1,
        ..gpu
    });
    let tiles = ctx.retuned(Tuning {
        fused_direct: false,
        fused_cols: 1,
        ..gpu
    });
    vec![ctx, columns, tiles]
}

#[test]
fn gpu_wafer_equals_gpu_global_bit_for_bit() {
    for ctx in contexts() {
        for kernel in KernelKind::HEAT {
            for pes in SHAPES {
                for n in NS.into_iter().filter(|&n| common::fits(pes, n)) {
                    assert_engines_equal_global(&ctx, kernel, (pes, n), 7);
                }
            }
        }
    }
}

/// Several column blocks (n > 8) and row blocks (n > 32) per PE in the compute dispatch.
#[test]
fn gpu_wafer_equals_gpu_global_with_several_blocks_per_pe() {
    for ctx in contexts() {
        for kernel in KernelKind::HEAT {
            for case in [((2, 2), 9), ((3, 1), 17), ((2, 3), 40)] {
                assert_engines_equal_global(&ctx, kernel, case, 5);
            }
        }
    }
}

/// Over 65535 workgroups in `sendrecv`: the dispatch is split into two dimensions.
#[test]
fn gpu_wafer_equals_gpu_global_with_a_two_dimensional_dispatch() {
    let Some(ctx) = common::gpu() else { return };
    let problem = common::problem(KernelKind::Heat9, (1024, 1100), 1, 9);
    let mut wafer = GpuCluster::new(ctx.clone(), &problem, &Placement::default()).unwrap();
    let mut global = GpuGlobal::new(ctx.clone(), &problem).unwrap();
    wafer.advance(3).unwrap();
    global.advance(3).unwrap();
    assert_eq!(
        bits(&wafer.field().unwrap()),
        bits(&global.field().unwrap())
    );
}

#[test]
fn cpu_wafer_equals_cpu_global_bit_for_bit() {
    for kernel in KernelKind::HEAT {
        for pes in SHAPES {
            for n in NS.into_iter().filter(|&n| common::fits(pes, n)) {
                let problem = common::problem(kernel, pes, n, 11);
                let what = format!("{} on {}x{} PEs, n = {n}", kernel.name(), pes.0, pes.1);
                assert_same_bits(
                    &mut CpuCluster::new(&problem).unwrap(),
                    &mut CpuGlobal::new(&problem).unwrap(),
                    &what,
                );
            }
        }
    }
}

/// GPU against CPU: drivers may contract `a * b + c` into a fused multiply-add, which changes
/// one rounding per operation. Every weight here is in [0, 1) and they sum to 1, so each step
/// adds at most (flops per point) * eps * max|u| and keeps earlier errors from growing. Bound
/// after T steps: |gpu - cpu| <= T * 17 * 2^-24 * max|u0|.
#[test]
fn gpu_wafer_agrees_with_cpu_backend_within_bound() {
    let Some(ctx) = common::gpu() else { return };
    let steps = 64;
    for kernel in KernelKind::HEAT {
        let problem = common::problem(kernel, (3, 5), 8, 3);
        let mut gpu = GpuCluster::new(ctx.clone(), &problem, &Placement::default()).unwrap();
        let mut cpu = CpuCluster::new(&problem).unwrap();
        gpu.advance(steps).unwrap();
        cpu.advance(steps).unwrap();
        let (fg, fc) = (gpu.field().unwrap(), cpu.field().unwrap());
        let max_u0 = problem.initial_state()[0].range().1 as f64;
        let bound = steps as f64 * 17.0 * f64::powi(2.0, -24) * max_u0;
        let worst = fg
            .data
            .iter()
            .zip(&fc.data)
            .map(|(a, b)| (a - b).abs() as f64)
            .fold(0.0, f64::max);
        assert!(
            worst <= bound,
            "{}: GPU and CPU differ by {worst:e} > {bound:e}",
            kernel.name()
        );
        eprintln!(
            "{}: max |gpu - cpu| = {worst:e} (bound {bound:e})",
            kernel.name()
        );
    }
}
