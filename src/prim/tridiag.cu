/* kedr_tridiag_solve on the GPU: the Thomas algorithm of tridiag_cuda.h, one thread a system.
 *
 * Tiles: a block copies the a, b, c, d of a few whole systems into shared memory with coalesced
 * loads (in either layout), each of its first threads solves one system there, overwriting c
 * with c', a with z (periodic) and d with x, and the block writes d back with coalesced stores.
 * So the solve moves the least bytes there are: four arrays read and one written, once each.
 * A system's rows lie one after the other in shared memory with an odd pitch, so the threads
 * of a warp, which read the same row of different systems, hit different banks.
 *
 * Systems too long for a tile of enough of them are solved from global memory, c' (and z) in
 * scratch: coalesced for the interleaved layout (neighbouring threads, neighbouring systems),
 * strided for the contiguous one, where it is the fallback for systems longer than shared
 * memory holds. */
#include "core/internal.h"
#include "prim/tridiag_cuda.h"

#include <stdint.h>

#define TILE_THREADS 128
/* Shared memory a tile aims at: small enough for several blocks a multiprocessor, so that one
 * block's loads overlap another's elimination. Tiles of one long system may take up to the
 * device's limit. */
#define TILE_BYTES (40 * 1024)
/* Systems an interleaved tile needs at least: 8 neighbours fill a 32-byte sector of f32. */
#define TILE_MIN_INTERLEAVED 8

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

/* Element q of a tile of m systems (s0 onwards) as (system j in the tile, row i), and its index
 * in global memory: q runs along the tile's memory, so consecutive threads read consecutive
 * addresses in both layouts. */
template <bool INTERLEAVED>
__device__ __forceinline__ size_t tile_element(uint32_t q, uint32_t m, uint32_t n, size_t s0,
                                               size_t count, uint32_t *j, uint32_t *i)
{
    if (INTERLEAVED) {
        *i = q / m;
        *j = q - *i * m;
        return (size_t)*i * count + s0 + *j;
    }
    *j = q / n;
    *i = q - *j * n;
    return s0 * n + q;
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
        uint32_t m = count - s0 < tb ? (uint32_t)(count - s0) : tb, elems = m * n, i, j;
        for (uint32_t q = threadIdx.x; q < elems; q += TILE_THREADS) {
            size_t g = tile_element<INTERLEAVED>(q, m, n, s0, count, &j, &i);
            uint32_t o = j * pitch + i;
            sa[o] = a[g];
            sb[o] = b[g];
            sc[o] = c[g];
            sd[o] = d[g];
        }
        __syncthreads();
        if (threadIdx.x < m) {
            uint32_t o = threadIdx.x * pitch;
            thomas<T>(sa + o, sb + o, sc + o, sd + o, sc + o, sa + o, n, 1, periodic);
        }
        __syncthreads();
        for (uint32_t q = threadIdx.x; q < elems; q += TILE_THREADS) {
            size_t g = tile_element<INTERLEAVED>(q, m, n, s0, count, &j, &i);
            d[g] = sd[j * pitch + i];
        }
        __syncthreads(); /* the next tile overwrites the shared arrays */
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
    tridiag_global_kernel<T><<<grid, TILE_THREADS, 0, KEDR_STREAM(ctx)>>>(
        a, b, c, d, (T *)cp, (T *)zp, g->n, g->count, ss, st, g->periodic);
    /* Scratch goes back to the cache at once: later work on the stream is ordered after the
     * kernel, and kedr_scratch_put frees nothing. */
    kedr_scratch_put(ctx, cp);
    if (zp)
        kedr_scratch_put(ctx, zp);
    KEDR_CUDA_LAUNCHED("tridiag_global_kernel");
    return KEDR_OK;
}

template <typename T>
static kedr_status tridiag_launch(kedr_ctx *ctx, const kedr_tridiag_desc *g, const T *a,
                                  const T *b, const T *c, T *d)
{
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
