/* The primitives at the edges of their GPU tiles: sizes one below, at and one above one, two and
 * three tiles of every tile size the cuda kernels use (and of their warps' runs), with inputs
 * at their natural alignment and one element off it, against plain sequential references. These
 * are the cases of the tile layer's tail guards and vector paths (src/prim/tile_cuda.h): a tile
 * that is full, one with a single item, a partial warp, a misaligned input that must take the
 * item-by-item path. Sizes 0 and 1 come too. The cpu back end runs the same checks. */
#include "test_util.h"

#include <stdint.h>

/* Items a tile (or a warp's run) holds in the cuda kernels: scan 1024 .. 8192, select 1024 ..
 * 16384 by element size, reduce by key 2048 and 4096, the radix and counting sorts 384 x 8, 15,
 * 16, 20 and 24, reduce and histogram 1024 16-byte vectors a block round. */
static const size_t tiles[] = {512, 1024, 2048, 3072, 4096, 5760, 6144, 7680, 8192, 9216, 16384};
#define NTILES (sizeof tiles / sizeof tiles[0])

/* Size number k: 0, 1, then m * tile + d for m = 1, 2, 3 and d = -1, 0, 1 (3 only for the two
 * smallest tiles, to stay quick). Returns 0 when k is past the list. */
static int size_at(int k, size_t *n)
{
    if (k < 2) {
        *n = (size_t)k;
        return 1;
    }
    k -= 2;
    for (size_t t = 0; t < NTILES; t++) {
        int per = t < 2 ? 9 : 6;
        if (k < per) {
            *n = (size_t)(k / 3 + 1) * tiles[t] + (size_t)(k % 3) - 1;
            return 1;
        }
        k -= per;
    }
    return 0;
}

/* A context buffer of bytes + 32 filled with poison, and h (unless NULL) at offset off (bytes,
 * at most 16) from its start; *base receives the allocation (to free). */
static char *dev_at(kedr_ctx *ctx, const void *h, size_t bytes, size_t off, char **base)
{
    *base = tu_poisoned(ctx, bytes + 32);
    if (h && bytes)
        TU_OK(kedr_upload(ctx, *base + off, h, bytes));
    return *base + off;
}

static void fill_u32(uint32_t *x, size_t n, uint64_t seed, uint32_t mask)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (uint32_t)tu_next(&seed) & mask;
}

/* ---- scan: u32 (packed look-back), u64 and f64 (split look-back), inclusive and exclusive -- */
static void check_scan(kedr_ctx *ctx, kedr_dtype t, size_t n, int shift, int exclusive)
{
    size_t es = kedr_dtype_size(t);
    char *h = tu_host_alloc(n * es), *want = tu_host_alloc(n * es);
    uint64_t rng = 0x5CA11 + n, su = 0;
    double sd = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_next(&rng);
        double f = (double)(r % 7); /* small integers: every sum exact */
        tu_store(t, h, i, r, f);
        if (exclusive)
            tu_store(t, want, i, su, sd);
        su += t == KEDR_U32 ? (uint32_t)r : r;
        sd += f;
        if (!exclusive)
            tu_store(t, want, i, su, sd);
    }
    char *bin, *bout;
    char *in = dev_at(ctx, h, n * es, shift * es, &bin);
    char *out = dev_at(ctx, NULL, n * es, shift * es, &bout);
    kedr_status s = exclusive ? kedr_scan_exclusive(ctx, t, in, out, n, NULL)
                              : kedr_scan_inclusive(ctx, t, in, out, n, NULL);
    TU_CHECK(s == KEDR_OK, "scan %s n=%zu: %s", kedr_dtype_name(t), n, kedr_last_error());
    char *got = tu_download(ctx, out, n * es + es);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp(got + i * es, want + i * es, es) != 0;
    TU_CHECK(bad == 0, "%s %s scan %s n=%zu shift=%d: %zu of %zu wrong",
             kedr_backend_name(kedr_ctx_backend(ctx)), exclusive ? "exclusive" : "inclusive",
             kedr_dtype_name(t), n, shift, bad, n);
    TU_CHECK((unsigned char)got[n * es] == TU_POISON_BYTE, "scan %s n=%zu: wrote past the end",
             kedr_dtype_name(t), n);
    free(got);
    free(want);
    free(h);
    kedr_free(ctx, bin);
    kedr_free(ctx, bout);
}

/* ---- select and partition by flags: 1, 4, 8 and 16-byte elements -------------------------- */
static void check_select(kedr_ctx *ctx, size_t es, size_t n, int shift, int partition)
{
    char *h = tu_host_alloc(n * es), *want = tu_host_alloc(n * es);
    uint8_t *flags = tu_host_alloc(n);
    uint64_t rng = 0x5E1EC7 + n * es;
    for (size_t i = 0; i < n * es; i++)
        h[i] = (char)tu_next(&rng);
    for (size_t i = 0; i < n; i++)
        flags[i] = (uint8_t)(tu_next(&rng) % 3 == 0);
    size_t k = 0, n_true = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++)
            if ((flags[i] != 0) == (pass == 0))
                memcpy(want + k++ * es, h + i * es, es);
        if (pass == 0)
            n_true = k;
    }
    /* one element off: 16-byte elements need only 8-byte alignment */
    size_t off = (size_t)shift * (es == 16 ? 8 : es);
    char *bin, *bflags, *bout;
    char *in = dev_at(ctx, h, n * es, off, &bin);
    uint8_t *dflags = (uint8_t *)dev_at(ctx, flags, n, (size_t)shift, &bflags);
    char *out = dev_at(ctx, NULL, n * es, off, &bout);
    size_t got_n = (size_t)-1;
    kedr_status s = partition ? kedr_partition_flagged(ctx, es, in, dflags, out, n, &got_n)
                              : kedr_select_flagged(ctx, es, in, dflags, out, n, &got_n);
    TU_CHECK(s == KEDR_OK, "select n=%zu: %s", n, kedr_last_error());
    size_t m = partition ? n : n_true;
    char *got = tu_download(ctx, out, m * es + es);
    TU_CHECK(got_n == n_true, "%s %s es=%zu n=%zu shift=%d: count %zu, expected %zu",
             kedr_backend_name(kedr_ctx_backend(ctx)), partition ? "partition" : "select", es, n,
             shift, got_n, n_true);
    size_t bad = 0;
    for (size_t i = 0; i < m; i++)
        bad += memcmp(got + i * es, want + i * es, es) != 0;
    TU_CHECK(bad == 0, "%s %s es=%zu n=%zu shift=%d: %zu of %zu wrong",
             kedr_backend_name(kedr_ctx_backend(ctx)), partition ? "partition" : "select", es, n,
             shift, bad, m);
    TU_CHECK((unsigned char)got[m * es] == TU_POISON_BYTE,
             "select es=%zu n=%zu: wrote past the end", es, n);
    free(got);
    free(flags);
    free(want);
    free(h);
    kedr_free(ctx, bin);
    kedr_free(ctx, bflags);
    kedr_free(ctx, bout);
}

/* ---- reduce by key and rle: keys in runs of 1 to 9 ----------------------------------------- */
/* kt, vt: U32 or U64; op: SUM or MIN; rle: run lengths instead of values. */
static void check_bykey(kedr_ctx *ctx, kedr_dtype kt, kedr_dtype vt, kedr_op op, int rle,
                        size_t n, int shift)
{
    size_t ks = kedr_dtype_size(kt), vs = rle ? 4 : kedr_dtype_size(vt);
    uint64_t *key = tu_host_alloc(n * 8), *val = tu_host_alloc(n * 8);
    char *hk = tu_host_alloc(n * ks), *hv = tu_host_alloc(n * vs);
    uint64_t rng = 0xB4E7 + n * 31 + (uint64_t)op, k = 5;
    for (size_t i = 0; i < n;) {
        size_t len = 1 + tu_next(&rng) % 9;
        k += 1 + tu_next(&rng) % 3;
        for (size_t j = 0; j < len && i < n; j++, i++) {
            key[i] = kt == KEDR_U32 ? (uint32_t)k : k << 20;
            val[i] = tu_next(&rng);
            if (vt == KEDR_U32)
                val[i] = (uint32_t)val[i];
            tu_store(kt, hk, i, key[i], 0);
            if (!rle)
                tu_store(vt, hv, i, val[i], 0);
        }
    }
    /* reference runs */
    uint64_t *wk = tu_host_alloc(n * 8), *wv = tu_host_alloc(n * 8);
    size_t runs = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = rle ? 1 : val[i];
        if (i == 0 || key[i] != key[i - 1]) {
            wk[runs] = key[i];
            wv[runs++] = v;
        } else if (rle || op == KEDR_OP_SUM) {
            wv[runs - 1] += v;
        } else if (v < wv[runs - 1]) {
            wv[runs - 1] = v;
        }
    }
    char *bk, *bv = NULL, *bko, *bvo;
    char *dk = dev_at(ctx, hk, n * ks, shift * ks, &bk);
    char *dv = rle ? NULL : dev_at(ctx, hv, n * vs, shift * vs, &bv);
    char *ko = dev_at(ctx, NULL, n * ks, shift * ks, &bko);
    char *vo = dev_at(ctx, NULL, n * vs, shift * vs, &bvo);
    size_t got_runs = (size_t)-1;
    kedr_status s = rle ? kedr_run_length_encode(ctx, kt, dk, n, ko, (uint32_t *)vo, &got_runs)
                        : kedr_reduce_by_key(ctx, kt, dk, vt, dv, n, op, ko, vo, &got_runs);
    const char *what = rle ? "rle" : op == KEDR_OP_SUM ? "sum by key" : "min by key";
    TU_CHECK(s == KEDR_OK, "%s n=%zu: %s", what, n, kedr_last_error());
    TU_CHECK(got_runs == runs, "%s %s %s/%s n=%zu shift=%d: %zu runs, expected %zu",
             kedr_backend_name(kedr_ctx_backend(ctx)), what, kedr_dtype_name(kt),
             kedr_dtype_name(vt), n, shift, got_runs, runs);
    char *gk = tu_download(ctx, ko, runs * ks + 1), *gv = tu_download(ctx, vo, runs * vs + 1);
    size_t bad = 0;
    for (size_t r = 0; r < runs && got_runs == runs; r++) {
        uint64_t a = ks == 4 ? ((uint32_t *)gk)[r] : ((uint64_t *)gk)[r];
        uint64_t b = vs == 4 ? ((uint32_t *)gv)[r] : ((uint64_t *)gv)[r];
        uint64_t w = vs == 4 ? (uint32_t)wv[r] : wv[r];
        bad += a != wk[r] || b != w;
    }
    TU_CHECK(bad == 0, "%s %s %s/%s n=%zu shift=%d: %zu of %zu runs wrong",
             kedr_backend_name(kedr_ctx_backend(ctx)), what, kedr_dtype_name(kt),
             kedr_dtype_name(vt), n, shift, bad, runs);
    TU_CHECK((unsigned char)gk[runs * ks] == TU_POISON_BYTE &&
                 (unsigned char)gv[runs * vs] == TU_POISON_BYTE,
             "%s n=%zu: wrote past the last run", what, n);
    free(gk);
    free(gv);
    free(wk);
    free(wv);
    free(hk);
    free(hv);
    free(key);
    free(val);
    kedr_free(ctx, bk);
    kedr_free(ctx, bv);
    kedr_free(ctx, bko);
    kedr_free(ctx, bvo);
}

/* ---- radix sort: u32 and u64 keys, u32 pairs (values the indices, so stability shows) ----- */
static int cmp_pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

static void check_sort(kedr_ctx *ctx, kedr_dtype t, int pairs, size_t n, int shift)
{
    size_t es = kedr_dtype_size(t);
    uint64_t *ref = tu_host_alloc(n * 16), rng = 0x5027 + n;
    char *hk = tu_host_alloc(n * es);
    uint32_t *hv = tu_host_alloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        /* few distinct keys, so runs of equal keys cross the tiles */
        uint64_t k = tu_next(&rng) % 97 * 0x01000193ull;
        if (t == KEDR_U64)
            k = k << 24 | (k & 1);
        tu_store(t, hk, i, k, 0);
        ref[2 * i] = t == KEDR_U32 ? (uint32_t)k : k;
        ref[2 * i + 1] = i;
        hv[i] = (uint32_t)i;
    }
    qsort(ref, n, 16, cmp_pair);
    char *bk, *bv, *bko, *bvo;
    char *dk = dev_at(ctx, hk, n * es, shift * es, &bk);
    char *dv = dev_at(ctx, hv, n * 4, shift * 4, &bv);
    char *ko = dev_at(ctx, NULL, n * es, 0, &bko), *vo = dev_at(ctx, NULL, n * 4, 0, &bvo);
    kedr_status s = pairs ? kedr_sort_pairs(ctx, t, dk, ko, dv, vo, 4, n, 0, 0)
                          : kedr_sort_keys(ctx, t, dk, ko, n, 0, 0);
    TU_CHECK(s == KEDR_OK, "sort n=%zu: %s", n, kedr_last_error());
    char *gk = tu_download(ctx, ko, n * es);
    uint32_t *gv = tu_download(ctx, vo, n * 4);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = es == 4 ? ((uint32_t *)gk)[i] : ((uint64_t *)gk)[i];
        bad += k != ref[2 * i] || (pairs && gv[i] != ref[2 * i + 1]);
    }
    TU_CHECK(bad == 0, "%s sort %s %s n=%zu shift=%d: %zu of %zu wrong",
             kedr_backend_name(kedr_ctx_backend(ctx)), pairs ? "pairs" : "keys",
             kedr_dtype_name(t), n, shift, bad, n);
    free(gk);
    free(gv);
    free(hk);
    free(hv);
    free(ref);
    kedr_free(ctx, bk);
    kedr_free(ctx, bv);
    kedr_free(ctx, bko);
    kedr_free(ctx, bvo);
}

/* ---- counting sort: few keys (atomic counts), more (key starts found by the last pass), and
 * in the caller's memory (keys read through the indices); about 1 item in 20 dropped ------- */
static void check_counting(kedr_ctx *ctx, uint32_t nkeys, int in_place, size_t n, int shift)
{
    uint32_t *keys = tu_host_alloc(n * 4), *want = tu_host_alloc(n * 4);
    uint32_t *count = calloc(nkeys, 4), *start = tu_host_alloc(nkeys * 4);
    uint64_t rng = 0xC0DE + n + nkeys;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_next(&rng);
        keys[i] = r % 20 == 0 ? (r % 40 == 0 ? KEDR_KEY_DROP : nkeys + (uint32_t)(r >> 40))
                              : (uint32_t)(r >> 32) % nkeys;
        if (keys[i] < nkeys)
            count[keys[i]]++;
    }
    size_t kept = 0;
    for (uint32_t k = 0; k < nkeys; k++) {
        start[k] = (uint32_t)kept;
        kept += count[k];
    }
    uint32_t *next = tu_host_alloc(nkeys * 4);
    memcpy(next, start, nkeys * 4);
    for (size_t i = 0; i < n; i++)
        if (keys[i] < nkeys)
            want[next[keys[i]]++] = (uint32_t)i;
    char *bk, *bp, *bs, *bc, *bw = NULL, *bx = NULL;
    uint32_t *dk = (uint32_t *)dev_at(ctx, keys, n * 4, shift * 4, &bk);
    uint32_t *dp = (uint32_t *)dev_at(ctx, NULL, n * 4, 0, &bp);
    uint32_t *ds = (uint32_t *)dev_at(ctx, NULL, nkeys * 4, 0, &bs);
    uint32_t *dc = (uint32_t *)dev_at(ctx, NULL, nkeys * 4, 0, &bc);
    size_t got_kept = (size_t)-1;
    kedr_status s;
    if (in_place) {
        size_t sb = kedr_counting_sort_scratch(ctx, n, nkeys);
        void *work = dev_at(ctx, NULL, n * 4, 0, &bw), *scratch = dev_at(ctx, NULL, sb, 0, &bx);
        s = kedr_counting_sort_in(ctx, dk, n, nkeys, dp, ds, dc, &got_kept, work, scratch, sb);
    } else {
        s = kedr_counting_sort(ctx, dk, n, nkeys, dp, ds, dc, &got_kept);
    }
    const char *be = kedr_backend_name(kedr_ctx_backend(ctx));
    TU_CHECK(s == KEDR_OK, "counting sort n=%zu: %s", n, kedr_last_error());
    uint32_t *gp = tu_download(ctx, dp, n * 4), *gs = tu_download(ctx, ds, nkeys * 4);
    uint32_t *gc = tu_download(ctx, dc, nkeys * 4);
    size_t bad = got_kept != kept;
    for (size_t j = 0; j < kept && !bad; j++)
        bad += gp[j] != want[j];
    for (uint32_t k = 0; k < nkeys; k++)
        bad += gs[k] != start[k] || gc[k] != count[k];
    TU_CHECK(bad == 0, "%s counting sort%s nkeys=%u n=%zu shift=%d: %zu kept (want %zu), %zu "
             "wrong", be, in_place ? " in" : "", nkeys, n, shift, got_kept, kept, bad);
    free(gp);
    free(gs);
    free(gc);
    free(next);
    free(start);
    free(count);
    free(want);
    free(keys);
    kedr_free(ctx, bk);
    kedr_free(ctx, bp);
    kedr_free(ctx, bs);
    kedr_free(ctx, bc);
    kedr_free(ctx, bw);
    kedr_free(ctx, bx);
}

/* ---- reduce (u32 sum, f64 sum of small integers: exact) and histogram (u32, 256 bins) ------ */
static void check_reduce_hist(kedr_ctx *ctx, size_t n, int shift)
{
    uint32_t *h = tu_host_alloc(n * 4);
    double *hd = tu_host_alloc(n * 8);
    fill_u32(h, n, 0x4ED + n, 0xFFFFFFFFu);
    uint32_t want = 0, counts[256] = {0}, got_counts[256];
    double wantd = 0;
    for (size_t i = 0; i < n; i++) {
        want += h[i];
        hd[i] = (double)(h[i] % 1000);
        wantd += hd[i];
        counts[h[i] >> 24]++;
    }
    char *b, *bd;
    char *in = dev_at(ctx, h, n * 4, shift * 4, &b), *ind = dev_at(ctx, hd, n * 8, shift * 8, &bd);
    uint32_t got = ~want;
    double gotd = -1;
    TU_OK(kedr_reduce(ctx, KEDR_U32, KEDR_OP_SUM, in, n, &got));
    TU_OK(kedr_reduce(ctx, KEDR_F64, KEDR_OP_SUM, ind, n, &gotd));
    TU_CHECK(got == want && gotd == wantd, "%s reduce n=%zu shift=%d: u32 %u (want %u), f64 %.17g "
             "(want %.17g)", kedr_backend_name(kedr_ctx_backend(ctx)), n, shift, got, want, gotd,
             wantd);
    uint32_t *dc = tu_poisoned(ctx, sizeof counts);
    TU_OK(kedr_histogram_even(ctx, KEDR_U32, in, n, 0.0, 4294967296.0, 256, dc));
    TU_OK(kedr_download(ctx, got_counts, dc, sizeof got_counts));
    TU_CHECK(memcmp(got_counts, counts, sizeof counts) == 0, "%s histogram n=%zu shift=%d: "
             "counts differ", kedr_backend_name(kedr_ctx_backend(ctx)), n, shift);
    free(h);
    free(hd);
    kedr_free(ctx, b);
    kedr_free(ctx, bd);
    kedr_free(ctx, dc);
}

int main(void)
{
    kedr_backend backends[2];
    int nb = tu_backends(backends);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(backends[b]);
        size_t n;
        for (int k = 0; size_at(k, &n); k++)
            for (int shift = 0; shift < 2; shift++) {
                check_scan(ctx, KEDR_U32, n, shift, k % 2);
                check_scan(ctx, KEDR_U64, n, shift, (k + 1) % 2);
                check_scan(ctx, KEDR_F64, n, shift, k % 2);
                static const size_t sizes[] = {1, 4, 8, 16};
                for (int e = 0; e < 4; e++)
                    check_select(ctx, sizes[e], n, shift, (k + e) % 2);
                check_bykey(ctx, KEDR_U32, KEDR_U32, KEDR_OP_SUM, 0, n, shift);
                check_bykey(ctx, KEDR_U32, KEDR_U64, KEDR_OP_SUM, 0, n, shift);
                check_bykey(ctx, KEDR_U64, KEDR_U32, KEDR_OP_MIN, 0, n, shift);
                check_bykey(ctx, KEDR_U64, KEDR_U64, KEDR_OP_SUM, 1, n, shift);
                check_sort(ctx, KEDR_U32, k % 2, n, shift);
                check_sort(ctx, KEDR_U64, 0, n, shift);
                check_counting(ctx, 200, 0, n, shift);
                /* nkeys >= 2^16: the last pass finds the key starts (cuda) */
                check_counting(ctx, k % 2 ? 5000 : 70000, shift, n, shift);
                check_reduce_hist(ctx, n, shift);
            }
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_prim_tiles");
}
