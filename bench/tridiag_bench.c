/* kedr bench tridiag: times kedr_tridiag_solve on batches of diagonally dominant systems, per
 * layout, precision and system length at a fixed number of unknowns (median of repeats after a
 * warm-up), next to a copy of as many bytes timed just before it (the device's copy bandwidth,
 * over all threads on the cpu) and, in the same run, next to cuSPARSE on the
 * GPU or LAPACK's gtsv (through LAPACKE, one system a call, the systems shared among the
 * OpenMP threads) on the cpu. Each solver's first result is checked by its residuals, so that
 * no row reports the time of a wrong answer. */
#include "bench.h"
#include "bench_util.h"

#include "core/internal.h"
#ifdef KEDR_HAVE_CUDA
#include "cusparse_ref.h"
#endif

#ifdef KEDR_HAVE_LAPACKE
#include <lapacke.h>
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Systems whose residuals are checked, spread over the batch. */
#define CHECK_SYSTEMS 512
/* Allowed normwise backward error in units of u (tests/unit/test_tridiag.c says why). */
#define CHECK_BACKWARD_U 32.0

typedef struct {
    kedr_tridiag_desc desc;
    kedr_dtype t;
    double ms, ref_ms; /* ref_ms < 0: no time of the reference (cuSPARSE or LAPACK) */
    double copy_gbps;  /* a copy of the bytes the solve moves, just before it */
    const char *status; /* "ok", "MISMATCH" or "error" */
    char message[320];
} row;

/* One batch: host inputs in f64 (system order), device arrays for kedr and for cuSPARSE. */
typedef struct {
    kedr_ctx *ctx;
    size_t elems, bytes;
    double *a, *b, *c, *d; /* host, element (s, i) at s * n + i */
    void *h;               /* host staging in the solver's type and layout */
    void *dev[8];          /* a, b, c, d for kedr, then for cuSPARSE (which may change them) */
} batch;

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static double uniform(uint64_t seed, uint64_t i) { return (mix(seed ^ mix(i)) >> 11) * 0x1p-53; }

/* Row dominant systems: a, c in [-1, 1], |b| = |a| + |c| + 1 + [0, 1), d in [-1, 1]; a_0 and
 * c_{n-1} are 0, as cuSPARSE wants. */
static void generate(batch *q, size_t n, int periodic)
{
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < q->elems; k++) {
        size_t i = k % n;
        double a = uniform(1, k) * 2 - 1, c = uniform(2, k) * 2 - 1;
        double b = fabs(a) + fabs(c) + 1 + uniform(3, k);
        q->a[k] = i == 0 && !periodic ? 0 : a;
        q->c[k] = i == n - 1 && !periodic ? 0 : c;
        q->b[k] = uniform(4, k) < 0.5 ? -b : b;
        q->d[k] = uniform(5, k) * 2 - 1;
    }
}

/* Uploads v in type t and the layout of g to dst. */
static kedr_status put(batch *q, const kedr_tridiag_desc *g, kedr_dtype t, const double *v,
                       void *dst)
{
    size_t n = g->n, count = g->count;
    int inter = g->layout == KEDR_TRIDIAG_INTERLEAVED;
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < q->elems; k++) {
        size_t s = k / n, i = k % n, o = inter ? i * count + s : k;
        if (t == KEDR_F32)
            ((float *)q->h)[o] = (float)v[k];
        else
            ((double *)q->h)[o] = v[k];
    }
    return kedr_upload(q->ctx, dst, q->h, q->bytes);
}

static long double element(const void *h, int f32, size_t k)
{
    return f32 ? (long double)((const float *)h)[k] : (long double)((const double *)h)[k];
}

/* The worst normwise backward error, in units of u, over CHECK_SYSTEMS systems of x (device),
 * against the inputs as rounded to type t. */
static kedr_status backward_error(batch *q, const kedr_tridiag_desc *g, kedr_dtype t,
                                  const void *x, double *worst)
{
    KEDR_TRY(kedr_download(q->ctx, q->h, x, q->bytes));
    size_t n = g->n, count = g->count, step = count > CHECK_SYSTEMS ? count / CHECK_SYSTEMS : 1;
    int inter = g->layout == KEDR_TRIDIAG_INTERLEAVED, f32 = t == KEDR_F32;
    double u = f32 ? 0x1p-24 : 0x1p-53, w = 0;
#define RD(v) (f32 ? (long double)(float)(v) : (long double)(v))
#define X(s, i) element(q->h, f32, inter ? (i) * count + (s) : (s) * n + (i))
    for (size_t s = 0; s < count; s += step) {
        long double r = 0, an = 0, xn = 0, dn = 0;
        for (size_t i = 0; i < n; i++) {
            size_t k = s * n + i, im = (i + n - 1) % n, ip = (i + 1) % n;
            long double ax = RD(q->b[k]) * X(s, i), row = fabsl(RD(q->b[k]));
            if (i > 0 || g->periodic)
                ax += RD(q->a[k]) * X(s, im), row += fabsl(RD(q->a[k]));
            if (i + 1 < n || g->periodic)
                ax += RD(q->c[k]) * X(s, ip), row += fabsl(RD(q->c[k]));
            r = fmaxl(r, fabsl(ax - RD(q->d[k])));
            an = fmaxl(an, row);
            xn = fmaxl(xn, fabsl(X(s, i)));
            dn = fmaxl(dn, fabsl(RD(q->d[k])));
        }
        double e = (double)(r / (an * xn + dn)) / u;
        w = isnan(e) || e > w ? e : w;
    }
#undef RD
#undef X
    *worst = w;
    return KEDR_OK;
}

enum { IMPL_KEDR = 0, IMPL_REF = 1 };

typedef struct {
    batch *q;
    const kedr_tridiag_desc *g;
    kedr_dtype t;
    struct cusparse_ref *ref;
} solve_args;

#ifdef KEDR_HAVE_LAPACKE
/* LAPACK's gtsv on every contiguous system of the batch (host memory: the cpu back end). gtsv
 * overwrites its three diagonals, so each system's are copied first into the thread's work
 * rows, as a caller who keeps them must; the copy is part of the time. */
static kedr_status lapack_solve(const solve_args *s, void **v)
{
    size_t n = s->g->n, count = s->g->count, es = kedr_dtype_size(s->t);
    int f32 = s->t == KEDR_F32, failed = 0;
    if (n > (size_t)INT32_MAX)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "LAPACK gtsv: n = %zu is beyond lapack_int", n);
#pragma omp parallel reduction(| : failed)
    {
        char *w = malloc(3 * n * es);
        failed |= w == NULL;
#pragma omp for schedule(static)
        for (size_t k = 0; k < count; k++) {
            if (!w)
                continue;
            const char *a = (const char *)v[0] + k * n * es, *b = (const char *)v[1] + k * n * es;
            const char *c = (const char *)v[2] + k * n * es;
            char *d = (char *)v[3] + k * n * es;
            memcpy(w, a + es, (n - 1) * es); /* dl_i = a_{i+1} */
            memcpy(w + n * es, b, n * es);
            memcpy(w + 2 * n * es, c, (n - 1) * es); /* du_i = c_i */
            lapack_int info = f32 ? LAPACKE_sgtsv_work(LAPACK_COL_MAJOR, (lapack_int)n, 1,
                                                       (float *)w, (float *)(w + n * es),
                                                       (float *)(w + 2 * n * es), (float *)d,
                                                       (lapack_int)n)
                                  : LAPACKE_dgtsv_work(LAPACK_COL_MAJOR, (lapack_int)n, 1,
                                                       (double *)w, (double *)(w + n * es),
                                                       (double *)(w + 2 * n * es), (double *)d,
                                                       (lapack_int)n);
            failed |= info != 0;
        }
        free(w);
    }
    return failed ? kedr_fail(KEDR_ERR_INVALID, "LAPACK gtsv failed (out of memory or a "
                              "singular system)") : KEDR_OK;
}
#endif

/* Whether the reference solves this row: cuSPARSE on the GPU (non-periodic), LAPACK gtsv on
 * the cpu (contiguous, non-periodic, when built with LAPACKE). */
static int has_ref(kedr_ctx *ctx, const kedr_tridiag_desc *g)
{
    if (g->periodic)
        return 0;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return 1;
#endif
#ifdef KEDR_HAVE_LAPACKE
    return !KEDR_IS_CUDA(ctx) && g->layout == KEDR_TRIDIAG_CONTIGUOUS;
#else
    (void)ctx;
    return 0;
#endif
}

static kedr_status solve(const solve_args *s, int impl)
{
    void **v = s->q->dev + 4 * impl;
#ifdef KEDR_HAVE_CUDA
    if (impl == IMPL_REF && KEDR_IS_CUDA(s->q->ctx))
        return cusparse_ref_solve(s->ref, s->t, s->g, v[0], v[1], v[2], v[3]);
#endif
#ifdef KEDR_HAVE_LAPACKE
    if (impl == IMPL_REF)
        return lapack_solve(s, v);
#endif
    return kedr_tridiag_solve(s->q->ctx, s->t, s->g, v[0], v[1], v[2], v[3]);
}

typedef struct {
    const solve_args *s;
    int impl;
} timed_solve;

static kedr_status solve_once(void *arg)
{
    timed_solve *t = arg;
    return solve(t->s, t->impl);
}

/* One checked call, then one warm-up and the median of `repeats` timed calls, in ms. The timed
 * calls solve for the previous call's x: the same work on other numbers. */
static kedr_status measure(const solve_args *s, int impl, int repeats, double *ms)
{
    double worst = 0, sec = 0;
    kedr_status st = solve(s, impl);
    if (st == KEDR_OK)
        st = backward_error(s->q, s->g, s->t, s->q->dev[4 * impl + 3], &worst);
    if (st == KEDR_OK && !(worst <= CHECK_BACKWARD_U))
        st = kedr_fail(KEDR_ERR_INVALID, "MISMATCH: %s's solution has a backward error of "
                       "%.3g u (at most %.0f u expected)", impl ? "the reference" : "kedr", worst,
                       CHECK_BACKWARD_U);
    timed_solve t = {s, impl};
    if (st == KEDR_OK)
        st = bench_time(s->q->ctx, solve_once, &t, repeats, &sec);
    if (st == KEDR_OK)
        *ms = 1e3 * sec;
    kedr_ctx_sync(s->q->ctx); /* nothing queued may outlive the buffers */
    return st;
}

static void release(batch *q)
{
    for (int k = 0; k < 8; k++)
        kedr_free(q->ctx, q->dev[k]);
    free(q->a), free(q->b), free(q->c), free(q->d), free(q->h);
    kedr_scratch_trim(q->ctx);
}

/* Allocates and fills the batch of r->desc for kedr and, when ref is given, for cuSPARSE. */
static kedr_status prepare(batch *q, const row *r, int with_ref)
{
    const double *src[4];
    q->elems = r->desc.n * r->desc.count;
    q->bytes = q->elems * kedr_dtype_size(r->t);
    for (int k = 0; k < 4 * (1 + with_ref); k++) {
        kedr_status s = kedr_alloc(q->ctx, &q->dev[k], q->bytes);
        if (s != KEDR_OK)
            return s == KEDR_ERR_NOMEM ? kedr_fail(s, "out of device memory for %d arrays of "
                                                   "%.2f GB; try a smaller --n", 4 * (1 + with_ref),
                                                   q->bytes / 1e9)
                                       : s;
    }
    q->a = malloc(q->elems * sizeof(double));
    q->b = malloc(q->elems * sizeof(double));
    q->c = malloc(q->elems * sizeof(double));
    q->d = malloc(q->elems * sizeof(double));
    q->h = malloc(q->bytes);
    if (!q->a || !q->b || !q->c || !q->d || !q->h)
        return kedr_fail(KEDR_ERR_NOMEM, "out of host memory for %zu unknowns", q->elems);
    generate(q, r->desc.n, r->desc.periodic);
    src[0] = q->a, src[1] = q->b, src[2] = q->c, src[3] = q->d;
    for (int k = 0; k < 4 * (1 + with_ref); k++)
        KEDR_TRY(put(q, &r->desc, r->t, src[k % 4], q->dev[k]));
    return KEDR_OK;
}

static double bytes_moved(const row *r);

static kedr_status run_row(kedr_ctx *ctx, struct cusparse_ref *ref, int repeats, row *r)
{
    batch q;
    memset(&q, 0, sizeof q);
    q.ctx = ctx;
    int with_ref = has_ref(ctx, &r->desc);
    solve_args s = {&q, &r->desc, r->t, ref};
    r->ms = 0;
    r->ref_ms = -1;
    kedr_status st = prepare(&q, r, with_ref);
    /* The copy next to the solve in time and size: on a shared host the bandwidth drifts, and
     * a working set that a large cache holds in part copies faster than one it does not. */
    if (st == KEDR_OK)
        st = bench_copy_gbps(ctx, (size_t)bytes_moved(r) / 2 / 8 * 8, repeats, &r->copy_gbps);
    if (st == KEDR_OK)
        st = measure(&s, IMPL_KEDR, repeats, &r->ms);
    if (st == KEDR_OK && with_ref) {
        kedr_scratch_trim(ctx); /* leave cuSPARSE the memory kedr's scratch held */
        st = measure(&s, IMPL_REF, repeats, &r->ref_ms);
    }
#ifdef KEDR_HAVE_CUDA
    cusparse_ref_trim(ref);
#endif
    release(&q);
    r->status = st == KEDR_OK ? "ok" : strncmp(kedr_last_error(), "MISMATCH", 8) == 0
                                           ? "MISMATCH" : "error";
    if (st != KEDR_OK)
        snprintf(r->message, sizeof r->message, "%s", kedr_last_error());
    return st;
}

typedef struct {
    char device[320];
    const char *backend, *commit;
    char date[32];
    double copy_gbps;
    size_t n;
    int repeats;
} header;

static const char *layout_name(kedr_tridiag_layout l)
{
    return l == KEDR_TRIDIAG_CONTIGUOUS ? "contiguous" : "interleaved";
}

/* Bytes a solve must move: a, b, c and d read, x written, once each. */
static double bytes_moved(const row *r)
{
    return 5.0 * (double)(r->desc.n * r->desc.count) * (double)kedr_dtype_size(r->t);
}

/* Whether the cpu's reference, LAPACK gtsv, was built in. */
#ifdef KEDR_HAVE_LAPACKE
#define LAPACK_BUILT 1
#else
#define LAPACK_BUILT 0
#endif

static void print_row(const row *r, int cuda)
{
    printf("%-11s %-3s %-3s %7zu %9zu", layout_name(r->desc.layout), kedr_dtype_name(r->t),
           r->desc.periodic ? "yes" : "no", r->desc.n, r->desc.count);
    if (strcmp(r->status, "ok") != 0) {
        printf("  %s\n", r->status);
        fflush(stdout);
        return;
    }
    double sec = r->ms * 1e-3, gbps = bytes_moved(r) / sec / 1e9, unk = r->desc.n * r->desc.count;
    printf(" %9.3f %8.2f %8.1f %8.1f %7.2f", r->ms, unk / sec / 1e9, gbps, r->copy_gbps,
           gbps / r->copy_gbps);
    if (r->ref_ms > 0)
        printf(" %9.3f %8.2f %7.2f\n", r->ref_ms, unk / (r->ref_ms * 1e-3) / 1e9,
               r->ref_ms / r->ms);
    else
        printf(" %9s %8s %7s\n", !cuda && !LAPACK_BUILT ? "not built" : "-", "-", "-");
    fflush(stdout);
}

static kedr_status write_json(const char *path, const header *h, const row *rows, int nrows)
{
    kedr_file_writer w;
    bench_meta m = {"tridiag", h->device, h->backend, h->date, h->commit};
    KEDR_TRY(bench_json_open(&w, path, &m));
    FILE *f = KEDR_FILE(&w);
    fprintf(f, ",\n  \"unknowns\": %zu,\n  \"repeats\": %d,\n  \"copy_gbps\": ", h->n,
            h->repeats);
    bench_json_number(f, h->copy_gbps, 1);
    fputs(",\n  \"results\": [", f);
    for (int i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        int ok = strcmp(r->status, "ok") == 0, ref = ok && r->ref_ms > 0;
        double sec = r->ms * 1e-3;
        fprintf(f, "%s\n    {\"layout\": \"%s\", \"type\": \"%s\", \"periodic\": %s, \"n\": %zu, "
                "\"systems\": %zu, \"ms\": ", i ? "," : "", layout_name(r->desc.layout),
                kedr_dtype_name(r->t), r->desc.periodic ? "true" : "false", r->desc.n,
                r->desc.count);
        bench_json_number(f, r->ms, ok);
        fputs(", \"gunknowns\": ", f);
        bench_json_number(f, r->desc.n * r->desc.count / sec / 1e9, ok);
        fputs(", \"gbps\": ", f);
        bench_json_number(f, bytes_moved(r) / sec / 1e9, ok);
        fputs(", \"copy_gbps\": ", f);
        bench_json_number(f, r->copy_gbps, ok);
        fputs(", \"frac_copy\": ", f);
        bench_json_number(f, bytes_moved(r) / sec / 1e9 / r->copy_gbps, ok);
        int cu = strcmp(h->backend, "cuda") == 0;
        fputs(", \"cusparse_ms\": ", f);
        bench_json_number(f, r->ref_ms, ref && cu);
        fputs(", \"ratio_vs_cusparse\": ", f);
        bench_json_number(f, r->ref_ms / r->ms, ref && cu);
        fputs(", \"lapack_ms\": ", f);
        bench_json_number(f, r->ref_ms, ref && !cu);
        fputs(", \"lapack_gunknowns\": ", f);
        bench_json_number(f, r->desc.n * r->desc.count / (r->ref_ms * 1e-3) / 1e9, ref && !cu);
        fputs(", \"ratio_vs_lapack\": ", f);
        bench_json_number(f, r->ref_ms / r->ms, ref && !cu);
        bench_json_status(f, r->status, r->message);
        fputc('}', f);
    }
    return bench_json_close(&w);
}

/* The system lengths of opts->lengths ("64,256,1024" when NULL) into len[], at most max. */
static kedr_status parse_lengths(const char *text, size_t n, size_t *len, int max, int *count)
{
    const char *p = text ? text : "64,256,1024";
    *count = 0;
    while (*p) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || errno || v == 0 || v > n || (*end && *end != ','))
            return kedr_fail(KEDR_ERR_INVALID, "kedr_bench_tridiag: lengths '%s': expected "
                             "comma-separated system lengths from 1 to %zu", p, n);
        if (*count == max)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_bench_tridiag: more than %d lengths", max);
        len[(*count)++] = (size_t)v;
        p = *end ? end + 1 : end;
    }
    return KEDR_OK;
}

#define MAX_LENGTHS 16

static const char *algorithm_name(kedr_tridiag_algorithm a)
{
    static const char *const names[] = {"auto",        "thomas",  "cr",        "pcr",
                                        "cr_pcr",      "partitioned", "chunked", "pcr_thomas"};
    return (int)a >= 0 && (int)a < 8 ? names[a] : "unknown";
}

kedr_status kedr_bench_tridiag(kedr_ctx *ctx, const kedr_bench_tridiag_opts *opts)
{
    if (!ctx || !opts)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_bench_tridiag: %s is NULL", ctx ? "opts" : "ctx");
    if (opts->n == 0 || opts->repeats < 1)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_bench_tridiag: n = %zu, repeats = %d: expected "
                         "both at least 1", opts->n, opts->repeats);
    size_t len[MAX_LENGTHS];
    int nlen = 0;
    KEDR_TRY(parse_lengths(opts->lengths, opts->n, len, MAX_LENGTHS, &nlen));
    header h;
    memset(&h, 0, sizeof h);
    bench_device_name(ctx, h.device, sizeof h.device);
    h.backend = kedr_backend_name(kedr_ctx_backend(ctx));
    h.commit = bench_commit(KEDR_GIT_COMMIT);
    bench_utc_date(h.date, sizeof h.date);
    h.n = opts->n;
    h.repeats = opts->repeats;
    KEDR_TRY(bench_copy_gbps(ctx, opts->n * 8, opts->repeats, &h.copy_gbps));
    struct cusparse_ref *ref = NULL;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        KEDR_TRY(cusparse_ref_create(ctx, &ref));
#endif
    printf("kedr bench tridiag: %s (%s), %s, commit %s\n", h.device, h.backend, h.date, h.commit);
    printf("copy bandwidth %.1f GB/s (%zu u64, read + written); %zu unknowns a call, median of "
           "%d after a warm-up; algorithm %s\n\n", h.copy_gbps, opts->n, opts->n, opts->repeats,
           algorithm_name(opts->algorithm));
    int cuda = KEDR_IS_CUDA(ctx);
    printf("%-11s %-3s %-3s %7s %9s %9s %8s %8s %8s %7s %9s %8s %7s\n", "layout", "type", "cyc",
           "n", "systems", "ms", "Gunk/s", "GB/s", "copy", "of copy", cuda ? "cuSPARSE" : "LAPACK",
           "Gunk/s", "vs it");
    int nrows = 0, nfailed = 0;
    row *rows = calloc((size_t)nlen * 8, sizeof *rows);
    kedr_status first = rows ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "out of host memory");
    for (int li = 0; rows && li < nlen; li++)
        for (int k = 0; k < 8; k++) {
            row *r = &rows[nrows++];
            r->desc = (kedr_tridiag_desc){len[li], opts->n / len[li],
                                          (kedr_tridiag_layout)(k / 4), k % 2,
                                          opts->algorithm};
            r->t = k / 2 % 2 ? KEDR_F64 : KEDR_F32;
            kedr_status s = run_row(ctx, ref, opts->repeats, r);
            print_row(r, cuda);
            if (s != KEDR_OK) {
                fprintf(stderr, "kedr bench tridiag: %s\n", r->message);
                nfailed++;
                first = first == KEDR_OK ? s : first;
            }
        }
    printf("\nGunk/s: 10^9 unknowns solved per second; GB/s: a, b, c, d read and x written once,\n"
           "over the time; copy: GB/s of a copy (read + written) of as many bytes over all\n"
           "threads, median of as many repeats just before the row; of copy: GB/s / copy;\n"
           "the reference's time and Gunk/s; vs it: the reference's time / kedr's\n"
           "(above 1, kedr is faster). Reference on the GPU: cuSPARSE gtsv2StridedBatch for\n"
           "contiguous, gtsvInterleavedBatch algorithm 0 for interleaved; on the cpu: LAPACK\n"
           "gtsv (LAPACKE) a system a call over the OpenMP threads, contiguous non-periodic rows\n"
           "only, its three diagonals copied first as gtsv overwrites them%s)\n",
           cuda || LAPACK_BUILT ? "" : "; not built: no LAPACKE");
#ifdef KEDR_HAVE_CUDA
    cusparse_ref_destroy(ref);
#endif
    kedr_status s = opts->json && rows ? write_json(opts->json, &h, rows, nrows) : KEDR_OK;
    if (s == KEDR_OK && opts->json && rows)
        printf("wrote %s\n", opts->json);
    free(rows);
    if (s != KEDR_OK)
        return s;
    if (nfailed)
        return kedr_fail(first, "%d of %d benchmarks failed", nfailed, nrows);
    return first;
}
