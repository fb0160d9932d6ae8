/* kedr_run_length_encode and kedr_reduce_by_key against a sequential walk over the runs.
 * Integer results and float min/max must match exactly (ties keep the first value, so even
 * -0.0 against +0.0 is decided); float sums, accumulated in double by the library, must lie
 * within 2 * len * DBL_EPSILON * sum|v| of the sequential double sum (the error bound of any
 * summation order, for the library and the reference alike), plus FLT_EPSILON * |sum| for the
 * final rounding of f32 results. */
#include "test_util.h"

#include <float.h>

static const kedr_dtype key_types[] = {KEDR_U32, KEDR_U64, KEDR_I32};
static const kedr_dtype val_types[] = {KEDR_U32, KEDR_U64, KEDR_I32, KEDR_F32, KEDR_F64};
static const kedr_op ops[] = {KEDR_OP_SUM, KEDR_OP_MIN, KEDR_OP_MAX};

enum { R_RUNS, R_ONE_RUN, R_DISTINCT, R_FLIP, NRDIST };
static const char *dist_name[] = {"runs 1..100", "one run", "all distinct", "0/1 runs 1..3"};

static uint64_t get_u(size_t size, const void *p, size_t i)
{
    return size == 4 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}

static void make_keys(kedr_dtype t, int dist, void *keys, size_t n, uint64_t seed)
{
    size_t ks = kedr_dtype_size(t);
    uint64_t full = ks == 4 ? 0xFFFFFFFFu : UINT64_MAX, rng = seed, key = tu_next(&rng) & full;
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        switch (dist) {
        case R_RUNS:
            if (left == 0) { /* a new run, with a key unlike the last one */
                uint64_t k = tu_next(&rng) & full;
                key = k == key ? (k + 1) & full : k;
                left = 1 + tu_next(&rng) % 100;
            }
            left--;
            break;
        case R_ONE_RUN: break;
        case R_DISTINCT: key = (i * 0x9E3779B1u) & full; break;
        case R_FLIP:
            if (left == 0) {
                key = i == 0 ? 0 : key ^ 1;
                left = 1 + tu_next(&rng) % 3;
            }
            left--;
            break;
        }
        if (ks == 4)
            ((uint32_t *)keys)[i] = (uint32_t)key;
        else
            ((uint64_t *)keys)[i] = key;
    }
}

/* Full-range integers; floats in (-1000, 1000) with some -0.0 and +0.0. */
static void make_vals(kedr_dtype t, void *vals, size_t n, uint64_t seed)
{
    uint64_t rng = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_next(&rng);
        double x = r % 16 == 0 ? -0.0 : r % 16 == 1 ? 0.0 : tu_uniform(&rng) * 2000 - 1000;
        switch (t) {
        case KEDR_U32: case KEDR_I32: ((uint32_t *)vals)[i] = (uint32_t)r; break;
        case KEDR_U64: ((uint64_t *)vals)[i] = r; break;
        case KEDR_F32: ((float *)vals)[i] = (float)x; break;
        case KEDR_F64: ((double *)vals)[i] = x; break;
        }
    }
}

/* The reference value of one run, as the bits of the value type. */
typedef struct {
    uint64_t bits;
    double sum, abs_sum; /* float sums */
    size_t len;
} run_ref;

static double as_double(kedr_dtype t, const void *v, size_t i)
{
    return t == KEDR_F32 ? ((const float *)v)[i] : ((const double *)v)[i];
}

/* True when value i must replace acc under op: strictly smaller (min) or larger (max). */
static int better(kedr_dtype t, kedr_op op, const void *v, size_t i, size_t acc_i)
{
    double a, b;
    switch (t) {
    case KEDR_U32: a = ((const uint32_t *)v)[acc_i]; b = ((const uint32_t *)v)[i]; break;
    case KEDR_I32: a = ((const int32_t *)v)[acc_i]; b = ((const int32_t *)v)[i]; break;
    case KEDR_U64: {
        uint64_t x = ((const uint64_t *)v)[acc_i], y = ((const uint64_t *)v)[i];
        return op == KEDR_OP_MIN ? y < x : x < y;
    }
    default: a = as_double(t, v, acc_i); b = as_double(t, v, i); break;
    }
    return op == KEDR_OP_MIN ? b < a : a < b;
}

/* shift: every device buffer (keys, values, both outputs) lies one element past its 16-byte
 * alignment. */
static void check_bykey(kedr_ctx *ctx, kedr_dtype kt, kedr_dtype vt, kedr_op op, int rle,
                        int dist, size_t n, uint64_t seed, int shift)
{
    size_t ks = kedr_dtype_size(kt), vs = rle ? 4 : kedr_dtype_size(vt);
    void *keys = tu_host_alloc(n * ks), *vals = tu_host_alloc(n * 8);
    make_keys(kt, dist, keys, n, seed);
    make_vals(vt, vals, n, seed * 31 + 7);

    /* Sequential reference. */
    run_ref *ref = tu_host_alloc((n ? n : 1) * sizeof *ref);
    uint64_t *ref_keys = tu_host_alloc((n ? n : 1) * 8);
    size_t nr = 0, acc_i = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || get_u(ks, keys, i) != get_u(ks, keys, i - 1)) {
            ref_keys[nr] = get_u(ks, keys, i);
            ref[nr++] = (run_ref){0, 0, 0, 0};
            acc_i = i;
        }
        run_ref *r = &ref[nr - 1];
        r->len++;
        if (rle)
            continue;
        size_t vsz = kedr_dtype_size(vt);
        if (op == KEDR_OP_SUM) {
            if (vt == KEDR_F32 || vt == KEDR_F64) {
                double x = as_double(vt, vals, i);
                r->sum += x;
                r->abs_sum += fabs(x);
            } else {
                r->bits = (r->bits + get_u(vsz, vals, i)) & (vsz == 4 ? 0xFFFFFFFFu : UINT64_MAX);
            }
        } else {
            if (i != acc_i && better(vt, op, vals, i, acc_i))
                acc_i = i;
            r->bits = get_u(vsz, vals, acc_i);
        }
    }

    char *b_keys = tu_poisoned(ctx, (n + 1) * ks), *b_vals = tu_poisoned(ctx, (n + 1) * vs);
    char *b_kout = tu_poisoned(ctx, (n + 1) * ks), *b_vout = tu_poisoned(ctx, (n + 1) * vs);
    void *d_keys = b_keys + (shift ? ks : 0), *d_vals = b_vals + (shift ? vs : 0);
    void *d_kout = b_kout + (shift ? ks : 0), *d_vout = b_vout + (shift ? vs : 0);
    TU_OK(kedr_upload(ctx, d_keys, keys, n * ks));
    TU_OK(kedr_upload(ctx, d_vals, vals, n * vs));
    size_t got_runs = (size_t)-1;
    if (rle)
        TU_OK(kedr_run_length_encode(ctx, kt, d_keys, n, d_kout, d_vout, &got_runs));
    else
        TU_OK(kedr_reduce_by_key(ctx, kt, d_keys, vt, d_vals, n, op, d_kout, d_vout, &got_runs));
    void *kout = tu_download(ctx, d_kout, n * ks), *vout = tu_download(ctx, d_vout, n * vs);
    const char *be = kedr_backend_name(kedr_ctx_backend(ctx));
    char what[160];
    snprintf(what, sizeof what, "%s %s key %s val %s op %s, %s, n=%zu%s", be,
             rle ? "rle" : "reduce_by_key", kedr_dtype_name(kt), rle ? "-" : kedr_dtype_name(vt),
             rle ? "-" : kedr_op_name(op), dist_name[dist], n, shift ? ", shifted" : "");
    TU_CHECK(got_runs == nr, "%s: %zu runs, want %zu", what, got_runs, nr);
    size_t bad_k = 0, bad_v = 0, first = 0;
    double worst = 0;
    for (size_t k = 0; k < nr && got_runs == nr; k++) {
        bad_k += get_u(ks, kout, k) != ref_keys[k];
        int ok;
        if (rle) {
            ok = ((uint32_t *)vout)[k] == ref[k].len;
        } else if (op == KEDR_OP_SUM && (vt == KEDR_F32 || vt == KEDR_F64)) {
            double got = as_double(vt, vout, k), want = ref[k].sum;
            double tol = 2.0 * ref[k].len * DBL_EPSILON * ref[k].abs_sum +
                         (vt == KEDR_F32 ? FLT_EPSILON * fabs(want) : 0);
            ok = fabs(got - want) <= tol;
            if (!ok && fabs(got - want) > worst)
                worst = fabs(got - want);
        } else {
            ok = get_u(vs, vout, k) == ref[k].bits;
        }
        if (!ok && bad_v++ == 0)
            first = k;
    }
    TU_CHECK(bad_k == 0, "%s: %zu keys wrong", what, bad_k);
    TU_CHECK(bad_v == 0, "%s: %zu values wrong, first run %zu (len %zu, got %016llx, want %016llx, worst error %g)",
             what, bad_v, first, bad_v ? ref[first].len : 0,
             (unsigned long long)(bad_v ? get_u(vs, vout, first) : 0),
             (unsigned long long)(bad_v ? ref[first].bits : 0), worst);
    free(keys);
    free(vals);
    free(ref);
    free(ref_keys);
    free(kout);
    free(vout);
    kedr_free(ctx, b_keys);
    kedr_free(ctx, b_vals);
    kedr_free(ctx, b_kout);
    kedr_free(ctx, b_vout);
}

static void test_all(kedr_ctx *ctx)
{
    uint64_t seed = 3;
    for (size_t s = 0; s < TU_NSIZES; s++) {
        size_t n = tu_sizes[s];
        int big = n > 60000;
        for (int dist = 0; dist < NRDIST; dist++)
            for (int ki = 0; ki < 3; ki++) {
                check_bykey(ctx, key_types[ki], KEDR_U32, KEDR_OP_SUM, 1, dist, n, seed++, 0);
                for (int vi = 0; vi < 5; vi++)
                    for (int oi = 0; oi < 3; oi++) {
                        /* Large sizes: a rotating few of the 45 combinations. */
                        if (big && (ki * 15 + vi * 3 + oi + dist * 7 + (int)s) % 11 != 0)
                            continue;
                        check_bykey(ctx, key_types[ki], val_types[vi], ops[oi], 0, dist, n,
                                    seed++, 0);
                    }
            }
    }
    for (int k = 0; k < 4; k++) /* more seeds */
        check_bykey(ctx, KEDR_U32, val_types[k], ops[k % 3], 0, R_RUNS, 4095, 500 + k, 0);
    /* Unaligned buffers: every key type, each integer value type summed, rle. */
    static const size_t shifted_sizes[] = {1, 33, 4095, 65537};
    for (size_t s = 0; s < sizeof shifted_sizes / sizeof shifted_sizes[0]; s++)
        for (int ki = 0; ki < 3; ki++) {
            int dist = (int)(s + ki) % NRDIST;
            check_bykey(ctx, key_types[ki], KEDR_U32, KEDR_OP_SUM, 1, dist, shifted_sizes[s],
                        seed++, 1);
            for (int vi = 0; vi < 3; vi++)
                check_bykey(ctx, key_types[ki], val_types[vi], KEDR_OP_SUM, 0, dist,
                            shifted_sizes[s], seed++, 1);
        }
    check_bykey(ctx, KEDR_U32, KEDR_F32, KEDR_OP_SUM, 0, R_RUNS, TU_LARGE, seed++, 0);
    check_bykey(ctx, KEDR_U64, KEDR_F64, KEDR_OP_SUM, 0, R_ONE_RUN, TU_LARGE, seed++, 0);
    check_bykey(ctx, KEDR_I32, KEDR_I32, KEDR_OP_MIN, 0, R_FLIP, TU_LARGE, seed++, 0);
    check_bykey(ctx, KEDR_U32, KEDR_U32, KEDR_OP_SUM, 1, R_RUNS, TU_LARGE, seed++, 0);
    check_bykey(ctx, KEDR_U32, KEDR_U32, KEDR_OP_SUM, 0, R_FLIP, TU_LARGE, seed++, 0);
    check_bykey(ctx, KEDR_U64, KEDR_U64, KEDR_OP_SUM, 1, R_DISTINCT, TU_LARGE, seed++, 1);
}

static void test_errors(kedr_ctx *ctx)
{
    uint32_t *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    TU_OK(kedr_alloc(ctx, (void **)&a, 64));
    TU_OK(kedr_alloc(ctx, (void **)&b, 64));
    TU_OK(kedr_alloc(ctx, (void **)&c, 64));
    TU_OK(kedr_alloc(ctx, (void **)&d, 64));
    size_t nr = 0;
    struct {
        kedr_status got, want;
        const char *what;
    } cases[] = {
        {kedr_run_length_encode(ctx, KEDR_U32, NULL, 5, b, c, &nr), KEDR_ERR_INVALID, "rle NULL in"},
        {kedr_run_length_encode(ctx, KEDR_U32, a, 5, NULL, c, &nr), KEDR_ERR_INVALID,
         "rle NULL unique_out"},
        {kedr_run_length_encode(ctx, KEDR_U32, a, 5, b, NULL, &nr), KEDR_ERR_INVALID,
         "rle NULL counts_out"},
        {kedr_run_length_encode(ctx, KEDR_U32, a, 5, b, c, NULL), KEDR_ERR_INVALID, "rle NULL n_runs"},
        {kedr_run_length_encode(ctx, KEDR_F32, a, 5, b, c, &nr), KEDR_ERR_UNSUPPORTED, "rle f32"},
        {kedr_reduce_by_key(ctx, KEDR_U32, NULL, KEDR_F32, b, 5, KEDR_OP_SUM, c, d, &nr),
         KEDR_ERR_INVALID, "NULL keys_in"},
        {kedr_reduce_by_key(ctx, KEDR_U32, a, KEDR_F32, NULL, 5, KEDR_OP_SUM, c, d, &nr),
         KEDR_ERR_INVALID, "NULL vals_in"},
        {kedr_reduce_by_key(ctx, KEDR_U32, a, KEDR_F32, b, 5, KEDR_OP_SUM, NULL, d, &nr),
         KEDR_ERR_INVALID, "NULL keys_out"},
        {kedr_reduce_by_key(ctx, KEDR_U32, a, KEDR_F32, b, 5, KEDR_OP_SUM, c, NULL, &nr),
         KEDR_ERR_INVALID, "NULL vals_out"},
        {kedr_reduce_by_key(ctx, KEDR_F64, a, KEDR_F32, b, 5, KEDR_OP_SUM, c, d, &nr),
         KEDR_ERR_UNSUPPORTED, "f64 keys"},
        {kedr_reduce_by_key(ctx, KEDR_U32, a, (kedr_dtype)11, b, 5, KEDR_OP_SUM, c, d, &nr),
         KEDR_ERR_UNSUPPORTED, "bad value type"},
        {kedr_reduce_by_key(ctx, KEDR_U32, a, KEDR_F32, b, 5, (kedr_op)7, c, d, &nr),
         KEDR_ERR_INVALID, "bad op"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        TU_CHECK(cases[i].got == cases[i].want && kedr_last_error()[0],
                 "%s: got %s, want %s (message '%s')", cases[i].what,
                 kedr_status_name(cases[i].got), kedr_status_name(cases[i].want),
                 kedr_last_error());
    nr = 99;
    TU_OK(kedr_reduce_by_key(ctx, KEDR_U64, NULL, KEDR_F64, NULL, 0, KEDR_OP_MAX, NULL, NULL, &nr));
    TU_CHECK(nr == 0, "n = 0: %zu runs", nr);
    kedr_free(ctx, a);
    kedr_free(ctx, b);
    kedr_free(ctx, c);
    kedr_free(ctx, d);
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        test_errors(ctx);
        test_all(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_bykey");
}
