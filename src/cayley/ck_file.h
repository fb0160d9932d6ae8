/* The file reading both checkpoint readers (checkpoint.c, sparse_checkpoint.c) share; defined
 * in checkpoint.c. */
#ifndef CAYLEY_CK_FILE_H
#define CAYLEY_CK_FILE_H

#include "kedr/cayley.h"

#include <string.h>

/* Begins a checkpoint file at path (kedr_file_begin): the header (hbytes of head) and F(0..level)
 * written and folded into *sum and *ones. On failure nothing is left behind (the writer is
 * aborted); on success the caller writes the rest and commits or aborts w. */
kedr_status cayley_ck_begin(kedr_file_writer *w, const char *path, const unsigned char *head,
                            size_t hbytes, const uint64_t *F, int level, uint64_t *sum,
                            uint64_t *ones);
/* Opens path for reading when it is a regular file (a FIFO or a device is refused, without
 * waiting on it); *size is its size. Close *fd when done. */
kedr_status cayley_ck_open(const char *path, int *fd, uint64_t *size);
/* Reads bytes [off, off + n) of fd: KEDR_ERR_PARSE "truncated" when the file ends first. */
kedr_status cayley_ck_read(int fd, const char *path, uint64_t off, void *buf, size_t n);
/* The header: the first hbytes of fd (a file of size bytes), refused as truncated when shorter. */
kedr_status cayley_ck_read_head(int fd, const char *path, uint64_t size, void *head,
                                size_t hbytes);
/* F(0..level) must be a growth function of a group of that order: F(0) = 1, each F(s) > 0,
 * their sum (*total) at most the order, checked without overflow. */
kedr_status cayley_ck_check_growth(const char *path, const uint64_t *F, int level,
                                   uint64_t order, uint64_t *total);

/* The format version `got` of checkpoint path against a reader of versions oldest..current:
 * `current` is the first with permutations ranked from the last position (cayley_elem.h), so
 * an older file of a permutation family (pancake, burnt-pancake, bubble, star, transpositions,
 * lrx, and their sparse-mode searches) is refused, naming what changed; the abelian and
 * burnside groups, whose ranks did not change, read any of the versions. */
kedr_status cayley_ck_version(const kedr_cayley_group *g, const char *path, uint32_t got,
                              uint32_t oldest, uint32_t current);

/* Folds bytes (a multiple of 8, starting on a 1 MiB block boundary of its part) into the
 * checksum *sum, and adds their set bits to *bits (the format is in checkpoint.c). */
void cayley_ck_sum(uint64_t *sum, uint64_t *bits, const unsigned char *p, size_t bytes);

/* Little-endian fields of a header, whatever their alignment. */
static inline void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

#endif
