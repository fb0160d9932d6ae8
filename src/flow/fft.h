/* Private to flow: the direct FFT / DCT Poisson solver's shared parts, the same for the cpu
 * (fft.c, FFTW) and cuda (fft.cu, cuFFT) paths: the eigenvalues of A along an axis and the
 * division by their sum, and the cuda entry points. */
#ifndef KEDR_FLOW_FFT_H
#define KEDR_FLOW_FFT_H

#include "flow/poisson_impl.h"

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The eigenvalue of the 1D operator (2 x_i - x_{i-1} - x_{i+1}) ih2 of n cells for mode k as
 * the transforms index their output: the DCT-II's k along a Neumann axis, (2 - 2 cos(pi k / n))
 * ih2; the halfcomplex (FFTW R2HC) index k along a periodic one, both k and n - k standing for
 * frequency min(k, n - k), (2 - 2 cos(2 pi min(k, n - k) / n)) ih2. 0 for n = 1 (ih2 = 0). */
static inline double flow_fft_eigenvalue(int n, int per, double ih2, int k)
{
    double th = per ? 2 * M_PI * (k <= n / 2 ? k : n - k) / n : M_PI * k / n;
    return (2 - 2 * cos(th)) * ih2;
}

/* One transformed coefficient divided by the sum of its axes' eigenvalues (lam, summed x, y, z
 * in that order on both back ends) and by the transforms' factor (scale = 1 / their product);
 * the constant mode (lam = 0, A's null space) set to 0: the zero-mean solution. */
FLOW_HD double flow_fft_divide(double v, double lam, double scale)
{
    return lam > 0 ? v * scale / lam : 0.0;
}

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes the solver takes beyond the Poisson solver's vectors for an n[0] x n[1] x n[2] grid
 * (n = 1 along unused axes): the larger of the cpu's (FFTW's work array) and the cuda path's
 * (its transform buffer, cuFFT's work area taken as large as that buffer, the eigenvalues). */
double flow_fft_bytes(const int n[3]);

/* KEDR_OK where the context's back end has the solver (cpu: with FFTW; cuda: cuFFT); else
 * KEDR_ERR_UNSUPPORTED saying what is missing. */
kedr_status flow_fft_check(kedr_ctx *ctx);

#ifdef KEDR_HAVE_CUDA
/* The cuda path (fft.cu): cuFFT plans of every axis with n > 1 (each a batch of 1D real
 * transforms of the axis's lines, in the context's stream), one transform buffer, one work area
 * shared by the plans, and the eigenvalues lam[a][0 .. n[a] - 1] copied to the device. */
struct flow_fft_cuda;
kedr_status flow_fft_cuda_setup(kedr_ctx *ctx, const flow_level *L, double *const lam[3],
                                double scale, struct flow_fft_cuda **out);
void flow_fft_cuda_free(kedr_ctx *ctx, struct flow_fft_cuda *cu);
/* x = A^+ b for b of zero mean; b and x in device memory, distinct */
kedr_status flow_fft_cuda_solve(kedr_ctx *ctx, const flow_level *L, struct flow_fft_cuda *cu,
                                const double *b, double *x);
/* the device bytes the plans, buffer and work area took */
size_t flow_fft_cuda_bytes(const struct flow_fft_cuda *cu);
#endif

#ifdef __cplusplus
}
#endif
#endif
