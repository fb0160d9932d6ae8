/* Stable compaction and partition on the GPU.
 *
 * A tile is SEL_THREADS threads x SEL_NV 16-byte vectors of elements, laid out as in scan.cu
 * (lane l of group j holds the VEC consecutive elements of one coalesced load). A thread issues
 * all its loads before it tests any element, so a tile's loads are in flight together. One warp
 * scan of the thread's per-group counts, packed into one word, ranks the selected elements. The
 * tile's elements are gathered in order in shared memory, placed so that the output's 16-byte
 * boundaries fall on shared memory's, and written out in aligned 16-byte chunks.
 *
 * select: one pass; the count before a tile comes by decoupled look-back (lookback_cuda.h).
 *
 * partition: a rejected element goes to n_true + (its index - selected before it), so n_true is
 * needed before any tile writes. A counting pass (for flags it reads only the flag bytes) counts
 * the selected elements of ranges of consecutive tiles, a block a range; besides each range's
 * total it keeps, for every tile, each warp's count from that tile to the end of its range, so
 * the number selected before any tile is known. The main pass then hands out tiles one at a
 * time (an atomic ticket, taken a tile ahead), so SMs that run faster take more of them and all
 * finish together; no tile waits for another. The bytes moved are the main pass's read and
 * write of every element plus the counting pass's read. */
#include "core/internal.h"
#include "prim/lookback_cuda.h"
#include "prim/select_cuda.h"
#include "prim/tile_cuda.h"

#include <math.h>
#include <stdint.h>

#define SEL_THREADS 256
#define SEL_WARPS (SEL_THREADS / 32)
#define SEL_NV 4 /* 16-byte vectors per thread */
#define SEL_STAGE (SEL_THREADS * SEL_NV + 3) /* staging in 16-byte units: a tile, 3 for shifts */
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

/* Integer predicates as one interval test: every comparison selects an interval of the type's
 * order or its complement, and x lies in [lo, lo + span] exactly when (x - lo) mod 2^bits <=
 * span. Signed values take the same test on their bits (lo as the bits of the signed bound). */
template <typename U> struct sel_int {
    U lo, span;
    unsigned negate;
    enum { uses_elems = 1 };

    template <int VEC, typename E>
    __device__ __forceinline__ unsigned bits(size_t, size_t, bool, const E *x) const
    {
        unsigned r = 0;
#pragma unroll
        for (int k = 0; k < VEC; k++)
            r |= (unsigned)(((U)(x[k] - lo) <= span) != (bool)negate) << k;
        return r;
    }
};

/* Float predicates as a closed interval [lo, hi] or its complement (x < a is x <= the float
 * before a, and so on); a NaN fails both comparisons, so it satisfies only complements, as it
 * satisfies only NE. */
template <typename T> struct sel_float {
    T lo, hi;
    unsigned negate;
    enum { uses_elems = 1 };

    template <int VEC, typename E>
    __device__ __forceinline__ unsigned bits(size_t, size_t, bool, const E *x) const
    {
        unsigned r = 0;
#pragma unroll
        for (int k = 0; k < VEC; k++)
            r |= (unsigned)((x[k] >= lo && x[k] <= hi) != (bool)negate) << k;
        return r;
    }
};

/* Loads this thread's elements of a tile into x (tile_cuda.h's warp vectors); base is its first
 * element, group j starts at base + j * 32 * VEC. full: the warp's run lies within n. */
template <typename E>
__device__ __forceinline__ void sel_load(const E *in, size_t base, size_t n, bool full, int vec_in,
                                         E *x)
{
    tile_load_wvec<SEL_NV, tile_vec<E>(), true>(x, in, base, n, full && vec_in, E());
}

/* The selection bits of the thread's groups; elements at or past n are not selected. */
template <typename E, typename P>
__device__ __forceinline__ void sel_test(const P &p, size_t base, size_t n, bool full,
                                         int vec_flags, const E *x, unsigned *bits)
{
    const int VEC = 16 / sizeof(E);
#pragma unroll
    for (int j = 0; j < SEL_NV; j++) {
        size_t i0 = base + (size_t)j * 32 * VEC;
        unsigned b = p.template bits<VEC>(i0, n, full && vec_flags, x + j * VEC);
        if (!full)
            b &= i0 >= n ? 0u : n - i0 >= VEC ? (1u << VEC) - 1 : (1u << (n - i0)) - 1;
        bits[j] = b;
    }
}

/* Per-group counts packed in one word, FIELD bits each: a group has at most 32 * VEC selected. */
template <int VEC> struct sel_pack {
    typedef unsigned word;
    enum { FIELD = 8 };
};
template <> struct sel_pack<8> {
    typedef unsigned long long word;
    enum { FIELD = 16 };
};
template <> struct sel_pack<16> {
    typedef unsigned long long word;
    enum { FIELD = 16 };
};

/* start[j] = selected elements of the warp's run before this thread's group j, from one warp
 * scan of the packed group counts; returns the run's count (to every lane). */
template <int VEC>
__device__ __forceinline__ unsigned sel_warp_rank(const unsigned *bits, unsigned *start)
{
    typedef typename sel_pack<VEC>::word W;
    const int F = sel_pack<VEC>::FIELD;
    const W mask = ((W)1 << F) - 1;
    int lane = threadIdx.x & 31;
    W c = 0;
#pragma unroll
    for (int j = 0; j < SEL_NV; j++)
        c |= (W)__popc(bits[j]) << (F * j);
    W incl = c;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        W o = __shfl_up_sync(FULL_MASK, incl, d);
        if (lane >= d)
            incl += o;
    }
    W total = __shfl_sync(FULL_MASK, incl, 31), excl = incl - c;
    unsigned before = 0;
#pragma unroll
    for (int j = 0; j < SEL_NV; j++) {
        start[j] = before + (unsigned)(excl >> (F * j) & mask);
        before += (unsigned)(total >> (F * j) & mask);
    }
    return before;
}

/* This warp's offset among the tile's selected elements, and the tile's count, from the warp
 * counts in shared memory (every warp reads them; no second barrier is needed). */
__device__ __forceinline__ unsigned sel_tile_offsets(const unsigned *s_warp, unsigned *tile_sel)
{
    int warp = threadIdx.x >> 5;
    unsigned wofs = 0, all = 0;
#pragma unroll
    for (int w = 0; w < SEL_WARPS; w++) {
        unsigned c = s_warp[w];
        wofs += w < warp ? c : 0;
        all += c;
    }
    *tile_sel = all;
    return wofs;
}

/* Stages the thread's elements: the selected one of tile rank r at s_sel[r] and, with REJ, the
 * rejected one of tile rank q (among the rejected) at s_rej[q]. A partial tile's elements past n
 * are staged as rejected past the last one, inside the staging area, and never written out. */
template <typename E, bool REJ>
__device__ __forceinline__ void sel_gather(E *s_sel, E *s_rej, const E *x, const unsigned *bits,
                                           const unsigned *start, unsigned wofs)
{
    const int VEC = 16 / sizeof(E), WARP_ITEMS = 32 * SEL_NV * VEC;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int j = 0; j < SEL_NV; j++) {
        unsigned r = wofs + start[j];
        unsigned local = warp * WARP_ITEMS + j * 32 * VEC + lane * VEC;
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            if (bits[j] >> k & 1)
                s_sel[r++] = x[j * VEC + k];
            else if (REJ)
                s_rej[local + k - r] = x[j * VEC + k];
        }
    }
}

/* Writes s[0..cnt) to dst[0..cnt) in 16-byte chunks aligned in dst; s lies tile_shift(dst)
 * elements past a 16-byte boundary of shared memory, so a whole chunk is one 16-byte load from
 * shared memory and one store. */
template <typename E> __device__ __forceinline__ void sel_write(E *dst, const E *s, unsigned cnt)
{
    tile_store_run<SEL_THREADS, true>(dst, s, cnt);
}

/* One tile per block, its index from the ticket counter. (Persistent blocks that took their next
 * ticket early were slower: a held ticket delays that tile's aggregate; bench/notes-prim.md.) */
template <typename E, typename P>
__global__ void __launch_bounds__(SEL_THREADS)
    select_tiles(const E *__restrict__ in, P p, E *__restrict__ out, size_t n, int vec_in,
                 int vec_flags, lb_packed<unsigned long long> st, unsigned *tile_counter,
                 unsigned long long *count)
{
    const int VEC = 16 / sizeof(E), ITEMS = SEL_NV * VEC, WARP_ITEMS = 32 * ITEMS;
    const int TILE = SEL_WARPS * WARP_ITEMS;
    __shared__ uint4 s_stage[SEL_STAGE];
    __shared__ unsigned s_tile, s_warp[SEL_WARPS];
    __shared__ unsigned long long s_prefix;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    if (threadIdx.x == 0)
        s_tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    size_t tile = s_tile;
    size_t base = tile * TILE + (size_t)warp * WARP_ITEMS + (size_t)lane * VEC;
    bool full = tile * TILE + (size_t)(warp + 1) * WARP_ITEMS <= n;
    E x[ITEMS];
    unsigned bits[SEL_NV], start[SEL_NV];
    sel_load(in, base, n, full, vec_in, x);
    sel_test(p, base, n, full, vec_flags, x, bits);
    unsigned wsel = sel_warp_rank<VEC>(bits, start);
    if (lane == 0)
        s_warp[warp] = wsel;
    __syncthreads();

    unsigned tile_sel, wofs = sel_tile_offsets(s_warp, &tile_sel);
    if (warp == 0) {
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
            if (tile == gridDim.x - 1)
                *count = prefix + tile_sel;
        }
    }
    __syncthreads();

    E *dst = out + s_prefix;
    E *s_sel = (E *)s_stage + tile_shift(dst);
    sel_gather<E, false>(s_sel, NULL, x, bits, start, wofs);
    __syncthreads();
    sel_write(dst, s_sel, tile_sel);
}

/* The consecutive tiles of range r (block r of the counting pass). */
__device__ __forceinline__ void sel_range(size_t ntiles, size_t per_range, size_t *t0, size_t *t1)
{
    *t0 = blockIdx.x * per_range;
    *t1 = *t0 + per_range < ntiles ? *t0 + per_range : ntiles;
}

/* Sums v over the block; every thread gets the sum. s_red: SEL_WARPS words. */
__device__ __forceinline__ unsigned long long sel_block_sum(unsigned long long v,
                                                            unsigned long long *s_red)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(FULL_MASK, v, o);
    if ((threadIdx.x & 31) == 0)
        s_red[threadIdx.x >> 5] = v;
    __syncthreads();
    unsigned long long s = 0;
#pragma unroll
    for (int w = 0; w < SEL_WARPS; w++)
        s += s_red[w];
    return s;
}

/* The partition's counting pass over range r = blockIdx.x, walked backwards, so that a warp's
 * running count at tile t is its count from t to the range's end: it writes that to
 * wsfx[t * SEL_WARPS + w] (below 2^32: a range holds fewer elements); totals[r] = the range's
 * count. Block 0 clears the main pass's ticket. */
template <typename E, typename P>
__global__ void __launch_bounds__(SEL_THREADS)
    partition_count(const E *__restrict__ in, P p, size_t n, int vec_in, int vec_flags,
                    size_t per_range, unsigned *wsfx, unsigned long long *totals, unsigned *ticket)
{
    const int VEC = 16 / sizeof(E), ITEMS = SEL_NV * VEC, WARP_ITEMS = 32 * ITEMS;
    const int TILE = SEL_WARPS * WARP_ITEMS;
    __shared__ unsigned long long s_red[SEL_WARPS];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *ticket = 0;
    size_t t0, t1;
    sel_range((n + TILE - 1) / TILE, per_range, &t0, &t1);
    unsigned c = 0, wc = 0; /* the thread's count, and its warp's */
    for (size_t t = t1; t-- > t0;) {
        size_t wbase = t * TILE + (size_t)warp * WARP_ITEMS, base = wbase + (size_t)lane * VEC;
        bool full = wbase + WARP_ITEMS <= n;
        E x[ITEMS];
        unsigned bits[SEL_NV], tc = 0;
        if (P::uses_elems)
            sel_load(in, base, n, full, vec_in, x);
        sel_test(p, base, n, full, vec_flags, x, bits);
#pragma unroll
        for (int j = 0; j < SEL_NV; j++)
            tc += __popc(bits[j]);
        c += tc;
        wc += __reduce_add_sync(FULL_MASK, tc);
        if (lane == 0)
            wsfx[t * SEL_WARPS + warp] = wc;
    }
    unsigned long long total = sel_block_sum(c, s_red);
    if (threadIdx.x == 0)
        totals[blockIdx.x] = total;
}

#define SEL_MAX_RANGES 1024
/* The tile of ticket k, ntiles when none is left: the tiles in order. (Taking each range's first
 * four tiles first, which the counting pass read last and may still be in L2, measured the same:
 * bench/notes-prim.md.) */
__device__ __forceinline__ size_t sel_ticket_tile(unsigned k, size_t ntiles)
{
    return k < ntiles ? k : ntiles;
}

/* The selected elements before tile t: s_incl[r] (ranges 0..r) less the warps' counts from t to
 * the end of t's range r. */
__device__ __forceinline__ unsigned long long sel_before(const unsigned long long *s_incl,
                                                         const unsigned *wsfx, size_t t,
                                                         size_t per_range)
{
    const uint4 *w = (const uint4 *)(wsfx + t * SEL_WARPS);
    uint4 a = w[0], b = w[1];
    unsigned long long after = (unsigned long long)a.x + a.y + a.z + a.w + b.x + b.y + b.z + b.w;
    return s_incl[t / per_range] - after;
}

/* Resident blocks asked of the compiler: 4 for elements of 4 bytes or more (64 registers; u32
 * took 77 without the cap, 3 blocks); narrower elements hold more of them a thread: 3 for 2
 * bytes, 2 for 1 byte. */
#define SEL_MAIN_MIN_BLOCKS(E) (sizeof(E) >= 4 ? 4 : sizeof(E) == 2 ? 3 : 2)

/* The partition's main pass: persistent blocks take tiles by ticket. Thread 0 holds the ticket
 * of the tile after the next, so the atomic's latency is hidden behind a tile; the next tile's
 * elements are loaded while the current one is written out. */
template <typename E, typename P>
__global__ void __launch_bounds__(SEL_THREADS, SEL_MAIN_MIN_BLOCKS(E))
    partition_tiles(const E *__restrict__ in, P p, E *__restrict__ out, size_t n, int vec_in,
                    int vec_flags, size_t per_range, unsigned ranges, const unsigned *wsfx,
                    const unsigned long long *totals, unsigned *ticket, unsigned long long *count)
{
    const int VEC = 16 / sizeof(E), ITEMS = SEL_NV * VEC, WARP_ITEMS = 32 * ITEMS;
    const int TILE = SEL_WARPS * WARP_ITEMS;
    __shared__ uint4 s_stage[SEL_STAGE];
    __shared__ unsigned s_warp[SEL_WARPS];
    /* s_first: the block's first tile, apart from s_next, which thread 0 rewrites at the top of
     * the first iteration while a slow warp may not yet have read the first tile */
    __shared__ unsigned long long s_incl[SEL_MAX_RANGES], s_red[SEL_WARPS], s_first, s_next;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t ntiles = (n + TILE - 1) / TILE;

    /* s_incl[r] = the selected elements of ranges 0..r: 4 ranges a thread, one block scan */
    {
        unsigned long long v[4], run = 0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            unsigned r = threadIdx.x * 4 + k;
            run += r < ranges ? totals[r] : 0;
            v[k] = run;
        }
        unsigned long long incl = run;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            unsigned long long o = __shfl_up_sync(FULL_MASK, incl, d);
            if (lane >= d)
                incl += o;
        }
        if (lane == 31)
            s_red[warp] = incl;
        __syncthreads();
        unsigned long long excl = incl - run;
#pragma unroll
        for (int w = 0; w < SEL_WARPS; w++)
            excl += w < warp ? s_red[w] : 0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            unsigned r = threadIdx.x * 4 + k;
            if (r < ranges)
                s_incl[r] = excl + v[k];
        }
    }
    unsigned ahead = 0; /* thread 0: the ticket of the tile after the next */
    if (threadIdx.x == 0) {
        s_first = sel_ticket_tile(atomicAdd(ticket, 1u), ntiles);
        ahead = atomicAdd(ticket, 1u);
    }
    __syncthreads();
    const unsigned long long all = s_incl[ranges - 1];
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *count = all;
    size_t t = s_first;
    if (t >= ntiles)
        return;
    /* output positions of the tile's next selected and next rejected element */
    size_t sel_pos = sel_before(s_incl, wsfx, t, per_range), rej_pos = all + (t * TILE - sel_pos);
    size_t base = t * TILE + (size_t)warp * WARP_ITEMS + (size_t)lane * VEC;
    E x[ITEMS];
    sel_load(in, base, n, t * TILE + (size_t)(warp + 1) * WARP_ITEMS <= n, vec_in, x);
    for (;;) {
        bool full = t * TILE + (size_t)(warp + 1) * WARP_ITEMS <= n;
        unsigned bits[SEL_NV], start[SEL_NV];
        sel_test(p, base, n, full, vec_flags, x, bits);
        unsigned wsel = sel_warp_rank<VEC>(bits, start);
        if (lane == 0)
            s_warp[warp] = wsel;
        if (threadIdx.x == 0) {
            s_next = sel_ticket_tile(ahead, ntiles);
            ahead = atomicAdd(ticket, 1u);
        }
        __syncthreads();
        const size_t nt = s_next;
        const bool more = nt < ntiles;
        unsigned long long next_before = 0;
        if (more)
            next_before = sel_before(s_incl, wsfx, nt, per_range);

        unsigned tile_sel, wofs = sel_tile_offsets(s_warp, &tile_sel);
        size_t valid = n - t * TILE < (size_t)TILE ? n - t * TILE : (size_t)TILE;
        unsigned rejected = (unsigned)valid - tile_sel;
        E *dsel = out + sel_pos, *drej = out + rej_pos;
        E *s_sel = (E *)s_stage + tile_shift(dsel);
        unsigned rej_at = (tile_shift(dsel) + tile_sel + VEC - 1) / VEC * VEC + tile_shift(drej);
        E *s_rej = (E *)s_stage + rej_at;
        sel_gather<E, true>(s_sel, s_rej, x, bits, start, wofs);
        const size_t nbase = nt * TILE + (size_t)warp * WARP_ITEMS + (size_t)lane * VEC;
        if (more)
            sel_load(in, nbase, n, nt * TILE + (size_t)(warp + 1) * WARP_ITEMS <= n, vec_in, x);
        __syncthreads();

        sel_write(dsel, s_sel, tile_sel);
        sel_write(drej, s_rej, rejected);
        if (!more)
            break;
        t = nt;
        base = nbase;
        sel_pos = next_before;
        rej_pos = all + (t * TILE - sel_pos);
    }
}

/* Scratch (8-byte words): [tile counter, 2 words][status per tile][count]. */
template <typename E, typename P>
static kedr_status select_launch(kedr_ctx *ctx, const E *in, P p, int vec_flags, E *out,
                                 size_t n, size_t *n_sel, char *scratch, size_t blocks)
{
    cudaStream_t stream = KEDR_STREAM(ctx);
    int vec_in = (uintptr_t)in % 16 == 0;
    unsigned long long *d_count = (unsigned long long *)scratch + 2 + blocks;
    lb_packed<unsigned long long> st = {(unsigned long long *)scratch + 2};
    KEDR_CUDA_TRY(cudaMemsetAsync(scratch, 0, 16 + blocks * 8, stream));
    select_tiles<E, P><<<(unsigned)blocks, SEL_THREADS, 0, stream>>>(
        in, p, out, n, vec_in, vec_flags, st, (unsigned *)scratch, d_count);
    KEDR_CUDA_LAUNCHED("select_tiles");
    unsigned long long count = 0;
    KEDR_CUDA_TRY(cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, stream));
    KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
    *n_sel = (size_t)count;
    return KEDR_OK;
}

/* Scratch: [range totals, 8 bytes each][count, 8][ticket, 8][from a 16-byte boundary: the
 * warps' counts, SEL_WARPS words a tile]. */
template <typename E, typename P>
static kedr_status partition_launch(kedr_ctx *ctx, const E *in, P p, int vec_flags, E *out,
                                    size_t n, size_t *n_sel, char *scratch, size_t blocks,
                                    size_t ranges, size_t per_range)
{
    cudaStream_t stream = KEDR_STREAM(ctx);
    int vec_in = (uintptr_t)in % 16 == 0;
    unsigned long long *totals = (unsigned long long *)scratch, *d_count = totals + ranges;
    unsigned *ticket = (unsigned *)(d_count + 1);
    unsigned *wsfx = (unsigned *)(scratch + ((ranges + 2) * 8 + 15) / 16 * 16);
    partition_count<E, P><<<(unsigned)ranges, SEL_THREADS, 0, stream>>>(
        in, p, n, vec_in, vec_flags, per_range, wsfx, totals, ticket);
    KEDR_CUDA_LAUNCHED("partition_count");
    partition_tiles<E, P><<<(unsigned)blocks, SEL_THREADS, 0, stream>>>(
        in, p, out, n, vec_in, vec_flags, per_range, (unsigned)ranges, wsfx, totals, ticket,
        d_count);
    KEDR_CUDA_LAUNCHED("partition_tiles");
    unsigned long long count = 0;
    KEDR_CUDA_TRY(cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, stream));
    KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
    *n_sel = (size_t)count;
    return KEDR_OK;
}

template <typename E, typename P>
static kedr_status select_run(kedr_ctx *ctx, const E *in, P p, int vec_flags, E *out, size_t n,
                              int partition, size_t *n_sel)
{
    const size_t tile = (size_t)SEL_THREADS * SEL_NV * (16 / sizeof(E));
    size_t ntiles = (n + tile - 1) / tile;
    if (ntiles > 0x7fffffffu)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_select: n = %zu is beyond one launch", n);
    void *scratch = NULL;
    if (!partition) {
        KEDR_TRY(kedr_scratch_get(ctx, &scratch, (2 + ntiles) * 8 + 8));
        kedr_status s = select_launch(ctx, in, p, vec_flags, out, n, n_sel, (char *)scratch,
                                      ntiles);
        kedr_scratch_put(ctx, scratch);
        return s;
    }
    /* The main pass: one block per resident slot. The count depends only on the kernel and the
     * GPU model, so it is asked once (a process's GPUs are taken to be alike; a wrong count
     * costs only speed). The counting pass: as many ranges of consecutive tiles, at most
     * SEL_MAX_RANGES. */
    static int per_sm;
    if (!per_sm) {
        int k = 0;
        KEDR_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k, partition_tiles<E, P>,
                                                                    SEL_THREADS, 0));
        per_sm = k > 0 ? k : 1;
    }
    size_t slots = (size_t)per_sm * (size_t)ctx->multiprocessors;
    size_t blocks = slots < ntiles ? slots : ntiles;
    size_t ranges = blocks < SEL_MAX_RANGES ? blocks : SEL_MAX_RANGES;
    size_t per_range = (ntiles + ranges - 1) / ranges;
    ranges = (ntiles + per_range - 1) / per_range;
    if (per_range * tile > 0xffffffffu)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_partition: n = %zu is beyond its counters",
                         n);
    KEDR_TRY(kedr_scratch_get(ctx, &scratch, (ranges + 2) * 8 + 16 + ntiles * SEL_WARPS * 4));
    kedr_status s = partition_launch(ctx, in, p, vec_flags, out, n, n_sel, (char *)scratch,
                                     blocks, ranges, per_range);
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
    case 1:
        return select_run(ctx, (const uint8_t *)in, p, vf, (uint8_t *)out, n, partition, n_sel);
    case 2:
        return select_run(ctx, (const uint16_t *)in, p, vf, (uint16_t *)out, n, partition,
                             n_sel);
    case 4:
        return select_run(ctx, (const uint32_t *)in, p, vf, (uint32_t *)out, n, partition,
                             n_sel);
    case 8:
        return select_run(ctx, (const uint64_t *)in, p, vf, (uint64_t *)out, n, partition,
                             n_sel);
    case 16:
        return select_run(ctx, (const sel_e16 *)in, p, vf, (sel_e16 *)out, n, partition,
                             n_sel);
    }
    return kedr_fail(KEDR_ERR_INVALID, "kedr_select_flagged: elem_size %zu", elem_size);
}

/* The interval [lo, hi] of keys (unsigned, in the type's order) that cmp selects, or its
 * complement (negate); an empty set is the complement of all keys. */
template <typename U> static sel_int<U> sel_make_int(kedr_cmp cmp, U ka, U kb, U sign)
{
    const U top = (U)~(U)0;
    U lo = 0, hi = top;
    unsigned negate = 0;
    switch (cmp) {
    case KEDR_CMP_LT: hi = ka - 1; negate = ka == 0; break;
    case KEDR_CMP_LE: hi = ka; break;
    case KEDR_CMP_GT: lo = ka + 1; negate = ka == top; break;
    case KEDR_CMP_GE: lo = ka; break;
    case KEDR_CMP_EQ: lo = hi = ka; break;
    case KEDR_CMP_NE: lo = hi = ka; negate = 1; break;
    case KEDR_CMP_IN: lo = ka; hi = kb - 1; negate = !(ka < kb); break;
    }
    if (negate && cmp != KEDR_CMP_NE) { /* empty */
        lo = 0;
        hi = top;
    }
    sel_int<U> p = {(U)(lo ^ sign), (U)(hi - lo), negate};
    return p;
}

static float sel_next(float a, float to) { return nextafterf(a, to); }
static double sel_next(double a, double to) { return nextafter(a, to); }

/* The same for floats: the closed interval [lo, hi], or its complement for NE. */
template <typename T> static sel_float<T> sel_make_float(kedr_cmp cmp, T a, T b)
{
    const T inf = (T)INFINITY;
    T lo = -inf, hi = inf;
    unsigned negate = 0;
    int empty = isnan(a);
    switch (cmp) {
    case KEDR_CMP_LT: hi = sel_next(a, -inf); empty |= a == -inf; break;
    case KEDR_CMP_LE: hi = a; break;
    case KEDR_CMP_GT: lo = sel_next(a, inf); empty |= a == inf; break;
    case KEDR_CMP_GE: lo = a; break;
    case KEDR_CMP_EQ: lo = hi = a; break;
    case KEDR_CMP_NE: lo = hi = a; negate = 1; break;
    case KEDR_CMP_IN: lo = a; hi = sel_next(b, -inf); empty |= isnan(b) || b == -inf; break;
    }
    if (empty) { /* for NE: the complement of nothing */
        lo = inf;
        hi = -inf;
    }
    sel_float<T> p = {lo, hi, negate};
    return p;
}

extern "C" kedr_status prim_select_if_cuda(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out,
                                           size_t n, kedr_pred pred, int partition, size_t *n_sel)
{
    kedr_cmp c = pred.cmp;
    const uint32_t *i32 = (const uint32_t *)in;
    const uint64_t *i64 = (const uint64_t *)in;
    switch (t) {
    case KEDR_U32:
        return select_run(ctx, i32, sel_make_int<uint32_t>(c, pred.a.u32, pred.b.u32, 0), 0,
                             (uint32_t *)out, n, partition, n_sel);
    case KEDR_I32: { /* keys in unsigned order: the sign bit flipped */
        const uint32_t sign = 0x80000000u;
        return select_run(ctx, i32,
                             sel_make_int<uint32_t>(c, (uint32_t)pred.a.i32 ^ sign,
                                                    (uint32_t)pred.b.i32 ^ sign, sign),
                             0, (uint32_t *)out, n, partition, n_sel);
    }
    case KEDR_U64:
        return select_run(ctx, i64, sel_make_int<uint64_t>(c, pred.a.u64, pred.b.u64, 0), 0,
                             (uint64_t *)out, n, partition, n_sel);
    case KEDR_F32:
        return select_run(ctx, (const float *)in, sel_make_float(c, pred.a.f32, pred.b.f32), 0,
                             (float *)out, n, partition, n_sel);
    case KEDR_F64:
        return select_run(ctx, (const double *)in, sel_make_float(c, pred.a.f64, pred.b.f64),
                             0, (double *)out, n, partition, n_sel);
    }
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_select_if: element type %d", (int)t);
}
