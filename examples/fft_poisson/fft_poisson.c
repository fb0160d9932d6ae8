/* A periodic Poisson equation solved by FFT (Boreskov et al., "Parallel computing on GPU", 2012,
 * sec. 7.3.1): lap u = rho on the unit square with
 *   rho = (s - 2 sigma^2) / sigma^4 exp(-s / (2 sigma^2)),  s = (x - 1/2)^2 + (y - 1/2)^2,
 * whose solution is u0 = exp(-s / (2 sigma^2)) (the book prints exp(+s / (2 sigma^2)), which is
 * not a solution: the Laplacian of the Gaussian is rho, of its inverse something else). The
 * Gaussian is periodic only up to its value at the edges, exp(-1 / (8 sigma^2)), so the errors
 * below stop falling there. u is found up to a constant: both it and u0 are taken of zero mean.
 *
 * Two symbols divide the transform of rho. The book's eq. 7.8 is the symbol of the 5-point
 * Laplacian, (2 cos(2 pi m / N) + 2 cos(2 pi n / N) - 4) / h^2: it solves the finite-difference
 * equations, second-order accurate. Its code divides by the continuous symbol -4 pi^2 |k|^2
 * instead: spectrally accurate, the error falls faster than any power of h. Both are shown.
 * The book's cpu code also divides only the real part of each coefficient; that goes unnoticed
 * there because a Gaussian centred on a grid point has a real transform (up to rounding).
 *
 * cpu: FFTW (r2c, c2r). GPU: cuFFT (D2Z, Z2D), checked against the cpu's values. */
#include "kedr/kedr.h"
#include "poisson.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: example_fft_poisson [--n N] [--sigma S] [--check]\n"
    "  solves lap u = rho (a Gaussian's Laplacian, periodic unit square) on grids of 16 .. N\n"
    "  points a side (default N = 512, sigma = 0.05) with the continuous and the 5-point symbol,\n"
    "  by FFTW and, with a GPU, cuFFT; --check: exit 1 unless the spectral error reaches the\n"
    "  periodicity floor, the 5-point error falls 4x per halving of h, and cuFFT agrees with FFTW\n";

static double sigma = 0.05;

static double sdist(double x, double y) { return (x - 0.5) * (x - 0.5) + (y - 0.5) * (y - 0.5); }

static double rho_at(double x, double y)
{
    double s = sdist(x, y), s2 = sigma * sigma;
    return (s - 2 * s2) / (s2 * s2) * exp(-s / (2 * s2));
}

static double exact_at(double x, double y) { return exp(-sdist(x, y) / (2 * sigma * sigma)); }

/* The FFTW solution, of zero mean; discrete chooses the symbol. */
static void poisson_fftw(int n, const double *rho, double *u, int discrete)
{
    int m = n / 2 + 1;
    size_t nn = (size_t)n * n;
    double *in = fftw_malloc(nn * sizeof(double));
    fftw_complex *v = fftw_malloc((size_t)n * m * sizeof(fftw_complex));
    if (!in || !v) {
        fprintf(stderr, "out of memory for n = %d\n", n);
        exit(1);
    }
    fftw_plan fwd = fftw_plan_dft_r2c_2d(n, n, in, v, FFTW_ESTIMATE);
    fftw_plan inv = fftw_plan_dft_c2r_2d(n, n, v, in, FFTW_ESTIMATE);
    memcpy(in, rho, nn * sizeof(double));
    fftw_execute(fwd);
    double h2 = 1.0 / ((double)n * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s;
            if (discrete) {
                s = (2 * cos(2 * M_PI * i / n) + 2 * cos(2 * M_PI * j / n) - 4) / h2;
            } else {
                double kx = i < n / 2 ? i : i - n, ky = j < n / 2 ? j : j - n;
                s = -4 * M_PI * M_PI * (kx * kx + ky * ky);
            }
            double *c = v[(size_t)j * m + i];
            if (i == 0 && j == 0) {
                c[0] = c[1] = 0; /* zero mean */
            } else {
                c[0] /= s;
                c[1] /= s;
            }
        }
    fftw_execute(inv);
    for (size_t k = 0; k < nn; k++)
        u[k] = in[k] / (double)nn; /* FFTW's transforms are unnormalised */
    fftw_destroy_plan(fwd);
    fftw_destroy_plan(inv);
    fftw_free(in);
    fftw_free(v);
}

/* max |u - (u0 - mean u0)| over the grid. */
static double error_vs_exact(int n, const double *u)
{
    size_t nn = (size_t)n * n;
    double mean = 0, err = 0;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < n; k++)
            mean += exact_at((double)k / n, (double)j / n);
    mean /= (double)nn;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < n; k++)
            err = fmax(err, fabs(u[(size_t)j * n + k] -
                                 (exact_at((double)k / n, (double)j / n) - mean)));
    return err;
}

int main(int argc, char **argv)
{
    long nmax = 512;
    int check = 0;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--check") == 0) {
            check = 1;
        } else if (i + 1 < argc && strcmp(argv[i], "--n") == 0) {
            nmax = strtol(argv[++i], &end, 10);
            if (*end || nmax < 32 || nmax > 16384 || (nmax & (nmax - 1))) {
                fprintf(stderr, "--n %s: expected a power of 2 from 32 to 16384\n", argv[i]);
                return 2;
            }
        } else if (i + 1 < argc && strcmp(argv[i], "--sigma") == 0) {
            sigma = strtod(argv[++i], &end);
            if (*end || !(sigma >= 0.02 && sigma <= 0.2)) {
                fprintf(stderr, "--sigma %s: expected a width from 0.02 to 0.2\n", argv[i]);
                return 2;
            }
        } else {
            fputs(usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    int gpu = 0;
#ifdef KEDR_HAVE_CUDA
    gpu = kedr_backend_available(KEDR_BACKEND_CUDA);
#endif
    /* Where the errors stop: the Gaussian's jump across the periodic edges, exp(-1/(8 sigma^2))
     * (times about 10, measured), or rounding. */
    double floor_err = 10 * exp(-1 / (8 * sigma * sigma)) + 1e-12;
    printf("lap u = rho on the periodic unit square, sigma = %g; u0 = exp(-s / (2 sigma^2))\n",
           sigma);
    printf("%6s %22s %22s %8s %s\n", "N", "continuous symbol", "5-point symbol (7.8)", "ratio",
           gpu ? "  cuFFT - FFTW" : "");
    int bad = 0;
    double prev = 0, spectral_last = 0;
    for (long n = 16; n <= nmax; n *= 2) {
        size_t nn = (size_t)n * n;
        double *rho = malloc(nn * sizeof(double)), *u = malloc(nn * sizeof(double));
        double *ug = malloc(nn * sizeof(double));
        if (!rho || !u || !ug) {
            fprintf(stderr, "out of memory for n = %ld\n", n);
            return 1;
        }
        for (long j = 0; j < n; j++)
            for (long k = 0; k < n; k++)
                rho[j * n + k] = rho_at((double)k / n, (double)j / n);
        poisson_fftw((int)n, rho, u, 0);
        double e_spec = error_vs_exact((int)n, u);
        double gdiff = 0;
#ifdef KEDR_HAVE_CUDA
        if (gpu) {
            char err[256];
            if (poisson_cuda((int)n, rho, ug, 0, err, sizeof err) != 0) {
                fprintf(stderr, "GPU path: %s\n", err);
                return 1;
            }
            for (size_t k = 0; k < nn; k++)
                gdiff = fmax(gdiff, fabs(ug[k] - u[k]));
        }
#endif
        poisson_fftw((int)n, rho, u, 1);
        double e_disc = error_vs_exact((int)n, u);
#ifdef KEDR_HAVE_CUDA
        if (gpu) {
            char err[256];
            if (poisson_cuda((int)n, rho, ug, 1, err, sizeof err) != 0) {
                fprintf(stderr, "GPU path: %s\n", err);
                return 1;
            }
            for (size_t k = 0; k < nn; k++)
                gdiff = fmax(gdiff, fabs(ug[k] - u[k]));
        }
#endif
        double ratio = prev > 0 ? prev / e_disc : 0;
        if (ratio > 0)
            printf("%6ld %22.3e %22.3e %8.2f", n, e_spec, e_disc, ratio);
        else
            printf("%6ld %22.3e %22.3e %8s", n, e_spec, e_disc, "");
        if (gpu)
            printf("  %.1e", gdiff);
        printf("\n");
        /* Second order: the error falls 4x per halving of h once the grid resolves sigma. */
        if (check && n >= 64 && e_disc > 100 * floor_err && !(ratio > 3.6 && ratio < 4.4)) {
            fprintf(stderr, "N = %ld: the 5-point error fell %.2fx, expected about 4x\n", n, ratio);
            bad = 1;
        }
        if (check && gpu && !(gdiff < 1e-9)) {
            fprintf(stderr, "N = %ld: cuFFT and FFTW differ by %.1e\n", n, gdiff);
            bad = 1;
        }
        prev = e_disc;
        spectral_last = e_spec;
        free(rho);
        free(u);
        free(ug);
    }
    printf("the floor (the Gaussian's jump at the edges, or rounding): %.1e\n", floor_err);
    if (check && !(spectral_last < floor_err)) {
        fprintf(stderr, "the spectral error %.1e at N = %ld did not reach the floor %.1e\n",
                spectral_last, nmax, floor_err);
        bad = 1;
    }
    return bad;
}
