/* kedr_tridiag_solve: argument checks, the cpu version and the dispatch.
 *
 * cpu: the Thomas algorithm of tridiag_cuda.h, its operations in the same order, swept over a
 * group of systems side by side: each step is one loop over the group's lanes, which the
 * compiler vectorizes, so that the divisions of many systems are in flight at once instead of
 * one system's chain of dependent divisions. Interleaved systems are swept where they lie, a
 * block of neighbours at a time (d' in place in d). Contiguous systems are taken a group at a
 * time: a tile of rows of each (or the whole systems, when they are short) is transposed into
 * an interleaved tile on the way in, and the solutions are transposed out a tile of rows at a
 * time. c' (contiguous: d' too; periodic: z) go to a scratch of the thread's own; a group is
 * narrow enough that what lives from the forward to the backward sweep fits the thread's share
 * of L2 and L3, so that a solve reads a, b, c, d and writes x about once from memory. */
#include "core/internal.h"
#include "prim/tridiag_cuda.h"

#include <omp.h>
#include <stdint.h>
#include <unistd.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

#define FN "kedr_tridiag_solve"

/* A thread's share of the caches when the system does not tell (sysconf: L2 + L3 / threads):
 * what a group's rows that live from the forward to the backward sweep should fit. */
#define TRIDIAG_CACHE_BYTES ((size_t)2 << 20)
/* Lanes of an interleaved block at most (1 or 2 KB of each array a row) and at least (256
 * bytes a row: shorter runs a stride apart leave the memory system idle, more than the
 * backward sweep then loses to the cache). */
#define TRIDIAG_BLOCK_MOST 256
#define TRIDIAG_BLOCK_BYTES 256
/* Rows of a contiguous group's tile (a .. d of each lane). f32: as many as fit
 * TRIDIAG_TILE_BYTES_F32, so that each system is read in runs of at least a KB (256 rows of 32
 * lanes), which the hardware prefetchers follow: tiles of 32 rows (runs of 128 bytes) left
 * 2048- and 16384-row systems a quarter slower. f64: 32 rows (runs of 256 bytes), or the whole
 * systems when they fit TRIDIAG_TILE_BYTES_F64: larger f64 tiles were 3 to 10% slower. (2 cores,
 * 2026-11-28; docs/prim.md.) */
#define TRIDIAG_TILE_BYTES_F32 ((size_t)256 << 10)
#define TRIDIAG_TILE_ROWS_F64 32
#define TRIDIAG_TILE_BYTES_F64 ((size_t)128 << 10)
/* Bytes of a cache line: groups and per-thread scratch begin on one (no false sharing). */
#define TRIDIAG_LINE 64

/* The steps of PRIM_TRIDIAG_THOMAS for one row of w lanes. Row 0 of the forward sweep: c', d'
 * and (periodic) z; `last`: row 0 is row m - 1 too. d and dp, x and d may be the same. */
#define TRIDIAG_STEPS(SUF, T)                                                                   \
    static inline void first_##SUF(const T *a, const T *b, const T *c, const T *d, T *cp,       \
                                   T *dp, T *zp, size_t w, int periodic, int last)              \
    {                                                                                           \
        _Pragma("omp simd")                                                                     \
        for (size_t j = 0; j < w; j++) {                                                        \
            T r = (T)1 / b[j];                                                                  \
            if (periodic)                                                                       \
                zp[j] = (-a[j] - (last ? c[j] : (T)0)) * r;                                     \
            cp[j] = c[j] * r;                                                                   \
            dp[j] = d[j] * r;                                                                   \
        }                                                                                       \
    }                                                                                           \
    /* Row i >= 1 from row i - 1's c', d', z (cq, dq, zq); `last`: i = m - 1, where z's right   \
     * side is -c_{n-2}. */                                                                     \
    static inline void forward_##SUF(const T *a, const T *b, const T *c, const T *d,            \
                                     const T *cq, const T *dq, const T *zq, T *cp, T *dp,       \
                                     T *zp, size_t w, int periodic, int last)                   \
    {                                                                                           \
        _Pragma("omp simd")                                                                     \
        for (size_t j = 0; j < w; j++) {                                                        \
            T ai = a[j], ci = c[j], r = (T)1 / (b[j] - ai * cq[j]);                             \
            dp[j] = (d[j] - ai * dq[j]) * r;                                                    \
            if (periodic)                                                                       \
                zp[j] = ((last ? -ci : (T)0) - ai * zq[j]) * r;                                 \
            cp[j] = ci * r;                                                                     \
        }                                                                                       \
    }                                                                                           \
    /* Row i of the backward sweep from row i + 1's y and z (dq, zq). */                        \
    static inline void backward_##SUF(const T *cp, const T *dq, T *dp, const T *zq, T *zp,      \
                                      size_t w, int periodic)                                   \
    {                                                                                           \
        _Pragma("omp simd")                                                                     \
        for (size_t j = 0; j < w; j++) {                                                        \
            dp[j] = dp[j] - cp[j] * dq[j];                                                      \
            if (periodic)                                                                       \
                zp[j] = zp[j] - cp[j] * zq[j];                                                  \
        }                                                                                       \
    }                                                                                           \
    /* Periodic: x_{n-1} from row n-1 (a .. d), y and z of rows m-1 (yl, zl) and 0 (y0, z0). */ \
    static inline void border_##SUF(const T *a, const T *b, const T *c, const T *d,             \
                                    const T *yl, const T *zl, const T *y0, const T *z0, T *x,   \
                                    size_t w)                                                   \
    {                                                                                           \
        _Pragma("omp simd")                                                                     \
        for (size_t j = 0; j < w; j++)                                                          \
            x[j] = (d[j] - a[j] * yl[j] - c[j] * y0[j]) / (b[j] + a[j] * zl[j] + c[j] * z0[j]); \
    }                                                                                           \
    /* Periodic: a row's x = y + x_{n-1} z from its y (in x), its z and x_{n-1} (xl). */        \
    static inline void correct_##SUF(T *x, const T *xl, const T *z, size_t w)                  \
    {                                                                                           \
        _Pragma("omp simd")                                                                     \
        for (size_t j = 0; j < w; j++)                                                          \
            x[j] = x[j] + xl[j] * z[j];                                                         \
    }

TRIDIAG_STEPS(f32, float)
TRIDIAG_STEPS(f64, double)

/* An interleaved block of w systems: element (j, i) of a .. d at i * st + j, of the scratch cp
 * and zp (periodic) at i * w + j; n >= 2. d holds d' after the forward sweep, then y, then x. */
#define TRIDIAG_BLOCK(SUF, T)                                                                   \
    static void block_##SUF(const T *a, const T *b, const T *c, T *d, size_t st, T *cp, T *zp,  \
                            size_t n, size_t w, int periodic)                                   \
    {                                                                                           \
        size_t m = periodic ? n - 1 : n;                                                        \
        first_##SUF(a, b, c, d, cp, d, zp, w, periodic, m == 1);                                \
        for (size_t i = 1; i < m; i++) {                                                        \
            size_t k = i * st, q = (i - 1) * w;                                                 \
            forward_##SUF(a + k, b + k, c + k, d + k, cp + q, d + k - st, zp + q, cp + q + w,   \
                          d + k, zp + q + w, w, periodic, i == m - 1);                          \
        }                                                                                       \
        for (size_t i = m - 1; i-- > 0;)                                                        \
            backward_##SUF(cp + i * w, d + (i + 1) * st, d + i * st, zp + (i + 1) * w,          \
                           zp + i * w, w, periodic);                                            \
        if (!periodic)                                                                          \
            return;                                                                             \
        size_t l = (n - 1) * st, y = (m - 1) * st;                                              \
        border_##SUF(a + l, b + l, c + l, d + l, d + y, zp + (m - 1) * w, d, zp, d + l, w);     \
        for (size_t i = 0; i < m; i++)                                                          \
            correct_##SUF(d + i * st, d + l, zp + i * w, w);                                    \
    }

TRIDIAG_BLOCK(f32, float)
TRIDIAG_BLOCK(f64, double)

/* Square blocks of the transposes between a contiguous group and its tile: 8 x 8 floats or 4 x 4
 * doubles in registers (AVX2: a row a load, the unpack/shuffle/lane-swap network of such
 * transposes, a column a store); elementwise where there is no AVX2, and at the edges. */
#ifdef __AVX2__
static inline void transpose_block_f32(const float *src, size_t ss, float *dst, size_t ds)
{
    __m256 t[8], u[8];
    for (int k = 0; k < 8; k += 2) {
        __m256 r0 = _mm256_loadu_ps(src + k * ss), r1 = _mm256_loadu_ps(src + (k + 1) * ss);
        t[k] = _mm256_unpacklo_ps(r0, r1);
        t[k + 1] = _mm256_unpackhi_ps(r0, r1);
    }
    for (int k = 0; k < 8; k += 4) { /* columns 0 and 1, 2 and 3 of rows k .. k+3, both halves */
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int k = 0; k < 4; k++) {
        _mm256_storeu_ps(dst + k * ds, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
        _mm256_storeu_ps(dst + (k + 4) * ds, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
    }
}

static inline void transpose_block_f64(const double *src, size_t ss, double *dst, size_t ds)
{
    __m256d r0 = _mm256_loadu_pd(src), r1 = _mm256_loadu_pd(src + ss);
    __m256d r2 = _mm256_loadu_pd(src + 2 * ss), r3 = _mm256_loadu_pd(src + 3 * ss);
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    _mm256_storeu_pd(dst, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(dst + ds, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(dst + 2 * ds, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(dst + 3 * ds, _mm256_permute2f128_pd(t1, t3, 0x31));
}
#define TRIDIAG_SQUARE_F32 8
#define TRIDIAG_SQUARE_F64 4
#else
#define TRIDIAG_SQUARE_F32 0
#define TRIDIAG_SQUARE_F64 0
static inline void transpose_block_f32(const float *src, size_t ss, float *dst, size_t ds)
{
    (void)src, (void)ss, (void)dst, (void)ds;
}
static inline void transpose_block_f64(const double *src, size_t ss, double *dst, size_t ds)
{
    (void)src, (void)ss, (void)dst, (void)ds;
}
#endif

/* dst[c * ds + r] = src[r * ss + c] for r < rows, c < cols: in squares of B, the rest element
 * by element. */
#define TRIDIAG_TRANSPOSE(SUF, T, B)                                                            \
    static inline void transpose_sq_##SUF(const T *src, size_t ss, T *dst, size_t ds,           \
                                          size_t rows, size_t cols)                             \
    {                                                                                           \
        size_t r0 = B ? rows / (B + !B) * B : 0, c0 = B ? cols / (B + !B) * B : 0;              \
        for (size_t r = 0; r < r0; r += B)                                                      \
            for (size_t c = 0; c < c0; c += B)                                                  \
                transpose_block_##SUF(src + r * ss + c, ss, dst + c * ds + r, ds);              \
        for (size_t r = 0; r < rows; r++)                                                       \
            for (size_t c = r < r0 ? c0 : 0; c < cols; c++)                                     \
                dst[c * ds + r] = src[r * ss + c];                                              \
    }

TRIDIAG_TRANSPOSE(f32, float, TRIDIAG_SQUARE_F32)
TRIDIAG_TRANSPOSE(f64, double, TRIDIAG_SQUARE_F64)

#ifdef __AVX512F__
/* A 16 x 16 square of floats (AVX-512: a row a whole cache line): pairs unpacked, 64-bit pairs
 * shuffled (4 x 4 squares in each 128-bit lane), then the lanes gathered in two steps. */
static inline void transpose_block16_f32(const float *src, size_t ss, float *dst, size_t ds)
{
    __m512 r[16], t[16];
    for (int k = 0; k < 16; k++)
        r[k] = _mm512_loadu_ps(src + k * ss);
    for (int k = 0; k < 16; k += 2) {
        t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 16; k += 4) {
        r[k] = _mm512_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[k + 1] = _mm512_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[k + 2] = _mm512_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[k + 3] = _mm512_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int k = 0; k < 4; k++) { /* r[4q + j], lane l: column 4l + j of rows 4q .. 4q+3 */
        t[k] = _mm512_shuffle_f32x4(r[k], r[k + 4], _MM_SHUFFLE(2, 0, 2, 0));
        t[k + 4] = _mm512_shuffle_f32x4(r[k], r[k + 4], _MM_SHUFFLE(3, 1, 3, 1));
        t[k + 8] = _mm512_shuffle_f32x4(r[k + 8], r[k + 12], _MM_SHUFFLE(2, 0, 2, 0));
        t[k + 12] = _mm512_shuffle_f32x4(r[k + 8], r[k + 12], _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int k = 0; k < 4; k++) {
        r[k] = _mm512_shuffle_f32x4(t[k], t[k + 8], _MM_SHUFFLE(2, 0, 2, 0));
        r[k + 8] = _mm512_shuffle_f32x4(t[k], t[k + 8], _MM_SHUFFLE(3, 1, 3, 1));
        r[k + 4] = _mm512_shuffle_f32x4(t[k + 4], t[k + 12], _MM_SHUFFLE(2, 0, 2, 0));
        r[k + 12] = _mm512_shuffle_f32x4(t[k + 4], t[k + 12], _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int k = 0; k < 16; k++)
        _mm512_storeu_ps(dst + k * ds, r[k]);
}

/* An 8 x 8 square of doubles likewise: pairs unpacked (2 x 2 squares in each 128-bit lane),
 * then the lanes gathered in two steps. */
static inline void transpose_block8_f64(const double *src, size_t ss, double *dst, size_t ds)
{
    __m512d r[8], t[8];
    for (int k = 0; k < 8; k++)
        r[k] = _mm512_loadu_pd(src + k * ss);
    for (int k = 0; k < 8; k += 2) { /* t[k], lane l: column 2l of rows k, k+1; t[k+1]: 2l+1 */
        t[k] = _mm512_unpacklo_pd(r[k], r[k + 1]);
        t[k + 1] = _mm512_unpackhi_pd(r[k], r[k + 1]);
    }
    for (int k = 0; k < 2; k++) {
        r[k] = _mm512_shuffle_f64x2(t[k], t[k + 2], _MM_SHUFFLE(2, 0, 2, 0));
        r[k + 2] = _mm512_shuffle_f64x2(t[k], t[k + 2], _MM_SHUFFLE(3, 1, 3, 1));
        r[k + 4] = _mm512_shuffle_f64x2(t[k + 4], t[k + 6], _MM_SHUFFLE(2, 0, 2, 0));
        r[k + 6] = _mm512_shuffle_f64x2(t[k + 4], t[k + 6], _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int k = 0; k < 2; k++) {
        t[k] = _mm512_shuffle_f64x2(r[k], r[k + 4], _MM_SHUFFLE(2, 0, 2, 0));
        t[k + 4] = _mm512_shuffle_f64x2(r[k], r[k + 4], _MM_SHUFFLE(3, 1, 3, 1));
        t[k + 2] = _mm512_shuffle_f64x2(r[k + 2], r[k + 6], _MM_SHUFFLE(2, 0, 2, 0));
        t[k + 6] = _mm512_shuffle_f64x2(r[k + 2], r[k + 6], _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int k = 0; k < 8; k++)
        _mm512_storeu_pd(dst + k * ds, t[k]);
}
#endif

/* The transposes of the groups: squares of B (AVX-512: 16 floats or 8 doubles, a whole cache
 * line a row) where the processor has them, the rest by transpose_sq (AVX2 squares, then
 * element by element). */
#ifdef __AVX512F__
#define TRIDIAG_TRANSPOSE_WIDE(SUF, T, B, BLOCK)                                                \
    static inline void transpose_##SUF(const T *src, size_t ss, T *dst, size_t ds, size_t rows, \
                                       size_t cols)                                             \
    {                                                                                           \
        size_t r0 = rows / B * B, c0 = cols / B * B;                                            \
        for (size_t r = 0; r < r0; r += B)                                                      \
            for (size_t c = 0; c < c0; c += B)                                                  \
                BLOCK(src + r * ss + c, ss, dst + c * ds + r, ds);                              \
        if (c0 < cols)                                                                          \
            transpose_sq_##SUF(src + c0, ss, dst + c0 * ds, ds, r0, cols - c0);                 \
        if (r0 < rows)                                                                          \
            transpose_sq_##SUF(src + r0 * ss, ss, dst + r0, ds, rows - r0, cols);               \
    }
#else
#define TRIDIAG_TRANSPOSE_WIDE(SUF, T, B, BLOCK)                                                \
    static inline void transpose_##SUF(const T *src, size_t ss, T *dst, size_t ds, size_t rows, \
                                       size_t cols)                                             \
    {                                                                                           \
        transpose_sq_##SUF(src, ss, dst, ds, rows, cols);                                       \
    }
#endif

TRIDIAG_TRANSPOSE_WIDE(f32, float, 16, transpose_block16_f32)
TRIDIAG_TRANSPOSE_WIDE(f64, double, 8, transpose_block8_f64)

/* Rows i0 .. i0+rows-1 of w contiguous systems of n (system j at v + j * n) into tile rows of
 * `lanes` (element (j, i) at (i - i0) * lanes + j). */
#define TRIDIAG_GATHER(SUF, T)                                                                  \
    static inline void gather_##SUF(const T *v, size_t n, size_t i0, size_t rows, size_t w,     \
                                    size_t lanes, T *tile)                                      \
    {                                                                                           \
        transpose_##SUF(v + i0, n, tile, lanes, w, rows);                                       \
    }

TRIDIAG_GATHER(f32, float)
TRIDIAG_GATHER(f64, double)

/* A group of w contiguous systems of n >= 2 (system j at a + j * n ..), `lanes` >= w apart in
 * the thread's tile (4 tr rows) and scratch (cp, dp and, periodic, zp: n rows each). The
 * forward sweep takes a tile of rows at a time; the tiles cover all n rows (periodic: the last
 * row too, which the bordering reads from the last tile), so that every transpose moves whole
 * squares where it can; the backward sweep runs in the scratch, x (periodic: y + x_{n-1} z,
 * with x_{n-1} in dp's row n - 1) is copied out a tile of rows at a time. */
#define TRIDIAG_GROUP(SUF, T)                                                                   \
    static void group_##SUF(const T *a, const T *b, const T *c, T *d, size_t n, size_t w,       \
                            size_t lanes, size_t tr, T *tile, T *cp, T *dp, T *zp, int periodic) \
    {                                                                                           \
        size_t m = periodic ? n - 1 : n, last = 0;                                              \
        T *ta = tile, *tb = tile + tr * lanes, *tc = tb + tr * lanes, *td = tc + tr * lanes;    \
        for (size_t i0 = 0; i0 < n; i0 += tr) {                                                 \
            size_t rows = n - i0 < tr ? n - i0 : tr;                                            \
            gather_##SUF(a, n, i0, rows, w, lanes, ta);                                         \
            gather_##SUF(b, n, i0, rows, w, lanes, tb);                                         \
            gather_##SUF(c, n, i0, rows, w, lanes, tc);                                         \
            gather_##SUF(d, n, i0, rows, w, lanes, td);                                         \
            last = i0;                                                                          \
            for (size_t i = 0; i < rows && i0 + i < m; i++) {                                   \
                size_t k = i0 + i, t = i * lanes, o = k * lanes;                                \
                if (k == 0)                                                                     \
                    first_##SUF(ta, tb, tc, td, cp, dp, zp, w, periodic, m == 1);               \
                else                                                                            \
                    forward_##SUF(ta + t, tb + t, tc + t, td + t, cp + o - lanes,               \
                                  dp + o - lanes, zp + o - lanes, cp + o, dp + o, zp + o, w,    \
                                  periodic, k == m - 1);                                        \
            }                                                                                   \
        }                                                                                       \
        T *xl = dp + m * lanes; /* periodic: x_{n-1} */                                         \
        if (periodic) { /* y and z, then x_{n-1} of each lane from the last tile's last row */  \
            size_t y = (m - 1) * lanes, t = (n - 1 - last) * lanes;                             \
            for (size_t i = m - 1; i-- > 0;)                                                    \
                backward_##SUF(cp + i * lanes, dp + (i + 1) * lanes, dp + i * lanes,            \
                               zp + (i + 1) * lanes, zp + i * lanes, w, periodic);              \
            border_##SUF(ta + t, tb + t, tc + t, td + t, dp + y, zp + y, dp, zp, xl, w);        \
        }                                                                                       \
        for (size_t i1 = n; i1 > 0;) { /* a tile of rows at a time, from the last */            \
            size_t i0 = (i1 - 1) / tr * tr;                                                     \
            if (!periodic)                                                                      \
                for (size_t i = i1; i-- > i0;)                                                  \
                    if (i + 1 < m)                                                              \
                        backward_##SUF(cp + i * lanes, dp + (i + 1) * lanes, dp + i * lanes,    \
                                       zp, zp, w, 0);                                           \
            for (size_t i = i0; i < i1 && i < m && periodic; i++) /* x = y + x_{n-1} z */       \
                correct_##SUF(dp + i * lanes, xl, zp + i * lanes, w);                           \
            transpose_##SUF(dp + i0 * lanes, lanes, d + i0, n, i1 - i0, w);                     \
            i1 = i0;                                                                            \
        }                                                                                       \
    }

TRIDIAG_GROUP(f32, float)
TRIDIAG_GROUP(f64, double)

/* The bytes of cache a thread may count on: its core's L2 and its share of L3. */
static size_t tridiag_cache(int threads)
{
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE), l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l2 <= 0)
        return TRIDIAG_CACHE_BYTES;
    return (size_t)l2 + (l3 > 0 ? (size_t)l3 / (size_t)threads : 0);
}

/* Lanes of a group: `most`, halved while `arrays` rows of n elements a lane exceed `cache` or
 * the groups are fewer than the threads, but not below `least`. */
static size_t tridiag_lanes(size_t n, size_t count, size_t size, size_t arrays, size_t most,
                            size_t least, size_t cache, int threads)
{
    size_t w = most;
    while (w > least && (w * n * size * arrays > cache || (count + w - 1) / w < (size_t)threads))
        w /= 2;
    return w;
}

/* The whole batch on the cpu; work holds `per` elements a thread. */
#define TRIDIAG_CPU(SUF, T)                                                                     \
    static void tridiag_cpu_##SUF(const kedr_tridiag_desc *g, const T *a, const T *b,           \
                                  const T *c, T *d, T *work, size_t per, size_t lanes, size_t tr) \
    {                                                                                           \
        size_t n = g->n, count = g->count;                                                      \
        size_t groups = (count + lanes - 1) / lanes;                                            \
        int periodic = g->periodic != 0, inter = g->layout == KEDR_TRIDIAG_INTERLEAVED;         \
        if (n == 1) { /* no elimination: every system is one division */                        \
            _Pragma("omp parallel for schedule(static)")                                        \
            for (size_t s = 0; s < count; s++)                                                  \
                d[s] = d[s] / (periodic ? a[s] + b[s] + c[s] : b[s]);                           \
            return;                                                                             \
        }                                                                                       \
        _Pragma("omp parallel")                                                                 \
        {                                                                                       \
            T *w = work + (size_t)omp_get_thread_num() * per;                                   \
            _Pragma("omp for schedule(static)")                                                 \
            for (size_t q = 0; q < groups; q++) {                                               \
                size_t s0 = q * lanes, ws = count - s0 < lanes ? count - s0 : lanes;            \
                if (inter) {                                                                    \
                    block_##SUF(a + s0, b + s0, c + s0, d + s0, count, w,                       \
                                periodic ? w + n * ws : w, n, ws, periodic);                    \
                    continue;                                                                   \
                }                                                                               \
                T *cp = w + 4 * tr * lanes, *dp = cp + n * lanes;                               \
                size_t o = s0 * n;                                                              \
                group_##SUF(a + o, b + o, c + o, d + o, n, ws, lanes, tr, w, cp, dp,            \
                            periodic ? dp + n * lanes : cp, periodic);                          \
            }                                                                                   \
        }                                                                                       \
    }

TRIDIAG_CPU(f32, float)
TRIDIAG_CPU(f64, double)

static kedr_status tridiag_cpu(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *g,
                               const void *a, const void *b, const void *c, void *d)
{
    size_t n = g->n, size = kedr_dtype_size(t), line = TRIDIAG_LINE / size, rows = 0, lanes, per;
    int threads = omp_get_max_threads(), periodic = g->periodic != 0;
    size_t cache = tridiag_cache(threads);
    if (g->layout == KEDR_TRIDIAG_CONTIGUOUS) { /* a tile, c', d' (and z) of the lanes */
        lanes = tridiag_lanes(n, g->count, size, 2 + periodic, 2 * line, line, cache, threads);
        if (t == KEDR_F32) /* the tiles cover all n rows, periodic ones the last too */
            rows = TRIDIAG_TILE_BYTES_F32 / (4 * lanes * size);
        else
            rows = 4 * n * lanes * size <= TRIDIAG_TILE_BYTES_F64 ? n : TRIDIAG_TILE_ROWS_F64;
        rows = rows < 1 ? 1 : rows < n ? rows : n;
        per = (4 * rows + (2 + periodic) * n) * lanes;
    } else { /* c' (and z) of the lanes; d' is in place */
        lanes = tridiag_lanes(n, g->count, size, 2 + periodic, TRIDIAG_BLOCK_MOST,
                              TRIDIAG_BLOCK_BYTES / size, cache, threads);
        per = (1 + periodic) * n * lanes;
    }
    per = (per + line - 1) / line * line;
    if (per > SIZE_MAX / size / (size_t)threads)
        return kedr_fail(KEDR_ERR_NOMEM, FN ": scratch of %zu unknowns a system overflows", n);
    void *work = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &work, per * size * (size_t)threads));
    if (t == KEDR_F32)
        tridiag_cpu_f32(g, a, b, c, d, work, per, lanes, rows);
    else
        tridiag_cpu_f64(g, a, b, c, d, work, per, lanes, rows);
    kedr_scratch_put(ctx, work);
    return KEDR_OK;
}

/* CR, PCR and CR-PCR on the cpu: each thread copies a system into its own work rows (a, b, c, d,
 * z and the second copy of PCR: 10 n elements), with a_0 and c_{m-1} of the leading m rows
 * zeroed (periodic: after they are taken into z's right side), solves by prim_tridiag_reduce,
 * borders as PRIM_TRIDIAG_THOMAS does, and copies x back. */
#define TRIDIAG_REDUCE_CPU(NAME, T, REDUCE)                                                  \
    static void NAME(const kedr_tridiag_desc *g, const T *a, const T *b, const T *c, T *d,     \
                     T *work, int threads)                                                     \
    {                                                                                          \
        size_t n = g->n, count = g->count, m = g->periodic ? n - 1 : n;                        \
        int inter = g->layout == KEDR_TRIDIAG_INTERLEAVED;                                     \
        size_t ss = inter ? 1 : n, st = inter ? count : 1;                                     \
        _Pragma("omp parallel num_threads(threads)")                                           \
        {                                                                                      \
            T *w = work + (size_t)omp_get_thread_num() * 10 * n;                               \
            T *wa = w, *wb = w + n, *wc = w + 2 * n, *wd = w + 3 * n, *wz = w + 4 * n;         \
            _Pragma("omp for schedule(static)")                                                \
            for (size_t s = 0; s < count; s++) {                                               \
                for (size_t i = 0; i < n; i++) {                                               \
                    size_t k = s * ss + i * st;                                                \
                    wa[i] = a[k], wb[i] = b[k], wc[i] = c[k], wd[i] = d[k];                    \
                }                                                                              \
                T *z = NULL;                                                                   \
                if (m == 0) { /* periodic n = 1 */                                             \
                    d[s * ss] = wd[0] / (wa[0] + wb[0] + wc[0]);                               \
                    continue;                                                                  \
                }                                                                              \
                if (g->periodic) { /* z's right side: -a_0 e_0 - c_{n-2} e_{m-1} */            \
                    for (size_t i = 0; i < m; i++)                                             \
                        wz[i] = 0;                                                             \
                    wz[0] = -wa[0];                                                            \
                    wz[m - 1] -= wc[m - 1];                                                    \
                    z = wz;                                                                    \
                }                                                                              \
                wa[0] = 0, wc[m - 1] = 0;                                                      \
                REDUCE(wa, wb, wc, wd, z, w + 5 * n, w + 6 * n, w + 7 * n, w + 8 * n,          \
                       w + 9 * n, m, (int)g->algorithm, 0, 1);                                 \
                if (g->periodic) {                                                             \
                    size_t l = n - 1;                                                          \
                    T xl = (wd[l] - wa[l] * wd[m - 1] - wc[l] * wd[0]) /                       \
                           (wb[l] + wa[l] * wz[m - 1] + wc[l] * wz[0]);                        \
                    wd[l] = xl;                                                                \
                    for (size_t i = 0; i < m; i++)                                             \
                        wd[i] += xl * wz[i];                                                   \
                }                                                                              \
                for (size_t i = 0; i < n; i++)                                                 \
                    d[s * ss + i * st] = wd[i];                                                \
            }                                                                                  \
        }                                                                                      \
    }

TRIDIAG_REDUCE_CPU(reduce_cpu_f32, float, prim_tridiag_reduce_f32)
TRIDIAG_REDUCE_CPU(reduce_cpu_f64, double, prim_tridiag_reduce_f64)

static kedr_status tridiag_reduce_cpu(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *g,
                                      const void *a, const void *b, const void *c, void *d)
{
    int threads = omp_get_max_threads();
    if ((size_t)threads > g->count)
        threads = (int)g->count;
    size_t size = kedr_dtype_size(t), elems = (size_t)threads * 10 * g->n;
    if (elems / 10 / (size_t)threads != g->n || elems > SIZE_MAX / size)
        return kedr_fail(KEDR_ERR_NOMEM, FN ": work rows of %zu unknowns overflow", g->n);
    void *work = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &work, elems * size));
    if (t == KEDR_F32)
        reduce_cpu_f32(g, a, b, c, d, work, threads);
    else
        reduce_cpu_f64(g, a, b, c, d, work, threads);
    kedr_scratch_put(ctx, work);
    return KEDR_OK;
}

/* CHUNKED on the cpu: each thread copies a system into its own work rows (a, b, c, d and the
 * interface rows ia .. iz: 2 n each at most; 9 n elements in all), runs prim_tridiag_chunked
 * on them alone (r = 0 of q = 1) with the chunk length the GPU would use, and copies x back.
 * Contiguous systems longer than one segment (prim_tridiag_segment_rows: 2048 f32, 1024 f64)
 * go through the streamed solver instead, straight from a, b, c, d (its work fits in the 9 n).
 * The same steps as the GPU's, so that the cpu tests check the chunking and its interface
 * (the GPU streams only systems that the chunked kernel does not hold: longer ones). */
#define TRIDIAG_CHUNKED_CPU(NAME, T, CHUNKED, STREAMED)                                       \
    static void NAME(const kedr_tridiag_desc *g, const T *a, const T *b, const T *c, T *d,     \
                     T *work, int threads)                                                     \
    {                                                                                          \
        size_t n = g->n, count = g->count;                                                     \
        size_t len = prim_tridiag_chunk_len(n, prim_tridiag_chunk_threads(                      \
                                                   n, PRIM_TRIDIAG_CHUNK_MOST));               \
        int inter = g->layout == KEDR_TRIDIAG_INTERLEAVED;                                     \
        size_t ss = inter ? 1 : n, st = inter ? count : 1;                                     \
        size_t rows = prim_tridiag_segment_rows(sizeof(T));                                    \
        _Pragma("omp parallel num_threads(threads)")                                           \
        {                                                                                      \
            T *w = work + (size_t)omp_get_thread_num() * 9 * n;                                \
            T *wa = w, *wb = w + n, *wc = w + 2 * n, *wd = w + 3 * n;                          \
            T *ia = w + 4 * n, *ib = ia + n, *ic = ib + n, *id = ic + n, *iz = id + n;         \
            _Pragma("omp for schedule(static)")                                                \
            for (size_t s = 0; s < count; s++) {                                               \
                if (!inter && n > rows) {                                                      \
                    STREAMED(a + s * n, b + s * n, c + s * n, d + s * n, n, rows,              \
                             g->periodic, w, 0, 1);                                            \
                    continue;                                                                  \
                }                                                                              \
                for (size_t i = 0; i < n; i++) {                                               \
                    size_t k = s * ss + i * st;                                                \
                    wa[i] = a[k], wb[i] = b[k], wc[i] = c[k], wd[i] = d[k];                    \
                }                                                                              \
                if (n == 1)                                                                    \
                    wd[0] /= g->periodic ? wa[0] + wb[0] + wc[0] : wb[0];                      \
                else                                                                           \
                    CHUNKED(wa, wb, wc, wd, n, len, g->periodic, ia, ib, ic, id, iz, 0, 1);    \
                for (size_t i = 0; i < n; i++)                                                 \
                    d[s * ss + i * st] = wd[i];                                                \
            }                                                                                  \
        }                                                                                      \
    }

TRIDIAG_CHUNKED_CPU(chunked_cpu_f32, float, prim_tridiag_chunked_f32, prim_tridiag_streamed_f32)
TRIDIAG_CHUNKED_CPU(chunked_cpu_f64, double, prim_tridiag_chunked_f64, prim_tridiag_streamed_f64)

static kedr_status tridiag_chunked_cpu(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *g,
                                       const void *a, const void *b, const void *c, void *d)
{
    int threads = omp_get_max_threads();
    if ((size_t)threads > g->count)
        threads = (int)g->count;
    size_t size = kedr_dtype_size(t), elems = (size_t)threads * 9 * g->n;
    if (elems / 9 / (size_t)threads != g->n || elems > SIZE_MAX / size)
        return kedr_fail(KEDR_ERR_NOMEM, FN ": work rows of %zu unknowns overflow", g->n);
    void *work = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &work, elems * size));
    if (t == KEDR_F32)
        chunked_cpu_f32(g, a, b, c, d, work, threads);
    else
        chunked_cpu_f64(g, a, b, c, d, work, threads);
    kedr_scratch_put(ctx, work);
    return KEDR_OK;
}

/* Every part of every system of sp on the cpu: the elimination, its interface rows into
 * ia .. id, and the completion from x. */
#define TRIDIAG_PARTS_CPU(REDUCE_NAME, COMPLETE_NAME, T, REDUCE, COMPLETE)                    \
    static void REDUCE_NAME(const prim_tridiag_split *sp, const T *a, const T *b, const T *c,  \
                            T *d, T *wa, T *wc, T *ia, T *ib, T *ic, T *id)                    \
    {                                                                                          \
        size_t count = sp->count, parts = sp->parts;                                           \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (size_t q = 0; q < count * parts; q++) {                                           \
            size_t s = q / parts, p = q % parts, lo = p * sp->len;                             \
            size_t len = p + 1 == parts ? sp->n - lo : sp->len;                                \
            size_t o = s * sp->ss + lo * sp->st, e = s * sp->ws + lo * sp->wt;                 \
            T row[6];                                                                          \
            REDUCE(a + o, b + o, c + o, d + o, sp->st, wa + e, wc + e, sp->wt, len, row);      \
            for (size_t j = 0; j < 2; j++) {                                                   \
                size_t k = (2 * p + j) * count + s;                                            \
                ia[k] = row[3 * j], ib[k] = 1, ic[k] = row[3 * j + 1], id[k] = row[3 * j + 2]; \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    static void COMPLETE_NAME(const prim_tridiag_split *sp, const T *wa, const T *wc,          \
                              const T *x, T *d)                                                \
    {                                                                                          \
        size_t count = sp->count, parts = sp->parts;                                           \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (size_t q = 0; q < count * parts; q++) {                                           \
            size_t s = q / parts, p = q % parts, lo = p * sp->len;                             \
            size_t len = p + 1 == parts ? sp->n - lo : sp->len;                                \
            size_t o = s * sp->ss + lo * sp->st, e = s * sp->ws + lo * sp->wt;                 \
            COMPLETE(wa + e, wc + e, sp->wt, d + o, sp->st, len, x[2 * p * count + s],         \
                     x[(2 * p + 1) * count + s]);                                              \
        }                                                                                      \
    }

TRIDIAG_PARTS_CPU(parts_reduce_f32, parts_complete_f32, float, prim_tridiag_part_reduce_f32,
                  prim_tridiag_part_complete_f32)
TRIDIAG_PARTS_CPU(parts_reduce_f64, parts_complete_f64, double, prim_tridiag_part_reduce_f64,
                  prim_tridiag_part_complete_f64)

/* The part elimination of sp on the context's back end; w holds wa then wc, wc at w_off
 * elements; the interface rows at ifc->a .. d. */
static kedr_status parts_reduce(kedr_ctx *ctx, kedr_dtype t, const prim_tridiag_split *sp,
                                const void *a, const void *b, const void *c, void *d, void *wa,
                                void *wc, const kedr_tridiag_iface *ifc)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_tridiag_part_reduce_cuda(ctx, t, sp, a, b, c, d, wa, wc, ifc->a, ifc->b,
                                             ifc->c, ifc->d);
#endif
    (void)ctx;
    if (t == KEDR_F32)
        parts_reduce_f32(sp, a, b, c, d, wa, wc, ifc->a, ifc->b, ifc->c, ifc->d);
    else
        parts_reduce_f64(sp, a, b, c, d, wa, wc, ifc->a, ifc->b, ifc->c, ifc->d);
    return KEDR_OK;
}

static kedr_status parts_complete(kedr_ctx *ctx, kedr_dtype t, const prim_tridiag_split *sp,
                                  const void *wa, const void *wc, const void *x, void *d)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_tridiag_part_complete_cuda(ctx, t, sp, wa, wc, x, d);
#endif
    (void)ctx;
    if (t == KEDR_F32)
        parts_complete_f32(sp, wa, wc, x, d);
    else
        parts_complete_f64(sp, wa, wc, x, d);
    return KEDR_OK;
}

/* The partitioned solve of whole systems on one back end: prim_tridiag_parts(n) parts, the
 * interface system of 2 rows a part (interleaved, periodic as the systems) by AUTO: Thomas on
 * the cpu; on cuda the tiles, or for long interface systems few in number the partitioned
 * solver again (a level deeper: 2 sqrt(n) rows a system in about 2 n^(1/4) parts). */
static kedr_status tridiag_partitioned(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *g,
                                       const void *a, const void *b, const void *c, void *d)
{
    size_t n = g->n, count = g->count, size = kedr_dtype_size(t), parts = prim_tridiag_parts(n);
    int inter = g->layout == KEDR_TRIDIAG_INTERLEAVED;
    size_t ss = inter ? 1 : n, st = inter ? count : 1;
    prim_tridiag_split sp = {n, count, ss, st, ss, st, parts, n / parts};
    size_t elems = n * count, rows = 2 * parts * count;
    char *w = NULL, *r = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, (void **)&w, 2 * elems * size));
    kedr_status s = kedr_scratch_get(ctx, (void **)&r, 4 * rows * size);
    if (s != KEDR_OK) {
        kedr_scratch_put(ctx, w);
        return s;
    }
    kedr_tridiag_iface ifc = {r, r + rows * size, r + 2 * rows * size, r + 3 * rows * size};
    kedr_tridiag_desc rd = {2 * parts, count, KEDR_TRIDIAG_INTERLEAVED, g->periodic,
                            KEDR_TRIDIAG_AUTO};
    s = parts_reduce(ctx, t, &sp, a, b, c, d, w, w + elems * size, &ifc);
    if (s == KEDR_OK)
        s = kedr_tridiag_solve(ctx, t, &rd, ifc.a, ifc.b, ifc.c, ifc.d);
    if (s == KEDR_OK)
        s = parts_complete(ctx, t, &sp, w, w + elems * size, ifc.d, d);
    /* On cuda the scratch may go back before the kernels ran: work later on the stream is
     * ordered after them (as in tridiag.cu). */
    kedr_scratch_put(ctx, r);
    kedr_scratch_put(ctx, w);
    return s;
}

/* Fails when [p, p + pbytes) and [d, d + dbytes) overlap. */
static kedr_status check_apart_ext(const char *fn, const void *p, size_t pbytes, const void *d,
                                   size_t dbytes, const char *name)
{
    uintptr_t x = (uintptr_t)p, y = (uintptr_t)d;
    if (x < y + dbytes && y < x + pbytes)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s overlaps d (d is overwritten while %s is "
                         "still read)", fn, name, name);
    return KEDR_OK;
}

/* Fails when [p, p + bytes) and [d, d + bytes) overlap. */
static kedr_status check_apart_in(const char *fn, const void *p, const void *d, size_t bytes,
                                  const char *name)
{
    return check_apart_ext(fn, p, bytes, d, bytes, name);
}

static kedr_status check_apart(const void *p, const void *d, size_t bytes, const char *name)
{
    return check_apart_in(FN, p, d, bytes, name);
}

static kedr_status check_desc(const kedr_tridiag_desc *g)
{
    if (!g)
        return kedr_fail(KEDR_ERR_INVALID, FN ": desc is NULL");
    if (g->n == 0)
        return kedr_fail(KEDR_ERR_INVALID, FN ": desc->n = 0: expected at least 1 unknown per "
                         "system");
    if (g->layout != KEDR_TRIDIAG_CONTIGUOUS && g->layout != KEDR_TRIDIAG_INTERLEAVED)
        return kedr_fail(KEDR_ERR_INVALID, FN ": desc->layout = %d: expected "
                         "KEDR_TRIDIAG_CONTIGUOUS or KEDR_TRIDIAG_INTERLEAVED", (int)g->layout);
    if (g->periodic != 0 && g->periodic != 1)
        return kedr_fail(KEDR_ERR_INVALID, FN ": desc->periodic = %d: expected 0 or 1",
                         g->periodic);
    if ((int)g->algorithm < KEDR_TRIDIAG_AUTO || (int)g->algorithm > KEDR_TRIDIAG_PCR_THOMAS)
        return kedr_fail(KEDR_ERR_INVALID, FN ": desc->algorithm = %d: expected "
                         "KEDR_TRIDIAG_AUTO, THOMAS, CR, PCR, CR_PCR, PARTITIONED, CHUNKED or "
                         "PCR_THOMAS",
                         (int)g->algorithm);
    return KEDR_OK;
}

kedr_status kedr_tridiag_solve(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *desc,
                               const void *a, const void *b, const void *c, void *d)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, FN ": ctx is NULL");
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPE_BIT(KEDR_F32) | KEDR_TYPE_BIT(KEDR_F64), FN,
                              "element"));
    KEDR_TRY(check_desc(desc));
    size_t size = kedr_dtype_size(t), n = desc->n, count = desc->count;
    if (count > SIZE_MAX / size / n)
        return kedr_fail(KEDR_ERR_INVALID, FN ": %zu systems of %zu unknowns overflow the "
                         "address space", count, n);
    size_t elems = n * count;
    KEDR_TRY(kedr_check_ptr(a, elems, FN, "a"));
    KEDR_TRY(kedr_check_ptr(b, elems, FN, "b"));
    KEDR_TRY(kedr_check_ptr(c, elems, FN, "c"));
    KEDR_TRY(kedr_check_ptr(d, elems, FN, "d"));
    if (elems == 0)
        return KEDR_OK;
    KEDR_TRY(check_apart(a, d, elems * size, "a"));
    KEDR_TRY(check_apart(b, d, elems * size, "b"));
    KEDR_TRY(check_apart(c, d, elems * size, "c"));
    kedr_tridiag_algorithm alg = desc->algorithm;
    if (alg == KEDR_TRIDIAG_PARTITIONED && n >= 2)
        return tridiag_partitioned(ctx, t, desc, a, b, c, d);
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx) && prim_tridiag_cuda_partitions(ctx, t, desc))
        return tridiag_partitioned(ctx, t, desc, a, b, c, d);
    if (KEDR_IS_CUDA(ctx))
        return prim_tridiag_cuda(ctx, t, desc, a, b, c, d);
#endif
    if (alg == KEDR_TRIDIAG_CR || alg == KEDR_TRIDIAG_PCR || alg == KEDR_TRIDIAG_CR_PCR)
        return tridiag_reduce_cpu(ctx, t, desc, a, b, c, d);
    if (alg == KEDR_TRIDIAG_CHUNKED)
        return tridiag_chunked_cpu(ctx, t, desc, a, b, c, d);
    return tridiag_cpu(ctx, t, desc, a, b, c, d); /* AUTO, THOMAS, PCR_THOMAS */
}

/* ---- the partitioned solver's parts ---------------------------------------------------- */

/* Checks what both part functions share and gives the part's place: sp (one part of len n),
 * the elements its arrays span, and w's. */
static kedr_status check_part(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_part *part,
                              const char *fn, prim_tridiag_split *sp, size_t *span)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPE_BIT(KEDR_F32) | KEDR_TYPE_BIT(KEDR_F64), fn,
                              "element"));
    if (!part)
        return kedr_fail(KEDR_ERR_INVALID, "%s: part is NULL", fn);
    size_t n = part->n, count = part->count;
    if (n < 2)
        return kedr_fail(KEDR_ERR_INVALID, "%s: part->n = %zu: expected at least 2 rows a part "
                         "(a part's first and last unknowns are its interface)", fn, n);
    if (part->layout != KEDR_TRIDIAG_CONTIGUOUS && part->layout != KEDR_TRIDIAG_INTERLEAVED)
        return kedr_fail(KEDR_ERR_INVALID, "%s: part->layout = %d: expected "
                         "KEDR_TRIDIAG_CONTIGUOUS or KEDR_TRIDIAG_INTERLEAVED", fn,
                         (int)part->layout);
    int inter = part->layout == KEDR_TRIDIAG_INTERLEAVED;
    size_t compact = inter ? count : n, stride = part->stride ? part->stride : compact;
    if (stride < compact)
        return kedr_fail(KEDR_ERR_INVALID, "%s: part->stride = %zu: expected 0 or at least %zu "
                         "(the %s)", fn, part->stride, compact,
                         inter ? "systems, count" : "rows of the part, n");
    size_t size = kedr_dtype_size(t), rows = inter ? n : count;
    if (count > SIZE_MAX / size / n / 2 || (count && rows - 1 > (SIZE_MAX / size - compact) /
                                                                  stride))
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu systems of %zu rows at stride %zu overflow "
                         "the address space", fn, count, n, stride);
    size_t ss = inter ? 1 : stride, st = inter ? stride : 1;
    prim_tridiag_split p = {n, count, ss, st, inter ? 1 : n, inter ? count : 1, 1, n};
    *sp = p;
    *span = count ? (rows - 1) * stride + compact : 0;
    return KEDR_OK;
}

kedr_status kedr_tridiag_part_reduce(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_part *part,
                                     const void *a, const void *b, const void *c, void *d,
                                     void *w, const kedr_tridiag_iface *iface)
{
    static const char *fn = "kedr_tridiag_part_reduce";
    prim_tridiag_split sp;
    size_t span = 0;
    KEDR_TRY(check_part(ctx, t, part, fn, &sp, &span));
    if (!iface)
        return kedr_fail(KEDR_ERR_INVALID, "%s: iface is NULL", fn);
    size_t size = kedr_dtype_size(t), elems = part->n * part->count, ni = 2 * part->count;
    KEDR_TRY(kedr_check_ptr(a, span, fn, "a"));
    KEDR_TRY(kedr_check_ptr(b, span, fn, "b"));
    KEDR_TRY(kedr_check_ptr(c, span, fn, "c"));
    KEDR_TRY(kedr_check_ptr(d, span, fn, "d"));
    KEDR_TRY(kedr_check_ptr(w, 2 * elems, fn, "w"));
    KEDR_TRY(kedr_check_ptr(iface->a, ni, fn, "iface->a"));
    KEDR_TRY(kedr_check_ptr(iface->b, ni, fn, "iface->b"));
    KEDR_TRY(kedr_check_ptr(iface->c, ni, fn, "iface->c"));
    KEDR_TRY(kedr_check_ptr(iface->d, ni, fn, "iface->d"));
    if (elems == 0)
        return KEDR_OK;
    KEDR_TRY(check_apart_in(fn, a, d, span * size, "a"));
    KEDR_TRY(check_apart_in(fn, b, d, span * size, "b"));
    KEDR_TRY(check_apart_in(fn, c, d, span * size, "c"));
    /* each with its own extent: w holds 2 elements a row, d the span */
    KEDR_TRY(check_apart_ext(fn, w, 2 * elems * size, d, span * size, "w"));
    char *wc = (char *)w + elems * size;
    return parts_reduce(ctx, t, &sp, a, b, c, d, w, wc, iface);
}

kedr_status kedr_tridiag_part_complete(kedr_ctx *ctx, kedr_dtype t,
                                       const kedr_tridiag_part *part, const void *w,
                                       const void *x, void *d)
{
    static const char *fn = "kedr_tridiag_part_complete";
    prim_tridiag_split sp;
    size_t span = 0;
    KEDR_TRY(check_part(ctx, t, part, fn, &sp, &span));
    size_t size = kedr_dtype_size(t), elems = part->n * part->count;
    KEDR_TRY(kedr_check_ptr(w, 2 * elems, fn, "w"));
    KEDR_TRY(kedr_check_ptr(x, 2 * part->count, fn, "x"));
    KEDR_TRY(kedr_check_ptr(d, span, fn, "d"));
    if (elems == 0)
        return KEDR_OK;
    KEDR_TRY(check_apart_ext(fn, w, 2 * elems * size, d, span * size, "w"));
    return parts_complete(ctx, t, &sp, w, (const char *)w + elems * size, x, d);
}
