/* kedr adi: 3D viscous flow of Boreskov et al. (2015), §12.1, by alternating-direction implicit
 * sweeps: momentum with the temperature as pressure, and the temperature equation with viscous
 * dissipation, split into 1D implicit problems along x, y and z, each solved on every segment of
 * fluid nodes of every grid line by the Thomas algorithm, with global and local iterations for
 * the nonlinear coefficients (docs/adi.md). Fields on the host are arrays of nx * ny * nz
 * doubles, node (i, j, k) at i + nx * (j + ny * k) (x fastest, as VTK reads them). */
#ifndef KEDR_ADI_H
#define KEDR_ADI_H

#include "kedr/comm.h"
#include "kedr/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The faces of the box, in this order. */
enum { KEDR_ADI_X_LO = 0, KEDR_ADI_X_HI, KEDR_ADI_Y_LO, KEDR_ADI_Y_HI, KEDR_ADI_Z_LO, KEDR_ADI_Z_HI };
typedef enum { KEDR_ADI_WALL = 0, KEDR_ADI_INFLOW = 1, KEDR_ADI_FREE = 2 } kedr_adi_face_kind;

typedef struct {
    kedr_adi_face_kind kind;
    double velocity[3];  /* wall (moving wall; 0: no slip) and inflow */
    double temperature;  /* wall and inflow, unless adiabatic */
    int adiabatic;       /* wall: zero normal gradient of the temperature */
} kedr_adi_face;

typedef struct {
    char name[128];    /* outputs are DIR/NAME.* */
    char out_dir[512];
    int nx, ny, nz;    /* nodes, at least 3 each */
    double h;          /* node spacing (dimensionless) */
    double re, pr, gamma;
    double force[3];   /* body force (a mean pressure gradient); 0 by default */
    double init_velocity[3], init_temperature;
    kedr_adi_face face[6];
    int wall_adiabatic;       /* solid nodes: adiabatic, or at wall_temperature */
    double wall_temperature;
    unsigned char *solid;     /* NULL (no solid node) or nx*ny*nz flags, x fastest; owned */
    char mask_path[512];      /* where solid came from ("" when built in code) */
    double dt;
    int64_t steps;
    int single;               /* precision = single */
    int global_iterations, local_iterations;
    double continuity_tolerance; /* rms of div u at which the global iterations stop */
    double change_tolerance;     /* ... or when the velocity changes less than this */
    int central;                 /* advection = central (else upwind) */
    int z_transpose;             /* -1 auto (cuda: yes, cpu: no), 0 direct Z sweep, 1 transposed */
    int x_partitioned;           /* [solver] x_sweep: 0 auto (Thomas along whole lines on one
                                  * rank, partitioned over several), 1 partitioned on one too,
                                  * 2 partitioned through kedr_tridiag_part_reduce/_complete */
    int x_interface;             /* [solver] x_interface, over several ranks: how the X sweep's
                                  * interface systems are solved: 0 auto (gather where every
                                  * pair of ranks copies GPU to GPU, else owner), 1 owner (each
                                  * rank solves its share of the lines on the host, two rounds of
                                  * messages), 2 gather (every rank's rows to every rank, each
                                  * solving all lines for its own unknowns, on its back end: one
                                  * round) */
    double velocity_limit;       /* |u| beyond this is divergence */
    int64_t stats_every, checkpoint_every;
    int checkpoint, write_vti, write_png, write_csv;
    int slice;                   /* k of the PNG's x-y plane; -1: nz / 2 */
} kedr_adi_case;

/* Defaults: the public box_pipe physics (Re 200, Pr 0.72, gamma 1.4, h 0.02, 4 global and 2
 * local iterations), every face a no-slip adiabatic wall, no solid nodes. */
void kedr_adi_case_default(kedr_adi_case *c);
/* Reads a case file (keys: docs/adi.md); errors name FILE:LINE and the key. A mask file named
 * by [grid] mask is read and checked as well (kedr_adi_case_check). Free with
 * kedr_adi_case_free. */
kedr_status kedr_adi_case_load(const char *path, kedr_adi_case *c);
void kedr_adi_case_free(kedr_adi_case *c);
/* Ranges and the mask: at least one fluid node off the faces, no segment of one node. */
kedr_status kedr_adi_case_check(const kedr_adi_case *c);
/* Reads a depth map (docs/adi.md, "Mask files") into c->solid for c's grid. */
kedr_status kedr_adi_read_depth(kedr_adi_case *c, const char *path);
/* Bytes the solver takes on a back end for c's grid (device memory for cuda), on one rank; and
 * on the largest rank of nranks, which hold about nx / nranks x planes each. */
double kedr_adi_bytes(const kedr_adi_case *c, kedr_backend b);
double kedr_adi_rank_bytes(const kedr_adi_case *c, kedr_backend b, int nranks);
/* Ranks the grid can be split between: each holds at least two x planes, nx / 2 at most. */
int kedr_adi_max_ranks(const kedr_adi_case *c);

typedef struct {
    int64_t step;
    double time;
    int global_iterations;   /* done in the last step */
    double change;           /* max |u^(g) - u^(g-1)| of the last global iteration */
    double continuity_rms;   /* rms of the central div u over the unknowns */
    double continuity_max;
    double max_speed;
    double kinetic_energy;   /* sum of |u|^2 / 2 h^3 over the unknowns */
} kedr_adi_stats;

typedef struct kedr_adi kedr_adi;

/* Creates a solver with the case's initial fields. Copies what it needs of c. */
kedr_status kedr_adi_create(kedr_ctx *ctx, const kedr_adi_case *c, kedr_adi **s);
/* The same over the ranks of comm (NULL or one rank: kedr_adi_create), called by every rank
 * with the same case: the grid is split along x into slabs of contiguous planes, one a rank
 * (kedr_adi_max_ranks); the X sweep solves each line's parts on their ranks and the interface
 * system between them (kedr_tridiag_part_reduce / _complete); the residuals are the whole
 * grid's. Every function below is then collective (every rank calls it, in the same order),
 * except kedr_adi_get_stats, kedr_adi_history, kedr_adi_slab and kedr_adi_get_timing; an error
 * of creation, restart, fields or outputs on one rank is every rank's (kedr_comm_agree). */
kedr_status kedr_adi_create_on(kedr_ctx *ctx, kedr_comm *comm, const kedr_adi_case *c,
                               kedr_adi **s);
void kedr_adi_destroy(kedr_adi *s);
/* One time step. A step whose fields become non-finite or whose speed passes velocity_limit is
 * undone (the fields stay those of the last good step) and returns KEDR_ERR_INVALID saying so;
 * kedr_adi_diverged then says 1 (on every rank: the residuals are reduced over them). */
kedr_status kedr_adi_step(kedr_adi *s);
int kedr_adi_diverged(const kedr_adi *s);
void kedr_adi_get_stats(const kedr_adi *s, kedr_adi_stats *st);
/* The statistics of every step run (also those before a restart): *n of them. */
const kedr_adi_stats *kedr_adi_history(const kedr_adi *s, size_t *n);
/* Host fields (x fastest, nx*ny*nz each; any may be NULL). get: solid nodes are NaN, boundary
 * nodes hold their condition's values. set: the values of the unknowns (others are ignored).
 * Over several ranks, get gathers the fields on rank 0 (rank 0's NULLs say which; the other
 * ranks' arrays are not touched), and set takes each rank's planes from its own arrays (pass
 * the whole fields on every rank). */
kedr_status kedr_adi_get_fields(kedr_adi *s, double *u, double *v, double *w, double *t);
kedr_status kedr_adi_set_fields(kedr_adi *s, const double *u, const double *v, const double *w,
                                const double *t);

/* Outputs, each written whole (kedr_file_begin): VTK ImageData point data, the per-step
 * statistics as CSV, a PNG map of the speed on the x-y plane k = slice. Over several ranks,
 * rank 0 writes them (the fields gathered there); the others write nothing. */
kedr_status kedr_adi_write_vti(kedr_adi *s, const char *path);
kedr_status kedr_adi_write_csv(const kedr_adi *s, const char *path);
kedr_status kedr_adi_write_png(kedr_adi *s, const char *path);
/* Checkpoint: the fields at the last good step, the history, and the case's grid and precision,
 * with a checksum. restart checks that they match c. Over several ranks each rank writes its own
 * file (its planes; pass each rank its own path: kedr adi uses NAME.rankRofN.chk). A restart on
 * as many ranks reads each rank's own file (pass it); on another number (one included), pass
 * any file of the set, named NAME.rankRofM.chk as written (or the one file of one rank): each
 * rank reads the files that hold its planes. */
kedr_status kedr_adi_write_checkpoint(kedr_adi *s, const char *path);
kedr_status kedr_adi_restart(kedr_ctx *ctx, const kedr_adi_case *c, const char *path,
                             kedr_adi **s);
kedr_status kedr_adi_restart_on(kedr_ctx *ctx, kedr_comm *comm, const kedr_adi_case *c,
                                const char *path, kedr_adi **s);
/* This rank's x planes [*lo, *hi) and the number of ranks. */
int kedr_adi_slab(const kedr_adi *s, int *lo, int *hi);
/* This rank's wall time so far in the halo exchanges and in the interface systems of the
 * partitioned X sweep (the interface rows to the host, the messages, their solve, the unknowns
 * back), each timed from a synchronized back end. */
void kedr_adi_get_timing(const kedr_adi *s, double *halo_seconds, double *interface_seconds);

/* For the benchmark: one sweep of the four fields along axis (0 x, 1 y, 2 z) from the current
 * fields into a work state; for z, transposed = 1 includes the transposes there and back.
 * kedr_adi_transposes runs the transposes of a transposed Z step alone (two states there, one
 * back). */
kedr_status kedr_adi_sweep_once(kedr_adi *s, int axis, int transposed);
kedr_status kedr_adi_transposes(kedr_adi *s);

#ifdef __cplusplus
}
#endif
#endif
