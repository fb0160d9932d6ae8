/* Sparse breadth-first search, cuda kernels; the search is in sparse.c and runs the radix sort
 * and the selection through the primitives. The kernels mirror the cpu loops of sparse.c and
 * call the same element code (sparse.h). Grid-stride loops with 64-bit indices; the group
 * travels as a __grid_constant__ parameter, as in dense.cu. */
#include "sparse.h"
#include "core/internal.h"

#define SPARSE_THREADS 256
#define SPARSE_BLOCKS_PER_SM 8

/* Thread t of the grid computes candidate t = i * ngens + k: consecutive threads write
 * consecutive candidates. */
__global__ void __launch_bounds__(SPARSE_THREADS)
cayley_sparse_expand_kernel(const __grid_constant__ kedr_cayley_group g,
                            const uint64_t *__restrict__ layer, size_t total,
                            uint64_t *__restrict__ out)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t ngens = (size_t)g.ngens;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += stride) {
        size_t i = t / ngens;
        int k = (int)(t - i * ngens);
        out[t] = cayley_sparse_neighbour(&g, layer[i], k);
    }
}

__global__ void __launch_bounds__(SPARSE_THREADS)
cayley_sparse_flag_kernel(const uint64_t *__restrict__ cand, size_t n,
                          const __grid_constant__ cayley_sparse_sets sets,
                          uint8_t *__restrict__ flags)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        flags[i] = cayley_sparse_flag(cand, i, &sets);
}

__global__ void __launch_bounds__(SPARSE_THREADS)
cayley_sparse_merge_kernel(const uint64_t *__restrict__ a, size_t na,
                           const uint64_t *__restrict__ b, size_t nb, uint64_t *__restrict__ out)
{
    size_t stride = (size_t)gridDim.x * blockDim.x, total = na + nb;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += stride) {
        if (t < na)
            out[t + cayley_sparse_rank_in(b, nb, a[t])] = a[t];
        else
            out[t - na + cayley_sparse_rank_in(a, na, b[t - na])] = b[t - na];
    }
}

/* Blocks for n items: enough to fill the GPU, no more than the items need. */
static unsigned int grid_for(const kedr_ctx *ctx, size_t n)
{
    size_t blocks = (n + SPARSE_THREADS - 1) / SPARSE_THREADS;
    size_t most = (size_t)ctx->multiprocessors * SPARSE_BLOCKS_PER_SM;
    if (blocks > most)
        blocks = most;
    return (unsigned int)(blocks ? blocks : 1);
}

extern "C" kedr_status cayley_sparse_expand_cuda(kedr_ctx *ctx, const kedr_cayley_group *g,
                                                 const uint64_t *layer, size_t n, uint64_t *out)
{
    size_t total = n * (size_t)g->ngens;
    if (total == 0)
        return KEDR_OK;
    cayley_sparse_expand_kernel<<<grid_for(ctx, total), SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(
        *g, layer, total, out);
    KEDR_CUDA_LAUNCHED("cayley_sparse_expand_kernel");
    return KEDR_OK;
}

extern "C" kedr_status cayley_sparse_flag_cuda(kedr_ctx *ctx, const uint64_t *cand, size_t n,
                                               const cayley_sparse_sets *sets, uint8_t *flags)
{
    if (n == 0)
        return KEDR_OK;
    cayley_sparse_flag_kernel<<<grid_for(ctx, n), SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(
        cand, n, *sets, flags);
    KEDR_CUDA_LAUNCHED("cayley_sparse_flag_kernel");
    return KEDR_OK;
}

extern "C" kedr_status cayley_sparse_merge_cuda(kedr_ctx *ctx, const uint64_t *a, size_t na,
                                                const uint64_t *b, size_t nb, uint64_t *out)
{
    if (na + nb == 0)
        return KEDR_OK;
    cayley_sparse_merge_kernel<<<grid_for(ctx, na + nb), SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(
        a, na, b, nb, out);
    KEDR_CUDA_LAUNCHED("cayley_sparse_merge_kernel");
    return KEDR_OK;
}
