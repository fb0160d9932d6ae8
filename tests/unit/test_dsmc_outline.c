/* Outline files for the 2D and axisymmetric bodies of type outline in kedr dsmc (src/dsmc/
 * outline.c, lines.c, dsmc_lines.h):
 *  - the readers: a point list (comments, blank lines, Windows line ends, the first point
 *    repeated at the end) and the same outline as a SPARTA 2D surface file give the same
 *    points; the transform (scale, rotate about z, translate);
 *  - every bad file refused with the file, the line and the reason: fewer than 3 points, two
 *    consecutive points equal, a self-intersecting outline (the two segments named), a segment
 *    folding back on the next, no area, a point below the axis of an axisymmetric case, a word
 *    that is not a number, a missing file, a directory; SPARTA files: two loops, an open chain,
 *    a flipped line, a bad point id, counts that disagree; a body outside the domain; boxes
 *    that meet;
 *  - the moves' search (the bins a path's box meets, each its own segments) against every
 *    segment tried in turn, planar and axisymmetric, on thousands of random paths of awkward
 *    lengths through a concave outline of 2000 points; the inside test against the crossing
 *    parity over all segments; the removed area (and axisymmetric volume) against the outline's;
 *  - an outline file of the same points as a built-in polygon body gives the same run bit for
 *    bit (particles, gas volumes, surface sums; on cuda the surface sums to 1e-9, as its atomic
 *    adds vary in order from run to run), planar and axisymmetric (touching the axis),
 *    with a vertex on a cell corner and a segment along a cell edge; clockwise and
 *    counter-clockwise outlines give outward normals;
 *  - the case keys of [body] type = outline, each error naming the case file's line. */
#include "dsmc/outline.h"
#include "dsmc/sim.h"
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

static char dir[256];

static const char *path_of(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "wb");
    size_t n = strlen(text);
    if (!f || fwrite(text, 1, n, f) != n)
        TU_CHECK(0, "cannot write %s", name);
    if (f)
        fclose(f);
}

/* n points (x y pairs) as a point list. */
static void write_points(const char *name, const double *xy, size_t n)
{
    FILE *f = fopen(path_of(name), "w");
    if (!f) {
        TU_CHECK(0, "cannot write %s", name);
        return;
    }
    fprintf(f, "# %zu points\n", n);
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%.17g %.17g\n", xy[2 * k], xy[2 * k + 1]);
    fclose(f);
}

static uint64_t rng_state = 88172645463325252ull;
static double urand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}

/* Reads a file that must fail with status st and a message holding each of the texts. */
static void refused(const char *name, int axi, kedr_status st, const char *a, const char *b)
{
    dsmc_outline o;
    kedr_status s = dsmc_outline_load(path_of(name), 1, 0, (double[2]){0, 0}, axi, &o);
    const char *msg = kedr_last_error();
    TU_CHECK(s == st && strstr(msg, name) && strstr(msg, a) && (!b || strstr(msg, b)),
             "%s: status %s, message '%s' (expected %s with '%s'%s%s)", name,
             kedr_status_name(s), msg, kedr_status_name(st), a, b ? " and " : "", b ? b : "");
    TU_CHECK(s != KEDR_OK || o.n == 0, "%s: accepted", name);
    if (s == KEDR_OK)
        dsmc_outline_free(&o);
}

static void test_readers(void)
{
    /* a unit square, clockwise, closed explicitly, with comments and CRLF */
    write_text("sq.txt", "# a square\r\n0 0\r\n\r\n0 1   # up\r\n1 1\n1 0\n0 0\n");
    write_text("sq.surf", "SPARTA surface file: the same square\n\n4 points\n4 lines\n\nPoints\n\n"
                          "1 0 0\n2 1 0\n3 1 1\n4 0 1\n\nLines\n\n1 1 4\n2 4 3\n3 3 2\n4 2 1\n");
    write_text("sq-typed.surf", "title\n4 points\n4 lines\nPoints\n1 0 0\n2 1 0\n3 1 1\n4 0 1\n"
                                "Lines\n1 1 1 4\n2 1 4 3\n3 2 3 2\n4 1 2 1\n");
    dsmc_outline a, b, t;
    TU_OK(dsmc_outline_load(path_of("sq.txt"), 1, 0, (double[2]){0, 0}, 0, &a));
    TU_OK(dsmc_outline_load(path_of("sq.surf"), 1, 0, (double[2]){0, 0}, 0, &b));
    TU_OK(dsmc_outline_load(path_of("sq-typed.surf"), 1, 0, (double[2]){0, 0}, 0, &t));
    const double want[8] = {0, 0, 0, 1, 1, 1, 1, 0};
    TU_CHECK(a.n == 4 && b.n == 4 && t.n == 4 && memcmp(a.xy, want, sizeof want) == 0 &&
                 memcmp(b.xy, want, sizeof want) == 0 && memcmp(t.xy, want, sizeof want) == 0,
             "square: %zu, %zu and %zu points", a.n, b.n, t.n);
    TU_CHECK(a.line[0] == 2 && a.line[1] == 4 && a.line[3] == 6, "lines %d %d %d", a.line[0],
             a.line[1], a.line[3]);
    TU_CHECK(dsmc_outline_area(&a) == -1, "clockwise square: signed area %g",
             dsmc_outline_area(&a));
    /* the transform: scale 2, a quarter turn, then (10, 20) */
    dsmc_outline_transform(&a, 2, 90, (double[2]){10, 20});
    const double moved[8] = {10, 20, 8, 20, 8, 22, 10, 22};
    double err = 0;
    for (int k = 0; k < 8; k++)
        err = fmax(err, fabs(a.xy[k] - moved[k]));
    TU_CHECK(err < 1e-14, "transformed square off by %g", err);
    dsmc_outline_free(&a);
    dsmc_outline_free(&b);
    dsmc_outline_free(&t);

    /* bad files */
    write_text("two.txt", "0 0\n1 0\n");
    refused("two.txt", 0, KEDR_ERR_INVALID, "2 points", "at least 3");
    write_text("empty.txt", "# nothing\n\n");
    refused("empty.txt", 0, KEDR_ERR_PARSE, "no points", NULL);
    write_text("repeat.txt", "0 0\n1 0\n1 0\n0 1\n");
    refused("repeat.txt", 0, KEDR_ERR_INVALID, "repeat.txt:3: points 2 and 3 (line 2) coincide",
            "zero length");
    /* a bow tie: segments 1 (0,0)-(1,1) and 3 (1,0)-(0,1) cross */
    write_text("bowtie.txt", "0 0\n1 1\n1 0\n0 1\n");
    refused("bowtie.txt", 0, KEDR_ERR_INVALID, "segments 1 (points 1-2, lines 1-2) and 3 (points "
            "3-4, lines 3-4) meet", "intersects itself");
    /* a spike: segment 2 runs back along segment 1 */
    write_text("spike.txt", "0 0\n2 0\n1 0\n1 1\n");
    refused("spike.txt", 0, KEDR_ERR_INVALID, "segments 1 (points 1-2, lines 1-2) and 2",
            "fold back");
    /* a vertex touching another segment */
    write_text("touch.txt", "0 0\n2 0\n2 2\n1 0\n0 2\n");
    refused("touch.txt", 0, KEDR_ERR_INVALID, "segments 1 (points 1-2, lines 1-2) and 3",
            "intersects itself");
    write_text("flat.txt", "0 0\n1 0\n2 0\n");
    refused("flat.txt", 0, KEDR_ERR_INVALID, "fold back", NULL);
    write_text("below.txt", "0 0\n1 0\n1 1\n0.5 -0.25\n");
    refused("below.txt", 1, KEDR_ERR_INVALID, "below.txt:4: point 4 at y = -0.25 lies below the axis",
            NULL);
    write_text("word.txt", "0 0\n1 x\n1 1\n");
    refused("word.txt", 0, KEDR_ERR_PARSE, "word.txt:2: 'x' is not a finite number", "the y");
    write_text("three.txt", "0 0\n1 0 0\n1 1\n");
    refused("three.txt", 0, KEDR_ERR_PARSE, "three.txt:2: expected a point 'x y'", NULL);
    write_text("nan.txt", "0 0\n1 0\nnan 1\n");
    refused("nan.txt", 0, KEDR_ERR_PARSE, "nan.txt:3: 'nan' is not a finite number", NULL);
    refused("missing.txt", 0, KEDR_ERR_IO, "cannot open", NULL);
    TU_CHECK(mkdir(path_of("dir.txt"), 0700) == 0, "cannot make dir.txt");
    refused("dir.txt", 0, KEDR_ERR_IO, "expected a regular file", NULL);
    write_text("loops.surf", "t\n6 points\n6 lines\nPoints\n1 0 0\n2 1 0\n3 0 1\n4 5 5\n5 6 5\n"
                             "6 5 6\nLines\n1 1 2\n2 2 3\n3 3 1\n4 4 5\n5 5 6\n6 6 4\n");
    refused("loops.surf", 0, KEDR_ERR_PARSE, "closes after 3 of the 6 lines", NULL);
    write_text("open.surf", "t\n3 points\n2 lines\nPoints\n1 0 0\n2 1 0\n3 0 1\nLines\n1 1 2\n"
                            "2 2 3\n");
    refused("open.surf", 0, KEDR_ERR_PARSE, "open.surf:10: line 2 ends at point 3", "not closed");
    write_text("flipped.surf", "t\n4 points\n4 lines\nPoints\n1 0 0\n2 1 0\n3 1 1\n4 0 1\n"
                               "Lines\n1 1 2\n2 3 2\n3 3 4\n4 4 1\n");
    refused("flipped.surf", 0, KEDR_ERR_PARSE, "flipped.surf:12: lines 2 and 3 both start at point "
            "3", "flipped");
    write_text("badid.surf", "t\n3 points\n3 lines\nPoints\n1 0 0\n3 1 0\n");
    refused("badid.surf", 0, KEDR_ERR_PARSE, "badid.surf:6: point id 3: expected 2", NULL);
    write_text("count.surf", "t\n4 points\n3 lines\nPoints\n1 0 0\n2 1 0\n3 0 1\nLines\n1 1 2\n"
                             "2 2 3\n3 3 1\n");
    refused("count.surf", 0, KEDR_ERR_PARSE, "counts 4 points, the file has 3", NULL);
    write_text("range.surf", "t\n3 points\n3 lines\nPoints\n1 0 0\n2 1 0\n3 0 1\nLines\n1 1 2\n"
                             "2 2 7\n3 3 1\n");
    refused("range.surf", 0, KEDR_ERR_PARSE, "range.surf:10: line 2: points 2 and 7", "1 .. 3");
}

/* A concave flower of n points about (cx, cy): r = r0 (1 + 0.3 sin 5 a). */
static double *flower(size_t n, double cx, double cy, double r0, int clockwise)
{
    double *xy = malloc(2 * n * sizeof(double));
    for (size_t k = 0; k < n; k++) {
        double a = 2 * M_PI * (double)k / (double)n * (clockwise ? -1 : 1);
        double r = r0 * (1 + 0.3 * sin(5 * a));
        xy[2 * k] = cx + r * cos(a);
        xy[2 * k + 1] = cy + r * sin(a);
    }
    return xy;
}

/* A case around one outline body from file (2 m x 2 m, n x n cells, inflow on x_min). */
static kedr_dsmc_case outline_case(const char *file, int axi, int n)
{
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "outline");
    c.hi[0] = c.hi[1] = 2.0;
    c.nx = c.ny = n;
    c.axisymmetric = axi;
    c.side[0] = KEDR_DSMC_INFLOW;
    c.side[1] = KEDR_DSMC_OUTFLOW;
    c.side[2] = axi ? KEDR_DSMC_AXIS : KEDR_DSMC_INFLOW;
    c.side[3] = KEDR_DSMC_INFLOW;
    c.nspecies = 1;
    kedr_dsmc_species hs = {"HS", 66.3e-27, 4.17e-10, 0.5, 273, 1.0, 4.17e-10, 0, 1, 0, 0, 0, 0};
    c.species[0] = hs;
    c.fraction[0] = 1;
    c.number_density = 1e19;
    c.temperature = c.wall_temperature = 300;
    c.velocity[0] = 600;
    c.fill = 1;
    c.dt = 1e-5;
    c.steps = 100;
    c.seed = 5;
    c.weight = c.number_density * (2.0 / n) * (2.0 / n) / 8;
    c.sample_start = 0;
    c.sample_every = 1;
    c.wall_model = KEDR_DSMC_WALL_DIFFUSE;
    c.nbodies = 1;
    c.body[0].type = KEDR_DSMC_BODY_OUTLINE;
    snprintf(c.body[0].file, sizeof c.body[0].file, "%s", path_of(file));
    c.body[0].scale = 1;
    return c;
}

/* The search of the bins against every segment; the inside test against the crossing parity;
 * the removed area or volume against the outline's. */
static void test_search(kedr_ctx *ctx, int axi)
{
    size_t n = 2000;
    double *xy = flower(n, 1.0, axi ? 0.0 : 1.0, 0.5, 0);
    if (axi) { /* the upper half, closed along the axis: from angle 0 to pi and back */
        size_t m = 0;
        for (size_t k = 0; k < n; k++)
            if (xy[2 * k + 1] > 0)
                xy[2 * m] = xy[2 * k], xy[2 * m + 1] = xy[2 * k + 1], m++;
        xy[2 * m] = 1.0 - 0.5; /* on the axis at the ends */
        xy[2 * m + 1] = 0;
        xy[2 * m + 2] = 1.0 + 0.5;
        xy[2 * m + 3] = 0;
        n = m + 2;
    }
    write_points("flower.txt", xy, n);
    kedr_dsmc_case c = outline_case("flower.txt", axi, 23);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim) {
        free(xy);
        return;
    }
    const dsmc_params *p = &sim->p;
    const dsmc_lines *L = &p->lines_host;
    int base = 4 + p->nsegments + p->ncircles, bad = 0, hits = 0;
    for (int i = 0; i < 6000; i++) {
        double px = 0.3 + 1.4 * urand(), py = axi ? 0.9 * urand() : 0.3 + 1.4 * urand();
        double a = 2 * M_PI * urand(), sp = 1000 * (0.05 + urand());
        double ux = sp * cos(a), uy = sp * sin(a), uz = axi ? sp * (urand() - 0.5) : 0;
        if (i % 11 == 0)
            ux = 0;
        if (i % 13 == 0)
            uy = 0;
        if (i % 17 == 0) /* along a row of bins' edge, or a column's (the walk's margins) */
            py = L->o[1] + (int)(urand() * L->n[1]) * L->h[1], uy = 0;
        if (i % 19 == 0)
            px = L->o[0] + (int)(urand() * L->n[0]) * L->h[0], ux = 0;
        if (i % 23 == 0) /* from a bins' corner */
            px = L->o[0] + (int)(urand() * L->n[0]) * L->h[0],
            py = L->o[1] + (int)(urand() * L->n[1]) * L->h[1];
        double tmax = 1e-4 * (0.01 + 4 * urand() * urand()); /* 0.5 to 400 mm */
        double ta = tmax, tb = tmax;
        int wa = -1, wb = -1;
        if (axi) {
            dsmc_lines_hit_axi(p, px, py, ux, uy, uz, base, &ta, &wa);
            for (uint32_t k = 0; k < L->nseg; k++) {
                if (L->elem[2 * k + 1] == 0)
                    continue;
                double th = dsmc_cone_hit_seg(L->seg + 4 * (size_t)k, px, py, ux, uy, uz, tb);
                if (th > 0)
                    tb = th, wb = base + (int)k;
            }
        } else {
            int skip = i % 5 == 0 ? (int)(urand() * n) : -1;
            dsmc_lines_hit(p, px, py, ux, uy, skip, base, &ta, &wa);
            for (uint32_t k = 0; k < L->nseg; k++) {
                const double *sg = L->seg + 4 * (size_t)k;
                double dx = sg[2] - sg[0], dy = sg[3] - sg[1], den = ux * dy - uy * dx;
                if ((int)k == skip || den == 0)
                    continue;
                double qx = sg[0] - px, qy = sg[1] - py;
                double th = (qx * dy - qy * dx) / den, s = (qx * uy - qy * ux) / den;
                if (th > 0 && th < tb && s >= 0 && s <= 1)
                    tb = th, wb = base + (int)k;
            }
        }
        bad += wa != wb || ta != tb;
        hits += wb >= 0;
    }
    printf("  %s: %d random paths, %d hits; the bins' search and every segment disagree on %d\n",
           axi ? "axisymmetric" : "planar", 6000, hits, bad);
    TU_CHECK(bad == 0 && hits > 300, "%d of 6000 paths disagree (%d hits)", bad, hits);
    int wrong = 0, inside = 0;
    for (int i = 0; i < 20000; i++) {
        double x = 0.2 + 1.6 * urand(), y = axi ? 0.9 * urand() : 0.2 + 1.6 * urand();
        if (i % 97 == 0) /* on a bin's corner */
            x = L->o[0] + 20 * L->h[0], y = L->o[1] + 20 * L->h[1];
        int in = 0;
        for (uint32_t k = 0; k < L->nseg; k++) {
            const double *s = L->seg + 4 * (size_t)k;
            if ((s[1] > y) != (s[3] > y) && x < s[0] + (y - s[1]) * (s[2] - s[0]) / (s[3] - s[1]))
                in = !in;
        }
        int got = dsmc_inside_body(p, x, y);
        wrong += got != in;
        inside += got;
    }
    printf("  20000 random points: %d inside, %d disagree with the crossing parity\n", inside,
           wrong);
    TU_CHECK(wrong == 0 && inside > 2000, "inside test: %d wrong (%d inside)", wrong, inside);
    /* the removed area (volume) */
    size_t nc = (size_t)c.nx * c.ny;
    double *vol = malloc(nc * sizeof *vol), removed = 0, exact = 0;
    TU_OK(kedr_dsmc_gas_volume(sim, vol));
    for (size_t i = 0; i < nc; i++)
        removed += dsmc_cell_full_volume(p, i) - vol[i];
    for (size_t k = 0; k < n; k++) { /* area, or 2 pi times the integral of y (Pappus) */
        const double *a = xy + 2 * k, *b = xy + 2 * ((k + 1) % n);
        double cr = a[0] * b[1] - b[0] * a[1];
        exact += axi ? cr * (a[1] + b[1]) / 6 * 2 * M_PI : cr / 2;
    }
    printf("  removed %s %.15g, the outline's %.15g\n", axi ? "volume" : "area", removed, exact);
    TU_CHECK(fabs(removed / exact - 1) < 1e-12, "removed %.15g, exact %.15g", removed, exact);
    free(vol);
    free(xy);
    kedr_dsmc_destroy(sim);
}

/* The built-in polygon body and an outline file of the same points: the same run, bit for bit.
 * Cells of 0.125 m: the first point lies on a cell corner and the first segment along a cell
 * edge (planar); axisymmetric, the body lies on the axis. */
static void test_same_as_polygon(kedr_ctx *ctx, const char *bname, int axi, int clockwise)
{
    const double planar[] = {0.75, 0.5, 1.25, 0.5, 1.4, 0.9, 1.0, 0.8, 1.1, 1.3, 0.7, 1.1};
    const double round[] = {0.75, 0, 1.25, 0, 1.3, 0.45, 1.0, 0.3, 0.8, 0.6};
    const double *pts = axi ? round : planar;
    int np = axi ? 5 : 6;
    double xy[12];
    for (int k = 0; k < np; k++) { /* clockwise: the same points in the other order */
        int j = clockwise ? (np - k) % np : k;
        xy[2 * k] = pts[2 * j];
        xy[2 * k + 1] = pts[2 * j + 1];
    }
    write_points("poly.txt", xy, (size_t)np);
    kedr_dsmc_case a = outline_case("poly.txt", axi, 16), b = a;
    b.body[0].type = KEDR_DSMC_BODY_POLYGON;
    b.body[0].first = 0;
    b.body[0].count = np;
    b.nsegments = np;
    for (int k = 0; k < np; k++) {
        b.segment[k][0] = xy[2 * k];
        b.segment[k][1] = xy[2 * k + 1];
        b.segment[k][2] = xy[2 * ((k + 1) % np)];
        b.segment[k][3] = xy[2 * ((k + 1) % np) + 1];
    }
    kedr_dsmc *sa = NULL, *sb = NULL;
    TU_OK(kedr_dsmc_create(ctx, &a, &sa));
    TU_OK(kedr_dsmc_create(ctx, &b, &sb));
    if (!sa || !sb) {
        kedr_dsmc_destroy(sa);
        kedr_dsmc_destroy(sb);
        return;
    }
    for (int s = 0; s < 40; s++) {
        TU_OK(kedr_dsmc_step(sa));
        TU_OK(kedr_dsmc_step(sb));
    }
    size_t nc = (size_t)a.nx * a.ny;
    double *va = malloc(nc * sizeof(double)), *vb = malloc(nc * sizeof(double));
    TU_OK(kedr_dsmc_gas_volume(sa, va));
    TU_OK(kedr_dsmc_gas_volume(sb, vb));
    int same_vol = memcmp(va, vb, nc * sizeof(double)) == 0;
    struct {
        size_t n;
    } pa = {0}, pb = {0};
    kedr_dsmc_get_particles(sa, 0, &pa.n, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    kedr_dsmc_get_particles(sb, 0, &pb.n, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    int same_p = pa.n == pb.n && pa.n > 1000;
    if (same_p) {
        size_t m = pa.n * sizeof(double);
        double *x[2][5];
        for (int w = 0; w < 2; w++)
            for (int q = 0; q < 5; q++)
                x[w][q] = malloc(m);
        size_t got;
        TU_OK(kedr_dsmc_get_particles(sa, pa.n, &got, x[0][0], x[0][1], x[0][2], x[0][3],
                                      x[0][4], NULL, NULL));
        TU_OK(kedr_dsmc_get_particles(sb, pb.n, &got, x[1][0], x[1][1], x[1][2], x[1][3],
                                      x[1][4], NULL, NULL));
        for (int q = 0; q < 5; q++)
            same_p = same_p && memcmp(x[0][q], x[1][q], m) == 0;
        for (int w = 0; w < 2; w++)
            for (int q = 0; q < 5; q++)
                free(x[w][q]);
    }
    kedr_dsmc_surface fa, fb;
    TU_OK(kedr_dsmc_get_surface(sa, &fa));
    TU_OK(kedr_dsmc_get_surface(sb, &fb));
    /* the cpu adds wall hits in thread order: the same bits; the cuda back end adds them with
     * atomics, whose order (so the last bits) varies from run to run */
    int same_s = fa.nelem == fb.nelem && fa.nelem > 0 &&
                 memcmp(fa.nx, fb.nx, fa.nelem * sizeof(double)) == 0 &&
                 memcmp(fa.ny, fb.ny, fa.nelem * sizeof(double)) == 0 &&
                 fa.reference_length[0] == fb.reference_length[0];
    double tol = strcmp(bname, "cpu") == 0 ? 0.0 : 1e-9;
    for (size_t e = 0; same_s && e < fa.nelem; e++) {
        const double va[3] = {fa.cp[e], fa.cf[e], fa.ch[e]}, vb[3] = {fb.cp[e], fb.cf[e], fb.ch[e]};
        for (int q = 0; q < 3; q++)
            same_s = same_s && fabs(va[q] - vb[q]) <= tol * (fabs(va[q]) + fabs(vb[q]));
    }
    same_s = same_s && fabs(fa.drag[0] - fb.drag[0]) <= tol * fabs(fa.drag[0]) &&
             fabs(fa.lift[0] - fb.lift[0]) <= tol * (fabs(fa.lift[0]) + fabs(fa.drag[0]));
    /* outward normals: from the centroid out */
    int outward = 1;
    double cx = 0, cy = 0;
    for (int k = 0; k < np; k++)
        cx += xy[2 * k] / np, cy += xy[2 * k + 1] / np;
    for (size_t e = 0; e < fa.nelem; e++)
        outward = outward && (fa.x[e] - cx) * fa.nx[e] + (fa.y[e] - cy) * fa.ny[e] > -0.05;
    printf("  %s %s %s outline = polygon: %zu particles, %zu elements, drag %.6g N: gas volumes "
           "%s, particles %s, surface %s\n", bname, axi ? "axisymmetric" : "planar",
           clockwise ? "clockwise" : "counter-clockwise", pa.n, fa.nelem, fa.drag[0],
           same_vol ? "same" : "DIFFER", same_p ? "same" : "DIFFER", same_s ? "same" : "DIFFER");
    TU_CHECK(same_vol && same_p && same_s, "%s outline and polygon differ (axi %d, clockwise %d)",
             bname, axi, clockwise);
    TU_CHECK(outward, "%s: an element's normal points into the body", bname);
    kedr_dsmc_surface_free(&fa);
    kedr_dsmc_surface_free(&fb);
    free(va);
    free(vb);
    kedr_dsmc_destroy(sa);
    kedr_dsmc_destroy(sb);
}

/* ---- case files ----------------------------------------------------------------------------- */

static kedr_status load_case(const char *domain, const char *body, kedr_dsmc_case *c)
{
    char text[4096];
    snprintf(text, sizeof text,
             "[domain]\nx_min = 0\nx_max = 1\ny_min = 0\ny_max = 1\n%s\n[grid]\nnx = 4\n"
             "ny = 4\n%s\n[species]\nfile = species.ini\ngas = Ar\n\n[freestream]\n"
             "number_density = 1e19\ntemperature = 300\nvelocity_x = 1000\n\n[wall]\n"
             "temperature = 300\n\n[body]\n%s\n[run]\ndt = 1e-6\nsteps = 10\n"
             "particles_per_cell = 5\n", domain, strstr(domain, "dimensions = 3") ? "nz = 4\n" : "",
             body);
    write_text("case.ini", text);
    return kedr_dsmc_case_load(path_of("case.ini"), c);
}

static void case_refused(const char *domain, const char *body, const char *a, const char *b)
{
    kedr_dsmc_case c;
    kedr_status s = load_case(domain, body, &c);
    const char *msg = kedr_last_error();
    TU_CHECK(s != KEDR_OK && strstr(msg, "case.ini:") && strstr(msg, a) && (!b || strstr(msg, b)),
             "case with [body] '%s': %s, '%s' (expected '%s'%s%s)", body, kedr_status_name(s),
             msg, a, b ? " and " : "", b ? b : "");
}

static void test_case(void)
{
    write_text("species.ini", "[Ar]\nmass = 66.3e-27\nd_ref = 4.17e-10\nomega = 0.81\n"
                              "T_ref = 273\nalpha = 1.40\nd_ref_vss = 4.11e-10\nrot_dof = 0\n"
                              "Z_rot = 1\n");
    /* the unit square (sq.txt) at a fifth, turned 30 degrees, in the middle */
    kedr_dsmc_case c;
    TU_OK(load_case("", "type = outline\nfile = sq.txt\nscale = 0.2\nrotate = 30\n"
                    "translate = 0.5 0.4\nvelocity = 1 0\n", &c));
    TU_CHECK(c.nbodies == 1 && c.body[0].type == KEDR_DSMC_BODY_OUTLINE &&
                 strcmp(c.body[0].file, path_of("sq.txt")) == 0 && c.body[0].scale == 0.2 &&
                 c.body[0].rotate[2] == 30 && c.body[0].translate[1] == 0.4 &&
                 c.body[0].velocity[0] == 1,
             "outline body read as type %d, file '%s'", (int)c.body[0].type, c.body[0].file);
    TU_OK(kedr_dsmc_case_check(&c));
    case_refused("", "type = outline\n", "[body] lacks the required key 'file'", NULL);
    case_refused("", "type = outline\nfile = sq.txt\nradius = 1\n", "radius", "type outline");
    case_refused("", "type = outline\nfile = sq.txt\nscale = 0\n", "scale", NULL);
    case_refused("", "type = outline\nfile = sq.txt\nrotate = 0 0 30\n", "rotate", NULL);
    case_refused("", "type = outline\nfile = sq.txt\nscale = 0.2\ntranslate = 1\n", "translate",
                 "2 numbers");
    case_refused("", "type = outline\nfile = sq.txt\n", "sq.txt: the outline spans [0, 1] x [0, 1]",
                 "not strictly inside");
    case_refused("", "type = outline\nfile = sq.txt\nscale = 0.2\ntranslate = 0.9 0.5\n",
                 "the outline spans [0.9, 1.1]", NULL);
    case_refused("", "type = outline\nfile = word.txt\n", "[body] file", "'x' is not a finite");
    case_refused("", "type = outline\nfile = bowtie.txt\nscale = 0.2\ntranslate = 0.5 0.5\n",
                 "[body] file", "intersects itself");
    case_refused("", "type = outline\nfile = nowhere.txt\n", "[body] file", "cannot open");
    case_refused("", "type = outline\nfile = sq.txt\nscale = 0.2\ntranslate = 0.2 0.2\n[body2]\n"
                 "type = circle\ncenter = 0.45 0.3\nradius = 0.1\n", "bounding boxes of bodies 1 "
                 "and 2 meet", NULL);
    /* axisymmetric: a point below the axis; on the axis is fine */
    case_refused("axisymmetric = true\n", "type = outline\nfile = sq.txt\nscale = 0.2\n"
                 "translate = 0.5 -0.1\n", "below the axis", NULL);
    TU_OK(load_case("axisymmetric = true\nboundary_y_min = axis\n",
                    "type = outline\nfile = sq.txt\nscale = 0.2\ntranslate = 0.5 0\n", &c));
    TU_OK(kedr_dsmc_case_check(&c));
    /* not in 3D */
    case_refused("dimensions = 3\nz_min = 0\nz_max = 1\n", "type = outline\nfile = sq.txt\n",
                 "not a 3D body", NULL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kedr_outline_XXXXXX");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    test_readers();
    test_case();
    /* the search reads the host arrays, the same on every back end: the cpu's suffice */
    kedr_ctx *cpu = tu_ctx(KEDR_BACKEND_CPU);
    test_search(cpu, 0);
    test_search(cpu, 1);
    kedr_ctx_destroy(cpu);
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++) {
        kedr_ctx *ctx = tu_ctx(list[i]);
        const char *bname = kedr_backend_name(list[i]);
        for (int axi = 0; axi < 2; axi++)
            for (int cw = 0; cw < 2; cw++)
                test_same_as_polygon(ctx, bname, axi, cw);
        kedr_ctx_destroy(ctx);
    }
    tu_remove_dir(dir);
    return tu_finish("test_dsmc_outline");
}
