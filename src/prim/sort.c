/* Radix sort (stable LSD, 8-bit digits) and counting sort by a small key: the cpu back end and
 * the dispatch. The cuda back end is in sort.cu. */
#include "core/internal.h"
#include "kedr/prim.h"
#ifdef KEDR_HAVE_CUDA
#include "prim/sort_cuda.h"
#endif

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define RADIX 256
#define MAX_PASSES 8
/* Below this many keys one thread sorts: starting a team costs more than it saves. */
#define SERIAL_BELOW ((size_t)1 << 14)

/* Order-preserving key bits (seed 002, "flipFloat"): key ^ (sign bit set ? neg : pos). Unsigned
 * keys flip nothing; signed ints flip the sign bit; floats flip every bit of a negative
 * (reversing their order) and the sign bit of the rest. */
typedef struct {
    uint64_t neg, pos;
} key_flip;

static key_flip flip_of(kedr_dtype t)
{
    switch (t) {
    case KEDR_I32: return (key_flip){0x80000000u, 0x80000000u};
    case KEDR_F32: return (key_flip){0xFFFFFFFFu, 0x80000000u};
    case KEDR_F64: return (key_flip){UINT64_MAX, (uint64_t)1 << 63};
    default: return (key_flip){0, 0};
    }
}

/* The digits of one sort: pass p looks at bits [shift[p], shift[p] + bits) of the flipped key. */
typedef struct {
    int npass;
    int shift[MAX_PASSES];
    unsigned mask[MAX_PASSES];
} digit_plan;

static digit_plan plan_digits(int begin_bit, int end_bit)
{
    digit_plan d = {0, {0}, {0}};
    for (int s = begin_bit; s < end_bit; s += 8) {
        int bits = end_bit - s < 8 ? end_bit - s : 8;
        d.shift[d.npass] = s;
        d.mask[d.npass] = (1u << bits) - 1;
        d.npass++;
    }
    return d;
}

/* Software write combining: a thread first gathers the keys of each digit in a small buffer
 * that stays in cache (BLOCK bytes per digit), then writes them out a whole block at a time. A
 * scatter to 256 places at once touches more pages and lines than the TLB and the store buffers
 * can follow; whole blocks do not. Blocks are aligned on the destination's BLOCK-byte lines, so
 * a full block covers whole cache lines and, when the array is larger than the caches, goes out
 * with non-temporal stores: no read for ownership of lines that are entirely overwritten, no
 * eviction of the buffers (measured on a 2-core Xeon VM: 7.3 -> 3.5 ns per key and pass, 2^24
 * u32 keys). The first and last block of a digit are partial and go out with plain stores. */
#define BLOCK 128
/* Above this many bytes moved per pass (keys and values), full blocks bypass the caches. */
#define STREAM_ABOVE ((size_t)4 << 20)

#if defined(__SSE2__)
#include <emmintrin.h>
static inline void block_out(void *dst, const void *src, int stream)
{
    if (!stream) {
        memcpy(dst, src, BLOCK);
        return;
    }
    for (int q = 0; q < BLOCK; q += 16)
        _mm_stream_si128((__m128i *)((char *)dst + q), _mm_load_si128((const __m128i *)((const char *)src + q)));
}
static inline void stream_fence(void) { _mm_sfence(); }
#else
static inline void block_out(void *dst, const void *src, int stream)
{
    (void)stream;
    memcpy(dst, src, BLOCK);
}
static inline void stream_fence(void) {}
#endif

/* The flipped key, without a branch on the sign bit (a branch would be mispredicted for every
 * other random key): s is all ones when the sign bit is set. */
static inline uint32_t flip32(uint32_t k, uint32_t neg, uint32_t pos)
{
    uint32_t s = 0u - (k >> 31);
    return k ^ ((neg & s) | (pos & ~s));
}
static inline uint64_t flip64(uint64_t k, uint64_t neg, uint64_t pos)
{
    uint64_t s = 0u - (k >> 63);
    return k ^ ((neg & s) | (pos & ~s));
}

/* Counts the digits of passes passes[0..np) of keys k[lo..hi) into cnt (RADIX per pass), with
 * the shifts and masks in local arrays so that the loop keeps them in registers or L1. */
#define DEFINE_COUNT(W)                                                                         \
    static void count_##W(const uint##W##_t *restrict k, size_t lo, size_t hi, uint##W##_t neg, \
                          uint##W##_t pos, const digit_plan *dp, const int *passes, int np,     \
                          size_t *restrict cnt)                                                 \
    {                                                                                           \
        if (np == 1) { /* the common case: shift and mask in registers */                      \
            int shift = dp->shift[passes[0]];                                                   \
            unsigned mask = dp->mask[passes[0]];                                                \
            for (size_t i = lo; i < hi; i++)                                                    \
                cnt[(flip##W(k[i], neg, pos) >> shift) & mask]++;                               \
            return;                                                                             \
        }                                                                                       \
        int shift[MAX_PASSES];                                                                  \
        uint##W##_t mask[MAX_PASSES];                                                           \
        for (int q = 0; q < np; q++) {                                                          \
            shift[q] = dp->shift[passes[q]];                                                    \
            mask[q] = dp->mask[passes[q]];                                                      \
        }                                                                                       \
        for (size_t i = lo; i < hi; i++) {                                                      \
            uint##W##_t f = flip##W(k[i], neg, pos);                                            \
            for (int q = 0; q < np; q++)                                                        \
                cnt[q * RADIX + ((f >> shift[q]) & mask[q])]++;                                 \
        }                                                                                       \
    }
DEFINE_COUNT(32)
DEFINE_COUNT(64)

static void count_keys(int width, const void *k, size_t lo, size_t hi, key_flip fl,
                       const digit_plan *dp, const int *passes, int np, size_t *cnt)
{
    if (width == 32)
        count_32(k, lo, hi, (uint32_t)fl.neg, (uint32_t)fl.pos, dp, passes, np, cnt);
    else
        count_64(k, lo, hi, fl.neg, fl.pos, dp, passes, np, cnt);
}

/* Where the elements of one digit go in one array (keys or values), element index j of the
 * destination sits in slot (j + skew) % per of the digit's buffer; skew is the destination's
 * misalignment in elements, so slot 0 starts a BLOCK-aligned line. */
#define SLOT(j, skew, per) (((j) + (skew)) & ((per) - 1))

/* Writes out the buffered elements [from, to) of one digit (they lie in one block). */
static inline void part_out(char *dst, const char *buf, size_t from, size_t to, size_t skew,
                            size_t per, size_t size)
{
    memcpy(dst + from * size, buf + SLOT(from, skew, per) * size, (to - from) * size);
}

/* The first element still in the buffer when a digit's elements [first, end) went through
 * it: the start of end's block, or first if that is later (compared with the skew added, as the
 * block start can lie before element 0). */
static inline size_t tail_from(size_t end, size_t first, size_t skew, size_t per)
{
    size_t from = (end + skew) & ~(per - 1);
    return from > first + skew ? from - skew : first;
}

/* One scatter per (key width, value type): keys src[lo..hi) to dst at next[digit]++, values
 * alongside when HAS_V (HAS_V 2: the values are the input indices i). first[d] is where this thread's digit d starts (next[d] on entry); kb
 * and vb hold RADIX blocks each. Element j completes a block when its slot is the last one; the
 * block is whole when it starts at or after first[d], else it is the digit's first, partial
 * block. What is left in the buffers at the end goes out partially. */
#define DEFINE_SCATTER(NAME, W, HAS_V, V)                                                       \
    static void NAME(const uint##W##_t *restrict src, uint##W##_t *restrict dst,                \
                     const V *restrict vsrc, V *restrict vdst, size_t lo, size_t hi,            \
                     uint##W##_t neg, uint##W##_t pos, int shift, unsigned mask,                \
                     size_t *restrict next, size_t *restrict first, uint##W##_t *restrict kb,   \
                     V *restrict vb, int stream)                                                \
    {                                                                                           \
        enum { KP = BLOCK / sizeof(uint##W##_t), VP = BLOCK / sizeof(V) };                      \
        size_t ks = ((uintptr_t)dst % BLOCK) / sizeof *dst;                                     \
        size_t vs = HAS_V ? ((uintptr_t)vdst % BLOCK) / sizeof(V) : 0;                          \
        for (size_t d = 0; d < RADIX; d++)                                                      \
            first[d] = next[d];                                                                 \
        for (size_t i = lo; i < hi; i++) {                                                      \
            uint##W##_t k = src[i];                                                             \
            size_t d = (flip##W(k, neg, pos) >> shift) & mask;                                  \
            size_t j = next[d]++;                                                               \
            size_t s = SLOT(j, ks, KP);                                                         \
            kb[d * KP + s] = k;                                                                 \
            if (s == KP - 1) {                                                                  \
                if (j + 1 >= first[d] + KP)                                                     \
                    block_out(dst + (j + 1 - KP), kb + d * KP, stream);                         \
                else                                                                            \
                    part_out((char *)dst, (char *)(kb + d * KP), first[d], j + 1, ks, KP,       \
                             sizeof *dst);                                                      \
            }                                                                                   \
            if (HAS_V) {                                                                        \
                size_t t = SLOT(j, vs, VP);                                                     \
                vb[d * VP + t] = HAS_V == 2 ? (V)i : vsrc[i];                                   \
                if (t == VP - 1) {                                                              \
                    if (j + 1 >= first[d] + VP)                                                 \
                        block_out(vdst + (j + 1 - VP), vb + d * VP, stream);                    \
                    else                                                                        \
                        part_out((char *)vdst, (char *)(vb + d * VP), first[d], j + 1, vs, VP,  \
                                 sizeof(V));                                                    \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        for (size_t d = 0; d < RADIX; d++) {                                                    \
            size_t end = next[d];                                                               \
            part_out((char *)dst, (char *)(kb + d * KP), tail_from(end, first[d], ks, KP), end,  \
                     ks, KP, sizeof *dst);                                                      \
            if (HAS_V)                                                                          \
                part_out((char *)vdst, (char *)(vb + d * VP), tail_from(end, first[d], vs, VP),  \
                         end, vs, VP, sizeof(V));                                               \
        }                                                                                       \
        stream_fence();                                                                         \
    }
DEFINE_SCATTER(scatter_32_k, 32, 0, uint32_t)
DEFINE_SCATTER(scatter_32_v4, 32, 1, uint32_t)
DEFINE_SCATTER(scatter_32_v8, 32, 1, uint64_t)
DEFINE_SCATTER(scatter_64_k, 64, 0, uint32_t)
DEFINE_SCATTER(scatter_64_v4, 64, 1, uint32_t)
DEFINE_SCATTER(scatter_64_v8, 64, 1, uint64_t)
DEFINE_SCATTER(scatter_32_iota, 32, 2, uint32_t)

/* Scatters keys (and values of vsize bytes, if any) src[lo..hi) by one digit. off: where each
 * digit of this chunk starts (advanced past its keys); wc: this thread's buffers, RADIX blocks
 * for keys, RADIX for values, then RADIX first positions. */
static void scatter(int width, const void *ksrc, void *kdst, const void *vsrc, void *vdst,
                    size_t vsize, size_t lo, size_t hi, key_flip fl, int shift, unsigned mask,
                    size_t *off, void *wc, int stream)
{
    void *vb = (char *)wc + (size_t)RADIX * BLOCK;
    size_t *first = (size_t *)((char *)vb + (size_t)RADIX * BLOCK);
    uint32_t neg32 = (uint32_t)fl.neg, pos32 = (uint32_t)fl.pos;
    if (width == 32 && vsize == 0)
        scatter_32_k(ksrc, kdst, NULL, NULL, lo, hi, neg32, pos32, shift, mask, off, first, wc,
                     NULL, stream);
    else if (width == 32 && vsize == 4)
        scatter_32_v4(ksrc, kdst, vsrc, vdst, lo, hi, neg32, pos32, shift, mask, off, first, wc,
                      vb, stream);
    else if (width == 32)
        scatter_32_v8(ksrc, kdst, vsrc, vdst, lo, hi, neg32, pos32, shift, mask, off, first, wc,
                      vb, stream);
    else if (vsize == 0)
        scatter_64_k(ksrc, kdst, NULL, NULL, lo, hi, fl.neg, fl.pos, shift, mask, off, first, wc,
                     NULL, stream);
    else if (vsize == 4)
        scatter_64_v4(ksrc, kdst, vsrc, vdst, lo, hi, fl.neg, fl.pos, shift, mask, off, first,
                      wc, vb, stream);
    else
        scatter_64_v8(ksrc, kdst, vsrc, vdst, lo, hi, fl.neg, fl.pos, shift, mask, off, first,
                      wc, vb, stream);
}

static size_t chunk_lo(size_t n, int t, int nt) { return (size_t)((unsigned __int128)n * t / nt); }

/* Stable LSD radix sort. Every thread owns one contiguous chunk of the input; a digit's keys go
 * out in (thread, input) order, which is input order, hence stability. One read of the keys
 * counts the digits of every pass; passes in which every key has the same digit are skipped
 * (they would only copy). Later passes need each chunk's counts in the new order: one thread
 * has them from that first read, several count their chunks again. */
static kedr_status sort_cpu(kedr_ctx *ctx, kedr_dtype t, const void *keys_in, void *keys_out,
                            const void *vals_in, void *vals_out, size_t vsize, size_t n,
                            int begin_bit, int end_bit)
{
    size_t ksize = kedr_dtype_size(t);
    int width = (int)ksize * 8;
    key_flip fl = flip_of(t);
    digit_plan dp = plan_digits(begin_bit, end_bit);
    int nt = n < SERIAL_BELOW ? 1 : ctx->threads;
    int all[MAX_PASSES], active[MAX_PASSES], nactive = 0;
    for (int p = 0; p < dp.npass; p++)
        all[p] = p;
    int stream = n * (ksize + vsize) > STREAM_ABOVE;

    size_t *cnt = calloc((size_t)nt * MAX_PASSES * RADIX, sizeof *cnt);
    size_t *off = malloc((size_t)nt * RADIX * sizeof *off);
    size_t wc_bytes = (size_t)RADIX * (2 * BLOCK + sizeof(size_t)); /* per thread */
    char *wc = aligned_alloc(BLOCK, (size_t)nt * wc_bytes);
    if (!cnt || !off || !wc) {
        free(cnt);
        free(off);
        free(wc);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_sort: out of host memory for %d histograms", nt);
    }
#pragma omp parallel for schedule(static, 1) num_threads(nt)
    for (int th = 0; th < nt; th++)
        count_keys(width, keys_in, chunk_lo(n, th, nt), chunk_lo(n, th + 1, nt), fl, &dp, all,
                   dp.npass, cnt + (size_t)th * MAX_PASSES * RADIX);
    for (int p = 0; p < dp.npass; p++) {
        int trivial = 0;
        for (int d = 0; d < RADIX && !trivial; d++) {
            size_t total = 0;
            for (int th = 0; th < nt; th++)
                total += cnt[((size_t)th * MAX_PASSES + p) * RADIX + d];
            trivial = total == n;
        }
        if (!trivial)
            active[nactive++] = p;
    }

    kedr_status s = KEDR_OK;
    void *kbuf = NULL, *vbuf = NULL;
    if (nactive == 0) {
        s = kedr_copy(ctx, keys_out, keys_in, n * ksize);
        if (s == KEDR_OK && vsize)
            s = kedr_copy(ctx, vals_out, vals_in, n * vsize);
        goto done;
    }
    if (nactive > 1) {
        s = kedr_scratch_get(ctx, &kbuf, n * ksize);
        if (s == KEDR_OK && vsize)
            s = kedr_scratch_get(ctx, &vbuf, n * vsize);
        if (s != KEDR_OK)
            goto done;
    }
    const void *ksrc = keys_in, *vsrc = vals_in;
    for (int a = 0; a < nactive; a++) {
        int p = active[a];
        /* The last pass lands in keys_out; the ones before alternate with the scratch buffer. */
        int to_out = (nactive - 1 - a) % 2 == 0;
        void *kdst = to_out ? keys_out : kbuf;
        void *vdst = to_out ? vals_out : vbuf;
        if (a > 0 && nt > 1) { /* the keys moved: count this pass's digits per chunk again */
#pragma omp parallel for schedule(static, 1) num_threads(nt)
            for (int th = 0; th < nt; th++) {
                size_t *c = cnt + ((size_t)th * MAX_PASSES + p) * RADIX;
                memset(c, 0, RADIX * sizeof *c);
                count_keys(width, ksrc, chunk_lo(n, th, nt), chunk_lo(n, th + 1, nt), fl, &dp,
                           &p, 1, c);
            }
        }
        /* Digit d of thread th starts after all smaller digits and after d in earlier chunks.
         * The counts of the first pass sit at offset p; those recounted above too. */
        size_t base = 0;
        for (int d = 0; d < RADIX; d++)
            for (int th = 0; th < nt; th++) {
                off[(size_t)th * RADIX + d] = base;
                base += cnt[((size_t)th * MAX_PASSES + p) * RADIX + d];
            }
#pragma omp parallel for schedule(static, 1) num_threads(nt)
        for (int th = 0; th < nt; th++) {
            size_t lo = chunk_lo(n, th, nt), hi = chunk_lo(n, th + 1, nt);
            scatter(width, ksrc, kdst, vsrc, vdst, vsize, lo, hi, fl, dp.shift[p], dp.mask[p],
                    off + (size_t)th * RADIX, wc + (size_t)th * wc_bytes, stream);
        }
        ksrc = kdst;
        vsrc = vdst;
    }
done:
    if (kbuf)
        kedr_scratch_put(ctx, kbuf);
    if (vbuf)
        kedr_scratch_put(ctx, vbuf);
    free(cnt);
    free(off);
    free(wc);
    return s;
}

static int overlaps(const void *a, const void *b, size_t bytes)
{
    const char *x = a, *y = b;
    return bytes && x < y + bytes && y < x + bytes;
}

static kedr_status sort_checked(const char *fn, kedr_ctx *ctx, kedr_dtype t, const void *keys_in,
                                void *keys_out, const void *vals_in, void *vals_out,
                                size_t vsize, size_t n, int begin_bit, int end_bit)
{
    KEDR_TRY(kedr_check_ptr(ctx, 1, fn, "ctx"));
    KEDR_TRY(kedr_check_dtype(t, KEDR_TYPES_ALL, fn, "t"));
    KEDR_TRY(kedr_check_ptr(keys_in, n, fn, "keys_in"));
    KEDR_TRY(kedr_check_ptr(keys_out, n, fn, "keys_out"));
    int width = (int)kedr_dtype_size(t) * 8;
    if (end_bit == 0)
        end_bit = width;
    if (end_bit < 0 || end_bit > width)
        return kedr_fail(KEDR_ERR_INVALID, "%s: end_bit %d exceeds the %d bits of %s", fn, end_bit,
                         width, kedr_dtype_name(t));
    if (begin_bit < 0 || begin_bit > end_bit)
        return kedr_fail(KEDR_ERR_INVALID,
                         "%s: begin_bit %d: expected 0 <= begin_bit <= end_bit (%d)", fn,
                         begin_bit, end_bit);
    if (overlaps(keys_in, keys_out, n * (width / 8)))
        return kedr_fail(KEDR_ERR_INVALID, "%s: keys_out overlaps keys_in (n = %zu)", fn, n);
    if (vsize) {
        KEDR_TRY(kedr_check_ptr(vals_in, n, fn, "vals_in"));
        KEDR_TRY(kedr_check_ptr(vals_out, n, fn, "vals_out"));
        if (overlaps(vals_in, vals_out, n * vsize))
            return kedr_fail(KEDR_ERR_INVALID, "%s: vals_out overlaps vals_in (n = %zu)", fn, n);
    }
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_sort_cuda(ctx, t, keys_in, keys_out, vals_in, vals_out, vsize, n, begin_bit,
                              end_bit);
#endif
    return sort_cpu(ctx, t, keys_in, keys_out, vals_in, vals_out, vsize, n, begin_bit, end_bit);
}

kedr_status kedr_sort_keys(kedr_ctx *ctx, kedr_dtype t, const void *keys_in, void *keys_out,
                           size_t n, int begin_bit, int end_bit)
{
    return sort_checked("kedr_sort_keys", ctx, t, keys_in, keys_out, NULL, NULL, 0, n, begin_bit,
                        end_bit);
}

kedr_status kedr_sort_pairs(kedr_ctx *ctx, kedr_dtype t, const void *keys_in, void *keys_out,
                            const void *vals_in, void *vals_out, size_t val_size, size_t n,
                            int begin_bit, int end_bit)
{
    if (val_size != 4 && val_size != 8)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_sort_pairs: val_size %zu: expected 4 or 8",
                         val_size);
    return sort_checked("kedr_sort_pairs", ctx, t, keys_in, keys_out, vals_in, vals_out, val_size,
                        n, begin_bit, end_bit);
}

/* ---- counting sort ------------------------------------------------------------------------ */

/* Counting sort as in the DSMC indexing of seed 003: count the items of each key, scan the
 * counts into starts, then place every item at its key's next free slot. To keep that stable in
 * parallel, each thread counts its own contiguous chunk into a private histogram and places its
 * items after those of the same key in earlier chunks. The private histograms cost
 * threads x nkeys counters, so the number of chunks is capped to keep them within n counters.
 * The four phases run in one parallel region with a barrier between them: on a machine shared
 * with other jobs every fork, join or barrier can wait for a thread that is not running, so a
 * call should have as few as it can (measured on a loaded 2-core machine: six regions per call
 * made the DSMC indexing up to 100 times slower than one thread). */
#define MAX_TEAM 256

/* Keys in random order (as when DSMC molecules cross many cells in a step) make every placement
 * above a cache miss on a counter and on perm, plus a TLB miss once perm outgrows the TLB's
 * reach. Then a two-level sort is faster: one radix pass scatters (key, index) pairs by the key's
 * top 8 bits (bits [low, low + 8) of keys < nkeys) through the write-combining blocks, and each of
 * those 256 buckets is then counting-sorted alone, with its 2^low counters and its window of perm
 * in cache. Both levels are stable, so the permutation is the same. Scratch: 8 bytes per item. */
#define TWO_LEVEL_MIN ((size_t)1 << 16) /* items; below, everything is in cache anyway */
#define TWO_LEVEL_MIN_KEYS 4096u      /* fewer keys: their counters fit in L1 */
#define TWO_LEVEL_MAX_LOW 16          /* 2^16 counters per bucket at most */

/* Whether keys look scattered: in a fixed sample of neighbouring pairs, more than half jump
 * further than the caches reach, so that the direct placement would miss on its counter and its
 * slot of perm. A jump of d keys moves about 4 d (n / nkeys + 1) bytes in perm and the counters;
 * far is beyond 256 KB. DSMC molecules that stay in or near their cell, or that drift together
 * by a few cells a step, give near neighbours; random keys give far ones. */
static int keys_scattered(const uint32_t *keys, size_t n, uint32_t nkeys)
{
    size_t samples = 4096, far = 0;
    uint64_t per_key = 4 * ((uint64_t)(n / nkeys) + 1), reach = (uint64_t)1 << 18;
    for (size_t s = 0; s < samples; s++) {
        size_t i = (size_t)((unsigned __int128)(n - 1) * s / samples);
        uint32_t a = keys[i], b = keys[i + 1];
        far += (uint64_t)(a > b ? a - b : b - a) * per_key > reach;
    }
    return far * 2 > samples;
}

static kedr_status counting_sort_two_level(kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                           uint32_t nkeys, int low, uint32_t *perm,
                                           uint32_t *starts, uint32_t *counts, size_t *n_kept)
{
    int nt = ctx->threads < MAX_TEAM ? ctx->threads : MAX_TEAM;
    uint32_t nbuckets = ((nkeys - 1) >> low) + 1;
    size_t wc_bytes = (size_t)RADIX * (2 * BLOCK + sizeof(size_t));
    size_t *cnt = calloc((size_t)nt * RADIX, sizeof *cnt);        /* all items, per chunk */
    size_t *valid = calloc((size_t)nt * RADIX, sizeof *valid);    /* keys < nkeys, per chunk */
    size_t *off = malloc((size_t)nt * RADIX * sizeof *off);
    char *wc = aligned_alloc(BLOCK, (size_t)nt * wc_bytes);
    uint32_t *ctr = malloc((size_t)nt * ((size_t)1 << low) * sizeof *ctr);
    void *tk = NULL, *ti = NULL;
    kedr_status s = KEDR_OK;
    if (!cnt || !valid || !off || !wc || !ctr)
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr_counting_sort: out of host memory for %d x %u "
                      "counters", nt, 1u << low);
    if (s == KEDR_OK)
        s = kedr_scratch_get(ctx, &tk, n * 4);
    if (s == KEDR_OK)
        s = kedr_scratch_get(ctx, &ti, n * 4);
    if (s != KEDR_OK)
        goto done;
    int stream = n * 8 > STREAM_ABOVE;
    unsigned mask = RADIX - 1;
    size_t bucket_start[RADIX + 1], bucket_base[RADIX + 1];
#pragma omp parallel num_threads(nt)
    {
        int me = omp_get_thread_num(), team = omp_get_num_threads();
        /* 1. Bucket counts of each chunk: every item, and the kept ones. */
        for (int c = me; c < nt; c += team) {
            size_t *h = cnt + (size_t)c * RADIX, *v = valid + (size_t)c * RADIX;
            for (size_t i = chunk_lo(n, c, nt), hi = chunk_lo(n, c + 1, nt); i < hi; i++) {
                uint32_t k = keys[i];
                h[(k >> low) & mask]++;
                v[(k >> low) & mask] += k < nkeys;
            }
        }
#pragma omp barrier
#pragma omp single
        {
            size_t base = 0, kept = 0;
            for (int d = 0; d < RADIX; d++) {
                bucket_start[d] = base;
                bucket_base[d] = kept;
                for (int c = 0; c < nt; c++) {
                    off[(size_t)c * RADIX + d] = base;
                    base += cnt[(size_t)c * RADIX + d];
                    kept += valid[(size_t)c * RADIX + d];
                }
            }
            bucket_start[RADIX] = base;
            bucket_base[RADIX] = kept;
            if (n_kept)
                *n_kept = kept;
        }
        /* 2. The pairs, scattered by bucket (keys of every bucket, kept or not). */
        for (int c = me; c < nt; c += team) {
            char *w = wc + (size_t)c * wc_bytes;
            size_t *first = (size_t *)(w + (size_t)RADIX * 2 * BLOCK);
            scatter_32_iota(keys, tk, NULL, ti, chunk_lo(n, c, nt), chunk_lo(n, c + 1, nt), 0, 0,
                            low, mask, off + (size_t)c * RADIX, first, (uint32_t *)w,
                            (uint32_t *)(w + (size_t)RADIX * BLOCK), stream);
        }
#pragma omp barrier
        /* 3. Each bucket alone: its keys' counts, starts, and the placement of its items. */
        uint32_t *h = ctr + (size_t)me * ((size_t)1 << low);
#pragma omp for schedule(dynamic, 1)
        for (uint32_t b = 0; b < nbuckets; b++) {
            const uint32_t *bk = (const uint32_t *)tk, *bi = (const uint32_t *)ti;
            uint32_t k0 = b << low, k1 = b + 1 < nbuckets ? (b + 1) << low : nkeys;
            size_t lo = bucket_start[b], hi = bucket_start[b + 1];
            memset(h, 0, (size_t)(k1 - k0) * sizeof *h);
            for (size_t j = lo; j < hi; j++)
                if (bk[j] < nkeys)
                    h[bk[j] - k0]++;
            uint32_t run = (uint32_t)bucket_base[b];
            for (uint32_t k = k0; k < k1; k++) {
                uint32_t c = h[k - k0];
                starts[k] = run;
                counts[k] = c;
                h[k - k0] = run;
                run += c;
            }
            for (size_t j = lo; j < hi; j++)
                if (bk[j] < nkeys)
                    perm[h[bk[j] - k0]++] = bi[j];
        }
    }
done:
    if (tk)
        kedr_scratch_put(ctx, tk);
    if (ti)
        kedr_scratch_put(ctx, ti);
    free(cnt);
    free(valid);
    free(off);
    free(wc);
    free(ctr);
    return s;
}

/* The counting sort's histogram and placement walk the keys in order, and a key repeated in a
 * row (cell keys of particles that stayed in their cell) makes each count wait for the store of
 * the one before. A thread therefore takes SORT_LANES consecutive chunks at once, each with
 * counters of its own, stepping through them side by side: their chains are independent. The
 * chunks keep input order, so the sort stays stable. With the DSMC box's cell keys (ten items a
 * key, mostly in order) this took the sort of 10^6 keys from 6.3 to 4.7 ms on one core of a
 * 2 GHz AMD EPYC (10^5: 0.46 to 0.42 ms). */
#define SORT_LANES 4

/* Chunks c0 .. c0 + lanes - 1 of n items in nt: their ranges [lo, hi) and counters h (rows
 * of hist); returns how many items each takes in the side-by-side walk (0 unless lanes is
 * SORT_LANES: the rest go one chunk after another). */
static size_t lanes_of(size_t n, uint32_t nkeys, uint32_t *hist, int nt, int c0, int lanes,
                       size_t *lo, size_t *hi, uint32_t **h)
{
    size_t m = SIZE_MAX;
    for (int l = 0; l < lanes; l++) {
        lo[l] = chunk_lo(n, c0 + l, nt);
        hi[l] = chunk_lo(n, c0 + l + 1, nt);
        h[l] = hist + (size_t)(c0 + l) * nkeys;
        m = hi[l] - lo[l] < m ? hi[l] - lo[l] : m;
    }
    return lanes == SORT_LANES ? m : 0;
}

/* hist[c][k] = the items of key k < nkeys in chunk c, for chunks c0 .. c0 + lanes - 1. */
static void count_lanes(const uint32_t *keys, size_t n, uint32_t nkeys, uint32_t *hist, int nt,
                        int c0, int lanes)
{
    size_t lo[SORT_LANES], hi[SORT_LANES];
    uint32_t *h[SORT_LANES];
    size_t m = lanes_of(n, nkeys, hist, nt, c0, lanes, lo, hi, h);
    for (int l = 0; l < lanes; l++)
        memset(h[l], 0, (size_t)nkeys * sizeof *h[l]);
    for (size_t t = 0; t < m; t++)
        for (int l = 0; l < SORT_LANES; l++) {
            uint32_t k = keys[lo[l] + t];
            if (k < nkeys)
                h[l][k]++;
        }
    for (int l = 0; l < lanes; l++)
        for (size_t i = lo[l] + m; i < hi[l]; i++)
            if (keys[i] < nkeys)
                h[l][keys[i]]++;
}

/* perm[hist[c][k]++] = i for item i of key k < nkeys in chunk c, chunks c0 .. c0 + lanes - 1. */
static void place_lanes(const uint32_t *keys, size_t n, uint32_t nkeys, uint32_t *hist, int nt,
                        int c0, int lanes, uint32_t *perm)
{
    size_t lo[SORT_LANES], hi[SORT_LANES];
    uint32_t *h[SORT_LANES];
    size_t m = lanes_of(n, nkeys, hist, nt, c0, lanes, lo, hi, h);
    for (size_t t = 0; t < m; t++)
        for (int l = 0; l < SORT_LANES; l++) {
            size_t i = lo[l] + t;
            uint32_t k = keys[i];
            if (k < nkeys)
                perm[h[l][k]++] = (uint32_t)i;
        }
    for (int l = 0; l < lanes; l++)
        for (size_t i = lo[l] + m; i < hi[l]; i++) {
            uint32_t k = keys[i];
            if (k < nkeys)
                perm[h[l][k]++] = (uint32_t)i;
        }
}

static kedr_status counting_sort_cpu(kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                     uint32_t nkeys, uint32_t *perm, uint32_t *starts,
                                     uint32_t *counts, size_t *n_kept)
{
    int low = 0;
    while (low < 32 && ((uint64_t)(nkeys - 1) >> low) >= RADIX)
        low++;
    if (n >= TWO_LEVEL_MIN && nkeys >= TWO_LEVEL_MIN_KEYS && low <= TWO_LEVEL_MAX_LOW &&
        keys_scattered(keys, n, nkeys))
        return counting_sort_two_level(ctx, keys, n, nkeys, low, perm, starts, counts, n_kept);
    int team = ctx->threads < MAX_TEAM ? ctx->threads : MAX_TEAM;
    if (n < SERIAL_BELOW && nkeys < SERIAL_BELOW)
        team = 1;
    int nt = n < SERIAL_BELOW ? 1 : team; /* chunks of the items */
    if ((size_t)nt * nkeys > n)
        nt = (int)(n / nkeys > 1 ? n / nkeys : 1);
    /* SORT_LANES chunks a thread where their counters take no more than the items */
    int lanes = (size_t)nt * SORT_LANES * nkeys <= n ? SORT_LANES : 1;
    nt *= lanes;
    uint32_t *hist = malloc((size_t)nt * nkeys * sizeof *hist);
    if (!hist)
        return kedr_fail(KEDR_ERR_NOMEM,
                         "kedr_counting_sort: out of host memory for %d x %u counters", nt, nkeys);
    uint32_t block_sum[MAX_TEAM];
#pragma omp parallel num_threads(team) if (team > 1)
    {
        int me = omp_get_thread_num(), nb = omp_get_num_threads();
        size_t klo = chunk_lo(nkeys, me, nb), khi = chunk_lo(nkeys, me + 1, nb);
        /* 1. Each chunk's histogram (a team smaller than asked for takes several chunks). */
        for (int g = me; g < nt / lanes; g += nb)
            count_lanes(keys, n, nkeys, hist, nt, g * lanes, lanes);
#pragma omp barrier
        /* 2. Per key of this thread's block: counts[k] = the sum over chunks, each chunk's
         * counter the count of k in earlier chunks; and the block's total. */
        uint32_t sum = 0;
        for (size_t k = klo; k < khi; k++) {
            uint32_t run = 0;
            for (int th = 0; th < nt; th++) {
                uint32_t c = hist[(size_t)th * nkeys + k];
                hist[(size_t)th * nkeys + k] = run;
                run += c;
            }
            counts[k] = run;
            sum += run;
        }
        block_sum[me] = sum;
#pragma omp barrier
        /* 3. starts = exclusive scan of counts, from the totals of earlier blocks; each chunk's
         * counter becomes the slot of its next item of key k, so that the placement reads one
         * random counter per item instead of two. */
        uint32_t run = 0;
        for (int b = 0; b < me; b++)
            run += block_sum[b];
        for (size_t k = klo; k < khi; k++) {
            starts[k] = run;
            for (int th = 0; th < nt; th++)
                hist[(size_t)th * nkeys + k] += run;
            run += counts[k];
        }
#pragma omp barrier
        /* 4. Placement. */
        for (int g = me; g < nt / lanes; g += nb)
            place_lanes(keys, n, nkeys, hist, nt, g * lanes, lanes, perm);
        if (me == 0) {
            uint64_t kept = 0;
            for (int b = 0; b < nb; b++)
                kept += block_sum[b];
            if (n_kept)
                *n_kept = (size_t)kept;
        }
    }
    free(hist);
    return KEDR_OK;
}

size_t kedr_counting_sort_scratch(const kedr_ctx *ctx, size_t n, uint32_t nkeys)
{
#ifdef KEDR_HAVE_CUDA
    if (ctx && KEDR_IS_CUDA(ctx))
        return prim_counting_sort_scratch_cuda(n, nkeys);
#endif
    (void)ctx;
    (void)n;
    (void)nkeys;
    return 0;
}

/* Both entry points: scratch NULL takes the context's scratch cache. */
static kedr_status counting_sort(const char *fn, kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                 uint32_t nkeys, uint32_t *perm, uint32_t *starts,
                                 uint32_t *counts, size_t *n_kept, void *work, void *scratch)
{
    KEDR_TRY(kedr_check_ptr(ctx, 1, fn, "ctx"));
    KEDR_TRY(kedr_check_ptr(keys, n, fn, "keys"));
    KEDR_TRY(kedr_check_ptr(perm, n, fn, "perm"));
    KEDR_TRY(kedr_check_ptr(starts, nkeys, fn, "starts"));
    KEDR_TRY(kedr_check_ptr(counts, nkeys, fn, "counts"));
    if (n > UINT32_MAX)
        return kedr_fail(KEDR_ERR_INVALID, "%s: n = %zu: expected n < 2^32 (perm holds u32)", fn, n);
    if (nkeys == 0) { /* every item is dropped */
        if (n_kept)
            *n_kept = 0;
        return KEDR_OK;
    }
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return prim_counting_sort_cuda(ctx, keys, n, nkeys, perm, starts, counts, n_kept, work,
                                       scratch);
#endif
    (void)work;
    (void)scratch;
    return counting_sort_cpu(ctx, keys, n, nkeys, perm, starts, counts, n_kept);
}

kedr_status kedr_counting_sort(kedr_ctx *ctx, const uint32_t *keys, size_t n, uint32_t nkeys,
                               uint32_t *perm, uint32_t *starts, uint32_t *counts,
                               size_t *n_kept)
{
    return counting_sort("kedr_counting_sort", ctx, keys, n, nkeys, perm, starts, counts, n_kept,
                         NULL, NULL);
}

kedr_status kedr_counting_sort_in(kedr_ctx *ctx, const uint32_t *keys, size_t n, uint32_t nkeys,
                                  uint32_t *perm, uint32_t *starts, uint32_t *counts,
                                  size_t *n_kept, void *work, void *scratch,
                                  size_t scratch_bytes)
{
    const char *fn = "kedr_counting_sort_in";
    size_t need = kedr_counting_sort_scratch(ctx, n, nkeys);
    if (need) {
        KEDR_TRY(kedr_check_ptr(work, n, fn, "work"));
        if (!scratch || scratch_bytes < need)
            return kedr_fail(KEDR_ERR_INVALID, "%s: scratch of %zu bytes at %p: expected at "
                             "least %zu bytes (kedr_counting_sort_scratch)", fn, scratch_bytes,
                             scratch, need);
    }
    return counting_sort(fn, ctx, keys, n, nkeys, perm, starts, counts, n_kept,
                         need ? work : NULL, need ? scratch : NULL);
}
