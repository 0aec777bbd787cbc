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

// Offsets of the constant fields in `consts` (src/kernels/swe/mod.rs `Constants`).
fn plane() -> u32 {
    return params.nx * params.ny;
}

fn const_at(field: u32, x: u32, y: u32) -> f32 {
    return consts[field * plane() + (y % params.ny) * params.nx + x % params.nx];
}

// Row term `term` (0 metric 1/(a cos), 1 tan/a, 2 Coriolis, 3 cos, 4 1/(a cos^2)) of centre
// rows (corner = 0u) or corner rows (corner = 1u).
fn row_term(corner: u32, term: u32, y: u32) -> f32 {
    return consts[4u * plane() + (corner * 5u + term) * params.ny + y % params.ny];
}

fn avg4(sw: f32, se: f32, nw: f32, ne: f32) -> f32 {
    return 0.25 * ((sw + se) + (nw + ne));
}

fn d_lam(sw: f32, se: f32, nw: f32, ne: f32) -> f32 {
    return 0.5 * ((se - sw) + (ne - nw)) * params.inv_dlam;
}

fn d_y(sw: f32, se: f32, nw: f32, ne: f32) -> f32 {
    return 0.5 * ((nw - sw) + (ne - se)) * params.inv_dy;
}

// Momentum tendency along with the continuity divergence, shared by both half steps: the
// new (u, v) from the old ones, the mean velocity (ub, vb), the derivatives and the row terms.
fn momentum(u0: f32, v0: f32, ub: f32, vb: f32, du: vec2<f32>, dv: vec2<f32>, dh: vec2<f32>, m: f32, t: f32, f: f32, step: f32) -> vec2<f32> {
    let rot = f + ub * t;
    let u = u0 - step * ((m * (ub * du.x + vb * du.y) - rot * vb) + params.g * m * dh.x);
    let v = v0 - step * ((m * (ub * dv.x + vb * dv.y) + rot * ub) + params.g * m * dh.y);
    return vec2<f32>(u, v);
}

// Half step 1: the corner below-left of `at` (global (X - 1/2, Y - 1/2)) from the 2 x 2 centres.
fn swe_predict(at: vec2<u32>) -> array<f32, FIELDS> {
    let x0 = at.x + params.nx - 1u;
    let y0 = at.y + params.ny - 1u;
    let b_sw = const_at(0u, x0, y0);
    let b_se = const_at(0u, at.x, y0);
    let b_nw = const_at(0u, x0, at.y);
    let b_ne = const_at(0u, at.x, at.y);
    let c_s = row_term(0u, 3u, y0);
    let c_n = row_term(0u, 3u, at.y);
    let u_sw = cur(0u, 0u, 0u); let u_se = cur(0u, 1u, 0u); let u_nw = cur(0u, 0u, 1u); let u_ne = cur(0u, 1u, 1u);
    let v_sw = cur(1u, 0u, 0u); let v_se = cur(1u, 1u, 0u); let v_nw = cur(1u, 0u, 1u); let v_ne = cur(1u, 1u, 1u);
    let h_sw = cur(2u, 0u, 0u); let h_se = cur(2u, 1u, 0u); let h_nw = cur(2u, 0u, 1u); let h_ne = cur(2u, 1u, 1u);
    let ub = avg4(u_sw, u_se, u_nw, u_ne);
    let vb = avg4(v_sw, v_se, v_nw, v_ne);
    let hb = avg4(h_sw, h_se, h_nw, h_ne);
    let fu_sw = (h_sw - b_sw) * u_sw * c_s; let fu_se = (h_se - b_se) * u_se * c_s;
    let fu_nw = (h_nw - b_nw) * u_nw * c_n; let fu_ne = (h_ne - b_ne) * u_ne * c_n;
    let fv_sw = (h_sw - b_sw) * v_sw * c_s; let fv_se = (h_se - b_se) * v_se * c_s;
    let fv_nw = (h_nw - b_nw) * v_nw * c_n; let fv_ne = (h_ne - b_ne) * v_ne * c_n;
    let du = vec2<f32>(d_lam(u_sw, u_se, u_nw, u_ne), d_y(u_sw, u_se, u_nw, u_ne));
    let dv = vec2<f32>(d_lam(v_sw, v_se, v_nw, v_ne), d_y(v_sw, v_se, v_nw, v_ne));
    let dh = vec2<f32>(d_lam(h_sw, h_se, h_nw, h_ne), d_y(h_sw, h_se, h_nw, h_ne));
    let div = d_lam(fu_sw, fu_se, fu_nw, fu_ne) + d_y(fv_sw, fv_se, fv_nw, fv_ne);
    let m = row_term(1u, 0u, at.y);
    let uv = momentum(ub, vb, ub, vb, du, dv, dh, m, row_term(1u, 1u, at.y), row_term(1u, 2u, at.y), params.half_dt);
    let h = hb - params.half_dt * (row_term(1u, 4u, at.y) * div);
    let wet = const_at(3u, at.x, at.y) > 0.5;
    return array<f32, FIELDS>(select(0.0, uv.x, wet), select(0.0, uv.y, wet), h);
}

// Half step 2: the centre `at` from the 2 x 2 corners around it and its value at the step's start.
fn swe_correct(at: vec2<u32>) -> array<f32, FIELDS> {
    let x1 = at.x + 1u;
    let y1 = at.y + 1u;
    let b_sw = const_at(2u, at.x, at.y);
    let b_se = const_at(2u, x1, at.y);
    let b_nw = const_at(2u, at.x, y1);
    let b_ne = const_at(2u, x1, y1);
    let c_s = row_term(1u, 3u, at.y);
    let c_n = row_term(1u, 3u, y1);
    let u_sw = cur(0u, 0u, 0u); let u_se = cur(0u, 1u, 0u); let u_nw = cur(0u, 0u, 1u); let u_ne = cur(0u, 1u, 1u);
    let v_sw = cur(1u, 0u, 0u); let v_se = cur(1u, 1u, 0u); let v_nw = cur(1u, 0u, 1u); let v_ne = cur(1u, 1u, 1u);
    let h_sw = cur(2u, 0u, 0u); let h_se = cur(2u, 1u, 0u); let h_nw = cur(2u, 0u, 1u); let h_ne = cur(2u, 1u, 1u);
    let ub = avg4(u_sw, u_se, u_nw, u_ne);
    let vb = avg4(v_sw, v_se, v_nw, v_ne);
    let fu_sw = (h_sw - b_sw) * u_sw * c_s; let fu_se = (h_se - b_se) * u_se * c_s;
    let fu_nw = (h_nw - b_nw) * u_nw * c_n; let fu_ne = (h_ne - b_ne) * u_ne * c_n;
    let fv_sw = (h_sw - b_sw) * v_sw * c_s; let fv_se = (h_se - b_se) * v_se * c_s;
    let fv_nw = (h_nw - b_nw) * v_nw * c_n; let fv_ne = (h_ne - b_ne) * v_ne * c_n;
    let du = vec2<f32>(d_lam(u_sw, u_se, u_nw, u_ne), d_y(u_sw, u_se, u_nw, u_ne));
    let dv = vec2<f32>(d_lam(v_sw, v_se, v_nw, v_ne), d_y(v_sw, v_se, v_nw, v_ne));
    let dh = vec2<f32>(d_lam(h_sw, h_se, h_nw, h_ne), d_y(h_sw, h_se, h_nw, h_ne));
    let div = d_lam(fu_sw, fu_se, fu_nw, fu_ne) + d_y(fv_sw, fv_se, fv_nw, fv_ne);
    let u0 = base(0u, 0u, 0u);
    let v0 = base(1u, 0u, 0u);
    let h0 = base(2u, 0u, 0u);
    let m = row_term(0u, 0u, at.y);
    let uv = momentum(u0, v0, ub, vb, du, dv, dh, m, row_term(0u, 1u, at.y), row_term(0u, 2u, at.y), params.dt);
    let h = h0 - params.dt * (row_term(0u, 4u, at.y) * div);
    let wet = const_at(1u, at.x, at.y) > 0.5;
    return array<f32, FIELDS>(select(0.0, uv.x, wet), select(0.0, uv.y, wet), select(h0, h, wet));
}
