/* Checkpoints of the sparse search: the layers the next level needs, at a level boundary, in a
 * versioned binary file that either back end can resume from (format in docs/cayley.md).
 *
 *   offset  size  field (little-endian)
 *        0     8  magic "KEDRCKS1"
 *        8    16  version (3; 2 and 1 numbered the permutations of the ranked families from
 *                 their first position and are read for the other groups only; 1 had
 *                 one-word states and 0 for words), inverses, closed (the generating set is
 *                 closed under inverses), complete (the search has ended)
 *       24   160  group spec, NUL-padded
 *      184     8  level s, state words W (1 to 3)
 *      192    32  group order, then the state counts of prev, cur and visited
 *      224  8s+8  F(0..s)
 *                 prev, cur, visited: W arrays of 8-byte words each (word 0 first), sorted
 *               8  FNV-1a (64-bit, bytewise) of everything before it
 * prev = L(s-1) and cur = L(s) when the set is closed under inverses (visited empty); else
 * cur = L(s) and visited = every state found (prev empty).
 *
 * The reader trusts nothing: the size the header implies, computed without overflow, must be
 * the file's size before anything is allocated; then the checksum, then the contents (a
 * growth function with F(0) = 1, layers of F(s-1) and F(s) states or a visited set of sum F,
 * every state an element of the group's kind, every array strictly sorted, the layers
 * disjoint or the current one visited, the identity where it belongs). That the search had
 * ended (complete) is confirmed by the search itself, which expands the last layer again. */
#include "sparse_checkpoint.h"
#include "ck_file.h"
#include "core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sparse_checkpoint.c assumes a little-endian host"
#endif

#define SCK_MAGIC "KEDRCKS1"
#define SCK_VERSION 3u
#define SCK_CHUNK ((size_t)1 << 20) /* states per transfer */

typedef struct {
    char magic[8];
    uint32_t version, inverses, closed, complete;
    char spec[160];
    int32_t level, words; /* words: 0 in version 1 (one word) */
    uint64_t order, n[3]; /* n: prev, cur, visited */
} sck_header;
_Static_assert(sizeof(sck_header) == 224, "the header is 224 bytes without padding");

static const char *const layer_name[3] = {"previous layer", "current layer", "visited set"};

static int sck_put(FILE *f, uint64_t *h, const void *p, size_t len)
{
    *h = kedr_fnv1a(*h, p, len);
    return fwrite(p, 1, len, f) == len;
}

/* Streams the arrays of ck from the context's memory into f through buf. */
static kedr_status put_arrays(kedr_ctx *ctx, FILE *f, const char *tmp, const cayley_sck *ck,
                              uint64_t *buf, uint64_t *hash)
{
    for (int a = 0; a < 3; a++)
        for (int w = 0; w < ck->words; w++)
            for (uint64_t i = 0; i < ck->n[a]; i += SCK_CHUNK) {
                size_t k = ck->n[a] - i < SCK_CHUNK ? (size_t)(ck->n[a] - i) : SCK_CHUNK;
                KEDR_TRY(kedr_download(ctx, buf, ck->a[a][w] + i, k * 8));
                if (!sck_put(f, hash, buf, k * 8))
                    return kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot write: %s", tmp,
                                     strerror(errno));
            }
    return KEDR_OK;
}

kedr_status cayley_sck_write(kedr_ctx *ctx, const kedr_cayley_group *g, const char *path,
                             const cayley_sck *ck)
{
    sck_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SCK_MAGIC, 8);
    h.version = SCK_VERSION;
    h.inverses = (uint32_t)g->inverses;
    h.closed = (uint32_t)ck->closed;
    h.complete = (uint32_t)ck->complete;
    snprintf(h.spec, sizeof h.spec, "%s", g->spec);
    h.level = ck->level;
    h.words = ck->words;
    h.order = g->order;
    memcpy(h.n, ck->n, sizeof h.n);
    uint64_t *buf = malloc(SCK_CHUNK * 8);
    if (!buf)
        return kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory for %zu bytes", path,
                         SCK_CHUNK * 8);
    kedr_file_writer w;
    kedr_status s = kedr_file_begin(&w, path);
    if (s != KEDR_OK) {
        free(buf);
        return s;
    }
    FILE *f = KEDR_FILE(&w);
    uint64_t hash = KEDR_FNV_START;
    if (!sck_put(f, &hash, &h, sizeof h) ||
        !sck_put(f, &hash, ck->growth, ((size_t)ck->level + 1) * 8))
        s = kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot write: %s", w.tmp, strerror(errno));
    if (s == KEDR_OK)
        s = put_arrays(ctx, f, w.tmp, ck, buf, &hash);
    if (s == KEDR_OK && fwrite(&hash, 8, 1, f) != 1)
        s = kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot write: %s", w.tmp, strerror(errno));
    free(buf);
    if (s != KEDR_OK) {
        kedr_file_abort(&w);
        return s;
    }
    return kedr_file_commit(&w);
}

/* ---- reading ---- */

/* The header against g and what the search expects, and the size it implies against the
 * file's (computed without overflow). */
static kedr_status check_header(const kedr_cayley_group *g, const char *path, const sck_header *h,
                                const cayley_sck *ck, uint64_t size)
{
    if (memcmp(h->magic, SCK_MAGIC, 8) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: not a sparse-mode checkpoint of kedr "
                         "cayley", path);
    if (h->version < 1 || h->version > SCK_VERSION)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: version %u; this kedr reads versions 1 "
                         "to %u", path, h->version, SCK_VERSION);
    KEDR_TRY(cayley_ck_version(g, path, h->version, 1, SCK_VERSION));
    int terminated = memchr(h->spec, 0, sizeof h->spec) != NULL;
    if (!terminated || strcmp(h->spec, g->spec) != 0 || h->order != g->order)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made for group %.60s, not %s", path,
                         terminated ? h->spec : "(an unterminated spec)", g->spec);
    if (h->inverses != (uint32_t)g->inverses)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made %s --inverses, this run is %s them",
                         path, h->inverses ? "with" : "without", g->inverses ? "with" : "without");
    if (h->closed != (uint32_t)ck->closed)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (closed = %u; this "
                         "generating set is %sclosed under inverses)", path, h->closed,
                         ck->closed ? "" : "not ");
    if ((h->version == 1 ? h->words != 0 : h->words != ck->words) ||
        (h->version == 1 && ck->words != 1))
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: states of %d words, this group's have %d",
                         path, h->version == 1 ? 1 : (int)h->words, ck->words);
    if (h->complete > 1)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (complete = %u, expected "
                         "0 or 1)", path, h->complete);
    if (h->level < 0 || (uint64_t)h->level >= g->order)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (level %d of a group of "
                         "order %llu)", path, (int)h->level, (unsigned long long)g->order);
    for (int a = 0; a < 3; a++)
        if (h->n[a] > g->order)
            return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (%llu states in the "
                             "%s, more than the group order %llu)", path,
                             (unsigned long long)h->n[a], layer_name[a],
                             (unsigned long long)g->order);
    if (h->n[1] == 0 || (ck->closed ? h->n[2] != 0 : h->n[0] != 0))
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (%llu, %llu and %llu "
                         "states: expected a current layer and %s)", path,
                         (unsigned long long)h->n[0], (unsigned long long)h->n[1],
                         (unsigned long long)h->n[2],
                         ck->closed ? "no visited set" : "no previous layer");
    uint64_t states = 0, bytes = 0, expect = 0;
    int wrap = __builtin_add_overflow(h->n[0], h->n[1], &states) ||
               __builtin_add_overflow(states, h->n[2], &states) ||
               __builtin_mul_overflow(states, 8 * (uint64_t)ck->words, &bytes) ||
               __builtin_add_overflow(bytes, 8 * ((uint64_t)h->level + 1), &expect) ||
               __builtin_add_overflow(expect, sizeof *h + 8, &expect);
    if (wrap || size != expect)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: %s: %llu bytes, where the header (level "
                         "%d, %llu + %llu + %llu states of %d words) needs %s%llu", path,
                         wrap || size < expect ? "truncated" : "trailing data",
                         (unsigned long long)size, (int)h->level, (unsigned long long)h->n[0],
                         (unsigned long long)h->n[1], (unsigned long long)h->n[2], ck->words,
                         wrap ? "more than 2^64 bytes, not " : "", (unsigned long long)expect);
    return KEDR_OK;
}

/* Why the state x (ck->words words) is not an element of g's kind, or NULL. */
static const char *state_problem(const kedr_cayley_group *g, int words, const uint64_t *x)
{
    uint32_t seen = 0;
    if (cayley_sparse_based(g)) {
        for (int w = 0; w < words; w++) {
            int fields = cayley_word_fields(g, w);
            if (x[w] >> (CAYLEY_FIELD_BITS * fields))
                return "bits set past its base images";
            for (int j = 0; j < fields; j++) {
                uint32_t v = (uint32_t)(x[w] >> (CAYLEY_FIELD_BITS * j)) & 31u;
                if ((int)v >= g->n || (seen >> v & 1u))
                    return (int)v >= g->n ? "a base image out of range" : "a repeated base image";
                seen |= 1u << v;
            }
        }
        return NULL;
    }
    if (g->kind == KEDR_CAYLEY_PERM_SUBGROUP || g->kind == KEDR_CAYLEY_CUBE2) {
        int cube = g->kind == KEDR_CAYLEY_CUBE2, n = cube ? CAYLEY_CUBE2_CORNERS : g->n;
        int used = cube ? 2 * n : n;
        if (used < 16 && x[0] >> (4 * used))
            return "bits set past its last entry";
        for (int i = 0; i < n; i++) {
            uint32_t v = cayley_nibble(x[0], i);
            if ((int)v >= n || (seen >> v & 1u))
                return (int)v >= n ? "a point out of range" : "a repeated point";
            seen |= 1u << v;
        }
        uint32_t twist = 0;
        for (int i = 0; cube && i < n; i++) {
            uint32_t t = cayley_nibble(x[0], n + i);
            if (t > 2)
                return "a corner twist above 2";
            twist += t;
        }
        return twist % 3 ? "corner twists whose sum is not a multiple of 3" : NULL;
    }
    return x[0] < g->order ? NULL : "a rank not below the group order";
}

/* State i of array a of ck into x. */
static void state_at(const cayley_sck *ck, int a, uint64_t i, uint64_t *x)
{
    for (int w = 0; w < CAYLEY_MAX_WORDS; w++)
        x[w] = w < ck->words ? ck->a[a][w][i] : 0;
}

/* Every state of the arrays an element, each array strictly sorted. */
static kedr_status check_states(const kedr_cayley_group *g, const char *path, const cayley_sck *ck)
{
    for (int a = 0; a < 3; a++)
        for (uint64_t i = 0; i < ck->n[a]; i++) {
            uint64_t x[CAYLEY_MAX_WORDS];
            state_at(ck, a, i, x);
            const char *why = state_problem(g, ck->words, x);
            if (why)
                return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt: state %llu of the %s "
                                 "(0x%llx...) is not an element of %s: %s", path,
                                 (unsigned long long)i, layer_name[a],
                                 (unsigned long long)x[ck->words - 1], g->spec, why);
            if (i > 0 && cayley_wide_cmp((const uint64_t *const *)ck->a[a], i - 1, x,
                                         ck->words) >= 0)
                return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt: the %s is not strictly "
                                 "sorted at state %llu", path, layer_name[a],
                                 (unsigned long long)i);
        }
    return KEDR_OK;
}

/* How many states of sorted array a are in sorted array b (a merge walk). */
static uint64_t common_states(const cayley_sck *ck, int a, int b)
{
    uint64_t i = 0, j = 0, both = 0;
    while (i < ck->n[a] && j < ck->n[b]) {
        uint64_t x[CAYLEY_MAX_WORDS];
        state_at(ck, a, i, x);
        int c = cayley_wide_cmp((const uint64_t *const *)ck->a[b], j, x, ck->words);
        both += c == 0;
        i += c >= 0;
        j += c <= 0;
    }
    return both;
}

/* Word w of the identity's state. */
static uint64_t identity_word(const kedr_cayley_group *g, int w)
{
    return cayley_sparse_based(g) ? cayley_based_identity(g, w) : cayley_sparse_identity(g);
}

/* Whether state 0 of array a is the identity. */
static int starts_with_identity(const kedr_cayley_group *g, const cayley_sck *ck, int a)
{
    for (int w = 0; w < ck->words; w++)
        if (ck->n[a] == 0 || ck->a[a][w][0] != identity_word(g, w))
            return 0;
    return 1;
}

/* The identity where it belongs: L_0 at level 0, L_{s-1} at level 1 (closed sets), in the
 * visited set (other sets). */
static kedr_status check_identity(const kedr_cayley_group *g, const char *path,
                                  const cayley_sck *ck)
{
    int s = ck->level;
    if (s == 0 || (ck->closed && s == 1)) {
        if (starts_with_identity(g, ck, s == 0 ? 1 : 0))
            return KEDR_OK;
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: level 0 is not the "
                         "identity alone", path);
    }
    if (ck->closed)
        return KEDR_OK;
    uint64_t id[CAYLEY_MAX_WORDS] = {0, 0, 0};
    for (int w = 0; w < ck->words; w++)
        id[w] = identity_word(g, w);
    const uint64_t *const *v = (const uint64_t *const *)ck->a[2];
    uint64_t i = cayley_wide_rank_in(v, ck->n[2], id, ck->words);
    if (i < ck->n[2] && cayley_wide_cmp(v, i, id, ck->words) == 0)
        return KEDR_OK;
    return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: the identity is not in the "
                     "visited set", path);
}

/* F against the layers, and the layers against each other. */
static kedr_status check_layers(const kedr_cayley_group *g, const char *path, const cayley_sck *ck)
{
    const uint64_t *F = ck->growth;
    int s = ck->level;
    uint64_t total = 0;
    KEDR_TRY(cayley_ck_check_growth(path, F, s, g->order, &total));
    uint64_t want[3] = {ck->closed && s > 0 ? F[s - 1] : 0, F[s], ck->closed ? 0 : total};
    for (int a = 0; a < 3; a++)
        if (ck->n[a] != want[a])
            return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: %llu states in the %s "
                             "where F(0..%d) says %llu", path, (unsigned long long)ck->n[a],
                             layer_name[a], s, (unsigned long long)want[a]);
    KEDR_TRY(check_states(g, path, ck));
    if (ck->closed ? common_states(ck, 0, 1) != 0 : common_states(ck, 1, 2) != ck->n[1])
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: %s", path,
                         ck->closed ? "a state is in both the previous and the current layer"
                                    : "a state of the current layer is not in the visited set");
    return check_identity(g, path, ck);
}

void cayley_sck_free(cayley_sck *ck)
{
    free(ck->growth);
    free(ck->block);
    ck->growth = ck->block = NULL;
}

/* The body after the header: F and the arrays, then the checksum. */
static kedr_status read_body(const char *path, int fd, const sck_header *h, uint64_t size,
                             cayley_sck *ck)
{
    size_t body = (size_t)(size - sizeof *h - 8), nF = (size_t)h->level + 1;
    /* the header matched the file's size: these take at most the file's bytes */
    ck->block = malloc(body);
    ck->growth = malloc(8 * nF);
    if (!ck->block || !ck->growth)
        return kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory for %zu bytes", path,
                         body);
    uint64_t stored = 0;
    KEDR_TRY(cayley_ck_read(fd, path, sizeof *h, ck->block, body));
    KEDR_TRY(cayley_ck_read(fd, path, sizeof *h + body, &stored, 8));
    uint64_t hash = kedr_fnv1a(kedr_fnv1a(KEDR_FNV_START, h, sizeof *h), ck->block, body);
    if (stored != hash)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: the checksum does not match (corrupt "
                         "file)", path);
    memcpy(ck->growth, ck->block, 8 * nF);
    uint64_t *p = ck->block + nF;
    for (int a = 0; a < 3; a++) {
        ck->n[a] = h->n[a];
        for (int w = 0; w < ck->words; w++) {
            ck->a[a][w] = p;
            p += ck->n[a];
        }
    }
    ck->level = h->level;
    ck->complete = (int)h->complete;
    return KEDR_OK;
}

kedr_status cayley_sck_read(const kedr_cayley_group *g, const char *path, cayley_sck *ck)
{
    ck->growth = ck->block = NULL;
    int fd = -1;
    uint64_t size = 0;
    KEDR_TRY(cayley_ck_open(path, &fd, &size));
    sck_header h;
    kedr_status s = cayley_ck_read_head(fd, path, size, &h, sizeof h);
    if (s == KEDR_OK)
        s = check_header(g, path, &h, ck, size);
    if (s == KEDR_OK)
        s = read_body(path, fd, &h, size, ck);
    close(fd);
    if (s == KEDR_OK)
        s = check_layers(g, path, ck);
    if (s != KEDR_OK)
        cayley_sck_free(ck);
    return s;
}
