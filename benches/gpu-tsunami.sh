#!/bin/sh
# The paper's asteroid tsunami at 1 arc-minute on a real GPU (run by hand when one is at hand;
# not in CI). The global grid is 21600 x 11928 points (70 S to 70 N), 258 M points, cut into
# 4 x 3 wafers of 675 x 497 PEs of 8 x 8 points, and needs
#   GPU:  about 16 GB: 3 SRAM slots x 3 fields x 4 B per point x 1.27 (the (n+1)^2/n^2 comm
#         layers at n = 8) = 11.7 GB, in banks of whole wafers (326 MB per wafer and slot) that
#         each fit one storage binding, plus the constant fields (4 planes, 4.1 GB), which
#         every device holds whole (they are indexed by global position) in pages of one
#         binding each (at most 8: a binding of at least 512 MiB);
#   host: about 20 GB (the constants and their padded CPU copy, the maps, one state read back).
# An adapter whose storage bindings hold less than one wafer (326 MB) needs more wafers:
# --wafers takes counts that divide 2700 x 1491 PEs (e.g. 12x7).
# Usage: benches/gpu-tsunami.sh [OUT] [EXTRA ARGS...]
set -eu
out=${1:-tsunami-1min}
[ $# -gt 0 ] && shift
cd "$(dirname "$0")/.."
cargo build --release --quiet
./target/release/wafer-emu adapters
exec ./target/release/wafer-emu tsunami --resolution 1min --n 8 --wafers 4x3 --duration 14h \
    --sample-every 600s --frame-every 60min --no-netcdf-frames --out "$out" "$@"
