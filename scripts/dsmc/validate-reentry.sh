#!/usr/bin/env bash
# Re-entry validation: the 1.6 m sphere at 7.5 km/s and 100 km in reacting five-species air
# (cases/dsmc/sphere-reentry-100km.ini; Dogra, Wilmoth & Moss, AIAA J. 30 (1992) 1789), run
# with kedr dsmc and compared with the published values (scripts/dsmc/compare_reentry.py,
# scripts/dsmc/ref/reentry-100km.csv).
#
#   scripts/dsmc/validate-reentry.sh            full case, cuda back end (about 5e10
#                                               particle-steps: about a minute on an H100 at
#                                               1e9 particle-steps/s)
#   SMALL=1 scripts/dsmc/validate-reentry.sh    shrunken copy (cells of 3 cm, 1200 steps) on the
#                                               cpu: about a minute on 2 cores; proves the case,
#                                               the run and the comparison, not the validation
#
# Environment: KEDR (the kedr binary, default build/kedr), BACKEND (cuda, or cpu with SMALL=1),
# OUT (output directory, default reentry-out or reentry-small-out), SMALL (1: shrunken),
# THREADS (OMP_NUM_THREADS for the cpu back end); the GPU is the caller's CUDA_VISIBLE_DEVICES.
# Prints the run's statistics lines and the comparison table; exits non-zero when the run fails
# or its outputs are missing (not when kedr disagrees with the paper).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
KEDR=${KEDR:-$root/build/kedr}
SMALL=${SMALL:-0}
if [ "$SMALL" = 1 ]; then
    BACKEND=${BACKEND:-cpu}
    OUT=${OUT:-reentry-small-out}
else
    BACKEND=${BACKEND:-cuda}
    OUT=${OUT:-reentry-out}
fi
[ -n "${THREADS:-}" ] && export OMP_NUM_THREADS=$THREADS
if [ ! -x "$KEDR" ]; then
    echo "validate-reentry: no kedr binary at $KEDR (build it, or set KEDR)" >&2
    exit 1
fi
name=sphere-reentry-100km
case_file=$root/cases/dsmc/$name.ini
mkdir -p "$OUT"
if [ "$SMALL" = 1 ]; then
    # The same case on cells of 3 cm (80 x 67), dt and steps to match: the flow crosses the
    # domain about 3 times, the sampling the last 600 steps. The files it names are given as
    # absolute paths, since the copy lives in OUT.
    sed -e "s|^nx = .*|nx = 80|" -e "s|^ny = .*|ny = 67|" -e "s|^dt = .*|dt = 1.8e-6|" \
        -e "s|^steps = .*|steps = 1200|" -e "s|^start = .*|start = 600|" \
        -e "s|^stats_every = .*|stats_every = 100|" \
        -e "s|^file = reentry-species.ini|file = $root/cases/dsmc/reentry-species.ini|" \
        -e "s|^reactions = air5.reactions|reactions = $root/cases/dsmc/air5.reactions|" \
        "$case_file" > "$OUT/$name.ini"
    case_file=$OUT/$name.ini
fi
echo "validate-reentry: $case_file, backend $BACKEND, output $OUT$([ "$SMALL" = 1 ] && echo ' (SMALL: shrunken, not the validation)')"
start=$(date +%s)
set +e
"$KEDR" dsmc "$case_file" --backend "$BACKEND" --out "$OUT" 2>&1 | tee "$OUT/run.log"
rc=${PIPESTATUS[0]}
set -e
echo "validate-reentry: kedr dsmc exited $rc after $(( $(date +%s) - start )) s"
[ "$rc" = 0 ] || exit "$rc"
python3 "$here/compare_reentry.py" --out "$OUT" --name "$name" --log "$OUT/run.log" \
    --ref "$here/ref/reentry-100km.csv" --case "$case_file"
