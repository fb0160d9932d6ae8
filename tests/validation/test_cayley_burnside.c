/* cayley: the Burnside groups B_K = B0(2,5)/<a_{K+1},...,a_34> of order 5^K.
 *
 *  - the spec burnside:K, its order, generators and errors; ranks against base 5;
 *  - the products (src/cayley/cayley_elem.h, the code both back ends run): multiplication by
 *    a1, a2 and their inverses permutes [0, 5^K), a1 adds 1 to y0 and leaves the rest alone,
 *    a2^-1 undoes a2, and, B0(2,5) having exponent 5, u^5 = 1 for random words u in a1, a2 of
 *    length 1..6: on every element for K = 1..8, on random elements for larger K. A
 *    wrong coefficient in a Hall polynomial breaks the exponent law almost surely;
 *  - the dense search against a plain queue-based breadth-first search for K <= 6;
 *  - the diameters published by A. A. Kuznetsov (Prikl. Diskr. Mat. 3(33), 2016, 116-125) for
 *    K = 2..10 with {a1, a2} and {a1^+-1, a2^+-1}; growth summing to 5^K; cpu == cuda. */
#include "test_util.h"
#include "cayley/cayley_elem.h"

#define MAX_LEVELS 64

/* Kuznetsov's diameters, index K; K = 2..17 published, 2..10 checked here (the rest on the GPU
 * by bench/gpu.sh). */
static const int kuznetsov[18] = {0,  0,  8,  10, 13, 20, 20, 25, 30,
                                  31, 32, 35, 40, 40, 45, 46, 50, 55};
static const int kuznetsov_inv[18] = {0,  0,  4,  6,  9,  10, 13, 15, 19,
                                      20, 20, 24, 26, 28, 30, 30, 33, 34};

static kedr_cayley_group *parse(const char *spec, int inverses)
{
    kedr_cayley_group *g = NULL;
    kedr_status s = kedr_cayley_parse(spec, inverses, &g);
    TU_CHECK(s == KEDR_OK && g, "%s: %s", spec, kedr_last_error());
    return s == KEDR_OK ? g : NULL;
}

/* The index of generator a1^step (dim 0) or a2^step (dim 1); -1 when absent. */
static int gen_index(const kedr_cayley_group *g, int dim, int step)
{
    for (int k = 0; k < g->ngens; k++)
        if (g->dim[k] == dim && g->step[k] == step)
            return k;
    return -1;
}

static uint64_t mul(const kedr_cayley_group *g, uint64_t r, int k)
{
    cayley_elem e = cayley_load(g, r);
    return cayley_neighbour(g, &e, k);
}

static void check_spec(void)
{
    char spec[32];
    uint64_t order = 1;
    for (int k = 1; k <= CAYLEY_BURNSIDE_LIMIT; k++) {
        order *= 5;
        snprintf(spec, sizeof spec, "burnside:%d", k);
        for (int inv = 0; inv <= 1; inv++) {
            kedr_cayley_group *g = parse(spec, inv);
            if (!g)
                continue;
            TU_CHECK(g->kind == KEDR_CAYLEY_BURNSIDE && g->order == order && g->n == k &&
                         kedr_cayley_element_size(g) == k && strcmp(g->spec, spec) == 0 &&
                         g->description[0] != 0,
                     "%s: kind %d, order %llu, n %d", spec, (int)g->kind,
                     (unsigned long long)g->order, g->n);
            TU_CHECK(g->ngens == (inv ? 4 : 2) && g->inverse_closed == inv &&
                         gen_index(g, 0, 1) >= 0 && gen_index(g, 1, 1) >= 0 &&
                         (!inv || (gen_index(g, 0, -1) >= 0 && gen_index(g, 1, -1) >= 0)),
                     "%s%s: %d generators, inverse_closed %d", spec, inv ? " --inverses" : "",
                     g->ngens, g->inverse_closed);
            kedr_cayley_group_free(g);
        }
    }
    static const char *bad[] = {"burnside:0",  "burnside:x",   "burnside:", "burnside",
                                "burnside:-1", "burnside:3,4", "burnside:99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kedr_cayley_group *g = (kedr_cayley_group *)1;
        kedr_status s = kedr_cayley_parse(bad[i], 0, &g);
        TU_CHECK(s == KEDR_ERR_INVALID && g == NULL && kedr_last_error()[0] != 0,
                 "%s: status %d, '%s'", bad[i], (int)s, kedr_last_error());
    }
    /* beyond the polynomials: the message names the range and why */
    char range[32];
    snprintf(spec, sizeof spec, "burnside:%d", BURNSIDE_DATA_K + 1);
    snprintf(range, sizeof range, "from 1 to %d", CAYLEY_BURNSIDE_LIMIT);
    kedr_cayley_group *g = (kedr_cayley_group *)1;
    kedr_status s = kedr_cayley_parse(spec, 0, &g);
    TU_CHECK(s == KEDR_ERR_INVALID && g == NULL && strstr(kedr_last_error(), range) &&
                 strstr(kedr_last_error(), "not available"),
             "%s: '%s'", spec, kedr_last_error());
    /* polynomials there, but ranks of 5^K elements would not fit below 2^62 */
    if (CAYLEY_BURNSIDE_LIMIT < BURNSIDE_DATA_K) {
        snprintf(spec, sizeof spec, "burnside:%d", CAYLEY_BURNSIDE_LIMIT + 1);
        g = (kedr_cayley_group *)1;
        s = kedr_cayley_parse(spec, 0, &g);
        TU_CHECK(s == KEDR_ERR_INVALID && g == NULL && strstr(kedr_last_error(), range) &&
                     strstr(kedr_last_error(), "2^62"),
                 "%s: '%s'", spec, kedr_last_error());
    }
}

/* Ranks are base 5: rank = sum y_i 5^i; errors for a digit > 4 and a rank >= 5^K. */
static void check_ranks(void)
{
    uint64_t seed = 11;
    for (int k = 1; k <= CAYLEY_BURNSIDE_LIMIT; k++) {
        char spec[32];
        snprintf(spec, sizeof spec, "burnside:%d", k);
        kedr_cayley_group *g = parse(spec, 0);
        if (!g)
            continue;
        int bad = 0;
        for (int t = 0; t < 2000; t++) {
            uint64_t r = t < 5 ? (uint64_t)t : t < 10 ? g->order - 1 - (uint64_t)(t - 5) % g->order
                                                      : tu_next(&seed) % g->order;
            uint32_t y[CAYLEY_BURNSIDE_LIMIT];
            uint64_t back = ~0ull, rr = r;
            if (kedr_cayley_unrank(g, r, y) != KEDR_OK ||
                kedr_cayley_rank(g, y, &back) != KEDR_OK || back != r)
                bad++;
            for (int i = 0; i < k; i++, rr /= 5)
                bad += y[i] != rr % 5;
        }
        TU_CHECK(bad == 0, "%s: %d rank/unrank mismatches", spec, bad);
        uint32_t y[CAYLEY_BURNSIDE_LIMIT] = {0};
        y[k - 1] = 5;
        uint64_t r;
        TU_CHECK(kedr_cayley_rank(g, y, &r) == KEDR_ERR_INVALID && kedr_last_error()[0],
                 "%s: digit 5 accepted", spec);
        TU_CHECK(kedr_cayley_unrank(g, g->order, y) == KEDR_ERR_INVALID && kedr_last_error()[0],
                 "%s: rank 5^K accepted", spec);
        kedr_cayley_group_free(g);
    }
}

/* u^5 applied to r, u a word of gens (indices into g's generators). */
static uint64_t word5(const kedr_cayley_group *g, uint64_t r, const int *word, int len)
{
    for (int rep = 0; rep < 5; rep++)
        for (int i = 0; i < len; i++)
            r = mul(g, r, word[i]);
    return r;
}

static void check_products(void)
{
    uint64_t seed = 5;
    for (int k = 1; k <= CAYLEY_BURNSIDE_LIMIT; k++) {
        char spec[32];
        snprintf(spec, sizeof spec, "burnside:%d", k);
        kedr_cayley_group *g = parse(spec, 1);
        if (!g)
            continue;
        int a1 = gen_index(g, 0, 1), a2 = gen_index(g, 1, 1);
        int a1i = gen_index(g, 0, -1), a2i = gen_index(g, 1, -1);
        int exhaustive = k <= 8;
        uint64_t count = exhaustive ? g->order : 20000;
        uint8_t *seen[4] = {NULL, NULL, NULL, NULL};
        if (exhaustive)
            for (int j = 0; j < 4; j++)
                seen[j] = calloc((size_t)g->order, 1);
        uint64_t bad_range = 0, bad_a1 = 0, bad_inverse = 0, bad_perm = 0;
        for (uint64_t t = 0; t < count; t++) {
            uint64_t r = exhaustive ? t : tu_next(&seed) % g->order;
            uint64_t img[4];
            for (int j = 0; j < 4; j++) {
                img[j] = mul(g, r, j);
                if (img[j] >= g->order) {
                    bad_range++;
                    img[j] = 0;
                }
                if (exhaustive)
                    bad_perm += seen[j][img[j]]++ != 0;
            }
            bad_a1 += img[a1] != r - r % 5 + (r + 1) % 5 || img[a1i] != r - r % 5 + (r + 4) % 5;
            bad_inverse += mul(g, img[a2], a2i) != r || mul(g, img[a2i], a2) != r;
        }
        TU_CHECK(bad_range + bad_a1 + bad_inverse + bad_perm == 0,
                 "%s: %llu products out of range, %llu wrong a1^+-1, %llu a2^-1 a2 != 1, %llu "
                 "repeated images", spec, (unsigned long long)bad_range,
                 (unsigned long long)bad_a1, (unsigned long long)bad_inverse,
                 (unsigned long long)bad_perm);
        for (int j = 0; j < 4; j++)
            free(seen[j]);

        /* the exponent law */
        int words = exhaustive ? 3 : 20;
        uint64_t per_word = exhaustive ? g->order : 1000;
        for (int w = 0; w < words; w++) {
            int word[6], len = 1 + (int)(tu_next(&seed) % 6);
            for (int i = 0; i < len; i++)
                word[i] = tu_next(&seed) & 1 ? a2 : a1;
            if (w == 0) { /* a2 alone: its own order must divide 5 */
                len = 1;
                word[0] = a2;
            }
            uint64_t bad = 0;
            for (uint64_t t = 0; t < per_word; t++) {
                uint64_t r = exhaustive ? t : tu_next(&seed) % g->order;
                bad += word5(g, r, word, len) != r;
            }
            TU_CHECK(bad == 0, "%s: u^5 != 1 on %llu elements for a word of length %d", spec,
                     (unsigned long long)bad, len);
        }
        kedr_cayley_group_free(g);
    }
}

/* Distances by a queue over explicit neighbours: F must match the dense search. */
static int queue_bfs(const kedr_cayley_group *g, uint64_t *F)
{
    uint8_t *dist = malloc((size_t)g->order);
    uint64_t *queue = malloc((size_t)g->order * sizeof *queue);
    memset(dist, 0xFF, (size_t)g->order);
    memset(F, 0, MAX_LEVELS * sizeof *F);
    size_t head = 0, tail = 0;
    int diameter = 0;
    dist[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
        uint64_t r = queue[head++];
        F[dist[r]]++;
        diameter = dist[r];
        for (int k = 0; k < g->ngens; k++) {
            uint64_t s = mul(g, r, k);
            if (dist[s] == 0xFF) {
                dist[s] = (uint8_t)(dist[r] + 1);
                queue[tail++] = s;
            }
        }
    }
    free(dist);
    free(queue);
    return diameter;
}

/* The growth functions on one back end, kept in F[inv][k] for the cpu == cuda check. */
static void check_growth(kedr_ctx *ctx, uint64_t F[2][11][MAX_LEVELS], int diam[2][11])
{
    for (int k = 1; k <= 10; k++)
        for (int inv = 0; inv <= 1; inv++) {
            char spec[32];
            snprintf(spec, sizeof spec, "burnside:%d", k);
            kedr_cayley_group *g = parse(spec, inv);
            if (!g)
                continue;
            kedr_cayley_result r;
            memset(&r, TU_POISON_BYTE, sizeof r);
            kedr_status s = kedr_cayley_growth(ctx, g, NULL, &r);
            TU_CHECK(s == KEDR_OK, "%s: %s", spec, kedr_last_error());
            if (s != KEDR_OK) {
                kedr_cayley_group_free(g);
                continue;
            }
            const char *set = inv ? " --inverses" : "";
            uint64_t sum = 0;
            for (int d = 0; d <= r.diameter; d++)
                sum += r.growth[d];
            TU_CHECK(sum == g->order && r.reached == g->order && r.order == g->order &&
                         r.growth[0] == 1 && r.diameter < MAX_LEVELS,
                     "%s%s: growth sums to %llu, reached %llu, expected %llu", spec, set,
                     (unsigned long long)sum, (unsigned long long)r.reached,
                     (unsigned long long)g->order);
            /* B_1 = Z_5 = <a1>, a2 being trivial there */
            int want = k == 1 ? (inv ? 2 : 4) : inv ? kuznetsov_inv[k] : kuznetsov[k];
            TU_CHECK(r.diameter == want, "%s%s: diameter %d, Kuznetsov's %d", spec, set,
                     r.diameter, want);
            if (k <= 6) {
                uint64_t Q[MAX_LEVELS];
                int dq = queue_bfs(g, Q);
                int same = dq == r.diameter;
                for (int d = 0; same && d <= dq; d++)
                    same = Q[d] == r.growth[d];
                TU_CHECK(same, "%s%s: growth differs from a queue-based search", spec, set);
            }
            if (diam[inv][k] < 0) {
                diam[inv][k] = r.diameter;
                for (int d = 0; d <= r.diameter && d < MAX_LEVELS; d++)
                    F[inv][k][d] = r.growth[d];
            } else { /* a second back end: the same growth function */
                int same = diam[inv][k] == r.diameter;
                for (int d = 0; same && d <= r.diameter; d++)
                    same = F[inv][k][d] == r.growth[d];
                TU_CHECK(same, "%s%s: growth differs between back ends", spec, set);
            }
            kedr_cayley_result_free(&r);
            kedr_cayley_group_free(g);
        }
}

int main(void)
{
    check_spec();
    check_ranks();
    check_products();
    static uint64_t F[2][11][MAX_LEVELS];
    int diam[2][11];
    memset(diam, 0xFF, sizeof diam);
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        check_growth(ctx, F, diam);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_cayley_burnside");
}
