/* Dense breadth-first search over a perfectly ranked group (cpu version and dispatch).
 *
 * Three bitmaps of |G| bits: visited, frontier, next. A level sweeps the frontier word by word
 * (zero words cost one load), unranks each element found, multiplies it by every generator,
 * ranks the product and sets its bit in next unless it is already visited. Then visited |= next,
 * F(s+1) = popcount(next), and frontier and next swap (the sweep has already cleared the words
 * of frontier it read, so the new next starts at zero). Memory is 3 bits per element. */
#include "cayley_elem.h"
#include "checkpoint.h"
#include "dense.h"
#include "sparse.h"
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

/* Memory the host can give without swapping: MemAvailable, else the physical memory. */
static size_t host_available_memory(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                fclose(f);
                return (size_t)kb * 1024;
            }
        fclose(f);
    }
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : SIZE_MAX;
}

/* What a search may use: the memory limit, else free GPU memory or available host memory. */
static kedr_status memory_allowed(kedr_ctx *ctx, const kedr_cayley_options *opt, size_t *limit,
                                  const char **where)
{
    *limit = opt ? opt->memory_limit : 0;
    *where = "memory allowed by the limit";
    if (*limit)
        return KEDR_OK;
    *where = "host memory available";
    *limit = host_available_memory();
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        *where = "GPU memory free";
        KEDR_TRY(cayley_cuda_free_memory(ctx, limit));
    }
#else
    (void)ctx;
#endif
    return KEDR_OK;
}

/* KEDR_OK when the single-context search fits; else, on the GPU, *devices = 1 when the 2-bit
 * search fits on this GPU alone; else KEDR_ERR_NOMEM saying what would fit. */
static kedr_status check_memory(kedr_ctx *ctx, const kedr_cayley_group *g,
                                const kedr_cayley_options *opt, size_t need, int *devices)
{
    size_t limit;
    const char *where;
    KEDR_TRY(memory_allowed(ctx, opt, &limit, &where));
    if (need <= limit)
        return KEDR_OK;
    /* 2 bits per element instead of 3, with 1/64 to spare */
    if (KEDR_IS_CUDA(ctx) && kedr_cayley_multi_bytes(g) + limit / 64 <= limit) {
        kedr_log(KEDR_LOG_INFO, "%s: 3 bits per element do not fit in the %s; searching with "
                 "2 bits per element (the search over GPUs, on this GPU alone)", g->spec, where);
        *devices = 1;
        return KEDR_OK;
    }
    char need_s[32], limit_s[32];
    kedr_format_bytes((double)need, need_s, sizeof need_s);
    kedr_format_bytes((double)limit, limit_s, sizeof limit_s);
    /* What would fit instead: the search over several GPUs at 2 bits per element, or the sparse
     * mode, whose memory follows the widest levels (about 48 bytes a state, docs/cayley.md). */
    if (!KEDR_IS_CUDA(ctx))
        return kedr_fail(KEDR_ERR_NOMEM,
                         "%s needs %s in dense mode (3 bitmaps of %llu bits, one bit per element), "
                         "more than the %s of %s; --mode sparse fits while the widest levels hold "
                         "under about %.2g states", g->spec, need_s, (unsigned long long)g->order,
                         limit_s, where, (double)limit / 48.0);
    double gpus = ceil((double)kedr_cayley_multi_bytes(g) / (double)(limit ? limit : 1));
    return kedr_fail(KEDR_ERR_NOMEM,
                     "%s needs %s in dense mode (3 bitmaps of %llu bits, one bit per element), "
                     "more than the %s of %s: over GPUs at 2 bits per element it would take "
                     "%.0f GPU%s of this size (--devices %.0f); --mode sparse fits while the "
                     "widest levels hold under about %.2g states",
                     g->spec, need_s, (unsigned long long)g->order, limit_s, where, gpus,
                     gpus == 1 ? "" : "s", gpus, (double)limit / 48.0);
}

/* The search over GPUs: cuda only, a device count the host has, and within the memory limit
 * (each GPU's free memory is checked when it is set up). *devices: -1 becomes the count. */
static kedr_status check_devices(kedr_ctx *ctx, const kedr_cayley_group *g,
                                 const kedr_cayley_options *opt, int *devices)
{
    if (!KEDR_IS_CUDA(ctx))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: devices = %d needs the cuda back "
                         "end (this context is cpu)", *devices);
    if (*devices < -1)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: devices = %d: expected -1 (all), "
                         "0 (one GPU, 3 bits per element) or a GPU count", *devices);
#ifdef KEDR_HAVE_CUDA
    if (*devices == -1)
        KEDR_TRY(cayley_multi_devices(devices));
#endif
    size_t need = kedr_cayley_multi_bytes(g);
    if (opt->memory_limit && need > opt->memory_limit) {
        char need_s[32], limit_s[32];
        kedr_format_bytes((double)need, need_s, sizeof need_s);
        kedr_format_bytes((double)opt->memory_limit, limit_s, sizeof limit_s);
        return kedr_fail(KEDR_ERR_NOMEM, "%s needs %s over GPUs (2 bits per element), more than "
                         "the memory limit of %s", g->spec, need_s, limit_s);
    }
    return KEDR_OK;
}

static kedr_status dense_begin(cayley_dense *d, int devices)
{
#ifdef KEDR_HAVE_CUDA
    if (devices != 0)
        return cayley_multi_begin(d, devices);
#else
    (void)devices;
#endif
    KEDR_TRY(kedr_alloc(d->ctx, &d->visited, d->bitmap_bytes));
    KEDR_TRY(kedr_alloc(d->ctx, &d->frontier, d->bitmap_bytes));
    KEDR_TRY(kedr_alloc(d->ctx, &d->next, d->bitmap_bytes));
    KEDR_TRY(kedr_memset(d->ctx, d->visited, 0, d->bitmap_bytes));
    KEDR_TRY(kedr_memset(d->ctx, d->frontier, 0, d->bitmap_bytes));
    KEDR_TRY(kedr_memset(d->ctx, d->next, 0, d->bitmap_bytes));
    /* the identity has rank 0: bit 0 of byte 0 whatever the word size */
    const unsigned char one = 1;
    KEDR_TRY(kedr_upload(d->ctx, d->visited, &one, 1));
    KEDR_TRY(kedr_upload(d->ctx, d->frontier, &one, 1));
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(d->ctx))
        KEDR_TRY(cayley_cuda_begin(d));
#endif
    return KEDR_OK;
}

static void dense_end(cayley_dense *d)
{
#ifdef KEDR_HAVE_CUDA
    if (d->multi) {
        cayley_multi_end(d);
        return;
    }
    if (KEDR_IS_CUDA(d->ctx))
        cayley_cuda_end(d);
#endif
    kedr_free(d->ctx, d->visited);
    kedr_free(d->ctx, d->frontier);
    kedr_free(d->ctx, d->next);
}

/* frontier_size: F(s), which sizes the work of the level */
static kedr_status dense_level(cayley_dense *d, uint64_t frontier_size, uint64_t *count)
{
#ifdef KEDR_HAVE_CUDA
    if (d->multi)
        return cayley_multi_level(d, count);
    if (KEDR_IS_CUDA(d->ctx))
        return cayley_cuda_level(d, count);
#endif
    *count = level_cpu(d, frontier_size);
    return KEDR_OK;
}

kedr_status cayley_dense_download(cayley_dense *d, int which, size_t off, void *buf, size_t n)
{
#ifdef KEDR_HAVE_CUDA
    if (d->multi)
        return cayley_multi_download(d, which, off, buf, n);
#endif
    return kedr_download(d->ctx, buf, (const char *)(which ? d->frontier : d->visited) + off, n);
}

kedr_status cayley_dense_upload(cayley_dense *d, int which, size_t off, const void *buf, size_t n,
                                int level)
{
#ifdef KEDR_HAVE_CUDA
    if (d->multi)
        return cayley_multi_upload(d, which, off, buf, n, level);
#endif
    (void)level;
    return kedr_upload(d->ctx, (char *)(which ? d->frontier : d->visited) + off, buf, n);
}

/* Appends F(s) to the growth function, growing it by doubling. */
kedr_status cayley_push_level(kedr_cayley_result *res, size_t *len, size_t *cap, uint64_t f)
{
    if (*len == *cap) {
        size_t ncap = *cap ? 2 * *cap : 64;
        uint64_t *p = realloc(res->growth, ncap * sizeof *p);
        if (!p)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_cayley_growth: out of host memory for %zu levels",
                             ncap);
        res->growth = p;
        *cap = ncap;
    }
    res->growth[(*len)++] = f;
    return KEDR_OK;
}

/* Writes a checkpoint when one is asked for and due (or `force`); *last is when the last was,
 * *written says whether this call wrote one. */
static kedr_status maybe_checkpoint(cayley_dense *d, const kedr_cayley_options *opt,
                                    const kedr_cayley_result *res, int complete, int force,
                                    double *last, int *written)
{
    *written = 0;
    if (!opt || !opt->checkpoint_path)
        return KEDR_OK;
    double now = kedr_wall_seconds();
    if (!force && now - *last < opt->checkpoint_every)
        return KEDR_OK;
    KEDR_TRY(cayley_checkpoint_write(d, opt->checkpoint_path, res->growth, res->diameter,
                                     complete));
    *last = kedr_wall_seconds();
    *written = 1;
    return KEDR_OK;
}

/* Stops at a level boundary after a signal: saves the state (unless the last level's
 * checkpoint holds it) and says so. */
static kedr_status stop_interrupted(cayley_dense *d, const kedr_cayley_options *opt,
                                    const kedr_cayley_result *res, int saved)
{
    const char *path = opt ? opt->checkpoint_path : NULL;
    if (path && !saved)
        KEDR_TRY(cayley_checkpoint_write(d, path, res->growth, res->diameter, 0));
    return kedr_fail(KEDR_ERR_INTERRUPTED, "%s: interrupted by signal %d after level %d%s%s",
                     d->g->spec, kedr_interrupted(), res->diameter,
                     path ? "; saved to the checkpoint " : " (no --checkpoint to save it to)",
                     path ? path : "");
}

/* Runs levels from the state in d, whose growth so far is res->growth[0..res->diameter]. */
static kedr_status search(cayley_dense *d, const kedr_cayley_options *opt, kedr_cayley_result *res)
{
    const kedr_cayley_group *g = d->g;
    size_t len = (size_t)res->diameter + 1, cap = len;
    double t0 = kedr_wall_seconds(), last_checkpoint = t0;
    int max_levels = opt ? opt->max_levels : 0;
    double weighted = 0; /* sum s F(s) */
    res->reached = 0;
    for (int s = 0; s <= res->diameter; s++) {
        res->reached += res->growth[s];
        weighted += (double)s * (double)res->growth[s];
    }
    kedr_cayley_level lv = {res->diameter, res->growth[res->diameter], res->reached, 0, 0, 0,
                            res->memory_bytes, 0};
    if (res->resumed_from < 0 && opt && opt->on_level)
        opt->on_level(&lv, opt->user);
    /* a checkpoint of an ended search has nothing left to expand; it is still written out */
    if (res->complete)
        KEDR_TRY(maybe_checkpoint(d, opt, res, 1, 1, &last_checkpoint, &lv.checkpointed));
    for (int s = res->diameter + 1; !res->complete && (max_levels <= 0 || s <= max_levels); s++) {
        /* a signal stops the search between two levels, the only point where its state is
         * whole (on every back end: this loop drives the cpu, cuda and multi-GPU levels) */
        if (kedr_interrupted()) {
            res->seconds = kedr_wall_seconds() - t0;
            res->average_distance = weighted / (double)res->reached;
            return stop_interrupted(d, opt, res, lv.checkpointed);
        }
        double t = kedr_wall_seconds();
        uint64_t count = 0;
        KEDR_TRY(dense_level(d, res->growth[s - 1], &count));
        res->edge_visits += (double)res->growth[s - 1] * g->ngens;
        if (count == 0) {
            res->complete = 1;
            KEDR_TRY(maybe_checkpoint(d, opt, res, 1, 1, &last_checkpoint, &lv.checkpointed));
            break;
        }
        if (count > g->order - res->reached) /* would otherwise never end */
            return kedr_fail(KEDR_ERR_INVALID,
                             "kedr_cayley_growth: internal error: level %d of %s found %llu new "
                             "elements with only %llu left", s, g->spec, (unsigned long long)count,
                             (unsigned long long)(g->order - res->reached));
        lv.edge_visits = (double)res->growth[s - 1] * g->ngens;
        KEDR_TRY(cayley_push_level(res, &len, &cap, count));
        res->diameter = s;
        res->reached += count;
        weighted += (double)s * (double)count;
        lv.level = s;
        lv.new_elements = count;
        lv.reached = res->reached;
        double now = kedr_wall_seconds();
        lv.seconds = now - t0;
        lv.level_seconds = now - t;
        /* the last level of a run stopped by max_levels is always written */
        KEDR_TRY(maybe_checkpoint(d, opt, res, 0, s == max_levels, &last_checkpoint,
                                  &lv.checkpointed));
        if (opt && opt->on_level)
            opt->on_level(&lv, opt->user);
    }
    res->seconds = kedr_wall_seconds() - t0;
    res->average_distance = weighted / (double)res->reached;
    return KEDR_OK;
}

/* The starting state: the identity alone, or the checkpoint resumed from. */
static kedr_status start(cayley_dense *d, const kedr_cayley_options *opt, kedr_cayley_result *res)
{
    res->resumed_from = -1;
    if (opt && opt->resume_path) {
        int level = 0;
        KEDR_TRY(cayley_checkpoint_read(d, opt->resume_path, &res->growth, &level,
                                        &res->complete));
        res->diameter = level;
        res->resumed_from = level;
        return KEDR_OK;
    }
    size_t len = 0, cap = 0;
    return cayley_push_level(res, &len, &cap, 1);
}

kedr_status kedr_cayley_growth(kedr_ctx *ctx, const kedr_cayley_group *g,
                               const kedr_cayley_options *opt, kedr_cayley_result *result)
{
    if (!ctx || !g || !result)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: %s is NULL",
                         !ctx ? "ctx" : !g ? "g" : "result");
    memset(result, 0, sizeof *result);
    if (g->order == 0 || g->ngens < 0 || g->ngens > KEDR_CAYLEY_MAX_GENERATORS)
        return kedr_fail(KEDR_ERR_INVALID,
                         "kedr_cayley_growth: g is not a group made by kedr_cayley_parse");
    if (opt && (!(opt->checkpoint_every >= 0) || opt->max_levels < 0))
        return kedr_fail(KEDR_ERR_INVALID,
                         "kedr_cayley_growth: checkpoint_every %g, max_levels %d: expected both >= 0",
                         opt->checkpoint_every, opt->max_levels);
    int sparse = 0;
    KEDR_TRY(cayley_sparse_chosen(g, opt, &sparse));
    if (sparse && opt && opt->devices != 0)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: devices = %d applies to the dense "
                         "mode; %s runs in sparse mode", opt->devices, g->spec);
    if (sparse)
        return cayley_sparse_growth(ctx, g, opt, result);
    int devices = opt ? opt->devices : 0;
    size_t need = kedr_cayley_dense_bytes(g);
    if (devices != 0) {
        KEDR_TRY(check_devices(ctx, g, opt, &devices));
    } else {
        KEDR_TRY(check_memory(ctx, g, opt, need, &devices));
    }

    cayley_dense d;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    d.g = g;
    d.bitmap_bytes = need / 3;
    result->order = g->order;
    result->memory_bytes = devices ? kedr_cayley_multi_bytes(g) : need;
    result->devices = devices;
    result->mode = KEDR_CAYLEY_DENSE;
    kedr_status s = dense_begin(&d, devices);
    if (s == KEDR_OK)
        s = start(&d, opt, result);
    if (s == KEDR_OK)
        s = search(&d, opt, result);
    dense_end(&d);
    /* interrupted: the result holds the levels done */
    if (s != KEDR_OK && s != KEDR_ERR_INTERRUPTED)
        kedr_cayley_result_free(result);
    return s;
}

void kedr_cayley_result_free(kedr_cayley_result *result)
{
    if (!result)
        return;
    free(result->growth);
    memset(result, 0, sizeof *result);
}
