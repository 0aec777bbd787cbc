// Shallow-water equations on a Mercator grid, Lax-Wendroff in Richtmyer form (section 4.2.2).
// Twin: lw.rs (`swe_predict`, `swe_correct` in `scheme.rs`). Fields 0, 1, 2 are u, v, eta (the
// surface above the sea at rest).
// Window corners: sw = (0, 0), se = (1, 0), nw = (0, 1), ne = (1, 1).

const FIELDS: u32 = 3u;

struct Params {
    nx: u32,
    ny: u32,
    dt: f32,
    g: f32,
    inv_dlam: f32,
    inv_dy: f32,
    half_dt: f32,
    _pad: f32,
}

// The constant fields (src/kernels/swe/lw.rs `Constants`): CONSTS planes of the grid (0
// centre depth at rest, 1 centre mask, 2 corner depth at rest, 3 corner mask), then ROW_CONSTS
// terms of every row: term t of centre rows (t < 5) or corner rows (t - 5), 0 metric
// 1/(a cos), 1 tan/a, 2 Coriolis, 3 cos, 4 1/(a cos^2). The stages read them through the
// driver's `window_const` and `row_const`, which load them with `load_const` and
// `load_row_const` where they lie, or keep a run's window of them (the coordinates in range).
const CONSTS: u32 = 4u;
const ROW_CONSTS: u32 = 10u;

fn plane() -> u32 {
    return params.nx * params.ny;
}

fn load_const(c: u32, p: vec2<u32>) -> f32 {
    return consts_at(c * plane() + p.y * params.nx + p.x);
}

fn load_row_const(t: u32, y: u32) -> f32 {
    return consts_at(CONSTS * plane() + t * params.ny + y);
}

// Row term `term` of centre rows (corner = 0u) or corner rows (corner = 1u) at row `y`, window
// row `dy`.
fn row_term(corner: u32, term: u32, y: u32, dy: u32) -> f32 {
    return row_const(corner * 5u + term, y, dy);
}

// Constant plane `c` at the window's corners sw, se, nw, ne: its lower-left point `lo` and
// upper-right `hi`.
fn const_window(c: u32, lo: vec2<u32>, hi: vec2<u32>) -> vec4<f32> {
    return vec4<f32>(window_const(c, lo, vec2(0u, 0u)), window_const(c, vec2(hi.x, lo.y), vec2(1u, 0u)),
        window_const(c, vec2(lo.x, hi.y), vec2(0u, 1u)), window_const(c, hi, vec2(1u, 1u)));
}

// The neighbour coordinate one step down or up on the torus of `size`, without a division.
fn before(i: u32, size: u32) -> u32 {
    return select(i - 1u, size - 1u, i == 0u);
}

fn after(i: u32, size: u32) -> u32 {
    return select(i + 1u, 0u, i + 1u == size);
}

fn avg4(q: vec4<f32>) -> f32 {
    return 0.25 * ((q.x + q.y) + (q.z + q.w));
}

fn d_lam(q: vec4<f32>) -> f32 {
    return 0.5 * ((q.y - q.x) + (q.w - q.z)) * params.inv_dlam;
}

fn d_y(q: vec4<f32>) -> f32 {
    return 0.5 * ((q.z - q.x) + (q.w - q.y)) * params.inv_dy;
}

// The window of field `f`: sw, se, nw, ne.
fn window(f: u32) -> vec4<f32> {
    return vec4<f32>(cur(f, 0u, 0u), cur(f, 1u, 0u), cur(f, 0u, 1u), cur(f, 1u, 1u));
}

// What both half steps compute from the four corners (or centres) of their window.
struct Quad {
    ub: f32,
    vb: f32,
    hb: f32,
    du: vec2<f32>,
    dv: vec2<f32>,
    dh: vec2<f32>,
    div: f32,
}

// Means, derivatives and the continuity divergence of the window, with the depth at rest `d`
// at its four points and `cos` of latitude of its lower and upper rows (`quad_terms` of
// scheme.rs).
fn quad_terms(d: vec4<f32>, c_s: f32, c_n: f32) -> Quad {
    let u = window(0u);
    let v = window(1u);
    let h = window(2u);
    let c = vec4<f32>(c_s, c_s, c_n, c_n);
    let fu = (h + d) * u * c;
    let fv = (h + d) * v * c;
    return Quad(
        avg4(u), avg4(v), avg4(h),
        vec2<f32>(d_lam(u), d_y(u)),
        vec2<f32>(d_lam(v), d_y(v)),
        vec2<f32>(d_lam(h), d_y(h)),
        d_lam(fu) + d_y(fv),
    );
}

// The new (u, v) from (u0, v0) over `step` seconds, with the row terms of the written row.
fn momentum(u0: f32, v0: f32, q: Quad, m: f32, t: f32, f: f32, step: f32) -> vec2<f32> {
    let rot = f + q.ub * t;
    let u = u0 - step * ((m * (q.ub * q.du.x + q.vb * q.du.y) - rot * q.vb) + params.g * m * q.dh.x);
    let v = v0 - step * ((m * (q.ub * q.dv.x + q.vb * q.dv.y) + rot * q.ub) + params.g * m * q.dh.y);
    return vec2<f32>(u, v);
}

// The height of a corner that touches land: the mean over the water centres around it (`hb`
// where there are none), so that the pressure gradient at the coast sees the water's own level.
fn shore_height(h: vec4<f32>, wet: vec4<f32>, hb: f32) -> f32 {
    let count = (wet.x + wet.y) + (wet.z + wet.w);
    let sum = (wet.x * h.x + wet.y * h.y) + (wet.z * h.z + wet.w * h.w);
    return select(hb, sum / count, count > 0.5);
}

// Half step 1: the corner below-left of `at` (global (X - 1/2, Y - 1/2)) from the 2 x 2 centres.
fn swe_predict(at: vec2<u32>) -> array<f32, FIELDS> {
    let lo = vec2(before(at.x, params.nx), before(at.y, params.ny));
    let q = quad_terms(const_window(0u, lo, at), row_term(0u, 3u, lo.y, 0u), row_term(0u, 3u, at.y, 1u));
    let uv = momentum(q.ub, q.vb, q, row_term(1u, 0u, at.y, 1u), row_term(1u, 1u, at.y, 1u), row_term(1u, 2u, at.y, 1u), params.half_dt);
    let h = q.hb - params.half_dt * (row_term(1u, 4u, at.y, 1u) * q.div);
    let wet = window_const(3u, at, vec2(1u, 1u)) > 0.5;
    let shore = shore_height(window(2u), const_window(1u, lo, at), q.hb);
    return array<f32, FIELDS>(select(0.0, uv.x, wet), select(0.0, uv.y, wet), select(shore, h, wet));
}

// Half step 2: the centre `at` from the 2 x 2 corners around it and its value at the step's start.
fn swe_correct(at: vec2<u32>) -> array<f32, FIELDS> {
    let hi = vec2(after(at.x, params.nx), after(at.y, params.ny));
    let q = quad_terms(const_window(2u, at, hi), row_term(1u, 3u, at.y, 0u), row_term(1u, 3u, hi.y, 1u));
    let u0 = base(0u, 0u, 0u);
    let v0 = base(1u, 0u, 0u);
    let h0 = base(2u, 0u, 0u);
    let uv = momentum(u0, v0, q, row_term(0u, 0u, at.y, 0u), row_term(0u, 1u, at.y, 0u), row_term(0u, 2u, at.y, 0u), params.dt);
    let h = h0 - params.dt * (row_term(0u, 4u, at.y, 0u) * q.div);
    let wet = window_const(1u, at, vec2(0u, 0u)) > 0.5;
    return array<f32, FIELDS>(select(u0, uv.x, wet), select(v0, uv.y, wet), select(h0, h, wet));
}
