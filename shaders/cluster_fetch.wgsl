// import links
// What sendrecv and the fused engine share: the incoming links, and `fetch`, the value of any
// frame point a PE's window reaches. The importer declares the remapped state `x` (binding 3),
// read_write where it writes comm layers.

@group(0) @binding(4) var<storage, read> up_links: array<f32>;
@group(0) @binding(5) var<storage, read> right_links: array<f32>;

// The value of field f at local frame point (fx, fy), in [-w, W) and [-w, H), of wafer
// `local`.
fn fetch(local: u32, f: u32, fx: i32, fy: i32) -> f32 {
    if fx >= 0 && fy >= 0 {
        return x[owned_index(local, u32(fx), u32(fy)) + f * wafer.plane];
    }
    let k = wafer_ids[local];
    let w = i32(wafer.w);
    if fx >= 0 {
        let cell = u32((fy + w) * i32(cluster.width) + fx);
        return up_links[slot_base(below(k), cluster.up_cells, f) + cell];
    }
    let cell = u32((fy + w) * w + fx + w);
    return right_links[slot_base(left_of(k), cluster.right_cells, f) + cell];
}
