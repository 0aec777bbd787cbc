// The global Rows3 kernel's state and row access in vec4s, where nx is a multiple of
// BLOCK_COLS: a block's columns are two whole vec4s, its neighbours the last lane of the
// vec4 to the left and the first of the one to the right, read alone (wrapped around the torus).
// Rows lie `grid.pitch` cells apart (src/engine/gpu/global.rs `ROW_SKEW`).

@group(0) @binding(2) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> y: array<vec4<f32>>;

// The vec4 indices, within a row, of the left neighbour, the block and the right neighbour.
struct Columns {
    left: u32,
    block: u32,
    right: u32,
}

fn columns(x0: u32) -> Columns {
    let quads = grid.nx / 4u;
    let block = x0 / 4u;
    return Columns(select(block, quads, block == 0u) - 1u, block, select(block + 2u, 0u, block + 2u == quads));
}

fn load_window(row: u32, cols: Columns) -> Window {
    let b = row * (grid.pitch / 4u);
    let m0 = x[b + cols.block];
    let m1 = x[b + cols.block + 1u];
    return Window(x[b + cols.left].w, m0.x, m0.y, m0.z, m0.w, m1.x, m1.y, m1.z, m1.w, x[b + cols.right].x);
}

fn store_block(row: u32, x0: u32, fresh: array<f32, 8>) {
    let o = (row * grid.pitch + x0) / 4u;
    y[o] = vec4(fresh[0], fresh[1], fresh[2], fresh[3]);
    y[o + 1u] = vec4(fresh[4], fresh[5], fresh[6], fresh[7]);
}
