#!/usr/bin/env python3
"""Why a finite-difference tsunami arrives early at a small threshold, in one dimension.

    python3 front_lead.py [--distance 10] [--threshold 5e-4]

The linear wave equation (c = 1) on a staggered grid, forward-backward in time as `swe-c`
steps it, from a raised cosine of radius R = 1 (cell averages). At a point `distance` radii
away it records the first time |eta| exceeds `threshold` times the exact pulse's height
and prints how far that lies ahead of the exact crossing (d'Alembert), in per cent of the
travel time and in cells, for spatial orders 2, 4, 6, several cells per radius and Courant
numbers. 5e-4 is 1 cm of the 20 m a 200 m hump keeps 1000 km away.

What it shows: the lead is a number of cells (about 5 for second order, 3.5 for fourth,
2.4 for sixth at low Courant numbers) that hardly changes with the cell size, so the error
in per cent falls only as fast as the cell (first order), however high the order of the
scheme. It is the scheme's precursor, the tail of its smoothed front at a threshold
thousands of times below the wave, not a wrong wave speed. At a Courant number of 0.5 the
time stepping adds its own lead (forward-backward runs short waves fast), the more so the
higher the spatial order; the emulator's grids run at about 0.17 where the wave travels.
"""
import argparse

import numpy as np

WEIGHTS = {2: [1.0], 4: [9 / 8, -1 / 24], 6: [75 / 64, -25 / 384, 3 / 640]}


def lead(cells_per_radius, order, courant, distance, threshold):
    dx = 1.0 / cells_per_radius
    half = distance + 3.0
    n = int(2 * half / dx)
    x = (np.arange(n) + 0.5) * dx - half
    sub = (np.arange(16) + 0.5) / 16 * dx - dx / 2
    r = np.abs(x[:, None] + sub[None, :])
    eta = np.where(r < 1.0, 0.5 * (1 + np.cos(np.pi * r)), 0.0).mean(axis=1)
    u = np.zeros(n)  # u[i] on the face between cells i and i + 1
    w = WEIGHTS[order]
    dt = courant * dx

    def at_faces(e):
        return sum(wk * (np.roll(e, -(k + 1)) - np.roll(e, k)) for k, wk in enumerate(w)) / dx

    def at_cells(q):
        return sum(wk * (np.roll(q, -k) - np.roll(q, k + 1)) for k, wk in enumerate(w)) / dx

    j = int(np.argmin(np.abs(x - distance)))
    level = threshold * 0.5  # each half of the pulse carries half its height
    exact = (x[j] - 1.0) + 2 / np.pi * np.arccos(1 - 4 * level)
    t = 0.0
    while t < 2 * exact:
        u -= dt * at_faces(eta)
        eta -= dt * at_cells(u)
        t += dt
        if abs(eta[j]) > level:
            return 100 * (t - exact) / exact, (t - exact) / dx
    return float('nan'), float('nan')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--distance', type=float, default=10.0)
    ap.add_argument('--threshold', type=float, default=5e-4)
    a = ap.parse_args()
    print('order  cells/R  Courant   lead %   lead cells')
    for order in (2, 4, 6):
        for cells in (5.4, 8.6, 11.0, 16.0):
            for courant in (0.17, 0.5):
                pct, cells_ahead = lead(cells, order, courant, a.distance, a.threshold)
                print(f'{order:5d}  {cells:7.1f}  {courant:7.2f}  {pct:7.2f}  {cells_ahead:10.2f}')


if __name__ == '__main__':
    main()
