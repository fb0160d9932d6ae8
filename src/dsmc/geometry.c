/* Bodies of a DSMC case: validation, the gas volume of cells cut by bodies, and the surface
 * elements on which wall hits are sampled. Host code, run once when a simulator is created. */
#include "sim.h"

#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- areas -------------------------------------------------------------------------------- */

/* Keeps the part of polygon in[0..n) on the side s * (coordinate axis - c) >= 0. */
static int clip_half(const double *in, int n, int axis, double c, double s, double *out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        const double *a = in + 2 * i, *b = in + 2 * ((i + 1) % n);
        double da = s * (a[axis] - c), db = s * (b[axis] - c);
        if (da >= 0) {
            out[2 * m] = a[0];
            out[2 * m + 1] = a[1];
            m++;
        }
        if ((da >= 0) != (db >= 0)) {
            double t = da / (da - db);
            out[2 * m] = a[0] + t * (b[0] - a[0]);
            out[2 * m + 1] = a[1] + t * (b[1] - a[1]);
            m++;
        }
    }
    return m;
}

static double shoelace(const double *xy, int n)
{
    double a = 0;
    for (int i = 0; i < n; i++) {
        const double *p = xy + 2 * i, *q = xy + 2 * ((i + 1) % n);
        a += p[0] * q[1] - q[0] * p[1];
    }
    return 0.5 * a;
}

/* Each half-plane adds at most one vertex per edge crossing: 2n + 8 is ample for n <= 32. */
#define CLIP_MAX (4 * KEDR_DSMC_MAX_SEGMENTS + 16)

/* The part of the polygon inside the rectangle (Sutherland & Hodgman 1974 clipping) in a, b
 * scratch, each of 2 (4n + 16) doubles; its vertex count. */
static int clip_rect(const double *xy, int n, double x0, double y0, double x1, double y1,
                     double *a, double *b)
{
    memcpy(a, xy, (size_t)n * 2 * sizeof(double));
    n = clip_half(a, n, 0, x0, 1.0, b);
    n = clip_half(b, n, 0, x1, -1.0, a);
    n = clip_half(a, n, 1, y0, 1.0, b);
    return clip_half(b, n, 1, y1, -1.0, a);
}

/* The clipped polygon in *a: on the stack up to the polygon bodies' 32 points (buf), in host
 * memory beyond (the outline bodies: *heap, to be freed); -1 when that memory runs out. */
static int clip_any(const double *xy, int n, double x0, double y0, double x1, double y1,
                    double *buf, double **a, double **heap)
{
    *heap = NULL;
    if (n <= KEDR_DSMC_MAX_SEGMENTS) {
        *a = buf;
        return clip_rect(xy, n, x0, y0, x1, y1, buf, buf + 2 * CLIP_MAX);
    }
    size_t m = 2 * (4 * (size_t)n + 16);
    *heap = malloc(2 * m * sizeof(double));
    if (!*heap)
        return -1;
    *a = *heap;
    return clip_rect(xy, n, x0, y0, x1, y1, *heap, *heap + m);
}

double dsmc_polygon_rect_area(const double *xy, int n, double x0, double y0, double x1, double y1)
{
    double buf[4 * CLIP_MAX], *a, *heap;
    n = clip_any(xy, n, x0, y0, x1, y1, buf, &a, &heap);
    double v = n < 0 ? NAN : n < 3 ? 0.0 : fabs(shoelace(a, n));
    free(heap);
    return v;
}

static double moment_of(const double *a, int n);

double dsmc_polygon_rect_moment(const double *xy, int n, double x0, double y0, double x1,
                                double y1)
{
    double buf[4 * CLIP_MAX], *a, *heap;
    n = clip_any(xy, n, x0, y0, x1, y1, buf, &a, &heap);
    double v = n < 0 ? NAN : moment_of(a, n);
    free(heap);
    return v;
}

static double moment_of(const double *a, int n)
{
    if (n < 3)
        return 0.0;
    /* the integral of y over a polygon: sum of (x_i y_j - x_j y_i)(y_i + y_j) / 6 over its
     * edges (i, j), with the sign of its orientation */
    double m = 0;
    for (int i = 0; i < n; i++) {
        const double *p = a + 2 * i, *q = a + 2 * ((i + 1) % n);
        m += (p[0] * q[1] - q[0] * p[1]) * (p[1] + q[1]);
    }
    return shoelace(a, n) < 0 ? -m / 6.0 : m / 6.0;
}

int dsmc_polygon_clip_column(const double *xy, int n, double x0, double x1, double *col,
                             double *scratch)
{
    memcpy(col, xy, (size_t)n * 2 * sizeof(double));
    n = clip_half(col, n, 0, x0, 1.0, scratch);
    return clip_half(scratch, n, 0, x1, -1.0, col);
}

double dsmc_polygon_column_cell(const double *col, int m, double y0, double y1, int moment,
                                double *a, double *b)
{
    m = clip_half(col, m, 1, y0, 1.0, b);
    m = clip_half(b, m, 1, y1, -1.0, a);
    return moment ? moment_of(a, m) : m < 3 ? 0.0 : fabs(shoelace(a, m));
}

/* The integral of sqrt(r^2 - u^2) from 0 to u. */
static double half_chord_integral(double u, double r)
{
    u = u < -r ? -r : u > r ? r : u;
    return 0.5 * (u * sqrt(fmax(0.0, r * r - u * u)) + r * r * asin(u / r));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The integral of r^2 - u^2 from u0 to u1. */
static double chord_square_integral(double u0, double u1, double r)
{
    return r * r * (u1 - u0) - (u1 * u1 * u1 - u0 * u0 * u0) / 3.0;
}

/* Area of the disc within the rectangle and, in *moment, the integral of y over it: the
 * integral over x of the clipped chord [bottom, top], and of (top^2 - bottom^2) / 2. */
static double circle_rect(double cx, double cy, double r, double x0, double y0, double x1,
                          double y1, double *moment)
{
    double a = fmax(x0 - cx, -r), b = fmin(x1 - cx, r), lo = y0 - cy, hi = y1 - cy;
    *moment = 0;
    if (!(a < b) || !(lo < hi) || lo >= r || hi <= -r)
        return 0;
    /* Breaks where the half chord h(u) = sqrt(r^2 - u^2) equals |lo| or |hi|: between them
     * each bound of the clipped chord is either the rectangle's or the circle's. */
    double u[6];
    int n = 0;
    u[n++] = a;
    u[n++] = b;
    double ys[2] = {lo, hi};
    for (int k = 0; k < 2; k++)
        if (fabs(ys[k]) < r) {
            double w = sqrt(r * r - ys[k] * ys[k]);
            if (-w > a && -w < b)
                u[n++] = -w;
            if (w > a && w < b)
                u[n++] = w;
        }
    qsort(u, (size_t)n, sizeof u[0], cmp_double);
    double area = 0, m = 0; /* m: the integral of y - cy */
    for (int i = 0; i + 1 < n; i++) {
        double u0 = u[i], u1 = u[i + 1], um = 0.5 * (u0 + u1);
        if (!(u1 > u0))
            continue;
        double h = sqrt(fmax(0.0, r * r - um * um));
        double hint = half_chord_integral(u1, r) - half_chord_integral(u0, r);
        double h2int = chord_square_integral(u0, u1, r);
        int top_rect = hi < h, bottom_rect = lo > -h;
        double top = top_rect ? hi : h, bottom = bottom_rect ? lo : -h;
        if (top <= bottom)
            continue;
        area += (top_rect ? hi * (u1 - u0) : hint) - (bottom_rect ? lo * (u1 - u0) : -hint);
        m += 0.5 * ((top_rect ? hi * hi * (u1 - u0) : h2int) -
                    (bottom_rect ? lo * lo * (u1 - u0) : h2int));
    }
    *moment = m + cy * area;
    return area;
}

double dsmc_circle_rect_area(double cx, double cy, double r, double x0, double y0, double x1,
                             double y1)
{
    double m;
    return circle_rect(cx, cy, r, x0, y0, x1, y1, &m);
}

double dsmc_circle_rect_moment(double cx, double cy, double r, double x0, double y0, double x1,
                               double y1)
{
    double m;
    circle_rect(cx, cy, r, x0, y0, x1, y1, &m);
    return m;
}

double dsmc_cell_full_volume(const dsmc_params *p, size_t cell)
{
    if (!p->axisym)
        return p->cell_volume;
    double rc = p->lo[1] + ((double)(cell / (size_t)p->nx) + 0.5) * p->dy;
    return 2.0 * M_PI * rc * p->dx * p->dy; /* pi (r1^2 - r0^2) dx */
}

/* ---- validation --------------------------------------------------------------------------- */

double dsmc_cross3(const double *o, const double *a, const double *b)
{
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

int dsmc_segments_meet(const double *p, const double *q, const double *r, const double *s)
{
    double d1 = dsmc_cross3(r, s, p), d2 = dsmc_cross3(r, s, q), d3 = dsmc_cross3(p, q, r),
           d4 = dsmc_cross3(p, q, s);
    if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
        return 1;
    /* Collinear cases: an end point on the other segment. */
    const double *pts[4] = {p, q, r, s};
    double d[4] = {d1, d2, d3, d4};
    for (int k = 0; k < 4; k++) {
        const double *a = k < 2 ? r : p, *b = k < 2 ? s : q, *x = pts[k];
        if (d[k] == 0 && x[0] >= fmin(a[0], b[0]) && x[0] <= fmax(a[0], b[0]) &&
            x[1] >= fmin(a[1], b[1]) && x[1] <= fmax(a[1], b[1]))
            return 1;
    }
    return 0;
}

static double point_segment_distance(const double *c, const double *s)
{
    double dx = s[2] - s[0], dy = s[3] - s[1], len2 = dx * dx + dy * dy;
    double t = len2 > 0 ? ((c[0] - s[0]) * dx + (c[1] - s[1]) * dy) / len2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double ex = s[0] + t * dx - c[0], ey = s[1] + t * dy - c[1];
    return sqrt(ex * ex + ey * ey);
}

/* The bodies of c, with bare segments (nbodies = 0) as one open body. */
static int resolve_bodies(const kedr_dsmc_case *c, kedr_dsmc_body *b)
{
    if (c->nbodies == 0 && c->nsegments > 0) {
        memset(b, 0, sizeof *b);
        b->type = KEDR_DSMC_BODY_PLATE;
        b->count = c->nsegments;
        return 1;
    }
    memcpy(b, c->body, sizeof c->body);
    return c->nbodies;
}

static void body_box(const kedr_dsmc_case *c, const kedr_dsmc_body *b, double box[4]);

static int closed_body(const kedr_dsmc_body *b)
{
    return b->type != KEDR_DSMC_BODY_PLATE;
}

/* Whether (x, y) is inside closed polygon body b of c (crossing number). */
static int inside_polygon(const kedr_dsmc_case *c, const kedr_dsmc_body *b, double x, double y)
{
    int in = 0;
    for (int k = b->first; k < b->first + b->count; k++) {
        const double *s = c->segment[k];
        if ((s[1] > y) != (s[3] > y) && x < s[0] + (y - s[1]) * (s[2] - s[0]) / (s[3] - s[1]))
            in = !in;
    }
    return in;
}

int dsmc_solid_body(kedr_dsmc_body_type t)
{
    return t == KEDR_DSMC_BODY_SPHERE || t == KEDR_DSMC_BODY_CUBOID || t == KEDR_DSMC_BODY_CONE ||
           t == KEDR_DSMC_BODY_STL;
}

void dsmc_solid_box(const kedr_dsmc_body *b, double box[6])
{
    for (int d = 0; d < 3; d++) {
        double h = b->type == KEDR_DSMC_BODY_SPHERE ? b->radius : 0.5 * b->size[d];
        box[d] = b->center[d] - h;
        box[3 + d] = b->center[d] + h;
    }
    if (b->type == KEDR_DSMC_BODY_CONE) {
        double r = b->length * tan(b->half_angle * M_PI / 180.0);
        box[0] = b->center[0];
        box[3] = b->center[0] + b->length;
        for (int d = 1; d < 3; d++) {
            box[d] = b->center[d] - r;
            box[3 + d] = b->center[d] + r;
        }
    }
}

/* The 3D part of dsmc_body_problem: parameters, inside the domain, no two bounding boxes
 * meeting (a conservative test of overlap). An stl body's file is read for its box. */
static int solid_problem(const kedr_dsmc_case *c, const kedr_dsmc_body *bodies, int nb, char *msg,
                         size_t size)
{
    static const char *const axes = "xyz";
    double boxes[KEDR_DSMC_MAX_BODIES][6];
    for (int i = 0; i < nb; i++) {
        const kedr_dsmc_body *b = &bodies[i];
        if (!dsmc_solid_body(b->type)) {
            snprintf(msg, size, "not a 3D body (3D cases take spheres, cuboids, cones and stl "
                     "surfaces)");
            return i;
        }
        double *box = boxes[i];
        if (b->type == KEDR_DSMC_BODY_STL && dsmc_stl_body_box(b, box, msg, size) != 0)
            return i;
        int ok = b->type == KEDR_DSMC_BODY_STL ? 1
                 : b->type == KEDR_DSMC_BODY_SPHERE
                     ? b->radius > 0 && isfinite(b->radius)
                 : b->type == KEDR_DSMC_BODY_CUBOID
                     ? b->size[0] > 0 && b->size[1] > 0 && b->size[2] > 0 &&
                           isfinite(b->size[0] + b->size[1] + b->size[2])
                     : b->half_angle > 0 && b->half_angle < 90 && b->length > 0 &&
                           isfinite(b->length);
        if (!ok) {
            snprintf(msg, size, "bad dimensions: expected a radius > 0, sizes > 0, or a cone "
                     "half angle in (0, 90) degrees and a length > 0");
            return i;
        }
        if (b->type != KEDR_DSMC_BODY_STL)
            dsmc_solid_box(b, box);
        for (int d = 0; d < 3; d++)
            if (!(box[d] > c->lo[d] && box[3 + d] < c->hi[d])) {
                snprintf(msg, size, "extends over %c from %g to %g: not strictly inside the "
                         "domain's [%g, %g]", axes[d], box[d], box[3 + d], c->lo[d], c->hi[d]);
                return i;
            }
        for (int j = 0; j < i; j++) {
            const double *o = boxes[j];
            int meet = 1;
            for (int d = 0; d < 3; d++)
                meet = meet && box[d] <= o[3 + d] && o[d] <= box[3 + d];
            if (meet) {
                snprintf(msg, size, "the bounding boxes of bodies %d and %d meet (3D bodies "
                         "must be apart)", j + 1, i + 1);
                return i;
            }
        }
    }
    return -1;
}

int dsmc_body_problem(const kedr_dsmc_case *c, char *msg, size_t size)
{
    kedr_dsmc_body bodies[KEDR_DSMC_MAX_BODIES];
    if (c->nbodies < 0 || c->nbodies > KEDR_DSMC_MAX_BODIES) {
        snprintf(msg, size, "%d bodies: expected 0 to %d", c->nbodies, KEDR_DSMC_MAX_BODIES);
        return 0;
    }
    int nb = resolve_bodies(c, bodies);
    if (c->dims == 3)
        return solid_problem(c, bodies, nb, msg, size);
    const double *lo = c->lo, *hi = c->hi;
    double obox[KEDR_DSMC_MAX_BODIES][4]; /* the boxes of the outline bodies */
    for (int i = 0; i < nb; i++) {
        const kedr_dsmc_body *b = &bodies[i];
        if (dsmc_solid_body(b->type)) {
            snprintf(msg, size, "a 3D body in a 2D case");
            return i;
        }
        if (c->axisymmetric && b->velocity[1] != 0) {
            snprintf(msg, size, "velocity_y %g: a body of revolution moves along the axis only "
                     "(expected 0)", b->velocity[1]);
            return i;
        }
        if (b->type == KEDR_DSMC_BODY_OUTLINE) {
            double *box = obox[i];
            if (dsmc_outline_body_box(b, c->axisymmetric, box, msg, size) != 0)
                return i;
            /* a body of revolution may lie on the axis */
            int axis = c->axisymmetric && lo[1] == 0 && box[1] == 0;
            if (!(box[0] > lo[0] && box[2] < hi[0] && (box[1] > lo[1] || axis) && box[3] < hi[1])) {
                snprintf(msg, size, "%s: the outline spans [%g, %g] x [%g, %g]: not strictly "
                         "inside the domain [%g, %g] x [%g, %g]%s", b->file, box[0], box[2],
                         box[1], box[3], lo[0], hi[0], lo[1], hi[1],
                         c->axisymmetric ? " (an axisymmetric body may touch the axis y = 0)"
                                         : "");
                return i;
            }
            continue;
        }
        if (b->type == KEDR_DSMC_BODY_CIRCLE) {
            double x = b->center[0], y = b->center[1], r = b->radius;
            if (!(r > 0) || !isfinite(r)) {
                snprintf(msg, size, "circle radius %g: expected > 0", r);
                return i;
            }
            if (c->axisymmetric && (y != 0 || lo[1] != 0)) {
                snprintf(msg, size, "circle centre y = %g: in an axisymmetric case a circle is a "
                         "sphere, centred on the axis (expected y = 0, with y_min = 0)", y);
                return i;
            }
            if (c->axisymmetric && !(x - r > lo[0] && x + r < hi[0] && r < hi[1])) {
                snprintf(msg, size, "sphere at x = %g of radius %g is not inside the domain "
                         "[%g, %g] x [0, %g]", x, r, lo[0], hi[0], hi[1]);
                return i;
            }
            if (!c->axisymmetric && !(x - r > lo[0] && x + r < hi[0] && y - r > lo[1] &&
                                      y + r < hi[1])) {
                snprintf(msg, size, "circle at (%g, %g) of radius %g is not inside the domain "
                         "[%g, %g] x [%g, %g]", x, y, r, lo[0], hi[0], lo[1], hi[1]);
                return i;
            }
            continue;
        }
        if (b->count < 1 || b->first < 0 || b->first + b->count > c->nsegments ||
            (closed_body(b) && b->count < 3)) {
            snprintf(msg, size, "segments %d..%d: not a valid range of the %d segments (a closed "
                     "body needs 3)", b->first, b->first + b->count - 1, c->nsegments);
            return i;
        }
        for (int k = b->first; k < b->first + b->count; k++) {
            const double *s = c->segment[k];
            for (int e = 0; e < 2; e++) {
                double x = s[2 * e], y = s[2 * e + 1];
                /* closed bodies of revolution may lie on the axis */
                int on_axis = c->axisymmetric && lo[1] == 0 && y == 0;
                int in = closed_body(b) ? x > lo[0] && x < hi[0] && (y > lo[1] || on_axis) &&
                                              y < hi[1]
                                        : x >= lo[0] && x <= hi[0] && y >= lo[1] && y <= hi[1];
                if (!in) {
                    snprintf(msg, size, "point (%g, %g) is outside the domain [%g, %g] x [%g, %g]%s",
                             x, y, lo[0], hi[0], lo[1], hi[1],
                             closed_body(b) ? " (closed bodies must not touch its sides)" : "");
                    return i;
                }
            }
            if (s[0] == s[2] && s[1] == s[3]) {
                snprintf(msg, size, "segment %d has zero length", k - b->first);
                return i;
            }
            if (c->axisymmetric && !closed_body(b) && s[1] == 0 && s[3] == 0) {
                snprintf(msg, size, "segment %d lies on the axis: a plate there has no surface",
                         k - b->first);
                return i;
            }
        }
        if (!closed_body(b))
            continue;
        for (int k = b->first; k < b->first + b->count; k++) {
            int next = b->first + (k - b->first + 1) % b->count;
            if (c->segment[k][2] != c->segment[next][0] || c->segment[k][3] != c->segment[next][1]) {
                snprintf(msg, size, "segments %d and %d are not joined: not a closed polygon",
                         k - b->first, next - b->first);
                return i;
            }
            for (int l = k + 1; l < b->first + b->count; l++) {
                int adjacent = l == next || k == b->first + (l - b->first + 1) % b->count;
                const double *s = c->segment[k], *t = c->segment[l];
                if (!adjacent && dsmc_segments_meet(s, s + 2, t, t + 2)) {
                    snprintf(msg, size, "the polygon intersects itself (edges %d and %d)",
                             k - b->first, l - b->first);
                    return i;
                }
            }
        }
        double xy[2 * KEDR_DSMC_MAX_SEGMENTS];
        for (int k = 0; k < b->count; k++) {
            xy[2 * k] = c->segment[b->first + k][0];
            xy[2 * k + 1] = c->segment[b->first + k][1];
        }
        if (shoelace(xy, b->count) == 0) {
            snprintf(msg, size, "the polygon has zero area");
            return i;
        }
    }
    /* Bodies must not meet or contain one another. */
    for (int i = 0; i < nb; i++)
        for (int j = i + 1; j < nb; j++) {
            const kedr_dsmc_body *a = &bodies[i], *b = &bodies[j];
            int meet = 0;
            if (a->type == KEDR_DSMC_BODY_OUTLINE || b->type == KEDR_DSMC_BODY_OUTLINE) {
                /* conservative: the bounding boxes must be apart */
                double ba[4], bb[4];
                if (a->type == KEDR_DSMC_BODY_OUTLINE)
                    memcpy(ba, obox[i], sizeof ba);
                else
                    body_box(c, a, ba);
                if (b->type == KEDR_DSMC_BODY_OUTLINE)
                    memcpy(bb, obox[j], sizeof bb);
                else
                    body_box(c, b, bb);
                if (ba[0] <= bb[2] && bb[0] <= ba[2] && ba[1] <= bb[3] && bb[1] <= ba[3]) {
                    snprintf(msg, size, "the bounding boxes of bodies %d and %d meet (an outline "
                             "body's box must be apart from the other bodies')", i + 1, j + 1);
                    return j;
                }
                continue;
            }
            if (a->type == KEDR_DSMC_BODY_CIRCLE && b->type == KEDR_DSMC_BODY_CIRCLE) {
                meet = hypot(a->center[0] - b->center[0], a->center[1] - b->center[1]) <=
                       a->radius + b->radius;
            } else if (a->type == KEDR_DSMC_BODY_CIRCLE || b->type == KEDR_DSMC_BODY_CIRCLE) {
                const kedr_dsmc_body *ci = a->type == KEDR_DSMC_BODY_CIRCLE ? a : b;
                const kedr_dsmc_body *po = ci == a ? b : a;
                for (int k = po->first; k < po->first + po->count && !meet; k++)
                    meet = point_segment_distance(ci->center, c->segment[k]) <= ci->radius;
                meet = meet || (closed_body(po) && inside_polygon(c, po, ci->center[0],
                                                                  ci->center[1]));
            } else {
                for (int k = a->first; k < a->first + a->count && !meet; k++)
                    for (int l = b->first; l < b->first + b->count && !meet; l++)
                        meet = dsmc_segments_meet(c->segment[k], c->segment[k] + 2, c->segment[l],
                                             c->segment[l] + 2);
                const double *pa = c->segment[a->first], *pb = c->segment[b->first];
                meet = meet || (closed_body(b) && inside_polygon(c, b, pa[0], pa[1])) ||
                       (closed_body(a) && inside_polygon(c, a, pb[0], pb[1]));
            }
            if (meet) {
                snprintf(msg, size, "bodies %d and %d overlap or touch", i + 1, j + 1);
                return j;
            }
        }
    return -1;
}

/* ---- building ------------------------------------------------------------------------------ */

/* The volume body b takes from the cell [x0, x1] x [y0, y1]: its area there (unit depth), or
 * in an axisymmetric case 2 pi times the integral of the radius over that area (Pappus). */
static double body_cell_volume(const kedr_dsmc_case *c, const kedr_dsmc_body *b, double x0,
                               double y0, double x1, double y1)
{
    int axi = c->axisymmetric;
    if (b->type == KEDR_DSMC_BODY_CIRCLE)
        return axi ? 2.0 * M_PI * dsmc_circle_rect_moment(b->center[0], b->center[1], b->radius,
                                                          x0, y0, x1, y1)
                   : dsmc_circle_rect_area(b->center[0], b->center[1], b->radius, x0, y0, x1, y1);
    double xy[2 * KEDR_DSMC_MAX_SEGMENTS];
    for (int k = 0; k < b->count; k++) {
        xy[2 * k] = c->segment[b->first + k][0];
        xy[2 * k + 1] = c->segment[b->first + k][1];
    }
    return axi ? 2.0 * M_PI * dsmc_polygon_rect_moment(xy, b->count, x0, y0, x1, y1)
               : dsmc_polygon_rect_area(xy, b->count, x0, y0, x1, y1);
}

static void body_box(const kedr_dsmc_case *c, const kedr_dsmc_body *b, double box[4])
{
    if (b->type == KEDR_DSMC_BODY_CIRCLE) {
        box[0] = b->center[0] - b->radius;
        box[1] = b->center[1] - b->radius;
        box[2] = b->center[0] + b->radius;
        box[3] = b->center[1] + b->radius;
        return;
    }
    box[0] = box[1] = INFINITY;
    box[2] = box[3] = -INFINITY;
    for (int k = b->first; k < b->first + b->count; k++)
        for (int e = 0; e < 2; e++) {
            box[0] = fmin(box[0], c->segment[k][2 * e]);
            box[1] = fmin(box[1], c->segment[k][2 * e + 1]);
            box[2] = fmax(box[2], c->segment[k][2 * e]);
            box[3] = fmax(box[3], c->segment[k][2 * e + 1]);
        }
}

static kedr_status gas_volumes(kedr_dsmc *sim, int *cut)
{
    const kedr_dsmc_case *c = &sim->c;
    dsmc_geometry *g = &sim->geo;
    const dsmc_params *p = &sim->p;
    size_t nc = sim->ncells;
    g->gas_host = malloc(nc * sizeof(double));
    if (!g->gas_host)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory (%zu cells)", nc);
    for (size_t i = 0; i < nc; i++)
        g->gas_host[i] = dsmc_cell_full_volume(p, i);
    *cut = p->axisym; /* ring volumes differ from row to row: always a table */
    for (int i = 0; i < g->nbodies; i++) {
        const kedr_dsmc_body *b = &g->body[i];
        if (!closed_body(b) || b->type == KEDR_DSMC_BODY_OUTLINE)
            continue; /* outline bodies: dsmc_lines_finish */
        double box[4];
        body_box(c, b, box);
        int i0 = (int)floor((box[0] - p->lo[0]) * p->inv_dx), i1 = (int)((box[2] - p->lo[0]) * p->inv_dx);
        int j0 = (int)floor((box[1] - p->lo[1]) * p->inv_dy), j1 = (int)((box[3] - p->lo[1]) * p->inv_dy);
        i0 = i0 < 0 ? 0 : i0;
        j0 = j0 < 0 ? 0 : j0;
        i1 = i1 >= c->nx ? c->nx - 1 : i1;
        j1 = j1 >= c->ny ? c->ny - 1 : j1;
        for (int j = j0; j <= j1; j++)
            for (int ix = i0; ix <= i1; ix++) {
                double x0 = p->lo[0] + ix * p->dx, y0 = p->lo[1] + j * p->dy;
                double a = body_cell_volume(c, b, x0, y0, x0 + p->dx, y0 + p->dy);
                if (a > 0) {
                    size_t cell = (size_t)j * c->nx + ix;
                    double *v = &g->gas_host[cell];
                    *v -= a;
                    *v = *v < DSMC_SOLID * dsmc_cell_full_volume(p, cell) ? 0.0 : *v;
                    *cut = 1;
                }
            }
    }
    return KEDR_OK;
}

/* The per-element host arrays (ez, enz zero in 2D), with the corners in 3D. */
static kedr_status element_arrays(dsmc_geometry *g, size_t ne, int three)
{
    double *block = calloc(ne, 7 * sizeof(double) + sizeof(int));
    double *corners = three ? malloc(ne * 12 * sizeof(double)) : NULL;
    if (!block || (three && !corners)) {
        free(block);
        free(corners);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory (%zu surface "
                         "elements)", ne);
    }
    g->ex = block;
    g->ey = block + ne;
    g->ez = block + 2 * ne;
    g->enx = block + 3 * ne;
    g->eny = block + 4 * ne;
    g->enz = block + 5 * ne;
    g->elen = block + 6 * ne;
    g->ebody = (int *)(block + 7 * ne);
    g->corners = corners;
    return KEDR_OK;
}

/* Elements: segment k has ceil(length / size) per side (both sides of a plate), a circle
 * ceil(circumference / size), at least 8. Axisymmetric: a circle (a sphere) has them on its
 * upper half only, ceil(pi r / size), at least 8, a segment on the axis none (it has no
 * surface), and an element's length is the area of its band of the body of revolution. */
static kedr_status elements(kedr_dsmc *sim)
{
    const kedr_dsmc_case *c = &sim->c;
    dsmc_geometry *g = &sim->geo;
    dsmc_params *p = &sim->p;
    double size = c->element_size > 0 ? c->element_size : fmin(p->dx, p->dy);
    size_t ne = 0;
    for (int i = 0; i < g->nbodies; i++) {
        const kedr_dsmc_body *b = &g->body[i];
        if (b->type == KEDR_DSMC_BODY_CIRCLE) {
            int j = p->ncircles++;
            p->circ_body[j] = (uint8_t)i;
            p->body_u[i][0] = b->velocity[0];
            p->body_u[i][1] = b->velocity[1];
            p->circle[j][0] = b->center[0];
            p->circle[j][1] = b->center[1];
            p->circle[j][2] = b->radius;
            double n = ceil((p->axisym ? 1.0 : 2.0) * DSMC_PI * b->radius / size);
            p->circ_nelem[j] = n < 8 ? 8 : n > 1e6 ? 1000000 : (uint32_t)n;
            p->circ_elem[j] = (uint32_t)ne;
            ne += p->circ_nelem[j];
            continue;
        }
        if (b->type == KEDR_DSMC_BODY_OUTLINE) {
            KEDR_TRY(dsmc_lines_add(sim, i, &ne, size));
            continue;
        }
        double xy[2 * KEDR_DSMC_MAX_SEGMENTS];
        for (int k = 0; k < b->count; k++) {
            xy[2 * k] = c->segment[b->first + k][0];
            xy[2 * k + 1] = c->segment[b->first + k][1];
        }
        /* Counter-clockwise polygons have the outside on the right of each edge. */
        int8_t out = !closed_body(b) ? 0 : shoelace(xy, b->count) > 0 ? -1 : 1;
        p->body_u[i][0] = b->velocity[0];
        p->body_u[i][1] = b->velocity[1];
        for (int k = b->first; k < b->first + b->count; k++) {
            const double *s = c->segment[k];
            double n = ceil(hypot(s[2] - s[0], s[3] - s[1]) / size);
            p->seg_out[k] = out;
            p->seg_body[k] = (uint8_t)i;
            p->seg_nelem[k] = n < 1 ? 1 : n > 1e6 ? 1000000 : (uint32_t)n;
            if (p->axisym && s[1] == 0 && s[3] == 0)
                p->seg_nelem[k] = 0;
            p->seg_elem[k] = (uint32_t)ne;
            ne += (size_t)p->seg_nelem[k] * (out == 0 ? 2 : 1);
        }
    }
    p->nelem = (uint32_t)ne;
    g->nelem = ne;
    if (ne == 0)
        return KEDR_OK;
    KEDR_TRY(element_arrays(g, ne, 0));
    for (int i = 0; i < g->nbodies; i++) {
        const kedr_dsmc_body *b = &g->body[i];
        if (b->type == KEDR_DSMC_BODY_CIRCLE) {
            int j = 0;
            while (p->circle[j][0] != b->center[0] || p->circle[j][1] != b->center[1])
                j++;
            uint32_t n = p->circ_nelem[j];
            double turn = p->axisym ? DSMC_PI : 2.0 * DSMC_PI, r = b->radius;
            for (uint32_t k = 0; k < n; k++) {
                size_t e = p->circ_elem[j] + k;
                double a = turn * (k + 0.5) / n;
                g->enx[e] = cos(a);
                g->eny[e] = sin(a);
                g->ex[e] = b->center[0] + r * g->enx[e];
                g->ey[e] = b->center[1] + r * g->eny[e];
                /* a zone of the sphere: 2 pi r^2 (cos a0 - cos a1) */
                g->elen[e] = p->axisym ? 2.0 * DSMC_PI * r * r *
                                             (cos(turn * k / n) - cos(turn * (k + 1.0) / n))
                                       : turn * r / n;
                g->ebody[e] = i;
            }
            continue;
        }
        if (b->type == KEDR_DSMC_BODY_OUTLINE) {
            int q = 0;
            while (p->lb_body[q] != i)
                q++;
            dsmc_lines_elements(sim, q);
            continue;
        }
        for (int k = b->first; k < b->first + b->count; k++) {
            const double *s = c->segment[k];
            double dx = s[2] - s[0], dy = s[3] - s[1], len = hypot(dx, dy);
            uint32_t n = p->seg_nelem[k];
            for (int side = 0; side < (p->seg_out[k] == 0 ? 2 : 1); side++) {
                double sign = p->seg_out[k] != 0 ? p->seg_out[k] : side == 0 ? 1.0 : -1.0;
                for (uint32_t q = 0; q < n; q++) {
                    size_t e = p->seg_elem[k] + (size_t)side * n + q;
                    g->ex[e] = s[0] + dx * (q + 0.5) / n;
                    g->ey[e] = s[1] + dy * (q + 0.5) / n;
                    g->enx[e] = -sign * dy / len;
                    g->eny[e] = sign * dx / len;
                    g->elen[e] = len / n;
                    if (p->axisym) /* a conical band: pi (r_a + r_b) length */
                        g->elen[e] *= 2.0 * DSMC_PI * g->ey[e];
                    g->ebody[e] = i;
                }
            }
        }
    }
    return KEDR_OK;
}

/* ---- 3D solids ----------------------------------------------------------------------------- */

/* The interval [*x0, *x1] of x inside solid b on the line through (y, z) along x; 0 when the
 * line misses it. */
static int solid_chord(const kedr_dsmc_body *b, const double *s, double y, double z, double *x0,
                       double *x1)
{
    double dy = y - s[1], dz = z - s[2], rho2 = dy * dy + dz * dz;
    if (b->type == KEDR_DSMC_BODY_SPHERE) {
        if (rho2 >= s[3] * s[3])
            return 0;
        double h = sqrt(s[3] * s[3] - rho2);
        *x0 = s[0] - h;
        *x1 = s[0] + h;
        return 1;
    }
    /* cone: from the lateral surface at x - apex = rho / tan to the base */
    if (rho2 >= s[5] * s[5])
        return 0;
    *x0 = s[0] + sqrt(rho2) / s[3];
    *x1 = s[0] + s[4];
    return 1;
}

/* Sub-grid of a cut cell's y-z face for spheres and cones: the x chord is exact per sub-point. */
#define SOLID_SUB 64

/* Volume of solid j (params p->solid[j]) inside cell box [c0, c1]. Cuboids exactly; spheres and
 * cones by the midpoint rule over a SOLID_SUB^2 grid of lines along x, each clipped exactly. A
 * cell whose 8 corners are inside is wholly inside (the solids are convex). */
static double solid_cell_volume(const dsmc_params *p, int j, const kedr_dsmc_body *b,
                                const double *c0, const double *c1)
{
    const double *s = p->solid[j];
    if (b->type == KEDR_DSMC_BODY_CUBOID) {
        double v = 1;
        for (int d = 0; d < 3; d++)
            v *= fmax(0.0, fmin(c1[d], s[3 + d]) - fmax(c0[d], s[d]));
        return v;
    }
    int corners = 0;
    for (int k = 0; k < 8; k++)
        corners += dsmc_inside_solid(p, j, k & 1 ? c1[0] : c0[0], k & 2 ? c1[1] : c0[1],
                                     k & 4 ? c1[2] : c0[2]);
    double full = (c1[0] - c0[0]) * (c1[1] - c0[1]) * (c1[2] - c0[2]);
    if (corners == 8)
        return full;
    double hy = (c1[1] - c0[1]) / SOLID_SUB, hz = (c1[2] - c0[2]) / SOLID_SUB, len = 0;
    for (int a = 0; a < SOLID_SUB; a++)
        for (int q = 0; q < SOLID_SUB; q++) {
            double x0, x1;
            if (solid_chord(b, s, c0[1] + (a + 0.5) * hy, c0[2] + (q + 0.5) * hz, &x0, &x1))
                len += fmax(0.0, fmin(x1, c1[0]) - fmax(x0, c0[0]));
        }
    return fmin(full, len * hy * hz);
}

/* Sets the 3D solids of sim->p, their cut cells' gas volumes and their surface elements. */
static kedr_status solids(kedr_dsmc *sim, int *cut)
{
    const kedr_dsmc_case *c = &sim->c;
    dsmc_geometry *g = &sim->geo;
    dsmc_params *p = &sim->p;
    size_t nc = sim->ncells;
    double size = c->element_size > 0 ? c->element_size : fmin(p->dx, fmin(p->dy, p->dz));
    g->gas_host = malloc(nc * sizeof(double));
    if (!g->gas_host)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory (%zu cells)", nc);
    for (size_t i = 0; i < nc; i++)
        g->gas_host[i] = p->cell_volume;
    *cut = 0;
    size_t ne = 0;
    for (int j = 0; j < g->nbodies; j++) {
        const kedr_dsmc_body *b = &g->body[j];
        double *s = p->solid[j];
        uint32_t *n = p->solid_n[j];
        if (b->type == KEDR_DSMC_BODY_STL) { /* its cut cells once every mesh is in */
            KEDR_TRY(dsmc_mesh_add(sim, j, &ne));
            p->nsolids = j + 1;
            continue;
        }
        p->solid_type[j] = (int8_t)b->type;
        p->solid_body[j] = (uint8_t)j;
        p->solid_elem[j] = (uint32_t)ne;
        if (b->type == KEDR_DSMC_BODY_SPHERE) {
            for (int d = 0; d < 3; d++)
                s[d] = b->center[d];
            s[3] = b->radius;
            double want = 4.0 * DSMC_PI * b->radius * b->radius / (size * size);
            double bands = ceil(sqrt(0.5 * want));
            n[0] = bands < 8 ? 8 : bands > 1000 ? 1000 : (uint32_t)bands;
            n[1] = 2 * n[0];
            ne += (size_t)n[0] * n[1];
        } else if (b->type == KEDR_DSMC_BODY_CUBOID) {
            for (int d = 0; d < 3; d++) {
                s[d] = b->center[d] - 0.5 * b->size[d];
                s[3 + d] = b->center[d] + 0.5 * b->size[d];
                double k = ceil(b->size[d] / size);
                n[d] = k < 1 ? 1 : k > 1000 ? 1000 : (uint32_t)k;
            }
            ne += 2 * ((size_t)n[1] * n[2] + (size_t)n[0] * n[2] + (size_t)n[0] * n[1]);
        } else {
            double ta = tan(b->half_angle * DSMC_PI / 180.0), r = b->length * ta;
            for (int d = 0; d < 3; d++)
                s[d] = b->center[d];
            s[3] = ta;
            s[4] = b->length;
            s[5] = r;
            double slant = hypot(b->length, r);
            double az = ceil(2.0 * DSMC_PI * r / size), bands = ceil(slant / size);
            double rings = ceil(r / size);
            n[0] = bands < 2 ? 2 : bands > 1000 ? 1000 : (uint32_t)bands;
            n[1] = az < 8 ? 8 : az > 1000 ? 1000 : (uint32_t)az;
            n[2] = rings < 1 ? 1 : rings > 1000 ? 1000 : (uint32_t)rings;
            ne += (size_t)n[1] * (n[0] + n[2]);
        }
        p->nsolids = j + 1;
        /* cut cells within the bounding box */
        double box[6];
        dsmc_solid_box(b, box);
        int i0[3], i1[3];
        const double inv[3] = {p->inv_dx, p->inv_dy, p->inv_dz}, step[3] = {p->dx, p->dy, p->dz};
        const int cells[3] = {p->nx, p->ny, p->nz};
        for (int d = 0; d < 3; d++) {
            i0[d] = (int)floor((box[d] - p->lo[d]) * inv[d]);
            i1[d] = (int)((box[3 + d] - p->lo[d]) * inv[d]);
            i0[d] = i0[d] < 0 ? 0 : i0[d];
            i1[d] = i1[d] >= cells[d] ? cells[d] - 1 : i1[d];
        }
        for (int kz = i0[2]; kz <= i1[2]; kz++)
            for (int ky = i0[1]; ky <= i1[1]; ky++)
                for (int kx = i0[0]; kx <= i1[0]; kx++) {
                    int k[3] = {kx, ky, kz};
                    double c0[3], c1[3];
                    for (int d = 0; d < 3; d++) {
                        c0[d] = p->lo[d] + k[d] * step[d];
                        c1[d] = c0[d] + step[d];
                    }
                    double v = solid_cell_volume(p, j, b, c0, c1);
                    if (v > 0) {
                        double *gv = &g->gas_host[((size_t)kz * p->ny + ky) * p->nx + kx];
                        *gv -= v;
                        *gv = *gv < DSMC_SOLID * p->cell_volume ? 0.0 : *gv;
                        *cut = 1;
                    }
                }
    }
    p->nelem = (uint32_t)ne;
    g->nelem = ne;
    if (ne == 0)
        return KEDR_OK;
    KEDR_TRY(element_arrays(g, ne, 1));
    for (int j = 0; j < p->nsolids; j++) {
        const double *s = p->solid[j];
        const uint32_t *n = p->solid_n[j];
        size_t e = p->solid_elem[j];
        if (p->solid_type[j] == KEDR_DSMC_BODY_STL) {
            dsmc_mesh_elements(sim, j);
            continue;
        }
        /* each element: centre, normal, area and corners (as points on the surface) */
#define ELEM(cx, cy, cz, nnx, nny, nnz, area)                                                      \
    (g->ex[e] = (cx), g->ey[e] = (cy), g->ez[e] = (cz), g->enx[e] = (nnx), g->eny[e] = (nny),       \
     g->enz[e] = (nnz), g->elen[e] = (area), g->ebody[e] = p->solid_body[j])
        if (p->solid_type[j] == KEDR_DSMC_BODY_SPHERE) {
            double r = s[3], area = 4.0 * DSMC_PI * r * r / ((double)n[0] * n[1]);
            for (uint32_t bd = 0; bd < n[0]; bd++)
                for (uint32_t az = 0; az < n[1]; az++, e++) {
                    double u = -1.0 + 2.0 * (bd + 0.5) / n[0], f = 2.0 * DSMC_PI * (az + 0.5) / n[1];
                    double w = sqrt(fmax(0.0, 1.0 - u * u));
                    ELEM(s[0] + r * u, s[1] + r * w * cos(f), s[2] + r * w * sin(f), u,
                         w * cos(f), w * sin(f), area);
                    for (int q = 0; q < 4; q++) {
                        double uq = -1.0 + 2.0 * (bd + (q == 1 || q == 2)) / n[0];
                        double fq = 2.0 * DSMC_PI * (az + (q >= 2)) / n[1];
                        double wq = sqrt(fmax(0.0, 1.0 - uq * uq));
                        double *cq = g->corners + 12 * e + 3 * q;
                        cq[0] = s[0] + r * uq;
                        cq[1] = s[1] + r * wq * cos(fq);
                        cq[2] = s[2] + r * wq * sin(fq);
                    }
                }
        } else if (p->solid_type[j] == KEDR_DSMC_BODY_CUBOID) {
            for (int d = 0; d < 3; d++)
                for (int up = 0; up < 2; up++) {
                    int b1 = (d + 1) % 3, b2 = (d + 2) % 3;
                    int lo_ax = b1 < b2 ? b1 : b2, hi_ax = b1 < b2 ? b2 : b1;
                    double wl = (s[3 + lo_ax] - s[lo_ax]) / n[lo_ax];
                    double wh = (s[3 + hi_ax] - s[hi_ax]) / n[hi_ax];
                    for (uint32_t kh = 0; kh < n[hi_ax]; kh++)
                        for (uint32_t kl = 0; kl < n[lo_ax]; kl++, e++) {
                            double cen[3], nn[3] = {0, 0, 0};
                            cen[d] = up ? s[3 + d] : s[d];
                            cen[lo_ax] = s[lo_ax] + (kl + 0.5) * wl;
                            cen[hi_ax] = s[hi_ax] + (kh + 0.5) * wh;
                            nn[d] = up ? 1.0 : -1.0;
                            ELEM(cen[0], cen[1], cen[2], nn[0], nn[1], nn[2], wl * wh);
                            for (int q = 0; q < 4; q++) {
                                double *cq = g->corners + 12 * e + 3 * q;
                                cq[d] = cen[d];
                                cq[lo_ax] = s[lo_ax] + (kl + (q == 1 || q == 2)) * wl;
                                cq[hi_ax] = s[hi_ax] + (kh + (q >= 2)) * wh;
                            }
                        }
                }
        } else {
            double ta = s[3], len = s[4], r = s[5], ca = 1.0 / sqrt(1.0 + ta * ta), sa = ta * ca;
            double lat = DSMC_PI * r * hypot(len, r) / ((double)n[0] * n[1]);
            double base = DSMC_PI * r * r / ((double)n[2] * n[1]);
            for (uint32_t bd = 0; bd < n[0]; bd++)
                for (uint32_t az = 0; az < n[1]; az++, e++) {
                    double a = len * sqrt((bd + 0.5) / n[0]), f = 2.0 * DSMC_PI * (az + 0.5) / n[1];
                    ELEM(s[0] + a, s[1] + a * ta * cos(f), s[2] + a * ta * sin(f), -sa,
                         ca * cos(f), ca * sin(f), lat);
                    for (int q = 0; q < 4; q++) {
                        double aq = len * sqrt((double)(bd + (q == 1 || q == 2)) / n[0]);
                        double fq = 2.0 * DSMC_PI * (az + (q >= 2)) / n[1];
                        double *cq = g->corners + 12 * e + 3 * q;
                        cq[0] = s[0] + aq;
                        cq[1] = s[1] + aq * ta * cos(fq);
                        cq[2] = s[2] + aq * ta * sin(fq);
                    }
                }
            for (uint32_t rg = 0; rg < n[2]; rg++)
                for (uint32_t az = 0; az < n[1]; az++, e++) {
                    double rho = r * sqrt((rg + 0.5) / n[2]), f = 2.0 * DSMC_PI * (az + 0.5) / n[1];
                    ELEM(s[0] + len, s[1] + rho * cos(f), s[2] + rho * sin(f), 1.0, 0.0, 0.0, base);
                    for (int q = 0; q < 4; q++) {
                        double rq = r * sqrt((double)(rg + (q == 1 || q == 2)) / n[2]);
                        double fq = 2.0 * DSMC_PI * (az + (q >= 2)) / n[1];
                        double *cq = g->corners + 12 * e + 3 * q;
                        cq[0] = s[0] + len;
                        cq[1] = s[1] + rq * cos(fq);
                        cq[2] = s[2] + rq * sin(fq);
                    }
                }
        }
#undef ELEM
    }
    if (g->mesh_ntri) {
        int stl_cut = 0;
        KEDR_TRY(dsmc_mesh_finish(sim, &stl_cut));
        *cut = *cut || stl_cut;
    }
    return KEDR_OK;
}

kedr_status dsmc_geometry_build(kedr_dsmc *sim)
{
    kedr_ctx *ctx = sim->ctx;
    dsmc_geometry *g = &sim->geo;
    dsmc_params *p = &sim->p;
    memset(g, 0, sizeof *g);
    g->nbodies = resolve_bodies(&sim->c, g->body);
    for (int i = 0; i <= KEDR_DSMC_MAX_BODIES; i++) {
        const kedr_dsmc_body *b = i < g->nbodies ? &g->body[i] : NULL;
        p->body_t[i] = b && b->temperature > 0 ? b->temperature : sim->c.wall_temperature;
        p->body_wall[i] = b && b->own_wall ? (int)b->wall_model : (int)sim->c.wall_model;
        p->body_acc[i] = b && b->own_wall ? b->accommodation : sim->c.accommodation;
    }
    p->nudge = 1e-9 * fmin(p->dx, p->dy);
    int cut = 0;
    if (p->dims == 3) {
        p->nudge = 1e-9 * fmin(p->dx, fmin(p->dy, p->dz));
        KEDR_TRY(solids(sim, &cut));
    } else {
        KEDR_TRY(elements(sim)); /* reads the outline bodies' files */
        KEDR_TRY(gas_volumes(sim, &cut));
        KEDR_TRY(dsmc_lines_finish(sim, &cut));
    }
    if (cut) {
        KEDR_TRY(kedr_alloc(ctx, (void **)&g->gas, sim->ncells * sizeof(double)));
        KEDR_TRY(kedr_upload(ctx, g->gas, g->gas_host, sim->ncells * sizeof(double)));
        p->gas_volume = g->gas;
    }
    if (g->nelem) {
        size_t bytes = g->nelem * DSMC_NSURF * sizeof(double);
        KEDR_TRY(kedr_alloc(ctx, (void **)&g->surf, bytes));
        KEDR_TRY(kedr_memset(ctx, g->surf, 0, bytes));
        if (!KEDR_IS_CUDA(ctx)) {
            g->threads = ctx->threads > 0 ? ctx->threads : 1;
            g->surf_threads = malloc(bytes * (size_t)g->threads);
            if (!g->surf_threads)
                return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory for the "
                                 "surface sums");
        }
    }
    return KEDR_OK;
}

void dsmc_params_clear_addresses(dsmc_params *p)
{
    p->gas_volume = NULL;
    p->surf = NULL;
    dsmc_mesh *m[2] = {&p->mesh, &p->mesh_host};
    for (int k = 0; k < 2; k++) {
        m[k]->tri = NULL;
        m[k]->start = m[k]->list = NULL;
        m[k]->solid = NULL;
    }
    p->mesh_cut = p->mesh_cut_host = NULL;
    dsmc_lines *l[2] = {&p->lines, &p->lines_host};
    for (int k = 0; k < 2; k++) {
        l[k]->seg = NULL;
        l[k]->elem = l[k]->start = l[k]->list = NULL;
        l[k]->cls = NULL;
    }
}

void dsmc_geometry_free(kedr_dsmc *sim)
{
    dsmc_geometry *g = &sim->geo;
    dsmc_mesh_free(sim);
    dsmc_lines_free(sim);
    kedr_free(sim->ctx, g->gas);
    kedr_free(sim->ctx, g->surf);
    free(g->gas_host);
    free(g->surf_threads);
    free(g->ex);
    free(g->corners);
    memset(g, 0, sizeof *g);
}

kedr_status dsmc_surface_reset(kedr_dsmc *sim)
{
    sim->geo.surf_steps = 0;
    if (!sim->geo.surf)
        return KEDR_OK;
    return kedr_memset(sim->ctx, sim->geo.surf, 0, sim->geo.nelem * DSMC_NSURF * sizeof(double));
}

void dsmc_fields_mask_solid(const kedr_dsmc *sim, kedr_dsmc_fields *f)
{
    double *cols[] = {f->number_density, f->density, f->ux, f->uy, f->uz, f->temperature,
                      f->temperature_rot, f->temperature_overall, f->pressure, f->mach,
                      f->particles, f->mfp_ratio};
    const int ncols = (int)(sizeof cols / sizeof cols[0]);
    for (size_t c = 0; c < sim->ncells; c++)
        if (sim->geo.gas_host[c] == 0) {
            for (int k = 0; k < ncols; k++)
                cols[k][c] = NAN;
            if (f->temperature_vib) /* a vibrating gas */
                f->temperature_vib[c] = NAN;
            for (int k = 0; k < f->nspecies; k++) /* a mixture */
                f->species_density[k][c] = f->mole_fraction[k][c] = NAN;
        }
}

kedr_status kedr_dsmc_gas_volume(const kedr_dsmc *sim, double *volume)
{
    if (!sim || !volume)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_gas_volume: %s is NULL",
                         sim ? "volume" : "sim");
    memcpy(volume, sim->geo.gas_host, sim->ncells * sizeof(double));
    return KEDR_OK;
}
