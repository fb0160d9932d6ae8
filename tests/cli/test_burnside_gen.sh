#!/usr/bin/env bash
# scripts/cayley/gen_burnside.py: the committed src/cayley/burnside_hall.h is its output for the
# committed data/cayley/burnside-a2.txt, and malformed data is rejected with the line named.
# usage: test_burnside_gen.sh KEDR_BINARY SOURCE_DIR
src=$2
. "$(dirname "$0")/lib.sh"
gen=$src/scripts/cayley/gen_burnside.py
data=$src/data/cayley/burnside-a2.txt

if python3 "$gen" "$data" - >"$tmp/hall.h" 2>"$tmp/err" &&
    cmp -s "$tmp/hall.h" "$src/src/cayley/burnside_hall.h"; then
  pass
else
  fail "src/cayley/burnside_hall.h is not the output of gen_burnside.py for the data (rerun it): $(cat "$tmp/err")"
fi

# bad LINE PATTERN: a small data file whose line 3 (after a comment and z0) is LINE
bad() {
  printf '# a comment\nz0 = y0\n%s\nz2 = y2 + y0\n' "$1" >"$tmp/bad.txt"
  check "bad: $1" 1 "bad\.txt:3: $2" -- python3 "$gen" "$tmp/bad.txt" -
}
printf '# a comment\nz0 = y0\nz1 = y1 + 1\nz2 = y2 + y0\n' >"$tmp/good.txt"
check good 0 'define BURNSIDE_MAX_K 3' -- python3 "$gen" "$tmp/good.txt" -
bad 'z1 = y1 + 5' 'malformed term .5.'
bad 'z1 = y1 + 2 * y0' 'malformed term'
bad 'z1 = y1 + y0^5' 'malformed term .y0\^5.'
bad 'z1 y1 + 1' "expected 'z<i> = <terms>'"
bad 'z2 = y2 + 1' 'component z2 out of order \(expected z1\)'
bad 'z1 = y1 + y2' 'z1 may depend only on y0..y0'
bad 'z1 = 2*y1 + 1' 'z1 must contain the term y1 with coefficient 1'
bad 'z1 = y1 + y0*y0' 'y0 appears twice'
check missing-file 1 'gen_burnside.py: .*no-such-file' -- python3 "$gen" "$tmp/no-such-file" -
finish test_burnside_gen
