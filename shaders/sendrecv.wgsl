// Table 3's sendrecv as one remap dispatch: every comm-layer cell of every PE receives the
// owned cell with the same frame coordinate (src/wafer.rs `comm_source`), which always lies
// on a PE to the left and/or below. Reads touch only owned cells, writes only comm cells.

@group(0) @binding(0) var<uniform> wafer: Wafer;
@group(0) @binding(1) var<storage, read_write> field: array<f32>;

// Source PE (mod pes) and cell along one axis for cell m of PE pe.
fn source_axis(pe: u32, m: u32, pes: u32) -> vec2<u32> {
    let size = pes * wafer.n;
    let turns = (wafer.w + size - 1u) / size;
    let u = pe * wafer.n + m + turns * size - wafer.w;
    return vec2<u32>((u / wafer.n) % pes, u % wafer.n + wafer.w);
}

@compute @workgroup_size(64)
fn sendrecv(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let id = linear_id(gid, groups);
    let pe = id / wafer.comm;
    if pe >= wafer.pes_x * wafer.pes_y {
        return;
    }
    // Comm cell k: the lower strip (rows [0, w), corner included), then the left strip.
    let k = id % wafer.comm;
    let lower = wafer.w * wafer.stride;
    var i: u32;
    var j: u32;
    if k < lower {
        i = k / wafer.stride;
        j = k % wafer.stride;
    } else {
        i = wafer.w + (k - lower) / wafer.w;
        j = (k - lower) % wafer.w;
    }
    let sx = source_axis(pe % wafer.pes_x, j, wafer.pes_x);
    let sy = source_axis(pe / wafer.pes_x, i, wafer.pes_y);
    let src = (sy.x * wafer.pes_x + sx.x) * wafer.block + sy.y * wafer.stride + sx.y;
    field[pe * wafer.block + i * wafer.stride + j] = field[src];
}
