#!/usr/bin/env bash
# DSMC over several GPUs of one host: `kedr bench dsmc --ranks` under mpirun on 1, 2, ... ranks
# (one GPU a rank), and, when SPARTA's source is at hand, SPARTA (MPI + Kokkos CUDA) on the same
# GPUs and the same case (in.collide) in the same run. From the repository root, after kedr is
# built in build/:
#
#   OUT=dir bench/dsmc-ranks.sh [PARTICLES_PER_GPU]      (default 10^8; BACKEND=cpu to try it)
#
# PATHS: how the exchange's records travel between the ranks, each timed in turn (default
# "ipc"): ipc, GPU to GPU where the GPUs reach each other (KEDR_COMM_IPC=1); host, through host
# memory and MPI (KEDR_COMM_IPC=0). PATHS="ipc host" runs both; one rank has no exchange and runs
# once. With KEDR_DSMC_XPROF=1 each rank prints the exchange's parts, timed, to the log.
# RANKS: the rank counts (default 1, 2, ... up to the host's GPUs), e.g. RANKS="1 2 4".
# SPHERE: with a particle count (e.g. 4e8), each run also times the 3D sphere refined to about
# that many particles over its ranks (strong scaling; `kedr bench dsmc --sphere`).
# SPLIT: how the grid is split between the ranks, each timed in turn (default "rcb"): rcb, boxes by
# recursive coordinate bisection; x, columns along x ([run] split, docs/dsmc.md). SPLIT="rcb x"
# runs both; one rank has no split and runs once. Besides the box stretched along x (where both
# give slabs) `kedr bench dsmc --ranks` times the same cubes tiled along x, y and z (tiles3d),
# where the splits differ, and seed test 2 (2D).
#
# SPARTA: with SPARTA_DIR set, the SPARTA that bench/sparta-build.sh builds (or is building:
# this waits for SPARTA_DIR/done) runs in.collide on the same GPUs after kedr. SPARTA creates its
# particles on the host (about 2 minutes per 10^8), so it runs SPARTA_PER_GPU particles a GPU
# (default 2.5e7), and kedr runs that size too, for a like-for-like ratio. Prints particle-steps/s
# for each rank count and the weak-scaling efficiency; writes dsmc-ranks-SIZE-npN.json, the logs
# and ratio.txt under $OUT.
set -u -o pipefail
out=${OUT:-gpu-out}
per=${1:-100000000}
sparta_per=${SPARTA_PER_GPU:-25000000}
mkdir -p "$out"
gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || gpus=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=4
export NCCL_NVLS_ENABLE=0
mpi="mpirun --bind-to none --oversubscribe"

sparta=${SPARTA_DIR:-}
counts=${RANKS:-$(seq 1 "$gpus")}
paths=${PATHS:-ipc}
splits=${SPLIT:-rcb}
for split in $splits; do
    case "$split" in
    rcb | x) ;;
    *) echo "SPLIT: unknown split '$split' (expected rcb or x)" >&2; exit 2 ;;
    esac
done

weak() { # the box3d row of a JSON: particle-steps/s
    python3 -c "import json,sys; r=[x for x in json.load(open(sys.argv[1]))['results'] if x['name'].startswith(sys.argv[2])]; print(r[0]['particle_steps_per_s'] if r and r[0]['status']=='ok' else 0)" "$1" "$2" 2>/dev/null || echo 0
}

echo "== kedr: $gpus GPU(s), $per particles a GPU (weak), seed test 2 (strong); exchange paths: $paths; splits: $splits"
declare -A k1
sizes=$per
[ -n "$sparta" ] && [ "$sparta_per" != "$per" ] && sizes="$per $sparta_per"
for size in $sizes; do
    first=1
    for split in $splits; do
    for path in $paths; do
        case "$path" in
        ipc) ipc=1 ;;
        host) ipc=0 ;;
        *) echo "PATHS: unknown path '$path' (expected ipc or host)" >&2; exit 2 ;;
        esac
        for np in $counts; do
            [ "$np" = 1 ] && [ "$first" = 0 ] && continue # one rank: no exchange, timed once
            j="$out/dsmc-ranks-$size-np$np.json"
            [ "$np" -gt 1 ] && j="$out/dsmc-ranks-$size-np$np-$path-$split.json"
            KEDR_COMM_IPC=$ipc timeout 300 $mpi -x KEDR_COMM_IPC -np "$np" build/kedr bench dsmc --ranks \
                --backend "${BACKEND:-cuda}" --particles "$size" --split "$split" ${SPHERE:+--sphere "$SPHERE"} --json "$j" 2>&1 | tee -a "$out/dsmc-ranks.log"
            python3 -c "import json,sys; [print(x['name'], {k: round(v,3) for k,v in x.get('stage_ms_per_step',{}).items() if v}) for x in json.load(open(sys.argv[1]))['results']]" "$j" 2>/dev/null
            for box in box3d tiles3d; do
                r=$(weak "$j" $box)
                [ "$np" = 1 ] && k1[$size-$box]=$r
                python3 -c "import sys; r,b,n=map(float,sys.argv[1:4]); print(f'kedr {sys.argv[6]} {sys.argv[4]} a GPU, {int(n)} GPU(s), exchange {sys.argv[5]}: {r:.3e} p-steps/s, weak-scaling efficiency {r/(n*b)*100 if b else 0:.1f}%')" "$r" "${k1[$size-$box]}" "$np" "$size" "$path, split $split" "$box"
            done
            r=$(weak "$j" box3d)
            [ "$size" = "$sparta_per" ] && echo "kedr-collide np=$np $([ "$np" = 1 ] || echo "$path $split ")$r" >>"$out/ratio.txt"
        done
        first=0
    done
    done
done

if [ -n "$sparta" ]; then
    echo "== SPARTA (MPI + Kokkos CUDA) in.collide, $sparta_per particles a GPU"
    for _ in $(seq 1 600); do [ -f "$sparta/done" ] && break; sleep 1; done
    exe=$(ls "$sparta"/build/src/spa_* 2>/dev/null | head -n 1)
    if [ -z "$exe" ]; then
        echo "SPARTA did not build:"
        tail -n 30 "$sparta"/build/make.log "$sparta"/build/cmake.log 2>/dev/null
    else
        side=$(python3 -c "import sys; print(round((float(sys.argv[1])/10)**(1/3)))" "$sparta_per")
        for np in $(echo $counts | tr " " "\n" | sort -rn); do # most GPUs first
            (cd "$sparta/bench" && timeout 300 $mpi -np "$np" "$exe" -k on g "$np" -sf kk -pk kokkos gpu/aware no \
                -v x $((side * np)) -v y "$side" -v z "$side" -in in.collide) \
                >"$out/sparta-np$np.log" 2>&1
            # the timed run: the last "Loop time of T on P procs for 100 steps with N particles"
            r=$(awk '/^Loop time of/ {t=$4; s=$9; n=$12} END {if (t > 0) printf "%.4e", n * s / t; else print 0}' \
                "$out/sparta-np$np.log")
            echo "SPARTA in.collide $((side * np))x${side}x$side, $np GPU(s): $r p-steps/s"
            echo "sparta-collide np=$np $r" >>"$out/ratio.txt"
            grep -E "^Loop time|ERROR" "$out/sparta-np$np.log" | tail -n 2
        done
    fi
fi
[ -f "$out/ratio.txt" ] && cat "$out/ratio.txt"
