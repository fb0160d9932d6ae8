/* The measurement kernels of kedr probe: argument checks, the cpu versions and the dispatch. The
 * cpu versions are the plain loops the GPU kernels are checked against, run by OpenMP threads. */
#include "core/internal.h"
#include "probe/probe_cuda.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define FLOATS (KEDR_TYPE_BIT(KEDR_F32) | KEDR_TYPE_BIT(KEDR_F64))

static kedr_status check_ctx(kedr_ctx *ctx, const char *fn)
{
    return ctx ? KEDR_OK : kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
}

/* ---- STREAM-style kernels ------------------------------------------------------------------ */

const char *kedr_probe_stream_name(kedr_probe_stream_op op)
{
    static const char *names[] = {"copy", "scale", "add", "triad", "dot"};
    return (unsigned)op <= KEDR_PROBE_DOT ? names[op] : "(invalid)";
}

int kedr_probe_stream_arrays(kedr_probe_stream_op op)
{
    return op == KEDR_PROBE_ADD || op == KEDR_PROBE_TRIAD ? 3 : 2;
}

#define STREAM_CPU(NAME, T)                                                                   \
    static double NAME(kedr_probe_stream_op op, long long n, T *a, T *b, T *c, T s)         \
    {                                                                                       \
        double sum = 0;                                                                     \
        switch (op) {                                                                       \
        case KEDR_PROBE_COPY:                                                               \
            _Pragma("omp parallel for schedule(static)") for (long long i = 0; i < n; i++)  \
                c[i] = a[i];                                                                \
            break;                                                                          \
        case KEDR_PROBE_SCALE:                                                              \
            _Pragma("omp parallel for schedule(static)") for (long long i = 0; i < n; i++)  \
                b[i] = s * c[i];                                                            \
            break;                                                                          \
        case KEDR_PROBE_ADD:                                                                \
            _Pragma("omp parallel for schedule(static)") for (long long i = 0; i < n; i++)  \
                c[i] = a[i] + b[i];                                                         \
            break;                                                                          \
        case KEDR_PROBE_TRIAD:                                                              \
            _Pragma("omp parallel for schedule(static)") for (long long i = 0; i < n; i++)  \
                a[i] = b[i] + s * c[i];                                                     \
            break;                                                                          \
        case KEDR_PROBE_DOT:                                                                \
            _Pragma("omp parallel for schedule(static) reduction(+ : sum)")                 \
            for (long long i = 0; i < n; i++)                                               \
                sum += (double)a[i] * (double)b[i];                                         \
            break;                                                                          \
        }                                                                                   \
        return sum;                                                                         \
    }

STREAM_CPU(stream_cpu32, float)
STREAM_CPU(stream_cpu64, double)

kedr_status kedr_probe_stream(kedr_ctx *ctx, kedr_dtype t, kedr_probe_stream_op op, size_t n,
                              void *a, void *b, void *c, double scalar, double *dot)
{
    const char *fn = "kedr_probe_stream";
    KEDR_TRY(check_ctx(ctx, fn));
    KEDR_TRY(kedr_check_dtype(t, FLOATS, fn, "element"));
    if ((unsigned)op > KEDR_PROBE_DOT)
        return kedr_fail(KEDR_ERR_INVALID, "%s: op %d: expected copy, scale, add, triad or dot",
                         fn, (int)op);
    if (op == KEDR_PROBE_DOT && !dot)
        return kedr_fail(KEDR_ERR_INVALID, "%s: dot is NULL for the dot kernel", fn);
    KEDR_TRY(kedr_check_ptr(a, n, fn, "a"));
    KEDR_TRY(kedr_check_ptr(b, n, fn, "b"));
    if (op != KEDR_PROBE_DOT)
        KEDR_TRY(kedr_check_ptr(c, n, fn, "c"));
    if (n == 0) {
        if (dot)
            *dot = 0;
        return KEDR_OK;
    }
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_stream_cuda(ctx, t, op, n, a, b, c, scalar, dot);
#endif
    double sum = t == KEDR_F32 ? stream_cpu32(op, (long long)n, a, b, c, (float)scalar)
                               : stream_cpu64(op, (long long)n, a, b, c, scalar);
    if (dot)
        *dot = sum;
    return KEDR_OK;
}

/* ---- the limiting-factor kernels ------------------------------------------------------------- */

const char *kedr_probe_limit_name(kedr_probe_limit_kind k)
{
    static const char *names[] = {"base", "memory", "math"};
    return (unsigned)k <= KEDR_PROBE_MATH ? names[k] : "(invalid)";
}

kedr_status kedr_probe_limit(kedr_ctx *ctx, kedr_probe_limit_kind k, int fast, float *a,
                             const float *b, size_t n, float x, int flag)
{
    const char *fn = "kedr_probe_limit";
    KEDR_TRY(check_ctx(ctx, fn));
    if ((unsigned)k > KEDR_PROBE_MATH)
        return kedr_fail(KEDR_ERR_INVALID, "%s: kind %d: expected base, memory or math", fn, (int)k);
    KEDR_TRY(kedr_check_ptr(a, n, fn, "a"));
    if (k != KEDR_PROBE_MATH)
        KEDR_TRY(kedr_check_ptr(b, n, fn, "b"));
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_limit_cuda(ctx, k, fast, a, b, n, x, flag);
#endif
    (void)fast;
    long long m = (long long)n;
    if (k == KEDR_PROBE_BASE) {
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < m; i++)
            a[i] = sinf(b[i]);
    } else if (k == KEDR_PROBE_MEMORY) {
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < m; i++)
            a[i] = b[i];
    } else {
        /* The sine per element, as the GPU's threads each compute it, stored only when the
         * never-true condition holds. */
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < m; i++) {
            volatile float xi = x;
            float v = sinf(xi);
            if (v * (float)flag == 1.0f)
                a[i] = v;
        }
    }
    return KEDR_OK;
}

/* ---- offset and stride ----------------------------------------------------------------------- */

kedr_status kedr_probe_offset(kedr_ctx *ctx, kedr_dtype t, void *a, size_t n, size_t offset)
{
    const char *fn = "kedr_probe_offset";
    KEDR_TRY(check_ctx(ctx, fn));
    KEDR_TRY(kedr_check_dtype(t, FLOATS, fn, "element"));
    if (n > SIZE_MAX / 16 || offset > SIZE_MAX / 16 - n)
        return kedr_fail(KEDR_ERR_INVALID, "%s: n %zu + offset %zu overflows", fn, n, offset);
    KEDR_TRY(kedr_check_ptr(a, n, fn, "a"));
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_offset_cuda(ctx, t, a, n, offset);
#endif
    long long m = (long long)n;
    if (t == KEDR_F32) {
        float *p = (float *)a + offset;
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < m; i++)
            p[i] += 1;
    } else {
        double *p = (double *)a + offset;
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < m; i++)
            p[i] += 1;
    }
    return KEDR_OK;
}

/* The arguments of the strided kernels: a context, a float type, a stride of 1 or more whose
 * span fits, the array a. */
static kedr_status check_stride(kedr_ctx *ctx, kedr_dtype t, const void *a, size_t n,
                                size_t stride, const char *fn)
{
    KEDR_TRY(check_ctx(ctx, fn));
    KEDR_TRY(kedr_check_dtype(t, FLOATS, fn, "element"));
    if (stride == 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: stride 0: expected at least 1", fn);
    if (n > 1 && n - 1 > SIZE_MAX / 16 / stride)
        return kedr_fail(KEDR_ERR_INVALID, "%s: n %zu x stride %zu overflows", fn, n, stride);
    return kedr_check_ptr(a, n, fn, "a");
}

kedr_status kedr_probe_stride(kedr_ctx *ctx, kedr_dtype t, void *a, size_t n, size_t stride)
{
    const char *fn = "kedr_probe_stride";
    KEDR_TRY(check_stride(ctx, t, a, n, stride, fn));
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_stride_cuda(ctx, t, a, n, stride);
#endif
    long long m = (long long)n;
    if (t == KEDR_F32) {
        float *p = a;
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < m; i++)
            p[(size_t)i * stride] += 1;
    } else {
        double *p = a;
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < m; i++)
            p[(size_t)i * stride] += 1;
    }
    return KEDR_OK;
}

kedr_status kedr_probe_stride_read(kedr_ctx *ctx, kedr_dtype t, const void *a, void *b, size_t n,
                                   size_t stride, int readonly)
{
    const char *fn = "kedr_probe_stride_read";
    KEDR_TRY(check_stride(ctx, t, a, n, stride, fn));
    KEDR_TRY(kedr_check_ptr(b, n, fn, "b"));
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_stride_read_cuda(ctx, t, a, b, n, stride, readonly);
#endif
    (void)readonly;
    long long m = (long long)n;
    if (t == KEDR_F32) {
        const float *p = a;
        float *q = b;
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < m; i++)
            q[i] = p[(size_t)i * stride];
    } else {
        const double *p = a;
        double *q = b;
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < m; i++)
            q[i] = p[(size_t)i * stride];
    }
    return KEDR_OK;
}

/* ---- execution configuration ----------------------------------------------------------------- */

static kedr_status check_launch(const kedr_probe_launch *l, const char *fn)
{
    if (!l)
        return kedr_fail(KEDR_ERR_INVALID, "%s: launch is NULL", fn);
    if (l->threads < 32 || l->threads > 1024 || l->threads % 32)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %d threads per block: expected a multiple of 32 "
                         "from 32 to 1024", fn, l->threads);
    if (l->ilp < 1 || l->ilp > 8)
        return kedr_fail(KEDR_ERR_INVALID, "%s: ilp %d: expected 1 to 8", fn, l->ilp);
    return KEDR_OK;
}

kedr_status kedr_probe_copy_launch(kedr_ctx *ctx, kedr_dtype t, void *out, const void *in,
                                   size_t n, const kedr_probe_launch *launch)
{
    const char *fn = "kedr_probe_copy_launch";
    KEDR_TRY(check_ctx(ctx, fn));
    KEDR_TRY(kedr_check_dtype(t, FLOATS, fn, "element"));
    KEDR_TRY(check_launch(launch, fn));
    KEDR_TRY(kedr_check_ptr(in, n, fn, "in"));
    KEDR_TRY(kedr_check_ptr(out, n, fn, "out"));
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_copy_launch_cuda(ctx, t, out, in, n, launch);
#endif
    memcpy(out, in, n * kedr_dtype_size(t));
    return KEDR_OK;
}

kedr_status kedr_probe_occupancy(kedr_ctx *ctx, kedr_dtype t, const kedr_probe_launch *launch,
                                 double *occupancy, size_t *shared_bytes)
{
    const char *fn = "kedr_probe_occupancy";
    KEDR_TRY(check_ctx(ctx, fn));
    KEDR_TRY(kedr_check_dtype(t, FLOATS, fn, "element"));
    KEDR_TRY(check_launch(launch, fn));
    if (!occupancy || !shared_bytes)
        return kedr_fail(KEDR_ERR_INVALID, "%s: occupancy or shared_bytes is NULL", fn);
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_occupancy_cuda(ctx, t, launch, occupancy, shared_bytes);
#endif
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: occupancy is a property of a GPU launch; this "
                     "context is on the cpu", fn);
}
