#!/bin/sh
# The paper's asteroid tsunami at 1 arc-minute on a real GPU (run by hand when one is at hand;
# not in CI). The global grid is 21600 x 11928 points (70 S to 70 N), 258 M points, and needs
#   GPU:  about 16 GB: 3 SRAM slots x 3 fields x 4 B per point x 1.27 (the (n+1)^2/n^2 comm
#         layers at n = 8) = 11.7 GB, plus the constant fields (4 planes, 4.1 GB), which every
#         device holds whole (they are indexed by global position);
#   host: about 20 GB (the constants and their padded CPU copy, the maps, one state read back).
# Today it is refused before any work: the constants are one 4.1 GB buffer and one SRAM slot
# of a single wafer 3.9 GB, more than a storage binding takes on any adapter. It runs once
# fields and constants are split over several bindings (the fused-engine issue, "state beyond
# one binding"); until then the finest run is what one binding holds (run with a coarser
# --resolution, e.g. 5min, about 150 MiB per field).
# Usage: benches/gpu-tsunami.sh [OUT] [EXTRA ARGS...]
set -eu
out=${1:-tsunami-1min}
[ $# -gt 0 ] && shift
cd "$(dirname "$0")/.."
cargo build --release --quiet
./target/release/wafer-emu adapters
exec ./target/release/wafer-emu tsunami --resolution 1min --n 8 --hours 14 \
    --sample-every 600 --frame-every 60 --no-netcdf-frames --out "$out" "$@"
