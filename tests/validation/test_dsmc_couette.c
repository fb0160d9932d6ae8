/* Couette flow and Fourier heat conduction between two parallel diffuse plates, on every back
 * end, hard-sphere gas (argon-like, omega = 1/2), lambda = 1 mm, gap H = 20 mm:
 *  - Couette flow at Kn = lambda / H = 0.05, plates at -100 and +100 m/s, walls at 273 K: the
 *    wall shear stress (surface sampling on both plates) against tau = mu du/dy, du/dy the
 *    slope of a straight line fitted to the sampled u_x profile over the middle 60% of the gap
 *    (away from the Knudsen layers), mu the Chapman-Enskog viscosity of hard spheres at the
 *    mean temperature of that part; and the profile there is a straight line (chi^2 of the
 *    fit against the per-cell errors from the batches);
 *  - Fourier flow at Kn = 0.05 (lambda at the mean density), plates at rest at 200 K and 400 K
 *    (each with its own [body] temperature): the wall heat flux against q = kappa dT/dy,
 *    kappa = (15/4) (k/m) mu;
 *  - the free-molecular limit (collisions off, Kn = infinity), plates at 250 K and 350 K: the
 *    wall heat flux against the closed form derived at fm_heat_flux;
 *  - a body with its own wall model ([body] wall = specular) exchanges no heat and no shear.
 * Transport coefficients (S. Chapman & T. G. Cowling, The Mathematical Theory of Non-Uniform
 * Gases, 3rd ed., Cambridge 1970, ch. 10; G. A. Bird, Molecular Gas Dynamics and the Direct
 * Simulation of Gas Flows, 1994, eq. 4.62 for the first approximation): for hard spheres of
 * diameter d, mu_1 = (5/16) sqrt(pi m k T) / (pi d^2) and kappa_1 = (15/4) (k/m) mu_1 are the
 * first approximations; the converged (infinite-order) values are 1.016 mu_1 and 1.025 kappa_1.
 * DSMC solves the Boltzmann equation, so it must reproduce the converged values: those are the
 * reference here (the first approximation is 1.6% and 2.5% lower).
 * Temperature dependence: mu and kappa vary as T^omega. In the Couette flow viscous heating
 * raises the bulk by about 6 K (mu by 1%), and mu is taken at the mean temperature of the
 * fitted part of the profile (the variation within it is a fraction of a kelvin). In the
 * Fourier flow kappa varies by 40% across the gap, so the profile is handled exactly: with
 * kappa = kappa_r (T / T_r)^omega, q = kappa dT/dy = kappa_r T_r^-omega / (1 + omega)
 * d(T^(1 + omega))/dy, so T^(1 + omega) is a straight line in the bulk and its fitted slope
 * gives q (kappa taken at the local temperature everywhere).
 * The discretisation (square cells of lambda / 4, or lambda / 8 with --full; random collision
 * partners in the cell; dt = 0.2 mean collision times) adds errors of order (dx / lambda)^2 and
 * (dt / tau)^2, below 1% here (Alexander, Garcia & Alder, Phys. Rev. Lett. 80 (1998) 5212;
 * Hadjiconstantinou, Phys. Fluids 12 (2000) 2634): the checks allow 1% (0.5% with --full) on
 * top of the statistics. The Couette flow runs with random and with nearest-neighbour partners:
 * without the prohibition of repeated collisions (a molecule's nearest partner excludes the one
 * it last collided with in the step) the same pair collided again and again and the measured
 * viscosity came out 12% high.
 * Statistics: every estimate comes from batches of steps; the printed error is the standard
 * error of the batch means, and each check requires it to be small enough (so a noisy run
 * cannot pass by luck) and the deviation to be within 4 standard errors plus the allowance.
 * CI sizes: standard errors about 2.8% (shear), 1.4% (heat flux), 0.5% (free-molecular);
 * --full (docs/validation.md): about 1%, 0.5%, 0.2%. */
#include "test_dsmc_util.h"

#define CH_FREE (KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE) | \
                 KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_SAMPLE))

/* The converged Chapman-Enskog coefficients of hard spheres over their first approximations
 * (Chapman & Cowling 1970, ch. 10). */
#define HS_MU_FACTOR 1.016
#define HS_KAPPA_FACTOR 1.025

/* A channel: plates spanning a periodic x period at y = dy and y = dy + gap, one empty cell row
 * behind each; square cells of dy = gap / ny_gap, nx columns (more columns: more molecules per
 * step, so fewer steps for the same samples). */
typedef struct {
    int nx;
    double lambda;   /* hard-sphere mean free path at the mean density, m */
    double gap;      /* plate spacing, m */
    int ny_gap;      /* cells across the gap */
    double ppc;      /* particles per cell at the mean density */
    double t_lo, t_hi; /* plate temperatures, K */
    double u;        /* relative plate speed: the plates move at -u/2, +u/2 */
    double dt;       /* s */
    kedr_dsmc_partner partner; /* collision partners: random (0) or nearest */
} channel;

static double hs_mass(void)
{
    return dt_hard_sphere().mass;
}

/* The mean speed sqrt(8kT / (pi m)). */
static double mean_speed(double t)
{
    return sqrt(8.0 * K_B * t / (M_PI * hs_mass()));
}

/* Hard-sphere viscosity, first Chapman-Enskog approximation (Bird 1994 eq. 4.62, omega = 1/2). */
static double hs_mu1(double t)
{
    kedr_dsmc_species s = dt_hard_sphere();
    return 5.0 / 16.0 * sqrt(M_PI * s.mass * K_B * t) / (M_PI * s.d_ref * s.d_ref);
}

static kedr_dsmc_case channel_case(const channel *ch, int seed)
{
    kedr_dsmc_species hs = dt_hard_sphere();
    double n = 1.0 / (sqrt(2.0) * M_PI * hs.d_ref * hs.d_ref * ch->lambda);
    double dy = ch->gap / ch->ny_gap, tm = 0.5 * (ch->t_lo + ch->t_hi);
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "couette");
    c.hi[0] = dy * ch->nx;
    c.hi[1] = ch->gap + 2 * dy;
    c.nx = ch->nx;
    c.ny = ch->ny_gap + 2;
    c.side[KEDR_DSMC_XMIN] = c.side[KEDR_DSMC_XMAX] = KEDR_DSMC_PERIODIC;
    c.side[KEDR_DSMC_YMIN] = c.side[KEDR_DSMC_YMAX] = KEDR_DSMC_SPECULAR;
    c.nspecies = 1;
    c.species[0] = hs;
    c.fraction[0] = 1;
    c.number_density = n;
    c.temperature = tm;
    c.wall_temperature = tm;
    c.fill = 0;
    c.dt = ch->dt;
    c.seed = (uint64_t)seed;
    c.weight = n * dy * dy / ch->ppc;
    c.sample_every = 1;
    c.partner = ch->partner;
    c.wall_model = KEDR_DSMC_WALL_DIFFUSE;
    c.nbodies = 2;
    c.nsegments = 2;
    double lower[4] = {0, dy, c.hi[0], dy}, upper[4] = {0, dy + ch->gap, c.hi[0], dy + ch->gap};
    memcpy(c.segment[0], lower, sizeof lower);
    memcpy(c.segment[1], upper, sizeof upper);
    for (int b = 0; b < 2; b++) {
        c.body[b].type = KEDR_DSMC_BODY_PLATE;
        c.body[b].first = b;
        c.body[b].count = 1;
        c.body[b].velocity[0] = b == 0 ? -ch->u / 2 : ch->u / 2;
        c.body[b].temperature = b == 0 ? ch->t_lo : ch->t_hi;
    }
    return c;
}

/* Starts the gap near its steady state, so that the run needs few steps to settle: velocity
 * linear in y (reduced by about the slip), temperature linear with the density at uniform
 * pressure (n ~ 1 / T), Maxwellian molecules, drawn from the seeded generator of test_util.h. */
static void channel_start(kedr_dsmc *sim, const kedr_dsmc_case *c, const channel *ch,
                          uint64_t seed)
{
    double y0 = c->lo[1] + ch->gap / ch->ny_gap, area = ch->gap * (c->hi[0] - c->lo[0]);
    double tmin = fmin(ch->t_lo, ch->t_hi), tmean = 0.5 * (ch->t_lo + ch->t_hi);
    size_t np = (size_t)(c->number_density * area / c->weight + 0.5);
    double *x = tu_host_alloc(np * sizeof(double)), *y = tu_host_alloc(np * sizeof(double));
    double *vx = tu_host_alloc(np * sizeof(double)), *vy = tu_host_alloc(np * sizeof(double));
    double *vz = tu_host_alloc(np * sizeof(double));
    uint64_t st = seed;
    for (size_t i = 0; i < np; i++) {
        double s, t;
        do { /* density proportional to 1 / T(s), by rejection */
            s = tu_uniform(&st);
            t = ch->t_lo + (ch->t_hi - ch->t_lo) * s;
        } while (tu_uniform(&st) * t > tmin);
        x[i] = c->lo[0] + (c->hi[0] - c->lo[0]) * tu_uniform(&st);
        y[i] = y0 + ch->gap * s;
        double sigma = sqrt(K_B * t / hs_mass()), g[3];
        for (int k = 0; k < 3; k++) {
            double u1 = 1.0 - tu_uniform(&st), u2 = tu_uniform(&st);
            g[k] = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        }
        double slip = 1.0 / (1.0 + 2.2 * ch->lambda * tmean / tmin / ch->gap);
        vx[i] = ch->u * (s - 0.5) * slip + sigma * g[0];
        vy[i] = sigma * g[1];
        vz[i] = sigma * g[2];
    }
    TU_OK(kedr_dsmc_set_particles(sim, np, x, y, vx, vy, vz, NULL, NULL));
    free(x);
    free(y);
    free(vx);
    free(vy);
    free(vz);
}

/* Least-squares line through (x[i], f[i]), i < n: returns the slope and sets *intercept. */
static double fit_slope(const double *x, const double *f, int n, double *intercept)
{
    double sx = 0, sf = 0, sxx = 0, sxf = 0;
    for (int i = 0; i < n; i++) {
        sx += x[i];
        sf += f[i];
        sxx += x[i] * x[i];
        sxf += x[i] * f[i];
    }
    double slope = (n * sxf - sx * sf) / (n * sxx - sx * sx);
    *intercept = (sf - slope * sx) / n;
    return slope;
}

#define CH_MAX_BATCH 64
#define CH_MAX_FIT 512

/* What a run measured: per batch, the wall shear tau (the x force per area that the gas puts
 * on the lower plate, minus that on the upper one, halved: mu du/dy), the wall heat flux q
 * (into the lower plate, minus into the upper one, halved: kappa dT/dy), the bulk slopes of u_x
 * and of T^(1 + omega) and the bulk mean temperature; the bulk profiles of every batch; the
 * mean number density in the gap. */
typedef struct {
    int nb, nfit;
    double tau[CH_MAX_BATCH], q[CH_MAX_BATCH], du[CH_MAX_BATCH], dtheta[CH_MAX_BATCH];
    double tbulk[CH_MAX_BATCH];
    double y[CH_MAX_FIT], u[CH_MAX_BATCH][CH_MAX_FIT], theta[CH_MAX_BATCH][CH_MAX_FIT];
    double n_gap; /* mean number density in the gap, m^-3 */
} ch_result;

/* Runs the channel: warm steps, then nb batches of len steps; the bulk is the cells whose
 * centres lie within `bulk` of the gap's half width from its middle. mask: the stages. */
static void channel_run(kedr_ctx *ctx, const channel *ch, int seed, int warm, int nb, int len,
                        double bulk, unsigned mask, ch_result *res)
{
    memset(res, 0, sizeof *res);
    kedr_dsmc_case c = channel_case(ch, seed);
    c.sample_start = warm;
    double omega = c.species[0].omega;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    channel_start(sim, &c, ch, 1000u + (uint64_t)seed);
    for (int s = 0; s < warm; s++)
        TU_OK(kedr_dsmc_step_stages(sim, mask));
    double dy = ch->gap / ch->ny_gap, mid = c.lo[1] + dy + 0.5 * ch->gap;
    int first = -1;
    for (int j = 1; j <= ch->ny_gap; j++) {
        double yc = c.lo[1] + (j + 0.5) * dy;
        if (fabs(yc - mid) <= bulk * 0.5 * ch->gap && res->nfit < CH_MAX_FIT) {
            if (first < 0)
                first = j;
            res->y[res->nfit++] = yc - mid;
        }
    }
    res->nb = nb;
    double ngap = 0;
    for (int b = 0; b < nb; b++) {
        TU_OK(kedr_dsmc_reset_samples(sim));
        for (int s = 0; s < len; s++)
            TU_OK(kedr_dsmc_step_stages(sim, mask));
        kedr_dsmc_surface sf;
        kedr_dsmc_fields f;
        TU_OK(kedr_dsmc_get_surface(sim, &sf));
        TU_OK(kedr_dsmc_get_fields(sim, &f));
        double shear = 0, heat = 0, len_in = 0;
        for (size_t e = 0; e < sf.nelem; e++) {
            int lower = sf.body[e] == 0 && sf.ny[e] > 0.5;
            int upper = sf.body[e] == 1 && sf.ny[e] < -0.5;
            if (lower || upper) { /* the faces towards the gap */
                /* shear is along t = (-ny, nx): -F_x on the lower face, +F_x on the upper one,
                 * and both are -mu du/dy */
                shear -= sf.shear[e] * sf.length[e];
                heat += (lower ? 1 : -1) * sf.heat_flux[e] * sf.length[e];
                len_in += sf.length[e];
            }
        }
        res->tau[b] = shear / len_in;
        res->q[b] = heat / len_in;
        double tsum = 0;
        for (int i = 0; i < res->nfit; i++) { /* row means (the columns are alike) */
            double u = 0, t = 0;
            for (int k = 0; k < c.nx; k++) {
                size_t cell = (size_t)(first + i) * (size_t)c.nx + (size_t)k;
                u += f.ux[cell] / c.nx;
                t += f.temperature[cell] / c.nx;
            }
            res->u[b][i] = u;
            res->theta[b][i] = pow(t, 1.0 + omega);
            tsum += t;
        }
        for (size_t cell = (size_t)c.nx; cell < (size_t)c.nx * (size_t)(ch->ny_gap + 1); cell++)
            ngap += f.number_density[cell] / ((double)c.nx * ch->ny_gap * nb);
        res->tbulk[b] = tsum / res->nfit;
        double a;
        res->du[b] = fit_slope(res->y, res->u[b], res->nfit, &a);
        res->dtheta[b] = fit_slope(res->y, res->theta[b], res->nfit, &a);
        kedr_dsmc_surface_free(&sf);
        kedr_dsmc_fields_free(&f);
    }
    res->n_gap = ngap;
    kedr_dsmc_destroy(sim);
}

static void mean_err(const double *v, int n, double *mean, double *err)
{
    double s = 0, s2 = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *mean = s / n;
    for (int i = 0; i < n; i++)
        s2 += (v[i] - *mean) * (v[i] - *mean);
    *err = n > 1 ? sqrt(s2 / (n - 1) / n) : HUGE_VAL;
}

/* chi^2 per degree of freedom of a straight line through the batch-averaged profile f, with
 * each point's variance from the spread of its batch values. */
static double line_chi2(const ch_result *r, const double f[][CH_MAX_FIT])
{
    double mean[CH_MAX_FIT], var[CH_MAX_FIT], a;
    for (int i = 0; i < r->nfit; i++) {
        double e;
        double col[CH_MAX_BATCH];
        for (int b = 0; b < r->nb; b++)
            col[b] = f[b][i];
        mean_err(col, r->nb, &mean[i], &e);
        var[i] = e * e;
    }
    double slope = fit_slope(r->y, mean, r->nfit, &a), chi2 = 0;
    for (int i = 0; i < r->nfit; i++) {
        double d = mean[i] - (a + slope * r->y[i]);
        chi2 += d * d / var[i];
    }
    return chi2 / (r->nfit - 2);
}

/* Sizes and tolerances: the CI run (seconds on 2 cores) or, with --full, the runs whose results
 * docs/validation.md lists (more cells, molecules and samples; minutes). */
typedef struct {
    int nx, ny_gap, warm, nb, len;
    double ppc;
    double max_err;  /* largest standard error a ratio may have */
    double allow;    /* discretisation allowance added to 4 standard errors */
} ch_size;

static ch_size size_of(int full)
{
    ch_size ci = {4, 80, 600, 20, 300, 30, 0.035, 0.01};
    ch_size big = {8, 160, 1500, 40, 500, 20, 0.012, 0.005};
    /* KEDR_TEST_QUICK: the CI cells and molecules per cell (so the same discretisation
     * allowance), 1 column, not 4 (the flow is one-dimensional), 10 batches, not 20: 8x fewer
     * samples. The bound on the standard error widens by sqrt(8), and by a further 1.25 as 10
     * batches give it only to about 24%. Shorter batches or fewer molecules a cell do not work
     * here: the profile's slow modes make short batch means noisier than sqrt(n) predicts, and
     * 15 molecules a cell bias the heat flux by several percent. */
    ch_size quick = {1, 80, 600, 10, 300, 30, 0.035 * dt_widen(8) * 1.25, 0.01};
    return full ? big : tu_quick() ? quick : ci;
}

/* Couette flow at Kn = 0.05 (lambda = 1 mm, gap 20 mm), plates at -100 and +100 m/s (Mach 0.32
 * each), walls at 273 K: wall shear over mu du/dy in the bulk, and a straight bulk profile. */
static void test_couette(kedr_ctx *ctx, const char *bname, const ch_size *z,
                         kedr_dsmc_partner partner)
{
    channel ch = {z->nx, 1e-3, 20e-3, z->ny_gap, z->ppc, 273, 273, 200, 0, partner};
    const char *pname = partner == KEDR_DSMC_PARTNER_NEAREST ? "nearest" : "random";
    ch.dt = 0.2 * ch.lambda / mean_speed(273);
    ch_result *r = tu_host_alloc(sizeof *r);
    channel_run(ctx, &ch, 3, z->warm, z->nb, z->len, 0.6, KEDR_DSMC_ALL_STAGES, r);
    int nb = r->nb;
    double ratio[CH_MAX_BATCH], tau, tau_err, du, du_err, tb, tb_err, rm, re;
    for (int b = 0; b < nb; b++)
        ratio[b] = r->tau[b] / (HS_MU_FACTOR * hs_mu1(r->tbulk[b]) * r->du[b]);
    mean_err(r->tau, nb, &tau, &tau_err);
    mean_err(r->du, nb, &du, &du_err);
    mean_err(r->tbulk, nb, &tb, &tb_err);
    mean_err(ratio, nb, &rm, &re);
    double chi2 = line_chi2(r, (const double (*)[CH_MAX_FIT])r->u);
    printf("  %s couette Kn 0.05, %s partners: wall shear %.5g +- %.2g Pa, bulk du/dy %.5g +- "
           "%.2g 1/s at %.2f K: tau / (1.016 mu_1 du/dy) = %.4f +- %.4f; straight line: "
           "chi2/dof %.2f (%d cells)\n", bname, pname, tau, tau_err, du, du_err, tb, rm, re, chi2,
           r->nfit);
    TU_CHECK(re < z->max_err && fabs(rm - 1) < 4 * re + z->allow,
             "%s couette, %s partners: tau / (mu du/dy) = %.4f +- %.4f, expected 1 within 4 sd + "
             "%g (sd at most %g)", bname, pname, rm, re, z->allow, z->max_err);
    TU_CHECK(chi2 < 2.0, "%s couette, %s partners: the bulk u_x profile is not straight: "
             "chi2/dof %.2f", bname, pname, chi2);
    free(r);
}

/* Fourier flow at Kn = 0.05 (lambda = 1 mm at the mean density, gap 20 mm), walls at rest at
 * 200 K and 400 K: wall heat flux over kappa dT/dy in the bulk. */
static void test_fourier(kedr_ctx *ctx, const char *bname, const ch_size *z)
{
    channel ch = {z->nx, 1e-3, 20e-3, z->ny_gap, z->ppc, 200, 400, 0, 0, KEDR_DSMC_PARTNER_RANDOM};
    ch.dt = 0.2 * ch.lambda / mean_speed(400);
    ch_result *r = tu_host_alloc(sizeof *r);
    channel_run(ctx, &ch, 4, z->warm, z->nb, z->len, 0.6, KEDR_DSMC_ALL_STAGES, r);
    int nb = r->nb;
    kedr_dsmc_species hs = dt_hard_sphere();
    double omega = hs.omega, tr = hs.t_ref;
    double kappa_r = HS_KAPPA_FACTOR * 3.75 * K_B / hs.mass * hs_mu1(tr);
    double ratio[CH_MAX_BATCH], q, q_err, rm, re;
    for (int b = 0; b < nb; b++)
        ratio[b] = r->q[b] / (kappa_r * pow(tr, -omega) / (1 + omega) * r->dtheta[b]);
    mean_err(r->q, nb, &q, &q_err);
    mean_err(ratio, nb, &rm, &re);
    double chi2 = line_chi2(r, (const double (*)[CH_MAX_FIT])r->theta);
    printf("  %s fourier Kn 0.05: wall heat flux %.5g +- %.2g W/m^2: q / (1.025 kappa_1 dT/dy) = "
           "%.4f +- %.4f; T^1.5 straight: chi2/dof %.2f\n", bname, q, q_err, rm, re, chi2);
    TU_CHECK(re < z->max_err && fabs(rm - 1) < 4 * re + z->allow,
             "%s fourier: q / (kappa dT/dy) = %.4f +- %.4f, expected 1 within 4 sd + %g "
             "(sd at most %g)", bname, rm, re, z->allow, z->max_err);
    TU_CHECK(chi2 < 2.0, "%s fourier: the bulk T^1.5 profile is not straight: chi2/dof %.2f",
             bname, chi2);
    free(r);
}

/* Free-molecular heat flux between diffuse plates at T1 < T2 (derived here): the gas is two
 * half-range Maxwellians, molecules going up at T1 with density n1 / 2 and going down at T2 with
 * n2 / 2, the mean density n = (n1 + n2) / 2. Equal number fluxes both ways,
 * G = n1 sqrt(k T1 / 2 pi m) = n2 sqrt(k T2 / 2 pi m), and each molecule carries 2 k T of the
 * wall it left, so q = 2 k G (T2 - T1) = n k sqrt(8 k / (pi m)) sqrt(T1 T2) (sqrt T2 - sqrt T1).
 * (The same result as the free-molecular limit of the plane heat-transfer problem in Bird 1994
 * ch. 7 and Liu & Lees 1961.) */
static double fm_heat_flux(double n, double t1, double t2, double m)
{
    return n * K_B * sqrt(8.0 * K_B / (M_PI * m)) * sqrt(t1 * t2) * (sqrt(t2) - sqrt(t1));
}

/* Plates 20 mm apart at 250 K and 350 K, collisions off (Kn = infinity). */
static void test_free_molecular(kedr_ctx *ctx, const char *bname, int full)
{
    /* KEDR_TEST_QUICK: 50 molecules a cell and batches of 100 steps, 8x fewer samples: both
     * bounds widen by sqrt(8) */
    int quick = !full && tu_quick();
    double ppc = full ? 500 : quick ? 50 : 100, w = quick ? dt_widen(8) : 1;
    channel ch = {4, 1e-3, 20e-3, 20, ppc, 250, 350, 0, 0, KEDR_DSMC_PARTNER_RANDOM};
    ch.dt = 0.5 * ch.gap / ch.ny_gap / mean_speed(300);
    ch_result *r = tu_host_alloc(sizeof *r);
    channel_run(ctx, &ch, 5, quick ? 100 : 400, 20, quick ? 100 : 400, 0.6, CH_FREE, r);
    double q, q_err;
    mean_err(r->q, r->nb, &q, &q_err);
    double want = fm_heat_flux(r->n_gap, 250, 350, hs_mass());
    printf("  %s free-molecular heat flux: %.5g +- %.2g W/m^2, closed form %.5g: %+.2f%% +- "
           "%.2f%%\n", bname, q, q_err, want, 100 * (q / want - 1), 100 * q_err / want);
    TU_CHECK(q_err < (full ? 0.002 : 0.007 * w) * want &&
                 fabs(q / want - 1) < (full ? 0.01 : 0.02 * w),
             "%s free-molecular heat flux %g +- %g W/m^2, expected %g", bname, q, q_err, want);
    free(r);
}

/* A body's own wall model: the upper plate specular ([body] wall = specular), the lower one
 * diffuse at 250 K, the upper one moving along itself. A specular wall exchanges no energy and
 * no tangential momentum with the molecules, so its heat flux and shear are zero to rounding
 * (the sums in and out are added separately), while the diffuse plate's are not. */
static void test_specular_body(kedr_ctx *ctx, const char *bname)
{
    channel ch = {4, 1e-3, 20e-3, 20, 50, 250, 350, 200, 0, KEDR_DSMC_PARTNER_RANDOM};
    ch.dt = 0.5 * ch.gap / ch.ny_gap / mean_speed(300);
    kedr_dsmc_case c = channel_case(&ch, 6);
    c.body[1].own_wall = 1;
    c.body[1].wall_model = KEDR_DSMC_WALL_SPECULAR;
    c.sample_start = 0;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    channel_start(sim, &c, &ch, 77);
    /* quick: 50 steps still hit both plates many times; the checks hold to rounding */
    for (int s = 0; s < (int)tu_scale(200, 50); s++)
        TU_OK(kedr_dsmc_step_stages(sim, CH_FREE));
    kedr_dsmc_surface sf;
    TU_OK(kedr_dsmc_get_surface(sim, &sf));
    /* the scale of the energy flux each way: n k T cbar */
    double scale = c.number_density * K_B * 300 * mean_speed(300), q[2] = {0, 0}, tau[2] = {0, 0};
    for (size_t e = 0; e < sf.nelem; e++) {
        int b = sf.body[e];
        if ((b == 0 && sf.ny[e] > 0.5) || (b == 1 && sf.ny[e] < -0.5)) {
            q[b] = fmax(q[b], fabs(sf.heat_flux[e]));
            tau[b] = fmax(tau[b], fabs(sf.shear[e]));
        }
    }
    printf("  %s specular upper plate: |q| %.2g W/m^2, |tau| %.2g Pa; diffuse lower plate: "
           "|q| %.3g W/m^2, |tau| %.3g Pa\n", bname, q[1], tau[1], q[0], tau[0]);
    TU_CHECK(q[1] < 1e-9 * scale && tau[1] < 1e-9 * scale / mean_speed(300) &&
                 q[0] > 1e-3 * scale && tau[0] > 1e-3 * scale / mean_speed(300),
             "%s specular body: |q| %g, |tau| %g (diffuse: %g, %g)", bname, q[1], tau[1], q[0],
             tau[0]);
    kedr_dsmc_surface_free(&sf);
    kedr_dsmc_destroy(sim);
}

int main(int argc, char **argv)
{
    int full = argc > 1 && strcmp(argv[1], "--full") == 0;
    ch_size z = size_of(full);
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++) {
        kedr_ctx *ctx = tu_ctx(list[i]);
        const char *bname = kedr_backend_name(list[i]);
        test_couette(ctx, bname, &z, KEDR_DSMC_PARTNER_RANDOM);
        test_couette(ctx, bname, &z, KEDR_DSMC_PARTNER_NEAREST);
        test_fourier(ctx, bname, &z);
        test_free_molecular(ctx, bname, full);
        test_specular_body(ctx, bname);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_dsmc_couette");
}
