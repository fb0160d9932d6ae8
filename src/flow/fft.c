/* The direct Poisson solver of boxes without bodies (method fft, cpu, with FFTW): the discrete
 * Laplacian's eigenvectors along a Neumann axis are cos(pi k (i + 1/2) / n), those of FFTW's
 * DCT-II (REDFT10, inverse REDFT01 up to 2n), with eigenvalues (2 - 2 cos(pi k / n)) / h^2; along
 * a periodic axis the real and imaginary parts of the DFT (R2HC, inverse HC2R up to n), with
 * (2 - 2 cos(2 pi k / n)) / h^2 for index k and its partner n - k. A is diagonal in the product
 * basis: transform, divide by the sum of the axes' eigenvalues (the constant mode, A's null
 * space, set to 0: the zero-mean solution), transform back. */
#include "core/internal.h"
#include "flow/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef KEDR_HAVE_FFTW
#include <fftw3.h>

struct flow_fft {
    fftw_plan fwd, bwd;
    double *work;
    double *lam[3]; /* eigenvalues per axis, index as FFTW's output */
    double scale;   /* 1 / the product of the transforms' factors */
};

void flow_fft_free(kedr_flow_poisson *ps)
{
    struct flow_fft *t = ps->fft;
    if (!t)
        return;
    if (t->fwd)
        fftw_destroy_plan(t->fwd);
    if (t->bwd)
        fftw_destroy_plan(t->bwd);
    fftw_free(t->work);
    for (int a = 0; a < 3; a++)
        free(t->lam[a]);
    free(t);
    ps->fft = NULL;
}

kedr_status flow_fft_setup(kedr_flow_poisson *ps)
{
    const flow_level *L = &ps->lv[0];
    struct flow_fft *t = calloc(1, sizeof *t);
    if (!t)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: FFT solver record");
    ps->fft = t;
    t->scale = 1;
    int dims[3], rank = 0;
    fftw_r2r_kind fk[3], bk[3];
    for (int a = 2; a >= 0; a--) { /* FFTW's first dimension varies slowest: z, y, x */
        int n = L->n[a];
        if (!(t->lam[a] = malloc((size_t)n * sizeof(double))))
            return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: FFT eigenvalues");
        for (int k = 0; k < n; k++) {
            double th = L->per[a] ? 2 * M_PI * (k <= n / 2 ? k : n - k) / n : M_PI * k / n;
            t->lam[a][k] = (2 - 2 * cos(th)) * L->ih2[a];
        }
        if (n == 1)
            continue;
        dims[rank] = n;
        fk[rank] = L->per[a] ? FFTW_R2HC : FFTW_REDFT10;
        bk[rank] = L->per[a] ? FFTW_HC2R : FFTW_REDFT01;
        t->scale /= L->per[a] ? n : 2.0 * n;
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

kedr_status flow_fft_solve(kedr_flow_poisson *ps, const double *b, double *x)
{
    const flow_level *L = &ps->lv[0];
    struct flow_fft *t = ps->fft;
    memcpy(t->work, b, L->N * sizeof *b);
    if (t->fwd)
        fftw_execute(t->fwd);
    for (int k = 0; k < L->n[2]; k++)
        for (int j = 0; j < L->n[1]; j++)
            for (int i = 0; i < L->n[0]; i++) {
                size_t c = flow_index(L, i, j, k);
                double lam = t->lam[0][i] + t->lam[1][j] + t->lam[2][k];
                t->work[c] = lam > 0 ? t->work[c] * t->scale / lam : 0.0;
            }
    if (t->bwd)
        fftw_execute(t->bwd);
    memcpy(x, t->work, L->N * sizeof *x);
    return KEDR_OK;
}
#endif
