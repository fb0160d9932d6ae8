/* Run-length encoding and reduce by key on the GPU: the segmented reduction of bykey.c.
 *
 * Sums with exact (integer, wrapping) accumulators and rle take one pass by run tails
 * (bykey_tails, below): a run's sum is the difference of the prefix sums at its tail and at the
 * tail before it, so a tile needs only its tails' ranks and the prefix sums there, with (tails,
 * sum after the last tail) before the tile by decoupled look-back (lookback_cuda.h).
 *
 * Min and max take the general segmented reduction. The state (c, v) of a stretch of items is its
 * number of run heads and the op over the values after its last head; states join
 * associatively, so each tile learns the state of everything before it and then writes every run
 * that ends in the tile at index c - 1. Integer min and max take one pass with the state before a
 * tile by look-back. Float accumulators would then be associated in an order that depends on
 * timing, so they (float sums too) take three kernels instead: the state of every tile, a scan
 * of the tile states in one block, then every tile again from its carry; the association depends
 * on n alone, and results repeat run to run. A tile of these is BK_BLOCK threads x 64 bytes of
 * keys each (BK_ITEMS consecutive items per thread, loaded as 16-byte vectors); the keys just
 * before and after a thread's items come from its neighbours by shuffles. */
#include "core/internal.h"
#include "prim/bykey_cuda.h"
#include "prim/lookback_cuda.h"
#include "prim/tile_cuda.h"

#include <cuda_runtime.h>
#include <stdint.h>

#define BK_BLOCK 256
#define BK_MIN_BLOCKS 4 /* resident blocks of the write kernel: caps it at 64 registers */
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

/* Items per thread: 64 bytes of keys. */
#define BK_ITEMS(K) (64 / (int)sizeof(K))

/* Whether A's op is exact (associative), so the look-back may associate it in any order. */
template <typename A> struct bk_exact { enum { value = 1 }; };
template <> struct bk_exact<float> { enum { value = 0 }; };
template <> struct bk_exact<double> { enum { value = 0 }; };

/* The join of states as a look-back operation. */
template <typename A, int OP> struct bk_join {
    __device__ __forceinline__ seg<A> identity() const { return seg_identity<A, OP>(); }
    __device__ __forceinline__ seg<A> operator()(seg<A> l, seg<A> r) const
    {
        return join<A, OP>(l, r);
    }
    __device__ __forceinline__ seg<A> shfl_down(seg<A> s, int d) const
    {
        seg<A> r;
        r.c = __shfl_down_sync(FULL_MASK, s.c, d);
        r.v = __shfl_down_sync(FULL_MASK, s.v, d);
        return r;
    }
};

/* Tile states for the look-back, one 16-byte word per tile: (c << 2 | flag, v's bits), written and
 * read with single 16-byte volatile accesses so that a reader sees a flag and its state together
 * without fences, as CUB's reduce-by-key tile states do. For exact (integer) A of up to 8 bytes. */
template <typename A> struct bk_status {
    ulonglong2 *word;

    __device__ __forceinline__ void publish(size_t t, unsigned f, seg<A> s) const
    {
        unsigned long long lo = s.c << 2 | f, hi = (unsigned long long)s.v;
        asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(word + t), "l"(lo), "l"(hi)
                     : "memory");
    }
    __device__ __forceinline__ unsigned peek(size_t t, seg<A> *s) const
    {
        unsigned long long lo, hi;
        asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(lo), "=l"(hi) : "l"(word + t)
                     : "memory");
        s->c = lo >> 2;
        s->v = (A)hi;
        return (unsigned)(lo & 3);
    }
    __device__ __forceinline__ seg<A> value(size_t, unsigned, seg<A> s) const { return s; }
};

/* A thread's items: N consecutive ones, with the keys just before and after them. */
template <typename K, typename A, int N>
struct items {
    K key[N + 2]; /* key[r + 1] is item r's */
    A val[N];
};

/* Loads the items from base; full: the whole tile is in range. Called by whole warps. */
template <typename K, typename V, typename A, int N>
__device__ __forceinline__ void load_items(items<K, A, N> &it, const K *keys, const V *vals,
                                           size_t n, size_t base, bool full, int vec_k, int vec_v)
{
    int lane = threadIdx.x & 31;
    tile_load_blocked<N, true>(it.key + 1, keys, base, n, full && vec_k, (K)0);
    tile_load_blocked<N, true>(it.val, vals, base, n, full && vec_v, (A)0);
    K prev = __shfl_up_sync(FULL_MASK, it.key[N], 1);
    K next = __shfl_down_sync(FULL_MASK, it.key[1], 1);
    if (lane == 0)
        prev = base > 0 && base - 1 < n ? keys[base - 1] : (K)0;
    if (lane == 31)
        next = base + N < n ? keys[base + N] : (K)0;
    it.key[0] = prev;
    it.key[N + 1] = next;
}

template <typename K, typename A, int OP, int N>
__device__ __forceinline__ seg<A> thread_state(const items<K, A, N> &it, size_t n, size_t base)
{
    seg<A> s = seg_identity<A, OP>();
#pragma unroll
    for (int r = 0; r < N; r++)
        if (base + r < n)
            s = step<A, OP>(s, base + r == 0 || it.key[r + 1] != it.key[r], it.val[r]);
    return s;
}

/* The three-kernel path, first kernel: the state of every tile. */
template <typename K, typename V, typename A, int OP>
__global__ void __launch_bounds__(BK_BLOCK)
    prim_bykey_tiles(const K *keys, const V *vals, size_t n, int vec_k, int vec_v,
                     unsigned long long *tile_c, A *tile_v)
{
    const int N = BK_ITEMS(K);
    __shared__ seg<A> tmp[32];
    size_t tile_base = (size_t)blockIdx.x * BK_BLOCK * N;
    size_t base = tile_base + (size_t)threadIdx.x * N;
    items<K, A, N> it;
    load_items<K, V, A>(it, keys, vals, n, base, tile_base + BK_BLOCK * N <= n, vec_k,
                              vec_v);
    seg<A> total;
    block_exclusive<A, OP>(thread_state<K, A, OP>(it, n, base), tmp, &total);
    if (threadIdx.x == 0) {
        tile_c[blockIdx.x] = total.c;
        tile_v[blockIdx.x] = total.v;
    }
}

/* The three-kernel path, second kernel, one block: tile states -> the state of everything before
 * each tile, in place; the number of runs in *runs. */
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

/* Writes the runs that end in a tile. LOOKBACK: the single pass (tiles in the order of an atomic
 * counter, the state before the tile by look-back, *runs from the last tile); else the third
 * kernel of the three, the state before the tile from carry_c and carry_v. */
template <typename K, typename V, typename A, int OP, bool LOOKBACK>
__global__ void __launch_bounds__(BK_BLOCK, BK_MIN_BLOCKS)
    prim_bykey_write(const K *keys, const V *vals, size_t n, int vec_k, int vec_v,
                     bk_status<A> st, unsigned *tile_counter, unsigned long long *runs,
                     const unsigned long long *carry_c, const A *carry_v, K *keys_out,
                     V *vals_out)
{
    const int N = BK_ITEMS(K), TILE_ITEMS = BK_BLOCK * N;
    /* The runs that end in the tile are gathered in shared memory and written out with
     * coalesced stores, when their keys and values fit in 32 KB (all pairs of types but 4-byte
     * keys with 8-byte values, which are written where they are found). */
    constexpr bool STAGE = (sizeof(K) + sizeof(V)) * TILE_ITEMS <= 32768;
    __shared__ __align__(16) unsigned char stage[STAGE ? (sizeof(K) + sizeof(V)) * TILE_ITEMS : 16];
    __shared__ seg<A> tmp[32];
    __shared__ seg<A> s_carry;
    __shared__ unsigned s_tile, s_written, s_head0;
    size_t tile = blockIdx.x;
    if (LOOKBACK) {
        if (threadIdx.x == 0)
            s_tile = atomicAdd(tile_counter, 1u);
        __syncthreads();
        tile = s_tile;
    }
    size_t tile_base = tile * BK_BLOCK * N, base = tile_base + (size_t)threadIdx.x * N;
    items<K, A, N> it;
    load_items<K, V, A>(it, keys, vals, n, base, tile_base + BK_BLOCK * N <= n, vec_k,
                              vec_v);
    if (threadIdx.x == 0) { /* ordered before their use by block_exclusive's barriers */
        s_written = 0;
        s_head0 = tile_base == 0 || it.key[1] != it.key[0];
    }
    seg<A> total;
    seg<A> before = block_exclusive<A, OP>(thread_state<K, A, OP>(it, n, base), tmp, &total);
    seg<A> carry;
    if (LOOKBACK) {
        if (threadIdx.x < 32) {
            carry = seg_identity<A, OP>();
            if (tile == 0) {
                if (threadIdx.x == 0)
                    st.publish(0, LB_INCL, total);
            } else {
                if (threadIdx.x == 0)
                    st.publish(tile, LB_AGG, total);
                carry = lb_exclusive_prefix<seg<A> >(st, tile, bk_join<A, OP>());
                if (threadIdx.x == 0)
                    st.publish(tile, LB_INCL, join<A, OP>(carry, total));
            }
            if (threadIdx.x == 0) {
                s_carry = carry;
                if (tile == gridDim.x - 1)
                    *runs = carry.c + total.c;
            }
        }
        __syncthreads();
        carry = s_carry;
    } else {
        carry.c = carry_c[tile];
        carry.v = carry_v[tile];
    }
    seg<A> s = join<A, OP>(carry, before);
    /* Run s.c - 1 ends at item i; the tile's first item is in run first_run. */
    unsigned long long first_run = carry.c - 1 + s_head0;
    K *stage_k = (K *)stage;
    V *stage_v = (V *)(stage + (STAGE ? sizeof(K) * TILE_ITEMS : 0));
    unsigned written = 0;
#pragma unroll
    for (int r = 0; r < N; r++) {
        size_t i = base + r;
        if (i < n) {
            s = step<A, OP>(s, i == 0 || it.key[r + 1] != it.key[r], it.val[r]);
            if (i + 1 == n || it.key[r + 2] != it.key[r + 1]) {
                if (STAGE) {
                    unsigned local = (unsigned)(s.c - 1 - first_run);
                    stage_k[local] = it.key[r + 1];
                    stage_v[local] = (V)s.v;
                    written = local + 1;
                } else {
                    keys_out[s.c - 1] = it.key[r + 1];
                    vals_out[s.c - 1] = (V)s.v;
                }
            }
        }
    }
    if (STAGE) {
        /* the runs that end in the tile are first_run, first_run + 1, ...: consecutive */
        if (written)
            atomicMax(&s_written, written);
        __syncthreads();
        unsigned count = s_written;
        for (unsigned k = threadIdx.x; k < count; k += BK_BLOCK) {
            keys_out[first_run + k] = stage_k[k];
            vals_out[first_run + k] = stage_v[k];
        }
    }
}

/* The single pass for sums with exact (integer, wrapping) accumulators and for rle, by run tails:
 * item i ends a run when it is the last item or key[i + 1] != key[i], and run r is the r-th tail.
 * With S the prefix sum of the values up to and including an item, run r sums to S(tail r) -
 * S(tail r - 1), so a tile needs only its tails' ranks (as select) and the prefix sums there; the
 * state carried between tiles by look-back is (tails, sum after the last tail), which gives the
 * part of the tile's first run that lies before the tile. rle sums ones: S is the position.
 *
 * A tile is laid out as select's (select.cu): lane l of group j of a warp holds the VEC = 16 /
 * sizeof(K) consecutive keys of one coalesced load, and a thread issues all its loads before it
 * tests any item. Ranks come from one warp scan of the groups' tail counts packed in a word. The
 * tails' keys and tile-local prefix sums are gathered in shared memory (32 KB at most) before the
 * look-back, so that no item is held in registers while it waits; after it, they leave as
 * 16-byte stores aligned in the outputs, the sums as differences of neighbours. */

/* Tile shape: BK_BLOCK threads x NV groups of VEC keys; NV = 4, fewer when the staged keys and
 * sums would pass 32 KB (4-byte keys with 8-byte sums). */
template <typename K, typename A> struct bt_shape {
    enum {
        VEC = 16 / (int)sizeof(K),
        NV_FIT = 32768 / (BK_BLOCK * VEC * (int)(sizeof(K) + sizeof(A))),
        NV = NV_FIT < 4 ? NV_FIT : 4,
        GROUP = 32 * VEC,
        WARP_ITEMS = NV * GROUP,
        TILE = (BK_BLOCK / 32) * WARP_ITEMS
    };
};

/* Resident blocks asked of the compiler (H100, 2^28 u32; bench/notes-prim.md): rle 6, which
 * gives 40 registers (at 46 and 55 registers, 5 and 4 blocks, it was 1.5% and 14% slower); sums
 * 4, 64 registers for the 32 keys and values a thread loads (capped for 6 blocks they spilled
 * and were 78% slower; uncapped, 82 registers and 3 blocks, 46% slower). */
#define BT_MIN_BLOCKS(ONES) ((ONES) ? 6 : 4)

/* dst[r] = s[r] - s[r - 1] for r < cnt (s[-1] included), in 16-byte chunks aligned in dst as
 * tile_store_run writes them. */
template <typename V, typename A>
__device__ __forceinline__ void bt_write_diffs(V *dst, const A *s, unsigned cnt)
{
    const int VA = 16 / (int)sizeof(A);
    int shift = (int)tile_shift(dst), chunks = (shift + (int)cnt + VA - 1) / VA;
    for (int c = threadIdx.x; c < chunks; c += BK_BLOCK) {
        int first = c * VA - shift;
        if (first >= 0 && first + VA <= (int)cnt) {
            union { uint4 raw; A e[VA]; } out;
            A prev = s[first - 1];
#pragma unroll
            for (int e = 0; e < VA; e++) {
                A cur = s[first + e];
                out.e[e] = cur - prev;
                prev = cur;
            }
            *(uint4 *)(dst + first) = out.raw;
        } else {
#pragma unroll
            for (int e = 0; e < VA; e++)
                if (first + e >= 0 && first + e < (int)cnt)
                    dst[first + e] = (V)(s[first + e] - s[first + e - 1]);
        }
    }
}

/* ONES: rle (vals unused; sums of ones). A: the sum's type, as wide as V. */
template <typename K, typename V, typename A, bool ONES>
__global__ void __launch_bounds__(BK_BLOCK, BT_MIN_BLOCKS(ONES))
    bykey_tails(const K *__restrict__ keys, const V *__restrict__ vals, size_t n, int vec_k,
                int vec_v, bk_status<A> st, unsigned *tile_counter, unsigned long long *runs,
                K *__restrict__ keys_out, V *__restrict__ vals_out)
{
    typedef bt_shape<K, A> shape;
    const int VEC = shape::VEC, NV = shape::NV, GROUP = shape::GROUP;
    const int WARP_ITEMS = shape::WARP_ITEMS, TILE = shape::TILE, WARPS = BK_BLOCK / 32;
    const int VA = 16 / (int)sizeof(A);
    /* the tails' keys; their prefix sums from s_sum[VA], with s_sum[VA - 1] for the one before */
    __shared__ K s_key[TILE];
    __shared__ A s_sum[TILE + VA];
    __shared__ unsigned s_tile, s_cnt[WARPS];
    __shared__ A s_wsum[WARPS], s_wafter[WARPS];
    __shared__ unsigned long long s_prefix;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    if (threadIdx.x == 0)
        s_tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    const size_t tile = s_tile;
    const size_t wbase = tile * TILE + (size_t)warp * WARP_ITEMS, wend = wbase + WARP_ITEMS;
    const size_t base = wbase + (size_t)lane * VEC;
    const bool full = wend <= n; /* the warp's items are all in range */

    K x[NV * VEC];
    A v[NV * VEC];
    tile_load_wvec<NV, VEC, true>(x, keys, base, n, full && vec_k, K());
    if (!ONES)
        tile_load_wvec<NV, VEC, true>(v, vals, base, n, full && vec_v, (A)0);
    K after = K(); /* the key after the warp's items, for lane 31 */
    if (lane == 31 && wend < n)
        after = keys[wend];

    /* Tails. The key after lane l's group j is lane l + 1's first of group j; lane 31's is lane
     * 0's first of group j + 1, which the same rotation brings to lane 31 as rot[j + 1]. */
    K rot[NV];
#pragma unroll
    for (int j = 0; j < NV; j++)
        rot[j] = __shfl_sync(FULL_MASK, x[j * VEC], (lane + 1) & 31);
    unsigned bits[NV];
#pragma unroll
    for (int j = 0; j < NV; j++) {
        K next = lane < 31 ? rot[j] : j + 1 < NV ? rot[j + 1 < NV ? j + 1 : j] : after;
        unsigned b = 0;
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            K nk = k + 1 < VEC ? x[j * VEC + (k + 1 < VEC ? k + 1 : k)] : next;
            if (full) {
                b |= (unsigned)(x[j * VEC + k] != nk) << k;
            } else {
                size_t i = base + (size_t)j * GROUP + k;
                b |= (unsigned)(i < n && (i + 1 == n || x[j * VEC + k] != nk)) << k;
            }
        }
        bits[j] = b;
    }
    if (full && lane == 31 && wend == n)
        bits[NV - 1] |= 1u << (VEC - 1);

    /* Ranks in the warp: one scan of the groups' tail counts packed 8 bits each (a group has at
     * most 32 * VEC <= 128 tails). */
    unsigned start[NV], wsel = 0;
    {
        unsigned c = 0;
#pragma unroll
        for (int j = 0; j < NV; j++)
            c |= (unsigned)__popc(bits[j]) << (8 * j);
        unsigned incl = c;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            unsigned o = __shfl_up_sync(FULL_MASK, incl, d);
            if (lane >= d)
                incl += o;
        }
        unsigned total = __shfl_sync(FULL_MASK, incl, 31), excl = incl - c;
#pragma unroll
        for (int j = 0; j < NV; j++) {
            start[j] = wsel + (excl >> (8 * j) & 255u);
            wsel += total >> (8 * j) & 255u;
        }
    }

    /* Prefix sums in the warp: item (j, k) has S = pre[j] + v[j * VEC + k] once v holds the
     * lane's inclusive sums (rle: pre[j] + k + 1, the position in the warp + 1). */
    A pre[NV], wtot = 0;
    if (ONES) {
#pragma unroll
        for (int j = 0; j < NV; j++)
            pre[j] = (A)(j * GROUP + lane * VEC);
        wtot = (A)(full ? WARP_ITEMS : wbase < n ? n - wbase : 0);
    } else {
        A sc[NV], own[NV];
#pragma unroll
        for (int j = 0; j < NV; j++) {
#pragma unroll
            for (int k = 1; k < VEC; k++)
                v[j * VEC + k] += v[j * VEC + k - 1];
            sc[j] = own[j] = v[j * VEC + VEC - 1];
        }
#pragma unroll
        for (int d = 1; d < 32; d <<= 1)
#pragma unroll
            for (int j = 0; j < NV; j++) {
                A o = __shfl_up_sync(FULL_MASK, sc[j], d);
                if (lane >= d)
                    sc[j] += o;
            }
#pragma unroll
        for (int j = 0; j < NV; j++) {
            pre[j] = wtot + sc[j] - own[j];
            wtot += __shfl_sync(FULL_MASK, sc[j], 31);
        }
    }

    /* The warp's state: its tails, and the sum after its last tail (its lane from the position). */
    unsigned mylast = 0;
    A mylast_s = 0;
#pragma unroll
    for (int j = 0; j < NV; j++)
#pragma unroll
        for (int k = 0; k < VEC; k++)
            if (bits[j] >> k & 1) {
                mylast = (unsigned)(j * GROUP + lane * VEC + k + 1);
                mylast_s = ONES ? (A)mylast : pre[j] + v[j * VEC + k];
            }
    unsigned wlast = __reduce_max_sync(FULL_MASK, mylast);
    A wafter = wtot;
    if (wlast)
        wafter = wtot - __shfl_sync(FULL_MASK, mylast_s, (int)((wlast - 1) % GROUP) / VEC);
    if (lane == 0) {
        s_cnt[warp] = wsel;
        s_wsum[warp] = wtot;
        s_wafter[warp] = wafter;
    }
    __syncthreads();

    unsigned wofs = 0, tile_sel = 0;
    A wsum_before = ONES ? (A)(warp * WARP_ITEMS) : (A)0;
#pragma unroll
    for (int w = 0; w < WARPS; w++) {
        unsigned c = s_cnt[w];
        wofs += w < warp ? c : 0;
        tile_sel += c;
        if (!ONES)
            wsum_before += w < warp ? s_wsum[w] : (A)0;
    }
#pragma unroll
    for (int j = 0; j < NV; j++) {
        unsigned r = wofs + start[j];
        A off = wsum_before + pre[j];
#pragma unroll
        for (int k = 0; k < VEC; k++)
            if (bits[j] >> k & 1) {
                s_key[r] = x[j * VEC + k];
                s_sum[VA + r] = off + (ONES ? (A)(k + 1) : v[j * VEC + k]);
                r++;
            }
    }
    if (warp == 0) {
        seg<A> total, carry = seg_identity<A, KEDR_OP_SUM>();
        total.c = tile_sel;
        total.v = 0;
#pragma unroll
        for (int w = 0; w < WARPS; w++)
            total.v = s_cnt[w] ? s_wafter[w] : total.v + s_wafter[w];
        if (tile == 0) {
            if (lane == 0)
                st.publish(0, LB_INCL, total);
        } else {
            if (lane == 0)
                st.publish(tile, LB_AGG, total);
            carry = lb_exclusive_prefix<seg<A> >(st, tile, bk_join<A, KEDR_OP_SUM>());
            if (lane == 0)
                st.publish(tile, LB_INCL, join<A, KEDR_OP_SUM>(carry, total));
        }
        if (lane == 0) {
            s_prefix = carry.c;
            s_sum[VA - 1] = (A)0 - carry.v; /* S before the tile's first run, tile-local */
            if (tile == gridDim.x - 1)
                *runs = carry.c + total.c;
        }
    }
    __syncthreads();
    const unsigned long long prefix = s_prefix;
    tile_store_run<BK_BLOCK, false>(keys_out + prefix, s_key, tile_sel);
    bt_write_diffs(vals_out + prefix, s_sum + VA, tile_sel);
}

/* Waits for the kernels and brings the number of runs they wrote to *runs to the host. */
static kedr_status fetch_runs(const unsigned long long *runs, cudaStream_t stream,
                              size_t *n_runs)
{
    unsigned long long r = 0;
    KEDR_CUDA_TRY(cudaMemcpyAsync(&r, runs, sizeof r, cudaMemcpyDeviceToHost, stream));
    KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
    *n_runs = (size_t)r;
    return KEDR_OK;
}

/* Scratch: [runs, 8 bytes][tile counter, 8 bytes][the look-back's state word per tile]. */
template <typename K, typename V, typename A, bool ONES>
static kedr_status run_tails(kedr_ctx *ctx, const void *keys, const void *vals, size_t n,
                             void *keys_out, void *vals_out, size_t *n_runs)
{
    cudaStream_t stream = KEDR_STREAM(ctx);
    size_t tile = (size_t)bt_shape<K, A>::TILE, ntiles = (n + tile - 1) / tile;
    if (ntiles > 0x7fffffffu)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "reduce by key: n = %zu is beyond one launch", n);
    int vec_k = (uintptr_t)keys % 16 == 0, vec_v = (uintptr_t)vals % 16 == 0;
    void *tmp = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &tmp, 16 + ntiles * 16));
    unsigned long long *runs = (unsigned long long *)tmp;
    bk_status<A> st = {(ulonglong2 *)(runs + 2)};
    kedr_status s = [&]() -> kedr_status {
        KEDR_CUDA_TRY(cudaMemsetAsync(tmp, 0, 16 + ntiles * 16, stream));
        bykey_tails<K, V, A, ONES><<<(unsigned)ntiles, BK_BLOCK, 0, stream>>>(
            (const K *)keys, (const V *)vals, n, vec_k, vec_v, st, (unsigned *)(runs + 1), runs,
            (K *)keys_out, (V *)vals_out);
        KEDR_CUDA_LAUNCHED("bykey_tails");
        return fetch_runs(runs, stream, n_runs);
    }();
    kedr_scratch_put(ctx, tmp);
    return s;
}

/* Min and max, and float sums (see the top of the file). */
template <typename K, typename V, typename A, int OP>
static kedr_status run_bykey(kedr_ctx *ctx, const void *keys, const void *vals, size_t n,
                             void *keys_out, void *vals_out, size_t *n_runs)
{
    const bool lookback = bk_exact<A>::value;
    cudaStream_t stream = KEDR_STREAM(ctx);
    size_t tile = (size_t)BK_BLOCK * BK_ITEMS(K), ntiles = (n + tile - 1) / tile;
    if (ntiles > 0x7fffffffu)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "reduce by key: n = %zu is beyond one launch", n);
    int vec_k = (uintptr_t)keys % 16 == 0, vec_v = (uintptr_t)vals % 16 == 0;
    /* Scratch: [runs, 8 bytes][tile counter, 8 bytes][then per tile: the look-back's state word,
     * or the three kernels' c and v]. */
    void *tmp = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &tmp, 16 + ntiles * 16));
    unsigned long long *runs = (unsigned long long *)tmp, *tile_c = runs + 2;
    unsigned *counter = (unsigned *)(runs + 1);
    A *tile_v = (A *)(tile_c + ntiles);
    bk_status<A> st = {(ulonglong2 *)tile_c};
    kedr_status s = [&]() -> kedr_status {
        if constexpr (lookback) {
            KEDR_CUDA_TRY(cudaMemsetAsync(tmp, 0, 16 + ntiles * 16, stream));
            prim_bykey_write<K, V, A, OP, true><<<(unsigned)ntiles, BK_BLOCK, 0, stream>>>(
                (const K *)keys, (const V *)vals, n, vec_k, vec_v, st, counter, runs, NULL,
                NULL, (K *)keys_out, (V *)vals_out);
            KEDR_CUDA_LAUNCHED("prim_bykey_write");
        } else {
            prim_bykey_tiles<K, V, A, OP><<<(unsigned)ntiles, BK_BLOCK, 0, stream>>>(
                (const K *)keys, (const V *)vals, n, vec_k, vec_v, tile_c, tile_v);
            KEDR_CUDA_LAUNCHED("prim_bykey_tiles");
            prim_bykey_carry<A, OP><<<1, CARRY_BLOCK, 0, stream>>>(tile_c, tile_v, ntiles, runs);
            KEDR_CUDA_LAUNCHED("prim_bykey_carry");
            prim_bykey_write<K, V, A, OP, false><<<(unsigned)ntiles, BK_BLOCK, 0, stream>>>(
                (const K *)keys, (const V *)vals, n, vec_k, vec_v, st, counter, runs, tile_c,
                tile_v, (K *)keys_out, (V *)vals_out);
            KEDR_CUDA_LAUNCHED("prim_bykey_write");
        }
        return fetch_runs(runs, stream, n_runs);
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
    case KEDR_OP_SUM:
        if constexpr (bk_exact<SUMA>::value)
            return run_tails<K, V, SUMA, false>(ctx, k, v, n, ko, vo, n_runs);
        else
            return run_bykey<K, V, SUMA, KEDR_OP_SUM>(ctx, k, v, n, ko, vo, n_runs);
    case KEDR_OP_MIN: return run_bykey<K, V, V, KEDR_OP_MIN>(ctx, k, v, n, ko, vo, n_runs);
    case KEDR_OP_MAX: return run_bykey<K, V, V, KEDR_OP_MAX>(ctx, k, v, n, ko, vo, n_runs);
    }
    return kedr_fail(KEDR_ERR_INVALID, "reduce by key: op %d", (int)op);
}

template <typename K>
static kedr_status by_value(kedr_ctx *ctx, kedr_dtype val_t, kedr_op op, const void *k,
                            const void *v, size_t n, void *ko, void *vo, size_t *n_runs, int rle)
{
    if (rle) /* lengths are written modulo 2^32, so they may as well be counted so */
        return run_tails<K, unsigned, unsigned, true>(ctx, k, NULL, n, ko, vo, n_runs);
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
