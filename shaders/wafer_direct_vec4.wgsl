// import links kernel rows3_block
// The fused engine's direct reads of a Rows3 stage by vec4s, where the device keeps the owned
// points as one dense grid per wafer (src/engine/gpu/layout.rs) whose width is a multiple of 4: then
// 4 columns from any multiple of 4 are one aligned vec4 (`compute_direct` in
// wafer_direct.wgsl loads scalars). Each invocation takes BLOCK_COLS (8) columns by DIRECT_ROWS
// rows: per row three vec4 loads (the 4 columns left of the block and its two halves) and two
// stores. The block at the wafer's first column has none left of it: it loads its own first
// vec4 there and stores garbage in columns 0 and 1, which `compute_edges`, dispatched after
// it, overwrites. The blocks at rows 0 and 1 read the rows below the wafer from the up link
// that the wafer below sent.

@group(0) @binding(3) var<storage, read> x4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> up_links: array<f32>;
@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> y4: array<vec4<f32>>;

// The vec4 offsets, within a row of PEs, of the window's three vec4s. A block of 4 columns
// at the wafer's right edge has no right half: `right` is `mid` there, stored first and then
// overwritten (a store under a branch in the row loop crashed lavapipe's compiler).
struct Quads {
    left: u32,
    mid: u32,
    right: u32,
}

fn quads(c0: u32, width: u32) -> Quads {
    let left = select(c0 - 4u, c0, c0 == 0u);
    let right = min(c0 + 4u, width - 4u);
    return Quads(column_at(left).cell / 4u, column_at(c0).cell / 4u, column_at(right).cell / 4u);
}

fn load_window(row: u32, q: Quads) -> Window {
    let l = x4[row + q.left];
    let m = x4[row + q.mid];
    let r = x4[row + q.right];
    return Window(l.z, l.w, m.x, m.y, m.z, m.w, r.x, r.y, r.z, r.w);
}

// A window row below the wafer, from its row in an up package from `at` on (columns past the
// wafer's edges clamped: their results are overwritten or never stored).
fn link_window(at: u32, c0: u32) -> Window {
    let last = i32(cluster.width) - 1;
    let c = i32(c0);
    return Window(up_links[at + u32(clamp(c - 2, 0, last))], up_links[at + u32(clamp(c - 1, 0, last))],
        up_links[at + c0], up_links[at + u32(min(c + 1, last))], up_links[at + u32(min(c + 2, last))],
        up_links[at + u32(min(c + 3, last))], up_links[at + u32(min(c + 4, last))],
        up_links[at + u32(min(c + 5, last))], up_links[at + u32(min(c + 6, last))],
        up_links[at + u32(min(c + 7, last))]);
}

// A block's 8 new values into the row of PEs at vec4 `row`: its right half first (see
// `Quads`).
fn store_block(row: u32, q: Quads, fresh: array<f32, 8>) {
    y4[row + q.right] = vec4(fresh[4], fresh[5], fresh[6], fresh[7]);
    y4[row + q.mid] = vec4(fresh[0], fresh[1], fresh[2], fresh[3]);
}

// `t` where `cond`, else `f`.
fn pick(f: Window, t: Window, cond: bool) -> Window {
    return Window(select(f.v0, t.v0, cond), select(f.v1, t.v1, cond), select(f.v2, t.v2, cond),
        select(f.v3, t.v3, cond), select(f.v4, t.v4, cond), select(f.v5, t.v5, cond),
        select(f.v6, t.v6, cond), select(f.v7, t.v7, cond), select(f.v8, t.v8, cond),
        select(f.v9, t.v9, cond));
}

@compute @workgroup_size(64)
fn compute_direct_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = grid_block(linear_id(gid, groups), vec2(BLOCK_COLS, DIRECT_ROWS));
    direct_rows(b, min(b.at.y + DIRECT_ROWS, dispatch.pes.w * wafer.n), dispatch.pes.z * wafer.n);
}

// The link bands `wafer.region` points wide (`band_block`) of heat's time blocks in registers
// (wafer_blocked_vec4.wgsl, wafer_blocked_lanes.wgsl), one remap.
@compute @workgroup_size(64)
fn compute_bands(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let band = band_block(linear_id(gid, groups), vec2(BLOCK_COLS, DIRECT_ROWS), wafer.region);
    direct_rows(band.b, min(band.b.at.y + DIRECT_ROWS, band.end.y), band.end.x);
}

// The block's rows to `y1`, in a rectangle whose columns end at `x1`.
fn direct_rows(b: GridBlock, y1: u32, x1: u32) {
    if !block_in(b, vec2(x1, y1)) {
        return;
    }
    let q = quads(b.at.x, x1);
    let base = b.local * cluster.wafer_cells / 4u;
    // The two rows below the block; those below the wafer from the up link's two rows
    // (selected, not branched: a branch here crashed lavapipe's compiler).
    let link = slot_base(below(wafer_ids[b.local]), cluster.up_cells, 0u);
    let lower_row = load_window(base + row_at(max(b.at.y, 2u) - 2u).cell / 4u, q);
    let link_row = link + min(b.at.y, 1u) * cluster.width;
    var lower = pick(lower_row, link_window(link_row, b.at.x), b.at.y < 2u);
    let mid_row = load_window(base + row_at(max(b.at.y, 1u) - 1u).cell / 4u, q);
    var mid = pick(mid_row, link_window(link + cluster.width, b.at.x), b.at.y == 0u);
    var r = row_at(b.at.y);
    for (var i = b.at.y; i < y1; i++) {
        let row = base + r.cell / 4u;
        let above = load_window(row, q);
        store_block(row, q, update_block(params, lower, mid, above));
        lower = mid;
        mid = above;
        r = row_after(r);
    }
}
