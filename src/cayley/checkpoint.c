/* Checkpoints of the dense search: the state at a level boundary in a versioned binary file that
 * either back end can resume from (the format is described in docs/cayley.md).
 *
 * Little-endian throughout; the bitmaps are stored as bytes (bit r of the bitmap is bit r % 8 of
 * byte r / 8), which is how both back ends lay them out in memory whatever their word size.
 *
 *   offset  size  field
 *        0     8  magic "KEDRCAYL"
 *        8     4  format version (1)
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
 * The checksum splits each part (header, F, visited, frontier) into 1 MiB blocks, hashes a
 * block FNV-1a style on 64-bit words, and folds the block hashes in file order through the
 * splitmix64 finaliser; the blocks hash in parallel, and the result does not depend on the
 * number of threads. */
#include "checkpoint.h"
#include "core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "checkpoint.c assumes a little-endian host"
#endif

#define CK_MAGIC "KEDRCAYL"
#define CK_VERSION 1u
#define CK_HEADER 208
#define CK_SPEC 160
#define CK_BLOCK ((size_t)1 << 20)
#define CK_CHUNK ((size_t)64 << 20) /* bytes staged between the back end and the file */
#define CK_MAX_LEVEL INT_MAX

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

/* Folds bytes (a multiple of 8, starting on a block boundary of its part) into *sum and adds
 * their set bits to *bits. */
static void ck_sum(uint64_t *sum, uint64_t *bits, const unsigned char *p, size_t bytes)
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

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static kedr_status write_fail(const char *path, const char *what)
{
    return kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot %s: %s", path, what, strerror(errno));
}

/* Streams a bitmap from the back end into f through buf, folding it into the checksum. */
static kedr_status write_bitmap(cayley_dense *d, FILE *f, const char *path, int which,
                                unsigned char *buf, uint64_t *sum)
{
    uint64_t ones = 0;
    for (size_t off = 0; off < d->bitmap_bytes; off += CK_CHUNK) {
        size_t n = d->bitmap_bytes - off < CK_CHUNK ? d->bitmap_bytes - off : CK_CHUNK;
        KEDR_TRY(cayley_dense_download(d, which, off, buf, n));
        ck_sum(sum, &ones, buf, n);
        if (fwrite(buf, 1, n, f) != n)
            return write_fail(path, "write the file");
    }
    return KEDR_OK;
}

/* The directory entry of a rename is durable once its directory is synced. Best effort: some
 * file systems refuse to sync a directory, and the data itself is already on disk. */
static void sync_directory(const char *path)
{
    char *dir = strdup(path);
    if (!dir)
        return;
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = 0;
    else if (slash)
        *slash = 0;
    int fd = open(slash ? dir : ".", O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

kedr_status cayley_checkpoint_write(cayley_dense *d, const char *path, const uint64_t *growth,
                                    int level, int complete)
{
    const kedr_cayley_group *g = d->g;
    size_t len = strlen(path);
    char *tmp = malloc(len + 5);
    size_t bufsize = d->bitmap_bytes < CK_CHUNK ? d->bitmap_bytes : CK_CHUNK;
    unsigned char *buf = malloc(bufsize > CK_HEADER ? bufsize : CK_HEADER);
    if (!tmp || !buf) {
        free(tmp);
        free(buf);
        return kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory for a %zu-byte buffer",
                         path, bufsize);
    }
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".tmp", 5);

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
    ck_sum(&sum, &ones, buf, CK_HEADER);
    ck_sum(&sum, &ones, (const unsigned char *)growth, 8 * ((size_t)level + 1));

    kedr_status s = KEDR_OK;
    FILE *f = fopen(tmp, "wb");
    if (!f)
        s = write_fail(tmp, "create the file");
    else if (fwrite(buf, 1, CK_HEADER, f) != CK_HEADER ||
             fwrite(growth, 8, (size_t)level + 1, f) != (size_t)level + 1)
        s = write_fail(tmp, "write the file");
    if (s == KEDR_OK)
        s = write_bitmap(d, f, tmp, 0, buf, &sum);
    if (s == KEDR_OK)
        s = write_bitmap(d, f, tmp, 1, buf, &sum);
    if (s == KEDR_OK) {
        put64(buf, sum);
        if (fwrite(buf, 1, 8, f) != 8 || fflush(f) != 0 || fsync(fileno(f)) != 0)
            s = write_fail(tmp, "write the file");
    }
    if (f && fclose(f) != 0 && s == KEDR_OK)
        s = write_fail(tmp, "close the file");
    if (s == KEDR_OK && rename(tmp, path) != 0)
        s = kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot rename %s to it: %s", path, tmp,
                      strerror(errno));
    if (s == KEDR_OK)
        sync_directory(path);
    else if (f)
        remove(tmp);
    free(tmp);
    free(buf);
    return s;
}

/* Checks the header against d's group; *level and *complete from it. */
static kedr_status check_header(const cayley_dense *d, const char *path, const unsigned char *h,
                                long long size, int *level, int *complete)
{
    const kedr_cayley_group *g = d->g;
    if (memcmp(h, CK_MAGIC, 8) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: not a kedr cayley checkpoint (no '%s' at "
                         "its start)", path, CK_MAGIC);
    if (get32(h + 8) != CK_VERSION)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: format version %u, this kedr reads version %u",
                         path, get32(h + 8), CK_VERSION);
    if (memchr(h + 16, 0, CK_SPEC) == NULL)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (the group spec is not "
                         "terminated)", path);
    if (strcmp((const char *)h + 16, g->spec) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made for group %s, not %s", path,
                         (const char *)h + 16, g->spec);
    if (get32(h + 176) != (g->inverses ? 1u : 0u))
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: made %s --inverses, this run is %s them", path,
                          get32(h + 176) ? "with" : "without", g->inverses ? "with" : "without");
    if (get64(h + 184) != g->order || get64(h + 192) != d->bitmap_bytes)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (group order %llu, expected "
                         "%llu)", path, (unsigned long long)get64(h + 184),
                         (unsigned long long)g->order);
    uint32_t lv = get32(h + 180), flags = get32(h + 12);
    if (lv >= (uint32_t)CK_MAX_LEVEL || flags > 1 || get64(h + 200) != 0)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt header (level or flags out of range)",
                         path);
    long long expect = CK_HEADER + 8 * ((long long)lv + 1) + 2 * (long long)d->bitmap_bytes + 8;
    if (size != expect)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: %s: %lld bytes, expected %lld", path,
                         size < expect ? "truncated" : "trailing data", size, expect);
    *level = (int)lv;
    *complete = (int)flags;
    return KEDR_OK;
}

static kedr_status read_fail(const char *path, FILE *f)
{
    if (f && feof(f))
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: truncated while reading", path);
    return kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot read: %s", path, strerror(errno));
}

/* Streams a bitmap from f through buf to the back end; *ones counts its set bits. */
static kedr_status read_bitmap(cayley_dense *d, FILE *f, const char *path, int which, int level,
                               unsigned char *buf, uint64_t *sum, uint64_t *ones)
{
    for (size_t off = 0; off < d->bitmap_bytes; off += CK_CHUNK) {
        size_t n = d->bitmap_bytes - off < CK_CHUNK ? d->bitmap_bytes - off : CK_CHUNK;
        if (fread(buf, 1, n, f) != n)
            return read_fail(path, f);
        ck_sum(sum, ones, buf, n);
        KEDR_TRY(cayley_dense_upload(d, which, off, buf, n, level));
    }
    return KEDR_OK;
}

/* What the checksum cannot tell: that the contents are a consistent state of the search. */
static kedr_status check_contents(const cayley_dense *d, const char *path, const uint64_t *F,
                                  int level, int complete, uint64_t visited, uint64_t frontier)
{
    uint64_t total = 0;
    int ok = F[0] == 1;
    for (int s = 0; ok && s <= level; s++) {
        ok = F[s] > 0 && F[s] <= d->g->order - total;
        total += F[s];
    }
    if (!ok)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: F(s) is not a growth "
                         "function of %s", path, d->g->spec);
    uint64_t want = complete ? 0 : F[level];
    if (visited != total || frontier != want)
        return kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: inconsistent: %llu visited and %llu "
                         "frontier elements where F(s) says %llu and %llu", path,
                         (unsigned long long)visited, (unsigned long long)frontier,
                         (unsigned long long)total, (unsigned long long)want);
    return KEDR_OK;
}

kedr_status cayley_checkpoint_read(cayley_dense *d, const char *path, uint64_t **growth,
                                   int *level, int *complete)
{
    *growth = NULL;
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        kedr_status s = kedr_fail(KEDR_ERR_IO, "checkpoint %s: cannot open: %s", path,
                                  strerror(errno));
        if (f)
            fclose(f);
        return s;
    }
    unsigned char head[CK_HEADER];
    kedr_status s = KEDR_OK;
    if ((long long)st.st_size < CK_HEADER) {
        s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: truncated: %lld bytes, shorter than the "
                      "%d-byte header", path, (long long)st.st_size, CK_HEADER);
    } else if (fread(head, 1, CK_HEADER, f) != CK_HEADER) {
        s = read_fail(path, f);
    } else {
        s = check_header(d, path, head, (long long)st.st_size, level, complete);
    }
    size_t nF = (size_t)*level + 1;
    size_t bufsize = d->bitmap_bytes < CK_CHUNK ? d->bitmap_bytes : CK_CHUNK;
    uint64_t *F = NULL;
    unsigned char *buf = NULL;
    if (s == KEDR_OK) {
        F = malloc(8 * nF);
        buf = malloc(bufsize);
        if (!F || !buf)
            s = kedr_fail(KEDR_ERR_NOMEM, "checkpoint %s: out of host memory", path);
    }
    uint64_t sum = 0, ones = 0, visited = 0, frontier = 0;
    if (s == KEDR_OK && fread(F, 8, nF, f) != nF)
        s = read_fail(path, f);
    if (s == KEDR_OK) {
        ck_sum(&sum, &ones, head, CK_HEADER);
        ck_sum(&sum, &ones, (const unsigned char *)F, 8 * nF);
        s = read_bitmap(d, f, path, 0, *level, buf, &sum, &visited);
    }
    if (s == KEDR_OK)
        s = read_bitmap(d, f, path, 1, *level, buf, &sum, &frontier);
    unsigned char stored[8];
    if (s == KEDR_OK && fread(stored, 1, 8, f) != 8)
        s = read_fail(path, f);
    if (s == KEDR_OK && get64(stored) != sum)
        s = kedr_fail(KEDR_ERR_PARSE, "checkpoint %s: corrupt: the checksum does not match the "
                      "contents", path);
    if (s == KEDR_OK)
        s = check_contents(d, path, F, *level, *complete, visited, frontier);
    fclose(f);
    free(buf);
    if (s != KEDR_OK) {
        free(F);
        return s;
    }
    *growth = F;
    return KEDR_OK;
}
