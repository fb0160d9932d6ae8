/* Element queries: a table of the distance of every element (one byte each), shortest words by
 * walking back level by level, the elements at the diameter, and elements written as text.
 *
 * The table comes from its own breadth-first search on the host: level s sweeps the table for
 * the bytes equal to s and sets the unreached neighbours of their elements to s + 1 (a
 * compare-and-swap, so each is counted once). The growth search (growth.c) keeps no distances
 * (3 bits an element: visited, frontier, next), so a query costs this second search and |G|
 * bytes. Walking back from x at distance d takes the generators' inverses: some x s_k^-1 is at
 * distance d - 1 (the last letter of a shortest word is k), at most d |S| products in all. */
#include "cayley_elem.h"
#include "growth.h"
#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNREACHED 255
#define MAX_DISTANCE 254

/* Below this many elements a level runs on one thread. */
#define CPU_PARALLEL_ELEMENTS 65536

struct kedr_cayley_distances {
    const kedr_cayley_group *g;
    kedr_cayley_group inv; /* g with each generator replaced by its inverse */
    uint8_t *d;            /* d[rank]: the distance, UNREACHED when not reached */
    int diameter;
    uint64_t reached;
};

static kedr_status need_ranks(const kedr_cayley_group *g, const char *who)
{
    KEDR_TRY(cayley_check_group(g, who));
    if (!cayley_ranked_kind(g->kind))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: %s has no ranking: element queries take the "
                         "ranked groups (pancake, burnt-pancake, bubble, star, transpositions, "
                         "lrx, abelian, burnside)", who, g->spec);
    return KEDR_OK;
}

static uint64_t rank_times(const kedr_cayley_group *g, uint64_t rank, int k)
{
    cayley_elem e = cayley_load(g, rank);
    return cayley_neighbour(g, &e, k);
}

/* One level: the unreached neighbours of the elements at distance s get s + 1. */
static uint64_t sweep(kedr_cayley_distances *t, int s, int threads)
{
    const kedr_cayley_group *g = t->g;
    uint8_t *d = t->d;
    long long order = (long long)g->order;
    uint64_t count = 0;
    uint8_t next = (uint8_t)(s + 1);
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : count) num_threads(threads) \
    if (order > CPU_PARALLEL_ELEMENTS)
    for (long long r = 0; r < order; r++) {
        if (d[r] != (uint8_t)s)
            continue;
        cayley_elem e = cayley_load(g, (uint64_t)r);
        for (int k = 0; k < g->ngens; k++) {
            uint64_t q = cayley_neighbour(g, &e, k);
            uint8_t expected = UNREACHED;
            if (__atomic_load_n(&d[q], __ATOMIC_RELAXED) == UNREACHED &&
                __atomic_compare_exchange_n(&d[q], &expected, next, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
                count++;
        }
    }
    return count;
}

kedr_status kedr_cayley_distances_build(kedr_ctx *ctx, const kedr_cayley_group *g,
                                        size_t memory_limit, kedr_cayley_distances **out)
{
    if (!ctx || !out)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_distances_build: %s is NULL",
                         !ctx ? "ctx" : "out");
    *out = NULL;
    KEDR_TRY(need_ranks(g, "kedr_cayley_distances_build"));
    size_t limit = memory_limit ? memory_limit : cayley_host_memory();
    if (g->order > limit || g->order > SIZE_MAX) {
        char need_s[32], limit_s[32];
        kedr_format_bytes((double)g->order, need_s, sizeof need_s);
        kedr_format_bytes((double)limit, limit_s, sizeof limit_s);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: element queries need %s (a byte per element), more "
                         "than the %s %s", g->spec, need_s, limit_s,
                         memory_limit ? "allowed by the limit" : "of host memory available");
    }
    kedr_cayley_distances *t = calloc(1, sizeof *t);
    uint8_t *d = malloc((size_t)g->order);
    if (!t || !d) {
        free(t);
        free(d);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for the distance table (%llu "
                         "bytes)", g->spec, (unsigned long long)g->order);
    }
    t->g = g;
    t->inv = *g;
    cayley_invert_generators(&t->inv);
    t->d = d;
    memset(d, UNREACHED, (size_t)g->order);
    d[0] = 0; /* the identity has rank 0 */
    t->reached = 1;
    for (int s = 0;; s++) {
        uint64_t count = sweep(t, s, kedr_ctx_threads(ctx));
        if (count == 0)
            break;
        if (s + 1 > MAX_DISTANCE) {
            kedr_cayley_distances_free(t);
            return kedr_fail(KEDR_ERR_INVALID, "%s: element queries keep distances up to %d in a "
                             "byte, and this graph goes further", g->spec, MAX_DISTANCE);
        }
        t->diameter = s + 1;
        t->reached += count;
    }
    *out = t;
    return KEDR_OK;
}

void kedr_cayley_distances_free(kedr_cayley_distances *t)
{
    if (!t)
        return;
    free(t->d);
    free(t);
}

int kedr_cayley_distances_diameter(const kedr_cayley_distances *t) { return t ? t->diameter : -1; }

uint64_t kedr_cayley_distances_reached(const kedr_cayley_distances *t)
{
    return t ? t->reached : 0;
}

static kedr_status check_rank(const kedr_cayley_distances *t, uint64_t rank, const char *who)
{
    if (!t)
        return kedr_fail(KEDR_ERR_INVALID, "%s: the table is NULL", who);
    if (rank >= t->g->order)
        return kedr_fail(KEDR_ERR_INVALID, "%s: rank %llu, expected 0..%llu in %s", who,
                         (unsigned long long)rank, (unsigned long long)(t->g->order - 1),
                         t->g->spec);
    return KEDR_OK;
}

kedr_status kedr_cayley_distance(const kedr_cayley_distances *t, uint64_t rank, int *distance)
{
    KEDR_TRY(check_rank(t, rank, "kedr_cayley_distance"));
    if (!distance)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_distance: distance is NULL");
    *distance = t->d[rank] == UNREACHED ? -1 : t->d[rank];
    return KEDR_OK;
}

kedr_status kedr_cayley_word(const kedr_cayley_distances *t, uint64_t rank, int *word, int cap,
                             int *length)
{
    KEDR_TRY(check_rank(t, rank, "kedr_cayley_word"));
    if (!length || (!word && cap > 0))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_word: %s is NULL",
                         !length ? "length" : "word");
    int d = t->d[rank];
    if (d == UNREACHED)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_word: the element of rank %llu is not "
                         "reached from the identity by the generators of %s (not in the "
                         "subgroup they generate)", (unsigned long long)rank, t->g->spec);
    if (d > cap)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_word: the word has %d letters, more than "
                         "cap = %d", d, cap);
    uint64_t x = rank;
    for (int i = d; i > 0; i--) {
        int k = 0;
        uint64_t y = 0;
        for (; k < t->g->ngens; k++) {
            y = rank_times(&t->inv, x, k);
            if (t->d[y] == i - 1)
                break;
        }
        if (k == t->g->ngens) /* cannot happen for a table this file built */
            return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_word: internal error: no "
                             "predecessor at distance %d in %s", i - 1, t->g->spec);
        word[i - 1] = k;
        x = y;
    }
    *length = d;
    return KEDR_OK;
}

kedr_status kedr_cayley_farthest(const kedr_cayley_distances *t, uint64_t max, uint64_t *ranks,
                                 uint64_t *count)
{
    if (!t || !count || (!ranks && max > 0))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_farthest: %s is NULL",
                         !t ? "the table" : !count ? "count" : "ranks");
    uint64_t n = 0;
    for (uint64_t r = 0; r < t->g->order && n < max; r++)
        if (t->d[r] == t->diameter)
            ranks[n++] = r;
    *count = n;
    return KEDR_OK;
}

kedr_status kedr_cayley_multiply(const kedr_cayley_group *g, uint64_t rank, int k,
                                 uint64_t *product)
{
    KEDR_TRY(need_ranks(g, "kedr_cayley_multiply"));
    if (!product || k < 0 || k >= g->ngens || rank >= g->order)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_multiply: %s",
                         !product ? "product is NULL"
                         : rank >= g->order ? "rank out of range"
                                            : "no such generator");
    *product = rank_times(g, rank, k);
    return KEDR_OK;
}

/* ---- elements as text ---- */

kedr_status kedr_cayley_element_parse(const kedr_cayley_group *g, const char *text,
                                      uint64_t *rank)
{
    KEDR_TRY(need_ranks(g, "element"));
    if (!text || !rank)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_element_parse: %s is NULL",
                         !text ? "text" : "rank");
    if (strncmp(text, "rank:", 5) == 0) {
        const char *p = text + 5;
        char *end;
        unsigned long long r = strtoull(p, &end, 10);
        if (*p < '0' || *p > '9' || *end || r >= g->order)
            return kedr_fail(KEDR_ERR_INVALID, "element '%s': expected rank:R with R from 0 to "
                             "%llu (the order of %s less 1)", text,
                             (unsigned long long)(g->order - 1), g->spec);
        *rank = r;
        return KEDR_OK;
    }
    int signed_perm = g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION;
    int perm = g->kind == KEDR_CAYLEY_PERMUTATION || signed_perm;
    int want = g->n;
    const char *what = perm ? "images of positions 1..N" : g->kind == KEDR_CAYLEY_ABELIAN
                                                               ? "coordinates"
                                                               : "exponents of a1..aK";
    /* entries between optional brackets */
    size_t len = strlen(text);
    const char *p = text, *end = text + len;
    if (len >= 2 && ((text[0] == '[' && text[len - 1] == ']') ||
                     (text[0] == '(' && text[len - 1] == ')'))) {
        p++;
        end--;
    }
    uint32_t x[2 * KEDR_CAYLEY_MAX_FACTORS];
    int n = 0;
    while (p <= end) {
        const char *q = p;
        while (q < end && *q != ',')
            q++;
        while (p < q && *p == ' ')
            p++;
        int minus = p < q && *p == '-';
        const char *digits = p + minus;
        uint64_t v = 0;
        int ok = digits < q;
        for (const char *c = digits; c < q && ok; c++) {
            if (*c == ' ' && c > digits) {
                for (const char *e = c; e < q; e++)
                    ok = ok && *e == ' ';
                break;
            }
            ok = *c >= '0' && *c <= '9' && v < ((uint64_t)1 << 40);
            v = v * 10 + (uint64_t)(*c - '0');
        }
        if (!ok || (minus && !signed_perm))
            return kedr_fail(KEDR_ERR_INVALID, "element '%s': entry %d ('%.*s') is not %s", text,
                             n + 1, (int)(q - p), p,
                             signed_perm ? "an integer or a minus sign and an integer"
                                         : "a non-negative integer");
        if (n == want)
            return kedr_fail(KEDR_ERR_INVALID, "element '%s': expected %d entries (the %s) for "
                             "%s, got more", text, want, what, g->spec);
        if (perm) {
            if (v < 1 || v > (uint64_t)g->n)
                return kedr_fail(KEDR_ERR_INVALID, "element '%s': entry %d is %llu, expected "
                                 "1..%d (a permutation of 1..%d)", text, n + 1,
                                 (unsigned long long)v, g->n, g->n);
            x[n] = (uint32_t)(v - 1);
            if (signed_perm)
                x[g->n + n] = (uint32_t)minus;
        } else {
            uint64_t top = g->kind == KEDR_CAYLEY_ABELIAN ? g->moduli[n] - 1 : 4;
            if (v > top)
                return kedr_fail(KEDR_ERR_INVALID, "element '%s': entry %d is %llu, expected "
                                 "0..%llu (%s of %s)", text, n + 1, (unsigned long long)v,
                                 (unsigned long long)top, what, g->spec);
            x[n] = (uint32_t)v;
        }
        n++;
        p = q + 1;
    }
    if (n != want)
        return kedr_fail(KEDR_ERR_INVALID, "element '%s': expected %d entries (the %s) for %s, "
                         "got %d", text, want, what, g->spec, n);
    if (perm) {
        uint32_t seen = 0;
        for (int i = 0; i < n; i++) {
            if ((seen >> x[i]) & 1u)
                return kedr_fail(KEDR_ERR_INVALID, "element '%s': %u appears twice (expected a "
                                 "permutation of 1..%d)", text, x[i] + 1, g->n);
            seen |= 1u << x[i];
        }
    }
    return kedr_cayley_rank(g, x, rank);
}

kedr_status kedr_cayley_element_format(const kedr_cayley_group *g, uint64_t rank, char *buf,
                                       size_t size)
{
    KEDR_TRY(need_ranks(g, "kedr_cayley_element_format"));
    if (!buf || size == 0)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_element_format: buf is NULL");
    uint32_t x[2 * KEDR_CAYLEY_MAX_FACTORS];
    KEDR_TRY(kedr_cayley_unrank(g, rank, x));
    int perm = g->kind == KEDR_CAYLEY_PERMUTATION || g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION;
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < g->n && len < size; i++) {
        int minus = g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION && x[g->n + i];
        len += (size_t)snprintf(buf + len, size - len, "%s%s%u", i ? "," : "[", minus ? "-" : "",
                                x[i] + (perm ? 1u : 0u));
    }
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return KEDR_OK;
}

const char *kedr_cayley_generator_name(const kedr_cayley_group *g, int k, char *buf,
                                       size_t size)
{
    if (!buf || size == 0)
        return buf;
    buf[0] = 0;
    if (!g || k < 0 || k >= g->ngens)
        return buf;
    if (g->kind == KEDR_CAYLEY_ABELIAN) {
        snprintf(buf, size, "%ce%d", g->step[k] > 0 ? '+' : '-', g->dim[k] + 1);
        return buf;
    }
    if (g->kind == KEDR_CAYLEY_BURNSIDE) {
        snprintf(buf, size, "a%d%s", g->dim[k] + 1, g->step[k] > 0 ? "" : "^-1");
        return buf;
    }
    int n = g->kind == KEDR_CAYLEY_CUBE2 ? 7 : g->n;
    size_t len = 0;
    for (int i = 0; i < n && len < size; i++) {
        int minus = g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION && ((g->flip[k] >> i) & 1u);
        len += (size_t)snprintf(buf + len, size - len, "%s%s%d", i ? "," : "[", minus ? "-" : "",
                                g->perm[k][i] + 1);
    }
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return buf;
}
