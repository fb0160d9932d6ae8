/* cayley sparse mode: known growth functions, agreement with dense mode and with a plain
 * breadth-first search, group orders by Schreier-Sims, chunked levels and bad specs.
 *
 * Sources:
 *  - 2x2x2 cube, positions at each distance from the start: OEIS A079761 (half-turn metric,
 *    God's number 11) and A079762 (quarter-turn metric, God's number 14); both sum to
 *    3,674,160 = 8! 3^7 / 24.
 *  - Mathieu groups with their standard generators: |M11| = 7920, |M12| = 95040 (Conway et al.,
 *    ATLAS of Finite Groups, 1985). |A_n| = n!/2.
 * The plain search below keeps a byte per element of S_n (Lehmer rank) and a queue. */
#include "test_util.h"

#include <unistd.h>

static const uint64_t htm[] = {1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800,
                               2644};
static const uint64_t qtm[] = {1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588,
                               1350852, 782536, 90280, 276};

static kedr_cayley_group *parse(const char *spec, int inverses)
{
    kedr_cayley_group *g = NULL;
    kedr_status s = kedr_cayley_parse(spec, inverses, &g);
    TU_CHECK(s == KEDR_OK, "%s: %s", spec, kedr_last_error());
    return s == KEDR_OK ? g : NULL;
}

/* Growth of g in mode with a memory limit (0: none); 0 when it failed. */
static int growth(kedr_ctx *ctx, const kedr_cayley_group *g, kedr_cayley_mode mode, size_t limit,
                  kedr_cayley_result *r)
{
    kedr_cayley_options opt;
    memset(&opt, 0, sizeof opt);
    opt.mode = mode;
    opt.memory_limit = limit;
    memset(r, TU_POISON_BYTE, sizeof *r);
    kedr_status s = kedr_cayley_growth(ctx, g, &opt, r);
    TU_CHECK(s == KEDR_OK, "%s mode %d: %s", g->spec, (int)mode, kedr_last_error());
    if (s != KEDR_OK)
        return 0;
    TU_CHECK(r->mode == (mode == KEDR_CAYLEY_DENSE ? KEDR_CAYLEY_DENSE : KEDR_CAYLEY_SPARSE) ||
                 mode == KEDR_CAYLEY_AUTO,
             "%s: ran mode %d, asked %d", g->spec, (int)r->mode, (int)mode);
    uint64_t sum = 0;
    double weighted = 0;
    for (int d = 0; d <= r->diameter; d++) {
        sum += r->growth[d];
        weighted += (double)d * (double)r->growth[d];
    }
    TU_CHECK(sum == r->reached && r->reached == g->order, "%s: sum %llu, reached %llu, order %llu",
             g->spec, (unsigned long long)sum, (unsigned long long)r->reached,
             (unsigned long long)g->order);
    TU_CHECK(fabs(r->average_distance - weighted / (double)sum) < 1e-9, "%s: average distance",
             g->spec);
    return 1;
}

static int same_growth_fwd(const kedr_cayley_result *a, const uint64_t *F, int levels);

/* Runs g in sparse mode in chunks: under limits of 9/10, 8/10, ... 5/10 of peak (what the
 * whole run held) for as long as the level still fits; each must give F and keep under. */
static void expect_chunked(kedr_ctx *ctx, const kedr_cayley_group *g, size_t peak,
                           const uint64_t *F, int levels)
{
    int ran = 0;
    for (int tenths = 9; tenths >= 5; tenths--) {
        size_t limit = peak / 10 * (size_t)tenths;
        kedr_cayley_options opt;
        memset(&opt, 0, sizeof opt);
        opt.mode = KEDR_CAYLEY_SPARSE;
        opt.memory_limit = limit;
        kedr_cayley_result r;
        kedr_status s = kedr_cayley_growth(ctx, g, &opt, &r);
        if (s == KEDR_ERR_NOMEM) {
            TU_CHECK(strstr(kedr_last_error(), "in sparse mode") != NULL, "%s: %s", g->spec,
                     kedr_last_error());
            break;
        }
        TU_CHECK(s == KEDR_OK, "%s limit %zu: %s", g->spec, limit, kedr_last_error());
        if (s != KEDR_OK)
            break;
        ran++;
        TU_CHECK(same_growth_fwd(&r, F, levels) && r.memory_bytes <= limit,
                 "%s limit %zu: chunked growth differs, or held %zu bytes", g->spec, limit,
                 r.memory_bytes);
        kedr_cayley_result_free(&r);
    }
    /* tiny groups have no layer worth splitting */
    TU_CHECK(ran > 0 || g->order < 64, "%s: no chunked run under 9/10 of %zu bytes", g->spec,
             peak);
}

static int same_growth(const kedr_cayley_result *a, const uint64_t *F, int levels)
{
    if (a->diameter != levels - 1)
        return 0;
    for (int s = 0; s < levels; s++)
        if (a->growth[s] != F[s])
            return 0;
    return 1;
}

static int same_growth_fwd(const kedr_cayley_result *a, const uint64_t *F, int levels)
{
    return same_growth(a, F, levels);
}

static void check_cube2(kedr_ctx *ctx)
{
    static const struct {
        const char *spec;
        const uint64_t *F;
        int levels, ngens;
    } cases[] = {{"cube2:htm", htm, 12, 9}, {"cube2:qtm", qtm, 15, 6}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kedr_cayley_group *g = parse(cases[c].spec, 0);
        if (!g)
            continue;
        uint64_t sum = 0;
        for (int s = 0; s < cases[c].levels; s++)
            sum += cases[c].F[s];
        TU_CHECK(sum == 3674160 && g->order == 3674160, "%s: order %llu", cases[c].spec,
                 (unsigned long long)g->order);
        TU_CHECK(g->ngens == cases[c].ngens && g->inverse_closed, "%s: %d generators, closed %d",
                 cases[c].spec, g->ngens, g->inverse_closed);
        kedr_cayley_result r;
        if (!tu_quick()) {
            if (growth(ctx, g, KEDR_CAYLEY_AUTO, 0, &r)) {
                TU_CHECK(same_growth(&r, cases[c].F, cases[c].levels),
                         "%s: growth differs from OEIS (diameter %d)", cases[c].spec, r.diameter);
                kedr_cayley_result_free(&r);
            }
        } else {
            /* quick: the first 7 and 9 levels (62 360 and 159 120 elements, still many GPU
             * blocks), each against OEIS exactly */
            kedr_cayley_options opt;
            memset(&opt, 0, sizeof opt);
            opt.max_levels = c == 0 ? 6 : 8;
            memset(&r, TU_POISON_BYTE, sizeof r);
            kedr_status st = kedr_cayley_growth(ctx, g, &opt, &r);
            TU_CHECK(st == KEDR_OK, "%s: %s", cases[c].spec, kedr_last_error());
            if (st == KEDR_OK) {
                int same = !r.complete && r.diameter == opt.max_levels;
                uint64_t reached = 0;
                for (int k = 0; same && k <= r.diameter; k++) {
                    same = r.growth[k] == cases[c].F[k];
                    reached += cases[c].F[k];
                }
                TU_CHECK(same && r.reached == reached, "%s: the first %d levels differ from OEIS",
                         cases[c].spec, opt.max_levels);
                kedr_cayley_result_free(&r);
            }
        }
        kedr_cayley_group_free(g);
    }
}

/* Sparse mode equals dense mode on the ranked kinds, whole and in chunks. */
static void check_against_dense(kedr_ctx *ctx)
{
    static const struct {
        const char *spec;
        int inverses;
    } cases[] = {{"pancake:8", 0},         {"bubble:7", 0},    {"star:7", 0},
                 {"burnt-pancake:5", 0},   {"lrx:7", 0},       {"abelian:7,5", 0},
                 {"abelian:2,2,2,2,2", 0}, {"abelian:9,4", 1}, {"transpositions:6", 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kedr_cayley_group *g = parse(cases[c].spec, cases[c].inverses);
        if (!g)
            continue;
        kedr_cayley_result d, s;
        if (growth(ctx, g, KEDR_CAYLEY_DENSE, 0, &d)) {
            if (growth(ctx, g, KEDR_CAYLEY_SPARSE, 0, &s)) {
                TU_CHECK(same_growth(&s, d.growth, d.diameter + 1),
                         "%s: sparse growth differs from dense", g->spec);
                expect_chunked(ctx, g, s.memory_bytes, d.growth, d.diameter + 1);
                kedr_cayley_result_free(&s);
            }
            kedr_cayley_result_free(&d);
        }
        kedr_cayley_group_free(g);
    }
}

/* ---- plain search over S_n ---------------------------------------------------------------- */

static uint64_t lehmer(const uint8_t *x, int n)
{
    uint64_t r = 0;
    for (int i = 0; i < n; i++) {
        int c = 0;
        for (int j = i + 1; j < n; j++)
            c += x[j] < x[i];
        r = r * (uint64_t)(n - i) + (uint64_t)c;
    }
    return r;
}

/* F[0..] of the Cayley graph of g's generators (y[i] = x[perm[i]]); returns the levels. */
static int plain_growth(const kedr_cayley_group *g, uint64_t *F, int max_levels)
{
    int n = g->n;
    uint64_t total = 1;
    for (int i = 2; i <= n; i++)
        total *= (uint64_t)i;
    uint8_t *seen = calloc(total, 1);
    uint8_t *queue = malloc((size_t)g->order * (size_t)n);
    uint8_t *dist = malloc((size_t)g->order);
    size_t head = 0, tail = 1;
    for (int i = 0; i < n; i++)
        queue[i] = (uint8_t)i;
    dist[0] = 0;
    seen[0] = 1;
    int levels = 1;
    memset(F, 0, sizeof *F * (size_t)max_levels);
    F[0] = 1;
    while (head < tail) {
        const uint8_t *x = queue + head * (size_t)n;
        for (int k = 0; k < g->ngens; k++) {
            uint8_t y[16];
            for (int i = 0; i < n; i++)
                y[i] = x[g->perm[k][i]];
            uint64_t r = lehmer(y, n);
            if (seen[r])
                continue;
            seen[r] = 1;
            if (tail == g->order) { /* more elements than the order: fails below */
                levels = -1;
                head = tail;
                break;
            }
            memcpy(queue + tail * (size_t)n, y, (size_t)n);
            int d = dist[head] + 1;
            dist[tail++] = (uint8_t)d;
            if (d >= max_levels) {
                levels = -1;
                head = tail;
                break;
            }
            F[d]++;
            if (d + 1 > levels)
                levels = d + 1;
        }
        head++;
    }
    if (tail != g->order)
        levels = -1;
    free(seen);
    free(queue);
    free(dist);
    return levels;
}

static void expect_plain(kedr_ctx *ctx, const char *spec, int inverses, uint64_t order, int closed)
{
    kedr_cayley_group *g = parse(spec, inverses);
    if (!g)
        return;
    TU_CHECK(g->order == order, "%s: order %llu by Schreier-Sims, expected %llu", spec,
             (unsigned long long)g->order, (unsigned long long)order);
    TU_CHECK(g->inverse_closed == closed, "%s: inverse_closed %d, expected %d", spec,
             g->inverse_closed, closed);
    uint64_t F[256];
    int levels = plain_growth(g, F, 256);
    TU_CHECK(levels > 0, "%s: the plain search did not reach the order", spec);
    kedr_cayley_result r;
    if (levels > 0 && growth(ctx, g, KEDR_CAYLEY_AUTO, 0, &r)) {
        TU_CHECK(same_growth(&r, F, levels), "%s: growth differs from the plain search", spec);
        if (g->ngens > 0)
            expect_chunked(ctx, g, r.memory_bytes, F, levels);
        kedr_cayley_result_free(&r);
    }
    kedr_cayley_group_free(g);
}

static void expect_same(kedr_ctx *ctx, const char *a, const char *b)
{
    kedr_cayley_group *ga = parse(a, 0), *gb = parse(b, 0);
    kedr_cayley_result ra, rb;
    if (ga && gb && growth(ctx, ga, KEDR_CAYLEY_AUTO, 0, &ra)) {
        if (growth(ctx, gb, KEDR_CAYLEY_AUTO, 0, &rb)) {
            TU_CHECK(ga->order == gb->order && same_growth(&ra, rb.growth, rb.diameter + 1),
                     "%s and %s differ", a, b);
            kedr_cayley_result_free(&rb);
        }
        kedr_cayley_result_free(&ra);
    }
    kedr_cayley_group_free(ga);
    kedr_cayley_group_free(gb);
}

static void check_perm_groups(kedr_ctx *ctx, const char *dir)
{
    /* the pancake generators written out, as images and as cycles */
    expect_same(ctx, "pancake:6", "perm:6:[2,1,3,4,5,6],[3,2,1,4,5,6],[4,3,2,1,5,6],"
                                  "[5,4,3,2,1,6],[6,5,4,3,2,1]");
    expect_same(ctx, "pancake:7", "perm:7:(1 2),(1 3),(1 4)(2 3),(1 5)(2 4),(1 6)(2 5)(3 4),"
                                  "(1,7)(2,6)(3,5)");
    expect_same(ctx, "star:6", "perm:6:(1 2), (1 3), (1 4), (1 5), (1 6)");

    /* not closed under inverses: an n-cycle and a transposition; a single 3-cycle */
    expect_plain(ctx, "perm:7:(1 2 3 4 5 6 7),(1 2)", 0, 5040, 0);
    expect_plain(ctx, "perm:7:(1 2 3 4 5 6 7),(1 2)", 1, 5040, 1);
    expect_plain(ctx, "perm:6:(1 2 3)(4 5 6)", 0, 3, 0);
    expect_plain(ctx, "perm:5:[2,3,1,4,5],[1,2,4,5,3]", 0, 60, 0); /* A_5 by two 3-cycles */
    expect_plain(ctx, "perm:8:(1 2 3 4)(5 6 7 8),(1 5)(2 6)(3 7)(4 8)", 0, 8, 0);
    expect_plain(ctx, "perm:11:(1,2,3,4,5,6,7,8,9,10,11),(3,7,11,8)(4,10,5,6)", 0, 7920, 0);
    expect_plain(ctx, "perm:1:[1]", 0, 1, 1);
    expect_plain(ctx, "perm:4:(),(1 2)(3 4),(1 2)(3 4)", 0, 2, 1); /* identity and repeats */

    /* orders only: Schreier-Sims on bigger groups */
    static const struct {
        const char *spec;
        uint64_t order;
    } orders[] = {
        {"perm:12:(1,2,3,4,5,6,7,8,9,10,11),(3,7,11,8)(4,10,5,6),(1,12)(2,11)(3,6)(4,8)(5,9)(7,10)",
         95040},
        {"perm:16:(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16),(1 2)", 20922789888000ull},
        {"perm:15:(1 2 3),(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)", 653837184000ull}, /* A_15 */
        {"perm:16:(1 2)(3 4)(5 6)(7 8)(9 10)(11 12)(13 14)(15 16),(1 3)(2 4)(5 7)(6 8)", 4},
    };
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
        kedr_cayley_group *g = parse(orders[i].spec, 0);
        if (g)
            TU_CHECK(g->order == orders[i].order, "%s: order %llu, expected %llu", orders[i].spec,
                     (unsigned long long)g->order, (unsigned long long)orders[i].order);
        kedr_cayley_group_free(g);
    }

    /* generators from a file */
    char path[512], spec[600];
    snprintf(path, sizeof path, "%s/kedr_perm_%d.txt", dir, (int)getpid());
    FILE *f = fopen(path, "w");
    TU_CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    fprintf(f, "# pancake:5\n[2,1,3,4,5]\n\n(1 3)\n(1 4)(2 3), (1 5)(2 4)\n");
    fclose(f);
    snprintf(spec, sizeof spec, "perm:5:@%s", path);
    expect_same(ctx, "pancake:5", spec);
    f = fopen(path, "w");
    fprintf(f, "(1 2)\n(1 2 7)\n");
    fclose(f);
    kedr_cayley_group *g = NULL;
    kedr_status s = kedr_cayley_parse(spec, 0, &g);
    char where[600];
    snprintf(where, sizeof where, "%s:2: generator 2 '(1 2 7)': point 7 is out of range 1..5",
             path);
    TU_CHECK(s == KEDR_ERR_INVALID && g == NULL && strstr(kedr_last_error(), where),
             "bad file line: %s", kedr_last_error());
    remove(path);
    s = kedr_cayley_parse(spec, 0, &g);
    TU_CHECK(s == KEDR_ERR_IO && strstr(kedr_last_error(), path), "missing file: %s",
             kedr_last_error());
}

static void check_errors(kedr_ctx *ctx)
{
    static const struct {
        const char *spec, *message;
    } bad[] = {
        {"perm", "expected perm:N:GENERATORS"},
        {"perm:0:(1 2)", "with N from 1 to 32"},
        {"perm:33:(1 2)", "with N from 1 to 32"},
        {"perm:x:(1 2)", "with N from 1 to 32"},
        {"perm:32:(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 "
         "30 31 32),(1 2)", "order above 2^62"},
        {"perm:20:(1 21)", "point 21 is out of range 1..20"},
        {"perm:4", "expected perm:N:GENERATORS"},
        {"perm:4:", "expected at least one generator"},
        {"perm:4:[2,1,3]", "generator 1 '[2,1,3]': 3 images, expected 4"},
        {"perm:4:[2,1,3,4,1]", "more than 4 images"},
        {"perm:4:(1 2),[2,2,3,4]", "generator 2 '[2,2,3,4]': not a permutation: 2 appears twice"},
        {"perm:4:(1 2)(2 3)", "point 2 appears twice"},
        {"perm:4:(1 5)", "point 5 is out of range 1..4"},
        {"perm:4:[0,1,2,3]", "point 0 is out of range 1..4"},
        {"perm:4:(1 2", "unbalanced brackets"},
        {"perm:4:1 2", "expected images [a,b,...] or cycles (a b ...)"},
        {"perm:4:(1 x)", "expected a point 1..4"},
        {"perm:4:[2,1,3,4", "unbalanced brackets"},
        {"perm:4:(1 2),,(3 4)", "generator 2 '': expected images"},
        {"perm:4:@", "expected a file name"},
        {"cube2:stm", "expected cube2, cube2:htm or cube2:qtm"},
        {"cube2x", "unknown group"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kedr_cayley_group *g = (kedr_cayley_group *)1;
        kedr_status s = kedr_cayley_parse(bad[i].spec, 0, &g);
        TU_CHECK(s == KEDR_ERR_INVALID && g == NULL && strstr(kedr_last_error(), bad[i].message),
                 "'%s': status %d, message '%s', expected '%s'", bad[i].spec, (int)s,
                 kedr_last_error(), bad[i].message);
    }

    kedr_cayley_group *g = parse("cube2", 0), *p = parse("pancake:5", 0);
    if (!g || !p)
        return;
    kedr_cayley_options opt;
    memset(&opt, 0, sizeof opt);
    kedr_cayley_result r;
    opt.mode = KEDR_CAYLEY_DENSE;
    kedr_status s = kedr_cayley_growth(ctx, g, &opt, &r);
    TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), "no ranking"), "dense cube2: %s",
             kedr_last_error());
    opt.mode = (kedr_cayley_mode)7;
    s = kedr_cayley_growth(ctx, p, &opt, &r);
    TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), "opt->mode is 7"), "mode 7: %s",
             kedr_last_error());
    opt.mode = KEDR_CAYLEY_AUTO;
    opt.memory_limit = 1000;
    s = kedr_cayley_growth(ctx, g, &opt, &r);
    TU_CHECK(s == KEDR_ERR_NOMEM && strstr(kedr_last_error(), "in sparse mode"), "nomem: %s",
             kedr_last_error());
    uint32_t x[16] = {0};
    uint64_t rank;
    TU_CHECK(kedr_cayley_rank(g, x, &rank) == KEDR_ERR_UNSUPPORTED, "rank of cube2");
    TU_CHECK(kedr_cayley_unrank(g, 0, x) == KEDR_ERR_UNSUPPORTED, "unrank of cube2");
    kedr_cayley_group_free(g);
    kedr_cayley_group_free(p);
}

/* The growth functions of a few groups on each back end, compared across back ends. */
#define CROSS_GROUPS 3
#define CROSS_LEVELS 64
static const char *const cross_specs[CROSS_GROUPS] = {"cube2:qtm", "perm:7:(1 2 3 4 5 6 7),(1 2)",
                                                      "perm:8:(1 2 3)(4 5),(2 6 7 8)"};
/* quick: S_9 (362880 elements, diameter 45) in place of the 2x2x2 cube */
static const char *const quick_cross = "perm:9:(1 2 3 4 5 6 7 8 9),(1 2)";

static const char *cross_spec(int i) { return i == 0 && tu_quick() ? quick_cross : cross_specs[i]; }

static void record(kedr_ctx *ctx, uint64_t F[CROSS_GROUPS][CROSS_LEVELS])
{
    for (int i = 0; i < CROSS_GROUPS; i++) {
        memset(F[i], 0, sizeof F[i]);
        kedr_cayley_group *g = parse(cross_spec(i), 0);
        kedr_cayley_result r;
        if (g && growth(ctx, g, KEDR_CAYLEY_AUTO, 0, &r)) {
            TU_CHECK(r.diameter < CROSS_LEVELS, "%s: diameter %d", g->spec, r.diameter);
            for (int s = 0; s <= r.diameter && s < CROSS_LEVELS; s++)
                F[i][s] = r.growth[s];
            kedr_cayley_result_free(&r);
        }
        kedr_cayley_group_free(g);
    }
}

int main(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    static uint64_t F[2][CROSS_GROUPS][CROSS_LEVELS];
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        check_cube2(ctx);
        check_against_dense(ctx);
        check_perm_groups(ctx, dir);
        check_errors(ctx);
        record(ctx, F[b]);
        kedr_ctx_destroy(ctx);
    }
    for (int b = 1; b < nb; b++)
        for (int i = 0; i < CROSS_GROUPS; i++)
            TU_CHECK(memcmp(F[0][i], F[b][i], sizeof F[0][i]) == 0,
                     "%s: growth differs between %s and %s", cross_spec(i),
                     kedr_backend_name(list[0]), kedr_backend_name(list[b]));
    return tu_finish("test_cayley_sparse");
}
