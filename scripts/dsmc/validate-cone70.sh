#!/usr/bin/env bash
# Validation run of the SR3 70-degree blunted cone (set 1): runs cases/dsmc/cone70-sr3.ini (3D,
# body from cone70.stl) and cases/dsmc/cone70-sr3-axi.ini (axisymmetric, body from its outline)
# with `kedr dsmc`, then scripts/dsmc/compare_cone70.py on each, and prints a short summary.
#
#   scripts/dsmc/validate-cone70.sh
#
# Environment:
#   KEDR     the kedr binary (default build/kedr)
#   BACKEND  cuda (default), cpu or auto
#   OUT      output directory (default cone70-validate-out); each variant in OUT/3d, OUT/axi,
#            with its full log (run.log), the surface (3D: .vtp; axisymmetric: .csv and .vtp),
#            the fields (3D: .vti; axisymmetric: .csv and .vti) and the binned profile
#   VARIANT  both (default), 3d or axi
#   ALPHA    incidence in degrees (default 0; 0 <= ALPHA <= 30): the 3D case with the freestream
#            turned by ALPHA in the x-y plane (towards +y, so the windward meridian is the body's
#            -y side), compared on that meridian with the measured heat flux at 10, 20 and 30
#            degrees; the axisymmetric variant has no incidence (VARIANT=both runs 3d alone)
#   SMALL=1  a shrunken run for 2 cpu cores (coarse cells, fewer particles and steps; about a
#            minute or two): proves the chain, not the validation
# The GPU to use is the caller's (CUDA_VISIBLE_DEVICES). Full size: 8.4e7 particles x 2400 steps
# (3D, 10.4 GB) and 8e6 x 10000 (axisymmetric): 2.8e11 particle-steps, estimated 2 to 3 minutes
# on one H100 in all (at 2e9 to 3.5e9 particle-steps/s; not yet measured).
# Exit status: non-zero when a run fails or the comparison finds its files missing or malformed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
KEDR=${KEDR:-$root/build/kedr}
BACKEND=${BACKEND:-cuda}
OUT=${OUT:-cone70-validate-out}
VARIANT=${VARIANT:-both}
SMALL=${SMALL:-0}
ALPHA=${ALPHA:-0}
cases=$root/cases/dsmc

case $VARIANT in both | 3d | axi) ;; *) echo "validate-cone70.sh: VARIANT must be both, 3d or axi (got '$VARIANT')" >&2; exit 2 ;; esac
case $SMALL in 0 | 1) ;; *) echo "validate-cone70.sh: SMALL must be 0 or 1 (got '$SMALL')" >&2; exit 2 ;; esac
if ! [[ $ALPHA =~ ^[0-9]+([.][0-9]+)?$ ]] || ! awk -v a="$ALPHA" 'BEGIN { exit !(a <= 30) }'; then
    echo "validate-cone70.sh: ALPHA must be a number of degrees from 0 to 30 (got '$ALPHA')" >&2
    exit 2
fi
incidence=$(awk -v a="$ALPHA" 'BEGIN { print (a > 0) }')
if [ "$incidence" = 1 ]; then
    [ "$VARIANT" = axi ] && { echo "validate-cone70.sh: ALPHA=$ALPHA: the axisymmetric variant has no incidence (VARIANT=3d)" >&2; exit 2; }
    [ "$VARIANT" = both ] && echo "ALPHA=$ALPHA: the 3D variant alone (the axisymmetric one has no incidence)"
    VARIANT=3d
fi
[ -x "$KEDR" ] || { echo "validate-cone70.sh: no kedr binary at $KEDR (set KEDR)" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# SMALL: copies of the case files with coarser grids in OUT/small (the surface and species files
# beside them, as the case files name them relative to their own directory)
if [ "$SMALL" = 1 ]; then
    dir=$OUT/small
    mkdir -p "$dir"
    cp "$cases/species.ini" "$cases/cone70.stl" "$cases/cone70-outline.txt" "$dir/"
    sed -e 's/^nx = 210$/nx = 42/' -e 's/^ny = 200$/ny = 40/' -e 's/^nz = 200$/nz = 40/' \
        -e 's/^particles_per_cell = 10$/particles_per_cell = 5/' -e 's/^steps = 2400$/steps = 400/' \
        -e 's/^start = 1200$/start = 200/' -e 's/^stats_every = 200$/stats_every = 100/' \
        "$cases/cone70-sr3.ini" > "$dir/cone70-sr3.ini"
    sed -e 's/^nx = 1050$/nx = 210/' -e 's/^ny = 500$/ny = 100/' \
        -e 's/^particles_per_cell = 15$/particles_per_cell = 10/' -e 's/^steps = 10000$/steps = 1200/' \
        -e 's/^start = 5000$/start = 600/' -e 's/^stats_every = 1000$/stats_every = 250/' \
        "$cases/cone70-sr3-axi.ini" > "$dir/cone70-sr3-axi.ini"
    # every substitution must have taken (a case file edited since would leave one out)
    for want in "cone70-sr3.ini:nx = 42" "cone70-sr3.ini:ny = 40" "cone70-sr3.ini:nz = 40" \
        "cone70-sr3.ini:particles_per_cell = 5" "cone70-sr3.ini:steps = 400" \
        "cone70-sr3.ini:start = 200" "cone70-sr3-axi.ini:nx = 210" "cone70-sr3-axi.ini:ny = 100" \
        "cone70-sr3-axi.ini:particles_per_cell = 10" "cone70-sr3-axi.ini:steps = 1200" \
        "cone70-sr3-axi.ini:start = 600"; do
        if ! grep -qx "${want#*:}" "$dir/${want%%:*}"; then
            echo "validate-cone70.sh: SMALL could not set '${want#*:}' in ${want%%:*}" >&2
            exit 1
        fi
    done
    cases=$dir
fi

# ALPHA: a copy of the 3D case (in OUT/alpha-ALPHA, with the files it names) whose freestream
# velocity is turned by ALPHA degrees towards +y, and its output directory named after it
three=cone70-sr3.ini
if [ "$incidence" = 1 ]; then
    dir=$OUT/alpha-$ALPHA
    mkdir -p "$dir"
    cp "$cases/species.ini" "$cases/cone70.stl" "$dir/"
    awk -v a="$ALPHA" '
        /^velocity_x = / { u = substr($0, 14) + 0; t = a * atan2(0, -1) / 180
                           printf "velocity_x = %.10g\nvelocity_y = %.10g\n", u * cos(t), u * sin(t); n++; next }
        /^dir = / { print $0 "-alpha" a; next }
        { print }
        END { if (n != 1) exit 1 }' "$cases/cone70-sr3.ini" > "$dir/cone70-sr3.ini" ||
        { echo "validate-cone70.sh: could not turn the freestream of $cases/cone70-sr3.ini" >&2; exit 1; }
    cases=$dir
fi

status=0
run() { # run VARIANT CASE SURFACE-EXTENSION
    local v=$1 ini=$cases/$2 name=${2%.ini} ext=$3
    local out=$OUT/$v
    [ "$incidence" = 1 ] && out=$OUT/$v-alpha$ALPHA
    mkdir -p "$out"
    echo "== $v: $(basename "$ini") on $BACKEND$([ "$SMALL" = 1 ] && echo ', SMALL (cpu-size, not the validation)')"
    local t0=$SECONDS
    local rc=0
    "$KEDR" dsmc "$ini" --backend "$BACKEND" --out "$out" > "$out/run.log" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        echo "kedr dsmc failed (exit status $rc; log $out/run.log); its last lines:"
        tail -n 15 "$out/run.log"
        status=1
        return
    fi
    grep -E '^(kedr dsmc|estimate:|start:|steady|body 1:|mean collision|wall time)' "$out/run.log" || true
    echo "($((SECONDS - t0)) s in all)"
    if ! python3 "$here/compare_cone70.py" "$out/$name-surface.$ext" --log "$out/run.log" \
        --profile "$out/profile.csv" --label "kedr $v" --alpha "$ALPHA"; then
        status=1
    fi
}

# the 3D case writes its surface as .vtp only (no CSV of its 8.4 million cells)
[ "$VARIANT" = axi ] || run 3d cone70-sr3.ini vtp
[ "$VARIANT" = 3d ] || run axi cone70-sr3-axi.ini csv
exit $status
