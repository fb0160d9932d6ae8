/* The dense search over MPI ranks, cuda back end (ranks.c holds the rounds and the messages;
 * ranks.h the codes). The slice's codes and the outgoing batches live on the rank's GPU:
 *  - count: one block of threads per block of the slice sums its frontier codes;
 *  - expand: a block per tile of 256 words of the round's blocks: each thread turns the frontier
 *    codes of its word into 3 and queues them in shared memory, then the block expands the
 *    queue, marks the products in the slice (atomicOr; the old code says who was first) and
 *    appends the others to their owner's batch: the threads of a warp with products for the
 *    same owner reserve their places by one atomicAdd on that owner's count (a labeled
 *    partition of the warp's active threads), as KEDR_CAYLEY_RANKS_AGG=0 did by one a product
 *    (on 3 counters or fewer: the atomics of one address serialise); it is
 *    launched on a stream of its own and left running (start), and then (finish) the batches'
 *    counts are copied to the host;
 *  - mark: what the other ranks sent, in the receive area of the batches' buffer on this GPU,
 *    marked the same way, on the context's stream, queued without a synchronisation: their new
 *    elements (and any entry outside the slice) are summed on the GPU and read once a level
 *    (settle).
 * The exchange (kedr_comm_dev synchronises the context's stream, not the expansion's) and the
 * marks thus run while the next round expands into the other slot: both only set codes by
 * atomic ors (0 to nc, fc to 3), and each counts its new elements in its own slot's counters.
 * The host orders the rest: finish waits for the expansion's stream; kedr_comm_dev synchronises
 * the context's stream before a round's batches are sent (so a round's marks are done before
 * the next round's batches land in the receive area) and after they have landed; settle and a
 * level's count (on the context's stream) comes after every expansion of the level before has
 * finished.
 * The batches (ranks.c's buffer, registered with kedr_comm_dev) stay on the GPU: ranks of one
 * host copy them GPU to GPU by CUDA IPC; for the others kedr_comm_dev stages them through its
 * page-locked copy (Debian's Open MPI is not CUDA-aware). */
#include "cayley_elem.h"
#include "ranks.h"
#include "core/internal.h"

#include <cooperative_groups.h>
#include <stdlib.h>
#include <string.h>

namespace cg = cooperative_groups;

#define RK_THREADS 256

typedef struct {
    uint32_t *codes;             /* the slice's codes */
    unsigned long long *nout[2]; /* a slot each: entries of each batch; then [nranks], the new
                                  * elements' count */
    unsigned long long *los;     /* the first element of every slice */
    unsigned long long *counts;  /* frontier elements of each block */
    unsigned long long *marked;  /* the marks' new elements and entries outside the slice since
                                  * the last rk_settle */
    cudaStream_t expand;         /* the expansion's stream */
    cudaEvent_t queued;          /* ordered registrations: the context's stream up to a start */
    int blocks;                  /* of the expand kernel */
    int agg;                     /* appends reserved a warp's group at a time (KEDR_CAYLEY_RANKS_AGG) */
} rk_dev;

__device__ __forceinline__ uint32_t rk_fields(uint32_t w, uint32_t c)
{
    uint32_t y = w ^ (c == 1 ? 0x55555555u : 0xAAAAAAAAu);
    return ~(y | (y >> 1)) & 0x55555555u;
}

__device__ __forceinline__ int rk_mark(uint32_t *codes, unsigned long long off, uint32_t nc)
{
    uint32_t *p = &codes[off >> 4];
    unsigned int shift = (unsigned int)(off & 15) * 2;
    if ((*(volatile uint32_t *)p >> shift) & 3u)
        return 0; /* a nonzero code stays nonzero during a level */
    uint32_t old = atomicOr(p, nc << shift);
    return ((old >> shift) & 3u) == 0;
}

__device__ __forceinline__ void rk_add_count(unsigned long long c, unsigned long long *to)
{
    for (int off = 16; off > 0; off >>= 1)
        c += __shfl_down_sync(0xffffffffu, c, off);
    if ((threadIdx.x & 31) == 0 && c)
        atomicAdd(to, c);
}

__global__ void __launch_bounds__(RK_THREADS)
rk_count_kernel(const uint32_t *__restrict__ codes, unsigned long long block_words,
                unsigned long long nblocks, uint32_t fc, unsigned long long *counts)
{
    __shared__ unsigned long long sum;
    for (unsigned long long b = blockIdx.x; b < nblocks; b += gridDim.x) {
        if (threadIdx.x == 0)
            sum = 0;
        __syncthreads();
        unsigned long long c = 0;
        for (unsigned long long w = threadIdx.x; w < block_words; w += RK_THREADS)
            c += (unsigned long long)__popc(rk_fields(codes[b * block_words + w], fc));
        rk_add_count(c, &sum);
        __syncthreads();
        if (threadIdx.x == 0)
            counts[b] = sum;
        __syncthreads();
    }
}

/* A block takes tiles of RK_THREADS words (16 * RK_THREADS elements) of the round's range in
 * turn; each thread turns the frontier codes of its word into 3 and queues their offsets in
 * shared memory, and then the block expands the queue, a thread an element, so that every
 * thread has work however the frontier is spread over the words (as dense.cu's sweep). */
template <int KIND>
__global__ void __launch_bounds__(RK_THREADS)
rk_expand_kernel(const __grid_constant__ kedr_cayley_group g, uint32_t *codes,
                 unsigned long long w0, unsigned long long w1, unsigned long long lo,
                 unsigned long long hi, unsigned long long units, int nranks, int me,
                 const unsigned long long *__restrict__ los, unsigned long long cap, int eb,
                 uint32_t fc, uint32_t nc, unsigned char *out, unsigned long long *nout, int agg)
{
    __shared__ uint16_t queue[RK_THREADS * 16]; /* element offsets inside the tile */
    __shared__ unsigned int queued;
    unsigned long long found = 0;
    unsigned long long tiles = (w1 - w0 + RK_THREADS - 1) / RK_THREADS;
    if (threadIdx.x == 0)
        queued = 0;
    __syncthreads();
    for (unsigned long long t = blockIdx.x; t < tiles; t += gridDim.x) { /* the same for the block */
        unsigned long long w = w0 + t * RK_THREADS + threadIdx.x;
        uint32_t m = w < w1 ? rk_fields(*(volatile uint32_t *)&codes[w], fc) : 0u;
        if (!__syncthreads_or(m != 0u))
            continue; /* no frontier in the tile: one load and one barrier */
        if (m) {
            atomicOr(&codes[w], m | (m << 1)); /* expanded: 3 */
            unsigned int pos = atomicAdd(&queued, (unsigned int)__popc(m));
            do {
                queue[pos++] = (uint16_t)(threadIdx.x * 16 + (unsigned int)(__ffs((int)m) - 1) / 2);
                m &= m - 1;
            } while (m);
        }
        __syncthreads();
        unsigned int n = queued;
        unsigned long long first = lo + 16 * (w0 + t * RK_THREADS); /* the tile's first element */
        for (unsigned int i = threadIdx.x; i < n; i += RK_THREADS) {
            cayley_elem e = cayley_load_as(&g, first + queue[i], (kedr_cayley_kind)KIND);
            for (int k = 0; k < g.ngens; k++) {
                unsigned long long r = cayley_neighbour_as(&g, &e, k, (kedr_cayley_kind)KIND);
                if (r >= lo && r < hi) {
                    found += (unsigned long long)rk_mark(codes, r - lo, nc);
                } else {
                    int o = cayley_ranks_owner(r, units, nranks);
                    unsigned long long at;
                    if (agg) { /* the same for the whole launch */
                        cg::coalesced_group same =
                            cg::labeled_partition(cg::coalesced_threads(), o);
                        unsigned long long base = 0;
                        if (same.thread_rank() == 0)
                            base = atomicAdd(&nout[o], (unsigned long long)same.size());
                        at = same.shfl(base, 0) + same.thread_rank();
                    } else {
                        at = atomicAdd(&nout[o], 1ull);
                    }
                    if (at < cap) /* always, by the choice of the round's blocks */
                        cayley_ranks_put(out + (cayley_ranks_region(o, me) * cap + at) * eb,
                                         r - los[o], eb);
                }
            }
        }
        __syncthreads(); /* every thread has read queued and the queue */
        if (threadIdx.x == 0)
            queued = 0;
        __syncthreads();
    }
    rk_add_count(found, &nout[nranks]);
}

__global__ void __launch_bounds__(RK_THREADS)
rk_mark_kernel(uint32_t *codes, const unsigned char *__restrict__ entries, size_t n, int eb,
               unsigned long long size, uint32_t nc, unsigned long long *found,
               unsigned long long *outside)
{
    unsigned long long f = 0, bad = 0;
    size_t stride = (size_t)gridDim.x * RK_THREADS;
    for (size_t i = (size_t)blockIdx.x * RK_THREADS + threadIdx.x; i < n; i += stride) {
        unsigned long long off = cayley_ranks_get(entries + i * eb, eb);
        if (off < size) /* else another rank's error, refused by ranks.c */
            f += (unsigned long long)rk_mark(codes, off, nc);
        else
            bad++;
    }
    rk_add_count(f, found);
    rk_add_count(bad, outside);
}

typedef void (*rk_expand_fn)(const kedr_cayley_group, uint32_t *, unsigned long long,
                             unsigned long long, unsigned long long, unsigned long long,
                             unsigned long long, int, int, const unsigned long long *,
                             unsigned long long, int, uint32_t, uint32_t, unsigned char *,
                             unsigned long long *, int);

static rk_expand_fn rk_expand_for(kedr_cayley_kind kind)
{
    switch (kind) {
    case KEDR_CAYLEY_PERMUTATION:
        return rk_expand_kernel<KEDR_CAYLEY_PERMUTATION>;
    case KEDR_CAYLEY_SIGNED_PERMUTATION:
        return rk_expand_kernel<KEDR_CAYLEY_SIGNED_PERMUTATION>;
    case KEDR_CAYLEY_ABELIAN:
        return rk_expand_kernel<KEDR_CAYLEY_ABELIAN>;
    case KEDR_CAYLEY_BURNSIDE:
        return rk_expand_kernel<KEDR_CAYLEY_BURNSIDE>;
    default:
        return NULL;
    }
}

static unsigned int rk_grid(kedr_ctx *ctx, unsigned long long work, int per_sm)
{
    unsigned long long most = (unsigned long long)(per_sm > 0 ? per_sm : 4) * ctx->multiprocessors,
                       need = (work + RK_THREADS - 1) / RK_THREADS;
    return (unsigned int)(need < most ? (need ? need : 1) : most);
}

static void rk_end(cayley_ranks *R)
{
    rk_dev *d = (rk_dev *)R->dev;
    if (d) {
        cudaStreamSynchronize(KEDR_STREAM(R->ctx));
        if (d->expand) {
            cudaStreamSynchronize(d->expand);
            cudaStreamDestroy(d->expand);
        }
        if (d->queued)
            cudaEventDestroy(d->queued);
        kedr_free(R->ctx, d->codes);
        for (int k = 0; k < 2; k++)
            kedr_free(R->ctx, d->nout[k]);
        kedr_free(R->ctx, d->counts);
        kedr_free(R->ctx, d->marked);
        kedr_free(R->ctx, d->los);
        free(d);
    }
    for (int k = 0; k < 2; k++) {
        cudaFreeHost(R->nout[k]);
        R->nout[k] = NULL;
    }
    R->dev = NULL;
}

static kedr_status rk_begin(cayley_ranks *R)
{
    rk_dev *d = (rk_dev *)calloc(1, sizeof *d);
    if (!d)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: rank %d: out of host memory", R->g->spec, R->rank);
    R->dev = d;
    rk_expand_fn fn = rk_expand_for(R->g->kind);
    if (!fn)
        return kedr_fail(KEDR_ERR_INVALID, "%s has no dense ranking", R->g->spec);
    KEDR_TRY(kedr_alloc(R->ctx, (void **)&d->codes, R->words ? R->words * 4 : 4));
    for (int k = 0; k < 2; k++) {
        KEDR_TRY(kedr_alloc(R->ctx, (void **)&d->nout[k], ((size_t)R->nranks + 1) * 8));
        KEDR_CUDA_TRY(cudaMallocHost((void **)&R->nout[k], ((size_t)R->nranks + 1) * 8));
    }
    KEDR_TRY(kedr_alloc(R->ctx, (void **)&d->los, ((size_t)R->nranks + 1) * 8));
    KEDR_TRY(kedr_upload(R->ctx, d->los, R->los, ((size_t)R->nranks + 1) * 8));
    KEDR_TRY(kedr_alloc(R->ctx, (void **)&d->counts, (size_t)(R->nblocks ? R->nblocks : 1) * 8));
    KEDR_TRY(kedr_alloc(R->ctx, (void **)&d->marked, 2 * sizeof *d->marked));
    KEDR_TRY(kedr_memset(R->ctx, d->marked, 0, 2 * sizeof *d->marked));
    KEDR_TRY(kedr_memset(R->ctx, d->codes, 0, R->words ? R->words * 4 : 4));
    KEDR_CUDA_TRY(cudaSetDevice(R->ctx->device));
    KEDR_CUDA_TRY(cudaStreamCreateWithFlags(&d->expand, cudaStreamNonBlocking));
    KEDR_CUDA_TRY(cudaEventCreateWithFlags(&d->queued, cudaEventDisableTiming));
    int per_sm = 0;
    KEDR_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, RK_THREADS, 0));
    d->blocks = per_sm;
    /* KEDR_CAYLEY_RANKS_AGG=0: an atomicAdd a product for another rank (the earlier path, for
     * comparison); anything but 0 or 1 is refused */
    const char *agg = getenv("KEDR_CAYLEY_RANKS_AGG");
    d->agg = 1;
    if (agg && *agg) {
        if (strcmp(agg, "0") != 0 && strcmp(agg, "1") != 0)
            return kedr_fail(KEDR_ERR_INVALID, "KEDR_CAYLEY_RANKS_AGG = '%s': expected 1 (a "
                             "warp's appends to one rank reserved at once; the default) or 0 "
                             "(one atomic a product)", agg);
        d->agg = agg[0] == '1';
    }
    if (R->lo == 0) {
        const uint32_t one = 1u; /* the identity: the frontier of level 0 */
        KEDR_TRY(kedr_upload(R->ctx, d->codes, &one, 4));
    }
    return KEDR_OK;
}

static kedr_status rk_count(cayley_ranks *R, uint32_t fc, uint64_t *counts)
{
    rk_dev *d = (rk_dev *)R->dev;
    if (!R->nblocks)
        return KEDR_OK;
    cudaStream_t stream = KEDR_STREAM(R->ctx);
    unsigned long long grid = R->nblocks < 65535 ? R->nblocks : 65535;
    rk_count_kernel<<<(unsigned int)grid, RK_THREADS, 0, stream>>>(
        d->codes, R->block_elems / 16, R->nblocks, fc, d->counts);
    KEDR_CUDA_LAUNCHED("rk_count_kernel");
    KEDR_CUDA_TRY(cudaMemcpyAsync(counts, d->counts, (size_t)R->nblocks * 8,
                                  cudaMemcpyDeviceToHost, stream));
    KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
    return KEDR_OK;
}

static kedr_status rk_start(cayley_ranks *R, int slot, uint64_t b0, uint64_t b1, uint32_t fc,
                            uint32_t nc)
{
    rk_dev *d = (rk_dev *)R->dev;
    cudaStream_t stream = d->expand;
    unsigned long long w0 = b0 * R->block_elems / 16, w1 = b1 * R->block_elems / 16;
    /* ordered transfers return before their copies out of this slot (two rounds ago) have run
     * on the context's stream: the expansion waits for everything queued there so far */
    if (R->ordered) {
        KEDR_CUDA_TRY(cudaEventRecord(d->queued, KEDR_STREAM(R->ctx)));
        KEDR_CUDA_TRY(cudaStreamWaitEvent(stream, d->queued, 0));
    }
    KEDR_CUDA_TRY(cudaMemsetAsync(d->nout[slot], 0, ((size_t)R->nranks + 1) * 8, stream));
    rk_expand_for(R->g->kind)<<<rk_grid(R->ctx, w1 - w0, d->blocks), RK_THREADS, 0, stream>>>(
        *R->g, d->codes, w0, w1, R->lo, R->hi, R->units, R->nranks, R->rank, d->los, R->cap,
        R->entry, fc, nc, R->out[slot], d->nout[slot], d->agg);
    KEDR_CUDA_LAUNCHED("rk_expand_kernel");
    return KEDR_OK; /* running: rk_finish waits for it */
}

static kedr_status rk_finish(cayley_ranks *R, int slot, uint64_t *found)
{
    rk_dev *d = (rk_dev *)R->dev;
    cudaStream_t stream = d->expand;
    unsigned long long *nout = (unsigned long long *)R->nout[slot];
    KEDR_CUDA_TRY(cudaMemcpyAsync(nout, d->nout[slot], ((size_t)R->nranks + 1) * 8,
                                  cudaMemcpyDeviceToHost, stream));
    KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
    for (int o = 0; o < R->nranks; o++)
        if (nout[o] > R->cap)
            return kedr_fail(KEDR_ERR_INVALID, "%s: rank %d: internal error: %llu products for "
                             "rank %d, more than a batch's %llu", R->g->spec, R->rank, nout[o],
                             o, (unsigned long long)R->cap);
    *found = nout[R->nranks];
    return KEDR_OK;
}

/* Queues the mark of n entries on the context's stream, behind the exchange that brought them:
 * no synchronisation a round; what the marks found is read once a level (rk_settle). */
static kedr_status rk_mark_elems(cayley_ranks *R, int slot, const unsigned char *entries,
                                 size_t n, uint32_t nc, uint64_t *found, uint64_t *outside)
{
    (void)slot;
    rk_dev *d = (rk_dev *)R->dev;
    cudaStream_t stream = KEDR_STREAM(R->ctx);
    rk_mark_kernel<<<rk_grid(R->ctx, n, 8), RK_THREADS, 0, stream>>>(
        d->codes, entries, n, R->entry, R->hi - R->lo, nc, d->marked, d->marked + 1);
    KEDR_CUDA_LAUNCHED("rk_mark_kernel");
    *found = *outside = 0;
    return KEDR_OK;
}

static kedr_status rk_settle(cayley_ranks *R, uint64_t *found, uint64_t *outside)
{
    rk_dev *d = (rk_dev *)R->dev;
    cudaStream_t stream = KEDR_STREAM(R->ctx);
    unsigned long long f[2] = {0, 0};
    *found = *outside = 0;
    KEDR_CUDA_TRY(cudaMemcpyAsync(f, d->marked, sizeof f, cudaMemcpyDeviceToHost, stream));
    KEDR_CUDA_TRY(cudaMemsetAsync(d->marked, 0, sizeof f, stream));
    KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
    *found = f[0];
    *outside = f[1];
    return KEDR_OK;
}

static kedr_status rk_download(cayley_ranks *R, size_t w, uint32_t *buf, size_t n)
{
    return kedr_download(R->ctx, buf, ((rk_dev *)R->dev)->codes + w, n * 4);
}

static kedr_status rk_upload(cayley_ranks *R, size_t w, const uint32_t *buf, size_t n)
{
    return kedr_upload(R->ctx, ((rk_dev *)R->dev)->codes + w, buf, n * 4);
}

extern "C" const cayley_ranks_backend cayley_ranks_cuda = {
    rk_begin,  rk_count,    rk_start,  rk_finish, rk_mark_elems,
    rk_settle, rk_download, rk_upload, rk_end};
