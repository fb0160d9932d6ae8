/* kedr_reduce against a sequential reference: every type and op, the awkward sizes, several
 * seeds and input distributions, determinism, misaligned input, NaN handling and argument
 * errors. */
#include "test_util.h"

#include <float.h>
#include <omp.h>
#include <stdint.h>

enum { D_RANDOM, D_FEW, D_EQUAL, D_SORTED, D_REVERSE, D_SPECIAL, D_COUNT };
static const char *const dist_name[D_COUNT] = {"random", "few", "equal", "sorted", "reverse",
                                               "special"};
static const kedr_dtype types[] = {KEDR_U32, KEDR_U64, KEDR_I32, KEDR_F32, KEDR_F64};

/* A float of either sign and widely varying magnitude. */
static double wide(uint64_t *rng)
{
    double m = tu_uniform(rng) * 2 - 1;
    return ldexp(m, (int)(tu_next(rng) % 41) - 20);
}

/* Element i of distribution d, as the type's bits. D_SPECIAL (floats) mixes in -0.0, +-inf and
 * NaN; for integers it is the extremes of the type. */
static void fill(kedr_dtype t, int d, void *buf, size_t n, uint64_t seed)
{
    uint64_t rng = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_next(&rng);
        double f = 0;
        uint64_t u = 0;
        switch (d) {
        case D_RANDOM: u = r; f = wide(&rng); break;
        case D_FEW: u = r % 4; f = (double)(r % 4) * -0.75; break;
        case D_EQUAL: u = UINT64_MAX; f = 0.1; break;
        case D_SORTED: u = i * 7; f = (double)i * 0.5 - (double)n * 0.25; break;
        case D_REVERSE: u = (n - i) * 7; f = (double)(n - i) * 0.5 - (double)n * 0.25; break;
        case D_SPECIAL: {
            static const uint64_t iext[] = {0, 1, (uint64_t)INT32_MAX, (uint64_t)INT32_MIN,
                                            UINT32_MAX, UINT64_MAX, (uint64_t)1 << 63};
            static const double fext[] = {-0.0, 0.0, INFINITY, -INFINITY, NAN, 1.0, -2.0};
            u = iext[r % 7];
            f = r % 3 ? wide(&rng) : fext[r % 7];
            break;
        }
        }
        tu_store(t, buf, i, u, f);
    }
}

/* Sequential reference for all three ops at once. Integer sums wrap; float sums in long double,
 * with abs_sum = sum |x| for the error bound. Min and max skip NaNs. */
typedef struct {
    uint64_t u;    /* integer result, as the type's bits widened */
    long double f; /* float result */
    long double abs_sum;
} ref_result;

static void reference(kedr_dtype t, const void *buf, size_t n, ref_result r[3])
{
    memset(r, 0, 3 * sizeof *r);
    if (t == KEDR_F32 || t == KEDR_F64) {
        /* NaN and inf are counted apart: x87 arithmetic on them is very slow. */
        long double s = 0, a = 0;
        double lo = INFINITY, hi = -INFINITY;
        size_t nan = 0, pinf = 0, ninf = 0;
        for (size_t i = 0; i < n; i++) {
            double x = t == KEDR_F32 ? ((const float *)buf)[i] : ((const double *)buf)[i];
            if (isfinite(x)) {
                s += x;
                a += fabs(x);
            } else {
                nan += isnan(x) != 0;
                pinf += x == INFINITY;
                ninf += x == -INFINITY;
            }
            if (x < lo)
                lo = x;
            if (x > hi)
                hi = x;
        }
        if (nan || (pinf && ninf))
            s = NAN;
        else if (pinf || ninf)
            s = pinf ? INFINITY : -INFINITY;
        r[KEDR_OP_SUM].f = s;
        r[KEDR_OP_SUM].abs_sum = a;
        r[KEDR_OP_MIN].f = lo;
        r[KEDR_OP_MAX].f = hi;
        return;
    }
    if (t == KEDR_I32) {
        int32_t lo = INT32_MAX, hi = INT32_MIN;
        uint32_t s = 0;
        for (size_t i = 0; i < n; i++) {
            int32_t x = ((const int32_t *)buf)[i];
            s += (uint32_t)x;
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        r[KEDR_OP_SUM].u = s;
        r[KEDR_OP_MIN].u = (uint32_t)lo;
        r[KEDR_OP_MAX].u = (uint32_t)hi;
        return;
    }
    uint64_t s = 0, lo = t == KEDR_U32 ? UINT32_MAX : UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = t == KEDR_U32 ? ((const uint32_t *)buf)[i] : ((const uint64_t *)buf)[i];
        s += x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    r[KEDR_OP_SUM].u = t == KEDR_U32 ? (uint32_t)s : s;
    r[KEDR_OP_MIN].u = lo;
    r[KEDR_OP_MAX].u = hi;
}

/* Compares a result with the reference. Float sums: double accumulation of n terms in any
 * association order errs by at most (n - 1) * 2^-53 * sum|x| (Higham, first order); an f32
 * result adds its final rounding, 2^-24 relative. NaN and inf references must be matched. */
static int matches(kedr_dtype t, kedr_op op, const void *res, ref_result r, size_t n, char *why,
                   size_t len)
{
    if (t == KEDR_F32 || t == KEDR_F64) {
        long double got = t == KEDR_F32 ? *(const float *)res : *(const double *)res;
        if (isnan(r.f) || isinf(r.f)) {
            snprintf(why, len, "got %Lg, expected %Lg", got, r.f);
            return isnan(r.f) ? isnan(got) : got == r.f;
        }
        long double bound = 0;
        if (op == KEDR_OP_SUM) {
            bound = (long double)n * 0x1p-53L * r.abs_sum;
            if (t == KEDR_F32)
                bound += 0x1p-24L * fabsl(r.f) + FLT_TRUE_MIN;
        }
        snprintf(why, len, "got %.17Lg, expected %.17Lg (bound %.3Lg)", got, r.f, bound);
        return fabsl(got - r.f) <= bound;
    }
    uint64_t got = t == KEDR_U64 ? *(const uint64_t *)res : *(const uint32_t *)res;
    snprintf(why, len, "got %llu (0x%llx), expected %llu", (unsigned long long)got,
             (unsigned long long)got, (unsigned long long)r.u);
    return got == r.u;
}

/* Every op over one input. */
static void check_ops(kedr_ctx *ctx, kedr_dtype t, int d, size_t n, uint64_t seed)
{
    size_t es = kedr_dtype_size(t);
    void *h = tu_host_alloc(n * es);
    fill(t, d, h, n, seed);
    void *din = tu_upload(ctx, h, n * es);
    ref_result ref[3];
    reference(t, h, n, ref);
    for (int op = KEDR_OP_SUM; op <= KEDR_OP_MAX; op++) {
        ref_result r = ref[op];
        unsigned char res1[8], res2[8];
        memset(res1, TU_POISON_BYTE, sizeof res1);
        memset(res2, 0x5A, sizeof res2);
        char why[160];
        TU_OK(kedr_reduce(ctx, t, (kedr_op)op, din, n, res1));
        TU_CHECK(matches(t, (kedr_op)op, res1, r, n, why, sizeof why),
                 "%s %s %s %s n=%zu seed=%llu: %s", kedr_backend_name(kedr_ctx_backend(ctx)),
                 kedr_dtype_name(t), kedr_op_name((kedr_op)op), dist_name[d], n,
                 (unsigned long long)seed, why);
        /* Determinism: a second call gives the same bits. */
        TU_OK(kedr_reduce(ctx, t, (kedr_op)op, din, n, res2));
        TU_CHECK(memcmp(res1, res2, es) == 0, "%s %s %s n=%zu: second call differs",
                 kedr_dtype_name(t), kedr_op_name((kedr_op)op), dist_name[d], n);
    }
    kedr_free(ctx, din);
    free(h);
}

/* The association order depends only on n: not on the thread count (cpu), nor on the alignment
 * of the input (cuda takes another load path when in is not 16-byte aligned). */
static void check_order_independence(kedr_ctx *ctx, kedr_dtype t, size_t n, uint64_t seed)
{
    size_t es = kedr_dtype_size(t);
    void *h = tu_host_alloc((n + 1) * es);
    fill(t, D_RANDOM, (char *)h + es, n, seed);
    void *d = tu_upload(ctx, h, (n + 1) * es);
    unsigned char aligned[8], shifted[8];
    TU_OK(kedr_reduce(ctx, t, KEDR_OP_SUM, (char *)d + es, n, shifted));
    TU_OK(kedr_upload(ctx, d, (char *)h + es, n * es));
    TU_OK(kedr_reduce(ctx, t, KEDR_OP_SUM, d, n, aligned));
    TU_CHECK(memcmp(aligned, shifted, es) == 0, "%s sum n=%zu: depends on input alignment",
             kedr_dtype_name(t), n);
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CPU) {
        int threads = omp_get_max_threads();
        unsigned char one[8];
        omp_set_num_threads(1);
        TU_OK(kedr_reduce(ctx, t, KEDR_OP_SUM, d, n, one));
        omp_set_num_threads(threads);
        TU_CHECK(memcmp(aligned, one, es) == 0, "%s sum n=%zu: depends on the thread count",
                 kedr_dtype_name(t), n);
    }
    kedr_free(ctx, d);
    free(h);
}

static void check_identities(kedr_ctx *ctx)
{
    uint32_t u32;
    uint64_t u64;
    int32_t i32;
    float f32;
    double f64;
    TU_OK(kedr_reduce(ctx, KEDR_U32, KEDR_OP_SUM, NULL, 0, &u32));
    TU_CHECK(u32 == 0, "u32 sum of nothing = %u", u32);
    TU_OK(kedr_reduce(ctx, KEDR_U32, KEDR_OP_MIN, NULL, 0, &u32));
    TU_CHECK(u32 == UINT32_MAX, "u32 min of nothing = %u", u32);
    TU_OK(kedr_reduce(ctx, KEDR_U64, KEDR_OP_MIN, NULL, 0, &u64));
    TU_CHECK(u64 == UINT64_MAX, "u64 min of nothing");
    TU_OK(kedr_reduce(ctx, KEDR_U64, KEDR_OP_MAX, NULL, 0, &u64));
    TU_CHECK(u64 == 0, "u64 max of nothing");
    TU_OK(kedr_reduce(ctx, KEDR_I32, KEDR_OP_MIN, NULL, 0, &i32));
    TU_CHECK(i32 == INT32_MAX, "i32 min of nothing = %d", i32);
    TU_OK(kedr_reduce(ctx, KEDR_I32, KEDR_OP_MAX, NULL, 0, &i32));
    TU_CHECK(i32 == INT32_MIN, "i32 max of nothing = %d", i32);
    TU_OK(kedr_reduce(ctx, KEDR_F32, KEDR_OP_MIN, NULL, 0, &f32));
    TU_CHECK(f32 == INFINITY, "f32 min of nothing = %g", f32);
    TU_OK(kedr_reduce(ctx, KEDR_F64, KEDR_OP_MAX, NULL, 0, &f64));
    TU_CHECK(f64 == -INFINITY, "f64 max of nothing = %g", f64);
    TU_OK(kedr_reduce(ctx, KEDR_F64, KEDR_OP_SUM, NULL, 0, &f64));
    TU_CHECK(f64 == 0 && !signbit(f64), "f64 sum of nothing = %g", f64);
}

/* NaNs: skipped by min/max (all NaN gives the identity), propagated by sums. */
static void check_nan(kedr_ctx *ctx)
{
    const size_t n = 1000;
    float h[1000];
    for (size_t i = 0; i < n; i++)
        h[i] = NAN;
    float *d = tu_upload(ctx, h, sizeof h);
    float r;
    TU_OK(kedr_reduce(ctx, KEDR_F32, KEDR_OP_MIN, d, n, &r));
    TU_CHECK(r == INFINITY, "min of all NaN = %g, expected +inf", r);
    TU_OK(kedr_reduce(ctx, KEDR_F32, KEDR_OP_MAX, d, n, &r));
    TU_CHECK(r == -INFINITY, "max of all NaN = %g, expected -inf", r);
    h[0] = 3.0f;   /* first, where an order-dependent NaN rule would fail */
    h[n - 1] = -5.0f;
    h[n / 2] = 7.0f;
    TU_OK(kedr_upload(ctx, d, h, sizeof h));
    TU_OK(kedr_reduce(ctx, KEDR_F32, KEDR_OP_MIN, d, n, &r));
    TU_CHECK(r == -5.0f, "min with NaNs = %g, expected -5", r);
    TU_OK(kedr_reduce(ctx, KEDR_F32, KEDR_OP_MAX, d, n, &r));
    TU_CHECK(r == 7.0f, "max with NaNs = %g, expected 7", r);
    TU_OK(kedr_reduce(ctx, KEDR_F32, KEDR_OP_SUM, d, n, &r));
    TU_CHECK(isnan(r), "sum with NaNs = %g, expected NaN", r);
    kedr_free(ctx, d);
}

static void check_errors(kedr_ctx *ctx)
{
    uint32_t r, x = 1;
    void *d = tu_upload(ctx, &x, sizeof x);
    kedr_status s = kedr_reduce(ctx, KEDR_U32, KEDR_OP_SUM, NULL, 5, &r);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL in: %s", kedr_status_name(s));
    s = kedr_reduce(ctx, KEDR_U32, KEDR_OP_SUM, d, 1, NULL);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL result: %s", kedr_status_name(s));
    s = kedr_reduce(ctx, (kedr_dtype)17, KEDR_OP_SUM, d, 1, &r);
    TU_CHECK(s == KEDR_ERR_UNSUPPORTED && *kedr_last_error(), "bad dtype: %s",
             kedr_status_name(s));
    s = kedr_reduce(ctx, KEDR_U32, (kedr_op)9, d, 1, &r);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "bad op: %s", kedr_status_name(s));
    s = kedr_reduce(NULL, KEDR_U32, KEDR_OP_SUM, d, 1, &r);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL ctx: %s", kedr_status_name(s));
    kedr_free(ctx, d);
}

int main(void)
{
    kedr_backend backends[2];
    int nb = tu_backends(backends);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(backends[b]);
        check_identities(ctx);
        check_nan(ctx);
        check_errors(ctx);
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
            for (size_t si = 0; si < TU_NSIZES; si++)
                for (int d = 0; d < D_COUNT; d++) {
                    size_t n = tu_sizes[si];
                    /* The largest sizes take three of the distributions, to keep the test fast. */
                    if (n > 100000 && d != D_RANDOM && d != D_SPECIAL &&
                        d != (si % 2 ? D_SORTED : D_FEW))
                        continue;
                    for (uint64_t seed = 1; seed <= (n > 5000 ? 1u : 3u); seed++)
                        check_ops(ctx, types[ti], d, n, seed * 1000 + si);
                }
            check_ops(ctx, types[ti], ti % 2 ? D_SPECIAL : D_RANDOM, TU_LARGE, 77);
            check_order_independence(ctx, types[ti], tu_scale(1000003, 100003), 79);
            check_order_independence(ctx, types[ti], 33, 80);
        }
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_reduce");
}
