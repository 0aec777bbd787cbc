// import fetch tile_runs
// The fused engine's workgroup: a block of BLOCK_X x BLOCK_Y PEs of one wafer (cut by the
// dispatch's rectangle) that receives and computes a stage in one dispatch. It reads every
// state field over the block's owned points and the w-wide halo to their left and below into
// workgroup memory (`tile`; the halo comes from the PEs beside the block or from the links,
// as sendrecv's would), performs the (p,p) remap there, and computes every PE's stage from it.
// BLOCK_X and BLOCK_Y are set per wafer shape so that the tile fits TILE_CAP values, set per
// adapter from its workgroup memory.

@group(0) @binding(3) var<storage, read_write> x: array<f32>;
@group(0) @binding(6) var<storage, read> clock: array<vec4<u32>>;

// The tile and the values a Rows3 window may read past its last row.
const TILE_LEN: u32 = TILE_CAP + TILE_SLACK;
var<workgroup> tile: array<f32, TILE_LEN>;

// One workgroup's block: its wafer (device-local; first + count when past the dispatch), its
// first PE, how many PEs it has inside the rectangle, and its tile's width and height.
struct PeBlock {
    local: u32,
    pe0: vec2<u32>,
    pes: vec2<u32>,
    size: vec2<u32>,
}

// The block of workgroup `wg` of the dispatch: blocks tile each wafer's rectangle row by row.
fn block_of(wg: u32) -> PeBlock {
    let rect = dispatch.pes;
    let blocks = (rect.zw - rect.xy + vec2<u32>(BLOCK_X - 1u, BLOCK_Y - 1u)) / vec2<u32>(BLOCK_X, BLOCK_Y);
    let per_wafer = blocks.x * blocks.y;
    let item = min(wg / per_wafer, dispatch.count);
    let b = wg - item * per_wafer;
    let by = b / blocks.x;
    let pe0 = rect.xy + vec2<u32>(b - by * blocks.x, by) * vec2<u32>(BLOCK_X, BLOCK_Y);
    let pes = min(vec2<u32>(BLOCK_X, BLOCK_Y), rect.zw - pe0);
    return PeBlock(dispatch.first + item, pe0, pes, pes * wafer.n + wafer.w);
}

// Tile index of field f at tile point (tx, ty): frame point pe0 * n - w + (tx, ty).
fn tile_index(b: PeBlock, f: u32, tx: u32, ty: u32) -> u32 {
    return (f * b.size.y + ty) * b.size.x + tx;
}

// Every field's tile, read cooperatively. First one invocation at a time per tile row's w
// halo columns (through `fetch`) and per PE's run of a row below the wafer (the up
// package); then per LOAD_RUN owned columns of a row on the wafer, along one row of the
// block's PEs' SRAM blocks. Nothing for a block past the dispatch.
fn load_tile(b: PeBlock, lid: u32) {
    if b.local >= dispatch.first + dispatch.count {
        return;
    }
    let n = wafer.n;
    let w = wafer.w;
    let origin = vec2<i32>(b.pe0 * n) - i32(w);
    // Tile rows below the wafer (w at the wafer's low edge, else none).
    let below_rows = u32(max(-origin.y, 0));
    let edge = b.size.y + below_rows * b.pes.x;
    for (var c = lid; c < edge * cluster.fields; c += FUSED_WORKGROUP) {
        let f = c / edge;
        let r = c - f * edge;
        if r < b.size.y {
            let row = tile_index(b, f, 0u, r);
            for (var tx = 0u; tx < w; tx++) {
                tile[row + tx] = fetch(b.local, f, origin.x + i32(tx), origin.y + i32(r));
            }
            continue;
        }
        let m = r - b.size.y;
        let ty = m / b.pes.x;
        let tx = w + (m - ty * b.pes.x) * n;
        let row = tile_index(b, f, 0u, ty);
        let at = slot_base(below(wafer_ids[b.local]), cluster.up_cells, f) + (u32(origin.y + i32(ty)) + w) * cluster.width + u32(origin.x) + tx;
        for (var j = 0u; j < n; j++) {
            tile[row + tx + j] = up_links[at + j];
        }
    }
    let owned_x = b.pes.x * n;
    let segs = (owned_x + LOAD_RUN - 1u) / LOAD_RUN;
    let per_field = (b.size.y - below_rows) * segs;
    let on_wafer = vec2<u32>(b.pe0.x * n, u32(origin.y + i32(below_rows)));
    for (var c = lid; c < per_field * cluster.fields; c += FUSED_WORKGROUP) {
        let run = run_of(b.local, on_wafer, segs, per_field, c);
        load_run(run.first, tile_index(b, run.f, w + run.x0, below_rows + run.row), owned_x - run.x0);
    }
}

// The block of workgroup `wg` with its tile in workgroup memory. Every workgroup reaches the
// barrier, also one past the dispatch (it loads nothing): lavapipe faults when a workgroup
// returns before a barrier.
fn receive(wg: u32, lid: u32) -> PeBlock {
    let b = block_of(wg);
    load_tile(b, lid);
    workgroupBarrier();
    return b;
}

// Each PE's comm layer from the tile, as sendrecv leaves it: later stages of a step read the
// window of the step's start there.
fn write_comm(b: PeBlock, lid: u32) {
    let w = wafer.w;
    let n = wafer.n;
    let stride = wafer.stride;
    let comm = stride * stride - n * n;
    let per_field = b.pes.x * b.pes.y * comm;
    for (var c = lid; c < per_field * cluster.fields; c += FUSED_WORKGROUP) {
        let f = c / per_field;
        let r = c - f * per_field;
        let pe = r / comm;
        let k = r - pe * comm;
        // The lower w rows first, then the left w columns of the rows above them.
        var row = k / stride;
        var col = k - row * stride;
        if k >= w * stride {
            let m = k - w * stride;
            row = w + m / w;
            col = m - (row - w) * w;
        }
        let py = pe / b.pes.x;
        let px = pe - py * b.pes.x;
        let at = (b.pe0.y + py) * wafer.pes_x + b.pe0.x + px;
        let sram = f * wafer.plane + b.local * cluster.wafer_cells + at * wafer.block + row * stride + col;
        x[sram] = tile[tile_index(b, f, px * n + col, py * n + row)];
    }
}
