/* The 2D Taylor–Green vortex in a periodic box [0, 2 pi]^2: u = U sin x cos y e^{-2 nu t},
 * v = -U cos x sin y e^{-2 nu t} (pressure (U^2/4)(cos 2x + cos 2y) e^{-4 nu t}) is an exact
 * solution of the Navier–Stokes equations (Taylor & Green 1937). The solver runs to t = 1
 * (U = 1, nu = 0.02, a fixed dt = 0.2 h: the time error of Adams–Bashforth 2 then falls with h^2
 * as the space error does, and dt stays within the stable step, 0.65 of it at 128^2) on 16^2,
 * 32^2 and 64^2 cells. The largest error of the staggered velocity must fall at an observed
 * order >= 1.9 between each pair of grids (measured 1.97 and 1.99), be below 4e-5 on 64^2
 * (measured 3.05e-5), and the kinetic energy must follow e^{-4 nu t} within 1e-4 relative.
 * Every pressure solver (and the FFT one where built) must give the same flow to the solve's
 * tolerance. */
#include "kedr/flow.h"
#include "test_util.h"

static kedr_flow_case tg_case(int n, double nu)
{
    kedr_flow_case c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "tg");
    c.dims = 2;
    c.n[0] = c.n[1] = n;
    c.n[2] = 1;
    c.length[0] = c.length[1] = 2 * M_PI;
    c.length[2] = 1;
    c.nu = nu;
    c.rho = 1;
    for (int f = 0; f < 6; f++)
        c.bc[f].kind = KEDR_FLOW_BC_PERIODIC;
    c.init = KEDR_FLOW_INIT_TAYLOR_GREEN;
    c.tg_amplitude = 1;
    c.dt = 0.2 * 2 * M_PI / n;
    c.cfl = 0.5;
    c.end_time = 1.0;
    c.steps = 1000000;
    kedr_flow_poisson_defaults(&c.poisson);
    c.poisson.tol = 1e-10;
    return c;
}

/* The largest error of u and v against the exact solution at the run's time. */
static double run(kedr_ctx *ctx, int n, const char *precond, double *energy_err)
{
    kedr_flow_case c = tg_case(n, 0.02);
    if (strcmp(precond, "fft") == 0)
        c.poisson.method = KEDR_FLOW_METHOD_FFT;
    else
        kedr_flow_precond_parse(precond, &c.poisson.precond);
    kedr_flow *f = NULL;
    TU_OK(kedr_flow_create(ctx, &c, &f));
    if (!f)
        return NAN;
    kedr_flow_stats st;
    do {
        TU_OK(kedr_flow_step(f));
        kedr_flow_get_stats(f, &st);
    } while (st.time < c.end_time - 1e-12 && st.step < 100000 && kedr_flow_failure(f) == 0);
    double decay = exp(-2 * c.nu * st.time), h = 2 * M_PI / n, err = 0;
    for (int comp = 0; comp < 2; comp++) {
        size_t cnt = kedr_flow_staggered_count(f, comp);
        double *q = malloc(cnt * sizeof *q);
        TU_OK(kedr_flow_get_staggered(f, comp, q));
        int nx = n + (comp == 0);
        for (size_t e = 0; e < cnt; e++) {
            int i = (int)(e % (size_t)nx), j = (int)(e / (size_t)nx);
            double x = comp == 0 ? i * h : (i + 0.5) * h, y = comp == 1 ? j * h : (j + 0.5) * h;
            double exact = comp == 0 ? sin(x) * cos(y) * decay : -cos(x) * sin(y) * decay;
            err = fmax(err, fabs(q[e] - exact));
        }
        free(q);
    }
    *energy_err = fabs(st.kinetic_energy / (0.25 * decay * decay) - 1);
    TU_CHECK(st.divergence < 1e-8, "%d^2: divergence %.3g after the projection", n,
             st.divergence);
    printf("  %3d^2 %-6s: t = %.4f in %lld steps, max error %.4e, energy error %.2e, "
           "%.1f Poisson iterations a step\n", n, precond, st.time, (long long)st.step, err,
           *energy_err, (double)st.poisson_iterations / (double)st.step);
    kedr_flow_destroy(f);
    return err;
}

int main(void)
{
    kedr_backend bk[2];
    int nb = tu_backends(bk);
    for (int ib = 0; ib < nb; ib++) {
        if (!kedr_flow_backend_available(bk[ib])) {
            printf("flow: no %s back end in this build; skipped\n", kedr_backend_name(bk[ib]));
            continue;
        }
        kedr_ctx *ctx = tu_ctx(bk[ib]);
        int sizes[3] = {16, 32, 64};
        double err[3], eerr[3];
        for (int s = 0; s < 3; s++)
            err[s] = run(ctx, sizes[s], "mg", &eerr[s]);
        for (int s = 0; s < 2; s++) {
            double order = log2(err[s] / err[s + 1]);
            printf("observed order %d -> %d: %.3f\n", sizes[s], sizes[s + 1], order);
            TU_CHECK(order >= 1.9, "order %.3f between %d^2 and %d^2 (errors %.3e, %.3e)", order,
                     sizes[s], sizes[s + 1], err[s], err[s + 1]);
        }
        TU_CHECK(err[2] < 4e-5, "64^2: error %.3e", err[2]);
        TU_CHECK(eerr[2] < 1e-4, "64^2: kinetic energy off by %.3e", eerr[2]);
        /* the other pressure solvers give the same flow to the solve's tolerance */
        const char *others[] = {"ssor", "jacobi", "ainv", "fft"};
        int nothers = 3;
#ifdef KEDR_HAVE_FFTW
        nothers += bk[ib] == KEDR_BACKEND_CPU; /* the direct solver, with FFTW, on the cpu */
#endif
#ifdef KEDR_HAVE_CUDA
        nothers += bk[ib] == KEDR_BACKEND_CUDA; /* ... and with cuFFT on cuda */
#endif
        for (int p = 0; p < nothers; p++) {
            double e2, e = run(ctx, 32, others[p], &e2);
            TU_CHECK(fabs(e - err[1]) <= 1e-6 * err[1] + 1e-9, "32^2 with %s: error %.6e, with "
                     "mg %.6e", others[p], e, err[1]);
        }
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_flow_taylor_green");
}
