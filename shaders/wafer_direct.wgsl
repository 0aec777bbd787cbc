// import fetch wafer_clock kernel rows3_block
// The fused engine's direct reads (`fused=direct`) of a Rows3 stage: the owned points of the
// dispatch's rectangle taken as one grid, each invocation BLOCK_COLS of its columns
// (`compute_direct`) or one (`compute_direct_columns`, neighbouring invocations on
// neighbouring columns) by DIRECT_ROWS of its rows, wherever the PEs' edges fall. Output point
// (c, r) reads the frame points c - 2 .. c, r - 2 .. r, each from the owned cell of whichever
// PE holds it. The points within 2 of the wafer's low edges read past them: `compute_edges`
// takes those, every window value through `fetch` (from the incoming links past the edges),
// so no PE needs a sendrecv, and keeps each wafer's clock. No workgroup memory and no barrier (on lavapipe a barrier makes
// every per-lane loop of a shader keep its state in memory); the edges are their own entry,
// since their loads in the others' code ran those 1.8x slower on lavapipe.

@group(0) @binding(3) var<storage, read> x: array<f32>;
@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> y: array<f32>;
@group(0) @binding(6) var<storage, read_write> clock: array<vec4<u32>>;

// Values of the frame points (fx .. fx + 2, fy) of wafer `local`: one window row, any point.
fn fetch_row3(local: u32, fx: i32, fy: i32) -> vec3<f32> {
    return vec3(fetch(local, 0u, fx, fy), fetch(local, 0u, fx + 1, fy), fetch(local, 0u, fx + 2, fy));
}

// One invocation per point within 2 of the wafer's low edges (its first EDGE_ROWS rows, 2 or
// none where the vec4 reads take them, then the first two columns above them), and one more
// per wafer for its clock tick (the fused engine has no sendrecv to keep it), for a dispatch
// over the whole wafer.
@compute @workgroup_size(64)
fn compute_edges(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let size = dispatch.pes.zw * wafer.n;
    let points = low_edge_points(size, EDGE_ROWS, 2u);
    let item = split_id(linear_id(gid, groups), points + 1u);
    if item.x >= dispatch.first + dispatch.count {
        return;
    }
    let i = item.y;
    if i == points {
        clock[item.x] = clock_after(wafer_ids[item.x], clock[item.x].x + 1u);
        return;
    }
    let p = low_edge_point(i, size, EDGE_ROWS, 2u);
    let f = vec2<i32>(p) - 2;
    let local = item.x;
    y[owned_index(local, p.x, p.y)] = stencil_point(params, fetch_row3(local, f.x, f.y), fetch_row3(local, f.x, f.y + 1), fetch_row3(local, f.x, f.y + 2));
}

// Block `id` of `size` points of the grid, less the points `compute_edges` takes: its wafer,
// its first point and its end (the rectangle's edges cut it); none (at = end) past the
// dispatch.
struct DirectBlock {
    local: u32,
    at: vec2<u32>,
    end: vec2<u32>,
}

fn direct_block(id: u32, size: vec2<u32>) -> DirectBlock {
    let b = grid_block(id, size);
    if b.local >= dispatch.first + dispatch.count {
        return DirectBlock(b.local, b.at, b.at);
    }
    return DirectBlock(b.local, max(b.at, vec2(2u)), min(b.at + size, dispatch.pes.zw * wafer.n));
}

// SRAM offsets, within a row of PEs, of the 10 window columns from owned column `c0` - 2 on.
struct WindowColumns {
    lo: vec4<u32>,
    mid: vec4<u32>,
    hi: vec2<u32>,
}

// Window columns past the wafer read its last column: their results are never stored.
fn window_column(c: u32) -> u32 {
    return column_at(min(c, wafer.pes_x * wafer.n - 1u)).cell;
}

fn window_columns(c0: u32) -> WindowColumns {
    let c = c0 - 2u;
    return WindowColumns(
        vec4(window_column(c), window_column(c + 1u), window_column(c + 2u), window_column(c + 3u)),
        vec4(window_column(c + 4u), window_column(c + 5u), window_column(c + 6u), window_column(c + 7u)),
        vec2(window_column(c + 8u), window_column(c + 9u)),
    );
}

fn gather_window(row: u32, cols: WindowColumns) -> Window {
    return Window(x[row + cols.lo.x], x[row + cols.lo.y], x[row + cols.lo.z], x[row + cols.lo.w],
        x[row + cols.mid.x], x[row + cols.mid.y], x[row + cols.mid.z], x[row + cols.mid.w],
        x[row + cols.hi.x], x[row + cols.hi.y]);
}

// The values at SRAM offsets `cols` of the row of PEs at `row`: one column's window row.
fn gather_row3(row: u32, cols: vec3<u32>) -> vec3<f32> {
    return vec3(x[row + cols.x], x[row + cols.y], x[row + cols.z]);
}

// Stores the first `count` of `fresh`, the owned columns c0 .. c0 + BLOCK_COLS - 1 (window
// columns 2 to 9), in the row of PEs at `row`.
fn scatter_run(row: u32, cols: WindowColumns, c0: u32, fresh: array<f32, 8>, count: u32) {
    if count == BLOCK_COLS {
        y[row + cols.lo.z] = fresh[0]; y[row + cols.lo.w] = fresh[1]; y[row + cols.mid.x] = fresh[2];
        y[row + cols.mid.y] = fresh[3]; y[row + cols.mid.z] = fresh[4]; y[row + cols.mid.w] = fresh[5];
        y[row + cols.hi.x] = fresh[6]; y[row + cols.hi.y] = fresh[7];
    } else {
        for (var c = 0u; c < count; c++) {
            y[row + window_column(c0 + c)] = fresh[c];
        }
    }
}

@compute @workgroup_size(64)
fn compute_direct(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d = direct_block(linear_id(gid, groups), vec2(BLOCK_COLS, DIRECT_ROWS));
    if any(d.at >= d.end) {
        return;
    }
    let base = d.local * cluster.wafer_cells;
    let cols = window_columns(d.at.x);
    var r = row_at(d.at.y - 2u);
    var below = gather_window(base + r.cell, cols);
    r = row_after(r);
    var mid = gather_window(base + r.cell, cols);
    for (var i = d.at.y; i < d.end.y; i++) {
        r = row_after(r);
        let above = gather_window(base + r.cell, cols);
        scatter_run(base + r.cell, cols, d.at.x, update_block(params, below, mid, above), d.end.x - d.at.x);
        below = mid;
        mid = above;
    }
}

@compute @workgroup_size(64)
fn compute_direct_columns(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d = direct_block(linear_id(gid, groups), vec2(1u, DIRECT_ROWS));
    if any(d.at >= d.end) {
        return;
    }
    let base = d.local * cluster.wafer_cells;
    let left = column_at(d.at.x - 2u);
    let mid_column = column_after(left);
    let cols = vec3(left.cell, mid_column.cell, column_after(mid_column).cell);
    var r = row_at(d.at.y - 2u);
    var below = gather_row3(base + r.cell, cols);
    r = row_after(r);
    var mid = gather_row3(base + r.cell, cols);
    for (var i = d.at.y; i < d.end.y; i++) {
        r = row_after(r);
        let above = gather_row3(base + r.cell, cols);
        y[base + r.cell + cols.z] = stencil_point(params, below, mid, above);
        below = mid;
        mid = above;
    }
}
