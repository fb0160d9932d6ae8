#!/usr/bin/env bash
# kedr flow: help, errors naming file, line and key, a tiny cavity run that writes the fields,
# profiles and checkpoint, a restart that matches the straight run bit for bit, a pressure solve
# that cannot converge (its residual history, the checkpoint of the state before), a NaN run.
# usage: test_flow.sh KEDR_BINARY SOURCE_DIR
kedr=$1
src=$2
. "$(dirname "$0")/lib.sh"

cav=$src/cases/flow/cavity_re100.ini
check help 0 'usage: kedr flow CASE.ini' -- "$kedr" flow --help
check no-case 2 'no case file given' -- "$kedr" flow
check bad-option 2 "unknown option '--stpes'" -- "$kedr" flow "$cav" --stpes 3
check bad-steps 2 '--steps' -- "$kedr" flow "$cav" --steps x
check missing-file 1 'nope.ini' -- "$kedr" flow "$tmp/nope.ini"

sed 's/^nx = 32/nxx = 32/' "$cav" >"$tmp/typo.ini"
check typo 1 "typo.ini:[0-9]+: \[grid\] (lacks the required key 'nx'|unknown key 'nxx')" -- "$kedr" flow "$tmp/typo.ini"
sed 's/^stats_every = 500/stats_evry = 500/' "$cav" >"$tmp/typo2.ini"
check suggestion 1 "typo2.ini:[0-9]+: .*unknown key 'stats_evry' \(did you mean 'stats_every'\?\)" -- "$kedr" flow "$tmp/typo2.ini"
sed 's/^boundary_x_max = wall/boundary_x_max = periodic/' "$cav" >"$tmp/halfper.ini"
check half-periodic 1 "halfper.ini:[0-9]+: \[domain\] boundary_x_min: periodic on one end" -- "$kedr" flow "$tmp/halfper.ini"
sed 's/^nu = 0.01/nu = -1/' "$cav" >"$tmp/nu.ini"
check bad-nu 1 "nu.ini:[0-9]+: \[fluid\] nu" -- "$kedr" flow "$tmp/nu.ini"
sed 's/^boundary_x_min = wall/boundary_x_min = inflow/' "$cav" >"$tmp/inflow.ini"
check inflow-velocity 1 "inflow.ini.*x_min_velocity.*missing" -- "$kedr" flow "$tmp/inflow.ini"
sed 's/^dt = auto/dt = fast/' "$cav" >"$tmp/dt.ini"
check bad-dt 1 "dt.ini:[0-9]+: \[time\] dt: 'fast'" -- "$kedr" flow "$tmp/dt.ini"

sed -e 's/^dimensions = 2/dimensions = 3/' -e 's/^length = 1 1/length = 1 1 1/' \
  -e 's/^nx = 32/nx = 1580/' -e 's/^ny = 32/ny = 1580\nnz = 1580/' \
  -e 's/^boundary_y_max = wall/boundary_y_max = wall\nboundary_z_min = wall\nboundary_z_max = wall/' \
  -e 's/^y_max_velocity = 1 0/y_max_velocity = 1 0 0/' "$cav" >"$tmp/huge.ini"
check too-big 1 'huge.ini: the grid \(1580 x 1580 x 1580 cells\) needs about [0-9.]+ [kMGTPE]?B' -- "$kedr" flow "$tmp/huge.ini" --backend cpu

# a tiny run: 8 x 8 cavity, 40 steps
sed -e 's/^nx = 32/nx = 8/' -e 's/^ny = 32/ny = 8/' -e 's/^stats_every = 500/stats_every = 10/' \
  "$cav" >"$tmp/tiny.ini"
check run 0 'step 40 .*pressure [0-9]+ it.*ETA' -- "$kedr" flow "$tmp/tiny.ini" --backend cpu --steps 40 --out "$tmp/run"
cp "$tmp/out" "$tmp/run.log"
check run-chk 0 'wrote checkpoint .*/tiny.chk \(step 40' -- cat "$tmp/run.log"
check run-csv 0 '^x,y,u,v,p,vorticity' -- head -1 "$tmp/run/tiny.csv"
check run-csv-rows 0 '^65$' -- bash -c "wc -l < '$tmp/run/tiny.csv'"
check run-vti 0 '<ImageData WholeExtent="0 8 0 8 0 0"' -- cat "$tmp/run/tiny.vti"
check run-profiles 0 '^u_vertical,1,1$' -- cat "$tmp/run/tiny-profiles.csv"

# KEDR_FLOW_PROF=1 on one rank: the step by part and the pressure solve by part, to stderr
check prof-step 0 'rank 0: step by part, ms a step: advance [0-9.]+, bodies [0-9.]+, .*pressure [0-9.]+, correct' -- env KEDR_FLOW_PROF=1 "$kedr" flow "$tmp/tiny.ini" --backend cpu --steps 3 --out "$tmp/prof"
cp "$tmp/out" "$tmp/prof.log"
check prof-solver 0 'rank 0: ms a step: smoothing [0-9.]+, residual [0-9.]+, transfers [0-9.]+, coarse [0-9.]+, reductions [0-9.]+, operator [0-9.]+' -- cat "$tmp/prof.log"

# restart to step 60 equals 60 steps in one go
check restart 0 'restart from .* at step 40' -- "$kedr" flow "$tmp/tiny.ini" --backend cpu --steps 60 --out "$tmp/run" --restart "$tmp/run/tiny.chk"
check straight 0 'step 60 ' -- "$kedr" flow "$tmp/tiny.ini" --backend cpu --steps 60 --out "$tmp/straight"
if cmp -s "$tmp/run/tiny.chk" "$tmp/straight/tiny.chk" && cmp -s "$tmp/run/tiny.csv" "$tmp/straight/tiny.csv"; then
  pass
else
  fail "restart differs from the straight run"
fi
check restart-other-grid 1 'written for another grid|not a flow checkpoint' -- "$kedr" flow "$cav" --backend cpu --steps 1 --out "$tmp/x" --restart "$tmp/run/tiny.chk"
head -c 100 "$tmp/run/tiny.chk" >"$tmp/short.chk"
check restart-short 1 'short.chk' -- "$kedr" flow "$tmp/tiny.ini" --backend cpu --out "$tmp/x" --restart "$tmp/short.chk"

# a pressure solve that cannot converge: no preconditioner, 2 iterations
sed -e 's/^preconditioner = mg/preconditioner = none\nmax_iter = 2/' "$tmp/tiny.ini" >"$tmp/noconv.ini"
check no-converge 1 'did not converge in 2 iterations' -- "$kedr" flow "$tmp/noconv.ini" --backend cpu --steps 5 --out "$tmp/nc"
cp "$tmp/out" "$tmp/nc.log"
check no-converge-history 0 'residual history' -- cat "$tmp/nc.log"
check no-converge-chk 0 'wrote checkpoint .*noconv.chk \(step 0' -- cat "$tmp/nc.log"

# a fixed dt far beyond the stable step: a warning, then NaN stops the run at its step
sed -e 's/^dt = auto/dt = 5/' -e '/^cfl/d' -e 's/^end_time = 20/end_time = 1e9/' "$tmp/tiny.ini" >"$tmp/nan.ini"
check nan 1 'NaN or infinite at step [0-9]+' -- "$kedr" flow "$tmp/nan.ini" --backend cpu --steps 400 --out "$tmp/nan"
cp "$tmp/out" "$tmp/nan.log"
check nan-warning 0 'warning: dt = 5 is above the stable limit' -- cat "$tmp/nan.log"

# kedr bench flow: the Poisson rows of the solvers asked for, and an unknown one refused by name
check bench-solvers 0 'kedr mg +16\^3' -- "$kedr" bench flow --backend cpu --solvers mg --n2d 16 --n3d 16 --only poisson --repeats 1 --no-yardsticks
if grep -qE 'kedr (cg|pcg-)' "$tmp/out"; then fail "bench-solvers: rows of solvers not asked for"; else pass; fi
check bench-solvers-bad 1 "unknown solver 'pcg-foo'" -- "$kedr" bench flow --backend cpu --solvers mg,pcg-foo --only poisson
# the yardsticks as solvers: in a build with hypre, its row on the same problem (the residual
# checked: "ok"), and under mpirun over 2 ranks the yardsticks alone (kedr's rows refused there);
# in a build without it, refused by name
if "$kedr" bench flow --help | grep -q 'this build: .*hypre'; then
  # under the sanitizers, hypre's and Open MPI's leaks at exit are suppressed by library name
  # (tests/sanitizers/lsan.supp), which only the slow unwinder reaches
  [ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
  check bench-hypre 0 'hypre BoomerAMG-PCG +16\^3 .* ok$' -- "$kedr" bench flow --backend cpu --solvers hypre --n2d 16 --n3d 16 --only poisson --repeats 1
  if command -v mpirun >/dev/null; then
    mpi="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 mpirun -np 2 --oversubscribe"
    check bench-hypre-ranks 0 'hypre BoomerAMG-PCG \(2 ranks\) +16\^3 .* ok$' -- $mpi "$kedr" bench flow --backend cpu --solvers hypre --n2d 16 --n3d 16 --only poisson --repeats 1
    check bench-ranks-kedr 1 'over MPI ranks runs the yardsticks alone' -- $mpi "$kedr" bench flow --backend cpu --solvers mg,hypre --n2d 16 --n3d 16 --only poisson
  fi
else
  check bench-no-hypre 1 'hypre is not in this build' -- "$kedr" bench flow --backend cpu --solvers hypre --only poisson
fi

finish test_flow
