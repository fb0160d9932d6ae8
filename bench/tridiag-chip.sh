#!/usr/bin/env bash
# The batched tridiagonal kernels side by side: `kedr bench tridiag` once per algorithm at
# 2^24 unknowns a call (n = 32, 64, 256, 1024, 4096, 16384; f32 and f64; both layouts), then
# one compact table sorted by n, layout and type, each algorithm's row beside the others:
# G unknowns/s, fraction of copy bandwidth (for the bytes a solve must move: a, b, c, d read
# and x written once) and the ratio to cuSPARSE (gtsv2StridedBatch for contiguous systems,
# gtsvInterleavedBatch for interleaved; above 1 kedr is faster). The issue's goals: at least
# 2 times cuSPARSE and 0.7 of copy. auto is what AUTO picks (docs/prim.md says which kernel).
# Contiguous n = 16384 (and f64 from about 6000): chunked and auto run the streamed solver
# (a, b, c, d read twice: at most 5/9 of copy as counted here), partitioned and thomas the
# earlier AUTO choices (few systems; many). PERIODIC=1 adds the periodic register kernel (auto,
# interleaved n = 32; f64 from n = 16 only with LENGTHS=16,...) beside the tiles (thomas).
#
#   bench/tridiag-chip.sh build/kedr
#   ALGS="auto chunked" LENGTHS=1024,4096 PERIODIC=1 bench/tridiag-chip.sh build/kedr
#
# Argument: the kedr program (default build/kedr). Environment: ALGS (default "auto thomas
# pcr_thomas chunked cr_pcr partitioned"), LENGTHS (default 32,64,256,1024,4096,16384), N
# (unknowns a call, default 16777216), REPEATS (default 20), PERIODIC (1: the periodic rows too;
# cuSPARSE has none to compare), BACKEND (default cuda), OUT (folder for each run's full output,
# default a temporary one).
set -u -o pipefail

kedr=${1:-build/kedr}
algs=${ALGS:-auto thomas pcr_thomas chunked cr_pcr partitioned}
lengths=${LENGTHS:-32,64,256,1024,4096,16384}
n=${N:-16777216} repeats=${REPEATS:-20} periodic=${PERIODIC:-0} backend=${BACKEND:-cuda}
out=${OUT:-$(mktemp -d)}
if [ ! -x "$kedr" ]; then
    echo "tridiag-chip.sh: '$kedr' is not an executable kedr program (pass the built one)" >&2
    exit 2
fi
mkdir -p "$out" || exit 2
failed=0
for alg in $algs; do
    log="$out/$alg.txt"
    if ! KEDR_BACKEND=$backend "$kedr" bench tridiag --n "$n" --lengths "$lengths" \
        --repeats "$repeats" --algorithm "$alg" > "$log" 2>&1; then
        echo "tridiag-chip.sh: kedr bench tridiag --algorithm $alg failed (see $log):" >&2
        tail -3 "$log" >&2
        failed=1
    fi
done
head -2 "$out/$(set -- $algs; echo "$1").txt" 2>/dev/null
echo
# Rows of the bench's table: layout type cyc n systems ms Gunk/s GB/s copy of-copy ref-ms
# ref-Gunk/s vs-it, or
# layout type cyc n systems followed by the reason a row failed.
for alg in $algs; do
    awk -v alg="$alg" -v periodic="$periodic" '
        ($1 == "contiguous" || $1 == "interleaved") && $4 ~ /^[0-9]+$/ {
            if ($3 == "yes" && periodic != 1) next
            key = sprintf("%09d %s %s %s", $4, $1, $2, $3)
            if (NF >= 13 && $7 ~ /^[0-9.]+$/) # Gunk/s, of copy, vs it
                printf "%s|%s|%s|%s|%s\n", key, alg, $7, $10, $13
            else {
                $1 = $2 = $3 = $4 = $5 = ""
                sub(/^ +/, "")
                printf "%s|%s|failed: %s||\n", key, alg, $0
            }
        }' "$out/$alg.txt" 2>/dev/null
done | sort -t'|' -k1,1 -s | awk -F'|' '
    BEGIN { printf "%7s %-11s %-4s %-3s %-12s %8s %8s %9s\n", "n", "layout", "type", "cyc",
                   "algorithm", "Gunk/s", "of copy", "cuSPARSE" }
    {
        split($1, k, " ")
        if ($1 != last && NR > 1) print ""
        last = $1
        printf "%7d %-11s %-4s %-3s %-12s %8s %8s %9s\n", k[1], k[2], k[3], k[4], $2, $3, $4,
               $5
    }'
echo
echo "Gunk/s: 10^9 unknowns a second; of copy: bytes a solve must move (4 arrays read, 1"
echo "written) per second over the copy bandwidth; cuSPARSE: its time over kedr's (goal >= 2)."
echo "Full output of each algorithm in $out"
exit $failed
