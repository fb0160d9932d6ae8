/* kedr_histogram_even: argument checks, the bin arithmetic set-up, the cpu version and the
 * dispatch. The bin of a sample is computed by the inline functions of histogram_cuda.h, the
 * same ones the cuda version uses. */
#include "core/internal.h"
#include "prim/histogram_cuda.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#define FN "kedr_histogram_even"

/* Integer bounds must be integers small enough that x - lo cannot overflow. */
#define PRIM_HIST_INT_LIMIT 9007199254740992.0 /* 2^53 */

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static kedr_status hist_spec_int(kedr_dtype t, double lo, double hi, uint32_t bins,
                                 prim_hist_spec *h)
{
    if (lo != floor(lo) || hi != floor(hi) || fabs(lo) > PRIM_HIST_INT_LIMIT ||
        fabs(hi) > PRIM_HIST_INT_LIMIT)
        return kedr_fail(KEDR_ERR_INVALID,
                         FN ": lo = %.17g and hi = %.17g must be integers of magnitude at most "
                            "2^53 for %s samples",
                         lo, hi, kedr_dtype_name(t));
    h->lo = (int64_t)lo;
    h->range = (uint64_t)((int64_t)hi - h->lo);
    uint64_t g = gcd_u64(bins, h->range);
    h->num = bins / g;
    h->den = h->range / g;
    if ((h->den & (h->den - 1)) == 0 && h->range - 1 <= UINT64_MAX / h->num) {
        h->mode = PRIM_HIST_SHIFT;
        h->shift = 0;
        while (((uint64_t)1 << h->shift) < h->den)
            h->shift++;
    } else if (h->den <= UINT32_MAX && h->range - 1 <= UINT32_MAX / h->num) {
        h->mode = PRIM_HIST_MUL32;
        h->recip = UINT32_MAX / h->den;
    } else if (h->range - 1 <= UINT64_MAX / h->num) {
        h->mode = PRIM_HIST_MUL64;
        h->recip = UINT64_MAX / h->den;
    } else {
        h->mode = PRIM_HIST_MUL128;
    }
    return KEDR_OK;
}

static kedr_status hist_spec(kedr_dtype t, double lo, double hi, uint32_t bins, prim_hist_spec *h)
{
    memset(h, 0, sizeof *h);
    if (bins == 0)
        return kedr_fail(KEDR_ERR_INVALID, FN ": bins is 0 (expected at least 1)");
    if (!isfinite(lo) || !isfinite(hi) || !(lo < hi))
        return kedr_fail(KEDR_ERR_INVALID,
                         FN ": lo = %.17g, hi = %.17g: expected finite bounds with lo < hi", lo, hi);
    h->bins = bins;
    if (t == KEDR_U32 || t == KEDR_I32)
        return hist_spec_int(t, lo, hi, bins, h);
    h->mode = PRIM_HIST_REAL;
    h->flo = lo;
    h->fhi = hi;
    h->scale = (double)bins / (hi - lo);
    if (!isfinite(h->scale) || !(h->scale > 0))
        return kedr_fail(KEDR_ERR_INVALID,
                         FN ": bins / (hi - lo) = %u / %.17g is not a finite positive number",
                         bins, hi - lo);
    return KEDR_OK;
}

/* Counts in[begin..end) into hist with the bin function the spec calls for. With atomic set the
 * increments are atomic (hist shared between threads). */
#define HIST_LOOP(T, BIN)                                                       \
    do {                                                                        \
        const T *x_ = (const T *)in;                                            \
        for (size_t i = begin; i < end; i++) {                                  \
            uint32_t k = BIN(x_[i], h);                                         \
            if (k < h->bins) {                                                  \
                if (atomic) {                                                   \
                    _Pragma("omp atomic") hist[k]++;                            \
                } else {                                                        \
                    hist[k]++;                                                  \
                }                                                               \
            }                                                                   \
        }                                                                       \
    } while (0)

#define HIST_INT_LOOPS(T)                                                       \
    switch (h->mode) {                                                          \
    case PRIM_HIST_SHIFT: HIST_LOOP(T, prim_hist_shift); break;                 \
    case PRIM_HIST_MUL32: HIST_LOOP(T, prim_hist_mul32); break;                 \
    case PRIM_HIST_MUL64: HIST_LOOP(T, prim_hist_mul64); break;                 \
    default: HIST_LOOP(T, prim_hist_mul128); break;                             \
    }

static void hist_range(kedr_dtype t, const void *in, size_t begin, size_t end,
                       const prim_hist_spec *h, uint32_t *hist, int atomic)
{
    switch (t) {
    case KEDR_U32: HIST_INT_LOOPS(uint32_t); break;
    case KEDR_I32: HIST_INT_LOOPS(int32_t); break;
    case KEDR_F32: HIST_LOOP(float, prim_hist_real); break;
    default: HIST_LOOP(double, prim_hist_real); break;
    }
}

/* The contiguous share of n samples that thread id of nt counts. */
static void thread_span(size_t n, int nt, int id, size_t *begin, size_t *end)
{
    size_t chunk = (n + (size_t)nt - 1) / (size_t)nt;
    *begin = chunk * (size_t)id < n ? chunk * (size_t)id : n;
    *end = *begin + chunk < n ? *begin + chunk : n;
}

/* Below this many samples one thread does it all. */
#define HIST_SERIAL_N ((size_t)1 << 15)
/* Private per-thread histograms up to this many bins; beyond, atomic increments into counts. */
#define HIST_PRIVATE_MAX_BINS ((uint32_t)1 << 16)

static kedr_status hist_cpu(kedr_ctx *ctx, kedr_dtype t, const void *in, size_t n,
                            const prim_hist_spec *h, uint32_t *counts)
{
    uint32_t bins = h->bins;
    int threads = ctx->threads > 0 ? ctx->threads : 1;
    if (n < HIST_SERIAL_N || threads == 1) {
        memset(counts, 0, (size_t)bins * sizeof *counts);
        hist_range(t, in, 0, n, h, counts, 0);
        return KEDR_OK;
    }
    if (bins > HIST_PRIVATE_MAX_BINS || (size_t)bins * threads > n) {
        memset(counts, 0, (size_t)bins * sizeof *counts);
#pragma omp parallel num_threads(threads)
        {
            size_t begin, end;
            thread_span(n, omp_get_num_threads(), omp_get_thread_num(), &begin, &end);
            hist_range(t, in, begin, end, h, counts, 1);
        }
        return KEDR_OK;
    }
    uint32_t *priv = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, (void **)&priv, (size_t)threads * bins * sizeof *priv));
    int used = threads;
#pragma omp parallel num_threads(threads)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
#pragma omp single
        used = nt;
        uint32_t *mine = priv + (size_t)id * bins;
        memset(mine, 0, (size_t)bins * sizeof *mine);
        size_t begin, end;
        thread_span(n, nt, id, &begin, &end);
        hist_range(t, in, begin, end, h, mine, 0);
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long long b = 0; b < (long long)bins; b++) {
        uint32_t sum = 0;
        for (int k = 0; k < used; k++)
            sum += priv[(size_t)k * bins + (size_t)b];
        counts[b] = sum;
    }
    kedr_scratch_put(ctx, priv);
    return KEDR_OK;
}

kedr_status kedr_histogram_even(kedr_ctx *ctx, kedr_dtype t, const void *in, size_t n, double lo,
                                double hi, uint32_t bins, uint32_t *counts)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, FN ": ctx is NULL");
    KEDR_TRY(kedr_check_dtype(t,
                              KEDR_TYPE_BIT(KEDR_U32) | KEDR_TYPE_BIT(KEDR_I32) |
                                  KEDR_TYPE_BIT(KEDR_F32) | KEDR_TYPE_BIT(KEDR_F64),
                              FN, "sample"));
    KEDR_TRY(kedr_check_ptr(in, n, FN, "in"));
    if (!counts)
        return kedr_fail(KEDR_ERR_INVALID, FN ": counts is NULL (bins = %u)", bins);
    prim_hist_spec spec;
    KEDR_TRY(hist_spec(t, lo, hi, bins, &spec));
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_histogram_cuda(ctx, t, in, n, &spec, counts);
#endif
    return hist_cpu(ctx, t, in, n, &spec, counts);
}
