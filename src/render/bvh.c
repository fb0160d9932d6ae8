/* render: the BVH. Built top-down by the surface area heuristic over 16 bins of triangle
 * centroids per axis (Wald, "On fast construction of SAH-based bounding volume hierarchies",
 * 2007), subtrees of many triangles as parallel tasks; traversed with a stack, nearer child
 * first (bvh_trace.h). The two children of a node are stored side by side.
 *
 * A node whose centroids coincide, or a node deeper than BVH_MEDIAN_DEPTH, is split into two
 * halves of its references instead: the tree never exceeds RENDER_STACK levels (halving from
 * depth 64 takes at most 32 more). */
#include "render/accel.h"

#include <stdlib.h>
#include <string.h>

#define BVH_BINS 16
#define BVH_LEAF_MAX 8
/* Nodes of this many references or fewer are leaves without asking the SAH. */
#define BVH_LEAF_MIN 4
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

/* A triangle reference as the builder moves it: its box, centroid and index, kept together and
 * partitioned in place, so that every pass over a node reads memory in order. */
typedef struct {
    box3 box;
    float c[3];
    uint32_t id;
} bvh_item;

typedef struct {
    kedr_accel *a;
    bvh_item *items;
    size_t used; /* nodes written (taken atomically: subtrees are built as parallel tasks) */
    int depth;
} bvh_builder;

/* Subtrees of more references than this are built as their own tasks. */
#define BVH_TASK_MIN 4096

static void make_leaf(render_bvh_node *node, uint32_t first, uint32_t count)
{
    node->index = first;
    node->count = count;
}

/* Builds the node for items[first .. first+count) at a->bvh[at]. */
static void bvh_node(bvh_builder *b, size_t at, uint32_t first, uint32_t count, int depth)
{
    kedr_accel *a = b->a;
    bvh_item *it = b->items + first;
    render_bvh_node *node = &a->bvh[at];
    box3 bound, cbound;
    box_empty(&bound);
    box_empty(&cbound);
    for (uint32_t i = 0; i < count; i++) {
        box_grow(&bound, it[i].box.lo, it[i].box.hi);
        box_grow(&cbound, it[i].c, it[i].c);
    }
    memcpy(node->lo, bound.lo, sizeof node->lo);
    memcpy(node->hi, bound.hi, sizeof node->hi);
    if (depth > b->depth) {
#pragma omp critical(render_bvh_depth)
        if (depth > b->depth)
            b->depth = depth;
    }
    if (count <= BVH_LEAF_MIN) {
        make_leaf(node, first, count);
        return;
    }
    /* one pass bins every reference on the three axes; then the best of the 3 x 15 planes */
    box3 bins[3][BVH_BINS];
    uint32_t n[3][BVH_BINS] = {{0}};
    float scale[3];
    for (int k = 0; k < 3; k++) {
        float ext = cbound.hi[k] - cbound.lo[k];
        scale[k] = ext > 0 ? BVH_BINS / ext : 0;
        for (int j = 0; j < BVH_BINS; j++)
            box_empty(&bins[k][j]);
    }
    if (depth < BVH_MEDIAN_DEPTH)
        for (uint32_t i = 0; i < count; i++)
            for (int k = 0; k < 3; k++) {
                int j = (int)((it[i].c[k] - cbound.lo[k]) * scale[k]);
                j = j < 0 ? 0 : j >= BVH_BINS ? BVH_BINS - 1 : j;
                n[k][j]++;
                box_grow(&bins[k][j], it[i].box.lo, it[i].box.hi);
            }
    int best_axis = -1, best_bin = 0;
    float best_cost = INFINITY;
    for (int k = 0; k < 3 && depth < BVH_MEDIAN_DEPTH; k++) {
        if (!(scale[k] > 0))
            continue;
        float right_area[BVH_BINS];
        uint32_t right_n[BVH_BINS];
        box3 acc;
        box_empty(&acc);
        uint32_t cnt = 0;
        for (int j = BVH_BINS - 1; j > 0; j--) {
            box_grow(&acc, bins[k][j].lo, bins[k][j].hi);
            cnt += n[k][j];
            right_area[j] = box_area(&acc);
            right_n[j] = cnt;
        }
        box_empty(&acc);
        cnt = 0;
        for (int j = 0; j < BVH_BINS - 1; j++) {
            box_grow(&acc, bins[k][j].lo, bins[k][j].hi);
            cnt += n[k][j];
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
    float area = box_area(&bound);
    if (count <= BVH_LEAF_MAX &&
        (best_axis < 0 ||
         (area > 0 && BVH_COST_NODE + BVH_COST_TRI * best_cost / area >= BVH_COST_TRI * count))) {
        make_leaf(node, first, count);
        return;
    }
    uint32_t mid = count / 2; /* coincident centroids or too deep: any halving is correct */
    if (best_axis >= 0) {
        int k = best_axis;
        uint32_t i = 0, j = count;
        while (i < j) {
            int bin = (int)((it[i].c[k] - cbound.lo[k]) * scale[k]);
            if (bin <= best_bin) {
                i++;
            } else {
                bvh_item t = it[i];
                it[i] = it[--j];
                it[j] = t;
            }
        }
        mid = i > 0 && i < count ? i : count / 2;
    }
    size_t left;
#pragma omp atomic capture
    {
        left = b->used;
        b->used += 2;
    }
    node->index = (uint32_t)left;
    node->count = 0;
    if (count >= BVH_TASK_MIN) {
#pragma omp task firstprivate(b, left, first, mid, depth)
        bvh_node(b, left, first, mid, depth + 1);
#pragma omp task firstprivate(b, left, first, mid, count, depth)
        bvh_node(b, left + 1, first + mid, count - mid, depth + 1);
    } else {
        bvh_node(b, left, first, mid, depth + 1);
        bvh_node(b, left + 1, first + mid, count - mid, depth + 1);
    }
}

kedr_status render_bvh_build(kedr_accel *a)
{
    /* node 1 is left empty, so that every pair of children starts at an even index: with the
     * array on a 64-byte boundary, the two boxes a traversal step tests share one cache line */
    size_t n = a->ntri, cap = n ? 2 * n : 2;
    bvh_builder b = {a, malloc((n ? n : 1) * sizeof(bvh_item)), 2, 0};
    a->bvh = aligned_alloc(64, ((cap * sizeof *a->bvh) + 63) / 64 * 64);
    a->refs = malloc((n ? n : 1) * sizeof *a->refs);
    if (!b.items || !a->bvh || !a->refs) {
        free(b.items);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the BVH of %zu "
                         "triangles", n);
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        bvh_item *t = &b.items[i];
        accel_tri_box(a, i, t->box.lo, t->box.hi);
        for (int k = 0; k < 3; k++)
            t->c[k] = 0.5f * (t->box.lo[k] + t->box.hi[k]);
        t->id = (uint32_t)i;
    }
    memset(&a->bvh[1], 0, sizeof *a->bvh);
    if (n) {
#pragma omp parallel
#pragma omp single
        bvh_node(&b, 0, 0, (uint32_t)n, 0);
    } else {
        memset(a->bvh, 0, sizeof *a->bvh);
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        a->refs[i] = b.items[i].id;
    a->nbvh = b.used;
    a->nrefs = n;
    a->info.nodes = b.used;
    a->info.depth = b.depth;
    free(b.items);
    return KEDR_OK;
}

int render_bvh_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    if (a->bvh4)
        return render_bvh4_trace(a, r, h, any);
    render_bvh_view b = {a->bvh, a->refs, a->tris, a->woop};
    return bvh_trace_hd(&b, rv_load(r->o), rv_load(r->d), r->tmin, h, any);
}

int render_bvh_trace_scalar(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    h->t = r->tmax;
    h->u = h->v = 0;
    h->prim = -1;
    if (!a->ntri)
        return 0;
    render_bvh_view b = {a->bvh, a->refs, a->tris, a->woop};
    return bvh_trace_hd(&b, rv_load(r->o), rv_load(r->d), r->tmin, h, any);
}
