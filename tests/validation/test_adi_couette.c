/* Couette flow: fluid at rest between a wall at y = 0 and a wall at y = H moving at U along x
 * (a given-velocity face), the other faces free. The start-up has the series solution
 *   u(y, t) = U y/H - (2U/pi) sum_n (-1)^(n+1)/n sin(n pi y/H) exp(-nu n^2 pi^2 t/H^2)
 * (separation of variables; e.g. Schlichting, Boundary-Layer Theory, the flow started
 * impulsively), and the steady state is the linear profile, which the scheme represents exactly.
 * Tolerances: the transient within 0.003 U (implicit Euler's error at dt = 0.0005 is about
 * 0.0015 U, most of it from the start's jump at the moving wall; a viscosity off by 10% moves
 * the profile by 0.02 U), the steady profile to 1e-9 U (single precision: 1e-5 U). */
#include "test_adi_util.h"

#define N 32
#define NU 1.0

static double series(double y, double t)
{
    double u = y;
    for (int n = 1; n < 2000; n++)
        u -= 2 / M_PI * (n % 2 ? 1.0 : -1.0) / n * sin(n * M_PI * y) * exp(-NU * n * n * M_PI * M_PI * t);
    return u;
}

static void couette(kedr_ctx *ctx, kedr_backend b, int single, double dt, int steps,
                    double tol, ta_fields *cpu)
{
    kedr_adi_case c;
    ta_case(&c, 4, N + 1, 4, 1.0 / N, 1 / NU, dt, steps);
    c.single = single;
    c.face[KEDR_ADI_Y_LO].kind = KEDR_ADI_WALL;
    c.face[KEDR_ADI_Y_HI].kind = KEDR_ADI_WALL;
    c.face[KEDR_ADI_Y_HI].velocity[0] = 1;
    ta_fields out;
    ta_alloc(&out, &c);
    if (ta_run(ctx, &c, NULL, &out) == 0) {
        double t = dt * steps, err = 0, other = 0;
        for (int j = 0; j <= N; j++)
            for (int k = 0; k < 4; k++)
                for (int i = 0; i < 4; i++) {
                    size_t id = ta_at(&c, i, j, k);
                    double want = steps * dt > 5 ? j * c.h : series(j * c.h, t);
                    err = fmax(err, fabs(out.f[0][id] - want));
                    other = fmax(other, fmax(fabs(out.f[1][id]), fabs(out.f[2][id])));
                }
        printf("%s, t = %g, dt = %g: max error %.3g (tolerance %.1g), |v|, |w| <= %.1g\n",
               single ? "single" : "double", t, dt, err, tol, other);
        TU_CHECK(err <= tol, "Couette (%s) at t = %g: max error %.3g > %.1g",
                 single ? "single" : "double", t, err, tol);
        TU_CHECK(other <= (single ? 1e-5 : 1e-13), "Couette: v or w moved by %.3g", other);
    }
    if (b == KEDR_BACKEND_CPU) {
        *cpu = out;
        ta_have_cpu = 1;
    }
    else {
        ta_agree("Couette", b, cpu, &out, single);
        ta_free(&out);
    }
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    ta_fields cpu[4];
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        for (int single = 0; single < 2; single++) {
            couette(ctx, list[b], single, 0.0005, 100, 0.003, &cpu[2 * single]);
            couette(ctx, list[b], single, 1.0, 40, single ? 1e-5 : 1e-9, &cpu[2 * single + 1]);
        }
        kedr_ctx_destroy(ctx);
    }
    if (ta_have_cpu)
        for (int k = 0; k < 4; k++)
            ta_free(&cpu[k]);
    return tu_finish("test_adi_couette");
}
