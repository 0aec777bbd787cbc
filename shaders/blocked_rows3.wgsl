// import tile_rows3
// The time block's remap of a Rows3 stage (shaders/fused_blocked.wgsl): one invocation at a
// time per BLOCK_COLS columns of BLOCK_ROWS tile rows (composed in, per adapter) runs the
// kernel's `update_block` on three rows of the tile, as every other Rows3 driver does. Tile
// rows have room for a whole block of columns past the tile's width (PITCH_SPARE, composed
// in).

// Remap `j` of the block: every point of the tile at least j * w from its low sides.
fn advance(s: Span, lid: u32, j: u32) {
    if FUSED_COLS == 1u {
        advance_columns(s, lid, j);
        return;
    }
    let lo = j * wafer.w;
    let src = slot_tile(j - 1u);
    let dst = slot_tile(j);
    let width = s.pitch;
    let cols = select(0u, s.dims.x - lo, s.dims.x > lo);
    let rows = select(0u, s.dims.y - lo, s.dims.y > lo);
    let col_blocks = (cols + BLOCK_COLS - 1u) / BLOCK_COLS;
    let row_chunks = (rows + BLOCK_ROWS - 1u) / BLOCK_ROWS;
    for (var c = lid; c < row_chunks * col_blocks; c += FUSED_WORKGROUP) {
        let chunk = c / col_blocks;
        let tx = lo + (c - chunk * col_blocks) * BLOCK_COLS;
        let ty0 = lo + chunk * BLOCK_ROWS;
        var k = src + (ty0 - 2u) * width + tx - 2u;
        var below = tile_window(k);
        var mid = tile_window(k + width);
        var o = dst + ty0 * width + tx;
        for (var ty = ty0; ty < min(ty0 + BLOCK_ROWS, s.dims.y); ty++) {
            k += width;
            let above = tile_window(k + width);
            // Whole blocks: columns past the tile's width land in the row's spare room.
            let fresh = update_block(params, below, mid, above);
            tile[o] = fresh[0]; tile[o + 1u] = fresh[1]; tile[o + 2u] = fresh[2]; tile[o + 3u] = fresh[3];
            tile[o + 4u] = fresh[4]; tile[o + 5u] = fresh[5]; tile[o + 6u] = fresh[6]; tile[o + 7u] = fresh[7];
            o += width;
            below = mid;
            mid = above;
        }
    }
}

// `advance` by single columns of BLOCK_ROWS rows: neighbouring invocations on neighbouring
// columns (a GPU's workgroup-memory banks then serve a whole row at once).
fn advance_columns(s: Span, lid: u32, j: u32) {
    let lo = j * wafer.w;
    let src = slot_tile(j - 1u);
    let dst = slot_tile(j);
    let width = s.pitch;
    let cols = select(0u, s.dims.x - lo, s.dims.x > lo);
    let rows = select(0u, s.dims.y - lo, s.dims.y > lo);
    let row_chunks = (rows + BLOCK_ROWS - 1u) / BLOCK_ROWS;
    for (var c = lid; c < row_chunks * cols; c += FUSED_WORKGROUP) {
        let chunk = c / cols;
        let tx = lo + c - chunk * cols;
        let ty0 = lo + chunk * BLOCK_ROWS;
        var k = src + (ty0 - 1u) * width + tx - 1u;
        var below = vec3(tile[k - width - 1u], tile[k - width], tile[k - width + 1u]);
        var mid = vec3(tile[k - 1u], tile[k], tile[k + 1u]);
        var o = dst + ty0 * width + tx;
        for (var ty = ty0; ty < min(ty0 + BLOCK_ROWS, s.dims.y); ty++) {
            k += width;
            let above = vec3(tile[k - 1u], tile[k], tile[k + 1u]);
            tile[o] = stencil_point(params, below, mid, above);
            o += width;
            below = mid;
            mid = above;
        }
    }
}
