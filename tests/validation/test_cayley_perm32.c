/* cayley sparse mode on 17 to 32 points (perm:N, states of base images in 1 to 3 words):
 * group orders by Schreier-Sims against their formulas, growth functions against a plain
 * breadth-first search over explicit permutations and against convolutions of the factors of
 * direct products, the 2x2x2 cube on its 21 moving stickers against OEIS, M23, the wider
 * states forced on small groups, chunked levels, checkpoints (and format version 1), cpu and
 * cuda identical.
 *
 * Sources:
 *  - |PSL(2,p)| = p (p^2 - 1) / 2 and |PGL(2,p)| = p (p^2 - 1) for an odd prime p, acting on
 *    the p + 1 points of the projective line; PSL(2,p) = <x -> x + 1, x -> -1/x>, and with
 *    x -> r x for a non-residue r it is PGL(2,p) (Dickson, Linear Groups, 1901, ch. XII).
 *  - Z_m wr Z_k and S_3 wr Z_6: order |base group|^k k. A direct product with the union of
 *    the factors' generators: word lengths add, so its growth function is the convolution of
 *    the factors' (here from the dense mode of pancake:4, bubble:4, star:4 and from perm:3).
 *  - 2x2x2 cube, quarter-turn metric: OEIS A079762 (God's number 14).
 *  - M23, order 10200960: the generators of MathieuGroup(23) in GAP 4.12.1
 *    (data/cayley/m23.txt); its growth below was computed once by plain_growth of this file
 *    (right action on whole permutations, a hash set), which the library's search (left
 *    action on base images, sorted layers) must reproduce. */
#include "test_util.h"
#include "cayley/sparse.h"

#include <unistd.h>

#define MAXN 32
#define MAXG 16
/* as data/cayley/m23.txt */
#define M23_SPEC                                                                               \
    "perm:23:(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23),"                  \
    "(3 17 10 7 9)(4 13 14 19 5)(8 18 11 12 23)(15 20 22 21 16)"

static const uint64_t qtm[] = {1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588,
                               1350852, 782536, 90280, 276};
static const uint64_t m23[] = {1,       2,       4,       8,       16,      31,      61,
                               120,     236,     463,     908,     1781,    3493,    6848,
                               13422,   26287,   51388,   100068,  193364,  368256,  681689,
                               1195481, 1888456, 2439250, 2153965, 949567,  123908,  1886,
                               1};

/* A generating set as the test builds it: gen[k][i] = the image of point i (0-based). */
typedef struct {
    int n, ngens;
    uint8_t gen[MAXG][MAXN];
} gens;

/* G has ngens identity generators on n points. */
static void identities(gens *G, int n, int ngens)
{
    memset(G, 0, sizeof *G);
    G->n = n;
    G->ngens = ngens;
    for (int k = 0; k < ngens; k++)
        for (int i = 0; i < n; i++)
            G->gen[k][i] = (uint8_t)i;
}

/* Adds the cycle (a b c ...) of 1-based points to generator k. */
static void cycle(gens *G, int k, const int *pts, int len)
{
    for (int i = 0; i < len; i++)
        G->gen[k][pts[i] - 1] = (uint8_t)(pts[(i + 1) % len] - 1);
}

/* perm:N:[images],[images],... */
static void spec_of(const gens *G, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "perm:%d:", G->n);
    for (int k = 0; k < G->ngens; k++) {
        len += (size_t)snprintf(out + len, size - len, "%s[", k ? "," : "");
        for (int i = 0; i < G->n; i++)
            len += (size_t)snprintf(out + len, size - len, "%s%d", i ? "," : "", G->gen[k][i] + 1);
        len += (size_t)snprintf(out + len, size - len, "]");
    }
}

/* ---- the plain search: explicit permutations, a hash set, a queue, y[i] = x[gen[i]] ---- */

static uint64_t hash_perm(const uint8_t *x, int n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++)
        h = (h ^ x[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* F(0..) of G (with the inverses of its generators when inverses); the number of levels, 0
 * when more than most elements. */
static int plain_growth(const gens *G, int inverses, uint64_t *F, int max_levels, size_t most)
{
    int n = G->n, ng = G->ngens;
    uint8_t all[2 * MAXG][MAXN];
    for (int k = 0; k < ng; k++) {
        memcpy(all[k], G->gen[k], (size_t)n);
        for (int i = 0; i < n; i++)
            all[ng + k][G->gen[k][i]] = (uint8_t)i;
    }
    if (inverses)
        ng *= 2;
    size_t cap = 1;
    while (cap < 2 * most)
        cap *= 2;
    uint8_t *el = malloc(most * MAXN);
    uint32_t *tab = calloc(cap, sizeof *tab);
    int levels = 0;
    if (!el || !tab)
        goto done;
    size_t count = 1, lo = 0;
    for (int i = 0; i < n; i++)
        el[i] = (uint8_t)i;
    tab[hash_perm(el, n) & (cap - 1)] = 1;
    F[levels++] = 1;
    while (lo < count) {
        size_t hi = count;
        for (size_t e = lo; e < hi; e++)
            for (int k = 0; k < ng; k++) {
                uint8_t y[MAXN];
                for (int i = 0; i < n; i++)
                    y[i] = el[e * MAXN + all[k][i]];
                size_t h = hash_perm(y, n) & (cap - 1);
                int found = 0;
                while (tab[h] && !found) {
                    found = memcmp(el + (size_t)(tab[h] - 1) * MAXN, y, (size_t)n) == 0;
                    h = (h + 1) & (cap - 1);
                }
                if (found)
                    continue;
                if (count == most) {
                    levels = 0;
                    goto done;
                }
                memcpy(el + count * MAXN, y, (size_t)n);
                tab[h] = (uint32_t)++count;
            }
        if (count > hi) {
            if (levels == max_levels) {
                levels = 0;
                goto done;
            }
            F[levels++] = count - hi;
        }
        lo = hi;
    }
done:
    free(el);
    free(tab);
    return levels;
}

/* ---- runs ---- */

static kedr_cayley_group *parse(const char *spec, int inverses)
{
    kedr_cayley_group *g = NULL;
    kedr_status s = kedr_cayley_parse(spec, inverses, &g);
    TU_CHECK(s == KEDR_OK, "%.80s: %s", spec, kedr_last_error());
    return s == KEDR_OK ? g : NULL;
}

/* Sparse growth of g under opt (NULL: defaults), checked for consistency; 0 when it failed. */
static int run(kedr_ctx *ctx, const kedr_cayley_group *g, const kedr_cayley_options *opt,
               kedr_cayley_result *r)
{
    memset(r, TU_POISON_BYTE, sizeof *r);
    kedr_status s = kedr_cayley_growth(ctx, g, opt, r);
    TU_CHECK(s == KEDR_OK, "%.80s: %s", g->spec, kedr_last_error());
    if (s != KEDR_OK)
        return 0;
    uint64_t sum = 0;
    for (int d = 0; d <= r->diameter; d++)
        sum += r->growth[d];
    TU_CHECK(r->mode == KEDR_CAYLEY_SPARSE && sum == r->reached, "%.80s: mode %d, sum %llu",
             g->spec, (int)r->mode, (unsigned long long)sum);
    TU_CHECK(!r->complete || r->reached == g->order, "%.80s: reached %llu of %llu", g->spec,
             (unsigned long long)r->reached, (unsigned long long)g->order);
    return 1;
}

static int same(const kedr_cayley_result *r, const uint64_t *F, int levels)
{
    if (r->diameter + 1 != levels)
        return 0;
    for (int s = 0; s < levels; s++)
        if (r->growth[s] != F[s])
            return 0;
    return 1;
}

/* Growth of g equals F[0..levels); with `words` > 0, g's states must have that many words. */
static void expect_growth(kedr_ctx *ctx, const kedr_cayley_group *g, const uint64_t *F,
                          int levels, int words, const char *what)
{
    kedr_cayley_result r;
    TU_CHECK(words == 0 || g->state_words == words, "%s: states of %d words, expected %d", what,
             g->state_words, words);
    if (!run(ctx, g, NULL, &r))
        return;
    TU_CHECK(same(&r, F, levels), "%s (%.60s): growth differs (diameter %d, expected %d)", what,
             g->spec, r.diameter, levels - 1);
    kedr_cayley_result_free(&r);
}

/* As expect_growth, but under KEDR_TEST_QUICK only levels 0..stop (the big groups): those
 * against F exactly, the search stopped there (complete = 0). */
static void expect_growth_quick(kedr_ctx *ctx, const kedr_cayley_group *g, const uint64_t *F,
                                int levels, int stop, int words, const char *what)
{
    if (!tu_quick()) {
        expect_growth(ctx, g, F, levels, words, what);
        return;
    }
    TU_CHECK(words == 0 || g->state_words == words, "%s: states of %d words, expected %d", what,
             g->state_words, words);
    kedr_cayley_options opt = {.max_levels = stop};
    kedr_cayley_result r;
    if (!run(ctx, g, &opt, &r))
        return;
    TU_CHECK(!r.complete && same(&r, F, stop + 1), "%s (%.60s): first %d levels differ", what,
             g->spec, stop + 1);
    kedr_cayley_result_free(&r);
}

/* G's group from its spec: order, then growth against the plain search. */
static void expect_plain(kedr_ctx *ctx, const gens *G, int inverses, uint64_t order,
                         const char *what)
{
    static char spec[8192];
    static uint64_t F[4096];
    spec_of(G, spec, sizeof spec);
    kedr_cayley_group *g = parse(spec, inverses);
    if (!g)
        return;
    TU_CHECK(g->order == order, "%s: Schreier-Sims order %llu, expected %llu", what,
             (unsigned long long)g->order, (unsigned long long)order);
    int levels = plain_growth(G, inverses, F, 4096, (size_t)order);
    TU_CHECK(levels > 0, "%s: the plain search failed", what);
    if (levels)
        expect_growth(ctx, g, F, levels, 0, what);
    kedr_cayley_group_free(g);
}

/* n-cycle on N points: directed, F = 1 at distances 0..N-1; undirected, 1, 2, ..., 2 (and a
 * last 1 when N is even). */
static void check_cyclic(kedr_ctx *ctx)
{
    static const int sizes[] = {17, 25, 32};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        int n = sizes[c];
        char spec[256];
        size_t len = (size_t)snprintf(spec, sizeof spec, "perm:%d:(", n);
        for (int i = 1; i <= n; i++)
            len += (size_t)snprintf(spec + len, sizeof spec - len, "%d%s", i, i < n ? " " : ")");
        for (int inv = 0; inv < 2; inv++) {
            uint64_t F[MAXN];
            int levels = inv ? n / 2 + 1 : n;
            for (int s = 0; s < levels; s++)
                F[s] = inv && s > 0 && !(n % 2 == 0 && s == n / 2) ? 2 : 1;
            kedr_cayley_group *g = parse(spec, inv);
            if (!g)
                continue;
            TU_CHECK(g->order == (uint64_t)n && g->nbase == 1 && g->state_words == 1,
                     "%s: order %llu, base of %d points", spec, (unsigned long long)g->order,
                     g->nbase);
            expect_growth(ctx, g, F, levels, 1, spec);
            /* every point in the base: 32 fields, three words */
            uint8_t base[MAXN];
            for (int i = 0; i < n; i++)
                base[i] = (uint8_t)(n - 1 - i);
            TU_OK(cayley_perm_set_base(g, base, n));
            expect_growth(ctx, g, F, levels, n > 24 ? 3 : 2, "cycle, whole base");
            kedr_cayley_group_free(g);
        }
    }
}

static int inverse_mod(int a, int p)
{
    for (int x = 1; x < p; x++)
        if (a * x % p == 1)
            return x;
    return 0;
}

/* PSL(2,p) and PGL(2,p) on the projective line, point x < p and infinity = p. */
static void projective(gens *G, int p, int pgl)
{
    memset(G, 0, sizeof *G);
    G->n = p + 1;
    G->ngens = 2 + pgl;
    for (int x = 0; x <= p; x++) {
        G->gen[0][x] = (uint8_t)(x == p ? p : (x + 1) % p);
        G->gen[1][x] = (uint8_t)(x == 0 ? p : x == p ? 0 : p - inverse_mod(x, p));
    }
    if (pgl) {
        int r = 2;
        for (;; r++) { /* the smallest non-residue */
            int square = 0;
            for (int y = 1; y < p && !square; y++)
                square = y * y % p == r;
            if (!square)
                break;
        }
        for (int x = 0; x <= p; x++)
            G->gen[2][x] = (uint8_t)(x == p ? p : r * x % p);
    }
}

static void check_projective(kedr_ctx *ctx)
{
    static const int primes[] = {17, 19, 23, 29, 31};
    for (size_t c = 0; c < sizeof primes / sizeof primes[0]; c++) {
        int p = primes[c];
        uint64_t psl = (uint64_t)p * (uint64_t)(p * p - 1) / 2;
        gens G;
        char what[64];
        for (int pgl = 0; pgl < 2; pgl++)
            for (int inv = 0; inv < 2; inv++) {
                if (pgl && inv && p > 23)
                    continue;
                projective(&G, p, pgl);
                snprintf(what, sizeof what, "P%sL(2,%d)%s", pgl ? "G" : "S", p,
                         inv ? " with inverses" : "");
                expect_plain(ctx, &G, inv, pgl ? 2 * psl : psl, what);
            }
        /* the whole line as the base */
        projective(&G, p, 0);
        char spec[4096];
        spec_of(&G, spec, sizeof spec);
        kedr_cayley_group *g = parse(spec, 1), *h = parse(spec, 1);
        if (!g || !h)
            continue;
        uint8_t base[MAXN];
        for (int i = 0; i <= p; i++)
            base[i] = (uint8_t)i;
        TU_OK(cayley_perm_set_base(h, base, p + 1));
        kedr_cayley_result a, b;
        if (run(ctx, g, NULL, &a)) {
            if (run(ctx, h, NULL, &b)) {
                TU_CHECK(h->state_words == (p + 1 > 24 ? 3 : 2) &&
                             same(&b, a.growth, a.diameter + 1),
                         "PSL(2,%d): growth with the whole line as base differs", p);
                kedr_cayley_result_free(&b);
            }
            kedr_cayley_result_free(&a);
        }
        kedr_cayley_group_free(g);
        kedr_cayley_group_free(h);
    }
}

/* Wreath products: S_3 wr Z_6 on 18 points, Z_2 wr Z_12 on 24 points. */
static void check_wreath(kedr_ctx *ctx)
{
    gens G;
    /* quick: Z_3 wr Z_6 (without the transposition), 4374 elements on the same 18 points */
    const int q = tu_quick();
    identities(&G, 18, 3 - q);
    static const int t[] = {1, 2}, c3[] = {1, 2, 3};
    if (!q)
        cycle(&G, 0, t, 2);
    cycle(&G, 1 - q, c3, 3);
    for (int r = 0; r < 3; r++) {
        int pts[6];
        for (int b = 0; b < 6; b++)
            pts[b] = 3 * b + r + 1;
        cycle(&G, 2 - q, pts, 6);
    }
    expect_plain(ctx, &G, 0, q ? 4374 : 279936, q ? "Z_3 wr Z_6" : "S_3 wr Z_6");

    identities(&G, 24, 2);
    cycle(&G, 0, t, 2);
    for (int r = 0; r < 2; r++) {
        int pts[12];
        for (int b = 0; b < 12; b++)
            pts[b] = 2 * b + r + 1;
        cycle(&G, 1, pts, 12);
    }
    for (int inv = 0; inv < 2; inv++)
        expect_plain(ctx, &G, inv, 4096 * 12, inv ? "Z_2 wr Z_12 with inverses" : "Z_2 wr Z_12");
}

/* c = a convolved with b; returns the levels of c. */
static int convolve(const uint64_t *a, int la, const uint64_t *b, int lb, uint64_t *c)
{
    for (int s = 0; s < la + lb - 1; s++) {
        c[s] = 0;
        for (int i = 0; i < la; i++)
            if (s - i >= 0 && s - i < lb)
                c[s] += a[i] * b[s - i];
    }
    return la + lb - 1;
}

/* The growth of spec (dense or sparse as it comes) into F; its levels, 0 on failure. */
static int growth_of(kedr_ctx *ctx, const char *spec, int inverses, uint64_t *F)
{
    kedr_cayley_group *g = parse(spec, inverses);
    kedr_cayley_result r;
    int levels = 0;
    memset(&r, 0, sizeof r);
    if (g && kedr_cayley_growth(ctx, g, NULL, &r) == KEDR_OK) {
        levels = r.diameter + 1;
        memcpy(F, r.growth, (size_t)levels * 8);
        kedr_cayley_result_free(&r);
    }
    TU_CHECK(levels > 0, "%s: %s", spec, kedr_last_error());
    kedr_cayley_group_free(g);
    return levels;
}

/* Direct products on disjoint supports against the convolution of their factors. */
static void check_products(kedr_ctx *ctx)
{
    /* pancake:4 x bubble:4 x star:4 x directed Z_5 on 17 points (not inverse-closed) */
    uint64_t A[64], B[64], C[64];
    int la = growth_of(ctx, "pancake:4", 0, A);
    int lb = growth_of(ctx, "bubble:4", 0, B);
    la = convolve(A, la, B, lb, C);
    lb = growth_of(ctx, "star:4", 0, B);
    la = convolve(C, la, B, lb, A);
    for (int s = 0; s < 5; s++)
        B[s] = 1;
    la = convolve(A, la, B, 5, C);
    kedr_cayley_group *g =
        parse("perm:17:(1 2),(1 3),(1 4)(2 3),(5 6),(6 7),(7 8),(9 10),(9 11),(9 12),"
              "(13 14 15 16 17)", 0);
    /* pancake:4 is the prefix reversals (1 2), (1 3), (1 4)(2 3) */
    if (g) {
        TU_CHECK(g->order == 24 * 24 * 24 * 5 && !g->inverse_closed, "product: order %llu",
                 (unsigned long long)g->order);
        expect_growth(ctx, g, C, la, 1, "pancake:4 x bubble:4 x star:4 x Z_5");
        kedr_cayley_group_free(g);
    }

    /* S_3^7 on 21 points, directed: a base of 14 points, two words. Quick: S_3^6 x Z_2 on 20
     * points (the last factor (19 20)), 93312 elements, a base of 13 points, still two words */
    const int quick = tu_quick(), nf = quick ? 6 : 7;
    const uint64_t order = quick ? 93312 : 279936;
    int l3 = growth_of(ctx, "perm:3:(1 2),(1 2 3)", 0, B);
    A[0] = 1;
    la = 1;
    for (int f = 0; f < nf; f++) {
        la = convolve(A, la, B, l3, C);
        memcpy(A, C, (size_t)la * 8);
    }
    if (quick) {
        B[0] = B[1] = 1; /* Z_2, directed */
        la = convolve(A, la, B, 2, C);
        memcpy(A, C, (size_t)la * 8);
    }
    char spec[512];
    size_t len = (size_t)snprintf(spec, sizeof spec, quick ? "perm:20:" : "perm:21:");
    for (int f = 0; f < nf; f++)
        len += (size_t)snprintf(spec + len, sizeof spec - len, "%s(%d %d),(%d %d %d)",
                                f ? "," : "", 3 * f + 1, 3 * f + 2, 3 * f + 1, 3 * f + 2,
                                3 * f + 3);
    if (quick)
        snprintf(spec + len, sizeof spec - len, ",(19 20)");
    g = parse(spec, 0);
    if (g) {
        TU_CHECK(g->order == order && g->nbase == 2 * nf + quick, "S_3^7: order %llu, base %d",
                 (unsigned long long)g->order, g->nbase);
        expect_growth(ctx, g, A, la, 2, "S_3^7");
        /* chunked: under limits below what the whole run held */
        kedr_cayley_result r;
        if (run(ctx, g, NULL, &r)) {
            size_t peak = r.memory_bytes;
            kedr_cayley_result_free(&r);
            {
                kedr_cayley_options opt = {.memory_limit = peak / 10 * 6};
                if (run(ctx, g, &opt, &r)) {
                    TU_CHECK(same(&r, A, la) && r.memory_bytes <= opt.memory_limit,
                             "S_3^7 under %zu bytes: growth differs or held %zu", opt.memory_limit,
                             r.memory_bytes);
                    kedr_cayley_result_free(&r);
                }
            }
        }
        kedr_cayley_group_free(g);
    }
}

/* The 2x2x2 cube on the 21 stickers of the corners other than DBL, in the corner model of
 * src/cayley/perm_spec.c: sticker 3 i + o is facelet o of position i, and a turn that brings
 * the corner at perm[i] to i with twist t[i] brings sticker (perm[i], o - t[i]) to (i, o). */
static void check_stickers(kedr_ctx *ctx)
{
    static const uint8_t perm[3][7] = {
        {3, 0, 1, 2, 4, 5, 6}, {4, 1, 2, 0, 6, 5, 3}, {1, 5, 2, 3, 0, 4, 6}};
    static const uint8_t twist[3][7] = {
        {0, 0, 0, 0, 0, 0, 0}, {2, 0, 0, 1, 1, 0, 2}, {1, 2, 0, 0, 2, 1, 0}};
    gens G;
    identities(&G, 21, 3);
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 7; i++)
            for (int o = 0; o < 3; o++)
                G.gen[f][3 * i + o] = (uint8_t)(3 * perm[f][i] + (o + 3 - twist[f][i]) % 3);
    char spec[1024];
    spec_of(&G, spec, sizeof spec);
    kedr_cayley_group *g = parse(spec, 1);
    if (g) {
        TU_CHECK(g->order == 3674160, "stickers: order %llu", (unsigned long long)g->order);
        /* quick: 9 levels, 159 120 elements */
        expect_growth_quick(ctx, g, qtm, 15, 8, 1, "2x2x2 cube stickers, qtm");
        kedr_cayley_group_free(g);
    }
}

static void check_m23(kedr_ctx *ctx)
{
    kedr_cayley_group *g = parse(M23_SPEC, 0);
    if (g) {
        TU_CHECK(g->order == 10200960, "M23: order %llu", (unsigned long long)g->order);
        /* quick: 18 levels, 205 137 elements */
        expect_growth_quick(ctx, g, m23, 29, 17, 1, "M23");
        kedr_cayley_group_free(g);
    }
}

/* ---- checkpoints ---- */

static int resume_same(kedr_ctx *ctx, const kedr_cayley_group *g, const char *path, int stop,
                       const kedr_cayley_result *full)
{
    kedr_cayley_options opt = {.checkpoint_path = path, .max_levels = stop};
    kedr_cayley_result r;
    int ok = 0;
    if (run(ctx, g, &opt, &r)) {
        kedr_cayley_result_free(&r);
        kedr_cayley_options res = {.resume_path = path};
        if (run(ctx, g, &res, &r)) {
            ok = r.complete && r.resumed_from == stop && same(&r, full->growth, full->diameter + 1);
            kedr_cayley_result_free(&r);
        }
    }
    TU_CHECK(ok, "%.60s: resumed from level %d, growth differs", g->spec, stop);
    return ok;
}

/* Reads path whole into *size bytes (malloc'd). */
static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        rewind(f);
        b = n > 0 ? malloc((size_t)n) : NULL;
        if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
            free(b);
            b = NULL;
        }
        *size = (size_t)n;
    }
    if (f)
        fclose(f);
    return b;
}

/* Writes b with its trailing FNV-1a 64 checksum recomputed. */
static void spit(const char *path, unsigned char *b, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i + 8 < size; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    memcpy(b + size - 8, &h, 8);
    FILE *f = fopen(path, "wb");
    TU_CHECK(f && fwrite(b, 1, size, f) == size, "cannot write %s", path);
    if (f)
        fclose(f);
}

static void check_checkpoints(kedr_ctx *ctx, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/kedr-perm32-%d.ckpt", dir, (int)getpid());
    /* two words, with a whole base of 24 points: PSL(2,23) with inverses (inverse-closed) and
     * Z_2 wr Z_12 (directed) */
    gens G;
    projective(&G, 23, 0);
    char psl[2048];
    spec_of(&G, psl, sizeof psl);
    const char *specs[] = {psl, "perm:24:(1 2),(1 3 5 7 9 11 13 15 17 19 21 23)(2 4 6 8 10 12 "
                                "14 16 18 20 22 24)"};
    for (int c = 0; c < 2; c++) {
        kedr_cayley_group *g = parse(specs[c], c == 0);
        if (!g)
            continue;
        uint8_t base[24];
        for (int i = 0; i < 24; i++)
            base[i] = (uint8_t)(23 - i);
        TU_OK(cayley_perm_set_base(g, base, 24));
        kedr_cayley_result full;
        if (run(ctx, g, NULL, &full)) {
            TU_CHECK(g->state_words == 2, "%.40s: %d words", g->spec, g->state_words);
            resume_same(ctx, g, path, 3, &full);
            resume_same(ctx, g, path, full.diameter - 1, &full);
            kedr_cayley_result_free(&full);
        }
        kedr_cayley_group_free(g);
    }

    /* format versions 1 (one word, the words field zero) and 2 still read (a subgroup's states
     * are not ranks); other versions and word counts are refused */
    kedr_cayley_group *g = parse("perm:8:(1 2 3)(4 5),(2 6 7 8)", 0);
    kedr_cayley_result full, r;
    if (!g || !run(ctx, g, NULL, &full)) {
        kedr_cayley_group_free(g);
        return;
    }
    kedr_cayley_options opt = {.checkpoint_path = path, .max_levels = 4};
    if (run(ctx, g, &opt, &r))
        kedr_cayley_result_free(&r);
    size_t size = 0;
    unsigned char *b = slurp(path, &size);
    TU_CHECK(b && size > 232 && memcmp(b, "KEDRCKS1", 8) == 0, "checkpoint %s unreadable", path);
    if (b) {
        uint32_t version, words;
        memcpy(&version, b + 8, 4);
        memcpy(&words, b + 188, 4);
        TU_CHECK(version == 3 && words == 1, "checkpoint version %u, words %u", version, words);
        static const struct {
            uint32_t version, words;
            const char *message;
        } edits[] = {{1, 0, NULL},
                     {1, 1, "states of 1 words, this group's have 1"},
                     {2, 2, "states of 2 words, this group's have 1"},
                     {2, 1, NULL},
                     {4, 1, "version 4; this kedr reads versions 1 to 3"}};
        for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
            memcpy(b + 8, &edits[e].version, 4);
            memcpy(b + 188, &edits[e].words, 4);
            spit(path, b, size);
            kedr_cayley_options res = {.resume_path = path};
            memset(&r, 0, sizeof r);
            kedr_status s = kedr_cayley_growth(ctx, g, &res, &r);
            if (!edits[e].message) {
                TU_CHECK(s == KEDR_OK && r.resumed_from == 4 &&
                             same(&r, full.growth, full.diameter + 1),
                         "version 1 checkpoint: %s", kedr_last_error());
                if (s == KEDR_OK)
                    kedr_cayley_result_free(&r);
            } else {
                TU_CHECK(s == KEDR_ERR_PARSE && strstr(kedr_last_error(), edits[e].message),
                         "edited checkpoint %u/%u: status %d, '%s'", edits[e].version,
                         edits[e].words, (int)s, kedr_last_error());
            }
        }
        free(b);
    }
    kedr_cayley_result_free(&full);
    kedr_cayley_group_free(g);
    unlink(path);
}

static void check_errors(void)
{
    kedr_cayley_group *g = parse("perm:20:(1 2 3),(4 5)", 0);
    if (!g)
        return;
    /* 0 moves under <(1 2 3), (4 5)>, then only 3 under its stabiliser <(4 5)> */
    TU_CHECK(g->nbase == 2 && g->base[0] == 0 && g->base[1] == 3 && g->state_words == 1,
             "perm:20 base of %d points", g->nbase);
    uint8_t lacks[2] = {0, 1}, twice[4] = {0, 1, 3, 1}, outside[4] = {0, 1, 3, 20};
    TU_CHECK(cayley_perm_set_base(g, lacks, 2) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "lacks point 3"),
             "a base without point 3: %s", kedr_last_error());
    TU_CHECK(cayley_perm_set_base(g, twice, 4) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "base[3] = 1 repeats"),
             "a repeated base point: %s", kedr_last_error());
    TU_CHECK(cayley_perm_set_base(g, outside, 4) == KEDR_ERR_INVALID, "a base point outside");
    kedr_cayley_group_free(g);
}

int main(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    check_errors();
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        check_cyclic(ctx);
        check_projective(ctx);
        check_wreath(ctx);
        check_products(ctx);
        check_checkpoints(ctx, dir);
        check_stickers(ctx);
        check_m23(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_cayley_perm32");
}
