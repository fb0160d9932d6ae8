/* Vibrating nitrogen in kedr dsmc (quantised harmonic oscillator, Larsen-Borgnakke exchange), on
 * every back end:
 *  (a) equilibrium: a closed specular box filled with T_vib far below T reaches one temperature
 *      T_eq, the root of the conserved energy per molecule
 *          E / N = (3/2 + 1) k T + k theta / (exp(theta / T) - 1)
 *      (translation, two rotational degrees of freedom, the oscillator): T_tr, T_rot and T_vib of
 *      the molecules, the mean vibrational energy against the oscillator's, and the populations
 *      of levels 0 to 3 against (1 - x) x^i, x = exp(-theta / T_eq), each within 5 standard
 *      errors of a snapshot; the total energy is conserved to 1e-12 over the run; the stats'
 *      T_vib is the oscillator temperature of the levels (1e-12), the sampled fields' T_vib
 *      is T_eq on average, and T_overall weighs the three modes; in a mixture of N2, O2 and
 *      argon each vibrating species' mean level is its oscillator's at the mixture's T_eq
 *      (5 standard errors) and argon keeps none;
 *  (b) relaxation against Landau-Teller: the same box at T = 8000 K from T_vib = 100 K with a
 *      constant Z_vib = 8 (Z_rot = 1, so that T_rot follows T_tr). Landau-Teller,
 *          d E_v / dc = (E_v*(T_tr) - E_v) / Z_LT   per collision c of a molecule,
 *      is integrated along the measured collisions with T_tr from the conserved energy. Z_LT is
 *      the model's own: Z_vib over the fraction of its distance to equilibrium that a selected
 *      molecule's mean level moves, computed here from the quantised exchange's distribution
 *      (an integral over the colliding pairs' energies, z_landau_teller), times the serial
 *      selection's correction; at T_eq = 6174 K it is 1.59 Z_vib (the continuous-limit
 *      estimate Z_vib (1 + zeta_v / zeta_t) of Lumpkin, Haas & Boyd (1991) would say 1.43).
 *      E_v must stay within 2.5% (largest) and 1% (rms) of (E_v* - E_v0) from the curve: a
 *      snapshot's statistical sd is 0.7% of it at N = 4e4 (printed); measured 1.2% and 0.5%.
 *      The curves of 0.9 Z_LT and 1.1 Z_LT must fit at least 1.5 times worse (rms; measured
 *      4.4 and 5.3 times). Under KEDR_TEST_QUICK (a quarter of the molecules) the bounds
 *      double;
 *  (c) walls and inflow: a collisionless gas between two diffuse plates at 3000 K leaves them
 *      with levels of mean x / (1 - x) at the wall temperature, and so does a diffuse sphere in
 *      3D and in the axisymmetric mode (radial weighting), and molecules entering through
 *      an inflow side at [freestream] T_vib = 2000 K (T = 300 K) carry that one (5 standard
 *      errors);
 *  (d) checkpoints: 10 steps, a checkpoint and 10 more give, after a restart and 10 steps, the
 *      same particles (levels included), fields and stats bit for bit, in a channel with inflow
 *      at T_vib != T, a diffuse plate and Millikan-White Z_vib;
 *  (e) kedr_dsmc_set_vib_levels refuses a level for a species that does not vibrate, and the
 *      level API refuses a gas that does not vibrate. */
#include "validation/test_dsmc_util.h"

#include <unistd.h>

static const unsigned COLLIDE_ONLY =
    KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
static const double THETA = 3371; /* N2, Bird 1994 */

static kedr_dsmc_species vib_n2(double z_vib, double z_rot)
{
    kedr_dsmc_species s = dt_nitrogen();
    s.z_rot = z_rot;
    s.theta_v = THETA;
    s.z_vib = z_vib;
    return s;
}

/* <sigma g> at equilibrium for one species (Bird 1994 eq. 4.64 divided by n). */
static double sigma_g_mean(const kedr_dsmc_species *s, double temperature)
{
    double mr = s->mass / 2;
    return 2 * sqrt(M_PI) * s->d_ref * s->d_ref * sqrt(2 * K_B * temperature / mr) *
           pow(temperature / s->t_ref, 0.5 - s->omega);
}

/* The oscillator's mean energy over k theta at T, and its inverse. */
static double sho_level(double t) { return 1 / expm1(THETA / t); }
static double sho_temperature(double level) { return THETA / log1p(1 / level); }

/* A closed box of vibrating N2 at T (vibration at tv), dt = 0.2 mean collision times at T. */
static kedr_dsmc_case vib_box(double t, double tv, double z_vib, double z_rot, int nx, double ppc)
{
    const double n = 1e20;
    if (tu_quick())
        ppc /= 4;
    kedr_dsmc_case c = dt_box(1.0, nx, n, t, ppc, 1);
    c.species[0] = vib_n2(z_vib, z_rot);
    c.temperature_vib = tv;
    c.dt = 0.2 / (n * sigma_g_mean(&c.species[0], t));
    return c;
}

typedef struct {
    double n, t_tr, t_rot, level, energy; /* energy per molecule, J */
    double pop[4];
} vib_state;

static vib_state state_of(kedr_dsmc *sim, const kedr_dsmc_case *c)
{
    dt_particles p = dt_get(sim);
    vib_state s;
    memset(&s, 0, sizeof s);
    size_t n = 0;
    uint8_t *lv = tu_host_alloc(p.n ? p.n : 1);
    TU_OK(kedr_dsmc_get_vib_levels(sim, p.n, &n, lv));
    double mom[3], e, scale, sum = 0;
    dt_totals(c, &p, mom, &e, &scale);
    for (size_t i = 0; i < p.n; i++) {
        sum += lv[i];
        if (lv[i] < 4)
            s.pop[lv[i]]++;
    }
    s.n = (double)p.n;
    s.t_tr = dt_temperature(c->species[0].mass, &p);
    s.t_rot = dt_temperature_rot(2, &p);
    s.level = sum / s.n;
    s.energy = (e + sum * K_B * THETA) / s.n;
    for (int i = 0; i < 4; i++)
        s.pop[i] /= s.n;
    free(lv);
    dt_free(&p);
    return s;
}

/* The temperature at which the three modes hold energy e per molecule (bisection). */
static double t_equilibrium(double e)
{
    double lo = 1, hi = 1e6;
    for (int k = 0; k < 200; k++) {
        double t = 0.5 * (lo + hi), f = 2.5 * K_B * t + K_B * THETA * sho_level(t);
        if (f > e)
            hi = t;
        else
            lo = t;
    }
    return 0.5 * (lo + hi);
}

static void test_equilibrium(kedr_ctx *ctx)
{
    kedr_dsmc_case c = vib_box(4000, 800, 5, 5, 10, 400);
    c.sample_start = 300;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    vib_state s0 = state_of(sim, &c);
    double t_eq = t_equilibrium(s0.energy);
    for (int s = 0; s < 350; s++) /* about 70 collisions a molecule */
        TU_OK(kedr_dsmc_step_stages(sim, COLLIDE_ONLY | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_SAMPLE)));
    vib_state s1 = state_of(sim, &c);
    double n = s1.n, x = exp(-THETA / t_eq), lq = x / (1 - x);
    double sd_tr = t_eq * sqrt(2 / (3 * n)), sd_rot = t_eq * sqrt(2 / (2 * n));
    double sd_level = sqrt(x) / (1 - x) / sqrt(n);
    double t_vib = sho_temperature(s1.level);
    printf("  equilibrium: T_eq %.2f K (fill T 4000, T_vib 800, T_vib then %.1f); T_tr %.2f "
           "(+- %.2f), T_rot %.2f (+- %.2f), T_vib %.2f; level %.5f (SHO %.5f +- %.5f); energy "
           "rel. change %.2e\n", t_eq, sho_temperature(s0.level), s1.t_tr, sd_tr, s1.t_rot,
           sd_rot, t_vib, s1.level, lq, sd_level, s1.energy / s0.energy - 1);
    TU_CHECK(fabs(s1.energy / s0.energy - 1) < 1e-12, "energy %.17g -> %.17g", s0.energy,
             s1.energy);
    TU_CHECK(fabs(s1.t_tr - t_eq) < 5 * sd_tr && fabs(s1.t_rot - t_eq) < 5 * sd_rot,
             "T_tr %.2f, T_rot %.2f, T_eq %.2f", s1.t_tr, s1.t_rot, t_eq);
    TU_CHECK(fabs(s1.level - lq) < 5 * sd_level, "mean level %.5f, SHO %.5f +- %.5f", s1.level,
             lq, sd_level);
    for (int i = 0; i < 4; i++) {
        double pe = (1 - x) * pow(x, i), se = sqrt(pe * (1 - pe) / n);
        TU_CHECK(fabs(s1.pop[i] - pe) < 5 * se, "level %d: %.5f of the molecules, Boltzmann "
                 "%.5f +- %.5f", i, s1.pop[i], pe, se);
    }
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    TU_CHECK(fabs(st.temperature_vib / t_vib - 1) < 1e-12 &&
             fabs(st.vib_energy / (s1.level * K_B * THETA) - 1) < 1e-12,
             "stats T_vib %.6f, from the levels %.6f", st.temperature_vib, t_vib);
    kedr_dsmc_fields f;
    TU_OK(kedr_dsmc_get_fields(sim, &f));
    double sum = 0, cnt = 0;
    int bad = 0;
    for (int k = 0; k < f.nx * f.ny; k++) {
        sum += f.temperature_vib[k] * f.particles[k];
        cnt += f.particles[k];
        /* T_overall: the modes weighed by their degrees of freedom */
        double zv = 2 * sho_level(f.temperature_vib[k]) * THETA / f.temperature_vib[k];
        double ov = (3 * f.temperature[k] + 2 * f.temperature_rot[k] +
                     zv * f.temperature_vib[k]) / (5 + zv);
        bad += !(fabs(f.temperature_overall[k] / ov - 1) < 1e-6);
    }
    double sd_tv = sd_level * t_eq * t_eq / THETA / (x / ((1 - x) * (1 - x)));
    printf("  fields: %lld samples, mean T_vib %.2f K (T_eq %.2f +- %.2f)\n", (long long)f.samples,
           sum / cnt, t_eq, sd_tv);
    TU_CHECK(f.samples == 51 && bad == 0 && fabs(sum / cnt - t_eq) < 5 * sd_tv,
             "fields: %lld samples, %d cells with a wrong T_overall, T_vib %.2f (T_eq %.2f)",
             (long long)f.samples, bad, sum / cnt, t_eq);
    kedr_dsmc_fields_free(&f);
    kedr_dsmc_destroy(sim);
}

/* (a) in a mixture: N2 (Z_vib 5) and O2 (theta_v 2256 K, Z_vib 3) with argon, from
 * T = 5000 K and T_vib = 500 K, reach one T_eq, the root of
 *     E / N = 3/2 k T + sum_k x_k (zeta_k / 2 k T + k theta_k / (exp(theta_k / T) - 1)),
 * each species' mean level the oscillator's at T_eq (5 standard errors). */
static void test_mixture(kedr_ctx *ctx)
{
    const double th[2] = {THETA, 2256};
    kedr_dsmc_case c = vib_box(5000, 500, 5, 5, 10, 300);
    c.nspecies = 3;
    c.species[1] = c.species[0];
    snprintf(c.species[1].name, sizeof c.species[1].name, "O2");
    c.species[1].mass = 53.12e-27;
    c.species[1].d_ref = 4.07e-10;
    c.species[1].omega = 0.77;
    c.species[1].theta_v = th[1];
    c.species[1].z_vib = 3; /* Millikan-White's would take ~1000 collisions at 4000 K */
    c.species[2] = (kedr_dsmc_species){
        "Ar", 66.3e-27, 4.17e-10, 0.81, 273, 1.0, 4.17e-10, 0, 1, 0, 0, 0, 0};
    c.fraction[0] = 0.5, c.fraction[1] = 0.3, c.fraction[2] = 0.2;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    for (int s = 0; s < 300; s++)
        TU_OK(kedr_dsmc_step_stages(sim, COLLIDE_ONLY));
    dt_particles p = dt_get(sim);
    size_t n = 0;
    uint8_t *lv = tu_host_alloc(p.n);
    TU_OK(kedr_dsmc_get_vib_levels(sim, p.n, &n, lv));
    double mom[3], e, scale, count[3] = {0, 0, 0}, levels[3] = {0, 0, 0};
    dt_totals(&c, &p, mom, &e, &scale);
    for (size_t i = 0; i < p.n; i++) {
        count[p.sp[i]]++;
        levels[p.sp[i]] += lv[i];
    }
    TU_CHECK(levels[2] == 0, "argon holds %.0f vibrational quanta", levels[2]);
    e += (levels[0] * th[0] + levels[1] * th[1]) * K_B;
    double lo = 1, hi = 1e5, t = 0;
    for (int k = 0; k < 200; k++) { /* the energy at T is increasing in T */
        t = 0.5 * (lo + hi);
        double f = (1.5 * (double)p.n + count[0] + count[1]) * K_B * t;
        for (int q = 0; q < 2; q++)
            f += count[q] * K_B * th[q] / expm1(th[q] / t);
        if (f > e)
            hi = t;
        else
            lo = t;
    }
    for (int q = 0; q < 2; q++) {
        double x = exp(-th[q] / t), lq = x / (1 - x), mean = levels[q] / count[q];
        double sd = sqrt(x) / (1 - x) / sqrt(count[q]);
        printf("  mixture: %s (%.0f molecules) mean level %.5f, SHO at T_eq %.1f K %.5f +- %.5f\n",
               q ? "O2" : "N2", count[q], mean, t, lq, sd);
        TU_CHECK(fabs(mean - lq) < 5 * sd, "%s: mean level %.5f, expected %.5f +- %.5f",
                 q ? "O2" : "N2", mean, lq, sd);
    }
    free(lv);
    dt_free(&p);
    kedr_dsmc_destroy(sim);
}

/* The mean level after one quantised Larsen-Borgnakke exchange (dsmc_vib_one) of a molecule
 * whose level is drawn from the oscillator's equilibrium at tv and whose pair's translational
 * energy from that of colliding VHS pairs at t, a Gamma(b) deviate times k t (b = 5/2 - omega):
 * the level j <= E_c / k theta with weight (E_c - j k theta)^(b - 1), integrated by the midpoint
 * rule over E_t (600 points up to 30 k t) and summed over the levels. */
static double level_after(double t, double tv, double b)
{
    const int n = 600;
    const double smax = 30, h = smax / n, x = exp(-THETA / tv);
    double total = 0;
    for (int i = 0; i < 400; i++) {
        double pi = (1 - x) * pow(x, i);
        if (pi < 1e-12)
            break;
        double acc = 0;
        for (int k = 0; k < n; k++) {
            double s = (k + 0.5) * h, ec = s * t / THETA + i, num = 0, den = 0;
            for (int j = 0; j <= (int)ec; j++) {
                double w = pow(ec - j, b - 1);
                num += j * w;
                den += w;
            }
            acc += pow(s, b - 1) * exp(-s) * num / den;
        }
        total += pi * acc * h / tgamma(b);
    }
    return total;
}

/* The relaxation number of Landau-Teller that the exchange gives near equilibrium at t: a
 * selected molecule's mean level moves by (1 - dL/dl) of its distance to equilibrium, L the mean
 * level after the exchange (level_after) and l before it, so that Z_LT = Z_vib / (1 - dL/dl);
 * the serial selection (the second molecule meets the translational energy the first left) lowers
 * the rate by 1 - (1 - (1 - dL/dl)) / (2 Z_vib), as for rotation (docs/dsmc.md). In the
 * continuous limit 1 - dL/dl is b / (1 + b), the factor of Lumpkin, Haas & Boyd (1991) for two
 * vibrational degrees of freedom. */
static double z_landau_teller(double z_vib, double t, double b)
{
    double h = 0.03 * t;
    double d = (level_after(t, t + h, b) - level_after(t, t - h, b)) /
               (sho_level(t + h) - sho_level(t - h));
    double k = 1 - d;
    return z_vib / (k * (1 - (1 - k) / (2 * z_vib)));
}

/* Landau-Teller's d E_v / dc at vibrational energy ev per molecule, the rest of the energy e
 * in translation and rotation at one temperature. */
static double lt_rate(double e, double ev, double z_lt)
{
    double t = (e - ev) / (2.5 * K_B);
    return (sho_level(t) * K_B * THETA - ev) / z_lt;
}

static void test_relaxation(kedr_ctx *ctx)
{
    const double z_vib = 8, t0 = 8000;
    kedr_dsmc_case c = vib_box(t0, 100, z_vib, 1, 20, 100);
    c.dt *= 2.5; /* half a mean collision time */
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    vib_state s0 = state_of(sim, &c);
    double e = s0.energy, t_eq = t_equilibrium(e), y = THETA / t_eq;
    double zeta_v = 2 * y / expm1(y), b = 2.5 - c.species[0].omega;
    double z_lt = z_landau_teller(z_vib, t_eq, b), q = K_B * THETA;
    /* Landau-Teller along the collisions: E_v and T_tr (= T_rot) from the energy left */
    double ev_inf = sho_level(t_eq) * q, span = ev_inf - s0.level * q;
    /* the curve of Z_LT, and those of 0.9 and 1.1 Z_LT (which the run must tell apart) */
    const double factor[3] = {1.0, 0.9, 1.1};
    double ev3[3] = {s0.level * q, s0.level * q, s0.level * q}, gap[3] = {0, 0, 0};
    double rms[3] = {0, 0, 0};
    int snaps = 0;
    double coll = 0, worst = 0;
    const int substeps = 20;
    for (int s = 1; s <= 100; s++) {
        TU_OK(kedr_dsmc_step_stages(sim, COLLIDE_ONLY));
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        double dc = 2.0 * (double)st.collisions / s0.n;
        for (int m = 0; m < 3; m++)
            for (int k = 0; k < substeps; k++) { /* midpoint rule */
                double z = z_lt * factor[m], h = dc / substeps;
                double mid = ev3[m] + 0.5 * h * lt_rate(e, ev3[m], z);
                ev3[m] += h * lt_rate(e, mid, z);
            }
        coll += dc;
        for (int m = 0; m < 3; m++) {
            double dev = fabs(st.vib_energy - ev3[m]) / span;
            gap[m] = dev > gap[m] ? dev : gap[m];
            rms[m] += dev * dev;
        }
        snaps++;
    }
    for (int m = 0; m < 3; m++)
        rms[m] = sqrt(rms[m] / snaps);
    worst = gap[0];
    vib_state s1 = state_of(sim, &c);
    double sd = sqrt(sho_level(t_eq) * (1 + sho_level(t_eq)) / s0.n) * q / span;
    printf("  relaxation: T 8000 K, T_vib 100 K -> T_eq %.1f K after %.1f collisions a "
           "molecule; Z_LT = %.3f Z_vib (continuous limit with zeta_v(T_eq) = %.3f: %.3f); gap "
           "to Landau-Teller: largest %.4f, rms %.4f of the change (0.9 Z_LT: %.4f, %.4f; 1.1 "
           "Z_LT: %.4f, %.4f; a snapshot's sd %.4f); end T_tr %.1f, T_vib %.1f\n", t_eq, coll,
           z_lt / z_vib, zeta_v, 1 + zeta_v / (2 * b), worst, rms[0], gap[1], rms[1], gap[2],
           rms[2], sd, s1.t_tr, sho_temperature(s1.level));
    double w = dt_widen(4); /* quick: a quarter of the molecules, twice the noise */
    TU_CHECK(worst < 0.025 * w && rms[0] < 0.01 * w, "E_v strays %.4f (rms %.4f) of its change "
             "from Landau-Teller", worst, rms[0]);
    TU_CHECK(rms[1] > 1.5 * rms[0] && rms[2] > 1.5 * rms[0], "0.9 Z_LT (rms %.4f) or 1.1 Z_LT "
             "(%.4f) fits as well as Z_LT (%.4f)", rms[1], rms[2], rms[0]);
    TU_CHECK(coll > 3 * z_lt, "too few collisions (%.1f a molecule)", coll);
    kedr_dsmc_destroy(sim);
}

/* (c) diffuse walls and inflow */
static void test_wall_inflow(kedr_ctx *ctx)
{
    kedr_dsmc_case c = vib_box(300, 300, 5, 5, 4, 500);
    c.species[0].d_ref = 1e-16; /* no collisions in practice */
    c.wall_temperature = 3000;
    c.nsegments = 2;
    double seg[2][4] = {{0.01, 0.0, 0.01, 1.0}, {0.99, 0.0, 0.99, 1.0}};
    memcpy(c.segment, seg, sizeof seg);
    c.dt = 0.25 / sqrt(K_B * 300 / c.species[0].mass);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    dt_particles p = dt_get(sim); /* no rotational energy and level 0 until a wall is hit */
    TU_OK(kedr_dsmc_set_particles(sim, p.n, p.x, p.y, p.vx, p.vy, p.vz, NULL, p.sp));
    dt_free(&p);
    for (int s = 0; s < 40; s++)
        TU_OK(kedr_dsmc_step(sim));
    p = dt_get(sim);
    size_t n = 0;
    uint8_t *lv = tu_host_alloc(p.n);
    TU_OK(kedr_dsmc_get_vib_levels(sim, p.n, &n, lv));
    /* molecules reflected at least once carry a rotational energy from 3000 K: nearly all */
    double sum = 0, hit = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.erot[i] > 0) {
            sum += lv[i];
            hit++;
        }
    double x = exp(-THETA / 3000), lq = x / (1 - x), sd = sqrt(x) / (1 - x) / sqrt(hit);
    printf("  diffuse wall: %.0f of %zu molecules reflected, mean level %.5f (SHO at 3000 K "
           "%.5f +- %.5f)\n", hit, p.n, sum / hit, lq, sd);
    TU_CHECK(hit > 0.9 * (double)p.n && fabs(sum / hit - lq) < 5 * sd,
             "wall: mean level %.5f, expected %.5f +- %.5f", sum / hit, lq, sd);
    free(lv);
    dt_free(&p);
    kedr_dsmc_destroy(sim);

    c = vib_box(300, 2000, 5, 5, 4, 1000);
    c.species[0].d_ref = 1e-16;
    c.side[KEDR_DSMC_XMIN] = KEDR_DSMC_INFLOW;
    c.side[KEDR_DSMC_XMAX] = KEDR_DSMC_OUTFLOW;
    c.velocity[0] = 400;
    c.fill = 0;
    c.dt = 0.05 / 400;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    for (int s = 0; s < 20; s++)
        TU_OK(kedr_dsmc_step(sim));
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    x = exp(-THETA / 2000);
    double level = st.vib_energy / (K_B * THETA);
    sd = sqrt(x) / (1 - x) / sqrt((double)st.particles);
    printf("  inflow: %zu molecules entered, mean level %.5f (SHO at T_vib 2000 K %.5f +- %.5f), "
           "stats T_vib %.1f K\n", st.particles, level, x / (1 - x), sd, st.temperature_vib);
    TU_CHECK(st.particles > tu_scale(5000, 1250) && fabs(level - x / (1 - x)) < 5 * sd,
             "inflow: mean level %.5f, expected %.5f +- %.5f", level, x / (1 - x), sd);
    kedr_dsmc_destroy(sim);
}

/* (c) the same diffuse wall as a 3D sphere and as an axisymmetric sphere (a circle on the axis,
 * radial weighting: clones keep their level) in a closed specular box of collisionless N2 */
static void test_wall_bodies(kedr_ctx *ctx)
{
    for (int mode = 0; mode < 2; mode++) {
        kedr_dsmc_case c = vib_box(300, 300, 5, 5, 6, 200);
        c.species[0].d_ref = 1e-16;
        c.wall_temperature = 3000;
        c.nbodies = 1;
        kedr_dsmc_body *b = &c.body[0];
        if (mode == 0) {
            c.dims = 3;
            c.hi[2] = 1.0;
            c.nz = 6;
            c.side[KEDR_DSMC_ZMIN] = c.side[KEDR_DSMC_ZMAX] = KEDR_DSMC_SPECULAR;
            c.weight = c.number_density * pow(1.0 / 6, 3) / tu_scale(40, 10);
            b->type = KEDR_DSMC_BODY_SPHERE;
            b->center[0] = b->center[1] = b->center[2] = 0.5;
        } else {
            c.axisymmetric = c.radial_weighting = 1;
            c.side[KEDR_DSMC_YMIN] = KEDR_DSMC_AXIS;
            c.weight = c.number_density * 2 * M_PI * (1.0 - 0.5 / 6) / 36 / tu_scale(200, 50);
            b->type = KEDR_DSMC_BODY_CIRCLE;
            b->center[0] = 0.5;
        }
        b->radius = 0.3;
        c.dt = 0.25 / sqrt(K_B * 300 / c.species[0].mass);
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        if (!sim)
            return;
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        size_t n = st.particles, m = 0;
        double *x = tu_host_alloc(n * 8), *y = tu_host_alloc(n * 8), *z = tu_host_alloc(n * 8);
        double *vx = tu_host_alloc(n * 8), *vy = tu_host_alloc(n * 8), *vz = tu_host_alloc(n * 8);
        TU_OK(kedr_dsmc_get_particles3(sim, n, &m, x, y, mode ? NULL : z, vx, vy, vz, NULL, NULL));
        /* no rotational energy and level 0 until the body is hit */
        TU_OK(kedr_dsmc_set_particles3(sim, n, x, y, mode ? NULL : z, vx, vy, vz, NULL, NULL));
        for (int s = 0; s < 40; s++)
            TU_OK(kedr_dsmc_step(sim));
        dt_particles p = dt_get(sim);
        uint8_t *lv = tu_host_alloc(p.n ? p.n : 1);
        TU_OK(kedr_dsmc_get_vib_levels(sim, p.n, &m, lv));
        double sum = 0, hit = 0;
        for (size_t i = 0; i < p.n; i++)
            if (p.erot[i] > 0) {
                sum += lv[i];
                hit++;
            }
        double x3 = exp(-THETA / 3000), lq = x3 / (1 - x3), sd = sqrt(x3) / (1 - x3) / sqrt(hit);
        printf("  diffuse %s: %.0f of %zu molecules reflected, mean level %.5f (SHO at 3000 K "
               "%.5f +- %.5f)\n", mode ? "axisymmetric sphere" : "3D sphere", hit, p.n, sum / hit,
               lq, sd);
        TU_CHECK(hit > 0.3 * (double)p.n && fabs(sum / hit - lq) < 5 * sd,
                 "%s: %.0f reflected, mean level %.5f, expected %.5f +- %.5f",
                 mode ? "axisymmetric" : "3D", hit, sum / hit, lq, sd);
        free(lv);
        dt_free(&p);
        free(x), free(y), free(z), free(vx), free(vy), free(vz);
        kedr_dsmc_destroy(sim);
    }
}

/* (d) checkpoint and restart */
typedef struct {
    dt_particles p;
    uint8_t *lv;
    kedr_dsmc_stats st;
    kedr_dsmc_fields f;
} snap;

static snap take(kedr_dsmc *sim)
{
    snap s;
    s.p = dt_get(sim);
    size_t n = 0;
    s.lv = tu_host_alloc(s.p.n ? s.p.n : 1);
    TU_OK(kedr_dsmc_get_vib_levels(sim, s.p.n, &n, s.lv));
    TU_OK(kedr_dsmc_get_stats(sim, &s.st));
    TU_OK(kedr_dsmc_get_fields(sim, &s.f));
    return s;
}

static int same_doubles(const double *a, const double *b, size_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

static void test_checkpoint(kedr_ctx *ctx)
{
    kedr_dsmc_case c = vib_box(1000, 2500, 0, 5, 12, 30);
    c.species[0].zv_c1 = 10.8; /* Millikan-White */
    c.species[0].zv_c2 = 217.8;
    c.side[KEDR_DSMC_XMIN] = KEDR_DSMC_INFLOW;
    c.side[KEDR_DSMC_XMAX] = KEDR_DSMC_OUTFLOW;
    c.velocity[0] = 3000;
    c.wall_temperature = 2000;
    c.nsegments = 1;
    double seg[4] = {0.5, 0.3, 0.5, 0.7};
    memcpy(c.segment[0], seg, sizeof seg);
    c.dt = 0.2 / 3000 / c.nx;
    c.sample_start = 5;
    char path[] = "/tmp/kedr_vib_chk_XXXXXX";
    int fd = mkstemp(path);
    TU_CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    close(fd);
    kedr_dsmc *a = NULL, *b = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &a));
    if (!a)
        return;
    for (int s = 0; s < 10; s++)
        TU_OK(kedr_dsmc_step(a));
    TU_OK(kedr_dsmc_write_checkpoint(a, path));
    for (int s = 0; s < 10; s++)
        TU_OK(kedr_dsmc_step(a));
    TU_OK(kedr_dsmc_restart(ctx, &c, path, &b));
    if (b)
        for (int s = 0; s < 10; s++)
            TU_OK(kedr_dsmc_step(b));
    if (b) {
        snap x = take(a), y = take(b);
        size_t n = x.p.n;
        int same = n == y.p.n && same_doubles(x.p.x, y.p.x, n) && same_doubles(x.p.y, y.p.y, n) &&
                   same_doubles(x.p.vx, y.p.vx, n) && same_doubles(x.p.vy, y.p.vy, n) &&
                   same_doubles(x.p.vz, y.p.vz, n) && !memcmp(x.p.erot, y.p.erot, n * 4) &&
                   !memcmp(x.lv, y.lv, n);
        size_t nc = (size_t)c.nx * c.ny;
        int fields = same_doubles(x.f.temperature_vib, y.f.temperature_vib, nc) &&
                     same_doubles(x.f.temperature_overall, y.f.temperature_overall, nc);
        double lsum = 0;
        for (size_t i = 0; i < n; i++)
            lsum += x.lv[i];
        printf("  checkpoint: %zu particles (mean level %.4f), stats T_vib %.2f K, restart "
               "%s\n", n, lsum / (double)n, x.st.temperature_vib,
               same && fields ? "bit for bit" : "DIFFERS");
        TU_CHECK(same && fields && x.st.temperature_vib == y.st.temperature_vib &&
                 x.st.collisions == y.st.collisions && lsum > 0,
                 "restart differs: particles %d, fields %d, T_vib %.17g vs %.17g", same, fields,
                 x.st.temperature_vib, y.st.temperature_vib);
        dt_free(&x.p);
        dt_free(&y.p);
        free(x.lv);
        free(y.lv);
        kedr_dsmc_fields_free(&x.f);
        kedr_dsmc_fields_free(&y.f);
    }
    kedr_dsmc_destroy(a);
    kedr_dsmc_destroy(b);
    unlink(path);
}

/* (e) the level API's refusals */
static void test_levels_api(kedr_ctx *ctx)
{
    kedr_dsmc_case c = vib_box(300, 300, 5, 5, 2, 20);
    c.nspecies = 2;
    c.species[1] = (kedr_dsmc_species){
        "Ar", 66.3e-27, 4.17e-10, 0.81, 273, 1.0, 4.17e-10, 0, 1, 0, 0, 0, 0};
    c.fraction[0] = c.fraction[1] = 0.5;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    dt_particles p = dt_get(sim);
    uint8_t *lv = tu_host_alloc(p.n);
    for (size_t i = 0; i < p.n; i++)
        lv[i] = p.sp[i] == 0 ? 3 : 0;
    TU_OK(kedr_dsmc_set_vib_levels(sim, p.n, lv));
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    TU_CHECK(fabs(st.vib_energy / (3 * K_B * THETA) - 1) < 1e-12, "levels set: energy %g",
             st.vib_energy);
    size_t k = 0;
    while (k < p.n && p.sp[k] == 0)
        k++;
    if (k < p.n) {
        lv[k] = 1;
        TU_CHECK(kedr_dsmc_set_vib_levels(sim, p.n, lv) == KEDR_ERR_INVALID &&
                     strstr(kedr_last_error(), "does not vibrate"),
                 "a level for argon accepted");
    }
    TU_CHECK(kedr_dsmc_set_vib_levels(sim, p.n + 1, lv) == KEDR_ERR_INVALID, "a wrong count");
    free(lv);
    dt_free(&p);
    kedr_dsmc_destroy(sim);
    c.species[0].theta_v = 0;
    c.species[0].z_vib = 0;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    size_t n = 0;
    TU_CHECK(kedr_dsmc_get_vib_levels(sim, 0, &n, NULL) == KEDR_ERR_INVALID,
             "levels of a gas that does not vibrate");
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    kedr_dsmc_fields f;
    TU_OK(kedr_dsmc_get_fields(sim, &f));
    TU_CHECK(st.temperature_vib == 0 && f.temperature_vib == NULL, "no vibration: no T_vib");
    kedr_dsmc_fields_free(&f);
    kedr_dsmc_destroy(sim);
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        printf("back end: %s\n", kedr_backend_name(list[b]));
        test_equilibrium(ctx);
        test_mixture(ctx);
        test_relaxation(ctx);
        test_wall_inflow(ctx);
        test_wall_bodies(ctx);
        test_checkpoint(ctx);
        test_levels_api(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_dsmc_vib");
}
