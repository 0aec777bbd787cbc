// import fused_tile rows3_block kernel
// The fused engine for a Rows3 stage: after the tile is in, one invocation at a time per
// BLOCK_COLS owned columns of one row of one PE runs the kernel's `update_block` on three
// rows of the tile, exactly as the explicit driver does on three rows of the SRAM.

@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> y: array<f32>;

// Tile values k .. k + BLOCK_COLS + 1 (past the tile's end: the last value, never stored).
fn tile_window(k: u32) -> Window {
    let last = TILE_CAP - 1u;
    return Window(tile[min(k, last)], tile[min(k + 1u, last)], tile[min(k + 2u, last)], tile[min(k + 3u, last)],
        tile[min(k + 4u, last)], tile[min(k + 5u, last)], tile[min(k + 6u, last)], tile[min(k + 7u, last)],
        tile[min(k + 8u, last)], tile[min(k + 9u, last)]);
}

@compute @workgroup_size(64)
fn compute(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let b = receive(wid.x + wid.y * groups.x, lid);
    if b.local >= dispatch.first + dispatch.count {
        return;
    }
    let n = wafer.n;
    let width = b.size.x;
    let col_blocks = (n + BLOCK_COLS - 1u) / BLOCK_COLS;
    let per_pe = n * col_blocks;
    for (var c = lid; c < b.pes.x * b.pes.y * per_pe; c += WORKGROUP) {
        let pe = c / per_pe;
        let r = c - pe * per_pe;
        let i = r / col_blocks;
        let j0 = (r - i * col_blocks) * BLOCK_COLS;
        let py = pe / b.pes.x;
        let px = pe - py * b.pes.x;
        let k = (py * n + i) * width + px * n + j0;
        let fresh = update_block(params, tile_window(k), tile_window(k + width), tile_window(k + 2u * width));
        let at_pe = b.pe0 + vec2<u32>(px, py);
        let block = b.local * cluster.wafer_cells + (at_pe.y * wafer.pes_x + at_pe.x) * wafer.block;
        let out = block + (i + wafer.w) * wafer.stride + j0 + wafer.w;
        for (var col = 0u; col < min(BLOCK_COLS, n - j0); col++) {
            y[out + col] = fresh[col];
        }
    }
}
