#!/usr/bin/env bash
# Strong scaling of kedr adi over the GPUs of one host (the seed's Fig. 12.5: 1.81x on 2 GPUs,
# 2.89x on 4 with the X sweep passed along the GPUs as a serial chain): one box_pipe grid run on
# 1, 2 and 4 ranks, one GPU a rank, printing the time a step of each and the speedup over one
# GPU. Also one rank with [solver] x_sweep = partitioned, the X sweep the ranks use, which
# separates the partitioned solver's own cost from the messages between the ranks, and with
# x_sweep = prim (the same through kedr_tridiag_part_reduce / _complete on stored rows). Each
# run's log ends with rank 0's time in the halo exchanges and the interface systems.
# Over several ranks each count runs twice: with the ranks' buffers copied GPU to GPU (CUDA IPC
# between the ranks of the host; the interface systems then gathered and solved on each GPU,
# [solver] x_interface = auto) and with every message through host memory (KEDR_COMM_IPC=0: the
# interface systems solved by their owners on the host), so that the two paths compare in one
# run.
#
#   bench/adi-ranks.sh                         (from the repository root, after a cuda build)
#   KEDR=build/kedr RANKS="1 2" NX=2048 NY=256 NZ=256 bench/adi-ranks.sh   (a 2-GPU host)
#
# Environment: KEDR (the kedr program; default build/kedr), RANKS (default "1 2 4"; more ranks
# than GPUs share them), NX NY NZ (default 4096 256 256: 268 M nodes, 41 GB on one GPU in single
# precision, 46 GB with the partitioned sweep, 65 GB through prim), PRECISION (single), STEPS
# (timed steps, 5), PATHS (default "ipc host": GPU to GPU, through the host), XPROF (1: each
# log also gets every rank's KEDR_ADI_XPROF breakdown of the exchanges; it synchronizes the GPU
# at each part, so leave it off for the timings), BACKEND (cuda), MPIRUN (mpirun), MPIRUN_FLAGS (extra mpirun options), OUT (scratch folder,
# default a temporary one). The grid is split along x: keep NX well above the rank count times
# the other sides' ratio to the planes (the interface rows a rank exchanges grow with ny nz,
# its work with nx ny nz / ranks).
set -u -o pipefail

kedr=${KEDR:-build/kedr}
ranks=${RANKS:-1 2 4}
nx=${NX:-4096} ny=${NY:-256} nz=${NZ:-256}
precision=${PRECISION:-single} steps=${STEPS:-5} backend=${BACKEND:-cuda}
mpirun=${MPIRUN:-mpirun}
paths=${PATHS:-ipc host}
xprof=${XPROF:-0}
flags=${MPIRUN_FLAGS:-}
[ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if [ ! -x "$kedr" ]; then
    echo "adi-ranks.sh: $kedr: not found (build kedr, or set KEDR)" >&2
    exit 2
fi

# box_pipe's flow (cases/adi/box_pipe.ini) on the chosen grid, without outputs.
write_case() { # FILE X_SWEEP
    cat > "$1" <<CASE
[grid]
nx = $nx
ny = $ny
nz = $nz
h = 0.02
[flow]
re = 200
pr = 0.72
gamma = 1.4
[boundary]
x_lo = inflow
x_lo_velocity = 1 0 0
x_lo_temperature = 1
x_hi = free
[time]
dt = 0.005
steps = $steps
[solver]
precision = $precision
global_iterations = 4
local_iterations = 2
x_sweep = $2
[output]
dir = $out/run
stats_every = 0
checkpoint = false
vti = false
png = false
csv = false
CASE
}
write_case "$out/thomas.ini" auto
write_case "$out/partitioned.ini" partitioned
write_case "$out/prim.ini" prim

# One run: prints its milliseconds a step (empty on failure; the log stays in $out). Each rank
# gets its share of the host's cores for its threads (the interface systems and the packing run
# on the host), unbound, unless OMP_NUM_THREADS is set.
cores=$(nproc 2> /dev/null || echo 1)
run() { # NRANKS CASE LOG [KEDR_COMM_IPC]
    local cmd=("$kedr" adi "$2" --backend "$backend")
    if [ "$1" -gt 1 ]; then
        local threads=${OMP_NUM_THREADS:-$((cores / $1 > 0 ? cores / $1 : 1))}
        # shellcheck disable=SC2086
        cmd=("$mpirun" -np "$1" --bind-to none -x OMP_NUM_THREADS="$threads"
             -x KEDR_COMM_IPC="${4:-1}" -x KEDR_ADI_XPROF="$xprof" $flags "${cmd[@]}")
    fi
    if ! "${cmd[@]}" > "$3" 2>&1; then
        echo "adi-ranks.sh: ${cmd[*]} failed (log: $3):" >&2
        tail -5 "$3" >&2
        return
    fi
    sed -n 's/.* s: \([0-9.]*\) ms a step.*/\1/p' "$3"
}

echo "kedr adi, box_pipe on $nx x $ny x $nz nodes, $precision precision, $steps steps, $backend"
command -v nvidia-smi > /dev/null && nvidia-smi -L
printf '%-28s %12s %10s\n' "ranks" "ms a step" "speedup"
base=""
status=0
for n in $ranks; do
    ways=$paths
    [ "$n" = 1 ] && ways=one
    for way in $ways; do
        ipc=1 label="$n (GPU to GPU)" log="$out/ranks$n.log"
        [ "$way" = host ] && ipc=0 label="$n (through the host)" log="$out/ranks$n-host.log"
        [ "$way" = one ] && label="1 (Thomas along x)"
        ms=$(run "$n" "$out/thomas.ini" "$log" "$ipc")
        if [ -z "$ms" ]; then
            status=1
            continue
        fi
        [ -z "$base" ] && [ "$n" = 1 ] && base=$ms
        speed=$([ -n "$base" ] && awk -v a="$base" -v b="$ms" 'BEGIN { printf "%.2f", a / b }')
        printf '%-28s %12s %10s\n' "$label" "$ms" "${speed:--}"
    done
    if [ "$n" = 1 ]; then
        ms=$(run 1 "$out/partitioned.ini" "$out/partitioned.log")
        [ -n "$ms" ] && printf '%-28s %12s %10s\n' "1 (partitioned X sweep)" "$ms" \
            "$(awk -v a="$base" -v b="$ms" 'BEGIN { printf "%.2f", a / b }')"
        ms=$(run 1 "$out/prim.ini" "$out/prim.log")
        [ -n "$ms" ] && printf '%-28s %12s %10s\n' "1 (partitioned, prim API)" "$ms" \
            "$(awk -v a="$base" -v b="$ms" 'BEGIN { printf "%.2f", a / b }')"
    fi
done
echo "logs: $out"
exit $status
