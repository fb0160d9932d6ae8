/* The MPI layer on any number of ranks (ctest runs it on 1 to 4 under mpirun, and alone):
 * reductions of every type at awkward lengths, broadcasts from every root, gathers of uneven
 * blocks, neighbour messages in random patterns (empty ones, to itself, to nobody), and errors
 * that every rank learns. Every rank checks what it can predict; the counts are summed on all. */
#include "kedr/comm.h"

#include "test_util.h"

#include <stdint.h>

static kedr_comm *comm;
static int rank, size;

/* What rank src sends rank dst in round k: a size (or -1 for no message) and its bytes. */
static long msg_size(int src, int dst, int k)
{
    uint32_t h = (uint32_t)(src * 7919 + dst * 104729 + k * 1299709) * 2654435761u;
    h ^= h >> 15;
    if (h % 3 == 0)
        return -1;
    return h % 5 == 0 ? 0 : (long)(h % 4099);
}
static unsigned char msg_byte(int src, int dst, int k, long i)
{
    return (unsigned char)(src * 31 + dst * 17 + k * 5 + i * 13);
}

static void check_allreduce(void)
{
    static const size_t lens[] = {0, 1, 2, 33, 1000};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        size_t n = lens[li];
        double *d = malloc((n ? n : 1) * sizeof *d);
        int64_t *ok = calloc(3, sizeof *ok);
        for (int op = KEDR_OP_SUM; op <= KEDR_OP_MAX; op++) {
            for (size_t i = 0; i < n; i++)
                d[i] = rank + (double)i;
            TU_OK(kedr_comm_allreduce(comm, KEDR_F64, (kedr_op)op, d, n));
            double sum_r = size * (size - 1) / 2.0;
            int good = 1;
            for (size_t i = 0; i < n; i++) {
                double want = op == KEDR_OP_SUM ? sum_r + size * (double)i
                              : op == KEDR_OP_MIN ? (double)i
                                                  : size - 1 + (double)i;
                good &= d[i] == want;
            }
            TU_CHECK(good, "f64 allreduce op %d, n = %zu", op, n);
        }
        /* every integer type and f32 with a sum that is exact */
        uint32_t u32[3] = {(uint32_t)rank, 1, 0xffffu};
        uint64_t u64[3] = {(uint64_t)rank << 33, 1, 5};
        int32_t i32[3] = {-rank, 1, 2};
        float f32[3] = {(float)rank, 0.5f, 2};
        TU_OK(kedr_comm_allreduce(comm, KEDR_U32, KEDR_OP_MAX, u32, 3));
        TU_OK(kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, u64, 3));
        TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MIN, i32, 3));
        TU_OK(kedr_comm_allreduce(comm, KEDR_F32, KEDR_OP_SUM, f32, 3));
        TU_CHECK(u32[0] == (uint32_t)(size - 1) && u32[2] == 0xffffu, "u32 max");
        TU_CHECK(u64[0] == ((uint64_t)size * (size - 1) / 2) << 33 && u64[1] == (uint64_t)size,
                 "u64 sum");
        TU_CHECK(i32[0] == -(size - 1) && i32[1] == 1, "i32 min");
        TU_CHECK(f32[0] == size * (size - 1) / 2.0f && f32[1] == 0.5f * size, "f32 sum");
        free(d);
        free(ok);
    }
    double x = 1;
    kedr_status s = kedr_comm_allreduce(comm, (kedr_dtype)99, KEDR_OP_SUM, &x, 1);
    TU_CHECK(s == KEDR_ERR_UNSUPPORTED, "an unknown type is refused");
}

static void check_bcast_gather(void)
{
    for (int root = 0; root < size; root++) {
        char text[64];
        snprintf(text, sizeof text, rank == root ? "from root %d" : "garbage", root);
        TU_OK(kedr_comm_bcast(comm, text, sizeof text, root));
        char want[64];
        snprintf(want, sizeof want, "from root %d", root);
        TU_CHECK(strcmp(text, want) == 0, "bcast from %d gave '%s' on rank %d", root, text, rank);

        /* rank r sends 7 r + 1 bytes of value r + root */
        size_t mine = 7 * (size_t)rank + 1;
        unsigned char *send = malloc(mine);
        memset(send, rank + root, mine);
        size_t *counts = rank == root ? calloc((size_t)size, sizeof *counts) : NULL;
        unsigned char *recv = NULL;
        TU_OK(kedr_comm_gatherv(comm, send, mine, root, counts, (void **)&recv));
        if (rank == root) {
            int good = recv != NULL;
            size_t at = 0;
            for (int r = 0; r < size && good; r++) {
                good &= counts[r] == 7 * (size_t)r + 1;
                for (size_t i = 0; i < counts[r] && good; i++)
                    good &= recv[at + i] == (unsigned char)(r + root);
                at += counts[r];
            }
            TU_CHECK(good, "gatherv to root %d", root);
        }
        free(recv);
        free(counts);
        free(send);
    }
    TU_CHECK(kedr_comm_bcast(comm, &rank, sizeof rank, size) == KEDR_ERR_INVALID,
             "a root past the last rank is refused");
}

static void check_exchange(void)
{
    for (int k = 0; k < 20; k++) {
        kedr_comm_msg *send = calloc((size_t)size, sizeof *send);
        unsigned char **bufs = calloc((size_t)size, sizeof *bufs);
        int nsend = 0;
        for (int dst = 0; dst < size; dst++) {
            long n = msg_size(rank, dst, k);
            if (n < 0)
                continue;
            bufs[dst] = malloc(n ? (size_t)n : 1);
            for (long i = 0; i < n; i++)
                bufs[dst][i] = msg_byte(rank, dst, k, i);
            send[nsend++] = (kedr_comm_msg){dst, bufs[dst], (size_t)n};
        }
        int nrecv = -1;
        kedr_comm_msg *msgs = NULL;
        void *recv = NULL;
        if (k % 2 == 0) {
            TU_OK(kedr_comm_exchange(comm, nsend, send, &nrecv, &msgs, &recv));
        } else { /* the two halves, into the caller's buffer */
            size_t total = 0, sum = 0;
            TU_OK(kedr_comm_exchange_sizes(comm, nsend, send, &nrecv, &msgs, &total));
            for (int m = 0; m < nrecv; m++)
                sum += msgs[m].bytes;
            TU_CHECK(sum == total, "exchange round %d: sizes add up to %zu, total %zu", k, sum,
                     total);
            recv = malloc(total + 1);
            TU_OK(kedr_comm_exchange_data(comm, nsend, send, nrecv, msgs, recv));
        }
        int want = 0, good = msgs != NULL;
        for (int src = 0; src < size && good; src++) {
            long n = msg_size(src, rank, k);
            if (n < 0)
                continue;
            good &= want < nrecv && msgs[want].rank == src && msgs[want].bytes == (size_t)n;
            for (long i = 0; i < n && good; i++)
                good &= ((const unsigned char *)msgs[want].data)[i] == msg_byte(src, rank, k, i);
            want++;
        }
        TU_CHECK(good && nrecv == want, "exchange round %d on rank %d: %d messages, %d expected",
                 k, rank, nrecv, want);
        free(msgs);
        free(recv);
        for (int dst = 0; dst < size; dst++)
            free(bufs[dst]);
        free(bufs);
        free(send);
    }
    /* Two messages to one rank, and a rank that does not exist, are refused on every rank. */
    int x = 0, nrecv;
    kedr_comm_msg *msgs;
    void *recv;
    kedr_comm_msg twice[2] = {{0, &x, sizeof x}, {0, &x, sizeof x}};
    TU_CHECK(kedr_comm_exchange(comm, 2, twice, &nrecv, &msgs, &recv) == KEDR_ERR_INVALID,
             "two messages to one rank are refused");
    kedr_comm_msg beyond = {size, &x, sizeof x};
    TU_CHECK(kedr_comm_exchange(comm, 1, &beyond, &nrecv, &msgs, &recv) == KEDR_ERR_INVALID,
             "a message to rank %d of %d is refused", size, size);
}

/* A periodic ring halo: each rank sends two messages of different sizes to its left and two to
 * its right neighbour (on two ranks both are the same rank, on one rank itself), each direction
 * and message with its own tag. */
static void check_sendrecv(void)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    enum { NA = 37, NB = 1001 };
    static double out[4][NB], in[4][NB];
    size_t len[4] = {NA, NB, NA, NB};
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < NB; i++) {
            out[k][i] = rank * 1e6 + k * 1e4 + i;
            in[k][i] = -1;
        }
    /* Sends 0, 1 go left with tags 0, 1; sends 2, 3 go right with tags 2, 3. Receive k comes
     * from the right with tag k (the right rank's sends 0, 1) for k < 2, else from the left. */
    kedr_comm_halo snd[4], rcv[4];
    for (int k = 0; k < 4; k++) {
        snd[k] = (kedr_comm_halo){k < 2 ? left : right, k, out[k], len[k] * sizeof(double)};
        rcv[k] = (kedr_comm_halo){k < 2 ? right : left, k, in[k], len[k] * sizeof(double)};
    }
    TU_OK(kedr_comm_sendrecv(comm, 4, snd, 4, rcv));
    int good = 1;
    for (int k = 0; k < 4; k++) {
        int from = k < 2 ? right : left;
        for (size_t i = 0; i < len[k]; i++)
            good &= in[k][i] == from * 1e6 + k * 1e4 + (double)i;
        for (size_t i = len[k]; i < NB; i++)
            good &= in[k][i] == -1;
    }
    TU_CHECK(good, "ring halo on rank %d of %d", rank, size);
    kedr_comm_halo bad = {size, 0, out[0], 8};
    TU_CHECK(kedr_comm_sendrecv(comm, 1, &bad, 0, NULL) == KEDR_ERR_INVALID, "a rank beyond the job");
    kedr_comm_halo badtag = {0, KEDR_COMM_MAX_TAG, out[0], 8};
    TU_CHECK(kedr_comm_sendrecv(comm, 0, NULL, 1, &badtag) == KEDR_ERR_INVALID, "a tag too large");
}

static void check_agree(void)
{
    TU_CHECK(kedr_comm_agree(comm, KEDR_OK) == KEDR_OK, "all well agrees on ok");
    /* The last rank runs out of memory: every rank learns it, with its message. */
    kedr_status local = KEDR_OK;
    if (rank == size - 1)
        local = kedr_fail(KEDR_ERR_NOMEM, "only 12 particles fit");
    kedr_status s = kedr_comm_agree(comm, local);
    TU_CHECK(s == KEDR_ERR_NOMEM && strstr(kedr_last_error(), "only 12 particles fit"),
             "rank %d learns the failure: %s (%s)", rank, kedr_status_name(s), kedr_last_error());
    if (kedr_comm_is_parallel(comm)) {
        char want[32];
        snprintf(want, sizeof want, "rank %d: ", size - 1);
        TU_CHECK(strstr(kedr_last_error(), want) != NULL, "the message names the rank: %s",
                 kedr_last_error());
    }
}

int main(int argc, char **argv)
{
    kedr_status s = kedr_comm_init(&argc, &argv, &comm);
    if (s != KEDR_OK) {
        fprintf(stderr, "kedr_comm_init: %s\n", kedr_last_error());
        return 1;
    }
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    TU_CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d of %d", rank, size);
    TU_CHECK(kedr_comm_local_rank(comm) < kedr_comm_local_size(comm), "local rank");
    TU_CHECK(kedr_comm_device(comm, 4) == kedr_comm_local_rank(comm) % 4, "device of a rank");
    TU_CHECK(kedr_comm_device(comm, 0) == 0, "no device");
    const char *env = getenv("KEDR_TEST_RANKS");
    if (env)
        TU_CHECK(size == atoi(env), "%d ranks, %s expected", size, env);
    check_allreduce();
    check_bcast_gather();
    check_exchange();
    check_sendrecv();
    check_agree();
    /* Every rank's count, so that rank 0's line covers all. */
    uint64_t counts[2] = {(uint64_t)tu_passed, (uint64_t)tu_failed};
    kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, counts, 2);
    int rc = counts[1] ? 1 : 0;
    if (rank == 0)
        printf("test_comm (%d ranks): %llu passed, %llu failed\n", size,
               (unsigned long long)counts[0], (unsigned long long)counts[1]);
    kedr_comm_finalize(comm);
    return rc;
}
