/* The ordered registrations of kedr_comm_dev (KEDR_COMM_DEV_ORDERED: flow's halos, gathers and
 * bodies' sums), alone and under mpirun on 1 to 4 ranks, on every back end: a ring of ranks
 * passes tokens both ways for ROUNDS exchanges in a row, and the host never waits in between.
 * After each exchange a copy on the context's stream moves what arrived from below into the
 * area sent above next time (and what came from above into the area sent below), and logs it;
 * so every exchange reads what the last one wrote, on both sides. If a receiver read an area
 * before the partner's copy had landed, or a sender overwrote a partner's area before the
 * partner had moved its last bytes out, a token would be lost or doubled: the logs (downloaded
 * once at the end) must hold, in round k, the tokens of ranks r - k - 1 and r + k + 1 (mod the
 * ranks). Messages of awkward sizes (an odd byte count), one rank (messages to itself) and two
 * ranks (the same partner both ways, told apart by tags) included. Run three ways: ordered
 * (on cuda GPU to GPU with CUDA IPC events between the ranks of a host), KEDR_COMM_IPC_EVENTS=0
 * (every exchange synchronised through MPI) and KEDR_COMM_IPC=0 (through the host); each must
 * give the same logs. Then the refusals: unknown flags, flags that differ between ranks, a bad
 * KEDR_COMM_IPC_EVENTS. */
#include "kedr/comm.h"

#include "test_util.h"

#include <stdint.h>

static kedr_comm *comm;
static int rank, size;

enum { ROUNDS = 40, TOKEN = 1001 }; /* bytes a message */

/* Areas of the buffer: send lo, send hi, recv lo, recv hi, then the log of ROUNDS x 2 areas. */
#define AREA(i) ((size_t)(i) * TOKEN)
#define LOG(k, side) AREA(4 + 2 * (k) + (side))
#define BYTES LOG(ROUNDS, 0)

static unsigned char token_byte(int origin, int side, size_t i)
{
    return (unsigned char)(origin * 37 + side * 101 + i * 7 + 3);
}

/* ROUNDS exchanges on a registration of flags; returns the number of wrong log bytes. */
static long ring(kedr_ctx *ctx, unsigned flags, int expect_ordered, const char *how)
{
    unsigned char *h = malloc(BYTES), *dev = NULL;
    TU_OK(kedr_alloc(ctx, (void **)&dev, BYTES));
    kedr_comm_dev *d = NULL;
    TU_OK(kedr_comm_dev_register_flags(comm, ctx, dev, BYTES, flags, &d));
    if (!h || !dev || !d) {
        free(h);
        kedr_free(ctx, dev);
        return -1;
    }
    TU_CHECK(kedr_comm_dev_ordered(d) == expect_ordered, "%s: ordered %d, expected %d", how,
             kedr_comm_dev_ordered(d), expect_ordered);
    memset(h, 0xEE, BYTES);
    for (size_t i = 0; i < TOKEN; i++) {
        h[AREA(0) + i] = token_byte(rank, 0, i);
        h[AREA(1) + i] = token_byte(rank, 1, i);
    }
    TU_OK(kedr_upload(ctx, dev, h, BYTES));
    int lo = (rank + size - 1) % size, hi = (rank + 1) % size;
    for (int k = 0; k < ROUNDS; k++) {
        /* send lo to the rank below, into its recv hi (tag 1); send hi to the rank above, into
         * its recv lo (tag 0) */
        kedr_comm_dev_msg snd[2] = {{lo, 1, AREA(0), AREA(3), TOKEN},
                                    {hi, 0, AREA(1), AREA(2), TOKEN}};
        kedr_comm_dev_msg rcv[2] = {{hi, 1, 0, AREA(3), TOKEN}, {lo, 0, 0, AREA(2), TOKEN}};
        TU_OK(kedr_comm_dev_sendrecv(d, 2, snd, 2, rcv));
        /* on the stream: log what arrived and pass it on */
        TU_OK(kedr_copy(ctx, dev + LOG(k, 0), dev + AREA(2), TOKEN));
        TU_OK(kedr_copy(ctx, dev + LOG(k, 1), dev + AREA(3), TOKEN));
        TU_OK(kedr_copy(ctx, dev + AREA(1), dev + AREA(2), TOKEN));
        TU_OK(kedr_copy(ctx, dev + AREA(0), dev + AREA(3), TOKEN));
    }
    TU_OK(kedr_download(ctx, h, dev, BYTES));
    long bad = 0;
    for (int k = 0; k < ROUNDS; k++) {
        int from_lo = ((rank - k - 1) % size + size) % size, from_hi = (rank + k + 1) % size;
        for (size_t i = 0; i < TOKEN; i++) {
            bad += h[LOG(k, 0) + i] != token_byte(from_lo, 1, i);
            bad += h[LOG(k, 1) + i] != token_byte(from_hi, 0, i);
        }
    }
    kedr_comm_dev_release(d);
    kedr_free(ctx, dev);
    free(h);
    int64_t all = bad;
    TU_OK(kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, &all, 1));
    if (rank == 0)
        printf("%s, %s, %d ranks, %d exchanges: %lld wrong bytes (%s)\n",
               kedr_backend_name(kedr_ctx_backend(ctx)), how, size, ROUNDS, (long long)all,
               expect_ordered ? "ordered on the streams" : "synchronised");
    TU_CHECK(bad == 0, "%s: rank %d: %ld wrong bytes in the logs", how, rank, bad);
    return bad;
}

static void keep_env(const char *name, char *saved, size_t n, int *had)
{
    const char *v = getenv(name);
    *had = v != NULL;
    if (v)
        snprintf(saved, n, "%s", v);
}

static void restore_env(const char *name, const char *saved, int had)
{
    if (had)
        setenv(name, saved, 1);
    else
        unsetenv(name);
}

static void refusals(kedr_ctx *ctx)
{
    void *b = NULL;
    kedr_comm_dev *d = NULL;
    TU_OK(kedr_alloc(ctx, &b, 64));
    kedr_status s = kedr_comm_dev_register_flags(comm, ctx, b, 64, 6, &d);
    TU_CHECK(s == KEDR_ERR_INVALID && !d && strstr(kedr_last_error(), "flags"),
             "unknown flags: %s", s == KEDR_OK ? "accepted" : kedr_last_error());
    kedr_comm_dev_release(d);
    d = NULL;
    if (size > 1) { /* rank 0 asks for ordering, the others do not: every rank is refused */
        s = kedr_comm_dev_register_flags(comm, ctx, b, 64, rank == 0 ? KEDR_COMM_DEV_ORDERED : 0,
                                         &d);
        TU_CHECK(s == KEDR_ERR_INVALID && !d && strstr(kedr_last_error(), "same flags"),
                 "flags that differ between ranks: %s",
                 s == KEDR_OK ? "accepted" : kedr_last_error());
        kedr_comm_dev_release(d);
        d = NULL;
    }
    setenv("KEDR_COMM_IPC_EVENTS", "sometimes", 1);
    s = kedr_comm_dev_register_flags(comm, ctx, b, 64, KEDR_COMM_DEV_ORDERED, &d);
    TU_CHECK(s == KEDR_ERR_INVALID && !d &&
             strstr(kedr_last_error(), "KEDR_COMM_IPC_EVENTS=sometimes"),
             "a bad KEDR_COMM_IPC_EVENTS: %s", s == KEDR_OK ? "accepted" : kedr_last_error());
    kedr_comm_dev_release(d);
    kedr_free(ctx, b);
}

int main(int argc, char **argv)
{
    if (kedr_comm_init(&argc, &argv, &comm) != KEDR_OK) {
        fprintf(stderr, "kedr_comm_init: %s\n", kedr_last_error());
        return 1;
    }
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    char ipc[16] = "", ev[16] = "";
    int had_ipc, had_ev;
    keep_env("KEDR_COMM_IPC", ipc, sizeof ipc, &had_ipc);
    keep_env("KEDR_COMM_IPC_EVENTS", ev, sizeof ev, &had_ev);
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++) {
        kedr_ctx *ctx = tu_ctx(list[i]);
        int cuda = list[i] == KEDR_BACKEND_CUDA;
        unsetenv("KEDR_COMM_IPC");
        unsetenv("KEDR_COMM_IPC_EVENTS");
        ring(ctx, KEDR_COMM_DEV_ORDERED, cuda, "ordered");
        ring(ctx, 0, 0, "not asked");
        setenv("KEDR_COMM_IPC_EVENTS", "0", 1);
        ring(ctx, KEDR_COMM_DEV_ORDERED, 0, "KEDR_COMM_IPC_EVENTS=0");
        unsetenv("KEDR_COMM_IPC_EVENTS");
        setenv("KEDR_COMM_IPC", "0", 1);
        ring(ctx, KEDR_COMM_DEV_ORDERED, cuda, "ordered, KEDR_COMM_IPC=0");
        unsetenv("KEDR_COMM_IPC");
        refusals(ctx);
        restore_env("KEDR_COMM_IPC", ipc, had_ipc);
        restore_env("KEDR_COMM_IPC_EVENTS", ev, had_ev);
        kedr_ctx_destroy(ctx);
    }
    uint64_t counts[2] = {(uint64_t)tu_passed, (uint64_t)tu_failed};
    kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, counts, 2);
    if (rank == 0)
        printf("test_flow_comm_ordered (%d ranks): %llu passed, %llu failed\n", size,
               (unsigned long long)counts[0], (unsigned long long)counts[1]);
    kedr_comm_finalize(comm);
    return counts[1] ? 1 : 0;
}
