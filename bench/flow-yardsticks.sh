#!/usr/bin/env bash
# kedr's Poisson solvers on the GPU against hypre's BoomerAMG-PCG and PETSc's CG with GAMG on
# all the cores of the same host (the issue's yardstick: multigrid to 1e-8 at least 10x faster
# than hypre/PETSc on the host's cores). One `kedr bench flow` run on cuda (pcg-mg and mg), then
# the same problems on the cpu through each yardstick the build has over RANKS MPI ranks (one a
# core), then the ratios.
#
#   YARD=.yard bench/flow-yardsticks.sh        (KEDR built with hypre, PETSc or both: see below)
#
# On a host that cannot install packages, pack them where they are installed
# (bench/yardsticks-pack.sh .yard: hypre alone about 17 MB, carry .yard; with PETSc carry
# .yard.tar.xz, about 33 MB, and `tar xJf .yard.tar.xz` there) and build with the pack:
#   cmake -S . -B build -DKEDR_CUDA=ON -DCMAKE_PREFIX_PATH=$PWD/.yard ... &&
#   LD_LIBRARY_PATH=$PWD/.yard/lib cmake --build build --target kedr_cli
# (PETSc is found through pkg-config, PKG_CONFIG_PATH=$PWD/.yard/lib/pkgconfig, or without it
# by its files under CMAKE_PREFIX_PATH).
# Environment: KEDR (build/kedr), YARD (the packed folder, added to LD_LIBRARY_PATH), N2 (2D
# grid, default 2048), N3 (3D grids, default "256 512"), RANKS (default: the host's cores),
# REPEATS (3), BACKEND (kedr's rows: cuda, or cpu to try the script), OUT (a folder for the JSON records; default a temporary one).
set -u -o pipefail
kedr=${KEDR:-build/kedr}
n2=${N2:-2048} sizes=${N3:-256 512} ranks=${RANKS:-$(nproc)} repeats=${REPEATS:-3}
backend=${BACKEND:-cuda}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${YARD:-}" ] && export LD_LIBRARY_PATH="$(cd "$YARD" && pwd)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
have=$("$kedr" bench flow --help | grep 'this build:' || true)
solvers=""
[[ $have == *hypre* ]] && solvers=hypre
[[ $have == *PETSc* ]] && solvers=${solvers:+$solvers,}petsc
[ -n "$solvers" ] ||
  { echo "flow-yardsticks.sh: $kedr was built without hypre and PETSc" >&2; exit 2; }
flags=""
[ "$(id -u)" = 0 ] && flags="--allow-run-as-root"
[ -n "${LD_LIBRARY_PATH:-}" ] && flags="$flags -x LD_LIBRARY_PATH"
for n3 in $sizes; do
  "$kedr" bench flow --backend "$backend" --only poisson --solvers pcg-mg,mg --n2d "$n2" --n3d "$n3" \
    --repeats "$repeats" --json "$out/kedr-$n3.json" | grep -E "^kedr"
  mpirun -np "$ranks" $flags -x OMP_NUM_THREADS=1 --bind-to core \
    "$kedr" bench flow --backend cpu --only poisson --solvers "$solvers" --n2d "$n2" --n3d "$n3" \
    --repeats "$repeats" --json "$out/yardsticks-$n3.json" | grep -E "^(hypre|PETSc)"
  python3 - "$out/kedr-$n3.json" "$out/yardsticks-$n3.json" "$backend" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["results"]; h = json.load(open(sys.argv[2]))["results"]
for hr in h:
    for kr in k:
        if kr["grid"] == hr["grid"]:
            print("%-8s %-28s %9.2f ms  %-30s %9.2f ms  yardstick/kedr %6.1fx  %s %s" % (
                kr["grid"], kr["what"] + " (" + sys.argv[3] + ")", kr["solve_ms"], hr["what"], hr["solve_ms"],
                hr["solve_ms"] / kr["solve_ms"], kr["status"], hr["status"]))
PY
done
echo "records in $out"
