/* DSMC bodies and walls in the free-molecular limit (collisions disabled: only generation, move
 * and indexing run), on every back end:
 *  - drag of a flat plate normal to the flow and of a circular cylinder, both with diffuse walls
 *    at the freestream temperature, against the closed-form free-molecular coefficients
 *    (Schaaf & Chambre, "Flow of Rarefied Gases", 1961; Bird 1994, chapter 7): within 1%, with
 *    the statistical error from batch means printed and required to be under 0.4%;
 *  - specular walls transfer no shear;
 *  - Maxwell's model with accommodation a gives a drag between, and linear in a;
 *  - cut cells: gas volumes exact, no molecules inside bodies, no-data (NaN) cells inside, and
 *    the density of cut cells at rest right (so densities divide by the gas volume);
 *  - a periodic box conserves particles, momentum and energy. */
#include "test_dsmc_util.h"

/* Plate normal to the flow, both sides, diffuse, speed ratio s, wall/gas temperature ratio tr:
 * Cd = 2 exp(-s^2) / (sqrt(pi) s) + 2 (1 + 1 / (2 s^2)) erf(s) + sqrt(pi tr) / s. */
static double cd_plate(double s, double tr)
{
    return 2.0 * exp(-s * s) / (sqrt(M_PI) * s) + 2.0 * (1.0 + 0.5 / (s * s)) * erf(s) +
           sqrt(M_PI * tr) / s;
}

#define FM_S 2.0
#define FM_T 300.0
#define FM_FREE (KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE) | \
                 KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX))

/* A 0.15 m square with inflow on every side, so without collisions the molecules reaching the
 * body are exactly the freestream's; 15 x 15 cells, 50 molecules per cell. */
static kedr_dsmc_case fm_case(int circle, kedr_dsmc_wall wall, double accommodation)
{
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "fm");
    c.hi[0] = c.hi[1] = 0.15;
    c.nx = c.ny = 15;
    for (int s = 0; s < 4; s++)
        c.side[s] = KEDR_DSMC_INFLOW;
    c.nspecies = 1;
    c.species[0] = dt_hard_sphere();
    c.fraction[0] = 1;
    c.number_density = 1e20;
    c.temperature = c.wall_temperature = FM_T;
    c.velocity[0] = FM_S * sqrt(2.0 * K_B * FM_T / c.species[0].mass);
    c.fill = 1;
    c.dt = 5e-6;
    c.steps = 0;
    c.seed = 11;
    /* quick: 10 molecules a cell (and half the steps a batch in run_cd's callers) */
    c.weight = c.number_density * 0.01 * 0.01 / (double)tu_scale(50, 10);
    c.sample_start = 150;
    c.sample_every = 1;
    c.wall_model = wall;
    c.accommodation = accommodation;
    c.nbodies = 1;
    if (circle) {
        c.body[0].type = KEDR_DSMC_BODY_CIRCLE;
        c.body[0].center[0] = c.body[0].center[1] = 0.075;
        c.body[0].radius = 0.05;
    } else {
        c.body[0].type = KEDR_DSMC_BODY_PLATE;
        c.body[0].count = 1;
        c.nsegments = 1;
        double seg[4] = {0.075, 0.025, 0.075, 0.125};
        memcpy(c.segment[0], seg, sizeof seg);
    }
    return c;
}

/* Runs warm-up, then nb batches of len steps; returns the mean Cd and its standard error. */
static double run_cd(kedr_ctx *ctx, const kedr_dsmc_case *c, int nb, int len, double *err,
                     double *max_cf)
{
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, c, &sim));
    if (!sim)
        return NAN;
    for (int64_t s = 0; s < c->sample_start; s++)
        TU_OK(kedr_dsmc_step_stages(sim, FM_FREE));
    double sum = 0, sum2 = 0;
    *max_cf = 0;
    for (int b = 0; b < nb; b++) {
        TU_OK(kedr_dsmc_reset_samples(sim));
        for (int s = 0; s < len; s++)
            TU_OK(kedr_dsmc_step_stages(sim, FM_FREE));
        kedr_dsmc_surface sf;
        TU_OK(kedr_dsmc_get_surface(sim, &sf));
        TU_CHECK(sf.steps == len && sf.nbodies == 1, "%lld steps sampled", (long long)sf.steps);
        sum += sf.cd[0];
        sum2 += sf.cd[0] * sf.cd[0];
        for (size_t e = 0; e < sf.nelem; e++)
            *max_cf = fmax(*max_cf, fabs(sf.cf[e]));
        kedr_dsmc_surface_free(&sf);
    }
    kedr_dsmc_destroy(sim);
    double mean = sum / nb;
    *err = sqrt(fmax(0.0, sum2 / nb - mean * mean) / (nb - 1));
    return mean;
}

static void test_drag(kedr_ctx *ctx, const char *bname)
{
    /* quick: a fifth of the molecules and half the steps, 10x fewer samples: the statistical
     * bounds widen by sqrt(10) */
    const double w = dt_widen(10);
    const int half = tu_quick() ? 2 : 1;
    for (int circle = 0; circle < 2; circle++) {
        kedr_dsmc_case c = fm_case(circle, KEDR_DSMC_WALL_DIFFUSE, 1);
        double err = 0, cf = 0, cd = run_cd(ctx, &c, 10, 150 / half, &err, &cf);
        double exact = circle ? dt_cd_cylinder(FM_S, 1.0) : cd_plate(FM_S, 1.0);
        printf("  %s %s: Cd %.4f +- %.4f (1 sigma, %.2f%%), free-molecular %.4f, off by %.2f%%\n",
               bname, circle ? "cylinder" : "plate", cd, err, 100 * err / exact, exact,
               100 * (cd - exact) / exact);
        TU_CHECK(fabs(cd - exact) < 0.01 * w * exact, "%s %s Cd %g vs %g", bname,
                 circle ? "cylinder" : "plate", cd, exact);
        TU_CHECK(err < 0.004 * w * exact, "%s statistical error %g too large for the 1%% test",
                 bname, err);
    }
    /* Specular: no shear anywhere (only rounding). Maxwell at a = 1/2: the mean of the two. */
    kedr_dsmc_case c = fm_case(1, KEDR_DSMC_WALL_SPECULAR, 1);
    double es = 0, cf = 0, cd_s = run_cd(ctx, &c, 4, 100 / half, &es, &cf);
    TU_CHECK(cf < 1e-9, "%s specular walls: |Cf| up to %g", bname, cf);
    c = fm_case(1, KEDR_DSMC_WALL_MAXWELL, 0.5);
    double em = 0, cd_m = run_cd(ctx, &c, 4, 100 / half, &em, &cf);
    double mid = 0.5 * (cd_s + dt_cd_cylinder(FM_S, 1.0));
    printf("  %s cylinder: specular Cd %.4f, Maxwell a = 0.5 Cd %.4f (expected %.4f)\n", bname,
           cd_s, cd_m, mid);
    TU_CHECK(fabs(cd_m - mid) < 0.02 * w * mid, "%s Maxwell Cd %g vs %g", bname, cd_m, mid);
}

/* Cut cells around a circle and a box: exact gas volumes, empty solid cells, right density. */
static void test_cut_cells(kedr_ctx *ctx, const char *bname)
{
    kedr_dsmc_case c = dt_box(1.0, 20, 1e20, 300, 20, 1e-6);
    c.nbodies = 2;
    c.body[0].type = KEDR_DSMC_BODY_CIRCLE;
    c.body[0].center[0] = 0.3123;
    c.body[0].center[1] = 0.4456;
    c.body[0].radius = 0.2077;
    c.body[1].type = KEDR_DSMC_BODY_BOX;
    c.body[1].first = 0;
    c.body[1].count = 4;
    c.nsegments = 4;
    double box[4][2] = {{0.62, 0.61}, {0.87, 0.61}, {0.87, 0.93}, {0.62, 0.93}};
    for (int k = 0; k < 4; k++) {
        c.segment[k][0] = box[k][0];
        c.segment[k][1] = box[k][1];
        c.segment[k][2] = box[(k + 1) % 4][0];
        c.segment[k][3] = box[(k + 1) % 4][1];
    }
    c.wall_model = KEDR_DSMC_WALL_DIFFUSE;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    double vol[400], total = 0, cell = 0.05 * 0.05;
    int solid = 0, cut = 0, bad = 0;
    TU_OK(kedr_dsmc_gas_volume(sim, vol));
    for (int i = 0; i < 400; i++) {
        total += vol[i];
        solid += vol[i] == 0;
        cut += vol[i] > 0 && vol[i] < cell * (1 - 1e-12);
        bad += !(vol[i] >= 0 && vol[i] <= cell * (1 + 1e-12));
    }
    double expect = 1.0 - M_PI * 0.2077 * 0.2077 - 0.25 * 0.32;
    TU_CHECK(fabs(total - expect) < 1e-12, "%s gas volume %.15g vs %.15g", bname, total, expect);
    TU_CHECK(bad == 0 && solid > 20 && cut > 20, "%s: %d solid, %d cut, %d bad cells", bname,
             solid, cut, bad);
    /* At rest with walls at the gas temperature, the density stays uniform: cut cells must
     * show the freestream density when divided by their gas volume. */
    for (int s = 0; s < 40; s++)
        TU_OK(kedr_dsmc_step(sim));
    dt_particles p = dt_get(sim);
    size_t inside = 0;
    for (size_t i = 0; i < p.n; i++) {
        double dx = p.x[i] - 0.3123, dy = p.y[i] - 0.4456;
        inside += dx * dx + dy * dy < 0.2077 * 0.2077 ||
                  (p.x[i] > 0.62 && p.x[i] < 0.87 && p.y[i] > 0.61 && p.y[i] < 0.93);
    }
    TU_CHECK(inside == 0 && p.n > 0, "%s: %zu of %zu molecules inside bodies", bname, inside, p.n);
    dt_free(&p);
    kedr_dsmc_fields f;
    TU_OK(kedr_dsmc_get_fields(sim, &f));
    double n_cut = 0, v_cut = 0;
    int nan_ok = 1;
    for (int i = 0; i < 400; i++) {
        if (vol[i] == 0)
            nan_ok &= isnan(f.number_density[i]) && isnan(f.temperature[i]);
        else if (vol[i] < 0.7 * cell) {
            n_cut += f.number_density[i] * vol[i];
            v_cut += vol[i];
        }
    }
    double ratio = n_cut / v_cut / 1e20;
    printf("  %s cut cells (gas fraction < 0.7): mean density / freestream %.4f\n", bname, ratio);
    TU_CHECK(nan_ok, "%s: solid cells are not NaN", bname);
    TU_CHECK(fabs(ratio - 1) < 0.05, "%s cut-cell density ratio %g", bname, ratio);
    kedr_dsmc_fields_free(&f);
    kedr_dsmc_destroy(sim);
}

/* A doubly periodic box with a drift: nothing leaves, momentum and energy are kept. */
static void test_periodic(kedr_ctx *ctx, const char *bname)
{
    kedr_dsmc_case c = dt_box(1e-3, 8, 1e22, 300, 30, 2e-8);
    for (int s = 0; s < 4; s++)
        c.side[s] = KEDR_DSMC_PERIODIC;
    c.velocity[0] = 400;
    c.velocity[1] = -250;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    dt_particles a = dt_get(sim);
    double m0[3], e0, sc;
    dt_totals(&c, &a, m0, &e0, &sc);
    uint64_t coll = 0;
    for (int s = 0; s < 50; s++) {
        TU_OK(kedr_dsmc_step(sim));
        kedr_dsmc_stats st;
        kedr_dsmc_get_stats(sim, &st);
        coll += st.collisions;
    }
    dt_particles b = dt_get(sim);
    double m1[3], e1, sc1;
    dt_totals(&c, &b, m1, &e1, &sc1);
    TU_CHECK(b.n == a.n && a.n > 1000, "%s: %zu particles became %zu", bname, a.n, b.n);
    for (int d = 0; d < 3; d++)
        TU_CHECK(fabs(m1[d] - m0[d]) < 1e-12 * sc, "%s momentum[%d] %g -> %g", bname, d, m0[d],
                 m1[d]);
    TU_CHECK(fabs(e1 - e0) < 1e-12 * e0 && coll > 0, "%s energy %g -> %g (%llu collisions)",
             bname, e0, e1, (unsigned long long)coll);
    int out = 0;
    for (size_t i = 0; i < b.n; i++)
        out += !(b.x[i] >= 0 && b.x[i] <= 1e-3 && b.y[i] >= 0 && b.y[i] <= 1e-3);
    TU_CHECK(out == 0, "%s: %d particles outside the periodic box", bname, out);
    dt_free(&a);
    dt_free(&b);
    kedr_dsmc_destroy(sim);
}

/* Free-molecular Couette flow: two diffuse plates moving at -U/2 and +U/2 across a periodic
 * channel. Each molecule that reaches a plate last left the other one, so it brings the other
 * plate's mean tangential velocity and leaves with this one's: the shear is the one-way number
 * flux n cbar / 4 of a Maxwellian gas times m U: tau = rho cbar U / 4 with the mean speed
 * cbar = sqrt(8 k T_w / (pi m)) (the gas between diffuse walls at T_w is made of
 * half-Maxwellians at T_w). The plates span the periodic width, so the gap keeps its fill
 * density n. */
static void test_couette(kedr_ctx *ctx, const char *bname)
{
    const double n = 1e19, t = 300, u = 200, gap = 0.1;
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "couette");
    c.hi[0] = 0.1;
    c.hi[1] = gap + 0.02;
    c.nx = 10;
    c.ny = 12;
    c.side[KEDR_DSMC_XMIN] = c.side[KEDR_DSMC_XMAX] = KEDR_DSMC_PERIODIC;
    c.side[KEDR_DSMC_YMIN] = c.side[KEDR_DSMC_YMAX] = KEDR_DSMC_SPECULAR;
    c.nspecies = 1;
    c.species[0] = dt_hard_sphere();
    c.fraction[0] = 1;
    c.number_density = n;
    c.temperature = c.wall_temperature = t;
    c.fill = 1;
    c.dt = 1e-5;
    c.seed = 5;
    /* quick: 50 molecules a cell, batches of 50 steps: 10x fewer samples, the bounds widen by
     * sqrt(10) */
    c.weight = n * 0.01 * 0.01 / (double)tu_scale(250, 50);
    const double w = dt_widen(10);
    c.sample_start = 200;
    c.sample_every = 1;
    c.wall_model = KEDR_DSMC_WALL_DIFFUSE;
    c.nbodies = 2;
    c.nsegments = 2;
    double lower[4] = {0, 0.01, 0.1, 0.01}, upper[4] = {0, 0.01 + gap, 0.1, 0.01 + gap};
    memcpy(c.segment[0], lower, sizeof lower);
    memcpy(c.segment[1], upper, sizeof upper);
    for (int b = 0; b < 2; b++) {
        c.body[b].type = KEDR_DSMC_BODY_PLATE;
        c.body[b].first = b;
        c.body[b].count = 1;
        c.body[b].velocity[0] = b == 0 ? -u / 2 : u / 2;
    }
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    for (int64_t s = 0; s < c.sample_start; s++)
        TU_OK(kedr_dsmc_step_stages(sim, FM_FREE));
    /* Batches of steps give the statistical error of the mean shear on each plate's inner side. */
    const int nb = 10, len = (int)tu_scale(100, 50);
    double sum[2] = {0, 0}, sum2[2] = {0, 0};
    for (int k = 0; k < nb; k++) {
        TU_OK(kedr_dsmc_reset_samples(sim));
        for (int s = 0; s < len; s++)
            TU_OK(kedr_dsmc_step_stages(sim, FM_FREE));
        kedr_dsmc_surface sf;
        TU_OK(kedr_dsmc_get_surface(sim, &sf));
        double tau[2] = {0, 0}, len_in[2] = {0, 0};
        for (size_t e = 0; e < sf.nelem; e++) {
            int b = sf.body[e];
            if ((b == 0 && sf.ny[e] > 0.5) || (b == 1 && sf.ny[e] < -0.5)) { /* facing the gap */
                tau[b] += fabs(sf.shear[e]) * sf.length[e];
                len_in[b] += sf.length[e];
            }
        }
        for (int b = 0; b < 2; b++) {
            tau[b] /= len_in[b];
            sum[b] += tau[b];
            sum2[b] += tau[b] * tau[b];
        }
        kedr_dsmc_surface_free(&sf);
    }
    kedr_dsmc_destroy(sim);
    double m = c.species[0].mass, cbar = sqrt(8 * K_B * t / (M_PI * m));
    double want = n * m * cbar * u / 4;
    for (int b = 0; b < 2; b++) {
        double mean = sum[b] / nb, err = sqrt(fmax(0.0, sum2[b] / nb - mean * mean) / (nb - 1));
        printf("  %s couette plate %d: shear %.5g Pa, free-molecular %.5g Pa: %+.2f%% +- %.2f%%\n",
               bname, b, mean, want, 100 * (mean / want - 1), 100 * err / want);
        TU_CHECK(fabs(mean / want - 1) < 0.02 * w && err < 0.01 * w * want,
                 "%s couette plate %d: shear %g +- %g Pa, expected %g", bname, b, mean, err, want);
    }
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++) {
        kedr_ctx *ctx = tu_ctx(list[i]);
        const char *bname = kedr_backend_name(list[i]);
        test_drag(ctx, bname);
        test_cut_cells(ctx, bname);
        test_periodic(ctx, bname);
        test_couette(ctx, bname);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_dsmc_freemolecular");
}
