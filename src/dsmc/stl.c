/* STL files for the 3D bodies of type stl: the ASCII and binary readers (OBJ files: obj.c), the
 * checks of a closed, outward-oriented surface, and the case's transform (scale, rotate,
 * translate). */
#include "stl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void dsmc_stl_free(dsmc_stl_mesh *m)
{
    if (!m)
        return;
    free(m->v);
    m->v = NULL;
    m->ntri = 0;
}

/* The largest surface file read: 8 GiB (about 170 million binary triangles). */
#define STL_MAX_BYTES ((size_t)1 << 33)

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float lef32(const unsigned char *p)
{
    uint32_t u = le32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static kedr_status alloc_mesh(const char *path, size_t ntri, dsmc_stl_mesh *m)
{
    m->ntri = ntri;
    m->v = malloc((ntri ? ntri : 1) * 9 * sizeof(double));
    if (!m->v)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for %zu triangles", path, ntri);
    return KEDR_OK;
}

/* Binary STL: an 80-byte header, the count (uint32), then per triangle 12 floats (normal,
 * 3 vertices) and a 2-byte attribute, little-endian. */
static kedr_status read_binary(const char *path, const unsigned char *d, size_t size,
                               dsmc_stl_mesh *m)
{
    if (size < 84)
        return kedr_fail(KEDR_ERR_PARSE, "%s: %zu bytes: too short for a binary STL file (an "
                         "84-byte header) and not an ASCII one (which begins with 'solid')",
                         path, size);
    uint64_t n = le32(d + 80), want = 84 + 50 * n;
    if (size < want) {
        uint64_t whole = (size - 84) / 50;
        return kedr_fail(KEDR_ERR_PARSE, "%s: truncated binary STL: the header counts %llu "
                         "triangles (%llu bytes), the file has %zu bytes: it ends in triangle "
                         "%llu", path, (unsigned long long)n, (unsigned long long)want, size,
                         (unsigned long long)whole + 1);
    }
    if (size > want)
        return kedr_fail(KEDR_ERR_PARSE, "%s: the binary STL header counts %llu triangles "
                         "(%llu bytes) but the file has %zu bytes (%llu more): a wrong triangle "
                         "count, or not an STL file", path, (unsigned long long)n,
                         (unsigned long long)want, size, (unsigned long long)(size - want));
    if (n == 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s: the binary STL file has no triangles", path);
    KEDR_TRY(alloc_mesh(path, (size_t)n, m));
    for (size_t t = 0; t < n; t++) {
        const unsigned char *r = d + 84 + 50 * t + 12; /* past the normal */
        for (int k = 0; k < 9; k++) {
            float f = lef32(r + 4 * k);
            if (!isfinite(f)) {
                dsmc_stl_free(m);
                return kedr_fail(KEDR_ERR_PARSE, "%s: triangle %zu: vertex %d coordinate %c is "
                                 "%g: expected a finite number", path, t + 1, k / 3 + 1,
                                 "xyz"[k % 3], (double)f);
            }
            m->v[9 * t + k] = f;
        }
    }
    return KEDR_OK;
}

/* ---- ASCII -------------------------------------------------------------------------------- */

typedef struct {
    const char *path, *s;
    int line;
    size_t tri; /* triangles read */
    char tok[64];
} ascii_reader;

/* The next word (into r->tok, cut to its first 63 bytes for messages); 0 at the end. */
static int next_word(ascii_reader *r, const char **start, size_t *len)
{
    while (*r->s && isspace((unsigned char)*r->s)) {
        if (*r->s == '\n')
            r->line++;
        r->s++;
    }
    if (!*r->s)
        return 0;
    const char *b = r->s;
    while (*r->s && !isspace((unsigned char)*r->s))
        r->s++;
    *start = b;
    *len = (size_t)(r->s - b);
    size_t n = *len < sizeof r->tok - 1 ? *len : sizeof r->tok - 1;
    memcpy(r->tok, b, n);
    r->tok[n] = 0;
    return 1;
}

static void skip_line(ascii_reader *r)
{
    while (*r->s && *r->s != '\n')
        r->s++;
}

static kedr_status fail_at(const ascii_reader *r, const char *what)
{
    return kedr_fail(KEDR_ERR_PARSE, "%s:%d: triangle %zu: %s", r->path, r->line, r->tri + 1,
                     what);
}

/* The keyword w next (case-insensitive, as exporters differ). */
static kedr_status expect(ascii_reader *r, const char *w)
{
    const char *b;
    size_t len;
    char msg[160];
    if (!next_word(r, &b, &len)) {
        snprintf(msg, sizeof msg, "the file ends where '%s' was expected", w);
        return fail_at(r, msg);
    }
    if (len != strlen(w) || strncasecmp(b, w, len) != 0) {
        snprintf(msg, sizeof msg, "expected '%s', found '%s'", w, r->tok);
        return fail_at(r, msg);
    }
    return KEDR_OK;
}

/* n finite numbers after `after` (for the messages). */
static kedr_status numbers(ascii_reader *r, const char *after, int n, double *out)
{
    char msg[200];
    for (int k = 0; k < n; k++) {
        const char *b;
        size_t len;
        if (!next_word(r, &b, &len)) {
            snprintf(msg, sizeof msg, "the file ends inside '%s': expected %d numbers", after, n);
            return fail_at(r, msg);
        }
        char *end;
        double v = strtod(b, &end);
        if (end != b + len || len == 0) {
            snprintf(msg, sizeof msg, "'%s' is not a number (expected %d numbers after '%s', "
                     "this is number %d)", r->tok, n, after, k + 1);
            return fail_at(r, msg);
        }
        if (!isfinite(v)) { /* an underflow to (nearly) zero is a fine coordinate */
            snprintf(msg, sizeof msg, "'%s' after '%s': expected a finite number", r->tok, after);
            return fail_at(r, msg);
        }
        out[k] = v;
    }
    return KEDR_OK;
}

/* solid NAME; facet normal nx ny nz; outer loop; vertex x y z (3 times); endloop; endfacet;
 * ...; endsolid NAME. A file may hold several solids, one after the other. */
static kedr_status read_ascii(const char *path, const char *text, dsmc_stl_mesh *m)
{
    ascii_reader r = {path, text, 1, 0, {0}};
    size_t cap = 1024;
    KEDR_TRY(alloc_mesh(path, cap, m));
    m->ntri = 0;
    kedr_status st = KEDR_OK;
    const char *b;
    size_t len;
    int solids = 0;
    while (st == KEDR_OK && next_word(&r, &b, &len)) {
        if (len != 5 || strncasecmp(b, "solid", 5) != 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "expected 'solid'%s, found '%s'",
                     solids ? " (a new solid) or the end of the file" : "", r.tok);
            st = kedr_fail(KEDR_ERR_PARSE, "%s:%d: %s", path, r.line, msg);
            break;
        }
        solids++;
        skip_line(&r); /* the solid's name */
        for (;;) {
            if (!next_word(&r, &b, &len)) {
                st = fail_at(&r, "the file ends inside a solid: expected 'facet' or 'endsolid'");
                break;
            }
            if (len == 8 && strncasecmp(b, "endsolid", 8) == 0) {
                skip_line(&r);
                break;
            }
            if (len != 5 || strncasecmp(b, "facet", 5) != 0) {
                char msg[160];
                snprintf(msg, sizeof msg, "expected 'facet' or 'endsolid', found '%s'", r.tok);
                st = fail_at(&r, msg);
                break;
            }
            double normal[3], *v;
            if (m->ntri == cap) {
                double *nv = realloc(m->v, 2 * cap * 9 * sizeof(double));
                if (!nv) {
                    st = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory at triangle %zu",
                                   path, m->ntri + 1);
                    break;
                }
                m->v = nv;
                cap *= 2;
            }
            v = m->v + 9 * m->ntri;
            st = expect(&r, "normal");
            if (st == KEDR_OK)
                st = numbers(&r, "facet normal", 3, normal);
            if (st == KEDR_OK)
                st = expect(&r, "outer");
            if (st == KEDR_OK)
                st = expect(&r, "loop");
            for (int k = 0; k < 3 && st == KEDR_OK; k++) {
                st = expect(&r, "vertex");
                if (st == KEDR_OK)
                    st = numbers(&r, "vertex", 3, v + 3 * k);
            }
            if (st == KEDR_OK)
                st = expect(&r, "endloop");
            if (st == KEDR_OK)
                st = expect(&r, "endfacet");
            if (st != KEDR_OK)
                break;
            m->ntri++;
            r.tri++;
        }
    }
    if (st == KEDR_OK && solids == 0)
        st = kedr_fail(KEDR_ERR_PARSE, "%s: empty: expected an ASCII STL file ('solid' ...) or "
                       "a binary one", path);
    if (st == KEDR_OK && m->ntri == 0)
        st = kedr_fail(KEDR_ERR_PARSE, "%s: the STL file has no triangles", path);
    if (st != KEDR_OK)
        dsmc_stl_free(m);
    return st;
}

kedr_status dsmc_stl_read(const char *path, dsmc_stl_mesh *m)
{
    memset(m, 0, sizeof *m);
    char *data = NULL; /* NUL-terminated, for the ASCII tokenizer */
    size_t size = 0;
    KEDR_TRY(kedr_file_read(path, STL_MAX_BYTES, &data, &size));
    /* Text beginning with "solid" is ASCII; binary files, whatever their header says, hold
     * NUL bytes (in the count, the coordinates or the attributes). */
    const char *s = data;
    while (s < data + size && isspace((unsigned char)*s))
        s++;
    int text = (size_t)(s - data) + 5 <= size && strncasecmp(s, "solid", 5) == 0 &&
               memchr(data, 0, size) == NULL;
    if (size >= 84 && 84 + 50 * (uint64_t)le32((const unsigned char *)data + 80) == size)
        text = 0;
    size_t plen = strlen(path);
    int obj = plen >= 4 && strcasecmp(path + plen - 4, ".obj") == 0;
    kedr_status st = obj    ? dsmc_obj_parse(path, data, m)
                     : text ? read_ascii(path, data, m)
                            : read_binary(path, (const unsigned char *)data, size, m);
    free(data);
    return st;
}

/* ---- checks ------------------------------------------------------------------------------- */

static void sub3(const double *a, const double *b, double *r)
{
    r[0] = a[0] - b[0];
    r[1] = a[1] - b[1];
    r[2] = a[2] - b[2];
}

static void cross(const double *a, const double *b, double *r)
{
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Vertex ids: equal coordinates, equal id (open addressing on the coordinates' bits). */
static uint64_t hash_point(const double *p)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int k = 0; k < 3; k++) {
        double x = p[k] == 0 ? 0.0 : p[k]; /* -0 and 0 are one point */
        uint64_t u;
        memcpy(&u, &x, 8);
        h = (h ^ u) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

static kedr_status vertex_ids(const char *path, const dsmc_stl_mesh *m, uint32_t *id)
{
    size_t nv = 3 * m->ntri, cap = 16;
    while (cap < 2 * nv)
        cap *= 2;
    int64_t *slot = malloc(cap * sizeof *slot);
    if (!slot)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory checking %zu triangles", path,
                         m->ntri);
    for (size_t i = 0; i < cap; i++)
        slot[i] = -1;
    uint32_t next = 0;
    for (size_t i = 0; i < nv; i++) {
        const double *p = m->v + 3 * i;
        size_t h = (size_t)hash_point(p) & (cap - 1);
        for (;;) {
            if (slot[h] < 0) {
                slot[h] = (int64_t)i;
                id[i] = next++;
                break;
            }
            const double *q = m->v + 3 * slot[h];
            if (p[0] == q[0] && p[1] == q[1] && p[2] == q[2]) {
                id[i] = id[slot[h]];
                break;
            }
            h = (h + 1) & (cap - 1);
        }
    }
    free(slot);
    return KEDR_OK;
}

typedef struct {
    uint32_t lo, hi; /* vertex ids, lo < hi */
    uint32_t tri;
    int forward; /* the triangle runs lo -> hi */
} edge;

static int cmp_edge(const void *pa, const void *pb)
{
    const edge *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return (a->tri > b->tri) - (a->tri < b->tri);
}

static void point_text(const double *p, char *buf, size_t size)
{
    snprintf(buf, size, "(%.9g, %.9g, %.9g)", p[0], p[1], p[2]);
}

/* The edge's end points as text, from one of its triangles. */
static void edge_text(const dsmc_stl_mesh *m, const uint32_t *id, const edge *e, char *buf,
                      size_t size)
{
    const double *a = NULL, *b = NULL;
    for (int k = 0; k < 3; k++) {
        size_t vi = 3 * (size_t)e->tri + k;
        if (id[vi] == e->lo)
            a = m->v + 3 * vi;
        if (id[vi] == e->hi)
            b = m->v + 3 * vi;
    }
    char ta[80], tb[80];
    point_text(a, ta, sizeof ta);
    point_text(b, tb, sizeof tb);
    snprintf(buf, size, "%s to %s", ta, tb);
}

kedr_status dsmc_stl_check(const char *path, const dsmc_stl_mesh *m)
{
    if (m->ntri == 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: no triangles", path);
    if (m->ntri > UINT32_MAX / 3)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu triangles: at most %u", path, m->ntri,
                         UINT32_MAX / 3);
    for (size_t t = 0; t < m->ntri; t++) {
        const double *v = m->v + 9 * t;
        double e1[3], e2[3], n[3];
        sub3(v + 3, v, e1);
        sub3(v + 6, v, e2);
        cross(e1, e2, n);
        /* zero area, or an angle under about 1e-12 radians (the normal is then noise) */
        double n2 = dot3(n, n), scale = dot3(e1, e1) * dot3(e2, e2);
        if (!(n2 > 1e-24 * scale) || scale == 0) {
            char a[80], b[80], c[80];
            point_text(v, a, sizeof a);
            point_text(v + 3, b, sizeof b);
            point_text(v + 6, c, sizeof c);
            return kedr_fail(KEDR_ERR_INVALID, "%s: triangle %zu is degenerate (zero area): "
                             "vertices %s, %s, %s", path, t + 1, a, b, c);
        }
    }
    size_t ne = 3 * m->ntri;
    uint32_t *id = malloc(ne * sizeof *id);
    edge *e = malloc(ne * sizeof *e);
    kedr_status st = id && e ? vertex_ids(path, m, id)
                             : kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory checking %zu "
                                         "triangles", path, m->ntri);
    for (size_t t = 0; t < m->ntri && st == KEDR_OK; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = id[3 * t + k], b = id[3 * t + (k + 1) % 3];
            e[3 * t + k] = (edge){a < b ? a : b, a < b ? b : a, (uint32_t)t, a < b};
        }
    if (st == KEDR_OK)
        qsort(e, ne, sizeof *e, cmp_edge);
    size_t open = 0, first_open = 0;
    for (size_t i = 0; i < ne && st == KEDR_OK;) {
        size_t j = i;
        while (j < ne && e[j].lo == e[i].lo && e[j].hi == e[i].hi)
            j++;
        char where[200];
        if (j - i == 1) {
            if (open++ == 0)
                first_open = i;
        } else if (j - i > 2) {
            edge_text(m, id, &e[i], where, sizeof where);
            st = kedr_fail(KEDR_ERR_INVALID, "%s: the edge %s is shared by %zu triangles (%u, "
                           "%u, %u ...): a closed surface has exactly 2 on each edge", path,
                           where, j - i, e[i].tri + 1, e[i + 1].tri + 1, e[i + 2].tri + 1);
        } else if (e[i].forward == e[i + 1].forward) {
            edge_text(m, id, &e[i], where, sizeof where);
            st = kedr_fail(KEDR_ERR_INVALID, "%s: triangles %u and %u are oriented oppositely "
                           "(both run their shared edge %s the same way): one of them is "
                           "flipped", path, e[i].tri + 1, e[i + 1].tri + 1, where);
        }
        i = j;
    }
    if (st == KEDR_OK && open) {
        char where[200];
        edge_text(m, id, &e[first_open], where, sizeof where);
        st = kedr_fail(KEDR_ERR_INVALID, "%s: the surface is not closed: the edge %s of triangle "
                       "%u belongs to no other triangle (%zu open edges)", path, where,
                       e[first_open].tri + 1, open);
    }
    free(id);
    free(e);
    if (st != KEDR_OK)
        return st;
    double vol = dsmc_stl_volume(m);
    if (!(vol > 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: the triangles' vertex order makes the normals "
                         "point inward (enclosed volume %g): expected counter-clockwise seen "
                         "from outside; reverse the order of every triangle", path, vol);
    return KEDR_OK;
}

/* ---- transform and measures --------------------------------------------------------------- */

void dsmc_stl_transform(dsmc_stl_mesh *m, double scale, const double rotate[3],
                        const double translate[3])
{
    double r[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int a = 0; a < 3; a++) { /* r = R_a r */
        double c = cos(rotate[a] * M_PI / 180.0), s = sin(rotate[a] * M_PI / 180.0);
        if (rotate[a] == 0)
            continue;
        int i = (a + 1) % 3, j = (a + 2) % 3;
        for (int k = 0; k < 3; k++) {
            double ri = r[i][k], rj = r[j][k];
            r[i][k] = c * ri - s * rj;
            r[j][k] = s * ri + c * rj;
        }
    }
    for (size_t p = 0; p < 3 * m->ntri; p++) {
        double *v = m->v + 3 * p, x[3] = {scale * v[0], scale * v[1], scale * v[2]};
        for (int k = 0; k < 3; k++)
            v[k] = r[k][0] * x[0] + r[k][1] * x[1] + r[k][2] * x[2] + translate[k];
    }
}

kedr_status dsmc_stl_load(const char *path, double scale, const double rotate[3],
                          const double translate[3], dsmc_stl_mesh *m)
{
    KEDR_TRY(dsmc_stl_read(path, m));
    /* checked as read: the vertices that coincide in the file coincide in the checks */
    kedr_status st = dsmc_stl_check(path, m);
    if (st != KEDR_OK) {
        dsmc_stl_free(m);
        return st;
    }
    dsmc_stl_transform(m, scale, rotate, translate);
    return KEDR_OK;
}

void dsmc_stl_box(const dsmc_stl_mesh *m, double box[6])
{
    for (int d = 0; d < 3; d++) {
        box[d] = HUGE_VAL;
        box[3 + d] = -HUGE_VAL;
    }
    for (size_t p = 0; p < 3 * m->ntri; p++)
        for (int d = 0; d < 3; d++) {
            box[d] = fmin(box[d], m->v[3 * p + d]);
            box[3 + d] = fmax(box[3 + d], m->v[3 * p + d]);
        }
}

double dsmc_stl_volume(const dsmc_stl_mesh *m)
{
    /* sum of the signed tetrahedra (origin, a, b, c), about the first vertex to keep the
     * rounding small for a body far from the origin */
    const double *o = m->v;
    double vol = 0;
    for (size_t t = 0; t < m->ntri; t++) {
        const double *v = m->v + 9 * t;
        double a[3], b[3], c[3], n[3];
        sub3(v, o, a);
        sub3(v + 3, o, b);
        sub3(v + 6, o, c);
        cross(b, c, n);
        vol += dot3(a, n);
    }
    return vol / 6.0;
}

double dsmc_stl_projected_area(const dsmc_stl_mesh *m, const double d[3])
{
    double a = 0;
    for (size_t t = 0; t < m->ntri; t++) {
        const double *v = m->v + 9 * t;
        double e1[3], e2[3], n[3];
        sub3(v + 3, v, e1);
        sub3(v + 6, v, e2);
        cross(e1, e2, n);
        a += fabs(dot3(n, d)); /* |n| is twice the area */
    }
    return 0.25 * a;
}

kedr_status dsmc_stl_write_binary(const char *path, const dsmc_stl_mesh *m)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    unsigned char head[84] = "binary STL written by kedr";
    uint32_t n = (uint32_t)m->ntri;
    for (int k = 0; k < 4; k++)
        head[80 + k] = (unsigned char)(n >> (8 * k));
    int ok = fwrite(head, 1, 84, f) == 84;
    for (size_t t = 0; t < m->ntri && ok; t++) {
        const double *v = m->v + 9 * t;
        double e1[3], e2[3], nn[3];
        sub3(v + 3, v, e1);
        sub3(v + 6, v, e2);
        cross(e1, e2, nn);
        double len = sqrt(dot3(nn, nn));
        float rec[12];
        for (int k = 0; k < 3; k++)
            rec[k] = (float)(len > 0 ? nn[k] / len : 0);
        for (int k = 0; k < 9; k++)
            rec[3 + k] = (float)v[k];
        unsigned char b[50] = {0};
        for (int k = 0; k < 12; k++) {
            uint32_t u;
            memcpy(&u, &rec[k], 4);
            for (int q = 0; q < 4; q++)
                b[4 * k + q] = (unsigned char)(u >> (8 * q));
        }
        ok = fwrite(b, 1, 50, f) == 50;
    }
    if (fclose(f) != 0 || !ok)
        return kedr_fail(KEDR_ERR_IO, "%s: write error", path);
    return KEDR_OK;
}
