/* ADI checkpoints: a header (grid, precision, step, time, the rank and its planes), the four
 * fields of the rank's planes as doubles (x fastest), the per-step statistics, and an FNV-1a
 * checksum of all that. One file a rank. Written whole through kedr_file_begin/commit; read as
 * untrusted input: its size is checked against its header and the case before anything else,
 * and every header value against the case and the ranks. */
#include "adi/adi_internal.h"
#include "core/internal.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHK_MAGIC "KEDRADI2"
/* The one-rank checkpoints of before the ranks: the header without its last four numbers, the
 * same fields (the grid's). Still read, by one rank. */
#define CHK_MAGIC_V1 "KEDRADI1"
#define CHK_HEADER_V1 (offsetof(chk_header, rank))
#define STAT_DOUBLES 8

typedef struct {
    char magic[8];
    int32_t nx, ny, nz, real_size;
    double h;
    int64_t step;
    double time;
    uint64_t nhistory;
    int32_t rank, nranks, lo, hi; /* this file's rank, of nranks, and its planes [lo, hi) */
} chk_header;

typedef struct {
    FILE *f;
    uint64_t hash;
    int ok;
} chk_writer;

static void put(chk_writer *w, const void *p, size_t len)
{
    w->hash = kedr_fnv1a(w->hash, p, len);
    if (w->ok && fwrite(p, 1, len, w->f) != len)
        w->ok = 0;
}

static void stat_doubles(const kedr_adi_stats *h, double d[STAT_DOUBLES])
{
    double x[STAT_DOUBLES] = {(double)h->step, h->time, h->global_iterations, h->change,
                              h->continuity_rms, h->continuity_max, h->max_speed,
                              h->kinetic_energy};
    memcpy(d, x, sizeof x);
}

static kedr_status write_checkpoint(kedr_adi *s, const char *path)
{
    size_t n = (size_t)(s->hi - s->lo) * s->plane;
    double *f = malloc((n ? 4 * n : 1) * sizeof *f);
    if (!f)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for the checkpoint", path);
    double *const fields[4] = {f, f + n, f + 2 * n, f + 3 * n};
    kedr_status st = adi_get_local(s, fields);
    kedr_file_writer fw;
    if (st == KEDR_OK)
        st = kedr_file_begin(&fw, path);
    if (st != KEDR_OK) {
        free(f);
        return st;
    }
    chk_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CHK_MAGIC, 8);
    h.nx = s->c.nx;
    h.ny = s->c.ny;
    h.nz = s->c.nz;
    h.real_size = s->real_size;
    h.h = s->c.h;
    h.step = s->st.step;
    h.time = s->st.time;
    h.nhistory = s->nhistory;
    h.rank = s->rank;
    h.nranks = s->nranks;
    h.lo = s->lo;
    h.hi = s->hi;
    chk_writer w = {KEDR_FILE(&fw), KEDR_FNV_START, 1};
    put(&w, &h, sizeof h);
    put(&w, f, 4 * n * sizeof *f);
    for (size_t k = 0; k < s->nhistory; k++) {
        double d[STAT_DOUBLES];
        stat_doubles(&s->history[k], d);
        put(&w, d, sizeof d);
    }
    uint64_t sum = w.hash;
    put(&w, &sum, sizeof sum);
    free(f);
    if (!w.ok) {
        kedr_file_abort(&fw);
        return kedr_fail(KEDR_ERR_IO, "%s: cannot write the checkpoint (disk full?)", path);
    }
    return kedr_file_commit(&fw);
}

kedr_status kedr_adi_write_checkpoint(kedr_adi *s, const char *path)
{
    return kedr_comm_agree(s->comm, write_checkpoint(s, path));
}

/* The header's values against the case and this run's ranks; the fields and history are read
 * by the caller. */
static kedr_status check_header(const chk_header *h, const kedr_adi_case *c, const char *path,
                                uint64_t size, int rank, int nranks, size_t hbytes)
{
    if (h->nx != c->nx || h->ny != c->ny || h->nz != c->nz)
        return kedr_fail(KEDR_ERR_PARSE, "%s: a checkpoint of a %d x %d x %d grid; the case's is "
                         "%d x %d x %d", path, h->nx, h->ny, h->nz, c->nx, c->ny, c->nz);
    if (h->real_size != (c->single ? 4 : 8) || h->h != c->h)
        return kedr_fail(KEDR_ERR_PARSE, "%s: a checkpoint of %s precision and h = %g; the case "
                         "has %s precision and h = %g", path,
                         h->real_size == 4 ? "single" : "double", h->h,
                         c->single ? "single" : "double", c->h);
    int lo, hi;
    adi_slab(c->nx, rank, nranks, &lo, &hi);
    if (h->nranks != nranks || h->rank != rank || h->lo != lo || h->hi != hi)
        return kedr_fail(KEDR_ERR_PARSE, "%s: the checkpoint of rank %d of %d (x planes %d to "
                         "%d); this is rank %d of %d: restart on the ranks that wrote it (%d), "
                         "each from its own file", path, h->rank, h->nranks, h->lo, h->hi - 1,
                         rank, nranks, h->nranks);
    uint64_t nodes = (uint64_t)(hi - lo) * c->ny * c->nz;
    uint64_t fixed = hbytes + 4 * nodes * 8 + 8;
    if (size < fixed || (size - fixed) % (STAT_DOUBLES * 8) != 0 ||
        (size - fixed) / (STAT_DOUBLES * 8) != h->nhistory)
        return kedr_fail(KEDR_ERR_PARSE, "%s: %llu bytes: a truncated or corrupt checkpoint "
                         "(its header asks for %llu)", path, (unsigned long long)size,
                         (unsigned long long)(fixed + h->nhistory * STAT_DOUBLES * 8));
    if (h->step < 0 || !isfinite(h->time) || h->nhistory > (uint64_t)h->step)
        return kedr_fail(KEDR_ERR_PARSE, "%s: step %lld, time %g, %llu statistics rows: not a "
                         "consistent checkpoint", path, (long long)h->step, h->time,
                         (unsigned long long)h->nhistory);
    return KEDR_OK;
}

/* This rank's file, checked whole: its header, the header's bytes and the file's (*data, free
 * it). */
static kedr_status read_checkpoint(const kedr_adi_case *c, const char *path, int rank,
                                   int nranks, chk_header *h, size_t *hbytes, char **data)
{
    uint64_t size = 0;
    *data = NULL;
    KEDR_TRY(kedr_file_size(path, &size));
    if (size < CHK_HEADER_V1)
        return kedr_fail(KEDR_ERR_PARSE, "%s: %llu bytes: too short for a kedr adi checkpoint",
                         path, (unsigned long long)size);
    size_t len = 0;
    KEDR_TRY(kedr_file_read(path, (size_t)size, data, &len));
    memset(h, 0, sizeof *h);
    *hbytes = sizeof *h;
    kedr_status st = KEDR_OK;
    if (memcmp(*data, CHK_MAGIC_V1, 8) == 0) {
        memcpy(h, *data, CHK_HEADER_V1);
        *hbytes = CHK_HEADER_V1;
        h->nranks = 1;
        h->hi = h->nx;
        memcpy(h->magic, CHK_MAGIC, 8);
    } else if (memcmp(*data, CHK_MAGIC, 8) != 0 || len < sizeof *h) {
        st = kedr_fail(KEDR_ERR_PARSE, "%s: not a kedr adi checkpoint", path);
    } else {
        memcpy(h, *data, sizeof *h);
    }
    if (st == KEDR_OK)
        st = check_header(h, c, path, len, rank, nranks, *hbytes);
    if (st == KEDR_OK) {
        uint64_t sum = 0;
        memcpy(&sum, *data + len - 8, 8);
        if (kedr_fnv1a(KEDR_FNV_START, *data, len - 8) != sum)
            st = kedr_fail(KEDR_ERR_PARSE, "%s: corrupt checkpoint (checksum mismatch)", path);
    }
    if (st != KEDR_OK) {
        free(*data);
        *data = NULL;
    }
    return st;
}

kedr_status kedr_adi_restart(kedr_ctx *ctx, const kedr_adi_case *c, const char *path,
                             kedr_adi **out)
{
    return kedr_adi_restart_on(ctx, NULL, c, path, out);
}

/* The header of a checkpoint (its rank and rank count), without reading the rest. */
static kedr_status peek_header(const char *path, chk_header *h)
{
    memset(h, 0, sizeof *h);
    FILE *f = fopen(path, "rb");
    if (!f)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot open the checkpoint", path);
    size_t got = fread(h, 1, sizeof *h, f);
    fclose(f);
    if (got >= 8 && memcmp(h->magic, CHK_MAGIC_V1, 8) == 0) {
        h->rank = 0;
        h->nranks = 1;
        return KEDR_OK;
    }
    if (got < sizeof *h || memcmp(h->magic, CHK_MAGIC, 8) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s: not a kedr adi checkpoint", path);
    if (h->nranks < 1 || h->rank < 0 || h->rank >= h->nranks)
        return kedr_fail(KEDR_ERR_PARSE, "%s: rank %d of %d: not a consistent checkpoint", path,
                         h->rank, h->nranks);
    return KEDR_OK;
}

/* The file of rank q of a set of m, named like path (DIR/NAME.rankRofM.chk; one rank's set is
 * path itself). */
static kedr_status set_member(const char *path, int q, int m, char *out, size_t size)
{
    if (m == 1) {
        snprintf(out, size, "%s", path);
        return KEDR_OK;
    }
    const char *dot = strstr(path, ".rank"), *next;
    while (dot && (next = strstr(dot + 1, ".rank")) != NULL)
        dot = next;
    int r = -1, n = -1, end = 0;
    if (!dot || sscanf(dot, ".rank%dof%d.chk%n", &r, &n, &end) != 2 || dot[end] != 0 || n != m)
        return kedr_fail(KEDR_ERR_INVALID, "%s: the checkpoint of one rank of %d: expected the "
                         "name DIR/NAME.rankRof%d.chk that the ranks wrote", path, m, m);
    if ((size_t)snprintf(out, size, "%.*s.rank%dof%d.chk", (int)(dot - path), path, q, m) >= size)
        return kedr_fail(KEDR_ERR_INVALID, "%s: path too long", path);
    return KEDR_OK;
}

static void read_history(kedr_adi *s, const char *data, size_t at, uint64_t nh)
{
    for (uint64_t k = 0; k < nh; k++) {
        double d[STAT_DOUBLES];
        memcpy(d, data + at + k * sizeof d, sizeof d);
        kedr_adi_stats *r = &s->history[k];
        r->step = (int64_t)d[0];
        r->time = d[1];
        r->global_iterations = (int)d[2];
        r->change = d[3];
        r->continuity_rms = d[4];
        r->continuity_max = d[5];
        r->max_speed = d[6];
        r->kinetic_energy = d[7];
    }
    s->nhistory = s->cap_history = nh;
}

/* This rank's planes [lo, hi) from the files of another number of ranks m (the set that path
 * belongs to): each file whose planes meet them is read whole and checked, the planes copied
 * into f (fields v, x fastest within the slab), the step, time and statistics taken from them
 * (all alike). */
static kedr_status read_set(kedr_adi *s, const kedr_adi_case *c, const char *path, int m,
                            double *f, chk_header *first)
{
    int lo = s->lo, hi = s->hi, found = 0;
    size_t n = (size_t)(hi - lo), plane = (size_t)c->ny * c->nz;
    char name[4096];
    kedr_status st = KEDR_OK;
    for (int q = 0; q < m && st == KEDR_OK; q++) {
        int qlo, qhi;
        adi_slab(c->nx, q, m, &qlo, &qhi);
        int a = qlo > lo ? qlo : lo, b = qhi < hi ? qhi : hi;
        if (a >= b)
            continue;
        st = set_member(path, q, m, name, sizeof name);
        chk_header h;
        size_t hb = 0;
        char *data = NULL;
        if (st == KEDR_OK)
            st = read_checkpoint(c, name, q, m, &h, &hb, &data);
        if (st == KEDR_OK && found &&
            (h.step != first->step || h.time != first->time || h.nhistory != first->nhistory))
            st = kedr_fail(KEDR_ERR_PARSE, "%s: step %lld; %s of the same set is at step %lld: "
                           "checkpoints of different steps", name, (long long)h.step, path,
                           (long long)first->step);
        if (st == KEDR_OK && !found) {
            *first = h;
            if (h.nhistory > 0 && !(s->history = malloc(h.nhistory * sizeof *s->history)))
                st = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", name);
            if (st == KEDR_OK)
                read_history(s, data, hb + 4 * (size_t)(qhi - qlo) * plane * 8, h.nhistory);
            found = 1;
        }
        if (st == KEDR_OK) {
            const double *in = (const double *)(data + hb); /* 8-byte aligned: hb is */
            size_t qn = (size_t)(qhi - qlo);
            for (int v = 0; v < 4; v++)
                for (size_t jk = 0; jk < plane; jk++)
                    memcpy(f + v * n * plane + jk * n + (size_t)(a - lo),
                           in + v * qn * plane + jk * qn + (size_t)(a - qlo),
                           (size_t)(b - a) * sizeof *f);
        }
        free(data);
    }
    return st;
}

kedr_status kedr_adi_restart_on(kedr_ctx *ctx, kedr_comm *comm, const kedr_adi_case *c,
                                const char *path, kedr_adi **out)
{
    int rank = kedr_comm_rank(comm), nranks = kedr_comm_size(comm);
    chk_header h;
    size_t hb = 0;
    char *data = NULL;
    /* the rank count that wrote it: this one (each rank its own file), or another (each rank
     * reads the files that hold its planes) */
    kedr_status st = kedr_comm_agree(comm, peek_header(path, &h));
    if (st != KEDR_OK)
        return st;
    int m = h.nranks;
    if (m == nranks)
        st = read_checkpoint(c, path, rank, nranks, &h, &hb, &data);
    st = kedr_comm_agree(comm, st);
    kedr_adi *s = NULL;
    if (st == KEDR_OK)
        st = kedr_adi_create_on(ctx, comm, c, &s);
    size_t nodes = (size_t)(s ? s->hi - s->lo : 0) * (size_t)c->ny * c->nz;
    double *f = st == KEDR_OK ? malloc((nodes ? 4 * nodes : 1) * sizeof *f) : NULL;
    if (st == KEDR_OK && !f)
        st = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", path);
    if (st == KEDR_OK && m != nranks)
        st = read_set(s, c, path, m, f, &h);
    else if (st == KEDR_OK) {
        memcpy(f, data + hb, 4 * nodes * sizeof *f);
        if (h.nhistory > 0 && !(s->history = malloc(h.nhistory * sizeof *s->history)))
            st = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", path);
        if (st == KEDR_OK)
            read_history(s, data, hb + 4 * nodes * 8, h.nhistory);
    }
    if (s)
        st = kedr_comm_agree(comm, st);
    if (st == KEDR_OK) {
        /* every rank's files at one step (a rank may read a set another rank did not) */
        double mine[2] = {(double)h.step, -(double)h.step}, t[2] = {h.time, -h.time};
        st = kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_MAX, mine, 2);
        if (st == KEDR_OK)
            st = kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_MAX, t, 2);
        if (st == KEDR_OK && (mine[0] != -mine[1] || t[0] != -t[1]))
            st = kedr_fail(KEDR_ERR_PARSE, "%s: the ranks found checkpoints of steps %.0f to "
                           "%.0f: not one set", path, -mine[1], mine[0]);
    }
    if (st == KEDR_OK) {
        const double *const in[4] = {f, f + nodes, f + 2 * nodes, f + 3 * nodes};
        st = adi_set_local(s, in);
    }
    free(f);
    free(data);
    if (st != KEDR_OK) {
        kedr_adi_destroy(s);
        return st;
    }
    if (s->nhistory > 0)
        s->st = s->history[s->nhistory - 1];
    s->st.step = h.step;
    s->st.time = h.time;
    *out = s;
    return KEDR_OK;
}
