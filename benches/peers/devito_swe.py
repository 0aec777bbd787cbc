#!/usr/bin/env python3
"""Devito peer of wafer_emu's shallow-water kernel (src/kernels/swe), run by hand.

The same equations and scheme as src/kernels/swe/scheme.rs: a Mercator grid periodic in
longitude with `ny` rows between the cut latitudes +-70 deg (first and last rows are walls),
u, v, h at centres; Lax-Wendroff in Richtmyer form. The predictor writes corner (x, y), the
one below-left of centre (x, y), from the centres (x-1..x, y-1..y) over half a time step; the
corrector writes centre (x, y) from the corners (x..x+1, y..y+1) over a whole step from the
centre's value at the step's start. Flat 4000 m ocean; bathymetry and shoreline masks are
Devito Functions all the same, so the work per point is the project's. float32 throughout.

Layout: Devito arrays are [row j (latitude), column i (longitude)], longitude innermost as in
the project. Columns 1..nx are the grid; columns 0 and nx+1 are copies of nx and 1, refreshed
inside the operator every step (periodicity in x). Rows read one past the walls land in
Devito's halo; that only touches wall values, which the masks discard.

    python devito_swe.py --nx 2048 --ny 2048 --steps 50 --repeats 3
    python devito_swe.py --check
"""
import argparse
import os
import statistics
import time
from types import SimpleNamespace

os.environ.setdefault("DEVITO_ARCH", "gcc")
os.environ.setdefault("DEVITO_LANGUAGE", "openmp")
os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("DEVITO_LOGGING", "WARNING")

import numpy as np  # noqa: E402
from devito import (Constant, Eq, Function, Grid, Operator, SpaceDimension,  # noqa: E402
                    SubDomain, TimeFunction)

# src/kernels/swe/mod.rs
GRAVITY, EARTH_RADIUS, OMEGA, BELOW_DEEPEST = 9.80616, 6.37122e6, 7.292e-5, 10.0
F32 = np.float32


def setup(nx, ny, depth=4000.0, lat_range=(-70.0, 70.0), cfl=0.5,
          hump=(0.0, 0.0, 10.0, 2000e3)):
    """Constants, row terms, parameters and the initial state as in `Swe::new` (flat
    bottom, raised-cosine hump). Planes are (ny, nx) float32, row terms (ny,)."""
    merc = lambda lat: np.log(np.tan(np.pi / 4 + np.radians(lat) / 2))  # noqa: E731
    y_south = merc(lat_range[0])
    dy, dlam = (merc(lat_range[1]) - y_south) / ny, 2 * np.pi / nx
    lat = lambda y: 2 * np.arctan(np.exp(y_south + (y + 0.5) * dy)) - np.pi / 2  # noqa: E731
    rows = np.arange(ny, dtype=np.float64)
    lat_c, lon_c = lat(rows), -np.pi + (np.arange(nx) + 0.5) * dlam
    sea = BELOW_DEEPEST + depth
    wet = np.zeros((ny, nx), bool)
    wet[1:-1] = True  # flat ocean: only the wall rows are land
    b = np.full((ny, nx), -depth + sea, F32)
    around = lambda a: [np.roll(a, s, (0, 1)) for s in [(1, 1), (1, 0), (0, 1), (0, 0)]]  # noqa
    sw, se, nw, ne = around(b)
    bc = F32(0.25) * ((sw + se) + (nw + ne))
    mask_c = np.logical_and.reduce(around(wet))
    rt = {}
    for kind, la in (("c", lat_c), ("k", lat(rows - 0.5))):  # centre rows, corner rows
        terms = (1 / (EARTH_RADIUS * np.cos(la)), np.tan(la) / EARTH_RADIUS,
                 2 * OMEGA * np.sin(la), np.cos(la), 1 / (EARTH_RADIUS * np.cos(la) ** 2))
        for name, term in zip("mtfck", terms):
            rt[name + kind] = term.astype(F32)
    # Hump of water: 0.5 height (1 + cos(pi r / radius)) for r < radius, wet centres only.
    la0, lo0, height, radius = np.radians(hump[0]), np.radians(hump[1]), hump[2], hump[3]
    LA, LO = np.meshgrid(lat_c, lon_c, indexing="ij")
    hv = np.sin((LA - la0) / 2) ** 2 + np.cos(la0) * np.cos(LA) * np.sin((LO - lo0) / 2) ** 2
    r = 2 * EARTH_RADIUS * np.arcsin(np.minimum(np.sqrt(hv), 1))
    eta = np.where((r < radius) & wet, 0.5 * height * (1 + np.cos(np.pi * r / radius)), 0)
    h = (sea + eta).astype(F32)
    u, v = np.zeros_like(h), np.zeros_like(h)
    # stable_dt: CFL times the shortest crossing time of a cell by the fastest wave.
    size = EARTH_RADIUS * np.cos(LA) * min(dlam, dy)
    speed = np.sqrt(GRAVITY * np.maximum(h - b, 0).astype(np.float64)) + np.hypot(u, v)
    dt = cfl * np.min(size[wet] / np.maximum(speed[wet], 1e-9))
    p = SimpleNamespace(g=F32(GRAVITY), inv_dlam=F32(1 / dlam), inv_dy=F32(1 / dy),
                        dt=F32(dt), half_dt=F32(0.5 * dt))
    planes = dict(b=b, mask=wet.astype(F32), bc=bc, mask_c=mask_c.astype(F32))
    return p, planes, rt, (u, v, h)


# The per-point maths of scheme.rs, shared by the Devito operator (SymPy expressions) and the
# NumPy reference (arrays). Windows are [sw, se, nw, ne].
def avg4(w):
    return 0.25 * ((w[0] + w[1]) + (w[2] + w[3]))


def half_step(p, u, v, h, b, cos_sn, base, row, step):
    """`quad_terms` + `momentum` + the continuity update: new (u, v, h), unmasked."""
    d_lam = lambda w: 0.5 * ((w[1] - w[0]) + (w[3] - w[2])) * p.inv_dlam  # noqa: E731
    d_y = lambda w: 0.5 * ((w[2] - w[0]) + (w[3] - w[1])) * p.inv_dy  # noqa: E731
    c = [cos_sn[0], cos_sn[0], cos_sn[1], cos_sn[1]]
    fu = [(h[n] - b[n]) * u[n] * c[n] for n in range(4)]
    fv = [(h[n] - b[n]) * v[n] * c[n] for n in range(4)]
    ub, vb, div = avg4(u), avg4(v), d_lam(fu) + d_y(fv)
    m, t, f, k = row
    rot = f + ub * t
    un = base[0] - step * ((m * (ub * d_lam(u) + vb * d_y(u)) - rot * vb) + p.g * m * d_lam(h))
    vn = base[1] - step * ((m * (ub * d_lam(v) + vb * d_y(v)) + rot * ub) + p.g * m * d_y(h))
    return un, vn, base[2] - step * (k * div)


def numpy_steps(p, planes, rt, state, steps):
    """Straightforward NumPy reference (periodic rolls; select as in scheme.rs)."""
    u, v, h = state
    quad = lambda a, s: [np.roll(a, (-s - dj, -s - di), (0, 1))  # noqa: E731
                         for dj, di in [(0, 0), (0, 1), (1, 0), (1, 1)]]
    col = lambda a, s=0: np.roll(a, -s)[:, None]  # noqa: E731
    wet_c, wet_k = planes["mask"] > 0.5, planes["mask_c"] > 0.5
    for _ in range(steps):
        # swe_predict: corner (x, y) from centres (x-1..x, y-1..y), half a step.
        qu, qv, qh = quad(u, -1), quad(v, -1), quad(h, -1)
        row = [col(rt[n + "k"]) for n in "mtfk"]
        uk, vk, hk = half_step(p, qu, qv, qh, quad(planes["b"], -1),
                               (col(rt["cc"], -1), col(rt["cc"])),
                               (avg4(qu), avg4(qv), avg4(qh)), row, p.half_dt)
        uk, vk = np.where(wet_k, uk, 0), np.where(wet_k, vk, 0)
        # swe_correct: centre (x, y) from corners (x..x+1, y..y+1), a whole step.
        row = [col(rt[n + "c"]) for n in "mtfk"]
        un, vn, hn = half_step(p, quad(uk, 0), quad(vk, 0), quad(hk, 0), quad(planes["bc"], 0),
                               (col(rt["ck"]), col(rt["ck"], 1)), (u, v, h), row, p.dt)
        u, v, h = np.where(wet_c, un, 0), np.where(wet_c, vn, 0), np.where(wet_c, hn, h)
    return u, v, h


class Columns(SubDomain):
    """Columns 1..nx: the grid without its two periodic copy columns."""
    name = "columns"

    def define(self, dimensions):
        j, i = dimensions
        return {j: j, i: ("middle", 1, 1)}


def build(nx, ny, p, planes, rt):
    j, i = SpaceDimension(name="j"), SpaceDimension(name="i")
    grid = Grid(shape=(ny, nx + 2), extent=(1.0, 1.0), dimensions=(j, i), dtype=F32,
                subdomains=(Columns(),))
    t = grid.stepping_dim
    cols = grid.subdomains["columns"]
    pad = lambda a: np.concatenate([a[:, -1:], a, a[:, :1]], axis=1)  # noqa: E731
    fn = {}
    for name, a in planes.items():
        fn[name] = Function(name=name, grid=grid, space_order=1, dtype=F32)
        fn[name].data[:] = pad(a)
    for name, a in rt.items():
        fn[name] = Function(name=name, dimensions=(j,), shape=(ny,), space_order=1, dtype=F32)
        fn[name].data[:] = a
    U, V, H = (TimeFunction(name=n, grid=grid, time_order=1, space_order=1, dtype=F32)
               for n in "uvh")
    # Corners carry a time index too, so that Devito keeps both half steps in one time loop.
    UK, VK, HK = (TimeFunction(name=n + "k", grid=grid, time_order=1, space_order=1, dtype=F32)
                  for n in "uvh")
    pc = SimpleNamespace(**{k: Constant(name="p_" + k, value=v, dtype=F32)
                            for k, v in vars(p).items()})

    def quad(F, s, *tt):
        return [F[tt + (j + s + dj, i + s + di)] for dj, di in [(0, 0), (0, 1), (1, 0), (1, 1)]]

    # Predictor: corner (j, i) from centres (j-1..j, i-1..i) at time t.
    qu, qv, qh = quad(U, -1, t), quad(V, -1, t), quad(H, -1, t)
    row = [fn[n + "k"][j] for n in "mtfk"]
    uk, vk, hk = half_step(pc, qu, qv, qh, quad(fn["b"], -1), (fn["cc"][j - 1], fn["cc"][j]),
                           (avg4(qu), avg4(qv), avg4(qh)), row, pc.half_dt)
    mk = fn["mask_c"][j, i]
    predict = [Eq(UK[t + 1, j, i], uk * mk, subdomain=cols),
               Eq(VK[t + 1, j, i], vk * mk, subdomain=cols),
               Eq(HK[t + 1, j, i], hk, subdomain=cols)]
    # Corrector: centre (j, i) at t+1 from corners (j..j+1, i..i+1) and the centre at t. Dry
    # centres keep h: k times the mask (the select of scheme.rs as a product, exact for 0/1).
    mc = fn["mask"][j, i]
    row = [fn[n + "c"][j] for n in "mtf"] + [fn["kc"][j] * mc]
    qu, qv, qh = quad(UK, 0, t + 1), quad(VK, 0, t + 1), quad(HK, 0, t + 1)
    un, vn, hn = half_step(pc, qu, qv, qh, quad(fn["bc"], 0), (fn["ck"][j], fn["ck"][j + 1]),
                           (U[t, j, i], V[t, j, i], H[t, j, i]), row, pc.dt)
    correct = [Eq(U[t + 1, j, i], un * mc, subdomain=cols),
               Eq(V[t + 1, j, i], vn * mc, subdomain=cols),
               Eq(H[t + 1, j, i], hn, subdomain=cols)]
    # Periodic copy columns: corners need column nx+1 = 1, centres column 0 = nx.
    wrap_k = [Eq(F[t + 1, j, nx + 1], F[t + 1, j, 1]) for F in (UK, VK, HK)]
    wrap_c = [Eq(F[t + 1, j, 0], F[t + 1, j, nx]) for F in (U, V, H)]
    op = Operator(predict + wrap_k + correct + wrap_c, opt="advanced")
    return op, (U, V, H), pad


def set_state(fields, state, pad):
    for F, a in zip(fields, state):
        F.data[0] = pad(a)


def flops_per_point(op):
    """Devito's own operation count per point of each loop nest (private API)."""
    try:
        return {k: int(s.sops) for k, s in op._profiler._sections.items() if int(s.sops)}
    except Exception:  # noqa: BLE001
        return None


def check(nx=64, ny=32, steps=20):
    """Devito against the NumPy reference in float32; the yardstick is float32's own rounding,
    the NumPy reference in float32 against the same in float64 (h ~ 4010 m has an ulp of
    2.4e-4 m, so differences of 1e-4 of the field ranges are rounding)."""
    p, planes, rt, state = setup(nx, ny)
    op, fields, pad = build(nx, ny, p, planes, rt)
    set_state(fields, state, pad)
    op.apply(time_m=0, time_M=steps - 1)
    ref = numpy_steps(p, planes, rt, state, steps)
    f64 = lambda d: {k: a.astype(np.float64) for k, a in d.items()}  # noqa: E731
    p64 = SimpleNamespace(**{k: np.float64(a) for k, a in vars(p).items()})
    ref64 = numpy_steps(p64, f64(planes), f64(rt), [a.astype(np.float64) for a in state], steps)
    print(f"check {nx}x{ny}, {steps} steps (hump 10 m over a flat 4000 m ocean), "
          "max abs differences relative to the field's range:")
    ok = True
    for name, F, r, r64 in zip("uvh", fields, ref, ref64):
        d = np.asarray(F.data[steps % 2])[:, 1:-1]
        span = float(r.max() - r.min())
        rel, rel32 = float(np.abs(d - r).max()) / span, float(np.abs(r64 - r).max()) / span
        ok &= bool(np.isfinite(d).all()) and rel <= 4 * rel32 + 1e-6
        print(f"  {name}: range {span:.4g}, |devito - numpy| {rel:.2e}"
              f" (float32 rounding: |numpy f32 - numpy f64| {rel32:.2e})")
    print(f"check {'passed' if ok else 'FAILED'} (devito within 4x float32 rounding)")
    return ok


def bench(nx, ny, steps, repeats):
    p, planes, rt, state = setup(nx, ny)
    op, fields, pad = build(nx, ny, p, planes, rt)
    set_state(fields, state, pad)
    op.apply(time_m=0, time_M=0)  # JIT compile and warm up
    rates = []
    for r in range(repeats):
        set_state(fields, state, pad)
        t0, c0 = time.perf_counter(), time.process_time()
        op.apply(time_m=0, time_M=steps - 1)
        sec, cpu = time.perf_counter() - t0, time.process_time() - c0
        rates.append(nx * ny * steps / sec / 1e9)
        # Busy cores below the thread count mean that something else shared the machine.
        print(f"repeat {r}: {steps} steps in {sec:.3f} s, {rates[-1]:.4f} G point-updates/s,"
              f" {cpu / sec:.2f} cores busy")
    h = np.asarray(fields[2].data[steps % 2])
    if not np.isfinite(h).all():
        print("warning: the state is not finite")
    fl = flops_per_point(op)
    if fl:
        per = sum(fl.values())
        parts = ", ".join(f"{k} {v}" for k, v in fl.items())
        print(f"devito flops per point-update: {per} ({parts});"
              f" {per * statistics.median(rates):.2f} GFLOP/s at the median")
    print(f"devito swe {nx}x{ny}: median {statistics.median(rates):.3f} G point-updates/s "
          f"(min {min(rates):.3f}, max {max(rates):.3f}; {os.environ['OMP_NUM_THREADS']} threads)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nx", type=int, default=2048)
    ap.add_argument("--ny", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", action="store_true", help="compare with NumPy on 64x32")
    a = ap.parse_args()
    if a.check:
        raise SystemExit(0 if check() else 1)
    bench(a.nx, a.ny, a.steps, a.repeats)


if __name__ == "__main__":
    main()
