/* DSMC inflow against the one-sided Maxwellian (free-molecular, no collisions):
 *  (a) the flux-weighted normal-velocity sampler: with z = beta v_n and s the speed ratio, the
 *      density is z exp(-(z - s)^2) on z > 0, whose moments are I_k = int_0^inf z^k exp(-(z-s)^2):
 *      I0 = sqrt(pi)/2 (1 + erf s), I1 = e/2 + s I0, I2 = s e/2 + (1/2 + s^2) I0,
 *      I3 = (s^2 + 1) e/2 + s (3/2 + s^2) I0 (e = exp(-s^2)); <z> = I2/I1, <z^2> = I3/I1, checked
 *      within 5 standard errors, and P(z < 1) against a numerical integral;
 *  (b) particles entering per step through the x_min side vs the analytic number flux
 *      n sqrt(kT / 2 pi m) [exp(-s^2) + sqrt(pi) s (1 + erf s)] per unit area: the count per
 *      face is floor(expected + u), so the total may differ from the expectation only by the
 *      rounding noise (variance <= 1/4 per face and step), checked within 5 of its sd;
 *  (c) a channel with specular side walls fed from x_min: without collisions each molecule keeps
 *      its vx, so the density just inside the inflow is that of the half-range Maxwellian,
 *      n (1 + erf s) / 2, and the mean vx there is flux / density. This checks the count, the
 *      velocity distribution and the random entry time together. Tolerance 1%: the statistical
 *      sd (from batch means) is printed, about 0.2%; molecules slower than 0.7 m/s have not yet
 *      arrived when sampling starts, a bias below 0.2%. */
#include "dsmc/dsmc_kernels.h"
#include "test_dsmc_util.h"

static double moment_i(int k, double s)
{
    double e = exp(-s * s), i0 = sqrt(M_PI) / 2 * (1 + erf(s));
    switch (k) {
    case 0: return i0;
    case 1: return e / 2 + s * i0;
    case 2: return s * e / 2 + (0.5 + s * s) * i0;
    default: return (s * s + 1) * e / 2 + s * (1.5 + s * s) * i0;
    }
}

static void test_sampler(void)
{
    static const double speeds[] = {-2.0, -0.5, 0.0, 0.3, 1.5, 4.0};
    const size_t n = tu_scale(200000, 40000); /* the bounds follow n by themselves */
    for (size_t k = 0; k < sizeof speeds / sizeof speeds[0]; k++) {
        double s = speeds[k], m1 = 0, m2 = 0, m4 = 0, below = 0;
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            dsmc_rng r = dsmc_rng_make(11, i, 3, DSMC_P_INFLOW);
            double z = dsmc_flux_normal(&r, s);
            bad += !(z > 0 && isfinite(z));
            m1 += z;
            m2 += z * z;
            m4 += z * z * z * z;
            below += z < 1;
        }
        TU_CHECK(bad == 0, "s = %g: %zu samples not positive and finite", s, bad);
        m1 /= n;
        m2 /= n;
        m4 /= n;
        double e1 = moment_i(2, s) / moment_i(1, s), e2 = moment_i(3, s) / moment_i(1, s);
        double se1 = sqrt((m2 - m1 * m1) / n), se2 = sqrt((m4 - m2 * m2) / n);
        TU_CHECK(fabs(m1 - e1) < 5 * se1, "s = %g: <z> = %.5f, expected %.5f +- %.5f", s, m1, e1, se1);
        TU_CHECK(fabs(m2 - e2) < 5 * se2, "s = %g: <z^2> = %.5f, expected %.5f +- %.5f", s, m2, e2,
                 se2);
        /* P(z < 1) by Simpson's rule on [0, 1]. */
        double integral = 0, h = 1.0 / 2000;
        for (int j = 0; j <= 2000; j++) {
            double z = j * h, f = z * exp(-(z - s) * (z - s));
            integral += f * (j == 0 || j == 2000 ? 1 : j % 2 ? 4 : 2);
        }
        double p = integral * h / 3 / moment_i(1, s), got = below / n;
        double sp = sqrt(p * (1 - p) / n) + 1e-12;
        TU_CHECK(fabs(got - p) < 5 * sp + 1e-9, "s = %g: P(z < 1) = %.5f, expected %.5f", s, got, p);
    }
}

static uint64_t generated[2][3];

static void test_channel(kedr_ctx *ctx, int b, int which, double s)
{
    const double n = 1e20, temperature = 300, len = 0.01;
    kedr_dsmc_case c = dt_box(len, 10, n, temperature, 1, 5e-6);
    c.ny = 1;
    c.side[KEDR_DSMC_XMIN] = KEDR_DSMC_INFLOW;
    c.side[KEDR_DSMC_XMAX] = KEDR_DSMC_OUTFLOW;
    c.fill = 0;
    double m = c.species[0].mass, cm = sqrt(2 * K_B * temperature / m);
    c.velocity[0] = s * cm;
    double dx = len / c.nx, n_plus = n * (1 + erf(s)) / 2;
    c.weight = n_plus * dx * len / 1000; /* about 1000 particles in the first column */
    /* quick: 500 particles there and 180 steps sampled, not 900, after the same start (which
     * keeps the bias of molecules not yet arrived as small): 10x fewer samples, the 1% bounds
     * widen by sqrt(10) */
    if (tu_quick())
        c.weight *= 2;
    const int steps = (int)tu_scale(1200, 480), start = 300, batches = 9;
    const double w = dt_widen(10);
    c.steps = steps;
    c.sample_start = start;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    unsigned mask = KEDR_DSMC_ALL_STAGES & ~KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
    double flux = kedr_dsmc_inflow_flux(n, temperature, m, c.velocity[0]);
    double batch_n[9], batch_u[9];
    int nb = 0;
    for (int step = 1; step <= steps; step++) {
        TU_OK(kedr_dsmc_step_stages(sim, mask));
        if (step >= start && (step - start + 1) % ((steps - start + 1) / batches) == 0 &&
            nb < batches) {
            kedr_dsmc_fields f;
            TU_OK(kedr_dsmc_get_fields(sim, &f));
            batch_n[nb] = f.number_density ? f.number_density[0] : 0;
            batch_u[nb] = f.ux ? f.ux[0] : 0;
            nb++;
            kedr_dsmc_fields_free(&f);
            TU_OK(kedr_dsmc_reset_samples(sim));
        }
    }
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    generated[b][which] = st.total_generated;
    double expect = flux * len * c.dt * steps / c.weight;
    double sd_round = sqrt(0.25 * steps); /* one inflow face */
    TU_CHECK(fabs((double)st.total_generated - expect) < 5 * sd_round + 1e-9 * expect,
             "s = %g: %llu entered, expected %.1f", s, (unsigned long long)st.total_generated,
             expect);
    double mn = 0, mu = 0, vn = 0;
    for (int k = 0; k < nb; k++) {
        mn += batch_n[k] / nb;
        mu += batch_u[k] / nb;
    }
    for (int k = 0; k < nb; k++)
        vn += (batch_n[k] - mn) * (batch_n[k] - mn) / (nb - 1);
    double sd = sqrt(vn / nb) / n_plus;
    printf("  inflow s = %+.2f: %llu entered (expected %.1f); first-cell density / n(1+erf s)/2 = "
           "%.5f +- %.5f; <vx> / (flux / density) = %.5f\n",
           s, (unsigned long long)st.total_generated, expect, mn / n_plus, sd,
           mu / (flux / n_plus));
    TU_CHECK(nb == batches, "batches %d", nb);
    TU_CHECK(fabs(mn / n_plus - 1) < 0.01 * w, "s = %g: density ratio %.5f", s, mn / n_plus);
    TU_CHECK(fabs(mu / (flux / n_plus) - 1) < 0.01 * w, "s = %g: mean vx ratio %.5f", s,
             mu / (flux / n_plus));
    if (b > 0)
        TU_CHECK(generated[b][which] == generated[0][which],
                 "s = %g: %llu entered on this back end, %llu on cpu", s,
                 (unsigned long long)generated[b][which], (unsigned long long)generated[0][which]);
    kedr_dsmc_destroy(sim);
}

int main(void)
{
    test_sampler();
    TU_CHECK(fabs(kedr_dsmc_inflow_flux(1e20, 300, 66.3e-27, 0) -
                  1e20 * sqrt(K_B * 300 / (2 * M_PI * 66.3e-27))) < 1e-9 * 1e20 * 100,
             "flux at s = 0 is n sqrt(kT / 2 pi m)");
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        test_channel(ctx, b, 0, 0.0);
        test_channel(ctx, b, 1, 1.5);
        test_channel(ctx, b, 2, -0.5);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_dsmc_inflow");
}
