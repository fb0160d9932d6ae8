#!/usr/bin/env bash
# The measurements that need a host of several GPUs, in one go, after kedr is built in build/
# (bench/gpu.sh builds it): DSMC weak scaling with the exchange's parts timed, ADI strong scaling,
# the GPU pair's peer copies and distributed transpose, the examples that drive every GPU, the
# cuBLAS row of the textbook's products, and the Burnside quotient B_17 over every GPU.
#
#   OUT=dir bench/host-gpus.sh [PARTS]     PARTS: any of dsmc adi flow probe examples cayley
#                                          cayley-ranks anchors examples-all render stride
#                                          (default: dsmc adi flow probe examples cayley; the
#                                          others on request; one GPU is enough for the last
#                                          four)
#
# Environment: DSMC_PER_GPU (particles a GPU, default 10^8), ADI_NX (default 4096),
# B17_TIMEOUT (seconds, default 240). Each part prints its own summary lines; the raw JSON and
# logs go to $OUT. Needs mpirun (OpenMPI; run as root it is allowed through the environment).
set -u -o pipefail
out=${OUT:-gpu-out}
parts=${*:-dsmc adi flow probe examples cayley}
mkdir -p "$out"
gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || { echo "host-gpus.sh: no GPU" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=4
export NCCL_NVLS_ENABLE=0
mpi="mpirun --bind-to none --oversubscribe"
counts="1"
for n in 2 4 8; do [ "$n" -le "$gpus" ] && counts="$counts $n"; done
has() { [[ " $parts " == *" $1 "* ]]; }
rc=0
echo "== $gpus GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1); commit ${KEDR_COMMIT:-?}"

if has dsmc; then
    per=${DSMC_PER_GPU:-100000000}
    echo "== dsmc: box3d weak scaling, $per particles a GPU (exchange parts: KEDR_DSMC_XPROF)"
    for np in $counts; do
        KEDR_DSMC_XPROF=1 timeout 200 $mpi -np "$np" build/kedr bench dsmc --ranks --backend cuda \
            --particles "$per" --json "$out/dsmc-np$np.json" >"$out/dsmc-np$np.log" 2>&1 || rc=1
        grep -vE "warning" "$out/dsmc-np$np.log" | tail -n 22
    done
fi

if has adi; then
    echo "== adi: strong scaling (bench/adi-ranks.sh)"
    RANKS="$counts" NX=${ADI_NX:-4096} OUT="$out/adi" MPIRUN_FLAGS="--bind-to none --oversubscribe" \
        timeout ${ADI_TIMEOUT:-420} bench/adi-ranks.sh 2>&1 | tail -n 40 || rc=1
    for f in "$out"/adi/ranks*.log; do
        echo "-- $f"
        tail -n 6 "$f"
    done
fi

if has flow; then
    echo "== flow: strong scaling (bench/flow-ranks.sh)"
    RANKS="$counts" N=${FLOW_N:-384} OUT="$out/flow" MPIRUN_FLAGS="--bind-to none --oversubscribe" \
        timeout 300 bench/flow-ranks.sh 2>&1 | tail -n 30 || rc=1
fi

if has probe; then
    echo "== probe: p2p, mpi-transpose over every GPU"
    timeout 120 build/kedr probe p2p --backend cuda --json "$out/probe-p2p.json" 2>&1 | tail -n 30 || rc=1
    for np in $counts; do
        [ "$np" = 1 ] && continue
        for n in 2048 8192; do
            timeout 120 $mpi -np "$np" build/kedr probe mpi-transpose --backend cuda --n "$n" \
                --json "$out/probe-mpi-transpose-np$np-$n.json" >"$out/mpi-transpose.log" 2>&1 || rc=1
            grep -E "^(kedr|host|CUDA|peer|[0-9]+ x)|rror" "$out/mpi-transpose.log" | head -n 12
        done
    done
fi

if has examples; then
    echo "== examples: every GPU from one thread; the cuBLAS product"
    timeout 120 build/example_multi_gpu --nx 16384 --ny 16384 --steps 50 2>&1 | tail -n 20 || rc=1
    timeout 120 build/example_matmul --n 2048 2>&1 | tail -n 20 || rc=1
fi

if has cayley; then
    echo "== cayley: burnside:16 and burnside:17 over every GPU"
    for k in 16 17; do
        timeout "${B17_TIMEOUT:-240}" build/kedr cayley "burnside:$k" --backend cuda --devices all \
            --json "$out/b$k-d$gpus.json" 2>&1 | grep -E "^(diameter|time|memory|back end|devices)" |
            sed "s/^/burnside:$k devices=$gpus  /" || rc=1
    done
fi
if has cayley-ranks && [ -x bench/cayley-ranks.sh ]; then
    echo "== cayley over MPI ranks (bench/cayley-ranks.sh)"
    OUT="$out/cayley-ranks" timeout "${CAYLEY_RANKS_TIMEOUT:-300}" bench/cayley-ranks.sh 2>&1 | tail -n 40 || rc=1
fi
if has anchors; then
    # BabelStream (public source, unpacked in .dev-babelstream with its build.sh) beside kedr
    # probe bandwidth on GPU 0, same array length (2^25), in the same run
    echo "== anchors: BabelStream and kedr probe bandwidth, 2^25 elements, GPU 0"
    if [ -x .dev-babelstream/build.sh ] && .dev-babelstream/build.sh >"$out/babelstream-build.log" 2>&1; then
        for prec in "" --float; do
            .dev-babelstream/babelstream-cuda --arraysize 33554432 --numtimes 100 $prec 2>&1 | tail -n 7
        done
    else
        echo "BabelStream: not built (see babelstream-build.log)"; tail -n 5 "$out/babelstream-build.log"
    fi
    # 2^25 doubles (BabelStream's size; nvbandwidth -b 256) and 2^26 (nvbandwidth's default 512 MiB)
    for n in 33554432 67108864; do
        timeout 120 build/kedr probe bandwidth --backend cuda --n $n --json "$out/probe-bandwidth-$n.json" 2>&1 |
            grep -iE "copy|scale|add|triad|dot|best" | head -n 30
    done
    # nvbandwidth (NVIDIA's public source, built elsewhere with its libraries linked in:
    # .dev-nvbandwidth/nvbandwidth-bin) beside kedr probe transfer
    echo "-- nvbandwidth ($(ldd --version 2>&1 | head -n 1))"
    if [ -x .dev-nvbandwidth/nvbandwidth-bin ]; then
        timeout 120 .dev-nvbandwidth/nvbandwidth-bin -t host_to_device_memcpy_ce \
            device_to_host_memcpy_ce device_local_copy 2>&1 | tail -n 30
        # the same copy at 256 MiB, kedr's and BabelStream's array (nvbandwidth counts the bytes once)
        timeout 60 .dev-nvbandwidth/nvbandwidth-bin -b 256 -t device_local_copy 2>&1 | grep -E "SUM|^ 0"
    fi
    timeout 120 build/kedr probe transfer --backend cuda 2>&1 | grep -E "^  .*(1 GB|256 MB|16 MB)" | head -n 12
fi
if has examples-all; then
    echo "== every example with its default sizes (examples/README.md)"
    for e in build/example_*; do
        echo "-- $(basename "$e")"
        timeout 150 "$e" 2>&1 | tail -n 14 || rc=1
    done
fi

if has render; then
    echo "== render: the BVHs and Embree on every core of the host ($(nproc)) up to 10^6 triangles, 1920x1080"
    OMP_NUM_THREADS=$(nproc) timeout 300 build/kedr bench render --backend cuda --accel bvh --max-triangles 1000000 \
        --repeats 3 --json "$out/render.json" 2>&1 | tail -n 40 || rc=1
    echo "== render: the GPU's LBVH build at 10^6 and 10^7 triangles"
    timeout 240 build/kedr bench render --backend cuda --accel lbvh --min-triangles 1000000 \
        --max-triangles 10000000 --size 640x360 --repeats 3 --json "$out/render-1e7.json" 2>&1 |
        tail -n 24 || rc=1
fi

if has stride; then
    echo "== probe stride: fig. 3.18's strided reads, plain and read-only (texture) loads"
    timeout 120 build/kedr probe stride --backend cuda --json "$out/probe-stride.json" 2>&1 |
        grep -E "^  (stride|read) (1|2|4|8|16|32) |texture|sector" || rc=1
fi
exit $rc
