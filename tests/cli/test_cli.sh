#!/usr/bin/env bash
# The kedr program: help, version, errors with exit code 2, the OpenMP wait policy, case files
# that are misspelled or not case files at all, and a tiny benchmark run.
# usage: test_cli.sh KEDR_BINARY SOURCE_DIR
kedr=$1 src=$2
. "$(dirname "$0")/lib.sh"

check version 0 '^kedr [0-9]+\.[0-9]+\.[0-9]+' -- "$kedr" --version
check help 0 'usage: kedr <command>' -- "$kedr" --help
check no-command 2 'usage: kedr' -- "$kedr"
check unknown-command 2 "unknown command 'frobnicate'" -- "$kedr" frobnicate
check info 0 'back ends built in: cpu' -- "$kedr" info
check info-help 0 'usage: kedr info' -- "$kedr" info --help
check info-bad-option 2 "unknown option '--colour'" -- "$kedr" info --colour
check bench-help 0 'usage: kedr bench <suite>' -- "$kedr" bench --help
check bench-unknown-suite 2 "unknown suite 'prims'" -- "$kedr" bench prims
check bench-prim-help 0 'usage: kedr bench prim' -- "$kedr" bench prim --help
check bad-backend 2 "--backend gpu: expected cpu, cuda or auto" -- "$kedr" bench prim --backend gpu
check bad-n 2 "--n -5: expected a positive count" -- "$kedr" bench prim --n -5
check bad-n-suffix 2 "--n 12Q: expected a positive count" -- "$kedr" bench prim --n 12Q
check missing-value 2 "option --n needs a value" -- "$kedr" bench prim --n
check bad-repeats 2 "--repeats 0: expected an integer from 1" -- "$kedr" bench prim --repeats 0
check bad-only 2 "--only: unknown benchmark 'sorting'" -- "$kedr" bench prim --only reduce,sorting
check bad-device 2 "--device x: expected an integer" -- "$kedr" info --device x

# The wait policy: kedr's default (passive) unless the user chose one.
check wait-default 0 "wait policy OMP_WAIT_POLICY=passive \(kedr's default" -- \
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u KEDR_WAIT_POLICY_DEFAULT "$kedr" info
check wait-user 0 'wait policy OMP_WAIT_POLICY=active \(the user.s\)' -- \
  env -u GOMP_SPINCOUNT -u KEDR_WAIT_POLICY_DEFAULT OMP_WAIT_POLICY=active "$kedr" info
check wait-spin 0 'wait policy GOMP_SPINCOUNT=1000 \(the user.s\)' -- \
  env -u OMP_WAIT_POLICY -u KEDR_WAIT_POLICY_DEFAULT GOMP_SPINCOUNT=1000 "$kedr" info

# Case files: a misspelled required key or section is named with its line and the name it
# stands for; what is not a case file is refused at once (timeout: a FIFO must not block).
cp "$src/cases/dsmc/quick.ini" "$src/cases/dsmc/species.ini" "$tmp/"
sed '0,/^temperature = /s/^temperature = /temperatur = /' "$tmp/quick.ini" >"$tmp/key.ini"
line=$(grep -n '^temperatur = ' "$tmp/key.ini" | cut -d: -f1)
want="key.ini:$line: \[freestream\] unknown key 'temperatur' \(did you mean 'temperature'\?\)"
check case-misspelled-key 1 "$want" -- \
  "$kedr" dsmc "$tmp/key.ini" --backend cpu --out "$tmp/out"
sed 's/^\[freestream\]$/[freestrem]/' "$tmp/quick.ini" >"$tmp/section.ini"
line=$(grep -n '^\[freestrem\]' "$tmp/section.ini" | cut -d: -f1)
want="section.ini:$line: unknown section \[freestrem\] \(did you mean \[freestream\]\?\)"
check case-misspelled-section 1 "$want" -- \
  "$kedr" dsmc "$tmp/section.ini" --backend cpu --out "$tmp/out"
sed 's/^nx = /nxx = /' "$tmp/quick.ini" >"$tmp/short.ini"
want="short.ini:[0-9]+: \[grid\] unknown key 'nxx' \(did you mean 'nx'\?\)"
check case-doubled-letter 1 "$want" -- \
  "$kedr" dsmc "$tmp/short.ini" --backend cpu --out "$tmp/out"
check case-dev-zero 1 '/dev/zero: is a character device; expected a regular file' -- \
  timeout 20 "$kedr" dsmc /dev/zero --backend cpu
mkfifo "$tmp/fifo.ini"
check case-fifo 1 'fifo.ini: is a FIFO; expected a regular file' -- \
  timeout 20 "$kedr" dsmc "$tmp/fifo.ini" --backend cpu
truncate -s 17M "$tmp/big.ini"
want='big.ini: 17825792 bytes, more than the 16000000 bytes a case file may hold'
check case-too-big 1 "$want" -- \
  "$kedr" dsmc "$tmp/big.ini" --backend cpu
if ! "$kedr" info | grep -q 'GPUs: 0'; then :; else
  check cuda-without-gpu 1 'cuda back end' -- "$kedr" bench prim --backend cuda --n 1024
fi
check bench-cpu 0 'reduce' -- "$kedr" bench prim --backend cpu --n 2^16 --repeats 2 --json "$tmp/b.json"
if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['results'] and all(r['ms'] > 0 for r in d['results'])" "$tmp/b.json" 2>"$tmp/err"; then
  pass
else
  fail "bench json: $(cat "$tmp/err")"
fi

finish test_cli
