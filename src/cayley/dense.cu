/* Dense breadth-first search, cuda version; the algorithm is described in dense.c.
 *
 * A level is two kernels and one 8-byte download:
 *  - sweep: each block takes chunks of 16 tiles of 256 words (8192 ranks) of the frontier from
 *    a global counter; it collects the set bits of a tile in a shared-memory queue (so that
 *    every thread has work however the bits are spread over the words), clears the tile, and
 *    then expands the queued elements: unrank, multiply by each generator, rank, atomicOr into
 *    next unless the bit is already visited. Zero tiles cost one coalesced load and a barrier.
 *  - merge: visited |= next and a popcount of next, 16 bytes a thread.
 * The group, generators included, travels as a __grid_constant__ kernel parameter (about
 * 3.6 kB), so that every thread reads the same generator from the constant bank at once. */
#include "cayley_elem.h"
#include "dense.h"
#include "core/internal.h"

#define SWEEP_THREADS 256            /* one 32-bit word of a tile per thread */
#define TILE_BITS (SWEEP_THREADS * 32)
/* Tiles a block takes from the tile counter at once: most tiles of most levels are empty, and
 * one atomicAdd per tile would then cost more than the sweep itself. */
#define SWEEP_CHUNK 16
#define MERGE_THREADS 256

/* Device counters: the next tile to sweep, and the new elements of a level. */
typedef struct {
    unsigned long long tile;
    unsigned long long count;
} cayley_counters;

/* One instance per kind of group (KIND), so that each holds only its own kind's registers. */
template <int KIND>
__global__ void __launch_bounds__(SWEEP_THREADS)
cayley_sweep_kernel(const __grid_constant__ kedr_cayley_group g, uint32_t *frontier,
                    const uint32_t *__restrict__ visited, uint32_t *next, size_t words,
                    unsigned long long tiles, unsigned long long *tile_counter)
{
    __shared__ uint16_t queue[TILE_BITS]; /* bit offsets inside the tile */
    __shared__ unsigned int queued;
    __shared__ unsigned long long chunk;
    if (threadIdx.x == 0)
        queued = 0;
    for (;;) {
        if (threadIdx.x == 0)
            chunk = atomicAdd(tile_counter, 1ull);
        __syncthreads();
        unsigned long long t = chunk * SWEEP_CHUNK, end = t + SWEEP_CHUNK;
        if (t >= tiles)
            return; /* the same for the whole block */
        if (end > tiles)
            end = tiles;
        /* every tile below has at least one barrier before thread 0 writes chunk again */
        for (; t < end; t++) {
            size_t w = (size_t)t * SWEEP_THREADS + threadIdx.x;
            uint32_t bits = w < words ? frontier[w] : 0u;
            if (!__syncthreads_or(bits != 0))
                continue; /* most tiles of most levels: one load and one barrier */
            if (bits) {
                frontier[w] = 0;
                unsigned int pos = atomicAdd(&queued, (unsigned int)__popc(bits));
                do {
                    queue[pos++] =
                        (uint16_t)(threadIdx.x * 32 + (unsigned int)(__ffs((int)bits) - 1));
                    bits &= bits - 1;
                } while (bits);
            }
            __syncthreads();
            unsigned int n = queued;
            for (unsigned int i = threadIdx.x; i < n; i += SWEEP_THREADS) {
                cayley_elem e = cayley_load_as(&g, (uint64_t)t * TILE_BITS + queue[i],
                                               (kedr_cayley_kind)KIND);
                for (int k = 0; k < g.ngens; k++) {
                    uint64_t r = cayley_neighbour_as(&g, &e, k, (kedr_cayley_kind)KIND);
                    uint32_t bit = 1u << (r & 31);
                    /* visited does not change during the sweep */
                    if (!(__ldg(&visited[r >> 5]) & bit))
                        atomicOr(&next[r >> 5], bit);
                }
            }
            __syncthreads(); /* the queue is reused */
            if (threadIdx.x == 0)
                queued = 0; /* the next tile's barrier comes before its first atomicAdd */
        }
    }
}

__global__ void __launch_bounds__(MERGE_THREADS)
cayley_merge_kernel(const uint4 *__restrict__ next, uint4 *__restrict__ visited, size_t n4,
                    unsigned long long *count)
{
    unsigned long long c = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        uint4 a = next[i];
        if (a.x | a.y | a.z | a.w) {
            uint4 v = visited[i];
            v.x |= a.x;
            v.y |= a.y;
            v.z |= a.z;
            v.w |= a.w;
            visited[i] = v;
            c += (unsigned long long)(__popc(a.x) + __popc(a.y) + __popc(a.z) + __popc(a.w));
        }
    }
    for (int off = 16; off > 0; off >>= 1)
        c += __shfl_down_sync(0xffffffffu, c, off);
    if ((threadIdx.x & 31) == 0 && c)
        atomicAdd(count, c);
}

extern "C" kedr_status cayley_cuda_free_memory(kedr_ctx *ctx, size_t *bytes)
{
    size_t free_b = 0, total_b = 0;
    KEDR_CUDA_TRY(cudaSetDevice(ctx->device));
    KEDR_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    *bytes = free_b;
    return KEDR_OK;
}

extern "C" kedr_status cayley_cuda_begin(cayley_dense *d)
{
    return kedr_alloc(d->ctx, &d->counters, sizeof(cayley_counters));
}

extern "C" void cayley_cuda_end(cayley_dense *d)
{
    kedr_free(d->ctx, d->counters);
    d->counters = NULL;
}

extern "C" kedr_status cayley_cuda_level(cayley_dense *d, uint64_t *count)
{
    kedr_ctx *ctx = d->ctx;
    cudaStream_t stream = KEDR_STREAM(ctx);
    cayley_counters *counters = (cayley_counters *)d->counters;
    size_t words = d->bitmap_bytes / 4;
    unsigned long long tiles = (words + SWEEP_THREADS - 1) / SWEEP_THREADS;

    void (*sweep)(const kedr_cayley_group, uint32_t *, const uint32_t *, uint32_t *, size_t,
                  unsigned long long, unsigned long long *);
    switch (d->g->kind) {
    case KEDR_CAYLEY_PERMUTATION:
        sweep = cayley_sweep_kernel<KEDR_CAYLEY_PERMUTATION>;
        break;
    case KEDR_CAYLEY_SIGNED_PERMUTATION:
        sweep = cayley_sweep_kernel<KEDR_CAYLEY_SIGNED_PERMUTATION>;
        break;
    case KEDR_CAYLEY_ABELIAN:
        sweep = cayley_sweep_kernel<KEDR_CAYLEY_ABELIAN>;
        break;
    case KEDR_CAYLEY_BURNSIDE:
        sweep = cayley_sweep_kernel<KEDR_CAYLEY_BURNSIDE>;
        break;
    default:
        return kedr_fail(KEDR_ERR_INVALID, "cayley_cuda_level: %s has no dense ranking",
                         d->g->spec);
    }
    int per_sm = 0;
    KEDR_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sweep, SWEEP_THREADS,
                                                                0));
    unsigned long long blocks = (unsigned long long)(per_sm > 0 ? per_sm : 1) * ctx->multiprocessors,
                       chunks = (tiles + SWEEP_CHUNK - 1) / SWEEP_CHUNK;
    if (blocks > chunks)
        blocks = chunks;

    KEDR_CUDA_TRY(cudaMemsetAsync(counters, 0, sizeof *counters, stream));
    sweep<<<(unsigned int)blocks, SWEEP_THREADS, 0, stream>>>(
        *d->g, (uint32_t *)d->frontier, (const uint32_t *)d->visited, (uint32_t *)d->next, words,
        tiles, &counters->tile);
    KEDR_CUDA_LAUNCHED("cayley_sweep_kernel");

    size_t n4 = d->bitmap_bytes / 16;
    size_t merge_blocks = (n4 + MERGE_THREADS - 1) / MERGE_THREADS;
    size_t max_blocks = (size_t)ctx->multiprocessors * 8;
    if (merge_blocks > max_blocks)
        merge_blocks = max_blocks;
    cayley_merge_kernel<<<(unsigned int)merge_blocks, MERGE_THREADS, 0, stream>>>(
        (const uint4 *)d->next, (uint4 *)d->visited, n4, &counters->count);
    KEDR_CUDA_LAUNCHED("cayley_merge_kernel");

    unsigned long long c = 0;
    KEDR_CUDA_TRY(cudaMemcpyAsync(&c, &counters->count, sizeof c, cudaMemcpyDeviceToHost, stream));
    KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
    *count = c;
    void *t = d->frontier;
    d->frontier = d->next;
    d->next = t;
    return KEDR_OK;
}
