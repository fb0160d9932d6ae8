/* The cuda version of kedr_scan_inclusive/exclusive (src/prim/scan.cu); called by scan.c. */
#ifndef PRIM_SCAN_CUDA_H
#define PRIM_SCAN_CUDA_H

#include "kedr/prim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arguments already checked; n > 0. Queued on the context's stream; waits only when total (a
 * host pointer) is wanted. */
kedr_status prim_scan_cuda(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                           void *total, int exclusive);

#ifdef __cplusplus
}
#endif
#endif
