// import common kernel rows3_block
// Table 3's compute of a Rows3 stage on the dispatch's PEs (a rectangle of each of its wafers):
// y[i+w][j+w] = S(x)[i+p][j+p] over the owned n x n points.
// One invocation computes a block of BLOCK_COLS columns by rows_per_thread rows of one PE,
// keeping three rows of BLOCK_COLS + 2 values in registers: per row it loads BLOCK_COLS + 2
// values and stores BLOCK_COLS (`compute`); or one column by rows_per_thread rows,
// neighbouring invocations on neighbouring columns (`compute_columns`). The fused engine's
// direct reads (`wafer_direct.wgsl`) take blocks of the same shape across PEs. The per-cell
// maths `stencil_point` comes from the kernel's file.

@group(0) @binding(0) var<uniform> wafer: Wafer;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(1) @binding(0) var<uniform> dispatch: Dispatch;

// Values k - 1 .. k + BLOCK_COLS of x. Past the end of a row they come from the next row (or
// the spare tail after the last block): their results are never stored.
fn load_window(k: u32) -> Window {
    return Window(x[k - 1u], x[k], x[k + 1u], x[k + 2u], x[k + 3u], x[k + 4u], x[k + 5u], x[k + 6u], x[k + 7u], x[k + 8u]);
}

// Values k - 1, k and k + 1 of x: one column's window row.
fn row3(k: u32) -> vec3<f32> {
    return vec3(x[k - 1u], x[k], x[k + 1u]);
}

// The first SRAM cell of PE `item` of the dispatch (rectangle-major over its wafers).
fn pe_base(item: u32) -> u32 {
    let rect = dispatch.pes;
    let rect_x = rect.z - rect.x;
    let in_rect = rect_x * (rect.w - rect.y);
    let at = item % in_rect;
    let wafer_pe = (rect.y + at / rect_x) * wafer.pes_x + rect.x + at % rect_x;
    return ((dispatch.first + item / in_rect) * wafer.pes_x * wafer.pes_y + wafer_pe) * wafer.block;
}

// The block of `cols` columns (1 or BLOCK_COLS) of invocation `id`: its PE's first SRAM
// cell, its first column and its rows [i0, i1); none (i1 = i0) past the dispatch.
struct Block {
    base: u32,
    j0: u32,
    i0: u32,
    i1: u32,
}

fn block_of(id: u32, cols: u32) -> Block {
    let n = wafer.n;
    let rows = wafer.rows_per_thread;
    let col_blocks = (n + cols - 1u) / cols;
    let per_pe = col_blocks * ((n + rows - 1u) / rows);
    let rect = dispatch.pes;
    let item = id / per_pe;
    if item >= dispatch.count * (rect.z - rect.x) * (rect.w - rect.y) {
        return Block(0u, 0u, 0u, 0u);
    }
    let i0 = (id % per_pe) / col_blocks * rows;
    return Block(pe_base(item), id % col_blocks * cols, i0, min(i0 + rows, n));
}

@compute @workgroup_size(64)
fn compute_columns(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = block_of(linear_id(gid, groups), 1u);
    if b.i0 >= b.i1 {
        return;
    }
    let stride = wafer.stride;
    // Centre of the first window: row i0 + 1, column j0 + 1 (a Rows3 stage has w = 2).
    var k = b.base + (b.i0 + 1u) * stride + b.j0 + 1u;
    var below = row3(k - stride);
    var mid = row3(k);
    var out = b.base + (b.i0 + wafer.w) * stride + b.j0 + wafer.w;
    for (var i = b.i0; i < b.i1; i++) {
        k += stride;
        let above = row3(k);
        y[out] = stencil_point(params, below, mid, above);
        out += stride;
        below = mid;
        mid = above;
    }
}

// Stores the first `count` (at most BLOCK_COLS) of `fresh` at `o`, `o + 1`, ...
fn store_run(o: u32, fresh: array<f32, 8>, count: u32) {
    if count == BLOCK_COLS {
        y[o] = fresh[0]; y[o + 1u] = fresh[1]; y[o + 2u] = fresh[2]; y[o + 3u] = fresh[3];
        y[o + 4u] = fresh[4]; y[o + 5u] = fresh[5]; y[o + 6u] = fresh[6]; y[o + 7u] = fresh[7];
    } else {
        for (var c = 0u; c < count; c++) {
            y[o + c] = fresh[c];
        }
    }
}

@compute @workgroup_size(64)
fn compute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = block_of(linear_id(gid, groups), BLOCK_COLS);
    if b.i0 >= b.i1 {
        return;
    }
    var k = b.base + b.i0 * wafer.stride + b.j0 + 1u;
    var below = load_window(k);
    k += wafer.stride;
    var mid = load_window(k);
    var out = b.base + (b.i0 + wafer.w) * wafer.stride + b.j0 + wafer.w;
    let count = min(BLOCK_COLS, wafer.n - b.j0);
    for (var i = b.i0; i < b.i1; i++) {
        k += wafer.stride;
        let above = load_window(k);
        store_run(out, update_block(params, below, mid, above), count);
        out += wafer.stride;
        below = mid;
        mid = above;
    }
}
