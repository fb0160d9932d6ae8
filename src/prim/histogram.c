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

/* Counts in[begin..end) into hist with the bin function the spec calls for; out-of-range
 * samples are not counted. With atomic set the increments are atomic (hist shared between
 * threads). The loops read their own copy of the spec: through the caller's pointer every field
 * would be reloaded after each increment, since a uint32_t store may alias h->bins. */
#define HIST_LOOP(T, BIN)                                                       \
    do {                                                                        \
        const T *x_ = (const T *)in;                                            \
        uint32_t bins_ = h->bins;                                               \
        if (atomic) {                                                           \
            for (size_t i = begin; i < end; i++) {                              \
                uint32_t k = BIN(x_[i], h);                                     \
                if (k < bins_) {                                                \
                    _Pragma("omp atomic") hist[k]++;                            \
                }                                                               \
            }                                                                   \
        } else {                                                                \
            for (size_t i = begin; i < end; i++) {                              \
                uint32_t k = BIN(x_[i], h);                                     \
                if (k < bins_)                                                  \
                    hist[k]++;                                                  \
            }                                                                   \
        }                                                                       \
    } while (0)

/* The same into HIST_SUB private sub-histograms of bins + 1 counters each, sample i into
 * sub-histogram i % HIST_SUB: consecutive samples of one bin then increment different
 * counters, so an increment rarely waits for the one before it to reach memory (the usual cpu
 * histogram trick). The last counter of each sub-histogram takes the out-of-range samples
 * (the bin functions return bins for them), which spares a branch per sample. */
#define HIST_SUB 4
#define HIST_SUB_LOOP(T, BIN)                                                   \
    do {                                                                        \
        const T *x_ = (const T *)in;                                            \
        size_t s1 = (size_t)h->bins + 1, i = begin;                             \
        uint32_t *h0 = hist, *h1 = h0 + s1, *h2 = h1 + s1, *h3 = h2 + s1;       \
        for (; i + HIST_SUB <= end; i += HIST_SUB) {                            \
            h0[BIN(x_[i], h)]++;                                                \
            h1[BIN(x_[i + 1], h)]++;                                            \
            h2[BIN(x_[i + 2], h)]++;                                            \
            h3[BIN(x_[i + 3], h)]++;                                            \
        }                                                                       \
        for (; i < end; i++)                                                    \
            h0[BIN(x_[i], h)]++;                                                \
    } while (0)

#define HIST_INT_LOOPS(LOOP, T)                                                 \
    switch (h->mode) {                                                          \
    case PRIM_HIST_SHIFT: LOOP(T, prim_hist_shift); break;                      \
    case PRIM_HIST_MUL32: LOOP(T, prim_hist_mul32); break;                      \
    case PRIM_HIST_MUL64: LOOP(T, prim_hist_mul64); break;                      \
    default: LOOP(T, prim_hist_mul128); break;                                  \
    }

#define HIST_TYPE_LOOPS(LOOP)                                                   \
    switch (t) {                                                                \
    case KEDR_U32: HIST_INT_LOOPS(LOOP, uint32_t); break;                       \
    case KEDR_I32: HIST_INT_LOOPS(LOOP, int32_t); break;                        \
    case KEDR_F32: LOOP(float, prim_hist_real); break;                          \
    default: LOOP(double, prim_hist_real); break;                               \
    }

static void hist_range(kedr_dtype t, const void *in, size_t begin, size_t end,
                       const prim_hist_spec *spec, uint32_t *hist, int atomic)
{
    const prim_hist_spec local = *spec, *h = &local;
    HIST_TYPE_LOOPS(HIST_LOOP)
}

/* hist: HIST_SUB x (bins + 1) counters, zeroed by the caller. */
static void hist_range_sub(kedr_dtype t, const void *in, size_t begin, size_t end,
                           const prim_hist_spec *spec, uint32_t *hist)
{
    const prim_hist_spec local = *spec, *h = &local;
    HIST_TYPE_LOOPS(HIST_SUB_LOOP)
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
    if (n < HIST_SERIAL_N || bins > HIST_PRIVATE_MAX_BINS ||
        (size_t)bins * HIST_SUB * threads > n) {
        memset(counts, 0, (size_t)bins * sizeof *counts);
        if (n < HIST_SERIAL_N || threads == 1) {
            hist_range(t, in, 0, n, h, counts, 0);
            return KEDR_OK;
        }
#pragma omp parallel num_threads(threads)
        {
            size_t begin, end;
            thread_span(n, omp_get_num_threads(), omp_get_thread_num(), &begin, &end);
            hist_range(t, in, begin, end, h, counts, 1);
        }
        return KEDR_OK;
    }
    /* Each thread owns HIST_SUB sub-histograms; bins + 1 counters each, see HIST_SUB_LOOP. */
    size_t per_thread = (size_t)HIST_SUB * (bins + 1);
    uint32_t *priv = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, (void **)&priv, (size_t)threads * per_thread * sizeof *priv));
    int used = threads;
#pragma omp parallel num_threads(threads)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
#pragma omp single
        used = nt;
        uint32_t *mine = priv + (size_t)id * per_thread;
        memset(mine, 0, per_thread * sizeof *mine);
        size_t begin, end;
        thread_span(n, nt, id, &begin, &end);
        hist_range_sub(t, in, begin, end, h, mine);
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long long b = 0; b < (long long)bins; b++) {
        uint32_t sum = 0;
        for (size_t k = 0; k < (size_t)used * HIST_SUB; k++)
            sum += priv[k * (bins + 1) + (size_t)b];
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
