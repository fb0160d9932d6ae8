# tridiag: LAPACK's gtsv through LAPACKE (liblapacke-dev, with OpenBLAS or the reference LAPACK
# underneath), the cpu yardstick of `kedr bench tridiag` (bench/tridiag_bench.c). Benchmark-only:
# linked into kedr_bench through KEDR_BENCH_DEPS, never into the library. Without it the
# benchmark's LAPACK column says "not built".
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(TRIDIAG_LAPACKE QUIET IMPORTED_TARGET lapacke)
endif()
if(TRIDIAG_LAPACKE_FOUND)
  add_library(kedr_tridiag_lapacke INTERFACE)
  target_link_libraries(kedr_tridiag_lapacke INTERFACE PkgConfig::TRIDIAG_LAPACKE)
  target_compile_definitions(kedr_tridiag_lapacke INTERFACE KEDR_HAVE_LAPACKE=1)
  list(APPEND KEDR_BENCH_DEPS kedr_tridiag_lapacke)
  list(APPEND KEDR_FOUND tridiag-lapacke=ON)
else()
  list(APPEND KEDR_MISSING "LAPACKE (liblapacke-dev: kedr bench tridiag's cpu yardstick)")
endif()
