/* render: a check of a built binary BVH or LBVH (the host's copy of the tree; for a tree built
 * on a GPU, the copy downloaded from it), for the tests: every node reached from the root once,
 * every triangle in exactly one leaf, every box containing its children's boxes (a leaf's: its
 * triangles' padded boxes), and no path deeper than the traversal's stack. */
#include "render/accel.h"

#include <stdlib.h>
#include <string.h>

#define FN "render_bvh_check"

static int box_contains(const float *lo, const float *hi, const float *clo, const float *chi)
{
    for (int k = 0; k < 3; k++)
        if (!(lo[k] <= clo[k] && chi[k] <= hi[k]))
            return 0;
    return 1;
}

static int box_valid(const render_bvh_node *b)
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(b->lo[k]) || !isfinite(b->hi[k]) || !(b->lo[k] <= b->hi[k]))
            return 0;
    return 1;
}

static kedr_status check_tree(const kedr_accel *a, uint8_t *seen_node, uint8_t *seen_ref,
                              uint8_t *seen_tri)
{
    typedef struct {
        uint32_t node;
        int depth;
    } item;
    item stack[RENDER_STACK + 2];
    int sp = 0;
    size_t reached = 0;
    const render_bvh_node *nodes = a->bvh;
    stack[sp++] = (item){0, 0};
    seen_node[0] = 1;
    while (sp) {
        item it = stack[--sp];
        const render_bvh_node *nd = &nodes[it.node];
        reached++;
        if (!box_valid(nd))
            return kedr_fail(KEDR_ERR_INVALID, "%s: node %u: box (%g %g %g) .. (%g %g %g) is not "
                             "a finite box", FN, it.node, nd->lo[0], nd->lo[1], nd->lo[2],
                             nd->hi[0], nd->hi[1], nd->hi[2]);
        if (nd->count) {
            if ((size_t)nd->index + nd->count > a->nrefs)
                return kedr_fail(KEDR_ERR_INVALID, "%s: leaf %u: references %u .. %u past the "
                                 "%zu there are", FN, it.node, nd->index,
                                 nd->index + nd->count - 1, a->nrefs);
            for (uint32_t i = nd->index; i < nd->index + nd->count; i++) {
                uint32_t p = a->refs[i];
                if (seen_ref[i]++)
                    return kedr_fail(KEDR_ERR_INVALID, "%s: reference %u is in two leaves "
                                     "(the second: node %u)", FN, i, it.node);
                if (p >= a->ntri)
                    return kedr_fail(KEDR_ERR_INVALID, "%s: leaf %u names triangle %u of %zu",
                                     FN, it.node, p, a->ntri);
                if (seen_tri[p]++)
                    return kedr_fail(KEDR_ERR_INVALID, "%s: triangle %u is in two leaves (the "
                                     "second: node %u)", FN, p, it.node);
                float lo[3], hi[3];
                accel_tri_box(a, p, lo, hi);
                if (!box_contains(nd->lo, nd->hi, lo, hi))
                    return kedr_fail(KEDR_ERR_INVALID, "%s: leaf %u's box does not contain its "
                                     "triangle %u's", FN, it.node, p);
            }
            continue;
        }
        uint32_t l = nd->index;
        if (l == 0 || (size_t)l + 1 >= a->nbvh)
            return kedr_fail(KEDR_ERR_INVALID, "%s: node %u: children %u, %u outside 1 .. %zu",
                             FN, it.node, l, l + 1, a->nbvh - 1);
        if (it.depth + 1 >= RENDER_STACK)
            return kedr_fail(KEDR_ERR_INVALID, "%s: node %u at depth %d: the traversal's stack "
                             "holds %d levels", FN, it.node, it.depth + 1, RENDER_STACK);
        for (uint32_t c = l; c <= l + 1; c++) {
            if (seen_node[c]++)
                return kedr_fail(KEDR_ERR_INVALID, "%s: node %u is the child of two nodes (the "
                                 "second: %u)", FN, c, it.node);
            if (!box_contains(nd->lo, nd->hi, nodes[c].lo, nodes[c].hi))
                return kedr_fail(KEDR_ERR_INVALID, "%s: node %u's box does not contain its "
                                 "child %u's", FN, it.node, c);
            stack[sp++] = (item){c, it.depth + 1};
        }
    }
    for (size_t i = 0; i < a->nrefs; i++)
        if (!seen_ref[i])
            return kedr_fail(KEDR_ERR_INVALID, "%s: reference %zu is in no leaf", FN, i);
    for (size_t p = 0; p < a->ntri; p++)
        if (!seen_tri[p])
            return kedr_fail(KEDR_ERR_INVALID, "%s: triangle %zu is in no leaf", FN, p);
    /* the BVH uses every node but node 1, left empty for alignment; the LBVH has 2n - 1 slots,
     * of which the subtrees collapsed into leaves are not reached */
    if (a->kind == KEDR_ACCEL_BVH ? reached != a->nbvh - 1 : a->nbvh != 2 * a->ntri - 1)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu nodes reached from the root of %zu", FN,
                         reached, a->nbvh);
    return KEDR_OK;
}

kedr_status render_bvh_check(const kedr_accel *a)
{
    if (!a || (a->kind != KEDR_ACCEL_BVH && a->kind != KEDR_ACCEL_LBVH))
        return kedr_fail(KEDR_ERR_INVALID, "%s: not a BVH or an LBVH", FN);
    KEDR_TRY(render_accel_host(a));
    if (!a->ntri)
        return KEDR_OK;
    if (!a->bvh || !a->refs || !a->nbvh || a->nrefs != a->ntri)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu nodes and %zu references for %zu triangles",
                         FN, a->nbvh, a->nrefs, a->ntri);
    uint8_t *seen_node = calloc(a->nbvh, 1), *seen_ref = calloc(a->nrefs, 1),
            *seen_tri = calloc(a->ntri, 1);
    kedr_status s = seen_node && seen_ref && seen_tri
                        ? check_tree(a, seen_node, seen_ref, seen_tri)
                        : kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", FN);
    free(seen_node), free(seen_ref), free(seen_tri);
    return s;
}
