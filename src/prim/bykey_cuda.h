/* Private: the cuda back end of run-length encoding and reduce by key (bykey.cu). Arguments are
 * checked by the callers in bykey.c; n > 0 here. */
#ifndef KEDR_PRIM_BYKEY_CUDA_H
#define KEDR_PRIM_BYKEY_CUDA_H

#include "kedr/prim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* key64: keys of 8 bytes (else 4). rle: count the runs (vals_in unused, vals_out holds u32
 * counts, val_t and op ignored). */
kedr_status prim_bykey_cuda(kedr_ctx *ctx, int key64, const void *keys_in, kedr_dtype val_t,
                            const void *vals_in, size_t n, kedr_op op, void *keys_out,
                            void *vals_out, size_t *n_runs, int rle);

#ifdef __cplusplus
}
#endif
#endif
