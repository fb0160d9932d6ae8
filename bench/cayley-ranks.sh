#!/usr/bin/env bash
# The dense Cayley search over MPI ranks on the GPUs of one host (docs/cayley.md, "Over MPI
# ranks"): each case on one GPU without MPI (the reference, when it fits), over the GPUs of the
# host in one process (--devices all, NVLink), and under mpirun on each rank count of RANKS, one
# GPU a rank. Prints a row a run: seconds, edge visits/s, the products sent between the ranks
# and the slowest rank's time in messages (KEDR_LOG=info), the diameter, and whether the growth
# function equals the reference's (the first run of the case that finished).
#
#   bench/cayley-ranks.sh                          (from the repository root, after a cuda build)
#   RANKS="2 4" CASES="burnside:17 pancake:14" bench/cayley-ranks.sh
#   CASES="pancake:15" RANKS=4 TIMEOUT=2400 bench/cayley-ranks.sh   (4 x H200: 327 GB of codes)
#
# Environment: KEDR (default build/kedr), CASES (default "burnside:16 burnside:16+inv
# burnside:17 pancake:13"; a +inv suffix adds --inverses; pancake:14, burnside:17+inv and, on 4
# H200s, pancake:15 take minutes a run), RANKS (default "2 4", rank counts above the host's GPU
# count are skipped), TIMEOUT (seconds a run, default 300),
# BACKEND (cuda), MPIRUN (mpirun), MPIRUN_FLAGS, OUT (results folder; default a temporary one:
# each run's JSON and log). Memory a rank: `kedr cayley GROUP --dry-run --ranks N`.
set -u -o pipefail

kedr=${KEDR:-build/kedr}
cases=${CASES:-burnside:16 burnside:16+inv burnside:17 pancake:13}
ranks=${RANKS:-2 4}
timeout_s=${TIMEOUT:-300}
backend=${BACKEND:-cuda}
mpirun=${MPIRUN:-mpirun}
flags=${MPIRUN_FLAGS:-}
[ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if [ ! -x "$kedr" ]; then
    echo "cayley-ranks.sh: $kedr: not found (build kedr, or set KEDR)" >&2
    exit 2
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "$backend" = cpu ] && gpus=$(nproc --all)
echo "cayley-ranks.sh: $backend, $gpus GPUs (or cores), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%FT%TZ)"
printf '%-18s %-12s %9s %12s %12s %10s %5s %s\n' case run seconds "visits/s" "sent" "msg s" diam growth

growth_of() { # JSON -> its growth array on one line
    tr -d '\n ' < "$1" | sed -n 's/.*"growth":\[\([0-9,]*\)\].*/\1/p'
}

rc=0
for c in $cases; do
    group=${c%+inv}
    inv=""
    [ "$group" != "$c" ] && inv="--inverses"
    tag=$(echo "$c" | tr ':+,' '___')
    ref=""
    runs="one devices"
    for n in $ranks; do
        [ "$n" -le "$gpus" ] && runs="$runs np$n"
    done
    for run in $runs; do
        json="$out/$tag-$run.json" log="$out/$tag-$run.log"
        case $run in
        one) cmd=("$kedr" cayley "$group" $inv --backend "$backend" -q --json "$json") ;;
        devices)
            [ "$backend" = cuda ] && [ "$gpus" -gt 1 ] || continue
            cmd=("$kedr" cayley "$group" $inv --backend cuda --devices all -q --json "$json") ;;
        np*) cmd=("$mpirun" -np "${run#np}" $flags -x KEDR_LOG=info "$kedr" cayley "$group" $inv
                  --backend "$backend" -q --json "$json") ;;
        esac
        start=$(date +%s.%N)
        KEDR_LOG=info timeout "$timeout_s" "${cmd[@]}" > "$log" 2>&1
        status=$?
        wall=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
        if [ $status -ne 0 ] || [ ! -s "$json" ]; then
            why=$(grep -m1 -E 'needs|error|fail' "$log" | cut -c1-100)
            [ $status -eq 124 ] && why="timed out after $timeout_s s"
            printf '%-18s %-12s %9s %s\n' "$c" "$run" "-" "${why:-exit $status}"
            [ "$run" = one ] || [ $status -eq 124 ] || rc=1
            continue
        fi
        secs=$(sed -n 's/^time *\([0-9.]*\) s, \([0-9.e+]*\) edge.*/\1/p' "$log")
        rate=$(sed -n 's/^time *\([0-9.]*\) s, \([0-9.e+]*\) edge.*/\2/p' "$log")
        sent=$(sed -n 's/.* \([0-9.e+]*\) products sent.*/\1/p' "$log")
        msg=$(sed -n 's/.*up to \([0-9.]*\) s a rank in the messages.*/\1/p' "$log")
        diam=$(sed -n 's/^diameter *\([0-9]*\)/\1/p' "$log")
        g=$(growth_of "$json")
        if [ -z "$ref" ]; then
            ref=$g
            same="(reference)"
        elif [ "$g" = "$ref" ]; then
            same="same"
        else
            same="DIFFERS"
            rc=1
        fi
        printf '%-18s %-12s %9s %12s %12s %10s %5s %s (wall %.1f s)\n' "$c" "$run" "${secs:--}" \
            "${rate:--}" "${sent:--}" "${msg:--}" "${diam:--}" "$same" "$wall"
        # docs/cayley.md's rule: a rank of B_18 over 8 sends about 3.0 times the products of a
        # rank of B_17 over 4 and expands 2.5 times the elements
        if [ "$group" = burnside:17 ] && [ "$run" = np4 ] && [ -n "$secs" ] && [ -n "$msg" ]; then
            awk -v t="$secs" -v m="$msg" -v inv="$inv" 'BEGIN { printf "  -> burnside:18%s over 8 ranks of these GPUs (if they held it): about %.0f s\n", inv == "" ? "" : " --inverses", 3.0 * m + 2.5 * (t - m) }'
        fi
    done
done
echo "cayley-ranks.sh: results in $out"
exit $rc
