// import fused_tile rows3_block kernel
// The fused engine for a Rows3 stage: after the tile is in, one invocation at a time per
// BLOCK_COLS owned columns of one row of one PE runs the kernel's `update_block` on three
// rows of the tile, exactly as the explicit driver does on three rows of the SRAM.

@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> y: array<f32>;

// Tile values k .. k + BLOCK_COLS + 1 (past a tile row's end, values never stored).
fn tile_window(k: u32) -> Window {
    return Window(tile[k], tile[k + 1u], tile[k + 2u], tile[k + 3u], tile[k + 4u], tile[k + 5u],
        tile[k + 6u], tile[k + 7u], tile[k + 8u], tile[k + 9u]);
}

// Rows one invocation walks with its rolling window of three tile rows.
const FUSED_ROWS: u32 = 4u;

@compute @workgroup_size(64)
fn compute(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let b = receive(wid.x + wid.y * groups.x, lid);
    if b.local >= dispatch.first + dispatch.count {
        return;
    }
    let n = wafer.n;
    let width = b.size.x;
    let col_blocks = (n + BLOCK_COLS - 1u) / BLOCK_COLS;
    let row_chunks = (n + FUSED_ROWS - 1u) / FUSED_ROWS;
    let per_pe = row_chunks * col_blocks;
    for (var c = lid; c < b.pes.x * b.pes.y * per_pe; c += WORKGROUP) {
        let pe = c / per_pe;
        let r = c - pe * per_pe;
        let chunk = r / col_blocks;
        let j0 = (r - chunk * col_blocks) * BLOCK_COLS;
        let py = pe / b.pes.x;
        let px = pe - py * b.pes.x;
        let i0 = chunk * FUSED_ROWS;
        var k = (py * n + i0) * width + px * n + j0;
        var below = tile_window(k);
        var mid = tile_window(k + width);
        let at_pe = b.pe0 + vec2<u32>(px, py);
        let block = b.local * cluster.wafer_cells + (at_pe.y * wafer.pes_x + at_pe.x) * wafer.block;
        var out = block + (i0 + wafer.w) * wafer.stride + j0 + wafer.w;
        let cols = min(BLOCK_COLS, n - j0);
        for (var i = i0; i < min(i0 + FUSED_ROWS, n); i++) {
            k += width;
            let above = tile_window(k + width);
            let fresh = update_block(params, below, mid, above);
            let o = out;
            if cols == BLOCK_COLS {
                y[o] = fresh[0]; y[o + 1u] = fresh[1]; y[o + 2u] = fresh[2]; y[o + 3u] = fresh[3];
                y[o + 4u] = fresh[4]; y[o + 5u] = fresh[5]; y[o + 6u] = fresh[6]; y[o + 7u] = fresh[7];
            } else {
                for (var col = 0u; col < cols; col++) {
                    y[o + col] = fresh[col];
                }
            }
            out += wafer.stride;
            below = mid;
            mid = above;
        }
    }
}
