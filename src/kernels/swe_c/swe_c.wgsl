// Shallow water forward-backward on a C-grid with fourth-order gravity-wave terms (swe-c).
// Twin: scheme.rs (`momentum`, `continuity`). Fields 0, 1, 2, 3 are u (east faces), v (north
// faces), eta (centres, above the sea at rest) and the Laplacian of eta for the filter. Windows are 4 x 4: window point (dx, dy)
// lies ORIGIN + (dx, dy) from the written point.

const FIELDS: u32 = 4u;

struct Params {
    nx: u32,
    ny: u32,
    dt: f32,
    g: f32,
    inv_dlam: f32,
    inv_dy: f32,
    dry: f32,
    damping: f32,
}

// The constant fields (mod.rs `Constants`): CONSTS planes of the grid (0 depth at rest, 1 east
// face depth, 2 north face depth, 3 east fourth-order flag, 4 north flag, 5 fixed), then
// ROW_CONSTS terms of every row (mod.rs `RowTerm`).
const CONSTS: u32 = 6u;
const ROW_CONSTS: u32 = 11u;
const DEPTH: u32 = 0u;
const EAST_DEPTH: u32 = 1u;
const NORTH_DEPTH: u32 = 2u;
const EAST_ORDER4: u32 = 3u;
const NORTH_ORDER4: u32 = 4u;
const FIXED: u32 = 5u;
const COS_C: u32 = 0u;
const COS_V: u32 = 1u;
const CORIOLIS_C: u32 = 2u;
const CORIOLIS_V: u32 = 3u;
const TAN_C: u32 = 4u;
const TAN_V: u32 = 5u;
const ALONG_C: u32 = 6u;
const ACROSS_C: u32 = 7u;
const ALONG_V: u32 = 8u;
const ACROSS_V: u32 = 9u;
const CONTINUITY: u32 = 10u;

fn load_const(c: u32, p: vec2<u32>) -> f32 {
    return consts_at(c * params.nx * params.ny + p.y * params.nx + p.x);
}

fn load_row_const(t: u32, y: u32) -> f32 {
    return consts_at(CONSTS * params.nx * params.ny + t * params.ny + y);
}

// The global point `k` on from `i` on a torus of `size` (`k` in -2..=2).
fn shifted(i: u32, k: i32, size: u32) -> u32 {
    return u32((i32(i) + k + i32(size)) % i32(size));
}

// Plane `c` at window point `d` of the window whose lower-left global point is `corner`.
fn plane_at(c: u32, corner: vec2<u32>, d: vec2<u32>) -> f32 {
    let p = vec2(shifted(corner.x, i32(d.x), params.nx), shifted(corner.y, i32(d.y), params.ny));
    return window_const(c, p, d);
}

fn weights(order4: f32) -> vec2<f32> {
    return vec2(1.0 + 0.125 * order4, order4 * (1.0 / 24.0));
}

// The difference b - a across the face between a and b, fourth-order with z and c where the
// face's flag says so (q = z, a, b, c).
fn face_difference(order4: f32, q: vec4<f32>) -> f32 {
    let w = weights(order4);
    return w.x * (q.z - q.y) - w.y * (q.w - q.x);
}

// The flux difference across a cell from the fluxes of its faces two, one and none before it
// and one after it, each with its own fourth-order flag.
fn cell_difference(order4: vec4<f32>, f: vec4<f32>) -> f32 {
    let w0 = weights(order4.x);
    let w1 = weights(order4.y);
    let w2 = weights(order4.z);
    let w3 = weights(order4.w);
    return (w2.x * f.z - w1.x * f.y) + (w0.y * f.x - w3.y * f.w);
}

// The weights of a cell's east and west, north and south faces in `laplacian`: the faces'
// cos^2(lat) over the cell's (window row `dy` is the cell's row `y`).
fn faces_weights(y: u32, dy: u32) -> vec3<f32> {
    let cos_c = row_const(COS_C, y, dy);
    let north = row_const(COS_V, y, dy);
    let south = row_const(COS_V, shifted(y, -1, params.ny), dy - 1u);
    let cell = cos_c * cos_c;
    return vec3(1.0, (north * north) / cell, (south * south) / cell);
}

// The Laplacian at a cell from its value `here` and those `around` it (east, west, north,
// south) through the open faces, each difference weighted by its face's share of the cell.
fn laplacian(weights: vec3<f32>, open: vec4<bool>, here: f32, around: vec4<f32>) -> f32 {
    let d = select(vec4(0.0), around - vec4(here), open);
    return (d.x + d.y) * weights.x + (d.z * weights.y + d.w * weights.z);
}

// The difference of `here` from the side the flow `speed` comes from (q = behind, here, ahead).
fn upwind(speed: f32, q: vec3<f32>) -> f32 {
    return select(q.z - q.y, q.y - q.x, speed > 0.0);
}

// The part of a face's flux the surface carries: the depth at rest plus the upwind surface, at
// least nothing, times `speed`, less the linear flux.
fn surface_flux(depth: f32, speed: f32, before: f32, after: f32) -> f32 {
    let surface = select(after, before, speed > 0.0);
    return (max(depth + surface, 0.0) - depth) * speed;
}

// The window of the face stages, from (x - 1, y - 1).
fn face_corner(at: vec2<u32>) -> vec2<u32> {
    return vec2(shifted(at.x, -1, params.nx), shifted(at.y, -1, params.ny));
}

// u of the east face of `at` a step on from the surface's slope and the Coriolis force of the
// old v, and the surface's Laplacian for the filter; v and eta as they were.
fn swe_c_east(at: vec2<u32>) -> array<f32, FIELDS> {
    let corner = face_corner(at);
    let fc = row_const(CORIOLIS_C, at.y, 1u);
    let tc = row_const(TAN_C, at.y, 1u);
    let along_c = row_const(ALONG_C, at.y, 1u);
    let across_c = row_const(ACROSS_C, at.y, 1u);
    let u0 = cur(0u, 1u, 1u);
    let e0 = cur(2u, 1u, 1u);
    let grad_x = face_difference(plane_at(EAST_ORDER4, corner, vec2(1u, 1u)),
        vec4(cur(2u, 0u, 1u), e0, cur(2u, 2u, 1u), cur(2u, 3u, 1u)));
    let vbar = 0.25 * ((cur(1u, 1u, 1u) + cur(1u, 2u, 1u)) + (cur(1u, 1u, 0u) + cur(1u, 2u, 0u)));
    let advect = u0 * along_c * upwind(u0, vec3(cur(0u, 0u, 1u), u0, cur(0u, 2u, 1u)))
        + vbar * across_c * upwind(vbar, vec3(cur(0u, 1u, 0u), u0, cur(0u, 1u, 2u)));
    let un = u0 + params.dt * ((-params.g * along_c * grad_x + (fc + u0 * tc) * vbar) - advect);
    let drained = select(plane_at(DEPTH, corner, vec2(2u, 1u)) + cur(2u, 2u, 1u),
        plane_at(DEPTH, corner, vec2(1u, 1u)) + e0, un > 0.0);
    let open = plane_at(EAST_DEPTH, corner, vec2(1u, 1u)) > 0.0 && drained > params.dry;
    let kept = plane_at(FIXED, corner, vec2(1u, 1u)) > 0.5;
    let faces = vec4(plane_at(EAST_DEPTH, corner, vec2(1u, 1u)) > 0.0, plane_at(EAST_DEPTH, corner, vec2(0u, 1u)) > 0.0,
        plane_at(NORTH_DEPTH, corner, vec2(1u, 1u)) > 0.0, plane_at(NORTH_DEPTH, corner, vec2(1u, 0u)) > 0.0);
    let around = vec4(cur(2u, 2u, 1u), cur(2u, 0u, 1u), cur(2u, 1u, 2u), cur(2u, 1u, 0u));
    let lap = laplacian(faces_weights(at.y, 1u), faces, e0, around);
    return array<f32, FIELDS>(select(select(0.0, un, open), u0, kept), cur(1u, 1u, 1u), e0,
        select(lap, 0.0, kept));
}

// v of the north face of `at` a step on from the surface's slope and the Coriolis force of the
// new u (u before v: the rotation is symplectic); the rest as it was.
fn swe_c_north(at: vec2<u32>) -> array<f32, FIELDS> {
    let corner = face_corner(at);
    let fv = row_const(CORIOLIS_V, at.y, 1u);
    let tv = row_const(TAN_V, at.y, 1u);
    let along_v = row_const(ALONG_V, at.y, 1u);
    let across_v = row_const(ACROSS_V, at.y, 1u);
    let v0 = cur(1u, 1u, 1u);
    let e0 = cur(2u, 1u, 1u);
    let grad_y = face_difference(plane_at(NORTH_ORDER4, corner, vec2(1u, 1u)),
        vec4(cur(2u, 1u, 0u), e0, cur(2u, 1u, 2u), cur(2u, 1u, 3u)));
    let ubar = 0.25 * ((cur(0u, 1u, 1u) + cur(0u, 0u, 1u)) + (cur(0u, 1u, 2u) + cur(0u, 0u, 2u)));
    let advect = ubar * along_v * upwind(ubar, vec3(cur(1u, 0u, 1u), v0, cur(1u, 2u, 1u)))
        + v0 * across_v * upwind(v0, vec3(cur(1u, 1u, 0u), v0, cur(1u, 1u, 2u)));
    let vn = v0 + params.dt * ((-params.g * across_v * grad_y - (fv + ubar * tv) * ubar) - advect);
    let drained = select(plane_at(DEPTH, corner, vec2(1u, 2u)) + cur(2u, 1u, 2u),
        plane_at(DEPTH, corner, vec2(1u, 1u)) + e0, vn > 0.0);
    let open = plane_at(NORTH_DEPTH, corner, vec2(1u, 1u)) > 0.0 && drained > params.dry;
    let kept = plane_at(FIXED, corner, vec2(1u, 1u)) > 0.5;
    return array<f32, FIELDS>(cur(0u, 1u, 1u), select(select(0.0, vn, open), v0, kept), e0,
        cur(3u, 1u, 1u));
}

// eta of the cell `at` a step on from the fluxes through its faces, less the filter; the rest
// as it was (window from (x - 2, y - 2)).
fn swe_c_continuity(at: vec2<u32>) -> array<f32, FIELDS> {
    let corner = vec2(shifted(at.x, -2, params.nx), shifted(at.y, -2, params.ny));
    let cos_c = row_const(COS_C, at.y, 2u);
    let scale = row_const(CONTINUITY, at.y, 2u);
    let cos_v = vec4(row_const(COS_V, corner.y, 0u), row_const(COS_V, shifted(at.y, -1, params.ny), 1u),
        row_const(COS_V, at.y, 2u), row_const(COS_V, shifted(at.y, 1, params.ny), 3u));
    let east = vec4(plane_at(EAST_DEPTH, corner, vec2(0u, 2u)), plane_at(EAST_DEPTH, corner, vec2(1u, 2u)),
        plane_at(EAST_DEPTH, corner, vec2(2u, 2u)), plane_at(EAST_DEPTH, corner, vec2(3u, 2u)));
    let north = vec4(plane_at(NORTH_DEPTH, corner, vec2(2u, 0u)), plane_at(NORTH_DEPTH, corner, vec2(2u, 1u)),
        plane_at(NORTH_DEPTH, corner, vec2(2u, 2u)), plane_at(NORTH_DEPTH, corner, vec2(2u, 3u)));
    let order_e = vec4(plane_at(EAST_ORDER4, corner, vec2(0u, 2u)), plane_at(EAST_ORDER4, corner, vec2(1u, 2u)),
        plane_at(EAST_ORDER4, corner, vec2(2u, 2u)), plane_at(EAST_ORDER4, corner, vec2(3u, 2u)));
    let order_n = vec4(plane_at(NORTH_ORDER4, corner, vec2(2u, 0u)), plane_at(NORTH_ORDER4, corner, vec2(2u, 1u)),
        plane_at(NORTH_ORDER4, corner, vec2(2u, 2u)), plane_at(NORTH_ORDER4, corner, vec2(2u, 3u)));
    let u = vec4(cur(0u, 0u, 2u), cur(0u, 1u, 2u), cur(0u, 2u, 2u), cur(0u, 3u, 2u));
    let v = vec4(cur(1u, 2u, 0u), cur(1u, 2u, 1u), cur(1u, 2u, 2u), cur(1u, 2u, 3u));
    let linear_x = cell_difference(order_e, east * u);
    let linear_y = cell_difference(order_n, cos_v * (north * v));
    let e0 = cur(2u, 2u, 2u);
    let surface_x = surface_flux(east.z, u.z, e0, cur(2u, 3u, 2u))
        - surface_flux(east.y, u.y, cur(2u, 1u, 2u), e0);
    let surface_y = cos_v.z * surface_flux(north.z, v.z, e0, cur(2u, 2u, 3u))
        - cos_v.y * surface_flux(north.y, v.y, cur(2u, 2u, 1u), e0);
    let div = scale * (cos_c * ((linear_x + surface_x) * params.inv_dlam) + (linear_y + surface_y) * params.inv_dy);
    let open = vec4(east.z > 0.0, east.y > 0.0, north.z > 0.0, north.y > 0.0);
    let around = vec4(cur(3u, 3u, 2u), cur(3u, 1u, 2u), cur(3u, 2u, 3u), cur(3u, 2u, 1u));
    let smoothing = laplacian(faces_weights(at.y, 2u), open, cur(3u, 2u, 2u), around);
    let moves = plane_at(DEPTH, corner, vec2(2u, 2u)) > 0.0 && plane_at(FIXED, corner, vec2(2u, 2u)) < 0.5;
    return array<f32, FIELDS>(u.z, v.z, select(e0, (e0 - params.dt * div) - params.damping * smoothing, moves),
        cur(3u, 2u, 2u));
}
