/* render: the cpu's BVH traversal (bvh4.c: a 4-wide copy of the tree, four slab tests in one
 * SSE step) against the traversal of bvh_trace.h that the GPU runs on the binary tree. The
 * GPU's hits must equal the cpu's (test_render_accel, test_render_backends): both use the same
 * leaves, boxes and slab arithmetic, and a tie rule that does not depend on the order of the
 * leaves (of equal distances the lowest triangle index, as brute force finds it). So here: the
 * same distance t (its bits), u, v, triangle and answer for every ray, nearest and any-hit, both
 * triangle tests. Rays are random, through vertices, along
 * edges, axis-parallel with +0 and -0 components (infinite reciprocals), with origins on node
 * faces (0 * inf = NaN slabs), with tmin/tmax clipping, over random, coplanar (a grid of
 * squares whose edges are shared: ties), axis-aligned box and duplicated meshes. The one
 * exception: a ray grazing a triangle it hits (|cos| < 1e-3) gets a distance that rounding
 * dominates, which can lie outside the triangle's box; whether a traversal finds such a hit
 * depends on the boxes it passes and on the nearest hit so far, and the 4-wide tree passes fewer
 * boxes in another order. Those rays are counted apart (at most 1 in 1000 allowed). On rays that
 * graze nothing, both must also return brute force's hit, ties included. */
#include "test_util.h"

#include "kedr/render.h"
#include "render/accel.h"

#include <string.h>

static void rnd3(uint64_t *st, float *p, float lo, float hi)
{
    for (int k = 0; k < 3; k++)
        p[k] = lo + (hi - lo) * (float)tu_uniform(st);
}

static float *mesh(int kind, size_t n, size_t *ntri, uint64_t *st)
{
    float *v = malloc((n + 1) * 2 * 9 * sizeof(float));
    size_t m = 0;
    if (!v)
        exit(1);
    if (kind == 0) { /* random triangles of random sizes */
        for (size_t i = 0; i < n; i++, m++) {
            float *t = v + m * 9, size = i % 3 ? 0.05f : 0.3f;
            rnd3(st, t, 0, 1);
            for (int k = 0; k < 3; k++) {
                t[3 + k] = t[k] + size * (float)(tu_uniform(st) - 0.5);
                t[6 + k] = t[k] + size * (float)(tu_uniform(st) - 0.5);
            }
        }
    } else if (kind == 1) { /* squares of a grid on z = 0.5: shared edges and vertices */
        size_t g = 1;
        while ((g + 1) * (g + 1) * 2 <= n)
            g++;
        for (size_t i = 0; i < g; i++)
            for (size_t j = 0; j < g; j++) {
                float x0 = (float)i / g, x1 = (float)(i + 1) / g, y0 = (float)j / g,
                      y1 = (float)(j + 1) / g;
                float a[9] = {x0, y0, 0.5f, x1, y0, 0.5f, x1, y1, 0.5f};
                float b[9] = {x0, y0, 0.5f, x1, y1, 0.5f, x0, y1, 0.5f};
                memcpy(v + m++ * 9, a, sizeof a);
                memcpy(v + m++ * 9, b, sizeof b);
            }
    } else { /* axis-aligned triangles on the planes x, y or z = i/8, some duplicated */
        for (size_t i = 0; i < n; i++, m++) {
            float *t = v + m * 9;
            int ax = (int)(i % 3);
            float c = (float)(tu_next(st) % 9) / 8;
            for (int p = 0; p < 3; p++) {
                rnd3(st, t + 3 * p, 0, 1);
                t[3 * p + ax] = c;
            }
            if (i % 5 == 4) {
                memcpy(v + (m + 1) * 9, t, 9 * sizeof(float));
                m++, i++;
            }
        }
    }
    *ntri = m;
    return v;
}

static void make_ray(const float *v, size_t n, size_t i, uint64_t *st, kedr_ray *r)
{
    float o[3], p[3], d[3];
    rnd3(st, o, -0.5f, 1.5f);
    const float *t = v + (tu_next(st) % n) * 9;
    switch (i % 7) {
    case 0: rnd3(st, p, 0, 1); break;
    case 1: memcpy(p, t + 3 * (i % 3), 12); break; /* through a vertex */
    case 2: /* along an edge */
        for (int k = 0; k < 3; k++) {
            o[k] = t[k] - 0.5f * (t[3 + k] - t[k]);
            p[k] = t[3 + k];
        }
        break;
    case 3: /* one component zero, the origin on a vertex's coordinate (a node face) */
        rnd3(st, p, 0, 1);
        o[i % 3] = t[i % 3];
        p[i % 3] = o[i % 3];
        break;
    case 4: /* along an axis from a vertex's coordinates */
        memcpy(o, t, 12);
        memcpy(p, t, 12);
        p[i % 3] += i % 2 ? 1.0f : -1.0f;
        break;
    default: rnd3(st, p, 0, 1); break;
    }
    for (int k = 0; k < 3; k++)
        d[k] = p[k] - o[k];
    if (i % 7 == 3 || i % 7 == 4) /* zero components, half of them -0 */
        for (int k = 0; k < 3; k++)
            if (d[k] == 0)
                d[k] = i % 2 ? -0.0f : 0.0f;
    if (d[0] == 0 && d[1] == 0 && d[2] == 0)
        d[0] = 1;
    memcpy(r->o, o, 12);
    memcpy(r->d, d, 12);
    r->tmin = i % 5 == 0 ? 0.2f : 0.0f;
    r->tmax = i % 4 == 0 ? 0.8f : INFINITY;
}

/* Whether some triangle the ray hits (between tmin and tmax) is grazed by it. */
static float graze(const float *v, const kedr_ray *r, int32_t p);
static int grazes_any(const kedr_accel *a, const float *v, const kedr_ray *r)
{
    for (size_t p = 0; p < a->ntri; p++) {
        float t, u, w;
        if (accel_tri(a, (uint32_t)p, rv_load(r->o), rv_load(r->d), r->tmin, r->tmax, &t, &u,
                      &w) &&
            graze(v, r, (int32_t)p) < 1e-3f)
            return 1;
    }
    return 0;
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* |cos| between ray r and triangle p's plane (1 for no triangle, 0 for a degenerate one). */
static float graze(const float *v, const kedr_ray *r, int32_t p)
{
    if (p < 0)
        return 1;
    const float *t = v + (size_t)p * 9;
    double e1[3], e2[3], n[3], d[3] = {r->d[0], r->d[1], r->d[2]};
    for (int k = 0; k < 3; k++) {
        e1[k] = (double)t[3 + k] - t[k];
        e2[k] = (double)t[6 + k] - t[k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]),
           dd = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    return nn > 0 ? (float)fabs((n[0] * d[0] + n[1] * d[1] + n[2] * d[2]) / (nn * dd)) : 0;
}

int main(void)
{
    static const size_t sizes[] = {1, 2, 9, 33, 1000, 20011};
    uint64_t st = 17;
    size_t nray = tu_scale(12000, 3000), hits_seen = 0;
    kedr_ray *rays = malloc(nray * sizeof *rays);
    kedr_hit *hv = malloc(nray * sizeof *hv), *hb = malloc(nray * sizeof *hb);
    size_t ties = 0, grazed = 0;
    uint8_t *occ = malloc(nray);
    TU_CHECK(rays && hv && occ, "allocation");
    for (int kind = 0; kind < 3; kind++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int test = 0; test < 2; test++) {
                size_t n;
                float *v = mesh(kind, sizes[si], &n, &st);
                kedr_accel *a = NULL;
                TU_OK(kedr_accel_build(KEDR_ACCEL_BVH, (kedr_tri_test)test, v, n, &a));
                for (size_t i = 0; i < nray; i++)
                    make_ray(v, n, i, &st, &rays[i]);
                TU_OK(kedr_accel_intersect(a, rays, nray, hv));
                TU_OK(kedr_accel_occluded(a, rays, nray, occ));
                /* brute force tests the triangles in index order and keeps the first of equal
                 * distances: the BVH's tie rule gives its answer on every ray that does not
                 * graze the triangles involved (whose hits may lie outside their padded boxes) */
                kedr_accel *bf = NULL;
                TU_OK(kedr_accel_build(KEDR_ACCEL_BRUTE, (kedr_tri_test)test, v, n, &bf));
                size_t nbf = n <= 1100 ? nray : 0, badbf = 0; /* brute force on small meshes */
                TU_OK(kedr_accel_intersect(bf, rays, nbf, hb));
                for (size_t i = 0; i < nbf; i++) {
                    if (graze(v, &rays[i], hb[i].prim) < 1e-3f ||
                        graze(v, &rays[i], hv[i].prim) < 1e-3f)
                        continue;
                    badbf += hb[i].prim != hv[i].prim || !same_bits(hb[i].t, hv[i].t);
                    if (hb[i].prim >= 0) { /* a tie: another triangle hit at the same distance */
                        kedr_ray q = rays[i];
                        for (uint32_t p = 0; p < (uint32_t)n; p++) {
                            float t, u, w;
                            if (p != (uint32_t)hb[i].prim &&
                                (test ? tri_woop(bf->woop + p * 12, rv_load(q.o), rv_load(q.d),
                                                 q.tmin, q.tmax, &t, &u, &w)
                                      : tri_moller(bf->tris + p * 9, rv_load(q.o),
                                                   rv_load(q.d), q.tmin, q.tmax, &t, &u, &w)) &&
                                t == hb[i].t) {
                                ties++;
                                break;
                            }
                        }
                    }
                }
                TU_CHECK(badbf == 0, "mesh %d of %zu triangles, test %d: %zu nearest hits differ "
                         "from brute force's", kind, n, test, badbf);
                kedr_accel_destroy(bf);
                size_t bad = 0, badocc = 0, first = SIZE_MAX;
                for (size_t i = 0; i < nray; i++) {
                    kedr_hit s, sa;
                    int rs = render_bvh_trace_scalar(a, &rays[i], &s, 0);
                    int ra = render_bvh_trace_scalar(a, &rays[i], &sa, 1);
                    int ok = (rs != 0) == (hv[i].prim >= 0) && s.prim == hv[i].prim &&
                             same_bits(s.t, hv[i].t) && same_bits(s.u, hv[i].u) &&
                             same_bits(s.v, hv[i].v);
                    hits_seen += s.prim >= 0;
                    if ((!ok || (ra != 0) != (occ[i] != 0)) && grazes_any(a, v, &rays[i])) {
                        grazed++; /* a grazing hit outside its box: see the header */
                        continue;
                    }
                    if (!ok && first == SIZE_MAX) {
                        first = i;
                    }
                    bad += !ok;
                    badocc += (ra != 0) != (occ[i] != 0);
                }
                TU_CHECK(bad == 0 && badocc == 0,
                         "mesh %d of %zu triangles, test %d: %zu nearest and %zu any-hit results "
                         "differ from the scalar traversal (first: ray %zu)",
                         kind, n, test, bad, badocc, first == SIZE_MAX ? 0 : first);
                kedr_accel_destroy(a);
                free(v);
            }
    TU_CHECK(hits_seen > nray, "the rays hit something (%zu hits)", hits_seen);
    TU_CHECK(grazed * 1000 <= hits_seen, "%zu rays differ where they graze a triangle", grazed);
    TU_CHECK(ties > 100, "the rays meet ties (%zu), which decide the hit by the tie rule", ties);
    printf("%zu hits, %zu ties, %zu grazing rays differ\n", hits_seen, ties, grazed);
    free(rays);
    free(hv);
    free(hb);
    free(occ);
    return tu_finish("test_render_bvh_simd");
}
