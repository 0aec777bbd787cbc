// import rows3_block
// Rows3 window rows from a fused engine's workgroup tile (`tile`): for a block, values k .. k +
// BLOCK_COLS + 1 (past a tile row's end, values never stored; past the last row, the tile's
// slack).
fn tile_window(k: u32) -> Window {
    return Window(tile[k], tile[k + 1u], tile[k + 2u], tile[k + 3u], tile[k + 4u], tile[k + 5u],
        tile[k + 6u], tile[k + 7u], tile[k + 8u], tile[k + 9u]);
}

// The tile values k - 1, k and k + 1: one column's window row.
fn tile_row3(k: u32) -> vec3<f32> {
    return vec3(tile[k - 1u], tile[k], tile[k + 1u]);
}
