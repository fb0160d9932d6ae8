/* The matrix products of Boreskov et al., "Parallel computing on GPU" (2012), ch. 3, beside the
 * vendor libraries: C = A B from global memory and through 16 x 16 shared tiles (table 3.3), and
 * C = A A^T through tiles without and with padding (table 3.4), as kedr_probe_textbook_matmul
 * runs them, against cublasSgemm on the GPU and OpenBLAS's sgemm on the cpu. Every product is
 * checked against OpenBLAS's. The book's check of these products (sec. 7.1.1) calls
 * cublasSgemv_v2 with sgemm's arguments; the call it means is cublasSgemm, used here. */
#include "kedr/kedr.h"
#include "kedr/probe.h"
#include "sgemm.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: example_matmul [--n N] [--repeats R]\n"
    "  the textbook's four products of N x N floats (default 2048 with a GPU, 512 without) on\n"
    "  each back end, beside cublasSgemm and OpenBLAS sgemm; exits 1 unless every product\n"
    "  matches OpenBLAS's within float rounding\n";

/* C2070, 2048 x 2048, ms (tables 3.3, 3.4). */
static const double book_ms[KEDR_PROBE_MM_COUNT] = {324.63, 93.26, 596.60, 92.50};

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Worst |c - ref| relative to the sum of |terms| of each entry, bounded by n |a| |b| here. */
static double rel_error(const float *c, const float *ref, size_t nn, double scale)
{
    double worst = 0;
    for (size_t i = 0; i < nn; i++) {
        double e = fabs((double)c[i] - ref[i]) / scale;
        worst = e > worst || e != e ? e : worst;
    }
    return worst;
}

static int run_backend(kedr_backend b, int n, int repeats, const float *a, const float *bm,
                       float *const ref[2])
{
    kedr_ctx *ctx = NULL;
    if (kedr_ctx_create(&ctx, b, 0) != KEDR_OK) {
        fprintf(stderr, "%s: %s\n", kedr_backend_name(b), kedr_last_error());
        return 1;
    }
    size_t nn = (size_t)n * n, bytes = nn * sizeof(float);
    float *da = NULL, *db = NULL, *dc = NULL, *c = malloc(bytes);
    double *t = malloc(sizeof(double) * (size_t)repeats), flops = 2.0 * n * n * (double)n;
    kedr_timer *timer = NULL;
    int bad = 1;
    if (!c || !t || kedr_alloc(ctx, (void **)&da, bytes) != KEDR_OK ||
        kedr_alloc(ctx, (void **)&db, bytes) != KEDR_OK ||
        kedr_alloc(ctx, (void **)&dc, bytes) != KEDR_OK ||
        kedr_upload(ctx, da, a, bytes) != KEDR_OK || kedr_upload(ctx, db, bm, bytes) != KEDR_OK ||
        kedr_timer_create(ctx, &timer) != KEDR_OK) {
        fprintf(stderr, "%s: %s\n", kedr_backend_name(b), kedr_last_error());
        goto done;
    }
    bad = 0;
    for (int k = 0; k < KEDR_PROBE_MM_COUNT + (b == KEDR_BACKEND_CUDA); k++) {
        int lib = k == KEDR_PROBE_MM_COUNT, aat = lib ? 0 : k >= KEDR_PROBE_MM_AAT;
        double sec = 0;
        if (lib) {
#ifdef KEDR_HAVE_CUDA
            char err[256];
            if (sgemm_cuda(n, 0, da, db, dc, repeats, &sec, err, sizeof err) != 0) {
                fprintf(stderr, "cuBLAS: %s\n", err);
                bad = 1;
                break;
            }
#endif
        } else {
            for (int r = -1; r < repeats; r++) {
                double s = 0;
                if (kedr_timer_start(timer) != KEDR_OK ||
                    kedr_probe_textbook_matmul(ctx, k, da, db, dc, (size_t)n) != KEDR_OK ||
                    kedr_timer_stop(timer, &s) != KEDR_OK) {
                    fprintf(stderr, "%s: %s\n", kedr_backend_name(b), kedr_last_error());
                    bad = 1;
                    goto done;
                }
                if (r >= 0)
                    t[r] = s;
            }
            qsort(t, (size_t)repeats, sizeof *t, cmp);
            sec = t[repeats / 2];
        }
        if (kedr_download(ctx, c, dc, bytes) != KEDR_OK) {
            fprintf(stderr, "%s: %s\n", kedr_backend_name(b), kedr_last_error());
            bad = 1;
            break;
        }
        /* entries in [-1, 1]: each a sum of n products, rounding about n float epsilons */
        double err = rel_error(c, ref[aat], nn, (double)n);
        int wrong = !(err <= 1.2e-7 * (n + 2));
        bad |= wrong;
        char book[48] = "";
        if (!lib && n == 2048)
            snprintf(book, sizeof book, "C2070 %.2f ms", book_ms[k]);
        else if (lib && n == 2048)
            snprintf(book, sizeof book, "C2070 CUBLAS 30.84 ms");
        printf("%-5s %-26s %10.3f ms %9.1f GFLOP/s  error %.1e%s  %s\n", kedr_backend_name(b),
               lib ? "cublasSgemm, C = A B" : kedr_probe_matmul_name(k), 1e3 * sec,
               flops / sec / 1e9, err, wrong ? " WRONG" : "", book);
    }
done:
    kedr_timer_destroy(timer);
    kedr_free(ctx, da);
    kedr_free(ctx, db);
    kedr_free(ctx, dc);
    kedr_ctx_destroy(ctx);
    free(c);
    free(t);
    return bad;
}

int main(int argc, char **argv)
{
    int gpu = kedr_backend_available(KEDR_BACKEND_CUDA);
    long n = gpu ? 2048 : 512, repeats = 5;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long *dst = i + 1 < argc && strcmp(argv[i], "--n") == 0         ? &n
                    : i + 1 < argc && strcmp(argv[i], "--repeats") == 0 ? &repeats
                                                                        : NULL;
        if (!dst) {
            fputs(usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
        const char *opt = argv[i];
        *dst = strtol(argv[++i], &end, 10);
        long hi = dst == &n ? 16384 : 1000;
        if (*end || *dst < 1 || *dst > hi) {
            fprintf(stderr, "%s %s: expected an integer from 1 to %ld\n", opt, argv[i], hi);
            return 2;
        }
    }
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
    float *ref[2] = {malloc(nn * sizeof(float)), malloc(nn * sizeof(float))};
    if (!a || !b || !ref[0] || !ref[1]) {
        fprintf(stderr, "out of memory for n = %ld\n", n);
        return 1;
    }
    uint64_t s = 11;
    for (size_t i = 0; i < nn; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = (float)((s >> 11) * 0x1p-52 - 1);
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = (float)((s >> 11) * 0x1p-52 - 1);
    }
    double t0 = kedr_wall_seconds();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1, a, (int)n, b,
                (int)n, 0, ref[0], (int)n);
    double t1 = kedr_wall_seconds();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)n, 1, a, (int)n, a,
                (int)n, 0, ref[1], (int)n);
    printf("matrix products of %ld x %ld floats (Boreskov et al., tables 3.3 and 3.4)\n", n, n);
    printf("%-5s %-26s %10.3f ms %9.1f GFLOP/s  (the reference)\n", "cpu", "OpenBLAS sgemm, C = A B",
           1e3 * (t1 - t0), 2.0 * n * n * n / (t1 - t0) / 1e9);
    int bad = run_backend(KEDR_BACKEND_CPU, (int)n, (int)repeats, a, b, ref);
    if (gpu)
        bad |= run_backend(KEDR_BACKEND_CUDA, (int)n, (int)repeats, a, b, ref);
    else
        printf("cuda: no GPU here\n");
    free(a);
    free(b);
    free(ref[0]);
    free(ref[1]);
    return bad;
}
