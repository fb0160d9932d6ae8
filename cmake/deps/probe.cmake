# The libraries of the example programs (examples/, cmake/targets/examples.cmake): FFTW, OpenBLAS
# and LAPACKE for their cpu paths; cuBLAS, cuFFT and cuSPARSE come with the CUDA toolkit. None of
# them is linked into the library. An example whose library is missing is not built, and the
# configure summary says which.
find_package(PkgConfig QUIET)
set(KEDR_EXAMPLES_FFTW OFF)
set(KEDR_EXAMPLES_BLAS OFF)
if(PkgConfig_FOUND)
  pkg_check_modules(KEDR_FFTW3 QUIET IMPORTED_TARGET fftw3)
  pkg_check_modules(KEDR_OPENBLAS QUIET IMPORTED_TARGET openblas)
  pkg_check_modules(KEDR_LAPACKE QUIET IMPORTED_TARGET lapacke)
  if(KEDR_FFTW3_FOUND)
    set(KEDR_EXAMPLES_FFTW ON)
  endif()
  if(KEDR_OPENBLAS_FOUND AND KEDR_LAPACKE_FOUND)
    set(KEDR_EXAMPLES_BLAS ON)
  endif()
endif()
list(APPEND KEDR_FOUND examples-fftw=${KEDR_EXAMPLES_FFTW} examples-blas=${KEDR_EXAMPLES_BLAS})
if(NOT KEDR_EXAMPLES_FFTW)
  list(APPEND KEDR_MISSING "FFTW (libfftw3-dev: the FFT Poisson example)")
endif()
if(NOT KEDR_EXAMPLES_BLAS)
  list(APPEND KEDR_MISSING
       "OpenBLAS and LAPACKE (libopenblas-dev, liblapacke-dev: the power-method, matmul and streamed-GEMM examples)")
endif()
