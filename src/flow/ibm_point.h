/* Private to flow: the immersed boundary's per-point functions, the same for the cpu loops
 * (ibm.c) and the cuda kernels (ibm.cu): the discrete delta, a Lagrangian point's stencil on the
 * staggered grid of one velocity component, interpolation to the point and spreading from it.
 *
 * The delta is a tensor product delta_h(x) = prod_a phi(x_a / h_a) / h_a. A grid value's weight
 * at point X is w(x) = prod_a phi((x_a - X_a) / h_a), so that interpolation (L u)(X) = sum_x u(x)
 * w(x) and spreading f(x) += g w(x) are adjoint, and L L* is symmetric positive semidefinite.
 * Both kernels satisfy, for every offset r, sum_i phi(r - i) = 1 and sum_i (r - i) phi(r - i) = 0
 * (a constant and a linear field interpolate exactly; a spread force keeps its sum and its
 * moment); Peskin's also has sum_i phi(r - i)^2 = 3/8 for every r. */
#ifndef KEDR_FLOW_IBM_POINT_H
#define KEDR_FLOW_IBM_POINT_H

#include "flow/grid.h"

#include <math.h>

#define FLOW_IBM_WMAX 4 /* the widest kernel's support (cells an axis) */

/* Peskin (2002), Acta Numerica 11, the 4-point kernel; Roma, Peskin & Berger (1999), J. Comput.
 * Phys. 153, the 3-point kernel. */
FLOW_HD double flow_ibm_phi(int delta, double r)
{
    r = r < 0 ? -r : r;
    if (delta == KEDR_FLOW_DELTA_ROMA3) {
        if (r <= 0.5) {
            double t = 1 - 3 * r * r;
            return (1 + sqrt(t > 0 ? t : 0)) / 3;
        }
        if (r < 1.5) {
            double t = 1 - 3 * (1 - r) * (1 - r);
            return (5 - 3 * r - sqrt(t > 0 ? t : 0)) / 6;
        }
        return 0;
    }
    if (r <= 1) {
        double t = 1 + 4 * r - 4 * r * r;
        return (3 - 2 * r + sqrt(t > 0 ? t : 0)) / 8;
    }
    if (r < 2) {
        double t = -7 + 12 * r - 4 * r * r;
        return (5 - 2 * r - sqrt(t > 0 ? t : 0)) / 8;
    }
    return 0;
}

FLOW_HD int flow_ibm_width(int delta) { return delta == KEDR_FLOW_DELTA_ROMA3 ? 3 : 4; }

/* The stencil of a point at X for component comp: along each axis a, cnt[a] padded indices
 * idx[a][m] and weights w[a][m] (2D: z is the single index 0 of weight 1). Periodic axes wrap to
 * the stored range 1..n; elsewhere the caller keeps the points far enough inside the box that
 * the stencil stays on the unknown faces and the box's cells. */
typedef struct {
    int cnt[3];
    int idx[3][FLOW_IBM_WMAX];
    double w[3][FLOW_IBM_WMAX];
} flow_ibm_stencil;

FLOW_HD void flow_ibm_stencil_at(const flow_grid *g, int delta, int comp, const double X[3],
                                 flow_ibm_stencil *st)
{
    int W = flow_ibm_width(delta);
    for (int a = 0; a < 3; a++) {
        if (a >= g->dims) {
            st->cnt[a] = 1;
            st->idx[a][0] = 0;
            st->w[a][0] = 1;
            continue;
        }
        /* padded index i sits at x = (i - 1) h on its axis' faces, (i - 1/2) h elsewhere */
        double s = X[a] / g->h[a] + (a == comp ? 1.0 : 0.5);
        int i0 = (int)floor(s - 0.5 * W) + 1;
        /* over ranks, along the split axis: the whole grid's indices (X is global), then this
         * slab's own faces and cells only (1 .. its n); the rest weigh 0 here (another rank
         * adds them). On a body's box (g->box), every axis likewise: the whole grid's index,
         * then the box's own. */
        int split = g->box || a == g->split;
        int n = g->box ? g->bn[a] : split ? g->nsplit : g->n[a];
        int periodic = g->box ? g->bper[a]
                       : split ? g->periodic_split
                               : g->kind[2 * a] == KEDR_FLOW_BC_PERIODIC;
        st->cnt[a] = W;
        for (int m = 0; m < W; m++) {
            int i = i0 + m;
            st->w[a][m] = flow_ibm_phi(delta, (double)i - s);
            if (periodic)
                i = 1 + (((i - 1) % n) + n) % n;
            if (split) {
                i -= g->off[a];
                if (i < 1 || i > g->n[a]) {
                    st->w[a][m] = 0;
                    i = 1;
                }
            }
            st->idx[a][m] = i;
        }
    }
}

/* (L field)(X): the weighted sum over the stencil. */
FLOW_HD double flow_ibm_interp(const flow_grid *g, const flow_ibm_stencil *st,
                               const double *field)
{
    double sum = 0;
    for (int k = 0; k < st->cnt[2]; k++)
        for (int j = 0; j < st->cnt[1]; j++) {
            double wjk = st->w[1][j] * st->w[2][k];
            size_t row = g->s[1] * (size_t)st->idx[1][j] + g->s[2] * (size_t)st->idx[2][k];
            for (int i = 0; i < st->cnt[0]; i++)
                sum += field[row + (size_t)st->idx[0][i]] * (st->w[0][i] * wjk);
        }
    return sum;
}

#ifdef __CUDA_ARCH__
#define FLOW_IBM_ADD(p, v) atomicAdd((p), (v))
#else
#define FLOW_IBM_ADD(p, v) (*(p) += (v))
#endif

/* field += value w over the stencil (L* for one point); zero: field = 0 there instead. The
 * entries of weight 0 add nothing and are skipped (over ranks every stencil entry off the slab
 * has weight 0 at index 1: adding there from every point would only make the atomics of all
 * the points meet on a few cells). */
FLOW_HD void flow_ibm_spread(const flow_grid *g, const flow_ibm_stencil *st, double *field,
                             double value, int zero)
{
    for (int k = 0; k < st->cnt[2]; k++)
        for (int j = 0; j < st->cnt[1]; j++) {
            double wjk = st->w[1][j] * st->w[2][k];
            if (!zero && wjk == 0)
                continue;
            size_t row = g->s[1] * (size_t)st->idx[1][j] + g->s[2] * (size_t)st->idx[2][k];
            for (int i = 0; i < st->cnt[0]; i++) {
                double *p = field + row + (size_t)st->idx[0][i];
                double w = st->w[0][i] * wjk;
                if (zero)
                    *p = 0;
                else if (w != 0)
                    FLOW_IBM_ADD(p, value * w);
            }
        }
}

/* The operations over all points (ibm.c loops, ibm.cu kernels). */
typedef enum {
    FLOW_IBM_STENCIL,    /* st[l] = the stencil of X_l for comp (kept for the other ops) */
    FLOW_IBM_INTERP,     /* out[l] = (L field)(X_l) */
    FLOW_IBM_INTERP_RHS, /* out[l] = (ub[l] - (L field)(X_l)) scale */
    FLOW_IBM_SPREAD,     /* field += L* (in scale) */
    FLOW_IBM_ZERO        /* field = 0 on every point's stencil */
} flow_ibm_op;

typedef struct {
    const double *X[3]; /* point positions */
    const double *in;   /* SPREAD: the point values */
    const double *ub;   /* INTERP_RHS: the target velocities */
    double *out;        /* INTERP: the point values */
    double *field;      /* the component's padded grid array */
    flow_ibm_stencil *st; /* the points' stencils for comp (STENCIL writes them; NULL: the
                             other ops compute their own) */
    double scale;
    int comp, delta;
} flow_ibm_args;

FLOW_HD void flow_ibm_point(const flow_grid *g, const flow_ibm_args *A, flow_ibm_op op, size_t l)
{
    flow_ibm_stencil st;
    if (op == FLOW_IBM_STENCIL || !A->st) {
        double X[3] = {A->X[0][l], A->X[1][l], g->dims == 3 ? A->X[2][l] : 0.0};
        flow_ibm_stencil_at(g, A->delta, A->comp, X, &st);
    } else {
        st = A->st[l];
    }
    switch (op) {
    case FLOW_IBM_STENCIL: A->st[l] = st; break;
    case FLOW_IBM_INTERP: A->out[l] = flow_ibm_interp(g, &st, A->field); break;
    case FLOW_IBM_INTERP_RHS:
        A->out[l] = ((A->ub ? A->ub[l] : 0.0) - flow_ibm_interp(g, &st, A->field)) * A->scale;
        break;
    case FLOW_IBM_SPREAD: flow_ibm_spread(g, &st, A->field, A->in[l] * A->scale, 0); break;
    default: flow_ibm_spread(g, &st, A->field, 0, 1);
    }
}

#endif
