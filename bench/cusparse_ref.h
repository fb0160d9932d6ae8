/* The cuSPARSE yardstick for `kedr bench tridiag`: batched tridiagonal solves by cuSPARSE on
 * the context's stream. Used only by the benchmarks, never by the library; all pointers are
 * device memory. Contiguous systems go to gtsv2StridedBatch (CR-PCR, no pivoting), interleaved
 * ones to gtsvInterleavedBatch with algorithm 0 (Thomas, its fastest); both overwrite the right
 * side with x, as kedr_tridiag_solve does. The temporary buffer grows on demand and is kept, so
 * that after a warm-up call no timed call allocates. cuSPARSE wants a_0 = 0 and c_{n-1} = 0
 * and int sizes: larger ones return KEDR_ERR_UNSUPPORTED. */
#ifndef KEDR_CUSPARSE_REF_H
#define KEDR_CUSPARSE_REF_H

#include "kedr/prim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cusparse_ref cusparse_ref;

kedr_status cusparse_ref_create(kedr_ctx *ctx, cusparse_ref **out);
void cusparse_ref_destroy(cusparse_ref *r);
/* Frees the temporary buffer (between benchmarks). */
void cusparse_ref_trim(cusparse_ref *r);
/* Non-periodic systems only (desc->periodic must be 0); t F32 or F64. */
kedr_status cusparse_ref_solve(cusparse_ref *r, kedr_dtype t, const kedr_tridiag_desc *desc,
                               const void *a, const void *b, const void *c, void *d);

#ifdef __cplusplus
}
#endif
#endif
