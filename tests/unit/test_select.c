/* kedr_select_flagged, kedr_select_if, kedr_partition_flagged, kedr_partition_if against a
 * sequential reference: every element size and type, every comparison, flag patterns from
 * all-false to all-true, NaN/-0.0/inf inputs, misaligned buffers, awkward sizes, several seeds,
 * and argument errors. */
#include "test_util.h"

#include <stdint.h>

static const kedr_dtype types[] = {KEDR_U32, KEDR_U64, KEDR_I32, KEDR_F32, KEDR_F64};
static const char *const cmp_name[] = {"LT", "LE", "GT", "GE", "EQ", "NE", "IN"};

enum { F_ALL, F_NONE, F_ALT, F_HALF, F_ONE_PCT, F_BYTES, F_COUNT };
static const char *const flag_name[F_COUNT] = {"all", "none", "alternating", "50%", "1%",
                                               "any nonzero byte"};

enum { D_RANDOM, D_FEW, D_EQUAL, D_SORTED, D_REVERSE, D_SPECIAL, D_COUNT };
static const char *const dist_name[D_COUNT] = {"random", "few", "equal", "sorted", "reverse",
                                               "special"};

static void fill_flags(int pattern, uint8_t *f, size_t n, uint64_t seed)
{
    uint64_t rng = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_next(&rng);
        switch (pattern) {
        case F_ALL: f[i] = 1; break;
        case F_NONE: f[i] = 0; break;
        case F_ALT: f[i] = i % 2 == 0; break;
        case F_HALF: f[i] = r & 1; break;
        case F_ONE_PCT: f[i] = r % 100 == 0; break;
        case F_BYTES: f[i] = (uint8_t)(r % 3 ? r >> 8 : 0); break; /* 0x80, 0x01...: all true */
        }
    }
}

/* Element i of distribution d as type t; D_SPECIAL (floats) mixes NaN, +-inf, -0.0 and +0.0. */
static void fill_values(kedr_dtype t, int d, void *buf, size_t n, uint64_t seed)
{
    uint64_t rng = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_next(&rng);
        double f = 0;
        uint64_t u = 0;
        switch (d) {
        case D_RANDOM: u = r; f = (tu_uniform(&rng) - 0.5) * 1e6; break;
        case D_FEW: u = r % 5; f = (double)(r % 5) - 2; break;
        case D_EQUAL: u = 7; f = -3.5; break;
        case D_SORTED: u = i; f = (double)i - (double)n / 2; break;
        case D_REVERSE: u = n - i; f = (double)(n - i); break;
        case D_SPECIAL: {
            static const double fs[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.0, -1.0};
            u = (uint64_t)(int64_t)((int)(r % 7) - 3); /* around zero, negatives included */
            f = fs[r % 7];
            break;
        }
        }
        tu_store(t, buf, i, u, f);
    }
}

#define HOLDS(x, a, b, cmp)                                                                  \
    ((cmp) == KEDR_CMP_LT   ? (x) < (a)                                                     \
     : (cmp) == KEDR_CMP_LE ? (x) <= (a)                                                    \
     : (cmp) == KEDR_CMP_GT ? (x) > (a)                                                     \
     : (cmp) == KEDR_CMP_GE ? (x) >= (a)                                                    \
     : (cmp) == KEDR_CMP_EQ ? (x) == (a)                                                    \
     : (cmp) == KEDR_CMP_NE ? (x) != (a)                                                    \
                            : ((a) <= (x) && (x) < (b)))

static int holds(kedr_dtype t, kedr_pred p, const void *in, size_t i)
{
    switch (t) {
    case KEDR_U32: return HOLDS(((const uint32_t *)in)[i], p.a.u32, p.b.u32, p.cmp);
    case KEDR_U64: return HOLDS(((const uint64_t *)in)[i], p.a.u64, p.b.u64, p.cmp);
    case KEDR_I32: return HOLDS(((const int32_t *)in)[i], p.a.i32, p.b.i32, p.cmp);
    case KEDR_F32: return HOLDS(((const float *)in)[i], p.a.f32, p.b.f32, p.cmp);
    case KEDR_F64: return HOLDS(((const double *)in)[i], p.a.f64, p.b.f64, p.cmp);
    }
    return 0;
}

/* One call. flags == NULL means by predicate on type t. shift_in / shift_flags displace the
 * device buffers by one element / one byte from their 16-byte alignment. */
static void check_case(kedr_ctx *ctx, const char *what, size_t es, kedr_dtype t, kedr_pred pred,
                       const void *h_in, const uint8_t *h_flags, size_t n, int partition,
                       int shift_in, int shift_flags)
{
    /* Reference: selected elements in order, then (partition) the others in order. */
    char *want = tu_host_alloc(n * es);
    size_t n_want = 0, k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            int sel = h_flags ? h_flags[i] != 0 : holds(t, pred, h_in, i);
            if (sel == (pass == 0)) {
                memcpy(want + k * es, (const char *)h_in + i * es, es);
                k++;
            }
            if (pass == 0 && i == n - 1)
                n_want = k;
        }
    if (n == 0)
        n_want = 0;

    char *din = tu_poisoned(ctx, n * es + es), *in = din + (shift_in ? es : 0);
    TU_OK(kedr_upload(ctx, in, h_in, n * es));
    uint8_t *dflags = NULL, *flags = NULL;
    if (h_flags) {
        dflags = tu_poisoned(ctx, n + 1);
        flags = dflags + (shift_flags ? 1 : 0);
        TU_OK(kedr_upload(ctx, flags, h_flags, n));
    }
    char *out = tu_poisoned(ctx, n * es);
    size_t n_got = (size_t)-1;
    kedr_status s;
    if (h_flags)
        s = partition ? kedr_partition_flagged(ctx, es, in, flags, out, n, &n_got)
                      : kedr_select_flagged(ctx, es, in, flags, out, n, &n_got);
    else
        s = partition ? kedr_partition_if(ctx, t, in, out, n, pred, &n_got)
                      : kedr_select_if(ctx, t, in, out, n, pred, &n_got);
    TU_CHECK(s == KEDR_OK, "%s: %s", what, kedr_last_error());
    TU_CHECK(n_got == n_want, "%s: count %zu, expected %zu", what, n_got, n_want);
    size_t m = partition ? n : n_want;
    char *got = tu_download(ctx, out, n * es);
    size_t bad = 0;
    for (size_t i = 0; i < m; i++)
        if (memcmp(got + i * es, want + i * es, es) != 0 && bad++ == 0)
            TU_CHECK(0, "%s: element %zu of %zu differs (first byte 0x%02x, expected 0x%02x)", what,
                     i, m, (unsigned char)got[i * es], (unsigned char)want[i * es]);
    TU_CHECK(bad == 0, "%s: %zu elements differ", what, bad);
    free(got);
    free(want);
    kedr_free(ctx, din);
    kedr_free(ctx, dflags);
    kedr_free(ctx, out);
}

static void check_flagged(kedr_ctx *ctx, size_t es, int pattern, size_t n, uint64_t seed, int shift)
{
    char *h_in = tu_host_alloc(n * es);
    uint8_t *h_flags = tu_host_alloc(n);
    uint64_t rng = seed;
    for (size_t i = 0; i < n * es; i++)
        h_in[i] = (char)tu_next(&rng);
    fill_flags(pattern, h_flags, n, seed + 1);
    kedr_pred none = {KEDR_CMP_EQ, {0}, {0}};
    for (int partition = 0; partition < 2; partition++) {
        char what[200];
        snprintf(what, sizeof what, "%s %s_flagged elem_size=%zu flags=%s n=%zu seed=%llu shift=%d",
                 kedr_backend_name(kedr_ctx_backend(ctx)), partition ? "partition" : "select", es,
                 flag_name[pattern], n, (unsigned long long)seed, shift);
        check_case(ctx, what, es, KEDR_U32, none, h_in, h_flags, n, partition, shift & 1,
                   shift & 2);
    }
    free(h_in);
    free(h_flags);
}

/* The value of element i as a predicate bound (type t). */
static kedr_value value_at(kedr_dtype t, const void *in, size_t i)
{
    kedr_value v;
    memset(&v, 0, sizeof v);
    memcpy(&v, (const char *)in + i * kedr_dtype_size(t), kedr_dtype_size(t));
    return v;
}

static void check_pred(kedr_ctx *ctx, kedr_dtype t, int d, size_t n, uint64_t seed, int shift,
                       int cmp_from, int cmp_to)
{
    size_t es = kedr_dtype_size(t);
    char *h_in = tu_host_alloc(n * es);
    fill_values(t, d, h_in, n, seed);
    for (int cmp = cmp_from; cmp <= cmp_to; cmp++) {
        kedr_pred pred = {(kedr_cmp)cmp, {0}, {0}};
        if (n > 0) { /* bounds taken from the data, so that EQ and IN hit something */
            pred.a = value_at(t, h_in, n / 3);
            pred.b = value_at(t, h_in, 2 * n / 3);
        }
        for (int partition = 0; partition < 2; partition++) {
            char what[200];
            snprintf(what, sizeof what, "%s %s_if %s %s %s n=%zu seed=%llu shift=%d",
                     kedr_backend_name(kedr_ctx_backend(ctx)), partition ? "partition" : "select",
                     kedr_dtype_name(t), cmp_name[cmp], dist_name[d], n,
                     (unsigned long long)seed, shift);
            check_case(ctx, what, es, t, pred, h_in, NULL, n, partition, shift, 0);
        }
    }
    free(h_in);
}

/* Float predicates with special bounds: a NaN bound (only NE holds), -0.0 == +0.0, infinities. */
static void check_special_bounds(kedr_ctx *ctx)
{
    const size_t n = 5000;
    double *h64 = tu_host_alloc(n * sizeof(double));
    float *h32 = tu_host_alloc(n * sizeof(float));
    fill_values(KEDR_F64, D_SPECIAL, h64, n, 5);
    fill_values(KEDR_F32, D_SPECIAL, h32, n, 6);
    const double bounds[][2] = {{NAN, 1}, {-0.0, 1}, {0.0, INFINITY}, {-INFINITY, 0.0},
                                {INFINITY, INFINITY}, {-1, NAN}};
    for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++)
        for (int cmp = KEDR_CMP_LT; cmp <= KEDR_CMP_IN; cmp++)
            for (int partition = 0; partition < 2; partition++) {
                kedr_pred p64 = {(kedr_cmp)cmp, {.f64 = bounds[bi][0]}, {.f64 = bounds[bi][1]}};
                kedr_pred p32 = {(kedr_cmp)cmp, {.f32 = (float)bounds[bi][0]},
                                 {.f32 = (float)bounds[bi][1]}};
                char what[200];
                snprintf(what, sizeof what, "%s %s_if %s a=%g b=%g",
                         kedr_backend_name(kedr_ctx_backend(ctx)),
                         partition ? "partition" : "select", cmp_name[cmp], bounds[bi][0],
                         bounds[bi][1]);
                check_case(ctx, what, 8, KEDR_F64, p64, h64, NULL, n, partition, 0, 0);
                check_case(ctx, what, 4, KEDR_F32, p32, h32, NULL, n, partition, 1, 0);
            }
    free(h64);
    free(h32);
}

static void check_errors(kedr_ctx *ctx)
{
    uint32_t h[4] = {1, 2, 3, 4};
    uint8_t hf[4] = {1, 0, 1, 0};
    void *in = tu_upload(ctx, h, sizeof h), *flags = tu_upload(ctx, hf, sizeof hf);
    void *out = tu_poisoned(ctx, sizeof h);
    size_t k;
    kedr_pred p = {KEDR_CMP_LT, {.u32 = 3}, {0}};
    kedr_status s = kedr_select_flagged(ctx, 3, in, flags, out, 4, &k);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "elem_size 3: %s", kedr_status_name(s));
    s = kedr_select_flagged(ctx, 4, NULL, flags, out, 4, &k);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL in: %s", kedr_status_name(s));
    s = kedr_partition_flagged(ctx, 4, in, NULL, out, 4, &k);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL flags: %s", kedr_status_name(s));
    s = kedr_select_flagged(ctx, 4, in, flags, NULL, 4, &k);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL out: %s", kedr_status_name(s));
    s = kedr_select_flagged(ctx, 4, in, flags, out, 4, NULL);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL n_out: %s", kedr_status_name(s));
    s = kedr_partition_flagged(ctx, 4, in, flags, (char *)in + 4, 3, &k);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "overlap: %s", kedr_status_name(s));
    s = kedr_select_if(ctx, (kedr_dtype)42, in, out, 4, p, &k);
    TU_CHECK(s == KEDR_ERR_UNSUPPORTED && *kedr_last_error(), "bad dtype: %s", kedr_status_name(s));
    p.cmp = (kedr_cmp)12;
    s = kedr_partition_if(ctx, KEDR_U32, in, out, 4, p, &k);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "bad cmp: %s", kedr_status_name(s));
    p.cmp = KEDR_CMP_LT;
    s = kedr_select_if(NULL, KEDR_U32, in, out, 4, p, &k);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL ctx: %s", kedr_status_name(s));
    s = kedr_partition_if(ctx, KEDR_U32, in, out, 4, p, NULL);
    TU_CHECK(s == KEDR_ERR_INVALID && *kedr_last_error(), "NULL n_true: %s", kedr_status_name(s));
    k = 7;
    TU_OK(kedr_select_if(ctx, KEDR_U32, NULL, NULL, 0, p, &k));
    TU_CHECK(k == 0, "select of nothing gave %zu", k);
    kedr_free(ctx, in);
    kedr_free(ctx, flags);
    kedr_free(ctx, out);
}

int main(void)
{
    static const size_t sizes[] = {1, 2, 4, 8, 16};
    kedr_backend backends[2];
    int nb = tu_backends(backends);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(backends[b]);
        check_errors(ctx);
        check_special_bounds(ctx);
        int k = 0;
        for (size_t ei = 0; ei < 5; ei++)
            for (size_t si = 0; si < TU_NSIZES; si++)
                for (int f = 0; f < F_COUNT; f++, k++)
                    /* The largest sizes take two of the patterns (in rotation), to stay fast. */
                    for (int seed = 1; seed <= (tu_sizes[si] > 5000 ? 1 : 2) &&
                                       (tu_sizes[si] < 100000 || (f + ei + si) % 3 == 0);
                         seed++)
                        check_flagged(ctx, sizes[ei], f, tu_sizes[si], (uint64_t)seed * 31 + si,
                                      k % 4);
        k = 0;
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
            for (size_t si = 0; si < TU_NSIZES; si++)
                for (int d = 0; d < D_COUNT; d++, k++) {
                    size_t n = tu_sizes[si];
                    /* Large inputs take one comparison each (in rotation), small ones all. */
                    int c0 = n > 5000 ? k % 7 : KEDR_CMP_LT, c1 = n > 5000 ? k % 7 : KEDR_CMP_IN;
                    for (int seed = 1;
                         seed <= (n > 5000 ? 1 : 2) && (n < 100000 || (d + ti + si) % 3 == 0);
                         seed++)
                        check_pred(ctx, types[ti], d, n, (uint64_t)seed * 131 + si, k % 2, c0, c1);
                }
        check_flagged(ctx, 4, F_HALF, TU_LARGE, 99, 0);
        check_flagged(ctx, 2, F_ONE_PCT, TU_LARGE, 98, 3);
        check_pred(ctx, KEDR_F32, D_RANDOM, TU_LARGE, 97, 0, KEDR_CMP_IN, KEDR_CMP_IN);
        check_pred(ctx, KEDR_U64, D_FEW, TU_LARGE, 96, 1, KEDR_CMP_NE, KEDR_CMP_NE);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_select");
}
