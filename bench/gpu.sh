#!/usr/bin/env bash
# Builds kedr on a GPU machine, runs the whole test suite on every back end and the primitive
# benchmarks. From the repository root:
#
#   OUT=/some/dir bench/gpu.sh            build, test, bench
#   OUT=/some/dir bench/gpu.sh test       build, test
#   OUT=/some/dir bench/gpu.sh bench      build, bench
#   OUT=/some/dir bench/gpu.sh multi      build, the cayley tests and burnside:14..16 timings
#                                         over every GPU of the host (KEDR_B17=1: and burnside:17,
#                                         KEDR_B17=inverses: with inverses;
#                                         KEDR_B17=kuznetsov: both sets in Kuznetsov's basis,
#                                         checked against his 55 and 34)
#   OUT=/some/dir bench/gpu.sh sanitize   build, compute-sanitizer over the test programs
#                                         (bench/sanitize-gpu.sh: about 8 minutes)
#   OUT=/some/dir bench/gpu.sh probe      build, every kedr probe measurement (probe-*.json)
#   OUT=/some/dir bench/gpu.sh modules    build, kedr bench adi, flow, render and tridiag
#                                         (adi.json, flow.json, render.json, tridiag.json)
#
# $OUT (default ./gpu-out) receives build.log, test.log, bench.log, prim-cuda.json,
# prim-cpu.json, dsmc-cuda.json, cayley-cuda.json and cayley-cpu.json. A failed test does not
# stop the benchmarks; the exit status is non-zero when
# the build, a test or a benchmark failed. About 5 minutes on one H100 with 16 cores.
set -u -o pipefail

out=${OUT:-gpu-out}
phases=${*:-test bench}
for p in $phases; do
    case $p in
    test | bench | dsmc | multi | sanitize | probe | modules) ;;
    *)
        echo "usage: bench/gpu.sh [test] [bench] [dsmc] [multi] [sanitize] [probe] [modules]   (default: test bench; the build always runs)" >&2
        exit 2
        ;;
    esac
done
has() { [[ " $phases " == *" $1 "* ]]; }
mkdir -p "$out" || exit 1
# The commit stamped in the JSON: set KEDR_COMMIT when the tree was copied without its own git
# history (a checkout's .git may name another commit than the files that came with it).
export KEDR_COMMIT=${KEDR_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}

echo "== build (commit $KEDR_COMMIT)"
start=$SECONDS
{
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DKEDR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
        cmake --build build -j16
} 2>&1 | tee "$out/build.log" | grep -E "warning|error|kedr [0-9]"
if [ "${PIPESTATUS[0]}" -ne 0 ] || [ ! -x build/kedr ]; then
    echo "build failed: see $out/build.log" >&2
    tail -n 40 "$out/build.log" >&2
    exit 1
fi
echo "built in $((SECONDS - start)) s"

echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm,clocks.max.memory,power.limit \
    --format=csv || echo "nvidia-smi failed"
build/kedr info || exit 1

test_rc=0
if has test; then
    echo "== tests (every back end)"
    start=$SECONDS
    # Four test programs at once share the cores: four OpenMP threads each.
    (cd build && KEDR_BACKEND=all OMP_NUM_THREADS=4 ctest --output-on-failure -j4) 2>&1 |
        tee "$out/test.log"
    test_rc=$?
    echo "tests took $((SECONDS - start)) s (exit $test_rc)"
fi

bench_rc=0
if has bench; then
    echo "== benchmarks"
    start=$SECONDS
    build/kedr bench prim --backend cuda --json "$out/prim-cuda.json" 2>&1 | tee "$out/bench.log"
    bench_rc=$?
    build/kedr bench prim --backend cpu --n 2^26 --repeats 10 --json "$out/prim-cpu.json" 2>&1 |
        tee -a "$out/bench.log"
    rc=$?
    [ $bench_rc -ne 0 ] || bench_rc=$rc
    # DSMC: the argon box up to 10^8 particles and both seed 003 cases.
    build/kedr bench dsmc --backend cuda --json "$out/dsmc-cuda.json" 2>&1 | tee -a "$out/bench.log"
    rc=$?
    [ $bench_rc -ne 0 ] || bench_rc=$rc
    # cayley: the dense search on both back ends (about a minute on one H100)
    for b in cuda cpu; do
        build/kedr bench cayley --backend $b --json "$out/cayley-$b.json" 2>&1 | tee -a "$out/bench.log"
        rc=$?
        [ $bench_rc -ne 0 ] || bench_rc=$rc
    done
    echo "benchmarks took $((SECONDS - start)) s (exit $bench_rc)"
fi

if has bench; then
    echo "== burnside:11..16 on cuda against Kuznetsov's diameters (Prikl. Diskr. Mat. 3(33), 2016), in his basis"
    for want in 11:35:24 12:40:26 13:40:28 14:45:30 15:46:30 16:50:33; do
        IFS=: read -r k d dinv <<<"$want"
        for inv in "" --inverses; do
            got=$(build/kedr cayley "burnside:$k" --basis kuznetsov $inv --backend cuda -q 2>&1 |
                tee -a "$out/bench.log" | awk '/^diameter/ {print $2}')
            expect=$([ -z "$inv" ] && echo "$d" || echo "$dinv")
            verdict=$([ "$got" = "$expect" ] && echo match || echo MISMATCH)
            [ "$verdict" = match ] || bench_rc=1
            echo "burnside:$k ${inv:-(a1, a2)}: diameter ${got:-none}, published $expect: $verdict"
        done
    done
fi

if has dsmc; then
    # the DSMC benchmark alone, on the GPU and on one core of the host
    echo "== dsmc benchmark"
    build/kedr bench dsmc --backend cuda --json "$out/dsmc-cuda.json" 2>&1 | tee "$out/dsmc.log"
    rc=${PIPESTATUS[0]}
    [ $bench_rc -ne 0 ] || bench_rc=$rc
    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive build/kedr bench dsmc --backend cpu \
        --json "$out/dsmc-cpu-1thread.json" 2>&1 | tee -a "$out/dsmc.log"
    rc=${PIPESTATUS[0]}
    [ $bench_rc -ne 0 ] || bench_rc=$rc
fi

multi_rc=0
if has multi; then
    echo "== cayley: the dense search over every GPU of the host"
    gpus=$(nvidia-smi --list-gpus | wc -l)
    (cd build && KEDR_BACKEND=all ./test_cayley) 2>&1 | tee "$out/multi.log"
    multi_rc=${PIPESTATUS[0]}
    for k in 14 15 16; do
        for d in 0 1 $gpus; do
            opt=$([ "$d" = 0 ] && echo "" || echo "--devices $d")
            build/kedr cayley "burnside:$k" --backend cuda -q $opt --json "$out/b$k-d$d.json" 2>&1 |
                tee -a "$out/multi.log" | grep -E "^(diameter|time|memory|back end)" |
                sed "s/^/burnside:$k devices=$d  /"
            [ "${PIPESTATUS[0]}" -eq 0 ] || multi_rc=1
        done
    done
    if [ "${KEDR_B17:-}" = kuznetsov ]; then
        # B_17 in Kuznetsov's basis against his 55 and 34 (191 GB: 2 H200s or 3 H100s)
        for inv in "" --inverses; do
            got=$(timeout "${KEDR_B17_TIMEOUT:-420}" build/kedr cayley burnside:17 --basis kuznetsov $inv \
                --backend cuda --devices all -q 2>&1 | tee -a "$out/multi.log" | awk '/^diameter/ {print $2}')
            expect=$([ -z "$inv" ] && echo 55 || echo 34)
            [ "$got" = "$expect" ] || multi_rc=1
            echo "burnside:17 --basis kuznetsov ${inv:-(a1, a2)}: diameter ${got:-none}, published $expect"
        done
    elif [ -n "${KEDR_B17:-}" ]; then
        inv=$([ "$KEDR_B17" = inverses ] && echo --inverses || echo "")
        timeout "${KEDR_B17_TIMEOUT:-420}" build/kedr cayley burnside:17 $inv --backend cuda --devices all \
            --json "$out/b17${inv:+-inverses}.json" 2>&1 | tee -a "$out/multi.log" | tail -n 70
        [ "${PIPESTATUS[0]}" -eq 0 ] || multi_rc=1
    fi
fi

if has probe; then
    # seed 001's measurements and the textbook's kernels; p2p exits 3 on a host of one GPU
    echo "== kedr probe"
    for sub in bandwidth offset stride transpose transfer overlap occupancy textbook p2p; do
        build/kedr probe $sub --backend cuda --json "$out/probe-$sub.json" 2>&1 |
            tee -a "$out/probe.log"
        rc=${PIPESTATUS[0]}
        if [ $rc -ne 0 ] && ! { [ $sub = p2p ] && [ $rc -eq 3 ]; }; then
            bench_rc=$rc
        fi
    done
    # the distributed transpose over every GPU of the host (two ranks sharing one GPU on a
    # host of one: the methods still run, the link is the GPU's own memory)
    gpus=$(nvidia-smi --list-gpus | wc -l)
    np=$((gpus > 1 ? gpus : 2))
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np $np --oversubscribe \
        build/kedr probe mpi-transpose --backend cuda --json "$out/probe-mpi-transpose.json" 2>&1 |
        tee -a "$out/probe.log"
    rc=${PIPESTATUS[0]}
    [ $rc -eq 0 ] || bench_rc=$rc
fi

if has modules; then
    echo "== kedr bench adi, flow, render, tridiag"
    for suite in adi flow render tridiag; do
        timeout "${KEDR_MODULE_TIMEOUT:-300}" build/kedr bench $suite --backend cuda \
            --json "$out/$suite.json" 2>&1 | tee -a "$out/modules.log"
        rc=${PIPESTATUS[0]}
        [ $rc -eq 0 ] || bench_rc=$rc
    done
fi

sanitize_rc=0
if has sanitize; then
    OUT=$out bash bench/sanitize-gpu.sh 2>&1 | tee "$out/sanitize.log"
    sanitize_rc=${PIPESTATUS[0]}
fi

status() { [ "$1" -eq 0 ] && echo ok || echo "FAILED (exit $1)"; }
echo "== summary: tests $(has test && status $test_rc || echo skipped)," \
    "benchmarks $(has bench || has dsmc || has probe || has modules && status $bench_rc || echo skipped)," \
    "multi-GPU $(has multi && status $multi_rc || echo skipped)," \
    "sanitizers $(has sanitize && status $sanitize_rc || echo skipped)"
[ $test_rc -eq 0 ] && [ $bench_rc -eq 0 ] && [ $multi_rc -eq 0 ] && [ $sanitize_rc -eq 0 ]
