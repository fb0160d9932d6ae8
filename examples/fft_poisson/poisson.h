/* The periodic Poisson solver's GPU path (poisson_cuda.cu), called from fft_poisson.c. */
#ifndef POISSON_H
#define POISSON_H

#ifdef __cplusplus
extern "C" {
#endif

/* u = the solution of lap u = rho on the periodic unit square sampled at n x n points (row-major,
 * host arrays), of zero mean; discrete: the 5-point symbol of the book's eq. 7.8, else the
 * continuous symbol -4 pi^2 |k|^2 of its code. Returns 0, or -1 with a message in err. */
int poisson_cuda(int n, const double *rho, double *u, int discrete, char *err, int errlen);

#ifdef __cplusplus
}
#endif
#endif
