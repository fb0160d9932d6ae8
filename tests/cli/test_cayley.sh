#!/usr/bin/env bash
# kedr cayley: help, bad group specs and options (exit 2), a refused run (exit 1), and a small
# run on the cpu with its table, JSON and CSV checked against known values.
# usage: test_cayley.sh KEDR_BINARY SOURCE_DIR
kedr=$1
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
check unwritable 1 'cannot write' -- "$kedr" cayley star:4 --backend cpu --json "$tmp/no/such/dir.json"

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

# sparse mode: cube2 (God's numbers 11 and 14, OEIS A079761 and A079762), perm: groups, --mode
check cube2-htm 0 'diameter +11' -- "$kedr" cayley cube2 --backend cpu -q
check cube2-qtm 0 'diameter +14' -- "$kedr" cayley cube2 --metric qtm --backend cpu -q
check cube2-order 0 'elements reached +3674160 of 3674160' -- "$kedr" cayley cube2 --backend cpu -q
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
check perm-n 2 'with N from 1 to 16' -- "$kedr" cayley 'perm:20:(1 2)'
check metric-not-cube 2 '--metric applies to cube2 only' -- "$kedr" cayley pancake:4 --metric qtm
check bad-metric 2 '--metric stm: expected htm or qtm' -- "$kedr" cayley cube2 --metric stm
check bad-mode 2 '--mode fast: expected auto, dense or sparse' -- "$kedr" cayley pancake:4 --mode fast
check dense-cube 1 'no ranking for dense mode' -- "$kedr" cayley cube2 --mode dense --backend cpu
check sparse-too-big 1 'in sparse mode' -- "$kedr" cayley cube2 --backend cpu --memory-limit 1K

finish test_cayley
