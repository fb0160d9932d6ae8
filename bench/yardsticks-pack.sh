#!/usr/bin/env bash
# Packs hypre (headers, library and the libraries it needs that a plain Ubuntu host with OpenMPI
# lacks) into DIR, so that a machine that cannot install packages (the GPU hosts) can build
# `kedr bench flow`'s hypre yardstick from it (bench/flow-yardsticks.sh). Run it where
# `scripts/install-deps.sh --anchors` has installed libhypre-dev. PETSc is left out: its
# libraries and theirs come to about 115 MB.
#
#   bench/yardsticks-pack.sh .yard        (then: YARD=.yard bench/flow-yardsticks.sh)
set -euo pipefail
dir=${1:?usage: yardsticks-pack.sh DIR}
lib=$(ls /usr/lib/x86_64-linux-gnu/libHYPRE.so 2>/dev/null || true)
[ -n "$lib" ] && [ -r /usr/include/hypre/HYPRE.h ] ||
  { echo "yardsticks-pack.sh: hypre not installed (scripts/install-deps.sh --anchors)" >&2; exit 2; }
rm -rf "$dir" && mkdir -p "$dir/include" "$dir/lib"
cp -r /usr/include/hypre "$dir/include/"
cp -L "$lib" "$dir/lib/libHYPRE.so"
real=$(readlink -f "$lib")
cp -L "$lib" "$dir/lib/$(basename "$real")"
# the libraries libHYPRE needs, but the C library, the compilers' runtimes and MPI's own
# (the host's OpenMPI provides those, and must: one MPI in the process; libmpi_cxx, which
# OpenMPI 5 no longer ships, is packed)
ldd "$lib" | awk '/=> \// {print $1, $3}' | while read -r name path; do
  case $name in
    libc.so* | libm.so* | libstdc++* | libgcc_s* | libgomp* | libmpi.so* | libopen-* | \
    libhwloc* | libevent* | libz.so* | libudev* | liblzma* | libbz2* | libpthread* | libdl* | \
    librt* | ld-linux* | libnl-* | libibverbs* | librdmacm* | libfabric* | libpmix* | libucp* | \
    libucs* | libuct* | libucm* | libpsm* | libnuma* | libcap* | libmunge* | libefa* | libopenblas* | \
    libblas.so* | liblapack.so*)
      ;;
    *) cp -L "$path" "$dir/lib/$name" ;;
  esac
done
# BLAS and LAPACK are left to the host (liblapack.so.3 and libblas.so.3: a host that builds
# kedr's LAPACKE rows has them, and a packed older LAPACK ahead of the host's breaks the host's
# liblapacke at link time)
rm -f "$dir/lib/libblas.so.3" "$dir/lib/liblapack.so.3"
du -sh "$dir"
ls "$dir/lib"
