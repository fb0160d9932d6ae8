/* Checkpoints of the dense search (checkpoint.c; the format is in docs/cayley.md), and the
 * file reading both checkpoint readers share. */
#ifndef CAYLEY_CHECKPOINT_H
#define CAYLEY_CHECKPOINT_H

#include "dense.h"

/* Writes path through kedr_file_begin/commit (path.tmp, fsync, rename over a regular path):
 * F(0..level) from growth, and the visited and frontier bitmaps of d. complete: the search has
 * ended (frontier is empty). */
kedr_status cayley_checkpoint_write(cayley_dense *d, const char *path, const uint64_t *growth,
                                    int level, int complete);

/* Reads path into the visited and frontier bitmaps of d after checking that it is intact,
 * made for d's group and a consistent state of the search (docs/cayley.md lists the checks);
 * *growth (malloc'd) receives F(0..*level), and *complete whether the search had ended.
 * KEDR_ERR_PARSE names the file and what is wrong. */
kedr_status cayley_checkpoint_read(cayley_dense *d, const char *path, uint64_t **growth,
                                   int *level, int *complete);

/* Opens path for reading when it is a regular file (a FIFO or a device is refused, without
 * waiting on it); *size is its size. Close *fd when done. */
kedr_status cayley_ck_open(const char *path, int *fd, uint64_t *size);
/* Reads bytes [off, off + n) of fd: KEDR_ERR_PARSE "truncated" when the file ends first. */
kedr_status cayley_ck_read(int fd, const char *path, uint64_t off, void *buf, size_t n);
/* F(0..level) must be a growth function of a group of that order: F(0) = 1, each F(s) > 0,
 * their sum (*total) at most the order, checked without overflow. */
kedr_status cayley_ck_check_growth(const char *path, const uint64_t *F, int level,
                                   uint64_t order, uint64_t *total);

#endif
