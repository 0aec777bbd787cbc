//! Physics against analytic solutions: a Fourier mode evolves at its exact discrete rate.

mod common;

use wafer_emu::engine::cpu::CpuCluster;
use wafer_emu::engine::gpu::{GpuCluster, Placement};
use wafer_emu::field::{mode_phase, GlobalField, InitialCondition};
use wafer_emu::kernels::{HeatCoefficients, KernelKind};
use wafer_emu::model::{Problem, Simulator};
use wafer_emu::wafer::WaferGeometry;

const STEPS: u64 = 50;
const MODE: (u32, u32) = (2, 3);

const COEFFICIENTS: HeatCoefficients = HeatCoefficients {
    a: 0.9,
    c: 0.6,
    d: 0.4,
    e: -0.3,
    dt: 0.25,
};

fn mode_problem(kernel: KernelKind) -> Problem {
    let coefficients = COEFFICIENTS;
    let geometry = WaferGeometry::new(3, 5, 8, 2).unwrap();
    let init = InitialCondition::Mode {
        kx: MODE.0,
        ky: MODE.1,
    };
    Problem::heat(kernel, coefficients, geometry, init).unwrap()
}

/// cos(k.x) becomes |lambda|^T cos(k.x + T arg lambda), with the amplification factor
/// lambda = sum over the stencil of w(dx, dy) exp(i k.(dx, dy)), computed in f64.
fn assert_exact_rate(problem: &Problem, field: &GlobalField) {
    let glam::UVec2 { x: nx, y: ny } = problem.geometry.global_size();
    let w = match problem.spec().kind {
        KernelKind::Heat5 => COEFFICIENTS.five_point(),
        _ => COEFFICIENTS.nine_point(),
    };
    let (kx, ky) = (
        std::f64::consts::TAU * MODE.0 as f64 / nx as f64,
        std::f64::consts::TAU * MODE.1 as f64 / ny as f64,
    );
    let (mut re, mut im) = (0.0, 0.0);
    for (dy, row) in w.rows.iter().enumerate() {
        for (dx, &weight) in row.iter().enumerate() {
            let phase = kx * (dx as f64 - 1.0) + ky * (dy as f64 - 1.0);
            re += weight as f64 * phase.cos();
            im += weight as f64 * phase.sin();
        }
    }
    let (gain, turn) = (
        (re * re + im * im).sqrt().powi(STEPS as i32),
        im.atan2(re) * STEPS as f64,
    );
    assert!(gain < 0.9, "the mode should decay visibly (gain {gain})");
    for y in 0..ny {
        for x in 0..nx {
            let exact = gain * (mode_phase(MODE.0, MODE.1, nx, ny, x, y) + turn).cos();
            let got = field.at(x, y) as f64;
            assert!(
                (got - exact).abs() < 2e-5,
                "({x}, {y}): {got} vs exact {exact}"
            );
        }
    }
}

#[test]
fn fourier_mode_decays_at_the_exact_discrete_rate_on_cpu() {
    for kernel in KernelKind::HEAT {
        let problem = mode_problem(kernel);
        let mut wafer = CpuCluster::new(&problem).unwrap();
        wafer.advance(STEPS).unwrap();
        assert_exact_rate(&problem, &wafer.field().unwrap());
    }
}

#[test]
fn fourier_mode_decays_at_the_exact_discrete_rate_on_gpu() {
    let Some(ctx) = common::gpu() else { return };
    for kernel in KernelKind::HEAT {
        let problem = mode_problem(kernel);
        let mut wafer = GpuCluster::new(ctx.clone(), &problem, &Placement::default()).unwrap();
        wafer.advance(STEPS).unwrap();
        assert_exact_rate(&problem, &wafer.field().unwrap());
    }
}

/// The weights sum to one, so the total heat is conserved up to rounding.
#[test]
fn total_heat_is_conserved() {
    for kernel in KernelKind::HEAT {
        let problem = common::problem(kernel, (4, 3), 8, 5);
        let before = problem.initial_state()[0].total();
        let mut wafer = CpuCluster::new(&problem).unwrap();
        wafer.advance(200).unwrap();
        let after = wafer.field().unwrap().total();
        assert!(
            ((after - before) / before).abs() < 1e-4,
            "{}: {before} -> {after}",
            kernel.name()
        );
    }
}

/// The wave kernel from a standing mode at rest, on an odd grid: `u` follows the scheme's
/// own dispersion relation (`wave::mode_amplitude`), so the only error is rounding.
fn assert_wave_mode(wafer: &mut dyn Simulator, problem: &Problem) {
    let glam::UVec2 { x: nx, y: ny } = problem.geometry.global_size();
    let steps = 4 * STEPS;
    wafer.advance(steps).unwrap();
    let u = wafer.field().unwrap();
    let amplitude =
        wafer_emu::kernels::wave::mode_amplitude(MODE.0, MODE.1, (nx, ny).into(), steps);
    assert!(
        amplitude.abs() < 0.9,
        "the mode should have turned ({amplitude})"
    );
    for y in 0..ny {
        for x in 0..nx {
            let exact = amplitude * mode_phase(MODE.0, MODE.1, nx, ny, x, y).cos();
            let got = u.at(x, y) as f64;
            assert!(
                (got - exact).abs() < 1e-4,
                "({x}, {y}): {got} vs exact {exact}"
            );
        }
    }
}

fn wave_problem() -> Problem {
    let options = wafer_emu::kernels::KernelOptions {
        init: Some(format!("mode:{},{}", MODE.0, MODE.1)),
        ..Default::default()
    };
    let geometry = WaferGeometry::new(3, 5, 7, 2).unwrap();
    let kernel = KernelKind::Wave
        .configure(&options, geometry.global_size())
        .unwrap();
    Problem::new(kernel, geometry).unwrap()
}

#[test]
fn a_standing_wave_turns_at_the_exact_discrete_rate_on_cpu() {
    let problem = wave_problem();
    assert_wave_mode(&mut CpuCluster::new(&problem).unwrap(), &problem);
}

#[test]
fn a_standing_wave_turns_at_the_exact_discrete_rate_on_gpu() {
    let Some(ctx) = common::gpu() else { return };
    let problem = wave_problem();
    let mut wafer = GpuCluster::new(ctx, &problem, &Placement::default()).unwrap();
    assert_wave_mode(&mut wafer, &problem);
}
