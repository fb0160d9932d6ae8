/* Private to the flow solver: the state record and the grid's index arithmetic.
 *
 * Every velocity component is stored on the padded grid (nx + 2) x (ny + 2) x (nz + 2) (2D: one
 * z layer), cell (i, j, k) of the box at i, j, k = 1..n (2D: k = 0). Component a at storage
 * (i, j, k) is the face on the low side of that cell along axis a: faces 1..n_a + 1 along a lie
 * on the box (1 and n_a + 1 on its ends), index 0 and n + 1 across the other axes are the ghost
 * layers that carry the tangential boundary conditions. Pressure, the projection's potential and
 * the Poisson right-hand side are compact (n[0] x n[1] x n[2], x fastest), the layout of the
 * Poisson solvers. */
#ifndef KEDR_FLOW_SIM_H
#define KEDR_FLOW_SIM_H

#include "flow/grid.h"
#include "kedr/flow.h"

#include <stddef.h>

struct kedr_flow {
    kedr_ctx *ctx;
    kedr_flow_case c;
    flow_grid g;      /* what the kernels need of the grid and the boundaries */
    int dims;
    int n[3];
    double h[3];
    size_t s[3];      /* strides of the padded grid: 1, nx + 2, (nx + 2)(ny + 2) */
    int kz;           /* the first z index of the box: 1 in 3D, 0 in 2D */
    size_t padded;    /* elements of a padded array */
    size_t cells;     /* nx ny nz */
    double *q[3];     /* velocity u^n (padded) */
    double *qt[3];    /* the intermediate velocity of the step */
    double *H[3];     /* the step's right-hand side -conv + nu lap */
    double *Hold[3];  /* the previous step's (Adams–Bashforth 2) */
    double *P;        /* kinematic pressure p / rho (compact) */
    double *phi, *rhs;
    int have_old;     /* Hold holds a step */
    double dt_old;
    int64_t step;
    double time;
    int failure;      /* of the last step: 1 pressure solve, 2 NaN */
    kedr_flow_poisson *ps;
    kedr_flow_poisson_info last;
    int64_t poisson_iterations;
    double seconds_step, seconds_poisson, last_dt;
    double umax[3];   /* of q, after the last step (and at the start) */
    struct flow_ibm *ibm; /* the immersed bodies (ibm.h); NULL without */
    /* over ranks (docs/flow.md "Several ranks"): this rank holds the slab of cells
     * off .. off + n[split] - 1 along the last axis; c.bc of its inner ends read periodic */
    struct kedr_comm *comm;
    int rank, nranks;
    int split;        /* the last axis, or -1 on one rank */
    int lo, hi;       /* the neighbour ranks below and above (-1: the box's end) */
    size_t gcells;    /* cells of the whole grid */
    int gkind[6];     /* the whole grid's boundary kinds (c.bc reads periodic at inner ends) */
    double *below, *above; /* a layer of cells lent by the neighbours (P, phi) */
    /* KEDR_FLOW_FUSE=1 over ranks: the neighbour's last layer of P kept from step to step, each
     * step's P += phi applied to it from the layer of phi lent for the correction (the same
     * sum the neighbour makes), so that P is lent once, not every step; below_P_ok = 0 until
     * lent (and after the host wrote P) */
    double *below_P;
    int below_P_ok, fuse;
    struct flow_xch *xch;  /* the halos' registered buffer (poisson_impl.h) */
    /* KEDR_FLOW_PROF=1: the step's wall time by part (sim.c, FLOW_STEP_*), each from a
     * synchronised device to a synchronised device, the exchanges inside a part counted in it */
    double sp[8];
};

/* Host copies of the state for outputs and checkpoints: on the cpu the arrays themselves. */
typedef struct {
    double *q[3], *Hold[3], *P;
    int owned;
} flow_host;
kedr_status flow_host_get(const struct kedr_flow *f, flow_host *h);
/* Copies the host arrays back (cuda); nothing to do on the cpu. */
kedr_status flow_host_put(struct kedr_flow *f, const flow_host *h);
void flow_host_free(flow_host *h);

static inline size_t flow_at(const struct kedr_flow *f, int i, int j, int k)
{
    return (size_t)i + f->s[1] * (size_t)j + f->s[2] * (size_t)k;
}

/* The compact index of box cell (i, j, k) (1-based in x and y; k as stored). */
static inline size_t flow_cell(const struct kedr_flow *f, int i, int j, int k)
{
    return (size_t)(i - 1) +
           (size_t)f->n[0] * ((size_t)(j - 1) + (size_t)f->n[1] * (size_t)(k - f->kz));
}

/* Boundary conditions on q (sim.c): the normal faces of walls, slip and inflow, the ghost layers
 * of every face, the periodic copies. */
kedr_status flow_fill_bc(struct kedr_flow *f, double *const q[3]);
/* The largest |velocity| per axis over the box and its boundary values. */
kedr_status flow_umax(const struct kedr_flow *f, double *const q[3], double umax[3]);
/* Allocation of the state's arrays (sim.c), shared by create and restart. */
kedr_status flow_alloc(kedr_ctx *ctx, struct kedr_comm *comm, const kedr_flow_case *c,
                       struct kedr_flow **out);

#endif
