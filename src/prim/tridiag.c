/* kedr_tridiag_solve: argument checks, the cpu version and the dispatch.
 *
 * cpu: the Thomas algorithm of tridiag_cuda.h. Contiguous systems are solved one per iteration
 * of a parallel loop. Interleaved systems are taken in blocks of TRIDIAG_BLOCK neighbours: each
 * elimination step runs over the block's systems in an inner loop that reads consecutive
 * elements, which the compiler vectorizes, and the block's rows stay in cache between the
 * forward and the backward sweep. */
#include "core/internal.h"
#include "prim/tridiag_cuda.h"

#include <stdint.h>

#define FN "kedr_tridiag_solve"

/* Systems of an interleaved block: 256 x 8 bytes x 5 arrays = 10 KB per row of the block. */
#define TRIDIAG_BLOCK 256

/* Interleaved systems s0 .. s1-1 of count; element (s, i) at i * count + s, the same in cp and
 * zp. The steps of PRIM_TRIDIAG_THOMAS, with the system loop innermost. */
#define TRIDIAG_INTERLEAVED(NAME, T)                                                          \
    static void NAME(const T *a, const T *b, const T *c, T *d, T *cp, T *zp, size_t n,        \
                     size_t count, size_t s0, size_t s1, int periodic)                         \
    {                                                                                          \
        size_t m = periodic ? n - 1 : n, l = (n - 1) * count;                                  \
        for (size_t s = s0; s < s1; s++) {                                                     \
            T r = (T)1 / b[s];                                                                 \
            cp[s] = c[s] * r;                                                                  \
            d[s] *= r;                                                                         \
            if (periodic)                                                                      \
                zp[s] = (-a[s] - (m == 1 ? c[s] : (T)0)) * r;                                  \
        }                                                                                      \
        for (size_t i = 1; i < m; i++) {                                                       \
            size_t k = i * count, p = k - count;                                               \
            T zrhs = i == m - 1 ? (T)1 : (T)0; /* z's right side is -c_{n-2} on row m-1 */    \
            for (size_t s = s0; s < s1; s++) {                                                 \
                T ai = a[k + s], r = (T)1 / (b[k + s] - ai * cp[p + s]);                       \
                d[k + s] = (d[k + s] - ai * d[p + s]) * r;                                     \
                if (periodic)                                                                  \
                    zp[k + s] = (-zrhs * c[k + s] - ai * zp[p + s]) * r;                       \
                cp[k + s] = c[k + s] * r;                                                      \
            }                                                                                  \
        }                                                                                      \
        for (size_t i = m - 1; i-- > 0;) {                                                     \
            size_t k = i * count, q = k + count;                                               \
            for (size_t s = s0; s < s1; s++) {                                                 \
                d[k + s] -= cp[k + s] * d[q + s];                                              \
                if (periodic)                                                                  \
                    zp[k + s] -= cp[k + s] * zp[q + s];                                        \
            }                                                                                  \
        }                                                                                      \
        if (!periodic)                                                                         \
            return;                                                                            \
        size_t y = (m - 1) * count;                                                            \
        for (size_t s = s0; s < s1; s++)                                                       \
            d[l + s] = (d[l + s] - a[l + s] * d[y + s] - c[l + s] * d[s]) /                    \
                       (b[l + s] + a[l + s] * zp[y + s] + c[l + s] * zp[s]);                   \
        for (size_t i = 0; i < m; i++)                                                         \
            for (size_t s = s0; s < s1; s++)                                                   \
                d[i * count + s] += d[l + s] * zp[i * count + s];                              \
    }

TRIDIAG_INTERLEAVED(interleaved_f32, float)
TRIDIAG_INTERLEAVED(interleaved_f64, double)

/* The whole batch on the cpu; cp and zp (periodic only) hold n * count elements each. */
#define TRIDIAG_CPU(NAME, T, THOMAS, INTERLEAVED)                                             \
    static void NAME(const kedr_tridiag_desc *g, const T *a, const T *b, const T *c, T *d,     \
                     T *cp, T *zp)                                                             \
    {                                                                                          \
        size_t n = g->n, count = g->count;                                                     \
        int periodic = g->periodic != 0;                                                       \
        if (g->layout == KEDR_TRIDIAG_CONTIGUOUS) {                                            \
            _Pragma("omp parallel for schedule(static)")                                       \
            for (size_t s = 0; s < count; s++)                                                 \
                THOMAS(a + s * n, b + s * n, c + s * n, d + s * n, cp + s * n,                 \
                       periodic ? zp + s * n : NULL, n, 1, periodic);                          \
            return;                                                                            \
        }                                                                                      \
        if (n == 1) { /* no elimination: every system is one division */                       \
            for (size_t s = 0; s < count; s++)                                                 \
                d[s] /= periodic ? a[s] + b[s] + c[s] : b[s];                                  \
            return;                                                                            \
        }                                                                                      \
        size_t blocks = (count + TRIDIAG_BLOCK - 1) / TRIDIAG_BLOCK;                           \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (size_t k = 0; k < blocks; k++) {                                                  \
            size_t s0 = k * TRIDIAG_BLOCK;                                                     \
            size_t s1 = count - s0 < TRIDIAG_BLOCK ? count : s0 + TRIDIAG_BLOCK;               \
            INTERLEAVED(a, b, c, d, cp, zp, n, count, s0, s1, periodic);                       \
        }                                                                                      \
    }

TRIDIAG_CPU(tridiag_cpu_f32, float, prim_tridiag_thomas_f32, interleaved_f32)
TRIDIAG_CPU(tridiag_cpu_f64, double, prim_tridiag_thomas_f64, interleaved_f64)

static kedr_status tridiag_cpu(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *g,
                               const void *a, const void *b, const void *c, void *d)
{
    size_t elems = g->n * g->count, size = kedr_dtype_size(t);
    void *cp = NULL, *zp = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &cp, elems * size));
    if (g->periodic) {
        kedr_status s = kedr_scratch_get(ctx, &zp, elems * size);
        if (s != KEDR_OK) {
            kedr_scratch_put(ctx, cp);
            return s;
        }
    }
    if (t == KEDR_F32)
        tridiag_cpu_f32(g, a, b, c, d, cp, zp);
    else
        tridiag_cpu_f64(g, a, b, c, d, cp, zp);
    kedr_scratch_put(ctx, cp);
    if (zp)
        kedr_scratch_put(ctx, zp);
    return KEDR_OK;
}

/* Fails when [p, p + bytes) and [d, d + bytes) overlap. */
static kedr_status check_apart(const void *p, const void *d, size_t bytes, const char *name)
{
    uintptr_t x = (uintptr_t)p, y = (uintptr_t)d;
    if (x < y + bytes && y < x + bytes)
        return kedr_fail(KEDR_ERR_INVALID, FN ": %s overlaps d (d is overwritten with the "
                         "solutions while %s is still read)", name, name);
    return KEDR_OK;
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
    if (g->algorithm != KEDR_TRIDIAG_AUTO && g->algorithm != KEDR_TRIDIAG_THOMAS)
        return kedr_fail(KEDR_ERR_INVALID, FN ": desc->algorithm = %d: expected "
                         "KEDR_TRIDIAG_AUTO or KEDR_TRIDIAG_THOMAS", (int)g->algorithm);
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
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_tridiag_cuda(ctx, t, desc, a, b, c, d);
#endif
    return tridiag_cpu(ctx, t, desc, a, b, c, d);
}
