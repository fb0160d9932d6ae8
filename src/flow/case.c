/* Flow case files: every key of docs/flow.md, read with kedr/ini.h, so that every error names
 * the file, line, key and what was expected. */
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
    if (inflows && !outflows)
        return kedr_fail(KEDR_ERR_INVALID, "%s: an inflow without an outflow: the fluid is "
                         "incompressible, so what enters must leave (make a face outflow)", fn);
    return KEDR_OK;
}
