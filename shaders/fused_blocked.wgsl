// import links time_block wafer_clock tile_runs kernel
// The fused engine's temporal blocking: one dispatch advances the dispatch's region (its PE
// rectangle, the wafer's PEs clear of the bands that read the links) TIME_BLOCK remaps, the
// K steps of a block of the kernel's stages. Data only moves right and up, so a span of
// SPAN_X x SPAN_Y points needs only the TIME_BLOCK * w points to its left and below, at the
// block's first state: the workgroup reads every field of them with the span into workgroup
// memory and computes there, the valid part shrinking by w from the low sides each remap. The
// state after remap j lies in tile slot j % (stages + 1); the slots rotate like the SRAM's
// (src/wafer.rs StageSlots), so a later stage reads the step's start as `base`. `advance`
// (blocked_rows3.wgsl or blocked_point.wgsl, composed in with the kernel) computes one remap
// with the same stage code as every other engine. The span after the last remap goes to
// `next`, the SRAM slot of the state an odd number of steps on, and the strips of the inner
// states to `history`.

@group(0) @binding(3) var<storage, read> x: array<f32>;
@group(0) @binding(6) var<storage, read> clock: array<vec4<u32>>;
@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> next: array<f32>;
@group(0) @binding(9) var<storage, read_write> history: array<f32>;

// Every slot's tile of every field (TILE_VALUES each, TILE_PLANES of them; composed in) and
// what a Rows3 window may read past the last.
const TILE_LEN: u32 = TILE_PLANES * TILE_VALUES + TILE_SLACK;
var<workgroup> tile: array<f32, TILE_LEN>;

// One workgroup's span: its wafer (device-local; no points when past the dispatch), its
// first point, its points, its tile's width and height (the span and the reach), and the
// distance between tile rows (PITCH_SPARE past the last column, composed in for the driver).
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
    return Span(dispatch.first + item, origin, size, dims, dims.x + PITCH_SPARE);
}

// The first tile value of field 0 of the state after remap `remap` of the block.
fn slot_tile(remap: u32) -> u32 {
    return remap % (wafer.stages + 1u) * cluster.fields * TILE_VALUES;
}

// The global point of tile point (0, 0) of span `s` after remap j of the block (the wafer's
// clock has counted the block's first remap), less than nx + W and ny + H.
fn tile_origin(s: Span, j: u32) -> vec2<u32> {
    let moved = clock_after(wafer_ids[s.local], clock[s.local].x + j - 1u);
    return moved.yz + s.origin - vec2<u32>(TIME_BLOCK * wafer.w);
}

// Every field of the span with its reach into slot 0 of the tiles, LOAD_RUN columns at a
// time along rows of PEs (the region lies clear of the links, so all of it is owned cells).
fn load_span(s: Span, lid: u32) {
    let origin = s.origin - vec2<u32>(TIME_BLOCK * wafer.w);
    let segs = (s.dims.x + LOAD_RUN - 1u) / LOAD_RUN;
    let per_field = s.dims.y * segs;
    for (var c = lid; c < per_field * cluster.fields; c += FUSED_WORKGROUP) {
        let run = run_of(s.local, origin, segs, per_field, c);
        load_run(run.first, run.f * TILE_VALUES + run.row * s.pitch + run.x0, s.dims.x - run.x0);
    }
}

// Every field of the span from the tiles from `t` to `next`, LOAD_RUN columns at a time
// along rows of PEs: straight-line, the columns past the span's written to the spare cell
// after the SRAM blocks (see `load_run`).
fn store_span(s: Span, lid: u32, t: u32) {
    let reach = TIME_BLOCK * wafer.w;
    let trash = wafer.plane - 1u;
    let segs = (s.size.x + LOAD_RUN - 1u) / LOAD_RUN;
    let per_field = s.size.y * segs;
    for (var c = lid; c < per_field * cluster.fields; c += FUSED_WORKGROUP) {
        let run = run_of(s.local, s.origin, segs, per_field, c);
        let k = t + run.f * TILE_VALUES + (reach + run.row) * s.pitch + reach + run.x0;
        if LOAD_RUN == 1u {
            next[run.first.cell] = tile[k];
            continue;
        }
        let o = columns(run.first);
        let count = s.size.x - run.x0;
        next[o.c0] = tile[k];
        next[select(trash, o.c1, count > 1u)] = tile[k + 1u];
        next[select(trash, o.c2, count > 2u)] = tile[k + 2u];
        next[select(trash, o.c3, count > 3u)] = tile[k + 3u];
        next[select(trash, o.c4, count > 4u)] = tile[k + 4u];
        next[select(trash, o.c5, count > 5u)] = tile[k + 5u];
        next[select(trash, o.c6, count > 6u)] = tile[k + 6u];
        next[select(trash, o.c7, count > 7u)] = tile[k + 7u];
    }
}

// The span's points of the wafer's top and right strips in the tile from `t`, every field,
// as inner state j.
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
    let per_field = top_cells + right * (s.size.y - top);
    for (var c = lid; c < per_field * cluster.fields; c += FUSED_WORKGROUP) {
        let f = c / per_field;
        let m = c - f * per_field;
        var p: vec2<u32>;
        if m < top_cells {
            let r = m / s.size.x;
            p = vec2<u32>(m - r * s.size.x, s.size.y - top + r);
        } else {
            let k = m - top_cells;
            let r = k / right;
            p = vec2<u32>(s.size.x - right + k - r * right, r);
        }
        let at = history_index(s.local, f, j, s.origin.x + p.x, s.origin.y + p.y, cluster.fields, width, height);
        history[at] = tile[t + f * TILE_VALUES + (p.y + reach) * s.pitch + p.x + reach];
    }
}

@compute @workgroup_size(FUSED_WORKGROUP)
fn compute(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = span_of(wid.x + wid.y * groups.x);
    load_span(s, lid);
    workgroupBarrier();
    for (var j = 1u; j <= TIME_BLOCK; j++) {
        advance(s, lid, j);
        workgroupBarrier();
        if j < TIME_BLOCK {
            keep_strips(s, lid, j, slot_tile(j));
        }
    }
    store_span(s, lid, slot_tile(TIME_BLOCK));
}
