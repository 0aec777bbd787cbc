// import common global_grid kernel point_window
// The plain global-grid kernel of a Point stage: no PEs, no translation, periodic edges. One
// invocation per POINT_RUN points along POINT_ROWS rows (composed in) calls the kernel's
// stage function at each, whose window starts ORIGIN points below-left of the point (the
// stage's `origin`, a constant composed in); the run keeps its window in registers
// (shaders/point_window.wgsl). With QUADS (rows of whole vec4s) a run is that of the points
// whose new window columns are POINT_RUN columns from a multiple of it, loaded four at a time.
// The window's rows are global (the constants'); its state lies in the band's `stored_ys`.

@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read> x0: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<storage, read> x4: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> x0_4: array<vec4<f32>>;

// Columns from a point to its window's last.
const LEAD: u32 = u32(ORIGIN + i32(WINDOW) - 1);

// The rows of the band's buffers that hold the window's rows.
var<private> stored_ys: array<u32, WINDOW_ROWS>;

fn state_value(f: u32, dy: u32) -> f32 {
    return x[f * grid.plane + stored_ys[dy] * grid.nx + next_column];
}

fn state_quad(f: u32, dy: u32) -> vec4<f32> {
    return x4[(f * grid.plane + stored_ys[dy] * grid.nx + next_column) / 4u];
}

fn base_value(f: u32, dy: u32) -> f32 {
    return x0[f * grid.plane + stored_ys[dy] * grid.nx + next_column];
}

fn base_quad(f: u32, dy: u32) -> vec4<f32> {
    return x0_4[(f * grid.plane + stored_ys[dy] * grid.nx + next_column) / 4u];
}

// Computes and stores point x of each of the run's rows from `row`, those inside the grid.
fn store_rows(x: u32, row: u32) {
    for (var r = 0u; r < POINT_ROWS; r++) {
        point_row = r;
        if row + r < grid.first + grid.rows {
            let fresh = stage_point(vec2(x, row + r));
            let at = stored_row(row + r) * grid.nx + x;
            for (var f = 0u; f < FIELDS; f++) {
                y[f * grid.plane + at] = fresh[f];
            }
        }
    }
}

@compute @workgroup_size(64)
fn compute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let id = linear_id(gid, groups);
    let runs = (grid.nx + POINT_RUN - 1u) / POINT_RUN;
    let row_runs = (grid.rows + POINT_ROWS - 1u) / POINT_ROWS;
    if id >= runs * row_runs {
        return;
    }
    let run_row = id / runs;
    let row = grid.first + run_row * POINT_ROWS;
    let first = (id - run_row * runs) * POINT_RUN;
    let end = min(first + POINT_RUN, grid.nx);
    let size = vec2(grid.nx, grid.ny);
    // With QUADS the run's new columns are first .. end, its points LEAD columns before them.
    let first_point = select(first, torus(first, grid.nx - LEAD, grid.nx), QUADS);
    enter_run(window_corner(vec2(first_point, row), size), size);
    for (var dy = 0u; dy < WINDOW_ROWS; dy++) {
        stored_ys[dy] = stored_row(window_ys[dy]);
    }
    for (var dx = 0u; dx + 1u < WINDOW; dx++) {
        push_column();
    }
    if QUADS {
        for (var c = first; c < end; c += 4u) {
            load_quads();
            for (var lane = 0u; lane < 4u; lane++) {
                push_lane(lane);
                store_rows(torus(c + lane, grid.nx - LEAD, grid.nx), row);
            }
        }
        return;
    }
    for (var at_x = first; at_x < end; at_x++) {
        push_column();
        store_rows(at_x, row);
    }
}
