# The example programs of examples/<name>/: each is one program, example_<name>, with a cpu path
# that is always built and a GPU path (its .cu files and the CUDA libraries) when the cuda back
# end is; each has a ctest test, example_<name>, that runs it at a small size and fails when its
# answer is wrong. Libraries are found by cmake/deps/probe.cmake.
function(kedr_example name)
  cmake_parse_arguments(EX "" "" "SOURCES;CUDA_SOURCES;LIBS;CUDA_LIBS;ARGS" ${ARGN})
  set(target example_${name})
  set(srcs ${EX_SOURCES})
  if(KEDR_HAVE_CUDA)
    list(APPEND srcs ${EX_CUDA_SOURCES})
  endif()
  list(TRANSFORM srcs PREPEND ${CMAKE_SOURCE_DIR}/examples/${name}/)
  add_executable(${target} ${srcs})
  target_link_libraries(${target} PRIVATE kedr ${EX_LIBS})
  if(KEDR_HAVE_CUDA)
    target_link_libraries(${target} PRIVATE ${EX_CUDA_LIBS})
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
  endif()
  add_test(NAME ${target} COMMAND ${target} ${EX_ARGS})
  set_tests_properties(${target} PROPERTIES LABELS example)
endfunction()

if(KEDR_EXAMPLES_BLAS)
  kedr_example(power_method SOURCES power_method.c CUDA_SOURCES power_cuda.cu
               LIBS PkgConfig::KEDR_OPENBLAS PkgConfig::KEDR_LAPACKE CUDA_LIBS CUDA::cublas
               ARGS --n 300 --check)
  kedr_example(streamed_gemm SOURCES streamed_gemm.c CUDA_SOURCES gemm_cuda.cu
               LIBS PkgConfig::KEDR_OPENBLAS m CUDA_LIBS CUDA::cublas ARGS --n 300 --streams 4)
  kedr_example(matmul SOURCES matmul.c CUDA_SOURCES sgemm_cuda.cu
               LIBS PkgConfig::KEDR_OPENBLAS m CUDA_LIBS CUDA::cublas ARGS --n 129 --repeats 2)
endif()
if(KEDR_EXAMPLES_FFTW)
  kedr_example(fft_poisson SOURCES fft_poisson.c CUDA_SOURCES poisson_cuda.cu
               LIBS PkgConfig::KEDR_FFTW3 m CUDA_LIBS CUDA::cufft ARGS --n 128 --check)
endif()
kedr_example(sparse_trsv SOURCES sparse_trsv.c CUDA_SOURCES trsv_cuda.cu LIBS m
             CUDA_LIBS CUDA::cusparse ARGS --n 20000)
kedr_example(rainfall SOURCES rainfall.c ARGS --days 60 --sites 1000)
# One day: about half the sites have no rain and must not appear in the totals.
add_test(NAME example_rainfall_one_day COMMAND example_rainfall --days 1 --sites 5000)
set_tests_properties(example_rainfall_one_day PROPERTIES LABELS example)
kedr_example(sort_by_key SOURCES sort_by_key.c ARGS --n 1000003)
kedr_example(multi_gpu SOURCES multi_gpu.c CUDA_SOURCES halo_cuda.cu LIBS m
             ARGS --nx 257 --ny 131 --parts 5 --steps 30)
