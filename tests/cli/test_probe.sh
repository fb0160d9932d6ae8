#!/usr/bin/env bash
# kedr probe: help, bad subcommands and options (exit 2), the GPU-only measurements without a GPU
# (exit 3, saying what is missing), and small runs of bandwidth, offset, stride and transpose on
# the cpu with their tables, JSON and plots checked. With a GPU, the GPU measurements run small.
# usage: test_probe.sh KEDR_BINARY SOURCE_DIR
kedr=$1
. "$(dirname "$0")/lib.sh"

check help 0 'usage: kedr probe SUBCOMMAND' -- "$kedr" probe --help
check sub-help 0 'exit status: 0 done' -- "$kedr" probe stride --help
check no-sub 2 'usage: kedr probe' -- "$kedr" probe
check unknown-sub 2 "unknown subcommand 'bandwith'" -- "$kedr" probe bandwith
check bad-option 2 "unknown option '--size'" -- "$kedr" probe transpose --size 64
check bad-n 2 '--n x: expected a positive count' -- "$kedr" probe stride --n x
check zero-n 2 '--n 0: expected a count of at least 1' -- "$kedr" probe offset --n 0
check fraction-n 2 '--n 1.5: expected a positive whole count' -- "$kedr" probe offset --n 1.5
check huge-n 2 '--n 9999999999999999999G: too large' -- "$kedr" probe offset --n 9999999999999999999G
check decimal-n 0 'a\[i \+ offset\] \+= 1, n = 2500 elements' -- \
  "$kedr" probe offset --backend cpu --n 2.5e3 --repeats 1 --type f32
check bad-repeats 2 '--repeats 0: expected an integer from 1 to 10000' -- \
  "$kedr" probe bandwidth --repeats 0
check bad-type 2 '--type f16: expected f32, f64 or both' -- "$kedr" probe stride --type f16
check bad-sizes 2 "--sizes '64,,x': expected a comma-separated list" -- \
  "$kedr" probe transpose --sizes 64,,x
check big-size 2 '--sizes: 100000: expected N up to 65536' -- "$kedr" probe transpose --sizes 100000
check sizes-elsewhere 2 '--sizes applies to transpose and transfer' -- "$kedr" probe stride --sizes 64
check type-elsewhere 2 '--type applies to bandwidth, offset and stride' -- \
  "$kedr" probe transpose --type f32
check plot-elsewhere 2 '--plot: only offset, stride and transfer' -- \
  "$kedr" probe transpose --plot "$tmp/t.png"
check json-dir 2 'directory .* does not exist' -- \
  "$kedr" probe stride --backend cpu --json "$tmp/no/such/s.json"
check too-big 1 'kedr probe stride: out of host memory' -- \
  "$kedr" probe stride --backend cpu --n 2^40 --repeats 1
check bad-backend 2 '--backend gpu: expected cpu, cuda or auto' -- "$kedr" probe stride --backend gpu

# The GPU-only measurements on the cpu: exit 3 and what is missing.
for sub in transfer overlap occupancy p2p; do
  check "$sub-cpu" 3 "kedr probe $sub: measures a GPU, and --backend cpu was chosen" -- \
    "$kedr" probe $sub --backend cpu
done
gpus=$("$kedr" info | sed -n 's/^GPUs: //p')
if [ "${gpus:-0}" -eq 0 ]; then
  check transfer-nogpu 3 'measures a GPU, and (no GPU is visible|this build has no cuda)' -- \
    "$kedr" probe transfer
  check cuda-nogpu 3 'measures a GPU' -- "$kedr" probe stride --backend cuda
fi

# Small runs on the cpu: every variant checked, then timed; the published figures beside.
check bandwidth 0 'triad f64 +4099 .* GB/s' -- \
  "$kedr" probe bandwidth --backend cpu --n 4099 --repeats 2 --type both --json "$tmp/bw.json"
check limit 0 'sinf: memory [0-9]+%, math [0-9]+% of base' -- \
  "$kedr" probe bandwidth --backend cpu --n 4099 --repeats 2
check offset 0 'offset 32 f64' -- "$kedr" probe offset --backend cpu --n 1000 --repeats 2
check stride 0 'stride 32 f32 .*GB/s' -- \
  "$kedr" probe stride --backend cpu --n 1000 --repeats 2 --type f32 --json "$tmp/s.json"
check transpose 0 'naive +1024 .*C2050 18.5' -- \
  "$kedr" probe transpose --backend cpu --sizes 33,1024 --repeats 2 --json "$tmp/t.json"
check textbook 0 'reduce5 +4099 .*C2070 0.65 ms' -- \
  "$kedr" probe textbook --backend cpu --n 4099 --matrix 33 --repeats 2 --json "$tmp/tb.json"
check matrix-elsewhere 2 '--matrix applies to textbook' -- "$kedr" probe stride --matrix 64
check big-matrix 2 '--matrix 20000: expected N up to 16384' -- "$kedr" probe textbook --matrix 20000
if python3 - "$tmp/tb.json" <<'PY' 2>"$tmp/err"; then
import json, sys
tb = json.load(open(sys.argv[1]))
names = [r["name"] for r in tb["results"]]
assert names[:6] == ["reduce1", "reduce2", "reduce3", "reduce4", "reduce5", "kedr_reduce"], names
assert names[6:9] == ["scan1", "scan2", "kedr_scan_exclusive"], names
assert len(names) == 13 and tb["results"][-1]["unit"] == "GFLOP/s", tb["results"][-1]
PY
  pass
else
  fail "textbook json: $(cat "$tmp/err")"
fi
if python3 - "$tmp/bw.json" "$tmp/s.json" "$tmp/t.json" <<'PY' 2>"$tmp/err"; then
import json, sys
bw, st, tr = (json.load(open(p)) for p in sys.argv[1:4])
assert bw["suite"] == "probe-bandwidth" and bw["backend"] == "cpu", bw
names = [r["name"] for r in bw["results"]]
for op in ("copy", "scale", "add", "triad", "dot"):
    assert f"{op} f32" in names and f"{op} f64" in names, names
assert "base (fast math)" in names and "math" in names, names
assert all(r["seconds"] > 0 for r in bw["results"]), bw
assert [r["x"] for r in st["results"] if r["series"] == "f32"] == list(range(1, 33)), st["results"]
# fig. 3.18's strided reads: the plain loads on the cpu (its one load path), every stride
assert [r["x"] for r in st["results"] if r["series"] == "f32-read"] == list(range(1, 33)), st
assert not [r for r in st["results"] if r["series"] == "f32-read-ldg"], st
assert all(r["gbps"] > 0 for r in st["results"]), st
assert len(tr["results"]) == 12 and {r["x"] for r in tr["results"]} == {33, 1024}, tr
assert "K20 54.6" in [r for r in tr["results"] if r["name"] == "naive" and r["x"] == 1024][0]["published"]
PY
  pass
else
  fail "json: $(cat "$tmp/err")"
fi

plot_out=$("$kedr" probe offset --backend cpu --n 1000 --repeats 1 --plot "$tmp/o.png" 2>&1)
case $? in
  0) if [ -s "$tmp/o-f32.png" ] && [ -s "$tmp/o-f64.png" ]; then pass; else fail "offset plots: $plot_out"; fi ;;
  2) echo "$plot_out" | grep -q 'PLplot' && pass || fail "plot refused: $plot_out" ;;
  *) fail "offset --plot: $plot_out" ;;
esac

# With a GPU: the GPU measurements, small.
if [ "${gpus:-0}" -gt 0 ]; then
  check gpu-bandwidth 0 'copy f64' -- "$kedr" probe bandwidth --backend cuda --n 1000003 --repeats 3
  check gpu-transfer 0 'pinned host to device' -- "$kedr" probe transfer --sizes 1M --repeats 3
  check gpu-overlap 0 'async V3' -- "$kedr" probe overlap --n 262144 --repeats 3
  check gpu-occupancy 0 'ILP 4' -- "$kedr" probe occupancy --n 1000003 --repeats 3
  check gpu-textbook 0 'A A\^T, padded tiles' -- \
    "$kedr" probe textbook --backend cuda --n 1000003 --matrix 257 --repeats 3
  if [ "$gpus" -eq 1 ]; then
    check p2p-one 3 'peer copies need two GPUs; this machine has 1' -- "$kedr" probe p2p
  else
    check p2p 0 'without P2P' -- "$kedr" probe p2p --n 1M --repeats 3
  fi
fi
finish test_probe
