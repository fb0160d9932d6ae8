/* Registered buffers of a context's memory between ranks (kedr_comm_dev_*): GPU to GPU through
 * CUDA IPC between the ranks of a host whose GPUs reach each other, host memory and MPI
 * otherwise. Only the public calls of comm.c carry the messages; CUDA's runtime API does the
 * rest (no kernels). */
#include "kedr/comm.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kedr_comm_dev {
    kedr_comm *comm;
    kedr_ctx *ctx;
    char *data;
    size_t bytes;
    int rank, size;
    unsigned char *direct; /* by rank: transfers go GPU to GPU */
    char **peer;           /* by rank: its buffer mapped here (direct ranks) */
    unsigned char *peer_gpu; /* by rank: mapped, and on another GPU than this rank's */
    size_t *peer_bytes;    /* by rank: its buffer's size (ranks of this host) */
    char *mirror;          /* cuda with a partner that is not direct: page-locked copy */
    int ordered;           /* KEDR_COMM_DEV_ORDERED in force: direct pairs ordered by events */
#ifdef KEDR_HAVE_CUDA
    /* ordered: by partner rank (direct partners but this rank): this rank's own events, "ready
     * to receive from q" and "copies to q done", and q's events of the same names towards this
     * rank, opened from its IPC handles */
    cudaEvent_t *ready, *done, *q_ready, *q_done;
#endif
};

/* What a rank tells the others of its host at registration. */
typedef struct {
    int32_t ipc;          /* 1: a GPU buffer with an IPC handle, offered for direct copies */
    int32_t pad;
    uint64_t bytes;
    char bus[64];         /* its GPU's PCI bus id */
    unsigned char handle[64];
} dev_record;

#ifdef KEDR_HAVE_CUDA
_Static_assert(sizeof(cudaIpcMemHandle_t) == 64, "a CUDA IPC handle is 64 bytes");
#endif

/* KEDR_COMM_IPC: unset or 1, GPU to GPU where possible; 0, always through the host. */
static kedr_status ipc_wanted(int *on)
{
    const char *e = getenv("KEDR_COMM_IPC");
    *on = 1;
    if (!e || !strcmp(e, "1"))
        return KEDR_OK;
    if (!strcmp(e, "0")) {
        *on = 0;
        return KEDR_OK;
    }
    return kedr_fail(KEDR_ERR_INVALID, "KEDR_COMM_IPC=%s in the environment: expected 0 (through "
                     "host memory) or 1 (GPU to GPU where the GPUs allow)", e);
}

/* KEDR_COMM_IPC_EVENTS: unset or 1, registrations asking for KEDR_COMM_DEV_ORDERED get it;
 * 0, every transfer synchronises the stream and the partners as without the flag. */
static kedr_status events_wanted(int *on)
{
    const char *e = getenv("KEDR_COMM_IPC_EVENTS");
    *on = 1;
    if (!e || !strcmp(e, "1"))
        return KEDR_OK;
    if (!strcmp(e, "0")) {
        *on = 0;
        return KEDR_OK;
    }
    return kedr_fail(KEDR_ERR_INVALID, "KEDR_COMM_IPC_EVENTS=%s in the environment: expected 0 "
                     "(every transfer synchronised through MPI) or 1 (GPU-to-GPU transfers "
                     "ordered on the streams by CUDA IPC events)", e);
}

/* This rank's record: an IPC handle of data when it is GPU memory that IPC can export. */
static kedr_status own_record(kedr_comm_dev *d, dev_record *r)
{
    memset(r, 0, sizeof *r);
    r->bytes = d->bytes;
    int on = 1;
    KEDR_TRY(ipc_wanted(&on));
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(d->ctx) && on && d->bytes) {
        struct cudaPointerAttributes at;
        KEDR_CUDA_TRY(cudaSetDevice(d->ctx->device));
        if (cudaPointerGetAttributes(&at, d->data) != cudaSuccess ||
            at.type != cudaMemoryTypeDevice || at.device != d->ctx->device) {
            cudaGetLastError();
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_register: %p is not GPU memory "
                             "of this rank's device", (void *)d->data);
        }
        cudaIpcMemHandle_t h;
        if (cudaIpcGetMemHandle(&h, d->data) == cudaSuccess &&
            cudaDeviceGetPCIBusId(r->bus, (int)sizeof r->bus, d->ctx->device) == cudaSuccess) {
            memcpy(r->handle, &h, sizeof h);
            r->ipc = 1;
        } else {
            cudaGetLastError(); /* not exportable (not a cudaMalloc block): through the host */
        }
    }
#else
    (void)on;
#endif
    return KEDR_OK;
}

#ifdef KEDR_HAVE_CUDA
/* Maps partner q's buffer when its GPU is this rank's or reachable by peer access; 1 if done. */
static int open_peer(kedr_comm_dev *d, const dev_record *r, int q)
{
    int dev = -1, can = 0;
    if (cudaDeviceGetByPCIBusId(&dev, r->bus) != cudaSuccess) {
        cudaGetLastError(); /* its GPU is not visible to this process */
        return 0;
    }
    if (dev != d->ctx->device &&
        (cudaDeviceCanAccessPeer(&can, d->ctx->device, dev) != cudaSuccess || !can)) {
        cudaGetLastError();
        return 0;
    }
    cudaIpcMemHandle_t h;
    memcpy(&h, r->handle, sizeof h);
    void *p = NULL;
    if (cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    d->peer[q] = p;
    d->peer_gpu[q] = dev != d->ctx->device;
    return 1;
}
#endif

/* Exchanges records with the other ranks of this host, maps the buffers that can be, and agrees
 * with each partner whether their transfers go GPU to GPU (both must have mapped the other's). */
static kedr_status pair_up(kedr_comm_dev *d)
{
    int P = d->size, me = d->rank, n = 0;
    dev_record mine, *all = calloc((size_t)P, sizeof *all);
    int32_t *ok = calloc(2 * (size_t)P, sizeof *ok);
    kedr_comm_halo *m = calloc(2 * (size_t)P, sizeof *m);
    kedr_status s = all && ok && m ? KEDR_OK
                                   : kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_dev_register: out of "
                                               "memory for %d ranks", P);
    if (s == KEDR_OK)
        s = own_record(d, &mine);
    /* a failure here is every rank's, not a partner left waiting for a record */
    s = kedr_comm_agree(d->comm, s);
    for (int q = 0; s == KEDR_OK && q < P; q++)
        if (q != me && kedr_comm_same_host(d->comm, q)) {
            m[n] = (kedr_comm_halo){q, 0, &mine, sizeof mine};
            m[P + n++] = (kedr_comm_halo){q, 0, &all[q], sizeof all[q]};
        }
    if (s == KEDR_OK)
        s = kedr_comm_sendrecv(d->comm, n, m, n, m + P);
    for (int k = 0; s == KEDR_OK && k < n; k++) {
        int q = m[k].rank;
        d->peer_bytes[q] = (size_t)all[q].bytes;
#ifdef KEDR_HAVE_CUDA
        ok[q] = mine.ipc && all[q].ipc && open_peer(d, &all[q], q);
#endif
        m[k] = (kedr_comm_halo){q, 1, &ok[q], sizeof ok[q]};
        m[P + k] = (kedr_comm_halo){q, 1, &ok[P + q], sizeof ok[q]};
    }
    if (s == KEDR_OK)
        s = kedr_comm_sendrecv(d->comm, n, m, n, m + P);
    for (int k = 0; s == KEDR_OK && k < n; k++) {
        int q = m[k].rank;
        d->direct[q] = ok[q] && ok[P + q];
#ifdef KEDR_HAVE_CUDA
        if (ok[q] && !d->direct[q]) { /* the partner could not map this rank's buffer */
            cudaIpcCloseMemHandle(d->peer[q]);
            d->peer[q] = NULL;
        }
#endif
    }
    free(all);
    free(ok);
    free(m);
    return s;
}

#ifdef KEDR_HAVE_CUDA
/* What a rank tells each direct partner q of an ordered registration: its events "ready to
 * receive from q" and "copies to q done". */
typedef struct {
    cudaIpcEventHandle_t ready, done;
} event_record;

/* The events of an ordered registration: made for every direct partner, their handles swapped
 * with the partners', the partners' opened. */
static kedr_status pair_events(kedr_comm_dev *d)
{
    int P = d->size, me = d->rank, n = 0;
    size_t np = (size_t)P;
    d->ready = calloc(np, sizeof *d->ready);
    d->done = calloc(np, sizeof *d->done);
    d->q_ready = calloc(np, sizeof *d->q_ready);
    d->q_done = calloc(np, sizeof *d->q_done);
    event_record *rec = calloc(2 * np, sizeof *rec);
    kedr_comm_halo *m = calloc(2 * np, sizeof *m);
    kedr_status s = KEDR_OK;
    if (!d->ready || !d->done || !d->q_ready || !d->q_done || !rec || !m)
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_dev_register: out of memory for %d ranks", P);
    const unsigned flags = cudaEventDisableTiming | cudaEventInterprocess;
    if (s == KEDR_OK && cudaSetDevice(d->ctx->device) != cudaSuccess)
        s = kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_register: GPU %d", d->ctx->device);
    for (int q = 0; s == KEDR_OK && q < P; q++) {
        if (q == me || !d->direct[q])
            continue;
        cudaError_t e = cudaEventCreateWithFlags(&d->ready[q], flags);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&d->done[q], flags);
        if (e == cudaSuccess)
            e = cudaIpcGetEventHandle(&rec[q].ready, d->ready[q]);
        if (e == cudaSuccess)
            e = cudaIpcGetEventHandle(&rec[q].done, d->done[q]);
        if (e != cudaSuccess)
            s = kedr_cuda_status(e, "kedr_comm_dev_register: an IPC event", __FILE__, __LINE__);
        m[n] = (kedr_comm_halo){q, 2, &rec[q], sizeof rec[q]};
        m[P + n++] = (kedr_comm_halo){q, 2, &rec[P + q], sizeof rec[q]};
    }
    s = kedr_comm_agree(d->comm, s);
    if (s == KEDR_OK)
        s = kedr_comm_sendrecv(d->comm, n, m, n, m + P);
    for (int k = 0; s == KEDR_OK && k < n; k++) {
        int q = m[k].rank;
        cudaError_t e = cudaIpcOpenEventHandle(&d->q_ready[q], rec[P + q].ready);
        if (e == cudaSuccess)
            e = cudaIpcOpenEventHandle(&d->q_done[q], rec[P + q].done);
        if (e != cudaSuccess)
            s = kedr_cuda_status(e, "kedr_comm_dev_register: rank's IPC event", __FILE__,
                                 __LINE__);
    }
    free(rec);
    free(m);
    return kedr_comm_agree(d->comm, s);
}

static void free_events(kedr_comm_dev *d)
{
    cudaEvent_t *ev[4] = {d->ready, d->done, d->q_ready, d->q_done};
    if (d->ready || d->q_ready) /* no partner's copy or wait on them still queued here */
        cudaStreamSynchronize(KEDR_STREAM(d->ctx));
    for (int i = 0; i < 4; i++) {
        for (int q = 0; ev[i] && q < d->size; q++)
            if (ev[i][q])
                cudaEventDestroy(ev[i][q]);
        free(ev[i]);
    }
    d->ready = d->done = d->q_ready = d->q_done = NULL;
}
#endif

kedr_status kedr_comm_dev_register(kedr_comm *comm, kedr_ctx *ctx, void *data, size_t bytes,
                                   kedr_comm_dev **out)
{
    return kedr_comm_dev_register_flags(comm, ctx, data, bytes, 0, out);
}

kedr_status kedr_comm_dev_register_flags(kedr_comm *comm, kedr_ctx *ctx, void *data,
                                         size_t bytes, unsigned flags, kedr_comm_dev **out)
{
    if (!ctx || !out || (bytes && !data))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_register: a NULL argument");
    if (flags & ~(unsigned)KEDR_COMM_DEV_ORDERED)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_register: flags %#x: expected 0 or "
                         "KEDR_COMM_DEV_ORDERED", flags);
    *out = NULL;
    kedr_comm_dev *d = calloc(1, sizeof *d);
    int P = kedr_comm_size(comm);
    if (d) {
        d->direct = calloc((size_t)P, 1);
        d->peer = calloc((size_t)P, sizeof *d->peer);
        d->peer_gpu = calloc((size_t)P, 1);
        d->peer_bytes = calloc((size_t)P, sizeof *d->peer_bytes);
    }
    kedr_status s = KEDR_OK;
    if (!d || !d->direct || !d->peer || !d->peer_gpu || !d->peer_bytes)
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_dev_register: out of memory for %d ranks", P);
    s = kedr_comm_agree(comm, s); /* every rank goes on to pair up, or none */
    if (s == KEDR_OK) {
        d->comm = comm;
        d->ctx = ctx;
        d->data = data;
        d->bytes = bytes;
        d->rank = kedr_comm_rank(comm);
        d->size = P;
        d->direct[d->rank] = KEDR_IS_CUDA(ctx);
        d->peer_bytes[d->rank] = bytes;
        s = pair_up(d); /* agreed over the ranks */
    }
    /* ordered: asked on every rank, not refused by KEDR_COMM_IPC_EVENTS on any, and cuda */
    if (s == KEDR_OK) {
        int on = 1;
        kedr_status e = events_wanted(&on);
        s = kedr_comm_agree(comm, e);
        int32_t asked = (flags & KEDR_COMM_DEV_ORDERED) != 0;
        int32_t want[3] = {asked && on && KEDR_IS_CUDA(ctx), asked, -asked};
        if (s == KEDR_OK) /* the least of each: want[1] the least asked, -want[2] the most */
            s = kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MIN, want, 3);
        if (s == KEDR_OK && want[1] != -want[2])
            s = kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_register: KEDR_COMM_DEV_ORDERED "
                          "asked on some ranks only: every rank must pass the same flags");
        s = kedr_comm_agree(comm, s);
        d->ordered = s == KEDR_OK && want[0];
    }
#ifdef KEDR_HAVE_CUDA
    /* events that cannot be made or opened (on any rank: the outcome is agreed) leave the
     * registration synchronised, as KEDR_COMM_IPC_EVENTS=0 would (kedr_comm_dev_ordered says) */
    if (s == KEDR_OK && d->ordered && pair_events(d) != KEDR_OK) {
        free_events(d);
        d->ordered = 0;
    }
#endif
    /* on cuda, a page-locked copy for the partners that are not direct */
    if (s == KEDR_OK) {
        int staged = 0;
        for (int q = 0; q < P; q++)
            staged |= !d->direct[q];
        kedr_status m = KEDR_OK;
        if (KEDR_IS_CUDA(ctx) && staged)
            m = kedr_host_alloc(ctx, (void **)&d->mirror, bytes);
        s = kedr_comm_agree(comm, m);
    }
    if (s != KEDR_OK) {
        kedr_comm_dev_release(d);
        return s;
    }
    *out = d;
    return KEDR_OK;
}

void kedr_comm_dev_release(kedr_comm_dev *d)
{
    if (!d)
        return;
#ifdef KEDR_HAVE_CUDA
    free_events(d);
    for (int q = 0; d->peer && q < d->size; q++)
        if (d->peer[q])
            cudaIpcCloseMemHandle(d->peer[q]);
#endif
    if (d->mirror)
        kedr_host_free(d->ctx, d->mirror);
    free(d->direct);
    free(d->peer);
    free(d->peer_gpu);
    free(d->peer_bytes);
    free(d);
}

int kedr_comm_dev_direct(const kedr_comm_dev *d, int rank)
{
    return d && rank >= 0 && rank < d->size ? d->direct[rank] : 0;
}

void *kedr_comm_dev_peer(const kedr_comm_dev *d, int rank)
{
    if (!d || rank < 0 || rank >= d->size || rank == d->rank || !d->direct[rank] ||
        !d->peer_gpu[rank])
        return NULL;
    return d->peer[rank];
}

#ifdef KEDR_HAVE_CUDA
/* A word's byte offset: 8-byte aligned and inside a buffer of bytes. */
static kedr_status word_at(size_t at, size_t bytes, const char *what, int i)
{
    if (at % 8 || at > bytes || bytes - at < 8)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_signal: %s %d at byte %zu: expected "
                         "a multiple of 8 with 8 bytes inside the buffer (%zu bytes)", what, i,
                         at, bytes);
    return KEDR_OK;
}
#endif

kedr_status kedr_comm_dev_signal(kedr_comm_dev *d, int nsig, const int *sig_rank,
                                 const size_t *sig_at, int nwait, const size_t *wait_at,
                                 uint64_t value)
{
    if (!d)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_signal: no registered buffer");
    if (nsig < 0 || nsig > KEDR_COMM_SIGNALS_MOST || nwait < 0 ||
        nwait > KEDR_COMM_SIGNALS_MOST || (nsig && (!sig_rank || !sig_at)) ||
        (nwait && !wait_at))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_signal: %d signals and %d waits: "
                         "expected 0 to %d of each, with their arrays", nsig, nwait,
                         KEDR_COMM_SIGNALS_MOST);
#ifdef KEDR_HAVE_CUDA
    kedr_signal_set set = {{NULL}, {NULL}, nsig, nwait};
    for (int i = 0; i < nsig; i++) {
        char *p = kedr_comm_dev_peer(d, sig_rank[i]);
        if (!p)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_signal: signal %d to rank %d: "
                             "not a direct partner on another GPU (kedr_comm_dev_peer)", i,
                             sig_rank[i]);
        KEDR_TRY(word_at(sig_at[i], d->peer_bytes[sig_rank[i]], "signal", i));
        set.sig[i] = (unsigned long long *)(p + sig_at[i]);
    }
    for (int j = 0; j < nwait; j++) {
        KEDR_TRY(word_at(wait_at[j], d->bytes, "wait", j));
        set.wait[j] = (const unsigned long long *)(d->data + wait_at[j]);
    }
    if (!KEDR_IS_CUDA(d->ctx))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_comm_dev_signal: the cuda back end only");
    return kedr_comm_signal_cuda(d->ctx, &set, value);
#else
    (void)value;
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_comm_dev_signal: the cuda back end only "
                     "(this build has no CUDA)");
#endif
}

static kedr_status check_msgs(const kedr_comm_dev *d, int n, const kedr_comm_dev_msg *m,
                              int send)
{
    const char *what = send ? "send" : "receive";
    if (n < 0 || (n && !m))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_sendrecv: %d %ss at %p", n, what,
                         (const void *)m);
    for (int i = 0; i < n; i++) {
        int q = m[i].rank;
        if (q < 0 || q >= d->size)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_sendrecv: %s %d with rank %d: "
                             "expected 0 to %d", what, i, q, d->size - 1);
        if (m[i].tag < 0 || m[i].tag >= KEDR_COMM_MAX_TAG)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_sendrecv: %s %d has tag %d: "
                             "expected 0 to %d", what, i, m[i].tag, KEDR_COMM_MAX_TAG - 1);
        /* the ranges: this rank's buffer, and on a send the partner's where it is known */
        size_t here = send ? m[i].from : m[i].to, there = m[i].to;
        if (here > d->bytes || m[i].bytes > d->bytes - here)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_sendrecv: %s %d: %zu bytes at "
                             "%zu pass the end of this rank's buffer (%zu bytes)", what, i,
                             m[i].bytes, here, d->bytes);
        if (send && d->direct[q] &&
            (there > d->peer_bytes[q] || m[i].bytes > d->peer_bytes[q] - there))
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_sendrecv: send %d: %zu bytes at "
                             "%zu pass the end of rank %d's buffer (%zu bytes)", i, m[i].bytes,
                             there, q, d->peer_bytes[q]);
    }
    return KEDR_OK;
}

#ifdef KEDR_HAVE_CUDA
/* Ordered registrations (KEDR_COMM_DEV_ORDERED) between direct partners: the transfers are
 * ordered on the two ranks' streams by CUDA IPC events, and the host never waits for its GPU.
 * A transfer from sender S to receiver R has two hazards:
 *   (a) S must not copy into R's buffer before R's earlier work (queued before the call) has
 *       finished reading the receive range (R's kernels read the last exchange's bytes there);
 *   (b) R's later work must not read the range before S's copy has landed.
 * R records its event ready[S] on its stream at the start of the call (after all its earlier
 * work) and tells S by a zero-byte MPI note (round 1); S's stream waits for that event
 * (cudaStreamWaitEvent on R's event, opened from its IPC handle) before its copy: (a). After the
 * copies S records done[R] on its stream and tells R (round 2, zero-byte); R's stream waits for
 * it before anything R queues later: (b). The sent bytes are read by a copy on S's stream, so
 * S's later kernels may rewrite them.
 * A wait takes the event's latest record at the time of the call; the notes make it the right
 * one. S waits on ready[S] after R's note of this call, and R records ready[S] again only in a
 * later call with S, after round 2 of this one, which needs S's note sent after S's wait. R
 * waits on done[R] after S's note of this call, and S records it again only after round 1 of a
 * later call with R, which needs R's note sent after R's wait. Every event waited on is
 * recorded before the note that announces it, so the streams' waits form no cycle.
 * The MPI notes stay (two zero-byte rounds, host to host, microseconds); the stream
 * synchronisations are gone, so the GPU keeps the queued kernels running through the
 * exchange. Staged partners (not direct) still synchronise: their bytes pass through the host
 * mirror. */
static kedr_status record_ready(kedr_comm_dev *d, int nrecv, const kedr_comm_dev_msg *recv)
{
    for (int i = 0; i < nrecv; i++) {
        int q = recv[i].rank;
        if (q != d->rank && d->direct[q])
            KEDR_CUDA_TRY(cudaEventRecord(d->ready[q], KEDR_STREAM(d->ctx)));
    }
    return KEDR_OK;
}

static kedr_status wait_done(kedr_comm_dev *d, int nrecv, const kedr_comm_dev_msg *recv)
{
    for (int i = 0; i < nrecv; i++) {
        int q = recv[i].rank;
        if (q != d->rank && d->direct[q])
            KEDR_CUDA_TRY(cudaStreamWaitEvent(KEDR_STREAM(d->ctx), d->q_done[q], 0));
    }
    return KEDR_OK;
}

/* The GPU's part of a transfer: the device copies (to the direct partners and to this rank
 * itself) and the staged receives' uploads from the mirror, then the stream synchronized
 * (ordered: the copies after the partners' ready events and followed by this rank's done
 * events; synchronized only after uploads from the mirror, which the next call reuses). */
static kedr_status device_copies(kedr_comm_dev *d, int nsend, const kedr_comm_dev_msg *send,
                                 int nrecv, const kedr_comm_dev_msg *recv)
{
    cudaStream_t st = KEDR_STREAM(d->ctx);
    int ordered = d->ordered, uploads = 0;
    for (int i = 0; ordered && i < nsend; i++) {
        int q = send[i].rank;
        if (q != d->rank && d->direct[q])
            KEDR_CUDA_TRY(cudaStreamWaitEvent(st, d->q_ready[q], 0));
    }
    for (int i = 0; i < nsend; i++) {
        const kedr_comm_dev_msg *m = &send[i];
        if (!d->direct[m->rank] || !m->bytes)
            continue;
        char *dst = m->rank == d->rank ? d->data : d->peer[m->rank];
        KEDR_CUDA_TRY(cudaMemcpyAsync(dst + m->to, d->data + m->from, m->bytes,
                                      cudaMemcpyDeviceToDevice, st));
    }
    for (int i = 0; ordered && i < nsend; i++) {
        int q = send[i].rank;
        if (q != d->rank && d->direct[q])
            KEDR_CUDA_TRY(cudaEventRecord(d->done[q], st));
    }
    for (int i = 0; i < nrecv; i++)
        if (!d->direct[recv[i].rank] && recv[i].bytes) {
            KEDR_CUDA_TRY(cudaMemcpyAsync(d->data + recv[i].to, d->mirror + recv[i].to,
                                          recv[i].bytes, cudaMemcpyHostToDevice, st));
            uploads = 1;
        }
    if (!ordered || uploads)
        KEDR_CUDA_TRY(cudaStreamSynchronize(st));
    return KEDR_OK;
}

/* The staged sends' bytes to the mirror, after the work queued on the stream (synchronized;
 * ordered: only when there are such bytes). */
static kedr_status stage_sends(kedr_comm_dev *d, int nsend, const kedr_comm_dev_msg *send)
{
    cudaStream_t st = KEDR_STREAM(d->ctx);
    int staged = 0;
    for (int i = 0; i < nsend; i++)
        if (!d->direct[send[i].rank] && send[i].bytes) {
            KEDR_CUDA_TRY(cudaMemcpyAsync(d->mirror + send[i].from, d->data + send[i].from,
                                          send[i].bytes, cudaMemcpyDeviceToHost, st));
            staged = 1;
        }
    if (!d->ordered || staged)
        KEDR_CUDA_TRY(cudaStreamSynchronize(st));
    return KEDR_OK;
}
#endif

/* A message to this rank itself must have its receive, with the same tag, place and size. */
static kedr_status check_self(const kedr_comm_dev *d, int nsend, const kedr_comm_dev_msg *send,
                              int nrecv, const kedr_comm_dev_msg *recv)
{
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? nrecv : nsend, no = pass ? nsend : nrecv;
        const kedr_comm_dev_msg *a = pass ? recv : send, *b = pass ? send : recv;
        for (int i = 0; i < n; i++) {
            if (a[i].rank != d->rank)
                continue;
            int j = 0;
            while (j < no && !(b[j].rank == d->rank && b[j].tag == a[i].tag))
                j++;
            if (j == no || b[j].to != a[i].to || b[j].bytes != a[i].bytes)
                return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_sendrecv: the %s %d to this "
                                 "rank itself (tag %d, %zu bytes at %zu) has no %s of that tag, "
                                 "place and size", pass ? "receive" : "send", i, a[i].tag,
                                 a[i].bytes, a[i].to, pass ? "send" : "receive");
        }
    }
    return KEDR_OK;
}

kedr_status kedr_comm_dev_sendrecv(kedr_comm_dev *d, int nsend, const kedr_comm_dev_msg *send,
                                   int nrecv, const kedr_comm_dev_msg *recv)
{
    if (!d)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_sendrecv: no registered buffer");
    KEDR_TRY(check_msgs(d, nsend, send, 1));
    KEDR_TRY(check_msgs(d, nrecv, recv, 0));
    KEDR_TRY(check_self(d, nsend, send, nrecv, recv));
    int cuda = KEDR_IS_CUDA(d->ctx), ndirect = 0;
    /* messages through MPI: staged bytes, and for the direct pairs zero-byte notes (round 1:
     * the receiver is ready for the copy, round 2: it has landed) with the message's tag */
    kedr_comm_halo *h = malloc(2 * (size_t)(nsend + nrecv + 1) * sizeof *h);
    if (!h)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_dev_sendrecv: out of memory for %d messages",
                         nsend + nrecv);
    kedr_comm_halo *hs = h, *hr = h + nsend + nrecv + 1;
    char *base = cuda ? d->mirror : d->data;
    int ns = 0, nr = 0;
    for (int i = 0; i < nsend; i++) {
        const kedr_comm_dev_msg *m = &send[i];
        if (d->direct[m->rank]) {
            ndirect += m->rank != d->rank;
            if (m->rank != d->rank) /* wait until the partner is ready */
                hr[nr++] = (kedr_comm_halo){m->rank, m->tag, NULL, 0};
        } else {
            hs[ns++] = (kedr_comm_halo){m->rank, m->tag, base + m->from, m->bytes};
        }
    }
    for (int i = 0; i < nrecv; i++) {
        const kedr_comm_dev_msg *m = &recv[i];
        if (d->direct[m->rank]) {
            ndirect += m->rank != d->rank;
            if (m->rank != d->rank) /* tell the partner this rank is ready */
                hs[ns++] = (kedr_comm_halo){m->rank, m->tag, NULL, 0};
        } else {
            hr[nr++] = (kedr_comm_halo){m->rank, m->tag, base + m->to, m->bytes};
        }
    }
    kedr_status s = KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    /* ordered: this rank's stream is ready for the partners' copies from here */
    if (cuda && d->ordered)
        s = record_ready(d, nrecv, recv);
    /* the bytes to send are written, and this rank's earlier reads of its buffer done (or,
     * ordered, the staged ones only) */
    if (s == KEDR_OK && cuda)
        s = stage_sends(d, nsend, send);
#endif
    if (s == KEDR_OK)
        s = kedr_comm_sendrecv(d->comm, ns, hs, nr, hr);
#ifdef KEDR_HAVE_CUDA
    if (s == KEDR_OK && cuda)
        s = device_copies(d, nsend, send, nrecv, recv);
#endif
    if (s == KEDR_OK && ndirect) {
        ns = nr = 0;
        for (int i = 0; i < nsend; i++)
            if (d->direct[send[i].rank] && send[i].rank != d->rank)
                hs[ns++] = (kedr_comm_halo){send[i].rank, send[i].tag, NULL, 0};
        for (int i = 0; i < nrecv; i++)
            if (d->direct[recv[i].rank] && recv[i].rank != d->rank)
                hr[nr++] = (kedr_comm_halo){recv[i].rank, recv[i].tag, NULL, 0};
        s = kedr_comm_sendrecv(d->comm, ns, hs, nr, hr);
    }
#ifdef KEDR_HAVE_CUDA
    /* ordered: this rank's later work waits for the partners' copies */
    if (s == KEDR_OK && cuda && d->ordered)
        s = wait_done(d, nrecv, recv);
#endif
    free(h);
    return s;
}

int kedr_comm_dev_ordered(const kedr_comm_dev *d)
{
    return d ? d->ordered : 0;
}
