/* The exchange stage of a DSMC step over several ranks (seed 003's sixth stage): the grid's
 * cells are split into boxes, one a rank (a tree of cuts: recursive coordinate bisection, or
 * columns along x; decomp.c), and after the move every particle that entered another rank's box
 * is sent to that rank, whichever it is (the owner of its cell, by a walk of the tree).
 *
 * The particles travel as records: each field of dsmc_particle_fields (sim.h) in turn, so a
 * new particle array travels without a change here. Particles that left the domain (cell key
 * DSMC_DROP) stay where they are for the indexing to drop. On the GPU the leaving particles are
 * found and packed there (exchange.cu). Between the ranks of one host whose GPUs reach each other
 * (kedr_comm_dev_direct) the records then go GPU to GPU into the destination's registered device
 * buffer (CUDA IPC, include/kedr/comm.h) and are unpacked from there; otherwise (the cpu, ranks
 * on several hosts, KEDR_COMM_IPC=0) only the records cross to the host and back (the MPI library
 * is not CUDA-aware here). Both ways the arrivals come in the same order: by source rank, and in
 * the source's particle order within one.
 *
 * Over ranks the keys come in the rank's terms (dsmc_key_of): the cuda move writes them so, and
 * keys of the grid's cells (the locate, the cpu move) are made so first. A leaver's key is
 * ncells + its cell, so finding the leavers is a comparison, and the staying particles' keys
 * are already the local cells that the indexing sorts by. */
#include "exchange.h"

#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tag of the exchange's messages GPU to GPU (kedr_comm_dev_sendrecv). */
#define DSMC_XTAG 15

/* Where a particle goes: the owner of its cell's box, or this rank for one that left. Keys
 * in the rank's terms (sim->keys_local, dsmc_key_of): the owner of a leaver's cell, this rank
 * for the others. */
static int dest_of(const kedr_dsmc *sim, const dsmc_decomp *d, uint32_t key, int me)
{
    uint32_t nc = (uint32_t)sim->ncells;
    dsmc_owners o = dsmc_decomp_owners(d);
    if (sim->keys_local)
        return dsmc_key_leaves(key, nc) ? dsmc_owner_of(o, key - nc) : me;
    return key >= nc ? me : dsmc_owner_of(o, key);
}

/* The leaving particles as records, side by side per destination rank in rank order and in
 * particle order within one (msgs point into buf, malloc'ed on the cpu; on cuda buf is NULL and
 * they point into the kept pinned send buffer); the staying ones in slots 0..kept. */
typedef struct {
    unsigned char *buf;
    kedr_comm_msg *msgs;
    int nmsgs;
    size_t kept;
    int in_xbuf; /* cuda, GPU to GPU: the records wait at the start of sim->xbuf */
} leaving;

static void leaving_free(leaving *l)
{
    free(l->buf);
    free(l->msgs);
    memset(l, 0, sizeof *l);
}

/* Room for the records of `count` particles per destination (per[r]), and the messages. */
static kedr_status leaving_alloc(leaving *l, const int64_t *per, int nranks, int me, size_t rec)
{
    size_t total = 0;
    for (int r = 0; r < nranks; r++)
        total += r == me ? 0 : (size_t)per[r];
    l->buf = malloc(total ? total * rec : 1);
    l->msgs = calloc((size_t)nranks, sizeof *l->msgs);
    if (!l->buf || !l->msgs)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: exchange: no host memory for %zu leaving "
                         "particles", total);
    size_t off = 0;
    for (int r = 0; r < nranks; r++) {
        if (r == me || per[r] == 0)
            continue;
        l->msgs[l->nmsgs].rank = r;
        l->msgs[l->nmsgs].data = l->buf + off;
        l->msgs[l->nmsgs].bytes = (size_t)per[r] * rec;
        l->nmsgs++;
        off += (size_t)per[r] * rec;
    }
    return KEDR_OK;
}

/* The cpu: the arrays are host memory; the staying particles close ranks in place. */
static kedr_status leave_cpu(kedr_dsmc *sim, const dsmc_decomp *d, int me, int nranks,
                             uint32_t *keys, int64_t *per, leaving *l)
{
    dsmc_field f[DSMC_MAX_FIELDS];
    int nf = dsmc_particle_fields(&sim->a, &sim->p, f);
    size_t n = sim->n, rec = dsmc_particle_bytes(&sim->p), kept = 0;
    for (size_t i = 0; i < n; i++)
        per[dest_of(sim, d, keys[i], me)]++;
    KEDR_TRY(leaving_alloc(l, per, nranks, me, rec));
    size_t *at = calloc((size_t)nranks, sizeof *at);
    if (!at)
        return kedr_fail(KEDR_ERR_NOMEM, "dsmc_exchange: no memory");
    for (int m = 0; m < l->nmsgs; m++)
        at[l->msgs[m].rank] = (size_t)((const unsigned char *)l->msgs[m].data - l->buf);
    for (size_t i = 0; i < n; i++) {
        int r = dest_of(sim, d, keys[i], me);
        if (r == me) {
            if (kept != i)
                for (int k = 0; k < nf; k++)
                    memcpy((unsigned char *)*f[k].ptr + kept * f[k].elem,
                           (unsigned char *)*f[k].ptr + i * f[k].elem, f[k].elem);
            keys[kept] = keys[i];
            kept++;
            continue;
        }
        unsigned char *q = l->buf + at[r];
        for (int k = 0; k < nf; k++) {
            memcpy(q, (unsigned char *)*f[k].ptr + i * f[k].elem, f[k].elem);
            q += f[k].elem;
        }
        at[r] += rec;
    }
    free(at);
    l->kept = kept;
    return KEDR_OK;
}

/* The host side of the exchange, kept from call to call (pinned for cuda, so that the records
 * cross at the link's speed; allocating and touching fresh pages on every step cost more than
 * the copies): what leaves (records by destination, and the GPU path's small tables) and what
 * arrives. */
typedef struct dsmc_xstage {
    void *send, *recv;
    size_t send_bytes, recv_bytes;
    /* GPU to GPU (path DSMC_XPATH_DEVICE): the registered device buffer dbuf of dbuf_bytes, the
     * same size on every rank. In an exchange rank q's records to send lie at its start, grouped
     * by destination, and what q receives right after them, by source rank: S_q records sent,
     * then R_q received, in (S_q + R_q) records' bytes. table[p * nranks + q]: the records rank
     * p sends rank q this exchange (every rank's row, added over the ranks); dmsg: 2 nranks
     * messages (sends, then receives). */
    int path;
    kedr_comm_dev *dev;
    void *dbuf;
    size_t dbuf_bytes;
    uint64_t *table;
    kedr_comm_dev_msg *dmsg;
    long grows;
} dsmc_xstage;

/* *buf (kedr_host_alloc'ed, *cap bytes) holds at least `bytes`; its contents need not survive. */
static kedr_status host_room(kedr_ctx *ctx, void **buf, size_t *cap, size_t bytes)
{
    if (*buf && bytes <= *cap)
        return KEDR_OK;
    kedr_host_free(ctx, *buf);
    *buf = NULL;
    *cap = 0;
    bytes += bytes / 4 + 4096;
    KEDR_TRY(kedr_host_alloc(ctx, buf, bytes));
    *cap = bytes;
    return KEDR_OK;
}

/* KEDR_DSMC_XPROF=1: the exchange's parts timed (the device synchronized between them) and
 * printed by each rank to stderr when its simulator is destroyed; for finding where its time
 * goes, not for production runs. */
enum {
    XP_SELECT, XP_PACK, XP_FILL, XP_SORT, XP_LEAVE, XP_WAIT, XP_COUNTS, XP_GROW, XP_MPI,
    XP_RESERVE, XP_ARRIVE, XP_END, XP_N
};
/* GPU to GPU, "group+pack+download" downloads only the leavers' indices and the groups' starts,
 * "counts' table" is the allreduce of every rank's counts to every other, "grow buffer" the
 * device buffers registered again larger (collective; rare) and the first exchange's choice of
 * the way with its registration, "messages" the device copies
 * between the GPUs with their notes, "upload+unpack" the unpack alone. Through the host the
 * counts go with the messages (kedr_comm_exchange_sizes) and the middle two are 0. */
static const char *const xprof_names[XP_N] = {
    "select (gpu)", "group+pack+download", "fill holes", "messages' table", "leaving, rest",
    "wait for ranks", "counts' table", "grow buffer", "messages", "reserve", "upload+unpack",
    "final agree"};
static double xprof_t; /* when the part being timed began */
static double xprof[XP_N];
static long xprof_calls;
static int xprof_on = -1;

static void xprof_mark(kedr_dsmc *sim, int part, double *t)
{
    if (!xprof_on)
        return;
    kedr_ctx_sync(sim->ctx);
    double now = kedr_wall_seconds();
    xprof[part] += now - *t;
    *t = now;
}

#ifdef KEDR_HAVE_CUDA
static void xfields_of(kedr_dsmc *sim, dsmc_xfields *xf)
{
    memset(xf, 0, sizeof *xf);
    dsmc_field f[DSMC_MAX_FIELDS];
    xf->nf = dsmc_particle_fields(&sim->a, &sim->p, f);
    xf->rec = (int)dsmc_particle_bytes(&sim->p);
    for (int k = 0; k < xf->nf; k++) {
        xf->ptr[k] = (unsigned char *)*f[k].ptr;
        xf->elem[k] = (int)f[k].elem;
    }
}
#endif

void dsmc_exchange_release(kedr_dsmc *sim)
{
    int path = DSMC_XPATH_NONE;
    long grows = 0;
    size_t dbytes = 0;
    if (sim->xstage) {
        dsmc_xstage *x = sim->xstage;
        path = x->path;
        grows = x->grows;
        dbytes = x->dbuf_bytes;
        kedr_host_free(sim->ctx, x->send);
        kedr_host_free(sim->ctx, x->recv);
        kedr_comm_dev_release(x->dev);
        kedr_free(sim->ctx, x->dbuf);
        free(x->table);
        free(x->dmsg);
        free(x);
        sim->xstage = NULL;
    }
    if (xprof_on != 1 || !xprof_calls)
        return;
    if (path == DSMC_XPATH_DEVICE)
        fprintf(stderr, "rank %d: %ld exchanges GPU to GPU (device buffer %.1f MB, grown %ld "
                "times), ms each:", sim->rank, xprof_calls, dbytes / 1e6, grows);
    else
        fprintf(stderr, "rank %d: %ld exchanges through the host, ms each:", sim->rank,
                xprof_calls);
    for (int k = 0; k < XP_N; k++)
        fprintf(stderr, " %s %.3f%s", xprof_names[k], 1e3 * xprof[k] / xprof_calls,
                k + 1 < XP_N ? "," : "\n");
    memset(xprof, 0, sizeof xprof); /* the next simulator's exchanges counted on their own */
    xprof_calls = 0;
}

/* Collective: a device buffer of cap bytes (the same on every rank) allocated and registered in
 * place of the old one, with the first keep bytes at keep_from (device: this rank's records to
 * send, in the old buffer or the scratch) copied to its start. On a failure every rank fails
 * and the old buffer is gone. */
static kedr_status dev_buffer(kedr_dsmc *sim, kedr_comm *comm, dsmc_xstage *x, size_t cap,
                              const void *keep_from, size_t keep)
{
    void *nb = NULL;
    kedr_status s = kedr_alloc(sim->ctx, &nb, cap);
    if (s != KEDR_OK)
        s = kedr_fail(s, "kedr_dsmc: exchange: no GPU memory for a device buffer of %.1f MB (the "
                      "records this step's exchange moves between the ranks of this host): use "
                      "fewer particles a GPU, or KEDR_COMM_IPC=0 (through the host)", cap / 1e6);
    if (s == KEDR_OK && keep)
        s = kedr_copy(sim->ctx, nb, keep_from, keep);
    if (s == KEDR_OK)
        s = kedr_ctx_sync(sim->ctx);
    s = kedr_comm_agree(comm, s);
    if (s != KEDR_OK) {
        kedr_free(sim->ctx, nb);
        return s;
    }
    /* every rank unmaps its partners' old buffers before any rank frees its own */
    kedr_comm_dev_release(x->dev);
    x->dev = NULL;
    s = kedr_comm_agree(comm, KEDR_OK);
    kedr_free(sim->ctx, x->dbuf);
    x->dbuf = nb;
    x->dbuf_bytes = cap;
    if (s == KEDR_OK)
        s = kedr_comm_dev_register(comm, sim->ctx, nb, cap, &x->dev); /* agreed over the ranks */
    if (s != KEDR_OK) {
        kedr_free(sim->ctx, x->dbuf);
        x->dbuf = NULL;
        x->dbuf_bytes = 0;
    }
    return s;
}

/* Where the records rank src sends rank dst land in dst's buffer, in records (t: x->table):
 * after dst's own records to send, and after those of the lower source ranks. The sender and
 * the receiver both place a message by it. */
static size_t land_at(const uint64_t *t, size_t P, size_t src, size_t dst)
{
    size_t at = 0;
    for (size_t r = 0; r < P; r++)
        at += (size_t)t[dst * P + r] + (r < src ? (size_t)t[r * P + dst] : 0);
    return at;
}

/* Through the registered buffers (GPU to GPU on cuda), after the leaving on every rank (the
 * failures agreed): every rank's counts to every other added into x->table; the buffers grown on
 * every rank where any rank's records to send and receive pass their size; then this rank's
 * groups of records copied into their destinations' buffers, each after the records of the
 * lower source ranks, so that they arrive in the order the host path gives. The records to send
 * lie at the buffer's start, or, where pending is not NULL, there (the scratch on cuda when
 * they did not fit, the leaving's buffer on the cpu), grouped by destination in rank order.
 * *arrived: the records that came, at byte *at of the buffer. */
static kedr_status send_device(kedr_dsmc *sim, kedr_comm *comm, dsmc_xstage *x,
                               const int64_t *per, const void *pending, int me, int nranks,
                               size_t *arrived, size_t *at)
{
    size_t P = (size_t)nranks, rec = dsmc_particle_bytes(&sim->p);
    uint64_t *t = x->table;
    memset(t, 0, P * P * sizeof *t);
    for (int r = 0; r < nranks; r++)
        t[(size_t)me * P + (size_t)r] = r == me ? 0 : (uint64_t)per[r];
    KEDR_TRY(kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, t, P * P));
    xprof_mark(sim, XP_COUNTS, &xprof_t);
    /* S_q sent and R_q received by rank q; the most any rank needs (every rank finds the same) */
    uint64_t need = 0, sent_by_me = 0, recv_by_me = 0;
    for (size_t q = 0; q < P; q++) {
        uint64_t sq = 0, rq = 0;
        for (size_t r = 0; r < P; r++) {
            sq += t[q * P + r];
            rq += t[r * P + q];
        }
        need = (sq + rq) * rec > need ? (sq + rq) * rec : need;
        if (q == (size_t)me)
            sent_by_me = sq, recv_by_me = rq;
    }
    if (need > x->dbuf_bytes) { /* a quarter more than needed, in whole 4 KB pages */
        size_t cap = ((size_t)(need + need / 4) + 4095) / 4096 * 4096;
        KEDR_TRY(dev_buffer(sim, comm, x, cap, pending ? pending : x->dbuf,
                            (size_t)sent_by_me * rec));
        x->grows++;
    } else if (pending) {
        KEDR_TRY(kedr_copy(sim->ctx, x->dbuf, pending, (size_t)sent_by_me * rec));
    }
    xprof_mark(sim, XP_GROW, &xprof_t);
    kedr_comm_dev_msg *snd = x->dmsg, *rcv = x->dmsg + P;
    int ns = 0, nr = 0;
    size_t from = 0;
    for (size_t q = 0; q < P; q++) {
        size_t k = t[(size_t)me * P + q];
        if (k == 0)
            continue;
        snd[ns++] = (kedr_comm_dev_msg){(int)q, DSMC_XTAG, from * rec,
                                        land_at(t, P, (size_t)me, q) * rec, k * rec};
        from += k;
    }
    for (size_t p = 0; p < P; p++) {
        size_t k = t[p * P + (size_t)me];
        if (k)
            rcv[nr++] = (kedr_comm_dev_msg){(int)p, DSMC_XTAG, 0,
                                            land_at(t, P, p, (size_t)me) * rec, k * rec};
    }
    *arrived = (size_t)recv_by_me;
    *at = (size_t)sent_by_me * rec;
    return kedr_comm_dev_sendrecv(x->dev, ns, snd, nr, rcv);
}

#ifdef KEDR_HAVE_CUDA
/* The owners' tree as the GPU walks it (sim->xowner: d's cuts, uploaded by leave_cuda). */
static dsmc_owners dev_owners(const kedr_dsmc *sim, const dsmc_decomp *d)
{
    dsmc_owners o = {sim->xowner, d->nranks, (uint32_t)d->n[0], (uint32_t)d->n[1]};
    return o;
}

/* The GPU's exchange scratch: at least `bytes` (its contents need not survive). */
static kedr_status xbuf_room(kedr_dsmc *sim, size_t bytes)
{
    if (bytes <= sim->xbuf_bytes)
        return KEDR_OK;
    kedr_free(sim->ctx, sim->xbuf);
    sim->xbuf = NULL;
    sim->xbuf_bytes = 0;
    bytes += bytes / 4;
    KEDR_TRY(kedr_alloc(sim->ctx, &sim->xbuf, bytes));
    sim->xbuf_bytes = bytes;
    return KEDR_OK;
}

/* Tests (sim->xcheck): the move's counts of each tile's leavers against the selection's own
 * counting pass. */
static kedr_status check_tiles(kedr_dsmc *sim, const dsmc_decomp *d, const uint32_t *keys,
                               size_t n, int me)
{
    size_t nt = (n + DSMC_XTILE - 1) / DSMC_XTILE;
    uint32_t *dev = NULL, *a = malloc(nt * 4), *b = malloc(nt * 4);
    kedr_status s = a && b ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "dsmc_exchange: no memory");
    if (s == KEDR_OK)
        s = kedr_alloc(sim->ctx, (void **)&dev, nt * 4);
    if (s == KEDR_OK)
        s = dsmc_count_leavers_cuda(sim->ctx, keys, n, (uint32_t)sim->ncells, 1,
                                    dev_owners(sim, d), me, dev);
    if (s == KEDR_OK)
        s = kedr_download(sim->ctx, a, sim->xbuf, nt * 4);
    if (s == KEDR_OK)
        s = kedr_download(sim->ctx, b, dev, nt * 4);
    for (size_t t = 0; s == KEDR_OK && t < nt; t++)
        if (a[t] != b[t])
            s = kedr_fail(KEDR_ERR_INVALID, "dsmc_exchange: rank %d: the move counted %u "
                          "leavers in tile %zu of %zu, the selection %u", me, a[t], t, nt, b[t]);
    kedr_free(sim->ctx, dev);
    free(a);
    free(b);
    return s;
}

/* The GPU: the leaving particles are found, grouped by destination and packed there
 * (exchange.cu); the particles from the end of the arrays fill their slots. Through the host,
 * only their records cross to the host, into the kept pinned send buffer in the messages'
 * order. GPU to GPU they are packed at the start of the registered device buffer where they fit
 * (else at the start of the scratch xbuf, l->in_xbuf, for the buffer's growth to take), and only
 * the leavers' indices and the groups' starts come to the host. */
static kedr_status leave_cuda(kedr_dsmc *sim, const dsmc_decomp *d, int me, int nranks,
                              uint32_t *keys, int64_t *per, leaving *l)
{
    kedr_ctx *ctx = sim->ctx;
    dsmc_xstage *x = sim->xstage;
    size_t n = sim->n, rec = dsmc_particle_bytes(&sim->p), m = 0;
    if (!sim->xowner) { /* the tree of cuts, walked on the GPU */
        size_t bytes = (size_t)(d->nranks - 1) * sizeof *d->cut;
        KEDR_TRY(kedr_alloc(ctx, (void **)&sim->xowner, bytes));
        KEDR_TRY(kedr_upload(ctx, sim->xowner, d->cut, bytes));
    }
    /* the move counted each tile's leavers into the scratch (room made for these n then) */
    int counted = sim->keys_local && sim->xtiles_n == n && n > 0;
    sim->xtiles_n = 0;
    KEDR_TRY(xbuf_room(sim, dsmc_select_scratch_words(n) * 4));
    if (counted && sim->xcheck)
        KEDR_TRY(check_tiles(sim, d, keys, n, me));
    uint32_t *idx = sim->perm; /* free between the copies of radial weighting and the index */
    KEDR_TRY(dsmc_select_leavers_cuda(ctx, keys, n, (uint32_t)sim->ncells, sim->keys_local,
                                      dev_owners(sim, d), me, (uint32_t *)sim->xbuf,
                                      counted, idx, &m));
    xprof_mark(sim, XP_SELECT, &xprof_t);
    dsmc_xfields xf;
    xfields_of(sim, &xf);
    /* device scratch: the records (but where they go to the device buffer), then the moves (2
     * words a leaver), the destinations and their sorted copy, the leavers by destination, the
     * groups' starts */
    int device = x->path == DSMC_XPATH_DEVICE;
    l->in_xbuf = device && m * rec > x->dbuf_bytes;
    size_t rec_bytes = device && !l->in_xbuf ? 0 : (m * rec + 7) / 8 * 8;
    KEDR_TRY(xbuf_room(sim, rec_bytes + m * 20 + ((size_t)nranks + 1) * 4));
    unsigned char *xb = sim->xbuf;
    uint32_t *pairs_d = (uint32_t *)(xb + rec_bytes), *dest = pairs_d + 2 * m,
             *dest_sorted = dest + m, *by_dest = dest_sorted + m, *start_d = by_dest + m;
    KEDR_TRY(dsmc_group_leavers_cuda(ctx, keys, idx, m,
                                     sim->keys_local ? (uint32_t)sim->ncells : 0,
                                     dev_owners(sim, d), dest, dest_sorted, by_dest, start_d));
    KEDR_TRY(dsmc_pack_cuda(ctx, &xf, by_dest, m, rec_bytes ? sim->xbuf : x->dbuf));
    /* host: the records (through the host only), the leavers in particle order (for the
     * holes), the starts */
    size_t hrec_bytes = device ? 0 : (m * rec + 7) / 8 * 8;
    KEDR_TRY(host_room(ctx, &x->send, &x->send_bytes,
                       hrec_bytes + (m * 3 + (size_t)nranks + 1) * 4));
    unsigned char *hrec = x->send;
    uint32_t *hidx = (uint32_t *)(hrec + hrec_bytes), *pairs = hidx + m, *start = pairs + 2 * m;
    if (!device)
        KEDR_TRY(kedr_download(ctx, hrec, sim->xbuf, m * rec));
    KEDR_TRY(kedr_download(ctx, hidx, idx, m * sizeof *hidx));
    KEDR_TRY(kedr_download(ctx, start, start_d, ((size_t)nranks + 1) * sizeof *start));
    xprof_mark(sim, XP_PACK, &xprof_t);
    /* the slots below kept that left, filled in order by the staying particles above it */
    size_t kept = n - m, np = 0;
    for (size_t j = 0, src = kept, t = 0; j < m && hidx[j] < kept; j++) {
        while (t < m && hidx[t] < src)
            t++;
        while (t < m && hidx[t] == src) /* src left too */
            src++, t++;
        pairs[2 * np] = hidx[j];
        pairs[2 * np + 1] = (uint32_t)src++;
        np++;
    }
    KEDR_TRY(kedr_upload(ctx, pairs_d, pairs, np * 8));
    KEDR_TRY(dsmc_move_slots_cuda(ctx, &xf, keys, pairs_d, np));
    xprof_mark(sim, XP_FILL, &xprof_t);
    /* the messages: each destination's records, side by side in the send buffer (GPU to GPU
     * only the counts: send_device makes the messages) */
    l->msgs = calloc((size_t)nranks, sizeof *l->msgs);
    if (!l->msgs)
        return kedr_fail(KEDR_ERR_NOMEM, "dsmc_exchange: no memory");
    for (int r = 0; r < nranks; r++) {
        per[r] = (int64_t)start[r + 1] - (int64_t)start[r];
        if (r == me || per[r] == 0 || device)
            continue;
        l->msgs[l->nmsgs++] = (kedr_comm_msg){r, hrec + (size_t)start[r] * rec,
                                              (size_t)per[r] * rec};
    }
    per[me] = (int64_t)kept;
    l->kept = kept;
    xprof_mark(sim, XP_SORT, &xprof_t);
    return KEDR_OK;
}
#endif

/* Collective, at the first exchange over ranks: GPU to GPU or through the host (exchange.h:
 * dsmc_exchange_path), the same on every rank. GPU to GPU, the device buffer is registered here,
 * at first the largest rank's 1/128 of its particles' records (at least 4 MB): room for about
 * 0.4% of the particles to leave and as many to arrive in one step before it grows (the box of
 * `kedr bench dsmc --ranks` at 10^8 a rank moves about 0.06% each way a step). The test
 * switch sim->xdev_force takes the registered buffers wherever their copies go (on the cpu,
 * through MPI), so that their layout and order are checked there too. */
static kedr_status choose_path(kedr_dsmc *sim, kedr_comm *comm, dsmc_xstage *x, int nranks)
{
    const char *e = getenv("KEDR_COMM_IPC");
    int32_t want = KEDR_IS_CUDA(sim->ctx) && !sim->xhost && !(e && !strcmp(e, "0"));
    for (int q = 0; want && q < nranks; q++)
        want = kedr_comm_same_host(comm, q);
    want |= sim->xdev_force;
    KEDR_TRY(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MIN, &want, 1));
    x->path = DSMC_XPATH_HOST;
    if (!want)
        return KEDR_OK;
    size_t rec = dsmc_particle_bytes(&sim->p);
    uint64_t cap = sim->xdev_first ? sim->xdev_first : sim->n * rec / 128;
    if (!sim->xdev_first && cap < ((uint64_t)4 << 20))
        cap = (uint64_t)4 << 20;
    KEDR_TRY(kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_MAX, &cap, 1));
    size_t P = (size_t)nranks;
    x->table = malloc(P * P * sizeof *x->table);
    x->dmsg = malloc(2 * P * sizeof *x->dmsg);
    kedr_status s = x->table && x->dmsg ? KEDR_OK
                                        : kedr_fail(KEDR_ERR_NOMEM, "dsmc_exchange: no memory "
                                                    "for %zu ranks' counts", P);
    KEDR_TRY(kedr_comm_agree(comm, s));
    KEDR_TRY(dev_buffer(sim, comm, x, (size_t)cap, NULL, 0));
    int32_t all = 1;
    for (int q = 0; q < nranks && !sim->xdev_force; q++)
        all &= kedr_comm_dev_direct(x->dev, q);
    KEDR_TRY(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MIN, &all, 1));
    if (all) {
        x->path = DSMC_XPATH_DEVICE;
    } else { /* some pair's GPUs do not reach each other: all through the host */
        kedr_comm_dev_release(x->dev);
        x->dev = NULL;
        KEDR_TRY(kedr_comm_agree(comm, KEDR_OK));
        kedr_free(sim->ctx, x->dbuf);
        x->dbuf = NULL;
        x->dbuf_bytes = 0;
    }
    if (sim->rank == 0 && KEDR_IS_CUDA(sim->ctx))
        kedr_log(KEDR_LOG_INFO, "dsmc over %d ranks: the exchange's records %s", nranks,
                 all ? "GPU to GPU (CUDA IPC)"
                     : "through host memory (some pair of GPUs does not reach the other)");
    return KEDR_OK;
}

int dsmc_exchange_path(const kedr_dsmc *sim, size_t *dbuf_bytes, long *grows)
{
    const dsmc_xstage *x = sim->xstage;
    if (dbuf_bytes)
        *dbuf_bytes = x ? x->dbuf_bytes : 0;
    if (grows)
        *grows = x ? x->grows : 0;
    return x ? x->path : DSMC_XPATH_NONE;
}

size_t dsmc_exchange_bytes(const kedr_dsmc *sim)
{
    size_t b = sim->xstage ? sim->xstage->dbuf_bytes : 0; /* on the cpu only for tests */
    if (KEDR_IS_CUDA(sim->ctx))
        b += sim->xbuf_bytes +
             (sim->xowner ? (size_t)(sim->decomp.nranks - 1) * sizeof *sim->xowner : 0);
    return b;
}

kedr_status dsmc_exchange(kedr_dsmc *sim, kedr_comm *comm, const dsmc_decomp *d,
                          dsmc_exchange_counts *counts)
{
    if (xprof_on < 0) {
        const char *e = getenv("KEDR_DSMC_XPROF");
        xprof_on = e && e[0] == '1';
    }
    xprof_t = xprof_on ? kedr_wall_seconds() : 0;
    int me = kedr_comm_rank(comm), nranks = kedr_comm_size(comm);
    if (counts)
        memset(counts, 0, sizeof *counts);
    if (d->nranks != nranks || d->n[0] != sim->p.nx || d->n[1] != sim->p.ny ||
        d->n[2] != sim->p.nz)
        return kedr_fail(KEDR_ERR_INVALID, "dsmc_exchange: a decomposition for %d ranks and %d x "
                         "%d x %d cells, used on %d ranks and %d x %d x %d cells", d->nranks,
                         d->n[0], d->n[1], d->n[2], nranks, sim->p.nx, sim->p.ny, sim->p.nz);
    if (nranks == 1)
        return KEDR_OK;
    size_t n = sim->n, rec = dsmc_particle_bytes(&sim->p);
    uint32_t *keys = NULL;
    leaving l;
    memset(&l, 0, sizeof l);
    if (!sim->xstage)
        sim->xstage = calloc(1, sizeof *sim->xstage);
    dsmc_xstage *x = sim->xstage;
    int64_t *per = calloc((size_t)nranks + 1, sizeof *per);
    kedr_status s = per && x ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "dsmc_exchange: no memory");
    if (!x || x->path == DSMC_XPATH_NONE) { /* the first exchange over ranks: the path */
        s = kedr_comm_agree(comm, s);
        if (s == KEDR_OK)
            s = choose_path(sim, comm, x, nranks);
        xprof_mark(sim, XP_GROW, &xprof_t); /* the first registration counts as a growth */
    }
    int device = x && x->path == DSMC_XPATH_DEVICE; /* the same on every rank */
    if (s == KEDR_OK)
        s = dsmc_locate(sim, &keys);
    if (s == KEDR_OK && sim->nlocal != sim->ncells && !sim->keys_local) {
        /* the grid's cells (the locate, the cpu move) in the rank's terms */
#ifdef KEDR_HAVE_CUDA
        if (KEDR_IS_CUDA(sim->ctx))
            s = dsmc_keys_local_cuda(sim->ctx, keys, n, sim->cmap, (uint32_t)sim->ncells);
        else
#endif
            for (size_t i = 0; i < n; i++)
                keys[i] = dsmc_key_of(sim->cmap, keys[i], (uint32_t)sim->ncells);
        sim->keys_local = 1;
    }
#ifdef KEDR_HAVE_CUDA
    if (s == KEDR_OK && KEDR_IS_CUDA(sim->ctx))
        s = leave_cuda(sim, d, me, nranks, keys, per, &l);
    else
#endif
        if (s == KEDR_OK)
            s = leave_cpu(sim, d, me, nranks, keys, per, &l);
    if (s == KEDR_OK)
        sim->n = l.kept;
    xprof_mark(sim, XP_LEAVE, &xprof_t);
    /* every rank learns of any rank's failure before it waits for messages */
    s = kedr_comm_agree(comm, s);
    xprof_mark(sim, XP_WAIT, &xprof_t);
    int nrecv = 0;
    kedr_comm_msg *got = NULL;
    size_t total = 0, arrived = 0, dev_at = 0;
    if (s == KEDR_OK && device)
        s = send_device(sim, comm, x, per,
                        !KEDR_IS_CUDA(sim->ctx) ? l.buf : l.in_xbuf ? sim->xbuf : NULL, me,
                        nranks, &arrived, &dev_at);
    if (s == KEDR_OK && device && !KEDR_IS_CUDA(sim->ctx) && arrived) {
        /* the cpu (tests: sim->xdev_force): the messages as the host path has them */
        got = calloc((size_t)nranks, sizeof *got);
        if (!got)
            s = kedr_fail(KEDR_ERR_NOMEM, "dsmc_exchange: no memory");
        size_t off = 0;
        for (int p = 0; s == KEDR_OK && p < nranks; p++) {
            size_t k = x->table[(size_t)p * (size_t)nranks + (size_t)me];
            if (k)
                got[nrecv++] = (kedr_comm_msg){p, (unsigned char *)x->dbuf + dev_at + off * rec,
                                               k * rec};
            off += k;
        }
        arrived = 0; /* counted from the messages below */
    }
    if (s == KEDR_OK && !device)
        s = kedr_comm_exchange_sizes(comm, l.nmsgs, l.msgs, &nrecv, &got, &total);
    if (s == KEDR_OK && !device)
        s = host_room(sim->ctx, &x->recv, &x->recv_bytes, total);
    if (!device) {
        s = kedr_comm_agree(comm, s);
        if (s == KEDR_OK)
            s = kedr_comm_exchange_data(comm, l.nmsgs, l.msgs, nrecv, got, x->recv);
    }
    xprof_mark(sim, XP_MPI, &xprof_t);
    size_t kept = l.kept;
    leaving_free(&l);
    for (int m = 0; s == KEDR_OK && m < nrecv; m++)
        arrived += got[m].bytes / rec;
    if (s == KEDR_OK)
        s = dsmc_reserve_keys(sim, kept + arrived);
    s = kedr_comm_agree(comm, s);
    xprof_mark(sim, XP_RESERVE, &xprof_t);
#ifdef KEDR_HAVE_CUDA
    if (s == KEDR_OK && arrived && KEDR_IS_CUDA(sim->ctx)) {
        /* the records (through the host in one copy: they arrive side by side in recv; GPU to
         * GPU already in the device buffer, after this rank's sent ones), unpacked after the
         * staying particles and located there */
        const void *in = device ? (const unsigned char *)x->dbuf + dev_at : sim->xbuf;
        if (!device) {
            s = xbuf_room(sim, arrived * rec);
            in = sim->xbuf;
        }
        if (s == KEDR_OK && !device)
            s = kedr_upload(sim->ctx, sim->xbuf, x->recv, arrived * rec);
        dsmc_xfields xf;
        xfields_of(sim, &xf);
        if (s == KEDR_OK)
            s = dsmc_unpack_cuda(sim->ctx, &xf, in, arrived, kept);
        uint32_t *k2 = NULL;
        if (s == KEDR_OK)
            s = dsmc_locate(sim, &k2); /* located: the keys pointer after the regrowth */
        dsmc_particles at = sim->a;
        double **f64[6] = {&at.x, &at.y, &at.z, &at.vx, &at.vy, &at.vz};
        for (int k = 0; k < 6; k++)
            if (*f64[k])
                *f64[k] += kept;
        if (at.erot)
            at.erot += kept;
        if (at.sp)
            at.sp += kept;
        if (at.vib)
            at.vib += kept;
        if (s == KEDR_OK)
            s = dsmc_locate_cuda(sim->ctx, &sim->p, arrived, at, k2 + kept);
        if (s == KEDR_OK && sim->nlocal != sim->ncells)
            s = dsmc_keys_local_cuda(sim->ctx, k2 + kept, arrived, sim->cmap,
                                     (uint32_t)sim->ncells);
        if (s == KEDR_OK)
            sim->n = kept + arrived;
    } else
#endif
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
                nk[i] = dsmc_key_of(
                    sim->cmap,
                    sim->p.dims == 3
                        ? dsmc_cell_of3(&sim->p, xyz[i * 3], xyz[i * 3 + 1], xyz[i * 3 + 2])
                        : dsmc_cell_of(&sim->p, xyz[i * 3], xyz[i * 3 + 1]),
                    (uint32_t)sim->ncells);
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
    xprof_mark(sim, XP_ARRIVE, &xprof_t);
    if (s == KEDR_OK) {
        sim->sorted = 0;
        sim->keys_local = sim->nlocal != sim->ncells; /* the rank's own cells, local */
        if (counts) {
            counts->sent = n - kept;
            counts->received = arrived;
        }
    }
    free(per);
    s = kedr_comm_agree(comm, s);
    xprof_mark(sim, XP_END, &xprof_t);
    xprof_calls++;
    return s;
}

kedr_status dsmc_exchange_tiles(kedr_dsmc *sim, uint32_t **tiles)
{
    *tiles = NULL;
#ifdef KEDR_HAVE_CUDA
    if (!KEDR_IS_CUDA(sim->ctx) || sim->nlocal == sim->ncells || sim->p.radial || sim->n == 0)
        return KEDR_OK;
    size_t words = dsmc_select_scratch_words(sim->n);
    KEDR_TRY(xbuf_room(sim, words * 4));
    KEDR_TRY(kedr_memset(sim->ctx, sim->xbuf, 0, words * 4));
    *tiles = (uint32_t *)sim->xbuf;
#else
    (void)sim;
#endif
    return KEDR_OK;
}
