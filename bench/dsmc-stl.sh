#!/usr/bin/env bash
# What a body read from a file costs against the built-in body it approximates, each case run
# STEPS steps on one back end; prints the move's and the whole step's milliseconds (kedr dsmc's
# stage table) and their ratio to the built-in body's. From the repository root, after kedr is
# built in build/:
#
#   bench/dsmc-stl.sh                 (BACKEND=cuda by default; STEPS=200; KEDR=build/kedr;
#                                      OUT=a folder for the cases and logs; PPC=molecules a
#                                      cell, default the case's)
#   SHAPE=circle bench/dsmc-stl.sh    (the 2D outline bodies)
#
# SHAPE=sphere (the default): cases/dsmc/sphere-3d.ini (the built-in sphere) and the same case
# with the sphere as icospheres of 20 4^l triangles for l in LEVELS (default "3 6 8": 1280,
# 81 920 and 1 310 720; scripts/dsmc/icosphere.py). The case as shipped holds 2.8 million
# molecules (a step of about 0.6 ms on an H100): there the move's time is set by its slowest
# molecules (those near the surface, testing its triangles one after another), not by their
# number; PPC=100 gives a step that fills the GPU.
# SHAPE=circle: cases/dsmc/cylinder-ar-m10.ini (the built-in circle; 1.4 million molecules at
# its 20 a cell) and cylinder-outline.ini with the circle as outlines of POINTS points (default
# "720 65536 1048576"), each a regular polygon through the unit circle, placed by the case's
# scale.
set -u -o pipefail
kedr=${KEDR:-build/kedr}
backend=${BACKEND:-cuda}
steps=${STEPS:-200}
levels=${LEVELS:-3 6 8}
shape=${SHAPE:-sphere}
points=${POINTS:-720 65536 1048576}
case $shape in sphere | circle) ;; *) echo "dsmc-stl.sh: SHAPE must be sphere or circle (got '$shape')" >&2; exit 2 ;; esac
ppc=${PPC:-}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
[ -x "$kedr" ] || { echo "dsmc-stl.sh: $kedr not found (build kedr or set KEDR)" >&2; exit 2; }
cases=$(cd cases/dsmc && pwd)
base=$([ "$shape" = sphere ] && echo sphere-3d.ini || echo cylinder-ar-m10.ini)
echo "dsmc-stl.sh: $backend, $steps steps of $base${ppc:+ with $ppc molecules a cell}, commit ${KEDR_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}"
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
# the edits of every case: the species file's path, and the molecules a cell when PPC is set
edits=(-e "s|^file = species.ini|file = $cases/species.ini|")
[ -n "$ppc" ] && edits+=(-e "s|^particles_per_cell = .*|particles_per_cell = $ppc|")
sed "${edits[@]}" "$cases/$base" >"$out/builtin.ini"
run built-in "$out/builtin.ini" || exit 1
if [ "$shape" = sphere ]; then
    for l in $levels; do
        python3 scripts/dsmc/icosphere.py "$l" "$out/ico$l.stl" >/dev/null || { rc=1; continue; }
        sed -e "s|^file = sphere-stl.stl|file = $out/ico$l.stl|" "${edits[@]}" \
            "$cases/sphere-stl.ini" >"$out/ico$l.ini"
        run "icosphere $((20 * 4 ** l)) triangles" "$out/ico$l.ini" || rc=1
    done
else
    for np in $points; do
        awk -v n="$np" 'BEGIN { pi = atan2(0, -1); for (i = 0; i < n; i++)
            printf "%.17g %.17g\n", cos(2 * pi * i / n), sin(2 * pi * i / n) }' >"$out/circle$np.txt"
        sed -e "s|^file = cylinder-720.txt|file = $out/circle$np.txt|" "${edits[@]}" \
            "$cases/cylinder-outline.ini" >"$out/circle$np.ini"
        run "outline of $np points" "$out/circle$np.ini" || rc=1
    done
fi
exit $rc
