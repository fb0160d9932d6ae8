/* The cuda version of kedr_reduce (src/prim/reduce.cu); called by the dispatch in reduce.c. */
#ifndef PRIM_REDUCE_CUDA_H
#define PRIM_REDUCE_CUDA_H

#include "kedr/prim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arguments already checked; n > 0. Waits for the result, which lands in host memory. */
kedr_status prim_reduce_cuda(kedr_ctx *ctx, kedr_dtype t, kedr_op op, const void *in, size_t n,
                             void *result);

#ifdef __cplusplus
}
#endif
#endif
