/* Private to flow: the time step's operations over a box of the padded grid, on the cpu
 * (sim_ops.c) or the GPU (sim_ops.cu), both from the per-point functions of grid.h. */
#ifndef KEDR_FLOW_SIM_OPS_H
#define KEDR_FLOW_SIM_OPS_H

#include "flow/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Applies op at every point of the box (no point of the box reads what another writes). */
kedr_status flow_sop_map(kedr_ctx *ctx, const flow_grid *g, const flow_args *A, flow_op op,
                         flow_box box);
/* The largest (MAXABS, MAXDIV; NaN wins) or the sum (SUM, ENERGY) over the box; 0 for an empty
 * box. */
kedr_status flow_sop_reduce(kedr_ctx *ctx, const flow_grid *g, const flow_args *A, flow_red op,
                            flow_box box, double *out);

#ifdef KEDR_HAVE_CUDA
kedr_status flow_cuda_sop_map(kedr_ctx *ctx, const flow_grid *g, const flow_args *A, flow_op op,
                              flow_box box);
kedr_status flow_cuda_sop_reduce(kedr_ctx *ctx, const flow_grid *g, const flow_args *A,
                                 flow_red op, flow_box box, double *out);
#endif

#ifdef __cplusplus
}
#endif
#endif
