// import common kernel rows3_block
// The plain global-grid kernel of a Rows3 stage: no PEs, no translation, periodic edges. The reference the
// emulated wafer must equal bit for bit; it calls the same `stencil_point`, in blocks of
// BLOCK_COLS columns by rows_per_thread rows like the wafer's compute.

@group(0) @binding(0) var<uniform> grid: Grid;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

// Column indices x0 - 1 .. x0 + BLOCK_COLS, wrapped around the torus (any nx >= 1).
struct Columns {
    c: array<u32, 10>,
}

fn columns(x0: u32) -> Columns {
    var cols: Columns;
    var col = select(x0 - 1u, grid.nx - 1u, x0 == 0u);
    for (var k = 0u; k < BLOCK_COLS + 2u; k++) {
        cols.c[k] = col;
        col = select(col + 1u, 0u, col + 1u == grid.nx);
    }
    return cols;
}

fn load_window(row: u32, cols: Columns) -> Window {
    let b = row * grid.nx;
    let c = cols.c;
    return Window(x[b + c[0]], x[b + c[1]], x[b + c[2]], x[b + c[3]], x[b + c[4]], x[b + c[5]], x[b + c[6]], x[b + c[7]], x[b + c[8]], x[b + c[9]]);
}

@compute @workgroup_size(64)
fn compute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let id = linear_id(gid, groups);
    let col_blocks = (grid.nx + BLOCK_COLS - 1u) / BLOCK_COLS;
    let x0 = id % col_blocks * BLOCK_COLS;
    let i0 = id / col_blocks * grid.rows_per_thread;
    if i0 >= grid.ny {
        return;
    }
    let i1 = min(i0 + grid.rows_per_thread, grid.ny);
    let cols = columns(x0);
    var below = load_window(select(i0 - 1u, grid.ny - 1u, i0 == 0u), cols);
    var mid = load_window(i0, cols);
    let w = params;
    for (var i = i0; i < i1; i++) {
        let above = load_window(select(i + 1u, 0u, i + 1u == grid.ny), cols);
        let fresh = update_block(w, below, mid, above);
        let o = i * grid.nx + x0;
        if BLOCK_COLS <= grid.nx - x0 {
            y[o] = fresh[0]; y[o + 1u] = fresh[1]; y[o + 2u] = fresh[2]; y[o + 3u] = fresh[3];
            y[o + 4u] = fresh[4]; y[o + 5u] = fresh[5]; y[o + 6u] = fresh[6]; y[o + 7u] = fresh[7];
        } else {
            for (var c = 0u; c < grid.nx - x0; c++) {
                y[o + c] = fresh[c];
            }
        }
        below = mid;
        mid = above;
    }
}
