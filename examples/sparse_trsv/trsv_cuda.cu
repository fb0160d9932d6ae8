/* A sparse lower-triangular solve with cuSPARSE's generic SpSV (CUDA 11.3 and later): the matrix
 * and vectors are described, a buffer sized, the sparsity pattern analysed once, then solved.
 * The book's cusparseDcsrsv_analysis / cusparseDcsrsv_solve were removed in CUDA 12; SpSV is
 * their successor, with the fill mode and diagonal type set as matrix attributes. */
#include "trsv.h"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <stdio.h>

#define CUDA_OK(call)                                                                    \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            snprintf(err, (size_t)errlen, "%s: %s", #call, cudaGetErrorString(e_));      \
            goto done;                                                                   \
        }                                                                                \
    } while (0)
#define SPARSE_OK(call)                                                                  \
    do {                                                                                 \
        cusparseStatus_t s_ = (call);                                                    \
        if (s_ != CUSPARSE_STATUS_SUCCESS) {                                             \
            snprintf(err, (size_t)errlen, "%s: %s", #call, cusparseGetErrorString(s_));  \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

extern "C" int trsv_cuda(int n, int nnz, const int *row_ptr, const int *col, const double *val,
                         double alpha, const double *b, double *x, double *seconds, char *err,
                         int errlen)
{
    int *d_rows = NULL, *d_cols = NULL, rc = -1;
    double *d_val = NULL, *d_b = NULL, *d_x = NULL;
    void *buffer = NULL;
    size_t buffer_size = 0;
    float ms = 0;
    cusparseHandle_t h = NULL;
    cusparseSpMatDescr_t mat = NULL;
    cusparseDnVecDescr_t vb = NULL, vx = NULL;
    cusparseSpSVDescr_t sv = NULL;
    cusparseFillMode_t fill = CUSPARSE_FILL_MODE_LOWER;
    cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
    cudaEvent_t start = NULL, stop = NULL;
    CUDA_OK(cudaMalloc((void **)&d_rows, (n + 1) * sizeof(int)));
    CUDA_OK(cudaMalloc((void **)&d_cols, nnz * sizeof(int)));
    CUDA_OK(cudaMalloc((void **)&d_val, nnz * sizeof(double)));
    CUDA_OK(cudaMalloc((void **)&d_b, n * sizeof(double)));
    CUDA_OK(cudaMalloc((void **)&d_x, n * sizeof(double)));
    CUDA_OK(cudaMemcpy(d_rows, row_ptr, (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_cols, col, nnz * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_val, val, nnz * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_b, b, n * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&stop));
    SPARSE_OK(cusparseCreate(&h));
    SPARSE_OK(cusparseCreateCsr(&mat, n, n, nnz, d_rows, d_cols, d_val, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    SPARSE_OK(cusparseSpMatSetAttribute(mat, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
    SPARSE_OK(cusparseSpMatSetAttribute(mat, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag));
    SPARSE_OK(cusparseCreateDnVec(&vb, n, d_b, CUDA_R_64F));
    SPARSE_OK(cusparseCreateDnVec(&vx, n, d_x, CUDA_R_64F));
    SPARSE_OK(cusparseSpSV_createDescr(&sv));
    SPARSE_OK(cusparseSpSV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vb, vx,
                                      CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, sv, &buffer_size));
    CUDA_OK(cudaMalloc(&buffer, buffer_size ? buffer_size : 1));
    SPARSE_OK(cusparseSpSV_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vb, vx,
                                    CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, sv, buffer));
    /* one solve untimed: CUDA loads cuSPARSE's kernels at their first launch (tens of ms) */
    SPARSE_OK(cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vb, vx,
                                 CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, sv));
    CUDA_OK(cudaEventRecord(start, 0));
    SPARSE_OK(cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vb, vx,
                                 CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, sv));
    CUDA_OK(cudaEventRecord(stop, 0));
    CUDA_OK(cudaEventSynchronize(stop));
    CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_OK(cudaMemcpy(x, d_x, n * sizeof(double), cudaMemcpyDeviceToHost));
    *seconds = 1e-3 * ms;
    rc = 0;
done:
    if (sv)
        cusparseSpSV_destroyDescr(sv);
    if (vb)
        cusparseDestroyDnVec(vb);
    if (vx)
        cusparseDestroyDnVec(vx);
    if (mat)
        cusparseDestroySpMat(mat);
    if (h)
        cusparseDestroy(h);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    cudaFree(buffer);
    cudaFree(d_rows);
    cudaFree(d_cols);
    cudaFree(d_val);
    cudaFree(d_b);
    cudaFree(d_x);
    return rc;
}
