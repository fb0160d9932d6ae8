/* Bodies of type stl (triangulated surfaces from STL files) in kedr dsmc, on every back end:
 *  (a) a sphere given as an icosphere (an icosahedron split 3 times, 1280 triangles, vertices on
 *      the sphere) in free-molecular flow with diffuse walls (T_w = T, s = 2): its Cd against the
 *      exact free-molecular Cd of that polyhedron, the local coefficients of Schaaf & Chambre
 *      ("Flow of Rarefied Gases", 1961) summed over its triangles (exact for a convex body,
 *      which shades none of itself): within 1.5% (the statistics of this short run, its standard
 *      error required under 0.5%); and against the built-in sphere of the same radius in the
 *      same run: within 1.5% plus the polyhedron's own departure from the sphere's closed form
 *      (0.4% at 1280 triangles; printed);
 *  (b) a cube of 12 triangles, face-on: the closed form of a flat plate's two faces plus four
 *      faces along the flow (as test_dsmc_3d's built-in cube), within 2%;
 *  (c) the gas volume the icosphere takes from the cells against its volume (2e-4: the lines
 *      along x are cut exactly at the triangles, the midpoint rule over 16 x 16 of them per cut
 *      cell is what is left), the cube's to 1e-6 (its faces fall between the lines: only the
 *      single precision of the file is left); cells
 *      inside are solid (NaN fields), no molecule starts or ends inside either body;
 *  (d) specular triangles keep every molecule's energy (zero heat flux on every triangle), on
 *      the cube and on a concave body (an icosphere with bumps), where molecules meet the
 *      surface again and again; no molecule ends inside the concave body (the parity of its
 *      crossings with every triangle, along a random direction);
 *  (e) the surface files: one element per triangle, the .vtp's polygons of 3 points;
 *  (f) the initial fill around the concave body and the first step's inflow give the same
 *      counts on every back end (the cut cells' gas volumes are the host's on all). */
#include "test_dsmc_stl_util.h"
#include "test_dsmc_util.h"

#include <stdio.h>

#define FREE_STAGES                                                                             \
    (KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE) |             \
     KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX))
#define FM_S 2.0
#define FM_T 300.0
#define RADIUS 0.04
#define SIDE 0.06

static char dir[256];

/* The exact free-molecular Cd (diffuse, T_w = T, speed ratio s along +x) of a convex mesh over
 * the reference area: each triangle's pressure along -n and shear along the flow's projection on
 * it, sin(theta) = -n.x. */
static double fm_cd_mesh(const dsmc_stl_mesh *m, double s, double ref)
{
    double cd = 0;
    for (size_t t = 0; t < m->ntri; t++) {
        const double *v = m->v + 9 * t;
        double e1[3], e2[3];
        for (int d = 0; d < 3; d++) {
            e1[d] = v[3 + d] - v[d];
            e2[d] = v[6 + d] - v[d];
        }
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                       e1[0] * e2[1] - e1[1] * e2[0]};
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), area = 0.5 * len;
        double sn = -n[0] / len, cs2 = 1 - sn * sn;
        cd += area * (dt_fm_cp(s, s * sn) * sn + dt_fm_cf(s, s * sn) * cs2);
    }
    return cd / ref;
}

/* ---- runs --------------------------------------------------------------------------------- */

/* Inflow on all six sides of a 0.15 m cube (6 x 6 x 6 cells), as test_dsmc_3d's free-molecular
 * cases; body 1 from the STL file (or the built-in sphere when file is NULL). */
static kedr_dsmc_case fm_case(const char *file, kedr_dsmc_wall wall)
{
    kedr_dsmc_case c = dt_box(0.15, 6, 1e20, FM_T, 1, 1e-6);
    c.dims = 3;
    c.hi[2] = 0.15;
    c.nz = 6;
    for (int s = 0; s < 6; s++)
        c.side[s] = KEDR_DSMC_INFLOW;
    double dx = 0.025;
    c.weight = c.number_density * dx * dx * dx / 80;
    if (tu_quick())
        c.weight *= 4;
    c.velocity[0] = FM_S * sqrt(2.0 * K_B * FM_T / c.species[0].mass);
    c.dt = 5e-6;
    c.seed = 21;
    c.sample_start = 60; /* the domain starts full of freestream gas: the wake clears in ~40 */
    c.wall_model = wall;
    c.nbodies = 1;
    kedr_dsmc_body *b = &c.body[0];
    if (file) {
        b->type = KEDR_DSMC_BODY_STL;
        snprintf(b->file, sizeof b->file, "%s", file);
        b->scale = 1;
    } else {
        b->type = KEDR_DSMC_BODY_SPHERE;
        b->center[0] = b->center[1] = b->center[2] = 0.075;
        b->radius = RADIUS;
    }
    return c;
}

/* The molecules at the end inside the body: within rin of its centre (sphere: its insphere), or
 * inside the cube of side SIDE (rin 0). */
static size_t inside_count(kedr_dsmc *sim, double rin)
{
    size_t n = 0, in = 0;
    kedr_dsmc_get_particles3(sim, 0, &n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    double *x = tu_host_alloc((n + 1) * 8), *y = tu_host_alloc((n + 1) * 8);
    double *z = tu_host_alloc((n + 1) * 8);
    TU_OK(kedr_dsmc_get_particles3(sim, n, &n, x, y, z, NULL, NULL, NULL, NULL, NULL));
    for (size_t i = 0; i < n; i++) {
        double d[3] = {x[i] - 0.075, y[i] - 0.075, z[i] - 0.075};
        if (rin > 0)
            in += d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < rin * rin * (1 - 1e-9);
        else
            in += fabs(d[0]) < 0.5 * SIDE * (1 - 1e-9) && fabs(d[1]) < 0.5 * SIDE * (1 - 1e-9) &&
                  fabs(d[2]) < 0.5 * SIDE * (1 - 1e-9);
    }
    free(x);
    free(y);
    free(z);
    return in;
}

/* Warm-up, then nb batches of len steps: mean Cd and its standard error; *max_ch the largest
 * |Ch| of any element; the surface of the last batch in *last when asked. */
static double run_cd(kedr_ctx *ctx, const kedr_dsmc_case *c, int nb, int len, double rin,
                     double *err, double *max_ch)
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
        sum += sf.cd[0];
        sum2 += sf.cd[0] * sf.cd[0];
        for (size_t e = 0; e < sf.nelem; e++)
            *max_ch = fmax(*max_ch, fabs(sf.ch[e]));
        kedr_dsmc_surface_free(&sf);
    }
    size_t in = inside_count(sim, rin);
    TU_CHECK(in == 0, "%zu molecules inside the body", in);
    kedr_dsmc_destroy(sim);
    double mean = sum / nb;
    *err = sqrt(fmax(0.0, sum2 / nb - mean * mean) / (nb - 1));
    return mean;
}

static void test_sphere(kedr_ctx *ctx, const char *file, const dsmc_stl_mesh *m)
{
    /* the insphere of the icosphere: its nearest face */
    double rin = HUGE_VAL, ref = M_PI * RADIUS * RADIUS;
    for (size_t t = 0; t < m->ntri; t++) {
        const double *v = m->v + 9 * t;
        double cx = (v[0] + v[3] + v[6]) / 3 - 0.075, cy = (v[1] + v[4] + v[7]) / 3 - 0.075;
        double cz = (v[2] + v[5] + v[8]) / 3 - 0.075;
        rin = fmin(rin, sqrt(cx * cx + cy * cy + cz * cz));
    }
    kedr_dsmc_case c = fm_case(file, KEDR_DSMC_WALL_DIFFUSE);
    c.reference_area = ref;
    int len = (int)tu_scale(50, 25);
    double err = 0, ch = 0, cd = run_cd(ctx, &c, 10, len, rin, &err, &ch);
    kedr_dsmc_case a = fm_case(NULL, KEDR_DSMC_WALL_DIFFUSE);
    double aerr = 0, acd = run_cd(ctx, &a, 10, len, RADIUS, &aerr, &ch);
    double poly = fm_cd_mesh(m, FM_S, ref), sphere = dt_cd_sphere(FM_S, 1.0), w = dt_widen(8);
    printf("  icosphere (%zu triangles), free molecular, diffuse, s = %.1f: Cd = %.5f +- %.5f "
           "(1 sd); the polyhedron's exact Cd %.5f (ratio %.5f); built-in sphere %.5f +- %.5f, "
           "closed form %.5f\n", m->ntri, FM_S, cd, err, poly, cd / poly, acd, aerr, sphere);
    TU_CHECK(fabs(cd / poly - 1) < 0.015 * w, "icosphere Cd %.5f, exact %.5f", cd, poly);
    TU_CHECK(err / poly < 0.005 * w, "icosphere Cd sd %.5f too large", err);
    double shape = fabs(poly / sphere - 1);
    TU_CHECK(shape < 0.01, "the icosphere's exact Cd %.5f departs from the sphere's %.5f", poly,
             sphere);
    TU_CHECK(fabs(cd / acd - 1) < 0.015 * w + shape, "icosphere Cd %.5f, built-in sphere %.5f",
             cd, acd);
}

static void test_cube(kedr_ctx *ctx, const char *file)
{
    kedr_dsmc_case c = fm_case(file, KEDR_DSMC_WALL_DIFFUSE);
    double err = 0, ch = 0, cd = run_cd(ctx, &c, 8, (int)tu_scale(50, 25), 0, &err, &ch);
    double s = FM_S, want = 2 * exp(-s * s) / (sqrt(M_PI) * s) + 2 * (1 + 0.5 / (s * s)) * erf(s) +
                            sqrt(M_PI) / s + 4 / (sqrt(M_PI) * s);
    printf("  cube (12 triangles), free molecular, diffuse, face-on: Cd = %.5f +- %.5f, closed "
           "form %.5f, ratio %.5f\n", cd, err, want, cd / want);
    TU_CHECK(fabs(cd / want - 1) < 0.02 * dt_widen(8), "cube Cd %.5f, closed form %.5f", cd, want);
    /* specular: no energy to the walls */
    c = fm_case(file, KEDR_DSMC_WALL_SPECULAR);
    c.sample_start = 30;
    c.weight *= 4;
    cd = run_cd(ctx, &c, 2, 10, 0, &err, &ch);
    TU_CHECK(ch < 1e-9 && cd > 0 && isfinite(cd), "specular cube: max |Ch| %g, Cd %g", ch, cd);
}

/* A concave body (the icosphere bumped by 25%) in the free-molecular flow: specular walls keep
 * every molecule's energy; diffuse or specular, no molecule is left inside. */
static void test_concave(kedr_ctx *ctx, const char *file, const dsmc_stl_mesh *m)
{
    for (int spec = 0; spec < 2; spec++) {
        kedr_dsmc_case c = fm_case(file, spec ? KEDR_DSMC_WALL_SPECULAR : KEDR_DSMC_WALL_DIFFUSE);
        c.sample_start = 30;
        c.weight *= 2;
        c.fill = 1;
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        if (!sim)
            return;
        for (int s = 0; s < 60; s++)
            TU_OK(kedr_dsmc_step_stages(sim, FREE_STAGES));
        kedr_dsmc_surface sf;
        TU_OK(kedr_dsmc_get_surface(sim, &sf));
        double ch = 0, hits = 0;
        for (size_t e = 0; e < sf.nelem; e++) {
            ch = fmax(ch, fabs(sf.ch[e]));
            hits += sf.hits[e];
        }
        if (spec)
            TU_CHECK(ch < 1e-9 && hits > 0, "specular concave body: max |Ch| %g, %g hits a step",
                     ch, hits);
        kedr_dsmc_surface_free(&sf);
        size_t n = 0, in = 0;
        kedr_dsmc_get_particles3(sim, 0, &n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        double *x = tu_host_alloc((n + 1) * 8), *y = tu_host_alloc((n + 1) * 8);
        double *z = tu_host_alloc((n + 1) * 8);
        TU_OK(kedr_dsmc_get_particles3(sim, n, &n, x, y, z, NULL, NULL, NULL, NULL, NULL));
        const double u[3] = {0.3, -0.5, 0.8124038404635961};
        for (size_t i = 0; i < n; i++) {
            int cross = 0;
            for (size_t t = 0; t < m->ntri; t++) { /* the ray against the plane, then the edges */
                const double *v = m->v + 9 * t;
                double e1[3], e2[3], s0[3], pv[3], q[3];
                for (int d = 0; d < 3; d++) {
                    e1[d] = v[3 + d] - v[d];
                    e2[d] = v[6 + d] - v[d];
                }
                s0[0] = x[i] - v[0];
                s0[1] = y[i] - v[1];
                s0[2] = z[i] - v[2];
                pv[0] = u[1] * e2[2] - u[2] * e2[1];
                pv[1] = u[2] * e2[0] - u[0] * e2[2];
                pv[2] = u[0] * e2[1] - u[1] * e2[0];
                double det = e1[0] * pv[0] + e1[1] * pv[1] + e1[2] * pv[2];
                double a = (s0[0] * pv[0] + s0[1] * pv[1] + s0[2] * pv[2]) / det;
                q[0] = s0[1] * e1[2] - s0[2] * e1[1];
                q[1] = s0[2] * e1[0] - s0[0] * e1[2];
                q[2] = s0[0] * e1[1] - s0[1] * e1[0];
                double b = (u[0] * q[0] + u[1] * q[1] + u[2] * q[2]) / det;
                double t0 = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / det;
                cross += a >= 0 && b >= 0 && a + b <= 1 && t0 > 0;
            }
            in += cross % 2;
        }
        printf("  concave body (%zu triangles), %s: %zu of %zu molecules inside", m->ntri,
               spec ? "specular" : "diffuse", in, n);
        printf(spec ? ", max |Ch| %.2g\n" : "\n", ch);
        TU_CHECK(in == 0 && n > 1000, "%zu of %zu molecules inside the concave body", in, n);
        free(x);
        free(y);
        free(z);
        kedr_dsmc_destroy(sim);
    }
}

/* Fill and inflow counts against the first back end's. */
static size_t first_count[2];
static void test_counts(kedr_ctx *ctx, int b, const char *file)
{
    kedr_dsmc_case c = fm_case(file, KEDR_DSMC_WALL_DIFFUSE);
    c.fill = 1;
    kedr_dsmc_destroy(dt_counts_match(ctx, &c, b, first_count));
}

/* Gas volumes, solid cells, surface files. */
static void test_volume(kedr_ctx *ctx, const char *file, const dsmc_stl_mesh *m, double tol)
{
    kedr_dsmc_case c = fm_case(file, KEDR_DSMC_WALL_DIFFUSE);
    c.nx = c.ny = c.nz = 15; /* 0.01 m cells: the cube's faces on cell faces */
    c.fill = 1;
    c.vtk_format = KEDR_DSMC_VTK_ASCII;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    size_t nc = 15 * 15 * 15, solid = 0;
    double *v = tu_host_alloc(nc * 8), removed = 0, full = 1e-6, exact = dsmc_stl_volume(m);
    TU_OK(kedr_dsmc_gas_volume(sim, v));
    for (size_t i = 0; i < nc; i++) {
        removed += full - v[i];
        solid += v[i] == 0;
        TU_CHECK(v[i] >= 0 && v[i] <= full * (1 + 1e-12), "cell %zu volume %g", i, v[i]);
    }
    printf("  gas volume, %zu triangles: removed / exact = %.7f, %zu solid cells\n", m->ntri,
           removed / exact, solid);
    TU_CHECK(fabs(removed / exact - 1) < tol, "removed %.9g, exact %.9g", removed, exact);
    TU_CHECK(solid > 0, "no solid cell");
    TU_OK(kedr_dsmc_step(sim));
    kedr_dsmc_fields f;
    TU_OK(kedr_dsmc_get_fields(sim, &f));
    size_t centre = ((size_t)7 * 15 + 7) * 15 + 7;
    TU_CHECK(v[centre] == 0 && isnan(f.number_density[centre]), "centre cell volume %g, "
             "density %g", v[centre], f.number_density[centre]);
    kedr_dsmc_fields_free(&f);
    size_t in = inside_count(sim, m->ntri == 12 ? 0 : 0.9 * RADIUS);
    TU_CHECK(in == 0, "%zu molecules inside after the fill and a step", in);
    /* surface: one element per triangle, its area and normal */
    kedr_dsmc_surface sf;
    TU_OK(kedr_dsmc_get_surface(sim, &sf));
    TU_CHECK(sf.nelem == m->ntri && sf.corners && isnan(sf.corners[9]), "%zu elements for %zu "
             "triangles", sf.nelem, m->ntri);
    double area = 0;
    for (size_t e = 0; e < sf.nelem; e++)
        area += sf.length[e];
    double want = 0;
    for (size_t t = 0; t < m->ntri; t++) {
        const double *q = m->v + 9 * t;
        double e1[3] = {q[3] - q[0], q[4] - q[1], q[5] - q[2]};
        double e2[3] = {q[6] - q[0], q[7] - q[1], q[8] - q[2]};
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                       e1[0] * e2[1] - e1[1] * e2[0]};
        want += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    }
    TU_CHECK(fabs(area / want - 1) < 1e-12, "element area %.12g, triangles %.12g", area, want);
    char path[512];
    snprintf(path, sizeof path, "%s/surface.vtp", dir);
    TU_OK(kedr_dsmc_write_surface_vtp(&sf, path));
    FILE *fp = fopen(path, "r");
    char line[512];
    int found = 0;
    while (fp && fgets(line, sizeof line, fp)) {
        char want_piece[160];
        snprintf(want_piece, sizeof want_piece, "NumberOfPoints=\"%zu\"", 3 * m->ntri);
        found += strstr(line, want_piece) != NULL;
    }
    if (fp)
        fclose(fp);
    TU_CHECK(found == 1, ".vtp without %zu triangle points", 3 * m->ntri);
    kedr_dsmc_surface_free(&sf);
    free(v);
    kedr_dsmc_destroy(sim);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kedr_dsmcstl_XXXXXX");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    const double c[3] = {0.075, 0.075, 0.075};
    dsmc_stl_mesh ico = ts_icosphere(3, RADIUS, c, 0), box = ts_cube(SIDE, c);
    dsmc_stl_mesh bumpy = ts_icosphere(2, RADIUS, c, 0.25);
    char ico_file[300], box_file[300], bumpy_file[300];
    snprintf(ico_file, sizeof ico_file, "%s/icosphere.stl", dir);
    snprintf(box_file, sizeof box_file, "%s/cube.stl", dir);
    snprintf(bumpy_file, sizeof bumpy_file, "%s/bumpy.stl", dir);
    TU_OK(dsmc_stl_write_binary(ico_file, &ico));
    TU_OK(dsmc_stl_write_binary(box_file, &box));
    TU_OK(dsmc_stl_write_binary(bumpy_file, &bumpy));
    /* the file holds floats: the meshes as the simulator reads them */
    dsmc_stl_mesh ico_f, box_f, bumpy_f;
    TU_OK(dsmc_stl_read(ico_file, &ico_f));
    TU_OK(dsmc_stl_read(box_file, &box_f));
    TU_OK(dsmc_stl_read(bumpy_file, &bumpy_f));
    kedr_backend list[4];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++) {
        kedr_ctx *ctx = tu_ctx(list[i]);
        printf("backend %s\n", kedr_backend_name(list[i]));
        test_counts(ctx, i, bumpy_file);
        test_volume(ctx, ico_file, &ico_f, 2e-4);
        test_volume(ctx, box_file, &box_f, 1e-6);
        test_sphere(ctx, ico_file, &ico_f);
        test_cube(ctx, box_file);
        test_concave(ctx, bumpy_file, &bumpy_f);
        kedr_ctx_destroy(ctx);
    }
    dsmc_stl_free(&bumpy);
    dsmc_stl_free(&bumpy_f);
    dsmc_stl_free(&ico);
    dsmc_stl_free(&box);
    dsmc_stl_free(&ico_f);
    dsmc_stl_free(&box_f);
    tu_remove_dir(dir);
    return tu_finish("test_dsmc_stl_drag");
}
