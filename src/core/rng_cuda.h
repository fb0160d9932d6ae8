/* Private to core: the cuda versions of the bulk random fills (arguments checked by rng.c). */
#ifndef KEDR_RNG_CUDA_H
#define KEDR_RNG_CUDA_H

#include "kedr/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef KEDR_HAVE_CUDA
kedr_status rng_uniform_cuda(kedr_ctx *ctx, kedr_dtype t, kedr_rng_stream s, void *out, size_t n);
kedr_status rng_normal_cuda(kedr_ctx *ctx, kedr_dtype t, kedr_rng_stream s, void *out, size_t n);
kedr_status rng_maxwellian_cuda(kedr_ctx *ctx, kedr_rng_stream s, double temperature,
                                double mass, const double drift[3], double *vx, double *vy,
                                double *vz, size_t n);
#endif

#ifdef __cplusplus
}
#endif
#endif
