# Sourced by the CLI tests: a temporary folder, pass/fail counters and `check`.
# usage in a test: kedr=$1; . "$(dirname "$0")/lib.sh"; check ...; finish NAME
set -u
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check NAME EXPECTED_EXIT_CODE PATTERN -- command...: the command must exit with that code and
# print (stdout or stderr) a line matching the extended regular expression.
check() {
  local name=$1 want=$2 pattern=$3
  shift 4
  "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -eq "$want" ] && grep -qE -- "$pattern" "$tmp/out"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $got (want $want), output:" >&2
    head -20 "$tmp/out" >&2
  fi
}

# pass / fail NAME: record a check made by other means.
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $1" >&2; }

finish() {
  echo "$1: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
