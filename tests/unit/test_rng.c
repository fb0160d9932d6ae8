/* The Philox4x32-10 generator and the bulk random fills.
 *
 * - Known-answer vectors of Salmon et al. (Random123 kat_vectors) on the host, and through the
 *   U32 fill on every back end (on cuda: computed inside a kernel).
 * - Every element of every fill, at the awkward sizes and at misaligned output addresses, against
 *   a sequential reference written with the inline functions of kedr/rng.h. Uniform fills (U32,
 *   F32, F64) must match bit for bit on every back end. Normal and Maxwellian fills must match bit
 *   for bit on the cpu; on cuda log and sincospi differ from the host's libm in the last places,
 *   so there a normal z = rad * cos(2 pi u2) may differ by at most NORMAL_TOL * rad (absolute),
 *   with rad = sqrt(-2 log u1) <= 8.6: the host rounds 2 pi and 2 pi u2 (an argument error up to
 *   ~1.4e-15, which moves sin/cos by as much, however small their value), and each of log, sqrt,
 *   cos contributes an ulp or two. F32 results must lie between the float roundings of z -+ that
 *   bound. The largest difference seen is printed.
 * - Statistics at n = 10^6 (each within 5 standard deviations of its sampling error): mean and
 *   variance of uniforms (1/2, 1/12) and normals (0, 1), lag-1 correlation (0), Maxwellian
 *   component means (the drift) and variances (kT/m); uniforms never 0 or 1.
 * - Different seeds, steps and purposes give different streams; argument errors. */
#include "test_util.h"

#include <float.h>

#define NORMAL_TOL 4e-15 /* |z_cuda - z_host| / rad, see above */

static double max_normal_err; /* largest |z_cuda - z_host| / rad seen */

static void check_kat_host(void)
{
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int k = 0; k < 3; k++) {
        kedr_u32x4 c = {{kat[k][0], kat[k][1], kat[k][2], kat[k][3]}};
        kedr_u32x4 r = kedr_philox4x32_10(c, kat[k][4], kat[k][5]);
        /* The same through the (seed, entity, step, purpose) interface. */
        kedr_u32x4 d = kedr_rng_draw(((uint64_t)kat[k][5] << 32) | kat[k][4],
                                     ((uint64_t)kat[k][1] << 32) | kat[k][0], kat[k][2],
                                     kat[k][3]);
        for (int j = 0; j < 4; j++) {
            TU_CHECK(r.v[j] == kat[k][6 + j], "KAT %d word %d: %08x, expected %08x", k, j, r.v[j],
                     kat[k][6 + j]);
            TU_CHECK(d.v[j] == kat[k][6 + j], "KAT %d via kedr_rng_draw word %d: %08x", k, j,
                     d.v[j]);
        }
    }
}

/* The first known-answer vector (counter 0, key 0) is the first draw of the U32 fill with seed,
 * step and purpose 0. */
/* The batched draws (vector code where the build targets AVX2) against one draw at a time, for
 * counts around the vector width and entities and purposes that use all their bits. */
static void check_draw_many(void)
{
    enum { MAX = 1031 };
    static uint64_t entity[MAX];
    static uint32_t purpose[MAX];
    static kedr_u32x4 out[MAX + 1];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < MAX; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        entity[k] = k % 5 == 0 ? UINT64_MAX - (uint64_t)k : x;
        purpose[k] = (uint32_t)(x >> 17) ^ (k % 3 == 0 ? 0xFFFFFFFFu : 0);
    }
    const size_t counts[] = {0, 1, 3, 4, 5, 8, 37, MAX};
    const uint64_t seeds[] = {0, 12345, 0xFFFFFFFFFFFFFFFFull, 0x243F6A8885A308D3ull};
    for (int si = 0; si < 4; si++)
        for (int ci = 0; ci < 8; ci++) {
            size_t n = counts[ci];
            out[n].v[0] = 0xDEADBEEFu; /* must stay */
            kedr_rng_draw_many(seeds[si], entity, 77u + (uint32_t)si * 0x80000000u, purpose, n,
                               out);
            int bad = out[n].v[0] != 0xDEADBEEFu;
            for (size_t k = 0; k < n && !bad; k++) {
                kedr_u32x4 r = kedr_rng_draw(seeds[si], entity[k], 77u + (uint32_t)si * 0x80000000u,
                                             purpose[k]);
                for (int j = 0; j < 4; j++)
                    bad |= r.v[j] != out[k].v[j];
            }
            TU_CHECK(!bad, "kedr_rng_draw_many: seed %d, n = %zu differs from kedr_rng_draw",
                     si, n);
        }
}

static void check_kat_fill(kedr_ctx *ctx)
{
    static const uint32_t want[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
    uint32_t *d = tu_poisoned(ctx, 4 * sizeof *d);
    kedr_rng_stream s = {0, 0, 0};
    TU_OK(kedr_rng_uniform(ctx, KEDR_U32, s, d, 4));
    uint32_t *got = tu_download(ctx, d, 4 * sizeof *got);
    for (int j = 0; j < 4; j++)
        TU_CHECK(got[j] == want[j], "%s: KAT via the fill, word %d: %08x, expected %08x",
                 kedr_backend_name(kedr_ctx_backend(ctx)), j, got[j], want[j]);
    free(got);
    kedr_free(ctx, d);
}

/* Output buffers are allocated with one spare element in front so that the fill can be done at
 * a misaligned address (offset 1). */
static void *poisoned_at(kedr_ctx *ctx, size_t n, size_t es, size_t offset, void **base)
{
    *base = tu_poisoned(ctx, (n + 1) * es);
    return (unsigned char *)*base + offset * es;
}

static void check_uniform(kedr_ctx *ctx, kedr_dtype t, size_t n, kedr_rng_stream s, size_t off)
{
    size_t es = kedr_dtype_size(t);
    void *base;
    void *d = poisoned_at(ctx, n, es, off, &base);
    TU_OK(kedr_rng_uniform(ctx, t, s, d, n));
    unsigned char *got = tu_download(ctx, d, n * es);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        int ok;
        if (t == KEDR_F64) {
            kedr_u32x4 r = kedr_rng_draw(s.seed, i / 2, s.step, s.purpose);
            double want = kedr_u01_f64(r.v[2 * (i % 2)], r.v[2 * (i % 2) + 1]), g;
            memcpy(&g, got + i * es, es);
            ok = memcmp(&g, &want, es) == 0 && g > 0 && g < 1;
        } else {
            kedr_u32x4 r = kedr_rng_draw(s.seed, i / 4, s.step, s.purpose);
            uint32_t w = r.v[i % 4], g;
            memcpy(&g, got + i * es, es);
            if (t == KEDR_F32) {
                float want = kedr_u01_f32(w), gf;
                memcpy(&gf, &g, 4);
                ok = memcmp(&gf, &want, 4) == 0 && gf > 0 && gf < 1;
            } else {
                ok = g == w;
            }
        }
        if (!ok && bad++ == 0)
            first = i;
    }
    TU_CHECK(bad == 0, "%s uniform %s n=%zu offset=%zu: %zu elements differ, first %zu",
             kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t), n, off, bad, first);
    free(got);
    kedr_free(ctx, base);
}

/* The reference normal pair of draw d and its radius. */
static void ref_normal(kedr_rng_stream s, uint64_t d, double z[2], double *rad)
{
    kedr_u32x4 r = kedr_rng_draw(s.seed, d, s.step, s.purpose);
    kedr_normal2_f64(r, &z[0], &z[1]);
    *rad = sqrt(-2.0 * log(kedr_u01_f64(r.v[0], r.v[1])));
}

/* got against want: bit for bit on the cpu, within tol (absolute) on cuda. */
static int close_f64(kedr_ctx *ctx, double got, double want, double tol)
{
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CPU)
        return memcmp(&got, &want, sizeof got) == 0;
    return fabs(got - want) <= tol;
}

static void check_normal(kedr_ctx *ctx, kedr_dtype t, size_t n, kedr_rng_stream s, size_t off)
{
    size_t es = kedr_dtype_size(t);
    int cpu = kedr_ctx_backend(ctx) == KEDR_BACKEND_CPU;
    void *base;
    void *d = poisoned_at(ctx, n, es, off, &base);
    TU_OK(kedr_rng_normal(ctx, t, s, d, n));
    unsigned char *got = tu_download(ctx, d, n * es);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        double z[2], rad;
        ref_normal(s, i / 2, z, &rad);
        double want = z[i % 2], tol = NORMAL_TOL * rad;
        int ok;
        if (t == KEDR_F64) {
            double g;
            memcpy(&g, got + i * es, es);
            ok = close_f64(ctx, g, want, tol);
            if (!cpu && fabs(g - want) / rad > max_normal_err)
                max_normal_err = fabs(g - want) / rad;
        } else {
            float g;
            memcpy(&g, got + i * es, es);
            ok = cpu ? g == (float)want : (g >= (float)(want - tol) && g <= (float)(want + tol));
        }
        if (!ok && bad++ == 0)
            first = i;
    }
    TU_CHECK(bad == 0, "%s normal %s n=%zu offset=%zu: %zu elements differ, first %zu",
             kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t), n, off, bad, first);
    free(got);
    kedr_free(ctx, base);
}

#define ARGON_MASS 6.6335209e-26 /* kg */

static void check_maxwellian(kedr_ctx *ctx, size_t n, kedr_rng_stream s)
{
    const double temp = 300, drift[3] = {700, -50, 0};
    double *d[3];
    for (int c = 0; c < 3; c++)
        d[c] = tu_poisoned(ctx, n * sizeof(double));
    TU_OK(kedr_rng_maxwellian(ctx, s, temp, ARGON_MASS, drift, d[0], d[1], d[2], n));
    double sigma = sqrt(KEDR_BOLTZMANN * temp / ARGON_MASS);
    size_t bad = 0, first = 0;
    for (int c = 0; c < 3; c++) {
        double *got = tu_download(ctx, d[c], n * sizeof(double));
        for (size_t i = 0; i < n; i++) {
            double v[3];
            kedr_maxwellian(s.seed, i, s.step, s.purpose, temp, ARGON_MASS, drift, v);
            /* 8.6 bounds the radius of every Box-Muller pair */
            double tol = sigma * NORMAL_TOL * 8.6 + 4 * DBL_EPSILON * fabs(v[c]);
            if (!close_f64(ctx, got[i], v[c], tol) && bad++ == 0)
                first = i;
        }
        free(got);
        kedr_free(ctx, d[c]);
    }
    TU_CHECK(bad == 0, "%s maxwellian n=%zu: %zu components differ, first molecule %zu",
             kedr_backend_name(kedr_ctx_backend(ctx)), n, bad, first);
}

/* Sample mean, variance and lag-1 correlation. */
static void moments(const double *x, size_t n, double *mean, double *var, double *corr)
{
    double m = 0, v = 0, c = 0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++) {
        v += (x[i] - m) * (x[i] - m);
        if (i + 1 < n)
            c += (x[i] - m) * (x[i + 1] - m);
    }
    *mean = m;
    *var = v / (double)(n - 1);
    *corr = c / (double)(n - 1) / *var;
}

/* Checks |got - want| <= 5 sd and prints the deviation in units of sd. */
#define CHECK_5SD(what, got, want, sd)                                                        \
    TU_CHECK(fabs((got) - (want)) <= 5 * (sd), "%s %s: %.8g, expected %.8g +- 5 x %.3g",     \
             kedr_backend_name(kedr_ctx_backend(ctx)), what, (double)(got), (double)(want),   \
             (double)(sd))

static void check_statistics(kedr_ctx *ctx)
{
    const size_t n = tu_scale(1000000, 100000);
    const double sn = sqrt((double)n);
    kedr_rng_stream s = {20240607, 3, 8};
    double *x = tu_host_alloc(n * sizeof *x), mean, var, corr;
    void *d = tu_poisoned(ctx, n * sizeof(double));
    static const kedr_dtype ut[] = {KEDR_U32, KEDR_F32, KEDR_F64};
    for (int k = 0; k < 3; k++) {
        TU_OK(kedr_rng_uniform(ctx, ut[k], s, d, n));
        void *h = tu_download(ctx, d, n * kedr_dtype_size(ut[k]));
        size_t outside = 0;
        for (size_t i = 0; i < n; i++) {
            x[i] = ut[k] == KEDR_U32 ? ((uint32_t *)h)[i] * 0x1p-32
                 : ut[k] == KEDR_F32 ? ((float *)h)[i]
                                     : ((double *)h)[i];
            outside += ut[k] != KEDR_U32 && !(x[i] > 0 && x[i] < 1);
        }
        free(h);
        moments(x, n, &mean, &var, &corr);
        char what[64];
        snprintf(what, sizeof what, "uniform %s mean", kedr_dtype_name(ut[k]));
        CHECK_5SD(what, mean, 0.5, sqrt(1.0 / 12) / sn);
        snprintf(what, sizeof what, "uniform %s variance", kedr_dtype_name(ut[k]));
        CHECK_5SD(what, var, 1.0 / 12, sqrt(1.0 / 80 - 1.0 / 144) / sn);
        snprintf(what, sizeof what, "uniform %s lag-1 correlation", kedr_dtype_name(ut[k]));
        CHECK_5SD(what, corr, 0, 1 / sn);
        TU_CHECK(outside == 0, "uniform %s: %zu values not in (0, 1)", kedr_dtype_name(ut[k]),
                 outside);
    }
    static const kedr_dtype nt[] = {KEDR_F32, KEDR_F64};
    for (int k = 0; k < 2; k++) {
        TU_OK(kedr_rng_normal(ctx, nt[k], s, d, n));
        void *h = tu_download(ctx, d, n * kedr_dtype_size(nt[k]));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            x[i] = nt[k] == KEDR_F32 ? ((float *)h)[i] : ((double *)h)[i];
            bad += !isfinite(x[i]);
        }
        free(h);
        moments(x, n, &mean, &var, &corr);
        char what[64];
        snprintf(what, sizeof what, "normal %s mean", kedr_dtype_name(nt[k]));
        CHECK_5SD(what, mean, 0, 1 / sn);
        snprintf(what, sizeof what, "normal %s variance", kedr_dtype_name(nt[k]));
        CHECK_5SD(what, var, 1, sqrt(2.0) / sn);
        snprintf(what, sizeof what, "normal %s lag-1 correlation", kedr_dtype_name(nt[k]));
        CHECK_5SD(what, corr, 0, 1 / sn);
        TU_CHECK(bad == 0, "normal %s: %zu values not finite", kedr_dtype_name(nt[k]), bad);
    }
    kedr_free(ctx, d);

    const double temp = 1000, drift[3] = {7500, 0, -120};
    const double sigma = sqrt(KEDR_BOLTZMANN * temp / ARGON_MASS);
    double *dv[3];
    for (int c = 0; c < 3; c++)
        dv[c] = tu_poisoned(ctx, n * sizeof(double));
    TU_OK(kedr_rng_maxwellian(ctx, s, temp, ARGON_MASS, drift, dv[0], dv[1], dv[2], n));
    for (int c = 0; c < 3; c++) {
        TU_OK(kedr_download(ctx, x, dv[c], n * sizeof *x));
        moments(x, n, &mean, &var, &corr);
        char what[64];
        snprintf(what, sizeof what, "maxwellian v%c mean", "xyz"[c]);
        CHECK_5SD(what, mean, drift[c], sigma / sn);
        snprintf(what, sizeof what, "maxwellian v%c variance", "xyz"[c]);
        CHECK_5SD(what, var, sigma * sigma, sigma * sigma * sqrt(2.0) / sn);
        kedr_free(ctx, dv[c]);
    }
    free(x);
}

/* Streams that differ in seed, step or purpose share (almost) no words at the same index. */
static void check_streams_differ(kedr_ctx *ctx)
{
    const size_t n = 4096;
    const kedr_rng_stream base = {12345, 10, 2};
    const kedr_rng_stream other[] = {{12346, 10, 2}, {12345 + (1ull << 32), 10, 2},
                                     {12345, 11, 2}, {12345, 10, 3}, {12345, 10, 4}};
    uint32_t *d = tu_poisoned(ctx, n * sizeof *d);
    TU_OK(kedr_rng_uniform(ctx, KEDR_U32, base, d, n));
    uint32_t *a = tu_download(ctx, d, n * sizeof *a);
    for (size_t k = 0; k < sizeof other / sizeof other[0]; k++) {
        TU_OK(kedr_rng_uniform(ctx, KEDR_U32, other[k], d, n));
        uint32_t *b = tu_download(ctx, d, n * sizeof *b);
        size_t same = 0;
        for (size_t i = 0; i < n; i++)
            same += a[i] == b[i];
        TU_CHECK(same <= 1, "stream %zu shares %zu of %zu words with the base stream", k, same, n);
        free(b);
    }
    /* Repeating a fill repeats its numbers. */
    TU_OK(kedr_rng_uniform(ctx, KEDR_U32, base, d, n));
    uint32_t *again = tu_download(ctx, d, n * sizeof *again);
    TU_CHECK(memcmp(a, again, n * sizeof *a) == 0, "the same stream gave different numbers");
    free(again);
    free(a);
    kedr_free(ctx, d);
}

static void check_errors(kedr_ctx *ctx)
{
    double *d = tu_poisoned(ctx, 8 * sizeof *d);
    const kedr_rng_stream s = {1, 0, 0};
    const double drift[3] = {0, 0, 0}, bad_drift[3] = {0, NAN, 0};
    struct {
        kedr_status got, want;
        const char *what;
    } cases[] = {
        {kedr_rng_uniform(ctx, KEDR_F32, s, NULL, 4), KEDR_ERR_INVALID, "uniform out NULL"},
        {kedr_rng_uniform(ctx, KEDR_U64, s, d, 4), KEDR_ERR_UNSUPPORTED, "uniform u64"},
        {kedr_rng_uniform(ctx, KEDR_I32, s, d, 4), KEDR_ERR_UNSUPPORTED, "uniform i32"},
        {kedr_rng_uniform(ctx, (kedr_dtype)-1, s, d, 4), KEDR_ERR_UNSUPPORTED, "uniform bad"},
        {kedr_rng_uniform(NULL, KEDR_F32, s, d, 4), KEDR_ERR_INVALID, "uniform ctx NULL"},
        {kedr_rng_normal(ctx, KEDR_F64, s, NULL, 4), KEDR_ERR_INVALID, "normal out NULL"},
        {kedr_rng_normal(ctx, KEDR_U32, s, d, 4), KEDR_ERR_UNSUPPORTED, "normal u32"},
        {kedr_rng_maxwellian(ctx, s, 300, 0, drift, d, d, d, 2), KEDR_ERR_INVALID, "mass 0"},
        {kedr_rng_maxwellian(ctx, s, -1, 1e-26, drift, d, d, d, 2), KEDR_ERR_INVALID, "T < 0"},
        {kedr_rng_maxwellian(ctx, s, NAN, 1e-26, drift, d, d, d, 2), KEDR_ERR_INVALID, "T NaN"},
        {kedr_rng_maxwellian(ctx, s, 300, 1e-26, NULL, d, d, d, 2), KEDR_ERR_INVALID,
         "drift NULL"},
        {kedr_rng_maxwellian(ctx, s, 300, 1e-26, bad_drift, d, d, d, 2), KEDR_ERR_INVALID,
         "drift NaN"},
        {kedr_rng_maxwellian(ctx, s, 300, 1e-26, drift, d, NULL, d, 2), KEDR_ERR_INVALID,
         "vy NULL"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        TU_CHECK(cases[k].got == cases[k].want, "%s: got %s", cases[k].what,
                 kedr_status_name(cases[k].got));
    /* Each failure leaves a message. */
    kedr_fail(KEDR_OK, "%s", "");
    kedr_rng_normal(ctx, KEDR_I32, s, d, 4);
    TU_CHECK(kedr_last_error()[0] != 0, "no message for a bad normal type");
    kedr_fail(KEDR_OK, "%s", "");
    kedr_rng_maxwellian(ctx, s, 300, -1, drift, d, d, d, 2);
    TU_CHECK(kedr_last_error()[0] != 0, "no message for a bad mass");
    /* n = 0 needs no buffers. */
    TU_OK(kedr_rng_uniform(ctx, KEDR_U32, s, NULL, 0));
    TU_OK(kedr_rng_normal(ctx, KEDR_F32, s, NULL, 0));
    TU_OK(kedr_rng_maxwellian(ctx, s, 300, 1e-26, drift, NULL, NULL, NULL, 0));
    kedr_free(ctx, d);
}

int main(void)
{
    check_kat_host();
    check_draw_many();
    kedr_backend list[2];
    int nb = tu_backends(list);
    static const kedr_dtype ut[] = {KEDR_U32, KEDR_F32, KEDR_F64};
    for (int bi = 0; bi < nb; bi++) {
        kedr_ctx *ctx = tu_ctx(list[bi]);
        max_normal_err = 0;
        check_kat_fill(ctx);
        uint64_t seed = 99;
        for (size_t si = 0; si < TU_NSIZES; si++) {
            size_t n = tu_sizes[si], off = si % 2;
            kedr_rng_stream s = {seed++ * 0x9E3779B97F4A7C15ull, (uint32_t)si, (uint32_t)(2 * si)};
            for (int k = 0; k < 3; k++)
                check_uniform(ctx, ut[k], n, s, off);
            check_normal(ctx, KEDR_F32, n, s, off);
            check_normal(ctx, KEDR_F64, n, s, 1 - off);
            if (n <= 65537)
                check_maxwellian(ctx, n, s);
        }
        kedr_rng_stream big = {~0ull, 0xFFFFFFFFu, 0xFFFFFFFEu};
        check_uniform(ctx, KEDR_U32, TU_LARGE, big, 0);
        check_uniform(ctx, KEDR_F64, TU_LARGE, big, 1);
        check_statistics(ctx);
        check_streams_differ(ctx);
        check_errors(ctx);
        if (kedr_ctx_backend(ctx) != KEDR_BACKEND_CPU)
            printf("  largest |z_cuda - z_cpu| / rad = %.3g (bound %.3g)\n", max_normal_err,
                   NORMAL_TOL);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_rng");
}
