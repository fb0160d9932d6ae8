/* cayley element queries: on every ranked family, the distance table's sphere sizes equal the
 * growth function of kedr_cayley_growth, and for every element (or a sample of big groups) the
 * shortest word has as many letters as the element's distance and, multiplied out here from the
 * generators' definitions (permutations and signs moved by hand, coordinates stepped, B_K
 * through kedr_cayley_multiply), gives the element back; the farthest elements lie at the
 * diameter; elements as text round-trip; bad elements are refused with clear messages. */
#include "test_util.h"

#include <string.h>

/* rank of the element x * generator k, computed from g's definition of the generators and
 * kedr_cayley_rank/unrank alone */
static uint64_t times(const kedr_cayley_group *g, uint64_t rank, int k)
{
    uint32_t x[128], y[128];
    if (kedr_cayley_unrank(g, rank, x) != KEDR_OK)
        return UINT64_MAX;
    int n = g->n;
    if (g->kind == KEDR_CAYLEY_PERMUTATION || g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION) {
        for (int i = 0; i < n; i++) {
            y[i] = x[g->perm[k][i]];
            if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION)
                y[n + i] = x[n + g->perm[k][i]] ^ ((g->flip[k] >> i) & 1u);
        }
    } else if (g->kind == KEDR_CAYLEY_ABELIAN) {
        memcpy(y, x, (size_t)n * sizeof *x);
        int d = g->dim[k];
        y[d] = (uint32_t)((x[d] + (g->step[k] > 0 ? 1 : g->moduli[d] - 1)) % g->moduli[d]);
    } else {
        uint64_t r;
        return kedr_cayley_multiply(g, rank, k, &r) == KEDR_OK ? r : UINT64_MAX;
    }
    uint64_t r = UINT64_MAX;
    kedr_cayley_rank(g, y, &r);
    return r;
}

static void check_group(kedr_ctx *ctx, const char *spec, int inverses, uint64_t stride)
{
    kedr_cayley_group *g = NULL;
    TU_OK(kedr_cayley_parse(spec, inverses, &g));
    if (!g)
        return;
    kedr_cayley_result r;
    TU_OK(kedr_cayley_growth(ctx, g, NULL, &r));
    kedr_cayley_distances *t = NULL;
    TU_OK(kedr_cayley_distances_build(ctx, g, 0, &t));
    if (!t) {
        kedr_cayley_result_free(&r);
        kedr_cayley_group_free(g);
        return;
    }
    int D = kedr_cayley_distances_diameter(t);
    TU_CHECK(D == r.diameter && kedr_cayley_distances_reached(t) == r.reached,
             "%s%s: table diameter %d reached %llu, growth %d %llu", spec,
             inverses ? " inv" : "", D, (unsigned long long)kedr_cayley_distances_reached(t),
             r.diameter, (unsigned long long)r.reached);
    uint64_t F[256] = {0};
    int bad_word = 0, bad_len = 0;
    for (uint64_t x = 0; x < g->order; x++) {
        int d = -2;
        TU_OK(kedr_cayley_distance(t, x, &d));
        if (d >= 0 && d < 256)
            F[d]++;
        if (x % stride && x != g->order - 1)
            continue;
        if (d < 0)
            continue;
        int word[256], len = -1;
        TU_OK(kedr_cayley_word(t, x, word, 256, &len));
        if (len != d)
            bad_len++;
        uint64_t e = 0; /* the identity */
        for (int i = 0; i < len; i++)
            e = times(g, e, word[i]);
        if (e != x)
            bad_word++;
    }
    int same = 1;
    for (int s = 0; s <= D && s < 256; s++)
        same = same && F[s] == r.growth[s];
    TU_CHECK(same, "%s: the table's sphere sizes differ from the growth function", spec);
    TU_CHECK(bad_len == 0 && bad_word == 0,
             "%s%s: %d words of the wrong length, %d that do not give their element", spec,
             inverses ? " inv" : "", bad_len, bad_word);

    uint64_t far[5], nfar = 0;
    TU_OK(kedr_cayley_farthest(t, 5, far, &nfar));
    uint64_t want = r.growth[D] < 5 ? r.growth[D] : 5;
    int at_d = 1;
    for (uint64_t i = 0; i < nfar; i++) {
        int d = -1;
        kedr_cayley_distance(t, far[i], &d);
        at_d = at_d && d == D && (i == 0 || far[i] > far[i - 1]);
    }
    TU_CHECK(nfar == want && at_d, "%s: %llu farthest elements, expected %llu at distance %d",
             spec, (unsigned long long)nfar, (unsigned long long)want, D);

    /* text round trip of a few elements */
    for (uint64_t x = 0; x < g->order; x += g->order / 7 + 1) {
        char buf[600];
        uint64_t back = UINT64_MAX;
        TU_OK(kedr_cayley_element_format(g, x, buf, sizeof buf));
        TU_OK(kedr_cayley_element_parse(g, buf, &back));
        TU_CHECK(back == x, "%s: rank %llu printed as %s reads back as %llu", spec,
                 (unsigned long long)x, buf, (unsigned long long)back);
    }
    kedr_cayley_distances_free(t);
    kedr_cayley_result_free(&r);
    kedr_cayley_group_free(g);
}

/* text must be refused with a message containing `want` */
static void expect_bad(const char *spec, const char *text, const char *want)
{
    kedr_cayley_group *g = NULL;
    TU_OK(kedr_cayley_parse(spec, 0, &g));
    uint64_t r = 0;
    kedr_status s = g ? kedr_cayley_element_parse(g, text, &r) : KEDR_ERR_INVALID;
    TU_CHECK(s != KEDR_OK && strstr(kedr_last_error(), want),
             "%s element '%s': status %d, message '%s', expected '%s'", spec, text, (int)s,
             kedr_last_error(), want);
    kedr_cayley_group_free(g);
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        if (!ctx)
            continue;
        uint64_t stride = tu_quick() ? 7 : 1;
        check_group(ctx, "pancake:6", 0, stride);
        check_group(ctx, "burnt-pancake:4", 0, stride);
        check_group(ctx, "bubble:6", 0, stride);
        check_group(ctx, "star:6", 0, stride);
        check_group(ctx, "transpositions:5", 0, stride);
        check_group(ctx, "lrx:6", 0, stride);
        check_group(ctx, "abelian:5,3", 0, stride); /* directed */
        check_group(ctx, "abelian:4,6,2", 1, stride);
        check_group(ctx, "burnside:5", 0, stride); /* directed: a1, a2 */
        check_group(ctx, "burnside:5", 1, stride);
        if (!tu_quick())
            check_group(ctx, "pancake:8", 0, 13);
        kedr_ctx_destroy(ctx);
    }

    expect_bad("pancake:4", "[1,2,3]", "expected 4 entries");
    expect_bad("pancake:4", "1,2,3,4,1", "got more");
    expect_bad("pancake:4", "[1,2,2,4]", "2 appears twice");
    expect_bad("pancake:4", "[0,1,2,3]", "expected 1..4");
    expect_bad("pancake:4", "[1,x,3,4]", "is not a non-negative integer");
    expect_bad("pancake:4", "[-1,2,3,4]", "is not a non-negative integer");
    expect_bad("pancake:4", "rank:24", "rank:R with R from 0 to 23");
    expect_bad("burnt-pancake:3", "[1,-2]", "expected 3 entries");
    expect_bad("abelian:5,3", "4,3", "expected 0..2");
    expect_bad("burnside:3", "[0,5,0]", "expected 0..4");
    expect_bad("cube2", "rank:0", "has no ranking");

    /* an element the generators do not reach: Z_4 x Z_4 with its first generator alone */
    kedr_cayley_group *g = NULL;
    TU_OK(kedr_cayley_parse("abelian:4,4", 0, &g));
    kedr_ctx *ctx = tu_ctx(KEDR_BACKEND_CPU);
    if (g && ctx) {
        kedr_cayley_group one = *g;
        one.ngens = 1;
        kedr_cayley_distances *t = NULL;
        TU_OK(kedr_cayley_distances_build(ctx, &one, 0, &t));
        int word[8], len = 0, d = 0;
        uint64_t x = 0;
        TU_OK(kedr_cayley_element_parse(&one, "(1,1)", &x));
        kedr_status s = t ? kedr_cayley_word(t, x, word, 8, &len) : KEDR_ERR_INVALID;
        TU_CHECK(t && kedr_cayley_distances_reached(t) == 4 && s == KEDR_ERR_INVALID &&
                     strstr(kedr_last_error(), "not reached"),
                 "abelian:4,4 with one generator: %s", kedr_last_error());
        TU_CHECK(t && kedr_cayley_distance(t, x, &d) == KEDR_OK && d == -1,
                 "abelian:4,4 with one generator: distance %d of (1,1)", d);
        kedr_cayley_distances_free(t);
        /* a memory limit below |G| bytes is refused with the size */
        kedr_cayley_group *p = NULL;
        TU_OK(kedr_cayley_parse("pancake:8", 0, &p));
        s = p ? kedr_cayley_distances_build(ctx, p, 1000, &t) : KEDR_ERR_INVALID;
        TU_CHECK(s == KEDR_ERR_NOMEM && strstr(kedr_last_error(), "a byte per element"),
                 "pancake:8 in 1000 bytes: %d %s", (int)s, kedr_last_error());
        kedr_cayley_group_free(p);
    }
    kedr_cayley_group_free(g);
    kedr_ctx_destroy(ctx);
    return tu_finish("test_cayley_query");
}
