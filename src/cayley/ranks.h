/* The dense search over MPI ranks (ranks.c; cuda side in ranks.cu).
 *
 * Rank r of N owns the elements [lo, hi) (kedr_cayley_rank_slice) as 2-bit codes, 16 to a
 * 32-bit word (element lo + 16 w + j is field j of word w), the same layout on the cpu and the
 * GPU:
 *     0  not reached          1  found at an even level     2  found at an odd level
 *     3  found and expanded
 * so the frontier of level s is the code c(s) = 1 + s % 2. The slice is cut into blocks of
 * block_elems elements (a power of two times KEDR_CAYLEY_RANK_BLOCK, at most RANKS_MAX_BLOCKS
 * blocks); a round of a level expands whole blocks, as many as keep the worst case (every
 * product of every frontier element for one destination) within a destination's batch. There
 * are two sets of batches (slots): while one round's products are sent and marked, the next
 * round expands into the other slot.
 *
 * The batches live in the context's memory (the GPU's on cuda), in one buffer registered with
 * kedr_comm_dev: [slot 0 | slot 1 | receive area], each part nranks - 1 regions of cap entries
 * (cayley_ranks_region). A round sends batch region(o, me) of a slot to rank o's receive area,
 * region(me, o) there: GPU to GPU by CUDA IPC between the ranks of a host, through host memory
 * otherwise (another host, the cpu, KEDR_COMM_IPC=0). */
#ifndef CAYLEY_RANKS_H
#define CAYLEY_RANKS_H

#include "kedr/cayley.h"
#include "kedr/comm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RANKS_MAX_BLOCKS ((uint64_t)1 << 20)

typedef struct cayley_ranks cayley_ranks;

/* What a back end (cpu, cuda) does; the rounds, messages and checkpoints are ranks.c's. */
typedef struct {
    /* Allocates the codes (zero; the identity's code 1 on the rank owning it) and the host
     * counts nout (the batches, out and recv, are ranks.c's). */
    kedr_status (*begin)(cayley_ranks *R);
    /* counts[b] = the elements of block b with code fc. */
    kedr_status (*count)(cayley_ranks *R, uint32_t fc, uint64_t *counts);
    /* Starts expanding the elements of code fc in blocks [b0, b1) into slot: each becomes 3; a
     * product in this slice whose code is 0 gets nc, any other is appended as its offset in the
     * owner's slice to entry region(owner) * cap + nout[slot][owner]++ of out[slot] (counted
     * from 0).
     * May return before the work is done (cuda). */
    kedr_status (*start)(cayley_ranks *R, int slot, uint64_t b0, uint64_t b1, uint32_t fc,
                         uint32_t nc);
    /* Waits for slot's expansion: its batches are then written in out[slot], their counts in
     * nout[slot] on the host, and *found is the number of codes it set to nc. */
    kedr_status (*finish)(cayley_ranks *R, int slot, uint64_t *found);
    /* Marks the n entries at `entries` (offsets in this slice, in the context's memory: a
     * region of recv) whose code is 0 with nc; *found
     * counts them, and *outside the entries at or past the slice's size, which are not marked
     * (another rank's error: ranks.c refuses the round). slot is a finished slot, whose
     * buffers it may use (the other may be expanding meanwhile). */
    kedr_status (*mark)(cayley_ranks *R, int slot, const unsigned char *entries, size_t n,
                        uint32_t nc, uint64_t *found, uint64_t *outside);
    /* At a level's end, and on the way out of a failed one: waits for the marks queued since
     * the last call and adds the codes they set to nc to *found and the entries they found
     * outside the slice to *outside (cuda, whose mark only queues its kernel; the cpu's mark
     * counts at once and adds nothing here). */
    kedr_status (*settle)(cayley_ranks *R, uint64_t *found, uint64_t *outside);
    /* Words [w, w + n) of the codes to or from host memory (checkpoints). */
    kedr_status (*download)(cayley_ranks *R, size_t w, uint32_t *buf, size_t n);
    kedr_status (*upload)(cayley_ranks *R, size_t w, const uint32_t *buf, size_t n);
    void (*end)(cayley_ranks *R);
} cayley_ranks_backend;

struct cayley_ranks {
    kedr_ctx *ctx;
    kedr_comm *comm;
    const kedr_cayley_group *g;
    int rank, nranks;
    uint64_t lo, hi;          /* this rank's slice */
    uint64_t units;           /* KEDR_CAYLEY_RANK_BLOCK blocks of the whole group */
    uint64_t block_elems;     /* elements of a round's block */
    uint64_t nblocks;         /* blocks of this slice */
    size_t words;             /* 32-bit words of codes: nblocks * block_elems / 16 */
    uint64_t cap;             /* entries of one destination's batch */
    int entry;                /* bytes of an entry: a product's offset in its owner's slice */
    uint64_t *los;            /* host: the first element of every slice, and the order */
    uint32_t *codes;          /* cpu: host memory; cuda: GPU memory */
    unsigned char *xbuf;      /* the context's memory (kedr_alloc), registered with
                               * kedr_comm_dev: out[0], out[1], recv */
    size_t part;              /* bytes of each of its three parts: nranks - 1 batches */
    kedr_comm_dev *xdev;      /* its registration */
    int direct;               /* other ranks reached GPU to GPU (kedr_comm_dev_direct) */
    int ordered;              /* the registration is KEDR_COMM_DEV_ORDERED (ranks.c) */
    unsigned char *out[2];    /* a slot each, in xbuf: nranks - 1 batches of cap entries of
                               * `entry` bytes, one for every other rank in rank order
                               * (cayley_ranks_region) */
    uint64_t *nout[2];        /* host, a slot each: entries in each batch, and [nranks] */
    unsigned char *recv;      /* in xbuf: what a round receives, region(o) from rank o */
    uint64_t *incoming;       /* host: entries each rank sends this one in a round */
    void *notes;              /* host: a round's notes (ranks.c), to [o] and from [N + o] */
    kedr_comm_halo *halos;    /* host: their messages, 2 N */
    kedr_comm_dev_msg *msgs;  /* host: a round's batches sent and received, 2 N */
    uint64_t *counts;         /* host: frontier elements of each block */
    uint8_t *leave;           /* host: generators whose products may leave the slice from
                               * each block (ranks.c, find_leavers) */
    void *dev;                /* the cuda back end's state */
    const cayley_ranks_backend *be;
    size_t memory_bytes;      /* this rank's, as kedr_cayley_ranks_plan counts it */
    double exchange_seconds;  /* spent in messages (all levels) */
    uint64_t rounds;          /* rounds of all levels */
    uint64_t sent;            /* products sent to other ranks (all levels) */
    uint64_t fail_round;      /* tests (KEDR_CAYLEY_RANKS_FAIL): fail in this round; 0 never */
    char ck_path[1200], resume_path[1200];
};

/* The owner of global element x: floor(((x / B + 1) N - 1) / U), in 64 bits (U < 2^53,
 * N <= 1024). */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline int cayley_ranks_owner(uint64_t x, uint64_t units, int nranks)
{
    return (int)(((x / KEDR_CAYLEY_RANK_BLOCK + 1) * (uint64_t)nranks - 1) / units);
}

/* The batch of destination rank o (not `me`, whose products are marked at once) among the
 * nranks - 1 batches of a slot. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint64_t cayley_ranks_region(int o, int me)
{
    return (uint64_t)(o > me ? o - 1 : o);
}

/* An entry: the low `bytes` bytes of v, little-endian (5 or 8). */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline void cayley_ranks_put(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint64_t cayley_ranks_get(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

#ifdef KEDR_HAVE_CUDA
extern const cayley_ranks_backend cayley_ranks_cuda;
#endif

#ifdef __cplusplus
}
#endif
#endif
