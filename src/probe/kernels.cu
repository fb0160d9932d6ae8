/* The measurement kernels of kedr probe on the GPU, written as the kernels they reproduce:
 * BabelStream's copy, scale, add, triad and dot (Deakin et al., 2016); the base, memory and math
 * kernels, offset and stride kernels, matrix copies and transposes, and the copy kernel with and
 * without instruction-level parallelism of Ruetsch & Fatica (2013), ch. 2-3. Each kernel has tail
 * guards, so any size works; the tests compare each with the cpu loops of probe.c. */
#include "core/internal.h"
#include "probe/probe_cuda.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define THREADS 256
#define MAX_GRID 2147483647ull

static unsigned grid_for(size_t n, size_t per_block)
{
    size_t g = (n + per_block - 1) / per_block;
    return (unsigned)(g < MAX_GRID ? g : MAX_GRID);
}

/* ---- STREAM-style kernels -------------------------------------------------------------------- */

#define GRID_STRIDE(i, n)                                                                  \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                \
         i += (size_t)gridDim.x * blockDim.x)

template <typename T> __global__ void stream_copy(const T *a, T *c, size_t n)
{
    GRID_STRIDE(i, n) c[i] = a[i];
}
template <typename T> __global__ void stream_scale(T *b, const T *c, T s, size_t n)
{
    GRID_STRIDE(i, n) b[i] = s * c[i];
}
template <typename T> __global__ void stream_add(const T *a, const T *b, T *c, size_t n)
{
    GRID_STRIDE(i, n) c[i] = a[i] + b[i];
}
template <typename T> __global__ void stream_triad(T *a, const T *b, const T *c, T s, size_t n)
{
    GRID_STRIDE(i, n) a[i] = b[i] + s * c[i];
}

/* Each block sums its grid-stride share of a[i] b[i] in double and writes one partial. Blocks of
 * 1024 threads, 4 a multiprocessor: a whole SM's worth of loads in flight (256-thread blocks left
 * the dot 16% under BabelStream's, which launches the same shape). */
#define DOT_THREADS 1024
template <typename T>
__global__ void __launch_bounds__(DOT_THREADS) stream_dot(const T *a, const T *b, size_t n,
                                                          double *partial)
{
    __shared__ double warp_sum[DOT_THREADS / 32];
    double sum = 0;
    GRID_STRIDE(i, n) sum += (double)a[i] * (double)b[i];
    for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31) == 0)
        warp_sum[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        double s = 0;
        for (int w = 0; w < DOT_THREADS / 32; w++)
            s += warp_sum[w];
        partial[blockIdx.x] = s;
    }
}

template <typename T>
static kedr_status stream_launch(kedr_ctx *ctx, kedr_probe_stream_op op, size_t n, T *a, T *b,
                                 T *c, T s, double *dot)
{
    cudaStream_t st = KEDR_STREAM(ctx);
    unsigned grid = grid_for(n, THREADS);
    switch (op) {
    case KEDR_PROBE_COPY: stream_copy<T><<<grid, THREADS, 0, st>>>(a, c, n); break;
    case KEDR_PROBE_SCALE: stream_scale<T><<<grid, THREADS, 0, st>>>(b, c, s, n); break;
    case KEDR_PROBE_ADD: stream_add<T><<<grid, THREADS, 0, st>>>(a, b, c, n); break;
    case KEDR_PROBE_TRIAD: stream_triad<T><<<grid, THREADS, 0, st>>>(a, b, c, s, n); break;
    case KEDR_PROBE_DOT: {
        /* A few blocks per SM, as many as keep the memory system busy; their partials are
         * summed on the host in a fixed order. */
        unsigned blocks = (unsigned)ctx->multiprocessors * 4;
        unsigned dot_grid = grid_for(n, DOT_THREADS);
        if (blocks > dot_grid)
            blocks = dot_grid;
        double *part = NULL, host[4096];
        if (blocks > 4096)
            blocks = 4096;
        KEDR_TRY(kedr_scratch_get(ctx, (void **)&part, blocks * sizeof(double)));
        stream_dot<T><<<blocks, DOT_THREADS, 0, st>>>(a, b, n, part);
        kedr_status s2 =
            probe_cuda_check(cudaPeekAtLastError(), "stream_dot", __FILE__, __LINE__);
        if (s2 == KEDR_OK)
            s2 = kedr_download(ctx, host, part, blocks * sizeof(double));
        kedr_scratch_put(ctx, part);
        KEDR_TRY(s2);
        double sum = 0;
        for (unsigned k = 0; k < blocks; k++)
            sum += host[k];
        *dot = sum;
        return KEDR_OK;
    }
    }
    KEDR_CUDA_LAUNCHED("stream kernel");
    return KEDR_OK;
}

extern "C" kedr_status probe_stream_cuda(kedr_ctx *ctx, kedr_dtype t, kedr_probe_stream_op op,
                                         size_t n, void *a, void *b, void *c, double scalar,
                                         double *dot)
{
    if (t == KEDR_F32)
        return stream_launch(ctx, op, n, (float *)a, (float *)b, (float *)c, (float)scalar, dot);
    return stream_launch(ctx, op, n, (double *)a, (double *)b, (double *)c, scalar, dot);
}

/* ---- the limiting-factor kernels ------------------------------------------------------------- */

template <bool FAST> __device__ __forceinline__ float probe_sin(float x)
{
    return FAST ? __sinf(x) : sinf(x);
}

template <bool FAST> __global__ void limit_base(float *a, const float *b, size_t n)
{
    GRID_STRIDE(i, n) a[i] = probe_sin<FAST>(b[i]);
}
__global__ void limit_memory(float *a, const float *b, size_t n)
{
    GRID_STRIDE(i, n) a[i] = b[i];
}
/* The sine of the base kernel without its memory traffic: the store depends on the result and on
 * a flag the compiler cannot see, so neither the sine nor the store is removed. */
template <bool FAST> __global__ void limit_math(float *a, float x, int flag, size_t n)
{
    GRID_STRIDE(i, n)
    {
        float v = probe_sin<FAST>(x);
        if (v * flag == 1.0f)
            a[i] = v;
    }
}

extern "C" kedr_status probe_limit_cuda(kedr_ctx *ctx, kedr_probe_limit_kind k, int fast,
                                        float *a, const float *b, size_t n, float x, int flag)
{
    cudaStream_t st = KEDR_STREAM(ctx);
    unsigned grid = grid_for(n, THREADS);
    if (k == KEDR_PROBE_BASE && fast)
        limit_base<true><<<grid, THREADS, 0, st>>>(a, b, n);
    else if (k == KEDR_PROBE_BASE)
        limit_base<false><<<grid, THREADS, 0, st>>>(a, b, n);
    else if (k == KEDR_PROBE_MEMORY)
        limit_memory<<<grid, THREADS, 0, st>>>(a, b, n);
    else if (fast)
        limit_math<true><<<grid, THREADS, 0, st>>>(a, x, flag, n);
    else
        limit_math<false><<<grid, THREADS, 0, st>>>(a, x, flag, n);
    KEDR_CUDA_LAUNCHED("limit kernel");
    return KEDR_OK;
}

/* ---- offset and stride ----------------------------------------------------------------------- */

template <typename T> __global__ void offset_kernel(T *a, size_t n, size_t offset)
{
    GRID_STRIDE(i, n) a[i + offset] += 1;
}
template <typename T> __global__ void stride_kernel(T *a, size_t n, size_t stride)
{
    GRID_STRIDE(i, n) a[i * stride] += 1;
}

extern "C" kedr_status probe_offset_cuda(kedr_ctx *ctx, kedr_dtype t, void *a, size_t n,
                                         size_t offset)
{
    unsigned grid = grid_for(n, THREADS);
    if (t == KEDR_F32)
        offset_kernel<float><<<grid, THREADS, 0, KEDR_STREAM(ctx)>>>((float *)a, n, offset);
    else
        offset_kernel<double><<<grid, THREADS, 0, KEDR_STREAM(ctx)>>>((double *)a, n, offset);
    KEDR_CUDA_LAUNCHED("offset_kernel");
    return KEDR_OK;
}

extern "C" kedr_status probe_stride_cuda(kedr_ctx *ctx, kedr_dtype t, void *a, size_t n,
                                         size_t stride)
{
    unsigned grid = grid_for(n, THREADS);
    if (t == KEDR_F32)
        stride_kernel<float><<<grid, THREADS, 0, KEDR_STREAM(ctx)>>>((float *)a, n, stride);
    else
        stride_kernel<double><<<grid, THREADS, 0, KEDR_STREAM(ctx)>>>((double *)a, n, stride);
    KEDR_CUDA_LAUNCHED("stride_kernel");
    return KEDR_OK;
}

/* b[i] = a[i * stride]: plain loads, or through the read-only data cache (Ruetsch & Fatica's
 * texture path, fig. 3.18) */
template <typename T, bool RO>
__global__ void stride_read_kernel(const T *__restrict__ a, T *__restrict__ b, size_t n,
                                   size_t stride)
{
    GRID_STRIDE(i, n) b[i] = RO ? __ldg(a + i * stride) : a[i * stride];
}

template <typename T>
static void stride_read_launch(kedr_ctx *ctx, const void *a, void *b, size_t n, size_t stride,
                               int readonly)
{
    unsigned grid = grid_for(n, THREADS);
    if (readonly)
        stride_read_kernel<T, true><<<grid, THREADS, 0, KEDR_STREAM(ctx)>>>((const T *)a, (T *)b,
                                                                           n, stride);
    else
        stride_read_kernel<T, false><<<grid, THREADS, 0, KEDR_STREAM(ctx)>>>((const T *)a, (T *)b,
                                                                            n, stride);
}

extern "C" kedr_status probe_stride_read_cuda(kedr_ctx *ctx, kedr_dtype t, const void *a, void *b,
                                              size_t n, size_t stride, int readonly)
{
    if (t == KEDR_F32)
        stride_read_launch<float>(ctx, a, b, n, stride, readonly);
    else
        stride_read_launch<double>(ctx, a, b, n, stride, readonly);
    KEDR_CUDA_LAUNCHED("stride_read_kernel");
    return KEDR_OK;
}

/* ---- matrix copies and transposes ------------------------------------------------------------ */

/* A block of TILE x ROWS threads moves a TILE x TILE tile, each thread TILE / ROWS elements. in is
 * rows x cols; x runs along a row of in (a column index), y down its columns. */
#define TILE 32
#define ROWS 8

/* The tile a block takes: its own, or (diagonal) the one of its place along the diagonals, so
 * that blocks running at once spread over the memory partitions. */
template <bool DIAG> __device__ __forceinline__ void tile_of_block(unsigned *tx, unsigned *ty)
{
    if (!DIAG) {
        *tx = blockIdx.x;
        *ty = blockIdx.y;
        return;
    }
    unsigned bid = blockIdx.x + gridDim.x * blockIdx.y;
    *ty = bid % gridDim.y;
    *tx = (bid / gridDim.y + *ty) % gridDim.x;
}

__global__ void t_copy(float *out, const float *in, size_t rows, size_t cols)
{
    size_t x = (size_t)blockIdx.x * TILE + threadIdx.x, y = (size_t)blockIdx.y * TILE + threadIdx.y;
    if (x >= cols)
        return;
    for (int j = 0; j < TILE; j += ROWS)
        if (y + j < rows)
            out[(y + j) * cols + x] = in[(y + j) * cols + x];
}

__global__ void t_copy_shared(float *out, const float *in, size_t rows, size_t cols)
{
    __shared__ float tile[TILE][TILE];
    size_t x = (size_t)blockIdx.x * TILE + threadIdx.x, y = (size_t)blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    for (int j = 0; j < TILE; j += ROWS)
        if (x < cols && y + j < rows)
            out[(y + j) * cols + x] = tile[threadIdx.y + j][threadIdx.x];
}

/* Reads along rows of in, writes down columns of out: consecutive threads store a row apart. */
__global__ void t_naive(float *out, const float *in, size_t rows, size_t cols)
{
    size_t x = (size_t)blockIdx.x * TILE + threadIdx.x, y = (size_t)blockIdx.y * TILE + threadIdx.y;
    if (x >= cols)
        return;
    for (int j = 0; j < TILE; j += ROWS)
        if (y + j < rows)
            out[x * rows + y + j] = in[(y + j) * cols + x];
}

/* Through a shared tile, so that both the loads and the stores are along rows. PAD = 0: a column
 * of the tile lies in one bank (32-way conflicts when it is read); PAD = 1: in 32 banks. */
template <int PAD, bool DIAG>
__global__ void t_tiled(float *out, const float *in, size_t rows, size_t cols)
{
    __shared__ float tile[TILE][TILE + PAD];
    unsigned bx, by;
    tile_of_block<DIAG>(&bx, &by);
    size_t x = (size_t)bx * TILE + threadIdx.x, y = (size_t)by * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    /* Row (bx * TILE + ty + j) of out holds column bx * TILE + ty + j of in. */
    size_t ox = (size_t)by * TILE + threadIdx.x, oy = (size_t)bx * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (ox < rows && oy + j < cols)
            out[(oy + j) * rows + ox] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" kedr_status probe_transpose_cuda(kedr_ctx *ctx, kedr_probe_transpose_kind k,
                                            const float *in, float *out, size_t rows, size_t cols)
{
    size_t gx = (cols + TILE - 1) / TILE, gy = (rows + TILE - 1) / TILE;
    if (gx > 2147483647u || gy > 65535)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_probe_transpose: %zu x %zu: at most %d rows on "
                         "the GPU (a grid of 65535 tiles down)", rows, cols, 65535 * TILE);
    dim3 grid((unsigned)gx, (unsigned)gy), block(TILE, ROWS);
    cudaStream_t st = KEDR_STREAM(ctx);
    switch (k) {
    case KEDR_PROBE_T_COPY: t_copy<<<grid, block, 0, st>>>(out, in, rows, cols); break;
    case KEDR_PROBE_T_COPY_SHARED:
        t_copy_shared<<<grid, block, 0, st>>>(out, in, rows, cols);
        break;
    case KEDR_PROBE_T_NAIVE: t_naive<<<grid, block, 0, st>>>(out, in, rows, cols); break;
    case KEDR_PROBE_T_COALESCED:
        t_tiled<0, false><<<grid, block, 0, st>>>(out, in, rows, cols);
        break;
    case KEDR_PROBE_T_NO_BANK: t_tiled<1, false><<<grid, block, 0, st>>>(out, in, rows, cols); break;
    case KEDR_PROBE_T_DIAGONAL: t_tiled<1, true><<<grid, block, 0, st>>>(out, in, rows, cols); break;
    default:
        return kedr_fail(KEDR_ERR_INVALID, "kedr_probe_transpose: unknown variant %d", (int)k);
    }
    KEDR_CUDA_LAUNCHED("transpose variant");
    return KEDR_OK;
}

/* ---- the copy kernel with a chosen launch ---------------------------------------------------- */

#define MAX_ILP 8

/* Each thread loads ilp elements a block apart into registers, then stores them: ilp loads in
 * flight per thread (Ruetsch & Fatica, sec. 3.5.2). The dynamic shared memory of the launch is
 * not used; it only limits how many blocks share an SM. */
template <typename T> __global__ void copy_ilp(T *out, const T *in, size_t n, int ilp)
{
    size_t i = (size_t)blockIdx.x * blockDim.x * ilp + threadIdx.x;
    T tmp[MAX_ILP];
#pragma unroll
    for (int j = 0; j < MAX_ILP; j++)
        if (j < ilp && i + (size_t)j * blockDim.x < n)
            tmp[j] = in[i + (size_t)j * blockDim.x];
#pragma unroll
    for (int j = 0; j < MAX_ILP; j++)
        if (j < ilp && i + (size_t)j * blockDim.x < n)
            out[i + (size_t)j * blockDim.x] = tmp[j];
}

/* The dynamic shared memory a launch asks: none, or enough that one block fills an SM. */
template <typename T> static kedr_status launch_shared(kedr_ctx *ctx, int one_block, size_t *bytes)
{
    *bytes = 0;
    if (!one_block)
        return KEDR_OK;
    int per_sm = 0, optin = 0;
    KEDR_CUDA_TRY(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                         ctx->device));
    KEDR_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                         ctx->device));
    size_t want = (size_t)(0.9 * per_sm);
    *bytes = want < (size_t)optin ? want : (size_t)optin;
    KEDR_CUDA_TRY(cudaFuncSetAttribute(copy_ilp<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)*bytes));
    return KEDR_OK;
}

template <typename T>
static kedr_status copy_launch(kedr_ctx *ctx, T *out, const T *in, size_t n,
                               const kedr_probe_launch *l)
{
    size_t shared = 0;
    KEDR_TRY(launch_shared<T>(ctx, l->one_block_per_sm, &shared));
    size_t per_block = (size_t)l->threads * l->ilp, g = (n + per_block - 1) / per_block;
    if (g > MAX_GRID)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_probe_copy_launch: n = %zu needs more than "
                         "2^31 - 1 blocks of %zu elements", n, per_block);
    copy_ilp<T><<<(unsigned)g, l->threads, shared, KEDR_STREAM(ctx)>>>(out, in, n, l->ilp);
    KEDR_CUDA_LAUNCHED("copy_ilp");
    return KEDR_OK;
}

extern "C" kedr_status probe_copy_launch_cuda(kedr_ctx *ctx, kedr_dtype t, void *out,
                                              const void *in, size_t n,
                                              const kedr_probe_launch *launch)
{
    if (t == KEDR_F32)
        return copy_launch(ctx, (float *)out, (const float *)in, n, launch);
    return copy_launch(ctx, (double *)out, (const double *)in, n, launch);
}

template <typename T>
static kedr_status occupancy_of(kedr_ctx *ctx, const kedr_probe_launch *l, double *occ,
                                size_t *shared)
{
    KEDR_TRY(launch_shared<T>(ctx, l->one_block_per_sm, shared));
    int blocks = 0, max_threads = 0;
    KEDR_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_ilp<T>, l->threads,
                                                                *shared));
    KEDR_CUDA_TRY(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor,
                                         ctx->device));
    *occ = max_threads ? (double)blocks * l->threads / max_threads : 0;
    return KEDR_OK;
}

extern "C" kedr_status probe_occupancy_cuda(kedr_ctx *ctx, kedr_dtype t,
                                            const kedr_probe_launch *launch, double *occupancy,
                                            size_t *shared_bytes)
{
    if (t == KEDR_F32)
        return occupancy_of<float>(ctx, launch, occupancy, shared_bytes);
    return occupancy_of<double>(ctx, launch, occupancy, shared_bytes);
}
