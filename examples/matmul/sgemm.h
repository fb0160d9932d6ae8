/* The matrix-product example's cuBLAS reference (sgemm_cuda.cu), called from matmul.c. */
#ifndef SGEMM_H
#define SGEMM_H

#ifdef __cplusplus
extern "C" {
#endif

/* c = a b (aat = 0) or a a^T (aat = 1) for n x n row-major floats already in GPU memory, by
 * cublasSgemm: the median of `repeats` timed calls after a warm-up, in seconds. Returns 0, or -1
 * with a message in err. */
int sgemm_cuda(int n, int aat, const float *a, const float *b, float *c, int repeats,
               double *seconds, char *err, int errlen);

#ifdef __cplusplus
}
#endif
#endif
