/* kedr_tridiag_solve: argument checks, the cpu version and the dispatch.
 *
 * cpu: the Thomas algorithm of tridiag_cuda.h. Contiguous systems are solved one per iteration
 * of a parallel loop. Interleaved systems are taken in blocks of TRIDIAG_BLOCK neighbours: each
 * elimination step runs over the block's systems in an inner loop that reads consecutive
 * elements, which the compiler vectorizes, and the block's rows stay in cache between the
 * forward and the backward sweep. */
#include "core/internal.h"
#include "prim/tridiag_cuda.h"

#include <omp.h>
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
 * interface system of 2 rows a part (interleaved, periodic as the systems) by Thomas. */
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
                            KEDR_TRIDIAG_THOMAS};
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
