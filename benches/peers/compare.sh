#!/bin/sh
# The CPU backend against the Devito peers on the same machine, one after the other, at the
# same grid and thread count: heat5, heat9 and swe, with the CPU backend's default time blocks
# (15 steps for heat, 9 for shallow water), each kernel ROUNDS times in turn with its peer, as
# the machine's speed drifts. Usage:
#   benches/peers/compare.sh [GRID] [PYTHON] [KERNELS] [ROUNDS]
# (GRID: 4096 by default; PYTHON: the interpreter of a venv with requirements.txt installed;
# KERNELS: a subset of "heat5 heat9 swe"; ROUNDS: 2 by default).
set -eu
grid=${1:-4096}
python=${2:-/tmp/devito-venv/bin/python}
kernels=${3:-heat5 heat9 swe}
rounds=${4:-2}
cd "$(dirname "$0")/../.."
cargo build --release --quiet
threads=$(nproc)
for kernel in $kernels; do
    steps=30 block=15
    [ "$kernel" = swe ] && steps=9 block=9
    for round in $(seq "$rounds"); do
        echo "== round $round: wafer-emu bench $kernel, CPU backend, ${grid}^2, $threads threads"
        RAYON_NUM_THREADS=$threads ./target/release/wafer-emu bench "$kernel" --backend cpu \
            --grid "$grid" --n 8,32,128 --steps "$steps" --reps 3 --time-block "$block"
        echo "== round $round: Devito peer $kernel, ${grid}^2, $threads threads"
        if [ "$kernel" = swe ]; then
            (cd benches/peers && OMP_NUM_THREADS=$threads "$python" devito_swe.py \
                --nx "$grid" --ny "$grid" --steps "$steps" --repeats 3)
        else
            (cd benches/peers && OMP_NUM_THREADS=$threads "$python" devito_heat.py \
                --kernel "$kernel" --n "$grid" --steps "$steps" --repeats 3)
        fi
    done
done
