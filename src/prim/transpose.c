/* kedr_transpose: argument checks, the cpu version (cache-blocked) and the dispatch. */
#include "core/internal.h"
#include "prim/transpose_cuda.h"

#include <stdint.h>

#define FN "kedr_transpose"

/* A block of TB x TB elements (16 or 32 KB) is read row by row and written column by column
 * while both its source rows and its destination rows stay in the L1/L2 cache. */
#define TB 64

#define TRANSPOSE_CPU(NAME, T)                                                              \
    static void NAME(const T *in, T *out, size_t rows, size_t cols)                         \
    {                                                                                       \
        size_t brows = (rows + TB - 1) / TB, bcols = (cols + TB - 1) / TB;                  \
        long long blocks = (long long)(brows * bcols);                                      \
        _Pragma("omp parallel for schedule(static)")                                        \
        for (long long b = 0; b < blocks; b++) {                                            \
            size_t r0 = (size_t)b / bcols * TB, c0 = (size_t)b % bcols * TB;                \
            size_t r1 = r0 + TB < rows ? r0 + TB : rows;                                    \
            size_t c1 = c0 + TB < cols ? c0 + TB : cols;                                    \
            for (size_t c = c0; c < c1; c++)                                                \
                for (size_t r = r0; r < r1; r++)                                            \
                    out[c * rows + r] = in[r * cols + c];                                   \
        }                                                                                   \
    }

TRANSPOSE_CPU(transpose_cpu32, uint32_t)
TRANSPOSE_CPU(transpose_cpu64, uint64_t)

kedr_status kedr_transpose(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t rows,
                           size_t cols)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, FN ": ctx is NULL");
    KEDR_TRY(kedr_check_dtype(t,
                              KEDR_TYPE_BIT(KEDR_F32) | KEDR_TYPE_BIT(KEDR_F64) |
                                  KEDR_TYPE_BIT(KEDR_U32) | KEDR_TYPE_BIT(KEDR_I32) |
                                  KEDR_TYPE_BIT(KEDR_U64),
                              FN, "element"));
    size_t size = kedr_dtype_size(t);
    if (rows && cols > SIZE_MAX / size / rows)
        return kedr_fail(KEDR_ERR_INVALID, FN ": %zu x %zu %s elements overflow the address space",
                         rows, cols, kedr_dtype_name(t));
    size_t n = rows * cols;
    KEDR_TRY(kedr_check_ptr(in, n, FN, "in"));
    KEDR_TRY(kedr_check_ptr(out, n, FN, "out"));
    if (n == 0)
        return KEDR_OK;
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)out, bytes = n * size;
    if (a < b + bytes && b < a + bytes)
        return kedr_fail(KEDR_ERR_INVALID, FN ": out overlaps in (%zu x %zu %s; in place is not "
                         "supported)", rows, cols, kedr_dtype_name(t));
    /* A single row or column reads the same in memory either way round. */
    if (rows == 1 || cols == 1)
        return kedr_copy(ctx, out, in, bytes);
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_transpose_cuda(ctx, size, in, out, rows, cols);
#endif
    if (size == 4)
        transpose_cpu32(in, out, rows, cols);
    else
        transpose_cpu64(in, out, rows, cols);
    return KEDR_OK;
}
