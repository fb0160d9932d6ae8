/* Benchmark drivers behind `kedr bench ...`. */
#ifndef KEDR_BENCH_H
#define KEDR_BENCH_H

#include "kedr/kedr.h"

typedef struct {
    size_t n;         /* elements per input */
    int repeats;      /* timed repeats after warm-up; the median is reported */
    const char *json; /* write results here as JSON, or NULL */
    const char *only; /* comma-separated benchmark names to run, or NULL for all */
} kedr_bench_prim_opts;

/* Runs the primitive benchmarks on ctx, prints a table and optionally writes JSON. With the
 * cuda back end each primitive is also timed through CUB in the same run, as the yardstick. */
kedr_status kedr_bench_prim(kedr_ctx *ctx, const kedr_bench_prim_opts *opts);

/* The names kedr_bench_prim knows, for --help and for checking --only. */
extern const char *const kedr_bench_prim_names[];

typedef struct {
    size_t particles;  /* largest box (0: 10^8 on a GPU, capped by its memory; 10^6 on the cpu) */
    const char *json;  /* write results here as JSON, or NULL */
    const char *cases; /* folder with seed-test1.ini and seed-test2.ini (NULL: cases/dsmc) */
    size_t sphere;     /* --ranks: the 3D sphere (sphere-3d.ini) refined to about this many
                        * particles, strong scaling over the ranks (0: not run) */
    int split;         /* over ranks: kedr_dsmc_split of every case (0: rcb) */
} kedr_bench_dsmc_opts;

/* The DSMC benchmarks (bench/dsmc_bench.c): the argon VSS box at sizes up to opts->particles
 * and both seed 003 cases; particle-steps/s, stage breakdown and bytes per particle. */
kedr_status kedr_bench_dsmc(kedr_ctx *ctx, const kedr_bench_dsmc_opts *opts);
/* The same over the ranks of comm (under mpirun): weak scaling of the 3D box at opts->particles
 * a rank, strong scaling of seed test 2 and (opts->sphere) of the refined 3D sphere; rank 0
 * prints and writes the JSON. Collective. */
kedr_status kedr_bench_dsmc_ranks(kedr_ctx *ctx, kedr_comm *comm,
                                  const kedr_bench_dsmc_opts *opts);

typedef struct {
    const char *groups; /* group specs separated by spaces or ';' (a spec may hold commas), or
                         * NULL for the back end's default list */
    int repeats;        /* runs of a group taking under 2 s: the median is reported */
    const char *json;   /* write results here as JSON, or NULL */
} kedr_bench_cayley_opts;

/* Times the dense search of each group on ctx: elements, levels, diameter, seconds, edge visits
 * per second and modelled bytes moved against the measured copy bandwidth; prints a table and
 * optionally writes JSON. */
kedr_status kedr_bench_cayley(kedr_ctx *ctx, const kedr_bench_cayley_opts *opts);

/* The default group lists, NULL-terminated: plain strings, so that groups can be added. */
extern const char *const kedr_bench_cayley_cpu_groups[];
extern const char *const kedr_bench_cayley_cuda_groups[];

typedef struct {
    size_t n;            /* unknowns a call (systems of each length: n / length) */
    const char *lengths; /* comma-separated system lengths, or NULL for 64,256,1024 */
    int repeats;         /* timed repeats after warm-up; the median is reported */
    const char *json;    /* write results here as JSON, or NULL */
    kedr_tridiag_algorithm algorithm; /* kedr's algorithm for every row */
} kedr_bench_tridiag_opts;

/* Times kedr_tridiag_solve per layout, precision, system length and periodicity (bench/
 * tridiag_bench.c): G unknowns/s and the fraction of the copy bandwidth; on the GPU also
 * cuSPARSE (gtsv2StridedBatch, gtsvInterleavedBatch) in the same run. */
kedr_status kedr_bench_tridiag(kedr_ctx *ctx, const kedr_bench_tridiag_opts *opts);

#endif
