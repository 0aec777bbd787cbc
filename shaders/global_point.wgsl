// import common kernel
// The plain global-grid kernel of a Point stage: no PEs, no translation, periodic edges. One
// invocation per point calls the kernel's stage function, whose window starts ORIGIN points
// below-left of the point (the stage's `origin`, a constant composed in).

@group(0) @binding(0) var<uniform> grid: Grid;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read> x0: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

// The window's lower-left point.
var<private> window_x: u32;
var<private> window_y: u32;

// The window lies within one turn of the torus of the point: wrap by one subtraction.
fn wrap(i: u32, size: u32) -> u32 {
    return select(i, i - size, i >= size);
}

fn window_index(dx: u32, dy: u32) -> u32 {
    return wrap(window_y + dy, grid.ny) * grid.nx + wrap(window_x + dx, grid.nx);
}

fn cur(f: u32, dx: u32, dy: u32) -> f32 {
    return x[f * grid.plane + window_index(dx, dy)];
}

fn base(f: u32, dx: u32, dy: u32) -> f32 {
    return x0[f * grid.plane + window_index(dx, dy)];
}

@compute @workgroup_size(64)
fn compute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let id = linear_id(gid, groups);
    if id >= grid.plane {
        return;
    }
    let row = id / grid.nx;
    let at = vec2<u32>(id - row * grid.nx, row);
    // ORIGIN is in [-w, 0]: add one turn of the torus to stay unsigned.
    window_x = wrap(u32(i32(at.x + grid.nx) + ORIGIN), grid.nx);
    window_y = wrap(u32(i32(at.y + grid.ny) + ORIGIN), grid.ny);
    let fresh = stage_point(at);
    for (var f = 0u; f < FIELDS; f++) {
        y[f * grid.plane + id] = fresh[f];
    }
}
