//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};

use wafer_emu::cluster::ClusterGeometry;
use wafer_emu::engine::gpu::GpuContext;
use wafer_emu::engine::EngineRequest;
use wafer_emu::field::InitialCondition;
use wafer_emu::kernels::{HeatCoefficients, KernelKind};
use wafer_emu::model::Problem;
use wafer_emu::wafer::WaferGeometry;

/// The GPU context shared by a test binary, or `None`, said on the terminal, when no adapter is
/// found. With `WAFER_EMU_REQUIRE_GPU=1` (set by CI) a missing adapter fails the test instead.
pub fn gpu() -> Option<Arc<GpuContext>> {
    let ctx = shared_gpu();
    if ctx.is_none() {
        say_skipped(
            "no GPU adapter; Debian's mesa-vulkan-drivers and libvulkan1 give the software one \
             (WAFER_EMU_REQUIRE_GPU=1 fails instead)",
        );
    }
    ctx
}

fn shared_gpu() -> Option<Arc<GpuContext>> {
    static CTX: OnceLock<Option<Arc<GpuContext>>> = OnceLock::new();
    let ctx = CTX.get_or_init(|| {
        let found = EngineRequest::new(None, None).and_then(|request| request.open());
        match found {
            Ok((Some(ctx), _)) => {
                eprintln!("testing on {}", ctx.describe());
                Some(ctx)
            }
            Ok((None, _)) => skip("the CPU backend was chosen".into()),
            Err(e) => skip(e.to_string()),
        }
    });
    ctx.clone()
}

fn skip(why: String) -> Option<Arc<GpuContext>> {
    let required = std::env::var("WAFER_EMU_REQUIRE_GPU").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "WAFER_EMU_REQUIRE_GPU=1 but no GPU adapter: {why}"
    );
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("no GPU adapter for this test binary: {why}\n"),
    );
    None
}

/// Says on the terminal, past the test harness's capture, that the calling test skips and why,
/// and how many of this binary have so far.
pub fn say_skipped(why: &str) {
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    static SKIPPED: AtomicUsize = AtomicUsize::new(0);
    let count = SKIPPED.fetch_add(1, Ordering::Relaxed) + 1;
    let thread = std::thread::current();
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {} ({count} in this test binary): {why}",
        thread.name().unwrap_or("a test"),
    );
}

/// Whether a wafer of `pes` PEs with `n` points per PE is at least the comm width (2 points)
/// along both sides, the smallest wafer there is.
pub fn fits(pes: (u32, u32), n: u32) -> bool {
    pes.0 * n >= 2 && pes.1 * n >= 2
}

/// Heat coefficients with advection on (every weight of the stencil differs).
pub const ADVECTING: HeatCoefficients = HeatCoefficients {
    a: 0.9,
    c: 0.6,
    d: 0.3,
    e: -0.2,
    dt: 0.2,
};

/// A heat problem with advection on, random initial values (every bit matters), on one wafer.
pub fn problem(kernel: KernelKind, pes: (u32, u32), n: u32, seed: u64) -> Problem {
    cluster_problem(kernel, (1, 1), pes, n, seed)
}

/// The same on a cluster of `wafers` wafers of `pes` PEs each.
pub fn cluster_problem(
    kernel: KernelKind,
    wafers: (u32, u32),
    pes: (u32, u32),
    n: u32,
    seed: u64,
) -> Problem {
    let coefficients = ADVECTING;
    let geometry = WaferGeometry::new(pes.0, pes.1, n, 2).unwrap();
    let cluster = ClusterGeometry::new(wafers.0, wafers.1, geometry).unwrap();
    Problem::heat(
        kernel,
        coefficients,
        cluster,
        InitialCondition::Random { seed },
    )
    .unwrap()
}

/// A shallow-water problem of kernel `kind` over the 1-degree relief with random
/// perturbations (every bit matters), on a cluster of `wafers` wafers of `pes` PEs.
pub fn swe_problem(
    kind: KernelKind,
    wafers: (u32, u32),
    pes: (u32, u32),
    n: u32,
    seed: u64,
) -> Problem {
    use wafer_emu::kernels::swe::{SweConfig, SweInit};
    let geometry = WaferGeometry::new(pes.0, pes.1, n, kind.spec().comm_width).unwrap();
    let cluster = ClusterGeometry::new(wafers.0, wafers.1, geometry).unwrap();
    let config = SweConfig {
        init: SweInit::Random { seed },
        ..SweConfig::default()
    };
    let kernel = kind
        .shallow_water(config, cluster.whole().unwrap().global_size())
        .unwrap();
    Problem::new(kernel, cluster).unwrap()
}

/// The test problem of any kernel: its random initial state (every bit matters; shallow
/// water's over real relief), heat with advection on.
pub fn kernel_problem(
    kind: KernelKind,
    wafers: (u32, u32),
    pes: (u32, u32),
    n: u32,
    seed: u64,
) -> Problem {
    let geometry = WaferGeometry::new(pes.0, pes.1, n, kind.spec().comm_width).unwrap();
    let cluster = ClusterGeometry::new(wafers.0, wafers.1, geometry).unwrap();
    let mut options = kind.random_options(seed);
    options.heat = ADVECTING;
    let kernel = kind
        .configure(&options, cluster.whole().unwrap().global_size())
        .unwrap();
    Problem::new(kernel, cluster).unwrap()
}
