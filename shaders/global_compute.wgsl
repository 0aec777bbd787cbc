// The plain global-grid kernel: no PEs, no translation, periodic edges. The reference the
// emulated wafer must equal bit for bit; it calls the same `stencil_point`.

@group(0) @binding(0) var<uniform> grid: Grid;
@group(0) @binding(1) var<uniform> weights: Weights;
@group(0) @binding(2) var<storage, read> u: array<f32>;
@group(0) @binding(3) var<storage, read_write> v: array<f32>;

fn load_row(row: u32, left: u32, centre: u32, right: u32) -> vec3<f32> {
    let base = row * grid.nx;
    return vec3<f32>(u[base + left], u[base + centre], u[base + right]);
}

@compute @workgroup_size(64)
fn compute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let id = linear_id(gid, groups);
    let x = id % grid.nx;
    let i0 = id / grid.nx * grid.rows_per_thread;
    if i0 >= grid.ny {
        return;
    }
    let i1 = min(i0 + grid.rows_per_thread, grid.ny);
    let left = (x + grid.nx - 1u) % grid.nx;
    let right = (x + 1u) % grid.nx;
    var below = load_row((i0 + grid.ny - 1u) % grid.ny, left, x, right);
    var mid = load_row(i0, left, x, right);
    let w = weights;
    for (var i = i0; i < i1; i++) {
        let above = load_row((i + 1u) % grid.ny, left, x, right);
        v[i * grid.nx + x] = stencil_point(w, below, mid, above);
        below = mid;
        mid = above;
    }
}
