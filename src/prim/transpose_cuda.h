/* Private to prim: the cuda version of kedr_transpose. */
#ifndef PRIM_TRANSPOSE_CUDA_H
#define PRIM_TRANSPOSE_CUDA_H

#include "kedr/prim.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef KEDR_HAVE_CUDA
/* out (cols x rows) = transpose of in (rows x cols) for elements of elem_size 4 or 8 bytes;
 * rows and cols are at least 1, arguments checked by the caller. */
kedr_status prim_transpose_cuda(kedr_ctx *ctx, size_t elem_size, const void *in, void *out,
                                size_t rows, size_t cols);
#endif

#ifdef __cplusplus
}
#endif
#endif
