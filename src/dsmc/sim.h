/* Private: the simulator state shared by sim.c (cpu and dispatch) and output.c, and the cuda back
 * end's entry points (sim.cu). */
#ifndef DSMC_SIM_H
#define DSMC_SIM_H

#include "dsmc_kernels.h"
#include "geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A box around every body wall (2D) or solid (3D), widened far beyond the rounding of the
 * crossing tests: a straight path whose box misses it cannot hit a wall. Empty (lo > hi)
 * without bodies; 2D leaves z unbounded. The moves take molecules whose step stays inside the
 * domain and misses this box straight through, without the event search (sim.c: dsmc_far_box). */
typedef struct {
    double lo[3], hi[3];
} dsmc_box;

/* Particle arrays in the context's memory (structure of arrays); z only in 3D (NULL in 2D). */
typedef struct {
    double *x, *y, *z, *vx, *vy, *vz;
    float *erot; /* rotational energy, J: single precision keeps a particle within 64 bytes */
    uint8_t *sp;
} dsmc_particles;

/* Slot `to` becomes a copy of particle `from`, with its cell key (the copies of radial
 * weighting, made after the move). */
DSMC_HD void dsmc_copy_particle(dsmc_particles a, uint32_t *cell, size_t from, size_t to)
{
    a.x[to] = a.x[from];
    a.y[to] = a.y[from];
    a.vx[to] = a.vx[from];
    a.vy[to] = a.vy[from];
    a.vz[to] = a.vz[from];
    a.erot[to] = a.erot[from];
    a.sp[to] = a.sp[from];
    cell[to] = cell[from];
}

/* Every per-particle array, as (address of the pointer, element size, name): checkpoints
 * serialise the particles through this table, so a new particle array is one line here. */
typedef struct {
    void **ptr;
    size_t elem;
    const char *name;
} dsmc_field;
#define DSMC_MAX_FIELDS 16

#define DSMC_FIELD(arr, label) \
    (f[n].ptr = (void **)&(arr), f[n].elem = sizeof *(arr), f[n].name = (label), n++)
static inline int dsmc_particle_fields(dsmc_particles *a, int dims, dsmc_field f[DSMC_MAX_FIELDS])
{
    int n = 0;
    DSMC_FIELD(a->x, "x");
    DSMC_FIELD(a->y, "y");
    if (dims == 3)
        DSMC_FIELD(a->z, "z");
    DSMC_FIELD(a->vx, "vx");
    DSMC_FIELD(a->vy, "vy");
    DSMC_FIELD(a->vz, "vz");
    DSMC_FIELD(a->erot, "erot");
    DSMC_FIELD(a->sp, "species");
    return n;
}
#undef DSMC_FIELD

/* Context memory per particle slot: 5 doubles, the rotational energy, species, the gather spares
 * (8 + 1), cell key and permutation. The counting sort works in the cell keys and the double
 * spare, plus sort_scratch (about an eighth of a byte per slot on cuda). The rotational energy is
 * gathered into the cell-key array, which is free once the sort is done. 3D adds the z
 * position. */
#define DSMC_BYTES_PER_PARTICLE (5 * 8 + 4 + 1 + 8 + 1 + 4 + 4)
#define DSMC_BYTES_PER_PARTICLE_3D (DSMC_BYTES_PER_PARTICLE + 8)

struct kedr_dsmc {
    kedr_ctx *ctx;
    kedr_dsmc_case c;
    dsmc_params p;
    size_t ncells;
    size_t n, cap;          /* particles and slots */
    dsmc_particles a;
    void *spare, *spare8;   /* gather targets, swapped with the field gathered */
    uint32_t *cell, *perm;  /* per particle: cell key after the move; sort permutation */
    void *sort_scratch;     /* the counting sort's look-back words (kedr_counting_sort_in) */
    size_t sort_scratch_bytes;
    uint32_t *starts, *counts; /* per cell, after indexing */
    float *sgmax;           /* per cell (sigma g)_max, kept across steps (dsmc_float_up) */
    double *acc;            /* DSMC_NACC x ncells sample sums; NULL until first needed */
    uint64_t *counters;     /* cuda: collisions, candidates, separations / mfp (DSMC_SEP_UNIT) */
    uint32_t *offsets;      /* generation groups, context memory */
    size_t offsets_bytes;
    uint32_t *host_offsets;
    size_t host_offsets_len;
    double flux[6][KEDR_DSMC_MAX_SPECIES]; /* inflow number flux per side and species */
    int sorted, located;
    int mid_step; /* a step failed after changing the particles: no exact checkpoint */
    int64_t step, samples;
    double time;
    uint64_t collisions, candidates, generated, total_collisions, total_generated;
    double sep_mfp, total_sep_mfp; /* sums of collided pairs' separation / mean free path */
    /* [sample] start = auto: the particle counts of the current window and the last mean */
    double steady_sum, steady_prev;
    int64_t steady_count;
    double stage_seconds[KEDR_DSMC_NSTAGES];
    dsmc_geometry geo;      /* bodies, cut cells, surface sums (geometry.c) */
};

/* Makes room for at least need particles, keeping the first sim->n (sim.c). */
kedr_status dsmc_reserve(struct kedr_dsmc *sim, size_t need);
/* Allocates and zeroes the sample sums on first use: a run that never samples (a benchmark)
 * keeps that memory free (sim.c). */
kedr_status dsmc_sample_sums(struct kedr_dsmc *sim);

#ifdef KEDR_HAVE_CUDA
kedr_status dsmc_generate_cuda(kedr_ctx *ctx, const dsmc_params *p, int fill,
                               const uint32_t *offsets, uint32_t ngroups, size_t base, size_t count,
                               dsmc_particles a);
/* Axisymmetric cases with radial weighting also write each particle's extra copies to copies[i]
 * and add their sum to counters[0] (zeroed by the caller). Planar and 3D runs use copies (n
 * words) and counters[0] as scratch: the molecules that need the event search. */
kedr_status dsmc_move_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t n, size_t n_old,
                           dsmc_particles a, uint32_t *cell, uint32_t *copies,
                           uint64_t *counters, dsmc_box far);
/* The copies of radial weighting (clone_cpu in sim.c). */
kedr_status dsmc_clone_cuda(kedr_ctx *ctx, size_t n, const uint32_t *incl, dsmc_particles a,
                            uint32_t *cell);
kedr_status dsmc_locate_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t n, dsmc_particles a,
                             uint32_t *cell);
kedr_status dsmc_gather_cuda(kedr_ctx *ctx, const uint32_t *perm, size_t n, const void *src,
                             void *dst, size_t elem);
/* counters[0] += collisions, counters[1] += candidates, counters[2] += the sum of the collided
 * pairs' separations over the mean free path in units of 1 / DSMC_SEP_UNIT (device memory,
 * zeroed by the caller). */
kedr_status dsmc_collide_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t ncells,
                              const uint32_t *starts, const uint32_t *counts, dsmc_particles a,
                              uint32_t *last, float *sgmax, uint64_t *counters);
kedr_status dsmc_sample_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t ncells,
                             const uint32_t *starts, const uint32_t *counts, dsmc_particles a,
                             double *acc);
#endif

#ifdef __cplusplus
}
#endif
#endif
