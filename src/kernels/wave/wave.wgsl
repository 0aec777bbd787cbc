// The linear wave equation in two fields (wave). Twin: mod.rs (`wave_block`). Fields 0 and 1
// are u and v = dt du/dt; the window is 3 x 3 around the written point (ORIGIN = -1).

const FIELDS: u32 = 2u;

struct Params {
    // (c dt / h)^2
    r: f32,
    _pad0: f32,
    _pad1: f32,
    _pad2: f32,
}

// The kernel reads no constants; the drivers want at least one of each kind.
const CONSTS: u32 = 1u;
const ROW_CONSTS: u32 = 1u;

fn load_const(c: u32, p: vec2<u32>) -> f32 {
    return 0.0;
}

fn load_row_const(t: u32, y: u32) -> f32 {
    return 0.0;
}

// u and v a step on by symplectic Euler: v += r lap(u), then u += v.
fn wave(at: vec2<u32>) -> array<f32, FIELDS> {
    let u = cur(0u, 1u, 1u);
    let lap = ((cur(0u, 2u, 1u) + cur(0u, 0u, 1u)) + (cur(0u, 1u, 2u) + cur(0u, 1u, 0u))) - 4.0 * u;
    let v = cur(1u, 1u, 1u) + params.r * lap;
    return array<f32, FIELDS>(u + v, v);
}
