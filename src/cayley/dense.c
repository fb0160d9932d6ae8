/* Dense breadth-first search over a perfectly ranked group (cpu version, and the back-end
 * table that the cuda code of dense.cu and multi.cu plugs into).
 *
 * Three bitmaps of |G| bits: visited, frontier, next. A level sweeps the frontier word by word
 * (zero words cost one load), unranks each element found, multiplies it by every generator,
 * ranks the product and sets its bit in next unless it is already visited. Then visited |= next,
 * F(s+1) = popcount(next), and frontier and next swap (the sweep has already cleared the words
 * of frontier it read, so the new next starts at zero). Memory is 3 bits per element. */
#include "cayley_elem.h"
#include "checkpoint.h"
#include "dense.h"
#include "growth.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Words of the bitmap one OpenMP task sweeps: big enough to amortise scheduling, small enough
 * to balance the dense middle levels between threads. */
#define CPU_CHUNK_WORDS 512

/* Without -mpopcnt the builtin is a library call; this is Hacker's Delight 5-2. */
static inline uint64_t popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (x * 0x0101010101010101ull) >> 56;
}

/* Below this much work (words swept plus products) a level runs on one thread: levels of tiny
 * groups, or the first levels of big ones, would otherwise cost more in thread wake-ups and
 * barriers than in work. */
#define CPU_PARALLEL_WORK 65536

static uint64_t level_cpu(cayley_dense *d, uint64_t frontier_size)
{
    const kedr_cayley_group *g = d->g;
    uint64_t *frontier = d->frontier, *next = d->next, *visited = d->visited;
    size_t words = d->bitmap_bytes / 8;
    long chunks = (long)((words + CPU_CHUNK_WORDS - 1) / CPU_CHUNK_WORDS);
    int ngens = g->ngens;
    int parallel = words + frontier_size * (uint64_t)ngens > CPU_PARALLEL_WORK;

#pragma omp parallel for schedule(dynamic, 1) num_threads(d->ctx->threads) if (parallel)
    for (long c = 0; c < chunks; c++) {
        size_t end = (size_t)(c + 1) * CPU_CHUNK_WORDS;
        if (end > words)
            end = words;
        for (size_t w = (size_t)c * CPU_CHUNK_WORDS; w < end; w++) {
            uint64_t bits = frontier[w];
            if (!bits)
                continue;
            frontier[w] = 0;
            do {
                uint64_t rank = w * 64 + (uint64_t)__builtin_ctzll(bits);
                bits &= bits - 1;
                cayley_elem e = cayley_load(g, rank);
                for (int k = 0; k < ngens; k++) {
                    uint64_t r = cayley_neighbour(g, &e, k);
                    uint64_t bit = 1ull << (r & 63);
                    /* visited does not change during the sweep, so a plain read is safe */
                    if (!(visited[r >> 6] & bit))
                        __atomic_fetch_or(&next[r >> 6], bit, __ATOMIC_RELAXED);
                }
            } while (bits);
        }
    }

    uint64_t count = 0;
#pragma omp parallel for schedule(static) reduction(+ : count) num_threads(d->ctx->threads) \
    if (words > CPU_PARALLEL_WORK)
    for (size_t w = 0; w < words; w++) {
        uint64_t a = next[w];
        if (a) {
            visited[w] |= a;
            count += popcount64(a);
        }
    }
    d->frontier = next;
    d->next = frontier;
    return count;
}

/* ---- back ends: chosen once, when the search begins ---- */

static kedr_status alloc_bitmaps(cayley_dense *d)
{
    KEDR_TRY(kedr_alloc(d->ctx, &d->visited, d->bitmap_bytes));
    KEDR_TRY(kedr_alloc(d->ctx, &d->frontier, d->bitmap_bytes));
    KEDR_TRY(kedr_alloc(d->ctx, &d->next, d->bitmap_bytes));
    KEDR_TRY(kedr_memset(d->ctx, d->visited, 0, d->bitmap_bytes));
    KEDR_TRY(kedr_memset(d->ctx, d->frontier, 0, d->bitmap_bytes));
    KEDR_TRY(kedr_memset(d->ctx, d->next, 0, d->bitmap_bytes));
    /* the identity has rank 0: bit 0 of byte 0 whatever the word size */
    const unsigned char one = 1;
    KEDR_TRY(kedr_upload(d->ctx, d->visited, &one, 1));
    return kedr_upload(d->ctx, d->frontier, &one, 1);
}

static void free_bitmaps(cayley_dense *d)
{
    kedr_free(d->ctx, d->visited);
    kedr_free(d->ctx, d->frontier);
    kedr_free(d->ctx, d->next);
}

static kedr_status bitmap_download(cayley_dense *d, int which, size_t off, void *buf, size_t n)
{
    return kedr_download(d->ctx, buf, (const char *)(which ? d->frontier : d->visited) + off, n);
}

static kedr_status bitmap_upload(cayley_dense *d, int which, size_t off, const void *buf,
                                 size_t n, int level)
{
    (void)level;
    return kedr_upload(d->ctx, (char *)(which ? d->frontier : d->visited) + off, buf, n);
}

static kedr_status cpu_level(cayley_dense *d, uint64_t frontier_size, uint64_t *count)
{
    *count = level_cpu(d, frontier_size);
    return KEDR_OK;
}

static const cayley_dense_backend cpu_backend = {alloc_bitmaps, cpu_level, free_bitmaps,
                                                 bitmap_download, bitmap_upload};

#ifdef KEDR_HAVE_CUDA
static kedr_status cuda_begin(cayley_dense *d)
{
    KEDR_TRY(alloc_bitmaps(d));
    return cayley_cuda_begin(d);
}

static void cuda_end(cayley_dense *d)
{
    cayley_cuda_end(d);
    free_bitmaps(d);
}

static kedr_status cuda_level(cayley_dense *d, uint64_t frontier_size, uint64_t *count)
{
    (void)frontier_size;
    return cayley_cuda_level(d, count);
}

static kedr_status multi_begin(cayley_dense *d) { return cayley_multi_begin(d, d->devices); }

static kedr_status multi_level(cayley_dense *d, uint64_t frontier_size, uint64_t *count)
{
    (void)frontier_size;
    return cayley_multi_level(d, count);
}

static const cayley_dense_backend cuda_backend = {cuda_begin, cuda_level, cuda_end,
                                                  bitmap_download, bitmap_upload};
static const cayley_dense_backend multi_backend = {multi_begin, multi_level, cayley_multi_end,
                                                   cayley_multi_download, cayley_multi_upload};
#endif

/* The back end of ctx (devices != 0: the search over GPUs, which check_devices has kept to
 * cuda contexts). */
static const cayley_dense_backend *choose_backend(kedr_ctx *ctx, int devices)
{
#ifdef KEDR_HAVE_CUDA
    if (devices != 0)
        return &multi_backend;
    if (KEDR_IS_CUDA(ctx))
        return &cuda_backend;
#else
    (void)ctx;
    (void)devices;
#endif
    return &cpu_backend;
}

kedr_status cayley_dense_download(cayley_dense *d, int which, size_t off, void *buf, size_t n)
{
    return d->backend->download(d, which, off, buf, n);
}

kedr_status cayley_dense_upload(cayley_dense *d, int which, size_t off, const void *buf, size_t n,
                                int level)
{
    return d->backend->upload(d, which, off, buf, n, level);
}

/* ---- the hooks of the level loop (growth.h) ---- */

static kedr_status hook_start(void *self, const kedr_cayley_options *opt,
                              kedr_cayley_result *res)
{
    cayley_dense *d = self;
    if (opt && opt->resume_path) {
        int level = 0;
        KEDR_TRY(cayley_checkpoint_read(d, opt->resume_path, &res->growth, &level,
                                        &res->complete));
        res->diameter = level;
        return KEDR_OK;
    }
    size_t len = 0, cap = 0;
    return cayley_push_level(res, &len, &cap, 1);
}

static kedr_status hook_level(void *self, int s, const kedr_cayley_result *res, uint64_t *count)
{
    cayley_dense *d = self;
    return d->backend->level(d, res->growth[s - 1], count);
}

static kedr_status hook_checkpoint(void *self, const char *path, const kedr_cayley_result *res,
                                   int complete)
{
    return cayley_checkpoint_write(self, path, res->growth, res->diameter, complete);
}

static size_t hook_memory(void *self) { return ((cayley_dense *)self)->memory_bytes; }

kedr_status cayley_dense_growth(kedr_ctx *ctx, const kedr_cayley_group *g,
                                const kedr_cayley_options *opt, int devices,
                                kedr_cayley_result *result)
{
    cayley_dense d;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    d.g = g;
    d.bitmap_bytes = kedr_cayley_dense_bytes(g) / 3;
    d.devices = devices;
    d.memory_bytes = devices ? kedr_cayley_multi_bytes(g) : kedr_cayley_dense_bytes(g);
    d.backend = choose_backend(ctx, devices);
    result->order = g->order;
    result->memory_bytes = d.memory_bytes;
    result->devices = devices;
    result->mode = KEDR_CAYLEY_DENSE;
    cayley_search S = {g, &d, hook_start, NULL, hook_level, hook_checkpoint, hook_memory,
                       NULL};
    kedr_status s = d.backend->begin(&d);
    if (s == KEDR_OK)
        s = cayley_run_levels(&S, opt, result);
    d.backend->end(&d);
    return s;
}
