/* The axisymmetric mode of kedr dsmc (x the axis, y the radius), on every back end:
 *  (a) an open cylinder with freestream inflow through both ends and the outer cylinder
 *      (drifting argon, collisions, radial weighting) stays at the freestream state: the number
 *      density, temperature and axial velocity of every row of cells, time-averaged, within
 *      4 standard errors (batch means) plus 1% of the freestream, the rows by the axis included.
 *      The fill, the ring and cylinder inflow faces, the straight flight turned into the
 *      meridional plane and the cloning of radial weighting must all be right for this;
 *  (b) free-molecular drag of a sphere on the axis and of a cone (a triangle with its apex and
 *      base on the axis) with diffuse walls at s = 2 against the closed forms of Schaaf &
 *      Chambre (test_dsmc_util.h): within 1.5%, the statistical error (batch means) printed and
 *      required under 0.5%; no molecule inside the body at the end;
 *  (c) ring cells cut by a sphere, a cone and a cylinder lose exactly 4/3 pi r^3, pi R^2 L / 3
 *      and pi R^2 L (1e-12: exact areas and moments, Pappus), and their surface elements add up
 *      to the bodies' areas;
 *  (d) the collision rate of hard spheres in ring cells of different weights and volumes
 *      (positions fixed) against the sum over cells of N (N - 1) / 2 W <sigma g> dt / V (Bird 1994
 *      eq. 4.64): within 4 sd and 1%;
 *  (e) without radial weighting a closed specular cylinder keeps its particle count exactly and
 *      its energy to 1e-12 over full steps with collisions (turning a velocity into the new
 *      meridional plane and reflecting off the cylinder keep |v|);
 *  (f) fill and inflow counts equal on every back end; with radial weighting a checkpoint restarts
 *      bit for bit on the cpu; bad axisymmetric cases and bodies are refused with a reason;
 *  (g) new molecules are spread over the volume of their ring: the mean radius of those of the
 *      fill and of those entering through the end rings, per row, against
 *      2/3 (r1^3 - r0^3) / (r1^2 - r0^2) within 5 standard errors. */
#include "dsmc/dsmc_kernels.h"
#include "test_dsmc_util.h"

#include <stdio.h>

#define FREE_STAGES (KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE) | \
                     KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX))

/* A cylinder of length len and radius rad on nx x ny ring cells, hard-sphere argon-like gas at
 * rest, every side but the axis `side`, radial weighting with ppc particles a cell. */
static kedr_dsmc_case cylinder(double len, double rad, int nx, int ny, kedr_dsmc_boundary side,
                               double ppc)
{
    kedr_dsmc_case c = dt_box(len, nx, 1e20, 300, ppc, 2e-6);
    c.axisymmetric = 1;
    c.radial_weighting = 1;
    c.hi[1] = rad;
    c.ny = ny;
    c.side[KEDR_DSMC_XMIN] = c.side[KEDR_DSMC_XMAX] = c.side[KEDR_DSMC_YMAX] = side;
    c.side[KEDR_DSMC_YMIN] = KEDR_DSMC_AXIS;
    double dx = len / nx, dy = rad / ny;
    c.weight = c.number_density * 2 * M_PI * (rad - 0.5 * dy) * dx * dy / ppc;
    return c;
}

/* Means over the rows of cells of a field (nx cells a row). */
static void row_means(const double *f, int nx, int ny, double *out)
{
    for (int j = 0; j < ny; j++) {
        out[j] = 0;
        for (int i = 0; i < nx; i++)
            out[j] += f[j * nx + i] / nx;
    }
}

#define OPEN_ROWS 10
#define OPEN_BATCHES 16

static void test_open_cylinder(kedr_ctx *ctx)
{
    /* quick: 50 molecules a cell and batches of 150 steps, 6x fewer samples: the bounds on the
     * row means and on their standard error widen by sqrt(6); the latter by a further 1.25, as
     * 16 batches give the standard error only to about 18% and the axis row's is 0.0074 at full
     * size, near its bound */
    kedr_dsmc_case c = cylinder(0.1, 0.1, 4, OPEN_ROWS, KEDR_DSMC_INFLOW,
                                (double)tu_scale(150, 50));
    const int batch_len = (int)tu_scale(300, 150);
    const double w = dt_widen(6), wse = tu_quick() ? 1.25 * w : 1;
    double u = 300;
    c.velocity[0] = u;
    c.sample_start = 0;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    for (int s = 0; s < 150; s++)
        TU_OK(kedr_dsmc_step(sim));
    /* per batch and row: n / n_inf, T / T_inf, u_x / u */
    static double b[3][OPEN_BATCHES][OPEN_ROWS];
    for (int k = 0; k < OPEN_BATCHES; k++) {
        TU_OK(kedr_dsmc_reset_samples(sim));
        for (int s = 0; s < batch_len; s++)
            TU_OK(kedr_dsmc_step(sim));
        kedr_dsmc_fields f;
        TU_OK(kedr_dsmc_get_fields(sim, &f));
        if (!f.number_density)
            break;
        row_means(f.number_density, c.nx, c.ny, b[0][k]);
        row_means(f.temperature, c.nx, c.ny, b[1][k]);
        row_means(f.ux, c.nx, c.ny, b[2][k]);
        for (int j = 0; j < c.ny; j++) {
            b[0][k][j] /= c.number_density;
            b[1][k][j] /= c.temperature;
            b[2][k][j] /= u;
        }
        kedr_dsmc_fields_free(&f);
    }
    static const char *const names[3] = {"n / n_inf", "T / T_inf", "u_x / u_inf"};
    for (int q = 0; q < 3; q++) {
        printf("  open cylinder, radial weighting, %s by row (axis first):", names[q]);
        for (int j = 0; j < c.ny; j++) {
            double m = 0, m2 = 0;
            for (int k = 0; k < OPEN_BATCHES; k++) {
                m += b[q][k][j] / OPEN_BATCHES;
                m2 += b[q][k][j] * b[q][k][j] / OPEN_BATCHES;
            }
            double se = sqrt(fmax(0.0, m2 - m * m) / (OPEN_BATCHES - 1));
            printf(" %.4f", m);
            TU_CHECK(fabs(m - 1) < 4 * se + 0.01 * w && se < 0.008 * wse,
                     "open cylinder %s row %d: %.4f +- %.4f", names[q], j, m, se);
        }
        printf("\n");
    }
    kedr_dsmc_destroy(sim);
}

#define FM_S 2.0

/* Free-molecular flow past a body of revolution in a cylinder of 0.15 m by 0.075 m (30 x 15
 * cells), inflow on every side; body 0: a sphere of radius 0.04, or a cone of half angle 25
 * degrees and length 0.09 with its apex at x = 0.03. */
static kedr_dsmc_case fm_case(int cone)
{
    /* quick: 15 molecules a cell (test_fm_drag halves the batches too) */
    kedr_dsmc_case c = cylinder(0.15, 0.075, 30, 15, KEDR_DSMC_INFLOW, (double)tu_scale(30, 15));
    c.number_density = 1e16;
    c.weight *= 1e-4;
    c.velocity[0] = FM_S * sqrt(2.0 * K_B * c.temperature / c.species[0].mass);
    c.dt = 5e-6;
    c.seed = 21;
    c.sample_start = 100;
    c.nbodies = 1;
    kedr_dsmc_body *b = &c.body[0];
    if (!cone) {
        b->type = KEDR_DSMC_BODY_CIRCLE;
        b->center[0] = 0.075;
        b->radius = 0.04;
        return c;
    }
    double x0 = 0.03, len = 0.09, rad = len * tan(25 * M_PI / 180);
    double pts[3][2] = {{x0, 0}, {x0 + len, 0}, {x0 + len, rad}};
    b->type = KEDR_DSMC_BODY_POLYGON;
    b->first = 0;
    b->count = 3;
    c.nsegments = 3;
    for (int k = 0; k < 3; k++) {
        c.segment[k][0] = pts[k][0];
        c.segment[k][1] = pts[k][1];
        c.segment[k][2] = pts[(k + 1) % 3][0];
        c.segment[k][3] = pts[(k + 1) % 3][1];
    }
    return c;
}

/* Whether (x, r) is strictly inside body 0 of an fm_case. */
static int inside_fm_body(const kedr_dsmc_case *c, int cone, double x, double r)
{
    if (!cone) {
        double dx = x - c->body[0].center[0], rr = c->body[0].radius;
        return dx * dx + r * r < rr * rr * (1 - 1e-12);
    }
    double x0 = c->segment[0][0], len = c->segment[0][2] - x0, rad = c->segment[1][3];
    return x > x0 && x < x0 + len * (1 - 1e-12) && r < (x - x0) / len * rad * (1 - 1e-12);
}

static void test_fm_drag(kedr_ctx *ctx)
{
    for (int cone = 0; cone < 2; cone++) {
        kedr_dsmc_case c = fm_case(cone);
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        if (!sim)
            return;
        for (int64_t s = 0; s < c.sample_start; s++)
            TU_OK(kedr_dsmc_step_stages(sim, FREE_STAGES));
        /* quick: half the molecules and batches of 25 steps, 4x fewer samples */
        const int nb = 16, len = (int)tu_scale(50, 25);
        const double w = dt_widen(4);
        double sum = 0, sum2 = 0;
        for (int b = 0; b < nb; b++) {
            TU_OK(kedr_dsmc_reset_samples(sim));
            for (int s = 0; s < len; s++)
                TU_OK(kedr_dsmc_step_stages(sim, FREE_STAGES));
            kedr_dsmc_surface sf;
            TU_OK(kedr_dsmc_get_surface(sim, &sf));
            TU_CHECK(sf.axisymmetric && sf.lift[0] == 0 && sf.steps == len, "surface: "
                     "axisymmetric %d, lift %g", sf.axisymmetric, sf.lift[0]);
            sum += sf.cd[0];
            sum2 += sf.cd[0] * sf.cd[0];
            kedr_dsmc_surface_free(&sf);
        }
        double cd = sum / nb, err = sqrt(fmax(0.0, sum2 / nb - cd * cd) / (nb - 1));
        double want = cone ? dt_cd_cone(FM_S, 25 * M_PI / 180) : dt_cd_sphere(FM_S, 1.0);
        printf("  axisymmetric %s, free molecular, diffuse, s = %.1f: Cd = %.5f +- %.5f (1 sd), "
               "closed form %.5f, ratio %.5f\n", cone ? "cone (25 deg)" : "sphere", FM_S, cd, err,
               want, cd / want);
        TU_CHECK(fabs(cd / want - 1) < 0.015 * w && err / want < 0.005 * w,
                 "%s Cd %.5f +- %.5f, closed form %.5f", cone ? "cone" : "sphere", cd, err, want);
        dt_particles p = dt_get(sim);
        size_t inside = 0;
        for (size_t i = 0; i < p.n; i++)
            inside += inside_fm_body(&c, cone, p.x[i], p.y[i]);
        TU_CHECK(inside == 0 && p.n > 1000, "%zu of %zu molecules inside the body", inside, p.n);
        dt_free(&p);
        kedr_dsmc_destroy(sim);
    }
}

/* Cut ring cells and surface areas of a sphere, a cone and a cylinder on an awkward grid. */
static void test_volumes(kedr_ctx *ctx)
{
    for (int k = 0; k < 3; k++) {
        kedr_dsmc_case c = cylinder(1.0, 0.5, 17, 9, KEDR_DSMC_OUTFLOW, 1);
        c.fill = 0;
        c.nbodies = 1;
        kedr_dsmc_body *b = &c.body[0];
        double x0 = 0.2345, len = 0.5123, rad = 0.3217, want_v, want_a;
        if (k == 0) {
            b->type = KEDR_DSMC_BODY_CIRCLE;
            b->center[0] = 0.4321;
            b->radius = rad;
            want_v = 4.0 / 3.0 * M_PI * rad * rad * rad;
            want_a = 4 * M_PI * rad * rad;
        } else {
            /* k = 1: cone (x0, 0) (x0 + len, 0) (x0 + len, rad); k = 2: the cylinder */
            double pts[4][2] = {{x0, 0}, {x0 + len, 0}, {x0 + len, rad}, {x0, rad}};
            int np = k == 1 ? 3 : 4;
            b->type = KEDR_DSMC_BODY_POLYGON;
            b->count = np;
            c.nsegments = np;
            for (int q = 0; q < np; q++) {
                c.segment[q][0] = pts[q][0];
                c.segment[q][1] = pts[q][1];
                c.segment[q][2] = pts[(q + 1) % np][0];
                c.segment[q][3] = pts[(q + 1) % np][1];
            }
            want_v = k == 1 ? M_PI * rad * rad * len / 3 : M_PI * rad * rad * len;
            want_a = k == 1 ? M_PI * rad * (rad + hypot(rad, len))
                            : 2 * M_PI * rad * (rad + len);
        }
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        if (!sim)
            continue;
        size_t nc = (size_t)c.nx * c.ny;
        double *v = tu_host_alloc(nc * sizeof *v), removed = 0;
        TU_OK(kedr_dsmc_gas_volume(sim, v));
        double dx = 1.0 / c.nx, dy = 0.5 / c.ny;
        for (size_t i = 0; i < nc; i++)
            removed += 2 * M_PI * (((double)(i / c.nx) + 0.5) * dy) * dx * dy - v[i];
        kedr_dsmc_surface sf;
        TU_OK(kedr_dsmc_get_surface(sim, &sf));
        double area = 0;
        for (size_t e = 0; e < sf.nelem; e++)
            area += sf.length[e];
        static const char *const names[3] = {"sphere", "cone", "cylinder"};
        TU_CHECK(fabs(removed / want_v - 1) < 1e-12, "%s: cut cells lost %.15g m^3, exact %.15g",
                 names[k], removed, want_v);
        TU_CHECK(fabs(area / want_a - 1) < 1e-12, "%s: elements' area %.15g m^2, exact %.15g",
                 names[k], area, want_a);
        TU_CHECK(fabs(sf.reference_length[0] / (M_PI * rad * rad) - 1) < 1e-14,
                 "%s: reference area %g", names[k], sf.reference_length[0]);
        kedr_dsmc_surface_free(&sf);
        free(v);
        kedr_dsmc_destroy(sim);
    }
}

/* Hard spheres in ring cells whose weights grow with the radius; positions fixed. */
static void test_rate(kedr_ctx *ctx)
{
    const int nx = 6, ny = 12;
    const double len = 0.06, rad = 0.12;
    kedr_dsmc_case c = cylinder(len, rad, nx, ny, KEDR_DSMC_SPECULAR, 25);
    kedr_dsmc_species sp = c.species[0];
    double mr = sp.mass / 2;
    double sg = 2 * sqrt(M_PI) * sp.d_ref * sp.d_ref * sqrt(2 * K_B * c.temperature / mr);
    c.dt = 0.2 / (c.number_density * sg);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    unsigned mask = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
    for (int s = 0; s < 20; s++)
        TU_OK(kedr_dsmc_step_stages(sim, mask));
    dt_particles p = dt_get(sim);
    double t_gas = dt_temperature(sp.mass, &p), dx = len / nx, dy = rad / ny, rate = 0;
    static size_t occ[6 * 12];
    memset(occ, 0, sizeof occ);
    for (size_t i = 0; i < p.n; i++) {
        int ix = (int)(p.x[i] / dx), iy = (int)(p.y[i] / dy);
        occ[(iy < ny ? iy : ny - 1) * nx + (ix < nx ? ix : nx - 1)]++;
    }
    /* per cell N (N - 1) / 2 W / V, W = weight r_c / r_out, V = 2 pi r_c dx dy */
    double r_out = rad - 0.5 * dy;
    for (int k = 0; k < nx * ny; k++) {
        double rc = (k / nx + 0.5) * dy;
        rate += 0.5 * (double)occ[k] * (double)(occ[k] - 1) * c.weight * rc / r_out /
                (2 * M_PI * rc * dx * dy);
    }
    /* quick: 8x fewer steps and collisions, the 1% bound widened by sqrt(8) */
    const int steps = (int)tu_scale(400, 50);
    double total = dt_count_collisions(sim, mask, steps);
    double sgt = 2 * sqrt(M_PI) * sp.d_ref * sp.d_ref * sqrt(2 * K_B * t_gas / mr);
    double expected = steps * rate * sgt * c.dt, sd = sqrt(expected);
    printf("  axisymmetric collision rate, hard spheres, weighted ring cells: measured/theory = "
           "%.5f +- %.5f (1 sd, %.0f collisions)\n", total / expected, sd / expected, total);
    TU_CHECK(fabs(total - expected) < 4 * sd && fabs(total / expected - 1) < 0.01 * dt_widen(8),
             "axisymmetric rate: %.0f collisions, expected %.0f +- %.0f", total, expected, sd);
    dt_free(&p);
    kedr_dsmc_destroy(sim);
}

/* A closed specular cylinder without radial weighting: count and energy over full steps. */
static void test_conservation(kedr_ctx *ctx)
{
    kedr_dsmc_case c = cylinder(0.02, 0.03, 8, 12, KEDR_DSMC_SPECULAR, 20);
    c.radial_weighting = 0;
    c.number_density = 1e22;
    c.weight *= 100;
    c.velocity[0] = 300;
    c.dt = 2e-7;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    dt_particles a = dt_get(sim);
    double m0[3], e0, s0;
    dt_totals(&c, &a, m0, &e0, &s0);
    uint64_t coll = 0;
    for (int s = 0; s < 40; s++) {
        TU_OK(kedr_dsmc_step(sim));
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        coll += st.collisions;
    }
    dt_particles b = dt_get(sim);
    double m1[3], e1, s1;
    dt_totals(&c, &b, m1, &e1, &s1);
    size_t outside = 0;
    for (size_t i = 0; i < b.n; i++)
        outside += !(b.y[i] >= 0 && b.y[i] <= c.hi[1] && b.x[i] >= 0 && b.x[i] <= c.hi[0]);
    TU_CHECK(b.n == a.n && coll > 1000 && outside == 0, "cylinder: %zu particles, then %zu (%zu "
             "outside); %llu collisions", a.n, b.n, outside, (unsigned long long)coll);
    TU_CHECK(fabs(e1 - e0) < 1e-12 * e0, "cylinder energy %.17g -> %.17g", e0, e1);
    dt_free(&a);
    dt_free(&b);
    kedr_dsmc_destroy(sim);
}

/* Mean radius per row of the particles with x in [xa, xb] against the ring's volume mean. */
static void check_ring_means(const dt_particles *p, const kedr_dsmc_case *c, double xa, double xb,
                             const char *what)
{
    double dy = (c->hi[1] - c->lo[1]) / c->ny, s[8] = {0}, s2[8] = {0}, n[8] = {0};
    for (size_t i = 0; i < p->n; i++) {
        int j = (int)(p->y[i] / dy);
        if (p->x[i] < xa || p->x[i] > xb || j >= c->ny || j >= 8)
            continue;
        s[j] += p->y[i];
        s2[j] += p->y[i] * p->y[i];
        n[j]++;
    }
    for (int j = 0; j < c->ny && j < 8; j++) {
        double r0 = j * dy, r1 = r0 + dy, m = s[j] / n[j];
        double want = 2.0 / 3.0 * (r1 * r1 * r1 - r0 * r0 * r0) / (r1 * r1 - r0 * r0);
        double se = sqrt(fmax(0.0, s2[j] / n[j] - m * m) / n[j]);
        TU_CHECK(n[j] > 1000 && fabs(m - want) < 5 * se, "%s, row %d: mean radius %.6g +- %.2g "
                 "(%g particles), expected %.6g", what, j, m, se, n[j], want);
    }
}

static void test_new_positions(kedr_ctx *ctx)
{
    kedr_dsmc_case c = cylinder(0.1, 0.1, 2, 4, KEDR_DSMC_INFLOW, 4000);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    dt_particles p = dt_get(sim);
    check_ring_means(&p, &c, 0, c.hi[0], "fill");
    dt_free(&p);
    /* a step of inflow alone leaves the new molecules on their faces */
    double none = 0;
    TU_OK(kedr_dsmc_set_particles(sim, 0, &none, &none, &none, &none, &none, NULL, NULL));
    for (int s = 0; s < 300; s++)
        TU_OK(kedr_dsmc_step_stages(sim, KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE)));
    p = dt_get(sim);
    check_ring_means(&p, &c, 0, 0, "inflow through x_min");
    check_ring_means(&p, &c, c.hi[0], c.hi[0], "inflow through x_max");
    dt_free(&p);
    kedr_dsmc_destroy(sim);
}

static size_t first_count[2];

/* Fill and inflow counts on every back end; a restart bit for bit (cpu). */
static void test_counts_restart(kedr_ctx *ctx, int b, const char *dir)
{
    kedr_dsmc_case c = cylinder(0.1, 0.1, 4, 10, KEDR_DSMC_INFLOW, 20);
    c.velocity[0] = 300;
    c.sample_start = 0;
    kedr_dsmc *sim = dt_counts_match(ctx, &c, b, first_count);
    if (!sim)
        return;
    if (kedr_ctx_backend(ctx) != KEDR_BACKEND_CPU) {
        kedr_dsmc_destroy(sim);
        return;
    }
    /* 40 more steps straight, against 20, a checkpoint, a restart and 20 */
    char path[600];
    snprintf(path, sizeof path, "%s/axi.chk", dir);
    for (int s = 0; s < 20; s++)
        TU_OK(kedr_dsmc_step(sim));
    TU_OK(kedr_dsmc_write_checkpoint(sim, path));
    for (int s = 0; s < 20; s++)
        TU_OK(kedr_dsmc_step(sim));
    kedr_dsmc *again = NULL;
    TU_OK(kedr_dsmc_restart(ctx, &c, path, &again));
    for (int s = 0; s < 20 && again; s++)
        TU_OK(kedr_dsmc_step(again));
    if (again) {
        dt_particles p = dt_get(sim), q = dt_get(again);
        int same = p.n == q.n && p.n > 0;
        for (size_t i = 0; same && i < p.n; i++)
            same = p.x[i] == q.x[i] && p.y[i] == q.y[i] && p.vx[i] == q.vx[i] &&
                   p.vy[i] == q.vy[i] && p.vz[i] == q.vz[i];
        TU_CHECK(same, "restart: %zu particles against %zu, or they differ", q.n, p.n);
        dt_free(&p);
        dt_free(&q);
        kedr_dsmc_destroy(again);
    }
    kedr_dsmc_destroy(sim);
}

/* Cases the axisymmetric mode refuses, each with its reason. */
static void test_errors(kedr_ctx *ctx)
{
    struct {
        const char *what, *frag;
        kedr_dsmc_case c;
    } bad[9];
    int nbad = 0;
    kedr_dsmc_case ok = fm_case(0);
    for (int k = 0; k < 9; k++)
        bad[k].c = ok;
    bad[nbad].what = "3D";
    bad[nbad].frag = "is 2D";
    bad[nbad].c.dims = 3;
    bad[nbad].c.nz = 2;
    bad[nbad++].c.hi[2] = 1;
    bad[nbad].what = "y_min < 0";
    bad[nbad].frag = "starts at 0";
    bad[nbad++].c.lo[1] = -0.01;
    bad[nbad].what = "y_min = 0 not the axis";
    bad[nbad].frag = "exactly when y_min = 0";
    bad[nbad++].c.side[KEDR_DSMC_YMIN] = KEDR_DSMC_INFLOW;
    bad[nbad].what = "an axis elsewhere";
    bad[nbad].frag = "is the axis";
    bad[nbad++].c.side[KEDR_DSMC_YMAX] = KEDR_DSMC_AXIS;
    bad[nbad].what = "radial velocity";
    bad[nbad].frag = "moves along the axis";
    bad[nbad++].c.velocity[1] = 10;
    bad[nbad].what = "a circle off the axis";
    bad[nbad].frag = "centred on the axis";
    bad[nbad++].c.body[0].center[1] = 0.01;
    bad[nbad].what = "a body moving radially";
    bad[nbad].frag = "along the axis only";
    bad[nbad++].c.body[0].velocity[1] = 5;
    bad[nbad].what = "radial weighting in a planar case";
    bad[nbad].frag = "needs an axisymmetric case";
    bad[nbad].c.axisymmetric = 0;
    bad[nbad].c.side[KEDR_DSMC_YMIN] = KEDR_DSMC_INFLOW;
    bad[nbad].c.body[0].center[1] = 0.035;
    bad[nbad++].c.body[0].radius = 0.03;
    bad[nbad].what = "a plate on the axis";
    bad[nbad].frag = "lies on the axis";
    bad[nbad].c.body[0].type = KEDR_DSMC_BODY_PLATE;
    bad[nbad].c.body[0].count = 1;
    bad[nbad].c.nsegments = 1;
    bad[nbad].c.segment[0][0] = 0.02;
    bad[nbad].c.segment[0][1] = 0;
    bad[nbad].c.segment[0][2] = 0.05;
    bad[nbad++].c.segment[0][3] = 0;
    for (int k = 0; k < nbad; k++) {
        kedr_dsmc *sim = NULL;
        kedr_status s = kedr_dsmc_create(ctx, &bad[k].c, &sim);
        TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), bad[k].frag), "%s: status "
                 "%s, '%s'", bad[k].what, kedr_status_name(s), kedr_last_error());
        kedr_dsmc_destroy(sim);
    }
    bad[7].c.radial_weighting = 0; /* the same planar case is fine without it */
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &bad[7].c, &sim));
    kedr_dsmc_destroy(sim);
}

int main(void)
{
    char dir[] = "/tmp/kedr_dsmcaxi_XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    kedr_backend list[4];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++) {
        kedr_ctx *ctx = tu_ctx(list[i]);
        printf("backend %s\n", kedr_backend_name(list[i]));
        test_counts_restart(ctx, i, dir);
        test_errors(ctx);
        test_new_positions(ctx);
        test_volumes(ctx);
        test_conservation(ctx);
        test_rate(ctx);
        test_open_cylinder(ctx);
        test_fm_drag(ctx);
        kedr_ctx_destroy(ctx);
    }
    tu_remove_dir(dir);
    return tu_finish("test_dsmc_axi");
}
