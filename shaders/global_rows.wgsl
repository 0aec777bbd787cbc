// The global Rows3 kernel's state and row access, one f32 at a time (any nx >= 1).

@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

// Column indices x0 - 1 .. x0 + BLOCK_COLS, wrapped around the torus.
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

fn store_block(row: u32, x0: u32, fresh: array<f32, 8>) {
    let o = row * grid.nx + x0;
    if BLOCK_COLS <= grid.nx - x0 {
        y[o] = fresh[0]; y[o + 1u] = fresh[1]; y[o + 2u] = fresh[2]; y[o + 3u] = fresh[3];
        y[o + 4u] = fresh[4]; y[o + 5u] = fresh[5]; y[o + 6u] = fresh[6]; y[o + 7u] = fresh[7];
    } else {
        for (var c = 0u; c < grid.nx - x0; c++) {
            y[o + c] = fresh[c];
        }
    }
}
