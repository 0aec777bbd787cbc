// import rows3_block
// A Rows3 window row from a fused engine's workgroup tile (`tile`): values k .. k +
// BLOCK_COLS + 1 (past a tile row's end, values never stored; past the last row, the tile's
// slack).
fn tile_window(k: u32) -> Window {
    return Window(tile[k], tile[k + 1u], tile[k + 2u], tile[k + 3u], tile[k + 4u], tile[k + 5u],
        tile[k + 6u], tile[k + 7u], tile[k + 8u], tile[k + 9u]);
}
