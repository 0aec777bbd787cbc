// import kernel
// A Point stage's constants loaded where they lie, at the global points and rows the stage
// names (the window offsets `d` and `dy` are for drivers that keep a window of them,
// shaders/point_window.wgsl).

fn window_const(c: u32, p: vec2<u32>, d: vec2<u32>) -> f32 {
    return load_const(c, p);
}

fn row_const(t: u32, y: u32, dy: u32) -> f32 {
    return load_row_const(t, y);
}
