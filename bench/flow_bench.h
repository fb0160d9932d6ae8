/* kedr bench flow: the pressure Poisson solvers per preconditioner and the time step of the
 * projection solver (bench/flow_bench.c), with hypre and PETSc on the same problem on the cpu
 * when the build has them. */
#ifndef KEDR_FLOW_BENCH_H
#define KEDR_FLOW_BENCH_H

#include "kedr/kedr.h"

typedef struct {
    int n2d, n3d;        /* the 2D grid n x n and the 3D grid n^3 (0: the defaults) */
    int repeats;         /* timed solves per row (median) */
    int steps;           /* timed time steps */
    const char *only;    /* "poisson", "step", "fft" (the FFT solver's rows alone) or NULL */
    const char *solvers; /* comma-separated solver names of the Poisson rows ("pcg-mg,mg"), NULL: all */
    const char *json;    /* record path or NULL */
    int no_yardsticks;   /* skip hypre and PETSc */
} kedr_bench_flow_opts;

kedr_status kedr_bench_flow(kedr_ctx *ctx, const kedr_bench_flow_opts *o);
/* The MPI rank of the last kedr_bench_flow's yardsticks (0 in one process): the ranks above 0
 * print nothing and write no record. */
int kedr_bench_flow_rank(void);
/* Which yardsticks the build has, in words ("hypre, PETSc", or "none"). */
const char *kedr_bench_flow_yardsticks(void);

#endif
