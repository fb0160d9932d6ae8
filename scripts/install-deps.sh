#!/usr/bin/env bash
# Installs the Debian packages kedr needs to build and test; does nothing when they are present,
# so it is safe to run before every build. Not root: prints the command to run instead.
# The CUDA toolkit is optional (the cuda back end is built when nvcc is found) and is not
# installed from here. --fuzz: clang, its sanitizer and libFuzzer runtime and its OpenMP instead,
# for the long fuzz campaign (scripts/fuzz.sh), which CI does not run. --anchors: also the
# libraries that only the benchmarks compare against (Embree, PETSc, hypre).
set -euo pipefail

missing=()
if [ "${1:-}" = --fuzz ]; then
  command -v clang >/dev/null 2>&1 || missing+=(clang)
  if command -v clang >/dev/null 2>&1; then
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' |
      clang -fsanitize=fuzzer,address,undefined -x c - -o /dev/null 2>/dev/null ||
      missing+=(libclang-rt-dev)
    echo 'int main(void){return 0;}' | clang -fopenmp -x c - -o /dev/null 2>/dev/null ||
      missing+=(libomp-dev)
  else
    missing+=(libclang-rt-dev libomp-dev)
  fi
else
  # command -> Debian package that provides it
  declare -A need=([gcc]=gcc [g++]=g++ [make]=make [cmake]=cmake [pkg-config]=pkg-config [python3]=python3)
  for cmd in "${!need[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
  done
  # OpenMP for C comes with gcc as libgomp; check it links.
  if command -v gcc >/dev/null 2>&1; then
    echo 'int main(void){return 0;}' | gcc -fopenmp -x c - -o /dev/null 2>/dev/null || missing+=(libgomp1 libgcc-12-dev)
  fi
  # PNG plots: PLplot's headers (found through pkg-config) and its cairo driver (pngcairo); MPI
  # (Open MPI: headers, mpicc and mpirun) for runs over several GPUs or processes and their tests.
  if command -v dpkg-query >/dev/null 2>&1; then
    # FFTW (kedr flow's direct solver, the FFT example), OpenBLAS and LAPACKE (the examples, the
    # cpu yardstick of kedr bench tridiag), assimp (OBJ/MTL meshes of kedr render), zlib
    # (compressed VTK files).
    pkgs=(libplplot-dev plplot-driver-cairo libopenmpi-dev openmpi-bin libfftw3-dev libopenblas-dev
          liblapacke-dev libassimp-dev zlib1g-dev)
    # --anchors: the benchmarks' cpu yardsticks as well (Embree for kedr bench render; PETSc and
    # hypre for kedr bench flow), which the build and the tests do not need.
    [ "${1:-}" = --anchors ] && pkgs+=(libembree-dev libhypre-dev petsc-dev)
    for pkg in "${pkgs[@]}"; do
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
  fi
fi
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "kedr needs these packages: ${missing[*]}" >&2
  echo "run as root: $cmd" >&2
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
