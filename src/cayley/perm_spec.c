/* Specs of the sparse kinds: perm:N:GENERATORS, perm:N:@FILE and cube2[:htm|:qtm], and the
 * order of a perm: group by the Schreier-Sims algorithm. */
#include "sparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUBE2_ORDER 3674160ull
#define CAYLEY_MAX_SPARSE_ORDER (1ull << 62) /* 7! 3^6: the 8!·3^7 corner states over the 24 rotations */
/* Subgroup chains of S_32 are far shorter (Cameron, Solomon & Turull 1989: < 3n/2 = 48). */
#define SS_MAX_GENS 64

/* Points (perm:) or corners (cube2) that generators move. */
static int positions(const kedr_cayley_group *g)
{
    return g->kind == KEDR_CAYLEY_CUBE2 ? CAYLEY_CUBE2_CORNERS : g->n;
}

/* Adds the generator moving position i to perm[i] (twists flip: cube2) unless it is the
 * identity or already there; 0 when the table is full. */
static int add_generator(kedr_cayley_group *g, const uint8_t *perm, uint16_t flip)
{
    int n = positions(g), identity = flip == 0;
    for (int i = 0; i < n && identity; i++)
        identity = perm[i] == i;
    if (identity)
        return 1;
    for (int k = 0; k < g->ngens; k++)
        if (memcmp(g->perm[k], perm, (size_t)n) == 0 && g->flip[k] == flip)
            return 1;
    if (g->ngens == KEDR_CAYLEY_MAX_GENERATORS)
        return 0;
    int k = g->ngens++;
    for (int i = 0; i < KEDR_CAYLEY_MAX_POINTS; i++)
        g->perm[k][i] = (uint8_t)(i < n ? perm[i] : i);
    g->flip[k] = flip;
    return 1;
}

/* cube2: adds the generator whose action takes the identity to state x (the state holds the
 * generator's moves and twists directly). */
static void add_state(kedr_cayley_group *g, uint64_t x)
{
    uint8_t perm[CAYLEY_CUBE2_CORNERS];
    uint16_t flip = 0;
    for (int i = 0; i < CAYLEY_CUBE2_CORNERS; i++) {
        perm[i] = (uint8_t)cayley_nibble(x, i);
        flip |= (uint16_t)(cayley_nibble(x, CAYLEY_CUBE2_CORNERS + i) << (2 * i));
    }
    add_generator(g, perm, flip);
}

/* The inverse of generator k: the inverse permutation, and for cube2 the last power before
 * the identity (which also undoes the twists). */
static void inverse_of(const kedr_cayley_group *g, int k, uint8_t *perm, uint16_t *flip)
{
    *flip = 0;
    if (g->kind != KEDR_CAYLEY_CUBE2) {
        for (int i = 0; i < g->n; i++)
            perm[g->perm[k][i]] = (uint8_t)i;
        return;
    }
    uint64_t id = cayley_sparse_identity(g), y = cayley_sparse_apply(g, id, k);
    for (;;) {
        uint64_t z = cayley_sparse_apply(g, y, k);
        if (z == id)
            break;
        y = z;
    }
    for (int i = 0; i < CAYLEY_CUBE2_CORNERS; i++) {
        perm[i] = (uint8_t)cayley_nibble(y, i);
        *flip |= (uint16_t)(cayley_nibble(y, CAYLEY_CUBE2_CORNERS + i) << (2 * i));
    }
}

static kedr_status close_inverses(kedr_cayley_group *g)
{
    int given = g->ngens, n = positions(g);
    g->inverse_closed = 1;
    for (int k = 0; k < given; k++) {
        uint8_t inv[KEDR_CAYLEY_MAX_POINTS];
        uint16_t flip;
        inverse_of(g, k, inv, &flip);
        int found = 0;
        for (int j = 0; j < g->ngens && !found; j++)
            found = memcmp(g->perm[j], inv, (size_t)n) == 0 && g->flip[j] == flip;
        if (found)
            continue;
        g->inverse_closed = 0;
        if (g->inverses && !add_generator(g, inv, flip))
            return kedr_fail(KEDR_ERR_INVALID, "%s: more than %d generators with the inverses",
                             g->spec, KEDR_CAYLEY_MAX_GENERATORS);
    }
    if (g->inverses)
        g->inverse_closed = 1;
    return KEDR_OK;
}

/* ---- cube2 -------------------------------------------------------------------------------- */

/* Corner positions URF UFL ULB UBR DFR DLF DRB (0..6); DBL is fixed, so the turns are those of
 * the three faces away from it. A turn moves the corner at position perm[i] to position i and
 * adds twist[i] to its orientation (the corner cubie model of Kociemba's two-phase solver). */
static const struct {
    uint8_t perm[CAYLEY_CUBE2_CORNERS];
    uint8_t twist[CAYLEY_CUBE2_CORNERS];
} cube2_turns[3] = {
    {{3, 0, 1, 2, 4, 5, 6}, {0, 0, 0, 0, 0, 0, 0}}, /* U */
    {{4, 1, 2, 0, 6, 5, 3}, {2, 0, 0, 1, 1, 0, 2}}, /* R */
    {{1, 5, 2, 3, 0, 4, 6}, {1, 2, 0, 0, 2, 1, 0}}, /* F */
};

static kedr_status parse_cube2(kedr_cayley_group *g, const char *spec)
{
    int htm;
    if (strcmp(spec, "cube2") == 0 || strcmp(spec, "cube2:htm") == 0)
        htm = 1;
    else if (strcmp(spec, "cube2:qtm") == 0)
        htm = 0;
    else
        return kedr_fail(KEDR_ERR_INVALID, "%s: expected cube2, cube2:htm or cube2:qtm", spec);
    g->kind = KEDR_CAYLEY_CUBE2;
    g->n = CAYLEY_CUBE2_CORNERS;
    g->state_words = 1;
    g->order = CUBE2_ORDER;
    snprintf(g->spec, sizeof g->spec, "cube2:%s", htm ? "htm" : "qtm");
    snprintf(g->description, sizeof g->description, "2x2x2 cube, %s turns of U R F, DBL fixed",
             htm ? "quarter and half" : "quarter");
    for (int f = 0; f < 3; f++) {
        uint64_t turn = 0;
        for (int i = 0; i < CAYLEY_CUBE2_CORNERS; i++)
            turn |= ((uint64_t)cube2_turns[f].perm[i] << (4 * i)) |
                    ((uint64_t)cube2_turns[f].twist[i] << (4 * (CAYLEY_CUBE2_CORNERS + i)));
        int k = g->ngens;
        add_state(g, turn);
        uint64_t twice = cayley_sparse_apply(g, turn, k);
        if (htm)
            add_state(g, twice);
        add_state(g, cayley_sparse_apply(g, twice, k));
    }
    return KEDR_OK;
}

/* ---- Schreier-Sims ------------------------------------------------------------------------ */

/* Knuth's formulation (Efficient representation of perm groups, Combinatorica 11, 1991):
 * level i holds the group G_i of elements fixing the points 0..i-1 by generators S[i] and a
 * transversal T[i][j] (an element of G_i taking i to j). A new generator of level i is kept
 * unless it sifts through the table; the products of generators and transversal elements
 * extend the orbit of i or, when they land on a known coset, pass their quotient down to level
 * i + 1. The order is the product of the orbit sizes. Permutations: p[x] = image of x. */
typedef struct {
    int n, overflow;
    uint8_t have[KEDR_CAYLEY_MAX_POINTS][KEDR_CAYLEY_MAX_POINTS];
    uint8_t T[KEDR_CAYLEY_MAX_POINTS][KEDR_CAYLEY_MAX_POINTS][KEDR_CAYLEY_MAX_POINTS];
    int ns[KEDR_CAYLEY_MAX_POINTS];
    uint8_t S[KEDR_CAYLEY_MAX_POINTS][SS_MAX_GENS][KEDR_CAYLEY_MAX_POINTS];
} schreier;

/* out = a after b: out[x] = a[b[x]] */
static void compose(int n, const uint8_t *a, const uint8_t *b, uint8_t *out)
{
    for (int x = 0; x < n; x++)
        out[x] = a[b[x]];
}

/* out = inverse(a) after b */
static void divide(int n, const uint8_t *a, const uint8_t *b, uint8_t *out)
{
    uint8_t inv[KEDR_CAYLEY_MAX_POINTS];
    for (int x = 0; x < n; x++)
        inv[a[x]] = (uint8_t)x;
    compose(n, inv, b, out);
}

static int sifts(const schreier *ss, int i, const uint8_t *g)
{
    uint8_t h[KEDR_CAYLEY_MAX_POINTS], t[KEDR_CAYLEY_MAX_POINTS];
    memcpy(h, g, (size_t)ss->n);
    for (int l = i; l < ss->n; l++) {
        int j = h[l];
        if (!ss->have[l][j])
            return 0;
        divide(ss->n, ss->T[l][j], h, t);
        memcpy(h, t, (size_t)ss->n);
    }
    return 1;
}

static void ss_add(schreier *ss, int i, const uint8_t *g);

/* t is in G_i: record it as the transversal element of t(i), or pass the quotient down. */
static void ss_orbit(schreier *ss, int i, const uint8_t *t)
{
    uint8_t u[KEDR_CAYLEY_MAX_POINTS];
    int j = t[i];
    if (ss->have[i][j]) {
        divide(ss->n, ss->T[i][j], t, u);
        ss_add(ss, i + 1, u);
        return;
    }
    ss->have[i][j] = 1;
    memcpy(ss->T[i][j], t, (size_t)ss->n);
    for (int q = 0; q < ss->ns[i]; q++) { /* ns may grow meanwhile: new ones are seen too */
        compose(ss->n, ss->S[i][q], ss->T[i][j], u);
        ss_orbit(ss, i, u);
    }
}

static void ss_add(schreier *ss, int i, const uint8_t *g)
{
    if (i >= ss->n || ss->overflow || sifts(ss, i, g))
        return;
    if (ss->ns[i] == SS_MAX_GENS) {
        ss->overflow = 1;
        return;
    }
    memcpy(ss->S[i][ss->ns[i]++], g, (size_t)ss->n);
    uint8_t u[KEDR_CAYLEY_MAX_POINTS];
    for (int j = 0; j < ss->n; j++)
        if (ss->have[i][j]) {
            compose(ss->n, g, ss->T[i][j], u);
            ss_orbit(ss, i, u);
        }
}

/* Words of base images for nbase base points. */
static int words_for(int nbase)
{
    return nbase <= CAYLEY_WORD_FIELDS ? 1 : (nbase + CAYLEY_WORD_FIELDS - 1) / CAYLEY_WORD_FIELDS;
}

/* The order (product of the orbit sizes) and the base: the points whose orbit under the
 * stabiliser of the points before them is nontrivial. An element fixing every base point fixes
 * every point (by induction along the chain), so the base images determine an element. */
static kedr_status group_order(kedr_cayley_group *g)
{
    schreier *ss = calloc(1, sizeof *ss);
    if (!ss)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", g->spec);
    ss->n = g->n;
    for (int i = 0; i < g->n; i++) {
        ss->have[i][i] = 1;
        for (int x = 0; x < g->n; x++)
            ss->T[i][i][x] = (uint8_t)x;
    }
    for (int k = 0; k < g->ngens; k++)
        ss_add(ss, 0, g->perm[k]);
    int overflow = ss->overflow, too_big = 0;
    g->order = 1;
    g->nbase = 0;
    for (int i = 0; i < g->n; i++) {
        uint64_t orbit = 0;
        for (int j = 0; j < g->n; j++)
            orbit += ss->have[i][j];
        if (orbit > 1)
            g->base[g->nbase++] = (uint8_t)i;
        if (g->order > CAYLEY_MAX_SPARSE_ORDER / orbit)
            too_big = 1;
        else
            g->order *= orbit;
    }
    free(ss);
    g->state_words = g->n > CAYLEY_PACKED_POINTS ? words_for(g->nbase) : 1;
    if (overflow)
        return kedr_fail(KEDR_ERR_INVALID, "%s: internal error: Schreier-Sims needs more than %d "
                         "generators on a level", g->spec, SS_MAX_GENS);
    if (too_big)
        return kedr_fail(KEDR_ERR_INVALID, "%s: the group has order above 2^62 (Schreier-Sims), "
                         "beyond what a search can hold", g->spec);
    return KEDR_OK;
}

kedr_status cayley_perm_set_base(kedr_cayley_group *g, const uint8_t *base, int nbase)
{
    if (!g || !base || !cayley_sparse_based(g) || nbase < g->nbase || nbase > g->n)
        return kedr_fail(KEDR_ERR_INVALID, "cayley_perm_set_base: expected a perm:N group with "
                         "N > %d and from its %d base points to N points",
                         CAYLEY_PACKED_POINTS, g ? g->nbase : 0);
    uint32_t seen = 0;
    for (int j = 0; j < nbase; j++) {
        if (base[j] >= g->n || (seen >> base[j]) & 1u)
            return kedr_fail(KEDR_ERR_INVALID, "cayley_perm_set_base: base[%d] = %d repeats or "
                             "is not a point 0..%d", j, base[j], g->n - 1);
        seen |= 1u << base[j];
    }
    for (int j = 0; j < g->nbase; j++)
        if (!((seen >> g->base[j]) & 1u))
            return kedr_fail(KEDR_ERR_INVALID, "cayley_perm_set_base: the base lacks point %d",
                             g->base[j]);
    memcpy(g->base, base, (size_t)nbase);
    g->nbase = nbase;
    g->state_words = words_for(nbase);
    return KEDR_OK;
}

/* ---- perm:N:GENERATORS -------------------------------------------------------------------- */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Reads a point 1..n at *p (after blanks and commas); 0 with why[] set when there is none. */
static int read_point(const char **p, const char *end, int n, char *why, size_t whylen)
{
    while (*p < end && (is_space(**p) || **p == ','))
        (*p)++;
    int v = 0, digits = 0;
    while (*p < end && **p >= '0' && **p <= '9' && digits < 4) {
        v = v * 10 + (**p - '0');
        (*p)++;
        digits++;
    }
    if (!digits) {
        snprintf(why, whylen, "expected a point 1..%d at '%.*s'", n, (int)(end - *p), *p);
        return 0;
    }
    if (v < 1 || v > n) {
        snprintf(why, whylen, "point %d is out of range 1..%d", v, n);
        return 0;
    }
    return v;
}

/* Parses one generator text[0..len) into img (img[i] = image of point i, 0-based). */
static int parse_generator(const char *text, size_t len, int n, uint8_t *img, char *why,
                           size_t whylen)
{
    const char *p = text, *end = text + len;
    uint32_t seen = 0;
    while (p < end && is_space(*p))
        p++;
    while (end > p && is_space(end[-1]))
        end--;
    if (p < end && *p == '[') {
        if (end[-1] != ']') {
            snprintf(why, whylen, "expected ']' at the end");
            return 0;
        }
        p++;
        end--;
        int count = 0;
        for (;;) {
            while (p < end && (is_space(*p) || *p == ','))
                p++;
            if (p == end)
                break;
            int v = read_point(&p, end, n, why, whylen);
            if (!v)
                return 0;
            if (count == n) {
                snprintf(why, whylen, "more than %d images", n);
                return 0;
            }
            if (seen >> (v - 1) & 1u) {
                snprintf(why, whylen, "not a permutation: %d appears twice", v);
                return 0;
            }
            seen |= 1u << (v - 1);
            img[count++] = (uint8_t)(v - 1);
        }
        if (count != n) {
            snprintf(why, whylen, "%d images, expected %d", count, n);
            return 0;
        }
        return 1;
    }
    if (p < end && *p == '(') {
        for (int i = 0; i < n; i++)
            img[i] = (uint8_t)i;
        while (p < end) {
            if (*p != '(') {
                snprintf(why, whylen, "expected '(' at '%.*s'", (int)(end - p), p);
                return 0;
            }
            const char *close = memchr(p, ')', (size_t)(end - p));
            if (!close) {
                snprintf(why, whylen, "a cycle without ')'");
                return 0;
            }
            p++;
            int first = 0, last = 0;
            for (;;) {
                while (p < close && (is_space(*p) || *p == ','))
                    p++;
                if (p == close)
                    break;
                int v = read_point(&p, close, n, why, whylen);
                if (!v)
                    return 0;
                if (seen >> (v - 1) & 1u) {
                    snprintf(why, whylen, "not a permutation: point %d appears twice", v);
                    return 0;
                }
                seen |= 1u << (v - 1);
                if (last)
                    img[last - 1] = (uint8_t)(v - 1);
                else
                    first = v;
                last = v;
            }
            if (last)
                img[last - 1] = (uint8_t)(first - 1);
            p = close + 1;
            while (p < end && is_space(*p))
                p++;
        }
        return 1;
    }
    snprintf(why, whylen, "expected images [a,b,...] or cycles (a b ...)");
    return 0;
}

/* Splits text[0..len) at the commas outside brackets and adds each generator. where: the spec,
 * or FILE:LINE. */
static kedr_status parse_list(kedr_cayley_group *g, const char *where, const char *text,
                              size_t len, int *index)
{
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? text[i] : ',';
        if (c == '[' || c == '(')
            depth++;
        else if (c == ']' || c == ')')
            depth--;
        if (depth < 0 || (i == len && depth != 0))
            return kedr_fail(KEDR_ERR_INVALID, "%s: unbalanced brackets in '%.*s'", where,
                             (int)len, text);
        if (c != ',' || depth != 0)
            continue;
        char why[128];
        uint8_t img[KEDR_CAYLEY_MAX_POINTS];
        size_t b = start, e = i;
        while (b < e && is_space(text[b]))
            b++;
        while (e > b && is_space(text[e - 1]))
            e--;
        ++*index;
        if (!parse_generator(text + b, e - b, g->n, img, why, sizeof why))
            return kedr_fail(KEDR_ERR_INVALID, "%s: generator %d '%.*s': %s", where, *index,
                             (int)(e - b), text + b, why);
        if (!add_generator(g, img, 0))
            return kedr_fail(KEDR_ERR_INVALID, "%s: more than %d generators", where,
                             KEDR_CAYLEY_MAX_GENERATORS);
        start = i + 1;
    }
    return KEDR_OK;
}

/* A generator file is small: 128 generators of 32 points fit in a few kilobytes. */
#define GENERATOR_FILE_MAX ((size_t)1 << 20)
#define GENERATOR_LINE_MAX 4094

static kedr_status parse_lines(kedr_cayley_group *g, const char *path, const char *text,
                               size_t len, int *index)
{
    char where[512];
    size_t start = 0;
    for (int lineno = 1; start < len; lineno++) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len, b = start;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (end - start > GENERATOR_LINE_MAX)
            return kedr_fail(KEDR_ERR_INVALID, "%s: line longer than %d characters", where,
                             GENERATOR_LINE_MAX);
        if (memchr(text + start, 0, end - start))
            return kedr_fail(KEDR_ERR_INVALID, "%s: a NUL byte: expected a text file", where);
        while (b < end && is_space(text[b]))
            b++;
        if (b < end && text[b] != '#') /* blank lines and comments are skipped */
            KEDR_TRY(parse_list(g, where, text + start, end - start, index));
        start = end + 1;
    }
    return KEDR_OK;
}

static kedr_status parse_file(kedr_cayley_group *g, const char *path, int *index)
{
    char *text = NULL;
    size_t len = 0;
    if (kedr_file_read(path, GENERATOR_FILE_MAX, &text, &len) != KEDR_OK) {
        char why[512]; /* kedr_fail writes over kedr_last_error() */
        snprintf(why, sizeof why, "%s", kedr_last_error());
        return kedr_fail(KEDR_ERR_IO, "%s: cannot read the generator file: %s", g->spec, why);
    }
    kedr_status s = parse_lines(g, path, text, len, index);
    free(text);
    return s;
}

static kedr_status parse_perm(kedr_cayley_group *g, const char *spec)
{
    const char *args = spec[4] == ':' ? spec + 5 : spec + 4;
    const char *colon = strchr(args, ':');
    int n = 0;
    const char *p = args;
    while (p < (colon ? colon : args) && *p >= '0' && *p <= '9' && n <= KEDR_CAYLEY_MAX_POINTS)
        n = n * 10 + (*p++ - '0');
    if (!colon || p != colon || p == args || n < 1 || n > KEDR_CAYLEY_MAX_POINTS)
        return kedr_fail(KEDR_ERR_INVALID,
                         "%s: expected perm:N:GENERATORS or perm:N:@FILE with N from 1 to %d",
                         spec, KEDR_CAYLEY_MAX_POINTS);
    g->kind = KEDR_CAYLEY_PERM_SUBGROUP;
    g->n = n;
    const char *gens = colon + 1;
    int room = (int)sizeof g->spec - 16;
    snprintf(g->spec, sizeof g->spec, "perm:%d:%.*s%s", n, room, gens,
             (int)strlen(gens) > room ? "..." : "");
    int index = 0;
    if (gens[0] == '@') {
        if (!gens[1])
            return kedr_fail(KEDR_ERR_INVALID, "%s: expected a file name after '@'", spec);
        KEDR_TRY(parse_file(g, gens + 1, &index));
    } else if (gens[0]) {
        KEDR_TRY(parse_list(g, spec, gens, strlen(gens), &index));
    }
    if (index == 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: expected at least one generator", spec);
    snprintf(g->description, sizeof g->description, "subgroup of S_%d, %d generator%s given", n,
             index, index == 1 ? "" : "s");
    return group_order(g);
}

kedr_status cayley_parse_sparse(const char *spec, int inverses, kedr_cayley_group **out)
{
    kedr_cayley_group *g = calloc(1, sizeof *g);
    if (!g)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_cayley_parse: out of host memory");
    g->inverses = inverses != 0;
    kedr_status s = strncmp(spec, "cube2", 5) == 0 ? parse_cube2(g, spec) : parse_perm(g, spec);
    if (s == KEDR_OK)
        s = close_inverses(g);
    if (s != KEDR_OK) {
        free(g);
        return s;
    }
    *out = g;
    return KEDR_OK;
}
