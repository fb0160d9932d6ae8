/* prim's tile layer: how a block's threads move a tile of items between global memory and
 * registers or shared memory, with the guards of a partial last tile. The idea is that of CUB's
 * BlockLoad and BlockStore (Merrill, "CUB", NVIDIA Research): a kernel names the arrangement it
 * wants, the layer does the vector loads where the data allow them and the item-by-item guarded
 * ones where they do not. Device code shared by scan.cu, select.cu, bykey.cu, reduce.cu,
 * histogram.cu, sort.cu and tridiag.cu; include it from .cu files only.
 *
 * Arrangements of a thread's items (i: the thread's item, items of a warp's run in order):
 *  - warp vectors (tile_load_wvec, tile_store_wvec): a warp's run of 32 x NV groups of VEC
 *    items; lane l of group j holds items j * 32 * VEC + l * VEC .. + VEC - 1, which one
 *    coalesced 16-byte load brings, so that no shared-memory transpose is needed (scan, select,
 *    the run tails of reduce by key);
 *  - blocked (tile_load_blocked): N consecutive items a thread, as 16-byte vectors (reduce by
 *    key's segmented path, which needs each thread's items in order);
 *  - warp striped (tile_load_wstriped): item i of lane l is item 32 i + l of the warp's run
 *    (the radix sort, whose ranking round by round then follows the input order);
 *  - block-striped vectors (tile_load_bvec): vector u of a thread at v0 + u * stride, the
 *    thread's next vectors a whole block apart (reduce, histogram: order does not matter, or is
 *    fixed by the layout alone).
 * A partial tile (the last) loads the items below n and gives the others a fill value; a store
 * writes only those below n. "vec" arguments say that the vector path is safe: the items are all
 * in range and the pointer aligned; the caller knows both, usually for a whole warp or block.
 * LDG: 16-byte loads through the read-only data cache (input that no thread writes during the
 * kernel), else plain loads (scan may run in place).
 *
 * tile_store_run writes a count of items staged in shared memory (a compacted tile) to an
 * output at any alignment, in 16-byte stores aligned in the output.
 *
 * Shared-memory tiles of whole systems (the tridiagonal solvers): tile_systems maps element q of
 * a tile of m systems of n rows, in global memory order for either layout (contiguous or
 * interleaved), to its place in shared memory; tile_systems_load_async issues the asynchronous
 * copies (cp.async) of the four arrays a, b, c, d of the whole tile before any is awaited. */
#ifndef PRIM_TILE_CUDA_H
#define PRIM_TILE_CUDA_H

#include <cuda_pipeline.h>
#include <stddef.h>
#include <stdint.h>

/* Items of type T in 16 bytes. */
template <typename T> __host__ __device__ constexpr int tile_vec() { return 16 / (int)sizeof(T); }

/* One 16-byte load. */
template <bool LDG> __device__ __forceinline__ uint4 tile_ld16(const void *p)
{
    return LDG ? __ldg((const uint4 *)p) : *(const uint4 *)p;
}

/* x[0..N) = p[0..N) as A: N consecutive items in the widest loads their bytes allow (16, or
 * for 8 bytes in all one 8-byte load); p is aligned to min(16, N * sizeof(T)) bytes. */
template <int N, bool LDG, typename T, typename A>
__device__ __forceinline__ void tile_load_vec(A *x, const T *p)
{
    constexpr int BYTES = N * (int)sizeof(T);
    static_assert(BYTES % 16 == 0 || BYTES == 8, "tile_load_vec: 8 bytes or whole 16-byte vectors");
    if constexpr (BYTES >= 16) {
        constexpr int PER = 16 / (int)sizeof(T);
#pragma unroll
        for (int h = 0; h < BYTES / 16; h++) {
            union { uint4 raw; T e[PER]; } r;
            r.raw = tile_ld16<LDG>((const uint4 *)p + h);
#pragma unroll
            for (int k = 0; k < PER; k++)
                x[h * PER + k] = (A)r.e[k];
        }
    } else {
        union { uint2 raw; T e[N]; } r;
        r.raw = LDG ? __ldg((const uint2 *)p) : *(const uint2 *)p;
#pragma unroll
        for (int k = 0; k < N; k++)
            x[k] = (A)r.e[k];
    }
}

/* Blocked: x[0..N) = in[base..base + N) as A, fill at and past n. vec: all N in range and
 * in + base aligned as tile_load_vec needs. */
template <int N, bool LDG, typename T, typename A>
__device__ __forceinline__ void tile_load_blocked(A *x, const T *in, size_t base, size_t n,
                                                  bool vec, A fill)
{
    if (vec) {
        tile_load_vec<N, LDG>(x, in + base);
    } else {
#pragma unroll
        for (int r = 0; r < N; r++)
            x[r] = base + r < n ? (A)in[base + r] : fill;
    }
}

/* Warp vectors: x[j * VEC + k] = in[base + j * 32 * VEC + k] as A for the NV groups j, fill at
 * and past n; base is the lane's first item (the warp's first + lane * VEC). vec: the warp's
 * run is in range and every group aligned for tile_load_vec. */
template <int NV, int VEC, bool LDG, typename T, typename A>
__device__ __forceinline__ void tile_load_wvec(A *x, const T *in, size_t base, size_t n, bool vec,
                                               A fill)
{
    if (vec) {
#pragma unroll
        for (int j = 0; j < NV; j++)
            tile_load_vec<VEC, LDG>(x + j * VEC, in + base + (size_t)j * 32 * VEC);
    } else {
#pragma unroll
        for (int j = 0; j < NV; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                size_t i = base + (size_t)j * 32 * VEC + k;
                x[j * VEC + k] = i < n ? (A)in[i] : fill;
            }
    }
}

/* The store of tile_load_wvec's arrangement: out[base + j * 32 * VEC + k] = y[j * VEC + k] for
 * the items below n; vec as for the load (16-byte groups). */
template <int NV, typename T>
__device__ __forceinline__ void tile_store_wvec(T *out, const T *y, size_t base, size_t n,
                                                bool vec)
{
    constexpr int VEC = tile_vec<T>();
    if (vec) {
#pragma unroll
        for (int j = 0; j < NV; j++) {
            union { uint4 raw; T e[VEC]; } r;
#pragma unroll
            for (int k = 0; k < VEC; k++)
                r.e[k] = y[j * VEC + k];
            *(uint4 *)(out + base + (size_t)j * 32 * VEC) = r.raw;
        }
    } else {
#pragma unroll
        for (int j = 0; j < NV; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                size_t i = base + (size_t)j * 32 * VEC + k;
                if (i < n)
                    out[i] = y[j * VEC + k];
            }
    }
}

/* Warp striped: x[i] = in[wbase + 32 i + lane] for the IPT items i of the lane, fill for those
 * at or past valid (the items of the warp's run that exist). full: all 32 * IPT exist, so no
 * guard is evaluated. */
template <int IPT, typename T, typename A>
__device__ __forceinline__ void tile_load_wstriped(A *x, const T *in, size_t wbase,
                                                   unsigned valid, bool full, A fill)
{
    const unsigned lane = threadIdx.x & 31;
    if (full) {
#pragma unroll
        for (int i = 0; i < IPT; i++)
            x[i] = (A)in[wbase + 32 * i + lane];
    } else {
#pragma unroll
        for (int i = 0; i < IPT; i++)
            x[i] = 32 * i + lane < valid ? (A)in[wbase + 32 * i + lane] : fill;
    }
}

/* Block-striped vectors: x[u] = the 16-byte vector v = v0 + u * stride of in (items v * VEC ..
 * v * VEC + VEC - 1), for the U vectors u. GUARD: only those with v < nvec are loaded (the
 * others are left as they were); without, all are in range. VECTOR: in is 16-byte aligned, so
 * a vector is one load; else its items are loaded one by one, the same items. */
template <int U, bool LDG, bool GUARD, bool VECTOR, typename T>
__device__ __forceinline__ void tile_load_bvec(T (*x)[16 / sizeof(T)], const T *in, size_t v0,
                                               unsigned stride, size_t nvec)
{
    constexpr int VEC = tile_vec<T>();
#pragma unroll
    for (int u = 0; u < U; u++) {
        size_t v = v0 + u * stride;
        if (GUARD && v >= nvec)
            continue;
        if (VECTOR) {
            tile_load_vec<VEC, LDG>(x[u], in + v * VEC);
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++)
                x[u][k] = in[v * VEC + k];
        }
    }
}

/* Items from p back to the 16-byte boundary at or below it (p aligned to its item size). */
template <typename E> __device__ __forceinline__ unsigned tile_shift(const E *p)
{
    return (unsigned)((uintptr_t)p % 16 / sizeof(E));
}

/* dst[0..cnt) = s[0..cnt), s in shared memory, by the block's THREADS threads: a thread a
 * 16-byte chunk aligned in dst, the partial chunks at the ends item by item. S_ALIGNED: s lies
 * tile_shift(dst) items past a 16-byte boundary of shared memory, so that a whole chunk is one
 * 16-byte load from it; else s is read item by item. Items of 16 bytes (that may be only
 * 8-byte aligned) always go one by one. */
template <int THREADS, bool S_ALIGNED, typename E>
__device__ __forceinline__ void tile_store_run(E *dst, const E *s, unsigned cnt)
{
    constexpr int VEC = tile_vec<E>();
    int shift = (int)tile_shift(dst), chunks = (shift + (int)cnt + VEC - 1) / VEC;
    for (int c = threadIdx.x; c < chunks; c += THREADS) {
        int first = c * VEC - shift;
        if (VEC > 1 && first >= 0 && first + VEC <= (int)cnt) {
            if (S_ALIGNED) {
                *(uint4 *)(dst + first) = *(const uint4 *)(s + first);
            } else {
                union { uint4 raw; E e[VEC]; } out;
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    out.e[e] = s[first + e];
                *(uint4 *)(dst + first) = out.raw;
            }
        } else {
#pragma unroll
            for (int e = 0; e < VEC; e++)
                if (first + e >= 0 && first + e < (int)cnt)
                    dst[first + e] = s[first + e];
        }
    }
}

/* A tile of m whole systems of n rows, s0 the first, count in the batch: element q (q < m * n)
 * runs along the tile's global memory, so that consecutive threads touch consecutive addresses
 * in both layouts; in shared memory system j's row i is at j * pitch + i. q / div (div = n for
 * contiguous, m for interleaved) is taken in float: exact, as q < m * n < 2^21 keeps the
 * rounding below half of 1 / div. */
struct tile_systems {
    uint32_t n, m, pitch, div;
    size_t s0, count;
    float inv;
    bool inter;

    __device__ __forceinline__ tile_systems(bool interleaved, uint32_t n_, uint32_t m_,
                                            size_t s0_, size_t count_, uint32_t pitch_)
        : n(n_), m(m_), pitch(pitch_), div(interleaved ? m_ : n_), s0(s0_), count(count_),
          inv(1.0f / (float)(interleaved ? m_ : n_)), inter(interleaved)
    {
    }
    __device__ __forceinline__ uint32_t elems() const { return m * n; }

    /* Element q: *g in global memory, *e in shared memory. */
    __device__ __forceinline__ void place(uint32_t q, size_t *g, uint32_t *e) const
    {
        uint32_t x = (uint32_t)(((float)q + 0.5f) * inv), y = q - x * div;
        if (inter) { /* x = row, y = system */
            *g = (size_t)x * count + s0 + y;
            *e = y * pitch + x;
        } else { /* x = system, y = row */
            *g = s0 * n + q;
            *e = x * pitch + y;
        }
    }
};

/* Asynchronous copies of element g of a, b, c, d to element e of sa, sb, sc, sd. */
template <typename T>
__device__ __forceinline__ void tile_copy4_async(T *sa, T *sb, T *sc, T *sd, uint32_t e,
                                                 const T *a, const T *b, const T *c, const T *d,
                                                 size_t g)
{
    __pipeline_memcpy_async(sa + e, a + g, sizeof(T));
    __pipeline_memcpy_async(sb + e, b + g, sizeof(T));
    __pipeline_memcpy_async(sc + e, c + g, sizeof(T));
    __pipeline_memcpy_async(sd + e, d + g, sizeof(T));
}

/* Waits for this thread's asynchronous copies; the caller's barrier then makes every thread's
 * copies visible to all. */
__device__ __forceinline__ void tile_async_wait()
{
    __pipeline_commit();
    __pipeline_wait_prior(0);
}

/* The tile's a, b, c, d into sa .. sd by threads threadIdx.x, + stride, ...: every copy issued
 * before the first is awaited, so a whole tile is in flight at once. */
template <typename T>
__device__ __forceinline__ void tile_systems_load_async(const tile_systems &ts, uint32_t stride,
                                                        const T *a, const T *b, const T *c,
                                                        const T *d, T *sa, T *sb, T *sc, T *sd)
{
    for (uint32_t q = threadIdx.x; q < ts.elems(); q += stride) {
        size_t g;
        uint32_t e;
        ts.place(q, &g, &e);
        tile_copy4_async(sa, sb, sc, sd, e, a, b, c, d, g);
    }
    tile_async_wait();
}

/* The tile's sd back to d (coalesced, as the load). */
template <typename T>
__device__ __forceinline__ void tile_systems_store(const tile_systems &ts, uint32_t stride, T *d,
                                                   const T *sd)
{
    for (uint32_t q = threadIdx.x; q < ts.elems(); q += stride) {
        size_t g;
        uint32_t e;
        ts.place(q, &g, &e);
        d[g] = sd[e];
    }
}

/* Rows lo .. lo + m - 1 of a, b, c, d into sa .. sd, as tile_systems_load_async. */
template <typename T>
__device__ __forceinline__ void tile_rows_load_async(size_t lo, uint32_t m, uint32_t stride,
                                                     const T *a, const T *b, const T *c,
                                                     const T *d, T *sa, T *sb, T *sc, T *sd)
{
    for (uint32_t i = threadIdx.x; i < m; i += stride)
        tile_copy4_async(sa, sb, sc, sd, i, a, b, c, d, lo + i);
    tile_async_wait();
}

#endif
