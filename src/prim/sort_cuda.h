/* Private: the cuda back end of the radix sort and the counting sort (sort.cu). Arguments are
 * checked by the callers in sort.c; n > 0 and nkeys > 0 here. */
#ifndef KEDR_PRIM_SORT_CUDA_H
#define KEDR_PRIM_SORT_CUDA_H

#include "kedr/prim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* vsize 0 sorts keys alone; end_bit is resolved (never 0 for "whole key"). */
kedr_status prim_sort_cuda(kedr_ctx *ctx, kedr_dtype t, const void *keys_in, void *keys_out,
                           const void *vals_in, void *vals_out, size_t vsize, size_t n,
                           int begin_bit, int end_bit);
/* work NULL: memory from the context's scratch cache; else the caller's 4 bytes per item (work)
 * and prim_counting_sort_scratch_cuda(n, nkeys) bytes (scratch), and the passes after the first
 * read the keys through the item indices. */
kedr_status prim_counting_sort_cuda(kedr_ctx *ctx, const uint32_t *keys, size_t n, uint32_t nkeys,
                                    uint32_t *perm, uint32_t *starts, uint32_t *counts,
                                    size_t *n_kept, void *work, void *scratch);
size_t prim_counting_sort_scratch_cuda(size_t n, uint32_t nkeys);

#ifdef __cplusplus
}
#endif
#endif
