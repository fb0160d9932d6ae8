#!/usr/bin/env bash
# The flow validations that need a GPU (docs/validation.md, "Incompressible flow"): the sphere at
# Re 100 (cases/flow/sphere_re100.ini) and the unconfined cylinder at Re 100
# (cases/flow/cylinder_re100.ini) on refined grids, each run on a GPU of its own, then the
# drag of the sphere (mean over the last quarter of the run) and the cylinder's Strouhal number,
# mean drag and lift amplitude (tests/validation/cylinder_forces.py, from t = 150).
#
#   scripts/flow/validate.sh                       (from the repository root, kedr built in build/)
#   RUNS="sphere:12 sphere:16 cylinder:20 cylinder:40" GPUS="0 1 2 3" scripts/flow/validate.sh
#
# RUNS: CASE:N, N the cells across the body's diameter (sphere: 16 is the case as shipped, the
# grid scaled by N/16; cylinder: 20 as shipped, scaled by N/20). Runs go to the GPUs of GPUS in
# turn, as many at once as there are GPUs. KEDR (default build/kedr), OUT (default
# validate-out), BACKEND (default cuda), TIMEOUT (seconds a run, default 1200).
set -u -o pipefail
kedr=${KEDR:-build/kedr}
out=${OUT:-validate-out}
runs=${RUNS:-sphere:12 sphere:16 cylinder:20 cylinder:40}
read -r -a gpus <<< "${GPUS:-0}"
backend=${BACKEND:-cuda}
tmo=${TIMEOUT:-1200}
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"

# CASE N -> the case file, its grid scaled to N cells across the body
variant() {
    local src k
    case "$1" in
    sphere) src=$here/cases/flow/sphere_re100.ini k=$(awk -v n="$2" 'BEGIN { print n / 16 }') ;;
    cylinder) src=$here/cases/flow/cylinder_re100.ini k=$(awk -v n="$2" 'BEGIN { print n / 20 }') ;;
    *) echo "validate.sh: RUNS: '$1': expected sphere or cylinder" >&2; return 1 ;;
    esac
    awk -v k="$k" '/^n[xyz] = / { printf "%s = %d\n", $1, $3 * k + 0.5; next } { print }' "$src" \
        > "$out/$1-$2.ini"
}

i=0
pids=()
for r in $runs; do
    c=${r%%:*} n=${r##*:}
    variant "$c" "$n" || exit 2
    g=${gpus[$((i % ${#gpus[@]}))]}
    (CUDA_VISIBLE_DEVICES=$g timeout "$tmo" "$kedr" flow "$out/$c-$n.ini" --backend "$backend" \
        --out "$out/$c-$n" > "$out/$c-$n.log" 2>&1
     echo "$c-$n: exit $? ($(tail -n 1 "$out/$c-$n.log"))") &
    pids+=($!)
    i=$((i + 1))
    if [ $((i % ${#gpus[@]})) = 0 ]; then
        wait "${pids[@]}"
        pids=()
    fi
done
[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"

for r in $runs; do
    c=${r%%:*} n=${r##*:}
    f=$(ls "$out/$c-$n"/*-"$c"*.csv 2>/dev/null | grep -v profiles | head -n 1)
    [ -n "$f" ] || { echo "$c at $n cells across: no force history"; continue; }
    if [ "$c" = sphere ]; then
        python3 - "$f" "$n" << 'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("cd")]
t = [float(r["time"]) for r in rows]
cd = [float(r["cd"]) for r in rows]
t1 = t[-1]
w = [c for s, c in zip(t, cd) if s >= 0.75 * t1]
print(f"sphere Re 100, {sys.argv[2]} cells across D: t = {t1:.1f}, cD = {sum(w) / len(w):.4f} "
      f"(mean over t >= {0.75 * t1:.1f}; last {cd[-1]:.4f}, change over the window "
      f"{max(w) - min(w):.1e})")
PY
    else
        echo "cylinder Re 100, $n cells across D:"
        python3 "$here/tests/validation/cylinder_forces.py" "$f" --from 150 --length 1 --velocity 1
    fi
done
