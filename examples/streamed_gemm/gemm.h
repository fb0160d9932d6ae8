/* The streamed GEMM's GPU path (gemm_cuda.cu), called from streamed_gemm.c. */
#ifndef GEMM_H
#define GEMM_H

#ifdef __cplusplus
extern "C" {
#endif

/* C = A B for n x n column-major doubles (host arrays; a, b pinned by the callee): streams = 1
 * copies everything in, multiplies once and copies C back; streams > 1 splits B and C into that
 * many column panels, each copied in, multiplied and copied back on its own stream, so that the
 * copies of one panel overlap the products of another. seconds: from the first copy in to the
 * last copy out. Returns 0, or -1 with a message in err. */
int gemm_cuda(int n, int streams, const double *a, const double *b, double *c, double *seconds,
              char *err, int errlen);

#ifdef __cplusplus
}
#endif
#endif
