/* The flow solver on every back end (KEDR_BACKEND) against the cpu: a 3D box with a moving lid,
 * a 2D channel from a parabolic inflow to a convective outflow between no-slip walls, and a 3D
 * periodic Taylor–Green start, each a few dozen steps with every pressure solver (PCG with each
 * preconditioner, and the direct FFT/DCT solver where the back end has it). The staggered
 * velocities must agree with the cpu's within 1e-9 of the largest velocity (sums in another
 * order and the solves' tolerance, 1e-10, set the difference), the pressure-solve iterations
 * within 2 a step. On the cpu alone the same run twice must give the same bits (no race in the
 * parallel loops). */
#include "kedr/flow.h"
#include "test_util.h"

static kedr_flow_case base(int dims, int n0, int n1, int n2)
{
    kedr_flow_case c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "b");
    c.dims = dims;
    c.n[0] = n0;
    c.n[1] = n1;
    c.n[2] = dims == 3 ? n2 : 1;
    for (int a = 0; a < 3; a++)
        c.length[a] = 1;
    c.nu = 0.01;
    c.rho = 1;
    c.cfl = 0.5;
    c.steps = 30;
    kedr_flow_poisson_defaults(&c.poisson);
    c.poisson.tol = 1e-10;
    return c;
}

static kedr_flow_case make(int which)
{
    kedr_flow_case c;
    if (which == 0) { /* 3D lid-driven box, odd sizes */
        c = base(3, 13, 12, 9);
        for (int f = 0; f < 6; f++)
            c.bc[f].kind = KEDR_FLOW_BC_WALL;
        c.bc[3].velocity[0] = 1;
        c.bc[3].velocity[2] = 0.3;
    } else if (which == 1) { /* 2D channel */
        c = base(2, 24, 10, 1);
        c.length[0] = 3;
        c.bc[0].kind = KEDR_FLOW_BC_INFLOW;
        c.bc[0].velocity[0] = 1;
        c.bc[0].parabolic = 1;
        c.bc[1].kind = KEDR_FLOW_BC_OUTFLOW;
        c.bc[2].kind = KEDR_FLOW_BC_WALL;
        c.bc[3].kind = KEDR_FLOW_BC_SLIP;
        c.bc[4].kind = c.bc[5].kind = KEDR_FLOW_BC_PERIODIC;
    } else { /* 3D periodic Taylor–Green */
        c = base(3, 16, 16, 8);
        for (int a = 0; a < 3; a++)
            c.length[a] = 2 * M_PI;
        for (int f = 0; f < 6; f++)
            c.bc[f].kind = KEDR_FLOW_BC_PERIODIC;
        c.init = KEDR_FLOW_INIT_TAYLOR_GREEN;
        c.tg_amplitude = 1;
        c.nu = 0.05;
    }
    return c;
}

/* The direct FFT/DCT solver: on the cpu with FFTW, on cuda with cuFFT. */
static int fft_here(kedr_backend b)
{
#ifdef KEDR_HAVE_CUDA
    if (b == KEDR_BACKEND_CUDA)
        return 1;
#endif
#ifdef KEDR_HAVE_FFTW
    return b == KEDR_BACKEND_CPU;
#else
    (void)b;
    return 0;
#endif
}

/* Runs the case; the staggered velocities (all components, one after the other). */
static double *run(kedr_ctx *ctx, kedr_flow_case c, size_t *len, int64_t *iters)
{
    kedr_flow *f = NULL;
    TU_OK(kedr_flow_create(ctx, &c, &f));
    if (!f)
        return NULL;
    for (int s = 0; s < c.steps; s++)
        TU_OK(kedr_flow_step(f));
    kedr_flow_stats st;
    kedr_flow_get_stats(f, &st);
    *iters = st.poisson_iterations;
    size_t total = 0;
    for (int a = 0; a < c.dims; a++)
        total += kedr_flow_staggered_count(f, a);
    double *q = tu_host_alloc(total * sizeof *q), *at = q;
    for (int a = 0; a < c.dims; a++) {
        TU_OK(kedr_flow_get_staggered(f, a, at));
        at += kedr_flow_staggered_count(f, a);
    }
    *len = total;
    kedr_flow_destroy(f);
    return q;
}

int main(void)
{
    kedr_backend bk[2];
    int nb = tu_backends(bk);
    const char *pcs[] = {"mg", "ssor", "jacobi", "ainv", "fft"}; /* fft: the method */
    double *ref[3][5] = {{NULL}};
    size_t reflen[3][5];
    int64_t refit[3][5];
    for (int ib = 0; ib < nb; ib++) {
        if (!kedr_flow_backend_available(bk[ib])) {
            printf("flow: no %s back end in this build; skipped\n", kedr_backend_name(bk[ib]));
            continue;
        }
        kedr_ctx *ctx = tu_ctx(bk[ib]);
        for (int w = 0; w < 3; w++)
            for (int p = 0; p < 5; p++) {
                kedr_flow_case c = make(w);
                if (p == 4) {
                    c.poisson.method = KEDR_FLOW_METHOD_FFT;
                    if (!fft_here(bk[ib]))
                        continue;
                } else
                    kedr_flow_precond_parse(pcs[p], &c.poisson.precond);
                if (p == 2) /* Jacobi: odd periodic sizes are fine, m = 3 */
                    c.poisson.steps = 3;
                else if (p != 0)
                    c.poisson.steps = 1;
                size_t len;
                int64_t it;
                double *q = run(ctx, c, &len, &it);
                if (!q)
                    continue;
                if (!ref[w][p]) {
                    ref[w][p] = q;
                    reflen[w][p] = len;
                    refit[w][p] = it;
                    if (nb == 1) { /* the cpu alone: the same bits a second time */
                        size_t len2;
                        int64_t it2;
                        double *q2 = run(ctx, c, &len2, &it2);
                        TU_CHECK(q2 && len2 == len && memcmp(q, q2, len * sizeof *q) == 0 &&
                                     it2 == it, "case %d %s: a second run differs", w, pcs[p]);
                        free(q2);
                    }
                    continue;
                }
                double d = 0, m = 0;
                for (size_t i = 0; i < len && len == reflen[w][p]; i++) {
                    d = fmax(d, fabs(q[i] - ref[w][p][i]));
                    m = fmax(m, fabs(ref[w][p][i]));
                }
                printf("case %d %-6s: %s differs from cpu by %.2e (largest velocity %.3g), "
                       "%lld against %lld iterations\n", w, pcs[p], kedr_backend_name(bk[ib]), d,
                       m, (long long)it, (long long)refit[w][p]);
                TU_CHECK(len == reflen[w][p] && d <= 1e-9 * m, "case %d %s: %s differs by %.3g",
                         w, pcs[p], kedr_backend_name(bk[ib]), d);
                TU_CHECK(llabs(it - refit[w][p]) <= 2 * make(w).steps, "case %d %s: iterations "
                         "%lld against %lld", w, pcs[p], (long long)it, (long long)refit[w][p]);
                free(q);
            }
        kedr_ctx_destroy(ctx);
    }
    for (int w = 0; w < 3; w++)
        for (int p = 0; p < 5; p++)
            free(ref[w][p]);
    return tu_finish("test_flow_backends");
}
