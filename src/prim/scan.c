/* kedr_scan_inclusive / kedr_scan_exclusive: prefix sums; the cpu version and the dispatch.
 *
 * cpu: reduce-then-scan over fixed chunks of SCAN_CHUNK elements. Pass 1 sums each chunk in
 * parallel, a short sequential pass turns the chunk sums into chunk offsets, pass 2 scans each
 * chunk from its offset in parallel. Each element is read before its output is written, so
 * out == in works. f32 accumulates in double (the output is the double prefix rounded), integers
 * wrap. The fixed chunking makes the result independent of the thread count. */
#include "kedr/prim.h"
#include "core/internal.h"
#include "prim/scan_cuda.h"

#include <stdint.h>
#include <string.h>

#define SCAN_CHUNK ((size_t)1 << 16)

/* part: one ACC per chunk. total (may be NULL) receives the sum of all n elements as T. */
#define DEFINE_SCAN(NAME, T, ACC)                                                            \
    static void NAME(const void *in_, void *out_, size_t n, int exclusive, void *part_,     \
                     void *total)                                                            \
    {                                                                                        \
        const T *in = in_;                                                                   \
        T *out = out_;                                                                       \
        ACC *part = part_;                                                                   \
        long long nchunks = (long long)((n + SCAN_CHUNK - 1) / SCAN_CHUNK);                  \
        _Pragma("omp parallel for schedule(static) if (nchunks > 1)")                       \
        for (long long c = 0; c < nchunks; c++) {                                            \
            size_t lo = (size_t)c * SCAN_CHUNK, hi = n - lo > SCAN_CHUNK ? lo + SCAN_CHUNK : n; \
            ACC s = 0;                                                                       \
            for (size_t i = lo; i < hi; i++)                                                 \
                s += (ACC)in[i];                                                             \
            part[c] = s;                                                                     \
        }                                                                                    \
        ACC run = 0;                                                                         \
        for (long long c = 0; c < nchunks; c++) {                                            \
            ACC s = part[c];                                                                 \
            part[c] = run;                                                                   \
            run += s;                                                                        \
        }                                                                                    \
        ACC last = 0;                                                                        \
        _Pragma("omp parallel for schedule(static) if (nchunks > 1)")                       \
        for (long long c = 0; c < nchunks; c++) {                                            \
            size_t lo = (size_t)c * SCAN_CHUNK, hi = n - lo > SCAN_CHUNK ? lo + SCAN_CHUNK : n; \
            ACC r = part[c];                                                                 \
            if (exclusive) {                                                                 \
                for (size_t i = lo; i < hi; i++) {                                           \
                    ACC x = (ACC)in[i];                                                      \
                    out[i] = (T)r;                                                           \
                    r += x;                                                                  \
                }                                                                            \
            } else {                                                                         \
                for (size_t i = lo; i < hi; i++) {                                           \
                    r += (ACC)in[i];                                                         \
                    out[i] = (T)r;                                                           \
                }                                                                            \
            }                                                                                \
            if (c == nchunks - 1)                                                            \
                last = r;                                                                    \
        }                                                                                    \
        if (total)                                                                           \
            *(T *)total = (T)last;                                                           \
    }

/* i32 is scanned as u32: the same bits, and wrapping is defined for unsigned types. */
DEFINE_SCAN(scan_u32, uint32_t, uint32_t)
DEFINE_SCAN(scan_u64, uint64_t, uint64_t)
DEFINE_SCAN(scan_f32, float, double)
DEFINE_SCAN(scan_f64, double, double)

typedef void (*scan_fn)(const void *, void *, size_t, int, void *, void *);

/* Indexed by kedr_dtype. */
static const scan_fn scan_table[5] = {scan_u32, scan_u64, scan_u32, scan_f32, scan_f64};

static kedr_status scan_cpu(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                            void *total, int exclusive)
{
    size_t nchunks = (n + SCAN_CHUNK - 1) / SCAN_CHUNK;
    double one; /* room for one chunk offset: spares a scratch block for small inputs */
    if (nchunks <= 1) {
        scan_table[t](in, out, n, exclusive, &one, total);
        return KEDR_OK;
    }
    void *part = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &part, nchunks * sizeof(double)));
    scan_table[t](in, out, n, exclusive, part, total);
    kedr_scratch_put(ctx, part);
    return KEDR_OK;
}

static kedr_status scan(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                        void *total, int exclusive, const char *fn)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPES_ALL, fn, "element"));
    KEDR_TRY(kedr_check_ptr(in, n, fn, "in"));
    KEDR_TRY(kedr_check_ptr(out, n, fn, "out"));
    if (n == 0) {
        if (total)
            memset(total, 0, kedr_dtype_size(t)); /* all-zero bits are 0 in every type */
        return KEDR_OK;
    }
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_scan_cuda(ctx, t, in, out, n, total, exclusive);
#endif
    return scan_cpu(ctx, t, in, out, n, total, exclusive);
}

kedr_status kedr_scan_inclusive(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                                void *total)
{
    return scan(ctx, t, in, out, n, total, 0, "kedr_scan_inclusive");
}

kedr_status kedr_scan_exclusive(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                                void *total)
{
    return scan(ctx, t, in, out, n, total, 1, "kedr_scan_exclusive");
}
