#!/usr/bin/env bash
# compute-sanitizer over the test programs on the cuda back end (docs/reliability.md): memcheck
# (out-of-bounds and misaligned accesses, device leaks), racecheck (shared-memory hazards),
# synccheck (barriers) and initcheck (reads of device memory never written), each test program
# under each tool with KEDR_BACKEND=cuda and its quick sizes (KEDR_TEST_QUICK=1, tests/test_util.h).
# From the repository root, on a GPU machine:
#
#   OUT=/some/dir bench/sanitize-gpu.sh                   every test program, every tool
#   TOOLS="racecheck" PROGRAMS="test_select" RUNS= bench/sanitize-gpu.sh
#   PROGRAMS= bench/sanitize-gpu.sh                       only the kedr runs (RUNS below)
#
# Builds as bench/gpu.sh does (Release, -lineinfo; nothing to do after `bench/gpu.sh test`).
# Prints a line per program and tool: its errors or hazards, or TIMEOUT (the program ran past
# KEDR_SAN_TIMEOUT seconds, default 100: not a finding), or SKIPPED (the phase's time,
# KEDR_SAN_BUDGET seconds, default 360, was spent), and the seconds it took; KEDR_SAN_JOBS runs
# (default 2) share the GPU at once. $OUT (default ./gpu-out) receives sanitize-summary.txt and
# sanitize/TOOL-PROGRAM.log. The exit status is non-zero when a tool reported anything or a test
# failed under it. About 8 minutes on one H100 with 16 cores: the build (2 to 3 minutes; none
# after bench/gpu.sh), then 6 minutes at most.
set -u -o pipefail

out=${OUT:-gpu-out}
tools=${TOOLS:-memcheck racecheck synccheck initcheck}
limit=${KEDR_SAN_TIMEOUT:-100}
budget=${KEDR_SAN_BUDGET:-360}
jobs=${KEDR_SAN_JOBS:-2}
mkdir -p "$out/sanitize" || exit 1
export KEDR_COMMIT=${KEDR_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$san" ] || { echo "compute-sanitizer not found" >&2; exit 1; }

echo "== build (commit $KEDR_COMMIT)"
start=$SECONDS
{
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DKEDR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
        cmake --build build -j16
} >"$out/sanitize/build.log" 2>&1 || { tail -n 40 "$out/sanitize/build.log" >&2; exit 1; }
echo "built in $((SECONDS - start)) s"

programs=${PROGRAMS-$(cd build && ls test_* | grep -v '\.' | sort)}
# Short runs of the kedr program that reach every module kernel in a few launches each, where
# the module's test programs take many minutes under a tool (thousands of steps and searches):
# 30 steps of each shipped DSMC case (and of sphere-3d on a coarse grid, tests/sanitizers/, for
# racecheck), the searches of small groups in both modes, and one call
# of each sort and selection benchmark at 2^20 elements. RUNS overrides the list.
runs_default="$(for c in $(grep -l "^\[domain\]" cases/dsmc/*.ini); do c=${c##*/}; echo "dsmc:${c%.ini}"; done)
dsmc:sphere-3d-small cayley:pancake:8:dense cayley:burnt-pancake:6:dense cayley:lrx:8:dense cayley:abelian:6,10,15:dense
cayley:burnside:6:auto cayley:pancake:7:sparse cayley:cube2:sparse bench:sort_keys,sort_pairs,sort_keys_u64
bench:select,partition"
kruns=${RUNS-$runs_default}
# The order of the runs, most wanted first: every tool over the primitives' programs (the kernels
# that share memory within blocks), then memcheck and racecheck over the modules' programs, then
# the other tools over those.
runs=$(for pass in 0 1 2; do
    for prog in $programs; do
        module=0
        [[ $prog == test_dsmc* || $prog == test_cayley* ]] && module=1
        for tool in $tools; do
            early=0
            [[ $tool == memcheck || $tool == racecheck ]] && early=1
            if { [ $pass = 0 ] && [ $module = 0 ]; } ||
                { [ $pass = 1 ] && [ $module = 1 ] && [ $early = 1 ]; } ||
                { [ $pass = 2 ] && [ $module = 1 ] && [ $early = 0 ]; }; then
                echo "$tool:$prog"
            fi
        done
    done
done
for tool in $tools; do
    for r in $kruns; do
        echo "$tool:$r"
    done
done)

export KEDR_BACKEND=cuda KEDR_TEST_QUICK=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
phase_start=$SECONDS

# One program under one tool; writes its summary line to sanitize/TOOL-PROGRAM.res.
check() {
    local tool=$1 prog=$2 tag=${2//[:,]/_}
    local log=$out/sanitize/$tool-$tag.log res=$out/sanitize/$tool-$tag.res
    local left=$((budget - (SECONDS - phase_start)))
    if [ "$left" -le 5 ]; then
        printf '%-40s %-10s SKIPPED\n' "$prog" "$tool" >"$res"
        cat "$res"
        return
    fi
    local t=$limit t0=$SECONDS opts=()
    [ "$left" -lt "$t" ] && t=$left
    # The library checks every CUDA call and the tests provoke some failures on purpose (a
    # 2^62-byte allocation): a CUDA call that returns an error is the program's to handle, not a
    # finding. Memory errors, leaks and hazards are.
    [ "$tool" = memcheck ] && opts=(--leak-check full --report-api-errors no)
    # A test program, or one of the kedr runs above (dsmc:CASE, cayley:GROUP:MODE, bench:LIST).
    local argv=("./$prog")
    case $prog in
    dsmc:*)
        local case=../cases/dsmc/${prog#dsmc:}.ini
        [ -f "build/$case" ] || case=../tests/sanitizers/${prog#dsmc:}.ini
        argv=(./kedr dsmc "$case" --steps 30 --sample-start 15 --backend cuda
            --out "san-out/$tool-${prog#dsmc:}") ;;
    cayley:*)
        local spec=${prog#cayley:}
        argv=(./kedr cayley "${spec%:*}" --mode "${spec##*:}" --backend cuda) ;;
    bench:*) argv=(./kedr bench prim --backend cuda --n 1M --repeats 1 --only "${prog#bench:}") ;;
    esac
    (cd build && timeout -k 10 "$t" "$san" --tool "$tool" "${opts[@]}" --print-limit 20 \
        --error-exitcode 99 "${argv[@]}") >"$log" 2>&1
    local rc=$? took=$((SECONDS - t0)) verdict
    local errors hazards
    errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+$')
    hazards=$(grep -Eo 'RACECHECK SUMMARY: [0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+$')
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        verdict="TIMEOUT after $t s"
    elif grep -q 'terminated before first instrumented API call' "$log"; then
        verdict="no GPU work"
        grep -Eq ' passed, 0 failed' "$log" && rc=0 # the tool's own 255 for a cpu-only program
    elif [ "$tool" = racecheck ] && [ -n "$hazards" ]; then
        verdict="$hazards hazards"
    elif [ -n "$errors" ]; then
        verdict="$errors errors"
    else
        verdict="no summary (exit $rc)"
    fi
    # the test's own verdict: its last "N passed, N failed" line
    local tests
    tests=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    [ $rc -ne 0 ] && [ $rc -ne 99 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] &&
        verdict="$verdict, test FAILED (exit $rc)"
    printf '%-40s %-10s %-30s %4d s  %s\n' "$prog" "$tool" "$verdict" "$took" "${tests:-}" >"$res"
    cat "$res"
}

echo "== compute-sanitizer ($tools) over $(echo $programs | wc -w) programs," \
    "$jobs at a time, ${limit} s each at most, ${budget} s in all"
for run in $runs; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n
    done
    check "${run%%:*}" "${run#*:}" &
done
wait
echo "sanitizers took $((SECONDS - phase_start)) s"

summary=$out/sanitize-summary.txt
{
    echo "# compute-sanitizer, commit $KEDR_COMMIT, $(date -u +%Y-%m-%dT%H:%MZ)," \
        "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)," \
        "$("$san" --version | grep -Eo 'Version [^ ]+' | head -n 1)"
    for prog in $programs $kruns; do
        for tool in $tools; do
            cat "$out/sanitize/$tool-${prog//[:,]/_}.res"
        done
    done
} >"$summary"
# every line but the clean ones, the timeouts and the skipped runs
clean=' (0 errors|0 hazards|no GPU work|SKIPPED|TIMEOUT after [0-9]+ s)( |$)'
found=$(grep -Ev '^#' "$summary" | grep -Ecv "$clean" || true)
timeouts=$(grep -c TIMEOUT "$summary" || true)
skipped=$(grep -c SKIPPED "$summary" || true)
echo "== summary ($summary): $found with findings or failures, $timeouts timeouts, $skipped skipped"
grep -Ev '^#' "$summary" | grep -Ev "$clean"
[ "$found" -eq 0 ]
