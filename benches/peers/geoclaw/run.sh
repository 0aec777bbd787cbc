#!/usr/bin/env bash
# Build GeoClaw for this setup and run one profile (see setrun.py PROFILES, README.md).
#   ./run.sh PROFILE            e.g. ./run.sh coarse ; ./run.sh fine
#   GEOCLAW_FLAT=4000 ./run.sh coarse   same profile on a flat 4000 m ocean
# Output goes to _output_PROFILE[_flatDEPTH]/ ; the arrival table is printed at the end and
# written to arrivals_PROFILE[_flatDEPTH].csv.
set -euo pipefail
cd "$(dirname "$0")"
PROFILE=${1:-coarse}
export GEOCLAW_RUN=$PROFILE
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
PY=${CLAW_PYTHON:-python3}
export CLAW_PYTHON=$PY

# Clawpack source tree: the pip wheel has no Fortran sources, so unpack the 5.14.0 sdist.
if [ -z "${CLAW:-}" ]; then
    if [ ! -d _clawsrc/clawpack-5.14.0/geoclaw/src ]; then
        mkdir -p _clawsrc
        if [ ! -f _clawsrc/clawpack-5.14.0.tar.gz ]; then
            $PY -m pip download clawpack==5.14.0 --no-deps --no-binary clawpack -d _clawsrc
        fi
        echo "b9f3208fe9e1d834122ae86e2af536a3010435d0d65e6629f360416ea9cffe89  _clawsrc/clawpack-5.14.0.tar.gz" | sha256sum -c -
        tar xzf _clawsrc/clawpack-5.14.0.tar.gz -C _clawsrc
    fi
    export CLAW=$PWD/_clawsrc/clawpack-5.14.0
fi
echo "CLAW=$CLAW  (python clawpack $($PY -c 'import clawpack; print(clawpack.__version__)'))"

SUFFIX=$PROFILE${GEOCLAW_CFL:+_cfl$GEOCLAW_CFL}${GEOCLAW_TFINAL:+_t$GEOCLAW_TFINAL}
if [ -n "${GEOCLAW_FLAT:-}" ]; then
    SUFFIX=${SUFFIX}_flat${GEOCLAW_FLAT}
    [ -f "flat_${GEOCLAW_FLAT}.tt3" ] || $PY make_topo.py --flat "$GEOCLAW_FLAT"
else
    [ -f pacific_6min.tt3 ] || $PY make_topo.py
fi
OUT=_output_$SUFFIX

make .exe FFLAGS="${FFLAGS:--O2}"
rm -f *.data
$PY setrun.py geoclaw
rm -rf "$OUT" && mkdir -p "$OUT"
cp *.data profile.txt "$OUT"/
cd "$OUT"
START=$(date +%s)
/usr/bin/time -v ../xgeoclaw > run.log 2> time.log || { tail -30 run.log; tail -30 time.log; exit 1; }
END=$(date +%s)
echo "wall time: $((END-START)) s" | tee wall.txt
grep -E "Elapsed|Maximum resident" time.log | tee -a wall.txt
cd ..
$PY make_ttmap.py "$OUT"
$PY arrivals.py "$OUT" | tee "arrivals_$SUFFIX.csv"
