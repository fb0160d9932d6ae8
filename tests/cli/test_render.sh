#!/bin/bash
# kedr render and kedr bench render from the command line: a small render of each shipped scene's
# kind, the JSON record, and bad input (exit 2 for a bad command line, 1 for a bad scene, each
# message naming the file, line or option).
kedr=$1
src=$2
. "$(dirname "$0")/lib.sh"
cases=$src/cases/render

check cornell 0 "wrote .*c.png" -- "$kedr" render "$cases/cornell.ini" --backend cpu --size 48x48 \
  --out "$tmp/c.png" --json "$tmp/c.json"
if [ -s "$tmp/c.png" ] && head -c 8 "$tmp/c.png" | od -c | grep -q "P   N   G"; then pass; else fail "cornell.png is a PNG"; fi
if python3 -m json.tool "$tmp/c.json" >/dev/null && grep -q '"rays": {"primary": 2304' "$tmp/c.json" && grep -q '"accel": "bvh"' "$tmp/c.json"; then
  pass; else fail "c.json holds the rays and the accelerator"; fi
for accel in grid kdtree kdtree-bf bvh brute; do
  check "teapot $accel" 0 "rendering 40x30, 2 spp, depth 1, $accel \(woop test\)" -- "$kedr" render \
    "$cases/teapot.ini" --backend cpu --accel $accel --test woop --size 40x30 --spp 2 --depth 1 \
    --out "$tmp/t.png"
done
check "kernel both" 0 "images   mega and wave identical, bit for bit" -- "$kedr" render "$cases/teapot.ini" \
  --backend cpu --size 40x30 --spp 2 --kernel both --repeats 2 --out "$tmp/w.png" --json "$tmp/w.json"
if python3 -m json.tool "$tmp/w.json" >/dev/null && grep -q '"kernel": "wave", "frame_s"' "$tmp/w.json" && grep -q '"images_identical": true' "$tmp/w.json"; then
  pass; else fail "w.json holds both kernels' frames"; fi
check "kernel wave" 0 "frame    wave: " -- "$kedr" render "$cases/cornell.ini" --backend cpu --size 24x24 --kernel wave --out "$tmp/w.png"
check stadium 0 "wrote" -- "$kedr" render "$cases/stadium.ini" --backend cpu --size 32x24 --out "$tmp/s.png"

# bad command lines: exit 2
check "no scene" 2 "no scene file given" -- "$kedr" render
check "bad size" 2 "--size 10by10: expected WxH" -- "$kedr" render "$cases/cornell.ini" --size 10by10
check "bad accel" 2 "--accel octree: expected grid, kdtree, kdtree-bf, bvh, lbvh or brute" -- "$kedr" render "$cases/cornell.ini" --accel octree
# the kd-tree's two traversals find the same hits: the same image, byte for byte
"$kedr" render "$cases/teapot.ini" --backend cpu --accel kdtree --size 40x30 --out "$tmp/kd.png" >/dev/null 2>&1
"$kedr" render "$cases/teapot.ini" --backend cpu --accel kdtree-bf --size 40x30 --out "$tmp/kdbf.png" >/dev/null 2>&1
if [ -s "$tmp/kd.png" ] && cmp -s "$tmp/kd.png" "$tmp/kdbf.png"; then pass; else fail "kdtree and kdtree-bf images differ"; fi
check "bad spp" 2 "--spp 0: expected an integer from 1" -- "$kedr" render "$cases/cornell.ini" --spp 0
check "bad kernel" 2 "--kernel fast: expected mega, wave or both" -- "$kedr" render "$cases/cornell.ini" --kernel fast
check "bad repeats" 2 "--repeats 0: expected an integer from 1" -- "$kedr" render "$cases/cornell.ini" --repeats 0
check "unknown option" 2 "unknown option '--fast'" -- "$kedr" render "$cases/cornell.ini" --fast
check "help" 0 "usage: kedr render SCENE.ini" -- "$kedr" render --help

# bad scenes: exit 1, the file and line named
check "missing scene" 1 "nothere.ini" -- "$kedr" render "$tmp/nothere.ini" --backend cpu
printf '[camera]\neye = 0 0 5\nlook_at = 0 0 0\n[material.m]\n[sphere.a]\ncenter = 0 0\nradius = 1\nmaterial = m\n' >"$tmp/bad.ini"
check "malformed scene" 1 "bad.ini:6: .*center.*expected 3" -- "$kedr" render "$tmp/bad.ini" --backend cpu --out "$tmp/b.png"
printf 'v 0 0 0\nv 1 0 0\nf 1 2 3\n' >"$tmp/bad.obj"
printf '[camera]\neye = 0 0 5\nlook_at = 0 0 0\n[material.m]\n[mesh.a]\nfile = bad.obj\nmaterial = m\n' >"$tmp/obj.ini"
check "malformed OBJ" 1 "bad.obj:3: vertex 3" -- "$kedr" render "$tmp/obj.ini" --backend cpu --out "$tmp/b.png"
printf '[camera]\neye = 0 0 5\nlook_at = 0 0 0\n[material.m]\n[light.a]\ncorner = 0 0 0\nedge1 = 1 0 0\nedge2 = 0 0 0\n' >"$tmp/light.ini"
check "zero-area light" 1 "light.ini:8: \[light.a\] edge2: the light has zero area" -- "$kedr" render "$tmp/light.ini" --backend cpu --out "$tmp/b.png"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nv nan 0 0\nv 2 0 0\nf 1 2 3\nf 1 2 4\nf 1 2 5\n' >"$tmp/skip.obj"
printf '[camera]\neye = 0 0 5\nlook_at = 0 0 0\n[material.m]\n[mesh.a]\nfile = skip.obj\nmaterial = m\n' >"$tmp/skip.ini"
check "skipped faces" 0 "skipped 1 faces with NaN or infinite vertices and 1 of zero area" -- "$kedr" render "$tmp/skip.ini" --backend cpu --size 16x16 --out "$tmp/k.png"
check "unwritable out" 1 "--out" -- "$kedr" render "$cases/cornell.ini" --backend cpu --out "$tmp/no/such/dir/x.png"

check "bench" 0 "bvh" -- "$kedr" bench render --max-triangles 1000 --size 64x36 --repeats 1 --json "$tmp/b.json"
if python3 -m json.tool "$tmp/b.json" >/dev/null && grep -q '"suite": "render"' "$tmp/b.json" && grep -q '"accel": "kdtree"' "$tmp/b.json" && grep -q '"accel": "kdtree-bf"' "$tmp/b.json"; then pass; else fail "bench record"; fi
mkdir -p "$tmp/frames" && cp "$cases/teapot.ini" "$tmp/frames/"
check "bench frames" 0 "teapot .* wave .* identical" -- "$kedr" bench render --frames "$tmp/frames" --backend cpu --size 32x18 --repeats 2 --json "$tmp/f.json"
if python3 -m json.tool "$tmp/f.json" >/dev/null && grep -q '"suite": "render-frames"' "$tmp/f.json" && grep -q '"kernel": "wave"' "$tmp/f.json"; then pass; else fail "frames record"; fi
mkdir -p "$tmp/empty"
check "bench frames, no scene" 2 "no .ini scene file there" -- "$kedr" bench render --frames "$tmp/empty" --backend cpu
finish test_render
