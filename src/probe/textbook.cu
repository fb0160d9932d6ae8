/* The textbook's kernel variants on the GPU (Boreskov et al., 2012): reduce1..reduce5 (sec. 5.1),
 * scan1 and scan2 (sec. 5.2) and the matrix products of ch. 3, each written as the book describes
 * it, with tail guards so that any size works (the book assumes whole blocks), and with the
 * changes today's GPUs need: the last warp of reduce5 synchronises with __syncwarp (threads of a
 * warp no longer run in lockstep) and only its 32 threads take part (the book lets every thread
 * read past the block's data there), and scan2 pads for 32 banks instead of 16. */
#include "core/internal.h"
#include "probe/probe_cuda.h"

#include <stdint.h>

/* ---- reduction ------------------------------------------------------------------------------- */

#define RBLOCK 512

/* One element of the input or 0 past its end. */
__device__ __forceinline__ uint32_t load_or_zero(const uint32_t *in, size_t i, size_t n)
{
    return i < n ? in[i] : 0u;
}

/* 1: pairs at distance s, taken by threads whose index is a multiple of 2s (divergent warps). */
__global__ void reduce1(const uint32_t *in, uint32_t *out, size_t n)
{
    __shared__ uint32_t data[RBLOCK];
    unsigned tid = threadIdx.x;
    data[tid] = load_or_zero(in, (size_t)blockIdx.x * RBLOCK + tid, n);
    __syncthreads();
    for (unsigned s = 1; s < RBLOCK; s *= 2) {
        if (tid % (2 * s) == 0)
            data[tid] += data[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = data[0];
}

/* 2: thread tid takes the pair at 2 s tid: whole warps idle, but 2s-way bank conflicts. */
__global__ void reduce2(const uint32_t *in, uint32_t *out, size_t n)
{
    __shared__ uint32_t data[RBLOCK];
    unsigned tid = threadIdx.x;
    data[tid] = load_or_zero(in, (size_t)blockIdx.x * RBLOCK + tid, n);
    __syncthreads();
    for (unsigned s = 1; s < RBLOCK; s *= 2) {
        unsigned index = 2 * s * tid;
        if (index < RBLOCK)
            data[index] += data[index + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = data[0];
}

/* 3: pairs at distance RBLOCK/2, halved each step: consecutive threads, no conflicts. */
__global__ void reduce3(const uint32_t *in, uint32_t *out, size_t n)
{
    __shared__ uint32_t data[RBLOCK];
    unsigned tid = threadIdx.x;
    data[tid] = load_or_zero(in, (size_t)blockIdx.x * RBLOCK + tid, n);
    __syncthreads();
    for (unsigned s = RBLOCK / 2; s > 0; s >>= 1) {
        if (tid < s)
            data[tid] += data[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = data[0];
}

/* 4: as 3, with each block taking 2 RBLOCK elements and adding the first pairs as it loads. */
__global__ void reduce4(const uint32_t *in, uint32_t *out, size_t n)
{
    __shared__ uint32_t data[RBLOCK];
    unsigned tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * 2 * RBLOCK + tid;
    data[tid] = load_or_zero(in, i, n) + load_or_zero(in, i + RBLOCK, n);
    __syncthreads();
    for (unsigned s = RBLOCK / 2; s > 0; s >>= 1) {
        if (tid < s)
            data[tid] += data[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = data[0];
}

/* 5: as 4, with the steps inside the last warp unrolled and synchronised by __syncwarp only. */
__global__ void reduce5(const uint32_t *in, uint32_t *out, size_t n)
{
    __shared__ uint32_t data[RBLOCK];
    unsigned tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * 2 * RBLOCK + tid;
    data[tid] = load_or_zero(in, i, n) + load_or_zero(in, i + RBLOCK, n);
    __syncthreads();
    for (unsigned s = RBLOCK / 2; s > 32; s >>= 1) {
        if (tid < s)
            data[tid] += data[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        volatile uint32_t *v = data;
        uint32_t x = v[tid] + v[tid + 32];
#pragma unroll
        for (unsigned s = 16; s > 0; s >>= 1) {
            __syncwarp();
            v[tid] = x;
            __syncwarp();
            x += v[tid + s];
        }
        if (tid == 0)
            out[blockIdx.x] = x;
    }
}

static kedr_status reduce_pass(kedr_ctx *ctx, int variant, const uint32_t *in, uint32_t *out,
                               size_t n, size_t blocks)
{
    cudaStream_t st = KEDR_STREAM(ctx);
    switch (variant) {
    case 1: reduce1<<<(unsigned)blocks, RBLOCK, 0, st>>>(in, out, n); break;
    case 2: reduce2<<<(unsigned)blocks, RBLOCK, 0, st>>>(in, out, n); break;
    case 3: reduce3<<<(unsigned)blocks, RBLOCK, 0, st>>>(in, out, n); break;
    case 4: reduce4<<<(unsigned)blocks, RBLOCK, 0, st>>>(in, out, n); break;
    default: reduce5<<<(unsigned)blocks, RBLOCK, 0, st>>>(in, out, n); break;
    }
    KEDR_CUDA_LAUNCHED("reduce variant");
    return KEDR_OK;
}

/* Passes until at most 2 RBLOCK partials remain, which the host adds (as the book does). */
static kedr_status reduce_run(kedr_ctx *ctx, int variant, const uint32_t *in, size_t n,
                              uint32_t *buf[2], uint32_t *sum)
{
    size_t per_block = variant >= 4 ? 2 * RBLOCK : RBLOCK;
    const uint32_t *src = in;
    int k = 0;
    do { /* at least one pass, so that every size runs the variant */
        size_t blocks = (n + per_block - 1) / per_block;
        KEDR_TRY(reduce_pass(ctx, variant, src, buf[k], n, blocks));
        src = buf[k];
        k ^= 1;
        n = blocks;
    } while (n > 2 * RBLOCK);
    uint32_t host[2 * RBLOCK];
    KEDR_TRY(kedr_download(ctx, host, src, n * sizeof(uint32_t)));
    uint32_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += host[i];
    *sum = s;
    return KEDR_OK;
}

extern "C" kedr_status probe_reduce_cuda(kedr_ctx *ctx, int variant, const int32_t *in, size_t n,
                                         int32_t *sum)
{
    if ((n + RBLOCK - 1) / RBLOCK > 2147483647ull)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_probe_textbook_reduce: n = %zu is too large", n);
    size_t first = (n + RBLOCK - 1) / RBLOCK, second = (first + RBLOCK - 1) / RBLOCK;
    uint32_t *buf[2] = {NULL, NULL}, s = 0;
    kedr_status st = kedr_scratch_get(ctx, (void **)&buf[0], (first + 1) * sizeof(uint32_t));
    if (st == KEDR_OK)
        st = kedr_scratch_get(ctx, (void **)&buf[1], (second + 1) * sizeof(uint32_t));
    if (st == KEDR_OK)
        st = reduce_run(ctx, variant, (const uint32_t *)in, n, buf, &s);
    if (buf[1])
        kedr_scratch_put(ctx, buf[1]);
    if (buf[0])
        kedr_scratch_put(ctx, buf[0]);
    if (st == KEDR_OK)
        *sum = (int32_t)s;
    return st;
}

/* ---- scan ------------------------------------------------------------------------------------ */

#define SBLOCK 256           /* threads; each block scans 2 SBLOCK elements */
#define SSPAN (2 * SBLOCK)
#define LOG_BANKS 5          /* 32 banks of 4 bytes */
template <bool PAD> __device__ __forceinline__ unsigned pad(unsigned i)
{
    return PAD ? i + (i >> LOG_BANKS) : i;
}

/* The exclusive scan of one span of in: an up-sweep builds the tree of sums, the last element
 * (the span's sum, saved to sums) is cleared, and a down-sweep turns the tree into the prefix
 * sums (Boreskov et al., figs. 5.5-5.6). PAD: one extra element every 32, so that the strided
 * tree accesses fall in different banks (scan2). */
template <bool PAD>
__global__ void __launch_bounds__(SBLOCK)
    scan_block(const float *in, float *out, float *sums, size_t n)
{
    __shared__ float temp[SSPAN + (PAD ? SSPAN >> LOG_BANKS : 0)];
    unsigned tid = threadIdx.x;
    size_t base = (size_t)blockIdx.x * SSPAN;
    unsigned ai = tid, bi = tid + SBLOCK;
    temp[pad<PAD>(ai)] = base + ai < n ? in[base + ai] : 0.0f;
    temp[pad<PAD>(bi)] = base + bi < n ? in[base + bi] : 0.0f;
    unsigned offset = 1;
    for (unsigned d = SSPAN >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            unsigned a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
            temp[pad<PAD>(b)] += temp[pad<PAD>(a)];
        }
        offset <<= 1;
    }
    if (tid == 0) {
        if (sums)
            sums[blockIdx.x] = temp[pad<PAD>(SSPAN - 1)];
        temp[pad<PAD>(SSPAN - 1)] = 0;
    }
    for (unsigned d = 1; d < SSPAN; d <<= 1) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            unsigned a = pad<PAD>(offset * (2 * tid + 1) - 1);
            unsigned b = pad<PAD>(offset * (2 * tid + 2) - 1);
            float t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    if (base + ai < n)
        out[base + ai] = temp[pad<PAD>(ai)];
    if (base + bi < n)
        out[base + bi] = temp[pad<PAD>(bi)];
}

/* Adds the scanned sum of the spans before each span to its elements. */
__global__ void scan_add(float *out, const float *offsets, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += offsets[i / SSPAN];
}

/* Scans n elements; the spans' sums go to scratch, are scanned the same way (recursively), and
 * added back. */
static kedr_status scan_level(kedr_ctx *ctx, int variant, const float *in, float *out, size_t n)
{
    size_t blocks = (n + SSPAN - 1) / SSPAN;
    float *sums = NULL, *scanned = NULL;
    cudaStream_t st = KEDR_STREAM(ctx);
    kedr_status s = KEDR_OK;
    if (blocks > 1) {
        s = kedr_scratch_get(ctx, (void **)&sums, blocks * sizeof(float));
        if (s == KEDR_OK)
            s = kedr_scratch_get(ctx, (void **)&scanned, blocks * sizeof(float));
    }
    if (s == KEDR_OK) {
        if (variant == 1)
            scan_block<false><<<(unsigned)blocks, SBLOCK, 0, st>>>(in, out, sums, n);
        else
            scan_block<true><<<(unsigned)blocks, SBLOCK, 0, st>>>(in, out, sums, n);
        s = probe_cuda_check(cudaPeekAtLastError(), "scan_block", __FILE__, __LINE__);
    }
    if (s == KEDR_OK && blocks > 1)
        s = scan_level(ctx, variant, sums, scanned, blocks);
    if (s == KEDR_OK && blocks > 1) {
        scan_add<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(out, scanned, n);
        s = probe_cuda_check(cudaPeekAtLastError(), "scan_add", __FILE__, __LINE__);
    }
    if (scanned)
        kedr_scratch_put(ctx, scanned);
    if (sums)
        kedr_scratch_put(ctx, sums);
    return s;
}

extern "C" kedr_status probe_scan_cuda(kedr_ctx *ctx, int variant, const float *in, float *out,
                                       size_t n)
{
    return scan_level(ctx, variant, in, out, n);
}

/* ---- matrix products ------------------------------------------------------------------------- */

#define MB 16 /* the book's BLOCK_SIZE: 16 x 16 threads, one element of C each */

__global__ void mm_naive(const float *a, const float *b, float *c, unsigned n)
{
    unsigned j = blockIdx.x * MB + threadIdx.x, i = blockIdx.y * MB + threadIdx.y;
    if (i >= n || j >= n)
        return;
    float s = 0;
    for (unsigned k = 0; k < n; k++)
        s += a[(size_t)i * n + k] * b[(size_t)k * n + j];
    c[(size_t)i * n + j] = s;
}

/* C = A B: a tile of A and a tile of B in shared memory per step; each is read from global memory
 * once per block instead of once per thread. */
__global__ void mm_tiled(const float *a, const float *b, float *c, unsigned n)
{
    __shared__ float as[MB][MB], bs[MB][MB];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned j = blockIdx.x * MB + tx, i = blockIdx.y * MB + ty;
    float s = 0;
    for (unsigned k0 = 0; k0 < n; k0 += MB) {
        as[ty][tx] = i < n && k0 + tx < n ? a[(size_t)i * n + k0 + tx] : 0.0f;
        bs[ty][tx] = k0 + ty < n && j < n ? b[(size_t)(k0 + ty) * n + j] : 0.0f;
        __syncthreads();
        for (unsigned k = 0; k < MB; k++)
            s += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (i < n && j < n)
        c[(size_t)i * n + j] = s;
}

/* C = A A^T: tiles of rows i.. and rows j.. of A; thread (tx, ty) reads row tx of the second tile,
 * so that the 16 threads of a half-warp read one column of it: conflicts unless PAD. */
template <int PAD> __global__ void mm_aat(const float *a, float *c, unsigned n)
{
    __shared__ float as[MB][MB], ats[MB][MB + PAD];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned j = blockIdx.x * MB + tx, i = blockIdx.y * MB + ty;
    unsigned jrow = blockIdx.x * MB + ty; /* the row of A this thread loads into ats */
    float s = 0;
    for (unsigned k0 = 0; k0 < n; k0 += MB) {
        as[ty][tx] = i < n && k0 + tx < n ? a[(size_t)i * n + k0 + tx] : 0.0f;
        ats[ty][tx] = jrow < n && k0 + tx < n ? a[(size_t)jrow * n + k0 + tx] : 0.0f;
        __syncthreads();
        for (unsigned k = 0; k < MB; k++)
            s += as[ty][k] * ats[tx][k];
        __syncthreads();
    }
    if (i < n && j < n)
        c[(size_t)i * n + j] = s;
}

extern "C" kedr_status probe_matmul_cuda(kedr_ctx *ctx, kedr_probe_matmul_kind k, const float *a,
                                         const float *b, float *c, size_t n)
{
    unsigned g = (unsigned)((n + MB - 1) / MB), m = (unsigned)n;
    dim3 grid(g, g), block(MB, MB);
    cudaStream_t st = KEDR_STREAM(ctx);
    switch (k) {
    case KEDR_PROBE_MM_NAIVE: mm_naive<<<grid, block, 0, st>>>(a, b, c, m); break;
    case KEDR_PROBE_MM_TILED: mm_tiled<<<grid, block, 0, st>>>(a, b, c, m); break;
    case KEDR_PROBE_MM_AAT: mm_aat<0><<<grid, block, 0, st>>>(a, c, m); break;
    case KEDR_PROBE_MM_AAT_PADDED: mm_aat<1><<<grid, block, 0, st>>>(a, c, m); break;
    default: return kedr_fail(KEDR_ERR_INVALID, "kedr_probe_textbook_matmul: variant %d", (int)k);
    }
    KEDR_CUDA_LAUNCHED("matrix product variant");
    return KEDR_OK;
}
