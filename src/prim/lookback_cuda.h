/* Single-pass prefix propagation between tiles by decoupled look-back (Merrill & Garland 2016,
 * "Single-pass parallel prefix scan with decoupled look-back"). Device code shared by scan.cu,
 * select.cu and bykey.cu; include it from .cu files only.
 *
 * Each tile publishes its status in a word per tile: EMPTY, then AGG (its own aggregate), then
 * INCL (the inclusive prefix up to and including it). A tile takes its index from an atomic
 * counter, so every tile it waits on belongs to a block that is already running: no deadlock.
 * The status words (and the counter) must be zero before the launch. */
#ifndef PRIM_LOOKBACK_CUDA_H
#define PRIM_LOOKBACK_CUDA_H

#include <stddef.h>

/* Back-off of the look-back. A warp that polls as soon as it has published its aggregate mostly
 * finds its predecessors still EMPTY, and the polls of every waiting block crowd L2 at the few
 * lines that hold the newest statuses. Sleeping about an L2 write's latency before the first
 * poll, and a little between polls, took scan from 0.95 to 0.87 ms and select from 0.87 to 0.70
 * ms (H100, 2^28 u32; sleeping only between polls gained nothing; bench/notes-prim.md). Grids of
 * fewer than LB_SLEEP_GRID blocks do not sleep: their polls are few, and sleeping would only add
 * latency to small calls. */
#define LB_FIRST_NS 1200
#define LB_POLL_NS 650
#define LB_SLEEP_GRID 512

#define LB_EMPTY 0u
#define LB_AGG 1u
#define LB_INCL 2u
#define LB_FULL_MASK 0xffffffffu

/* Flag and value in one 64-bit word (value << 2 | flag), so one load sees a consistent pair:
 * for values of up to 62 bits (u32 sums, element counts). */
template <typename A> struct lb_packed {
    unsigned long long *word;

    __device__ __forceinline__ void publish(size_t t, unsigned flag, A v) const
    {
        ((volatile unsigned long long *)word)[t] = ((unsigned long long)v << 2) | flag;
    }
    __device__ __forceinline__ unsigned peek(size_t t, A *v) const
    {
        unsigned long long w = ((volatile unsigned long long *)word)[t];
        *v = (A)(w >> 2);
        return (unsigned)(w & 3);
    }
    __device__ __forceinline__ A value(size_t, unsigned, A v) const { return v; }
};

/* Flags and 64-bit values in separate arrays, ordered by fences: the value is written before
 * the fence that precedes its flag, and read after a fence that follows the flag. Aggregates and
 * inclusive prefixes have separate slots, so a reader that saw AGG still reads the aggregate. */
template <typename A> struct lb_split {
    unsigned *flag;
    A *agg;
    A *incl;

    __device__ __forceinline__ void publish(size_t t, unsigned f, A v) const
    {
        ((volatile A *)(f == LB_AGG ? agg : incl))[t] = v;
        __threadfence();
        ((volatile unsigned *)flag)[t] = f;
    }
    __device__ __forceinline__ unsigned peek(size_t t, A *) const
    {
        return ((volatile unsigned *)flag)[t];
    }
    __device__ __forceinline__ A value(size_t t, unsigned f, A) const
    {
        __threadfence();
        return ((volatile A *)(f == LB_AGG ? agg : incl))[t];
    }
};

/* The combining operation of a look-back: sums by default. Another operation (bykey.cu) needs
 * only to be associative; it need not commute, as every fold keeps the tiles in order. */
template <typename A> struct lb_plus {
    __device__ __forceinline__ A identity() const { return (A)0; }
    __device__ __forceinline__ A operator()(A l, A r) const { return l + r; }
    __device__ __forceinline__ A shfl_down(A v, int d) const
    {
        return __shfl_down_sync(LB_FULL_MASK, v, d);
    }
};

/* The fold of the 32 lanes' values in lane order, returned to lane 0. */
template <typename A, typename Op> __device__ __forceinline__ A lb_warp_fold(A v, const Op &op)
{
    int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d <<= 1) {
        A o = op.shfl_down(v, d);
        if (lane + d < 32)
            v = op(v, o);
    }
    return v;
}

/* Sums commute, so a butterfly serves them; scan and select measured about 9% slower with the
 * ordered fold above (H100, 2^28 u32, select 0.97 -> 1.06 ms). */
template <typename A> __device__ __forceinline__ A lb_warp_fold(A v, const lb_plus<A> &)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(LB_FULL_MASK, v, o);
    return v;
}

/* Called by a whole warp for tile >= 1 after the tile published its aggregate: returns to lane 0
 * (the other lanes get partial folds) the fold of all tiles before it. Lane l watches tile
 * (end - 32 + l); the warp waits until all 32 have a status, stops at the nearest INCL, else folds
 * the 32 aggregates and moves 32 tiles back. Tiles before 0 count as INCL with the identity. */
template <typename A, typename S, typename Op = lb_plus<A> >
__device__ A lb_exclusive_prefix(const S &st, size_t tile, Op op = Op())
{
    int lane = threadIdx.x & 31;
    A prefix = op.identity();
    long long end = (long long)tile;
    bool back_off = gridDim.x >= LB_SLEEP_GRID;
    if (back_off)
        __nanosleep(LB_FIRST_NS);
    for (;;) {
        long long t = end - 32 + lane;
        unsigned f;
        A v;
        for (;;) {
            f = LB_INCL;
            v = op.identity();
            if (t >= 0)
                f = st.peek((size_t)t, &v);
            if (!__any_sync(LB_FULL_MASK, f == LB_EMPTY))
                break;
            if (back_off)
                __nanosleep(LB_POLL_NS);
        }
        if (t >= 0)
            v = st.value((size_t)t, f, v);
        unsigned incl = __ballot_sync(LB_FULL_MASK, f == LB_INCL);
        int nearest = incl ? 31 - __clz(incl) : 0;
        prefix = op(lb_warp_fold(lane >= nearest ? v : op.identity(), op), prefix);
        if (incl)
            return prefix;
        end -= 32;
    }
}

#endif
