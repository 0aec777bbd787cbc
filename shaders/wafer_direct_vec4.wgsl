// import links kernel rows3_block
// The fused engine's direct reads of a Rows3 stage by vec4s, where the device keeps the owned
// points as one dense grid per wafer (src/gpu/layout.rs) whose width is a multiple of 4: then
// 4 columns from any multiple of 4 are one aligned vec4 (`compute_direct` in
// wafer_direct.wgsl loads scalars). Each invocation takes BLOCK_COLS (8) columns by DIRECT_ROWS
// rows: per row three vec4 loads (the 4 columns left of the block and its two halves) and two
// stores. The block at the wafer's first column has none left of it: it loads its own first
// vec4 there and stores garbage in columns 0 and 1, which `compute_edges`, dispatched after
// it, overwrites. Rows 0 and 1 are the edges' too.

@group(0) @binding(3) var<storage, read> x4: array<vec4<f32>>;
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

@compute @workgroup_size(64)
fn compute_direct_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = grid_block(linear_id(gid, groups), vec2(BLOCK_COLS, DIRECT_ROWS));
    let size = dispatch.pes.zw * wafer.n;
    let y0 = max(b.at.y, 2u);
    let y1 = min(b.at.y + DIRECT_ROWS, size.y);
    if b.local >= dispatch.first + dispatch.count || b.at.x >= size.x || y0 >= y1 {
        return;
    }
    let q = quads(b.at.x, size.x);
    let base = b.local * cluster.wafer_cells / 4u;
    var r = row_at(y0 - 2u);
    var below = load_window(base + r.cell / 4u, q);
    r = row_after(r);
    var mid = load_window(base + r.cell / 4u, q);
    for (var i = y0; i < y1; i++) {
        r = row_after(r);
        let row = base + r.cell / 4u;
        let above = load_window(row, q);
        let fresh = update_block(params, below, mid, above);
        y4[row + q.right] = vec4(fresh[4], fresh[5], fresh[6], fresh[7]);
        y4[row + q.mid] = vec4(fresh[0], fresh[1], fresh[2], fresh[3]);
        below = mid;
        mid = above;
    }
}
