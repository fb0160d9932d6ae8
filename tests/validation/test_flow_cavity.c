/* The lid-driven cavity at Re = 100 against Ghia, Ghia & Shin (1982), "High-Re solutions for
 * incompressible flow using the Navier–Stokes equations and a multigrid method", J. Comput.
 * Phys. 48, 387–411: Table I (u along the vertical line through the centre) and Table II (v
 * along the horizontal line), their 129 x 129 solution. The values below are those of the
 * tables' Re = 100 columns (the same figures appear in the many reproductions of the tables).
 *
 * A unit square, the top wall moving at U = 1, nu = 0.01, from rest to t = 20 (the flow is
 * steady to plotting accuracy well before), on 32 x 32 cells with dt from cfl = 0.5. Tolerance:
 * every profile value within 0.012 U of the tables (measured: 0.0020 for u, 0.0084 for v; the
 * 64 x 64 grid gives 0.0038 and 0.0086, which is about the accuracy of the tables' own grid). */
#include "kedr/flow.h"
#include "test_util.h"

static const double ghia_y[17] = {1.0,    0.9766, 0.9688, 0.9609, 0.9531, 0.8516,
                                  0.7344, 0.6172, 0.5,    0.4531, 0.2813, 0.1719,
                                  0.1016, 0.0703, 0.0625, 0.0547, 0.0};
static const double ghia_u[17] = {1.0,      0.84123,  0.78871,  0.73722,  0.68717,  0.23151,
                                  0.00332,  -0.13641, -0.20581, -0.21090, -0.15662, -0.10150,
                                  -0.06434, -0.04775, -0.04192, -0.03717, 0.0};
static const double ghia_x[17] = {1.0,    0.9688, 0.9609, 0.9531, 0.9453, 0.9063,
                                  0.8594, 0.8047, 0.5,    0.2344, 0.2266, 0.1563,
                                  0.0938, 0.0781, 0.0703, 0.0625, 0.0};
static const double ghia_v[17] = {0.0,      -0.05906, -0.07391, -0.08864, -0.10313, -0.16914,
                                  -0.22445, -0.24533, 0.05454,  0.17527,  0.17507,  0.16077,
                                  0.12317,  0.10890,  0.10091,  0.09233,  0.0};

/* Reads the profile file back: line name, coordinate, value. */
static int read_profile(const char *path, const char *line, double *x, double *v, int max)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    char buf[256];
    int n = 0;
    while (fgets(buf, sizeof buf, fp) && n < max) {
        char name[64];
        double a, b;
        if (sscanf(buf, "%63[^,],%lf,%lf", name, &a, &b) == 3 && strcmp(name, line) == 0) {
            x[n] = a;
            v[n++] = b;
        }
    }
    fclose(fp);
    return n;
}

static double interp(const double *x, const double *v, int n, double at)
{
    for (int i = 0; i + 1 < n; i++)
        if (x[i] <= at && at <= x[i + 1])
            return v[i] + (v[i + 1] - v[i]) * (at - x[i]) / (x[i + 1] - x[i]);
    return NAN;
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
        kedr_flow_case c;
        memset(&c, 0, sizeof c);
        strcpy(c.name, "cavity");
        c.dims = 2;
        c.n[0] = c.n[1] = 32;
        c.n[2] = 1;
        c.length[0] = c.length[1] = c.length[2] = 1;
        c.nu = 0.01;
        c.rho = 1;
        for (int f = 0; f < 4; f++)
            c.bc[f].kind = KEDR_FLOW_BC_WALL;
        c.bc[3].velocity[0] = 1;
        c.bc[4].kind = c.bc[5].kind = KEDR_FLOW_BC_PERIODIC;
        c.cfl = 0.5;
        c.end_time = 20;
        c.steps = 1000000;
        kedr_flow_poisson_defaults(&c.poisson);
        kedr_flow *f = NULL;
        TU_OK(kedr_flow_create(ctx, &c, &f));
        if (!f)
            return tu_finish("test_flow_cavity");
        kedr_flow_stats st;
        do {
            TU_OK(kedr_flow_step(f));
            kedr_flow_get_stats(f, &st);
        } while (st.time < c.end_time - 1e-12 && kedr_flow_failure(f) == 0);
        printf("t = %.3f in %lld steps, %.2f Poisson iterations a step, divergence %.2e\n",
               st.time, (long long)st.step, (double)st.poisson_iterations / st.step,
               st.divergence);
        TU_CHECK(st.divergence < 1e-6, "divergence %.3g", st.divergence);
        char dir[] = "/tmp/kedr-flow-cavity-XXXXXX", path[128];
        if (!mkdtemp(dir)) {
            TU_CHECK(0, "mkdtemp");
            return tu_finish("test_flow_cavity");
        }
        snprintf(path, sizeof path, "%s/profiles.csv", dir);
        TU_OK(kedr_flow_write_profiles(f, path));
        double x[256], v[256];
        const char *lines[2] = {"u_vertical", "v_horizontal"};
        const double *gc[2] = {ghia_y, ghia_x}, *gv[2] = {ghia_u, ghia_v};
        for (int l = 0; l < 2; l++) {
            int n = read_profile(path, lines[l], x, v, 256);
            TU_CHECK(n == 34, "%s: %d points", lines[l], n);
            double worst = 0;
            for (int p = 0; p < 17; p++) {
                double e = fabs(interp(x, v, n, gc[l][p]) - gv[l][p]);
                TU_CHECK(e <= 0.012, "%s at %.4f: %.5f, Ghia et al. %.5f", lines[l], gc[l][p],
                         interp(x, v, n, gc[l][p]), gv[l][p]);
                worst = e > worst || e != e ? e : worst;
            }
            printf("%s: largest difference from Ghia et al. %.4f (tolerance 0.012)\n", lines[l],
                   worst);
        }
        tu_remove_dir(dir);
        kedr_flow_destroy(f);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_flow_cavity");
}
