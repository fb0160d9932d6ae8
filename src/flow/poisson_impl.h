/* Private to the Poisson solvers: the grid levels, the stencil of A = -Laplacian with Neumann or
 * periodic ends, and the solver record. */
#ifndef KEDR_FLOW_POISSON_IMPL_H
#define KEDR_FLOW_POISSON_IMPL_H

#include "kedr/flow.h"

#include <stddef.h>

/* Loops over fewer cells than this run on one thread: a parallel region costs more than the
 * loop on small grids (and the coarse multigrid levels). */
#define FLOW_OMP_MIN 32768

/* One grid: the finest (the problem's) or a multigrid level. */
typedef struct {
    int n[3];
    double ih2[3];   /* 1 / h^2 along active axes (n > 1), 0 along inactive ones */
    int per[3];
    size_t N;
    double *diag;    /* A's diagonal */
    double *idiag;   /* its inverse (0 where the diagonal is 0: a one-cell grid) */
    double *x, *b, *r; /* multigrid work (level >= 1: x, b, r; level 0: r only) */
    /* transfer to the next coarser level, per axis: coarsened or not, and the tables */
    int coarsened[3];
    int *p_idx[3];   /* prolongation: fine cell f takes p_w[2f], p_w[2f+1] of coarse p_idx[2f..] */
    double *p_w[3];
    int *r_cnt[3];   /* restriction: coarse cell I gathers r_cnt[I] fine cells r_idx[4I..] */
    int *r_idx[3];
    double *r_w[3];
} flow_level;

/* The neighbours of cell (i, j, k) at index c: weight w[m] (1/h^2, or 0 where the neighbour
 * is outside a Neumann end or the axis is inactive) and index at[m], for m = x-, x+, y-, y+,
 * z-, z+. Branch-free, so that the loops over a row vectorize. */
typedef struct {
    double w[6];
    size_t at[6];
} flow_nb;

static inline void flow_neighbours(const flow_level *L, int i, int j, int k, size_t c,
                                   flow_nb *nb)
{
    const int nx = L->n[0], ny = L->n[1], nz = L->n[2];
    const size_t sy = (size_t)nx, sz = (size_t)nx * (size_t)ny;
    nb->w[0] = (i > 0 || L->per[0]) ? L->ih2[0] : 0.0;
    nb->w[1] = (i < nx - 1 || L->per[0]) ? L->ih2[0] : 0.0;
    nb->w[2] = (j > 0 || L->per[1]) ? L->ih2[1] : 0.0;
    nb->w[3] = (j < ny - 1 || L->per[1]) ? L->ih2[1] : 0.0;
    nb->w[4] = (k > 0 || L->per[2]) ? L->ih2[2] : 0.0;
    nb->w[5] = (k < nz - 1 || L->per[2]) ? L->ih2[2] : 0.0;
    nb->at[0] = i > 0 ? c - 1 : c + (size_t)(nx - 1);
    nb->at[1] = i < nx - 1 ? c + 1 : c - (size_t)(nx - 1);
    nb->at[2] = j > 0 ? c - sy : c + (size_t)(ny - 1) * sy;
    nb->at[3] = j < ny - 1 ? c + sy : c - (size_t)(ny - 1) * sy;
    nb->at[4] = k > 0 ? c - sz : c + (size_t)(nz - 1) * sz;
    nb->at[5] = k < nz - 1 ? c + sz : c - (size_t)(nz - 1) * sz;
}

#define FLOW_MAX_LEVELS 24

struct kedr_flow_poisson {
    kedr_ctx *ctx;
    kedr_flow_poisson_opts o;
    int nlevels;
    flow_level lv[FLOW_MAX_LEVELS];
    /* the coarsest level: a dense Cholesky factor of A + s 1 1^T / N (N <= FLOW_DENSE_MAX), or
     * (larger) a fixed number of symmetric Gauss–Seidel sweeps */
    double *chol;
    int coarse_sweeps;
    double omega;           /* Jacobi relaxation in force */
    /* PCG vectors on the finest grid */
    double *r, *z, *p, *q, *t, *bb;
    double *history;
    int history_cap;
};

/* The coarsest multigrid grid solved directly up to this many cells. */
#define FLOW_DENSE_MAX 512

/* A's action and pieces shared by the solvers (poisson.c). flow_level_diag fills diag, idiag. */
void flow_level_diag(flow_level *L);
void flow_apply(const flow_level *L, const double *x, double *y);
void flow_residual(const flow_level *L, const double *x, const double *b, double *r);
/* One red-black Gauss–Seidel half-sweep over the cells of one colour ((i + j + k) % 2). */
void flow_gs_colour(const flow_level *L, double *x, const double *b, int colour);
void flow_project_mean(const flow_level *L, double *x);

/* Multigrid (mg.c): the levels below the finest and their transfers; one V-cycle from zero,
 * z = V(r), a symmetric operator, on the finest level. */
kedr_status flow_mg_setup(kedr_flow_poisson *ps);
void flow_mg_free(kedr_flow_poisson *ps);
void flow_mg_vcycle(kedr_flow_poisson *ps, const double *r, double *z);

#endif
