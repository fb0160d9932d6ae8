/* The cuSPARSE yardstick behind bench/cusparse_ref.h. */
#include "cusparse_ref.h"

#include "core/internal.h"

#include <climits>
#include <cstdlib>
#include <cusparse.h>

struct cusparse_ref {
    kedr_ctx *ctx;
    cusparseHandle_t handle;
    void *buf; /* cuSPARSE's temporary buffer, grown on demand and kept */
    size_t buf_bytes;
};

static kedr_status sparse_check(cusparseStatus_t e, const char *what)
{
    if (e == CUSPARSE_STATUS_SUCCESS)
        return KEDR_OK;
    return kedr_fail(KEDR_ERR_CUDA, "%s: %s (%s)", what, cusparseGetErrorName(e),
                     cusparseGetErrorString(e));
}

extern "C" kedr_status cusparse_ref_create(kedr_ctx *ctx, cusparse_ref **out)
{
    *out = NULL;
    if (!KEDR_IS_CUDA(ctx))
        return kedr_fail(KEDR_ERR_INVALID, "cusparse_ref_create: the context is not a cuda one");
    cusparse_ref *r = (cusparse_ref *)calloc(1, sizeof *r);
    if (!r)
        return kedr_fail(KEDR_ERR_NOMEM, "cusparse_ref_create: out of host memory");
    r->ctx = ctx;
    kedr_status s = sparse_check(cusparseCreate(&r->handle), "cusparseCreate");
    if (s == KEDR_OK)
        s = sparse_check(cusparseSetStream(r->handle, KEDR_STREAM(ctx)), "cusparseSetStream");
    if (s != KEDR_OK) {
        cusparse_ref_destroy(r);
        return s;
    }
    *out = r;
    return KEDR_OK;
}

extern "C" void cusparse_ref_trim(cusparse_ref *r)
{
    if (!r)
        return;
    kedr_free(r->ctx, r->buf); /* cudaFree waits for the work that may still use it */
    r->buf = NULL;
    r->buf_bytes = 0;
}

extern "C" void cusparse_ref_destroy(cusparse_ref *r)
{
    if (!r)
        return;
    cusparse_ref_trim(r);
    if (r->handle)
        cusparseDestroy(r->handle);
    free(r);
}

static kedr_status grow(cusparse_ref *r, size_t bytes)
{
    if (bytes <= r->buf_bytes)
        return KEDR_OK;
    cusparse_ref_trim(r);
    KEDR_TRY(kedr_alloc(r->ctx, &r->buf, bytes));
    r->buf_bytes = bytes;
    return KEDR_OK;
}

/* The S and D entry points share one body. */
#define SOLVE(T, STRIDED_SIZE, STRIDED, INTER_SIZE, INTER)                                     \
    static kedr_status solve_##T(cusparse_ref *r, int m, int count, int interleaved,           \
                                 const T *a, const T *b, const T *c, T *d)                     \
    {                                                                                          \
        size_t bytes = 0;                                                                      \
        if (interleaved) {                                                                     \
            KEDR_TRY(sparse_check(INTER_SIZE(r->handle, 0, m, a, b, c, d, count, &bytes),     \
                                  #INTER_SIZE));                                               \
            KEDR_TRY(grow(r, bytes));                                                          \
            return sparse_check(INTER(r->handle, 0, m, (T *)a, (T *)b, (T *)c, d, count,      \
                                      r->buf),                                                 \
                                #INTER);                                                       \
        }                                                                                      \
        KEDR_TRY(sparse_check(STRIDED_SIZE(r->handle, m, a, b, c, d, count, m, &bytes),       \
                              #STRIDED_SIZE));                                                 \
        KEDR_TRY(grow(r, bytes));                                                              \
        return sparse_check(STRIDED(r->handle, m, a, b, c, d, count, m, r->buf), #STRIDED);   \
    }

SOLVE(float, cusparseSgtsv2StridedBatch_bufferSizeExt, cusparseSgtsv2StridedBatch,
      cusparseSgtsvInterleavedBatch_bufferSizeExt, cusparseSgtsvInterleavedBatch)
SOLVE(double, cusparseDgtsv2StridedBatch_bufferSizeExt, cusparseDgtsv2StridedBatch,
      cusparseDgtsvInterleavedBatch_bufferSizeExt, cusparseDgtsvInterleavedBatch)

extern "C" kedr_status cusparse_ref_solve(cusparse_ref *r, kedr_dtype t,
                                          const kedr_tridiag_desc *desc, const void *a,
                                          const void *b, const void *c, void *d)
{
    if (desc->periodic)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "cuSPARSE has no batched periodic solver");
    if (desc->n > INT_MAX || desc->count > INT_MAX || desc->n * desc->count > INT_MAX)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "cuSPARSE takes int sizes: %zu systems of %zu",
                         desc->count, desc->n);
    int m = (int)desc->n, count = (int)desc->count;
    int inter = desc->layout == KEDR_TRIDIAG_INTERLEAVED;
    if (t == KEDR_F32)
        return solve_float(r, m, count, inter, (const float *)a, (const float *)b,
                           (const float *)c, (float *)d);
    return solve_double(r, m, count, inter, (const double *)a, (const double *)b,
                        (const double *)c, (double *)d);
}
