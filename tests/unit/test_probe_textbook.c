/* The textbook's kernel variants (Boreskov et al., 2012) against plain references: reduce1..5 on
 * awkward sizes (integer sums modulo 2^32, exact), scan1 and scan2 (exclusive float prefix sums,
 * within the rounding of a tree of float additions), and the four matrix products (within the
 * rounding of a float dot product), outputs poisoned first, on each back end. */
#include "kedr/probe.h"
#include "test_util.h"

#include <stdint.h>

static void test_reduce(kedr_ctx *ctx)
{
    size_t large = tu_scale(((size_t)1 << 23) + 7, ((size_t)1 << 18) + 7);
    for (size_t si = 0; si <= TU_NSIZES; si++) {
        size_t n = si < TU_NSIZES ? tu_sizes[si] : large;
        int32_t *h = tu_host_alloc(n * sizeof *h);
        uint64_t st = n + 1;
        uint32_t want = 0;
        for (size_t i = 0; i < n; i++) {
            h[i] = (int32_t)(uint32_t)tu_next(&st); /* wraps: the sums overflow on purpose */
            want += (uint32_t)h[i];
        }
        int32_t *d = tu_upload(ctx, h, n * sizeof *h);
        for (int v = 1; v <= 5; v++) {
            int32_t sum = 12345;
            TU_OK(kedr_probe_textbook_reduce(ctx, v, d, n, &sum));
            TU_CHECK((uint32_t)sum == want, "reduce%d n=%zu: %u, expected %u", v, n,
                     (uint32_t)sum, want);
        }
        free(h);
        kedr_free(ctx, d);
    }
    int32_t sum;
    TU_CHECK(kedr_probe_textbook_reduce(ctx, 6, NULL, 0, &sum) == KEDR_ERR_INVALID, "reduce6 taken");
}

static void test_scan(kedr_ctx *ctx)
{
    size_t large = tu_scale(((size_t)1 << 22) + 5, ((size_t)1 << 18) + 5);
    for (size_t si = 0; si <= TU_NSIZES; si++) {
        size_t n = si < TU_NSIZES ? tu_sizes[si] : large;
        float *h = tu_host_alloc(n * sizeof *h);
        double *ref = tu_host_alloc(n * sizeof *ref);
        uint64_t st = n + 2;
        double s = 0;
        for (size_t i = 0; i < n; i++) {
            h[i] = (float)tu_uniform(&st);
            ref[i] = s;
            s += h[i];
        }
        float *d = tu_upload(ctx, h, n * sizeof *h);
        for (int v = 1; v <= 2; v++) {
            float *out = tu_poisoned(ctx, n * sizeof *out);
            TU_OK(kedr_probe_textbook_scan(ctx, v, d, out, n));
            float *got = tu_download(ctx, out, n * sizeof *got);
            /* A tree of float additions over at most 2^23 terms: about 24 roundings of 2^-24. */
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += !(fabs(got[i] - ref[i]) <= 3e-6 * ref[i] + 1e-6);
            TU_CHECK(bad == 0, "scan%d n=%zu: %zu prefixes off", v, n, bad);
            free(got);
            kedr_free(ctx, out);
        }
        free(h);
        free(ref);
        kedr_free(ctx, d);
    }
}

static void test_matmul(kedr_ctx *ctx)
{
    size_t ns[] = {1, 2, 15, 16, 17, 33, 100, 129};
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
        size_t n = ns[ni], nn = n * n;
        float *a = tu_host_alloc(nn * sizeof *a), *b = tu_host_alloc(nn * sizeof *b);
        uint64_t st = n;
        for (size_t i = 0; i < nn; i++) {
            a[i] = (float)(2 * tu_uniform(&st) - 1);
            b[i] = (float)(2 * tu_uniform(&st) - 1);
        }
        float *da = tu_upload(ctx, a, nn * sizeof *a), *db = tu_upload(ctx, b, nn * sizeof *b);
        for (int k = 0; k < KEDR_PROBE_MM_COUNT; k++) {
            int ab = k == KEDR_PROBE_MM_NAIVE || k == KEDR_PROBE_MM_TILED;
            float *dc = tu_poisoned(ctx, nn * sizeof(float));
            TU_OK(kedr_probe_textbook_matmul(ctx, k, da, db, dc, n));
            float *c = tu_download(ctx, dc, nn * sizeof *c);
            double worst = 0;
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++) {
                    double s = 0, mag = 0;
                    for (size_t q = 0; q < n; q++) {
                        double x = a[i * n + q], y = ab ? b[q * n + j] : a[j * n + q];
                        s += x * y;
                        mag += fabs(x * y);
                    }
                    double e = fabs(c[i * n + j] - s) / (mag + 1e-30);
                    worst = e > worst || e != e ? e : worst;
                }
            /* n float roundings of the running sum, relative to the sum of |terms|. */
            TU_CHECK(worst <= 1.2e-7 * (n + 2), "%s n=%zu: relative error %g",
                     kedr_probe_matmul_name(k), n, worst);
            free(c);
            kedr_free(ctx, dc);
        }
        free(a);
        free(b);
        kedr_free(ctx, da);
        kedr_free(ctx, db);
    }
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        test_reduce(ctx);
        test_scan(ctx);
        test_matmul(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_probe_textbook");
}
