# render: Embree 3, the yardstick of `kedr bench render` (bench/render_bench.c), linked into the
# benchmarks only and optional: without it the benchmark leaves out its column.
find_package(embree 3 QUIET)
if(embree_FOUND)
  add_library(kedr_render_embree INTERFACE)
  target_link_libraries(kedr_render_embree INTERFACE embree)
  target_compile_definitions(kedr_render_embree INTERFACE KEDR_HAVE_EMBREE=1)
  list(APPEND KEDR_BENCH_DEPS kedr_render_embree)
  list(APPEND KEDR_FOUND embree=ON)
else()
  list(APPEND KEDR_MISSING "embree (kedr bench render's yardstick)")
endif()

# The cpu and the GPU evaluate render's geometry and shading from the same text (whitted.h,
# bvh_trace.h); with products and sums rounded as written on both (no fused multiply-adds), they
# find the same hits and nearly the same colours (tests/unit/test_render_backends.c).
file(GLOB KEDR_RENDER_C CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/render/*.c
     ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/test_render*.c
     ${CMAKE_CURRENT_SOURCE_DIR}/tests/validation/test_render_*.c
     ${CMAKE_CURRENT_SOURCE_DIR}/bench/render_bench.c)
set_source_files_properties(${KEDR_RENDER_C} PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
if(KEDR_HAVE_CUDA)
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/render/render.cu
                              PROPERTIES COMPILE_OPTIONS -fmad=false)
endif()
