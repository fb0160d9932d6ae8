/* The cuda versions of the compaction primitives (src/prim/select.cu); called by select.c. */
#ifndef PRIM_SELECT_CUDA_H
#define PRIM_SELECT_CUDA_H

#include "kedr/prim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arguments already checked; n > 0. partition: 0 keeps the selected elements only, 1 writes the
 * others after them. *n_sel (host) receives the number selected; waits for it. */
kedr_status prim_select_flagged_cuda(kedr_ctx *ctx, size_t elem_size, const void *in,
                                     const uint8_t *flags, void *out, size_t n, int partition,
                                     size_t *n_sel);
kedr_status prim_select_if_cuda(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                                kedr_pred pred, int partition, size_t *n_sel);

#ifdef __cplusplus
}
#endif
#endif
