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
    if (cayley_sparse_based(g))
        return cayley_wide_expand_cuda(ctx, g, &layer, n, &out);
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

/* ---- base-image states (perm:N, N > 16) of one to three words ---- */

/* The generators in shared memory: applying one looks it up at data-dependent points, which
 * the parameter bank would serialise across a warp. */
#define WIDE_TABLE (KEDR_CAYLEY_MAX_GENERATORS * KEDR_CAYLEY_MAX_POINTS)

/* Word pointers travel by value. */
typedef struct {
    const uint64_t *w[CAYLEY_MAX_WORDS];
} wide_in;
typedef struct {
    uint64_t *w[CAYLEY_MAX_WORDS];
} wide_out;

template <int W>
__global__ void __launch_bounds__(SPARSE_THREADS)
cayley_wide_expand_kernel(const __grid_constant__ kedr_cayley_group g, wide_in layer,
                          size_t total, wide_out out)
{
    __shared__ uint8_t table[WIDE_TABLE];
    int entries = g.ngens * KEDR_CAYLEY_MAX_POINTS;
    for (int i = threadIdx.x; i < entries; i += blockDim.x)
        table[i] = g.perm[i / KEDR_CAYLEY_MAX_POINTS][i % KEDR_CAYLEY_MAX_POINTS];
    __syncthreads();
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t ngens = (size_t)g.ngens;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += stride) {
        size_t i = t / ngens;
        int k = (int)(t - i * ngens);
        const uint8_t *perm = table + k * KEDR_CAYLEY_MAX_POINTS;
#pragma unroll
        for (int w = 0; w < W; w++)
            out.w[w][t] = cayley_based_apply(layer.w[w][i], perm, cayley_word_fields(&g, w));
    }
}

/* W, the words of a state, is a template constant in the flag and merge kernels so that
 * their loops over the words unroll and the states stay in registers. */
template <int W>
__global__ void __launch_bounds__(SPARSE_THREADS)
cayley_wide_flag_kernel(wide_in cand, size_t n, const __grid_constant__ cayley_wide_sets sets,
                        uint8_t *__restrict__ flags)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        flags[i] = cayley_wide_flag(cand.w, i, &sets, W);
}

template <int W>
__global__ void __launch_bounds__(SPARSE_THREADS)
cayley_wide_merge_kernel(wide_in a, size_t na, wide_in b, size_t nb, wide_out out)
{
    const int words = W;
    size_t stride = (size_t)gridDim.x * blockDim.x, total = na + nb;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += stride) {
        uint64_t x[CAYLEY_MAX_WORDS] = {0, 0, 0};
        size_t to;
        if (t < na) {
#pragma unroll
            for (int w = 0; w < words; w++)
                x[w] = a.w[w][t];
            to = t + cayley_wide_rank_in(b.w, nb, x, words);
        } else {
#pragma unroll
            for (int w = 0; w < words; w++)
                x[w] = b.w[w][t - na];
            to = t - na + cayley_wide_rank_in(a.w, na, x, words);
        }
#pragma unroll
        for (int w = 0; w < words; w++)
            out.w[w][to] = x[w];
    }
}

__global__ void __launch_bounds__(SPARSE_THREADS)
cayley_gather_kernel(const uint64_t *__restrict__ in, const uint32_t *__restrict__ idx, size_t n,
                     uint64_t *__restrict__ out)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[idx[i]];
}

__global__ void __launch_bounds__(SPARSE_THREADS) cayley_iota_kernel(uint32_t *idx, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        idx[i] = (uint32_t)i;
}

static wide_in wide_in_of(const uint64_t *const *p, int words)
{
    wide_in v;
    for (int w = 0; w < CAYLEY_MAX_WORDS; w++)
        v.w[w] = w < words ? p[w] : NULL;
    return v;
}

static wide_out wide_out_of(uint64_t *const *p, int words)
{
    wide_out v;
    for (int w = 0; w < CAYLEY_MAX_WORDS; w++)
        v.w[w] = w < words ? p[w] : NULL;
    return v;
}

extern "C" kedr_status cayley_wide_expand_cuda(kedr_ctx *ctx, const kedr_cayley_group *g,
                                               const uint64_t *const *layer, size_t n,
                                               uint64_t *const *out)
{
    size_t total = n * (size_t)g->ngens;
    if (total == 0)
        return KEDR_OK;
    int words = g->state_words;
    wide_in in = wide_in_of(layer, words);
    wide_out o = wide_out_of(out, words);
    unsigned int grid = grid_for(ctx, total);
    if (words == 1)
        cayley_wide_expand_kernel<1><<<grid, SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(*g, in, total, o);
    else if (words == 2)
        cayley_wide_expand_kernel<2><<<grid, SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(*g, in, total, o);
    else
        cayley_wide_expand_kernel<3><<<grid, SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(*g, in, total, o);
    KEDR_CUDA_LAUNCHED("cayley_wide_expand_kernel");
    return KEDR_OK;
}

extern "C" kedr_status cayley_wide_flag_cuda(kedr_ctx *ctx, const uint64_t *const *cand, size_t n,
                                             const cayley_wide_sets *sets, uint8_t *flags)
{
    if (n == 0)
        return KEDR_OK;
    wide_in in = wide_in_of(cand, sets->words);
    unsigned int grid = grid_for(ctx, n);
    if (sets->words == 2)
        cayley_wide_flag_kernel<2><<<grid, SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(in, n, *sets,
                                                                                  flags);
    else
        cayley_wide_flag_kernel<3><<<grid, SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(in, n, *sets,
                                                                                  flags);
    KEDR_CUDA_LAUNCHED("cayley_wide_flag_kernel");
    return KEDR_OK;
}

extern "C" kedr_status cayley_wide_merge_cuda(kedr_ctx *ctx, int words, const uint64_t *const *a,
                                              size_t na, const uint64_t *const *b, size_t nb,
                                              uint64_t *const *out)
{
    if (na + nb == 0)
        return KEDR_OK;
    wide_in ia = wide_in_of(a, words), ib = wide_in_of(b, words);
    wide_out o = wide_out_of(out, words);
    unsigned int grid = grid_for(ctx, na + nb);
    if (words == 2)
        cayley_wide_merge_kernel<2><<<grid, SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(ia, na, ib, nb,
                                                                                   o);
    else
        cayley_wide_merge_kernel<3><<<grid, SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(ia, na, ib, nb,
                                                                                   o);
    KEDR_CUDA_LAUNCHED("cayley_wide_merge_kernel");
    return KEDR_OK;
}

extern "C" kedr_status cayley_gather_cuda(kedr_ctx *ctx, const uint64_t *in, const uint32_t *idx,
                                          size_t n, uint64_t *out)
{
    if (n == 0)
        return KEDR_OK;
    cayley_gather_kernel<<<grid_for(ctx, n), SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(in, idx, n,
                                                                                   out);
    KEDR_CUDA_LAUNCHED("cayley_gather_kernel");
    return KEDR_OK;
}

extern "C" kedr_status cayley_iota_cuda(kedr_ctx *ctx, uint32_t *idx, size_t n)
{
    if (n == 0)
        return KEDR_OK;
    cayley_iota_kernel<<<grid_for(ctx, n), SPARSE_THREADS, 0, KEDR_STREAM(ctx)>>>(idx, n);
    KEDR_CUDA_LAUNCHED("cayley_iota_kernel");
    return KEDR_OK;
}
