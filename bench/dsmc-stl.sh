#!/usr/bin/env bash
# What a triangulated body costs against the built-in body it approximates: cases/dsmc/sphere-3d.ini
# (the built-in sphere) and the same case with the sphere as icospheres of 1280, 81 920 and
# 1 310 720 triangles (scripts/dsmc/icosphere.py), each run STEPS steps on one back end; prints the
# move's and the whole step's milliseconds (kedr dsmc's stage table) and their ratio to the
# built-in sphere's. From the repository root, after kedr is built in build/:
#
#   bench/dsmc-stl.sh                 (BACKEND=cuda by default; STEPS=200; LEVELS="3 6 8";
#                                      KEDR=build/kedr; OUT=a folder for the cases and logs;
#                                      PPC=molecules a cell, default the case's 10)
#
# The case as shipped holds 2.8 million molecules (a step of about 0.6 ms on an H100): there the
# move's time is set by its slowest molecules (those near the surface, testing its triangles one
# after another), not by their number; PPC=100 gives a step that fills the GPU.
set -u -o pipefail
kedr=${KEDR:-build/kedr}
backend=${BACKEND:-cuda}
steps=${STEPS:-200}
levels=${LEVELS:-3 6 8}
ppc=${PPC:-}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
[ -x "$kedr" ] || { echo "dsmc-stl.sh: $kedr not found (build kedr or set KEDR)" >&2; exit 2; }
cases=$(cd cases/dsmc && pwd)
echo "dsmc-stl.sh: $backend, $steps steps of sphere-3d.ini${ppc:+ with $ppc molecules a cell}, commit ${KEDR_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}"
printf '%-26s %12s %12s %10s %10s\n' body "move ms" "step ms" "move/ref" "step/ref"
ref_move="" ref_step=""
run() { # label, case file
    local log=$out/$1.log
    if ! "$kedr" dsmc "$2" --backend "$backend" --steps "$steps" --out "$out/$1-out" >"$log" 2>&1; then
        echo "$1: failed (see $log)"; tail -n 3 "$log"; return 1
    fi
    local move step
    move=$(awk '$1 == "move" {print $3}' "$log")
    step=$(awk '$1 == "sum" {print $3}' "$log")
    [ -z "$ref_move" ] && { ref_move=$move; ref_step=$step; }
    awk -v l="$1" -v m="$move" -v s="$step" -v rm="$ref_move" -v rs="$ref_step" \
        'BEGIN {printf "%-26s %12.3f %12.3f %10.3f %10.3f\n", l, m, s, m / rm, s / rs}'
}
rc=0
ppc_sed="s|^particles_per_cell = .*|particles_per_cell = ${ppc:-10}|"
sed -e "$ppc_sed" -e "s|^file = species.ini|file = $cases/species.ini|" "$cases/sphere-3d.ini" >"$out/builtin.ini"
run built-in "$out/builtin.ini" || exit 1
for l in $levels; do
    python3 scripts/dsmc/icosphere.py "$l" "$out/ico$l.stl" >/dev/null || { rc=1; continue; }
    sed -e "s|^file = sphere-stl.stl|file = $out/ico$l.stl|" -e "s|^file = species.ini|file = $cases/species.ini|" -e "$ppc_sed" \
        "$cases/sphere-stl.ini" >"$out/ico$l.ini"
    run "icosphere $((20 * 4 ** l)) triangles" "$out/ico$l.ini" || rc=1
done
exit $rc
