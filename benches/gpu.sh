#!/bin/sh
# On a real GPU (run by hand, or through the device tool, when one is at hand; not in CI):
# build, check bit-exactness on a few shapes, benchmark every kernel, printing each variant's
# fraction of the device's own copy bandwidth (the "/ceiling" column), then run the paper's
# largest cluster and the default tsunami. About 5 minutes.
#
#   benches/gpu.sh [GRID [OUT]]   build here with cargo, then run (GRID: default 8192; OUT: a
#                                 folder for the benches' JSON reports, default none)
#   benches/gpu.sh pack DIR       build here and copy the program and the bit-exactness tests
#                                 into DIR, for a GPU machine of the same architecture
#                                 without Rust
#   WAFER_EMU_PREBUILT=DIR benches/gpu.sh [GRID [OUT]]   run what `pack` put in DIR
#   TUNINGS="wafer_rows=2 tile_kib=8,wafer_rows=4" benches/gpu.sh ...   also bench heat5
#                                 under each WAFER_EMU_TUNING override listed (no rebuild;
#                                 default "direct_grid=table3
#                                 direct_cols=8,direct_rows=8", "" for none);
#                                 the shapes not yet measured on a GPU: fused_invocations=128
#                                 or 256, fused_rows=1 or 2, block_rows=4 or 8 (time blocks),
#                                 direct_cols=8 (vec4 reads of the dense grid, and the bench's
#                                 time blocks of 5 in registers, src/engine/gpu/row_blocks.rs) with
#                                 direct_rows=4 to 64; point_rows=2 to 4 (shallow water's
#                                 runs along several rows); block_lanes=on with direct_rows=32
#                                 to 256 (rows per block of the time blocks across lanes)
#
# The heat5 and swe benches run with --profile: each variant's GPU time per kernel.
# Each stage has a time limit; a failing stage does not stop the next, and the exit status is
# the last failure's.
set -eu
cd "$(dirname "$0")/.."
tests="determinism swe translation cluster"

if [ "${1:-}" = pack ]; then
    dir=${2:?usage: benches/gpu.sh pack DIR}
    mkdir -p "$dir"
    cargo build --release --quiet
    cp target/release/wafer-emu "$dir/"
    for t in $tests; do
        exe=$(cargo test --release --quiet --no-run --test "$t" --message-format=json |
            grep '"kind":\["test"\]' | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p')
        cp "$exe" "$dir/$t"
    done
    strip "$dir"/*
    ls -l "$dir"
    exit 0
fi

grid=${1:-8192}
out=${2:-}
[ -n "$out" ] && mkdir -p "$out"
export WAFER_EMU_REQUIRE_GPU=1
if [ -n "${WAFER_EMU_PREBUILT:-}" ]; then
    emu=$WAFER_EMU_PREBUILT/wafer-emu
    check="for t in $tests; do $WAFER_EMU_PREBUILT/\$t -q || exit; done"
else
    cargo build --release --quiet
    emu=./target/release/wafer-emu
    check="cargo test --release --quiet $(printf -- '--test %s ' $tests)"
fi

status=0
# stage SECONDS TITLE COMMAND...: runs COMMAND under a time limit; a failure is remembered.
stage() {
    limit=$1 title=$2
    shift 2
    echo "== $title"
    start=$(date +%s)
    timeout "$limit" "$@" || {
        status=$?
        echo "!! $title: exit status $status"
    }
    echo "   ($(($(date +%s) - start)) s)"
}
# report NAME: the bench's --json arguments when OUT is set.
report() { [ -z "$out" ] || echo "--json $out/$1.json"; }

stage 30 "adapters" "$emu" adapters
stage 120 "bit-exactness: wafer, fused engine, banks and clusters == global kernel" \
    sh -c "$check"
for kernel in heat5 heat9; do
    profile=$([ "$kernel" = heat5 ] && echo --profile || true)
    # shellcheck disable=SC2046
    stage 60 "$kernel on ${grid}^2" "$emu" bench "$kernel" --grid "$grid" --n 2,8,16,32,128 \
        --steps 100 --reps 5 --no-cpu $profile $(report "$kernel")
done
# Heat's time blocks in registers across a subgroup's lanes (block_lanes, not yet the GPU's
# default): blocks of 5 and 9 steps, 64 rows per block.
for k in 5 9; do
    # shellcheck disable=SC2046
    stage 60 "heat5 on ${grid}^2, time blocks of $k across subgroup lanes" \
        env WAFER_EMU_TUNING=block_lanes=on,direct_rows=64 "$emu" bench heat5 --grid "$grid" \
        --n 2,8,32,128 --steps 90 --reps 5 --no-cpu --time-block $k $(report "heat5-lanes-$k")
done
k=0
# By default the previous GPU shape of heat's direct reads (Table 3's blocks) beside the dense
# grid of the heat5 stage above, and the global kernel's shape for the direct reads: blocks of 8
# columns by vec4s, 8 rows (with time blocks of 5 in registers); TUNINGS="" runs none.
for tuning in ${TUNINGS-direct_grid=table3 direct_cols=8,direct_rows=8}; do
    k=$((k + 1))
    # shellcheck disable=SC2046
    stage 45 "heat5 on ${grid}^2, WAFER_EMU_TUNING=$tuning" env WAFER_EMU_TUNING="$tuning" \
        "$emu" bench heat5 --grid "$grid" --n 2,8,32,128 --steps 50 --reps 3 --no-cpu \
        --profile $(report "heat5-tuning-$k")
done
# Shallow water on a quarter of the points: its constant fields are built on the CPU.
# shellcheck disable=SC2046
stage 90 "swe on $((grid / 2))^2" "$emu" bench swe --grid $((grid / 2)) --n 8,32,128 --steps 20 \
    --reps 3 --no-cpu --profile $(report swe)
stage 120 "the paper's largest cluster: 8x8 wafers of 744x1116 PEs at n = 2, fused" \
    "$emu" run heat5 --wafers 8x8 --pes 744x1116 --n 2 --steps 20 --engine fused --no-output
stage 60 "the default tsunami" "$emu" tsunami --out "$(mktemp -d)/tsunami" --force
exit $status
