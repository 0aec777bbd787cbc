// import links kernel time_block
// The fused engine's time blocks carried in registers across a subgroup's lanes
// (src/engine/gpu/row_blocks.rs, `block_lanes`), a GPU's shape of those of wafer_blocked_vec4.wgsl:
// a subgroup of LANES lanes advances LANES - 2 TIME_BLOCK columns by DIRECT_ROWS rows of the
// region (the points from REGION_START on, both ways, beyond the link bands) TIME_BLOCK
// steps, from the block's first state (`x`) to its last (`y`, the SRAM slot of the state an
// odd number of steps on). Each lane takes one column, from 2 TIME_BLOCK columns left of the
// block's on, and walks the rows upwards from 2 TIME_BLOCK rows below the block's
// (`advance_levels`); a remap's window takes the two columns left of a lane from the two lanes
// left of it, so level l is right in lanes 2 l and up, and the last level in the block's own
// columns. The columns and rows the lanes read outside the block lie in the region or the
// bands, all at the block's first state. The lanes of the wafer's last two columns, and after
// the top row those of every column, keep the inner states in `history` for the packages.

@group(0) @binding(3) var<storage, read> x: array<f32>;
@group(0) @binding(7) var<uniform> params: Params;
@group(0) @binding(8) var<storage, read_write> y: array<f32>;
@group(0) @binding(9) var<storage, read_write> history: array<f32>;

// A window row at this lane's column: the values of the two lanes left of it, then its own.
fn lane_row(v: f32) -> vec3<f32> {
    return vec3(subgroupShuffleUp(v, 2u), subgroupShuffleUp(v, 1u), v);
}

@compute @workgroup_size(64)
fn compute_blocked(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(subgroup_id) subgroup: u32, @builtin(subgroup_invocation_id) lane: u32) {
    let id = (group.x + group.y * groups.x) * (WORKGROUP / LANES) + subgroup;
    let size = wafer_size();
    let reach = 2u * TIME_BLOCK;
    let b = points_block(id, vec2(LANES - reach, DIRECT_ROWS), vec2(REGION_START), size);
    let y1 = min(b.at.y + DIRECT_ROWS, size.y);
    // The same for every lane of the subgroup, which all take part in the shuffles.
    if !block_in(b, vec2(size.x, y1)) {
        return;
    }
    let c = b.at.x + lane - reach;
    let own = lane >= reach && c < size.x;
    let at_right = own && c + wafer.w >= size.x;
    let column = b.local * cluster.wafer_cells + column_at(min(c, size.x - 1u)).cell;
    var r = row_at(b.at.y - reach);
    for (var i = 0u; i < reach; i++) {
        advance_levels(x[column + r.cell]);
        r = row_after(r);
    }
    for (var row = b.at.y; row < y1; row++) {
        let fresh = advance_levels(x[column + r.cell]);
        if own {
            y[column + r.cell] = fresh;
        }
        if at_right {
            keep_levels(strip_at(b, c, row), stride(), true);
        }
        r = row_after(r);
    }
    if own && y1 == size.y {
        keep_levels(strip_at(b, c, size.y - 2u), stride(), false);
        keep_levels(strip_at(b, c, size.y - 1u), stride(), true);
    }
}
