/* The streamed solver's shared code (prim_tridiag_streamed and the segment steps it shares with
 * the GPU's kernels, src/prim/tridiag_reduce.h) run as a GPU block runs a segment: q host
 * threads share the system, with a barrier wherever the block has one. The library's cpu
 * CHUNKED runs it in one thread (q = 1) on contiguous systems longer than a segment, and
 * test_tridiag_algos checks that against dense LU; this test covers the split among threads
 * and the awkward cuts: segments of 2 and 3 rows (whose completion has no chunked solve),
 * one segment, many, segment lengths that differ by one, thread counts from 1 to the GPU's,
 * periodic and not, f32 and f64, against the Thomas solve of the same system in f64 (random
 * strictly row dominant systems, condition number at most 6: both agree to a small multiple
 * of u). A missing barrier or a wrong row range shows as a wrong x. */

static void tu_block_sync(void);
#define PRIM_TRIDIAG_SYNC() tu_block_sync()
#include "prim/tridiag_cuda.h"
#include "test_util.h"
#include "tu_block.h"

#include <stdint.h>

typedef struct {
    size_t n, rows, q;
    int periodic, f64;
    double *a, *b, *c, *d, *w;
    float *fa, *fb, *fc, *fd, *fw;
} job;

static void *run(void *p)
{
    tu_block_thread *w = p;
    job *j = w->job;
    if (j->f64)
        prim_tridiag_streamed_f64(j->a, j->b, j->c, j->d, j->n, j->rows, j->periodic, j->w,
                                  w->r, j->q);
    else
        prim_tridiag_streamed_f32(j->fa, j->fb, j->fc, j->fd, j->n, j->rows, j->periodic,
                                  j->fw, w->r, j->q);
    return NULL;
}

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}
static double uniform(uint64_t *s) { return (double)rng(s) / 9007199254740992.0 * 2 - 1; }

/* One system of n unknowns in segments of at most `rows` rows, solved by q threads. */
static void check(size_t n, size_t rows, size_t q, int periodic, int f64, uint64_t seed)
{
    uint64_t seed0 = seed;
    size_t segs = prim_tridiag_segments(n, rows);
    size_t work = 4 * rows + prim_tridiag_segment_iface(q) + 12 * segs;
    double *v = calloc(11 * n + work, sizeof(double));
    float *f = calloc(4 * n + work, sizeof(float));
    if (!v || !f) {
        TU_CHECK(0, "out of memory for n = %zu", n);
        free(v), free(f);
        return;
    }
    double *a = v, *b = v + n, *c = v + 2 * n, *d = v + 3 * n;
    double *ta = v + 4 * n, *tb = v + 5 * n, *tc = v + 6 * n, *td = v + 7 * n;
    double *cp = v + 8 * n, *zp = v + 9 * n, *x = v + 10 * n;
    job j = {n, rows, q, periodic, f64, a, b, c, x, v + 11 * n, f, f + n, f + 2 * n, f + 3 * n,
             f + 4 * n};
    for (size_t i = 0; i < n; i++) {
        a[i] = uniform(&seed), c[i] = uniform(&seed), d[i] = uniform(&seed);
        b[i] = (fabs(a[i]) + fabs(c[i]) + 1 + (uniform(&seed) + 1) / 2) *
               (uniform(&seed) < 0 ? -1 : 1);
        if (!f64)
            a[i] = (float)a[i], b[i] = (float)b[i], c[i] = (float)c[i], d[i] = (float)d[i];
        ta[i] = a[i], tb[i] = b[i], tc[i] = c[i], td[i] = d[i], x[i] = d[i];
        j.fa[i] = (float)a[i], j.fb[i] = (float)b[i], j.fc[i] = (float)c[i];
        j.fd[i] = (float)d[i];
    }
    if (!periodic) /* ignored by both: garbage shows if the streamed solver reads them */
        a[0] = ta[0] = 1e30, c[n - 1] = tc[n - 1] = -1e30, j.fa[0] = 1e30f,
        j.fc[n - 1] = -1e30f;
    prim_tridiag_thomas_f64(ta, tb, tc, td, cp, zp, n, 1, periodic);
    tu_block_run(q, run, &j, "test_tridiag_streamed");
    double worst = 0, scale = 0;
    int inputs_kept = 1;
    for (size_t i = 0; i < n; i++) {
        double xi = f64 ? x[i] : (double)j.fd[i];
        double e = fabs(xi - td[i]);
        worst = e > worst || e != e ? e : worst;
        scale = fabs(td[i]) > scale ? fabs(td[i]) : scale;
        if (f64 ? b[i] != tb[i] : j.fb[i] != (float)tb[i])
            inputs_kept = 0;
    }
    double u = f64 ? 0x1p-53 : 0x1p-24, allowed = 64 * 6 * u * (scale > 1 ? scale : 1);
    TU_CHECK(worst <= allowed, "%s n=%zu rows=%zu q=%zu%s seed=%llu: max |x - x_thomas| = %.3g, "
             "allowed %.3g", f64 ? "f64" : "f32", n, rows, q, periodic ? " periodic" : "",
             (unsigned long long)seed0, worst, allowed);
    TU_CHECK(inputs_kept, "n=%zu rows=%zu q=%zu: b was written", n, rows, q);
    free(v);
    free(f);
}

int main(void)
{
    /* n, segment rows: one segment; segments of 2 and 3 rows; 4 .. 9; lengths that differ
     * by one; many segments; the GPU's segments (2048 f32 rows, 1024 f64) */
    static const size_t cases[][2] = {{2, 4},     {7, 8},      {5, 4},      {6, 4},
                                      {7, 4},     {9, 4},      {17, 8},     {33, 8},
                                      {100, 9},   {257, 16},   {1000, 33},  {1001, 100},
                                      {4097, 512}, {4097, 1024}, {5000, 2048}};
    static const size_t threads[] = {1, 2, 3, 8, 32};
    uint64_t seed = 1;
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        size_t n = cases[ci][0], rows = cases[ci][1], segs = prim_tridiag_segments(n, rows);
        size_t longest = (n + segs - 1) / segs;
        size_t gq = prim_tridiag_chunk_threads(longest, PRIM_TRIDIAG_CHUNK_MOST);
        for (int f64 = 0; f64 < 2; f64++)
            for (int periodic = 0; periodic < 2; periodic++) {
                check(n, rows, gq, periodic, f64, seed++); /* the GPU's threads a segment */
                for (size_t ti = 0; ti < sizeof threads / sizeof *threads; ti++)
                    if (threads[ti] != gq)
                        check(n, rows, threads[ti], periodic, f64, seed++);
            }
    }
    /* the cut: segments of n / segs rounded down or up, from 0 to n, at most rows each, at
     * least 2 rows (rows >= 4) */
    for (size_t rows = 4; rows < 300; rows += 1 + rows / 4)
        for (size_t n = 2; n < 5000; n += 1 + n / 8) {
            size_t segs = prim_tridiag_segments(n, rows), ok = 1, prev = 0;
            for (size_t g = 1; g <= segs; g++) {
                size_t s = prim_tridiag_segment_start(n, segs, g), m = s - prev;
                ok = ok && m <= rows && m >= 2 && m >= n / segs && m <= (n + segs - 1) / segs;
                prev = s;
            }
            TU_CHECK(ok && prev == n && prim_tridiag_segment_start(n, segs, 0) == 0,
                     "n=%zu rows=%zu: %zu segments cut wrong", n, rows, segs);
        }
    return tu_finish("test_tridiag_streamed");
}
