/* Checkpoints of the dense search: the state at a level boundary in a versioned binary file that
 * either back end can resume from (the format is described in docs/cayley.md).
 *
 * Little-endian throughout; the bitmaps are stored as bytes (bit r of the bitmap is bit r % 8 of
 * byte r / 8), which is how both back ends lay them out in memory whatever their word size.
 *
 *   offset  size  field
 *        0     8  magic "KEDRCAYL"
 *        8     4  format version (2; 1 ranked permutations from their first position, and is
 *                 read for the abelian and burnside groups only)
 *       12     4  flags: bit 0 = the search has ended (the frontier is empty)
 *       16   160  group spec, NUL-padded (the canonical spec of kedr_cayley_parse)
 *      176     4  inverses (0 or 1)
 *      180     4  level s
 *      184     8  group order
 *      192     8  bytes of one bitmap (B)
 *      200     8  zero
 *      208  8s+8  F(0..s)
 *               B  visited: the elements at distance <= s
 *               B  frontier: the elements at distance s (empty when the search has ended)
 *               8  checksum of everything before it
 *
 * The reader trusts nothing: the sizes follow from the group and the level, and are checked
 * against the file's size before anything is allocated; F(0) = 1, every F(s) > 0, the visited
 * bitmap holds sum F(s) elements (the identity among them), the frontier F(s) of them (none
 * when the search has ended), and no bit at or past the group order is set.
 *
 * The checksum splits each part (header, F, visited, frontier) into 1 MiB blocks, hashes a
 * block FNV-1a style on 64-bit words, and folds the block hashes in file order through the
 * splitmix64 finaliser; the blocks hash in parallel, and the result does not depend on the
 * number of threads. */
#include "checkpoint.h"
#include "ck_file.h"
#include "core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "checkpoint.c assumes a little-endian host"
#endif

#define CK_MAGIC "KEDRCAYL"
#define CK_VERSION 2u
#define CK_HEADER 208
#define CK_SPEC 160
#define CK_BLOCK ((size_t)1 << 20)
#define CK_CHUNK ((size_t)64 << 20) /* bytes staged between the back end and the file */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (x * 0x0101010101010101ull) >> 56;
}

kedr_status cayley_ck_version(const kedr_cayley_group *g, const char *path, uint32_t got,
                              uint32_t oldest, uint32_t current)
{
    if (got == current)
        return KEDR_OK;
    if (got < oldest || got > current)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: format version %u, this kedr reads "
                         "version %u%s", path, got, current,
                         oldest < current ? " (and older ones of abelian and burnside groups)"
                                          : "");
    if (g->kind == KEDR_CAYLEY_PERMUTATION || g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: format version %u numbers the "
                         "permutations of %s from their first position; this kedr (version %u) "
                         "numbers them from the last (docs/cayley.md, \"Which positions choose "
                         "the rank\"), so the file's bits mean other elements: run the search "
                         "again from the start", path, got, g->spec, current);
    return KEDR_OK;
}

/* Folds bytes (a multiple of 8, starting on a block boundary of its part) into *sum and adds
 * their set bits to *bits. */
void cayley_ck_sum(uint64_t *sum, uint64_t *bits, const unsigned char *p, size_t bytes)
{
    enum { GROUP = 64 }; /* blocks hashed in parallel before their hashes are folded */
    uint64_t hash[GROUP], ones = 0;
    for (size_t at = 0; at < bytes; at += GROUP * CK_BLOCK) {
        size_t left = bytes - at;
        long nblocks = (long)(left >= GROUP * CK_BLOCK ? GROUP : (left + CK_BLOCK - 1) / CK_BLOCK);
#pragma omp parallel for schedule(static) reduction(+ : ones) if (nblocks > 1)
        for (long b = 0; b < nblocks; b++) {
            size_t lo = at + (size_t)b * CK_BLOCK;
            size_t hi = bytes - lo > CK_BLOCK ? lo + CK_BLOCK : bytes;
            uint64_t h = 0xcbf29ce484222325ull;
            for (size_t i = lo; i < hi; i += 8) {
                uint64_t w;
                memcpy(&w, p + i, 8);
                h = (h ^ w) * 0x100000001b3ull;
                ones += popcount64(w);
            }
            hash[b] = h;
        }
        for (long b = 0; b < nblocks; b++)
            *sum = mix64(*sum ^ hash[b]);
    }
    *bits += ones;
}


/* Streams a bitmap from the back end into f through buf, folding it into the checksum. */
static kedr_status write_bitmap(cayley_dense *d, FILE *f, const char *path, int which,
                                unsigned char *buf, uint64_t *sum)
{
    uint64_t ones = 0;
    for (size_t off = 0; off < d->bitmap_bytes; off += CK_CHUNK) {
        size_t n = d->bitmap_bytes - off < CK_CHUNK ? d->bitmap_bytes - off : CK_CHUNK;
        KEDR_TRY(cayley_dense_download(d, which, off, buf, n));
        cayley_ck_sum(sum, &ones, buf, n);
        if (fwrite(buf, 1, n, f) != n)
            return kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot write: %s", path,
                             strerror(errno));
    }
    return KEDR_OK;
}

kedr_status cayley_checkpoint_write(cayley_dense *d, const char *path, const uint64_t *growth,
                                    int level, int complete)
{
    const kedr_cayley_group *g = d->g;
    size_t bufsize = d->bitmap_bytes < CK_CHUNK ? d->bitmap_bytes : CK_CHUNK;
    unsigned char *buf = malloc(bufsize > CK_HEADER ? bufsize : CK_HEADER);
    if (!buf)
        return kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory for a %zu-byte buffer",
                         path, bufsize);
    memset(buf, 0, CK_HEADER);
    memcpy(buf, CK_MAGIC, 8);
    put32(buf + 8, CK_VERSION);
    put32(buf + 12, complete ? 1u : 0u);
    snprintf((char *)buf + 16, CK_SPEC, "%s", g->spec);
    put32(buf + 176, g->inverses ? 1u : 0u);
    put32(buf + 180, (uint32_t)level);
    put64(buf + 184, g->order);
    put64(buf + 192, d->bitmap_bytes);
    uint64_t sum = 0, ones = 0;
    kedr_file_writer w;
    kedr_status s = cayley_ck_begin(&w, path, buf, CK_HEADER, growth, level, &sum, &ones);
    if (s != KEDR_OK) {
        free(buf);
        return s;
    }
    FILE *f = KEDR_FILE(&w);
    if (s == KEDR_OK)
        s = write_bitmap(d, f, w.tmp, 0, buf, &sum);
    if (s == KEDR_OK)
        s = write_bitmap(d, f, w.tmp, 1, buf, &sum);
    if (s == KEDR_OK) {
        put64(buf, sum);
        if (fwrite(buf, 1, 8, f) != 8)
            s = kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot write: %s", w.tmp, strerror(errno));
    }
    free(buf);
    if (s != KEDR_OK) {
        kedr_file_abort(&w);
        return s;
    }
    return kedr_file_commit(&w);
}

kedr_status cayley_ck_begin(kedr_file_writer *w, const char *path, const unsigned char *head,
                            size_t hbytes, const uint64_t *F, int level, uint64_t *sum,
                            uint64_t *ones)
{
    cayley_ck_sum(sum, ones, head, hbytes);
    cayley_ck_sum(sum, ones, (const unsigned char *)F, 8 * ((size_t)level + 1));
    KEDR_TRY(kedr_file_begin(w, path));
    FILE *f = KEDR_FILE(w);
    if (fwrite(head, 1, hbytes, f) != hbytes ||
        fwrite(F, 8, (size_t)level + 1, f) != (size_t)level + 1) {
        kedr_status s = kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot write: %s", w->tmp,
                                  strerror(errno));
        kedr_file_abort(w);
        return s;
    }
    return KEDR_OK;
}

kedr_status cayley_ck_open(const char *path, int *fd, uint64_t *size)
{
    /* without blocking, so that a FIFO is refused rather than waited on; checked on the
     * descriptor, so that what is checked is what is read */
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (*fd < 0)
        return kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return kedr_fail(KEDR_ERR_IO, "checkpoint %s: not a regular file", path);
    }
    *size = (uint64_t)st.st_size;
    return KEDR_OK;
}

kedr_status cayley_ck_read_head(int fd, const char *path, uint64_t size, void *head,
                                size_t hbytes)
{
    if (size < hbytes)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: truncated: %llu bytes, shorter than the "
                         "%zu-byte header", path, (unsigned long long)size, hbytes);
    return cayley_ck_read(fd, path, 0, head, hbytes);
}

kedr_status cayley_ck_read(int fd, const char *path, uint64_t off, void *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot read: %s", path,
                             strerror(errno));
        if (r == 0)
            return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: truncated while reading (the file "
                             "shrank)", path);
        got += (size_t)r;
    }
    return KEDR_OK;
}

/* Checks the header against d's group and the file size; *level and *complete from it. */
static kedr_status check_header(const cayley_dense *d, const char *path, const unsigned char *h,
                                uint64_t size, int *level, int *complete)
{
    const kedr_cayley_group *g = d->g;
    if (memcmp(h, CK_MAGIC, 8) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: not a kedr cayley checkpoint (no '%s' at "
                         "its start)", path, CK_MAGIC);
    KEDR_TRY(cayley_ck_version(g, path, get32(h + 8), 1, CK_VERSION));
    if (memchr(h + 16, 0, CK_SPEC) == NULL)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (the group spec is not "
                         "terminated)", path);
    if (strcmp((const char *)h + 16, g->spec) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made for group %.60s, not %s", path,
                         (const char *)h + 16, g->spec);
    if (get32(h + 176) > 1 || get32(h + 176) != (g->inverses ? 1u : 0u))
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made %s --inverses, this run is %s "
                         "them", path, get32(h + 176) ? "with" : "without",
                         g->inverses ? "with" : "without");
    if (get64(h + 184) != g->order)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (group order %llu, "
                         "expected %llu)", path, (unsigned long long)get64(h + 184),
                         (unsigned long long)g->order);
    if (get64(h + 192) != d->bitmap_bytes)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (bitmaps of %llu bytes, "
                         "expected %zu)", path, (unsigned long long)get64(h + 192),
                         d->bitmap_bytes);
    uint32_t lv = get32(h + 180), flags = get32(h + 12);
    if (flags > 1 || get64(h + 200) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (flags %u, reserved "
                         "%llu: expected 0 or 1, and 0)", path, flags,
                         (unsigned long long)get64(h + 200));
    /* every level holds an element: s < |G|, and s fits an int */
    if (lv > (uint32_t)INT32_MAX - 1 || lv >= g->order)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (level %u of a group of "
                         "order %llu)", path, lv, (unsigned long long)g->order);
    /* the bitmaps are at most 2^59 bytes (order < 2^62), so this cannot wrap */
    uint64_t fixed = CK_HEADER + 2 * (uint64_t)d->bitmap_bytes + 8;
    uint64_t expect = fixed + 8 * ((uint64_t)lv + 1);
    if (size != expect)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: %s: %llu bytes, expected %llu for "
                         "level %u", path, size < expect ? "truncated" : "trailing data",
                         (unsigned long long)size, (unsigned long long)expect, lv);
    *level = (int)lv;
    *complete = (int)flags;
    return KEDR_OK;
}

kedr_status cayley_ck_check_growth(const char *path, const uint64_t *F, int level,
                                   uint64_t order, uint64_t *total)
{
    if (F[0] != 1)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: F(0) = %llu, expected 1 "
                         "(the identity)", path, (unsigned long long)F[0]);
    uint64_t sum = 0;
    for (int s = 0; s <= level; s++) {
        if (F[s] == 0 || F[s] > order - sum)
            return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: F(%d) = %llu %s", path,
                             s, (unsigned long long)F[s],
                             F[s] ? "takes the sum of F past the group order"
                                  : "(every level up to the checkpoint's holds an element)");
        sum += F[s];
    }
    *total = sum;
    return KEDR_OK;
}

/* The bits of buf (bytes [off, off + n) of a bitmap) at or past the order: none may be set. */
static int past_order(const cayley_dense *d, size_t off, const unsigned char *buf, size_t n)
{
    uint64_t order = d->g->order, first = order / 8; /* the byte holding bit `order` */
    size_t i0 = first <= off ? 0 : first - off < n ? (size_t)(first - off) : n;
    for (size_t i = i0; i < n; i++) {
        uint64_t at = (uint64_t)(off + i);
        unsigned mask = at == first ? 0xffu << (order % 8) : 0xffu;
        if (buf[i] & mask)
            return 1;
    }
    return 0;
}

/* Streams a bitmap from the file through buf to the back end; *ones counts its set bits. The
 * frontier (which = 1) must lie within the visited bitmap, re-read from the file into vis. The
 * first thing wrong goes to problem (PROBLEM bytes), reported once the checksum has matched: a
 * damaged file is then called corrupt, a crafted one says what is wrong. */
#define PROBLEM 200
static kedr_status read_bitmap(cayley_dense *d, int fd, const char *path, int which, int level,
                               unsigned char *buf, unsigned char *vis, uint64_t *sum,
                               uint64_t *ones, char *problem)
{
    uint64_t base = CK_HEADER + 8 * ((uint64_t)level + 1);
    const char *name = which ? "frontier" : "visited";
    for (size_t off = 0; off < d->bitmap_bytes; off += CK_CHUNK) {
        size_t n = d->bitmap_bytes - off < CK_CHUNK ? d->bitmap_bytes - off : CK_CHUNK;
        KEDR_TRY(cayley_ck_read(fd, path, base + (uint64_t)which * d->bitmap_bytes + off, buf, n));
        if (!problem[0] && past_order(d, off, buf, n))
            snprintf(problem, PROBLEM, "corrupt: the %s bitmap has bits set at or past the group "
                     "order %llu", name, (unsigned long long)d->g->order);
        if (!problem[0] && !which && off == 0 && !(buf[0] & 1))
            snprintf(problem, PROBLEM, "inconsistent: the identity (rank 0) is not visited");
        if (!problem[0] && which) {
            KEDR_TRY(cayley_ck_read(fd, path, base + off, vis, n));
            for (size_t i = 0; i < n && !problem[0]; i++)
                if (buf[i] & ~vis[i])
                    snprintf(problem, PROBLEM, "inconsistent: element %llu is in the frontier "
                             "but not visited", (unsigned long long)(8 * (uint64_t)(off + i) +
                             (uint64_t)__builtin_ctz(buf[i] & ~vis[i] & 0xffu)));
        }
        cayley_ck_sum(sum, ones, buf, n);
        KEDR_TRY(cayley_dense_upload(d, which, off, buf, n, level));
    }
    return KEDR_OK;
}

/* The bitmaps against F: what the checksum cannot tell. */
static kedr_status check_counts(const char *path, const uint64_t *F, int level, int complete,
                                uint64_t total, uint64_t visited, uint64_t frontier)
{
    if (visited != total)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: %llu elements visited "
                         "where the sum of F(0..%d) is %llu", path, (unsigned long long)visited,
                         level, (unsigned long long)total);
    uint64_t want = complete ? 0 : F[level];
    if (frontier != want)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: %llu frontier elements "
                         "where %s", path, (unsigned long long)frontier,
                         complete ? "the search is marked ended (expected none)"
                                  : "F(level) says otherwise (or the ended flag is missing)");
    return KEDR_OK;
}

/* Reads the growth function and the bitmaps after the header has been checked. */
static kedr_status read_body(cayley_dense *d, int fd, const char *path, const unsigned char *head,
                             int level, int complete, uint64_t *F)
{
    size_t nF = (size_t)level + 1;
    size_t bufsize = d->bitmap_bytes < CK_CHUNK ? d->bitmap_bytes : CK_CHUNK;
    KEDR_TRY(cayley_ck_read(fd, path, CK_HEADER, F, 8 * nF));
    unsigned char *buf = malloc(2 * bufsize);
    if (!buf)
        return kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory for %zu bytes", path,
                         2 * bufsize);
    uint64_t sum = 0, ones = 0, visited = 0, frontier = 0;
    char problem[PROBLEM] = "";
    cayley_ck_sum(&sum, &ones, head, CK_HEADER);
    cayley_ck_sum(&sum, &ones, (const unsigned char *)F, 8 * nF);
    kedr_status s = read_bitmap(d, fd, path, 0, level, buf, buf + bufsize, &sum, &visited,
                                problem);
    if (s == KEDR_OK)
        s = read_bitmap(d, fd, path, 1, level, buf, buf + bufsize, &sum, &frontier, problem);
    unsigned char stored[8];
    if (s == KEDR_OK)
        s = cayley_ck_read(fd, path, CK_HEADER + 8 * nF + 2 * (uint64_t)d->bitmap_bytes, stored,
                           8);
    free(buf);
    if (s == KEDR_OK && get64(stored) != sum)
        s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt: the checksum does not match the "
                      "contents", path);
    if (s == KEDR_OK && problem[0])
        s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: %s", path, problem);
    uint64_t total = 0;
    if (s == KEDR_OK)
        s = cayley_ck_check_growth(path, F, level, d->g->order, &total);
    if (s == KEDR_OK)
        s = check_counts(path, F, level, complete, total, visited, frontier);
    return s;
}

kedr_status cayley_checkpoint_read(cayley_dense *d, const char *path, uint64_t **growth,
                                   int *level, int *complete)
{
    *growth = NULL;
    int fd = -1;
    uint64_t size = 0;
    KEDR_TRY(cayley_ck_open(path, &fd, &size));
    unsigned char head[CK_HEADER];
    kedr_status s = cayley_ck_read_head(fd, path, size, head, CK_HEADER);
    if (s == KEDR_OK)
        s = check_header(d, path, head, size, level, complete);
    /* the header matched the file's size: F takes at most the file's bytes */
    uint64_t *F = s == KEDR_OK ? malloc(8 * ((size_t)*level + 1)) : NULL;
    if (s == KEDR_OK && !F)
        s = kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory for %d levels", path,
                      *level + 1);
    if (s == KEDR_OK)
        s = read_body(d, fd, path, head, *level, *complete, F);
    close(fd);
    if (s != KEDR_OK) {
        free(F);
        return s;
    }
    *growth = F;
    return KEDR_OK;
}
