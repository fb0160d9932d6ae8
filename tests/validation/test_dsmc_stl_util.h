/* Closed triangulated bodies made in code for the tests of the bodies of type stl: an
 * icosphere (optionally bumped into a concave body) and a cube. */
#ifndef TEST_DSMC_STL_UTIL_H
#define TEST_DSMC_STL_UTIL_H

#include "dsmc/stl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline double ts_bump(const double *u, double bump)
{
    if (bump == 0)
        return 1.0;
    double theta = acos(u[2]), phi = atan2(u[1], u[0]);
    return 1.0 + bump * sin(3 * theta) * cos(2 * phi);
}

typedef struct {
    double *v; /* 3 per point */
    size_t nv, cap;
} ts_points;

static inline size_t ts_add_point(ts_points *p, double x, double y, double z)
{
    if (p->nv == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->v = realloc(p->v, p->cap * 3 * sizeof(double));
    }
    double l = sqrt(x * x + y * y + z * z);
    p->v[3 * p->nv] = x / l;
    p->v[3 * p->nv + 1] = y / l;
    p->v[3 * p->nv + 2] = z / l;
    return p->nv++;
}

/* The midpoint of a and b on the unit sphere, made once per edge (a small table of pairs). */
static inline size_t ts_midpoint(ts_points *p, size_t *keys, size_t *vals, size_t *n, size_t a, size_t b)
{
    size_t lo = a < b ? a : b, hi = a < b ? b : a;
    for (size_t i = 0; i < *n; i++)
        if (keys[2 * i] == lo && keys[2 * i + 1] == hi)
            return vals[i];
    const double *pa = p->v + 3 * a, *pb = p->v + 3 * b;
    size_t m = ts_add_point(p, 0.5 * (pa[0] + pb[0]), 0.5 * (pa[1] + pb[1]), 0.5 * (pa[2] + pb[2]));
    keys[2 * *n] = lo;
    keys[2 * *n + 1] = hi;
    vals[(*n)++] = m;
    return m;
}

/* An icosahedron split `levels` times, its points on the sphere of radius r about c; triangles
 * counter-clockwise seen from outside. bump > 0: each point's radius times
 * 1 + bump sin(3 theta) cos(2 phi) (theta from +z, phi about z), a concave body. */
static inline dsmc_stl_mesh ts_icosphere(int levels, double r, const double *c, double bump)
{
    ts_points p = {0};
    const double g = (1 + sqrt(5.0)) / 2;
    const double base[12][3] = {{-1, g, 0}, {1, g, 0}, {-1, -g, 0}, {1, -g, 0},
                                {0, -1, g}, {0, 1, g}, {0, -1, -g}, {0, 1, -g},
                                {g, 0, -1}, {g, 0, 1}, {-g, 0, -1}, {-g, 0, 1}};
    for (int i = 0; i < 12; i++)
        ts_add_point(&p, base[i][0], base[i][1], base[i][2]);
    static const int faces[20][3] = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11},
                                     {1, 5, 9}, {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                     {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8}, {3, 8, 9},
                                     {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
    size_t nt = 20, *tri = malloc(nt * 3 * sizeof *tri);
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            tri[3 * t + k] = (size_t)faces[t][k];
    for (int l = 0; l < levels; l++) {
        size_t *next = malloc(nt * 4 * 3 * sizeof *next), n = 0;
        size_t *keys = malloc(nt * 3 * 2 * sizeof *keys), *vals = malloc(nt * 3 * sizeof *vals);
        for (size_t t = 0; t < nt; t++) {
            size_t a = tri[3 * t], b = tri[3 * t + 1], cc = tri[3 * t + 2];
            size_t ab = ts_midpoint(&p, keys, vals, &n, a, b);
            size_t bc = ts_midpoint(&p, keys, vals, &n, b, cc);
            size_t ca = ts_midpoint(&p, keys, vals, &n, cc, a);
            size_t q[12] = {a, ab, ca, b, bc, ab, cc, ca, bc, ab, bc, ca};
            memcpy(next + 12 * t, q, sizeof q);
        }
        free(keys);
        free(vals);
        free(tri);
        tri = next;
        nt *= 4;
    }
    dsmc_stl_mesh m = {nt, malloc(nt * 9 * sizeof(double))};
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            for (int d = 0; d < 3; d++)
                m.v[9 * t + 3 * k + d] = c[d] + r * p.v[3 * tri[3 * t + k] + d] *
                                         ts_bump(p.v + 3 * tri[3 * t + k], bump);
    free(tri);
    free(p.v);
    return m;
}

/* An axis-aligned cube of side a about c: two triangles a face. */
static inline dsmc_stl_mesh ts_cube(double a, const double *c)
{
    static const int quad[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                   {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    dsmc_stl_mesh m = {12, malloc(12 * 9 * sizeof(double))};
    for (int f = 0; f < 6; f++)
        for (int h = 0; h < 2; h++) {
            int idx[3] = {quad[f][0], quad[f][1 + h], quad[f][2 + h]};
            for (int k = 0; k < 3; k++)
                for (int d = 0; d < 3; d++)
                    m.v[9 * (2 * f + h) + 3 * k + d] = c[d] + a * (((idx[k] >> d) & 1) - 0.5);
        }
    return m;
}

#endif
