// import links time_block kernel rows3_block
// The fused engine's temporal blocking, for a single-stage Rows3 kernel: one dispatch advances
// the dispatch's region (its PE rectangle, the wafer's PEs clear of the bands that read the
// links) TIME_BLOCK steps. Data only moves right and up, so a span of SPAN_X x SPAN_Y points
// needs only the TIME_BLOCK * w points to its left and below, at the block's first state: the
// workgroup reads them with the span into workgroup memory and steps there, the valid part
// shrinking by w from the low sides each step, between two tiles. It writes the span after
// the last step to `y` and the strips of inner states to `history`; each new value is the
// same `update_block` of the same three rows as every other engine's.

@group(0) @binding(3) var<storage, read> x: array<f32>;
@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> y: array<f32>;
@group(0) @binding(9) var<storage, read_write> history: array<f32>;

// The two tiles (TILE_VALUES each) and what a window may read past the second's last row.
var<workgroup> tiles: array<f32, 2u * TILE_VALUES + BLOCK_COLS + 2u>;

// One workgroup's span: its wafer (device-local; no points when past the dispatch), its
// first point, its points, its tile's width and height (the span and the reach), and the
// distance between tile rows (room for a whole block of columns past the last).
struct Span {
    local: u32,
    origin: vec2<u32>,
    size: vec2<u32>,
    dims: vec2<u32>,
    pitch: u32,
}

fn span_of(wg: u32) -> Span {
    let r0 = dispatch.pes.xy * wafer.n;
    let r1 = dispatch.pes.zw * wafer.n;
    let span = vec2<u32>(SPAN_X, SPAN_Y);
    let spans = (r1 - r0 + span - vec2<u32>(1u)) / span;
    let per_wafer = spans.x * spans.y;
    let item = min(wg / per_wafer, dispatch.count);
    if item == dispatch.count {
        return Span(dispatch.first + item, r0, vec2<u32>(0u), vec2<u32>(0u), 0u);
    }
    let b = wg - item * per_wafer;
    let by = b / spans.x;
    let origin = r0 + vec2<u32>(b - by * spans.x, by) * span;
    let size = min(span, r1 - origin);
    let dims = size + TIME_BLOCK * wafer.w;
    return Span(dispatch.first + item, origin, size, dims, dims.x + BLOCK_COLS - 1u);
}

// Copies between the SRAM and tile `t` over the `size` points from frame point `origin`
// (tile point `at`): one invocation per run of a row inside one PE. `load` reads the SRAM
// (`x`), else the tile is written to `y`.
fn copy_rows(s: Span, lid: u32, origin: vec2<u32>, size: vec2<u32>, t: u32, at: vec2<u32>, load: bool) {
    let n = wafer.n;
    let first_pe = origin.x / n;
    let runs = select(0u, (origin.x + size.x - 1u) / n - first_pe + 1u, size.x > 0u);
    for (var c = lid; c < size.y * runs; c += WORKGROUP) {
        let r = c / runs;
        let pe = first_pe + c - r * runs;
        let fx0 = max(pe * n, origin.x);
        let fx1 = min(pe * n + n, origin.x + size.x);
        let sram = owned_index(s.local, fx0, origin.y + r);
        let tile = t + (at.y + r) * s.pitch + at.x + fx0 - origin.x;
        for (var j = 0u; j < fx1 - fx0; j++) {
            if load {
                tiles[tile + j] = x[sram + j];
            } else {
                y[sram + j] = tiles[tile + j];
            }
        }
    }
}

// Tile values k .. k + BLOCK_COLS + 1.
fn window(k: u32) -> Window {
    return Window(tiles[k], tiles[k + 1u], tiles[k + 2u], tiles[k + 3u], tiles[k + 4u],
        tiles[k + 5u], tiles[k + 6u], tiles[k + 7u], tiles[k + 8u], tiles[k + 9u]);
}

// Rows one invocation walks with its rolling window of three rows.
const ROWS: u32 = 16u;

// Step `j` of the block from tile `src` to tile `dst`: every point of the tile at least
// j * w from its low sides.
fn advance(s: Span, lid: u32, j: u32, src: u32, dst: u32) {
    let lo = j * wafer.w;
    let width = s.pitch;
    let cols = select(0u, s.dims.x - lo, s.dims.x > lo);
    let rows = select(0u, s.dims.y - lo, s.dims.y > lo);
    let col_blocks = (cols + BLOCK_COLS - 1u) / BLOCK_COLS;
    let row_chunks = (rows + ROWS - 1u) / ROWS;
    for (var c = lid; c < row_chunks * col_blocks; c += WORKGROUP) {
        let chunk = c / col_blocks;
        let tx = lo + (c - chunk * col_blocks) * BLOCK_COLS;
        let ty0 = lo + chunk * ROWS;
        var k = src + (ty0 - 2u) * width + tx - 2u;
        var below = window(k);
        var mid = window(k + width);
        var o = dst + ty0 * width + tx;
        for (var ty = ty0; ty < min(ty0 + ROWS, s.dims.y); ty++) {
            k += width;
            let above = window(k + width);
            // Whole blocks: columns past the tile's width land in the row's spare room.
            let fresh = update_block(params, below, mid, above);
            tiles[o] = fresh[0]; tiles[o + 1u] = fresh[1]; tiles[o + 2u] = fresh[2]; tiles[o + 3u] = fresh[3];
            tiles[o + 4u] = fresh[4]; tiles[o + 5u] = fresh[5]; tiles[o + 6u] = fresh[6]; tiles[o + 7u] = fresh[7];
            o += width;
            below = mid;
            mid = above;
        }
    }
}

// The span's points of the wafer's top and right strips in tile `t`, as inner state j.
fn keep_strips(s: Span, lid: u32, j: u32, t: u32) {
    let w = wafer.w;
    let reach = TIME_BLOCK * w;
    let width = cluster.width;
    let height = cluster.height;
    let x1 = s.origin.x + s.size.x;
    let y1 = s.origin.y + s.size.y;
    let top = min(s.size.y, select(0u, min(w, y1 + w - height), y1 + w > height));
    let right = min(s.size.x, select(0u, min(w, x1 + w - width), x1 + w > width));
    // The top rows of the span in the strip, then the right columns below them.
    let top_cells = top * s.size.x;
    for (var c = lid; c < top_cells + right * (s.size.y - top); c += WORKGROUP) {
        var p: vec2<u32>;
        if c < top_cells {
            let r = c / s.size.x;
            p = vec2<u32>(c - r * s.size.x, s.size.y - top + r);
        } else {
            let m = c - top_cells;
            let r = m / right;
            p = vec2<u32>(s.size.x - right + m - r * right, r);
        }
        let at = history_index(s.local, 0u, j, s.origin.x + p.x, s.origin.y + p.y, cluster.fields, width, height);
        history[at] = tiles[t + (p.y + reach) * s.pitch + p.x + reach];
    }
}

@compute @workgroup_size(64)
fn compute(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = span_of(wid.x + wid.y * groups.x);
    let reach = TIME_BLOCK * wafer.w;
    copy_rows(s, lid, s.origin - vec2<u32>(reach), s.dims, 0u, vec2<u32>(0u), true);
    workgroupBarrier();
    for (var j = 1u; j <= TIME_BLOCK; j++) {
        let src = ((j + 1u) % 2u) * TILE_VALUES;
        let dst = (j % 2u) * TILE_VALUES;
        advance(s, lid, j, src, dst);
        workgroupBarrier();
        if j < TIME_BLOCK {
            keep_strips(s, lid, j, dst);
        }
    }
    // The span after the last step, from the tile it ended in.
    let last = (TIME_BLOCK % 2u) * TILE_VALUES;
    copy_rows(s, lid, s.origin, s.size, last, vec2<u32>(reach), false);
}
