/* Bulk random fills: argument checks, the cpu versions and the dispatch. Every output element
 * depends only on (seed, step, purpose) and its own index, through the inline generator of
 * kedr/rng.h, so any split of the work between threads, and either back end, gives the same
 * numbers. */
#include "internal.h"
#include "rng_cuda.h"

#include <math.h>

kedr_status kedr_rng_uniform(kedr_ctx *ctx, kedr_dtype t, kedr_rng_stream s, void *out, size_t n)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_rng_uniform: ctx is NULL");
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPE_BIT(KEDR_U32) | KEDR_TYPE_BIT(KEDR_F32) |
                                     KEDR_TYPE_BIT(KEDR_F64),
                              "kedr_rng_uniform", "output"));
    KEDR_TRY(kedr_check_ptr(out, n, "kedr_rng_uniform", "out"));
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return rng_uniform_cuda(ctx, t, s, out, n);
#endif
    if (t == KEDR_F64) {
        double *o = out;
        long long draws = (long long)((n + 1) / 2);
#pragma omp parallel for schedule(static)
        for (long long d = 0; d < draws; d++) {
            kedr_u32x4 r = kedr_rng_draw(s.seed, (uint64_t)d, s.step, s.purpose);
            size_t i = 2 * (size_t)d;
            o[i] = kedr_u01_f64(r.v[0], r.v[1]);
            if (i + 1 < n)
                o[i + 1] = kedr_u01_f64(r.v[2], r.v[3]);
        }
        return KEDR_OK;
    }
    long long draws = (long long)((n + 3) / 4);
#pragma omp parallel for schedule(static)
    for (long long d = 0; d < draws; d++) {
        kedr_u32x4 r = kedr_rng_draw(s.seed, (uint64_t)d, s.step, s.purpose);
        size_t i = 4 * (size_t)d;
        for (int j = 0; j < 4 && i + j < n; j++) {
            if (t == KEDR_U32)
                ((uint32_t *)out)[i + j] = r.v[j];
            else
                ((float *)out)[i + j] = kedr_u01_f32(r.v[j]);
        }
    }
    return KEDR_OK;
}

kedr_status kedr_rng_normal(kedr_ctx *ctx, kedr_dtype t, kedr_rng_stream s, void *out, size_t n)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_rng_normal: ctx is NULL");
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPE_BIT(KEDR_F32) | KEDR_TYPE_BIT(KEDR_F64),
                              "kedr_rng_normal", "output"));
    KEDR_TRY(kedr_check_ptr(out, n, "kedr_rng_normal", "out"));
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return rng_normal_cuda(ctx, t, s, out, n);
#endif
    long long draws = (long long)((n + 1) / 2);
#pragma omp parallel for schedule(static)
    for (long long d = 0; d < draws; d++) {
        double z[2];
        kedr_normal2_f64(kedr_rng_draw(s.seed, (uint64_t)d, s.step, s.purpose), &z[0], &z[1]);
        size_t i = 2 * (size_t)d;
        for (int j = 0; j < 2 && i + j < n; j++) {
            if (t == KEDR_F64)
                ((double *)out)[i + j] = z[j];
            else
                ((float *)out)[i + j] = (float)z[j];
        }
    }
    return KEDR_OK;
}

kedr_status kedr_rng_maxwellian(kedr_ctx *ctx, kedr_rng_stream s, double temperature, double mass,
                                const double drift[3], double *vx, double *vy, double *vz,
                                size_t n)
{
    static const char fn[] = "kedr_rng_maxwellian";
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
    if (!isfinite(temperature) || temperature < 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: temperature = %g K (expected finite and >= 0)",
                         fn, temperature);
    if (!isfinite(mass) || !(mass > 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: mass = %g kg (expected finite and > 0)", fn, mass);
    if (!drift)
        return kedr_fail(KEDR_ERR_INVALID, "%s: drift is NULL (expected 3 components, in host "
                         "memory)", fn);
    if (!isfinite(drift[0]) || !isfinite(drift[1]) || !isfinite(drift[2]))
        return kedr_fail(KEDR_ERR_INVALID, "%s: drift = (%g, %g, %g) is not finite", fn, drift[0],
                         drift[1], drift[2]);
    KEDR_TRY(kedr_check_ptr(vx, n, fn, "vx"));
    KEDR_TRY(kedr_check_ptr(vy, n, fn, "vy"));
    KEDR_TRY(kedr_check_ptr(vz, n, fn, "vz"));
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return rng_maxwellian_cuda(ctx, s, temperature, mass, drift, vx, vy, vz, n);
#endif
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; i++) {
        double v[3];
        kedr_maxwellian(s.seed, (uint64_t)i, s.step, s.purpose, temperature, mass, drift, v);
        vx[i] = v[0];
        vy[i] = v[1];
        vz[i] = v[2];
    }
    return KEDR_OK;
}
