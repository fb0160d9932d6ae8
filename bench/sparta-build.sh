#!/usr/bin/env bash
# Builds SPARTA (MPI + Kokkos CUDA, sm_90) from a tarball of its public source (src, lib/kokkos,
# cmake, bench) into DIR, as shared/ANCHORS.md describes; writes DIR/done holding the exit
# status when it ends (bench/dsmc-ranks.sh waits for it). From the repository root:
#
#   bench/sparta-build.sh DIR [TARBALL]          (default .dev-sparta/sparta.tar.gz)
set -u -o pipefail
dir=${1:?usage: bench/sparta-build.sh DIR [TARBALL]}
tar=$(realpath "${2:-.dev-sparta/sparta.tar.gz}") || exit 1
mkdir -p "$dir" && cd "$dir" || exit 1
rm -f done
jobs=$(($(nproc) > 8 ? $(nproc) - 6 : $(nproc)))
(
    tar -xzf "$tar" && mkdir -p tools/paraview examples build &&
        touch tools/paraview/CMakeLists.txt examples/CMakeLists.txt &&
        sed -i '/FFT_KOKKOS/d' cmake/presets/kokkos_cuda.cmake && cd build &&
        cmake -C ../cmake/presets/kokkos_cuda.cmake -DBUILD_MPI=ON -DCMAKE_BUILD_TYPE=Release \
            ../cmake >cmake.log 2>&1 &&
        make -j"$jobs" >make.log 2>&1
)
echo $? >done
