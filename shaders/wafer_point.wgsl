// import links kernel point_consts
// Table 3's compute of a Point stage on the dispatch's PEs: one invocation per owned point
// writes y[i+w][j+w] (every state field) from the kernel's stage function, which reads the
// window [i, i+w] x [j, j+w] of the remapped state through `cur` and of the step's start
// through `base`, and gets the global point it writes: the frame point minus the kernel's
// translation after this remap (`clock`, kept by sendrecv: the wafer's remaps, this one
// included, and its frame origin translated back, modulo the grid).

@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read> x: array<f32>;
@group(0) @binding(5) var<storage, read> x0: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
@group(0) @binding(8) var<storage, read> clock: array<vec4<u32>>;

// SRAM index (field 0) of the window's lower-left cell.
var<private> window_at: u32;

fn cur(f: u32, dx: u32, dy: u32) -> f32 {
    return x[f * wafer.plane + window_at + dy * wafer.stride + dx];
}

fn base(f: u32, dx: u32, dy: u32) -> f32 {
    return x0[f * wafer.plane + window_at + dy * wafer.stride + dx];
}

@compute @workgroup_size(64)
fn compute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let id = linear_id(gid, groups);
    let n = wafer.n;
    let rect = dispatch.pes;
    let rect_x = rect.z - rect.x;
    let in_rect = rect_x * (rect.w - rect.y);
    // Divisions are dear on some adapters: each quotient gives its remainder.
    let item = id / (n * n);
    if item >= dispatch.count * in_rect {
        return;
    }
    let wafer_item = item / in_rect;
    let pe = item - wafer_item * in_rect;
    let pe_row = pe / rect_x;
    let local = dispatch.first + wafer_item;
    let px = rect.x + pe - pe_row * rect_x;
    let py = rect.y + pe_row;
    let cell = id - item * n * n;
    let i = cell / n;
    let j = cell - i * n;
    let block = local * cluster.wafer_cells + (py * wafer.pes_x + px) * wafer.block;
    window_at = block + i * wafer.stride + j;
    // The global point of the written cell: the wafer's translated origin (from `clock`)
    // plus the cell's frame offset on the wafer.
    let fresh = stage_point(global_point(clock[local].yz, vec2(px * n + j, py * n + i)));
    let out = block + (i + wafer.w) * wafer.stride + j + wafer.w;
    for (var f = 0u; f < FIELDS; f++) {
        y[f * wafer.plane + out] = fresh[f];
    }
}
