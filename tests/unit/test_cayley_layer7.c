/* cayley: B_K (K = 15..17) in another basis of layer 7 of B0(2,5), burnside:K:ROWS.
 *
 *  - specs: the rows brought to reduced row echelon form (equal quotients, equal specs; kedr's
 *    own rows [I | 0] give burnside:K), and every malformed or rank-deficient ROWS refused;
 *  - the products: the quotient map pi(y) = (y0..y13, L (y14..y17)) from B_18 (where layer 7 is
 *    whole) to B_K(L) commutes with a1, a2 and their inverses on random elements of B_18, for
 *    random L of every rank; so B_K(L) is the quotient of B_18 by ker L, whose growth function a
 *    search of burnside:K:ROWS gives (docs/cayley.md);
 *  - Kuznetsov's basis (kedr_cayley_parse_basis): B_15 and B_17 are the quotients by the spans
 *    of his a16..a18 and of a18 (their layer-7 exponents by collection, from
 *    `scripts/cayley/layer7-symmetry.py --kuznetsov`), every other K up to 18 and 22 nq's group,
 *    and every K, spec, family or basis name it does not cover refused. */
#include "test_util.h"
#include "cayley/cayley_elem.h"

static kedr_cayley_group *parse(const char *spec, int inverses)
{
    kedr_cayley_group *g = NULL;
    kedr_status s = kedr_cayley_parse(spec, inverses, &g);
    TU_CHECK(s == KEDR_OK && g, "%s: %s", spec, kedr_last_error());
    return s == KEDR_OK ? g : NULL;
}

static void check_spec(const char *spec, const char *want)
{
    kedr_cayley_group *g = parse(spec, 0);
    if (!g)
        return;
    TU_CHECK(strcmp(g->spec, want) == 0, "%s: spec %s, expected %s", spec, g->spec, want);
    kedr_cayley_group *h = parse(g->spec, 0); /* the canonical spec reads back to itself */
    if (h) {
        TU_CHECK(strcmp(h->spec, g->spec) == 0 && h->layer7_rows == g->layer7_rows &&
                     memcmp(h->layer7, g->layer7, sizeof h->layer7) == 0,
                 "%s: does not read back", g->spec);
        kedr_cayley_group_free(h);
    }
    kedr_cayley_group_free(g);
}

static void check_refused(const char *spec, const char *words)
{
    kedr_cayley_group *g = NULL;
    kedr_status s = kedr_cayley_parse(spec, 0, &g);
    TU_CHECK(s == KEDR_ERR_INVALID && !g, "%s: accepted", spec);
    TU_CHECK(strstr(kedr_last_error(), spec) && strstr(kedr_last_error(), words),
             "%s: message '%s' lacks '%s'", spec, kedr_last_error(), words);
    kedr_cayley_group_free(g);
}

static void check_specs(void)
{
    check_spec("burnside:15:1000", "burnside:15");
    check_spec("burnside:15:3000", "burnside:15");
    check_spec("burnside:15:0100", "burnside:15:0100");
    check_spec("burnside:15:2403", "burnside:15:1204"); /* times 3 = 2^-1 */
    check_spec("burnside:16:0012/1000", "burnside:16:1000/0012");
    check_spec("burnside:16:1100/1200", "burnside:16");
    check_spec("burnside:16:1100/0011", "burnside:16:1100/0011");
    check_spec("burnside:17:0100/1000/0010", "burnside:17");
    check_spec("burnside:17:1111/0123/0011", "burnside:17:1004/0101/0011");
    check_refused("burnside:14:1000", "K = 15, 16 and 17");
    check_refused("burnside:18:1000", "K = 15, 16 and 17");
    check_refused("burnside:15:12", "4 digits");
    check_refused("burnside:15:12a3", "4 digits");
    check_refused("burnside:15:1235", "4 digits");
    check_refused("burnside:15:1000x", "'/'");
    check_refused("burnside:15:1000/0100", "1 row");
    check_refused("burnside:16:1000", "2 rows");
    check_refused("burnside:15:0000", "not independent");
    check_refused("burnside:16:1203/2401", "not independent");
    check_refused("burnside:17:1000/0100/1100", "not independent");
}

/* rows . v over Z_5 for each of g's layer-7 rows (nq's basis: the rows [I | 0]) */
static int kills(const kedr_cayley_group *g, const int v[4])
{
    int rows = g->n - 14;
    for (int r = 0; r < rows; r++) {
        int dot = 0;
        for (int j = 0; j < 4; j++)
            dot += (g->layer7_rows ? g->layer7[r][j] : (r == j)) * v[j];
        if (dot % 5)
            return 0;
    }
    return 1;
}

static void check_basis(void)
{
    /* a15..a18 of Kuznetsov's basis as reconstructed: [a11,a2], [a9,a3], [a12,a2], [a14,a1] */
    static const int a[4][4] = {{1, 0, 0, 0}, {4, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 2, 4}};
    for (int k = 1; k <= 22; k++) {
        if (k > 18 && k != 22)
            continue;
        char spec[32];
        snprintf(spec, sizeof spec, "burnside:%d", k);
        kedr_cayley_group *g = NULL, *h = parse(spec, 1);
        kedr_status s = kedr_cayley_parse_basis(spec, "kuznetsov", 1, &g);
        TU_CHECK(s == KEDR_OK && g, "%s --basis kuznetsov: %s", spec, kedr_last_error());
        if (!g || !h) {
            kedr_cayley_group_free(g);
            kedr_cayley_group_free(h);
            continue;
        }
        TU_CHECK(strstr(g->description, "Kuznetsov") != NULL, "%s: description '%s'", spec,
                 g->description);
        TU_CHECK(g->n == k && g->order == h->order && g->ngens == h->ngens && g->inverses,
                 "%s --basis kuznetsov: another group", spec);
        if (k == 15 || k == 17) {
            const char *want = k == 15 ? "burnside:15:1100" : "burnside:17:1000/0100/0012";
            TU_CHECK(strcmp(g->spec, want) == 0, "%s --basis kuznetsov: %s, expected %s", spec,
                     g->spec, want);
            /* the quotient kills a_{K+1}..a18 and no combination of a15..a_K */
            for (int j = k - 14; j < 4; j++)
                TU_CHECK(kills(g, a[j]), "%s: a%d not in the kernel", g->spec, 15 + j);
            for (int c = 1; c < (k == 15 ? 5 : 125); c++) {
                int v[4] = {0, 0, 0, 0};
                for (int i = 0, cc = c; i < k - 14; i++, cc /= 5)
                    for (int j = 0; j < 4; j++)
                        v[j] += (cc % 5) * a[i][j];
                TU_CHECK(!kills(g, v), "%s: combination %d of a15..a%d killed", g->spec, c, k);
            }
        } else {
            TU_CHECK(strcmp(g->spec, h->spec) == 0 && g->layer7_rows == 0,
                     "%s --basis kuznetsov: %s, expected nq's group", spec, g->spec);
        }
        kedr_cayley_group_free(g);
        kedr_cayley_group_free(h);
    }
    /* nq (and no basis) is kedr_cayley_parse itself */
    kedr_cayley_group *g = NULL;
    TU_CHECK(kedr_cayley_parse_basis("burnside:17:0012/1000/0100", "nq", 0, &g) == KEDR_OK && g &&
                 strcmp(g->spec, "burnside:17:1000/0100/0012") == 0, "--basis nq with ROWS");
    kedr_cayley_group_free(g);
    g = NULL;
    TU_CHECK(kedr_cayley_parse_basis("pancake:5", NULL, 0, &g) == KEDR_OK && g, "no basis");
    kedr_cayley_group_free(g);
    static const struct {
        const char *spec, *basis, *words;
    } bad[] = {
        {"burnside:19", "kuznetsov", "K = 1..18 and 22"},
        {"burnside:21", "kuznetsov", "K = 1..18 and 22"},
        {"burnside:23", "kuznetsov", "K = 1..18 and 22"},
        {"burnside:15:1100", "kuznetsov", "its own basis"},
        {"pancake:5", "kuznetsov", "burnside:K only"},
        {"burnside:5", "hall", "expected nq or kuznetsov"},
        {"burnside:27", "kuznetsov", "from 1 to"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g = NULL;
        kedr_status s = kedr_cayley_parse_basis(bad[i].spec, bad[i].basis, 0, &g);
        TU_CHECK(s == KEDR_ERR_INVALID && !g, "%s --basis %s: accepted", bad[i].spec,
                 bad[i].basis);
        TU_CHECK(strstr(kedr_last_error(), bad[i].words) != NULL, "%s --basis %s: '%s' lacks '%s'",
                 bad[i].spec, bad[i].basis, kedr_last_error(), bad[i].words);
        kedr_cayley_group_free(g);
    }
}

/* The image of an element of B_18 (rank in base 5) in B_K(L), L = g's rows. */
static uint64_t project(const kedr_cayley_group *g, uint64_t rank18)
{
    uint32_t y[CAYLEY_BURNSIDE_LIMIT] = {0}, z[CAYLEY_BURNSIDE_LIMIT] = {0};
    cayley_burnside_digits(rank18, 18, y);
    for (int i = 0; i < 14; i++)
        z[i] = y[i];
    for (int r = 0; r < g->n - 14; r++) {
        uint32_t c = 0;
        for (int j = 0; j < 4; j++)
            c += (g->layer7_rows ? g->layer7[r][j] : (uint32_t)(j == r)) * y[14 + j];
        z[14 + r] = c % 5u;
    }
    return cayley_burnside_rank(z, g->n);
}

static int gen_index(const kedr_cayley_group *g, int dim, int step)
{
    for (int k = 0; k < g->ngens; k++)
        if (g->dim[k] == dim && g->step[k] == step)
            return k;
    return -1;
}

static void check_quotient(uint64_t *seed)
{
    kedr_cayley_group *b18 = parse("burnside:18", 1);
    if (!b18)
        return;
    int tried = 0;
    for (int trial = 0; trial < 60; trial++) {
        int k = 15 + trial % 3, rows = k - 14;
        char spec[64];
        int len = snprintf(spec, sizeof spec, "burnside:%d:", k);
        for (int r = 0; r < rows; r++)
            len += snprintf(spec + len, sizeof spec - (size_t)len, "%s%d%d%d%d", r ? "/" : "",
                            (int)(tu_next(seed) % 5), (int)(tu_next(seed) % 5),
                            (int)(tu_next(seed) % 5), (int)(tu_next(seed) % 5));
        if (trial < 3) /* kedr's own rows too */
            snprintf(spec, sizeof spec, "burnside:%d", k);
        kedr_cayley_group *g = NULL;
        if (kedr_cayley_parse(spec, 1, &g) != KEDR_OK)
            continue; /* random rows of lower rank */
        tried++;
        long bad = 0;
        for (int e = 0; e < 3000; e++) {
            uint64_t x = tu_next(seed) % b18->order, px = project(g, x);
            for (int dim = 0; dim < 2; dim++)
                for (int step = -1; step <= 1; step += 2) {
                    int i18 = gen_index(b18, dim, step), ik = gen_index(g, dim, step);
                    uint64_t up = project(g, cayley_burnside_neighbour(b18, x, i18));
                    bad += up != cayley_burnside_neighbour(g, px, ik);
                }
        }
        TU_CHECK(bad == 0, "%s: the quotient map from B_18 fails to commute %ld times", g->spec,
                 bad);
        kedr_cayley_group_free(g);
    }
    TU_CHECK(tried >= 40, "only %d of 60 random layer-7 bases were of full rank", tried);
    kedr_cayley_group_free(b18);
}

int main(void)
{
    uint64_t seed = 20261127;
    check_specs();
    check_basis();
    check_quotient(&seed);
    return tu_finish("test_cayley_layer7");
}
