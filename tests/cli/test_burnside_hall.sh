#!/usr/bin/env bash
# The Hall polynomials of B0(2,5) (data/cayley/burnside-a2*.txt) against multiplication by
# collection in the pc presentation (data/cayley/burnside-pc.txt), and the growth functions of
# small B_k by a brute-force search that uses collection only.
# usage: test_burnside_hall.sh KEDR_BINARY SOURCE_DIR
kedr=$1
src=$2
. "$(dirname "$0")/lib.sh"
check=$src/scripts/burnside/check.py

if ! command -v python3 >/dev/null; then
  echo "test_burnside_hall: python3 not found, skipped"
  exit 0
fi

check polynomials 0 '^ok: ' -- python3 "$check" --root "$src" --samples 40 --exhaustive 5

# Diameters published by A. A. Kuznetsov (Prikl. Diskr. Mat. 3(33), 2016) for k = 2..6, in the
# basis of seed 004; the diameter is the number of levels less one, and F sums to 5^k.
diam_pos=(- - 8 10 13 20 20)
diam_inv=(- - 4 6 9 10 13)
growth() { # K DIAMETER [--inverses]
  local k=$1 d=$2 line
  shift 2
  line=$(python3 "$check" --root "$src" bfs "$k" "$@") || return 1
  # shellcheck disable=SC2086
  set -- $line
  local sum=0 x
  for x in "$@"; do sum=$((sum + x)); done
  [ $(($# - 1)) -eq "$d" ] && [ "$sum" -eq $((5 ** k)) ] && [ "$1" -eq 1 ]
}
for k in 2 3 4 5 6; do
  if growth "$k" "${diam_pos[$k]}"; then pass; else fail "bfs B_$k {a1,a2}: diameter ${diam_pos[$k]} expected"; fi
done
for k in 2 3 4 5; do
  if growth "$k" "${diam_inv[$k]}" --inverses; then pass; else fail "bfs B_$k {a1,a2}^+-1: diameter ${diam_inv[$k]} expected"; fi
done
check bfs-growth-b4 0 '^1 2 4 8 16 30 56 88 106 109 94 67 33 11$' -- python3 "$check" --root "$src" bfs 4

# a corrupted coefficient must be caught
mkdir -p "$tmp/data/cayley"
cp "$src/data/cayley/burnside-pc.txt" "$tmp/data/cayley/"
sed 's/^z20 = y20 + /z20 = y20 + 2*y0*y1 + /' "$src/data/cayley/burnside-a2.txt" >"$tmp/data/cayley/burnside-a2.txt"
check corrupted 1 'polynomial z20' -- python3 "$check" --root "$tmp" --samples 6 --exhaustive 2
check bad-k 1 'K from 1 to 7' -- python3 "$check" bfs 9

finish test_burnside_hall
