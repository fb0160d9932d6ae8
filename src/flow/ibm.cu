/* The immersed boundary's point operations on the GPU: one thread a Lagrangian point over the
 * per-point functions of ibm_point.h; spreading adds with atomics (stencils of nearby points
 * overlap), so its sums come in another order than the cpu's. */
#include "core/internal.h"
#include "flow/ibm.h"

#define IBM_THREADS 128

__global__ void k_ibm(flow_grid g, flow_ibm_args A, flow_ibm_op op, size_t n)
{
    for (size_t l = blockIdx.x * (size_t)blockDim.x + threadIdx.x; l < n;
         l += (size_t)gridDim.x * blockDim.x)
        flow_ibm_point(&g, &A, op, l);
}

extern "C" kedr_status flow_cuda_ibm_map(kedr_ctx *ctx, const flow_grid *g,
                                         const flow_ibm_args *A, flow_ibm_op op, size_t n)
{
    size_t blocks = (n + IBM_THREADS - 1) / IBM_THREADS;
    blocks = blocks > 65535 ? 65535 : blocks;
    k_ibm<<<(unsigned)blocks, IBM_THREADS, 0, KEDR_STREAM(ctx)>>>(*g, *A, op, n);
    KEDR_CUDA_LAUNCHED("k_ibm");
    return KEDR_OK;
}
