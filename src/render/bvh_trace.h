/* render: BVH traversal over plain arrays, compiled for the cpu (bvh.c) and the GPU (render.cu)
 * from this one text, so that both back ends visit the same nodes in the same order and return
 * the same hit. A stack of node indices with their entry distances; the nearer child first. */
#ifndef RENDER_BVH_TRACE_H
#define RENDER_BVH_TRACE_H

#include "kedr/render.h"
#include "render/geom.h"

#include <string.h>

/* BVH node (32 bytes): an inner node's children are at `index` and `index + 1`; a leaf
 * (count > 0) holds refs[index .. index + count). */
typedef struct {
    float lo[3], hi[3];
    uint32_t index, count;
} render_bvh_node;

/* The deepest traversal stack: builders keep their trees shallower than this. */
#define RENDER_STACK 128

typedef struct {
    const render_bvh_node *nodes;
    const uint32_t *refs;
    const float *tris; /* 9 floats per triangle */
    const float *woop; /* 12 floats per triangle, or NULL for Moller-Trumbore */
} render_bvh_view;

RENDER_HD int bvh_tri(const render_bvh_view *b, uint32_t p, rvec o, rvec d, float tmin,
                      float tmax, float *t, float *u, float *v)
{
    if (b->woop)
        return tri_woop(b->woop + (size_t)p * 12, o, d, tmin, tmax, t, u, v);
    return tri_moller(b->tris + (size_t)p * 9, o, d, tmin, tmax, t, u, v);
}

/* The next float above x (x finite): the bound under which a triangle test also returns hits at
 * exactly distance x. */
RENDER_HD float bvh_next_up(float x)
{
    uint32_t u;
#ifdef __CUDA_ARCH__
    u = __float_as_uint(x);
#else
    memcpy(&u, &x, sizeof u);
#endif
    if (x == 0.0f)
        u = 1; /* +0 and -0: the smallest positive float */
    else
        u += x > 0.0f ? 1 : (uint32_t)-1;
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* The leaf test of the nearest-hit search: a hit closer than h's, or at the same distance on a
 * triangle of lower index, replaces it. So the hit returned does not depend on the order in
 * which the leaves are visited: it is the nearest, and of several triangles at exactly that
 * distance (a ray through a shared edge or vertex, coincident triangles) the one of lowest index
 * -- brute force's answer, and the same on the cpu's 4-wide tree (bvh4.c) as on this binary one.
 * With any = 1 the first hit ends the search and returns 1. */
RENDER_HD int bvh_leaf_hd(const render_bvh_view *b, uint32_t first, uint32_t count, rvec o,
                          rvec d, float tmin, kedr_hit *h, int any)
{
    int found = 0;
    for (uint32_t i = 0; i < count; i++) {
        float t, u, v;
        uint32_t p = b->refs[first + i];
        float bound = h->prim >= 0 && !any ? bvh_next_up(h->t) : h->t;
        if (bvh_tri(b, p, o, d, tmin, bound, &t, &u, &v) &&
            (t < h->t || (t == h->t && p < (uint32_t)h->prim))) {
            h->t = t;
            h->u = u;
            h->v = v;
            h->prim = (int32_t)p;
            found = 1;
            if (any)
                return 1;
        }
    }
    return found;
}

/* h->t holds tmax on entry; the nearest hit narrows it (any = 1: the first hit ends the search). */
RENDER_HD int bvh_trace_hd(const render_bvh_view *b, rvec o, rvec d, float tmin, kedr_hit *h,
                           int any)
{
    rvec inv = rv_inverse(d);
    uint32_t stack[RENDER_STACK];
    float entry[RENDER_STACK];
    int sp = 0, found = 0;
    uint32_t node = 0;
    float t0, t1;
    if (!box_hit(b->nodes[0].lo, b->nodes[0].hi, o, inv, tmin, h->t, &t0, &t1))
        return 0;
    for (;;) {
        const render_bvh_node *nd = &b->nodes[node];
        if (nd->count) {
            if (bvh_leaf_hd(b, nd->index, nd->count, o, d, tmin, h, any)) {
                found = 1;
                if (any)
                    return 1;
            }
        } else {
            uint32_t l = nd->index, r = l + 1;
            float ln, lf, rn, rf;
            int hl = box_hit(b->nodes[l].lo, b->nodes[l].hi, o, inv, tmin, h->t, &ln, &lf);
            int hr = box_hit(b->nodes[r].lo, b->nodes[r].hi, o, inv, tmin, h->t, &rn, &rf);
            if (hl && hr) {
                if (rn < ln) {
                    uint32_t s = l;
                    l = r;
                    r = s;
                    rn = ln;
                }
                entry[sp] = rn;
                stack[sp++] = r;
                node = l;
                continue;
            }
            if (hl || hr) {
                node = hl ? l : r;
                continue;
            }
        }
        do {
            if (!sp)
                return found;
            node = stack[--sp];
        } while (entry[sp] > h->t);
    }
}

#endif
