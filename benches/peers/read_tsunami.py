#!/usr/bin/env python3
"""Read a `wafer-emu tsunami` output folder as an xarray user would, and check it.

    python3 benches/peers/read_tsunami.py tsunami/

Opens tsunami.nc with xarray (CF decoding on), prints what it holds, and checks that its
gauge series equal gauges.csv (read with pandas) sample by sample, that the samples fall at
whole multiples of the sampling interval, that the frames' times decode to times after the
impact, and that the maps have their units. Exits 1 on a mismatch. Needs xarray, pandas and
netCDF4 or scipy (pip install xarray pandas netCDF4).
"""
import sys

import numpy as np
import pandas as pd
import xarray as xr


def main(folder):
    ds = xr.open_dataset(f"{folder}/tsunami.nc")
    print(ds)
    problems = []
    impact = np.datetime64("2000-01-01T00:00:00")
    if "time" in ds.coords:
        after = (ds.time.values - impact) / np.timedelta64(1, "s")
        print("frames at", after, "s after the impact")
        if not np.all(np.diff(after) > 0):
            problems.append("frame times do not increase")
    samples = (ds.sample_time.values - impact) / np.timedelta64(1, "s")
    interval = ds.attrs["sample_every_s"]
    taken = ~np.isnan(samples)
    if not np.allclose(samples[taken] / interval, np.round(samples[taken] / interval), atol=0, rtol=0):
        problems.append("samples off the requested times")
    table = pd.read_csv(f"{folder}/gauges.csv")
    names = [bytes(n).decode().rstrip("\0") if not isinstance(n, str) else n
             for n in ds.gauge_name.values]
    for k, name in enumerate(names):
        rows = table[table.gauge == name]
        stored = ds.gauge_eta.isel(gauge=k).values[: len(rows)]
        if not np.array_equal(stored.astype(np.float32), rows.eta_m.values.astype(np.float32)):
            problems.append(f"gauge {name}: NetCDF and CSV differ")
        if not np.array_equal(rows.time_s.values, samples[: len(rows)]):
            problems.append(f"gauge {name}: sample times differ")
        arrival = rows.time_s[np.abs(rows.eta_m) > ds.attrs["arrival_threshold_m"]]
        first = f"{arrival.iloc[0] / 3600:.2f} h" if len(arrival) else "-"
        print(f"{name:30s} first arrival {first}, max |eta| {np.abs(rows.eta_m).max():.3f} m")
    for var, units in [("max_eta", "m"), ("max_speed", "m s-1"), ("depth", "m")]:
        if ds[var].attrs.get("units") != units:
            problems.append(f"{var} has units {ds[var].attrs.get('units')}")
    print("largest |eta|:", float(ds.max_eta.max()), "m; fastest current:",
          float(ds.max_speed.max()), "m/s")
    for p in problems:
        print("MISMATCH:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "tsunami"))
