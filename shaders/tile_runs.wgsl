// What the fused engine's workgroups share to read rows of owned cells into their tile
// (`tile`, TILE_LEN values, whose last slack value takes reads that are not needed) from the
// SRAM (`x`), many PEs at a time.

// Owned columns one invocation reads into a tile row (8: `load_run`).
const LOAD_RUN: u32 = 8u;

// The owned cell right of `c` (SRAM cell, column within its PE): the next PE's first after
// column n - 1.
fn step_column(c: vec2<u32>) -> vec2<u32> {
    let next_pe = c.y + 1u == wafer.n;
    return select(c + vec2<u32>(1u), vec2<u32>(c.x + wafer.block - wafer.n + 1u, 0u), next_pe);
}

// LOAD_RUN owned cells along a row from `c0` into the tile from `at`, the first `count` of
// them: straight-line and branch-free, the others read again from `c0` into the tile's last
// slack value (lavapipe crashes on these accesses under a branch or in a loop).
fn load_run(c0: vec2<u32>, at: u32, count: u32) {
    let trash = TILE_LEN - 1u;
    let c1 = step_column(c0);
    let c2 = step_column(c1);
    let c3 = step_column(c2);
    let c4 = step_column(c3);
    let c5 = step_column(c4);
    let c6 = step_column(c5);
    let c7 = step_column(c6);
    tile[at] = x[c0.x];
    tile[select(trash, at + 1u, count > 1u)] = x[select(c0.x, c1.x, count > 1u)];
    tile[select(trash, at + 2u, count > 2u)] = x[select(c0.x, c2.x, count > 2u)];
    tile[select(trash, at + 3u, count > 3u)] = x[select(c0.x, c3.x, count > 3u)];
    tile[select(trash, at + 4u, count > 4u)] = x[select(c0.x, c4.x, count > 4u)];
    tile[select(trash, at + 5u, count > 5u)] = x[select(c0.x, c5.x, count > 5u)];
    tile[select(trash, at + 6u, count > 6u)] = x[select(c0.x, c6.x, count > 6u)];
    tile[select(trash, at + 7u, count > 7u)] = x[select(c0.x, c7.x, count > 7u)];
}
