#!/bin/sh
# On a real GPU (run by hand, or through the device tool, when one is at hand; not in CI):
# build, check bit-exactness on a few shapes, then benchmark every kernel, printing each
# variant's fraction of the device's own copy bandwidth (the "/ceiling" column). About
# 5 minutes. Usage: benches/gpu.sh [GRID] (default 8192).
set -eu
grid=${1:-8192}
cd "$(dirname "$0")/.."
export WAFER_EMU_REQUIRE_GPU=1
cargo build --release --quiet
./target/release/wafer-emu adapters
echo "== bit-exactness: wafer, fused engine, banks and clusters == global kernel, GPU == CPU within bound"
cargo test --release --quiet --test determinism --test swe --test translation --test cluster 2>&1 | grep -E "test result|FAILED|panicked"
for kernel in heat5 heat9; do
    echo "== $kernel on ${grid}^2"
    ./target/release/wafer-emu bench "$kernel" --grid "$grid" --n 2,8,32,128 --steps 50 --reps 5 --no-cpu
done
echo "== swe on ${grid}^2"
./target/release/wafer-emu bench swe --grid "$grid" --n 8,32,128 --steps 10 --reps 3 --no-cpu
echo "== the default tsunami"
./target/release/wafer-emu tsunami --out "$(mktemp -d)/tsunami" --force | grep -E "grid|wall time|emulated"
