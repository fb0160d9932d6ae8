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

int flow_prof(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("KEDR_FLOW_PROF");
        on = e && !strcmp(e, "1");
    }
    return on;
}

kedr_status flow_env_switch(const char *name, int def, const char *choices, int *on)
{
    const char *e = getenv(name);
    *on = def;
    if (!e || !*e)
        return KEDR_OK;
    if (!strcmp(e, "1") || !strcmp(e, "0")) {
        *on = e[0] == '1';
        return KEDR_OK;
    }
    return kedr_fail(KEDR_ERR_INVALID, "%s = '%s': expected %s", name, e, choices);
}

kedr_status flow_fuse_env(int *on, int cuda)
{
    (void)cuda; /* on by default on both back ends since its tests passed on GPUs */
    return flow_env_switch("KEDR_FLOW_FUSE", 1, "1 (merged reductions and body sums; the "
                           "default) or 0 (a message for each)", on);
}

kedr_status flow_overlap_env(int *on, int cuda, double slab_cells)
{
    return flow_env_switch("KEDR_FLOW_OVERLAP",
                           !cuda || slab_cells >= FLOW_OVERLAP_AUTO_CELLS,
                           "1 (interior planes computed while the halo travels; the default on "
                           "the cpu, and on cuda for slabs of 2^22 cells or more) or 0 (after "
                           "it; the default on cuda for smaller slabs, where a second stream "
                           "costs more than it hides)", on);
}

/* The exchanges' time so far in the solver over ranks: its halos and gathers (0 on one rank). */
static double xch_seconds(const flow_ranks *rk)
{
    return rk ? (rk->xch ? rk->xch->seconds : 0) + rk->gather_seconds : 0;
}

flow_part_mark flow_rk_part_begin(kedr_flow_poisson *ps)
{
    flow_part_mark m = {0, 0};
    if (!ps->rk && !flow_prof())
        return m;
    if (flow_prof())
        kedr_ctx_sync(ps->ctx); /* a failure shows at the part's end */
    m.t = kedr_wall_seconds();
    m.xch = xch_seconds(ps->rk);
    return m;
}

kedr_status flow_rk_part_end(kedr_flow_poisson *ps, int part, flow_part_mark m)
{
    if (!ps->rk && !flow_prof())
        return KEDR_OK;
    if (flow_prof())
        KEDR_TRY(kedr_ctx_sync(ps->ctx));
    ps->part[part] += kedr_wall_seconds() - m.t - (xch_seconds(ps->rk) - m.xch);
    return KEDR_OK;
}

/* The buffer: four areas of cap doubles, then the two signal words (from below, from above) and
 * padding to 64 bytes. */
#define XCH_BYTES(x) ((4 * (x)->cap + 8) * sizeof(double))
#define XCH_SIGNAL_AT(x, from_above) ((4 * (x)->cap + (size_t)(from_above)) * sizeof(double))

kedr_status flow_xch_alloc(kedr_ctx *ctx, kedr_comm *comm, int lo, int hi, size_t cap,
                           flow_xch **out)
{
    flow_xch *x = calloc(1, sizeof *x);
    *out = x;
    if (!x)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes", sizeof *x);
    x->comm = comm;
    x->ctx = ctx;
    x->cap = cap ? cap : 1;
    x->lo = lo;
    x->hi = hi;
    KEDR_TRY(kedr_alloc(ctx, (void **)&x->buf, XCH_BYTES(x)));
    /* the receive areas hold zeros until the first exchange (never read before it); the signal
     * words start at 0 */
    return kedr_memset(ctx, x->buf, 0, XCH_BYTES(x));
}

kedr_status flow_xch_register(flow_xch *x)
{
    /* the partners' areas are placed by this rank's cap: every rank's must be the same */
    double cap[2] = {(double)x->cap, -(double)x->cap};
    KEDR_TRY(kedr_comm_allreduce(x->comm, KEDR_F64, KEDR_OP_MAX, cap, 2));
    if (cap[0] != -cap[1])
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: halo areas of %g to %g doubles on the "
                         "ranks: they must be equal", -cap[1], cap[0]);
    /* ordered: the exchange is queued on the stream, the GPU not drained (every read of the
     * received planes is a kernel or copy on the context's stream) */
    KEDR_TRY(kedr_comm_dev_register_flags(x->comm, x->ctx, x->buf, XCH_BYTES(x),
                                          KEDR_COMM_DEV_ORDERED, &x->dev));
    /* signalled where asked (the default on cuda) and every rank's neighbours are mapped GPUs */
    int want = 0;
    KEDR_TRY(kedr_comm_agree(x->comm, flow_env_switch("KEDR_FLOW_XCH_SIGNAL",
                                                      KEDR_IS_CUDA(x->ctx), "0 or 1", &want)));
    double *plo = x->lo >= 0 ? kedr_comm_dev_peer(x->dev, x->lo) : NULL;
    double *phi = x->hi >= 0 ? kedr_comm_dev_peer(x->dev, x->hi) : NULL;
    int32_t can = want && KEDR_IS_CUDA(x->ctx) && kedr_comm_dev_ordered(x->dev) &&
                  (x->lo < 0 || plo) && (x->hi < 0 || phi);
    KEDR_TRY(kedr_comm_allreduce(x->comm, KEDR_I32, KEDR_OP_MIN, &can, 1));
    x->signal = can != 0;
    x->peer_lo = x->signal ? plo : NULL;
    x->peer_hi = x->signal ? phi : NULL;
    return KEDR_OK;
}

/* One copy of count doubles into the batch, the batch launched when full (FLOW_COPIES). */
static kedr_status copy_add(kedr_ctx *ctx, flow_copies *cp, double *dst, const double *src,
                            size_t count)
{
    cp->dst[cp->n] = dst;
    cp->src[cp->n++] = src;
    if (cp->n < FLOW_COPIES)
        return KEDR_OK;
    kedr_status st = flow_op_copies(ctx, cp, count);
    cp->n = 0;
    return st;
}

/* The nf fields' first planes to lo + f count and last planes to hi + f count (NULL: none). */
static kedr_status pack(flow_xch *x, int nf, const double *const *first,
                        const double *const *last, size_t count, double *lo, double *hi)
{
    flow_copies cp = {{NULL}, {NULL}, 0};
    for (int f = 0; f < nf; f++) {
        if (lo)
            KEDR_TRY(copy_add(x->ctx, &cp, lo + (size_t)f * count, first[f], count));
        if (hi)
            KEDR_TRY(copy_add(x->ctx, &cp, hi + (size_t)f * count, last[f], count));
    }
    return flow_op_copies(x->ctx, &cp, count);
}

/* Signalled: the end planes straight into the neighbours' receive areas of the next parity,
 * then the signal words, both ways (poisson_impl.h, flow_xch). */
static kedr_status xch_signalled(flow_xch *x, int nf, const double *const *first,
                                 const double *const *last, size_t count)
{
    x->par ^= 1;
    /* this rank's first planes are the one below's planes from above, and the reverse */
    size_t below = (size_t)(FLOW_XCH_BELOW(x) - x->buf);
    size_t above = (size_t)(FLOW_XCH_ABOVE(x) - x->buf);
    KEDR_TRY(pack(x, nf, first, last, count, x->peer_lo ? x->peer_lo + above : NULL,
                  x->peer_hi ? x->peer_hi + below : NULL));
    int to[2], ns = 0, nw = 0;
    size_t at[2], wait[2];
    if (x->lo >= 0) { /* to the rank below: this rank is its neighbour above */
        to[ns] = x->lo;
        at[ns++] = XCH_SIGNAL_AT(x, 1);
        wait[nw++] = XCH_SIGNAL_AT(x, 0);
    }
    if (x->hi >= 0) {
        to[ns] = x->hi;
        at[ns++] = XCH_SIGNAL_AT(x, 0);
        wait[nw++] = XCH_SIGNAL_AT(x, 1);
    }
    return kedr_comm_dev_signal(x->dev, ns, to, at, nw, wait, ++x->seq);
}

/* Through kedr_comm_dev_sendrecv: the end planes into the send areas, then this rank's low
 * planes to the receive-high area of the rank below (tag + 1), its high planes to the
 * receive-low area of the rank above (tag). */
static kedr_status xch_sendrecv(flow_xch *x, int tag, int nf, const double *const *first,
                                const double *const *last, size_t count)
{
    size_t bytes = (size_t)nf * count * sizeof(double), B = x->cap * sizeof(double);
    KEDR_TRY(pack(x, nf, first, last, count, x->lo >= 0 ? x->buf : NULL,
                  x->hi >= 0 ? x->buf + x->cap : NULL));
    kedr_comm_dev_msg snd[2], rcv[2];
    int n = 0;
    if (x->lo >= 0) {
        snd[n] = (kedr_comm_dev_msg){x->lo, tag + 1, 0, 3 * B, bytes};
        rcv[n++] = (kedr_comm_dev_msg){x->lo, tag, 0, 2 * B, bytes};
    }
    if (x->hi >= 0) {
        snd[n] = (kedr_comm_dev_msg){x->hi, tag, B, 2 * B, bytes};
        rcv[n++] = (kedr_comm_dev_msg){x->hi, tag + 1, 0, 3 * B, bytes};
    }
    return kedr_comm_dev_sendrecv(x->dev, n, snd, n, rcv);
}

void flow_xch_free(flow_xch *x)
{
    if (!x)
        return;
    kedr_comm_dev_release(x->dev);
    kedr_free(x->ctx, x->buf);
    free(x);
}

kedr_status flow_xch_halo(flow_xch *x, int tag, int nf, const double *const *first,
                          const double *const *last, size_t count, double *const *below,
                          double *const *above)
{
    if ((size_t)nf * count > x->cap)
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: a halo of %d x %zu doubles in areas of "
                         "%zu", nf, count, x->cap);
    if (flow_prof()) /* the time from here is the exchange's */
        KEDR_TRY(kedr_ctx_sync(x->ctx));
    double t0 = kedr_wall_seconds();
    if (x->signal)
        KEDR_TRY(xch_signalled(x, nf, first, last, count));
    else
        KEDR_TRY(xch_sendrecv(x, tag, nf, first, last, count));
    /* the received planes out where asked */
    const double *rlo = FLOW_XCH_BELOW(x), *rhi = FLOW_XCH_ABOVE(x);
    flow_copies cp = {{NULL}, {NULL}, 0};
    for (int f = 0; f < nf; f++)
        for (int side = 0; side < 2; side++) {
            double *const *to = side ? above : below;
            if ((side ? x->hi : x->lo) >= 0 && to && to[f])
                KEDR_TRY(copy_add(x->ctx, &cp, to[f], (side ? rhi : rlo) + f * count, count));
        }
    KEDR_TRY(flow_op_copies(x->ctx, &cp, count));
    if (flow_prof()) /* ordered transfers complete on the device: their time to here */
        KEDR_TRY(kedr_ctx_sync(x->ctx));
    x->seconds += kedr_wall_seconds() - t0;
    x->count++;
    return KEDR_OK;
}

/* One field's halo: its planes read in place (ends). */
static kedr_status halo1(flow_ranks *rk, const double *first, const double *last, size_t count)
{
    return flow_xch_halo(rk->xch, 20, 1, &first, &last, count, NULL, NULL);
}

/* The neighbours' planes of the last exchange (NULL where there is no neighbour). */
static void ends(const flow_ranks *rk, const double **below, const double **above)
{
    *below = rk->lo >= 0 ? FLOW_XCH_BELOW(rk->xch) : NULL;
    *above = rk->hi >= 0 ? FLOW_XCH_ABOVE(rk->xch) : NULL;
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
    int ainv = ps->o.method == KEDR_FLOW_METHOD_PCG && ps->o.precond == KEDR_FLOW_PC_AINV;
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
    /* what this rank makes alone, then (all ranks agreed) the registrations */
    /* two planes of level 0; multigrid's smoothing lends two fields of up to three */
    kedr_status s = flow_overlap_env(&rk->overlap, KEDR_IS_CUDA(ps->ctx),
                                     rk->gN / kedr_comm_size(comm));
    if (s == KEDR_OK)
        s = flow_xch_alloc(ps->ctx, comm, lo, hi, (mg ? 6 : 2) * rk->layer, &rk->xch);
    if (s == KEDR_OK && rk->overlap)
        s = flow_op_side_create(ps->ctx, &rk->side);
    if (s == KEDR_OK) {
        /* the end layers' diagonals count the neighbours' cells */
        s = flow_rk_end_diag(ps, L, rk->layer, rk->ih2);
    }
    rk->lv[0].off = first;
    rk->lv[0].cnt = L->n[axis];
    rk->below_later = rk->periodic && first == 0 && lo >= 0;
    rk->above_earlier = rk->periodic && first + L->n[axis] == gn && hi >= 0;
    if (s == KEDR_OK && ainv)
        s = kedr_alloc(ps->ctx, (void **)&rk->ainv_id, 2 * rk->layer * sizeof(double));
    if (s == KEDR_OK && mg) { /* the levels built on the slab alone give way to the whole grid's */
        flow_mg_free(ps);
        ps->nlevels = 1;
        s = flow_rk_mg_setup(ps);
    }
    s = kedr_comm_agree(comm, s);
    if (s == KEDR_OK)
        s = flow_xch_register(rk->xch);
    if (s == KEDR_OK && mg)
        s = flow_rk_mg_ghosts(ps);
    if (s == KEDR_OK && ainv) { /* the neighbours' inverse diagonals next to the end planes */
        const double *f = L->idiag, *l = L->idiag + (L->N - rk->layer);
        double *bl = rk->ainv_id, *ab = rk->ainv_id + rk->layer;
        s = flow_xch_halo(rk->xch, 20, 1, &f, &l, rk->layer, &bl, &ab);
    }
    if (s == KEDR_OK && rk->sub)
        s = kedr_comm_dev_register_flags(comm, ps->ctx, rk->gb,
                                         rk->sub->lv[0].N * sizeof(double),
                                         KEDR_COMM_DEV_ORDERED, &rk->gdev);
    return s;
}

void flow_rk_free(kedr_flow_poisson *ps)
{
    if (!ps->rk)
        return;
    flow_xch_free(ps->rk->xch);
    flow_op_side_free(ps->ctx, ps->rk->side);
    kedr_free(ps->ctx, ps->rk->ainv_id);
    free(ps->rk);
    ps->rk = NULL;
}

kedr_status flow_rk_dot(kedr_flow_poisson *ps, size_t n, const double *a, const double *b,
                        double *out)
{
    flow_part_mark m = flow_rk_part_begin(ps);
    KEDR_TRY(flow_op_dot(ps->ctx, n, a, b, out));
    if (ps->rk)
        KEDR_TRY(kedr_comm_allreduce(ps->rk->comm, KEDR_F64, KEDR_OP_SUM, out, 1));
    return flow_rk_part_end(ps, FLOW_PART_REDUCE, m);
}

kedr_status flow_rk_dot_rr(kedr_flow_poisson *ps, size_t n, const double *a, const double *b,
                           double *out, double *rr)
{
    flow_part_mark m = flow_rk_part_begin(ps);
    double v[2];
    KEDR_TRY(flow_op_dot(ps->ctx, n, a, b, &v[0]));
    v[1] = *rr;
    KEDR_TRY(kedr_comm_allreduce(ps->rk->comm, KEDR_F64, KEDR_OP_SUM, v, 2));
    *out = v[0];
    *rr = v[1];
    return flow_rk_part_end(ps, FLOW_PART_REDUCE, m);
}

kedr_status flow_rk_sum(kedr_flow_poisson *ps, size_t n, const double *a, double *out)
{
    flow_part_mark m = flow_rk_part_begin(ps);
    KEDR_TRY(flow_op_sum(ps->ctx, n, a, out));
    if (ps->rk)
        KEDR_TRY(kedr_comm_allreduce(ps->rk->comm, KEDR_F64, KEDR_OP_SUM, out, 1));
    return flow_rk_part_end(ps, FLOW_PART_REDUCE, m);
}

/* y = A x (b NULL) or b - A x on a slab of N cells in layers of `layer` cells, the neighbours'
 * layers of x lent first and their share (1/h^2 = ih2 each) taken in the same kernel. With
 * KEDR_FLOW_OVERLAP=1 (rk->overlap) and three planes or more, the interior planes, whose
 * stencils reach no neighbour, are computed first, on the side stream (cuda), while the halo
 * travels on the context's stream; the two end planes after it: every cell as before, the
 * same bits. */
static kedr_status couple(kedr_flow_poisson *ps, const flow_level *L, size_t layer, double ih2,
                          const double *x, const double *b, double *y)
{
    flow_ranks *rk = ps->rk;
    const double *below, *above;
    double a = b ? ih2 : -ih2;
    size_t N = L->N;
    if (!rk->overlap || N < 3 * layer) {
        KEDR_TRY(halo1(rk, x, x + (N - layer), layer));
        ends(rk, &below, &above);
        return flow_op_apply_ends(ps->ctx, L, x, b, y, layer, a, below, above);
    }
    KEDR_TRY(flow_op_fork(ps->ctx, rk->side)); /* the interior planes read no neighbour */
    KEDR_TRY(flow_op_apply_range(ps->ctx, L, x, b, y, layer, a, NULL, NULL, layer, N - layer,
                                 rk->side));
    KEDR_TRY(halo1(rk, x, x + (N - layer), layer));
    ends(rk, &below, &above);
    KEDR_TRY(flow_op_apply_range(ps->ctx, L, x, b, y, layer, a, below, above, 0, layer, NULL));
    KEDR_TRY(flow_op_apply_range(ps->ctx, L, x, b, y, layer, a, below, above, N - layer, N,
                                 NULL));
    return flow_op_join(ps->ctx, rk->side);
}

kedr_status flow_rk_apply(kedr_flow_poisson *ps, const flow_level *L, const double *x, double *y)
{
    flow_part_mark m = flow_rk_part_begin(ps);
    if (ps->rk)
        KEDR_TRY(couple(ps, L, ps->rk->layer, ps->rk->ih2, x, NULL, y));
    else
        KEDR_TRY(flow_op_apply(ps->ctx, L, x, y));
    return flow_rk_part_end(ps, FLOW_PART_OPERATOR, m);
}

kedr_status flow_rk_residual(kedr_flow_poisson *ps, const flow_level *L, const double *x,
                             const double *b, double *r)
{
    flow_part_mark m = flow_rk_part_begin(ps);
    if (ps->rk)
        KEDR_TRY(couple(ps, L, ps->rk->layer, ps->rk->ih2, x, b, r));
    else
        KEDR_TRY(flow_op_residual(ps->ctx, L, x, b, r));
    return flow_rk_part_end(ps, FLOW_PART_OPERATOR, m);
}

kedr_status flow_rk_residual_at(kedr_flow_poisson *ps, int l, const double *x, const double *b,
                                double *r)
{
    return couple(ps, &ps->lv[l], ps->rk->lv[l].layer, ps->rk->lv[l].ih2, x, b, r);
}

/* (12.37) over the ranks. In the whole grid's order (the slabs one after the other, rank by
 * rank) the upper factor t = (I - D^-1 L^T) r reads r at later cells: across the slab's last
 * plane, the neighbour above's first plane (and across the first plane only the periodic wrap's
 * from the grid's last plane); the lower factor z = (I - L D^-1) t reads t D^-1 at earlier
 * cells: the neighbour below's last plane (or the wrap's). So r's halo, the upper factor, t's
 * halo, the lower factor; every cell summed in the one-rank order. With KEDR_FLOW_OVERLAP=1
 * (slabs of three planes or more) the seed's split product (its section 12.2, with AINV): the
 * interior planes of each factor run on the side stream while the halo before it travels: the
 * upper interior while r's halo travels; the lower interior (which needs t's first plane, done
 * on the context's stream, and t's interior) while t's halo travels; the lower end planes
 * wait for the upper interior (t's plane before the last) and their halo. */
/* A factor's neighbour planes from the last exchange: the upper factor (upper) reads the one
 * below only across a periodic wrap, the one above otherwise; the lower factor the reverse. */
static void ainv_ends(const flow_ranks *rk, flow_ainv_ends *e, int upper)
{
    const double *below, *above;
    ends(rk, &below, &above);
    int wrap_lo = rk->below_later, wrap_hi = rk->above_earlier;
    e->lo = (upper ? wrap_lo : !wrap_lo) ? below : NULL;
    e->hi = (upper ? !wrap_hi : wrap_hi) ? above : NULL;
}

kedr_status flow_rk_ainv(kedr_flow_poisson *ps, const double *r, double *t, double *z)
{
    const flow_level *L = &ps->lv[0];
    flow_ranks *rk = ps->rk;
    kedr_ctx *ctx = ps->ctx;
    size_t N = L->N, layer = rk->layer, last = N - layer;
    /* each factor's neighbour planes set after its halo (the interior planes read none) */
    flow_ainv_ends up = {layer, rk->axis, rk->ih2, NULL, NULL, NULL, NULL};
    flow_ainv_ends dn = {layer, rk->axis, rk->ih2, NULL, rk->ainv_id, NULL, rk->ainv_id + layer};
    flow_part_mark m = flow_rk_part_begin(ps);
    if (!rk->overlap || N < 3 * layer) {
        KEDR_TRY(halo1(rk, r, r + last, layer));
        ainv_ends(rk, &up, 1);
        KEDR_TRY(flow_op_ainv_range(ctx, L, r, t, 1, &up, 0, N, NULL));
        KEDR_TRY(halo1(rk, t, t + last, layer));
        ainv_ends(rk, &dn, 0);
        KEDR_TRY(flow_op_ainv_range(ctx, L, t, z, 0, &dn, 0, N, NULL));
        return flow_rk_part_end(ps, FLOW_PART_SMOOTH, m);
    }
    void *side = rk->side;
    KEDR_TRY(flow_op_fork(ctx, side));
    KEDR_TRY(flow_op_ainv_range(ctx, L, r, t, 1, &up, layer, last, side));
    KEDR_TRY(flow_op_side_mark(ctx, side)); /* t's interior */
    KEDR_TRY(halo1(rk, r, r + last, layer));
    ainv_ends(rk, &up, 1);
    KEDR_TRY(flow_op_ainv_range(ctx, L, r, t, 1, &up, 0, layer, NULL));
    KEDR_TRY(flow_op_ainv_range(ctx, L, r, t, 1, &up, last, N, NULL));
    KEDR_TRY(flow_op_fork(ctx, side)); /* t's end planes */
    KEDR_TRY(flow_op_ainv_range(ctx, L, t, z, 0, &dn, layer, last, side));
    KEDR_TRY(halo1(rk, t, t + last, layer));
    ainv_ends(rk, &dn, 0);
    KEDR_TRY(flow_op_side_wait(ctx, side)); /* t's interior: the last plane reads the one before */
    KEDR_TRY(flow_op_ainv_range(ctx, L, t, z, 0, &dn, 0, layer, NULL));
    KEDR_TRY(flow_op_ainv_range(ctx, L, t, z, 0, &dn, last, N, NULL));
    KEDR_TRY(flow_op_join(ctx, side));
    return flow_rk_part_end(ps, FLOW_PART_SMOOTH, m);
}

kedr_status flow_rk_gs_halo(kedr_flow_poisson *ps, const flow_level *L, double *x,
                            const double *b, int colour, size_t layer, double ih2)
{
    flow_ranks *rk = ps->rk;
    kedr_ctx *ctx = ps->ctx;
    size_t N = L->N, last = N - layer, rpp = layer / (size_t)L->n[0], rows = N / (size_t)L->n[0];
    const double *below, *above;
    int ovl = rk->overlap && N >= 3 * layer;
    if (ovl) { /* the interior rows: not sent, no neighbour read; colour c reads c ^ 1 only */
        KEDR_TRY(flow_op_fork(ctx, rk->side));
        KEDR_TRY(flow_op_gs_ends_rows(ctx, L, x, b, colour, layer, ih2, NULL, NULL, rpp,
                                      rows - rpp, rk->side));
    }
    KEDR_TRY(halo1(rk, x, x + last, layer));
    ends(rk, &below, &above);
    if (!ovl)
        return flow_op_gs_ends(ctx, L, x, b, colour, layer, ih2, below, above);
    KEDR_TRY(flow_op_gs_ends_rows(ctx, L, x, b, colour, layer, ih2, below, above, 0, rpp, NULL));
    KEDR_TRY(flow_op_gs_ends_rows(ctx, L, x, b, colour, layer, ih2, below, above, rows - rpp,
                                  rows, NULL));
    return flow_op_join(ctx, rk->side);
}

/* A red-black half-sweep updates a cell from its neighbours of the other colour: across a
 * slab's end those are the neighbour rank's, lent before each half-sweep and added to the
 * right-hand side of the end layers (their 1/h^2 share, flow_op_gs_ends). The colour is the grid's:
 * (i + j + k) mod 2 with k counted from the grid's first layer. */
kedr_status flow_rk_ssor(kedr_flow_poisson *ps, const double *r, double *z)
{
    const flow_level *L = &ps->lv[0];
    flow_ranks *rk = ps->rk;
    flow_part_mark m = flow_rk_part_begin(ps);
    KEDR_TRY(kedr_memset(ps->ctx, z, 0, L->N * sizeof *z));
    for (int h = 0; h < 2 * ps->o.steps + 1; h++)
        KEDR_TRY(flow_rk_gs_halo(ps, L, z, r, (h & 1) ^ rk->parity, rk->layer, rk->ih2));
    return flow_rk_part_end(ps, FLOW_PART_SMOOTH, m);
}
