/* Core: contexts, buffers, copies, the scratch cache, timers and error reporting. */
#include "test_util.h"

#include <string.h>

#include "core/internal.h"

#include <omp.h>

static void check_buffers(kedr_ctx *ctx, uint64_t seed)
{
    for (size_t k = 0; k < TU_NSIZES; k++) {
        size_t n = tu_sizes[k];
        uint32_t *h = tu_host_alloc(n * 4);
        for (size_t i = 0; i < n; i++)
            h[i] = (uint32_t)tu_next(&seed);
        uint32_t *a = tu_upload(ctx, h, n * 4);
        uint32_t *b = tu_poisoned(ctx, n * 4);
        TU_OK(kedr_copy(ctx, b, a, n * 4));
        uint32_t *back = tu_download(ctx, b, n * 4);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += back[i] != h[i];
        TU_CHECK(bad == 0, "copy of %zu words: %zu differ", n, bad);
        TU_OK(kedr_memset(ctx, b, 0x3C, n * 4));
        free(back);
        back = tu_download(ctx, b, n * 4);
        bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += back[i] != 0x3C3C3C3Cu;
        TU_CHECK(bad == 0, "memset of %zu words: %zu differ", n, bad);
        free(back);
        free(h);
        kedr_free(ctx, a);
        kedr_free(ctx, b);
    }
}

static void check_scratch(kedr_ctx *ctx)
{
    void *a = NULL, *b = NULL, *c = NULL;
    TU_OK(kedr_scratch_get(ctx, &a, 1000));
    TU_OK(kedr_scratch_get(ctx, &b, 1000));
    TU_CHECK(a && b && a != b, "two scratch blocks in use at once must differ");
    kedr_scratch_put(ctx, a);
    TU_OK(kedr_scratch_get(ctx, &c, 500));
    TU_CHECK(c == a, "a freed block large enough is reused");
    kedr_scratch_put(ctx, b);
    kedr_scratch_put(ctx, c);
    /* More blocks in use than the cache has slots: the extra request fails cleanly. */
    void *held[KEDR_SCRATCH_SLOTS + 1];
    int got = 0;
    kedr_status s = KEDR_OK;
    while (got <= KEDR_SCRATCH_SLOTS && (s = kedr_scratch_get(ctx, &held[got], 64)) == KEDR_OK)
        got++;
    TU_CHECK(got == KEDR_SCRATCH_SLOTS && s == KEDR_ERR_NOMEM && kedr_last_error()[0],
             "scratch exhaustion: got %d blocks, status %s", got, kedr_status_name(s));
    for (int i = 0; i < got; i++)
        kedr_scratch_put(ctx, held[i]);
    kedr_scratch_trim(ctx);
}

static void check_timer(kedr_ctx *ctx)
{
    kedr_timer *t = NULL;
    TU_OK(kedr_timer_create(ctx, &t));
    size_t bytes = (size_t)64 << 20;
    void *a = tu_poisoned(ctx, bytes), *b = tu_poisoned(ctx, bytes);
    double sec = -1;
    TU_OK(kedr_timer_start(t));
    TU_OK(kedr_copy(ctx, b, a, bytes));
    TU_OK(kedr_timer_stop(t, &sec));
    TU_CHECK(sec > 0 && sec < 10, "a 64 MiB copy took %g s", sec);
    kedr_timer_destroy(t);
    kedr_free(ctx, a);
    kedr_free(ctx, b);
}

static void check_errors(kedr_ctx *ctx)
{
    kedr_backend b;
    TU_CHECK(kedr_backend_parse("gpu", &b) == KEDR_ERR_INVALID && strstr(kedr_last_error(), "gpu"),
             "an unknown back end is named in the message: '%s'", kedr_last_error());
    TU_CHECK(kedr_backend_parse("cuda", &b) == KEDR_OK && b == KEDR_BACKEND_CUDA, "parse cuda");
    /* An allocation far beyond any machine fails with NOMEM and says how much was asked. */
    void *p = NULL;
    kedr_status s = kedr_alloc(ctx, &p, (size_t)1 << 62);
    TU_CHECK(s == KEDR_ERR_NOMEM && strstr(kedr_last_error(), "GB"),
             "huge allocation: %s '%s'", kedr_status_name(s), kedr_last_error());
    /* The context stays usable after that failure. */
    void *q = NULL;
    TU_OK(kedr_alloc(ctx, &q, 1024));
    kedr_free(ctx, q);
    TU_CHECK(kedr_dtype_size(KEDR_F64) == 8 && kedr_dtype_size(KEDR_I32) == 4, "dtype sizes");
}

/* Byte counts for people, decimal units from kB to PB. */
static void check_format_bytes(void)
{
    static const struct {
        double bytes;
        const char *text;
    } cases[] = {{512, "0.512 kB"}, {3.27e9, "3.27 GB"}, {35.8e12, "35.8 TB"},
                 {2e15, "2 PB"},   {999e6, "999 MB"}};
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        TU_CHECK(strcmp(kedr_format_bytes(cases[i].bytes, buf, sizeof buf), cases[i].text) == 0,
                 "%g bytes: '%s', expected '%s'", cases[i].bytes, buf, cases[i].text);
}

/* kedr_sum_parts: the parts cover [0, n) once, in order, and their sums are added in part order:
 * every thread count gives the sum of the same static parts added left to right, bit for bit on
 * every call (the point of it), whatever order the threads finish in. */
static double sp_part(size_t lo, size_t hi, void *arg)
{
    const double *v = (const double *)arg;
    double s = 0;
    for (size_t i = lo; i < hi; i++)
        s += v[i];
    return s;
}

typedef struct {
    size_t lo[KEDR_PARTS_MOST], hi[KEDR_PARTS_MOST];
} sp_ranges;

static void sp_range(size_t lo, size_t hi, int t, void *arg)
{
    sp_ranges *r = (sp_ranges *)arg;
    r->lo[t] = lo;
    r->hi[t] = hi;
}

static void check_sum_parts(void)
{
    const size_t sizes[] = {0, 1, 2, 3, 7, 1000, 65537, 100003};
    double *v = malloc(100003 * sizeof *v);
    uint64_t st = 17;
    for (size_t i = 0; i < 100003; i++) /* mixed signs and magnitudes: the order shows */
        v[i] = (tu_uniform(&st) - 0.5) * pow(10.0, 12.0 * tu_uniform(&st) - 6.0);
    int keep = omp_get_max_threads();
    for (int threads = 1; threads <= 7; threads++) {
        omp_set_num_threads(threads);
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            size_t n = sizes[z];
            sp_ranges r;
            int parts = kedr_parts(n, 0, sp_range, &r);
            double want = 0;
            int ok = parts >= 1 && parts <= threads && r.lo[0] == 0 && r.hi[parts - 1] == n;
            for (int t = 0; t < parts; t++) {
                ok &= r.lo[t] <= r.hi[t] && (t == 0 || r.lo[t] == r.hi[t - 1]);
                want += sp_part(r.lo[t], r.hi[t], v);
            }
            TU_CHECK(ok, "kedr_parts: n = %zu, %d threads: %d parts not covering [0, n) in order",
                     n, threads, parts);
            for (int rep = 0; rep < 20; rep++) {
                double got = kedr_sum_parts(n, 0, sp_part, v);
                TU_CHECK(memcmp(&got, &want, sizeof got) == 0, "kedr_sum_parts: n = %zu, %d "
                         "threads, call %d: %.17g, the parts in order give %.17g", n, threads,
                         rep, got, want);
            }
            /* below min: one part, the plain sum */
            double one = kedr_sum_parts(n, n + 1, sp_part, v), plain = sp_part(0, n, v);
            TU_CHECK(memcmp(&one, &plain, sizeof one) == 0, "kedr_sum_parts below min: n = %zu",
                     n);
        }
    }
    omp_set_num_threads(keep);
    free(v);
}

int main(void)
{
    kedr_backend list[2];
    check_format_bytes();
    check_sum_parts();
    int nb = tu_backends(list);
    /* Without a GPU, asking for cuda fails with a message instead of crashing. */
    if (!kedr_backend_available(KEDR_BACKEND_CUDA)) {
        kedr_ctx *none = NULL;
        TU_CHECK(kedr_ctx_create(&none, KEDR_BACKEND_CUDA, 0) == KEDR_ERR_UNSUPPORTED && !none &&
                     kedr_last_error()[0],
                 "cuda context without a GPU: '%s'", kedr_last_error());
    } else {
        kedr_ctx *bad = NULL;
        TU_CHECK(kedr_ctx_create(&bad, KEDR_BACKEND_CUDA, 1000) == KEDR_ERR_INVALID,
                 "device 1000 must be rejected");
    }
    for (int k = 0; k < nb; k++) {
        kedr_ctx *ctx = tu_ctx(list[k]);
        TU_CHECK(kedr_ctx_backend(ctx) == list[k], "backend kept");
        check_buffers(ctx, 42 + k);
        check_scratch(ctx);
        check_timer(ctx);
        check_errors(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_core");
}
