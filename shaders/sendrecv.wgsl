// Table 3's sendrecv as one remap dispatch: every comm-layer cell of every PE receives the
// owned cell with the same frame coordinate (src/wafer.rs `comm_source`), which always lies
// on a PE to the left and/or below. Reads touch only owned cells, writes only comm cells.
// One invocation fills one PE's comm layer: w rows of the lower strip (corner included) and
// w columns of the left strip.

@group(0) @binding(0) var<uniform> wafer: Wafer;
@group(0) @binding(1) var<storage, read_write> field: array<f32>;

// Source PE (mod pes) and cell along one axis for comm cell m < w of PE pe.
fn source_axis(pe: u32, m: u32, pes: u32) -> vec2<u32> {
    if wafer.n >= wafer.w {
        // One hop: the neighbour's last w owned cells.
        return vec2<u32>(select(pe - 1u, pes - 1u, pe == 0u), m + wafer.n);
    }
    let size = pes * wafer.n;
    let turns = (wafer.w + size - 1u) / size;
    let u = pe * wafer.n + m + turns * size - wafer.w;
    return vec2<u32>((u / wafer.n) % pes, u % wafer.n + wafer.w);
}

// Index of cell `cell` (x = column, y = row) of the PE at `pe` (x, y).
fn sram_index(pe: vec2<u32>, cell: vec2<u32>) -> u32 {
    return (pe.y * wafer.pes_x + pe.x) * wafer.block + cell.y * wafer.stride + cell.x;
}

@compute @workgroup_size(64)
fn sendrecv(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pe = linear_id(gid, groups);
    if pe >= wafer.pes_x * wafer.pes_y {
        return;
    }
    let here = vec2<u32>(pe % wafer.pes_x, pe / wafer.pes_x);
    for (var line = 0u; line < wafer.w; line++) {
        // Row `line` of the lower strip: the source row is fixed, the source column moves
        // left only for the first w columns.
        let from_y = source_axis(here.y, line, wafer.pes_y);
        for (var j = 0u; j < wafer.stride; j++) {
            var from_x = vec2<u32>(here.x, j);
            if j < wafer.w {
                from_x = source_axis(here.x, j, wafer.pes_x);
            }
            let src = sram_index(vec2<u32>(from_x.x, from_y.x), vec2<u32>(from_x.y, from_y.y));
            field[sram_index(here, vec2<u32>(j, line))] = field[src];
        }
        // Column `line` of the left strip, rows [w, n + w): same PE row.
        let from_x = source_axis(here.x, line, wafer.pes_x);
        for (var i = wafer.w; i < wafer.stride; i++) {
            let src = sram_index(vec2<u32>(from_x.x, here.y), vec2<u32>(from_x.y, i));
            field[sram_index(here, vec2<u32>(line, i))] = field[src];
        }
    }
}
