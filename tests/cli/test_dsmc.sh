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
check typo 1 "typo.ini:[0-9]+: \[grid\] (lacks the required key 'nx'|unknown key 'nxx')" -- "$kedr" dsmc "$tmp/typo.ini"
sed 's/^stats_every = 50/stats_evry = 50/' "$quick" >"$tmp/typo2.ini"
check suggestion 1 "unknown key 'stats_evry' \(did you mean 'stats_every'\?\)" -- "$kedr" dsmc "$tmp/typo2.ini"

check run 0 'step 20 .*particles [0-9]+ .*collisions/step [0-9]+ .*particle-steps/s .*ETA' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 20 --out "$tmp/run" --seed 5 --sample-start 10
cp "$tmp/out" "$tmp/run.log"
check run-table 0 'collisions +[0-9.]+ +[0-9.]+ +[0-9.]+%' -- cat "$tmp/run.log"
check run-estimate 0 '^estimate: 1.25e\+04 particles, [0-9.e+]+ collision candidates a step' -- cat "$tmp/run.log"
check run-csv 0 '^i,j,x,y,number_density,density,ux,uy,uz,temperature.*,mfp_over_cell$' -- head -1 "$tmp/run/quick.csv"
check run-csv-rows 0 '^1251$' -- bash -c "wc -l < '$tmp/run/quick.csv'"
check run-vti 0 '<ImageData WholeExtent="0 50 0 25 0 0"' -- cat "$tmp/run/quick.vti"
check run-vti-end 0 '</VTKFile>' -- tail -1 "$tmp/run/quick.vti"

# [output] vtk = binary (the default): the same grid with appended (compressed where kedr has
# zlib) data, for the cells and the surface, smaller than vtk = ascii; an unknown format is
# refused with its line.
sed -e 's/^stats_every = 50/stats_every = 50\nvtk = binary/' "$quick" >"$tmp/bin.ini"
check vtk-binary 0 'wrote .*/bin.vti' -- \
  "$kedr" dsmc "$tmp/bin.ini" --backend cpu --steps 20 --out "$tmp/bin" --seed 5 --sample-start 10
check vtk-binary-head 0 '<DataArray type="Float64" Name="temperature" format="appended" offset="[0-9]+"/>' -- \
  head -c 2000 "$tmp/bin/bin.vti"
check vtk-binary-surface 0 'Name="cp" format="appended"' -- head -c 3000 "$tmp/bin/bin-surface.vtp"
sed -e 's/^stats_every = 50/stats_every = 50\nvtk = ascii/' "$quick" >"$tmp/txt.ini"
check vtk-ascii 0 'wrote .*/txt.vti' -- \
  "$kedr" dsmc "$tmp/txt.ini" --backend cpu --steps 20 --out "$tmp/txt" --seed 5 --sample-start 10
check vtk-ascii-head 0 '<DataArray type="Float64" Name="[a-z_]+" format="ascii"' -- \
  head -c 2000 "$tmp/txt/txt.vti"
if [ "$(stat -c %s "$tmp/bin/bin.vti")" -lt "$(stat -c %s "$tmp/txt/txt.vti")" ]; then pass; else
  fail "vtk-binary: the binary .vti is no smaller than the text one"; fi
sed -e 's/^stats_every = 50/stats_every = 50\nvtk = gzip/' "$quick" >"$tmp/badvtk.ini"
check vtk-bad 1 'badvtk.ini:[0-9]+: \[output\] vtk' -- "$kedr" dsmc "$tmp/badvtk.ini" --backend cpu --steps 1 --out "$tmp/x"
# [output] csv = surface, vti = surface: the body's files only, not the cells' (large 3D cases);
# any other word is refused with its line and the three choices.
sed -e 's/^stats_every = 50/stats_every = 50\ncsv = surface\nvti = surface/' "$quick" >"$tmp/surf.ini"
check surface-only 0 'wrote .*/surf-surface.vtp' -- \
  "$kedr" dsmc "$tmp/surf.ini" --backend cpu --steps 20 --out "$tmp/surf" --seed 5 --sample-start 10
check surface-only-files 0 '^surf-surface.csv surf-surface.vtp surf.chk $' -- \
  bash -c "cd '$tmp/surf' && LC_ALL=C ls | tr '\n' ' '"
sed -e 's/^stats_every = 50/stats_every = 50\ncsv = cells/' "$quick" >"$tmp/badcsv.ini"
check surface-bad 1 "badcsv.ini:[0-9]+: \\[output\\] csv: 'cells': expected true, false or surface" -- \
  "$kedr" dsmc "$tmp/badcsv.ini" --backend cpu --steps 1 --out "$tmp/x"

# [output] stats_file: a row of the chosen columns every stats_every steps, CSV or JSON lines; a
# restart appends; an unknown column is refused with its line and the valid names.
sed -e 's/^stats_every = 50/stats_every = 5\nstats_file = st.csv\nstats_columns = step, time,particles,collisions,t_move,wall/' "$quick" >"$tmp/sf.ini"
check stats-file 0 'stats: .*/sf/st.csv every 5 steps \(CSV\)' -- "$kedr" dsmc "$tmp/sf.ini" --backend cpu --steps 20 --out "$tmp/sf"
check stats-file-head 0 '^step,time,particles,collisions,t_move,wall$' -- head -1 "$tmp/sf/st.csv"
check stats-file-rows 0 '^5$' -- bash -c "wc -l < '$tmp/sf/st.csv'"
check stats-file-row 0 '^20,4e-05,[0-9]+,[0-9]+,[0-9.e-]+,[0-9.e-]+$' -- tail -1 "$tmp/sf/st.csv"
sed -e 's/st.csv/st.jsonl/' "$tmp/sf.ini" >"$tmp/sj.ini"
check stats-jsonl 0 'JSON lines' -- "$kedr" dsmc "$tmp/sj.ini" --backend cpu --steps 12 --out "$tmp/sf"
check stats-jsonl-restart 0 'restart from' -- "$kedr" dsmc "$tmp/sj.ini" --backend cpu --steps 17 --out "$tmp/sf" --restart "$tmp/sf/sj.chk"
check stats-jsonl-rows 0 '^5$' -- bash -c "wc -l < '$tmp/sf/st.jsonl'"
check stats-jsonl-last 0 '^\{"step": 17, "time": 3.4e-05, "particles": [0-9]+, "collisions": [0-9]+, "t_move": [0-9.e-]+, "wall": [0-9.e-]+\}$' -- tail -1 "$tmp/sf/st.jsonl"
# the rows the two runs share agree with the CSV run's
if [ "$(sed -n 2p "$tmp/sf/st.csv" | cut -d, -f1-4)" = "$(sed -n 1p "$tmp/sf/st.jsonl" | sed -E 's/\{"step": ([0-9]+), "time": ([^,]+), "particles": ([0-9]+), "collisions": ([0-9]+),.*/\1,\2,\3,\4/')" ]; then pass; else
  fail "stats-jsonl: step 5 differs from the CSV's"; fi
sed -e 's/^stats_every = 50/stats_every = 5\nstats_file = st.csv\nstats_columns = step,partcles/' "$quick" >"$tmp/sbad.ini"
check stats-bad-column 1 "sbad.ini:[0-9]+: \[output\] stats_columns: unknown column 'partcles' \(did you mean 'particles'\?\); the columns are: step, time, particles" -- \
  "$kedr" dsmc "$tmp/sbad.ini" --backend cpu --steps 1 --out "$tmp/x"

# Checkpoint and restart: 20 steps, then a restart to step 30, equals 30 steps in one go.
check chk-end 0 'wrote checkpoint .*/quick.chk \(step 20\)' -- cat "$tmp/run.log"
check restart-run 0 'restart from .* at step 20' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 30 --out "$tmp/run" --seed 5 --sample-start 10 --restart "$tmp/run/quick.chk"
check straight-run 0 'step 30 ' -- "$kedr" dsmc "$quick" --backend cpu --steps 30 --out "$tmp/straight" --seed 5 --sample-start 10
if cmp -s "$tmp/run/quick.chk" "$tmp/straight/quick.chk" && cmp -s "$tmp/run/quick.csv" "$tmp/straight/quick.csv"; then
  pass
else
  fail "restart: 20 + 10 steps differ from 30 steps"
fi

# A mixture (quick.ini in air): each species' number density n_NAME and mole fraction x_NAME
# after the other fields, the densities adding up to number_density; 20 + 10 steps equal 30;
# a checkpoint without the species' sums (an older kedr's: its header's count of sums, at byte
# 124, less the three species) is refused; a PNG map of each species' mole fraction.
sed -e 's/^gas = Ar/gas = air/' -e 's/^stats_every = 50/stats_every = 50\npng = yes/' "$quick" >"$tmp/mix.ini"
check mix-run 0 'wrote .*/mix.vti' -- \
  "$kedr" dsmc "$tmp/mix.ini" --backend cpu --steps 20 --out "$tmp/mix" --seed 5 --sample-start 10
cp "$tmp/out" "$tmp/mix.log"
check mix-csv 0 ',mfp_over_cell,n_N2,n_O2,n_Ar,x_N2,x_O2,x_Ar$' -- head -1 "$tmp/mix/mix.csv"
if grep -q 'no PNG maps' "$tmp/mix.log"; then
  check mix-png-warning 0 'warning: no PNG maps: .*PLplot' -- cat "$tmp/mix.log"
else
  for m in temperature x_N2 x_O2 x_Ar; do
    if [ "$(head -c 4 "$tmp/mix/mix-$m.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e47 ]; then
      pass
    else
      fail "mix-$m: no PNG written"
    fi
  done
fi
check mix-vti 0 'Name="n_O2".*Name="x_Ar"' -- bash -c "head -c 4000 '$tmp/mix/mix.vti' | tr -d '\n'"
check mix-sums 0 '^rows [1-9][0-9]+ bad 0$' -- awk -F, 'NR == 1 { for (k = 1; k <= NF; k++) c[$k] = k; next }
  $c["particles_per_cell"] > 0 { n = $c["n_N2"] + $c["n_O2"] + $c["n_Ar"]; x = $c["x_N2"] + $c["x_O2"] + $c["x_Ar"]
    rows++; if ((n - $c["number_density"])^2 > (1e-8 * $c["number_density"])^2 || (x - 1)^2 > 1e-16) bad++ }
  END { print "rows", rows, "bad", bad + 0 }' "$tmp/mix/mix.csv"
"$kedr" dsmc "$tmp/mix.ini" --backend cpu --steps 30 --out "$tmp/mix" --seed 5 --sample-start 10 \
  --restart "$tmp/mix/mix.chk" >/dev/null 2>&1
"$kedr" dsmc "$tmp/mix.ini" --backend cpu --steps 30 --out "$tmp/mixs" --seed 5 --sample-start 10 >/dev/null 2>&1
if cmp -s "$tmp/mix/mix.chk" "$tmp/mixs/mix.chk" && cmp -s "$tmp/mix/mix.csv" "$tmp/mixs/mix.csv"; then
  pass
else
  fail "mixture restart: 20 + 10 steps differ from 30 steps"
fi
cp "$tmp/mix/mix.chk" "$tmp/older.chk"
nacc=$(od -An -t u4 -j 124 -N 4 "$tmp/older.chk" | tr -d ' ')
printf "$(printf '\\x%02x' $((nacc - 3)))" | dd of="$tmp/older.chk" bs=1 seek=124 conv=notrunc 2>/dev/null
check mix-older 1 'older.chk: written by an older kedr: its sample sums have no per-species rows \(11 sums; this run of 3 species keeps 14\)' -- \
  "$kedr" dsmc "$tmp/mix.ini" --backend cpu --steps 40 --out "$tmp/x" --seed 5 --sample-start 10 --restart "$tmp/older.chk"

head -c 100 "$tmp/run/quick.chk" >"$tmp/cut.chk"
check restart-truncated 1 'cut.chk: truncated checkpoint' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 30 --out "$tmp/x" --restart "$tmp/cut.chk"
check restart-missing 1 'nope.chk: cannot open' -- \
  "$kedr" dsmc "$quick" --backend cpu --out "$tmp/x" --restart "$tmp/nope.chk"

# checkpoint_every, PNG maps (or a warning where kedr has no PLplot), dt warnings.
sed -e 's/^stats_every = 50/stats_every = 50\ncheckpoint_every = 4\npng = yes/' "$quick" >"$tmp/png.ini"
check png-run 0 'wrote checkpoint .*/png.chk \(step 4\)' -- "$kedr" dsmc "$tmp/png.ini" --backend cpu --steps 6 --out "$tmp/png" --sample-start 2
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

# [sample] start = auto: sampling begins once the particle count and energy are steady; a run
# restarted before that point decides the same step and ends in the same state as a straight run.
sed -e 's/^start = 100/start = auto\nsteady_window = 20/' "$quick" >"$tmp/auto.ini"
check auto-start 0 'steady flow at step [0-9]+: sampling from step [0-9]+' -- \
  "$kedr" dsmc "$tmp/auto.ini" --backend cpu --steps 500 --out "$tmp/autos" --seed 3
check auto-part 0 'wrote checkpoint' -- \
  "$kedr" dsmc "$tmp/auto.ini" --backend cpu --steps 30 --out "$tmp/autor" --seed 3
check auto-restart 0 'step 500 ' -- \
  "$kedr" dsmc "$tmp/auto.ini" --backend cpu --steps 500 --out "$tmp/autor" --seed 3 --restart "$tmp/autor/auto.chk"
if cmp -s "$tmp/autos/auto.chk" "$tmp/autor/auto.chk" && cmp -s "$tmp/autos/auto.csv" "$tmp/autor/auto.csv"; then
  pass
else
  fail "auto-restart: 30 + 470 steps differ from 500 steps"
fi
check auto-too-short 0 'this run will never sample: \[sample\] start = auto needs at least 4 windows of 20 steps \(80 steps\)' -- \
  "$kedr" dsmc "$tmp/auto.ini" --backend cpu --steps 50 --out "$tmp/autoshort"
cp "$tmp/out" "$tmp/autoshort.log"
check auto-not-found 0 'nothing was sampled: the flow was not found steady by step 50' -- cat "$tmp/autoshort.log"

# A run that ends before [sample] start says so before the first step and at the end, and writes
# no all-zero fields; --sample-start moves the start (auto included).
check never-sample 0 'this run will never sample: sampling starts at step 100, after the last step \(20\): give --sample-start N' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 20 --out "$tmp/never"
cp "$tmp/out" "$tmp/never.log"
check never-sample-end 0 'nothing was sampled: .*no fields written' -- cat "$tmp/never.log"
if [ -e "$tmp/never/quick.csv" ] || [ -e "$tmp/never/quick.vti" ] || [ ! -e "$tmp/never/quick.chk" ]; then
  fail "never-sample: fields written, or no checkpoint"
else
  pass
fi
check sample-start 0 'wrote .*/quick.csv' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 20 --out "$tmp/ss" --sample-start 15
check sample-start-auto 0 'once the flow is steady' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 2 --out "$tmp/ssa" --sample-start auto
check check-only 0 '^plan: sampling from step 100 every 1' -- "$kedr" dsmc "$quick" --backend cpu --check --out "$tmp/chk"
if [ -e "$tmp/chk" ]; then fail "--check wrote $tmp/chk"; else pass; fi
check sample-start-bad 2 '--sample-start soon: expected an integer' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 2 --out "$tmp/x" --sample-start soon

# Bounded work: a gas 10^10 times denser than quick.ini's would need far more collision
# candidates than a cell tries; refused with the estimate unless --force.
sed -e 's/^number_density = 1e20/number_density = 1e30/' "$quick" >"$tmp/dense.ini"
check dense 1 'dense would take about [0-9.e+]+ collision candidates a step .* use --force to run anyway' -- \
  "$kedr" dsmc "$tmp/dense.ini" --backend cpu --out "$tmp/dense"
check dense-force 0 'wrote checkpoint .*\(step 0\)' -- \
  "$kedr" dsmc "$tmp/dense.ini" --backend cpu --out "$tmp/dense" --force --steps 0

# Names that do not fit are errors naming the option or key and the limit.
long=$(printf 'd%.0s' $(seq 600))
check long-out 2 '--out: a path of 605 bytes; at most 511' -- \
  "$kedr" dsmc "$quick" --backend cpu --steps 1 --out "/tmp/$long"
name=$(printf 'n%.0s' $(seq 150))
cp "$quick" "$tmp/$name.ini"
check long-name 1 'the case name .* has 150 bytes; output files take names of at most 127' -- \
  "$kedr" dsmc "$tmp/$name.ini" --backend cpu --steps 1 --out "$tmp/x"

# Ctrl-C: the run finishes its step, writes its checkpoint and the fields so far, exits 130;
# a restart from the checkpoint continues.
"$kedr" dsmc "$quick" --backend cpu --steps 1000000 --out "$tmp/int" --seed 2 --sample-start 5 \
  >"$tmp/int.log" 2>&1 &
pid=$!
for _ in $(seq 200); do grep -q '^step 50 ' "$tmp/int.log" 2>/dev/null && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
got=$?
if [ "$got" -eq 130 ] && grep -qE 'interrupted \(signal 2\) after step [0-9]+' "$tmp/int.log" &&
  grep -q 'wrote checkpoint .*/int/quick.chk' "$tmp/int.log" && [ -s "$tmp/int/quick.csv" ]; then
  pass
else
  fail "interrupt: exit $got (want 130), or no checkpoint and fields: $(tail -5 "$tmp/int.log")"
fi
at=$(sed -nE 's/.*interrupted \(signal 2\) after step ([0-9]+).*/\1/p' "$tmp/int.log")
check interrupt-restart 0 "restart from .* at step ${at:-x} " -- "$kedr" dsmc "$quick" --backend cpu \
  --steps $((${at:-0} + 10)) --out "$tmp/int" --seed 2 --sample-start 5 --restart "$tmp/int/quick.chk"
cp "$tmp/out" "$tmp/intr.log"
check interrupt-restart-end 0 "step $((${at:-0} + 10)) " -- cat "$tmp/intr.log"

# Unsteady output: windows of 10 sampled steps to .vti files listed in a .pvd; a restart keeps
# the earlier windows in the series and adds its own.
check window 0 'wrote .*quick.vti' -- "$kedr" dsmc "$quick" --backend cpu --steps 30 \
  --sample-start 10 --output-every 10 --out "$tmp/win"
check window-files 0 'quick-w000029.vti' -- ls "$tmp/win"
check window-pvd 0 'file="quick-w000019.vti"' -- cat "$tmp/win/quick.pvd"
check window-restart 0 'file="quick-w000039.vti"' -- bash -c "\"$kedr\" dsmc \"$quick\" --backend cpu \
  --steps 40 --sample-start 10 --output-every 10 --out \"$tmp/win\" --restart \"$tmp/win/quick.chk\" >/dev/null && \
  grep -c DataSet \"$tmp/win/quick.pvd\" | grep -qx 3 && cat \"$tmp/win/quick.pvd\""
check window-bad 2 '--output-every x: expected an integer' -- "$kedr" dsmc "$quick" --output-every x

# The shipped cases, with their own steps, sample something (none says it never will); the
# demo's case (make demo) loads without a warning.
for f in "$src"/cases/dsmc/*.ini; do
  case $f in */species.ini | */*-species.ini) continue ;; esac  # species files, not cases
  check "shipped-$(basename "$f")" 0 '^plan: sampling' -- "$kedr" dsmc "$f" --backend cpu --check
  if grep -q 'will never sample' "$tmp/out"; then fail "shipped $(basename "$f") never samples"; else pass; fi
done
check demo-clean 0 'plan: sampling from step 1200' -- "$kedr" dsmc "$src/cases/dsmc/seed-test1.ini" --backend cpu --check
if grep -q 'warning' "$tmp/out"; then fail "demo case warns: $(grep warning "$tmp/out")"; else pass; fi

finish test_dsmc
