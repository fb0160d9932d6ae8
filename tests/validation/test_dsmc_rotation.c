/* DSMC rotational energy (Larsen-Borgnakke exchange at constant Z_rot) against exact results, on
 * every back end, for the NTC and the majorant frequency schemes, with 2 rotational degrees of
 * freedom (VHS nitrogen, closed-form energy split) and 3 (the same molecule with zeta = 3, split
 * sampled by acceptance):
 *  (a) conservation: full steps in a closed specular box, started with T_rot = 0 so that much
 *      energy moves between the modes, keep the particle count and the total (translational +
 *      rotational) energy to 1e-12 relative;
 *  (b) equilibrium: a gas filled at T with rotational energies from the equilibrium
 *      distribution keeps T_tr = T_rot = T_eq (T_eq from the conserved total energy) after 40
 *      mean collision times: within 5 standard errors of a snapshot of N molecules (T_tr:
 *      T_eq sqrt(2 / 3N); T_rot: T_eq sqrt(2 / zeta N)); for zeta = 2 the fraction of molecules
 *      with e_rot > k T_eq is exp(-1) within 5 sqrt(p (1 - p) / N); the sampled cell fields
 *      give the same T_rot and T_overall = (3 T + zeta T_rot) / (3 + zeta) in every cell;
 *  (c) relaxation from T_rot = 0: with the serial selection (each molecule of a collision
 *      relaxes with p = 1 / Z_rot, the second after the first) the mean energy moved per
 *      collision gives, per collision per molecule c,
 *          d(T_tr - T_rot)/dc = -(1 + zeta/3) k (T_tr - T_rot),
 *          k = p b / (a + b) (1 - p a / (2 (a + b))),  a = zeta / 2,  b = 5/2 - omega,
 *      an exponential in c (docs/dsmc.md derives it). The rate fitted to ln(T_tr - T_rot) over
 *      the measured collisions (weighted least squares) must match within 3% (its statistical
 *      sd at N = 4e4 is 0.7%, from the spread over seeds 1-6 and 7 of all four cases), every
 *      snapshot (while d > d0/10) must lie within 0.02 d0 of the exponential (5 sd of one
 *      snapshot, printed), and T_tr, T_rot must end at T_eq within 2% (after more than 4
 *      e-foldings).
 *  (d) diffuse walls give reflected molecules rotational energies with mean k T_wall, and
 *      molecules entering through an inflow side have T_rot = the freestream T (5 sd). */
#include "test_dsmc_util.h"

static const unsigned COLLIDE_ONLY =
    KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);

static const char *scheme_name(kedr_dsmc_scheme s)
{
    return s == KEDR_DSMC_MFS ? "MFS" : "NTC";
}

/* <sigma g> at equilibrium for one species (Bird 1994 eq. 4.64 divided by n). */
static double sigma_g_mean(const kedr_dsmc_species *s, double temperature)
{
    double mr = s->mass / 2;
    return 2 * sqrt(M_PI) * s->d_ref * s->d_ref * sqrt(2 * K_B * temperature / mr) *
           pow(temperature / s->t_ref, 0.5 - s->omega);
}

/* A closed box of N2 (zeta rotational degrees of freedom) at temperature t, dt = 0.2 mean
 * collision times. */
static kedr_dsmc_case rot_box(int zeta, kedr_dsmc_scheme scheme, double t, int nx, double ppc)
{
    const double n = 1e20;
    /* quick: a quarter of the molecules in every case; the bounds that follow N (k sd of a
     * snapshot) follow it by themselves, the fixed ones widen by dt_widen(4) */
    if (tu_quick())
        ppc /= 4;
    kedr_dsmc_case c = dt_box(1.0, nx, n, t, ppc, 1);
    c.species[0] = dt_nitrogen();
    c.species[0].rot_dof = zeta;
    c.scheme = scheme;
    c.dt = 0.2 / (n * sigma_g_mean(&c.species[0], t));
    return c;
}

/* Sets every rotational energy to 0 (T_rot = 0). */
static void zero_rotation(kedr_dsmc *sim)
{
    dt_particles p = dt_get(sim);
    TU_OK(kedr_dsmc_set_particles(sim, p.n, p.x, p.y, p.vx, p.vy, p.vz, NULL, p.sp));
    dt_free(&p);
}

static void test_conservation(kedr_ctx *ctx, int zeta, kedr_dsmc_scheme scheme)
{
    kedr_dsmc_case c = rot_box(zeta, scheme, 400, 8, 80);
    c.velocity[2] = 60;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    zero_rotation(sim);
    dt_particles p0 = dt_get(sim);
    double m0[3], e0, scale;
    dt_totals(&c, &p0, m0, &e0, &scale);
    for (int s = 0; s < 30; s++)
        TU_OK(kedr_dsmc_step(sim));
    dt_particles p1 = dt_get(sim);
    double m1[3], e1, scale1;
    dt_totals(&c, &p1, m1, &e1, &scale1);
    double t_rot = dt_temperature_rot(zeta, &p1);
    TU_CHECK(p1.n == p0.n, "zeta %d %s: count %zu -> %zu", zeta, scheme_name(scheme), p0.n, p1.n);
    TU_CHECK(fabs(e1 - e0) <= 1e-12 * e0, "zeta %d %s: energy %.17g -> %.17g (rel %.3g)", zeta,
             scheme_name(scheme), e0, e1, (e1 - e0) / e0);
    TU_CHECK(fabs(m1[2] - m0[2]) <= 1e-12 * scale, "zeta %d %s: z momentum %.17g -> %.17g", zeta,
             scheme_name(scheme), m0[2], m1[2]);
    /* About six collisions per molecule: T_rot has come a good part of the way from 0. */
    TU_CHECK(t_rot > 100, "zeta %d %s: T_rot only %.1f K: no exchange?", zeta, scheme_name(scheme),
             t_rot);
    printf("  conservation zeta %d %s: %zu particles, energy rel. change %.2e, T_rot 0 -> %.1f K\n",
           zeta, scheme_name(scheme), p1.n, (e1 - e0) / e0, t_rot);
    dt_free(&p0);
    dt_free(&p1);
    kedr_dsmc_destroy(sim);
}

/* The temperature all modes share once the total energy is equipartitioned. */
static double t_equilibrium(const kedr_dsmc_case *c, int zeta, const dt_particles *p)
{
    double t_tr = dt_temperature(c->species[0].mass, p), t_rot = dt_temperature_rot(zeta, p);
    return (3 * t_tr + zeta * t_rot) / (3 + zeta);
}

static void test_equilibrium(kedr_ctx *ctx, int zeta, kedr_dsmc_scheme scheme)
{
    const double temperature = 350;
    kedr_dsmc_case c = rot_box(zeta, scheme, temperature, 10, 200);
    c.sample_start = 50;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    dt_particles p0 = dt_get(sim);
    double t_eq = t_equilibrium(&c, zeta, &p0), n = (double)p0.n;
    TU_CHECK(fabs(t_eq / temperature - 1) < 5 * sqrt(2 / ((3.0 + zeta) * n)),
             "fill: T_eq %.3f, set %.1f", t_eq, temperature);
    TU_CHECK(fabs(dt_temperature_rot(zeta, &p0) / temperature - 1) < 5 * sqrt(2 / (zeta * n)),
             "fill: T_rot %.3f, set %.1f", dt_temperature_rot(zeta, &p0), temperature);
    for (int s = 0; s < 100; s++) /* 20 mean collision times */
        TU_OK(kedr_dsmc_step_stages(sim, COLLIDE_ONLY | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_SAMPLE)));
    dt_particles p = dt_get(sim);
    double t_tr = dt_temperature(c.species[0].mass, &p), t_rot = dt_temperature_rot(zeta, &p);
    double sd_tr = t_eq * sqrt(2 / (3 * n)), sd_rot = t_eq * sqrt(2 / (zeta * n));
    printf("  equilibrium zeta %d %s: T_eq %.2f K, T_tr %.2f (+- %.2f), T_rot %.2f (+- %.2f)\n",
           zeta, scheme_name(scheme), t_eq, t_tr, sd_tr, t_rot, sd_rot);
    TU_CHECK(fabs(t_tr - t_eq) < 5 * sd_tr, "zeta %d %s: T_tr %.3f, T_eq %.3f +- %.3f", zeta,
             scheme_name(scheme), t_tr, t_eq, sd_tr);
    TU_CHECK(fabs(t_rot - t_eq) < 5 * sd_rot, "zeta %d %s: T_rot %.3f, T_eq %.3f +- %.3f", zeta,
             scheme_name(scheme), t_rot, t_eq, sd_rot);
    if (zeta == 2) {
        double above = 0, q = exp(-1.0);
        for (size_t i = 0; i < p.n; i++)
            above += (double)p.erot[i] > K_B * t_eq;
        above /= n;
        TU_CHECK(fabs(above - q) < 5 * sqrt(q * (1 - q) / n),
                 "%s: fraction with e_rot > kT %.5f, expected %.5f", scheme_name(scheme), above, q);
    }
    kedr_dsmc_fields f;
    TU_OK(kedr_dsmc_get_fields(sim, &f));
    double sum_rot = 0, count = 0;
    int bad = 0;
    for (int k = 0; k < f.nx * f.ny; k++) {
        sum_rot += f.temperature_rot[k] * f.particles[k];
        count += f.particles[k];
        double overall = (3 * f.temperature[k] + zeta * f.temperature_rot[k]) / (3 + zeta);
        bad += fabs(f.temperature_overall[k] - overall) > 1e-9 * overall;
    }
    TU_CHECK(f.samples == 51 && bad == 0, "fields: %lld samples, %d cells with a wrong T_overall",
             (long long)f.samples, bad);
    /* Time-averaged over 51 snapshots: at least as close as one. */
    TU_CHECK(fabs(sum_rot / count - t_eq) < 5 * sd_rot, "fields: T_rot %.3f, T_eq %.3f",
             sum_rot / count, t_eq);
    /* Mean free path over the cell side: the VHS value (Bird 1994 eq. 4.65) at each cell's
     * density and temperature, and on average the value at the box's density and T_eq. */
    const kedr_dsmc_species *sp = &c.species[0];
    double side = 1.0 / c.nx, wrong = 0, sum_ratio = 0;
    for (int k = 0; k < f.nx * f.ny; k++) {
        double lam = 1 / (sqrt(2.0) * M_PI * sp->d_ref * sp->d_ref * f.number_density[k] *
                          pow(sp->t_ref / f.temperature[k], sp->omega - 0.5));
        wrong += fabs(f.mfp_ratio[k] - lam / side) > 1e-9 * lam / side;
        sum_ratio += f.mfp_ratio[k];
    }
    double lam_eq = 1 / (sqrt(2.0) * M_PI * sp->d_ref * sp->d_ref * c.number_density *
                         pow(sp->t_ref / t_eq, sp->omega - 0.5));
    double ratio_mean = sum_ratio / (f.nx * f.ny);
    TU_CHECK(wrong == 0 && fabs(ratio_mean * side / lam_eq - 1) < 0.03,
             "fields: %g cells with a wrong mfp_ratio; mean %.4f, expected about %.4f", wrong,
             ratio_mean, lam_eq / side);
    kedr_dsmc_fields_free(&f);
    dt_free(&p0);
    dt_free(&p);
    kedr_dsmc_destroy(sim);
}

static void test_relaxation(kedr_ctx *ctx, int zeta, kedr_dsmc_scheme scheme)
{
    const double temperature = 500;
    kedr_dsmc_case c = rot_box(zeta, scheme, temperature, 20, 100);
    c.dt *= 2.5; /* half a mean collision time at the start: the exponential is in collisions */
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    zero_rotation(sim);
    const kedr_dsmc_species *sp = &c.species[0];
    double pr = 1 / sp->z_rot, a = zeta / 2.0, b = 2.5 - sp->omega;
    double k = pr * b / (a + b) * (1 - pr * a / (2 * (a + b))), w = dt_widen(4);
    double rate = (1 + zeta / 3.0) * k; /* per collision per molecule */
    dt_particles p = dt_get(sim);
    double n = (double)p.n, t_eq = t_equilibrium(&c, zeta, &p);
    double d0 = dt_temperature(sp->mass, &p) - dt_temperature_rot(zeta, &p);
    dt_free(&p);
    /* Least-squares slope of ln(d / d0) against c through the origin, while d / d0 > 0.1,
     * weighted by (d / d0)^2: the variance of ln d is about var(d) / d^2. */
    double coll = 0, sxy = 0, sxx = 0, worst = 0;
    for (int s = 1; s <= 50; s++) {
        TU_OK(kedr_dsmc_step(sim));
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        coll += 2.0 * (double)st.collisions / n;
        if (s % 5)
            continue;
        p = dt_get(sim);
        double d = dt_temperature(sp->mass, &p) - dt_temperature_rot(zeta, &p);
        if (d / d0 > 0.1) {
            double y = log(d / d0), w = (d / d0) * (d / d0);
            sxy += w * coll * y;
            sxx += w * coll * coll;
            double dev = fabs(d / d0 - exp(-rate * coll));
            worst = dev > worst ? dev : worst;
        }
        dt_free(&p);
    }
    double fitted = -sxy / sxx;
    p = dt_get(sim);
    double t_tr = dt_temperature(sp->mass, &p), t_rot = dt_temperature_rot(zeta, &p);
    /* One snapshot's d has sd T_eq sqrt(2/3N + 2/(zeta N)), 0.4% of d0 here. */
    double sd_d = t_eq * sqrt(2 / (3 * n) + 2 / (zeta * n));
    printf("  relaxation zeta %d %s: %.1f collisions per molecule, rate %.5f vs %.5f "
           "(ratio %.4f), max |d/d0 - exp| %.4f (sd %.4f), end T_tr %.2f T_rot %.2f T_eq %.2f\n",
           zeta, scheme_name(scheme), coll, fitted, rate, fitted / rate, worst, sd_d / d0, t_tr,
           t_rot, t_eq);
    TU_CHECK(fabs(fitted / rate - 1) < 0.03 * w, "zeta %d %s: rate %.5f, expected %.5f", zeta,
             scheme_name(scheme), fitted, rate);
    TU_CHECK(worst < 0.02 * w, "zeta %d %s: a snapshot is %.4f d0 from the exponential", zeta,
             scheme_name(scheme), worst);
    TU_CHECK(fabs(t_tr / t_eq - 1) < 0.02 * w && fabs(t_rot / t_eq - 1) < 0.02 * w,
             "zeta %d %s: end T_tr %.2f, T_rot %.2f, T_eq %.2f", zeta, scheme_name(scheme), t_tr,
             t_rot, t_eq);
    TU_CHECK(coll * rate > 4, "too few collisions (%.1f per molecule)", coll);
    dt_free(&p);
    kedr_dsmc_destroy(sim);
}

/* Diffuse walls give reflected molecules rotational energy at the wall temperature, and the
 * translational temperature of a monatomic gas is untouched by the exchange. */
static void test_wall(kedr_ctx *ctx)
{
    /* A collisionless gas at T_rot = 0 between two diffuse plates near the sides: after many
     * reflections the molecules that hit a plate carry e_rot with mean k T_wall. */
    kedr_dsmc_case c = rot_box(2, KEDR_DSMC_NTC, 300, 4, 500);
    c.species[0].d_ref = 1e-16; /* no collisions in practice */
    c.wall_temperature = 900;
    c.nsegments = 2;
    double seg[2][4] = {{0.01, 0.0, 0.01, 1.0}, {0.99, 0.0, 0.99, 1.0}};
    memcpy(c.segment, seg, sizeof seg);
    c.dt = 0.25 / sqrt(K_B * 300 / c.species[0].mass); /* a few crossings of the box */
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    zero_rotation(sim);
    for (int s = 0; s < 40; s++)
        TU_OK(kedr_dsmc_step(sim));
    dt_particles p = dt_get(sim);
    double sum = 0, hit = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.erot[i] > 0) {
            sum += (double)p.erot[i];
            hit++;
        }
    double mean = sum / hit / K_B, sd = 900 / sqrt(hit);
    printf("  diffuse wall: %.0f of %zu molecules reflected, mean e_rot / k %.1f K (wall 900 +- "
           "%.1f)\n", hit, p.n, mean, sd);
    TU_CHECK(hit > 0.9 * (double)p.n && fabs(mean - 900) < 5 * sd,
             "wall: %.0f of %zu reflected, mean e_rot/k %.2f K", hit, p.n, mean);
    dt_free(&p);
    kedr_dsmc_destroy(sim);
}

/* Molecules entering through an inflow side carry rotational energies from the equilibrium at
 * the freestream temperature (the flux weighting applies to the normal velocity only). */
static void test_inflow(kedr_ctx *ctx, int zeta)
{
    kedr_dsmc_case c = rot_box(zeta, KEDR_DSMC_NTC, 250, 4, 1000);
    c.species[0].d_ref = 1e-16; /* no collisions in practice */
    c.side[KEDR_DSMC_XMIN] = KEDR_DSMC_INFLOW;
    c.side[KEDR_DSMC_XMAX] = KEDR_DSMC_OUTFLOW;
    c.velocity[0] = 400;
    c.fill = 0;
    c.dt = 0.05 / 400;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    for (int s = 0; s < 20; s++)
        TU_OK(kedr_dsmc_step(sim));
    dt_particles p = dt_get(sim);
    double t_rot = dt_temperature_rot(zeta, &p), sd = 250 * sqrt(2 / (zeta * (double)p.n));
    printf("  inflow zeta %d: %zu molecules entered, T_rot %.2f K (freestream 250 +- %.2f)\n",
           zeta, p.n, t_rot, sd);
    TU_CHECK(p.n > tu_scale(5000, 1250) && fabs(t_rot - 250) < 5 * sd,
             "inflow zeta %d: %zu molecules, T_rot %.3f", zeta, p.n, t_rot);
    dt_free(&p);
    kedr_dsmc_destroy(sim);
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        printf("back end: %s\n", kedr_backend_name(list[b]));
        for (int s = 0; s < 2; s++) {
            kedr_dsmc_scheme scheme = s ? KEDR_DSMC_MFS : KEDR_DSMC_NTC;
            for (int zeta = 2; zeta <= 3; zeta++) {
                test_conservation(ctx, zeta, scheme);
                test_equilibrium(ctx, zeta, scheme);
                test_relaxation(ctx, zeta, scheme);
            }
        }
        test_wall(ctx);
        test_inflow(ctx, 2);
        test_inflow(ctx, 3);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_dsmc_rotation");
}
