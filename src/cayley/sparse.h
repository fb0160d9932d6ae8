/* The sparse search's element code, shared by its cpu code (sparse.c) and cuda code
 * (sparse.cu) so that both compute exactly the same neighbours, and the cuda entry points.
 *
 * A state is a u64:
 *  - perm:N groups: the packed permutation, nibble i = the point at position i (4 bits a point,
 *    so N <= 16);
 *  - cube2: nibble i (i < 7) = the corner at position i, nibble 7 + i = its twist 0..2;
 *  - the ranked kinds (forced into sparse mode): the rank itself.
 * Generator k maps x to y with y[i] = x[perm[k][i]] (cube2: and twist[i] added modulo 3). */
#ifndef CAYLEY_SPARSE_H
#define CAYLEY_SPARSE_H

#include "cayley_elem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAYLEY_CUBE2_CORNERS 7

/* The state of the identity. */
CAYLEY_HD uint64_t cayley_sparse_identity(const kedr_cayley_group *g)
{
    if (g->kind == KEDR_CAYLEY_PERM_SUBGROUP)
        return g->n == 16 ? CAYLEY_NIBBLE_IOTA : CAYLEY_NIBBLE_IOTA & ((1ull << (4 * g->n)) - 1ull);
    if (g->kind == KEDR_CAYLEY_CUBE2)
        return CAYLEY_NIBBLE_IOTA & ((1ull << (4 * CAYLEY_CUBE2_CORNERS)) - 1ull);
    return 0; /* rank of the identity */
}

/* x * generator k for the sparse kinds. */
CAYLEY_HD uint64_t cayley_sparse_apply(const kedr_cayley_group *g, uint64_t x, int k)
{
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
#endif

/* Whether kedr_cayley_growth runs g in sparse mode under opt (NULL: AUTO); KEDR_ERR_INVALID
 * for a bad mode or DENSE asked of a sparse kind. */
kedr_status cayley_sparse_chosen(const kedr_cayley_group *g, const kedr_cayley_options *opt,
                                 int *sparse);
/* The sparse breadth-first search (sparse.c), called by kedr_cayley_growth. */
kedr_status cayley_sparse_growth(kedr_ctx *ctx, const kedr_cayley_group *g,
                                 const kedr_cayley_options *opt, kedr_cayley_result *result);

/* perm_spec.c: whether spec names a sparse kind (perm:..., cube2...), and its parser, which
 * kedr_cayley_parse calls for them. */
int cayley_sparse_spec(const char *spec);
kedr_status cayley_parse_sparse(const char *spec, int inverses, kedr_cayley_group **out);

#ifdef __cplusplus
}
#endif
#endif
