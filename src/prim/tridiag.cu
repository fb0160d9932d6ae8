/* kedr_tridiag_solve on the GPU, from the elimination of tridiag_cuda.h.
 *
 * Thomas tiles: a block copies the a, b, c, d of a few whole systems into shared memory
 * (asynchronous copies, coalesced in either layout: tile_systems, tile_cuda.h), each of its
 * first threads solves one system there, overwriting c with c', a with z (periodic) and d with
 * x, and the block writes d back with coalesced stores: four arrays read and one written, once
 * each, the least traffic there is. A system's rows lie one after the other in shared memory
 * with an odd pitch, so the threads of a warp, which read the same row of different systems,
 * hit different banks.
 *
 * PCR-Thomas tiles (PCR_THOMAS, systems of up to 2048 unknowns, f64 1024): the same tiles, but
 * a few steps of parallel cyclic reduction first split each system among up to 256 threads, so
 * that the sequential chain is at most 8 rows (f64 4) instead of n.
 *
 * Chunked tiles (CHUNKED; AUTO for contiguous systems of 256 unknowns or more that fit): the
 * same tiles, each system cut into chunks of about 8 rows, one thread a chunk, reduced to
 * interface rows, the interface system solved by CR over the block, the chunks completed
 * (prim_tridiag_chunked, tridiag_reduce.h).
 *
 * The periodic register kernel (AUTO for periodic interleaved systems of at most 32 unknowns,
 * f64 16): one thread a system straight from global memory, c', y and z in registers.
 *
 * The streamed solver (CHUNKED and AUTO for contiguous systems longer than the chunked kernel
 * holds): segments of a system a block, reduced to interface rows, the interface system
 * solved, the segments read again and completed.
 *
 * Systems too long for a tile of enough of them are solved from global memory, c' (and z) in
 * scratch: coalesced for the interleaved layout (neighbouring threads, neighbouring systems;
 * the sweep kernel), strided for the contiguous one, where it is the
 * fallback for systems longer than shared memory holds. */
#include "core/internal.h"
#include "prim/tile_cuda.h"
#include "prim/tridiag_cuda.h"

#include <stdint.h>

#define TILE_THREADS 128
/* Shared memory a tile aims at: small enough for several blocks a multiprocessor, so that one
 * block's loads overlap another's elimination. Tiles of one long system may take up to the
 * device's limit. */
#define TILE_BYTES (40 * 1024)
/* Systems an interleaved tile needs at least: 8 neighbours fill a 32-byte sector of f32. */
#define TILE_MIN_INTERLEAVED 32

template <typename T> __device__ __forceinline__ void thomas(const T *a, const T *b, const T *c,
                                                             T *d, T *cp, T *zp, size_t n,
                                                             size_t st, int periodic);
template <> __device__ __forceinline__ void thomas<float>(const float *a, const float *b,
                                                          const float *c, float *d, float *cp,
                                                          float *zp, size_t n, size_t st,
                                                          int periodic)
{
    prim_tridiag_thomas_f32(a, b, c, d, cp, zp, n, st, periodic);
}
template <> __device__ __forceinline__ void thomas<double>(const double *a, const double *b,
                                                           const double *c, double *d,
                                                           double *cp, double *zp, size_t n,
                                                           size_t st, int periodic)
{
    prim_tridiag_thomas_f64(a, b, c, d, cp, zp, n, st, periodic);
}

/* tb systems a tile; the four arrays of the tile at pitch elements a system. */
template <typename T, bool INTERLEAVED>
__global__ void __launch_bounds__(TILE_THREADS)
    tridiag_tile_kernel(const T *__restrict__ a, const T *__restrict__ b,
                        const T *__restrict__ c, T *__restrict__ d, uint32_t n, size_t count,
                        uint32_t tb, uint32_t pitch, int periodic, size_t tiles)
{
    extern __shared__ double tile_mem[]; /* double: aligned for both types */
    T *sa = (T *)tile_mem, *sb = sa + (size_t)tb * pitch, *sc = sb + (size_t)tb * pitch;
    T *sd = sc + (size_t)tb * pitch;
    for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        size_t s0 = t * tb;
        uint32_t m = count - s0 < tb ? (uint32_t)(count - s0) : tb;
        tile_systems ts(INTERLEAVED, n, m, s0, count, pitch);
        tile_systems_load_async(ts, TILE_THREADS, a, b, c, d, sa, sb, sc, sd);
        __syncthreads();
        if (threadIdx.x < m) {
            uint32_t o = threadIdx.x * pitch;
            thomas<T>(sa + o, sb + o, sc + o, sd + o, sc + o, sa + o, n, 1, periodic);
        }
        __syncthreads();
        tile_systems_store(ts, TILE_THREADS, d, sd);
        __syncthreads(); /* the next tile overwrites the shared arrays */
    }
}

/* Parallel cyclic reduction (Hockney & Jesshope, Parallel Computers 2, 1988; on GPUs Zhang,
 * Cohen & Owens, Fast tridiagonal solvers on the GPU, 2010) for log2(p) steps splits a system
 * into p independent systems of every p-th row; p threads then solve them by Thomas, so the
 * sequential chain is n / p rows instead of n. Step delta replaces row i by itself plus
 * multiples of rows i - delta and i + delta that eliminate x_{i-delta} and x_{i+delta}; rows
 * beyond the ends count as identity rows (periodic systems wrap instead, which needs n to be
 * a multiple of p), so a_0 and c_{n-1} of a non-periodic system are never read. Thread r of a
 * system holds the new values of rows r, r + p, ... (at most pcr_rows) in registers between the
 * barrier after every read and the barrier after every write. */
#define PCR_THREADS 256
/* Up to this length Thomas tiles were faster on an H100 (2^24 unknowns, both layouts and
 * types): their chain of n rows is short enough, and PCR's extra arithmetic costs more. */
#define PCR_MIN_N 256
/* AUTO's chunked kernel from this many unknowns (contiguous): at n = 256 it solved 80 G
 * unknowns/s against the tiles' 51 (f32; f64 49 against 24) on an H100, 2026-11-27; at 64 the
 * tiles were faster (108 against 85); 128 not measured. */
#define CHUNKED_AUTO_MIN_N 256
/* Rows a thread holds: 32 registers of new values for f32, 64 for f64. */
template <typename T> __host__ __device__ constexpr uint32_t pcr_rows() { return 32 / sizeof(T); }

template <typename T>
__device__ __forceinline__ void pcr_steps(T *sa, T *sb, T *sc, T *sd, uint32_t n, uint32_t p,
                                          uint32_t r, bool active, int periodic)
{
    for (uint32_t delta = 1; delta < p; delta <<= 1) {
        const int ROWS = pcr_rows<T>();
        T na[ROWS], nb[ROWS], nc[ROWS], nd[ROWS];
#pragma unroll
        for (int k = 0; k < ROWS; k++) {
            uint32_t i = r + k * p;
            if (!active || i >= n)
                continue;
            T ai = sa[i], ci = sc[i];
            na[k] = 0, nc[k] = 0, nb[k] = sb[i], nd[k] = sd[i];
            uint32_t lo = i >= delta ? i - delta : periodic ? i + n - delta : n;
            uint32_t hi = i + delta < n ? i + delta : periodic ? i + delta - n : n;
            if (lo < n) {
                T f = -ai / sb[lo];
                na[k] = f * sa[lo];
                nb[k] += f * sc[lo];
                nd[k] += f * sd[lo];
            }
            if (hi < n) {
                T f = -ci / sb[hi];
                nc[k] = f * sc[hi];
                nb[k] += f * sa[hi];
                nd[k] += f * sd[hi];
            }
        }
        __syncthreads(); /* every row read before any is overwritten */
#pragma unroll
        for (int k = 0; k < ROWS; k++) {
            uint32_t i = r + k * p;
            if (!active || i >= n)
                continue;
            sa[i] = na[k], sb[i] = nb[k], sc[i] = nc[k], sd[i] = nd[k];
        }
        __syncthreads(); /* every row written before the next step reads */
    }
}

/* tb = PCR_THREADS / p systems a tile, each split p ways (p = 2^logp, n <= pcr_rows * p). */
template <typename T, bool INTERLEAVED>
__global__ void __launch_bounds__(PCR_THREADS, 3)
    tridiag_pcr_kernel(const T *__restrict__ a, const T *__restrict__ b,
                       const T *__restrict__ c, T *__restrict__ d, uint32_t n, size_t count,
                       uint32_t tb, uint32_t pitch, uint32_t logp, int periodic, size_t tiles)
{
    extern __shared__ double tile_mem[];
    T *sa = (T *)tile_mem, *sb = sa + (size_t)tb * pitch, *sc = sb + (size_t)tb * pitch;
    T *sd = sc + (size_t)tb * pitch;
    uint32_t p = 1u << logp, js = threadIdx.x >> logp, r = threadIdx.x & (p - 1);
    uint32_t o = js * pitch;
    for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        size_t s0 = t * tb;
        uint32_t m = count - s0 < tb ? (uint32_t)(count - s0) : tb;
        tile_systems ts(INTERLEAVED, n, m, s0, count, pitch);
        tile_systems_load_async(ts, PCR_THREADS, a, b, c, d, sa, sb, sc, sd);
        __syncthreads();
        bool active = js < m;
        pcr_steps<T>(sa + o, sb + o, sc + o, sd + o, n, p, r, active, periodic);
        if (active && r < n) {
            uint32_t len = (n - r + p - 1) / p, e = o + r;
            thomas<T>(sa + e, sb + e, sc + e, sd + e, sc + e, sa + e, len, p, periodic);
        }
        __syncthreads();
        tile_systems_store(ts, PCR_THREADS, d, sd);
        __syncthreads(); /* the next tile overwrites the shared arrays */
    }
}

/* Interleaved systems, one thread a system, straight from global memory with c' (and z) in
 * scratch. The rows come in batches of SWEEP_ROWS: a thread issues the loads of a whole batch
 * before it uses the first, so that a few dozen loads per thread are in flight (all the
 * threads of a large batch are too few to cover the memory latency one row at a time). */
#define SWEEP_ROWS 8

template <typename T>
__global__ void __launch_bounds__(TILE_THREADS)
    tridiag_sweep_kernel(const T *__restrict__ a, const T *__restrict__ b,
                         const T *__restrict__ c, T *d, T *__restrict__ cp, size_t n,
                         size_t count)
{
    for (size_t s = (size_t)blockIdx.x * TILE_THREADS + threadIdx.x; s < count;
         s += (size_t)gridDim.x * TILE_THREADS) {
        T cprev = 0, y = 0; /* c' and d' of the row above; row 0 sees a "row -1" of zeros */
        for (size_t i0 = 0; i0 < n; i0 += SWEEP_ROWS) {
            T ra[SWEEP_ROWS], rb[SWEEP_ROWS], rc[SWEEP_ROWS], rd[SWEEP_ROWS];
#pragma unroll
            for (int u = 0; u < SWEEP_ROWS; u++) {
                size_t k = (i0 + u) * count + s;
                if (i0 + u < n)
                    ra[u] = i0 + u ? a[k] : (T)0, rb[u] = b[k], rc[u] = c[k], rd[u] = d[k];
            }
#pragma unroll
            for (int u = 0; u < SWEEP_ROWS; u++) {
                size_t k = (i0 + u) * count + s;
                if (i0 + u < n) {
                    T r = (T)1 / (rb[u] - ra[u] * cprev);
                    y = (rd[u] - ra[u] * y) * r;
                    cprev = rc[u] * r;
                    d[k] = y;
                    cp[k] = cprev;
                }
            }
        }
        /* x_{n-1} = y is in place; x_i = d'_i - c'_i x_{i+1} upwards, in batches again. */
        for (size_t i1 = n - 1; i1 > 0;) {
            size_t cnt = i1 < SWEEP_ROWS ? i1 : SWEEP_ROWS;
            T rc[SWEEP_ROWS], rd[SWEEP_ROWS];
#pragma unroll
            for (int u = 0; u < SWEEP_ROWS; u++) {
                size_t k = (i1 - 1 - u) * count + s;
                if ((size_t)u < cnt)
                    rc[u] = cp[k], rd[u] = d[k];
            }
#pragma unroll
            for (int u = 0; u < SWEEP_ROWS; u++) {
                size_t k = (i1 - 1 - u) * count + s;
                if ((size_t)u < cnt) {
                    y = rd[u] - rc[u] * y;
                    d[k] = y;
                }
            }
            i1 -= cnt;
        }
    }
}

/* The sweep for periodic systems, bordered as PRIM_TRIDIAG_THOMAS (tridiag_cuda.h) does.
 * Forward elimination of rows 0 .. m-1 of system s: d' into d, c' into cp, z' into zp. On
 * return *y and *z hold row m-1's d' and z'. */
template <typename T>
__device__ __forceinline__ void sweep_forward(const T *__restrict__ a, const T *__restrict__ b,
                                              const T *__restrict__ c, T *d, T *cp, T *zp,
                                              size_t m, size_t count, size_t s, T *y, T *z)
{
    T cprev = 0; /* row 0 sees a "row -1" of zeros */
    for (size_t i0 = 0; i0 < m; i0 += SWEEP_ROWS) {
        T ra[SWEEP_ROWS], rb[SWEEP_ROWS], rc[SWEEP_ROWS], rd[SWEEP_ROWS];
#pragma unroll
        for (int u = 0; u < SWEEP_ROWS; u++) {
            size_t k = (i0 + u) * count + s;
            if (i0 + u < m)
                ra[u] = a[k], rb[u] = b[k], rc[u] = c[k], rd[u] = d[k];
        }
#pragma unroll
        for (int u = 0; u < SWEEP_ROWS; u++) {
            size_t i = i0 + u, k = i * count + s;
            if (i >= m)
                continue;
            T ai = i ? ra[u] : (T)0; /* a_0 is no part of the elimination */
            T r = (T)1 / (rb[u] - ai * cprev);
            *y = (rd[u] - ai * *y) * r;
            d[k] = *y;
            /* z's right side: -a_0 on row 0, -c_{n-2} on row m-1 */
            T zr = (i == 0 ? -ra[u] : (T)0) - (i == m - 1 ? rc[u] : (T)0);
            *z = (zr - ai * *z) * r;
            zp[k] = *z;
            cprev = rc[u] * r;
            cp[k] = cprev;
        }
    }
}

/* Back substitution from row m-1 (whose values y, z are given) up to row 0; returns row 0's in
 * *y, *z. */
template <typename T>
__device__ __forceinline__ void sweep_backward(T *d, const T *cp, T *zp, size_t m, size_t count,
                                               size_t s, T *y, T *z)
{
    for (size_t i1 = m - 1; i1 > 0;) {
        size_t cnt = i1 < SWEEP_ROWS ? i1 : SWEEP_ROWS;
        T rc[SWEEP_ROWS], rd[SWEEP_ROWS], rz[SWEEP_ROWS];
#pragma unroll
        for (int u = 0; u < SWEEP_ROWS; u++) {
            size_t k = (i1 - 1 - u) * count + s;
            if ((size_t)u < cnt)
                rc[u] = cp[k], rd[u] = d[k], rz[u] = zp[k];
        }
#pragma unroll
        for (int u = 0; u < SWEEP_ROWS; u++) {
            size_t k = (i1 - 1 - u) * count + s;
            if ((size_t)u < cnt) {
                *y = rd[u] - rc[u] * *y;
                d[k] = *y;
                *z = rz[u] - rc[u] * *z;
                zp[k] = *z;
            }
        }
        i1 -= cnt;
    }
}

/* Periodic interleaved systems: the sweep of the leading m = n - 1 rows for y and z, then
 * x_{n-1} from the last row and x_i = y_i + x_{n-1} z_i. */
template <typename T>
__global__ void __launch_bounds__(TILE_THREADS)
    tridiag_sweep_periodic_kernel(const T *__restrict__ a, const T *__restrict__ b,
                                  const T *__restrict__ c, T *d, T *__restrict__ cp,
                                  T *__restrict__ zp, size_t n, size_t count)
{
    size_t m = n - 1, l = (n - 1) * count;
    for (size_t s = (size_t)blockIdx.x * TILE_THREADS + threadIdx.x; s < count;
         s += (size_t)gridDim.x * TILE_THREADS) {
        if (n == 1) {
            d[s] = d[s] / (a[s] + b[s] + c[s]);
            continue;
        }
        T y = 0, z = 0;
        sweep_forward<T>(a, b, c, d, cp, zp, m, count, s, &y, &z);
        T ylast = y, zlast = z;
        sweep_backward<T>(d, cp, zp, m, count, s, &y, &z);
        T al = a[l + s], cl = c[l + s];
        T xl = (d[l + s] - al * ylast - cl * y) / (b[l + s] + al * zlast + cl * z);
        d[l + s] = xl;
        for (size_t i0 = 0; i0 < m; i0 += SWEEP_ROWS) { /* x_i = y_i + x_{n-1} z_i */
            T rd[SWEEP_ROWS], rz[SWEEP_ROWS];
#pragma unroll
            for (int u = 0; u < SWEEP_ROWS; u++)
                if (i0 + u < m)
                    rd[u] = d[(i0 + u) * count + s], rz[u] = zp[(i0 + u) * count + s];
#pragma unroll
            for (int u = 0; u < SWEEP_ROWS; u++)
                if (i0 + u < m)
                    d[(i0 + u) * count + s] = rd[u] + xl * rz[u];
        }
    }
}

/* One thread a system, straight from global memory; element (s, i) at s * ss + i * st in every
 * array, the scratch arrays cp and zp (periodic) included. */
template <typename T>
__global__ void __launch_bounds__(TILE_THREADS)
    tridiag_global_kernel(const T *a, const T *b, const T *c, T *d, T *cp, T *zp, size_t n,
                          size_t count, size_t ss, size_t st, int periodic)
{
    for (size_t s = (size_t)blockIdx.x * TILE_THREADS + threadIdx.x; s < count;
         s += (size_t)gridDim.x * TILE_THREADS) {
        size_t o = s * ss;
        thomas<T>(a + o, b + o, c + o, d + o, cp + o, periodic ? zp + o : NULL, n, st, periodic);
    }
}

/* The shared code of tridiag_reduce.h by type. */
__device__ __forceinline__ void reduce_rows(float *a, float *b, float *c, float *d, float *z,
                                            float *wa, float *wb, float *wc, float *wd,
                                            float *wz, size_t m, int alg, size_t r, size_t q)
{
    prim_tridiag_reduce_f32(a, b, c, d, z, wa, wb, wc, wd, wz, m, alg, r, q);
}
__device__ __forceinline__ void reduce_rows(double *a, double *b, double *c, double *d,
                                            double *z, double *wa, double *wb, double *wc,
                                            double *wd, double *wz, size_t m, int alg, size_t r,
                                            size_t q)
{
    prim_tridiag_reduce_f64(a, b, c, d, z, wa, wb, wc, wd, wz, m, alg, r, q);
}
__device__ __forceinline__ void part_reduce(const float *a, const float *b, const float *c,
                                            float *d, size_t st, float *wa, float *wc,
                                            size_t wst, size_t len, float row[6])
{
    prim_tridiag_part_reduce_f32(a, b, c, d, st, wa, wc, wst, len, row);
}
__device__ __forceinline__ void part_reduce(const double *a, const double *b, const double *c,
                                            double *d, size_t st, double *wa, double *wc,
                                            size_t wst, size_t len, double row[6])
{
    prim_tridiag_part_reduce_f64(a, b, c, d, st, wa, wc, wst, len, row);
}
__device__ __forceinline__ void part_complete(const float *wa, const float *wc, size_t wst,
                                              float *d, size_t st, size_t len, float x0,
                                              float xl)
{
    prim_tridiag_part_complete_f32(wa, wc, wst, d, st, len, x0, xl);
}
__device__ __forceinline__ void part_complete(const double *wa, const double *wc, size_t wst,
                                              double *d, size_t st, size_t len, double x0,
                                              double xl)
{
    prim_tridiag_part_complete_f64(wa, wc, wst, d, st, len, x0, xl);
}

/* CR, PCR and CR-PCR: tb systems a block, q threads a system (blockDim.x = tb * q), each
 * system's rows at pitch in `arrays` arrays: a, b, c, d, (z), then the second copy of PCR. In
 * shared memory when work is NULL, else in the block's slice of work (global memory, for
 * systems longer than shared memory holds; the block's barriers order its accesses there as
 * well). The rows of the leading m = n - periodic are prepared as the cpu prepares them
 * (tridiag.c), solved by prim_tridiag_reduce, bordered, and x written back. Every thread,
 * including those of systems past the batch's end, reaches every barrier. */
template <typename T, bool INTERLEAVED>
__global__ void tridiag_reduce_kernel(const T *__restrict__ a, const T *__restrict__ b,
                                      const T *__restrict__ c, T *__restrict__ d, uint32_t n,
                                      size_t count, uint32_t tb, uint32_t q, uint32_t pitch,
                                      int alg, int periodic, size_t tiles, T *work)
{
    extern __shared__ double tile_mem[];
    size_t span = (size_t)tb * pitch;
    int narr = (4 + periodic) * (alg == KEDR_TRIDIAG_CR ? 1 : 2);
    T *base = work ? work + (size_t)blockIdx.x * narr * span : (T *)tile_mem;
    T *sa = base, *sb = base + span, *sc = base + 2 * span, *sd = base + 3 * span;
    T *sz = periodic ? base + 4 * span : NULL;
    T *w0 = alg == KEDR_TRIDIAG_CR ? NULL : base + (4 + periodic) * span;
    uint32_t js = threadIdx.x / q, r = threadIdx.x % q, o = js * pitch;
    uint32_t mm = periodic ? n - 1 : n;
    for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        size_t s0 = t * tb;
        uint32_t m = count - s0 < tb ? (uint32_t)(count - s0) : tb;
        if (work) { /* one system (tb = 1) into global work */
            for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
                size_t g = INTERLEAVED ? (size_t)k * count + s0 : s0 * n + k;
                sa[k] = a[g], sb[k] = b[g], sc[k] = c[g], sd[k] = d[g];
            }
        } else {
            tile_systems_load_async(tile_systems(INTERLEAVED, n, m, s0, count, pitch), blockDim.x,
                                    a, b, c, d, sa, sb, sc, sd);
        }
        bool active = js < m;
        if (periodic && active)
            for (uint32_t i = r; i < mm; i += q)
                sz[o + i] = 0;
        __syncthreads();
        if (active && r == 0 && mm > 0) { /* z's right side: -a_0 e_0 - c_{n-2} e_{m-1} */
            if (periodic) {
                sz[o] = -sa[o];
                sz[o + mm - 1] -= sc[o + mm - 1];
            }
            sa[o] = 0;
            sc[o + mm - 1] = 0;
        }
        __syncthreads();
        reduce_rows(sa + o, sb + o, sc + o, sd + o, periodic ? sz + o : (T *)NULL,
                    w0 ? w0 + o : (T *)NULL, w0 ? w0 + span + o : (T *)NULL,
                    w0 ? w0 + 2 * span + o : (T *)NULL, w0 ? w0 + 3 * span + o : (T *)NULL,
                    w0 && periodic ? w0 + 4 * span + o : (T *)NULL, mm, alg, r, q);
        if (periodic && active && r == 0) {
            uint32_t l = o + n - 1;
            if (mm == 0)
                sd[o] = sd[o] / (sa[o] + sb[o] + sc[o]);
            else
                sd[l] = (sd[l] - sa[l] * sd[o + mm - 1] - sc[l] * sd[o]) /
                        (sb[l] + sa[l] * sz[o + mm - 1] + sc[l] * sz[o]);
        }
        __syncthreads();
        if (periodic && active)
            for (uint32_t i = r; i < mm; i += q)
                sd[o + i] += sd[o + n - 1] * sz[o + i];
        __syncthreads();
        if (work) {
            for (uint32_t k = threadIdx.x; k < n; k += blockDim.x)
                d[INTERLEAVED ? (size_t)k * count + s0 : s0 * n + k] = sd[k];
        } else {
            tile_systems_store(tile_systems(INTERLEAVED, n, m, s0, count, pitch), blockDim.x, d,
                               sd);
        }
        __syncthreads(); /* the next tile overwrites the arrays */
    }
}

/* Every part of every system (tridiag.c's TRIDIAG_PARTS_CPU, a thread a part): neighbouring
 * threads take neighbouring systems in the interleaved layout (coalesced) and neighbouring
 * parts of a system in the contiguous one. */
template <typename T>
__global__ void __launch_bounds__(TILE_THREADS)
    tridiag_part_reduce_kernel(const T *a, const T *b, const T *c, T *d, T *wa, T *wc,
                               prim_tridiag_split sp, T *ia, T *ib, T *ic, T *id)
{
    size_t count = sp.count, parts = sp.parts, total = count * parts;
    bool inter = sp.ss == 1 && sp.n > 1;
    for (size_t k = (size_t)blockIdx.x * TILE_THREADS + threadIdx.x; k < total;
         k += (size_t)gridDim.x * TILE_THREADS) {
        size_t s = inter ? k % count : k / parts, p = inter ? k / count : k % parts;
        size_t lo = p * sp.len, len = p + 1 == parts ? sp.n - lo : sp.len;
        size_t o = s * sp.ss + lo * sp.st, e = s * sp.ws + lo * sp.wt;
        T row[6];
        part_reduce(a + o, b + o, c + o, d + o, sp.st, wa + e, wc + e, sp.wt, len, row);
        for (size_t j = 0; j < 2; j++) {
            size_t q = (2 * p + j) * count + s;
            ia[q] = row[3 * j], ib[q] = 1, ic[q] = row[3 * j + 1], id[q] = row[3 * j + 2];
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(TILE_THREADS)
    tridiag_part_complete_kernel(const T *wa, const T *wc, const T *x, T *d,
                                 prim_tridiag_split sp)
{
    size_t count = sp.count, parts = sp.parts, total = count * parts;
    bool inter = sp.ss == 1 && sp.n > 1;
    for (size_t k = (size_t)blockIdx.x * TILE_THREADS + threadIdx.x; k < total;
         k += (size_t)gridDim.x * TILE_THREADS) {
        size_t s = inter ? k % count : k / parts, p = inter ? k / count : k % parts;
        size_t lo = p * sp.len, len = p + 1 == parts ? sp.n - lo : sp.len;
        size_t o = s * sp.ss + lo * sp.st, e = s * sp.ws + lo * sp.wt;
        part_complete(wa + e, wc + e, sp.wt, d + o, sp.st, len, x[2 * p * count + s],
                      x[(2 * p + 1) * count + s]);
    }
}

/* The shared code of prim_tridiag_chunked by type. */
__device__ __forceinline__ void chunked_rows(float *a, float *b, float *c, float *d, size_t n,
                                             size_t len, int periodic, float *ia, float *ib,
                                             float *ic, float *id, float *iz, size_t r,
                                             size_t q)
{
    prim_tridiag_chunked_f32(a, b, c, d, n, len, periodic, ia, ib, ic, id, iz, r, q);
}
__device__ __forceinline__ void chunked_rows(double *a, double *b, double *c, double *d,
                                             size_t n, size_t len, int periodic, double *ia,
                                             double *ib, double *ic, double *id, double *iz,
                                             size_t r, size_t q)
{
    prim_tridiag_chunked_f64(a, b, c, d, n, len, periodic, ia, ib, ic, id, iz, r, q);
}

/* CHUNKED: tb whole systems a block in shared memory, q threads a system (blockDim.x = tb * q),
 * system j's rows at j * pitch of sa .. sd, its interface rows at j * 2q of ia .. iz. The tile
 * comes in and goes out as the Thomas tiles' (asynchronous copies, coalesced in either layout);
 * between them prim_tridiag_chunked solves each system with its q threads. With tb > 1 the
 * pitch is q * len, so that thread t of the block starts its chunk at row t * len of the tile:
 * with len odd, the 32 threads of a warp read 32 distinct banks at every step of their chains.
 * Every thread, those of systems past the batch's end included, reaches every barrier. */
template <typename T, bool INTERLEAVED>
__global__ void tridiag_chunked_kernel(const T *__restrict__ a, const T *__restrict__ b,
                                       const T *__restrict__ c, T *__restrict__ d, uint32_t n,
                                       size_t count, uint32_t tb, uint32_t q, uint32_t pitch,
                                       uint32_t len, int periodic, size_t tiles)
{
    extern __shared__ double tile_mem[];
    size_t span = (size_t)tb * pitch, ispan = (size_t)tb * 2 * q;
    T *sa = (T *)tile_mem, *sb = sa + span, *sc = sb + span, *sd = sc + span;
    T *ia = sd + span, *ib = ia + ispan, *ic = ib + ispan, *id = ic + ispan, *iz = id + ispan;
    uint32_t js = threadIdx.x / q, r = threadIdx.x % q, o = js * pitch, io = js * 2 * q;
    for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        size_t s0 = t * tb;
        uint32_t m = count - s0 < tb ? (uint32_t)(count - s0) : tb;
        tile_systems ts(INTERLEAVED, n, m, s0, count, pitch);
        tile_systems_load_async(ts, blockDim.x, a, b, c, d, sa, sb, sc, sd);
        __syncthreads();
        if (n == 1) { /* one division a system; no barrier inside */
            if (threadIdx.x < m) {
                uint32_t e = threadIdx.x * pitch;
                sd[e] = sd[e] / (periodic ? sa[e] + sb[e] + sc[e] : sb[e]);
            }
        } else {
            chunked_rows(sa + o, sb + o, sc + o, sd + o, n, len, periodic, ia + io, ib + io,
                         ic + io, id + io, iz + io, r, q);
        }
        __syncthreads();
        tile_systems_store(ts, blockDim.x, d, sd);
        __syncthreads(); /* the next tile overwrites the shared arrays */
    }
}

/* The shared code of the streamed solver's steps by type. */
__device__ __forceinline__ void segment_reduce(float *a, float *b, float *c, float *d, size_t m,
                                               size_t len, float *i0, float *j0, size_t q,
                                               float row[6], size_t r)
{
    size_t h = q / 2 + 2;
    prim_tridiag_segment_reduce_f32(a, b, c, d, m, len, i0, i0 + 2 * q, i0 + 4 * q, i0 + 6 * q,
                                    j0, j0 + h, j0 + 2 * h, j0 + 3 * h, row, r, q);
}
__device__ __forceinline__ void segment_reduce(double *a, double *b, double *c, double *d,
                                               size_t m, size_t len, double *i0, double *j0,
                                               size_t q, double row[6], size_t r)
{
    size_t h = q / 2 + 2;
    prim_tridiag_segment_reduce_f64(a, b, c, d, m, len, i0, i0 + 2 * q, i0 + 4 * q, i0 + 6 * q,
                                    j0, j0 + h, j0 + 2 * h, j0 + 3 * h, row, r, q);
}
__device__ __forceinline__ void segment_complete(float *a, float *b, float *c, float *d,
                                                 size_t m, size_t len, float x0, float xl,
                                                 float *i0, size_t q, size_t r)
{
    prim_tridiag_segment_complete_f32(a, b, c, d, m, len, x0, xl, i0, i0 + 2 * q, i0 + 4 * q,
                                      i0 + 6 * q, i0 + 8 * q, r, q);
}
__device__ __forceinline__ void segment_complete(double *a, double *b, double *c, double *d,
                                                 size_t m, size_t len, double x0, double xl,
                                                 double *i0, size_t q, size_t r)
{
    prim_tridiag_segment_complete_f64(a, b, c, d, m, len, x0, xl, i0, i0 + 2 * q, i0 + 4 * q,
                                      i0 + 6 * q, i0 + 8 * q, r, q);
}

/* The streamed solver (CHUNKED and AUTO on contiguous systems longer than the chunked kernel
 * holds; prim_tridiag_streamed in tridiag_reduce.h gives the steps), step 1: a block a segment
 * (blockDim.x = q threads; segs segments a system, at most pitch rows each), segment g of
 * system s in shared memory, reduced there to its two interface rows, which go to rows 2 g and
 * 2 g + 1 of system s in ga .. gd (2 segs rows a system); nothing else is written. Shared
 * memory: sa .. sd (pitch each), then the interface rows (prim_tridiag_segment_iface(q)). */
template <typename T>
__global__ void tridiag_segment_reduce_kernel(const T *__restrict__ a, const T *__restrict__ b,
                                              const T *__restrict__ c, const T *__restrict__ d,
                                              size_t n, size_t count, size_t segs,
                                              uint32_t pitch, int periodic, T *__restrict__ ga,
                                              T *__restrict__ gb, T *__restrict__ gc,
                                              T *__restrict__ gd)
{
    extern __shared__ double tile_mem[];
    uint32_t q = blockDim.x, r = threadIdx.x;
    T *sa = (T *)tile_mem, *sb = sa + pitch, *sc = sb + pitch, *sd = sc + pitch;
    T *i0 = sd + pitch, *j0 = i0 + 10 * (size_t)q;
    for (size_t t = blockIdx.x; t < count * segs; t += gridDim.x) {
        size_t s = t / segs, g = t % segs, lo = prim_tridiag_segment_start(n, segs, g);
        uint32_t m = (uint32_t)(prim_tridiag_segment_start(n, segs, g + 1) - lo);
        tile_rows_load_async(s * n + lo, m, q, a, b, c, d, sa, sb, sc, sd);
        __syncthreads();
        if (r == 0 && !periodic && g == 0)
            sa[0] = 0;
        if (r == 0 && !periodic && g + 1 == segs)
            sc[m - 1] = 0;
        __syncthreads();
        T row[6];
        segment_reduce(sa, sb, sc, sd, m, prim_tridiag_chunk_len(m, q), i0, j0, q, row, r);
        if (r == 0)
            for (int j = 0; j < 2; j++) {
                size_t k = s * 2 * segs + 2 * g + j;
                ga[k] = row[3 * j], gb[k] = 1, gc[k] = row[3 * j + 1], gd[k] = row[3 * j + 2];
            }
        __syncthreads(); /* every thread has read row before the next segment comes in */
    }
}

/* Step 3: a block a segment again, completed from its first and last unknowns (rows 2 g and
 * 2 g + 1 of system s in gx, the interface system's solution), x written to d. */
template <typename T>
__global__ void tridiag_segment_complete_kernel(const T *__restrict__ a,
                                                const T *__restrict__ b,
                                                const T *__restrict__ c, T *__restrict__ d,
                                                size_t n, size_t count, size_t segs,
                                                uint32_t pitch, const T *__restrict__ gx)
{
    extern __shared__ double tile_mem[];
    uint32_t q = blockDim.x, r = threadIdx.x;
    T *sa = (T *)tile_mem, *sb = sa + pitch, *sc = sb + pitch, *sd = sc + pitch;
    T *i0 = sd + pitch;
    for (size_t t = blockIdx.x; t < count * segs; t += gridDim.x) {
        size_t s = t / segs, g = t % segs, lo = prim_tridiag_segment_start(n, segs, g);
        uint32_t m = (uint32_t)(prim_tridiag_segment_start(n, segs, g + 1) - lo);
        tile_rows_load_async(s * n + lo, m, q, a, b, c, d, sa, sb, sc, sd);
        __syncthreads();
        size_t k = s * 2 * segs + 2 * g;
        segment_complete(sa, sb, sc, sd, m, m > 3 ? prim_tridiag_chunk_len(m - 2, q) : 3,
                         gx[k], gx[k + 1], i0, q, r);
        for (uint32_t i = r; i < m; i += q)
            d[s * n + lo + i] = sd[i];
        __syncthreads(); /* the segment written out before the next comes in */
    }
}

/* Rows of the register Thomas kernel that a thread loads before it uses the first. */
#define REGS_BATCH 8

/* Periodic interleaved systems of at most ROWS unknowns (AUTO on cuda), one thread a system as
 * tridiag_regs_kernel, bordered as PRIM_TRIDIAG_THOMAS (tridiag_cuda.h) borders: the leading
 * m = n - 1 rows eliminated for y (right side d) and z (right side -a_0 e_0 - c_{n-2} e_{m-1}),
 * c', y and z of every row in registers, the last row kept aside; then x_{n-1} from the last
 * row and x_i = y_i + x_{n-1} z_i. a, b, c, d read and x written once, as the non-periodic
 * kernel. */
template <typename T, int ROWS>
__global__ void __launch_bounds__(TILE_THREADS)
    tridiag_regs_periodic_kernel(const T *__restrict__ a, const T *__restrict__ b,
                                 const T *__restrict__ c, T *__restrict__ d, uint32_t n,
                                 size_t count)
{
    uint32_t m = n - 1;
    for (size_t s = (size_t)blockIdx.x * TILE_THREADS + threadIdx.x; s < count;
         s += (size_t)gridDim.x * TILE_THREADS) {
        if (n == 1) {
            d[s] = d[s] / (a[s] + b[s] + c[s]);
            continue;
        }
        T cp[ROWS], yp[ROWS], zp[ROWS];
        T cprev = 0, y = 0, z = 0, al = 0, bl = 1, cl = 0, dl = 0;
#pragma unroll
        for (int i0 = 0; i0 < ROWS; i0 += REGS_BATCH) {
            T ra[REGS_BATCH], rb[REGS_BATCH], rc[REGS_BATCH], rd[REGS_BATCH];
#pragma unroll
            for (int u = 0; u < REGS_BATCH; u++) {
                size_t k = (size_t)(i0 + u) * count + s;
                if ((uint32_t)(i0 + u) < n)
                    ra[u] = a[k], rb[u] = b[k], rc[u] = c[k], rd[u] = d[k];
            }
#pragma unroll
            for (int u = 0; u < REGS_BATCH; u++) {
                uint32_t i = (uint32_t)(i0 + u);
                if (i < m) {
                    T ai = i ? ra[u] : (T)0; /* a_0 is no part of the elimination */
                    T r = (T)1 / (rb[u] - ai * cprev);
                    T zr = (i == 0 ? -ra[u] : (T)0) - (i + 1 == m ? rc[u] : (T)0);
                    y = (rd[u] - ai * y) * r;
                    z = (zr - ai * z) * r;
                    cprev = rc[u] * r;
                    cp[i0 + u] = cprev, yp[i0 + u] = y, zp[i0 + u] = z;
                } else if (i == m) {
                    al = ra[u], bl = rb[u], cl = rc[u], dl = rd[u];
                }
            }
        }
        T ylast = y, zlast = z; /* row m-1's; the back substitution ends at row 0's */
#pragma unroll
        for (int i = ROWS - 1; i >= 0; i--) {
            if ((uint32_t)i < m) {
                if ((uint32_t)i + 1 < m)
                    y = yp[i] - cp[i] * y, z = zp[i] - cp[i] * z;
                else
                    y = yp[i], z = zp[i];
                yp[i] = y, zp[i] = z;
            }
        }
        T xl = (dl - al * ylast - cl * y) / (bl + al * zlast + cl * z);
#pragma unroll
        for (int i = 0; i < ROWS; i++)
            if ((uint32_t)i < m)
                d[(size_t)i * count + s] = yp[i] + xl * zp[i];
        d[(size_t)m * count + s] = xl;
    }
}

static unsigned grid_for(const kedr_ctx *ctx, size_t blocks)
{
    size_t full = (size_t)ctx->multiprocessors * 64;
    return (unsigned)(blocks < full ? blocks : full);
}

template <typename T>
static kedr_status launch_tile(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                               const T *b, const T *c, T *d, uint32_t tb, uint32_t pitch)
{
    size_t tiles = (g->count + tb - 1) / tb, bytes = (size_t)4 * tb * pitch * sizeof(T);
    uint32_t n = (uint32_t)g->n;
    unsigned grid = grid_for(ctx, tiles);
    if (g->layout == KEDR_TRIDIAG_INTERLEAVED) {
        KEDR_CUDA_TRY(cudaFuncSetAttribute(tridiag_tile_kernel<T, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)bytes));
        tridiag_tile_kernel<T, true><<<grid, TILE_THREADS, bytes, KEDR_STREAM(ctx)>>>(
            a, b, c, d, n, g->count, tb, pitch, g->periodic, tiles);
        KEDR_CUDA_LAUNCHED("tridiag_tile_kernel");
        return KEDR_OK;
    }
    KEDR_CUDA_TRY(cudaFuncSetAttribute(tridiag_tile_kernel<T, false>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    tridiag_tile_kernel<T, false><<<grid, TILE_THREADS, bytes, KEDR_STREAM(ctx)>>>(
        a, b, c, d, n, g->count, tb, pitch, g->periodic, tiles);
    KEDR_CUDA_LAUNCHED("tridiag_tile_kernel");
    return KEDR_OK;
}

template <typename T>
static kedr_status launch_pcr(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                              const T *b, const T *c, T *d, uint32_t logp)
{
    /* The pitch keeps a warp's shared accesses in distinct banks: lane l of a warp holding
     * several systems (p < 32) reads row r + k p of system l / p at (l / p) pitch + r + k p;
     * a pitch that is p times an odd number makes these distinct modulo 32. A warp within one
     * system (p >= 32) reads consecutive rows whatever the pitch; there an odd pitch spreads
     * the interleaved tile loads, where consecutive threads write neighbouring systems' rows. */
    uint32_t n = (uint32_t)g->n, p = 1u << logp, tb = PCR_THREADS >> logp, pitch = n;
    if (tb > g->count)
        tb = (uint32_t)g->count;
    uint32_t low = p < 32 ? p : 1; /* the lowest set bit pitch must have */
    while ((pitch & (2 * low - 1)) != low)
        pitch++;
    size_t tiles = (g->count + tb - 1) / tb, bytes = (size_t)4 * tb * pitch * sizeof(T);
    unsigned grid = grid_for(ctx, tiles);
    if (g->layout == KEDR_TRIDIAG_INTERLEAVED) {
        KEDR_CUDA_TRY(cudaFuncSetAttribute(tridiag_pcr_kernel<T, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)bytes));
        tridiag_pcr_kernel<T, true><<<grid, PCR_THREADS, bytes, KEDR_STREAM(ctx)>>>(
            a, b, c, d, n, g->count, tb, pitch, logp, g->periodic, tiles);
        KEDR_CUDA_LAUNCHED("tridiag_pcr_kernel");
        return KEDR_OK;
    }
    KEDR_CUDA_TRY(cudaFuncSetAttribute(tridiag_pcr_kernel<T, false>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    tridiag_pcr_kernel<T, false><<<grid, PCR_THREADS, bytes, KEDR_STREAM(ctx)>>>(
        a, b, c, d, n, g->count, tb, pitch, logp, g->periodic, tiles);
    KEDR_CUDA_LAUNCHED("tridiag_pcr_kernel");
    return KEDR_OK;
}

template <typename T>
static kedr_status launch_global(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                                 const T *b, const T *c, T *d)
{
    size_t elems = g->n * g->count;
    void *cp = NULL, *zp = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &cp, elems * sizeof(T)));
    if (g->periodic) {
        kedr_status s = kedr_scratch_get(ctx, &zp, elems * sizeof(T));
        if (s != KEDR_OK) {
            kedr_scratch_put(ctx, cp);
            return s;
        }
    }
    int inter = g->layout == KEDR_TRIDIAG_INTERLEAVED;
    size_t ss = inter ? 1 : g->n, st = inter ? g->count : 1;
    unsigned grid = grid_for(ctx, (g->count + TILE_THREADS - 1) / TILE_THREADS);
    if (inter && g->periodic)
        tridiag_sweep_periodic_kernel<T><<<grid, TILE_THREADS, 0, KEDR_STREAM(ctx)>>>(
            a, b, c, d, (T *)cp, (T *)zp, g->n, g->count);
    else if (inter)
        tridiag_sweep_kernel<T><<<grid, TILE_THREADS, 0, KEDR_STREAM(ctx)>>>(
            a, b, c, d, (T *)cp, g->n, g->count);
    else
        tridiag_global_kernel<T><<<grid, TILE_THREADS, 0, KEDR_STREAM(ctx)>>>(
            a, b, c, d, (T *)cp, (T *)zp, g->n, g->count, ss, st, g->periodic);
    /* Scratch goes back to the cache at once: later work on the stream is ordered after the
     * kernel, and kedr_scratch_put frees nothing. */
    kedr_scratch_put(ctx, cp);
    if (zp)
        kedr_scratch_put(ctx, zp);
    KEDR_CUDA_LAUNCHED("tridiag_global_kernel or tridiag_sweep_kernel");
    return KEDR_OK;
}

/* Threads a block for CR, PCR and CR-PCR. */
#define REDUCE_THREADS 256

template <typename T>
static kedr_status launch_reduce(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                                 const T *b, const T *c, T *d)
{
    /* q threads a system: enough for the first CR level or PCR step to give each at most two
     * rows; several systems a block while they fit in the shared memory a tile aims at. */
    uint32_t n = (uint32_t)g->n, q = 1, pitch = n | 1;
    while (q < REDUCE_THREADS && 2 * q < n)
        q *= 2;
    int narr = (4 + g->periodic) * (g->algorithm == KEDR_TRIDIAG_CR ? 1 : 2), limit = 0;
    size_t per_system = (size_t)narr * pitch * sizeof(T), tb = REDUCE_THREADS / q;
    while (tb > 1 && tb * per_system > TILE_BYTES)
        tb /= 2;
    if (tb > g->count)
        tb = g->count;
    KEDR_CUDA_TRY(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                         ctx->device));
    if (g->n >= ((size_t)1 << 31))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_tridiag_solve: desc->n = %zu: CR, PCR and "
                         "CR_PCR on cuda take systems of fewer than 2^31 unknowns", g->n);
    size_t tiles = (g->count + tb - 1) / tb, bytes = tb * per_system;
    unsigned grid = grid_for(ctx, tiles);
    void *work = NULL;
    if (bytes > (size_t)limit) { /* rows in global memory, one system a block at a time */
        size_t most = (size_t)ctx->multiprocessors * 8, room = ((size_t)1 << 28) / bytes;
        most = room < most ? room : most;
        grid = grid < most ? grid : most > 0 ? (unsigned)most : 1;
        KEDR_TRY(kedr_scratch_get(ctx, &work, grid * bytes));
        bytes = 0;
    }
    unsigned threads = (unsigned)(tb * q);
    if (g->layout == KEDR_TRIDIAG_INTERLEAVED) {
        if (bytes)
            KEDR_CUDA_TRY(cudaFuncSetAttribute(tridiag_reduce_kernel<T, true>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)bytes));
        tridiag_reduce_kernel<T, true><<<grid, threads, bytes, KEDR_STREAM(ctx)>>>(
            a, b, c, d, n, g->count, (uint32_t)tb, q, pitch, (int)g->algorithm, g->periodic,
            tiles, (T *)work);
    } else {
        if (bytes)
            KEDR_CUDA_TRY(cudaFuncSetAttribute(tridiag_reduce_kernel<T, false>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)bytes));
        tridiag_reduce_kernel<T, false><<<grid, threads, bytes, KEDR_STREAM(ctx)>>>(
            a, b, c, d, n, g->count, (uint32_t)tb, q, pitch, (int)g->algorithm, g->periodic,
            tiles, (T *)work);
    }
    if (work) /* later work on the stream is ordered after the kernel */
        kedr_scratch_put(ctx, work);
    KEDR_CUDA_LAUNCHED("tridiag_reduce_kernel");
    return KEDR_OK;
}

/* Threads a block of the chunked kernel aims at when systems are short enough to share one. */
#define CHUNK_BLOCK 256

/* The chunked kernel's cut of systems of n unknowns: q threads a system, chunks of len rows,
 * tb systems a block at pitch elements, bytes of shared memory a block. */
typedef struct {
    uint32_t q, len, tb, pitch;
    size_t bytes;
} chunk_plan;

static chunk_plan chunk_plan_for(size_t n, size_t count, size_t size)
{
    chunk_plan c;
    c.q = (uint32_t)prim_tridiag_chunk_threads(n, PRIM_TRIDIAG_CHUNK_MOST);
    c.len = n > 1 ? (uint32_t)prim_tridiag_chunk_len(n, c.q) : 1;
    size_t tb = c.q < CHUNK_BLOCK ? CHUNK_BLOCK / c.q : 1;
    size_t wide = (size_t)c.q * c.len; /* the pitch of tiles of several systems (>= n) */
    size_t per_system = (4 * wide + 10 * (size_t)c.q) * size;
    while (tb > 1 && tb * per_system > TILE_BYTES)
        tb /= 2;
    if (tb > count)
        tb = count;
    c.tb = (uint32_t)tb;
    c.pitch = tb > 1 ? (uint32_t)wide : (uint32_t)n;
    c.bytes = tb * (4 * (size_t)c.pitch + 10 * (size_t)c.q) * size;
    return c;
}

/* Whether the chunked kernel holds systems of n unknowns in the device's shared memory. */
static int chunk_fits(const kedr_ctx *ctx, size_t n, size_t size)
{
    int limit = 0;
    if (n >= ((size_t)1 << 20) ||
        cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx->device) !=
            cudaSuccess)
        return 0;
    return chunk_plan_for(n, 1, size).bytes <= (size_t)limit;
}

template <typename T>
static kedr_status launch_chunked(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                                  const T *b, const T *c, T *d)
{
    chunk_plan p = chunk_plan_for(g->n, g->count, sizeof(T));
    size_t tiles = (g->count + p.tb - 1) / p.tb;
    unsigned grid = grid_for(ctx, tiles), threads = p.tb * p.q;
    uint32_t n = (uint32_t)g->n;
    if (g->layout == KEDR_TRIDIAG_INTERLEAVED) {
        KEDR_CUDA_TRY(cudaFuncSetAttribute(tridiag_chunked_kernel<T, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)p.bytes));
        tridiag_chunked_kernel<T, true><<<grid, threads, p.bytes, KEDR_STREAM(ctx)>>>(
            a, b, c, d, n, g->count, p.tb, p.q, p.pitch, p.len, g->periodic, tiles);
    } else {
        KEDR_CUDA_TRY(cudaFuncSetAttribute(tridiag_chunked_kernel<T, false>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)p.bytes));
        tridiag_chunked_kernel<T, false><<<grid, threads, p.bytes, KEDR_STREAM(ctx)>>>(
            a, b, c, d, n, g->count, p.tb, p.q, p.pitch, p.len, g->periodic, tiles);
    }
    KEDR_CUDA_LAUNCHED("tridiag_chunked_kernel");
    return KEDR_OK;
}

template <typename T>
static kedr_status tridiag_launch(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                                  const T *b, const T *c, T *d);

/* The streamed solver on contiguous systems (n >= 2): step 1 (a block a segment), step 2 (the
 * interface systems of 2 rows a segment, count of them, by AUTO: the chunked kernel or Thomas
 * tiles, or streamed again when even they are too long), step 3. Scratch: the interface rows,
 * 4 arrays of 2 segs count. Traffic: a, b, c, d read twice, x written once, and the interface
 * rows (8 elements a segment written, 10 read, about 1/100 of the rest). */
template <typename T>
static kedr_status launch_streamed(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                                   const T *b, const T *c, T *d)
{
    size_t n = g->n, segs = prim_tridiag_segments(n, prim_tridiag_segment_rows(sizeof(T)));
    size_t m2 = 2 * segs, elems = m2 * g->count;
    uint32_t pitch = (uint32_t)((n + segs - 1) / segs);
    uint32_t q = (uint32_t)prim_tridiag_chunk_threads(pitch, PRIM_TRIDIAG_CHUNK_MOST);
    size_t bytes = (4 * (size_t)pitch + prim_tridiag_segment_iface(q)) * sizeof(T);
    void *gi = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &gi, 4 * elems * sizeof(T)));
    T *ga = (T *)gi, *gb = ga + elems, *gc = gb + elems, *gd = gc + elems;
    unsigned grid = grid_for(ctx, segs * g->count);
    cudaError_t e = cudaFuncSetAttribute(tridiag_segment_reduce_kernel<T>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(tridiag_segment_complete_kernel<T>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e != cudaSuccess) {
        kedr_scratch_put(ctx, gi);
        KEDR_CUDA_TRY(e);
    }
    tridiag_segment_reduce_kernel<T><<<grid, q, bytes, KEDR_STREAM(ctx)>>>(
        a, b, c, d, n, g->count, segs, pitch, g->periodic, ga, gb, gc, gd);
    kedr_tridiag_desc ig = {m2, g->count, KEDR_TRIDIAG_CONTIGUOUS, g->periodic,
                            KEDR_TRIDIAG_AUTO};
    kedr_status st = tridiag_launch<T>(ctx, &ig, ga, gb, gc, gd);
    if (st == KEDR_OK)
        tridiag_segment_complete_kernel<T><<<grid, q, bytes, KEDR_STREAM(ctx)>>>(
            a, b, c, d, n, g->count, segs, pitch, gd);
    kedr_scratch_put(ctx, gi); /* later work on the stream is ordered after the kernels */
    if (st != KEDR_OK)
        return st;
    KEDR_CUDA_LAUNCHED("tridiag_segment_reduce_kernel or tridiag_segment_complete_kernel");
    return KEDR_OK;
}

/* Unknowns the periodic register kernel takes at most: c', y and z of 32 f32 or 16 f64 rows,
 * 96 registers. */
template <typename T> static constexpr uint32_t regs_periodic_most() { return 128 / sizeof(T); }

template <typename T, int ROWS>
static kedr_status launch_regs_periodic_rows(kedr_ctx *ctx, const kedr_tridiag_desc *g,
                                             const T *a, const T *b, const T *c, T *d)
{
    unsigned grid = grid_for(ctx, (g->count + TILE_THREADS - 1) / TILE_THREADS);
    tridiag_regs_periodic_kernel<T, ROWS><<<grid, TILE_THREADS, 0, KEDR_STREAM(ctx)>>>(
        a, b, c, d, (uint32_t)g->n, g->count);
    KEDR_CUDA_LAUNCHED("tridiag_regs_periodic_kernel");
    return KEDR_OK;
}

/* The periodic register kernel of the fewest rows that hold n (n <= regs_periodic_most<T>()). */
template <typename T>
static kedr_status launch_regs(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                               const T *b, const T *c, T *d)
{
    if (g->n <= 8)
        return launch_regs_periodic_rows<T, 8>(ctx, g, a, b, c, d);
    if (g->n <= 16 || sizeof(T) == 8)
        return launch_regs_periodic_rows<T, 16>(ctx, g, a, b, c, d);
    return launch_regs_periodic_rows<T, regs_periodic_most<T>()>(ctx, g, a, b, c, d);
}

template <typename T>
static kedr_status tridiag_launch(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                                  const T *b, const T *c, T *d)
{
    /* AUTO (measured on an H100, 2026-11-27; docs/prim.md): the chunked kernel for contiguous
     * systems of 256 unknowns or more that it holds in shared memory (Thomas tiles of systems
     * that long have a chain of n rows a thread, the PCR-Thomas tiles extra arithmetic), the
     * streamed solver for longer contiguous ones (two reads instead of PARTITIONED's
     * eleven array passes or Thomas's strided rows from global memory); the periodic
     * register kernel for periodic interleaved systems of at most regs_periodic_most unknowns;
     * Thomas tiles, or Thomas from global memory, elsewhere. Interleaved systems of more
     * unknowns go through the batched sweep, as tiles of them hold too few systems for
     * coalesced rows. */
    kedr_tridiag_algorithm alg = g->algorithm;
    if (alg == KEDR_TRIDIAG_CR || alg == KEDR_TRIDIAG_PCR || alg == KEDR_TRIDIAG_CR_PCR)
        return launch_reduce<T>(ctx, g, a, b, c, d);
    if ((alg == KEDR_TRIDIAG_CHUNKED || alg == KEDR_TRIDIAG_AUTO) &&
        g->layout == KEDR_TRIDIAG_CONTIGUOUS && g->n > PCR_MIN_N &&
        !chunk_fits(ctx, g->n, sizeof(T)))
        return launch_streamed<T>(ctx, g, a, b, c, d);
    if (alg == KEDR_TRIDIAG_CHUNKED ||
        (alg == KEDR_TRIDIAG_AUTO && g->layout == KEDR_TRIDIAG_CONTIGUOUS &&
         g->n >= CHUNKED_AUTO_MIN_N))
        return launch_chunked<T>(ctx, g, a, b, c, d); /* fits: see prim_tridiag_cuda_partitions */
    /* the periodic register kernel (a non-periodic one was tried and removed: slower than the
     * tiles on an H100, 2026-11-27, 84 and 56 G unknowns/s at n = 32 and 64 in f32; docs/prim.md) */
    if (alg == KEDR_TRIDIAG_AUTO && g->layout == KEDR_TRIDIAG_INTERLEAVED && g->periodic &&
        g->n <= regs_periodic_most<T>())
        return launch_regs<T>(ctx, g, a, b, c, d);
    /* PCR_THOMAS: the PCR-Thomas tile where the split holds the system (periodic ones
     * evenly), else as THOMAS. */
    uint32_t logp = 0;
    while (((size_t)pcr_rows<T>() << logp) < g->n && (1u << logp) < PCR_THREADS)
        logp++;
    if (alg == KEDR_TRIDIAG_PCR_THOMAS && g->n <= ((size_t)pcr_rows<T>() << logp) &&
        (!g->periodic || g->n % (1u << logp) == 0))
        return launch_pcr<T>(ctx, g, a, b, c, d, logp);
    int limit = 0;
    KEDR_CUDA_TRY(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                         ctx->device));
    /* An odd pitch: rows of neighbouring systems fall in different banks. */
    size_t pitch = g->n | 1, per_system = 4 * pitch * sizeof(T);
    size_t tb = per_system <= TILE_BYTES ? TILE_BYTES / per_system : 1;
    if (tb > TILE_THREADS)
        tb = TILE_THREADS;
    if (tb > g->count)
        tb = g->count;
    /* Interleaved tiles of a multiple of 32 systems: each row of a tile is then whole 32-byte
     * sectors (when count is a multiple of 8), none read by two tiles, and every thread of a
     * warp has a system (tiles of 77 f32 systems of 32 unknowns, as TILE_BYTES alone gives,
     * read a sector twice at both ends of every row). */
    if (g->layout == KEDR_TRIDIAG_INTERLEAVED && tb > TILE_MIN_INTERLEAVED && tb < g->count)
        tb -= tb % TILE_MIN_INTERLEAVED;
    int fits = per_system <= (size_t)limit;
    if (g->layout == KEDR_TRIDIAG_INTERLEAVED)
        fits = fits && (tb >= TILE_MIN_INTERLEAVED || tb == g->count);
    if (fits)
        return launch_tile<T>(ctx, g, a, b, c, d, (uint32_t)tb, (uint32_t)pitch);
    return launch_global<T>(ctx, g, a, b, c, d);
}

extern "C" kedr_status prim_tridiag_cuda(kedr_ctx *ctx, kedr_dtype t,
                                         const kedr_tridiag_desc *desc, const void *a,
                                         const void *b, const void *c, void *d)
{
    if (t == KEDR_F32)
        return tridiag_launch<float>(ctx, desc, (const float *)a, (const float *)b,
                                     (const float *)c, (float *)d);
    return tridiag_launch<double>(ctx, desc, (const double *)a, (const double *)b,
                                  (const double *)c, (double *)d);
}

/* AUTO partitions interleaved systems of at least PART_AUTO_MIN_N unknowns when there are
 * fewer than PART_AUTO_SYSTEMS_SM of them a multiprocessor: the sweep (one thread a system)
 * would leave the GPU nearly idle (an H100, 2026-11-27: 1024 systems of 16384 unknowns at 0.03
 * of copy), while the partitioned solver runs about sqrt(n) threads a system. */
#define PART_AUTO_MIN_N 256
#define PART_AUTO_SYSTEMS_SM 64

/* Systems that go to the partitioned solver (tridiag.c) on cuda: CHUNKED on interleaved
 * systems longer than the chunked kernel holds (contiguous ones are streamed), and AUTO on
 * long interleaved systems too few for the sweep (above). Long contiguous systems are
 * streamed by AUTO, whatever their count. */
extern "C" int prim_tridiag_cuda_partitions(const kedr_ctx *ctx, kedr_dtype t,
                                            const kedr_tridiag_desc *g)
{
    if (g->layout != KEDR_TRIDIAG_INTERLEAVED || g->n < 2)
        return 0;
    if (g->algorithm == KEDR_TRIDIAG_CHUNKED)
        return !chunk_fits(ctx, g->n, kedr_dtype_size(t));
    return g->algorithm == KEDR_TRIDIAG_AUTO && g->n >= PART_AUTO_MIN_N &&
           g->count < (size_t)ctx->multiprocessors * PART_AUTO_SYSTEMS_SM;
}

extern "C" kedr_status prim_tridiag_part_reduce_cuda(kedr_ctx *ctx, kedr_dtype t,
                                                     const prim_tridiag_split *sp,
                                                     const void *a, const void *b,
                                                     const void *c, void *d, void *wa,
                                                     void *wc, void *ia, void *ib, void *ic,
                                                     void *id)
{
    unsigned grid = grid_for(ctx, (sp->count * sp->parts + TILE_THREADS - 1) / TILE_THREADS);
    if (t == KEDR_F32)
        tridiag_part_reduce_kernel<float><<<grid, TILE_THREADS, 0, KEDR_STREAM(ctx)>>>(
            (const float *)a, (const float *)b, (const float *)c, (float *)d, (float *)wa,
            (float *)wc, *sp, (float *)ia, (float *)ib, (float *)ic, (float *)id);
    else
        tridiag_part_reduce_kernel<double><<<grid, TILE_THREADS, 0, KEDR_STREAM(ctx)>>>(
            (const double *)a, (const double *)b, (const double *)c, (double *)d,
            (double *)wa, (double *)wc, *sp, (double *)ia, (double *)ib, (double *)ic,
            (double *)id);
    KEDR_CUDA_LAUNCHED("tridiag_part_reduce_kernel");
    return KEDR_OK;
}

extern "C" kedr_status prim_tridiag_part_complete_cuda(kedr_ctx *ctx, kedr_dtype t,
                                                       const prim_tridiag_split *sp,
                                                       const void *wa, const void *wc,
                                                       const void *x, void *d)
{
    unsigned grid = grid_for(ctx, (sp->count * sp->parts + TILE_THREADS - 1) / TILE_THREADS);
    if (t == KEDR_F32)
        tridiag_part_complete_kernel<float><<<grid, TILE_THREADS, 0, KEDR_STREAM(ctx)>>>(
            (const float *)wa, (const float *)wc, (const float *)x, (float *)d, *sp);
    else
        tridiag_part_complete_kernel<double><<<grid, TILE_THREADS, 0, KEDR_STREAM(ctx)>>>(
            (const double *)wa, (const double *)wc, (const double *)x, (double *)d, *sp);
    KEDR_CUDA_LAUNCHED("tridiag_part_complete_kernel");
    return KEDR_OK;
}
