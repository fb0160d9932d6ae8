/* render: the BVH. Built top-down by the surface area heuristic over 16 bins of triangle
 * centroids per axis (Wald, "On fast construction of SAH-based bounding volume hierarchies",
 * 2007); traversed with a stack, nearer child first.
 *
 * A node whose centroids coincide, or a node deeper than BVH_MEDIAN_DEPTH, is split into two
 * halves of its references instead: the tree never exceeds RENDER_STACK levels (halving from
 * depth 64 takes at most 32 more). */
#include "render/accel.h"

#include <stdlib.h>
#include <string.h>

#define BVH_BINS 16
#define BVH_LEAF_MAX 8
#define BVH_MEDIAN_DEPTH 64
/* SAH costs: a node visit (box test) against a triangle test. */
#define BVH_COST_NODE 1.0f
#define BVH_COST_TRI 1.0f

typedef struct {
    float lo[3], hi[3];
} box3;

static void box_empty(box3 *b)
{
    for (int k = 0; k < 3; k++) {
        b->lo[k] = INFINITY;
        b->hi[k] = -INFINITY;
    }
}
static void box_grow(box3 *b, const float *lo, const float *hi)
{
    for (int k = 0; k < 3; k++) {
        b->lo[k] = rmin(b->lo[k], lo[k]);
        b->hi[k] = rmax(b->hi[k], hi[k]);
    }
}
static float box_area(const box3 *b)
{
    float x = b->hi[0] - b->lo[0], y = b->hi[1] - b->lo[1], z = b->hi[2] - b->lo[2];
    return x < 0 ? 0 : 2 * (x * y + y * z + z * x);
}

typedef struct {
    kedr_accel *a;
    box3 *boxes;     /* per triangle */
    float *centroid; /* 3 per triangle */
    size_t used;     /* nodes written */
    int depth;
} bvh_builder;

/* Builds the node for refs[first .. first+count) at a->bvh[at]. */
static void bvh_node(bvh_builder *b, size_t at, uint32_t first, uint32_t count, int depth)
{
    kedr_accel *a = b->a;
    uint32_t *refs = a->refs + first;
    render_bvh_node *node = &a->bvh[at];
    box3 bound, cbound;
    box_empty(&bound);
    box_empty(&cbound);
    for (uint32_t i = 0; i < count; i++) {
        const float *c = b->centroid + (size_t)refs[i] * 3;
        box_grow(&bound, b->boxes[refs[i]].lo, b->boxes[refs[i]].hi);
        box_grow(&cbound, c, c);
    }
    memcpy(node->lo, bound.lo, sizeof node->lo);
    memcpy(node->hi, bound.hi, sizeof node->hi);
    if (depth > b->depth)
        b->depth = depth;
    if (count <= 2) {
        node->index = first;
        node->count = count;
        return;
    }
    /* the best binned split over the three axes */
    int best_axis = -1, best_bin = 0;
    float best_cost = INFINITY;
    for (int k = 0; k < 3 && depth < BVH_MEDIAN_DEPTH; k++) {
        float ext = cbound.hi[k] - cbound.lo[k];
        if (!(ext > 0))
            continue;
        float scale = BVH_BINS / ext;
        box3 bins[BVH_BINS];
        uint32_t n[BVH_BINS] = {0};
        for (int j = 0; j < BVH_BINS; j++)
            box_empty(&bins[j]);
        for (uint32_t i = 0; i < count; i++) {
            int j = (int)((b->centroid[(size_t)refs[i] * 3 + k] - cbound.lo[k]) * scale);
            j = j < 0 ? 0 : j >= BVH_BINS ? BVH_BINS - 1 : j;
            n[j]++;
            box_grow(&bins[j], b->boxes[refs[i]].lo, b->boxes[refs[i]].hi);
        }
        float right_area[BVH_BINS];
        uint32_t right_n[BVH_BINS];
        box3 acc;
        box_empty(&acc);
        uint32_t cnt = 0;
        for (int j = BVH_BINS - 1; j > 0; j--) {
            box_grow(&acc, bins[j].lo, bins[j].hi);
            cnt += n[j];
            right_area[j] = box_area(&acc);
            right_n[j] = cnt;
        }
        box_empty(&acc);
        cnt = 0;
        for (int j = 0; j < BVH_BINS - 1; j++) {
            box_grow(&acc, bins[j].lo, bins[j].hi);
            cnt += n[j];
            if (!cnt || !right_n[j + 1])
                continue;
            float cost = box_area(&acc) * cnt + right_area[j + 1] * right_n[j + 1];
            if (cost < best_cost) {
                best_cost = cost;
                best_axis = k;
                best_bin = j;
            }
        }
    }
    float leaf_cost = BVH_COST_TRI * count;
    float area = box_area(&bound);
    uint32_t mid;
    if (best_axis >= 0 && area > 0 &&
        BVH_COST_NODE + BVH_COST_TRI * best_cost / area >= leaf_cost && count <= BVH_LEAF_MAX) {
        node->index = first;
        node->count = count;
        return;
    }
    if (best_axis >= 0) {
        /* partition by bin */
        float scale = BVH_BINS / (cbound.hi[best_axis] - cbound.lo[best_axis]);
        uint32_t i = 0, j = count;
        while (i < j) {
            int bin = (int)((b->centroid[(size_t)refs[i] * 3 + best_axis] - cbound.lo[best_axis]) *
                            scale);
            if (bin <= best_bin) {
                i++;
            } else {
                uint32_t s = refs[i];
                refs[i] = refs[--j];
                refs[j] = s;
            }
        }
        mid = i;
    } else {
        if (count <= BVH_LEAF_MAX) {
            node->index = first;
            node->count = count;
            return;
        }
        /* coincident centroids or too deep: any halving keeps the tree correct and shallow */
        mid = count / 2;
    }
    if (mid == 0 || mid == count)
        mid = count / 2; /* bins rounding put everything on one side */
    size_t left = b->used++, right;
    bvh_node(b, left, first, mid, depth + 1);
    right = b->used++;
    node = &a->bvh[at]; /* a->bvh does not move: allocated for 2 n - 1 nodes */
    node->index = (uint32_t)right;
    node->count = 0;
    bvh_node(b, right, first + mid, count - mid, depth + 1);
}

kedr_status render_bvh_build(kedr_accel *a)
{
    size_t n = a->ntri, cap = n ? 2 * n - 1 : 1;
    bvh_builder b = {a, malloc((n ? n : 1) * sizeof(box3)), malloc((n ? n : 1) * 3 * sizeof(float)),
                     1, 0};
    a->bvh = malloc(cap * sizeof *a->bvh);
    a->refs = malloc((n ? n : 1) * sizeof *a->refs);
    if (!b.boxes || !b.centroid || !a->bvh || !a->refs) {
        free(b.boxes);
        free(b.centroid);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the BVH of %zu "
                         "triangles", n);
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        accel_tri_box(a, i, b.boxes[i].lo, b.boxes[i].hi);
        for (int k = 0; k < 3; k++)
            b.centroid[i * 3 + k] = 0.5f * (b.boxes[i].lo[k] + b.boxes[i].hi[k]);
        a->refs[i] = (uint32_t)i;
    }
    if (n) {
        bvh_node(&b, 0, 0, (uint32_t)n, 0);
    } else {
        memset(a->bvh, 0, sizeof *a->bvh);
        b.used = 1;
    }
    a->nbvh = b.used;
    a->nrefs = n;
    a->info.nodes = b.used;
    a->info.depth = b.depth;
    free(b.boxes);
    free(b.centroid);
    return KEDR_OK;
}

int render_bvh_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    render_bvh_view b = {a->bvh, a->refs, a->tris, a->woop};
    return bvh_trace_hd(&b, rv_load(r->o), rv_load(r->d), r->tmin, h, any);
}
