#!/usr/bin/env bash
# The Lofthouse cylinder validation (docs/dsmc-validation.md): runs Mach 10 argon past
# the 0.3048 m cylinder with `kedr dsmc` and compares the surface pressure, shear, heat flux and
# drag with the published DSMC results (scripts/dsmc/ref/lofthouse.csv) and with the continuum
# and free-molecular limits (scripts/dsmc/compare_lofthouse.py). Prints a short summary.
#
# usage: scripts/dsmc/validate-lofthouse.sh
# environment:
#   KEDR     the kedr binary (default: build/kedr of this checkout)
#   BACKEND  cuda (default) or cpu; the GPU is the caller's CUDA_VISIBLE_DEVICES
#   OUT      output directory (default: ./lofthouse-out); the run's files, kedr.log, compare.txt
#   CASE     m10-kn001 (default: cases/dsmc/cylinder-ar-m10-kn001.ini, the paper's main case)
#            or m10-kn005 (cases/dsmc/cylinder-ar-m10.ini), or m10-kn025
#            (cases/dsmc/cylinder-ar-m10-kn025.ini: a few minutes on 2 cpu cores at full size)
#   SMALL=1  a shrunken run to prove the chain on a cpu: cells F times larger along each axis,
#            dt F times longer (the same simulated time in F times fewer steps), at most 10
#            molecules a cell; F = 12 for m10-kn001, 4 for m10-kn005. About a minute on 2
#            cores; its numbers are not the validation
#   THREADS  cpu threads for BACKEND=cpu (OMP_NUM_THREADS; default: all)
# exit status: kedr's when the run fails, the comparison's (2: missing or malformed files)
# otherwise; a disagreement with the published values is printed, not an error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KEDR=${KEDR:-$ROOT/build/kedr}
BACKEND=${BACKEND:-cuda}
OUT=${OUT:-$PWD/lofthouse-out}
CASE=${CASE:-m10-kn001}
SMALL=${SMALL:-0}

case "$CASE" in
    m10-kn001) INI=$ROOT/cases/dsmc/cylinder-ar-m10-kn001.ini; SHRINK=12 ;;
    m10-kn005) INI=$ROOT/cases/dsmc/cylinder-ar-m10.ini; SHRINK=4 ;;
    m10-kn025) INI=$ROOT/cases/dsmc/cylinder-ar-m10-kn025.ini; SHRINK=2 ;;
    *) echo "validate-lofthouse: CASE=$CASE: expected m10-kn001, m10-kn005 or m10-kn025" >&2; exit 2 ;;
esac
case "$BACKEND" in
    cpu|cuda|auto) ;;
    *) echo "validate-lofthouse: BACKEND=$BACKEND: expected cpu, cuda or auto" >&2; exit 2 ;;
esac
case "$SMALL" in
    0|1) ;;
    *) echo "validate-lofthouse: SMALL=$SMALL: expected 0 or 1" >&2; exit 2 ;;
esac
if [ ! -x "$KEDR" ]; then
    echo "validate-lofthouse: $KEDR is not an executable (set KEDR to the kedr binary)" >&2
    exit 2
fi
if [ -n "${THREADS:-}" ]; then export OMP_NUM_THREADS=$THREADS; fi
mkdir -p "$OUT"
NAME=$(basename "$INI" .ini)
LABEL="$BACKEND"

if [ "$SMALL" = 1 ]; then
    # the same case with cells SHRINK times larger along each axis and dt SHRINK times longer
    # (the same simulated time in SHRINK times fewer steps), at most 10 molecules a cell; the
    # species file by its absolute path, since the shrunken case lies in OUT
    RUN_INI=$OUT/$NAME.ini
    awk -v f="$SHRINK" -v sp="$ROOT/cases/dsmc/species.ini" '
        function r(v) { return int(v / f + 0.5) }
        /^nx *=/ { print "nx = " r($3); next }
        /^ny *=/ { print "ny = " r($3); next }
        /^dt *=/ { print "dt = " $3 * f; next }
        /^steps *=/ { print "steps = " r($3); next }
        /^start *=/ { print "start = " r($3); next }
        /^stats_every *=/ { print "stats_every = " r($3); next }
        /^particles_per_cell *=/ { print "particles_per_cell = " ($3 < 10 ? $3 : 10); next }
        /^file *=/ { print "file = " sp; next }
        { print }' "$INI" > "$RUN_INI"
    LABEL="$BACKEND, SMALL: cells $SHRINK times larger, not the validation"
else
    RUN_INI=$INI
fi

echo "validate-lofthouse: case $CASE ($(basename "$INI")), backend $BACKEND$([ "$SMALL" = 1 ] && echo ', SMALL')"
START=$(date +%s)
set +e
"$KEDR" dsmc "$RUN_INI" --backend "$BACKEND" --out "$OUT" > "$OUT/kedr.log" 2>&1
RC=$?
set -e
END=$(date +%s)
if [ $RC -ne 0 ]; then
    echo "validate-lofthouse: kedr dsmc failed (exit $RC); the end of $OUT/kedr.log:"
    tail -n 30 "$OUT/kedr.log"
    exit $RC
fi
grep -E '^(estimate:|start:|body 1:|wall time|mean collision)' "$OUT/kedr.log" | sed 's/^/  /'
grep -E '^step ' "$OUT/kedr.log" | tail -n 1 | sed 's/^/  last: /'
echo "  elapsed $((END - START)) s"

set +e
python3 "$ROOT/scripts/dsmc/compare_lofthouse.py" --case "$RUN_INI" \
    --surface "$OUT/$NAME-surface.csv" --log "$OUT/kedr.log" --id "$CASE" \
    --label "$LABEL" > "$OUT/compare.txt" 2>&1
CRC=$?
set -e
cat "$OUT/compare.txt"
exit $CRC
