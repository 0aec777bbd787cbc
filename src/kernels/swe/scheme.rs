//! The CPU twin of `swe.wgsl`: the same operations in the same order, so that the CPU backend
//! and the GPU drivers share the arithmetic (drivers may still contract to FMA). A stage runs
//! over a run of points of one row; the per-point maths is written once, in `quad_terms` and
//! `momentum`, and the loops are branch-free so that they vectorise.

use glam::UVec2;

use super::{Constants, SweParams};
use multiversion::multiversion;

use crate::kernels::{RowWindow, RowsOut};

/// The four window values of a point: sw, se, nw, ne.
type Quad4 = [f32; 4];

#[inline(always)]
fn avg4([sw, se, nw, ne]: Quad4) -> f32 {
    0.25 * ((sw + se) + (nw + ne))
}

#[inline(always)]
fn d_lam(p: &SweParams, [sw, se, nw, ne]: Quad4) -> f32 {
    0.5 * ((se - sw) + (ne - nw)) * p.inv_dlam
}

#[inline(always)]
fn d_y(p: &SweParams, [sw, se, nw, ne]: Quad4) -> f32 {
    0.5 * ((nw - sw) + (ne - se)) * p.inv_dy
}

/// Row terms of one row: metric `1/(a cos)`, `tan/a`, Coriolis, `1/(a cos^2)`.
#[derive(Clone, Copy)]
struct Row {
    m: f32,
    t: f32,
    f: f32,
    k: f32,
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

/// Means, derivatives and the continuity divergence of the window `[u, v, h]`, with
/// bathymetry `b` at its four points and `cos` of latitude of its lower and upper rows.
#[inline(always)]
fn quad_terms(p: &SweParams, [u, v, h]: [Quad4; 3], b: Quad4, [c_s, c_n]: [f32; 2]) -> Quad {
    let c = [c_s, c_s, c_n, c_n];
    let fu: Quad4 = std::array::from_fn(|k| (h[k] - b[k]) * u[k] * c[k]);
    let fv: Quad4 = std::array::from_fn(|k| (h[k] - b[k]) * v[k] * c[k]);
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
#[inline(always)]
fn momentum(p: &SweParams, (u0, v0): (f32, f32), q: &Quad, row: Row, step: f32) -> (f32, f32) {
    let (ub, vb) = (q.ub, q.vb);
    let rot = row.f + ub * row.t;
    let u =
        u0 - step * ((row.m * (ub * q.du[0] + vb * q.du[1]) - rot * vb) + p.g * row.m * q.dh[0]);
    let v =
        v0 - step * ((row.m * (ub * q.dv[0] + vb * q.dv[1]) + rot * ub) + p.g * row.m * q.dh[1]);
    (u, v)
}

/// A field's two window rows (below, above), cut to the `len + 1` values a run reads.
fn rows2(rows: [&[f32]; 3], len: usize) -> [&[f32]; 2] {
    [&rows[0][..len + 1], &rows[1][..len + 1]]
}

/// The window of run point `j` from two rows.
#[inline(always)]
fn quad([s, n]: [&[f32]; 2], j: usize) -> Quad4 {
    [s[j], s[j + 1], n[j], n[j + 1]]
}

/// WGSL's `select(dry, value, wet)`.
#[inline(always)]
fn wet_or(value: f32, dry: f32, wet: bool) -> f32 {
    if wet {
        value
    } else {
        dry
    }
}

/// Half step 1 (`swe_predict`): the corners below-left of the centres `at + (j, 0)` from the
/// 2 x 2 centres around each.
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
pub fn swe_predict(p: &SweParams, c: &Constants, at: UVec2, window: &RowWindow, out: &mut RowsOut) {
    let (len, x) = (out[0].len(), at.x as i64);
    let y0 = (at.y + p.ny - 1) % p.ny;
    let b = [c.run(0, y0, x - 1, len + 1), c.run(0, at.y, x - 1, len + 1)];
    let wet = c.run(3, at.y, x, len);
    let cos = [c.row_term(false, 3, y0), c.row_term(false, 3, at.y)];
    let r = row(c, true, at.y);
    let [u, v, h] = [0, 1, 2].map(|f| rows2(window.cur[f], len));
    let [out_u, out_v, out_h, _] = out;
    let (out_u, out_v, out_h) = (&mut out_u[..len], &mut out_v[..len], &mut out_h[..len]);
    for j in 0..len {
        let q = quad_terms(p, [quad(u, j), quad(v, j), quad(h, j)], quad(b, j), cos);
        let (nu, nv) = momentum(p, (q.ub, q.vb), &q, r, p.half_dt);
        let wet = wet[j] > 0.5;
        out_u[j] = wet_or(nu, 0.0, wet);
        out_v[j] = wet_or(nv, 0.0, wet);
        out_h[j] = q.hb - p.half_dt * (r.k * q.div);
    }
}

/// Half step 2 (`swe_correct`): the centres `at + (j, 0)` from the 2 x 2 corners around each
/// and their values at the step's start.
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
pub fn swe_correct(p: &SweParams, c: &Constants, at: UVec2, window: &RowWindow, out: &mut RowsOut) {
    let (len, x) = (out[0].len(), at.x as i64);
    let y1 = (at.y + 1) % p.ny;
    let b = [c.run(2, at.y, x, len + 1), c.run(2, y1, x, len + 1)];
    let wet = c.run(1, at.y, x, len);
    let cos = [c.row_term(true, 3, at.y), c.row_term(true, 3, y1)];
    let r = row(c, false, at.y);
    let [u, v, h] = [0, 1, 2].map(|f| rows2(window.cur[f], len));
    let [u0, v0, h0] = [0, 1, 2].map(|f| &window.base[f][0][..len]);
    let [out_u, out_v, out_h, _] = out;
    let (out_u, out_v, out_h) = (&mut out_u[..len], &mut out_v[..len], &mut out_h[..len]);
    for j in 0..len {
        let q = quad_terms(p, [quad(u, j), quad(v, j), quad(h, j)], quad(b, j), cos);
        let (nu, nv) = momentum(p, (u0[j], v0[j]), &q, r, p.dt);
        let nh = h0[j] - p.dt * (r.k * q.div);
        let wet = wet[j] > 0.5;
        out_u[j] = wet_or(nu, u0[j], wet);
        out_v[j] = wet_or(nv, v0[j], wet);
        out_h[j] = wet_or(nh, h0[j], wet);
    }
}
