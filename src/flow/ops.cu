/* The Poisson solvers' operations on the GPU: one thread a cell (a red-black half-sweep: one
 * thread a cell of the colour), over the per-cell functions of poisson_impl.h that the cpu loops
 * use too. Dot products: each block sums its part (a grid-stride loop, then a tree in shared
 * memory) into a scratch array that one block then sums, in a fixed order, so that a result
 * does not depend on timing; the sum comes back to the host. */
#include "core/internal.h"
#include "flow/block_sum.cuh"
#include "flow/ops.h"

#define OPS_THREADS FLOW_SUM_THREADS
#define OPS_MAX_BLOCKS 1024

static unsigned blocks_for(size_t n)
{
    size_t b = (n + OPS_THREADS - 1) / OPS_THREADS;
    return b < 1 ? 1 : b > 65535u * 16 ? 65535u * 16 : (unsigned)b;
}

/* cell c of level L: its (i, j, k) */
__device__ __forceinline__ void cell_ijk(const flow_level &L, size_t c, int *i, int *j, int *k)
{
    size_t row = c / (size_t)L.n[0];
    *i = (int)(c - row * (size_t)L.n[0]);
    *j = (int)(row % (size_t)L.n[1]);
    *k = (int)(row / (size_t)L.n[1]);
}


__global__ void k_copies(flow_copies c, size_t count)
{
    GRID_STRIDE(t, (size_t)c.n * count)
    {
        size_t b = t / count, i = t - b * count;
        c.dst[b][i] = c.src[b][i];
    }
}

__global__ void k_apply(flow_level L, const double *x, const double *b, double *y)
{
    GRID_STRIDE(c, L.N)
    {
        int i, j, k;
        cell_ijk(L, c, &i, &j, &k);
        double ax = flow_cell_apply(&L, x, i, j, k);
        y[c] = b ? b[c] - ax : ax;
    }
}

__global__ void k_apply_ends(flow_level L, const double *x, const double *b, double *y,
                             size_t layer, double a, const double *below, const double *above)
{
    GRID_STRIDE(c, L.N)
    {
        int i, j, k;
        cell_ijk(L, c, &i, &j, &k);
        y[c] = flow_cell_apply_ends(&L, x, b, layer, a, below, above, i, j, k);
    }
}

__global__ void k_apply_range(flow_level L, const double *x, const double *b, double *y,
                              size_t layer, double a, const double *below, const double *above,
                              size_t c0, size_t n)
{
    GRID_STRIDE(t, n)
    {
        size_t c = c0 + t;
        int i, j, k;
        cell_ijk(L, c, &i, &j, &k);
        y[c] = flow_cell_apply_ends(&L, x, b, layer, a, below, above, i, j, k);
    }
}

__global__ void k_ainv_range(flow_level L, const double *in, double *out, int upper,
                             flow_ainv_ends e, size_t c0, size_t n)
{
    GRID_STRIDE(t, n)
    {
        size_t c = c0 + t;
        int i, j, k;
        cell_ijk(L, c, &i, &j, &k);
        out[c] = upper ? flow_cell_ainv_upper_ends(&L, in, e.layer, e.axis, e.ih2, e.lo, e.hi,
                                                   i, j, k)
                       : flow_cell_ainv_lower_ends(&L, in, e.layer, e.axis, e.ih2, e.lo,
                                                   e.lo_id, e.hi, e.hi_id, i, j, k);
    }
}

/* Row r = j + ny k holds ceil(nx / 2) cells of each colour: slot s is i = 2 s + parity. */
__global__ void k_gs(flow_level L, double *x, const double *b, int colour, size_t half)
{
    size_t rows = (size_t)L.n[1] * L.n[2];
    GRID_STRIDE(t, rows * half)
    {
        size_t row = t / half;
        int j = (int)(row % (size_t)L.n[1]), k = (int)(row / (size_t)L.n[1]);
        int i = 2 * (int)(t - row * half) + ((j + k + colour) & 1);
        if (i < L.n[0])
            x[flow_index(&L, i, j, k)] = flow_cell_gs(&L, x, b, i, j, k);
    }
}

__global__ void k_gs_ends(flow_level L, double *x, const double *b, int colour, size_t half,
                          size_t layer, double ih2, const double *below, const double *above)
{
    size_t rows = (size_t)L.n[1] * L.n[2];
    GRID_STRIDE(t, rows * half)
    {
        size_t row = t / half;
        int j = (int)(row % (size_t)L.n[1]), k = (int)(row / (size_t)L.n[1]);
        int i = 2 * (int)(t - row * half) + ((j + k + colour) & 1);
        if (i < L.n[0])
            x[flow_index(&L, i, j, k)] =
                flow_cell_gs_ends(&L, x, b, layer, ih2, below, above, i, j, k);
    }
}

__global__ void k_gs_ends_rows(flow_level L, double *x, const double *b, int colour, size_t half,
                               size_t layer, double ih2, const double *below,
                               const double *above, size_t row0, size_t rows)
{
    GRID_STRIDE(t, rows * half)
    {
        size_t row = row0 + t / half;
        int j = (int)(row % (size_t)L.n[1]), k = (int)(row / (size_t)L.n[1]);
        int i = 2 * (int)(t - (t / half) * half) + ((j + k + colour) & 1);
        if (i < L.n[0])
            x[flow_index(&L, i, j, k)] =
                flow_cell_gs_ends(&L, x, b, layer, ih2, below, above, i, j, k);
    }
}

__global__ void k_ainv(flow_level L, const double *in, double *out, int upper)
{
    GRID_STRIDE(c, L.N)
    {
        int i, j, k;
        cell_ijk(L, c, &i, &j, &k);
        out[c] = upper ? flow_cell_ainv_upper(&L, in, i, j, k)
                       : flow_cell_ainv_lower(&L, in, i, j, k);
    }
}

__global__ void k_jacobi(size_t n, const double *idiag, const double *r, double *z, double w,
                         int add)
{
    GRID_STRIDE(c, n)
    z[c] = (add ? z[c] : 0.0) + w * idiag[c] * r[c];
}

__global__ void k_shift(size_t n, double *x, double s)
{
    GRID_STRIDE(c, n)
    x[c] += s;
}

__global__ void k_xpby(size_t n, const double *z, double beta, double *p)
{
    GRID_STRIDE(c, n)
    p[c] = z[c] + beta * p[c];
}

__global__ void k_axpy(size_t n, double a, const double *x, double *y)
{
    GRID_STRIDE(c, n)
    y[c] += a * x[c];
}

/* The block's sum of v into part[blockIdx.x]. */
__device__ __forceinline__ void block_sum(double v, double *part)
{
    flow_block_sum(v, part + blockIdx.x);
}

__global__ void k_dot(size_t n, const double *a, const double *b, double *part)
{
    double s = 0;
    GRID_STRIDE(c, n)
    s += a[c] * b[c];
    block_sum(s, part);
}

/* x += alpha p, r -= alpha q, and the blocks' sums of r^2 */
__global__ void k_cg_update(size_t n, double *x, double *r, const double *p, const double *q,
                            double alpha, double *part)
{
    double s = 0;
    GRID_STRIDE(c, n)
    {
        x[c] += alpha * p[c];
        double rc = r[c] - alpha * q[c];
        r[c] = rc;
        s += rc * rc;
    }
    if (part)
        block_sum(s, part);
}

__global__ void k_sum_parts(const double *part, int m, double *out)
{
    double s = 0;
    for (int i = threadIdx.x; i < m; i += OPS_THREADS)
        s += part[i];
    block_sum(s, out);
}

__global__ void k_restrict(flow_level F, flow_level C, const double *r, double *b)
{
    GRID_STRIDE(c, C.N)
    {
        int i, j, k;
        cell_ijk(C, c, &i, &j, &k);
        b[c] = flow_cell_restrict(&F, r, i, j, k);
    }
}

__global__ void k_prolong_add(flow_level F, flow_level C, const double *xc, double *x)
{
    GRID_STRIDE(c, F.N)
    {
        int i, j, k;
        cell_ijk(F, c, &i, &j, &k);
        x[c] += flow_cell_prolong(&F, &C, xc, i, j, k);
    }
}

#define LAUNCH(n) blocks_for(n), OPS_THREADS, 0, KEDR_STREAM(ctx)

extern "C" kedr_status flow_cuda_apply(kedr_ctx *ctx, const flow_level *L, const double *x,
                                       const double *b, double *y)
{
    k_apply<<<LAUNCH(L->N)>>>(*L, x, b, y);
    KEDR_CUDA_LAUNCHED("k_apply");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_copies(kedr_ctx *ctx, const flow_copies *c, size_t count)
{
    k_copies<<<LAUNCH((size_t)c->n * count)>>>(*c, count);
    KEDR_CUDA_LAUNCHED("k_copies");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_apply_ends(kedr_ctx *ctx, const flow_level *L,
                                            const double *x, const double *b, double *y,
                                            size_t layer, double a, const double *below,
                                            const double *above)
{
    k_apply_ends<<<LAUNCH(L->N)>>>(*L, x, b, y, layer, a, below, above);
    KEDR_CUDA_LAUNCHED("k_apply_ends");
    return KEDR_OK;
}

/* The side stream of flow_op_side_create and its two events. */
typedef struct {
    cudaStream_t stream;
    cudaEvent_t fork, join;
} flow_side;

extern "C" kedr_status flow_cuda_side_create(kedr_ctx *ctx, void **out)
{
    *out = NULL;
    flow_side *d = (flow_side *)calloc(1, sizeof *d);
    if (!d)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes", sizeof *d);
    KEDR_CUDA_TRY(cudaSetDevice(ctx->device));
    cudaError_t e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&d->fork, cudaEventDisableTiming);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&d->join, cudaEventDisableTiming);
    if (e != cudaSuccess) {
        flow_cuda_side_free(ctx, d);
        return kedr_cuda_status(e, "kedr flow: a second stream", __FILE__, __LINE__);
    }
    *out = d;
    return KEDR_OK;
}

extern "C" void flow_cuda_side_free(kedr_ctx *ctx, void *side)
{
    flow_side *d = (flow_side *)side;
    (void)ctx;
    if (!d)
        return;
    if (d->stream) {
        cudaStreamSynchronize(d->stream);
        cudaStreamDestroy(d->stream);
    }
    if (d->fork)
        cudaEventDestroy(d->fork);
    if (d->join)
        cudaEventDestroy(d->join);
    free(d);
}

extern "C" kedr_status flow_cuda_fork(kedr_ctx *ctx, void *side)
{
    flow_side *d = (flow_side *)side;
    KEDR_CUDA_TRY(cudaEventRecord(d->fork, KEDR_STREAM(ctx)));
    KEDR_CUDA_TRY(cudaStreamWaitEvent(d->stream, d->fork, 0));
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_side_mark(kedr_ctx *ctx, void *side)
{
    (void)ctx;
    KEDR_CUDA_TRY(cudaEventRecord(((flow_side *)side)->join, ((flow_side *)side)->stream));
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_side_wait(kedr_ctx *ctx, void *side)
{
    KEDR_CUDA_TRY(cudaStreamWaitEvent(KEDR_STREAM(ctx), ((flow_side *)side)->join, 0));
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_join(kedr_ctx *ctx, void *side)
{
    KEDR_TRY(flow_cuda_side_mark(ctx, side));
    return flow_cuda_side_wait(ctx, side);
}

extern "C" kedr_status flow_cuda_gs_ends_rows(kedr_ctx *ctx, const flow_level *L, double *x,
                                              const double *b, int colour, size_t layer,
                                              double ih2, const double *below,
                                              const double *above, size_t row0, size_t row1,
                                              void *side)
{
    if (row1 <= row0)
        return KEDR_OK;
    size_t half = ((size_t)L->n[0] + 1) / 2, n = half * (row1 - row0);
    cudaStream_t st = side ? ((flow_side *)side)->stream : KEDR_STREAM(ctx);
    k_gs_ends_rows<<<blocks_for(n), OPS_THREADS, 0, st>>>(*L, x, b, colour, half, layer, ih2,
                                                          below, above, row0, row1 - row0);
    KEDR_CUDA_LAUNCHED("k_gs_ends_rows");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_ainv_range(kedr_ctx *ctx, const flow_level *L,
                                            const double *in, double *out, int upper,
                                            const flow_ainv_ends *e, size_t c0, size_t c1,
                                            void *side)
{
    if (c1 <= c0)
        return KEDR_OK;
    cudaStream_t st = side ? ((flow_side *)side)->stream : KEDR_STREAM(ctx);
    k_ainv_range<<<blocks_for(c1 - c0), OPS_THREADS, 0, st>>>(*L, in, out, upper, *e, c0,
                                                              c1 - c0);
    KEDR_CUDA_LAUNCHED("k_ainv_range");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_apply_range(kedr_ctx *ctx, const flow_level *L,
                                             const double *x, const double *b, double *y,
                                             size_t layer, double a, const double *below,
                                             const double *above, size_t c0, size_t c1,
                                             void *side)
{
    if (c1 <= c0)
        return KEDR_OK;
    cudaStream_t st = side ? ((flow_side *)side)->stream : KEDR_STREAM(ctx);
    k_apply_range<<<blocks_for(c1 - c0), OPS_THREADS, 0, st>>>(*L, x, b, y, layer, a, below,
                                                               above, c0, c1 - c0);
    KEDR_CUDA_LAUNCHED("k_apply_range");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_gs(kedr_ctx *ctx, const flow_level *L, double *x,
                                    const double *b, int colour)
{
    size_t half = ((size_t)L->n[0] + 1) / 2, n = half * (size_t)L->n[1] * L->n[2];
    k_gs<<<LAUNCH(n)>>>(*L, x, b, colour, half);
    KEDR_CUDA_LAUNCHED("k_gs");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_gs_ends(kedr_ctx *ctx, const flow_level *L, double *x,
                                         const double *b, int colour, size_t layer, double ih2,
                                         const double *below, const double *above)
{
    size_t half = ((size_t)L->n[0] + 1) / 2, n = half * (size_t)L->n[1] * L->n[2];
    k_gs_ends<<<LAUNCH(n)>>>(*L, x, b, colour, half, layer, ih2, below, above);
    KEDR_CUDA_LAUNCHED("k_gs_ends");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_ainv(kedr_ctx *ctx, const flow_level *L, const double *r,
                                      double *t, double *z)
{
    k_ainv<<<LAUNCH(L->N)>>>(*L, r, t, 1);
    KEDR_CUDA_LAUNCHED("k_ainv");
    k_ainv<<<LAUNCH(L->N)>>>(*L, t, z, 0);
    KEDR_CUDA_LAUNCHED("k_ainv");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_jacobi(kedr_ctx *ctx, const flow_level *L, const double *r,
                                        double *z, double w, int add)
{
    k_jacobi<<<LAUNCH(L->N)>>>(L->N, L->idiag, r, z, w, add);
    KEDR_CUDA_LAUNCHED("k_jacobi");
    return KEDR_OK;
}

/* The blocks' partial sums in scratch, summed by one block, the total copied to the host. */
static kedr_status finish_sum(kedr_ctx *ctx, double *part, unsigned blocks, double *out)
{
    k_sum_parts<<<1, OPS_THREADS, 0, KEDR_STREAM(ctx)>>>(part, (int)blocks, part + OPS_MAX_BLOCKS);
    KEDR_CUDA_LAUNCHED("k_sum_parts");
    return kedr_read_back(ctx, out, part + OPS_MAX_BLOCKS, sizeof *out);
}

static unsigned reduce_blocks(size_t n)
{
    unsigned b = blocks_for(n);
    return b > OPS_MAX_BLOCKS ? OPS_MAX_BLOCKS : b;
}

extern "C" kedr_status flow_cuda_dot(kedr_ctx *ctx, size_t n, const double *a, const double *b,
                                     double *out)
{
    double *part;
    KEDR_TRY(kedr_scratch_get(ctx, (void **)&part, (OPS_MAX_BLOCKS + 1) * sizeof *part));
    unsigned blocks = reduce_blocks(n);
    k_dot<<<blocks, OPS_THREADS, 0, KEDR_STREAM(ctx)>>>(n, a, b, part);
    kedr_status s = cudaPeekAtLastError() == cudaSuccess ? finish_sum(ctx, part, blocks, out)
                                                         : kedr_cuda_status(cudaGetLastError(),
                                                               "k_dot", __FILE__, __LINE__);
    kedr_scratch_put(ctx, part);
    return s;
}

extern "C" kedr_status flow_cuda_shift(kedr_ctx *ctx, size_t n, double *x, double s)
{
    k_shift<<<LAUNCH(n)>>>(n, x, s);
    KEDR_CUDA_LAUNCHED("k_shift");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_cg_update(kedr_ctx *ctx, size_t n, double *x, double *r,
                                           const double *p, const double *q, double alpha,
                                           double *rr)
{
    if (!rr) {
        k_cg_update<<<LAUNCH(n)>>>(n, x, r, p, q, alpha, NULL);
        KEDR_CUDA_LAUNCHED("k_cg_update");
        return KEDR_OK;
    }
    double *part;
    KEDR_TRY(kedr_scratch_get(ctx, (void **)&part, (OPS_MAX_BLOCKS + 1) * sizeof *part));
    unsigned blocks = reduce_blocks(n);
    k_cg_update<<<blocks, OPS_THREADS, 0, KEDR_STREAM(ctx)>>>(n, x, r, p, q, alpha, part);
    kedr_status s = cudaPeekAtLastError() == cudaSuccess ? finish_sum(ctx, part, blocks, rr)
                                                         : kedr_cuda_status(cudaGetLastError(),
                                                               "k_cg_update", __FILE__, __LINE__);
    kedr_scratch_put(ctx, part);
    return s;
}

/* k reductions' block sums in k areas of scratch, each summed by one block into a results area,
 * the k totals downloaded at once: each the same kernels and block count as one reduction. */
static kedr_status finish_sums(kedr_ctx *ctx, double *part, int k, unsigned blocks, double *out)
{
    double *res = part + (size_t)k * OPS_MAX_BLOCKS;
    for (int i = 0; i < k; i++) {
        k_sum_parts<<<1, OPS_THREADS, 0, KEDR_STREAM(ctx)>>>(part + (size_t)i * OPS_MAX_BLOCKS,
                                                             (int)blocks, res + i);
        KEDR_CUDA_LAUNCHED("k_sum_parts");
    }
    return kedr_read_back(ctx, out, res, (size_t)k * sizeof *out);
}

extern "C" kedr_status flow_cuda_dots(kedr_ctx *ctx, int k, size_t n, const double *const *a,
                                      const double *const *b, double *out)
{
    double *part;
    KEDR_TRY(kedr_scratch_get(ctx, (void **)&part,
                              (size_t)k * (OPS_MAX_BLOCKS + 1) * sizeof *part));
    unsigned blocks = reduce_blocks(n);
    for (int i = 0; i < k; i++)
        k_dot<<<blocks, OPS_THREADS, 0, KEDR_STREAM(ctx)>>>(n, a[i], b[i],
                                                            part + (size_t)i * OPS_MAX_BLOCKS);
    kedr_status s = cudaPeekAtLastError() == cudaSuccess ? finish_sums(ctx, part, k, blocks, out)
                                                         : kedr_cuda_status(cudaGetLastError(),
                                                               "k_dot", __FILE__, __LINE__);
    kedr_scratch_put(ctx, part);
    return s;
}

extern "C" kedr_status flow_cuda_cg_updates(kedr_ctx *ctx, int k, size_t n, double *const *x,
                                            double *const *r, const double *const *p,
                                            const double *const *q, const double *alpha,
                                            double *rr)
{
    double *part;
    KEDR_TRY(kedr_scratch_get(ctx, (void **)&part,
                              (size_t)k * (OPS_MAX_BLOCKS + 1) * sizeof *part));
    unsigned blocks = reduce_blocks(n);
    for (int i = 0; i < k; i++)
        k_cg_update<<<blocks, OPS_THREADS, 0, KEDR_STREAM(ctx)>>>(
            n, x[i], r[i], p[i], q[i], alpha[i], part + (size_t)i * OPS_MAX_BLOCKS);
    kedr_status s = cudaPeekAtLastError() == cudaSuccess ? finish_sums(ctx, part, k, blocks, rr)
                                                         : kedr_cuda_status(cudaGetLastError(),
                                                               "k_cg_update", __FILE__,
                                                               __LINE__);
    kedr_scratch_put(ctx, part);
    return s;
}

extern "C" kedr_status flow_cuda_xpby(kedr_ctx *ctx, size_t n, const double *z, double beta,
                                      double *p)
{
    k_xpby<<<LAUNCH(n)>>>(n, z, beta, p);
    KEDR_CUDA_LAUNCHED("k_xpby");
    return KEDR_OK;
}

/* x = M b: a warp a row, its lanes' partial sums added by shuffles */
__global__ void k_dense(size_t n, const double *__restrict__ M, const double *__restrict__ b,
                        double *__restrict__ x)
{
    size_t row = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    unsigned lane = threadIdx.x % 32;
    if (row >= n) /* whole warps leave together */
        return;
    double s = 0;
    for (size_t j = lane; j < n; j += 32)
        s += M[row * n + j] * b[j];
    for (int o = 16; o > 0; o /= 2)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0)
        x[row] = s;
}

extern "C" kedr_status flow_cuda_dense(kedr_ctx *ctx, size_t n, const double *M,
                                       const double *b, double *x)
{
    k_dense<<<(unsigned)((32 * n + OPS_THREADS - 1) / OPS_THREADS), OPS_THREADS, 0,
              KEDR_STREAM(ctx)>>>(n, M, b, x);
    KEDR_CUDA_LAUNCHED("k_dense");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_axpy(kedr_ctx *ctx, size_t n, double a, const double *x,
                                      double *y)
{
    k_axpy<<<LAUNCH(n)>>>(n, a, x, y);
    KEDR_CUDA_LAUNCHED("k_axpy");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_restrict(kedr_ctx *ctx, const flow_level *F, const flow_level *C,
                                          const double *r, double *b)
{
    k_restrict<<<LAUNCH(C->N)>>>(*F, *C, r, b);
    KEDR_CUDA_LAUNCHED("k_restrict");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_prolong_add(kedr_ctx *ctx, const flow_level *F,
                                             const flow_level *C, const double *xc, double *x)
{
    k_prolong_add<<<LAUNCH(F->N)>>>(*F, *C, xc, x);
    KEDR_CUDA_LAUNCHED("k_prolong_add");
    return KEDR_OK;
}
