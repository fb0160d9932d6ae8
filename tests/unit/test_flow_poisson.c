/* The pressure Poisson solvers (kedr_flow_poisson_*): every preconditioner and multigrid alone,
 * 1D-like, 2D and 3D grids of awkward sizes with Neumann and periodic ends, against
 *  - exact solutions: products of the discrete Laplacian's eigenvectors, cos(pi m (i + 1/2) / n)
 *    along a Neumann axis and cos(2 pi m i / n) along a periodic one, whose eigenvalues
 *    (2 - 2 cos(pi m / n)) / h^2 and (2 - 2 cos(2 pi m / n)) / h^2 are known exactly;
 *  - a dense solve (Gaussian elimination of a matrix built here from the 5/7-point formula,
 *    with the mean fixed) for random right-hand sides on small grids;
 * and the properties PCG relies on: A and every M^-1 symmetric, M^-1 positive on zero-mean
 * vectors, and the null space (a constant added to b changes nothing; x has zero mean). With
 * the cuda back end too (KEDR_BACKEND), every check runs on both, and cuda must take the cpu's
 * iteration counts within 2 (its sums add in another order). */
#include "kedr/flow.h"
#include "test_util.h"

typedef struct {
    int n[3], per[3];
    double h[3];
} grid;

/* A copy of host data in the context's memory, and back. */
static double *to_dev(kedr_ctx *ctx, const double *host, size_t n)
{
    return tu_upload(ctx, host, n * sizeof *host);
}

static void to_host(kedr_ctx *ctx, double *host, const double *dev, size_t n)
{
    TU_OK(kedr_download(ctx, host, dev, n * sizeof *host));
}

/* Iterations of each (grid, variant) on the first back end, for the others to match. */
static int first_iters[64][16];
static int first_backend = 1;

static size_t cells(const grid *g) { return (size_t)g->n[0] * g->n[1] * g->n[2]; }

static void opts_for(const grid *g, kedr_flow_poisson_opts *o)
{
    kedr_flow_poisson_defaults(o);
    for (int a = 0; a < 3; a++) {
        o->n[a] = g->n[a];
        o->h[a] = g->h[a];
        o->periodic[a] = g->per[a];
    }
}

/* y = A x from the formula, independently of the library's stencil. */
static void ref_apply(const grid *g, const double *x, double *y)
{
    int nx = g->n[0], ny = g->n[1], nz = g->n[2];
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                int at[3] = {i, j, k};
                size_t c = i + (size_t)nx * (j + (size_t)ny * k);
                double s = 0;
                for (int a = 0; a < 3; a++) {
                    if (g->n[a] == 1)
                        continue;
                    for (int d = -1; d <= 1; d += 2) {
                        int q[3] = {at[0], at[1], at[2]};
                        q[a] += d;
                        if (q[a] < 0 || q[a] >= g->n[a]) {
                            if (!g->per[a])
                                continue;
                            q[a] = (q[a] + g->n[a]) % g->n[a];
                        }
                        size_t e = q[0] + (size_t)nx * (q[1] + (size_t)ny * q[2]);
                        s += (x[c] - x[e]) / (g->h[a] * g->h[a]);
                    }
                }
                y[c] = s;
            }
}

static double norm(size_t n, const double *a)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * a[i];
    return sqrt(s);
}

static double mean(size_t n, const double *a)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i];
    return n ? s / n : 0;
}

/* Dense solve of A x = b - mean(b) with sum(x) = 0: rows of A plus the row of ones. */
static void ref_dense(const grid *g, const double *b, double *x)
{
    size_t N = cells(g);
    double *M = tu_host_alloc(N * (N + 1) * sizeof *M), *e = tu_host_alloc(N * sizeof *e),
           *col = tu_host_alloc(N * sizeof *col);
    double mb = mean(N, b);
    for (size_t j = 0; j < N; j++) {
        memset(e, 0, N * sizeof *e);
        e[j] = 1;
        ref_apply(g, e, col);
        for (size_t i = 0; i < N; i++)
            M[i * (N + 1) + j] = col[i] + 1.0; /* + 1 1^T: fixes the mean to 0 */
    }
    for (size_t i = 0; i < N; i++)
        M[i * (N + 1) + N] = b[i] - mb;
    for (size_t c = 0; c < N; c++) { /* elimination with partial pivoting */
        size_t piv = c;
        for (size_t r = c + 1; r < N; r++)
            if (fabs(M[r * (N + 1) + c]) > fabs(M[piv * (N + 1) + c]))
                piv = r;
        for (size_t k = 0; k <= N; k++) {
            double t = M[c * (N + 1) + k];
            M[c * (N + 1) + k] = M[piv * (N + 1) + k];
            M[piv * (N + 1) + k] = t;
        }
        for (size_t r = c + 1; r < N; r++) {
            double f = M[r * (N + 1) + c] / M[c * (N + 1) + c];
            for (size_t k = c; k <= N; k++)
                M[r * (N + 1) + k] -= f * M[c * (N + 1) + k];
        }
    }
    for (size_t c = N; c-- > 0;) {
        double s = M[c * (N + 1) + N];
        for (size_t k = c + 1; k < N; k++)
            s -= M[c * (N + 1) + k] * x[k];
        x[c] = s / M[c * (N + 1) + c];
    }
    free(M);
    free(e);
    free(col);
}

/* x = a sum of three eigenvectors with random modes, b = A x. */
static void eigen_problem(const grid *g, uint64_t *rs, double *x, double *b)
{
    size_t N = cells(g);
    memset(x, 0, N * sizeof *x);
    memset(b, 0, N * sizeof *b);
    for (int t = 0; t < 3; t++) {
        int m[3];
        double lam = 0;
        for (int a = 0; a < 3; a++) {
            m[a] = g->n[a] > 1 ? (int)(tu_next(rs) % (uint64_t)g->n[a]) : 0;
            double th = (g->per[a] ? 2 : 1) * M_PI * m[a] / g->n[a];
            lam += (2 - 2 * cos(th)) / (g->h[a] * g->h[a]);
        }
        if (lam == 0)
            continue; /* the constant: not in A's range */
        double amp = 1 + tu_uniform(rs);
        for (int k = 0; k < g->n[2]; k++)
            for (int j = 0; j < g->n[1]; j++)
                for (int i = 0; i < g->n[0]; i++) {
                    int at[3] = {i, j, k};
                    double v = amp;
                    for (int a = 0; a < 3; a++)
                        v *= g->per[a] ? cos(2 * M_PI * m[a] * at[a] / g->n[a])
                                       : cos(M_PI * m[a] * (at[a] + 0.5) / g->n[a]);
                    size_t c = i + (size_t)g->n[0] * (j + (size_t)g->n[1] * k);
                    x[c] += v;
                    b[c] += lam * v;
                }
    }
    double mx = mean(N, x);
    for (size_t i = 0; i < N; i++)
        x[i] -= mx;
}

typedef struct {
    kedr_flow_method method;
    kedr_flow_precond pc;
    int steps;
} variant;

static const variant variants[] = {
    {KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_NONE, 1},   {KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_JACOBI, 1},
    {KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_JACOBI, 2}, {KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_JACOBI, 3},
    {KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_JACOBI, 4}, {KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_SSOR, 1},
    {KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_SSOR, 2},   {KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_AINV, 1},
    {KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_MG, 2},     {KEDR_FLOW_METHOD_MG, KEDR_FLOW_PC_NONE, 2},
    {KEDR_FLOW_METHOD_FFT, KEDR_FLOW_PC_NONE, 1},
};

/* The FFT solver: on the cpu with FFTW, on cuda with cuFFT. */
static int fft_here(kedr_ctx *ctx)
{
#ifdef KEDR_HAVE_CUDA
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA)
        return 1;
#endif
#ifdef KEDR_HAVE_FFTW
    return kedr_ctx_backend(ctx) == KEDR_BACKEND_CPU;
#else
    (void)ctx;
    return 0;
#endif
}
#define NVARIANTS (sizeof variants / sizeof variants[0])

static int redblack(const variant *v)
{
    return v->method == KEDR_FLOW_METHOD_MG ||
           (v->method == KEDR_FLOW_METHOD_PCG &&
            (v->pc == KEDR_FLOW_PC_SSOR || v->pc == KEDR_FLOW_PC_MG));
}

static int odd_periodic(const grid *g)
{
    for (int a = 0; a < 3; a++)
        if (g->per[a] && g->n[a] > 1 && g->n[a] % 2)
            return 1;
    return 0;
}

static void name_of(const grid *g, const variant *v, char *buf, size_t size)
{
    snprintf(buf, size, "%dx%dx%d per %d%d%d %s %s m=%d", g->n[0], g->n[1], g->n[2], g->per[0],
             g->per[1], g->per[2], v->method == KEDR_FLOW_METHOD_MG ? "mg-alone"
                                   : v->method == KEDR_FLOW_METHOD_FFT ? "fft" : "pcg",
             kedr_flow_precond_name(v->pc), v->steps);
}

/* One solver on one problem: convergence to tol, the residual checked by the reference
 * stencil, the error against the exact x. */
static void check_solve(kedr_ctx *ctx, const grid *g, const variant *v, const double *b,
                        const double *xref, double tol, double err_tol, int *iters)
{
    char what[160];
    name_of(g, v, what, sizeof what);
    size_t N = cells(g);
    kedr_flow_poisson_opts o;
    opts_for(g, &o);
    o.method = v->method;
    o.precond = v->pc;
    o.steps = v->steps;
    o.tol = tol;
    o.max_iter = 20000;
    kedr_flow_poisson *ps = NULL;
    kedr_status s = kedr_flow_poisson_create(ctx, &o, &ps);
    if (v->method == KEDR_FLOW_METHOD_FFT && !fft_here(ctx)) {
        TU_CHECK(s == KEDR_ERR_UNSUPPORTED && !ps, "%s: accepted where there is no FFT solver",
                 what);
        return;
    }
    if (redblack(v) && odd_periodic(g)) {
        TU_CHECK(s == KEDR_ERR_INVALID, "%s: red-black on an odd periodic axis accepted", what);
        kedr_flow_poisson_destroy(ps);
        return;
    }
    TU_CHECK(s == KEDR_OK, "%s: create: %s", what, kedr_last_error());
    if (s != KEDR_OK)
        return;
    double *x = tu_host_alloc(N * sizeof *x), *y = tu_host_alloc(N * sizeof *y);
    uint64_t rs = 99;
    for (size_t i = 0; i < N; i++) /* a nonzero initial guess with a constant part */
        x[i] = 3.0 + 0.01 * tu_uniform(&rs);
    kedr_flow_poisson_info info;
    double *dx = to_dev(ctx, x, N), *db = to_dev(ctx, b, N);
    TU_OK(kedr_flow_poisson_solve(ps, dx, db, &info));
    to_host(ctx, x, dx, N);
    kedr_free(ctx, dx);
    kedr_free(ctx, db);
    /* another back end: the same iterations, within 2 (sums in another order) */
    if (first_backend)
        *iters = info.iterations;
    else
        TU_CHECK(abs(info.iterations - *iters) <= 2, "%s: %d iterations, %d on the first back end",
                 what, info.iterations, *iters);
    TU_CHECK(info.converged, "%s: not converged after %d iterations (residual %.3g)", what,
             info.iterations, info.residual);
    ref_apply(g, x, y);
    double mb = mean(N, b);
    for (size_t i = 0; i < N; i++)
        y[i] = (b[i] - mb) - y[i];
    double bn = info.rhs_norm;
    TU_CHECK(bn == 0 ? norm(N, y) < 1e-12 : norm(N, y) <= 1.0001 * tol * bn + 1e-300,
             "%s: residual %.3g > tol %.3g (%d iterations)", what,
             bn > 0 ? norm(N, y) / bn : norm(N, y), tol, info.iterations);
    TU_CHECK(fabs(mean(N, x)) <= 1e-12 * (1 + norm(N, x) / sqrt((double)N)),
             "%s: mean of x %.3g", what, mean(N, x));
    double e = 0, xn = 0;
    for (size_t i = 0; i < N; i++) {
        e = fmax(e, fabs(x[i] - xref[i]));
        xn = fmax(xn, fabs(xref[i]));
    }
    TU_CHECK(e <= err_tol * (xn > 0 ? xn : 1), "%s: max error %.3g of max %.3g", what, e, xn);
    /* the FFT solver's one entry is its result's residual, which can be exactly 0 */
    TU_CHECK(info.history_len == info.iterations + 1 &&
                 ((info.history[0] > 0) == (bn > 0) || v->method == KEDR_FLOW_METHOD_FFT),
             "%s: history of %d for %d iterations", what, info.history_len, info.iterations);
    kedr_flow_poisson_destroy(ps);
    free(x);
    free(y);
}

/* Symmetry of A and M^-1, positivity of M^-1, on random zero-mean vectors. */
static void check_operators(kedr_ctx *ctx, const grid *g, const variant *v)
{
    if ((redblack(v) && odd_periodic(g)) || (v->method == KEDR_FLOW_METHOD_FFT && !fft_here(ctx)))
        return;
    char what[160];
    name_of(g, v, what, sizeof what);
    size_t N = cells(g);
    kedr_flow_poisson_opts o;
    opts_for(g, &o);
    o.method = v->method;
    o.precond = v->pc;
    o.steps = v->steps;
    kedr_flow_poisson *ps = NULL;
    TU_OK(kedr_flow_poisson_create(ctx, &o, &ps));
    if (!ps)
        return;
    double *a = tu_host_alloc(N * sizeof *a), *b = tu_host_alloc(N * sizeof *b),
           *Ma = tu_host_alloc(N * sizeof *a), *Mb = tu_host_alloc(N * sizeof *b);
    uint64_t rs = 7 + N;
    for (size_t i = 0; i < N; i++) {
        a[i] = tu_uniform(&rs) - 0.5;
        b[i] = tu_uniform(&rs) - 0.5;
    }
    double ma = mean(N, a), mb = mean(N, b);
    for (size_t i = 0; i < N; i++) {
        a[i] -= ma;
        b[i] -= mb;
    }
    double bA = 0, aB = 0, ref = 0;
    double *y = tu_host_alloc(N * sizeof *y);
    double *da = to_dev(ctx, a, N), *db = to_dev(ctx, b, N), *dy = to_dev(ctx, a, N);
    TU_OK(kedr_flow_poisson_apply(ps, da, dy)); /* the library's A against the formula's */
    to_host(ctx, y, dy, N);
    ref_apply(g, a, Ma);
    for (size_t i = 0; i < N; i++)
        ref = fmax(ref, fabs(y[i] - Ma[i]));
    TU_CHECK(ref <= 1e-9 * (1 + fabs(y[0])), "%s: A x differs from the formula by %.3g", what,
             ref);
    TU_OK(kedr_flow_poisson_precondition(ps, da, dy));
    to_host(ctx, Ma, dy, N);
    TU_OK(kedr_flow_poisson_precondition(ps, db, dy));
    to_host(ctx, Mb, dy, N);
    kedr_free(ctx, da);
    kedr_free(ctx, db);
    kedr_free(ctx, dy);
    double aa = 0;
    for (size_t i = 0; i < N; i++) {
        bA += b[i] * Ma[i];
        aB += a[i] * Mb[i];
        aa += a[i] * Ma[i];
    }
    TU_CHECK(fabs(bA - aB) <= 1e-10 * (fabs(bA) + fabs(aB) + 1e-300),
             "%s: M^-1 not symmetric: (b, M^-1 a) %.15g, (a, M^-1 b) %.15g", what, bA, aB);
    TU_CHECK(N == 1 || aa > 0, "%s: (a, M^-1 a) = %.3g <= 0", what, aa);
    kedr_flow_poisson_destroy(ps);
    free(a);
    free(b);
    free(Ma);
    free(Mb);
    free(y);
}

static void bad_options(kedr_ctx *ctx)
{
    kedr_flow_poisson_opts o;
    kedr_flow_poisson *ps = NULL;
    kedr_flow_poisson_defaults(&o);
    o.n[0] = 0;
    TU_CHECK(kedr_flow_poisson_create(ctx, &o, &ps) == KEDR_ERR_INVALID && !ps, "n = 0 accepted");
    kedr_flow_poisson_defaults(&o);
    o.h[1] = -1;
    TU_CHECK(kedr_flow_poisson_create(ctx, &o, &ps) == KEDR_ERR_INVALID, "h < 0 accepted");
    kedr_flow_poisson_defaults(&o);
    o.precond = KEDR_FLOW_PC_JACOBI;
    o.steps = 5;
    TU_CHECK(kedr_flow_poisson_create(ctx, &o, &ps) == KEDR_ERR_INVALID, "Jacobi m = 5 accepted");
    kedr_flow_poisson_defaults(&o);
    o.tol = 0;
    TU_CHECK(kedr_flow_poisson_create(ctx, &o, &ps) == KEDR_ERR_INVALID, "tol = atol = 0 accepted");
    kedr_flow_precond p;
    TU_CHECK(kedr_flow_precond_parse("ssor", &p) == KEDR_OK && p == KEDR_FLOW_PC_SSOR, "parse");
    TU_CHECK(kedr_flow_precond_parse("ilu", &p) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "ilu"), "parse of an unknown name");
    /* a solve that cannot converge in 3 iterations says so, with its history */
    kedr_flow_poisson_defaults(&o);
    o.n[0] = o.n[1] = 40;
    o.precond = KEDR_FLOW_PC_NONE;
    o.max_iter = 3;
    TU_OK(kedr_flow_poisson_create(ctx, &o, &ps));
    if (ps) {
        double *x = calloc(1600, sizeof *x), *b = calloc(1600, sizeof *b);
        b[0] = 1;
        b[1599] = -1;
        kedr_flow_poisson_info info;
        double *dx = to_dev(ctx, x, 1600), *db = to_dev(ctx, b, 1600);
        TU_OK(kedr_flow_poisson_solve(ps, dx, db, &info));
        TU_CHECK(!info.converged && info.iterations == 3 && info.history_len == 4 &&
                     info.residual > 1e-3, "a capped solve: converged %d, %d iterations",
                 info.converged, info.iterations);
        b[0] = NAN;
        kedr_free(ctx, db);
        db = to_dev(ctx, b, 1600);
        TU_CHECK(kedr_flow_poisson_solve(ps, dx, db, &info) == KEDR_ERR_INVALID, "NaN accepted");
        kedr_free(ctx, dx);
        kedr_free(ctx, db);
        free(x);
        free(b);
        kedr_flow_poisson_destroy(ps);
    }
}

/* KEDR_FLOW_MG_GRAPH: the V-cycle replayed as a recorded CUDA graph gives the kernel-by-kernel
 * V-cycle's bits (the same kernels in the same order), in PCG, multigrid alone and the
 * preconditioner called with changing outputs (a new output pointer runs unrecorded, the same
 * new one twice records again); a value other than 0 or 1 is refused by name. */
static void check_graph(kedr_ctx *ctx)
{
    const grid gs[] = {{{32, 24, 16}, {1, 0, 0}, {0.1, 0.1, 0.05}},
                       {{64, 64, 1}, {1, 1, 0}, {0.1, 0.1, 1}},
                       {{17, 16, 15}, {0, 0, 0}, {1, 1, 1}}};
    uint64_t rs = 777;
    for (size_t gi = 0; gi < sizeof gs / sizeof gs[0]; gi++) {
        const grid *g = &gs[gi];
        size_t N = cells(g);
        double *b = tu_host_alloc(N * sizeof *b);
        double *x[2][2] = {{NULL}}, *y[2][6] = {{NULL}};
        for (size_t i = 0; i < N; i++)
            b[i] = tu_uniform(&rs) - 0.5;
        for (int graph = 0; graph < 2; graph++) {
            TU_CHECK(setenv("KEDR_FLOW_MG_GRAPH", graph ? "1" : "0", 1) == 0, "setenv");
            for (int m = 0; m < 2; m++) {
                kedr_flow_poisson_opts o;
                opts_for(g, &o);
                o.method = m ? KEDR_FLOW_METHOD_MG : KEDR_FLOW_METHOD_PCG;
                o.precond = m ? KEDR_FLOW_PC_NONE : KEDR_FLOW_PC_MG;
                o.steps = 2;
                o.tol = 1e-10;
                o.max_iter = 500;
                kedr_flow_poisson *ps = NULL;
                TU_OK(kedr_flow_poisson_create(ctx, &o, &ps));
                if (!ps)
                    continue;
                kedr_flow_poisson_info info;
                double *dx = to_dev(ctx, b, N), *db = to_dev(ctx, b, N);
                TU_OK(kedr_memset(ctx, dx, 0, N * sizeof *dx));
                TU_OK(kedr_flow_poisson_solve(ps, dx, db, &info));
                x[graph][m] = tu_host_alloc(N * sizeof *b);
                to_host(ctx, x[graph][m], dx, N);
                if (m == 0) { /* outputs y0, y1, y1, y0, y0, y1 */
                    double *dy[2] = {to_dev(ctx, b, N), to_dev(ctx, b, N)};
                    static const int order[6] = {0, 1, 1, 0, 0, 1};
                    for (int k = 0; k < 6; k++) {
                        TU_OK(kedr_flow_poisson_precondition(ps, db, dy[order[k]]));
                        y[graph][k] = tu_host_alloc(N * sizeof *b);
                        to_host(ctx, y[graph][k], dy[order[k]], N);
                    }
                    kedr_free(ctx, dy[0]);
                    kedr_free(ctx, dy[1]);
                }
                kedr_free(ctx, dx);
                kedr_free(ctx, db);
                kedr_flow_poisson_destroy(ps);
            }
        }
        unsetenv("KEDR_FLOW_MG_GRAPH");
        for (int m = 0; m < 2; m++) {
            TU_CHECK(x[0][m] && x[1][m] && !memcmp(x[0][m], x[1][m], N * sizeof *b), "%s: %dx%dx%d %s: the replayed "
                     "V-cycle's x differs from the launched one's",
                     kedr_backend_name(kedr_ctx_backend(ctx)), g->n[0], g->n[1], g->n[2],
                     m ? "mg alone" : "pcg+mg");
            free(x[0][m]);
            free(x[1][m]);
        }
        for (int k = 0; k < 6; k++) {
            TU_CHECK(y[0][k] && y[1][k] && !memcmp(y[0][k], y[1][k], N * sizeof *b), "%s: %dx%dx%d: preconditioner "
                     "call %d: the replayed V-cycle differs from the launched one",
                     kedr_backend_name(kedr_ctx_backend(ctx)), g->n[0], g->n[1], g->n[2], k);
            free(y[0][k]);
            free(y[1][k]);
        }
        free(b);
    }
    /* a bad value, refused at creation */
    kedr_flow_poisson_opts o;
    opts_for(&gs[0], &o);
    o.precond = KEDR_FLOW_PC_MG;
    kedr_flow_poisson *ps = NULL;
    TU_CHECK(setenv("KEDR_FLOW_MG_GRAPH", "yes", 1) == 0, "setenv");
    kedr_status st = kedr_flow_poisson_create(ctx, &o, &ps);
    unsetenv("KEDR_FLOW_MG_GRAPH");
    TU_CHECK(st == KEDR_ERR_INVALID && !ps && strstr(kedr_last_error(), "KEDR_FLOW_MG_GRAPH"),
             "KEDR_FLOW_MG_GRAPH = yes: status %d, '%s'", (int)st, kedr_last_error());
    kedr_flow_poisson_destroy(ps);
}

int main(void)
{
    /* awkward sizes: single cells, prime sizes, powers of two and one off, mixed ends */
    const grid small[] = {
        {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}},       {{2, 1, 1}, {0, 0, 0}, {0.5, 1, 1}},
        {{2, 1, 1}, {1, 0, 0}, {0.5, 1, 1}},     {{7, 1, 1}, {0, 0, 0}, {0.3, 1, 1}},
        {{1, 9, 1}, {0, 1, 0}, {1, 0.2, 1}},     {{7, 5, 1}, {0, 0, 0}, {0.1, 0.13, 1}},
        {{8, 6, 1}, {1, 0, 0}, {0.1, 0.1, 1}},   {{6, 4, 1}, {1, 1, 0}, {0.2, 0.1, 1}},
        {{3, 4, 5}, {0, 0, 0}, {0.1, 0.2, 0.15}}, {{4, 4, 4}, {1, 1, 1}, {1, 1, 1}},
        {{5, 4, 3}, {1, 0, 1}, {0.2, 0.2, 0.3}},  {{16, 17, 1}, {0, 0, 0}, {1, 1, 1}},
    };
    const grid large[] = {
        {{33, 31, 1}, {0, 0, 0}, {0.03, 0.03, 1}},   {{64, 64, 1}, {1, 1, 0}, {0.1, 0.1, 1}},
        {{128, 96, 1}, {0, 1, 0}, {0.01, 0.02, 1}},  {{17, 16, 15}, {0, 0, 0}, {1, 1, 1}},
        {{32, 24, 16}, {1, 0, 0}, {0.1, 0.1, 0.05}}, {{65, 1, 1}, {0, 0, 0}, {1, 1, 1}},
    };
    kedr_backend bk[2];
    int nb = tu_backends(bk);
    for (int ib = 0; ib < nb; ib++) {
        if (!kedr_flow_backend_available(bk[ib])) {
            printf("flow: no %s back end in this build; skipped\n", kedr_backend_name(bk[ib]));
            continue;
        }
        kedr_ctx *ctx = tu_ctx(bk[ib]);
        bad_options(ctx);
        check_graph(ctx);
        uint64_t rs = 12345;
        for (size_t gi = 0; gi < sizeof small / sizeof small[0]; gi++) {
            const grid *g = &small[gi];
            size_t N = cells(g);
            double *b = tu_host_alloc(N * sizeof *b), *x = tu_host_alloc(N * sizeof *x);
            for (size_t i = 0; i < N; i++)
                b[i] = tu_uniform(&rs) * 2 - 1 + 5; /* + 5: b's mean is not zero */
            ref_dense(g, b, x);
            for (size_t v = 0; v < NVARIANTS; v++) {
                check_solve(ctx, g, &variants[v], b, x, 1e-10, 1e-7, &first_iters[gi][v]);
                check_operators(ctx, g, &variants[v]);
            }
            free(b);
            free(x);
        }
        size_t nlarge = tu_quick() ? 4 : sizeof large / sizeof large[0];
        for (size_t gi = 0; gi < nlarge; gi++) {
            const grid *g = &large[gi];
            size_t N = cells(g);
            double *b = tu_host_alloc(N * sizeof *b), *x = tu_host_alloc(N * sizeof *x);
            eigen_problem(g, &rs, x, b);
            for (size_t v = 0; v < NVARIANTS; v++)
                check_solve(ctx, g, &variants[v], b, x, 1e-9, 1e-6, &first_iters[32 + gi][v]);
            free(b);
            free(x);
        }
        kedr_ctx_destroy(ctx);
        first_backend = 0;
    }
    return tu_finish("test_flow_poisson");
}
