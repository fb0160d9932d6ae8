/* Bulk random fills on the GPU: one thread per Philox draw (four words), grid-stride, writing
 * the words of a draw with one vector store when the output is aligned for it. The arithmetic is
 * the inline code of kedr/rng.h, the same as on the cpu. */
#include "internal.h"
#include "rng_cuda.h"

#define RNG_THREADS 256

/* A grid that fills the GPU a few times over, or fewer blocks for short fills. */
static unsigned rng_grid(const kedr_ctx *ctx, size_t work)
{
    size_t grid = (work + RNG_THREADS - 1) / RNG_THREADS;
    size_t full = (size_t)ctx->multiprocessors * 16;
    return (unsigned)(grid < full ? grid : full);
}

/* out[i] = word i % 4 of draw i / 4, as it is (U32) or as a float uniform (F32). */
template <bool FLOAT>
__global__ void __launch_bounds__(RNG_THREADS)
    rng_uniform32_kernel(uint32_t *__restrict__ out, size_t n, kedr_rng_stream s, bool aligned)
{
    size_t draws = (n + 3) / 4;
    for (size_t d = (size_t)blockIdx.x * blockDim.x + threadIdx.x; d < draws;
         d += (size_t)gridDim.x * blockDim.x) {
        kedr_u32x4 r = kedr_rng_draw(s.seed, d, s.step, s.purpose);
        uint32_t w[4];
        for (int j = 0; j < 4; j++)
            w[j] = FLOAT ? __float_as_uint(kedr_u01_f32(r.v[j])) : r.v[j];
        size_t i = 4 * d;
        if (aligned && i + 3 < n) {
            *(uint4 *)(out + i) = make_uint4(w[0], w[1], w[2], w[3]);
        } else {
            for (int j = 0; j < 4 && i + j < n; j++)
                out[i + j] = w[j];
        }
    }
}

/* out[i] = the double uniform of words 2(i % 2), 2(i % 2) + 1 of draw i / 2. */
__global__ void __launch_bounds__(RNG_THREADS)
    rng_uniform64_kernel(double *__restrict__ out, size_t n, kedr_rng_stream s, bool aligned)
{
    size_t draws = (n + 1) / 2;
    for (size_t d = (size_t)blockIdx.x * blockDim.x + threadIdx.x; d < draws;
         d += (size_t)gridDim.x * blockDim.x) {
        kedr_u32x4 r = kedr_rng_draw(s.seed, d, s.step, s.purpose);
        double u0 = kedr_u01_f64(r.v[0], r.v[1]), u1 = kedr_u01_f64(r.v[2], r.v[3]);
        size_t i = 2 * d;
        if (aligned && i + 1 < n) {
            *(double2 *)(out + i) = make_double2(u0, u1);
        } else {
            out[i] = u0;
            if (i + 1 < n)
                out[i + 1] = u1;
        }
    }
}

/* out[i] = z_{i % 2} of the Box-Muller pair of draw i / 2, rounded to T. */
template <typename T>
__global__ void __launch_bounds__(RNG_THREADS)
    rng_normal_kernel(T *__restrict__ out, size_t n, kedr_rng_stream s, bool aligned)
{
    size_t draws = (n + 1) / 2;
    for (size_t d = (size_t)blockIdx.x * blockDim.x + threadIdx.x; d < draws;
         d += (size_t)gridDim.x * blockDim.x) {
        double z0, z1;
        kedr_normal2_f64(kedr_rng_draw(s.seed, d, s.step, s.purpose), &z0, &z1);
        size_t i = 2 * d;
        if (aligned && i + 1 < n) {
            if constexpr (sizeof(T) == 8)
                *(double2 *)(out + i) = make_double2(z0, z1);
            else
                *(float2 *)(out + i) = make_float2((float)z0, (float)z1);
        } else {
            out[i] = (T)z0;
            if (i + 1 < n)
                out[i + 1] = (T)z1;
        }
    }
}

__global__ void __launch_bounds__(RNG_THREADS)
    rng_maxwellian_kernel(double *__restrict__ vx, double *__restrict__ vy,
                          double *__restrict__ vz, size_t n, kedr_rng_stream s, double temperature,
                          double mass, double3 drift)
{
    const double u[3] = {drift.x, drift.y, drift.z};
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double v[3];
        kedr_maxwellian(s.seed, i, s.step, s.purpose, temperature, mass, u, v);
        vx[i] = v[0];
        vy[i] = v[1];
        vz[i] = v[2];
    }
}

extern "C" kedr_status rng_uniform_cuda(kedr_ctx *ctx, kedr_dtype t, kedr_rng_stream s, void *out,
                                        size_t n)
{
    bool aligned = (uintptr_t)out % 16 == 0;
    if (t == KEDR_F64) {
        rng_uniform64_kernel<<<rng_grid(ctx, (n + 1) / 2), RNG_THREADS, 0, KEDR_STREAM(ctx)>>>(
            (double *)out, n, s, aligned);
        KEDR_CUDA_LAUNCHED("rng_uniform64_kernel");
    } else if (t == KEDR_F32) {
        rng_uniform32_kernel<true><<<rng_grid(ctx, (n + 3) / 4), RNG_THREADS, 0, KEDR_STREAM(ctx)>>>(
            (uint32_t *)out, n, s, aligned);
        KEDR_CUDA_LAUNCHED("rng_uniform32_kernel");
    } else {
        rng_uniform32_kernel<false><<<rng_grid(ctx, (n + 3) / 4), RNG_THREADS, 0, KEDR_STREAM(ctx)>>>(
            (uint32_t *)out, n, s, aligned);
        KEDR_CUDA_LAUNCHED("rng_uniform32_kernel");
    }
    return KEDR_OK;
}

extern "C" kedr_status rng_normal_cuda(kedr_ctx *ctx, kedr_dtype t, kedr_rng_stream s, void *out,
                                       size_t n)
{
    unsigned grid = rng_grid(ctx, (n + 1) / 2);
    if (t == KEDR_F64) {
        rng_normal_kernel<double><<<grid, RNG_THREADS, 0, KEDR_STREAM(ctx)>>>(
            (double *)out, n, s, (uintptr_t)out % 16 == 0);
    } else {
        rng_normal_kernel<float><<<grid, RNG_THREADS, 0, KEDR_STREAM(ctx)>>>(
            (float *)out, n, s, (uintptr_t)out % 8 == 0);
    }
    KEDR_CUDA_LAUNCHED("rng_normal_kernel");
    return KEDR_OK;
}

extern "C" kedr_status rng_maxwellian_cuda(kedr_ctx *ctx, kedr_rng_stream s, double temperature,
                                           double mass, const double drift[3], double *vx,
                                           double *vy, double *vz, size_t n)
{
    rng_maxwellian_kernel<<<rng_grid(ctx, n), RNG_THREADS, 0, KEDR_STREAM(ctx)>>>(
        vx, vy, vz, n, s, temperature, mass, make_double3(drift[0], drift[1], drift[2]));
    KEDR_CUDA_LAUNCHED("rng_maxwellian_kernel");
    return KEDR_OK;
}
