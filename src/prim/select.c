/* Stable compaction and partition: kedr_select_flagged, kedr_select_if, kedr_partition_flagged,
 * kedr_partition_if. The cpu version and the dispatch.
 *
 * cpu: two passes over fixed chunks of SELECT_CHUNK elements. Pass 1 counts the selected
 * elements of each chunk in parallel; a sequential pass turns the counts into each chunk's
 * output offset; pass 2 copies in parallel. For a partition, chunk c's rejected elements start
 * at n_true + (chunk start - selected before the chunk), which keeps both parts in order.
 * Predicates follow C comparison semantics, so a NaN satisfies only NE. */
#include "kedr/prim.h"
#include "core/internal.h"
#include "prim/select_cuda.h"

#include <stdint.h>
#include <string.h>

#define SELECT_CHUNK ((size_t)1 << 16)

typedef struct {
    uint64_t lo, hi;
} sel_e16;

/* What decides selection: flags (when not NULL) or a predicate on elements of type t. */
typedef struct {
    const void *in;
    const uint8_t *flags;
    size_t elem_size;
    kedr_dtype t;
    kedr_pred pred;
} sel_src;

/* The copying loop, without branches on the data (a 50% selection would mispredict every
 * other element): each element is stored to both a selected and a rejected stack buffer and
 * only the right counter advances; the buffers are then copied out. TEST decides element x at
 * index i. Expects in, out, lo, hi, ts, fs and partition in scope. */
#define SELECT_BUF 256
#define COPY_LOOP(E, TEST)                                                                   \
    do {                                                                                     \
        E sel[SELECT_BUF], rej[SELECT_BUF];                                                  \
        for (size_t lo2 = lo; lo2 < hi; lo2 += SELECT_BUF) {                                 \
            size_t hi2 = hi - lo2 < SELECT_BUF ? hi : lo2 + SELECT_BUF, ns = 0, nr = 0;      \
            if (partition) {                                                                 \
                for (size_t i = lo2; i < hi2; i++) {                                         \
                    E x = in[i];                                                             \
                    size_t h = (TEST) != 0;                                                  \
                    sel[ns] = x;                                                             \
                    rej[nr] = x;                                                             \
                    ns += h;                                                                 \
                    nr += 1 - h;                                                             \
                }                                                                            \
                memcpy(out + fs, rej, nr * sizeof(E));                                       \
                fs += nr;                                                                    \
            } else {                                                                         \
                for (size_t i = lo2; i < hi2; i++) {                                         \
                    E x = in[i];                                                             \
                    sel[ns] = x;                                                             \
                    ns += (TEST) != 0;                                                       \
                }                                                                            \
            }                                                                                \
            memcpy(out + ts, sel, ns * sizeof(E));                                           \
            ts += ns;                                                                        \
        }                                                                                    \
    } while (0)

/* Predicates: the comparison is chosen outside the loop, so each loop is a plain one that the
 * compiler can vectorize (counting) or keep branch-free (copying). C comparison semantics: a
 * NaN fails all but NE. a and b are locals, so stores to out cannot be taken to alias them. */
#define PRED_SWITCH(LOOP)                                                                    \
    switch (s->pred.cmp) {                                                                   \
    case KEDR_CMP_LT: LOOP(x < a); break;                                                    \
    case KEDR_CMP_LE: LOOP(x <= a); break;                                                   \
    case KEDR_CMP_GT: LOOP(x > a); break;                                                    \
    case KEDR_CMP_GE: LOOP(x >= a); break;                                                   \
    case KEDR_CMP_EQ: LOOP(x == a); break;                                                   \
    case KEDR_CMP_NE: LOOP(x != a); break;                                                   \
    case KEDR_CMP_IN: LOOP((a <= x) & (x < b)); break;                                       \
    }

/* One counting and one copying function per type; elem names the type for the loops. */
#define COUNT_LOOP(TEST)                                                                     \
    for (size_t i = lo; i < hi; i++) {                                                       \
        elem x = in[i];                                                                      \
        c += (size_t)(TEST);                                                                 \
    }
#define COPY_PRED_LOOP(TEST) COPY_LOOP(elem, TEST)
#define DEFINE_PRED_LOOPS(SUFFIX, T, FIELD)                                                  \
    static size_t count_##SUFFIX(const sel_src *s, size_t lo, size_t hi)                     \
    {                                                                                        \
        typedef T elem;                                                                      \
        const T *in = s->in;                                                                 \
        T a = s->pred.a.FIELD, b = s->pred.b.FIELD;                                          \
        size_t c = 0;                                                                        \
        PRED_SWITCH(COUNT_LOOP)                                                              \
        return c;                                                                            \
    }                                                                                        \
    static void copy_##SUFFIX(const sel_src *s, size_t lo, size_t hi, void *out_, size_t ts, \
                              size_t fs, int partition)                                      \
    {                                                                                        \
        typedef T elem;                                                                      \
        const T *in = s->in;                                                                 \
        T *out = out_;                                                                       \
        T a = s->pred.a.FIELD, b = s->pred.b.FIELD;                                          \
        PRED_SWITCH(COPY_PRED_LOOP)                                                          \
    }

DEFINE_PRED_LOOPS(u32, uint32_t, u32)
DEFINE_PRED_LOOPS(u64, uint64_t, u64)
DEFINE_PRED_LOOPS(i32, int32_t, i32)
DEFINE_PRED_LOOPS(f32, float, f32)
DEFINE_PRED_LOOPS(f64, double, f64)

/* Copying loops for flags, one per element size. */
#define DEFINE_FLAG_COPY(NAME, E)                                                            \
    static void NAME(const sel_src *s, size_t lo, size_t hi, void *out_, size_t ts,          \
                     size_t fs, int partition)                                               \
    {                                                                                        \
        const E *in = s->in;                                                                 \
        const uint8_t *flags = s->flags;                                                     \
        E *out = out_;                                                                       \
        COPY_LOOP(E, flags[i]);                                                              \
    }

DEFINE_FLAG_COPY(copy_flag1, uint8_t)
DEFINE_FLAG_COPY(copy_flag2, uint16_t)
DEFINE_FLAG_COPY(copy_flag4, uint32_t)
DEFINE_FLAG_COPY(copy_flag8, uint64_t)
DEFINE_FLAG_COPY(copy_flag16, sel_e16)

static size_t count_flags(const sel_src *s, size_t lo, size_t hi)
{
    size_t c = 0;
    for (size_t i = lo; i < hi; i++)
        c += s->flags[i] != 0;
    return c;
}

typedef size_t (*count_fn)(const sel_src *, size_t, size_t);
typedef void (*copy_fn)(const sel_src *, size_t, size_t, void *, size_t, size_t, int);

static void select_loops(const sel_src *s, count_fn *count, copy_fn *copy)
{
    static const count_fn pred_count[5] = {count_u32, count_u64, count_i32, count_f32, count_f64};
    static const copy_fn pred_copy[5] = {copy_u32, copy_u64, copy_i32, copy_f32, copy_f64};
    if (s->flags) {
        *count = count_flags;
        switch (s->elem_size) {
        case 1: *copy = copy_flag1; break;
        case 2: *copy = copy_flag2; break;
        case 4: *copy = copy_flag4; break;
        case 8: *copy = copy_flag8; break;
        default: *copy = copy_flag16; break;
        }
    } else {
        *count = pred_count[s->t];
        *copy = pred_copy[s->t];
    }
}

static kedr_status select_cpu(kedr_ctx *ctx, const sel_src *s, void *out, size_t n,
                              int partition, size_t *n_sel)
{
    count_fn count;
    copy_fn copy;
    select_loops(s, &count, &copy);
    long long nchunks = (long long)((n + SELECT_CHUNK - 1) / SELECT_CHUNK);
    size_t one, *part = &one; /* a scratch block only when there are several chunks */
    if (nchunks > 1)
        KEDR_TRY(kedr_scratch_get(ctx, (void **)&part, (size_t)nchunks * sizeof(size_t)));
#pragma omp parallel for schedule(static) if (nchunks > 1)
    for (long long c = 0; c < nchunks; c++) {
        size_t lo = (size_t)c * SELECT_CHUNK;
        part[c] = count(s, lo, n - lo > SELECT_CHUNK ? lo + SELECT_CHUNK : n);
    }
    size_t total = 0;
    for (long long c = 0; c < nchunks; c++) {
        size_t k = part[c];
        part[c] = total;
        total += k;
    }
#pragma omp parallel for schedule(static) if (nchunks > 1)
    for (long long c = 0; c < nchunks; c++) {
        size_t lo = (size_t)c * SELECT_CHUNK;
        copy(s, lo, n - lo > SELECT_CHUNK ? lo + SELECT_CHUNK : n, out, part[c],
             total + lo - part[c], partition);
    }
    if (nchunks > 1)
        kedr_scratch_put(ctx, part);
    *n_sel = total;
    return KEDR_OK;
}

static kedr_status select_common(kedr_ctx *ctx, sel_src *s, void *out, size_t n, int partition,
                                 size_t *n_sel, const char *fn, const char *count_name)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
    KEDR_TRY(kedr_check_ptr(s->in, n, fn, "in"));
    KEDR_TRY(kedr_check_ptr(out, n, fn, "out"));
    if (!n_sel)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s is NULL (n = %zu)", fn, count_name, n);
    uintptr_t a = (uintptr_t)s->in, b = (uintptr_t)out, bytes = n * s->elem_size;
    if (n > 0 && a < b + bytes && b < a + bytes)
        return kedr_fail(KEDR_ERR_INVALID, "%s: out overlaps in (n = %zu, %zu-byte elements)", fn,
                         n, s->elem_size);
    if (n == 0) {
        *n_sel = 0;
        return KEDR_OK;
    }
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        if (s->flags)
            return prim_select_flagged_cuda(ctx, s->elem_size, s->in, s->flags, out, n,
                                            partition, n_sel);
        return prim_select_if_cuda(ctx, s->t, s->in, out, n, s->pred, partition, n_sel);
    }
#endif
    return select_cpu(ctx, s, out, n, partition, n_sel);
}

static kedr_status flagged(kedr_ctx *ctx, size_t elem_size, const void *in, const uint8_t *flags,
                           void *out, size_t n, int partition, size_t *n_sel, const char *fn,
                           const char *count_name)
{
    if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8 && elem_size != 16)
        return kedr_fail(KEDR_ERR_INVALID, "%s: elem_size %zu is not 1, 2, 4, 8 or 16", fn,
                         elem_size);
    KEDR_TRY(kedr_check_ptr(flags, n, fn, "flags"));
    sel_src s = {in, flags, elem_size, KEDR_U32, {KEDR_CMP_EQ, {0}, {0}}};
    return select_common(ctx, &s, out, n, partition, n_sel, fn, count_name);
}

static kedr_status by_pred(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                           kedr_pred pred, int partition, size_t *n_sel, const char *fn,
                           const char *count_name)
{
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPES_ALL, fn, "element"));
    if ((unsigned)pred.cmp > KEDR_CMP_IN)
        return kedr_fail(KEDR_ERR_INVALID, "%s: pred.cmp %d is not one of LT LE GT GE EQ NE IN",
                         fn, (int)pred.cmp);
    sel_src s = {in, NULL, kedr_dtype_size(t), t, pred};
    return select_common(ctx, &s, out, n, partition, n_sel, fn, count_name);
}

kedr_status kedr_select_flagged(kedr_ctx *ctx, size_t elem_size, const void *in,
                                const uint8_t *flags, void *out, size_t n, size_t *n_out)
{
    return flagged(ctx, elem_size, in, flags, out, n, 0, n_out, "kedr_select_flagged", "n_out");
}

kedr_status kedr_select_if(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                           kedr_pred pred, size_t *n_out)
{
    return by_pred(ctx, t, in, out, n, pred, 0, n_out, "kedr_select_if", "n_out");
}

kedr_status kedr_partition_flagged(kedr_ctx *ctx, size_t elem_size, const void *in,
                                   const uint8_t *flags, void *out, size_t n, size_t *n_true)
{
    return flagged(ctx, elem_size, in, flags, out, n, 1, n_true, "kedr_partition_flagged",
                   "n_true");
}

kedr_status kedr_partition_if(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                              kedr_pred pred, size_t *n_true)
{
    return by_pred(ctx, t, in, out, n, pred, 1, n_true, "kedr_partition_if", "n_true");
}
