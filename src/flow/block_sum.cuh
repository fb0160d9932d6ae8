/* Private to flow's CUDA files: a block's sum of one double per thread, in a fixed order (a tree
 * in shared memory), so that a result does not depend on timing. Blocks of FLOW_SUM_THREADS. */
#ifndef KEDR_FLOW_BLOCK_SUM_CUH
#define KEDR_FLOW_BLOCK_SUM_CUH

#define FLOW_SUM_THREADS 256

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

#endif
