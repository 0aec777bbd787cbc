#!/usr/bin/env python3
"""Convergence of the tsunami's first arrivals with the grid, against the exact front.

Runs `wafer-emu tsunami` with the paper's hump (200 m over 30,000 km^2 at 35 N, 140 W) on a
flat ocean without rotation, where the exact answer is known: the linear waves of the same
hump on a sphere of the same depth (the summary's `exact_arrival_s`, src/tsunami/exact.rs).
For each kernel and resolution it prints the first arrival (|eta| > 1 cm) at each gauge
against the exact one, and the wall time, as a Markdown table.

    python3 benches/peers/convergence.py --kernels swe-c,swe --resolutions 60min,30min,15min
    python3 benches/peers/convergence.py --relief etopo1-6min --coriolis   # real relief (no exact)

The binary is target/release/wafer-emu (build it first: cargo build --release).
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, "target", "release", "wafer-emu")

# Gauges: one hour east of the impact (720 km), then the tsunami's defaults but Japan.
GAUGES = "name,lat,lon\none hour east,34.83,-132.1\n"


def run(kernel, resolution, args, out):
    gauges = os.path.join(out, "gauges.csv")
    os.makedirs(out, exist_ok=True)
    with open(gauges, "w") as f:
        f.write(GAUGES)
    command = [
        BINARY, "tsunami", "--kernel", kernel, "--resolution", resolution,
        "--relief", args.relief, "--duration", f"{args.hours}h", "--frame-every", f"{args.hours}h",
        "--region", "none", "--no-netcdf-frames", "--gauges", gauges,
        "--out", os.path.join(out, "run"), "--force", "--backend", args.backend,
    ]
    if not args.coriolis:
        command.append("--no-coriolis")
    started = time.time()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.time() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    with open(os.path.join(out, "run", "gauge_summary.csv")) as f:
        rows = list(csv.DictReader(f))
    return rows, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", default="swe-c,swe")
    parser.add_argument("--resolutions", default="60min,30min,15min,12min,7.5min")
    parser.add_argument("--relief", default="flat:4000")
    parser.add_argument("--coriolis", action="store_true")
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
    print("| kernel | cell (deg) | gauge | exact (s) | first arrival (s) | error | max (m) | wall (s) |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for kernel in args.kernels.split(","):
            for resolution in args.resolutions.split(","):
                rows, wall = run(kernel, resolution, args, os.path.join(scratch, kernel + resolution))
                for row in rows:
                    exact, arrival = row["exact_arrival_s"], row["arrival_s"]
                    error = (f"{100 * (float(arrival) - float(exact)) / float(exact):+.1f} %"
                             if exact and arrival else "-")
                    print(f"| {kernel} | {resolution} | {row['gauge']} | {exact or '-'} | "
                          f"{arrival or '-'} | {error} | {float(row['max_amplitude_m']):.2f} | {wall:.0f} |",
                          flush=True)


if __name__ == "__main__":
    main()
