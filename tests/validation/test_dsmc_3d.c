/* The 3D mode of kedr dsmc, on every back end:
 *  (a) free-molecular drag of a sphere with diffuse walls (T_w = T_inf, s = 2) against the
 *      closed form (Schaaf & Chambre, "Flow of Rarefied Gases", 1961; Bird 1994 section 7.6):
 *      Cd = (2s^2+1)/(sqrt(pi) s^3) e^{-s^2} + (4s^4+4s^2-1)/(2s^4) erf(s)
 *           + 2 sqrt(pi)/(3s) sqrt(T_w/T_inf), reference area pi r^2: within 1.5%, the
 *      statistical error (batch means) printed and required under 0.5%;
 *      A cone along the flow (half angle a, base included, reference area pi R^2) against the
 *      local free-molecular coefficients of Schaaf & Chambre integrated over its surface, exact
 *      here because every lateral element meets the flow at the same angle:
 *      Cd = Cp(s sin a) + cot(a) Cf(s sin a) - Cp(-s), with per element (s_n = s sin(theta), theta
 *      the angle between flow and surface) Cp(s_n) = [s_n/sqrt(pi) e^{-s_n^2} + (1/2 + s_n^2)
 *      (1 + erf s_n)] / s^2 + sqrt(T_w/T) [e^{-s_n^2} + sqrt(pi) s_n (1 + erf s_n)] / (2 s^2) and
 *      Cf = cos(theta) [e^{-s_n^2} + sqrt(pi) s_n (1 + erf s_n)] / (sqrt(pi) s): within 1.5%;
 *  (b) a closed specular box conserves count and energy over full steps with collisions, a
 *      periodic box also momentum (1e-12 relative), and the equilibrium collision rate of hard
 *      spheres matches Bird 1994 eq. 4.64 (with N (N - 1) / 2 pairs per cell of volume dx^3);
 *  (c) inflow through a z side: the entered count against the one-sided flux (5 sd of the
 *      per-face rounding) and the half-range density n (1 + erf s) / 2 just inside (1%);
 *  (d) the result does not depend on the axis naming: the same channel along x, y and z gives
 *      the same entered counts and cell densities bit for bit (the random streams are keyed by
 *      face, particle and cell, and a 1-cell cross-section maps cells one to one), and a cube
 *      in free-molecular flow along x, y and z has the same Cd within 4 combined sd;
 *  (e) cut cells: the gas volume removed by a cuboid is exact, by a sphere and a cone within
 *      2e-4 of their volumes; no molecule starts or ends inside a body; specular walls keep
 *      every molecule's energy (heat flux zero) on sphere, cuboid and cone;
 *  (f) diffuse reflection off a 3D normal: the re-emitted velocity's moments about random normals
 *      (<u.n> = sqrt(pi k T_w / 2m), <(u.n)^2> = 2 k T_w / m, each tangential component mean 0 and
 *      variance k T_w / m, u.n > 0) within 5 standard errors; specular keeps |u| and flips u.n;
 *  (g) particles in and out with z, argument errors, a 3D checkpoint that restarts bit for bit
 *      (cpu), and the CSV / VTK / surface files of a 3D run. */
#include "dsmc/dsmc_kernels.h"
#include "test_dsmc_util.h"

#include <stdio.h>

#define FREE_STAGES (KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE) | \
                     KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX))

/* A cube of side len with n cells a side, hard-sphere gas, every side `side`. */
static kedr_dsmc_case box3(double len, int n, kedr_dsmc_boundary side, double ppc)
{
    kedr_dsmc_case c = dt_box(len, n, 1e20, 300, 1, 1e-6);
    c.dims = 3;
    c.hi[2] = len;
    c.nz = n;
    for (int s = 0; s < 6; s++)
        c.side[s] = side;
    double dx = len / n;
    c.weight = c.number_density * dx * dx * dx / ppc;
    return c;
}

#define FM_S 2.0
#define FM_T 300.0

/* Inflow on all six sides of a 0.15 m cube (6 x 6 x 6 cells), so without collisions the molecules
 * reaching the body are the freestream's; the flow along `axis` at speed ratio FM_S. */
static kedr_dsmc_case fm_case(kedr_dsmc_body_type type, int axis, kedr_dsmc_wall wall)
{
    kedr_dsmc_case c = box3(0.15, 6, KEDR_DSMC_INFLOW, 80);
    c.velocity[axis] = FM_S * sqrt(2.0 * K_B * FM_T / c.species[0].mass);
    c.dt = 5e-6;
    c.seed = 21;
    c.sample_start = 100;
    /* quick: 20 molecules a cell, 4x fewer samples; drag tolerances widen by dt_widen */
    if (tu_quick())
        c.weight *= 4;
    c.wall_model = wall;
    c.nbodies = 1;
    kedr_dsmc_body *b = &c.body[0];
    b->type = type;
    b->center[0] = b->center[1] = b->center[2] = 0.075;
    b->radius = 0.04;
    b->size[0] = b->size[1] = b->size[2] = 0.06;
    if (type == KEDR_DSMC_BODY_CONE) {
        b->center[0] = 0.03;
        b->half_angle = 25;
        b->length = 0.09;
    }
    return c;
}

/* Warm-up, then nb batches of len steps: mean Cd and its standard error; *max_ch the largest
 * |Ch| of any element (zero for specular walls). */
static double run_cd(kedr_ctx *ctx, const kedr_dsmc_case *c, int nb, int len, double *err,
                     double *max_ch)
{
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, c, &sim));
    if (!sim)
        return NAN;
    for (int64_t s = 0; s < c->sample_start; s++)
        TU_OK(kedr_dsmc_step_stages(sim, FREE_STAGES));
    double sum = 0, sum2 = 0;
    *max_ch = 0;
    for (int b = 0; b < nb; b++) {
        TU_OK(kedr_dsmc_reset_samples(sim));
        for (int s = 0; s < len; s++)
            TU_OK(kedr_dsmc_step_stages(sim, FREE_STAGES));
        kedr_dsmc_surface sf;
        TU_OK(kedr_dsmc_get_surface(sim, &sf));
        TU_CHECK(sf.steps == len && sf.nbodies == 1 && sf.dims == 3, "%lld steps sampled",
                 (long long)sf.steps);
        sum += sf.cd[0];
        sum2 += sf.cd[0] * sf.cd[0];
        for (size_t e = 0; e < sf.nelem; e++)
            *max_ch = fmax(*max_ch, fabs(sf.ch[e]));
        kedr_dsmc_surface_free(&sf);
    }
    /* No molecule inside the body at the end. */
    size_t n = 0; /* the count (the call fails for want of room, as intended) */
    kedr_dsmc_get_particles3(sim, 0, &n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    double *x = tu_host_alloc((n + 1) * 8), *y = tu_host_alloc((n + 1) * 8);
    double *z = tu_host_alloc((n + 1) * 8);
    TU_OK(kedr_dsmc_get_particles3(sim, n, &n, x, y, z, NULL, NULL, NULL, NULL, NULL));
    const kedr_dsmc_body *b = &c->body[0];
    size_t inside = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - b->center[0], dy = y[i] - b->center[1], dz = z[i] - b->center[2];
        if (b->type == KEDR_DSMC_BODY_SPHERE)
            inside += dx * dx + dy * dy + dz * dz < b->radius * b->radius * (1 - 1e-12);
        else if (b->type == KEDR_DSMC_BODY_CUBOID)
            inside += fabs(dx) < 0.5 * b->size[0] * (1 - 1e-12) &&
                      fabs(dy) < 0.5 * b->size[1] * (1 - 1e-12) &&
                      fabs(dz) < 0.5 * b->size[2] * (1 - 1e-12);
        else
            inside += dx > 0 && dx < b->length * (1 - 1e-12) &&
                      sqrt(dy * dy + dz * dz) < dx * tan(b->half_angle * M_PI / 180) * (1 - 1e-12);
    }
    TU_CHECK(inside == 0, "%zu of %zu molecules inside the body", inside, n);
    free(x);
    free(y);
    free(z);
    kedr_dsmc_destroy(sim);
    double mean = sum / nb;
    *err = sqrt(fmax(0.0, sum2 / nb - mean * mean) / (nb - 1));
    return mean;
}

static void test_sphere_drag(kedr_ctx *ctx)
{
    kedr_dsmc_case c = fm_case(KEDR_DSMC_BODY_SPHERE, 0, KEDR_DSMC_WALL_DIFFUSE);
    /* quick: 4x fewer molecules (fm_case), half the steps: 8x fewer samples */
    double err = 0, ch = 0, cd = run_cd(ctx, &c, 16, (int)tu_scale(50, 25), &err, &ch);
    double want = dt_cd_sphere(FM_S, 1.0), w = dt_widen(8);
    printf("  sphere, free molecular, diffuse, s = %.1f: Cd = %.5f +- %.5f (1 sd), closed form "
           "%.5f, ratio %.5f\n", FM_S, cd, err, want, cd / want);
    TU_CHECK(fabs(cd / want - 1) < 0.015 * w, "sphere Cd %.5f, closed form %.5f", cd, want);
    TU_CHECK(err / want < 0.005 * w, "sphere Cd sd %.5f too large", err);
}

static void test_cone_drag(kedr_ctx *ctx)
{
    kedr_dsmc_case c = fm_case(KEDR_DSMC_BODY_CONE, 0, KEDR_DSMC_WALL_DIFFUSE);
    double err = 0, ch = 0, cd = run_cd(ctx, &c, 12, (int)tu_scale(50, 25), &err, &ch);
    double want = dt_cd_cone(FM_S, c.body[0].half_angle * M_PI / 180), w = dt_widen(8);
    printf("  cone (half angle %.0f deg), free molecular, diffuse, s = %.1f: Cd = %.5f +- %.5f, "
           "closed form %.5f, ratio %.5f\n", c.body[0].half_angle, FM_S, cd, err, want, cd / want);
    TU_CHECK(fabs(cd / want - 1) < 0.015 * w && err / want < 0.005 * w,
             "cone Cd %.5f +- %.5f, closed form %.5f", cd, err, want);
}

/* A cube along x, y and z: equal Cd (the drag direction follows the freestream). */
static void test_cube_axes(kedr_ctx *ctx)
{
    double cd[3], err[3], ch = 0;
    for (int axis = 0; axis < 3; axis++) {
        kedr_dsmc_case c = fm_case(KEDR_DSMC_BODY_CUBOID, axis, KEDR_DSMC_WALL_DIFFUSE);
        cd[axis] = run_cd(ctx, &c, 8, (int)tu_scale(50, 25), &err[axis], &ch);
    }
    printf("  cube, free molecular, diffuse, flow along x, y, z: Cd = %.5f +- %.5f, %.5f +- %.5f, "
           "%.5f +- %.5f\n", cd[0], err[0], cd[1], err[1], cd[2], err[2]);
    for (int axis = 1; axis < 3; axis++)
        TU_CHECK(fabs(cd[axis] - cd[0]) < 4 * sqrt(err[0] * err[0] + err[axis] * err[axis]),
                 "cube Cd along axis %d: %.5f, along x %.5f", axis, cd[axis], cd[0]);
    /* Free-molecular cube face-on (diffuse, T_w = T): front and back faces as a plate normal
     * to the flow, Cd_plate = 2 e^{-s^2}/(sqrt(pi) s) + 2 (1 + 1/(2 s^2)) erf(s) + sqrt(pi)/s
     * (the sum of both faces), plus four side faces parallel to the flow, each with shear
     * coefficient e^{-0} / (sqrt(pi) s) = 1 / (sqrt(pi) s) on its area (= the frontal area). */
    double s = FM_S, want = 2 * exp(-s * s) / (sqrt(M_PI) * s) + 2 * (1 + 0.5 / (s * s)) * erf(s) +
                            sqrt(M_PI) / s + 4 / (sqrt(M_PI) * s);
    printf("  cube closed form %.5f, ratio %.5f\n", want, cd[0] / want);
    TU_CHECK(fabs(cd[0] / want - 1) < 0.02 * dt_widen(8), "cube Cd %.5f, closed form %.5f", cd[0],
             want);
}

/* Specular walls keep every molecule's energy: zero heat flux per element. */
static void test_specular_bodies(kedr_ctx *ctx)
{
    const kedr_dsmc_body_type types[3] = {KEDR_DSMC_BODY_SPHERE, KEDR_DSMC_BODY_CUBOID,
                                          KEDR_DSMC_BODY_CONE};
    for (int k = 0; k < 3; k++) {
        kedr_dsmc_case c = fm_case(types[k], 0, KEDR_DSMC_WALL_SPECULAR);
        c.sample_start = 30;
        c.weight *= 4; /* a quick look suffices */
        double err = 0, ch = 0, cd = run_cd(ctx, &c, 2, 10, &err, &ch);
        TU_CHECK(ch < 1e-9 && cd > 0 && isfinite(cd), "specular body %d: max |Ch| %g, Cd %g", k,
                 ch, cd);
    }
}

/* Gas volumes: exact for a cuboid; a sphere's and a cone's removed volume against theirs. */
static void test_volumes(kedr_ctx *ctx)
{
    const kedr_dsmc_body_type types[3] = {KEDR_DSMC_BODY_SPHERE, KEDR_DSMC_BODY_CUBOID,
                                          KEDR_DSMC_BODY_CONE};
    for (int k = 0; k < 3; k++) {
        kedr_dsmc_case c = fm_case(types[k], 0, KEDR_DSMC_WALL_DIFFUSE);
        c.nx = c.ny = c.nz = 15; /* 0.01 m cells */
        c.fill = 1;
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        if (!sim)
            continue;
        size_t nc = 15 * 15 * 15, solid = 0;
        double *v = tu_host_alloc(nc * 8), removed = 0, full = 1e-6;
        TU_OK(kedr_dsmc_gas_volume(sim, v));
        for (size_t i = 0; i < nc; i++) {
            removed += full - v[i];
            solid += v[i] == 0;
            TU_CHECK(v[i] >= 0 && v[i] <= full * (1 + 1e-12), "cell %zu volume %g", i, v[i]);
        }
        const kedr_dsmc_body *b = &c.body[0];
        double r = b->length * tan(b->half_angle * M_PI / 180);
        double exact = types[k] == KEDR_DSMC_BODY_SPHERE ? 4.0 / 3 * M_PI * pow(b->radius, 3)
                       : types[k] == KEDR_DSMC_BODY_CUBOID ? pow(b->size[0], 3)
                                                           : M_PI * r * r * b->length / 3;
        double tol = types[k] == KEDR_DSMC_BODY_CUBOID ? 1e-12 : 2e-4;
        printf("  gas volume, body type %d: removed / exact = %.7f, %zu solid cells\n", (int)b->type,
               removed / exact, solid);
        TU_CHECK(fabs(removed / exact - 1) < tol, "body %d removed %.9g, exact %.9g", k, removed,
                 exact);
        TU_CHECK(solid > 0, "no solid cell inside body %d", k);
        /* fields of solid cells are NaN; no molecule starts inside (checked via set below) */
        kedr_dsmc_fields f;
        TU_OK(kedr_dsmc_step(sim));
        TU_OK(kedr_dsmc_get_fields(sim, &f));
        TU_CHECK(f.nz == 15, "fields nz %d", f.nz);
        size_t center = ((size_t)7 * 15 + 7) * 15 + (types[k] == KEDR_DSMC_BODY_CONE ? 8 : 7);
        TU_CHECK(v[center] == 0 && isnan(f.number_density[center]),
                 "body %d: centre cell volume %g, density %g", k, v[center],
                 f.number_density[center]);
        kedr_dsmc_fields_free(&f);
        free(v);
        kedr_dsmc_destroy(sim);
    }
}

/* Closed specular box: count and energy; periodic box: count, momentum and energy, over full
 * steps with collisions. */
static void test_conservation(kedr_ctx *ctx)
{
    for (int periodic = 0; periodic < 2; periodic++) {
        /* quick: 5 molecules a cell; conservation is exact at any size */
        double ppc = (double)tu_scale(20, 5);
        kedr_dsmc_case c = box3(0.01, 8, periodic ? KEDR_DSMC_PERIODIC : KEDR_DSMC_SPECULAR, ppc);
        c.number_density = 1e22;
        c.weight = c.number_density * 1.25e-3 * 1.25e-3 * 1.25e-3 / ppc;
        c.velocity[0] = 300;
        c.velocity[2] = -200;
        /* the periodic box takes its partners from 3 x 3 x 3 sub-cells */
        c.partner = periodic ? KEDR_DSMC_PARTNER_SUBCELL : KEDR_DSMC_PARTNER_NEAREST;
        c.subcells = 3;
        c.dt = 2e-7;
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        if (!sim)
            continue;
        dt_particles a = dt_get(sim);
        double m0[3], e0, s0;
        dt_totals(&c, &a, m0, &e0, &s0);
        kedr_dsmc_stats st;
        uint64_t coll = 0;
        for (int s = 0; s < 20; s++) {
            TU_OK(kedr_dsmc_step(sim));
            TU_OK(kedr_dsmc_get_stats(sim, &st));
            coll += st.collisions;
        }
        dt_particles b = dt_get(sim);
        double m1[3], e1, s1;
        dt_totals(&c, &b, m1, &e1, &s1);
        TU_CHECK(b.n == a.n && coll > 1000, "box: %zu particles, then %zu; %llu collisions", a.n,
                 b.n, (unsigned long long)coll);
        TU_CHECK(fabs(e1 - e0) < 1e-12 * e0, "box energy %.17g -> %.17g", e0, e1);
        for (int d = 0; d < 3 && periodic; d++)
            TU_CHECK(fabs(m1[d] - m0[d]) < 1e-12 * s0, "periodic momentum %d: %.17g -> %.17g", d,
                     m0[d], m1[d]);
        TU_CHECK(st.total_mcs_mfp > 0, "mcs/mfp %g", st.total_mcs_mfp);
        dt_free(&a);
        dt_free(&b);
        kedr_dsmc_destroy(sim);
    }
}

/* Equilibrium collision rate of hard spheres in 3D cells (positions fixed: INDEX | COLLIDE). */
static void test_rate(kedr_ctx *ctx)
{
    const int nx = 12;
    const double n = 1e20, len = 0.12, temperature = 300;
    /* quick: 5 molecules a cell and 25 steps, 12x fewer collisions: the 1% bound widens by
     * sqrt(12) (the 4 sd bound follows the count by itself) */
    kedr_dsmc_case c = box3(len, nx, KEDR_DSMC_SPECULAR, (double)tu_scale(15, 5));
    kedr_dsmc_species sp = c.species[0];
    double mr = sp.mass / 2;
    double sg = 2 * sqrt(M_PI) * sp.d_ref * sp.d_ref * sqrt(2 * K_B * temperature / mr);
    c.dt = 0.2 / (n * sg);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    unsigned mask = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
    for (int s = 0; s < 20; s++)
        TU_OK(kedr_dsmc_step_stages(sim, mask));
    size_t np = 0;
    kedr_dsmc_get_particles3(sim, 0, &np, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    double *x = tu_host_alloc(np * 8), *y = tu_host_alloc(np * 8), *z = tu_host_alloc(np * 8);
    double *vx = tu_host_alloc(np * 8), *vy = tu_host_alloc(np * 8), *vz = tu_host_alloc(np * 8);
    TU_OK(kedr_dsmc_get_particles3(sim, np, &np, x, y, z, vx, vy, vz, NULL, NULL));
    dt_particles p = {np, x, y, vx, vy, vz, NULL, NULL};
    double t_gas = dt_temperature(sp.mass, &p), dx = len / nx, pairs = 0;
    static size_t occ[12 * 12 * 12];
    memset(occ, 0, sizeof occ);
    for (size_t i = 0; i < np; i++) {
        int ix = (int)(x[i] / dx), iy = (int)(y[i] / dx), iz = (int)(z[i] / dx);
        ix = ix < nx ? ix : nx - 1;
        iy = iy < nx ? iy : nx - 1;
        iz = iz < nx ? iz : nx - 1;
        occ[(iz * nx + iy) * nx + ix]++;
    }
    for (int k = 0; k < nx * nx * nx; k++)
        pairs += 0.5 * (double)occ[k] * (double)(occ[k] - 1);
    const int steps = (int)tu_scale(100, 25);
    double total = dt_count_collisions(sim, mask, steps);
    double sgt = 2 * sqrt(M_PI) * sp.d_ref * sp.d_ref * sqrt(2 * K_B * t_gas / mr);
    double expected = steps * pairs * c.weight * sgt * c.dt / (dx * dx * dx);
    double sd = sqrt(expected);
    printf("  3D collision rate, hard spheres: measured/theory = %.5f +- %.5f (1 sd, %.0f "
           "collisions)\n", total / expected, sd / expected, total);
    double tol = 0.01 * dt_widen(12);
    TU_CHECK(fabs(total - expected) < 4 * sd && fabs(total / expected - 1) < tol,
             "3D rate: %.0f collisions, expected %.0f +- %.0f", total, expected, sd);
    free(x);
    free(y);
    free(z);
    free(vx);
    free(vy);
    free(vz);
    kedr_dsmc_destroy(sim);
}

/* A channel along `axis` (10 cells of 1 mm, a 1-cell cross-section with specular walls) fed
 * through its lower side at speed ratio s, no collisions. Returns the entered count; dens gets
 * the time-averaged number density of the 10 cells. */
static uint64_t channel(kedr_ctx *ctx, int axis, double s, double dens[10], double *sd_first)
{
    const double n = 1e20, temperature = 300, len = 0.01;
    kedr_dsmc_case c = box3(len, 1, KEDR_DSMC_SPECULAR, 1);
    int *nn[3] = {&c.nx, &c.ny, &c.nz};
    *nn[axis] = 10;
    c.side[2 * axis] = KEDR_DSMC_INFLOW;
    c.side[2 * axis + 1] = KEDR_DSMC_OUTFLOW;
    c.fill = 0;
    c.dt = 5e-6;
    double m = c.species[0].mass, cm = sqrt(2 * K_B * temperature / m);
    c.velocity[axis] = s * cm;
    double n_plus = n * (1 + erf(s)) / 2, vol = len * len * len / 10;
    /* quick: 250 molecules a cell, a quarter of the steps: 8x fewer samples */
    c.weight = n_plus * vol / (double)tu_scale(500, 250);
    const int steps = (int)tu_scale(800, 200), start = (int)tu_scale(200, 50), batches = 6;
    c.sample_start = start;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return 0;
    unsigned mask = KEDR_DSMC_ALL_STAGES & ~KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
    double b1[6];
    int nb = 0, per = (steps - start + 1) / batches;
    for (int k = 0; k < 10; k++)
        dens[k] = 0;
    for (int step = 1; step <= steps; step++) {
        TU_OK(kedr_dsmc_step_stages(sim, mask));
        if (step >= start && (step - start + 1) % per == 0 && nb < batches) {
            kedr_dsmc_fields f;
            TU_OK(kedr_dsmc_get_fields(sim, &f));
            for (int k = 0; k < 10; k++)
                dens[k] += f.number_density[k] / batches;
            b1[nb++] = f.number_density[0];
            kedr_dsmc_fields_free(&f);
            TU_OK(kedr_dsmc_reset_samples(sim));
        }
    }
    double mean = 0, var = 0;
    for (int k = 0; k < nb; k++)
        mean += b1[k] / nb;
    for (int k = 0; k < nb; k++)
        var += (b1[k] - mean) * (b1[k] - mean) / (nb - 1);
    *sd_first = sqrt(var / nb) / n_plus;
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    double flux = kedr_dsmc_inflow_flux(n, temperature, m, c.velocity[axis]);
    double expect = flux * len * len * c.dt * steps / c.weight;
    TU_CHECK(fabs((double)st.total_generated - expect) < 5 * sqrt(0.25 * steps) + 1e-9 * expect,
             "axis %d: %llu entered, expected %.1f", axis, (unsigned long long)st.total_generated,
             expect);
    for (int k = 0; k < 10; k++)
        dens[k] /= n_plus;
    kedr_dsmc_destroy(sim);
    return st.total_generated;
}

static void test_channels(kedr_ctx *ctx)
{
    const double s = 1.0;
    double dens[3][10], sd[3];
    uint64_t entered[3];
    for (int axis = 2; axis >= 0; axis--)
        entered[axis] = channel(ctx, axis, s, dens[axis], &sd[axis]);
    printf("  inflow through z_min, s = %.1f: %llu entered; first-cell density / n(1+erf s)/2 = "
           "%.5f +- %.5f\n", s, (unsigned long long)entered[2], dens[2][0], sd[2]);
    TU_CHECK(fabs(dens[2][0] - 1) < 0.01 * dt_widen(8), "z channel: density ratio %.5f",
             dens[2][0]);
    for (int axis = 0; axis < 2; axis++) {
        TU_CHECK(entered[axis] == entered[2], "channel along %d: %llu entered, along z %llu", axis,
                 (unsigned long long)entered[axis], (unsigned long long)entered[2]);
        int same = 1;
        for (int k = 0; k < 10; k++)
            same = same && dens[axis][k] == dens[2][k];
        TU_CHECK(same, "channel along axis %d: densities differ from the z channel's", axis);
    }
}

/* Particles in and out with z, argument errors, output files, and a checkpoint restart. */
static void test_api(kedr_ctx *ctx, const char *dir)
{
    kedr_dsmc_case c = fm_case(KEDR_DSMC_BODY_SPHERE, 0, KEDR_DSMC_WALL_DIFFUSE);
    c.sample_start = 3;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    double x[2] = {0.01, 0.14}, y[2] = {0.02, 0.13}, z[2] = {0.03, 0.12}, v[2] = {1, -2};
    TU_CHECK(kedr_dsmc_set_particles(sim, 2, x, y, v, v, v, NULL, NULL) == KEDR_ERR_INVALID &&
             kedr_last_error()[0], "3D set without z accepted");
    double zin[2] = {0.03, 0.075}, xin[2] = {0.01, 0.075}, yin[2] = {0.02, 0.075};
    TU_CHECK(kedr_dsmc_set_particles3(sim, 2, xin, yin, zin, v, v, v, NULL, NULL) ==
                 KEDR_ERR_INVALID && strstr(kedr_last_error(), "inside a body"),
             "particle inside the sphere accepted: %s", kedr_last_error());
    double zout[2] = {0.03, 0.2};
    TU_CHECK(kedr_dsmc_set_particles3(sim, 2, x, y, zout, v, v, v, NULL, NULL) ==
                 KEDR_ERR_INVALID && strstr(kedr_last_error(), "outside the domain"),
             "particle outside accepted: %s", kedr_last_error());
    TU_OK(kedr_dsmc_set_particles3(sim, 2, x, y, z, v, v, v, NULL, NULL));
    double gx[2], gz[2];
    size_t n = 0;
    TU_OK(kedr_dsmc_get_particles3(sim, 2, &n, gx, NULL, gz, NULL, NULL, NULL, NULL, NULL));
    TU_CHECK(n == 2 && gx[1] == x[1] && gz[0] == z[0] && gz[1] == z[1], "round trip z");
    kedr_dsmc_destroy(sim);

    /* a 2D case refuses z */
    kedr_dsmc_case c2 = dt_box(1, 4, 1e20, 300, 5, 1e-6);
    TU_OK(kedr_dsmc_create(ctx, &c2, &sim));
    if (sim) {
        TU_CHECK(kedr_dsmc_set_particles3(sim, 2, x, y, z, v, v, v, NULL, NULL) ==
                     KEDR_ERR_INVALID && kedr_last_error()[0], "2D set with z accepted");
        TU_CHECK(kedr_dsmc_get_particles3(sim, 100000, &n, NULL, NULL, gz, NULL, NULL, NULL, NULL,
                                          NULL) == KEDR_ERR_INVALID, "2D get with z accepted");
        kedr_dsmc_destroy(sim);
    }
    /* bad 3D cases */
    kedr_dsmc_case bad = c;
    bad.nz = 0;
    TU_CHECK(kedr_dsmc_create(ctx, &bad, &sim) == KEDR_ERR_INVALID && kedr_last_error()[0],
             "nz = 0 accepted");
    bad = c;
    bad.body[0].radius = 0.08;
    TU_CHECK(kedr_dsmc_create(ctx, &bad, &sim) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "not strictly inside"),
             "sphere outside the domain accepted: %s", kedr_last_error());
    bad = c;
    bad.side[KEDR_DSMC_ZMIN] = KEDR_DSMC_PERIODIC;
    TU_CHECK(kedr_dsmc_create(ctx, &bad, &sim) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "z_min and z_max"),
             "unpaired periodic z side accepted: %s", kedr_last_error());
    bad = c2;
    bad.nbodies = 1;
    bad.body[0] = c.body[0];
    bad.body[0].center[0] = bad.body[0].center[1] = 0.5;
    bad.wall_temperature = 300;
    TU_CHECK(kedr_dsmc_create(ctx, &bad, &sim) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "3D body"),
             "sphere in a 2D case accepted: %s", kedr_last_error());

    /* full steps with collisions, output files, and a checkpoint restart */
    c.steps = 8;
    c.partner = KEDR_DSMC_PARTNER_NEAREST;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    kedr_dsmc *other = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &other));
    if (!sim || !other)
        return;
    char chk[600], path[600];
    snprintf(chk, sizeof chk, "%s/d3.chk", dir);
    for (int s = 0; s < 8; s++) {
        TU_OK(kedr_dsmc_step(sim));
        if (s == 3)
            TU_OK(kedr_dsmc_write_checkpoint(sim, chk));
    }
    kedr_dsmc_destroy(other);
    other = NULL;
    TU_OK(kedr_dsmc_restart(ctx, &c, chk, &other));
    if (other) {
        for (int s = 4; s < 8; s++)
            TU_OK(kedr_dsmc_step(other));
        dt_particles a = dt_get(sim), b = dt_get(other);
        size_t na = 0, nb2 = 0;
        double *za = tu_host_alloc((a.n + 1) * 8), *zb = tu_host_alloc((b.n + 1) * 8);
        TU_OK(kedr_dsmc_get_particles3(sim, a.n, &na, NULL, NULL, za, NULL, NULL, NULL, NULL, NULL));
        TU_OK(kedr_dsmc_get_particles3(other, b.n, &nb2, NULL, NULL, zb, NULL, NULL, NULL, NULL,
                                       NULL));
        TU_CHECK(a.n == b.n && memcmp(a.x, b.x, a.n * 8) == 0 && memcmp(za, zb, a.n * 8) == 0 &&
                     memcmp(a.vz, b.vz, a.n * 8) == 0,
                 "3D restart differs (%zu vs %zu particles)", a.n, b.n);
        dt_free(&a);
        dt_free(&b);
        free(za);
        free(zb);
        kedr_dsmc_destroy(other);
    }
    kedr_dsmc_fields f;
    TU_OK(kedr_dsmc_get_fields(sim, &f));
    snprintf(path, sizeof path, "%s/d3.csv", dir);
    TU_OK(kedr_dsmc_write_csv(&c, &f, path));
    FILE *in = fopen(path, "r");
    char line[256] = "";
    int rows = 0;
    if (in) {
        if (fgets(line, sizeof line, in))
            rows = 0;
        char buf[4096];
        while (fgets(buf, sizeof buf, in))
            rows++;
        fclose(in);
    }
    TU_CHECK(strncmp(line, "i,j,k,x,y,z,number_density", 26) == 0 && rows == 216,
             "3D CSV header '%.40s', %d rows", line, rows);
    snprintf(path, sizeof path, "%s/d3.vti", dir);
    TU_OK(kedr_dsmc_write_vti(&c, &f, path));
    in = fopen(path, "r");
    int found = 0;
    while (in && fgets(line, sizeof line, in))
        found += strstr(line, "WholeExtent=\"0 6 0 6 0 6\"") != NULL;
    if (in)
        fclose(in);
    TU_CHECK(found == 1, "3D .vti extent");
    kedr_dsmc_fields_free(&f);
    kedr_dsmc_surface sf;
    TU_OK(kedr_dsmc_get_surface(sim, &sf));
    double area = 0;
    for (size_t e = 0; e < sf.nelem; e++)
        area += sf.length[e];
    TU_CHECK(fabs(area / (4 * M_PI * 0.04 * 0.04) - 1) < 1e-12 && sf.corners,
             "sphere element areas sum to %g", area);
    TU_CHECK(fabs(sf.reference_length[0] / (M_PI * 0.04 * 0.04) - 1) < 1e-12,
             "sphere reference area %g", sf.reference_length[0]);
    snprintf(path, sizeof path, "%s/d3-surface.vtp", dir);
    TU_OK(kedr_dsmc_write_surface_vtp(&sf, path));
    in = fopen(path, "r");
    found = 0;
    while (in && fgets(line, sizeof line, in))
        found += strstr(line, "<Polys>") != NULL;
    if (in)
        fclose(in);
    TU_CHECK(found == 1, "3D .vtp has no polygons");
    snprintf(path, sizeof path, "%s/d3-surface.csv", dir);
    TU_OK(kedr_dsmc_write_surface_csv(&sf, path));
    kedr_dsmc_surface_free(&sf);
    kedr_dsmc_destroy(sim);
}

static void test_reflect3(void)
{
    dsmc_params p;
    memset(&p, 0, sizeof p);
    p.body_wall[1] = KEDR_DSMC_WALL_DIFFUSE; /* body 1: its own wall at 500 K */
    p.body_t[1] = 500;
    const double m = 66.3e-27, kt = K_B * 500 / m;
    const int n = 200000;
    double s1 = 0, s2 = 0, s4 = 0, t1 = 0, t2 = 0, t4 = 0, cross = 0;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        dsmc_rng r = dsmc_rng_make(5, (uint64_t)i, 1, DSMC_P_MOVE);
        /* a random unit normal, and a unit tangent orthogonal to it */
        double nv[3] = {dsmc_normal(&r), dsmc_normal(&r), dsmc_normal(&r)}, len = 0;
        for (int d = 0; d < 3; d++)
            len += nv[d] * nv[d];
        for (int d = 0; d < 3; d++)
            nv[d] /= sqrt(len);
        double a[3] = {nv[1], -nv[0], 0}, la = hypot(a[0], a[1]);
        a[0] /= la;
        a[1] /= la;
        double u[3] = {1, 2, 3};
        dsmc_wall_reflect3(&p, 1, nv, m, &r, u);
        double un = u[0] * nv[0] + u[1] * nv[1] + u[2] * nv[2], ut = u[0] * a[0] + u[1] * a[1];
        bad += !(un > 0);
        s1 += un;
        s2 += un * un;
        s4 += un * un * un * un;
        t1 += ut;
        t2 += ut * ut;
        t4 += ut * ut * ut * ut;
        cross += un * ut;
    }
    s1 /= n, s2 /= n, s4 /= n, t1 /= n, t2 /= n, t4 /= n, cross /= n;
    double e1 = sqrt(M_PI * kt / 2), e2 = 2 * kt;
    TU_CHECK(bad == 0, "%d re-emitted molecules move into the wall", bad);
    TU_CHECK(fabs(s1 - e1) < 5 * sqrt((s2 - s1 * s1) / n), "<u.n> %.6g, expected %.6g", s1, e1);
    TU_CHECK(fabs(s2 - e2) < 5 * sqrt((s4 - s2 * s2) / n), "<(u.n)^2> %.6g, expected %.6g", s2, e2);
    TU_CHECK(fabs(t1) < 5 * sqrt(t2 / n), "<u.t> %.6g", t1);
    TU_CHECK(fabs(t2 - kt) < 5 * sqrt((t4 - t2 * t2) / n), "<(u.t)^2> %.6g, expected %.6g", t2, kt);
    TU_CHECK(fabs(cross - s1 * t1) < 5 * sqrt(s2 * t2 / n), "u.n and u.t correlated: %g", cross);
    /* specular: u.n flips, |u| stays */
    p.body_wall[1] = KEDR_DSMC_WALL_SPECULAR;
    double nv[3] = {0.6, 0, -0.8}, u[3] = {100, 200, 300};
    dsmc_rng r = dsmc_rng_make(5, 0, 1, DSMC_P_MOVE);
    dsmc_wall_reflect3(&p, 1, nv, m, &r, u);
    TU_CHECK(fabs(u[0] * 0.6 - u[2] * 0.8 - 180) < 1e-12 && fabs(u[1] - 200) < 1e-12 &&
             fabs(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] - 140000) < 1e-8,
             "specular 3D: (%g, %g, %g)", u[0], u[1], u[2]);
}

/* Fill and inflow counts are computed on the host from the same draws: equal on every back
 * end. */
static size_t first_count[2];

static void test_counts(kedr_ctx *ctx, int b)
{
    kedr_dsmc_case c = fm_case(KEDR_DSMC_BODY_CONE, 2, KEDR_DSMC_WALL_DIFFUSE);
    kedr_dsmc_destroy(dt_counts_match(ctx, &c, b, first_count));
}

int main(void)
{
    char dir[] = "/tmp/kedr_dsmc3d_XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    kedr_backend list[4];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++) {
        kedr_ctx *ctx = tu_ctx(list[i]);
        printf("backend %s\n", kedr_backend_name(list[i]));
        if (i == 0)
            test_reflect3();
        test_counts(ctx, i);
        test_api(ctx, dir);
        test_volumes(ctx);
        test_conservation(ctx);
        test_rate(ctx);
        test_channels(ctx);
        test_specular_bodies(ctx);
        test_sphere_drag(ctx);
        test_cone_drag(ctx);
        test_cube_axes(ctx);
        kedr_ctx_destroy(ctx);
    }
    tu_remove_dir(dir);
    return tu_finish("test_dsmc_3d");
}
