/* render: scene files (keys in docs/render.md), read with kedr/ini.h so that every error names
 * the file, line, key and what was expected. Materials are read first, so that lights, spheres,
 * planes and meshes may name them in any order. */
#include "kedr/ini.h"
#include "render/scene.h"

#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQ KEDR_INI_REQUIRED
#define BIG 1e30

static kedr_status read_vec(kedr_ini *ini, const char *sec, const char *key, unsigned flags,
                            rvec *out)
{
    double v[3];
    int n = 0;
    if (!(flags & REQ) && !kedr_ini_has(ini, sec, key))
        return KEDR_OK;
    KEDR_TRY(kedr_ini_doubles(ini, sec, key, flags, -BIG, BIG, v, 3, &n));
    if (n != 3)
        return kedr_ini_fail(ini, sec, key, "%d numbers: expected 3 (x y z)", n);
    *out = rv((float)v[0], (float)v[1], (float)v[2]);
    return KEDR_OK;
}

static kedr_status read_color(kedr_ini *ini, const char *sec, const char *key, rvec *out)
{
    double v[3];
    int n = 0;
    if (!kedr_ini_has(ini, sec, key))
        return KEDR_OK;
    KEDR_TRY(kedr_ini_doubles(ini, sec, key, 0, 0, 1e6, v, 3, &n));
    if (n == 1)
        v[1] = v[2] = v[0];
    else if (n != 3)
        return kedr_ini_fail(ini, sec, key, "%d numbers: expected r g b (or one grey level)", n);
    *out = rv((float)v[0], (float)v[1], (float)v[2]);
    return KEDR_OK;
}

static kedr_status read_float(kedr_ini *ini, const char *sec, const char *key, unsigned flags,
                              double lo, double hi, float *out)
{
    double v = *out;
    KEDR_TRY(kedr_ini_double(ini, sec, key, flags, lo, hi, &v));
    *out = (float)v;
    return KEDR_OK;
}

static int find_material(const kedr_render_scene *s, const char *name)
{
    for (int i = 0; i < s->nmats; i++)
        if (strcmp(s->mats[i].name, name) == 0)
            return i;
    return -1;
}

static kedr_status material_ref(kedr_ini *ini, const kedr_render_scene *s, const char *sec,
                                int *mat)
{
    const char *name = NULL;
    KEDR_TRY(kedr_ini_string(ini, sec, "material", REQ, &name));
    *mat = find_material(s, name);
    if (*mat < 0)
        return kedr_ini_fail(ini, sec, "material", "'%s': no [material.%s] in this file", name,
                             name);
    return KEDR_OK;
}

static kedr_status read_material(kedr_ini *ini, const char *sec, render_material *m)
{
    static const char *const models[] = {"phong", "cook-torrance", NULL};
    const char *name = sec + strlen("material.");
    if (!*name || strlen(name) >= sizeof m->name)
        return kedr_ini_fail(ini, sec, NULL, "a material name of 1 to %zu characters expected",
                             sizeof m->name - 1);
    *m = (render_material){.model = MAT_PHONG, .color = rv(0.8f, 0.8f, 0.8f), .ambient = 0.1f,
                           .diffuse = 0.8f, .specular = 0.2f, .shininess = 32,
                           .roughness = 0.3f, .ior = 1.5f};
    strcpy(m->name, name);
    KEDR_TRY(kedr_ini_choice(ini, sec, "model", 0, models, &m->model));
    KEDR_TRY(read_color(ini, sec, "color", &m->color));
    KEDR_TRY(read_float(ini, sec, "ambient", 0, 0, 1, &m->ambient));
    KEDR_TRY(read_float(ini, sec, "diffuse", 0, 0, 1, &m->diffuse));
    KEDR_TRY(read_float(ini, sec, "specular", 0, 0, 1, &m->specular));
    KEDR_TRY(read_float(ini, sec, "shininess", 0, 0, 1e4, &m->shininess));
    KEDR_TRY(read_float(ini, sec, "roughness", KEDR_INI_LO_OPEN, 0, 1, &m->roughness));
    KEDR_TRY(read_float(ini, sec, "reflection", 0, 0, 1, &m->reflection));
    KEDR_TRY(read_float(ini, sec, "transmission", 0, 0, 1, &m->transmission));
    KEDR_TRY(read_float(ini, sec, "ior", 0, 1, 10, &m->ior));
    if (m->reflection + m->transmission > 1)
        return kedr_ini_fail(ini, sec, "transmission", "reflection + transmission = %g: at most "
                             "1 (energy)", (double)(m->reflection + m->transmission));
    return KEDR_OK;
}

static kedr_status add_light(kedr_render_scene *s, rvec pos, rvec color)
{
    if (s->nlights % 64 == 0) {
        render_light *l = realloc(s->lights, (size_t)(s->nlights + 64) * sizeof *l);
        if (!l)
            return kedr_fail(KEDR_ERR_NOMEM, "out of host memory for lights");
        s->lights = l;
    }
    s->lights[s->nlights++] = (render_light){pos, color};
    return KEDR_OK;
}

/* A point light, or an area light (a parallelogram corner + a edge1 + b edge2) sampled as a
 * samples x samples grid of point lights at the cells' centres sharing its colour. */
static kedr_status read_light(kedr_ini *ini, kedr_render_scene *s, const char *sec)
{
    rvec color = rv(1, 1, 1), pos = rv(0, 0, 0);
    KEDR_TRY(read_color(ini, sec, "color", &color));
    if (kedr_ini_has(ini, sec, "position"))
        return read_vec(ini, sec, "position", REQ, &pos) == KEDR_OK ? add_light(s, pos, color)
                                                                      : KEDR_ERR_PARSE;
    rvec corner = rv(0, 0, 0), e1 = corner, e2 = corner;
    int64_t n = 4;
    KEDR_TRY(read_vec(ini, sec, "corner", REQ, &corner));
    KEDR_TRY(read_vec(ini, sec, "edge1", REQ, &e1));
    KEDR_TRY(read_vec(ini, sec, "edge2", REQ, &e2));
    KEDR_TRY(kedr_ini_int(ini, sec, "samples", 0, 1, 32, &n));
    if (!(rv_len(rv_cross(e1, e2)) > 0))
        return kedr_ini_fail(ini, sec, "edge2", "the light has zero area (edge1 x edge2 = 0): "
                             "give a point light a position instead");
    rvec c = rv_mul(color, 1.0f / (float)(n * n));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            KEDR_TRY(add_light(s, rv_add(corner, rv_add(rv_mul(e1, (i + 0.5f) / n),
                                                         rv_mul(e2, (j + 0.5f) / n))), c));
    return KEDR_OK;
}

static kedr_status read_xform(kedr_ini *ini, const char *sec, render_xform *x)
{
    rvec rot = rv(0, 0, 0), tr = rv(0, 0, 0);
    float scale = 1;
    KEDR_TRY(read_float(ini, sec, "scale", KEDR_INI_LO_OPEN, 0, 1e12, &scale));
    KEDR_TRY(read_vec(ini, sec, "rotate", 0, &rot));
    KEDR_TRY(read_vec(ini, sec, "translate", 0, &tr));
    /* M = Rz Ry Rx scale: rotations in degrees about x, then y, then z */
    double a = rot.x * M_PI / 180, b = rot.y * M_PI / 180, c = rot.z * M_PI / 180;
    double ca = cos(a), sa = sin(a), cb = cos(b), sb = sin(b), cc = cos(c), sc = sin(c);
    double m[9] = {cc * cb, cc * sb * sa - sc * ca, cc * sb * ca + sc * sa,
                   sc * cb, sc * sb * sa + cc * ca, sc * sb * ca - cc * sa,
                   -sb,     cb * sa,                cb * ca};
    for (int i = 0; i < 9; i++)
        x->m[i] = (float)(m[i] * scale);
    x->t[0] = tr.x;
    x->t[1] = tr.y;
    x->t[2] = tr.z;
    return KEDR_OK;
}

static kedr_status read_mesh(kedr_ini *ini, kedr_render_scene *s, const char *sec)
{
    static const char *const builtins[] = {"teapot", "terrain", "stadium", NULL};
    int mat = 0, which = -1;
    render_xform x;
    KEDR_TRY(material_ref(ini, s, sec, &mat));
    KEDR_TRY(read_xform(ini, sec, &x));
    int has_file = kedr_ini_has(ini, sec, "file"), has_builtin = kedr_ini_has(ini, sec, "builtin");
    if (has_file == has_builtin)
        return kedr_ini_fail(ini, sec, NULL, "expected one of 'file = MESH.obj' and 'builtin = "
                             "teapot|terrain|stadium'");
    if (has_file) {
        const char *file;
        char dir[1024], path[2200];
        KEDR_TRY(kedr_ini_string(ini, sec, "file", REQ, &file));
        kedr_ini_dir(ini, dir, sizeof dir);
        if (file[0] == '/')
            snprintf(path, sizeof path, "%s", file);
        else
            snprintf(path, sizeof path, "%s/%s", dir, file);
        kedr_status st = render_obj_load(s, path, &x, mat);
        if (st == KEDR_ERR_IO)
            return kedr_ini_fail(ini, sec, "file", "%s", kedr_last_error());
        return st;
    }
    KEDR_TRY(kedr_ini_choice(ini, sec, "builtin", REQ, builtins, &which));
    int64_t level = 8, tris = 1 << 20, segments = 64, seed = 1;
    switch (which) {
    case 0:
        KEDR_TRY(kedr_ini_int(ini, sec, "level", 0, 1, 256, &level));
        return render_builtin_teapot(s, (int)level, &x, mat);
    case 1:
        KEDR_TRY(kedr_ini_int(ini, sec, "triangles", 0, 2, (int64_t)1 << 28, &tris));
        KEDR_TRY(kedr_ini_int(ini, sec, "seed", 0, 0, INT64_MAX, &seed));
        return render_builtin_terrain(s, (size_t)tris, (uint64_t)seed, &x, mat);
    case 2:
        KEDR_TRY(kedr_ini_int(ini, sec, "segments", 0, 8, 1 << 16, &segments));
        return render_builtin_stadium(s, (int)segments, &x, mat);
    default: return kedr_ini_fail(ini, sec, "builtin", "unknown built-in mesh");
    }
}

static kedr_status grow(void **p, int n, size_t size)
{
    if (n % 16)
        return KEDR_OK;
    void *q = realloc(*p, (size_t)(n + 16) * size);
    if (!q)
        return kedr_fail(KEDR_ERR_NOMEM, "out of host memory for the scene");
    *p = q;
    return KEDR_OK;
}

static int prefixed(const char *sec, const char *prefix)
{
    return strncmp(sec, prefix, strlen(prefix)) == 0;
}

static kedr_status read_scene(kedr_ini *ini, kedr_render_scene *s)
{
    static const char *const accels[] = {"brute", "grid", "kdtree", "bvh", "lbvh", NULL};
    KEDR_TRY(read_vec(ini, "camera", "eye", REQ, &s->eye));
    KEDR_TRY(read_vec(ini, "camera", "look_at", REQ, &s->look));
    s->up = rv(0, 1, 0);
    KEDR_TRY(read_vec(ini, "camera", "up", 0, &s->up));
    s->fov = 45;
    KEDR_TRY(read_float(ini, "camera", "fov", KEDR_INI_LO_OPEN | KEDR_INI_HI_OPEN, 0, 180,
                        &s->fov));
    rvec f = rv_sub(s->look, s->eye);
    if (!(rv_len(f) > 0) || !(rv_len(rv_cross(f, s->up)) > 1e-6f * rv_len(f) * rv_len(s->up)))
        return kedr_ini_fail(ini, "camera", "up", "the view direction (look_at - eye) must be "
                             "non-zero and not parallel to up");
    int64_t w = 640, h = 480, spp = 1, depth = 5;
    int accel = KEDR_ACCEL_BVH;
    if (kedr_ini_has_section(ini, "render")) {
        KEDR_TRY(kedr_ini_int(ini, "render", "width", 0, 1, 65536, &w));
        KEDR_TRY(kedr_ini_int(ini, "render", "height", 0, 1, 65536, &h));
        KEDR_TRY(kedr_ini_int(ini, "render", "spp", 0, 1, 4096, &spp));
        KEDR_TRY(kedr_ini_int(ini, "render", "depth", 0, 0, 64, &depth));
        KEDR_TRY(kedr_ini_choice(ini, "render", "accel", 0, accels, &accel));
        KEDR_TRY(read_color(ini, "render", "background", &s->background));
        KEDR_TRY(read_color(ini, "render", "ambient", &s->ambient));
    }
    s->width = (int)w;
    s->height = (int)h;
    s->spp = (int)spp;
    s->depth = (int)depth;
    s->accel = (kedr_accel_kind)accel;
    int nsec = kedr_ini_sections(ini);
    for (int i = 0; i < nsec; i++) {
        const char *sec = kedr_ini_section(ini, i);
        if (!prefixed(sec, "material."))
            continue;
        KEDR_TRY(grow((void **)&s->mats, s->nmats, sizeof *s->mats));
        KEDR_TRY(read_material(ini, sec, &s->mats[s->nmats++]));
    }
    for (int i = 0; i < nsec; i++) {
        const char *sec = kedr_ini_section(ini, i);
        if (prefixed(sec, "light.")) {
            KEDR_TRY(read_light(ini, s, sec));
        } else if (prefixed(sec, "sphere.")) {
            render_sphere sp;
            KEDR_TRY(read_vec(ini, sec, "center", REQ, &sp.c));
            KEDR_TRY(read_float(ini, sec, "radius", REQ | KEDR_INI_LO_OPEN, 0, BIG, &sp.r));
            KEDR_TRY(material_ref(ini, s, sec, &sp.mat));
            KEDR_TRY(grow((void **)&s->spheres, s->nspheres, sizeof sp));
            s->spheres[s->nspheres++] = sp;
        } else if (prefixed(sec, "plane.")) {
            render_plane pl;
            rvec p = rv(0, 0, 0);
            KEDR_TRY(read_vec(ini, sec, "normal", REQ, &pl.n));
            KEDR_TRY(read_vec(ini, sec, "point", 0, &p));
            KEDR_TRY(material_ref(ini, s, sec, &pl.mat));
            if (!(rv_len(pl.n) > 0))
                return kedr_ini_fail(ini, sec, "normal", "a zero normal");
            pl.n = rv_norm(pl.n);
            pl.d = rv_dot(pl.n, p);
            KEDR_TRY(grow((void **)&s->planes, s->nplanes, sizeof pl));
            s->planes[s->nplanes++] = pl;
        } else if (prefixed(sec, "mesh.")) {
            KEDR_TRY(read_mesh(ini, s, sec));
        } else if (strcmp(sec, "camera") && strcmp(sec, "render") && !prefixed(sec, "material.")) {
            return kedr_ini_fail(ini, sec, NULL, "unknown section: expected [camera], [render], "
                                 "[material.NAME], [light.NAME], [sphere.NAME], [plane.NAME] or "
                                 "[mesh.NAME]");
        }
    }
    if (!s->nlights)
        kedr_log(KEDR_LOG_WARN, "%s: no [light.*]: only ambient light", kedr_ini_name(ini));
    return kedr_ini_finish(ini);
}

kedr_status kedr_render_scene_load(const char *path, kedr_render_scene **out)
{
    if (!path || !out)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_render_scene_load: a NULL argument");
    *out = NULL;
    kedr_ini *ini = NULL;
    KEDR_TRY(kedr_ini_load(path, &ini));
    kedr_render_scene *s = calloc(1, sizeof *s);
    if (!s) {
        kedr_ini_free(ini);
        return kedr_fail(KEDR_ERR_NOMEM, "out of host memory");
    }
    kedr_status st = read_scene(ini, s);
    kedr_ini_free(ini);
    if (st != KEDR_OK) {
        kedr_render_scene_destroy(s);
        return st;
    }
    *out = s;
    return KEDR_OK;
}

void kedr_render_scene_destroy(kedr_render_scene *s)
{
    if (!s)
        return;
    free(s->mats);
    free(s->lights);
    free(s->spheres);
    free(s->planes);
    free(s->mesh.v);
    free(s->mesh.mat);
    free(s);
}

void kedr_render_scene_get_info(const kedr_render_scene *s, kedr_render_scene_info *info)
{
    *info = (kedr_render_scene_info){s->mesh.n, (size_t)s->nspheres, (size_t)s->nplanes,
                                     (size_t)s->nlights, (size_t)s->nmats, s->skipped_nonfinite,
                                     s->skipped_degenerate, s->width, s->height, s->spp,
                                     s->depth, s->accel};
}

void render_xform_apply(const render_xform *x, const float *p, float *out)
{
    for (int r = 0; r < 3; r++)
        out[r] = x->m[r * 3] * p[0] + x->m[r * 3 + 1] * p[1] + x->m[r * 3 + 2] * p[2] + x->t[r];
}

int render_mesh_add(kedr_render_scene *s, const float *a, const float *b, const float *c, int mat)
{
    const float *v[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(v[i][k])) {
                s->skipped_nonfinite++;
                return 1;
            }
    rvec n = rv_cross(rv_sub(rv_load(b), rv_load(a)), rv_sub(rv_load(c), rv_load(a)));
    if (!(rv_dot(n, n) > 0)) {
        s->skipped_degenerate++;
        return 1;
    }
    render_mesh *m = &s->mesh;
    if (m->n == m->cap) {
        size_t cap = m->cap * 2 + 1024;
        float *nv = realloc(m->v, cap * 9 * sizeof *nv);
        if (!nv)
            return 0;
        m->v = nv;
        int *nm = realloc(m->mat, cap * sizeof *nm);
        if (!nm)
            return 0;
        m->mat = nm;
        m->cap = cap;
    }
    for (int i = 0; i < 3; i++)
        memcpy(m->v + m->n * 9 + i * 3, v[i], 3 * sizeof(float));
    m->mat[m->n++] = mat;
    return 1;
}
