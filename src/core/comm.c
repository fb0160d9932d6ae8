/* The MPI layer: ranks, reductions, gathers, neighbour messages and agreed errors. Without MPI
 * built in, or in a program that mpirun did not start, it is one rank and touches no MPI. */
#include "kedr/comm.h"

#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef KEDR_HAVE_MPI
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

struct kedr_comm {
    int rank, size, local_rank, local_size;
    int parallel;   /* MPI is in use */
    int started;    /* kedr_comm_init called MPI_Init, so finalize ends it */
    int gpu_aware;
    int *host;      /* by rank: the lowest rank of its host */
#ifdef KEDR_HAVE_MPI
    MPI_Comm world, local;
#endif
};

/* Largest piece one MPI call moves: MPI counts are int. */
#define PIECE ((size_t)1 << 30)
/* kedr_comm_sendrecv's messages: up to HALO_PIECES pieces each, tags from HALO_TAG0 (MPI
 * promises tags up to 32767). */
#define HALO_PIECES ((size_t)8)
#define HALO_TAG0 16384

#ifdef KEDR_HAVE_MPI
static kedr_status mpi_fail(int err, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", err);
    return kedr_fail(KEDR_ERR_IO, "MPI: %s failed: %s", what, text);
}
#define MPI_TRY(call)                                                                  \
    do {                                                                               \
        int kedr_mpi_e_ = (call);                                                      \
        if (kedr_mpi_e_ != MPI_SUCCESS)                                                \
            return mpi_fail(kedr_mpi_e_, #call);                                       \
    } while (0)

/* Whether a launcher started this process as part of a job (Open MPI, MPICH/PMI, PMIx). */
static int launched_by_mpirun(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

static int mpi_gpu_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support();
#else
    return 0;
#endif
}
#endif

kedr_status kedr_comm_init(int *argc, char ***argv, kedr_comm **out)
{
    if (!out)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_init: comm is NULL");
    kedr_comm *c = calloc(1, sizeof *c);
    if (!c)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_init: out of memory");
    c->size = c->local_size = 1;
#ifdef KEDR_HAVE_MPI
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized || launched_by_mpirun()) {
        if (!initialized) {
            int provided = 0;
            int err = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
            if (err != MPI_SUCCESS) {
                free(c);
                return mpi_fail(err, "MPI_Init_thread");
            }
            c->started = 1;
        }
        c->parallel = 1;
        c->world = MPI_COMM_WORLD;
        MPI_Comm_set_errhandler(c->world, MPI_ERRORS_RETURN);
        MPI_Comm_rank(c->world, &c->rank);
        MPI_Comm_size(c->world, &c->size);
        MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &c->local);
        MPI_Comm_rank(c->local, &c->local_rank);
        MPI_Comm_size(c->local, &c->local_size);
        c->gpu_aware = mpi_gpu_aware();
        int first = c->rank, err = MPI_SUCCESS;
        if (!(c->host = malloc((size_t)c->size * sizeof *c->host)))
            err = MPI_ERR_NO_MEM;
        if (err == MPI_SUCCESS)
            err = MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, c->local);
        if (err == MPI_SUCCESS)
            err = MPI_Allgather(&first, 1, MPI_INT, c->host, 1, MPI_INT, c->world);
        if (err != MPI_SUCCESS) {
            free(c->host);
            free(c);
            return mpi_fail(err, "learning the ranks of each host");
        }
    }
#else
    (void)argc, (void)argv;
#endif
    *out = c;
    return KEDR_OK;
}

void kedr_comm_finalize(kedr_comm *c)
{
    if (!c)
        return;
#ifdef KEDR_HAVE_MPI
    if (c->parallel)
        MPI_Comm_free(&c->local);
    free(c->host);
    if (c->started)
        MPI_Finalize();
#endif
    free(c);
}

int kedr_comm_rank(const kedr_comm *c) { return c ? c->rank : 0; }
int kedr_comm_size(const kedr_comm *c) { return c ? c->size : 1; }
int kedr_comm_local_rank(const kedr_comm *c) { return c ? c->local_rank : 0; }
int kedr_comm_local_size(const kedr_comm *c) { return c ? c->local_size : 1; }
int kedr_comm_is_parallel(const kedr_comm *c) { return c ? c->parallel : 0; }

int kedr_comm_same_host(const kedr_comm *c, int rank)
{
    if (rank < 0 || rank >= kedr_comm_size(c))
        return 0;
    return c && c->host ? c->host[rank] == c->host[c->rank] : 1;
}
int kedr_comm_gpu_aware(const kedr_comm *c) { return c ? c->gpu_aware : 0; }

int kedr_comm_device(const kedr_comm *c, int ndevices)
{
    return ndevices > 0 ? kedr_comm_local_rank(c) % ndevices : 0;
}

kedr_status kedr_comm_barrier(kedr_comm *c)
{
#ifdef KEDR_HAVE_MPI
    if (c && c->parallel)
        MPI_TRY(MPI_Barrier(c->world));
#else
    (void)c;
#endif
    return KEDR_OK;
}

#ifdef KEDR_HAVE_MPI
static MPI_Datatype mpi_type(kedr_dtype t)
{
    switch (t) {
    case KEDR_U32: return MPI_UINT32_T;
    case KEDR_U64: return MPI_UINT64_T;
    case KEDR_I32: return MPI_INT32_T;
    case KEDR_F32: return MPI_FLOAT;
    case KEDR_F64: return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

static MPI_Op mpi_op(kedr_op op)
{
    switch (op) {
    case KEDR_OP_SUM: return MPI_SUM;
    case KEDR_OP_MIN: return MPI_MIN;
    case KEDR_OP_MAX: return MPI_MAX;
    }
    return MPI_OP_NULL;
}
#endif

kedr_status kedr_comm_allreduce(kedr_comm *c, kedr_dtype type, kedr_op op, void *data, size_t n)
{
    KEDR_TRY(kedr_check_dtype(type, KEDR_TYPES_ALL, "kedr_comm_allreduce", "type"));
    if (op != KEDR_OP_SUM && op != KEDR_OP_MIN && op != KEDR_OP_MAX)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_allreduce: op %d: expected sum, min or max",
                         (int)op);
    if (n && !data)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_allreduce: data is NULL for n = %zu", n);
#ifdef KEDR_HAVE_MPI
    if (c && c->parallel) {
        size_t w = kedr_dtype_size(type), per = PIECE / w;
        for (size_t at = 0; at < n; at += per) {
            int k = (int)(n - at < per ? n - at : per);
            MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, (char *)data + at * w, k, mpi_type(type),
                                  mpi_op(op), c->world));
        }
    }
#else
    (void)c;
#endif
    return KEDR_OK;
}

kedr_status kedr_comm_bcast(kedr_comm *c, void *data, size_t bytes, int root)
{
    if (root < 0 || root >= kedr_comm_size(c))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_bcast: root %d: expected 0 to %d", root,
                         kedr_comm_size(c) - 1);
    if (bytes && !data)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_bcast: data is NULL for %zu bytes", bytes);
#ifdef KEDR_HAVE_MPI
    if (c && c->parallel)
        for (size_t at = 0; at < bytes; at += PIECE) {
            int k = (int)(bytes - at < PIECE ? bytes - at : PIECE);
            MPI_TRY(MPI_Bcast((char *)data + at, k, MPI_BYTE, root, c->world));
        }
#endif
    return KEDR_OK;
}

kedr_status kedr_comm_agree(kedr_comm *c, kedr_status local)
{
#ifdef KEDR_HAVE_MPI
    if (c && c->parallel) {
        int first = local == KEDR_OK ? INT_MAX : c->rank;
        MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, c->world));
        if (first == INT_MAX)
            return KEDR_OK;
        struct {
            int status;
            char message[1024];
        } m = {(int)local, ""};
        if (c->rank == first)
            snprintf(m.message, sizeof m.message, "%s", kedr_last_error());
        MPI_TRY(MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, c->world));
        return kedr_fail((kedr_status)m.status, "rank %d: %s", first, m.message);
    }
#else
    (void)c;
#endif
    return local;
}

kedr_status kedr_comm_gatherv(kedr_comm *c, const void *send, size_t bytes, int root,
                              size_t *counts, void **recv)
{
    int size = kedr_comm_size(c), rank = kedr_comm_rank(c);
    if (root < 0 || root >= size)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_gatherv: root %d: expected 0 to %d", root,
                         size - 1);
    if ((bytes && !send) || (rank == root && (!counts || !recv)))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_gatherv: a buffer is NULL");
    uint64_t mine = bytes, *all = NULL;
    if (rank == root && !(all = malloc((size_t)size * sizeof *all)))
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_gatherv: out of memory for %d counts", size);
    if (all)
        all[0] = mine;
#ifdef KEDR_HAVE_MPI
    if (c && c->parallel) {
        int err = MPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, root, c->world);
        if (err != MPI_SUCCESS) {
            free(all);
            return mpi_fail(err, "MPI_Gather");
        }
    }
#endif
    kedr_status s = KEDR_OK;
    if (rank == root) {
        size_t total = 0;
        for (int r = 0; r < size; r++)
            total += counts[r] = (size_t)all[r];
        char *buf = malloc(total ? total : 1);
        if (!buf)
            s = kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_gatherv: out of memory for %zu bytes", total);
        size_t at = 0;
        for (int r = 0; r < size && s == KEDR_OK; r++) {
            if (r == rank)
                memcpy(buf + at, send, bytes);
#ifdef KEDR_HAVE_MPI
            else
                for (size_t off = 0; off < counts[r] && s == KEDR_OK; off += PIECE) {
                    int k = (int)(counts[r] - off < PIECE ? counts[r] - off : PIECE);
                    int err = MPI_Recv(buf + at + off, k, MPI_BYTE, r, 0, c->world,
                                       MPI_STATUS_IGNORE);
                    if (err != MPI_SUCCESS)
                        s = mpi_fail(err, "MPI_Recv");
                }
#endif
            at += counts[r];
        }
        if (s == KEDR_OK)
            *recv = buf;
        else
            free(buf);
    }
#ifdef KEDR_HAVE_MPI
    else
        for (size_t off = 0; off < bytes; off += PIECE) {
            int k = (int)(bytes - off < PIECE ? bytes - off : PIECE);
            int err = MPI_Send((const char *)send + off, k, MPI_BYTE, root, 0, c->world);
            if (err != MPI_SUCCESS) {
                s = mpi_fail(err, "MPI_Send");
                break;
            }
        }
#endif
    free(all);
    return s;
}

#ifdef KEDR_HAVE_MPI
/* One message of a transfer: received (recv 1) or sent, with its first tag. */
typedef struct {
    int recv, peer, tag0;
    void *data;
    size_t bytes;
} xfer;
static kedr_status transfer(kedr_comm *c, int n, const xfer *x, const char *fn);
#endif

static kedr_status check_halos(const kedr_comm *c, int n, const kedr_comm_halo *h,
                               const char *what)
{
    int size = kedr_comm_size(c);
    if (n < 0 || (n && !h))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_sendrecv: %d %ss at %p", n, what,
                         (const void *)h);
    for (int i = 0; i < n; i++) {
        if (h[i].rank < 0 || h[i].rank >= size)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_sendrecv: %s %d with rank %d: "
                             "expected 0 to %d", what, i, h[i].rank, size - 1);
        if (h[i].tag < 0 || h[i].tag >= KEDR_COMM_MAX_TAG)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_sendrecv: %s %d has tag %d: expected "
                             "0 to %d", what, i, h[i].tag, KEDR_COMM_MAX_TAG - 1);
        if (h[i].bytes && !h[i].data)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_sendrecv: %s %d has no buffer", what, i);
        if (h[i].bytes > HALO_PIECES * PIECE)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_sendrecv: %s %d of %zu bytes: at most "
                             "%zu", what, i, h[i].bytes, HALO_PIECES * PIECE);
    }
    return KEDR_OK;
}

kedr_status kedr_comm_sendrecv(kedr_comm *c, int nsend, const kedr_comm_halo *send, int nrecv,
                               const kedr_comm_halo *recv)
{
    int rank = kedr_comm_rank(c);
    KEDR_TRY(check_halos(c, nsend, send, "send"));
    KEDR_TRY(check_halos(c, nrecv, recv, "receive"));
    for (int i = 0; i < nrecv; i++) {
        if (recv[i].rank != rank)
            continue;
        int j = 0;
        while (j < nsend && !(send[j].rank == rank && send[j].tag == recv[i].tag))
            j++;
        if (j == nsend || send[j].bytes != recv[i].bytes)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_sendrecv: receive %d from this rank "
                             "(tag %d, %zu bytes) has no send of that tag and size", i,
                             recv[i].tag, recv[i].bytes);
        if (recv[i].bytes)
            memmove(recv[i].data, send[j].data, recv[i].bytes);
    }
    kedr_status s = KEDR_OK;
#ifdef KEDR_HAVE_MPI
    if (c && c->parallel) {
        /* tags above those of kedr_comm_exchange; a halo's pieces take consecutive tags */
        xfer *x = malloc((size_t)(nsend + nrecv + 1) * sizeof *x);
        int n = 0;
        if (!x)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_sendrecv: out of memory for requests");
        for (int i = 0; i < nrecv; i++)
            if (recv[i].rank != rank)
                x[n++] = (xfer){1, recv[i].rank, HALO_TAG0 + recv[i].tag * (int)HALO_PIECES,
                                recv[i].data, recv[i].bytes};
        for (int i = 0; i < nsend; i++)
            if (send[i].rank != rank)
                x[n++] = (xfer){0, send[i].rank, HALO_TAG0 + send[i].tag * (int)HALO_PIECES,
                                send[i].data, send[i].bytes};
        s = transfer(c, n, x, "kedr_comm_sendrecv");
        free(x);
    }
#endif
    return s;
}

static kedr_status check_sends(const kedr_comm *c, int nsend, const kedr_comm_msg *send)
{
    int size = kedr_comm_size(c);
    if (nsend < 0 || (nsend && !send))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_exchange: %d messages at %p", nsend,
                         (const void *)send);
    for (int i = 0; i < nsend; i++) {
        if (send[i].rank < 0 || send[i].rank >= size)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_exchange: message %d to rank %d: "
                             "expected 0 to %d", i, send[i].rank, size - 1);
        if (send[i].bytes && !send[i].data)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_exchange: message %d has no data", i);
        for (int j = 0; j < i; j++)
            if (send[j].rank == send[i].rank)
                return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_exchange: messages %d and %d both "
                                 "go to rank %d: expected one per rank", j, i, send[i].rank);
    }
    return KEDR_OK;
}

#ifdef KEDR_HAVE_MPI
/* Posts the pieces of one message; *nreq grows by the pieces posted. */
static kedr_status post(kedr_comm *c, int recv, void *data, size_t bytes, int peer,
                        MPI_Request *req, int *nreq, int tag0)
{
    for (size_t off = 0, tag = 0; off < bytes || (bytes == 0 && tag == 0); off += PIECE, tag++) {
        int k = (int)(bytes - off < PIECE ? bytes - off : PIECE);
        int err = recv ? MPI_Irecv((char *)data + off, k, MPI_BYTE, peer, tag0 + (int)tag,
                                   c->world, &req[*nreq])
                       : MPI_Isend((char *)data + off, k, MPI_BYTE, peer, tag0 + (int)tag,
                                   c->world, &req[*nreq]);
        if (err != MPI_SUCCESS)
            return mpi_fail(err, recv ? "MPI_Irecv" : "MPI_Isend");
        (*nreq)++;
        if (bytes == 0)
            break;
    }
    return KEDR_OK;
}

static size_t pieces(size_t bytes) { return bytes ? (bytes + PIECE - 1) / PIECE : 1; }

/* Posts every message of x (in pieces of at most PIECE bytes) and waits for them all. */
static kedr_status transfer(kedr_comm *c, int n, const xfer *x, const char *fn)
{
    size_t nreq = 0;
    for (int i = 0; i < n; i++)
        nreq += pieces(x[i].bytes);
    MPI_Request *req = malloc((nreq ? nreq : 1) * sizeof *req);
    if (!req)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of memory for requests", fn);
    kedr_status s = KEDR_OK;
    int posted = 0;
    for (int i = 0; i < n && s == KEDR_OK; i++)
        s = post(c, x[i].recv, x[i].data, x[i].bytes, x[i].peer, req, &posted, x[i].tag0);
    if (posted) {
        int err = MPI_Waitall(posted, req, MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS && s == KEDR_OK)
            s = mpi_fail(err, "MPI_Waitall");
    }
    free(req);
    return s;
}
#endif

kedr_status kedr_comm_exchange_sizes(kedr_comm *c, int nsend, const kedr_comm_msg *send,
                                     int *nrecv, kedr_comm_msg **msgs, size_t *total)
{
    if (!nrecv || !msgs || !total)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_exchange: an output is NULL");
    *nrecv = 0;
    *msgs = NULL;
    *total = 0;
    KEDR_TRY(check_sends(c, nsend, send));
    int size = kedr_comm_size(c);
    /* Who sends how much to whom: one count per pair, so that every receive is posted with its
     * size. Sizes go as 64-bit counts; a size of UINT64_MAX means "no message". */
    uint64_t *out = malloc(2 * (size_t)size * sizeof *out), *in = out ? out + size : NULL;
    if (!out)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_exchange: out of memory for %d counts", size);
    for (int r = 0; r < size; r++)
        out[r] = UINT64_MAX;
    for (int i = 0; i < nsend; i++)
        out[send[i].rank] = send[i].bytes;
    memcpy(in, out, (size_t)size * sizeof *in); /* one rank: what it sends to itself */
#ifdef KEDR_HAVE_MPI
    if (c && c->parallel) {
        int err = MPI_Alltoall(out, 1, MPI_UINT64_T, in, 1, MPI_UINT64_T, c->world);
        if (err != MPI_SUCCESS) {
            free(out);
            return mpi_fail(err, "MPI_Alltoall");
        }
    }
#endif
    int n = 0;
    size_t sum = 0;
    for (int r = 0; r < size; r++)
        if (in[r] != UINT64_MAX) {
            n++;
            sum += (size_t)in[r];
        }
    kedr_comm_msg *m = malloc((size_t)(n ? n : 1) * sizeof *m);
    if (!m) {
        free(out);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_exchange: out of memory for %d messages", n);
    }
    for (int r = 0, k = 0; r < size; r++)
        if (in[r] != UINT64_MAX)
            m[k++] = (kedr_comm_msg){r, NULL, (size_t)in[r]};
    free(out);
    *nrecv = n;
    *msgs = m;
    *total = sum;
    return KEDR_OK;
}

kedr_status kedr_comm_exchange_data(kedr_comm *c, int nsend, const kedr_comm_msg *send,
                                    int nrecv, kedr_comm_msg *msgs, void *recv)
{
    int rank = kedr_comm_rank(c), n = nrecv;
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        msgs[k].data = (char *)recv + at;
        at += msgs[k].bytes;
    }
    for (int i = 0; i < nsend; i++) /* to itself: a copy */
        if (send[i].rank == rank)
            for (int k = 0; k < n; k++)
                if (msgs[k].rank == rank)
                    memcpy((void *)msgs[k].data, send[i].data, send[i].bytes);
    kedr_status s = KEDR_OK;
#ifdef KEDR_HAVE_MPI
    if (c && c->parallel) {
        xfer *x = malloc((size_t)(nsend + n + 1) * sizeof *x);
        int nx = 0;
        if (!x)
            s = kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_exchange: out of memory for requests");
        for (int k = 0; x && k < n; k++)
            if (msgs[k].rank != rank)
                x[nx++] = (xfer){1, msgs[k].rank, 0, (void *)msgs[k].data, msgs[k].bytes};
        for (int i = 0; x && i < nsend; i++)
            if (send[i].rank != rank)
                x[nx++] = (xfer){0, send[i].rank, 0, (void *)send[i].data, send[i].bytes};
        if (x)
            s = transfer(c, nx, x, "kedr_comm_exchange");
        free(x);
    }
#else
    (void)rank;
#endif
    return s;
}

kedr_status kedr_comm_exchange(kedr_comm *c, int nsend, const kedr_comm_msg *send, int *nrecv,
                               kedr_comm_msg **msgs, void **recv)
{
    if (!nrecv || !msgs || !recv)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_comm_exchange: an output is NULL");
    int n = 0;
    size_t total = 0;
    kedr_comm_msg *m = NULL;
    KEDR_TRY(kedr_comm_exchange_sizes(c, nsend, send, &n, &m, &total));
    char *buf = malloc(total ? total : 1);
    if (!buf) {
        free(m);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_comm_exchange: out of memory for %zu bytes from "
                         "%d ranks", total, n);
    }
    kedr_status s = kedr_comm_exchange_data(c, nsend, send, n, m, buf);
    if (s != KEDR_OK) {
        free(m);
        free(buf);
        return s;
    }
    *nrecv = n;
    *msgs = m;
    *recv = buf;
    return KEDR_OK;
}
