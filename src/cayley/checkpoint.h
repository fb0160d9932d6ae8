/* Checkpoints of the dense search (checkpoint.c; the format is in docs/cayley.md). */
#ifndef CAYLEY_CHECKPOINT_H
#define CAYLEY_CHECKPOINT_H

#include "dense.h"

/* Writes path atomically (path.tmp, flush, fsync, rename): F(0..level) from growth, and the
 * visited and frontier bitmaps of d. complete: the search has ended (frontier is empty). */
kedr_status cayley_checkpoint_write(cayley_dense *d, const char *path, const uint64_t *growth,
                                    int level, int complete);

/* Reads path into the visited and frontier bitmaps of d after checking that it is intact and
 * made for d's group; *growth (malloc'd) receives F(0..*level), and *complete whether the
 * search had ended. */
kedr_status cayley_checkpoint_read(cayley_dense *d, const char *path, uint64_t **growth,
                                   int *level, int *complete);

#endif
