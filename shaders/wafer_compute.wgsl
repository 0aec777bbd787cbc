// Table 3's compute on every PE: y[i+w][j+w] = S(x)[i+p][j+p] over the owned n x n points.
// One invocation walks rows_per_thread rows of one column with a rolling window of rows.
// The per-cell maths `stencil_point` comes from the kernel's own file.

@group(0) @binding(0) var<uniform> wafer: Wafer;
@group(0) @binding(1) var<uniform> weights: Weights;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

fn load_row(k: u32) -> vec3<f32> {
    return vec3<f32>(x[k - 1u], x[k], x[k + 1u]);
}

@compute @workgroup_size(64)
fn compute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let id = linear_id(gid, groups);
    let chunks = (wafer.n + wafer.rows_per_thread - 1u) / wafer.rows_per_thread;
    let per_pe = wafer.n * chunks;
    let pe = id / per_pe;
    if pe >= wafer.pes_x * wafer.pes_y {
        return;
    }
    let j = id % wafer.n;
    let i0 = (id % per_pe) / wafer.n * wafer.rows_per_thread;
    let i1 = min(i0 + wafer.rows_per_thread, wafer.n);
    let base = pe * wafer.block;
    let stride = wafer.stride;
    // Centre of the first window: row i0 + p, column j + p.
    var k = base + (i0 + wafer.p) * stride + j + wafer.p;
    var below = load_row(k - stride);
    var mid = load_row(k);
    var out = base + (i0 + wafer.w) * stride + j + wafer.w;
    let w = weights;
    for (var i = i0; i < i1; i++) {
        k += stride;
        let above = load_row(k);
        y[out] = stencil_point(w, below, mid, above);
        out += stride;
        below = mid;
        mid = above;
    }
}
