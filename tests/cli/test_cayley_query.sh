#!/usr/bin/env bash
# kedr cayley --word, --distance, --farthest: answers checked against known values and by
# multiplying the printed word out (python), bad elements and options refused (exit 2).
# usage: test_cayley_query.sh KEDR_BINARY SOURCE_DIR
kedr=$1
. "$(dirname "$0")/lib.sh"

# pancake:6 has diameter 7 and exactly 2 elements at distance 7 (OEIS A092113)
check farthest 0 'farthest 2 of 2' -- "$kedr" cayley pancake:6 --farthest 5 --backend cpu
check farthest-distance 0 'distance +7' -- "$kedr" cayley pancake:6 --farthest 1 --backend cpu
check identity 0 'word +\(empty: the identity\)' -- "$kedr" cayley star:5 --word 1,2,3,4,5
check rank 0 'element +\[1,2,3,4\] \(rank 0\)' -- "$kedr" cayley bubble:4 --distance rank:0
# a transposition is one letter away in the transposition graph
check one-letter 0 'distance +1' -- "$kedr" cayley transpositions:6 --distance [4,2,3,1,5,6]
check directed-ring 0 'distance +4' -- "$kedr" cayley abelian:5 --distance 4
check ring-inverses 0 'distance +1' -- "$kedr" cayley abelian:5 --inverses --distance 4
check burnside 0 'word +a' -- "$kedr" cayley burnside:5 --inverses --word 1,2,3,4,0

# the word printed for an element multiplies out to it (y[i] = x[perm[i]], signs flipped)
for spec in pancake:7 burnt-pancake:4 lrx:6; do
  case $spec in
    burnt-pancake:4) el='[-4,2,-1,3]' ;;
    lrx:6) el='[6,1,5,2,4,3]' ;;
    *) el='[7,3,5,1,6,2,4]' ;;
  esac
  if "$kedr" cayley "$spec" --word "$el" --backend cpu >"$tmp/w" 2>&1 &&
     python3 - "$el" "$tmp/w" <<'PY' 2>"$tmp/err"; then
import json, re, sys
want = json.loads(sys.argv[1])
out = open(sys.argv[2]).read()
d = int(re.search(r"^distance +(\d+)", out, re.M).group(1))
line = re.search(r"^word +(.*)$", out, re.M).group(1)
gens = [json.loads(w) for w in re.findall(r"\[[^\]]*\]", line)]
assert len(gens) == d, (len(gens), d)
x = list(range(1, len(want) + 1))
for g in gens:
    x = [(-1 if (x[abs(p) - 1] < 0) != (p < 0) else 1) * abs(x[abs(p) - 1]) for p in g]
assert x == want, (x, want)
PY
    pass
  else
    fail "word of $el in $spec: $(cat "$tmp/err" "$tmp/w" | head -5)"
  fi
done

check short 2 "expected 5 entries \(the images of positions 1..N\) for pancake:5, got 4" -- \
  "$kedr" cayley pancake:5 --word 1,2,3,4
check repeated 2 '2 appears twice' -- "$kedr" cayley pancake:5 --word 1,2,2,4,5
check out-of-range 2 'entry 1 is 9, expected 1..5' -- "$kedr" cayley pancake:5 --distance 9,2,3,4,1
check outside 2 'entry 2 is 3, expected 0..2' -- "$kedr" cayley abelian:5,3 --word 1,3
check bad-rank 2 'rank:R with R from 0 to 119' -- "$kedr" cayley pancake:5 --word rank:120
check not-ranked 2 'cube2:htm has no ranking' -- "$kedr" cayley cube2 --word rank:1
check with-json 2 '--json does not apply to --word' -- \
  "$kedr" cayley pancake:5 --word rank:1 --json "$tmp/x.json"
check bad-farthest 2 'farthest' -- "$kedr" cayley pancake:5 --farthest 0
check too-big 1 'pancake:12: element queries need 479 MB' -- \
  "$kedr" cayley pancake:12 --farthest 1 --memory-limit 1M
finish test_cayley_query
