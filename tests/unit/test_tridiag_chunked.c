/* The chunked solver's shared code (prim_tridiag_chunked, src/prim/tridiag_reduce.h) run as the
 * GPU runs it: q host threads share one system, each taking chunks r, r + q, ... and rows
 * r, r + q, ... of the interface system, with a barrier wherever the GPU's block has one.
 * The library's cpu CHUNKED runs the same steps in one thread (q = 1), and test_tridiag_algos
 * checks it against dense LU; this test covers the split among threads that only the GPU
 * otherwise runs: every thread count from 1 to a few dozen, the GPU's own, and chunk lengths
 * that leave a short last chunk, at n = 2 .. 4097, periodic and not, f32 and f64, against the
 * Thomas solve of the same system in f64 (random strictly row dominant systems: both are
 * backward stable there, so they agree to a small multiple of u times the condition number,
 * which is at most 6 for these systems). A missing barrier or a wrong row range shows as a
 * wrong x (or one that differs between runs). */
#include <stdatomic.h>

static void tu_block_sync(void);
#define PRIM_TRIDIAG_SYNC() tu_block_sync()
#include "prim/tridiag_cuda.h"
#include "test_util.h"
#include "tu_block.h"

#include <stdint.h>

typedef struct {
    size_t n, len, q;
    int periodic, f64;
    double *a, *b, *c, *d, *ia, *ib, *ic, *id, *iz; /* f64 arrays */
    float *fa, *fb, *fc, *fd, *fia, *fib, *fic, *fid, *fiz; /* f32 arrays */
} job;

static void *run(void *p)
{
    tu_block_thread *w = p;
    job *j = w->job;
    if (j->f64)
        prim_tridiag_chunked_f64(j->a, j->b, j->c, j->d, j->n, j->len, j->periodic, j->ia, j->ib,
                                 j->ic, j->id, j->iz, w->r, j->q);
    else
        prim_tridiag_chunked_f32(j->fa, j->fb, j->fc, j->fd, j->n, j->len, j->periodic, j->fia,
                                 j->fib, j->fic, j->fid, j->fiz, w->r, j->q);
    return NULL;
}

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}
static double uniform(uint64_t *s) { return (double)rng(s) / 9007199254740992.0 * 2 - 1; }

/* One system of n unknowns solved by q threads with chunks of len rows, against Thomas. */
static void check(size_t n, size_t q, size_t len, int periodic, int f64, uint64_t seed)
{
    double *v = calloc(19 * n, sizeof(double));
    float *f = calloc(9 * n, sizeof(float));
    if (!v || !f) {
        TU_CHECK(0, "out of memory for n = %zu", n);
        free(v), free(f);
        return;
    }
    /* a, b, c, d as given (rounded to f32 for the f32 run); ra .. rz: Thomas's copies */
    double *a = v, *b = v + n, *c = v + 2 * n, *d = v + 3 * n, *x = v + 4 * n;
    double *ta = v + 5 * n, *tb = v + 6 * n, *tc = v + 7 * n, *td = v + 8 * n;
    double *cp = v + 9 * n, *zp = v + 10 * n;
    job j = {n, len, q, periodic, f64, v + 11 * n, v + 12 * n, v + 13 * n, v + 14 * n,
             v + 15 * n, v + 16 * n, v + 17 * n, v + 18 * n, x, /* iz reuses x (below) */
             f, f + n, f + 2 * n, f + 3 * n, f + 4 * n, f + 5 * n, f + 6 * n, f + 7 * n,
             f + 8 * n};
    for (size_t i = 0; i < n; i++) {
        a[i] = uniform(&seed), c[i] = uniform(&seed), d[i] = uniform(&seed);
        b[i] = (fabs(a[i]) + fabs(c[i]) + 1 + (uniform(&seed) + 1) / 2) *
               (uniform(&seed) < 0 ? -1 : 1);
        if (!f64)
            a[i] = (float)a[i], b[i] = (float)b[i], c[i] = (float)c[i], d[i] = (float)d[i];
        ta[i] = a[i], tb[i] = b[i], tc[i] = c[i], td[i] = d[i];
    }
    prim_tridiag_thomas_f64(ta, tb, tc, td, cp, zp, n, 1, periodic);
    /* the interface arrays need 2 * chunks <= n each; iz of the f64 run takes x's room */
    if (f64)
        for (size_t i = 0; i < n; i++)
            j.a[i] = a[i], j.b[i] = b[i], j.c[i] = c[i], j.d[i] = d[i];
    else
        for (size_t i = 0; i < n; i++)
            j.fa[i] = (float)a[i], j.fb[i] = (float)b[i], j.fc[i] = (float)c[i],
            j.fd[i] = (float)d[i];
    tu_block_run(q, run, &j, "test_tridiag_chunked");
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double xi = f64 ? j.d[i] : (double)j.fd[i];
        double e = fabs(xi - td[i]);
        worst = e > worst || e != e ? e : worst;
        scale = fabs(td[i]) > scale ? fabs(td[i]) : scale;
    }
    double u = f64 ? 0x1p-53 : 0x1p-24, allowed = 64 * 6 * u * (scale > 1 ? scale : 1);
    TU_CHECK(worst <= allowed, "%s n=%zu q=%zu len=%zu%s seed=%llu: max |x - x_thomas| = %.3g, "
             "allowed %.3g", f64 ? "f64" : "f32", n, q, len, periodic ? " periodic" : "",
             (unsigned long long)seed, worst, allowed);
    free(v);
    free(f);
}

int main(void)
{
    static const size_t sizes[] = {2, 3, 4, 5, 7, 31, 32, 33, 64, 65, 255, 257, 1000, 4097};
    static const size_t threads[] = {1, 2, 3, 5, 8, 32, 64};
    uint64_t seed = 1;
    for (size_t ni = 0; ni < sizeof sizes / sizeof *sizes; ni++) {
        size_t n = sizes[ni], gq = prim_tridiag_chunk_threads(n, PRIM_TRIDIAG_CHUNK_MOST);
        for (int f64 = 0; f64 < 2; f64++)
            for (int periodic = 0; periodic < 2; periodic++) {
                /* the GPU's cut, then other thread counts with the length they give */
                check(n, gq, prim_tridiag_chunk_len(n, gq), periodic, f64, seed++);
                for (size_t ti = 0; ti < sizeof threads / sizeof *threads; ti++) {
                    size_t q = threads[ti];
                    if (q != gq && q <= n)
                        check(n, q, prim_tridiag_chunk_len(n, q), periodic, f64, seed++);
                }
                /* fewer chunks than threads: the longest odd chunks, and len = 3 */
                check(n, 8, n | 1, periodic, f64, seed++);
                if (n % 3 != 1)
                    check(n, 16, 3, periodic, f64, seed++);
            }
    }
    /* chunk lengths: odd, at least 3, at most q chunks, the last at least 2 rows */
    for (size_t n = 2; n < 3000; n += 1 + n / 16)
        for (size_t q = 1; q <= 512; q *= 2) {
            size_t len = prim_tridiag_chunk_len(n, q), chunks = (n + len - 1) / len;
            TU_CHECK(len % 2 == 1 && len >= 3 && chunks <= q && n - (chunks - 1) * len >= 2,
                     "n=%zu q=%zu: len %zu, %zu chunks, last %zu rows", n, q, len, chunks,
                     n - (chunks - 1) * len);
        }
    return tu_finish("test_tridiag_chunked");
}
