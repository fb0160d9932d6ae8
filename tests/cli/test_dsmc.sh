#!/usr/bin/env bash
# kedr dsmc: help, errors with exit codes, and a short run of cases/dsmc/quick.ini that writes
# the statistics, the timing table, CSV and VTK files; a cylinder variant for the surface output.
# usage: test_dsmc.sh KEDR_BINARY SOURCE_DIR
kedr=$1
src=$2
. "$(dirname "$0")/lib.sh"

quick=$src/cases/dsmc/quick.ini
check help 0 'usage: kedr dsmc CASE.ini' -- "$kedr" dsmc --help
check listed 0 'dsmc ' -- "$kedr" --help
check no-case 2 'no case file given' -- "$kedr" dsmc
check bad-option 2 "unknown option '--stpes'" -- "$kedr" dsmc "$quick" --stpes 3
check bad-steps 2 '--steps x: expected an integer' -- "$kedr" dsmc "$quick" --steps x
check two-cases 2 'more than one case file' -- "$kedr" dsmc "$quick" "$quick"
check missing-file 1 'nope.ini: cannot open' -- "$kedr" dsmc "$tmp/nope.ini"

sed 's/^nx = 50/nxx = 50/' "$quick" >"$tmp/typo.ini"
cp "$src/cases/dsmc/species.ini" "$tmp/"
check typo 1 "typo.ini:[0-9]+: \[grid\] lacks the required key 'nx'" -- "$kedr" dsmc "$tmp/typo.ini"
sed 's/^stats_every = 50/stats_evry = 50/' "$quick" >"$tmp/typo2.ini"
check suggestion 1 "unknown key 'stats_evry' \(did you mean 'stats_every'\?\)" -- "$kedr" dsmc "$tmp/typo2.ini"

check run 0 'step 20 .*particles [0-9]+ .*collisions/step [0-9]+ .*particle-steps/s .*ETA' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 20 --out "$tmp/run" --seed 5
cp "$tmp/out" "$tmp/run.log"
check run-table 0 'collisions +[0-9.]+ +[0-9.]+ +[0-9.]+%' -- cat "$tmp/run.log"
check run-csv 0 '^i,j,x,y,number_density,density,ux,uy,uz,temperature' -- head -1 "$tmp/run/quick.csv"
check run-csv-rows 0 '^1251$' -- bash -c "wc -l < '$tmp/run/quick.csv'"
check run-vti 0 '<ImageData WholeExtent="0 50 0 25 0 0"' -- cat "$tmp/run/quick.vti"
check run-vti-end 0 '</VTKFile>' -- tail -1 "$tmp/run/quick.vti"

# A cylinder instead of the plate: Cd printed, surface CSV and VTK PolyData written.
sed -e 's/^type = plate/type = circle/' -e 's/^points = .*/center = 0.2 0.125\nradius = 0.04/' \
  -e 's/^start = 100/start = 10/' "$quick" >"$tmp/cyl.ini"
check cylinder 0 'body 1: Cd [0-9.]+  Cl -?[0-9.e-]+ .*reference length 0.08 m, 11 steps sampled' -- \
  "$kedr" dsmc "$tmp/cyl.ini" --backend cpu --steps 20 --out "$tmp/cyl"
check surface-csv 0 '^element,body,x,y,nx,ny,length,hits_per_step,pressure,shear,heat_flux,cp,cf,ch' -- \
  head -1 "$tmp/cyl/cyl-surface.csv"
check surface-vtp 0 '</VTKFile>' -- tail -1 "$tmp/cyl/cyl-surface.vtp"

finish test_dsmc
