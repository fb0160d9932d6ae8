/* C = A B with cuBLAS dgemm, sequential or over streams (Boreskov et al., 2012, sec. 11.1): the
 * book's version with the panels of B and C copied in on their streams, one dgemm per panel on
 * its stream (cublasSetStream; the book's cublasSetKernelStream is the legacy API's), and the
 * panels of C copied back. Host memory is pinned, so that the copies are asynchronous. */
#include "gemm.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#define MAX_STREAMS 32
#define CUDA_OK(call)                                                                    \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            snprintf(err, (size_t)errlen, "%s: %s", #call, cudaGetErrorString(e_));      \
            goto done;                                                                   \
        }                                                                                \
    } while (0)
#define BLAS_OK(call)                                                                    \
    do {                                                                                 \
        cublasStatus_t s_ = (call);                                                      \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                               \
            snprintf(err, (size_t)errlen, "%s: cuBLAS status %d", #call, (int)s_);       \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

extern "C" int gemm_cuda(int n, int streams, const double *a, const double *b, double *c,
                         double *seconds, char *err, int errlen)
{
    size_t nn = (size_t)n * n, bytes = nn * sizeof(double);
    double *ha = NULL, *hb = NULL, *hc = NULL, *da = NULL, *db = NULL, *dc = NULL;
    cudaStream_t st[MAX_STREAMS] = {0};
    cudaEvent_t start = NULL, stop = NULL;
    cublasHandle_t h = NULL;
    const double one = 1, zero = 0;
    float ms = 0;
    int rc = -1, panel = n / streams;
    if (streams < 1 || streams > MAX_STREAMS || panel < 1) {
        snprintf(err, (size_t)errlen, "streams %d: expected 1 to %d, at most n", streams,
                 MAX_STREAMS);
        return -1;
    }
    CUDA_OK(cudaMallocHost((void **)&ha, bytes));
    CUDA_OK(cudaMallocHost((void **)&hb, bytes));
    CUDA_OK(cudaMallocHost((void **)&hc, bytes));
    memcpy(ha, a, bytes);
    memcpy(hb, b, bytes);
    CUDA_OK(cudaMalloc((void **)&da, bytes));
    CUDA_OK(cudaMalloc((void **)&db, bytes));
    CUDA_OK(cudaMalloc((void **)&dc, bytes));
    for (int s = 0; s < streams; s++)
        CUDA_OK(cudaStreamCreate(&st[s]));
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&stop));
    BLAS_OK(cublasCreate(&h));
    CUDA_OK(cudaEventRecord(start, 0));
    /* A is needed by every panel: it goes first, on the default stream, which the streams wait
     * for. */
    CUDA_OK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
    for (int s = 0; s < streams; s++) {
        int cols = s == streams - 1 ? n - panel * s : panel; /* the last takes the remainder */
        size_t off = (size_t)n * panel * s, len = (size_t)n * cols * sizeof(double);
        CUDA_OK(cudaMemcpyAsync(db + off, hb + off, len, cudaMemcpyHostToDevice, st[s]));
    }
    for (int s = 0; s < streams; s++) {
        int cols = s == streams - 1 ? n - panel * s : panel;
        size_t off = (size_t)n * panel * s;
        BLAS_OK(cublasSetStream(h, st[s]));
        BLAS_OK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, cols, n, &one, da, n, db + off, n,
                            &zero, dc + off, n));
    }
    for (int s = 0; s < streams; s++) {
        int cols = s == streams - 1 ? n - panel * s : panel;
        size_t off = (size_t)n * panel * s, len = (size_t)n * cols * sizeof(double);
        CUDA_OK(cudaMemcpyAsync(hc + off, dc + off, len, cudaMemcpyDeviceToHost, st[s]));
    }
    CUDA_OK(cudaEventRecord(stop, 0)); /* the legacy default stream waits for every stream */
    CUDA_OK(cudaEventSynchronize(stop));
    CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
    memcpy(c, hc, bytes);
    *seconds = 1e-3 * ms;
    rc = 0;
done:
    if (h)
        cublasDestroy(h);
    for (int s = 0; s < streams; s++)
        if (st[s])
            cudaStreamDestroy(st[s]);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    cudaFreeHost(ha);
    cudaFreeHost(hb);
    cudaFreeHost(hc);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return rc;
}
