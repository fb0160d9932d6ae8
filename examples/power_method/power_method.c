/* The power method for the largest eigenvalue of a matrix with positive entries (Boreskov et al.,
 * "Parallel computing on GPU", 2012, sec. 7.1.2): y = A x, x = y / ||y||, until
 * ||x_{k+1} - x_k|| < eps; then lambda = x^T A x / x^T x. By the Perron-Frobenius theorem the
 * largest eigenvalue of such a matrix is real, positive and simple, so the method converges.
 * The cpu path calls OpenBLAS (cblas_sgemv ...), the GPU path cuBLAS (cublasSgemv ...), and
 * both are checked against every eigenvalue LAPACK (dgeev, in double) finds for the same matrix.
 *
 * The book's y = A x is a matrix-vector product, cublasSgemv; its matmul check of sec. 7.1.1
 * calls cublasSgemv_v2 with the arguments of cublasSgemm (two transposes, three sizes, a second
 * matrix), which does not compile: that call should be cublasSgemm. */
#include "kedr/kedr.h"
#include "power.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: example_power_method [--n N] [--eps E] [--seed S] [--check]\n"
    "  the largest eigenvalue of an N x N matrix of uniform (0, 1] entries (default N = 1000,\n"
    "  eps = 1e-6) by the power method on the cpu (OpenBLAS) and, with a GPU, cuBLAS;\n"
    "  --check: exit 1 unless each agrees with LAPACK's dgeev within 1e-4 (relative)\n";

/* splitmix64: the matrix and the start vector, the same on every machine. */
static double uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return ((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

/* The power method with OpenBLAS, step for step as power_cuda does it with cuBLAS. */
static void power_cpu(const float *a, const float *x0, int n, float eps, int max_iter,
                      power_result *r)
{
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    if (!x || !y) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(x, x0, sizeof(float) * (size_t)n);
    cblas_sscal(n, 1 / cblas_snrm2(n, x, 1), x, 1);
    float diff = 1e30f;
    int k = 0;
    double t0 = kedr_wall_seconds();
    while (diff > eps && k < max_iter) {
        k++;
        cblas_sgemv(CblasColMajor, CblasNoTrans, n, n, 1, a, n, x, 1, 0, y, 1);
        cblas_sscal(n, 1 / cblas_snrm2(n, y, 1), y, 1);
        cblas_saxpy(n, -1, y, 1, x, 1); /* x = x - y */
        diff = cblas_snrm2(n, x, 1);
        cblas_scopy(n, y, 1, x, 1);
    }
    r->seconds = kedr_wall_seconds() - t0;
    cblas_sgemv(CblasColMajor, CblasNoTrans, n, n, 1, a, n, x, 1, 0, y, 1);
    r->lambda = (double)cblas_sdot(n, x, 1, y, 1) / cblas_sdot(n, x, 1, x, 1);
    r->diff = diff;
    r->iterations = k;
    free(x);
    free(y);
}

/* The eigenvalue of largest modulus by LAPACK's dgeev, in double. */
static int lapack_largest(const float *a, int n, double *lambda)
{
    size_t nn = (size_t)n * n;
    double *ad = malloc(nn * sizeof(double)), *wr = malloc(sizeof(double) * (size_t)n),
           *wi = malloc(sizeof(double) * (size_t)n);
    if (!ad || !wr || !wi)
        return -1;
    for (size_t i = 0; i < nn; i++)
        ad[i] = a[i];
    lapack_int info = LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', 'N', n, ad, n, wr, wi, NULL, 1, NULL, 1);
    double best = 0;
    for (int i = 0; i < n; i++)
        if (hypot(wr[i], wi[i]) > fabs(best))
            best = wi[i] == 0 ? wr[i] : hypot(wr[i], wi[i]);
    *lambda = best;
    free(ad);
    free(wr);
    free(wi);
    return info == 0 ? 0 : -1;
}

static int report(const char *path, const power_result *r, double ref, int check)
{
    double rel = fabs(r->lambda - ref) / fabs(ref);
    printf("%-22s lambda %.6f after %d iterations (||x_k+1 - x_k|| = %.2e), %.3f ms; "
           "relative difference from LAPACK %.1e\n",
           path, r->lambda, r->iterations, r->diff, 1e3 * r->seconds, rel);
    if (check && !(rel < 1e-4)) {
        fprintf(stderr, "%s: lambda %.9g differs from LAPACK's %.9g by %.1e (expected < 1e-4)\n",
                path, r->lambda, ref, rel);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    long n = 1000;
    double eps = 1e-6;
    unsigned long long seed = 1;
    int check = 0;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--check") == 0) {
            check = 1;
        } else if (i + 1 < argc && strcmp(argv[i], "--n") == 0) {
            n = strtol(argv[++i], &end, 10);
            if (*end || n < 2 || n > 30000) {
                fprintf(stderr, "--n %s: expected an integer from 2 to 30000\n", argv[i]);
                return 2;
            }
        } else if (i + 1 < argc && strcmp(argv[i], "--eps") == 0) {
            eps = strtod(argv[++i], &end);
            if (*end || !(eps > 0 && eps < 1)) {
                fprintf(stderr, "--eps %s: expected a number between 0 and 1\n", argv[i]);
                return 2;
            }
        } else if (i + 1 < argc && strcmp(argv[i], "--seed") == 0) {
            seed = strtoull(argv[++i], &end, 10);
            if (*end) {
                fprintf(stderr, "--seed %s: expected a non-negative integer\n", argv[i]);
                return 2;
            }
        } else {
            fputs(usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * sizeof(float)), *x0 = malloc(sizeof(float) * (size_t)n);
    if (!a || !x0) {
        fprintf(stderr, "out of memory for a %ld x %ld matrix\n", n, n);
        return 1;
    }
    uint64_t s = seed;
    for (size_t i = 0; i < nn; i++)
        a[i] = (float)(1 - uniform(&s)); /* (0, 1]: every entry positive */
    for (long i = 0; i < n; i++)
        x0[i] = (float)(1 - uniform(&s));
    double ref;
    if (lapack_largest(a, (int)n, &ref) != 0) {
        fprintf(stderr, "LAPACKE_dgeev failed for the %ld x %ld matrix\n", n, n);
        return 1;
    }
    printf("power method, %ld x %ld matrix of uniform (0, 1] entries, eps %.0e\n", n, n, eps);
    printf("%-22s lambda %.6f (dgeev, double precision)\n", "LAPACK", ref);
    power_result r;
    power_cpu(a, x0, (int)n, (float)eps, 1000, &r);
    int bad = report("cpu (OpenBLAS sgemv)", &r, ref, check);
#ifdef KEDR_HAVE_CUDA
    if (kedr_backend_available(KEDR_BACKEND_CUDA)) {
        char err[256];
        if (power_cuda(a, x0, (int)n, (float)eps, 1000, &r, err, sizeof err) != 0) {
            fprintf(stderr, "GPU path: %s\n", err);
            bad = 1;
        } else {
            bad |= report("GPU (cuBLAS Sgemv)", &r, ref, check);
        }
    } else {
        printf("GPU path: no GPU here\n");
    }
#else
    printf("GPU path: not built (no CUDA toolkit)\n");
#endif
    free(a);
    free(x0);
    return bad;
}
