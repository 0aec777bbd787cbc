// import links time_block kernel
// Packing the packages of every wafer of the dispatch into its outgoing links (src/cluster/
// package.rs holds the CPU twins): `pack_up` copies the top strip (frame rows [H-w, H), all
// W columns); `pack_right` copies the right strip (frame rows [-w, H), columns [W-w, W)),
// whose first w rows, the corner, are forwarded from the up package that came from below.
// FROM_HISTORY (composed in) packs an inner state of a time block: the points of the blocked
// region (from REGION_START on, both ways) come from `history`.

@group(0) @binding(3) var<storage, read> field: array<f32>;
@group(0) @binding(4) var<storage, read_write> up_links: array<f32>;
@group(0) @binding(5) var<storage, read_write> right_links: array<f32>;
@group(0) @binding(9) var<storage, read> history: array<f32>;

// Field f at frame point (x, y) of wafer `local` in the state being packed.
fn strip_value(local: u32, f: u32, x: u32, y: u32) -> f32 {
    if FROM_HISTORY && x >= REGION_START && y >= REGION_START {
        let j = dispatch.step % TIME_BLOCK;
        return history[history_index(local, f, j, x, y, cluster.fields, cluster.width, cluster.height)];
    }
    return field[owned_index(local, x, y) + f * wafer.plane];
}

@compute @workgroup_size(64)
fn pack_up(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let item = split_id(linear_id(gid, groups), cluster.up_cells * cluster.fields);
    if item.x >= dispatch.first + dispatch.count {
        return;
    }
    let c = item.y % cluster.up_cells;
    let f = item.y / cluster.up_cells;
    let x = c % cluster.width;
    let y = cluster.height - wafer.w + c / cluster.width;
    up_links[slot_base(wafer_ids[item.x], cluster.up_cells, f) + c] = strip_value(item.x, f, x, y);
}

@compute @workgroup_size(64)
fn pack_right(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let item = split_id(linear_id(gid, groups), cluster.right_cells * cluster.fields);
    if item.x >= dispatch.first + dispatch.count {
        return;
    }
    let c = item.y % cluster.right_cells;
    let f = item.y / cluster.right_cells;
    let row = c / wafer.w;
    let x = cluster.width - wafer.w + c % wafer.w;
    let k = wafer_ids[item.x];
    var value: f32;
    if row >= wafer.w {
        value = strip_value(item.x, f, x, row - wafer.w);
    } else {
        value = up_links[slot_base(below(k), cluster.up_cells, f) + row * cluster.width + x];
    }
    right_links[slot_base(k, cluster.right_cells, f) + c] = value;
}
