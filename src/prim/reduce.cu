/* kedr_reduce on the GPU: two launches, no atomics, so that float sums are deterministic.
 *
 * Pass 1: a grid whose size depends only on n; each thread folds a fixed set of 16-byte vectors
 * (blockwise grid-stride order) into one accumulator, the block combines its threads by a fixed
 * shuffle tree, and writes one partial. Pass 2: one block folds the partials in a fixed order.
 * The association order therefore depends only on n. Misaligned input takes scalar loads over
 * the same logical layout, so it gives the same bits. */
#include "core/internal.h"
#include "prim/reduce_cuda.h"
#include "prim/tile_cuda.h"

#include <math.h>
#include <stdint.h>

#define REDUCE_THREADS 256
#define REDUCE_UNROLL 4        /* 16-byte loads in flight per thread */
#define REDUCE_MAX_BLOCKS 1024 /* one wave on an H100 at 8 blocks per SM */
#define FULL_MASK 0xffffffffu

template <int OP, typename A> __device__ __forceinline__ A reduce_combine(A acc, A v)
{
    if (OP == KEDR_OP_SUM)
        return acc + v;
    if (OP == KEDR_OP_MIN)
        return v < acc ? v : acc; /* a NaN never wins, so NaNs are skipped */
    return v > acc ? v : acc;
}

/* Combines the block's accumulators; thread 0 gets the result. */
template <int OP, typename A> __device__ __forceinline__ A reduce_block(A acc, A init)
{
    __shared__ A warp_acc[REDUCE_THREADS / 32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1)
        acc = reduce_combine<OP>(acc, (A)__shfl_xor_sync(FULL_MASK, acc, o));
    if (lane == 0)
        warp_acc[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < REDUCE_THREADS / 32 ? warp_acc[lane] : init;
        for (int o = 16; o > 0; o >>= 1)
            acc = reduce_combine<OP>(acc, (A)__shfl_xor_sync(FULL_MASK, acc, o));
    }
    return acc;
}

template <typename T, typename A, int OP, bool VEC_OK>
__global__ void __launch_bounds__(REDUCE_THREADS)
    reduce_partials(const T *__restrict__ in, size_t n, A init, A *__restrict__ part)
{
    const int VEC = 16 / sizeof(T);
    const size_t chunk = (size_t)REDUCE_THREADS * REDUCE_UNROLL;
    size_t nvec = n / VEC;
    A acc = init;
    for (size_t v0 = blockIdx.x * chunk + threadIdx.x; v0 < nvec; v0 += gridDim.x * chunk) {
        T x[REDUCE_UNROLL][VEC];
        tile_load_bvec<REDUCE_UNROLL, true, true, VEC_OK>(x, in, v0, REDUCE_THREADS, nvec);
#pragma unroll
        for (int u = 0; u < REDUCE_UNROLL; u++)
            if (v0 + (size_t)u * REDUCE_THREADS < nvec)
#pragma unroll
                for (int k = 0; k < VEC; k++)
                    acc = reduce_combine<OP>(acc, (A)x[u][k]);
    }
    /* The last n % VEC elements go to block 0. */
    if (blockIdx.x == 0 && threadIdx.x < n - nvec * VEC)
        acc = reduce_combine<OP>(acc, (A)in[nvec * VEC + threadIdx.x]);
    acc = reduce_block<OP>(acc, init);
    if (threadIdx.x == 0)
        part[blockIdx.x] = acc;
}

template <typename T, typename A, int OP>
__global__ void __launch_bounds__(REDUCE_THREADS)
    reduce_final(const A *__restrict__ part, int nparts, A init, T *__restrict__ res)
{
    A acc = init;
    for (int i = threadIdx.x; i < nparts; i += REDUCE_THREADS)
        acc = reduce_combine<OP>(acc, part[i]);
    acc = reduce_block<OP>(acc, init);
    if (threadIdx.x == 0)
        *res = (T)acc;
}

template <typename T, typename A, int OP>
static kedr_status reduce_launch(kedr_ctx *ctx, const T *in, size_t n, A init, void *result,
                                 A *part, int blocks, T *res)
{
    cudaStream_t stream = KEDR_STREAM(ctx);
    if ((uintptr_t)in % 16 == 0)
        reduce_partials<T, A, OP, true><<<blocks, REDUCE_THREADS, 0, stream>>>(in, n, init, part);
    else
        reduce_partials<T, A, OP, false><<<blocks, REDUCE_THREADS, 0, stream>>>(in, n, init, part);
    KEDR_CUDA_LAUNCHED("reduce_partials");
    reduce_final<T, A, OP><<<1, REDUCE_THREADS, 0, stream>>>(part, blocks, init, res);
    KEDR_CUDA_LAUNCHED("reduce_final");
    KEDR_CUDA_TRY(cudaMemcpyAsync(result, res, sizeof(T), cudaMemcpyDeviceToHost, stream));
    KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
    return KEDR_OK;
}

template <typename T, typename A, int OP>
static kedr_status reduce_run(kedr_ctx *ctx, const void *in, size_t n, A init, void *result)
{
    const size_t chunk = (size_t)REDUCE_THREADS * REDUCE_UNROLL * (16 / sizeof(T));
    size_t chunks = (n + chunk - 1) / chunk;
    int blocks = chunks < REDUCE_MAX_BLOCKS ? (int)chunks : REDUCE_MAX_BLOCKS;
    size_t part_bytes = ((size_t)blocks * sizeof(A) + 15) / 16 * 16;
    void *scratch = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &scratch, part_bytes + sizeof(T)));
    kedr_status s = reduce_launch<T, A, OP>(ctx, (const T *)in, n, init, result, (A *)scratch,
                                            blocks, (T *)((char *)scratch + part_bytes));
    kedr_scratch_put(ctx, scratch);
    return s;
}

extern "C" kedr_status prim_reduce_cuda(kedr_ctx *ctx, kedr_dtype t, kedr_op op, const void *in,
                                        size_t n, void *result)
{
    switch (t) {
    case KEDR_U32:
    case KEDR_I32:
        if (op == KEDR_OP_SUM) /* i32 sums wrap like u32 sums: the same bits */
            return reduce_run<uint32_t, uint32_t, KEDR_OP_SUM>(ctx, in, n, 0u, result);
        if (t == KEDR_U32)
            return op == KEDR_OP_MIN
                       ? reduce_run<uint32_t, uint32_t, KEDR_OP_MIN>(ctx, in, n, UINT32_MAX, result)
                       : reduce_run<uint32_t, uint32_t, KEDR_OP_MAX>(ctx, in, n, 0u, result);
        return op == KEDR_OP_MIN
                   ? reduce_run<int32_t, int32_t, KEDR_OP_MIN>(ctx, in, n, INT32_MAX, result)
                   : reduce_run<int32_t, int32_t, KEDR_OP_MAX>(ctx, in, n, INT32_MIN, result);
    case KEDR_U64:
        if (op == KEDR_OP_SUM)
            return reduce_run<uint64_t, uint64_t, KEDR_OP_SUM>(ctx, in, n, 0ull, result);
        return op == KEDR_OP_MIN
                   ? reduce_run<uint64_t, uint64_t, KEDR_OP_MIN>(ctx, in, n, UINT64_MAX, result)
                   : reduce_run<uint64_t, uint64_t, KEDR_OP_MAX>(ctx, in, n, 0ull, result);
    case KEDR_F32:
        if (op == KEDR_OP_SUM)
            return reduce_run<float, double, KEDR_OP_SUM>(ctx, in, n, 0.0, result);
        return op == KEDR_OP_MIN
                   ? reduce_run<float, float, KEDR_OP_MIN>(ctx, in, n, INFINITY, result)
                   : reduce_run<float, float, KEDR_OP_MAX>(ctx, in, n, -INFINITY, result);
    case KEDR_F64:
        if (op == KEDR_OP_SUM)
            return reduce_run<double, double, KEDR_OP_SUM>(ctx, in, n, 0.0, result);
        return op == KEDR_OP_MIN
                   ? reduce_run<double, double, KEDR_OP_MIN>(ctx, in, n, (double)INFINITY, result)
                   : reduce_run<double, double, KEDR_OP_MAX>(ctx, in, n, -(double)INFINITY, result);
    }
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_reduce: element type %d", (int)t);
}
