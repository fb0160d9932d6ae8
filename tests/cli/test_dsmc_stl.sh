#!/usr/bin/env bash
# kedr dsmc with a body from an STL file: cases/dsmc/sphere-stl.ini on a coarse grid runs and
# writes one surface element per triangle (CSV rows, .vtp triangles); a broken STL file stops
# the run before it starts, exit code 1, with the case file's line and the STL file's own
# triangle (and line); a 2D case refuses the type.
# usage: test_dsmc_stl.sh KEDR_BINARY SOURCE_DIR
kedr=$1
src=$2
. "$(dirname "$0")/lib.sh"

cp "$src/cases/dsmc/species.ini" "$src/cases/dsmc/sphere-stl.stl" "$tmp/"
sed -e 's/^nx = 80/nx = 16/' -e 's/^ny = 60/ny = 12/' -e 's/^nz = 60/nz = 12/' \
  "$src/cases/dsmc/sphere-stl.ini" >"$tmp/small.ini"
check run 0 '^body 1: Cd [0-9.]+' -- \
  "$kedr" dsmc "$tmp/small.ini" --backend cpu --steps 20 --sample-start 10 --out "$tmp/run"
check surface-rows 0 '^1281$' -- bash -c "wc -l < '$tmp/run/small-surface.csv'"
check surface-vtp 0 'NumberOfPoints="3840" .*NumberOfPolys="1280"' -- \
  head -c 2000 "$tmp/run/small-surface.vtp"

# 10 steps, a restart to 20, equal 20 steps in one go (the checkpoint's case hash covers every
# vertex, not the addresses of the triangle arrays)
check chk-half 0 'wrote checkpoint .*/small.chk \(step 10\)' -- \
  "$kedr" dsmc "$tmp/small.ini" --backend cpu --steps 10 --sample-start 5 --seed 7 --out "$tmp/half"
check chk-restart 0 'restart from .* at step 10' -- \
  "$kedr" dsmc "$tmp/small.ini" --backend cpu --steps 20 --sample-start 5 --seed 7 --out "$tmp/half" \
  --restart "$tmp/half/small.chk"
check chk-straight 0 'step 20 ' -- \
  "$kedr" dsmc "$tmp/small.ini" --backend cpu --steps 20 --sample-start 5 --seed 7 --out "$tmp/whole"
if cmp -s "$tmp/half/small.chk" "$tmp/whole/small.chk" && cmp -s "$tmp/half/small-surface.csv" "$tmp/whole/small-surface.csv"; then
  pass
else
  fail "restart: 10 + 10 steps differ from 20 steps"
fi

# the file cut short
head -c 3000 "$tmp/sphere-stl.stl" >"$tmp/cut.stl"
sed 's/^file = sphere-stl.stl/file = cut.stl/' "$tmp/small.ini" >"$tmp/cut.ini"
check truncated 1 'cut.ini:[0-9]+: \[body\] file: .*cut.stl: truncated binary STL: the header counts 1280 triangles .* ends in triangle 59' -- \
  "$kedr" dsmc "$tmp/cut.ini" --backend cpu --steps 2 --out "$tmp/x"
# an ASCII file with a NaN, and one with a word out of place
printf 'solid x\nfacet normal 0 0 0\nouter loop\nvertex 0 0 0\nvertex 1 nan 0\n' >"$tmp/nan.stl"
sed 's/^file = sphere-stl.stl/file = nan.stl/' "$tmp/small.ini" >"$tmp/nan.ini"
check nan 1 "nan.ini:[0-9]+: \[body\] file: .*nan.stl:5: triangle 1: 'nan' after 'vertex': expected a finite number" -- \
  "$kedr" dsmc "$tmp/nan.ini" --backend cpu --check
printf 'solid x\nfacet normal 0 0 0\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendlop\n' >"$tmp/word.stl"
sed 's/^file = sphere-stl.stl/file = word.stl/' "$tmp/small.ini" >"$tmp/word.ini"
check word 1 "word.stl:7: triangle 1: expected 'endloop', found 'endlop'" -- \
  "$kedr" dsmc "$tmp/word.ini" --backend cpu --check
# moved out of the domain
sed 's/^translate = 0.3 0.3 0.3/translate = 0.75 0.3 0.3/' "$tmp/small.ini" >"$tmp/out.ini"
check outside 1 'out.ini:[0-9]+: \[body\] file: extends over x from .*not strictly inside' -- \
  "$kedr" dsmc "$tmp/out.ini" --backend cpu --check
# a key of another type
sed 's/^scale = 0.1/scale = 0.1\nradius = 1/' "$tmp/small.ini" >"$tmp/key.ini"
check other-key 1 "key.ini:[0-9]+: \[body\] radius: not a key of a body of type stl" -- \
  "$kedr" dsmc "$tmp/key.ini" --backend cpu --check
# 2D
sed -e 's/^dimensions = 3/dimensions = 2/' -e '/^z_/d' -e '/^nz/d' -e '/boundary_z/d' -e '/^reference_area/d' \
  "$tmp/small.ini" >"$tmp/flat.ini"
check flat 1 'flat.ini:[0-9]+: \[body\] type: stl: a 3D body' -- \
  "$kedr" dsmc "$tmp/flat.ini" --backend cpu --check
finish test_dsmc_stl
