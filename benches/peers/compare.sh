#!/bin/sh
# The CPU backend against the Devito peers on the same machine, one after the other, at the
# same grid and thread count: heat5, heat9 and swe. Usage:
#   benches/peers/compare.sh [GRID] [PYTHON] [KERNELS]
# (GRID: 4096 by default; PYTHON: the interpreter of a venv with requirements.txt installed;
# KERNELS: a subset of "heat5 heat9 swe").
set -eu
grid=${1:-4096}
python=${2:-/tmp/devito-venv/bin/python}
kernels=${3:-heat5 heat9 swe}
cd "$(dirname "$0")/../.."
cargo build --release --quiet
threads=$(nproc)
for kernel in $kernels; do
    steps=27
    [ "$kernel" = swe ] && steps=9
    echo "== wafer-emu bench $kernel, CPU backend, ${grid}^2, $threads threads"
    RAYON_NUM_THREADS=$threads ./target/release/wafer-emu bench "$kernel" --backend cpu \
        --grid "$grid" --n 8,32,128 --steps "$steps" --reps 3 --time-block 9
    echo "== Devito peer $kernel, ${grid}^2, $threads threads"
    if [ "$kernel" = swe ]; then
        (cd benches/peers && OMP_NUM_THREADS=$threads "$python" devito_swe.py \
            --nx "$grid" --ny "$grid" --steps "$steps" --repeats 3)
    else
        (cd benches/peers && OMP_NUM_THREADS=$threads "$python" devito_heat.py \
            --kernel "$kernel" --n "$grid" --steps "$steps" --repeats 3)
    fi
done
