/* A temperature pulse diffusing in a box with free faces: from T = A exp(-r^2 / 2 s0^2) the
 * heat equation T_t = kappa lap T (kappa = 1/(Re Pr)) gives
 *   T = A (s0^2/s^2)^(3/2) exp(-r^2 / 2 s^2),  s^2 = s0^2 + 2 kappa t
 * (the Gaussian solution in infinite space; the faces lie 3.5 s from the centre at the end,
 * where the pulse is 0.002 A). In this model the temperature gradient drives the velocity
 * (-grad T in the momentum equation): the velocity reaches 0.75 A, and its advection (not in
 * conservative form) changes the heat by about 0.02 A relative: small at A = 0.01. All three sweeps diffuse the pulse: one left out
 * would leave the peak at 0.5 A instead of 0.354 A. Checks: the profile within 0.015 A (the
 * errors of implicit Euler, the splitting and the grid, each under 1%), and the heat
 * sum T h^3 (only differences of T enter the model, so the background is 0), which the implicit diffusion with extrapolated faces conserves exactly, to
 * 1e-5 relative (the advection's is 2e-6; single precision 1e-4). */
#include "test_adi_util.h"

#define N 40
#define S0 0.1
#define AMP 0.01
#define KAPPA 1.0
#define T_END 0.005

static double gauss(double r2, double t)
{
    double s2 = S0 * S0 + 2 * KAPPA * t;
    return AMP * pow(S0 * S0 / s2, 1.5) * exp(-r2 / (2 * s2));
}

static void pulse(kedr_ctx *ctx, kedr_backend b, int single, ta_fields *cpu)
{
    kedr_adi_case c;
    ta_case(&c, N + 1, N + 1, N + 1, 1.0 / N, 1 / KAPPA, T_END / 20, 20);
    c.pr = 1;
    c.single = single;
    ta_fields init, out;
    ta_alloc(&init, &c);
    ta_alloc(&out, &c);
    double heat0 = 0;
    for (int k = 0; k <= N; k++)
        for (int j = 0; j <= N; j++)
            for (int i = 0; i <= N; i++) {
                size_t id = ta_at(&c, i, j, k);
                double x = (i - N / 2) * c.h, y = (j - N / 2) * c.h, z = (k - N / 2) * c.h;
                init.f[0][id] = init.f[1][id] = init.f[2][id] = 0;
                init.f[3][id] = gauss(x * x + y * y + z * z, 0);
                if (i > 0 && i < N && j > 0 && j < N && k > 0 && k < N)
                    heat0 += init.f[3][id];
            }
    if (ta_run(ctx, &c, &init, &out) == 0) {
        double err = 0, heat = 0, speed = 0;
        for (int k = 1; k < N; k++)
            for (int j = 1; j < N; j++)
                for (int i = 1; i < N; i++) {
                    size_t id = ta_at(&c, i, j, k);
                    double x = (i - N / 2) * c.h, y = (j - N / 2) * c.h, z = (k - N / 2) * c.h;
                    err = fmax(err, fabs(out.f[3][id] - gauss(x * x + y * y + z * z, T_END)));
                    heat += out.f[3][id];
                    speed = fmax(speed, fabs(out.f[0][id]));
                }
        double peak = out.f[3][ta_at(&c, N / 2, N / 2, N / 2)];
        double drift = fabs(heat - heat0) / heat0;
        printf("%s: peak %.5f A (exact %.5f A), max error %.3g A, heat drift %.2g, |u| <= %.3g\n",
               single ? "single" : "double", peak / AMP, gauss(0, T_END) / AMP, err / AMP,
               drift, speed);
        TU_CHECK(err <= 0.015 * AMP, "pulse: max error %.3g > 0.015 A", err);
        TU_CHECK(drift <= (single ? 1e-4 : 1e-5), "pulse: heat changed by %.3g (relative)", drift);
    }
    ta_free(&init);
    if (b == KEDR_BACKEND_CPU) {
        *cpu = out;
        ta_have_cpu = 1;
    }
    else {
        ta_agree("pulse", b, cpu, &out, single);
        ta_free(&out);
    }
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    ta_fields cpu[2];
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        for (int single = 0; single < 2; single++)
            pulse(ctx, list[b], single, &cpu[single]);
        kedr_ctx_destroy(ctx);
    }
    if (ta_have_cpu)
        for (int k = 0; k < 2; k++)
            ta_free(&cpu[k]);
    return tu_finish("test_adi_pulse");
}
