// import links
// Table 3's sendrecv on every PE of the dispatch's wafers: each comm-layer cell of every state
// field receives the grid point with the same frame coordinate. Points on the same wafer come
// from its owned cells (to the left and/or below, possibly several PEs away when n < w);
// points past the wafer's low edges come from the incoming links (src/cluster/package.rs
// `receive` is the CPU twin). One invocation fills one field of one PE's comm layer; the one
// for PE 0, field 0 also keeps the wafer's `clock` (for the point drivers): its remaps and the
// global point its frame origin holds after them.

@group(0) @binding(3) var<storage, read_write> field: array<f32>;
@group(0) @binding(4) var<storage, read> up_links: array<f32>;
@group(0) @binding(5) var<storage, read> right_links: array<f32>;
@group(0) @binding(6) var<storage, read_write> clock: array<vec4<u32>>;

// Translation of the grid after `remaps` remaps.
fn shift_after(remaps: u32) -> u32 {
    return remaps / wafer.stages * wafer.shift_per_step + wafer.partial[remaps % wafer.stages];
}

// The clock of wafer `k` after `remaps` remaps: the count, then the global point of its frame
// origin, `(frame origin - shift) mod (nx, ny)`.
fn clock_after(k: u32, remaps: u32) -> vec4<u32> {
    let shift = shift_after(remaps);
    let wy = k / cluster.wafers_x;
    let x0 = (k - wy * cluster.wafers_x) * cluster.width;
    let y0 = wy * cluster.height;
    let gx = (x0 + wafer.nx - shift % wafer.nx) % wafer.nx;
    let gy = (y0 + wafer.ny - shift % wafer.ny) % wafer.ny;
    return vec4<u32>(remaps, gx, gy, 0u);
}

// The value of field f at local frame point (x, y), x and y in [-w, W) and [-w, H), of wafer
// `local`.
fn fetch(local: u32, f: u32, x: i32, y: i32) -> f32 {
    if x >= 0 && y >= 0 {
        return field[owned_index(local, u32(x), u32(y)) + f * wafer.plane];
    }
    let k = wafer_ids[local];
    let w = i32(wafer.w);
    if x >= 0 {
        let cell = u32((y + w) * i32(cluster.width) + x);
        return up_links[slot_base(below(k), cluster.up_cells, f) + cell];
    }
    let cell = u32((y + w) * w + x + w);
    return right_links[slot_base(left_of(k), cluster.right_cells, f) + cell];
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
        let y = y0 + i32(line);
        let out = base + line * stride;
        for (var j = 0u; j < w; j++) {
            field[out + j] = fetch(local, f, x0 + i32(j), y);
        }
        if y >= 0 {
            let row = plane + owned_index(local, px * n, u32(y)) - w;
            for (var j = w; j < stride; j++) {
                field[out + j] = field[row + j];
            }
        } else {
            let row = slot_base(below(k), cluster.up_cells, f) + u32(y + i32(w)) * cluster.width + px * n - w;
            for (var j = w; j < stride; j++) {
                field[out + j] = up_links[row + j];
            }
        }
        // Column `line` of the left strip, rows [w, n + w): one column of the same PE row, or
        // of the right package from the wafer to the left.
        let x = x0 + i32(line);
        if x >= 0 {
            let column = plane + owned_index(local, u32(x), py * n) - w * stride;
            for (var i = w; i < stride; i++) {
                field[base + i * stride + line] = field[column + i * stride];
            }
        } else {
            let column = slot_base(left_of(k), cluster.right_cells, f) + py * n * w + u32(x + i32(w));
            for (var i = w; i < stride; i++) {
                field[base + i * stride + line] = right_links[column + i * w];
            }
        }
    }
}
