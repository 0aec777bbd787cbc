// import fetch wafer_clock
// Table 3's sendrecv on every PE of the dispatch's wafers: each comm-layer cell of every state
// field receives the grid point with the same frame coordinate (`fetch`). Points on the same
// wafer come from its owned cells (to the left and/or below, possibly several PEs away when
// n < w); points past the wafer's low edges come from the incoming links (src/cluster/
// package.rs `receive` is the CPU twin). One invocation fills one field of one PE's comm
// layer; the one for PE 0, field 0 also keeps the wafer's `clock` (for the point drivers).
// `tick` keeps only the clocks, for the fused engine.

@group(0) @binding(6) var<storage, read_write> clock: array<vec4<u32>>;

@compute @workgroup_size(64)
fn tick(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let item = split_id(linear_id(gid, groups), 1u);
    if item.x >= dispatch.first + dispatch.count {
        return;
    }
    clock[item.x] = clock_after(wafer_ids[item.x], clock[item.x].x + 1u);
}

@compute @workgroup_size(64)
fn sendrecv(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pes = wafer.pes_x * wafer.pes_y;
    let item = split_id(linear_id(gid, groups), pes * cluster.fields);
    if item.x >= dispatch.first + dispatch.count {
        return;
    }
    let local = item.x;
    let pe = item.y % pes;
    let f = item.y / pes;
    let k = wafer_ids[local];
    if item.y == 0u {
        clock[local] = clock_after(k, clock[local].x + 1u);
    }
    let n = wafer.n;
    let w = wafer.w;
    let stride = wafer.stride;
    let plane = f * wafer.plane;
    let base = plane + local * cluster.wafer_cells + pe * wafer.block;
    let px = pe % wafer.pes_x;
    let py = pe / wafer.pes_x;
    // Frame coordinates of the PE's cell (0, 0).
    let x0 = i32(px * n) - i32(w);
    let y0 = i32(py * n) - i32(w);
    for (var line = 0u; line < w; line++) {
        // Row `line` of the lower strip: the first w columns may lie to the left; the others
        // are the owned columns of the same PE column, one row of the PE below or of the up
        // package from the wafer below.
        let fy = y0 + i32(line);
        let out = base + line * stride;
        for (var j = 0u; j < w; j++) {
            x[out + j] = fetch(local, f, x0 + i32(j), fy);
        }
        if fy >= 0 {
            let row = plane + owned_index(local, px * n, u32(fy)) - w;
            for (var j = w; j < stride; j++) {
                x[out + j] = x[row + j];
            }
        } else {
            let row = slot_base(below(k), cluster.up_cells, f) + u32(fy + i32(w)) * cluster.width + px * n - w;
            for (var j = w; j < stride; j++) {
                x[out + j] = up_links[row + j];
            }
        }
        // Column `line` of the left strip, rows [w, n + w): one column of the same PE row, or
        // of the right package from the wafer to the left.
        let fx = x0 + i32(line);
        if fx >= 0 {
            let column = plane + owned_index(local, u32(fx), py * n) - w * stride;
            for (var i = w; i < stride; i++) {
                x[base + i * stride + line] = x[column + i * stride];
            }
        } else {
            let column = slot_base(left_of(k), cluster.right_cells, f) + py * n * w + u32(fx + i32(w));
            for (var i = w; i < stride; i++) {
                x[base + i * stride + line] = right_links[column + i * w];
            }
        }
    }
}
