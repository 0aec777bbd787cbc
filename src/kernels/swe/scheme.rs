//! The CPU twin of `swe.wgsl`: the same operations in the same order, so that the CPU backend
//! and the GPU drivers share the arithmetic (drivers may still contract to FMA). A stage runs
//! over a block of points, row by row; the per-point maths is written once, in `quad_terms` and
//! `momentum`, and the loops are branch-free so that they vectorise.

use super::{Constants, SweParams};
use multiversion::multiversion;

use crate::kernels::{Block, BlockIn, BlockOut};

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

/// Means, derivatives and the continuity divergence of the window `[u, v, eta]`, with the
/// depth at rest `d` at its four points and `cos` of latitude of its lower and upper rows.
#[inline(always)]
fn quad_terms(p: &SweParams, [u, v, h]: [Quad4; 3], d: Quad4, [c_s, c_n]: [f32; 2]) -> Quad {
    let c = [c_s, c_s, c_n, c_n];
    let fu: Quad4 = std::array::from_fn(|k| (h[k] + d[k]) * u[k] * c[k]);
    let fv: Quad4 = std::array::from_fn(|k| (h[k] + d[k]) * v[k] * c[k]);
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

/// The window of point `j` from a field's two window rows (below, above).
#[inline(always)]
fn quad([s, n]: [&[f32]; 2], j: usize) -> Quad4 {
    [s[j], s[j + 1], n[j], n[j + 1]]
}

/// `shore_height` of the WGSL: the height of a corner that touches land, the mean over the
/// water centres around it (`hb` where there are none), so that the pressure gradient at the
/// coast sees the water's own level (a reflecting wall) rather than the land's frozen one.
#[inline(always)]
fn shore_height(h: Quad4, wet: Quad4, hb: f32) -> f32 {
    let count = (wet[0] + wet[1]) + (wet[2] + wet[3]);
    let sum = (wet[0] * h[0] + wet[1] * h[1]) + (wet[2] * h[2] + wet[3] * h[3]);
    wet_or(sum / count, hb, count > 0.5)
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

/// The constants run `i` of a block reads: the depths at rest and the masks of its windows' two
/// rows, the mask and row terms of the written row, and `cos` of latitude of the windows' rows.
struct RunConstants<'a> {
    b: [&'a [f32]; 2],
    window_wet: [&'a [f32]; 2],
    wet: &'a [f32],
    cos: [f32; 2],
    row: Row,
}

impl<'a> RunConstants<'a> {
    /// For the predictor (corners from the centres of rows `y-1, y`, columns from `x-1`) or
    /// the corrector (centres from the corners of rows `y, y+1`, columns from `x`).
    #[inline(always)]
    fn new(p: &SweParams, c: &'a Constants, predict: bool, block: Block, i: usize) -> Self {
        let (x, len) = (block.at.x as i64, block.len);
        let y = (block.at.y + i as u32) % p.ny;
        let ([low, high], from, plane, mask) = match predict {
            true => ([(y + p.ny - 1) % p.ny, y], x - 1, 0, 3),
            false => ([y, (y + 1) % p.ny], x, 2, 1),
        };
        Self {
            b: [
                c.run(plane, low, from, len + 1),
                c.run(plane, high, from, len + 1),
            ],
            window_wet: [
                c.run(plane + 1, low, from, len + 1),
                c.run(plane + 1, high, from, len + 1),
            ],
            wet: c.run(mask, y, x, len),
            cos: [c.row_term(!predict, 3, low), c.row_term(!predict, 3, high)],
            row: row(c, predict, y),
        }
    }
}

/// Half step 1 (`swe_predict`): the corners below-left of the block's centres from the 2 x 2
/// centres around each. (AVX2 only: the AVX-512 build of these loops measured slower on the
/// development machine, 0.12 against 0.15 to 0.18 G point-steps/s at n = 128.)
#[multiversion(targets("x86_64+avx2"))]
pub fn swe_predict(
    p: &SweParams,
    c: &Constants,
    block: Block,
    input: &BlockIn,
    out: &mut BlockOut,
) {
    let len = block.len;
    for i in 0..block.rows {
        let RunConstants {
            b,
            window_wet,
            wet,
            cos,
            row: r,
        } = RunConstants::new(p, c, true, block, i);
        let [u, v, h] = [0, 1, 2].map(|f| [0, 1].map(|dy| input.cur(f, i, dy, len + 1)));
        let [out_u, out_v, out_h, _] = out.runs(i, len);
        for j in 0..len {
            let hq = quad(h, j);
            let q = quad_terms(p, [quad(u, j), quad(v, j), hq], quad(b, j), cos);
            let (nu, nv) = momentum(p, (q.ub, q.vb), &q, r, p.half_dt);
            let wet = wet[j] > 0.5;
            out_u[j] = wet_or(nu, 0.0, wet);
            out_v[j] = wet_or(nv, 0.0, wet);
            let shore = shore_height(hq, quad(window_wet, j), q.hb);
            out_h[j] = wet_or(q.hb - p.half_dt * (r.k * q.div), shore, wet);
        }
    }
}

/// Half step 2 (`swe_correct`): the block's centres from the 2 x 2 corners around each and
/// their values at the step's start.
#[multiversion(targets("x86_64+avx2"))]
pub fn swe_correct(
    p: &SweParams,
    c: &Constants,
    block: Block,
    input: &BlockIn,
    out: &mut BlockOut,
) {
    let len = block.len;
    for i in 0..block.rows {
        let RunConstants {
            b,
            wet,
            cos,
            row: r,
            ..
        } = RunConstants::new(p, c, false, block, i);
        let [u, v, h] = [0, 1, 2].map(|f| [0, 1].map(|dy| input.cur(f, i, dy, len + 1)));
        let [u0, v0, h0] = [0, 1, 2].map(|f| input.base(f, i, 0, len));
        let [out_u, out_v, out_h, _] = out.runs(i, len);
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
}
