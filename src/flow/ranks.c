/* The Poisson problem over ranks: each rank holds a slab of the grid along its last axis, and
 * the operator couples a slab's end layers to the neighbours' (docs/flow.md "Several ranks").
 * y = A x is the slab's own operator with its end layers' diagonals counting the neighbour
 * cells, minus 1/h^2 times the neighbours' layers, lent before each product; dot products and
 * sums are added over ranks. */
#include "core/internal.h"
#include "flow/ops.h"
#include "kedr/comm.h"

#include <stdlib.h>
#include <string.h>

void flow_slab(int n, int r, int nr, int *off, int *count)
{
    *count = n / nr + (r < n % nr);
    *off = r * (n / nr) + (r < n % nr ? r : n % nr);
}

kedr_status flow_rk_halo(kedr_comm *comm, kedr_ctx *ctx, int lo, int hi, int tag,
                         const double *first, const double *last, size_t count, double *below,
                         double *above, double *host)
{
    size_t bytes = count * sizeof(double);
    const double *sf = first, *sl = last;
    double *rb = below, *ra = above;
    if (host) { /* staged through the host */
        sf = host;
        sl = host + count;
        rb = host + 2 * count;
        ra = host + 3 * count;
        if (lo >= 0)
            KEDR_TRY(kedr_download(ctx, host, first, bytes));
        if (hi >= 0)
            KEDR_TRY(kedr_download(ctx, host + count, last, bytes));
    }
    kedr_comm_halo send[2] = {{0}}, recv[2] = {{0}};
    int ns = 0, nr = 0;
    if (lo >= 0) {
        send[ns++] = (kedr_comm_halo){lo, tag + 1, (void *)sf, bytes};
        recv[nr++] = (kedr_comm_halo){lo, tag, rb, bytes};
    }
    if (hi >= 0) {
        send[ns++] = (kedr_comm_halo){hi, tag, (void *)sl, bytes};
        recv[nr++] = (kedr_comm_halo){hi, tag + 1, ra, bytes};
    }
    KEDR_TRY(kedr_comm_sendrecv(comm, ns, send, nr, recv));
    if (host) {
        if (lo >= 0)
            KEDR_TRY(kedr_upload(ctx, below, rb, bytes));
        if (hi >= 0)
            KEDR_TRY(kedr_upload(ctx, above, ra, bytes));
    }
    return KEDR_OK;
}

kedr_status flow_rk_end_diag(kedr_flow_poisson *ps, flow_level *L, size_t layer, double ih2)
{
    flow_ranks *rk = ps->rk;
    double *d = malloc(2 * L->N * sizeof *d);
    if (!d)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes of host memory", 16 * L->N);
    kedr_status s = kedr_download(ps->ctx, d, L->diag, L->N * sizeof *d);
    size_t last = L->N - layer;
    for (size_t c = 0; c < layer && s == KEDR_OK; c++) {
        if (rk->lo >= 0)
            d[c] += ih2;
        if (rk->hi >= 0)
            d[last + c] += ih2;
    }
    for (size_t c = 0; c < L->N; c++)
        d[L->N + c] = d[c] > 0 ? 1.0 / d[c] : 0.0;
    if (s == KEDR_OK)
        s = kedr_upload(ps->ctx, L->diag, d, L->N * sizeof *d);
    if (s == KEDR_OK)
        s = kedr_upload(ps->ctx, L->idiag, d + L->N, L->N * sizeof *d);
    free(d);
    return s;
}

kedr_status flow_poisson_set_ranks(kedr_flow_poisson *ps, kedr_comm *comm, int axis, int lo,
                                   int hi, int first, int gn, int periodic)
{
    if (ps->o.method == KEDR_FLOW_METHOD_FFT)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "[pressure] solver = fft is not supported over "
                         "several ranks yet: use solver = mg, or pcg with preconditioner = mg");
    int mg = ps->o.method == KEDR_FLOW_METHOD_MG || ps->o.precond == KEDR_FLOW_PC_MG;
    if (ps->o.method == KEDR_FLOW_METHOD_PCG && ps->o.precond == KEDR_FLOW_PC_AINV)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "[pressure] preconditioner = ainv is not "
                         "supported over several ranks yet: use preconditioner = mg (or jacobi, "
                         "ssor, none)");
    /* red-black colours over the whole grid: as create() checks the other axes */
    if ((mg || ps->o.precond == KEDR_FLOW_PC_SSOR) && periodic && gn > 1 && gn % 2)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_flow_poisson_create: red-black %s needs an even "
                         "number of cells along a periodic axis (axis %c has %d): use jacobi",
                         mg ? "multigrid smoothing" : "SSOR", "xyz"[axis], gn);
    flow_level *L = &ps->lv[0];
    flow_ranks *rk = calloc(1, sizeof *rk);
    if (!rk)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes", sizeof *rk);
    ps->rk = rk;
    rk->comm = comm;
    rk->lo = lo;
    rk->hi = hi;
    rk->axis = axis;
    rk->gn = gn;
    rk->periodic = periodic != 0;
    rk->layer = axis == 2 ? (size_t)L->n[0] * (size_t)L->n[1] : (size_t)L->n[0];
    rk->gN = (double)(L->N / (size_t)L->n[axis]) * gn;
    rk->parity = first & 1;
    rk->ih2 = 1.0 / (ps->o.h[axis] * ps->o.h[axis]);
    size_t bytes = rk->layer * sizeof(double);
    KEDR_TRY(kedr_alloc(ps->ctx, (void **)&rk->below, bytes));
    KEDR_TRY(kedr_alloc(ps->ctx, (void **)&rk->above, bytes));
    if (kedr_ctx_backend(ps->ctx) != KEDR_BACKEND_CPU) /* pinned: the halos' copies */
        KEDR_TRY(kedr_host_alloc(ps->ctx, (void **)&rk->host, 8 * bytes));
    /* the end layers' diagonals count the neighbours' cells */
    KEDR_TRY(flow_rk_end_diag(ps, L, rk->layer, rk->ih2));
    rk->lv[0].off = first;
    rk->lv[0].cnt = L->n[axis];
    if (mg) { /* the levels built on the slab alone give way to the whole grid's */
        flow_mg_free(ps);
        ps->nlevels = 1;
        KEDR_TRY(flow_rk_mg_setup(ps));
    }
    return KEDR_OK;
}

void flow_rk_free(kedr_flow_poisson *ps)
{
    if (!ps->rk)
        return;
    kedr_free(ps->ctx, ps->rk->below);
    kedr_free(ps->ctx, ps->rk->above);
    kedr_host_free(ps->ctx, ps->rk->host);
    free(ps->rk);
    ps->rk = NULL;
}

kedr_status flow_rk_dot(kedr_flow_poisson *ps, size_t n, const double *a, const double *b,
                        double *out)
{
    KEDR_TRY(flow_op_dot(ps->ctx, n, a, b, out));
    return ps->rk ? kedr_comm_allreduce(ps->rk->comm, KEDR_F64, KEDR_OP_SUM, out, 1) : KEDR_OK;
}

kedr_status flow_rk_sum(kedr_flow_poisson *ps, size_t n, const double *a, double *out)
{
    KEDR_TRY(flow_op_sum(ps->ctx, n, a, out));
    return ps->rk ? kedr_comm_allreduce(ps->rk->comm, KEDR_F64, KEDR_OP_SUM, out, 1) : KEDR_OK;
}

/* y -= s (the neighbours' layers) on the end layers of y (s = 1/h^2, or -1/h^2 for r), x and y
 * of N cells in layers of `layer` cells. */
static kedr_status couple(kedr_flow_poisson *ps, size_t N, size_t layer, const double *x,
                          double *y, double s)
{
    flow_ranks *rk = ps->rk;
    size_t last = N - layer;
    KEDR_TRY(flow_rk_halo(rk->comm, ps->ctx, rk->lo, rk->hi, 20, x, x + last, layer,
                          rk->below, rk->above, rk->host));
    if (rk->lo >= 0)
        KEDR_TRY(flow_op_axpy(ps->ctx, layer, -s, rk->below, y));
    if (rk->hi >= 0)
        KEDR_TRY(flow_op_axpy(ps->ctx, layer, -s, rk->above, y + last));
    return KEDR_OK;
}

kedr_status flow_rk_apply(kedr_flow_poisson *ps, const flow_level *L, const double *x, double *y)
{
    KEDR_TRY(flow_op_apply(ps->ctx, L, x, y));
    return ps->rk ? couple(ps, L->N, ps->rk->layer, x, y, ps->rk->ih2) : KEDR_OK;
}

kedr_status flow_rk_residual(kedr_flow_poisson *ps, const flow_level *L, const double *x,
                             const double *b, double *r)
{
    KEDR_TRY(flow_op_residual(ps->ctx, L, x, b, r));
    return ps->rk ? couple(ps, L->N, ps->rk->layer, x, r, -ps->rk->ih2) : KEDR_OK;
}

kedr_status flow_rk_residual_at(kedr_flow_poisson *ps, int l, const double *x, const double *b,
                                double *r)
{
    const flow_level *L = &ps->lv[l];
    KEDR_TRY(flow_op_residual(ps->ctx, L, x, b, r));
    return couple(ps, L->N, ps->rk->lv[l].layer, x, r, -ps->rk->lv[l].ih2);
}

/* A red-black half-sweep updates a cell from its neighbours of the other colour: across a
 * slab's end those are the neighbour rank's, lent before each half-sweep and moved to the
 * right-hand side (t = r + their 1/h^2 share on the end layers). The colour is the grid's:
 * (i + j + k) mod 2 with k counted from the grid's first layer. */
kedr_status flow_rk_ssor(kedr_flow_poisson *ps, const double *r, double *z)
{
    const flow_level *L = &ps->lv[0];
    flow_ranks *rk = ps->rk;
    size_t last = L->N - rk->layer;
    double *t = ps->t;
    KEDR_TRY(kedr_memset(ps->ctx, z, 0, L->N * sizeof *z));
    for (int h = 0; h < 2 * ps->o.steps + 1; h++) {
        KEDR_TRY(flow_rk_halo(rk->comm, ps->ctx, rk->lo, rk->hi, 20, z, z + last, rk->layer,
                              rk->below, rk->above, rk->host));
        KEDR_TRY(flow_op_copy(ps->ctx, t, r, L->N * sizeof *t));
        if (rk->lo >= 0)
            KEDR_TRY(flow_op_axpy(ps->ctx, rk->layer, rk->ih2, rk->below, t));
        if (rk->hi >= 0)
            KEDR_TRY(flow_op_axpy(ps->ctx, rk->layer, rk->ih2, rk->above, t + last));
        KEDR_TRY(flow_op_gs(ps->ctx, L, z, t, (h & 1) ^ rk->parity));
    }
    return KEDR_OK;
}
