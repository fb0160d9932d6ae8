/* Registered buffers between ranks (kedr_comm_dev_*), alone and under mpirun on 2 to 4 ranks
 * (cmake/targets/comm-dev.cmake): every rank sends every other rank (and itself) a message of an
 * awkward size, some of 0 bytes, some pairs none, from a place of its buffer into a place of
 * the receiver's, in four rounds on one registration; the received bytes, the bytes sent and
 * the bytes nobody writes are checked on every rank. On each back end (cpu: through MPI; cuda:
 * GPU to GPU between ranks of a host where the GPUs allow, IPC being required between ranks
 * that share a GPU) and with KEDR_COMM_IPC=0 (always through the host). Then refusals: a range
 * past a buffer's end, a tag out of range, a message to itself without its receive, and a bad
 * KEDR_COMM_IPC. Signals (kedr_comm_dev_signal): on cuda, between ranks on GPUs of their own,
 * every rank writes each partner a block through its mapping and signals it, three rounds; each
 * checks what arrived after its wait; and the refusals (a partner that is not mapped, too many
 * signals, a word out of place). */
#include "kedr/comm.h"

#include "test_util.h"

#include <stdint.h>

static kedr_comm *comm;
static int rank, size;

enum { ROUNDS = 4 };

/* What rank p sends rank q in round k: a size (-1: no message) and its bytes. */
static long msg_size(int p, int q, int k)
{
    uint32_t h = (uint32_t)(p * 7919 + q * 104729 + k * 1299709 + 17) * 2654435761u;
    h ^= h >> 13;
    if (h % 5 == 0)
        return -1;
    return h % 7 == 0 ? 0 : (long)(h % 3001);
}

static unsigned char msg_byte(int p, int q, int k, size_t i)
{
    return (unsigned char)(p * 31 + q * 17 + k * 5 + i * 13 + 1);
}

/* Rank r's buffer in round k: what it sends each q (out, at out[q]), then what each p sends it
 * (at in[p]), then 7 bytes nobody writes. */
typedef struct {
    size_t out[8], in[8], bytes;
} layout;

static void layout_of(int r, int k, layout *l)
{
    size_t at = 0;
    for (int q = 0; q < size; q++) {
        l->out[q] = at;
        long m = msg_size(r, q, k);
        at += m > 0 ? (size_t)m : 0;
    }
    for (int p = 0; p < size; p++) {
        l->in[p] = at;
        long m = msg_size(p, r, k);
        at += m > 0 ? (size_t)m : 0;
    }
    l->bytes = at + 7;
}

/* The largest buffer rank r needs over the rounds. */
static size_t buffer_bytes(int r)
{
    size_t b = 0;
    for (int k = 0; k < ROUNDS; k++) {
        layout l;
        layout_of(r, k, &l);
        b = l.bytes > b ? l.bytes : b;
    }
    return b;
}

/* The rounds on one registration of a buffer of ctx; ipc: KEDR_COMM_IPC as set ("" unset). */
static void check_rounds(kedr_ctx *ctx, const char *ipc, const int *device)
{
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    size_t bytes = buffer_bytes(rank);
    unsigned char *h = malloc(bytes), *dev = NULL;
    TU_OK(kedr_alloc(ctx, (void **)&dev, bytes));
    kedr_comm_dev *d = NULL;
    TU_OK(kedr_comm_dev_register(comm, ctx, dev, bytes, &d));
    if (!d || !dev || !h) {
        kedr_free(ctx, dev);
        free(h);
        return;
    }
    /* who goes GPU to GPU: nobody through the host; on cuda ranks sharing a GPU must */
    int ndirect = 0;
    for (int q = 0; q < size; q++) {
        int direct = kedr_comm_dev_direct(d, q);
        ndirect += direct && q != rank;
        if (q == rank)
            TU_CHECK(direct == cuda, "%s: to itself direct %d", kedr_backend_name(
                         kedr_ctx_backend(ctx)), direct);
        else if (!cuda || !strcmp(ipc, "0"))
            TU_CHECK(!direct, "%s, KEDR_COMM_IPC=%s: rank %d to %d direct", kedr_backend_name(
                         kedr_ctx_backend(ctx)), ipc, rank, q);
        else if (kedr_comm_same_host(comm, q) && device[q] == device[rank])
            TU_CHECK(direct, "cuda: ranks %d and %d share GPU %d but copy through the host",
                     rank, q, device[rank]);
    }
    int32_t pairs = ndirect;
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_SUM, &pairs, 1));
    if (rank == 0)
        printf("%s, KEDR_COMM_IPC=%s, %d ranks: %d of %d ordered pairs GPU to GPU\n",
               kedr_backend_name(kedr_ctx_backend(ctx)), *ipc ? ipc : "(unset)", size,
               (int)pairs, size * (size - 1));
    kedr_comm_dev_msg snd[8], rcv[8];
    for (int k = 0; k < ROUNDS; k++) {
        layout me, them;
        layout_of(rank, k, &me);
        memset(h, 0xEE, bytes);
        for (int q = 0; q < size; q++)
            for (long i = 0; i < msg_size(rank, q, k); i++)
                h[me.out[q] + (size_t)i] = msg_byte(rank, q, k, (size_t)i);
        TU_OK(kedr_upload(ctx, dev, h, bytes));
        int ns = 0, nr = 0;
        for (int q = 0; q < size; q++) {
            long m = msg_size(rank, q, k);
            layout_of(q, k, &them);
            if (m >= 0)
                snd[ns++] = (kedr_comm_dev_msg){q, (q + 3 * k) % KEDR_COMM_MAX_TAG, me.out[q],
                                                them.in[rank], (size_t)m};
            m = msg_size(q, rank, k);
            if (m >= 0)
                rcv[nr++] = (kedr_comm_dev_msg){q, (rank + 3 * k) % KEDR_COMM_MAX_TAG, 0,
                                                me.in[q], (size_t)m};
        }
        TU_OK(kedr_comm_dev_sendrecv(d, ns, snd, nr, rcv));
        memset(h, 0, bytes);
        TU_OK(kedr_download(ctx, h, dev, bytes));
        long bad = 0;
        for (int q = 0; q < size; q++) {
            for (long i = 0; i < msg_size(rank, q, k); i++)
                bad += h[me.out[q] + (size_t)i] != msg_byte(rank, q, k, (size_t)i);
            for (long i = 0; i < msg_size(q, rank, k); i++)
                bad += h[me.in[q] + (size_t)i] != msg_byte(q, rank, k, (size_t)i);
        }
        for (size_t i = me.in[size - 1] + (size_t)(msg_size(size - 1, rank, k) > 0
                                                       ? msg_size(size - 1, rank, k) : 0);
             i < bytes; i++)
            bad += h[i] != 0xEE;
        TU_CHECK(bad == 0, "%s, KEDR_COMM_IPC=%s, round %d, rank %d: %ld bytes wrong",
                 kedr_backend_name(kedr_ctx_backend(ctx)), ipc, k, rank, bad);
    }
    /* refusals, the same on every rank (each fails before any message) */
    kedr_comm_dev_msg past = {rank, 0, bytes - 2, 0, 3}, self_to = {rank, 0, 0, 0, 1};
    kedr_status st = kedr_comm_dev_sendrecv(d, 1, &past, 1, &past);
    TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "pass the end"),
             "a range past the buffer's end: %s", kedr_last_error());
    kedr_comm_dev_msg tag = {rank, KEDR_COMM_MAX_TAG, 0, 1, 1};
    st = kedr_comm_dev_sendrecv(d, 1, &tag, 1, &tag);
    TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "tag"),
             "a tag out of range: %s", kedr_last_error());
    st = kedr_comm_dev_sendrecv(d, 1, &self_to, 0, NULL);
    TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "itself"),
             "a message to itself without its receive: %s", kedr_last_error());
    kedr_comm_dev_release(d);
    kedr_free(ctx, dev);
    free(h);
}

/* Byte i of what rank p writes rank q in signal round k. */
static unsigned char sig_byte(int p, int q, int k, size_t i)
{
    return (unsigned char)(p * 37 + q * 11 + k * 101 + i * 7 + 1);
}

enum { SIG_BLOCK = 200, SIG_ROUNDS = 3 };

static void check_signals(kedr_ctx *ctx)
{
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    /* rank p's block of round k at (k size + p) SIG_BLOCK; then a word from each rank */
    size_t words = (size_t)SIG_ROUNDS * (size_t)size * SIG_BLOCK;
    words = (words + 7) / 8 * 8;
    size_t bytes = words + 8 * (size_t)size;
    unsigned char *dev = NULL, *h = calloc(bytes, 1), *blk = malloc(SIG_BLOCK);
    kedr_comm_dev *d = NULL;
    TU_OK(kedr_alloc(ctx, (void **)&dev, bytes));
    TU_OK(kedr_memset(ctx, dev, 0, bytes));
    TU_OK(kedr_comm_dev_register(comm, ctx, dev, bytes, &d));
    if (!d || !dev || !h || !blk) {
        kedr_comm_dev_release(d);
        kedr_free(ctx, dev);
        free(h);
        free(blk);
        return;
    }
    int to[8], n = 0;
    size_t at[8], wait[8];
    for (int q = 0; q < size; q++) {
        unsigned char *p = kedr_comm_dev_peer(d, q);
        TU_CHECK(q != rank || !p, "the peer mapping of this rank itself: NULL");
        if (!cuda)
            TU_CHECK(!p, "cpu: no peer mapping of rank %d", q);
        if (p) {
            to[n] = q;
            at[n] = words + 8 * (size_t)rank;
            wait[n++] = words + 8 * (size_t)q;
        }
    }
    for (int k = 0; k < SIG_ROUNDS && n; k++) {
        for (int j = 0; j < n; j++) {
            unsigned char *p = kedr_comm_dev_peer(d, to[j]);
            for (size_t i = 0; i < SIG_BLOCK; i++)
                blk[i] = sig_byte(rank, to[j], k, i);
            TU_OK(kedr_upload(ctx, p + ((size_t)k * size + rank) * SIG_BLOCK, blk, SIG_BLOCK));
        }
        TU_OK(kedr_comm_dev_signal(d, n, to, at, n, wait, (uint64_t)k + 1));
        TU_OK(kedr_download(ctx, h, dev, bytes));
        for (int j = 0; j < n; j++) {
            const unsigned char *got = h + ((size_t)k * size + to[j]) * SIG_BLOCK;
            size_t bad = SIG_BLOCK;
            for (size_t i = 0; i < SIG_BLOCK && bad == SIG_BLOCK; i++)
                if (got[i] != sig_byte(to[j], rank, k, i))
                    bad = i;
            uint64_t word;
            memcpy(&word, h + wait[j], 8);
            TU_CHECK(bad == SIG_BLOCK && word >= (uint64_t)k + 1, "signal round %d: rank %d's "
                     "block to rank %d wrong at byte %zu, its word %llu", k, to[j], rank, bad,
                     (unsigned long long)word);
        }
    }
    int32_t pairs = n;
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_SUM, &pairs, 1));
    if (rank == 0 && cuda)
        printf("cuda: %d ranks signalled each other directly in %d pairs (both ways)\n", size,
               (int)pairs);
    /* refusals */
    int other = (rank + 1) % size;
    size_t w0 = words;
    kedr_status st = n ? KEDR_OK : kedr_comm_dev_signal(d, 1, &other, &w0, 0, NULL, 1);
    TU_CHECK(n || (st != KEDR_OK && strstr(kedr_last_error(), "kedr_comm_dev_signal")),
             "a signal to rank %d, not mapped here: refused (%s)", other, kedr_last_error());
    int many[9] = {0};
    size_t ats[9] = {0};
    st = kedr_comm_dev_signal(d, 9, many, ats, 0, NULL, 1);
    TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "expected 0 to 8"),
             "9 signals refused: %s", kedr_last_error());
    if (cuda) {
        size_t odd = 3, past = bytes - 4;
        st = kedr_comm_dev_signal(d, 0, NULL, NULL, 1, &odd, 1);
        TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "multiple of 8"),
                 "a word at byte 3 refused: %s", kedr_last_error());
        st = kedr_comm_dev_signal(d, 0, NULL, NULL, 1, &past, 1);
        TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "inside the buffer"),
                 "a word past the end refused: %s", kedr_last_error());
    }
    TU_OK(kedr_ctx_sync(ctx));
    kedr_comm_dev_release(d);
    kedr_free(ctx, dev);
    free(h);
    free(blk);
}

static void run_backend(kedr_backend be)
{
    kedr_ctx *ctx = NULL;
    int dev = be == KEDR_BACKEND_CUDA ? kedr_comm_device(comm, kedr_device_count()) : 0;
    if (kedr_ctx_create(&ctx, be, dev) != KEDR_OK) {
        TU_CHECK(0, "a %s context: %s", kedr_backend_name(be), kedr_last_error());
        return;
    }
    int32_t *device = calloc((size_t)size, sizeof *device);
    device[rank] = dev;
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_SUM, device, (size_t)size));
    const char *was = getenv("KEDR_COMM_IPC");
    char saved[16] = "";
    if (was)
        snprintf(saved, sizeof saved, "%s", was);
    unsetenv("KEDR_COMM_IPC");
    check_rounds(ctx, "", device);
    check_signals(ctx);
    setenv("KEDR_COMM_IPC", "0", 1);
    check_rounds(ctx, "0", device);
    setenv("KEDR_COMM_IPC", "yes", 1);
    void *b = NULL;
    kedr_comm_dev *d = NULL;
    TU_OK(kedr_alloc(ctx, &b, 64));
    kedr_status st = kedr_comm_dev_register(comm, ctx, b, 64, &d);
    TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "KEDR_COMM_IPC=yes") && !d,
             "KEDR_COMM_IPC=yes refused, naming it: %s", kedr_last_error());
    kedr_comm_dev_release(d);
    kedr_free(ctx, b);
    if (was)
        setenv("KEDR_COMM_IPC", saved, 1);
    else
        unsetenv("KEDR_COMM_IPC");
    free(device);
    kedr_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (kedr_comm_init(&argc, &argv, &comm) != KEDR_OK) {
        fprintf(stderr, "kedr_comm_init: %s\n", kedr_last_error());
        return 1;
    }
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    if (size > 8) {
        if (rank == 0)
            fprintf(stderr, "test_comm_dev: at most 8 ranks\n");
        kedr_comm_finalize(comm);
        return 1;
    }
    TU_CHECK(kedr_comm_same_host(comm, rank) && !kedr_comm_same_host(comm, size) &&
                 !kedr_comm_same_host(comm, -1),
             "same host: itself yes, ranks out of range no");
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++)
        run_backend(list[i]);
    uint64_t counts[2] = {(uint64_t)tu_passed, (uint64_t)tu_failed};
    kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, counts, 2);
    if (rank == 0)
        printf("test_comm_dev (%d ranks): %llu passed, %llu failed\n", size,
               (unsigned long long)counts[0], (unsigned long long)counts[1]);
    kedr_comm_finalize(comm);
    return counts[1] ? 1 : 0;
}
