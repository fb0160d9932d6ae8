/* The time step's box operations on the cpu, and the dispatch to sim_ops.cu. */
#include "core/internal.h"
#include "flow/sim_ops.h"

#include <math.h>

#define SOP_OMP_MIN 16384

static size_t volume(flow_box b)
{
    size_t v = 1;
    for (int a = 0; a < 3; a++) {
        if (b.hi[a] < b.lo[a])
            return 0;
        v *= (size_t)(b.hi[a] - b.lo[a] + 1);
    }
    return v;
}

kedr_status flow_sop_map(kedr_ctx *ctx, const flow_grid *g, const flow_args *A, flow_op op,
                         flow_box box)
{
    if (volume(box) == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return flow_cuda_sop_map(ctx, g, A, op, box);
#else
    (void)ctx;
#endif
#pragma omp parallel for collapse(2) schedule(static) if (volume(box) >= SOP_OMP_MIN)
    for (int k = box.lo[2]; k <= box.hi[2]; k++)
        for (int j = box.lo[1]; j <= box.hi[1]; j++)
            for (int i = box.lo[0]; i <= box.hi[0]; i++)
                flow_g_point(g, A, op, i, j, k);
    return KEDR_OK;
}

typedef struct {
    const flow_grid *g;
    const flow_args *A;
    flow_red op;
    flow_box box;
} sop_sum_arg;

/* rows lo <= row < hi of the box (a row: its cells along x at one j, k) */
static double sop_sum_part(size_t lo, size_t hi, void *arg)
{
    const sop_sum_arg *u = (const sop_sum_arg *)arg;
    size_t nj = (size_t)(u->box.hi[1] - u->box.lo[1] + 1);
    double m = 0;
    for (size_t row = lo; row < hi; row++) {
        int k = u->box.lo[2] + (int)(row / nj), j = u->box.lo[1] + (int)(row % nj);
        for (int i = u->box.lo[0]; i <= u->box.hi[0]; i++)
            m += flow_g_reduce_point(u->g, u->A, u->op, i, j, k);
    }
    return m;
}

kedr_status flow_sop_reduce(kedr_ctx *ctx, const flow_grid *g, const flow_args *A, flow_red op,
                            flow_box box, double *out)
{
    *out = 0;
    if (volume(box) == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return flow_cuda_sop_reduce(ctx, g, A, op, box, out);
#else
    (void)ctx;
#endif
    double m = 0;
    if (op == FLOW_RED_MAXABS || op == FLOW_RED_MAXDIV) {
#pragma omp parallel for collapse(2) reduction(max : m) if (volume(box) >= SOP_OMP_MIN)
        for (int k = box.lo[2]; k <= box.hi[2]; k++)
            for (int j = box.lo[1]; j <= box.hi[1]; j++)
                for (int i = box.lo[0]; i <= box.hi[0]; i++) {
                    double v = flow_g_reduce_point(g, A, op, i, j, k);
                    m = v != v ? HUGE_VAL : v > m ? v : m; /* NaN: reported as infinite */
                }
    } else { /* a part a thread, added in thread order: the same bits on every run */
        sop_sum_arg u = {g, A, op, box};
        size_t nx = (size_t)(box.hi[0] - box.lo[0] + 1), rows = volume(box) / nx;
        m = kedr_sum_parts(rows, (SOP_OMP_MIN + nx - 1) / nx, sop_sum_part, &u);
    }
    *out = m;
    return KEDR_OK;
}
