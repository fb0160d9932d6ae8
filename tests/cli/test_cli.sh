#!/usr/bin/env bash
# The kedr program: help, version, errors with exit code 2, and a tiny benchmark run.
# usage: test_cli.sh KEDR_BINARY SOURCE_DIR
kedr=$1
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
