// import fetch wafer_clock kernel
// Table 3's sendrecv on the dispatch's PEs: each comm-layer cell of every state
// field receives the grid point with the same frame coordinate (`fetch`). Points on the same
// wafer come from its owned cells (to the left and/or below, possibly several PEs away when
// n < w); points past the wafer's low edges come from the incoming links (src/cluster/
// package.rs `receive` is the CPU twin), by PE (`sendrecv`) or by SENDRECV_CELLS cells of a
// comm line (`sendrecv_cells`), as the adapter's tuning says; with KEEPS_CLOCK the first
// invocation of each wafer also keeps its `clock` (for the point drivers; the fused engine's
// direct reads of Point stages run it without on their link bands, after `tick`).
// `tick` keeps only the clocks, for the fused engine.

@group(0) @binding(3) var<storage, read_write> x: array<f32>;
@group(0) @binding(6) var<storage, read_write> clock: array<vec4<u32>>;

@compute @workgroup_size(64)
fn tick(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let item = split_id(linear_id(gid, groups), 1u);
    if item.x >= dispatch.first + dispatch.count {
        return;
    }
    clock[item.x] = clock_after(wafer_ids[item.x], clock[item.x].x + 1u);
}

// Where PE `pe` (of wafer `local`, field `f`) keeps its comm layer.
struct CommLayer {
    local: u32,
    f: u32,
    base: u32,
    px: u32,
    py: u32,
}

// PE `i` of the dispatch's rectangle.
fn comm_layer(local: u32, f: u32, i: u32) -> CommLayer {
    let rect = dispatch.pes;
    let width = rect.z - rect.x;
    let at = rect.xy + vec2(i % width, i / width);
    let pe = at.y * wafer.pes_x + at.x;
    let base = f * wafer.plane + local * cluster.wafer_cells + pe * wafer.block;
    return CommLayer(local, f, base, at.x, at.y);
}

// PEs in the dispatch's rectangle.
fn rect_pes() -> u32 {
    let rect = dispatch.pes;
    return (rect.z - rect.x) * (rect.w - rect.y);
}

// Cells [t0, t1) of row `line` of the lower strip: the first w columns may lie to the left;
// the others are the owned columns of the same PE column, one row of the PE below or of the
// up package from the wafer below.
fn lower_row(l: CommLayer, line: u32, t0: u32, t1: u32) {
    let n = wafer.n;
    let w = wafer.w;
    let fy = i32(l.py * n + line) - i32(w);
    let out = l.base + line * wafer.stride;
    for (var j = t0; j < min(t1, w); j++) {
        x[out + j] = fetch(l.local, l.f, i32(l.px * n + j) - i32(w), fy);
    }
    if fy >= 0 {
        let row = l.f * wafer.plane + owned_index(l.local, l.px * n, u32(fy)) - w;
        for (var j = max(t0, w); j < t1; j++) {
            x[out + j] = x[row + j];
        }
    } else {
        let k = wafer_ids[l.local];
        let row = slot_base(below(k), cluster.up_cells, l.f) + u32(fy + i32(w)) * cluster.width + l.px * n - w;
        for (var j = max(t0, w); j < t1; j++) {
            x[out + j] = up_links[row + j];
        }
    }
}

// Rows [w + t0, w + t1) of column `c` of the left strip: one column of the same PE row, or
// of the right package from the wafer to the left.
fn left_column(l: CommLayer, c: u32, t0: u32, t1: u32) {
    let n = wafer.n;
    let w = wafer.w;
    let stride = wafer.stride;
    let fx = i32(l.px * n + c) - i32(w);
    if fx >= 0 {
        let column = l.f * wafer.plane + owned_index(l.local, u32(fx), l.py * n) - w * stride;
        for (var i = w + t0; i < w + t1; i++) {
            x[l.base + i * stride + c] = x[column + i * stride];
        }
    } else {
        let k = wafer_ids[l.local];
        let column = slot_base(left_of(k), cluster.right_cells, l.f) + l.py * n * w + u32(fx + i32(w));
        for (var i = w + t0; i < w + t1; i++) {
            x[l.base + i * stride + c] = right_links[column + i * w];
        }
    }
}

// One invocation per field of a PE: its whole comm layer (a CPU adapter's SIMD lanes take
// neighbouring PEs).
@compute @workgroup_size(64)
fn sendrecv(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pes = rect_pes();
    let item = split_id(linear_id(gid, groups), pes * cluster.fields);
    if item.x >= dispatch.first + dispatch.count {
        return;
    }
    if KEEPS_CLOCK && item.y == 0u {
        clock[item.x] = clock_after(wafer_ids[item.x], clock[item.x].x + 1u);
    }
    let l = comm_layer(item.x, item.y / pes, item.y % pes);
    for (var line = 0u; line < wafer.w; line++) {
        lower_row(l, line, 0u, wafer.stride);
        left_column(l, line, 0u, wafer.n);
    }
}

// One invocation per SENDRECV_CELLS cells of one comm line (a lower row or a left column) of
// one field of one PE (a GPU's invocations each copy one cell, neighbours neighbouring ones).
@compute @workgroup_size(64)
fn sendrecv_cells(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pes = rect_pes();
    let w = wafer.w;
    let chunks = (wafer.stride + SENDRECV_CELLS - 1u) / SENDRECV_CELLS;
    let per_pe = 2u * w * chunks;
    let item = split_id(linear_id(gid, groups), pes * cluster.fields * per_pe);
    if item.x >= dispatch.first + dispatch.count {
        return;
    }
    if KEEPS_CLOCK && item.y == 0u {
        clock[item.x] = clock_after(wafer_ids[item.x], clock[item.x].x + 1u);
    }
    let pe_field = item.y / per_pe;
    let job = item.y - pe_field * per_pe;
    let l = comm_layer(item.x, pe_field / pes, pe_field % pes);
    let line = job / chunks;
    let t0 = (job - line * chunks) * SENDRECV_CELLS;
    if line < w {
        lower_row(l, line, t0, min(t0 + SENDRECV_CELLS, wafer.stride));
    } else {
        left_column(l, line - w, t0, min(t0 + SENDRECV_CELLS, wafer.n));
    }
}
