/* kedr_tridiag_solve: random diagonally dominant batches in both layouts, f32 and f64, periodic
 * and not, at awkward sizes, checked by their residuals in long double and, for short systems,
 * against dense LU with partial pivoting; a symmetric positive definite batch that is not
 * strictly dominant; a zero pivot; and argument errors.
 *
 * Tolerances. For a strictly row diagonally dominant or symmetric positive definite tridiagonal
 * matrix, Gaussian elimination without pivoting has a componentwise backward error
 * |dA| <= f(u) |A| with f(u) a small multiple of the unit roundoff u, independent of n (Higham,
 * Accuracy and Stability of Numerical Algorithms, 2nd ed. 2002, Theorem 9.12). So the normwise
 * backward error ||A x - d|| / (||A|| ||x|| + ||d||) (infinity norms) must stay below a few u:
 * the test allows BACKWARD_U = 32 u, which also covers the bordering step of periodic systems.
 * The forward error is then at most ||A^-1|| ||A x - d||, and for a row dominant matrix
 * ||A^-1|| <= 1 / min_i (|b_i| - |a_i| - |c_i|) (Varah 1975): the inputs keep that margin at
 * least 1 and ||A|| at most 6, so the condition number is at most 6, and the forward error
 * against dense LU is allowed 6 * BACKWARD_U * (1 + 1) relative to ||x||, with the reference's
 * own rounding in long double far below. The Laplacian's condition number is (n + 1)^2 / 2
 * (||A|| = 4, ||A^-1|| <= (n + 1)^2 / 8), which takes the place of 6 in its forward bound. */
#include "prim/tridiag_cuda.h"
#include "test_util.h"

#include <float.h>
#include <stdint.h>

#define BACKWARD_U 32.0L
/* Systems of a batch checked against dense LU (n^3 each), and the longest such system. */
#define DENSE_SYSTEMS 64
#define DENSE_MAX_N 64

/* Unknowns of the largest batch compared bit by bit with one-system Thomas on the cpu (the
 * larger ones take the same paths, at other lane counts; time). */
#define BITWISE_MAX ((size_t)1 << 17)

/* The worst errors seen per type (index: F32, F64), in units of u, printed at the end. */
static long double seen_backward[2], seen_forward[2];

typedef struct {
    size_t n, count;
    kedr_tridiag_layout layout;
    int periodic;
    kedr_dtype t;
    long double *a, *b, *c, *d; /* the inputs as stored in type t, in system order (s * n + i) */
} batch;

static size_t at(const batch *q, size_t s, size_t i)
{
    return q->layout == KEDR_TRIDIAG_CONTIGUOUS ? s * q->n + i : i * q->count + s;
}

static long double unit_roundoff(kedr_dtype t)
{
    return t == KEDR_F32 ? 0x1p-24L : 0x1p-53L;
}

static long double rounded(kedr_dtype t, double x)
{
    return t == KEDR_F32 ? (long double)(float)x : (long double)x;
}

/* Random row dominant systems: a, c in [-1, 1], |b| = |a| + |c| + 1 + [0, 1) with a random sign,
 * d in [-1, 1]. Non-periodic systems get NaN in a_0 and c_{n-1}, which must be ignored. kind 1:
 * the 1D Laplacian (b = 2, a = c = -1), symmetric positive definite but not strictly dominant. */
static void generate(batch *q, uint64_t seed, int kind)
{
    size_t total = q->n * q->count;
    q->a = tu_host_alloc(total * sizeof(long double));
    q->b = tu_host_alloc(total * sizeof(long double));
    q->c = tu_host_alloc(total * sizeof(long double));
    q->d = tu_host_alloc(total * sizeof(long double));
    uint64_t rng = seed;
    for (size_t k = 0; k < total; k++) {
        size_t i = k % q->n;
        double a = tu_uniform(&rng) * 2 - 1, c = tu_uniform(&rng) * 2 - 1;
        double b = fabs(a) + fabs(c) + 1 + tu_uniform(&rng);
        if (tu_next(&rng) & 1)
            b = -b;
        if (kind == 1) {
            a = c = -1;
            b = 2;
        }
        q->a[k] = !q->periodic && i == 0 ? NAN : rounded(q->t, a);
        q->c[k] = !q->periodic && i == q->n - 1 ? NAN : rounded(q->t, c);
        q->b[k] = rounded(q->t, b);
        q->d[k] = rounded(q->t, tu_uniform(&rng) * 2 - 1);
    }
}

/* The array of type t in the batch's layout. */
static void *pack(const batch *q, const long double *v)
{
    size_t es = kedr_dtype_size(q->t);
    char *h = tu_host_alloc(q->n * q->count * es);
    for (size_t s = 0; s < q->count; s++)
        for (size_t i = 0; i < q->n; i++)
            tu_store(q->t, h, at(q, s, i), 0, (double)v[s * q->n + i]);
    return h;
}

static long double get(const batch *q, const void *h, size_t s, size_t i)
{
    size_t k = at(q, s, i);
    return q->t == KEDR_F32 ? ((const float *)h)[k] : ((const double *)h)[k];
}

/* Row i of system s times x (x in system order), the couplings a_0, c_{n-1} when periodic. */
static long double row_times(const batch *q, size_t s, size_t i, const long double *x,
                             long double *abs_row)
{
    size_t n = q->n, k = s * n + i;
    long double sum = q->b[k] * x[i];
    *abs_row = fabsl(q->b[k]);
    if (i > 0 || q->periodic) {
        sum += q->a[k] * x[(i + n - 1) % n];
        *abs_row += fabsl(q->a[k]);
    }
    if (i + 1 < n || q->periodic) {
        sum += q->c[k] * x[(i + 1) % n];
        *abs_row += fabsl(q->c[k]);
    }
    return sum;
}

/* x of system s by dense LU with partial pivoting in long double. */
static void dense_solve(const batch *q, size_t s, long double *x)
{
    size_t n = q->n;
    long double *m = tu_host_alloc(n * n * sizeof *m);
    memset(m, 0, n * n * sizeof *m);
    for (size_t i = 0; i < n; i++) {
        size_t k = s * n + i;
        m[i * n + i] += q->b[k];
        if (i > 0 || q->periodic)
            m[i * n + (i + n - 1) % n] += q->a[k];
        if (i + 1 < n || q->periodic)
            m[i * n + (i + 1) % n] += q->c[k];
        x[i] = q->d[k];
    }
    for (size_t j = 0; j < n; j++) {
        size_t p = j;
        for (size_t i = j + 1; i < n; i++)
            if (fabsl(m[i * n + j]) > fabsl(m[p * n + j]))
                p = i;
        for (size_t k = 0; k < n && p != j; k++) {
            long double tmp = m[j * n + k];
            m[j * n + k] = m[p * n + k];
            m[p * n + k] = tmp;
        }
        long double tmp = x[j];
        x[j] = x[p];
        x[p] = tmp;
        for (size_t i = j + 1; i < n; i++) {
            long double f = m[i * n + j] / m[j * n + j];
            for (size_t k = j; k < n; k++)
                m[i * n + k] -= f * m[j * n + k];
            x[i] -= f * x[j];
        }
    }
    for (size_t j = n; j-- > 0;) {
        for (size_t k = j + 1; k < n; k++)
            x[j] -= m[j * n + k] * x[k];
        x[j] /= m[j * n + j];
    }
    free(m);
}

/* Backward error of system s's solution (in got), and its forward error against dense LU
 * when checked (else -1). Returns 0 when a value is not finite. */
static int errors(const batch *q, const void *got, size_t s, long double *backward,
                  long double *forward, long double *scratch)
{
    size_t n = q->n;
    long double *x = scratch, *ref = scratch + n, rmax = 0, anorm = 0, xnorm = 0, dnorm = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = get(q, got, s, i);
        if (!isfinite(x[i]))
            return 0;
        xnorm = fmaxl(xnorm, fabsl(x[i]));
    }
    for (size_t i = 0; i < n; i++) {
        long double abs_row, r = row_times(q, s, i, x, &abs_row) - q->d[s * n + i];
        rmax = fmaxl(rmax, fabsl(r));
        anorm = fmaxl(anorm, abs_row);
        dnorm = fmaxl(dnorm, fabsl(q->d[s * n + i]));
    }
    *backward = rmax / (anorm * xnorm + dnorm);
    *forward = -1;
    if (n <= DENSE_MAX_N && s < DENSE_SYSTEMS) {
        dense_solve(q, s, ref);
        long double e = 0, rn = 0;
        for (size_t i = 0; i < n; i++) {
            e = fmaxl(e, fabsl(x[i] - ref[i]));
            rn = fmaxl(rn, fabsl(ref[i]));
        }
        *forward = e / fmaxl(rn, LDBL_MIN);
    }
    return 1;
}

/* Copies of a, b, c, d in the context's memory; d is followed by one poisoned element. */
typedef struct {
    void *a, *b, *c, *d;
} dev_batch;

static dev_batch upload(kedr_ctx *ctx, const batch *q, void *h[4])
{
    size_t bytes = q->n * q->count * kedr_dtype_size(q->t);
    dev_batch g = {tu_upload(ctx, h[0], bytes), tu_upload(ctx, h[1], bytes),
                   tu_upload(ctx, h[2], bytes), tu_poisoned(ctx, bytes + 8)};
    TU_OK(kedr_upload(ctx, g.d, h[3], bytes));
    return g;
}

/* The cpu's Thomas sweeps a group of systems side by side (src/prim/tridiag.c); every system
 * must come out to the bit as the one-system elimination prim_tridiag_thomas gives it: the same
 * operations in the same order (and no contraction into FMAs on the cpu). h: the packed
 * inputs, got: the solutions. */
static void check_as_thomas(const batch *q, void *h[4], const void *got, const char *what)
{
    size_t n = q->n, count = q->count, es = kedr_dtype_size(q->t), bytes = n * count * es;
    int inter = q->layout == KEDR_TRIDIAG_INTERLEAVED;
    size_t ss = inter ? 1 : n, st = inter ? count : 1;
    char *x = tu_host_alloc(bytes), *cp = tu_host_alloc(bytes), *zp = tu_host_alloc(bytes);
    memcpy(x, h[3], bytes);
    for (size_t s = 0; s < count; s++) {
        size_t o = s * ss * es;
        const char *a = (const char *)h[0] + o, *b = (const char *)h[1] + o;
        const char *c = (const char *)h[2] + o;
        if (q->t == KEDR_F32)
            prim_tridiag_thomas_f32((const float *)a, (const float *)b, (const float *)c,
                                    (float *)(x + o), (float *)(cp + o), (float *)(zp + o), n,
                                    st, q->periodic);
        else
            prim_tridiag_thomas_f64((const double *)a, (const double *)b, (const double *)c,
                                    (double *)(x + o), (double *)(cp + o), (double *)(zp + o),
                                    n, st, q->periodic);
    }
    size_t k = 0;
    while (k < n * count && memcmp(x + k * es, (const char *)got + k * es, es) == 0)
        k++;
    if (k < n * count) {
        int f32 = q->t == KEDR_F32;
        long double want = f32 ? ((const float *)x)[k] : ((const double *)x)[k];
        long double have = f32 ? ((const float *)got)[k] : ((const double *)got)[k];
        TU_CHECK(0, "%s: element %zu is %.17Lg, one-system Thomas gives %.17Lg", what, k, have,
                 want);
    }
    free(x), free(cp), free(zp);
}

/* Solves one batch; checks every system (backward error, and forward error for short systems),
 * that a, b, c are unchanged and that nothing is written past d. kind as in generate. */
static void check_batch(kedr_ctx *ctx, kedr_tridiag_algorithm alg, kedr_dtype t,
                        kedr_tridiag_layout layout, int periodic, size_t n, size_t count,
                        uint64_t seed, int kind)
{
    batch q = {n, count, layout, periodic, t, NULL, NULL, NULL, NULL};
    generate(&q, seed, kind);
    void *h[4] = {pack(&q, q.a), pack(&q, q.b), pack(&q, q.c), pack(&q, q.d)};
    dev_batch g = upload(ctx, &q, h);
    size_t bytes = n * count * kedr_dtype_size(t);
    char what[200];
    snprintf(what, sizeof what, "%s %s %s %s%s n=%zu count=%zu seed=%llu%s",
             kedr_backend_name(kedr_ctx_backend(ctx)),
             alg == KEDR_TRIDIAG_AUTO     ? "auto"
             : alg == KEDR_TRIDIAG_THOMAS ? "thomas"
                                          : "chunked",
             kedr_dtype_name(t),
             layout == KEDR_TRIDIAG_CONTIGUOUS ? "contiguous" : "interleaved",
             periodic ? " periodic" : "", n, count, (unsigned long long)seed,
             kind == 1 ? " laplacian" : "");
    kedr_tridiag_desc desc = {n, count, layout, periodic, alg};
    kedr_status st = kedr_tridiag_solve(ctx, t, &desc, g.a, g.b, g.c, g.d);
    TU_CHECK(st == KEDR_OK, "%s: %s", what, kedr_last_error());
    void *got = tu_download(ctx, g.d, bytes + 8);
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CPU && alg != KEDR_TRIDIAG_CHUNKED &&
        n * count <= BITWISE_MAX)
        check_as_thomas(&q, h, got, what);
    long double u = unit_roundoff(t), worst_b = 0, worst_f = 0;
    long double kappa = kind == 1 ? (n + 1.0L) * (n + 1) / 2 : 6;
    long double *scratch = tu_host_alloc(2 * n * sizeof *scratch);
    size_t bad = 0;
    for (size_t s = 0; s < count; s++) {
        long double bw, fw;
        int finite = errors(&q, got, s, &bw, &fw, scratch);
        if (!finite || !(bw <= BACKWARD_U * u) || !(fw <= 2 * kappa * BACKWARD_U * u)) {
            if (bad++ == 0)
                TU_CHECK(0, "%s: system %zu: %s, backward error %.3Lg u, forward %.3Lg u", what,
                         s, finite ? "inaccurate" : "not finite", bw / u, fw / u);
            continue;
        }
        worst_b = fmaxl(worst_b, bw);
        worst_f = fmaxl(worst_f, fw);
    }
    seen_backward[t == KEDR_F64] = fmaxl(seen_backward[t == KEDR_F64], worst_b / u);
    if (kind == 0)
        seen_forward[t == KEDR_F64] = fmaxl(seen_forward[t == KEDR_F64], worst_f / u);
    TU_CHECK(bad == 0, "%s: %zu of %zu systems wrong (worst good: backward %.3Lg u, forward "
             "%.3Lg u)", what, bad, count, worst_b / u, worst_f / u);
    unsigned char *tail = (unsigned char *)got + bytes;
    TU_CHECK(tail[0] == TU_POISON_BYTE && tail[7] == TU_POISON_BYTE, "%s: wrote past d", what);
    void *inputs[3] = {g.a, g.b, g.c};
    for (int k = 0; k < 3; k++) {
        void *back = tu_download(ctx, inputs[k], bytes);
        TU_CHECK(memcmp(back, h[k], bytes) == 0, "%s: input %c changed", what, "abc"[k]);
        free(back);
    }
    free(scratch);
    free(got);
    for (int k = 0; k < 4; k++)
        free(h[k]);
    kedr_free(ctx, g.a), kedr_free(ctx, g.b), kedr_free(ctx, g.c), kedr_free(ctx, g.d);
    free(q.a), free(q.b), free(q.c), free(q.d);
}

/* A zero pivot: in a batch of three dominant systems of 4 unknowns, the middle one gets b_0 = 0
 * (still non-singular, as c_0 != 0 and the others dominate). Documented: that system's x is not
 * finite, the other two are solved as usual. */
static void check_zero_pivot(kedr_ctx *ctx, kedr_dtype t, kedr_tridiag_layout layout)
{
    batch q = {4, 3, layout, 0, t, NULL, NULL, NULL, NULL};
    generate(&q, 99, 0);
    q.b[1 * q.n + 0] = 0;
    void *h[4] = {pack(&q, q.a), pack(&q, q.b), pack(&q, q.c), pack(&q, q.d)};
    dev_batch g = upload(ctx, &q, h);
    kedr_tridiag_desc desc = {q.n, q.count, layout, 0, KEDR_TRIDIAG_THOMAS};
    TU_OK(kedr_tridiag_solve(ctx, t, &desc, g.a, g.b, g.c, g.d));
    void *got = tu_download(ctx, g.d, q.n * q.count * kedr_dtype_size(t));
    long double scratch[8], bw, fw, u = unit_roundoff(t);
    for (size_t s = 0; s < q.count; s++) {
        int finite = errors(&q, got, s, &bw, &fw, scratch);
        if (s == 1)
            TU_CHECK(!finite, "%s %s zero pivot: system 1 came out finite",
                     kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t));
        else
            TU_CHECK(finite && bw <= BACKWARD_U * u && fw <= 12 * BACKWARD_U * u,
                     "%s %s zero pivot: system %zu next to it is wrong (%d, %.3Lg u, %.3Lg u)",
                     kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t), s, finite,
                     bw / u, fw / u);
    }
    free(got);
    for (int k = 0; k < 4; k++)
        free(h[k]);
    kedr_free(ctx, g.a), kedr_free(ctx, g.b), kedr_free(ctx, g.c), kedr_free(ctx, g.d);
    free(q.a), free(q.b), free(q.c), free(q.d);
}

static void expect(kedr_status got, kedr_status want, const char *what)
{
    TU_CHECK(got == want && *kedr_last_error(), "%s: %s (expected %s): %s", what,
             kedr_status_name(got), kedr_status_name(want), kedr_last_error());
}

static void check_errors(kedr_ctx *ctx)
{
    double h[8] = {0, 1, 4, 4, 1, 0, 1, 1}; /* a, b, c, d of one system of 2 */
    double *p = tu_upload(ctx, h, sizeof h);
    kedr_tridiag_desc g = {2, 1, KEDR_TRIDIAG_CONTIGUOUS, 0, KEDR_TRIDIAG_AUTO}, bad = g;
    expect(kedr_tridiag_solve(NULL, KEDR_F64, &g, p, p + 2, p + 4, p + 6), KEDR_ERR_INVALID,
           "NULL ctx");
    expect(kedr_tridiag_solve(ctx, KEDR_F64, NULL, p, p + 2, p + 4, p + 6), KEDR_ERR_INVALID,
           "NULL desc");
    expect(kedr_tridiag_solve(ctx, KEDR_U32, &g, p, p + 2, p + 4, p + 6), KEDR_ERR_UNSUPPORTED,
           "u32");
    expect(kedr_tridiag_solve(ctx, KEDR_F64, &g, NULL, p + 2, p + 4, p + 6), KEDR_ERR_INVALID,
           "NULL a");
    expect(kedr_tridiag_solve(ctx, KEDR_F64, &g, p, p + 2, p + 4, p + 5), KEDR_ERR_INVALID,
           "c overlapping d");
    expect(kedr_tridiag_solve(ctx, KEDR_F64, &g, p, p + 2, p + 4, p + 2), KEDR_ERR_INVALID,
           "b equal to d");
    bad.n = 0;
    expect(kedr_tridiag_solve(ctx, KEDR_F64, &bad, p, p + 2, p + 4, p + 6), KEDR_ERR_INVALID,
           "n = 0");
    bad = g;
    bad.layout = (kedr_tridiag_layout)2;
    expect(kedr_tridiag_solve(ctx, KEDR_F64, &bad, p, p + 2, p + 4, p + 6), KEDR_ERR_INVALID,
           "layout 2");
    bad = g;
    bad.periodic = 2;
    expect(kedr_tridiag_solve(ctx, KEDR_F64, &bad, p, p + 2, p + 4, p + 6), KEDR_ERR_INVALID,
           "periodic 2");
    bad = g;
    bad.algorithm = (kedr_tridiag_algorithm)8;
    expect(kedr_tridiag_solve(ctx, KEDR_F64, &bad, p, p + 2, p + 4, p + 6), KEDR_ERR_INVALID,
           "algorithm 8");
    bad = g;
    bad.count = SIZE_MAX / 2;
    expect(kedr_tridiag_solve(ctx, KEDR_F64, &bad, p, p + 2, p + 4, p + 6), KEDR_ERR_INVALID,
           "overflowing size");
    bad = g;
    bad.count = 0; /* nothing to solve: no pointer is read */
    TU_OK(kedr_tridiag_solve(ctx, KEDR_F64, &bad, NULL, NULL, NULL, NULL));
    /* The 2 x 2 system [4 1; 1 4] x = (1, 1) survives all of the above untouched: x = 1/5. */
    TU_OK(kedr_tridiag_solve(ctx, KEDR_F64, &g, p, p + 2, p + 4, p + 6));
    TU_OK(kedr_download(ctx, h, p, sizeof h));
    TU_CHECK(fabs(h[6] - 0.2) < 1e-15 && fabs(h[7] - 0.2) < 1e-15, "x = (%g, %g), expected 0.2",
             h[6], h[7]);
    kedr_free(ctx, p);
}

/* 32 and 64: the most unknowns the GPU's register kernel takes (f64, f32), 16 and 32 for
 * periodic systems (f64, f32); 256: the longest
 * contiguous systems AUTO leaves to the Thomas tiles on the GPU; 4097: chunks of a length that
 * leaves a short last chunk. */
static const size_t sizes_n[] = {1, 2, 3, 16, 17, 31, 32, 33, 64, 65, 255, 257, 1000, 4097};
static const size_t sizes_count[] = {1, 2, 7, 1000};

/* Every size for one algorithm, type and layout. */
static void check_all(kedr_ctx *ctx, kedr_tridiag_algorithm alg, kedr_dtype t,
                      kedr_tridiag_layout layout, uint64_t *seed)
{
    for (int periodic = 0; periodic < 2; periodic++)
        for (size_t ni = 0; ni < sizeof sizes_n / sizeof *sizes_n; ni++)
            for (size_t ci = 0; ci < sizeof sizes_count / sizeof *sizes_count; ci++)
                if (sizes_n[ni] <= 1000 || sizes_count[ci] < 1000)
                    check_batch(ctx, alg, t, layout, periodic, sizes_n[ni], sizes_count[ci],
                                (*seed)++, 0);
    /* 2^20 unknowns: systems of 256 and of 4096, periodic in one layout each, and systems
     * too long for shared memory; periodic systems of 512 (which the GPU's AUTO splits evenly
     * between PCR threads when contiguous) and of 600 (which it does not, and solves by
     * Thomas). */
    size_t large = tu_scale((size_t)1 << 20, (size_t)1 << 16);
    int other = layout == KEDR_TRIDIAG_CONTIGUOUS;
    check_batch(ctx, alg, t, layout, !other, 256, large / 256, (*seed)++, 0);
    check_batch(ctx, alg, t, layout, other, 4096, large / 4096, (*seed)++, 0);
    check_batch(ctx, alg, t, layout, 0, large / 16 + 3, 16, (*seed)++, 0);
    check_batch(ctx, alg, t, layout, 1, 512, 100, (*seed)++, 0);
    check_batch(ctx, alg, t, layout, 1, 600, 100, (*seed)++, 0);
    check_batch(ctx, alg, t, layout, 0, 1000, 33, (*seed)++, 1);
    /* longer than the GPU's chunked kernel holds (f32 about 13000, f64 6000): contiguous ones
     * streamed by AUTO and CHUNKED in segments of unequal lengths, periodic and not */
    check_batch(ctx, alg, t, layout, 1, 20001, 7, (*seed)++, 0);
    check_batch(ctx, alg, t, layout, 0, 14000, 3, (*seed)++, 0);
    check_zero_pivot(ctx, t, layout);
    /* counts that leave the cpu's last group of lanes part full (src/prim/tridiag.c: 8 to 256
     * lanes), at lengths on either side of its tiles of rows */
    static const size_t group_n[] = {1, 2, 3, 31, 33, 1000}, group_count[] = {3, 9, 33};
    for (size_t ni = 0; ni < sizeof group_n / sizeof *group_n; ni++)
        for (size_t ci = 0; ci < sizeof group_count / sizeof *group_count; ci++)
            check_batch(ctx, alg, t, layout, (int)(ni + ci) % 2, group_n[ni], group_count[ci],
                        (*seed)++, 0);
}

int main(void)
{
    static const kedr_dtype types[] = {KEDR_F32, KEDR_F64};
    kedr_backend backends[2];
    int nb = tu_backends(backends);
    for (int bi = 0; bi < nb; bi++) {
        kedr_ctx *ctx = tu_ctx(backends[bi]);
        check_errors(ctx);
        /* The cpu runs Thomas for AUTO. On the GPU AUTO takes the chunked kernel for
         * contiguous systems of 257 unknowns and more that fit in shared memory, the streamed
         * solver for longer contiguous ones (CHUNKED too), the register kernels for
         * interleaved systems of at most 64 (f64: 32; periodic 32, f64 16) unknowns, and
         * Thomas tiles or the sweep elsewhere; THOMAS the tiles or the sweep alone; CHUNKED
         * the chunked kernel at every size (the cpu's CHUNKED is in test_tridiag_algos). */
        static const kedr_tridiag_algorithm algs[] = {KEDR_TRIDIAG_AUTO, KEDR_TRIDIAG_THOMAS,
                                                      KEDR_TRIDIAG_CHUNKED};
        int nalg = backends[bi] == KEDR_BACKEND_CUDA ? 3 : 1;
        uint64_t seed = 1;
        for (int al = 0; al < nalg; al++)
            for (int ti = 0; ti < 2; ti++)
                for (int layout = 0; layout < 2; layout++)
                    check_all(ctx, algs[al], types[ti], (kedr_tridiag_layout)layout, &seed);
        printf("worst errors in units of u (allowed: backward %.0Lf, forward of dominant "
               "systems %.0Lf): f32 %.2Lf, %.2Lf; f64 %.2Lf, %.2Lf\n", BACKWARD_U,
               12 * BACKWARD_U, seen_backward[0], seen_forward[0], seen_backward[1],
               seen_forward[1]);
        memset(seen_backward, 0, sizeof seen_backward);
        memset(seen_forward, 0, sizeof seen_forward);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_tridiag");
}
