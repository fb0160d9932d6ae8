/* Bodies of type outline (closed line-segment outlines from files) in kedr dsmc, in the
 * free-molecular limit (collisions disabled), diffuse walls at the freestream temperature,
 * s = 2, on every back end:
 *  - planar: a circle of 200 and of 2000 points (a regular polygon inscribed in it, its frontal
 *    height the diameter) against the closed-form free-molecular Cd of the cylinder (Schaaf &
 *    Chambre 1961; Bird 1994 chapter 7), the tolerance the built-in circle's test takes (1%,
 *    the statistical error from batch means printed and required under 0.4%), and against the
 *    built-in circle's own run within 4 combined standard errors (the runs share their random
 *    streams, so they differ by far less: a conservative bound);
 *  - axisymmetric: a sphere outline (201 points on its meridian, closed along the axis) against
 *    the closed form for the sphere, and a cone of half angle 25 degrees whose outline has 100
 *    points along its side and 40 across its base against the closed form for the cone (the
 *    same closed forms and tolerances as test_dsmc_axi's built-in bodies: 1.5%, error under
 *    0.5%); no molecule inside a body at the end.
 * The discretisation itself changes the drag by far less: the inscribed 200-gon's exact
 * free-molecular Cd differs from the circle's by about (pi / n)^2 / 6, 4e-5. */
#include "test_dsmc_util.h"

#include <stdio.h>
#include <sys/stat.h>

#define FM_S 2.0
#define FM_FREE (KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE) | \
                 KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX))

static char dir[256];

static const char *path_of(const char *name)
{
    static char buf[2][512];
    static int k;
    k = (k + 1) % 2;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_points(const char *name, const double *xy, size_t n)
{
    FILE *f = fopen(path_of(name), "w");
    if (!f) {
        TU_CHECK(0, "cannot write %s", name);
        return;
    }
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%.17g %.17g\n", xy[2 * k], xy[2 * k + 1]);
    fclose(f);
}

/* Runs warm-up, then nb batches of len steps: the mean Cd and its standard error; at the end no
 * molecule may lie within 0.9975 r_in of the body's centre (r_in 0: not checked). */
static double run_cd(kedr_ctx *ctx, const kedr_dsmc_case *c, int nb, int len, double r_in,
                     double *err)
{
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, c, &sim));
    if (!sim)
        return NAN;
    for (int64_t s = 0; s < c->sample_start; s++)
        TU_OK(kedr_dsmc_step_stages(sim, FM_FREE));
    double sum = 0, sum2 = 0;
    for (int b = 0; b < nb; b++) {
        TU_OK(kedr_dsmc_reset_samples(sim));
        for (int s = 0; s < len; s++)
            TU_OK(kedr_dsmc_step_stages(sim, FM_FREE));
        kedr_dsmc_surface sf;
        TU_OK(kedr_dsmc_get_surface(sim, &sf));
        sum += sf.cd[0];
        sum2 += sf.cd[0] * sf.cd[0];
        kedr_dsmc_surface_free(&sf);
    }
    /* no molecule inside the body */
    dt_particles p = dt_get(sim);
    size_t inside = 0;
    const kedr_dsmc_body *bd = &c->body[0];
    for (size_t i = 0; i < p.n; i++) {
        double dx = p.x[i] - (bd->type == KEDR_DSMC_BODY_CIRCLE ? bd->center[0] : bd->translate[0]);
        double dy = p.y[i] - (bd->type == KEDR_DSMC_BODY_CIRCLE ? bd->center[1] : bd->translate[1]);
        /* a circle or sphere: well inside its inscribed polygon (0.9999 r for 200 points) */
        inside += dx * dx + dy * dy < 0.995 * r_in * r_in;
    }
    TU_CHECK(inside == 0 && p.n > 1000, "%zu of %zu molecules inside the body", inside, p.n);
    dt_free(&p);
    kedr_dsmc_destroy(sim);
    double mean = sum / nb;
    *err = sqrt(fmax(0.0, sum2 / nb - mean * mean) / (nb - 1));
    return mean;
}

/* The planar case of test_dsmc_freemolecular: a 0.15 m square, inflow on every side, 15 x 15
 * cells; body: the built-in circle (n = 0) or an outline of n points, radius 0.05 m. */
static kedr_dsmc_case planar_case(size_t n)
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
    c.temperature = c.wall_temperature = 300;
    c.velocity[0] = FM_S * sqrt(2.0 * K_B * 300 / c.species[0].mass);
    c.fill = 1;
    c.dt = 5e-6;
    c.seed = 11;
    c.weight = c.number_density * 0.01 * 0.01 / (double)tu_scale(50, 10);
    c.sample_start = 150;
    c.sample_every = 1;
    c.wall_model = KEDR_DSMC_WALL_DIFFUSE;
    c.nbodies = 1;
    kedr_dsmc_body *b = &c.body[0];
    if (n == 0) {
        b->type = KEDR_DSMC_BODY_CIRCLE;
        b->center[0] = b->center[1] = 0.075;
        b->radius = 0.05;
        return c;
    }
    double *xy = malloc(2 * n * sizeof(double));
    for (size_t k = 0; k < n; k++) { /* the unit circle, placed by the case's transform */
        double a = 2 * M_PI * (double)k / (double)n;
        xy[2 * k] = cos(a);
        xy[2 * k + 1] = sin(a);
    }
    char name[32];
    snprintf(name, sizeof name, "circle%zu.txt", n);
    write_points(name, xy, n);
    free(xy);
    b->type = KEDR_DSMC_BODY_OUTLINE;
    snprintf(b->file, sizeof b->file, "%s", path_of(name));
    b->scale = 0.05;
    b->translate[0] = b->translate[1] = 0.075;
    return c;
}

static void test_planar(kedr_ctx *ctx, const char *bname)
{
    const double w = dt_widen(10);
    const int half = tu_quick() ? 2 : 1;
    double exact = dt_cd_cylinder(FM_S, 1.0), e0 = 0;
    kedr_dsmc_case c0 = planar_case(0);
    double cd0 = run_cd(ctx, &c0, 10, 150 / half, 0.05, &e0);
    printf("  %s built-in circle: Cd %.4f +- %.4f, free-molecular %.4f\n", bname, cd0, e0, exact);
    const size_t ns[2] = {200, 2000};
    for (int i = 0; i < 2; i++) {
        kedr_dsmc_case c = planar_case(ns[i]);
        double err = 0, cd = run_cd(ctx, &c, 10, 150 / half, 0.05, &err);
        double comb = sqrt(err * err + e0 * e0);
        printf("  %s outline of %zu points: Cd %.4f +- %.4f (%.2f%%), free-molecular %.4f: off by "
               "%+.2f%%; the built-in circle's minus it: %+.4f (%.1f combined sd)\n", bname, ns[i],
               cd, err, 100 * err / exact, exact, 100 * (cd - exact) / exact, cd0 - cd,
               (cd0 - cd) / comb);
        TU_CHECK(fabs(cd - exact) < 0.01 * w * exact, "%s %zu points: Cd %g vs %g", bname, ns[i],
                 cd, exact);
        TU_CHECK(err < 0.004 * w * exact, "%s statistical error %g too large", bname, err);
        TU_CHECK(fabs(cd - cd0) < 4 * comb, "%s %zu points: Cd %g, built-in %g +- %g", bname,
                 ns[i], cd, cd0, comb);
    }
}

/* The axisymmetric case of test_dsmc_axi: 0.15 m by 0.075 m, 30 x 15 ring cells, inflow on
 * every side but the axis, radial weighting; body: a sphere outline of radius 0.04 centred at
 * x = 0.075, or a 25 degree cone from x = 0.03, 0.09 long. */
static kedr_dsmc_case axi_case(int cone)
{
    double ppc = (double)tu_scale(30, 15);
    kedr_dsmc_case c = dt_box(0.15, 30, 1e16, 300, ppc, 5e-6);
    c.axisymmetric = 1;
    c.radial_weighting = 1;
    c.hi[1] = 0.075;
    c.ny = 15;
    c.side[0] = c.side[1] = c.side[3] = KEDR_DSMC_INFLOW;
    c.side[2] = KEDR_DSMC_AXIS;
    double dx = 0.15 / 30, dy = 0.075 / 15; /* test_dsmc_axi's weight */
    c.weight = c.number_density * 2 * M_PI * (0.075 - 0.5 * dy) * dx * dy / ppc;
    c.velocity[0] = FM_S * sqrt(2.0 * K_B * c.temperature / c.species[0].mass);
    c.seed = 21;
    c.sample_start = 100;
    c.wall_model = KEDR_DSMC_WALL_DIFFUSE;
    c.nbodies = 1;
    kedr_dsmc_body *b = &c.body[0];
    b->type = KEDR_DSMC_BODY_OUTLINE;
    size_t n = 0;
    double xy[2 * 201];
    if (!cone) { /* the unit meridian from angle pi to 0: clockwise with the axis closing it */
        for (int k = 0; k <= 200; k++, n++) {
            double a = M_PI * (1 - k / 200.0);
            xy[2 * n] = cos(a);
            xy[2 * n + 1] = k == 0 || k == 200 ? 0 : sin(a);
        }
        write_points("sphere.txt", xy, n);
        snprintf(b->file, sizeof b->file, "%s", path_of("sphere.txt"));
        b->scale = 0.04;
        b->translate[0] = 0.075;
        return c;
    }
    /* half a unit (the file at scale 2 is 0.09 long): apex, the side, down the base */
    double len = 0.045, rad = len * tan(25 * M_PI / 180);
    for (int k = 0; k <= 100; k++, n++) {
        xy[2 * n] = len * k / 100.0;
        xy[2 * n + 1] = rad * k / 100.0;
    }
    for (int k = 1; k <= 40; k++, n++) {
        xy[2 * n] = len;
        xy[2 * n + 1] = k == 40 ? 0 : rad * (1 - k / 40.0);
    }
    write_points("cone.txt", xy, n);
    snprintf(b->file, sizeof b->file, "%s", path_of("cone.txt"));
    b->scale = 2;
    b->translate[0] = 0.03;
    return c;
}

static void test_axi(kedr_ctx *ctx, const char *bname)
{
    const int nb = 16, len = (int)tu_scale(50, 25);
    const double w = dt_widen(4);
    for (int cone = 0; cone < 2; cone++) {
        kedr_dsmc_case c = axi_case(cone);
        double err = 0, cd = run_cd(ctx, &c, nb, len, cone ? 0.0 : 0.04, &err);
        double want = cone ? dt_cd_cone(FM_S, 25 * M_PI / 180) : dt_cd_sphere(FM_S, 1.0);
        printf("  %s axisymmetric %s outline: Cd %.5f +- %.5f, closed form %.5f, ratio %.5f\n",
               bname, cone ? "cone (25 deg, 141 points)" : "sphere (201 points)", cd, err, want,
               cd / want);
        TU_CHECK(fabs(cd / want - 1) < 0.015 * w && err / want < 0.005 * w,
                 "%s %s Cd %.5f +- %.5f, closed form %.5f", bname, cone ? "cone" : "sphere", cd,
                 err, want);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kedr_outline_drag_XXXXXX");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++) {
        kedr_ctx *ctx = tu_ctx(list[i]);
        const char *bname = kedr_backend_name(list[i]);
        test_planar(ctx, bname);
        test_axi(ctx, bname);
        kedr_ctx_destroy(ctx);
    }
    tu_remove_dir(dir);
    return tu_finish("test_dsmc_outline_drag");
}
