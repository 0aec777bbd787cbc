// Shared by every kernel: the wafer shape, the stencil weights and the linear invocation index.

const WORKGROUP: u32 = 64u;

// WaferGeometry (src/wafer.rs) as the shaders see it.
struct Wafer {
    pes_x: u32,
    pes_y: u32,
    n: u32,
    p: u32,
    w: u32,
    stride: u32,     // n + w
    block: u32,      // stride * stride cells per PE
    rows_per_thread: u32,
}

// The global grid of the reference kernel.
struct Grid {
    nx: u32,
    ny: u32,
    rows_per_thread: u32,
    _pad: u32,
}

// Stencil weights rows[dy + 1][dx + 1] (x, y, z of each row used).
struct Weights {
    rows: array<vec4<f32>, 3>,
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
