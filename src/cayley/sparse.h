/* The sparse search's element code, shared by its cpu code (sparse.c) and cuda code
 * (sparse.cu) so that both compute exactly the same neighbours, and the cuda entry points.
 *
 * A state is g->state_words 64-bit words:
 *  - perm:N groups, N <= 16: one word, the packed permutation, nibble i = the point at
 *    position i; generator k maps x to y with y[i] = x[perm[k][i]];
 *  - perm:N groups, N > 16: the images x[base[j]] of the base points, 5 bits each, field j at
 *    bit 5 (j % 12) of word j / 12 (12 fields to a word, none straddling two words); generator
 *    k acts on the left, y[i] = perm[k][x[i]], field by field. An element is determined by the
 *    images of a base, and left and right multiplication give the same word lengths;
 *  - cube2: nibble i (i < 7) = the corner at position i, nibble 7 + i = its twist 0..2, and
 *    generator k also adds twist[i] modulo 3;
 *  - the ranked kinds (forced into sparse mode): the rank itself.
 * States of several words are kept as one array per word (word 0 the least significant) and
 * ordered by the highest word first. */
#ifndef CAYLEY_SPARSE_H
#define CAYLEY_SPARSE_H

#include "cayley_elem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAYLEY_CUBE2_CORNERS 7
/* perm:N above this many points packs base images (above). */
#define CAYLEY_PACKED_POINTS 16
#define CAYLEY_FIELD_BITS 5
#define CAYLEY_WORD_FIELDS 12
#define CAYLEY_MAX_WORDS 3 /* 36 fields: any base of S_32 (at most 31 points) */

/* Whether g's states are base images (perm:N, N > 16). */
CAYLEY_HD int cayley_sparse_based(const kedr_cayley_group *g)
{
    return g->kind == KEDR_CAYLEY_PERM_SUBGROUP && g->n > CAYLEY_PACKED_POINTS;
}

/* Base-image fields held by word w of a state of g. */
CAYLEY_HD int cayley_word_fields(const kedr_cayley_group *g, int w)
{
    int left = g->nbase - CAYLEY_WORD_FIELDS * w;
    return left < 0 ? 0 : left > CAYLEY_WORD_FIELDS ? CAYLEY_WORD_FIELDS : left;
}

/* Word w of the identity's base images. */
CAYLEY_HD uint64_t cayley_based_identity(const kedr_cayley_group *g, int w)
{
    uint64_t x = 0;
    for (int j = 0; j < cayley_word_fields(g, w); j++)
        x |= (uint64_t)g->base[CAYLEY_WORD_FIELDS * w + j] << (CAYLEY_FIELD_BITS * j);
    return x;
}

/* One word of base images times a generator on the left: each field v becomes perm[v]. */
CAYLEY_HD uint64_t cayley_based_apply(uint64_t x, const uint8_t *perm, int fields)
{
    uint64_t y = 0;
    for (int j = 0; j < fields; j++)
        y |= (uint64_t)perm[(x >> (CAYLEY_FIELD_BITS * j)) & 31u] << (CAYLEY_FIELD_BITS * j);
    return y;
}

/* The state of the identity (one-word states). */
CAYLEY_HD uint64_t cayley_sparse_identity(const kedr_cayley_group *g)
{
    if (cayley_sparse_based(g))
        return cayley_based_identity(g, 0);
    if (g->kind == KEDR_CAYLEY_PERM_SUBGROUP)
        return g->n == 16 ? CAYLEY_NIBBLE_IOTA : CAYLEY_NIBBLE_IOTA & ((1ull << (4 * g->n)) - 1ull);
    if (g->kind == KEDR_CAYLEY_CUBE2)
        return CAYLEY_NIBBLE_IOTA & ((1ull << (4 * CAYLEY_CUBE2_CORNERS)) - 1ull);
    return 0; /* rank of the identity */
}

/* x * generator k for the sparse kinds (one-word states). */
CAYLEY_HD uint64_t cayley_sparse_apply(const kedr_cayley_group *g, uint64_t x, int k)
{
    if (cayley_sparse_based(g))
        return cayley_based_apply(x, g->perm[k], g->nbase);
    if (g->kind == KEDR_CAYLEY_PERM_SUBGROUP)
        return cayley_perm_apply(x, g->perm[k], g->n);
    uint64_t y = 0;
    uint32_t twist = g->flip[k];
    for (int i = 0; i < CAYLEY_CUBE2_CORNERS; i++) {
        int from = g->perm[k][i];
        uint32_t t = cayley_nibble(x, CAYLEY_CUBE2_CORNERS + from) + ((twist >> (2 * i)) & 3u);
        y |= (uint64_t)cayley_nibble(x, from) << (4 * i);
        y |= (uint64_t)(t >= 3 ? t - 3 : t) << (4 * (CAYLEY_CUBE2_CORNERS + i));
    }
    return y;
}

/* State x * generator k for every kind: the ranked kinds go through their rank. */
CAYLEY_HD uint64_t cayley_sparse_neighbour(const kedr_cayley_group *g, uint64_t x, int k)
{
    if (g->kind == KEDR_CAYLEY_PERM_SUBGROUP || g->kind == KEDR_CAYLEY_CUBE2)
        return cayley_sparse_apply(g, x, k);
    cayley_elem e = cayley_load(g, x);
    return cayley_neighbour(g, &e, k);
}

/* The number of elements of the sorted array a[0..n) below key. */
CAYLEY_HD size_t cayley_sparse_rank_in(const uint64_t *a, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether key is in the sorted array a[0..n). */
CAYLEY_HD int cayley_sparse_contains(const uint64_t *a, size_t n, uint64_t key)
{
    size_t r = cayley_sparse_rank_in(a, n, key);
    return r < n && a[r] == key;
}

/* Sorted arrays the candidates of a level are checked against (unused ones have n = 0). */
typedef struct {
    const uint64_t *a[3];
    size_t n[3];
} cayley_sparse_sets;

/* Flag of sorted candidate i: the first of its run and in none of the sets. */
CAYLEY_HD uint8_t cayley_sparse_flag(const uint64_t *cand, size_t i, const cayley_sparse_sets *s)
{
    uint64_t x = cand[i];
    if (i > 0 && cand[i - 1] == x)
        return 0;
    for (int j = 0; j < 3; j++)
        if (s->n[j] && cayley_sparse_contains(s->a[j], s->n[j], x))
            return 0;
    return 1;
}

/* ---- states of several words ---- */

/* The words of the sorted states i of arrays a[0..words) against key: -1, 0 or 1. */
CAYLEY_HD int cayley_wide_cmp(const uint64_t *const *a, size_t i, const uint64_t *key, int words)
{
    CAYLEY_UNROLL
    for (int w = words - 1; w >= 0; w--) {
        uint64_t v = a[w][i];
        if (v != key[w])
            return v < key[w] ? -1 : 1;
    }
    return 0;
}

/* The number of states of the sorted arrays a[0..words) (n states) below key. */
CAYLEY_HD size_t cayley_wide_rank_in(const uint64_t *const *a, size_t n, const uint64_t *key,
                                     int words)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cayley_wide_cmp(a, mid, key, words) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sorted arrays of several-word states the candidates are checked against (as above). */
typedef struct {
    const uint64_t *a[3][CAYLEY_MAX_WORDS];
    size_t n[3];
    int words;
} cayley_wide_sets;

/* Flag of sorted candidate i (words arrays cand): as cayley_sparse_flag. words is s->words,
 * passed apart so that the cuda kernels can make it a constant. */
CAYLEY_HD uint8_t cayley_wide_flag(const uint64_t *const *cand, size_t i,
                                   const cayley_wide_sets *s, int words)
{
    uint64_t x[CAYLEY_MAX_WORDS] = {0, 0, 0};
    CAYLEY_UNROLL
    for (int w = 0; w < words; w++)
        x[w] = cand[w][i];
    if (i > 0 && cayley_wide_cmp(cand, i - 1, x, words) == 0)
        return 0;
    CAYLEY_UNROLL
    for (int j = 0; j < 3; j++)
        if (s->n[j]) {
            size_t r = cayley_wide_rank_in(s->a[j], s->n[j], x, words);
            if (r < s->n[j] && cayley_wide_cmp(s->a[j], r, x, words) == 0)
                return 0;
        }
    return 1;
}

#ifdef KEDR_HAVE_CUDA
/* out[i * ngens + k] = cayley_sparse_neighbour(layer[i], k), i < n. */
kedr_status cayley_sparse_expand_cuda(kedr_ctx *ctx, const kedr_cayley_group *g,
                                      const uint64_t *layer, size_t n, uint64_t *out);
/* flags[i] = cayley_sparse_flag(cand, i, sets), i < n. */
kedr_status cayley_sparse_flag_cuda(kedr_ctx *ctx, const uint64_t *cand, size_t n,
                                    const cayley_sparse_sets *sets, uint8_t *flags);
/* out[0..na+nb) = the sorted union of the disjoint sorted arrays a and b. */
kedr_status cayley_sparse_merge_cuda(kedr_ctx *ctx, const uint64_t *a, size_t na,
                                     const uint64_t *b, size_t nb, uint64_t *out);
/* The same for the base-image states of g (g->state_words words, arrays of word pointers);
 * expand also serves one-word base images. */
kedr_status cayley_wide_expand_cuda(kedr_ctx *ctx, const kedr_cayley_group *g,
                                    const uint64_t *const *layer, size_t n, uint64_t *const *out);
kedr_status cayley_wide_flag_cuda(kedr_ctx *ctx, const uint64_t *const *cand, size_t n,
                                  const cayley_wide_sets *sets, uint8_t *flags);
kedr_status cayley_wide_merge_cuda(kedr_ctx *ctx, int words, const uint64_t *const *a, size_t na,
                                   const uint64_t *const *b, size_t nb, uint64_t *const *out);
/* out[i] = in[idx[i]], i < n; iota: idx[i] = i. */
kedr_status cayley_gather_cuda(kedr_ctx *ctx, const uint64_t *in, const uint32_t *idx, size_t n,
                               uint64_t *out);
kedr_status cayley_iota_cuda(kedr_ctx *ctx, uint32_t *idx, size_t n);
#endif

/* Whether kedr_cayley_growth runs g in sparse mode under opt (NULL: AUTO); KEDR_ERR_INVALID
 * for a bad mode or DENSE asked of a sparse kind. */
kedr_status cayley_sparse_chosen(const kedr_cayley_group *g, const kedr_cayley_options *opt,
                                 int *sparse);
/* The sparse breadth-first search (sparse.c), called by kedr_cayley_growth. */
kedr_status cayley_sparse_growth(kedr_ctx *ctx, const kedr_cayley_group *g,
                                 const kedr_cayley_options *opt, kedr_cayley_result *result);

/* perm_spec.c: the parser of the sparse kinds (perm:..., cube2...), which kedr_cayley_parse
 * calls for them. */
kedr_status cayley_parse_sparse(const char *spec, int inverses, kedr_cayley_group **out);
/* Replaces the base of a perm:N group (N > 16) by base[0..nbase), which must contain its
 * Schreier-Sims base (any superset determines an element too), and sets state_words to match:
 * for tests of the wider states on small groups. KEDR_ERR_INVALID otherwise. */
kedr_status cayley_perm_set_base(kedr_cayley_group *g, const uint8_t *base, int nbase);

#ifdef __cplusplus
}
#endif
#endif
