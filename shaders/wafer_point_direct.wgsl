// import links kernel owned_grid point_window
// The fused engine's direct reads (`fused=direct`) of a Point stage: one invocation per
// POINT_RUN (composed in) owned points along POINT_ROWS rows of the dispatch's rectangle, the
// rectangle's owned points taken as one grid. The kernel's stage function reads the window
// [i, i+w] x [j, j+w] of the remapped state through `cur` and of the step's start through
// `base`, as on the explicit wafer; here each window value comes from the owned cell of
// whichever PE holds it (point (r, c) reads the owned points r - w .. r, c - w .. c), so no
// stage needs a comm layer. The points within w of the wafer's low edges, whose windows reach
// past it, are not this kernel's: the rectangle lies beyond the link bands, or the whole
// wafer less those points goes here and they to `compute_edges`
// (shaders/wafer_point_edges.wgsl). The run keeps its window in registers
// (shaders/point_window.wgsl).

@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read> x: array<f32>;
@group(0) @binding(5) var<storage, read> x0: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
@group(0) @binding(8) var<storage, read> clock: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read> x4: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read> x0_4: array<vec4<f32>>;

// SRAM offsets (field 0) of the window's rows (the wafer's first cell included) and columns
// (the last also as a line, to step on), and of the column being loaded; columns past WINDOW
// are never read.
var<private> window_rows: array<u32, WINDOW_ROWS>;
var<private> window_cols: vec3<u32>;
var<private> last_col: Line;
var<private> loading: u32;

fn state_value(f: u32, dy: u32) -> f32 {
    return x[f * wafer.plane + window_rows[dy] + loading];
}

fn state_quad(f: u32, dy: u32) -> vec4<f32> {
    return x4[(f * wafer.plane + window_rows[dy] + loading) / 4u];
}

fn base_value(f: u32, dy: u32) -> f32 {
    return x0[f * wafer.plane + window_rows[dy] + loading];
}

fn base_quad(f: u32, dy: u32) -> vec4<f32> {
    return x0_4[(f * wafer.plane + window_rows[dy] + loading) / 4u];
}

// The window's columns from owned column `x` on.
fn first_columns(x: u32) {
    let col0 = column_at(x);
    let col1 = column_after(col0);
    last_col = column_after(col1);
    window_cols = vec3(col0.cell, col1.cell, last_col.cell);
}

// The window's columns one column on.
fn next_columns() {
    last_col = column_after(last_col);
    window_cols = vec3(window_cols.yz, last_col.cell);
}

// Computes and stores point `x` of the run's `rows` rows from `row` (`window_cols` its
// window's columns); the rows past those go to the spare last cell of each plane (lavapipe
// crashes compiling the shallow-water corrector with the stores in a branch).
fn store_rows(origin: vec2<u32>, x: u32, row: u32, rows: u32) {
    for (var r = 0u; r < POINT_ROWS; r++) {
        point_row = r;
        // The global point of the written cell, as the explicit point driver finds it.
        let fresh = stage_point(global_point(origin, vec2(x, row + r)));
        let cell = window_rows[r + WINDOW - 1u] + window_cols[WINDOW - 1u];
        let out = select(wafer.plane - 1u, cell, r < rows);
        for (var f = 0u; f < FIELDS; f++) {
            y[f * wafer.plane + out] = fresh[f];
        }
    }
}

// An invocation's run of points shares its window rows and the divisions that find them,
// and steps each next column without one (on lavapipe a division per lane is a scalar
// instruction; on a GPU neighbouring invocations take neighbouring points, runs of 1). With
// QUADS (the dense grid, its width a multiple of 4) the run loads the state's new columns
// four at a time and starts at its block's first point: a wafer's first w columns come out
// wrong here and right from `compute_edges`, which runs after.
@compute @workgroup_size(64)
fn compute_direct(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = grid_block(linear_id(gid, groups), vec2(POINT_RUN, POINT_ROWS));
    direct_run(b, dispatch.pes.zw * wafer.n);
}

// The link bands of Point stages' time blocks in registers (shaders/wafer_blocked_point.wgsl),
// `wafer.region` points wide (`band_block`).
@compute @workgroup_size(64)
fn compute_bands(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let band = band_block(linear_id(gid, groups), vec2(POINT_RUN, POINT_ROWS), wafer.region);
    direct_run(band.b, band.end);
}

// The run of block `b`, of the points before `end`.
fn direct_run(b: GridBlock, end: vec2<u32>) {
    let w = wafer.w;
    // The points within w of the wafer's low edges are `compute_edges`'s.
    let start = select(max(b.at.x, w), b.at.x, QUADS);
    let end_x = min(b.at.x + POINT_RUN, end.x);
    let row = max(b.at.y, w);
    let row_end = min(b.at.y + POINT_ROWS, end.y);
    if b.local >= dispatch.first + dispatch.count || row >= row_end || start >= end_x {
        return;
    }
    // Window rows past the run's last are read; their points go to the spare cell.
    var line = row_at(row - w);
    for (var dy = 0u; dy < WINDOW_ROWS; dy++) {
        window_rows[dy] = b.local * cluster.wafer_cells + line.cell;
        line = row_after(line);
    }
    let rows = row_end - row;
    let origin = clock[b.local].yz;
    let size = vec2(wafer.nx, wafer.ny);
    enter_run(window_corner(global_point(origin, vec2(start, row)), size), size);
    // With QUADS and start < w the columns wrap below 0: the dense grid's step on by one
    // all the same.
    first_columns(start - w);
    for (var dx = 0u; dx + 1u < WINDOW; dx++) {
        loading = window_cols[dx];
        push_column();
    }
    if QUADS {
        for (var x = start; x < end_x; x += 4u) {
            // The dense grid's column x is cell x of its row.
            loading = x;
            load_quads();
            for (var lane = 0u; lane < 4u; lane++) {
                push_lane(lane);
                store_rows(origin, x + lane, row, rows);
                next_columns();
            }
        }
        return;
    }
    for (var x = start; x < end_x; x++) {
        loading = window_cols[WINDOW - 1u];
        push_column();
        store_rows(origin, x, row, rows);
        next_columns();
    }
}
