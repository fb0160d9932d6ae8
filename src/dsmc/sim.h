/* Private: the simulator state shared by sim.c (state and the step's dispatch), access.c and
 * output.c, and the entry points of the cpu back end (sim_cpu.c) and the cuda one (sim.cu). */
#ifndef DSMC_SIM_H
#define DSMC_SIM_H

#include "dsmc_kernels.h"
#include "kedr/comm.h"
#include "geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A box around every body wall (2D) or solid (3D), widened far beyond the rounding of the
 * crossing tests: a straight path whose box misses it cannot hit a wall. Empty (lo > hi)
 * without bodies; 2D leaves z unbounded. The moves take molecules whose step stays inside the
 * domain and misses this box straight through, without the event search (sim_cpu.c: dsmc_far_box). */
typedef struct {
    double lo[3], hi[3];
} dsmc_box;

/* Particle arrays in the context's memory (structure of arrays); z only in 3D (NULL in 2D). A
 * gas whose species have no rotational degrees of freedom keeps no rotational energies (erot
 * NULL), a gas of one species no species bytes (sp NULL), a gas that does not vibrate no
 * vibrational levels (vib NULL): every molecule reads 0 there. */
typedef struct {
    double *x, *y, *z, *vx, *vy, *vz;
    float *erot; /* rotational energy, J: single precision keeps a particle within 64 bytes */
    uint8_t *sp;
    uint8_t *vib; /* vibrational level (dsmc_kernels.h: DSMC_VIB_MAX) */
} dsmc_particles;

/* Which of the optional arrays a run keeps (the cpu and cuda back ends alike). */
static inline int dsmc_keeps_erot(const dsmc_params *p)
{
    for (int k = 0; k < p->nspecies; k++)
        if (p->rot_dof[k])
            return 1;
    return 0;
}
static inline int dsmc_keeps_species(const dsmc_params *p) { return p->nspecies > 1; }
static inline int dsmc_keeps_vib(const dsmc_params *p) { return p->vib; }

DSMC_HD float dsmc_erot_of(dsmc_particles a, size_t i) { return a.erot ? a.erot[i] : 0.0f; }
DSMC_HD int dsmc_species_of(dsmc_particles a, size_t i) { return a.sp ? a.sp[i] : 0; }
DSMC_HD uint8_t dsmc_vib_of(dsmc_particles a, size_t i) { return a.vib ? a.vib[i] : 0; }

/* New molecule e of generation group g (the initial fill or this step's inflow) into slot i. */
DSMC_HD void dsmc_generate_slot(const dsmc_params *p, int three, int fill, uint32_t g, uint64_t e,
                                dsmc_particles a, size_t i)
{
    uint8_t k;
    if (three && fill)
        dsmc_fill_one3(p, g, e, &a.x[i], &a.y[i], &a.z[i], &a.vx[i], &a.vy[i], &a.vz[i], &k);
    else if (three)
        dsmc_inflow_one3(p, g, e, &a.x[i], &a.y[i], &a.z[i], &a.vx[i], &a.vy[i], &a.vz[i], &k);
    else if (fill)
        dsmc_fill_one(p, g, e, &a.x[i], &a.y[i], &a.vx[i], &a.vy[i], &a.vz[i], &k);
    else
        dsmc_inflow_one(p, g, e, &a.x[i], &a.y[i], &a.vx[i], &a.vy[i], &a.vz[i], &k);
    if (a.sp)
        a.sp[i] = k;
    if (a.erot)
        a.erot[i] = dsmc_erot_new(p, fill, g, e, k);
    if (a.vib)
        a.vib[i] = dsmc_vib_new(p, fill, g, e, k);
}

/* Particle i of a planar (three = 0) or 3D run through the event search (dsmc_move_one,
 * dsmc_move_one3): its new cell, or DSMC_DROP. */
DSMC_HD uint32_t dsmc_move_slot(const dsmc_params *p, int three, dsmc_particles a, size_t i,
                                int fresh)
{
    float e = dsmc_erot_of(a, i);
    uint8_t v = dsmc_vib_of(a, i);
    int k = dsmc_species_of(a, i);
    uint32_t c = three ? dsmc_move_one3(p, i, fresh, &a.x[i], &a.y[i], &a.z[i], &a.vx[i],
                                        &a.vy[i], &a.vz[i], &e, a.vib ? &v : NULL, k)
                       : dsmc_move_one(p, i, fresh, &a.x[i], &a.y[i], &a.vx[i], &a.vy[i],
                                       &a.vz[i], &e, a.vib ? &v : NULL, k);
    if (a.erot)
        a.erot[i] = e;
    if (a.vib)
        a.vib[i] = v;
    return c;
}

/* Particle i of an axisymmetric run (dsmc_move_axi), its extra copies in *copies. */
DSMC_HD uint32_t dsmc_move_slot_axi(const dsmc_params *p, dsmc_particles a, size_t i, int fresh,
                                    uint32_t *copies)
{
    float e = dsmc_erot_of(a, i);
    uint8_t v = dsmc_vib_of(a, i);
    uint32_t c = dsmc_move_axi(p, i, fresh, &a.x[i], &a.y[i], &a.vx[i], &a.vy[i], &a.vz[i], &e,
                               a.vib ? &v : NULL, dsmc_species_of(a, i), copies);
    if (a.erot)
        a.erot[i] = e;
    if (a.vib)
        a.vib[i] = v;
    return c;
}

/* Slot `to` becomes a copy of particle `from`, with its cell key (the copies of radial
 * weighting, made after the move). */
DSMC_HD void dsmc_copy_particle(dsmc_particles a, uint32_t *cell, size_t from, size_t to)
{
    a.x[to] = a.x[from];
    a.y[to] = a.y[from];
    a.vx[to] = a.vx[from];
    a.vy[to] = a.vy[from];
    a.vz[to] = a.vz[from];
    if (a.erot)
        a.erot[to] = a.erot[from];
    if (a.sp)
        a.sp[to] = a.sp[from];
    if (a.vib)
        a.vib[to] = a.vib[from];
    cell[to] = cell[from];
}

/* Every per-particle array, as (address of the pointer, element size, name): the slots'
 * allocation and regrowth, the sort's gathers, checkpoints and the exchange between ranks go
 * through this table, so a new particle array is one line here (and its checks in checkpoint.c:
 * array_of). */
typedef struct {
    void **ptr;
    size_t elem;
    const char *name;
} dsmc_field;

/* Below this many items a cpu loop runs on one thread: starting a team costs more than it
 * saves. */
#define DSMC_OMP_MIN 16384

#define DSMC_MAX_FIELDS 16

/* The doubles come first, x, y, (z,) vx, vy, vz: the cpu's gather moves those together and the
 * rest through this table (sim_cpu.c: gather_range). */
#define DSMC_FIELD(arr, label) \
    (f[n].ptr = (void **)&(arr), f[n].elem = sizeof *(arr), f[n].name = (label), n++)
static inline int dsmc_particle_fields(dsmc_particles *a, const dsmc_params *p,
                                       dsmc_field f[DSMC_MAX_FIELDS])
{
    int n = 0;
    DSMC_FIELD(a->x, "x");
    DSMC_FIELD(a->y, "y");
    if (p->dims == 3)
        DSMC_FIELD(a->z, "z");
    DSMC_FIELD(a->vx, "vx");
    DSMC_FIELD(a->vy, "vy");
    DSMC_FIELD(a->vz, "vz");
    if (dsmc_keeps_erot(p))
        DSMC_FIELD(a->erot, "erot");
    if (dsmc_keeps_species(p))
        DSMC_FIELD(a->sp, "species");
    if (dsmc_keeps_vib(p))
        DSMC_FIELD(a->vib, "vib");
    return n;
}
#undef DSMC_FIELD

/* The bytes of one particle's arrays (dsmc_particle_fields): the doubles (x, y, vx, vy, vz; z
 * in 3D), and the rotational energy, the species and the vibrational level where the gas needs
 * them. */
static inline size_t dsmc_particle_bytes(const dsmc_params *p)
{
    dsmc_particles a;
    dsmc_field f[DSMC_MAX_FIELDS];
    int nf = dsmc_particle_fields(&a, p, f);
    size_t bytes = 0;
    for (int k = 0; k < nf; k++)
        bytes += f[k].elem;
    return bytes;
}

/* Context memory per particle slot: the particle's arrays, one 8-byte spare and the sort
 * permutation. While the spare is idle it holds the cell keys in its first half and the counting
 * sort's work in its second. On cuda, after the sort, it is the gathers' target, swapped with
 * each double array in turn, and the rotational energies and species are gathered into it and
 * copied back; the sort's look-back words (sort_scratch) add about an eighth of a byte per slot.
 * The cpu keeps the particle arrays twice (kedr_dsmc.back) and gathers from one set into the
 * other. */
static inline size_t dsmc_slot_bytes(const dsmc_params *p, int cpu)
{
    return dsmc_particle_bytes(p) * (cpu ? 2 : 1) + 8 + 4;
}

/* Context memory a cell of the rank's per-cell arrays takes: its range (start, count), its
 * (sigma g)max and, once sampling has begun (sums), its sample sums. */
static inline size_t dsmc_cell_slot_bytes(const dsmc_params *p, int sums)
{
    return 4 + 4 + sizeof(float) + (sums ? 8 * (size_t)dsmc_nacc(p) : 0);
}

/* On cuda, cells of at least this many molecules collide a warp each (sim.cu:
 * k_collide_crowded). From 32: the seed cases' collisions take 3.3 ms a step instead of 12.1
 * (test 2) and 0.18 instead of 0.56 (test 1), and the benchmark box, whose cells hold 10 on
 * average, keeps its time; from 16 the box's collisions took 1.6 times as long (H100,
 * 2026-11-25, docs/performance.md). */
#define DSMC_CROWDED_MIN 32

/* [sample] start = auto: the windows of the steady-state test (sim.c: steady_check) for its
 * two observables, the particle count and the particles' total energy. The current window keeps
 * the sums of x and of the squared differences of successive x (its noise, blind to a smooth
 * trend); the last DSMC_STEADY_WINDOWS finished windows keep their mean and standard error,
 * newest last. */
#define DSMC_STEADY_WINDOWS 4
typedef struct {
    int64_t count, windows; /* steps in the current window; windows finished */
    double sum[2], sumd2[2], last[2];
    double mean[DSMC_STEADY_WINDOWS][2], se[DSMC_STEADY_WINDOWS][2];
} dsmc_steady;

/* The grid's cells split between ranks (exchange.c), as a tree of cuts: each node cuts its box
 * of cells at one cell plane of one axis (cells with index < cut on that axis go to child lo,
 * the others to child hi); a child >= 0 is another node, a child < 0 the leaf of rank -1 -
 * child. Node 0 is the root, whose box is the grid; nranks - 1 nodes. Rank r owns the box
 * [lo[0], hi[0]) x [lo[1], hi[1]) x [lo[2], hi[2]) of cell indices. Recursive coordinate
 * bisection (KEDR_DSMC_SPLIT_RCB) cuts any axis; the columns along x (KEDR_DSMC_SPLIT_X) are
 * the same kind of tree with every cut along x. */
typedef struct {
    int32_t axis, cut, lo, hi;
} dsmc_cut;
typedef struct {
    int32_t lo[3], hi[3];
} dsmc_cellbox;
typedef struct {
    int nranks, kind; /* kind: kedr_dsmc_split, how it was made */
    int n[3];         /* the grid's cells along x, y, z (z: 1 in 2D) */
    dsmc_cut *cut;    /* nranks - 1 (NULL on one rank) */
    dsmc_cellbox *box; /* nranks */
} dsmc_decomp;

/* The owner of a cell by walking the tree (at most nranks - 1 levels; a tree of RCB has about
 * log2 nranks): cut in host or device memory, as the caller walks it. */
typedef struct {
    const dsmc_cut *cut;
    int32_t nranks;
    uint32_t nx, ny;
} dsmc_owners;
DSMC_HD int dsmc_owner_of(dsmc_owners o, uint32_t g)
{
    if (o.nranks <= 1)
        return 0;
    uint32_t i = g % o.nx, t = g / o.nx, j = t % o.ny, k = t / o.ny;
    int32_t node = 0;
    for (;;) {
        dsmc_cut c = o.cut[node];
        uint32_t v = c.axis == 0 ? i : c.axis == 1 ? j : k;
        node = v < (uint32_t)c.cut ? c.lo : c.hi;
        if (node < 0)
            return -1 - node;
    }
}

/* A rank's own cells (its box of decomp) in a numbering of their own: the box x0 .. x0 + wx - 1,
 * y0 .. y0 + wy - 1, z0 .. z0 + wz - 1 of the grid's nx x ny x nz cells, local cell (i - x0) +
 * wx ((j - y0) + wy (k - z0)) for global cell i + nx (j + ny k). Local and global order agree
 * on a rank's cells, so indexing by local cell puts the particles in the order indexing by
 * global cell would. On one rank (all: the box is the grid) both numberings are the same.
 * Every per-cell array (starts, counts, the (sigma g)max, the sample sums and the window's
 * mark) is local, sized for the rank's own cells; the random-number keys stay by global cell
 * (dsmc_cell_global), and checkpoints and fields see the arrays by global cell
 * (dsmc_cells_to_grid). */
typedef struct {
    uint32_t x0, y0, z0, wx, wy, wz, nx, ny;
    uint32_t all; /* 1: the box is the whole grid */
} dsmc_cellmap;

DSMC_HD uint32_t dsmc_cell_global(dsmc_cellmap m, uint32_t c)
{
    if (m.all)
        return c;
    uint32_t i = c % m.wx, t = c / m.wx;
    return m.x0 + i + m.nx * (m.y0 + t % m.wy + m.ny * (m.z0 + t / m.wy));
}
/* A particle's cell key in the rank's terms, from the grid's cell g: the local cell of one of
 * the rank's own cells; ncells + g for a cell of another rank's box (a leaver, which the
 * exchange sends away and the indexing would drop); g itself for g >= ncells (DSMC_DROP: left
 * the domain). On one rank (all) the grid's cell. Needs 2 ncells <= 2^32 - 1
 * (kedr_dsmc_create_on refuses larger grids over ranks). */
DSMC_HD uint32_t dsmc_key_of(dsmc_cellmap m, uint32_t g, uint32_t ncells)
{
    if (m.all || g >= ncells)
        return g;
    uint32_t i = g % m.nx - m.x0, t = g / m.nx, j = t % m.ny - m.y0, k = t / m.ny - m.z0;
    return i < m.wx && j < m.wy && k < m.wz ? i + m.wx * (j + m.wy * k) : ncells + g;
}
/* 1 for the key of a leaver (dsmc_key_of); its cell in the grid is key - ncells. */
DSMC_HD int dsmc_key_leaves(uint32_t key, uint32_t ncells)
{
    return key >= ncells && key - ncells < ncells;
}

struct kedr_dsmc {
    kedr_ctx *ctx;
    /* Over several ranks (kedr_dsmc_create_on): this rank fills and feeds only the cells of its
     * box of cells, and the exchange stage sends it the particles that enter them. comm NULL or
     * nranks 1: the whole grid is this rank's. */
    kedr_comm *comm;
    int rank, nranks;
    dsmc_decomp decomp;
    /* The rank's own cells (its box of decomp; the whole grid on one rank) and their
     * number: the indexing, collisions and sampling see these cells only (dsmc_cells_mine). */
    dsmc_cellmap cmap;
    size_t nlocal;
    /* 1 while the cell keys are in the rank's terms (dsmc_key_of: the cuda move and the
     * exchange write them so); 0: the grid's cells, as the locate and the cpu move write them. */
    int keys_local;
    /* Tests: every rank indexes, collides and samples over the whole grid (the other ranks'
     * cells empty), as before ranks had cells of their own: set, then dsmc_cells_mine. */
    int whole_grid;
    /* cuda over ranks: the move counted the leavers of each of the exchange's selection tiles
     * (exchange.h: DSMC_XTILE) into xbuf for these xtiles_n particles (0: it did not), so the
     * selection skips its counting pass; xcheck (tests) makes the exchange count them again and
     * fail on a difference. */
    size_t xtiles_n;
    int xcheck;
    /* Tests, set before the first exchange: xhost sends the exchange's records through the host
     * even where they could go GPU to GPU (exchange.h: dsmc_exchange_path); xdev_force sends
     * them through the registered buffers of the GPU-to-GPU path wherever they are (on the cpu,
     * or GPUs that do not reach each other, those copy through the host); xdev_first, when not
     * 0, is the first size in bytes of that buffer (so that it must grow). */
    int xhost, xdev_force;
    size_t xdev_first;
    dsmc_cut *xowner; /* cuda: decomp.cut in device memory (the owners' tree) */
    void *xbuf;       /* cuda: the exchange's scratch (selection, records, moves), grown */
    size_t xbuf_bytes;
    struct dsmc_xstage *xstage; /* the exchange's host staging buffers, kept (exchange.c) */
    kedr_dsmc_case c;
    dsmc_params p;
    size_t ncells;
    size_t n, cap;          /* particles and slots */
    dsmc_particles a;
    /* cpu: a second set of the particle arrays. The indexing only sorts; the collisions then
     * read each cell's molecules from a through perm, write them in cell order here and collide
     * them there, and the sets swap (gather_pending meanwhile: a is not yet in cell order). */
    dsmc_particles back;
    int gather_pending;
    void *slot_block;       /* cpu: the one allocation that holds a, back, spare and perm */
    void *spare;            /* 8 bytes a slot: the cell keys and sort work, then the gathers' target */
    uint32_t *perm;         /* per particle: the sort permutation */
    void *sort_scratch;     /* the counting sort's look-back words (kedr_counting_sort_in) */
    size_t sort_scratch_bytes;
    /* The per-cell arrays, by local cell (dsmc_cellmap), with room for cells_cap cells (at
     * least nlocal: dsmc_cells_room); a balance hands a cell's (sigma g)max and sums to its new
     * owner (exchange.c). */
    size_t cells_cap;
    uint32_t *starts, *counts; /* per local cell (nlocal), after indexing */
    float *sgmax;           /* per local cell (sigma g)_max, kept across steps (dsmc_float_up) */
    float sg_init;          /* the (sigma g)_max a cell starts with */
    dsmc_sg_bounds *sgb;    /* cpu: bounds on sigma g per pair (dsmc_sg_verdict), host memory */
    double *acc;            /* DSMC_NACC rows of nlocal sample sums; NULL until first needed */
    /* The window's mark (kedr_dsmc_mark_window): this rank's sample sums (rows of nlocal, as
     * acc), samples and step when the window began, host memory; NULL: the window began with
     * the sampling. */
    double *mark;
    int64_t mark_samples, mark_step;
    uint64_t *counters;     /* cuda: collisions, candidates, separations / mfp (DSMC_SEP_UNIT),
                             * scratch */
    uint32_t crowded_min;   /* cuda: cells of this many molecules or more collide a warp each */
    int cpu_plain;          /* cpu, for tests: every cell through dsmc_collide_cell, no bounds */
    uint32_t *offsets;      /* generation groups, context memory */
    size_t offsets_bytes;
    uint32_t *host_offsets;
    size_t host_offsets_len;
    /* This rank's inflow groups (face x species whose face opens into one of its cells and
     * whose expected number a step is above 0), in group order: in_gid their group numbers,
     * in_expect their expected numbers a step (context memory), in_m how many; made again
     * when the rank's box (in_box) changes (inflow_groups, sim.c). */
    uint32_t *in_gid;
    double *in_expect;
    uint32_t in_m;
    int in_ready;
    dsmc_cellbox in_box;
    double flux[6][KEDR_DSMC_MAX_SPECIES]; /* inflow number flux per side and species */
    int sorted, located;
    int mid_step; /* a step failed after changing the particles: no exact checkpoint */
    int64_t step, samples;
    double time;
    uint64_t collisions, candidates, generated, total_collisions, total_generated;
    double sep_mfp, total_sep_mfp; /* sums of collided pairs' separation / mean free path */
    dsmc_steady steady;     /* [sample] start = auto: the steady-state test (sim.c) */
    double stage_seconds[KEDR_DSMC_NSTAGES];
    dsmc_geometry geo;      /* bodies, cut cells, surface sums (geometry.c) */
    /* A reacting gas (p.nreact > 0): chem_counts (context memory, DSMC_MAXR + 2 words) holds
     * the step's reactions per reaction, the dissociations not made for want of room
     * ([DSMC_MAXR]) and the new molecules' slot counter ([DSMC_MAXR + 1]) (dsmc_chem);
     * reactions the last step's counts; chem_extra the room beyond the usual that the next step
     * makes for new molecules (grown when some had none). */
    uint64_t *chem_counts;
    uint64_t reactions[DSMC_MAXR + 1];
    size_t chem_extra;
    /* The new molecules of the last collisions, after the indexed ones and in no cell until the
     * next indexing (sorted stays 1: the cells' ranges hold for the others). */
    size_t unindexed;
};

/* 1 when the cells' ranges (starts, counts) cover every particle. */
static inline int dsmc_indexed_all(const struct kedr_dsmc *sim)
{
    return sim->sorted && !sim->unindexed;
}

/* 1 when the cell lies in this rank's box (always, on one rank). */
static inline int dsmc_owns_cell(const struct kedr_dsmc *sim, uint32_t cell)
{
    if (sim->nranks <= 1)
        return 1;
    const dsmc_cellbox *b = &sim->decomp.box[sim->rank];
    uint32_t nx = (uint32_t)sim->p.nx, ny = (uint32_t)sim->p.ny, t = cell / nx;
    uint32_t i = cell % nx, j = t % ny, k = t / ny;
    return (int32_t)i >= b->lo[0] && (int32_t)i < b->hi[0] && (int32_t)j >= b->lo[1] &&
           (int32_t)j < b->hi[1] && (int32_t)k >= b->lo[2] && (int32_t)k < b->hi[2];
}
/* Sets cmap and nlocal from the rank's box in decomp (exchange.c). */
void dsmc_cells_mine(struct kedr_dsmc *sim);
/* Room in the per-cell arrays for nlocal cells: where there is less, they are made again, fresh
 * ((sigma g)max sg_init, sums zero, no mark); the caller moves what they held (exchange.c). */
kedr_status dsmc_cells_room(struct kedr_dsmc *sim);
/* Rows of a per-cell array (elem bytes a cell) between the rank's layout (rows of nlocal) and
 * the grid's (rows of ncells, host memory): to_grid writes the cells of the rank's own box
 * (decomp) and leaves the others; from_grid reads every local cell, or with own_only zeros
 * those of other ranks' boxes (the whole_grid test switch has such cells). */
void dsmc_cells_to_grid(const struct kedr_dsmc *sim, const void *local, void *grid, size_t elem,
                        size_t rows);
void dsmc_cells_from_grid(const struct kedr_dsmc *sim, const void *grid, void *local,
                          size_t elem, size_t rows, int own_only);
/* Sums over the ranks, in place (nothing on one rank): collective. */
kedr_status dsmc_sum_ranks(const struct kedr_dsmc *sim, kedr_dtype t, void *data, size_t n);

/* Makes room for at least need particles, keeping the first sim->n (sim.c); dsmc_reserve_keys
 * keeps their cell keys as well (between the move and the indexing). */
kedr_status dsmc_reserve(struct kedr_dsmc *sim, size_t need);
kedr_status dsmc_reserve_keys(struct kedr_dsmc *sim, size_t need);
/* The cell keys of the particles (the spare's first half), computed if the move has not. */
kedr_status dsmc_locate(struct kedr_dsmc *sim, uint32_t **keys);
/* Allocates and zeroes the sample sums on first use: a run that never samples (a benchmark)
 * keeps that memory free (sim.c). */
kedr_status dsmc_sample_sums(struct kedr_dsmc *sim);

/* The cpu back end (sim_cpu.c), stage by stage as the step driver (sim.c) calls it; the cuda
 * back end's entry points below take the same arguments where they can. dsmc_far_box: the
 * bodies' far box (dsmc_box, above), which both back ends' moves take. */
void dsmc_generate_cpu(kedr_ctx *ctx, const dsmc_params *p, int fill, const uint32_t *offsets,
                       const uint32_t *gid, uint32_t ngroups, size_t base, size_t count,
                       dsmc_particles a);
dsmc_box dsmc_far_box(const dsmc_params *p);
uint64_t dsmc_move_cpu(kedr_ctx *ctx, const dsmc_params *p, size_t n, size_t n_old,
                       dsmc_particles a, uint32_t *cell, uint32_t *copies, double *partial);
void dsmc_clone_cpu(kedr_ctx *ctx, size_t n, const uint32_t *incl, dsmc_particles a,
                    uint32_t *cell);
void dsmc_locate_cpu(kedr_ctx *ctx, const dsmc_params *p, size_t n, dsmc_particles a,
                     uint32_t *cell);
void dsmc_gather_cpu(kedr_ctx *ctx, const dsmc_params *p, const uint32_t *perm, size_t n,
                     dsmc_particles from, dsmc_particles to);
void dsmc_collide_cpu(kedr_ctx *ctx, const dsmc_params *p, dsmc_cellmap cm, size_t ncells,
                      const uint32_t *starts, const uint32_t *counts, dsmc_particles a,
                      const dsmc_particles *from, size_t n, uint32_t *perm, float *sgmax,
                      const dsmc_sg_bounds *sgb, int plain, const dsmc_chem *ch,
                      uint64_t *ncoll, uint64_t *ncand, double *nsep);
void dsmc_sample_cpu(kedr_ctx *ctx, const dsmc_params *p, size_t nlocal,
                     const uint32_t *starts, const uint32_t *counts, dsmc_particles a,
                     double *acc);

#ifdef KEDR_HAVE_CUDA
/* gid: NULL, or the group number of each of the ngroups groups (this rank's inflow groups). */
kedr_status dsmc_generate_cuda(kedr_ctx *ctx, const dsmc_params *p, int fill,
                               const uint32_t *offsets, const uint32_t *gid, uint32_t ngroups,
                               size_t base, size_t count, dsmc_particles a);
/* counts[i] = dsmc_inflow_count(p, gid[i], expect[i]) for i < m, and counts[m] = 0. */
kedr_status dsmc_inflow_counts_cuda(kedr_ctx *ctx, const dsmc_params *p, uint32_t m,
                                    const uint32_t *gid, const double *expect, uint32_t *counts);
/* Axisymmetric cases with radial weighting also write each particle's extra copies to copies[i]
 * and add their sum to counters[0] (zeroed by the caller). Planar and 3D runs use copies (n
 * words) and counters[0] as scratch: the molecules that need the event search. The cell keys
 * are written in the rank's terms (dsmc_key_of with m and ncells); tiles (device, zeroed, or
 * NULL) receive the leavers (dsmc_key_leaves) of each DSMC_XTILE particles. */
kedr_status dsmc_move_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t n, size_t n_old,
                           dsmc_particles a, uint32_t *cell, uint32_t *copies,
                           uint64_t *counters, dsmc_box far, dsmc_cellmap m, uint32_t ncells,
                           uint32_t *tiles);
/* The copies of radial weighting (dsmc_clone_cpu in sim_cpu.c). */
kedr_status dsmc_clone_cuda(kedr_ctx *ctx, size_t n, const uint32_t *incl, dsmc_particles a,
                            uint32_t *cell);
kedr_status dsmc_locate_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t n, dsmc_particles a,
                             uint32_t *cell);
kedr_status dsmc_gather_cuda(kedr_ctx *ctx, const uint32_t *perm, size_t n, const void *src,
                             void *dst, size_t elem);
/* counters[0] += collisions, counters[1] += candidates, counters[2] += the sum of the collided
 * pairs' separations over the mean free path in units of 1 / DSMC_SEP_UNIT; counters[3] is
 * scratch (device memory, the four zeroed by the caller). Cells of at least crowded_min
 * molecules are collided a warp each where the scheme allows it (sim.cu: k_collide_crowded).
 * ch: a reacting gas's new molecules and counts (device pointers), or NULL. */
kedr_status dsmc_collide_cuda(kedr_ctx *ctx, const dsmc_params *p, dsmc_cellmap m,
                              size_t nlocal, const uint32_t *starts, const uint32_t *counts,
                              dsmc_particles a, uint32_t *last, float *sgmax, uint64_t *counters,
                              uint32_t crowded_min, const dsmc_chem *ch);
/* A vibrating gas: the sums of the particles' vibrational levels and their counts, per species
 * (sums[k] and sums[DSMC_MAXS + k], device memory, added to). */
kedr_status dsmc_vib_sums_cuda(kedr_ctx *ctx, size_t n, dsmc_particles a, uint64_t *sums);
/* The local cells' sums into acc (rows of nlocal, by local cell). */
kedr_status dsmc_sample_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t nlocal,
                             const uint32_t *starts, const uint32_t *counts, dsmc_particles a,
                             double *acc);
/* keys[0..n) from the grid's cells to the rank's terms (dsmc_key_of). */
kedr_status dsmc_keys_local_cuda(kedr_ctx *ctx, uint32_t *keys, size_t n, dsmc_cellmap m,
                                 uint32_t ncells);
#endif

#ifdef __cplusplus
}
#endif
#endif
