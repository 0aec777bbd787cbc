// Shallow-water equations on a Mercator grid, Lax-Wendroff in Richtmyer form (section 4.2.2).
// Twin: mod.rs (`swe_predict`, `swe_correct` in `scheme`). Fields 0, 1, 2 are u, v, h.
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

// Offsets of the constant fields in the constants (src/kernels/swe/mod.rs `Constants`), read
// through `consts_at`, which the engine composes in over its pages; the coordinates are in
// range.
fn plane() -> u32 {
    return params.nx * params.ny;
}

fn const_at(field: u32, x: u32, y: u32) -> f32 {
    return consts_at(field * plane() + y * params.nx + x);
}

// Row term `term` (0 metric 1/(a cos), 1 tan/a, 2 Coriolis, 3 cos, 4 1/(a cos^2)) of centre
// rows (corner = 0u) or corner rows (corner = 1u).
fn row_term(corner: u32, term: u32, y: u32) -> f32 {
    return consts_at(4u * plane() + (corner * 5u + term) * params.ny + y);
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

// Means, derivatives and the continuity divergence of the window, with bathymetry `b` at its
// four points and `cos` of latitude of its lower and upper rows (`quad_terms` of scheme.rs).
fn quad_terms(b: vec4<f32>, c_s: f32, c_n: f32) -> Quad {
    let u = window(0u);
    let v = window(1u);
    let h = window(2u);
    let c = vec4<f32>(c_s, c_s, c_n, c_n);
    let fu = (h - b) * u * c;
    let fv = (h - b) * v * c;
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
    let x0 = before(at.x, params.nx);
    let y0 = before(at.y, params.ny);
    let b = vec4<f32>(const_at(0u, x0, y0), const_at(0u, at.x, y0), const_at(0u, x0, at.y), const_at(0u, at.x, at.y));
    let q = quad_terms(b, row_term(0u, 3u, y0), row_term(0u, 3u, at.y));
    let uv = momentum(q.ub, q.vb, q, row_term(1u, 0u, at.y), row_term(1u, 1u, at.y), row_term(1u, 2u, at.y), params.half_dt);
    let h = q.hb - params.half_dt * (row_term(1u, 4u, at.y) * q.div);
    let wet = const_at(3u, at.x, at.y) > 0.5;
    let around = vec4<f32>(const_at(1u, x0, y0), const_at(1u, at.x, y0), const_at(1u, x0, at.y), const_at(1u, at.x, at.y));
    let shore = shore_height(window(2u), around, q.hb);
    return array<f32, FIELDS>(select(0.0, uv.x, wet), select(0.0, uv.y, wet), select(shore, h, wet));
}

// Half step 2: the centre `at` from the 2 x 2 corners around it and its value at the step's start.
fn swe_correct(at: vec2<u32>) -> array<f32, FIELDS> {
    let x1 = after(at.x, params.nx);
    let y1 = after(at.y, params.ny);
    let b = vec4<f32>(const_at(2u, at.x, at.y), const_at(2u, x1, at.y), const_at(2u, at.x, y1), const_at(2u, x1, y1));
    let q = quad_terms(b, row_term(1u, 3u, at.y), row_term(1u, 3u, y1));
    let u0 = base(0u, 0u, 0u);
    let v0 = base(1u, 0u, 0u);
    let h0 = base(2u, 0u, 0u);
    let uv = momentum(u0, v0, q, row_term(0u, 0u, at.y), row_term(0u, 1u, at.y), row_term(0u, 2u, at.y), params.dt);
    let h = h0 - params.dt * (row_term(0u, 4u, at.y) * q.div);
    let wet = const_at(1u, at.x, at.y) > 0.5;
    return array<f32, FIELDS>(select(u0, uv.x, wet), select(v0, uv.y, wet), select(h0, h, wet));
}
