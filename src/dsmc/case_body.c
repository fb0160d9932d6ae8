/* The [body] sections of a DSMC case file (docs/dsmc.md, Bodies): built-in shapes, polygons,
 * and bodies from surface files (stl, obj, outline), each key checked as case.c checks the
 * others, so every error names the file, line, key and what was expected. */
#include "kedr/dsmc.h"
#include "kedr/ini.h"

#include "geometry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQ KEDR_INI_REQUIRED
#define POS (KEDR_INI_LO_OPEN) /* with lo = 0: strictly positive */

const char *const dsmc_wall_names[] = {"diffuse", "specular", "maxwell", NULL};

/* Appends a closed polygon of np points (x y pairs) as body b's segments. */
static void add_polygon(kedr_dsmc_case *c, kedr_dsmc_body *b, const double *pts, int np)
{
    b->first = c->nsegments;
    b->count = np;
    for (int k = 0; k < np; k++) {
        int n = (k + 1) % np;
        double *sg = c->segment[c->nsegments++];
        sg[0] = pts[2 * k];
        sg[1] = pts[2 * k + 1];
        sg[2] = pts[2 * n];
        sg[3] = pts[2 * n + 1];
    }
}

/* A body's own wall temperature, model and accommodation (2D and 3D bodies alike). */
static kedr_status read_body_wall(kedr_ini *ini, const char *sec, kedr_dsmc_body *b)
{
    KEDR_TRY(kedr_ini_double(ini, sec, "temperature", POS, 0, 1e6, &b->temperature));
    /* Its own wall model replaces [wall] model and accommodation for this body. */
    int wall = KEDR_DSMC_WALL_DIFFUSE;
    KEDR_TRY(kedr_ini_choice(ini, sec, "wall", 0, dsmc_wall_names, &wall));
    b->own_wall = kedr_ini_line(ini, sec, "wall") != 0;
    b->wall_model = (kedr_dsmc_wall)wall;
    b->accommodation = 1;
    KEDR_TRY(kedr_ini_double(ini, sec, "accommodation", 0, 0, 1, &b->accommodation));
    if (kedr_ini_line(ini, sec, "accommodation") && wall != KEDR_DSMC_WALL_MAXWELL)
        return kedr_ini_fail(ini, sec, "accommodation", "only a body with wall = maxwell has one");
    return KEDR_OK;
}

/* Ends a body section: its wall keys, then the body joins the case if it fits in the domain
 * and clears the others (an error names the section's key `key`). */
static kedr_status add_body(kedr_ini *ini, const char *sec, const char *key, kedr_dsmc_case *c,
                            int *made)
{
    KEDR_TRY(read_body_wall(ini, sec, &c->body[c->nbodies]));
    c->nbodies++;
    *made = 1;
    char msg[512];
    if (dsmc_body_problem(c, msg, sizeof msg) >= 0)
        return kedr_ini_fail(ini, sec, key, "%s", msg);
    return KEDR_OK;
}

/* A 3D body section: sphere (center x y z, radius), box (center x y z, size along x y z) or
 * cone (apex x y z, half_angle, length; axis along +x). */
static kedr_status read_body3(kedr_ini *ini, const char *sec, kedr_dsmc_case *c,
                              kedr_dsmc_body_type type, int *made)
{
    if (c->nbodies == KEDR_DSMC_MAX_BODIES)
        return kedr_ini_fail(ini, sec, "type", "more than %d bodies", KEDR_DSMC_MAX_BODIES);
    kedr_dsmc_body *b = &c->body[c->nbodies];
    memset(b, 0, sizeof *b);
    b->type = type;
    int n = 0;
    const char *where = type == KEDR_DSMC_BODY_CONE ? "apex" : "center";
    KEDR_TRY(kedr_ini_doubles(ini, sec, where, REQ, -1e6, 1e6, b->center, 3, &n));
    if (n != 3)
        return kedr_ini_fail(ini, sec, where, "expected 3 numbers: x y z");
    if (type == KEDR_DSMC_BODY_SPHERE) {
        KEDR_TRY(kedr_ini_double(ini, sec, "radius", REQ | POS, 0, 1e6, &b->radius));
    } else if (type == KEDR_DSMC_BODY_CUBOID) {
        KEDR_TRY(kedr_ini_doubles(ini, sec, "size", REQ, -1e6, 1e6, b->size, 3, &n));
        if (n != 3 || !(b->size[0] > 0) || !(b->size[1] > 0) || !(b->size[2] > 0))
            return kedr_ini_fail(ini, sec, "size", "expected 3 numbers > 0: edge lengths along x, "
                                 "y and z");
    } else {
        KEDR_TRY(kedr_ini_double(ini, sec, "half_angle", REQ | POS | KEDR_INI_HI_OPEN, 0, 90,
                                 &b->half_angle));
        KEDR_TRY(kedr_ini_double(ini, sec, "length", REQ | POS, 0, 1e6, &b->length));
    }
    return add_body(ini, sec, where, c, made);
}

/* The file key of a body of type stl or outline: relative to the case file's directory. */
static kedr_status read_body_file(kedr_ini *ini, const char *sec, kedr_dsmc_body *b,
                                  const char *what)
{
    const char *file = NULL, *name = kedr_ini_name(ini), *slash = strrchr(name, '/');
    KEDR_TRY(kedr_ini_string(ini, sec, "file", REQ, &file));
    int len = file[0] == '/' || !slash ? snprintf(b->file, sizeof b->file, "%s", file)
                                       : snprintf(b->file, sizeof b->file, "%.*s/%s",
                                                  (int)(slash - name), name, file);
    if (!file[0] || len < 0 || (size_t)len >= sizeof b->file)
        return kedr_ini_fail(ini, sec, "file", "'%s': expected the path of %s (at most %zu bytes "
                             "with the case file's directory)", file, what, sizeof b->file - 1);
    return KEDR_OK;
}

/* A 3D body of type stl: file (relative to the case file's directory), scale, rotate (degrees
 * about x, then y, then z) and translate. The file is read and checked at once, so that an
 * error in it names this section too. */
/* The next body of c, of a type read from a file: its file and scale (the keys both file
 * bodies share). */
static kedr_status new_file_body(kedr_ini *ini, const char *sec, kedr_dsmc_case *c,
                                 kedr_dsmc_body_type type, const char *what, kedr_dsmc_body **out)
{
    if (c->nbodies == KEDR_DSMC_MAX_BODIES)
        return kedr_ini_fail(ini, sec, "type", "more than %d bodies", KEDR_DSMC_MAX_BODIES);
    kedr_dsmc_body *b = &c->body[c->nbodies];
    memset(b, 0, sizeof *b);
    b->type = type;
    KEDR_TRY(read_body_file(ini, sec, b, what));
    b->scale = 1;
    KEDR_TRY(kedr_ini_double(ini, sec, "scale", POS, 0, 1e6, &b->scale));
    *out = b;
    return KEDR_OK;
}

static kedr_status read_body_stl(kedr_ini *ini, const char *sec, kedr_dsmc_case *c, int *made)
{
    kedr_dsmc_body *b;
    KEDR_TRY(new_file_body(ini, sec, c, KEDR_DSMC_BODY_STL, "an STL file", &b));
    int n = 0;
    KEDR_TRY(kedr_ini_doubles(ini, sec, "rotate", 0, -360, 360, b->rotate, 3, &n));
    if (kedr_ini_line(ini, sec, "rotate") && n != 3)
        return kedr_ini_fail(ini, sec, "rotate", "expected 3 numbers: degrees about x, then y, "
                             "then z");
    KEDR_TRY(kedr_ini_doubles(ini, sec, "translate", 0, -1e6, 1e6, b->translate, 3, &n));
    if (kedr_ini_line(ini, sec, "translate") && n != 3)
        return kedr_ini_fail(ini, sec, "translate", "expected 3 numbers: x y z (m)");
    return add_body(ini, sec, "file", c, made);
}

/* An optional key of two numbers into out[0], out[1] (left as they are when the key is absent). */
static kedr_status read_pair(kedr_ini *ini, const char *sec, const char *key, const char *what,
                             double out[2])
{
    double v[2];
    int n = 0;
    KEDR_TRY(kedr_ini_doubles(ini, sec, key, 0, -1e6, 1e6, v, 2, &n));
    if (!kedr_ini_line(ini, sec, key))
        return KEDR_OK;
    if (n != 2)
        return kedr_ini_fail(ini, sec, key, "expected 2 numbers: %s", what);
    out[0] = v[0];
    out[1] = v[1];
    return KEDR_OK;
}

/* A 2D or axisymmetric body of type outline: file (relative to the case file's directory),
 * scale, rotate (degrees about z), translate (x y) and velocity. The file is read and checked at
 * once (dsmc_body_problem), so that an error in it names this section too. */
static kedr_status read_body_outline(kedr_ini *ini, const char *sec, kedr_dsmc_case *c,
                                     int *made)
{
    kedr_dsmc_body *b;
    KEDR_TRY(new_file_body(ini, sec, c, KEDR_DSMC_BODY_OUTLINE, "an outline file", &b));
    KEDR_TRY(kedr_ini_double(ini, sec, "rotate", 0, -360, 360, &b->rotate[2]));
    KEDR_TRY(read_pair(ini, sec, "translate", "x y (m)", b->translate));
    KEDR_TRY(read_pair(ini, sec, "velocity", "ux uy (m/s)", b->velocity));
    return add_body(ini, sec, "file", c, made);
}

/* One body section: [body], [body2], ... */
static kedr_status read_body(kedr_ini *ini, const char *sec, kedr_dsmc_case *c, int *made)
{
    static const char *const types[] = {"none", "plate", "polygon", "circle", "box", "wedge",
                                        "sphere", "cone", "stl", "outline", NULL};
    enum { NONE, PLATE, POLYGON, CIRCLE, BOX, WEDGE, SPHERE, CONE, STL, OUTLINE };
    int type = NONE;
    *made = 0;
    KEDR_TRY(kedr_ini_choice(ini, sec, "type", 0, types, &type));
    /* Which keys each type takes; any other given key is an error naming its line. */
    static const char *const keys[] = {"points", "center", "radius", "size", "apex", "half_angle",
                                       "length", "file", "scale", "rotate", "translate", NULL};
    static const unsigned uses[] = {0, 1, 1, 2 | 4, 2 | 8, 16 | 32 | 64, 2 | 4, 16 | 32 | 64,
                                    128 | 256 | 512 | 1024, 128 | 256 | 512 | 1024};
    for (int k = 0; keys[k]; k++)
        if (!(uses[type] & (1u << k)) && kedr_ini_line(ini, sec, keys[k]))
            return kedr_ini_fail(ini, sec, keys[k], "not a key of a body of type %s", types[type]);
    if (type == NONE)
        return KEDR_OK;
    if (c->dims == 3) {
        if (type != SPHERE && type != BOX && type != CONE && type != STL)
            return kedr_ini_fail(ini, sec, "type", "%s: not a 3D body (3D cases take sphere, box, "
                                 "cone and stl)", types[type]);
        if (kedr_ini_line(ini, sec, "velocity"))
            return kedr_ini_fail(ini, sec, "velocity", "3D bodies are at rest");
        if (type == STL)
            return read_body_stl(ini, sec, c, made);
        return read_body3(ini, sec, c, type == SPHERE ? KEDR_DSMC_BODY_SPHERE
                                       : type == BOX  ? KEDR_DSMC_BODY_CUBOID
                                                      : KEDR_DSMC_BODY_CONE, made);
    }
    if (type == SPHERE || type == CONE || type == STL)
        return kedr_ini_fail(ini, sec, "type", "%s: a 3D body (needs [domain] dimensions = 3); 2D "
                             "cases take plate, polygon, circle, box, wedge and outline",
                             types[type]);
    if (type == OUTLINE)
        return read_body_outline(ini, sec, c, made);
    int room = KEDR_DSMC_MAX_SEGMENTS - c->nsegments;
    if (c->nbodies == KEDR_DSMC_MAX_BODIES)
        return kedr_ini_fail(ini, sec, "type", "more than %d bodies", KEDR_DSMC_MAX_BODIES);
    kedr_dsmc_body *b = &c->body[c->nbodies];
    memset(b, 0, sizeof *b);
    double pts[2 * KEDR_DSMC_MAX_SEGMENTS], v[2];
    int n = 0;
    const char *what = "points";
    switch (type) {
    case PLATE:
    case POLYGON:
        KEDR_TRY(kedr_ini_doubles(ini, sec, "points", REQ, -1e6, 1e6, pts,
                                  type == PLATE ? 4 : 2 * KEDR_DSMC_MAX_SEGMENTS, &n));
        if (type == PLATE && n != 4)
            return kedr_ini_fail(ini, sec, "points", "a plate needs 4 numbers: x0 y0 x1 y1");
        if (type == POLYGON && (n % 2 || n < 6))
            return kedr_ini_fail(ini, sec, "points",
                                 "a polygon needs at least 3 points (x y pairs), got %d numbers", n);
        if ((type == PLATE ? 1 : n / 2) > room)
            return kedr_ini_fail(ini, sec, "points", "more than %d segments in all bodies",
                                 KEDR_DSMC_MAX_SEGMENTS);
        for (int i = 0; i < n / 2; i++) {
            int j = (i + 1) % (n / 2);
            if (pts[2 * i] == pts[2 * j] && pts[2 * i + 1] == pts[2 * j + 1])
                return kedr_ini_fail(ini, sec, "points", "points %d and %d coincide", i, j);
        }
        if (type == PLATE) {
            b->type = KEDR_DSMC_BODY_PLATE;
            b->first = c->nsegments;
            b->count = 1;
            memcpy(c->segment[c->nsegments++], pts, 4 * sizeof(double));
        } else {
            b->type = KEDR_DSMC_BODY_POLYGON;
            add_polygon(c, b, pts, n / 2);
        }
        break;
    case CIRCLE:
        KEDR_TRY(kedr_ini_doubles(ini, sec, "center", REQ, -1e6, 1e6, b->center, 2, &n));
        if (n != 2)
            return kedr_ini_fail(ini, sec, "center", "expected 2 numbers: x y");
        KEDR_TRY(kedr_ini_double(ini, sec, "radius", REQ, -1e6, 1e6, &b->radius));
        if (!(b->radius > 0))
            return kedr_ini_fail(ini, sec, "radius", "%g: expected > 0", b->radius);
        b->type = KEDR_DSMC_BODY_CIRCLE;
        what = "center";
        break;
    case BOX: {
        double size[2];
        KEDR_TRY(kedr_ini_doubles(ini, sec, "center", REQ, -1e6, 1e6, v, 2, &n));
        if (n != 2)
            return kedr_ini_fail(ini, sec, "center", "expected 2 numbers: x y");
        KEDR_TRY(kedr_ini_doubles(ini, sec, "size", REQ, -1e6, 1e6, size, 2, &n));
        if (n != 2 || !(size[0] > 0) || !(size[1] > 0))
            return kedr_ini_fail(ini, sec, "size", "expected 2 numbers > 0: width height");
        if (room < 4)
            return kedr_ini_fail(ini, sec, "type", "more than %d segments in all bodies",
                                 KEDR_DSMC_MAX_SEGMENTS);
        double hx = 0.5 * size[0], hy = 0.5 * size[1];
        /* axisymmetric, centred on the axis: its upper half, whose revolution is the cylinder */
        double lo = c->axisymmetric && v[1] == 0 ? 0.0 : v[1] - hy;
        double box[8] = {v[0] - hx, lo, v[0] + hx, lo, v[0] + hx, v[1] + hy, v[0] - hx, v[1] + hy};
        b->type = KEDR_DSMC_BODY_BOX;
        add_polygon(c, b, box, 4);
        what = "center";
        break;
    }
    case WEDGE: {
        double half = 0, len = 0;
        KEDR_TRY(kedr_ini_doubles(ini, sec, "apex", REQ, -1e6, 1e6, v, 2, &n));
        if (n != 2)
            return kedr_ini_fail(ini, sec, "apex", "expected 2 numbers: x y");
        KEDR_TRY(kedr_ini_double(ini, sec, "half_angle", REQ | POS | KEDR_INI_HI_OPEN, 0, 90,
                                 &half));
        KEDR_TRY(kedr_ini_double(ini, sec, "length", REQ | POS, 0, 1e6, &len));
        if (room < 3)
            return kedr_ini_fail(ini, sec, "type", "more than %d segments in all bodies",
                                 KEDR_DSMC_MAX_SEGMENTS);
        /* Apex upstream, opening towards +x, closed by a base at x = apex + length;
         * axisymmetric with the apex on the axis: the upper half, whose revolution is the cone. */
        double h = len * tan(half * M_PI / 180.0);
        double low = c->axisymmetric && v[1] == 0 ? 0.0 : v[1] - h;
        double tri[6] = {v[0], v[1], v[0] + len, low, v[0] + len, v[1] + h};
        b->type = KEDR_DSMC_BODY_WEDGE;
        add_polygon(c, b, tri, 3);
        what = "apex";
        break;
    }
    }
    KEDR_TRY(kedr_ini_doubles(ini, sec, "velocity", 0, -1e6, 1e6, v, 2, &n));
    if (kedr_ini_line(ini, sec, "velocity")) {
        if (n != 2)
            return kedr_ini_fail(ini, sec, "velocity", "expected 2 numbers: ux uy (m/s)");
        b->velocity[0] = v[0];
        b->velocity[1] = v[1];
    }
    return add_body(ini, sec, what, c, made);
}

/* [body] and the numbered [body2] ... [body4] (see docs/dsmc.md). */
kedr_status dsmc_case_read_bodies(kedr_ini *ini, kedr_dsmc_case *c)
{
    c->nsegments = c->nbodies = 0;
    for (int i = 1; i <= KEDR_DSMC_MAX_BODIES; i++) {
        char sec[16];
        snprintf(sec, sizeof sec, i == 1 ? "body" : "body%d", i);
        int made = 0;
        if (i > 1 && !kedr_ini_has_section(ini, sec))
            continue;
        KEDR_TRY(read_body(ini, sec, c, &made));
    }
    return KEDR_OK;
}
