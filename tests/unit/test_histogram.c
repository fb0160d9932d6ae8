/* kedr_histogram_even against a sequential reference: every sample type, the awkward sizes, bin
 * counts from 1 to 2^20, integer ranges that take each of the library's arithmetic paths (shift,
 * 32-, 64- and 128-bit), adversarial inputs (all equal, few distinct, sorted, reversed, values at
 * lo, just below hi, at hi, NaN, infinities, -0.0), misaligned inputs, and argument errors.
 * Every back end must match the one reference exactly, so cpu and cuda agree bin for bin. */
#include "test_util.h"

#include <float.h>

static const kedr_dtype types[] = {KEDR_U32, KEDR_I32, KEDR_F32, KEDR_F64};
static const uint32_t bin_counts[] = {1, 2, 7, 256, 1000, 4096, 65536, 1u << 20};
#define NBINS (sizeof bin_counts / sizeof bin_counts[0])

/* Sample ranges [lo, hi): the integer ones reach every bin arithmetic of the library. */
typedef struct {
    double lo, hi;
} range;
static const range int_ranges[] = {
    {0, 256},                                  /* width 1 with 256 bins: shift */
    {-1000, 1000},                             /* small, often not divisible: 32-bit */
    {-7, 1234567},                             /* odd width */
    {0, 4294967296.0},                         /* the whole u32 range: shift for 2^k bins */
    {-2147483648.0, 2147483648.0},             /* the whole i32 range */
    {-1099511627776.0, 1099511627776.0},       /* +-2^40: 64-bit */
    {-9007199254740992.0, 9007199254740991.0}, /* -2^53 .. 2^53 - 1: 128-bit for odd bins */
};
static const range real_ranges[] = {{-1, 1}, {0, 1000}, {-3.5e6, 1e-3}, {1e-300, 1e300}};
#define NINT (sizeof int_ranges / sizeof int_ranges[0])
#define NREAL (sizeof real_ranges / sizeof real_ranges[0])

enum { D_RANDOM, D_FEW, D_EQUAL, D_SORTED, D_REVERSED, D_SPECIAL, ND };
static const char *dist_name[ND] = {"random", "few", "equal", "sorted", "reversed", "special"};

static int is_int(kedr_dtype t) { return t == KEDR_U32 || t == KEDR_I32; }

static double type_min(kedr_dtype t) { return t == KEDR_U32 ? 0 : -2147483648.0; }
static double type_max(kedr_dtype t) { return t == KEDR_U32 ? 4294967295.0 : 2147483647.0; }

/* Stores v, a double, as element i of a buffer of type t (integers clamped to the type). */
static void put(kedr_dtype t, void *buf, size_t i, double v)
{
    if (is_int(t)) {
        if (!(v >= type_min(t)))
            v = type_min(t);
        if (v > type_max(t))
            v = type_max(t);
        v = floor(v);
    }
    switch (t) {
    case KEDR_U32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case KEDR_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case KEDR_F32: ((float *)buf)[i] = (float)v; break;
    default: ((double *)buf)[i] = v; break;
    }
}

/* A sample value near [lo, hi): mostly inside, some below and above. */
static double near_range(uint64_t *rs, double lo, double hi)
{
    double w = hi - lo;
    return lo - w / 8 + tu_uniform(rs) * w * 1.25;
}

static void fill(kedr_dtype t, int dist, void *buf, size_t n, double lo, double hi, uint64_t seed)
{
    uint64_t rs = seed;
    /* Random values are drawn around the part of [lo, hi) that the type can hold. */
    double glo = lo, ghi = hi;
    if (is_int(t)) {
        glo = fmax(lo, type_min(t));
        ghi = fmin(hi, type_max(t) + 1);
    }
    double few[8];
    for (int k = 0; k < 8; k++)
        few[k] = near_range(&rs, glo, ghi);
    double w = ghi - glo;
    for (size_t i = 0; i < n; i++) {
        double v;
        switch (dist) {
        case D_FEW: v = few[tu_next(&rs) % 8]; break;
        case D_EQUAL: v = few[0]; break;
        case D_SORTED: v = glo - w / 16 + w * 1.125 * (double)i / (double)n; break;
        case D_REVERSED: v = ghi + w / 16 - w * 1.125 * (double)i / (double)n; break;
        case D_SPECIAL: {
            double s[] = {lo, hi, nextafter(hi, -INFINITY), nextafter(lo, -INFINITY), lo - 1,
                          hi - 1, lo + 1, -0.0, 0.0, -1.0, -1e30, 1e30, NAN, INFINITY,
                          -INFINITY, (lo + hi) / 2, near_range(&rs, glo, ghi)};
            v = s[tu_next(&rs) % (sizeof s / sizeof s[0])];
            break;
        }
        default:
            v = near_range(&rs, glo, ghi);
            break;
        }
        if (is_int(t) && !isfinite(v))
            v = v > 0 ? type_max(t) : type_min(t);
        put(t, buf, i, v);
    }
}

/* The documented bin of sample i, or -1 when it is not counted. */
static long long ref_bin(kedr_dtype t, const void *buf, size_t i, double lo, double hi,
                         uint32_t bins)
{
    if (is_int(t)) {
        int64_t x = t == KEDR_U32 ? (int64_t)((const uint32_t *)buf)[i]
                                  : (int64_t)((const int32_t *)buf)[i];
        int64_t l = (int64_t)lo, h = (int64_t)hi;
        if (x < l || x >= h)
            return -1;
        return (long long)((unsigned __int128)(uint64_t)(x - l) * bins / (uint64_t)(h - l));
    }
    double x = t == KEDR_F32 ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
    if (!(x >= lo && x < hi))
        return -1;
    double b = floor((x - lo) * ((double)bins / (hi - lo)));
    return b >= bins ? bins - 1 : (long long)b;
}

static long long run_checked;

/* One histogram on ctx, compared bin by bin with the reference. offset (elements) misaligns the
 * input to exercise the unaligned ends. */
static void check_one(kedr_ctx *ctx, kedr_dtype t, int dist, size_t n, double lo, double hi,
                      uint32_t bins, uint64_t seed, size_t offset)
{
    size_t es = kedr_dtype_size(t);
    unsigned char *h_in = tu_host_alloc((n + offset) * es);
    memset(h_in, 0, offset * es);
    fill(t, dist, h_in + offset * es, n, lo, hi, seed);
    uint32_t *want = calloc(bins, sizeof *want);
    for (size_t i = 0; i < n; i++) {
        long long b = ref_bin(t, h_in + offset * es, i, lo, hi, bins);
        if (b >= 0)
            want[b]++;
    }
    unsigned char *d_in = tu_upload(ctx, h_in, (n + offset) * es);
    uint32_t *d_counts = tu_poisoned(ctx, (size_t)bins * sizeof *d_counts);
    kedr_status s = kedr_histogram_even(ctx, t, d_in + offset * es, n, lo, hi, bins, d_counts);
    TU_CHECK(s == KEDR_OK, "%s %s n=%zu bins=%u [%g, %g): %s", kedr_dtype_name(t),
             dist_name[dist], n, bins, lo, hi, kedr_last_error());
    uint32_t *got = tu_download(ctx, d_counts, (size_t)bins * sizeof *got);
    size_t bad = 0, first = 0;
    for (uint32_t b = 0; b < bins; b++)
        if (got[b] != want[b] && bad++ == 0)
            first = b;
    TU_CHECK(bad == 0,
             "%s %s: %s n=%zu offset=%zu bins=%u [%.17g, %.17g): %zu bins differ, first bin %zu "
             "got %u want %u",
             kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t), dist_name[dist], n,
             offset, bins, lo, hi, bad, first, got[first], want[first]);
    run_checked++;
    free(got);
    free(want);
    free(h_in);
    kedr_free(ctx, d_in);
    kedr_free(ctx, d_counts);
}

static range pick_range(kedr_dtype t, unsigned k)
{
    return is_int(t) ? int_ranges[k % NINT] : real_ranges[k % NREAL];
}

static void check_errors(kedr_ctx *ctx)
{
    uint32_t *d_counts = tu_poisoned(ctx, 16 * sizeof *d_counts);
    float *d_in = tu_poisoned(ctx, 16 * sizeof *d_in);
    struct {
        kedr_dtype t;
        const void *in;
        size_t n;
        double lo, hi;
        uint32_t bins;
        uint32_t *counts;
        kedr_status want;
        const char *what;
    } cases[] = {
        {KEDR_F32, NULL, 5, 0, 1, 4, d_counts, KEDR_ERR_INVALID, "in NULL"},
        {KEDR_F32, d_in, 5, 0, 1, 4, NULL, KEDR_ERR_INVALID, "counts NULL"},
        {KEDR_F32, d_in, 5, 0, 1, 0, d_counts, KEDR_ERR_INVALID, "bins 0"},
        {KEDR_F32, d_in, 5, 1, 1, 4, d_counts, KEDR_ERR_INVALID, "lo == hi"},
        {KEDR_F32, d_in, 5, 2, 1, 4, d_counts, KEDR_ERR_INVALID, "lo > hi"},
        {KEDR_F32, d_in, 5, NAN, 1, 4, d_counts, KEDR_ERR_INVALID, "lo NaN"},
        {KEDR_F64, d_in, 5, 0, INFINITY, 4, d_counts, KEDR_ERR_INVALID, "hi inf"},
        {KEDR_F64, d_in, 5, 0, 1e-320, 4, d_counts, KEDR_ERR_INVALID, "scale inf"},
        {KEDR_I32, d_in, 5, 0.5, 10, 4, d_counts, KEDR_ERR_INVALID, "lo not integral"},
        {KEDR_U32, d_in, 5, 0, 10.25, 4, d_counts, KEDR_ERR_INVALID, "hi not integral"},
        {KEDR_U32, d_in, 5, 0, 1e17, 4, d_counts, KEDR_ERR_INVALID, "hi beyond 2^53"},
        {KEDR_U64, d_in, 5, 0, 1, 4, d_counts, KEDR_ERR_UNSUPPORTED, "u64 samples"},
        {(kedr_dtype)99, d_in, 5, 0, 1, 4, d_counts, KEDR_ERR_UNSUPPORTED, "bad dtype"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kedr_fail(KEDR_OK, "%s", "");
        kedr_status s = kedr_histogram_even(ctx, cases[k].t, cases[k].in, cases[k].n, cases[k].lo,
                                            cases[k].hi, cases[k].bins, cases[k].counts);
        TU_CHECK(s == cases[k].want && kedr_last_error()[0], "%s: got %s (%s)", cases[k].what,
                 kedr_status_name(s), kedr_last_error());
    }
    TU_CHECK(kedr_histogram_even(NULL, KEDR_F32, d_in, 5, 0, 1, 4, d_counts) == KEDR_ERR_INVALID,
             "ctx NULL accepted");
    /* n = 0 with a NULL input is fine and clears the counts. */
    TU_OK(kedr_histogram_even(ctx, KEDR_F32, NULL, 0, 0, 1, 16, d_counts));
    uint32_t *got = tu_download(ctx, d_counts, 16 * sizeof *got);
    int zero = 1;
    for (int b = 0; b < 16; b++)
        zero &= got[b] == 0;
    TU_CHECK(zero, "n = 0 did not clear counts");
    free(got);
    kedr_free(ctx, d_counts);
    kedr_free(ctx, d_in);
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int bi = 0; bi < nb; bi++) {
        kedr_ctx *ctx = tu_ctx(list[bi]);
        uint64_t seed = 1;
        run_checked = 0;
        /* Every type at every awkward size, cycling through distributions, ranges and bins. */
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
            for (size_t si = 0; si < TU_NSIZES; si++)
                for (int rep = 0; rep < 3; rep++) {
                    unsigned k = (unsigned)(si * 3 + rep + ti);
                    range r = pick_range(types[ti], k);
                    check_one(ctx, types[ti], k % ND, tu_sizes[si], r.lo, r.hi,
                              bin_counts[(k * 5 + rep) % NBINS], seed++, k % 4);
                }
        /* Every bin count, range and distribution at one mid size. */
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
            for (size_t bi2 = 0; bi2 < NBINS; bi2++)
                for (unsigned k = 0; k < (is_int(types[ti]) ? NINT : NREAL); k++) {
                    range r = pick_range(types[ti], k);
                    check_one(ctx, types[ti], (int)((bi2 + k) % ND), 65537, r.lo, r.hi,
                              bin_counts[bi2], seed++, (bi2 + k) % 4);
                }
        /* Odd bin counts that force the 128-bit path, and the special values at each type. */
        check_one(ctx, KEDR_I32, D_RANDOM, 100003, int_ranges[NINT - 1].lo,
                  int_ranges[NINT - 1].hi, 65535, seed++, 0);
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
            for (int dist = 0; dist < ND; dist++)
                check_one(ctx, types[ti], dist, 4095, -10, 90, 7, seed++, 1);
        /* Large: the benchmark's shape (u32, 256 bins), and floats. */
        check_one(ctx, KEDR_U32, D_RANDOM, TU_LARGE, 0, 4294967296.0, 256, seed++, 0);
        check_one(ctx, KEDR_F32, D_RANDOM, TU_LARGE, -1, 1, 1000, seed++, 3);
        check_one(ctx, KEDR_I32, D_FEW, TU_LARGE, -1000, 1000, 4096, seed++, 1);
        printf("  %lld histograms checked\n", run_checked);
        check_errors(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_histogram");
}
