#!/bin/sh
# The CPU backend against the Devito peer on the same machine, one after the other, at the
# same grid and thread count. Usage: benches/peers/compare.sh [GRID] [PYTHON]
# (PYTHON: the interpreter of a venv with requirements.txt installed).
set -eu
grid=${1:-2048}
python=${2:-/tmp/devito-venv/bin/python}
cd "$(dirname "$0")/../.."
cargo build --release --quiet
threads=$(nproc)
echo "== wafer-emu bench swe, CPU backend, ${grid}^2, $threads threads"
RAYON_NUM_THREADS=$threads ./target/release/wafer-emu bench swe --backend cpu \
    --grid "$grid" --n 8,32,128 --steps 20 --reps 3
echo "== Devito peer, ${grid}^2, $threads threads"
cd benches/peers
OMP_NUM_THREADS=$threads "$python" devito_swe.py --nx "$grid" --ny "$grid" --steps 20 --repeats 3
