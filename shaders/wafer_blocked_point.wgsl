// import links kernel time_block wafer_clock
// The fused engine's time blocks of Point stages carried in registers (src/engine/gpu/point_blocks.rs),
// over the dense grid of the direct reads: an invocation advances BLOCK_COLS columns by
// BLOCK_ROWS rows of the region (the points from `wafer.region` on, both ways, beyond the link
// bands, which the direct reads step one remap at a time) LEVELS remaps, from the block's
// first state (`x`) to its last (`next`, the SRAM slot of the state an odd number of steps
// on). It first walks the LEVELS rows below its own, whose levels its rows read; the columns
// it reads left of its own lie in the region or the bands, all at the block's first state. The
// generated `advance_levels` computes every level's row from the level-0 row that `state_at`
// loads, with the constants at the global points each level's frame points hold.
// The blocks at the wafer's right and top edges keep the right and top strips of every inner
// state in `history`, for the packages.

@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read> x: array<f32>;
@group(0) @binding(5) var<storage, read_write> next: array<f32>;
@group(0) @binding(6) var<storage, read> clock: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> history: array<f32>;

// `c` on a torus of `size` (c < 2 size), and `c - d` (d <= size).
fn wrap_up(c: u32, size: u32) -> u32 {
    return select(c, c - size, c >= size);
}

fn back(c: u32, d: u32, size: u32) -> u32 {
    return select(c - d, c + size - d, c < d);
}

// The windows of the point being computed, as the generated code fills them: of the state
// (`cur`), of the step's start (`base`), of the constant planes and the row constants (the
// global points the stage names are those).
var<private> win: array<array<f32, 4>, FIELDS>;
var<private> win0: array<array<f32, 4>, FIELDS>;
var<private> wconst: array<array<f32, 4>, CONSTS>;
var<private> wrow: array<array<f32, 2>, ROW_CONSTS>;

fn cur(f: u32, dx: u32, dy: u32) -> f32 {
    return win[f][dx + 2u * dy];
}

fn base(f: u32, dx: u32, dy: u32) -> f32 {
    return win0[f][dx + 2u * dy];
}

fn window_const(c: u32, p: vec2<u32>, d: vec2<u32>) -> f32 {
    return wconst[c][d.x + 2u * d.y];
}

fn row_const(t: u32, y: u32, dy: u32) -> f32 {
    return wrow[t][dy];
}

// SRAM offset (field 0) of level 0's first column in the row being loaded.
var<private> row_base: u32;

fn state_at(f: u32, i: u32) -> f32 {
    return x[f * wafer.plane + row_base + i];
}

// A block's wafer size, the end of its rows, its columns within the wafer, its wafer's first
// cell.
struct Walk {
    size: vec2<u32>,
    y1: u32,
    cols: u32,
    base: u32,
}

fn walk_of(b: GridBlock) -> Walk {
    let size = wafer_size();
    let y1 = min(b.at.y + BLOCK_ROWS, size.y);
    let cols = min(size.x - min(b.at.x, size.x), BLOCK_COLS);
    return Walk(size, y1, cols, b.local * cluster.wafer_cells);
}

fn has_points(b: GridBlock, w: Walk) -> bool {
    return block_in(b, vec2(w.size.x, w.y1));
}

// Walks the block: the LEVELS rows below it, whose outputs go to its first row (rewritten
// after), then its rows. A block at the wafer's right edge keeps every row's right strip, one
// at its top the top strip after its last row; the others aim those stores at the history's
// spare last cell, as do the blocks at the right edge for the columns past the wafer (a
// store under a branch around the row loop crashes lavapipe's compiler).
@compute @workgroup_size(64)
fn compute_blocked(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    // The region's first point comes from `wafer`: taken from `dispatch`, it crashes
    // lavapipe's compiler.
    let b = points_block(linear_id(gid, groups), vec2(BLOCK_COLS, BLOCK_ROWS), vec2(wafer.region), wafer_size());
    let w = walk_of(b);
    if !has_points(b, w) {
        return;
    }
    let id = wafer_ids[b.local];
    // The clock has counted the block's first remap.
    let first = clock[b.local].x - 1u;
    let start = clock_after(id, first).yz;
    let end = clock_after(id, first + LEVELS).yz;
    let global = vec2(wafer.nx, wafer.ny);
    set_columns(wrap_up(end.x + b.at.x, global.x), global.x);
    var y0 = wrap_up(start.y + b.at.y - LEVELS, global.y);
    var line = row_at(b.at.y - LEVELS);
    let first_row = row_at(b.at.y).cell;
    let trash = arrayLength(&history) - 1u;
    let right = b.at.x + BLOCK_COLS >= w.size.x;
    for (var j = 0u; j < LEVELS + w.y1 - b.at.y; j++) {
        row_base = w.base + line.cell + b.at.x - LEVELS;
        let out = advance_levels(y0, global);
        let mine = j >= LEVELS;
        let row = w.base + select(first_row, line.cell, mine) + b.at.x;
        for (var f = 0u; f < FIELDS; f++) {
            for (var i = 0u; i < BLOCK_COLS; i++) {
                next[f * wafer.plane + row + i] = out[f][i];
            }
        }
        let keeps = mine && right;
        let strip = strip_at(b, w.size.x - 1u, b.at.y + j - LEVELS);
        keep_right(select(trash, strip, keeps), select(0u, stride(), keeps), w.size.x - 1u - b.at.x);
        line = row_after(line);
        y0 = wrap_up(y0 + 1u, global.y);
    }
    let top = w.y1 == w.size.y;
    let strip = select(trash, strip_at(b, b.at.x, w.size.y - 1u), top);
    keep_top(strip, select(0u, stride(), top), trash, select(0u, w.cols, top));
}
