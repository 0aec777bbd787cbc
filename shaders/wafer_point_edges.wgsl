// import fetch kernel point_consts
// The fused engine's direct reads of a Point stage at the points within w of the wafer's low
// edges (`compute_edges`, after `compute_direct` took the rest): their windows reach past the
// edges, so every value of the remapped state comes through `fetch` (from the incoming links
// past them), and `base` past them from the halo. The step's first stage also keeps the halo
// (KEEP_HALO): the values past the low edges that it fetched, for the later stages' `base`
// (the step's start, whose link slots a later remap may have overwritten). Table 3 keeps them
// in the comm layers, which the dense grid has not.

@group(0) @binding(3) var<storage, read> x: array<f32>;
@group(0) @binding(6) var<storage, read> clock: array<vec4<u32>>;
@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> y: array<f32>;
@group(0) @binding(9) var<storage, read> x0: array<f32>;
@group(0) @binding(10) var<storage, read_write> halo: array<f32>;

// The window's lower-left frame point (below or left of the wafer where negative) and wafer.
var<private> window_at: vec2<i32>;
var<private> window_wafer: u32;

fn cur(f: u32, dx: u32, dy: u32) -> f32 {
    return fetch(window_wafer, f, window_at.x + i32(dx), window_at.y + i32(dy));
}

// Cells per field and wafer of the halo: w rows below the wafer (from x = -w), then w columns
// left of it.
fn halo_cells() -> u32 {
    let size = dispatch.pes.zw * wafer.n;
    return wafer.w * (size.x + size.y + wafer.w);
}

// The halo cell of frame point `q` past the low edges (field 0).
fn halo_index(local: u32, q: vec2<i32>) -> u32 {
    let w = i32(wafer.w);
    let width = i32(dispatch.pes.z * wafer.n) + w;
    let i = select(w * width + q.y * w + q.x + w, (q.y + w) * width + q.x + w, q.y < 0);
    return local * FIELDS * halo_cells() + u32(i);
}

// At the step's first stage the step's start is the remapped state itself.
fn base(f: u32, dx: u32, dy: u32) -> f32 {
    if FIRST_STAGE {
        return cur(f, dx, dy);
    }
    let q = window_at + vec2(i32(dx), i32(dy));
    if all(q >= vec2(0)) {
        return x0[owned_index(window_wafer, u32(q.x), u32(q.y)) + f * wafer.plane];
    }
    return halo[halo_index(window_wafer, q) + f * halo_cells()];
}

// One invocation per point within w of the low edges (the first w rows, then the first w
// columns above them), and with KEEP_HALO one per halo cell, for a dispatch over the whole
// wafer.
@compute @workgroup_size(64)
fn compute_edges(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let size = dispatch.pes.zw * wafer.n;
    let w = wafer.w;
    let points = low_edge_points(size, w, w);
    let kept = select(0u, halo_cells(), KEEP_HALO);
    let item = split_id(linear_id(gid, groups), points + kept);
    if item.x >= dispatch.first + dispatch.count {
        return;
    }
    let local = item.x;
    let i = item.y;
    if i >= points {
        keep_halo(local, i - points);
        return;
    }
    let p = low_edge_point(i, size, w, w);
    window_wafer = local;
    window_at = vec2<i32>(p) - i32(w);
    let fresh = stage_point(global_point(clock[local].yz, p));
    let out = owned_index(local, p.x, p.y);
    for (var f = 0u; f < FIELDS; f++) {
        y[out + f * wafer.plane] = fresh[f];
    }
}

// Halo cell `i` of wafer `local`: every field's value there, fetched.
fn keep_halo(local: u32, i: u32) {
    let w = wafer.w;
    let width = dispatch.pes.z * wafer.n + w;
    let below = w * width;
    let q = select(vec2<i32>(vec2((i - below) % w, (i - below) / w)) - vec2(i32(w), 0), vec2<i32>(vec2(i % width, i / width)) - i32(w), i < below);
    for (var f = 0u; f < FIELDS; f++) {
        halo[halo_index(local, q) + f * halo_cells()] = fetch(local, f, q.x, q.y);
    }
}
