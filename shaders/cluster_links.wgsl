// import common owned_grid
// Shared by the shaders that touch the links: the cluster, the device's wafer list, the
// dispatch, and where a frame point or a package slot lives. The links are ring buffers of
// `ring` package slots each, one per sending wafer and direction; package `s` sits in slot
// s % ring. A package holds one plane of `cells` values per state field.

@group(0) @binding(0) var<uniform> wafer: Wafer;
@group(0) @binding(1) var<uniform> cluster: Cluster;
// Cluster index of each wafer held by this device.
@group(0) @binding(2) var<storage, read> wafer_ids: array<u32>;
@group(1) @binding(0) var<uniform> dispatch: Dispatch;

// SRAM index of the owned cell at local frame point (x, y) of the device's wafer `local`, in
// the plane of field 0 (field f is wafer.plane cells further).
fn owned_index(local: u32, x: u32, y: u32) -> u32 {
    return local * cluster.wafer_cells + row_at(y).cell + column_at(x).cell;
}

// The global point at frame point `p` of a wafer whose frame origin, translated, is `origin`
// (its remap clock's y and z): their sum, less than twice the grid, wrapped once.
fn global_point(origin: vec2<u32>, p: vec2<u32>) -> vec2<u32> {
    let a = origin + p;
    return vec2<u32>(select(a.x, a.x - wafer.nx, a.x >= wafer.nx), select(a.y, a.y - wafer.ny, a.y >= wafer.ny));
}

// First cell of field f's plane in the slot of the dispatch's package on the link of wafer
// `k` (cluster index), for packages of `cells` cells per field.
fn slot_base(k: u32, cells: u32, f: u32) -> u32 {
    return ((k * cluster.ring + dispatch.step % cluster.ring) * cluster.fields + f) * cells;
}

// The wafer to the left of wafer `k`, whose right link arrives at `k`.
fn left_of(k: u32) -> u32 {
    let x = k % cluster.wafers_x;
    return k - x + select(x - 1u, cluster.wafers_x - 1u, x == 0u);
}

// The wafer below wafer `k`, whose up link arrives at `k`.
fn below(k: u32) -> u32 {
    let row = cluster.wafers_x;
    return select(k - row, k + (cluster.wafers_y - 1u) * row, k < row);
}

// The device-local wafer and the item within it of invocation `id`, for `per_wafer` items per
// wafer; x = first + count when the invocation is past the dispatch.
fn split_id(id: u32, per_wafer: u32) -> vec2<u32> {
    let wafer_index = min(id / per_wafer, dispatch.count);
    return vec2<u32>(dispatch.first + wafer_index, id % per_wafer);
}
