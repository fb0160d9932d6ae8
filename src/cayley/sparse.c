/* Sparse breadth-first search, for groups far smaller than the ambient S_n (cpu version and
 * the search itself, which runs on either back end through the primitives).
 *
 * States are one to three u64 words (sparse.h) and each layer is a sorted array of states in the
 * context's memory, one array per word. A level takes the layer L_s in chunks; for each chunk it
 *   1. expands: the chunk's neighbours, chunk size x generators states;
 *   2. sorts them (kedr_sort_keys, u64, only the bits a state uses; states of several words by
 *      LSD over the words: kedr_sort_pairs by word 0 carrying the candidates' indices, then
 *      stably by each higher word gathered through those indices, then a gather of the lower
 *      words);
 *   3. flags the first of each run of equal states that is in none of: L_{s-1}, L_s and the part
 *      of L_{s+1} already found, when the generating set is closed under inverses (the
 *      neighbours of L_s then lie in L_{s-1}, L_s or L_{s+1}); otherwise every visited state
 *      (kept as one sorted array, merged with each new layer) and that part of L_{s+1};
 *   4. selects the flagged states (kedr_select_flagged) and merges them into L_{s+1}.
 * Memory (bytes), for a layer of m states of W words, g generators and a chunk of c states, at
 * most
 *   8 W (|L_{s-1}| + m) + 16 W min(m g, |G| - reached) + (40 W + 1) c g   (+ 16 c g if W > 1)
 * (the next layer and a merge target; per candidate: two sort buffers, a flag, the selection
 * and a share of the next layer; for W > 1 two index arrays and a key buffer), plus
 * 8 W (2 visited + next) when the set is not inverse-closed; the primitives' scratch (the radix
 * sort's) comes on top. c is the whole layer when that fits the memory limit, otherwise as
 * much as fits. */
#include "sparse.h"
#include "growth.h"
#include "sparse_checkpoint.h"
#include "core/internal.h"
#include "kedr/prim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Per candidate and state word: sort input and output, selected copy, and a share of the next
 * layer and the merge target; and a flag (plan_level). */
#define CANDIDATE_WORD_BYTES 40
/* Per candidate with several words: two u32 index arrays and a key buffer. */
#define CANDIDATE_WIDE_BYTES 16
/* Below this many items a loop runs on one thread. */
#define CPU_PARALLEL_ITEMS 16384

/* A growable array of states in the context's memory, one array per word. */
typedef struct {
    uint64_t *w[CAYLEY_MAX_WORDS];
    size_t n, cap;
} svec;

static void svec_release(kedr_ctx *ctx, svec *v)
{
    for (int w = 0; w < CAYLEY_MAX_WORDS; w++)
        kedr_free(ctx, v->w[w]);
    memset(v, 0, sizeof *v);
}

/* Makes room for cap states of `words` words; the contents are lost when it has to grow. */
static kedr_status svec_reserve(kedr_ctx *ctx, svec *v, size_t cap, int words)
{
    if (v->cap >= cap)
        return KEDR_OK;
    svec_release(ctx, v);
    for (int w = 0; w < words; w++)
        KEDR_TRY(kedr_alloc(ctx, (void **)&v->w[w], cap * sizeof(uint64_t)));
    v->cap = cap;
    return KEDR_OK;
}

static void svec_swap(svec *a, svec *b)
{
    svec t = *a;
    *a = *b;
    *b = t;
}

/* The word arrays of v from state off on. */
static void svec_at(const svec *v, size_t off, int words, uint64_t **out)
{
    for (int w = 0; w < CAYLEY_MAX_WORDS; w++)
        out[w] = w < words && v->w[w] ? v->w[w] + off : NULL;
}

/* ---- cpu: membership and merges by sweeps over sorted arrays ----
 * One binary search per element reads scattered memory; on the cpu a block of sorted
 * candidates instead walks each sorted array forwards, galloping from where the last
 * candidate stopped (exponential then binary search, O(log gap) a step), and a merge splits
 * its output by merge path (Odeh, Green, Mwassi, Shmueli & Birk, "Merge Path - parallel
 * merging made simple", IPDPSW 2012) and merges each piece sequentially. The arrays hold
 * states of `words` words (one array per word), as in sparse.h. */

/* Items per block of the sweeps. */
#define SWEEP_BLOCK 65536

/* The first index >= from of the sorted states a[0..n) that is not below key, when those
 * before from are below it. */
static size_t gallop(const uint64_t *const *a, size_t n, size_t from, const uint64_t *key,
                     int words)
{
    if (from >= n || cayley_wide_cmp(a, from, key, words) >= 0)
        return from;
    size_t lo = from, hi, step = 1; /* a[lo] < key */
    for (;;) {
        hi = lo + step;
        if (hi >= n) {
            hi = n;
            break;
        }
        if (cayley_wide_cmp(a, hi, key, words) >= 0)
            break;
        lo = hi;
        step *= 2;
    }
    lo++; /* the answer is in [lo, hi]: a binary search of a[lo..hi) */
    const uint64_t *sub[CAYLEY_MAX_WORDS];
    for (int w = 0; w < words; w++)
        sub[w] = a[w] + lo;
    return lo + cayley_wide_rank_in(sub, hi - lo, key, words);
}

static void flag_sweep(int threads, const uint64_t *const *cand, size_t n,
                       const cayley_wide_sets *s, uint8_t *flags)
{
    int words = s->words;
    long long blocks = (long long)((n + SWEEP_BLOCK - 1) / SWEEP_BLOCK);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (blocks > 1)
    for (long long b = 0; b < blocks; b++) {
        size_t lo = (size_t)b * SWEEP_BLOCK, hi = lo + SWEEP_BLOCK < n ? lo + SWEEP_BLOCK : n;
        size_t pos[3] = {0, 0, 0};
        for (size_t i = lo; i < hi; i++) {
            uint64_t x[CAYLEY_MAX_WORDS] = {0, 0, 0};
            for (int w = 0; w < words; w++)
                x[w] = cand[w][i];
            uint8_t f = !(i > 0 && cayley_wide_cmp(cand, i - 1, x, words) == 0);
            for (int j = 0; j < 3 && f; j++)
                if (s->n[j]) {
                    pos[j] = gallop(s->a[j], s->n[j], pos[j], x, words);
                    f = !(pos[j] < s->n[j] && cayley_wide_cmp(s->a[j], pos[j], x, words) == 0);
                }
            flags[i] = f;
        }
    }
}

/* How many of the first d outputs of merging the disjoint sorted a and b come from a. */
static size_t merge_split(const uint64_t *const *a, size_t na, const uint64_t *const *b,
                          size_t nb, size_t d, int words)
{
    size_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t key[CAYLEY_MAX_WORDS] = {0, 0, 0};
        for (int w = 0; w < words; w++)
            key[w] = b[w][d - mid - 1];
        if (cayley_wide_cmp(a, mid, key, words) < 0) /* a[mid] comes before b[d - mid - 1] */
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void merge_sweep(int threads, int words, const uint64_t *const *a, size_t na,
                        const uint64_t *const *b, size_t nb, uint64_t *const *out)
{
    size_t total = na + nb;
    long long pieces = (long long)((total + SWEEP_BLOCK - 1) / SWEEP_BLOCK);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (pieces > 1)
    for (long long p = 0; p < pieces; p++) {
        size_t d0 = (size_t)p * SWEEP_BLOCK, d1 = d0 + SWEEP_BLOCK < total ? d0 + SWEEP_BLOCK : total;
        size_t i = merge_split(a, na, b, nb, d0, words), i1 = merge_split(a, na, b, nb, d1, words);
        size_t j = d0 - i, j1 = d1 - i1;
        for (size_t d = d0; d < d1; d++) {
            int from_a = j >= j1;
            if (!from_a && i < i1) {
                uint64_t key[CAYLEY_MAX_WORDS] = {0, 0, 0};
                for (int w = 0; w < words; w++)
                    key[w] = b[w][j];
                from_a = cayley_wide_cmp(a, i, key, words) < 0;
            }
            for (int w = 0; w < words; w++)
                out[w][d] = from_a ? a[w][i] : b[w][j];
            if (from_a)
                i++;
            else
                j++;
        }
    }
}

static kedr_status cpu_expand(kedr_ctx *ctx, const kedr_cayley_group *g, const uint64_t *layer,
                              size_t n, uint64_t *out)
{
    int ngens = g->ngens;
    long long total = (long long)n;
#pragma omp parallel for schedule(static) num_threads(ctx->threads) \
    if (total * ngens > CPU_PARALLEL_ITEMS)
    for (long long i = 0; i < total; i++)
        for (int k = 0; k < ngens; k++)
            out[(size_t)i * (size_t)ngens + (size_t)k] = cayley_sparse_neighbour(g, layer[i], k);
    return KEDR_OK;
}

static kedr_status cpu_flag(kedr_ctx *ctx, const uint64_t *cand, size_t n,
                            const cayley_sparse_sets *s, uint8_t *flags)
{
    cayley_wide_sets w;
    memset(&w, 0, sizeof w);
    w.words = 1;
    for (int j = 0; j < 3; j++) {
        w.a[j][0] = s->a[j];
        w.n[j] = s->n[j];
    }
    flag_sweep(ctx->threads, &cand, n, &w, flags);
    return KEDR_OK;
}

/* out = the sorted union of the disjoint sorted arrays a and b (cuda: each element goes to its
 * index plus the number of elements of the other array below it). */
static kedr_status cpu_merge(kedr_ctx *ctx, const uint64_t *a, size_t na, const uint64_t *b,
                             size_t nb, uint64_t *out)
{
    merge_sweep(ctx->threads, 1, &a, na, &b, nb, &out);
    return KEDR_OK;
}

/* ---- several-word states (and one-word base images: expand_based) ---- */

static kedr_status cpu_expand_based(kedr_ctx *ctx, const kedr_cayley_group *g,
                                    const uint64_t *const *layer, size_t n, uint64_t *const *out)
{
    int ngens = g->ngens, words = g->state_words;
    long long total = (long long)n;
#pragma omp parallel for schedule(static) num_threads(ctx->threads) \
    if (total * ngens > CPU_PARALLEL_ITEMS)
    for (long long i = 0; i < total; i++)
        for (int k = 0; k < ngens; k++)
            for (int w = 0; w < words; w++)
                out[w][(size_t)i * (size_t)ngens + (size_t)k] =
                    cayley_based_apply(layer[w][i], g->perm[k], cayley_word_fields(g, w));
    return KEDR_OK;
}

static kedr_status cpu_flag_wide(kedr_ctx *ctx, const uint64_t *const *cand, size_t n,
                                 const cayley_wide_sets *s, uint8_t *flags)
{
    flag_sweep(ctx->threads, cand, n, s, flags);
    return KEDR_OK;
}

/* merge for states of several words. */
static kedr_status cpu_merge_wide(kedr_ctx *ctx, int words, const uint64_t *const *a, size_t na,
                                  const uint64_t *const *b, size_t nb, uint64_t *const *out)
{
    merge_sweep(ctx->threads, words, a, na, b, nb, out);
    return KEDR_OK;
}

static kedr_status cpu_gather(kedr_ctx *ctx, const uint64_t *in, const uint32_t *idx, size_t n,
                              uint64_t *out)
{
    long long total = (long long)n;
#pragma omp parallel for schedule(static) num_threads(ctx->threads) \
    if (total > CPU_PARALLEL_ITEMS)
    for (long long i = 0; i < total; i++)
        out[i] = in[idx[i]];
    return KEDR_OK;
}

static kedr_status cpu_iota(kedr_ctx *ctx, uint32_t *idx, size_t n)
{
    long long total = (long long)n;
#pragma omp parallel for schedule(static) num_threads(ctx->threads) \
    if (total > CPU_PARALLEL_ITEMS)
    for (long long i = 0; i < total; i++)
        idx[i] = (uint32_t)i;
    return KEDR_OK;
}

/* The back end's primitives, chosen once when the search begins. */
typedef struct {
    kedr_status (*expand)(kedr_ctx *ctx, const kedr_cayley_group *g, const uint64_t *layer,
                          size_t n, uint64_t *out);
    kedr_status (*flag)(kedr_ctx *ctx, const uint64_t *cand, size_t n,
                        const cayley_sparse_sets *s, uint8_t *flags);
    kedr_status (*merge)(kedr_ctx *ctx, const uint64_t *a, size_t na, const uint64_t *b,
                         size_t nb, uint64_t *out);
    kedr_status (*expand_based)(kedr_ctx *ctx, const kedr_cayley_group *g,
                                const uint64_t *const *layer, size_t n, uint64_t *const *out);
    kedr_status (*flag_wide)(kedr_ctx *ctx, const uint64_t *const *cand, size_t n,
                             const cayley_wide_sets *s, uint8_t *flags);
    kedr_status (*merge_wide)(kedr_ctx *ctx, int words, const uint64_t *const *a, size_t na,
                              const uint64_t *const *b, size_t nb, uint64_t *const *out);
    kedr_status (*gather)(kedr_ctx *ctx, const uint64_t *in, const uint32_t *idx, size_t n,
                          uint64_t *out);
    kedr_status (*iota)(kedr_ctx *ctx, uint32_t *idx, size_t n);
} sparse_ops;

static const sparse_ops cpu_ops = {cpu_expand,     cpu_flag,       cpu_merge,  cpu_expand_based,
                                   cpu_flag_wide,  cpu_merge_wide, cpu_gather, cpu_iota};
#ifdef KEDR_HAVE_CUDA
static const sparse_ops cuda_ops = {
    cayley_sparse_expand_cuda, cayley_sparse_flag_cuda, cayley_sparse_merge_cuda,
    cayley_wide_expand_cuda,   cayley_wide_flag_cuda,   cayley_wide_merge_cuda,
    cayley_gather_cuda,        cayley_iota_cuda};
#endif

static const sparse_ops *choose_ops(kedr_ctx *ctx)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return &cuda_ops;
#else
    (void)ctx;
#endif
    return &cpu_ops;
}

/* Bits of word w of the key that a state can use, for the radix sort (at least 1: 0 would
 * mean the whole key). */
static int state_bits(const kedr_cayley_group *g, int w)
{
    if (cayley_sparse_based(g)) {
        int f = cayley_word_fields(g, w);
        return f ? CAYLEY_FIELD_BITS * f : 1;
    }
    if (g->kind == KEDR_CAYLEY_PERM_SUBGROUP)
        return 4 * g->n;
    if (g->kind == KEDR_CAYLEY_CUBE2)
        return 8 * CAYLEY_CUBE2_CORNERS;
    int bits = 1;
    while (bits < 64 && (g->order - 1) >> bits)
        bits++;
    return bits;
}

kedr_status cayley_sparse_chosen(const kedr_cayley_group *g, const kedr_cayley_options *opt,
                                 int *sparse)
{
    kedr_cayley_mode mode = opt ? opt->mode : KEDR_CAYLEY_AUTO;
    int sparse_kind = g->kind == KEDR_CAYLEY_PERM_SUBGROUP || g->kind == KEDR_CAYLEY_CUBE2;
    if (mode != KEDR_CAYLEY_AUTO && mode != KEDR_CAYLEY_DENSE && mode != KEDR_CAYLEY_SPARSE)
        return kedr_fail(KEDR_ERR_INVALID,
                         "kedr_cayley_growth: opt->mode is %d, expected AUTO, DENSE or SPARSE",
                         (int)mode);
    if (mode == KEDR_CAYLEY_DENSE && sparse_kind)
        return kedr_fail(KEDR_ERR_INVALID,
                         "kedr_cayley_growth: %s has no ranking for dense mode: use sparse mode",
                         g->spec);
    *sparse = mode == KEDR_CAYLEY_SPARSE || (mode == KEDR_CAYLEY_AUTO && sparse_kind);
    return KEDR_OK;
}

typedef struct {
    kedr_ctx *ctx;
    const kedr_cayley_group *g;
    const sparse_ops *ops;
    int closed;
    int words; /* g->state_words */
    svec prev, cur, next, visited, merged; /* merged: merge target */
    svec cand, sorted, piece;              /* chunk buffers */
    uint8_t *flags;
    size_t flags_cap;
    /* several words: candidate indices for the LSD sort over the words, and a key buffer */
    uint32_t *idx[2];
    uint64_t *keys;
    size_t wide_cap;
    size_t limit;
    int strict; /* the limit was given: keep below it at every step */
    const char *limit_where;
    size_t peak;
} sparse_search;

static size_t held_bytes(const sparse_search *S)
{
    return 8 * (size_t)S->words *
               (S->prev.cap + S->cur.cap + S->next.cap + S->visited.cap + S->merged.cap +
                S->cand.cap + S->sorted.cap + S->piece.cap) +
           S->flags_cap + CANDIDATE_WIDE_BYTES * S->wide_cap;
}

static void release_chunk_buffers(sparse_search *S)
{
    kedr_free(S->ctx, S->flags);
    S->flags = NULL;
    S->flags_cap = 0;
    kedr_free(S->ctx, S->idx[0]);
    kedr_free(S->ctx, S->idx[1]);
    kedr_free(S->ctx, S->keys);
    S->idx[0] = S->idx[1] = NULL;
    S->keys = NULL;
    S->wide_cap = 0;
}

static void release_all(sparse_search *S)
{
    svec *all[] = {&S->prev, &S->cur, &S->next, &S->visited, &S->merged, &S->cand, &S->sorted,
                   &S->piece};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        svec_release(S->ctx, all[i]);
    release_chunk_buffers(S);
}

/* out = the sorted union of the disjoint sorted arrays a and b. */
static kedr_status merge_svec(sparse_search *S, const svec *a, const svec *b, svec *out)
{
    if (S->words == 1)
        return S->ops->merge(S->ctx, a->w[0], a->n, b->w[0], b->n, out->w[0]);
    uint64_t *pa[CAYLEY_MAX_WORDS], *pb[CAYLEY_MAX_WORDS], *po[CAYLEY_MAX_WORDS];
    svec_at(a, 0, S->words, pa);
    svec_at(b, 0, S->words, pb);
    svec_at(out, 0, S->words, po);
    return S->ops->merge_wide(S->ctx, S->words, (const uint64_t *const *)pa, a->n,
                      (const uint64_t *const *)pb, b->n, po);
}

/* Merges b into a (a and b disjoint), through the merge target. */
static kedr_status merge_into(sparse_search *S, svec *a, const svec *b)
{
    KEDR_TRY(svec_reserve(S->ctx, &S->merged, a->n + b->n, S->words));
    KEDR_TRY(merge_svec(S, a, b, &S->merged));
    S->merged.n = a->n + b->n;
    svec_swap(a, &S->merged);
    return KEDR_OK;
}

/* Drops the buffers a level only uses inside itself (their capacities are those of earlier
 * levels), so that what the level holds is what plan_level counted. */
static void release_level_buffers(sparse_search *S)
{
    svec *bufs[] = {&S->next, &S->merged, &S->cand, &S->sorted, &S->piece};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        svec_release(S->ctx, bufs[i]);
    release_chunk_buffers(S);
}

/* The chunk size for level s, or KEDR_ERR_NOMEM saying what the level needs. Counted: the
 * arrays kept between levels at their capacity; the next layer and the merge target, each at
 * most the bound on the next layer plus a chunk's candidates; per candidate its two sort
 * buffers, flag and selected copy (and the index arrays of several-word states); without
 * inverse closure, the merge of visited and next. Several-word states index candidates in
 * 32 bits, which bounds a chunk. */
static kedr_status plan_level(sparse_search *S, int s, uint64_t remaining, size_t *chunk)
{
    const kedr_cayley_group *g = S->g;
    size_t m = S->cur.n, ngens = (size_t)g->ngens;
    double W = (double)S->words;
    uint64_t bound = m > remaining / ngens ? remaining : m * ngens;
    double fixed = 8.0 * W * ((double)S->prev.cap + (double)S->cur.cap + (double)S->visited.cap) +
                   16.0 * W * (double)bound;
    if (!S->closed)
        fixed += 8.0 * W * ((double)S->visited.n + (double)bound);
    double per = ((double)CANDIDATE_WORD_BYTES * W + 1.0 +
                  (S->words > 1 ? (double)CANDIDATE_WIDE_BYTES : 0.0)) * (double)ngens;
    double room = (double)S->limit - fixed;
    double c = room > 0 ? room / per : 0;
    if (S->words > 1 && c > (double)(UINT32_MAX / ngens))
        c = (double)(UINT32_MAX / ngens);
    if (c >= 1) {
        *chunk = c >= (double)m ? m : (size_t)c;
        if (S->strict || *chunk < m)
            release_level_buffers(S);
        return KEDR_OK;
    }
    char need_s[32], limit_s[32];
    kedr_format_bytes(fixed + per, need_s, sizeof need_s);
    kedr_format_bytes((double)S->limit, limit_s, sizeof limit_s);
    return kedr_fail(KEDR_ERR_NOMEM,
                     "%s: level %d needs at least %s in sparse mode (layer of %zu states, "
                     "%zu generators), more than the %s of %s",
                     g->spec, s, need_s, m, ngens, limit_s, S->limit_where);
}

/* S->sorted = the n candidates of S->cand sorted, several words: LSD over the words, each pass
 * a stable sort by one word carrying the candidates' indices. */
static kedr_status sort_wide(sparse_search *S, size_t n)
{
    kedr_ctx *ctx = S->ctx;
    int W = S->words;
    KEDR_TRY(S->ops->iota(ctx, S->idx[0], n));
    KEDR_TRY(kedr_sort_pairs(ctx, KEDR_U64, S->cand.w[0], S->keys, S->idx[0], S->idx[1], 4, n, 0,
                             state_bits(S->g, 0)));
    for (int w = 1; w < W; w++) {
        KEDR_TRY(S->ops->gather(ctx, S->cand.w[w], S->idx[1], n, S->keys));
        KEDR_TRY(kedr_sort_pairs(ctx, KEDR_U64, S->keys, S->sorted.w[w], S->idx[1], S->idx[0], 4,
                                 n, 0, state_bits(S->g, w)));
        uint32_t *t = S->idx[0];
        S->idx[0] = S->idx[1];
        S->idx[1] = t;
    }
    for (int w = 0; w < W - 1; w++)
        KEDR_TRY(S->ops->gather(ctx, S->cand.w[w], S->idx[1], n, S->sorted.w[w]));
    return KEDR_OK;
}

/* One level: S->next = the states at distance s + 1 (sorted). */
static kedr_status level(sparse_search *S, size_t chunk)
{
    kedr_ctx *ctx = S->ctx;
    const kedr_cayley_group *g = S->g;
    size_t ngens = (size_t)g->ngens, m = S->cur.n, most = chunk * ngens;
    int W = S->words;
    KEDR_TRY(svec_reserve(ctx, &S->cand, most, W));
    KEDR_TRY(svec_reserve(ctx, &S->sorted, most, W));
    if (S->flags_cap < most || (W > 1 && S->wide_cap < most)) {
        release_chunk_buffers(S);
        KEDR_TRY(kedr_alloc(ctx, (void **)&S->flags, most));
        S->flags_cap = most;
        if (W > 1) {
            KEDR_TRY(kedr_alloc(ctx, (void **)&S->idx[0], most * 4));
            KEDR_TRY(kedr_alloc(ctx, (void **)&S->idx[1], most * 4));
            KEDR_TRY(kedr_alloc(ctx, (void **)&S->keys, most * 8));
            S->wide_cap = most;
        }
    }
    S->next.n = 0;
    for (size_t off = 0; off < m; off += chunk) {
        /* a long level in chunks stops between two: prev, cur and visited are still those of
         * the last complete level, which the caller saves */
        if (off > 0 && kedr_interrupted())
            return KEDR_ERR_INTERRUPTED;
        size_t c = m - off < chunk ? m - off : chunk, n = c * ngens;
        /* piece may hold the buffer of next after a swap */
        KEDR_TRY(svec_reserve(ctx, &S->piece, n, W));
        uint64_t *layer[CAYLEY_MAX_WORDS];
        svec_at(&S->cur, off, W, layer);
        if (cayley_sparse_based(g))
            KEDR_TRY(S->ops->expand_based(ctx, g, (const uint64_t *const *)layer, c, S->cand.w));
        else
            KEDR_TRY(S->ops->expand(ctx, g, layer[0], c, S->cand.w[0]));
        if (W == 1)
            KEDR_TRY(kedr_sort_keys(ctx, KEDR_U64, S->cand.w[0], S->sorted.w[0], n, 0,
                                    state_bits(g, 0)));
        else
            KEDR_TRY(sort_wide(S, n));
        const svec *against[3] = {S->closed ? &S->prev : &S->visited,
                                  S->closed ? &S->cur : NULL, &S->next};
        if (W == 1) {
            cayley_sparse_sets sets;
            memset(&sets, 0, sizeof sets);
            for (int j = 0; j < 3; j++)
                if (against[j]) {
                    sets.a[j] = against[j]->w[0];
                    sets.n[j] = against[j]->n;
                }
            KEDR_TRY(S->ops->flag(ctx, S->sorted.w[0], n, &sets, S->flags));
        } else {
            cayley_wide_sets sets;
            memset(&sets, 0, sizeof sets);
            sets.words = W;
            for (int j = 0; j < 3; j++)
                if (against[j]) {
                    for (int w = 0; w < W; w++)
                        sets.a[j][w] = against[j]->w[w];
                    sets.n[j] = against[j]->n;
                }
            KEDR_TRY(S->ops->flag_wide(ctx, (const uint64_t *const *)S->sorted.w, n, &sets,
                                       S->flags));
        }
        size_t kept = 0;
        for (int w = 0; w < W; w++)
            KEDR_TRY(kedr_select_flagged(ctx, 8, S->sorted.w[w], S->flags, S->piece.w[w], n,
                                         &kept));
        S->piece.n = kept;
        if (S->next.n == 0)
            svec_swap(&S->next, &S->piece);
        else if (kept)
            KEDR_TRY(merge_into(S, &S->next, &S->piece));
        size_t held = held_bytes(S);
        if (held > S->peak)
            S->peak = held;
    }
    return KEDR_OK;
}

/* ---- checkpoints (sparse_checkpoint.c): the layers the next level needs ---- */

static kedr_status sck_write(sparse_search *S, const char *path, const kedr_cayley_result *res,
                             int complete)
{
    cayley_sck ck;
    memset(&ck, 0, sizeof ck);
    ck.level = res->diameter;
    ck.complete = complete;
    ck.closed = S->closed;
    ck.words = S->words;
    ck.growth = res->growth;
    const svec *arrays[3] = {&S->prev, &S->cur, &S->visited};
    for (int a = 0; a < 3; a++) {
        int used = a == 1 || (a == 0) == (S->closed != 0);
        ck.n[a] = used ? arrays[a]->n : 0;
        for (int w = 0; w < S->words; w++)
            ck.a[a][w] = arrays[a]->w[w];
    }
    return cayley_sck_write(S->ctx, S->g, path, &ck);
}

/* Loads a checkpoint of this group into S's layers and res (growth, diameter, complete). */
static kedr_status sck_read(sparse_search *S, const char *path, kedr_cayley_result *res)
{
    cayley_sck ck;
    memset(&ck, 0, sizeof ck);
    ck.closed = S->closed;
    ck.words = S->words;
    KEDR_TRY(cayley_sck_read(S->g, path, &ck));
    svec *arrays[3] = {&S->prev, &S->cur, &S->visited};
    kedr_status st = KEDR_OK;
    for (int a = 0; a < 3 && st == KEDR_OK; a++) {
        st = svec_reserve(S->ctx, arrays[a], ck.n[a] ? (size_t)ck.n[a] : 1, S->words);
        for (int w = 0; w < S->words && st == KEDR_OK && ck.n[a]; w++)
            st = kedr_upload(S->ctx, arrays[a]->w[w], ck.a[a][w], (size_t)ck.n[a] * 8);
        arrays[a]->n = (size_t)ck.n[a];
    }
    if (st == KEDR_OK) {
        free(res->growth);
        res->growth = ck.growth; /* now the result's */
        ck.growth = NULL;
        res->diameter = ck.level;
        res->complete = ck.complete;
    }
    cayley_sck_free(&ck);
    return st;
}

/* The starting state: the identity alone, or the checkpoint resumed from. */
static kedr_status hook_start(void *self, const kedr_cayley_options *opt,
                              kedr_cayley_result *res)
{
    sparse_search *S = self;
    const kedr_cayley_group *g = S->g;
    if (opt && opt->resume_path)
        return sck_read(S, opt->resume_path, res);
    KEDR_TRY(svec_reserve(S->ctx, &S->cur, 1, S->words));
    if (!S->closed)
        KEDR_TRY(svec_reserve(S->ctx, &S->visited, 1, S->words));
    for (int w = 0; w < S->words; w++) {
        uint64_t id = cayley_sparse_based(g) ? cayley_based_identity(g, w)
                                             : cayley_sparse_identity(g);
        KEDR_TRY(kedr_upload(S->ctx, S->cur.w[w], &id, sizeof id));
        if (!S->closed)
            KEDR_TRY(kedr_upload(S->ctx, S->visited.w[w], &id, sizeof id));
    }
    S->cur.n = 1;
    S->visited.n = S->closed ? 0 : 1;
    size_t l0 = 0, c0 = 0;
    return cayley_push_level(res, &l0, &c0, 1);
}

/* A checkpoint that says the search had ended is believed once its last layer, expanded
 * again, gives nothing new (the file cannot prove it: a flipped flag would end a search early). */
static kedr_status hook_confirm_ended(void *self, const kedr_cayley_options *opt,
                                      const kedr_cayley_result *res)
{
    sparse_search *S = self;
    size_t chunk = 0;
    KEDR_TRY(plan_level(S, res->diameter + 1, S->g->order - res->reached, &chunk));
    kedr_status st = level(S, chunk);
    if (st == KEDR_ERR_INTERRUPTED)
        return kedr_fail(st, "%s: interrupted by signal %d while checking that checkpoint %s "
                         "holds an ended search", S->g->spec, kedr_interrupted(),
                         opt->resume_path);
    KEDR_TRY(st);
    if (S->next.n != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: marked as an ended search, "
                         "but level %d has %zu new states", opt->resume_path,
                         res->diameter + 1, S->next.n);
    return KEDR_OK;
}

/* Makes the layers of level s (found in S->next) the current ones. */
static kedr_status advance(sparse_search *S)
{
    if (S->closed) {
        svec_swap(&S->prev, &S->cur); /* prev <- L_s, cur <- L_{s+1}, next <- old L_{s-1} */
        svec_swap(&S->cur, &S->next);
    } else {
        KEDR_TRY(merge_into(S, &S->visited, &S->next));
        svec_swap(&S->cur, &S->next);
    }
    size_t held = held_bytes(S);
    if (held > S->peak)
        S->peak = held;
    return KEDR_OK;
}

/* ---- the hooks of the level loop (growth.h) ---- */

static kedr_status hook_level(void *self, int s, const kedr_cayley_result *res, uint64_t *count)
{
    sparse_search *S = self;
    size_t chunk = 0;
    KEDR_TRY(plan_level(S, s, S->g->order - res->reached, &chunk));
    KEDR_TRY(level(S, chunk));
    *count = S->next.n;
    return *count ? advance(S) : KEDR_OK;
}

static kedr_status hook_checkpoint(void *self, const char *path, const kedr_cayley_result *res,
                                   int complete)
{
    return sck_write(self, path, res, complete);
}

/* The peak, or what is held now when more (after the start, before any level). */
static size_t hook_memory(void *self)
{
    sparse_search *S = self;
    size_t held = held_bytes(S);
    return held > S->peak ? held : S->peak;
}

kedr_status cayley_sparse_growth(kedr_ctx *ctx, const kedr_cayley_group *g,
                                 const kedr_cayley_options *opt, kedr_cayley_result *result)
{
    sparse_search S;
    memset(&S, 0, sizeof S);
    S.ctx = ctx;
    S.g = g;
    S.ops = choose_ops(ctx);
    S.closed = g->inverse_closed;
    S.words = g->state_words > 1 ? g->state_words : 1;
    if (S.words > CAYLEY_MAX_WORDS)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: %s has states of %d words, "
                         "expected at most %d", g->spec, S.words, CAYLEY_MAX_WORDS);
    KEDR_TRY(cayley_memory_allowed(ctx, opt, &S.limit, &S.limit_where));
    S.strict = opt && opt->memory_limit;
    result->order = g->order;
    result->mode = KEDR_CAYLEY_SPARSE;
    cayley_search search = {g, &S, hook_start, hook_confirm_ended, hook_level, hook_checkpoint,
                            hook_memory, NULL};
    kedr_status s = cayley_run_levels(&search, opt, result);
    release_all(&S);
    return s;
}
