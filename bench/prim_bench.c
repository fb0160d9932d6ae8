/* kedr bench prim: times each primitive at n elements (median of repeats after one warm-up call),
 * next to the device's measured copy bandwidth and, on the GPU, next to CUB in the same run.
 * Every kedr result is checked on the host, and CUB's against kedr's, so that no row reports the
 * time of a wrong answer. */
#include "bench.h"
#include "bench_util.h"

#include "core/internal.h"
#ifdef KEDR_HAVE_CUDA
#include "cub_ref.h"
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The order of the table; specs[] below follows it. */
const char *const kedr_bench_prim_names[] = {
    "reduce", "scan", "select", "partition", "histogram", "sort_keys", "sort_pairs",
    "sort_keys_u64", "counting_sort", "reduce_by_key", "rle", "transpose", "rng_uniform", NULL};

enum { IMPL_KEDR = 0, IMPL_CUB = 1 };
#define BENCH_MAX_BUFS 16
#define BENCH_HIST_BINS 256
#define BENCH_RUN_CHUNK ((size_t)1 << 16) /* runs for rle/reduce_by_key are drawn per chunk */

/* The benchmark in progress: its buffers (freed when it ends) and its operands. Arrays indexed
 * by impl hold kedr's output [IMPL_KEDR] and CUB's [IMPL_CUB]. */
typedef struct {
    kedr_ctx *ctx;
    struct cub_ref *cub; /* NULL: no CUB yardstick for this benchmark */
    const char *name;
    size_t n;      /* requested elements */
    uint64_t seed; /* of the inputs */

    void *dev[BENCH_MAX_BUFS], *host[BENCH_MAX_BUFS];
    int ndev, nhost;
    size_t dev_bytes; /* taken so far by this benchmark, for out-of-memory messages */
    int mismatched;   /* the failure was a wrong answer */

    size_t len;      /* elements one call processes */
    double bytes;    /* the least bytes one call must move */
    size_t side;     /* transpose: the matrix is side x side */
    uint32_t nkeys;  /* counting_sort */
    uint32_t bound;  /* select, partition: x < bound is selected */
    uint32_t mask;   /* sort_pairs: vals_in[i] = i ^ mask */
    int end_bit;     /* counting_sort: key bits CUB sorts on */
    size_t expected; /* the count the host predicts: selected items or runs */
    void *in, *in2, *h_in, *h_in2;
    void *out[2], *out2[2], *out3;
    size_t count[2]; /* counts returned to the host */
    uint32_t sum[2];
} bench;

typedef struct {
    const char *name;
    const char *prim;                         /* the kedr function timed */
    kedr_status (*setup)(bench *b);           /* inputs, outputs, len and bytes */
    kedr_status (*call)(bench *b, int impl);  /* one call of kedr or of CUB */
    kedr_status (*check)(bench *b);           /* kedr's outputs on the host, CUB's against them */
    int has_cub;
} bench_spec;

typedef struct {
    const char *name;
    size_t n;
    double ms, cub_ms; /* cub_ms < 0: not measured */
    double bytes;
    const char *status; /* "ok", "MISMATCH" or "error" */
    char message[320];  /* why, when not ok */
} bench_row;

/* ---- buffers ------------------------------------------------------------------------------ */

static kedr_status dev_alloc(bench *b, void **p, size_t bytes, const char *what)
{
    *p = NULL;
    if (b->ndev == BENCH_MAX_BUFS)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: more than %d buffers", b->name, BENCH_MAX_BUFS);
    kedr_status s = kedr_alloc(b->ctx, p, bytes);
    if (s == KEDR_ERR_NOMEM) {
        char why[512]; /* kedr_fail overwrites the message it would read */
        snprintf(why, sizeof why, "%s", kedr_last_error());
        return kedr_fail(s,
                         "%s at n = %zu: %s (%.2f GB) does not fit after the %.2f GB this "
                         "benchmark already holds (%s); try a smaller --n",
                         b->name, b->n, what, bytes / 1e9, b->dev_bytes / 1e9, why);
    }
    KEDR_TRY(s);
    b->dev[b->ndev++] = *p;
    b->dev_bytes += bytes;
    return KEDR_OK;
}

static kedr_status host_alloc(bench *b, void **p, size_t bytes, const char *what)
{
    *p = NULL;
    if (b->nhost == BENCH_MAX_BUFS)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: more than %d host buffers", b->name,
                         BENCH_MAX_BUFS);
    *p = malloc(bytes ? bytes : 1);
    if (!*p)
        return kedr_fail(KEDR_ERR_NOMEM, "%s at n = %zu: out of host memory for %s (%.2f GB)",
                         b->name, b->n, what, bytes / 1e9);
    b->host[b->nhost++] = *p;
    return KEDR_OK;
}

/* Frees everything the benchmark took, the scratch kept by kedr and CUB included. */
static void bench_release(bench *b)
{
    for (int i = 0; i < b->ndev; i++)
        kedr_free(b->ctx, b->dev[i]);
    for (int i = 0; i < b->nhost; i++)
        free(b->host[i]);
    kedr_scratch_trim(b->ctx);
#ifdef KEDR_HAVE_CUDA
    cub_ref_trim(b->cub);
#endif
    bench tmp = {.ctx = b->ctx, .cub = b->cub, .n = b->n, .seed = b->seed};
    *b = tmp;
}

/* Host copy of a buffer in the context's memory. */
static kedr_status fetch(bench *b, void **host, const void *dev, size_t bytes, const char *what)
{
    KEDR_TRY(host_alloc(b, host, bytes, what));
    return kedr_download(b->ctx, *host, dev, bytes);
}

/* A device output for kedr and, when CUB runs, one for CUB. */
static kedr_status outputs(bench *b, void *out[2], size_t bytes, const char *what)
{
    KEDR_TRY(dev_alloc(b, &out[IMPL_KEDR], bytes, what));
    return b->cub ? dev_alloc(b, &out[IMPL_CUB], bytes, what) : KEDR_OK;
}

/* ---- seeded inputs (counter based, so they are filled in parallel and the same every run) -- */

static inline uint64_t mix64(uint64_t x) /* the splitmix64 finaliser */
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline uint64_t draw64(uint64_t seed, uint64_t i)
{
    return mix64(seed + (i + 1) * 0x9E3779B97F4A7C15ull);
}

static inline uint32_t draw32(uint64_t seed, uint64_t i) { return (uint32_t)(draw64(seed, i) >> 32); }

/* A bijection of u32 (murmur3's fmix32): distinct run ids give distinct, scattered keys. */
static inline uint32_t fmix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    return h ^ (h >> 16);
}

/* n full-range random u32 on the host (kept for the checks) and on the device. The device
 * buffer comes first, so that a size too large for the GPU fails before host memory is filled. */
static kedr_status input_u32(bench *b, void **host, void **dev, size_t n, uint64_t stream)
{
    KEDR_TRY(dev_alloc(b, dev, n * 4, "the input"));
    KEDR_TRY(host_alloc(b, host, n * 4, "the input"));
    uint32_t *h = *host;
    uint64_t seed = b->seed ^ mix64(stream);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        h[i] = draw32(seed, i);
    return kedr_upload(b->ctx, *dev, h, n * 4);
}

/* Keys in runs of 1 to 15 equal elements (8 on average), each run's key different from its
 * neighbours'. Runs are drawn per chunk so that chunks fill in parallel; a run never crosses a
 * chunk. Returns the number of runs. */
static size_t runs_u32(uint32_t *keys, size_t n, uint64_t seed)
{
    size_t nchunks = (n + BENCH_RUN_CHUNK - 1) / BENCH_RUN_CHUNK, runs = 0;
#pragma omp parallel for schedule(static) reduction(+ : runs)
    for (size_t c = 0; c < nchunks; c++) {
        size_t i = c * BENCH_RUN_CHUNK, end = i + BENCH_RUN_CHUNK < n ? i + BENCH_RUN_CHUNK : n;
        uint32_t local = 0, j = 0;
        while (i < end) {
            uint32_t len = 1 + draw32(seed, c * BENCH_RUN_CHUNK + j++) % 15;
            /* (chunk, run in chunk) is a distinct id for neighbouring runs: local < 2^16 */
            uint32_t key = fmix32((uint32_t)(c << 16) | local++);
            for (uint32_t k = 0; k < len && i < end; k++)
                keys[i++] = key;
        }
        runs += local;
    }
    return runs;
}

/* ---- checks ------------------------------------------------------------------------------- */

static kedr_status mismatch(bench *b, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->mismatched = 1;
    return kedr_fail(KEDR_ERR_INVALID, "%s at n = %zu: MISMATCH: %s", b->name, b->n, msg);
}

/* CUB's output equals kedr's (already checked), so both timed the same operation. */
static kedr_status same_as_cub(bench *b, const void *kedr_host, const void *cub_dev, size_t n,
                               size_t elem, const char *what)
{
    if (!b->cub || n == 0)
        return KEDR_OK;
    void *h;
    KEDR_TRY(fetch(b, &h, cub_dev, n * elem, "CUB's output"));
    if (memcmp(kedr_host, h, n * elem) == 0)
        return KEDR_OK;
    size_t i = 0;
    while (memcmp((const char *)kedr_host + i * elem, (const char *)h + i * elem, elem) == 0)
        i++;
    return mismatch(b, "CUB's %s differs from kedr's at element %zu of %zu", what, i, n);
}

static kedr_status same_count_as_cub(bench *b, const char *what)
{
    if (b->cub && b->count[IMPL_CUB] != b->count[IMPL_KEDR])
        return mismatch(b, "CUB's %s is %zu, kedr's %zu", what, b->count[IMPL_CUB],
                        b->count[IMPL_KEDR]);
    return KEDR_OK;
}

/* Element i of an array of u32 (elem 4) or u64 (elem 8) keys. */
static inline uint64_t key_at(const void *a, size_t elem, size_t i)
{
    return elem == 4 ? ((const uint32_t *)a)[i] : ((const uint64_t *)a)[i];
}

/* First i in [1, n) with a[i-1] > a[i], or n when sorted. */
static size_t first_unsorted(const void *a, size_t elem, size_t n)
{
    size_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (size_t i = 1; i < n; i++)
        if (key_at(a, elem, i - 1) > key_at(a, elem, i) && i < bad)
            bad = i;
    return bad;
}

/* An order-independent fingerprint of a multiset: equal for a permutation, and different with
 * overwhelming probability otherwise. */
static uint64_t multiset(const void *a, size_t elem, size_t n)
{
    uint64_t h = 0;
#pragma omp parallel for schedule(static) reduction(+ : h)
    for (size_t i = 0; i < n; i++)
        h += mix64(key_at(a, elem, i) + 0x632BE59BD9B4E019ull);
    return h;
}

/* ---- the benchmarks ----------------------------------------------------------------------- */

/* CUB calls exist only in cuda builds; the driver never asks for them otherwise. */
#ifdef KEDR_HAVE_CUDA
#define CUB(call) (call)
#else
#define CUB(call) kedr_fail(KEDR_ERR_UNSUPPORTED, "CUB is not built in")
#endif

static kedr_status setup_reduce(bench *b)
{
    b->len = b->n;
    b->bytes = 4.0 * b->n;
    return input_u32(b, &b->h_in, &b->in, b->n, 1);
}

static kedr_status call_reduce(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_reduce_sum_u32(b->cub, b->in, b->n, &b->sum[IMPL_CUB]));
    return kedr_reduce(b->ctx, KEDR_U32, KEDR_OP_SUM, b->in, b->n, &b->sum[IMPL_KEDR]);
}

static kedr_status check_reduce(bench *b)
{
    const uint32_t *x = b->h_in;
    uint64_t s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (size_t i = 0; i < b->n; i++)
        s += x[i];
    if (b->sum[IMPL_KEDR] != (uint32_t)s)
        return mismatch(b, "sum %u, expected %u", b->sum[IMPL_KEDR], (uint32_t)s);
    if (b->cub && b->sum[IMPL_CUB] != (uint32_t)s)
        return mismatch(b, "CUB's sum is %u, expected %u", b->sum[IMPL_CUB], (uint32_t)s);
    return KEDR_OK;
}

static kedr_status setup_scan(bench *b)
{
    b->len = b->n;
    b->bytes = 8.0 * b->n;
    KEDR_TRY(outputs(b, b->out, b->n * 4, "the output"));
    return input_u32(b, &b->h_in, &b->in, b->n, 2);
}

static kedr_status call_scan(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_scan_exclusive_u32(b->cub, b->in, b->out[IMPL_CUB], b->n));
    return kedr_scan_exclusive(b->ctx, KEDR_U32, b->in, b->out[IMPL_KEDR], b->n, NULL);
}

static kedr_status check_scan(bench *b)
{
    uint32_t *out;
    const uint32_t *x = b->h_in;
    KEDR_TRY(fetch(b, (void **)&out, b->out[IMPL_KEDR], b->n * 4, "the output"));
    uint32_t s = 0;
    for (size_t i = 0; i < b->n; s += x[i], i++)
        if (out[i] != s)
            return mismatch(b, "out[%zu] = %u, expected %u", i, out[i], s);
    return same_as_cub(b, out, b->out[IMPL_CUB], b->n, 4, "output");
}

/* select and partition: about half of the full-range inputs are below 2^31. */
static kedr_status setup_select(bench *b)
{
    b->len = b->n;
    b->bound = 1u << 31;
    KEDR_TRY(outputs(b, b->out, b->n * 4, "the output"));
    KEDR_TRY(input_u32(b, &b->h_in, &b->in, b->n, 3));
    const uint32_t *x = b->h_in;
    size_t k = 0;
#pragma omp parallel for schedule(static) reduction(+ : k)
    for (size_t i = 0; i < b->n; i++)
        k += x[i] < b->bound;
    b->expected = k;
    b->bytes = 4.0 * b->n + 4.0 * k;
    return KEDR_OK;
}

static kedr_pred pred_below(uint32_t bound)
{
    kedr_pred p;
    memset(&p, 0, sizeof p);
    p.cmp = KEDR_CMP_LT;
    p.a.u32 = bound;
    return p;
}

static kedr_status call_select(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_select_lt_u32(b->cub, b->in, b->out[IMPL_CUB], b->n, b->bound,
                                         &b->count[IMPL_CUB]));
    return kedr_select_if(b->ctx, KEDR_U32, b->in, b->out[IMPL_KEDR], b->n, pred_below(b->bound),
                          &b->count[IMPL_KEDR]);
}

static kedr_status check_select(bench *b)
{
    if (b->count[IMPL_KEDR] != b->expected)
        return mismatch(b, "n_out %zu, expected %zu", b->count[IMPL_KEDR], b->expected);
    KEDR_TRY(same_count_as_cub(b, "n_out"));
    uint32_t *out;
    const uint32_t *x = b->h_in;
    KEDR_TRY(fetch(b, (void **)&out, b->out[IMPL_KEDR], b->expected * 4, "the output"));
    for (size_t i = 0, j = 0; i < b->n; i++)
        if (x[i] < b->bound && out[j++] != x[i])
            return mismatch(b, "out[%zu] = %u, expected in[%zu] = %u", j - 1, out[j - 1], i, x[i]);
    return same_as_cub(b, out, b->out[IMPL_CUB], b->expected, 4, "output");
}

static kedr_status setup_partition(bench *b)
{
    KEDR_TRY(setup_select(b));
    b->bytes = 8.0 * b->n;
    return KEDR_OK;
}

static kedr_status call_partition(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_partition_lt_u32(b->cub, b->in, b->out[IMPL_CUB], b->n, b->bound,
                                            &b->count[IMPL_CUB]));
    return kedr_partition_if(b->ctx, KEDR_U32, b->in, b->out[IMPL_KEDR], b->n,
                             pred_below(b->bound), &b->count[IMPL_KEDR]);
}

static kedr_status check_partition(bench *b)
{
    size_t nt = b->expected;
    if (b->count[IMPL_KEDR] != nt)
        return mismatch(b, "n_true %zu, expected %zu", b->count[IMPL_KEDR], nt);
    KEDR_TRY(same_count_as_cub(b, "n_true"));
    uint32_t *out;
    const uint32_t *x = b->h_in;
    KEDR_TRY(fetch(b, (void **)&out, b->out[IMPL_KEDR], b->n * 4, "the output"));
    for (size_t i = 0, t = 0, f = nt; i < b->n; i++) {
        size_t j = x[i] < b->bound ? t++ : f++;
        if (out[j] != x[i])
            return mismatch(b, "out[%zu] = %u, expected in[%zu] = %u", j, out[j], i, x[i]);
    }
    if (!b->cub)
        return KEDR_OK;
    uint32_t *c;
    KEDR_TRY(fetch(b, (void **)&c, b->out[IMPL_CUB], b->n * 4, "CUB's output"));
    for (size_t j = 0; j < b->n; j++) { /* CUB puts the rejected items in reverse order */
        size_t k = j < nt ? j : b->n - 1 - (j - nt);
        if (c[k] != out[j])
            return mismatch(b, "CUB's out[%zu] = %u differs from kedr's out[%zu] = %u", k, c[k],
                            j, out[j]);
    }
    return KEDR_OK;
}

static kedr_status setup_histogram(bench *b)
{
    b->len = b->n;
    b->bytes = 4.0 * b->n;
    KEDR_TRY(outputs(b, b->out, BENCH_HIST_BINS * 4, "the counts"));
    return input_u32(b, &b->h_in, &b->in, b->n, 4);
}

static kedr_status call_histogram(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_histogram_u32(b->cub, b->in, b->n, BENCH_HIST_BINS, b->out[IMPL_CUB]));
    return kedr_histogram_even(b->ctx, KEDR_U32, b->in, b->n, 0.0, 4294967296.0, BENCH_HIST_BINS,
                               b->out[IMPL_KEDR]);
}

static kedr_status check_histogram(bench *b)
{
    uint64_t want[BENCH_HIST_BINS] = {0};
    const uint32_t *x = b->h_in;
#pragma omp parallel
    {
        uint64_t local[BENCH_HIST_BINS] = {0};
#pragma omp for schedule(static)
        for (size_t i = 0; i < b->n; i++)
            local[(uint64_t)x[i] * BENCH_HIST_BINS >> 32]++;
#pragma omp critical
        for (int k = 0; k < BENCH_HIST_BINS; k++)
            want[k] += local[k];
    }
    uint32_t *counts;
    KEDR_TRY(fetch(b, (void **)&counts, b->out[IMPL_KEDR], BENCH_HIST_BINS * 4, "the counts"));
    for (int k = 0; k < BENCH_HIST_BINS; k++)
        if (counts[k] != (uint32_t)want[k])
            return mismatch(b, "counts[%d] = %u, expected %llu", k, counts[k],
                            (unsigned long long)want[k]);
    return same_as_cub(b, counts, b->out[IMPL_CUB], BENCH_HIST_BINS, 4, "counts");
}

/* Sorts move every key (and value) in and out once per pass of 8 bits: the least an LSD radix
 * sort with 256 buckets can do. */
static kedr_status setup_sort_keys(bench *b)
{
    b->len = b->n;
    b->bytes = 4 * 8.0 * b->n;
    KEDR_TRY(outputs(b, b->out, b->n * 4, "the sorted keys"));
    return input_u32(b, &b->h_in, &b->in, b->n, 5);
}

static kedr_status call_sort_keys(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_sort_keys_u32(b->cub, b->in, b->out[IMPL_CUB], b->n, 32));
    return kedr_sort_keys(b->ctx, KEDR_U32, b->in, b->out[IMPL_KEDR], b->n, 0, 0);
}

/* Sorted, and a permutation of the input. */
static kedr_status check_sorted_keys(bench *b, size_t elem)
{
    void *out;
    KEDR_TRY(fetch(b, &out, b->out[IMPL_KEDR], b->n * elem, "the sorted keys"));
    size_t bad = first_unsorted(out, elem, b->n);
    if (bad < b->n)
        return mismatch(b, "out[%zu] = %llu > out[%zu] = %llu", bad - 1,
                        (unsigned long long)key_at(out, elem, bad - 1), bad,
                        (unsigned long long)key_at(out, elem, bad));
    if (multiset(out, elem, b->n) != multiset(b->h_in, elem, b->n))
        return mismatch(b, "the output is sorted but not a permutation of the input");
    return same_as_cub(b, out, b->out[IMPL_CUB], b->n, elem, "sorted keys");
}

static kedr_status check_sort_keys(bench *b) { return check_sorted_keys(b, 4); }

static kedr_status setup_sort_pairs(bench *b)
{
    b->len = b->n;
    b->bytes = 4 * 16.0 * b->n;
    b->mask = draw32(b->seed, 6); /* values: a scrambled index, so the check can trace them */
    KEDR_TRY(outputs(b, b->out, b->n * 4, "the sorted keys"));
    KEDR_TRY(outputs(b, b->out2, b->n * 4, "the sorted values"));
    KEDR_TRY(dev_alloc(b, &b->in2, b->n * 4, "the values"));
    KEDR_TRY(input_u32(b, &b->h_in, &b->in, b->n, 6));
    KEDR_TRY(host_alloc(b, &b->h_in2, b->n * 4, "the values"));
    uint32_t *v = b->h_in2;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < b->n; i++)
        v[i] = (uint32_t)i ^ b->mask;
    return kedr_upload(b->ctx, b->in2, v, b->n * 4);
}

static kedr_status call_sort_pairs(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_sort_pairs_u32(b->cub, b->in, b->out[IMPL_CUB], b->in2,
                                          b->out2[IMPL_CUB], b->n, 32));
    return kedr_sort_pairs(b->ctx, KEDR_U32, b->in, b->out[IMPL_KEDR], b->in2,
                           b->out2[IMPL_KEDR], 4, b->n, 0, 0);
}

/* Sorted, each value the index of an input with that key, every index once, and equal keys in
 * input order: that is the one stable sort. */
static kedr_status check_sort_pairs(bench *b)
{
    uint32_t *k, *v;
    uint8_t *seen;
    const uint32_t *x = b->h_in;
    size_t n = b->n;
    KEDR_TRY(fetch(b, (void **)&k, b->out[IMPL_KEDR], n * 4, "the sorted keys"));
    KEDR_TRY(fetch(b, (void **)&v, b->out2[IMPL_KEDR], n * 4, "the sorted values"));
    KEDR_TRY(host_alloc(b, (void **)&seen, n, "the check"));
    memset(seen, 0, n);
    size_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (size_t j = 0; j < n; j++) {
        size_t idx = v[j] ^ b->mask;
        int ok = idx < n && x[idx] == k[j] &&
                 (j == 0 || k[j - 1] < k[j] ||
                  (k[j - 1] == k[j] && (v[j - 1] ^ b->mask) < idx));
        if (!ok && j < bad)
            bad = j;
        if (idx < n) {
#pragma omp atomic write
            seen[idx] = 1;
        }
    }
    if (bad < n)
        return mismatch(b, "pair %zu: key %u, value %u (index %u) is out of order or not an input",
                        bad, k[bad], v[bad], v[bad] ^ b->mask);
    size_t missing = n;
#pragma omp parallel for schedule(static) reduction(min : missing)
    for (size_t i = 0; i < n; i++)
        if (!seen[i] && i < missing)
            missing = i;
    if (missing < n)
        return mismatch(b, "input %zu is missing from the output", missing);
    KEDR_TRY(same_as_cub(b, k, b->out[IMPL_CUB], n, 4, "sorted keys"));
    return same_as_cub(b, v, b->out2[IMPL_CUB], n, 4, "sorted values");
}

static kedr_status setup_sort_keys_u64(bench *b)
{
    b->len = b->n;
    b->bytes = 8 * 16.0 * b->n;
    KEDR_TRY(outputs(b, b->out, b->n * 8, "the sorted keys"));
    KEDR_TRY(dev_alloc(b, &b->in, b->n * 8, "the input"));
    KEDR_TRY(host_alloc(b, &b->h_in, b->n * 8, "the input"));
    uint64_t *h = b->h_in, seed = b->seed ^ mix64(7);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < b->n; i++)
        h[i] = draw64(seed, i);
    return kedr_upload(b->ctx, b->in, h, b->n * 8);
}

static kedr_status call_sort_keys_u64(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_sort_keys_u64(b->cub, b->in, b->out[IMPL_CUB], b->n));
    return kedr_sort_keys(b->ctx, KEDR_U64, b->in, b->out[IMPL_KEDR], b->n, 0, 0);
}

static kedr_status check_sort_keys_u64(bench *b) { return check_sorted_keys(b, 8); }

/* Like DSMC particles in cells: n/16 keys, about 16 items each. CUB's stand-in sorts (key,
 * index) pairs on the key's bits; its values are then kedr's perm. */
static kedr_status setup_counting_sort(bench *b)
{
    size_t n = b->n;
    b->len = n;
    b->nkeys = n / 16 > UINT32_MAX ? UINT32_MAX : (n / 16 ? (uint32_t)(n / 16) : 1);
    b->bytes = 8.0 * n + 8.0 * b->nkeys;
    b->end_bit = 1; /* at least one bit: CUB may skip a sort on none */
    while (b->end_bit < 32 && ((uint64_t)1 << b->end_bit) < b->nkeys)
        b->end_bit++;
    KEDR_TRY(outputs(b, b->out, n * 4, "perm"));
    KEDR_TRY(dev_alloc(b, &b->out2[IMPL_KEDR], (size_t)b->nkeys * 4, "starts"));
    KEDR_TRY(dev_alloc(b, &b->out3, (size_t)b->nkeys * 4, "counts"));
    if (b->cub) {
        KEDR_TRY(dev_alloc(b, &b->out2[IMPL_CUB], n * 4, "CUB's sorted keys"));
        KEDR_TRY(dev_alloc(b, &b->in2, n * 4, "the indices"));
    }
    KEDR_TRY(dev_alloc(b, &b->in, n * 4, "the keys"));
    KEDR_TRY(host_alloc(b, &b->h_in, n * 4, "the keys"));
    uint32_t *h = b->h_in;
    uint64_t seed = b->seed ^ mix64(8);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        h[i] = (uint32_t)((uint64_t)draw32(seed, i) * b->nkeys >> 32);
    KEDR_TRY(kedr_upload(b->ctx, b->in, h, n * 4));
    if (!b->cub)
        return KEDR_OK;
    KEDR_TRY(host_alloc(b, &b->h_in2, n * 4, "the indices"));
    uint32_t *iota = b->h_in2;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        iota[i] = (uint32_t)i;
    return kedr_upload(b->ctx, b->in2, iota, n * 4);
}

static kedr_status call_counting_sort(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_sort_pairs_u32(b->cub, b->in, b->out2[IMPL_CUB], b->in2,
                                          b->out[IMPL_CUB], b->n, b->end_bit));
    return kedr_counting_sort(b->ctx, b->in, b->n, b->nkeys, b->out[IMPL_KEDR],
                              b->out2[IMPL_KEDR], b->out3, &b->count[IMPL_KEDR]);
}

/* Each key's range holds, in increasing order, as many indices of items with that key as the
 * input has: so it holds exactly those, and perm is the stable grouping. */
static kedr_status check_counting_sort(bench *b)
{
    size_t n = b->n, nk = b->nkeys;
    const uint32_t *key = b->h_in;
    uint32_t *perm, *starts, *counts, *want;
    if (b->count[IMPL_KEDR] != n)
        return mismatch(b, "n_kept %zu, expected %zu", b->count[IMPL_KEDR], n);
    KEDR_TRY(fetch(b, (void **)&perm, b->out[IMPL_KEDR], n * 4, "perm"));
    KEDR_TRY(fetch(b, (void **)&starts, b->out2[IMPL_KEDR], nk * 4, "starts"));
    KEDR_TRY(fetch(b, (void **)&counts, b->out3, nk * 4, "counts"));
    KEDR_TRY(host_alloc(b, (void **)&want, nk * 4, "the check"));
    memset(want, 0, nk * 4);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
#pragma omp atomic update
        want[key[i]]++;
    }
    size_t start = 0;
    for (size_t k = 0; k < nk; start += want[k], k++)
        if (counts[k] != want[k] || starts[k] != start)
            return mismatch(b, "key %zu: start %u count %u, expected %zu and %u", k, starts[k],
                            counts[k], start, want[k]);
    size_t bad = nk;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (size_t k = 0; k < nk; k++)
        for (size_t j = starts[k]; j < (size_t)starts[k] + counts[k]; j++)
            if (perm[j] >= n || key[perm[j]] != k || (j > starts[k] && perm[j] <= perm[j - 1])) {
                if (k < bad)
                    bad = k;
                break;
            }
    if (bad < nk)
        return mismatch(b, "perm[%u..%u) is not the items of key %zu in order", starts[bad],
                        starts[bad] + counts[bad], bad);
    return same_as_cub(b, perm, b->out[IMPL_CUB], n, 4, "permutation");
}

static kedr_status setup_runs(bench *b, int with_values)
{
    size_t n = b->n;
    b->len = n;
    if (with_values)
        KEDR_TRY(input_u32(b, &b->h_in2, &b->in2, n, 10));
    KEDR_TRY(dev_alloc(b, &b->in, n * 4, "the keys"));
    KEDR_TRY(host_alloc(b, &b->h_in, n * 4, "the keys"));
    b->expected = runs_u32(b->h_in, n, b->seed ^ mix64(9));
    KEDR_TRY(kedr_upload(b->ctx, b->in, b->h_in, n * 4));
    KEDR_TRY(outputs(b, b->out, b->expected * 4, "the unique keys"));
    KEDR_TRY(outputs(b, b->out2, b->expected * 4, with_values ? "the sums" : "the run lengths"));
    b->bytes = 4.0 * n * (with_values ? 2 : 1) + 8.0 * b->expected;
    return KEDR_OK;
}

static kedr_status setup_reduce_by_key(bench *b) { return setup_runs(b, 1); }
static kedr_status setup_rle(bench *b) { return setup_runs(b, 0); }

static kedr_status call_reduce_by_key(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_reduce_by_key_u32(b->cub, b->in, b->in2, b->n, b->out[IMPL_CUB],
                                             b->out2[IMPL_CUB], &b->count[IMPL_CUB]));
    return kedr_reduce_by_key(b->ctx, KEDR_U32, b->in, KEDR_U32, b->in2, b->n, KEDR_OP_SUM,
                              b->out[IMPL_KEDR], b->out2[IMPL_KEDR], &b->count[IMPL_KEDR]);
}

static kedr_status call_rle(bench *b, int impl)
{
    if (impl == IMPL_CUB)
        return CUB(cub_ref_rle_u32(b->cub, b->in, b->n, b->out[IMPL_CUB], b->out2[IMPL_CUB],
                                   &b->count[IMPL_CUB]));
    return kedr_run_length_encode(b->ctx, KEDR_U32, b->in, b->n, b->out[IMPL_KEDR],
                                  b->out2[IMPL_KEDR], &b->count[IMPL_KEDR]);
}

/* rle (vals NULL: run lengths) and reduce_by_key (sums of vals), walked run by run. */
static kedr_status check_runs(bench *b, const uint32_t *vals, const char *what)
{
    size_t runs = b->expected;
    const uint32_t *key = b->h_in;
    uint32_t *uk, *agg;
    if (b->count[IMPL_KEDR] != runs)
        return mismatch(b, "n_runs %zu, expected %zu", b->count[IMPL_KEDR], runs);
    KEDR_TRY(same_count_as_cub(b, "n_runs"));
    KEDR_TRY(fetch(b, (void **)&uk, b->out[IMPL_KEDR], runs * 4, "the unique keys"));
    KEDR_TRY(fetch(b, (void **)&agg, b->out2[IMPL_KEDR], runs * 4, what));
    for (size_t i = 0, r = 0; i < b->n; r++) {
        uint32_t a = 0;
        size_t first = i;
        for (; i < b->n && key[i] == key[first]; i++)
            a += vals ? vals[i] : 1;
        if (uk[r] != key[first] || agg[r] != a)
            return mismatch(b, "run %zu (from %zu): key %u, %s %u; expected %u and %u", r, first,
                            uk[r], what, agg[r], key[first], a);
    }
    KEDR_TRY(same_as_cub(b, uk, b->out[IMPL_CUB], runs, 4, "unique keys"));
    return same_as_cub(b, agg, b->out2[IMPL_CUB], runs, 4, what);
}

static kedr_status check_reduce_by_key(bench *b) { return check_runs(b, b->h_in2, "sum"); }
static kedr_status check_rle(bench *b) { return check_runs(b, NULL, "run length"); }

/* A square f32 matrix of about n elements. */
static kedr_status setup_transpose(bench *b)
{
    size_t s = (size_t)sqrt((double)b->n);
    while (s * s > b->n)
        s--;
    while ((s + 1) * (s + 1) <= b->n)
        s++;
    b->side = s;
    b->len = s * s;
    b->bytes = 8.0 * b->len;
    KEDR_TRY(outputs(b, b->out, b->len * 4, "the transpose"));
    KEDR_TRY(dev_alloc(b, &b->in, b->len * 4, "the matrix"));
    KEDR_TRY(host_alloc(b, &b->h_in, b->len * 4, "the matrix"));
    float *h = b->h_in;
    uint64_t seed = b->seed ^ mix64(11);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < b->len; i++)
        h[i] = (float)((draw32(seed, i) >> 8) + 1) * 5.9604644775390625e-08f - 0.5f;
    return kedr_upload(b->ctx, b->in, h, b->len * 4);
}

static kedr_status call_transpose(bench *b, int impl)
{
    (void)impl;
    return kedr_transpose(b->ctx, KEDR_F32, b->in, b->out[IMPL_KEDR], b->side, b->side);
}

static kedr_status check_transpose(bench *b)
{
    size_t s = b->side, bad = b->len;
    const uint32_t *x = b->h_in;
    uint32_t *out;
    KEDR_TRY(fetch(b, (void **)&out, b->out[IMPL_KEDR], b->len * 4, "the transpose"));
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (size_t r = 0; r < s; r++)
        for (size_t c = 0; c < s; c++)
            if (out[c * s + r] != x[r * s + c] && c * s + r < bad)
                bad = c * s + r;
    if (bad < b->len)
        return mismatch(b, "out[%zu][%zu] differs from in[%zu][%zu]", bad / s, bad % s, bad % s,
                        bad / s);
    return KEDR_OK;
}

static const kedr_rng_stream bench_rng = {0x5EEDBA5Eull, 3, 1};

static kedr_status setup_rng_uniform(bench *b)
{
    b->len = b->n;
    b->bytes = 4.0 * b->n;
    return outputs(b, b->out, b->n * 4, "the output");
}

static kedr_status call_rng_uniform(bench *b, int impl)
{
    (void)impl;
    return kedr_rng_uniform(b->ctx, KEDR_U32, bench_rng, b->out[IMPL_KEDR], b->n);
}

static kedr_status check_rng_uniform(bench *b)
{
    uint32_t *out;
    size_t n = b->n, draws = (n + 3) / 4, bad = n;
    KEDR_TRY(fetch(b, (void **)&out, b->out[IMPL_KEDR], n * 4, "the output"));
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (size_t d = 0; d < draws; d++) {
        kedr_u32x4 r = kedr_rng_draw(bench_rng.seed, d, bench_rng.step, bench_rng.purpose);
        for (size_t w = 0; w < 4 && 4 * d + w < n; w++)
            if (out[4 * d + w] != r.v[w] && 4 * d + w < bad)
                bad = 4 * d + w;
    }
    if (bad < n)
        return mismatch(b, "out[%zu] = %u, expected word %zu of Philox draw %zu", bad, out[bad],
                        bad % 4, bad / 4);
    return KEDR_OK;
}

static const bench_spec specs[] = {
    {"reduce", "kedr_reduce", setup_reduce, call_reduce, check_reduce, 1},
    {"scan", "kedr_scan_exclusive", setup_scan, call_scan, check_scan, 1},
    {"select", "kedr_select_if", setup_select, call_select, check_select, 1},
    {"partition", "kedr_partition_if", setup_partition, call_partition, check_partition, 1},
    {"histogram", "kedr_histogram_even", setup_histogram, call_histogram, check_histogram, 1},
    {"sort_keys", "kedr_sort_keys", setup_sort_keys, call_sort_keys, check_sort_keys, 1},
    {"sort_pairs", "kedr_sort_pairs", setup_sort_pairs, call_sort_pairs, check_sort_pairs, 1},
    {"sort_keys_u64", "kedr_sort_keys", setup_sort_keys_u64, call_sort_keys_u64,
     check_sort_keys_u64, 1},
    {"counting_sort", "kedr_counting_sort", setup_counting_sort, call_counting_sort,
     check_counting_sort, 1},
    {"reduce_by_key", "kedr_reduce_by_key", setup_reduce_by_key, call_reduce_by_key,
     check_reduce_by_key, 1},
    {"rle", "kedr_run_length_encode", setup_rle, call_rle, check_rle, 1},
    {"transpose", "kedr_transpose", setup_transpose, call_transpose, check_transpose, 0},
    {"rng_uniform", "kedr_rng_uniform", setup_rng_uniform, call_rng_uniform, check_rng_uniform,
     0},
};
#define NSPECS (sizeof specs / sizeof specs[0])

/* ---- timing ------------------------------------------------------------------------------- */

typedef struct {
    bench *b;
    kedr_status (*call)(bench *, int);
    int impl;
} timed_call;

static kedr_status call_once(void *arg)
{
    timed_call *t = arg;
    return t->call(t->b, t->impl);
}

/* One warm-up call, then the median of `repeats` timed calls, in ms. */
static kedr_status time_calls(bench *b, kedr_status (*call)(bench *, int), int impl, int repeats,
                              double *ms)
{
    timed_call t = {b, call, impl};
    double sec = 0;
    KEDR_TRY(bench_time(b->ctx, call_once, &t, repeats, &sec));
    *ms = 1e3 * sec;
    return KEDR_OK;
}


/* ---- the driver --------------------------------------------------------------------------- */

static kedr_status call_copy(bench *b, int impl)
{
    (void)impl;
    return kedr_copy(b->ctx, b->out[IMPL_KEDR], b->in, b->n * 4);
}

/* The yardstick for every row: n u32 copied within the context's memory (bytes read + written). */
static kedr_status copy_bandwidth(bench *b, int repeats, double *gbps)
{
    double ms = 0;
    uint32_t *back;
    b->name = "copy";
    KEDR_TRY(dev_alloc(b, &b->out[IMPL_KEDR], b->n * 4, "the copy"));
    KEDR_TRY(input_u32(b, &b->h_in, &b->in, b->n, 12));
    KEDR_TRY(time_calls(b, call_copy, IMPL_KEDR, repeats, &ms));
    KEDR_TRY(fetch(b, (void **)&back, b->out[IMPL_KEDR], b->n * 4, "the copy"));
    if (memcmp(back, b->h_in, b->n * 4) != 0)
        return mismatch(b, "kedr_copy did not copy the input");
    *gbps = 8.0 * b->n / (ms * 1e-3) / 1e9;
    return KEDR_OK;
}

/* Adds "what failed" in front of the last error message. */
static kedr_status failed(kedr_status s, const char *name, const char *what)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", kedr_last_error());
    return kedr_fail(s, "%s: %s failed: %s%s", name, what, msg,
                     s == KEDR_ERR_NOMEM ? " (try a smaller --n)" : "");
}

static kedr_status run_one(bench *b, const bench_spec *sp, struct cub_ref *cub, int repeats,
                           bench_row *row)
{
    *row = (bench_row){sp->name, b->n, 0, -1, 0, "error", ""};
    b->name = sp->name;
    b->cub = sp->has_cub && b->n <= (size_t)INT_MAX ? cub : NULL;
    kedr_status s = sp->setup(b);
    row->n = b->len ? b->len : b->n;
    row->bytes = b->bytes;
    if (s == KEDR_OK && (s = time_calls(b, sp->call, IMPL_KEDR, repeats, &row->ms)) != KEDR_OK)
        s = failed(s, sp->name, sp->prim);
    if (s == KEDR_OK && b->cub) {
        kedr_scratch_trim(b->ctx); /* leave CUB the memory kedr's scratch held */
        if ((s = time_calls(b, sp->call, IMPL_CUB, repeats, &row->cub_ms)) != KEDR_OK)
            s = failed(s, sp->name, "the CUB yardstick");
    }
    if (s == KEDR_OK)
        s = sp->check(b);
    if (s == KEDR_OK)
        row->status = "ok";
    else if (b->mismatched)
        row->status = "MISMATCH";
    if (s != KEDR_OK)
        snprintf(row->message, sizeof row->message, "%s", kedr_last_error());
    bench_release(b);
    return s;
}

typedef struct {
    char device[320];
    const char *backend, *commit;
    char date[32];
    double copy_gbps;
    size_t n;
    int repeats;
} bench_header;

static kedr_status write_json(const char *path, const bench_header *h, const bench_row *rows,
                              int nrows)
{
    kedr_file_writer w;
    bench_meta m = {"prim", h->device, h->backend, h->date, h->commit};
    KEDR_TRY(bench_json_open(&w, path, &m));
    FILE *f = KEDR_FILE(&w);
    fprintf(f, ",\n  \"n\": %zu,\n  \"repeats\": %d,\n  \"copy_gbps\": ", h->n, h->repeats);
    bench_json_number(f, h->copy_gbps, 1);
    fputs(",\n  \"results\": [", f);
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        int ok = strcmp(r->status, "ok") == 0, cub = ok && r->cub_ms > 0;
        double sec = r->ms * 1e-3;
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        kedr_json_string(f, r->name);
        fprintf(f, ", \"n\": %zu, \"ms\": ", r->n);
        bench_json_number(f, r->ms, ok);
        fputs(", \"gelems\": ", f);
        bench_json_number(f, r->n / sec / 1e9, ok);
        fputs(", \"gbps\": ", f);
        bench_json_number(f, r->bytes / sec / 1e9, ok);
        fputs(", \"frac_copy\": ", f);
        bench_json_number(f, r->bytes / sec / 1e9 / h->copy_gbps, ok);
        fputs(", \"cub_ms\": ", f);
        bench_json_number(f, r->cub_ms, cub);
        fputs(", \"ratio_vs_cub\": ", f);
        bench_json_number(f, r->cub_ms / r->ms, cub);
        bench_json_status(f, r->status, r->message);
        fputc('}', f);
    }
    return bench_json_close(&w);
}

static void print_row(const bench_row *r, double copy_gbps)
{
    if (strcmp(r->status, "ok") != 0) {
        printf("%-14s %11zu  %s\n", r->name, r->n, r->status);
        fflush(stdout);
        return;
    }
    double sec = r->ms * 1e-3, gbps = r->bytes / sec / 1e9;
    printf("%-14s %11zu %9.3f %9.2f %9.1f %7.2f", r->name, r->n, r->ms, r->n / sec / 1e9, gbps,
           gbps / copy_gbps);
    if (r->cub_ms > 0)
        printf(" %9.3f %7.2f\n", r->cub_ms, r->cub_ms / r->ms);
    else
        printf(" %9s %7s\n", "-", "-");
    fflush(stdout);
}

kedr_status kedr_bench_prim(kedr_ctx *ctx, const kedr_bench_prim_opts *opts)
{
    if (!ctx || !opts)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_bench_prim: %s is NULL", ctx ? "opts" : "ctx");
    if (opts->n == 0 || opts->repeats < 1)
        return kedr_fail(KEDR_ERR_INVALID,
                         "kedr_bench_prim: n = %zu, repeats = %d: expected both at least 1",
                         opts->n, opts->repeats);
    int nselected = 0;
    for (size_t i = 0; i < NSPECS; i++)
        nselected += bench_in_list(opts->only, specs[i].name);
    if (nselected == 0)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_bench_prim: --only '%s' names no benchmark",
                         opts->only);

    struct cub_ref *cub = NULL;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        KEDR_TRY(cub_ref_create(ctx, &cub));
#endif
    bench_header h;
    memset(&h, 0, sizeof h);
    bench_device_name(ctx, h.device, sizeof h.device);
    h.backend = kedr_backend_name(kedr_ctx_backend(ctx));
    h.commit = bench_commit(KEDR_GIT_COMMIT);
    bench_utc_date(h.date, sizeof h.date);
    h.n = opts->n;
    h.repeats = opts->repeats;

    printf("kedr bench prim: %s (%s), %s, commit %s\n", h.device, h.backend, h.date, h.commit);
    bench b = {.ctx = ctx, .n = opts->n, .seed = 0x6B656472ull /* "kedr" */};
    kedr_status s = copy_bandwidth(&b, opts->repeats, &h.copy_gbps);
    bench_release(&b);
    if (s != KEDR_OK) {
#ifdef KEDR_HAVE_CUDA
        cub_ref_destroy(cub);
#endif
        return s;
    }
    printf("copy bandwidth %.1f GB/s (n = %zu u32, read + written); median of %d after a "
           "warm-up\n",
           h.copy_gbps, opts->n, opts->repeats);
    if (cub && opts->n > (size_t)INT_MAX)
        printf("CUB runs with int offsets: no CUB columns at n > %d\n", INT_MAX);
    printf("\n%-14s %11s %9s %9s %9s %7s %9s %7s\n", "benchmark", "n", "ms", "Gelem/s", "GB/s",
           "of copy", "CUB ms", "vs CUB");
    fflush(stdout);

    bench_row rows[NSPECS];
    int nrows = 0, nfailed = 0;
    kedr_status first = KEDR_OK;
    char names[256] = "";
    for (size_t i = 0; i < NSPECS; i++) {
        if (!bench_in_list(opts->only, specs[i].name))
            continue;
        bench_row *r = &rows[nrows++];
        kedr_status bs = run_one(&b, &specs[i], cub, opts->repeats, r);
        if (bs != KEDR_OK) {
            fflush(stdout);
            fprintf(stderr, "kedr bench prim: %s\n", kedr_last_error());
            if (first == KEDR_OK)
                first = bs;
            nfailed++;
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     nfailed > 1 ? ", " : "", specs[i].name);
        }
        print_row(r, h.copy_gbps);
        if (bs == KEDR_ERR_CUDA) { /* the GPU context is likely broken: stop here */
            fprintf(stderr, "kedr bench prim: stopping after a CUDA error\n");
            break;
        }
    }
    printf("\nGB/s: least bytes a call must move / time; of copy: that / copy bandwidth;\n"
           "vs CUB: CUB time / kedr time (above 1: kedr is faster)\n");
#ifdef KEDR_HAVE_CUDA
    cub_ref_destroy(cub);
#endif
    if (opts->json) {
        s = write_json(opts->json, &h, rows, nrows);
        if (s != KEDR_OK)
            return s;
        printf("wrote %s\n", opts->json);
    }
    if (nfailed)
        return kedr_fail(first, "%d of %d benchmarks failed: %s", nfailed, nrows, names);
    return KEDR_OK;
}
