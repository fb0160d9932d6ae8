/* The Cayley checkpoint writers' checksums, written again from docs/cayley.md (not taken from the
 * library, so that a test of the readers does not trust the code it tests): tests and the fuzz
 * harness alter a checkpoint, then make its checksum match so that the readers' field checks,
 * not the checksum, must refuse it. */
#ifndef KEDR_TEST_CAYLEY_CHECKSUM_H
#define KEDR_TEST_CAYLEY_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t ck_get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t ck_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Dense: each part (header, F, visited, frontier) in 1 MiB blocks, a block hashed FNV-1a style
 * on 64-bit words, the block hashes folded through ck_mix64. Returns 0, and leaves b alone,
 * when the header's sizes do not add up to size. */
static inline int ck_fix_dense(unsigned char *b, size_t size)
{
    if (size < 216)
        return 0;
    uint64_t level = (uint32_t)ck_get64(b + 180), B = ck_get64(b + 192);
    if (B % 8 || B > size || level > size / 8 || 208 + 8 * (level + 1) + 2 * B + 8 != size)
        return 0;
    size_t parts[4] = {208, 8 * (size_t)(level + 1), (size_t)B, (size_t)B}, at = 0;
    uint64_t sum = 0;
    for (int k = 0; k < 4; k++) {
        for (size_t lo = 0; lo < parts[k]; lo += (size_t)1 << 20) {
            size_t hi = parts[k] - lo > ((size_t)1 << 20) ? lo + ((size_t)1 << 20) : parts[k];
            uint64_t h = 0xcbf29ce484222325ull;
            for (size_t i = lo; i < hi; i += 8)
                h = (h ^ ck_get64(b + at + i)) * 0x100000001b3ull;
            sum = ck_mix64(sum ^ h);
        }
        at += parts[k];
    }
    memcpy(b + at, &sum, 8);
    return 1;
}

/* Sparse: FNV-1a over the bytes before the last eight. Returns 0 for a file under 8 bytes. */
static inline int ck_fix_sparse(unsigned char *b, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i + 8 < size; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    memcpy(b + size - 8, &h, 8);
    return 1;
}

#endif
