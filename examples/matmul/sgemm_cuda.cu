/* cuBLAS's sgemm as the yardstick of the textbook's matrix products (Boreskov et al., 2012,
 * tables 3.3 and 3.4, where CUBLAS took 30.8 ms at 2048 on a C2070). cuBLAS is column-major: a
 * row-major product C = A B is the column-major C^T = B^T A^T, so the operands are swapped; and
 * C = A A^T is C^T = A A^T read column-major as (A^T)^T A^T. */
#include "sgemm.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

extern "C" int sgemm_cuda(int n, int aat, const float *a, const float *b, float *c, int repeats,
                          double *seconds, char *err, int errlen)
{
    cublasHandle_t h = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    double *t = (double *)malloc(sizeof(double) * (size_t)repeats);
    const float one = 1, zero = 0;
    int rc = -1;
    if (!t || cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cudaEventCreate(&start) != cudaSuccess ||
        cudaEventCreate(&stop) != cudaSuccess) {
        snprintf(err, (size_t)errlen, "cuBLAS or CUDA events could not be set up");
        goto done;
    }
    for (int r = -1; r < repeats; r++) {
        float ms = 0;
        cublasStatus_t s;
        cudaEventRecord(start, 0);
        if (aat) /* row-major A A^T = column-major (A^T)^T A^T: op(X) = X^T on the first */
            s = cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &zero, c, n);
        else
            s = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n);
        cudaEventRecord(stop, 0);
        if (s != CUBLAS_STATUS_SUCCESS || cudaEventSynchronize(stop) != cudaSuccess ||
            cudaEventElapsedTime(&ms, start, stop) != cudaSuccess) {
            snprintf(err, (size_t)errlen, "cublasSgemm failed (status %d)", (int)s);
            goto done;
        }
        if (r >= 0)
            t[r] = 1e-3 * ms;
    }
    qsort(t, (size_t)repeats, sizeof *t, cmp);
    *seconds = t[repeats / 2];
    rc = 0;
done:
    if (h)
        cublasDestroy(h);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    free(t);
    return rc;
}
