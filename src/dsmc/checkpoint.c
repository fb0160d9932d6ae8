/* DSMC checkpoints: the whole state of a run in one versioned binary file (layout in
 * docs/dsmc.md). Random numbers are keyed by (seed, entity, step, purpose), so the random stream's
 * position is just (seed, step); everything else that a step reads is stored, which is why a
 * restarted run continues bit for bit. Files hold host-order values with a byte-order mark and
 * end with an FNV-1a checksum, so truncation and corruption are caught before sim is touched. */
#include "sim.h"

#include "core/internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHK_MAGIC "KEDRDSMC"
#define CHK_END "KEDR-END"
#define CHK_VERSION 6u
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
    double steady_sum, steady_prev;
    int64_t steady_count;
} chk_header;

typedef struct {
    char name[16];
    uint64_t elem;
} chk_field;

static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
#define FNV_START 0xcbf29ce484222325ull

/* The case as the run sees it, less what a restart may change (steps, output, seed, step). */
static uint64_t case_hash(const kedr_dsmc *sim)
{
    dsmc_params p;
    memcpy(&p, &sim->p, sizeof p); /* memcpy keeps the zeroed padding of sim->p */
    p.step = 0;
    p.seed = 0;
    p.gas_volume = NULL; /* addresses of this run's buffers */
    p.surf = NULL;
    uint64_t h = fnv1a(FNV_START, &p, sizeof p);
    /* start = auto is decided during the run, so the hash takes the setting, not the step */
    int64_t sampling[2] = {sim->c.sample_auto ? -2 : sim->c.sample_start, sim->c.sample_every};
    h = fnv1a(h, sampling, sizeof sampling);
    uint64_t ncells = sim->ncells;
    return fnv1a(h, &ncells, sizeof ncells);
}

/* ---- writing ------------------------------------------------------------------------------ */

typedef struct {
    FILE *f;
    uint64_t hash;
    int failed;
} chk_writer;

static void put(chk_writer *w, const void *p, size_t len)
{
    w->hash = fnv1a(w->hash, p, len);
    if (!w->failed && len && fwrite(p, 1, len, w->f) != len)
        w->failed = 1;
}

/* Context memory through a host staging buffer. */
static kedr_status put_ctx(chk_writer *w, kedr_ctx *ctx, const void *src, size_t bytes, void *buf)
{
    for (size_t off = 0; off < bytes; off += CHK_CHUNK) {
        size_t len = bytes - off < CHK_CHUNK ? bytes - off : CHK_CHUNK;
        KEDR_TRY(kedr_download(ctx, buf, (const char *)src + off, len));
        put(w, buf, len);
    }
    return KEDR_OK;
}

static kedr_status write_body(kedr_dsmc *sim, chk_writer *w, void *buf)
{
    dsmc_field fields[DSMC_MAX_FIELDS];
    int nf = dsmc_particle_fields(&sim->a, &sim->p, fields);
    chk_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CHK_MAGIC, 8);
    h.version = CHK_VERSION;
    h.bom = CHK_BOM;
    h.case_hash = case_hash(sim);
    h.seed = sim->c.seed;
    h.step = sim->step;
    h.samples = sim->samples;
    h.time = sim->time;
    h.collisions = sim->collisions;
    h.candidates = sim->candidates;
    h.generated = sim->generated;
    h.total_collisions = sim->total_collisions;
    h.total_generated = sim->total_generated;
    h.sep_mfp = sim->sep_mfp;
    h.total_sep_mfp = sim->total_sep_mfp;
    h.sorted = (uint32_t)sim->sorted;
    h.located = (uint32_t)sim->located;
    h.n = sim->n;
    h.ncells = sim->ncells;
    h.nfields = (uint32_t)nf;
    h.nacc = DSMC_NACC;
    h.nelem = sim->geo.surf ? sim->geo.nelem : 0;
    h.surf_steps = sim->geo.surf_steps;
    h.sample_start = sim->c.sample_start;
    h.steady_sum = sim->steady_sum;
    h.steady_prev = sim->steady_prev;
    h.steady_count = sim->steady_count;
    put(w, &h, sizeof h);
    for (int k = 0; k < nf; k++) {
        chk_field fd;
        memset(&fd, 0, sizeof fd);
        snprintf(fd.name, sizeof fd.name, "%s", fields[k].name);
        fd.elem = fields[k].elem;
        put(w, &fd, sizeof fd);
        KEDR_TRY(put_ctx(w, sim->ctx, *fields[k].ptr, sim->n * fields[k].elem, buf));
    }
    size_t nc = sim->ncells;
    KEDR_TRY(put_ctx(w, sim->ctx, sim->starts, nc * 4, buf));
    KEDR_TRY(put_ctx(w, sim->ctx, sim->counts, nc * 4, buf));
    KEDR_TRY(put_ctx(w, sim->ctx, sim->sgmax, nc * sizeof *sim->sgmax, buf));
    KEDR_TRY(dsmc_sample_sums(sim));
    KEDR_TRY(put_ctx(w, sim->ctx, sim->acc, nc * 8 * DSMC_NACC, buf));
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
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    void *buf = malloc(CHK_CHUNK);
    if (!buf)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    chk_writer w = {fopen(tmp, "wb"), FNV_START, 0};
    if (!w.f) {
        free(buf);
        return kedr_fail(KEDR_ERR_IO, "%s: cannot write %s: %s", fn, tmp, strerror(errno));
    }
    kedr_status s = write_body(sim, &w, buf);
    free(buf);
    /* Data on disk before the rename, so a crash leaves the old checkpoint or the new one. */
    int bad = w.failed || fflush(w.f) != 0 || fsync(fileno(w.f)) != 0;
    int err = errno;
    if (fclose(w.f) != 0)
        bad = 1;
    if (s == KEDR_OK && bad)
        s = kedr_fail(KEDR_ERR_IO, "%s: writing %s failed: %s", fn, tmp, strerror(err));
    if (s == KEDR_OK && rename(tmp, path) != 0)
        s = kedr_fail(KEDR_ERR_IO, "%s: cannot rename %s to %s: %s", fn, tmp, path,
                      strerror(errno));
    if (s != KEDR_OK)
        remove(tmp);
    return s;
}

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct {
    FILE *f;
    const char *path;
    uint64_t hash;
} chk_reader;

static kedr_status get(chk_reader *r, void *p, size_t len)
{
    if (len && fread(p, 1, len, r->f) != len)
        return kedr_fail(KEDR_ERR_PARSE, "%s: truncated checkpoint (ends at byte %ld)", r->path,
                         ftell(r->f));
    r->hash = fnv1a(r->hash, p, len);
    return KEDR_OK;
}

/* Into context memory (dst), or only through the checksum when dst is NULL. */
static kedr_status get_ctx(chk_reader *r, kedr_ctx *ctx, void *dst, size_t bytes, void *buf)
{
    for (size_t off = 0; off < bytes; off += CHK_CHUNK) {
        size_t len = bytes - off < CHK_CHUNK ? bytes - off : CHK_CHUNK;
        KEDR_TRY(get(r, buf, len));
        if (dst)
            KEDR_TRY(kedr_upload(ctx, (char *)dst + off, buf, len));
    }
    return KEDR_OK;
}

/* The header, checked against sim. */
static kedr_status read_header(chk_reader *r, const kedr_dsmc *sim, chk_header *h)
{
    memset(h, 0, sizeof *h);
    if (fread(h->magic, 1, 8, r->f) != 8 || memcmp(h->magic, CHK_MAGIC, 8) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s: not a kedr DSMC checkpoint (no %s signature)",
                         r->path, CHK_MAGIC);
    r->hash = fnv1a(r->hash, h->magic, 8);
    KEDR_TRY(get(r, (char *)h + 8, sizeof *h - 8));
    if (h->bom != CHK_BOM)
        return kedr_fail(KEDR_ERR_PARSE, "%s: written on a machine of the other byte order",
                         r->path);
    if (h->version != CHK_VERSION)
        return kedr_fail(KEDR_ERR_PARSE, "%s: checkpoint version %u; this kedr reads version %u",
                         r->path, h->version, CHK_VERSION);
    if (h->case_hash != case_hash(sim))
        return kedr_fail(KEDR_ERR_PARSE, "%s: written for another case (physics, grid or "
                         "sampling differ, or another kedr build)", r->path);
    dsmc_particles a = sim->a;
    dsmc_field fields[DSMC_MAX_FIELDS];
    uint32_t nf = (uint32_t)dsmc_particle_fields(&a, &sim->p, fields);
    uint64_t nelem = sim->geo.surf ? sim->geo.nelem : 0;
    if (h->ncells != sim->ncells || h->nacc != DSMC_NACC || h->nfields != nf ||
        h->nelem != nelem)
        return kedr_fail(KEDR_ERR_PARSE, "%s: %llu cells, %u sample sums, %u particle arrays, "
                         "%llu surface elements; this run has %zu, %d, %u, %llu", r->path,
                         (unsigned long long)h->ncells, h->nacc, h->nfields,
                         (unsigned long long)h->nelem, sim->ncells, DSMC_NACC, nf,
                         (unsigned long long)nelem);
    if (h->n >= ((uint64_t)1 << 32) || h->step < 0 || h->step >= (int64_t)UINT32_MAX - 1 ||
        h->samples < 0 || h->sorted > 1 || h->located > 1)
        return kedr_fail(KEDR_ERR_PARSE, "%s: corrupt header (%llu particles, step %lld)", r->path,
                         (unsigned long long)h->n, (long long)h->step);
    if (sim->c.max_particles && h->n > sim->c.max_particles)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: %llu particles exceed [run] max_particles = %zu",
                         r->path, (unsigned long long)h->n, sim->c.max_particles);
    return KEDR_OK;
}

/* One pass over the body: checks it (dst_sim NULL) or loads it into dst_sim. */
static kedr_status read_body(chk_reader *r, const chk_header *h, kedr_dsmc *sim, int load,
                             void *buf)
{
    dsmc_field fields[DSMC_MAX_FIELDS];
    int nf = dsmc_particle_fields(&sim->a, &sim->p, fields);
    kedr_ctx *ctx = sim->ctx;
    for (int k = 0; k < nf; k++) {
        chk_field fd;
        KEDR_TRY(get(r, &fd, sizeof fd));
        fd.name[sizeof fd.name - 1] = 0;
        if (strcmp(fd.name, fields[k].name) != 0 || fd.elem != fields[k].elem)
            return kedr_fail(KEDR_ERR_PARSE, "%s: particle array %d is '%s' of %llu bytes; "
                             "expected '%s' of %zu", r->path, k, fd.name,
                             (unsigned long long)fd.elem, fields[k].name, fields[k].elem);
        KEDR_TRY(get_ctx(r, ctx, load ? *fields[k].ptr : NULL, h->n * fields[k].elem, buf));
    }
    size_t nc = sim->ncells;
    KEDR_TRY(get_ctx(r, ctx, load ? sim->starts : NULL, nc * 4, buf));
    KEDR_TRY(get_ctx(r, ctx, load ? sim->counts : NULL, nc * 4, buf));
    KEDR_TRY(get_ctx(r, ctx, load ? sim->sgmax : NULL, nc * sizeof *sim->sgmax, buf));
    if (load)
        KEDR_TRY(dsmc_sample_sums(sim));
    KEDR_TRY(get_ctx(r, ctx, load ? sim->acc : NULL, nc * 8 * DSMC_NACC, buf));
    if (h->nelem)
        KEDR_TRY(get_ctx(r, ctx, load ? sim->geo.surf : NULL, h->nelem * 8 * DSMC_NSURF, buf));
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

/* Opens path and reads and checks the header (the reader's hash then covers it). */
static kedr_status open_checked(chk_reader *r, const kedr_dsmc *sim, chk_header *h)
{
    r->f = fopen(r->path, "rb");
    if (!r->f)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot open: %s", r->path, strerror(errno));
    r->hash = FNV_START;
    kedr_status s = read_header(r, sim, h);
    if (s != KEDR_OK) {
        fclose(r->f);
        r->f = NULL;
    }
    return s;
}

kedr_status kedr_dsmc_read_checkpoint(kedr_dsmc *sim, const char *path)
{
    const char *fn = "kedr_dsmc_read_checkpoint";
    if (!sim || !path || !path[0])
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s", fn, !sim ? "sim is NULL" : "path is empty");
    void *buf = malloc(CHK_CHUNK);
    if (!buf)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    /* First pass: the whole file is checked, so a bad file leaves sim as it was. */
    chk_reader r = {NULL, path, 0};
    chk_header h;
    kedr_status s = open_checked(&r, sim, &h);
    if (s == KEDR_OK) {
        s = read_body(&r, &h, sim, 0, buf);
        fclose(r.f);
    }
    if (s == KEDR_OK) {
        sim->n = 0; /* nothing to keep while growing */
        s = dsmc_reserve(sim, (size_t)h.n);
    }
    if (s == KEDR_OK)
        s = open_checked(&r, sim, &h);
    if (s == KEDR_OK) {
        s = read_body(&r, &h, sim, 1, buf);
        fclose(r.f);
    }
    free(buf);
    if (s != KEDR_OK)
        return s;
    sim->c.seed = h.seed;
    sim->p.seed = h.seed;
    sim->step = h.step;
    sim->p.step = (uint32_t)h.step;
    sim->samples = h.samples;
    sim->time = h.time;
    sim->collisions = h.collisions;
    sim->candidates = h.candidates;
    sim->generated = h.generated;
    sim->total_collisions = h.total_collisions;
    sim->total_generated = h.total_generated;
    sim->sep_mfp = h.sep_mfp;
    sim->total_sep_mfp = h.total_sep_mfp;
    sim->geo.surf_steps = h.surf_steps;
    if (sim->c.sample_auto) {
        sim->c.sample_start = h.sample_start;
        sim->steady_sum = h.steady_sum;
        sim->steady_prev = h.steady_prev;
        sim->steady_count = h.steady_count;
    }
    sim->sorted = (int)h.sorted;
    sim->located = (int)h.located;
    sim->n = (size_t)h.n;
    sim->mid_step = 0;
    return KEDR_OK;
}

kedr_status kedr_dsmc_restart(kedr_ctx *ctx, const kedr_dsmc_case *c, const char *path,
                              kedr_dsmc **sim)
{
    if (!c || !sim)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_restart: %s is NULL", c ? "sim" : "c");
    kedr_dsmc_case empty = *c;
    empty.fill = 0; /* the checkpoint brings the particles */
    KEDR_TRY(kedr_dsmc_create(ctx, &empty, sim));
    (*sim)->c.fill = c->fill;
    kedr_status s = kedr_dsmc_read_checkpoint(*sim, path);
    if (s != KEDR_OK) {
        kedr_dsmc_destroy(*sim);
        *sim = NULL;
    }
    return s;
}
