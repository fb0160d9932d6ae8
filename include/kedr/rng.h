/* kedr rng: the Philox4x32-10 counter-based generator (Salmon, Moraes, Dror, Shaw, "Parallel
 * random numbers: as easy as 1, 2, 3", SC'11) and samplers built on it. The functions below are
 * plain inline code usable from host and device, so both back ends draw the same bits.
 *
 * A draw is keyed by (seed, entity, step, purpose): the 64-bit seed is the Philox key, and the
 * counter is (entity low, entity high, step, purpose). Any particle, cell or element can draw
 * its own numbers with no shared state, and a run is reproducible from its seed. */
#ifndef KEDR_RNG_H
#define KEDR_RNG_H

#include "kedr/core.h"
#include <math.h>
#include <stddef.h>
#if defined(__AVX2__) && !defined(__CUDACC__)
#include <immintrin.h>
#endif

#ifdef __CUDACC__
#define KEDR_HD __host__ __device__ __forceinline__
#else
#define KEDR_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t v[4];
} kedr_u32x4;

KEDR_HD void kedr_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

/* Philox4x32 with 10 rounds; constants from the SC'11 paper. */
KEDR_HD kedr_u32x4 kedr_philox4x32_10(kedr_u32x4 ctr, uint32_t k0, uint32_t k1)
{
    for (int round = 0; round < 10; round++) {
        uint32_t hi0, lo0, hi1, lo1;
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        kedr_mulhilo32(0xD2511F53u, ctr.v[0], &hi0, &lo0);
        kedr_mulhilo32(0xCD9E8D57u, ctr.v[2], &hi1, &lo1);
        kedr_u32x4 next;
        next.v[0] = hi1 ^ ctr.v[1] ^ k0;
        next.v[1] = lo1;
        next.v[2] = hi0 ^ ctr.v[3] ^ k1;
        next.v[3] = lo0;
        ctr = next;
    }
    return ctr;
}

/* Four independent 32-bit words for (seed, entity, step, purpose). */
KEDR_HD kedr_u32x4 kedr_rng_draw(uint64_t seed, uint64_t entity, uint32_t step, uint32_t purpose)
{
    kedr_u32x4 c;
    c.v[0] = (uint32_t)entity;
    c.v[1] = (uint32_t)(entity >> 32);
    c.v[2] = step;
    c.v[3] = purpose;
    return kedr_philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* Uniform in the open interval (0, 1), exact: an odd multiple of 2^-24 (float) or 2^-53 (double),
 * so neither 0 nor 1 ever appears and log(u) is always finite. */
#ifndef __CUDACC__
/* out[k] = kedr_rng_draw(seed, entity[k], step, purpose[k]) for k < n, host code. Where the
 * compiler targets AVX2 it runs four blocks at once in vector registers (a block takes about a
 * quarter of the instructions of one kedr_rng_draw); elsewhere it is that loop. */
static inline void kedr_rng_draw_many(uint64_t seed, const uint64_t *entity, uint32_t step,
                                      const uint32_t *purpose, size_t n, kedr_u32x4 *out)
{
    size_t k = 0;
#ifdef __AVX2__
    const __m256i m0 = _mm256_set1_epi64x(0xD2511F53u), m1 = _mm256_set1_epi64x(0xCD9E8D57u);
    const __m256i low = _mm256_set1_epi64x(0xFFFFFFFFu), st = _mm256_set1_epi64x(step);
    __m256i key0[10], key1[10];
    for (int round = 0; round < 10; round++) {
        key0[round] = _mm256_set1_epi64x((uint32_t)((uint32_t)seed + round * 0x9E3779B9u));
        key1[round] = _mm256_set1_epi64x((uint32_t)((uint32_t)(seed >> 32) + round * 0xBB67AE85u));
    }
    for (; k + 4 <= n; k += 4) {
        /* words 0..3 of four counters, one per 64-bit lane (the high halves stay zero) */
        __m256i e = _mm256_loadu_si256((const __m256i *)(entity + k));
        __m256i c0 = _mm256_and_si256(e, low), c1 = _mm256_srli_epi64(e, 32), c2 = st;
        __m256i c3 = _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(purpose + k)));
        for (int round = 0; round < 10; round++) {
            __m256i p0 = _mm256_mul_epu32(c0, m0), p1 = _mm256_mul_epu32(c2, m1);
            __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1),
                                          key0[round]);
            __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3),
                                          key1[round]);
            c1 = _mm256_and_si256(p1, low);
            c3 = _mm256_and_si256(p0, low);
            c0 = n0;
            c2 = n2;
        }
        uint64_t w0[4], w1[4], w2[4], w3[4];
        _mm256_storeu_si256((__m256i *)w0, c0);
        _mm256_storeu_si256((__m256i *)w1, c1);
        _mm256_storeu_si256((__m256i *)w2, c2);
        _mm256_storeu_si256((__m256i *)w3, c3);
        for (int l = 0; l < 4; l++) {
            out[k + l].v[0] = (uint32_t)w0[l];
            out[k + l].v[1] = (uint32_t)w1[l];
            out[k + l].v[2] = (uint32_t)w2[l];
            out[k + l].v[3] = (uint32_t)w3[l];
        }
    }
#endif
    for (; k < n; k++)
        out[k] = kedr_rng_draw(seed, entity[k], step, purpose[k]);
}
#endif

KEDR_HD float kedr_u01_f32(uint32_t x)
{
    return (float)((x >> 9) * 2u + 1u) * 5.9604644775390625e-08f; /* 2^-24 */
}

KEDR_HD double kedr_u01_f64(uint32_t hi, uint32_t lo)
{
    uint64_t v = ((uint64_t)hi << 20) | (lo >> 12); /* 52 random bits */
    return (double)(2 * v + 1) * 1.1102230246251565e-16;    /* 2^-53 */
}

/* Two independent standard normal deviates from four words (Box-Muller on two doubles). */
KEDR_HD void kedr_normal2_f64(kedr_u32x4 r, double *z0, double *z1)
{
    double u1 = kedr_u01_f64(r.v[0], r.v[1]);
    double u2 = kedr_u01_f64(r.v[2], r.v[3]);
    double rad = sqrt(-2.0 * log(u1));
    double s, c;
#ifdef __CUDA_ARCH__
    sincospi(2.0 * u2, &s, &c);
#else
    s = sin(6.283185307179586 * u2);
    c = cos(6.283185307179586 * u2);
#endif
    *z0 = rad * c;
    *z1 = rad * s;
}

/* A velocity drawn from the Maxwellian at temperature T [K] for a molecule of mass m [kg],
 * drifting with u: each component is u + sqrt(k T / m) * N(0, 1). It takes two draws of the
 * entity, with purposes purpose and purpose + 1, so give such samplers even purposes. */
#define KEDR_BOLTZMANN 1.380649e-23 /* J/K, exact in the 2019 SI */

KEDR_HD void kedr_maxwellian(uint64_t seed, uint64_t entity, uint32_t step, uint32_t purpose,
                             double temperature, double mass, const double drift[3], double v[3])
{
    double z[4];
    kedr_normal2_f64(kedr_rng_draw(seed, entity, step, purpose), &z[0], &z[1]);
    kedr_normal2_f64(kedr_rng_draw(seed, entity, step, purpose + 1u), &z[2], &z[3]);
    double sigma = sqrt(KEDR_BOLTZMANN * temperature / mass);
    for (int d = 0; d < 3; d++)
        v[d] = drift[d] + sigma * z[d];
}

/* ---- bulk fills on a context (the same numbers on every back end) -------------------------- */

typedef struct {
    uint64_t seed;
    uint32_t step;
    uint32_t purpose;
} kedr_rng_stream;

/* out[i], i < n: U32 words (word i % 4 of draw i / 4), F32 uniforms in (0,1) (likewise), or F64
 * uniforms in (0,1) (draw i / 2, words 2(i % 2) and 2(i % 2) + 1). The entity of a draw is its
 * index. */
kedr_status kedr_rng_uniform(kedr_ctx *ctx, kedr_dtype t, kedr_rng_stream s, void *out, size_t n);
/* out[i] standard normal (F32 or F64): z_{i % 2} of kedr_normal2_f64 on draw i / 2, rounded to
 * the type. Bits agree across back ends up to the last-place differences of log/sin/cos. */
kedr_status kedr_rng_normal(kedr_ctx *ctx, kedr_dtype t, kedr_rng_stream s, void *out, size_t n);
/* Maxwellian velocities for n molecules: entity i, purposes s.purpose and s.purpose + 1. */
kedr_status kedr_rng_maxwellian(kedr_ctx *ctx, kedr_rng_stream s, double temperature, double mass,
                                const double drift[3], double *vx, double *vy, double *vz,
                                size_t n);

#ifdef __cplusplus
}
#endif
#endif
