/* Inflow, convective outflow, walls and slip walls on the plane channel (2D, length 4 H):
 *  - Poiseuille flow: a parabolic inflow of mean U = 1 between no-slip walls, nu = 0.1
 *    (Re = U H / nu = 10), 32 x 16 cells, from rest to t = 10 (the viscous time H^2/nu).
 *    Downstream of the inlet the profile must be the exact solution of the discrete problem,
 *    u_j = A s_j (1 - s_j) + A h^2/4 with A = 6 U (1 + h^2/2) / (1 + 2 h^2) (the quadratic
 *    whose second difference is exact, whose ghost value mirrors the first cell's, u_0 = -u_1,
 *    and whose flux is that of the inflow parabola sampled at the cell centres), within 2e-4 U
 *    (the slowest transient, e^{-pi^2 nu t / H^2}, is down to 5e-5), and the parabola
 *    6 U s (1 - s) within 6e-3 U (the O(h^2) of the walls' condition); the pressure must fall
 *    at the discrete dp/dx = -2 rho nu A within 0.2% (the continuous -12 rho nu U / H^2 within
 *    1%); the flux through every cross-section must equal the inflow's to 1e-9 (the outflow's
 *    correction and the projection).
 *  - Uniform flow between slip walls (uniform inflow U = 1): stays uniform to 1e-10. */
#include "kedr/flow.h"
#include "test_util.h"

static kedr_flow_case channel(int parabolic, kedr_flow_bc_kind walls)
{
    kedr_flow_case c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "channel");
    c.dims = 2;
    c.n[0] = 32;
    c.n[1] = 16;
    c.n[2] = 1;
    c.length[0] = 4;
    c.length[1] = c.length[2] = 1;
    c.nu = 0.1;
    c.rho = 1;
    c.bc[0].kind = KEDR_FLOW_BC_INFLOW;
    c.bc[0].velocity[0] = 1;
    c.bc[0].parabolic = parabolic;
    c.bc[1].kind = KEDR_FLOW_BC_OUTFLOW;
    c.bc[2].kind = c.bc[3].kind = walls;
    c.bc[4].kind = c.bc[5].kind = KEDR_FLOW_BC_PERIODIC;
    c.cfl = 0.5;
    c.end_time = 10;
    c.steps = 1000000;
    kedr_flow_poisson_defaults(&c.poisson);
    return c;
}

static kedr_flow *run(kedr_ctx *ctx, const kedr_flow_case *c)
{
    kedr_flow *f = NULL;
    TU_OK(kedr_flow_create(ctx, c, &f));
    if (!f)
        return NULL;
    kedr_flow_stats st;
    do {
        TU_OK(kedr_flow_step(f));
        kedr_flow_get_stats(f, &st);
    } while (st.time < c->end_time - 1e-12 && kedr_flow_failure(f) == 0);
    printf("t = %.3f in %lld steps, divergence %.2e\n", st.time, (long long)st.step,
           st.divergence);
    return f;
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
        kedr_flow_case c = channel(1, KEDR_FLOW_BC_WALL);
        kedr_flow *f = run(ctx, &c);
        if (f) {
            int nx = c.n[0] + 1, ny = c.n[1];
            double *u = malloc((size_t)nx * ny * sizeof *u), hy = 1.0 / ny;
            TU_OK(kedr_flow_get_staggered(f, 0, u));
            double perr = 0, ferr = 0, derr = 0, A = 6 * (1 + hy * hy / 2) / (1 + 2 * hy * hy);
            for (int i = 0; i < nx; i++) {
                double flux = 0;
                for (int j = 0; j < ny; j++) {
                    double s = (j + 0.5) * hy, v = u[i + (size_t)nx * j];
                    flux += v * hy;
                    if (i >= 8) { /* x >= 1: developed */
                        perr = fmax(perr, fabs(v - 6 * s * (1 - s)));
                        derr = fmax(derr, fabs(v - (A * s * (1 - s) + A * hy * hy / 4)));
                    }
                }
                double inflow = 0;
                for (int j = 0; j < ny; j++) {
                    double s = (j + 0.5) * hy;
                    inflow += 6 * s * (1 - s) * hy;
                }
                ferr = fmax(ferr, fabs(flux - inflow));
            }
            printf("Poiseuille: off the discrete solution by %.3e, off the parabola by %.3e, flux "
                   "error %.3e\n", derr, perr, ferr);
            TU_CHECK(derr < 2e-4, "profile off the discrete solution by %.3e", derr);
            TU_CHECK(perr < 6e-3, "profile off the parabola by %.3e", perr);
            TU_CHECK(ferr < 1e-9, "flux through a section off by %.3e", ferr);
            kedr_flow_fields fl;
            TU_OK(kedr_flow_get_fields(f, &fl));
            /* dp/dx from cells x in [1, 3], averaged over the section */
            double p1 = 0, p3 = 0;
            for (int j = 0; j < ny; j++) {
                p1 += fl.p[8 + (size_t)c.n[0] * j] / ny;
                p3 += fl.p[24 + (size_t)c.n[0] * j] / ny;
            }
            double dpdx = (p3 - p1) / 2.0, want = -12 * c.nu, discrete = -2 * c.nu * A;
            printf("Poiseuille: dp/dx %.5f, discrete %.5f, continuous %.5f\n", dpdx, discrete,
                   want);
            TU_CHECK(fabs(dpdx / discrete - 1) < 2e-3, "dp/dx %.5f against %.5f", dpdx, discrete);
            TU_CHECK(fabs(dpdx / want - 1) < 0.01, "dp/dx %.5f against %.5f", dpdx, want);
            kedr_flow_fields_free(&fl);
            free(u);
            kedr_flow_destroy(f);
        }
        c = channel(0, KEDR_FLOW_BC_SLIP);
        c.end_time = 2;
        f = run(ctx, &c);
        if (f) {
            size_t cnt = kedr_flow_staggered_count(f, 0);
            double *u = malloc(cnt * sizeof *u), *v = malloc(kedr_flow_staggered_count(f, 1) * 8);
            TU_OK(kedr_flow_get_staggered(f, 0, u));
            TU_OK(kedr_flow_get_staggered(f, 1, v));
            double e = 0;
            for (size_t i = 0; i < cnt; i++)
                e = fmax(e, fabs(u[i] - 1));
            for (size_t i = 0; i < kedr_flow_staggered_count(f, 1); i++)
                e = fmax(e, fabs(v[i]));
            printf("slip channel: largest departure from uniform flow %.3e\n", e);
            TU_CHECK(e < 1e-10, "uniform flow between slip walls changed by %.3e", e);
            free(u);
            free(v);
            kedr_flow_destroy(f);
        }
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_flow_channel");
}
