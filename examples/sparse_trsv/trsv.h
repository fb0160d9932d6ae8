/* The sparse triangular solve's GPU path (trsv_cuda.cu), called from sparse_trsv.c. */
#ifndef TRSV_H
#define TRSV_H

#ifdef __cplusplus
extern "C" {
#endif

/* x = alpha L^-1 b for the lower-triangular n x n matrix L in CSR (zero-based; host arrays) by
 * cuSPARSE's SpSV; seconds receives the time of the solve alone (the analysis apart). Returns 0,
 * or -1 with a message in err. */
int trsv_cuda(int n, int nnz, const int *row_ptr, const int *col, const double *val, double alpha,
              const double *b, double *x, double *seconds, char *err, int errlen);

#ifdef __cplusplus
}
#endif
#endif
