// import links
// Temporal blocking's history: a time block of TIME_BLOCK remaps (K steps of the kernel's
// stages) computes its region (the wafer's PEs right of and above the bands that read the
// links) in one dispatch, so the SRAM holds that region's inner states nowhere. The packages
// of those states still leave one per remap: the blocked dispatch keeps the region's part of the top and right strips (frame rows
// [H-w, H) and columns [W-w, W)) of every inner state j in [1, TIME_BLOCK) in `history`, where
// the packing reads them. Per device-local wafer, field and j: the top strip (w rows of W
// cells), then the right strip (H rows of w cells); the corner belongs to the top strip.

// Index in `history` of frame point (x, y) of a strip, field f, inner state j of wafer `local`.
fn history_index(local: u32, f: u32, j: u32, x: u32, y: u32, fields: u32, width: u32, height: u32) -> u32 {
    let w = wafer.w;
    let strips = w * (width + height);
    let base = ((local * fields + f) * TIME_BLOCK + j) * strips;
    if y + w >= height {
        return base + (y + w - height) * width + x;
    }
    return base + w * width + y * w + x + w - width;
}

// History index of frame point (x, y) of block `b`'s wafer, field 0, inner state 0; fields and
// inner states lie `stride()` cells apart.
fn strip_at(b: GridBlock, x: u32, y: u32) -> u32 {
    return history_index(b.local, 0u, 0u, x, y, cluster.fields, cluster.width, cluster.height);
}

fn stride() -> u32 {
    return wafer.w * (cluster.width + cluster.height);
}
