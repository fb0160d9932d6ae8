#!/usr/bin/env bash
# The immersed boundary's share of a step against the grid size on one GPU (the shape of the
# seed's Fig. 12.8): the fixed sphere of bench/flow-ranks.sh (D = 1 in a box of side 8, PCG +
# V-cycle) at N^3 cells for N in SIZES, and cases/flow/oscillating_cylinder.ini (its points
# moved and uploaded every step) with its grid scaled by each factor in SCALES. Each run has
# KEDR_FLOW_PROF=1 (a device synchronisation at each part of a step), and the row gives the
# step's milliseconds, the bodies' part of them ("bodies" in kedr flow's step by part: the
# right-hand sides, the force systems, the spreading and the forces), its share, the points and
# the force systems' CG iterations at the last step.
#
#   bench/flow-ibm-share.sh                                   (from the repository root, cuda build)
#   KEDR=build/kedr SIZES="64 128" SCALES="1 2" BACKEND=cpu bench/flow-ibm-share.sh
#
# Environment: KEDR (default build/kedr), SIZES (default "128 256 384 512"), SCALES (default
# "1 2 4"), STEPS (default 10), BACKEND (default cuda), OUT (scratch folder, default a
# temporary one).
set -u -o pipefail
kedr=${KEDR:-build/kedr}
sizes=${SIZES:-128 256 384 512}
scales=${SCALES:-1 2 4}
steps=${STEPS:-10}
backend=${BACKEND:-cuda}
out=${OUT:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
if [ ! -x "$kedr" ]; then
    echo "flow-ibm-share.sh: $kedr: not found (build kedr, or set KEDR)" >&2
    exit 2
fi
for v in $sizes $scales $steps; do
    case "$v" in
        '' | *[!0-9]* | 0)
            echo "flow-ibm-share.sh: '$v': expected a positive whole number" >&2
            exit 2
            ;;
    esac
done

# LOG CASE GRID -> a row (empty: the log lacks the lines)
row() {
    awk -v name="$2" -v grid="$3" '
        /^body .* points/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^points/) pts += $i }
        / bodies [0-9]+ it / { for (i = 1; i <= NF; i++) if ($i == "bodies") it = $(i + 1) }
        /step by part, ms a step:/ {
            sub(/.*ms a step: /, ""); n = split($0, part, ", ")
            for (i = 1; i <= n; i++) { split(part[i], kv, " "); total += kv[2]; if (kv[1] == "bodies") b = kv[2] }
            ok = 1 }
        END { if (ok) printf "%-22s %-14s %8d %12.2f %12.2f %7.1f %%  %6s\n", name, grid, pts, total, b, 100 * b / total, it == "" ? "-" : it }' "$1"
}

echo "kedr flow: the immersed boundary's share of a step, $backend, $steps steps, $(date -u +%F)"
command -v nvidia-smi > /dev/null && [ "$backend" = cuda ] && nvidia-smi -L | head -1
printf '%-22s %-14s %8s %12s %12s %9s  %6s\n' case grid points "ms a step" "ms bodies" share "CG it"
status=0
for n in $sizes; do
    KEDR=$kedr RANKS=1 N=$n STEPS=$steps SOLVERS=pcg+mg PROF=1 BACKEND=$backend OUT="$out/s$n" \
        "$here/flow-ranks.sh" > "$out/s$n.txt" 2>&1 || status=1
    log="$out/s$n/pcg+mg-gdefault-r1-one-f1-o1-p1.log"
    r=$([ -f "$log" ] && row "$log" "sphere (fixed)" "$n^3")
    [ -n "$r" ] && echo "$r" || { echo "flow-ibm-share.sh: the sphere at $n^3 failed (log: $out/s$n.txt)" >&2; status=1; }
done
src="$here/../cases/flow/oscillating_cylinder.ini"
nx=$(sed -n 's/^nx *= *//p' "$src")
ny=$(sed -n 's/^ny *= *//p' "$src")
for k in $scales; do
    sed "s/^nx *=.*/nx = $((nx * k))/; s/^ny *=.*/ny = $((ny * k))/" "$src" > "$out/cyl$k.ini"
    log="$out/cyl$k.log"
    KEDR_FLOW_PROF=1 "$kedr" flow "$out/cyl$k.ini" --backend "$backend" --steps "$steps" \
        --out "$out/cyl$k" > "$log" 2>&1 || status=1
    r=$(row "$log" "cylinder (oscillating)" "$((nx * k)) x $((ny * k))")
    [ -n "$r" ] && echo "$r" || { echo "flow-ibm-share.sh: the cylinder at scale $k failed (log: $log)" >&2; status=1; }
done
echo "logs: $out"
exit $status
