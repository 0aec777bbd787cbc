// import tile_rows3
// The time block's remap of a Rows3 stage (shaders/fused_blocked.wgsl): one invocation at a
// time per BLOCK_COLS columns of BLOCK_ROWS tile rows (composed in, per adapter) runs the
// kernel's `update_block` on three rows of the tile, as every other Rows3 driver does. Tile
// rows have room for a whole block of columns past the tile's width (PITCH_SPARE, composed
// in).

// Remap `j` of a span: its tiles (state j - 1, state j), the distance between tile rows, the
// first point it computes (every point at least j * w from the low sides), the columns and
// rows from there, and the row chunks of BLOCK_ROWS rows.
struct Remap {
    src: u32,
    dst: u32,
    width: u32,
    lo: u32,
    cols: u32,
    rows: u32,
    row_chunks: u32,
}

fn remap_of(s: Span, j: u32) -> Remap {
    let lo = j * wafer.w;
    let rows = select(0u, s.dims.y - lo, s.dims.y > lo);
    return Remap(slot_tile(j - 1u), slot_tile(j), s.pitch, lo, select(0u, s.dims.x - lo, s.dims.x > lo), rows, (rows + BLOCK_ROWS - 1u) / BLOCK_ROWS);
}

// Remap `j` of the block.
fn advance(s: Span, lid: u32, j: u32) {
    let r = remap_of(s, j);
    if FUSED_COLS == 1u {
        advance_columns(s, lid, r);
        return;
    }
    let width = r.width;
    let col_blocks = (r.cols + BLOCK_COLS - 1u) / BLOCK_COLS;
    for (var c = lid; c < r.row_chunks * col_blocks; c += FUSED_WORKGROUP) {
        let chunk = c / col_blocks;
        let tx = r.lo + (c - chunk * col_blocks) * BLOCK_COLS;
        let ty0 = r.lo + chunk * BLOCK_ROWS;
        var k = r.src + (ty0 - 2u) * width + tx - 2u;
        var below = tile_window(k);
        var mid = tile_window(k + width);
        var o = r.dst + ty0 * width + tx;
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
fn advance_columns(s: Span, lid: u32, r: Remap) {
    let width = r.width;
    for (var c = lid; c < r.row_chunks * r.cols; c += FUSED_WORKGROUP) {
        let chunk = c / r.cols;
        let tx = r.lo + c - chunk * r.cols;
        let ty0 = r.lo + chunk * BLOCK_ROWS;
        var k = r.src + (ty0 - 1u) * width + tx - 1u;
        var below = tile_row3(k - width);
        var mid = tile_row3(k);
        var o = r.dst + ty0 * width + tx;
        for (var ty = ty0; ty < min(ty0 + BLOCK_ROWS, s.dims.y); ty++) {
            k += width;
            let above = tile_row3(k);
            tile[o] = stencil_point(params, below, mid, above);
            o += width;
            below = mid;
            mid = above;
        }
    }
}
