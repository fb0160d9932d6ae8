/* The direct Poisson solver of boxes without bodies (method fft): the discrete Laplacian's
 * eigenvectors along a Neumann axis are cos(pi k (i + 1/2) / n), those of the DCT-II (FFTW's
 * REDFT10, inverse REDFT01 up to 2n), with eigenvalues (2 - 2 cos(pi k / n)) / h^2; along a
 * periodic axis the real and imaginary parts of the DFT (R2HC, inverse HC2R up to n), with
 * (2 - 2 cos(2 pi k / n)) / h^2 for index k and its partner n - k. A is diagonal in the product
 * basis: transform, divide by the sum of the axes' eigenvalues (the constant mode, A's null
 * space, set to 0: the zero-mean solution), transform back. On the cpu with FFTW (here); on
 * cuda with cuFFT (fft.cu), the same eigenvalues, division and output order. */
#include "core/internal.h"
#include "flow/fft.h"
#include "flow/ops.h"

#include <stdlib.h>
#include <string.h>

#ifdef KEDR_HAVE_FFTW
#include <fftw3.h>
#endif

struct flow_fft {
    double *lam[3]; /* eigenvalues per axis, indexed as the transforms' output */
    double scale;   /* 1 / the product of the transforms' factors */
#ifdef KEDR_HAVE_FFTW
    fftw_plan fwd, bwd;
    double *work;
#endif
#ifdef KEDR_HAVE_CUDA
    struct flow_fft_cuda *cu;
#endif
};

double flow_fft_bytes(const int n[3])
{
    double N = (double)n[0] * n[1] * n[2], line = 0, eig = 0;
    for (int a = 0; a < 3; a++) {
        eig += 8.0 * n[a];
        if (n[a] > 1) { /* a batch of N / n lines of n / 2 + 1 complex numbers */
            double b = N / n[a] * (n[a] / 2 + 1) * 16;
            line = b > line ? b : line;
        }
    }
    double cpu = 8 * N, cuda = 2 * line; /* the buffer, and cuFFT's work area as large */
    return (cpu > cuda ? cpu : cuda) + eig;
}

kedr_status flow_fft_check(kedr_ctx *ctx)
{
    kedr_backend b = kedr_ctx_backend(ctx);
#ifdef KEDR_HAVE_CUDA
    if (b == KEDR_BACKEND_CUDA)
        return KEDR_OK;
#endif
#ifdef KEDR_HAVE_FFTW
    if (b == KEDR_BACKEND_CPU)
        return KEDR_OK;
#endif
    if (b == KEDR_BACKEND_CPU)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr flow: the FFT Poisson solver on the cpu "
                         "needs FFTW: install libfftw3-dev (scripts/install-deps.sh) and rebuild");
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr flow: no FFT Poisson solver on the %s back end "
                     "in this build", kedr_backend_name(b));
}

void flow_fft_free(kedr_flow_poisson *ps)
{
    struct flow_fft *t = ps->fft;
    if (!t)
        return;
#ifdef KEDR_HAVE_FFTW
    if (t->fwd)
        fftw_destroy_plan(t->fwd);
    if (t->bwd)
        fftw_destroy_plan(t->bwd);
    fftw_free(t->work);
#endif
#ifdef KEDR_HAVE_CUDA
    flow_fft_cuda_free(ps->ctx, t->cu);
#endif
    for (int a = 0; a < 3; a++)
        free(t->lam[a]);
    free(t);
    ps->fft = NULL;
}

#ifdef KEDR_HAVE_FFTW
static kedr_status fftw_setup(struct flow_fft *t, const flow_level *L)
{
    int dims[3], rank = 0;
    fftw_r2r_kind fk[3], bk[3];
    for (int a = 2; a >= 0; a--) { /* FFTW's first dimension varies slowest: z, y, x */
        if (L->n[a] == 1)
            continue;
        dims[rank] = L->n[a];
        fk[rank] = L->per[a] ? FFTW_R2HC : FFTW_REDFT10;
        bk[rank] = L->per[a] ? FFTW_HC2R : FFTW_REDFT01;
        rank++;
    }
    if (!(t->work = fftw_alloc_real(L->N)))
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: FFT work array of %zu", L->N);
    if (rank > 0) {
        t->fwd = fftw_plan_r2r(rank, dims, t->work, t->work, fk, FFTW_ESTIMATE);
        t->bwd = fftw_plan_r2r(rank, dims, t->work, t->work, bk, FFTW_ESTIMATE);
        if (!t->fwd || !t->bwd)
            return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr flow: FFTW could not plan the transforms");
    }
    return KEDR_OK;
}
#endif

kedr_status flow_fft_setup(kedr_flow_poisson *ps)
{
    KEDR_TRY(flow_fft_check(ps->ctx));
    const flow_level *L = &ps->lv[0];
    struct flow_fft *t = calloc(1, sizeof *t);
    if (!t)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: FFT solver record");
    ps->fft = t;
    t->scale = 1;
    for (int a = 0; a < 3; a++) {
        int n = L->n[a];
        if (!(t->lam[a] = malloc((size_t)n * sizeof(double))))
            return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: FFT eigenvalues");
        for (int k = 0; k < n; k++)
            t->lam[a][k] = flow_fft_eigenvalue(n, L->per[a], L->ih2[a], k);
        if (n > 1)
            t->scale /= L->per[a] ? n : 2.0 * n;
    }
#ifdef KEDR_HAVE_CUDA
    if (kedr_ctx_backend(ps->ctx) == KEDR_BACKEND_CUDA)
        return flow_fft_cuda_setup(ps->ctx, L, t->lam, t->scale, &t->cu);
#endif
#ifdef KEDR_HAVE_FFTW
    return fftw_setup(t, L);
#else
    return KEDR_OK; /* not reached: flow_fft_check refused */
#endif
}

kedr_status flow_fft_solve(kedr_flow_poisson *ps, const double *b, double *x)
{
    const flow_level *L = &ps->lv[0];
    struct flow_fft *t = ps->fft;
#ifdef KEDR_HAVE_CUDA
    if (t->cu)
        return flow_fft_cuda_solve(ps->ctx, L, t->cu, b, x);
#endif
#ifdef KEDR_HAVE_FFTW
    memcpy(t->work, b, L->N * sizeof *b);
    if (t->fwd)
        fftw_execute(t->fwd);
    for (int k = 0; k < L->n[2]; k++)
        for (int j = 0; j < L->n[1]; j++)
            for (int i = 0; i < L->n[0]; i++) {
                size_t c = flow_index(L, i, j, k);
                t->work[c] = flow_fft_divide(t->work[c],
                                             t->lam[0][i] + t->lam[1][j] + t->lam[2][k], t->scale);
            }
    if (t->bwd)
        fftw_execute(t->bwd);
    memcpy(x, t->work, L->N * sizeof *x);
    return KEDR_OK;
#else
    (void)L, (void)t, (void)b, (void)x;
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr flow: no FFT Poisson solver here");
#endif
}
