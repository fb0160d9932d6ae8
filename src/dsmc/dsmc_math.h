/* Elementary functions of the cpu's DSMC code: log, exp and the sine and cosine of a fraction
 * of a turn, each written once as scalar code and once for four lanes of AVX2 with the same
 * operations in the same order, so that the two give the same bits. The cpu's collision stage
 * evaluates batches of them in vector code (the deflection of every candidate of a batch, the
 * mean free path of every cell of a block), and dsmc_powv and dsmc_sincos_2pi (dsmc_kernels.h)
 * the same quantities one at a time in scalar code, so a cell gets the same result either way.
 * The GPU uses CUDA's own functions instead (docs/dsmc.md: the back ends agree statistically,
 * not bit for bit).
 *
 * Accuracy, checked by tests/unit/test_dsmc_math.c against long double: log within 1 ulp, exp
 * within 1.5 ulp, sin and cos of 2 pi u within 2.5 ulp. Inputs outside the fast paths' ranges
 * (log: zero, negative, subnormal, infinite or NaN; exp: below -708 or above 709 or NaN; the
 * turn: outside [0, 1)) go to the C library.
 *
 * Formulas: log(1 + f) = f - (f^2/2 - s (f^2/2 + R)) with s = f / (2 + f) and
 * R = sum_k 2 s^2k / (2k + 1), the series of 2 atanh(s) (the same identity as the classic
 * fdlibm argument reduction; our coefficients are the series' own, summed far enough that the
 * first term left out is below 2^-55 of the result); exp(x) = 2^n exp(r) with
 * x = n ln 2 + r, |r| <= ln2 / 2, and exp(r) its Taylor series through r^13; sin and cos of
 * 2 pi u from 4u = q + r (exact), Taylor series of sin(r pi/2) and cos(r pi/2). */
#ifndef KEDR_DSMC_MATH_H
#define KEDR_DSMC_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__AVX2__) && !defined(__CUDACC__)
#include <immintrin.h>
#define DSMC_MATH_AVX2 1
#endif

/* ln 2 split: LN2_HI has 40 significant bits, so n LN2_HI is exact for |n| < 2^13 */
#define DSMC_LN2_HI 0x1.62e42fefa2000p-1
#define DSMC_LN2_LO 0x1.9ef35793c7673p-41
#define DSMC_INV_LN2 1.4426950408889634
#define DSMC_SQRT2_BITS 0x3ff6a09e667f3bcdULL /* sqrt(2) rounded */
#define DSMC_ROUND_SHIFT 0x1.8p52             /* x + 1.5 2^52 - 1.5 2^52 rounds x to an integer */

static inline double dsmc_bits_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}
static inline uint64_t dsmc_double_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* The series' coefficients, each list once for the scalar and the vector code, in the order of
 * their Horner forms: c[0] + w (c[1] + w (... + w c[n - 1])). */
static const double dsmc_log_even[5] = {2.0 / 3, 2.0 / 7, 2.0 / 11, 2.0 / 15, 2.0 / 19};
static const double dsmc_log_odd[5] = {2.0 / 5, 2.0 / 9, 2.0 / 13, 2.0 / 17, 2.0 / 21};
static const double dsmc_exp_even[6] = {1.0 / 2,     1.0 / 24,      1.0 / 720,
                                        1.0 / 40320, 1.0 / 3628800, 1.0 / 479001600};
static const double dsmc_exp_odd[6] = {1.0 / 6,      1.0 / 120,      1.0 / 5040,
                                       1.0 / 362880, 1.0 / 39916800, 1.0 / 6227020800.0};
/* (pi/2)^k / k! with alternating signs: sin(x) / r even and odd in w, cos(x) - 1 odd and even */
static const double dsmc_sin_even[5] = {1.5707963267948966, 0.079692626246167048,
                                        0.00016044118478735983, 5.6921729219679267e-08,
                                        6.0669357311061955e-12};
static const double dsmc_sin_odd[4] = {-0.64596409750624628, -0.0046817541353186883,
                                       -3.5988432352120852e-06, -6.6880351098114677e-10};
static const double dsmc_cos_even[4] = {0.25366950790104803, 0.00091926027483942659,
                                        4.7108747788181717e-07, 6.5659631149794728e-11};
static const double dsmc_cos_odd[4] = {-1.2337005501361697, -0.020863480763352961,
                                       -2.5202042373060607e-05, -6.3866030837918521e-09};

static inline double dsmc_horner(const double *c, int n, double w)
{
    double acc = c[n - 1];
    for (int k = n - 2; k >= 0; k--)
        acc = c[k] + w * acc;
    return acc;
}

/* log x */
static inline double dsmc_log_cpu(double x)
{
    uint64_t b = dsmc_double_bits(x);
    if (b - 0x0010000000000000ULL >= 0x7fe0000000000000ULL)
        return log(x); /* not a positive normal number */
    uint64_t e = b >> 52, mb = (b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    if (mb > DSMC_SQRT2_BITS) { /* m in [sqrt(1/2), sqrt(2)) */
        mb -= 0x0010000000000000ULL;
        e++;
    }
    double k = (double)e - 1023.0, f = dsmc_bits_double(mb) - 1.0;
    double s = f / (2.0 + f), z = s * s, w = z * z, hfsq = 0.5 * f * f;
    double r = z * (dsmc_horner(dsmc_log_even, 5, w) + z * dsmc_horner(dsmc_log_odd, 5, w));
    return k * DSMC_LN2_HI + (f - (hfsq - (s * (hfsq + r) + k * DSMC_LN2_LO)));
}

/* exp x */
static inline double dsmc_exp_cpu(double x)
{
    if (!(x > -708.0 && x < 709.0))
        return exp(x);
    double t = x * DSMC_INV_LN2 + DSMC_ROUND_SHIFT, n = t - DSMC_ROUND_SHIFT;
    double r = (x - n * DSMC_LN2_HI) - n * DSMC_LN2_LO, q = r * r;
    /* exp(r) - 1 - r = r^2 (even + r odd) */
    double e =
        1.0 + (r + q * (dsmc_horner(dsmc_exp_even, 6, q) + r * dsmc_horner(dsmc_exp_odd, 6, q)));
    /* 2^n from t's low bits (n = bits(t) - bits(shift)) */
    uint64_t nb = dsmc_double_bits(t) - dsmc_double_bits(DSMC_ROUND_SHIFT);
    return e * dsmc_bits_double((nb + 1023) << 52);
}

/* x^y for x > 0 as exp(y log x) */
static inline double dsmc_pow_cpu(double x, double y)
{
    return dsmc_exp_cpu(y * dsmc_log_cpu(x));
}

/* sin and cos of 2 pi u */
static inline void dsmc_sincos_2pi_cpu(double u, double *s, double *c)
{
    double t = 4.0 * u;
    if (!(t >= 0 && t < 4.0)) {
        *s = sin(2.0 * 3.14159265358979323846 * u);
        *c = cos(2.0 * 3.14159265358979323846 * u);
        return;
    }
    double qd = floor(t + 0.5), r = t - qd, z = r * r, w = z * z;
    /* sin x and cos x, x = r pi/2 (|r| <= 1/2), in z = r^2 and w = z^2 */
    double sx = r * (dsmc_horner(dsmc_sin_even, 5, w) + z * dsmc_horner(dsmc_sin_odd, 4, w));
    double cx = 1.0 + z * (dsmc_horner(dsmc_cos_odd, 4, w) + z * dsmc_horner(dsmc_cos_even, 4, w));
    switch ((int)qd & 3) { /* sin and cos of q pi/2 + x */
    case 0: *s = sx, *c = cx; break;
    case 1: *s = cx, *c = -sx; break;
    case 2: *s = -sx, *c = -cx; break;
    default: *s = -cx, *c = sx; break;
    }
}

#ifdef DSMC_MATH_AVX2
/* The same functions on four lanes. A lane outside a fast path's range sends all four to the
 * scalar code (which gives such a lane the C library's value and the others the same bits). */
#define DSMC_V(c) _mm256_set1_pd(c)
static inline __m256d dsmc_horner4(const double *c, int n, __m256d w) /* dsmc_horner */
{
    __m256d acc = _mm256_set1_pd(c[n - 1]);
    for (int k = n - 2; k >= 0; k--)
        acc = _mm256_add_pd(_mm256_set1_pd(c[k]), _mm256_mul_pd(w, acc));
    return acc;
}
static inline __m256d dsmc_log4(__m256d x)
{
    __m256i b = _mm256_castpd_si256(x);
    __m256i off = _mm256_sub_epi64(b, _mm256_set1_epi64x(0x0010000000000000LL));
    /* unsigned off >= 0x7fe0...: as signed, off < 0 or off >= 0x7fe0... */
    __m256i bad =
        _mm256_or_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), off),
                        _mm256_cmpgt_epi64(off, _mm256_set1_epi64x(0x7fdfffffffffffffLL)));
    if (!_mm256_testz_si256(bad, bad)) {
        double v[4];
        _mm256_storeu_pd(v, x);
        for (int l = 0; l < 4; l++)
            v[l] = dsmc_log_cpu(v[l]);
        return _mm256_loadu_pd(v);
    }
    __m256i e = _mm256_srli_epi64(b, 52);
    __m256i mb = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi64x(0x000fffffffffffffLL)),
                                 _mm256_set1_epi64x(0x3ff0000000000000LL));
    __m256i up = _mm256_cmpgt_epi64(mb, _mm256_set1_epi64x((long long)DSMC_SQRT2_BITS));
    mb = _mm256_sub_epi64(mb, _mm256_and_si256(up, _mm256_set1_epi64x(0x0010000000000000LL)));
    e = _mm256_sub_epi64(e, up); /* up is -1 where m was halved */
    /* (double)e exactly: e < 2^52, so bits(2^52) | e is 2^52 + e */
    __m256d ed = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(e, _mm256_set1_epi64x(0x4330000000000000LL))),
        DSMC_V(0x1p52));
    __m256d k = _mm256_sub_pd(ed, DSMC_V(1023.0));
    __m256d f = _mm256_sub_pd(_mm256_castsi256_pd(mb), DSMC_V(1.0));
    __m256d s = _mm256_div_pd(f, _mm256_add_pd(DSMC_V(2.0), f));
    __m256d z = _mm256_mul_pd(s, s), w = _mm256_mul_pd(z, z);
    __m256d hfsq = _mm256_mul_pd(_mm256_mul_pd(DSMC_V(0.5), f), f);
    __m256d pe = dsmc_horner4(dsmc_log_even, 5, w), po = dsmc_horner4(dsmc_log_odd, 5, w);
    __m256d r = _mm256_mul_pd(z, _mm256_add_pd(pe, _mm256_mul_pd(z, po)));
    __m256d inner = _mm256_add_pd(_mm256_mul_pd(s, _mm256_add_pd(hfsq, r)),
                                  _mm256_mul_pd(k, DSMC_V(DSMC_LN2_LO)));
    return _mm256_add_pd(_mm256_mul_pd(k, DSMC_V(DSMC_LN2_HI)),
                         _mm256_sub_pd(f, _mm256_sub_pd(hfsq, inner)));
}

static inline __m256d dsmc_exp4(__m256d x)
{
    __m256d ok = _mm256_and_pd(_mm256_cmp_pd(x, DSMC_V(-708.0), _CMP_GT_OQ),
                               _mm256_cmp_pd(x, DSMC_V(709.0), _CMP_LT_OQ));
    if (_mm256_movemask_pd(ok) != 15) {
        double v[4];
        _mm256_storeu_pd(v, x);
        for (int l = 0; l < 4; l++)
            v[l] = dsmc_exp_cpu(v[l]);
        return _mm256_loadu_pd(v);
    }
    __m256d t = _mm256_add_pd(_mm256_mul_pd(x, DSMC_V(DSMC_INV_LN2)), DSMC_V(DSMC_ROUND_SHIFT));
    __m256d n = _mm256_sub_pd(t, DSMC_V(DSMC_ROUND_SHIFT));
    __m256d r = _mm256_sub_pd(_mm256_sub_pd(x, _mm256_mul_pd(n, DSMC_V(DSMC_LN2_HI))),
                              _mm256_mul_pd(n, DSMC_V(DSMC_LN2_LO)));
    __m256d q = _mm256_mul_pd(r, r);
    __m256d pe = dsmc_horner4(dsmc_exp_even, 6, q), po = dsmc_horner4(dsmc_exp_odd, 6, q);
    __m256d e = _mm256_add_pd(
        DSMC_V(1.0), _mm256_add_pd(r, _mm256_mul_pd(q, _mm256_add_pd(pe, _mm256_mul_pd(r, po)))));
    __m256i nb =
        _mm256_sub_epi64(_mm256_castpd_si256(t), _mm256_castpd_si256(DSMC_V(DSMC_ROUND_SHIFT)));
    __m256i sb = _mm256_slli_epi64(_mm256_add_epi64(nb, _mm256_set1_epi64x(1023)), 52);
    return _mm256_mul_pd(e, _mm256_castsi256_pd(sb));
}

static inline __m256d dsmc_pow4(__m256d x, double y)
{
    return dsmc_exp4(_mm256_mul_pd(DSMC_V(y), dsmc_log4(x)));
}

static inline void dsmc_sincos_2pi4(__m256d u, __m256d *s, __m256d *c)
{
    __m256d t = _mm256_mul_pd(DSMC_V(4.0), u);
    __m256d ok = _mm256_and_pd(_mm256_cmp_pd(t, _mm256_setzero_pd(), _CMP_GE_OQ),
                               _mm256_cmp_pd(t, DSMC_V(4.0), _CMP_LT_OQ));
    if (_mm256_movemask_pd(ok) != 15) {
        double v[4], sv[4], cv[4];
        _mm256_storeu_pd(v, u);
        for (int l = 0; l < 4; l++)
            dsmc_sincos_2pi_cpu(v[l], &sv[l], &cv[l]);
        *s = _mm256_loadu_pd(sv);
        *c = _mm256_loadu_pd(cv);
        return;
    }
    __m256d qd = _mm256_floor_pd(_mm256_add_pd(t, DSMC_V(0.5)));
    __m256d r = _mm256_sub_pd(t, qd), z = _mm256_mul_pd(r, r), w = _mm256_mul_pd(z, z);
    __m256d se = dsmc_horner4(dsmc_sin_even, 5, w), so = dsmc_horner4(dsmc_sin_odd, 4, w);
    __m256d ce = dsmc_horner4(dsmc_cos_even, 4, w), co = dsmc_horner4(dsmc_cos_odd, 4, w);
    __m256d sx = _mm256_mul_pd(r, _mm256_add_pd(se, _mm256_mul_pd(z, so)));
    __m256d cx =
        _mm256_add_pd(DSMC_V(1.0), _mm256_mul_pd(z, _mm256_add_pd(co, _mm256_mul_pd(z, ce))));
    /* the quadrant q & 3 (q in 0..4): odd q swaps sin and cos; sin is negated for q & 3 in
     * {2, 3}, cos for q & 3 in {1, 2} */
    __m256i q = _mm256_cvtepi32_epi64(_mm256_cvttpd_epi32(qd));
    __m256i one = _mm256_set1_epi64x(1), two = _mm256_set1_epi64x(2);
    __m256d odd = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(q, one), one));
    __m256i b1 = _mm256_cmpeq_epi64(_mm256_and_si256(q, two), two);
    __m256i b0 = _mm256_castpd_si256(odd);
    __m256d sign = _mm256_castsi256_pd(_mm256_set1_epi64x((long long)0x8000000000000000ULL));
    __m256d ns = _mm256_and_pd(_mm256_castsi256_pd(b1), sign);
    __m256d nc = _mm256_and_pd(_mm256_castsi256_pd(_mm256_xor_si256(b0, b1)), sign);
    *s = _mm256_xor_pd(_mm256_blendv_pd(sx, cx, odd), ns);
    *c = _mm256_xor_pd(_mm256_blendv_pd(cx, sx, odd), nc);
}
#undef DSMC_V
#endif /* DSMC_MATH_AVX2 */

/* out[k] = x[k]^y for k < n (x > 0), four at a time where the compiler targets AVX2 */
static inline void dsmc_pow_many(const double *x, double y, double *out, uint32_t n)
{
    uint32_t k = 0;
#ifdef DSMC_MATH_AVX2
    for (; k + 4 <= n; k += 4)
        _mm256_storeu_pd(out + k, dsmc_pow4(_mm256_loadu_pd(x + k), y));
#endif
    for (; k < n; k++)
        out[k] = dsmc_pow_cpu(x[k], y);
}

#endif
