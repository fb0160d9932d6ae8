/* Fully developed flow in a rectangular duct: no-slip walls at y = 0, a and z = 0, b, the x
 * faces free, driven by a body force G along x (the mean pressure gradient). The steady u(y, z)
 * solves nu (u_yy + u_zz) = -G, whose series solution (e.g. White, Viscous Fluid Flow, §3.3) is
 *   u = sum_{n odd} 4 G a^2 / (nu n^3 pi^3) [1 - cosh(n pi (z - b/2)/a) / cosh(n pi b/(2a))]
 *       sin(n pi y/a).
 * The split scheme's steady state is not the unsplit one: with implicit Euler steps along y and
 * z, the fixed point solves -(Y + Z) u + dt Y Z u = G (Y, Z the second differences), an O(dt)
 * splitting error of about 3 dt u here (30% at dt = 0.1). So the profile is checked at a small
 * step, and the splitting error's order in dt at large ones.
 * Checks: at dt = 1e-3 on 24 x 36 intervals the profile within 1% of the centre velocity (the
 * second difference's error is about 0.2%, the splitting's 0.3%) and the flow rate within 1%;
 * the steady error at dt = 0.02 and 0.01 in the ratio 2 +- 0.15 (first order). A force or
 * viscosity off by 5%, or a sweep that leaves out y or z, fails. */
#include "test_adi_util.h"

#define NU 1.0
#define G 1.0
#define A 1.0
#define B 1.5

static double series(double y, double z)
{
    double u = 0;
    for (int n = 1; n < 400; n += 2) {
        double r = n * M_PI / A, q = n * M_PI * B / (2 * A);
        double ch = q > 300 ? 0 : cosh(r * (z - B / 2)) / cosh(q);
        u += 4 * G * A * A / (NU * n * n * n * M_PI * M_PI * M_PI) * (1 - ch) * sin(r * y);
    }
    return u;
}

/* The run on n x 1.5 n intervals from the series solution to t = 0.75, steps of dt: max error,
 * centre velocity and flow rate error. */
static double duct(kedr_ctx *ctx, kedr_backend b, int n, double dt, int single, ta_fields *cpu,
                   double *flow_err, double *centre)
{
    kedr_adi_case c;
    ta_case(&c, 4, n + 1, 3 * n / 2 + 1, A / n, 1 / NU, dt, (int64_t)(0.75 / dt + 0.5));
    c.single = single;
    c.force[0] = G;
    /* Linear here (v = w = 0, u uniform along x): one iteration of each kind is exact. */
    c.global_iterations = c.local_iterations = 1;
    for (int f = KEDR_ADI_Y_LO; f <= KEDR_ADI_Z_HI; f++)
        c.face[f].kind = KEDR_ADI_WALL;
    ta_fields out, init;
    ta_alloc(&out, &c);
    ta_alloc(&init, &c);
    for (int k = 0; k < c.nz; k++)
        for (int j = 0; j < c.ny; j++)
            for (int i = 0; i < c.nx; i++) {
                size_t id = ta_at(&c, i, j, k);
                init.f[0][id] = series(j * c.h, k * c.h);
                init.f[1][id] = init.f[2][id] = 0;
                init.f[3][id] = 1;
            }
    double err = INFINITY;
    if (ta_run(ctx, &c, &init, &out) == 0) {
        double q = 0, qe = 0;
        err = 0;
        for (int k = 0; k < c.nz; k++)
            for (int j = 0; j < c.ny; j++) {
                double want = series(j * c.h, k * c.h), got = out.f[0][ta_at(&c, 1, j, k)];
                err = fmax(err, fabs(got - want));
                q += got * c.h * c.h;
                qe += want * c.h * c.h;
            }
        *centre = series(A / 2, B / 2);
        *flow_err = fabs(q - qe) / qe;
    }
    ta_free(&init);
    if (b == KEDR_BACKEND_CPU) {
        *cpu = out;
        ta_have_cpu = 1;
    }
    else {
        ta_agree("duct", b, cpu, &out, single);
        ta_free(&out);
    }
    return err;
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    ta_fields cpu[4]; /* the cpu's fields of the four runs, which the cuda runs must match */
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        double fe, uc, fe2, uc2;
        double e1 = duct(ctx, list[b], 24, 0.02, 0, &cpu[0], &fe, &uc);
        double e2 = duct(ctx, list[b], 24, 0.01, 0, &cpu[1], &fe, &uc);
        double e24 = duct(ctx, list[b], 24, 1e-3, 0, &cpu[2], &fe2, &uc2);
        printf("centre velocity %.6f; max error at dt = 1e-3 %.3g, flow rate off by %.3g%%; "
               "splitting error at dt = 0.02 %.3g, 0.01 %.3g: ratio %.3f\n", uc, e24,
               100 * fe2, e1, e2, e1 / e2);
        TU_CHECK(e24 <= 0.01 * uc, "duct profile error %.3g > 1%% of the centre velocity %.4g",
                 e24, uc);
        TU_CHECK(fe2 <= 0.01, "duct flow rate off by %.3g%% > 1%%", 100 * fe2);
        TU_CHECK(fabs(e1 / e2 - 2) <= 0.15, "duct: splitting error ratio %.3f, expected 2",
                 e1 / e2);
        double es = duct(ctx, list[b], 24, 1e-3, 1, &cpu[3], &fe, &uc);
        TU_CHECK(fabs(es - e24) <= 1e-5, "duct in single precision: error %.3g, double %.3g", es,
                 e24);
        kedr_ctx_destroy(ctx);
    }
    if (ta_have_cpu)
        for (int k = 0; k < 4; k++)
            ta_free(&cpu[k]);
    return tu_finish("test_adi_duct");
}
