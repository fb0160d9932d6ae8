/* `kedr bench adi` (bench/adi_bench.c), declared apart from bench.h. */
#ifndef KEDR_ADI_BENCH_H
#define KEDR_ADI_BENCH_H

#include "kedr/kedr.h"

typedef struct {
    int n;            /* grid side: n^3 nodes (0: 256 on a GPU, 64 on the cpu) */
    int repeats;      /* timed repeats after a warm-up; the median is reported */
    const char *json; /* write results here as JSON, or NULL */
} kedr_bench_adi_opts;

/* Times each sweep (X, Y, Z with and without the transpose), the transposes, and whole steps, in
 * single and double precision, on a box_pipe grid of n^3 nodes; prints the table of Boreskov et
 * al. (2015), Table 12.1, and the fraction of copy bandwidth a step reaches. */
kedr_status kedr_bench_adi(kedr_ctx *ctx, const kedr_bench_adi_opts *opts);

#endif
