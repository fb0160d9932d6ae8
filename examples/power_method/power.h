/* The power method's GPU path (power_cuda.cu), called from power_method.c. */
#ifndef POWER_H
#define POWER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double lambda;  /* x^T A x / x^T x at the last iterate */
    double diff;    /* ||x_{k+1} - x_k|| at the last step */
    int iterations;
    double seconds; /* the iterations only, as the book times them */
} power_result;

/* The power method on the GPU with cuBLAS: a is n x n, column-major (host), x0 the start (host).
 * Returns 0, or -1 with a message in err. */
int power_cuda(const float *a, const float *x0, int n, float eps, int max_iter, power_result *r,
               char *err, int errlen);

#ifdef __cplusplus
}
#endif
#endif
