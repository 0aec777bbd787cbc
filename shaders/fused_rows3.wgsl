// import fused_tile tile_rows3 kernel
// The fused engine for a Rows3 stage: after the tile is in, the block's owned points are one
// grid in the tile, whatever n is. One invocation at a time per BLOCK_COLS columns of
// FUSED_ROWS rows of it (composed in, per adapter, like FUSED_WORKGROUP) runs the kernel's
// `update_block` on three rows of the tile, exactly as the explicit driver does on three rows
// of the SRAM, and stores each column in its PE's
// SRAM block. Unlike blocks of one PE's columns, this wastes no work where n is not a
// multiple of BLOCK_COLS (at n = 2, a quarter of the columns computed were owned).

@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> y: array<f32>;

// The block's owned points as one grid: its size, its chunks of FUSED_ROWS rows, and the
// SRAM cell of its point (0, 0) less its row's offset (`row_at(0u).cell`: owned row y of the
// block is `first + row_at(y).cell` on).
struct Owned {
    size: vec2<u32>,
    row_chunks: u32,
    first: u32,
}

fn owned_of(b: PeBlock) -> Owned {
    let size = b.pes * wafer.n;
    let first = b.local * cluster.wafer_cells + (b.pe0.y * wafer.pes_x + b.pe0.x) * wafer.block + wafer.w;
    return Owned(size, (size.y + FUSED_ROWS - 1u) / FUSED_ROWS, first);
}

@compute @workgroup_size(FUSED_WORKGROUP)
fn compute(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let b = receive(wid.x + wid.y * groups.x, lid);
    if b.local >= dispatch.first + dispatch.count {
        return;
    }
    let n = wafer.n;
    let width = b.size.x;
    let owned = owned_of(b);
    let col_blocks = (owned.size.x + BLOCK_COLS - 1u) / BLOCK_COLS;
    // Columns past the block's owned ones go to the last spare cell after the SRAM blocks
    // (lavapipe crashes on these stores made conditional).
    let trash = wafer.plane - 1u;
    for (var c = lid; c < owned.row_chunks * col_blocks; c += FUSED_WORKGROUP) {
        let chunk = c / col_blocks;
        let x0 = (c - chunk * col_blocks) * BLOCK_COLS;
        let y0 = chunk * FUSED_ROWS;
        let px = x0 / n;
        let j0 = x0 - px * n;
        var row = row_at(y0);
        let cols = owned.size.x - x0;
        let at = columns(Line(owned.first + px * wafer.block + j0, j0));
        var k = y0 * width + x0;
        var below = tile_window(k);
        var mid = tile_window(k + width);
        for (var oy = y0; oy < min(y0 + FUSED_ROWS, owned.size.y); oy++) {
            k += width;
            let above = tile_window(k + width);
            let fresh = update_block(params, below, mid, above);
            let o = row.cell;
            y[o + at.c0] = fresh[0];
            y[select(trash, o + at.c1, cols > 1u)] = fresh[1];
            y[select(trash, o + at.c2, cols > 2u)] = fresh[2];
            y[select(trash, o + at.c3, cols > 3u)] = fresh[3];
            y[select(trash, o + at.c4, cols > 4u)] = fresh[4];
            y[select(trash, o + at.c5, cols > 5u)] = fresh[5];
            y[select(trash, o + at.c6, cols > 6u)] = fresh[6];
            y[select(trash, o + at.c7, cols > 7u)] = fresh[7];
            row = row_after(row);
            below = mid;
            mid = above;
        }
    }
}

// `compute` by single columns of FUSED_ROWS rows (FUSED_COLS = 1): neighbouring invocations on
// neighbouring columns, so a GPU's workgroup-memory banks serve a tile row at once and its
// stores coalesce.
@compute @workgroup_size(FUSED_WORKGROUP)
fn compute_columns(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let b = receive(wid.x + wid.y * groups.x, lid);
    if b.local >= dispatch.first + dispatch.count {
        return;
    }
    let n = wafer.n;
    let width = b.size.x;
    let owned = owned_of(b);
    for (var c = lid; c < owned.row_chunks * owned.size.x; c += FUSED_WORKGROUP) {
        let chunk = c / owned.size.x;
        let ox = c - chunk * owned.size.x;
        let y0 = chunk * FUSED_ROWS;
        let px = ox / n;
        var row = row_at(y0);
        let column = owned.first + px * wafer.block + ox - px * n;
        // Centre of the first window: tile row y0 + 1, column ox + 1.
        var k = (y0 + 1u) * width + ox + 1u;
        var below = tile_row3(k - width);
        var mid = tile_row3(k);
        for (var oy = y0; oy < min(y0 + FUSED_ROWS, owned.size.y); oy++) {
            k += width;
            let above = tile_row3(k);
            y[column + row.cell] = stencil_point(params, below, mid, above);
            row = row_after(row);
            below = mid;
            mid = above;
        }
    }
}
