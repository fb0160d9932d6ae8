/* The DSMC simulator: its state and the step driver, which runs each stage on the cpu back end
 * (sim_cpu.c: OpenMP loops over the inline physics of dsmc_kernels.h) or the cuda one (sim.cu:
 * the same physics in kernels). The state read and set through the API between steps
 * (statistics, particles, fields) is access.c's. */
#include "chem.h"
#include "sim.h"
#include "exchange.h"

#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *kedr_dsmc_stage_name(kedr_dsmc_stage s)
{
    static const char *const names[] = {"generation", "move", "exchange", "indexing", "collisions",
                                         "sampling"};
    return (unsigned)s < KEDR_DSMC_NSTAGES ? names[s] : "?";
}

/* ---- state -------------------------------------------------------------------------------- */

/* The particle slots: the arrays of a (and on the cpu of back), the spare and perm. The cuda
 * back end allocates each array alone (the gathers swap them with the spare); the cpu carves
 * them out of one block (block), each starting at another offset within a 4 KB page: arrays that
 * all began at the same offset met in the same sets of the first-level cache, and a gather that
 * walks a dozen of them together took twice as long. */
typedef struct {
    dsmc_particles a, back;
    void *spare, *perm, *block;
} dsmc_slots;

static void release_slots(kedr_ctx *ctx, const dsmc_params *p, dsmc_slots *t)
{
    if (t->block) {
        kedr_free(ctx, t->block);
    } else {
        dsmc_field f[DSMC_MAX_FIELDS];
        int nf = dsmc_particle_fields(&t->a, p, f);
        for (int k = 0; k < nf; k++)
            kedr_free(ctx, *f[k].ptr);
        kedr_free(ctx, t->spare);
        kedr_free(ctx, t->perm);
    }
    memset(t, 0, sizeof *t);
}

static kedr_status alloc_slots(kedr_ctx *ctx, const dsmc_params *p, size_t cap, dsmc_slots *t)
{
    memset(t, 0, sizeof *t);
    int cpu = !KEDR_IS_CUDA(ctx);
    void **where[2 * DSMC_MAX_FIELDS + 2];
    size_t elem[2 * DSMC_MAX_FIELDS + 2];
    int n = 0;
    for (int set = 0; set < (cpu ? 2 : 1); set++) {
        dsmc_field f[DSMC_MAX_FIELDS];
        int nf = dsmc_particle_fields(set ? &t->back : &t->a, p, f);
        for (int k = 0; k < nf; k++) {
            where[n] = f[k].ptr;
            elem[n++] = f[k].elem;
        }
    }
    where[n] = &t->spare;
    elem[n++] = 8;
    where[n] = &t->perm;
    elem[n++] = 4;
    if (!cpu) {
        for (int k = 0; k < n; k++) {
            kedr_status s = kedr_alloc(ctx, where[k], cap * elem[k]);
            if (s != KEDR_OK) {
                release_slots(ctx, p, t);
                return s;
            }
        }
        return KEDR_OK;
    }
    const size_t page = 4096, shift = 256; /* array k starts k * shift bytes into a page */
    size_t off[2 * DSMC_MAX_FIELDS + 2], end = 0;
    for (int k = 0; k < n; k++) {
        off[k] = (end + page - 1) / page * page + (size_t)k * shift % page;
        end = off[k] + cap * elem[k];
    }
    KEDR_TRY(kedr_alloc(ctx, &t->block, end + page));
    char *base = (char *)(((uintptr_t)t->block + page - 1) / page * page);
    for (int k = 0; k < n; k++)
        *where[k] = base + off[k];
    return KEDR_OK;
}

static void free_particles(kedr_dsmc *sim)
{
    dsmc_slots t = {sim->a, sim->back, sim->spare, sim->perm, sim->slot_block};
    release_slots(sim->ctx, &sim->p, &t);
    kedr_free(sim->ctx, sim->sort_scratch);
    memset(&sim->a, 0, sizeof sim->a);
    memset(&sim->back, 0, sizeof sim->back);
    sim->spare = NULL;
    sim->perm = NULL;
    sim->slot_block = NULL;
    sim->sort_scratch = NULL;
    sim->sort_scratch_bytes = 0;
}

void kedr_dsmc_destroy(kedr_dsmc *sim)
{
    if (!sim)
        return;
    kedr_ctx *ctx = sim->ctx;
    free_particles(sim);
    dsmc_geometry_free(sim);
    kedr_free(ctx, sim->starts);
    kedr_free(ctx, sim->counts);
    kedr_free(ctx, sim->sgmax);
    kedr_free(ctx, sim->acc);
    kedr_free(ctx, sim->offsets);
    kedr_free(ctx, sim->in_gid);
    kedr_free(ctx, sim->in_expect);
    kedr_free(ctx, sim->counters);
    kedr_free(ctx, sim->chem_counts);
    free(sim->host_offsets);
    free(sim->sgb);
    dsmc_exchange_release(sim);
    free(sim->mark);
    dsmc_decomp_free(&sim->decomp);
    kedr_free(ctx, sim->xowner);
    kedr_free(ctx, sim->xbuf);
    free(sim);
}

kedr_status dsmc_sum_ranks(const kedr_dsmc *sim, kedr_dtype t, void *data, size_t n)
{
    return sim->nranks > 1 ? kedr_comm_allreduce(sim->comm, t, KEDR_OP_SUM, data, n) : KEDR_OK;
}

/* The cell keys of the move (or the locate) live in the first half of the idle gather spare. */
static uint32_t *cell_keys(const kedr_dsmc *sim)
{
    return (uint32_t *)sim->spare;
}

/* Room for at least `need` particles, keeping the first sim->n. keep_move: also keep the
 * move's cell keys and copy counts (in the spare and perm slots), which are live only between
 * the move and the copies of radial weighting; elsewhere those slots hold nothing yet, and
 * copying them would move bytes never written. */
static kedr_status reserve_keep(kedr_dsmc *sim, size_t need, int keep_move)
{
    if (need <= sim->cap)
        return KEDR_OK;
    if (need >= ((size_t)1 << 32))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc: %zu particles: at most 2^32 - 1 are supported "
                         "(indexing uses 32-bit permutations)", need);
    size_t limit = sim->c.max_particles ? sim->c.max_particles : ((size_t)1 << 32) - 1;
    if (need > limit) /* the same path as running out of memory, so that it can be tested */
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: no room for %zu particles: [run] "
                         "max_particles = %zu", need, limit);
    /* An eighth to spare: few regrowths, and slots close to the particle count (a closed box
     * filled at the start holds exactly its particles). */
    size_t cap = sim->cap + sim->cap / 8;
    cap = cap > need ? cap : need;
    cap = cap < limit ? cap : limit;
    kedr_ctx *ctx = sim->ctx;
    kedr_dsmc old = *sim;
    dsmc_slots t;
    void *scratch = NULL;
    size_t scratch_bytes = kedr_counting_sort_scratch(ctx, cap, (uint32_t)sim->ncells);
    kedr_status s = alloc_slots(ctx, &sim->p, cap, &t);
    dsmc_particles a = t.a;
    void *spare = t.spare, *perm = t.perm;
    if (s == KEDR_OK && scratch_bytes)
        s = kedr_alloc(ctx, &scratch, scratch_bytes);
    size_t n = sim->n;
    if (s == KEDR_OK && n) {
        dsmc_field to[DSMC_MAX_FIELDS], from[DSMC_MAX_FIELDS];
        int nf = dsmc_particle_fields(&a, &sim->p, to);
        dsmc_particle_fields(&old.a, &sim->p, from);
        for (int k = 0; k < nf && s == KEDR_OK; k++)
            s = kedr_copy(ctx, *to[k].ptr, *from[k].ptr, n * to[k].elem);
        if (s == KEDR_OK && keep_move) s = kedr_copy(ctx, spare, old.spare, n * 4);
        if (s == KEDR_OK && keep_move) s = kedr_copy(ctx, perm, old.perm, n * 4);
    }
    if (s != KEDR_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", kedr_last_error());
        release_slots(ctx, &sim->p, &t);
        kedr_free(ctx, scratch);
        return kedr_fail(s, "kedr_dsmc: no room for %zu particles (%zu bytes each): %s", cap,
                         dsmc_slot_bytes(&sim->p, !KEDR_IS_CUDA(sim->ctx)), msg);
    }
    free_particles(sim);
    sim->a = a;
    sim->back = t.back;
    sim->spare = spare;
    sim->perm = perm;
    sim->slot_block = t.block;
    sim->sort_scratch = scratch;
    sim->sort_scratch_bytes = scratch_bytes;
    sim->cap = cap;
    return KEDR_OK;
}

static kedr_status reserve(kedr_dsmc *sim, size_t need)
{
    return reserve_keep(sim, need, 0);
}

kedr_status dsmc_reserve(kedr_dsmc *sim, size_t need)
{
    return reserve(sim, need);
}

kedr_status dsmc_reserve_keys(kedr_dsmc *sim, size_t need)
{
    return reserve_keep(sim, need, 1);
}

/* Host offsets for ngroups groups of counts (in sim->host_offsets), uploaded to sim->offsets. */
/* Room in sim->offsets for ngroups + 1 offsets. */
static kedr_status offsets_room(kedr_dsmc *sim, uint32_t ngroups)
{
    size_t bytes = ((size_t)ngroups + 1) * 4;
    if (bytes > sim->offsets_bytes) {
        kedr_free(sim->ctx, sim->offsets);
        sim->offsets = NULL;
        sim->offsets_bytes = 0;
        KEDR_TRY(kedr_alloc(sim->ctx, (void **)&sim->offsets, bytes));
        sim->offsets_bytes = bytes;
    }
    return KEDR_OK;
}

static kedr_status upload_offsets(kedr_dsmc *sim, uint32_t ngroups)
{
    KEDR_TRY(offsets_room(sim, ngroups));
    return kedr_upload(sim->ctx, sim->offsets, sim->host_offsets, ((size_t)ngroups + 1) * 4);
}

static kedr_status host_offsets_room(kedr_dsmc *sim, size_t entries)
{
    if (entries <= sim->host_offsets_len)
        return KEDR_OK;
    uint32_t *h = realloc(sim->host_offsets, entries * 4);
    if (!h)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: out of host memory (%zu offsets)", entries);
    sim->host_offsets = h;
    sim->host_offsets_len = entries;
    return KEDR_OK;
}

/* Generates count molecules of ngroups groups: their offsets in sim->host_offsets (uploaded
 * here) or, with ready, already in sim->offsets; gid (context memory) the groups' numbers, or
 * NULL: group i is number i. */
static kedr_status run_generate(kedr_dsmc *sim, int fill, uint32_t ngroups, size_t count,
                                const uint32_t *gid, int ready)
{
    /* Over ranks a rank's count wanders as particles cross (by about the square root of those
     * crossing a step): the fill leaves room for a 256th more, so that the first exchanges do
     * not grow every array by an eighth. */
    size_t margin = fill && sim->nranks > 1 ? count / 256 + 4096 : 0;
    KEDR_TRY(reserve(sim, sim->n + count + margin));
    if (count == 0)
        return KEDR_OK;
    if (!ready)
        KEDR_TRY(upload_offsets(sim, ngroups));
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx))
        KEDR_TRY(dsmc_generate_cuda(sim->ctx, &sim->p, fill, sim->offsets, gid, ngroups, sim->n,
                                    count, sim->a));
    else
#endif
        dsmc_generate_cpu(sim->ctx, &sim->p, fill, sim->offsets, gid, ngroups, sim->n, count,
                          sim->a);
    sim->n += count;
    return KEDR_OK;
}

/* The initial fill: per cell and species, floor(expected + u) particles. */
static kedr_status fill(kedr_dsmc *sim)
{
    const kedr_dsmc_case *c = &sim->c;
    uint32_t ns = (uint32_t)c->nspecies, ngroups = (uint32_t)(sim->ncells * ns);
    KEDR_TRY(host_offsets_room(sim, (size_t)ngroups + 1));
    uint64_t total = 0;
    for (uint32_t cell = 0; cell < sim->ncells; cell++)
        for (uint32_t k = 0; k < ns; k++) {
            /* Cut cells get molecules for their gas volume; nearly solid ones none. */
            double v = sim->geo.gas_host[cell];
            v = v < DSMC_MIN_GAS * dsmc_cell_full_volume(&sim->p, cell) ? 0.0 : v;
            double expect = sim->p.gas_n[dsmc_fill_state(&sim->p, cell)] * c->fraction[k] * v /
                            (c->weight * dsmc_weight_factor(&sim->p, cell));
            if (!dsmc_owns_cell(sim, cell)) /* another rank's: floor(0 + u) is none */
                expect = 0.0;
            kedr_u32x4 w = kedr_rng_draw(c->seed, cell, 0, DSMC_PURPOSE(DSMC_P_FILL_COUNT, k));
            sim->host_offsets[cell * ns + k] = (uint32_t)total;
            /* a count past 2^32 is refused before its conversion (undefined past 2^64) */
            double count = floor(expect + kedr_u01_f64(w.v[0], w.v[1]));
            total += count < 4294967296.0 ? (uint64_t)count : (uint64_t)1 << 32;
            if (total >= ((uint64_t)1 << 32) - 1)
                return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc: the initial fill needs more than "
                                 "2^32 particles: raise [run] weight");
        }
    sim->host_offsets[ngroups] = (uint32_t)total;
    sim->p.step = 0;
    KEDR_TRY(run_generate(sim, 1, ngroups, (size_t)total, NULL, 0));
    /* The fill's offsets, one per cell, are far more than inflow faces need: give them back. */
    kedr_free(sim->ctx, sim->offsets);
    sim->offsets = NULL;
    sim->offsets_bytes = 0;
    return KEDR_OK;
}

/* A warning (rank 0) when some rank's box is thinner, along an axis it does not span, than a
 * fast molecule (the freestream speed plus three most probable thermal speeds:
 * kedr_dsmc_time_scales) moves in a step: such molecules cross that box in one step and go
 * straight to the rank that owns their cell, which is correct but sends more messages. */
static void thin_box_note(const dsmc_decomp *d, const kedr_dsmc_case *c)
{
    double tc, tt;
    kedr_dsmc_time_scales(c, &tc, &tt);
    int dims = c->dims == 3 ? 3 : 2;
    double h[3], smaller;
    for (int a = 0; a < dims; a++)
        h[a] = (c->hi[a] - c->lo[a]) / d->n[a];
    smaller = h[0] < h[1] ? h[0] : h[1];
    double reach = tt > 0 ? c->dt * smaller / tt : 0; /* metres a fast molecule moves a step */
    for (int r = 0; r < d->nranks; r++)
        for (int a = 0; a < dims; a++) {
            int w = d->box[r].hi[a] - d->box[r].lo[a];
            if (w == d->n[a] || w * h[a] >= reach)
                continue;
            kedr_log(KEDR_LOG_WARN, "kedr_dsmc: over %d ranks the grid of %d x %d x %d cells "
                     "leaves rank %d a box %d cells thin along %c, less than the %.3g cells a "
                     "fast molecule (freestream speed plus 3 thermal speeds) crosses in a step "
                     "of %g s: such molecules go straight to the rank that owns their cell "
                     "(correct, with more messages); fewer ranks or a shorter dt keep them "
                     "between neighbouring boxes", d->nranks, d->n[0], d->n[1], d->n[2], r, w,
                     "xyz"[a], reach / h[a], c->dt);
            return;
        }
}

/* The cell that inflow face `local` of side `side` opens into: side s of axis a = s / 2 has a
 * face per cell of the two other axes b < c, numbered ib + n_b ic (dsmc_inflow_one3; in 2D the
 * x sides' faces are the rows, the y sides' the columns). */
static uint32_t face_cell(const dsmc_params *p, int side, uint32_t local)
{
    uint32_t nx = (uint32_t)p->nx, ny = (uint32_t)p->ny, nz = (uint32_t)p->nz, ijk[3];
    int axis = side / 2, b = axis == 0 ? 1 : 0, c = axis == 2 ? 1 : 2;
    uint32_t n[3] = {nx, ny, nz};
    ijk[axis] = side % 2 ? n[axis] - 1 : 0;
    ijk[b] = local % n[b];
    ijk[c] = local / n[b];
    return ijk[0] + nx * (ijk[1] + ny * ijk[2]);
}

/* This rank's inflow groups (sim->in_gid, in_expect, in_m): every face of an inflow side whose
 * cell is the rank's, each species whose expected number a step, flux * area * dt / weight, is
 * above 0 (a group expecting none makes none: floor(0 + u) = 0), in group order. Made when the
 * rank's box differs from the one they were made for (once on one rank). */
static kedr_status inflow_groups(kedr_dsmc *sim)
{
    const dsmc_cellbox *box = sim->nranks > 1 ? &sim->decomp.box[sim->rank] : NULL;
    if (sim->in_ready && (!box || memcmp(box, &sim->in_box, sizeof *box) == 0))
        return KEDR_OK;
    const kedr_dsmc_case *c = &sim->c;
    const dsmc_params *p = &sim->p;
    uint32_t ns = (uint32_t)c->nspecies, nfaces = p->face_start[6];
    size_t ng = (size_t)nfaces * ns;
    uint32_t *gid = ng ? malloc(ng * sizeof *gid) : NULL;
    double *expect = ng ? malloc(ng * sizeof *expect) : NULL;
    if (ng && (!gid || !expect)) {
        free(gid);
        free(expect);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: out of host memory (%zu inflow groups)", ng);
    }
    uint32_t m = 0;
    double most = 0; /* the most a step can bring: sum of (expect + 1) */
    for (int side = 0; side < 6; side++) {
        /* face length x unit depth in 2D */
        double area = side < 2 ? p->dy : side < 4 ? p->dx : p->dx * p->dy;
        if (p->dims == 3 && side < 4)
            area *= p->dz;
        for (uint32_t f = p->face_start[side]; f < p->face_start[side + 1]; f++) {
            /* the cell the face opens into: its rank feeds it */
            if (!dsmc_owns_cell(sim, face_cell(p, side, f - p->face_start[side])))
                continue;
            /* the weight of the cell the face opens into */
            double w = c->weight;
            if (p->axisym) { /* rings on the ends, cylinders on the radial sides */
                uint32_t local = f - p->face_start[side];
                double r0 = p->lo[1] + local * p->dy, r1 = r0 + p->dy;
                double radius = side == KEDR_DSMC_YMIN ? p->lo[1] : p->hi[1];
                area = side < 2 ? M_PI * (r1 * r1 - r0 * r0) : 2.0 * M_PI * radius * p->dx;
                uint32_t row = side < 2 ? local : side == KEDR_DSMC_YMIN ? 0 : (uint32_t)p->ny - 1;
                w *= dsmc_weight_factor(p, row * (uint32_t)p->nx);
            }
            for (uint32_t k = 0; k < ns; k++) {
                double e = sim->flux[side][k] * area * c->dt / w;
                if (!(e > 0))
                    continue;
                gid[m] = f * ns + k;
                expect[m++] = e;
                most += e + 1;
            }
        }
    }
    kedr_status s = KEDR_OK;
    if (most >= 2147483648.0)
        s = kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc: the inflow of a step could bring more than "
                      "2^31 particles: raise [run] weight");
    kedr_free(sim->ctx, sim->in_gid);
    kedr_free(sim->ctx, sim->in_expect);
    sim->in_gid = NULL;
    sim->in_expect = NULL;
    sim->in_m = 0;
    sim->in_ready = 0;
    if (s == KEDR_OK && m > 0)
        s = kedr_alloc(sim->ctx, (void **)&sim->in_gid, (size_t)m * sizeof *gid);
    if (s == KEDR_OK && m > 0)
        s = kedr_alloc(sim->ctx, (void **)&sim->in_expect, (size_t)m * sizeof *expect);
    if (s == KEDR_OK && m > 0)
        s = kedr_upload(sim->ctx, sim->in_gid, gid, (size_t)m * sizeof *gid);
    if (s == KEDR_OK && m > 0)
        s = kedr_upload(sim->ctx, sim->in_expect, expect, (size_t)m * sizeof *expect);
    free(gid);
    free(expect);
    if (s != KEDR_OK)
        return s;
    sim->in_m = m;
    sim->in_ready = 1;
    if (box)
        sim->in_box = *box;
    return KEDR_OK;
}

/* Inflow faces of one step: per face and species, floor(flux * area * dt / weight + u)
 * (dsmc_inflow_count), for this rank's groups; the counts and their offsets made where the
 * particles live (on a GPU: a kernel and a scan, one number back). */
static kedr_status inflow(kedr_dsmc *sim)
{
    sim->generated = 0;
    KEDR_TRY(inflow_groups(sim));
    uint32_t m = sim->in_m;
    if (m == 0)
        return KEDR_OK;
    uint64_t total = 0;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx)) {
        uint32_t t = 0;
        KEDR_TRY(offsets_room(sim, m));
        KEDR_TRY(dsmc_inflow_counts_cuda(sim->ctx, &sim->p, m, sim->in_gid, sim->in_expect,
                                         sim->offsets));
        KEDR_TRY(kedr_scan_exclusive(sim->ctx, KEDR_U32, sim->offsets, sim->offsets,
                                     (size_t)m + 1, &t));
        total = t;
    } else
#endif
    {
        KEDR_TRY(host_offsets_room(sim, (size_t)m + 1));
        for (uint32_t i = 0; i < m; i++) {
            sim->host_offsets[i] = (uint32_t)total;
            total += dsmc_inflow_count(&sim->p, sim->in_gid[i], sim->in_expect[i]);
        }
        sim->host_offsets[m] = (uint32_t)total;
        KEDR_TRY(upload_offsets(sim, m));
    }
    if (sim->n + total >= ((uint64_t)1 << 32) - 1)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc: more than 2^32 particles: raise [run] weight");
    sim->generated = total;
    return run_generate(sim, 0, m, (size_t)total, sim->in_gid, 1);
}

/* VHS/VSS pair constants: sigma_T = pi d^2 (2 k T_ref / (m_r g^2))^(omega - 1/2) / Gamma(5/2 -
 * omega) (Bird 1994 eq. 4.63), with d, omega, T_ref, alpha averaged over the pair. */
static void pair_constants(const kedr_dsmc_case *c, dsmc_params *p)
{
    for (int i = 0; i < c->nspecies; i++)
        for (int j = 0; j < c->nspecies; j++) {
            const kedr_dsmc_species *a = &c->species[i], *b = &c->species[j];
            int vss = c->model == KEDR_DSMC_VSS;
            double d = 0.5 * (vss ? a->d_ref_vss + b->d_ref_vss : a->d_ref + b->d_ref);
            double w = 0.5 * (a->omega + b->omega), tr = 0.5 * (a->t_ref + b->t_ref);
            double alpha = vss ? 0.5 * (a->alpha + b->alpha) : 1.0;
            double mr = a->mass * b->mass / (a->mass + b->mass);
            int k = i * DSMC_MAXS + j;
            p->sigma_a[k] = M_PI * d * d * pow(2.0 * KEDR_BOLTZMANN * tr / mr, w - 0.5) /
                            tgamma(2.5 - w);
            p->sigma_e[k] = 1.0 - 2.0 * w;
            p->inv_alpha[k] = 1.0 / alpha;
        }
}

/* The cpu's bounds on sigma g (dsmc_sg_verdict) for every pair of a power-law cross-section. */
static dsmc_sg_bounds *sg_bounds(const dsmc_params *p)
{
    dsmc_sg_bounds *b = calloc((size_t)DSMC_MAXS * DSMC_MAXS, sizeof *b);
    if (!b)
        return NULL;
    for (int i = 0; i < p->nspecies; i++)
        for (int j = 0; j < p->nspecies; j++) {
            int q = i * DSMC_MAXS + j;
            double h = 0.5 * (p->sigma_e[q] + 1.0); /* sigma g = a (g^2)^h */
            for (int k = -DSMC_SGB_EXP; k < DSMC_SGB_EXP; k++)
                b[q].scale[k + DSMC_SGB_EXP] = pow(2.0, k * h);
            for (int m = 0; m <= DSMC_SGB_BINS; m++)
                b[q].frac[m] = pow(1.0 + (double)m / DSMC_SGB_BINS, h);
        }
    return b;
}

/* The gas states of new molecules (dsmc_params): the freestream, and the [downstream] state
 * on its sides and, from the shock position on, in the initial fill. */
static void gas_states(const kedr_dsmc_case *c, dsmc_params *p)
{
    const kedr_dsmc_downstream *d = &c->downstream;
    int down = d->mode != KEDR_DSMC_DOWNSTREAM_NONE;
    p->gas_n[0] = c->number_density;
    p->gas_t[0] = c->temperature;
    memcpy(p->gas_u[0], c->velocity, sizeof p->gas_u[0]);
    p->gas_n[1] = down ? d->number_density : c->number_density;
    p->gas_t[1] = down ? d->temperature : c->temperature;
    p->gas_tv[0] = c->temperature_vib > 0 ? c->temperature_vib : c->temperature;
    p->gas_tv[1] = down ? d->temperature : p->gas_tv[0];
    memcpy(p->gas_u[1], down ? d->velocity : c->velocity, sizeof p->gas_u[1]);
    p->fill_axis = -1;
    for (int s = 0; s < (c->dims == 3 ? 6 : 4); s++) {
        p->side_state[s] = down && (d->sides & (1u << s)) ? 1 : 0;
        if (!p->side_state[s] || !d->has_shock_position)
            continue;
        /* The cells whose centre lies between the shock position and side s. */
        int axis = s / 2, cells = axis == 0 ? c->nx : axis == 1 ? c->ny : c->nz, first = cells;
        double step = (c->hi[axis] - c->lo[axis]) / cells;
        for (int i = cells - 1; i >= 0; i--)
            if (s % 2 ? c->lo[axis] + (i + 0.5) * step >= d->shock_position
                      : c->lo[axis] + (i + 0.5) * step > d->shock_position)
                first = i;
        p->fill_axis = axis;
        p->fill_from = s % 2 ? first : 0;
        p->fill_to = s % 2 ? cells : first;
    }
}

kedr_status kedr_dsmc_create(kedr_ctx *ctx, const kedr_dsmc_case *c, kedr_dsmc **out)
{
    return kedr_dsmc_create_on(ctx, c, NULL, out);
}

kedr_status kedr_dsmc_create_on(kedr_ctx *ctx, const kedr_dsmc_case *c, kedr_comm *comm,
                                kedr_dsmc **out)
{
    const char *fn = "kedr_dsmc_create";
    if (!out)
        return kedr_fail(KEDR_ERR_INVALID, "%s: sim is NULL", fn);
    *out = NULL;
    KEDR_TRY(kedr_check_ptr(ctx, 1, fn, "ctx"));
    KEDR_TRY(kedr_check_ptr(c, 1, fn, "c"));
    KEDR_TRY(kedr_dsmc_case_check(c));
    kedr_dsmc *sim = calloc(1, sizeof *sim);
    if (!sim)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    sim->ctx = ctx;
    sim->comm = comm;
    sim->rank = comm ? kedr_comm_rank(comm) : 0;
    sim->nranks = comm ? kedr_comm_size(comm) : 1;
    sim->crowded_min = DSMC_CROWDED_MIN;
    if (sim->nranks > 1) {
        int n[3] = {c->nx, c->ny, c->dims == 3 ? c->nz : 1};
        kedr_status ds = dsmc_decomp_init(&sim->decomp, (int)c->split, n, sim->nranks, NULL);
        if (ds != KEDR_OK) {
            free(sim);
            return ds;
        }
        if (sim->rank == 0)
            thin_box_note(&sim->decomp, c);
    }
    sim->c = *c;
    if (sim->c.sample_auto)
        sim->c.sample_start = INT64_MAX; /* until the flow is steady */
    else if (sim->c.sample_start < 0)
        sim->c.sample_start = c->steps / 2;
    dsmc_params *p = &sim->p;
    memset(p, 0, sizeof *p);
    int three = c->dims == 3;
    p->dims = three ? 3 : 2;
    for (int d = 0; d < p->dims; d++) {
        p->lo[d] = c->lo[d];
        p->hi[d] = c->hi[d];
    }
    p->nx = c->nx;
    p->ny = c->ny;
    p->nz = three ? c->nz : 1;
    p->axisym = c->axisymmetric;
    p->radial = c->axisymmetric && c->radial_weighting;
    p->dx = (c->hi[0] - c->lo[0]) / c->nx;
    p->dy = (c->hi[1] - c->lo[1]) / c->ny;
    p->inv_dx = c->nx / (c->hi[0] - c->lo[0]);
    p->inv_dy = c->ny / (c->hi[1] - c->lo[1]);
    p->cell_volume = p->dx * p->dy;
    p->wr_inv = 1.0 / (p->lo[1] + (c->ny - 0.5) * p->dy); /* the outermost row's factor is 1 */
    if (three) {
        p->dz = (c->hi[2] - c->lo[2]) / c->nz;
        p->inv_dz = c->nz / (c->hi[2] - c->lo[2]);
        p->cell_volume *= p->dz;
    }
    for (int s = 0; s < 2 * p->dims; s++)
        p->side[s] = c->side[s];
    p->nsegments = c->nsegments;
    memcpy(p->seg, c->segment, sizeof p->seg);
    p->nspecies = c->nspecies;
    for (int k = 0; k < c->nspecies; k++) {
        const kedr_dsmc_species *sp = &c->species[k];
        p->mass[k] = sp->mass;
        p->fraction[k] = c->fraction[k];
        p->rot_dof[k] = sp->rot_dof;
        p->rot_prob[k] = 1.0 / sp->z_rot;
        p->lam_a[k] = sqrt(2.0) * M_PI * sp->d_ref * sp->d_ref * pow(sp->t_ref, sp->omega - 0.5);
        p->lam_e[k] = 0.5 - sp->omega;
        p->theta_v[k] = sp->theta_v;
        p->zv_const[k] = sp->z_vib;
        p->zv_c1[k] = sp->zv_c1;
        p->zv_c2[k] = sp->zv_c2;
        p->zv_omega[k] = sp->omega;
        p->vib |= sp->theta_v > 0;
    }
    p->scheme = c->scheme;
    p->partner = c->partner;
    p->subcells = c->subcells > 0 ? c->subcells : 2;
    pair_constants(c, p);
    dsmc_chem_params(c, p);
    p->dt = c->dt;
    p->weight = c->weight;
    p->seed = c->seed;
    gas_states(c, p);
    uint32_t faces = 0;
    for (int s = 0; s < 6; s++) {
        /* faces per side: the cells of the other axes (2D: none on the z sides) */
        uint32_t across = s < 2 ? (uint32_t)c->ny : s < 4 ? (uint32_t)c->nx : 0;
        if (three)
            across = s < 2 ? (uint32_t)(c->ny * c->nz) : s < 4 ? (uint32_t)(c->nx * c->nz)
                                                              : (uint32_t)(c->nx * c->ny);
        p->face_start[s] = faces;
        if (s < 2 * p->dims && c->side[s] == KEDR_DSMC_INFLOW)
            faces += across;
        int axis = s / 2, st = p->side_state[s];
        double inward = s % 2 == 0 ? 1.0 : -1.0;
        for (int k = 0; k < c->nspecies; k++)
            sim->flux[s][k] = kedr_dsmc_inflow_flux(p->gas_n[st] * c->fraction[k], p->gas_t[st],
                                                    c->species[k].mass,
                                                    inward * p->gas_u[st][axis]);
    }
    p->face_start[6] = faces;
    sim->ncells = (size_t)c->nx * (size_t)c->ny * (size_t)p->nz;
    dsmc_cells_mine(sim);
    kedr_status gs = dsmc_geometry_build(sim);
    if (gs != KEDR_OK) {
        kedr_dsmc_destroy(sim);
        return gs;
    }
    if (sim->nranks > 1 && sim->ncells > (UINT32_MAX - 1) / 2) { /* keys: dsmc_key_of */
        kedr_status ks = kedr_fail(KEDR_ERR_INVALID, "%s: %zu cells: over several ranks at most "
                                   "%u (2^31 - 1) are supported", fn, sim->ncells,
                                   (UINT32_MAX - 1) / 2);
        kedr_dsmc_destroy(sim);
        return ks;
    }

    /* The initial (sigma g)_max: three most probable relative speeds at the hottest of the
     * gas states and walls, for the pair where it is largest; cells raise it when they meet
     * more. */
    double t_hot = fmax(c->temperature, p->gas_t[1]);
    for (int b = 0; b <= KEDR_DSMC_MAX_BODIES; b++)
        t_hot = p->body_t[b] > t_hot ? p->body_t[b] : t_hot;
    double sg0 = 0;
    for (int i = 0; i < c->nspecies; i++)
        for (int j = 0; j < c->nspecies; j++) {
            double mr = p->mass[i] * p->mass[j] / (p->mass[i] + p->mass[j]);
            double g = 3.0 * sqrt(2.0 * KEDR_BOLTZMANN * t_hot / mr);
            int k = i * DSMC_MAXS + j;
            double sg = p->sigma_a[k] * pow(g, p->sigma_e[k]) * g;
            sg0 = sg > sg0 ? sg : sg0;
        }
    if (p->rx.nreact) /* the reaction cross-section where it is the larger (chem.c) */
        sg0 = fmax(sg0, dsmc_chem_sg_max(p, 9.0 * KEDR_BOLTZMANN * t_hot));

    sim->sg_init = dsmc_float_up(sg0);
    kedr_status s = dsmc_cells_room(sim); /* the rank's own cells */
    /* a vibrating gas: 2 DSMC_MAXS more words, the vibrational sums (vib_sums) */
    if (s == KEDR_OK)
        s = kedr_alloc(ctx, (void **)&sim->counters,
                       (4 + (p->vib ? 2 * DSMC_MAXS : 0)) * sizeof(uint64_t));
    if (s == KEDR_OK && p->rx.nreact)
        s = kedr_alloc(ctx, (void **)&sim->chem_counts, (DSMC_MAXR + 2) * sizeof(uint64_t));
    if (s == KEDR_OK && !KEDR_IS_CUDA(ctx) && !(sim->sgb = sg_bounds(p)))
        s = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    if (s == KEDR_OK) { /* a fill reserves what it makes itself */
        double volume = (c->hi[0] - c->lo[0]) * (c->hi[1] - c->lo[1]) *
                        (three ? c->hi[2] - c->lo[2] : 1.0);
        size_t guess = c->fill ? 1024
                               : (size_t)fmin(c->number_density * volume / c->weight * 1.05 /
                                                  sim->nranks + 1024,
                                              (double)(((size_t)1 << 32) - 1));
        if (c->max_particles && guess > c->max_particles)
            guess = c->max_particles;
        s = reserve(sim, guess);
    }
    if (s == KEDR_OK && c->fill)
        s = fill(sim);
    if (s != KEDR_OK) {
        kedr_dsmc_destroy(sim);
        return s;
    }
    *out = sim;
    return KEDR_OK;
}

/* ---- the step ----------------------------------------------------------------------------- */

static kedr_status stage_begin(kedr_dsmc *sim, double *t0)
{
    KEDR_TRY(kedr_ctx_sync(sim->ctx));
    *t0 = kedr_wall_seconds();
    return KEDR_OK;
}

static kedr_status stage_end(kedr_dsmc *sim, kedr_dsmc_stage st, double t0)
{
    KEDR_TRY(kedr_ctx_sync(sim->ctx));
    sim->stage_seconds[st] += kedr_wall_seconds() - t0;
    return KEDR_OK;
}

/* Radial weighting: the move asked for `extra` copies of particles in all, particle i for
 * sim->perm[i] of them; they are appended after the n particles, in particle order. */
static kedr_status run_clones(kedr_dsmc *sim, uint64_t extra)
{
    size_t n = sim->n;
    if (n + extra >= ((uint64_t)1 << 32) - 1)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc: radial weighting asks for %zu + %llu "
                         "particles, more than 2^32 - 1: raise [run] weight", n,
                         (unsigned long long)extra);
    KEDR_TRY(kedr_scan_inclusive(sim->ctx, KEDR_U32, sim->perm, sim->perm, n, NULL));
    KEDR_TRY(reserve_keep(sim, n + extra, 1)); /* keeps the cell keys and the scan */
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx))
        KEDR_TRY(dsmc_clone_cuda(sim->ctx, n, sim->perm, sim->a, cell_keys(sim)));
    else
#endif
        dsmc_clone_cpu(sim->ctx, n, sim->perm, sim->a, cell_keys(sim));
    sim->n = n + extra;
    return KEDR_OK;
}

/* Wall hits are sampled on every step from [sample] start on (the step about to be done is
 * sim->step + 1). */
static kedr_status run_move(kedr_dsmc *sim, size_t n_old)
{
    dsmc_params p = sim->p;
    p.surf = sim->geo.surf && sim->step + 1 >= sim->c.sample_start ? sim->geo.surf : NULL;
    if (p.surf)
        sim->geo.surf_steps++;
    uint64_t extra = 0; /* copies asked for under radial weighting */
    sim->xtiles_n = 0;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx)) {
        uint32_t *tiles = NULL; /* the leavers of each of the exchange's tiles, counted */
        KEDR_TRY(dsmc_exchange_tiles(sim, &tiles));
        if (p.radial)
            KEDR_TRY(kedr_memset(sim->ctx, sim->counters, 0, sizeof extra));
        KEDR_TRY(dsmc_move_cuda(sim->ctx, &p, sim->n, n_old, sim->a, cell_keys(sim), sim->perm,
                                sim->counters, dsmc_far_box(&p), sim->cmap,
                                (uint32_t)sim->ncells, tiles));
        sim->keys_local = sim->nlocal != sim->ncells; /* the move wrote them so */
        sim->xtiles_n = tiles ? sim->n : 0;
        if (p.radial)
            KEDR_TRY(kedr_download(sim->ctx, &extra, sim->counters, sizeof extra));
    } else
#endif
        extra = dsmc_move_cpu(sim->ctx, &p, sim->n, n_old, sim->a, cell_keys(sim), sim->perm,
                              sim->geo.surf_threads);
    return extra ? run_clones(sim, extra) : KEDR_OK;
}

static kedr_status run_locate(kedr_dsmc *sim)
{
    sim->keys_local = 0;
    sim->xtiles_n = 0;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx))
        return dsmc_locate_cuda(sim->ctx, &sim->p, sim->n, sim->a, cell_keys(sim));
#endif
    dsmc_locate_cpu(sim->ctx, &sim->p, sim->n, sim->a, cell_keys(sim));
    return KEDR_OK;
}

kedr_status dsmc_locate(kedr_dsmc *sim, uint32_t **keys)
{
    if (!sim->located) {
        KEDR_TRY(run_locate(sim));
        sim->located = 1;
    }
    *keys = cell_keys(sim);
    return KEDR_OK;
}

#ifdef KEDR_HAVE_CUDA
/* cuda: puts field in perm order through the spare: an array of doubles swaps places with it; a
 * narrower one (rotational energies, species, vibrational levels) is gathered into it and
 * copied back. */
static kedr_status gather_cuda(kedr_dsmc *sim, size_t n, void **field, size_t elem)
{
    KEDR_TRY(dsmc_gather_cuda(sim->ctx, sim->perm, n, *field, sim->spare, elem));
    if (elem != 8)
        return kedr_copy(sim->ctx, *field, sim->spare, n * elem);
    void *t = *field;
    *field = sim->spare;
    sim->spare = t;
    return KEDR_OK;
}
#endif

static void swap_sets(kedr_dsmc *sim)
{
    dsmc_particles t = sim->a;
    sim->a = sim->back;
    sim->back = t;
    sim->gather_pending = 0;
}

/* cpu: the gather an indexing left to the collisions, when they did not run. */
static void finish_gather(kedr_dsmc *sim)
{
    if (!sim->gather_pending)
        return;
    dsmc_gather_cpu(sim->ctx, &sim->p, sim->perm, sim->n, sim->a, sim->back);
    swap_sets(sim);
}

/* Groups particles by cell (dropping those that left) and puts them in that order (on the cpu
 * the collisions do that, cell by cell: gather_pending). */
static kedr_status run_index(kedr_dsmc *sim)
{
    size_t kept = 0;
    /* Over ranks the sort takes the rank's own cells only (local keys: the exchange leaves
     * them so; keys of the grid's cells are made local here, another rank's dropped). */
    if (sim->nlocal != sim->ncells && !sim->keys_local) {
        uint32_t *k = cell_keys(sim);
#ifdef KEDR_HAVE_CUDA
        if (KEDR_IS_CUDA(sim->ctx))
            KEDR_TRY(dsmc_keys_local_cuda(sim->ctx, k, sim->n, sim->cmap, (uint32_t)sim->ncells));
        else
#endif
            for (size_t i = 0; i < sim->n; i++)
                k[i] = dsmc_key_of(sim->cmap, k[i], (uint32_t)sim->ncells);
        sim->keys_local = 1;
    }
    /* The sort reads the cell keys in the spare's first half and works in its second, so
     * indexing takes no memory beyond the particle slots. */
    KEDR_TRY(kedr_counting_sort_in(sim->ctx, cell_keys(sim), sim->n, (uint32_t)sim->nlocal,
                                   sim->perm, sim->starts, sim->counts, &kept,
                                   (uint32_t *)sim->spare + sim->cap, sim->sort_scratch,
                                   sim->sort_scratch_bytes));
    if (sim->n == 0) { /* counting sort writes no counts for n = 0 */
        KEDR_TRY(kedr_memset(sim->ctx, sim->counts, 0, sim->nlocal * 4));
        KEDR_TRY(kedr_memset(sim->ctx, sim->starts, 0, sim->nlocal * 4));
    }
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx)) {
        /* every array of dsmc_particle_fields: a gas without them keeps no species,
         * rotational energies or vibrational levels (the argon benchmark box gathers five
         * arrays, not eight) */
        dsmc_field f[DSMC_MAX_FIELDS];
        int nf = dsmc_particle_fields(&sim->a, &sim->p, f);
        for (int k = 0; k < nf; k++)
            KEDR_TRY(gather_cuda(sim, kept, f[k].ptr, f[k].elem));
    } else
#endif
        sim->gather_pending = 1;
    sim->n = kept;
    sim->sorted = 1;
    sim->unindexed = 0;
    return KEDR_OK;
}

static int dsmc_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The new molecules of the step's dissociations, slots n .. n + made - 1 in the order their
 * threads claimed them, put in the order of their parents (the molecules that broke: in air
 * each at most once a step, as its first fragment is an atom; a molecule that broke twice did so
 * in one cell, whose collisions claim in their own order): a run then does not depend on the
 * order of the threads, or on their count. */
static kedr_status order_new(kedr_dsmc *sim, size_t made)
{
    if (made < 2)
        return KEDR_OK;
    kedr_status s = KEDR_OK;
    uint32_t *key = malloc(made * sizeof *key);
    uint64_t *order = malloc(made * sizeof *order);
    void *tmp = malloc(made * 8), *out = malloc(made * 8);
    if (!key || !order || !tmp || !out)
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_step: out of host memory for %zu new molecules",
                      made);
    if (s == KEDR_OK)
        s = kedr_download(sim->ctx, key, sim->perm + sim->n, made * sizeof *key);
    if (s == KEDR_OK) {
        for (size_t k = 0; k < made; k++)
            order[k] = (uint64_t)key[k] << 32 | k; /* parents are below 2^32 */
        qsort(order, made, sizeof *order, dsmc_cmp_u64);
    }
    dsmc_field f[DSMC_MAX_FIELDS];
    int nf = dsmc_particle_fields(&sim->a, &sim->p, f);
    for (int q = 0; q < nf && s == KEDR_OK; q++) {
        size_t e = f[q].elem;
        char *at = (char *)*f[q].ptr + sim->n * e;
        s = kedr_download(sim->ctx, tmp, at, made * e);
        for (size_t k = 0; k < made && s == KEDR_OK; k++)
            memcpy((char *)out + k * e, (char *)tmp + (order[k] & 0xffffffffu) * e, e);
        if (s == KEDR_OK)
            s = kedr_upload(sim->ctx, at, out, made * e);
    }
    free(key);
    free(order);
    free(tmp);
    free(out);
    return s;
}

/* The sort permutation is free between the gathers and the next indexing: collisions use it as
 * the scratch of dsmc_collide_cell (each molecule's last partner), and a reacting gas the part
 * past the particles as the new molecules' parents (dsmc_chem). */
static kedr_status run_collide(kedr_dsmc *sim)
{
    int react = sim->p.rx.nreact > 0;
    dsmc_chem ch;
    memset(&ch, 0, sizeof ch);
    int pending = sim->gather_pending;
    if (react) {
        /* the set the collisions write (the cpu collides in back, then swaps the sets) */
        dsmc_particles t = !KEDR_IS_CUDA(sim->ctx) && pending ? sim->back : sim->a;
        ch.x = t.x;
        ch.y = t.y;
        ch.z = t.z;
        ch.vx = t.vx;
        ch.vy = t.vy;
        ch.vz = t.vz;
        ch.erot = t.erot;
        ch.sp = t.sp;
        ch.vib = t.vib;
        ch.parent = sim->perm + sim->n;
        ch.counts = sim->chem_counts;
        ch.slots = sim->chem_counts + DSMC_MAXR + 1;
        ch.base = sim->n;
        ch.room = sim->cap - sim->n;
        KEDR_TRY(kedr_memset(sim->ctx, sim->chem_counts, 0, (DSMC_MAXR + 2) * sizeof(uint64_t)));
    }
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx)) {
        uint64_t h[3];
        KEDR_TRY(kedr_memset(sim->ctx, sim->counters, 0, 4 * sizeof h[0])); /* [3]: scratch */
        KEDR_TRY(dsmc_collide_cuda(sim->ctx, &sim->p, sim->cmap, sim->nlocal, sim->starts,
                                   sim->counts, sim->a, sim->perm, sim->sgmax, sim->counters,
                                   sim->crowded_min, react ? &ch : NULL));
        KEDR_TRY(kedr_download(sim->ctx, h, sim->counters, sizeof h));
        sim->collisions = h[0];
        sim->candidates = h[1];
        sim->sep_mfp = (double)h[2] / DSMC_SEP_UNIT;
    } else
#endif
    {
        dsmc_collide_cpu(sim->ctx, &sim->p, sim->cmap, sim->nlocal, sim->starts, sim->counts,
                         pending ? sim->back : sim->a, pending ? &sim->a : NULL, sim->n,
                         sim->perm, sim->sgmax, sim->cpu_plain ? NULL : sim->sgb,
                         sim->cpu_plain, react ? &ch : NULL, &sim->collisions,
                         &sim->candidates, &sim->sep_mfp);
        if (pending)
            swap_sets(sim);
    }
    if (react) {
        uint64_t h[DSMC_MAXR + 2];
        KEDR_TRY(kedr_download(sim->ctx, h, sim->chem_counts, sizeof h));
        size_t made = h[DSMC_MAXR + 1] < ch.room ? (size_t)h[DSMC_MAXR + 1] : ch.room;
        KEDR_TRY(order_new(sim, made));
        sim->n += made;
        sim->unindexed = made; /* in no cell until the next indexing */
        memcpy(sim->reactions, h, sizeof sim->reactions);
        if (h[DSMC_MAXR]) /* some had no room: twice what was missing more from now on */
            sim->chem_extra += 2 * (size_t)h[DSMC_MAXR];
    }
    return KEDR_OK;
}

kedr_status dsmc_sample_sums(kedr_dsmc *sim)
{
    if (sim->acc)
        return KEDR_OK;
    size_t bytes = sim->cells_cap * 8 * dsmc_nacc(&sim->p);
    KEDR_TRY(kedr_alloc(sim->ctx, (void **)&sim->acc, bytes));
    return kedr_memset(sim->ctx, sim->acc, 0, bytes);
}

static kedr_status run_sample(kedr_dsmc *sim)
{
    KEDR_TRY(dsmc_sample_sums(sim));
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx))
        KEDR_TRY(dsmc_sample_cuda(sim->ctx, &sim->p, sim->nlocal, sim->starts, sim->counts,
                                  sim->a, sim->acc));
    else
#endif
        dsmc_sample_cpu(sim->ctx, &sim->p, sim->nlocal, sim->starts, sim->counts, sim->a,
                        sim->acc);
    sim->samples++;
    return KEDR_OK;
}

/* [sample] start = auto (docs/dsmc.md, "Steady state"): how many standard errors a change
 * between window means may be before it counts as real. */
#define DSMC_STEADY_SIGMAS 3.0

/* The particles' total energy (1/2 m v^2 + e_rot of the simulated particles, J): the sampling
 * stage's cell sums, made in the sample sums and zeroed again (sampling has not begun). */
static kedr_status total_energy(kedr_dsmc *sim, double *energy)
{
    KEDR_TRY(dsmc_sample_sums(sim));
    /* The rank's own cells, into the sums (empty until sampling begins, and zeroed again
     * below). */
    size_t nc = sim->nlocal;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx))
        KEDR_TRY(dsmc_sample_cuda(sim->ctx, &sim->p, nc, sim->starts, sim->counts, sim->a,
                                  sim->acc));
    else
#endif
        dsmc_sample_cpu(sim->ctx, &sim->p, nc, sim->starts, sim->counts, sim->a, sim->acc);
    double mv2 = 0, erot = 0, evib = 0;
    KEDR_TRY(kedr_reduce(sim->ctx, KEDR_F64, KEDR_OP_SUM, sim->acc + DSMC_ACC_MV2 * nc, nc, &mv2));
    KEDR_TRY(kedr_reduce(sim->ctx, KEDR_F64, KEDR_OP_SUM, sim->acc + DSMC_ACC_EROT * nc, nc,
                         &erot));
    if (sim->p.vib)
        KEDR_TRY(kedr_reduce(sim->ctx, KEDR_F64, KEDR_OP_SUM, sim->acc + DSMC_ACC_EVIB * nc, nc,
                             &evib));
    *energy = 0.5 * mv2 + erot + evib;
    return kedr_memset(sim->ctx, sim->acc, 0, nc * 8 * dsmc_nacc(&sim->p));
}

/* Ends a window: its means and their standard errors, the larger of two estimates. One is the
 * noise of successive steps (the mean squared successive difference, which a smooth trend inside
 * the window does not inflate) over sqrt(window). The other counts the window as one sample of
 * an open domain's particle count, whose fluctuation is about sqrt(N) (the energy's then about
 * E / sqrt(N)): successive steps are correlated over a molecule's stay in the domain. */
static void steady_close(dsmc_steady *s)
{
    const int last = DSMC_STEADY_WINDOWS - 1;
    double w = (double)s->count;
    memmove(s->mean[0], s->mean[1], sizeof s->mean[0] * last);
    memmove(s->se[0], s->se[1], sizeof s->se[0] * last);
    double n = s->sum[0] / w;
    for (int k = 0; k < 2; k++) {
        double mean = s->sum[k] / w, se = sqrt(s->sumd2[k] / (2.0 * (w - 1.0)) / w);
        double count_se = n > 0 ? fabs(mean) / sqrt(n) : 0; /* sqrt(N) for the count */
        s->mean[last][k] = mean;
        s->se[last][k] = fmax(se, count_se);
        s->sum[k] = s->sumd2[k] = 0;
    }
    s->count = 0;
    s->windows++;
}

/* Whether observable k of the last DSMC_STEADY_WINDOWS windows is steady: each window mean
 * differs from the one before by at most DSMC_STEADY_SIGMAS combined standard errors plus
 * tol times the mean, and the least-squares line through them changes over the windows by at
 * most DSMC_STEADY_SIGMAS of its standard errors plus tol times the mean. */
static int steady_observable(const dsmc_steady *s, int k, double tol)
{
    const int m = DSMC_STEADY_WINDOWS;
    double mean = 0, sxx = 0, sxy = 0, var_b = 0;
    for (int i = 0; i < m; i++)
        mean += s->mean[i][k] / m;
    double slack = tol * fabs(mean);
    for (int i = 0; i < m; i++) {
        double xi = i - 0.5 * (m - 1);
        sxx += xi * xi;
        sxy += xi * (s->mean[i][k] - mean);
        var_b += xi * xi * s->se[i][k] * s->se[i][k];
        if (i > 0 && fabs(s->mean[i][k] - s->mean[i - 1][k]) >
                         DSMC_STEADY_SIGMAS * hypot(s->se[i][k], s->se[i - 1][k]) + slack)
            return 0;
    }
    double drift = fabs(sxy / sxx) * (m - 1), drift_se = sqrt(var_b) / sxx * (m - 1);
    return drift <= DSMC_STEADY_SIGMAS * drift_se + slack;
}

/* [sample] start = auto: adds this step's particle count and total energy to the window; when
 * the window is full and the last DSMC_STEADY_WINDOWS windows are steady in both, sampling
 * starts with the next step. */
static kedr_status steady_check(kedr_dsmc *sim)
{
    dsmc_steady *s = &sim->steady;
    double x[2] = {(double)sim->n, 0};
    KEDR_TRY(total_energy(sim, &x[1]));
    KEDR_TRY(dsmc_sum_ranks(sim, KEDR_F64, x, 2));
    for (int k = 0; k < 2; k++) {
        if (s->count > 0)
            s->sumd2[k] += (x[k] - s->last[k]) * (x[k] - s->last[k]);
        s->sum[k] += x[k];
        s->last[k] = x[k];
    }
    if (++s->count < sim->c.steady_window)
        return KEDR_OK;
    steady_close(s);
    if (s->windows < DSMC_STEADY_WINDOWS || !steady_observable(s, 0, sim->c.steady_tolerance) ||
        !steady_observable(s, 1, sim->c.steady_tolerance))
        return KEDR_OK;
    sim->c.sample_start = sim->step + 1;
    kedr_log(KEDR_LOG_INFO, "steady at step %lld (window means: particles %.6g, %.6g; energy "
             "%.6g J, %.6g J): sampling from step %lld", (long long)sim->step,
             s->mean[DSMC_STEADY_WINDOWS - 2][0], s->mean[DSMC_STEADY_WINDOWS - 1][0],
             s->mean[DSMC_STEADY_WINDOWS - 2][1], s->mean[DSMC_STEADY_WINDOWS - 1][1],
             (long long)sim->c.sample_start);
    return KEDR_OK;
}

kedr_status kedr_dsmc_step_stages(kedr_dsmc *sim, unsigned mask)
{
    if (!sim)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_step: sim is NULL");
    if (mask & ~(unsigned)KEDR_DSMC_ALL_STAGES)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_step_stages: mask 0x%x has unknown stages",
                         mask);
    if (sim->step >= (int64_t)UINT32_MAX - 1)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_step: the step counter is exhausted");
    double t0;
    sim->p.step = (uint32_t)(sim->step + 1); /* step 0 is the initial fill */
    sim->collisions = sim->candidates = sim->generated = 0;
    sim->sep_mfp = 0;
    memset(sim->reactions, 0, sizeof sim->reactions);
    size_t n_old = sim->n;
    if (mask & KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE)) {
        KEDR_TRY(stage_begin(sim, &t0));
        KEDR_TRY(inflow(sim));
        KEDR_TRY(stage_end(sim, KEDR_DSMC_GENERATE, t0));
        sim->sorted = 0;
    }
    /* Radial weighting adds copies after the move: room for a sixteenth more (a step's
     * copies are usually a few in a hundred) is made now, while a failure changes nothing. */
    if ((mask & KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE)) && sim->p.radial)
        KEDR_TRY(reserve(sim, sim->n + sim->n / 16 + 64));
    /* From the move on, a failure leaves a state between two steps (moved, not indexed...). */
    if (mask & KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE)) {
        sim->mid_step = 1;
        KEDR_TRY(stage_begin(sim, &t0));
        sim->keys_local = 0;
        KEDR_TRY(run_move(sim, n_old));
        sim->located = 1;
        KEDR_TRY(stage_end(sim, KEDR_DSMC_MOVE, t0));
        sim->sorted = 0;
        if (sim->nranks > 1) {
            KEDR_TRY(stage_begin(sim, &t0));
            KEDR_TRY(dsmc_exchange(sim, sim->comm, &sim->decomp, NULL));
            KEDR_TRY(stage_end(sim, KEDR_DSMC_EXCHANGE, t0));
        }
    }
    /* A reacting gas: room after the particles for the molecules its dissociations make
     * (run_collide), made before the indexing, whose cpu gather the collisions finish. An
     * eighth of the particles is far more than a step's dissociations where dt resolves the
     * chemistry; a step that needs more makes the dissociations it cannot place no more and
     * says so in its stats, and later steps make more room. */
    if ((mask & KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE)) && sim->p.rx.nreact) {
        size_t room = sim->n / 8 + 1024 + sim->chem_extra;
        if (mask & KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX))
            KEDR_TRY(reserve_keep(sim, sim->n + room, sim->located));
        else if (!sim->gather_pending)
            KEDR_TRY(reserve(sim, sim->n + room));
    }
    if (mask & KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX)) {
        sim->mid_step = 1;
        KEDR_TRY(stage_begin(sim, &t0));
        if (!sim->located)
            KEDR_TRY(run_locate(sim));
        KEDR_TRY(run_index(sim));
        KEDR_TRY(stage_end(sim, KEDR_DSMC_INDEX, t0));
        sim->located = 0;
    }
    unsigned needs_index = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE) |
                           KEDR_DSMC_STAGE_BIT(KEDR_DSMC_SAMPLE);
    if ((mask & needs_index) && !sim->sorted)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_step_stages: collisions and sampling need "
                         "the particles indexed after they last moved (add the INDEX stage)");
    if (mask & KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE)) {
        sim->mid_step = 1;
        KEDR_TRY(stage_begin(sim, &t0));
        KEDR_TRY(run_collide(sim));
        KEDR_TRY(stage_end(sim, KEDR_DSMC_COLLIDE, t0));
    }
    if (sim->gather_pending) { /* no collisions took the cells in order: the indexing does */
        KEDR_TRY(stage_begin(sim, &t0));
        finish_gather(sim);
        KEDR_TRY(stage_end(sim, KEDR_DSMC_INDEX, t0));
    }
    sim->step++;
    sim->time += sim->c.dt;
    sim->total_collisions += sim->collisions;
    sim->total_sep_mfp += sim->sep_mfp;
    sim->total_generated += sim->generated;
    if ((mask & KEDR_DSMC_STAGE_BIT(KEDR_DSMC_SAMPLE)) && sim->c.sample_auto &&
        sim->c.sample_start == INT64_MAX) {
        KEDR_TRY(stage_begin(sim, &t0));
        KEDR_TRY(steady_check(sim));
        KEDR_TRY(stage_end(sim, KEDR_DSMC_SAMPLE, t0));
    }
    if ((mask & KEDR_DSMC_STAGE_BIT(KEDR_DSMC_SAMPLE)) && sim->step >= sim->c.sample_start &&
        (sim->step - sim->c.sample_start) % sim->c.sample_every == 0) {
        KEDR_TRY(stage_begin(sim, &t0));
        KEDR_TRY(run_sample(sim));
        KEDR_TRY(stage_end(sim, KEDR_DSMC_SAMPLE, t0));
    }
    if (sim->nranks > 1 && sim->c.balance_every > 0 && sim->sorted &&
        sim->step % sim->c.balance_every == 0) { /* counted with the exchange */
        int moved = 0;
        KEDR_TRY(stage_begin(sim, &t0));
        KEDR_TRY(dsmc_balance(sim, &moved));
        KEDR_TRY(stage_end(sim, KEDR_DSMC_EXCHANGE, t0));
    }
    sim->mid_step = 0;
    return KEDR_OK;
}

kedr_status kedr_dsmc_step(kedr_dsmc *sim)
{
    return kedr_dsmc_step_stages(sim, KEDR_DSMC_ALL_STAGES);
}
