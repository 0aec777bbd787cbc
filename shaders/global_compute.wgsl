// import common global_grid kernel rows3_block
// The plain global-grid kernel of a Rows3 stage: no PEs, no translation, periodic edges. The reference the
// emulated wafer must equal bit for bit; it calls the same `stencil_point`, in blocks of
// BLOCK_COLS columns by rows_per_thread rows like the wafer's compute. Its state buffers and
// row loads and stores come with the kernel: `global_rows.wgsl`, or `global_rows_vec4.wgsl`
// where every row is whole blocks (vec4 loads and stores); they take the rows where the band's
// buffers hold them (`stored_row`).

@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(64)
fn compute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let id = linear_id(gid, groups);
    let col_blocks = (grid.nx + BLOCK_COLS - 1u) / BLOCK_COLS;
    let x0 = id % col_blocks * BLOCK_COLS;
    let i0 = grid.first + id / col_blocks * grid.rows_per_thread;
    let end = grid.first + grid.rows;
    if i0 >= end {
        return;
    }
    let i1 = min(i0 + grid.rows_per_thread, end);
    let cols = columns(x0);
    var below = load_window(stored_row(select(i0 - 1u, grid.ny - 1u, i0 == 0u)), cols);
    var mid = load_window(stored_row(i0), cols);
    let w = params;
    for (var i = i0; i < i1; i++) {
        let above = load_window(stored_row(select(i + 1u, 0u, i + 1u == grid.ny)), cols);
        store_block(stored_row(i), x0, update_block(w, below, mid, above));
        below = mid;
        mid = above;
    }
}
