/* kedr flow: incompressible Navier–Stokes on a uniform staggered grid by a projection method, and
 * the pressure Poisson solvers it needs (docs/flow.md).
 *
 * The model is that of Boreskov et al. (2015), §12.2, a multi-GPU immersed-boundary solver:
 * second-order central differences on a staggered grid, Adams–Bashforth 2, a pressure
 * correction from a homogeneous Neumann Poisson equation solved by preconditioned conjugate
 * gradients with m-step Jacobi, red-black symmetric Gauss–Seidel or the approximate inverse
 * (I - L D^-1)(I - D^-1 L^T); kedr adds geometric multigrid and a direct FFT/DCT solver.
 * Arrays live in the context's memory. */
#ifndef KEDR_FLOW_H
#define KEDR_FLOW_H

#include "kedr/core.h"
#include "kedr/ini.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the pressure Poisson equation ------------------------------------------------------------
 *
 * A x = b on an nx x ny x nz grid of cells (nz = 1 in 2D; any n = 1 axis is inactive), cell
 * (i, j, k) at index i + nx (j + ny k), where A is minus the second-order 5- or 7-point Laplacian
 * with cell sizes h: homogeneous Neumann at both ends of an axis, or periodic. A is symmetric,
 * positive semidefinite, and its null space is the constants: the solvers take b minus its mean
 * (the compatibility condition) and return the solution of zero mean. */

typedef enum {
    KEDR_FLOW_PC_NONE = 0, /* plain conjugate gradients */
    KEDR_FLOW_PC_JACOBI,   /* m steps of Jacobi from zero (m = steps, 1..4) */
    KEDR_FLOW_PC_SSOR,     /* m steps of red-black symmetric Gauss–Seidel (SSOR, omega = 1) */
    KEDR_FLOW_PC_AINV,     /* the approximate inverse (I - L D^-1)(I - D^-1 L^T) */
    KEDR_FLOW_PC_MG,       /* one multigrid V-cycle */
    KEDR_FLOW_NPRECONDS
} kedr_flow_precond;

typedef enum {
    KEDR_FLOW_METHOD_PCG = 0, /* preconditioned conjugate gradients */
    KEDR_FLOW_METHOD_MG,      /* multigrid V-cycles alone (precond is ignored) */
    KEDR_FLOW_METHOD_FFT      /* direct: FFT / DCT (cpu, built with FFTW; precond is ignored) */
} kedr_flow_method;

typedef struct {
    int n[3];         /* cells along x, y, z, each >= 1 */
    double h[3];      /* cell sizes (> 0) */
    int periodic[3];  /* 1: periodic along the axis; 0: homogeneous Neumann at both of its ends */
    kedr_flow_method method;
    kedr_flow_precond precond;
    int steps;        /* Jacobi or SSOR steps m (1..4); multigrid: smoothing sweeps each way */
    double omega;     /* Jacobi relaxation for m >= 2 (0: 1 for odd m, 0.8 for even m) */
    double tol;       /* stop when ||r||_2 <= tol ||b - mean(b)||_2 ... */
    double atol;      /* ... or ||r||_2 <= atol */
    int max_iter;     /* iterations (CG steps or V-cycles) before giving up */
    int cheap_check;  /* test (z, r) first and ||r|| only when that passes (the seed's test) */
} kedr_flow_poisson_opts;

typedef struct {
    int iterations;         /* CG steps or V-cycles done */
    int converged;          /* 1 when the tolerance was met */
    double rhs_norm;        /* ||b - mean(b)||_2 */
    double residual;        /* ||r||_2 / rhs_norm at the end (0 when rhs_norm is 0) */
    const double *history;  /* relative residual before iteration 0, 1, ...: history_len values,
                               owned by the solver, valid until its next solve */
    int history_len;
    double seconds;
} kedr_flow_poisson_info;

typedef struct kedr_flow_poisson kedr_flow_poisson;

/* tol 1e-8, max_iter 1000, PCG with multigrid, 2 sweeps, periodic off, h = 1, n = 1. */
void kedr_flow_poisson_defaults(kedr_flow_poisson_opts *o);
const char *kedr_flow_precond_name(kedr_flow_precond p);
/* "none", "jacobi", "ssor", "ainv", "mg"; KEDR_ERR_INVALID naming the text otherwise. */
kedr_status kedr_flow_precond_parse(const char *text, kedr_flow_precond *p);

/* KEDR_ERR_INVALID names a bad option (e.g. red-black SSOR along a periodic axis of odd size,
 * where red and black cells would touch); KEDR_ERR_UNSUPPORTED for a back end the solvers are
 * not built for; KEDR_ERR_NOMEM says how much was asked. */
kedr_status kedr_flow_poisson_create(kedr_ctx *ctx, const kedr_flow_poisson_opts *o,
                                     kedr_flow_poisson **out);
void kedr_flow_poisson_destroy(kedr_flow_poisson *ps);
/* Solves A x = b - mean(b) from the initial guess in x; x ends with zero mean. A solve that
 * does not converge still returns KEDR_OK with info->converged = 0 and the residual history. */
kedr_status kedr_flow_poisson_solve(kedr_flow_poisson *ps, double *x, const double *b,
                                    kedr_flow_poisson_info *info);
/* y = A x (for tests and residual checks). */
kedr_status kedr_flow_poisson_apply(kedr_flow_poisson *ps, const double *x, double *y);
/* y = M^-1 x for the solver's preconditioner (for tests: symmetry, positivity). */
kedr_status kedr_flow_poisson_precondition(kedr_flow_poisson *ps, const double *x, double *y);
/* Multigrid levels built (1 when the grid cannot be coarsened), and the coarsest grid. */
int kedr_flow_poisson_levels(const kedr_flow_poisson *ps, int coarsest[3]);

/* Which back ends the flow module runs on (the cpu always; cuda when built with it). */
int kedr_flow_backend_available(kedr_backend b);

/* ---- the flow solver -------------------------------------------------------------------------
 *
 * Faces of the box: 0 x-, 1 x+, 2 y-, 3 y+, 4 z-, 5 z+. */

typedef enum {
    KEDR_FLOW_BC_PERIODIC = 0, /* both faces of the axis */
    KEDR_FLOW_BC_WALL,         /* no slip; the wall may move tangentially (a lid) */
    KEDR_FLOW_BC_SLIP,         /* no penetration, no shear */
    KEDR_FLOW_BC_INFLOW,       /* the velocity given (uniform or a parabolic profile) */
    KEDR_FLOW_BC_OUTFLOW       /* convective outflow, the flux balanced with the inflow */
} kedr_flow_bc_kind;

typedef struct {
    kedr_flow_bc_kind kind;
    double velocity[3]; /* wall: its tangential velocity; inflow: the (mean) velocity */
    int parabolic;      /* inflow: a parabolic profile of peak 1.5 x (2D) or 2.25 x (3D) mean */
} kedr_flow_bc;

typedef enum {
    KEDR_FLOW_INIT_REST = 0,   /* u = 0 */
    KEDR_FLOW_INIT_UNIFORM,    /* u = init_velocity */
    KEDR_FLOW_INIT_TAYLOR_GREEN
} kedr_flow_init;

#define KEDR_FLOW_NAME_MAX 128
#define KEDR_FLOW_PATH_MAX 512

/* ---- immersed bodies (Su, Lai & Lin 2007; docs/flow.md "Immersed boundaries") ----------------
 *
 * A body is a set of Lagrangian points on its surface. Each step, after the Adams–Bashforth
 * predictor u^, the force g on the points solves (L L*) g = (U_b - L u^) / dt by conjugate
 * gradients, L interpolating grid velocities to the points and L* spreading point forces to the
 * grid through a discrete delta; u~ = u^ + dt L* g then goes to the projection. Bodies move by a
 * prescribed translation: center(t) = center + amplitude sin(2 pi frequency t + phase) +
 * velocity t; they do not rotate. */

typedef enum {
    KEDR_FLOW_BODY_CIRCLE = 0, /* 2D: center, diameter */
    KEDR_FLOW_BODY_RECTANGLE,  /* 2D: center, size (sides along x, y) */
    KEDR_FLOW_BODY_SPHERE,     /* 3D: center, diameter */
    KEDR_FLOW_BODY_BOX,        /* 3D: center, size */
    KEDR_FLOW_BODY_CYLINDER,   /* 3D: center, diameter, axis, length (0: periodic, no caps) */
    KEDR_FLOW_BODY_POINTS      /* 2D or 3D: the points of a file (x y [z] a line) */
} kedr_flow_body_shape;

typedef enum {
    KEDR_FLOW_DELTA_PESKIN4 = 0, /* Peskin's 4-point kernel (support 4 cells an axis) */
    KEDR_FLOW_DELTA_ROMA3        /* Roma, Peskin & Berger's 3-point kernel (3 cells) */
} kedr_flow_delta;

#define KEDR_FLOW_MAX_BODIES 16
#define KEDR_FLOW_BODY_NAME_MAX 64

typedef struct {
    char name[KEDR_FLOW_BODY_NAME_MAX];
    kedr_flow_body_shape shape;
    double center[3];       /* at t = 0; the point moments are taken about (moves with it) */
    double diameter;        /* circle, sphere, cylinder */
    double size[3];         /* rectangle, box */
    int axis;               /* cylinder: 0 x, 1 y, 2 z */
    double length;          /* cylinder: along its axis; 0: the whole periodic axis */
    char file[KEDR_FLOW_PATH_MAX]; /* points: the file (as opened) */
    double volume;          /* the volume (area in 2D) the surface encloses */
    double spacing;         /* Lagrangian point spacing in cells (of the smallest h) */
    double amplitude[3], frequency, phase, velocity[3]; /* the prescribed motion (phase: rad) */
    double ref_velocity, ref_length, ref_area; /* force coefficients: F / (rho U^2 A / 2) */
} kedr_flow_body;

typedef struct {
    char path[KEDR_FLOW_PATH_MAX]; /* the case file */
    char name[KEDR_FLOW_NAME_MAX]; /* output file names: DIR/NAME.* */
    int dims;                      /* 2 or 3 */
    int n[3];                      /* cells (n[2] = 1 in 2D) */
    double length[3];              /* domain lengths (m); the box starts at the origin */
    double nu;                     /* kinematic viscosity (m^2/s) */
    double rho;                    /* density (kg/m^3); pressures are written in Pa */
    kedr_flow_bc bc[6];
    kedr_flow_init init;
    double init_velocity[3];
    double tg_amplitude;           /* Taylor–Green: velocity amplitude */
    double dt;                     /* > 0: fixed step; 0: from cfl */
    double cfl;                    /* fraction of the Adams–Bashforth 2 stability limit */
    int64_t steps;
    double end_time;               /* > 0: stop at this time (the last step shortened) */
    kedr_flow_poisson_opts poisson;/* n, h, periodic are set from the grid */
    /* immersed bodies */
    int nbodies;
    kedr_flow_body body[KEDR_FLOW_MAX_BODIES];
    kedr_flow_delta delta;
    double ibm_tol;                /* relative residual of the force system (CG) */
    int ibm_max_iter;
    /* outputs */
    char out_dir[KEDR_FLOW_PATH_MAX];
    int64_t stats_every, checkpoint_every;
    int64_t forces_every;          /* bodies: a row of DIR/NAME-BODY.csv every so many steps */
    int write_csv, write_vti, write_png, checkpoint;
} kedr_flow_case;

/* Reads a case file (keys: docs/flow.md); errors name FILE:LINE, section and key. */
kedr_status kedr_flow_case_load(const char *path, kedr_flow_case *c);
/* The same from text (name stands for the file in messages). */
kedr_status kedr_flow_case_parse(const char *text, const char *name, kedr_flow_case *c);
/* Checks a case filled in by hand or changed after loading (consistency of the boundaries). */
kedr_status kedr_flow_case_check(const kedr_flow_case *c);
/* The memory a case's state and pressure solver take (bytes, a close upper estimate). */
double kedr_flow_bytes(const kedr_flow_case *c);
/* The stable time step of the Adams–Bashforth 2 scheme for a velocity bound umax (per axis). */
double kedr_flow_stable_dt(const kedr_flow_case *c, const double umax[3]);

typedef struct kedr_flow kedr_flow;

typedef struct {
    int64_t step;
    double time, dt;
    double umax[3];           /* largest |u|, |v|, |w| on the grid */
    double cfl;               /* dt as a fraction of the stable step for umax */
    double divergence;        /* max |div u| h after the projection, over the largest |u| */
    double kinetic_energy;    /* 0.5 sum |u|^2 dV / volume */
    kedr_flow_poisson_info poisson; /* the last solve */
    int64_t poisson_iterations;     /* all solves so far */
    double seconds_step, seconds_poisson; /* wall time spent so far */
    int ibm_iterations;       /* the last step's force solve: most CG steps over components */
    double ibm_residual;      /* ... and its largest relative residual */
    double seconds_ibm;       /* wall time in the immersed-boundary forcing so far */
    /* over ranks, since kedr_flow_create: the wall time of the exchanges of device data
     * between ranks (velocity, pressure and Poisson halos, multigrid's coarse-level gathers,
     * the bodies' sums; part of seconds_step, waiting for the partners included) and their
     * number (this rank's; 0 on one rank). With KEDR_FLOW_PROF=1 in the environment each is
     * timed from a synchronised device; otherwise its time includes the device work queued
     * before it (one synchronisation fewer an exchange). */
    double seconds_halo;
    int64_t halo_exchanges;
} kedr_flow_stats;

kedr_status kedr_flow_create(kedr_ctx *ctx, const kedr_flow_case *c, kedr_flow **out);
/* Over the ranks of comm (NULL or one rank: kedr_flow_create): the grid is split into slabs
 * along its last axis (y in 2D, z in 3D), rank r taking the r-th, as even as the cells allow;
 * every rank calls every function below together (stats, steps, outputs). What runs over ranks
 * and what does not yet: docs/flow.md "Several ranks". */
struct kedr_comm;
kedr_status kedr_flow_create_on(kedr_ctx *ctx, struct kedr_comm *comm, const kedr_flow_case *c,
                                kedr_flow **out);
/* The number of ranks; this rank's slab: its first cell and cell count along the last axis. */
int kedr_flow_rank_slab(const kedr_flow *f, int *first, int *count);
void kedr_flow_destroy(kedr_flow *f);
/* One time step. KEDR_ERR_INVALID with a message when the pressure solve did not converge
 * (the state is that before the step; kedr_flow_get_stats tells the residual history) or when
 * the velocity became NaN or infinite (the state is then lost: restart from a checkpoint). */
kedr_status kedr_flow_step(kedr_flow *f);
void kedr_flow_get_stats(const kedr_flow *f, kedr_flow_stats *st);
/* Whether the last failed step failed in the pressure solve (1) or with NaN (2), or not (0). */
int kedr_flow_failure(const kedr_flow *f);

/* The bodies of the case and their state after the last step (before the first: zero forces).
 * force: on the body by the fluid (N; per unit depth in 2D): minus the spread force, plus the
 * inertia of the fluid the body encloses (rho V dU/dt, for moving bodies). moment: about the
 * body's moving center. cd, cl, cs: force x, y, z over rho U^2 A / 2 (A = the reference length
 * in 2D). */
typedef struct {
    double center[3], velocity[3];
    double force[3], moment[3];
    double cd, cl, cs;
    int points;               /* Lagrangian points */
} kedr_flow_body_state;
int kedr_flow_bodies(const kedr_flow *f);
kedr_status kedr_flow_body_get(const kedr_flow *f, int body, kedr_flow_body_state *st);
/* The Lagrangian points of a body at t = 0 (host, 3 doubles a point; count points of
 * kedr_flow_body_state): for plots and tests. */
kedr_status kedr_flow_body_points(const kedr_flow *f, int body, double *xyz);

/* Cell-centred fields on the host: velocity interpolated to cell centres, pressure (Pa),
 * vorticity (z component in 2D, magnitude in 3D), n[0] x n[1] x n[2] each, x fastest. */
typedef struct {
    int dims, n[3];
    double h[3];
    double time;
    int64_t step;
    double *u, *v, *w, *p, *vorticity; /* w is NULL in 2D */
} kedr_flow_fields;
kedr_status kedr_flow_get_fields(const kedr_flow *f, kedr_flow_fields *out);
void kedr_flow_fields_free(kedr_flow_fields *fl);
/* Over ranks: every rank's slab of the fields gathered on rank root, whole-grid fields there
 * (n the whole grid's); the other ranks get their fields' arrays NULL. One rank: get_fields. */
kedr_status kedr_flow_gather_fields(const kedr_flow *f, int root, kedr_flow_fields *fl);

/* Staggered velocities on the host: u at x = i h (i = 0..nx), y = (j + 1/2) h ..., the layout
 * of kedr_flow_velocity_index; for validation against exact solutions. Over ranks: this
 * rank's slab (n[last] its own cells, faces 1 .. n + 1 along it). */
kedr_status kedr_flow_get_staggered(const kedr_flow *f, int component, double *host);
kedr_status kedr_flow_set_staggered(kedr_flow *f, int component, const double *host);
/* Elements of a staggered component: (n[a] + (a == component)) over the axes a. */
size_t kedr_flow_staggered_count(const kedr_flow *f, int component);

kedr_status kedr_flow_write_vti(const kedr_flow_fields *fl, const char *path);
kedr_status kedr_flow_write_csv(const kedr_flow_fields *fl, const char *path);
/* DIR/NAME-{speed,pressure,vorticity}.png (2D; 3D: the mid-plane z = Lz/2). */
kedr_status kedr_flow_write_png(const kedr_flow_fields *fl, const char *dir, const char *name);
/* Velocity profiles through the centre: u(y) at x = Lx/2 and v(x) at y = Ly/2 (CSV). */
/* (Over ranks: every rank calls it; the velocities are gathered and rank 0 writes.) */
kedr_status kedr_flow_write_profiles(const kedr_flow *f, const char *path);

/* Checkpoints: the state (velocities, pressure, the previous step's right-hand sides, step,
 * time) with the case's grid, written whole (FILE.tmp, then renamed). */
kedr_status kedr_flow_write_checkpoint(const kedr_flow *f, const char *path);
kedr_status kedr_flow_restart(kedr_ctx *ctx, const kedr_flow_case *c, const char *path,
                              kedr_flow **out);
/* Over ranks: each rank its own checkpoint (of its slab), the same rank count as written. */
kedr_status kedr_flow_restart_on(kedr_ctx *ctx, struct kedr_comm *comm, const kedr_flow_case *c,
                                 const char *path, kedr_flow **out);

#ifdef __cplusplus
}
#endif
#endif
