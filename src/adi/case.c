/* ADI case files (keys: docs/adi.md), read with kedr/ini.h so that every error names the file,
 * line and key; the depth-map mask files; the checks of a case (ranges, the mask's segments). */
#include "adi/adi_internal.h"
#include "kedr/ini.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQ KEDR_INI_REQUIRED
#define POS KEDR_INI_LO_OPEN
#define INF HUGE_VAL
/* A side of the grid: at least 3 nodes (an unknown between two faces), at most 2^16. */
#define ADI_MAX_SIDE 65536
/* A mask file: at most this many bytes (a 4096 x 4096 depth map of 4-digit numbers). */
#define ADI_MAX_MASK_BYTES ((size_t)100000000)

static const char *const face_names[6] = {"x_lo", "x_hi", "y_lo", "y_hi", "z_lo", "z_hi"};

void kedr_adi_case_default(kedr_adi_case *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->name, "adi");
    strcpy(c->out_dir, ".");
    c->nx = c->ny = c->nz = 3;
    c->h = 0.02;
    c->re = 200;
    c->pr = 0.72;
    c->gamma = 1.4;
    c->init_temperature = 1;
    for (int f = 0; f < 6; f++) {
        c->face[f].kind = KEDR_ADI_WALL;
        c->face[f].adiabatic = 1;
        c->face[f].temperature = 1;
    }
    c->wall_adiabatic = 1;
    c->wall_temperature = 1;
    c->dt = 0.01;
    c->steps = 10;
    c->global_iterations = 4;
    c->local_iterations = 2;
    c->continuity_tolerance = 0;
    c->change_tolerance = 0;
    c->z_transpose = -1;
    c->velocity_limit = 1e3;
    c->stats_every = 10;
    c->checkpoint = 1;
    c->write_vti = c->write_csv = c->write_png = 1;
    c->slice = -1;
}

void kedr_adi_case_free(kedr_adi_case *c)
{
    free(c->solid);
    c->solid = NULL;
}

/* The mask codes, x fastest: solid; a fluid node on the box's outer layer is a boundary node of
 * the first of its faces in the order wall, inflow, free; the other fluid nodes are unknowns. */
kedr_status adi_classify(const kedr_adi_case *c, unsigned char *codes, int64_t *unknowns)
{
    int64_t count = 0;
    for (int k = 0; k < c->nz; k++)
        for (int j = 0; j < c->ny; j++)
            for (int i = 0; i < c->nx; i++) {
                size_t n = (size_t)i + (size_t)c->nx * ((size_t)j + (size_t)c->ny * k);
                if (c->solid && c->solid[n]) {
                    codes[n] = ADI_SOLID;
                    continue;
                }
                int on[6] = {i == 0, i == c->nx - 1, j == 0, j == c->ny - 1, k == 0,
                             k == c->nz - 1};
                int best = -1;
                for (int f = 0; f < 6; f++)
                    if (on[f] && (best < 0 || c->face[f].kind < c->face[best].kind))
                        best = f;
                codes[n] = best < 0 ? ADI_FLUID : (unsigned char)(ADI_FACE + best);
                count += best < 0;
            }
    *unknowns = count;
    return KEDR_OK;
}

/* The first segment of one fluid node, along any axis: 1 and where, or 0. */
static int one_node_segment(const kedr_adi_case *c, int *where, int *axis)
{
    int n[3] = {c->nx, c->ny, c->nz};
    size_t s[3] = {1, (size_t)c->nx, (size_t)c->nx * c->ny};
    for (int k = 0; k < c->nz; k++)
        for (int j = 0; j < c->ny; j++)
            for (int i = 0; i < c->nx; i++) {
                int x[3] = {i, j, k};
                size_t id = i + s[1] * j + s[2] * k;
                if (c->solid[id])
                    continue;
                for (int a = 0; a < 3; a++) {
                    int lo_solid = x[a] == 0 || c->solid[id - s[a]];
                    int hi_solid = x[a] == n[a] - 1 || c->solid[id + s[a]];
                    if (lo_solid && hi_solid) {
                        memcpy(where, x, sizeof x);
                        *axis = a;
                        return 1;
                    }
                }
            }
    return 0;
}

static int grid_ok(const kedr_adi_case *c)
{
    return c->nx >= 3 && c->ny >= 3 && c->nz >= 3 && c->nx <= ADI_MAX_SIDE &&
           c->ny <= ADI_MAX_SIDE && c->nz <= ADI_MAX_SIDE;
}

/* Ranges of the numbers, then the mask; `where` prefixes each message (the file, or ""). */
static kedr_status check(const kedr_adi_case *c, const char *where)
{
    const char *fn = "kedr_adi_case_check";
    if (!grid_ok(c))
        return kedr_fail(KEDR_ERR_INVALID, "%s: grid %d x %d x %d: each side 3 to %d nodes", fn,
                         c->nx, c->ny, c->nz, ADI_MAX_SIDE);
    if (!(c->h > 0) || !isfinite(c->h))
        return kedr_fail(KEDR_ERR_INVALID, "%s: h = %g: expected > 0", fn, c->h);
    if (!(c->re > 0) || !isfinite(c->re))
        return kedr_fail(KEDR_ERR_INVALID, "%s: Re = %g: expected > 0", fn, c->re);
    if (!(c->pr > 0) || !isfinite(c->pr))
        return kedr_fail(KEDR_ERR_INVALID, "%s: Pr = %g: expected > 0", fn, c->pr);
    if (!(c->gamma >= 1) || !isfinite(c->gamma))
        return kedr_fail(KEDR_ERR_INVALID, "%s: gamma = %g: expected >= 1", fn, c->gamma);
    if (!(c->dt > 0) || !isfinite(c->dt))
        return kedr_fail(KEDR_ERR_INVALID, "%s: dt = %g: expected > 0", fn, c->dt);
    if (c->steps < 0 || c->global_iterations < 1 || c->local_iterations < 1)
        return kedr_fail(KEDR_ERR_INVALID, "%s: steps %lld, global %d and local %d iterations: "
                         "expected steps >= 0 and at least one iteration of each", fn,
                         (long long)c->steps, c->global_iterations, c->local_iterations);
    if (!(c->velocity_limit > 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: velocity_limit = %g: expected > 0", fn,
                         c->velocity_limit);
    if (!c->solid)
        return KEDR_OK;
    size_t nodes = (size_t)c->nx * c->ny * c->nz;
    unsigned char *codes = malloc(nodes);
    if (!codes)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu bytes)", fn, nodes);
    int64_t unknowns = 0;
    adi_classify(c, codes, &unknowns);
    free(codes);
    if (unknowns == 0)
        return kedr_fail(KEDR_ERR_INVALID, "%smask: no fluid node inside the box (every node "
                         "off its faces is solid): nothing to solve", where);
    int at[3], axis;
    if (one_node_segment(c, at, &axis))
        return kedr_fail(KEDR_ERR_INVALID, "%smask: a segment of one fluid node at node (%d, %d, "
                         "%d) along %c: walls (or the box's edge) on both sides leave the flow "
                         "there unresolved; fill it or widen it to 2 nodes or more", where,
                         at[0], at[1], at[2], "xyz"[axis]);
    return KEDR_OK;
}

kedr_status kedr_adi_case_check(const kedr_adi_case *c)
{
    if (!c)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_adi_case_check: c is NULL");
    return check(c, "");
}

/* ---- depth maps ------------------------------------------------------------------------- */

/* Skips blanks and comments ('#' to the end of the line), counting lines. */
static const char *skip(const char *p, int *line)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            *line += *p++ == '\n';
        if (*p != '#')
            return p;
        while (*p && *p != '\n')
            p++;
    }
}

kedr_status kedr_adi_read_depth(kedr_adi_case *c, const char *path)
{
    if (!grid_ok(c))
        return kedr_fail(KEDR_ERR_INVALID, "%s: the grid must be set before its mask", path);
    char *text = NULL;
    size_t len = 0;
    KEDR_TRY(kedr_file_read(path, ADI_MAX_MASK_BYTES, &text, &len));
    int line = 1, nx = 0, ny = 0, used = 0;
    const char *p = skip(text, &line);
    kedr_status s = KEDR_OK;
    if (sscanf(p, "kedr-adi-depth %d %d%n", &nx, &ny, &used) != 2)
        s = kedr_fail(KEDR_ERR_PARSE, "%s:%d: expected the header 'kedr-adi-depth NX NY'", path,
                      line);
    else if (nx != c->nx || ny != c->ny)
        s = kedr_fail(KEDR_ERR_PARSE, "%s:%d: a depth map of %d x %d nodes for a grid of %d x %d "
                      "(x y)", path, line, nx, ny, c->nx, c->ny);
    size_t nodes = (size_t)c->nx * c->ny * c->nz;
    unsigned char *solid = s == KEDR_OK ? malloc(nodes) : NULL;
    if (s == KEDR_OK && !solid)
        s = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu bytes)", path, nodes);
    p += used;
    /* Row j = ny - 1 first (north up, as the map is printed); depth in nodes, 0 = land. */
    for (int r = 0; r < c->ny && s == KEDR_OK; r++)
        for (int i = 0; i < c->nx && s == KEDR_OK; i++) {
            p = skip(p, &line);
            char *end;
            long d = strtol(p, &end, 10);
            if (end == p || d < 0 || d > c->nz || (*end && !isspace((unsigned char)*end))) {
                s = kedr_fail(KEDR_ERR_PARSE, "%s:%d: depth %d of row %d: expected an integer "
                              "from 0 (land) to nz = %d nodes", path, line, i + 1, r + 1, c->nz);
                break;
            }
            p = end;
            int j = c->ny - 1 - r;
            for (int k = 0; k < c->nz; k++)
                solid[i + (size_t)c->nx * (j + (size_t)c->ny * k)] = k < c->nz - d;
        }
    if (s == KEDR_OK && *skip(p, &line))
        s = kedr_fail(KEDR_ERR_PARSE, "%s:%d: more than %d x %d depths", path, line, c->nx,
                      c->ny);
    free(text);
    if (s != KEDR_OK) {
        free(solid);
        return s;
    }
    free(c->solid);
    c->solid = solid;
    snprintf(c->mask_path, sizeof c->mask_path, "%s", path);
    return KEDR_OK;
}

/* ---- case files ------------------------------------------------------------------------- */

static kedr_status read_vector(kedr_ini *ini, const char *sec, const char *key, double v[3])
{
    int n = 0;
    double t[3];
    if (!kedr_ini_has(ini, sec, key))
        return KEDR_OK;
    KEDR_TRY(kedr_ini_doubles(ini, sec, key, 0, -1e6, 1e6, t, 3, &n));
    if (n != 3)
        return kedr_ini_fail(ini, sec, key, "%d numbers: expected 3 (x y z)", n);
    memcpy(v, t, sizeof t);
    return KEDR_OK;
}

/* A temperature or `adiabatic`. */
static kedr_status read_temperature(kedr_ini *ini, const char *sec, const char *key, double *t,
                                    int *adiabatic)
{
    const char *text = NULL;
    KEDR_TRY(kedr_ini_string(ini, sec, key, 0, &text));
    if (!text)
        return KEDR_OK;
    if (strcmp(text, "adiabatic") == 0) {
        if (!adiabatic)
            return kedr_ini_fail(ini, sec, key, "adiabatic: an inflow needs a temperature");
        *adiabatic = 1;
        return KEDR_OK;
    }
    KEDR_TRY(kedr_ini_double(ini, sec, key, 0, -1e6, 1e6, t));
    if (adiabatic)
        *adiabatic = 0;
    return KEDR_OK;
}

static kedr_status read_grid(kedr_ini *ini, kedr_adi_case *c)
{
    int64_t v;
    int *n[3] = {&c->nx, &c->ny, &c->nz};
    const char *keys[3] = {"nx", "ny", "nz"};
    for (int a = 0; a < 3; a++) {
        KEDR_TRY(kedr_ini_int(ini, "grid", keys[a], REQ, 3, ADI_MAX_SIDE, &v));
        *n[a] = (int)v;
    }
    return kedr_ini_double(ini, "grid", "h", REQ | POS, 0, 1e6, &c->h);
}

static kedr_status read_mask(kedr_ini *ini, kedr_adi_case *c)
{
    const char *mask = NULL;
    KEDR_TRY(kedr_ini_string(ini, "grid", "mask", 0, &mask));
    if (!mask)
        return KEDR_OK;
    char dir[1024], path[2048];
    kedr_ini_dir(ini, dir, sizeof dir);
    if (mask[0] == '/')
        snprintf(path, sizeof path, "%s", mask);
    else
        snprintf(path, sizeof path, "%s/%s", dir, mask);
    kedr_status s = kedr_adi_read_depth(c, path);
    if (s != KEDR_OK) {
        char why[768];
        snprintf(why, sizeof why, "%s", kedr_last_error());
        return kedr_ini_fail(ini, "grid", "mask", "%s", why);
    }
    return KEDR_OK;
}

static kedr_status read_flow(kedr_ini *ini, kedr_adi_case *c)
{
    KEDR_TRY(kedr_ini_double(ini, "flow", "re", REQ | POS, 0, 1e9, &c->re));
    KEDR_TRY(kedr_ini_double(ini, "flow", "pr", POS, 0, 1e6, &c->pr));
    KEDR_TRY(kedr_ini_double(ini, "flow", "gamma", 0, 1, 10, &c->gamma));
    KEDR_TRY(read_vector(ini, "flow", "force", c->force));
    KEDR_TRY(read_vector(ini, "initial", "velocity", c->init_velocity));
    return kedr_ini_double(ini, "initial", "temperature", 0, -1e6, 1e6, &c->init_temperature);
}

static kedr_status read_boundary(kedr_ini *ini, kedr_adi_case *c)
{
    static const char *const kinds[] = {"wall", "inflow", "free", NULL};
    for (int f = 0; f < 6; f++) {
        kedr_adi_face *fc = &c->face[f];
        int kind = fc->kind;
        char key[32];
        KEDR_TRY(kedr_ini_choice(ini, "boundary", face_names[f], 0, kinds, &kind));
        fc->kind = (kedr_adi_face_kind)kind;
        snprintf(key, sizeof key, "%s_velocity", face_names[f]);
        if (kind == KEDR_ADI_FREE && kedr_ini_has(ini, "boundary", key))
            return kedr_ini_fail(ini, "boundary", key, "a free face takes no velocity (it is "
                                 "extrapolated from the flow)");
        KEDR_TRY(read_vector(ini, "boundary", key, fc->velocity));
        snprintf(key, sizeof key, "%s_temperature", face_names[f]);
        if (kind == KEDR_ADI_INFLOW) {
            fc->adiabatic = 0;
            fc->temperature = c->init_temperature;
        }
        if (kind == KEDR_ADI_FREE && kedr_ini_has(ini, "boundary", key))
            return kedr_ini_fail(ini, "boundary", key, "a free face takes no temperature");
        KEDR_TRY(read_temperature(ini, "boundary", key, &fc->temperature,
                                  kind == KEDR_ADI_WALL ? &fc->adiabatic : NULL));
    }
    return read_temperature(ini, "walls", "temperature", &c->wall_temperature,
                            &c->wall_adiabatic);
}

static kedr_status read_solver(kedr_ini *ini, kedr_adi_case *c)
{
    static const char *const precisions[] = {"double", "single", NULL};
    static const char *const advections[] = {"upwind", "central", NULL};
    static const char *const zs[] = {"auto", "direct", "transpose", NULL};
    static const char *const xs[] = {"auto", "partitioned", "prim", NULL};
    static const char *const xi[] = {"auto", "owner", "gather", NULL};
    int64_t v;
    KEDR_TRY(kedr_ini_double(ini, "time", "dt", REQ | POS, 0, 1e6, &c->dt));
    KEDR_TRY(kedr_ini_int(ini, "time", "steps", REQ, 0, INT64_C(1) << 40, &c->steps));
    KEDR_TRY(kedr_ini_choice(ini, "solver", "precision", 0, precisions, &c->single));
    v = c->global_iterations;
    KEDR_TRY(kedr_ini_int(ini, "solver", "global_iterations", 0, 1, 1000, &v));
    c->global_iterations = (int)v;
    v = c->local_iterations;
    KEDR_TRY(kedr_ini_int(ini, "solver", "local_iterations", 0, 1, 1000, &v));
    c->local_iterations = (int)v;
    KEDR_TRY(kedr_ini_double(ini, "solver", "continuity_tolerance", 0, 0, INF,
                             &c->continuity_tolerance));
    KEDR_TRY(kedr_ini_double(ini, "solver", "change_tolerance", 0, 0, INF, &c->change_tolerance));
    KEDR_TRY(kedr_ini_choice(ini, "solver", "advection", 0, advections, &c->central));
    int z = c->z_transpose + 1;
    KEDR_TRY(kedr_ini_choice(ini, "solver", "z_sweep", 0, zs, &z));
    c->z_transpose = z - 1;
    KEDR_TRY(kedr_ini_choice(ini, "solver", "x_sweep", 0, xs, &c->x_partitioned));
    KEDR_TRY(kedr_ini_choice(ini, "solver", "x_interface", 0, xi, &c->x_interface));
    return kedr_ini_double(ini, "solver", "velocity_limit", POS, 0, INF, &c->velocity_limit);
}

static kedr_status read_output(kedr_ini *ini, kedr_adi_case *c)
{
    const char *dir = NULL;
    KEDR_TRY(kedr_ini_string(ini, "output", "dir", 0, &dir));
    if (dir) {
        if (strlen(dir) >= sizeof c->out_dir)
            return kedr_ini_fail(ini, "output", "dir", "%zu bytes: at most %zu", strlen(dir),
                                 sizeof c->out_dir - 1);
        strcpy(c->out_dir, dir);
    }
    KEDR_TRY(kedr_ini_int(ini, "output", "stats_every", 0, 0, INT64_C(1) << 40, &c->stats_every));
    KEDR_TRY(kedr_ini_int(ini, "output", "checkpoint_every", 0, 0, INT64_C(1) << 40,
                          &c->checkpoint_every));
    KEDR_TRY(kedr_ini_bool(ini, "output", "checkpoint", 0, &c->checkpoint));
    KEDR_TRY(kedr_ini_bool(ini, "output", "vti", 0, &c->write_vti));
    KEDR_TRY(kedr_ini_bool(ini, "output", "png", 0, &c->write_png));
    KEDR_TRY(kedr_ini_bool(ini, "output", "csv", 0, &c->write_csv));
    int64_t slice = c->slice;
    KEDR_TRY(kedr_ini_int(ini, "output", "slice", 0, 0, c->nz - 1, &slice));
    c->slice = (int)slice;
    return KEDR_OK;
}

/* NAME: the case file's name without its folder and .ini; refused when longer than the
 * outputs' names may be (rather than cut, which could make two cases write the same files). */
static kedr_status case_name(const char *path, char *name, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".ini") == 0)
        n -= 4;
    if (n >= size)
        return kedr_fail(KEDR_ERR_INVALID, "%s: the case name has %zu bytes; output files take "
                         "names of at most %zu", path, n, size - 1);
    memcpy(name, base, n);
    name[n] = 0;
    return KEDR_OK;
}

static kedr_status read_case(kedr_ini *ini, kedr_adi_case *c)
{
    KEDR_TRY(read_grid(ini, c));
    KEDR_TRY(read_mask(ini, c));
    KEDR_TRY(read_flow(ini, c));
    KEDR_TRY(read_boundary(ini, c));
    KEDR_TRY(read_solver(ini, c));
    KEDR_TRY(read_output(ini, c));
    return kedr_ini_finish(ini);
}

kedr_status kedr_adi_case_load(const char *path, kedr_adi_case *c)
{
    if (!path || !c)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_adi_case_load: %s is NULL", !path ? "path" : "c");
    kedr_adi_case_default(c);
    KEDR_TRY(case_name(path, c->name, sizeof c->name));
    snprintf(c->out_dir, sizeof c->out_dir, "%s-out", c->name);
    kedr_ini *ini = NULL;
    KEDR_TRY(kedr_ini_load(path, &ini));
    kedr_status s = read_case(ini, c);
    if (s == KEDR_OK) {
        char where[600];
        snprintf(where, sizeof where, "%s: [grid] mask %s: ", path, c->mask_path);
        s = check(c, c->solid ? where : "");
        if (s != KEDR_OK && c->solid) {
            char why[1024];
            snprintf(why, sizeof why, "%s", kedr_last_error());
            size_t skip = strncmp(why, where, strlen(where)) == 0 ? strlen(where) : 0;
            s = kedr_ini_fail(ini, "grid", "mask", "%s", why + skip);
        }
    }
    kedr_ini_free(ini);
    if (s != KEDR_OK)
        kedr_adi_case_free(c);
    return s;
}

double kedr_adi_bytes(const kedr_adi_case *c, kedr_backend b)
{
    return kedr_adi_rank_bytes(c, b, 1);
}

/* Per node of the own planes and their two halos: six states of four fields, the mask in both
 * layouts, and on cuda the Thomas scratch (two values a node) and six doubles for the
 * reductions; with the partitioned X sweep, 4 values a node of the own planes (through prim:
 * 22, the rows' a, b, c twice, the right sides, gaps and the part solver's work) and 46 a plane
 * (interface rows, unknowns and halos), and the gathered interface rows. */
double kedr_adi_rank_bytes(const kedr_adi_case *c, kedr_backend b, int nranks)
{
    if (nranks < 1)
        nranks = 1;
    double own = ceil((double)c->nx / nranks), plane = (double)c->ny * c->nz;
    double r = c->single ? 4 : 8;
    double per = ADI_NSTATES * 4 * r + 2 + (b == KEDR_BACKEND_CUDA ? 2 * r + 48 : 0);
    double bytes = (own + 2) * plane * per;
    if (nranks > 1 || c->x_partitioned)
        bytes += ((c->x_partitioned == 2 ? 22 : 4) * own + 46) * plane * r;
    /* x_interface = gather (auto may take it on cuda): every rank's interface rows, 16 values a
     * line each; on the cpu also the unknowns of every rank's rows and the solve's scratch */
    int cuda = b == KEDR_BACKEND_CUDA;
    if (nranks > 1 && (c->x_interface == 2 || (c->x_interface == 0 && cuda)))
        bytes += nranks * plane * (cuda ? 16 * r : 24 * r + 32);
    return bytes;
}

int kedr_adi_max_ranks(const kedr_adi_case *c) { return c->nx / 2; }

void adi_slab(int nx, int r, int n, int *lo, int *hi)
{
    *lo = (int)((int64_t)nx * r / n);
    *hi = (int)((int64_t)nx * (r + 1) / n);
}

void adi_params_init(const kedr_adi_case *c, int nxl, const int64_t s[3], adi_params *p)
{
    memset(p, 0, sizeof *p);
    p->n[0] = nxl;
    p->n[1] = c->ny;
    p->n[2] = c->nz;
    memcpy(p->s, s, sizeof p->s);
    p->h = c->h;
    p->dt = c->dt;
    p->kappa_u = 1 / c->re;
    p->kappa_t = 1 / (c->re * c->pr);
    p->dissipation = (c->gamma - 1) / (c->gamma * c->re);
    memcpy(p->force, c->force, sizeof p->force);
    p->central = c->central;
    adi_ghost *g = &p->ghost[ADI_SOLID];
    for (int v = 0; v < 3; v++)
        g->dirichlet[v] = 1; /* no slip: value 0 */
    g->dirichlet[3] = !c->wall_adiabatic;
    g->value[3] = c->wall_temperature;
    for (int f = 0; f < 6; f++) {
        const kedr_adi_face *fc = &c->face[f];
        g = &p->ghost[ADI_FACE + f];
        int given = fc->kind != KEDR_ADI_FREE;
        for (int v = 0; v < 3; v++) {
            g->dirichlet[v] = (unsigned char)given;
            g->value[v] = given ? fc->velocity[v] : 0;
        }
        g->dirichlet[3] = given && !(fc->kind == KEDR_ADI_WALL && fc->adiabatic);
        g->value[3] = fc->temperature;
    }
    for (int t = 0; t < 8; t++)
        for (int v = 0; v < 4; v++)
            p->ghost[t].value_f[v] = (float)p->ghost[t].value[v];
}
