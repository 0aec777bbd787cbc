// import wafer_direct_vec4 time_block
// The fused engine's time blocks carried in registers (src/engine/gpu/row_blocks.rs), over the dense
// grid where heat's direct reads load vec4s: an invocation advances BLOCK_COLS columns by
// DIRECT_ROWS rows of the region (the points from REGION_START on, both ways, beyond the link
// bands) TIME_BLOCK steps, from the block's first state (`x4`) to its last (`y4`, the SRAM
// slot of the state an odd number of steps on). It first walks the 2 TIME_BLOCK rows below its
// own, whose levels its rows read; the columns it reads left of its own lie in the region or
// the bands, all at the block's first state. `compute_bands` (wafer_direct_vec4.wgsl) steps the
// bands one remap at a time.
// The blocks at the wafer's right and top edges also keep the right and top strips of every
// inner state in `history`, for the packages: each kind of block is its own entry point
// (`compute_blocked` over every block, `compute_blocked_top` over the top row of blocks,
// `compute_blocked_right` over the right column), as a store under a branch around a row loop
// crashes lavapipe's compiler (SIGSEGV), and stores aimed at one spare cell by the other
// blocks ran them 2x slower.

@group(0) @binding(9) var<storage, read_write> history: array<f32>;

// Block `id` of the region of each wafer of the dispatch in turn.
fn region_block(id: u32) -> GridBlock {
    return points_block(id, vec2(BLOCK_COLS, DIRECT_ROWS), vec2(REGION_START), wafer_size());
}

// Block `id` of the top row of the region's blocks (`along_top`) or of its right column, of
// each wafer of the dispatch in turn.
fn edge_block(id: u32, along_top: bool) -> GridBlock {
    let size = vec2(BLOCK_COLS, DIRECT_ROWS);
    let blocks = (wafer_size() - REGION_START + size - 1u) / size;
    let count = select(blocks.y, blocks.x, along_top);
    let i = id % count;
    let item = select((i + 1u) * blocks.x - 1u, (blocks.y - 1u) * blocks.x + i, along_top);
    return region_block(id / count * blocks.x * blocks.y + item);
}

// A block's wafer size, the end of its rows, its vec4s, its wafer's first vec4, its columns.
struct Walk {
    size: vec2<u32>,
    y1: u32,
    q: Quads,
    base: u32,
    cols: u32,
}

fn walk_of(b: GridBlock) -> Walk {
    let size = wafer_size();
    let y1 = min(b.at.y + DIRECT_ROWS, size.y);
    let cols = min(size.x - min(b.at.x, size.x), BLOCK_COLS);
    return Walk(size, y1, quads(b.at.x, size.x), b.local * cluster.wafer_cells / 4u, cols);
}

// Whether the block has points, and which edges it keeps: at the wafer's right, at its top.
fn has_points(b: GridBlock, w: Walk) -> bool {
    return block_in(b, vec2(w.size.x, w.y1));
}

fn at_right(b: GridBlock, w: Walk) -> bool {
    return b.at.x + BLOCK_COLS >= w.size.x;
}

// The levels of the 2 TIME_BLOCK rows below the block, and its first row.
fn warm_up(b: GridBlock, w: Walk) -> Line {
    var r = row_at(b.at.y - 2u * TIME_BLOCK);
    for (var i = 0u; i < 2u * TIME_BLOCK; i++) {
        advance_levels(w.base + r.cell / 4u, w.q);
        r = row_after(r);
    }
    return r;
}

// One row of the block: every level's row, level TIME_BLOCK's stored.
fn block_row(r: Line, w: Walk) {
    let row = w.base + r.cell / 4u;
    store_block(row, w.q, advance_levels(row, w.q));
}

// The block's rows after its warm-up, keeping no strip.
fn walk_block(b: GridBlock, w: Walk) {
    var r = warm_up(b, w);
    for (var y = b.at.y; y < w.y1; y++) {
        block_row(r, w);
        r = row_after(r);
    }
}

@compute @workgroup_size(64)
fn compute_blocked(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = region_block(linear_id(gid, groups));
    let w = walk_of(b);
    if !has_points(b, w) || at_right(b, w) || w.y1 == w.size.y {
        return;
    }
    walk_block(b, w);
}

@compute @workgroup_size(64)
fn compute_blocked_top(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = edge_block(linear_id(gid, groups), true);
    let w = walk_of(b);
    if !has_points(b, w) || at_right(b, w) || w.y1 != w.size.y {
        return;
    }
    walk_block(b, w);
    keep_top(strip_at(b, b.at.x, w.size.y - 2u), stride(), cluster.width, 0u, BLOCK_COLS);
}

@compute @workgroup_size(64)
fn compute_blocked_right(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = edge_block(linear_id(gid, groups), false);
    let w = walk_of(b);
    if !has_points(b, w) || !at_right(b, w) {
        return;
    }
    var r = warm_up(b, w);
    for (var y = b.at.y; y < w.y1; y++) {
        block_row(r, w);
        keep_right(strip_at(b, w.size.x - 2u, y), stride(), w.cols == BLOCK_COLS);
        r = row_after(r);
    }
    // The history's spare last cell takes the columns past the wafer, and all of them below
    // the top.
    let trash = arrayLength(&history) - 1u;
    let cols = select(0u, w.cols, w.y1 == w.size.y);
    keep_top(strip_at(b, b.at.x, w.size.y - 2u), stride(), cluster.width, trash, cols);
}
