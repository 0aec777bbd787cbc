// import links
// Packing the packages of every wafer of the dispatch into its outgoing links (src/cluster/
// package.rs holds the CPU twins): `pack_up` copies the top strip (frame rows [H-w, H), all
// W columns); `pack_right` copies the right strip (frame rows [-w, H), columns [W-w, W)),
// whose first w rows, the corner, are forwarded from the up package that came from below.

@group(0) @binding(3) var<storage, read> field: array<f32>;
@group(0) @binding(4) var<storage, read_write> up_links: array<f32>;
@group(0) @binding(5) var<storage, read_write> right_links: array<f32>;

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
    let at = owned_index(item.x, x, y) + f * wafer.plane;
    up_links[slot_base(wafer_ids[item.x], cluster.up_cells, f) + c] = field[at];
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
        value = field[owned_index(item.x, x, row - wafer.w) + f * wafer.plane];
    } else {
        value = up_links[slot_base(below(k), cluster.up_cells, f) + row * cluster.width + x];
    }
    right_links[slot_base(k, cluster.right_cells, f) + c] = value;
}
