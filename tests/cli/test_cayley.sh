#!/usr/bin/env bash
# kedr cayley: help, bad group specs and options (exit 2), a refused run (exit 1), and a small
# run on the cpu with its table, JSON and CSV checked against known values. Then checkpoints
# (stop, resume on every back end, bad files) and --plot.
# usage: test_cayley.sh KEDR_BINARY SOURCE_DIR
kedr=$1
src=$2
. "$(dirname "$0")/lib.sh"

check help 0 'usage: kedr cayley GROUP' -- "$kedr" cayley --help
check listed 0 'cayley' -- "$kedr" --help
check no-group 2 'missing GROUP' -- "$kedr" cayley
check bad-n 2 'pancake:x: expected an integer N from 2 to 16' -- "$kedr" cayley pancake:x
check big-n 2 'pancake:17: expected an integer N from 2 to 16' -- "$kedr" cayley pancake:17
check unknown-group 2 "'cube3:2': unknown group" -- "$kedr" cayley cube3:2
check bad-abelian 2 'abelian:3,,4: expected abelian:M1,M2' -- "$kedr" cayley abelian:3,,4
check two-groups 2 'one GROUP expected' -- "$kedr" cayley pancake:4 star:4
check bad-option 2 "unknown option '--inverse'" -- "$kedr" cayley pancake:4 --inverse
check bad-backend 2 '--backend gpu: expected cpu, cuda or auto' -- "$kedr" cayley pancake:4 --backend gpu
check json-needs-value 2 'option --json needs a value' -- "$kedr" cayley pancake:4 --json
check too-big 1 'pancake:12 needs 180 MB in dense mode' -- \
  "$kedr" cayley pancake:12 --backend cpu --memory-limit 1M
# outputs are checked before the search: a missing directory, a device (never replaced)
check unwritable 2 'no/such/dir.json: directory .* does not exist' -- \
  "$kedr" cayley star:4 --backend cpu --json "$tmp/no/such/dir.json"
check device-checkpoint 2 '/dev/null: is a character device' -- \
  "$kedr" cayley star:4 --backend cpu --checkpoint /dev/null
if [ -c /dev/null ]; then pass; else fail "device-checkpoint: /dev/null is no longer a device"; fi
check device-csv 2 '/dev/null: is a character device' -- \
  "$kedr" cayley star:4 --backend cpu --csv /dev/null

# pancake:6: diameter 7 (OEIS A058986), growth 1 5 20 79 199 281 133 2 (OEIS A092113)
check table 0 'diameter +7' -- "$kedr" cayley pancake:6 --backend cpu --json "$tmp/p.json" --csv "$tmp/p.csv"
check progress 0 'level 7: 2 new, 720 reached' -- "$kedr" cayley pancake:6 --backend cpu
if python3 - "$tmp/p.json" "$tmp/p.csv" <<'PY' 2>"$tmp/err"; then
import csv, json, sys
d = json.load(open(sys.argv[1]))
assert d["group"] == "pancake:6" and d["order"] == 720 and d["inverse_closed"] is True, d
assert d["growth"] == [1, 5, 20, 79, 199, 281, 133, 2], d["growth"]
assert d["diameter"] == 7 and d["reached"] == 720, d
assert abs(d["average_distance"] - sum(s * f for s, f in enumerate(d["growth"])) / 720) < 1e-12
rows = list(csv.DictReader(open(sys.argv[2])))
assert [int(r["F"]) for r in rows] == d["growth"] and int(rows[-1]["reached"]) == 720, rows
PY
  pass
else
  fail "pancake:6 json/csv: $(cat "$tmp/err")"
fi
check directed-ring 0 'closed under inverses: no' -- "$kedr" cayley abelian:5 --backend cpu -q
check ring-inverses 0 'diameter +2' -- "$kedr" cayley abelian:5 --inverses --backend cpu -q
# B_5: diameters 20 and 10 (Kuznetsov 2016); K beyond the Hall polynomials is refused
check burnside 0 'diameter +20' -- "$kedr" cayley burnside:5 --backend cpu -q
check burnside-inverses 0 'diameter +10' -- "$kedr" cayley burnside:5 --inverses --backend cpu -q
check burnside-big 2 'burnside:99: expected an integer K from 1 to [0-9]+' -- "$kedr" cayley burnside:99

# sparse mode: cube2 (God's numbers 11 and 14, OEIS A079761 and A079762), perm: groups, --mode
# (one run of each metric: the htm run's JSON is also the reference of the checkpoints below)
check cube2-htm 0 'diameter +11' -- "$kedr" cayley cube2 --backend cpu -q --json "$tmp/cube2.json"
if grep -qE 'elements reached +3674160 of 3674160' "$tmp/out"; then pass; else fail cube2-order; fi
check cube2-qtm 0 'diameter +14' -- "$kedr" cayley cube2 --metric qtm --backend cpu -q
check sparse-pancake 0 'level 7: 2 new, 720 reached' -- "$kedr" cayley pancake:6 --mode sparse --backend cpu
check perm-pancake 0 'diameter +7' -- \
  "$kedr" cayley 'perm:6:[2,1,3,4,5,6],[3,2,1,4,5,6],[4,3,2,1,5,6],[5,4,3,2,1,6],[6,5,4,3,2,1]' --backend cpu -q
check perm-directed 0 'closed under inverses: no' -- "$kedr" cayley 'perm:5:(1 2 3 4 5),(1 2)' --backend cpu -q
check perm-order 0 'order +120' -- "$kedr" cayley 'perm:5:(1 2 3 4 5),(1 2)' --backend cpu -q
printf '(1 2 3 4 5)\n# a comment\n(1 2)\n' >"$tmp/gens.txt"
check perm-file 0 'elements reached +120 of 120' -- "$kedr" cayley "perm:5:@$tmp/gens.txt" --backend cpu -q
printf '(1 2)\n[1,2]\n' >"$tmp/bad.txt"
check perm-file-bad 2 "bad.txt:2: generator 2 '\\[1,2\\]': 2 images, expected 5" -- \
  "$kedr" cayley "perm:5:@$tmp/bad.txt"
check perm-missing-file 2 'cannot read the generator file' -- "$kedr" cayley "perm:5:@$tmp/none.txt"
check perm-not-perm 2 "generator 1 '\\[1,1,2\\]': not a permutation: 1 appears twice" -- \
  "$kedr" cayley 'perm:3:[1,1,2]'
check perm-range 2 'point 9 is out of range 1..4' -- "$kedr" cayley 'perm:4:(1 9)'
check perm-n 2 'with N from 1 to 32' -- "$kedr" cayley 'perm:33:(1 2)'
# perm: on more than 16 points: the Mathieu groups from data/cayley (orders by Schreier-Sims)
check perm-m24 0 'order +244823040' -- \
  "$kedr" cayley "perm:24:@$src/data/cayley/m24.txt" --backend cpu -q --max-levels 3
check perm-m23 0 'level 3: 8 new, 15 reached' -- \
  "$kedr" cayley "perm:23:@$src/data/cayley/m23.txt" --backend cpu --max-levels 3
check perm-wide 0 '128-bit states' -- \
  "$kedr" cayley 'perm:21:(1 2),(1 2 3),(4 5),(4 5 6),(7 8),(7 8 9),(10 11),(10 11 12),(13 14),(13 14 15),(16 17),(16 17 18),(19 20),(19 20 21)' --backend cpu -q --max-levels 2
check metric-not-cube 2 '--metric applies to cube2 only' -- "$kedr" cayley pancake:4 --metric qtm
check bad-metric 2 '--metric stm: expected htm or qtm' -- "$kedr" cayley cube2 --metric stm
check bad-mode 2 '--mode fast: expected auto, dense or sparse' -- "$kedr" cayley pancake:4 --mode fast
check bad-devices 2 '--devices 0: expected an integer from 1 to 1024' -- "$kedr" cayley pancake:4 --devices 0
check devices-cpu 2 '--devices needs the cuda back end' -- "$kedr" cayley pancake:4 --backend cpu --devices 2
check devices-sparse 2 '--devices applies to the dense mode' -- "$kedr" cayley pancake:4 --backend cpu --mode sparse --devices all
check dense-cube 1 'no ranking for dense mode' -- "$kedr" cayley cube2 --mode dense --backend cpu
check sparse-too-big 1 'in sparse mode' -- "$kedr" cayley cube2 --backend cpu --memory-limit 1K
# checkpoints: pancake:7 stopped after level 3, then resumed (on every back end the build has),
# gives the growth function of one uninterrupted run; bad checkpoints are refused (exit 1)
check ck-stop 0 'stopped +after level 3' -- \
  "$kedr" cayley pancake:7 --backend cpu -q --max-levels 3 --checkpoint "$tmp/p7.ckpt"
check ck-hint 0 'continue with --resume' -- \
  "$kedr" cayley pancake:7 --backend cpu -q --max-levels 2 --checkpoint "$tmp/p7-2.ckpt"
"$kedr" cayley pancake:7 --backend cpu -q --json "$tmp/full.json" >/dev/null 2>&1
backends=cpu
"$kedr" info 2>/dev/null | grep -qE '^GPUs: [1-9]' && backends="cpu cuda"
for b in $backends; do
  check "ck-resume-$b" 0 'resumed +from level 3' -- \
    "$kedr" cayley pancake:7 --backend "$b" -q --resume "$tmp/p7.ckpt" --json "$tmp/resumed-$b.json"
  if python3 - "$tmp/full.json" "$tmp/resumed-$b.json" <<'PY' 2>"$tmp/err"; then
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["growth"] == b["growth"] == [1, 6, 30, 149, 543, 1357, 1903, 1016, 35], (a, b)
assert b["complete"] is True and b["resumed_from"] == 3 and b["diameter"] == 8, b
assert a["resumed_from"] is None and a["complete"] is True, a
PY
    pass
  else
    fail "ck-resume-$b json: $(cat "$tmp/err")"
  fi
done
check ck-every 0 'diameter +8' -- \
  "$kedr" cayley pancake:7 --backend cpu -q --checkpoint "$tmp/every.ckpt" --checkpoint-every 0
check ck-ended 0 'diameter +8' -- "$kedr" cayley pancake:7 --backend cpu -q --resume "$tmp/every.ckpt"
check ck-progress 0 'level 3 saved to the checkpoint' -- \
  "$kedr" cayley pancake:7 --backend cpu --max-levels 3 --checkpoint "$tmp/progress.ckpt"
check ck-copy 0 'ended search saved to the checkpoint .*copy.ckpt' -- \
  "$kedr" cayley pancake:7 --backend cpu --resume "$tmp/every.ckpt" --checkpoint "$tmp/copy.ckpt"
if cmp -s "$tmp/every.ckpt" "$tmp/copy.ckpt"; then pass; else fail "ck-copy: another file"; fi
check ck-other-group 1 'made for group pancake:7, not star:7' -- \
  "$kedr" cayley star:7 --backend cpu -q --resume "$tmp/p7.ckpt"
check ck-inverses 1 'made without --inverses' -- \
  "$kedr" cayley pancake:7 --inverses --backend cpu -q --resume "$tmp/p7.ckpt"
head -c 300 "$tmp/p7.ckpt" >"$tmp/short.ckpt"
check ck-truncated 1 "checkpoint .*short.ckpt: truncated" -- \
  "$kedr" cayley pancake:7 --backend cpu -q --resume "$tmp/short.ckpt"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[300] ^= 4; open(sys.argv[2], "wb").write(b)' \
  "$tmp/p7.ckpt" "$tmp/flipped.ckpt"
check ck-corrupt 1 'checksum does not match' -- \
  "$kedr" cayley pancake:7 --backend cpu -q --resume "$tmp/flipped.ckpt"
check ck-missing 1 'checkpoint .*none.ckpt: cannot open' -- \
  "$kedr" cayley pancake:7 --backend cpu -q --resume "$tmp/none.ckpt"
mkdir "$tmp/p7.ckpt.tmp"
check ck-unwritable 1 'last checkpoint .*p7.ckpt is intact' -- \
  "$kedr" cayley pancake:7 --backend cpu -q --resume "$tmp/p7.ckpt" --checkpoint "$tmp/p7.ckpt" --checkpoint-every 0
check ck-kept 0 'diameter +8' -- "$kedr" cayley pancake:7 --backend cpu -q --resume "$tmp/p7.ckpt"
check ck-bad-levels 2 '--max-levels' -- "$kedr" cayley pancake:7 --max-levels 0

# --plot: a PNG when plots are built in, else a clear error after every other result is out
"$kedr" cayley pancake:6 --backend cpu -q --plot "$tmp/p6.png" --json "$tmp/p6.json" \
  >"$tmp/plot.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(head -c 8 "$tmp/p6.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
  pass
elif [ $rc -eq 1 ] && grep -q -- '--plot .*p6.png: .*plots are not built' "$tmp/plot.out" &&
  grep -qE 'diameter +7' "$tmp/plot.out" && [ -s "$tmp/p6.json" ] && [ ! -e "$tmp/p6.png" ]; then
  pass
else
  fail "plot: exit $rc, $(head -c 600 "$tmp/plot.out")"
fi

# kedr bench cayley on small groups: the table, and JSON with the growth facts
check bench 0 'abelian:4,4 +16 +7 +6' -- "$kedr" bench cayley --backend cpu --repeats 1 \
  --groups 'pancake:6 abelian:4,4' --json "$tmp/bench.json"
if python3 - "$tmp/bench.json" <<'PY' 2>"$tmp/err"; then
import json, sys
d = json.load(open(sys.argv[1]))
assert d["suite"] == "cayley" and d["backend"] == "cpu" and d["copy_gbps"] > 0, d
p, a = d["results"]
assert p["group"] == "pancake:6" and p["elements"] == 720 and p["diameter"] == 7, p
assert p["edge_visits"] == 720 * 5 and p["edge_visits_per_s"] > 0 and p["status"] == "ok", p
assert a["group"] == "abelian:4,4" and a["levels"] == 7 and a["frac_copy"] > 0, a
PY
  pass
else
  fail "bench json: $(cat "$tmp/err")"
fi
check bench-bad-group 2 'pancake:99' -- "$kedr" bench cayley --backend cpu --groups 'pancake:99'
check bench-help 0 'burnt-pancake:10' -- "$kedr" bench cayley --help

# sparse-mode checkpoints: cube2 (inverse-closed: two layers kept) and a directed perm: group
# (every visited state kept), stopped early and resumed, give the uninterrupted growth function
for g in cube2 'perm:6:(1 2 3 4 5 6),(1 2)'; do
  if [ "$g" = cube2 ]; then
    cp "$tmp/cube2.json" "$tmp/sp-full.json"
  else
    "$kedr" cayley "$g" --backend cpu -q --json "$tmp/sp-full.json" >/dev/null 2>&1
  fi
  check "sp-stop $g" 0 'stopped +after level 4' -- \
    "$kedr" cayley "$g" --backend cpu -q --max-levels 4 --checkpoint "$tmp/sp.ckpt"
  for b in $backends; do
    check "sp-resume $g $b" 0 'resumed +from level 4' -- \
      "$kedr" cayley "$g" --backend "$b" -q --resume "$tmp/sp.ckpt" --json "$tmp/sp-res.json"
    if python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); assert a["growth"]==b["growth"] and b["complete"] and b["resumed_from"]==4, (a["growth"], b["growth"])' \
      "$tmp/sp-full.json" "$tmp/sp-res.json" 2>"$tmp/err"; then
      pass
    else
      fail "sp-resume $g $b json: $(cat "$tmp/err")"
    fi
  done
done
head -c 200 "$tmp/sp.ckpt" >"$tmp/sp-short.ckpt"
check sp-truncated 1 'sp-short.ckpt: truncated' -- \
  "$kedr" cayley 'perm:6:(1 2 3 4 5 6),(1 2)' --backend cpu -q --resume "$tmp/sp-short.ckpt"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-20] ^= 1; open(sys.argv[2], "wb").write(b)' \
  "$tmp/sp.ckpt" "$tmp/sp-flip.ckpt"
check sp-corrupt 1 'checksum does not match' -- \
  "$kedr" cayley 'perm:6:(1 2 3 4 5 6),(1 2)' --backend cpu -q --resume "$tmp/sp-flip.ckpt"
check sp-other 1 'made for group perm:6' -- \
  "$kedr" cayley cube2 --backend cpu -q --resume "$tmp/sp.ckpt"
# files read are regular files: a FIFO as a checkpoint or a generator file is refused at once
mkfifo "$tmp/fifo"
check fifo-resume 1 'fifo: not a regular file' -- \
  timeout 20 "$kedr" cayley pancake:5 --backend cpu -q --resume "$tmp/fifo"
check fifo-gens 2 'cannot read the generator file: .*fifo: is a FIFO' -- \
  timeout 20 "$kedr" cayley "perm:3:@$tmp/fifo" --backend cpu -q
# JSON strings are escaped: a generator file named with a quote and a backslash
printf '(1 2)\n(1 2 3)\n' >"$tmp/a\"b\\c.txt"
check json-quote 0 'order +6' -- \
  "$kedr" cayley "perm:3:@$tmp/a\"b\\c.txt" --backend cpu -q --json "$tmp/quote.json"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["group"].endswith("a\"b\\c.txt"), d' \
  "$tmp/quote.json" 2>"$tmp/err"; then pass; else fail "json-quote: $(cat "$tmp/err")"; fi

# Ctrl-C: pancake:10 on the cpu (seconds) gets SIGINT once level 4 is printed; it ends the
# level, saves the checkpoint, prints and writes the levels done and exits 130; resumed, it
# gives the growth function of pancake:10 (OEIS A092113)
"$kedr" cayley pancake:10 --backend cpu --checkpoint "$tmp/int.ckpt" --checkpoint-every 100000 \
  --json "$tmp/int.json" >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
for _ in $(seq 1 1200); do grep -q 'level 4:' "$tmp/int.err" && break; sleep 0.05; done
kill -INT "$pid"
wait "$pid"
rc=$?
if [ $rc -eq 130 ] && grep -qE 'stopped +after level [4-9] \(interrupted\)' "$tmp/int.out" &&
  grep -q 'interrupted by signal 2 after level' "$tmp/int.err" && [ -s "$tmp/int.ckpt" ]; then
  pass
else
  fail "sigint: exit $rc (want 130), $(head -c 400 "$tmp/int.out") $(tail -c 400 "$tmp/int.err")"
fi
check sigint-resume 0 'diameter +11' -- \
  "$kedr" cayley pancake:10 --backend cpu -q --resume "$tmp/int.ckpt" --json "$tmp/int-res.json"
if python3 - "$tmp/int.json" "$tmp/int-res.json" <<'PY' 2>"$tmp/err"; then
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
full = [1, 9, 72, 575, 3963, 22825, 106461, 377863, 919365, 1309756, 814678, 73232]
s = len(a["growth"]) - 1
assert a["interrupted"] is True and a["complete"] is False and a["growth"] == full[:s + 1], a
assert b["growth"] == full and b["resumed_from"] == s and b["complete"] is True, b
PY
  pass
else
  fail "sigint json: $(cat "$tmp/err")"
fi
# layer-7 quotients with the same Cayley graphs (scripts/cayley/layer7-symmetry.py): the swap
# and inversion matrices pass their checks, the B_15 quotients with Kuznetsov's two diameters
# are a union of orbits, a set that splits an orbit is refused, and B_17 has 48 orbits of lines
# under the eight signed generator maps.
sym="$src/scripts/cayley/layer7-symmetry.py"
k37=1010,1011,1014,1020,1021,1022,1030,1034,1044,1100,1101,1102,1103,1104,1110,1120,1122,1130,1210,1240,1300,1302,1303,1314,1323,1332,1340,1401,1404,1411,1414,1422,1433,1441,1444,0011,0014
check layer7-union 0 "check K = 15, plain: 37 quotients given, a union of orbits" -- python3 "$sym" 15 --check "15:plain:$k37"
check layer7-split 1 "the orbit 0134 1212 is only partly in the set" -- python3 "$sym" 15 --check 15:plain:0134
check layer7-reps 0 "^48$" -- bash -c "python3 '$sym' --reps 17:signed 2>/dev/null | wc -l"
# Kuznetsov's basis: what `kedr cayley burnside:K --basis kuznetsov` searches is the quotient
# the script derives by collection from the commutators a15..a18 = [a11,a2], [a9,a3], [a12,a2],
# [a14,a1] (every weight-7 commutator in V(4,3) or V(3,4) by its multidegree, or the script
# fails); K <= 14 is nq's group (Kuznetsov's B_8: diameter 30, 19 with inverses); every K,
# spec, family or basis name it does not cover is refused.
python3 "$sym" --kuznetsov > "$tmp/kz.txt" 2>&1 || fail "layer7-symmetry.py --kuznetsov: $(tail -3 "$tmp/kz.txt")"
for k in 15 16 17; do
  want=$(awk -v k="burnside:$k" '$1 == "kuznetsov" && ($2 == k || index($2, k ":") == 1) {print $2}' "$tmp/kz.txt")
  [ -n "$want" ] || fail "layer7-symmetry.py --kuznetsov printed no burnside:$k"
  check "kuznetsov-$k" 0 "^group +$want \\(B_$k" -- "$kedr" cayley burnside:$k --basis kuznetsov --dry-run
done
check kuznetsov-8 0 'diameter +30' -- "$kedr" cayley burnside:8 --basis kuznetsov --backend cpu -q
check kuznetsov-8-inv 0 'diameter +19' -- "$kedr" cayley burnside:8 --basis kuznetsov --inverses --backend cpu -q
check kuznetsov-19 2 'burnside:19 --basis kuznetsov: the basis covers K = 1..18 and 22' -- "$kedr" cayley burnside:19 --basis kuznetsov --dry-run
check kuznetsov-rows 2 'burnside:15:1203 gives its own basis of layer 7' -- "$kedr" cayley burnside:15:1203 --basis kuznetsov --dry-run
check kuznetsov-family 2 'applies to burnside:K only' -- "$kedr" cayley pancake:5 --basis kuznetsov
check basis-name 2 '--basis hall: expected nq or kuznetsov' -- "$kedr" cayley burnside:5 --basis hall
finish test_cayley
