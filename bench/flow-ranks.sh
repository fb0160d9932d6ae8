#!/usr/bin/env bash
# Strong scaling of kedr flow over the GPUs of one host (the shape of the seed's Figs. 12.6-12.7:
# a fixed sphere in a uniform stream, the time a step against the GPU count for each pressure
# solver): one grid run on 1, 2 and 4 ranks (one GPU a rank, slabs along z), for each solver in
# SOLVERS, printing the milliseconds a step, of which the pressure solve, the pressure
# iterations a step and the speedup over one GPU. Multigrid over ranks gathers its coarse
# levels on every rank below KEDR_FLOW_MG_GATHER cells (default 262144 on GPUs; docs/flow.md "Several
# ranks"): GATHER="0 32768 262144" runs each multigrid solver with each value.
# Over several ranks each count runs once per way in PATHS: "sig" (the halos written GPU to GPU
# into the neighbours' memory by kernels and ordered by signal words the GPUs write and wait on:
# no host in an exchange, KEDR_FLOW_XCH_SIGNAL=1, where every rank's neighbours are on other
# GPUs of the host; the coarse gathers as ipc), "ipc" (the halos and coarse gathers
# copied GPU to GPU by CUDA IPC between the ranks of the host, where their GPUs reach each other,
# ordered on the streams by CUDA IPC events: no device synchronisation an exchange), "sync" (GPU
# to GPU, each exchange synchronised through MPI: KEDR_COMM_IPC_EVENTS=0) and "host" (every
# message through host memory and MPI: KEDR_COMM_IPC=0); the path a run took is printed (rank
# 0's). Each run over ranks has KEDR_FLOW_PROF=1 (a device synchronisation at each exchange and
# each timed part: the times are the parts' own, the step a little slower): rank 0's
# milliseconds a step in the exchanges of device data between ranks (halos and gathers) are
# printed as "ms halo", and under each row rank 0's pressure solve by part (smoothing,
# residual, transfers, coarse solve, reductions, PCG's operator, the solver's exchanges and
# their number a step), and the whole step by part (advance: the right-hand sides and the
# predictor; bodies; outflow; fill: the boundary fills and velocity halos; pressure; correct;
# umax: the largest velocity; one rank too). KEDR_FLOW_PROF=1 slows the step (a
# synchronisation at each exchange and part), so by default each count runs twice (PROF="0
# 1"): without it (prof 0: the time a step and the speedup to quote; the way column then says
# the way asked for) and with it (prof 1: the way taken, ms halo and the parts).
#
# Memory: at N = 512 one GPU holds the whole 134 M-cell grid: about 30 GB (fits an 80 GB H100).
#
#   bench/flow-ranks.sh                                  (from the repository root, cuda build)
#   KEDR=build/kedr RANKS="1 2" N=256 bench/flow-ranks.sh  (a 2-GPU host, a smaller grid)
#
# Environment: KEDR (the kedr program; default build/kedr), RANKS (default "1 2 4"; more ranks
# than GPUs share them), N (cells along each side of the cube, default 512: 134 M cells, about
# 30 GB on one GPU), STEPS (timed steps, default 10; the first step's cost is included),
# SOLVERS (default "pcg+mg mg": PCG with one V-cycle, V-cycles alone; also pcg+ssor,
# pcg+jacobi, pcg+none), GATHER (default: unset, the solver's default), BODY (1: the sphere,
# default; 0: an empty box whose pressure comes from the uniform start's projection and the
# outflow alone), PATHS (default "sig ipc"; also sync, host), PROF (default "0 1": each count over
# ranks without and with KEDR_FLOW_PROF=1; "0" or "1" alone), BACKEND (cuda), MPIRUN (mpirun), MPIRUN_FLAGS (extra mpirun options), OUT
# (scratch folder, default a temporary one), WARM (default 0; N > 0: each run also runs
# its first N steps alone, and the row gives the STEPS after them: the first steps of a run start
# the bodies' forces and the pressure from nothing, and take more iterations than later ones), FUSE (default "1"; "1 0" runs each count over
# ranks with KEDR_FLOW_FUSE=1, the merged reductions and body sums, and 0, the earlier path: a
# message for each; column "fuse"). KEDR_FLOW_MG_HALO, KEDR_FLOW_MG_GATHER_PLANES, KEDR_FLOW_IBM_BOX,
# KEDR_FLOW_IBM_GRAPH and KEDR_FLOW_MG_GRAPH (docs/flow.md "Several ranks"), when set, are passed on to the ranks. MGSTEPS (default unset:
# the case's default, 2) sets the multigrid solvers' sweeps each way ([pressure] steps). Under each prof-1 row,
# rank 0's parts line also gives the bodies' forcing (ms a step, of which its sums over ranks,
# and their number a step). OVERLAP (default "1"; "1 0" runs each count over ranks with
# KEDR_FLOW_OVERLAP=1, the interior planes of PCG's products, of the residuals, of AINV's two
# factors and of the smoothing's half-sweeps (SSOR too) computed on a second stream while
# their halos travel, and 0, after them; column "ovl"). SOLVERS may
# include pcg+ainv (the approximate inverse over ranks, the seed's Fig. 12.7).
set -u -o pipefail

kedr=${KEDR:-build/kedr}
ranks=${RANKS:-1 2 4}
n=${N:-512}
steps=${STEPS:-10}
warm=${WARM:-0}
solvers=${SOLVERS:-pcg+mg mg}
gathers=${GATHER:-default}
paths=${PATHS:-sig ipc}
for p in $paths; do
    case "$p" in
        sig | ipc | sync | host) ;;
        *)
            echo "flow-ranks.sh: PATHS: '$p': expected ipc, sync or host" >&2
            exit 2
            ;;
    esac
done
# NAME VALUES: each value 0 or 1
zero_one() {
    local v
    for v in $2; do
        case "$v" in
            0 | 1) ;;
            *)
                echo "flow-ranks.sh: $1: '$v': expected 0 or 1 (or both)" >&2
                exit 2
                ;;
        esac
    done
}
profs=${PROF:-0 1}
fuses=${FUSE:-1}
overlaps=${OVERLAP:-1}
zero_one PROF "$profs"
zero_one FUSE "$fuses"
zero_one OVERLAP "$overlaps"
case "$warm" in
    '' | *[!0-9]*)
        echo "flow-ranks.sh: WARM: '$warm': expected a number of steps" >&2
        exit 2
        ;;
esac
body=${BODY:-1}
backend=${BACKEND:-cuda}
mpirun=${MPIRUN:-mpirun}
flags=${MPIRUN_FLAGS:-}
[ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if [ ! -x "$kedr" ]; then
    echo "flow-ranks.sh: $kedr: not found (build kedr, or set KEDR)" >&2
    exit 2
fi

# A cube of side 8 with a sphere D = 1 at (3, 4, 4): uniform inflow U = 1 at x = 0, convective
# outflow at x = 8, slip sides; nu = 0.01 (Re 100). FILE SOLVER
write_case() { # FILE SOLVER [STEPS]
    local pressure nsteps=${3:-$steps}
    case "$2" in
        mg) pressure="solver = mg" ;;
        pcg+*) pressure="solver = pcg
preconditioner = ${2#pcg+}" ;;
        *)
            echo "flow-ranks.sh: SOLVERS: '$2': expected mg or pcg+PRECONDITIONER" >&2
            return 1
            ;;
    esac
    [ -n "${MGSTEPS:-}" ] && [[ $2 == *mg* ]] && pressure+=$'\n'"steps = $MGSTEPS"
    cat > "$1" << CASE
[domain]
dimensions = 3
length = 8 8 8
boundary_x_min = inflow
boundary_x_max = outflow
boundary_y_min = slip
boundary_y_max = slip
boundary_z_min = slip
boundary_z_max = slip
[boundary]
x_min_velocity = 1 0 0
[grid]
nx = $n
ny = $n
nz = $n
[fluid]
nu = 0.01
[initial]
state = uniform
velocity = 1 0 0
[time]
dt = auto
cfl = 0.5
steps = $nsteps
[pressure]
$pressure
tol = 1e-8
max_iter = 2000
[output]
dir = $out/run
stats_every = 0
forces_every = 0
csv = no
vti = no
png = no
checkpoint = no
CASE
    if [ "$body" = 1 ]; then
        printf '[body.sphere]\nshape = sphere\ncenter = 3 4 4\ndiameter = 1\n' >> "$1"
    fi
}

# One run: prints "ms_a_step ms_pressure iterations ms_halo path" (empty on failure; the log
# stays in $out). The run's last line: "S steps, ...; T s in steps, of which P s in the pressure
# solve (I iterations a step)"; over ranks, rank 0's KEDR_FLOW_PROF line: "kedr flow: rank 0: S
# steps, T s in steps, H s in E halo exchanges and gathers (PATH)".
cores=$(nproc 2> /dev/null || echo 1)
run() { # NRANKS CASE LOG GATHER KEDR_COMM_IPC KEDR_COMM_IPC_EVENTS KEDR_FLOW_PROF KEDR_FLOW_FUSE
    # KEDR_FLOW_OVERLAP KEDR_FLOW_XCH_SIGNAL
    local cmd=("$kedr" flow "$2" --backend "$backend")
    local env=(env KEDR_FLOW_PROF="$7")
    [ "$4" != default ] && env+=(KEDR_FLOW_MG_GATHER="$4")
    if [ "$1" -gt 1 ]; then
        local threads=${OMP_NUM_THREADS:-$((cores / $1 > 0 ? cores / $1 : 1))}
        local x=(-x OMP_NUM_THREADS="$threads" -x KEDR_COMM_IPC="$5" -x KEDR_COMM_IPC_EVENTS="$6"
            -x KEDR_FLOW_PROF="$7" -x KEDR_FLOW_FUSE="$8" -x KEDR_FLOW_OVERLAP="$9"
            -x KEDR_FLOW_XCH_SIGNAL="${10}")
        [ "$4" != default ] && x+=(-x KEDR_FLOW_MG_GATHER="$4")
        # the other settings of multigrid over ranks, passed on when set
        local v
        for v in KEDR_FLOW_MG_HALO KEDR_FLOW_MG_GATHER_PLANES KEDR_FLOW_IBM_BOX KEDR_FLOW_IBM_GRAPH KEDR_FLOW_MG_GRAPH; do
            [ -n "${!v:-}" ] && x+=(-x "$v=${!v}")
        done
        # shellcheck disable=SC2086,SC2206
        cmd=("$mpirun" -np "$1" --bind-to none "${x[@]}" $flags "${cmd[@]}")
    fi
    if ! ${env[@]+"${env[@]}"} "${cmd[@]}" > "$3" 2>&1; then
        echo "flow-ranks.sh: ${cmd[*]} failed (log: $3):" >&2
        tail -5 "$3" >&2
        return
    fi
    local a b="0 0 0 0 0 -"
    a=$(totals "$3")
    if [ "$warm" -gt 0 ] && [ -f "${2%.ini}-warm.ini" ]; then
        # the steady steps alone: this run (WARM + STEPS steps) less a run of its first WARM
        local wcmd=("${cmd[@]}")
        wcmd[${#wcmd[@]} - 3]="${2%.ini}-warm.ini"
        if ! ${env[@]+"${env[@]}"} "${wcmd[@]}" > "$3.warm" 2>&1; then
            echo "flow-ranks.sh: ${wcmd[*]} failed (log: $3.warm):" >&2
            tail -5 "$3.warm" >&2
            return
        fi
        b=$(totals "$3.warm")
    fi
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); s = x[1] - y[1];
        if (s <= 0) exit 1;
        printf "%.2f %.2f %.2f %s %s\n", 1000 * (x[2] - y[2]) / s, 1000 * (x[3] - y[3]) / s,
            (x[4] - y[4]) / s, (x[5] == "-" ? "-" : sprintf("%.2f", 1000 * (x[5] - y[5]) / s)),
            x[6] }'
}

# A log's totals: "STEPS SECONDS PRESSURE_SECONDS PRESSURE_ITERATIONS HALO_SECONDS PATH" (halo and
# path "-" without KEDR_FLOW_PROF's line).
totals() {
    local halo path
    halo=$(sed -n 's/^kedr flow: rank 0: [0-9]* steps, .* s in steps, \([0-9.e+-]*\) s in .*/\1/p' "$1")
    path=$(sed -n 's/^kedr flow: rank 0: .* halo exchanges and gathers (\(.*\))$/\1/p' "$1" |
        sed 's/GPU to GPU, signalled/sig/; s/GPU to GPU/ipc/; s/through the host/host/')
    sed -n 's/^\([0-9]*\) steps, .*; \([0-9.e+-]*\) s in steps, of which \([0-9.e+-]*\) s in the pressure solve (\([0-9.]*\) iterations a step).*/\1 \2 \3 \4/p' "$1" |
        awk -v h="${halo:--}" -v p="${path:--}" '{ printf "%s %s %s %.6f %s %s\n", $1, $2, $3, $1 * $4, h, p }'
}

# Rank 0's pressure solve by part (KEDR_FLOW_PROF's line "kedr flow: rank 0: ms a step: ..."):
# LOG -> "    parts (ms a step): smoothing .., ..."
parts() {
    sed -n 's/^kedr flow: rank 0: ms a step: \(.*\)$/    parts (rank 0, ms a step): \1/p' "$1"
    sed -n 's/^kedr flow: rank 0: step by part, ms a step: \(.*\)$/    step (rank 0, ms a step): \1/p' "$1"
}

echo "kedr flow, a sphere in a $n^3 box (body $body), $steps steps$([ "$warm" -gt 0 ] && echo " after $warm (each run less a run of its first $warm)"), $backend, $(date -u +%F)"
command -v nvidia-smi > /dev/null && nvidia-smi -L
printf '%-12s %-8s %6s %-5s %4s %4s %4s %12s %14s %10s %10s %8s\n' solver gather ranks way fuse \
    ovl prof "ms a step" "ms pressure" "it a step" "ms halo" speedup
status=0
for solver in $solvers; do
    gl=default
    [[ $solver == *mg* ]] && gl=$gathers
    for g in $gl; do
        write_case "$out/$solver.ini" "$solver" $((warm + steps)) || exit 2
        [ "$warm" -gt 0 ] && { write_case "$out/$solver-warm.ini" "$solver" "$warm" || exit 2; }
        base=""
        for r in $ranks; do
            ways=$paths
            [ "$r" = 1 ] && ways=one
            for way in $ways; do
                ipc=1 events=1 sig=0
                [ "$way" = sig ] && sig=1
                [ "$way" = host ] && ipc=0
                [ "$way" = sync ] && events=0
                pl=$profs
                fl=$fuses
                ol=$overlaps
                [ "$r" = 1 ] && fl=1 && ol=1
                for fuse in $fl; do
                for ovl in $ol; do
                for prof in $pl; do
                    log="$out/$solver-g$g-r$r-$way-f$fuse-o$ovl-p$prof.log"
                    res=$(run "$r" "$out/$solver.ini" "$log" "$g" "$ipc" "$events" "$prof" "$fuse" \
                        "$ovl" "$sig")
                    if [ -z "$res" ]; then
                        status=1
                        continue
                    fi
                    read -r ms msp it msh took <<< "$res"
                    # the way a run took (rank 0's, printed with KEDR_FLOW_PROF=1)
                    [ "$took" = ipc ] && [ "$way" = sync ] && took=sync
                    [ "$took" = - ] && took=$way
                    [ "$r" = 1 ] && took=-
                    [ -z "$base" ] && [ "$r" = 1 ] && base=$ms
                    speed=$([ -n "$base" ] && awk -v a="$base" -v b="$ms" 'BEGIN { printf "%.2f", a / b }')
                    printf '%-12s %-8s %6s %-5s %4s %4s %4s %12s %14s %10s %10s %8s\n' "$solver" \
                        "$g" "$r" "$took" "$([ "$r" = 1 ] && echo - || echo "$fuse")" \
                        "$([ "$r" = 1 ] && echo - || echo "$ovl")" \
                        "$prof" "$ms" "$msp" "$it" \
                        "$msh" "${speed:--}"
                    [ "$prof" = 1 ] && parts "$log"
                done
                done
                done
            done
        done
    done
done
echo "logs: $out"
exit $status
