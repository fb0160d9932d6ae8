/* The immersed boundary's point operations on the GPU: one thread a Lagrangian point over the
 * per-point functions of ibm_point.h; spreading adds with atomics (stencils of nearby points
 * overlap), so its sums come in another order than the cpu's. */
#include "core/internal.h"
#include "flow/block_sum.cuh"
#include "flow/ibm.h"

#define IBM_THREADS 128

__global__ void k_ibm(flow_grid g, flow_ibm_args A, flow_ibm_op op, size_t n)
{
    GRID_STRIDE(l, n)
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

/* ---- the force systems' CG with its scalars on the device (ibm.c solve_dev) ---------------- */

typedef struct {
    flow_ibm_args a[3];
} ibm_args3;
typedef struct {
    double *v[3];
} ibm_vec3;

#define CG_BLOCKS FLOW_IBM_CG_BLOCKS

/* The point operation op of component blockIdx.y, while it iterates. */
__global__ void k_ibm_live(flow_grid g, ibm_args3 A, flow_ibm_op op, size_t n,
                           const flow_ibm_cg_state *S)
{
    int c = blockIdx.y;
    if (!(S->live >> c & 1))
        return;
    GRID_STRIDE(l, n)
    flow_ibm_point(&g, &A.a[c], op, l);
}

/* (p, q) of component blockIdx.y: the blocks' sums */
__global__ void k_cg_pq(size_t n, ibm_vec3 p, ibm_vec3 q, double *part,
                        const flow_ibm_cg_state *S)
{
    int c = blockIdx.y;
    if (!(S->live >> c & 1))
        return;
    double s = 0;
    GRID_STRIDE(i, n)
    s += p.v[c][i] * q.v[c][i];
    flow_block_sum(s, part + c * CG_BLOCKS + blockIdx.x);
}

/* alpha = rr / (p, q), or the component stops (p in the null space; NaN) */
__global__ void k_cg_alpha(int dims, const double *part, flow_ibm_cg_state *S)
{
    for (int c = 0; c < dims; c++) {
        if (!(S->live >> c & 1))
            continue;
        double pq = flow_parts_sum(part + c * CG_BLOCKS, CG_BLOCKS);
        if (!(pq > 0)) {
            S->res[c] = sqrt(S->rr[c] / S->bb[c]);
            if (!isfinite(pq))
                S->nan |= 1 << c;
            S->live &= ~(1 << c);
            continue;
        }
        S->alpha[c] = S->rr[c] / pq;
    }
}

/* g += alpha p, r -= alpha q, and the blocks' sums of r^2 */
__global__ void k_cg_upd(size_t n, ibm_vec3 g, ibm_vec3 r, ibm_vec3 p, ibm_vec3 q, double *part,
                         const flow_ibm_cg_state *S)
{
    int c = blockIdx.y;
    if (!(S->live >> c & 1))
        return;
    double alpha = S->alpha[c], s = 0;
    GRID_STRIDE(i, n)
    {
        g.v[c][i] += alpha * p.v[c][i];
        double rc = r.v[c][i] - alpha * q.v[c][i];
        r.v[c][i] = rc;
        s += rc * rc;
    }
    flow_block_sum(s, part + c * CG_BLOCKS + blockIdx.x);
}

/* the residual of the iteration it counts: a component below its tolerance stops, the others go
 * on with beta = rn / rr */
__global__ void k_cg_beta(int dims, const double *part, flow_ibm_cg_state *S)
{
    int it = ++S->it;
    S->upd = 0;
    for (int c = 0; c < dims; c++) {
        if (!(S->live >> c & 1))
            continue;
        double rn = flow_parts_sum(part + c * CG_BLOCKS, CG_BLOCKS);
        S->iters[c] = it;
        S->res[c] = sqrt(rn / S->bb[c]);
        if (rn <= S->tol2[c]) {
            S->live &= ~(1 << c);
            continue;
        }
        S->beta[c] = rn / S->rr[c];
        S->rr[c] = rn;
        S->upd |= 1 << c;
    }
}

/* p = r + beta p */
__global__ void k_cg_p(size_t n, ibm_vec3 r, ibm_vec3 p, const flow_ibm_cg_state *S)
{
    int c = blockIdx.y;
    if (!(S->upd >> c & 1))
        return;
    double beta = S->beta[c];
    GRID_STRIDE(i, n)
    p.v[c][i] = r.v[c][i] + beta * p.v[c][i];
}

extern "C" kedr_status flow_cuda_ibm_cg(kedr_ctx *ctx, const flow_grid *gbox,
                                        const flow_ibm_args A[3], int dims, size_t n,
                                        double *const g[3], double *const r[3],
                                        double *const p[3], double *const q[3],
                                        flow_ibm_cg_state *S, double *part, int count)
{
    cudaStream_t st = KEDR_STREAM(ctx);
    ibm_args3 a;
    ibm_vec3 G, R, P, Q;
    for (int c = 0; c < 3; c++) {
        a.a[c] = A[c];
        G.v[c] = c < dims ? g[c] : NULL;
        R.v[c] = c < dims ? r[c] : NULL;
        P.v[c] = c < dims ? p[c] : NULL;
        Q.v[c] = c < dims ? q[c] : NULL;
    }
    size_t pb = (n + IBM_THREADS - 1) / IBM_THREADS;
    dim3 points((unsigned)(pb < 1 ? 1 : pb > 65535 ? 65535 : pb), (unsigned)dims);
    size_t vb = (n + FLOW_SUM_THREADS - 1) / FLOW_SUM_THREADS;
    dim3 sums(CG_BLOCKS, (unsigned)dims), vecs((unsigned)(vb < 1 ? 1 : vb > 65535 ? 65535 : vb),
                                               (unsigned)dims);
    for (int it = 0; it < count; it++) {
        /* q = (L L*) p on the box */
        k_ibm_live<<<points, IBM_THREADS, 0, st>>>(*gbox, a, FLOW_IBM_ZERO, n, S);
        k_ibm_live<<<points, IBM_THREADS, 0, st>>>(*gbox, a, FLOW_IBM_SPREAD, n, S);
        k_ibm_live<<<points, IBM_THREADS, 0, st>>>(*gbox, a, FLOW_IBM_INTERP, n, S);
        k_cg_pq<<<sums, FLOW_SUM_THREADS, 0, st>>>(n, P, Q, part, S);
        k_cg_alpha<<<1, 1, 0, st>>>(dims, part, S);
        k_cg_upd<<<sums, FLOW_SUM_THREADS, 0, st>>>(n, G, R, P, Q, part, S);
        k_cg_beta<<<1, 1, 0, st>>>(dims, part, S);
        k_cg_p<<<vecs, FLOW_SUM_THREADS, 0, st>>>(n, R, P, S);
        KEDR_CUDA_LAUNCHED("k_cg_p");
    }
    return KEDR_OK;
}
