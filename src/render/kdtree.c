/* render: the SAH kd-tree, built in O(N log N) after Wald & Havran, "On building fast kd-trees
 * for ray tracing, and on doing that in O(N log N)" (2006). Each axis has its own list of the
 * start, end and planar events of the triangles' boxes, sorted once at the root; a node sweeps
 * its three lists to find the plane of least SAH cost, classifies its triangles left, right or
 * both, and splits each list into the children's in order, without sorting again: only the
 * triangles that straddle the plane get new events (their boxes clipped to each child), which
 * are sorted by themselves and merged in.
 *
 * An event is one 64-bit word: the position as an order-preserving unsigned word (bits 32-63),
 * the type (bits 30-31: end < planar < start at one position) and the triangle (bits 0-29; a
 * scene has fewer than 2^30), so that events sort as integers (a radix sort on bits 30-63) and
 * merge by one comparison. All lists live in one growing array used as a stack: a node's
 * children's lists replace its own (the right child's first, then the left child's, built
 * first), so nothing is allocated per node.
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

#define EV_PRIM_MASK ((1u << 30) - 1)

typedef struct {
    float lo[3], hi[3];
} kd_box;

typedef struct {
    kedr_accel *a;
    kd_box *boxes; /* each triangle's box */
    uint8_t *side; /* per triangle, during a split */
    uint64_t *ev;  /* the event lists, a stack */
    struct kd_chunk *chunk;
    size_t ev_cap, nodes_cap, refs_cap;
    int max_depth, depth;
    kedr_status status;
} kd_builder;

/* floats as unsigned words in the same order (-0 taken as +0, so that equal positions have
 * equal words) */
static uint32_t pos_word(float f)
{
    if (f == 0)
        f = 0;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u ^ (u >> 31 ? 0xFFFFFFFFu : 0x80000000u);
}
static float word_pos(uint32_t u)
{
    u ^= u >> 31 ? 0x80000000u : 0xFFFFFFFFu;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint64_t event(float pos, int type, uint32_t prim)
{
    return (uint64_t)pos_word(pos) << 32 | (uint64_t)type << 30 | prim;
}
static float ev_pos(uint64_t e) { return word_pos((uint32_t)(e >> 32)); }
static int ev_type(uint64_t e) { return (int)(e >> 30) & 3; }
static uint32_t ev_prim(uint64_t e) { return (uint32_t)e & EV_PRIM_MASK; }

/* Sorts x[0..n) by bits 30-63 (position and type; the order of equal ones does not matter):
 * insertion for short lists, else three stable passes of 12 bits through tmp. */
static void ev_sort(uint64_t *x, size_t n, uint64_t *tmp)
{
    if (n < 64) {
        for (size_t i = 1; i < n; i++) {
            uint64_t v = x[i];
            size_t j = i;
            for (; j > 0 && x[j - 1] > v; j--)
                x[j] = x[j - 1];
            x[j] = v;
        }
        return;
    }
    size_t count[4096];
    uint64_t *src = x, *dst = tmp;
    for (int shift = 30; shift < 64; shift += 12) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & 4095]++;
        size_t sum = 0;
        for (int d = 0; d < 4096; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 4095]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != x) /* three passes: the result is in tmp */
        memcpy(x, src, n * sizeof *x);
}

static float voxel_area(const kd_box *v)
{
    float x = v->hi[0] - v->lo[0], y = v->hi[1] - v->lo[1], z = v->hi[2] - v->lo[2];
    return 2 * (x * y + y * z + z * x);
}

/* Appends the events of box b (clipped to voxel v) of triangle p to the lists out[k]. */
static void add_events(uint64_t *out[3], size_t n[3], const kd_box *b, const kd_box *v,
                       uint32_t p)
{
    for (int k = 0; k < 3; k++) {
        float lo = rmax(b->lo[k], v->lo[k]), hi = rmin(b->hi[k], v->hi[k]);
        if (lo == hi) {
            out[k][n[k]++] = event(lo, EV_PLANAR, p);
        } else {
            out[k][n[k]++] = event(lo, EV_START, p);
            out[k][n[k]++] = event(hi, EV_END, p);
        }
    }
}

static size_t merge(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny, uint64_t *out)
{
    size_t i = 0, j = 0, n = 0;
    while (i < nx && j < ny)
        out[n++] = (y[j] >> 30) < (x[i] >> 30) ? y[j++] : x[i++];
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

/* A chunk of candidate planes on one axis: their positions and the triangles left of,
 * right of and in each (nl, nr, np as the sweep counts them). */
#define KD_CHUNK 512
typedef struct kd_chunk {
    float pos[KD_CHUNK];
    int32_t nl[KD_CHUNK], nr[KD_CHUNK], np[KD_CHUNK];
    float cost[2][KD_CHUNK];
    int n;
} kd_chunk;

static float area3(float x, float y, float z) { return 2 * (x * y + y * z + z * x); }

/* The SAH cost of each candidate, planar triangles left (cost[0]) and right (cost[1]), in
 * separate loops without branches that the compiler vectorizes (divisions and all: the same
 * correctly rounded operations as one at a time), then the first least cost in the sweep's
 * order. */
static void eval_chunk(kd_chunk *c, int k, const kd_box *v, float area, kd_split *best)
{
    float ex = v->hi[0] - v->lo[0], ey = v->hi[1] - v->lo[1], ez = v->hi[2] - v->lo[2];
    float lo = v->lo[k], hi = v->hi[k];
    int n = c->n;
#define KD_EVAL(AL, AR)                                                                        \
    for (int j = 0; j < n; j++) {                                                              \
        float p = c->pos[j], dl = p - lo, dr = hi - p;                                          \
        float pl = (AL) / area, pr = (AR) / area;                                               \
        int32_t l0 = c->nl[j] + c->np[j], r0 = c->nr[j], l1 = c->nl[j], r1 = c->nr[j] + c->np[j]; \
        float c0 = KD_COST_TRAVERSE + KD_COST_TRI * (pl * (float)l0 + pr * (float)r0);           \
        float c1 = KD_COST_TRAVERSE + KD_COST_TRI * (pl * (float)l1 + pr * (float)r1);           \
        c->cost[0][j] = l0 == 0 || r0 == 0 ? c0 * KD_EMPTY_BONUS : c0;                          \
        c->cost[1][j] = l1 == 0 || r1 == 0 ? c1 * KD_EMPTY_BONUS : c1;                          \
    }
    if (k == 0)
        KD_EVAL(area3(dl, ey, ez), area3(dr, ey, ez))
    else if (k == 1)
        KD_EVAL(area3(ex, dl, ez), area3(ex, dr, ez))
    else
        KD_EVAL(area3(ex, ey, dl), area3(ex, ey, dr))
#undef KD_EVAL
    for (int j = 0; j < n; j++)
        for (int side = 0; side < 2; side++)
            if (c->cost[side][j] < best->cost) {
                best->cost = c->cost[side][j];
                best->pos = c->pos[j];
                best->axis = k;
                best->planar_left = side == 0;
            }
    c->n = 0;
}

/* The sweep: every event position of every axis strictly inside the voxel is a candidate plane.
 * The events of one position come together, ends, then planar ones, then starts; they are
 * counted without branches, and the candidates are costed a chunk at a time. */
static kd_split best_split(const uint64_t *e, const size_t m[3], size_t nprim, const kd_box *v,
                           kd_chunk *c)
{
    kd_split best = {INFINITY, 0, -1, 0};
    float area = voxel_area(v);
    if (!(area > 0))
        return best;
    for (int k = 0; k < 3; k++) {
        size_t nl = 0, nr = nprim, n = m[k], pe = 0, pp = 0, ps = 0;
        c->n = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t w = e[i];
            int type = ev_type(w);
            pe += type == EV_END;
            pp += type == EV_PLANAR;
            ps += type == EV_START;
            if (i + 1 < n && (e[i + 1] >> 32) == (w >> 32))
                continue;
            float p = ev_pos(w);
            nr -= pp + pe;
            if (p > v->lo[k] && p < v->hi[k]) {
                c->pos[c->n] = p;
                c->nl[c->n] = (int32_t)nl;
                c->nr[c->n] = (int32_t)nr;
                c->np[c->n++] = (int32_t)pp;
                if (c->n == KD_CHUNK)
                    eval_chunk(c, k, v, area, &best);
            }
            nl += ps + pp;
            pe = pp = ps = 0;
        }
        eval_chunk(c, k, v, area, &best);
        e += n;
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

/* Makes room for need events in the stack of lists (b->ev may move: callers hold offsets). */
static int reserve(kd_builder *b, size_t need)
{
    if (need <= b->ev_cap)
        return 1;
    size_t cap = need + need / 2;
    uint64_t *p = realloc(b->ev, cap * sizeof *p);
    if (!p) {
        b->status = kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the "
                              "kd-tree's events (%zu)", cap);
        return 0;
    }
    b->ev = p;
    b->ev_cap = cap;
    return 1;
}

static void make_leaf(kd_builder *b, size_t at, const uint64_t *e, size_t m0, size_t nprim)
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
    for (size_t i = 0; i < m0; i++)
        if (ev_type(e[i]) != EV_END)
            a->refs[a->nrefs++] = ev_prim(e[i]);
}

/* Builds the subtree of voxel v from its lists, ev[off ..) with m[k] events on axis k. */
static void kd_build(kd_builder *b, const kd_box *v, size_t off, const size_t m[3], size_t nprim,
                     int depth)
{
    size_t at;
    if (b->status != KEDR_OK)
        return;
    if (!new_node(b, &at)) {
        b->status = kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the "
                              "kd-tree's nodes");
        return;
    }
    if (depth > b->depth)
        b->depth = depth;
    kd_split s = {INFINITY, 0, -1, 0};
    if (depth < b->max_depth && nprim > 1)
        s = best_split(b->ev + off, m, nprim, v, b->chunk);
    if (s.axis < 0 || s.cost >= KD_COST_TRI * nprim) {
        make_leaf(b, at, b->ev + off, m[0], nprim);
        return;
    }
    size_t total = m[0] + m[1] + m[2];
    /* classify: every triangle both sides, then the split axis' events put those that end at
     * or before the plane left, those that start at or after it right, the planar ones by their
     * side (each triangle at most once: an end at or before the plane and a start at or after
     * it would be planar) */
    const uint64_t *e = b->ev + off, *es = e + (s.axis > 0 ? m[0] : 0) + (s.axis > 1 ? m[1] : 0);
    uint8_t *side = b->side;
    for (size_t i = 0; i < m[0]; i++)
        if (ev_type(e[i]) != EV_END)
            side[ev_prim(e[i])] = SIDE_BOTH;
    uint32_t split = pos_word(s.pos);
    size_t nleft = 0, nright = 0;
    for (size_t i = 0; i < m[s.axis]; i++) {
        int type = ev_type(es[i]);
        uint32_t pos = (uint32_t)(es[i] >> 32);
        int sd = type == EV_END ? (pos <= split ? SIDE_LEFT : SIDE_BOTH)
                 : type == EV_START ? (pos >= split ? SIDE_RIGHT : SIDE_BOTH)
                 : pos < split      ? SIDE_LEFT
                 : pos > split      ? SIDE_RIGHT
                 : s.planar_left    ? SIDE_LEFT
                                    : SIDE_RIGHT;
        if (sd != SIDE_BOTH)
            side[ev_prim(es[i])] = (uint8_t)sd;
        nleft += sd == SIDE_LEFT;
        nright += sd == SIDE_RIGHT;
    }
    size_t nboth = nprim - nleft - nright;
    /* the lists (at off) are followed by room for the children's (at most 12 new events a
     * straddler), then scratch: the kept left and right events (A, B), the straddlers' new
     * events for each side and axis (6 lists of up to 2 nboth) and a radix sort's buffer. The
     * children's lists are merged from there down to off, over the node's own. */
    size_t nb2 = 2 * nboth;
    size_t oa = off + total + 6 * nb2, ob = oa + total, on = ob + total, ot = on + 6 * nb2;
    if (!reserve(b, ot + nb2 + 1))
        return;
    uint64_t *ev = b->ev;
    e = ev + off;
    kd_box vl = *v, vr = *v;
    vl.hi[s.axis] = s.pos;
    vr.lo[s.axis] = s.pos;
    uint64_t *nl[3], *nr[3];
    size_t cnl[3] = {0, 0, 0}, cnr[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        nl[k] = ev + on + (size_t)k * nb2;
        nr[k] = ev + on + (size_t)(3 + k) * nb2;
    }
    /* each event written to both A and B, kept by one (or none: a straddler's, for which its
     * start or planar event on the first axis makes the new ones) */
    size_t la[3] = {0, 0, 0}, lb[3] = {0, 0, 0}, na = 0, nbk = 0;
    for (int k = 0; k < 3; k++) {
        size_t a0 = na, b0 = nbk;
        for (size_t i = 0; i < m[k]; i++) {
            uint64_t x = e[i];
            uint32_t p = ev_prim(x);
            int sd = side[p];
            ev[oa + na] = x;
            ev[ob + nbk] = x;
            na += sd == SIDE_LEFT;
            nbk += sd == SIDE_RIGHT;
            if (k == 0 && sd == SIDE_BOTH && ev_type(x) != EV_END) {
                add_events(nl, cnl, &b->boxes[p], &vl, p);
                add_events(nr, cnr, &b->boxes[p], &vr, p);
            }
        }
        la[k] = na - a0;
        lb[k] = nbk - b0;
        e += m[k];
    }
    for (int k = 0; k < 3; k++) {
        ev_sort(nl[k], cnl[k], ev + ot);
        ev_sort(nr[k], cnr[k], ev + ot);
    }
    /* the children's lists: right first, then left */
    size_t mr[3], ml[3], nf = 0, pa = oa, pb = ob;
    for (int k = 0; k < 3; k++) {
        mr[k] = merge(ev + pb, lb[k], nr[k], cnr[k], ev + off + nf);
        nf += mr[k];
        pb += lb[k];
    }
    size_t right_total = nf;
    for (int k = 0; k < 3; k++) {
        ml[k] = merge(ev + pa, la[k], nl[k], cnl[k], ev + off + nf);
        nf += ml[k];
        pa += la[k];
    }
    kd_build(b, &vl, off + right_total, ml, nleft + nboth, depth + 1);
    size_t r = b->a->nkd;
    kd_build(b, &vr, off, mr, nright + nboth, depth + 1);
    if (b->status != KEDR_OK)
        return;
    b->a->kd[at].a.split = s.pos;
    b->a->kd[at].info = (uint32_t)s.axis | (uint32_t)r << 2;
}

kedr_status render_kd_build(kedr_accel *a)
{
    size_t n = a->ntri;
    kd_builder b = {a, malloc((n ? n : 1) * sizeof(kd_box)), malloc(n ? n : 1), NULL,
                    malloc(sizeof(kd_chunk)), 0, 0, 0, 0, 0, KEDR_OK};
    if (!b.boxes || !b.side || !b.chunk || !reserve(&b, 12 * n + 16)) {
        free(b.boxes), free(b.side), free(b.ev), free(b.chunk);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the kd-tree "
                         "of %zu triangles", n);
    }
    kd_box v;
    for (int k = 0; k < 3; k++) {
        v.lo[k] = a->lo[k];
        v.hi[k] = a->hi[k];
    }
    /* the root's lists: each axis' events at ev[2 n k ..), then packed together */
    uint64_t *out[3] = {b.ev, b.ev + 2 * n, b.ev + 4 * n};
    size_t m[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        accel_tri_box(a, i, b.boxes[i].lo, b.boxes[i].hi);
        add_events(out, m, &b.boxes[i], &v, (uint32_t)i);
    }
    for (int k = 0; k < 3; k++)
        ev_sort(out[k], m[k], b.ev + 6 * n);
    memmove(b.ev + m[0], out[1], m[1] * sizeof *b.ev);
    memmove(b.ev + m[0] + m[1], out[2], m[2] * sizeof *b.ev);
    int md = (int)(8 + 1.3 * log2((double)n + 1));
    b.max_depth = md < RENDER_STACK - 8 ? md : RENDER_STACK - 8;
    kd_build(&b, &v, 0, m, n, 0);
    free(b.boxes);
    free(b.side);
    free(b.ev);
    free(b.chunk);
    a->info.nodes = a->nkd;
    a->info.depth = b.depth;
    return b.status;
}

/* A subtree a traversal will visit later: its node and the ray's interval through it. */
typedef struct {
    uint32_t node;
    float t0, t1;
} kd_entry;

/* The next subtree on the stack unless it starts beyond the hit found (t_hit): far children
 * start at their split distance, but a ray lying in a split plane pushes a sibling over the same
 * interval, so no leaf's exit distance alone ends the search. 0 when none is left. */
static inline int kd_pop(const kd_entry *stack, int *sp, float t_hit, uint32_t *node, float *t0,
                         float *t1)
{
    do {
        if (!*sp)
            return 0;
        --*sp;
        *node = stack[*sp].node;
        *t0 = stack[*sp].t0;
        *t1 = stack[*sp].t1;
    } while (*t0 > t_hit);
    return 1;
}

int render_kd_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    rvec o = rv_load(r->o), d = rv_load(r->d), inv = rv_inverse(d);
    float t0, t1;
    if (!box_hit(a->lo, a->hi, o, inv, r->tmin, h->t, &t0, &t1))
        return 0;
    kd_entry stack[RENDER_STACK];
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
        if (!kd_pop(stack, &sp, h->t, &node, &t0, &t1))
            return found;
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
    kd_entry stack[RENDER_STACK];
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
        if (!kd_pop(stack, &sp, h->t, &node, &t0, &t1))
            return found;
    }
}
