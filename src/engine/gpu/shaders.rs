//! WGSL sources. Every engine shader in `shaders/` begins with `// import NAME ...`, naming
//! what it uses: another engine shader, or `kernel`, the kernel's own WGSL (from its folder in
//! `src/kernels/`). [`compose`] resolves the imports depth-first, each source once. Bind-group
//! layouts are derived from the composed shader (reflected by naga), and buffers are bound by
//! the names the shader gives them, never by hand-typed positions.

use super::constants::Pages;
use super::point_blocks::PointBlock;
use super::reflect::{const_u32, LANES_PREFIX};
use super::row_blocks::RowBlock;
use super::shard::TimeBlock;
use super::tuning::Tuning;
use crate::kernels::{Driver, KernelSpec, Stage};

/// The engine shaders, by import name.
const LIBRARY: [(&str, &str); 34] = [
    ("common", include_str!("../../../shaders/common.wgsl")),
    (
        "global_grid",
        include_str!("../../../shaders/global_grid.wgsl"),
    ),
    (
        "owned_grid",
        include_str!("../../../shaders/owned_grid.wgsl"),
    ),
    ("links", include_str!("../../../shaders/cluster_links.wgsl")),
    ("fetch", include_str!("../../../shaders/cluster_fetch.wgsl")),
    (
        "fused_tile",
        include_str!("../../../shaders/fused_tile.wgsl"),
    ),
    ("tile_runs", include_str!("../../../shaders/tile_runs.wgsl")),
    (
        "tile_rows3",
        include_str!("../../../shaders/tile_rows3.wgsl"),
    ),
    (
        "fused_rows3",
        include_str!("../../../shaders/fused_rows3.wgsl"),
    ),
    (
        "fused_point",
        include_str!("../../../shaders/fused_point.wgsl"),
    ),
    (
        "fused_blocked",
        include_str!("../../../shaders/fused_blocked.wgsl"),
    ),
    (
        "blocked_rows3",
        include_str!("../../../shaders/blocked_rows3.wgsl"),
    ),
    (
        "blocked_point",
        include_str!("../../../shaders/blocked_point.wgsl"),
    ),
    (
        "time_block",
        include_str!("../../../shaders/time_block.wgsl"),
    ),
    (
        "wafer_clock",
        include_str!("../../../shaders/wafer_clock.wgsl"),
    ),
    (
        "rows3_block",
        include_str!("../../../shaders/rows3_block.wgsl"),
    ),
    (
        "wafer_direct_vec4",
        include_str!("../../../shaders/wafer_direct_vec4.wgsl"),
    ),
    (
        "wafer_blocked_vec4",
        include_str!("../../../shaders/wafer_blocked_vec4.wgsl"),
    ),
    (
        "wafer_blocked_lanes",
        include_str!("../../../shaders/wafer_blocked_lanes.wgsl"),
    ),
    (
        "cluster_pack",
        include_str!("../../../shaders/cluster_pack.wgsl"),
    ),
    (
        "cluster_sendrecv",
        include_str!("../../../shaders/cluster_sendrecv.wgsl"),
    ),
    (
        "wafer_compute",
        include_str!("../../../shaders/wafer_compute.wgsl"),
    ),
    (
        "wafer_point",
        include_str!("../../../shaders/wafer_point.wgsl"),
    ),
    (
        "wafer_direct",
        include_str!("../../../shaders/wafer_direct.wgsl"),
    ),
    (
        "point_consts",
        include_str!("../../../shaders/point_consts.wgsl"),
    ),
    (
        "point_window",
        include_str!("../../../shaders/point_window.wgsl"),
    ),
    (
        "wafer_point_direct",
        include_str!("../../../shaders/wafer_point_direct.wgsl"),
    ),
    (
        "wafer_point_edges",
        include_str!("../../../shaders/wafer_point_edges.wgsl"),
    ),
    (
        "global_compute",
        include_str!("../../../shaders/global_compute.wgsl"),
    ),
    (
        "global_rows",
        include_str!("../../../shaders/global_rows.wgsl"),
    ),
    (
        "global_rows_vec4",
        include_str!("../../../shaders/global_rows_vec4.wgsl"),
    ),
    (
        "global_point",
        include_str!("../../../shaders/global_point.wgsl"),
    ),
    (
        "wafer_blocked_point",
        include_str!("../../../shaders/wafer_blocked_point.wgsl"),
    ),
    ("copy", include_str!("../../../shaders/copy.wgsl")),
];

const CLOCKS: &str = include_str!("../../../shaders/clocks.wgsl");

/// The names a source imports, from its `// import` lines.
fn imports(source: &str) -> impl Iterator<Item = &str> {
    source
        .lines()
        .filter_map(|line| line.trim().strip_prefix("// import "))
        .flat_map(str::split_whitespace)
}

/// `main` with everything it imports (recursively, each once, imports first); `kernel` is the
/// source of the name `kernel`.
pub fn compose(main: &str, kernel: Option<&str>) -> String {
    fn visit<'a>(
        source: &'a str,
        kernel: Option<&'a str>,
        done: &mut Vec<&'a str>,
        out: &mut String,
    ) {
        for name in imports(source) {
            if done.contains(&name) {
                continue;
            }
            done.push(name);
            let imported = match name {
                "kernel" => kernel.expect("this shader imports a kernel"),
                _ => library(name),
            };
            visit(imported, kernel, done, out);
        }
        out.push_str(source);
        out.push('\n');
    }
    let mut out = String::new();
    visit(main, kernel, &mut vec![], &mut out);
    out
}

/// An engine shader by import name.
fn library(name: &str) -> &'static str {
    LIBRARY
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no shader named '{name}' to import"))
        .1
}

/// Table 3's `sendrecv` of a cluster's wafers, reading past the wafer edges from the links.
/// Table 3's sendrecv (and the fused engine's `tick`), `cells` cells of a comm line per
/// invocation.
pub fn cluster_sendrecv(cells: u32, keeps_clock: bool) -> String {
    let consts = format!(
        "const SENDRECV_CELLS: u32 = {cells}u;\nconst KEEPS_CLOCK: bool = {keeps_clock};\n"
    );
    compose(library("cluster_sendrecv"), Some(&consts))
}

/// Packing the packages into the links, with time blocks of `remaps` remaps; of an inner
/// state of a block when the blocked `region` starts at that point along x and y (its points
/// from the history).
pub fn cluster_pack(remaps: u32, region: Option<u32>) -> String {
    let consts = format!(
        "const TIME_BLOCK: u32 = {remaps}u;\nconst FROM_HISTORY: bool = {};\nconst REGION_START: u32 = {}u;\n",
        region.is_some(),
        region.unwrap_or(0)
    );
    compose(library("cluster_pack"), Some(&consts))
}

/// The kernel source a stage's driver imports: the kernel's WGSL, and for a Point stage its
/// window origin, the stage function under the name the drivers call and the constants'
/// `pages` with `consts_at`.
fn stage_kernel(spec: &KernelSpec, stage: &Stage, pages: Pages) -> String {
    match stage.driver {
        Driver::Rows3 => spec.wgsl.to_string(),
        Driver::Point => format!(
            "{}\nconst ORIGIN: i32 = {};\nfn stage_point(at: vec2<u32>) -> array<f32, FIELDS> {{\n    return {}(at);\n}}\n{}",
            spec.wgsl,
            stage.origin,
            stage.name,
            pages.wgsl()
        ),
    }
}

/// Table 3's `compute` of one stage on every PE.
pub fn wafer_stage(spec: &KernelSpec, stage: &Stage, pages: Pages) -> String {
    let driver = match stage.driver {
        Driver::Rows3 => "wafer_compute",
        Driver::Point => "wafer_point",
    };
    compose(library(driver), Some(&stage_kernel(spec, stage, pages)))
}

/// The fused engine's direct reads of stage `k` of `spec` (entry `compute_direct`; for a Rows3
/// stage also `compute_direct_columns`, or with `vec4` only `compute_direct_vec4` and the
/// bands of heat's time blocks in registers, `compute_bands`, for the dense grid of
/// `src/engine/gpu/layout.rs` whose rows are whole vec4s; a Point stage then loads its state by
/// vec4s, `QUADS`). An invocation takes a `block` of points: a Rows3 stage's
/// walk its rows, a Point stage's go by runs along its rows (`POINT_RUN`, `POINT_ROWS`).
pub fn wafer_direct(
    spec: &KernelSpec,
    k: usize,
    pages: Pages,
    block: glam::UVec2,
    vec4: bool,
) -> String {
    let kernel = stage_kernel(spec, &spec.stages[k], pages);
    let rows = block.y;
    match (spec.stages[k].driver, vec4) {
        (Driver::Rows3, true) => compose(
            library("wafer_direct_vec4"),
            Some(&format!("{kernel}\nconst DIRECT_ROWS: u32 = {rows}u;\n")),
        ),
        (Driver::Rows3, false) => rows3_direct(&kernel, rows, 2),
        (Driver::Point, quads) => compose(
            library("wafer_point_direct"),
            Some(&format!(
                "{}const QUADS: bool = {quads};\n",
                run_kernel(spec, &kernel, block)
            )),
        ),
    }
}

/// `compute_edges` of stage `k` of `spec`: the points within reach of the wafer's low edges,
/// for a Rows3 stage less its first two rows where the `vec4` reads take them.
pub fn wafer_edges(spec: &KernelSpec, k: usize, pages: Pages, vec4: bool) -> String {
    let kernel = stage_kernel(spec, &spec.stages[k], pages);
    match spec.stages[k].driver {
        Driver::Rows3 => rows3_direct(&kernel, 1, if vec4 { 0 } else { 2 }),
        Driver::Point => {
            let first = k == 0;
            let keep = first && spec.stages.len() > 1;
            compose(
                library("wafer_point_edges"),
                Some(&format!(
                    "{kernel}\nconst FIRST_STAGE: bool = {first};\nconst KEEP_HALO: bool = {keep};\n"
                )),
            )
        }
    }
}

/// `shaders/wafer_direct.wgsl` with `kernel`, its invocations walking `rows` rows, its edges
/// `edge_rows` rows.
fn rows3_direct(kernel: &str, rows: u32, edge_rows: u32) -> String {
    let consts =
        format!("const DIRECT_ROWS: u32 = {rows}u;\nconst EDGE_ROWS: u32 = {edge_rows}u;\n");
    compose(
        library("wafer_direct"),
        Some(&format!("{kernel}\n{consts}")),
    )
}

/// The fused engine's stage `k` of `spec` with blocks of `block` PEs per workgroup and tiles
/// of `cap` values: the driver, the kernel, the block shape, and where `base` reads (the tile at a step's first
/// stage, which then also writes the comm layers that later stages read as `base`).
pub fn wafer_fused(
    spec: &KernelSpec,
    k: usize,
    (block, cap): (glam::UVec2, u32),
    pages: Pages,
    tuning: &Tuning,
) -> String {
    let stage = &spec.stages[k];
    let mut kernel = format!(
        "{}\nconst BLOCK_X: u32 = {}u;\nconst BLOCK_Y: u32 = {}u;\nconst TILE_CAP: u32 = {cap}u;\nconst FUSED_WORKGROUP: u32 = {}u;\nconst FUSED_ROWS: u32 = {}u;\nconst FUSED_COLS: u32 = {}u;\n",
        stage_kernel(spec, stage, pages),
        block.x,
        block.y,
        tuning.fused_invocations,
        tuning.fused_rows,
        tuning.fused_cols
    );
    let driver = match stage.driver {
        Driver::Rows3 => "fused_rows3",
        Driver::Point if k == 0 => {
            kernel += &format!(
                "const WRITE_COMM: bool = {};\nfn base(f: u32, dx: u32, dy: u32) -> f32 {{\n    return cur(f, dx, dy);\n}}\n",
                spec.stages.len() > 1
            );
            "fused_point"
        }
        Driver::Point => {
            kernel += "const WRITE_COMM: bool = false;\n@group(0) @binding(10) var<storage, read> x0: array<f32>;\nfn base(f: u32, dx: u32, dy: u32) -> f32 {\n    return x0[f * wafer.plane + window_at + dy * wafer.stride + dx];\n}\n";
            "fused_point"
        }
    };
    compose(library(driver), Some(&kernel))
}

/// The fused engine's time blocks of `spec` as `plan` lays them out, with the constants in
/// `pages`: the blocked driver, the kernel, and for Point stages `blocked_stage`, the stage
/// function of each remap of a step.
pub fn wafer_blocked(spec: &KernelSpec, plan: &TimeBlock, pages: Pages, tuning: &Tuning) -> String {
    let mut kernel = format!(
        "{}\nconst SPAN_X: u32 = {}u;\nconst SPAN_Y: u32 = {}u;\nconst TIME_BLOCK: u32 = {}u;\nconst TILE_VALUES: u32 = {}u;\nconst TILE_PLANES: u32 = {}u;\nconst PITCH_SPARE: u32 = {}u;\nconst FUSED_WORKGROUP: u32 = {}u;\nconst BLOCK_ROWS: u32 = {}u;\nconst FUSED_COLS: u32 = {}u;\n",
        spec.wgsl,
        plan.span.x,
        plan.span.y,
        crate::blocking::remaps(spec, plan.steps),
        plan.tile_values,
        TimeBlock::planes(spec),
        TimeBlock::pitch_spare(spec),
        tuning.fused_invocations,
        tuning.block_rows,
        tuning.fused_cols,
    );
    let driver = match spec.stages[0].driver {
        Driver::Rows3 => "blocked_rows3",
        Driver::Point => {
            let (last, earlier) = spec.stages.split_last().expect("a kernel has stages");
            kernel += &pages.wgsl();
            kernel += "fn blocked_stage(k: u32, at: vec2<u32>) -> array<f32, FIELDS> {\n";
            for (k, stage) in earlier.iter().enumerate() {
                kernel += &format!(
                    "    if k == {k}u {{\n        return {}(at);\n    }}\n",
                    stage.name
                );
            }
            kernel += &format!("    return {}(at);\n}}\n", last.name);
            "blocked_point"
        }
    };
    kernel += "\n";
    kernel += library(driver);
    compose(library("fused_blocked"), Some(&kernel))
}

/// The fused engine's time blocks carried in registers (`src/engine/gpu/row_blocks.rs`) of `spec`'s
/// one Rows3 stage as `plan` lays them out, blocks walking `rows` rows of the region: by vec4s
/// (`shaders/wafer_blocked_vec4.wgsl`) or across a subgroup's lanes
/// (`shaders/wafer_blocked_lanes.wgsl`).
pub fn wafer_row_blocked(spec: &KernelSpec, plan: &RowBlock, rows: u32) -> String {
    let (driver, levels) = match plan.lanes {
        Some(lanes) => ("wafer_blocked_lanes", plan.lanes_wgsl(lanes)),
        None => ("wafer_blocked_vec4", plan.levels_wgsl()),
    };
    let kernel = format!(
        "{}\nconst DIRECT_ROWS: u32 = {rows}u;\nconst TIME_BLOCK: u32 = {}u;\nconst REGION_START: u32 = {}u;\n{levels}",
        spec.wgsl, plan.steps, plan.band,
    );
    compose(library(driver), Some(&kernel))
}

/// One stage of the global-grid reference kernel; a Rows3 stage with `vec4` rows (`nx` a
/// multiple of `BLOCK_COLS`) loads and stores them in vec4s, a Point stage's invocations take
/// runs of `run.x` points along `run.y` rows, with `vec4` rows (`nx` a multiple of 4) loading
/// them by vec4s.
pub fn global_stage(
    spec: &KernelSpec,
    stage: &Stage,
    pages: Pages,
    vec4: bool,
    run: glam::UVec2,
) -> String {
    let kernel = stage_kernel(spec, stage, pages);
    match stage.driver {
        Driver::Rows3 => {
            let rows = library(if vec4 {
                "global_rows_vec4"
            } else {
                "global_rows"
            });
            compose(
                library("global_compute"),
                Some(&format!("{kernel}\n{rows}")),
            )
        }
        Driver::Point => compose(
            library("global_point"),
            Some(&format!(
                "{}const QUADS: bool = {};\n",
                run_kernel(spec, &kernel, run),
                vec4 && run.x.is_multiple_of(4)
            )),
        ),
    }
}

/// A Point stage's `kernel` for a driver whose invocations take runs of `block.x` points along
/// `block.y` rows, sliding their window of `w + 1` points a side along them
/// (`shaders/point_window.wgsl`).
fn run_kernel(spec: &KernelSpec, kernel: &str, block: glam::UVec2) -> String {
    let window = spec.comm_width + 1;
    format!(
        "{kernel}\nconst POINT_RUN: u32 = {}u;\nconst POINT_ROWS: u32 = {}u;\nconst WINDOW: u32 = {window}u;\nconst WINDOW_ROWS: u32 = {}u;\n{}",
        block.x,
        block.y,
        block.y + window - 1,
        window_row(window)
    )
}

/// `WindowRow`, the vector that holds a row of a window `window` points wide (at most 4), and
/// `slid(v, value)`: `v` one column on, `value` its last.
fn window_row(window: u32) -> &'static str {
    match window {
        4 => "alias WindowRow = vec4<f32>;\nfn slid(v: WindowRow, value: f32) -> WindowRow {\n    return vec4(v.yzw, value);\n}\n",
        _ => "alias WindowRow = vec3<f32>;\nfn slid(v: WindowRow, value: f32) -> WindowRow {\n    var out = vec3(v.y, v.z, 0.0);\n    out[WINDOW - 1u] = value;\n    return out;\n}\n",
    }
}

/// The fused engine's time blocks of Point stages carried in registers
/// (`src/engine/gpu/point_blocks.rs`) of `spec` as `plan` lays them out, invocations walking `rows`
/// rows of the region.
pub fn wafer_point_blocked(
    spec: &KernelSpec,
    plan: &PointBlock,
    pages: Pages,
    rows: u32,
) -> String {
    // How many constant planes and row constants the kernel declares, as naga reads them
    // from one of its composed stages.
    let stage = global_stage(spec, &spec.stages[0], pages, false, glam::UVec2::ONE);
    let consts = const_u32(&stage, "CONSTS").unwrap_or(0);
    let row_consts = const_u32(&stage, "ROW_CONSTS").unwrap_or(0);
    let kernel = format!(
        "{}\n{}\nconst BLOCK_ROWS: u32 = {rows}u;\nconst TIME_BLOCK: u32 = LEVELS;\n{}",
        spec.wgsl,
        pages.wgsl(),
        plan.levels_wgsl(spec, consts, row_consts)
    );
    compose(library("wafer_blocked_point"), Some(&kernel))
}

/// The copy kernel that measures the adapter's bandwidth ceiling.
pub fn copy() -> String {
    compose(library("copy"), None)
}

/// The timing model's clocks (max-plus stencil).
pub fn clocks() -> String {
    compose(CLOCKS, None)
}

/// Every composed shader with a name, for validation.
pub fn all() -> Vec<(String, String)> {
    let mut shaders = vec![
        ("cluster_sendrecv".to_string(), cluster_sendrecv(1, true)),
        (
            "cluster_sendrecv_bands".to_string(),
            cluster_sendrecv(3, false),
        ),
        ("cluster_pack".to_string(), cluster_pack(1, None)),
        ("cluster_pack_inner".to_string(), cluster_pack(3, Some(8))),
        ("copy".to_string(), copy()),
        ("clocks".to_string(), clocks()),
    ];
    // The tile every adapter offers, shaped for a CPU adapter, for a GPU, and by columns.
    let workgroup_bytes = wgpu::Limits::default().max_compute_workgroup_storage_size;
    let cap = super::shard::tile_cap(workgroup_bytes);
    let gpu = Tuning::gpu(workgroup_bytes);
    let tunings = [
        ("", Tuning::cpu_adapter(workgroup_bytes)),
        ("_gpu", gpu),
        (
            "_columns",
            Tuning {
                fused_cols: 1,
                ..gpu
            },
        ),
    ];
    for kind in crate::kernels::KernelKind::ALL {
        let spec = kind.spec();
        for (k, stage) in spec.stages.iter().enumerate() {
            let name = format!("{}/{}", spec.name, stage.name);
            // The constants in one page, and over three.
            for (tag, pages) in [("", Pages::ONE), ("3", Pages { count: 3, bits: 20 })] {
                let block = glam::UVec2::new(4, 3);
                let fused = tunings.iter().map(|(shape, tuning)| {
                    let source = wafer_fused(spec, k, (block, cap), pages, tuning);
                    (format!("fused{shape}"), source)
                });
                // Direct reads take Point windows of at most 3 x 3 (`shard::direct_reads`).
                let direct = stage.driver == Driver::Rows3 || spec.comm_width <= 2;
                let variants = [
                    ("wafer".to_string(), wafer_stage(spec, stage, pages)),
                    (
                        "global".to_string(),
                        global_stage(spec, stage, pages, false, glam::UVec2::new(3, 2)),
                    ),
                ]
                .into_iter()
                .chain(direct.then(|| {
                    let source = wafer_direct(spec, k, pages, glam::UVec2::new(3, 2), false);
                    ("direct".to_string(), source)
                }))
                .chain(fused);
                let vec4 = match stage.driver {
                    Driver::Rows3 => vec![
                        (
                            "global_vec4".to_string(),
                            global_stage(spec, stage, pages, true, glam::UVec2::ONE),
                        ),
                        (
                            "direct_vec4".to_string(),
                            wafer_direct(spec, k, pages, glam::UVec2::new(8, 3), true),
                        ),
                        ("edges_vec4".to_string(), wafer_edges(spec, k, pages, true)),
                    ],
                    Driver::Point if direct => vec![
                        (
                            "direct_quads".to_string(),
                            wafer_direct(spec, k, pages, glam::UVec2::new(16, 3), true),
                        ),
                        ("edges".to_string(), wafer_edges(spec, k, pages, false)),
                        (
                            "global_quads".to_string(),
                            global_stage(spec, stage, pages, true, glam::UVec2::new(16, 3)),
                        ),
                    ],
                    Driver::Point => vec![(
                        "global_quads".to_string(),
                        global_stage(spec, stage, pages, true, glam::UVec2::new(16, 3)),
                    )],
                };
                for (engine, source) in variants.chain(vec4) {
                    shaders.push((format!("{engine}{tag}/{name}"), source));
                }
            }
        }
        let g = crate::wafer::WaferGeometry::new(16, 16, 4, spec.comm_width).unwrap();
        // Tiled time blocks of 3 steps fit the default workgroup memory for every kernel but
        // swe-c, whose 45-point reach leaves no span there (a GPU's larger memory has room).
        let plan = TimeBlock::plan(spec, &g, 3, cap)
            .or_else(|_| TimeBlock::plan(spec, &g, 3, 4 * cap))
            .expect("a 16x16 wafer has a region");
        let rows = RowBlock::plan(spec, &g, 5, None).ok();
        if let Some(rows) = rows.filter(|_| RowBlock::applies(&tunings[0].1, spec, &g)) {
            shaders.push((
                format!("row_blocked/{}", spec.name),
                wafer_row_blocked(spec, &rows, 64),
            ));
            let lanes = RowBlock::plan(spec, &g, 5, Some(32)).expect("a region");
            shaders.push((
                format!("{LANES_PREFIX}{}", spec.name),
                wafer_row_blocked(spec, &lanes, 64),
            ));
        }
        if PointBlock::applies(&tunings[0].1, spec, &g, 3) {
            let points = PointBlock::plan(spec, &g, g.global_size(), 3).expect("a region");
            shaders.push((
                format!("point_blocked/{}", spec.name),
                wafer_point_blocked(spec, &points, Pages { count: 3, bits: 20 }, 64),
            ));
        }
        for (shape, tuning) in &tunings {
            shaders.push((
                format!("blocked{shape}/{}", spec.name),
                wafer_blocked(spec, &plan, Pages::ONE, tuning),
            ));
        }
    }
    shaders
}

/// Group 1 holds one uniform per dispatch, bound at a dynamic offset.
pub const DISPATCH_GROUP: u32 = 1;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::gpu::uniforms::BLOCK_COLS;

    #[test]
    fn shader_block_width_matches_the_dispatch() {
        let block = library("rows3_block");
        let constant = format!("const BLOCK_COLS: u32 = {BLOCK_COLS}u;");
        assert!(
            block.contains(&constant),
            "rows3_block.wgsl lacks `{constant}`"
        );
        let window = block
            .split("struct Window {")
            .nth(1)
            .and_then(|s| s.split('}').next());
        let values = window
            .expect("rows3_block.wgsl defines Window")
            .matches(": f32")
            .count();
        assert_eq!(
            values,
            BLOCK_COLS as usize + 2,
            "Window holds BLOCK_COLS + 2 values"
        );
        let slack = format!(
            "const TILE_SLACK: u32 = {}u;",
            super::super::shard::TILE_SLACK
        );
        assert!(
            library("common").contains(&slack),
            "common.wgsl lacks `{slack}`"
        );
    }

    #[test]
    fn imports_come_first_and_once() {
        let composed = cluster_sendrecv(1, true);
        let common = composed.find("struct Wafer {").unwrap();
        let links = composed.find("fn slot_base").unwrap();
        let main = composed.find("fn sendrecv").unwrap();
        assert!(common < links && links < main);
        assert_eq!(composed.matches("struct Wafer {").count(), 1);
    }
}
