// import links
// What the fused engine's workgroups share to move rows of owned cells between the SRAM (`x`)
// and their tile (`tile`, TILE_LEN values, whose last slack value takes reads that are not
// needed), LOAD_RUN columns at a time across PEs: 8 (`columns`, `load_run`), or 1 on a GPU,
// where neighbouring invocations then move neighbouring columns (FUSED_COLS, composed in).

const LOAD_RUN: u32 = FUSED_COLS;

// One invocation's run: its field, its row and first column in the rectangle of owned points
// being moved, and its first cell (SRAM cell of its field, column within its PE).
struct Run {
    f: u32,
    row: u32,
    x0: u32,
    first: Line,
}

// Run `c` over the owned points of wafer `local` from frame point `origin`, `segs` runs per
// row and `per_field` runs per field, field after field.
fn run_of(local: u32, origin: vec2<u32>, segs: u32, per_field: u32, c: u32) -> Run {
    let f = c / per_field;
    let m = c - f * per_field;
    let row = m / segs;
    let x0 = (m - row * segs) * LOAD_RUN;
    let fx = origin.x + x0;
    let cell = owned_index(local, fx, origin.y + row) + f * wafer.plane;
    return Run(f, row, x0, Line(cell, fx % wafer.n));
}

// The SRAM cells of 8 owned columns along a row from `first` (cell, column in its PE),
// stepping to the next PE's first after column n - 1.
struct Columns {
    c0: u32, c1: u32, c2: u32, c3: u32, c4: u32, c5: u32, c6: u32, c7: u32,
}

fn columns(first: Line) -> Columns {
    let c1 = column_after(first);
    let c2 = column_after(c1);
    let c3 = column_after(c2);
    let c4 = column_after(c3);
    let c5 = column_after(c4);
    let c6 = column_after(c5);
    let c7 = column_after(c6);
    return Columns(first.cell, c1.cell, c2.cell, c3.cell, c4.cell, c5.cell, c6.cell, c7.cell);
}

// LOAD_RUN owned cells along a row from `first` into the tile from `at`, the first `count`
// of them: straight-line and branch-free, the others read again from the first cell into the
// tile's last slack value (lavapipe crashes on these accesses under a branch or in a loop).
fn load_run(first: Line, at: u32, count: u32) {
    if LOAD_RUN == 1u {
        tile[at] = x[first.cell];
        return;
    }
    let trash = TILE_LEN - 1u;
    let c = columns(first);
    tile[at] = x[c.c0];
    tile[select(trash, at + 1u, count > 1u)] = x[select(c.c0, c.c1, count > 1u)];
    tile[select(trash, at + 2u, count > 2u)] = x[select(c.c0, c.c2, count > 2u)];
    tile[select(trash, at + 3u, count > 3u)] = x[select(c.c0, c.c3, count > 3u)];
    tile[select(trash, at + 4u, count > 4u)] = x[select(c.c0, c.c4, count > 4u)];
    tile[select(trash, at + 5u, count > 5u)] = x[select(c.c0, c.c5, count > 5u)];
    tile[select(trash, at + 6u, count > 6u)] = x[select(c.c0, c.c6, count > 6u)];
    tile[select(trash, at + 7u, count > 7u)] = x[select(c.c0, c.c7, count > 7u)];
}
