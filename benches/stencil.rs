//! Criterion benchmarks: the same variants as `wafer-emu bench` (emulated wafer, explicit and
//! fused, the same grid as a 2x2 cluster on one and on two devices, global kernel, CPU
//! backend, copy ceilings) on one grid, reported as point updates per second.
//! `WAFER_EMU_BENCH_GRID` sets the grid side (default 1024).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use wafer_emu::commands::bench::{variants, BenchConfig};
use wafer_emu::engine::EngineRequest;
use wafer_emu::kernels::KernelKind;

/// Steps per iteration: whole time blocks of 3 and of 5 steps, so that no step of a blocked
/// variant runs outside a block.
const STEPS: u64 = 15;

fn stencils(c: &mut Criterion) {
    let grid = std::env::var("WAFER_EMU_BENCH_GRID")
        .ok()
        .and_then(|g| g.parse().ok())
        .unwrap_or(1024);
    for kernel in KernelKind::ALL {
        let config = BenchConfig {
            kernel,
            grid,
            ns: vec![4, 8, 32],
            steps: STEPS,
            reps: 1,
            engine: EngineRequest::new(None, None).expect("engine request"),
            cpu: true,
            wafers: (2, 2),
            devices: 2,
            // Shallow water's time blocks go in registers (on a CPU adapter) up to 3 steps.
            time_block: Some(if kernel == KernelKind::Swe { 3 } else { 5 }),
            profile: false,
        };
        let (lineup, engine) =
            variants(&config, &mut |w| eprintln!("{w}")).expect("bench variants");
        let mut variants = lineup.variants;
        // The engine line (adapter and tuning) is long enough that criterion would truncate
        // the variants' names after it.
        eprintln!("{} {grid}x{grid} on {engine}", kernel.name());
        let mut group = c.benchmark_group(format!("{} {grid}x{grid}", kernel.name()));
        group.throughput(Throughput::Elements(grid as u64 * grid as u64 * STEPS));
        group.sample_size(10);
        for variant in variants.iter_mut() {
            let name = variant.name.clone();
            group.bench_function(name, |b| b.iter(|| variant.run(STEPS).expect("runs")));
        }
        group.finish();
    }
}

criterion_group!(benches, stencils);
criterion_main!(benches);
