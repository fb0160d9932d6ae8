/* Cayley groups: parsing a spec into a group and its generators, and ranking elements. */
#include "cayley_elem.h"
#include "sparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Orders above this are refused: ranks stay far from 64-bit overflow, and no bitmap that large
 * fits anywhere. */
#define CAYLEY_MAX_ORDER (1ull << 62)

/* A decimal integer in [lo, hi] spanning exactly text[0..len); 0 when it is not one. */
static int parse_int(const char *text, size_t len, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (len == 0 || len > 20)
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return 0;
        unsigned d = (unsigned)(text[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

static int same_generator(const kedr_cayley_group *g, int a, int b)
{
    if (g->kind == KEDR_CAYLEY_ABELIAN || g->kind == KEDR_CAYLEY_BURNSIDE)
        return g->dim[a] == g->dim[b] && g->step[a] == g->step[b];
    return memcmp(g->perm[a], g->perm[b], (size_t)g->n) == 0 && g->flip[a] == g->flip[b];
}

/* Keeps the generator just written at index ngens unless it repeats an earlier one. */
static void keep_generator(kedr_cayley_group *g)
{
    for (int k = 0; k < g->ngens; k++)
        if (same_generator(g, k, g->ngens)) {
            memset(g->perm[g->ngens], 0, sizeof g->perm[0]);
            g->flip[g->ngens] = 0;
            return;
        }
    g->ngens++;
}

/* Writes the inverse of generator k at index `at`. */
static void invert_generator(kedr_cayley_group *g, int k, int at)
{
    if (g->kind == KEDR_CAYLEY_ABELIAN) {
        g->dim[at] = g->dim[k];
        /* in Z_2, -1 = +1: keep one spelling so that duplicates are found */
        g->step[at] = (int8_t)(g->moduli[g->dim[k]] == 2 ? 1 : -g->step[k]);
        return;
    }
    if (g->kind == KEDR_CAYLEY_BURNSIDE) {
        g->dim[at] = g->dim[k];
        g->step[at] = (int8_t)-g->step[k];
        return;
    }
    uint8_t inv[KEDR_CAYLEY_MAX_POINTS];
    for (int i = 0; i < g->n; i++)
        inv[g->perm[k][i]] = (uint8_t)i;
    uint16_t flip = 0;
    for (int i = 0; i < g->n; i++)
        flip |= (uint16_t)(((g->flip[k] >> inv[i]) & 1u) << i);
    memcpy(g->perm[at], inv, (size_t)g->n);
    g->flip[at] = flip;
}

static void identity_at(kedr_cayley_group *g, int at)
{
    for (int i = 0; i < KEDR_CAYLEY_MAX_POINTS; i++)
        g->perm[at][i] = (uint8_t)i;
    g->flip[at] = 0;
}

static void swap_at(kedr_cayley_group *g, int at, int i, int j)
{
    identity_at(g, at);
    g->perm[at][i] = (uint8_t)j;
    g->perm[at][j] = (uint8_t)i;
}

static void permutation_generators(kedr_cayley_group *g, const char *family)
{
    int n = g->n;
    if (strcmp(family, "pancake") == 0 || strcmp(family, "burnt-pancake") == 0) {
        int burnt = family[0] == 'b';
        for (int k = burnt ? 1 : 2; k <= n; k++) {
            identity_at(g, g->ngens);
            for (int i = 0; i < k; i++)
                g->perm[g->ngens][i] = (uint8_t)(k - 1 - i);
            g->flip[g->ngens] = burnt ? (uint16_t)((1u << k) - 1u) : 0;
            keep_generator(g);
        }
    } else if (strcmp(family, "bubble") == 0) {
        for (int i = 0; i + 1 < n; i++) {
            swap_at(g, g->ngens, i, i + 1);
            keep_generator(g);
        }
    } else if (strcmp(family, "star") == 0) {
        for (int i = 1; i < n; i++) {
            swap_at(g, g->ngens, 0, i);
            keep_generator(g);
        }
    } else if (strcmp(family, "transpositions") == 0) {
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                swap_at(g, g->ngens, i, j);
                keep_generator(g);
            }
    } else { /* lrx */
        identity_at(g, g->ngens);
        for (int i = 0; i < n; i++)
            g->perm[g->ngens][i] = (uint8_t)((i + 1) % n);
        keep_generator(g);
        identity_at(g, g->ngens);
        for (int i = 0; i < n; i++)
            g->perm[g->ngens][i] = (uint8_t)((i + n - 1) % n);
        keep_generator(g);
        swap_at(g, g->ngens, 0, 1);
        keep_generator(g);
    }
}

static const struct {
    const char *name;
    kedr_cayley_kind kind;
    int min_n;
    const char *description;
} families[] = {
    {"pancake", KEDR_CAYLEY_PERMUTATION, 2, "prefix reversals"},
    {"burnt-pancake", KEDR_CAYLEY_SIGNED_PERMUTATION, 1, "signed prefix reversals"},
    {"bubble", KEDR_CAYLEY_PERMUTATION, 2, "adjacent transpositions"},
    {"star", KEDR_CAYLEY_PERMUTATION, 2, "transpositions (1 i)"},
    {"transpositions", KEDR_CAYLEY_PERMUTATION, 2, "all transpositions"},
    {"lrx", KEDR_CAYLEY_PERMUTATION, 2, "left shift, right shift, swap of 1 and 2"},
    {"abelian", KEDR_CAYLEY_ABELIAN, 0, "+1 in each coordinate"},
    {"burnside", KEDR_CAYLEY_BURNSIDE, 1, ""},
};
#define NFAMILIES (sizeof families / sizeof families[0])

#define CAYLEY_GROUPS_EXPECTED                                                                  \
    "pancake:N, burnt-pancake:N, bubble:N, star:N, transpositions:N, lrx:N, abelian:M1,M2,..., " \
    "burnside:K, perm:N:GENERATORS or cube2"

static kedr_status parse_abelian(kedr_cayley_group *g, const char *spec, const char *args)
{
    const char *p = args;
    uint64_t order = 1;
    int len = snprintf(g->spec, sizeof g->spec, "abelian:");
    for (;;) {
        size_t n = strcspn(p, ",");
        uint64_t m;
        if (!parse_int(p, n, 2, UINT32_MAX, &m))
            return kedr_fail(KEDR_ERR_INVALID,
                             "%s: expected abelian:M1,M2,... with each M an integer from 2 to "
                             "4294967295 (got '%.*s')", spec, (int)n, p);
        if (g->n == KEDR_CAYLEY_MAX_FACTORS)
            return kedr_fail(KEDR_ERR_INVALID, "%s: expected at most %d factors", spec,
                             KEDR_CAYLEY_MAX_FACTORS);
        if (order > CAYLEY_MAX_ORDER / m)
            return kedr_fail(KEDR_ERR_INVALID, "%s: the order exceeds 2^62", spec);
        g->stride[g->n] = order;
        g->moduli[g->n] = (uint32_t)m;
        order *= m;
        if (len < (int)sizeof g->spec)
            len += snprintf(g->spec + len, sizeof g->spec - (size_t)len, "%s%llu", g->n ? "," : "",
                            (unsigned long long)m);
        g->n++;
        if (p[n] == 0)
            break;
        p += n + 1;
    }
    g->order = order;
    for (int d = 0; d < g->n; d++) {
        g->dim[g->ngens] = (uint8_t)d;
        g->step[g->ngens] = 1;
        keep_generator(g);
    }
    return KEDR_OK;
}

/* B_K: the exponents of a1^y0 a2^y1 ... a_K^y(K-1) in base 5; a1 and a2 as dim 0 and 1. */
static kedr_status parse_burnside(kedr_cayley_group *g, const char *spec, const char *args)
{
    uint64_t k;
    if (!parse_int(args, strlen(args), 1, CAYLEY_BURNSIDE_LIMIT, &k)) {
        if (parse_int(args, strlen(args), CAYLEY_BURNSIDE_LIMIT + 1, BURNSIDE_DATA_K, &k))
            return kedr_fail(KEDR_ERR_INVALID, "%s: expected an integer K from 1 to %d (the "
                             "order 5^K must stay below 2^62)", spec, CAYLEY_BURNSIDE_LIMIT);
        if (parse_int(args, strlen(args), BURNSIDE_DATA_K + 1, 1000000, &k))
            return kedr_fail(KEDR_ERR_INVALID, "%s: expected an integer K from 1 to %d; B0(2,5) "
                             "has %d pc generators, so the Hall polynomials for K > %d are not "
                             "available", spec, CAYLEY_BURNSIDE_LIMIT, BURNSIDE_DATA_K,
                             BURNSIDE_DATA_K);
        return kedr_fail(KEDR_ERR_INVALID, "%s: expected an integer K from 1 to %d", spec,
                         CAYLEY_BURNSIDE_LIMIT);
    }
    g->n = (int)k;
    g->order = 1;
    for (int i = 0; i < g->n; i++)
        g->order *= 5;
    snprintf(g->spec, sizeof g->spec, "burnside:%d", g->n);
    snprintf(g->description, sizeof g->description, "B0(2,5)/<a%d,...,a34>, generators a1, a2",
             g->n + 1);
    for (int d = 0; d < 2; d++) {
        g->dim[g->ngens] = (uint8_t)d;
        g->step[g->ngens] = 1;
        keep_generator(g);
    }
    return KEDR_OK;
}

kedr_status kedr_cayley_parse(const char *spec, int inverses, kedr_cayley_group **out)
{
    if (!out)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_parse: g is NULL");
    *out = NULL;
    if (!spec)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_parse: spec is NULL");
    if (cayley_sparse_spec(spec))
        return cayley_parse_sparse(spec, inverses, out);
    const char *colon = strchr(spec, ':');
    size_t flen = colon ? (size_t)(colon - spec) : strlen(spec);
    size_t f = 0;
    while (f < NFAMILIES && !(strlen(families[f].name) == flen &&
                              strncmp(spec, families[f].name, flen) == 0))
        f++;
    if (f == NFAMILIES)
        return kedr_fail(KEDR_ERR_INVALID, "'%s': unknown group (expected " CAYLEY_GROUPS_EXPECTED ")",
                         spec);
    if (!colon)
        return kedr_fail(KEDR_ERR_INVALID, "'%s': expected %s:%s", spec, families[f].name,
                         families[f].kind == KEDR_CAYLEY_ABELIAN    ? "M1,M2,..."
                         : families[f].kind == KEDR_CAYLEY_BURNSIDE ? "K"
                                                                    : "N");

    kedr_cayley_group *g = calloc(1, sizeof *g);
    if (!g)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_cayley_parse: out of host memory");
    g->kind = families[f].kind;
    g->inverses = inverses != 0;
    g->state_words = 1;
    snprintf(g->description, sizeof g->description, "%s", families[f].description);
    const char *args = colon + 1;
    if (g->kind == KEDR_CAYLEY_ABELIAN || g->kind == KEDR_CAYLEY_BURNSIDE) {
        kedr_status s = g->kind == KEDR_CAYLEY_ABELIAN ? parse_abelian(g, spec, args)
                                                       : parse_burnside(g, spec, args);
        if (s != KEDR_OK) {
            free(g);
            return s;
        }
    } else {
        uint64_t n;
        if (!parse_int(args, strlen(args), (uint64_t)families[f].min_n,
                       KEDR_CAYLEY_MAX_RANKED_POINTS, &n)) {
            free(g);
            return kedr_fail(KEDR_ERR_INVALID, "%s: expected an integer N from %d to %d", spec,
                             families[f].min_n, KEDR_CAYLEY_MAX_RANKED_POINTS);
        }
        g->n = (int)n;
        g->order = 1;
        for (int i = 2; i <= g->n; i++)
            g->order *= (uint64_t)i;
        if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION)
            g->order <<= g->n;
        snprintf(g->spec, sizeof g->spec, "%s:%d", families[f].name, g->n);
        permutation_generators(g, families[f].name);
    }

    /* Inverse closure: look each inverse up; add the missing ones when asked to. */
    int given = g->ngens;
    g->inverse_closed = 1;
    for (int k = 0; k < given; k++) {
        invert_generator(g, k, g->ngens);
        int found = 0;
        for (int j = 0; j < g->ngens && !found; j++)
            found = same_generator(g, j, g->ngens);
        if (!found)
            g->inverse_closed = 0;
        if (g->inverses)
            keep_generator(g);
    }
    if (g->inverses)
        g->inverse_closed = 1;
    if (g->ngens < KEDR_CAYLEY_MAX_GENERATORS) { /* the slot used for trying inverses */
        memset(g->perm[g->ngens], 0, sizeof g->perm[0]);
        g->flip[g->ngens] = 0;
        g->dim[g->ngens] = 0;
        g->step[g->ngens] = 0;
    }
    *out = g;
    return KEDR_OK;
}

void kedr_cayley_group_free(kedr_cayley_group *g) { free(g); }

int kedr_cayley_element_size(const kedr_cayley_group *g)
{
    return g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION ? 2 * g->n : g->n;
}

kedr_status kedr_cayley_rank(const kedr_cayley_group *g, const uint32_t *x, uint64_t *rank)
{
    if (!g || !x || !rank)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_rank: %s is NULL",
                         !g ? "g" : !x ? "x" : "rank");
    if (g->kind == KEDR_CAYLEY_PERM_SUBGROUP || g->kind == KEDR_CAYLEY_CUBE2)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_cayley_rank: %s has no ranking", g->spec);
    if (g->kind == KEDR_CAYLEY_ABELIAN) {
        uint64_t r = 0;
        for (int d = 0; d < g->n; d++) {
            if (x[d] >= g->moduli[d])
                return kedr_fail(KEDR_ERR_INVALID,
                                 "kedr_cayley_rank: coordinate %d is %u, expected 0..%u in %s", d,
                                 x[d], g->moduli[d] - 1, g->spec);
            r += x[d] * g->stride[d];
        }
        *rank = r;
        return KEDR_OK;
    }
    if (g->kind == KEDR_CAYLEY_BURNSIDE) {
        for (int i = 0; i < g->n; i++)
            if (x[i] > 4)
                return kedr_fail(KEDR_ERR_INVALID,
                                 "kedr_cayley_rank: exponent %d is %u, expected 0..4 in %s", i,
                                 x[i], g->spec);
        *rank = cayley_burnside_rank(x, g->n);
        return KEDR_OK;
    }
    uint64_t p = 0;
    uint32_t seen = 0, signs = 0;
    for (int i = 0; i < g->n; i++) {
        if (x[i] >= (uint32_t)g->n || (seen >> x[i]) & 1u)
            return kedr_fail(KEDR_ERR_INVALID,
                             "kedr_cayley_rank: x is not a permutation of 0..%d (x[%d] = %u)",
                             g->n - 1, i, x[i]);
        seen |= 1u << x[i];
        p |= (uint64_t)x[i] << (4 * i);
    }
    if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION) {
        for (int i = 0; i < g->n; i++) {
            if (x[g->n + i] > 1)
                return kedr_fail(KEDR_ERR_INVALID,
                                 "kedr_cayley_rank: sign x[%d] = %u, expected 0 or 1", g->n + i,
                                 x[g->n + i]);
            signs |= x[g->n + i] << i;
        }
        *rank = (cayley_perm_rank(p, g->n) << g->n) | signs;
        return KEDR_OK;
    }
    *rank = cayley_perm_rank(p, g->n);
    return KEDR_OK;
}

kedr_status kedr_cayley_unrank(const kedr_cayley_group *g, uint64_t rank, uint32_t *x)
{
    if (!g || !x)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_unrank: %s is NULL", !g ? "g" : "x");
    if (g->kind == KEDR_CAYLEY_PERM_SUBGROUP || g->kind == KEDR_CAYLEY_CUBE2)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr_cayley_unrank: %s has no ranking", g->spec);
    if (rank >= g->order)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_unrank: rank %llu, expected 0..%llu in %s",
                         (unsigned long long)rank, (unsigned long long)(g->order - 1), g->spec);
    if (g->kind == KEDR_CAYLEY_ABELIAN) {
        for (int d = 0; d < g->n; d++)
            x[d] = (uint32_t)((rank / g->stride[d]) % g->moduli[d]);
        return KEDR_OK;
    }
    if (g->kind == KEDR_CAYLEY_BURNSIDE) {
        cayley_burnside_digits(rank, g->n, x);
        return KEDR_OK;
    }
    cayley_elem e = cayley_load(g, rank);
    for (int i = 0; i < g->n; i++) {
        x[i] = cayley_nibble(e.p, i);
        if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION)
            x[g->n + i] = (e.s >> i) & 1u;
    }
    return KEDR_OK;
}

size_t kedr_cayley_dense_bytes(const kedr_cayley_group *g)
{
    size_t bitmap = (size_t)((g->order + 127) / 128) * 16;
    return 3 * bitmap;
}

size_t kedr_cayley_multi_bytes(const kedr_cayley_group *g)
{
    return (size_t)((g->order + 15) / 16) * 4;
}
