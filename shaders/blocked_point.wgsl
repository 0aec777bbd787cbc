// import point_consts
// The time block's remap of a Point stage (shaders/fused_blocked.wgsl): one invocation at a
// time per tile point runs the stage function of remap j (`blocked_stage`, composed in), which
// reads its window through `cur` (the state after remap j - 1) and `base` (the step's start),
// both in the tile, and writes every field of the point.

// The window's lower-left tile value (field 0) in the remapped state and at the step's start.
var<private> cur_at: u32;
var<private> base_at: u32;
var<private> tile_pitch: u32;

fn cur(f: u32, dx: u32, dy: u32) -> f32 {
    return tile[cur_at + f * TILE_VALUES + dy * tile_pitch + dx];
}

fn base(f: u32, dx: u32, dy: u32) -> f32 {
    return tile[base_at + f * TILE_VALUES + dy * tile_pitch + dx];
}

// Remap `j` of the block: every point of the tile at least j * w from its low sides.
fn advance(s: Span, lid: u32, j: u32) {
    let w = wafer.w;
    let lo = j * w;
    let stage = (j - 1u) % wafer.stages;
    let src = slot_tile(j - 1u);
    let start = slot_tile(j - 1u - stage);
    let dst = slot_tile(j);
    tile_pitch = s.pitch;
    let cols = select(0u, s.dims.x - lo, s.dims.x > lo);
    let rows = select(0u, s.dims.y - lo, s.dims.y > lo);
    if rows * cols == 0u {
        return;
    }
    let origin = tile_origin(s, j);
    for (var c = lid; c < rows * cols; c += FUSED_WORKGROUP) {
        let r = c / cols;
        let t = vec2<u32>(lo + c - r * cols, lo + r);
        let corner = (t.y - w) * s.pitch + t.x - w;
        cur_at = src + corner;
        base_at = start + corner;
        let fresh = blocked_stage(stage, global_point(origin, t));
        let out = dst + t.y * s.pitch + t.x;
        for (var f = 0u; f < FIELDS; f++) {
            tile[out + f * TILE_VALUES] = fresh[f];
        }
    }
}
