/* render: the cpu's 4-wide BVH. The binary BVH (bvh.c) or LBVH (lbvh.c) is collapsed into nodes
 * of up to four children, each time opening the inner child of largest surface area (the
 * collapse of Wald, Benthin and Boulos, "Getting rid of packets", 2008, and of Dammertz et al.,
 * "Shallow bounding volume hierarchies for fast SIMD ray tracing of incoherent rays", 2008); the
 * four children's boxes are stored by axis and tested with one SSE slab test.
 *
 * The leaves, their boxes and the slab arithmetic are the binary tree's (box_hit, lane by lane,
 * bit for bit), and the nearest hit does not depend on the order of the leaves (bvh_leaf_hd:
 * ties go to the lowest triangle index): so this traversal returns what the GPU's traversal of
 * the binary tree returns (bvh_trace_hd), which test_render_bvh_simd checks -- except for a ray
 * grazing a triangle it hits (|cos| < 1e-3): rounding can put that hit outside the triangle's
 * box, and whether a traversal finds it depends on the boxes it passes and in what order. */
#include "render/accel.h"

#include <stdlib.h>
#include <string.h>

static float node_area(const render_bvh_node *n)
{
    float x = n->hi[0] - n->lo[0], y = n->hi[1] - n->lo[1], z = n->hi[2] - n->lo[2];
    return 2 * (x * y + y * z + z * x);
}

/* Writes the 4-wide node for binary inner node `bin` (or, for a binary tree that is one leaf,
 * the leaf itself) at a->bvh4[at], and its subtrees after it; returns the next free index. */
static size_t collapse(kedr_accel *a, uint32_t bin, size_t at)
{
    const render_bvh_node *nodes = a->bvh;
    uint32_t kids[4];
    int k = 0;
    if (nodes[bin].count) {
        kids[k++] = bin;
    } else {
        kids[k++] = nodes[bin].index;
        kids[k++] = nodes[bin].index + 1;
    }
    while (k < 4) { /* open the inner child of largest area */
        int open = -1;
        float best = -1;
        for (int i = 0; i < k; i++)
            if (!nodes[kids[i]].count && node_area(&nodes[kids[i]]) > best) {
                best = node_area(&nodes[kids[i]]);
                open = i;
            }
        if (open < 0)
            break;
        uint32_t c = nodes[kids[open]].index;
        kids[open] = c;
        kids[k++] = c + 1;
    }
    render_bvh4_node *n = &a->bvh4[at];
    memset(n, 0, sizeof *n);
    size_t next = at + 1;
    for (int i = 0; i < 4; i++) {
        if (i >= k) {
            n->count[i] = BVH4_EMPTY;
            continue;
        }
        const render_bvh_node *c = &nodes[kids[i]];
        for (int ax = 0; ax < 3; ax++) {
            n->lo[ax][i] = c->lo[ax];
            n->hi[ax][i] = c->hi[ax];
        }
        if (c->count) {
            n->child[i] = c->index;
            n->count[i] = c->count;
        } else {
            n->child[i] = (uint32_t)next;
            n->count[i] = 0;
            next = collapse(a, kids[i], next);
            n = &a->bvh4[at];
        }
    }
    return next;
}

kedr_status render_bvh4_build(kedr_accel *a)
{
    if (!a->ntri || !a->nbvh)
        return KEDR_OK;
    size_t cap = a->nbvh + 1; /* at most one 4-wide node per binary inner node */
    a->bvh4 = aligned_alloc(64, cap * sizeof *a->bvh4);
    if (!a->bvh4)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the 4-wide "
                         "BVH (%zu nodes)", cap);
    a->nbvh4 = collapse(a, 0, 0);
    /* the leaves' triangles side by side, in the form their test reads */
    size_t w = a->woop ? 12 : 9;
    a->leaf_tris = malloc(a->nrefs * w * sizeof(float));
    if (!a->leaf_tris)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the leaves' "
                         "triangles (%zu)", a->nrefs);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < a->nrefs; i++) {
        float *q = a->leaf_tris + i * w;
        if (a->woop) {
            memcpy(q, a->woop + (size_t)a->refs[i] * 12, 12 * sizeof(float));
        } else {
            const float *t = a->tris + (size_t)a->refs[i] * 9;
            for (int k = 0; k < 3; k++) {
                q[k] = t[k];
                q[3 + k] = t[3 + k] - t[k];
                q[6 + k] = t[6 + k] - t[k];
            }
        }
    }
    return KEDR_OK;
}

#if defined(__SSE2__)
#include <immintrin.h>

typedef struct {
    uint32_t child, count;
    float entry;
} bvh4_item;

/* tri_moller (geom.h) on v0, e1, e2 stored: e1 and e2 are the same differences tri_moller
 * computes, so every hit is tri_moller's, bit for bit. */
static inline int moller_stored(const float *q, rvec o, rvec d, float tmin, float tmax, float *t,
                                float *u, float *v)
{
    rvec v0 = rv_load(q), e1 = rv_load(q + 3), e2 = rv_load(q + 6);
    rvec p = rv_cross(d, e2);
    float det = rv_dot(e1, p);
    if (det == 0.0f)
        return 0;
    float inv = 1.0f / det;
    rvec s = rv_sub(o, v0);
    float uu = rv_dot(s, p) * inv;
    if (!(uu >= 0.0f && uu <= 1.0f))
        return 0;
    rvec qq = rv_cross(s, e1);
    float vv = rv_dot(d, qq) * inv;
    if (!(vv >= 0.0f && uu + vv <= 1.0f))
        return 0;
    float tt = rv_dot(e2, qq) * inv;
    if (!(tt > tmin && tt < tmax))
        return 0;
    *t = tt;
    *u = uu;
    *v = vv;
    return 1;
}

/* bvh_leaf_hd (bvh_trace.h) on the leaf-ordered triangles: the same tests, the same tie rule. */
static inline int bvh4_leaf(const kedr_accel *a, uint32_t first, uint32_t count, rvec o, rvec d,
                            float tmin, kedr_hit *h, int any)
{
    int found = 0;
    for (uint32_t i = first; i < first + count; i++) {
        float t, u, v;
        uint32_t p = a->refs[i];
        float bound = h->prim >= 0 && !any ? bvh_next_up(h->t) : h->t;
        int hit = a->woop ? tri_woop(a->leaf_tris + (size_t)i * 12, o, d, tmin, bound, &t, &u, &v)
                          : moller_stored(a->leaf_tris + (size_t)i * 9, o, d, tmin, bound, &t,
                                          &u, &v);
        if (hit && (t < h->t || (t == h->t && p < (uint32_t)h->prim))) {
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

int render_bvh4_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    rvec o = rv_load(r->o), d = rv_load(r->d), inv = rv_inverse(d);
    const __m128 ox = _mm_set1_ps(o.x), oy = _mm_set1_ps(o.y), oz = _mm_set1_ps(o.z);
    const __m128 ix = _mm_set1_ps(inv.x), iy = _mm_set1_ps(inv.y), iz = _mm_set1_ps(inv.z);
    const __m128 tmin = _mm_set1_ps(r->tmin), widen = _mm_set1_ps(1.0000004f);
    const __m128i empty = _mm_set1_epi32(-1);
    bvh4_item stack[3 * RENDER_STACK + 4];
    int sp = 0, found = 0;
    uint32_t node = 0;
    for (;;) {
        /* box_hit on the four children, lane by lane, axis after axis as box_hit goes */
        const render_bvh4_node *n = &a->bvh4[node];
        __m128 t0 = tmin, t1 = _mm_set1_ps(h->t);
#define BVH4_SLAB(ax, oo, ii)                                                                  \
    {                                                                                          \
        __m128 s0 = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n->lo[ax]), oo), ii);                     \
        __m128 s1 = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n->hi[ax]), oo), ii);                     \
        t0 = _mm_max_ps(_mm_min_ps(s1, s0), t0);                                               \
        t1 = _mm_min_ps(_mm_mul_ps(_mm_max_ps(s0, s1), widen), t1);                            \
    }
        BVH4_SLAB(0, ox, ix)
        BVH4_SLAB(1, oy, iy)
        BVH4_SLAB(2, oz, iz)
#undef BVH4_SLAB
        __m128i cnt = _mm_load_si128((const __m128i *)n->count);
        int mask = _mm_movemask_ps(_mm_cmple_ps(t0, t1)) &
                   ~_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(cnt, empty)));
        if (mask) {
            float e[4];
            _mm_storeu_ps(e, t0);
            int c[4], nc = 0;
            while (mask) { /* the hit children, farthest first */
                int i = __builtin_ctz((unsigned)mask);
                mask &= mask - 1;
                int j = nc++;
                while (j > 0 && e[c[j - 1]] < e[i]) {
                    c[j] = c[j - 1];
                    j--;
                }
                c[j] = i;
            }
            for (int j = 0; j < nc - 1; j++) {
                stack[sp].child = n->child[c[j]];
                stack[sp].count = n->count[c[j]];
                stack[sp++].entry = e[c[j]];
            }
            /* the nearest: an inner node is entered at once (its entry is within h->t), a leaf
             * is tested before the stack is popped */
            uint32_t near = n->child[c[nc - 1]], cnt_near = n->count[c[nc - 1]];
            if (!cnt_near) {
                node = near;
                continue;
            }
            if (bvh4_leaf(a, near, cnt_near, o, d, r->tmin, h, any)) {
                found = 1;
                if (any)
                    return 1;
            }
        }
        /* the nearest pending child: test a leaf, descend into an inner node */
        for (;;) {
            if (!sp)
                return found;
            bvh4_item it = stack[--sp];
            if (it.entry > h->t)
                continue;
            if (!it.count) {
                node = it.child;
                break;
            }
            if (bvh4_leaf(a, it.child, it.count, o, d, r->tmin, h, any)) {
                found = 1;
                if (any)
                    return 1;
            }
        }
    }
}
#else
int render_bvh4_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    render_bvh_view b = {a->bvh, a->refs, a->tris, a->woop};
    return bvh_trace_hd(&b, rv_load(r->o), rv_load(r->d), r->tmin, h, any);
}
#endif
