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
# B_5: diameters 20 and 10 (Kuznetsov 2016); K beyond the Hall polynomials is refused
check burnside 0 'diameter +20' -- "$kedr" cayley burnside:5 --backend cpu -q
check burnside-inverses 0 'diameter +10' -- "$kedr" cayley burnside:5 --inverses --backend cpu -q
check burnside-big 2 'burnside:99: expected an integer K from 1 to [0-9]+' -- "$kedr" cayley burnside:99

finish test_cayley
