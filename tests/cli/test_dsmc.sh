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

# Checkpoint and restart: 20 steps, then a restart to step 30, equals 30 steps in one go.
check chk-end 0 'wrote checkpoint .*/quick.chk \(step 20\)' -- cat "$tmp/run.log"
check restart-run 0 'restart from .* at step 20' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 30 --out "$tmp/run" --seed 5 --restart "$tmp/run/quick.chk"
check straight-run 0 'step 30 ' -- "$kedr" dsmc "$quick" --backend cpu --steps 30 --out "$tmp/straight" --seed 5
if cmp -s "$tmp/run/quick.chk" "$tmp/straight/quick.chk" && cmp -s "$tmp/run/quick.csv" "$tmp/straight/quick.csv"; then
  pass
else
  fail "restart: 20 + 10 steps differ from 30 steps"
fi
head -c 100 "$tmp/run/quick.chk" >"$tmp/cut.chk"
check restart-truncated 1 'cut.chk: truncated checkpoint' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 30 --out "$tmp/x" --restart "$tmp/cut.chk"
check restart-missing 1 'nope.chk: cannot open' -- \
  "$kedr" dsmc "$quick" --backend cpu --out "$tmp/x" --restart "$tmp/nope.chk"

# checkpoint_every, PNG maps (or a warning where kedr has no PLplot), dt warnings.
sed -e 's/^stats_every = 50/stats_every = 50\ncheckpoint_every = 4\npng = yes/' "$quick" >"$tmp/png.ini"
check png-run 0 'wrote checkpoint .*/png.chk \(step 4\)' -- "$kedr" dsmc "$tmp/png.ini" --backend cpu --steps 6 --out "$tmp/png"
cp "$tmp/out" "$tmp/png.log"
if grep -q 'no PNG maps' "$tmp/png.log"; then
  check png-warning 0 'warning: no PNG maps: .*PLplot' -- cat "$tmp/png.log"
  check png-csv-kept 0 '^i,j,x' -- head -1 "$tmp/png/png.csv"
else
  for m in temperature density mach; do
    if [ "$(head -c 4 "$tmp/png/png-$m.png" | od -An -tx1 | tr -d ' \n')" = 89504e47 ]; then
      pass
    else
      fail "png-$m: no PNG written"
    fi
  done
fi
sed -e 's/^dt = 2e-6/dt = 1e-4/' "$quick" >"$tmp/dt.ini"
check dt-warning 0 'dt.ini:[0-9]+: \[run\] dt = 0.0001 s exceeds the' -- "$kedr" dsmc "$tmp/dt.ini" --backend cpu --steps 1 --out "$tmp/dt"
sed -e 's/^dt = 2e-6/dt = auto/' "$quick" >"$tmp/auto.ini"
check dt-auto 0 'dt [0-9.e-]+ s' -- "$kedr" dsmc "$tmp/auto.ini" --backend cpu --steps 1 --out "$tmp/auto"

# Out of room ([run] max_particles stands in for a full GPU): a checkpoint, and how many fit.
sed -e 's/^fill = true/fill = false/' -e 's/^particles_per_cell = 10/particles_per_cell = 10\nmax_particles = 3000/' "$quick" >"$tmp/full.ini"
check oom 1 'about 3000 particles fit' -- "$kedr" dsmc "$tmp/full.ini" --backend cpu --steps 50 --out "$tmp/full"
cp "$tmp/out" "$tmp/oom.log"
check oom-checkpoint 0 'wrote checkpoint .*/full.chk \(step [0-9]+\)' -- cat "$tmp/oom.log"
sed -e 's/^max_particles = 3000/max_particles = 100000/' "$tmp/full.ini" >"$tmp/full2.ini"
cp "$tmp/full/full.chk" "$tmp/full2.chk"
check oom-restart 0 'step 50 ' -- "$kedr" dsmc "$tmp/full2.ini" --backend cpu --steps 50 --out "$tmp/full2" --restart "$tmp/full2.chk"

# [sample] start = auto: sampling begins once the particle count is steady; a run restarted
# before that point decides the same step and ends in the same state as a straight run.
sed -e 's/^start = 100/start = auto\nsteady_window = 20/' "$quick" >"$tmp/auto.ini"
check auto-start 0 'steady flow at step [0-9]+: sampling from step [0-9]+' -- \
  "$kedr" dsmc "$tmp/auto.ini" --backend cpu --steps 120 --out "$tmp/autos" --seed 3
check auto-part 0 'wrote checkpoint' -- \
  "$kedr" dsmc "$tmp/auto.ini" --backend cpu --steps 30 --out "$tmp/autor" --seed 3
check auto-restart 0 'step 120 ' -- \
  "$kedr" dsmc "$tmp/auto.ini" --backend cpu --steps 120 --out "$tmp/autor" --seed 3 --restart "$tmp/autor/auto.chk"
if cmp -s "$tmp/autos/auto.chk" "$tmp/autor/auto.chk" && cmp -s "$tmp/autos/auto.csv" "$tmp/autor/auto.csv"; then
  pass
else
  fail "auto-restart: 30 + 90 steps differ from 120 steps"
fi

# A cylinder instead of the plate: Cd printed, surface CSV and VTK PolyData written.
sed -e 's/^type = plate/type = circle/' -e 's/^points = .*/center = 0.2 0.125\nradius = 0.04/' \
  -e 's/^start = 100/start = 10/' "$quick" >"$tmp/cyl.ini"
check cylinder 0 'body 1: Cd [0-9.]+  Cl -?[0-9.e-]+ .*reference length 0.08 m, 11 steps sampled' -- \
  "$kedr" dsmc "$tmp/cyl.ini" --backend cpu --steps 20 --out "$tmp/cyl"
check surface-csv 0 '^element,body,x,y,nx,ny,length,hits_per_step,pressure,shear,heat_flux,cp,cf,ch' -- \
  head -1 "$tmp/cyl/cyl-surface.csv"
check surface-vtp 0 '</VTKFile>' -- tail -1 "$tmp/cyl/cyl-surface.vtp"

# Case $tmp/NAME.ini run to HALF steps (seed 4), then restarted to FULL, must end as the
# straight run of FULL steps in $tmp/NAME did: the checkpoint and the cell CSV, bit for bit.
restart_matches() {
  local name=$1 half=$2 full=$3
  check "$name-part" 0 'wrote checkpoint' -- \
    "$kedr" dsmc "$tmp/$name.ini" --backend cpu --steps "$half" --out "$tmp/${name}r" --seed 4
  check "$name-restart" 0 "step $full " -- "$kedr" dsmc "$tmp/$name.ini" --backend cpu \
    --steps "$full" --out "$tmp/${name}r" --seed 4 --restart "$tmp/${name}r/$name.chk"
  if cmp -s "$tmp/$name/$name.chk" "$tmp/${name}r/$name.chk" &&
    cmp -s "$tmp/$name/$name.csv" "$tmp/${name}r/$name.csv"; then
    pass
  else
    fail "$name-restart: $half + $((full - half)) steps differ from $full steps"
  fi
}

# The 3D sphere case, made small: the grid and run shortened, sampling from step 2. Cd printed
# on the frontal area, 3D CSV / VTK ImageData / surface polygons, and a restart that matches a
# straight run bit for bit.
sphere=$src/cases/dsmc/sphere-3d.ini
cp "$src/cases/dsmc/species.ini" "$tmp/" 2>/dev/null
sed -e 's/^nx = 80/nx = 16/' -e 's/^ny = 60/ny = 12/' -e 's/^nz = 60/nz = 12/' \
  -e 's/^particles_per_cell = 10/particles_per_cell = 4/' -e 's/^start = 400/start = 2/' \
  "$sphere" >"$tmp/s3.ini"
check s3-run 0 'body 1: Cd [0-9.]+  Cl -?[0-9.e-]+ .*reference area 0.031416 m\^2, 5 steps sampled' -- \
  "$kedr" dsmc "$tmp/s3.ini" --backend cpu --steps 6 --out "$tmp/s3" --seed 4
cp "$tmp/out" "$tmp/s3.log"
check s3-grid 0 '16 x 12 x 12 cells' -- cat "$tmp/s3.log"
check s3-csv 0 '^i,j,k,x,y,z,number_density,density,ux,uy,uz,temperature' -- head -1 "$tmp/s3/s3.csv"
check s3-csv-rows 0 '^2305$' -- bash -c "wc -l < '$tmp/s3/s3.csv'"
check s3-vti 0 '<ImageData WholeExtent="0 16 0 12 0 12"' -- cat "$tmp/s3/s3.vti"
check s3-surface-csv 0 '^element,body,x,y,z,nx,ny,nz,area,hits_per_step' -- head -1 "$tmp/s3/s3-surface.csv"
check s3-vtp 0 '<Polys>' -- cat "$tmp/s3/s3-surface.vtp"
restart_matches s3 3 6
check s3-2d-restart 1 'written for another case' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 6 --out "$tmp/x" --restart "$tmp/s3r/s3.chk"

# The axisymmetric sphere case, made small: Cd along the axis on pi r^2, the surface bands'
# areas in the CSV, a restart that matches a straight run bit for bit (with radial weighting).
axi=$src/cases/dsmc/sphere-axi.ini
sed -e 's/^nx = 160/nx = 40/' -e 's/^ny = 120/ny = 30/' -e 's/^start = 600/start = 2/' \
  "$axi" >"$tmp/sa.ini"
check axi-run 0 'body 1: Cd [0-9.]+  \(drag [0-9.e-]+ N along the axis, reference area 0.031416 m\^2, 7 steps sampled' -- \
  "$kedr" dsmc "$tmp/sa.ini" --backend cpu --steps 8 --out "$tmp/sa" --seed 4
cp "$tmp/out" "$tmp/sa.log"
check axi-grid 0 '40 x 30 axisymmetric \(radially weighted\) cells' -- cat "$tmp/sa.log"
check axi-surface-csv 0 '^element,body,x,y,nx,ny,area,hits_per_step' -- head -1 "$tmp/sa/sa-surface.csv"
restart_matches sa 4 8
sed -e 's/^y_min = 0/y_min = 0\nboundary_y_min = inflow/' "$axi" >"$tmp/sab.ini"
check axi-bad-axis 1 'sab.ini:[0-9]+: \[domain\] boundary_y_min: y_min = 0 in an axisymmetric case is the axis' -- \
  "$kedr" dsmc "$tmp/sab.ini" --backend cpu --steps 1 --out "$tmp/x"

finish test_dsmc
