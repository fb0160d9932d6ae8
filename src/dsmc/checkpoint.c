/* DSMC checkpoints: the whole state of a run in one versioned binary file (layout in
 * docs/dsmc.md). Random numbers are keyed by (seed, entity, step, purpose), so the random stream's
 * position is just (seed, step); everything else that a step reads is stored, which is why a
 * restarted run continues bit for bit. Files hold host-order values with a byte-order mark and
 * end with an FNV-1a checksum, which catches accidents; a file is still untrusted input (anyone
 * can compute the checksum), so its size is checked against its header before anything is
 * allocated and every value against the case before sim is touched. */
#include "chem.h"
#include "exchange.h"
#include "sim.h"

#include "core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHK_MAGIC "KEDRDSMC"
#define CHK_END "KEDR-END"
/* 10: vibrating gases (the particles' levels, array "vib", and three more sample sums)
 * 11: over ranks each cell's (sigma g)max, sample sums and window mark are in the file of the
 *     rank that owns the cell (the other cells as a fresh simulator has them: the initial
 *     (sigma g)max, zero sums); a file of 10 may hold a column's sums in two files
 * 12: over ranks the split is a tree of cuts (its kind, then nranks - 1 dsmc_cut), not the
 *     column starts; later in 12, a mixture's sample sums have a row per species after the
 *     others (the header's nacc counts them): a mixture's file without them is refused, a
 *     simple gas's file is as before */
#define CHK_VERSION 12u
#define CHK_BOM 0x01020304u
#define CHK_CHUNK ((size_t)16 << 20) /* host staging buffer for device data */

typedef struct {
    char magic[8];
    uint32_t version, bom;
    uint64_t case_hash, seed;
    int64_t step, samples;
    double time;
    uint64_t collisions, candidates, generated, total_collisions, total_generated;
    uint32_t sorted, located;
    uint64_t n, ncells;
    uint32_t nfields, nacc;
    double sep_mfp, total_sep_mfp; /* collision separation / mean free path sums */
    uint64_t nelem;                /* surface elements whose sums follow the cell sums */
    int64_t surf_steps;            /* steps in those sums */
    int64_t sample_start;          /* as decided so far ([sample] start = auto) */
    dsmc_steady steady;            /* its steady-state test's windows */
    int32_t rank, nranks;          /* which rank of how many wrote it; over several ranks the
                                    * split follows the header: its kind (kedr_dsmc_split) and
                                    * a zero (int32 each), then nranks - 1 cuts (dsmc_cut) */
    int64_t marked;                /* 1: the window's mark (sums) follows the sample sums */
    int64_t mark_samples, mark_step;
} chk_header;

typedef struct {
    char name[16];
    uint64_t elem;
} chk_field;

/* The case as the run sees it, less what a restart may change (steps, output, seed, step). */
static uint64_t case_hash(const kedr_dsmc *sim)
{
    dsmc_params p;
    memcpy(&p, &sim->p, sizeof p); /* memcpy keeps the zeroed padding of sim->p */
    p.step = 0;
    p.seed = 0;
    dsmc_params_clear_addresses(&p); /* addresses of this run's buffers */
    /* a gas that does not react: the parameters as before chemistry (dsmc_params.rx last) */
    size_t tail = offsetof(dsmc_params, nlbodies);
    uint64_t h = kedr_fnv1a(KEDR_FNV_START, &p, p.rx.nreact ? tail : offsetof(dsmc_params, rx));
    /* outline bodies (after rx, so that a case without them hashes as before them): their
     * parameters and the hash of their segments' points */
    if (p.nlbodies)
        h = kedr_fnv1a(h, (const unsigned char *)&p + tail, offsetof(dsmc_params, mesh_cut) - tail);
    /* start = auto is decided during the run, so the hash takes the setting, not the step */
    int64_t sampling[2] = {sim->c.sample_auto ? -2 : sim->c.sample_start, sim->c.sample_every};
    h = kedr_fnv1a(h, sampling, sizeof sampling);
    uint64_t ncells = sim->ncells;
    h = kedr_fnv1a(h, &ncells, sizeof ncells);
    /* the rank and the split are in the header: a restart over as many ranks takes them, one
     * over another number gathers the files (kedr_dsmc_restart_files) */
    return h;
}

/* ---- writing ------------------------------------------------------------------------------ */

typedef struct {
    FILE *f;
    uint64_t hash;
    int failed;
} chk_writer;

static void put(chk_writer *w, const void *p, size_t len)
{
    w->hash = kedr_fnv1a(w->hash, p, len);
    if (!w->failed && len && fwrite(p, 1, len, w->f) != len)
        w->failed = 1;
}

/* Context memory through a host staging buffer; src NULL writes zeros. */
static kedr_status put_ctx(chk_writer *w, kedr_ctx *ctx, const void *src, size_t bytes, void *buf)
{
    if (!src)
        memset(buf, 0, bytes < CHK_CHUNK ? bytes : CHK_CHUNK);
    for (size_t off = 0; off < bytes; off += CHK_CHUNK) {
        size_t len = bytes - off < CHK_CHUNK ? bytes - off : CHK_CHUNK;
        if (src)
            KEDR_TRY(kedr_download(ctx, buf, (const char *)src + off, len));
        put(w, buf, len);
    }
    return KEDR_OK;
}

static void fill_header(const kedr_dsmc *sim, int nf, chk_header *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CHK_MAGIC, 8);
    h->version = CHK_VERSION;
    h->bom = CHK_BOM;
    h->case_hash = case_hash(sim);
    h->seed = sim->c.seed;
    h->step = sim->step;
    h->samples = sim->samples;
    h->time = sim->time;
    h->collisions = sim->collisions;
    h->candidates = sim->candidates;
    h->generated = sim->generated;
    h->total_collisions = sim->total_collisions;
    h->total_generated = sim->total_generated;
    h->sep_mfp = sim->sep_mfp;
    h->total_sep_mfp = sim->total_sep_mfp;
    h->sorted = (uint32_t)dsmc_indexed_all(sim);
    h->located = (uint32_t)sim->located;
    h->n = sim->n;
    h->ncells = sim->ncells;
    h->nfields = (uint32_t)nf;
    h->nacc = (uint32_t)dsmc_nacc(&sim->p);
    h->nelem = sim->geo.surf ? sim->geo.nelem : 0;
    h->surf_steps = sim->geo.surf_steps;
    h->sample_start = sim->c.sample_start;
    h->steady = sim->steady;
    h->rank = sim->rank;
    h->nranks = sim->nranks;
    h->marked = sim->mark != NULL;
    h->mark_samples = sim->mark_samples;
    h->mark_step = sim->mark_step;
}

/* A rank's cell ranges (local cells, dsmc_cellmap) as the file holds them, by global cell: the
 * other ranks' cells empty, their starts where the next own cell's would be (what indexing
 * every cell of the grid gives). Host memory, 2 x ncells words: starts, then counts. */
static kedr_status global_ranges(kedr_dsmc *sim, uint32_t **out)
{
    size_t nc = sim->ncells, nl = sim->nlocal;
    uint32_t *g = malloc(2 * nc * sizeof *g), *lc = malloc((nl ? nl : 1) * sizeof *lc);
    kedr_status s = g && lc ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_write_checkpoint: "
                                                  "out of host memory for %zu cells", nc);
    if (s == KEDR_OK)
        s = kedr_download(sim->ctx, lc, sim->counts, nl * sizeof *lc);
    if (s == KEDR_OK) {
        uint32_t at = 0;
        size_t l = 0;
        for (size_t c = 0; c < nc; c++) {
            int mine = dsmc_key_of(sim->cmap, (uint32_t)c, (uint32_t)nc) < nc;
            g[c] = at;
            g[nc + c] = mine ? lc[l++] : 0;
            at += g[nc + c];
        }
    }
    free(lc);
    if (s != KEDR_OK)
        free(g);
    *out = s == KEDR_OK ? g : NULL;
    return s;
}

/* A per-cell array of the rank's layout (rows of nlocal, elem bytes a cell; context memory, or
 * host memory when host is set) written by the grid's cells: the rank's own, and the other
 * ranks' cells as a fresh simulator has them (fill: one element, sg_init or zero). */
static kedr_status put_cells(chk_writer *w, kedr_dsmc *sim, const void *local, int host,
                             size_t elem, size_t rows, const void *fill, void *buf)
{
    size_t nc = sim->ncells, nl = sim->nlocal;
    if (sim->nranks <= 1) { /* every cell the rank's, in the grid's order */
        if (host)
            put(w, local, nc * elem * rows);
        else
            KEDR_TRY(put_ctx(w, sim->ctx, local, nc * elem * rows, buf));
        return KEDR_OK;
    }
    void *mine = host ? NULL : malloc((nl ? nl : 1) * elem * rows);
    char *grid = malloc(nc * elem);
    kedr_status s = grid && (host || mine) ? KEDR_OK
        : kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_write_checkpoint: out of host memory for %zu "
                    "cells", nc);
    if (s == KEDR_OK && !host)
        s = kedr_download(sim->ctx, mine, local, nl * elem * rows);
    for (size_t k = 0; s == KEDR_OK && k < rows; k++) {
        for (size_t c = 0; c < nc; c++)
            memcpy(grid + c * elem, fill, elem);
        dsmc_cells_to_grid(sim, (const char *)(host ? local : mine) + k * nl * elem, grid, elem,
                           1);
        put(w, grid, nc * elem);
    }
    free(mine);
    free(grid);
    return s;
}

static kedr_status write_body(kedr_dsmc *sim, chk_writer *w, void *buf)
{
    dsmc_field fields[DSMC_MAX_FIELDS];
    int nf = dsmc_particle_fields(&sim->a, &sim->p, fields);
    chk_header h;
    fill_header(sim, nf, &h);
    put(w, &h, sizeof h);
    if (sim->nranks > 1) {
        int32_t kind[2] = {sim->decomp.kind, 0};
        put(w, kind, sizeof kind);
        put(w, sim->decomp.cut, (size_t)(sim->nranks - 1) * sizeof *sim->decomp.cut);
    }
    for (int k = 0; k < nf; k++) {
        chk_field fd;
        memset(&fd, 0, sizeof fd);
        snprintf(fd.name, sizeof fd.name, "%s", fields[k].name);
        fd.elem = fields[k].elem;
        put(w, &fd, sizeof fd);
        KEDR_TRY(put_ctx(w, sim->ctx, *fields[k].ptr, sim->n * fields[k].elem, buf));
    }
    /* The cell ranges of particles not in cell order are stale (or never set) and unused until
     * the next indexing: they are stored as zeros. */
    size_t nc = sim->ncells;
    if (dsmc_indexed_all(sim) && sim->nlocal != nc) { /* own cells: written by global cell */
        uint32_t *g = NULL;
        KEDR_TRY(global_ranges(sim, &g));
        put(w, g, 2 * nc * sizeof *g);
        free(g);
    } else {
        KEDR_TRY(put_ctx(w, sim->ctx, dsmc_indexed_all(sim) ? sim->starts : NULL, nc * 4, buf));
        KEDR_TRY(put_ctx(w, sim->ctx, dsmc_indexed_all(sim) ? sim->counts : NULL, nc * 4, buf));
    }
    const double zero = 0;
    KEDR_TRY(put_cells(w, sim, sim->sgmax, 0, sizeof *sim->sgmax, 1, &sim->sg_init, buf));
    KEDR_TRY(dsmc_sample_sums(sim));
    KEDR_TRY(put_cells(w, sim, sim->acc, 0, 8, h.nacc, &zero, buf));
    if (h.marked)
        KEDR_TRY(put_cells(w, sim, sim->mark, 1, 8, h.nacc, &zero, buf));
    if (h.nelem)
        KEDR_TRY(put_ctx(w, sim->ctx, sim->geo.surf, h.nelem * 8 * DSMC_NSURF, buf));
    uint64_t sum = w->hash;
    put(w, &sum, sizeof sum);
    put(w, CHK_END, 8);
    return KEDR_OK;
}

kedr_status kedr_dsmc_write_checkpoint(kedr_dsmc *sim, const char *path)
{
    const char *fn = "kedr_dsmc_write_checkpoint";
    if (!sim || !path || !path[0])
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s", fn, !sim ? "sim is NULL" : "path is empty");
    if (sim->mid_step)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s: step %lld failed after the particles moved; "
                         "that state cannot be continued exactly, so it is not saved", fn, path,
                         (long long)sim->step + 1);
    void *buf = malloc(CHK_CHUNK);
    if (!buf)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    /* PATH.tmp, synced and renamed over PATH (a regular file or none): a crash leaves the old
     * checkpoint or the new one, and a device or FIFO given as the path is refused. */
    kedr_file_writer fw;
    kedr_status s = kedr_file_begin(&fw, path);
    if (s != KEDR_OK) {
        free(buf);
        return s;
    }
    chk_writer w = {KEDR_FILE(&fw), KEDR_FNV_START, 0};
    s = write_body(sim, &w, buf);
    free(buf);
    if (s == KEDR_OK && w.failed)
        s = kedr_fail(KEDR_ERR_IO, "%s: %s: write error: %s", fn, fw.tmp, strerror(errno));
    if (s != KEDR_OK) {
        kedr_file_abort(&fw);
        return s;
    }
    return kedr_file_commit(&fw);
}

/* ---- what a file may hold ----------------------------------------------------------------- */

/* A checkpoint is untrusted input: besides its size and checksum, every value is checked against
 * bounds from the case before it reaches sim, so that no file can make a step endless (a huge or
 * NaN (sigma g)max asks for that many candidates), send a molecule to 1e300 m or index past an
 * array. The bounds are generous: a run's own file never comes near them. */
typedef enum {
    A_POS, A_VEL, A_EROT, A_SPECIES, A_VIB, A_STARTS, A_COUNTS, A_SGMAX, A_ACC, A_SURF
} chk_kind;

typedef struct {
    const char *name;
    chk_kind kind;
    int axis; /* A_POS: 0, 1, 2 */
} chk_array;

typedef struct {
    const char *path;
    double lo[3], hi[3];  /* positions: the domain, widened by a millionth of its size */
    double vmax, emax;    /* bounds on each velocity component, m/s, and rotational energy, J */
    double sg_lo, sg_hi;  /* (sigma g)max, m^3/s */
    int nspecies, sorted;
    uint32_t species_row;     /* the sample sums' first species row (a mixture's) */
    const kedr_dsmc_species *species;
    uint64_t n, ncells, nelem;
    int64_t samples;
    uint32_t *starts;     /* host copy of the cell starts, for the counts' check */
    uint64_t next;        /* the counts' sum so far */
} chk_limits;

/* sigma g of the pair where it is largest, at relative speed g (as kedr_dsmc_create takes it). */
static double sg_at(const dsmc_params *p, double g)
{
    double sg = 0;
    for (int i = 0; i < p->nspecies; i++)
        for (int j = 0; j < p->nspecies; j++) {
            int k = i * DSMC_MAXS + j;
            sg = fmax(sg, p->sigma_a[k] * pow(g, p->sigma_e[k]) * g);
        }
    return sg;
}

static void limits_of(const kedr_dsmc *sim, const chk_header *h, const char *path, chk_limits *l)
{
    const dsmc_params *p = &sim->p;
    double u = 0, t = sim->c.temperature, m_lo = HUGE_VAL, m_hi = 0;
    for (int s = 0; s < 2; s++) {
        u = fmax(u, sqrt(p->gas_u[s][0] * p->gas_u[s][0] + p->gas_u[s][1] * p->gas_u[s][1] +
                         p->gas_u[s][2] * p->gas_u[s][2]));
        t = fmax(t, p->gas_t[s]);
    }
    for (int b = 0; b <= KEDR_DSMC_MAX_BODIES; b++) {
        u = fmax(u, hypot(p->body_u[b][0], p->body_u[b][1]));
        t = fmax(t, p->body_t[b]);
    }
    for (int k = 0; k < p->nspecies; k++) {
        m_lo = fmin(m_lo, p->mass[k]);
        m_hi = fmax(m_hi, p->mass[k]);
    }
    /* The most probable speed of the lightest species in the hottest gas or wall: molecules move
     * at the flows' and walls' speeds plus a few of it; a hundred times their sum is far beyond
     * what a run reaches (energy ten thousand times the hottest state's). */
    double c = sqrt(2.0 * KEDR_BOLTZMANN * t / m_lo);
    memset(l, 0, sizeof *l);
    l->path = path;
    l->vmax = 100.0 * (u + c);
    l->emax = m_hi * l->vmax * l->vmax;
    /* (sigma g)max starts at its value for three such speeds (kedr_dsmc_create) and only rises
     * to what pairs meet, and no pair is faster than 2 sqrt(3) vmax; sigma g grows with g
     * (omega <= 1). */
    l->sg_lo = 1e-3 * sg_at(p, c);
    l->sg_hi = 2.0 * fmax(sg_at(p, 2.0 * sqrt(3.0) * l->vmax), sg_at(p, 3.0 * c));
    if (p->rx.nreact) /* pairs whose reaction cross-section is the larger select with it (chem.c) */
        l->sg_hi = fmax(l->sg_hi, 2.0 * dsmc_chem_sg_max(p, 6.0 * l->emax));
    for (int d = 0; d < 3; d++) {
        double tol = 1e-6 * (sim->c.hi[d] - sim->c.lo[d]);
        l->lo[d] = sim->c.lo[d] - tol;
        l->hi[d] = sim->c.hi[d] + tol;
    }
    l->nspecies = p->nspecies;
    l->species_row = (uint32_t)dsmc_acc_species(p);
    l->species = sim->c.species;
    l->sorted = (int)h->sorted;
    l->n = h->n;
    l->ncells = h->ncells;
    l->nelem = h->nelem;
    l->samples = h->samples;
}

/* A value out of its range: the file, the array, the index and the value. */
static kedr_status bad_value(const chk_limits *l, const char *what, uint64_t i, const char *name,
                             double v, const char *expected)
{
    return kedr_fail(KEDR_ERR_PARSE, "%s: %s %llu: %s = %.17g: expected %s", l->path, what,
                     (unsigned long long)i, name, v, expected);
}

static int in_range(double v, double lo, double hi) { return v >= lo && v <= hi; }

static kedr_status check_particles(const chk_limits *l, const chk_array *a, const void *data,
                                   size_t count, uint64_t first)
{
    char e[160];
    const double *d = data;
    for (size_t i = 0; i < count; i++) {
        uint64_t at = first + i;
        double v = a->kind == A_EROT      ? (double)((const float *)data)[i]
                   : a->kind == A_SPECIES ? (double)((const uint8_t *)data)[i]
                                          : d[i];
        if (a->kind == A_POS && !in_range(v, l->lo[a->axis], l->hi[a->axis])) {
            snprintf(e, sizeof e, "a position in the domain, [%.9g, %.9g] m", l->lo[a->axis],
                     l->hi[a->axis]);
            return bad_value(l, "particle", at, a->name, v, e);
        }
        if (a->kind == A_VEL && !in_range(v, -l->vmax, l->vmax)) {
            snprintf(e, sizeof e, "a finite velocity of at most %.3g m/s in size (100 times the "
                     "case's flow and thermal speeds)", l->vmax);
            return bad_value(l, "particle", at, a->name, v, e);
        }
        if (a->kind == A_EROT && !in_range(v, 0, l->emax)) {
            snprintf(e, sizeof e, "a finite energy from 0 to %.3g J", l->emax);
            return bad_value(l, "particle", at, a->name, v, e);
        }
        if (a->kind == A_SPECIES && !(v < l->nspecies)) {
            snprintf(e, sizeof e, "a species index below %d", l->nspecies);
            return bad_value(l, "particle", at, a->name, v, e);
        }
    }
    return KEDR_OK;
}

/* The cell ranges of particles in cell order: starts the exclusive scan of the counts, which add
 * up to n (collisions and sampling index the particle arrays with them); all zero otherwise. */
static kedr_status check_ranges(chk_limits *l, const chk_array *a, const uint32_t *v,
                                size_t count, uint64_t first)
{
    char e[160];
    for (size_t i = 0; i < count; i++) {
        uint64_t c = first + i;
        if (!l->sorted && v[i] != 0)
            return bad_value(l, "cell", c, a->name, v[i], "0 (the particles are not in cell "
                             "order, so the file keeps no cell ranges)");
        if (!l->sorted)
            continue;
        if (a->kind == A_STARTS) {
            l->starts[c] = v[i];
            continue;
        }
        if (l->starts[c] != l->next) {
            snprintf(e, sizeof e, "%llu, the sum of the counts of the cells before it",
                     (unsigned long long)l->next);
            return bad_value(l, "cell", c, "start", l->starts[c], e);
        }
        l->next += v[i];
        if (l->next > l->n) {
            snprintf(e, sizeof e, "counts that add up to the %llu particles (these reach %llu)",
                     (unsigned long long)l->n, (unsigned long long)l->next);
            return bad_value(l, "cell", c, a->name, v[i], e);
        }
    }
    return KEDR_OK;
}

/* Sample sums (dsmc_nacc rows of ncells) and surface sums (DSMC_NSURF rows of nelem). */
static kedr_status check_sums(const chk_limits *l, const chk_array *a, const double *v,
                              size_t count, uint64_t first)
{
    static const char *const acc_names[DSMC_NACC_MAX] = {
        [DSMC_ACC_N] = "sampled particles", [DSMC_ACC_M] = "sampled mass",
        [DSMC_ACC_MVX] = "sampled momentum x", [DSMC_ACC_MVY] = "sampled momentum y",
        [DSMC_ACC_MVZ] = "sampled momentum z", [DSMC_ACC_MV2] = "sampled m v^2",
        [DSMC_ACC_EROT] = "sampled rotational energy", [DSMC_ACC_ZETA] = "sampled rotational dof",
        [DSMC_ACC_EVIB] = "sampled vibrational energy",
        [DSMC_ACC_NVIB] = "sampled vibrating molecules", [DSMC_ACC_THETA] = "sampled theta_v"};
    static const char *const surf_names[DSMC_NSURF] = {
        [DSMC_SURF_HITS] = "surface hits", [DSMC_SURF_PIN] = "surface momentum in",
        [DSMC_SURF_POUT] = "surface momentum out", [DSMC_SURF_SHEAR] = "surface shear",
        [DSMC_SURF_EIN] = "surface energy in", [DSMC_SURF_EOUT] = "surface energy out",
        [DSMC_SURF_FX] = "surface force x", [DSMC_SURF_FY] = "surface force y",
        [DSMC_SURF_FZ] = "surface force z"};
    int acc = a->kind == A_ACC;
    uint64_t rows = acc ? l->ncells : l->nelem;
    char e[160], name[64];
    for (size_t i = 0; i < count; i++) {
        uint64_t row = (first + i) / rows, at = (first + i) % rows;
        int species = acc && row >= l->species_row; /* a mixture's molecules of one species */
        int positive = acc ? row == DSMC_ACC_N || row == DSMC_ACC_M || row == DSMC_ACC_MV2 ||
                                 row == DSMC_ACC_EROT || row == DSMC_ACC_ZETA ||
                                 row >= DSMC_ACC_EVIB
                           : row == DSMC_SURF_HITS;
        /* at most 2^32 particles a cell in each sample */
        double hi = acc && (row == DSMC_ACC_N || species) ? (double)l->samples * 4294967296.0
                                                          : HUGE_VAL;
        if (!isfinite(v[i]) || (positive && !in_range(v[i], 0, hi))) {
            if (hi < HUGE_VAL)
                snprintf(e, sizeof e, "a sum from 0 to %lld samples x 2^32", (long long)l->samples);
            else
                snprintf(e, sizeof e, "a finite sum%s", positive ? " >= 0" : "");
            if (species)
                snprintf(name, sizeof name, "sampled molecules of %s",
                         l->species[row - l->species_row].name);
            return bad_value(l, acc ? "cell" : "surface element", at,
                             species ? name : acc ? acc_names[row] : surf_names[row], v[i], e);
        }
    }
    return KEDR_OK;
}

/* One chunk of an array as read from the file, off bytes from the array's start. */
static kedr_status check_chunk(chk_limits *l, const chk_array *a, const void *data, size_t len,
                               uint64_t off)
{
    char e[200];
    switch (a->kind) {
    case A_POS:
    case A_VEL:
    case A_EROT:
        return check_particles(l, a, data, len / (a->kind == A_EROT ? 4 : 8),
                               off / (a->kind == A_EROT ? 4 : 8));
    case A_SPECIES:
        return check_particles(l, a, data, len, off);
    case A_VIB:
        return KEDR_OK; /* every byte is a level from 0 to DSMC_VIB_MAX */
    case A_STARTS:
    case A_COUNTS:
        return check_ranges(l, a, data, len / 4, off / 4);
    case A_SGMAX:
        for (size_t i = 0; i < len / 4; i++) {
            double v = ((const float *)data)[i];
            if (!in_range(v, l->sg_lo, l->sg_hi)) {
                snprintf(e, sizeof e, "a finite value from %.3g to %.3g m^3/s (from a thousandth "
                         "of the gas's thermal value to twice the largest a pair can reach)",
                         l->sg_lo, l->sg_hi);
                return bad_value(l, "cell", off / 4 + i, a->name, v, e);
            }
        }
        return KEDR_OK;
    case A_ACC:
    case A_SURF:
        return check_sums(l, a, data, len / 8, off / 8);
    }
    return kedr_fail(KEDR_ERR_PARSE, "%s: array %s of unknown kind %d", l->path, a->name,
                     (int)a->kind);
}

/* The particle array named name (from dsmc_particle_fields). */
static kedr_status array_of(const chk_limits *l, const char *name, chk_array *a)
{
    static const chk_array known[] = {{"x", A_POS, 0},   {"y", A_POS, 1},    {"z", A_POS, 2},
                                      {"vx", A_VEL, 0},  {"vy", A_VEL, 0},   {"vz", A_VEL, 0},
                                      {"erot", A_EROT, 0}, {"species", A_SPECIES, 0},
                                      {"vib", A_VIB, 0}};
    for (size_t k = 0; k < sizeof known / sizeof *known; k++)
        if (strcmp(known[k].name, name) == 0) {
            *a = known[k];
            return KEDR_OK;
        }
    return kedr_fail(KEDR_ERR_PARSE, "%s: particle array '%s' has no checks (a new array needs "
                     "its range in checkpoint.c: array_of)", l->path, name);
}

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct {
    FILE *f;
    const char *path;
    uint64_t hash, size;
    size_t chunk; /* staging buffer: CHK_CHUNK, or the whole file when smaller */
    int merge;    /* gathering another run's ranks: any rank of any number is welcome */
    int32_t kind;  /* the split the file holds (over several ranks): its kind and cuts */
    dsmc_cut *cut;
} chk_reader;

static kedr_status get(chk_reader *r, void *p, size_t len)
{
    if (len && fread(p, 1, len, r->f) != len)
        return kedr_fail(KEDR_ERR_PARSE, "%s: truncated checkpoint (ends at byte %ld)", r->path,
                         ftell(r->f));
    r->hash = kedr_fnv1a(r->hash, p, len);
    return KEDR_OK;
}

/* An array into context memory (dst; ctx NULL: host memory), or only through the checksum and
 * the checks (dst NULL). */
static kedr_status get_ctx(chk_reader *r, chk_limits *l, const chk_array *a, kedr_ctx *ctx,
                           void *dst, size_t bytes, void *buf)
{
    for (size_t off = 0; off < bytes; off += r->chunk) {
        size_t len = bytes - off < r->chunk ? bytes - off : r->chunk;
        KEDR_TRY(get(r, buf, len));
        KEDR_TRY(check_chunk(l, a, buf, len, off));
        if (dst && ctx)
            KEDR_TRY(kedr_upload(ctx, (char *)dst + off, buf, len));
        else if (dst) /* ctx NULL: host memory */
            memcpy((char *)dst + off, buf, len);
    }
    return KEDR_OK;
}

/* Gathering: an array combined into host memory, element by element: sums of doubles (sample
 * and surface sums) or the largest of floats ((sigma g)max). Chunks hold whole elements. */
typedef struct {
    double *acc, *surf, *mark;
    float *sgmax;
    /* 0: a rank's own file over as many ranks, read by the grid's cells into these host arrays
     * (surf unused; starts and counts: the cell ranges) to be made local after (cells_local) */
    int gather;
    uint32_t *starts, *counts;
} chk_merge;

static kedr_status get_merge(chk_reader *r, chk_limits *l, const chk_array *a, void *dst,
                             int is_max, size_t bytes, void *buf)
{
    for (size_t off = 0; off < bytes; off += r->chunk) {
        size_t len = bytes - off < r->chunk ? bytes - off : r->chunk;
        KEDR_TRY(get(r, buf, len));
        KEDR_TRY(check_chunk(l, a, buf, len, off));
        if (is_max) {
            float *d = (float *)dst + off / 4;
            const float *v = (const float *)buf;
            for (size_t i = 0; i < len / 4; i++)
                d[i] = v[i] > d[i] ? v[i] : d[i];
        } else {
            double *d = (double *)dst + off / 8;
            const double *v = (const double *)buf;
            for (size_t i = 0; i < len / 8; i++)
                d[i] += v[i];
        }
    }
    return KEDR_OK;
}

/* The file's size from its header, without overflow (0 when it would not fit in 64 bits). */
static uint64_t size_of(const chk_header *h, const dsmc_field *fields, int nf)
{
    uint64_t size = sizeof *h + 16, t;
    if (h->nranks > 1)
        size += 8 + ((uint64_t)h->nranks - 1) * sizeof(dsmc_cut);
    int bad = 0;
    for (int k = 0; k < nf; k++) {
        bad |= __builtin_mul_overflow(h->n, (uint64_t)fields[k].elem, &t);
        bad |= __builtin_add_overflow(size, t + sizeof(chk_field), &size);
    }
    bad |= __builtin_mul_overflow(h->ncells, (uint64_t)(4 + 4 + 4 + 8 * (uint64_t)h->nacc *
                                                        (h->marked ? 2 : 1)), &t);
    bad |= __builtin_add_overflow(size, t, &size);
    bad |= __builtin_mul_overflow(h->nelem, (uint64_t)(8 * DSMC_NSURF), &t);
    bad |= __builtin_add_overflow(size, t, &size);
    return bad ? 0 : size;
}

/* The header's layout: this format, this case, and a file of the size it describes. */
static kedr_status check_shape(const chk_reader *r, const kedr_dsmc *sim, const chk_header *h)
{
    if (h->bom != CHK_BOM)
        return kedr_fail(KEDR_ERR_PARSE, "%s: written on a machine of the other byte order",
                         r->path);
    if (h->version != CHK_VERSION)
        return kedr_fail(KEDR_ERR_PARSE, "%s: checkpoint version %u; this kedr reads version %u",
                         r->path, h->version, CHK_VERSION);
    if (h->case_hash != case_hash(sim))
        return kedr_fail(KEDR_ERR_PARSE, "%s: written for another case (physics, grid or "
                         "sampling differ, or another kedr build)", r->path);
    if (h->nranks < 1 || (uint64_t)h->nranks > sim->ncells || h->rank < 0 ||
        h->rank >= h->nranks)
        return kedr_fail(KEDR_ERR_PARSE, "%s: header fields rank %d, nranks %d: expected a rank "
                         "below nranks, and 1 to %zu ranks (the grid's cells)", r->path, h->rank,
                         h->nranks, sim->ncells);
    if (h->marked != 0 && h->marked != 1)
        return kedr_fail(KEDR_ERR_PARSE, "%s: header field marked = %lld: expected 0 or 1",
                         r->path, (long long)h->marked);
    if (!r->merge && (h->nranks != sim->nranks || h->rank != sim->rank))
        return kedr_fail(KEDR_ERR_PARSE, "%s: written by rank %d of a run over %d rank%s; this is "
                         "rank %d of %d (kedr_dsmc_restart_files gathers another run's ranks)",
                         r->path, h->rank, h->nranks, h->nranks > 1 ? "s" : "", sim->rank,
                         sim->nranks);
    dsmc_particles a = sim->a;
    dsmc_field fields[DSMC_MAX_FIELDS];
    int nf = dsmc_particle_fields(&a, &sim->p, fields);
    uint64_t nelem = sim->geo.surf ? sim->geo.nelem : 0;
    size_t nacc = dsmc_nacc(&sim->p), nsp = dsmc_acc_nspecies(&sim->p);
    if (nsp && h->nacc == nacc - nsp)
        return kedr_fail(KEDR_ERR_PARSE, "%s: written by an older kedr: its sample sums have no "
                         "per-species rows (%u sums; this run of %zu species keeps %zu); restart "
                         "it with the kedr that wrote it, or start the run again", r->path,
                         h->nacc, nsp, nacc);
    if (h->ncells != sim->ncells || h->nacc != nacc ||
        h->nfields != (uint32_t)nf ||
        h->nelem != nelem)
        return kedr_fail(KEDR_ERR_PARSE, "%s: %llu cells, %u sample sums, %u particle arrays, "
                         "%llu surface elements; this run has %zu, %d, %d, %llu", r->path,
                         (unsigned long long)h->ncells, h->nacc, h->nfields,
                         (unsigned long long)h->nelem, sim->ncells, (int)dsmc_nacc(&sim->p), nf,
                         (unsigned long long)nelem);
    if (h->n >= ((uint64_t)1 << 32))
        return kedr_fail(KEDR_ERR_PARSE, "%s: header field n = %llu particles: expected fewer "
                         "than 2^32", r->path, (unsigned long long)h->n);
    if (sim->c.max_particles && h->n > sim->c.max_particles)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: %llu particles exceed [run] max_particles = %zu",
                         r->path, (unsigned long long)h->n, sim->c.max_particles);
    uint64_t want = size_of(h, fields, nf);
    if (r->size != want)
        return kedr_fail(KEDR_ERR_PARSE, "%s: %s checkpoint: %llu bytes; its header (%llu "
                         "particles, %llu cells, %llu surface elements) makes %llu", r->path,
                         r->size < want ? "truncated" : "corrupt", (unsigned long long)r->size,
                         (unsigned long long)h->n, (unsigned long long)h->ncells,
                         (unsigned long long)h->nelem, (unsigned long long)want);
    return KEDR_OK;
}

static kedr_status bad_field(const chk_reader *r, const char *name, double v, const char *expected)
{
    return kedr_fail(KEDR_ERR_PARSE, "%s: header field %s = %.17g: expected %s", r->path, name, v,
                     expected);
}

/* [sample] start = auto: the steady-state test's windows (dsmc_steady: two counters, then
 * doubles only). */
static kedr_status check_steady(const chk_reader *r, const kedr_dsmc *sim, const chk_header *h)
{
    _Static_assert(sizeof(dsmc_steady) % 8 == 0, "dsmc_steady: counters, then doubles");
    const dsmc_steady *s = &h->steady;
    int64_t window = sim->c.sample_auto ? sim->c.steady_window : INT64_MAX;
    if (s->count < 0 || s->count >= window)
        return bad_field(r, "steady.count", (double)s->count, "0 to [sample] steady_window - 1");
    if (s->windows < 0)
        return bad_field(r, "steady.windows", (double)s->windows, "a count >= 0");
    const double *d = (const double *)(&s->windows + 1);
    size_t nd = (sizeof *s - 2 * sizeof(int64_t)) / sizeof(double);
    for (size_t i = 0; i < nd; i++)
        if (!isfinite(d[i]))
            return kedr_fail(KEDR_ERR_PARSE, "%s: header field steady (sum %zu) = %g: expected "
                             "a finite value", r->path, i, d[i]);
    return KEDR_OK;
}

/* The header's values: counters, time and the sampling state, each in its range. */
static kedr_status check_values(const chk_reader *r, const kedr_dsmc *sim, const chk_header *h)
{
    char e[160];
    if (h->step < 0 || h->step >= (int64_t)UINT32_MAX - 1)
        return bad_field(r, "step", (double)h->step, "0 to 2^32 - 3");
    if (h->samples < 0 || h->samples > h->step)
        return bad_field(r, "samples", (double)h->samples, "0 to the step count");
    if (h->mark_samples < 0 || h->mark_samples > h->samples)
        return bad_field(r, "mark_samples", (double)h->mark_samples, "0 to the samples");
    if (h->mark_step < 0 || h->mark_step > h->step)
        return bad_field(r, "mark_step", (double)h->mark_step, "0 to the step count");
    if (h->surf_steps < 0 || h->surf_steps > h->step)
        return bad_field(r, "surf_steps", (double)h->surf_steps, "0 to the step count");
    if (h->sorted > 1 || h->located > 1)
        return bad_field(r, h->sorted > 1 ? "sorted" : "located",
                         h->sorted > 1 ? h->sorted : h->located, "0 or 1");
    double t = (double)h->step * sim->c.dt;
    snprintf(e, sizeof e, "step x dt = %.17g s", t);
    if (!(fabs(h->time - t) <= 1e-6 * t))
        return bad_field(r, "time", h->time, e);
    if (!in_range(h->sep_mfp, 0, HUGE_VAL) || !in_range(h->total_sep_mfp, 0, HUGE_VAL))
        return bad_field(r, in_range(h->sep_mfp, 0, HUGE_VAL) ? "total_sep_mfp" : "sep_mfp",
                         in_range(h->sep_mfp, 0, HUGE_VAL) ? h->total_sep_mfp : h->sep_mfp,
                         "a finite sum >= 0");
    /* start = auto: INT64_MAX until the flow is steady, then a step after the steady one */
    int64_t ss = h->sample_start;
    if (sim->c.sample_auto && ss != INT64_MAX && !(ss >= 1 && ss <= h->step + 1))
        return bad_field(r, "sample_start", (double)ss, "the step after the steady one, at "
                         "most the step count + 1, or 2^63 - 1 (not steady yet)");
    if (!sim->c.sample_auto && ss != sim->c.sample_start) {
        snprintf(e, sizeof e, "[sample] start = %lld", (long long)sim->c.sample_start);
        return bad_field(r, "sample_start", (double)ss, e);
    }
    return check_steady(r, sim, h);
}

/* Reads the header and checks it against sim (the reader's hash then covers it). */
static kedr_status read_header(chk_reader *r, const kedr_dsmc *sim, chk_header *h)
{
    memset(h, 0, sizeof *h);
    if (fread(h->magic, 1, 8, r->f) != 8 || memcmp(h->magic, CHK_MAGIC, 8) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s: not a kedr DSMC checkpoint (no %s signature)",
                         r->path, CHK_MAGIC);
    r->hash = kedr_fnv1a(r->hash, h->magic, 8);
    KEDR_TRY(get(r, (char *)h + 8, sizeof *h - 8));
    KEDR_TRY(check_shape(r, sim, h));
    KEDR_TRY(check_values(r, sim, h));
    if (h->nranks <= 1)
        return KEDR_OK;
    /* the split: its kind, then a tree of cuts that gives every rank a box of the grid */
    int32_t kind[2];
    KEDR_TRY(get(r, kind, sizeof kind));
    if ((kind[0] != KEDR_DSMC_SPLIT_RCB && kind[0] != KEDR_DSMC_SPLIT_X) || kind[1] != 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s: the split's kind %d (and %d): expected 0 (rcb) or "
                         "1 (x), and 0", r->path, kind[0], kind[1]);
    r->kind = kind[0];
    free(r->cut);
    r->cut = malloc((size_t)(h->nranks - 1) * sizeof *r->cut);
    if (!r->cut)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", r->path);
    KEDR_TRY(get(r, r->cut, (size_t)(h->nranks - 1) * sizeof *r->cut));
    dsmc_decomp d;
    int n[3] = {sim->p.nx, sim->p.ny, sim->p.nz};
    KEDR_TRY(dsmc_decomp_from_cuts(&d, r->kind, n, h->nranks, r->cut, r->path));
    dsmc_decomp_free(&d);
    return KEDR_OK;
}

/* One pass over the body: checks it, and loads it into sim when load is set. */
static kedr_status read_body(chk_reader *r, const chk_header *h, kedr_dsmc *sim, chk_limits *l,
                             int load, chk_merge *m, void *buf)
{
    int merge = load && m && m->gather; /* gathering: after the particles sim holds, cell arrays
                                         * combined */
    int staged = load && m && !m->gather; /* over ranks: the cell arrays into m, by grid cell */
    dsmc_field fields[DSMC_MAX_FIELDS];
    int nf = dsmc_particle_fields(&sim->a, &sim->p, fields);
    kedr_ctx *ctx = sim->ctx;
    for (int k = 0; k < nf; k++) {
        chk_field fd;
        chk_array a;
        KEDR_TRY(get(r, &fd, sizeof fd));
        fd.name[sizeof fd.name - 1] = 0;
        if (strcmp(fd.name, fields[k].name) != 0 || fd.elem != fields[k].elem)
            return kedr_fail(KEDR_ERR_PARSE, "%s: particle array %d is '%s' of %llu bytes; "
                             "expected '%s' of %zu", r->path, k, fd.name,
                             (unsigned long long)fd.elem, fields[k].name, fields[k].elem);
        KEDR_TRY(array_of(l, fields[k].name, &a));
        void *dst = load ? (char *)*fields[k].ptr + (merge ? sim->n * fields[k].elem : 0) : NULL;
        KEDR_TRY(get_ctx(r, l, &a, ctx, dst, h->n * fields[k].elem, buf));
    }
    size_t nc = sim->ncells;
    const chk_array starts = {"start", A_STARTS, 0}, counts = {"count", A_COUNTS, 0},
                    sgmax = {"(sigma g)max", A_SGMAX, 0}, acc = {"sample sum", A_ACC, 0},
                    surf = {"surface sum", A_SURF, 0};
    l->next = 0;
    if (staged) {
        KEDR_TRY(get_ctx(r, l, &starts, NULL, m->starts, nc * 4, buf));
        KEDR_TRY(get_ctx(r, l, &counts, NULL, m->counts, nc * 4, buf));
    } else {
        KEDR_TRY(get_ctx(r, l, &starts, ctx, load && !merge ? sim->starts : NULL, nc * 4, buf));
        KEDR_TRY(get_ctx(r, l, &counts, ctx, load && !merge ? sim->counts : NULL, nc * 4, buf));
    }
    if (h->sorted && l->next != h->n)
        return kedr_fail(KEDR_ERR_PARSE, "%s: the cell counts add up to %llu: expected the %llu "
                         "particles", r->path, (unsigned long long)l->next,
                         (unsigned long long)h->n);
    const chk_array mark = {"window mark", A_ACC, 0};
    if (merge) {
        KEDR_TRY(get_merge(r, l, &sgmax, m->sgmax, 1, nc * sizeof *sim->sgmax, buf));
        KEDR_TRY(get_merge(r, l, &acc, m->acc, 0, nc * 8 * dsmc_nacc(&sim->p), buf));
        if (h->marked)
            KEDR_TRY(get_merge(r, l, &mark, m->mark, 0, nc * 8 * dsmc_nacc(&sim->p), buf));
        if (h->nelem)
            KEDR_TRY(get_merge(r, l, &surf, m->surf, 0, h->nelem * 8 * DSMC_NSURF, buf));
    } else if (staged) {
        KEDR_TRY(get_ctx(r, l, &sgmax, NULL, m->sgmax, nc * sizeof *sim->sgmax, buf));
        KEDR_TRY(get_ctx(r, l, &acc, NULL, m->acc, nc * 8 * dsmc_nacc(&sim->p), buf));
        if (h->marked)
            KEDR_TRY(get_ctx(r, l, &mark, NULL, m->mark, nc * 8 * dsmc_nacc(&sim->p), buf));
        if (h->nelem)
            KEDR_TRY(get_ctx(r, l, &surf, ctx, sim->geo.surf, h->nelem * 8 * DSMC_NSURF, buf));
    } else {
        KEDR_TRY(get_ctx(r, l, &sgmax, ctx, load ? sim->sgmax : NULL, nc * sizeof *sim->sgmax,
                         buf));
        KEDR_TRY(get_ctx(r, l, &acc, ctx, load ? sim->acc : NULL, nc * 8 * dsmc_nacc(&sim->p),
                         buf));
        if (h->marked)
            KEDR_TRY(get_ctx(r, l, &mark, NULL, load ? sim->mark : NULL,
                             nc * 8 * dsmc_nacc(&sim->p), buf));
        if (h->nelem)
            KEDR_TRY(get_ctx(r, l, &surf, ctx, load ? sim->geo.surf : NULL,
                             h->nelem * 8 * DSMC_NSURF, buf));
    }
    uint64_t want = r->hash, sum = 0;
    char end[8];
    KEDR_TRY(get(r, &sum, sizeof sum));
    KEDR_TRY(get(r, end, 8));
    if (sum != want || memcmp(end, CHK_END, 8) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s: corrupt checkpoint (checksum mismatch)", r->path);
    if (fgetc(r->f) != EOF)
        return kedr_fail(KEDR_ERR_PARSE, "%s: corrupt checkpoint (data after the end)", r->path);
    return KEDR_OK;
}

/* Opens a regular file only: a FIFO would block and a device need not end. */
static kedr_status open_file(chk_reader *r)
{
    KEDR_TRY(kedr_file_size(r->path, &r->size));
    int fd = open(r->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot open: %s", r->path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !(r->f = fdopen(fd, "rb"))) {
        close(fd);
        return kedr_fail(KEDR_ERR_IO, "%s: cannot open as a regular file", r->path);
    }
    r->size = (uint64_t)st.st_size; /* of what was opened, should the path have changed */
    return KEDR_OK;
}

/* A pass over the file from its start: the header and the body, checked; with expect (the first
 * pass's header) it must be the same file and the body is loaded into sim. */
static kedr_status read_pass(chk_reader *r, kedr_dsmc *sim, chk_limits *l, chk_header *h,
                             const chk_header *expect, chk_merge *m, void *buf)
{
    if (fseek(r->f, 0, SEEK_SET) != 0)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot seek: %s", r->path, strerror(errno));
    r->hash = KEDR_FNV_START;
    KEDR_TRY(read_header(r, sim, h));
    if (expect && memcmp(h, expect, sizeof *h) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s: the checkpoint changed while it was read", r->path);
    uint32_t *starts = l->starts;
    limits_of(sim, h, r->path, l);
    l->starts = starts;
    return read_body(r, h, sim, l, expect != NULL, m, buf);
}

/* A second pass that failed (the file changed in between, or an upload) has loaded part of the
 * file, every value checked but not all of one state: the particles and samples are dropped,
 * which leaves a consistent, empty simulator. */
static kedr_status emptied(kedr_dsmc *sim, kedr_status s)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", kedr_last_error());
    sim->n = 0;
    sim->sorted = sim->located = 0;
    kedr_dsmc_reset_samples(sim);
    return kedr_fail(s, "%s (the simulator was emptied: restart it)", msg);
}

static void restore(kedr_dsmc *sim, const chk_header *h)
{
    sim->c.seed = h->seed;
    sim->p.seed = h->seed;
    sim->step = h->step;
    sim->p.step = (uint32_t)h->step;
    sim->samples = h->samples;
    sim->time = h->time;
    sim->collisions = h->collisions;
    sim->candidates = h->candidates;
    sim->generated = h->generated;
    sim->total_collisions = h->total_collisions;
    sim->total_generated = h->total_generated;
    sim->sep_mfp = h->sep_mfp;
    sim->total_sep_mfp = h->total_sep_mfp;
    sim->geo.surf_steps = h->surf_steps;
    sim->mark_samples = h->mark_samples;
    sim->mark_step = h->mark_step;
    if (sim->c.sample_auto) {
        sim->c.sample_start = h->sample_start;
        sim->steady = h->steady;
    }
    sim->sorted = (int)h->sorted;
    sim->unindexed = 0;
    sim->located = (int)h->located;
    sim->n = (size_t)h->n;
    sim->mid_step = 0;
}

/* The file's ranges by global cell (g, host memory, 2 x ncells words: starts, then counts)
 * down to the rank's own cells. */
static kedr_status local_ranges(kedr_dsmc *sim, uint32_t *g, const char *path)
{
    size_t nc = sim->ncells, nl = sim->nlocal, l = 0;
    kedr_status s = KEDR_OK;
    for (size_t c = 0; c < nc; c++) {
        if (dsmc_key_of(sim->cmap, (uint32_t)c, (uint32_t)nc) >= nc) {
            if (g[nc + c])
                s = kedr_fail(KEDR_ERR_PARSE, "%s: cell %zu holds %u particles but lies in "
                              "another rank's box", path, c, g[nc + c]);
            continue;
        }
        g[l] = g[c];
        g[nc + l] = g[nc + c];
        l++;
    }
    if (s == KEDR_OK)
        s = kedr_upload(sim->ctx, sim->starts, g, nl * sizeof *g);
    if (s == KEDR_OK)
        s = kedr_upload(sim->ctx, sim->counts, g + nc, nl * sizeof *g);
    return s;
}

/* The (sigma g)max, sample sums and window mark of the grid (host arrays of m; mark only when
 * marked) to the rank's own cells, after its split is set. */
static kedr_status cells_local(kedr_dsmc *sim, const chk_merge *m, int marked, const char *fn)
{
    size_t nl = sim->nlocal, nacc = dsmc_nacc(&sim->p);
    KEDR_TRY(dsmc_sample_sums(sim));
    void *loc = malloc((nl ? nl : 1) * nacc * sizeof(double));
    if (!loc)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for %zu cells", fn, nl);
    dsmc_cells_from_grid(sim, m->sgmax, loc, sizeof(float), 1, 0);
    kedr_status s = kedr_upload(sim->ctx, sim->sgmax, loc, nl * sizeof(float));
    if (s == KEDR_OK) {
        dsmc_cells_from_grid(sim, m->acc, loc, sizeof(double), nacc, 1);
        s = kedr_upload(sim->ctx, sim->acc, loc, nl * nacc * sizeof(double));
    }
    free(sim->mark);
    sim->mark = NULL;
    if (s == KEDR_OK && marked) {
        dsmc_cells_from_grid(sim, m->mark, loc, sizeof(double), nacc, 1);
        sim->mark = loc;
        loc = NULL;
    }
    free(loc);
    return s;
}

kedr_status kedr_dsmc_read_checkpoint(kedr_dsmc *sim, const char *path)
{
    const char *fn = "kedr_dsmc_read_checkpoint";
    if (!sim || !path || !path[0])
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s", fn, !sim ? "sim is NULL" : "path is empty");
    chk_reader r = {NULL, path, 0, 0, CHK_CHUNK, 0, 0, NULL};
    KEDR_TRY(open_file(&r));
    if (r.size < CHK_CHUNK) /* a multiple of 8, so that no element is split */
        r.chunk = ((size_t)r.size + 8) & ~(size_t)7;
    chk_limits l;
    memset(&l, 0, sizeof l);
    void *buf = malloc(r.chunk);
    l.starts = malloc(sim->ncells * sizeof *l.starts);
    kedr_status s = KEDR_OK;
    if (!buf || !l.starts)
        s = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    /* First pass: the whole file is checked, so a bad file leaves sim as it was (the room made
     * for the particles keeps those of sim, and the sample sums it allocates are zero). */
    chk_header h, again;
    if (s == KEDR_OK)
        s = read_pass(&r, sim, &l, &h, NULL, NULL, buf);
    if (s == KEDR_OK)
        s = dsmc_reserve(sim, (size_t)h.n);
    if (s == KEDR_OK)
        s = dsmc_sample_sums(sim);
    /* Over ranks the cell arrays come by the grid's cells into host memory, and are made the
     * rank's own after its split is set (the file's). */
    size_t nc = sim->ncells, nacc = dsmc_nacc(&sim->p);
    int staged = sim->nranks > 1;
    chk_merge g;
    memset(&g, 0, sizeof g);
    if (s == KEDR_OK && staged) {
        g.sgmax = malloc(nc * sizeof *g.sgmax);
        g.acc = malloc(nc * nacc * sizeof *g.acc);
        g.mark = h.marked ? malloc(nc * nacc * sizeof *g.mark) : NULL;
        g.starts = malloc(2 * nc * sizeof *g.starts);
        g.counts = g.starts ? g.starts + nc : NULL;
        if (!g.sgmax || !g.acc || (h.marked && !g.mark) || !g.starts)
            s = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for %zu cells", fn, nc);
        if (s == KEDR_OK)
            memset(g.starts, 0, 2 * nc * sizeof *g.starts);
    }
    if (s == KEDR_OK && !staged) { /* the window's mark: as the file has it, or none */
        free(sim->mark);
        sim->mark = h.marked ? malloc(sim->ncells * 8 * dsmc_nacc(&sim->p)) : NULL;
        if (h.marked && !sim->mark)
            s = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    }
    if (s == KEDR_OK) {
        s = read_pass(&r, sim, &l, &again, &h, staged ? &g : NULL, buf);
        if (s != KEDR_OK)
            s = emptied(sim, s);
    }
    dsmc_decomp d;
    memset(&d, 0, sizeof d);
    if (s == KEDR_OK && staged) { /* the split the run had (it may have balanced) */
        int n[3] = {sim->p.nx, sim->p.ny, sim->p.nz};
        s = dsmc_decomp_from_cuts(&d, r.kind, n, h.nranks, r.cut, path);
        if (s == KEDR_OK)
            s = dsmc_decomp_adopt(sim, &d);
        if (s == KEDR_OK && h.sorted)
            s = local_ranges(sim, g.starts, path);
        if (s == KEDR_OK)
            s = cells_local(sim, &g, (int)h.marked, fn);
        if (s != KEDR_OK)
            s = emptied(sim, s);
    }
    free(g.sgmax);
    free(g.acc);
    free(g.mark);
    free(g.starts);
    fclose(r.f);
    free(r.cut);
    free(l.starts);
    free(buf);
    if (s != KEDR_OK)
        return s;
    restore(sim, &h);
    return KEDR_OK;
}

kedr_status kedr_dsmc_restart(kedr_ctx *ctx, const kedr_dsmc_case *c, const char *path,
                              kedr_dsmc **sim)
{
    return kedr_dsmc_restart_on(ctx, c, NULL, path, sim);
}

kedr_status kedr_dsmc_restart_on(kedr_ctx *ctx, const kedr_dsmc_case *c, kedr_comm *comm,
                                 const char *path, kedr_dsmc **sim)
{
    if (!c || !sim)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_restart: %s is NULL", c ? "sim" : "c");
    kedr_dsmc_case empty = *c;
    empty.fill = 0; /* the checkpoint brings the particles */
    KEDR_TRY(kedr_dsmc_create_on(ctx, &empty, comm, sim));
    (*sim)->c.fill = c->fill;
    kedr_status s = kedr_dsmc_read_checkpoint(*sim, path);
    if (comm) /* every rank restarts, or none */
        s = kedr_comm_agree(comm, s);
    if (s == KEDR_OK && (*sim)->nranks > 1) /* the case's kind of split, if the file's is other */
        s = dsmc_split_kind(*sim);
    if (s != KEDR_OK) {
        kedr_dsmc_destroy(*sim);
        *sim = NULL;
    }
    return s;
}

/* ---- gathering another run's ranks -------------------------------------------------------- */

/* Adds the checkpoints paths[0..n) to sim (a rank's share of another run's files): their
 * particles after sim's, their surface sums added; their sample sums and window marks added,
 * and their (sigma g)max the largest, into the grid's arrays of m (which the caller combines
 * over the ranks); *h0 receives the first file's header. sim's own arrays are those of an
 * empty simulator. */
static kedr_status gather_files(kedr_dsmc *sim, int n, const char *const *paths, chk_header *h0,
                                chk_merge *mm)
{
    const char *fn = "kedr_dsmc_restart_files";
    size_t ns = sim->geo.surf ? sim->geo.nelem * DSMC_NSURF : 0;
    chk_merge m = *mm;
    m.surf = calloc(ns ? ns : 1, sizeof(double));
    uint32_t *starts = malloc(sim->ncells * sizeof *starts);
    void *buf = malloc(CHK_CHUNK);
    kedr_status s = m.surf && starts && buf
                        ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    uint64_t count[6] = {0, 0, 0, 0, 0, 0};
    double sep[2] = {0, 0};
    for (int i = 0; i < n && s == KEDR_OK; i++) {
        chk_reader r = {NULL, paths[i], 0, 0, CHK_CHUNK, 1, 0, NULL};
        chk_limits l;
        memset(&l, 0, sizeof l);
        l.starts = starts;
        chk_header h, again;
        s = open_file(&r);
        if (s != KEDR_OK)
            break;
        if (r.size < CHK_CHUNK)
            r.chunk = ((size_t)r.size + 8) & ~(size_t)7;
        s = read_pass(&r, sim, &l, &h, NULL, NULL, buf);
        if (s == KEDR_OK && i == 0)
            *h0 = h;
        if (s == KEDR_OK && (h.step != h0->step || h.samples != h0->samples ||
                             h.sample_start != h0->sample_start || h.marked != h0->marked ||
                             h.mark_samples != h0->mark_samples))
            s = kedr_fail(KEDR_ERR_PARSE, "%s: written at step %lld with %lld samples; %s was "
                          "written at step %lld with %lld: the files are not of one checkpoint",
                          paths[i], (long long)h.step, (long long)h.samples, paths[0],
                          (long long)h0->step, (long long)h0->samples);
        if (s == KEDR_OK)
            s = dsmc_reserve(sim, sim->n + (size_t)h.n);
        if (s == KEDR_OK) {
            s = read_pass(&r, sim, &l, &again, &h, &m, buf);
            if (s != KEDR_OK)
                s = emptied(sim, s);
        }
        fclose(r.f);
        free(r.cut);
        if (s != KEDR_OK)
            break;
        sim->n += (size_t)h.n;
        uint64_t c[6] = {h.collisions, h.candidates, h.generated, h.total_collisions,
                         h.total_generated, 0};
        for (int k = 0; k < 5; k++)
            count[k] += c[k];
        sep[0] += h.sep_mfp;
        sep[1] += h.total_sep_mfp;
    }
    if (s == KEDR_OK && ns)
        s = kedr_upload(sim->ctx, sim->geo.surf, m.surf, ns * sizeof(double));
    if (s == KEDR_OK) { /* the header as one file of them all: these counts summed */
        size_t n_all = sim->n;
        h0->collisions = count[0];
        h0->candidates = count[1];
        h0->generated = count[2];
        h0->total_collisions = count[3];
        h0->total_generated = count[4];
        h0->sep_mfp = sep[0];
        h0->total_sep_mfp = sep[1];
        h0->sorted = h0->located = 0;
        h0->n = n_all;
    }
    free(m.surf);
    free(starts);
    free(buf);
    return s;
}

kedr_status kedr_dsmc_restart_files(kedr_ctx *ctx, const kedr_dsmc_case *c, kedr_comm *comm,
                                    int nfiles, const char *const *paths, kedr_dsmc **sim)
{
    const char *fn = "kedr_dsmc_restart_files";
    if (!c || !sim || nfiles < 1 || !paths)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s", fn, nfiles < 1 ? "no checkpoint files"
                                                         : "an argument is NULL");
    for (int i = 0; i < nfiles; i++)
        if (!paths[i] || !paths[i][0])
            return kedr_fail(KEDR_ERR_INVALID, "%s: file %d has no path", fn, i);
    int rank = comm ? kedr_comm_rank(comm) : 0, nranks = comm ? kedr_comm_size(comm) : 1;
    if (nfiles == nranks) /* a rank's own file: bit for bit */
        return kedr_dsmc_restart_on(ctx, c, comm, paths[rank], sim);
    kedr_dsmc_case empty = *c;
    empty.fill = 0;
    kedr_status s = kedr_dsmc_create_on(ctx, &empty, comm, sim);
    if (comm)
        s = kedr_comm_agree(comm, s);
    if (s != KEDR_OK) {
        if (*sim)
            kedr_dsmc_destroy(*sim);
        *sim = NULL;
        return s;
    }
    (*sim)->c.fill = c->fill;
    /* rank r gathers files r, r + nranks, ... (rank 0 at least the first) */
    int mine = 0;
    const char **list = malloc((size_t)nfiles * sizeof *list);
    if (!list)
        s = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    for (int i = rank; list && i < nfiles; i += nranks)
        list[mine++] = paths[i];
    chk_header h;
    memset(&h, 0, sizeof h);
    /* the cell arrays by the grid's cells: as a fresh simulator has them, then the files' */
    size_t nc = (*sim)->ncells, nacc = dsmc_nacc(&(*sim)->p);
    chk_merge m = {calloc(nc * nacc, sizeof(double)), NULL, calloc(nc * nacc, sizeof(double)),
                   malloc(nc * sizeof(float)), 1, NULL, NULL};
    if (s == KEDR_OK && (!m.acc || !m.mark || !m.sgmax))
        s = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for %zu cells", fn, nc);
    for (size_t i = 0; s == KEDR_OK && i < nc; i++)
        m.sgmax[i] = (*sim)->sg_init;
    if (s == KEDR_OK && mine)
        s = gather_files(*sim, mine, list, &h, &m);
    free(list);
    if (comm)
        s = kedr_comm_agree(comm, s);
    if (s == KEDR_OK && comm) { /* the step and sampling state, as rank 0 read them */
        chk_header h0 = h;
        s = kedr_comm_bcast(comm, &h0, sizeof h0, 0);
        if (s == KEDR_OK && !mine) {
            h = h0;
            h.collisions = h.candidates = h.generated = h.total_collisions =
                h.total_generated = 0;
            h.sep_mfp = h.total_sep_mfp = 0;
            h.sorted = h.located = 0;
            h.n = 0;
        }
        s = kedr_comm_agree(comm, s);
    }
    /* Each cell's sums and (sigma g)max from the files that hold it (the rank that wrote it
     * owned it), whichever rank read them, to the rank that owns it now. */
    if (s == KEDR_OK && comm && nranks > 1) {
        s = kedr_comm_allreduce(comm, KEDR_F32, KEDR_OP_MAX, m.sgmax, nc);
        if (s == KEDR_OK)
            s = kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_SUM, m.acc, nc * nacc);
        if (s == KEDR_OK && h.marked)
            s = kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_SUM, m.mark, nc * nacc);
        s = kedr_comm_agree(comm, s);
    }
    if (s == KEDR_OK)
        s = cells_local(*sim, &m, (int)h.marked, fn);
    if (comm)
        s = kedr_comm_agree(comm, s);
    free(m.acc);
    free(m.mark);
    free(m.sgmax);
    if (s == KEDR_OK) {
        size_t n = (*sim)->n;
        restore(*sim, &h);
        (*sim)->n = n;
    }
    /* the particles to the ranks that own their cells now */
    if (s == KEDR_OK && nranks > 1)
        s = dsmc_exchange(*sim, comm, &(*sim)->decomp, NULL);
    if (s != KEDR_OK) {
        kedr_dsmc_destroy(*sim);
        *sim = NULL;
    }
    return s;
}
