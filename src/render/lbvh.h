/* render: the LBVH (Karras, "Maximizing parallelism in the construction of BVHs, octrees, and
 * k-d trees", HPG 2012), compiled for the cpu (lbvh.c) and the GPU (render.cu) from this one
 * text. Triangles are sorted by the Morton code of their box centres (then by index, so that
 * all keys differ); every internal node of the binary radix tree over
 * the sorted keys is then found on its own (lbvh_internal), and boxes are merged bottom-up, the
 * second child to arrive at a node computing its box (lbvh_climb). The tree is stored as
 * render_bvh_node pairs: internal node k keeps its two children at slots 2k + 1 and 2k + 2, the
 * root at slot 0; the radix tree's leaves hold one triangle each, and subtrees of up to
 * LBVH_LEAF_MAX triangles are collapsed into one leaf where the SAH prefers it (lbvh_climb).
 *
 * The sort key of a triangle is its Morton code and then its index; the keys are sorted as
 * (code, index) pairs (kedr_sort_pairs of the codes, stable, the indices in order as values),
 * which puts them in the order of the numbers code * 2^32 + index without sorting the index
 * bits. */
#ifndef RENDER_LBVH_H
#define RENDER_LBVH_H

#include "render/bvh_trace.h"

/* The box a triangle is filed under (accel_tri_box): widened by RENDER_PAD of its own size
 * and `pad`. */
#define RENDER_PAD 1e-4f
RENDER_HD void tri_box_padded(const float *t, float pad, float lo[3], float hi[3])
{
    float ext = 0;
    for (int k = 0; k < 3; k++) {
        lo[k] = rmin(t[k], rmin(t[3 + k], t[6 + k]));
        hi[k] = rmax(t[k], rmax(t[3 + k], t[6 + k]));
        ext = rmax(ext, hi[k] - lo[k]);
    }
    pad += RENDER_PAD * ext;
    for (int k = 0; k < 3; k++) {
        lo[k] -= pad;
        hi[k] += pad;
    }
}

/* 10 bits spread to every third bit. */
RENDER_HD uint32_t lbvh_spread(uint32_t v)
{
    v = (v * 0x00010001u) & 0xFF0000FFu;
    v = (v * 0x00000101u) & 0x0F00F00Fu;
    v = (v * 0x00000011u) & 0xC30C30C3u;
    v = (v * 0x00000005u) & 0x49249249u;
    return v;
}

/* The scene's padding (accel.c, and the GPU's build in render.cu): ext, the widest extent seen
 * so far, grows by the box lo .. hi; the pad is 10^-5 of it. */
RENDER_HD float lbvh_pad_update(float *ext, const float lo[3], const float hi[3])
{
    for (int k = 0; k < 3; k++)
        *ext = rmax(*ext, hi[k] - lo[k]);
    return 0.1f * RENDER_PAD * *ext;
}

/* The frame the Morton codes quantise: the scene box lo .. hi as lo and 1 / extent. */
RENDER_HD void lbvh_frame(const float lo[3], const float hi[3], float flo[3], float inv_ext[3])
{
    for (int k = 0; k < 3; k++) {
        float e = hi[k] - lo[k];
        flo[k] = lo[k];
        inv_ext[k] = e > 0 ? 1 / e : 0;
    }
}

/* The Morton codes: 63 bits (21 a coordinate) by default, or 30 (10 a coordinate) when built
 * with LBVH_BITS=30. With 30 bits a scene of 10^7 triangles has several in many cells of the
 * 1024^3 grid, which the tree then splits by index, not by place. */
#ifndef LBVH_BITS
#define LBVH_BITS 63
#endif
#if LBVH_BITS == 63
typedef uint64_t lbvh_code_t;
#define LBVH_AXIS_BITS 21
#define LBVH_CODE_DTYPE KEDR_U64
#elif LBVH_BITS == 30
typedef uint32_t lbvh_code_t;
#define LBVH_AXIS_BITS 10
#define LBVH_CODE_DTYPE KEDR_U32
#else
#error "LBVH_BITS: 30 or 63"
#endif

/* 21 bits spread to every third bit. */
RENDER_HD uint64_t lbvh_spread21(uint64_t v)
{
    v &= 0x1FFFFFu;
    v = (v | v << 32) & 0x001F00000000FFFFull;
    v = (v | v << 16) & 0x001F0000FF0000FFull;
    v = (v | v << 8) & 0x100F00F00F00F00Full;
    v = (v | v << 4) & 0x10C30C30C30C30C3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}

/* The Morton code of triangle i's box centre in the scene box. Its sort key is this code and
 * then i: the keys are sorted as (code, index) pairs by a stable radix sort of the codes with
 * the indices as values, and compared as one number (code, then index) by lbvh_delta. */
RENDER_HD lbvh_code_t lbvh_code(const float *tris, uint32_t i, float pad, const float *lo,
                                const float *inv_ext)
{
    const uint32_t top = (1u << LBVH_AXIS_BITS) - 1;
    float blo[3], bhi[3];
    uint32_t q[3];
    tri_box_padded(tris + (size_t)i * 9, pad, blo, bhi);
    for (int k = 0; k < 3; k++) {
        float c = (0.5f * (blo[k] + bhi[k]) - lo[k]) * inv_ext[k] * (float)(1u << LBVH_AXIS_BITS);
        q[k] = c <= 0 ? 0u : c >= (float)top ? top : (uint32_t)c;
    }
#if LBVH_BITS == 63
    return lbvh_spread21(q[0]) << 2 | lbvh_spread21(q[1]) << 1 | lbvh_spread21(q[2]);
#else
    return lbvh_spread(q[0]) << 2 | lbvh_spread(q[1]) << 1 | lbvh_spread(q[2]);
#endif
}

RENDER_HD int lbvh_clz32(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return __clz((int)x);
#else
    return x ? __builtin_clz(x) : 32;
#endif
}

RENDER_HD int lbvh_clz_code(lbvh_code_t x)
{
#if LBVH_BITS == 63
#ifdef __CUDA_ARCH__
    return __clzll((long long)x);
#else
    return x ? __builtin_clzll(x) : 64;
#endif
#else
    return lbvh_clz32(x);
#endif
}

/* The length of the common prefix of the keys at sorted positions i and j, a key being the
 * code word then the 32-bit triangle index (all keys differ); -1 for j outside 0 .. n-1. */
RENDER_HD int lbvh_delta(const lbvh_code_t *codes, const uint32_t *ids, int64_t n, int64_t i,
                         int64_t j)
{
    if (j < 0 || j >= n)
        return -1;
    lbvh_code_t x = codes[i] ^ codes[j];
    return x ? lbvh_clz_code(x) : (int)sizeof(lbvh_code_t) * 8 + lbvh_clz32(ids[i] ^ ids[j]);
}

/* Internal node i of n - 1 (n >= 2): its children, each an internal node or a leaf (a position
 * in the sorted order), its parent links (Karras 2012, figure 4) and its span, the sorted
 * positions span[2i] .. span[2i] + span[2i+1] - 1 its subtree covers. codes and ids: the sorted
 * keys. */
RENDER_HD void lbvh_internal(const lbvh_code_t *codes, const uint32_t *ids, int64_t n, int64_t i,
                             render_bvh_node *slots, uint32_t *parent_leaf, uint32_t *parent_node,
                             uint32_t *span)
{
    int d = lbvh_delta(codes, ids, n, i, i + 1) > lbvh_delta(codes, ids, n, i, i - 1) ? 1 : -1;
    int dmin = lbvh_delta(codes, ids, n, i, i - d);
    int64_t lmax = 2;
    while (lbvh_delta(codes, ids, n, i, i + lmax * d) > dmin)
        lmax *= 2;
    int64_t l = 0;
    for (int64_t t = lmax / 2; t >= 1; t /= 2)
        if (lbvh_delta(codes, ids, n, i, i + (l + t) * d) > dmin)
            l += t;
    int64_t j = i + l * d;
    int dnode = lbvh_delta(codes, ids, n, i, j);
    int64_t s = 0;
    for (int64_t div = 2;; div *= 2) {
        int64_t t = (l + div - 1) / div;
        if (lbvh_delta(codes, ids, n, i, i + (s + t) * d) > dnode)
            s += t;
        if (t <= 1)
            break;
    }
    int64_t gamma = i + s * d + (d < 0 ? -1 : 0);
    if (i == 0) { /* the root lives in slot 0 */
        slots[0].index = 1;
        slots[0].count = 0;
        parent_node[0] = 0;
    }
    int64_t first = i < j ? i : j, last = i < j ? j : i;
    span[2 * i] = (uint32_t)first;
    span[2 * i + 1] = (uint32_t)(last - first + 1);
    for (int c = 0; c < 2; c++) {
        int64_t child = gamma + c;
        render_bvh_node *slot = &slots[2 * i + 1 + c];
        int leaf = c == 0 ? child == first : child == last;
        slot->index = leaf ? (uint32_t)child : (uint32_t)(2 * child + 1);
        slot->count = leaf ? 1 : 0;
        /* a parent link names the slot the child lives in */
        if (leaf)
            parent_leaf[child] = (uint32_t)(2 * i + 1 + c);
        else
            parent_node[child] = (uint32_t)(2 * i + 1 + c);
    }
}

RENDER_HD unsigned lbvh_arrive(unsigned *flag)
{
#ifdef __CUDA_ARCH__
    __threadfence();
    return atomicAdd(flag, 1u);
#else
    return __atomic_fetch_add(flag, 1u, __ATOMIC_ACQ_REL);
#endif
}

/* A float as an unsigned word of the same order (-0 below +0; NaNs outside the floats), for the
 * GPU's scene box by atomicMin and atomicMax; lbvh_ordered_float undoes it. */
RENDER_HD uint32_t lbvh_ordered_word(float f)
{
    uint32_t u;
#ifdef __CUDA_ARCH__
    u = __float_as_uint(f);
#else
    memcpy(&u, &f, sizeof u);
#endif
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

RENDER_HD float lbvh_ordered_float(uint32_t w)
{
    uint32_t u = w & 0x80000000u ? w & 0x7FFFFFFFu : ~w;
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* The scene box of each of accel.c's two passes as ordered words, as the GPU reduces it: the
 * lo words start at 0xFFFFFFFF (above every float), the hi words at 0 (below every float). */
typedef struct {
    uint32_t lo[2][3];
    uint32_t hi[2][3];
} lbvh_bounds;

RENDER_HD void lbvh_box_of_pass(const lbvh_bounds *b, int pass, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; k++) {
        lo[k] = lbvh_ordered_float(b->lo[pass][k]);
        hi[k] = lbvh_ordered_float(b->hi[pass][k]);
    }
}

/* The pad after `passes` passes (0, 1 or 2): accel.c's a->pad at the same point. */
RENDER_HD float lbvh_pad_after(const lbvh_bounds *b, int passes)
{
    float ext = 0, pad = 0;
    for (int p = 0; p < passes; p++) {
        float lo[3], hi[3];
        lbvh_box_of_pass(b, p, lo, hi);
        pad = lbvh_pad_update(&ext, lo, hi);
    }
    return pad;
}

/* A box's surface area (the SAH's measure). */
RENDER_HD float lbvh_area(const float lo[3], const float hi[3])
{
    float x = hi[0] - lo[0], y = hi[1] - lo[1], z = hi[2] - lo[2];
    return 2 * (x * y + y * z + z * x);
}

/* A subtree of at most this many triangles becomes one leaf where the SAH prefers it. */
#define LBVH_LEAF_MAX 8

/* Treelet restructuring (Karras & Aila, "Fast parallel construction of high-quality bounding
 * volume hierarchies", HPG 2013): at a node of at least treelet_min triangles, the treelet
 * of 7 leaves found by opening, from the node's two children, the inner node of largest area
 * until there are 7, is rebuilt in the topology of least SAH cost over all the ways to split its
 * leaves (dynamic programming over the 127 subsets), provided that costs less and is no higher
 * than the treelet was (so the tree never gets deeper than the radix tree, at most 96 levels).
 * The treelet's 5 inner nodes below the root keep their slots' pairs, reused in the new
 * topology; its leaves (subtrees) move as whole records. treelet_min: LBVH_TREELET_MIN unless
 * the environment's KEDR_LBVH_TREELET_MIN says otherwise (render_lbvh_treelet_min); 0 turns it
 * off. */
#define LBVH_TREELET_MIN 64
#define LBVH_TREELET 7
#define LBVH_SETS (1 << LBVH_TREELET)

typedef struct {
    float lo[3], hi[3];
} lbvh_box;

RENDER_HD void lbvh_read(const volatile render_bvh_node *n, render_bvh_node *out)
{
    for (int k = 0; k < 3; k++) {
        out->lo[k] = n->lo[k];
        out->hi[k] = n->hi[k];
    }
    out->index = n->index;
    out->count = n->count;
}

/* The union of the boxes of the leaves in set S. */
RENDER_HD void lbvh_set_box(const render_bvh_node *leaf, uint32_t S, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (int i = 0; i < LBVH_TREELET; i++)
        if (S >> i & 1)
            for (int k = 0; k < 3; k++) {
                lo[k] = rmin(lo[k], leaf[i].lo[k]);
                hi[k] = rmax(hi[k], leaf[i].hi[k]);
            }
}

/* Restructures the treelet under internal node p (children at slots 2p + 1, 2p + 2), whose
 * split cost is *split and height *height_p; updates both when it does. */
RENDER_HD void lbvh_treelet(render_bvh_node *slots, float *cost, uint32_t *height, uint32_t p,
                            float *split, uint32_t *height_p)
{
    const volatile render_bvh_node *vs = slots;
    const volatile float *vc = cost;
    const volatile uint32_t *vh = height;
    render_bvh_node leaf[LBVH_TREELET];
    uint32_t at[LBVH_TREELET], pool[LBVH_TREELET - 2];
    int nl = 2, np = 0;
    at[0] = 2 * p + 1;
    at[1] = 2 * p + 2;
    lbvh_read(&vs[at[0]], &leaf[0]);
    lbvh_read(&vs[at[1]], &leaf[1]);
    while (nl < LBVH_TREELET) { /* open the inner leaf of largest area */
        int open = -1;
        float best = -1;
        for (int i = 0; i < nl; i++) {
            float ar = lbvh_area(leaf[i].lo, leaf[i].hi);
            if (!leaf[i].count && ar > best) {
                best = ar;
                open = i;
            }
        }
        if (open < 0)
            return;
        uint32_t c = leaf[open].index; /* its children's pair: slots c, c + 1 */
        pool[np++] = (c - 1) / 2;
        at[open] = c;
        at[nl] = c + 1;
        lbvh_read(&vs[c], &leaf[open]);
        lbvh_read(&vs[c + 1], &leaf[nl]);
        nl++;
    }
    float lcost[LBVH_TREELET];
    uint32_t lheight[LBVH_TREELET];
    for (int i = 0; i < LBVH_TREELET; i++) {
        lcost[i] = vc[at[i]];
        lheight[i] = vh[at[i]];
    }
    /* c[S]: the least cost of a subtree over the leaves in S; best[S]: its first part */
    float c[LBVH_SETS];
    uint8_t best[LBVH_SETS], h[LBVH_SETS];
    for (uint32_t S = 1; S < LBVH_SETS; S++) {
        if (!(S & (S - 1))) {
            int i = 0;
            while (!(S >> i & 1))
                i++;
            c[S] = lcost[i];
            h[S] = (uint8_t)(lheight[i] < 255 ? lheight[i] : 255);
            best[S] = 0;
            continue;
        }
        float lo[3], hi[3];
        lbvh_set_box(leaf, S, lo, hi);
        uint32_t low = S & (0u - S), rest = S ^ low, bp = 0;
        float bc = INFINITY;
        for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
            uint32_t P = sub | low;
            if (P != S) {
                float v = c[P] + c[S ^ P];
                if (v < bc || !bp) {
                    bc = v;
                    bp = P;
                }
            }
            if (!sub)
                break;
        }
        c[S] = lbvh_area(lo, hi) + bc;
        best[S] = (uint8_t)bp;
        uint8_t ha = h[bp], hb = h[S ^ bp];
        h[S] = (uint8_t)(1 + (ha > hb ? ha : hb));
    }
    const uint32_t all = LBVH_SETS - 1;
    if (!(c[all] < *split) || h[all] > *height_p)
        return;
    /* rebuild: the parts of set S into the pair q's slots, inner parts taking pairs from the
     * pool */
    uint32_t stack_set[LBVH_TREELET], stack_pair[LBVH_TREELET];
    int sp = 0, next = 0;
    stack_set[sp] = all;
    stack_pair[sp++] = p;
    while (sp) {
        sp--;
        uint32_t S = stack_set[sp], q = stack_pair[sp];
        uint32_t part[2] = {best[S], S ^ best[S]};
        for (int j = 0; j < 2; j++) {
            uint32_t C = part[j], t = 2 * q + 1 + j;
            if (!(C & (C - 1))) {
                int i = 0;
                while (!(C >> i & 1))
                    i++;
                slots[t] = leaf[i];
                cost[t] = lcost[i];
                height[t] = lheight[i];
            } else {
                uint32_t nq = pool[next++];
                lbvh_set_box(leaf, C, slots[t].lo, slots[t].hi);
                slots[t].index = 2 * nq + 1;
                slots[t].count = 0;
                cost[t] = c[C];
                height[t] = h[C];
                stack_set[sp] = C;
                stack_pair[sp++] = nq;
            }
        }
    }
    *split = c[all];
    *height_p = h[all];
}

/* Leaf k (sorted position k, triangle tri): its box into its slot, then up the tree: at each
 * internal node the second child to arrive merges the pair's boxes into the node's own slot.
 * The internal node whose children sit at slots 2p + 1, 2p + 2 is p; its own slot is
 * parent_node[p] (0 for the root).
 *
 * On the way up, the treelet under each node of at least treelet_min triangles (0: none) is
 * restructured (lbvh_treelet), and subtrees are collapsed into leaves where the surface area
 * heuristic says so (costs of a box test and a triangle test both 1, as for the BVH, bvh.c):
 * cost[slot] is the SAH cost of the subtree at slot times its area, height[slot] its height; a
 * node of at most LBVH_LEAF_MAX triangles whose leaf cost (count x area) is no more than its
 * split cost (area + its children's costs) becomes a leaf of its span, the sorted positions it
 * covers (lbvh_internal: contiguous, whatever the treelets below did). The nodes below it stay
 * in the array, unreached. */
RENDER_HD void lbvh_climb(const float *tris, float pad, uint32_t k, uint32_t tri,
                          render_bvh_node *slots, const uint32_t *parent_leaf,
                          const uint32_t *parent_node, const uint32_t *span, float *cost,
                          uint32_t *height, unsigned *flags, uint32_t treelet_min)
{
    uint32_t slot = parent_leaf[k];
    float lo[3], hi[3];
    tri_box_padded(tris + (size_t)tri * 9, pad, lo, hi);
    for (int c = 0; c < 3; c++) {
        slots[slot].lo[c] = lo[c];
        slots[slot].hi[c] = hi[c];
    }
    cost[slot] = lbvh_area(lo, hi);
    height[slot] = 0;
    while (slot != 0) {
        uint32_t p = (slot - 1) / 2; /* the internal node whose pair holds this slot */
        if (lbvh_arrive(&flags[p]) == 0)
            return;
        /* volatile: the sibling's box, cost and height were written by another thread (on the
         * GPU, maybe another multiprocessor), to be read from memory, not from a cache */
        const volatile render_bvh_node *a = &slots[2 * p + 1], *b = &slots[2 * p + 2];
        const volatile float *vcost = cost;
        const volatile uint32_t *vheight = height;
        uint32_t own = parent_node[p];
        for (int c = 0; c < 3; c++) {
            lo[c] = rmin(a->lo[c], b->lo[c]);
            hi[c] = rmax(a->hi[c], b->hi[c]);
            slots[own].lo[c] = lo[c];
            slots[own].hi[c] = hi[c];
        }
        float area = lbvh_area(lo, hi);
        float split = area + vcost[2 * p + 1] + vcost[2 * p + 2];
        uint32_t ha = vheight[2 * p + 1], hb = vheight[2 * p + 2];
        uint32_t hgt = 1 + (ha > hb ? ha : hb);
        uint32_t count = span[2 * p + 1];
        if (treelet_min && count >= treelet_min)
            lbvh_treelet(slots, cost, height, p, &split, &hgt);
        if (count <= LBVH_LEAF_MAX && (float)count * area <= split) {
            slots[own].index = span[2 * p];
            slots[own].count = count;
            cost[own] = (float)count * area;
            height[own] = 0;
        } else {
            cost[own] = split;
            height[own] = hgt;
        }
        slot = own;
    }
}

#endif
