/* The direct FFT / DCT Poisson solver (method fft) on every back end that has it (cpu: FFTW;
 * cuda: cuFFT, whose DCTs are built from real FFTs): 1D-like, 2D and 3D grids of awkward sizes
 * (1, 2, 3, 7, 16, 33, 64 cells, mixed per axis) with every mix of Neumann and periodic axes,
 * random right-hand sides with a nonzero mean. Each solve's residual is checked with a stencil
 * written here (b - mean(b) - A x small against b), x's mean must be 0, and with two back ends
 * the cuda x must equal the cpu's to 1e-12 of its largest entry. Where a back end has no FFT
 * solver, create must refuse it (KEDR_ERR_UNSUPPORTED). With FFTW, the cuda path's layout and
 * per-element steps (src/flow/fft.h: the line batches, Makhoul's reorder and twiddles, the
 * halfcomplex packing) also run on the host, FFTW's batched real FFTs in cuFFT's place, and
 * must give the cpu's x to 1e-12: a check of the GPU code's index arithmetic without a GPU. */
#include "flow/fft.h"
#include "kedr/flow.h"
#include "test_util.h"

#ifdef KEDR_HAVE_FFTW
#include <fftw3.h>
#endif

#define FFT_SAME 1e-12 /* cuda against cpu, relative to max |x| */
#define FFT_RES 1e-11  /* |b - mean(b) - A x| / |b - mean(b)| */

typedef struct {
    int n[3], per[3];
    double h[3];
} grid;

static size_t cells(const grid *g) { return (size_t)g->n[0] * g->n[1] * g->n[2]; }

/* r = b - A x with A = -Laplacian (5/7-point), Neumann or periodic ends, from the formula */
static void ref_residual(const grid *g, const double *x, const double *b, double *r)
{
    int n0 = g->n[0], n1 = g->n[1], n2 = g->n[2];
    for (int k = 0; k < n2; k++)
        for (int j = 0; j < n1; j++)
            for (int i = 0; i < n0; i++) {
                int at[3] = {i, j, k};
                size_t c = i + (size_t)n0 * (j + (size_t)n1 * k);
                double ax = 0;
                for (int a = 0; a < 3; a++) {
                    int n = g->n[a];
                    if (n == 1)
                        continue;
                    double w = 1 / (g->h[a] * g->h[a]);
                    for (int d = -1; d <= 1; d += 2) {
                        int m = at[a] + d;
                        if (m < 0 || m >= n) {
                            if (!g->per[a])
                                continue;
                            m = (m + n) % n;
                        }
                        int nb[3] = {i, j, k};
                        nb[a] = m;
                        ax += w * (x[c] - x[nb[0] + (size_t)n0 * (nb[1] + (size_t)n1 * nb[2])]);
                    }
                }
                r[c] = b[c] - ax;
            }
}

#ifdef KEDR_HAVE_FFTW
/* fft.cu's solve on the host: per axis with n > 1, the lines into the buffer (reordered), a
 * batch of in-place real FFTs with cuFFT's layout (lines pad reals / n/2 + 1 complex apart),
 * the axis's output; the division; per axis, the inverse's input, complex-to-real FFTs, the
 * lines back. */
static void emulate_cuda(const grid *g, const double *b, double *x)
{
    size_t N = cells(g), lo = 1, most = 0;
    flow_fft_axis ax[3];
    double *lam[3], scale = 1;
    for (int a = 0; a < 3; a++) {
        int n = g->n[a];
        ax[a] = (flow_fft_axis){n, g->per[a], lo, N / (size_t)n, 2 * (size_t)(n / 2 + 1)};
        lo *= (size_t)n;
        lam[a] = tu_host_alloc((size_t)n * sizeof(double));
        for (int k = 0; k < n; k++)
            lam[a][k] = flow_fft_eigenvalue(n, g->per[a], n > 1 ? 1 / (g->h[a] * g->h[a]) : 0, k);
        if (n > 1) {
            scale /= g->per[a] ? n : 2.0 * n;
            if (ax[a].lines * ax[a].pad > most)
                most = ax[a].lines * ax[a].pad;
        }
    }
    double *buf = fftw_alloc_real(most ? most : 1);
    const double *in = b;
    for (int a = 0; a < 3; a++) {
        const flow_fft_axis *A = &ax[a];
        if (A->n == 1)
            continue;
        fftw_plan p = fftw_plan_many_dft_r2c(1, &A->n, (int)A->lines, buf, NULL, 1, (int)A->pad,
                                             (fftw_complex *)buf, NULL, 1, A->n / 2 + 1,
                                             FFTW_ESTIMATE);
        for (size_t c = 0; c < N; c++) {
            size_t l;
            int m;
            flow_fft_line_of(A, c, &l, &m);
            buf[l * A->pad + flow_fft_reorder(A, m)] = in[c];
        }
        fftw_execute(p);
        for (size_t c = 0; c < N; c++) {
            size_t l;
            int k;
            flow_fft_line_of(A, c, &l, &k);
            x[c] = flow_fft_forward_out(A, buf + l * A->pad, k);
        }
        fftw_destroy_plan(p);
        in = x;
    }
    for (size_t c = 0; c < N; c++) {
        int i = (int)(c % (size_t)g->n[0]), j = (int)(c / (size_t)g->n[0] % (size_t)g->n[1]);
        int k = (int)(c / ((size_t)g->n[0] * g->n[1]));
        x[c] = flow_fft_divide(in[c], lam[0][i] + lam[1][j] + lam[2][k], scale);
    }
    for (int a = 0; a < 3; a++) {
        const flow_fft_axis *A = &ax[a];
        if (A->n == 1)
            continue;
        size_t h = (size_t)(A->n / 2 + 1);
        fftw_plan p = fftw_plan_many_dft_c2r(1, &A->n, (int)A->lines, (fftw_complex *)buf, NULL,
                                             1, (int)h, buf, NULL, 1, (int)A->pad, FFTW_ESTIMATE);
        for (size_t t = 0; t < A->lines * h; t++) {
            size_t l = t / h;
            flow_fft_inverse_in(A, x + flow_fft_line_start(A, l), (int)(t - l * h), &buf[2 * t],
                                &buf[2 * t + 1]);
        }
        fftw_execute(p);
        for (size_t c = 0; c < N; c++) {
            size_t l;
            int m;
            flow_fft_line_of(A, c, &l, &m);
            x[c] = buf[l * A->pad + flow_fft_reorder(A, m)];
        }
        fftw_destroy_plan(p);
    }
    fftw_free(buf);
    for (int a = 0; a < 3; a++)
        free(lam[a]);
}
#endif

/* Solves on ctx; returns x on the host, or NULL where the back end refuses the method (and
 * then checks that it had to). */
static double *solve(kedr_ctx *ctx, const grid *g, const double *b, const char *what)
{
    size_t N = cells(g);
    kedr_flow_poisson_opts o;
    kedr_flow_poisson_defaults(&o);
    for (int a = 0; a < 3; a++) {
        o.n[a] = g->n[a];
        o.h[a] = g->h[a];
        o.periodic[a] = g->per[a];
    }
    o.method = KEDR_FLOW_METHOD_FFT;
    kedr_flow_poisson *ps = NULL;
    kedr_status s = kedr_flow_poisson_create(ctx, &o, &ps);
#ifndef KEDR_HAVE_FFTW
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CPU) {
        TU_CHECK(s == KEDR_ERR_UNSUPPORTED && !ps, "%s: cpu without FFTW accepted", what);
        return NULL;
    }
#endif
    TU_CHECK(s == KEDR_OK, "%s: create: %s", what, kedr_last_error());
    if (s != KEDR_OK)
        return NULL;
    double *x = tu_host_alloc(N * sizeof *x);
    for (size_t i = 0; i < N; i++) /* a guess the direct solver must ignore */
        x[i] = 1e3 * ((double)i - N / 2.0);
    double *dx = tu_upload(ctx, x, N * sizeof *x), *db = tu_upload(ctx, b, N * sizeof *b);
    kedr_flow_poisson_info info;
    TU_OK(kedr_flow_poisson_solve(ps, dx, db, &info));
    TU_OK(kedr_download(ctx, x, dx, N * sizeof *x));
    TU_CHECK(info.converged && info.iterations == 0 && info.history_len == 1,
             "%s: converged %d after %d iterations, %d history entries", what, info.converged,
             info.iterations, info.history_len);
    TU_CHECK(N == 1 || info.residual <= FFT_RES, "%s: the solver's residual %.3g", what,
             info.residual);
    kedr_free(ctx, dx);
    kedr_free(ctx, db);
    kedr_flow_poisson_destroy(ps);
    return x;
}

/* The residual and mean of x against the formula. */
static void check_x(const grid *g, const double *b, const double *x, const char *what)
{
    size_t N = cells(g);
    double mb = 0, mx = 0, xmax = 0;
    for (size_t i = 0; i < N; i++) {
        mb += b[i] / N;
        mx += x[i] / N;
        xmax = fmax(xmax, fabs(x[i]));
    }
    double *bz = tu_host_alloc(N * sizeof *bz), *r = tu_host_alloc(N * sizeof *r);
    for (size_t i = 0; i < N; i++)
        bz[i] = b[i] - mb;
    ref_residual(g, x, bz, r);
    double rn = 0, bn = 0;
    for (size_t i = 0; i < N; i++) {
        rn += r[i] * r[i];
        bn += bz[i] * bz[i];
    }
    TU_CHECK(sqrt(rn) <= FFT_RES * sqrt(bn) + 1e-300 || (N == 1 && x[0] == 0),
             "%s: residual %.3g of |b| %.3g", what, sqrt(rn), sqrt(bn));
    TU_CHECK(fabs(mx) <= 1e-12 * (1 + xmax), "%s: mean of x %.3g", what, mx);
    free(bz);
    free(r);
}

int main(void)
{
    static const int sizes[][3] = {
        {1, 1, 1},   {2, 1, 1},  {33, 1, 1},  {1, 1, 64},  {1, 7, 1},   {3, 16, 1},
        {7, 64, 1},  {16, 3, 1}, {33, 2, 1},  {64, 64, 1}, {2, 33, 1},  {7, 16, 33},
        {33, 7, 2},  {64, 3, 16}, {16, 16, 16}, {2, 64, 7}, {3, 3, 3},  {64, 33, 7},
    };
    const size_t ngrids = sizeof sizes / sizeof sizes[0];
    kedr_backend bk[2];
    int nb = tu_backends(bk);
    kedr_ctx *ctx[2] = {NULL, NULL};
    for (int ib = 0; ib < nb; ib++)
        if (kedr_flow_backend_available(bk[ib]))
            ctx[ib] = tu_ctx(bk[ib]);
        else
            printf("flow: no %s back end in this build; skipped\n", kedr_backend_name(bk[ib]));
    uint64_t rs = 2024;
    int compared = 0, solved = 0, emulated = 0;
    double worst = 0, worst_emul = 0;
    for (size_t gi = 0; gi < ngrids; gi++)
        for (int mix = 0; mix < 8; mix++) {
            grid g;
            for (int a = 0; a < 3; a++) {
                g.n[a] = sizes[gi][a];
                g.per[a] = (mix >> a) & 1;
                g.h[a] = 0.1 + 0.07 * a + 0.01 * (int)gi;
            }
            if ((g.n[0] == 1 && g.per[0]) || (g.n[1] == 1 && g.per[1]) ||
                (g.n[2] == 1 && g.per[2]))
                continue; /* a one-cell axis: periodic or not is the same grid */
            size_t N = cells(&g);
            double *b = tu_host_alloc(N * sizeof *b), *x[2] = {NULL, NULL};
            for (size_t i = 0; i < N; i++)
                b[i] = 2 * tu_uniform(&rs) - 1 + 3; /* + 3: b's mean is not zero */
            char what[2][128];
            for (int ib = 0; ib < nb; ib++) {
                if (!ctx[ib])
                    continue;
                snprintf(what[ib], sizeof what[ib], "%s %dx%dx%d periodic %d%d%d",
                         kedr_backend_name(bk[ib]), g.n[0], g.n[1], g.n[2], g.per[0], g.per[1],
                         g.per[2]);
                x[ib] = solve(ctx[ib], &g, b, what[ib]);
                if (x[ib]) {
                    check_x(&g, b, x[ib], what[ib]);
                    solved++;
                }
            }
#ifdef KEDR_HAVE_FFTW
            for (int ib = 0; ib < nb; ib++) /* the cuda path's steps on the host against cpu */
                if (bk[ib] == KEDR_BACKEND_CPU && x[ib]) {
                    double *e = tu_host_alloc(N * sizeof *e), d = 0, m = 0;
                    emulate_cuda(&g, b, e);
                    for (size_t i = 0; i < N; i++) {
                        d = fmax(d, fabs(e[i] - x[ib][i]));
                        m = fmax(m, fabs(x[ib][i]));
                    }
                    worst_emul = fmax(worst_emul, m > 0 ? d / m : d);
                    TU_CHECK(d <= FFT_SAME * m, "%s: the cuda steps on the host differ from the "
                             "cpu's x by %.3g of max %.3g", what[ib], d, m);
                    emulated++;
                    free(e);
                }
#endif
            if (x[0] && x[1]) { /* cuda against cpu */
                double d = 0, m = 0;
                for (size_t i = 0; i < N; i++) {
                    d = fmax(d, fabs(x[1][i] - x[0][i]));
                    m = fmax(m, fabs(x[0][i]));
                }
                worst = fmax(worst, m > 0 ? d / m : d);
                TU_CHECK(d <= FFT_SAME * m, "%s: differs from the cpu's x by %.3g of max %.3g",
                         what[1], d, m);
                compared++;
            }
            free(b);
            free(x[0]);
            free(x[1]);
        }
    printf("fft: %d solves checked, %d compared across back ends (largest difference %.2e of "
           "max |x|), %d against the cuda steps run on the host (%.2e)\n", solved, compared,
           worst, emulated, worst_emul);
    for (int ib = 0; ib < nb; ib++)
        if (ctx[ib])
            kedr_ctx_destroy(ctx[ib]);
    return tu_finish("test_flow_fft");
}
