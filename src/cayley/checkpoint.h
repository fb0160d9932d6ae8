/* Checkpoints of the dense search (checkpoint.c; the format is in docs/cayley.md). */
#ifndef CAYLEY_CHECKPOINT_H
#define CAYLEY_CHECKPOINT_H

#include "ck_file.h"
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

#endif
