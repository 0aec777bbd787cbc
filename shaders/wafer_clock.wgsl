// import links
// A wafer's clock: how far the grid has translated after a number of remaps, and where the
// wafer's frame origin then lies on the global grid (the point drivers look up constants there).

// Translation of the grid after `remaps` remaps.
fn shift_after(remaps: u32) -> u32 {
    return remaps / wafer.stages * wafer.shift_per_step + wafer.partial[remaps % wafer.stages];
}

// The clock of wafer `k` after `remaps` remaps: the count, then the global point of its frame
// origin, `(frame origin - shift) mod (nx, ny)`.
fn clock_after(k: u32, remaps: u32) -> vec4<u32> {
    let shift = shift_after(remaps);
    let wy = k / cluster.wafers_x;
    let x0 = (k - wy * cluster.wafers_x) * cluster.width;
    let y0 = wy * cluster.height;
    let gx = (x0 + wafer.nx - shift % wafer.nx) % wafer.nx;
    let gy = (y0 + wafer.ny - shift % wafer.ny) % wafer.ny;
    return vec4<u32>(remaps, gx, gy, 0u);
}
