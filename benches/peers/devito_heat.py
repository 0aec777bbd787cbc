#!/usr/bin/env python3
"""Devito peer of wafer_emu's heat kernels (src/kernels/heat), run by hand.

The same update as `heat5_point` / `heat9_point`: forward Euler of
`u' = A u_xx + C u_yy + D u_x + E u_y` on a periodic grid with unit spacing, as stencil
weights `w[dy+1][dx+1]` over the 3 x 3 neighbourhood (`HeatCoefficients::weights` in
mod.rs: central differences, plus the diagonal corrections of the 9-point stencil), float32.
heat5 reads the centre and its four neighbours (9 FLOPs per point), heat9 all nine (17).
Periodicity: a one-point frame of copies refreshed inside the operator every step.

    python devito_heat.py --kernel heat5 --n 4096 --steps 50 --repeats 3
    python devito_heat.py --check
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("DEVITO_ARCH", "gcc")
os.environ.setdefault("DEVITO_LANGUAGE", "openmp")
os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("DEVITO_LOGGING", "WARNING")

import numpy as np  # noqa: E402
from devito import Eq, Grid, Operator, TimeFunction  # noqa: E402

F32 = np.float32


def weights(kernel, a=1.0, c=1.0, d=0.0, e=0.0, dt=0.2):
    """`HeatCoefficients::weights` (heat5) and `nine_point` (heat9) for the project's
    defaults (pure diffusion, dt = 0.2): rows[dy + 1][dx + 1]."""
    w = np.zeros((3, 3))
    if kernel == "heat5":
        second, first = [0, 1, 0], [0, 1, 0]
    else:
        # Each one-dimensional difference averaged over the three rows (columns).
        second, first = [1 / 12, 10 / 12, 1 / 12], [1 / 6, 4 / 6, 1 / 6]
    for k in range(3):
        sx, fx = a * second[k] * dt, d * first[k] * dt / 2
        w[k] += [sx - fx, -2 * sx, sx + fx]
        sy, fy = c * second[k] * dt, e * first[k] * dt / 2
        w[:, k] += [sy - fy, -2 * sy, sy + fy]
    w[1, 1] += 1.0
    return w.astype(F32)


def build(kernel, n, w):
    """The operator on an n x n grid plus a one-point frame of periodic copies."""
    grid = Grid(shape=(n + 2, n + 2), dtype=F32)
    x, y = grid.dimensions
    t = grid.stepping_dim
    u = TimeFunction(name="u", grid=grid, space_order=1, dtype=F32)
    taps = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
            if w[dy + 1, dx + 1] != 0 and (kernel == "heat9" or dy == 0 or dx == 0)]
    update = sum(F32(w[dy + 1, dx + 1]) * u[t, x + dy, y + dx] for dy, dx in taps)
    eqs = [Eq(u.forward, update, subdomain=grid.interior)]
    # Periodic frame of the next state: rows, then columns (corners included).
    eqs += [Eq(u[t + 1, 0, y], u[t + 1, n, y]), Eq(u[t + 1, n + 1, y], u[t + 1, 1, y]),
            Eq(u[t + 1, x, 0], u[t + 1, x, n]), Eq(u[t + 1, x, n + 1], u[t + 1, x, 1])]
    return Operator(eqs), u, len(taps)


def set_state(u, state):
    n = state.shape[0]
    u.data[0, 1:n + 1, 1:n + 1] = state
    u.data[0, 0, 1:n + 1], u.data[0, n + 1, 1:n + 1] = state[-1], state[0]
    u.data[0, :, 0], u.data[0, :, n + 1] = u.data[0, :, n], u.data[0, :, 1]


def numpy_steps(w, state, steps, kernel):
    u = state.copy()
    for _ in range(steps):
        new = np.zeros_like(u)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if kernel == "heat5" and dy and dx:
                    continue
                new += w[dy + 1, dx + 1] * np.roll(u, (-dy, -dx), (0, 1))
        u = new
    return u


def check(n=64, steps=20):
    ok = True
    rng = np.random.default_rng(1)
    state = rng.random((n, n), dtype=np.float64).astype(F32)
    for kernel in ("heat5", "heat9"):
        w = weights(kernel)
        op, u, _ = build(kernel, n, w)
        set_state(u, state)
        op.apply(time_m=0, time_M=steps - 1)
        got = np.asarray(u.data[steps % 2, 1:n + 1, 1:n + 1])
        ref = numpy_steps(w, state, steps, kernel)
        ref64 = numpy_steps(w.astype(np.float64), state.astype(np.float64), steps, kernel)
        diff, rounding = float(np.abs(got - ref).max()), float(np.abs(ref64 - ref).max())
        passed = diff <= 4 * rounding + 1e-6
        ok &= passed
        print(f"check {kernel} {n}x{n}, {steps} steps: |devito - numpy| {diff:.2e} "
              f"(float32 rounding {rounding:.2e}): {'passed' if passed else 'FAILED'}")
    return ok


def bench(kernel, n, steps, repeats):
    w = weights(kernel)
    op, u, taps = build(kernel, n, w)
    state = np.random.default_rng(1).random((n, n), dtype=np.float64).astype(F32)
    set_state(u, state)
    op.apply(time_m=0, time_M=0)  # JIT compile and warm up
    rates = []
    for r in range(repeats):
        set_state(u, state)
        t0, c0 = time.perf_counter(), time.process_time()
        op.apply(time_m=0, time_M=steps - 1)
        sec, cpu = time.perf_counter() - t0, time.process_time() - c0
        rates.append(n * n * steps / sec / 1e9)
        print(f"repeat {r}: {steps} steps in {sec:.3f} s, {rates[-1]:.4f} G point-updates/s,"
              f" {cpu / sec:.2f} cores busy")
    print(f"devito {kernel} {n}x{n} ({taps} taps): median {statistics.median(rates):.3f} "
          f"G point-updates/s (min {min(rates):.3f}, max {max(rates):.3f}; "
          f"{os.environ['OMP_NUM_THREADS']} threads)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", choices=["heat5", "heat9"], default="heat5")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", action="store_true", help="compare with NumPy on 64x64")
    a = ap.parse_args()
    if a.check:
        raise SystemExit(0 if check() else 1)
    bench(a.kernel, a.n, a.steps, a.repeats)


if __name__ == "__main__":
    main()
