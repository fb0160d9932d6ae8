/* Prefix sums on the GPU: one launch, decoupled look-back between tiles (lookback_cuda.h).
 *
 * A tile is SCAN_THREADS x SCAN_VECS 16-byte vectors (ITEMS elements per thread); warp w owns
 * the w-th run of 32 x ITEMS, loaded and stored in tile_cuda.h's warp-vector arrangement.
 * Within a warp's run, lane l of group j holds the VEC consecutive elements that one coalesced
 * 16-byte load brings (elements j*32*VEC + l*VEC ...), so no shared-memory transpose is needed:
 * the warp scans group by group with shuffles and carries the group totals along. The same
 * threads write the same elements they read, after the whole tile is loaded, so out == in works.
 * f32 accumulates in double; u32 and i32 (the same bits) pack flag and value into one word. */
#include "core/internal.h"
#include "prim/lookback_cuda.h"
#include "prim/scan_cuda.h"
#include "prim/tile_cuda.h"

#include <stdint.h>

#define SCAN_THREADS 256
#define SCAN_WARPS (SCAN_THREADS / 32)
/* 16-byte vectors per thread. 32 KB tiles took u32 from 0.865 to 0.838 ms against 16 KB ones
 * (H100, 2^28): half the look-backs, each of which sleeps (lookback_cuda.h). f32, whose double
 * accumulators would take 100 registers, keeps 16 KB tiles. */
#define SCAN_VECS 8

template <typename T, typename A> __host__ __device__ constexpr int scan_vecs()
{
    return sizeof(A) > sizeof(T) ? SCAN_VECS / 2 : SCAN_VECS;
}
#define FULL_MASK 0xffffffffu

template <typename A> __device__ __forceinline__ A warp_inclusive_scan(A v, int lane)
{
    for (int d = 1; d < 32; d <<= 1) {
        A o = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d)
            v += o;
    }
    return v;
}

/* The exclusive value from an inclusive scan, without subtracting (exact for floats too). */
template <typename A> __device__ __forceinline__ A warp_exclusive_from(A incl, int lane)
{
    A e = __shfl_up_sync(FULL_MASK, incl, 1);
    return lane == 0 ? (A)0 : e;
}

template <typename T, typename A, typename S, bool EXCL>
__global__ void __launch_bounds__(SCAN_THREADS)
    scan_tiles(const T *in, T *out, size_t n, int vec_ok, S st, unsigned *tile_counter, A *total)
{
    const int VEC = 16 / sizeof(T), NV = scan_vecs<T, A>(), ITEMS = NV * VEC;
    const int WARP_ITEMS = 32 * ITEMS;
    const size_t TILE = (size_t)SCAN_THREADS * ITEMS;
    __shared__ unsigned s_tile;
    __shared__ A s_warp[SCAN_WARPS];
    __shared__ A s_prefix;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    if (threadIdx.x == 0)
        s_tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    size_t tile = s_tile;
    size_t base = tile * TILE + (size_t)warp * WARP_ITEMS + (size_t)lane * VEC;
    bool vec = vec_ok && tile * TILE + (size_t)(warp + 1) * WARP_ITEMS <= n;

    T x[ITEMS];
    tile_load_wvec<NV, VEC, false>(x, in, base, n, vec, (T)0);

    /* start[j]: the sum of the warp's run before this thread's group-j elements. */
    A start[NV], carry = 0;
#pragma unroll
    for (int j = 0; j < NV; j++) {
        A s = 0;
#pragma unroll
        for (int k = 0; k < VEC; k++)
            s += (A)x[j * VEC + k];
        A incl = warp_inclusive_scan(s, lane);
        start[j] = carry + warp_exclusive_from(incl, lane);
        carry += __shfl_sync(FULL_MASK, incl, 31);
    }
    if (lane == 0)
        s_warp[warp] = carry;
    __syncthreads();

    if (warp == 0) {
        A w = lane < SCAN_WARPS ? s_warp[lane] : (A)0;
        A wincl = warp_inclusive_scan(w, lane);
        A aggregate = __shfl_sync(FULL_MASK, wincl, SCAN_WARPS - 1);
        A wexcl = warp_exclusive_from(wincl, lane);
        if (lane < SCAN_WARPS)
            s_warp[lane] = wexcl;
        A prefix = 0;
        if (tile == 0) {
            if (lane == 0)
                st.publish(0, LB_INCL, aggregate);
        } else {
            if (lane == 0)
                st.publish(tile, LB_AGG, aggregate);
            prefix = lb_exclusive_prefix<A>(st, tile);
            if (lane == 0)
                st.publish(tile, LB_INCL, prefix + aggregate);
        }
        if (lane == 0) {
            s_prefix = prefix;
            if (total && tile == gridDim.x - 1)
                *total = prefix + aggregate;
        }
    }
    __syncthreads();

    A run0 = s_prefix + s_warp[warp];
    T y[ITEMS];
#pragma unroll
    for (int j = 0; j < NV; j++) {
        A run = run0 + start[j];
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            A next = run + (A)x[j * VEC + k];
            y[j * VEC + k] = (T)(EXCL ? run : next);
            run = next;
        }
    }
    tile_store_wvec<NV>(out, y, base, n, vec);
}

/* Elements in a tile. */
template <typename T, typename A> static size_t scan_tile(void)
{
    return (size_t)SCAN_THREADS * scan_vecs<T, A>() * (16 / sizeof(T));
}

template <typename T, typename A, typename S>
static kedr_status scan_launch(kedr_ctx *ctx, const T *in, T *out, size_t n, int exclusive,
                               S st, unsigned *counter, size_t clear_bytes, A *d_total,
                               void *total)
{
    cudaStream_t stream = KEDR_STREAM(ctx);
    size_t ntiles = (n + scan_tile<T, A>() - 1) / scan_tile<T, A>();
    int vec_ok = (uintptr_t)in % 16 == 0 && (uintptr_t)out % 16 == 0;
    A *tot = total ? d_total : NULL;
    KEDR_CUDA_TRY(cudaMemsetAsync(counter, 0, clear_bytes, stream));
    if (exclusive)
        scan_tiles<T, A, S, true>
            <<<(unsigned)ntiles, SCAN_THREADS, 0, stream>>>(in, out, n, vec_ok, st, counter, tot);
    else
        scan_tiles<T, A, S, false>
            <<<(unsigned)ntiles, SCAN_THREADS, 0, stream>>>(in, out, n, vec_ok, st, counter, tot);
    KEDR_CUDA_LAUNCHED("scan_tiles");
    if (total) {
        A t = 0;
        KEDR_CUDA_TRY(cudaMemcpyAsync(&t, d_total, sizeof t, cudaMemcpyDeviceToHost, stream));
        KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
        *(T *)total = (T)t;
    }
    return KEDR_OK;
}

/* Scratch layouts: [tile counter, 16 bytes][status...][total]; the counter and the flags (the
 * part that must start at zero) come first so one memset clears them. */
template <typename T>
static kedr_status scan_packed(kedr_ctx *ctx, const void *in, void *out, size_t n, void *total,
                               int exclusive)
{
    size_t ntiles = (n + scan_tile<T, T>() - 1) / scan_tile<T, T>();
    size_t clear = 16 + ntiles * 8;
    void *scratch = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &scratch, clear + 16));
    char *p = (char *)scratch;
    lb_packed<T> st = {(unsigned long long *)(p + 16)};
    kedr_status s = scan_launch<T, T>(ctx, (const T *)in, (T *)out, n, exclusive, st,
                                      (unsigned *)p, clear, (T *)(p + clear), total);
    kedr_scratch_put(ctx, scratch);
    return s;
}

template <typename T, typename A>
static kedr_status scan_split(kedr_ctx *ctx, const void *in, void *out, size_t n, void *total,
                              int exclusive)
{
    size_t ntiles = (n + scan_tile<T, A>() - 1) / scan_tile<T, A>();
    size_t clear = 16 + (ntiles * 4 + 15) / 16 * 16;
    void *scratch = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &scratch, clear + 2 * ntiles * sizeof(A) + 16));
    char *p = (char *)scratch;
    lb_split<A> st = {(unsigned *)(p + 16), (A *)(p + clear), (A *)(p + clear) + ntiles};
    kedr_status s = scan_launch<T, A>(ctx, (const T *)in, (T *)out, n, exclusive, st,
                                      (unsigned *)p, clear, (A *)(p + clear) + 2 * ntiles, total);
    kedr_scratch_put(ctx, scratch);
    return s;
}

extern "C" kedr_status prim_scan_cuda(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out,
                                      size_t n, void *total, int exclusive)
{
    /* The smallest tiles (f32, 8-byte types) give the most tiles. */
    if ((n + scan_tile<float, double>() - 1) / scan_tile<float, double>() > 0x7fffffffu)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_scan: n = %zu is beyond one launch", n);
    switch (t) {
    case KEDR_U32:
    case KEDR_I32: /* the same bits: two's complement sums wrap like unsigned ones */
        return scan_packed<uint32_t>(ctx, in, out, n, total, exclusive);
    case KEDR_U64: return scan_split<uint64_t, uint64_t>(ctx, in, out, n, total, exclusive);
    case KEDR_F32: return scan_split<float, double>(ctx, in, out, n, total, exclusive);
    case KEDR_F64: return scan_split<double, double>(ctx, in, out, n, total, exclusive);
    }
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_scan: element type %d", (int)t);
}
