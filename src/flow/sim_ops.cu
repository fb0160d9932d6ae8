/* The time step's box operations on the GPU: one thread a point of the box, over the per-point
 * functions of grid.h. Reductions: per block in shared memory, then one block over the blocks'
 * results in a fixed order; NaN counts as infinite in a maximum, as on the cpu. */
#include "core/internal.h"
#include "flow/block_sum.cuh"
#include "flow/sim_ops.h"

#define SOP_THREADS 256
#define SOP_MAX_BLOCKS 1024

__device__ __forceinline__ void box_point(const flow_box &b, size_t t, int *i, int *j, int *k)
{
    size_t nx = (size_t)(b.hi[0] - b.lo[0] + 1), ny = (size_t)(b.hi[1] - b.lo[1] + 1);
    size_t row = t / nx;
    *i = b.lo[0] + (int)(t - row * nx);
    *j = b.lo[1] + (int)(row % ny);
    *k = b.lo[2] + (int)(row / ny);
}

static size_t box_volume(flow_box b)
{
    size_t v = 1;
    for (int a = 0; a < 3; a++)
        v *= (size_t)(b.hi[a] - b.lo[a] + 1);
    return v;
}

__global__ void k_map(flow_grid g, flow_args A, flow_op op, flow_box box, size_t n)
{
    GRID_STRIDE(t, n)
    {
        int i, j, k;
        box_point(box, t, &i, &j, &k);
        flow_g_point(&g, &A, op, i, j, k);
    }
}

__device__ __forceinline__ double combine(double a, double b, int max)
{
    return max ? (a > b ? a : b) : a + b;
}

__device__ __forceinline__ void block_reduce(double v, int max, double *out)
{
    __shared__ double sh[SOP_THREADS];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = SOP_THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            sh[threadIdx.x] = combine(sh[threadIdx.x], sh[threadIdx.x + s], max);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = sh[0];
}

__global__ void k_reduce(flow_grid g, flow_args A, flow_red op, flow_box box, size_t n,
                         double *part)
{
    int max = op == FLOW_RED_MAXABS || op == FLOW_RED_MAXDIV;
    double m = 0;
    GRID_STRIDE(t, n)
    {
        int i, j, k;
        box_point(box, t, &i, &j, &k);
        double v = flow_g_reduce_point(&g, &A, op, i, j, k);
        if (max && v != v)
            v = HUGE_VAL;
        m = combine(m, v, max);
    }
    block_reduce(m, max, &part[blockIdx.x]);
}

__global__ void k_reduce_parts(const double *part, int m, int max, double *out)
{
    double s = 0;
    for (int i = threadIdx.x; i < m; i += SOP_THREADS)
        s = combine(s, part[i], max);
    block_reduce(s, max, out);
}

static unsigned sop_blocks(size_t n, unsigned cap)
{
    size_t b = (n + SOP_THREADS - 1) / SOP_THREADS;
    return b < 1 ? 1 : b > cap ? cap : (unsigned)b;
}

extern "C" kedr_status flow_cuda_sop_map(kedr_ctx *ctx, const flow_grid *g, const flow_args *A,
                                         flow_op op, flow_box box)
{
    size_t n = box_volume(box);
    k_map<<<sop_blocks(n, 65535u * 16), SOP_THREADS, 0, KEDR_STREAM(ctx)>>>(*g, *A, op, box, n);
    KEDR_CUDA_LAUNCHED("k_map");
    return KEDR_OK;
}

extern "C" kedr_status flow_cuda_sop_reduce(kedr_ctx *ctx, const flow_grid *g,
                                            const flow_args *A, flow_red op, flow_box box,
                                            double *out)
{
    size_t n = box_volume(box);
    unsigned blocks = sop_blocks(n, SOP_MAX_BLOCKS);
    int max = op == FLOW_RED_MAXABS || op == FLOW_RED_MAXDIV;
    double *part;
    KEDR_TRY(kedr_scratch_get(ctx, (void **)&part, (SOP_MAX_BLOCKS + 1) * sizeof *part));
    k_reduce<<<blocks, SOP_THREADS, 0, KEDR_STREAM(ctx)>>>(*g, *A, op, box, n, part);
    cudaError_t e = cudaPeekAtLastError();
    if (e == cudaSuccess) {
        k_reduce_parts<<<1, SOP_THREADS, 0, KEDR_STREAM(ctx)>>>(part, (int)blocks, max,
                                                                part + SOP_MAX_BLOCKS);
        e = cudaPeekAtLastError();
    }
    kedr_status s = e == cudaSuccess ? kedr_read_back(ctx, out, part + SOP_MAX_BLOCKS, sizeof *out)
                                     : kedr_cuda_status(e, "flow reduction", __FILE__, __LINE__);
    kedr_scratch_put(ctx, part);
    return s;
}
