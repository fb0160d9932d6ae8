/* render: a minimal reader of Wavefront OBJ meshes (vertices and faces only). This build links
 * no OBJ library (see docs/render.md), so the subset scenes need is read here, strictly: `v x y z
 * [w]`, `f` with three or more vertex references (v, v/vt, v//vn or v/vt/vn; negative indices
 * count back from the last vertex), polygons split into fans, and `usemtl NAME` naming a
 * [material.NAME] section of the scene. Texture coordinates, normals, groups, smoothing, lines
 * and mtllib are read past. Anything malformed is an error naming the file and line. */
#include "render/scene.h"

#include "core/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 GB of text: about 20 million triangles. */
#define OBJ_MAX_BYTES ((size_t)1 << 30)

typedef struct {
    const char *path;
    int line;
} obj_where;

static kedr_status obj_error(const obj_where *w, const char *what)
{
    return kedr_fail(KEDR_ERR_PARSE, "%s:%d: %s", w->path, w->line, what);
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

/* A vertex reference "i", "i/j", "i//k" or "i/j/k": the 0-based vertex index. */
static kedr_status vertex_ref(const obj_where *w, const char **pp, size_t nverts, size_t *out)
{
    char *end;
    errno = 0;
    long long i = strtoll(*pp, &end, 10);
    if (end == *pp || errno)
        return obj_error(w, "a face vertex is not a number (expected f v1 v2 v3 ...)");
    long long k = i > 0 ? i - 1 : (long long)nverts + i;
    if (i == 0 || k < 0 || k >= (long long)nverts) {
        char msg[160];
        snprintf(msg, sizeof msg, "vertex %lld: expected 1 to %zu or -1 to -%zu (the vertices "
                 "given so far)", i, nverts, nverts);
        return obj_error(w, msg);
    }
    const char *p = end;
    for (int slash = 0; slash < 2 && *p == '/'; slash++) {
        p++;
        if (*p == '/' || *p == ' ' || *p == '\t' || !*p || *p == '\n' || *p == '\r')
            continue;
        strtoll(p, &end, 10);
        if (end == p)
            return obj_error(w, "a malformed vertex reference (expected v, v/vt, v//vn or "
                             "v/vt/vn)");
        p = end;
    }
    if (*p && !isspace((unsigned char)*p))
        return obj_error(w, "a malformed vertex reference (expected v, v/vt, v//vn or v/vt/vn)");
    *pp = p;
    *out = (size_t)k;
    return KEDR_OK;
}

static kedr_status parse(kedr_render_scene *s, const char *text, const char *path,
                         const render_xform *x, int mat)
{
    obj_where w = {path, 0};
    float *verts = NULL;
    size_t nverts = 0, cap = 0;
    size_t *face = NULL, fcap = 0;
    kedr_status st = KEDR_OK;
    const char *p = text;
    while (*p && st == KEDR_OK) {
        w.line++;
        const char *eol = strchr(p, '\n');
        if (!eol)
            eol = p + strlen(p);
        const char *q = skip_space(p);
        if (q[0] == 'v' && (q[1] == ' ' || q[1] == '\t')) {
            float v[3];
            char *end;
            q += 2;
            for (int k = 0; k < 3; k++) {
                q = skip_space(q);
                v[k] = strtof(q, &end);
                if (end == q || end > eol) {
                    st = obj_error(&w, "expected v x y z");
                    break;
                }
                q = end;
            }
            if (st != KEDR_OK)
                break;
            if (nverts == cap) {
                cap = cap * 2 + 1024;
                float *nv = realloc(verts, cap * 3 * sizeof *nv);
                if (!nv) {
                    st = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", path);
                    break;
                }
                verts = nv;
            }
            render_xform_apply(x, v, verts + nverts * 3);
            nverts++;
        } else if (q[0] == 'f' && (q[1] == ' ' || q[1] == '\t')) {
            size_t n = 0;
            q += 2;
            for (;;) {
                q = skip_space(q);
                if (q >= eol || *q == '\n' || *q == '#')
                    break;
                if (n == fcap) {
                    fcap = fcap * 2 + 8;
                    size_t *nf = realloc(face, fcap * sizeof *nf);
                    if (!nf) {
                        st = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", path);
                        break;
                    }
                    face = nf;
                }
                st = vertex_ref(&w, &q, nverts, &face[n]);
                if (st != KEDR_OK)
                    break;
                n++;
            }
            if (st != KEDR_OK)
                break;
            if (n < 3) {
                st = obj_error(&w, "a face of fewer than 3 vertices");
                break;
            }
            for (size_t i = 1; i + 1 < n; i++)
                if (!render_mesh_add(s, verts + face[0] * 3, verts + face[i] * 3,
                                     verts + face[i + 1] * 3, mat)) {
                    st = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for triangles", path);
                    break;
                }
        } else if (strncmp(q, "usemtl", 6) == 0 && (q[6] == ' ' || q[6] == '\t')) {
            q = skip_space(q + 6);
            size_t len = 0;
            while (q + len < eol && !isspace((unsigned char)q[len]))
                len++;
            char name[64];
            if (len == 0 || len >= sizeof name) {
                st = obj_error(&w, "usemtl: a material name of 1 to 63 characters expected");
                break;
            }
            memcpy(name, q, len);
            name[len] = 0;
            mat = -1;
            for (int i = 0; i < s->nmats; i++)
                if (strcmp(s->mats[i].name, name) == 0)
                    mat = i;
            if (mat < 0) {
                char msg[200];
                snprintf(msg, sizeof msg, "usemtl %s: the scene has no [material.%s]", name, name);
                st = obj_error(&w, msg);
                break;
            }
        }
        p = *eol ? eol + 1 : eol;
    }
    free(verts);
    free(face);
    return st;
}

kedr_status render_obj_load(kedr_render_scene *s, const char *path, const render_xform *x,
                            int mat)
{
    char *text = NULL;
    size_t len = 0;
    KEDR_TRY(kedr_file_read(path, OBJ_MAX_BYTES, &text, &len));
    if (memchr(text, 0, len)) {
        free(text);
        return kedr_fail(KEDR_ERR_PARSE, "%s: a NUL byte: expected an OBJ text file", path);
    }
    size_t bad0 = s->skipped_nonfinite, deg0 = s->skipped_degenerate;
    kedr_status st = parse(s, text, path, x, mat);
    free(text);
    if (st == KEDR_OK && (s->skipped_nonfinite > bad0 || s->skipped_degenerate > deg0))
        kedr_log(KEDR_LOG_WARN, "%s: skipped %zu faces with NaN or infinite vertices and %zu of "
                 "zero area", path, s->skipped_nonfinite - bad0, s->skipped_degenerate - deg0);
    return st;
}
