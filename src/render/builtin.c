/* render: built-in meshes for scenes and benchmarks: the Utah teapot tessellated from its
 * Bezier patches, a fractal terrain of any size, and a stadium (tiers of seats around an oval
 * field) to put a small dense object in a large sparse scene. */
#include "render/scene.h"
#include "render/teapot_data.h"

#include "core/internal.h"

#include <stdlib.h>

static kedr_status add(kedr_render_scene *s, const render_xform *x, const float *a,
                       const float *b, const float *c, int mat)
{
    float p[3][3];
    render_xform_apply(x, a, p[0]);
    render_xform_apply(x, b, p[1]);
    render_xform_apply(x, c, p[2]);
    /* the patches' collapsed edges (the lid's tip, the bottom's centre) make zero-area
     * triangles by construction: dropped here, not counted as bad input */
    rvec n = rv_cross(rv_sub(rv_load(p[1]), rv_load(p[0])), rv_sub(rv_load(p[2]), rv_load(p[0])));
    if (!(rv_dot(n, n) > 0))
        return KEDR_OK;
    if (!render_mesh_add(s, p[0], p[1], p[2], mat))
        return kedr_fail(KEDR_ERR_NOMEM, "out of host memory for %zu triangles", s->mesh.n);
    return KEDR_OK;
}

static void bernstein(float t, float b[4])
{
    float u = 1 - t;
    b[0] = u * u * u;
    b[1] = 3 * u * u * t;
    b[2] = 3 * u * t * t;
    b[3] = t * t * t;
}

kedr_status render_builtin_teapot(kedr_render_scene *s, int level, const render_xform *x, int mat)
{
    int n = level + 1;
    float *grid = malloc((size_t)n * n * 3 * sizeof *grid);
    if (!grid)
        return kedr_fail(KEDR_ERR_NOMEM, "out of host memory for the teapot");
    kedr_status st = KEDR_OK;
    for (int p = 0; p < 32 && st == KEDR_OK; p++) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                float bu[4], bv[4], *out = grid + ((size_t)i * n + j) * 3;
                bernstein((float)i / level, bu);
                bernstein((float)j / level, bv);
                out[0] = out[1] = out[2] = 0;
                for (int a = 0; a < 4; a++)
                    for (int b = 0; b < 4; b++) {
                        const float *cp = teapot_points[teapot_patches[p][a * 4 + b] - 1];
                        for (int k = 0; k < 3; k++)
                            out[k] += bu[a] * bv[b] * cp[k];
                    }
            }
        for (int i = 0; i < level && st == KEDR_OK; i++)
            for (int j = 0; j < level && st == KEDR_OK; j++) {
                const float *g00 = grid + ((size_t)i * n + j) * 3, *g01 = g00 + 3,
                            *g10 = g00 + (size_t)n * 3, *g11 = g10 + 3;
                st = add(s, x, g00, g10, g11, mat);
                if (st == KEDR_OK)
                    st = add(s, x, g00, g11, g01, mat);
            }
    }
    free(grid);
    return st;
}

/* Value noise: a hashed lattice value in [0, 1) smoothly interpolated. */
static float lattice(uint64_t seed, int64_t i, int64_t j)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0xBF58476D1CE4E5B9ull ^
                 (uint64_t)j * 0x94D049BB133111EBull;
    z = (z ^ (z >> 31)) * 0xD6E8FEB86659FD93ull;
    z ^= z >> 32;
    return (float)(z >> 40) * 0x1p-24f;
}
static float noise(uint64_t seed, float x, float y)
{
    float fx = floorf(x), fy = floorf(y), tx = x - fx, ty = y - fy;
    int64_t i = (int64_t)fx, j = (int64_t)fy;
    tx = tx * tx * (3 - 2 * tx);
    ty = ty * ty * (3 - 2 * ty);
    float a = lattice(seed, i, j), b = lattice(seed, i + 1, j), c = lattice(seed, i, j + 1),
          d = lattice(seed, i + 1, j + 1);
    return (a + (b - a) * tx) + ((c + (d - c) * tx) - (a + (b - a) * tx)) * ty;
}

/* A heightfield over the unit square (y up, heights up to about 0.25): six octaves of value
 * noise, (m - 1)^2 squares of two triangles, m chosen for about `triangles` triangles. */
kedr_status render_builtin_terrain(kedr_render_scene *s, size_t triangles, uint64_t seed,
                                   const render_xform *x, int mat)
{
    size_t m = (size_t)sqrt((double)triangles / 2) + 1;
    if (m < 2)
        m = 2;
    float *h = malloc(m * m * sizeof *h);
    if (!h)
        return kedr_fail(KEDR_ERR_NOMEM, "out of host memory for a terrain of %zu^2 points", m);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++) {
            float u = (float)i / (m - 1), v = (float)j / (m - 1), amp = 0.5f, f = 4, sum = 0;
            for (int o = 0; o < 6; o++, amp *= 0.5f, f *= 2)
                sum += amp * noise(seed + o, u * f, v * f);
            h[i * m + j] = 0.25f * sum;
        }
    kedr_status st = KEDR_OK;
    for (size_t i = 0; i + 1 < m && st == KEDR_OK; i++)
        for (size_t j = 0; j + 1 < m && st == KEDR_OK; j++) {
            float u0 = (float)i / (m - 1), u1 = (float)(i + 1) / (m - 1);
            float v0 = (float)j / (m - 1), v1 = (float)(j + 1) / (m - 1);
            float a[3] = {u0, h[i * m + j], v0}, b[3] = {u1, h[(i + 1) * m + j], v0};
            float c[3] = {u1, h[(i + 1) * m + j + 1], v1}, d[3] = {u0, h[i * m + j + 1], v1};
            st = add(s, x, a, c, b, mat);
            if (st == KEDR_OK)
                st = add(s, x, a, d, c, mat);
        }
    free(h);
    return st;
}

/* A stadium around the origin (y up): 30 tiers of seats (a riser and a tread each) on an oval
 * of half-axes 60 and 40 around the field, rising to a height of 30, in `segments` segments. */
kedr_status render_builtin_stadium(kedr_render_scene *s, int segments, const render_xform *x,
                                   int mat)
{
    const int tiers = 30;
    kedr_status st = KEDR_OK;
    for (int i = 0; i < segments && st == KEDR_OK; i++) {
        double a0 = 2 * M_PI * i / segments, a1 = 2 * M_PI * (i + 1) / segments;
        for (int t = 0; t < tiers && st == KEDR_OK; t++) {
            float r0 = 1 + 0.02f * t, r1 = 1 + 0.02f * (t + 1), y0 = 1.0f * t, y1 = 1.0f * (t + 1);
            float p[6][3] = {
                {(float)(60 * r0 * cos(a0)), y0, (float)(40 * r0 * sin(a0))},
                {(float)(60 * r0 * cos(a1)), y0, (float)(40 * r0 * sin(a1))},
                {(float)(60 * r0 * cos(a0)), y1, (float)(40 * r0 * sin(a0))},
                {(float)(60 * r0 * cos(a1)), y1, (float)(40 * r0 * sin(a1))},
                {(float)(60 * r1 * cos(a0)), y1, (float)(40 * r1 * sin(a0))},
                {(float)(60 * r1 * cos(a1)), y1, (float)(40 * r1 * sin(a1))},
            };
            st = add(s, x, p[0], p[1], p[3], mat); /* riser */
            if (st == KEDR_OK)
                st = add(s, x, p[0], p[3], p[2], mat);
            if (st == KEDR_OK) /* tread */
                st = add(s, x, p[2], p[3], p[5], mat);
            if (st == KEDR_OK)
                st = add(s, x, p[2], p[5], p[4], mat);
        }
    }
    return st;
}
