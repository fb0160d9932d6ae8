#!/usr/bin/env bash
# Packs hypre and, where installed, PETSc (headers, libraries and the libraries they need that a
# plain Ubuntu host with OpenMPI lacks) into DIR, so that a machine that cannot install packages
# (the GPU hosts) can build `kedr bench flow`'s yardsticks from it (bench/flow-yardsticks.sh).
# Run it where `scripts/install-deps.sh --anchors` has installed libhypre-dev and petsc-dev.
# hypre alone comes to about 17 MB; with PETSc about 95 MB, so it also writes DIR.tar.xz (about
# 33 MB) to carry instead, unpacked on the host with `tar xJf DIR.tar.xz`. NOPETSC=1 leaves
# PETSc out.
#
#   bench/yardsticks-pack.sh .yard        (then: YARD=.yard bench/flow-yardsticks.sh)
set -euo pipefail
dir=${1:?usage: yardsticks-pack.sh DIR}
lib=$(ls /usr/lib/x86_64-linux-gnu/libHYPRE.so 2>/dev/null || true)
[ -n "$lib" ] && [ -r /usr/include/hypre/HYPRE.h ] ||
  { echo "yardsticks-pack.sh: hypre not installed (scripts/install-deps.sh --anchors)" >&2; exit 2; }
petsc=""
if [ -z "${NOPETSC:-}" ] && command -v pkg-config > /dev/null && pkg-config --exists PETSc; then
  petsc=$(pkg-config --variable=prefix PETSc)
fi
rm -rf "$dir" "$dir.tar.xz" && mkdir -p "$dir/include" "$dir/lib"
cp -r /usr/include/hypre "$dir/include/"
# LIBRARY: it (by its soname too) and the libraries it needs, but the C library, the compilers'
# runtimes and MPI's own (the host's OpenMPI provides those, and must: one MPI in the process;
# libmpi_cxx, which OpenMPI 5 no longer ships, is packed, as are MPI's Fortran bindings)
pack_lib() {
  local so
  so=$(objdump -p "$1" | awk '$1 == "SONAME" {print $2}')
  so=${so:-$(basename "$(readlink -f "$1")")}
  cp -L "$1" "$dir/lib/$so"
  if [ -n "$petsc" ]; then # carried as an archive: a link
    ln -sf "$so" "$dir/lib/$(basename "$1")"
  else
    cp -L "$1" "$dir/lib/$(basename "$1")"
  fi
  ldd "$1" | awk '/=> \// {print $1, $3}' | while read -r name path; do
    case $name in
      libc.so* | libm.so* | libstdc++* | libgcc_s* | libgomp* | libmpi.so* | libopen-* | \
      libhwloc* | libevent* | libz.so* | libudev* | liblzma* | libbz2* | libpthread* | libdl* | \
      librt* | ld-linux* | libnl-* | libibverbs* | librdmacm* | libfabric* | libpmix* | libucp* | \
      libucs* | libuct* | libucm* | libpsm* | libnuma* | libcap* | libmunge* | libefa* | libopenblas* | \
      libblas.so* | liblapack.so*)
        ;;
      *) [ -e "$dir/lib/$name" ] || cp -L "$path" "$dir/lib/$name" ;;
    esac
  done
}
pack_lib "$lib"
if [ -n "$petsc" ]; then
  # the headers of PETSc's arch folder (links followed), the library, and a pkg-config file
  # whose prefix is the pack (cmake also finds petscksp.h and libpetsc_real without pkg-config)
  cp -rL "$petsc/include/." "$dir/include/"
  plib=$(ls "$petsc"/lib/libpetsc_real.so 2>/dev/null || ls "$petsc"/lib/libpetsc.so)
  pack_lib "$plib"
  mkdir -p "$dir/lib/pkgconfig"
  sed -e 's|^prefix=.*|prefix=${pcfiledir}/../..|' -e 's|^Libs.private:.*||' \
    "$(pkg-config --variable=pcfiledir PETSc)/PETSc.pc" > "$dir/lib/pkgconfig/PETSc.pc"
fi
# BLAS and LAPACK are left to the host (liblapack.so.3 and libblas.so.3: a host that builds
# kedr's LAPACKE rows has them, and a packed older LAPACK ahead of the host's breaks the host's
# liblapacke at link time)
rm -f "$dir/lib/libblas.so.3" "$dir/lib/liblapack.so.3"
du -sh "$dir"
if [ -n "$petsc" ]; then
  tar -C "$(dirname "$dir")" -cJf "$dir.tar.xz" "$(basename "$dir")"
  du -sh "$dir.tar.xz"
fi
ls "$dir/lib"
