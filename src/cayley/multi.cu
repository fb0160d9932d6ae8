/* Dense breadth-first search over one or several GPUs of a host, 2 bits per element.
 *
 * The three bitmaps of the single-GPU search (visited, frontier, next: 3 bits per element) are
 * replaced by one array of 2-bit codes, and the array is split into contiguous ranges of ranks,
 * one per GPU. The code of an element is
 *     0  not reached yet
 *     1  reached at an even level      2  reached at an odd level
 *     3  reached and already expanded ("old")
 * so the frontier of level s is the set of elements of code c(s) = 1 + (s mod 2), and the
 * elements found while expanding it get c(s + 1). A level is one kernel per GPU, all running at
 * once: each sweeps its own range for codes c(s), turns them into 3 (with an atomicOr: other GPUs
 * may be setting codes in the same word), multiplies each by every generator, and, when the
 * product's code is 0, sets it to c(s + 1) with an atomicOr into whichever GPU owns that rank
 * (peer memory over NVLink or PCIe). The atomicOr's old value says whether this thread was the
 * first to find the element, so the level's count is exact without a second pass.
 * Why a plain read before the atomicOr is safe: during a level a code only changes from 0 to
 * c(s + 1) or from c(s) to 3, so a nonzero code read once stays nonzero.
 * Memory: 2 bits per element in all; B_17 (5^17 elements) takes 191 GB, 96 GB on each of two
 * H200s. */
#include "cayley_elem.h"
#include "dense.h"
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

#define MT_THREADS 256                 /* one 32-bit word (16 elements) a thread */
#define MT_TILE_ELEMS (MT_THREADS * 16)
#define MT_MAX_DEVICES 16
/* Tiles a block takes from the shared counter at once: a level sweeps every word, and most
 * tiles of most levels hold no frontier element, so one atomicAdd per tile would dominate. */
#define MT_CHUNK 16

/* Where the codes live: GPU i holds words [i * words_per, (i + 1) * words_per) of the whole
 * array (the last GPU fewer), as a pointer valid on every GPU (peer access). */
typedef struct {
    uint32_t *part[MT_MAX_DEVICES];
    unsigned long long words_per;
    int ndev;
} mt_parts;

struct cayley_multi {
    int ndev;
    int dev[MT_MAX_DEVICES];
    size_t words[MT_MAX_DEVICES];      /* words GPU i holds */
    cudaStream_t stream[MT_MAX_DEVICES];
    unsigned long long *counters[MT_MAX_DEVICES]; /* [0] next chunk of tiles, [1] new elements */
    int blocks[MT_MAX_DEVICES];
    mt_parts parts;
    int level;                         /* the frontier's level: its code is 1 + level % 2 */
    uint32_t *staging;                 /* pinned host words for checkpoints */
    uint32_t staging_one;              /* the identity's code on its way to GPU 0 */
    size_t staging_words;
};

static inline uint32_t mt_code(int level) { return 1u + (uint32_t)(level & 1); }

template <int KIND>
__global__ void __launch_bounds__(MT_THREADS)
mt_sweep_kernel(const __grid_constant__ kedr_cayley_group g, const __grid_constant__ mt_parts parts,
                int me, size_t words, unsigned long long tiles, uint32_t frontier_pattern,
                uint32_t next_code, unsigned long long *counters)
{
    __shared__ uint16_t queue[MT_TILE_ELEMS]; /* element offsets inside the tile */
    __shared__ unsigned int queued, busy;      /* busy: tiles of the chunk with frontier */
    __shared__ unsigned long long chunk;
    uint32_t *mine = parts.part[me];
    uint64_t first_rank = (uint64_t)me * parts.words_per * 16;
    unsigned long long found = 0;
    if (threadIdx.x == 0)
        queued = busy = 0;
    for (;;) {
        if (threadIdx.x == 0)
            chunk = atomicAdd(&counters[0], 1ull);
        __syncthreads();
        unsigned long long t0 = chunk * MT_CHUNK;
        if (t0 >= tiles)
            break; /* the same for the whole block */
        /* which tiles of the chunk hold frontier elements: MT_CHUNK loads in flight at once,
         * since most tiles of most levels hold none */
        unsigned int mask = 0;
#pragma unroll
        for (int j = 0; j < MT_CHUNK; j++) {
            size_t w = (size_t)(t0 + j) * MT_THREADS + threadIdx.x;
            if (t0 + j < tiles && w < words) {
                uint32_t y = *(volatile uint32_t *)&mine[w] ^ frontier_pattern;
                mask |= (unsigned int)((~(y | (y >> 1)) & 0x55555555u) != 0) << j;
            }
        }
        if (mask)
            atomicOr(&busy, mask);
        __syncthreads();
        unsigned int todo = busy;
        while (todo) {
            int j = __ffs((int)todo) - 1;
            todo &= todo - 1;
            unsigned long long t = t0 + (unsigned long long)j;
            size_t w = (size_t)t * MT_THREADS + threadIdx.x;
            if ((mask >> j) & 1u) {
                /* frontier codes of this word change only here, so the reload sees them */
                uint32_t y = *(volatile uint32_t *)&mine[w] ^ frontier_pattern;
                uint32_t m = ~(y | (y >> 1)) & 0x55555555u; /* low bit of each c(s) field */
                atomicOr(&mine[w], m | (m << 1));             /* expanded: code 3 */
                unsigned int pos = atomicAdd(&queued, (unsigned int)__popc(m));
                do {
                    queue[pos++] =
                        (uint16_t)(threadIdx.x * 16 + (unsigned int)(__ffs((int)m) - 1) / 2);
                    m &= m - 1;
                } while (m);
            }
            __syncthreads();
            unsigned int n = queued;
            for (unsigned int i = threadIdx.x; i < n; i += MT_THREADS) {
                cayley_elem e = cayley_load_as(&g, first_rank + (uint64_t)t * MT_TILE_ELEMS +
                                                       queue[i],
                                               (kedr_cayley_kind)KIND);
                for (int k = 0; k < g.ngens; k++) {
                    uint64_t r = cayley_neighbour_as(&g, &e, k, (kedr_cayley_kind)KIND);
                    uint64_t gw = r >> 4;
                    unsigned long long owner = parts.ndev == 1 ? 0 : gw / parts.words_per;
                    uint32_t *p = parts.part[owner] + (gw - owner * parts.words_per);
                    unsigned int shift = (unsigned int)(r & 15) * 2;
                    if ((*(volatile uint32_t *)p >> shift) & 3u)
                        continue;
                    uint32_t old = atomicOr(p, next_code << shift);
                    found += ((old >> shift) & 3u) == 0;
                }
            }
            __syncthreads(); /* every thread has read queued and the queue */
            if (threadIdx.x == 0)
                queued = 0;
            __syncthreads();
        }
        if (threadIdx.x == 0)
            busy = 0; /* every thread read it before the loop's barriers; the next chunk's
                       * first barrier comes before the next atomicOr */
    }
    for (int off = 16; off > 0; off >>= 1)
        found += __shfl_down_sync(0xffffffffu, found, off);
    if ((threadIdx.x & 31) == 0 && found)
        atomicAdd(&counters[1], found);
}

typedef void (*mt_sweep_fn)(const kedr_cayley_group, const mt_parts, int, size_t,
                            unsigned long long, uint32_t, uint32_t, unsigned long long *);

static mt_sweep_fn mt_sweep_for(kedr_cayley_kind kind)
{
    switch (kind) {
    case KEDR_CAYLEY_PERMUTATION:
        return mt_sweep_kernel<KEDR_CAYLEY_PERMUTATION>;
    case KEDR_CAYLEY_SIGNED_PERMUTATION:
        return mt_sweep_kernel<KEDR_CAYLEY_SIGNED_PERMUTATION>;
    case KEDR_CAYLEY_ABELIAN:
        return mt_sweep_kernel<KEDR_CAYLEY_ABELIAN>;
    case KEDR_CAYLEY_BURNSIDE:
        return mt_sweep_kernel<KEDR_CAYLEY_BURNSIDE>;
    default:
        return NULL;
    }
}

extern "C" kedr_status cayley_multi_devices(int *count)
{
    *count = 0;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        *count = 0;
    }
    return KEDR_OK;
}

extern "C" void cayley_multi_end(cayley_dense *d)
{
    cayley_multi *m = d->multi;
    if (!m)
        return;
    for (int i = 0; i < m->ndev; i++) {
        cudaSetDevice(m->dev[i]);
        if (m->stream[i])
            cudaStreamSynchronize(m->stream[i]);
        cudaFree(m->parts.part[i]);
        cudaFree(m->counters[i]);
        if (m->stream[i])
            cudaStreamDestroy(m->stream[i]);
    }
    cudaFreeHost(m->staging);
    cudaSetDevice(d->ctx->device);
    free(m);
    d->multi = NULL;
}

static kedr_status multi_setup(cayley_dense *d, cayley_multi *m, int ndev)
{
    const kedr_cayley_group *g = d->g;
    if (!mt_sweep_for(g->kind))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: %s has no dense ranking", g->spec);
    int count = 0;
    KEDR_TRY(cayley_multi_devices(&count));
    if (ndev < 1 || ndev > count || ndev > MT_MAX_DEVICES)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: devices = %d: this host has %d "
                         "GPU%s (at most %d are used)", ndev, count, count == 1 ? "" : "s",
                         MT_MAX_DEVICES);
    uint64_t total_words = (g->order + 15) / 16;
    /* whole tiles per GPU, so that a tile never straddles two GPUs */
    unsigned long long per = (total_words + (uint64_t)ndev - 1) / (uint64_t)ndev;
    per = (per + MT_THREADS - 1) / MT_THREADS * MT_THREADS;
    m->ndev = ndev;
    m->parts.ndev = ndev;
    m->parts.words_per = per;
    for (int i = 0; i < ndev; i++) {
        m->dev[i] = (d->ctx->device + i) % count;
        uint64_t first = (uint64_t)i * per;
        m->words[i] = first >= total_words ? 0 : (size_t)(total_words - first < per ? total_words - first : per);
    }
    /* every GPU must be able to write into every other's memory */
    for (int i = 0; i < ndev; i++)
        for (int j = 0; j < ndev; j++) {
            if (m->dev[i] == m->dev[j])
                continue;
            int can = 0;
            KEDR_CUDA_TRY(cudaDeviceCanAccessPeer(&can, m->dev[i], m->dev[j]));
            if (!can)
                return kedr_fail(KEDR_ERR_UNSUPPORTED,
                                 "kedr_cayley_growth: GPU %d cannot access the memory of GPU %d "
                                 "(no peer access): a search over several GPUs needs it",
                                 m->dev[i], m->dev[j]);
        }
    for (int i = 0; i < ndev; i++) {
        KEDR_CUDA_TRY(cudaSetDevice(m->dev[i]));
        size_t free_b = 0, total_b = 0, bytes = m->words[i] * 4 + 16;
        KEDR_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
        if (bytes > free_b) {
            char need_s[32], free_s[32];
            kedr_format_bytes((double)bytes, need_s, sizeof need_s);
            kedr_format_bytes((double)free_b, free_s, sizeof free_s);
            return kedr_fail(KEDR_ERR_NOMEM, "%s over %d GPU%s needs %s on GPU %d, which has %s "
                             "free: use more GPUs", g->spec, ndev, ndev == 1 ? "" : "s", need_s,
                             m->dev[i], free_s);
        }
        for (int j = 0; j < ndev; j++) {
            if (m->dev[j] == m->dev[i])
                continue;
            cudaError_t e = cudaDeviceEnablePeerAccess(m->dev[j], 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                cudaGetLastError();
            else
                KEDR_CUDA_TRY(e);
        }
        KEDR_CUDA_TRY(cudaStreamCreateWithFlags(&m->stream[i], cudaStreamNonBlocking));
        KEDR_CUDA_TRY(cudaMalloc((void **)&m->parts.part[i], bytes));
        KEDR_CUDA_TRY(cudaMalloc((void **)&m->counters[i], 2 * sizeof(unsigned long long)));
        KEDR_CUDA_TRY(cudaMemsetAsync(m->parts.part[i], 0, bytes, m->stream[i]));
        int per_sm = 0, sms = 0;
        KEDR_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mt_sweep_for(g->kind),
                                                                    MT_THREADS, 0));
        KEDR_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, m->dev[i]));
        m->blocks[i] = (per_sm > 0 ? per_sm : 1) * sms;
    }
    for (int i = 0; i < ndev; i++) {
        KEDR_CUDA_TRY(cudaSetDevice(m->dev[i]));
        KEDR_CUDA_TRY(cudaStreamSynchronize(m->stream[i]));
    }
    /* the identity (rank 0) is the frontier of level 0. Every copy goes through the GPU's own
     * stream and is waited for: the streams do not wait on the legacy default stream, and a
     * plain cudaMemcpy from pageable memory may return before its data has arrived. */
    KEDR_CUDA_TRY(cudaSetDevice(m->dev[0]));
    m->staging_one = mt_code(0);
    KEDR_CUDA_TRY(cudaMemcpyAsync(m->parts.part[0], &m->staging_one, 4, cudaMemcpyHostToDevice,
                                  m->stream[0]));
    KEDR_CUDA_TRY(cudaStreamSynchronize(m->stream[0]));
    m->level = 0;
    return KEDR_OK;
}

extern "C" kedr_status cayley_multi_begin(cayley_dense *d, int ndev)
{
    cayley_multi *m = (cayley_multi *)calloc(1, sizeof *m);
    if (!m)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_cayley_growth: out of host memory");
    d->multi = m;
    kedr_status s = multi_setup(d, m, ndev);
    cudaSetDevice(d->ctx->device);
    if (s != KEDR_OK)
        cayley_multi_end(d);
    return s;
}

extern "C" kedr_status cayley_multi_level(cayley_dense *d, uint64_t *count)
{
    cayley_multi *m = d->multi;
    mt_sweep_fn sweep = mt_sweep_for(d->g->kind);
    uint32_t code = mt_code(m->level);
    uint32_t pattern = code == 1 ? 0x55555555u : 0xAAAAAAAAu;
    for (int i = 0; i < m->ndev; i++) {
        KEDR_CUDA_TRY(cudaSetDevice(m->dev[i]));
        unsigned long long tiles = (m->words[i] + MT_THREADS - 1) / MT_THREADS;
        if (tiles == 0)
            continue;
        unsigned long long blocks = (unsigned long long)m->blocks[i],
                           chunks = (tiles + MT_CHUNK - 1) / MT_CHUNK;
        if (blocks > chunks)
            blocks = chunks;
        KEDR_CUDA_TRY(cudaMemsetAsync(m->counters[i], 0, 2 * sizeof(unsigned long long),
                                      m->stream[i]));
        sweep<<<(unsigned int)blocks, MT_THREADS, 0, m->stream[i]>>>(
            *d->g, m->parts, i, m->words[i], tiles, pattern, mt_code(m->level + 1), m->counters[i]);
        KEDR_CUDA_LAUNCHED("mt_sweep_kernel");
    }
    /* the level ends when every GPU has finished: only then are all of its products in */
    uint64_t total = 0;
    for (int i = 0; i < m->ndev; i++) {
        KEDR_CUDA_TRY(cudaSetDevice(m->dev[i]));
        unsigned long long c[2] = {0, 0};
        if (m->words[i])
            KEDR_CUDA_TRY(cudaMemcpyAsync(c, m->counters[i], sizeof c, cudaMemcpyDeviceToHost,
                                          m->stream[i]));
        KEDR_CUDA_TRY(cudaStreamSynchronize(m->stream[i]));
        total += c[1];
    }
    KEDR_CUDA_TRY(cudaSetDevice(d->ctx->device));
    m->level++;
    *count = total;
    return KEDR_OK;
}

/* Words [w0, w0 + n) of the whole code array to (up = 0) or from host `words`, across GPUs. */
static kedr_status mt_copy(cayley_multi *m, uint64_t w0, size_t n, uint32_t *words, int up)
{
    while (n) {
        int i = (int)(w0 / m->parts.words_per);
        if (i >= m->ndev) { /* the bitmap's padding past the last GPU's words */
            if (!up)
                memset(words, 0, 4 * n);
            return KEDR_OK;
        }
        uint64_t local = w0 - (uint64_t)i * m->parts.words_per;
        size_t avail = local < m->words[i] ? (size_t)(m->words[i] - local) : 0;
        size_t span = m->parts.words_per - local < n ? (size_t)(m->parts.words_per - local) : n;
        size_t k = avail < span ? avail : span;
        KEDR_CUDA_TRY(cudaSetDevice(m->dev[i]));
        if (k) {
            if (up)
                KEDR_CUDA_TRY(cudaMemcpyAsync(m->parts.part[i] + local, words, 4 * k,
                                              cudaMemcpyHostToDevice, m->stream[i]));
            else
                KEDR_CUDA_TRY(cudaMemcpyAsync(words, m->parts.part[i] + local, 4 * k,
                                              cudaMemcpyDeviceToHost, m->stream[i]));
            KEDR_CUDA_TRY(cudaStreamSynchronize(m->stream[i]));
        }
        if (!up && span > k) /* past the end of the group: nothing there */
            memset(words + k, 0, 4 * (span - k));
        w0 += span;
        words += span;
        n -= span;
    }
    return KEDR_OK;
}

static kedr_status mt_staging(cayley_multi *m, size_t words)
{
    if (m->staging_words >= words)
        return KEDR_OK;
    cudaFreeHost(m->staging);
    m->staging = NULL;
    m->staging_words = 0;
    KEDR_CUDA_TRY(cudaMallocHost((void **)&m->staging, 4 * words));
    m->staging_words = words;
    return KEDR_OK;
}

/* Bytes [off, off + n) of the visited (which = 0) or frontier (1) bitmap, one bit per element:
 * each 32-bit word of codes gives 16 bits, 2 bytes. off and n are even. */
extern "C" kedr_status cayley_multi_download(cayley_dense *d, int which, size_t off, void *buf,
                                             size_t n)
{
    cayley_multi *m = d->multi;
    size_t nw = n / 2;
    KEDR_TRY(mt_staging(m, nw));
    kedr_status s = mt_copy(m, off / 2, nw, m->staging, 0);
    cudaSetDevice(d->ctx->device);
    if (s != KEDR_OK)
        return s;
    uint32_t code = mt_code(m->level);
    uint16_t *out = (uint16_t *)buf;
    for (size_t k = 0; k < nw; k++) {
        uint32_t x = m->staging[k], bits = 0;
        for (int f = 0; f < 16; f++) {
            uint32_t c = (x >> (2 * f)) & 3u;
            bits |= (uint32_t)(which ? c == code : c != 0) << f;
        }
        out[k] = (uint16_t)bits;
    }
    return KEDR_OK;
}

/* The inverse, for a resumed search at level `level`: the visited bitmap (which = 0) sets code
 * 3, then the frontier bitmap (1) turns its elements into code c(level). */
extern "C" kedr_status cayley_multi_upload(cayley_dense *d, int which, size_t off, const void *buf,
                                           size_t n, int level)
{
    cayley_multi *m = d->multi;
    size_t nw = n / 2;
    KEDR_TRY(mt_staging(m, nw));
    m->level = level;
    kedr_status s = KEDR_OK;
    if (which)
        s = mt_copy(m, off / 2, nw, m->staging, 0);
    if (s == KEDR_OK) {
        uint32_t code = mt_code(level);
        const uint16_t *in = (const uint16_t *)buf;
        for (size_t k = 0; k < nw; k++) {
            uint32_t x = which ? m->staging[k] : 0;
            for (int f = 0; f < 16; f++)
                if ((in[k] >> f) & 1u) {
                    x &= ~(3u << (2 * f));
                    x |= (which ? code : 3u) << (2 * f);
                }
            m->staging[k] = x;
        }
        s = mt_copy(m, off / 2, nw, m->staging, 1);
    }
    cudaSetDevice(d->ctx->device);
    return s;
}
