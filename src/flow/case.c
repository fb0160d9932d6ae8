/* Flow case files: every key of docs/flow.md, read with kedr/ini.h, so that every error names
 * the file, line, key and what was expected. */
#include "flow/ibm.h"
#include "kedr/flow.h"
#include "kedr/ini.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQ KEDR_INI_REQUIRED
#define POS KEDR_INI_LO_OPEN

static const char *const face_names[6] = {"x_min", "x_max", "y_min", "y_max", "z_min", "z_max"};
static const char *const bc_names[] = {"periodic", "wall", "slip", "inflow", "outflow", NULL};

static kedr_status case_name(const kedr_ini *ini, kedr_flow_case *c)
{
    const char *base = strrchr(kedr_ini_name(ini), '/');
    base = base ? base + 1 : kedr_ini_name(ini);
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    if (len >= sizeof c->name)
        return kedr_fail(KEDR_ERR_PARSE, "%s: the case name (the file name less its extension) "
                         "has %zu bytes; at most %zu: rename the file", kedr_ini_name(ini), len,
                         sizeof c->name - 1);
    memcpy(c->name, base, len);
    c->name[len] = 0;
    return KEDR_OK;
}

/* [domain] and [grid]. */
static kedr_status read_domain(kedr_ini *ini, kedr_flow_case *c)
{
    int64_t dims = 2;
    KEDR_TRY(kedr_ini_int(ini, "domain", "dimensions", 0, 2, 3, &dims));
    c->dims = (int)dims;
    int count = 0;
    KEDR_TRY(kedr_ini_doubles(ini, "domain", "length", REQ | POS, 0, 1e9, c->length, 3, &count));
    if (count != c->dims)
        return kedr_ini_fail(ini, "domain", "length", "%d numbers: expected %d (the box's sides "
                             "along x, y%s)", count, c->dims, c->dims == 3 ? ", z" : "");
    static const char *const nkeys[3] = {"nx", "ny", "nz"};
    for (int a = 0; a < 3; a++) {
        if (a == 2 && c->dims == 2) {
            if (kedr_ini_line(ini, "grid", "nz"))
                return kedr_ini_fail(ini, "grid", "nz", "only for 3D cases ([domain] "
                                     "dimensions = 3)");
            c->n[2] = 1;
            c->length[2] = 1;
            continue;
        }
        int64_t n = 0;
        KEDR_TRY(kedr_ini_int(ini, "grid", nkeys[a], REQ, 1, 1 << 20, &n));
        c->n[a] = (int)n;
    }
    for (int f = 0; f < 2 * c->dims; f++) {
        char key[32], vkey[32], pkey[32];
        snprintf(key, sizeof key, "boundary_%s", face_names[f]);
        snprintf(vkey, sizeof vkey, "%s_velocity", face_names[f]);
        snprintf(pkey, sizeof pkey, "%s_profile", face_names[f]);
        int kind = 0;
        KEDR_TRY(kedr_ini_choice(ini, "domain", key, REQ, bc_names, &kind));
        kedr_flow_bc *bc = &c->bc[f];
        bc->kind = (kedr_flow_bc_kind)kind;
        int nv = 0;
        if (kedr_ini_line(ini, "boundary", vkey)) {
            if (bc->kind != KEDR_FLOW_BC_WALL && bc->kind != KEDR_FLOW_BC_INFLOW)
                return kedr_ini_fail(ini, "boundary", vkey, "a velocity belongs to a wall (its "
                                     "motion) or an inflow; %s is %s", face_names[f],
                                     bc_names[kind]);
            KEDR_TRY(kedr_ini_doubles(ini, "boundary", vkey, 0, -1e9, 1e9, bc->velocity, 3, &nv));
            if (nv != c->dims)
                return kedr_ini_fail(ini, "boundary", vkey, "%d numbers: expected %d", nv,
                                     c->dims);
        } else if (bc->kind == KEDR_FLOW_BC_INFLOW) {
            return kedr_ini_fail(ini, "boundary", vkey, "missing: the inflow at %s needs its "
                                 "velocity (%s = U V%s)", face_names[f], vkey,
                                 c->dims == 3 ? " W" : "");
        }
        if (kedr_ini_line(ini, "boundary", pkey)) {
            static const char *const profiles[] = {"uniform", "parabolic", NULL};
            if (bc->kind != KEDR_FLOW_BC_INFLOW)
                return kedr_ini_fail(ini, "boundary", pkey, "a profile belongs to an inflow; %s "
                                     "is %s", face_names[f], bc_names[kind]);
            KEDR_TRY(kedr_ini_choice(ini, "boundary", pkey, 0, profiles, &bc->parabolic));
        }
    }
    for (int f = 2 * c->dims; f < 6; f++) {
        char key[32];
        snprintf(key, sizeof key, "boundary_%s", face_names[f]);
        if (kedr_ini_line(ini, "domain", key))
            return kedr_ini_fail(ini, "domain", key, "only for 3D cases ([domain] dimensions = 3)");
        c->bc[f].kind = KEDR_FLOW_BC_PERIODIC;
    }
    for (int a = 0; a < c->dims; a++) {
        int plo = c->bc[2 * a].kind == KEDR_FLOW_BC_PERIODIC;
        int phi = c->bc[2 * a + 1].kind == KEDR_FLOW_BC_PERIODIC;
        char key[32];
        snprintf(key, sizeof key, "boundary_%s", face_names[2 * a + (plo ? 1 : 0)]);
        if (plo != phi)
            return kedr_ini_fail(ini, "domain", key, "periodic on one end of the %c axis only: "
                                 "both ends must be periodic, or neither", "xyz"[a]);
    }
    for (int f = 0; f < 2 * c->dims; f++) {
        int a = f / 2;
        const kedr_flow_bc *bc = &c->bc[f];
        char vkey[32];
        snprintf(vkey, sizeof vkey, "%s_velocity", face_names[f]);
        if (bc->kind == KEDR_FLOW_BC_WALL && bc->velocity[a] != 0)
            return kedr_ini_fail(ini, "boundary", vkey, "a wall moves along itself only: its "
                                 "%c component must be 0", "xyz"[a]);
        double inward = f % 2 ? -bc->velocity[a] : bc->velocity[a];
        if (bc->kind == KEDR_FLOW_BC_INFLOW && !(inward > 0))
            return kedr_ini_fail(ini, "boundary", vkey, "the inflow at %s must point into the "
                                 "box (%c component %s 0)", face_names[f], "xyz"[a],
                                 f % 2 ? "<" : ">");
    }
    return KEDR_OK;
}

static kedr_status read_physics(kedr_ini *ini, kedr_flow_case *c)
{
    KEDR_TRY(kedr_ini_double(ini, "fluid", "nu", REQ | POS, 0, 1e9, &c->nu));
    c->rho = 1;
    KEDR_TRY(kedr_ini_double(ini, "fluid", "density", POS, 0, 1e9, &c->rho));
    static const char *const inits[] = {"rest", "uniform", "taylor_green", NULL};
    int init = 0;
    KEDR_TRY(kedr_ini_choice(ini, "initial", "state", 0, inits, &init));
    c->init = (kedr_flow_init)init;
    int nv = 0;
    if (c->init == KEDR_FLOW_INIT_UNIFORM) {
        KEDR_TRY(kedr_ini_doubles(ini, "initial", "velocity", REQ, -1e9, 1e9, c->init_velocity, 3,
                                  &nv));
        if (nv != c->dims)
            return kedr_ini_fail(ini, "initial", "velocity", "%d numbers: expected %d", nv,
                                 c->dims);
    } else if (kedr_ini_line(ini, "initial", "velocity")) {
        return kedr_ini_fail(ini, "initial", "velocity", "only with state = uniform");
    }
    c->tg_amplitude = 1;
    if (c->init == KEDR_FLOW_INIT_TAYLOR_GREEN) {
        KEDR_TRY(kedr_ini_double(ini, "initial", "amplitude", 0, -1e9, 1e9, &c->tg_amplitude));
        for (int a = 0; a < 2; a++)
            if (c->bc[2 * a].kind != KEDR_FLOW_BC_PERIODIC)
                return kedr_ini_fail(ini, "initial", "state", "the Taylor–Green vortex needs "
                                     "periodic x and y ends");
    } else if (kedr_ini_line(ini, "initial", "amplitude")) {
        return kedr_ini_fail(ini, "initial", "amplitude", "only with state = taylor_green");
    }
    return KEDR_OK;
}

static kedr_status read_time(kedr_ini *ini, kedr_flow_case *c)
{
    const char *dt = "auto";
    KEDR_TRY(kedr_ini_string(ini, "time", "dt", 0, &dt));
    if (strcmp(dt, "auto") == 0) {
        c->dt = 0;
    } else {
        char *end;
        c->dt = strtod(dt, &end);
        if (end == dt || *end || !(c->dt > 0) || !isfinite(c->dt))
            return kedr_ini_fail(ini, "time", "dt", "'%s': expected auto or a positive number of "
                                 "seconds", dt);
    }
    c->cfl = 0.5;
    KEDR_TRY(kedr_ini_double(ini, "time", "cfl", POS, 0, 1, &c->cfl));
    if (c->dt > 0 && kedr_ini_line(ini, "time", "cfl"))
        return kedr_ini_fail(ini, "time", "cfl", "with a fixed dt the step is not from cfl: "
                             "remove one of them");
    c->steps = 0;
    KEDR_TRY(kedr_ini_int(ini, "time", "steps", 0, 0, 4000000000LL, &c->steps));
    c->end_time = 0;
    KEDR_TRY(kedr_ini_double(ini, "time", "end_time", POS, 0, 1e30, &c->end_time));
    if (!c->steps && !(c->end_time > 0))
        return kedr_ini_fail(ini, "time", NULL, "give steps, end_time or both");
    if (!c->steps) /* end_time alone: a bound the run reaches first */
        c->steps = 4000000000LL;
    return KEDR_OK;
}

static kedr_status read_pressure(kedr_ini *ini, kedr_flow_case *c)
{
    kedr_flow_poisson_opts *o = &c->poisson;
    kedr_flow_poisson_defaults(o);
    o->max_iter = 500;
    static const char *const solvers[] = {"pcg", "mg", "fft", NULL};
    static const char *const pcs[] = {"none", "jacobi", "ssor", "ainv", "mg", NULL};
    int v = 0;
    KEDR_TRY(kedr_ini_choice(ini, "pressure", "solver", 0, solvers, &v));
    o->method = (kedr_flow_method)v;
    v = o->precond;
    KEDR_TRY(kedr_ini_choice(ini, "pressure", "preconditioner", 0, pcs, &v));
    o->precond = (kedr_flow_precond)v;
    if (o->method != KEDR_FLOW_METHOD_PCG && kedr_ini_line(ini, "pressure", "preconditioner"))
        return kedr_ini_fail(ini, "pressure", "preconditioner", "only solver = pcg takes a "
                             "preconditioner");
    int64_t steps = o->precond == KEDR_FLOW_PC_MG || o->method == KEDR_FLOW_METHOD_MG ? 2 : 1;
    KEDR_TRY(kedr_ini_int(ini, "pressure", "steps", 0, 1,
                          o->precond == KEDR_FLOW_PC_JACOBI && o->method == KEDR_FLOW_METHOD_PCG
                              ? 4 : 8, &steps));
    o->steps = (int)steps;
    KEDR_TRY(kedr_ini_double(ini, "pressure", "tol", POS, 0, 0.1, &o->tol));
    KEDR_TRY(kedr_ini_double(ini, "pressure", "atol", 0, 0, 1e30, &o->atol));
    int64_t it = o->max_iter;
    KEDR_TRY(kedr_ini_int(ini, "pressure", "max_iter", 0, 1, 1000000, &it));
    o->max_iter = (int)it;
    KEDR_TRY(kedr_ini_bool(ini, "pressure", "cheap_check", 0, &o->cheap_check));
    for (int a = 0; a < c->dims; a++) {
        int odd = c->bc[2 * a].kind == KEDR_FLOW_BC_PERIODIC && c->n[a] > 1 && c->n[a] % 2;
        int rb = o->method == KEDR_FLOW_METHOD_MG ||
                 (o->method == KEDR_FLOW_METHOD_PCG &&
                  (o->precond == KEDR_FLOW_PC_SSOR || o->precond == KEDR_FLOW_PC_MG));
        if (odd && rb)
            return kedr_ini_fail(ini, "pressure", o->method == KEDR_FLOW_METHOD_MG ? "solver"
                                 : "preconditioner", "red-black smoothing needs an even number "
                                 "of cells along the periodic %c axis (n%c = %d): change the grid "
                                 "or use jacobi or ainv", "xyz"[a], "xyz"[a], c->n[a]);
    }
    return KEDR_OK;
}

/* ---- immersed bodies: [ibm] and [body] / [body.NAME] ---------------------------------------- */

static const char *const shape_names[] = {"circle", "rectangle", "sphere", "box", "cylinder",
                                          "points", NULL};

/* Reads a vector of exactly dims numbers (absent: left as it was). */
static kedr_status read_vec(kedr_ini *ini, const char *sec, const char *key, unsigned flags,
                            double lo, double hi, int dims, double *v)
{
    int n = 0;
    if (!(flags & REQ) && !kedr_ini_line(ini, sec, key))
        return KEDR_OK;
    KEDR_TRY(kedr_ini_doubles(ini, sec, key, flags, lo, hi, v, 3, &n));
    if (n != dims)
        return kedr_ini_fail(ini, sec, key, "%d numbers: expected %d (x y%s)", n, dims,
                             dims == 3 ? " z" : "");
    return KEDR_OK;
}

/* A key that the body's shape does not take. */
static kedr_status not_for(kedr_ini *ini, const char *sec, const char *key, int ok,
                           const char *who)
{
    if (!ok && kedr_ini_line(ini, sec, key))
        return kedr_ini_fail(ini, sec, key, "only for %s", who);
    return KEDR_OK;
}

/* The points' extent, checked against the box less the delta's margin on non-periodic axes. */
static kedr_status check_inside(kedr_ini *ini, const char *sec, const kedr_flow_case *c,
                                const kedr_flow_body *b, const double *xyz, size_t n)
{
    static const char *const faces[6] = {"x_min", "x_max", "y_min", "y_max", "z_min", "z_max"};
    double margin = flow_ibm_margin(c->delta);
    for (int a = 0; a < c->dims; a++) {
        if (c->bc[2 * a].kind == KEDR_FLOW_BC_PERIODIC)
            continue;
        double lo = HUGE_VAL, hi = -HUGE_VAL, h = c->length[a] / c->n[a];
        for (size_t l = 0; l < n; l++) {
            lo = fmin(lo, xyz[3 * l + a]);
            hi = fmax(hi, xyz[3 * l + a]);
        }
        double amp = fabs(b->amplitude[a]), travel = 0;
        if (b->velocity[a] != 0 && c->end_time > 0)
            travel = b->velocity[a] * c->end_time;
        const char *key = b->shape == KEDR_FLOW_BODY_POINTS ? "file" : "center";
        double mlo = margin * h, mhi = c->length[a] - margin * h;
        for (int pass = 0; pass < 2; pass++) {
            double l0 = lo - (pass ? amp - fmin(travel, 0) : 0);
            double h0 = hi + (pass ? amp + fmax(travel, 0) : 0);
            if (l0 >= mlo * (1 - 1e-12) && h0 <= mhi + 1e-12 * c->length[a])
                continue;
            int side = h0 > mhi + 1e-12 * c->length[a];
            double x = side ? h0 : l0;
            const char *why = x < 0 || x > c->length[a] ? "outside the domain"
                              : "too close to the boundary";
            return kedr_ini_fail(ini, sec, pass ? (amp > 0 ? "amplitude" : "velocity") : key,
                                 "the body %s reaches %c = %.6g%s, %s: its surface must stay "
                                 "%g cells (%.4g) inside the %s face (%c in [%.6g, %.6g]), "
                                 "the delta's half-support", b->name, "xyz"[a], x,
                                 pass ? " in its motion" : "", why, margin, margin * h,
                                 faces[2 * a + side], "xyz"[a], mlo, mhi);
        }
    }
    return KEDR_OK;
}

static kedr_status read_body(kedr_ini *ini, const char *sec, kedr_flow_case *c)
{
    if (c->nbodies == KEDR_FLOW_MAX_BODIES)
        return kedr_ini_fail(ini, sec, NULL, "more than %d bodies", KEDR_FLOW_MAX_BODIES);
    kedr_flow_body *b = &c->body[c->nbodies];
    memset(b, 0, sizeof *b);
    const char *name = strcmp(sec, "body") == 0 ? "body" : sec + 5;
    if (!*name || strlen(name) >= sizeof b->name)
        return kedr_ini_fail(ini, sec, NULL, "a body's name (after 'body.') of 1 to %zu bytes",
                             sizeof b->name - 1);
    for (int i = 0; i < c->nbodies; i++)
        if (strcmp(c->body[i].name, name) == 0)
            return kedr_ini_fail(ini, sec, NULL, "a second body named %s", name);
    strcpy(b->name, name);
    int shape = 0, d = c->dims;
    KEDR_TRY(kedr_ini_choice(ini, sec, "shape", REQ, shape_names, &shape));
    b->shape = (kedr_flow_body_shape)shape;
    int two = shape == KEDR_FLOW_BODY_CIRCLE || shape == KEDR_FLOW_BODY_RECTANGLE;
    int three = shape == KEDR_FLOW_BODY_SPHERE || shape == KEDR_FLOW_BODY_BOX ||
                shape == KEDR_FLOW_BODY_CYLINDER;
    if ((two && d == 3) || (three && d == 2))
        return kedr_ini_fail(ini, sec, "shape", "%s is a %dD shape and the case is %dD (2D: "
                             "circle, rectangle, points; 3D: sphere, box, cylinder, points)",
                             shape_names[shape], two ? 2 : 3, d);
    int round = shape == KEDR_FLOW_BODY_CIRCLE || shape == KEDR_FLOW_BODY_SPHERE ||
                shape == KEDR_FLOW_BODY_CYLINDER;
    int boxy = shape == KEDR_FLOW_BODY_RECTANGLE || shape == KEDR_FLOW_BODY_BOX;
    int cyl = shape == KEDR_FLOW_BODY_CYLINDER, points = shape == KEDR_FLOW_BODY_POINTS;
    KEDR_TRY(not_for(ini, sec, "diameter", round, "circle, sphere and cylinder"));
    KEDR_TRY(not_for(ini, sec, "size", boxy, "rectangle and box"));
    KEDR_TRY(not_for(ini, sec, "axis", cyl, "cylinder"));
    KEDR_TRY(not_for(ini, sec, "length", cyl, "cylinder"));
    KEDR_TRY(not_for(ini, sec, "file", points, "points"));
    KEDR_TRY(not_for(ini, sec, "volume", points, "points (the other shapes know theirs)"));
    KEDR_TRY(not_for(ini, sec, "reference_area", d == 3, "3D cases (2D: reference_length)"));
    KEDR_TRY(read_vec(ini, sec, "center", points ? 0 : REQ, -1e9, 1e9, d, b->center));
    if (round)
        KEDR_TRY(kedr_ini_double(ini, sec, "diameter", REQ | POS, 0, 1e9, &b->diameter));
    if (boxy) {
        KEDR_TRY(read_vec(ini, sec, "size", REQ | POS, 0, 1e9, d, b->size));
    }
    double R = 0.5 * b->diameter;
    if (cyl) {
        static const char *const axes[] = {"x", "y", "z", NULL};
        b->axis = 2;
        KEDR_TRY(kedr_ini_choice(ini, sec, "axis", 0, axes, &b->axis));
        KEDR_TRY(kedr_ini_double(ini, sec, "length", POS, 0, 1e9, &b->length));
        if (!(b->length > 0) && c->bc[2 * b->axis].kind != KEDR_FLOW_BC_PERIODIC)
            return kedr_ini_fail(ini, sec, "length", "missing: a cylinder along the "
                                 "non-periodic %c axis needs its length (without one it spans a "
                                 "periodic axis)", "xyz"[b->axis]);
    }
    if (points) {
        const char *file = NULL;
        KEDR_TRY(kedr_ini_string(ini, sec, "file", REQ, &file));
        char dir[KEDR_FLOW_PATH_MAX];
        kedr_ini_dir(ini, dir, sizeof dir);
        int n = file[0] == '/' ? snprintf(b->file, sizeof b->file, "%s", file)
                               : snprintf(b->file, sizeof b->file, "%s/%s", dir, file);
        if (n < 0 || (size_t)n >= sizeof b->file)
            return kedr_ini_fail(ini, sec, "file", "a path of more than %zu bytes",
                                 sizeof b->file - 1);
    }
    b->spacing = d == 3 ? 1.5 : 1; /* 3D: L L* is ill-conditioned at 1 (docs/flow.md) */
    KEDR_TRY(kedr_ini_double(ini, sec, "spacing", 0, 0.25, 4, &b->spacing));
    KEDR_TRY(read_vec(ini, sec, "amplitude", 0, -1e9, 1e9, d, b->amplitude));
    KEDR_TRY(kedr_ini_double(ini, sec, "frequency", POS, 0, 1e9, &b->frequency));
    int amp = 0;
    for (int a = 0; a < 3; a++)
        amp |= b->amplitude[a] != 0;
    if (amp != (b->frequency > 0))
        return kedr_ini_fail(ini, sec, amp ? "frequency" : "amplitude", "an oscillation needs "
                             "both amplitude (not all 0) and frequency");
    double phase = 0;
    KEDR_TRY(kedr_ini_double(ini, sec, "phase", 0, -360, 360, &phase));
    if (!amp && kedr_ini_line(ini, sec, "phase"))
        return kedr_ini_fail(ini, sec, "phase", "only with amplitude and frequency");
    b->phase = phase * M_PI / 180;
    KEDR_TRY(read_vec(ini, sec, "velocity", 0, -1e9, 1e9, d, b->velocity));

    /* no side longer than the box's longest (before building points over it) */
    double lmax = 0;
    for (int a = 0; a < d; a++)
        lmax = fmax(lmax, c->length[a]);
    const char *big = round && b->diameter > lmax ? "diameter" : cyl && b->length > lmax ? "length"
                                                                                        : NULL;
    for (int a = 0; boxy && a < d; a++)
        big = b->size[a] > lmax ? "size" : big;
    if (big)
        return kedr_ini_fail(ini, sec, big, "the body is larger than the domain (whose longest "
                             "side is %g)", lmax);
    /* the points: read (a file) or built, to check them and for the defaults below */
    double h = HUGE_VAL;
    for (int a = 0; a < d; a++)
        h = fmin(h, c->length[a] / c->n[a]);
    double *xyz = NULL;
    size_t n = 0;
    kedr_status s = flow_ibm_body_points(b, d, c->length, b->spacing * h, &xyz, &n);
    if (s != KEDR_OK) {
        char why[700];
        snprintf(why, sizeof why, "%s", kedr_last_error());
        return kedr_ini_fail(ini, sec, points ? "file" : "shape", "%s", why);
    }
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    double cen[3] = {0, 0, 0};
    for (size_t l = 0; l < n; l++)
        for (int a = 0; a < d; a++) {
            lo[a] = fmin(lo[a], xyz[3 * l + a]);
            hi[a] = fmax(hi[a], xyz[3 * l + a]);
            cen[a] += xyz[3 * l + a] / (double)n;
        }
    if (points && !kedr_ini_line(ini, sec, "center"))
        memcpy(b->center, cen, sizeof cen);
    /* the volume (area in 2D) */
    double cl = cyl ? (b->length > 0 ? b->length : c->length[b->axis]) : 0;
    switch (b->shape) {
    case KEDR_FLOW_BODY_CIRCLE: b->volume = M_PI * R * R; break;
    case KEDR_FLOW_BODY_RECTANGLE: b->volume = b->size[0] * b->size[1]; break;
    case KEDR_FLOW_BODY_SPHERE: b->volume = 4.0 / 3 * M_PI * R * R * R; break;
    case KEDR_FLOW_BODY_BOX: b->volume = b->size[0] * b->size[1] * b->size[2]; break;
    case KEDR_FLOW_BODY_CYLINDER: b->volume = M_PI * R * R * cl; break;
    default:
        if (d == 2) { /* the polygon through the points in their order */
            double area = 0;
            for (size_t l = 0; l < n; l++) {
                size_t m = (l + 1) % n;
                area += xyz[3 * l] * xyz[3 * m + 1] - xyz[3 * m] * xyz[3 * l + 1];
            }
            b->volume = 0.5 * fabs(area);
        }
        KEDR_TRY(kedr_ini_double(ini, sec, "volume", 0, 0, 1e30, &b->volume));
        if (d == 3 && amp && !kedr_ini_line(ini, sec, "volume")) {
            free(xyz);
            return kedr_ini_fail(ini, sec, "volume", "missing: an oscillating 3D body of "
                                 "points needs the volume it encloses (for the inertia of the "
                                 "fluid inside)");
        }
    }
    s = check_inside(ini, sec, c, b, xyz, n);
    free(xyz);
    KEDR_TRY(s);
    /* the force coefficients' references */
    b->ref_velocity = 1;
    for (int f = 0; f < 2 * d; f++)
        if (c->bc[f].kind == KEDR_FLOW_BC_INFLOW) {
            b->ref_velocity = fabs(c->bc[f].velocity[f / 2]);
            break;
        }
    if (b->ref_velocity == 1 && amp) {
        double A = 0;
        for (int a = 0; a < d; a++)
            A += b->amplitude[a] * b->amplitude[a];
        b->ref_velocity = 2 * M_PI * b->frequency * sqrt(A);
    }
    KEDR_TRY(kedr_ini_double(ini, sec, "reference_velocity", POS, 0, 1e9, &b->ref_velocity));
    b->ref_length = round ? b->diameter : boxy ? b->size[1] : hi[1] - lo[1];
    KEDR_TRY(kedr_ini_double(ini, sec, "reference_length", POS, 0, 1e9, &b->ref_length));
    if (d == 3) {
        double D = b->diameter;
        b->ref_area = shape == KEDR_FLOW_BODY_SPHERE ? 0.25 * M_PI * D * D
                      : cyl ? (b->axis == 0 ? 0.25 * M_PI * D * D : D * cl)
                      : boxy ? b->size[1] * b->size[2] : (hi[1] - lo[1]) * (hi[2] - lo[2]);
        KEDR_TRY(kedr_ini_double(ini, sec, "reference_area", POS, 0, 1e30, &b->ref_area));
        if (!(b->ref_area > 0))
            return kedr_ini_fail(ini, sec, "reference_area", "missing: the body is flat; give "
                                 "the area the force coefficients divide by");
    }
    if (!(b->ref_length > 0))
        return kedr_ini_fail(ini, sec, "reference_length", "missing: the body has no extent "
                             "along y; give the length the force coefficients divide by");
    c->nbodies++;
    return KEDR_OK;
}

static kedr_status read_bodies(kedr_ini *ini, kedr_flow_case *c)
{
    static const char *const deltas[] = {"peskin4", "roma3", NULL};
    int delta = KEDR_FLOW_DELTA_PESKIN4;
    KEDR_TRY(kedr_ini_choice(ini, "ibm", "delta", 0, deltas, &delta));
    c->delta = (kedr_flow_delta)delta;
    c->ibm_tol = 1e-8;
    KEDR_TRY(kedr_ini_double(ini, "ibm", "tol", POS, 0, 0.1, &c->ibm_tol));
    int64_t it = 500;
    KEDR_TRY(kedr_ini_int(ini, "ibm", "max_iter", 0, 1, 1000000, &it));
    c->ibm_max_iter = (int)it;
    c->nbodies = 0;
    for (int i = 0; i < kedr_ini_sections(ini); i++) {
        const char *sec = kedr_ini_section(ini, i);
        if (strcmp(sec, "body") == 0 || strncmp(sec, "body.", 5) == 0)
            KEDR_TRY(read_body(ini, sec, c));
    }
    if (!c->nbodies && kedr_ini_has_section(ini, "ibm"))
        return kedr_ini_fail(ini, "ibm", NULL, "immersed-boundary settings without a body "
                             "([body.NAME] sections)");
    return KEDR_OK;
}

static kedr_status read_output(kedr_ini *ini, kedr_flow_case *c)
{
    const char *dir = NULL;
    snprintf(c->out_dir, sizeof c->out_dir, "out/%s", c->name);
    KEDR_TRY(kedr_ini_string(ini, "output", "dir", 0, &dir));
    if (dir) {
        if (!*dir || strlen(dir) >= sizeof c->out_dir)
            return kedr_ini_fail(ini, "output", "dir", "a path of %zu bytes: expected 1 to %zu",
                                 strlen(dir), sizeof c->out_dir - 1);
        strcpy(c->out_dir, dir);
    }
    c->stats_every = 100;
    c->checkpoint_every = 0;
    KEDR_TRY(kedr_ini_int(ini, "output", "stats_every", 0, 0, 4000000000LL, &c->stats_every));
    KEDR_TRY(kedr_ini_int(ini, "output", "checkpoint_every", 0, 0, 4000000000LL,
                          &c->checkpoint_every));
    c->forces_every = 1;
    KEDR_TRY(kedr_ini_int(ini, "output", "forces_every", 0, 0, 4000000000LL, &c->forces_every));
    if (!c->nbodies && kedr_ini_line(ini, "output", "forces_every"))
        return kedr_ini_fail(ini, "output", "forces_every", "only for cases with bodies "
                             "([body.NAME] sections)");
    c->write_csv = c->write_vti = c->write_png = c->checkpoint = 1;
    KEDR_TRY(kedr_ini_bool(ini, "output", "csv", 0, &c->write_csv));
    KEDR_TRY(kedr_ini_bool(ini, "output", "vti", 0, &c->write_vti));
    KEDR_TRY(kedr_ini_bool(ini, "output", "png", 0, &c->write_png));
    KEDR_TRY(kedr_ini_bool(ini, "output", "checkpoint", 0, &c->checkpoint));
    return KEDR_OK;
}

static kedr_status read_case(kedr_ini *ini, kedr_flow_case *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", kedr_ini_name(ini));
    KEDR_TRY(case_name(ini, c));
    KEDR_TRY(read_domain(ini, c));
    KEDR_TRY(read_physics(ini, c));
    KEDR_TRY(read_time(ini, c));
    KEDR_TRY(read_pressure(ini, c));
    KEDR_TRY(read_bodies(ini, c));
    KEDR_TRY(read_output(ini, c));
    KEDR_TRY(kedr_ini_finish(ini));
    return kedr_flow_case_check(c);
}

kedr_status kedr_flow_case_parse(const char *text, const char *name, kedr_flow_case *c)
{
    kedr_ini *ini = NULL;
    KEDR_TRY(kedr_ini_parse(text, name, &ini));
    kedr_status s = read_case(ini, c);
    kedr_ini_free(ini);
    return s;
}

kedr_status kedr_flow_case_load(const char *path, kedr_flow_case *c)
{
    kedr_ini *ini = NULL;
    KEDR_TRY(kedr_ini_load(path, &ini));
    kedr_status s = read_case(ini, c);
    kedr_ini_free(ini);
    return s;
}

kedr_status kedr_flow_case_check(const kedr_flow_case *c)
{
    const char *fn = c->path[0] ? c->path : "flow case";
    if (c->dims != 2 && c->dims != 3)
        return kedr_fail(KEDR_ERR_INVALID, "%s: dimensions %d: expected 2 or 3", fn, c->dims);
    double cells = 1;
    for (int a = 0; a < c->dims; a++) {
        if (c->n[a] < 1 || !(c->length[a] > 0))
            return kedr_fail(KEDR_ERR_INVALID, "%s: axis %c: %d cells over %g: expected at least "
                             "one cell and a positive length", fn, "xyz"[a], c->n[a],
                             c->length[a]);
        if (c->bc[2 * a].kind != KEDR_FLOW_BC_PERIODIC && c->n[a] < 2)
            return kedr_fail(KEDR_ERR_INVALID, "%s: axis %c: one cell between two boundaries: "
                             "expected at least 2", fn, "xyz"[a]);
        if ((c->bc[2 * a].kind == KEDR_FLOW_BC_PERIODIC) !=
            (c->bc[2 * a + 1].kind == KEDR_FLOW_BC_PERIODIC))
            return kedr_fail(KEDR_ERR_INVALID, "%s: axis %c periodic at one end only", fn,
                             "xyz"[a]);
        cells *= c->n[a];
    }
    if (cells > 4e9)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %.3g cells: at most 4e9", fn, cells);
    if (!(c->nu > 0) || !(c->rho > 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: nu = %g, density = %g: expected positive values",
                         fn, c->nu, c->rho);
    if (!(c->dt >= 0) || !(c->cfl > 0 && c->cfl <= 1))
        return kedr_fail(KEDR_ERR_INVALID, "%s: dt = %g, cfl = %g: expected dt >= 0 and cfl in "
                         "(0, 1]", fn, c->dt, c->cfl);
    int outflows = 0, inflows = 0;
    for (int f = 0; f < 2 * c->dims; f++) {
        outflows += c->bc[f].kind == KEDR_FLOW_BC_OUTFLOW;
        inflows += c->bc[f].kind == KEDR_FLOW_BC_INFLOW;
    }
    if (c->nbodies < 0 || c->nbodies > KEDR_FLOW_MAX_BODIES)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %d bodies: at most %d", fn, c->nbodies,
                         KEDR_FLOW_MAX_BODIES);
    for (int i = 0; i < c->nbodies; i++) {
        const kedr_flow_body *b = &c->body[i];
        int sh = b->shape, three = sh == KEDR_FLOW_BODY_SPHERE || sh == KEDR_FLOW_BODY_BOX ||
                                   sh == KEDR_FLOW_BODY_CYLINDER;
        int two = sh == KEDR_FLOW_BODY_CIRCLE || sh == KEDR_FLOW_BODY_RECTANGLE;
        if (sh < 0 || sh > KEDR_FLOW_BODY_POINTS || (three && c->dims == 2) ||
            (two && c->dims == 3))
            return kedr_fail(KEDR_ERR_INVALID, "%s: body %s: shape %d does not fit a %dD case",
                             fn, b->name, sh, c->dims);
        if (!(b->spacing > 0) || !(b->ref_velocity > 0) ||
            !((c->dims == 3 ? b->ref_area : b->ref_length) > 0) || !(b->volume >= 0))
            return kedr_fail(KEDR_ERR_INVALID, "%s: body %s: spacing %g, reference velocity %g, "
                             "length %g, area %g, volume %g: expected positive values", fn,
                             b->name, b->spacing, b->ref_velocity, b->ref_length, b->ref_area,
                             b->volume);
        if ((sh != KEDR_FLOW_BODY_POINTS && sh != KEDR_FLOW_BODY_RECTANGLE &&
             sh != KEDR_FLOW_BODY_BOX && !(b->diameter > 0)) ||
            (sh == KEDR_FLOW_BODY_CYLINDER && !(b->length > 0) &&
             c->bc[2 * b->axis].kind != KEDR_FLOW_BC_PERIODIC))
            return kedr_fail(KEDR_ERR_INVALID, "%s: body %s: diameter %g, length %g", fn,
                             b->name, b->diameter, b->length);
    }
    if (inflows && !outflows)
        return kedr_fail(KEDR_ERR_INVALID, "%s: an inflow without an outflow: the fluid is "
                         "incompressible, so what enters must leave (make a face outflow)", fn);
    return KEDR_OK;
}
