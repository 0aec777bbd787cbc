//! The CPU twin of `swe_c.wgsl`: the same operations in the same order, run over a block of
//! points row by row. The per-point maths is written once (`face_difference`,
//! `cell_difference`, `upwind`, `surface_flux`), the loops branch-free so that they vectorise.

use multiversion::multiversion;

use super::{Constants, Plane, RowTerm, SweCParams};
use crate::kernels::{Block, BlockIn, BlockOut};

/// The weights of a face's difference from its fourth-order flag: `27/24` and `1/24` where
/// it is set, `1` and `0` where not.
#[inline(always)]
fn weights(order4: f32) -> (f32, f32) {
    (1.0 + 0.125 * order4, order4 * (1.0 / 24.0))
}

/// The difference `b - a` across the face between `a` and `b`, fourth-order with their outer
/// neighbours `z` and `c` where the face's flag says so.
#[inline(always)]
fn face_difference(order4: f32, [z, a, b, c]: [f32; 4]) -> f32 {
    let (c1, c3) = weights(order4);
    c1 * (b - a) - c3 * (c - z)
}

/// The flux difference across a cell from the fluxes `f` of its faces two, one and none
/// before it and one after it (`z | a [cell] b | c`), each face with its own flag `order4`:
/// the weights each face's [`face_difference`] gives this cell.
#[inline(always)]
fn cell_difference([o0, o1, o2, o3]: [f32; 4], f: [f32; 4]) -> f32 {
    let (w0, w1, w2, w3) = (weights(o0), weights(o1), weights(o2), weights(o3));
    (w2.0 * f[2] - w1.0 * f[1]) + (w0.1 * f[0] - w3.1 * f[3])
}

/// The difference of `here` from the side the flow `speed` comes from.
#[inline(always)]
fn upwind(speed: f32, [behind, here, ahead]: [f32; 3]) -> f32 {
    if speed > 0.0 {
        here - behind
    } else {
        ahead - here
    }
}

/// The part of a face's flux that the surface carries: the face's depth at rest `depth` plus
/// the upwind surface (`before` the face or `after` it), at least nothing, times `speed`,
/// less the `depth * speed` the linear flux holds.
#[inline(always)]
fn surface_flux(depth: f32, speed: f32, before: f32, after: f32) -> f32 {
    let surface = if speed > 0.0 { before } else { after };
    ((depth + surface).max(0.0) - depth) * speed
}

/// The weights of a cell's east and west faces and of its north and south faces in
/// [`laplacian`]: the faces' `cos^2(lat)` over the cell's, the faces' share of its area.
#[inline(always)]
fn faces_weights(c: &Constants, y: u32) -> [f32; 3] {
    let cos_c = c.row(RowTerm::CosC, y);
    let [north, south] = [y, y + c.ny() - 1].map(|row| c.row(RowTerm::CosV, row));
    let cell = cos_c * cos_c;
    [1.0, (north * north) / cell, (south * south) / cell]
}

/// The Laplacian of a field at a cell from its value `here` and those `around` it (east,
/// west, north, south) through the `open` faces, each difference weighted by its face's share
/// of the cell's area (`weights`: east and west, north, south), so that a sum over cells of
/// area times it is zero: what the filter takes out of a cell another cell gets.
#[inline(always)]
fn laplacian(weights: [f32; 3], open: [bool; 4], here: f32, around: [f32; 4]) -> f32 {
    let d: [f32; 4] = std::array::from_fn(|k| pick(open[k], around[k] - here, 0.0));
    (d[0] + d[1]) * weights[0] + (d[2] * weights[1] + d[3] * weights[2])
}

/// `select(other, value, keep)` of the WGSL.
#[inline(always)]
fn pick(keep: bool, value: f32, other: f32) -> f32 {
    if keep {
        value
    } else {
        other
    }
}

/// The window rows of a field for run `i`, as columns: `col(c, dy)` holds window column `c`,
/// row `dy` of the run's points, exactly `len` values (so that indexing by point needs no
/// bounds check and the loops vectorise).
#[derive(Clone, Copy)]
struct Window<'a>([&'a [f32]; 4], usize);

impl<'a> Window<'a> {
    #[inline(always)]
    fn of(input: &BlockIn<'a>, f: usize, i: usize, len: usize) -> Self {
        Self([0, 1, 2, 3].map(|dy| input.cur(f, i, dy, len + 3)), len)
    }

    #[inline(always)]
    fn col(&self, c: usize, dy: usize) -> &'a [f32] {
        &self.0[dy][c..c + self.1]
    }
}

/// `len` values of a constant plane's row from column `from`.
#[inline(always)]
fn plane_run(c: &Constants, plane: Plane, y: u32, from: i64, len: usize) -> &[f32] {
    &c.run(plane, y, from, len)[..len]
}

/// The output runs of run `i`, `len` values each.
#[inline(always)]
fn outputs<'a>(out: &'a mut BlockOut, i: usize, len: usize) -> [&'a mut [f32]; 4] {
    out.runs(i, len).map(|run| &mut run[..len])
}

/// The east-face stage: `u` a step on from the surface's slope and the Coriolis force of the
/// old `v`, and the surface's Laplacian for the filter; `v` and `eta` as they were.
#[multiversion(targets("x86_64+avx2"))]
pub fn east_faces(
    p: &SweCParams,
    c: &Constants,
    block: Block,
    input: &BlockIn,
    out: &mut BlockOut,
) {
    let (len, g, dt, dry) = (block.len, p.g, p.dt, p.dry);
    let x0 = block.at.x as i64;
    for i in 0..block.rows {
        let y = (block.at.y + i as u32) % p.ny;
        let row = |t| c.row(t, y);
        let (fc, tc) = (row(RowTerm::CoriolisC), row(RowTerm::TanC));
        let (along_c, across_c) = (row(RowTerm::AlongC), row(RowTerm::AcrossC));
        let [u, v, e] = [0, 1, 2].map(|f| Window::of(input, f, i, len));
        // Window column 1 is the point's own, row 1 its row.
        let [ew, e0, ee, eee] = [0, 1, 2, 3].map(|k| e.col(k, 1));
        let [es, en] = [e.col(1, 0), e.col(1, 2)];
        let [uw, u0, ue, us, un] = [
            u.col(0, 1),
            u.col(1, 1),
            u.col(2, 1),
            u.col(1, 0),
            u.col(1, 2),
        ];
        let [v0, ve, vs, vse] = [v.col(1, 1), v.col(2, 1), v.col(1, 0), v.col(2, 0)];
        let depth = plane_run(c, Plane::Depth, y, x0, len);
        let depth_e = plane_run(c, Plane::Depth, y, x0 + 1, len);
        let east = plane_run(c, Plane::EastDepth, y, x0, len);
        let west = plane_run(c, Plane::EastDepth, y, x0 - 1, len);
        let north = plane_run(c, Plane::NorthDepth, y, x0, len);
        let south = plane_run(c, Plane::NorthDepth, y + c.ny() - 1, x0, len);
        let order = plane_run(c, Plane::EastOrder4, y, x0, len);
        let fixed = plane_run(c, Plane::Fixed, y, x0, len);
        let weights = faces_weights(c, y);
        let [out_u, out_v, out_e, out_lap] = outputs(out, i, len);
        for j in 0..len {
            let here = u0[j];
            let grad_x = face_difference(order[j], [ew[j], e0[j], ee[j], eee[j]]);
            let vbar = 0.25 * ((v0[j] + ve[j]) + (vs[j] + vse[j]));
            let advect = here * along_c * upwind(here, [uw[j], here, ue[j]])
                + vbar * across_c * upwind(vbar, [us[j], here, un[j]]);
            let next = here + dt * ((-g * along_c * grad_x + (fc + here * tc) * vbar) - advect);
            let drained = pick(next > 0.0, depth[j] + e0[j], depth_e[j] + ee[j]);
            let open = east[j] > 0.0 && drained > dry;
            let kept = fixed[j] > 0.5;
            out_u[j] = pick(kept, here, pick(open, next, 0.0));
            out_v[j] = v0[j];
            out_e[j] = e0[j];
            let faces = [east[j] > 0.0, west[j] > 0.0, north[j] > 0.0, south[j] > 0.0];
            let around = [ee[j], ew[j], en[j], es[j]];
            out_lap[j] = pick(kept, 0.0, laplacian(weights, faces, e0[j], around));
        }
    }
}

/// The north-face stage: `v` a step on from the surface's slope and the Coriolis force of the
/// new `u` (after `u`: the rotation is symplectic, so it neither gains energy nor moves a
/// balanced flow); the rest as it was.
#[multiversion(targets("x86_64+avx2"))]
pub fn north_faces(
    p: &SweCParams,
    c: &Constants,
    block: Block,
    input: &BlockIn,
    out: &mut BlockOut,
) {
    let (len, g, dt, dry) = (block.len, p.g, p.dt, p.dry);
    let x0 = block.at.x as i64;
    for i in 0..block.rows {
        let y = (block.at.y + i as u32) % p.ny;
        let row = |t| c.row(t, y);
        let (fv, tv) = (row(RowTerm::CoriolisV), row(RowTerm::TanV));
        let (along_v, across_v) = (row(RowTerm::AlongV), row(RowTerm::AcrossV));
        let [u, v, e, lap] = [0, 1, 2, 3].map(|f| Window::of(input, f, i, len));
        let [es, e0, en, enn] = [0, 1, 2, 3].map(|k| e.col(1, k));
        let [u0, uw, un, unw] = [u.col(1, 1), u.col(0, 1), u.col(1, 2), u.col(0, 2)];
        let [vw, v0, ve, vs, vn] = [
            v.col(0, 1),
            v.col(1, 1),
            v.col(2, 1),
            v.col(1, 0),
            v.col(1, 2),
        ];
        let lap0 = lap.col(1, 1);
        let depth = plane_run(c, Plane::Depth, y, x0, len);
        let depth_n = plane_run(c, Plane::Depth, y + 1, x0, len);
        let north = plane_run(c, Plane::NorthDepth, y, x0, len);
        let order = plane_run(c, Plane::NorthOrder4, y, x0, len);
        let fixed = plane_run(c, Plane::Fixed, y, x0, len);
        let [out_u, out_v, out_e, out_lap] = outputs(out, i, len);
        for j in 0..len {
            let here = v0[j];
            let grad_y = face_difference(order[j], [es[j], e0[j], en[j], enn[j]]);
            let ubar = 0.25 * ((u0[j] + uw[j]) + (un[j] + unw[j]));
            let advect = ubar * along_v * upwind(ubar, [vw[j], here, ve[j]])
                + here * across_v * upwind(here, [vs[j], here, vn[j]]);
            let next = here + dt * ((-g * across_v * grad_y - (fv + ubar * tv) * ubar) - advect);
            let drained = pick(next > 0.0, depth[j] + e0[j], depth_n[j] + en[j]);
            let open = north[j] > 0.0 && drained > dry;
            out_u[j] = u0[j];
            out_v[j] = pick(fixed[j] > 0.5, here, pick(open, next, 0.0));
            out_e[j] = e0[j];
            out_lap[j] = lap0[j];
        }
    }
}

/// The continuity stage: `eta` of the block's cells a step on from the fluxes through their
/// faces, less the filter; the rest as it was.
#[multiversion(targets("x86_64+avx2"))]
pub fn continuity(
    p: &SweCParams,
    c: &Constants,
    block: Block,
    input: &BlockIn,
    out: &mut BlockOut,
) {
    let (len, dt, damping) = (block.len, p.dt, p.damping);
    let x0 = block.at.x as i64;
    let (mut along, mut across) = (vec![0.0; len], vec![0.0; len]);
    for i in 0..block.rows {
        let y = (block.at.y + i as u32) % p.ny;
        let near = |k: u32| (y + p.ny + k - 2) % p.ny;
        let (cos_c, scale) = (c.row(RowTerm::CosC, y), c.row(RowTerm::Continuity, y));
        let cos_v = [0, 1, 2, 3].map(|k| c.row(RowTerm::CosV, near(k)));
        let [u, v, e, lap] = [0, 1, 2, 3].map(|f| Window::of(input, f, i, len));
        // Window column 2 is the point's own, row 2 its row; faces k = 0..3 lie at -2..1.
        let faces_u = [0, 1, 2, 3].map(|k| u.col(k, 2));
        let faces_v = [0, 1, 2, 3].map(|k| v.col(2, k));
        let [ew, e0, ee] = [1, 2, 3].map(|k| e.col(k, 2));
        let [es, en] = [e.col(2, 1), e.col(2, 3)];
        let [lw, l0, le] = [1, 2, 3].map(|k| lap.col(k, 2));
        let [ls, ln] = [lap.col(2, 1), lap.col(2, 3)];
        let east = [0, 1, 2, 3].map(|k| plane_run(c, Plane::EastDepth, y, x0 - 2 + k, len));
        let order_e = [0, 1, 2, 3].map(|k| plane_run(c, Plane::EastOrder4, y, x0 - 2 + k, len));
        let north = [0, 1, 2, 3].map(|k| plane_run(c, Plane::NorthDepth, near(k), x0, len));
        let order_n = [0, 1, 2, 3].map(|k| plane_run(c, Plane::NorthOrder4, near(k), x0, len));
        let depth = plane_run(c, Plane::Depth, y, x0, len);
        let fixed = plane_run(c, Plane::Fixed, y, x0, len);
        let weights = faces_weights(c, y);
        let [out_u, out_v, out_e, out_lap] = outputs(out, i, len);
        let [hu0, hu1, hu2, hu3] = east;
        let [fu0, fu1, fu2, fu3] = faces_u;
        let [oe0, oe1, oe2, oe3] = order_e;
        let [hv0, hv1, hv2, hv3] = north;
        let [fv0, fv1, fv2, fv3] = faces_v;
        let [on0, on1, on2, on3] = order_n;
        // Three passes over the run, each with few enough inputs to vectorise: the flux
        // differences along the row, across it, then the new surface.
        let (along, across) = (&mut along[..len], &mut across[..len]);
        for j in 0..len {
            let flux = [
                hu0[j] * fu0[j],
                hu1[j] * fu1[j],
                hu2[j] * fu2[j],
                hu3[j] * fu3[j],
            ];
            let linear = cell_difference([oe0[j], oe1[j], oe2[j], oe3[j]], flux);
            along[j] = linear
                + (surface_flux(hu2[j], fu2[j], e0[j], ee[j])
                    - surface_flux(hu1[j], fu1[j], ew[j], e0[j]));
        }
        for j in 0..len {
            let flux = [
                cos_v[0] * (hv0[j] * fv0[j]),
                cos_v[1] * (hv1[j] * fv1[j]),
                cos_v[2] * (hv2[j] * fv2[j]),
                cos_v[3] * (hv3[j] * fv3[j]),
            ];
            let linear = cell_difference([on0[j], on1[j], on2[j], on3[j]], flux);
            across[j] = linear
                + (cos_v[2] * surface_flux(hv2[j], fv2[j], e0[j], en[j])
                    - cos_v[1] * surface_flux(hv1[j], fv1[j], es[j], e0[j]));
        }
        for j in 0..len {
            let div = scale * (cos_c * (along[j] * p.inv_dlam) + across[j] * p.inv_dy);
            let open = [hu2[j] > 0.0, hu1[j] > 0.0, hv2[j] > 0.0, hv1[j] > 0.0];
            let smoothing = laplacian(weights, open, l0[j], [le[j], lw[j], ln[j], ls[j]]);
            let moves = depth[j] > 0.0 && fixed[j] < 0.5;
            out_u[j] = fu2[j];
            out_v[j] = fv2[j];
            out_e[j] = pick(moves, (e0[j] - dt * div) - damping * smoothing, e0[j]);
            out_lap[j] = l0[j];
        }
    }
}
