/* Private to prim: the Thomas algorithm for one tridiagonal system, shared word for word by the
 * cpu code (tridiag.c) and the cuda code (tridiag.cu), and the entry point of the cuda version
 * of kedr_tridiag_solve. */
#ifndef PRIM_TRIDIAG_CUDA_H
#define PRIM_TRIDIAG_CUDA_H

#include "kedr/prim.h"

#ifdef __CUDACC__
#define PRIM_TRIDIAG_HD __host__ __device__ __forceinline__
#else
#define PRIM_TRIDIAG_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The Thomas algorithm (Gaussian elimination without pivoting; Thomas 1949, as given by Conte &
 * de Boor, Elementary Numerical Analysis, 1980, sec. 3.6) on one system of n unknowns whose
 * element i is at [i * st] of every array. d: right side in, x out. cp receives c' (the
 * eliminated upper diagonal, rows 0 .. n-3 at most). Periodic systems are bordered: the leading
 * m = n - 1 rows are solved for y (right side d) and for z (right side -a_0 e_0 - c_{n-2}
 * e_{m-1}), then x_{n-1} = (d_{n-1} - a_{n-1} y_{m-1} - c_{n-1} y_0) /
 * (b_{n-1} + a_{n-1} z_{m-1} + c_{n-1} z_0) and x_i = y_i + x_{n-1} z_i; zp holds z. Elimination
 * of the leading rows keeps the diagonal dominance of a dominant system, unlike the
 * Sherman-Morrison form, which changes b_0. cp may be c and zp may be a (the shared-memory tile
 * overwrites its copies): each is read at row i before row i is written, and the last row,
 * which is read at the end, is never written. */
#define PRIM_TRIDIAG_THOMAS(NAME, T)                                                          \
    PRIM_TRIDIAG_HD void NAME(const T *a, const T *b, const T *c, T *d, T *cp, T *zp,          \
                              size_t n, size_t st, int periodic)                               \
    {                                                                                          \
        if (n == 1) {                                                                          \
            d[0] = d[0] / (periodic ? a[0] + b[0] + c[0] : b[0]);                              \
            return;                                                                            \
        }                                                                                      \
        size_t m = periodic ? n - 1 : n;                                                       \
        T r = (T)1 / b[0], c0 = c[0];                                                          \
        T cprev = c0 * r, y = d[0] * r, z = 0;                                                 \
        d[0] = y;                                                                              \
        if (periodic) {                                                                        \
            z = (-a[0] - (m == 1 ? c0 : (T)0)) * r;                                            \
            zp[0] = z;                                                                         \
        }                                                                                      \
        if (m > 1)                                                                             \
            cp[0] = cprev;                                                                     \
        for (size_t i = 1; i < m; i++) {                                                       \
            size_t k = i * st;                                                                 \
            T ai = a[k], ci = c[k];                                                            \
            r = (T)1 / (b[k] - ai * cprev);                                                    \
            y = (d[k] - ai * y) * r;                                                           \
            d[k] = y;                                                                          \
            if (periodic) {                                                                    \
                z = ((i == m - 1 ? -ci : (T)0) - ai * z) * r;                                  \
                zp[k] = z;                                                                     \
            }                                                                                  \
            cprev = ci * r;                                                                    \
            if (i + 1 < m)                                                                     \
                cp[k] = cprev;                                                                 \
        }                                                                                      \
        T ylast = y, zlast = z;                                                                \
        for (size_t i = m - 1; i-- > 0;) {                                                     \
            size_t k = i * st;                                                                 \
            T ck = cp[k];                                                                      \
            y = d[k] - ck * y;                                                                 \
            d[k] = y;                                                                          \
            if (periodic) {                                                                    \
                z = zp[k] - ck * z;                                                            \
                zp[k] = z;                                                                     \
            }                                                                                  \
        }                                                                                      \
        if (!periodic)                                                                         \
            return;                                                                            \
        size_t l = (n - 1) * st;                                                               \
        T xl = (d[l] - a[l] * ylast - c[l] * y) / (b[l] + a[l] * zlast + c[l] * z);            \
        d[l] = xl;                                                                             \
        for (size_t i = 0; i < m; i++)                                                         \
            d[i * st] += xl * zp[i * st];                                                      \
    }

PRIM_TRIDIAG_THOMAS(prim_tridiag_thomas_f32, float)
PRIM_TRIDIAG_THOMAS(prim_tridiag_thomas_f64, double)

/* A barrier of the threads that share a system: the block's on the GPU, none on the cpu (a test
 * that runs the shared code over several host threads defines its own first). */
#ifndef PRIM_TRIDIAG_SYNC
#ifdef __CUDA_ARCH__
#define PRIM_TRIDIAG_SYNC() __syncthreads()
#else
#define PRIM_TRIDIAG_SYNC() ((void)0)
#endif
#endif
/* Rows the partitioned solver's part elimination reads before it writes any (their loads in
 * flight together: a thread's chain of rows waits on memory otherwise), and the hint that
 * unrolls its loops over them, so that the rows stay in registers. */
#define PRIM_TRIDIAG_AHEAD 4
#if defined(__CUDACC__)
#define PRIM_TRIDIAG_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__)
#define PRIM_TRIDIAG_UNROLL _Pragma("GCC unroll 4")
#else
#define PRIM_TRIDIAG_UNROLL
#endif
/* Rows at which the CR-PCR hybrid turns from CR to PCR, the same on both back ends. */
#define PRIM_TRIDIAG_HYBRID_ROWS 64

/* Rows a chunk of the chunked solver (prim_tridiag_chunked) aims at: a short chain for each
 * thread, and few enough chunks that the interface system stays small. */
#define PRIM_TRIDIAG_CHUNK_ROWS 8
/* Threads a system at most (a block's). */
#define PRIM_TRIDIAG_CHUNK_MOST 512
/* Threads the GPU gives one system of n unknowns in the chunked solver: the power of 2 that
 * cuts it into chunks of about PRIM_TRIDIAG_CHUNK_ROWS rows, at most `most`. */
PRIM_TRIDIAG_HD size_t prim_tridiag_chunk_threads(size_t n, size_t most)
{
    size_t q = 1;
    while (q < most && q * PRIM_TRIDIAG_CHUNK_ROWS < n)
        q *= 2;
    return q;
}
/* The chunk length of the chunked solver for n >= 2 unknowns over q threads: odd, at least 3,
 * about n / q (so at most q chunks), and such that the last chunk has at least 2 rows (n mod
 * len != 1). The cpu uses the GPU's q, so that both cut a system alike. */
PRIM_TRIDIAG_HD size_t prim_tridiag_chunk_len(size_t n, size_t q)
{
    size_t len = (n + q - 1) / q;
    len = (len < 2 ? 2 : len) | 1;
    while (n > 1 && n % len == 1)
        len += 2;
    return len;
}

/* The streamed solver (CHUNKED on contiguous systems longer than one block's shared memory
 * holds; prim_tridiag_streamed): rows of a segment, the part of a system that one block holds
 * in shared memory at a time (its a, b, c, d: PRIM_TRIDIAG_SEGMENT_BYTES), by element size. */
#define PRIM_TRIDIAG_SEGMENT_BYTES (32 * 1024)
PRIM_TRIDIAG_HD size_t prim_tridiag_segment_rows(size_t size)
{
    return PRIM_TRIDIAG_SEGMENT_BYTES / (4 * size);
}
/* Segments of a system of n unknowns cut into segments of at most `rows` rows (rows >= 4):
 * segs = ceil(n / rows), segment g from row prim_tridiag_segment_start(n, segs, g) to the next
 * one's start: n / segs rounded down or up, so at least rows / 2 when segs > 1. */
PRIM_TRIDIAG_HD size_t prim_tridiag_segments(size_t n, size_t rows)
{
    return (n + rows - 1) / rows;
}
PRIM_TRIDIAG_HD size_t prim_tridiag_segment_start(size_t n, size_t segs, size_t g)
{
    return g * (n / segs) + g * (n % segs) / segs;
}
/* Shared-memory elements of a segment's interface rows for q threads: 10 q (the chunked
 * solver's ia .. iz, 2 q each) and the ping-pong rows of the segment's reduction, 4 (q / 2 + 2). */
PRIM_TRIDIAG_HD size_t prim_tridiag_segment_iface(size_t q)
{
    return 10 * q + 4 * (q / 2 + 2);
}

#define PRIM_T float
#define PRIM_NAME(x) x##_f32
#include "prim/tridiag_reduce.h"
#undef PRIM_T
#undef PRIM_NAME
#define PRIM_T double
#define PRIM_NAME(x) x##_f64
#include "prim/tridiag_reduce.h"
#undef PRIM_T
#undef PRIM_NAME

/* Parts the partitioned solver cuts a system of n unknowns into: about sqrt(n), each of at
 * least 2 rows; the last part takes the remainder of n / parts. */
PRIM_TRIDIAG_HD size_t prim_tridiag_parts(size_t n)
{
    size_t p = 1;
    while ((p + 1) * (p + 1) <= n)
        p++;
    return p > n / 2 ? (n / 2 ? n / 2 : 1) : p;
}

/* Where the parts of a batch lie: element (s, i) of the whole systems at s * ss + i * st in
 * a, b, c, d, and at s * ws + i * wt in the part work arrays wa, wc; `parts` parts a system,
 * part p at rows p * len .. (p + 1) * len - 1, the last one to row n - 1. Interface row j of
 * part p of system s at (2 p + j) * count + s of ia, ib, ic, id (and x). */
typedef struct {
    size_t n, count, ss, st, ws, wt, parts, len;
} prim_tridiag_split;

#ifdef KEDR_HAVE_CUDA
/* The cuda version: arguments checked by the caller, n >= 1, count >= 1. Queued on the
 * context's stream. */
kedr_status prim_tridiag_cuda(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *desc,
                              const void *a, const void *b, const void *c, void *d);

/* The cuda versions of the part elimination and completion, over every part of every system;
 * arguments checked by the caller. Queued on the context's stream. */
kedr_status prim_tridiag_part_reduce_cuda(kedr_ctx *ctx, kedr_dtype t,
                                          const prim_tridiag_split *sp, const void *a,
                                          const void *b, const void *c, void *d, void *wa,
                                          void *wc, void *ia, void *ib, void *ic, void *id);
/* Whether these systems go to the partitioned solver on cuda (CHUNKED, long interleaved). */
int prim_tridiag_cuda_partitions(const kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *g);
kedr_status prim_tridiag_part_complete_cuda(kedr_ctx *ctx, kedr_dtype t,
                                            const prim_tridiag_split *sp, const void *wa,
                                            const void *wc, const void *x, void *d);
#endif

#ifdef __cplusplus
}
#endif
#endif
