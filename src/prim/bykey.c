/* Run-length encoding and reduce by key: the cpu back end and the dispatch. The cuda back end
 * is in bykey.cu.
 *
 * Both are one segmented reduction. The state of a stretch of items is (c, v): c the number of
 * run heads in it (items whose key differs from the one before), v the op over the values from
 * its last head to its end (over all of it when c = 0). Stretches join as
 * (c1, v1) + (c2, v2) = (c1 + c2, c2 ? v2 : op(v1, v2)), which is associative. The input is cut
 * into fixed chunks: their states, a scan of those in order, then each chunk again from its
 * carry, writing run k where run k ends. Chunks do not depend on the thread count, so float sums
 * come out the same on any number of threads. */
#include "core/internal.h"
#include "kedr/prim.h"
#ifdef KEDR_HAVE_CUDA
#include "prim/bykey_cuda.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)1 << 15)

/* Ties keep the left operand, which keeps min and max associative even for -0.0 and +0.0: the
 * result is the first extreme value of the run, however the work is split. */
#define OP_SUM(a, b) ((a) + (b))
#define OP_MIN(a, b) ((b) < (a) ? (b) : (a))
#define OP_MAX(a, b) ((a) < (b) ? (b) : (a))
#define LOAD_VALUE(v, i) (v)[i]
#define LOAD_ONE(v, i) ((void)(v), 1)

typedef void (*chunk_state_fn)(const void *k, const void *v, size_t lo, size_t hi, size_t *c,
                               void *acc);
typedef void (*join_fn)(size_t *c1, void *a1, size_t c2, const void *a2);
typedef void (*chunk_out_fn)(const void *k, const void *v, size_t n, size_t lo, size_t hi,
                             size_t c, const void *acc, void *ko, void *vo);

typedef struct {
    chunk_state_fn state;
    join_fn join;
    chunk_out_fn out;
} bykey_impl;

/* KT key, VT value, AT accumulator (the value type, except u32 for i32 sums, so that they wrap
 * without overflow, and double for float sums). Accumulators live in 8-byte slots. */
#define DEFINE_BYKEY(NAME, KT, VT, AT, IDENT, OP, LOAD)                                         \
    static void NAME##_state(const void *kp, const void *vp, size_t lo, size_t hi, size_t *cp,  \
                             void *accp)                                                        \
    {                                                                                           \
        const KT *k = kp;                                                                       \
        const VT *v = vp;                                                                       \
        size_t c = 0;                                                                           \
        AT acc = IDENT;                                                                         \
        for (size_t i = lo; i < hi; i++) {                                                      \
            AT x = (AT)LOAD(v, i);                                                              \
            if (i == 0 || k[i] != k[i - 1]) {                                                   \
                c++;                                                                            \
                acc = x;                                                                        \
            } else {                                                                            \
                acc = OP(acc, x);                                                               \
            }                                                                                   \
        }                                                                                       \
        *cp = c;                                                                                \
        memcpy(accp, &acc, sizeof acc);                                                         \
    }                                                                                           \
    static void NAME##_join(size_t *c1, void *a1, size_t c2, const void *a2)                    \
    {                                                                                           \
        AT l, r;                                                                                \
        memcpy(&l, a1, sizeof l);                                                               \
        memcpy(&r, a2, sizeof r);                                                               \
        if (!c2)                                                                                \
            r = OP(l, r);                                                                       \
        *c1 += c2;                                                                              \
        memcpy(a1, &r, sizeof r);                                                               \
    }                                                                                           \
    static void NAME##_out(const void *kp, const void *vp, size_t n, size_t lo, size_t hi,      \
                           size_t c, const void *accp, void *kop, void *vop)                    \
    {                                                                                           \
        const KT *k = kp;                                                                       \
        const VT *v = vp;                                                                       \
        KT *ko = kop;                                                                           \
        AT acc;                                                                                 \
        memcpy(&acc, accp, sizeof acc);                                                         \
        for (size_t i = lo; i < hi; i++) {                                                      \
            AT x = (AT)LOAD(v, i);                                                              \
            if (i == 0 || k[i] != k[i - 1]) {                                                   \
                c++;                                                                            \
                acc = x;                                                                        \
            } else {                                                                            \
                acc = OP(acc, x);                                                               \
            }                                                                                   \
            if (i + 1 == n || k[i + 1] != k[i]) {                                               \
                ko[c - 1] = k[i];                                                               \
                ((VT *)vop)[c - 1] = (VT)acc;                                                   \
            }                                                                                   \
        }                                                                                       \
    }

#define DEFINE_BYKEY_KEY(KN, KT)                                                                \
    DEFINE_BYKEY(KN##_u32_sum, KT, uint32_t, uint32_t, 0, OP_SUM, LOAD_VALUE)                   \
    DEFINE_BYKEY(KN##_u32_min, KT, uint32_t, uint32_t, UINT32_MAX, OP_MIN, LOAD_VALUE)          \
    DEFINE_BYKEY(KN##_u32_max, KT, uint32_t, uint32_t, 0, OP_MAX, LOAD_VALUE)                   \
    DEFINE_BYKEY(KN##_u64_sum, KT, uint64_t, uint64_t, 0, OP_SUM, LOAD_VALUE)                   \
    DEFINE_BYKEY(KN##_u64_min, KT, uint64_t, uint64_t, UINT64_MAX, OP_MIN, LOAD_VALUE)          \
    DEFINE_BYKEY(KN##_u64_max, KT, uint64_t, uint64_t, 0, OP_MAX, LOAD_VALUE)                   \
    DEFINE_BYKEY(KN##_i32_sum, KT, int32_t, uint32_t, 0, OP_SUM, LOAD_VALUE)                    \
    DEFINE_BYKEY(KN##_i32_min, KT, int32_t, int32_t, INT32_MAX, OP_MIN, LOAD_VALUE)             \
    DEFINE_BYKEY(KN##_i32_max, KT, int32_t, int32_t, INT32_MIN, OP_MAX, LOAD_VALUE)             \
    DEFINE_BYKEY(KN##_f32_sum, KT, float, double, -0.0, OP_SUM, LOAD_VALUE)                     \
    DEFINE_BYKEY(KN##_f32_min, KT, float, float, INFINITY, OP_MIN, LOAD_VALUE)                  \
    DEFINE_BYKEY(KN##_f32_max, KT, float, float, -INFINITY, OP_MAX, LOAD_VALUE)                 \
    DEFINE_BYKEY(KN##_f64_sum, KT, double, double, -0.0, OP_SUM, LOAD_VALUE)                    \
    DEFINE_BYKEY(KN##_f64_min, KT, double, double, INFINITY, OP_MIN, LOAD_VALUE)                \
    DEFINE_BYKEY(KN##_f64_max, KT, double, double, -INFINITY, OP_MAX, LOAD_VALUE)               \
    DEFINE_BYKEY(KN##_rle, KT, uint32_t, uint64_t, 0, OP_SUM, LOAD_ONE)

DEFINE_BYKEY_KEY(k32, uint32_t)
DEFINE_BYKEY_KEY(k64, uint64_t)

#define IMPL(NAME) {NAME##_state, NAME##_join, NAME##_out}
#define IMPL_KEY(KN)                                                                            \
    {{IMPL(KN##_u32_sum), IMPL(KN##_u32_min), IMPL(KN##_u32_max)},                              \
     {IMPL(KN##_u64_sum), IMPL(KN##_u64_min), IMPL(KN##_u64_max)},                              \
     {IMPL(KN##_i32_sum), IMPL(KN##_i32_min), IMPL(KN##_i32_max)},                              \
     {IMPL(KN##_f32_sum), IMPL(KN##_f32_min), IMPL(KN##_f32_max)},                              \
     {IMPL(KN##_f64_sum), IMPL(KN##_f64_min), IMPL(KN##_f64_max)}}

/* [64-bit key][value type, in kedr_dtype order][op, in kedr_op order] */
static const bykey_impl impls[2][5][3] = {IMPL_KEY(k32), IMPL_KEY(k64)};
static const bykey_impl rle_impls[2] = {IMPL(k32_rle), IMPL(k64_rle)};

static kedr_status bykey_cpu(kedr_ctx *ctx, bykey_impl f, const void *keys, const void *vals,
                             size_t n, void *keys_out, void *vals_out, size_t *n_runs)
{
    size_t nchunks = (n + CHUNK - 1) / CHUNK;
    size_t *cnt = malloc(nchunks * sizeof *cnt);
    uint64_t *acc = malloc(nchunks * sizeof *acc);
    if (!cnt || !acc) {
        free(cnt);
        free(acc);
        return kedr_fail(KEDR_ERR_NOMEM, "reduce by key: out of host memory for %zu chunks",
                         nchunks);
    }
    int nt = nchunks > 1 ? ctx->threads : 1;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long long c = 0; c < (long long)nchunks; c++) {
        size_t lo = (size_t)c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
        f.state(keys, vals, lo, hi, &cnt[c], &acc[c]);
    }
    /* In order: each chunk's state becomes the state of everything before it. */
    size_t run_c = 0;
    uint64_t run_acc = 0;
    for (size_t c = 0; c < nchunks; c++) {
        size_t cc = cnt[c];
        uint64_t ca = acc[c];
        cnt[c] = run_c;
        acc[c] = run_acc;
        if (c == 0) {
            run_c = cc;
            run_acc = ca;
        } else {
            f.join(&run_c, &run_acc, cc, &ca);
        }
    }
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long long c = 0; c < (long long)nchunks; c++) {
        size_t lo = (size_t)c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
        f.out(keys, vals, n, lo, hi, cnt[c], &acc[c], keys_out, vals_out);
    }
    free(cnt);
    free(acc);
    *n_runs = run_c;
    return KEDR_OK;
}

kedr_status kedr_run_length_encode(kedr_ctx *ctx, kedr_dtype t, const void *in, size_t n,
                                   void *unique_out, uint32_t *counts_out, size_t *n_runs)
{
    const char *fn = "kedr_run_length_encode";
    KEDR_TRY(kedr_check_ptr(ctx, 1, fn, "ctx"));
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPES_INT, fn, "t"));
    KEDR_TRY(kedr_check_ptr(in, n, fn, "in"));
    KEDR_TRY(kedr_check_ptr(unique_out, n, fn, "unique_out"));
    KEDR_TRY(kedr_check_ptr(counts_out, n, fn, "counts_out"));
    KEDR_TRY(kedr_check_ptr(n_runs, 1, fn, "n_runs"));
    *n_runs = 0;
    if (n == 0)
        return KEDR_OK;
    int key64 = kedr_dtype_size(t) == 8;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_bykey_cuda(ctx, key64, in, KEDR_U32, NULL, n, KEDR_OP_SUM, unique_out,
                               counts_out, n_runs, 1);
#endif
    return bykey_cpu(ctx, rle_impls[key64], in, NULL, n, unique_out, counts_out, n_runs);
}

kedr_status kedr_reduce_by_key(kedr_ctx *ctx, kedr_dtype key_t, const void *keys_in,
                               kedr_dtype val_t, const void *vals_in, size_t n, kedr_op op,
                               void *keys_out, void *vals_out, size_t *n_runs)
{
    const char *fn = "kedr_reduce_by_key";
    KEDR_TRY(kedr_check_ptr(ctx, 1, fn, "ctx"));
    KEDR_TRY(kedr_check_dtype(key_t, KEDR_TYPES_INT, fn, "key_t"));
    KEDR_TRY(kedr_check_dtype(val_t, KEDR_TYPES_ALL, fn, "val_t"));
    if ((unsigned)op > KEDR_OP_MAX)
        return kedr_fail(KEDR_ERR_INVALID, "%s: op %d: expected sum, min or max", fn, (int)op);
    KEDR_TRY(kedr_check_ptr(keys_in, n, fn, "keys_in"));
    KEDR_TRY(kedr_check_ptr(vals_in, n, fn, "vals_in"));
    KEDR_TRY(kedr_check_ptr(keys_out, n, fn, "keys_out"));
    KEDR_TRY(kedr_check_ptr(vals_out, n, fn, "vals_out"));
    KEDR_TRY(kedr_check_ptr(n_runs, 1, fn, "n_runs"));
    *n_runs = 0;
    if (n == 0)
        return KEDR_OK;
    int key64 = kedr_dtype_size(key_t) == 8;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_bykey_cuda(ctx, key64, keys_in, val_t, vals_in, n, op, keys_out, vals_out,
                               n_runs, 0);
#endif
    return bykey_cpu(ctx, impls[key64][val_t][op], keys_in, vals_in, n, keys_out, vals_out,
                     n_runs);
}
