// Shared by every engine shader: the wafer and cluster shapes, the dispatch and the linear
// invocation index.

const WORKGROUP: u32 = 64u;

// Values a Rows3 window may read past the last row of a fused engine's tile (BLOCK_COLS + 2).
const TILE_SLACK: u32 = 10u;

// WaferGeometry (src/wafer.rs) and the kernel's translation as the shaders see it
// (WaferUniform in src/engine/gpu/uniforms.rs).
struct Wafer {
    pes_x: u32,
    pes_y: u32,
    n: u32,
    w: u32,
    stride: u32,     // n + w
    block: u32,      // stride * stride cells per PE
    rows_per_thread: u32,
    plane: u32,      // cells of one field in an SRAM buffer (every wafer of the device)
    nx: u32,         // the global grid
    ny: u32,
    stages: u32,     // stages per step
    shift_per_step: u32,
    // Where the owned points lie (src/engine/gpu/layout.rs): Table 3's blocks, or one dense grid.
    pitch: u32,      // cells from an owned row to the next within a PE: stride, or the width
    first: u32,      // a PE's first owned row and column within its block: w, or 0
    pe_col: u32,     // cells from a PE's block to the next along x: block, or n
    pe_row: u32,     // and along y: pes_x * block, or n * width
    partial: vec4<u32>, // translation after k < stages stages of a step
    region: u32,     // first point of the time blocks' region along x and y (in registers)
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// The global grid of the reference kernel, and the band of its rows a dispatch computes
// (shaders/global_grid.wgsl).
struct Grid {
    nx: u32,
    ny: u32,
    rows_per_thread: u32,
    plane: u32,      // cells of one field in the band's buffers: pitch * its stored rows
    pitch: u32,      // cells from a row to the next: nx, or more for the vec4 rows
    first: u32,      // the band's first row
    rows: u32,       // and its number of rows
    shift: u32,      // global row y lies in stored row (y + shift) mod ny
}

// Dispatches are 2D when one dimension would exceed the adapter's limit.
fn linear_id(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.x + gid.y * groups.x * WORKGROUP;
}

// ClusterGeometry (src/cluster) as the shaders see it.
struct Cluster {
    wafers_x: u32,
    wafers_y: u32,
    width: u32,       // W: points along a wafer's x side
    height: u32,      // H
    ring: u32,        // package slots per link
    up_cells: u32,    // W * w
    right_cells: u32, // w * (H + w)
    wafer_cells: u32, // SRAM cells per wafer and field
    fields: u32,      // state fields: planes of the SRAM and of every package
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// What one dispatch covers: the device's wafers [first, first + count), all holding the
// state `step` (modulo 2 * ring), and of each wafer the PEs in the rectangle
// [pes.x, pes.z) x [pes.y, pes.w). Bound at a dynamic offset in group 1.
struct Dispatch {
    first: u32,
    count: u32,
    step: u32,
    _pad: u32,
    pes: vec4<u32>,
}
