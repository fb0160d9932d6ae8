#!/usr/bin/env bash
# Installs a build into a temporary prefix, then builds README.md's example
# (examples/readme/hello.c) from the installed files in the three ways README.md gives:
# pkg-config kedr (libkedr.so), pkg-config --static kedr-static (libkedr.a), and a CMake project
# with find_package(kedr) (tests/install/consumer). Each program must run (on the cpu when there
# is no GPU) and print a mean within 0.005 of 1/2 (a million draws: its deviation is 0.0003).
# Also checks that libkedr.so has a SONAME and exports the kedr_* API only.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR C_COMPILER
set -euo pipefail
build=$1 src=$2 cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() { echo "FAIL: $*" >&2; exit 1; }
quiet() { # runs a command, showing its output only when it fails
  "$@" > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; fail "$*"; }
}
check_run() { # NAME PROGRAM: it runs, and prints the mean
  local out
  out=$("$2") || fail "$1: exit status $?"
  echo "$1: $out"
  echo "$out" | awk '/^mean of 1000000 uniform numbers on (cpu|cuda): / {
                       m = $NF; found = 1; exit !(m > 0.495 && m < 0.505) }
                     END { if (!found) exit 1 }' || fail "$1: expected a mean near 0.5"
}
needed() { readelf -d "$1" | awk '/NEEDED/ { print $NF }'; }

quiet cmake --install "$build" --prefix "$prefix"
so=$(find "$prefix" -name libkedr.so)
libdir=$(dirname "$so")
for f in "$prefix/bin/kedr" "$prefix/include/kedr/kedr.h" "$libdir/libkedr.a" \
         "$libdir/pkgconfig/kedr.pc" "$libdir/pkgconfig/kedr-static.pc" \
         "$libdir/cmake/kedr/kedrConfig.cmake" "$libdir/cmake/kedr/kedrConfigVersion.cmake"; do
  [ -e "$f" ] || fail "not installed: ${f#$prefix/}"
done
"$prefix/bin/kedr" --version

[[ $(readelf -d "$so") == *"SONAME"*"[libkedr.so."[0-9]* ]] || fail "libkedr.so has no versioned SONAME"
others=$(nm -D --defined-only "$so" | awk '$3 !~ /^kedr_/ { print $3 }')
[ -z "$others" ] || fail "libkedr.so exports more than kedr_*: $(echo $others | head -c 300)"
echo "libkedr.so: $(nm -D --defined-only "$so" | wc -l) symbols exported, all kedr_*"

hello=$src/examples/readme/hello.c
export PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}

# 1. libkedr.so through pkg-config: -lkedr alone.
libs=$(pkg-config --libs kedr)
quiet "$cc" "$hello" -o "$tmp/hello_shared" $(pkg-config --cflags kedr) $libs
[[ $(needed "$tmp/hello_shared") == *libkedr.so.* ]] || fail "hello_shared does not load libkedr.so"
LD_LIBRARY_PATH=$libdir check_run "pkg-config kedr ($libs)" "$tmp/hello_shared"

# 2. libkedr.a through pkg-config --static: the libraries it needs come along.
quiet "$cc" "$hello" -o "$tmp/hello_static" $(pkg-config --static --cflags --libs kedr-static)
[[ $(needed "$tmp/hello_static") != *libkedr* ]] || fail "hello_static loads libkedr.so"
check_run "pkg-config --static kedr-static" "$tmp/hello_static"

# 3. A CMake project: find_package(kedr), kedr::kedr and kedr::kedr_static.
mkdir "$tmp/consumer"
cp "$src/tests/install/consumer/CMakeLists.txt" "$hello" "$tmp/consumer/"
quiet cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_COMPILER="$cc"
quiet cmake --build "$tmp/consumer/build"
check_run "cmake kedr::kedr" "$tmp/consumer/build/hello"
check_run "cmake kedr::kedr_static" "$tmp/consumer/build/hello_static"
