/* The exchange stage of a DSMC step over several ranks (seed 003's sixth stage): the grid's
 * columns of cells (all cells of one x index) are split into contiguous ranges, one a rank, and
 * after the move every particle that entered another rank's columns is sent there.
 *
 * The particles travel as records: each field of dsmc_particle_fields (sim.h) in turn, so a
 * new particle array travels without a change here. Particles that left the domain (cell key
 * ncells) stay where they are for the indexing to drop. The cuda back end stages the particle
 * arrays through host memory (the MPI library is not CUDA-aware here: include/kedr/comm.h). */
#include "exchange.h"

#include <stdlib.h>
#include <string.h>

kedr_status dsmc_decomp_init(dsmc_decomp *d, int nx, int nranks, const double *load)
{
    memset(d, 0, sizeof *d);
    if (nranks < 1 || nx < 1)
        return kedr_fail(KEDR_ERR_INVALID, "dsmc_decomp_init: %d ranks over %d columns", nranks,
                         nx);
    if (nranks > nx)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc: %d ranks but the grid has %d columns of "
                         "cells along x: use at most %d ranks, or a finer grid", nranks, nx, nx);
    d->col0 = malloc((size_t)(nranks + 1) * sizeof *d->col0);
    d->owner = malloc((size_t)nx * sizeof *d->owner);
    if (!d->col0 || !d->owner) {
        dsmc_decomp_free(d);
        return kedr_fail(KEDR_ERR_NOMEM, "dsmc_decomp_init: no memory for %d columns", nx);
    }
    d->nranks = nranks;
    d->nx = nx;
    double total = 0;
    for (int i = 0; i < nx; i++)
        total += load ? (load[i] > 0 ? load[i] : 0) : 1.0;
    /* Rank r ends where the running load first reaches (r + 1) / nranks of the total, leaving
     * at least one column to each rank after it. */
    d->col0[0] = 0;
    double run = 0;
    int col = 0;
    for (int r = 0; r < nranks - 1; r++) {
        double target = total * (r + 1) / nranks;
        int last = nx - (nranks - 1 - r); /* the first column rank r must leave to the others */
        if (col < d->col0[r] + 1)
            run += load ? (load[col] > 0 ? load[col] : 0) : 1.0, col++; /* one column at least */
        while (col < last && run + (load ? (load[col] > 0 ? load[col] : 0) : 1.0) / 2 <= target)
            run += load ? (load[col] > 0 ? load[col] : 0) : 1.0, col++;
        d->col0[r + 1] = col;
    }
    d->col0[nranks] = nx;
    for (int r = 0; r < nranks; r++)
        for (int i = d->col0[r]; i < d->col0[r + 1]; i++)
            d->owner[i] = r;
    return KEDR_OK;
}

void dsmc_decomp_free(dsmc_decomp *d)
{
    free(d->col0);
    free(d->owner);
    memset(d, 0, sizeof *d);
}

/* Host views of the particle arrays: the arrays themselves on the cpu, copies on the GPU. */
typedef struct {
    int nf;
    dsmc_field f[DSMC_MAX_FIELDS];
    unsigned char *h[DSMC_MAX_FIELDS];
    uint32_t *keys;
    int copied;
} host_view;

static void view_free(host_view *v)
{
    if (v->copied) {
        for (int k = 0; k < v->nf; k++)
            free(v->h[k]);
        free(v->keys);
    }
    memset(v, 0, sizeof *v);
}

static kedr_status view_open(kedr_dsmc *sim, uint32_t *keys, host_view *v)
{
    memset(v, 0, sizeof *v);
    v->nf = dsmc_particle_fields(&sim->a, &sim->p, v->f);
    size_t n = sim->n;
    if (kedr_ctx_backend(sim->ctx) == KEDR_BACKEND_CPU) {
        for (int k = 0; k < v->nf; k++)
            v->h[k] = *v->f[k].ptr;
        v->keys = keys;
        return KEDR_OK;
    }
    v->copied = 1;
    for (int k = 0; k < v->nf; k++) {
        v->h[k] = malloc((n ? n : 1) * v->f[k].elem);
        if (!v->h[k] || kedr_download(sim->ctx, v->h[k], *v->f[k].ptr, n * v->f[k].elem)) {
            kedr_status s = v->h[k] ? KEDR_ERR_CUDA : KEDR_ERR_NOMEM;
            view_free(v);
            return s == KEDR_ERR_NOMEM ? kedr_fail(s, "kedr_dsmc: exchange: no host memory for "
                                                   "%zu particles", n)
                                       : s;
        }
    }
    v->keys = malloc((n ? n : 1) * sizeof *v->keys);
    if (!v->keys) {
        view_free(v);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: exchange: no host memory for %zu keys", n);
    }
    kedr_status s = kedr_download(sim->ctx, v->keys, keys, n * sizeof *v->keys);
    if (s != KEDR_OK)
        view_free(v);
    return s;
}

/* Where particle i goes: the owner of its cell's column, or this rank for one that left. */
static int dest_of(const kedr_dsmc *sim, const dsmc_decomp *d, uint32_t key, int me)
{
    return key >= sim->ncells ? me : d->owner[key % (uint32_t)sim->p.nx];
}

kedr_status dsmc_exchange(kedr_dsmc *sim, kedr_comm *comm, const dsmc_decomp *d,
                          dsmc_exchange_counts *counts)
{
    int me = kedr_comm_rank(comm), nranks = kedr_comm_size(comm);
    if (counts)
        memset(counts, 0, sizeof *counts);
    if (d->nranks != nranks || d->nx != sim->p.nx)
        return kedr_fail(KEDR_ERR_INVALID, "dsmc_exchange: a decomposition for %d ranks and %d "
                         "columns, used on %d ranks and %d columns", d->nranks, d->nx, nranks,
                         sim->p.nx);
    if (nranks == 1)
        return KEDR_OK;
    uint32_t *keys = NULL;
    host_view v;
    int64_t *per = calloc((size_t)nranks + 1, sizeof *per);
    kedr_status s = per ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "dsmc_exchange: no memory");
    if (s == KEDR_OK)
        s = dsmc_locate(sim, &keys);
    if (s == KEDR_OK)
        s = view_open(sim, keys, &v);
    else
        memset(&v, 0, sizeof v);
    size_t n = sim->n, rec = dsmc_particle_bytes(&sim->p), kept = 0;
    unsigned char *sendbuf = NULL;
    kedr_comm_msg *msgs = NULL;
    int nmsgs = 0;
    if (s == KEDR_OK) {
        for (size_t i = 0; i < n; i++)
            per[dest_of(sim, d, v.keys[i], me)]++;
        size_t leaving = n - (size_t)per[me];
        sendbuf = malloc(leaving ? leaving * rec : 1);
        msgs = calloc((size_t)nranks, sizeof *msgs);
        if (!sendbuf || !msgs)
            s = kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: exchange: no host memory for %zu "
                          "leaving particles", leaving);
    }
    if (s == KEDR_OK) {
        /* each destination's records side by side, in particle order; the staying particles
         * close ranks in place (the same order) */
        size_t *at = calloc((size_t)nranks, sizeof *at);
        if (!at)
            s = kedr_fail(KEDR_ERR_NOMEM, "dsmc_exchange: no memory");
        if (at) {
            size_t off = 0;
            for (int r = 0; r < nranks; r++) {
                at[r] = off;
                if (r != me) {
                    if (per[r]) {
                        msgs[nmsgs].rank = r;
                        msgs[nmsgs].data = sendbuf + off;
                        msgs[nmsgs].bytes = (size_t)per[r] * rec;
                        nmsgs++;
                    }
                    off += (size_t)per[r] * rec;
                }
            }
            for (size_t i = 0; i < n; i++) {
                int r = dest_of(sim, d, v.keys[i], me);
                if (r == me) {
                    if (kept != i) {
                        for (int k = 0; k < v.nf; k++)
                            memcpy(v.h[k] + kept * v.f[k].elem, v.h[k] + i * v.f[k].elem,
                                   v.f[k].elem);
                        v.keys[kept] = v.keys[i];
                    }
                    kept++;
                    continue;
                }
                unsigned char *q = sendbuf + at[r];
                for (int k = 0; k < v.nf; k++) {
                    memcpy(q, v.h[k] + i * v.f[k].elem, v.f[k].elem);
                    q += v.f[k].elem;
                }
                at[r] += rec;
            }
            free(at);
        }
    }
    if (s == KEDR_OK && v.copied) { /* the staying particles back to the GPU */
        for (int k = 0; s == KEDR_OK && k < v.nf; k++)
            s = kedr_upload(sim->ctx, *v.f[k].ptr, v.h[k], kept * v.f[k].elem);
        if (s == KEDR_OK)
            s = kedr_upload(sim->ctx, keys, v.keys, kept * sizeof *v.keys);
    }
    if (s == KEDR_OK)
        sim->n = kept;
    /* every rank learns of any rank's failure before it waits for messages */
    s = kedr_comm_agree(comm, s);
    int nrecv = 0;
    kedr_comm_msg *got = NULL;
    void *recv = NULL;
    if (s == KEDR_OK)
        s = kedr_comm_exchange(comm, nmsgs, msgs, &nrecv, &got, &recv);
    free(sendbuf);
    free(msgs);
    view_free(&v);
    size_t arrived = 0;
    for (int m = 0; s == KEDR_OK && m < nrecv; m++)
        arrived += got[m].bytes / rec;
    if (s == KEDR_OK)
        s = dsmc_reserve_keys(sim, kept + arrived);
    s = kedr_comm_agree(comm, s);
    if (s == KEDR_OK && arrived) {
        /* the records, field by field, after the staying particles; their cell keys */
        dsmc_field f[DSMC_MAX_FIELDS];
        int nf = dsmc_particle_fields(&sim->a, &sim->p, f);
        unsigned char *col = malloc(arrived * (rec > 4 ? rec : 4));
        uint32_t *nk = malloc(arrived * sizeof *nk);
        double *xyz = malloc(arrived * 3 * sizeof *xyz);
        if (!col || !nk || !xyz)
            s = kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: exchange: no host memory for %zu arriving "
                          "particles", arrived);
        size_t field_off = 0;
        for (int k = 0; s == KEDR_OK && k < nf; k++) {
            size_t j = 0, e = f[k].elem;
            for (int m = 0; m < nrecv; m++) {
                const unsigned char *r = (const unsigned char *)got[m].data;
                for (size_t i = 0; i < got[m].bytes / rec; i++, j++)
                    memcpy(col + j * e, r + i * rec + field_off, e);
            }
            /* positions for the keys: x, y (and z) are the first fields */
            if (k < (sim->p.dims == 3 ? 3 : 2))
                for (size_t i = 0; i < arrived; i++)
                    memcpy(&xyz[i * 3 + k], col + i * 8, 8);
            s = kedr_upload(sim->ctx, (unsigned char *)*f[k].ptr + kept * e, col, arrived * e);
            field_off += e;
        }
        if (s == KEDR_OK) {
            for (size_t i = 0; i < arrived; i++)
                nk[i] = sim->p.dims == 3
                            ? dsmc_cell_of3(&sim->p, xyz[i * 3], xyz[i * 3 + 1], xyz[i * 3 + 2])
                            : dsmc_cell_of(&sim->p, xyz[i * 3], xyz[i * 3 + 1]);
            uint32_t *k2 = NULL;
            s = dsmc_locate(sim, &k2); /* located: the keys pointer after the regrowth */
            if (s == KEDR_OK)
                s = kedr_upload(sim->ctx, k2 + kept, nk, arrived * sizeof *nk);
        }
        free(col);
        free(nk);
        free(xyz);
        if (s == KEDR_OK)
            sim->n = kept + arrived;
    }
    free(got);
    free(recv);
    if (s == KEDR_OK) {
        sim->sorted = 0;
        if (counts) {
            counts->sent = n - kept;
            counts->received = arrived;
        }
    }
    free(per);
    return kedr_comm_agree(comm, s);
}
