#!/usr/bin/env python3
"""Travel-time map for refinement (read by flag2refine2.f90) from a run's fgmax output.

    python3 make_ttmap.py OUTDIR      -> OUTDIR/ttmap.txt

fgmax grid 1 (written by setrun.py, point_style 2) records at each point the first time
eta > arrival_tol (1 mm).  ttmap.txt:  'nx ny', 'xlow ylow dx dy' (first node), then ny
rows (south to north) of nx times in seconds, -1 where the wave never arrived (or land).
"""
import os
import sys

import numpy as np

out = sys.argv[1]
d = np.loadtxt(os.path.join(out, 'fgmax0001.txt'))
x, y, h, tarr = d[:, 0], d[:, 1], d[:, 4], d[:, -1]
xs, ys = np.unique(np.round(x, 6)), np.unique(np.round(y, 6))
dx, dy = np.median(np.diff(xs)), np.median(np.diff(ys))
i = np.rint((x - xs[0]) / dx).astype(int)
j = np.rint((y - ys[0]) / dy).astype(int)
nx, ny = i.max() + 1, j.max() + 1
T = np.full((ny, nx), -1.0)
ok = (tarr > -1e50) & (h > -1e50)
T[j[ok], i[ok]] = tarr[ok]
with open(os.path.join(out, 'ttmap.txt'), 'w') as f:
    f.write('%d %d\n%.8f %.8f %.8f %.8f\n' % (nx, ny, xs[0], ys[0], dx, dy))
    np.savetxt(f, T, fmt='%.1f')
reached = T >= 0
print('ttmap: %d x %d, dx %.4f, %d points reached, max arrival %.0f s'
      % (nx, ny, dx, reached.sum(), T[reached].max() if reached.any() else -1))
