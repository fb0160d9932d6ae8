/* Private to flow: the vector and stencil operations of the Poisson solvers, one entry point
 * each, running where the context lives (ops.c: the cpu loops and the dispatch; ops.cu: the
 * cuda kernels, flow_cuda_*). Arrays are in the context's memory; scalars come back to the host. */
#ifndef KEDR_FLOW_OPS_H
#define KEDR_FLOW_OPS_H

#include "flow/poisson_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst = src: kedr_copy, but on the cpu a plain memcpy below 1 MB (kedr_copy opens a parallel
 * region for every call, which costs more than a small grid's copy) */
kedr_status flow_op_copy(kedr_ctx *ctx, void *dst, const void *src, size_t bytes);
/* Up to FLOW_COPIES blocks of count doubles each, dst[i] = src[i], in one launch (the planes of
 * a halo exchange, packed into the send areas or out of the receive areas). */
#define FLOW_COPIES 4
typedef struct {
    double *dst[FLOW_COPIES];
    const double *src[FLOW_COPIES];
    int n;
} flow_copies;
kedr_status flow_op_copies(kedr_ctx *ctx, const flow_copies *c, size_t count);
/* y = A x;  r = b - A x */
kedr_status flow_op_apply(kedr_ctx *ctx, const flow_level *L, const double *x, double *y);
kedr_status flow_op_residual(kedr_ctx *ctx, const flow_level *L, const double *x,
                             const double *b, double *r);
/* y = (b - A x) or (A x) where b is NULL, then plus a below on the first plane across the last
 * axis (layer cells) and plus a above on the last, each where not NULL: a slab's product or
 * residual with the neighbour ranks' planes (a = -1/h^2 for A x, +1/h^2 for b - A x) */
kedr_status flow_op_apply_ends(kedr_ctx *ctx, const flow_level *L, const double *x,
                               const double *b, double *y, size_t layer, double a,
                               const double *below, const double *above);
/* The same over the cells c0 <= c < c1 (flat indices) only: on the context's stream, or on the
 * side stream of side (flow_op_side_*) where side is not NULL. Each cell is computed as
 * flow_op_apply_ends computes it (the same bits). */
kedr_status flow_op_apply_range(kedr_ctx *ctx, const flow_level *L, const double *x,
                                const double *b, double *y, size_t layer, double a,
                                const double *below, const double *above, size_t c0, size_t c1,
                                void *side);
/* A second stream for work that runs while the context's stream waits for a halo (cuda; NULL
 * and no-ops elsewhere, where work runs in the order it is called): fork makes the side
 * stream's later work wait for the context stream's work so far, join the context stream's
 * later work wait for the side stream's work so far. */
kedr_status flow_op_side_create(kedr_ctx *ctx, void **side);
void flow_op_side_free(kedr_ctx *ctx, void *side);
kedr_status flow_op_fork(kedr_ctx *ctx, void *side);
kedr_status flow_op_join(kedr_ctx *ctx, void *side);
/* join in two halves: mark records the side stream's work so far, wait makes the context
 * stream's later work wait for what was marked (not for side work queued after the mark) */
kedr_status flow_op_side_mark(kedr_ctx *ctx, void *side);
kedr_status flow_op_side_wait(kedr_ctx *ctx, void *side);
/* A slab's factor of (12.37) over ranks (flow_cell_ainv_upper_ends where upper, else
 * flow_cell_ainv_lower_ends) on the cells c0 <= c < c1, on the context's stream or side's. */
typedef struct {
    size_t layer;
    int axis;
    double ih2;
    const double *lo, *lo_id, *hi, *hi_id;
} flow_ainv_ends;
kedr_status flow_op_ainv_range(kedr_ctx *ctx, const flow_level *L, const double *in, double *out,
                               int upper, const flow_ainv_ends *e, size_t c0, size_t c1,
                               void *side);
/* one red-black half-sweep over the cells with (i + j + k) % 2 == colour */
kedr_status flow_op_gs(kedr_ctx *ctx, const flow_level *L, double *x, const double *b,
                       int colour);
/* the same half-sweep of a slab whose neighbour ranks' planes next to it lend their share:
 * the right-hand side is b plus ih2 below on the first plane across the last axis (layer cells)
 * and plus ih2 above on the last, each where not NULL (flow_cell_gs_ends) */
kedr_status flow_op_gs_ends(kedr_ctx *ctx, const flow_level *L, double *x, const double *b,
                            int colour, size_t layer, double ih2, const double *below,
                            const double *above);
/* The same half-sweep on the rows row0 <= j + n[1] k < row1 only, on the context's stream or
 * side's (flow_op_side_*): each cell as flow_op_gs_ends computes it. */
kedr_status flow_op_gs_ends_rows(kedr_ctx *ctx, const flow_level *L, double *x, const double *b,
                                 int colour, size_t layer, double ih2, const double *below,
                                 const double *above, size_t row0, size_t row1, void *side);
/* z = (I - L D^-1)(I - D^-1 L^T) r, t a work vector */
kedr_status flow_op_ainv(kedr_ctx *ctx, const flow_level *L, const double *r, double *t,
                         double *z);
/* z = w D^-1 r, or z += w D^-1 r (add) */
kedr_status flow_op_jacobi(kedr_ctx *ctx, const flow_level *L, const double *r, double *z,
                           double w, int add);
kedr_status flow_op_dot(kedr_ctx *ctx, size_t n, const double *a, const double *b, double *out);
kedr_status flow_op_sum(kedr_ctx *ctx, size_t n, const double *a, double *out);
/* x += s */
kedr_status flow_op_shift(kedr_ctx *ctx, size_t n, double *x, double s);
/* x += alpha p, r -= alpha q, and *rr = (r, r) when rr is not NULL */
kedr_status flow_op_cg_update(kedr_ctx *ctx, size_t n, double *x, double *r, const double *p,
                              const double *q, double alpha, double *rr);
/* Up to FLOW_BATCH at once, with one download (one device synchronisation on cuda) for all:
 * out[i] = (a[i], b[i]); and x[i] += alpha[i] p[i], r[i] -= alpha[i] q[i], rr[i] = (r[i], r[i]).
 * Each result is summed exactly as flow_op_dot / flow_op_cg_update sums it (the same bits). */
#define FLOW_BATCH 3
kedr_status flow_op_dots(kedr_ctx *ctx, int k, size_t n, const double *const *a,
                         const double *const *b, double *out);
kedr_status flow_op_cg_updates(kedr_ctx *ctx, int k, size_t n, double *const *x,
                               double *const *r, const double *const *p,
                               const double *const *q, const double *alpha, double *rr);
/* p = z + beta p */
kedr_status flow_op_xpby(kedr_ctx *ctx, size_t n, const double *z, double beta, double *p);
/* y += a x */
kedr_status flow_op_axpy(kedr_ctx *ctx, size_t n, double a, const double *x, double *y);
/* x = M b, M dense n x n by rows (the coarsest multigrid level); x and b apart */
kedr_status flow_op_dense(kedr_ctx *ctx, size_t n, const double *M, const double *b, double *x);
/* b = R r (F fine, C coarse); x += P xc */
kedr_status flow_op_restrict(kedr_ctx *ctx, const flow_level *F, const flow_level *C,
                             const double *r, double *b);
kedr_status flow_op_prolong_add(kedr_ctx *ctx, const flow_level *F, const flow_level *C,
                                const double *xc, double *x);

#ifdef KEDR_HAVE_CUDA
kedr_status flow_cuda_apply(kedr_ctx *ctx, const flow_level *L, const double *x,
                            const double *b, double *y);
kedr_status flow_cuda_apply_ends(kedr_ctx *ctx, const flow_level *L, const double *x,
                                 const double *b, double *y, size_t layer, double a,
                                 const double *below, const double *above);
kedr_status flow_cuda_apply_range(kedr_ctx *ctx, const flow_level *L, const double *x,
                                  const double *b, double *y, size_t layer, double a,
                                  const double *below, const double *above, size_t c0,
                                  size_t c1, void *side);
kedr_status flow_cuda_side_create(kedr_ctx *ctx, void **side);
void flow_cuda_side_free(kedr_ctx *ctx, void *side);
kedr_status flow_cuda_fork(kedr_ctx *ctx, void *side);
kedr_status flow_cuda_join(kedr_ctx *ctx, void *side);
kedr_status flow_cuda_side_mark(kedr_ctx *ctx, void *side);
kedr_status flow_cuda_gs_ends_rows(kedr_ctx *ctx, const flow_level *L, double *x,
                                   const double *b, int colour, size_t layer, double ih2,
                                   const double *below, const double *above, size_t row0,
                                   size_t row1, void *side);
kedr_status flow_cuda_side_wait(kedr_ctx *ctx, void *side);
kedr_status flow_cuda_ainv_range(kedr_ctx *ctx, const flow_level *L, const double *in,
                                 double *out, int upper, const flow_ainv_ends *e, size_t c0,
                                 size_t c1, void *side);
kedr_status flow_cuda_gs(kedr_ctx *ctx, const flow_level *L, double *x, const double *b,
                         int colour);
kedr_status flow_cuda_gs_ends(kedr_ctx *ctx, const flow_level *L, double *x, const double *b,
                              int colour, size_t layer, double ih2, const double *below,
                              const double *above);
kedr_status flow_cuda_ainv(kedr_ctx *ctx, const flow_level *L, const double *r, double *t,
                           double *z);
kedr_status flow_cuda_jacobi(kedr_ctx *ctx, const flow_level *L, const double *r, double *z,
                             double w, int add);
kedr_status flow_cuda_dot(kedr_ctx *ctx, size_t n, const double *a, const double *b,
                          double *out);
kedr_status flow_cuda_shift(kedr_ctx *ctx, size_t n, double *x, double s);
kedr_status flow_cuda_cg_update(kedr_ctx *ctx, size_t n, double *x, double *r, const double *p,
                                const double *q, double alpha, double *rr);
kedr_status flow_cuda_dots(kedr_ctx *ctx, int k, size_t n, const double *const *a,
                           const double *const *b, double *out);
kedr_status flow_cuda_cg_updates(kedr_ctx *ctx, int k, size_t n, double *const *x,
                                 double *const *r, const double *const *p,
                                 const double *const *q, const double *alpha, double *rr);
kedr_status flow_cuda_xpby(kedr_ctx *ctx, size_t n, const double *z, double beta, double *p);
kedr_status flow_cuda_axpy(kedr_ctx *ctx, size_t n, double a, const double *x, double *y);
kedr_status flow_cuda_dense(kedr_ctx *ctx, size_t n, const double *M, const double *b, double *x);
kedr_status flow_cuda_copies(kedr_ctx *ctx, const flow_copies *c, size_t count);
kedr_status flow_cuda_restrict(kedr_ctx *ctx, const flow_level *F, const flow_level *C,
                               const double *r, double *b);
kedr_status flow_cuda_prolong_add(kedr_ctx *ctx, const flow_level *F, const flow_level *C,
                                  const double *xc, double *x);
#endif

#ifdef __cplusplus
}
#endif
#endif
