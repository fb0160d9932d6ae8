/* kedr prim: parallel primitives. Every pointer argument named in/out/keys/values/flags/perm/
 * counts lives in the context's memory (host memory for cpu, device memory for cuda); results
 * described as "host" are written to host memory. Functions return KEDR_OK or a status whose
 * message (kedr_last_error) names the offending argument. */
#ifndef KEDR_PRIM_H
#define KEDR_PRIM_H

#include "kedr/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reduce ------------------------------------------------------------------------------- */

/* *result (host, one element of type t) = op over in[0..n). Types: all. For n = 0 the result is
 * the identity: 0 for sum, the type's largest value for min, its smallest for max (for floats
 * +inf and -inf). Float sums accumulate in double and are deterministic run to run on each back
 * end: the association order depends only on n, not on timing or thread count. Float min and max
 * ignore NaNs (all NaN gives the identity); -0.0 and +0.0 compare equal, so a zero result may
 * carry either sign. */
kedr_status kedr_reduce(kedr_ctx *ctx, kedr_dtype t, kedr_op op, const void *in, size_t n,
                        void *result);

/* ---- scan --------------------------------------------------------------------------------- */

/* Prefix sums of in[0..n) into out[0..n); out may equal in. Types: U32, U64, I32, F32, F64
 * (integers wrap modulo 2^bits). inclusive: out[i] = in[0] + ... + in[i];
 * exclusive: out[0] = 0, out[i] = in[0] + ... + in[i-1]. If total (host) is not NULL it receives
 * the sum of all n elements. */
kedr_status kedr_scan_inclusive(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                                void *total);
kedr_status kedr_scan_exclusive(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                                void *total);

/* ---- compaction --------------------------------------------------------------------------- */

typedef union {
    uint32_t u32;
    uint64_t u64;
    int32_t i32;
    float f32;
    double f64;
} kedr_value;

typedef enum {
    KEDR_CMP_LT, /* x <  a */
    KEDR_CMP_LE, /* x <= a */
    KEDR_CMP_GT, /* x >  a */
    KEDR_CMP_GE, /* x >= a */
    KEDR_CMP_EQ, /* x == a */
    KEDR_CMP_NE, /* x != a */
    KEDR_CMP_IN  /* a <= x < b */
} kedr_cmp;

/* A predicate on elements of the type given beside it; a and b are read as that type. */
typedef struct {
    kedr_cmp cmp;
    kedr_value a, b;
} kedr_pred;

/* Stable selection: copies the elements in[i] with flags[i] != 0, in order, to out[0..*n_out).
 * elem_size: 1, 2, 4, 8 or 16 bytes. n_out is a host pointer. out must not overlap in. */
kedr_status kedr_select_flagged(kedr_ctx *ctx, size_t elem_size, const void *in,
                                const uint8_t *flags, void *out, size_t n, size_t *n_out);
/* Stable selection of the elements for which pred holds. */
kedr_status kedr_select_if(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                           kedr_pred pred, size_t *n_out);
/* Stable partition: the flagged (or pred-true) elements in order, then the others in order.
 * *n_true (host) receives the number of the former. out must not overlap in. */
kedr_status kedr_partition_flagged(kedr_ctx *ctx, size_t elem_size, const void *in,
                                   const uint8_t *flags, void *out, size_t n, size_t *n_true);
kedr_status kedr_partition_if(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                              kedr_pred pred, size_t *n_true);

/* ---- histogram ---------------------------------------------------------------------------- */

/* counts[0..bins) = number of in[i] in each of bins even bins over [lo, hi); values outside
 * [lo, hi) and NaNs are not counted. Types: U32, I32, F32, F64. For integer types lo and hi must
 * be integers and bin = (x - lo) * bins / (hi - lo) in exact integer arithmetic; for floats
 * bin = floor((x - lo) * (bins / (hi - lo))) in double, clamped to bins - 1, the same on every
 * back end. counts is overwritten. */
kedr_status kedr_histogram_even(kedr_ctx *ctx, kedr_dtype t, const void *in, size_t n, double lo,
                                double hi, uint32_t bins, uint32_t *counts);

/* ---- radix sort --------------------------------------------------------------------------- */

/* Stable ascending LSD radix sort. Key types: U32, U64, I32, F32, F64 (floats by bit flipping,
 * so negatives sort before positives; -0.0 sorts before +0.0; NaNs with the sign bit clear go
 * last). Only bits [begin_bit, end_bit) of the (order-preserving) key are compared; end_bit = 0
 * means the whole key. keys_in is left unchanged; keys_out must not overlap it. */
kedr_status kedr_sort_keys(kedr_ctx *ctx, kedr_dtype t, const void *keys_in, void *keys_out,
                           size_t n, int begin_bit, int end_bit);
/* The same, carrying values of val_size bytes (4 or 8) along with the keys. */
kedr_status kedr_sort_pairs(kedr_ctx *ctx, kedr_dtype t, const void *keys_in, void *keys_out,
                            const void *vals_in, void *vals_out, size_t val_size, size_t n,
                            int begin_bit, int end_bit);

/* ---- by key ------------------------------------------------------------------------------- */

/* Run-length encoding of consecutive equal keys (types U32, U64, I32): unique_out[k] the key of
 * run k, counts_out[k] its length (modulo 2^32); *n_runs (host) the number of runs. */
kedr_status kedr_run_length_encode(kedr_ctx *ctx, kedr_dtype t, const void *in, size_t n,
                                   void *unique_out, uint32_t *counts_out, size_t *n_runs);
/* For each run of consecutive equal keys (key types U32, U64, I32): keys_out[k] the key,
 * vals_out[k] = op over the run's values (value types: all). *n_runs (host). Integer sums wrap;
 * float sums accumulate in double and are deterministic run to run on each back end (the
 * association depends only on n); back ends agree within that rounding. Min and max are exact
 * and keep the first of equal values (-0.0 vs +0.0). */
kedr_status kedr_reduce_by_key(kedr_ctx *ctx, kedr_dtype key_t, const void *keys_in,
                               kedr_dtype val_t, const void *vals_in, size_t n, kedr_op op,
                               void *keys_out, void *vals_out, size_t *n_runs);

/* Key that kedr_counting_sort drops (any key >= nkeys is dropped). */
#define KEDR_KEY_DROP UINT32_MAX

/* Counting sort by a small key (keys[i] < nkeys), n < 2^32: the stable permutation that groups
 * items by key. perm[j] (j < *n_kept) is the index of the j-th item in key order; starts[k] and
 * counts[k] (k < nkeys) give each key's range in perm. Items whose key is >= nkeys (for example
 * KEDR_KEY_DROP) are left out of perm; *n_kept (host, may be NULL) counts the rest.
 * starts is the exclusive scan of counts. Scratch: cuda 16 bytes per item (8 when nkeys < 2^16,
 * none when nkeys < 2^8); cpu: per-thread counters, 4 bytes per item or per key, the larger,
 * plus 8 bytes per item when the keys come in random order (n >= 2^16, nkeys >= 4096). */
kedr_status kedr_counting_sort(kedr_ctx *ctx, const uint32_t *keys, size_t n, uint32_t nkeys,
                               uint32_t *perm, uint32_t *starts, uint32_t *counts,
                               size_t *n_kept);
/* The same sort in the caller's memory, for callers that keep their own buffers (the DSMC
 * particle slots): work holds 4 bytes per item (a second index buffer) and scratch at least
 * kedr_counting_sort_scratch(ctx, n, nkeys) bytes (about n / 3.75 + 20 KB), all in the
 * context's memory, so the call takes no memory of its own, and keys are left as they were. On
 * cuda the passes after the first read each item's key through its index instead of from a
 * second key buffer: as fast as kedr_counting_sort when the keys come nearly in order (a DSMC
 * step's cells, where most items keep their key and place), much slower for keys in random
 * order. On the cpu work and scratch may be NULL and are not used (the cpu sort takes host
 * memory as kedr_counting_sort does); kedr_counting_sort_scratch returns 0 there. Same results
 * as kedr_counting_sort. */
size_t kedr_counting_sort_scratch(const kedr_ctx *ctx, size_t n, uint32_t nkeys);
kedr_status kedr_counting_sort_in(kedr_ctx *ctx, const uint32_t *keys, size_t n, uint32_t nkeys,
                                  uint32_t *perm, uint32_t *starts, uint32_t *counts,
                                  size_t *n_kept, void *work, void *scratch,
                                  size_t scratch_bytes);

/* ---- transpose ---------------------------------------------------------------------------- */

/* out (cols x rows, row-major) = transpose of in (rows x cols, row-major). Types: F32, F64 (and
 * U32, I32, U64 as raw bits). out must not overlap in. */
kedr_status kedr_transpose(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t rows,
                           size_t cols);


/* ---- batched tridiagonal solvers ---------------------------------------------------------- */

/* count independent systems of n unknowns, a_i x_{i-1} + b_i x_i + c_i x_{i+1} = d_i
 * (i = 0 .. n-1), all with the same n, in one of two layouts of the arrays a, b, c, d:
 * CONTIGUOUS: system s is one run, element (s, i) at s*n + i (a line of a row-major grid);
 * INTERLEAVED: unknown i of every system side by side, element (s, i) at i*count + s (the lines
 * across a grid's fastest index, as an ADI sweep along a slow axis meets them). */
typedef enum { KEDR_TRIDIAG_CONTIGUOUS = 0, KEDR_TRIDIAG_INTERLEAVED = 1 } kedr_tridiag_layout;

/* THOMAS: Gaussian elimination without pivoting (the Thomas algorithm), one system per thread.
 * CR: cyclic reduction; PCR: parallel cyclic reduction; CR_PCR: CR down to 64 rows, PCR on
 * those, CR back (Zhang, Cohen & Owens 2010). On the cpu each is one system per thread; on cuda
 * the threads of a block share a system, in shared memory where it fits, else in work rows in
 * global memory (n < 2^31). Periodic systems are bordered as described below, with the leading
 * (n-1) rows solved by the chosen algorithm for two right sides.
 * PARTITIONED: each system cut into about sqrt(n) parts, each part reduced to its two interface
 * rows (kedr_tridiag_part_reduce), the interface system of 2 rows a part solved by AUTO, the
 * parts completed (kedr_tridiag_part_complete); a system of 1 unknown is one division. AUTO on
 * cuda takes it for interleaved systems of 256 unknowns or more too few to fill the GPU one
 * thread a system (fewer than 64 a multiprocessor).
 * CHUNKED: the same elimination on chip: on cuda a block holds whole systems in shared memory,
 * its threads reduce chunks of about 8 rows each to their interface rows, solve the interface
 * system by cyclic reduction and complete the chunks; four arrays read and one written. The cpu
 * runs the same steps a system per thread. Contiguous systems too long for shared memory are
 * streamed through it in segments (each read twice); interleaved ones are solved as PARTITIONED.
 * PCR_THOMAS: on cuda, a few steps of parallel cyclic reduction split each system among up to
 * 256 threads of a block, which finish by Thomas (systems of at most 2048 unknowns, f64 1024,
 * periodic ones only where the split divides n; other systems as THOMAS); on the cpu, Thomas.
 * AUTO: the back end's fastest for the sizes (on cuda as measured on an H100, docs/prim.md):
 * Thomas, except on cuda for contiguous systems of 256 unknowns or more (CHUNKED: in shared
 * memory where they fit, streamed through it in segments where they do not), for long
 * interleaved systems few in number (PARTITIONED, above) and for periodic interleaved systems
 * of at most 32 unknowns (f64: 16), solved by Thomas with the rows in registers instead of
 * shared memory. All agree to rounding (docs/prim.md). */
typedef enum {
    KEDR_TRIDIAG_AUTO = 0,
    KEDR_TRIDIAG_THOMAS = 1,
    KEDR_TRIDIAG_CR = 2,
    KEDR_TRIDIAG_PCR = 3,
    KEDR_TRIDIAG_CR_PCR = 4,
    KEDR_TRIDIAG_PARTITIONED = 5,
    KEDR_TRIDIAG_CHUNKED = 6,
    KEDR_TRIDIAG_PCR_THOMAS = 7
} kedr_tridiag_algorithm;

typedef struct {
    size_t n;     /* unknowns per system, at least 1 */
    size_t count; /* systems */
    kedr_tridiag_layout layout;
    int periodic; /* 0: a_0 and c_{n-1} are ignored; 1: cyclic systems, a_0 multiplies x_{n-1}
                   * and c_{n-1} multiplies x_0 (for n = 1: (a_0 + b_0 + c_0) x_0 = d_0; for
                   * n = 2 the two couplings of a row add up) */
    kedr_tridiag_algorithm algorithm;
} kedr_tridiag_desc;

/* Solves every system of desc in place: d holds the right-hand sides on entry and the solutions
 * x on return; a, b, c (each n * count elements of type t, F32 or F64, in the layout of desc)
 * are left unchanged and must not overlap d. Arithmetic is in type t. Periodic systems are
 * solved by bordering: two right-hand sides of the leading (n-1) x (n-1) system, then x_{n-1}
 * from the last row. Scratch: cuda n * count elements (two times that when periodic) unless a
 * system fits in shared memory; cpu the same. Queued on the context's stream; no wait.
 *
 * Stability: no pivoting, whatever the algorithm. Systems that are strictly diagonally dominant
 * by rows (|b_i| > |a_i| + |c_i|) are solved by every algorithm with a small backward error
 * (CR, PCR and the part elimination keep the dominance of every row they form); symmetric
 * positive definite ones by Thomas and CR (docs/prim.md: PCR, CR_PCR and PARTITIONED need
 * dominance for that guarantee). Other non-singular systems may meet a zero or tiny pivot: a zero one
 * gives inf or NaN in that system's x (the other systems are unaffected), a tiny one an
 * inaccurate x; no error is returned for either, as detecting them would cost the GPU a wait.
 * Callers with such systems check x for finite values or use a pivoting solver. */
kedr_status kedr_tridiag_solve(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *desc,
                               const void *a, const void *b, const void *c, void *d);

/* Partitioned solves, for systems cut into parts held apart (an MPI rank holding rows
 * lo .. hi-1 of every line of a grid split between ranks). Each part of every system is reduced
 * to its two interface rows, which couple its first and last unknowns to the neighbouring
 * parts'; the interface rows of all P parts, in part order, form a tridiagonal system of 2P
 * unknowns a system (periodic when the whole systems are), solved by any means; each part is
 * then completed from its first and last unknowns. For parts p = 0 .. P-1 of count systems:
 *
 *   kedr_tridiag_part_reduce(ctx, t, &part_p, a_p, b_p, c_p, d_p, w_p, iface_p);
 *   ... gather the interface rows: iface_p's arrays at rows 2p, 2p+1 of interleaved arrays
 *       A, B, C, D of 2P rows (pointing iface_p into them builds the system in place) ...
 *   kedr_tridiag_solve(ctx, t, &(kedr_tridiag_desc){2 * P, count, KEDR_TRIDIAG_INTERLEAVED,
 *                      periodic, KEDR_TRIDIAG_AUTO}, A, B, C, D);
 *   kedr_tridiag_part_complete(ctx, t, &part_p, w_p, D + 2 * p * count (elements), d_p);
 *
 * The result is that of the whole systems, to rounding. */
typedef struct {
    size_t n;     /* rows of the part in every system, at least 2 */
    size_t count; /* systems */
    kedr_tridiag_layout layout;
    size_t stride; /* CONTIGUOUS: elements from row 0 of a system to row 0 of the next;
                    * INTERLEAVED: from row i of the systems to row i + 1. 0: compact (n,
                    * respectively count). A part of whole systems of N rows held in one array
                    * starts at element lo (contiguous, stride N) or lo * count (interleaved). */
} kedr_tridiag_part;

/* The interface rows of a part, each array 2 * count elements: row j (0: the part's first
 * unknown, 1: its last) of system s at j * count + s. Row 0's a couples to the previous part's
 * last unknown and its c to this part's last; row 1's a to this part's first and its c to the
 * next part's first; b is 1. */
typedef struct {
    void *a, *b, *c, *d;
} kedr_tridiag_iface;

/* Reduces the part (a, b, c, d, in part's layout and stride; a_0 multiplies the unknown before
 * the part, c_{n-1} the one after it; for the first and last part of non-periodic systems these
 * are ignored by the interface solve) to its interface rows. d is overwritten with values the
 * completion needs; a, b, c are left unchanged. w: 2 * n * count elements of work that the
 * completion reads. All arrays in the context's memory, of type t (F32, F64), apart from each
 * other and from d. Stability as kedr_tridiag_solve's: a strictly row dominant part gives
 * interface rows with |a| + |c| < 1 = b. */
kedr_status kedr_tridiag_part_reduce(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_part *part,
                                     const void *a, const void *b, const void *c, void *d,
                                     void *w, const kedr_tridiag_iface *iface);

/* Completes the part: x (2 * count elements: the part's first and last unknowns, row j of
 * system s at j * count + s, as the interface solve returns them) and w and d from
 * kedr_tridiag_part_reduce give the part's solution in d. */
kedr_status kedr_tridiag_part_complete(kedr_ctx *ctx, kedr_dtype t,
                                       const kedr_tridiag_part *part, const void *w,
                                       const void *x, void *d);

#ifdef __cplusplus
}
#endif
#endif
