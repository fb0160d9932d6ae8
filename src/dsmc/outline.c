/* Outline files for the 2D and axisymmetric bodies of type outline: the readers (a list of
 * points, or SPARTA's 2D surface file), the case's transform and the checks. Host code, run
 * when a case is read and when a simulator is built. */
#include "outline.h"
#include "geometry.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

void dsmc_outline_free(dsmc_outline *o)
{
    if (!o)
        return;
    free(o->xy);
    free(o->line);
    o->xy = NULL;
    o->line = NULL;
    o->n = 0;
}

/* The largest outline file read: 1 GiB. */
#define OUTLINE_MAX_BYTES ((size_t)1 << 30)

static kedr_status slurp(const char *path, char **text, size_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot open the outline file: %s", path,
                         strerror(errno));
    if (!S_ISREG(st.st_mode))
        return kedr_fail(KEDR_ERR_IO, "%s: expected a regular file (an outline file)", path);
    if ((size_t)st.st_size > OUTLINE_MAX_BYTES)
        return kedr_fail(KEDR_ERR_IO, "%s: %lld bytes: larger than the %zu an outline file may "
                         "have", path, (long long)st.st_size, OUTLINE_MAX_BYTES);
    FILE *f = fopen(path, "rb");
    if (!f)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot open the outline file: %s", path,
                         strerror(errno));
    *size = (size_t)st.st_size;
    *text = malloc(*size + 1);
    if (!*text) {
        fclose(f);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu bytes)", path, *size);
    }
    size_t got = fread(*text, 1, *size, f);
    fclose(f);
    if (got != *size) {
        free(*text);
        return kedr_fail(KEDR_ERR_IO, "%s: read %zu of its %zu bytes", path, got, *size);
    }
    (*text)[*size] = 0;
    if (memchr(*text, 0, *size)) {
        free(*text);
        return kedr_fail(KEDR_ERR_PARSE, "%s: a NUL byte: not a text file (an outline file is "
                         "text: 'x y' a line, or SPARTA's points and lines)", path);
    }
    return KEDR_OK;
}

/* The words of one line (its '#' comment cut off), at most max; the count, or max + 1 when
 * there are more. The line is cut in place. */
static int words(char *line, char **w, int max)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = 0;
    int n = 0;
    for (char *s = line;;) {
        while (*s && isspace((unsigned char)*s))
            s++;
        if (!*s)
            break;
        if (n == max)
            return max + 1;
        w[n++] = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (*s)
            *s++ = 0;
    }
    return n;
}

static int number(const char *w, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(w, &end);
    return *end == 0 && end != w && isfinite(*v);
}

static int integer(const char *w, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(w, &end, 10);
    return *end == 0 && end != w && errno == 0;
}

static kedr_status grow(const char *path, dsmc_outline *o, size_t *cap)
{
    if (o->n < *cap)
        return KEDR_OK;
    size_t nc = *cap ? 2 * *cap : 256;
    double *xy = realloc(o->xy, nc * 2 * sizeof(double));
    if (xy)
        o->xy = xy;
    int *line = xy ? realloc(o->line, nc * sizeof(int)) : NULL;
    if (line)
        o->line = line;
    if (!xy || !line)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for %zu points", path, nc);
    *cap = nc;
    return KEDR_OK;
}

/* Splits text into lines in place: their starts, with line numbers from 1. */
static char **split_lines(char *text, size_t size, size_t *nlines)
{
    size_t n = 1;
    for (size_t i = 0; i < size; i++)
        n += text[i] == '\n';
    char **lines = malloc(n * sizeof(char *));
    if (!lines)
        return NULL;
    size_t k = 0;
    lines[k++] = text;
    for (size_t i = 0; i < size; i++)
        if (text[i] == '\n') {
            text[i] = 0;
            lines[k++] = text + i + 1;
        }
    for (size_t i = 0; i < size; i++)
        if (text[i] == '\r')
            text[i] = ' ';
    *nlines = n;
    return lines;
}

/* "x y" a line. */
static kedr_status read_points(const char *path, char **lines, size_t nl, dsmc_outline *o)
{
    size_t cap = 0;
    for (size_t i = 0; i < nl; i++) {
        char *w[3];
        int n = words(lines[i], w, 2);
        if (n == 0)
            continue;
        double x, y;
        if (n != 2)
            return kedr_fail(KEDR_ERR_PARSE, "%s:%zu: expected a point 'x y' (2 numbers), found "
                             "%s", path, i + 1, n < 2 ? "1 word" : "more than 2 words");
        for (int k = 0; k < 2; k++)
            if (!number(w[k], k ? &y : &x))
                return kedr_fail(KEDR_ERR_PARSE, "%s:%zu: '%s' is not a finite number (the %c of "
                                 "a point 'x y')", path, i + 1, w[k], k ? 'y' : 'x');
        KEDR_TRY(grow(path, o, &cap));
        o->xy[2 * o->n] = x;
        o->xy[2 * o->n + 1] = y;
        o->line[o->n++] = (int)(i + 1);
    }
    return KEDR_OK;
}

/* SPARTA's 2D surface file (read_surf): a title line, "N points" and "M lines", then the
 * sections Points ("id x y", ids 1 .. N in order) and Lines ("id p1 p2" or "id type p1 p2", ids
 * 1 .. M in order); the lines must join into one closed loop, point p2 of each line p1 of the
 * next. The outline's points follow the loop from line 1. */
static kedr_status read_sparta(const char *path, char **lines, size_t nl, size_t head,
                               dsmc_outline *o)
{
    long long np = -1, nlines = -1;
    size_t i = head;
    char *w[5];
    int n;
    for (; i < nl; i++) { /* the header: counts until the first section */
        n = words(lines[i], w, 4);
        if (n == 0)
            continue;
        long long v;
        if (n == 2 && integer(w[0], &v) && (!strcmp(w[1], "points") || !strcmp(w[1], "lines"))) {
            if (v < 1)
                return kedr_fail(KEDR_ERR_PARSE, "%s:%zu: %lld %s: expected a count >= 1", path,
                                 i + 1, v, w[1]);
            *(!strcmp(w[1], "points") ? &np : &nlines) = v;
            continue;
        }
        if (n == 1 && (!strcmp(w[0], "Points") || !strcmp(w[0], "Lines")))
            break;
        return kedr_fail(KEDR_ERR_PARSE, "%s:%zu: expected 'N points', 'M lines' or a section "
                         "(Points, Lines) of a SPARTA 2D surface file, found '%s'%s", path, i + 1,
                         w[0], n > 1 ? " ..." : "");
    }
    if (np < 0 || nlines < 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s: a SPARTA surface file needs 'N points' and 'M lines' "
                         "in its header (found %s)", path, np < 0 ? "no points" : "no lines");
    if (np > 100000000 || nlines > 100000000)
        return kedr_fail(KEDR_ERR_PARSE, "%s: %lld points, %lld lines: at most 1e8 each", path,
                         np, nlines);
    double *pts = malloc((size_t)np * 2 * sizeof(double));
    int *pline = malloc((size_t)np * sizeof(int));
    long long *ln = malloc((size_t)nlines * 2 * sizeof(long long));
    int *lline = malloc((size_t)nlines * sizeof(int));
    long long *from = malloc((size_t)np * sizeof(long long));
    kedr_status st = KEDR_OK;
    if (!pts || !pline || !ln || !lline || !from) {
        st = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for %lld points and %lld lines",
                       path, np, nlines);
        goto done;
    }
    long long got[2] = {0, 0};
    int sec = -1; /* 0 Points, 1 Lines */
    for (; i < nl; i++) {
        n = words(lines[i], w, 4);
        if (n == 0)
            continue;
        if (n == 1 && (!strcmp(w[0], "Points") || !strcmp(w[0], "Lines"))) {
            sec = w[0][0] == 'L';
            if (got[sec]) {
                st = kedr_fail(KEDR_ERR_PARSE, "%s:%zu: a second %s section", path, i + 1, w[0]);
                goto done;
            }
            continue;
        }
        long long id;
        if (sec < 0 || !integer(w[0], &id)) {
            st = kedr_fail(KEDR_ERR_PARSE, "%s:%zu: expected %s, found '%s'", path, i + 1,
                           sec < 0 ? "a section (Points or Lines)"
                           : sec == 0 ? "a point 'id x y'" : "a line 'id p1 p2'", w[0]);
            goto done;
        }
        long long want = sec ? nlines : np;
        if (got[sec] == want) {
            st = kedr_fail(KEDR_ERR_PARSE, "%s:%zu: more %s than the %lld the header counts",
                           path, i + 1, sec ? "lines" : "points", want);
            goto done;
        }
        if (id != got[sec] + 1) {
            st = kedr_fail(KEDR_ERR_PARSE, "%s:%zu: %s id %lld: expected %lld (ids count from 1 "
                           "in order)", path, i + 1, sec ? "line" : "point", id, got[sec] + 1);
            goto done;
        }
        if (sec == 0) {
            double x, y;
            if (n != 3 || !number(w[1], &x) || !number(w[2], &y)) {
                st = kedr_fail(KEDR_ERR_PARSE, "%s:%zu: point %lld: expected 'id x y' with x and y "
                               "finite numbers (a 2D file)", path, i + 1, id);
                goto done;
            }
            pts[2 * (id - 1)] = x;
            pts[2 * (id - 1) + 1] = y;
            pline[id - 1] = (int)(i + 1);
        } else {
            long long a, b;
            if ((n != 3 && n != 4) || !integer(w[n - 2], &a) || !integer(w[n - 1], &b)) {
                st = kedr_fail(KEDR_ERR_PARSE, "%s:%zu: line %lld: expected 'id p1 p2' or 'id type "
                               "p1 p2' with point ids", path, i + 1, id);
                goto done;
            }
            if (a < 1 || a > np || b < 1 || b > np || a == b) {
                st = kedr_fail(KEDR_ERR_PARSE, "%s:%zu: line %lld: points %lld and %lld: expected "
                               "two different ids in 1 .. %lld", path, i + 1, id, a, b, np);
                goto done;
            }
            ln[2 * (id - 1)] = a - 1;
            ln[2 * (id - 1) + 1] = b - 1;
            lline[id - 1] = (int)(i + 1);
        }
        got[sec]++;
    }
    if (got[0] != np || got[1] != nlines) {
        int s = got[0] != np ? 0 : 1;
        st = kedr_fail(KEDR_ERR_PARSE, "%s: the header counts %lld %s, the file has %lld", path,
                       s ? nlines : np, s ? "lines" : "points", got[s]);
        goto done;
    }
    /* one closed loop: each point starts exactly one line */
    for (long long p = 0; p < np; p++)
        from[p] = -1;
    for (long long l = 0; l < nlines; l++) {
        long long a = ln[2 * l];
        if (from[a] >= 0) {
            st = kedr_fail(KEDR_ERR_PARSE, "%s:%d: lines %lld and %lld both start at point %lld: "
                           "one of them runs the other way (flipped: swap its p1 and p2; the "
                           "lines of a loop run head to tail), or they form no single loop",
                           path, lline[l], from[a] + 1, l + 1, a + 1);
            goto done;
        }
        from[a] = l;
    }
    size_t cap = 0;
    long long l = 0;
    for (long long k = 0; k < nlines; k++) {
        long long a = ln[2 * l];
        st = grow(path, o, &cap);
        if (st != KEDR_OK)
            goto done;
        o->xy[2 * o->n] = pts[2 * a];
        o->xy[2 * o->n + 1] = pts[2 * a + 1];
        o->line[o->n++] = pline[a];
        long long next = from[ln[2 * l + 1]];
        if (next < 0) {
            st = kedr_fail(KEDR_ERR_PARSE, "%s:%d: line %lld ends at point %lld, where no line "
                           "starts: the lines are not closed", path, lline[l], l + 1,
                           ln[2 * l + 1] + 1);
            goto done;
        }
        if (next == 0 && k + 1 < nlines) {
            st = kedr_fail(KEDR_ERR_PARSE, "%s: the loop from line 1 closes after %lld of the %lld "
                           "lines: one closed loop a file (one body)", path, k + 1, nlines);
            goto done;
        }
        l = next;
    }
done:
    free(pts);
    free(pline);
    free(ln);
    free(lline);
    free(from);
    return st;
}

kedr_status dsmc_outline_read(const char *path, dsmc_outline *o)
{
    memset(o, 0, sizeof *o);
    char *text = NULL;
    size_t size = 0, nl = 0;
    KEDR_TRY(slurp(path, &text, &size));
    char **lines = split_lines(text, size, &nl);
    if (!lines) {
        free(text);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", path);
    }
    /* SPARTA's format: a line "N points" after the title */
    size_t head = 0;
    int sparta = 0;
    for (size_t i = 0; i < nl && !sparta; i++) {
        char copy[128], *w[3];
        snprintf(copy, sizeof copy, "%s", lines[i]);
        long long v;
        int n = words(copy, w, 2);
        sparta = n == 2 && integer(w[0], &v) && !strcmp(w[1], "points");
        if (i == 0 && !sparta)
            head = 1; /* SPARTA skips the first line: a title */
    }
    kedr_status st = sparta ? read_sparta(path, lines, nl, head, o) : read_points(path, lines, nl, o);
    free(lines);
    free(text);
    if (st == KEDR_OK && o->n >= 2 && o->xy[0] == o->xy[2 * o->n - 2] &&
        o->xy[1] == o->xy[2 * o->n - 1])
        o->n--; /* the first point repeated at the end: the outline closes itself */
    if (st == KEDR_OK && o->n == 0)
        st = kedr_fail(KEDR_ERR_PARSE, "%s: no points: expected a closed outline of at least 3 "
                       "points ('x y' a line)", path);
    if (st != KEDR_OK)
        dsmc_outline_free(o);
    return st;
}

void dsmc_outline_transform(dsmc_outline *o, double scale, double rotate, const double translate[2])
{
    double a = rotate * M_PI / 180.0, c = cos(a), s = sin(a);
    if (rotate == 0)
        c = 1, s = 0;
    for (size_t k = 0; k < o->n; k++) {
        double x = scale * o->xy[2 * k], y = scale * o->xy[2 * k + 1];
        o->xy[2 * k] = c * x - s * y + translate[0];
        o->xy[2 * k + 1] = s * x + c * y + translate[1];
    }
}

double dsmc_outline_area(const dsmc_outline *o)
{
    double a = 0;
    const double *p0 = o->xy; /* about the first point: small rounding far from the origin */
    for (size_t k = 1; k + 1 < o->n; k++) {
        const double *p = o->xy + 2 * k, *q = o->xy + 2 * (k + 1);
        a += (p[0] - p0[0]) * (q[1] - p0[1]) - (q[0] - p0[0]) * (p[1] - p0[1]);
    }
    return 0.5 * a;
}

void dsmc_outline_box(const dsmc_outline *o, double box[4])
{
    box[0] = box[1] = HUGE_VAL;
    box[2] = box[3] = -HUGE_VAL;
    for (size_t k = 0; k < o->n; k++)
        for (int d = 0; d < 2; d++) {
            box[d] = fmin(box[d], o->xy[2 * k + d]);
            box[2 + d] = fmax(box[2 + d], o->xy[2 * k + d]);
        }
}

/* Segments k and l (k < l) of the outline: adjacent ones share their common point only (they
 * must not fold back along one line); others must not meet at all. */
static int segments_cross(const dsmc_outline *o, size_t k, size_t l)
{
    size_t n = o->n;
    const double *a = o->xy + 2 * k, *b = o->xy + 2 * ((k + 1) % n);
    const double *c = o->xy + 2 * l, *d = o->xy + 2 * ((l + 1) % n);
    int next = l == k + 1, prev = k == 0 && l == n - 1;
    if (next || prev) { /* common point: b == c (next) or d == a (prev) */
        const double *m = next ? b : a, *u = next ? a : b, *v = next ? d : c;
        double cr = dsmc_cross3(m, u, v);
        double dot = (u[0] - m[0]) * (v[0] - m[0]) + (u[1] - m[1]) * (v[1] - m[1]);
        return cr == 0 && dot > 0;
    }
    return dsmc_segments_meet(a, b, c, d);
}

/* The first crossing pair (in the order of k, then l), by a uniform grid over the outline's box
 * of cells about twice the mean segment length (at most 4096 along an axis and about 8 cells a
 * segment in all), each segment listed
 * in the cells its box meets: only segments of one cell can meet (a common point lies in both
 * boxes, so in one cell of both). */
static kedr_status first_crossing(const char *path, const dsmc_outline *o, size_t *fk, size_t *fl,
                                  int *found)
{
    size_t n = o->n;
    double box[4], length = 0;
    dsmc_outline_box(o, box);
    for (size_t k = 0; k < n; k++) {
        const double *a = o->xy + 2 * k, *b = o->xy + 2 * ((k + 1) % n);
        length += hypot(b[0] - a[0], b[1] - a[1]);
    }
    double side = fmax(2.0 * length / (double)n,
                       fmax(box[2] - box[0], box[3] - box[1]) / 4096.0);
    int gn[2];
    double inv[2];
    for (;; side *= 2) { /* at most about 8 cells a segment */
        for (int d = 0; d < 2; d++) {
            double cells = ceil((box[2 + d] - box[d]) / side);
            gn[d] = cells < 1 ? 1 : cells > 4096 ? 4096 : (int)cells;
            inv[d] = box[2 + d] > box[d] ? gn[d] / (box[2 + d] - box[d]) : 0;
        }
        if ((double)gn[0] * gn[1] <= 8.0 * (double)n + 64)
            break;
    }
    int g = gn[0]; /* cells along x; gn[1] along y */
    size_t ncell = (size_t)gn[0] * gn[1];
    size_t *count = calloc(ncell + 1, sizeof(size_t));
    int (*range)[4] = malloc(n * sizeof *range);
    if (!count || !range) {
        free(count);
        free(range);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for the crossing check", path);
    }
    for (size_t k = 0; k < n; k++) {
        const double *a = o->xy + 2 * k, *b = o->xy + 2 * ((k + 1) % n);
        for (int d = 0; d < 2; d++) {
            int i0 = (int)floor((fmin(a[d], b[d]) - box[d]) * inv[d]);
            int i1 = (int)floor((fmax(a[d], b[d]) - box[d]) * inv[d]);
            range[k][d] = i0 < 0 ? 0 : i0 >= gn[d] ? gn[d] - 1 : i0;
            range[k][2 + d] = i1 < 0 ? 0 : i1 >= gn[d] ? gn[d] - 1 : i1;
        }
        for (int y = range[k][1]; y <= range[k][3]; y++)
            for (int x = range[k][0]; x <= range[k][2]; x++)
                count[(size_t)y * g + x + 1]++;
    }
    for (size_t c = 0; c < ncell; c++)
        count[c + 1] += count[c];
    size_t *list = malloc((count[ncell] ? count[ncell] : 1) * sizeof(size_t));
    size_t *at = malloc(ncell * sizeof(size_t));
    if (!list || !at) {
        free(count);
        free(range);
        free(list);
        free(at);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for the crossing check", path);
    }
    memcpy(at, count, ncell * sizeof(size_t));
    for (size_t k = 0; k < n; k++)
        for (int y = range[k][1]; y <= range[k][3]; y++)
            for (int x = range[k][0]; x <= range[k][2]; x++)
                list[at[(size_t)y * g + x]++] = k;
    *found = 0;
    for (size_t c = 0; c < ncell; c++)
        for (size_t i = count[c]; i < count[c + 1]; i++)
            for (size_t j = i + 1; j < count[c + 1]; j++) {
                size_t k = list[i] < list[j] ? list[i] : list[j];
                size_t l = list[i] < list[j] ? list[j] : list[i];
                if (*found && (k > *fk || (k == *fk && l >= *fl)))
                    continue;
                if (segments_cross(o, k, l)) {
                    *found = 1;
                    *fk = k;
                    *fl = l;
                }
            }
    free(count);
    free(range);
    free(list);
    free(at);
    return KEDR_OK;
}

kedr_status dsmc_outline_check(const char *path, const dsmc_outline *o, int axi)
{
    size_t n = o->n;
    if (n < 3)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu point%s: a closed outline needs at least 3",
                         path, n, n == 1 ? "" : "s");
    for (size_t k = 0; k < n; k++) {
        const double *a = o->xy + 2 * k, *b = o->xy + 2 * ((k + 1) % n);
        if (a[0] == b[0] && a[1] == b[1])
            return kedr_fail(KEDR_ERR_INVALID, "%s:%d: points %zu and %zu (line %d) coincide at "
                             "(%g, %g): segment %zu has zero length", path, o->line[(k + 1) % n],
                             k + 1, (k + 1) % n + 1, o->line[k], a[0], a[1], k + 1);
        if (axi && a[1] < 0)
            return kedr_fail(KEDR_ERR_INVALID, "%s:%d: point %zu at y = %g lies below the axis: an "
                             "axisymmetric body's outline has y >= 0 (its radius)", path,
                             o->line[k], k + 1, a[1]);
    }
    size_t fk = 0, fl = 0;
    int found = 0;
    KEDR_TRY(first_crossing(path, o, &fk, &fl, &found));
    if (found) {
        size_t k2 = (fk + 1) % n, l2 = (fl + 1) % n;
        return kedr_fail(KEDR_ERR_INVALID, "%s: segments %zu (points %zu-%zu, lines %d-%d) and %zu "
                         "(points %zu-%zu, lines %d-%d) %s: the outline intersects itself", path,
                         fk + 1, fk + 1, k2 + 1, o->line[fk], o->line[k2], fl + 1, fl + 1, l2 + 1,
                         o->line[fl], o->line[l2],
                         fl == fk + 1 || (fk == 0 && fl == n - 1) ? "fold back along one line"
                                                                   : "meet");
    }
    if (dsmc_outline_area(o) == 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: the outline encloses no area", path);
    return KEDR_OK;
}

kedr_status dsmc_outline_load(const char *path, double scale, double rotate,
                              const double translate[2], int axi, dsmc_outline *o)
{
    KEDR_TRY(dsmc_outline_read(path, o));
    dsmc_outline_transform(o, scale, rotate, translate);
    kedr_status st = dsmc_outline_check(path, o, axi);
    if (st != KEDR_OK)
        dsmc_outline_free(o);
    return st;
}
