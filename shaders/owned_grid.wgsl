// import common
// The owned points of a wafer taken as one grid, as the fused engine's direct reads and the
// links see them: frame point (x, y) is owned cell (y % n, x % n) of PE (x / n, y / n). Its
// SRAM index (field 0, the wafer's first cell 0) is the offset of its row plus that of its
// column; rows and columns are stepped PE by PE without a division. The layout (`wafer.pitch`,
// `first`, `pe_col`, `pe_row`) is Table 3's or the dense grid of the direct reads
// (src/engine/gpu/layout.rs); the shaders that address comm layers assume Table 3's. Reads `wafer`,
// which the importing shader binds, and `dispatch`.

// An owned row or column: its SRAM offset and its index within its PE.
struct Line {
    cell: u32,
    in_pe: u32,
}

fn column_at(x: u32) -> Line {
    let n = wafer.n;
    return Line(x / n * wafer.pe_col + x % n + wafer.first, x % n);
}

fn row_at(y: u32) -> Line {
    let n = wafer.n;
    return Line(y / n * wafer.pe_row + (y % n + wafer.first) * wafer.pitch, y % n);
}

// The next line, `by` cells on within a PE, across to the next PE's first owned line at its
// last (`across`: the next PE's offset less the n - 1 steps taken within this one).
fn next_line(l: Line, by: u32, across: u32) -> Line {
    let wraps = l.in_pe + 1u == wafer.n;
    return Line(l.cell + select(by, across - (wafer.n - 1u) * by, wraps), select(l.in_pe + 1u, 0u, wraps));
}

fn column_after(l: Line) -> Line {
    return next_line(l, 1u, wafer.pe_col);
}

fn row_after(l: Line) -> Line {
    return next_line(l, wafer.pitch, wafer.pe_row);
}

// Block `id` of `size` points of the owned grid of the dispatch's rectangle, the rectangle of
// each of its wafers in turn (blocks at its right and top edges may stick out): the
// device-local wafer (dispatch.first + dispatch.count past the dispatch) and the block's
// first point.
struct GridBlock {
    local: u32,
    at: vec2<u32>,
}

fn grid_block(id: u32, size: vec2<u32>) -> GridBlock {
    return points_block(id, size, dispatch.pes.xy * wafer.n, dispatch.pes.zw * wafer.n);
}

// Whether block `b` lies in a wafer of the dispatch and starts before `end` (column, row).
fn block_in(b: GridBlock, end: vec2<u32>) -> bool {
    return b.local < dispatch.first + dispatch.count && all(b.at < end);
}

// Block `id` of `size` points of the points [first, end) of each wafer of the dispatch in turn.
fn points_block(id: u32, size: vec2<u32>, first: vec2<u32>, end: vec2<u32>) -> GridBlock {
    let blocks = (end - first + size - 1u) / size;
    let per_wafer = blocks.x * blocks.y;
    let item = id % per_wafer;
    let at = first + vec2(item % blocks.x, item / blocks.x) * size;
    return GridBlock(dispatch.first + min(id / per_wafer, dispatch.count), at);
}

// A wafer's size in points.
fn wafer_size() -> vec2<u32> {
    return vec2(wafer.pes_x, wafer.pes_y) * wafer.n;
}

// Block `id` of `size` points of the link bands `band` points wide of each wafer of the
// dispatch in turn: the left band (columns up to `band`), then the low band right of it (rows
// up to `band`); with the end of its band's columns and rows.
struct BandBlock {
    b: GridBlock,
    end: vec2<u32>,
}

fn band_block(id: u32, size: vec2<u32>, band: u32) -> BandBlock {
    let all = wafer_size();
    let left_end = vec2(band, all.y);
    let left = (left_end + size - 1u) / size;
    let low = (vec2(all.x - band, band) + size - 1u) / size;
    let lefts = left.x * left.y;
    let per_wafer = lefts + low.x * low.y;
    let item = id % per_wafer;
    let in_left = item < lefts;
    let i = select(item - lefts, item, in_left);
    let blocks = select(low, left, in_left);
    let first = select(vec2(band, 0u), vec2(0u), in_left);
    let end = select(vec2(all.x, band), left_end, in_left);
    let at = first + vec2(i % blocks.x, i / blocks.x) * size;
    return BandBlock(GridBlock(dispatch.first + min(id / per_wafer, dispatch.count), at), end);
}

// The points by the low edges of a wafer of `size` points: its first `rows` rows, then its
// first `cols` columns above them. How many, and point `i` of them.
fn low_edge_points(size: vec2<u32>, rows: u32, cols: u32) -> u32 {
    return rows * size.x + cols * (size.y - rows);
}

fn low_edge_point(i: u32, size: vec2<u32>, rows: u32, cols: u32) -> vec2<u32> {
    let in_rows = rows * size.x;
    let j = i - in_rows;
    return select(vec2(j % cols, rows + j / cols), vec2(i % size.x, i / size.x), i < in_rows);
}
