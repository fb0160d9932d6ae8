#!/usr/bin/env bash
# Builds a configured build directory and keeps the report short: one progress line (rewritten
# in place on a terminal, left out of logs), the compilers' warnings and errors as they come,
# and one closing line. Usage: scripts/build.sh BUILD_DIR JOBS
set -uo pipefail
build=$1 jobs=$2
start=$SECONDS
[ -t 1 ] && tty=1 || tty=0

cmake --build "$build" -j "$jobs" 2>&1 | awk -v tty=$tty '
  function clear() { if (shown) { printf "\r\033[K"; shown = 0 } }
  { gsub(/\033\[[0-9;]*m/, "") }   # make colours its lines on a terminal
  /^\[ *[0-9]+%\] (Building|Linking)/ {
    if (tty) {
      step = $0
      sub(/ (C|CXX|CUDA) object .*\.dir\//, " ", step)   # "[ 45%] Building src/prim/scan.c.o"
      printf "\r\033[K%s", substr(step, 1, 100); fflush(); shown = 1
    }
    next
  }
  /^\[ *[0-9]+%\] Built target|^Scanning dependencies|^Consolidate compiler generated/ { next }
  /^g?make\[[0-9]+\]: (Entering|Leaving) directory/ { next }
  /^-- / && !/^-- kedr / { next }   # CMake run again (a source added or removed)
  { clear(); print; fflush() }
  END { clear() }'
status=${PIPESTATUS[0]}

if [ "$status" -ne 0 ]; then
  echo "build failed: the messages above say why" >&2
  exit "$status"
fi
echo "built in $((SECONDS - start)) s: $build/kedr, $build/libkedr.a, $build/libkedr.so"
