/* kedr_scan_inclusive / kedr_scan_exclusive: prefix sums; the cpu version and the dispatch.
 *
 * cpu: one pass over fixed chunks of SCAN_CHUNK elements, a chained scan (the cpu form of
 * Merrill and Garland's single-pass scan, 2016). Threads take chunks in increasing order from a
 * shared counter. A thread sums its chunk (reading it from memory into its cache), waits until
 * the inclusive prefix of the chunk before is published, publishes its own (that prefix plus its
 * sum), then scans the chunk, now read from cache, from that offset. So the data is read from
 * memory once instead of twice, and the wait is short: a chunk's prefix is published as soon as
 * its sum is known, long before its scan ends. Each element is read before its output is
 * written, so out == in works. f32 accumulates in double (the output is the double prefix
 * rounded), integers wrap. Chunk sums are sequential and offsets are chained in chunk order, so
 * the result depends only on n, not on the thread count or timing. */
#include "kedr/prim.h"
#include "core/internal.h"
#include "prim/scan_cuda.h"

#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* Small enough that a chunk of 8-byte elements stays in a core's L2 between its two reads. */
#define SCAN_CHUNK ((size_t)1 << 16)

/* The published state of one chunk, alone on its cache line: the line moves from the thread
 * that writes it to the one that reads it, and to no third. */
typedef struct {
    alignas(64) double prefix; /* inclusive prefix as ACC (a double or an integer's bits) */
    atomic_int ready;
} scan_state;

/* Waits for another thread's store; yields the core after a while, so that on an
 * oversubscribed machine the awaited thread gets to run. */
static void wait_ready(atomic_int *ready)
{
    for (int spins = 0; !atomic_load_explicit(ready, memory_order_acquire); spins++)
        if (spins > 256)
            sched_yield();
}

/* st: one scan_state per chunk. total (may be NULL) receives the sum of all n elements as T. */
#define DEFINE_SCAN(NAME, T, ACC)                                                            \
    static void NAME(const void *in_, void *out_, size_t n, int exclusive, scan_state *st,  \
                     void *total)                                                            \
    {                                                                                        \
        const T *in = in_;                                                                   \
        T *out = out_;                                                                       \
        size_t nchunks = (n + SCAN_CHUNK - 1) / SCAN_CHUNK;                                  \
        atomic_size_t next;                                                                  \
        atomic_init(&next, 0);                                                               \
        for (size_t c = 0; c < nchunks; c++)                                                 \
            atomic_init(&st[c].ready, 0);                                                    \
        _Pragma("omp parallel if (nchunks > 1)")                                            \
        for (;;) {                                                                           \
            size_t c = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);            \
            if (c >= nchunks)                                                                \
                break;                                                                       \
            size_t lo = c * SCAN_CHUNK, hi = n - lo > SCAN_CHUNK ? lo + SCAN_CHUNK : n;      \
            ACC s = 0;                                                                       \
            for (size_t i = lo; i < hi; i++)                                                 \
                s += (ACC)in[i];                                                             \
            ACC r = 0;                                                                       \
            if (c > 0) {                                                                     \
                wait_ready(&st[c - 1].ready);                                                \
                memcpy(&r, &st[c - 1].prefix, sizeof r);                                     \
            }                                                                                \
            ACC incl = r + s;                                                                \
            memcpy(&st[c].prefix, &incl, sizeof incl);                                       \
            atomic_store_explicit(&st[c].ready, 1, memory_order_release);                    \
            if (exclusive) {                                                                 \
                for (size_t i = lo; i < hi; i++) {                                           \
                    ACC x = (ACC)in[i];                                                      \
                    out[i] = (T)r;                                                           \
                    r += x;                                                                  \
                }                                                                            \
            } else {                                                                         \
                for (size_t i = lo; i < hi; i++) {                                           \
                    r += (ACC)in[i];                                                         \
                    out[i] = (T)r;                                                           \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        if (total) {                                                                         \
            ACC last;                                                                        \
            memcpy(&last, &st[nchunks - 1].prefix, sizeof last);                             \
            *(T *)total = (T)last;                                                           \
        }                                                                                    \
    }

/* i32 is scanned as u32: the same bits, and wrapping is defined for unsigned types. */
DEFINE_SCAN(scan_u32, uint32_t, uint32_t)
DEFINE_SCAN(scan_u64, uint64_t, uint64_t)
DEFINE_SCAN(scan_f32, float, double)
DEFINE_SCAN(scan_f64, double, double)

typedef void (*scan_fn)(const void *, void *, size_t, int, scan_state *, void *);

/* Indexed by kedr_dtype. */
static const scan_fn scan_table[5] = {scan_u32, scan_u64, scan_u32, scan_f32, scan_f64};

static kedr_status scan_cpu(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                            void *total, int exclusive)
{
    size_t nchunks = (n + SCAN_CHUNK - 1) / SCAN_CHUNK;
    scan_state one; /* spares a scratch block for small inputs */
    if (nchunks <= 1) {
        scan_table[t](in, out, n, exclusive, &one, total);
        return KEDR_OK;
    }
    scan_state *st = NULL;
    /* scratch blocks come from malloc, whose 16-byte alignment does not line states up with
     * cache lines: take one more and round the start up */
    void *block = NULL;
    KEDR_TRY(kedr_scratch_get(ctx, &block, (nchunks + 1) * sizeof *st));
    st = (scan_state *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    scan_table[t](in, out, n, exclusive, st, total);
    kedr_scratch_put(ctx, block);
    return KEDR_OK;
}

static kedr_status scan(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                        void *total, int exclusive, const char *fn)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPES_ALL, fn, "element"));
    KEDR_TRY(kedr_check_ptr(in, n, fn, "in"));
    KEDR_TRY(kedr_check_ptr(out, n, fn, "out"));
    if (n == 0) {
        if (total)
            memset(total, 0, kedr_dtype_size(t)); /* all-zero bits are 0 in every type */
        return KEDR_OK;
    }
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_scan_cuda(ctx, t, in, out, n, total, exclusive);
#endif
    return scan_cpu(ctx, t, in, out, n, total, exclusive);
}

kedr_status kedr_scan_inclusive(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                                void *total)
{
    return scan(ctx, t, in, out, n, total, 0, "kedr_scan_inclusive");
}

kedr_status kedr_scan_exclusive(kedr_ctx *ctx, kedr_dtype t, const void *in, void *out, size_t n,
                                void *total)
{
    return scan(ctx, t, in, out, n, total, 1, "kedr_scan_exclusive");
}
