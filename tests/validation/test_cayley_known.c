/* cayley: growth functions and diameters known exactly, on every back end.
 *
 * Sources:
 *  - pancake numbers (diameter of the pancake graph), OEIS A058986:
 *    0, 1, 3, 4, 5, 7, 8, 9, 10, 11, 13, ... for n = 1, 2, ... (Gates & Papadimitriou 1979;
 *    Heydari & Sudborough 1997; Asai et al. 2006);
 *  - burnt pancake numbers, OEIS A078941: 1, 4, 6, 8, 10, 12, 14, 15, ... for n = 1, 2, ...
 *    (Cohen & Blum 1995; Cibulka 2011);
 *  - bubble-sort graph: the distance of a permutation is its number of inversions, so F(k) is
 *    the Mahonian number I(n, k) (OEIS A008302), computed here by the recurrence
 *    I(n, k) = sum_{j=0}^{min(k, n-1)} I(n-1, k-j);
 *  - transposition graph: the distance is n minus the number of cycles, so F(k) is the unsigned
 *    Stirling number of the first kind c(n, n-k) (OEIS A132393), by c(n,k) = c(n-1,k-1) +
 *    (n-1) c(n-1,k);
 *  - star graph diameter floor(3(n-1)/2) (Akers, Harel & Krishnamurthy 1987);
 *  - hypercube Z_2^k: F(s) = C(k, s); a directed ring Z_M: F(s) = 1 for s < M; an undirected
 *    ring: F(0) = 1, F(s) = 2 for 0 < s < M/2, F(M/2) = 1 for even M; a torus Z_M1 x ... x Z_Mk:
 *    the convolution of its rings, distances adding over coordinates.
 * All comparisons are exact (integers). */
#include "test_util.h"

static int run(kedr_ctx *ctx, const char *spec, int inverses, kedr_cayley_result *r)
{
    kedr_cayley_group *g = NULL;
    kedr_status s = kedr_cayley_parse(spec, inverses, &g);
    TU_CHECK(s == KEDR_OK, "%s: %s", spec, kedr_last_error());
    if (s != KEDR_OK)
        return 0;
    memset(r, TU_POISON_BYTE, sizeof *r);
    s = kedr_cayley_growth(ctx, g, NULL, r);
    TU_CHECK(s == KEDR_OK, "%s: %s", spec, kedr_last_error());
    TU_CHECK(s != KEDR_OK || r->reached == g->order, "%s: reached %llu of %llu", spec,
             (unsigned long long)r->reached, (unsigned long long)g->order);
    kedr_cayley_group_free(g);
    return s == KEDR_OK;
}

/* The library's growth function of spec against F[0..levels). */
static void expect_growth(kedr_ctx *ctx, const char *spec, int inverses, const uint64_t *F,
                          int levels)
{
    kedr_cayley_result r;
    if (!run(ctx, spec, inverses, &r))
        return;
    int same = r.diameter == levels - 1;
    for (int s = 0; same && s < levels; s++)
        same = r.growth[s] == F[s];
    TU_CHECK(same, "%s%s: growth function differs from the known one (diameter %d, expected %d)",
             spec, inverses ? " --inverses" : "", r.diameter, levels - 1);
    kedr_cayley_result_free(&r);
}

static void expect_diameter(kedr_ctx *ctx, const char *spec, int diameter)
{
    kedr_cayley_result r;
    if (!run(ctx, spec, 0, &r))
        return;
    TU_CHECK(r.diameter == diameter, "%s: diameter %d, expected %d", spec, r.diameter, diameter);
    kedr_cayley_result_free(&r);
}

static void check_permutation_groups(kedr_ctx *ctx)
{
    static const int pancake[] = {0, 0, 1, 3, 4, 5, 7, 8, 9, 10, 11}; /* A058986, index n */
    static const int burnt[] = {0, 1, 4, 6, 8, 10, 12, 14};          /* A078941, index n */
    char spec[64];
    /* quick: each family one size smaller (pancake:9, 362880 elements, is still many GPU
     * blocks); the comparisons stay exact */
    const int q = tu_quick() ? 1 : 0;
    for (int n = 2; n <= 10 - q; n++) {
        snprintf(spec, sizeof spec, "pancake:%d", n);
        expect_diameter(ctx, spec, pancake[n]);
    }
    for (int n = 1; n <= 7 - q; n++) {
        snprintf(spec, sizeof spec, "burnt-pancake:%d", n);
        expect_diameter(ctx, spec, burnt[n]);
    }
    for (int n = 2; n <= 9 - q; n++) {
        snprintf(spec, sizeof spec, "star:%d", n);
        expect_diameter(ctx, spec, 3 * (n - 1) / 2);
    }

    /* Mahonian numbers, row by row */
    uint64_t I[64] = {1}, J[64];
    int len = 1; /* I(1, k): only k = 0 */
    for (int n = 2; n <= 9 - q; n++) {
        int nlen = len + n - 1;
        for (int k = 0; k < nlen; k++) {
            J[k] = 0;
            for (int j = 0; j <= n - 1 && j <= k; j++)
                if (k - j < len)
                    J[k] += I[k - j];
        }
        memcpy(I, J, sizeof J);
        len = nlen;
        snprintf(spec, sizeof spec, "bubble:%d", n);
        expect_growth(ctx, spec, 0, I, len);
    }

    /* Stirling numbers of the first kind: c[n][k] */
    static uint64_t c[12][12];
    memset(c, 0, sizeof c);
    c[0][0] = 1;
    for (int n = 1; n < 12; n++)
        for (int k = 1; k <= n; k++)
            c[n][k] = c[n - 1][k - 1] + (uint64_t)(n - 1) * c[n - 1][k];
    for (int n = 2; n <= 9 - q; n++) {
        uint64_t F[12];
        for (int k = 0; k < n; k++)
            F[k] = c[n][n - k];
        snprintf(spec, sizeof spec, "transpositions:%d", n);
        expect_growth(ctx, spec, 0, F, n);
    }
}

/* The growth function of one ring Z_M, directed or not; returns the number of levels. */
static int ring(uint32_t m, int inverses, uint64_t *F)
{
    if (!inverses) {
        for (uint32_t s = 0; s < m; s++)
            F[s] = 1;
        return (int)m;
    }
    int levels = (int)(m / 2) + 1;
    for (int s = 0; s < levels; s++)
        F[s] = s == 0 || (m % 2 == 0 && s == (int)(m / 2)) ? 1 : 2;
    return levels;
}

static void check_abelian_groups(kedr_ctx *ctx)
{
    char spec[256];
    uint64_t F[4096], A[4096], B[4096];
    /* hypercubes: binomial coefficients; quick: up to 2^16 elements */
    const int kmax = (int)tu_scale(20, 16);
    for (int k = 1; k <= kmax; k++) {
        int len = snprintf(spec, sizeof spec, "abelian:2");
        for (int i = 1; i < k; i++)
            len += snprintf(spec + len, sizeof spec - (size_t)len, ",2");
        F[0] = 1;
        for (int s = 1; s <= k; s++)
            F[s] = F[s - 1] * (uint64_t)(k - s + 1) / (uint64_t)s;
        expect_growth(ctx, spec, 0, F, k + 1);
        if (k == kmax)
            expect_growth(ctx, spec, 1, F, k + 1);
    }
    /* rings */
    static const uint32_t rings[] = {2, 3, 4, 5, 64, 65, 1000, 1001};
    for (size_t i = 0; i < sizeof rings / sizeof rings[0]; i++)
        for (int inv = 0; inv <= 1; inv++) {
            snprintf(spec, sizeof spec, "abelian:%u", rings[i]);
            expect_growth(ctx, spec, inv, F, ring(rings[i], inv, F));
        }
    /* tori: the convolution of their rings; the last one has more than 2^24 elements (quick:
     * 65 x 65 x 63, about 2^18, still many GPU blocks and cpu chunks) */
    static const uint32_t full_tori[][3] = {{3, 4, 1}, {10, 10, 1}, {17, 64, 1}, {1000, 999, 1},
                                            {5, 6, 7}, {257, 257, 255}};
    uint32_t tori[6][3];
    memcpy(tori, full_tori, sizeof tori);
    if (tu_quick()) {
        tori[5][0] = tori[5][1] = 65;
        tori[5][2] = 63;
    }
    for (size_t i = 0; i < sizeof tori / sizeof tori[0]; i++)
        for (int inv = i == 5; inv <= 1; inv++) { /* the large one: undirected */
            int levels = 1, len;
            F[0] = 1;
            len = snprintf(spec, sizeof spec, "abelian");
            for (int d = 0; d < 3 && tori[i][d] > 1; d++) {
                int lb = ring(tori[i][d], inv, B);
                for (int s = 0; s < levels + lb - 1; s++) {
                    A[s] = 0;
                    for (int a = 0; a < levels; a++)
                        if (s - a >= 0 && s - a < lb)
                            A[s] += F[a] * B[s - a];
                }
                levels += lb - 1;
                memcpy(F, A, (size_t)levels * sizeof F[0]);
                len += snprintf(spec + len, sizeof spec - (size_t)len, "%c%u", d ? ',' : ':',
                                tori[i][d]);
            }
            expect_growth(ctx, spec, inv, F, levels);
        }
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        check_permutation_groups(ctx);
        check_abelian_groups(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_cayley_known");
}
