/* The cpu's elementary functions of the DSMC code (src/dsmc/dsmc_math.h).
 * - Accuracy against long double: log within 1 ulp, exp within 1.5 ulp, sin and cos of 2 pi u
 *   within 2.5 ulp (plus 1e-18 absolute, the reference's own error near their zeros), on
 *   random arguments over the whole range the simulator uses and beyond (log: (0, 1), 10^-300 to
 *   10^300, and near 1; exp: -745 to 710; turns: [0, 1) and near the quarter turns), x^y against
 *   powl within 4 + 2 |y log x| ulp (the rounding of y log x is amplified by exp).
 * - Arguments outside the fast paths (zero, negative, subnormal, infinite, NaN; exp beyond
 *   [-708, 709]; turns outside [0, 1)) give the C library's values.
 * - Where the compiler targets AVX2: the four-lane functions give the scalar functions' bits, in
 *   every lane, including vectors with one lane outside a fast path; dsmc_pow_many at awkward
 *   sizes gives dsmc_pow_cpu's bits everywhere. */
#include "test_util.h"

#include "dsmc/dsmc_math.h"

#include <float.h>

static uint64_t state = 0x9e3779b97f4a7c15ULL;
static uint64_t next64(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}
static double uniform(void) /* (0, 1), 53 bits */
{
    return ((double)(next64() >> 11) + 0.5) * 0x1p-53;
}

/* |v - ref| in units of the last place of ref (as a double) */
static double ulps(double v, long double ref)
{
    double r = (double)ref, a = fabs(r);
    double ulp = a > 0 ? nextafter(a, INFINITY) - a : DBL_TRUE_MIN;
    return (double)(fabsl((long double)v - ref) / ulp);
}

static int same_bits(double a, double b)
{
    return dsmc_double_bits(a) == dsmc_double_bits(b) || (isnan(a) && isnan(b));
}

static void check_accuracy(void)
{
    const long double two_pi = 6.283185307179586476925286766559005768L;
    double worst_log = 0, worst_exp = 0, worst_sc = 0, worst_pow = 0;
    for (int i = 0; i < 2000000; i++) {
        double u = uniform();
        double x = i % 3 == 0 ? u : i % 3 == 1 ? exp((u - 0.5) * 1380.0) : 1.0 + (u - 0.5) * 1e-6;
        double e = ulps(dsmc_log_cpu(x), logl((long double)x));
        worst_log = e > worst_log ? e : worst_log;
        double y = -745.0 + u * 1455.0;
        e = ulps(dsmc_exp_cpu(y), expl((long double)y));
        if (y > -708.0) /* below, subnormal results: the C library's */
            worst_exp = e > worst_exp ? e : worst_exp;
        double t = i % 4 ? u : (double)(next64() % 5) * 0.25 + (u - 0.5) * 1e-9;
        if (t >= 0 && t < 1) {
            double s, c;
            dsmc_sincos_2pi_cpu(t, &s, &c);
            long double rs = sinl(two_pi * t), rc = cosl(two_pi * t);
            double es = fabs((double)((long double)s - rs)) <= 1e-18 ? 0 : ulps(s, rs);
            double ec = fabs((double)((long double)c - rc)) <= 1e-18 ? 0 : ulps(c, rc);
            es = es > ec ? es : ec;
            worst_sc = es > worst_sc ? es : worst_sc;
        }
        double py = 0.2 + u * 1.2; /* the exponents of cross-sections and VSS deflections */
        double base = i % 2 ? u : 1e-3 + u * 1e5;
        long double ref = powl((long double)base, (long double)py);
        e = ulps(dsmc_pow_cpu(base, py), ref) / (4.0 + 2.0 * fabs(py * log(base)));
        worst_pow = e > worst_pow ? e : worst_pow;
    }
    TU_CHECK(worst_log <= 1.0, "log: %.3f ulp", worst_log);
    TU_CHECK(worst_exp <= 1.5, "exp: %.3f ulp", worst_exp);
    TU_CHECK(worst_sc <= 2.5, "sin, cos of 2 pi u: %.3f ulp", worst_sc);
    TU_CHECK(worst_pow <= 1.0, "pow: %.3f of its bound", worst_pow);
    printf(
        "  largest errors: log %.2f ulp, exp %.2f ulp, sin/cos %.2f ulp, pow %.2f of its bound\n",
        worst_log, worst_exp, worst_sc, worst_pow);
    /* exact points */
    double s, c;
    dsmc_sincos_2pi_cpu(0.0, &s, &c);
    TU_CHECK(s == 0 && c == 1, "sincos(0) = %g %g", s, c);
    dsmc_sincos_2pi_cpu(0.25, &s, &c);
    TU_CHECK(s == 1 && c == 0, "sincos(pi/2) = %g %g", s, c);
    dsmc_sincos_2pi_cpu(0.5, &s, &c);
    TU_CHECK(s == 0 && c == -1, "sincos(pi) = %g %g", s, c);
    TU_CHECK(dsmc_log_cpu(1.0) == 0 && dsmc_exp_cpu(0.0) == 1, "log 1, exp 0");
    TU_CHECK(dsmc_log_cpu(2.0) == (double)logl(2.0L), "log 2 = %.17g", dsmc_log_cpu(2.0));
}

static const double specials[] = {0.0,       -0.0, -1.0,   4.9e-324, 2.2e-308, INFINITY,
                                  -INFINITY, NAN,  1e-310, 800.0,    -800.0,   708.5,
                                  -708.5,    1.0,  1.5,    -0.25};
#define NSPECIAL (sizeof specials / sizeof specials[0])

static void check_fallbacks(void)
{
    for (size_t k = 0; k < NSPECIAL; k++) {
        double x = specials[k];
        if (!(x >= DBL_MIN && x <= DBL_MAX)) /* not a positive normal number */
            TU_CHECK(same_bits(dsmc_log_cpu(x), log(x)), "log(%g) = %g, C library %g", x,
                     dsmc_log_cpu(x), log(x));
        if (!(x > -708.0 && x < 709.0))
            TU_CHECK(same_bits(dsmc_exp_cpu(x), exp(x)), "exp(%g) = %g, C library %g", x,
                     dsmc_exp_cpu(x), exp(x));
        if (!(x >= 0 && x < 1)) {
            double s, c;
            dsmc_sincos_2pi_cpu(x, &s, &c);
            TU_CHECK(same_bits(s, sin(2.0 * 3.14159265358979323846 * x)) &&
                         same_bits(c, cos(2.0 * 3.14159265358979323846 * x)),
                     "sincos_2pi(%g) = %g %g", x, s, c);
        }
    }
}

static void check_vectors(void)
{
#ifdef DSMC_MATH_AVX2
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        double x[4], y[4], t[4];
        for (int l = 0; l < 4; l++) {
            double u = uniform();
            x[l] = i % 2 ? u : exp((u - 0.5) * 1380.0);
            y[l] = -720.0 + u * 1440.0;
            t[l] = u;
        }
        if (i % 16 == 0) { /* one lane outside the fast paths */
            int l = (int)(next64() % 4);
            x[l] = specials[next64() % NSPECIAL];
            y[l] = specials[next64() % NSPECIAL];
            t[l] = specials[next64() % NSPECIAL];
        }
        double lv[4], ev[4], pv[4], sv[4], cv[4];
        __m256d s, c;
        _mm256_storeu_pd(lv, dsmc_log4(_mm256_loadu_pd(x)));
        _mm256_storeu_pd(ev, dsmc_exp4(_mm256_loadu_pd(y)));
        _mm256_storeu_pd(pv, dsmc_pow4(_mm256_loadu_pd(x), 0.71));
        dsmc_sincos_2pi4(_mm256_loadu_pd(t), &s, &c);
        _mm256_storeu_pd(sv, s);
        _mm256_storeu_pd(cv, c);
        for (int l = 0; l < 4; l++) {
            double ss, cs;
            dsmc_sincos_2pi_cpu(t[l], &ss, &cs);
            int ok = same_bits(lv[l], dsmc_log_cpu(x[l])) && same_bits(ev[l], dsmc_exp_cpu(y[l])) &&
                     same_bits(pv[l], dsmc_pow_cpu(x[l], 0.71)) && same_bits(sv[l], ss) &&
                     same_bits(cv[l], cs);
            if (!ok && bad++ < 5)
                TU_CHECK(0, "lane %d: x %.17g y %.17g t %.17g: vector and scalar differ", l, x[l],
                         y[l], t[l]);
        }
    }
    TU_CHECK(bad == 0, "%d lanes differ between vector and scalar code", bad);
#endif
    for (size_t k = 0; k < TU_NSIZES && tu_sizes[k] <= 4095; k++) {
        uint32_t n = (uint32_t)tu_sizes[k];
        double *x = malloc((n + 1) * sizeof *x), *out = malloc((n + 1) * sizeof *out);
        for (uint32_t i = 0; i < n; i++)
            x[i] = 1e-3 + uniform() * 1e4;
        dsmc_pow_many(x, 0.31, out, n);
        uint32_t differ = 0;
        for (uint32_t i = 0; i < n; i++)
            differ += !same_bits(out[i], dsmc_pow_cpu(x[i], 0.31));
        TU_CHECK(differ == 0, "dsmc_pow_many n = %u: %u values differ from dsmc_pow_cpu", n,
                 differ);
        free(x);
        free(out);
    }
}

int main(void)
{
    check_accuracy();
    check_fallbacks();
    check_vectors();
    return tu_finish("test_dsmc_math");
}
