//! The determinism contract (docs/design.md, section 5) on clusters: wafers joined by delayed,
//! bounded links, on one device or several, equal the plain global-grid kernel bit for bit; a
//! cluster that cannot progress says which wafer, link and step; traffic only flows right and
//! up.

mod common;

use std::sync::Arc;
use std::time::Duration;

use wafer_emu::cluster::package::{pack_right, pack_up};
use wafer_emu::cluster::{Direction, LinkConfig, LinkSpec, LinkStats};
use wafer_emu::engine::cpu::{CpuCluster, CpuGlobal};
use wafer_emu::engine::gpu::constants::Pages;
use wafer_emu::engine::gpu::{
    CopyOrder, DirectGrid, GpuCluster, GpuContext, GpuGlobal, Placement, Tuning,
};
use wafer_emu::error::Error;
use wafer_emu::kernels::KernelKind;
use wafer_emu::model::{Problem, Simulator};

fn bits(sim: &dyn Simulator) -> Vec<u32> {
    let field = sim.field().unwrap();
    field.data.iter().map(|v| v.to_bits()).collect()
}

fn placement(devices: u32) -> Placement {
    Placement {
        devices,
        ..Placement::default()
    }
}

/// A small deterministic generator for the random cases.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Runs two engines to each checkpoint (several `advance` calls) and compares bits.
fn assert_same_bits(a: &mut dyn Simulator, b: &mut dyn Simulator, checkpoints: &[u64], what: &str) {
    for &t in checkpoints {
        a.advance(t - a.step()).unwrap();
        b.advance(t - b.step()).unwrap();
        let (x, y) = (bits(a), bits(b));
        let differ = x.iter().zip(&y).filter(|(p, q)| p != q).count();
        assert_eq!(differ, 0, "{what}: {differ} points differ after {t} steps");
    }
}

/// The GPU cluster against the GPU global kernel; returns the link statistics.
fn assert_cluster_equals_global(
    ctx: &Arc<GpuContext>,
    problem: &Problem,
    placement: &Placement,
    checkpoints: &[u64],
    what: &str,
) -> Vec<LinkStats> {
    let mut cluster = GpuCluster::new(ctx.clone(), problem, placement).unwrap();
    let mut global = GpuGlobal::new(ctx.clone(), problem).unwrap();
    assert_same_bits(&mut cluster, &mut global, checkpoints, what);
    cluster.link_stats()
}

/// The same cluster on the CPU backend: equal to the CPU global kernel bit for bit, and its
/// links, following the same schedule, count exactly what the GPU's counted.
fn assert_cpu_cluster_agrees(
    problem: &Problem,
    checkpoints: &[u64],
    gpu: &[LinkStats],
    what: &str,
) {
    let mut cluster = CpuCluster::new(problem).unwrap();
    let mut global = CpuGlobal::new(problem).unwrap();
    assert_same_bits(
        &mut cluster,
        &mut global,
        checkpoints,
        &format!("CPU {what}"),
    );
    let strip = |stats: &[LinkStats]| -> Vec<LinkStats> {
        stats
            .iter()
            .map(|s| LinkStats {
                wait_ms: 0.0,
                ..s.clone()
            })
            .collect()
    };
    assert_eq!(strip(&cluster.link_stats().unwrap()), strip(gpu), "{what}");
}

#[test]
fn clusters_equal_the_global_kernel_for_every_shape_delay_capacity_and_device_count() {
    let Some(ctx) = common::gpu() else { return };
    let shapes = [(1, 1), (1, 3), (3, 1), (2, 2), (2, 3), (3, 2), (4, 4)];
    let mut case = 0u32;
    let mut piled_up = false;
    for kernel in KernelKind::HEAT {
        for wafers in shapes {
            let problem = common::cluster_problem(kernel, wafers, (3, 2), 2, 3);
            let count = wafers.0 * wafers.1;
            for delay in 0..=5 {
                case += 1;
                let capacity = 1 + (delay + case) % 8;
                let devices = 1 + case % 3.min(count);
                // Every other case slows one link down, so that wafers drift apart and
                // packages pile up in the faster links.
                let mut links = LinkConfig::uniform(delay, capacity);
                if case.is_multiple_of(2) {
                    let slow = LinkSpec {
                        delay: delay + 3,
                        capacity: 8,
                    };
                    links.overrides.push(((0, 0), Direction::Right, slow));
                }
                let problem = problem.clone().with_links(links).unwrap();
                let what = format!(
                    "{} on {}x{} wafers, delay {delay}, capacity {capacity}, {devices} devices",
                    kernel.name(),
                    wafers.0,
                    wafers.1
                );
                let checkpoints = [0, 5, 13];
                let stats = assert_cluster_equals_global(
                    &ctx,
                    &problem,
                    &placement(devices),
                    &checkpoints,
                    &what,
                );
                let fused = Placement {
                    fused: true,
                    ..placement(devices)
                };
                let what_fused = format!("{what}, fused");
                assert_cluster_equals_global(&ctx, &problem, &fused, &checkpoints, &what_fused);
                assert_cpu_cluster_agrees(&problem, &checkpoints, &stats, &what);
                piled_up |= stats.iter().any(|s| s.max_occupancy > 1);
            }
        }
    }
    assert!(
        piled_up,
        "no case had more than one package in flight on a link"
    );
}

/// A run of more steps than one submission holds (4096): the device runs one submission while
/// the next is recorded, and the values equal the global kernel's, explicit and fused.
#[test]
fn runs_longer_than_one_submission_equal_the_global_kernel() {
    let Some(ctx) = common::gpu() else { return };
    let problem = common::cluster_problem(KernelKind::Heat5, (2, 1), (3, 2), 2, 3);
    for fused in [false, true] {
        let placement = Placement {
            fused,
            ..placement(1)
        };
        let what = format!("heat5, 8197 steps, fused {fused}");
        assert_cluster_equals_global(&ctx, &problem, &placement, &[4096 * 2 + 5], &what);
    }
}

/// Random shapes, delays and capacities per link, device counts, and random sleeps in the
/// device threads: the values never change. Odd cases run the fused engine with a GPU's
/// tuning.
#[test]
fn random_clusters_with_random_thread_sleeps_equal_the_global_kernel() {
    let Some(ctx) = common::gpu() else { return };
    let gpu = ctx.retuned(Tuning::gpu(
        ctx.adapter.limits.max_compute_workgroup_storage_size,
    ));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..12 {
        let wafers = (1 + rng.below(4) as u32, 1 + rng.below(4) as u32);
        let pes = (1 + rng.below(3) as u32, 1 + rng.below(3) as u32);
        let n = 2 + rng.below(3) as u32;
        let kernel = KernelKind::HEAT[case % 2];
        let mut links = LinkConfig::uniform(rng.below(6) as u32, 1 + rng.below(8) as u32);
        for _ in 0..rng.below(4) {
            let at = (
                rng.below(wafers.0 as u64) as u32,
                rng.below(wafers.1 as u64) as u32,
            );
            let dir = Direction::ALL[rng.below(2) as usize];
            let spec = LinkSpec {
                delay: rng.below(6) as u32,
                capacity: 1 + rng.below(8) as u32,
            };
            links.overrides.push((at, dir, spec));
        }
        let problem = common::cluster_problem(kernel, wafers, pes, n, case as u64)
            .with_links(links.clone())
            .unwrap();
        let devices = 1 + rng.below(3.min(wafers.0 * wafers.1) as u64) as u32;
        let placement = Placement {
            devices,
            jitter: Some((case as u64 + 1, Duration::from_micros(300))),
            fused: case % 2 == 1,
            ..Placement::default()
        };
        let steps = 1 + rng.below(20);
        let what = format!(
            "case {case}: {} on {wafers:?} wafers of {pes:?} PEs, n = {n}, {devices} devices, links {links:?}, fused {}",
            kernel.name(),
            placement.fused
        );
        let ctx = if placement.fused { &gpu } else { &ctx };
        assert_cluster_equals_global(ctx, &problem, &placement, &[steps / 2, steps], &what);
    }
}

/// The fused engine (a workgroup is a block of PEs) equals the explicit engine and the global
/// kernel bit for bit: every kernel, n in {1, 2, 3, 5, 16}, odd PE counts, wafer edges that
/// cut a workgroup's block (along x and along y), clusters with link delays, two devices,
/// wafers whose width is and is not a multiple of 4 (vec4 loads of the dense grid, where
/// direct reads go by blocks of columns).
#[test]
fn the_fused_engine_equals_the_explicit_engine_and_the_global_kernel() {
    let Some(ctx) = common::gpu() else { return };
    let cases = [
        ((1, 1), (67, 5), 1),
        ((2, 3), (3, 2), 2),
        ((1, 1), (3, 100), 2),
        ((1, 2), (6, 5), 2),
        ((1, 1), (7, 5), 3),
        ((3, 1), (13, 9), 5),
        ((2, 2), (7, 5), 16),
    ];
    for kernel in KernelKind::ALL {
        for (case, (wafers, pes, n)) in cases.into_iter().enumerate() {
            let problem = common::kernel_problem(kernel, wafers, pes, n, 5)
                .with_links(LinkConfig::uniform(case as u32 % 3, 2))
                .unwrap();
            let devices = 1 + (case as u32 % 2).min(wafers.0 * wafers.1 - 1);
            let fused = Placement {
                fused: true,
                ..placement(devices)
            };
            let mut engine = GpuCluster::new(ctx.clone(), &problem, &fused).unwrap();
            let what = format!(
                "{} on {wafers:?} wafers of {pes:?} PEs, n = {n}, {devices} devices: {}",
                kernel.name(),
                engine.describe()
            );
            assert!(what.contains("(fused, "), "{what}");
            let mut explicit = GpuCluster::new(ctx.clone(), &problem, &placement(1)).unwrap();
            assert_same_bits(&mut engine, &mut explicit, &[0, 3, 7], &what);
            let mut global = GpuGlobal::new(ctx.clone(), &problem).unwrap();
            global.advance(7).unwrap();
            assert_eq!(
                bits(&engine),
                bits(&global),
                "{what} against the global kernel"
            );
        }
    }
    // Links of capacity 1, one slower, on two devices: the wafers drift apart and every
    // package slot is reused as soon as it is free.
    for kernel in KernelKind::ALL {
        let mut links = LinkConfig::uniform(1, 1);
        let slow = LinkSpec {
            delay: 3,
            capacity: 1,
        };
        links.overrides.push(((0, 0), Direction::Right, slow));
        let problem = common::kernel_problem(kernel, (3, 1), (3, 2), 2, 6)
            .with_links(links)
            .unwrap();
        let fused = Placement {
            fused: true,
            ..placement(2)
        };
        let what = format!("{} fused, capacity 1, 2 devices", kernel.name());
        assert_cluster_equals_global(&ctx, &problem, &fused, &[0, 5, 13], &what);
    }
    // A PE whose points do not fit workgroup memory (256 KiB would be needed here) falls
    // back to the explicit dispatches with `fused=tile`; direct reads need no tile.
    let problem = common::cluster_problem(KernelKind::Heat5, (1, 1), (3, 2), 256, 5);
    let fused = Placement {
        fused: true,
        ..placement(1)
    };
    for (fused_direct, engine) in [
        (false, "explicit sendrecv and compute (fused asked"),
        (
            true,
            "(fused, reading the neighbours' cells and the links directly",
        ),
    ] {
        let ctx = ctx.retuned(Tuning {
            fused_direct,
            ..ctx.tuning
        });
        let what = GpuCluster::new(ctx.clone(), &problem, &fused)
            .unwrap()
            .describe();
        assert!(what.contains(engine), "{what}");
        assert_cluster_equals_global(&ctx, &problem, &fused, &[0, 3], &what);
    }
}

/// A case of the time-block tests: wafers, PEs, n, steps per block, link delay and capacity,
/// devices, wafers per buffer.
type BlockCase = (
    (u32, u32),
    (u32, u32),
    u32,
    u32,
    (u32, u32),
    u32,
    Option<u64>,
);

/// The fused engine of `problem` on `ctx` with the time blocks and placement of `case` (which
/// it must say it runs), and a line naming the case and the engine.
fn blocked_engine(
    ctx: &Arc<GpuContext>,
    problem: &Problem,
    (wafers, pes, n, steps, _, devices, per_bank): BlockCase,
) -> (GpuCluster, String) {
    let fields = problem.spec().fields.len() as u64;
    let fields_bytes = problem.cluster.wafer.sram_cells() * 4 * fields;
    let blocked = Placement {
        fused: true,
        time_block: steps,
        max_binding: per_bank.map(|w| (w * fields_bytes) + 4096),
        ..placement(devices)
    };
    let engine = GpuCluster::new(ctx.clone(), problem, &blocked).unwrap();
    let what = format!(
        "{} on {wafers:?} wafers of {pes:?} PEs, n = {n}, {devices} devices: {}",
        problem.spec().name,
        engine.describe()
    );
    let says = format!("time blocks of {steps} steps");
    assert!(what.contains(&says), "{what}");
    (engine, what)
}

/// The steps at which the time-block tests compare bits: inside blocks of 3 to 7 steps,
/// stretched for longer blocks so that one lies wholly between two checks.
fn stretched_checks(steps: u32) -> [u64; 5] {
    [0, 4, 11, 20, 35].map(|t| t * steps.max(7) as u64 / 7)
}

/// Time blocks (the fused engine advancing the PEs clear of the link bands several steps per
/// dispatch) equal the global kernel bit for bit: every kernel (shallow water's two stages
/// and three fields too), blocks of 3, 5 and 7 steps (and 15 for heat), n from 1 to 33, odd
/// PE counts, regions cut into several spans, runs that start and end inside a block's span
/// of states, link delays, capacity-1 links on two devices, wafers split over several
/// buffers. Where no PE lies clear of the bands, the engine says why and steps one at a time.
#[test]
fn time_blocks_equal_the_global_kernel() {
    let Some(ctx) = common::gpu() else { return };
    // wafers, PEs, n, steps per block, link delay and capacity, devices, wafers per buffer.
    let cases = [
        ((1, 1), (9, 7), 2, 3, (0, 2), 1, None),
        ((2, 2), (5, 6), 5, 3, (1, 2), 2, Some(1)),
        ((3, 1), (13, 9), 3, 5, (2, 2), 1, None),
        ((2, 1), (7, 5), 16, 7, (1, 1), 2, None),
        ((1, 1), (11, 9), 1, 3, (0, 1), 1, None),
        ((1, 2), (3, 40), 33, 3, (1, 3), 1, Some(1)),
    ];
    // Heat on wafers whose width is a multiple of 4, which a CPU adapter blocks in registers
    // beyond bands whose width in points is one: the region's last block cut to 4 columns
    // (24 - 12, 60 - 16, 72 - 20 and 128 - 20 points), rows of several blocks (360), bands
    // inside the first PE (n = 32), n = 1, wafers on two devices and one per buffer.
    let registers = [
        ((1, 1), (12, 9), 2, 5, (0, 2), 1, None),
        ((2, 2), (6, 7), 4, 3, (1, 2), 2, Some(1)),
        ((1, 1), (5, 30), 12, 7, (1, 1), 1, None),
        ((3, 1), (16, 12), 1, 3, (2, 2), 1, None),
        ((1, 2), (9, 8), 8, 9, (1, 3), 2, None),
        ((2, 1), (4, 3), 32, 9, (1, 2), 1, None),
    ];
    // Shallow water's blocks of 3 steps in registers on a CPU adapter, beyond 8-point bands:
    // n = 1 to 4 (bands of whole PEs or not), 12 and 32 (bands inside the first PE); the
    // region's last block cut to 8 and 12 columns, rows of several blocks (360), wafers on two
    // devices and one per buffer.
    let swe_registers = [
        ((1, 1), (12, 9), 2, 3, (0, 2), 1, None),
        ((2, 2), (6, 7), 4, 3, (1, 2), 2, Some(1)),
        ((1, 1), (8, 8), 3, 3, (0, 1), 1, None),
        ((3, 1), (16, 12), 1, 3, (2, 2), 1, None),
        ((1, 2), (5, 30), 12, 3, (1, 1), 1, None),
        ((2, 1), (4, 3), 32, 3, (1, 2), 1, None),
    ];
    // Blocks of 15 steps: heat only, as shallow water's 30-point reach leaves no span in
    // lavapipe's workgroup memory.
    let long = ((1, 1), (23, 19), 2, 15, (1, 2), 1, None);
    for kernel in KernelKind::ALL {
        let heat = KernelKind::HEAT.contains(&kernel);
        for &(wafers, pes, n, steps, (delay, capacity), devices, per_bank) in cases
            .iter()
            .chain(heat.then_some(&long))
            .chain(registers.iter().filter(|_| heat))
            .chain(swe_registers.iter().filter(|_| !heat))
        {
            let problem = common::kernel_problem(kernel, wafers, pes, n, 5)
                .with_links(LinkConfig::uniform(delay, capacity))
                .unwrap();
            let case = (wafers, pes, n, steps, (delay, capacity), devices, per_bank);
            let (mut engine, what) = blocked_engine(&ctx, &problem, case);
            let in_registers = ctx.adapter.is_software()
                && (pes.0 * n) % 4 == 0
                && (heat || (steps == 3 && problem.spec().comm_width == 1));
            assert_eq!(
                what.contains("carried in registers"),
                in_registers,
                "{what}"
            );
            let mut global = GpuGlobal::new(ctx.clone(), &problem).unwrap();
            assert_same_bits(&mut engine, &mut global, &stretched_checks(steps), &what);
        }
        // Capacity-1 links, one slower, on two devices: the wafers drift apart, and a block's
        // inner packages wait for room while its region is already done.
        let mut links = LinkConfig::uniform(1, 1);
        let slow = LinkSpec {
            delay: 3,
            capacity: 1,
        };
        links.overrides.push(((0, 0), Direction::Right, slow));
        let problem = common::kernel_problem(kernel, (3, 1), (6, 5), 2, 6)
            .with_links(links)
            .unwrap();
        let blocked = Placement {
            fused: true,
            time_block: 3,
            ..placement(2)
        };
        let what = format!("{} time blocks, capacity 1, 2 devices", kernel.name());
        assert_cluster_equals_global(&ctx, &problem, &blocked, &[0, 7, 16], &what);
    }
    // Where no PE lies clear of the bands, the engine says why and steps one at a time.
    let problem = common::cluster_problem(KernelKind::Heat5, (1, 1), (4, 40), 1, 4);
    let blocked = Placement {
        fused: true,
        time_block: 3,
        ..placement(1)
    };
    let mut engine = GpuCluster::new(ctx.clone(), &problem, &blocked).unwrap();
    // Tiles cut their bands in PEs, register blocks (a CPU adapter's) in points.
    let why = match ctx.adapter.is_software() {
        true => "no point of the 4x40-point wafer lies clear of 8-point link bands",
        false => "no PE of the 4x40 wafer lies 6 points clear",
    };
    assert!(engine.describe().contains(why), "{}", engine.describe());
    let mut global = GpuGlobal::new(ctx.clone(), &problem).unwrap();
    assert_same_bits(&mut engine, &mut global, &[5], why);
}

/// The adapter's subgroup size where heat's time blocks can go across a subgroup's lanes.
fn subgroup_lanes(ctx: &GpuContext) -> Option<u32> {
    let tuning = ctx.tuning.overridden("block_lanes=on", &ctx.adapter);
    tuning.ok().and_then(|t| t.block_lanes)
}

/// Heat's time blocks across a subgroup's lanes (`block_lanes`, a GPU's shape of the blocks
/// in registers) equal the global kernel bit for bit: blocks of 3, 5, 7 and 15 steps where
/// the subgroup allows them (3 on lavapipe's 8 lanes, all on 32), n = 1 to 32, the region's
/// last block cut (blocks of 2 columns on 8 lanes at 3 steps, 22 on 32 at 5), bands inside
/// the first PE and of several PEs, 360 rows (several blocks of the adapter's
/// `direct_rows`), wafers on two devices and one per buffer, link delays 0 to 2.
#[test]
fn time_blocks_across_subgroup_lanes_equal_the_global_kernel() {
    let Some(ctx) = common::gpu() else { return };
    let Some(lanes) = subgroup_lanes(&ctx) else {
        common::say_skipped(&format!("{} has no subgroups of one size", ctx.describe()));
        return;
    };
    let tuned = ctx.retuned(Tuning {
        block_lanes: Some(lanes),
        ..ctx.tuning
    });
    // wafers, PEs, n, steps per block, link delay and capacity, devices, wafers per buffer.
    let cases = [
        ((1, 1), (12, 9), 2, 3, (0, 2), 1, None),
        ((2, 2), (6, 7), 4, 3, (1, 2), 2, Some(1)),
        ((1, 1), (5, 30), 12, 3, (1, 1), 1, None),
        ((3, 1), (16, 12), 1, 3, (2, 2), 1, None),
        ((2, 1), (4, 3), 32, 3, (1, 2), 1, None),
        ((1, 2), (9, 8), 8, 5, (1, 3), 2, None),
        ((1, 1), (10, 9), 8, 7, (0, 2), 1, None),
        ((1, 1), (8, 12), 8, 15, (0, 2), 1, None),
    ];
    for kernel in [KernelKind::Heat5, KernelKind::Heat9] {
        for (wafers, pes, n, steps, (delay, capacity), devices, per_bank) in cases {
            if 2 * steps >= lanes {
                continue;
            }
            let problem = common::cluster_problem(kernel, wafers, pes, n, 5)
                .with_links(LinkConfig::uniform(delay, capacity))
                .unwrap();
            let case = (wafers, pes, n, steps, (delay, capacity), devices, per_bank);
            let (mut engine, what) = blocked_engine(&tuned, &problem, case);
            assert!(
                what.contains(&format!("across subgroups of {lanes} lanes")),
                "{what}"
            );
            let mut global = GpuGlobal::new(ctx.clone(), &problem).unwrap();
            assert_same_bits(&mut engine, &mut global, &stretched_checks(steps), &what);
        }
    }
}

/// The kernels' shapes (`WAFER_EMU_TUNING`) change speed, never bits: a GPU's tuning (sendrecv
/// by single cells), smaller tiles that cut the wafers into several blocks, odd row counts per
/// invocation, wafer, fused and time-block compute by single columns, sendrecv by 3 cells of a
/// comm line or by PE, fused workgroups of 96 and 256 invocations, the fused engine's tiles
/// and direct reads (by blocks of 8 columns of 1 and 7 rows or single ones of 1 to 4 rows, of
/// the dense grid and of Table 3's blocks; shallow water's link bands' sendrecv by PE and by 3
/// cells), heat's time blocks across a subgroup's lanes where the adapter has them, n from 1
/// (below w) to
/// 3 and 8, on the explicit and fused engines and time blocks, each against the global kernel
/// of the adapter's own tuning.
#[test]
fn every_tuning_keeps_the_bits() {
    let Some(ctx) = common::gpu() else { return };
    let most = ctx.adapter.limits.max_compute_workgroup_storage_size;
    let most_invocations = ctx.adapter.limits.max_compute_invocations_per_workgroup;
    let tunings = [
        Tuning::gpu(most),
        Tuning {
            tile_bytes: 4 << 10,
            wafer_rows: 3,
            wafer_cols: 1,
            global_rows: 5,
            sendrecv_cells: Some(3),
            copy: CopyOrder::Runs,
            fused_invocations: 96,
            fused_rows: 3,
            fused_cols: 1,
            fused_direct: false,
            direct_cols: 1,
            direct_rows: 3,
            direct_grid: DirectGrid::Table3,
            point_rows: 2,
            block_rows: 5,
            block_lanes: None,
        },
        Tuning {
            tile_bytes: 8 << 10,
            wafer_rows: 7,
            wafer_cols: 8,
            global_rows: 1,
            sendrecv_cells: None,
            copy: CopyOrder::Interleaved,
            fused_invocations: most_invocations.min(256),
            fused_rows: 1,
            fused_cols: 8,
            fused_direct: true,
            direct_cols: 8,
            direct_rows: 7,
            direct_grid: DirectGrid::Dense,
            point_rows: 5,
            block_rows: 1,
            block_lanes: None,
        },
        // Direct reads by single columns of one row (a block whose first row is the wafer's
        // second), shallow water's by single points along 3 rows, its link bands' sendrecv
        // by 3 comm-line cells and compute by single columns; heat's direct reads in Table 3's
        // blocks, its time blocks across a subgroup's lanes, one row per block, where the
        // adapter has them.
        Tuning {
            wafer_rows: 5,
            wafer_cols: 1,
            sendrecv_cells: Some(3),
            direct_rows: 1,
            direct_grid: DirectGrid::Table3,
            point_rows: 3,
            block_lanes: subgroup_lanes(&ctx),
            ..Tuning::gpu(most)
        },
        // Heat's vec4 direct reads by one row (a block whose first row is the wafer's
        // second reads the link's second row and the wafer's first below it).
        Tuning {
            direct_rows: 1,
            ..Tuning::cpu_adapter(most)
        },
    ];
    let shapes = [
        ((1, 1), (23, 17), 3),
        ((2, 1), (19, 11), 2),
        ((1, 2), (9, 7), 1),
        ((2, 1), (5, 4), 8),
    ];
    for tuning in tunings {
        let tuned = ctx.retuned(tuning);
        for kernel in KernelKind::ALL {
            for (wafers, pes, n) in shapes {
                let problem = common::kernel_problem(kernel, wafers, pes, n, 7);
                let engines =
                    [(false, 1), (true, 1), (true, 3)].map(|(fused, time_block)| Placement {
                        fused,
                        time_block,
                        ..placement(1)
                    });
                for placement in engines {
                    let mut engine = GpuCluster::new(tuned.clone(), &problem, &placement).unwrap();
                    let what = format!(
                        "{} on {wafers:?} wafers of {pes:?} PEs, n = {n}, tuning {}: {}",
                        kernel.name(),
                        tuning.line(),
                        engine.describe()
                    );
                    let mut global = GpuGlobal::new(ctx.clone(), &problem).unwrap();
                    assert_same_bits(&mut engine, &mut global, &[4, 9], &what);
                }
                let mut global = GpuGlobal::new(tuned.clone(), &problem).unwrap();
                let mut reference = GpuGlobal::new(ctx.clone(), &problem).unwrap();
                let what = format!("{} global kernel, tuning {}", kernel.name(), tuning.line());
                assert_same_bits(&mut global, &mut reference, &[5], &what);
            }
        }
    }
}

/// The CPU backend's time blocks equal the CPU global kernel bit for bit, and count the same
/// link statistics as the CPU cluster without them: every kernel, blocks of 3, 5, 7 and 21
/// steps, n from 1 to 16, odd PE counts, regions wider and taller than one span (512 x 256
/// points for heat), runs that start and end inside a block's states, link delays and
/// capacity-1 links, one slower.
#[test]
fn cpu_time_blocks_equal_the_global_kernel() {
    let cases = [
        ((1, 1), (9, 7), 2, 3, (0, 2)),
        ((2, 2), (5, 6), 5, 3, (1, 2)),
        ((3, 1), (13, 9), 3, 5, (2, 1)),
        ((2, 1), (37, 5), 16, 7, (1, 1)),
        ((1, 1), (11, 40), 1, 3, (0, 1)),
        ((1, 1), (9, 300), 1, 3, (0, 1)),
        ((2, 1), (7, 9), 8, 21, (1, 2)),
    ];
    for kernel in KernelKind::ALL {
        for (wafers, pes, n, steps, (delay, capacity)) in cases {
            let mut links = LinkConfig::uniform(delay, capacity);
            let slow = LinkSpec {
                delay: delay + 2,
                capacity: 1,
            };
            links.overrides.push(((0, 0), Direction::Right, slow));
            let problem = common::kernel_problem(kernel, wafers, pes, n, 5)
                .with_links(links)
                .unwrap();
            let mut blocked = CpuCluster::new(&problem)
                .unwrap()
                .with_time_block(&problem, steps);
            let what = format!(
                "{} on {wafers:?} wafers of {pes:?} PEs, n = {n}: {}",
                kernel.name(),
                blocked.describe()
            );
            assert!(
                what.contains(&format!("time blocks of {steps} steps")),
                "{what}"
            );
            let checks = stretched_checks(steps);
            let mut global = CpuGlobal::new(&problem).unwrap();
            assert_same_bits(&mut blocked, &mut global, &checks, &what);
            let mut plain = CpuCluster::new(&problem).unwrap();
            for t in checks {
                plain.advance(t - plain.step()).unwrap();
            }
            assert_eq!(blocked.link_stats(), plain.link_stats(), "{what}");
        }
    }
    for (pes, steps, why) in [
        ((4, 40), 3, "no PE of the 4x40 wafer lies 6 points clear"),
        (
            (9, 9),
            4,
            "time-block = 4 is out of range: allowed 1, 3, 5, 7, 9, 15, 21",
        ),
    ] {
        let problem = common::cluster_problem(KernelKind::Heat5, (1, 1), pes, 1, 4);
        let mut cpu = CpuCluster::new(&problem)
            .unwrap()
            .with_time_block(&problem, steps);
        assert!(cpu.describe().contains(why), "{}", cpu.describe());
        let mut global = CpuGlobal::new(&problem).unwrap();
        assert_same_bits(&mut cpu, &mut global, &[8], why);
    }
}

/// `auto` blocks every kernel in time on the CPU backend (9 or 15 steps), on a GPU only the
/// single-stage kernels (heat), with the fused engine (5 steps) at n <= 8, and on a CPU
/// adapter heat where the wafer's width is a multiple of 4 (5 steps in registers, where the
/// bands, in whole vec4s of points, leave a region); a GPU takes the fused engine without time
/// blocks for the rest, a CPU adapter for heat at n <= 32 and shallow water at every n; the
/// explicit wafer otherwise. It follows the adapter's tuning (`WAFER_EMU_TUNING`): no direct
/// reads, no fused engine unless blocked; on a CPU adapter no register blocks, no time blocks.
/// And the run's length: shallow water's blocks in registers on a CPU adapter for long runs,
/// the blocks fitted to the interval between reads where there are reads before the end.
#[test]
fn auto_blocks_what_each_backend_can_block() {
    use wafer_emu::engine::EngineKind::{self, Fused, Wafer};
    use wafer_emu::engine::Hardware::{self, Cpu};
    use wafer_emu::engine::RunLength;
    let lavapipe = Tuning::cpu_adapter(32 << 10);
    let gpu = Tuning::gpu(48 << 10);
    let tiles = |t: Tuning| Tuning {
        fused_direct: false,
        ..t
    };
    let (cpu_adapter, a_gpu) = (Hardware::SoftwareAdapter(lavapipe), Hardware::Gpu(gpu));
    let heat = |n| common::cluster_problem(KernelKind::Heat5, (1, 1), (16, 16), n, 1);
    // A wafer 15 x 66 = 990 points wide: no whole vec4s.
    let odd = |n| common::cluster_problem(KernelKind::Heat5, (1, 1), (15, 15), n, 1);
    let swe_at = |n| common::swe_problem(KernelKind::Swe, (1, 1), (16, 16), n, 1);
    let swe = swe_at(2);
    let swe_c = common::swe_problem(KernelKind::SweC, (1, 1), (32, 32), 2, 1);
    // Heat5's remaps reach 2 points: at n = 1 blocks of 15 leave none of 24 x 24 PEs clear of
    // their bands, blocks of 9 do; of 8 x 8 PEs only blocks of 3 do, of 2 x 2 none.
    let small = |pes| common::cluster_problem(KernelKind::Heat5, (1, 1), (pes, pes), 1, 1);
    for (problem, hardware, engine, steps) in [
        (small(24), cpu_adapter, Fused, 5),
        (heat(2), cpu_adapter, Fused, 5),
        (heat(8), cpu_adapter, Fused, 5),
        (heat(32), cpu_adapter, Fused, 5),
        (heat(64), cpu_adapter, Fused, 5),
        // Bands of 8 points at n = 1 leave none of 8 x 8 PEs clear, though 6 would.
        (small(8), cpu_adapter, Fused, 1),
        (odd(3), cpu_adapter, Fused, 1),
        (odd(66), cpu_adapter, Wafer, 1),
        (swe.clone(), cpu_adapter, Fused, 1),
        (swe_at(8), cpu_adapter, Fused, 1),
        (swe_at(64), cpu_adapter, Fused, 1),
        (heat(8), a_gpu, Fused, 5),
        (heat(16), a_gpu, Fused, 1),
        (heat(64), a_gpu, Fused, 1),
        (swe.clone(), a_gpu, Fused, 1),
        (swe_at(8), a_gpu, Fused, 1),
        (heat(8), Cpu, Fused, 15),
        (swe, Cpu, Fused, 9),
        (swe_c, Cpu, Fused, 5),
        (small(24), Cpu, Fused, 9),
        (small(8), Cpu, Fused, 3),
        (small(2), Cpu, Fused, 1),
        (
            heat(8),
            Hardware::SoftwareAdapter(tiles(lavapipe)),
            Wafer,
            1,
        ),
        (
            swe_at(8),
            Hardware::SoftwareAdapter(tiles(lavapipe)),
            Wafer,
            1,
        ),
        (
            heat(8),
            Hardware::SoftwareAdapter(Tuning {
                direct_cols: 1,
                ..lavapipe
            }),
            Fused,
            1,
        ),
        (
            heat(64),
            Hardware::SoftwareAdapter(Tuning {
                direct_cols: 1,
                ..lavapipe
            }),
            Wafer,
            1,
        ),
        (swe_at(8), Hardware::Gpu(tiles(gpu)), Wafer, 1),
        (heat(8), Hardware::Gpu(tiles(gpu)), Fused, 5),
        (
            heat(8),
            Hardware::Gpu(Tuning {
                direct_cols: 8,
                ..gpu
            }),
            Fused,
            5,
        ),
        (
            heat(16),
            Hardware::Gpu(Tuning {
                direct_cols: 8,
                ..gpu
            }),
            Fused,
            1,
        ),
    ] {
        // 45 steps: whole blocks of 3, 5, 9 and 15, too few to compile shallow water's.
        let run = RunLength::whole(45);
        let (kind, placement) =
            EngineKind::Auto.resolve(&problem, &Placement::default(), hardware, run);
        let what = format!(
            "{} at n = {}, {hardware:?}",
            problem.spec().name,
            problem.cluster.wafer.n
        );
        assert_eq!((kind, placement.time_block), (engine, steps), "{what}");
    }
    // A run's length and reads: shallow water's blocks of 3 in registers on a CPU adapter only
    // for a run whose updates pay for their compile (1e8 per thread), and only where a block
    // fits between two reads; heat's blocks those that run the most steps between reads.
    let (short, long) = (1000, 1_000_000_000);
    for (problem, steps, interval, block) in [
        (swe_at(8), short, short, 1),
        (swe_at(8), long, long, 3),
        (swe_at(8), long, 7, 3),
        (swe_at(8), long, 2, 1),
        (heat(8), short, 4, 3),
        (heat(8), short, 1, 1),
    ] {
        let run = RunLength { steps, interval };
        let (kind, placement) =
            EngineKind::Auto.resolve(&problem, &Placement::default(), cpu_adapter, run);
        let what = format!("{} over {run:?}", problem.spec().name);
        assert_eq!((kind, placement.time_block), (Fused, block), "{what}");
    }
}

/// The engine is decided once, as a value: on the CPU backend `auto` is the CPU wafer in
/// time blocks of at most 18 remaps (15 steps of heat, 5 of swe-c), `wafer` without them,
/// `global` the CPU's global kernel.
#[test]
fn the_engine_plan_is_a_value() {
    use wafer_emu::engine::{plan, Backend, EngineKind, EnginePlan, RunLength};
    let run = RunLength::whole(45);
    let cpu_wafer = |time_block| EnginePlan::CpuWafer { time_block };
    for (kernel, engine, expected) in [
        (KernelKind::Heat5, EngineKind::Auto, cpu_wafer(15)),
        (KernelKind::SweC, EngineKind::Auto, cpu_wafer(5)),
        (KernelKind::Heat5, EngineKind::Wafer, cpu_wafer(1)),
        (KernelKind::Heat5, EngineKind::Fused, cpu_wafer(1)),
        (
            KernelKind::Heat5,
            EngineKind::Global,
            EnginePlan::Global { on: Backend::Cpu },
        ),
    ] {
        let problem = common::kernel_problem(kernel, (1, 1), (32, 32), 2, 1);
        let decided = plan(engine, None, &problem, (&Placement::default(), run)).unwrap();
        assert_eq!(decided, expected, "{kernel:?} on {engine:?}");
    }
}

/// A wafer larger than one storage binding runs as a block of sub-wafers (along y, then
/// along both sides as the limit shrinks): bit for bit the whole wafer's run, every field, on
/// the explicit, fused and auto engines and on two devices, with the links that were asked
/// for in its report (their packages counted by the sub-wafers' schedule).
#[test]
fn a_wafer_larger_than_a_binding_runs_as_sub_wafers_bit_for_bit() {
    use wafer_emu::engine::{plan, simulator, sub_wafers, EngineKind, RunLength};
    let Some(ctx) = common::gpu() else { return };
    let state_bits = |sim: &dyn Simulator| -> Vec<u32> {
        let state = sim.state().unwrap();
        state
            .iter()
            .flat_map(|f| f.data.iter().map(|v| v.to_bits()))
            .collect()
    };
    let run = RunLength::whole(7);
    for kernel in KernelKind::ALL {
        let problem = common::kernel_problem(kernel, (2, 1), (4, 2), 3, 5);
        let mut links = LinkConfig::uniform(1, 2);
        let slow = links
            .parse_override("1,0,right:delay=3,capacity=1")
            .unwrap();
        links.overrides.push(slow);
        let problem = problem.with_links(links).unwrap();
        for (engine, devices) in [
            (EngineKind::Wafer, 1),
            (EngineKind::Fused, 2),
            (EngineKind::Auto, 1),
        ] {
            let placed = |limit: u64| Placement {
                devices,
                max_binding: Some(limit),
                ..Placement::default()
            };
            let parts = |limit: u64| {
                let k = sub_wafers(engine, Some(&ctx), &problem, (&placed(limit), run));
                k.map(|k| (k.x, k.y)).ok()
            };
            // Each split below the least limit of the one before, found by bisection.
            let (mut splits, mut limit) = (vec![], 1u64 << 30);
            while let Some(here) = parts(limit) {
                let (mut lo, mut hi) = (0, limit);
                while lo + 1 < hi {
                    let mid = (lo + hi) / 2;
                    match parts(mid) == Some(here) {
                        true => hi = mid,
                        false => lo = mid,
                    }
                }
                splits.push((here, lo));
                limit = lo;
            }
            let what = format!("{} with {engine:?}", kernel.name());
            let order: Vec<(u32, u32)> = splits.iter().map(|s| s.0).collect();
            assert_eq!(order[..3], [(1, 1), (1, 2), (2, 2)], "{what}: {order:?}");
            for &(_, limit) in &splits[..2] {
                let what = format!("{what} on {devices} device(s) below {limit} bytes");
                let split = &placed(limit);
                let open = |placement| {
                    let plan = plan(engine, Some(&ctx), &problem, (placement, run)).unwrap();
                    simulator(&plan, Some(&ctx), &problem, placement).unwrap()
                };
                let mut split = open(split);
                let whole = &placed(1 << 30);
                let mut whole = open(whole);
                assert!(
                    split.describe().contains("sub-wafers of"),
                    "{}",
                    split.describe()
                );
                for t in [3, 7] {
                    split.advance(t - split.step()).unwrap();
                    whole.advance(t - whole.step()).unwrap();
                    let same = state_bits(&*split) == state_bits(&*whole);
                    assert!(same, "{what}: differs at step {t}");
                }
                let (split, whole) = (split.link_stats().unwrap(), whole.link_stats().unwrap());
                assert_eq!(split.len(), 4, "{what}");
                for (a, b) in split.iter().zip(&whole) {
                    let id = |l: &LinkStats| (l.link.clone(), l.from, l.to, l.delay, l.capacity);
                    assert_eq!(id(a), id(b), "{what}");
                    // The sub-wafers follow their own schedule: a package may go one step ahead.
                    assert!(
                        a.packages.abs_diff(b.packages) <= 1,
                        "{what}: {a} against {b}"
                    );
                    assert_eq!(a.bytes / a.packages, b.bytes / b.packages, "{what}: {a}");
                }
            }
        }
    }
}

/// State beyond one storage binding: with each buffer limited to one or two wafers' SRAM, the
/// wafers of a device are split over several buffers (banks) and shallow water's constants
/// over several bindings (pages); every kernel, with link delays, on one and two devices, on
/// the explicit and the fused engine (heat's vec4 reads with their padded rows too), equals
/// the unsplit run bit for bit.
#[test]
fn state_split_over_several_bindings_equals_the_unsplit_run() {
    let Some(ctx) = common::gpu() else { return };
    for kernel in KernelKind::ALL {
        let problem = common::kernel_problem(kernel, (3, 2), (3, 2), 2, 4)
            .with_links(LinkConfig::uniform(2, 3))
            .unwrap();
        let fields = problem.spec().fields.len() as u64;
        for (devices, per_bank, fused) in [(1, 1, false), (1, 2, true), (2, 1, true), (2, 2, false)]
        {
            let unsplit = Placement {
                devices,
                fused,
                ..Placement::default()
            };
            // Table 3's cells, or the dense grid's where the fused engine reads directly.
            let cells = GpuCluster::new(ctx.clone(), &problem, &unsplit)
                .unwrap()
                .wafer_cells();
            let limit = (per_bank * cells + 16) * fields * 4;
            let constants = problem.kernel.constants().len();
            let pages = Pages::new(constants, limit).unwrap().count;
            // The paper's shallow water splits its constants here (swe-c's larger blocks
            // leave room for them in one page); heat's single constant never splits.
            let expected = match kernel {
                KernelKind::Swe => Some(true),
                KernelKind::Heat5 | KernelKind::Heat9 => Some(false),
                _ => None,
            };
            if let Some(expected) = expected {
                assert_eq!(pages > 1, expected, "{constants} constants");
            }
            let split = Placement {
                max_binding: Some(limit),
                ..unsplit
            };
            let mut banked = GpuCluster::new(ctx.clone(), &problem, &split).unwrap();
            let per_device = 6 / devices as u64;
            let expected = devices as u64 * per_device.div_ceil(per_bank);
            assert_eq!(banked.banks() as u64, expected);
            let mut whole = GpuCluster::new(ctx.clone(), &problem, &placement(1)).unwrap();
            assert_eq!(whole.banks(), 1);
            let what = format!(
                "{} on {devices} devices, {per_bank} wafers per buffer, {pages} constant pages: {}",
                kernel.name(),
                banked.describe()
            );
            assert_same_bits(&mut banked, &mut whole, &[0, 3, 7], &what);
        }
    }
    // Heat's vec4 reads (n = 4, blocks of 8 columns) store a dense grid whose skewed rows
    // make this small wafer 1.5x Table 3's cells: a binding that holds two Table 3 wafers
    // holds one of them.
    let problem = common::cluster_problem(KernelKind::Heat5, (3, 2), (3, 2), 4, 4)
        .with_links(LinkConfig::uniform(2, 3))
        .unwrap();
    let tuned = ctx.retuned(Tuning {
        direct_cols: 8,
        ..ctx.tuning
    });
    let split = Placement {
        max_binding: Some((2 * problem.cluster.wafer.sram_cells() + 16) * 4),
        fused: true,
        ..Placement::default()
    };
    let mut banked = GpuCluster::new(tuned.clone(), &problem, &split).unwrap();
    assert!(
        banked.describe().contains("by vec4s"),
        "{}",
        banked.describe()
    );
    assert_eq!(banked.banks(), 6);
    let mut whole = GpuCluster::new(tuned, &problem, &placement(1)).unwrap();
    assert_same_bits(
        &mut banked,
        &mut whole,
        &[0, 3, 7],
        "heat5 by vec4s, one wafer per buffer",
    );
    let problem = common::cluster_problem(KernelKind::Heat5, (1, 1), (3, 2), 2, 4);
    let tiny = Placement {
        max_binding: Some(64),
        ..Placement::default()
    };
    let err = GpuCluster::new(ctx, &problem, &tiny)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("a wafer of 3x2 PEs") && err.contains("per storage binding"),
        "{err}"
    );
}

/// A global grid larger than a storage binding runs in bands of rows, bit for bit the whole
/// grid's: every kernel, rows of vec4s and not, the Point runs of one and of 4 rows, Rows3's
/// 1 and 3 rows per invocation, down to the smallest bands that fit; below them, an error
/// naming the grid and the binding.
#[test]
fn a_global_grid_larger_than_a_binding_runs_in_bands_bit_for_bit() {
    let Some(ctx) = common::gpu() else { return };
    let retuned = ctx.retuned(Tuning {
        point_rows: 4,
        direct_cols: 8,
        global_rows: 3,
        ..ctx.tuning
    });
    for ctx in [ctx, retuned] {
        for kernel in KernelKind::ALL {
            // 16 and 9 points wide; 28 and 27 rows.
            for (pes, n) in [((4, 7), 4), ((3, 9), 3)] {
                let problem = common::kernel_problem(kernel, (1, 1), pes, n, 7);
                assert_bands_keep_the_bits(&ctx, &problem);
            }
        }
    }
}

/// Runs `problem` in ever smaller bindings until bands of the global grid no longer fit, each
/// against the whole grid at steps 1, 2 and 5; at least three counts of bands.
fn assert_bands_keep_the_bits(ctx: &Arc<GpuContext>, problem: &Problem) {
    let grid = problem.kernel.grid();
    let fields = problem.spec().fields.len() as u64;
    let mut limit = grid.x as u64 * grid.y as u64 * fields * 4 * 3;
    let mut counts = std::collections::BTreeSet::new();
    let name = format!("{} {}x{}", problem.spec().name, grid.x, grid.y);
    loop {
        let name = format!("{name} in {limit} bytes");
        let mut banded = match GpuGlobal::within(ctx.clone(), problem, limit) {
            Ok(banded) => banded,
            // Bands too small for the binding, or (shallow water) constant pages too many.
            Err(Error::TooLarge(why)) => {
                let grid = format!("a {}x{} global grid", grid.x, grid.y);
                assert!(
                    why.contains(&grid) || why.contains("constant fields"),
                    "{name}: {why}"
                );
                break;
            }
            Err(e) => panic!("{name}: {e}"),
        };
        let (describe, bands) = (banded.describe(), banded.bands());
        assert_eq!(
            describe.contains(&format!("in {bands} bands")),
            bands > 1,
            "{describe}"
        );
        counts.insert(bands);
        let mut whole = GpuGlobal::new(ctx.clone(), problem).unwrap();
        for t in [1, 2, 5] {
            banded.advance(t - banded.step()).unwrap();
            whole.advance(t - whole.step()).unwrap();
            let (a, b) = (banded.state().unwrap(), whole.state().unwrap());
            for (f, (a, b)) in a.iter().zip(&b).enumerate() {
                let differ = a
                    .data
                    .iter()
                    .zip(&b.data)
                    .filter(|(p, q)| p.to_bits() != q.to_bits());
                assert_eq!(
                    differ.count(),
                    0,
                    "{name} ({describe}): field {f} after {t} steps"
                );
            }
        }
        limit = limit * 2 / 3;
    }
    assert!(
        counts.len() >= 3 && counts.contains(&1),
        "{name}: {counts:?}"
    );
}

#[test]
fn a_link_of_capacity_zero_fails_naming_wafer_link_and_step() {
    let Some(ctx) = common::gpu() else { return };
    for devices in [1, 2] {
        let mut links = LinkConfig::default();
        links.overrides.push((
            (1, 0),
            Direction::Up,
            LinkSpec {
                delay: 1,
                capacity: 0,
            },
        ));
        let problem = common::cluster_problem(KernelKind::Heat5, (2, 2), (2, 2), 2, 1)
            .with_links(links)
            .unwrap();
        // Found before any work: the schedule is run dry for two steps first.
        let Err(err) = GpuCluster::new(ctx.clone(), &problem, &placement(devices)) else {
            panic!("a link of capacity 0 was accepted");
        };
        let message = err.to_string();
        assert!(matches!(err, Error::Deadlock(_)), "{message}");
        assert!(
            message.contains("wafer (1,0)")
                && message.contains("up link (1,0)->(1,1)")
                && message.contains("step-0"),
            "{message}"
        );
    }
}

/// A device thread that stops answering (here: sleeps far past the time limit) is reported by
/// the threads waiting on it, with the wafer, the link and the step, instead of a hang.
#[test]
fn a_hung_device_is_reported_within_the_time_limit() {
    let Some(ctx) = common::gpu() else { return };
    let problem = common::cluster_problem(KernelKind::Heat9, (2, 1), (2, 2), 2, 1);
    let placement = Placement {
        devices: 2,
        timeout: Duration::from_millis(30),
        jitter: Some((5, Duration::from_millis(400))),
        ..Placement::default()
    };
    let mut cluster = GpuCluster::new(ctx.clone(), &problem, &placement).unwrap();
    let started = std::time::Instant::now();
    let err = cluster.advance(50).unwrap_err();
    let message = err.to_string();
    eprintln!("reported: {message}");
    assert!(matches!(err, Error::Timeout(_)), "{message}");
    assert!(
        message.contains("wafer (") && message.contains("link (") && message.contains("step-"),
        "{message}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
}

/// Every link goes one wafer right or one wafer up (on the torus), and carries exactly one
/// package of its size per step: nothing ever flows left or down.
#[test]
fn traffic_only_flows_right_and_up() {
    let Some(ctx) = common::gpu() else { return };
    let problem = common::cluster_problem(KernelKind::Heat9, (3, 2), (2, 3), 2, 4);
    let c = problem.cluster;
    let steps = 9;
    let stats = assert_cluster_equals_global(&ctx, &problem, &placement(2), &[steps], "3x2 wafers");
    assert_eq!(stats.len(), 2 * c.count());
    for s in &stats {
        let (dx, dy) = (
            (s.to.x + c.wafers_x - s.from.x) % c.wafers_x,
            (s.to.y + c.wafers_y - s.from.y) % c.wafers_y,
        );
        assert!(Direction::ALL.contains(&s.direction), "{s}");
        let expected = match s.direction.is_horizontal() {
            true => (1 % c.wafers_x, 0),
            false => (0, 1 % c.wafers_y),
        };
        let cells = c.package_cells(s.direction);
        assert_eq!((dx, dy), expected, "{s}");
        assert!(s.packages >= steps && s.packages <= steps + 1, "{s}");
        assert_eq!(s.bytes, s.packages * cells as u64 * 4, "{s}");
    }
}

/// The packages the GPU packs into the link rings equal the CPU twins of the packing kernels,
/// computed from the wafers' SRAM: on the explicit engine with the adapter's tuning and on the
/// fused engine with a GPU's.
#[test]
fn gpu_packages_equal_the_cpu_twins() {
    let Some(ctx) = common::gpu() else { return };
    let gpu = Tuning::gpu(ctx.adapter.limits.max_compute_workgroup_storage_size);
    for (ctx, fused) in [(ctx.clone(), false), (ctx.retuned(gpu), true)] {
        assert_packages_equal_the_cpu_twins(&ctx, fused);
    }
}

/// The packages of state 4 in the rings of a 2x3 cluster of heat5 on `ctx`, on the fused
/// engine if `fused`.
fn assert_packages_equal_the_cpu_twins(ctx: &Arc<GpuContext>, fused: bool) {
    let problem = common::cluster_problem(KernelKind::Heat5, (2, 3), (3, 2), 3, 6)
        .with_links(LinkConfig::uniform(0, 3))
        .unwrap();
    let c = problem.cluster;
    let placement = Placement {
        fused,
        ..placement(1)
    };
    let mut cluster = GpuCluster::new(ctx.clone(), &problem, &placement).unwrap();
    let t = 4;
    cluster.advance(t).unwrap();
    let sram = cluster.sram().unwrap();
    // Step t + 1 sends the packages of state t; they stay in their ring slots.
    cluster.advance(1).unwrap();
    let per = c.wafer.sram_cells() as usize;
    let wafer_sram = |k: usize| &sram[k * per..(k + 1) * per];
    let ring = 3;
    let slot = |dir: Direction, k: usize| {
        let cells = c.package_cells(dir);
        let first = (k * ring + t as usize % ring) * cells;
        first..first + cells
    };
    let (up_ring, right_ring) = (
        cluster.link_ring(Direction::Up).unwrap(),
        cluster.link_ring(Direction::Right).unwrap(),
    );
    for k in 0..c.count() {
        let up = pack_up(&c, wafer_sram(k));
        assert_eq!(
            up_ring[slot(Direction::Up, k)],
            up[..],
            "up package of wafer {k}"
        );
        let below = c.upstream(k, Direction::Up);
        let right = pack_right(&c, wafer_sram(k), &pack_up(&c, wafer_sram(below)));
        assert_eq!(
            right_ring[slot(Direction::Right, k)],
            right[..],
            "right package of wafer {k}, {}",
            cluster.describe()
        );
    }
}
