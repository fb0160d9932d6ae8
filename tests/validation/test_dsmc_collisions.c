/* DSMC collisions against exact results:
 *  (a) conservation: collisions in a closed specular box conserve particle count, momentum and
 *      energy (translational + rotational) to rounding (mixtures with N2, VHS and VSS, NTC and
 *      MFS); full steps in the box conserve count, energy and the z momentum (the walls reverse
 *      x and y momentum);
 *  (b) the equilibrium collision rate of hard spheres and of VHS nitrogen against kinetic theory,
 *      Bird (1994) eq. 4.64: per unit volume 1/2 n^2 <sigma g>, with
 *      <sigma g> = 2 sqrt(pi) d_ref^2 sqrt(2kT/m_r) (T/T_ref)^(1/2 - omega), which for hard
 *      spheres of one species (m_r = m/2) is 1/2 n^2 4 d^2 sqrt(pi k T / m) = 2 n^2 d^2
 *      sqrt(pi k T / m) (the 1/2 counts each pair once). In a cell of N simulated particles of
 *      weight W the pairs are N (N - 1) / 2, so the expected count per step is
 *      sum over cells of N (N - 1) / 2 W <sigma g> dt / V. The count is compared within 4
 *      standard deviations (sqrt of the count: the per-step count is at most as variable as a
 *      Poisson count, and is one for the majorant frequency scheme) and within 1%; for both
 *      schemes (NTC, MFS);
 *  (c) relaxation of a two-beam start (kurtosis of vx = 1) to a Maxwellian: kurtosis 3 in each
 *      component within 5 sqrt(24/N), and equal temperatures in x, y, z within 3% (N2 starts
 *      with rotational energies at equilibrium at the same temperature);
 *  (d) crowded cells: on cuda a cell of at least crowded_min molecules collides a warp at a
 *      time (candidates that share no molecule together); its particles, counts and collision
 *      separations are bit for bit those of one thread per cell; on the cpu the blocks of cells
 *      (random numbers drawn ahead, bounds on sigma g, vector deflections and mean free paths)
 *      are bit for bit dsmc_collide_cell's, for a mixture with rotation, argon, hard spheres
 *      and reacting air (new molecules made in every step). */
#include "test_dsmc_util.h"

#include "dsmc/sim.h"

static size_t fill_count[2];

static void test_conservation(kedr_ctx *ctx, kedr_dsmc_model model, kedr_dsmc_scheme scheme)
{
    kedr_dsmc_case c = dt_box(1.0, 8, 1e20, 400, 60, 2e-5);
    c.nspecies = 2;
    c.species[1] = dt_nitrogen();
    c.fraction[0] = 0.6;
    c.fraction[1] = 0.4;
    c.velocity[0] = 150;
    c.velocity[1] = -80;
    c.velocity[2] = 40;
    c.model = model;
    c.scheme = scheme;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    dt_particles p0 = dt_get(sim);
    double m0[3], e0, scale;
    dt_totals(&c, &p0, m0, &e0, &scale);
    int both = 0;
    for (size_t i = 0; i < p0.n; i++)
        both |= 1 << p0.sp[i];
    TU_CHECK(both == 3 && p0.n > 3000, "fill: %zu particles, species mask %d", p0.n, both);
    for (int s = 0; s < 30; s++)
        TU_OK(kedr_dsmc_step_stages(sim, KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) |
                                             KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE)));
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    TU_CHECK(st.total_collisions > 10000, "only %llu collisions", (unsigned long long)st.total_collisions);
    dt_particles p1 = dt_get(sim);
    double m1[3], e1, scale1;
    dt_totals(&c, &p1, m1, &e1, &scale1);
    TU_CHECK(p1.n == p0.n, "collisions changed the count: %zu -> %zu", p0.n, p1.n);
    for (int d = 0; d < 3; d++)
        TU_CHECK(fabs(m1[d] - m0[d]) <= 1e-12 * scale, "model %d: momentum %d: %.17g -> %.17g",
                 model, d, m0[d], m1[d]);
    TU_CHECK(fabs(e1 - e0) <= 1e-12 * e0, "model %d: energy %.17g -> %.17g (rel %.3g)", model, e0,
             e1, (e1 - e0) / e0);
    /* The velocities did change. */
    double moved = 0;
    for (size_t i = 0; i < p1.n; i++)
        moved += fabs(p1.vz[i]);
    TU_CHECK(moved > 0, "no velocities");

    for (int s = 0; s < 30; s++)
        TU_OK(kedr_dsmc_step(sim));
    dt_particles p2 = dt_get(sim);
    double m2[3], e2, scale2;
    dt_totals(&c, &p2, m2, &e2, &scale2);
    TU_CHECK(p2.n == p0.n, "full steps in a closed box changed the count: %zu -> %zu", p0.n, p2.n);
    TU_CHECK(fabs(e2 - e0) <= 1e-12 * e0, "full steps: energy %.17g -> %.17g", e0, e2);
    TU_CHECK(fabs(m2[2] - m0[2]) <= 1e-12 * scale, "full steps: z momentum %.17g -> %.17g", m0[2],
             m2[2]);
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    TU_CHECK(st.generated == 0 && st.samples > 0, "closed box generated %llu, samples %lld",
             (unsigned long long)st.generated, (long long)st.samples);
    dt_free(&p0);
    dt_free(&p1);
    dt_free(&p2);
    kedr_dsmc_destroy(sim);
}

/* <sigma g> at equilibrium for one species (Bird 1994 eq. 4.64 divided by n). */
static double sigma_g_mean(const kedr_dsmc_species *s, double temperature)
{
    double mr = s->mass / 2;
    return 2 * sqrt(M_PI) * s->d_ref * s->d_ref * sqrt(2 * K_B * temperature / mr) *
           pow(temperature / s->t_ref, 0.5 - s->omega);
}

/* Returns the run's mean collision separation over the mean free path. */
static double test_rate(kedr_ctx *ctx, int which, kedr_dsmc_species sp, double temperature,
                        kedr_dsmc_scheme scheme, kedr_dsmc_partner partner)
{
    /* Few particles per cell, so that N (N - 1) and N^2 differ by 5%. */
    const int nx = 30;
    const double n = 1e20, len = 1.0;
    kedr_dsmc_case c = dt_box(len, nx, n, temperature, 20, 1);
    c.species[0] = sp;
    c.scheme = scheme;
    c.partner = partner;
    double tau = 1 / (n * sigma_g_mean(&sp, temperature)); /* mean collision time */
    c.dt = 0.2 * tau;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return 0;
    unsigned mask = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
    for (int s = 0; s < 20; s++) /* (sigma g)_max settles */
        TU_OK(kedr_dsmc_step_stages(sim, mask));
    /* Positions do not change without the move stage: the occupancy is fixed. */
    dt_particles p = dt_get(sim);
    double t_gas = dt_temperature(sp.mass, &p);
    double dx = len / nx, pairs = 0;
    size_t occ[30 * 30] = {0};
    for (size_t i = 0; i < p.n; i++) {
        int ix = (int)(p.x[i] / dx), iy = (int)(p.y[i] / dx);
        ix = ix < nx ? ix : nx - 1;
        iy = iy < nx ? iy : nx - 1;
        occ[iy * nx + ix]++;
    }
    for (int k = 0; k < nx * nx; k++)
        pairs += 0.5 * (double)occ[k] * (double)(occ[k] - 1);
    /* quick: 6x fewer steps and collisions; the 1% and 3% bounds widen by sqrt(6) (the 4 sd
     * bound follows the count by itself) */
    const int steps = (int)tu_scale(150, 25);
    const double w = dt_widen(6);
    double total = dt_count_collisions(sim, mask, steps);
    double expected = steps * pairs * c.weight * sigma_g_mean(&sp, t_gas) * c.dt / (dx * dx);
    double sd = sqrt(expected), ratio = total / expected;
    kedr_dsmc_stats end;
    TU_OK(kedr_dsmc_get_stats(sim, &end));
    static const char *const partner_names[] = {"random", "nearest", "subcell"};
    printf("  collision rate %s %s partner %s (T = %.1f K): measured/theory = %.5f +- %.5f (1 sd, "
           "%.0f collisions), mcs/mfp %.3f\n", scheme == KEDR_DSMC_MFS ? "MFS" : "NTC", sp.name,
           partner_names[partner], t_gas, ratio,
           sd / expected, total, end.total_mcs_mfp);
    /* Nearest partners with the prohibition of repeated collisions draw a rejected pair again
     * while an accepted one moves on to another partner, which favours slow pairs a little:
     * with positions frozen as here the rate comes out about 2% low (docs/validation.md). */
    if (partner == KEDR_DSMC_PARTNER_NEAREST)
        TU_CHECK(fabs(ratio - 1) < 0.03 * w, "%s, nearest partners: %.0f collisions, expected %.0f "
                 "within 3%%", sp.name, total, expected);
    else
        TU_CHECK(fabs(total - expected) < 4 * sd && fabs(ratio - 1) < 0.01 * w,
                 "%s: %.0f collisions, expected %.0f +- %.0f", sp.name, total, expected, sd);
    TU_CHECK(fabs(t_gas / temperature - 1) < 0.02, "gas temperature %g, set %g", t_gas,
             temperature);
    if (which == 0) {
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        TU_CHECK(st.particles == p.n, "count changed");
    }
    dt_free(&p);
    kedr_dsmc_destroy(sim);
    return end.total_mcs_mfp;
}

static double kurtosis(const double *v, size_t n, double *variance)
{
    double m = 0, m2 = 0, m4 = 0;
    for (size_t i = 0; i < n; i++)
        m += v[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = (v[i] - m) * (v[i] - m);
        m2 += d;
        m4 += d * d;
    }
    m2 /= (double)n;
    m4 /= (double)n;
    *variance = m2;
    return m4 / (m2 * m2);
}

static void test_relaxation(kedr_ctx *ctx, kedr_dsmc_model model)
{
    const double temperature = 300, n = 1e20;
    /* quick: 4000 molecules a cell, not 16000: the kurtosis bound follows N by itself, the 3%
     * on each temperature (5 sd at full size) widens by sqrt(4) */
    const double ppc = (double)tu_scale(16000, 4000), w = dt_widen(4);
    kedr_dsmc_case c = dt_box(1.0, 2, n, temperature, ppc, 1);
    c.fill = 0;
    c.model = model;
    if (model == KEDR_DSMC_VSS)
        c.species[0] = dt_nitrogen();
    const kedr_dsmc_species *sp = &c.species[0];
    c.dt = 0.1 / (n * sigma_g_mean(sp, temperature));
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    size_t np = 4 * (size_t)ppc;
    double *x = tu_host_alloc(np * 8), *y = tu_host_alloc(np * 8), *vx = tu_host_alloc(np * 8);
    double *vy = tu_host_alloc(np * 8), *vz = tu_host_alloc(np * 8);
    float *erot = tu_host_alloc(np * sizeof(float));
    uint64_t rng = 99;
    double u = sqrt(3 * K_B * temperature / sp->mass); /* two beams +-u along x carry 3/2 kT */
    for (size_t i = 0; i < np; i++) {
        x[i] = tu_uniform(&rng);
        y[i] = tu_uniform(&rng);
        vx[i] = i % 2 ? u : -u;
        vy[i] = vz[i] = 0;
        /* 2 rotational degrees of freedom at equilibrium: e = -kT ln u. */
        erot[i] = sp->rot_dof ? (float)(-K_B * temperature * log(1 - tu_uniform(&rng))) : 0.0f;
    }
    TU_OK(kedr_dsmc_set_particles(sim, np, x, y, vx, vy, vz, erot, NULL));
    dt_particles p0 = dt_get(sim);
    double var;
    TU_CHECK(fabs(kurtosis(p0.vx, p0.n, &var) - 1) < 1e-9, "two beams: kurtosis not 1");
    unsigned mask = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
    for (int s = 0; s < 150; s++) /* 15 mean collision times */
        TU_OK(kedr_dsmc_step_stages(sim, mask));
    dt_particles p = dt_get(sim);
    TU_CHECK(p.n == np, "count %zu", p.n);
    double tol = 5 * sqrt(24.0 / (double)np);
    const double *comp[3] = {p.vx, p.vy, p.vz};
    for (int d = 0; d < 3; d++) {
        double k = kurtosis(comp[d], p.n, &var);
        double td = sp->mass * var / K_B;
        printf("  relaxation (%s): component %c kurtosis %.6f (+- %.4f), T %.4f K\n",
               model == KEDR_DSMC_VSS ? "VSS N2" : "HS", "xyz"[d], k, tol / 5, td);
        TU_CHECK(fabs(k - 3) < tol, "component %d kurtosis %.4f, expected 3 +- %.4f", d, k, tol);
        TU_CHECK(fabs(td / temperature - 1) < 0.03 * w,
                 "component %d temperature %.2f, expected %.1f", d, td, temperature);
    }
    free(x);
    free(y);
    free(vx);
    free(vy);
    free(vz);
    free(erot);
    dt_free(&p0);
    dt_free(&p);
    kedr_dsmc_destroy(sim);
}

/* Cases built wrongly are refused with a message; stages out of order too. */
static void test_errors(kedr_ctx *ctx)
{
    kedr_dsmc *sim = NULL;
    kedr_dsmc_case c = dt_box(1.0, 4, 1e20, 300, 10, 1e-6);
    c.nx = 0;
    TU_CHECK(kedr_dsmc_create(ctx, &c, &sim) == KEDR_ERR_INVALID && !sim, "nx = 0 accepted");
    TU_CHECK(strstr(kedr_last_error(), "grid 0 x 4") != NULL, "message: %s", kedr_last_error());
    c = dt_box(1.0, 4, -1, 300, 10, 1e-6);
    TU_CHECK(kedr_dsmc_create(ctx, &c, &sim) == KEDR_ERR_INVALID, "negative density accepted");
    c = dt_box(1.0, 4, 1e20, 300, 10, 1e-6);
    c.species[0].rot_dof = 1;
    TU_CHECK(kedr_dsmc_create(ctx, &c, &sim) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "rot_dof 1") != NULL,
             "rot_dof 1 accepted: %s", kedr_last_error());
    c = dt_box(1.0, 4, 1e20, 300, 10, 1e-6);
    c.scheme = (kedr_dsmc_scheme)5;
    TU_CHECK(kedr_dsmc_create(ctx, &c, &sim) == KEDR_ERR_INVALID, "scheme 5 accepted");
    c = dt_box(1.0, 4, 1e20, 300, 10, 1e-6);
    c.nsegments = 1;
    double seg[4] = {0.5, 0.5, 1.5, 0.5};
    memcpy(c.segment[0], seg, sizeof seg);
    TU_CHECK(kedr_dsmc_create(ctx, &c, &sim) == KEDR_ERR_INVALID, "body outside accepted");
    TU_CHECK(strstr(kedr_last_error(), "outside the domain") != NULL, "message: %s",
             kedr_last_error());
    c = dt_box(1.0, 4, 1e20, 300, 10, 1e-6);
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    TU_CHECK(kedr_dsmc_step_stages(sim, KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE)) == KEDR_ERR_INVALID,
             "collide without index accepted");
    TU_CHECK(kedr_dsmc_step_stages(sim, 1u << 7) == KEDR_ERR_INVALID, "bad stage mask accepted");
    double x = 2, y = 0.5, v = 0;
    TU_CHECK(kedr_dsmc_set_particles(sim, 1, &x, &y, &v, &v, &v, NULL, NULL) == KEDR_ERR_INVALID,
             "particle outside accepted");
    TU_CHECK(kedr_dsmc_set_particles(sim, 1, NULL, &y, &v, &v, &v, NULL, NULL) == KEDR_ERR_INVALID,
             "NULL x accepted");
    float e = -1.0f;
    y = 0.5;
    x = 0.5;
    TU_CHECK(kedr_dsmc_set_particles(sim, 1, &x, &y, &v, &v, &v, &e, NULL) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "rotational energy") != NULL,
             "negative rotational energy accepted: %s", kedr_last_error());
    e = 1e-21f;
    TU_CHECK(kedr_dsmc_set_particles(sim, 1, &x, &y, &v, &v, &v, &e, NULL) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "no rotational degrees") != NULL,
             "rotational energy of an atom accepted: %s", kedr_last_error());
    x = 2;
    size_t n = 0;
    TU_CHECK(kedr_dsmc_get_particles(sim, 0, &n, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
                 KEDR_ERR_INVALID && n > 0, "cap 0 accepted");
    /* An empty box steps fine. */
    TU_OK(kedr_dsmc_set_particles(sim, 0, &x, &y, &v, &v, &v, NULL, NULL));
    TU_OK(kedr_dsmc_step(sim));
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    TU_CHECK(st.particles == 0 && st.collisions == 0, "empty box: %zu particles", st.particles);
    kedr_dsmc_destroy(sim);
}

/* Three runs of one case, every cell through one thread (crowded_min above any count), the
 * cells of 100 molecules or more through a warp, and every cell through a warp, must end in the
 * same state bit for bit: cells of about 70 to 130 molecules (100 a cell on average), VSS, NTC,
 * full steps in a closed box, of a gas: 0, a mixture with a rotating species; 1, argon (a simple
 * gas, VSS alpha 1.4); 2, hard spheres (isotropic); 3, reacting five-species air at 20000 K
 * (dissociations make new molecules in every step: their slots are claimed in another order by
 * a warp's lanes than by one thread, and put in their parents' order after the collisions). On the cpu the second run takes every cell
 * through dsmc_collide_cell without the bounds on sigma g (cpu_plain), the others the blocks of
 * cells with their random numbers drawn ahead and, for a simple gas without rotation, the
 * deflections and the mean free paths of the mcs/mfp statistic in vector code: the same state
 * and statistics bit for bit too. */
static void test_crowded(kedr_ctx *ctx, kedr_dsmc_partner partner, int dims, int gas)
{
    const char *be = kedr_backend_name(kedr_ctx_backend(ctx));
    kedr_dsmc_case c = dt_box(1.0, 6, 1e20, 400, 100, 2e-5);
    if (dims == 3) {
        c.dims = 3;
        c.hi[2] = 1.0;
        c.nx = c.ny = c.nz = 4;
        for (int s = 0; s < 6; s++)
            c.side[s] = KEDR_DSMC_SPECULAR;
        c.weight = c.number_density / (4 * 4 * 4) / 100;
    }
    if (gas == 0) {
        c.nspecies = 2;
        c.species[1] = dt_nitrogen();
        c.fraction[0] = 0.5;
        c.fraction[1] = 0.5;
    } else if (gas == 1) {
        c.species[0] = (kedr_dsmc_species){
            "Ar", 66.3e-27, 4.17e-10, 0.81, 273, 1.40, 4.11e-10, 0, 1, 0, 0, 0, 0};
    } else if (gas == 3) { /* reacting five-species air at 20000 K: new molecules every step */
        char dir[1200], file[1300];
        snprintf(dir, sizeof dir, "%s", __FILE__);
        char *at = strstr(dir, "tests/validation/test_dsmc_collisions.c");
        snprintf(at ? at : dir, sizeof dir - (size_t)(at ? at - dir : 0), "%s",
                 at ? "cases/dsmc" : "./cases/dsmc");
        snprintf(file, sizeof file, "%s/species.ini", dir);
        TU_OK(kedr_dsmc_species_load(file, "air5", &c));
        snprintf(file, sizeof file, "%s/air5.reactions", dir);
        TU_OK(kedr_dsmc_reactions_load(file, &c));
        for (int k = 0; k < c.nspecies; k++)
            c.fraction[k] = 1.0 / c.nspecies;
        c.temperature = c.wall_temperature = 20000;
        c.dt = 6e-6;
    }
    c.velocity[0] = 120;
    c.model = KEDR_DSMC_VSS;
    c.partner = partner;
    const uint32_t mins[3] = {UINT32_MAX, 100, 2};
    /* quick: 4 steps, not 12; the runs must still agree bit for bit */
    const int steps = (int)tu_scale(12, 4);
    dt_particles p[3];
    kedr_dsmc_stats st[3];
    memset(p, 0, sizeof p);
    memset(st, 0, sizeof st);
    for (int r = 0; r < 3; r++) {
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        if (!sim)
            return;
        sim->crowded_min = mins[r];
        sim->cpu_plain = r == 1;
        for (int s = 0; s < steps; s++)
            TU_OK(kedr_dsmc_step(sim));
        TU_OK(kedr_dsmc_get_stats(sim, &st[r]));
        p[r] = dt_get(sim);
        kedr_dsmc_destroy(sim);
    }
    TU_CHECK(st[0].total_collisions > tu_scale(10000, 3000) && st[0].collisions > 500,
             "%s crowded %dD gas %d: only %llu collisions", be, dims, gas,
             (unsigned long long)st[0].total_collisions);
    if (gas == 3) {
        size_t n0 = (size_t)(c.nx * c.ny * (dims == 3 ? c.nz : 1)) * 100;
        printf("  crowded %dD reacting air: %zu particles from about %zu, %llu reactions in the "
               "last step\n", dims, p[0].n, n0, (unsigned long long)st[0].reactions);
        TU_CHECK(st[0].reactions > 0 && p[0].n > n0 + n0 / 50, "%s crowded %dD: %llu reactions, "
                 "%zu particles", be, dims, (unsigned long long)st[0].reactions, p[0].n);
    }
    for (int r = 1; r < 3; r++) {
        size_t n = p[r].n == p[0].n ? p[0].n : 0;
        int same = p[r].n == p[0].n && !memcmp(p[r].x, p[0].x, n * 8) &&
                   !memcmp(p[r].vx, p[0].vx, n * 8) && !memcmp(p[r].vy, p[0].vy, n * 8) &&
                   !memcmp(p[r].vz, p[0].vz, n * 8) && !memcmp(p[r].erot, p[0].erot, n * 4) &&
                   !memcmp(p[r].sp, p[0].sp, n);
        TU_CHECK(same && st[r].total_collisions == st[0].total_collisions &&
                     st[r].candidates == st[0].candidates &&
                     st[r].total_mcs_mfp == st[0].total_mcs_mfp,
                 "%s crowded %dD gas %d, partner %d, crowded_min %u: particles %s, collisions %llu "
                 "(one thread a cell: %llu), mcs/mfp %.17g (%.17g)", be, dims, gas, (int)partner,
                 mins[r], same ? "same" : "differ", (unsigned long long)st[r].total_collisions,
                 (unsigned long long)st[0].total_collisions, st[r].total_mcs_mfp,
                 st[0].total_mcs_mfp);
    }
    for (int r = 0; r < 3; r++)
        dt_free(&p[r]);
}

/* The cpu's bounds on sigma g (dsmc_sg_verdict) against the exact acceptance of dsmc_try_pair,
 * for the three pairs of a hard-sphere and nitrogen mixture (e = 0, -0.24, -0.48) and of argon
 * VSS (-0.62): speeds log-uniform over 2^-70 to 2^70 (beyond the tables too), squares of speeds
 * on the tables' bin edges and an ulp either side, and (sigma g)max and the uniform so that u (sigma g)max falls
 * within a relative 1e-12 to 1 of sigma g, on either side. A verdict of 1 or 0 must be the
 * exact one; -1 (ask the exact value) must be rare for the speeds of a gas. */
static void test_sg_bounds(kedr_ctx *ctx)
{
    kedr_dsmc_case c = dt_box(1.0, 4, 1e20, 300, 10, 1e-6);
    c.nspecies = 2;
    c.species[1] = dt_nitrogen();
    c.fraction[0] = c.fraction[1] = 0.5;
    kedr_dsmc_case ar = c;
    ar.nspecies = 1;
    ar.species[0] = (kedr_dsmc_species){
        "Ar", 66.3e-27, 4.17e-10, 0.81, 273, 1.40, 4.11e-10, 0, 1, 0, 0, 0, 0};
    ar.model = KEDR_DSMC_VSS;
    long wrong = 0, undecided = 0, gas = 0, gas_undecided = 0, total = 0;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (int which = 0; which < 2; which++) {
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, which ? &ar : &c, &sim));
        if (!sim)
            return;
        TU_CHECK(sim->sgb != NULL, "the cpu keeps no bounds on sigma g");
        const dsmc_params *p = &sim->p;
        for (int si = 0; si < p->nspecies; si++)
            for (int sj = 0; sj < p->nspecies; sj++)
                for (int t = 0; t < 200000; t++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    double r1 = (double)(x >> 11) * 0x1p-53;
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    double r2 = (double)(x >> 11) * 0x1p-53;
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    double r3 = (double)(x >> 11) * 0x1p-53;
                    double g2;
                    int kind = t % 4;
                    if (kind == 3) { /* a bin edge of the tables (of g^2), or an ulp off it */
                        g2 = ldexp(1.0 + floor(r1 * DSMC_SGB_BINS) / DSMC_SGB_BINS,
                                   (int)(r2 * 120) - 60);
                        g2 = t % 3 == 0   ? g2
                             : t % 3 == 1 ? nextafter(g2, 0)
                                          : nextafter(g2, 1e300);
                    } else if (kind == 2) { /* a gas's relative speeds */
                        g2 = 10.0 * pow(1000.0, r1);
                        g2 *= g2;
                    } else {
                        g2 = exp2(-70.0 + 140.0 * r1);
                        g2 *= g2;
                    }
                    dsmc_cand k = {0};
                    k.si = si;
                    k.sj = sj;
                    k.pair = si * DSMC_MAXS + sj;
                    k.g2 = g2;
                    k.g = sqrt(g2); /* as dsmc_cand_rel */
                    dsmc_cand exact = k;
                    dsmc_cand_sg(p, &exact);
                    /* u (sigma g)max near sigma g: sgmax = sg (1 + d), d in +-1e-12 to +-1 */
                    double d = (r2 < 0.5 ? -1 : 1) * pow(10.0, -12.0 * r3);
                    double sgmax = exact.sg * (t % 7 == 0 ? 1 + d : 1.5 + d);
                    double u = t % 7 == 0 ? r1 : exact.sg / sgmax * (1 + 1e-3 * d);
                    u = u > 0 && u < 1 ? u : 0.5;
                    int v = dsmc_sg_verdict(p, sim->sgb, &k, u, sgmax);
                    double m = exact.sg > sgmax ? exact.sg : sgmax;
                    int accept = u * m < exact.sg, raised = exact.sg > sgmax;
                    wrong += (v == 1 && (!accept || raised)) || (v == 0 && (accept || raised));
                    undecided += v < 0;
                    total++;
                    if (kind == 2 && t % 7 != 0) { /* typical: uniform u, sgmax 1.5 sg */
                        double ut = r3, vt = dsmc_sg_verdict(p, sim->sgb, &k, ut, 1.5 * exact.sg);
                        gas++;
                        gas_undecided += vt < 0 && p->sigma_e[k.pair] != 0;
                        int at = ut * 1.5 * exact.sg < exact.sg;
                        wrong += (vt == 1 && !at) || (vt == 0 && at);
                    }
                }
        kedr_dsmc_destroy(sim);
    }
    printf("sigma g bounds: %ld verdicts, %ld left to the exact value (%ld of %ld typical ones), "
           "%ld wrong\n", total, undecided, gas_undecided, gas, wrong);
    TU_CHECK(wrong == 0, "sigma g bounds: %ld verdicts differ from the exact acceptance", wrong);
    TU_CHECK(gas_undecided < gas / 50, "sigma g bounds: %ld of %ld typical candidates undecided",
             gas_undecided, gas);
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        test_errors(ctx);
        test_conservation(ctx, KEDR_DSMC_VHS, KEDR_DSMC_NTC);
        test_conservation(ctx, KEDR_DSMC_VSS, KEDR_DSMC_NTC);
        test_conservation(ctx, KEDR_DSMC_VHS, KEDR_DSMC_MFS);
        test_conservation(ctx, KEDR_DSMC_VSS, KEDR_DSMC_MFS);
        double random_mcs = test_rate(ctx, 0, dt_hard_sphere(), 300, KEDR_DSMC_NTC,
                                      KEDR_DSMC_PARTNER_RANDOM);
        test_rate(ctx, 1, dt_nitrogen(), 500, KEDR_DSMC_NTC, KEDR_DSMC_PARTNER_RANDOM);
        test_rate(ctx, 0, dt_hard_sphere(), 300, KEDR_DSMC_MFS, KEDR_DSMC_PARTNER_RANDOM);
        test_rate(ctx, 1, dt_nitrogen(), 500, KEDR_DSMC_MFS, KEDR_DSMC_PARTNER_RANDOM);
        /* Nearest-neighbour partners: the equilibrium rate is unchanged (velocities do not
         * depend on position), and the collision separation falls: with ~20 molecules a cell,
         * the nearest of them lies at about a third of a random one's distance. */
        double nearest_mcs = test_rate(ctx, 0, dt_hard_sphere(), 300, KEDR_DSMC_NTC,
                                       KEDR_DSMC_PARTNER_NEAREST);
        TU_CHECK(nearest_mcs > 0 && nearest_mcs < 0.6 * random_mcs,
                 "mcs/mfp with nearest partners %g, random %g", nearest_mcs, random_mcs);
        /* Sub-cell partners (2 x 2): the rate is the cell's, exactly as with random partners,
         * and a partner from the same quarter of the cell lies at about half the distance. */
        double subcell_mcs = test_rate(ctx, 0, dt_hard_sphere(), 300, KEDR_DSMC_NTC,
                                       KEDR_DSMC_PARTNER_SUBCELL);
        TU_CHECK(subcell_mcs > 0.3 * random_mcs && subcell_mcs < 0.7 * random_mcs,
                 "mcs/mfp with 2 x 2 sub-cell partners %g, random %g", subcell_mcs, random_mcs);
        test_relaxation(ctx, KEDR_DSMC_VHS);
        test_relaxation(ctx, KEDR_DSMC_VSS);
        test_crowded(ctx, KEDR_DSMC_PARTNER_RANDOM, 2, 0);
        test_crowded(ctx, KEDR_DSMC_PARTNER_SUBCELL, 2, 0);
        test_crowded(ctx, KEDR_DSMC_PARTNER_RANDOM, 3, 0);
        test_crowded(ctx, KEDR_DSMC_PARTNER_NEAREST, 2, 0);
        test_crowded(ctx, KEDR_DSMC_PARTNER_RANDOM, 2, 1);
        test_crowded(ctx, KEDR_DSMC_PARTNER_RANDOM, 3, 1);
        test_crowded(ctx, KEDR_DSMC_PARTNER_NEAREST, 2, 1);
        test_crowded(ctx, KEDR_DSMC_PARTNER_SUBCELL, 2, 2);
        test_crowded(ctx, KEDR_DSMC_PARTNER_SUBCELL, 3, 2);
        /* reacting air with random partners: its hot pairs whose reaction cross-section exceeds
         * the collision's raise (sigma g)max some sixty-fold, and a sub-cell partner costs a pass
         * over the cell's molecules per candidate */
        test_crowded(ctx, KEDR_DSMC_PARTNER_RANDOM, 2, 3);
        test_crowded(ctx, KEDR_DSMC_PARTNER_RANDOM, 3, 3);
        if (list[b] == KEDR_BACKEND_CPU)
            test_sg_bounds(ctx);
        /* The fill counts come from the same host arithmetic on every back end. */
        kedr_dsmc_case c = dt_box(1.0, 16, 1e20, 300, 7.3, 1e-6);
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        kedr_dsmc_stats st = {0};
        if (sim)
            TU_OK(kedr_dsmc_get_stats(sim, &st));
        fill_count[b] = st.particles;
        if (b > 0)
            TU_CHECK(fill_count[b] == fill_count[0], "fill: %zu particles on %s, %zu on cpu",
                     fill_count[b], kedr_backend_name(list[b]), fill_count[0]);
        kedr_dsmc_destroy(sim);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_dsmc_collisions");
}
