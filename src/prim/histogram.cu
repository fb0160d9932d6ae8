/* kedr_histogram_even on the GPU. Each block counts into sub-histograms in shared memory (one
 * per warp when the bins are few, to spread the atomic traffic; one per block otherwise) and adds
 * them to the result at the end. When the bins do not fit in shared memory, a few windows of bins
 * that do fit are counted side by side, each by its own row of blocks reading all the samples;
 * beyond a few windows the samples go straight to global atomics. Samples are read 16 bytes at a
 * time, several loads in flight per thread (tile_cuda.h's block-striped vectors), by a grid
 * sized to fill the GPU once. */
#include "core/internal.h"
#include "prim/histogram_cuda.h"
#include "prim/tile_cuda.h"

#define HIST_THREADS 256
#define HIST_THREADS_BIG 1024           /* for blocks whose shared histogram allows one per SM */
#define HIST_UNROLL 4                   /* 16-byte loads in flight per thread */
#define HIST_MAX_COPIES 8               /* one sub-histogram per warp at most */
#define HIST_COPIES_BYTES (48u << 10)   /* shared memory spent on extra copies, at most */
#define HIST_MAX_WINDOWS 4              /* passes over the samples worth more than global atomics */

template <typename T, int MODE>
static __device__ __forceinline__ uint32_t hist_bin(T x, const prim_hist_spec &h)
{
    if constexpr (MODE == PRIM_HIST_REAL)
        return prim_hist_real((double)x, &h);
    else if constexpr (MODE == PRIM_HIST_SHIFT)
        return prim_hist_shift((int64_t)x, &h);
    else if constexpr (MODE == PRIM_HIST_MUL32)
        return prim_hist_mul32((int64_t)x, &h);
    else if constexpr (MODE == PRIM_HIST_MUL64)
        return prim_hist_mul64((int64_t)x, &h);
    else
        return prim_hist_mul128((int64_t)x, &h);
}

/* Counts x into hist[bin - base] when base <= bin < base + width (width is bins, and base 0,
 * when every bin is in the window). */
template <typename T, int MODE>
static __device__ __forceinline__ void hist_count(T x, const prim_hist_spec &h, uint32_t base,
                                                  uint32_t width, uint32_t *hist)
{
    uint32_t k = hist_bin<T, MODE>(x, h) - base;
    if (k < width)
        atomicAdd(&hist[k], 1u);
}

/* The 16 bytes of samples x[0..16 / sizeof(T)). */
template <typename T, int MODE>
static __device__ __forceinline__ void hist_count_vec(const T *x, const prim_hist_spec &h,
                                                      uint32_t base, uint32_t width,
                                                      uint32_t *hist)
{
#pragma unroll
    for (int j = 0; j < (int)(16 / sizeof(T)); j++)
        hist_count<T, MODE>(x[j], h, base, width, hist);
}

/* in[0..head) and in[head + 16 * nvec / sizeof(T)..n) are the unaligned ends, one sample per
 * thread; the vectors in between are shared out in chunks of HIST_UNROLL per thread. With SHARED
 * the block row blockIdx.y counts the bins [y * window, (y + 1) * window) in shared memory, as
 * copies sub-histograms; without, every bin goes to global atomics. */
template <typename T, int MODE, bool SHARED>
__global__ void __launch_bounds__(HIST_THREADS_BIG, 1)
    prim_hist_kernel(const T *__restrict__ in, size_t n, size_t head, size_t nvec,
                     prim_hist_spec h, uint32_t window, int copies, uint32_t *__restrict__ counts)
{
    extern __shared__ uint32_t sh[];
    uint32_t *hist = counts, base = 0, width = h.bins;
    if constexpr (SHARED) {
        base = blockIdx.y * window;
        width = base < h.bins ? min(window, h.bins - base) : 0;
        for (uint32_t b = threadIdx.x; b < width * copies; b += blockDim.x)
            sh[b] = 0;
        __syncthreads();
        hist = sh + (threadIdx.x / 32 % copies) * width;
    }
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t tail = head + nvec * (16 / sizeof(T));
    if (tid < head)
        hist_count<T, MODE>(in[tid], h, base, width, hist);
    if (tid < n - tail)
        hist_count<T, MODE>(in[tail + tid], h, base, width, hist);

    const T *__restrict__ vin = in + head; /* 16-byte aligned */
    size_t i = (size_t)blockIdx.x * blockDim.x * HIST_UNROLL + threadIdx.x;
    size_t step = (size_t)gridDim.x * blockDim.x * HIST_UNROLL;
    for (; i + (HIST_UNROLL - 1) * blockDim.x < nvec; i += step) {
        T x[HIST_UNROLL][16 / sizeof(T)];
        tile_load_bvec<HIST_UNROLL, false, false, true>(x, vin, i, blockDim.x, nvec);
#pragma unroll
        for (int k = 0; k < HIST_UNROLL; k++)
            hist_count_vec<T, MODE>(x[k], h, base, width, hist);
    }
#pragma unroll
    for (int k = 0; k < HIST_UNROLL; k++)
        if (i + k * blockDim.x < nvec) {
            /* the last vectors, one at a time (a plain 16-byte load: through tile_load_bvec
             * the float kernel took 56 registers instead of 48) */
            uint4 w = ((const uint4 *)vin)[i + k * blockDim.x];
            T x[16 / sizeof(T)];
            memcpy(x, &w, sizeof x);
            hist_count_vec<T, MODE>(x, h, base, width, hist);
        }

    if constexpr (SHARED) {
        __syncthreads();
        for (uint32_t b = threadIdx.x; b < width; b += blockDim.x) {
            uint32_t sum = 0;
            for (int c = 0; c < copies; c++)
                sum += sh[c * width + b];
            if (sum)
                atomicAdd(&counts[base + b], sum);
        }
    }
}

template <typename T, int MODE>
static kedr_status hist_launch(kedr_ctx *ctx, const T *in, size_t n, const prim_hist_spec *h,
                               uint32_t *counts)
{
    uintptr_t addr = (uintptr_t)in;
    if (addr % sizeof(T))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_histogram_even: in (%p) is not aligned to its "
                         "%zu-byte elements", (const void *)in, sizeof(T));
    size_t head = (16 - addr % 16) % 16 / sizeof(T);
    if (head > n)
        head = n;
    size_t nvec = (n - head) / (16 / sizeof(T));

    int optin = 0;
    KEDR_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                         ctx->device));
    /* Windows of bins that fit in shared memory, as few as possible and of equal widths. */
    uint32_t fit = (uint32_t)((size_t)optin / sizeof(uint32_t));
    uint32_t windows = (uint32_t)(((size_t)h->bins + fit - 1) / fit);
    int shared = windows <= HIST_MAX_WINDOWS, copies = 1;
    uint32_t window = (uint32_t)(((size_t)h->bins + windows - 1) / windows);
    size_t one = (size_t)window * sizeof(uint32_t);
    while (shared && copies < HIST_MAX_COPIES && 2 * copies * one <= HIST_COPIES_BYTES)
        copies *= 2;
    size_t smem = shared ? copies * one : 0;
    int threads = smem > HIST_COPIES_BYTES ? HIST_THREADS_BIG : HIST_THREADS;
    void (*kernel)(const T *, size_t, size_t, size_t, prim_hist_spec, uint32_t, int,
                   uint32_t *) =
        shared ? prim_hist_kernel<T, MODE, true> : prim_hist_kernel<T, MODE, false>;
    if (smem > (48u << 10))
        KEDR_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)smem));
    int per_sm = 0;
    KEDR_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    /* Enough blocks to fill the GPU once, but no more than the samples can keep busy: each block
     * should read at least a full round of vectors, and (shared) more samples than it has bins
     * to clear and merge. */
    size_t per_block = (size_t)threads * HIST_UNROLL * (16 / sizeof(T));
    if (shared && per_block < window)
        per_block = window;
    size_t grid = (n + per_block - 1) / per_block;
    size_t full = (size_t)(per_sm > 0 ? per_sm : 1) * (size_t)ctx->multiprocessors;
    if (shared)
        full = (full + windows - 1) / windows;
    if (grid > full)
        grid = full;
    if (grid < 1)
        grid = 1;
    dim3 blocks((unsigned)grid, shared ? windows : 1);
    kernel<<<blocks, threads, smem, KEDR_STREAM(ctx)>>>(in, n, head, nvec, *h, window, copies,
                                                        counts);
    KEDR_CUDA_LAUNCHED("prim_hist_kernel");
    return KEDR_OK;
}

template <typename T>
static kedr_status hist_int(kedr_ctx *ctx, const T *in, size_t n, const prim_hist_spec *h,
                            uint32_t *counts)
{
    switch (h->mode) {
    case PRIM_HIST_SHIFT: return hist_launch<T, PRIM_HIST_SHIFT>(ctx, in, n, h, counts);
    case PRIM_HIST_MUL32: return hist_launch<T, PRIM_HIST_MUL32>(ctx, in, n, h, counts);
    case PRIM_HIST_MUL64: return hist_launch<T, PRIM_HIST_MUL64>(ctx, in, n, h, counts);
    default: return hist_launch<T, PRIM_HIST_MUL128>(ctx, in, n, h, counts);
    }
}

extern "C" kedr_status prim_histogram_cuda(kedr_ctx *ctx, kedr_dtype t, const void *in, size_t n,
                                           const prim_hist_spec *spec, uint32_t *counts)
{
    KEDR_CUDA_TRY(cudaMemsetAsync(counts, 0, (size_t)spec->bins * sizeof *counts,
                                  KEDR_STREAM(ctx)));
    if (n == 0)
        return KEDR_OK;
    switch (t) {
    case KEDR_U32: return hist_int(ctx, (const uint32_t *)in, n, spec, counts);
    case KEDR_I32: return hist_int(ctx, (const int32_t *)in, n, spec, counts);
    case KEDR_F32: return hist_launch<float, PRIM_HIST_REAL>(ctx, (const float *)in, n, spec, counts);
    default: return hist_launch<double, PRIM_HIST_REAL>(ctx, (const double *)in, n, spec, counts);
    }
}
