#!/usr/bin/env bash
# Two versions of the primitives side by side on one GPU in one run: builds a base tree and this
# tree in build folders of their own, then runs `kedr bench prim` and `kedr bench tridiag` with
# each, alternating base and this tree ROUNDS times, and prints for every benchmark row the
# ratio to CUB (prim) or cuSPARSE (tridiag) of each run, their medians and the change. Both
# versions meet the same reference in the same run, so the GPU's drift between separate runs
# (clocks, temperature) mostly cancels.
#
#   BASE=e59f343 bench/prim-ab.sh           base from this checkout's git history
#   BASE=/path/to/tree bench/prim-ab.sh     base from a source tree (a copy without .git:
#                                           git archive --prefix=ab-base/ e59f343 | tar -x)
#
# From the repository root (the tree built as "this"). Environment: BASE (required), OUT
# (folder for builds and logs, default ./build-ab), ROUNDS (default 2), N (prim elements,
# default 2^28, the size bench/README.md reports), REPEATS (default 10), ONLY (prim benchmarks,
# default those with a CUB reference), TRI_N (default 2^24), TRI_LENGTHS (default 64,256,1024),
# JOBS (build jobs, default all cores), THIS_BUILD (a build folder of this tree to reuse, such
# as build after the tests; default OUT/build-this), BACKEND (default cuda; cpu: a dry run of
# the script on a machine without a GPU, LAPACK the only reference). Meant to take about 4
# minutes on one H100 with 16 cores, the two builds about half of it (not yet timed on a GPU:
# the script prints each phase's seconds; N=2^27 or ROUNDS=1 shorten it). Rerunning with the
# same OUT rebuilds only what changed.
set -u -o pipefail

base=${BASE:?set BASE to the base commit or a base source tree}
out=${OUT:-build-ab}
rounds=${ROUNDS:-2} n=${N:-2^28} repeats=${REPEATS:-10}
only=reduce,scan,select,partition,histogram,sort_keys,sort_pairs,sort_keys_u64,counting_sort
only=${ONLY:-$only,reduce_by_key,rle}
tri_n=${TRI_N:-2^24} tri_lengths=${TRI_LENGTHS:-64,256,1024}
jobs=${JOBS:-$(nproc)}
backend=${BACKEND:-cuda}
cuda=$([ "$backend" = cuda ] && echo ON || echo OFF)
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
start=$SECONDS

# The base sources: a tree as given, or the commit's files from git.
if [ -d "$base" ]; then
    base_src=$(cd "$base" && pwd)
    base_name=$(basename "$base_src")
else
    if ! base_name=$(git rev-parse --short "$base^{commit}" 2>/dev/null); then
        echo "prim-ab.sh: BASE '$base' is neither a folder nor a commit of this checkout" >&2
        exit 2
    fi
    base_src=$out/src-$base_name
    if [ ! -d "$base_src" ]; then
        mkdir -p "$base_src.tmp" && git archive "$base_name" | tar -x -C "$base_src.tmp" &&
            mv "$base_src.tmp" "$base_src" || exit 2
    fi
fi
this_name=$(git rev-parse --short HEAD 2>/dev/null || echo this)

# A build folder already configured (THIS_BUILD=build after the tests) is only brought up to
# date; a new one is configured for Release and sm_90.
build() { # name source-folder build-folder
    echo "== build $1 ($2 in $3)"
    local t=$SECONDS
    if ! { { [ -f "$3/CMakeCache.txt" ] || cmake -S "$2" -B "$3" -DCMAKE_BUILD_TYPE=Release \
        -DKEDR_CUDA="$cuda" -DCMAKE_CUDA_ARCHITECTURES=90 -DKEDR_MPI=OFF; } &&
        cmake --build "$3" -j"$jobs" --target kedr_cli; } > "$out/build-$1.log" 2>&1 ||
        [ ! -x "$3/kedr" ]; then
        echo "prim-ab.sh: the $1 build failed; see $out/build-$1.log" >&2
        tail -n 30 "$out/build-$1.log" >&2
        exit 1
    fi
    echo "built in $((SECONDS - t)) s"
}
this_build=${THIS_BUILD:-$out/build-this}
build base "$base_src" "$out/build-base"
build this "$PWD" "$this_build"

# Runs one version once; a failed benchmark is reported and counted but the runs go on.
failed=0
run() { # name round
    local k=$out/build-base/kedr t=$SECONDS
    [ "$1" = base ] || k=$this_build/kedr
    KEDR_COMMIT=$1 "$k" bench prim --backend "$backend" --n "$n" --repeats "$repeats" \
        --only "$only" > "$out/prim-$1-$2.txt" 2>&1 ||
        { echo "prim-ab.sh: bench prim ($1, round $2) failed" >&2; failed=1; }
    KEDR_COMMIT=$1 "$k" bench tridiag --backend "$backend" --n "$tri_n" --lengths "$tri_lengths" \
        --repeats "$repeats" > "$out/tridiag-$1-$2.txt" 2>&1 ||
        { echo "prim-ab.sh: bench tridiag ($1, round $2) failed" >&2; failed=1; }
    echo "ran $1, round $2, in $((SECONDS - t)) s"
}
for r in $(seq 1 "$rounds"); do
    run base "$r"
    run this "$r"
done
head -n 1 "$out/prim-this-1.txt"

# Rows "version|round|benchmark|ratio": prim rows end with CUB ms and the ratio (8 fields);
# tridiag rows with the reference's ms and the ratio, last (11 fields; 13 since the copy and the
# reference's Gunk/s columns).
for v in base this; do
    for r in $(seq 1 "$rounds"); do
        awk -v v="$v" -v r="$r" 'NF == 8 && $2 ~ /^[0-9]+$/ && $8 ~ /^[0-9.]+$/ {
            printf "%s|%s|%s n=%s|%s\n", v, r, $1, $2, $8 }' "$out/prim-$v-$r.txt"
        awk -v v="$v" -v r="$r" '($1 == "contiguous" || $1 == "interleaved") &&
            (NF == 11 || NF == 13) && $NF ~ /^[0-9.]+$/ {
            printf "%s|%s|tridiag %s %s%s n=%s|%s\n", v, r, $1, $2,
                   $3 == "yes" ? " cyclic" : "", $4, $NF }' \
            "$out/tridiag-$v-$r.txt"
    done
done > "$out/ratios.txt"

echo
echo "Ratio to the reference (CUB for prim, cuSPARSE for tridiag; above 1: faster than it), each"
echo "round, then the medians; change: this tree's median over the base's, minus 1."
echo "base = $base_name, this = $this_name, $rounds rounds, prim n = $n, tridiag $tri_n unknowns"
awk -F'|' -v rounds="$rounds" '
    function median(s,   a, m, i, j, t) {
        m = split(s, a, " ")
        for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    !($3 in seen) { seen[$3] = 1; order[++rows] = $3 }
    { all[$1, $3] = all[$1, $3] " " $4 }
    END {
        printf "%-44s %-22s %-22s %7s %7s %8s\n", "benchmark", "base", "this", "base", "this",
               "change"
        for (i = 1; i <= rows; i++) {
            b = all["base", order[i]]; t = all["this", order[i]]
            if (b == "" || t == "") {
                printf "%-44s %s\n", order[i], "missing in one version"
                continue
            }
            mb = median(b); mt = median(t)
            sub(/^ /, "", b); sub(/^ /, "", t)
            printf "%-44s %-22s %-22s %7.2f %7.2f %+7.1f%%\n", order[i], b, t, mb, mt,
                   100 * (mt / mb - 1)
        }
    }' "$out/ratios.txt"
echo
echo "full outputs in $out (prim-VERSION-ROUND.txt, tridiag-VERSION-ROUND.txt)"
echo "$((SECONDS - start)) s in all"
exit $failed
