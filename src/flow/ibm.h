/* Private to flow: the immersed bodies of a flow (ibm.c; docs/flow.md "Immersed boundaries").
 *
 * The points of every body form one set of N points. On the host: their positions at t = 0, the
 * body each belongs to, and the bodies' motion; in the context's memory: the positions and target
 * velocities of the current step (uploaded each step for moving bodies), the force g of each
 * component and the conjugate-gradient vectors, and one padded grid array for L L* p. */
#ifndef KEDR_FLOW_IBM_H
#define KEDR_FLOW_IBM_H

#include "core/internal.h"
#include "flow/ibm_point.h"

struct kedr_flow;

typedef struct flow_ibm {
    kedr_ctx *ctx;
    int nbodies, dims, moving;
    size_t N;
    int *body;             /* host: the body of each point */
    size_t *first;         /* host: the first point of each body, nbodies + 1 */
    double *X0;            /* host: positions at t = 0, 3 a point */
    double *Xh, *Uh;       /* host: the current positions and target velocities, [3][N] */
    double *X[3], *ub[3];  /* context memory: the same */
    double *g[3];          /* context memory: the force of each component (acceleration h^d) */
    double *r, *p, *q;     /* CG vectors, N for each component (dims N) */
    double *scratch;       /* a padded grid array */
    flow_ibm_stencil *st;  /* context memory: the points' stencils, N for each component */
    int st_mask;           /* bit c: component c's stencils held (0 after the points moved) */
    /* the bodies' box (ibm.c, box_place): every cell of the whole grid that a stencil touches,
     * a grid of its own (gbox) on which each rank applies the whole of L L*, so that the force
     * systems need no sum over ranks; have_box 0 (a box too large to hold): L L* on the slab,
     * summed over the ranks each product */
    int box_on;            /* KEDR_FLOW_IBM_BOX (1 unless set to 0) */
    int have_box;
    flow_grid gbox;
    size_t bcells;         /* of one component's box array (gbox's padded cells) */
    double *bscratch;      /* context memory: dims box arrays, bcap doubles in all */
    size_t bcap;
    flow_ibm_stencil *stb; /* context memory: the stencils on gbox, N for each component */
    /* cuda, on the box: the force systems' CG state and block sums in device memory (ibm.cu:
     * the iterations run without a device synchronisation) */
    struct flow_ibm_cg_state *cg_state;
    double *cg_part;
    /* a batch of those iterations recorded once and replayed (KEDR_FLOW_IBM_GRAPH, 1 unless set
     * to 0; fixed bodies: a moving body's box and stencils change every step) */
    int graph;
    kedr_replay cg_graph;
    int fuse;              /* KEDR_FLOW_FUSE: the components' systems side by side */
    double *gh;            /* host: g of the last step, [3][N] */
    kedr_flow_body_state *state; /* host: each body after the last step */
    int have_force;
    double time;           /* of the positions uploaded */
    int iterations;
    double residual;
    double seconds;
    /* over ranks: a slot of dims N for each rank's interpolations (context memory, registered with
     * the comm layer: each rank copies its slot into the others', GPU to GPU where it can) */
    double *sum;
    struct kedr_comm_dev *sum_dev;
    double sum_seconds;    /* wall time in those sums (from a synchronised device) */
    int64_t sums;
} flow_ibm;

/* Builds the points of the case's bodies (none: *out = NULL). */
kedr_status flow_ibm_create(struct kedr_flow *f, flow_ibm **out);
/* Over ranks, collective (every rank, after agreeing that all created theirs): registers the
 * slots of the sums over ranks. */
kedr_status flow_ibm_register(struct kedr_flow *f);
void flow_ibm_destroy(flow_ibm *ib);
/* The bodies at time t: positions and target velocities (uploaded when they moved); an error
 * names a body whose points come too close to a non-periodic boundary. */
kedr_status flow_ibm_place(struct kedr_flow *f, double t);
/* The forcing of the step to t: qt += dt L* g with (L L*) g = (U_b - L qt) / dt for every
 * component; KEDR_ERR_INVALID when a force system does not converge. */
kedr_status flow_ibm_force(struct kedr_flow *f, double dt, double t);
/* y = (L L*) x for component comp (over the scratch array). */
kedr_status flow_ibm_apply(struct kedr_flow *f, int comp, const double *x, double *y);

/* The point operations over all N points (cpu loop or cuda kernel). */
kedr_status flow_ibm_map(kedr_ctx *ctx, const flow_grid *g, const flow_ibm_args *A,
                         flow_ibm_op op, size_t n);
#ifdef KEDR_HAVE_CUDA
#ifdef __cplusplus
extern "C"
#endif
kedr_status flow_cuda_ibm_map(kedr_ctx *ctx, const flow_grid *g, const flow_ibm_args *A,
                              flow_ibm_op op, size_t n);
#endif

/* The force systems' conjugate gradients with their scalars on the device (cuda, on the
 * bodies' box: ibm.c solve_dev), the iterations of ibm.c's solve_all step for step: component
 * c iterates while bit c of live is set; iters, res are solve_all's; nan: bit c set where
 * (p, L L* p) was NaN or infinite. */
typedef struct flow_ibm_cg_state {
    double rr[3], bb[3], tol2[3], alpha[3], beta[3], res[3];
    int live, upd, nan, iters[3];
    int it; /* iterations run by this solve (each batch goes on from it) */
} flow_ibm_cg_state;
#define FLOW_IBM_CG_BLOCKS 64 /* block sums a component */
#ifdef KEDR_HAVE_CUDA
/* count iterations after the S->it already run: A[c] the box's point operations of component c
 * (in: p, out: q), g, r, p, q each component's vectors; S and part in device memory; nothing
 * waited for (the same kernels whatever S holds: a batch can be recorded and replayed). */
#ifdef __cplusplus
extern "C"
#endif
kedr_status flow_cuda_ibm_cg(kedr_ctx *ctx, const flow_grid *gbox, const flow_ibm_args A[3],
                             int dims, size_t n, double *const g[3], double *const r[3],
                             double *const p[3], double *const q[3], flow_ibm_cg_state *S,
                             double *part, int count);
#endif

/* The smallest distance, in cells, a point keeps from a non-periodic face of the box: half the
 * kernel's support, so that every stencil lies on unknown faces and box cells. */
double flow_ibm_margin(kedr_flow_delta delta);
/* The surface points of a body in its frame at t = 0 (absolute positions, 3 a point) for a
 * point spacing ds; *count points in *xyz (malloc'ed). Point files are read here. */
kedr_status flow_ibm_body_points(const kedr_flow_body *b, int dims, const double length[3],
                                 double ds, double **xyz, size_t *count);

#endif
