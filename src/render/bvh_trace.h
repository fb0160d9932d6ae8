/* render: BVH traversal over plain arrays, compiled for the cpu (bvh.c) and the GPU (render.cu)
 * from this one text, so that both back ends visit the same nodes in the same order and return
 * the same hit. A stack of node indices with their entry distances; the nearer child first. */
#ifndef RENDER_BVH_TRACE_H
#define RENDER_BVH_TRACE_H

#include "kedr/render.h"
#include "render/geom.h"

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
            for (uint32_t i = 0; i < nd->count; i++) {
                float t, u, v;
                uint32_t p = b->refs[nd->index + i];
                if (bvh_tri(b, p, o, d, tmin, h->t, &t, &u, &v)) {
                    h->t = t;
                    h->u = u;
                    h->v = v;
                    h->prim = (int32_t)p;
                    found = 1;
                    if (any)
                        return 1;
                }
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
