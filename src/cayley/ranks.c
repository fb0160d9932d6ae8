/* The dense search over MPI ranks: the partition, the rounds of a level (expand, send, mark),
 * per-rank checkpoints, and the cpu back end (the cuda one is ranks.cu). ranks.h describes the
 * codes and the blocks; docs/cayley.md, "Over MPI ranks", the whole.
 *
 * A level s (frontier code fc = c(s - 1), new code nc = c(s)):
 *  1. each rank counts the frontier elements of each of its blocks;
 *  2. rounds, until every rank has expanded its whole frontier (the ranks agree on that): a rank
 *     takes its next blocks while their frontier elements times the generators that may leave
 *     the slice from each block fit one destination's batch (the worst case: every such product
 *     for the same rank; find_leavers), expands them
 *     (products in its own slice are marked at once), sends each other rank a note (the count
 *     of products it owns, this rank's status and whether it has work in flight: the counts,
 *     the agreement on errors and the "anyone still has work" reduction in one message), then
 *     the products (by kedr_comm_dev: GPU to GPU by CUDA IPC between the ranks of a host,
 *     through host memory otherwise), and marks what it receives (cuda: queued, counted once
 *     a level); a rank whose frontier is done takes part with empty batches. The next round's expansion is
 *     started before this round's messages, into the other set of batches (on the cpu it runs
 *     then; on the GPU it runs on a stream of its own while the batches travel and are marked:
 *     the codes only ever gain bits by atomic ors, so the order does not matter);
 *  3. F(s) = the sum over the ranks of the elements each marked first (the old code 0 of an
 *     atomic or, so a product found twice counts once).
 * A product is sent as its offset in its owner's slice, in 5 bytes (8 when a slice holds 2^40
 * elements or more), duplicates and all: the owner alone knows whether an element is new.
 * The batches are by default as large as the memory a rank may use allows, less a headroom
 * (kedr_cayley_ranks_plan_fit; the least memory over the ranks, so that all hold the same). */
#include "ranks.h"
#include "cayley_elem.h"
#include "ck_file.h"
#include "growth.h"
#include "core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the partition ---- */

static uint64_t units_of(const kedr_cayley_group *g)
{
    return (g->order + KEDR_CAYLEY_RANK_BLOCK - 1) / KEDR_CAYLEY_RANK_BLOCK;
}

static kedr_status check_ranks(const kedr_cayley_group *g, int ranks)
{
    uint64_t units = units_of(g);
    uint64_t most = units < KEDR_CAYLEY_MAX_RANKS ? units : KEDR_CAYLEY_MAX_RANKS;
    if (ranks < 1 || (uint64_t)ranks > most)
        return kedr_fail(KEDR_ERR_INVALID, "%s over %d ranks: its %llu elements split into at "
                         "most %llu slices (blocks of %d elements%s); run on 1 to %llu ranks",
                         g->spec, ranks, (unsigned long long)g->order, (unsigned long long)most,
                         KEDR_CAYLEY_RANK_BLOCK,
                         most == KEDR_CAYLEY_MAX_RANKS ? ", at most 1024 ranks" : "",
                         (unsigned long long)most);
    return KEDR_OK;
}

static uint64_t slice_lo(uint64_t units, int ranks, int r, uint64_t order)
{
    uint64_t lo = units * (uint64_t)r / (uint64_t)ranks * KEDR_CAYLEY_RANK_BLOCK;
    return lo < order ? lo : order;
}

kedr_status kedr_cayley_rank_slice(const kedr_cayley_group *g, int ranks, int r, uint64_t *lo,
                                   uint64_t *hi)
{
    if (!g || !lo || !hi)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_rank_slice: an argument is NULL");
    KEDR_TRY(check_ranks(g, ranks));
    if (r < 0 || r >= ranks)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_rank_slice: rank %d of %d", r, ranks);
    uint64_t units = units_of(g);
    *lo = slice_lo(units, ranks, r, g->order);
    *hi = r + 1 == ranks ? g->order : slice_lo(units, ranks, r + 1, g->order);
    return KEDR_OK;
}

int kedr_cayley_rank_owner(const kedr_cayley_group *g, int ranks, uint64_t element)
{
    return cayley_ranks_owner(element, units_of(g), ranks);
}

/* Blocks of a round: KEDR_CAYLEY_RANK_BLOCK times a power of two, so that the largest slice
 * has at most RANKS_MAX_BLOCKS of them. */
static uint64_t block_elems_for(uint64_t slice_max)
{
    uint64_t b = KEDR_CAYLEY_RANK_BLOCK;
    while ((slice_max + b - 1) / b > RANKS_MAX_BLOCKS)
        b *= 2;
    return b;
}

kedr_status kedr_cayley_ranks_plan_make(const kedr_cayley_group *g, int ranks, size_t batch_bytes,
                                        kedr_cayley_ranks_plan *p)
{
    if (!g || !p)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_ranks_plan_make: an argument is NULL");
    KEDR_TRY(cayley_check_group(g, "kedr_cayley_ranks_plan_make"));
    if (!cayley_ranked_kind(g->kind))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s has no ranking: the search over MPI ranks is "
                         "the dense search of the ranked groups", g->spec);
    KEDR_TRY(check_ranks(g, ranks));
    memset(p, 0, sizeof *p);
    p->ranks = ranks;
    p->slice_min = UINT64_MAX;
    uint64_t units = units_of(g), prev_hi = 0;
    for (int r = 0; r < ranks; r++) {
        uint64_t lo, hi;
        KEDR_TRY(kedr_cayley_rank_slice(g, ranks, r, &lo, &hi));
        /* the arithmetic, checked where it could go wrong: order, blocks, both ends' owner */
        if (lo != prev_hi || hi <= lo || lo % KEDR_CAYLEY_RANK_BLOCK ||
            (r + 1 < ranks && hi % KEDR_CAYLEY_RANK_BLOCK) ||
            cayley_ranks_owner(lo, units, ranks) != r ||
            cayley_ranks_owner(hi - 1, units, ranks) != r ||
            (hi < g->order && cayley_ranks_owner(hi, units, ranks) != r + 1))
            return kedr_fail(KEDR_ERR_INVALID, "%s over %d ranks: the partition is wrong at rank "
                             "%d ([%llu, %llu) after %llu; owners %d, %d)", g->spec, ranks, r,
                             (unsigned long long)lo, (unsigned long long)hi,
                             (unsigned long long)prev_hi, cayley_ranks_owner(lo, units, ranks),
                             cayley_ranks_owner(hi - 1, units, ranks));
        p->slice_min = hi - lo < p->slice_min ? hi - lo : p->slice_min;
        p->slice_max = hi - lo > p->slice_max ? hi - lo : p->slice_max;
        prev_hi = hi;
    }
    if (prev_hi != g->order)
        return kedr_fail(KEDR_ERR_INVALID, "%s over %d ranks: the slices end at %llu, not at the "
                         "order %llu", g->spec, ranks, (unsigned long long)prev_hi,
                         (unsigned long long)g->order);
    p->block_elements = block_elems_for(p->slice_max);
    uint64_t nblocks = (p->slice_max + p->block_elements - 1) / p->block_elements;
    /* by default four times a slice's codes, between 16 MB and KEDR_CAYLEY_BATCH_BYTES: small
     * groups need no more, and the ranks of a host share its memory */
    uint64_t code = nblocks * p->block_elements / 4;
    if (!batch_bytes)
        batch_bytes = (size_t)(4 * code < ((uint64_t)16 << 20)       ? (uint64_t)16 << 20
                               : 4 * code > KEDR_CAYLEY_BATCH_BYTES ? KEDR_CAYLEY_BATCH_BYTES
                                                                    : 4 * code);
    /* a destination's batch: the share of batch_bytes, but no more than a whole slice's
     * products (small groups) and no less than one block's worst case */
    uint64_t ngens = (uint64_t)(g->ngens > 0 ? g->ngens : 1);
    p->entry_bytes = p->slice_max < ((uint64_t)1 << 40) ? 5 : 8;
    uint64_t eb = (uint64_t)p->entry_bytes;
    uint64_t cap = batch_bytes / eb / (uint64_t)ranks, least = p->block_elements * ngens;
    if (cap > nblocks * p->block_elements * ngens)
        cap = nblocks * p->block_elements * ngens;
    p->batch_entries = cap > least ? cap : least;
    p->code_bytes = (size_t)(nblocks * p->block_elements / 4);
    /* two slots of a batch for every other rank */
    p->batch_bytes = (size_t)(2 * p->batch_entries * eb * (uint64_t)(ranks - 1));
    p->receive_bytes = (size_t)(p->batch_entries * eb * (uint64_t)(ranks - 1));
    size_t counts = (size_t)nblocks * 8 + 8 * ((size_t)ranks + 1); /* and the slices' starts */
    p->gpu_bytes = p->code_bytes + p->batch_bytes + p->receive_bytes + counts +
                   8 * (size_t)ranks + 64;
    /* and on the host (cuda: kedr_comm_dev's page-locked copy of the batches, for the ranks
     * not reached GPU to GPU) a byte a block: its generators that may leave the slice */
    p->host_bytes = p->batch_bytes + p->receive_bytes + counts + (size_t)nblocks +
                    8 * (size_t)ranks;
    p->cpu_bytes = p->code_bytes + p->host_bytes;
    return KEDR_OK;
}

size_t kedr_cayley_ranks_headroom(size_t memory_bytes)
{
    size_t h = memory_bytes / 16, most = (size_t)1 << 30;
    return h < most ? h : most;
}

/* The room left in `memory` by a need, less the headroom (0 when there is none). */
static uint64_t room_in(size_t memory, size_t need)
{
    size_t keep = kedr_cayley_ranks_headroom(memory);
    return memory > need && memory - need > keep ? (uint64_t)(memory - need - keep) : 0;
}

kedr_status kedr_cayley_ranks_plan_fit(const kedr_cayley_group *g, int ranks, size_t batch_bytes,
                                       size_t memory_bytes, size_t host_bytes, int cuda,
                                       kedr_cayley_ranks_plan *p)
{
    if (batch_bytes || !memory_bytes)
        return kedr_cayley_ranks_plan_make(g, ranks, batch_bytes, p);
    /* the least batches first (a block's worst case a destination), then each entry more of
     * a destination's batch costs 3 (N - 1) entries: two sets to send and the receive area */
    KEDR_TRY(kedr_cayley_ranks_plan_make(g, ranks, 1, p));
    if (ranks == 1)
        return KEDR_OK; /* no batches */
    uint64_t room = room_in(memory_bytes, cuda ? p->gpu_bytes : p->cpu_bytes);
    if (cuda && host_bytes) {
        uint64_t host_room = room_in(host_bytes, p->host_bytes);
        room = host_room < room ? host_room : room;
    }
    uint64_t per = 3 * (uint64_t)(ranks - 1) * (uint64_t)p->entry_bytes;
    uint64_t cap = p->batch_entries + room / per, most = (uint64_t)SIZE_MAX / 16 / (uint64_t)ranks;
    if (cap > most)
        cap = most;
    /* at most KEDR_CAYLEY_RANKS_BATCH_MOST a set: past a few GB the rounds are already few, and
     * a rank staged through the host page-locks a copy of its batches (pancake:14 over 4 ranks
     * would otherwise lock some 77 GB a rank) */
    uint64_t set_most = KEDR_CAYLEY_RANKS_BATCH_MOST / ((uint64_t)p->entry_bytes * (uint64_t)ranks);
    if (cap > set_most && set_most >= p->batch_entries)
        cap = set_most;
    /* plan_make takes a destination's share of the bytes and lowers it to a slice's products */
    return kedr_cayley_ranks_plan_make(g, ranks, (size_t)(cap * (uint64_t)p->entry_bytes *
                                                          (uint64_t)ranks), p);
}

/* ---- the cpu back end ---- */

static inline uint64_t pop64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (x * 0x0101010101010101ull) >> 56;
}

/* The low bit of every field of w holding code c (1 or 2). */
static inline uint32_t fields_of(uint32_t w, uint32_t c)
{
    uint32_t y = w ^ (c == 1 ? 0x55555555u : 0xAAAAAAAAu);
    return ~(y | (y >> 1)) & 0x55555555u;
}

/* Marks local element offset `off` with nc unless it has a code: 1 when this call set it. */
static inline int mark_one(uint32_t *codes, uint64_t off, uint32_t nc)
{
    uint32_t *p = &codes[off >> 4];
    unsigned shift = (unsigned)(off & 15) * 2;
    if ((__atomic_load_n(p, __ATOMIC_RELAXED) >> shift) & 3u)
        return 0; /* a nonzero code stays nonzero during a level */
    uint32_t old = __atomic_fetch_or(p, nc << shift, __ATOMIC_RELAXED);
    return ((old >> shift) & 3u) == 0;
}

static kedr_status cpu_begin(cayley_ranks *R)
{
    R->codes = calloc(R->words ? R->words : 1, 4);
    int ok = R->codes != NULL;
    for (int k = 0; k < 2; k++) {
        R->nout[k] = calloc((size_t)R->nranks + 1, 8);
        ok &= R->nout[k] != NULL;
    }
    if (!ok)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: rank %d: out of host memory for its slice's codes "
                         "and batches", R->g->spec, R->rank);
    if (R->lo == 0)
        R->codes[0] = 1u; /* the identity: the frontier of level 0 */
    return KEDR_OK;
}

static void cpu_end(cayley_ranks *R)
{
    free(R->codes);
    R->codes = NULL;
    for (int k = 0; k < 2; k++) {
        free(R->nout[k]);
        R->nout[k] = NULL;
    }
}

static kedr_status cpu_count(cayley_ranks *R, uint32_t fc, uint64_t *counts)
{
    const uint32_t *codes = R->codes;
    uint64_t bw = R->block_elems / 16;
    long nb = (long)R->nblocks;
#pragma omp parallel for schedule(static) num_threads(R->ctx->threads) if (R->words > 65536)
    for (long b = 0; b < nb; b++) {
        uint64_t c = 0;
        for (uint64_t w = (uint64_t)b * bw; w < (uint64_t)(b + 1) * bw; w++)
            c += pop64(fields_of(codes[w], fc));
        counts[b] = c;
    }
    return KEDR_OK;
}

static kedr_status cpu_start(cayley_ranks *R, int slot, uint64_t b0, uint64_t b1, uint32_t fc,
                             uint32_t nc)
{
    const kedr_cayley_group *g = R->g;
    uint32_t *codes = R->codes;
    unsigned char *out = R->out[slot];
    uint64_t *nout = R->nout[slot], cap = R->cap, lo = R->lo, hi = R->hi, units = R->units;
    const uint64_t *los = R->los;
    int nranks = R->nranks, ngens = g->ngens, eb = R->entry, me = R->rank;
    long w0 = (long)(b0 * R->block_elems / 16), w1 = (long)(b1 * R->block_elems / 16);
    uint64_t f = 0;
    memset(nout, 0, ((size_t)nranks + 1) * 8);
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : f) num_threads(R->ctx->threads) \
    if (w1 - w0 > 256)
    for (long w = w0; w < w1; w++) {
        uint32_t m = fields_of(__atomic_load_n(&codes[w], __ATOMIC_RELAXED), fc);
        if (!m)
            continue;
        __atomic_fetch_or(&codes[w], m | (m << 1), __ATOMIC_RELAXED); /* expanded: 3 */
        do {
            uint64_t x = lo + 16 * (uint64_t)w + (uint64_t)__builtin_ctz(m) / 2;
            m &= m - 1;
            cayley_elem e = cayley_load(g, x);
            for (int k = 0; k < ngens; k++) {
                uint64_t r = cayley_neighbour(g, &e, k);
                if (r >= lo && r < hi) {
                    f += (uint64_t)mark_one(codes, r - lo, nc);
                } else {
                    int o = cayley_ranks_owner(r, units, nranks);
                    uint64_t at = __atomic_fetch_add(&nout[o], 1, __ATOMIC_RELAXED);
                    if (at < cap) /* always, by the choice of the round's blocks */
                        cayley_ranks_put(out + (cayley_ranks_region(o, me) * cap + at) *
                                                   (uint64_t)eb,
                                         r - los[o], eb);
                }
            }
        } while (m);
    }
    nout[nranks] = f;
    return KEDR_OK;
}

/* The cpu's expansion is done when it starts: its counts are checked. */
static kedr_status cpu_finish(cayley_ranks *R, int slot, uint64_t *found)
{
    const uint64_t *nout = R->nout[slot];
    for (int o = 0; o < R->nranks; o++)
        if (nout[o] > R->cap)
            return kedr_fail(KEDR_ERR_INVALID, "%s: rank %d: internal error: %llu products for "
                             "rank %d, more than a batch's %llu", R->g->spec, R->rank,
                             (unsigned long long)nout[o], o, (unsigned long long)R->cap);
    *found = nout[R->nranks];
    return KEDR_OK;
}

static kedr_status cpu_mark(cayley_ranks *R, int slot, const unsigned char *entries, size_t n,
                            uint32_t nc, uint64_t *found, uint64_t *outside)
{
    (void)slot;
    uint32_t *codes = R->codes;
    uint64_t f = 0, bad = 0, size = R->hi - R->lo;
    int eb = R->entry;
#pragma omp parallel for schedule(static) reduction(+ : f, bad) num_threads(R->ctx->threads) \
    if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        uint64_t off = cayley_ranks_get(entries + i * (size_t)eb, eb);
        if (off < size)
            f += (uint64_t)mark_one(codes, off, nc);
        else
            bad++;
    }
    *found = f;
    *outside = bad;
    return KEDR_OK;
}

static kedr_status cpu_settle(cayley_ranks *R, uint64_t *found, uint64_t *outside)
{
    (void)R;
    *found = *outside = 0;
    return KEDR_OK;
}

static kedr_status cpu_download(cayley_ranks *R, size_t w, uint32_t *buf, size_t n)
{
    memcpy(buf, R->codes + w, n * 4);
    return KEDR_OK;
}

static kedr_status cpu_upload(cayley_ranks *R, size_t w, const uint32_t *buf, size_t n)
{
    memcpy(R->codes + w, buf, n * 4);
    return KEDR_OK;
}

static const cayley_ranks_backend cpu_backend = {cpu_begin,  cpu_count,    cpu_start,
                                                 cpu_finish, cpu_mark,     cpu_settle,
                                                 cpu_download, cpu_upload, cpu_end};

/* ---- a level ---- */

static uint32_t code_of(int level) { return 1u + (uint32_t)(level & 1); }

/* Every rank's status agreed; the MPI calls' own failures count as this rank's. */
#define AGREE(R, st) ((st) = kedr_comm_agree((R)->comm, (st)))

/* Products another rank sent this one (or, at a level's end, the ranks together) that lie
 * outside the receiving slice: another rank's error, refused. */
static kedr_status outside_error(const cayley_ranks *R, uint64_t outside)
{
    return kedr_fail(KEDR_ERR_INVALID, "%s: rank %d: %llu products received outside the "
                     "slices they were sent to (rank %d's is [%llu, %llu))", R->g->spec, R->rank,
                     (unsigned long long)outside, R->rank, (unsigned long long)R->lo,
                     (unsigned long long)R->hi);
}

/* What a rank tells every other at the start of a round, in one message each way: the
 * products it sends that rank, its status and whether it has a round in flight. The counts,
 * the agreement on errors and the "anyone still has work" reduction of a round are thus one
 * point-to-point message to each other rank instead of a count message and three collectives. */
typedef struct {
    uint64_t count;
    int32_t status, more;
} round_note;

/* The notes of a round: *more = 1 when some rank has a round in flight. A rank whose status is
 * an error makes every rank (each has that rank's note) take part in kedr_comm_agree, which
 * returns the first failing rank's error with its message on all of them. */
static kedr_status round_notes(cayley_ranks *R, int slot, kedr_status st, int inflight,
                               int *more)
{
    int N = R->nranks, me = R->rank, n = 0, failed = st != KEDR_OK;
    *more = inflight;
    if (N > 1) {
        round_note *notes = (round_note *)R->notes;
        kedr_comm_halo *h = R->halos;
        for (int o = 0; o < N; o++)
            if (o != me) {
                notes[o] = (round_note){st == KEDR_OK ? R->nout[slot][o] : 0, (int32_t)st,
                                        inflight};
                h[n] = (kedr_comm_halo){o, 0, &notes[o], sizeof notes[o]};
                h[N + n] = (kedr_comm_halo){o, 0, &notes[N + o], sizeof notes[o]};
                n++;
            }
        /* an MPI failure here leaves no way to agree: it is returned as it is */
        KEDR_TRY(kedr_comm_sendrecv(R->comm, n, h, n, h + N));
        for (int o = 0; o < N; o++)
            if (o != me) {
                R->incoming[o] = notes[N + o].count;
                failed |= notes[N + o].status != (int32_t)KEDR_OK;
                *more |= notes[N + o].more != 0;
            }
    }
    if (failed) {
        AGREE(R, st);
        return st != KEDR_OK ? st : kedr_fail(KEDR_ERR_INVALID, "%s: rank %d: a rank failed",
                                              R->g->spec, me);
    }
    return KEDR_OK;
}

/* Sends each batch of slot to its owner (the counts are known from the round's notes) and
 * queues the marks of what arrives; *found grows by the new elements the back end counts at
 * once (the cpu: all of them; cuda counts at the level's end, be->settle). The batches go
 * from xbuf to the owners' receive areas by kedr_comm_dev (GPU to GPU where direct); empty
 * batches are not sent, and both sides know which. A rank never sends more than a batch: its
 * finish checked its counts, and its status rode its notes. A failure here is this rank's
 * status in the next round's notes (or the level's end). */
static kedr_status exchange_round(cayley_ranks *R, int slot, uint32_t nc, uint64_t *found)
{
    const uint64_t *nout = R->nout[slot];
    int N = R->nranks, me = R->rank, eb = R->entry;
    size_t batch = (size_t)R->cap * (size_t)eb; /* bytes of one region */
    kedr_comm_dev_msg *send = R->msgs, *recv = R->msgs + N;
    int nsend = 0, nrecv = 0;
    for (int o = 0; o < N; o++) {
        if (o == me)
            continue;
        if (nout[o]) {
            send[nsend++] = (kedr_comm_dev_msg){
                o, 0, (size_t)slot * R->part + cayley_ranks_region(o, me) * batch,
                2 * R->part + cayley_ranks_region(me, o) * batch, (size_t)nout[o] * (size_t)eb};
            R->sent += nout[o];
        }
        if (R->incoming[o])
            recv[nrecv++] = (kedr_comm_dev_msg){o, 0, 0,
                                                2 * R->part + cayley_ranks_region(o, me) * batch,
                                                (size_t)R->incoming[o] * (size_t)eb};
    }
    kedr_status st = kedr_comm_dev_sendrecv(R->xdev, nsend, send, nrecv, recv);
    /* what another rank says is ours must be: the mark checks each offset against the slice
     * as it reads it (on the GPU, in the kernel), and leaves the others alone */
    for (int i = 0; st == KEDR_OK && i < nrecv; i++) {
        uint64_t f = 0, outside = 0;
        st = R->be->mark(R, slot, R->xbuf + recv[i].to, recv[i].bytes / (size_t)eb, nc, &f,
                         &outside);
        if (st == KEDR_OK && outside)
            st = outside_error(R, outside);
        *found += f;
    }
    return st;
}

/* The blocks of the next round from *b: [*b, *b1) with at least one frontier element, as many
 * as keep the worst case within a destination's batch (every product of a generator that may
 * leave the slice from the block, R->leave, for the same rank); *b = *b1 = nblocks when none is
 * left. */
static void next_round(const cayley_ranks *R, uint64_t *b, uint64_t *b1)
{
    uint64_t sum = 0;
    while (*b < R->nblocks && R->counts[*b] == 0)
        (*b)++;
    *b1 = *b;
    while (*b1 < R->nblocks && sum + R->counts[*b1] * R->leave[*b1] <= R->cap) {
        sum += R->counts[*b1] * R->leave[*b1];
        (*b1)++;
    }
}

/* A u such that generator k keeps rank / u for every element (the order when none smaller is
 * known): a permutation generator that moves (or flips) only positions below m keeps the digits
 * of positions m.. (cayley_elem.h), so u = m! (times 2^n, the signs, for signed permutations);
 * a1 of B_K changes y0 only (u = 5); a step in coordinate d of Z_M1 x ... wraps within
 * M_d stride_d. Each such u divides the order. */
static uint64_t stay_unit(const kedr_cayley_group *g, int k)
{
    if (g->kind == KEDR_CAYLEY_PERMUTATION || g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION) {
        int m = 0;
        for (int i = 0; i < g->n; i++)
            if (g->perm[k][i] != i || ((g->flip[k] >> i) & 1u))
                m = i + 1;
        uint64_t u = 1;
        for (int i = 2; i <= m; i++)
            u *= (uint64_t)i;
        return g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION ? u << g->n : u;
    }
    if (g->kind == KEDR_CAYLEY_BURNSIDE && g->dim[k] == 0 && g->n >= 1)
        return 5;
    if (g->kind == KEDR_CAYLEY_ABELIAN)
        return g->stride[g->dim[k]] * g->moduli[g->dim[k]];
    return g->order;
}

/* R->leave[b]: the generators whose products may leave the slice from some element of block b,
 * those whose range of u elements around the block (stay_unit) is not inside [lo, hi). For the
 * prefix-reversal families most blocks have one or two of them (the longest reversals), so a
 * round takes several times more frontier than the bound of every generator would allow. */
static void find_leavers(cayley_ranks *R)
{
    const kedr_cayley_group *g = R->g;
    uint64_t unit[KEDR_CAYLEY_MAX_GENERATORS];
    for (int k = 0; k < g->ngens; k++)
        unit[k] = stay_unit(g, k);
    for (uint64_t b = 0; b < R->nblocks; b++) {
        uint64_t first = R->lo + b * R->block_elems, last = first + R->block_elems - 1;
        if (last >= R->hi)
            last = R->hi - 1;
        unsigned n = 0;
        for (int k = 0; k < g->ngens; k++) {
            uint64_t u = unit[k], from = first - first % u, to = last - last % u + (u - 1);
            n += from < R->lo || to >= R->hi;
        }
        R->leave[b] = (uint8_t)n;
    }
}

static kedr_status ranks_level(cayley_ranks *R, int s, uint64_t *count)
{
    uint32_t fc = code_of(s - 1), nc = code_of(s);
    uint64_t found = 0, b = 0, b1 = 0, rounds0 = R->rounds, sent0 = R->sent;
    double t0 = kedr_wall_seconds(), msg0 = R->exchange_seconds;
    kedr_status st = R->be->count(R, fc, R->counts);
    AGREE(R, st);
    KEDR_TRY(st);
    /* the first round starts here; each turn of the loop finishes one round, starts the next
     * into the other slot, and sends and marks the finished one's products. A round: the
     * expansion's end (cuda: one synchronisation of its stream), the notes (one message to and
     * from every other rank: counts, status, work left), the batches (kedr_comm_dev), the
     * marks (cuda: queued on the context's stream, counted at the level's end) */
    int cur = 0, inflight = 0;
    next_round(R, &b, &b1);
    if (b < R->nblocks) {
        if (b1 == b) /* cannot be: a batch holds at least one block's worst case */
            st = kedr_fail(KEDR_ERR_INVALID, "%s: rank %d: block %llu does not fit a batch",
                           R->g->spec, R->rank, (unsigned long long)b);
        else
            st = R->be->start(R, cur, b, b1, fc, nc);
        inflight = 1;
        b = b1;
    }
    for (;;) {
        uint64_t f = 0;
        if (st == KEDR_OK && inflight)
            st = R->be->finish(R, cur, &f);
        else if (!inflight)
            memset(R->nout[cur], 0, ((size_t)R->nranks + 1) * 8);
        found += f;
        int next = 0;
        if (st == KEDR_OK) {
            next_round(R, &b, &b1);
            if (b < R->nblocks && b1 == b)
                st = kedr_fail(KEDR_ERR_INVALID, "%s: rank %d: block %llu does not fit a batch",
                               R->g->spec, R->rank, (unsigned long long)b);
            else if (b < R->nblocks)
                st = R->be->start(R, cur ^ 1, b, b1, fc, nc);
            next = b < R->nblocks;
            b = b1;
        }
        if (st == KEDR_OK && R->fail_round == R->rounds + 1) /* tests: KEDR_CAYLEY_RANKS_FAIL */
            st = kedr_fail(KEDR_ERR_INVALID, "%s: rank %d: a failure asked by "
                           "KEDR_CAYLEY_RANKS_FAIL in round %llu", R->g->spec, R->rank,
                           (unsigned long long)R->fail_round);
        /* a rank without a round in flight has nothing left: when no rank has, the level ends */
        int more = 0;
        double t = kedr_wall_seconds();
        st = round_notes(R, cur, st, inflight, &more);
        if (st != KEDR_OK) {
            uint64_t drop[2];
            R->be->settle(R, &drop[0], &drop[1]); /* nothing left queued on the way out */
            return st;
        }
        if (!more) {
            R->exchange_seconds += kedr_wall_seconds() - t;
            break;
        }
        st = exchange_round(R, cur, nc, &found);
        R->exchange_seconds += kedr_wall_seconds() - t;
        R->rounds++;
        cur ^= 1;
        inflight = next && st == KEDR_OK;
    }
    /* the marks' count (cuda: read once a level) and the entries another rank sent outside
     * this slice (an error on every rank) */
    uint64_t tally[2] = {0, 0};
    st = R->be->settle(R, &tally[0], &tally[1]);
    AGREE(R, st);
    KEDR_TRY(st);
    tally[0] += found;
    KEDR_TRY(kedr_comm_allreduce(R->comm, KEDR_U64, KEDR_OP_SUM, tally, 2));
    if (tally[1])
        return outside_error(R, tally[1]);
    found = tally[0];
    *count = found;
    if (R->rank == 0) /* KEDR_LOG=debug: where a level's time goes, on rank 0 */
        kedr_log(KEDR_LOG_DEBUG, "%s level %d: %llu new, rank 0: %llu rounds, %llu products "
                 "sent, %.3f s of %.3f in messages", R->g->spec, s, (unsigned long long)found,
                 (unsigned long long)(R->rounds - rounds0), (unsigned long long)(R->sent - sent0),
                 R->exchange_seconds - msg0, kedr_wall_seconds() - t0);
    return KEDR_OK;
}

/* ---- per-rank checkpoints ----
 *
 *   offset  size  field (little-endian)
 *        0     8  magic "KEDRCAYR"
 *        8     4  format version (2; 1 ranked permutations from their first position, and is
 *                 read for the abelian and burnside groups only)
 *       12     4  flags: bit 0 = the search has ended
 *       16   160  group spec, NUL-padded
 *      176     4  inverses (0 or 1)
 *      180     4  level s
 *      184     8  group order
 *      192     4  rank R
 *      196     4  ranks N
 *      200     8  lo, the slice's first element
 *      208     8  hi, past its last
 *      216     8  bytes of codes (C)
 *      224     8  zero
 *      232  8s+8  F(0..s)
 *               C  the slice's 2-bit codes (ranks.h)
 *               8  checksum of everything before it (cayley_ck_sum, as checkpoint.c)
 * At the end of level s the codes are 3 for the elements at distance < s, c(s) for those at
 * distance s (3 too when the search has ended), 0 for the others; the reader checks that, summed
 * over the ranks, against F. */
#define RK_MAGIC "KEDRCAYR"
#define RK_VERSION 2u
#define RK_HEADER 232
#define RK_CHUNK ((size_t)64 << 20)


/* DIR/NAME.chk -> DIR/NAME.rankRofN.chk; another name gets .rankRofN.chk appended. */
static void file_path(const char *base, int j, int m, char *out, size_t size);
static void rank_path(const cayley_ranks *R, const char *path, char *out, size_t size)
{
    file_path(path, R->rank, R->nranks, out, size);
}

static void make_header(const cayley_ranks *R, unsigned char *h, int level, int complete)
{
    memset(h, 0, RK_HEADER);
    memcpy(h, RK_MAGIC, 8);
    put32(h + 8, RK_VERSION);
    put32(h + 12, complete ? 1u : 0u);
    snprintf((char *)h + 16, 160, "%s", R->g->spec);
    put32(h + 176, R->g->inverses ? 1u : 0u);
    put32(h + 180, (uint32_t)level);
    put64(h + 184, R->g->order);
    put32(h + 192, (uint32_t)R->rank);
    put32(h + 196, (uint32_t)R->nranks);
    put64(h + 200, R->lo);
    put64(h + 208, R->hi);
    put64(h + 216, (uint64_t)R->words * 4);
}

static kedr_status write_rank_file(cayley_ranks *R, const char *path, const uint64_t *F,
                                   int level, int complete)
{
    size_t bytes = R->words * 4, bufsize = bytes < RK_CHUNK ? bytes : RK_CHUNK;
    unsigned char *buf = malloc(bufsize > RK_HEADER ? bufsize : RK_HEADER);
    if (!buf)
        return kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory", path);
    make_header(R, buf, level, complete);
    uint64_t sum = 0, ones = 0;
    kedr_file_writer w;
    kedr_status s = cayley_ck_begin(&w, path, buf, RK_HEADER, F, level, &sum, &ones);
    if (s != KEDR_OK) {
        free(buf);
        return s;
    }
    FILE *f = KEDR_FILE(&w);
    for (size_t off = 0; s == KEDR_OK && off < bytes; off += RK_CHUNK) {
        size_t n = bytes - off < RK_CHUNK ? bytes - off : RK_CHUNK;
        s = R->be->download(R, off / 4, (uint32_t *)buf, n / 4);
        if (s == KEDR_OK) {
            cayley_ck_sum(&sum, &ones, buf, n);
            if (fwrite(buf, 1, n, f) != n)
                s = kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot write: %s", w.tmp,
                              strerror(errno));
        }
    }
    if (s == KEDR_OK && fwrite(&sum, 8, 1, f) != 1)
        s = kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot write: %s", w.tmp, strerror(errno));
    free(buf);
    if (s != KEDR_OK) {
        kedr_file_abort(&w);
        return s;
    }
    return kedr_file_commit(&w);
}

/* The header against this run; *level and *complete from it. */
/* One file of a set written by M ranks: rank j of M, its slice and its words of codes. */
typedef struct {
    int rank, nranks;
    uint64_t lo, hi;
    size_t words;
} rk_file;

static kedr_status file_of(const kedr_cayley_group *g, int j, int m, rk_file *f)
{
    kedr_cayley_ranks_plan p;
    KEDR_TRY(kedr_cayley_ranks_plan_make(g, m, 0, &p));
    KEDR_TRY(kedr_cayley_rank_slice(g, m, j, &f->lo, &f->hi));
    uint64_t nblocks = (f->hi - f->lo + p.block_elements - 1) / p.block_elements;
    f->words = (size_t)(nblocks * p.block_elements / 16);
    f->rank = j;
    f->nranks = m;
    return KEDR_OK;
}

/* The header against the run and the file f expected; *level and *complete from it. */
static kedr_status check_rank_header(const cayley_ranks *R, const rk_file *f, const char *path,
                                     const unsigned char *h, uint64_t size, int *level,
                                     int *complete)
{
    const kedr_cayley_group *g = R->g;
    if (memcmp(h, RK_MAGIC, 8) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: not a checkpoint of a search over ranks "
                         "(no '%s' at its start)", path, RK_MAGIC);
    KEDR_TRY(cayley_ck_version(g, path, get32(h + 8), 1, RK_VERSION));
    if (memchr(h + 16, 0, 160) == NULL || strcmp((const char *)h + 16, g->spec) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made for group %.60s, not %s", path,
                         memchr(h + 16, 0, 160) ? (const char *)h + 16 : "(corrupt)", g->spec);
    if (get32(h + 176) != (g->inverses ? 1u : 0u))
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made %s --inverses, this run is %s "
                         "them", path, get32(h + 176) ? "with" : "without",
                         g->inverses ? "with" : "without");
    if (get32(h + 196) != (uint32_t)f->nranks || get32(h + 192) != (uint32_t)f->rank)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: written by rank %u of %u where rank %d "
                         "of %d was expected (a file renamed or copied?)", path, get32(h + 192),
                         get32(h + 196), f->rank, f->nranks);
    if (get64(h + 184) != g->order || get64(h + 200) != f->lo || get64(h + 208) != f->hi ||
        get64(h + 216) != (uint64_t)f->words * 4 || get64(h + 224) != 0 || get32(h + 12) > 1)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (order %llu, slice "
                         "[%llu, %llu), %llu bytes of codes: expected %llu, [%llu, %llu), %zu)",
                         path, (unsigned long long)get64(h + 184),
                         (unsigned long long)get64(h + 200), (unsigned long long)get64(h + 208),
                         (unsigned long long)get64(h + 216), (unsigned long long)g->order,
                         (unsigned long long)f->lo, (unsigned long long)f->hi, f->words * 4);
    uint32_t lv = get32(h + 180);
    if (lv > (uint32_t)INT32_MAX - 1 || lv >= g->order)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (level %u)", path, lv);
    uint64_t expect = RK_HEADER + 8 * ((uint64_t)lv + 1) + (uint64_t)f->words * 4 + 8;
    if (size != expect)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: %s: %llu bytes, expected %llu for "
                         "level %u", path, size < expect ? "truncated" : "trailing data",
                         (unsigned long long)size, (unsigned long long)expect, lv);
    *level = (int)lv;
    *complete = (int)get32(h + 12);
    return KEDR_OK;
}

/* Reads file f (all of it, for the checksum) and takes the part of its codes inside this rank's
 * slice; tally[0..3] count, in that part, the codes 3, c(level) and the other of 1 and 2, and in
 * the whole file the codes past its slice's end (which must be none). The slices' ends are
 * multiples of 512 elements (32 words) but the order, so the part is whole words. */
static kedr_status read_rank_file(cayley_ranks *R, const rk_file *f, const char *path,
                                  uint64_t **growth, int *level, int *complete, uint64_t tally[4])
{
    int fd = -1;
    uint64_t size = 0;
    *growth = NULL;
    KEDR_TRY(cayley_ck_open(path, &fd, &size));
    unsigned char head[RK_HEADER];
    kedr_status s = cayley_ck_read_head(fd, path, size, head, RK_HEADER);
    if (s == KEDR_OK)
        s = check_rank_header(R, f, path, head, size, level, complete);
    size_t nF = s == KEDR_OK ? (size_t)*level + 1 : 0, bytes = f->words * 4;
    size_t bufsize = bytes < RK_CHUNK ? bytes : RK_CHUNK;
    uint64_t *F = s == KEDR_OK ? malloc(8 * nF) : NULL;
    unsigned char *buf = s == KEDR_OK ? malloc(bufsize ? bufsize : 8) : NULL;
    if (s == KEDR_OK && (!F || !buf))
        s = kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory", path);
    uint64_t sum = 0, ones = 0;
    if (s == KEDR_OK) {
        s = cayley_ck_read(fd, path, RK_HEADER, F, 8 * nF);
        cayley_ck_sum(&sum, &ones, head, RK_HEADER);
        cayley_ck_sum(&sum, &ones, (const unsigned char *)F, 8 * nF);
    }
    uint32_t fc = s == KEDR_OK ? code_of(*level) : 1;
    uint64_t slice = f->hi - f->lo;
    /* the words of the file inside this rank's slice, [w0, w1), and where they go */
    uint64_t olo = f->lo > R->lo ? f->lo : R->lo, ohi = f->hi < R->hi ? f->hi : R->hi;
    uint64_t w0 = olo < ohi ? (olo - f->lo) / 16 : 0, w1 = olo < ohi ? (ohi - f->lo + 15) / 16 : 0;
    uint64_t to = olo < ohi ? (olo - R->lo) / 16 : 0; /* the word w0 in this rank's codes */
    for (size_t off = 0; s == KEDR_OK && off < bytes; off += RK_CHUNK) {
        size_t n = bytes - off < RK_CHUNK ? bytes - off : RK_CHUNK;
        s = cayley_ck_read(fd, path, RK_HEADER + 8 * nF + off, buf, n);
        if (s != KEDR_OK)
            break;
        cayley_ck_sum(&sum, &ones, buf, n);
        const uint32_t *w = (const uint32_t *)buf;
        uint64_t c0 = off / 4, c1 = c0 + n / 4; /* this chunk's words */
        for (uint64_t i = c0; i < c1; i++) {
            uint32_t x = w[i - c0];
            if (!x)
                continue;
            uint64_t first = i * 16; /* the word's first element offset */
            if (first + 16 > slice) { /* fields past the slice must be 0 */
                unsigned valid = first >= slice ? 0 : (unsigned)(slice - first);
                uint32_t past = valid >= 16 ? 0 : x & ~((1u << (2 * valid)) - 1u);
                tally[3] += past != 0;
                x &= ~past;
            }
            if (i < w0 || i >= w1)
                continue;
            uint32_t hi = (x >> 1) & 0x55555555u, lo = x & 0x55555555u;
            tally[0] += pop64(hi & lo);
            tally[1] += pop64(fields_of(x, fc));
            tally[2] += pop64(fields_of(x, 3u - fc));
        }
        uint64_t a = c0 > w0 ? c0 : w0, b = c1 < w1 ? c1 : w1;
        if (a < b)
            s = R->be->upload(R, (size_t)(to + (a - w0)), w + (a - c0), (size_t)(b - a));
    }
    uint64_t stored = 0;
    if (s == KEDR_OK)
        s = cayley_ck_read(fd, path, RK_HEADER + 8 * nF + bytes, &stored, 8);
    if (s == KEDR_OK && stored != sum)
        s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt: the checksum does not match the "
                      "contents", path);
    uint64_t total = 0;
    if (s == KEDR_OK)
        s = cayley_ck_check_growth(path, F, *level, R->g->order, &total);
    close(fd);
    free(buf);
    if (s != KEDR_OK) {
        free(F);
        return s;
    }
    *growth = F;
    return KEDR_OK;
}

/* The name rank j of m gives base. */
static void file_path(const char *base, int j, int m, char *out, size_t size)
{
    size_t len = strlen(base);
    int ext = len >= 4 && strcmp(base + len - 4, ".chk") == 0;
    snprintf(out, size, "%.*s.rank%dof%d.chk", (int)(ext ? len - 4 : len), base, j, m);
}

/* The rank count whose files base names (rank 0 looks, and tells the others): this run's when
 * BASE.rank0ofN.chk is there, else that of the newest of BASE.rank0ofM.chk and BASE itself (0:
 * BASE, a checkpoint of one process's search), else this run's (whose missing file the reader
 * then names). */
static int files_count(cayley_ranks *R, const char *base)
{
    int32_t m = R->nranks;
    if (R->rank == 0) {
        char p[1200];
        struct stat st;
        file_path(base, 0, R->nranks, p, sizeof p);
        if (stat(p, &st) != 0) {
            double newest = -1;
            if (stat(base, &st) == 0 && S_ISREG(st.st_mode)) {
                newest = (double)st.st_mtime;
                m = 0;
            }
            for (int k = 1; k <= KEDR_CAYLEY_MAX_RANKS; k++) {
                file_path(base, 0, k, p, sizeof p);
                if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && (double)st.st_mtime > newest) {
                    newest = (double)st.st_mtime;
                    m = k;
                }
            }
        }
    }
    kedr_comm_bcast(R->comm, &m, sizeof m, 0); /* a failure shows in the files' reading */
    return m;
}

/* ---- a checkpoint of one process's search taken up over ranks ----
 * The format of checkpoint.c (KEDRCAYL, version 2, or 1 for the abelian and burnside groups): a 208-byte header, F(0..s), the visited and
 * the frontier bitmaps of the whole group (B bytes each, the order's bits rounded up to 16
 * bytes), a checksum. Each rank reads the whole file for the checksum (and the bits past the
 * order, which must be none), and its slice's bits again, a window at a time, into codes:
 * visited and in the frontier c(s), visited alone 3, else 0. */
#define DK_MAGIC "KEDRCAYL"
#define DK_VERSION 2u
#define DK_HEADER 208
#define DK_WINDOW ((uint64_t)1 << 26) /* elements converted at a time: 8 MB of each bitmap */

/* Bit i of an 8-bit x to bit 2i of the result. */
static uint32_t spread8(unsigned x)
{
    uint32_t y = x & 0xffu;
    y = (y | (y << 4)) & 0x0F0Fu;
    y = (y | (y << 2)) & 0x3333u;
    return (y | (y << 1)) & 0x5555u;
}

static kedr_status read_dense_file(cayley_ranks *R, const char *path, uint64_t **growth,
                                   int *level, int *complete, uint64_t tally[4])
{
    const kedr_cayley_group *g = R->g;
    uint64_t B = (g->order + 127) / 128 * 16, size = 0;
    int fd = -1;
    *growth = NULL;
    KEDR_TRY(cayley_ck_open(path, &fd, &size));
    unsigned char h[DK_HEADER];
    kedr_status s = cayley_ck_read_head(fd, path, size, h, DK_HEADER);
    uint32_t lv = 0;
    if (s == KEDR_OK) {
        lv = get32(h + 180);
        s = memcmp(h, DK_MAGIC, 8) != 0
                ? kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: neither a checkpoint of a search over "
                            "ranks nor of one process's", path)
                : cayley_ck_version(g, path, get32(h + 8), 1, DK_VERSION);
        if (s != KEDR_OK) {
            /* refused by its magic or version */
        } else if (memchr(h + 16, 0, 160) == NULL || strcmp((const char *)h + 16, g->spec) != 0)
            s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made for group %.60s, not %s", path,
                          memchr(h + 16, 0, 160) ? (const char *)h + 16 : "(corrupt)", g->spec);
        else if (get32(h + 176) != (g->inverses ? 1u : 0u))
            s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made %s --inverses, this run is %s "
                          "them", path, get32(h + 176) ? "with" : "without",
                          g->inverses ? "with" : "without");
        else if (get64(h + 184) != g->order || get64(h + 192) != B || get32(h + 12) > 1 ||
                 get64(h + 200) != 0 || lv > (uint32_t)INT32_MAX - 1 || lv >= g->order)
            s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header", path);
        else if (size != DK_HEADER + 8 * ((uint64_t)lv + 1) + 2 * B + 8)
            s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: %llu bytes, expected %llu for level %u",
                          path, (unsigned long long)size,
                          (unsigned long long)(DK_HEADER + 8 * ((uint64_t)lv + 1) + 2 * B + 8), lv);
    }
    size_t nF = (size_t)lv + 1;
    uint64_t *F = s == KEDR_OK ? malloc(8 * nF) : NULL;
    size_t bufsize = B < RK_CHUNK ? (size_t)B : RK_CHUNK, win = (size_t)(DK_WINDOW / 8);
    unsigned char *buf = s == KEDR_OK ? malloc(bufsize > 2 * win ? bufsize : 2 * win) : NULL;
    uint32_t *codes = s == KEDR_OK ? malloc((size_t)(DK_WINDOW / 4)) : NULL;
    if (s == KEDR_OK && (!F || !buf || !codes))
        s = kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory", path);
    uint64_t sum = 0, ones = 0, base = DK_HEADER + 8 * (uint64_t)nF;
    if (s == KEDR_OK) {
        s = cayley_ck_read(fd, path, DK_HEADER, F, 8 * nF);
        cayley_ck_sum(&sum, &ones, h, DK_HEADER);
        cayley_ck_sum(&sum, &ones, (const unsigned char *)F, 8 * nF);
    }
    /* the checksum, over the whole file; the bits at or past the order */
    for (int part = 0; part < 2 && s == KEDR_OK; part++)
        for (uint64_t off = 0; s == KEDR_OK && off < B; off += RK_CHUNK) {
            size_t n = B - off < RK_CHUNK ? (size_t)(B - off) : RK_CHUNK;
            s = cayley_ck_read(fd, path, base + (uint64_t)part * B + off, buf, n);
            if (s != KEDR_OK)
                break;
            cayley_ck_sum(&sum, &ones, buf, n);
            for (size_t i = 0; i < n; i++) {
                uint64_t bit = 8 * (off + i); /* the byte's first element */
                if (bit + 8 > g->order && buf[i]) {
                    unsigned keep = bit >= g->order ? 0 : (unsigned)(g->order - bit);
                    tally[3] += (buf[i] & (0xffu << keep) & 0xffu) != 0;
                }
            }
        }
    uint64_t stored = 0;
    if (s == KEDR_OK)
        s = cayley_ck_read(fd, path, base + 2 * B, &stored, 8);
    if (s == KEDR_OK && stored != sum)
        s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt: the checksum does not match the "
                      "contents", path);
    /* this rank's slice, a window at a time (lo is a multiple of 512: whole bytes and words) */
    uint32_t fc = code_of((int)lv);
    for (uint64_t x = R->lo; s == KEDR_OK && x < R->hi; x += DK_WINDOW) {
        uint64_t n = R->hi - x < DK_WINDOW ? R->hi - x : DK_WINDOW, nb = (n + 7) / 8;
        unsigned char *vis = buf, *fr = buf + win;
        s = cayley_ck_read(fd, path, base + x / 8, vis, (size_t)nb);
        if (s == KEDR_OK)
            s = cayley_ck_read(fd, path, base + B + x / 8, fr, (size_t)nb);
        if (s != KEDR_OK)
            break;
        size_t words = (size_t)((n + 15) / 16);
        memset(codes, 0, words * 4);
        for (uint64_t k = 0; k < nb; k++) { /* 8 elements a byte, 16 bits of codes */
            unsigned keep = k + 1 == nb && n % 8 ? (1u << (n % 8)) - 1u : 0xffu;
            unsigned v = vis[k] & keep, f = fr[k] & keep;
            tally[0] += pop64(v & ~f & 0xffu);
            tally[1] += pop64(v & f);
            tally[2] += pop64(f & ~v & 0xffu);
            /* the low and the high bit of each field: c(s) = 1 is (1, 0), 2 is (0, 1), 3 (1, 1) */
            unsigned lowb = fc == 1 ? v : v & ~f, highb = fc == 1 ? v & ~f : v;
            codes[k / 2] |= (spread8(lowb) | spread8(highb) << 1) << (16 * (k % 2));
        }
        s = R->be->upload(R, (size_t)((x - R->lo) / 16), codes, words);
    }
    uint64_t total = 0;
    if (s == KEDR_OK)
        s = cayley_ck_check_growth(path, F, (int)lv, g->order, &total);
    close(fd);
    free(buf);
    free(codes);
    if (s != KEDR_OK) {
        free(F);
        return s;
    }
    *growth = F;
    *level = (int)lv;
    *complete = (int)get32(h + 12);
    return KEDR_OK;
}

/* ---- the hooks of the level loop (growth.h) ---- */

static kedr_status hook_start(void *self, const kedr_cayley_options *opt,
                              kedr_cayley_result *res)
{
    cayley_ranks *R = self;
    if (!opt || !opt->resume_path) {
        size_t len = 0, cap = 0;
        return cayley_push_level(res, &len, &cap, 1);
    }
    /* the files written by m ranks whose slices overlap this rank's: its own when m = N; m = 0:
     * the one file of a search of one process */
    int m = files_count(R, opt->resume_path);
    int j0 = m == R->nranks ? R->rank : m ? kedr_cayley_rank_owner(R->g, m, R->lo) : 0;
    int j1 = m == R->nranks ? R->rank : m ? kedr_cayley_rank_owner(R->g, m, R->hi - 1) : -1;
    uint64_t tally[4] = {0, 0, 0, 0}, *F = NULL;
    int level = 0, complete = 0;
    char path[sizeof R->resume_path];
    kedr_status s = KEDR_OK;
    if (m == 0) {
        snprintf(path, sizeof path, "%s", opt->resume_path);
        s = read_dense_file(R, path, &F, &level, &complete, tally);
    }
    for (int j = j0; s == KEDR_OK && j <= j1; j++) {
        rk_file f;
        uint64_t *Fj = NULL;
        int lj = 0, cj = 0;
        file_path(opt->resume_path, j, m, path, sizeof path);
        s = file_of(R->g, j, m, &f);
        if (s == KEDR_OK)
            s = read_rank_file(R, &f, path, &Fj, &lj, &cj, tally);
        if (s == KEDR_OK && F && (lj != level || cj != complete ||
                                  memcmp(F, Fj, 8 * ((size_t)lj + 1)) != 0))
            s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: level %d and its growth function differ "
                          "from those of rank %d's file: the files are of different runs", path,
                          lj, j0);
        if (s == KEDR_OK && !F) {
            F = Fj;
            level = lj;
            complete = cj;
        } else {
            free(Fj);
        }
    }
    AGREE(R, s);
    if (s != KEDR_OK) {
        free(F);
        return s;
    }
    /* every rank read the same F, level and ended flag: rank 0's are the reference */
    uint64_t mine[3] = {(uint64_t)level, (uint64_t)complete, 0}, ref[3];
    for (int i = 0; i <= level; i++)
        mine[2] = (mine[2] ^ F[i]) * 0x100000001b3ull + (uint64_t)i;
    memcpy(ref, mine, sizeof ref);
    s = kedr_comm_bcast(R->comm, ref, sizeof ref, 0);
    if (s == KEDR_OK && memcmp(ref, mine, sizeof ref) != 0)
        s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: level %d%s and its growth function differ "
                      "from rank 0's checkpoint (level %llu%s): the files are of different runs",
                      path, level, complete ? " (ended)" : "", (unsigned long long)ref[0],
                      ref[1] ? ", ended" : "");
    AGREE(R, s);
    if (s == KEDR_OK)
        s = kedr_comm_allreduce(R->comm, KEDR_U64, KEDR_OP_SUM, tally, 4);
    if (s == KEDR_OK) {
        uint64_t total = 0;
        for (int i = 0; i <= level; i++)
            total += F[i];
        /* at level 0 the identity is the frontier; the ended search has expanded everything */
        uint64_t want3 = complete ? total : total - F[level], wantf = complete ? 0 : F[level];
        if (tally[0] != want3 || tally[1] != wantf || tally[2] || tally[3])
            s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s (the files of %d ranks): inconsistent: "
                          "%llu expanded and %llu frontier elements where F(0..%d) says %llu and "
                          "%llu; %llu of the wrong level, %llu past the slices' ends",
                          opt->resume_path, m, (unsigned long long)tally[0],
                          (unsigned long long)tally[1], level, (unsigned long long)want3,
                          (unsigned long long)wantf, (unsigned long long)tally[2],
                          (unsigned long long)tally[3]);
    }
    if (s != KEDR_OK) {
        free(F);
        return s;
    }
    if (m != R->nranks && R->rank == 0)
        kedr_log(KEDR_LOG_INFO, "%s: the checkpoint%s of %d rank%s taken up by %d", R->g->spec,
                 m > 1 ? "s" : "", m ? m : 1, m > 1 ? "s" : "", R->nranks);
    res->growth = F;
    res->diameter = level;
    res->complete = complete;
    return KEDR_OK;
}

static kedr_status hook_level(void *self, int s, const kedr_cayley_result *res, uint64_t *count)
{
    (void)res;
    return ranks_level(self, s, count);
}

static kedr_status hook_checkpoint(void *self, const char *path, const kedr_cayley_result *res,
                                   int complete)
{
    cayley_ranks *R = self;
    char mine[sizeof R->ck_path];
    rank_path(R, path, mine, sizeof mine);
    kedr_status s = write_rank_file(R, mine, res->growth, res->diameter, complete);
    AGREE(R, s);
    return s;
}

static size_t hook_memory(void *self) { return ((cayley_ranks *)self)->memory_bytes; }

static int hook_agree_max(void *self, int local)
{
    cayley_ranks *R = self;
    int32_t v = local;
    if (kedr_comm_allreduce(R->comm, KEDR_I32, KEDR_OP_MAX, &v, 1) != KEDR_OK)
        return -1;
    return v;
}

/* ---- the entry point ---- */

/* What a rank may use: its own (limit, where; on cuda host, for the batches' staging copy)
 * and the least over the ranks (fit, fit_host), by which the default batches are sized so that
 * every rank holds the same ones. */
typedef struct {
    size_t limit, host, fit, fit_host;
    const char *where;
} rank_memory;

/* Collective (every rank calls it, whatever its own failures, which are agreed). Without
 * --memory-limit a rank may use its GPU's free memory shared by the ranks of its host on that
 * GPU (on cuda), or the host's available memory shared by the host's ranks (on the cpu; on cuda
 * the host memory for the staging copy). */
static kedr_status find_memory(cayley_ranks *R, const kedr_cayley_options *opt, rank_memory *m)
{
    int cuda = KEDR_IS_CUDA(R->ctx), N = R->nranks, local = kedr_comm_local_size(R->comm);
    memset(m, 0, sizeof *m);
    kedr_status s = cayley_memory_allowed(R->ctx, opt, &m->limit, &m->where);
    int32_t *dev = calloc((size_t)N, sizeof *dev);
    if (s == KEDR_OK && !dev)
        s = kedr_fail(KEDR_ERR_NOMEM, "%s: rank %d: out of host memory", R->g->spec, R->rank);
    s = kedr_comm_agree(R->comm, s);
    if (s == KEDR_OK) { /* the GPU of every rank: those of this host on this GPU share it */
        for (int r = 0; r < N; r++)
            dev[r] = r == R->rank && cuda ? R->ctx->device : -1;
        s = kedr_comm_allreduce(R->comm, KEDR_I32, KEDR_OP_MAX, dev, (size_t)N);
    }
    int sharing = 0;
    for (int r = 0; s == KEDR_OK && r < N; r++)
        sharing += dev[r] == dev[R->rank] && kedr_comm_same_host(R->comm, r);
    free(dev);
    if (s != KEDR_OK)
        return s;
    if (!cuda)
        sharing = local;
    if (!(opt && opt->memory_limit) && sharing > 1) {
        m->limit /= (size_t)sharing;
        m->where = cuda ? "GPU memory free (shared by the ranks on this GPU)"
                        : "host memory available (shared by the ranks on this host)";
    }
    m->host = cuda ? cayley_host_memory() / (size_t)(local > 1 ? local : 1) : 0;
    uint64_t least[2] = {m->limit, m->host};
    KEDR_TRY(kedr_comm_allreduce(R->comm, KEDR_U64, KEDR_OP_MIN, least, 2));
    m->fit = (size_t)least[0];
    m->fit_host = (size_t)least[1];
    return KEDR_OK;
}

/* What this rank needs against what it may use. */
static kedr_status check_rank_memory(cayley_ranks *R, const kedr_cayley_options *opt,
                                     const kedr_cayley_ranks_plan *p, const rank_memory *m)
{
    int cuda = KEDR_IS_CUDA(R->ctx);
    size_t limit = m->limit, need = cuda ? p->gpu_bytes : p->cpu_bytes;
    size_t host_need = cuda ? p->host_bytes : 0, host = m->host;
    if (need <= limit && (!cuda || host_need <= host))
        return KEDR_OK;
    char need_s[32], limit_s[32], code_s[32], batch_s[32];
    kedr_format_bytes((double)(need > limit ? need : host_need), need_s, sizeof need_s);
    kedr_format_bytes((double)(need > limit ? limit : host), limit_s, sizeof limit_s);
    kedr_format_bytes((double)p->code_bytes, code_s, sizeof code_s);
    kedr_format_bytes((double)(p->batch_bytes + p->receive_bytes), batch_s, sizeof batch_s);
    /* the rank count at which a rank of this size would fit */
    int fits = 0;
    for (int n = R->nranks + 1; n <= KEDR_CAYLEY_MAX_RANKS && !fits; n++) {
        kedr_cayley_ranks_plan q;
        if (kedr_cayley_ranks_plan_fit(R->g, n, opt ? opt->batch_bytes : 0, limit, host, cuda,
                                       &q) != KEDR_OK)
            break;
        if ((cuda ? q.gpu_bytes : q.cpu_bytes) <= limit)
            fits = n;
    }
    char more[96] = "";
    if (fits)
        snprintf(more, sizeof more, ": it takes %d ranks of this size", fits);
    return kedr_fail(KEDR_ERR_NOMEM, "%s over %d ranks needs %s a rank (%s of 2-bit codes for "
                     "its slice of up to %llu elements, %s of batches), more than the %s of %s "
                     "on rank %d%s", R->g->spec, R->nranks, need_s, code_s,
                     (unsigned long long)p->slice_max, batch_s, limit_s,
                     need > limit ? m->where : "host memory available for its staging", R->rank,
                     need > limit ? more : "");
}

static kedr_status setup(cayley_ranks *R, const kedr_cayley_options *opt, const rank_memory *m)
{
    kedr_cayley_ranks_plan p;
    int cuda = KEDR_IS_CUDA(R->ctx);
    KEDR_TRY(kedr_cayley_ranks_plan_fit(R->g, R->nranks, opt ? opt->batch_bytes : 0, m->fit,
                                        m->fit_host, cuda, &p));
    KEDR_TRY(kedr_cayley_rank_slice(R->g, R->nranks, R->rank, &R->lo, &R->hi));
    R->units = units_of(R->g);
    R->block_elems = p.block_elements;
    R->nblocks = (R->hi - R->lo + R->block_elems - 1) / R->block_elems;
    R->words = (size_t)(R->nblocks * R->block_elems / 16);
    R->cap = p.batch_entries;
    R->entry = p.entry_bytes;
    /* the 8-byte entries of slices of 2^40 elements or more, on groups small enough to test */
    const char *wide = getenv("KEDR_CAYLEY_RANKS_WIDE");
    if (wide && strcmp(wide, "1") == 0)
        R->entry = 8;
    /* tests: "R:K" makes rank R fail in its K-th round (1 the first), as a failure between
     * the expansion and the round's notes would (every rank must return that error) */
    const char *fail = getenv("KEDR_CAYLEY_RANKS_FAIL");
    int fail_rank = -1;
    unsigned long long fail_k = 0;
    if (fail && sscanf(fail, "%d:%llu", &fail_rank, &fail_k) == 2 && fail_rank == R->rank)
        R->fail_round = fail_k;
    R->los = malloc(((size_t)R->nranks + 1) * 8);
    if (!R->los)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: rank %d: out of host memory", R->g->spec, R->rank);
    for (int r = 0; r < R->nranks; r++) {
        uint64_t hi;
        KEDR_TRY(kedr_cayley_rank_slice(R->g, R->nranks, r, &R->los[r], &hi));
    }
    R->los[R->nranks] = R->g->order;
    R->memory_bytes = KEDR_IS_CUDA(R->ctx) ? p.gpu_bytes : p.cpu_bytes;
    KEDR_TRY(check_rank_memory(R, opt, &p, m));
    R->counts = malloc((size_t)(R->nblocks ? R->nblocks : 1) * 8);
    R->leave = malloc((size_t)(R->nblocks ? R->nblocks : 1));
    R->incoming = calloc((size_t)R->nranks, 8);
    R->notes = calloc(2 * (size_t)R->nranks, sizeof(round_note));
    R->halos = calloc(2 * (size_t)R->nranks, sizeof *R->halos);
    R->msgs = calloc(2 * (size_t)R->nranks, sizeof *R->msgs);
    if (!R->counts || !R->leave || !R->incoming || !R->notes || !R->halos || !R->msgs)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: rank %d: out of host memory", R->g->spec, R->rank);
    find_leavers(R);
#ifdef KEDR_HAVE_CUDA
    R->be = KEDR_IS_CUDA(R->ctx) ? &cayley_ranks_cuda : &cpu_backend;
#else
    R->be = &cpu_backend;
#endif
    KEDR_TRY(R->be->begin(R));
    /* the batches, in the context's memory: two slots to send from and the receive area */
    R->part = (size_t)R->cap * (size_t)R->entry * (size_t)(R->nranks - 1);
    if (kedr_alloc(R->ctx, (void **)&R->xbuf, R->part ? 3 * R->part : 8) != KEDR_OK)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: rank %d: out of %s memory for %zu bytes of "
                         "batches", R->g->spec, R->rank, KEDR_IS_CUDA(R->ctx) ? "GPU" : "host",
                         3 * R->part);
    R->out[0] = R->xbuf;
    R->out[1] = R->xbuf + R->part;
    R->recv = R->xbuf + 2 * R->part;
    return KEDR_OK;
}

/* The batches' buffer registered on every rank (collective; setup has succeeded on all):
 * GPU to GPU with the ranks of this host where CUDA IPC allows it. */
static kedr_status register_batches(cayley_ranks *R)
{
    /* KEDR_CAYLEY_RANKS_ORDERED=1 (on every rank): transfers between direct partners ordered
     * on the streams by CUDA IPC events instead of comm_dev's two synchronisations a round
     * (KEDR_COMM_DEV_ORDERED; the expansion into a slot then waits on the GPU for that slot's
     * copies: ranks.cu). Off by default: not yet run on GPUs. */
    const char *ord = getenv("KEDR_CAYLEY_RANKS_ORDERED");
    unsigned flags = ord && strcmp(ord, "1") == 0 ? KEDR_COMM_DEV_ORDERED : 0u;
    KEDR_TRY(kedr_comm_dev_register_flags(R->comm, R->ctx, R->xbuf,
                                          R->part ? 3 * R->part : 8, flags, &R->xdev));
    R->ordered = kedr_comm_dev_ordered(R->xdev);
    R->direct = 0;
    for (int o = 0; o < R->nranks; o++)
        R->direct += o != R->rank && kedr_comm_dev_direct(R->xdev, o);
    return KEDR_OK;
}

kedr_status kedr_cayley_growth_on(kedr_ctx *ctx, struct kedr_comm *comm,
                                  const kedr_cayley_group *g, const kedr_cayley_options *opt,
                                  kedr_cayley_result *result)
{
    if (!ctx || !g || !result)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth_on: %s is NULL",
                         !ctx ? "ctx" : !g ? "g" : "result");
    memset(result, 0, sizeof *result);
    /* the checks every rank makes alike: no messages needed to agree on them */
    KEDR_TRY(cayley_check_group(g, "kedr_cayley_growth_on"));
    if (opt && (!(opt->checkpoint_every >= 0) || opt->max_levels < 0))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth_on: checkpoint_every %g, "
                         "max_levels %d: expected both >= 0", opt->checkpoint_every,
                         opt->max_levels);
    if (!cayley_ranked_kind(g->kind) || (opt && opt->mode == KEDR_CAYLEY_SPARSE))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: the search over MPI ranks is the dense "
                         "search of the ranked groups%s", g->spec,
                         cayley_ranked_kind(g->kind) ? " (not --mode sparse)"
                                                     : "; this group has no ranking");
    if (opt && opt->devices != 0)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth_on: devices = %d: over ranks each "
                         "rank uses one GPU (its context's)", opt->devices);
    cayley_ranks *R = calloc(1, sizeof *R);
    if (!R)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_cayley_growth_on: out of host memory");
    R->ctx = ctx;
    R->comm = comm;
    R->g = g;
    R->rank = kedr_comm_rank(comm);
    R->nranks = kedr_comm_size(comm);
    result->order = g->order;
    result->mode = KEDR_CAYLEY_DENSE;
    result->ranks = R->nranks;
    rank_memory mem;
    kedr_status s = find_memory(R, opt, &mem); /* agreed inside */
    if (s == KEDR_OK) {
        s = setup(R, opt, &mem);
        AGREE(R, s);
    }
    if (s == KEDR_OK)
        s = register_batches(R); /* agreed inside */
    if (s == KEDR_OK) {
        result->direct_ranks = R->direct;
        result->memory_bytes = R->memory_bytes;
        cayley_search S = {g,           R,           hook_start,    NULL,
                           hook_level,  hook_checkpoint, hook_memory, hook_agree_max};
        s = cayley_run_levels(&S, opt, result);
    }
    /* what the messages cost, for kedr cayley under KEDR_LOG=info (every rank has the same s) */
    double stats[3] = {(double)R->sent, R->exchange_seconds, (double)R->rounds};
    if ((s == KEDR_OK || s == KEDR_ERR_INTERRUPTED) &&
        kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_SUM, stats, 1) == KEDR_OK &&
        kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_MAX, stats + 1, 2) == KEDR_OK) {
        result->products_sent = stats[0];
        if (R->rank == 0)
            kedr_log(KEDR_LOG_INFO, "%s over %d ranks: %.0f rounds, %.4g products sent to other "
                     "ranks (%.3g%% of %.4g; %.4g bytes), up to %.3f s a rank in the messages; "
                     "rank 0's batches GPU to GPU with %d of the %d other ranks",
                     g->spec, R->nranks, stats[2], stats[0],
                     result->edge_visits > 0 ? 100 * stats[0] / result->edge_visits : 0.0,
                     result->edge_visits, (double)R->entry * stats[0], stats[1], R->direct,
                     R->nranks - 1);
    }
    kedr_comm_dev_release(R->xdev);
    if (R->be)
        R->be->end(R);
    kedr_free(ctx, R->xbuf);
    free(R->counts);
    free(R->leave);
    free(R->los);
    free(R->incoming);
    free(R->notes);
    free(R->halos);
    free(R->msgs);
    free(R);
    if (s != KEDR_OK && s != KEDR_ERR_INTERRUPTED)
        kedr_cayley_result_free(result);
    return s;
}
