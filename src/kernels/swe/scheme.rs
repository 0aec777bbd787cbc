//! The CPU twin of `swe.wgsl`: the same operations in the same order, so that the CPU backend
//! and the GPU drivers share the arithmetic (drivers may still contract to FMA).

use super::{Constants, SweParams};
use crate::kernels::{Values, Window};

/// The four window values of field `f`: sw, se, nw, ne.
fn quad(w: &[[f32; 3]; 3]) -> [f32; 4] {
    [w[0][0], w[0][1], w[1][0], w[1][1]]
}

fn avg4([sw, se, nw, ne]: [f32; 4]) -> f32 {
    0.25 * ((sw + se) + (nw + ne))
}

fn d_lam(p: &SweParams, [sw, se, nw, ne]: [f32; 4]) -> f32 {
    0.5 * ((se - sw) + (ne - nw)) * p.inv_dlam
}

fn d_y(p: &SweParams, [sw, se, nw, ne]: [f32; 4]) -> f32 {
    0.5 * ((nw - sw) + (ne - se)) * p.inv_dy
}

/// Row terms of one row: metric `1/(a cos)`, `tan/a`, Coriolis, `cos`, `1/(a cos^2)`.
#[derive(Clone, Copy)]
struct Row {
    m: f32,
    t: f32,
    f: f32,
    k: f32,
}

/// What both half steps compute from the four corners (or centres) of their window.
struct Quad {
    ub: f32,
    vb: f32,
    hb: f32,
    du: [f32; 2],
    dv: [f32; 2],
    dh: [f32; 2],
    div: f32,
}

/// Means, derivatives and the continuity divergence of the window, with bathymetry `b` at
/// its four points and `cos` of latitude of its lower and upper rows.
fn quad_terms(p: &SweParams, window: &Window, b: [f32; 4], [c_s, c_n]: [f32; 2]) -> Quad {
    let (u, v, h) = (
        quad(&window.cur[0]),
        quad(&window.cur[1]),
        quad(&window.cur[2]),
    );
    let c = [c_s, c_s, c_n, c_n];
    let fu: [f32; 4] = std::array::from_fn(|k| (h[k] - b[k]) * u[k] * c[k]);
    let fv: [f32; 4] = std::array::from_fn(|k| (h[k] - b[k]) * v[k] * c[k]);
    Quad {
        ub: avg4(u),
        vb: avg4(v),
        hb: avg4(h),
        du: [d_lam(p, u), d_y(p, u)],
        dv: [d_lam(p, v), d_y(p, v)],
        dh: [d_lam(p, h), d_y(p, h)],
        div: d_lam(p, fu) + d_y(p, fv),
    }
}

/// `momentum` of the WGSL: the new `(u, v)` from `(u0, v0)` over `step` seconds.
fn momentum(p: &SweParams, (u0, v0): (f32, f32), q: &Quad, row: Row, step: f32) -> (f32, f32) {
    let (ub, vb) = (q.ub, q.vb);
    let rot = row.f + ub * row.t;
    let u =
        u0 - step * ((row.m * (ub * q.du[0] + vb * q.du[1]) - rot * vb) + p.g * row.m * q.dh[0]);
    let v =
        v0 - step * ((row.m * (ub * q.dv[0] + vb * q.dv[1]) + rot * ub) + p.g * row.m * q.dh[1]);
    (u, v)
}

fn row(c: &Constants, corner: bool, y: u32) -> Row {
    let t = |term| c.row_term(corner, term, y);
    Row {
        m: t(0),
        t: t(1),
        f: t(2),
        k: t(4),
    }
}

/// Half step 1 (`swe_predict`): the corner below-left of `(x, y)` from the 2 x 2 centres.
pub fn swe_predict(p: &SweParams, c: &Constants, (x, y): (u32, u32), window: &Window) -> Values {
    let (x0, y0) = (x + p.nx - 1, y + p.ny - 1);
    let b = [(x0, y0), (x, y0), (x0, y), (x, y)].map(|(i, j)| c.at(0, i, j));
    let cos = [c.row_term(false, 3, y0), c.row_term(false, 3, y)];
    let q = quad_terms(p, window, b, cos);
    let r = row(c, true, y);
    let (u, v) = momentum(p, (q.ub, q.vb), &q, r, p.half_dt);
    let h = q.hb - p.half_dt * (r.k * q.div);
    let wet = c.at(3, x, y) > 0.5;
    [wet_or(u, 0.0, wet), wet_or(v, 0.0, wet), h, 0.0]
}

/// Half step 2 (`swe_correct`): the centre `(x, y)` from the 2 x 2 corners around it and its
/// value at the step's start.
pub fn swe_correct(p: &SweParams, c: &Constants, (x, y): (u32, u32), window: &Window) -> Values {
    let (x1, y1) = (x + 1, y + 1);
    let b = [(x, y), (x1, y), (x, y1), (x1, y1)].map(|(i, j)| c.at(2, i, j));
    let cos = [c.row_term(true, 3, y), c.row_term(true, 3, y1)];
    let q = quad_terms(p, window, b, cos);
    let (u0, v0, h0) = (
        window.base[0][0][0],
        window.base[1][0][0],
        window.base[2][0][0],
    );
    let r = row(c, false, y);
    let (u, v) = momentum(p, (u0, v0), &q, r, p.dt);
    let h = h0 - p.dt * (r.k * q.div);
    let wet = c.at(1, x, y) > 0.5;
    [
        wet_or(u, 0.0, wet),
        wet_or(v, 0.0, wet),
        wet_or(h, h0, wet),
        0.0,
    ]
}

/// WGSL's `select(dry, value, wet)`.
fn wet_or(value: f32, dry: f32, wet: bool) -> f32 {
    if wet {
        value
    } else {
        dry
    }
}
