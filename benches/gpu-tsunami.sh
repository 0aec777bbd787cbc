#!/bin/sh
# The paper's asteroid tsunami at 1 arc-minute on a real GPU (run by hand, when one is at
# hand; not in CI). The global grid is 21600 x 11928 points (70 S to 70 N), 258 M points:
#   GPU:  about 16 GB (3 SRAM slots x 3 fields x 1.27 (the (n+1)^2/n^2 comm layers) x 4 B per
#         point, plus 4 constant planes), split over 16 wafers on 16 devices so that no buffer
#         passes a 2 GiB binding (one wafer's SRAM slot is about 250 MB);
#   host: about 20 GB (the constants and their padded CPU copy, the maps, one state read back).
# A sample reads the whole state back: every 10 model minutes here (dt is about 1 s).
# Usage: benches/gpu-tsunami.sh [OUT] [EXTRA ARGS...]
set -eu
out=${1:-tsunami-1min}
[ $# -gt 0 ] && shift
cd "$(dirname "$0")/.."
cargo build --release --quiet
./target/release/wafer-emu adapters
exec ./target/release/wafer-emu tsunami --resolution 1min --n 8 --wafers 4x4 --devices 16 \
    --hours 14 --sample-every 600 --frame-every 60 --no-netcdf-frames --out "$out" "$@"
