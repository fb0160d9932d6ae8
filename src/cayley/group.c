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

void cayley_invert_generators(kedr_cayley_group *g)
{
    for (int k = 0; k < g->ngens; k++)
        invert_generator(g, k, k);
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

/* ---- the generators of the ranked permutation families ---- */

/* Prefix reversals of length 2..n (burnt: 1..n, flipping the signs of the reversed prefix). */
static void reversal_generators(kedr_cayley_group *g, int burnt)
{
    for (int k = burnt ? 1 : 2; k <= g->n; k++) {
        identity_at(g, g->ngens);
        for (int i = 0; i < k; i++)
            g->perm[g->ngens][i] = (uint8_t)(k - 1 - i);
        g->flip[g->ngens] = burnt ? (uint16_t)((1u << k) - 1u) : 0;
        keep_generator(g);
    }
}

static void pancake_generators(kedr_cayley_group *g) { reversal_generators(g, 0); }
static void burnt_pancake_generators(kedr_cayley_group *g) { reversal_generators(g, 1); }

static void bubble_generators(kedr_cayley_group *g)
{
    for (int i = 0; i + 1 < g->n; i++) {
        swap_at(g, g->ngens, i, i + 1);
        keep_generator(g);
    }
}

static void star_generators(kedr_cayley_group *g)
{
    for (int i = 1; i < g->n; i++) {
        swap_at(g, g->ngens, 0, i);
        keep_generator(g);
    }
}

static void transposition_generators(kedr_cayley_group *g)
{
    for (int i = 0; i < g->n; i++)
        for (int j = i + 1; j < g->n; j++) {
            swap_at(g, g->ngens, i, j);
            keep_generator(g);
        }
}

static void lrx_generators(kedr_cayley_group *g)
{
    int n = g->n;
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

static kedr_status parse_abelian(kedr_cayley_group *g, const char *spec, const char *args);
static kedr_status parse_burnside(kedr_cayley_group *g, const char *spec, const char *args);

/* The families kedr_cayley_parse knows, from which its errors and `kedr cayley --help`
 * (kedr_cayley_family_help) are printed: the ranked permutation families take an N from min to
 * max and have a generator function; abelian and burnside parse their arguments (parse); the
 * sparse families are parsed by cayley_parse_sparse (perm_spec.c). */
typedef struct {
    const char *name;
    kedr_cayley_kind kind;
    int min, max; /* the range of N or K; max 0: none (see the help) */
    void (*generators)(kedr_cayley_group *g);
    kedr_status (*parse)(kedr_cayley_group *g, const char *spec, const char *args);
    int sparse;
    const char *syntax, *description, *help;
} cayley_family;

static const cayley_family families[] = {
    {"pancake", KEDR_CAYLEY_PERMUTATION, 2, KEDR_CAYLEY_MAX_RANKED_POINTS, pancake_generators,
     NULL, 0, "pancake:N", "prefix reversals", "S_N, prefix reversals of length 2..N"},
    {"burnt-pancake", KEDR_CAYLEY_SIGNED_PERMUTATION, 1, KEDR_CAYLEY_MAX_RANKED_POINTS,
     burnt_pancake_generators, NULL, 0, "burnt-pancake:N", "signed prefix reversals",
     "signed permutations (order 2^N N!), signed prefix reversals"},
    {"bubble", KEDR_CAYLEY_PERMUTATION, 2, KEDR_CAYLEY_MAX_RANKED_POINTS, bubble_generators, NULL,
     0, "bubble:N", "adjacent transpositions", "S_N, adjacent transpositions"},
    {"star", KEDR_CAYLEY_PERMUTATION, 2, KEDR_CAYLEY_MAX_RANKED_POINTS, star_generators, NULL, 0,
     "star:N", "transpositions (1 i)", "S_N, transpositions (1 i)"},
    {"transpositions", KEDR_CAYLEY_PERMUTATION, 2, KEDR_CAYLEY_MAX_RANKED_POINTS,
     transposition_generators, NULL, 0, "transpositions:N", "all transpositions",
     "S_N, all transpositions"},
    {"lrx", KEDR_CAYLEY_PERMUTATION, 2, KEDR_CAYLEY_MAX_RANKED_POINTS, lrx_generators, NULL, 0,
     "lrx:N", "left shift, right shift, swap of 1 and 2",
     "S_N, left shift, right shift, swap of positions 1 and 2"},
    {"abelian", KEDR_CAYLEY_ABELIAN, 2, 0, NULL, parse_abelian, 0, "abelian:M1,M2,...",
     "+1 in each coordinate",
     "Z_M1 x Z_M2 x ..., +1 in each coordinate (rings, tori, hypercubes;\n"
     "M = 2..4294967295, at most 64 factors, order at most 2^62)"},
    {"burnside", KEDR_CAYLEY_BURNSIDE, 1, CAYLEY_BURNSIDE_LIMIT, NULL, parse_burnside, 0,
     "burnside:K", "", "B_K = B0(2,5)/<a_{K+1},...,a_34>, order 5^K, generators a1, a2;\n"
     "burnside:K:ROWS (K = 15..17): the quotient by the kernel of K - 14 rows\n"
     "of 4 digits over Z_5 on layer 7 (a15..a18), e.g. burnside:15:1203"},
    {"perm", KEDR_CAYLEY_PERM_SUBGROUP, 1, KEDR_CAYLEY_MAX_POINTS, NULL, NULL, 1, "perm:N:GENS",
     "", "subgroup of S_N generated by GENS: images [2,1,3] or cycles (1 2)(3 4),\n"
     "separated by commas; perm:N:@FILE reads one generator per line (sparse\n"
     "mode: 64-bit states for N <= 16; above, 5 bits per base point in 64, 128\n"
     "or 192 bits)"},
    {"cube2", KEDR_CAYLEY_CUBE2, 0, 0, NULL, NULL, 1, "cube2",
     "", "2x2x2 Rubik's cube, 3674160 positions (sparse mode; --metric htm|qtm)"},
};
#define NFAMILIES ((int)(sizeof families / sizeof families[0]))

const char *kedr_cayley_family_help(int i, char *buf, size_t size)
{
    if (i < 0 || i >= NFAMILIES || !buf || size == 0)
        return NULL;
    const cayley_family *f = &families[i];
    if (f->max > 0)
        snprintf(buf, size, "%s\t%s (%s = %d..%d)", f->syntax, f->help,
                 f->kind == KEDR_CAYLEY_BURNSIDE ? "K" : "N", f->min, f->max);
    else
        snprintf(buf, size, "%s\t%s", f->syntax, f->help);
    return buf;
}

/* "pancake:N, burnt-pancake:N, ... or cube2", for errors. */
static const char *family_list(char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int f = 0; f < NFAMILIES && len < size; f++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s",
                                f == 0 ? "" : f + 1 == NFAMILIES ? " or " : ", ",
                                families[f].syntax);
    return buf;
}

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

/* ROWS of burnside:K:ROWS: K - 14 rows of 4 digits 0..4 separated by '/', of full rank over
 * Z_5, brought to reduced row echelon form in g->layer7 (rows, pivots 1, zeros above and below
 * each pivot); the rows [I | 0] of kedr's own basis leave layer7_rows at 0. */
static kedr_status parse_layer7(kedr_cayley_group *g, const char *spec, const char *rows)
{
    if (g->n < 15 || g->n > 17)
        return kedr_fail(KEDR_ERR_INVALID, "%s: a basis of layer 7 (a15..a18) applies to K = "
                         "15, 16 and 17 only; this K is %d", spec, g->n);
    int want = g->n - 14, r = 0;
    uint8_t m[3][4];
    const char *p = rows;
    for (;;) {
        if (r == want)
            return kedr_fail(KEDR_ERR_INVALID, "%s: expected %d row%s of 4 digits 0..4 for "
                             "K = %d (separated by '/')", spec, want, want > 1 ? "s" : "", g->n);
        for (int j = 0; j < 4; j++) {
            if (p[j] < '0' || p[j] > '4')
                return kedr_fail(KEDR_ERR_INVALID, "%s: row %d: expected 4 digits 0..4 (the "
                                 "coefficients of a15..a18 over Z_5), e.g. 1203", spec, r + 1);
            m[r][j] = (uint8_t)(p[j] - '0');
        }
        p += 4;
        r++;
        if (*p == '\0')
            break;
        if (*p != '/')
            return kedr_fail(KEDR_ERR_INVALID, "%s: row %d: expected 4 digits 0..4, then '/' "
                             "or the end", spec, r);
        p++;
    }
    if (r != want)
        return kedr_fail(KEDR_ERR_INVALID, "%s: expected %d row%s of 4 digits for K = %d, got "
                         "%d", spec, want, want > 1 ? "s" : "", g->n, r);
    /* Gauss-Jordan over Z_5 (inverses 1, 3, 2, 4 of 1..4) */
    static const uint8_t inv5[5] = {0, 1, 3, 2, 4};
    int lead = 0;
    for (int i = 0; i < want; i++, lead++) {
        int piv = -1;
        while (lead < 4 && piv < 0) {
            for (int q = i; q < want && piv < 0; q++)
                if (m[q][lead])
                    piv = q;
            if (piv < 0)
                lead++;
        }
        if (piv < 0)
            return kedr_fail(KEDR_ERR_INVALID, "%s: the rows are not independent over Z_5 "
                             "(rank %d, expected %d)", spec, i, want);
        for (int j = 0; j < 4; j++) {
            uint8_t t = m[i][j];
            m[i][j] = m[piv][j];
            m[piv][j] = t;
        }
        uint8_t s = inv5[m[i][lead]];
        for (int j = 0; j < 4; j++)
            m[i][j] = (uint8_t)(m[i][j] * s % 5);
        for (int q = 0; q < want; q++)
            if (q != i && m[q][lead]) {
                uint8_t f = m[q][lead];
                for (int j = 0; j < 4; j++)
                    m[q][j] = (uint8_t)((m[q][j] + 5 * 5 - f * m[i][j]) % 5);
            }
    }
    int plain = 1;
    for (int i = 0; i < want; i++)
        for (int j = 0; j < 4; j++)
            plain &= m[i][j] == (i == j);
    if (plain)
        return KEDR_OK; /* kedr's own basis: burnside:K */
    g->layer7_rows = want;
    memcpy(g->layer7, m, sizeof m);
    return KEDR_OK;
}

/* B_K: the exponents of a1^y0 a2^y1 ... a_K^y(K-1) in base 5; a1 and a2 as dim 0 and 1. */
static kedr_status parse_burnside(kedr_cayley_group *g, const char *spec, const char *args)
{
    uint64_t k;
    const char *rows = strchr(args, ':');
    size_t klen = rows ? (size_t)(rows - args) : strlen(args);
    if (!parse_int(args, klen, 1, CAYLEY_BURNSIDE_LIMIT, &k)) {
        if (parse_int(args, klen, CAYLEY_BURNSIDE_LIMIT + 1, BURNSIDE_DATA_K, &k))
            return kedr_fail(KEDR_ERR_INVALID, "%s: expected an integer K from 1 to %d (the "
                             "order 5^K must stay below 2^62)", spec, CAYLEY_BURNSIDE_LIMIT);
        if (parse_int(args, klen, BURNSIDE_DATA_K + 1, 1000000, &k))
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
    if (rows)
        KEDR_TRY(parse_layer7(g, spec, rows + 1));
    snprintf(g->spec, sizeof g->spec, "burnside:%d", g->n);
    snprintf(g->description, sizeof g->description, "B0(2,5)/<a%d,...,a34>, generators a1, a2",
             g->n + 1);
    if (g->layer7_rows) {
        size_t len = strlen(g->spec);
        for (int r = 0; r < g->layer7_rows; r++)
            len += (size_t)snprintf(g->spec + len, sizeof g->spec - len, "%c%d%d%d%d",
                                    r ? '/' : ':', g->layer7[r][0], g->layer7[r][1],
                                    g->layer7[r][2], g->layer7[r][3]);
        snprintf(g->description, sizeof g->description,
                 "B0(2,5) over a layer-7 kernel, order 5^%d, generators a1, a2", g->n);
    }
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
    const char *colon = strchr(spec, ':');
    size_t flen = colon ? (size_t)(colon - spec) : strlen(spec);
    int f = 0;
    while (f < NFAMILIES && !(strlen(families[f].name) == flen &&
                              strncmp(spec, families[f].name, flen) == 0))
        f++;
    char list[400];
    if (f == NFAMILIES)
        return kedr_fail(KEDR_ERR_INVALID, "'%s': unknown group (expected %s)", spec,
                         family_list(list, sizeof list));
    const cayley_family *fam = &families[f];
    if (fam->sparse)
        return cayley_parse_sparse(spec, inverses, out);
    if (!colon)
        return kedr_fail(KEDR_ERR_INVALID, "'%s': expected %s", spec, fam->syntax);

    kedr_cayley_group *g = calloc(1, sizeof *g);
    if (!g)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_cayley_parse: out of host memory");
    g->kind = fam->kind;
    g->inverses = inverses != 0;
    g->state_words = 1;
    snprintf(g->description, sizeof g->description, "%s", fam->description);
    const char *args = colon + 1;
    if (fam->parse) {
        kedr_status s = fam->parse(g, spec, args);
        if (s != KEDR_OK) {
            free(g);
            return s;
        }
    } else {
        uint64_t n;
        if (!parse_int(args, strlen(args), (uint64_t)fam->min, (uint64_t)fam->max, &n)) {
            free(g);
            return kedr_fail(KEDR_ERR_INVALID, "%s: expected an integer N from %d to %d", spec,
                             fam->min, fam->max);
        }
        g->n = (int)n;
        g->order = 1;
        for (int i = 2; i <= g->n; i++)
            g->order *= (uint64_t)i;
        if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION)
            g->order <<= g->n;
        snprintf(g->spec, sizeof g->spec, "%s:%d", fam->name, g->n);
        fam->generators(g);
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

/* Kuznetsov's basis of layer 7 (docs/cayley.md, "Kuznetsov's basis"): a15 = [a11,a2],
 * a16 = [a9,a3], a17 = [a12,a2], a18 = [a14,a1] as exponent vectors over nq's a15..a18 are
 * (1,0,0,0), (4,1,0,0), (0,0,1,0), (0,0,2,4); B_K kills a_{K+1}..a18, so its layer-7 rows are
 * those whose kernel is spanned by them. K <= 14, 16, 18 and 22 are the same quotient as nq's. */
static const char *kuznetsov_rows(int k)
{
    switch (k) {
    case 15: return "1100";
    case 17: return "1000/0100/0012";
    default: return NULL;
    }
}

kedr_status kedr_cayley_parse_basis(const char *spec, const char *basis, int inverses,
                                    kedr_cayley_group **out)
{
    if (!basis || strcmp(basis, "nq") == 0)
        return kedr_cayley_parse(spec, inverses, out);
    if (!out)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_parse_basis: g is NULL");
    *out = NULL;
    if (strcmp(basis, "kuznetsov") != 0)
        return kedr_fail(KEDR_ERR_INVALID, "--basis %s: expected nq or kuznetsov", basis);
    if (!spec || strncmp(spec, "burnside:", 9) != 0)
        return kedr_fail(KEDR_ERR_INVALID, "--basis kuznetsov applies to burnside:K only (got "
                         "'%s')", spec ? spec : "(null)");
    kedr_cayley_group *g;
    KEDR_TRY(kedr_cayley_parse(spec, inverses, &g));
    int k = g->n;
    if (strchr(spec + 9, ':')) {
        kedr_cayley_group_free(g);
        return kedr_fail(KEDR_ERR_INVALID, "%s gives its own basis of layer 7; --basis "
                         "kuznetsov gives another: leave out one of them", spec);
    }
    if (k > 18 && k != 22) {
        kedr_cayley_group_free(g);
        return kedr_fail(KEDR_ERR_INVALID, "%s --basis kuznetsov: the basis covers K = 1..18 "
                         "and 22 (his generators beyond a18 are not known here; B_18 and B_22 "
                         "are lower-central quotients, the same in every basis); use --basis nq",
                         spec);
    }
    const char *rows = kuznetsov_rows(k);
    if (rows) {
        char full[64];
        snprintf(full, sizeof full, "burnside:%d:%s", k, rows);
        kedr_cayley_group_free(g);
        KEDR_TRY(kedr_cayley_parse(full, inverses, &g));
        snprintf(g->description, sizeof g->description, "B_%d in Kuznetsov's basis, order 5^%d, "
                 "generators a1, a2", k, k);
    } else
        snprintf(g->description, sizeof g->description, "B_%d, the same in Kuznetsov's basis and "
                 "nq's, generators a1, a2", k);
    *out = g;
    return KEDR_OK;
}

int kedr_cayley_element_size(const kedr_cayley_group *g)
{
    return g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION ? 2 * g->n : g->n;
}

kedr_status cayley_check_group(const kedr_cayley_group *g, const char *who)
{
    if (!g)
        return kedr_fail(KEDR_ERR_INVALID, "%s: g is NULL", who);
    int known = cayley_ranked_kind(g->kind) || g->kind == KEDR_CAYLEY_PERM_SUBGROUP ||
                g->kind == KEDR_CAYLEY_CUBE2;
    if (!known)
        return kedr_fail(KEDR_ERR_INVALID, "%s: unknown group kind %d (expected a group made by "
                         "kedr_cayley_parse)", who, (int)g->kind);
    if (g->order == 0 || g->ngens < 0 || g->ngens > KEDR_CAYLEY_MAX_GENERATORS)
        return kedr_fail(KEDR_ERR_INVALID, "%s: g is not a group made by kedr_cayley_parse", who);
    return KEDR_OK;
}

kedr_status kedr_cayley_rank(const kedr_cayley_group *g, const uint32_t *x, uint64_t *rank)
{
    if (!g || !x || !rank)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_rank: %s is NULL",
                         !g ? "g" : !x ? "x" : "rank");
    KEDR_TRY(cayley_check_group(g, "kedr_cayley_rank"));
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
    KEDR_TRY(cayley_check_group(g, "kedr_cayley_unrank"));
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
