/* STL surfaces for kedr dsmc (src/dsmc/stl.c, mesh.c, dsmc_mesh.h):
 *  - the readers: the same tetrahedron as ASCII and binary gives the same triangles; a binary
 *    file whose header begins with "solid" is still binary; every malformed file is refused
 *    with the file, the triangle (and for ASCII the line) and what was expected: a truncated
 *    binary file, a header count that disagrees with the size, a word or number out of place,
 *    NaN and infinite coordinates, no triangles, an empty file, a directory; Wavefront OBJ (quads, item
 *    forms, negative indices) and its errors;
 *  - the checks: an open surface (the edge named), a flipped triangle (both named), a surface
 *    inside out, a degenerate triangle, an edge of three triangles; a surface that crosses
 *    itself (refused when the simulator is built, two crossing triangles named);
 *  - the transform: scale, rotations about each axis, translation;
 *  - the moves' search (dsmc_mesh_hit: the cells a path crosses, each its own triangles)
 *    against every triangle tried in turn, on thousands of random paths of awkward lengths
 *    through a concave body; the triangle test against a plane-and-barycentric reference; the
 *    inside test against the parity of crossings over all triangles;
 *  - the case keys of [body] type = stl, each error naming the case file's line. */
#include "dsmc/sim.h"
#include "test_util.h"
#include "validation/test_dsmc_stl_util.h"

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

static void write_bytes(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");
    if (!f || fwrite(data, 1, n, f) != n)
        TU_CHECK(0, "cannot write %s", name);
    if (f)
        fclose(f);
}

static void write_text(const char *name, const char *text)
{
    write_bytes(name, text, strlen(text));
}

/* A regular-ish tetrahedron, counter-clockwise seen from outside. */
static const double tet[4][9] = {{0, 0, 0, 0, 1, 0, 1, 0, 0},
                                 {0, 0, 0, 1, 0, 0, 0, 0, 1},
                                 {0, 0, 0, 0, 0, 1, 0, 1, 0},
                                 {1, 0, 0, 0, 1, 0, 0, 0, 1}};

/* The tetrahedron as ASCII STL, with `bad` put in place of the text `at` (NULL: as is). */
static void tet_ascii(const char *name, const char *at, const char *bad)
{
    char text[4096] = "solid tet\n";
    for (int t = 0; t < 4; t++) {
        char f[512];
        snprintf(f, sizeof f, "  facet normal 0 0 0\n    outer loop\n");
        strcat(text, f);
        for (int k = 0; k < 3; k++) {
            snprintf(f, sizeof f, "      vertex %g %g %g\n", tet[t][3 * k], tet[t][3 * k + 1],
                     tet[t][3 * k + 2]);
            strcat(text, f);
        }
        strcat(text, "    endloop\n  endfacet\n");
    }
    strcat(text, "endsolid tet\n");
    if (at) {
        char *p = strstr(text, at), out[4096];
        if (!p) {
            TU_CHECK(0, "'%s' not in the text", at);
            return;
        }
        snprintf(out, sizeof out, "%.*s%s%s", (int)(p - text), text, bad, p + strlen(at));
        write_text(name, out);
        return;
    }
    write_text(name, text);
}

/* The tetrahedron as binary STL (n triangles counted in the header, `keep` bytes kept). */
static void tet_binary(const char *name, const char *header, uint32_t count, size_t keep,
                       int nan_at)
{
    unsigned char b[84 + 4 * 50] = {0};
    snprintf((char *)b, 80, "%s", header);
    memcpy(b + 80, &count, 4); /* little-endian hosts only, as the test machines are */
    for (int t = 0; t < 4; t++)
        for (int k = 0; k < 9; k++) {
            float f = (float)tet[t][k];
            if (nan_at == 9 * t + k)
                f = NAN;
            memcpy(b + 84 + 50 * t + 12 + 4 * k, &f, 4);
        }
    write_bytes(name, b, keep ? keep : sizeof b);
}

/* Reads a file that must fail with status st and a message holding each of the texts. */
static void refused(const char *name, kedr_status st, const char *a, const char *b)
{
    dsmc_stl_mesh m;
    kedr_status s = dsmc_stl_load(path_of(name), 1, (double[3]){0, 0, 0}, (double[3]){0, 0, 0},
                                  &m);
    const char *msg = kedr_last_error();
    TU_CHECK(s == st && strstr(msg, name) && strstr(msg, a) && (!b || strstr(msg, b)),
             "%s: status %s, message '%s' (expected %s with '%s'%s%s)", name,
             kedr_status_name(s), msg, kedr_status_name(st), a, b ? " and " : "", b ? b : "");
    TU_CHECK(m.v == NULL && m.ntri == 0, "%s: a refused file left a mesh", name);
}

static void test_readers(void)
{
    dsmc_stl_mesh a, b;
    tet_ascii("tet.stl", NULL, NULL);
    tet_binary("tet-bin.stl", "solid but binary", 4, 0, -1);
    TU_OK(dsmc_stl_read(path_of("tet.stl"), &a));
    TU_OK(dsmc_stl_read(path_of("tet-bin.stl"), &b));
    TU_CHECK(a.ntri == 4 && b.ntri == 4 && memcmp(a.v, b.v, 36 * sizeof(double)) == 0 &&
                 memcmp(a.v, tet, sizeof tet) == 0,
             "ASCII and binary tetrahedra differ (%zu, %zu triangles)", a.ntri, b.ntri);
    TU_OK(dsmc_stl_check("tet", &a));
    TU_CHECK(fabs(dsmc_stl_volume(&a) - 1.0 / 6) < 1e-15, "volume %g", dsmc_stl_volume(&a));
    double d[3] = {1, 0, 0};
    TU_CHECK(fabs(dsmc_stl_projected_area(&a, d) - 0.5) < 1e-15, "projected area %g",
             dsmc_stl_projected_area(&a, d));
    dsmc_stl_free(&a);
    dsmc_stl_free(&b);
    /* ASCII keywords in any case, several solids, Windows line ends */
    write_text("two.stl", "SOLID a\r\nfacet normal 0 0 0\r\nouter loop\r\nvertex 0 0 0\r\n"
                          "vertex 0 1 0\r\nvertex 1 0 0\r\nendloop\r\nendfacet\r\nendsolid a\r\n"
                          "solid b\nfacet normal 0 0 0 outer loop vertex 0 0 0 vertex 1 0 0 "
                          "vertex 0 0 1 endloop endfacet endsolid\n");
    TU_OK(dsmc_stl_read(path_of("two.stl"), &a));
    TU_CHECK(a.ntri == 2 && a.v[9 + 3] == 1, "two solids: %zu triangles", a.ntri);
    dsmc_stl_free(&a);

    /* binary: truncated, wrong counts, NaN, nothing */
    tet_binary("cut.stl", "x", 4, 84 + 3 * 50 + 20, -1);
    refused("cut.stl", KEDR_ERR_PARSE, "truncated", "ends in triangle 4");
    tet_binary("count5.stl", "x", 5, 0, -1);
    refused("count5.stl", KEDR_ERR_PARSE, "counts 5 triangles", "truncated");
    tet_binary("count3.stl", "x", 3, 0, -1);
    refused("count3.stl", KEDR_ERR_PARSE, "counts 3 triangles", "50 more");
    tet_binary("nan.stl", "x", 4, 0, 9 * 2 + 4);
    refused("nan.stl", KEDR_ERR_PARSE, "triangle 3: vertex 2 coordinate y", "finite");
    unsigned char empty_bin[84] = {0};
    write_bytes("none.stl", empty_bin, 84);
    refused("none.stl", KEDR_ERR_PARSE, "no triangles", NULL);
    write_bytes("empty.stl", "", 0);
    refused("empty.stl", KEDR_ERR_PARSE, "too short", NULL);
    write_text("short.stl", "not an stl file");
    refused("short.stl", KEDR_ERR_PARSE, "too short", "'solid'");

    /* ASCII: numbers, words, ends */
    tet_ascii("abc.stl", "vertex 0 1 0\n    ", "vertex 0 1 0\n    vertex 0 abc 0\n    ");
    refused("abc.stl", KEDR_ERR_PARSE, "'abc' is not a number", "triangle 1");
    tet_ascii("ascii-nan.stl", "vertex 0 0 1\n      vertex 0 1 0",
              "vertex 0 0 1\n      vertex nan 1 0");
    refused("ascii-nan.stl", KEDR_ERR_PARSE, ".stl:20: triangle 3: 'nan' after 'vertex'",
            "finite");
    tet_ascii("inf.stl", "vertex 1 0 0\n    endloop", "vertex 1 0 1e999\n    endloop");
    refused("inf.stl", KEDR_ERR_PARSE, "'1e999'", "finite");
    tet_ascii("loop.stl", "outer loop", "outer lop");
    refused("loop.stl", KEDR_ERR_PARSE, ".stl:3: triangle 1: expected 'loop', found 'lop'", NULL);
    tet_ascii("two-numbers.stl", "vertex 0 1 0\n    endloop", "vertex 0 1\n    endloop");
    refused("two-numbers.stl", KEDR_ERR_PARSE, "'endloop' is not a number", "this is number 3");
    tet_ascii("ends.stl", "    endloop\n  endfacet\nendsolid tet\n", "");
    refused("ends.stl", KEDR_ERR_PARSE, "triangle 4: the file ends where 'endloop' was expected",
            NULL);
    tet_ascii("junk.stl", "endsolid tet\n", "endsolid tet\ngarbage\n");
    refused("junk.stl", KEDR_ERR_PARSE, ".stl:31: expected 'solid' (a new solid)", "'garbage'");
    write_text("no-tri.stl", "solid x\nendsolid x\n");
    refused("no-tri.stl", KEDR_ERR_PARSE, "no triangles", NULL);
    write_text("facet.stl", "solid x\nfacett normal 0 0 0\n");
    refused("facet.stl", KEDR_ERR_PARSE, ".stl:2: triangle 1: expected 'facet' or 'endsolid', "
            "found 'facett'", NULL);
    refused("missing.stl", KEDR_ERR_IO, "cannot open", NULL);
    TU_CHECK(mkdir(path_of("dir.stl"), 0700) == 0, "cannot make dir.stl");
    refused("dir.stl", KEDR_ERR_IO, "expected a regular file", NULL);
}

/* Wavefront OBJ: a unit cube of quads (with normals, texture items, comments and a negative
 * index) as 12 triangles; its errors. */
static void test_obj(void)
{
    const char *cube = "# a cube\no cube\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                       "v 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1 1.0\nvn 0 0 1\nvt 0 0\n"
                       "f 1 4 3 2\nf 5/1 6/1 7/1 8/1\nf 1//1 2//1 6//1 5//1\n"
                       "f 2/1/1 3/1/1 7/1/1 6/1/1\nf 3 4 8 7\nf -8 -4 -1 -5\n";
    write_text("cube.obj", cube);
    dsmc_stl_mesh m;
    TU_OK(dsmc_stl_load(path_of("cube.obj"), 2, (double[3]){0, 0, 0}, (double[3]){0, 0, 0}, &m));
    TU_CHECK(m.ntri == 12 && fabs(dsmc_stl_volume(&m) - 8) < 1e-12, "OBJ cube: %zu triangles, "
             "volume %g", m.ntri, m.ntri ? dsmc_stl_volume(&m) : 0.0);
    dsmc_stl_free(&m);
    write_text("range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n");
    refused("range.obj", KEDR_ERR_PARSE, "range.obj:4: face item 3: vertex 4: expected 1 to 3",
            NULL);
    write_text("neg.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n");
    refused("neg.obj", KEDR_ERR_PARSE, "neg.obj:4: face item 3: vertex -4", NULL);
    write_text("num.obj", "v 0 0 0\nv 1 zero 0\n");
    refused("num.obj", KEDR_ERR_PARSE, "num.obj:2: vertex 2: expected 3 numbers after 'v', "
            "number 2 is 'zero'", NULL);
    write_text("short.obj", "v 0 0\n");
    refused("short.obj", KEDR_ERR_PARSE, "short.obj:1: vertex 1: expected 3 numbers", NULL);
    write_text("nan.obj", "v 0 0 0\nv nan 0 0\n");
    refused("nan.obj", KEDR_ERR_PARSE, "nan.obj:2: vertex 2: 'nan': expected a finite number",
            NULL);
    write_text("two.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n");
    refused("two.obj", KEDR_ERR_PARSE, "two.obj:3: a face of 2 vertices", NULL);
    write_text("item.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n");
    refused("item.obj", KEDR_ERR_PARSE, "item.obj:4: face item 3: 'x'", NULL);
    write_text("none.obj", "v 0 0 0\n# nothing else\n");
    refused("none.obj", KEDR_ERR_PARSE, "no faces", NULL);
    /* an open OBJ surface: one quad missing */
    const char *open_cube = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\n"
                            "v 0 1 1\nf 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\n";
    write_text("open.obj", open_cube);
    refused("open.obj", KEDR_ERR_INVALID, "not closed", "(4 open edges)");
}

/* A mesh as binary STL in name. */
static void mesh_file(const char *name, const double *v, size_t ntri)
{
    dsmc_stl_mesh m = {ntri, (double *)v};
    TU_OK(dsmc_stl_write_binary(path_of(name), &m));
}

static void test_checks(void)
{
    double v[5][9];
    memcpy(v, tet, sizeof tet);
    mesh_file("open.stl", &v[0][0], 3);
    refused("open.stl", KEDR_ERR_INVALID, "not closed", "(3 open edges)");
    /* triangle 2 reversed */
    double flip[4][9];
    memcpy(flip, tet, sizeof tet);
    for (int d = 0; d < 3; d++) {
        double t = flip[1][3 + d];
        flip[1][3 + d] = flip[1][6 + d];
        flip[1][6 + d] = t;
    }
    mesh_file("flip.stl", &flip[0][0], 4);
    refused("flip.stl", KEDR_ERR_INVALID, "oriented oppositely", "flipped");
    const char *msg = kedr_last_error();
    TU_CHECK(strstr(msg, "triangles 1 and 2") || strstr(msg, "triangles 2 and 3") ||
                 strstr(msg, "triangles 2 and 4"),
             "the flipped triangle 2 not named: %s", msg);
    /* all reversed: inside out */
    for (int t = 0; t < 4; t++)
        for (int d = 0; d < 3; d++) {
            double x = flip[t][3 + d];
            flip[t][3 + d] = flip[t][6 + d];
            flip[t][6 + d] = x;
        }
    for (int d = 0; d < 3; d++) { /* triangle 2 is back to tet's order: reverse it too */
        double x = flip[1][3 + d];
        flip[1][3 + d] = flip[1][6 + d];
        flip[1][6 + d] = x;
    }
    mesh_file("inside-out.stl", &flip[0][0], 4);
    refused("inside-out.stl", KEDR_ERR_INVALID, "point inward", "reverse");
    /* a degenerate triangle: two equal vertices */
    memcpy(v, tet, sizeof tet);
    memcpy(&v[2][3], &v[2][0], 3 * sizeof(double));
    mesh_file("degenerate.stl", &v[0][0], 4);
    refused("degenerate.stl", KEDR_ERR_INVALID, "triangle 3 is degenerate", "zero area");
    /* a fifth triangle on an edge of the tetrahedron */
    memcpy(v, tet, sizeof tet);
    const double extra[9] = {0, 0, 0, 1, 0, 0, 0, -1, 0};
    memcpy(v[4], extra, sizeof extra);
    mesh_file("three.stl", &v[0][0], 5);
    refused("three.stl", KEDR_ERR_INVALID, "shared by 3 triangles", NULL);
}

static void test_transform(void)
{
    double v[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    dsmc_stl_mesh m = {1, v};
    dsmc_stl_transform(&m, 2, (double[3]){0, 0, 90}, (double[3]){1, 2, 3});
    const double want[9] = {1, 4, 3, -1, 2, 3, 1, 2, 5};
    double err = 0;
    for (int k = 0; k < 9; k++)
        err = fmax(err, fabs(v[k] - want[k]));
    TU_CHECK(err < 1e-15, "scale 2, 90 degrees about z, translate: error %g", err);
    double w[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    m.v = w;
    /* 90 about x: y -> z, z -> -y; then 90 about y: z -> x, x -> -z */
    dsmc_stl_transform(&m, 1, (double[3]){90, 90, 0}, (double[3]){0, 0, 0});
    const double want2[9] = {0, 0, -1, 1, 0, 0, 0, -1, 0};
    err = 0;
    for (int k = 0; k < 9; k++)
        err = fmax(err, fabs(w[k] - want2[k]));
    TU_CHECK(err < 1e-15, "90 about x then 90 about y: error %g", err);
}

/* ---- the search against every triangle ---------------------------------------------------- */

static double urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * 0x1.0p-53;
}

/* The first hit over all triangles, by dsmc_tri_hit. */
static int64_t brute_hit(const dsmc_params *p, const double *pos, const double *u, double tmax,
                         int front, double *th)
{
    const dsmc_mesh *m = &p->mesh_host;
    double best = tmax;
    int64_t hit = -1;
    for (uint32_t t = 0; t < m->ntri; t++) {
        double b = dsmc_tri_hit(m->tri + 12 * (size_t)t, pos, u, front, best);
        if (b < best)
            best = b, hit = t;
    }
    *th = best;
    return hit;
}

/* The triangle test by another route: the plane's crossing, then the point's barycentric
 * coordinates from sub-triangle areas. Returns t or -1. */
static double plane_hit(const double *T, const double *pos, const double *u)
{
    const double *n = T + 9;
    double un = u[0] * n[0] + u[1] * n[1] + u[2] * n[2];
    if (un == 0)
        return -1;
    double t = ((T[0] - pos[0]) * n[0] + (T[1] - pos[1]) * n[1] + (T[2] - pos[2]) * n[2]) / un;
    double q[3], a = 0, s = 0;
    for (int d = 0; d < 3; d++)
        q[d] = pos[d] + u[d] * t - T[d];
    /* q = bu e1 + bv e2: the areas of (q, e2) and (e1, q) over (e1, e2) along n */
    double c1[3] = {q[1] * T[8] - q[2] * T[7], q[2] * T[6] - q[0] * T[8],
                    q[0] * T[7] - q[1] * T[6]};
    double c2[3] = {T[4] * q[2] - T[5] * q[1], T[5] * q[0] - T[3] * q[2],
                    T[3] * q[1] - T[4] * q[0]};
    double c0[3] = {T[4] * T[8] - T[5] * T[7], T[5] * T[6] - T[3] * T[8],
                    T[3] * T[7] - T[4] * T[6]};
    double area = c0[0] * n[0] + c0[1] * n[1] + c0[2] * n[2];
    a = (c1[0] * n[0] + c1[1] * n[1] + c1[2] * n[2]) / area;
    s = (c2[0] * n[0] + c2[1] * n[1] + c2[2] * n[2]) / area;
    return a >= 0 && s >= 0 && a + s <= 1 && t > 0 ? t : -1;
}

/* grid: 1 coarse (9 x 11 x 7 cells, split in 2^3 bins each), 3 fine (27 x 33 x 21, 1 bin) */
static void test_search(kedr_ctx *ctx, int grid)
{
    const double c[3] = {0.5, 0.45, 0.55};
    dsmc_stl_mesh m = ts_icosphere(2, 0.3, c, 0.2);
    mesh_file("bumpy.stl", m.v, m.ntri);
    kedr_dsmc_case k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "bumpy");
    k.dims = 3;
    k.hi[0] = k.hi[1] = k.hi[2] = 1;
    k.nx = 9 * grid; /* cells of awkward sizes, not aligned with anything */
    k.ny = 11 * grid;
    k.nz = 7 * grid;
    k.nspecies = 1;
    k.species[0] = (kedr_dsmc_species){
        "HS", 66.3e-27, 4.17e-10, 0.5, 273, 1.0, 4.17e-10, 0, 1, 0, 0, 0, 0};
    k.fraction[0] = 1;
    k.number_density = 1e18;
    k.temperature = k.wall_temperature = 300;
    k.dt = 1e-6;
    k.steps = 1;
    k.sample_every = 1;
    k.seed = 3;
    k.weight = 1e14;
    k.nbodies = 1;
    k.body[0].type = KEDR_DSMC_BODY_STL;
    snprintf(k.body[0].file, sizeof k.body[0].file, "%s", path_of("bumpy.stl"));
    k.body[0].scale = 1;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &k, &sim));
    if (!sim) {
        dsmc_stl_free(&m);
        return;
    }
    const dsmc_params *p = &sim->p;
    TU_CHECK(p->mesh_host.ntri == m.ntri && p->nsolids == 1, "%u triangles", p->mesh_host.ntri);
    int split = (int)lround(p->dx / p->mesh_host.h[0]);
    printf("  %d x %d x %d cells, %d x %d x %d bins\n", k.nx, k.ny, k.nz, p->mesh_host.n[0],
           p->mesh_host.n[1], p->mesh_host.n[2]);
    TU_CHECK(split == (grid == 1 ? 2 : 1), "cells split in %d bins along x", split);
    uint64_t seed = 12345;
    int bad = 0, hits = 0, prim_bad = 0, prim_n = 0, walk_bad = 0;
    /* the same parameters without the cut cells: every path walked bin by bin */
    dsmc_params *walk = malloc(sizeof *walk);
    TU_CHECK(walk != NULL, "out of memory");
    if (!walk) {
        kedr_dsmc_destroy(sim);
        dsmc_stl_free(&m);
        return;
    }
    *walk = *p;
    TU_CHECK(p->mesh_cut_host != NULL, "the cut cells were not built");
    walk->mesh_cut_host = NULL;
    const double lens[6] = {1e-9, 0.01, 0.111, 0.25, 0.9, 3.0};
    for (int i = 0; i < 6000; i++) {
        double pos[3], u[3], len = lens[i % 6];
        for (int d = 0; d < 3; d++)
            pos[d] = urand(&seed);
        double th = urand(&seed) * 2 * M_PI, z = 2 * urand(&seed) - 1, r = sqrt(1 - z * z);
        u[0] = r * cos(th);
        u[1] = r * sin(th);
        u[2] = z;
        if (i % 7 == 0) /* along an axis */
            u[(i / 7) % 3] = 0;
        int front = i % 2;
        double ta = 0, tb = 0;
        int64_t a = dsmc_mesh_hit(p, pos, u, len, front, -1, &ta);
        int64_t b = brute_hit(p, pos, u, len, front, &tb);
        double tw = 0;
        int64_t w = dsmc_mesh_hit(walk, pos, u, len, front, -1, &tw);
        walk_bad += w != a || (a >= 0 && tw != ta);
        /* the same triangle, or one at the same time (a shared edge or vertex) */
        if (a != b && !(a >= 0 && b >= 0 && fabs(ta - tb) <= 1e-12 * (1 + tb)))
            bad++;
        if (a >= 0 && a == b && ta != tb)
            bad++;
        hits += b >= 0;
        if (b >= 0) { /* the primitive against the plane-and-barycentric route */
            double t2 = plane_hit(p->mesh_host.tri + 12 * b, pos, u);
            prim_n++;
            prim_bad += t2 < 0 || fabs(t2 - tb) > 1e-9 * (1 + tb);
        }
    }
    printf("  %d random paths: %d hits; the cell search and every triangle disagree on %d; "
           "the triangle test and the plane route on %d of %d\n", 6000, hits, bad, prim_bad,
           prim_n);
    TU_CHECK(bad == 0 && hits > 300, "%d of 6000 paths disagree (%d hits)", bad, hits);
    TU_CHECK(walk_bad == 0, "the search with and without the cut cells differ on %d paths",
             walk_bad);
    free(walk);
    TU_CHECK(prim_bad <= prim_n / 1000, "triangle test and plane route disagree on %d of %d",
             prim_bad, prim_n);
    /* inside: against the parity of crossings over all triangles along a random direction */
    int wrong = 0, inside = 0;
    for (int i = 0; i < 4000; i++) {
        double pos[3], u[3];
        for (int d = 0; d < 3; d++)
            pos[d] = c[d] + 0.8 * (urand(&seed) - 0.5);
        double th = urand(&seed) * 2 * M_PI, z = 2 * urand(&seed) - 1, r = sqrt(1 - z * z);
        u[0] = r * cos(th);
        u[1] = r * sin(th);
        u[2] = z;
        int cross = 0;
        for (uint32_t t = 0; t < p->mesh_host.ntri; t++) {
            double b = dsmc_tri_hit(p->mesh_host.tri + 12 * (size_t)t, pos, u, 0, 10.0);
            cross += b < 10.0;
        }
        int in = dsmc_inside_solid(p, 0, pos[0], pos[1], pos[2]);
        wrong += in != (cross % 2);
        inside += in;
    }
    printf("  4000 random points: %d inside, %d disagree with the crossing parity\n", inside,
           wrong);
    TU_CHECK(wrong == 0 && inside > 400, "inside test: %d wrong (%d inside)", wrong, inside);
    /* the removed volume against the body's */
    size_t nc = (size_t)k.nx * k.ny * k.nz;
    double *vol = malloc(nc * sizeof *vol), removed = 0;
    TU_OK(kedr_dsmc_gas_volume(sim, vol));
    for (size_t i = 0; i < nc; i++)
        removed += p->cell_volume - vol[i];
    double exact = dsmc_stl_volume(&m);
    printf("  concave body: removed volume / its volume = %.6f\n", removed / exact);
    /* the midpoint rule over 16 x 16 lines a cut cell: 1.1e-4 on the fine grid, 5.4e-4 on the
     * coarse one */
    TU_CHECK(fabs(removed / exact - 1) < (grid == 1 ? 1e-3 : 3e-4), "removed %.9g, volume %.9g",
             removed, exact);
    free(vol);
    kedr_dsmc_destroy(sim);
    dsmc_stl_free(&m);
}

/* A closed, outward surface that crosses itself (two overlapping tetrahedra in one file) loads,
 * and the simulator refuses it, naming two triangles that cross. */
static void test_crossing(kedr_ctx *ctx)
{
    double v[8][9];
    memcpy(v, tet, sizeof tet);
    for (int t = 0; t < 4; t++)
        for (int k = 0; k < 9; k++)
            v[4 + t][k] = tet[t][k] + 0.2;
    mesh_file("crossing.stl", &v[0][0], 8);
    dsmc_stl_mesh m;
    TU_OK(dsmc_stl_load(path_of("crossing.stl"), 1, (double[3]){0, 0, 0}, (double[3]){0, 0, 0},
                        &m));
    dsmc_stl_free(&m);
    kedr_dsmc_case k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "crossing");
    k.dims = 3;
    k.lo[0] = k.lo[1] = k.lo[2] = -0.5;
    k.hi[0] = k.hi[1] = k.hi[2] = 2;
    k.nx = k.ny = k.nz = 5;
    k.nspecies = 1;
    k.species[0] = (kedr_dsmc_species){
        "HS", 66.3e-27, 4.17e-10, 0.5, 273, 1.0, 4.17e-10, 0, 1, 0, 0, 0, 0};
    k.fraction[0] = 1;
    k.number_density = 1e18;
    k.temperature = k.wall_temperature = 300;
    k.dt = 1e-6;
    k.steps = 1;
    k.sample_every = 1;
    k.weight = 1e16;
    k.nbodies = 1;
    k.body[0].type = KEDR_DSMC_BODY_STL;
    snprintf(k.body[0].file, sizeof k.body[0].file, "%s", path_of("crossing.stl"));
    k.body[0].scale = 1;
    kedr_dsmc *sim = NULL;
    kedr_status s = kedr_dsmc_create(ctx, &k, &sim);
    const char *msg = kedr_last_error();
    TU_CHECK(s == KEDR_ERR_INVALID && !sim && strstr(msg, "crossing.stl") &&
                 strstr(msg, "cross each other") && strstr(msg, "intersects itself"),
             "a self-intersecting surface: %s, '%s'", kedr_status_name(s), msg);
    kedr_dsmc_destroy(sim);
    /* one tetrahedron alone is fine */
    mesh_file("one.stl", &v[0][0], 4);
    snprintf(k.body[0].file, sizeof k.body[0].file, "%s", path_of("one.stl"));
    TU_OK(kedr_dsmc_create(ctx, &k, &sim));
    kedr_dsmc_destroy(sim);
}

/* ---- case files ----------------------------------------------------------------------------- */

/* A 3D case around [body] text; returns the status of loading it, the message in msg. */
static kedr_status load_case(const char *body, kedr_dsmc_case *c)
{
    char text[4096];
    snprintf(text, sizeof text,
             "[domain]\ndimensions = 3\nx_min = 0\nx_max = 1\ny_min = 0\ny_max = 1\nz_min = 0\n"
             "z_max = 1\n\n[grid]\nnx = 4\nny = 4\nnz = 4\n\n[species]\nfile = species.ini\n"
             "gas = Ar\n\n[freestream]\nnumber_density = 1e19\ntemperature = 300\n"
             "velocity_x = 1000\n\n[wall]\ntemperature = 300\n\n[body]\n%s\n[run]\n"
             "dt = 1e-6\nsteps = 10\n"
             "particles_per_cell = 5\n", body);
    write_text("case.ini", text);
    return kedr_dsmc_case_load(path_of("case.ini"), c);
}

static void case_refused(const char *body, const char *a, const char *b)
{
    kedr_dsmc_case c;
    kedr_status s = load_case(body, &c);
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
    /* the tetrahedron (1 m) placed in the middle of the 1 m box, half size */
    kedr_dsmc_case c;
    TU_OK(load_case("type = stl\nfile = tet.stl\nscale = 0.5\nrotate = 0 0 0\n"
                    "translate = 0.3 0.3 0.3\n", &c));
    TU_CHECK(c.nbodies == 1 && c.body[0].type == KEDR_DSMC_BODY_STL &&
                 strcmp(c.body[0].file, path_of("tet.stl")) == 0 && c.body[0].scale == 0.5 &&
                 c.body[0].translate[2] == 0.3,
             "stl body read as type %d, file '%s'", (int)c.body[0].type, c.body[0].file);
    TU_OK(kedr_dsmc_case_check(&c));
    case_refused("type = stl\n", "[body] lacks the required key 'file'", NULL);
    case_refused("type = stl\nfile = tet.stl\nradius = 1\n", "radius", "type stl");
    case_refused("type = stl\nfile = tet.stl\nscale = 0\n", "scale", NULL);
    case_refused("type = stl\nfile = tet.stl\nrotate = 90 0\n", "rotate", "3 numbers");
    case_refused("type = stl\nfile = tet.stl\ntranslate = 1\n", "translate", "3 numbers");
    case_refused("type = stl\nfile = tet.stl\n", "extends over x", "strictly inside");
    case_refused("type = stl\nfile = abc.stl\nscale = 0.5\ntranslate = 0.3 0.3 0.3\n",
                 "[body] file", "'abc' is not a number");
    case_refused("type = stl\nfile = open.stl\nscale = 0.5\ntranslate = 0.3 0.3 0.3\n",
                 "[body] file", "not closed");
    case_refused("type = stl\nfile = nowhere.stl\n", "[body] file", "cannot open");
    /* two bodies whose boxes meet */
    case_refused("type = stl\nfile = tet.stl\nscale = 0.3\ntranslate = 0.2 0.2 0.2\n[body2]\n"
                 "type = stl\nfile = tet.stl\nscale = 0.3\ntranslate = 0.4 0.2 0.2\n",
                 "boxes of bodies 1 and 2 meet", NULL);
    /* not in 2D */
    write_text("case2d.ini", "[domain]\nx_min = 0\nx_max = 1\ny_min = 0\ny_max = 1\n[grid]\n"
                             "nx = 4\nny = 4\n[species]\nfile = species.ini\ngas = Ar\n"
                             "[freestream]\nnumber_density = 1e19\ntemperature = 300\n"
                             "velocity_x = 1000\n[wall]\ntemperature = 300\n[body]\n"
                             "type = stl\nfile = tet.stl\n"
                             "[run]\ndt = 1e-6\nsteps = 10\nparticles_per_cell = 5\n");
    kedr_status s = kedr_dsmc_case_load(path_of("case2d.ini"), &c);
    TU_CHECK(s != KEDR_OK && strstr(kedr_last_error(), "a 3D body"), "stl in 2D: %s",
             kedr_last_error());
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kedr_stl_XXXXXX");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    test_readers();
    test_obj();
    test_checks();
    test_transform();
    test_case();
    /* the search reads the host arrays, the same on every back end: the cpu's suffice */
    kedr_ctx *ctx = tu_ctx(KEDR_BACKEND_CPU);
    test_search(ctx, 1);
    test_search(ctx, 3);
    test_crossing(ctx);
    kedr_ctx_destroy(ctx);
    tu_remove_dir(dir);
    return tu_finish("test_dsmc_stl");
}
