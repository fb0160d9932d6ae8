/* Private to flow's CUDA files: the grid-stride loop, a block's sum of one double per thread in
 * a fixed order (a tree in shared memory, so that a result does not depend on timing; blocks of
 * FLOW_SUM_THREADS), and the sum of the blocks' sums in block order. */
#ifndef KEDR_FLOW_BLOCK_SUM_CUH
#define KEDR_FLOW_BLOCK_SUM_CUH

#define FLOW_SUM_THREADS 256

/* i over [0, n), each thread from its global index by the grid's thread count. */
#define GRID_STRIDE(i, n)                                                                     \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);                   \
         i += (size_t)gridDim.x * blockDim.x)

/* The block's sum of v into *out (thread 0 writes it). */
__device__ __forceinline__ void flow_block_sum(double v, double *out)
{
    __shared__ double sh[FLOW_SUM_THREADS];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = FLOW_SUM_THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = sh[0];
}

/* The sum of nb blocks' sums part[0 .. nb), in block order (one thread). */
__device__ __forceinline__ double flow_parts_sum(const double *part, int nb)
{
    double s = 0;
    for (int b = 0; b < nb; b++)
        s += part[b];
    return s;
}

#endif
