/* kedr probe's measurement kernels against plain loops: every STREAM kernel, the limiting-factor
 * kernels, offset and stride, every matrix copy and transpose variant and the copy kernel under
 * every launch, on awkward sizes, with outputs poisoned first, on each back end; the overlap
 * engine model against the timelines of Ruetsch & Fatica's fig. 3.4; and on a GPU the transfer,
 * overlap and peer measurements, which check their own data. */
#include "kedr/probe.h"
#include "test_util.h"

#include <stdint.h>

static const size_t sizes[] = {1, 2, 31, 32, 33, 255, 257, 1023, 1025, 65537};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void fill(kedr_dtype t, void *h, size_t n, uint64_t seed)
{
    uint64_t st = seed;
    for (size_t i = 0; i < n; i++)
        tu_store(t, h, i, 0, 2 * tu_uniform(&st) - 1);
}

static double get(kedr_dtype t, const void *h, size_t i)
{
    return t == KEDR_F32 ? ((const float *)h)[i] : ((const double *)h)[i];
}

/* The result of op over host arrays, as the kernel must leave them (float rounding per type). */
static void stream_ref(kedr_dtype t, kedr_probe_stream_op op, size_t n, void *a, void *b, void *c,
                       double s, double *dot)
{
    *dot = 0;
    for (size_t i = 0; i < n; i++) {
        if (t == KEDR_F32) {
            float *x = a, *y = b, *z = c, fs = (float)s;
            switch (op) {
            case KEDR_PROBE_COPY: z[i] = x[i]; break;
            case KEDR_PROBE_SCALE: y[i] = fs * z[i]; break;
            case KEDR_PROBE_ADD: z[i] = x[i] + y[i]; break;
            case KEDR_PROBE_TRIAD: x[i] = y[i] + fs * z[i]; break;
            case KEDR_PROBE_DOT: *dot += (double)x[i] * y[i]; break;
            }
        } else {
            double *x = a, *y = b, *z = c;
            switch (op) {
            case KEDR_PROBE_COPY: z[i] = x[i]; break;
            case KEDR_PROBE_SCALE: y[i] = s * z[i]; break;
            case KEDR_PROBE_ADD: z[i] = x[i] + y[i]; break;
            case KEDR_PROBE_TRIAD: x[i] = y[i] + s * z[i]; break;
            case KEDR_PROBE_DOT: *dot += x[i] * y[i]; break;
            }
        }
    }
}

static void test_stream(kedr_ctx *ctx)
{
    kedr_dtype types[] = {KEDR_F32, KEDR_F64};
    for (int ti = 0; ti < 2; ti++)
        for (size_t si = 0; si < NSIZES; si++)
            for (int op = KEDR_PROBE_COPY; op <= KEDR_PROBE_DOT; op++) {
                kedr_dtype t = types[ti];
                size_t n = sizes[si], bytes = n * kedr_dtype_size(t);
                void *h[3], *d[3], *ref[3];
                for (int k = 0; k < 3; k++) {
                    h[k] = tu_host_alloc(bytes);
                    ref[k] = tu_host_alloc(bytes);
                    fill(t, h[k], n, 100 * k + n + op);
                    memcpy(ref[k], h[k], bytes);
                    d[k] = tu_upload(ctx, h[k], bytes);
                }
                /* The array the kernel writes starts poisoned. */
                int out = op == KEDR_PROBE_COPY || op == KEDR_PROBE_ADD ? 2
                          : op == KEDR_PROBE_SCALE                     ? 1
                          : op == KEDR_PROBE_TRIAD                     ? 0
                                                                       : -1;
                if (out >= 0)
                    kedr_memset(ctx, d[out], TU_POISON_BYTE, bytes);
                double dot = -1, want = 0;
                TU_OK(kedr_probe_stream(ctx, t, op, n, d[0], d[1], d[2], 0.4, &dot));
                stream_ref(t, op, n, ref[0], ref[1], ref[2], 0.4, &want);
                if (op == KEDR_PROBE_DOT) {
                    TU_CHECK(fabs(dot - want) <= 1e-12 * n + 1e-12, "dot %s n=%zu: %.17g, expected "
                             "%.17g", kedr_dtype_name(t), n, dot, want);
                } else {
                    void *got = tu_download(ctx, d[out], bytes);
                    /* Exact, but for the triad, whose multiply-add the GPU may fuse into one
                     * rounding where the cpu rounds twice: within an ulp there. */
                    double ulp = t == KEDR_F32 ? 0x1p-23 : 0x1p-52;
                    double tol = op == KEDR_PROBE_TRIAD ? 2 * ulp : 0;
                    size_t bad = 0;
                    for (size_t i = 0; i < n; i++) {
                        double g = get(t, got, i), w = get(t, ref[out], i);
                        bad += !(fabs(g - w) <= tol * (fabs(w) + 1));
                    }
                    TU_CHECK(bad == 0, "%s %s n=%zu: %zu elements differ",
                             kedr_probe_stream_name(op), kedr_dtype_name(t), n, bad);
                    free(got);
                }
                for (int k = 0; k < 3; k++) {
                    free(h[k]);
                    free(ref[k]);
                    kedr_free(ctx, d[k]);
                }
            }
}

static void test_limit(kedr_ctx *ctx)
{
    for (size_t si = 0; si < NSIZES; si++)
        for (int fast = 0; fast < 2; fast++) {
            size_t n = sizes[si], bytes = n * sizeof(float);
            float *b = tu_host_alloc(bytes);
            uint64_t st = n;
            for (size_t i = 0; i < n; i++)
                b[i] = (float)(3.14159 * (2 * tu_uniform(&st) - 1)); /* where __sinf is accurate */
            float *db = tu_upload(ctx, b, bytes);
            float *da = tu_poisoned(ctx, bytes);
            TU_OK(kedr_probe_limit(ctx, KEDR_PROBE_BASE, fast, da, db, n, 1.0f, 0));
            float *a = tu_download(ctx, da, bytes);
            double err = 0;
            for (size_t i = 0; i < n; i++)
                err = fmax(err, fabs(a[i] - sin((double)b[i])));
            /* sinf is within 2 ulp; __sinf's absolute error is about 2^-21.4 on [-pi, pi]. */
            TU_CHECK(err < 2e-6, "base fast=%d n=%zu: max error %g", fast, n, err);
            free(a);
            kedr_memset(ctx, da, TU_POISON_BYTE, bytes);
            TU_OK(kedr_probe_limit(ctx, KEDR_PROBE_MEMORY, fast, da, db, n, 1.0f, 0));
            a = tu_download(ctx, da, bytes);
            TU_CHECK(memcmp(a, b, bytes) == 0, "memory fast=%d n=%zu: copy differs", fast, n);
            free(a);
            /* The math kernel never stores with flag 0: the poison stays. */
            kedr_memset(ctx, da, TU_POISON_BYTE, bytes);
            TU_OK(kedr_probe_limit(ctx, KEDR_PROBE_MATH, fast, da, NULL, n, 1.0f, 0));
            unsigned char *raw = tu_download(ctx, da, bytes);
            size_t touched = 0;
            for (size_t i = 0; i < bytes; i++)
                touched += raw[i] != TU_POISON_BYTE;
            TU_CHECK(touched == 0, "math fast=%d n=%zu: %zu bytes written", fast, n, touched);
            free(raw);
            /* With x = pi/2 and flag 1, sinf(x) * flag is exactly 1 and every element is stored
             * (__sinf may miss 1 by an ulp; then no element is, but all agree). */
            TU_OK(kedr_probe_limit(ctx, KEDR_PROBE_MATH, fast, da, NULL, n, 1.5707964f, 1));
            a = tu_download(ctx, da, bytes);
            size_t wrong = 0;
            for (size_t i = 0; i < n; i++)
                wrong += fast ? memcmp(&a[i], &a[0], sizeof *a) != 0 : a[i] != 1.0f;
            TU_CHECK(wrong == 0, "math fast=%d flag 1 n=%zu: %zu elements wrong", fast, n, wrong);
            free(a);
            free(b);
            kedr_free(ctx, da);
            kedr_free(ctx, db);
        }
}

static void test_offset_stride(kedr_ctx *ctx)
{
    kedr_dtype types[] = {KEDR_F32, KEDR_F64};
    size_t shifts[] = {0, 1, 7, 16, 31, 32};
    for (int ti = 0; ti < 2; ti++)
        for (size_t si = 0; si < NSIZES; si++)
            for (size_t k = 0; k < sizeof shifts / sizeof shifts[0]; k++) {
                kedr_dtype t = types[ti];
                size_t n = sizes[si], e = kedr_dtype_size(t);
                size_t off = shifts[k], stride = shifts[k] + 1;
                size_t len = (n - 1) * stride + 1 > n + off ? (n - 1) * stride + 1 : n + off;
                void *d = NULL;
                TU_OK(kedr_alloc(ctx, &d, len * e));
                TU_OK(kedr_memset(ctx, d, 0, len * e));
                TU_OK(kedr_probe_offset(ctx, t, d, n, off));
                TU_OK(kedr_probe_stride(ctx, t, d, n, stride));
                void *h = tu_download(ctx, d, len * e);
                size_t bad = 0;
                for (size_t i = 0; i < len; i++) {
                    double want = (i >= off && i < off + n) + (i % stride == 0 && i / stride < n);
                    bad += get(t, h, i) != want;
                }
                TU_CHECK(bad == 0, "offset %zu / stride %zu %s n=%zu: %zu elements wrong", off,
                         stride, kedr_dtype_name(t), n, bad);
                free(h);
                /* strided reads, both load paths: b[i] = a[i * stride] for a[j] = j + 1/2 */
                void *src = tu_host_alloc(len * e), *db = NULL;
                for (size_t j = 0; j < len; j++) {
                    if (t == KEDR_F32)
                        ((float *)src)[j] = (float)j + 0.5f;
                    else
                        ((double *)src)[j] = (double)j + 0.5;
                }
                TU_OK(kedr_upload(ctx, d, src, len * e));
                TU_OK(kedr_alloc(ctx, &db, (n ? n : 1) * e));
                for (int ro = 0; ro < 2; ro++) {
                    TU_OK(kedr_memset(ctx, db, TU_POISON_BYTE, (n ? n : 1) * e));
                    TU_OK(kedr_probe_stride_read(ctx, t, d, db, n, stride, ro));
                    void *hb = tu_download(ctx, db, (n ? n : 1) * e);
                    size_t wrong = 0;
                    for (size_t i = 0; i < n; i++)
                        wrong += get(t, hb, i) != (double)(i * stride) + 0.5;
                    TU_CHECK(wrong == 0, "strided read %zu %s n=%zu (%s loads): %zu wrong", stride,
                             kedr_dtype_name(t), n, ro ? "read-only" : "plain", wrong);
                    free(hb);
                }
                free(src);
                kedr_free(ctx, db);
                kedr_free(ctx, d);
            }
    TU_CHECK(kedr_probe_stride_read(ctx, KEDR_F32, NULL, NULL, 0, 0, 0) == KEDR_ERR_INVALID,
             "a strided read of stride 0 taken");
    TU_CHECK(kedr_probe_stride(ctx, KEDR_F32, NULL, 0, 0) == KEDR_ERR_INVALID, "stride 0 taken");
    TU_CHECK(kedr_probe_offset(ctx, KEDR_I32, NULL, 0, 0) == KEDR_ERR_UNSUPPORTED, "I32 taken");
}

static void test_transpose(kedr_ctx *ctx)
{
    size_t shapes[][2] = {{1, 1},   {1, 33},  {33, 1},  {2, 3},     {31, 33},  {32, 32},
                          {33, 31}, {64, 96}, {100, 37}, {257, 129}, {1025, 65}};
    size_t nshapes = sizeof shapes / sizeof shapes[0];
    for (size_t s = 0; s < nshapes; s++)
        for (int k = 0; k < KEDR_PROBE_T_COUNT; k++) {
            size_t rows = shapes[s][0], cols = shapes[s][1], n = rows * cols;
            float *in = tu_host_alloc(n * sizeof(float));
            for (size_t i = 0; i < n; i++)
                in[i] = (float)i + 0.5f;
            float *din = tu_upload(ctx, in, n * sizeof(float));
            float *dout = tu_poisoned(ctx, n * sizeof(float));
            TU_OK(kedr_probe_transpose(ctx, k, din, dout, rows, cols));
            float *out = tu_download(ctx, dout, n * sizeof(float));
            int copy = k == KEDR_PROBE_T_COPY || k == KEDR_PROBE_T_COPY_SHARED;
            size_t bad = 0;
            for (size_t r = 0; r < rows; r++)
                for (size_t c = 0; c < cols; c++)
                    bad += (copy ? out[r * cols + c] : out[c * rows + r]) != in[r * cols + c];
            TU_CHECK(bad == 0, "%s %zu x %zu: %zu elements wrong", kedr_probe_transpose_name(k),
                     rows, cols, bad);
            free(in);
            free(out);
            kedr_free(ctx, din);
            kedr_free(ctx, dout);
        }
    float x = 0;
    TU_CHECK(kedr_probe_transpose(ctx, KEDR_PROBE_T_COUNT, &x, &x, 1, 1) == KEDR_ERR_INVALID,
             "unknown variant taken");
}

static void test_copy_launch(kedr_ctx *ctx)
{
    int threads[] = {32, 64, 128, 256, 1024};
    int ilps[] = {1, 3, 4, 8};
    kedr_dtype types[] = {KEDR_F32, KEDR_F64};
    size_t ns[] = {1, 33, 1025, 65537};
    for (int ti = 0; ti < 2; ti++)
        for (size_t a = 0; a < sizeof threads / sizeof threads[0]; a++)
            for (size_t b = 0; b < sizeof ilps / sizeof ilps[0]; b++)
                for (int one = 0; one < 2; one++)
                    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                        kedr_dtype t = types[ti];
                        size_t n = ns[ni], bytes = n * kedr_dtype_size(t);
                        kedr_probe_launch l = {threads[a], ilps[b], one};
                        void *h = tu_host_alloc(bytes);
                        fill(t, h, n, n + a + b);
                        void *din = tu_upload(ctx, h, bytes), *dout = tu_poisoned(ctx, bytes);
                        TU_OK(kedr_probe_copy_launch(ctx, t, dout, din, n, &l));
                        void *got = tu_download(ctx, dout, bytes);
                        TU_CHECK(memcmp(got, h, bytes) == 0, "copy %d threads ilp %d one %d %s "
                                 "n=%zu differs", l.threads, l.ilp, one, kedr_dtype_name(t), n);
                        if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA) {
                            double occ = -1;
                            size_t shared = 0;
                            TU_OK(kedr_probe_occupancy(ctx, t, &l, &occ, &shared));
                            TU_CHECK(occ > 0 && occ <= 1, "occupancy %g", occ);
                            TU_CHECK(!one || occ <= l.threads / 1024.0 + 1e-9,
                                     "one block per SM: occupancy %g with %d threads", occ,
                                     l.threads);
                        }
                        free(h);
                        free(got);
                        kedr_free(ctx, din);
                        kedr_free(ctx, dout);
                    }
    kedr_probe_launch bad = {33, 1, 0};
    float x = 0;
    TU_CHECK(kedr_probe_copy_launch(ctx, KEDR_F32, &x, &x, 1, &bad) == KEDR_ERR_INVALID,
             "33 threads taken");
}

/* The book's fig. 3.4: with each stage a third of the sequential time and 4 streams, one copy
 * engine gives V1 = sequential, V2 = V3 = 8/12 of it; two copy engines give 6/12 for V1 and V3,
 * and 9/12 for V2 when kernel completions are batched (Fermi). */
static void test_overlap_model(void)
{
    double T = 12;
    struct {
        kedr_probe_overlap_version v;
        int engines, batched;
        double want;
    } cases[] = {
        {KEDR_PROBE_SEQUENTIAL, 1, 0, 12}, {KEDR_PROBE_ASYNC_V1, 1, 0, 12},
        {KEDR_PROBE_ASYNC_V2, 1, 0, 8},    {KEDR_PROBE_ASYNC_V3, 1, 0, 8},
        {KEDR_PROBE_ASYNC_V1, 2, 1, 6},    {KEDR_PROBE_ASYNC_V2, 2, 1, 9},
        {KEDR_PROBE_ASYNC_V3, 2, 1, 6},    {KEDR_PROBE_ASYNC_V2, 2, 0, 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = kedr_probe_overlap_model(cases[i].v, 4, cases[i].engines, cases[i].batched,
                                              T / 3, T / 3, T / 3);
        TU_CHECK(fabs(got - cases[i].want) < 1e-12, "model %s engines %d batched %d: %g, "
                 "expected %g", kedr_probe_overlap_name(cases[i].v), cases[i].engines,
                 cases[i].batched, got, cases[i].want);
    }
    /* Copies twice as long as the kernel (K20's profile): the copies bound the time. */
    double got = kedr_probe_overlap_model(KEDR_PROBE_ASYNC_V1, 4, 2, 0, 2, 1, 2);
    TU_CHECK(fabs(got - (2 + 0.25 + 0.5)) < 1e-12, "copy-bound V1: %g", got);
}

static void test_gpu_only(kedr_ctx *ctx)
{
    double h2d = 0, d2h = 0;
    if (kedr_ctx_backend(ctx) != KEDR_BACKEND_CUDA) {
        TU_CHECK(kedr_probe_transfer(ctx, 1024, 1, 3, &h2d, &d2h) == KEDR_ERR_UNSUPPORTED,
                 "transfer on the cpu");
        kedr_probe_overlap_result r;
        TU_CHECK(kedr_probe_overlap(ctx, 4096, 4, 3, &r) == KEDR_ERR_UNSUPPORTED,
                 "overlap on the cpu");
        double occ;
        size_t sh;
        kedr_probe_launch l = {256, 1, 0};
        TU_CHECK(kedr_probe_occupancy(ctx, KEDR_F32, &l, &occ, &sh) == KEDR_ERR_UNSUPPORTED,
                 "occupancy on the cpu");
        return;
    }
    for (int pinned = 0; pinned < 2; pinned++) {
        size_t sizes_b[] = {1, 4097, (size_t)1 << 20};
        for (int k = 0; k < 3; k++) {
            TU_OK(kedr_probe_transfer(ctx, sizes_b[k], pinned, 3, &h2d, &d2h));
            TU_CHECK(h2d > 0 && d2h > 0, "transfer times %g %g", h2d, d2h);
        }
    }
    kedr_probe_overlap_result r;
    TU_OK(kedr_probe_overlap(ctx, 1 << 16, 4, 3, &r));
    for (int v = 0; v < KEDR_PROBE_OVERLAP_COUNT; v++)
        TU_CHECK(r.max_error[v] < 1e-5 && r.seconds[v] > 0, "overlap %s: error %g",
                 kedr_probe_overlap_name(v), r.max_error[v]);
    TU_CHECK(kedr_probe_overlap(ctx, 1000, 4, 3, &r) == KEDR_ERR_INVALID, "n = 1000 taken");
    if (kedr_device_count() >= 2) {
        double sec = 0;
        for (int peer = 0; peer < 2; peer++) {
            TU_OK(kedr_probe_peer_copy(0, 1, 12345, peer, 3, &sec));
            TU_OK(kedr_probe_peer_copy(1, 0, 1 << 20, peer, 3, &sec));
        }
    } else {
        double sec;
        TU_CHECK(kedr_probe_peer_copy(0, 1, 1024, 1, 3, &sec) == KEDR_ERR_UNSUPPORTED,
                 "peer copy with one GPU");
    }
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    test_overlap_model();
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        test_stream(ctx);
        test_limit(ctx);
        test_offset_stride(ctx);
        test_transpose(ctx);
        test_copy_launch(ctx);
        test_gpu_only(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_probe");
}
