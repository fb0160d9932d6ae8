/* The CUB yardstick for `kedr bench prim`: the same operations as the kedr primitives, done by
 * CUB (the CUDA toolkit's CCCL) on the context's stream. Used only by the benchmarks, never by the
 * library. All pointers except those documented as host point to device memory.
 *
 * Each call asks CUB how much temporary storage it needs and grows one cached block when that is
 * more than it holds, so after a warm-up call no timed call allocates. Calls whose kedr
 * counterpart returns a count to the host do the same here (copy and wait), so both sides time
 * the same work. Sizes above INT_MAX return KEDR_ERR_UNSUPPORTED: CUB runs with int offsets,
 * its fastest configuration. */
#ifndef KEDR_CUB_REF_H
#define KEDR_CUB_REF_H

#include "kedr/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cub_ref cub_ref;

kedr_status cub_ref_create(kedr_ctx *ctx, cub_ref **out);
void cub_ref_destroy(cub_ref *r);
/* Frees the cached temporary storage (between benchmarks, so that the next one has the memory). */
void cub_ref_trim(cub_ref *r);

/* *sum (host) = in[0] + ... + in[n-1] modulo 2^32. */
kedr_status cub_ref_reduce_sum_u32(cub_ref *r, const uint32_t *in, size_t n, uint32_t *sum);
kedr_status cub_ref_scan_exclusive_u32(cub_ref *r, const uint32_t *in, uint32_t *out, size_t n);
/* The same over floats (kedr probe textbook's table 5.2 beside the seed's scans). */
kedr_status cub_ref_scan_exclusive_f32(cub_ref *r, const float *in, float *out, size_t n);
/* Stable selection of the in[i] < bound; *n_out (host). */
kedr_status cub_ref_select_lt_u32(cub_ref *r, const uint32_t *in, uint32_t *out, size_t n,
                                  uint32_t bound, size_t *n_out);
/* The in[i] < bound first, in order, then the others in REVERSE order (CUB's convention). */
kedr_status cub_ref_partition_lt_u32(cub_ref *r, const uint32_t *in, uint32_t *out, size_t n,
                                     uint32_t bound, size_t *n_true);
/* counts[0..bins) over bins even bins of [0, 2^32). */
kedr_status cub_ref_histogram_u32(cub_ref *r, const uint32_t *in, size_t n, int bins,
                                  uint32_t *counts);
/* Radix sorts on bits [0, end_bit). */
kedr_status cub_ref_sort_keys_u32(cub_ref *r, const uint32_t *in, uint32_t *out, size_t n,
                                  int end_bit);
kedr_status cub_ref_sort_keys_u64(cub_ref *r, const uint64_t *in, uint64_t *out, size_t n);
kedr_status cub_ref_sort_pairs_u32(cub_ref *r, const uint32_t *keys_in, uint32_t *keys_out,
                                   const uint32_t *vals_in, uint32_t *vals_out, size_t n,
                                   int end_bit);
/* Runs of equal keys: unique keys, lengths, *n_runs (host). */
kedr_status cub_ref_rle_u32(cub_ref *r, const uint32_t *in, size_t n, uint32_t *unique,
                            uint32_t *counts, size_t *n_runs);
/* Sums of vals over runs of equal keys (modulo 2^32), *n_runs (host). */
kedr_status cub_ref_reduce_by_key_u32(cub_ref *r, const uint32_t *keys_in, const uint32_t *vals_in,
                                      size_t n, uint32_t *keys_out, uint32_t *vals_out,
                                      size_t *n_runs);

#ifdef __cplusplus
}
#endif
#endif
