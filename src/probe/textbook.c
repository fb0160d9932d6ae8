/* The kernel variants of Boreskov et al., "Parallel computing on GPU" (2012), ch. 3 and 5, as the
 * book numbers them: argument checks, the cpu references and the dispatch. The variants differ in
 * how a GPU block uses its threads and shared memory, so the cpu runs one reference per problem;
 * the GPU's variants are each checked against it by the tests and by kedr probe textbook. */
#include "core/internal.h"
#include "probe/probe_cuda.h"

#include <stdint.h>

static kedr_status check_common(kedr_ctx *ctx, const char *fn)
{
    return ctx ? KEDR_OK : kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
}

kedr_status kedr_probe_textbook_reduce(kedr_ctx *ctx, int variant, const int32_t *in, size_t n,
                                       int32_t *sum)
{
    const char *fn = "kedr_probe_textbook_reduce";
    KEDR_TRY(check_common(ctx, fn));
    if (variant < 1 || variant > 5)
        return kedr_fail(KEDR_ERR_INVALID, "%s: variant %d: expected reduce1 to reduce5", fn,
                         variant);
    if (!sum)
        return kedr_fail(KEDR_ERR_INVALID, "%s: sum is NULL", fn);
    KEDR_TRY(kedr_check_ptr(in, n, fn, "in"));
    if (n == 0) {
        *sum = 0;
        return KEDR_OK;
    }
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_reduce_cuda(ctx, variant, in, n, sum);
#endif
    /* Unsigned, so that the sum wraps modulo 2^32 as the GPU's int additions do. */
    uint32_t s = 0;
    long long m = (long long)n;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (long long i = 0; i < m; i++)
        s += (uint32_t)in[i];
    *sum = (int32_t)s;
    return KEDR_OK;
}

kedr_status kedr_probe_textbook_scan(kedr_ctx *ctx, int variant, const float *in, float *out,
                                     size_t n)
{
    const char *fn = "kedr_probe_textbook_scan";
    KEDR_TRY(check_common(ctx, fn));
    if (variant < 1 || variant > 2)
        return kedr_fail(KEDR_ERR_INVALID, "%s: variant %d: expected scan1 or scan2", fn, variant);
    KEDR_TRY(kedr_check_ptr(in, n, fn, "in"));
    KEDR_TRY(kedr_check_ptr(out, n, fn, "out"));
    if (n == 0)
        return KEDR_OK;
    if (n > ((size_t)1 << 31))
        return kedr_fail(KEDR_ERR_INVALID, "%s: n = %zu: at most 2^31", fn, n);
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)out, bytes = n * sizeof(float);
    if (a < b + bytes && b < a + bytes)
        return kedr_fail(KEDR_ERR_INVALID, "%s: out overlaps in", fn);
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_scan_cuda(ctx, variant, in, out, n);
#endif
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = (float)s;
        s += in[i];
    }
    return KEDR_OK;
}

const char *kedr_probe_matmul_name(kedr_probe_matmul_kind k)
{
    static const char *names[] = {"A B, global memory", "A B, shared tiles",
                                  "A A^T, shared tiles", "A A^T, padded tiles"};
    return (unsigned)k < KEDR_PROBE_MM_COUNT ? names[k] : "(invalid)";
}

static int overlaps(const float *x, const float *y, size_t bytes)
{
    uintptr_t a = (uintptr_t)x, b = (uintptr_t)y;
    return x && y && a < b + bytes && b < a + bytes;
}

kedr_status kedr_probe_textbook_matmul(kedr_ctx *ctx, kedr_probe_matmul_kind k, const float *a,
                                       const float *b, float *c, size_t n)
{
    const char *fn = "kedr_probe_textbook_matmul";
    KEDR_TRY(check_common(ctx, fn));
    if ((unsigned)k >= KEDR_PROBE_MM_COUNT)
        return kedr_fail(KEDR_ERR_INVALID, "%s: variant %d: expected 0 to %d", fn, (int)k,
                         KEDR_PROBE_MM_COUNT - 1);
    if (n > 65536)
        return kedr_fail(KEDR_ERR_INVALID, "%s: n = %zu: at most 65536", fn, n);
    int uses_b = k == KEDR_PROBE_MM_NAIVE || k == KEDR_PROBE_MM_TILED;
    size_t nn = n * n;
    KEDR_TRY(kedr_check_ptr(a, nn, fn, "a"));
    if (uses_b)
        KEDR_TRY(kedr_check_ptr(b, nn, fn, "b"));
    KEDR_TRY(kedr_check_ptr(c, nn, fn, "c"));
    if (n == 0)
        return KEDR_OK;
    if (overlaps(c, a, nn * sizeof(float)) || (uses_b && overlaps(c, b, nn * sizeof(float))))
        return kedr_fail(KEDR_ERR_INVALID, "%s: c overlaps an input", fn);
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_matmul_cuda(ctx, k, a, b, c, n);
#endif
    /* C = A B: rows of C from rows of B (i, k, j order, unit stride inside); C = A A^T: dot
     * products of rows of A. Sums in float. */
    long long m = (long long)n;
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < m; i++) {
        float *ci = c + (size_t)i * n;
        const float *ai = a + (size_t)i * n;
        if (uses_b) {
            for (size_t j = 0; j < n; j++)
                ci[j] = 0;
            for (size_t q = 0; q < n; q++) {
                const float *bq = b + q * n;
                for (size_t j = 0; j < n; j++)
                    ci[j] += ai[q] * bq[j];
            }
        } else {
            for (size_t j = 0; j < n; j++) {
                const float *aj = a + j * n;
                /* Eight running sums, which the compiler can keep in one vector register. */
                float s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, t = 0;
                size_t q = 0;
                for (; q + 8 <= n; q += 8)
                    for (int l = 0; l < 8; l++)
                        s[l] += ai[q + l] * aj[q + l];
                for (; q < n; q++)
                    t += ai[q] * aj[q];
                ci[j] = (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) + t;
            }
        }
    }
    return KEDR_OK;
}
