/* kedr_scan_inclusive / kedr_scan_exclusive against a sequential reference: every type, the
 * awkward sizes, several seeds and distributions, in place and out of place, misaligned
 * buffers, the optional total, and argument errors. */
#include "test_util.h"

#include <float.h>
#include <stdint.h>

enum { D_RANDOM, D_FEW, D_EQUAL, D_SORTED, D_REVERSE, D_SIGNED, D_COUNT };
static const char *const dist_name[D_COUNT] = {"random", "few", "equal", "sorted", "reverse",
                                               "signed"};
static const kedr_dtype types[] = {KEDR_U32, KEDR_U64, KEDR_I32, KEDR_F32, KEDR_F64};

/* Element i of distribution d as the type's bits. Integers use the full range (sums wrap);
 * floats mix signs and magnitudes, -0.0 included in D_SIGNED. */
static void fill(kedr_dtype t, int d, void *buf, size_t n, uint64_t seed)
{
    uint64_t rng = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_next(&rng);
        double f = 0;
        uint64_t u = 0;
        switch (d) {
        case D_RANDOM: u = r; f = tu_uniform(&rng) * 2 - 1; break;
        case D_FEW: u = r % 3; f = (double)(r % 3) - 1; break;
        case D_EQUAL: u = UINT64_MAX; f = 0.1; break;
        case D_SORTED: u = i; f = (double)i; break;
        case D_REVERSE: u = n - i; f = -(double)(n - i) * 1e-3; break;
        case D_SIGNED:
            u = (uint64_t)-(int64_t)(r % 1000);
            f = r % 5 == 0 ? -0.0 : ldexp(tu_uniform(&rng) - 0.5, (int)(r % 30) - 15);
            break;
        }
        tu_store(t, buf, i, u, f);
    }
}

/* Checks out against the sequential prefix sums of in. Integers exactly (wrapping). Floats:
 * double accumulation of m terms in any association order errs by at most (m - 1) * 2^-53 *
 * sum|x| (Higham, first order), here with m = i + 1 for the inclusive prefix at i; f32 adds the
 * final rounding to float, 2^-24 relative. Returns the number of mismatches and reports the
 * first. Also checks *total when given. */
static size_t compare(kedr_dtype t, int exclusive, const void *in, const void *out, size_t n,
                      const void *total, const char *what)
{
    size_t bad = 0;
    if (t == KEDR_F32 || t == KEDR_F64) {
        long double s = 0, a = 0;
        for (size_t i = 0; i <= n; i++) {
            long double before = s, before_a = a;
            size_t terms = i;
            if (i < n) {
                long double x = t == KEDR_F32 ? ((const float *)in)[i] : ((const double *)in)[i];
                s += x;
                a += fabsl(x);
            }
            long double want = exclusive ? before : s, mag = exclusive ? before_a : a;
            if (!exclusive)
                terms++;
            const void *got_p = i < n ? out : total;
            size_t k = i < n ? i : 0;
            if (!got_p)
                continue;
            if (i == n) { /* the total: all n terms */
                want = s;
                mag = a;
                terms = n;
            }
            long double got = t == KEDR_F32 ? ((const float *)got_p)[k] : ((const double *)got_p)[k];
            long double bound = (long double)terms * 0x1p-53L * mag;
            if (t == KEDR_F32)
                bound += 0x1p-24L * fabsl(want) + FLT_TRUE_MIN;
            if (!(fabsl(got - want) <= bound) && bad++ == 0)
                TU_CHECK(0, "%s: %s %zu = %.17Lg, expected %.17Lg (bound %.3Lg)", what,
                         i < n ? "element" : "total", i, got, want, bound);
        }
        return bad;
    }
    uint64_t s = 0;
    for (size_t i = 0; i <= n; i++) {
        uint64_t before = s;
        if (i < n)
            s += t == KEDR_U64 ? ((const uint64_t *)in)[i] : ((const uint32_t *)in)[i];
        if (t != KEDR_U64)
            s = (uint32_t)s;
        uint64_t want = i < n && exclusive ? before : s, got;
        if (i < n)
            got = t == KEDR_U64 ? ((const uint64_t *)out)[i] : ((const uint32_t *)out)[i];
        else if (total)
            got = t == KEDR_U64 ? *(const uint64_t *)total : *(const uint32_t *)total;
        else
            continue;
        if (got != want && bad++ == 0)
            TU_CHECK(0, "%s: %s %zu = %llu, expected %llu", what, i < n ? "element" : "total", i,
                     (unsigned long long)got, (unsigned long long)want);
    }
    return bad;
}

/* One scan of one input. mode 0: out of place; 1: in place; 2: in and out shifted by one
 * element (not 16-byte aligned); 3: only out shifted. */
static void check_one(kedr_ctx *ctx, kedr_dtype t, int exclusive, int mode, int d, size_t n,
                      uint64_t seed, int want_total)
{
    static const char *const mode_name[] = {"out of place", "in place", "both misaligned",
                                            "out misaligned"};
    size_t es = kedr_dtype_size(t), bytes = n * es;
    char *h = tu_host_alloc(bytes);
    fill(t, d, h, n, seed);
    char *din = tu_poisoned(ctx, bytes + es), *dout = NULL, *in, *out;
    in = din + (mode == 2 ? es : 0);
    TU_OK(kedr_upload(ctx, in, h, bytes));
    if (mode == 1) {
        out = in;
    } else {
        dout = tu_poisoned(ctx, bytes + 2 * es);
        out = dout + (mode >= 2 ? es : 0);
    }
    unsigned char total[8];
    memset(total, TU_POISON_BYTE, sizeof total);
    kedr_status s = exclusive ? kedr_scan_exclusive(ctx, t, in, out, n, want_total ? total : NULL)
                              : kedr_scan_inclusive(ctx, t, in, out, n, want_total ? total : NULL);
    char what[200];
    snprintf(what, sizeof what, "%s %s %s, %s, %s n=%zu seed=%llu",
             kedr_backend_name(kedr_ctx_backend(ctx)), exclusive ? "exclusive" : "inclusive",
             kedr_dtype_name(t), mode_name[mode], dist_name[d], n, (unsigned long long)seed);
    TU_CHECK(s == KEDR_OK, "%s: %s", what, kedr_last_error());
    char *got = tu_download(ctx, out, bytes);
    size_t bad = compare(t, exclusive, h, got, n, want_total ? total : NULL, what);
    TU_CHECK(bad == 0, "%s: %zu mismatches", what, bad);
    /* The element after the output stays untouched. */
    unsigned char after[8];
    if (dout) {
        TU_OK(kedr_download(ctx, after, out + bytes, es));
        TU_CHECK(after[0] == TU_POISON_BYTE && after[es - 1] == TU_POISON_BYTE,
                 "%s: wrote past the end", what);
    }
    free(got);
    free(h);
    kedr_free(ctx, din);
    kedr_free(ctx, dout);
}

static void check_errors(kedr_ctx *ctx)
{
    uint32_t x = 1, total;
    void *d = tu_upload(ctx, &x, sizeof x);
    kedr_status s = kedr_scan_inclusive(ctx, KEDR_U32, NULL, d, 3, NULL);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL in: %s", kedr_status_name(s));
    s = kedr_scan_exclusive(ctx, KEDR_U32, d, NULL, 3, NULL);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL out: %s", kedr_status_name(s));
    s = kedr_scan_exclusive(ctx, (kedr_dtype)-1, d, d, 1, NULL);
    TU_CHECK(s == KEDR_ERR_UNSUPPORTED && *kedr_last_error(), "bad dtype: %s",
             kedr_status_name(s));
    s = kedr_scan_inclusive(NULL, KEDR_U32, d, d, 1, NULL);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL ctx: %s", kedr_status_name(s));
    total = 99;
    TU_OK(kedr_scan_inclusive(ctx, KEDR_U32, NULL, NULL, 0, &total));
    TU_CHECK(total == 0, "total of nothing = %u", total);
    double ftotal = 5;
    TU_OK(kedr_scan_exclusive(ctx, KEDR_F64, NULL, NULL, 0, &ftotal));
    TU_CHECK(ftotal == 0, "f64 total of nothing = %g", ftotal);
    kedr_free(ctx, d);
}

int main(void)
{
    kedr_backend backends[2];
    int nb = tu_backends(backends);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(backends[b]);
        check_errors(ctx);
        int k = 0;
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
            for (size_t si = 0; si < TU_NSIZES; si++) {
                size_t n = tu_sizes[si];
                int seeds = n > 5000 ? 1 : 3;
                for (int d = 0; d < D_COUNT; d++)
                    for (int seed = 1; seed <= seeds; seed++, k++)
                        /* Rotate through modes and inclusive/exclusive so that each size sees
                         * all of them across distributions. */
                        check_one(ctx, types[ti], k % 2, (k / 2) % 4, d, n,
                                  (uint64_t)seed * 7919 + si, k % 3 != 0);
            }
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
            check_one(ctx, types[ti], 1, 0, D_RANDOM, TU_LARGE, 11, 1);
            check_one(ctx, types[ti], 0, (int)ti % 4, D_SIGNED, TU_LARGE, 12, 1);
        }
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_scan");
}
