/* Private to the flow solver: the grid and boundary record that the kernels take by value, and
 * the per-point operations of a time step, the same for the cpu loops (sim_ops.c) and the cuda
 * kernels (sim_ops.cu). Layout: sim.h. */
#ifndef KEDR_FLOW_GRID_H
#define KEDR_FLOW_GRID_H

#include "kedr/flow.h"

#include <stddef.h>

#ifndef FLOW_HD
#ifdef __CUDACC__
#define FLOW_HD __host__ __device__ __forceinline__
#else
#define FLOW_HD static inline
#endif
#endif

typedef struct {
    int dims, n[3], kz;
    size_t s[3];
    double h[3], length[3], nu;
    int kind[6];         /* kedr_flow_bc_kind of each face */
    int parabolic[6];
    double vel[6][3];
    int off[3];          /* the slab's first cell in the whole grid (over ranks; else 0) */
    int split;           /* the axis the grid is split along over ranks; -1 on one rank */
    int nsplit;          /* over ranks: the whole grid's cells along it */
    int periodic_split;  /* ... and whether the whole grid is periodic along it */
    /* an immersed body's box (ibm.c): a grid of its own holding every cell the bodies'
     * stencils touch, cells off[a] + 1 .. off[a] + n[a] of the whole grid, whose bn[a] cells
     * along each axis are periodic where bper[a] (ibm_point.h) */
    int box, bn[3], bper[3];
} flow_grid;

/* The arrays a step's operations read and write, and their scalars. */
typedef struct {
    double *q[3], *qt[3], *H[3], *Hold[3];
    double *P, *phi, *rhs;
    double *below; /* over ranks: the layer of cells below the slab (P or phi, as the op reads) */
    int comp, axis, side, other; /* the component; a face's axis and side; a ghost's component */
    double dt, a1, a0, scale, uc, corr;
} flow_args;

/* A box of padded indices, both ends included. */
typedef struct {
    int lo[3], hi[3];
} flow_box;

typedef enum {
    FLOW_OP_RHS,            /* H[comp] = -div(u u_comp) + nu lap u_comp */
    FLOW_OP_PREDICT,        /* qt = q + dt (a1 H + a0 Hold - grad P) */
    FLOW_OP_CORRECT,        /* q = qt - dt grad phi */
    FLOW_OP_DIV_RHS,        /* rhs = -div(qt) scale */
    FLOW_OP_BC_NORMAL,      /* the normal faces of face (axis, side) of q */
    FLOW_OP_BC_PERIODIC_LO, /* face 0 of a periodic axis: a copy of face n */
    FLOW_OP_BC_GHOST,       /* ghost layer of component `other` at face (axis, side) */
    FLOW_OP_OUTFLOW,        /* qt's outflow faces from the convective condition */
    FLOW_OP_OUTFLOW_CORRECT,/* qt's outflow faces + corr outward */
    FLOW_OP_ADD_PHI         /* P += phi (box over cells) */
} flow_op;

typedef enum {
    FLOW_RED_MAXABS, /* max |q[comp]| */
    FLOW_RED_MAXDIV, /* max |div q| over cells */
    FLOW_RED_SUM,    /* sum of q[comp] (a face's flux / area) */
    FLOW_RED_ENERGY  /* sum of w q[comp]^2, w = 1/2 on the box's non-periodic end faces */
} flow_red;

FLOW_HD size_t flow_g_at(const flow_grid *g, int i, int j, int k)
{
    return (size_t)i + g->s[1] * (size_t)j + g->s[2] * (size_t)k;
}

/* the compact index of box cell (i, j, k) */
FLOW_HD size_t flow_g_cell(const flow_grid *g, int i, int j, int k)
{
    return (size_t)(i - 1) +
           (size_t)g->n[0] * ((size_t)(j - 1) + (size_t)g->n[1] * (size_t)(k - g->kz));
}

/* The coordinates of padded point (i, j, k) of component comp (comp = -1: a cell centre). */
FLOW_HD void flow_g_coords(const flow_grid *g, int comp, const int ijk[3], double x[3])
{
    for (int t = 0; t < 3; t++) {
        int idx = t == 2 && g->dims == 2 ? 1 : ijk[t] + g->off[t];
        x[t] = (idx - (t == comp ? 1.0 : 0.5)) * g->h[t];
    }
}

/* The inflow velocity's component b at (x, y, z) on face `face`. */
FLOW_HD double flow_g_inflow(const flow_grid *g, int face, int b, const double x[3])
{
    double v = g->vel[face][b];
    if (!g->parabolic[face])
        return v;
    for (int t = 0; t < g->dims; t++)
        if (t != face / 2) {
            double s = x[t] / g->length[t];
            v *= 1.5 * 4 * s * (1 - s);
        }
    return v;
}

/* H of component b at its face (i, j, k): Morinishi et al.'s divergence form. */
FLOW_HD double flow_g_rhs(const flow_grid *g, double *const q[3], int b, int i, int j, int k)
{
    size_t c = flow_g_at(g, i, j, k);
    const double *qb = q[b];
    double conv = 0, diff = 0;
    for (int a = 0; a < g->dims; a++) {
        size_t sa = g->s[a], sb = g->s[b];
        double ih = 1.0 / g->h[a];
        if (a == b) {
            double up = 0.5 * (qb[c] + qb[c + sa]), dn = 0.5 * (qb[c - sa] + qb[c]);
            conv += (up * up - dn * dn) * ih;
        } else {
            const double *qa = q[a];
            double up = 0.5 * (qa[c + sa] + qa[c + sa - sb]) * 0.5 * (qb[c] + qb[c + sa]);
            double dn = 0.5 * (qa[c] + qa[c - sb]) * 0.5 * (qb[c - sa] + qb[c]);
            conv += (up - dn) * ih;
        }
        diff += (qb[c + sa] - 2 * qb[c] + qb[c - sa]) * ih * ih;
    }
    return -conv + g->nu * diff;
}

/* (f(cell) - f(the cell below along b)) / h_b at face (i, j, k) of component b, f compact;
 * the cell below face 1 of a periodic axis is the last one, and over ranks, below face 1 of
 * the split axis, the neighbour's (below: that layer). */
FLOW_HD double flow_g_grad(const flow_grid *g, const double *f, const double *below, int b,
                           int i, int j, int k)
{
    size_t cc = flow_g_cell(g, i, j, k);
    size_t sb = b == 0 ? 1 : b == 1 ? (size_t)g->n[0] : (size_t)g->n[0] * (size_t)g->n[1];
    int along = b == 0 ? i : b == 1 ? j : k;
    if (along == 1 && b == g->split)
        return (f[cc] - below[cc]) / g->h[b];
    size_t lo = along > 1 ? cc - sb : cc + (size_t)(g->n[b] - 1) * sb;
    return (f[cc] - f[lo]) / g->h[b];
}

FLOW_HD double flow_g_div(const flow_grid *g, double *const q[3], int i, int j, int k)
{
    size_t c = flow_g_at(g, i, j, k);
    double d = 0;
    for (int a = 0; a < g->dims; a++)
        d += (q[a][c + g->s[a]] - q[a][c]) / g->h[a];
    return d;
}

/* One point of a boundary operation on the array set q. */
FLOW_HD void flow_g_bc(const flow_grid *g, double *const q[3], flow_op op, int a, int side,
                       int b, int i, int j, int k)
{
    int face = 2 * a + side, kind = g->kind[face], n = g->n[a];
    size_t sa = g->s[a], c = flow_g_at(g, i, j, k);
    int ijk[3] = {i, j, k};
    if (op == FLOW_OP_BC_NORMAL) {
        if (kind == KEDR_FLOW_BC_PERIODIC) {
            if (side) /* face n + 1 is face 1 */
                q[a][c] = q[a][c - (size_t)n * sa];
        } else if (kind == KEDR_FLOW_BC_WALL || kind == KEDR_FLOW_BC_SLIP) {
            q[a][c] = 0;
        } else if (kind == KEDR_FLOW_BC_INFLOW) {
            double x[3];
            flow_g_coords(g, a, ijk, x);
            q[a][c] = flow_g_inflow(g, face, a, x);
        } /* outflow: set in the step */
    } else if (op == FLOW_OP_BC_PERIODIC_LO) {
        q[a][c] = q[a][c + (size_t)n * sa]; /* face 0 is face n */
    } else { /* FLOW_OP_BC_GHOST */
        size_t ci = side ? c - sa : c + sa; /* the box's first layer inside */
        if (kind == KEDR_FLOW_BC_PERIODIC) {
            q[b][c] = side ? q[b][c - (size_t)n * sa] : q[b][c + (size_t)n * sa];
        } else if (kind == KEDR_FLOW_BC_WALL) {
            q[b][c] = 2 * g->vel[face][b] - q[b][ci];
        } else if (kind == KEDR_FLOW_BC_INFLOW) {
            double x[3];
            ijk[a] = side ? n : 1;
            flow_g_coords(g, b, ijk, x);
            x[a] = side ? g->length[a] : 0;
            q[b][c] = 2 * flow_g_inflow(g, face, b, x) - q[b][ci];
        } else { /* slip, outflow: no shear */
            q[b][c] = q[b][ci];
        }
    }
}

/* One point of a map operation. */
FLOW_HD void flow_g_point(const flow_grid *g, const flow_args *A, flow_op op, int i, int j, int k)
{
    size_t c = flow_g_at(g, i, j, k);
    int b = A->comp;
    switch (op) {
    case FLOW_OP_RHS: A->H[b][c] = flow_g_rhs(g, A->q, b, i, j, k); break;
    case FLOW_OP_PREDICT:
        A->qt[b][c] = A->q[b][c] + A->dt * (A->a1 * A->H[b][c] + A->a0 * A->Hold[b][c] -
                                            flow_g_grad(g, A->P, A->below, b, i, j, k));
        break;
    case FLOW_OP_CORRECT:
        A->q[b][c] = A->qt[b][c] - A->dt * flow_g_grad(g, A->phi, A->below, b, i, j, k);
        break;
    case FLOW_OP_DIV_RHS:
        A->rhs[flow_g_cell(g, i, j, k)] = -flow_g_div(g, A->qt, i, j, k) * A->scale;
        break;
    case FLOW_OP_OUTFLOW: {
        size_t in = A->side ? c - g->s[A->axis] : c + g->s[A->axis];
        double *qn = A->qt[A->axis];
        const double *qo = A->q[A->axis];
        qn[c] = qo[c] - A->dt * A->uc * (qo[c] - qo[in]) / g->h[A->axis];
        break;
    }
    case FLOW_OP_OUTFLOW_CORRECT: A->qt[A->axis][c] += A->side ? A->corr : -A->corr; break;
    case FLOW_OP_ADD_PHI: {
        size_t cc = flow_g_cell(g, i, j, k);
        A->P[cc] += A->phi[cc];
        break;
    }
    default: /* the boundary operations */
        flow_g_bc(g, A->q, op, A->axis, A->side, A->other, i, j, k);
    }
}

/* One point's part of a reduction. */
FLOW_HD double flow_g_reduce_point(const flow_grid *g, const flow_args *A, flow_red op, int i,
                                   int j, int k)
{
    size_t c = flow_g_at(g, i, j, k);
    int b = A->comp;
    switch (op) {
    case FLOW_RED_MAXABS: {
        double v = A->q[b][c];
        return v < 0 ? -v : v;
    }
    case FLOW_RED_MAXDIV: {
        double d = flow_g_div(g, A->q, i, j, k);
        return d < 0 ? -d : d;
    }
    case FLOW_RED_SUM: return A->q[b][c];
    default: { /* FLOW_RED_ENERGY */
        int along = b == 0 ? i : b == 1 ? j : k;
        /* (over ranks, a slab's inner ends count as periodic ones: the face above the slab
         * is the next slab's) */
        int per_lo = g->kind[2 * b] == KEDR_FLOW_BC_PERIODIC;
        int per_hi = g->kind[2 * b + 1] == KEDR_FLOW_BC_PERIODIC;
        double w = along == g->n[b] + 1 ? (per_hi ? 0.0 : 0.5)
                   : along == 1 && !per_lo ? 0.5 : 1.0;
        double v = A->q[b][c];
        return w * v * v;
    }
    }
}

#endif
