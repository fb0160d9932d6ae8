/* cayley: spec parsing, ranking, argument errors, and the dense search against an independent
 * brute-force breadth-first search for every kind of group at small sizes, on every back end. */
#include "test_util.h"

#include <sys/stat.h>
#include <unistd.h>

/* ---- an independent brute-force BFS ------------------------------------------------------
 * Elements are explicit arrays packed into 64 bits (a byte per entry: the value plus 1, with the
 * top bit as the sign for signed permutations), kept in an open-addressing hash set. Generators
 * are built here from their definitions, and act by multiplication on the LEFT for permutations
 * (relabelling values: y[i] = g(x[i])), while the library multiplies on the right: the word
 * length of an element is the same either way, so the growth functions must agree. */

#define BF_MAX_LEVELS 16384

typedef struct {
    uint64_t *keys;
    size_t cap;
} bf_set;

static uint64_t bf_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* Inserts k (never 0); returns 1 when it was new. */
static int bf_insert(bf_set *s, uint64_t k)
{
    size_t i = (size_t)bf_hash(k) & (s->cap - 1);
    while (s->keys[i]) {
        if (s->keys[i] == k)
            return 0;
        i = (i + 1) & (s->cap - 1);
    }
    s->keys[i] = k;
    return 1;
}

typedef struct {
    int n, ngens;
    int signed_perm;
    int g[256][16];   /* permutations: the images g(v); signed: positions y[i] = x[g[i]] */
    int neg[256][16]; /* signed: negate position i */
} bf_gens;

static uint64_t bf_pack(const int *x, int n)
{
    uint64_t k = 0;
    for (int i = 0; i < n; i++)
        k |= (uint64_t)(uint8_t)x[i] << (8 * i);
    return k;
}

static void bf_unpack(uint64_t k, int *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = (int)(int8_t)(uint8_t)(k >> (8 * i));
}

/* Growth function by plain BFS with explicit element lists; returns the number of levels. */
static int bf_growth(const bf_gens *G, uint64_t order, uint64_t *F)
{
    bf_set set = {NULL, 1};
    while (set.cap < 2 * order)
        set.cap <<= 1;
    set.keys = calloc(set.cap, sizeof *set.keys);
    uint64_t *cur = tu_host_alloc(order * 8), *nxt = tu_host_alloc(order * 8);
    int n = G->n, x[16], y[16];
    for (int i = 0; i < n; i++)
        x[i] = i + 1; /* signed entries: +-(value + 1) */
    cur[0] = bf_pack(x, n);
    bf_insert(&set, cur[0]);
    size_t ncur = 1;
    int levels = 0;
    while (ncur) {
        F[levels++] = ncur;
        size_t nnext = 0;
        for (size_t j = 0; j < ncur; j++) {
            bf_unpack(cur[j], x, n);
            for (int k = 0; k < G->ngens; k++) {
                for (int i = 0; i < n; i++) {
                    if (G->signed_perm) {
                        y[i] = x[G->g[k][i]];
                        if (G->neg[k][i])
                            y[i] = -y[i];
                    } else {
                        y[i] = G->g[k][x[i] - 1] + 1;
                    }
                }
                uint64_t key = bf_pack(y, n);
                if (bf_insert(&set, key))
                    nxt[nnext++] = key;
            }
        }
        uint64_t *t = cur;
        cur = nxt;
        nxt = t;
        ncur = nnext;
    }
    free(set.keys);
    free(cur);
    free(nxt);
    return levels;
}

static void bf_add(bf_gens *G, const int *g, const int *neg)
{
    for (int i = 0; i < G->n; i++) {
        G->g[G->ngens][i] = g[i];
        G->neg[G->ngens][i] = neg ? neg[i] : 0;
    }
    G->ngens++;
}

static void bf_swap(bf_gens *G, int a, int b)
{
    int g[16];
    for (int i = 0; i < G->n; i++)
        g[i] = i;
    g[a] = b;
    g[b] = a;
    bf_add(G, g, NULL);
}

/* The generators of a permutation family, from the definitions in kedr/cayley.h. */
static void bf_family(bf_gens *G, const char *family, int n, int inverses)
{
    memset(G, 0, sizeof *G);
    G->n = n;
    int g[16], neg[16];
    if (strcmp(family, "pancake") == 0) {
        for (int k = 2; k <= n; k++) {
            for (int i = 0; i < n; i++)
                g[i] = i < k ? k - 1 - i : i;
            bf_add(G, g, NULL);
        }
    } else if (strcmp(family, "burnt-pancake") == 0) {
        G->signed_perm = 1;
        for (int k = 1; k <= n; k++) {
            for (int i = 0; i < n; i++) {
                g[i] = i < k ? k - 1 - i : i;
                neg[i] = i < k;
            }
            bf_add(G, g, neg);
        }
    } else if (strcmp(family, "bubble") == 0) {
        for (int i = 0; i + 1 < n; i++)
            bf_swap(G, i, i + 1);
    } else if (strcmp(family, "star") == 0) {
        for (int i = 1; i < n; i++)
            bf_swap(G, 0, i);
    } else if (strcmp(family, "transpositions") == 0) {
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                bf_swap(G, i, j);
    } else { /* lrx: the two shifts are each other's inverse, the swap is an involution */
        for (int i = 0; i < n; i++)
            g[i] = (i + 1) % n;
        bf_add(G, g, NULL);
        for (int i = 0; i < n; i++)
            g[i] = (i + n - 1) % n;
        bf_add(G, g, NULL);
        bf_swap(G, 0, 1);
    }
    (void)inverses; /* every family above is closed under inverses already */
}

/* Abelian groups: BFS over coordinates with a visited array indexed by the test's own
 * mixed radix (first coordinate most significant, unlike the library). */
static int bf_abelian(const uint32_t *m, int k, int inverses, uint64_t *F)
{
    uint64_t order = 1;
    for (int d = 0; d < k; d++)
        order *= m[d];
    int *dist = tu_host_alloc(order * sizeof *dist);
    uint64_t *queue = tu_host_alloc(order * 8);
    for (uint64_t i = 0; i < order; i++)
        dist[i] = -1;
    size_t head = 0, tail = 0;
    dist[0] = 0;
    queue[tail++] = 0;
    int levels = 0;
    memset(F, 0, 8 * BF_MAX_LEVELS);
    while (head < tail) {
        uint64_t v = queue[head++];
        F[dist[v]]++;
        if (dist[v] + 1 > levels)
            levels = dist[v] + 1;
        uint32_t x[64];
        uint64_t r = v;
        for (int d = k - 1; d >= 0; d--) {
            x[d] = (uint32_t)(r % m[d]);
            r /= m[d];
        }
        for (int d = 0; d < k; d++)
            for (int step = 1; step >= (inverses ? -1 : 1); step -= 2) {
                uint32_t keep = x[d];
                x[d] = (uint32_t)((x[d] + m[d] + (uint32_t)step) % m[d]);
                uint64_t w = 0;
                for (int e = 0; e < k; e++)
                    w = w * m[e] + x[e];
                x[d] = keep;
                if (dist[w] < 0) {
                    dist[w] = dist[v] + 1;
                    queue[tail++] = w;
                }
            }
    }
    free(dist);
    free(queue);
    return levels;
}

/* ---- checks ------------------------------------------------------------------------------ */

static uint64_t factorial(int n)
{
    uint64_t f = 1;
    for (int i = 2; i <= n; i++)
        f *= (uint64_t)i;
    return f;
}

/* Runs the library on spec and compares every F(s) with the expected levels. */
static void compare_growth(kedr_ctx *ctx, const char *spec, int inverses, const uint64_t *F,
                           int levels)
{
    kedr_cayley_group *g = NULL;
    TU_OK(kedr_cayley_parse(spec, inverses, &g));
    if (!g)
        return;
    kedr_cayley_result r;
    memset(&r, TU_POISON_BYTE, sizeof r);
    TU_OK(kedr_cayley_growth(ctx, g, NULL, &r));
    TU_CHECK(r.diameter == levels - 1, "%s%s: diameter %d, expected %d", spec,
             inverses ? " (inverses)" : "", r.diameter, levels - 1);
    uint64_t reached = 0;
    double weighted = 0;
    int bad = 0;
    for (int s = 0; s < levels && s <= r.diameter; s++) {
        bad += r.growth[s] != F[s];
        if (r.growth[s] != F[s] && bad < 4)
            fprintf(stderr, "  %s: F(%d) = %llu, expected %llu\n", spec, s,
                    (unsigned long long)r.growth[s], (unsigned long long)F[s]);
        reached += F[s];
        weighted += (double)s * (double)F[s];
    }
    TU_CHECK(bad == 0, "%s%s: %d values of F(s) differ", spec, inverses ? " (inverses)" : "", bad);
    TU_CHECK(r.order == g->order && r.reached == reached && reached == g->order,
             "%s: order %llu, reached %llu, expected %llu", spec, (unsigned long long)r.order,
             (unsigned long long)r.reached, (unsigned long long)g->order);
    TU_CHECK(fabs(r.average_distance - weighted / (double)reached) < 1e-12 * (1 + weighted),
             "%s: average distance %.17g, expected %.17g", spec, r.average_distance,
             weighted / (double)reached);
    TU_CHECK(r.edge_visits == (double)reached * g->ngens && r.memory_bytes == kedr_cayley_dense_bytes(g)
                 && r.seconds >= 0,
             "%s: edge visits %.0f, memory %zu", spec, r.edge_visits, r.memory_bytes);
    kedr_cayley_result_free(&r);
    TU_CHECK(r.growth == NULL, "kedr_cayley_result_free clears the result");
    kedr_cayley_group_free(g);
}

static void check_against_brute_force(kedr_ctx *ctx)
{
    static const char *families[] = {"pancake", "burnt-pancake", "bubble", "star",
                                     "transpositions", "lrx"};
    uint64_t *F = tu_host_alloc(8 * BF_MAX_LEVELS);
    bf_gens *G = tu_host_alloc(sizeof *G);
    const int q = tu_quick(); /* quick: each family up to one size smaller */
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        int burnt = strcmp(families[f], "burnt-pancake") == 0;
        for (int n = burnt ? 1 : 2; n <= (burnt ? 6 : 8) - q; n++) {
            bf_family(G, families[f], n, 0);
            uint64_t order = factorial(n) << (burnt ? n : 0);
            int levels = bf_growth(G, order, F);
            char spec[64];
            snprintf(spec, sizeof spec, "%s:%d", families[f], n);
            for (int inv = 0; inv <= 1; inv++)
                compare_growth(ctx, spec, inv, F, levels);
        }
    }
    static const struct {
        const char *spec;
        uint32_t m[8];
        int k;
    } ab[] = {
        {"abelian:2", {2}, 1},
        {"abelian:7", {7}, 1},
        {"abelian:3,5", {3, 5}, 2},
        {"abelian:2,2,2,2,2", {2, 2, 2, 2, 2}, 5},
        {"abelian:4,6,9", {4, 6, 9}, 3},
        {"abelian:1000", {1000}, 1},
        {"abelian:2,3,5,7,11", {2, 3, 5, 7, 11}, 5},
        {"abelian:131,127", {131, 127}, 2},       /* 16637 bits: tails of words and tiles */
        {"abelian:8193", {8193}, 1},              /* one past a GPU tile */
        {"abelian:64,64,64,4", {64, 64, 64, 4}, 4}, /* 2^20, dense levels */
        {"abelian:64,64,16", {64, 64, 16}, 3},    /* quick: in its place, 2^16 */
    };
    const size_t nab = sizeof ab / sizeof ab[0];
    for (size_t i = 0; i < nab; i++) {
        if (i == nab - (q ? 2 : 1))
            continue;
        for (int inv = 0; inv <= 1; inv++) {
            int levels = bf_abelian(ab[i].m, ab[i].k, inv, F);
            compare_growth(ctx, ab[i].spec, inv, F, levels);
        }
    }
    free(G);
    free(F);
}

/* The same search on every back end must give the same growth function; larger groups. */
static void check_backends_agree(kedr_ctx **ctxs, int nctx)
{
    static const struct {
        const char *spec;
        int inverses;
    } big[] = {{"pancake:10", 0}, {"burnt-pancake:7", 0}, {"transpositions:9", 0},
               {"lrx:10", 0}, {"star:10", 0}, {"abelian:1001,999", 0}, {"abelian:5,5,5,5,5,5,5,5,5", 1}};
    /* quick: about 10x smaller, still hundreds of GPU blocks */
    static const char *const quick[] = {"pancake:9", "burnt-pancake:6", "transpositions:8", "lrx:9",
                                        "star:9", "abelian:317,313", "abelian:5,5,5,5,5,5,5,5"};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        kedr_cayley_group *g = NULL;
        TU_OK(kedr_cayley_parse(tu_quick() ? quick[i] : big[i].spec, big[i].inverses, &g));
        if (!g)
            continue;
        kedr_cayley_result r0;
        TU_OK(kedr_cayley_growth(ctxs[0], g, NULL, &r0));
        TU_CHECK(r0.reached == g->order, "%s: reached %llu of %llu", big[i].spec,
                 (unsigned long long)r0.reached, (unsigned long long)g->order);
        for (int c = 1; c < nctx; c++) {
            kedr_cayley_result r;
            memset(&r, TU_POISON_BYTE, sizeof r);
            TU_OK(kedr_cayley_growth(ctxs[c], g, NULL, &r));
            int same = r.diameter == r0.diameter && r.reached == r0.reached;
            for (int s = 0; same && s <= r.diameter; s++)
                same = r.growth[s] == r0.growth[s];
            TU_CHECK(same, "%s: %s and %s growth functions differ", big[i].spec,
                     kedr_backend_name(kedr_ctx_backend(ctxs[0])),
                     kedr_backend_name(kedr_ctx_backend(ctxs[c])));
            kedr_cayley_result_free(&r);
        }
        kedr_cayley_result_free(&r0);
        kedr_cayley_group_free(g);
    }
}

static void check_parse(void)
{
    static const struct {
        const char *spec;
        int inverses;
        uint64_t order;
        int ngens, closed;
        const char *canonical;
    } ok[] = {
        {"pancake:9", 0, 362880, 8, 1, "pancake:9"},
        {"pancake:16", 0, 20922789888000ull, 15, 1, "pancake:16"},
        {"burnt-pancake:1", 0, 2, 1, 1, "burnt-pancake:1"},
        {"burnt-pancake:16", 1, 20922789888000ull << 16, 16, 1, "burnt-pancake:16"},
        {"bubble:5", 0, 120, 4, 1, "bubble:5"},
        {"star:6", 1, 720, 5, 1, "star:6"},
        {"transpositions:16", 0, 20922789888000ull, 120, 1, "transpositions:16"},
        {"lrx:2", 0, 2, 1, 1, "lrx:2"},
        {"lrx:7", 0, 5040, 3, 1, "lrx:7"},
        {"abelian:5", 0, 5, 1, 0, "abelian:5"},
        {"abelian:5", 1, 5, 2, 1, "abelian:5"},
        {"abelian:2,2,2", 0, 8, 3, 1, "abelian:2,2,2"},
        {"abelian:2,2,2", 1, 8, 3, 1, "abelian:2,2,2"},
        {"abelian:2,3", 0, 6, 2, 0, "abelian:2,3"},
        {"abelian:2,3", 1, 6, 3, 1, "abelian:2,3"},
        {"abelian:007,4294967295", 0, 7ull * 4294967295ull, 2, 0, "abelian:7,4294967295"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        kedr_cayley_group *g = NULL;
        TU_OK(kedr_cayley_parse(ok[i].spec, ok[i].inverses, &g));
        if (!g)
            continue;
        TU_CHECK(g->order == ok[i].order && g->ngens == ok[i].ngens &&
                     g->inverse_closed == ok[i].closed && strcmp(g->spec, ok[i].canonical) == 0,
                 "%s: order %llu, %d generators, closed %d, spec '%s'", ok[i].spec,
                 (unsigned long long)g->order, g->ngens, g->inverse_closed, g->spec);
        kedr_cayley_group_free(g);
    }

    char many[256] = "abelian:2";
    for (int i = 1; i < 63; i++)
        strcat(many, ",2"); /* 2^63 */
    const struct {
        const char *spec;
        const char *message;
    } bad[] = {
        {"pancake:x", "pancake:x: expected an integer N from 2 to 16"},
        {"pancake:1", "pancake:1: expected an integer N from 2 to 16"},
        {"pancake:17", "expected an integer N from 2 to 16"},
        {"pancake:9x", "expected an integer N"},
        {"pancake:-3", "expected an integer N"},
        {"pancake:", "expected an integer N"},
        {"pancake", "expected pancake:N"},
        {"burnt-pancake:0", "from 1 to 16"},
        {"star: 5", "expected an integer N"},
        {"foo:3", "unknown group"},
        {"", "unknown group"},
        {"abelian", "expected abelian:M1,M2,..."},
        {"abelian:", "expected abelian:M1,M2,..."},
        {"abelian:3,,4", "expected abelian:M1,M2,..."},
        {"abelian:3,4,", "expected abelian:M1,M2,..."},
        {"abelian:1", "from 2 to 4294967295"},
        {"abelian:4294967296", "from 2 to 4294967295"},
        {"abelian:3.5", "expected abelian:M1,M2,..."},
        {many, "the order exceeds 2^62"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kedr_cayley_group *g = (kedr_cayley_group *)&g;
        kedr_status s = kedr_cayley_parse(bad[i].spec, 0, &g);
        TU_CHECK(s == KEDR_ERR_INVALID && g == NULL && strstr(kedr_last_error(), bad[i].message),
                 "'%s': %s, '%s' (expected '%s')", bad[i].spec, kedr_status_name(s),
                 kedr_last_error(), bad[i].message);
    }
    kedr_cayley_group *g = NULL;
    TU_CHECK(kedr_cayley_parse(NULL, 0, &g) == KEDR_ERR_INVALID && strstr(kedr_last_error(), "spec"),
             "NULL spec");
    TU_CHECK(kedr_cayley_parse("pancake:4", 0, NULL) == KEDR_ERR_INVALID && kedr_last_error()[0],
             "NULL g");
}

/* The library's rank against the documented rank computed here the slow way: the sum over i of
 * #{j < i : x[j] > x[i]} i! (the last position the most significant). */
static uint64_t lex_rank(const uint32_t *x, int n)
{
    uint64_t r = 0;
    for (int i = 0; i < n; i++) {
        uint64_t larger = 0;
        for (int j = 0; j < i; j++)
            larger += x[j] > x[i];
        r += larger * factorial(i);
    }
    return r;
}

static void check_ranks(void)
{
    uint64_t seed = 42;
    static const char *specs[] = {"pancake:2", "pancake:5", "pancake:12", "pancake:16",
                                  "burnt-pancake:1", "burnt-pancake:4", "burnt-pancake:16",
                                  "abelian:3,5,2", "abelian:4294967295,1000,7"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        kedr_cayley_group *g = NULL;
        TU_OK(kedr_cayley_parse(specs[i], 0, &g));
        if (!g)
            continue;
        int n = g->n, size = kedr_cayley_element_size(g);
        uint32_t x[128], y[128];
        int bad = 0, local_bad = 0, tries = g->order <= 4096 ? (int)g->order : 20000;
        for (int t = 0; t < tries; t++) {
            uint64_t r = g->order <= 4096 ? (uint64_t)t
                         : t < 2 ? (t ? g->order - 1 : 0)
                                 : tu_next(&seed) % g->order;
            for (int j = 0; j < size; j++)
                x[j] = 0xA5A5A5A5u;
            uint64_t back = ~0ull, want;
            if (kedr_cayley_unrank(g, r, x) != KEDR_OK || kedr_cayley_rank(g, x, &back) != KEDR_OK) {
                bad++;
                continue;
            }
            if (g->kind == KEDR_CAYLEY_ABELIAN) {
                want = 0;
                for (int d = n - 1; d >= 0; d--)
                    want = want * g->moduli[d] + x[d];
            } else if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION) {
                uint64_t signs = 0;
                for (int j = 0; j < n; j++)
                    signs |= (uint64_t)x[n + j] << j;
                want = (lex_rank(x, n) << n) | signs;
            } else {
                want = lex_rank(x, n);
            }
            bad += back != r || want != r;
            /* a prefix reversal of length k < n leaves rank / k! (/ (k! 2^n) when signed) as it
             * is: the layout that keeps these products on their MPI rank */
            for (int k = 2; k < n && g->kind != KEDR_CAYLEY_ABELIAN && t < 2000; k++) {
                for (int j = 0; j < size; j++)
                    y[j] = x[j];
                for (int j = 0; j < k; j++) {
                    y[j] = x[k - 1 - j];
                    if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION)
                        y[n + j] = x[n + k - 1 - j] ^ 1u;
                }
                uint64_t q = ~0ull, unit = factorial(k)
                                           << (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION ? n : 0);
                local_bad += kedr_cayley_rank(g, y, &q) != KEDR_OK || q / unit != r / unit;
            }
        }
        TU_CHECK(bad == 0, "%s: %d of %d ranks do not round-trip or are not the documented rank",
                 specs[i], bad, tries);
        TU_CHECK(local_bad == 0, "%s: %d prefix reversals of length k < n changed rank / k!",
                 specs[i], local_bad);
        /* the identity is rank 0 */
        TU_OK(kedr_cayley_unrank(g, 0, x));
        int identity = 1;
        for (int j = 0; j < n; j++)
            identity &= x[j] == (g->kind == KEDR_CAYLEY_ABELIAN ? 0u : (uint32_t)j) &&
                        (g->kind != KEDR_CAYLEY_SIGNED_PERMUTATION || x[n + j] == 0);
        TU_CHECK(identity, "%s: rank 0 is not the identity", specs[i]);
        /* elements that are not elements */
        uint64_t r;
        TU_CHECK(kedr_cayley_unrank(g, g->order, y) == KEDR_ERR_INVALID && kedr_last_error()[0],
                 "%s: unrank of the order", specs[i]);
        memcpy(y, x, sizeof x);
        if (g->kind == KEDR_CAYLEY_ABELIAN)
            y[n - 1] = g->moduli[n - 1];
        else if (n > 1)
            y[1] = y[0]; /* a repeated value */
        else
            y[0] = 1; /* out of range */
        TU_CHECK(kedr_cayley_rank(g, y, &r) == KEDR_ERR_INVALID && kedr_last_error()[0],
                 "%s: rank of a non-element", specs[i]);
        if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION) {
            memcpy(y, x, sizeof x);
            y[n] = 2;
            TU_CHECK(kedr_cayley_rank(g, y, &r) == KEDR_ERR_INVALID, "%s: sign 2", specs[i]);
        }
        kedr_cayley_group_free(g);
    }
}

static void on_level(const kedr_cayley_level *lv, void *user)
{
    uint64_t *seen = user; /* seen[0] levels, then F(s) */
    if ((uint64_t)lv->level == seen[0] && lv->level < 60) {
        seen[1 + lv->level] = lv->new_elements;
        seen[0]++;
    } else {
        seen[0] = 1000; /* out of order */
    }
}

static void check_errors_and_options(kedr_ctx *ctx)
{
    kedr_cayley_group *g = NULL;
    TU_OK(kedr_cayley_parse("pancake:8", 0, &g));
    if (!g)
        return;
    kedr_cayley_result r;
    TU_CHECK(kedr_cayley_growth(NULL, g, NULL, &r) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "ctx"), "NULL ctx");
    TU_CHECK(kedr_cayley_growth(ctx, NULL, NULL, &r) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "g is NULL"), "NULL g");
    TU_CHECK(kedr_cayley_growth(ctx, g, NULL, NULL) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "result"), "NULL result");

    size_t need = kedr_cayley_dense_bytes(g);
    TU_CHECK(need == 3 * ((40320 + 127) / 128 * 16), "pancake:8 needs %zu bytes", need);
    /* below the need of 3 bits per element: the GPU goes on with 2 bits, the cpu refuses */
    kedr_cayley_options opt = {.memory_limit = need - 1};
    memset(&r, TU_POISON_BYTE, sizeof r);
    kedr_status s = kedr_cayley_growth(ctx, g, &opt, &r);
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA) {
        TU_CHECK(s == KEDR_OK && r.devices == 1 && r.memory_bytes == kedr_cayley_multi_bytes(g) &&
                     r.reached == 40320 && r.diameter == 9,
                 "a memory limit below 3 bits per element on the GPU: %s, '%s'",
                 kedr_status_name(s), kedr_last_error());
        if (s == KEDR_OK)
            kedr_cayley_result_free(&r);
    } else {
        TU_CHECK(s == KEDR_ERR_NOMEM && strstr(kedr_last_error(), "pancake:8 needs") &&
                     r.growth == NULL,
                 "a memory limit below the need: %s, '%s'", kedr_status_name(s),
                 kedr_last_error());
    }
    opt.memory_limit = kedr_cayley_multi_bytes(g) - 1;
    memset(&r, TU_POISON_BYTE, sizeof r);
    s = kedr_cayley_growth(ctx, g, &opt, &r);
    TU_CHECK(s == KEDR_ERR_NOMEM && strstr(kedr_last_error(), "pancake:8 needs") &&
                 r.growth == NULL,
             "a memory limit below 2 bits per element: %s, '%s'", kedr_status_name(s),
             kedr_last_error());
    kedr_cayley_group *huge = NULL;
    TU_OK(kedr_cayley_parse("burnt-pancake:16", 0, &huge));
    s = huge ? kedr_cayley_growth(ctx, huge, NULL, &r) : KEDR_OK;
    TU_CHECK(s == KEDR_ERR_NOMEM && strstr(kedr_last_error(), "burnt-pancake:16 needs") &&
                 strstr(kedr_last_error(), "GB"),
             "a group larger than memory: %s, '%s'", kedr_status_name(s), kedr_last_error());
    kedr_cayley_group_free(huge);

    uint64_t seen[64] = {0};
    opt.memory_limit = need;
    opt.on_level = on_level;
    opt.user = seen;
    TU_OK(kedr_cayley_growth(ctx, g, &opt, &r));
    int same = seen[0] == (uint64_t)r.diameter + 1;
    for (int i = 0; same && i <= r.diameter; i++)
        same = seen[1 + i] == r.growth[i];
    TU_CHECK(same, "the level callback saw %llu levels, expected %d with the same F(s)",
             (unsigned long long)seen[0], r.diameter + 1);
    kedr_cayley_result_free(&r);
    kedr_cayley_result_free(NULL);
    kedr_cayley_group_free(g);
}

/* ---- checkpoints ------------------------------------------------------------------------ */

static char ck_path[256], ck_other[256];

static int same_growth(const kedr_cayley_result *a, const kedr_cayley_result *b)
{
    if (a->diameter != b->diameter || a->reached != b->reached)
        return 0;
    for (int s = 0; s <= a->diameter; s++)
        if (a->growth[s] != b->growth[s])
            return 0;
    return 1;
}

static kedr_status run_ck(kedr_ctx *ctx, const kedr_cayley_group *g, const char *write,
                          double every, const char *resume, int max_levels, kedr_cayley_result *r)
{
    kedr_cayley_options opt = {.checkpoint_path = write, .checkpoint_every = every,
                               .resume_path = resume, .max_levels = max_levels};
    memset(r, TU_POISON_BYTE, sizeof *r);
    return kedr_cayley_growth(ctx, g, &opt, r);
}

/* An interrupted run resumed from its checkpoint, on every pair of back ends, gives the growth
 * function of an uninterrupted run. */
static void check_resume(kedr_ctx **ctxs, int nctx)
{
    static const char *const specs[] = {"pancake:7", "burnt-pancake:4", "abelian:5,7", "bubble:6",
                                        "lrx:7", "star:8"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        kedr_cayley_group *g = NULL;
        TU_OK(kedr_cayley_parse(specs[i], i == 3, &g));
        if (!g)
            continue;
        kedr_cayley_result full, part, rest;
        TU_OK(kedr_cayley_growth(ctxs[0], g, NULL, &full));
        int D = full.diameter;
        int stops[] = {1, 2, D / 2, D - 1, D, D + 1, D + 5};
        for (int a = 0; a < nctx; a++)
            for (size_t k = 0; k < sizeof stops / sizeof *stops; k++) {
                int stop = stops[k];
                if (stop < 1)
                    continue;
                /* 1e9 s: only the forced checkpoint, after the last level, is written */
                kedr_status st = run_ck(ctxs[a], g, ck_path, 1e9, NULL, stop, &part);
                TU_CHECK(st == KEDR_OK, "%s max_levels %d: %s", g->spec, stop, kedr_last_error());
                if (st != KEDR_OK)
                    continue;
                int levels = stop < D ? stop : D, ok = part.diameter == levels &&
                                                        part.complete == (stop > D) &&
                                                        part.resumed_from == -1;
                for (int s = 0; ok && s <= levels; s++)
                    ok = part.growth[s] == full.growth[s];
                TU_CHECK(ok, "%s stopped at %d on %s: diameter %d, complete %d", g->spec, stop,
                         kedr_backend_name(kedr_ctx_backend(ctxs[a])), part.diameter,
                         part.complete);
                kedr_cayley_result_free(&part);
                for (int b = 0; b < nctx; b++) {
                    st = run_ck(ctxs[b], g, NULL, 0, ck_path, 0, &rest);
                    TU_CHECK(st == KEDR_OK && same_growth(&rest, &full) && rest.complete &&
                                 rest.resumed_from == levels &&
                                 fabs(rest.average_distance - full.average_distance) < 1e-12,
                             "%s stopped at %d on %s, resumed on %s: %s", g->spec, stop,
                             kedr_backend_name(kedr_ctx_backend(ctxs[a])),
                             kedr_backend_name(kedr_ctx_backend(ctxs[b])),
                             st == KEDR_OK ? "another growth function" : kedr_last_error());
                    if (st == KEDR_OK)
                        kedr_cayley_result_free(&rest);
                }
            }

        /* a chain: a checkpoint after every level, resumed two levels at a time, overwriting
         * the file it resumed from */
        kedr_status st = run_ck(ctxs[0], g, ck_path, 0, NULL, 1, &part);
        TU_CHECK(st == KEDR_OK, "%s chain start: %s", g->spec, kedr_last_error());
        if (st == KEDR_OK)
            kedr_cayley_result_free(&part);
        int steps = 0;
        for (int level = 1; st == KEDR_OK && steps < 64; steps++) {
            kedr_ctx *ctx = ctxs[steps % nctx];
            st = run_ck(ctx, g, ck_path, 0, ck_path, level + 2, &part);
            TU_CHECK(st == KEDR_OK, "%s chain at %d: %s", g->spec, level, kedr_last_error());
            if (st != KEDR_OK)
                break;
            int done = part.complete;
            level = part.diameter;
            if (done)
                TU_CHECK(same_growth(&part, &full), "%s: the chain gave another growth function",
                         g->spec);
            kedr_cayley_result_free(&part);
            if (done)
                break;
        }
        TU_CHECK(steps < 64, "%s: the chain did not end", g->spec);

        /* a checkpoint of an ended search resumes to the same result without a level */
        st = run_ck(ctxs[nctx - 1], g, ck_path, 1e9, NULL, 0, &part);
        TU_CHECK(st == KEDR_OK, "%s full run with checkpoint: %s", g->spec, kedr_last_error());
        if (st == KEDR_OK)
            kedr_cayley_result_free(&part);
        st = run_ck(ctxs[0], g, NULL, 0, ck_path, 0, &rest);
        TU_CHECK(st == KEDR_OK && same_growth(&rest, &full) && rest.complete &&
                     rest.edge_visits == 0 && rest.resumed_from == D,
                 "%s resumed from the end: %s", g->spec, kedr_last_error());
        if (st == KEDR_OK)
            kedr_cayley_result_free(&rest);
        kedr_cayley_result_free(&full);
        kedr_cayley_group_free(g);
    }
}

/* A directed ring of 140000 elements: F(s) = 1 for s < 140000, more than 1 MiB of F in the
 * checkpoint (more than one checksum block). Quick: stopped at 139900, so that every back end
 * resumes for 100 levels, not 1000 (a level per kernel launch on a GPU). */
static void check_long_resume(kedr_ctx **ctxs, int nctx)
{
    kedr_cayley_group *g = NULL;
    TU_OK(kedr_cayley_parse("abelian:140000", 0, &g));
    if (!g)
        return;
    const int stop = (int)tu_scale(139000, 139900);
    kedr_cayley_result part, rest;
    kedr_status st = run_ck(ctxs[0], g, ck_path, 1e9, NULL, stop, &part);
    TU_CHECK(st == KEDR_OK && part.diameter == stop && !part.complete,
             "abelian:140000 to %d: %s", stop, kedr_last_error());
    if (st == KEDR_OK)
        kedr_cayley_result_free(&part);
    for (int b = 0; b < nctx; b++) {
        st = run_ck(ctxs[b], g, NULL, 0, ck_path, 0, &rest);
        int ok = st == KEDR_OK && rest.complete && rest.diameter == 139999 &&
                 rest.reached == 140000 && rest.resumed_from == stop;
        for (int s = 0; ok && s <= rest.diameter; s++)
            ok = rest.growth[s] == 1;
        TU_CHECK(ok, "abelian:140000 resumed on %s: %s", kedr_backend_name(kedr_ctx_backend(ctxs[b])),
                 st == KEDR_OK ? "another growth function" : kedr_last_error());
        if (st == KEDR_OK)
            kedr_cayley_result_free(&rest);
    }
    kedr_cayley_group_free(g);
}

static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    *size = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = tu_host_alloc(n > 0 ? (size_t)n : 1);
    *size = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static void write_all(const char *path, const unsigned char *buf, size_t size)
{
    FILE *f = fopen(path, "wb");
    TU_CHECK(f && fwrite(buf, 1, size, f) == size && fclose(f) == 0, "cannot write %s", path);
}

/* Resuming g from ck_other must fail with `want` and a message containing `text`. */
static void expect_rejected(kedr_ctx *ctx, const kedr_cayley_group *g, kedr_status want,
                            const char *text, const char *what)
{
    kedr_cayley_result r;
    kedr_status st = run_ck(ctx, g, NULL, 0, ck_other, 0, &r);
    TU_CHECK(st == want && strstr(kedr_last_error(), text) && strstr(kedr_last_error(), ck_other) &&
                 r.growth == NULL,
             "%s: %s, '%s' (expected %s and '%s')", what, kedr_status_name(st), kedr_last_error(),
             kedr_status_name(want), text);
    if (st == KEDR_OK)
        kedr_cayley_result_free(&r);
}

/* Truncated, corrupt and mismatched checkpoints are refused; a failed write keeps the last one. */
static void check_bad_checkpoints(kedr_ctx *ctx)
{
    kedr_cayley_group *g = NULL, *other = NULL, *inv = NULL;
    TU_OK(kedr_cayley_parse("pancake:7", 0, &g));
    TU_OK(kedr_cayley_parse("star:7", 0, &other));
    TU_OK(kedr_cayley_parse("pancake:7", 1, &inv));
    if (!g || !other || !inv)
        return;
    kedr_cayley_result r, full;
    TU_OK(kedr_cayley_growth(ctx, g, NULL, &full));
    TU_OK(run_ck(ctx, g, ck_path, 0, NULL, 3, &r));
    kedr_cayley_result_free(&r);
    size_t size = 0;
    unsigned char *good = read_all(ck_path, &size);
    size_t bitmap = kedr_cayley_dense_bytes(g) / 3;
    TU_CHECK(good && size == 208 + 8 * 4 + 2 * bitmap + 8, "pancake:7 level 3: %zu bytes", size);
    if (!good || size < 300) {
        kedr_cayley_group_free(g);
        return;
    }

    TU_CHECK(run_ck(ctx, g, NULL, 0, "/nonexistent/kedr.ckpt", 0, &r) == KEDR_ERR_IO &&
                 strstr(kedr_last_error(), "/nonexistent/kedr.ckpt"),
             "a missing checkpoint: '%s'", kedr_last_error());
    size_t cuts[] = {0, 7, 100, 208, 230, 208 + 32 + bitmap, size - 8, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        write_all(ck_other, good, cuts[i]);
        expect_rejected(ctx, g, KEDR_ERR_PARSE, "truncated", "a truncated checkpoint");
    }
    unsigned char *bad = tu_host_alloc(size + 1);
    memcpy(bad, good, size);
    bad[size] = 0;
    write_all(ck_other, bad, size + 1);
    expect_rejected(ctx, g, KEDR_ERR_PARSE, "trailing data", "a byte too many");
    /* a flipped bit anywhere the header checks do not see: F, visited, frontier, checksum */
    size_t flips[] = {208, 208 + 24, 208 + 32 + 5, 208 + 32 + bitmap + 3, size - 8, size - 1};
    for (size_t i = 0; i < sizeof flips / sizeof *flips; i++) {
        memcpy(bad, good, size);
        bad[flips[i]] ^= 0x10;
        write_all(ck_other, bad, size);
        expect_rejected(ctx, g, KEDR_ERR_PARSE, "checksum", "a flipped bit");
    }
    memcpy(bad, good, size);
    bad[0] = 'X';
    write_all(ck_other, bad, size);
    expect_rejected(ctx, g, KEDR_ERR_PARSE, "not a kedr cayley checkpoint", "a bad magic");
    memcpy(bad, good, size);
    bad[8] = 9;
    write_all(ck_other, bad, size);
    expect_rejected(ctx, g, KEDR_ERR_PARSE, "format version 9", "another version");
    memcpy(bad, good, size);
    bad[184] ^= 1;
    write_all(ck_other, bad, size);
    expect_rejected(ctx, g, KEDR_ERR_PARSE, "corrupt header", "another order");
    write_all(ck_other, good, size);
    expect_rejected(ctx, other, KEDR_ERR_PARSE, "made for group pancake:7, not star:7",
                    "another group of the same order");
    expect_rejected(ctx, inv, KEDR_ERR_PARSE, "made without --inverses", "inverses asked for");

    /* a checkpoint that cannot be written fails the run and leaves the last one intact */
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", ck_path);
    TU_CHECK(mkdir(tmp, 0700) == 0, "cannot make the directory %s", tmp);
    kedr_status st = run_ck(ctx, g, ck_path, 0, ck_path, 5, &r);
    TU_CHECK(st == KEDR_ERR_IO && strstr(kedr_last_error(), tmp) && r.growth == NULL,
             "an unwritable checkpoint: %s, '%s'", kedr_status_name(st), kedr_last_error());
    rmdir(tmp);
    size_t again = 0;
    unsigned char *kept = read_all(ck_path, &again);
    TU_CHECK(kept && again == size && memcmp(kept, good, size) == 0,
             "the last checkpoint changed after a failed write");
    st = run_ck(ctx, g, NULL, 0, ck_path, 0, &r);
    TU_CHECK(st == KEDR_OK && same_growth(&r, &full), "the kept checkpoint resumes: %s",
             kedr_last_error());
    if (st == KEDR_OK)
        kedr_cayley_result_free(&r);
    TU_CHECK(run_ck(ctx, g, ck_path, -1, NULL, 0, &r) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "checkpoint_every"),
             "a negative checkpoint_every: '%s'", kedr_last_error());
    TU_CHECK(run_ck(ctx, g, NULL, 0, NULL, -2, &r) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "max_levels"),
             "a negative max_levels: '%s'", kedr_last_error());
    free(kept);
    free(bad);
    free(good);
    kedr_cayley_result_free(&full);
    kedr_cayley_group_free(g);
    kedr_cayley_group_free(other);
    kedr_cayley_group_free(inv);
}

/* ---- the search over GPUs (kedr_cayley_options.devices) ------------------------------------ */

static kedr_status run_dev(kedr_ctx *ctx, const kedr_cayley_group *g, int devices,
                           const char *write, const char *resume, int max_levels,
                           kedr_cayley_result *r)
{
    kedr_cayley_options opt = {.devices = devices, .checkpoint_path = write,
                               .checkpoint_every = 1e9, .resume_path = resume,
                               .max_levels = max_levels};
    memset(r, TU_POISON_BYTE, sizeof *r);
    return kedr_cayley_growth(ctx, g, &opt, r);
}

/* The 2-bit search on one GPU and on every GPU of the host gives the single-GPU growth
 * functions, and its checkpoints resume on the other searches and back. */
static void check_devices(kedr_ctx **ctxs, int nctx)
{
    static const struct {
        const char *spec;
        int inverses;
    } groups[] = {{"pancake:2", 0},  {"pancake:5", 1},     {"pancake:8", 0},
                  {"pancake:9", 1},  {"burnt-pancake:6", 0}, {"star:9", 0},
                  {"transpositions:8", 0}, {"lrx:9", 0},   {"bubble:8", 1},
                  {"abelian:7", 0},  {"abelian:8193", 0},  {"abelian:131,127", 1},
                  {"abelian:64,64,64,4", 0}, {"abelian:4096,3", 0}, {"burnside:7", 0},
                  {"burnside:8", 1}, {"burnside:9", 0}};
    for (int c = 0; c < nctx; c++) {
        kedr_ctx *ctx = ctxs[c];
        kedr_cayley_group *g = NULL;
        kedr_cayley_result r, ref;
        if (kedr_ctx_backend(ctx) != KEDR_BACKEND_CUDA) {
            TU_OK(kedr_cayley_parse("pancake:5", 0, &g));
            kedr_status st = run_dev(ctx, g, 1, NULL, NULL, 0, &r);
            TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "cuda"),
                     "devices = 1 on the cpu: status %d, '%s'", (int)st, kedr_last_error());
            kedr_cayley_group_free(g);
            continue;
        }
        TU_OK(kedr_cayley_parse("pancake:5", 0, &g));
        kedr_status st = run_dev(ctx, g, -2, NULL, NULL, 0, &r);
        TU_CHECK(st == KEDR_ERR_INVALID, "devices = -2 accepted");
        st = run_dev(ctx, g, 4096, NULL, NULL, 0, &r);
        TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "GPU"),
                 "devices = 4096: status %d, '%s'", (int)st, kedr_last_error());
        kedr_cayley_group_free(g);
        TU_OK(kedr_cayley_parse("cube2", 0, &g));
        st = run_dev(ctx, g, 1, NULL, NULL, 0, &r);
        TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "sparse"),
                 "devices = 1 for cube2: status %d, '%s'", (int)st, kedr_last_error());
        kedr_cayley_group_free(g);

        for (size_t i = 0; i < sizeof groups / sizeof *groups; i++) {
            g = NULL;
            TU_OK(kedr_cayley_parse(groups[i].spec, groups[i].inverses, &g));
            if (!g)
                continue;
            TU_OK(kedr_cayley_growth(ctx, g, NULL, &ref));
            for (int devices = 1; devices >= -1; devices -= 2) {
                st = run_dev(ctx, g, devices, NULL, NULL, 0, &r);
                TU_CHECK(st == KEDR_OK && same_growth(&r, &ref) && r.complete &&
                             r.devices >= 1 && r.memory_bytes == kedr_cayley_multi_bytes(g) &&
                             r.edge_visits == ref.edge_visits,
                         "%s%s over %d GPUs: %s", g->spec, g->inverses ? " (inverses)" : "",
                         devices, st == KEDR_OK ? "another result" : kedr_last_error());
                if (st == KEDR_OK)
                    kedr_cayley_result_free(&r);
            }
            /* interrupted on one search, resumed on another: every pair of the 2-bit search
             * (all GPUs), the single-GPU search and the cpu */
            int D = ref.diameter, stops[] = {1, D / 2, D - 1, D + 1};
            for (size_t k = 0; i % 4 == 0 && k < sizeof stops / sizeof *stops; k++) {
                if (stops[k] < 1)
                    continue;
                for (int w = 0; w < 2; w++) {
                    kedr_cayley_result part;
                    st = run_dev(ctx, g, w ? -1 : 0, ck_path, NULL, stops[k], &part);
                    TU_CHECK(st == KEDR_OK, "%s to level %d: %s", g->spec, stops[k],
                             kedr_last_error());
                    if (st != KEDR_OK)
                        continue;
                    kedr_cayley_result_free(&part);
                    for (int b = 0; b <= nctx; b++) {
                        kedr_ctx *rc = b < nctx ? ctxs[b] : ctx;
                        int devices = b < nctx ? 0 : -1;
                        st = run_dev(rc, g, devices, NULL, ck_path, 0, &r);
                        TU_CHECK(st == KEDR_OK && same_growth(&r, &ref) && r.complete,
                                 "%s stopped at %d (%s), resumed on %s%s: %s", g->spec, stops[k],
                                 w ? "all GPUs" : "one GPU",
                                 kedr_backend_name(kedr_ctx_backend(rc)),
                                 devices ? " over all GPUs" : "",
                                 st == KEDR_OK ? "another growth function" : kedr_last_error());
                        if (st == KEDR_OK)
                            kedr_cayley_result_free(&r);
                    }
                }
            }
            kedr_cayley_result_free(&ref);
            kedr_cayley_group_free(g);
        }
    }
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    kedr_ctx *ctxs[2];
    check_parse();
    check_ranks();
    for (int b = 0; b < nb; b++) {
        ctxs[b] = tu_ctx(list[b]);
        check_errors_and_options(ctxs[b]);
        check_against_brute_force(ctxs[b]);
    }
    if (nb > 1)
        check_backends_agree(ctxs, nb);
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(ck_path, sizeof ck_path, "%s/kedr_test_cayley_%d.ckpt", dir, (int)getpid());
    snprintf(ck_other, sizeof ck_other, "%s/kedr_test_cayley_%d_bad.ckpt", dir, (int)getpid());
    check_resume(ctxs, nb);
    check_long_resume(ctxs, nb);
    check_devices(ctxs, nb);
    for (int b = 0; b < nb; b++)
        check_bad_checkpoints(ctxs[b]);
    remove(ck_path);
    remove(ck_other);
    for (int b = 0; b < nb; b++)
        kedr_ctx_destroy(ctxs[b]);
    return tu_finish("test_cayley");
}
