/* Wavefront OBJ files for the 3D bodies of type stl: the vertices (v) and faces (f) of the
 * file as triangles, a polygon split into a fan from its first vertex; every other statement
 * (normals, texture coordinates, groups, materials) is skipped. */
#include "stl.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double *v; /* 3 a vertex */
    size_t nv, vcap;
    dsmc_stl_mesh *m;
    size_t tcap;
} obj_state;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t n = *cap ? *cap : 256;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return 0;
    *p = q;
    *cap = n;
    return 1;
}

/* The next word of the line at *s (up to the line's end), or 0 when none is left. */
static size_t word(const char **s, const char **start)
{
    while (**s == ' ' || **s == '\t' || **s == '\r')
        (*s)++;
    *start = *s;
    while (**s && !isspace((unsigned char)**s))
        (*s)++;
    return (size_t)(*s - *start);
}

/* "v x y z [w]". */
static kedr_status vertex(const char *path, int line, const char *s, obj_state *st)
{
    double x[3];
    for (int k = 0; k < 3; k++) {
        const char *b;
        size_t len = word(&s, &b);
        char *end;
        double v = len ? strtod(b, &end) : 0;
        if (!len || end != b + len)
            return kedr_fail(KEDR_ERR_PARSE, "%s:%d: vertex %zu: expected 3 numbers after 'v', "
                             "number %d is '%.*s'", path, line, st->nv + 1, k + 1,
                             (int)(len < 40 ? len : 40), len ? b : "");
        if (!isfinite(v))
            return kedr_fail(KEDR_ERR_PARSE, "%s:%d: vertex %zu: '%.*s': expected a finite "
                             "number", path, line, st->nv + 1, (int)(len < 40 ? len : 40), b);
        x[k] = v;
    }
    if (!grow((void **)&st->v, &st->vcap, st->nv + 1, 3 * sizeof(double)))
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory at vertex %zu", path,
                         st->nv + 1);
    memcpy(st->v + 3 * st->nv++, x, sizeof x);
    return KEDR_OK;
}

/* "f a b c ...", each item "i", "i/t", "i//n" or "i/t/n"; i from 1, or negative from the last
 * vertex read. */
static kedr_status face(const char *path, int line, const char *s, obj_state *st)
{
    size_t idx[3] = {0, 0, 0}, n = 0;
    for (;;) {
        const char *b;
        size_t len = word(&s, &b);
        if (!len)
            break;
        char *end;
        long long i = strtoll(b, &end, 10);
        if (end == b || (end != b + len && *end != '/'))
            return kedr_fail(KEDR_ERR_PARSE, "%s:%d: face item %zu: '%.*s': expected a vertex "
                             "number (i, i/t, i//n or i/t/n)", path, line, n + 1,
                             (int)(len < 40 ? len : 40), b);
        long long at = i < 0 ? (long long)st->nv + i : i - 1;
        if (i == 0 || at < 0 || at >= (long long)st->nv)
            return kedr_fail(KEDR_ERR_PARSE, "%s:%d: face item %zu: vertex %lld: expected 1 to "
                             "%zu (or -1 to -%zu), the vertices read so far", path, line, n + 1,
                             i, st->nv, st->nv);
        if (n < 2) {
            idx[n++] = (size_t)at;
            continue;
        }
        idx[2] = (size_t)at;
        n++;
        dsmc_stl_mesh *m = st->m;
        if (!grow((void **)&m->v, &st->tcap, m->ntri + 1, 9 * sizeof(double)))
            return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory at triangle %zu", path,
                             m->ntri + 1);
        for (int k = 0; k < 3; k++)
            memcpy(m->v + 9 * m->ntri + 3 * k, st->v + 3 * idx[k], 3 * sizeof(double));
        m->ntri++;
        idx[1] = idx[2]; /* the fan: the first vertex, the last, the next */
    }
    if (n < 3)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: a face of %zu vertices: expected 3 or more",
                         path, line, n);
    return KEDR_OK;
}

kedr_status dsmc_obj_parse(const char *path, const char *text, dsmc_stl_mesh *m)
{
    obj_state st = {NULL, 0, 0, m, 0};
    memset(m, 0, sizeof *m);
    kedr_status s = KEDR_OK;
    int line = 1;
    for (const char *p = text; *p && s == KEDR_OK; line++) {
        const char *b, *q = p;
        size_t len = word(&q, &b);
        if (len == 1 && *b == 'v')
            s = vertex(path, line, q, &st);
        else if (len == 1 && *b == 'f')
            s = face(path, line, q, &st);
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    free(st.v);
    if (s == KEDR_OK && m->ntri == 0)
        s = kedr_fail(KEDR_ERR_PARSE, "%s: the OBJ file has no faces (%zu vertices)", path, st.nv);
    if (s != KEDR_OK)
        dsmc_stl_free(m);
    return s;
}
