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
