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
    size_t *peer_bytes;    /* by rank: its buffer's size (ranks of this host) */
    char *mirror;          /* cuda with a partner that is not direct: page-locked copy */
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

kedr_status kedr_comm_dev_register(kedr_comm *comm, kedr_ctx *ctx, void *data, size_t bytes,
                                   kedr_comm_dev **out)
{
    if (!ctx || !out || (bytes && !data))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_dev_register: a NULL argument");
    *out = NULL;
    kedr_comm_dev *d = calloc(1, sizeof *d);
    int P = kedr_comm_size(comm);
    if (d) {
        d->direct = calloc((size_t)P, 1);
        d->peer = calloc((size_t)P, sizeof *d->peer);
        d->peer_bytes = calloc((size_t)P, sizeof *d->peer_bytes);
    }
    kedr_status s = KEDR_OK;
    if (!d || !d->direct || !d->peer || !d->peer_bytes)
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
    for (int q = 0; d->peer && q < d->size; q++)
        if (d->peer[q])
            cudaIpcCloseMemHandle(d->peer[q]);
#endif
    if (d->mirror)
        kedr_host_free(d->ctx, d->mirror);
    free(d->direct);
    free(d->peer);
    free(d->peer_bytes);
    free(d);
}

int kedr_comm_dev_direct(const kedr_comm_dev *d, int rank)
{
    return d && rank >= 0 && rank < d->size ? d->direct[rank] : 0;
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
/* The GPU's part of a transfer: the device copies (to the direct partners and to this rank
 * itself) and the staged receives' uploads from the mirror, then the stream synchronized. */
static kedr_status device_copies(kedr_comm_dev *d, int nsend, const kedr_comm_dev_msg *send,
                                 int nrecv, const kedr_comm_dev_msg *recv)
{
    cudaStream_t st = KEDR_STREAM(d->ctx);
    for (int i = 0; i < nsend; i++) {
        const kedr_comm_dev_msg *m = &send[i];
        if (!d->direct[m->rank] || !m->bytes)
            continue;
        char *dst = m->rank == d->rank ? d->data : d->peer[m->rank];
        KEDR_CUDA_TRY(cudaMemcpyAsync(dst + m->to, d->data + m->from, m->bytes,
                                      cudaMemcpyDeviceToDevice, st));
    }
    for (int i = 0; i < nrecv; i++)
        if (!d->direct[recv[i].rank] && recv[i].bytes)
            KEDR_CUDA_TRY(cudaMemcpyAsync(d->data + recv[i].to, d->mirror + recv[i].to,
                                          recv[i].bytes, cudaMemcpyHostToDevice, st));
    KEDR_CUDA_TRY(cudaStreamSynchronize(st));
    return KEDR_OK;
}

/* The staged sends' bytes to the mirror, after the work queued on the stream. */
static kedr_status stage_sends(kedr_comm_dev *d, int nsend, const kedr_comm_dev_msg *send)
{
    cudaStream_t st = KEDR_STREAM(d->ctx);
    for (int i = 0; i < nsend; i++)
        if (!d->direct[send[i].rank] && send[i].bytes)
            KEDR_CUDA_TRY(cudaMemcpyAsync(d->mirror + send[i].from, d->data + send[i].from,
                                          send[i].bytes, cudaMemcpyDeviceToHost, st));
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
    /* the bytes to send are written, and this rank's earlier reads of its buffer done */
    if (cuda)
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
    free(h);
    return s;
}
