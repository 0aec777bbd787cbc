// import common kernel
// Blocks of points for the Rows3 drivers (wafer and global), over the kernel's `stencil_point`.

// Columns one compute invocation updates. It keeps three rows of BLOCK_COLS + 2 values in
// registers (scalars, not an array: arrays of this size end up in memory on llvmpipe).
const BLOCK_COLS: u32 = 8u;

struct Window {
    v0: f32, v1: f32, v2: f32, v3: f32, v4: f32,
    v5: f32, v6: f32, v7: f32, v8: f32, v9: f32,
}

// The new values of the BLOCK_COLS columns of row `mid`, from rows below and above.
fn update_block(w: Params, b: Window, m: Window, a: Window) -> array<f32, 8> {
    return array<f32, 8>(
        stencil_point(w, vec3(b.v0, b.v1, b.v2), vec3(m.v0, m.v1, m.v2), vec3(a.v0, a.v1, a.v2)),
        stencil_point(w, vec3(b.v1, b.v2, b.v3), vec3(m.v1, m.v2, m.v3), vec3(a.v1, a.v2, a.v3)),
        stencil_point(w, vec3(b.v2, b.v3, b.v4), vec3(m.v2, m.v3, m.v4), vec3(a.v2, a.v3, a.v4)),
        stencil_point(w, vec3(b.v3, b.v4, b.v5), vec3(m.v3, m.v4, m.v5), vec3(a.v3, a.v4, a.v5)),
        stencil_point(w, vec3(b.v4, b.v5, b.v6), vec3(m.v4, m.v5, m.v6), vec3(a.v4, a.v5, a.v6)),
        stencil_point(w, vec3(b.v5, b.v6, b.v7), vec3(m.v5, m.v6, m.v7), vec3(a.v5, a.v6, a.v7)),
        stencil_point(w, vec3(b.v6, b.v7, b.v8), vec3(m.v6, m.v7, m.v8), vec3(a.v6, a.v7, a.v8)),
        stencil_point(w, vec3(b.v7, b.v8, b.v9), vec3(m.v7, m.v8, m.v9), vec3(a.v7, a.v8, a.v9)),
    );
}
