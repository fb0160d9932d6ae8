/* Run-length encoding and reduce by key on the GPU: the segmented reduction of bykey.c, in three
 * kernels (reduce, then scan): the state (c, v) of every tile, a scan of the tile states in one
 * block, then every tile again from its carry, writing run k where it ends. A single pass with
 * look-back would read the input once instead of twice, but the float sums would then depend on
 * timing; here the association depends on n alone, so results repeat run to run. */
#include "core/internal.h"
#include "prim/bykey_cuda.h"

#include <cuda_runtime.h>

#define BK_BLOCK 256
#define BK_ITEMS 8
#define BK_TILE (BK_BLOCK * BK_ITEMS)
#define CARRY_BLOCK 1024
#define FULL_MASK 0xFFFFFFFFu

/* c: run heads in the stretch; v: op over the values after its last head (all, when c = 0). */
template <typename A>
struct seg {
    unsigned long long c;
    A v;
};

__device__ __forceinline__ unsigned highest(unsigned) { return 0xFFFFFFFFu; }
__device__ __forceinline__ int highest(int) { return 0x7FFFFFFF; }
__device__ __forceinline__ unsigned long long highest(unsigned long long) { return ~0ull; }
__device__ __forceinline__ float highest(float) { return __int_as_float(0x7F800000); }
__device__ __forceinline__ double highest(double) { return __longlong_as_double(0x7FF0000000000000ll); }
__device__ __forceinline__ unsigned lowest(unsigned) { return 0; }
__device__ __forceinline__ int lowest(int) { return (int)0x80000000; }
__device__ __forceinline__ unsigned long long lowest(unsigned long long) { return 0; }
__device__ __forceinline__ float lowest(float) { return -highest(0.0f); }
__device__ __forceinline__ double lowest(double) { return -highest(0.0); }

/* -0.0 is the identity of float sums: x + -0.0 == x also for x = -0.0. */
template <typename A, int OP>
__device__ __forceinline__ seg<A> seg_identity()
{
    seg<A> s;
    s.c = 0;
    s.v = OP == KEDR_OP_SUM ? (A)-0.0 : OP == KEDR_OP_MIN ? highest(A()) : lowest(A());
    return s;
}

/* Ties keep the left operand, as on the cpu: the first extreme value of a run wins. */
template <typename A, int OP>
__device__ __forceinline__ A apply(A a, A b)
{
    if (OP == KEDR_OP_SUM)
        return a + b;
    if (OP == KEDR_OP_MIN)
        return b < a ? b : a;
    return a < b ? b : a;
}

template <typename A, int OP>
__device__ __forceinline__ seg<A> join(seg<A> l, seg<A> r)
{
    seg<A> s;
    s.c = l.c + r.c;
    s.v = r.c ? r.v : apply<A, OP>(l.v, r.v);
    return s;
}

/* One item: a head starts a new run, any other item extends the current one. */
template <typename A, int OP>
__device__ __forceinline__ seg<A> step(seg<A> s, bool head, A x)
{
    if (head) {
        s.c++;
        s.v = x;
    } else {
        s.v = apply<A, OP>(s.v, x);
    }
    return s;
}

template <typename A>
__device__ __forceinline__ seg<A> shfl_up(seg<A> s, int o)
{
    seg<A> r;
    r.c = __shfl_up_sync(FULL_MASK, s.c, o);
    r.v = __shfl_up_sync(FULL_MASK, s.v, o);
    return r;
}

/* Exclusive scan of the threads' states in thread order; tmp holds 32 states. */
template <typename A, int OP>
__device__ seg<A> block_exclusive(seg<A> x, seg<A> *tmp, seg<A> *total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const seg<A> id = seg_identity<A, OP>();
    seg<A> inc = x;
    for (int o = 1; o < 32; o <<= 1) {
        seg<A> y = shfl_up(inc, o);
        if (lane >= o)
            inc = join<A, OP>(y, inc);
    }
    if (lane == 31)
        tmp[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        seg<A> w = lane < nwarps ? tmp[lane] : id;
        for (int o = 1; o < 32; o <<= 1) {
            seg<A> y = shfl_up(w, o);
            if (lane >= o)
                w = join<A, OP>(y, w);
        }
        tmp[lane] = w;
    }
    __syncthreads();
    seg<A> ex = shfl_up(inc, 1);
    if (lane == 0)
        ex = id;
    seg<A> r = warp ? join<A, OP>(tmp[warp - 1], ex) : ex;
    *total = tmp[nwarps - 1];
    __syncthreads();
    return r;
}

/* A thread's items: BK_ITEMS consecutive ones, with the keys just before and after them. */
template <typename K, typename V, typename A, bool ONES>
struct items {
    K key[BK_ITEMS + 2]; /* key[r + 1] is item r's */
    A val[BK_ITEMS];
};

template <typename K, typename V, typename A, bool ONES>
__device__ __forceinline__ void load_items(items<K, V, A, ONES> &it, const K *keys, const V *vals,
                                           size_t n, size_t base)
{
#pragma unroll
    for (int r = 0; r < BK_ITEMS + 2; r++) {
        size_t i = base + r - 1; /* wraps for base 0, r 0: then i >= n */
        it.key[r] = i < n ? keys[i] : (K)0;
    }
#pragma unroll
    for (int r = 0; r < BK_ITEMS; r++) {
        size_t i = base + r;
        it.val[r] = i < n ? (ONES ? (A)1 : (A)vals[i]) : (A)0;
    }
}

template <typename K, typename V, typename A, int OP, bool ONES>
__device__ __forceinline__ seg<A> thread_state(const items<K, V, A, ONES> &it, size_t n,
                                               size_t base)
{
    seg<A> s = seg_identity<A, OP>();
#pragma unroll
    for (int r = 0; r < BK_ITEMS; r++)
        if (base + r < n)
            s = step<A, OP>(s, base + r == 0 || it.key[r + 1] != it.key[r], it.val[r]);
    return s;
}

template <typename K, typename V, typename A, int OP, bool ONES>
__global__ void __launch_bounds__(BK_BLOCK)
    prim_bykey_tiles(const K *keys, const V *vals, size_t n, unsigned long long *tile_c,
                     A *tile_v)
{
    __shared__ seg<A> tmp[32];
    size_t base = (size_t)blockIdx.x * BK_TILE + (size_t)threadIdx.x * BK_ITEMS;
    items<K, V, A, ONES> it;
    load_items(it, keys, vals, n, base);
    seg<A> total;
    block_exclusive<A, OP>(thread_state<K, V, A, OP, ONES>(it, n, base), tmp, &total);
    if (threadIdx.x == 0) {
        tile_c[blockIdx.x] = total.c;
        tile_v[blockIdx.x] = total.v;
    }
}

/* One block: tile states -> the state of everything before each tile, in place; the number of
 * runs in *runs. */
template <typename A, int OP>
__global__ void __launch_bounds__(CARRY_BLOCK)
    prim_bykey_carry(unsigned long long *tile_c, A *tile_v, size_t ntiles,
                     unsigned long long *runs)
{
    __shared__ seg<A> tmp[32];
    size_t per = (ntiles + CARRY_BLOCK - 1) / CARRY_BLOCK;
    size_t lo = threadIdx.x * per, hi = lo + per < ntiles ? lo + per : ntiles;
    seg<A> s = seg_identity<A, OP>(), total;
    for (size_t t = lo; t < hi; t++)
        s = join<A, OP>(s, seg<A>{tile_c[t], tile_v[t]});
    seg<A> run = block_exclusive<A, OP>(s, tmp, &total);
    for (size_t t = lo; t < hi; t++) {
        seg<A> own = {tile_c[t], tile_v[t]};
        tile_c[t] = run.c;
        tile_v[t] = run.v;
        run = join<A, OP>(run, own);
    }
    if (threadIdx.x == 0)
        *runs = total.c;
}

template <typename K, typename V, typename A, int OP, bool ONES>
__global__ void __launch_bounds__(BK_BLOCK)
    prim_bykey_write(const K *keys, const V *vals, size_t n, const unsigned long long *carry_c,
                     const A *carry_v, K *keys_out, V *vals_out)
{
    __shared__ seg<A> tmp[32];
    size_t base = (size_t)blockIdx.x * BK_TILE + (size_t)threadIdx.x * BK_ITEMS;
    items<K, V, A, ONES> it;
    load_items(it, keys, vals, n, base);
    seg<A> total;
    seg<A> before = block_exclusive<A, OP>(thread_state<K, V, A, OP, ONES>(it, n, base), tmp,
                                           &total);
    seg<A> s = join<A, OP>(seg<A>{carry_c[blockIdx.x], carry_v[blockIdx.x]}, before);
#pragma unroll
    for (int r = 0; r < BK_ITEMS; r++) {
        size_t i = base + r;
        if (i < n) {
            s = step<A, OP>(s, i == 0 || it.key[r + 1] != it.key[r], it.val[r]);
            if (i + 1 == n || it.key[r + 2] != it.key[r + 1]) {
                keys_out[s.c - 1] = it.key[r + 1];
                vals_out[s.c - 1] = (V)s.v;
            }
        }
    }
}

template <typename K, typename V, typename A, int OP, bool ONES>
static kedr_status run_bykey(kedr_ctx *ctx, const void *keys, const void *vals, size_t n,
                             void *keys_out, void *vals_out, size_t *n_runs)
{
    cudaStream_t stream = KEDR_STREAM(ctx);
    size_t ntiles = (n + BK_TILE - 1) / BK_TILE;
    void *tmp = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &tmp, (2 * ntiles + 1) * sizeof(unsigned long long)));
    unsigned long long *tile_c = (unsigned long long *)tmp, *runs = tile_c + ntiles;
    A *tile_v = (A *)(runs + 1);
    kedr_status s = [&]() -> kedr_status {
        prim_bykey_tiles<K, V, A, OP, ONES><<<(unsigned)ntiles, BK_BLOCK, 0, stream>>>(
            (const K *)keys, (const V *)vals, n, tile_c, tile_v);
        KEDR_CUDA_LAUNCHED("prim_bykey_tiles");
        prim_bykey_carry<A, OP><<<1, CARRY_BLOCK, 0, stream>>>(tile_c, tile_v, ntiles, runs);
        KEDR_CUDA_LAUNCHED("prim_bykey_carry");
        prim_bykey_write<K, V, A, OP, ONES><<<(unsigned)ntiles, BK_BLOCK, 0, stream>>>(
            (const K *)keys, (const V *)vals, n, tile_c, tile_v, (K *)keys_out, (V *)vals_out);
        KEDR_CUDA_LAUNCHED("prim_bykey_write");
        unsigned long long r = 0;
        KEDR_CUDA_TRY(cudaMemcpyAsync(&r, runs, sizeof r, cudaMemcpyDeviceToHost, stream));
        KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
        *n_runs = (size_t)r;
        return KEDR_OK;
    }();
    kedr_scratch_put(ctx, tmp);
    return s;
}

/* Sums accumulate in SUMA (u32 for i32, so they wrap; double for floats); min and max in V. */
template <typename K, typename V, typename SUMA>
static kedr_status by_op(kedr_ctx *ctx, kedr_op op, const void *k, const void *v, size_t n,
                         void *ko, void *vo, size_t *n_runs)
{
    switch (op) {
    case KEDR_OP_SUM: return run_bykey<K, V, SUMA, KEDR_OP_SUM, false>(ctx, k, v, n, ko, vo, n_runs);
    case KEDR_OP_MIN: return run_bykey<K, V, V, KEDR_OP_MIN, false>(ctx, k, v, n, ko, vo, n_runs);
    case KEDR_OP_MAX: return run_bykey<K, V, V, KEDR_OP_MAX, false>(ctx, k, v, n, ko, vo, n_runs);
    }
    return kedr_fail(KEDR_ERR_INVALID, "reduce by key: op %d", (int)op);
}

template <typename K>
static kedr_status by_value(kedr_ctx *ctx, kedr_dtype val_t, kedr_op op, const void *k,
                            const void *v, size_t n, void *ko, void *vo, size_t *n_runs, int rle)
{
    if (rle)
        return run_bykey<K, unsigned, unsigned long long, KEDR_OP_SUM, true>(ctx, k, NULL, n, ko,
                                                                             vo, n_runs);
    switch (val_t) {
    case KEDR_U32: return by_op<K, unsigned, unsigned>(ctx, op, k, v, n, ko, vo, n_runs);
    case KEDR_U64:
        return by_op<K, unsigned long long, unsigned long long>(ctx, op, k, v, n, ko, vo, n_runs);
    case KEDR_I32: return by_op<K, int, unsigned>(ctx, op, k, v, n, ko, vo, n_runs);
    case KEDR_F32: return by_op<K, float, double>(ctx, op, k, v, n, ko, vo, n_runs);
    case KEDR_F64: return by_op<K, double, double>(ctx, op, k, v, n, ko, vo, n_runs);
    }
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "reduce by key: value type %d", (int)val_t);
}

extern "C" kedr_status prim_bykey_cuda(kedr_ctx *ctx, int key64, const void *keys_in,
                                       kedr_dtype val_t, const void *vals_in, size_t n,
                                       kedr_op op, void *keys_out, void *vals_out,
                                       size_t *n_runs, int rle)
{
    if (key64)
        return by_value<unsigned long long>(ctx, val_t, op, keys_in, vals_in, n, keys_out,
                                            vals_out, n_runs, rle);
    return by_value<unsigned>(ctx, val_t, op, keys_in, vals_in, n, keys_out, vals_out, n_runs,
                              rle);
}
