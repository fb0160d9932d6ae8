/* Checkpoints of the sparse search (sparse_checkpoint.c; the format is in docs/cayley.md). */
#ifndef CAYLEY_SPARSE_CHECKPOINT_H
#define CAYLEY_SPARSE_CHECKPOINT_H

#include "sparse.h"

/* The state of the sparse search at the end of level `level`: F(0..level) and three sorted
 * arrays of states of `words` words (one array per word): prev = L_{level-1} and cur = L_level
 * when the generating set is closed under inverses, cur and visited (every state found)
 * otherwise; an unused array has n = 0. The writer reads the arrays from the context's memory,
 * the reader gives them in host memory. */
typedef struct {
    int level, complete, closed, words;
    uint64_t *growth;
    uint64_t n[3];                          /* prev, cur, visited */
    uint64_t *a[3][CAYLEY_MAX_WORDS];
    uint64_t *block;                        /* reader: the host memory behind growth and a */
} cayley_sck;

/* Writes ck through kedr_file_begin/commit (path.tmp, fsync, rename over a regular path). */
kedr_status cayley_sck_write(kedr_ctx *ctx, const kedr_cayley_group *g, const char *path,
                             const cayley_sck *ck);
/* Reads path, made for g with ck->closed and ck->words as given, after checking that it is
 * intact and a consistent state of the search (docs/cayley.md lists the checks): every size
 * is checked against the file's size before anything is allocated. KEDR_ERR_PARSE names the
 * file and what is wrong. Free with cayley_sck_free. */
kedr_status cayley_sck_read(const kedr_cayley_group *g, const char *path, cayley_sck *ck);
void cayley_sck_free(cayley_sck *ck);

#endif
