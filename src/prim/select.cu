/* Stable compaction and partition on the GPU: one pass with decoupled look-back on the count of
 * selected elements (lookback_cuda.h), like the scan.
 *
 * A tile is SEL_THREADS threads x four 16-byte vectors of elements, laid out as in scan.cu
 * (lane l of group j holds the VEC consecutive elements of one coalesced load). Each block ranks
 * its selected elements with warp scans of per-group counts, learns the count before its tile by
 * look-back, gathers the tile's selected elements (then, for a partition, the rejected ones) in
 * order in shared memory, and writes them out with coalesced stores.
 *
 * A partition's rejected element goes to n_true + (its index - selected before it); n_true is
 * needed before any tile writes, so a partition first runs a counting pass (for flags it reads
 * only the flag bytes). */
#include "core/internal.h"
#include "prim/lookback_cuda.h"
#include "prim/select_cuda.h"

#include <stdint.h>

#define SEL_THREADS 256
#define SEL_WARPS (SEL_THREADS / 32)
#define SEL_NV 4 /* 16-byte vectors per thread */
#define SEL_COUNT_BLOCKS 1024
#define FULL_MASK 0xffffffffu

/* 16-byte elements need only 8-byte alignment, as on the cpu; aligned input still takes
 * 16-byte loads. */
struct __align__(8) sel_e16 {
    unsigned long long lo, hi;
};

/* Selection by flag bytes. */
struct sel_flags {
    const uint8_t *flags;
    enum { uses_elems = 0 };

    /* Bit k set when element i0 + k (k < VEC) is selected; vec: the VEC flags are all in range
     * and VEC-aligned, so one load brings them. */
    template <int VEC, typename E>
    __device__ __forceinline__ unsigned bits(size_t i0, size_t n, bool vec, const E *) const
    {
        union { uint4 v16; uint2 v8; unsigned v4; unsigned short v2; unsigned char b[16]; } u;
        unsigned r = 0;
        if (vec) {
            const uint8_t *f = flags + i0;
            if (VEC == 16)
                u.v16 = __ldg((const uint4 *)f);
            else if (VEC == 8)
                u.v8 = __ldg((const uint2 *)f);
            else if (VEC == 4)
                u.v4 = __ldg((const unsigned *)f);
            else if (VEC == 2)
                u.v2 = __ldg((const unsigned short *)f);
            else
                u.b[0] = __ldg(f);
#pragma unroll
            for (int k = 0; k < VEC; k++)
                r |= (unsigned)(u.b[k] != 0) << k;
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++)
                if (i0 + k < n && __ldg(flags + i0 + k))
                    r |= 1u << k;
        }
        return r;
    }
};

/* Selection by a comparison, without branches: the result is an OR of the comparisons that
 * mask names (1: x < a, 2: x == a, 4: x > a, 8: a <= x < b), flipped for NE. A NaN fails every
 * comparison, so it satisfies NE only. */
template <typename T> struct sel_cmp {
    T a, b;
    unsigned mask, negate;
    enum { uses_elems = 1 };

    __device__ __forceinline__ bool test(T x) const
    {
        bool r = ((mask & 1) && x < a) || ((mask & 2) && x == a) || ((mask & 4) && x > a) ||
                 ((mask & 8) && a <= x && x < b);
        return r != (bool)negate;
    }
    template <int VEC, typename E>
    __device__ __forceinline__ unsigned bits(size_t i0, size_t n, bool, const E *x) const
    {
        unsigned r = 0;
#pragma unroll
        for (int k = 0; k < VEC; k++)
            if (i0 + k < n && test(x[k]))
                r |= 1u << k;
        return r;
    }
};

/* Loads this thread's part of a tile: elements (when wanted) into x, selection bits per group.
 * base is the thread's first element; group j starts at base + j * 32 * VEC. */
template <typename E, typename P, bool LOAD>
__device__ __forceinline__ void sel_load(const E *in, const P &p, size_t base, size_t n, bool full,
                                         int vec_in, int vec_flags, E *x, unsigned *bits)
{
    const int VEC = 16 / sizeof(E);
#pragma unroll
    for (int j = 0; j < SEL_NV; j++) {
        size_t i0 = base + (size_t)j * 32 * VEC;
        E *xj = x + j * VEC;
        if (LOAD) {
            if (full && vec_in) {
                union { uint4 raw; E e[VEC]; } r;
                r.raw = __ldg((const uint4 *)(in + i0));
#pragma unroll
                for (int k = 0; k < VEC; k++)
                    xj[k] = r.e[k];
            } else {
#pragma unroll
                for (int k = 0; k < VEC; k++)
                    xj[k] = i0 + k < n ? in[i0 + k] : E();
            }
        }
        bits[j] = p.template bits<VEC>(i0, n, full && vec_flags, xj);
    }
}

/* The partition's counting pass: *n_true += selected elements. */
template <typename E, typename P>
__global__ void __launch_bounds__(SEL_THREADS)
    select_count(const E *__restrict__ in, P p, size_t n, int vec_in, int vec_flags,
                 unsigned long long *n_true)
{
    const int VEC = 16 / sizeof(E), WARP_ITEMS = 32 * SEL_NV * VEC, TILE = SEL_WARPS * WARP_ITEMS;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    size_t ntiles = (n + TILE - 1) / TILE;
    unsigned long long c = 0;
    for (size_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        size_t wbase = tile * TILE + (size_t)warp * WARP_ITEMS;
        E x[SEL_NV * VEC];
        unsigned bits[SEL_NV];
        sel_load<E, P, P::uses_elems>(in, p, wbase + (size_t)lane * VEC, n,
                                      wbase + WARP_ITEMS <= n, vec_in, vec_flags, x, bits);
#pragma unroll
        for (int j = 0; j < SEL_NV; j++)
            c += __popc(bits[j]);
    }
    for (int o = 16; o > 0; o >>= 1)
        c += __shfl_xor_sync(FULL_MASK, c, o);
    if (lane == 0 && c)
        atomicAdd(n_true, c);
}

template <typename E, typename P, bool PARTITION>
__global__ void __launch_bounds__(SEL_THREADS)
    select_tiles(const E *__restrict__ in, P p, E *__restrict__ out, size_t n, int vec_in,
                 int vec_flags, lb_packed<unsigned long long> st, unsigned *tile_counter,
                 const unsigned long long *n_true, unsigned long long *count)
{
    const int VEC = 16 / sizeof(E), ITEMS = SEL_NV * VEC, WARP_ITEMS = 32 * ITEMS;
    const int TILE = SEL_WARPS * WARP_ITEMS;
    __shared__ E s_items[TILE];
    __shared__ unsigned s_tile, s_warp[SEL_WARPS], s_tile_sel;
    __shared__ unsigned long long s_prefix;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    if (threadIdx.x == 0)
        s_tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    size_t tile = s_tile, tile_base = tile * TILE;
    size_t wbase = tile_base + (size_t)warp * WARP_ITEMS;
    E x[ITEMS];
    unsigned bits[SEL_NV];
    sel_load<E, P, true>(in, p, wbase + (size_t)lane * VEC, n, wbase + WARP_ITEMS <= n, vec_in,
                         vec_flags, x, bits);

    /* start[j]: selected elements of the warp's run before this thread's group j. */
    unsigned start[SEL_NV], carry = 0;
#pragma unroll
    for (int j = 0; j < SEL_NV; j++) {
        unsigned c = __popc(bits[j]), incl = c;
        for (int d = 1; d < 32; d <<= 1) {
            unsigned o = __shfl_up_sync(FULL_MASK, incl, d);
            if (lane >= d)
                incl += o;
        }
        start[j] = carry + incl - c;
        carry += __shfl_sync(FULL_MASK, incl, 31);
    }
    if (lane == 0)
        s_warp[warp] = carry;
    __syncthreads();

    if (warp == 0) {
        unsigned w = lane < SEL_WARPS ? s_warp[lane] : 0, incl = w;
        for (int d = 1; d < 32; d <<= 1) {
            unsigned o = __shfl_up_sync(FULL_MASK, incl, d);
            if (lane >= d)
                incl += o;
        }
        unsigned tile_sel = __shfl_sync(FULL_MASK, incl, SEL_WARPS - 1);
        if (lane < SEL_WARPS)
            s_warp[lane] = incl - w;
        unsigned long long prefix = 0;
        if (tile == 0) {
            if (lane == 0)
                st.publish(0, LB_INCL, tile_sel);
        } else {
            if (lane == 0)
                st.publish(tile, LB_AGG, tile_sel);
            prefix = lb_exclusive_prefix<unsigned long long>(st, tile);
            if (lane == 0)
                st.publish(tile, LB_INCL, prefix + tile_sel);
        }
        if (lane == 0) {
            s_prefix = prefix;
            s_tile_sel = tile_sel;
            if (tile == gridDim.x - 1)
                *count = prefix + tile_sel;
        }
    }
    __syncthreads();

    /* Gather in order: selected at their rank, rejected after all selected of the tile. Only
     * the tile's last elements can lie beyond n, so every rejected element has a valid rank. */
    unsigned tile_sel = s_tile_sel, wofs = s_warp[warp];
#pragma unroll
    for (int j = 0; j < SEL_NV; j++) {
        unsigned r = wofs + start[j];
        unsigned local = warp * WARP_ITEMS + j * 32 * VEC + lane * VEC;
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            if (bits[j] >> k & 1)
                s_items[r++] = x[j * VEC + k];
            else if (PARTITION && wbase + (size_t)lane * VEC + (size_t)j * 32 * VEC + k < n)
                s_items[tile_sel + local + k - r] = x[j * VEC + k];
        }
    }
    __syncthreads();

    size_t sel_prefix = s_prefix;
    size_t valid = n - tile_base < (size_t)TILE ? n - tile_base : (size_t)TILE;
    unsigned limit = PARTITION ? (unsigned)valid : tile_sel;
    /* Rejected element k (k >= tile_sel) of the tile goes to rej_base + k. */
    size_t rej_base = PARTITION ? (size_t)*n_true + (tile_base - sel_prefix) - tile_sel : 0;
    for (unsigned k = threadIdx.x; k < limit; k += SEL_THREADS)
        out[k < tile_sel ? sel_prefix + k : rej_base + k] = s_items[k];
}

template <typename E, typename P>
static kedr_status select_launch(kedr_ctx *ctx, const E *in, P p, int vec_flags, E *out,
                                 size_t n, int partition, size_t *n_sel, char *scratch,
                                 size_t ntiles)
{
    cudaStream_t stream = KEDR_STREAM(ctx);
    unsigned *counter = (unsigned *)scratch;
    lb_packed<unsigned long long> st = {(unsigned long long *)(scratch + 16)};
    unsigned long long *d_true = (unsigned long long *)(scratch + 16 + ntiles * 8);
    unsigned long long *d_count = d_true + 1;
    int vec_in = (uintptr_t)in % 16 == 0;
    KEDR_CUDA_TRY(cudaMemsetAsync(scratch, 0, 16 + ntiles * 8 + 16, stream));
    if (partition) {
        unsigned blocks = ntiles < SEL_COUNT_BLOCKS ? (unsigned)ntiles : SEL_COUNT_BLOCKS;
        select_count<E, P><<<blocks, SEL_THREADS, 0, stream>>>(in, p, n, vec_in, vec_flags, d_true);
        KEDR_CUDA_LAUNCHED("select_count");
        select_tiles<E, P, true><<<(unsigned)ntiles, SEL_THREADS, 0, stream>>>(
            in, p, out, n, vec_in, vec_flags, st, counter, d_true, d_count);
    } else {
        select_tiles<E, P, false><<<(unsigned)ntiles, SEL_THREADS, 0, stream>>>(
            in, p, out, n, vec_in, vec_flags, st, counter, d_true, d_count);
    }
    KEDR_CUDA_LAUNCHED("select_tiles");
    unsigned long long count = 0;
    KEDR_CUDA_TRY(cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, stream));
    KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
    *n_sel = (size_t)count;
    return KEDR_OK;
}

template <typename E, typename P>
static kedr_status select_run(kedr_ctx *ctx, const void *in, P p, int vec_flags, void *out,
                              size_t n, int partition, size_t *n_sel)
{
    const size_t tile = (size_t)SEL_THREADS * SEL_NV * (16 / sizeof(E));
    size_t ntiles = (n + tile - 1) / tile;
    if (ntiles > 0x7fffffffu)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_select: n = %zu is beyond one launch", n);
    void *scratch = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &scratch, 16 + ntiles * 8 + 16));
    kedr_status s = select_launch<E, P>(ctx, (const E *)in, p, vec_flags, (E *)out, n, partition,
                                        n_sel, (char *)scratch, ntiles);
    kedr_scratch_put(ctx, scratch);
    return s;
}

extern "C" kedr_status prim_select_flagged_cuda(kedr_ctx *ctx, size_t elem_size, const void *in,
                                                const uint8_t *flags, void *out, size_t n,
                                                int partition, size_t *n_sel)
{
    sel_flags p = {flags};
    int vf = (uintptr_t)flags % 16 == 0;
    switch (elem_size) {
    case 1: return select_run<uint8_t>(ctx, in, p, vf, out, n, partition, n_sel);
    case 2: return select_run<uint16_t>(ctx, in, p, vf, out, n, partition, n_sel);
    case 4: return select_run<uint32_t>(ctx, in, p, vf, out, n, partition, n_sel);
    case 8: return select_run<uint64_t>(ctx, in, p, vf, out, n, partition, n_sel);
    case 16: return select_run<sel_e16>(ctx, in, p, vf, out, n, partition, n_sel);
    }
    return kedr_fail(KEDR_ERR_INVALID, "kedr_select_flagged: elem_size %zu", elem_size);
}

template <typename T> static sel_cmp<T> sel_make_cmp(kedr_cmp cmp, T a, T b)
{
    static const unsigned masks[] = {1, 1 | 2, 4, 4 | 2, 2, 2, 8}; /* LT LE GT GE EQ NE IN */
    sel_cmp<T> p = {a, b, masks[cmp], cmp == KEDR_CMP_NE};
    return p;
}

extern "C" kedr_status prim_select_if_cuda(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out,
                                           size_t n, kedr_pred pred, int partition, size_t *n_sel)
{
    kedr_cmp c = pred.cmp;
    switch (t) {
    case KEDR_U32:
        return select_run<uint32_t>(ctx, in, sel_make_cmp(c, pred.a.u32, pred.b.u32), 0, out, n,
                                    partition, n_sel);
    case KEDR_U64:
        return select_run<uint64_t>(ctx, in, sel_make_cmp(c, pred.a.u64, pred.b.u64), 0, out, n,
                                    partition, n_sel);
    case KEDR_I32:
        return select_run<int32_t>(ctx, in, sel_make_cmp(c, pred.a.i32, pred.b.i32), 0, out, n,
                                   partition, n_sel);
    case KEDR_F32:
        return select_run<float>(ctx, in, sel_make_cmp(c, pred.a.f32, pred.b.f32), 0, out, n,
                                 partition, n_sel);
    case KEDR_F64:
        return select_run<double>(ctx, in, sel_make_cmp(c, pred.a.f64, pred.b.f64), 0, out, n,
                                  partition, n_sel);
    }
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_select_if: element type %d", (int)t);
}
