#!/usr/bin/env python3
"""Convert the project's 0.1-degree ETOPO1 relief to a GeoClaw topotype-3 file.

Input : ../../../assets/relief/etopo1_icefix_6min_grid_3600x1801.i16.zlib
        (zlib of the little-endian int16 grid's byte planes, low bytes then high bytes;
        metres positive up, 3600 x 1801, row 0 = 90 N, column i at longitude -180 + 0.1 i,
        grid-registered).
Output: pacific_6min.tt3 covering lon -260..-70 (= 100E..290E), lat -65..65,
        nodes every 0.1 degree (1901 x 1301 values), header with x/yllcenter so
        GeoClaw takes the first node as a grid point (no half-cell shift).

Options: --flat DEPTH writes flat_DEPTH.tt3 on the same grid (uniform -DEPTH m), for a
flat-ocean check.  --west/--east/--south/--north change the box (degrees; west/east may be
< -180 or > 180, the global grid is wrapped).
"""
import argparse
import os
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, '..', '..', '..', 'assets', 'relief',
                   'etopo1_icefix_6min_grid_3600x1801.i16.zlib')
NX, NY, D = 3600, 1801, 0.1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--west', type=float, default=-260.0)
    ap.add_argument('--east', type=float, default=-70.0)
    ap.add_argument('--south', type=float, default=-65.0)
    ap.add_argument('--north', type=float, default=65.0)
    ap.add_argument('--flat', type=float, default=None, help='flat ocean depth in m')
    ap.add_argument('--out', default=None)
    a = ap.parse_args()

    with open(SRC, 'rb') as f:
        planes = np.frombuffer(zlib.decompress(f.read()), dtype=np.uint8)
    low, high = planes[: planes.size // 2], planes[planes.size // 2:]
    z = np.stack([low, high], axis=1).reshape(-1).view('<i2')
    assert z.size == NX * NY, z.size
    z = z.reshape(NY, NX)

    i0 = int(round((a.west + 180.0) / D))
    i1 = int(round((a.east + 180.0) / D))
    j0 = int(round((90.0 - a.north) / D))   # northernmost row
    j1 = int(round((90.0 - a.south) / D))   # southernmost row
    cols = np.arange(i0, i1 + 1) % NX      # wrap in longitude
    sub = z[j0:j1 + 1][:, cols].astype(np.int32)   # north to south, as topotype 3 wants
    ny, nx = sub.shape
    if a.flat is not None:
        sub = np.full_like(sub, -int(round(a.flat)))
    out = a.out or os.path.join(
        HERE, 'pacific_6min.tt3' if a.flat is None else 'flat_%d.tt3' % round(a.flat))

    xll = -180.0 + D * i0
    yll = 90.0 - D * j1
    with open(out, 'w') as f:
        f.write('%d ncols\n%d nrows\n%.6f xllcenter\n%.6f yllcenter\n%.6f cellsize\n%d nodata_value\n'
                % (nx, ny, xll, yll, D, -99999))
        np.savetxt(f, sub, fmt='%d')
    print('wrote %s: %d x %d nodes, lon %.1f..%.1f, lat %.1f..%.1f, z %d..%d m'
          % (out, nx, ny, xll, xll + D * (nx - 1), yll, yll + D * (ny - 1), sub.min(), sub.max()))


if __name__ == '__main__':
    main()
