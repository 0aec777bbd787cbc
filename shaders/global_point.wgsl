// import common kernel point_window
// The plain global-grid kernel of a Point stage: no PEs, no translation, periodic edges. One
// invocation per POINT_RUN (composed in) points along a row calls the kernel's stage function
// at each, whose window starts ORIGIN points below-left of the point (the stage's `origin`, a
// constant composed in); the run keeps its window in registers (shaders/point_window.wgsl).

@group(0) @binding(0) var<uniform> grid: Grid;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read> x0: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

// The window's lower-left point, and the column being loaded.
var<private> window_x: u32;
var<private> window_y: u32;
var<private> loading: u32;

fn state_value(f: u32, dy: u32) -> f32 {
    return x[f * grid.plane + window_ys[dy] * grid.nx + loading];
}

fn base(f: u32, dx: u32, dy: u32) -> f32 {
    return x0[f * grid.plane + torus(window_y, dy, grid.ny) * grid.nx + torus(window_x, dx, grid.nx)];
}

@compute @workgroup_size(64)
fn compute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let id = linear_id(gid, groups);
    let runs = (grid.nx + POINT_RUN - 1u) / POINT_RUN;
    if id >= runs * grid.ny {
        return;
    }
    let row = id / runs;
    let first = (id - row * runs) * POINT_RUN;
    // ORIGIN is in [-w, 0]: add one turn of the torus to stay unsigned.
    window_y = torus(row, u32(i32(grid.ny) + ORIGIN), grid.ny);
    enter_rows(window_y, grid.ny);
    window_x = torus(first, u32(i32(grid.nx) + ORIGIN), grid.nx);
    loading = window_x;
    for (var dx = 0u; dx + 1u < WINDOW; dx++) {
        push_column(loading);
        loading = torus(loading, 1u, grid.nx);
    }
    for (var at_x = first; at_x < min(first + POINT_RUN, grid.nx); at_x++) {
        push_column(loading);
        loading = torus(loading, 1u, grid.nx);
        let fresh = stage_point(vec2(at_x, row));
        for (var f = 0u; f < FIELDS; f++) {
            y[f * grid.plane + row * grid.nx + at_x] = fresh[f];
        }
        window_x = torus(window_x, 1u, grid.nx);
    }
}
