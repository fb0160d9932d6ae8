#!/usr/bin/env bash
# kedr adi: help, bad command lines and case files (each naming file, line and key), the bad
# inputs of the issue (a mask without fluid, a segment of one node, Re or dt not positive, a grid
# too large, a diverging run), a tiny run with its outputs, and checkpoint and restart.
# usage: test_adi.sh KEDR_BINARY SOURCE_DIR
kedr=$1
src=$2
. "$(dirname "$0")/lib.sh"

cat >"$tmp/tiny.ini" <<'INI'
[grid]
nx = 12
ny = 8
nz = 8
h = 0.1

[flow]
re = 20

[boundary]
x_lo = inflow
x_lo_velocity = 1 0 0
x_hi = free

[time]
dt = 0.01
steps = 6

[output]
stats_every = 2
INI
tiny=$tmp/tiny.ini
check help 0 'usage: kedr adi CASE.ini' -- "$kedr" adi --help
check listed 0 'adi ' -- "$kedr" --help
check no-case 2 'no case file given' -- "$kedr" adi
check bad-option 2 "unknown option '--stpes'" -- "$kedr" adi "$tiny" --stpes 3
check bad-steps 2 '--steps' -- "$kedr" adi "$tiny" --steps x
check missing-file 1 'nope.ini' -- "$kedr" adi "$tmp/nope.ini"

sed 's/^re = 20/re = 0/' "$tiny" >"$tmp/re0.ini"
check re-zero 1 're0.ini:[0-9]+: \[flow\] re' -- "$kedr" adi "$tmp/re0.ini"
sed 's/^re = 20/re = -5/' "$tiny" >"$tmp/reneg.ini"
check re-negative 1 'reneg.ini:[0-9]+: \[flow\] re' -- "$kedr" adi "$tmp/reneg.ini"
sed 's/^dt = 0.01/dt = 0/' "$tiny" >"$tmp/dt0.ini"
check dt-zero 1 'dt0.ini:[0-9]+: \[time\] dt' -- "$kedr" adi "$tmp/dt0.ini"
sed 's/^nx = 12/nxx = 12/' "$tiny" >"$tmp/typo.ini"
check typo 1 "typo.ini:[0-9]+: \[grid\] (lacks the required key 'nx'|unknown key 'nxx')" -- "$kedr" adi "$tmp/typo.ini"
sed 's/^stats_every = 2/stats_evry = 2/' "$tiny" >"$tmp/typo2.ini"
check suggestion 1 "unknown key 'stats_evry' \(did you mean 'stats_every'\?\)" -- "$kedr" adi "$tmp/typo2.ini"
sed 's/^x_hi = free/x_hi = fre/' "$tiny" >"$tmp/kind.ini"
check bad-kind 1 "kind.ini:[0-9]+: \[boundary\] x_hi.*free" -- "$kedr" adi "$tmp/kind.ini"
sed 's/^nx = 12/nx = 65536/; s/^ny = 8/ny = 65536/; s/^nz = 8/nz = 65536/' "$tiny" >"$tmp/huge.ini"
check too-large 1 'grid too large: 65536 x 65536 x 65536 nodes need [0-9.]+ [kMGTPE]?B of host memory' -- \
  "$kedr" adi "$tmp/huge.ini" --backend cpu

# Masks: a depth map without water; a column one node deep (a segment of one node); a bad map.
mask() { # mask FILE DEPTH [I J D]: a 12 x 8 map of DEPTH, node (I, J) at D
  { echo "kedr-adi-depth 12 8"
    for j in 7 6 5 4 3 2 1 0; do
      row=""
      for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
        d=$2
        if [ $# -gt 2 ] && [ "$i" = "$3" ] && [ "$j" = "$4" ]; then d=$5; fi
        row="$row $d"
      done
      echo "$row"
    done; } >"$1"
}
sed 's/^h = 0.1/h = 0.1\nmask = m.txt/' "$tiny" >"$tmp/masked.ini"
mask "$tmp/m.txt" 0
check mask-dry 1 'masked.ini:[0-9]+: \[grid\] mask.*no fluid node' -- "$kedr" adi "$tmp/masked.ini"
mask "$tmp/m.txt" 5 4 4 1
check mask-one-node 1 'masked.ini:[0-9]+: \[grid\] mask.*segment of one fluid node at node \(4, 4, 7\) along z' -- \
  "$kedr" adi "$tmp/masked.ini"
mask "$tmp/m.txt" 5 4 4 x
check mask-bad-number 1 'm.txt:[0-9]+: depth 5 of row 4' -- "$kedr" adi "$tmp/masked.ini"
echo "kedr-adi-depth 10 8" >"$tmp/m.txt"
check mask-size 1 'm.txt:1: a depth map of 10 x 8 nodes for a grid of 12 x 8' -- "$kedr" adi "$tmp/masked.ini"
mask "$tmp/m.txt" 5
check mask-run 0 'step 6 ' -- "$kedr" adi "$tmp/masked.ini" --backend cpu --out "$tmp/masked"

# A tiny run: progress, outputs, checkpoint.
check run 0 'step 6 +t 0.06 +global 4 +change [0-9.e+-]+ +div rms [0-9.e+-]+ .*ETA' -- \
  "$kedr" adi "$tiny" --backend cpu --out "$tmp/run"
cp "$tmp/out" "$tmp/run.log"
check run-chk 0 'wrote checkpoint .*/tiny.chk \(step 6\)' -- cat "$tmp/run.log"
check run-csv 0 '^step,time,global_iterations,change,continuity_rms' -- head -1 "$tmp/run/tiny.csv"
check run-csv-rows 0 '^7$' -- bash -c "wc -l < '$tmp/run/tiny.csv'"
check run-vti 0 '<ImageData WholeExtent="0 11 0 7 0 7"' -- cat "$tmp/run/tiny.vti"
check run-vti-end 0 '</VTKFile>' -- tail -1 "$tmp/run/tiny.vti"
if grep -q 'no PNG' "$tmp/run.log"; then pass
elif [ "$(head -c 4 "$tmp/run/tiny.png" | od -An -tx1 | tr -d ' \n')" = 89504e47 ]; then pass
else fail "run: no PNG and no warning"; fi

# Restart: 3 steps, then a restart to 6, equals 6 in one go.
check part 0 'step 3 ' -- "$kedr" adi "$tiny" --backend cpu --steps 3 --out "$tmp/part"
check restart 0 'restart from .* at step 3' -- \
  "$kedr" adi "$tiny" --backend cpu --out "$tmp/part" --restart "$tmp/part/tiny.chk"
if cmp -s "$tmp/part/tiny.chk" "$tmp/run/tiny.chk" && cmp -s "$tmp/part/tiny.csv" "$tmp/run/tiny.csv"; then
  pass
else
  fail "restart: 3 + 3 steps differ from 6 steps"
fi
head -c 100 "$tmp/run/tiny.chk" >"$tmp/cut.chk"
check restart-truncated 1 'cut.chk: .*(truncated|too short)' -- \
  "$kedr" adi "$tiny" --backend cpu --out "$tmp/x" --restart "$tmp/cut.chk"
cp "$tmp/run/tiny.chk" "$tmp/flip.chk"
printf '\x01' | dd of="$tmp/flip.chk" bs=1 seek=200 conv=notrunc 2>/dev/null
check restart-corrupt 1 'flip.chk: corrupt checkpoint' -- \
  "$kedr" adi "$tiny" --backend cpu --out "$tmp/x" --restart "$tmp/flip.chk"
sed 's/^nx = 12/nx = 13/' "$tiny" >"$tmp/other.ini"
check restart-other-grid 1 'a checkpoint of a 12 x 8 x 8 grid; the case.s is 13 x 8 x 8' -- \
  "$kedr" adi "$tmp/other.ini" --backend cpu --out "$tmp/x" --restart "$tmp/run/tiny.chk"

# A diverging run: the speed passes velocity_limit at step 4 (the flow accelerates towards the
# inflow's 1); the run stops there, and the checkpoint holds step 3, from which a run restarts.
sed 's/^\[output\]/[solver]\nvelocity_limit = 0.45\n\n[output]/; s/^dt = 0.01/dt = 0.05/' "$tiny" >"$tmp/div.ini"
check diverge 1 'diverged at step [0-9]+ .*velocity_limit; the fields are kept at step [0-9]+' -- \
  "$kedr" adi "$tmp/div.ini" --backend cpu --out "$tmp/div"
cp "$tmp/out" "$tmp/div.log"
step=$(sed -n 's/.*the fields are kept at step \([0-9]*\).*/\1/p' "$tmp/div.log")
check diverge-chk 0 "wrote the last good step's checkpoint .*/div.chk \(step $step\)" -- cat "$tmp/div.log"
check diverge-restart 0 "restart from .* at step $step" -- \
  "$kedr" adi "$tmp/div.ini" --backend cpu --out "$tmp/div" --restart "$tmp/div/div.chk" --steps "$step"

# Ctrl-C: the run finishes its step, writes its checkpoint and fields, exits 130; a restart
# from the checkpoint continues.
"$kedr" adi "$tiny" --backend cpu --steps 100000000 --out "$tmp/int" >"$tmp/int.log" 2>&1 &
pid=$!
for _ in $(seq 200); do grep -q '^step 50 ' "$tmp/int.log" 2>/dev/null && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
got=$?
if [ "$got" -eq 130 ] && grep -qE 'interrupted \(signal 2\) after step [0-9]+' "$tmp/int.log" &&
  grep -q 'wrote checkpoint .*/int/tiny.chk' "$tmp/int.log" && [ -s "$tmp/int/tiny.vti" ]; then
  pass
else
  fail "interrupt: exit $got (want 130), or no checkpoint and fields: $(tail -5 "$tmp/int.log")"
fi
at=$(sed -nE 's/.*interrupted \(signal 2\) after step ([0-9]+).*/\1/p' "$tmp/int.log")
check interrupt-restart 0 "restart from .* at step ${at:-x} " -- "$kedr" adi "$tiny" --backend cpu \
  --steps $((${at:-0} + 4)) --out "$tmp/int" --restart "$tmp/int/tiny.chk"

name=$(printf 'n%.0s' $(seq 150))
cp "$tiny" "$tmp/$name.ini"
check long-name 1 'the case name has 150 bytes; output files take names of at most 127' -- \
  "$kedr" adi "$tmp/$name.ini" --backend cpu

check bench-help 0 'usage: kedr bench adi' -- "$kedr" bench adi --help
check bench 0 'Z dir .*x' -- "$kedr" bench adi --backend cpu --n 12 --repeats 1
finish test_adi
