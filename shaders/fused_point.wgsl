// import fused_tile kernel point_consts
// The fused engine for a Point stage: after the tile is in, one invocation at a time per owned
// point of the block runs the kernel's stage function, which reads the remapped window through
// `cur` (the tile) and the step's start through `base` (the tile at a step's first stage, else
// the SRAM slot `x0`, whose comm layer the first stage wrote).

@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> y: array<f32>;

// The window's lower-left cell: in the SRAM (field 0) and in the tile (field 0).
var<private> window_at: u32;
var<private> tile_at: u32;
var<private> tile_width: u32;
var<private> tile_plane: u32;

fn cur(f: u32, dx: u32, dy: u32) -> f32 {
    return tile[f * tile_plane + tile_at + dy * tile_width + dx];
}

@compute @workgroup_size(FUSED_WORKGROUP)
fn compute(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let b = receive(wid.x + wid.y * groups.x, lid);
    if b.local >= dispatch.first + dispatch.count {
        return;
    }
    if WRITE_COMM {
        write_comm(b, lid);
    }
    tile_width = b.size.x;
    tile_plane = b.size.x * b.size.y;
    let n = wafer.n;
    let per_pe = n * n;
    let origin = clock[b.local];
    for (var c = lid; c < b.pes.x * b.pes.y * per_pe; c += FUSED_WORKGROUP) {
        let pe = c / per_pe;
        let cell = c - pe * per_pe;
        let i = cell / n;
        let j = cell - i * n;
        let py = pe / b.pes.x;
        let px = pe - py * b.pes.x;
        let at_pe = b.pe0 + vec2<u32>(px, py);
        let block = b.local * cluster.wafer_cells + (at_pe.y * wafer.pes_x + at_pe.x) * wafer.block;
        window_at = block + i * wafer.stride + j;
        tile_at = (py * n + i) * tile_width + px * n + j;
        // The global point of the written cell, as the explicit point driver finds it.
        let fresh = stage_point(global_point(origin.yz, at_pe * n + vec2(j, i)));
        let out = block + (i + wafer.w) * wafer.stride + j + wafer.w;
        for (var f = 0u; f < FIELDS; f++) {
            y[f * wafer.plane + out] = fresh[f];
        }
    }
}
