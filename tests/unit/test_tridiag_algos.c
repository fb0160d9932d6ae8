/* Every algorithm of kedr_tridiag_solve (Thomas, CR, PCR, CR-PCR, partitioned, chunked,
 * PCR-Thomas) against a banded Gaussian elimination with partial pivoting in long double, at
 * n = 1, 2, 3, 31, 32, 33, 255, 257, 1000, 4097 and a large n, 1 to many systems, both layouts, f32 and f64, periodic and not; strictly
 * dominant systems, the 1D Laplacian (symmetric positive definite, not strictly dominant) and
 * non-dominant systems; a zero pivot; and the partitioned API (kedr_tridiag_part_reduce and
 * kedr_tridiag_part_complete) on systems cut into 2 to 7 parts, against the whole solve.
 *
 * Tolerances. For the dominant systems (margin |b| - |a| - |c| >= 1, ||A|| <= 6, so
 * ||A^-1|| <= 1 and the condition number at most 6: Varah 1975) each algorithm has a backward
 * error of a small multiple of u independent of n (Thomas: Higham, Accuracy and Stability of
 * Numerical Algorithms, 2002, Theorem 9.12; CR and PCR keep every row dominant and combine
 * rows with multipliers below 1 in magnitude; the part elimination likewise). The test allows a
 * normwise backward error of BACKWARD_U u + LOG_U u log2(n) (PCR rows are sums of up to log2 n
 * combined rows) and a forward error of 6 times that against the reference. For the Laplacian
 * the forward bound uses its condition number (n + 1)^2 / 2. Non-dominant systems have no
 * guarantee (docs/prim.md): there the test asks only what the API promises, that every value
 * is either finite with the residual reported, or that the system with a zero pivot comes out
 * not finite while its neighbours are solved. */
#include "test_util.h"

#include <float.h>
#include <stdint.h>

#define BACKWARD_U 32.0L
#define LOG_U 8.0L

static const kedr_tridiag_algorithm algs[] = {KEDR_TRIDIAG_THOMAS, KEDR_TRIDIAG_CR,
                                              KEDR_TRIDIAG_PCR, KEDR_TRIDIAG_CR_PCR,
                                              KEDR_TRIDIAG_PARTITIONED, KEDR_TRIDIAG_CHUNKED,
                                              KEDR_TRIDIAG_PCR_THOMAS};
static const char *const alg_names[] = {"auto",        "thomas",  "cr",        "pcr",
                                        "cr_pcr",      "partitioned", "chunked", "pcr_thomas"};
#define NALGS (sizeof algs / sizeof algs[0])

/* Non-dominant systems per algorithm: solved, finite, and the worst backward error (in u) of the
 * finite ones, printed at the end: what happens without the guarantee, not a pass or fail. */
static size_t nd_total[8], nd_finite[8];
static long double nd_worst[8];

typedef struct {
    size_t n, count;
    kedr_tridiag_layout layout;
    int periodic;
    kedr_dtype t;
    long double *a, *b, *c, *d; /* as stored in type t, in system order (s * n + i) */
} batch;

static size_t at(const batch *q, size_t s, size_t i)
{
    return q->layout == KEDR_TRIDIAG_CONTIGUOUS ? s * q->n + i : i * q->count + s;
}

static long double unit_roundoff(kedr_dtype t) { return t == KEDR_F32 ? 0x1p-24L : 0x1p-53L; }

static long double rounded(kedr_dtype t, double x)
{
    return t == KEDR_F32 ? (long double)(float)x : (long double)x;
}

enum { DOMINANT = 0, LAPLACIAN = 1, NONDOMINANT = 2 };

/* kind DOMINANT: a, c in [-1, 1], |b| = |a| + |c| + 1 + [0, 1) of random sign; LAPLACIAN:
 * b = 2, a = c = -1; NONDOMINANT: a, c in [-1, 1], b in [-1, 1]. d in [-1, 1]. Non-periodic
 * systems get NaN in a_0 and c_{n-1}, which must be ignored. */
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
        if (kind == LAPLACIAN)
            a = c = -1, b = 2;
        if (kind == NONDOMINANT)
            b = tu_uniform(&rng) * 2 - 1;
        q->a[k] = !q->periodic && i == 0 ? NAN : rounded(q->t, a);
        q->c[k] = !q->periodic && i == q->n - 1 ? NAN : rounded(q->t, c);
        q->b[k] = rounded(q->t, b);
        q->d[k] = rounded(q->t, tu_uniform(&rng) * 2 - 1);
    }
}

static void *pack(const batch *q, const long double *v)
{
    char *h = tu_host_alloc(q->n * q->count * kedr_dtype_size(q->t));
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

/* Banded Gaussian elimination with partial pivoting (as LAPACK's gtsv does it) of rows 0 .. m-1
 * of sub-diagonal l (l[i] in row i, column i-1), diagonal e, super-diagonal u, for nr right
 * sides r[k * m + i]; overwrites l, e, u and r with x. Returns 0 for a zero pivot. */
static int gepp(long double *l, long double *e, long double *u, long double *r, size_t m, int nr)
{
    long double *u2 = tu_host_alloc((m + 1) * sizeof *u2);
    for (size_t i = 0; i + 1 < m; i++) {
        u2[i] = 0;
        long double sub = l[i + 1];
        if (fabsl(e[i]) >= fabsl(sub)) { /* no swap: row i+1 -= f row i */
            if (e[i] == 0)
                continue; /* sub is 0 too: nothing to eliminate */
            long double f = sub / e[i];
            e[i + 1] -= f * u[i];
            for (int k = 0; k < nr; k++)
                r[k * m + i + 1] -= f * r[k * m + i];
        } else { /* swap rows i and i+1, then eliminate */
            long double f = e[i] / sub, t = e[i + 1];
            e[i] = sub;
            e[i + 1] = u[i] - f * t;
            u[i] = t;
            if (i + 2 < m) {
                u2[i] = u[i + 1];
                u[i + 1] = -f * u[i + 1];
            }
            for (int k = 0; k < nr; k++) {
                long double ri = r[k * m + i], rj = r[k * m + i + 1];
                r[k * m + i] = rj;
                r[k * m + i + 1] = ri - f * rj;
            }
        }
    }
    int ok = 1;
    for (size_t j = m; j-- > 0;) {
        if (e[j] == 0)
            ok = 0;
        for (int k = 0; k < nr; k++) {
            long double *x = r + k * m, v = x[j];
            if (j + 1 < m)
                v -= u[j] * x[j + 1];
            if (j + 2 < m)
                v -= u2[j] * x[j + 2];
            x[j] = v / e[j];
        }
    }
    free(u2);
    return ok;
}

/* The reference x of system s in long double: gepp, periodic systems bordered (the leading
 * n - 1 rows for d and for -a_0 e_0 - c_{n-2} e_{n-2}, then x_{n-1}). Returns 0 if singular. */
static int reference(const batch *q, size_t s, long double *x)
{
    size_t n = q->n, o = s * n, m = q->periodic ? n - 1 : n;
    if (q->periodic && n == 1) {
        x[0] = q->d[o] / (q->a[o] + q->b[o] + q->c[o]);
        return isfinite(x[0]);
    }
    long double *w = tu_host_alloc(5 * n * sizeof *w), *l = w, *e = w + n, *u = w + 2 * n;
    long double *r = w + 3 * n;
    for (size_t i = 0; i < m; i++) {
        l[i] = i ? q->a[o + i] : 0;
        e[i] = q->b[o + i];
        u[i] = i + 1 < m ? q->c[o + i] : 0;
        r[i] = q->d[o + i];
        r[m + i] = 0;
    }
    if (q->periodic) {
        r[m] = -q->a[o];
        r[2 * m - 1] -= q->c[o + m - 1];
    }
    int ok = gepp(l, e, u, r, m, q->periodic ? 2 : 1);
    for (size_t i = 0; i < m; i++)
        x[i] = r[i];
    if (q->periodic) {
        long double al = q->a[o + n - 1], cl = q->c[o + n - 1];
        long double xl = (q->d[o + n - 1] - al * r[m - 1] - cl * r[0]) /
                         (q->b[o + n - 1] + al * r[2 * m - 1] + cl * r[m]);
        for (size_t i = 0; i < m; i++)
            x[i] += xl * r[m + i];
        x[n - 1] = xl;
        ok = ok && isfinite(xl);
    }
    free(w);
    return ok;
}

/* ||A x - d|| / (||A|| ||x|| + ||d||) of system s (x in system order). */
static long double backward(const batch *q, size_t s, const long double *x)
{
    size_t n = q->n;
    long double rmax = 0, anorm = 0, xnorm = 0, dnorm = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = s * n + i;
        long double sum = q->b[k] * x[i], row = fabsl(q->b[k]);
        if (i > 0 || q->periodic)
            sum += q->a[k] * x[(i + n - 1) % n], row += fabsl(q->a[k]);
        if (i + 1 < n || q->periodic)
            sum += q->c[k] * x[(i + 1) % n], row += fabsl(q->c[k]);
        rmax = fmaxl(rmax, fabsl(sum - q->d[k]));
        anorm = fmaxl(anorm, row);
        xnorm = fmaxl(xnorm, fabsl(x[i]));
        dnorm = fmaxl(dnorm, fabsl(q->d[k]));
    }
    return rmax / (anorm * xnorm + dnorm);
}

static void free_batch(batch *q) { free(q->a), free(q->b), free(q->c), free(q->d); }

/* Copies in the context's memory; d is followed by 8 poisoned bytes. */
static void upload4(kedr_ctx *ctx, const batch *q, void *h[4], void *g[4])
{
    size_t bytes = q->n * q->count * kedr_dtype_size(q->t);
    for (int k = 0; k < 3; k++)
        g[k] = tu_upload(ctx, h[k], bytes);
    g[3] = tu_poisoned(ctx, bytes + 8);
    TU_OK(kedr_upload(ctx, g[3], h[3], bytes));
}

/* Solves one batch with alg and checks every system against the reference. */
static void check_batch(kedr_ctx *ctx, kedr_tridiag_algorithm alg, kedr_dtype t,
                        kedr_tridiag_layout layout, int periodic, size_t n, size_t count,
                        uint64_t seed, int kind)
{
    batch q = {n, count, layout, periodic, t, NULL, NULL, NULL, NULL};
    generate(&q, seed, kind);
    void *h[4] = {pack(&q, q.a), pack(&q, q.b), pack(&q, q.c), pack(&q, q.d)}, *g[4];
    upload4(ctx, &q, h, g);
    size_t bytes = n * count * kedr_dtype_size(t);
    char what[200];
    snprintf(what, sizeof what, "%s %s %s %s%s n=%zu count=%zu seed=%llu kind=%d",
             kedr_backend_name(kedr_ctx_backend(ctx)), alg_names[alg], kedr_dtype_name(t),
             layout == KEDR_TRIDIAG_CONTIGUOUS ? "contiguous" : "interleaved",
             periodic ? " periodic" : "", n, count, (unsigned long long)seed, kind);
    kedr_tridiag_desc desc = {n, count, layout, periodic, alg};
    kedr_status st = kedr_tridiag_solve(ctx, t, &desc, g[0], g[1], g[2], g[3]);
    TU_CHECK(st == KEDR_OK, "%s: %s", what, kedr_last_error());
    {
        void *got = tu_download(ctx, g[3], bytes + 8);
        long double u = unit_roundoff(t), lg = 0, worst = 0;
        for (size_t m = n; m > 1; m /= 2)
            lg += 1;
        long double bound = (BACKWARD_U + LOG_U * lg) * u;
        long double kappa = kind == LAPLACIAN ? (n + 1.0L) * (n + 1) / 2 : 6;
        long double *x = tu_host_alloc(2 * n * sizeof *x), *ref = x + n;
        size_t bad = 0;
        for (size_t s = 0; s < count; s++) {
            int finite = 1;
            for (size_t i = 0; i < n; i++) {
                x[i] = get(&q, got, s, i);
                finite = finite && isfinite(x[i]);
            }
            if (kind == NONDOMINANT) { /* no promise: reported at the end */
                nd_total[alg]++;
                nd_finite[alg] += finite;
                if (finite)
                    nd_worst[alg] = fmaxl(nd_worst[alg], backward(&q, s, x) / u);
                continue;
            }
            long double bw = finite ? backward(&q, s, x) : INFINITY, fw = INFINITY;
            if (finite && reference(&q, s, ref)) {
                long double e = 0, rn = LDBL_MIN;
                for (size_t i = 0; i < n; i++)
                    e = fmaxl(e, fabsl(x[i] - ref[i])), rn = fmaxl(rn, fabsl(ref[i]));
                fw = e / rn;
            }
            if (!(bw <= bound) || !(fw <= 2 * kappa * bound)) {
                if (bad++ == 0)
                    TU_CHECK(0, "%s: system %zu: backward error %.3Lg u, forward %.3Lg u "
                             "(bounds %.3Lg u, %.3Lg u)", what, s, bw / u, fw / u, bound / u,
                             2 * kappa * bound / u);
                continue;
            }
            worst = fmaxl(worst, bw / u);
        }
        TU_CHECK(bad == 0, "%s: %zu of %zu systems wrong", what, bad, count);
        unsigned char *tail = (unsigned char *)got + bytes;
        TU_CHECK(tail[0] == TU_POISON_BYTE && tail[7] == TU_POISON_BYTE, "%s: wrote past d",
                 what);
        for (int k = 0; k < 3; k++) {
            void *back = tu_download(ctx, g[k], bytes);
            TU_CHECK(memcmp(back, h[k], bytes) == 0, "%s: input %c changed", what, "abc"[k]);
            free(back);
        }
        free(x);
        free(got);
    }
    for (int k = 0; k < 4; k++)
        free(h[k]), kedr_free(ctx, g[k]);
    free_batch(&q);
}

/* A zero pivot in the middle system of three of 40 unknowns (b_0 = 0; non-singular): that
 * system comes out not finite, its neighbours are solved. Documented for every algorithm. */
static void check_zero_pivot(kedr_ctx *ctx, kedr_tridiag_algorithm alg, kedr_dtype t,
                             kedr_tridiag_layout layout)
{
    batch q = {40, 3, layout, 0, t, NULL, NULL, NULL, NULL};
    generate(&q, 77, DOMINANT);
    q.b[q.n] = 0;
    void *h[4] = {pack(&q, q.a), pack(&q, q.b), pack(&q, q.c), pack(&q, q.d)}, *g[4];
    upload4(ctx, &q, h, g);
    kedr_tridiag_desc desc = {q.n, q.count, layout, 0, alg};
    TU_OK(kedr_tridiag_solve(ctx, t, &desc, g[0], g[1], g[2], g[3]));
    void *got = tu_download(ctx, g[3], q.n * q.count * kedr_dtype_size(t));
    long double x[40], u = unit_roundoff(t);
    for (size_t s = 0; s < 3; s++) {
        int finite = 1;
        for (size_t i = 0; i < q.n; i++)
            x[i] = get(&q, got, s, i), finite = finite && isfinite(x[i]);
        if (s == 1)
            TU_CHECK(!finite, "%s %s zero pivot: system 1 came out finite", alg_names[alg],
                     kedr_dtype_name(t));
        else
            TU_CHECK(finite && backward(&q, s, x) <= 64 * u, "%s %s zero pivot: system %zu "
                     "beside it is wrong", alg_names[alg], kedr_dtype_name(t), s);
    }
    free(got);
    for (int k = 0; k < 4; k++)
        free(h[k]), kedr_free(ctx, g[k]);
    free_batch(&q);
}

/* The partitioned API: each system of n cut into `parts` parts of uneven lengths (at least 2),
 * each part reduced on its own from a view of the whole arrays (stride), the interface rows
 * written straight into the interleaved interface system, solved, each part completed; the
 * result against the whole solve by Thomas. Contiguous parts are views at stride n; interleaved
 * ones are compact (stride 0 means count). */
static void check_parts(kedr_ctx *ctx, kedr_dtype t, kedr_tridiag_layout layout, int periodic,
                        size_t n, size_t count, size_t parts, uint64_t seed)
{
    batch q = {n, count, layout, periodic, t, NULL, NULL, NULL, NULL};
    generate(&q, seed, DOMINANT);
    void *h[4] = {pack(&q, q.a), pack(&q, q.b), pack(&q, q.c), pack(&q, q.d)}, *g[4];
    upload4(ctx, &q, h, g);
    size_t es = kedr_dtype_size(t), bytes = n * count * es, rows = 2 * parts * count;
    int inter = layout == KEDR_TRIDIAG_INTERLEAVED;
    char *ifc = tu_poisoned(ctx, 4 * rows * es), *w = tu_poisoned(ctx, 2 * bytes);
    size_t lo[8];
    for (size_t p = 0; p <= parts; p++) /* uneven: part p gets about (p + 1) shares */
        lo[p] = p == parts ? n : p * 2 + (n - 2 * parts) * p * (p + 1) / (parts * (parts + 1));
    char what[160];
    snprintf(what, sizeof what, "%s parts %s %s%s n=%zu count=%zu parts=%zu",
             kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t),
             inter ? "interleaved" : "contiguous", periodic ? " periodic" : "", n, count, parts);
    for (size_t p = 0; p < parts; p++) {
        kedr_tridiag_part part = {lo[p + 1] - lo[p], count, layout, inter ? 0 : n};
        size_t off = (inter ? lo[p] * count : lo[p]) * es, r0 = 2 * p * count * es;
        kedr_tridiag_iface f = {ifc + r0, ifc + rows * es + r0, ifc + 2 * rows * es + r0,
                                ifc + 3 * rows * es + r0};
        TU_OK(kedr_tridiag_part_reduce(ctx, t, &part, (char *)g[0] + off, (char *)g[1] + off,
                                       (char *)g[2] + off, (char *)g[3] + off,
                                       w + 2 * lo[p] * count * es, &f));
    }
    kedr_tridiag_desc rd = {2 * parts, count, KEDR_TRIDIAG_INTERLEAVED, periodic,
                            KEDR_TRIDIAG_AUTO};
    TU_OK(kedr_tridiag_solve(ctx, t, &rd, ifc, ifc + rows * es, ifc + 2 * rows * es,
                             ifc + 3 * rows * es));
    for (size_t p = 0; p < parts; p++) {
        kedr_tridiag_part part = {lo[p + 1] - lo[p], count, layout, inter ? 0 : n};
        size_t off = (inter ? lo[p] * count : lo[p]) * es;
        TU_OK(kedr_tridiag_part_complete(ctx, t, &part, w + 2 * lo[p] * count * es,
                                         ifc + 3 * rows * es + 2 * p * count * es,
                                         (char *)g[3] + off));
    }
    void *got = tu_download(ctx, g[3], bytes + 8);
    /* the whole solve */
    void *whole = tu_upload(ctx, h[3], bytes);
    kedr_tridiag_desc desc = {n, count, layout, periodic, KEDR_TRIDIAG_THOMAS};
    TU_OK(kedr_tridiag_solve(ctx, t, &desc, g[0], g[1], g[2], whole));
    void *want = tu_download(ctx, whole, bytes);
    long double u = unit_roundoff(t), worst = 0;
    for (size_t s = 0; s < count; s++)
        for (size_t i = 0; i < n; i++) {
            long double x = get(&q, got, s, i), y = get(&q, want, s, i);
            long double e = fabsl(x - y) / fmaxl(fabsl(y), 1);
            worst = isfinite(x) && e <= worst ? worst : isfinite(x) ? e : INFINITY;
        }
    TU_CHECK(worst <= 12 * BACKWARD_U * u, "%s: differs from the whole solve by %.3Lg u", what,
             worst / u);
    unsigned char *tail = (unsigned char *)got + bytes;
    TU_CHECK(tail[0] == TU_POISON_BYTE && tail[7] == TU_POISON_BYTE, "%s: wrote past d", what);
    free(got), free(want);
    kedr_free(ctx, whole), kedr_free(ctx, ifc), kedr_free(ctx, w);
    for (int k = 0; k < 4; k++)
        free(h[k]), kedr_free(ctx, g[k]);
    free_batch(&q);
}

static void expect(kedr_status got, kedr_status want, const char *what)
{
    TU_CHECK(got == want && *kedr_last_error(), "%s: %s (expected %s): %s", what,
             kedr_status_name(got), kedr_status_name(want), kedr_last_error());
}

static void check_part_errors(kedr_ctx *ctx)
{
    double *p = tu_poisoned(ctx, 64 * sizeof(double));
    kedr_tridiag_part part = {4, 2, KEDR_TRIDIAG_CONTIGUOUS, 0}, bad = part;
    kedr_tridiag_iface f = {p + 40, p + 44, p + 48, p + 52};
    expect(kedr_tridiag_part_reduce(NULL, KEDR_F64, &part, p, p + 8, p + 16, p + 24, p + 56,
                                    &f), KEDR_ERR_INVALID, "NULL ctx");
    expect(kedr_tridiag_part_reduce(ctx, KEDR_F64, NULL, p, p + 8, p + 16, p + 24, p + 56, &f),
           KEDR_ERR_INVALID, "NULL part");
    expect(kedr_tridiag_part_reduce(ctx, KEDR_I32, &part, p, p + 8, p + 16, p + 24, p + 56, &f),
           KEDR_ERR_UNSUPPORTED, "i32");
    bad.n = 1;
    expect(kedr_tridiag_part_reduce(ctx, KEDR_F64, &bad, p, p + 8, p + 16, p + 24, p + 56, &f),
           KEDR_ERR_INVALID, "a part of 1 row");
    bad = part;
    bad.stride = 3;
    expect(kedr_tridiag_part_reduce(ctx, KEDR_F64, &bad, p, p + 8, p + 16, p + 24, p + 56, &f),
           KEDR_ERR_INVALID, "stride below n");
    bad = part;
    bad.layout = (kedr_tridiag_layout)5;
    expect(kedr_tridiag_part_complete(ctx, KEDR_F64, &bad, p + 56, p, p + 24), KEDR_ERR_INVALID,
           "layout 5");
    expect(kedr_tridiag_part_reduce(ctx, KEDR_F64, &part, p, p + 8, p + 16, p + 20, p + 56,
                                    &f), KEDR_ERR_INVALID, "c overlapping d");
    expect(kedr_tridiag_part_reduce(ctx, KEDR_F64, &part, p, p + 8, p + 16, p + 24, p + 56,
                                    NULL), KEDR_ERR_INVALID, "NULL iface");
    expect(kedr_tridiag_part_complete(ctx, KEDR_F64, &part, NULL, p, p + 24), KEDR_ERR_INVALID,
           "NULL w");
    /* w right after d (each checked with its own extent: w 2 elements a row, d its span) is
     * apart; one element further back it overlaps */
    double *q = tu_poisoned(ctx, 128 * sizeof(double));
    kedr_tridiag_iface f2 = {q + 64, q + 68, q + 72, q + 76};
    expect(kedr_tridiag_part_reduce(ctx, KEDR_F64, &part, q, q + 8, q + 16, q + 24, q + 32,
                                    &f2), KEDR_OK, "w just after d");
    expect(kedr_tridiag_part_complete(ctx, KEDR_F64, &part, q + 32, q + 80, q + 24), KEDR_OK,
           "w just after d (complete)");
    expect(kedr_tridiag_part_reduce(ctx, KEDR_F64, &part, q, q + 8, q + 16, q + 24, q + 31,
                                    &f2), KEDR_ERR_INVALID, "w overlapping d's last element");
    TU_OK(kedr_ctx_sync(ctx));
    kedr_free(ctx, q);
    kedr_tridiag_desc g = {2, 1, KEDR_TRIDIAG_CONTIGUOUS, 0, (kedr_tridiag_algorithm)8};
    expect(kedr_tridiag_solve(ctx, KEDR_F64, &g, p, p + 2, p + 4, p + 6), KEDR_ERR_INVALID,
           "algorithm 8");
    kedr_free(ctx, p);
}

int main(void)
{
    static const kedr_dtype types[] = {KEDR_F32, KEDR_F64};
    static const size_t sizes_n[] = {1, 2, 3, 31, 32, 33, 255, 257, 1000, 4097};
    static const size_t sizes_count[] = {1, 3, 100};
    kedr_backend backends[2];
    int nb = tu_backends(backends);
    size_t large = tu_scale(((size_t)1 << 16) + 3, ((size_t)1 << 12) + 3);
    for (int bi = 0; bi < nb; bi++) {
        kedr_ctx *ctx = tu_ctx(backends[bi]);
        check_part_errors(ctx);
        uint64_t seed = 1;
        for (size_t al = 0; al < NALGS; al++)
            for (int ti = 0; ti < 2; ti++)
                for (int layout = 0; layout < 2; layout++) {
                    kedr_tridiag_layout lay = (kedr_tridiag_layout)layout;
                    for (int periodic = 0; periodic < 2; periodic++) {
                        for (size_t ni = 0; ni < sizeof sizes_n / sizeof *sizes_n; ni++)
                            for (size_t ci = 0; ci < 3; ci++)
                                if (sizes_n[ni] <= 1000 || sizes_count[ci] < 100)
                                    check_batch(ctx, algs[al], types[ti], lay, periodic,
                                                sizes_n[ni], sizes_count[ci], seed++,
                                                DOMINANT);
                        check_batch(ctx, algs[al], types[ti], lay, periodic, large, 3, seed++,
                                    DOMINANT);
                        check_batch(ctx, algs[al], types[ti], lay, periodic, 1000, 5, seed++,
                                    NONDOMINANT);
                    }
                    check_batch(ctx, algs[al], types[ti], lay, 0, 300, 4, seed++, LAPLACIAN);
                    check_zero_pivot(ctx, algs[al], types[ti], lay);
                }
        for (int ti = 0; ti < 2; ti++)
            for (int layout = 0; layout < 2; layout++)
                for (int periodic = 0; periodic < 2; periodic++)
                    for (size_t parts = 2; parts <= 7; parts++) {
                        check_parts(ctx, types[ti], (kedr_tridiag_layout)layout, periodic,
                                    14 + 37 * parts, 5, parts, seed++);
                        check_parts(ctx, types[ti], (kedr_tridiag_layout)layout, periodic,
                                    2 * parts, 1, parts, seed++);
                    }
        for (size_t al = 0; al < NALGS; al++) {
            kedr_tridiag_algorithm a = algs[al];
            printf("%s %s, non-dominant systems of 1000: %zu of %zu finite, worst backward error "
                   "%.3Lg u\n", kedr_backend_name(backends[bi]), alg_names[a], nd_finite[a],
                   nd_total[a], nd_worst[a]);
            nd_total[a] = nd_finite[a] = 0;
            nd_worst[a] = 0;
        }
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_tridiag_algos");
}
