// import kernel
// A run of a Point stage's points along POINT_ROWS rows (composed in) keeps its window in
// registers: the remapped state (`cur`), the step's start (`base`), the kernel's constant
// planes (`window_const`) and row constants (`row_const`) at the WINDOW x WINDOW points (w +
// 1, composed in with `WindowRow`, a vector that holds a window row, and `slid`; at most 4)
// of each of its rows' windows, WINDOW_ROWS rows in all. Each next
// column of points slides the window one column and loads only the new column, once for all
// the run's rows; the row constants are loaded once per run. On lavapipe every load is a
// scalar load per lane, and LLVM drops the loads of values no stage reads. The driver sets
// `point_row`, the run's row whose point the stage computes, and defines `state_value(f, dy)`,
// the remapped state of field `f` at window row `dy` of the column being loaded,
// `base_value(f, dy)` the step's start there, and `state_quad(f, dy)` and `base_quad(f, dy)`;
// `next_column` is that column's global column.

var<private> window_values: array<array<WindowRow, WINDOW_ROWS>, FIELDS>;
var<private> base_values: array<array<WindowRow, WINDOW_ROWS>, FIELDS>;
var<private> const_values: array<array<WindowRow, WINDOW_ROWS>, CONSTS>;
var<private> row_values: array<array<f32, WINDOW_ROWS>, ROW_CONSTS>;
// Global rows of the window; the global column of the window column loaded next, on a torus
// `window_width` columns wide.
var<private> window_ys: array<u32, WINDOW_ROWS>;
// The run's row whose point the stage computes: its window's lowest row.
var<private> point_row: u32;
var<private> next_column: u32;
var<private> window_width: u32;

fn cur(f: u32, dx: u32, dy: u32) -> f32 {
    return window_values[f][point_row + dy][dx];
}

fn base(f: u32, dx: u32, dy: u32) -> f32 {
    return base_values[f][point_row + dy][dx];
}

// The stage names the global point `p` of window offset `d`; the window already holds it.
fn window_const(c: u32, p: vec2<u32>, d: vec2<u32>) -> f32 {
    return const_values[c][point_row + d.y][d.x];
}

fn row_const(t: u32, y: u32, dy: u32) -> f32 {
    return row_values[t][point_row + dy];
}

// The point `first + d` of a torus of `size` points (`first` < size, d <= size).
fn torus(first: u32, d: u32, size: u32) -> u32 {
    let i = first + d;
    return select(i, i - size, i >= size);
}

// The lower-left point of the window of global point `p` (ORIGIN, in [-w, 0], from it) on
// a torus of `size` points.
fn window_corner(p: vec2<u32>, size: vec2<u32>) -> vec2<u32> {
    let back = vec2<u32>(vec2<i32>(size) + ORIGIN);
    return vec2(torus(p.x, back.x, size.x), torus(p.y, back.y, size.y));
}

// Enters a run whose first window's lower-left global point is `corner`, on a torus of
// `size` points: loads its row constants.
fn enter_run(corner: vec2<u32>, size: vec2<u32>) {
    next_column = corner.x;
    window_width = size.x;
    for (var dy = 0u; dy < WINDOW_ROWS; dy++) {
        window_ys[dy] = torus(corner.y, dy, size.y);
        for (var t = 0u; t < ROW_CONSTS; t++) {
            row_values[t][dy] = load_row_const(t, window_ys[dy]);
        }
    }
}

// Slides the window one column, loading its new last column (global column `next_column`).
fn push_column() {
    for (var dy = 0u; dy < WINDOW_ROWS; dy++) {
        for (var f = 0u; f < FIELDS; f++) {
            window_values[f][dy] = slid(window_values[f][dy], state_value(f, dy));
            base_values[f][dy] = slid(base_values[f][dy], base_value(f, dy));
        }
    }
    push_consts();
}

// The next four new columns of the state and the step's start, where the driver loads them
// as vec4s (`state_quad(f, dy)`, `base_quad(f, dy)`, from a new column at a multiple of 4):
// a quarter of the loads.
var<private> quads: array<array<vec4<f32>, WINDOW_ROWS>, FIELDS>;
var<private> base_quads: array<array<vec4<f32>, WINDOW_ROWS>, FIELDS>;

fn load_quads() {
    for (var dy = 0u; dy < WINDOW_ROWS; dy++) {
        for (var f = 0u; f < FIELDS; f++) {
            quads[f][dy] = state_quad(f, dy);
            base_quads[f][dy] = base_quad(f, dy);
        }
    }
}

// As `push_column`, the new column lane `lane` of the quads.
fn push_lane(lane: u32) {
    for (var dy = 0u; dy < WINDOW_ROWS; dy++) {
        for (var f = 0u; f < FIELDS; f++) {
            window_values[f][dy] = slid(window_values[f][dy], quads[f][dy][lane]);
            base_values[f][dy] = slid(base_values[f][dy], base_quads[f][dy][lane]);
        }
    }
    push_consts();
}

fn push_consts() {
    for (var dy = 0u; dy < WINDOW_ROWS; dy++) {
        for (var c = 0u; c < CONSTS; c++) {
            const_values[c][dy] = slid(const_values[c][dy], load_const(c, vec2(next_column, window_ys[dy])));
        }
    }
    next_column = torus(next_column, 1u, window_width);
}
