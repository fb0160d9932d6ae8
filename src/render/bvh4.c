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
    a->bvh4 = aligned_alloc(64, ((cap * sizeof *a->bvh4) + 63) / 64 * 64);
    if (!a->bvh4)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the 4-wide "
                         "BVH (%zu nodes)", cap);
    a->nbvh4 = collapse(a, 0, 0);
    /* the leaves' triangles side by side, in the form their test reads */
    if (a->woop) {
        a->nleaf_tris = a->nrefs * 12;
        a->leaf_tris = malloc(a->nleaf_tris * sizeof(float));
        if (!a->leaf_tris)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the "
                             "leaves' triangles (%zu)", a->nrefs);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < a->nrefs; i++)
            memcpy(a->leaf_tris + i * 12, a->woop + (size_t)a->refs[i] * 12, 12 * sizeof(float));
        return KEDR_OK;
    }
    /* Moller-Trumbore: each leaf's triangles in blocks of four, in the order of the nodes */
    size_t nblocks = 0;
    for (size_t k = 0; k < a->nbvh4; k++)
        for (int i = 0; i < 4; i++)
            if (a->bvh4[k].count[i] && a->bvh4[k].count[i] != BVH4_EMPTY)
                nblocks += (a->bvh4[k].count[i] + 3) / 4;
    a->nleaf_tris = nblocks * (sizeof(render_tri4) / sizeof(float));
    /* aligned_alloc takes a multiple of the alignment (C11) */
    size_t bytes = (nblocks ? nblocks : 1) * sizeof(render_tri4);
    render_tri4 *blocks = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!blocks)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the leaves' "
                         "triangles (%zu blocks of 4)", nblocks);
    a->leaf_tris = (float *)blocks;
    size_t at = 0;
    for (size_t k = 0; k < a->nbvh4; k++)
        for (int i = 0; i < 4; i++) {
            uint32_t c = a->bvh4[k].count[i];
            if (!c || c == BVH4_EMPTY)
                continue;
            uint32_t first = a->bvh4[k].child[i];
            a->bvh4[k].child[i] = (uint32_t)at;
            for (uint32_t j = 0; j < c; j += 4, at++) {
                render_tri4 *b = &blocks[at];
                memset(b, 0, sizeof *b);
                for (uint32_t l = 0; l < 4; l++) {
                    b->id[l] = UINT32_MAX;
                    if (j + l >= c)
                        continue;
                    uint32_t p = a->refs[first + j + l];
                    const float *t = a->tris + (size_t)p * 9;
                    b->id[l] = p;
                    for (int ax = 0; ax < 3; ax++) {
                        b->v0[ax][l] = t[ax];
                        b->e1[ax][l] = t[3 + ax] - t[ax];
                        b->e2[ax][l] = t[6 + ax] - t[ax];
                    }
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

/* tri_moller on four triangles, lane by lane in its order of operations (its products, sums
 * and the division rounded alike, so each lane's t, u and v are its, bit for bit); the lanes
 * that tri_moller would report as hits with (tmin, tmax) set in the returned mask. */
static inline int moller4(const render_tri4 *q, const __m128 o[3], const __m128 d[3], __m128 tmin,
                          __m128 tmax, __m128 *t, __m128 *u, __m128 *v)
{
#define M4(a, b) _mm_mul_ps(a, b)
    __m128 e1x = _mm_load_ps(q->e1[0]), e1y = _mm_load_ps(q->e1[1]), e1z = _mm_load_ps(q->e1[2]);
    __m128 e2x = _mm_load_ps(q->e2[0]), e2y = _mm_load_ps(q->e2[1]), e2z = _mm_load_ps(q->e2[2]);
    __m128 px = _mm_sub_ps(M4(d[1], e2z), M4(d[2], e2y));
    __m128 py = _mm_sub_ps(M4(d[2], e2x), M4(d[0], e2z));
    __m128 pz = _mm_sub_ps(M4(d[0], e2y), M4(d[1], e2x));
    __m128 det = _mm_add_ps(_mm_add_ps(M4(e1x, px), M4(e1y, py)), M4(e1z, pz));
    __m128 inv = _mm_div_ps(_mm_set1_ps(1.0f), det);
    __m128 sx = _mm_sub_ps(o[0], _mm_load_ps(q->v0[0]));
    __m128 sy = _mm_sub_ps(o[1], _mm_load_ps(q->v0[1]));
    __m128 sz = _mm_sub_ps(o[2], _mm_load_ps(q->v0[2]));
    __m128 uu = M4(_mm_add_ps(_mm_add_ps(M4(sx, px), M4(sy, py)), M4(sz, pz)), inv);
    __m128 qx = _mm_sub_ps(M4(sy, e1z), M4(sz, e1y));
    __m128 qy = _mm_sub_ps(M4(sz, e1x), M4(sx, e1z));
    __m128 qz = _mm_sub_ps(M4(sx, e1y), M4(sy, e1x));
    __m128 vv = M4(_mm_add_ps(_mm_add_ps(M4(d[0], qx), M4(d[1], qy)), M4(d[2], qz)), inv);
    __m128 tt = M4(_mm_add_ps(_mm_add_ps(M4(e2x, qx), M4(e2y, qy)), M4(e2z, qz)), inv);
#undef M4
    __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f);
    __m128 ok = _mm_cmpneq_ps(det, zero);
    ok = _mm_and_ps(ok, _mm_and_ps(_mm_cmpge_ps(uu, zero), _mm_cmple_ps(uu, one)));
    ok = _mm_and_ps(ok, _mm_and_ps(_mm_cmpge_ps(vv, zero), _mm_cmple_ps(_mm_add_ps(uu, vv), one)));
    ok = _mm_and_ps(ok, _mm_and_ps(_mm_cmpgt_ps(tt, tmin), _mm_cmplt_ps(tt, tmax)));
    *t = tt;
    *u = uu;
    *v = vv;
    return _mm_movemask_ps(ok);
}

/* bvh_leaf_hd (bvh_trace.h) on a leaf's blocks of four: the same hits, the same tie rule. */
static inline int bvh4_leaf_moller(const render_tri4 *q, uint32_t count, const __m128 o[3],
                                   const __m128 d[3], float tmin, kedr_hit *h, int any)
{
    int found = 0;
    for (uint32_t j = 0; j < count; j += 4, q++) {
        float bound = h->prim >= 0 && !any ? bvh_next_up(h->t) : h->t;
        __m128 t4, u4, v4;
        int mask = moller4(q, o, d, _mm_set1_ps(tmin), _mm_set1_ps(bound), &t4, &u4, &v4);
        if (!mask)
            continue;
        if (any)
            return 1;
        float t[4], u[4], v[4];
        _mm_storeu_ps(t, t4);
        _mm_storeu_ps(u, u4);
        _mm_storeu_ps(v, v4);
        while (mask) {
            int l = __builtin_ctz((unsigned)mask);
            mask &= mask - 1;
            uint32_t p = q->id[l];
            if (t[l] < h->t || (t[l] == h->t && p < (uint32_t)h->prim)) {
                h->t = t[l];
                h->u = u[l];
                h->v = v[l];
                h->prim = (int32_t)p;
                found = 1;
            }
        }
    }
    return found;
}

/* bvh_leaf_hd (bvh_trace.h) on the leaf-ordered Woop rows: the same tests, the same tie rule. */
static inline int bvh4_leaf_woop(const kedr_accel *a, uint32_t first, uint32_t count, rvec o, rvec d,
                            float tmin, kedr_hit *h, int any)
{
    int found = 0;
    for (uint32_t i = first; i < first + count; i++) {
        float t, u, v;
        uint32_t p = a->refs[i];
        float bound = h->prim >= 0 && !any ? bvh_next_up(h->t) : h->t;
        int hit = tri_woop(a->leaf_tris + (size_t)i * 12, o, d, tmin, bound, &t, &u, &v);
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
    const __m128 o4[3] = {ox, oy, oz};
    const __m128 d4[3] = {_mm_set1_ps(d.x), _mm_set1_ps(d.y), _mm_set1_ps(d.z)};
    const render_tri4 *tri4 = (const render_tri4 *)a->leaf_tris;
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
            if (a->woop ? bvh4_leaf_woop(a, near, cnt_near, o, d, r->tmin, h, any)
                        : bvh4_leaf_moller(tri4 + near, cnt_near, o4, d4, r->tmin, h, any)) {
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
            if (a->woop ? bvh4_leaf_woop(a, it.child, it.count, o, d, r->tmin, h, any)
                        : bvh4_leaf_moller(tri4 + it.child, it.count, o4, d4, r->tmin, h, any)) {
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
