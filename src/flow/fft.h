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

/* The cuda path's per-element steps (fft.cu's kernels; here so that a host emulation of its
 * layout, test_flow_fft, runs the same code). The lines along one axis of n cells: element m of
 * line b is grid cell lo_b + lo (m + n hi_b), where b = lo_b + lo hi_b (lo: the cells of the
 * axes before it); in the transform buffer a line holds n / 2 + 1 complex numbers (re, im
 * pairs), the same memory as a real line of pad = 2 (n / 2 + 1). */
typedef struct {
    int n, per;
    size_t lo, lines, pad;
} flow_fft_axis;

/* grid cell c: its line b and its place m along the axis */
FLOW_HD void flow_fft_line_of(const flow_fft_axis *A, size_t c, size_t *b, int *m)
{
    size_t rest = c / A->lo, lo = c - rest * A->lo, hi = rest / (size_t)A->n;
    *m = (int)(rest - hi * (size_t)A->n);
    *b = lo + A->lo * hi;
}

/* the grid cell of element 0 of line b (element m is lo m further) */
FLOW_HD size_t flow_fft_line_start(const flow_fft_axis *A, size_t b)
{
    size_t hi = b / A->lo;
    return (b - hi * A->lo) + A->lo * (size_t)A->n * hi;
}

/* where element m of a line goes in the real FFT's input: m (periodic), or Makhoul's reorder
 * v_j = x_{2j}, v_{n-1-j} = x_{2j+1} (Neumann) */
FLOW_HD int flow_fft_reorder(const flow_fft_axis *A, int m)
{
    return A->per ? m : (m % 2 == 0 ? m / 2 : A->n - 1 - (m - 1) / 2);
}

/* sin and cos of pi k / (2n) */
FLOW_HD void flow_fft_twiddle(int k, int n, double *s, double *c)
{
#ifdef __CUDA_ARCH__
    sincospi(k / (2.0 * n), s, c);
#else
    *s = sin(M_PI * k / (2.0 * n));
    *c = cos(M_PI * k / (2.0 * n));
#endif
}

/* After the real FFT of a line (V: its n / 2 + 1 complex values, re and im interleaved): the
 * axis's output k as FFTW's, halfcomplex (periodic: r_k for k <= n/2, i_{n-k} above) or the
 * DCT-II Y_k = 2 Re(e^{-i pi k / (2n)} V_k) with V_k = conj(V_{n-k}) above n/2 (Neumann). */
FLOW_HD double flow_fft_forward_out(const flow_fft_axis *A, const double *V, int k)
{
    int lower = k <= A->n / 2, kk = lower ? k : A->n - k;
    if (A->per)
        return lower ? V[2 * kk] : V[2 * kk + 1];
    double s, c;
    flow_fft_twiddle(k, A->n, &s, &c);
    return 2 * (c * V[2 * kk] + s * (lower ? V[2 * kk + 1] : -V[2 * kk + 1]));
}

/* Before the inverse (complex-to-real, unnormalised) FFT of a line: its complex value k <= n/2
 * from the axis's coefficients Y (line: Y_0 of the line, Y_m lo further): halfcomplex unpacked
 * (periodic), or e^{i pi k / (2n)} (Y_k - i Y_{n-k}) with Y_n = 0 (Neumann: FFTW's REDFT01 after
 * the reorder is undone). The imaginary parts of k = 0 and k = n/2 (n even) are 0. */
FLOW_HD void flow_fft_inverse_in(const flow_fft_axis *A, const double *line, int k, double *re,
                                 double *im)
{
    double yk = line[A->lo * (size_t)k];
    double ynk = k > 0 ? line[A->lo * (size_t)(A->n - k)] : 0.0;
    if (A->per) {
        *re = yk;
        *im = k > 0 && 2 * k < A->n ? ynk : 0.0;
        return;
    }
    double s, c;
    flow_fft_twiddle(k, A->n, &s, &c);
    *re = c * yk + s * ynk;
    *im = 2 * k == A->n ? 0.0 : s * yk - c * ynk;
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
