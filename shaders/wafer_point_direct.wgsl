// import links kernel owned_grid
// The fused engine's direct reads (`fused=direct`) of a Point stage on the PEs beyond the
// link bands: one invocation per POINT_RUN (composed in) owned points along a row of the
// dispatch's rectangle, the rectangle's owned points taken as one grid. The kernel's stage
// function reads the window [i, i+w] x [j, j+w] of the remapped state through `cur` and of
// the step's start through `base`, as on the explicit wafer; here each window value comes
// from the owned cell of whichever PE holds it (point (r, c) reads the owned points r - w ..
// r, c - w .. c; the rectangle starts at least w points in, so they lie on the wafer), so no
// stage needs a comm layer. A window is WINDOW x WINDOW (w + 1, composed in; at most 3).

@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read> x: array<f32>;
@group(0) @binding(5) var<storage, read> x0: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
@group(0) @binding(8) var<storage, read> clock: array<vec4<u32>>;

// SRAM offsets (field 0) of the window's rows (the wafer's first cell included) and columns;
// past WINDOW they are never read.
var<private> window_rows: vec3<u32>;
var<private> window_cols: vec3<u32>;
// The remapped state's window, field by field and row by row: a run slides it a column at a
// time and loads only the new column (lavapipe loads each lane's value on its own).
var<private> window_values: array<array<vec3<f32>, WINDOW>, FIELDS>;

fn cur(f: u32, dx: u32, dy: u32) -> f32 {
    return window_values[f][dy][dx];
}

fn base(f: u32, dx: u32, dy: u32) -> f32 {
    return x0[f * wafer.plane + window_rows[dy] + window_cols[dx]];
}

// Slides the window one column left, loading its new last column from SRAM column offset `col`.
fn push_column(col: u32) {
    for (var f = 0u; f < FIELDS; f++) {
        for (var dy = 0u; dy < WINDOW; dy++) {
            let v = window_values[f][dy];
            window_values[f][dy] = vec3(v.y, v.z, 0.0);
            window_values[f][dy][WINDOW - 1u] = x[f * wafer.plane + window_rows[dy] + col];
        }
    }
}

// An invocation's run of points shares its window rows and the divisions that find them,
// and steps each next column without one (on lavapipe a division per lane is a scalar
// instruction; on a GPU neighbouring invocations take neighbouring points, runs of 1).
@compute @workgroup_size(64)
fn compute_direct(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = grid_block(linear_id(gid, groups), vec2(POINT_RUN, 1u));
    if b.local >= dispatch.first + dispatch.count {
        return;
    }
    let w = wafer.w;
    let row0 = row_at(b.at.y - w);
    let row1 = row_after(row0);
    window_rows = b.local * cluster.wafer_cells + vec3(row0.cell, row1.cell, row_after(row1).cell);
    let origin = clock[b.local].yz;
    var col0 = column_at(b.at.x - w);
    var col1 = column_after(col0);
    var col2 = column_after(col1);
    window_cols = vec3(col0.cell, col1.cell, col2.cell);
    for (var dx = 0u; dx + 1u < WINDOW; dx++) {
        push_column(window_cols[dx]);
    }
    let end = min(b.at.x + POINT_RUN, dispatch.pes.z * wafer.n);
    for (var x = b.at.x; x < end; x++) {
        window_cols = vec3(col0.cell, col1.cell, col2.cell);
        push_column(window_cols[WINDOW - 1u]);
        // The global point of the written cell, as the explicit point driver finds it.
        let fresh = stage_point(global_point(origin, vec2(x, b.at.y)));
        let out = window_rows[w] + window_cols[w];
        for (var f = 0u; f < FIELDS; f++) {
            y[f * wafer.plane + out] = fresh[f];
        }
        col0 = col1;
        col1 = col2;
        col2 = column_after(col2);
    }
}
