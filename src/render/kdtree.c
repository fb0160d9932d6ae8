/* render: the SAH kd-tree, built in O(N log N) after Wald & Havran, "On building fast kd-trees
 * for ray tracing, and on doing that in O(N log N)" (2006): the start, end and planar events of
 * every triangle's box on the three axes are sorted once; each node sweeps its sorted events to
 * find the plane of least SAH cost, classifies its triangles left, right or both, and splits its
 * event list into the children's lists without sorting again (only the events of the triangles
 * that straddle the plane are made anew, sorted and merged in).
 *
 * One simplification, stated: a straddling triangle's box in a child is its box clipped to the
 * child's voxel (not the triangle clipped to the voxel, as the paper does), so splits are a
 * little less tight; every triangle still lands in each leaf its box overlaps, so traversal is
 * exact. Traversal uses a stack of (node, t0, t1); a node's children are culled only when the
 * split distance lies beyond the ray's interval by a relative margin (KD_MARGIN), so rounding
 * never loses a triangle on a split plane. */
#include "render/accel.h"

#include <stdlib.h>
#include <string.h>

#define KD_COST_TRAVERSE 1.0f
#define KD_COST_TRI 1.5f
#define KD_EMPTY_BONUS 0.8f
#define KD_MARGIN 1e-6f

enum { EV_END = 0, EV_PLANAR = 1, EV_START = 2 };
enum { SIDE_BOTH = 0, SIDE_LEFT = 1, SIDE_RIGHT = 2 };

typedef struct {
    float pos;
    uint32_t prim;
    uint32_t key; /* axis * 4 + type: events sort by (axis, pos, type) */
} kd_event;

typedef struct {
    float lo[3], hi[3];
} kd_box;

typedef struct {
    kedr_accel *a;
    kd_box *boxes;  /* each triangle's box */
    uint8_t *side;  /* per triangle, during a split */
    size_t nodes_cap, refs_cap;
    int max_depth, depth;
    kedr_status status;
} kd_builder;

static int ev_less(const kd_event *x, const kd_event *y)
{
    if ((x->key >> 2) != (y->key >> 2))
        return (x->key >> 2) < (y->key >> 2);
    if (x->pos != y->pos)
        return x->pos < y->pos;
    return (x->key & 3) < (y->key & 3);
}
static int ev_cmp(const void *p, const void *q)
{
    const kd_event *x = p, *y = q;
    return ev_less(x, y) ? -1 : ev_less(y, x) ? 1 : 0;
}

static float voxel_area(const kd_box *v)
{
    float x = v->hi[0] - v->lo[0], y = v->hi[1] - v->lo[1], z = v->hi[2] - v->lo[2];
    return 2 * (x * y + y * z + z * x);
}

/* Appends the events of box b (clipped to voxel v) of triangle p. */
static size_t add_events(kd_event *out, size_t n, const kd_box *b, const kd_box *v, uint32_t p)
{
    for (int k = 0; k < 3; k++) {
        float lo = rmax(b->lo[k], v->lo[k]), hi = rmin(b->hi[k], v->hi[k]);
        if (lo == hi) {
            out[n++] = (kd_event){lo, p, (uint32_t)k * 4 + EV_PLANAR};
        } else {
            out[n++] = (kd_event){lo, p, (uint32_t)k * 4 + EV_START};
            out[n++] = (kd_event){hi, p, (uint32_t)k * 4 + EV_END};
        }
    }
    return n;
}

static size_t merge(const kd_event *x, size_t nx, const kd_event *y, size_t ny, kd_event *out)
{
    size_t i = 0, j = 0, n = 0;
    while (i < nx && j < ny)
        out[n++] = ev_less(&y[j], &x[i]) ? y[j++] : x[i++];
    while (i < nx)
        out[n++] = x[i++];
    while (j < ny)
        out[n++] = y[j++];
    return n;
}

typedef struct {
    float cost, pos;
    int axis, planar_left;
} kd_split;

/* The sweep: every event position of every axis is a candidate plane. */
static kd_split best_split(const kd_event *e, size_t m, size_t nprim, const kd_box *v)
{
    kd_split best = {INFINITY, 0, -1, 0};
    float area = voxel_area(v);
    if (!(area > 0))
        return best;
    size_t i = 0;
    while (i < m) {
        int k = (int)(e[i].key >> 2);
        size_t nl = 0, nr = nprim;
        while (i < m && (int)(e[i].key >> 2) == k) {
            float p = e[i].pos;
            size_t pe = 0, pp = 0, ps = 0;
            while (i < m && (int)(e[i].key >> 2) == k && e[i].pos == p && (e[i].key & 3) == EV_END)
                pe++, i++;
            while (i < m && (int)(e[i].key >> 2) == k && e[i].pos == p &&
                   (e[i].key & 3) == EV_PLANAR)
                pp++, i++;
            while (i < m && (int)(e[i].key >> 2) == k && e[i].pos == p &&
                   (e[i].key & 3) == EV_START)
                ps++, i++;
            nr -= pp + pe;
            if (p > v->lo[k] && p < v->hi[k]) {
                kd_box l = *v, r = *v;
                l.hi[k] = p;
                r.lo[k] = p;
                float pl = voxel_area(&l) / area, pr = voxel_area(&r) / area;
                for (int side = 0; side < 2; side++) {
                    size_t cl = nl + (side == 0 ? pp : 0), cr = nr + (side == 1 ? pp : 0);
                    float cost = KD_COST_TRAVERSE + KD_COST_TRI * (pl * cl + pr * cr);
                    if (cl == 0 || cr == 0)
                        cost *= KD_EMPTY_BONUS;
                    if (cost < best.cost) {
                        best.cost = cost;
                        best.pos = p;
                        best.axis = k;
                        best.planar_left = side == 0;
                    }
                }
            }
            nl += ps + pp;
        }
    }
    return best;
}

static int new_node(kd_builder *b, size_t *at)
{
    kedr_accel *a = b->a;
    if (a->nkd == b->nodes_cap) {
        size_t cap = b->nodes_cap * 2 + 64;
        render_kd_node *p = realloc(a->kd, cap * sizeof *p);
        if (!p)
            return 0;
        a->kd = p;
        b->nodes_cap = cap;
    }
    *at = a->nkd++;
    return 1;
}

static void make_leaf(kd_builder *b, size_t at, const kd_event *e, size_t m, size_t nprim)
{
    kedr_accel *a = b->a;
    if (a->nrefs + nprim > b->refs_cap) {
        size_t cap = (a->nrefs + nprim) * 2 + 64;
        uint32_t *p = realloc(a->refs, cap * sizeof *p);
        if (!p) {
            b->status = kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the "
                                  "kd-tree's %zu references", cap);
            return;
        }
        a->refs = p;
        b->refs_cap = cap;
    }
    a->kd[at].a.first = (uint32_t)a->nrefs;
    a->kd[at].info = 3u | (uint32_t)nprim << 2;
    /* each triangle has one start or planar event on the first axis */
    for (size_t i = 0; i < m && (e[i].key >> 2) == 0; i++)
        if ((e[i].key & 3) != EV_END)
            a->refs[a->nrefs++] = e[i].prim;
}

/* Builds the subtree of voxel v from its events (which it frees). */
static void kd_build(kd_builder *b, const kd_box *v, kd_event *e, size_t m, size_t nprim,
                     int depth)
{
    size_t at;
    if (b->status != KEDR_OK || !new_node(b, &at)) {
        if (b->status == KEDR_OK)
            b->status = kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for "
                                  "the kd-tree's nodes");
        free(e);
        return;
    }
    if (depth > b->depth)
        b->depth = depth;
    kd_split s = {INFINITY, 0, -1, 0};
    if (depth < b->max_depth && nprim > 1)
        s = best_split(e, m, nprim, v);
    if (s.axis < 0 || s.cost >= KD_COST_TRI * nprim) {
        make_leaf(b, at, e, m, nprim);
        free(e);
        return;
    }
    /* classify */
    for (size_t i = 0; i < m && (e[i].key >> 2) == 0; i++)
        b->side[e[i].prim] = SIDE_BOTH;
    for (size_t i = 0; i < m; i++) {
        if ((int)(e[i].key >> 2) != s.axis)
            continue;
        int type = (int)(e[i].key & 3);
        uint8_t *side = &b->side[e[i].prim];
        if (type == EV_END && e[i].pos <= s.pos)
            *side = SIDE_LEFT;
        else if (type == EV_START && e[i].pos >= s.pos)
            *side = SIDE_RIGHT;
        else if (type == EV_PLANAR)
            *side = e[i].pos < s.pos   ? SIDE_LEFT
                    : e[i].pos > s.pos ? SIDE_RIGHT
                    : s.planar_left    ? SIDE_LEFT
                                       : SIDE_RIGHT;
    }
    size_t nboth = 0, nleft = 0, nright = 0;
    for (size_t i = 0; i < m && (e[i].key >> 2) == 0; i++)
        if ((e[i].key & 3) != EV_END) {
            int sd = b->side[e[i].prim];
            nboth += sd == SIDE_BOTH;
            nleft += sd == SIDE_LEFT;
            nright += sd == SIDE_RIGHT;
        }
    kd_box vl = *v, vr = *v;
    vl.hi[s.axis] = s.pos;
    vr.lo[s.axis] = s.pos;
    /* the children's lists: kept events in order, then the straddlers' new events merged in */
    kd_event *el = malloc((m + 6 * nboth + 1) * sizeof *el);
    kd_event *er = malloc((m + 6 * nboth + 1) * sizeof *er);
    kd_event *bl = malloc((6 * nboth + 1) * sizeof *bl), *br = malloc((6 * nboth + 1) * sizeof *br);
    if (!el || !er || !bl || !br) {
        free(el), free(er), free(bl), free(br), free(e);
        b->status = kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the "
                              "kd-tree's events (%zu)", m);
        return;
    }
    size_t nel = 0, ner = 0, nbl = 0, nbr = 0;
    for (size_t i = 0; i < m; i++) {
        int sd = b->side[e[i].prim];
        if (sd == SIDE_LEFT)
            el[nel++] = e[i];
        else if (sd == SIDE_RIGHT)
            er[ner++] = e[i];
        else if ((e[i].key >> 2) == 0 && (e[i].key & 3) != EV_END) {
            nbl = add_events(bl, nbl, &b->boxes[e[i].prim], &vl, e[i].prim);
            nbr = add_events(br, nbr, &b->boxes[e[i].prim], &vr, e[i].prim);
        }
    }
    free(e);
    qsort(bl, nbl, sizeof *bl, ev_cmp);
    qsort(br, nbr, sizeof *br, ev_cmp);
    kd_event *left = malloc((nel + nbl + 1) * sizeof *left);
    kd_event *right = malloc((ner + nbr + 1) * sizeof *right);
    if (!left || !right) {
        free(left), free(right), free(el), free(er), free(bl), free(br);
        b->status = kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the "
                              "kd-tree's events");
        return;
    }
    size_t nlft = merge(el, nel, bl, nbl, left), nrgt = merge(er, ner, br, nbr, right);
    free(el), free(er), free(bl), free(br);
    kd_build(b, &vl, left, nlft, nleft + nboth, depth + 1);
    size_t r = b->a->nkd;
    kd_build(b, &vr, right, nrgt, nright + nboth, depth + 1);
    b->a->kd[at].a.split = s.pos;
    b->a->kd[at].info = (uint32_t)s.axis | (uint32_t)r << 2;
}

kedr_status render_kd_build(kedr_accel *a)
{
    size_t n = a->ntri;
    kd_builder b = {a, malloc((n ? n : 1) * sizeof(kd_box)), malloc(n ? n : 1), 0, 0, 0, 0,
                    KEDR_OK};
    kd_event *e = malloc((6 * n + 1) * sizeof *e);
    if (!b.boxes || !b.side || !e) {
        free(b.boxes), free(b.side), free(e);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the kd-tree "
                         "of %zu triangles", n);
    }
    kd_box v;
    for (int k = 0; k < 3; k++) {
        v.lo[k] = a->lo[k];
        v.hi[k] = a->hi[k];
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        accel_tri_box(a, i, b.boxes[i].lo, b.boxes[i].hi);
        m = add_events(e, m, &b.boxes[i], &v, (uint32_t)i);
    }
    qsort(e, m, sizeof *e, ev_cmp);
    int md = (int)(8 + 1.3 * log2((double)n + 1));
    b.max_depth = md < RENDER_STACK - 8 ? md : RENDER_STACK - 8;
    kd_build(&b, &v, e, m, n, 0);
    free(b.boxes);
    free(b.side);
    a->info.nodes = a->nkd;
    a->info.depth = b.depth;
    return b.status;
}

int render_kd_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    rvec o = rv_load(r->o), d = rv_load(r->d), inv = rv_inverse(d);
    float t0, t1;
    if (!box_hit(a->lo, a->hi, o, inv, r->tmin, h->t, &t0, &t1))
        return 0;
    struct {
        uint32_t node;
        float t0, t1;
    } stack[RENDER_STACK];
    int sp = 0, found = 0;
    uint32_t node = 0;
    for (;;) {
        const render_kd_node *nd = &a->kd[node];
        while ((nd->info & 3) != 3) {
            int k = (int)(nd->info & 3);
            float ok = rv_at(o, k), dk = rv_at(d, k), split = nd->a.split;
            uint32_t left = node + 1, right = nd->info >> 2;
            int below = ok < split || (ok == split && dk <= 0);
            uint32_t nearc = below ? left : right, farc = below ? right : left;
            float ts = (split - ok) * rv_at(inv, k);
            if (dk == 0 || ts != ts) {
                if (ok == split) { /* the ray lies in the plane: both sides */
                    stack[sp].node = farc;
                    stack[sp].t0 = t0;
                    stack[sp++].t1 = t1;
                }
                node = nearc;
            } else if (ts <= 0 || ts > t1 * (1 + KD_MARGIN)) {
                node = nearc;
            } else if (ts < t0 * (1 - KD_MARGIN)) {
                node = farc;
            } else {
                stack[sp].node = farc;
                stack[sp].t0 = rmax(ts, t0);
                stack[sp++].t1 = t1;
                node = nearc;
                t1 = rmin(ts, t1);
            }
            nd = &a->kd[node];
        }
        uint32_t count = nd->info >> 2;
        if (accel_leaf(a, a->refs + nd->a.first, count, o, d, r->tmin, h, any)) {
            found = 1;
            if (any)
                return 1;
        }
        /* the next subtree unless it starts beyond the hit found: far children start at their
         * split distance, but a ray lying in a split plane pushes a sibling over the same
         * interval, so no leaf's exit distance alone ends the search */
        do {
            if (!sp)
                return found;
            sp--;
            node = stack[sp].node;
            t0 = stack[sp].t0;
            t1 = stack[sp].t1;
        } while (t0 > h->t);
    }
}

/* The branch-free traversal (seed 000, ch. 13: "?" selects instead of if-branches): the child a
 * ray enters first is chosen by the sign of its direction on the split axis, and the three cases
 * of the loop (near child only, far child only, both) become two comparisons that select the
 * next node, whether the far child is pushed (the stack entry is written every step, the stack
 * pointer advanced by 0 or 1) and the near child's new exit distance. It visits the leaves
 * render_kd_trace visits, in the same order and with the same intervals (a ray lying in a split
 * plane, ts = 0 * inf = NaN, fails every comparison and so visits both children, the left first
 * unless its direction is positive there, as render_kd_trace does), and so returns the same hits
 * bit for bit, but where (split - o) / d underflows to zero. */
int render_kd_trace_bf(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    rvec ro = rv_load(r->o), rd = rv_load(r->d), rinv = rv_inverse(rd);
    float t0, t1;
    if (!box_hit(a->lo, a->hi, ro, rinv, r->tmin, h->t, &t0, &t1))
        return 0;
    const float o[3] = {ro.x, ro.y, ro.z}, d[3] = {rd.x, rd.y, rd.z},
                inv[3] = {rinv.x, rinv.y, rinv.z};
    const int neg[3] = {rinv.x < 0, rinv.y < 0, rinv.z < 0};
    struct {
        uint32_t node;
        float t0, t1;
    } stack[RENDER_STACK];
    int sp = 0, found = 0;
    uint32_t node = 0;
    for (;;) {
        const render_kd_node *nd = &a->kd[node];
        uint32_t info = nd->info;
        while ((info & 3) != 3) {
            uint32_t k = info & 3, left = node + 1, right = info >> 2;
            float ts = (nd->a.split - o[k]) * inv[k];
            int first_right = ts != ts ? d[k] > 0 : neg[k];
            uint32_t nearc = first_right ? right : left, farc = first_right ? left : right;
            int go_near = !(ts <= 0 || ts < t0 * (1 - KD_MARGIN));
            int go_far = !(ts > 0 && ts > t1 * (1 + KD_MARGIN));
            int both = go_near & go_far;
            stack[sp].node = farc;
            stack[sp].t0 = rmax(ts, t0);
            stack[sp].t1 = t1;
            sp += both;
            t1 = both ? rmin(ts, t1) : t1;
            node = go_near ? nearc : farc;
            nd = &a->kd[node];
            info = nd->info;
        }
        if (accel_leaf(a, a->refs + nd->a.first, info >> 2, ro, rd, r->tmin, h, any)) {
            found = 1;
            if (any)
                return 1;
        }
        do {
            if (!sp)
                return found;
            sp--;
            node = stack[sp].node;
            t0 = stack[sp].t0;
            t1 = stack[sp].t1;
        } while (t0 > h->t);
    }
}
