/* kedr bench render (bench/render_bench.c), called from apps/kedr/cmd_render.c. */
#ifndef KEDR_RENDER_BENCH_H
#define KEDR_RENDER_BENCH_H

int render_bench_main(int argc, char **argv);

#endif
