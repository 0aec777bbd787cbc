#!/usr/bin/env python3
"""Arrival time and maximum |eta| at each gauge of a GeoClaw run of this setup.

    python3 arrivals.py [OUTDIR] [--threshold 0.01] [--tmax SECONDS]

Prints CSV  gauge,lat,lon,arrival_s,max_eta_m  (one row per gauge; lon as in the
emulator, i.e. in -180..180), where arrival_s is the time of the first gauge record with
|eta| > threshold (eta = h + B - sea_level, sea level 0) and max_eta_m the largest |eta|
recorded up to tmax (default: the whole run).  GeoClaw records gauges at every time step
of the finest level covering them, so arrival_s is quantised to that step.  Details
(interpolated crossing time, step size, AMR level at arrival, time of the maximum,
signed extremes) go to OUTDIR/arrivals_detail.csv and stderr.
"""
import argparse
import os
import sys

import numpy as np
from clawpack.pyclaw.gauges import GaugeSolution

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from setrun import GAUGES  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('outdir', nargs='?', default='_output_coarse')
    ap.add_argument('--threshold', type=float, default=0.01)
    ap.add_argument('--tmax', type=float, default=None)
    a = ap.parse_args()

    rows, details = [], []
    for num, name, lat, lon in GAUGES:
        g = GaugeSolution(num, a.outdir)
        t = np.asarray(g.t)
        eta = np.asarray(g.q[3])
        lev = np.asarray(g.level)
        if a.tmax is not None:
            keep = t <= a.tmax
            t, eta, lev = t[keep], eta[keep], lev[keep]
        lon180 = (lon + 180.0) % 360.0 - 180.0
        over = np.nonzero(np.abs(eta) > a.threshold)[0]
        if over.size:
            k = over[0]
            arrival = t[k]
            if k > 0:
                e0, e1 = abs(eta[k - 1]), abs(eta[k])
                t_interp = t[k - 1] + (a.threshold - e0) / (e1 - e0) * (t[k] - t[k - 1])
                dt_k = t[k] - t[k - 1]
            else:
                t_interp, dt_k = t[k], float('nan')
            lev_k = int(lev[k])
        else:
            arrival = t_interp = dt_k = float('nan')
            lev_k = -1
        kmax = int(np.argmax(np.abs(eta)))
        rows.append('%s,%.4f,%.4f,%.1f,%.4f' % (name, lat, lon180, arrival, abs(eta[kmax])))
        details.append('%d,%s,%.4f,%.4f,%.1f,%.1f,%.2f,%d,%.4f,%.1f,%.4f,%.4f,%.1f,%d,%s'
                       % (num, name, lat, lon180, arrival, t_interp, dt_k, lev_k,
                          abs(eta[kmax]), t[kmax], eta.max(), eta.min(), t[-1],
                          lev.max(), ' '.join(str(l) for l in sorted(set(lev.tolist())))))
    print('gauge,lat,lon,arrival_s,max_eta_m')
    for r in rows:
        print(r)
    head = ('num,gauge,lat,lon,arrival_s,arrival_interp_s,gauge_dt_at_arrival_s,'
            'level_at_arrival,max_abs_eta_m,t_of_max_s,max_eta_m,min_eta_m,t_last_s,'
            'finest_level,levels_seen')
    with open(os.path.join(a.outdir, 'arrivals_detail.csv'), 'w') as f:
        f.write(head + '\n' + '\n'.join(details) + '\n')
    sys.stderr.write(head + '\n' + '\n'.join(details) + '\n')


if __name__ == '__main__':
    main()
