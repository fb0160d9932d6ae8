/* C = A B in double precision with the copies to and from the GPU overlapped with the products
 * by CUDA streams (Boreskov et al., "Parallel computing on GPU", 2012, sec. 11.1): B and C go in
 * column panels, one stream each. The book's Tesla C1060 gained 1.24x at n = 1024 (0.013909 s
 * against 0.011231 s) and 1.09x at n = 4096 (0.431783 s against 0.396524 s): the longer the
 * product takes against the copies, the less there is to hide. The cpu path is OpenBLAS's dgemm,
 * which is also the reference both GPU versions are checked against. */
#include "gemm.h"
#include "kedr/kedr.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: example_streamed_gemm [--n N] [--streams S]\n"
    "  C = A B for N x N doubles (default N = 4096, S = 4): OpenBLAS on the cpu and, with a GPU,\n"
    "  cuBLAS sequentially and over S streams; exits 1 unless the GPU's C matches the cpu's\n";

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    long n = 4096, streams = 4;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long *dst = i + 1 < argc && strcmp(argv[i], "--n") == 0         ? &n
                    : i + 1 < argc && strcmp(argv[i], "--streams") == 0 ? &streams
                                                                        : NULL;
        if (!dst) {
            fputs(usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
        const char *opt = argv[i];
        *dst = strtol(argv[++i], &end, 10);
        long hi = dst == &n ? 20000 : 32;
        if (*end || *dst < 1 || *dst > hi) {
            fprintf(stderr, "%s %s: expected an integer from 1 to %ld\n", opt, argv[i], hi);
            return 2;
        }
    }
    if (streams > n) {
        fprintf(stderr, "--streams %ld: at most --n (%ld) panels\n", streams, n);
        return 2;
    }
    size_t nn = (size_t)n * n;
    double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
    double *g = malloc(nn * sizeof *g);
    if (!a || !b || !c || !g) {
        fprintf(stderr, "out of memory for n = %ld\n", n);
        return 1;
    }
    uint64_t s = 3;
    for (size_t i = 0; i < nn; i++) {
        a[i] = 2 * ((next(&s) >> 11) * 0x1p-53) - 1;
        b[i] = 2 * ((next(&s) >> 11) * 0x1p-53) - 1;
    }
    double flops = 2.0 * n * n * n;
    double t0 = kedr_wall_seconds();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1, a, (int)n, b,
                (int)n, 0, c, (int)n);
    double cpu = kedr_wall_seconds() - t0;
    printf("C = A B, %ld x %ld doubles\n%-28s %10.4f s %10.1f GFLOP/s\n", n, n, "cpu (OpenBLAS)",
           cpu, flops / cpu / 1e9);
    /* OpenBLAS's C is the reference: 97 of its entries checked against plain dot products. */
    int bad = 0;
    for (size_t t = 0; t < 97; t++) {
        size_t i = t * 7919 % (size_t)n, j = t * 104729 % (size_t)n;
        double dot = 0;
        for (size_t q = 0; q < (size_t)n; q++)
            dot += a[i + q * (size_t)n] * b[q + j * (size_t)n];
        bad |= !(fabs(dot - c[i + j * (size_t)n]) <= 1e-15 * n * 8);
    }
    if (bad)
        fprintf(stderr, "OpenBLAS's C differs from plain dot products beyond rounding\n");
#ifdef KEDR_HAVE_CUDA
    if (kedr_backend_available(KEDR_BACKEND_CUDA)) {
        double seq = 0;
        for (int k = 0; k < 2 && !bad; k++) {
            int st = k == 0 ? 1 : (int)streams;
            char err[256], label[64];
            double sec = 0, worst = 0;
            memset(g, 0, nn * sizeof *g);
            /* the first call also pays for cuBLAS's start-up: a warm-up */
            if (gemm_cuda((int)n, st, a, b, g, &sec, err, sizeof err) != 0 ||
                gemm_cuda((int)n, st, a, b, g, &sec, err, sizeof err) != 0) {
                fprintf(stderr, "GPU: %s\n", err);
                bad = 1;
                break;
            }
            for (size_t i = 0; i < nn; i++)
                worst = fmax(worst, fabs(g[i] - c[i]));
            /* entries are sums of n products of numbers in [-1, 1]: rounding of about n eps */
            bad |= !(worst <= 1e-15 * n * 8);
            snprintf(label, sizeof label, st == 1 ? "GPU sequential" : "GPU over %d streams", st);
            printf("%-28s %10.4f s %10.1f GFLOP/s  max |C - C_cpu| %.1e", label, sec,
                   flops / sec / 1e9, worst);
            if (k == 0)
                seq = sec;
            else
                printf("  speed-up %.2fx (C1060: 1.24x at 1024, 1.09x at 4096)", seq / sec);
            printf("\n");
        }
        if (bad)
            fprintf(stderr, "the GPU's C differs from OpenBLAS's beyond rounding\n");
    } else {
        printf("GPU path: no GPU here\n");
    }
#else
    printf("GPU path: not built (no CUDA toolkit)\n");
#endif
    free(a);
    free(b);
    free(c);
    free(g);
    return bad;
}
