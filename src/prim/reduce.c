/* kedr_reduce: sum, min and max over an array; the cpu version and the dispatch.
 *
 * Determinism: the input is cut into fixed chunks of REDUCE_CHUNK elements whatever the thread
 * count; each chunk is folded into 8 interleaved lanes (element i goes to lane i % 8, a fixed
 * order that the compiler can vectorize without reassociating), the lanes are combined by a
 * fixed tree, and the chunk results are combined in chunk order. So a float sum depends only on
 * n and the data. */
#include "kedr/prim.h"
#include "core/internal.h"
#include "prim/reduce_cuda.h"

#include <math.h>
#include <stdint.h>

#define REDUCE_CHUNK ((size_t)1 << 16)

#define STEP_SUM(acc, v) ((acc) += (v))
#define STEP_MIN(acc, v) ((acc) = (v) < (acc) ? (v) : (acc))
#define STEP_MAX(acc, v) ((acc) = (v) > (acc) ? (v) : (acc))

/* One function per (type, op): T the element type, ACC the accumulator, INIT the identity.
 * A NaN never wins a comparison, so min and max skip NaNs. part holds one ACC per chunk. */
#define DEFINE_REDUCE(NAME, T, ACC, INIT, STEP)                                              \
    static void NAME(const void *in_, size_t n, void *part_, void *result)                  \
    {                                                                                        \
        const T *in = in_;                                                                   \
        ACC *part = part_;                                                                   \
        long long nchunks = (long long)((n + REDUCE_CHUNK - 1) / REDUCE_CHUNK);              \
        _Pragma("omp parallel for schedule(static) if (nchunks > 1)")                       \
        for (long long c = 0; c < nchunks; c++) {                                            \
            const T *x = in + (size_t)c * REDUCE_CHUNK;                                      \
            size_t len = n - (size_t)c * REDUCE_CHUNK;                                       \
            if (len > REDUCE_CHUNK)                                                          \
                len = REDUCE_CHUNK;                                                          \
            ACC a[8] = {INIT, INIT, INIT, INIT, INIT, INIT, INIT, INIT};                     \
            size_t i = 0;                                                                    \
            for (; i + 8 <= len; i += 8)                                                     \
                for (int j = 0; j < 8; j++)                                                  \
                    STEP(a[j], (ACC)x[i + j]);                                               \
            for (int j = 0; i < len; i++, j++)                                               \
                STEP(a[j], (ACC)x[i]);                                                       \
            STEP(a[0], a[1]);                                                                \
            STEP(a[2], a[3]);                                                                \
            STEP(a[4], a[5]);                                                                \
            STEP(a[6], a[7]);                                                                \
            STEP(a[0], a[2]);                                                                \
            STEP(a[4], a[6]);                                                                \
            STEP(a[0], a[4]);                                                                \
            part[c] = a[0];                                                                  \
        }                                                                                    \
        ACC r = INIT;                                                                        \
        for (long long c = 0; c < nchunks; c++)                                              \
            STEP(r, part[c]);                                                                \
        *(T *)result = (T)r;                                                                 \
    }

/* Integer sums wrap: i32 is summed as u32 (same bits, no signed overflow). */
DEFINE_REDUCE(sum_u32, uint32_t, uint32_t, 0u, STEP_SUM)
DEFINE_REDUCE(sum_u64, uint64_t, uint64_t, 0u, STEP_SUM)
DEFINE_REDUCE(sum_f32, float, double, 0.0, STEP_SUM)
DEFINE_REDUCE(sum_f64, double, double, 0.0, STEP_SUM)
DEFINE_REDUCE(min_u32, uint32_t, uint32_t, UINT32_MAX, STEP_MIN)
DEFINE_REDUCE(min_u64, uint64_t, uint64_t, UINT64_MAX, STEP_MIN)
DEFINE_REDUCE(min_i32, int32_t, int32_t, INT32_MAX, STEP_MIN)
DEFINE_REDUCE(min_f32, float, float, INFINITY, STEP_MIN)
DEFINE_REDUCE(min_f64, double, double, INFINITY, STEP_MIN)
DEFINE_REDUCE(max_u32, uint32_t, uint32_t, 0u, STEP_MAX)
DEFINE_REDUCE(max_u64, uint64_t, uint64_t, 0u, STEP_MAX)
DEFINE_REDUCE(max_i32, int32_t, int32_t, INT32_MIN, STEP_MAX)
DEFINE_REDUCE(max_f32, float, float, -INFINITY, STEP_MAX)
DEFINE_REDUCE(max_f64, double, double, -INFINITY, STEP_MAX)

typedef void (*reduce_fn)(const void *, size_t, void *, void *);

/* Indexed by [op][dtype], in the order of the kedr_op and kedr_dtype enums. */
static const reduce_fn reduce_table[3][5] = {
    {sum_u32, sum_u64, sum_u32, sum_f32, sum_f64},
    {min_u32, min_u64, min_i32, min_f32, min_f64},
    {max_u32, max_u64, max_i32, max_f32, max_f64},
};

static kedr_status reduce_cpu(kedr_ctx *ctx, kedr_dtype t, kedr_op op, const void *in, size_t n,
                              void *result)
{
    size_t nchunks = (n + REDUCE_CHUNK - 1) / REDUCE_CHUNK;
    double one; /* room for one ACC of any type: spares a scratch block for small inputs */
    if (nchunks <= 1) {
        reduce_table[op][t](in, n, &one, result);
        return KEDR_OK;
    }
    void *part = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &part, nchunks * sizeof(double)));
    reduce_table[op][t](in, n, part, result);
    kedr_scratch_put(ctx, part);
    return KEDR_OK;
}

kedr_status kedr_reduce(kedr_ctx *ctx, kedr_dtype t, kedr_op op, const void *in, size_t n,
                        void *result)
{
    static const char fn[] = "kedr_reduce";
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPES_ALL, fn, "element"));
    if ((unsigned)op > KEDR_OP_MAX)
        return kedr_fail(KEDR_ERR_INVALID, "%s: op %d is not one of sum, min, max", fn, (int)op);
    KEDR_TRY(kedr_check_ptr(in, n, fn, "in"));
    if (!result)
        return kedr_fail(KEDR_ERR_INVALID, "%s: result is NULL (n = %zu)", fn, n);
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx) && n > 0)
        return prim_reduce_cuda(ctx, t, op, in, n, result);
#endif
    /* n = 0 needs no device work: the cpu path writes the identity. */
    return reduce_cpu(ctx, t, op, in, n, result);
}
