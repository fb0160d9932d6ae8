/* The Poisson solvers' operations on the cpu (OpenMP loops over the per-cell functions of
 * poisson_impl.h) and the dispatch to the cuda kernels of ops.cu. */
#include "core/internal.h"
#include "flow/ops.h"
#include "kedr/prim.h"

#include <string.h>

#ifdef KEDR_HAVE_CUDA
#define DISPATCH(ctx, call)                                                                   \
    do {                                                                                      \
        if (KEDR_IS_CUDA(ctx))                                                                \
            return call;                                                                      \
    } while (0)
#else
#define DISPATCH(ctx, call) (void)(ctx)
#endif

/* The cells of level L (a variable of that name): a parallel loop over rows. */
#define FOR_CELLS(L)                                                                          \
    _Pragma("omp parallel for collapse(2) schedule(static) if ((L)->N >= FLOW_OMP_MIN)")     \
    for (int k = 0; k < (L)->n[2]; k++)                                                       \
        for (int j = 0; j < (L)->n[1]; j++)                                                   \
            for (int i = 0; i < (L)->n[0]; i++)

kedr_status flow_op_copy(kedr_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (KEDR_IS_CUDA(ctx) || bytes >= ((size_t)1 << 20))
        return kedr_copy(ctx, dst, src, bytes);
    memmove(dst, src, bytes);
    return KEDR_OK;
}

kedr_status flow_op_copies(kedr_ctx *ctx, const flow_copies *c, size_t count)
{
    if (c->n < 0 || c->n > FLOW_COPIES)
        return kedr_fail(KEDR_ERR_INVALID, "flow_op_copies: %d blocks (at most %d)", c->n,
                         FLOW_COPIES);
    if (!c->n || !count)
        return KEDR_OK;
    DISPATCH(ctx, flow_cuda_copies(ctx, c, count));
    for (int i = 0; i < c->n; i++)
        KEDR_TRY(flow_op_copy(ctx, c->dst[i], c->src[i], count * sizeof(double)));
    return KEDR_OK;
}

kedr_status flow_op_apply(kedr_ctx *ctx, const flow_level *L, const double *x, double *y)
{
    DISPATCH(ctx, flow_cuda_apply(ctx, L, x, NULL, y));
    FOR_CELLS(L)
    y[flow_index(L, i, j, k)] = flow_cell_apply(L, x, i, j, k);
    return KEDR_OK;
}

kedr_status flow_op_residual(kedr_ctx *ctx, const flow_level *L, const double *x,
                             const double *b, double *r)
{
    DISPATCH(ctx, flow_cuda_apply(ctx, L, x, b, r));
    FOR_CELLS(L)
    {
        size_t c = flow_index(L, i, j, k);
        r[c] = b[c] - flow_cell_apply(L, x, i, j, k);
    }
    return KEDR_OK;
}

kedr_status flow_op_apply_ends(kedr_ctx *ctx, const flow_level *L, const double *x,
                               const double *b, double *y, size_t layer, double a,
                               const double *below, const double *above)
{
    DISPATCH(ctx, flow_cuda_apply_ends(ctx, L, x, b, y, layer, a, below, above));
    FOR_CELLS(L)
    y[flow_index(L, i, j, k)] = flow_cell_apply_ends(L, x, b, layer, a, below, above, i, j, k);
    return KEDR_OK;
}

kedr_status flow_op_apply_range(kedr_ctx *ctx, const flow_level *L, const double *x,
                                const double *b, double *y, size_t layer, double a,
                                const double *below, const double *above, size_t c0, size_t c1,
                                void *side)
{
    DISPATCH(ctx, flow_cuda_apply_range(ctx, L, x, b, y, layer, a, below, above, c0, c1, side));
    (void)side;
    const size_t n0 = (size_t)L->n[0], n1 = (size_t)L->n[1];
#pragma omp parallel for schedule(static) if (c1 - c0 >= FLOW_OMP_MIN)
    for (size_t c = c0; c < c1; c++) {
        size_t row = c / n0;
        y[c] = flow_cell_apply_ends(L, x, b, layer, a, below, above, (int)(c - row * n0),
                                    (int)(row % n1), (int)(row / n1));
    }
    return KEDR_OK;
}

kedr_status flow_op_side_create(kedr_ctx *ctx, void **side)
{
    *side = NULL;
    DISPATCH(ctx, flow_cuda_side_create(ctx, side));
    return KEDR_OK;
}

void flow_op_side_free(kedr_ctx *ctx, void *side)
{
#ifdef KEDR_HAVE_CUDA
    if (side)
        flow_cuda_side_free(ctx, side);
#endif
    (void)ctx;
    (void)side;
}

kedr_status flow_op_fork(kedr_ctx *ctx, void *side)
{
#ifdef KEDR_HAVE_CUDA
    if (side)
        return flow_cuda_fork(ctx, side);
#endif
    (void)ctx;
    (void)side;
    return KEDR_OK;
}

kedr_status flow_op_join(kedr_ctx *ctx, void *side)
{
#ifdef KEDR_HAVE_CUDA
    if (side)
        return flow_cuda_join(ctx, side);
#endif
    (void)ctx;
    (void)side;
    return KEDR_OK;
}

kedr_status flow_op_side_mark(kedr_ctx *ctx, void *side)
{
#ifdef KEDR_HAVE_CUDA
    if (side)
        return flow_cuda_side_mark(ctx, side);
#endif
    (void)ctx;
    (void)side;
    return KEDR_OK;
}

kedr_status flow_op_side_wait(kedr_ctx *ctx, void *side)
{
#ifdef KEDR_HAVE_CUDA
    if (side)
        return flow_cuda_side_wait(ctx, side);
#endif
    (void)ctx;
    (void)side;
    return KEDR_OK;
}

kedr_status flow_op_ainv_range(kedr_ctx *ctx, const flow_level *L, const double *in, double *out,
                               int upper, const flow_ainv_ends *e, size_t c0, size_t c1,
                               void *side)
{
    DISPATCH(ctx, flow_cuda_ainv_range(ctx, L, in, out, upper, e, c0, c1, side));
    (void)side;
    const size_t n0 = (size_t)L->n[0], n1 = (size_t)L->n[1];
#pragma omp parallel for schedule(static) if (c1 - c0 >= FLOW_OMP_MIN)
    for (size_t c = c0; c < c1; c++) {
        size_t row = c / n0;
        int i = (int)(c - row * n0), j = (int)(row % n1), k = (int)(row / n1);
        out[c] = upper ? flow_cell_ainv_upper_ends(L, in, e->layer, e->axis, e->ih2, e->lo, e->hi,
                                                   i, j, k)
                       : flow_cell_ainv_lower_ends(L, in, e->layer, e->axis, e->ih2, e->lo,
                                                   e->lo_id, e->hi, e->hi_id, i, j, k);
    }
    return KEDR_OK;
}

kedr_status flow_op_gs(kedr_ctx *ctx, const flow_level *L, double *x, const double *b,
                       int colour)
{
    DISPATCH(ctx, flow_cuda_gs(ctx, L, x, b, colour));
    const int nx = L->n[0], ny = L->n[1], nz = L->n[2];
#pragma omp parallel for collapse(2) schedule(static) if (L->N >= FLOW_OMP_MIN)
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = (j + k + colour) & 1; i < nx; i += 2)
                x[flow_index(L, i, j, k)] = flow_cell_gs(L, x, b, i, j, k);
    return KEDR_OK;
}

kedr_status flow_op_gs_ends(kedr_ctx *ctx, const flow_level *L, double *x, const double *b,
                            int colour, size_t layer, double ih2, const double *below,
                            const double *above)
{
    DISPATCH(ctx, flow_cuda_gs_ends(ctx, L, x, b, colour, layer, ih2, below, above));
    const int nx = L->n[0], ny = L->n[1], nz = L->n[2];
#pragma omp parallel for collapse(2) schedule(static) if (L->N >= FLOW_OMP_MIN)
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = (j + k + colour) & 1; i < nx; i += 2)
                x[flow_index(L, i, j, k)] =
                    flow_cell_gs_ends(L, x, b, layer, ih2, below, above, i, j, k);
    return KEDR_OK;
}

kedr_status flow_op_gs_ends_rows(kedr_ctx *ctx, const flow_level *L, double *x, const double *b,
                                 int colour, size_t layer, double ih2, const double *below,
                                 const double *above, size_t row0, size_t row1, void *side)
{
    DISPATCH(ctx, flow_cuda_gs_ends_rows(ctx, L, x, b, colour, layer, ih2, below, above, row0,
                                         row1, side));
    (void)side;
    const int nx = L->n[0], ny = L->n[1];
#pragma omp parallel for schedule(static) if ((row1 - row0) * (size_t)nx >= FLOW_OMP_MIN)
    for (size_t row = row0; row < row1; row++) {
        int j = (int)(row % (size_t)ny), k = (int)(row / (size_t)ny);
        for (int i = (j + k + colour) & 1; i < nx; i += 2)
            x[flow_index(L, i, j, k)] = flow_cell_gs_ends(L, x, b, layer, ih2, below, above, i, j, k);
    }
    return KEDR_OK;
}

kedr_status flow_op_ainv(kedr_ctx *ctx, const flow_level *L, const double *r, double *t,
                         double *z)
{
    DISPATCH(ctx, flow_cuda_ainv(ctx, L, r, t, z));
    FOR_CELLS(L)
    t[flow_index(L, i, j, k)] = flow_cell_ainv_upper(L, r, i, j, k);
    FOR_CELLS(L)
    z[flow_index(L, i, j, k)] = flow_cell_ainv_lower(L, t, i, j, k);
    return KEDR_OK;
}

kedr_status flow_op_jacobi(kedr_ctx *ctx, const flow_level *L, const double *r, double *z,
                           double w, int add)
{
    DISPATCH(ctx, flow_cuda_jacobi(ctx, L, r, z, w, add));
    size_t N = L->N;
#pragma omp parallel for schedule(static) if (N >= FLOW_OMP_MIN)
    for (size_t c = 0; c < N; c++)
        z[c] = (add ? z[c] : 0.0) + w * L->idiag[c] * r[c];
    return KEDR_OK;
}

/* The cpu's sums go through kedr_sum_parts (a part a thread, added in thread order), so that
 * a run's iterations and fields are the next run's bit for bit at any thread count; one thread
 * below FLOW_OMP_MIN, as every loop here (a parallel region a call would cost more than the sum
 * on the coarse grids). */
typedef struct {
    const double *a, *b;
} dot_arg;

static double dot_part(size_t lo, size_t hi, void *arg)
{
    const dot_arg *d = (const dot_arg *)arg;
    double s = 0;
    if (d->b)
        for (size_t i = lo; i < hi; i++)
            s += d->a[i] * d->b[i];
    else
        for (size_t i = lo; i < hi; i++)
            s += d->a[i];
    return s;
}

kedr_status flow_op_dot(kedr_ctx *ctx, size_t n, const double *a, const double *b, double *out)
{
    DISPATCH(ctx, flow_cuda_dot(ctx, n, a, b, out));
    dot_arg d = {a, b};
    *out = kedr_sum_parts(n, FLOW_OMP_MIN, dot_part, &d);
    return KEDR_OK;
}

kedr_status flow_op_sum(kedr_ctx *ctx, size_t n, const double *a, double *out)
{
    DISPATCH(ctx, kedr_reduce(ctx, KEDR_F64, KEDR_OP_SUM, a, n, out));
    dot_arg d = {a, NULL};
    *out = kedr_sum_parts(n, FLOW_OMP_MIN, dot_part, &d);
    return KEDR_OK;
}

kedr_status flow_op_shift(kedr_ctx *ctx, size_t n, double *x, double s)
{
    DISPATCH(ctx, flow_cuda_shift(ctx, n, x, s));
#pragma omp parallel for schedule(static) if (n >= FLOW_OMP_MIN)
    for (size_t i = 0; i < n; i++)
        x[i] += s;
    return KEDR_OK;
}

typedef struct {
    double *x, *r;
    const double *p, *q;
    double alpha;
} cg_arg;

static double cg_part(size_t lo, size_t hi, void *arg)
{
    const cg_arg *u = (const cg_arg *)arg;
    double s = 0;
    for (size_t c = lo; c < hi; c++) {
        u->x[c] += u->alpha * u->p[c];
        u->r[c] -= u->alpha * u->q[c];
        s += u->r[c] * u->r[c];
    }
    return s;
}

kedr_status flow_op_cg_update(kedr_ctx *ctx, size_t n, double *x, double *r, const double *p,
                              const double *q, double alpha, double *rr)
{
    DISPATCH(ctx, flow_cuda_cg_update(ctx, n, x, r, p, q, alpha, rr));
    cg_arg u = {x, r, p, q, alpha};
    double s = kedr_sum_parts(n, FLOW_OMP_MIN, cg_part, &u);
    if (rr)
        *rr = s;
    return KEDR_OK;
}

static kedr_status batch_check(int k)
{
    if (k < 0 || k > FLOW_BATCH)
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: a batch of %d reductions: at most %d", k,
                         FLOW_BATCH);
    return KEDR_OK;
}

kedr_status flow_op_dots(kedr_ctx *ctx, int k, size_t n, const double *const *a,
                         const double *const *b, double *out)
{
    KEDR_TRY(batch_check(k));
    if (k == 0)
        return KEDR_OK;
    DISPATCH(ctx, flow_cuda_dots(ctx, k, n, a, b, out));
    for (int i = 0; i < k; i++)
        KEDR_TRY(flow_op_dot(ctx, n, a[i], b[i], &out[i]));
    return KEDR_OK;
}

kedr_status flow_op_cg_updates(kedr_ctx *ctx, int k, size_t n, double *const *x,
                               double *const *r, const double *const *p,
                               const double *const *q, const double *alpha, double *rr)
{
    KEDR_TRY(batch_check(k));
    if (k == 0)
        return KEDR_OK;
    DISPATCH(ctx, flow_cuda_cg_updates(ctx, k, n, x, r, p, q, alpha, rr));
    for (int i = 0; i < k; i++)
        KEDR_TRY(flow_op_cg_update(ctx, n, x[i], r[i], p[i], q[i], alpha[i], &rr[i]));
    return KEDR_OK;
}

kedr_status flow_op_xpby(kedr_ctx *ctx, size_t n, const double *z, double beta, double *p)
{
    DISPATCH(ctx, flow_cuda_xpby(ctx, n, z, beta, p));
#pragma omp parallel for schedule(static) if (n >= FLOW_OMP_MIN)
    for (size_t c = 0; c < n; c++)
        p[c] = z[c] + beta * p[c];
    return KEDR_OK;
}

kedr_status flow_op_dense(kedr_ctx *ctx, size_t n, const double *M, const double *b, double *x)
{
    DISPATCH(ctx, flow_cuda_dense(ctx, n, M, b, x));
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t j = 0; j < n; j++)
            s += M[i * n + j] * b[j];
        x[i] = s;
    }
    return KEDR_OK;
}

kedr_status flow_op_axpy(kedr_ctx *ctx, size_t n, double a, const double *x, double *y)
{
    DISPATCH(ctx, flow_cuda_axpy(ctx, n, a, x, y));
#pragma omp parallel for schedule(static) if (n >= FLOW_OMP_MIN)
    for (size_t c = 0; c < n; c++)
        y[c] += a * x[c];
    return KEDR_OK;
}

kedr_status flow_op_restrict(kedr_ctx *ctx, const flow_level *F, const flow_level *C,
                             const double *r, double *b)
{
    DISPATCH(ctx, flow_cuda_restrict(ctx, F, C, r, b));
    const flow_level *L = C; /* the loop's level */
    FOR_CELLS(L)
    b[flow_index(C, i, j, k)] = flow_cell_restrict(F, r, i, j, k);
    return KEDR_OK;
}

kedr_status flow_op_prolong_add(kedr_ctx *ctx, const flow_level *F, const flow_level *C,
                                const double *xc, double *x)
{
    DISPATCH(ctx, flow_cuda_prolong_add(ctx, F, C, xc, x));
    const flow_level *L = F;
    FOR_CELLS(L)
    x[flow_index(F, i, j, k)] += flow_cell_prolong(F, C, xc, i, j, k);
    return KEDR_OK;
}
