/* The periodic Poisson solver on the GPU: cuFFT's real-to-complex transform, a kernel that
 * divides each coefficient (real and imaginary part) by the symbol, the inverse transform, and a
 * kernel that scales by 1/n^2 and removes the mean (Boreskov et al., sec. 7.3.1). */
#include "poisson.h"

#include <cuda_runtime.h>
#include <cufft.h>
#include <math.h>
#include <stdio.h>

__global__ void divide_by_symbol(int n, cufftDoubleComplex *v, int discrete)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
    int m = n / 2 + 1;
    if (i >= m || j >= n)
        return;
    double s;
    if (discrete) {
        double h2 = 1.0 / ((double)n * n);
        s = (2 * cospi(2.0 * i / n) + 2 * cospi(2.0 * j / n) - 4) / h2;
    } else {
        double kx = i < n / 2 ? i : i - n, ky = j < n / 2 ? j : j - n;
        s = -4 * M_PI * M_PI * (kx * kx + ky * ky);
    }
    cufftDoubleComplex t = v[(size_t)j * m + i];
    if (i == 0 && j == 0) { /* the mean: zero, so that the solution has zero mean */
        t.x = t.y = 0;
    } else {
        t.x /= s;
        t.y /= s;
    }
    v[(size_t)j * m + i] = t;
}

__global__ void scale(size_t count, double *u, double factor)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        u[i] *= factor;
}

extern "C" int poisson_cuda(int n, const double *rho, double *u, int discrete, char *err,
                            int errlen)
{
    size_t nn = (size_t)n * n, nc = (size_t)n * (n / 2 + 1);
    double *du = NULL;
    cufftDoubleComplex *dv = NULL;
    cufftHandle fwd = 0, inv = 0;
    int have_fwd = 0, have_inv = 0, rc = -1;
    const char *what = "cudaMalloc";
    cudaError_t e = cudaMalloc((void **)&du, nn * sizeof(double));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&dv, nc * sizeof(cufftDoubleComplex));
    if (e == cudaSuccess) {
        what = "cudaMemcpy";
        e = cudaMemcpy(du, rho, nn * sizeof(double), cudaMemcpyHostToDevice);
    }
    if (e != cudaSuccess) {
        snprintf(err, (size_t)errlen, "%s: %s", what, cudaGetErrorString(e));
        goto done;
    }
    if (cufftPlan2d(&fwd, n, n, CUFFT_D2Z) != CUFFT_SUCCESS) {
        snprintf(err, (size_t)errlen, "cufftPlan2d (D2Z) failed for n = %d", n);
        goto done;
    }
    have_fwd = 1;
    if (cufftPlan2d(&inv, n, n, CUFFT_Z2D) != CUFFT_SUCCESS) {
        snprintf(err, (size_t)errlen, "cufftPlan2d (Z2D) failed for n = %d", n);
        goto done;
    }
    have_inv = 1;
    if (cufftExecD2Z(fwd, du, dv) != CUFFT_SUCCESS) {
        snprintf(err, (size_t)errlen, "cufftExecD2Z failed for n = %d", n);
        goto done;
    }
    {
        dim3 blk(32, 4), grd((n / 2 + 1 + 31) / 32, (n + 3) / 4);
        divide_by_symbol<<<grd, blk>>>(n, dv, discrete);
    }
    if (cufftExecZ2D(inv, dv, du) != CUFFT_SUCCESS) {
        snprintf(err, (size_t)errlen, "cuFFT inverse transform failed for n = %d", n);
        goto done;
    }
    scale<<<(unsigned)((nn + 255) / 256), 256>>>(nn, du, 1.0 / (double)nn);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpy(u, du, nn * sizeof(double), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        snprintf(err, (size_t)errlen, "kernels or copy back: %s", cudaGetErrorString(e));
        goto done;
    }
    rc = 0;
done:
    if (have_fwd)
        cufftDestroy(fwd);
    if (have_inv)
        cufftDestroy(inv);
    cudaFree(du);
    cudaFree(dv);
    return rc;
}
