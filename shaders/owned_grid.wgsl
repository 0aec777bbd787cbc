// import common
// The owned points of a wafer taken as one grid, as the fused engine's direct reads and the
// links see them: frame point (x, y) is owned cell (y % n, x % n) of PE (x / n, y / n). Its
// SRAM index (field 0, the wafer's first cell 0) is the offset of its row plus that of its
// column; rows and columns are stepped PE by PE without a division. Reads `wafer`, which the
// importing shader binds.

// An owned row or column: its SRAM offset and its index within its PE.
struct Line {
    cell: u32,
    in_pe: u32,
}

fn column_at(x: u32) -> Line {
    let n = wafer.n;
    return Line(x / n * wafer.block + x % n + wafer.w, x % n);
}

fn row_at(y: u32) -> Line {
    let n = wafer.n;
    return Line(y / n * wafer.pes_x * wafer.block + (y % n + wafer.w) * wafer.stride, y % n);
}

// The next line, `by` cells on within a PE, across to the next PE's first owned line at its
// last (`across`: the next PE's offset less the n - 1 steps taken within this one).
fn step(l: Line, by: u32, across: u32) -> Line {
    let wraps = l.in_pe + 1u == wafer.n;
    return Line(l.cell + select(by, across - (wafer.n - 1u) * by, wraps), select(l.in_pe + 1u, 0u, wraps));
}

fn column_after(l: Line) -> Line {
    return step(l, 1u, wafer.block);
}

fn row_after(l: Line) -> Line {
    return step(l, wafer.stride, wafer.pes_x * wafer.block);
}
