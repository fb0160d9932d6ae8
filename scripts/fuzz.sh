#!/usr/bin/env bash
# The long fuzz campaign (docs/reliability.md): builds every harness of tests/fuzz for clang's
# libFuzzer with AddressSanitizer and UndefinedBehaviorSanitizer (cpu only), then runs each one
# for RUNS inputs on its own corpus, which grows from the harness's seeds and is kept between
# campaigns. Needs clang, its runtime and its OpenMP: `scripts/install-deps.sh --fuzz`.
#
#   scripts/fuzz.sh                  every harness, 10^6 inputs each
#   scripts/fuzz.sh -n 100000 ini    fuzz_ini only, 10^5 inputs
#
# Environment: FUZZ_BUILD (default build-fuzz), FUZZ_DIR (corpora and findings, default
# $FUZZ_BUILD/campaign), FUZZ_TIMEOUT (seconds an input may take, default 10), FUZZ_MALLOC_MB
# (largest allocation, default 2048), FUZZ_MAX_LEN (largest input, default 1048576 bytes, the
# seeded driver's limit). A finding is written to $FUZZ_DIR/findings/NAME-crash-... (or -leak-,
# -timeout-, -oom-); replay it with `$FUZZ_BUILD/fuzz_NAME FILE`. The exit status is non-zero
# when any harness found something.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=1000000
while getopts "n:h" opt; do
    case $opt in
    n) runs=$OPTARG ;;
    *)
        sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
    esac
done
shift $((OPTIND - 1))

build=${FUZZ_BUILD:-build-fuzz}
dir=${FUZZ_DIR:-$build/campaign}
cc=${FUZZ_CC:-$(command -v clang || command -v clang-14 || true)}
if [ -z "$cc" ]; then
    echo "fuzz.sh: clang not found; run scripts/install-deps.sh --fuzz" >&2
    exit 1
fi

echo "== build ($build, $cc)"
start=$SECONDS
# No MPI and no plots: one process, and only the readers under test in the harnesses.
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DKEDR_LIBFUZZER=ON -DKEDR_CUDA=OFF -DKEDR_MPI=OFF -DKEDR_PLOT=OFF \
    >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 1; }
harnesses=()
for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    harnesses+=("${name#fuzz_}")
done
if [ $# -gt 0 ]; then
    harnesses=("$@")
fi
targets=()
for h in "${harnesses[@]}"; do
    if [ ! -f "tests/fuzz/fuzz_$h.c" ]; then
        echo "fuzz.sh: no harness tests/fuzz/fuzz_$h.c" >&2
        exit 2
    fi
    targets+=(--target "fuzz_$h")
done
cmake --build "$build" -j "$(nproc)" "${targets[@]}" >"$build/build.log" 2>&1 ||
    { tail -n 40 "$build/build.log" >&2; exit 1; }
echo "built in $((SECONDS - start)) s"

mkdir -p "$dir/findings"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitizers/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for h in "${harnesses[@]}"; do
    corpus=$dir/corpus/$h
    mkdir -p "$corpus"
    echo "== fuzz_$h: $runs inputs, corpus $corpus ($(ls "$corpus" | wc -l) files)"
    start=$SECONDS
    # The corpus comes first: an empty one is filled with the harness's seeds (libfuzzer_seeds.c).
    if "$build/fuzz_$h" "$corpus" -runs="$runs" -timeout="${FUZZ_TIMEOUT:-10}" \
        -malloc_limit_mb="${FUZZ_MALLOC_MB:-2048}" -rss_limit_mb=4096 \
        -max_len="${FUZZ_MAX_LEN:-1048576}" -artifact_prefix="$dir/findings/$h-" \
        -print_final_stats=1 >"$dir/$h.log" 2>&1; then
        cov=$(grep -Eo 'cov: [0-9]+' "$dir/$h.log" | tail -n 1)
        files=$(ls "$corpus" | wc -l)
        echo "fuzz_$h: no finding in $((SECONDS - start)) s; $cov, corpus $files files"
    else
        failed+=("$h")
        echo "fuzz_$h: FINDING after $((SECONDS - start)) s (log $dir/$h.log):"
        grep -E "ERROR|SUMMARY|Test unit written" "$dir/$h.log" | head -n 5 | sed 's/^/  /'
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "== findings in: ${failed[*]} (inputs under $dir/findings)"
    exit 1
fi
echo "== no findings (${#harnesses[@]} harnesses, $runs inputs each)"
