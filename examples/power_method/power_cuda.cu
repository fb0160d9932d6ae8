/* The power method on the GPU: cuBLAS Sgemv for y = A x, Snrm2, Sscal, Saxpy and Scopy for the
 * rest, as Boreskov et al. (2012, sec. 7.1.2) write it; each iteration waits for the norms, which
 * come back to the host. */
#include "power.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>

#define CUDA_OK(call, what)                                                              \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            snprintf(err, (size_t)errlen, "%s: %s", what, cudaGetErrorString(e_));       \
            goto done;                                                                   \
        }                                                                                \
    } while (0)
#define BLAS_OK(call, what)                                                              \
    do {                                                                                 \
        cublasStatus_t s_ = (call);                                                      \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                               \
            snprintf(err, (size_t)errlen, "%s: cuBLAS status %d", what, (int)s_);        \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

extern "C" int power_cuda(const float *a, const float *x0, int n, float eps, int max_iter,
                          power_result *r, char *err, int errlen)
{
    float *da = NULL, *dx = NULL, *dy = NULL;
    cublasHandle_t h = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    int rc = -1;
    size_t nn = (size_t)n * n;
    float one = 1, zero = 0, minus = -1, norm = 0, diff = 1e30f, scale, num = 0, den = 0, ms = 0;
    int k = 0;
    CUDA_OK(cudaMalloc((void **)&da, nn * sizeof(float)), "cudaMalloc");
    CUDA_OK(cudaMalloc((void **)&dx, n * sizeof(float)), "cudaMalloc");
    CUDA_OK(cudaMalloc((void **)&dy, n * sizeof(float)), "cudaMalloc");
    CUDA_OK(cudaMemcpy(da, a, nn * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    CUDA_OK(cudaMemcpy(dx, x0, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    CUDA_OK(cudaEventCreate(&start), "cudaEventCreate");
    CUDA_OK(cudaEventCreate(&stop), "cudaEventCreate");
    BLAS_OK(cublasCreate(&h), "cublasCreate");
    BLAS_OK(cublasSnrm2(h, n, dx, 1, &norm), "cublasSnrm2");
    scale = 1 / norm;
    BLAS_OK(cublasSscal(h, n, &scale, dx, 1), "cublasSscal");
    /* One product and the vector calls of an iteration, untimed: CUDA loads a library's kernels
     * when they are first launched (tens of ms), which is no part of the method's cost. */
    BLAS_OK(cublasSgemv(h, CUBLAS_OP_N, n, n, &one, da, n, dx, 1, &zero, dy, 1), "cublasSgemv");
    BLAS_OK(cublasSnrm2(h, n, dy, 1, &norm), "cublasSnrm2");
    BLAS_OK(cublasSaxpy(h, n, &zero, dy, 1, dy, 1), "cublasSaxpy");
    BLAS_OK(cublasScopy(h, n, dx, 1, dy, 1), "cublasScopy");
    CUDA_OK(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    CUDA_OK(cudaEventRecord(start, 0), "cudaEventRecord");
    while (diff > eps && k < max_iter) {
        k++;
        BLAS_OK(cublasSgemv(h, CUBLAS_OP_N, n, n, &one, da, n, dx, 1, &zero, dy, 1), "cublasSgemv");
        BLAS_OK(cublasSnrm2(h, n, dy, 1, &norm), "cublasSnrm2");
        scale = 1 / norm;
        BLAS_OK(cublasSscal(h, n, &scale, dy, 1), "cublasSscal");
        BLAS_OK(cublasSaxpy(h, n, &minus, dy, 1, dx, 1), "cublasSaxpy"); /* x = x - y */
        BLAS_OK(cublasSnrm2(h, n, dx, 1, &diff), "cublasSnrm2");
        BLAS_OK(cublasScopy(h, n, dy, 1, dx, 1), "cublasScopy");
    }
    CUDA_OK(cudaEventRecord(stop, 0), "cudaEventRecord");
    CUDA_OK(cudaEventSynchronize(stop), "cudaEventSynchronize");
    CUDA_OK(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    /* lambda = x^T A x / x^T x */
    BLAS_OK(cublasSgemv(h, CUBLAS_OP_N, n, n, &one, da, n, dx, 1, &zero, dy, 1), "cublasSgemv");
    BLAS_OK(cublasSdot(h, n, dx, 1, dy, 1, &num), "cublasSdot");
    BLAS_OK(cublasSdot(h, n, dx, 1, dx, 1, &den), "cublasSdot");
    r->lambda = (double)num / den;
    r->diff = diff;
    r->iterations = k;
    r->seconds = 1e-3 * ms;
    rc = 0;
done:
    if (h)
        cublasDestroy(h);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    cudaFree(da);
    cudaFree(dx);
    cudaFree(dy);
    return rc;
}
