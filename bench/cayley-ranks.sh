#!/usr/bin/env bash
# The dense Cayley search over MPI ranks on the GPUs of one host (docs/cayley.md, "Over MPI
# ranks"): each case on one GPU without MPI (the reference, when it fits), over the GPUs of the
# host in one process (--devices all, NVLink), and under mpirun on each rank count of RANKS, one
# GPU a rank. Prints a row a run: seconds, edge visits/s, the products sent between the ranks
# and the slowest rank's time in messages (KEDR_LOG=info), the diameter, and whether the growth
# function equals the reference's (the first run of the case that finished). For pancake:N and
# burnt-pancake:N every run is also checked against what is published (published_check below):
# that is the only check of pancake:15 and burnt-pancake:12, which no single GPU holds.
#
#   bench/cayley-ranks.sh                          (from the repository root, after a cuda build)
#   RANKS="2 4" CASES="burnside:17 pancake:14" bench/cayley-ranks.sh
#   CASES="pancake:14 pancake:15" RANKS=4 TIMEOUT=2400 bench/cayley-ranks.sh
#       (4 GPUs: pancake:14 on one GPU is the reference of its runs over ranks; pancake:15 needs
#       82.9 GB a rank over 4, `kedr cayley pancake:15 --dry-run --ranks 4`)
#   CASES="pancake:15 burnt-pancake:12" RANKS=4 RUNS=np TIMEOUT=2400 bench/cayley-ranks.sh
#       (only the runs over ranks: burnt-pancake:12 needs 124 GB a rank, 4 H200s)
#   CASES="pancake:14 burnside:17" RANKS=4 RUNS="devices np host" bench/cayley-ranks.sh
#       (the batches GPU to GPU against through host memory, KEDR_COMM_IPC=0)
#
# Environment: KEDR (default build/kedr), CASES (default "burnside:16 burnside:16+inv
# burnside:17 pancake:13"; a +inv suffix adds --inverses; pancake:14, burnside:17+inv and, on 4
# H200s, pancake:15 take minutes a run), RANKS (default "2 4", rank counts above the host's GPU
# count are skipped), RUNS (which runs: "one devices np", the default, or a part of it; "host"
# adds the runs over ranks with KEDR_COMM_IPC=0, the batches through host memory instead of GPU
# to GPU, as npNhost),
# TIMEOUT (seconds a run, default 300),
# BACKEND (cuda), MPIRUN (mpirun), MPIRUN_FLAGS, OUT (results folder; default a temporary one:
# each run's JSON and log). Memory a rank: `kedr cayley GROUP --dry-run --ranks N`.
set -u -o pipefail

kedr=${KEDR:-build/kedr}
cases=${CASES:-burnside:16 burnside:16+inv burnside:17 pancake:13}
ranks=${RANKS:-2 4}
timeout_s=${TIMEOUT:-300}
which=${RUNS:-one devices np}
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
printf '%-18s %-12s %9s %12s %12s %7s %10s %5s %s\n' case run seconds "visits/s" "sent" "share" "msg s" diam growth

growth_of() { # JSON -> its growth array on one line
    tr -d '\n ' < "$1" | sed -n 's/.*"growth":\[\([0-9,]*\)\].*/\1/p'
}

# What is published of the pancake graphs' growth, checked on every run of pancake:N and
# burnt-pancake:N (args: the case, its growth as "F0,F1,..."); prints what it checked, and
# returns 1 when something differs. Sources: the pancake numbers (diameters) n = 1..19, OEIS
# A058986 (n = 14 and 15: Kounoike, Kaneko & Shinano, ISPAN 2005; 16 and 17: Asai et al.,
# Euro-Par 2006; 18 and 19: Cibulka, Theoret. Comput. Sci. 412, 2011); the burnt pancake
# numbers n = 1..12, OEIS A078941 (11 and 12: Cibulka 2011); the sphere sizes of the pancake
# graph for k <= 3, n - 1, (n - 1)(n - 2) and (n - 1)(n - 2)^2 - 1 (the columns k = 1..3 of OEIS
# A092113, whose rows stop at n = 12; the whole distribution for n = 15 is not in the public
# record searched here); F sums to the order, n! or 2^n n!.
published_check() {
    local c=$1 g=$2
    awk -v c="$c" -v g="$g" 'BEGIN {
        split("0 1 3 4 5 7 8 9 10 11 13 14 15 16 17 18 19 20 22", pan, " ")
        split("1 4 6 8 10 12 14 15 17 18 19 21", burnt, " ")
        split(c, parts, ":"); fam = parts[1]; n = parts[2] + 0
        if ((fam != "pancake" && fam != "burnt-pancake") || c ~ /\+inv/) exit 3
        m = split(g, F, ","); D = m - 1; sum = 0
        for (i = 1; i <= m; i++) sum += F[i]
        order = 1; for (i = 2; i <= n; i++) order *= i
        if (fam == "burnt-pancake") order *= 2 ^ n
        bad = ""; what = "order"
        if (sum != order) bad = bad " sum " sum " (order " order ")"
        if (fam == "pancake") {
            if (n in pan) { what = what ", diameter " pan[n] " (A058986)"; if (D != pan[n]) bad = bad " diameter " D }
            if (n >= 4) {
                want[2] = n - 1; want[3] = (n - 1) * (n - 2); want[4] = (n - 1) * (n - 2) ^ 2 - 1
                what = what ", F(1..3) (A092113)"
                for (k = 2; k <= 4; k++) if (F[k] != want[k]) bad = bad " F(" k - 1 ") " F[k] " (want " want[k] ")"
            }
        } else {
            if (n in burnt) { what = what ", diameter " burnt[n] " (A078941)"; if (D != burnt[n]) bad = bad " diameter " D }
            if (F[2] != n) bad = bad " F(1) " F[2]
        }
        if (bad != "") { printf "  -> %s DIFFERS FROM THE PUBLISHED:%s\n", c, bad; exit 1 }
        printf "  -> %s agrees with the published %s\n", c, what; exit 0
    }'
}

rc=0
for c in $cases; do
    group=${c%+inv}
    inv=""
    [ "$group" != "$c" ] && inv="--inverses"
    tag=$(echo "$c" | tr ':+,' '___')
    ref=""
    runs=""
    for r in one devices; do
        case " $which " in *" $r "*) runs="$runs $r" ;; esac
    done
    for n in $ranks; do
        case " $which " in *" np "*) [ "$n" -le "$gpus" ] && runs="$runs np$n" ;; esac
        case " $which " in *" host "*) [ "$n" -le "$gpus" ] && runs="$runs np${n}host" ;; esac
    done
    for run in $runs; do
        json="$out/$tag-$run.json" log="$out/$tag-$run.log"
        case $run in
        one) cmd=("$kedr" cayley "$group" $inv --backend "$backend" -q --json "$json") ;;
        devices)
            [ "$backend" = cuda ] && [ "$gpus" -gt 1 ] || continue
            cmd=("$kedr" cayley "$group" $inv --backend cuda --devices all -q --json "$json") ;;
        np*host) n=${run#np}; n=${n%host}
            cmd=("$mpirun" -np "$n" $flags -x KEDR_LOG=info -x KEDR_COMM_IPC=0 "$kedr" cayley
                 "$group" $inv --backend "$backend" -q --json "$json") ;;
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
        share=$(sed -n 's/.*products sent to other ranks (\([0-9.e+]*\)% of.*/\1%/p' "$log")
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
        printf '%-18s %-12s %9s %12s %12s %7s %10s %5s %s (wall %.1f s)\n' "$c" "$run" \
            "${secs:--}" "${rate:--}" "${sent:--}" "${share:--}" "${msg:--}" "${diam:--}" "$same" \
            "$wall"
        published_check "$c" "$g"
        [ $? -eq 1 ] && rc=1
        # docs/cayley.md's rule: a rank of B_18 over 8 sends about 3.0 times the products of a
        # rank of B_17 over 4 and expands 2.5 times the elements
        if [ "$group" = burnside:17 ] && [ "$run" = np4 ] && [ -n "$secs" ] && [ -n "$msg" ]; then
            awk -v t="$secs" -v m="$msg" -v inv="$inv" 'BEGIN { printf "  -> burnside:18%s over 8 ranks of these GPUs (if they held it): about %.0f s\n", inv == "" ? "" : " --inverses", 3.0 * m + 2.5 * (t - m) }'
        fi
    done
done
echo "cayley-ranks.sh: results in $out"
exit $rc
