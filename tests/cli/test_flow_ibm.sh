#!/usr/bin/env bash
# kedr flow with immersed bodies: every [body.NAME] error names the file, line and key (a body
# outside the domain or too close to a wall, a shape of the other dimension, a key the shape does
# not take, a malformed point file with its own file and line); a small channel with a cylinder
# writes its force history; a restart keeps the history's rows up to its step and continues it
# as the straight run does, bit for bit; a force system that cannot converge stops the run with
# the checkpoint of the state before that step.
# usage: test_flow_ibm.sh KEDR_BINARY SOURCE_DIR
kedr=$1
src=$2
. "$(dirname "$0")/lib.sh"

cyl=$src/cases/flow/cylinder_2d1.ini
# a small version: 110 x 21 cells (h = 0.02), 40 steps
sed -e 's/^nx = 440/nx = 110/' -e 's/^ny = 82/ny = 21/' -e 's/^forces_every = 10/forces_every = 1/' \
  -e 's/^stats_every = 500/stats_every = 10/' -e 's/^end_time = 8/end_time = 100/' "$cyl" >"$tmp/c.ini"

sed 's/^center = 0.2 0.2/center = 2.5 0.2/' "$tmp/c.ini" >"$tmp/out1.ini"
check outside 1 'out1.ini:[0-9]+: \[body.cylinder\] center: .*reaches x = 2.55, outside the domain' -- "$kedr" flow "$tmp/out1.ini"
sed 's/^diameter = 0.1/diameter = 1e8/' "$tmp/c.ini" >"$tmp/big.ini"
check too-big 1 'big.ini:[0-9]+: \[body.cylinder\] diameter: the body is larger than the domain' -- "$kedr" flow "$tmp/big.ini"
sed 's/^center = 0.2 0.2/center = 0.2 0.07/' "$tmp/c.ini" >"$tmp/close.ini"
check too-close 1 'close.ini:[0-9]+: \[body.cylinder\] center: .*too close to the boundary.*y_min' -- "$kedr" flow "$tmp/close.ini"
sed 's/^diameter = 0.1/diameter = 0.1\namplitude = 0 0.12\nfrequency = 1/' "$tmp/c.ini" >"$tmp/amp.ini"
check amplitude 1 'amp.ini:[0-9]+: \[body.cylinder\] amplitude: .*in its motion' -- "$kedr" flow "$tmp/amp.ini"
sed 's/^diameter = 0.1/diameter = 0.1\namplitude = 0 0.01/' "$tmp/c.ini" >"$tmp/nofreq.ini"
check no-frequency 1 'nofreq.ini:[0-9]+: \[body.cylinder\] frequency: an oscillation needs' -- "$kedr" flow "$tmp/nofreq.ini"
sed 's/^shape = circle/shape = sphere/' "$tmp/c.ini" >"$tmp/sphere.ini"
check shape-dims 1 'sphere.ini:[0-9]+: \[body.cylinder\] shape: sphere is a 3D shape' -- "$kedr" flow "$tmp/sphere.ini"
sed 's/^shape = circle/shape = rectangle\nsize = 0.1 0.1/' "$tmp/c.ini" >"$tmp/rectd.ini"
check foreign-key 1 'rectd.ini:[0-9]+: \[body.cylinder\] diameter: only for circle' -- "$kedr" flow "$tmp/rectd.ini"
sed 's/^shape = circle/shape = circel/' "$tmp/c.ini" >"$tmp/typo.ini"
check shape-typo 1 "typo.ini:[0-9]+: \[body.cylinder\] shape.*circel.*circle" -- "$kedr" flow "$tmp/typo.ini"
sed 's/^diameter = 0.1/diameter = -0.1/' "$tmp/c.ini" >"$tmp/neg.ini"
check negative 1 'neg.ini:[0-9]+: \[body.cylinder\] diameter' -- "$kedr" flow "$tmp/neg.ini"
sed 's/^\[body.cylinder\]/[body.cylinder]\nspacing = 9/' "$tmp/c.ini" >"$tmp/spacing.ini"
check spacing 1 'spacing.ini:[0-9]+: \[body.cylinder\] spacing' -- "$kedr" flow "$tmp/spacing.ini"
sed 's/^\[pressure\]/[ibm]\ndelta = peskin5\n\n[pressure]/' "$tmp/c.ini" >"$tmp/delta.ini"
check delta 1 "delta.ini:[0-9]+: \[ibm\] delta.*peskin5" -- "$kedr" flow "$tmp/delta.ini"
sed 's/^stats_every = 500/stats_every = 500\nforces_every = 2/' "$src/cases/flow/cavity_re100.ini" >"$tmp/nobody.ini"
check forces-no-body 1 'nobody.ini:[0-9]+: \[output\] forces_every: only for cases with bodies' -- "$kedr" flow "$tmp/nobody.ini"

# a body from a point file: relative to the case file; errors name the point file and line
printf '# a square\n0.15 0.15\n0.25 0.15\n0.25 0.25\n0.15 0.25\n' >"$tmp/square.txt"
sed -e 's/^shape = circle/shape = points\nfile = square.txt/' -e '/^center = /d' -e '/^diameter = /d' "$tmp/c.ini" >"$tmp/pts.ini"
check points-run 0 'body cylinder: points, 4 points' -- "$kedr" flow "$tmp/pts.ini" --backend cpu --steps 2 --out "$tmp/pts"
printf '0.15 0.15\n0.25 x\n' >"$tmp/square.txt"
check points-bad 1 'square.txt:2: .*expected 2 numbers' -- "$kedr" flow "$tmp/pts.ini"
printf '0.15 0.15 0.3\n' >"$tmp/square.txt"
check points-3 1 'square.txt:1: 3 numbers: expected 2' -- "$kedr" flow "$tmp/pts.ini"
rm "$tmp/square.txt"
check points-missing 1 'pts.ini:[0-9]+: \[body.cylinder\] file: .*square.txt' -- "$kedr" flow "$tmp/pts.ini"

# a run: the force history, a restart, the straight run
check run 0 'step 40 .*bodies [0-9]+ it' -- "$kedr" flow "$tmp/c.ini" --backend cpu --steps 40 --out "$tmp/run"
check run-header 0 '^step,time,x,y,u,v,fx,fy,mz,cd,cl$' -- head -1 "$tmp/run/c-cylinder.csv"
check run-rows 0 '^41$' -- bash -c "wc -l < '$tmp/run/c-cylinder.csv'"
check run-drag 0 '^40,.*,[0-9.]+,[-0-9.e]+$' -- tail -1 "$tmp/run/c-cylinder.csv"
"$kedr" flow "$tmp/c.ini" --backend cpu --steps 25 --out "$tmp/re2" >/dev/null 2>&1
"$kedr" flow "$tmp/c.ini" --backend cpu --steps 60 --out "$tmp/re2x" >/dev/null 2>&1
cp "$tmp/re2x/c-cylinder.csv" "$tmp/re2/c-cylinder.csv" # a history that ran on past the checkpoint
check restart 0 'restart from .* at step 25' -- "$kedr" flow "$tmp/c.ini" --backend cpu --steps 40 --out "$tmp/re2" --restart "$tmp/re2/c.chk"
if cmp -s "$tmp/run/c-cylinder.csv" "$tmp/re2/c-cylinder.csv" && cmp -s "$tmp/run/c.chk" "$tmp/re2/c.chk"; then
  pass
else
  fail "restart: the history or the state differs from the straight run"
  diff "$tmp/run/c-cylinder.csv" "$tmp/re2/c-cylinder.csv" | head -5 >&2
fi

# the same with an oscillating body (positions and the warm start restored at the restart)
sed 's/^diameter = 0.1/diameter = 0.1\namplitude = 0 0.02\nfrequency = 2/' "$tmp/c.ini" >"$tmp/m.ini"
"$kedr" flow "$tmp/m.ini" --backend cpu --steps 40 --out "$tmp/mrun" >/dev/null 2>&1
"$kedr" flow "$tmp/m.ini" --backend cpu --steps 25 --out "$tmp/mre" >/dev/null 2>&1
check restart-moving 0 'restart from .* at step 25' -- "$kedr" flow "$tmp/m.ini" --backend cpu --steps 40 --out "$tmp/mre" --restart "$tmp/mre/m.chk"
if cmp -s "$tmp/mrun/m-cylinder.csv" "$tmp/mre/m-cylinder.csv" && cmp -s "$tmp/mrun/m.chk" "$tmp/mre/m.chk" &&
  [ "$(awk -F, 'NR > 2 && $4 != prev { n++ } { prev = $4 } END { print n }' "$tmp/mrun/m-cylinder.csv")" -gt 30 ]; then
  pass
else
  fail "restart of a moving body: the history or the state differs from the straight run (or it did not move)"
fi

# a force system that cannot converge
sed 's/^\[pressure\]/[ibm]\nmax_iter = 2\ntol = 1e-14\n\n[pressure]/' "$tmp/c.ini" >"$tmp/noconv.ini"
check ibm-noconv 1 'immersed-boundary force system of the u velocity did not converge in 2 iterations' -- "$kedr" flow "$tmp/noconv.ini" --backend cpu --steps 5 --out "$tmp/nc"
cp "$tmp/out" "$tmp/nc.log"
check ibm-noconv-chk 0 'wrote checkpoint .*noconv.chk \(step [0-9]+' -- cat "$tmp/nc.log"

finish test_flow_ibm
