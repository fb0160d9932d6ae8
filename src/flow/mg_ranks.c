/* Multigrid over ranks (docs/flow.md "Several ranks"): the V-cycle of mg.c on a grid split into
 * slabs along its last axis, with the whole grid's levels, so that N ranks compute one rank's
 * iterates up to the order of a few sums.
 *
 * - Levels: the axes a level halves are the whole grid's (the rule of mg.c on the whole grid's
 *   sizes). A coarse plane I belongs to the rank that holds fine plane 2 I, so a rank's coarse
 *   slab is [ceil(first / 2), ceil(end / 2)) of its fine one.
 * - Smoothing: red-black Gauss–Seidel in the grid's colours; the neighbours lend their end
 *   planes of x, which go to the right-hand side of the slab's end planes (in the sweep's
 *   kernel, flow_op_gs_ends, as in SSOR over ranks, ranks.c); a half-sweep updates only cells
 *   of one colour from cells of the other, so the result is one rank's. Where every rank holds
 *   two planes of a level, one exchange of two planes serves two half-sweeps (gs_pair:
 *   KEDR_FLOW_MG_HALO); else one exchange of one plane a half-sweep.
 * - Transfers: where a level halves the split axis, restriction reads the fine residual with two
 *   neighbour planes on each side and prolongation the coarse correction with two on each side
 *   (lent by the neighbours into ghost planes around the slab); the split axis' tables are the
 *   whole axis' (mg.c), their indices moved into the slab with its ghosts, entries in the same
 *   order, so that each coarse value is one rank's to the bit. Where the split axis is kept, the
 *   transfers need nothing from the neighbours.
 * - Gathering: a level is split only while every rank holds at least KEDR_FLOW_MG_GATHER_PLANES
 *   of its planes (default 2) and the whole level has more than KEDR_FLOW_MG_GATHER cells
 *   (default 32768 on the cpu, 262144 on GPUs); the first level that
 *   is not (or the coarsest, or a level whose fine slabs are too thin to lend two planes) is
 *   gathered whole on every rank (each rank's planes copied into every other rank's registered
 *   buffer of the whole level: a bitwise gather), and its V-cycle, down to the dense coarsest solve, is run there by a one-rank solver built on
 *   it: the very levels one rank builds. Each rank keeps its slab of the correction. */
#include "core/internal.h"
#include "flow/ops.h"
#include "kedr/comm.h"

#include <stdlib.h>
#include <string.h>

/* The default whole-level cell count at or below which a level is gathered: on the cpu, 32^3
 * (below it a slab's sweeps are too short to pay for their exchanges); on GPUs, 64^3: a
 * kernel over fewer than about 10^5 cells of a slab costs its launch, not its cells, so a split
 * 64^3 level takes about as long per kernel as the whole level on one GPU, plus its six or
 * seven exchanges a V-cycle, which gathering it (one gather of 2 MB) saves. Not yet measured:
 * bench/flow-ranks.sh GATHER="..." compares. */
#define FLOW_MG_GATHER_CPU 32768
#define FLOW_MG_GATHER_GPU 262144
/* The default least number of planes a rank keeps of a split level (2: the transfers read two
 * neighbour planes). */
#define FLOW_MG_GATHER_PLANES 2

/* The gathering rule's settings: the whole-level cell count at or below which the V-cycle is
 * gathered (KEDR_FLOW_MG_GATHER) and the least planes of a split level on every rank
 * (KEDR_FLOW_MG_GATHER_PLANES). */
static kedr_status gather_rule(kedr_ctx *ctx, double *cells, int *planes)
{
    const char *e = getenv("KEDR_FLOW_MG_GATHER");
    *cells = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA ? FLOW_MG_GATHER_GPU : FLOW_MG_GATHER_CPU;
    *planes = FLOW_MG_GATHER_PLANES;
    char *end;
    if (e && *e) {
        double v = strtod(e, &end);
        if (*end || !(v >= 0) || v > 1e12)
            return kedr_fail(KEDR_ERR_INVALID, "KEDR_FLOW_MG_GATHER = '%s': expected a cell "
                             "count >= 0 (the whole-level size at which multigrid over ranks "
                             "gathers)", e);
        *cells = v;
    }
    e = getenv("KEDR_FLOW_MG_GATHER_PLANES");
    if (e && *e) {
        long v = strtol(e, &end, 10);
        if (*end || v < 2 || v > 1000000)
            return kedr_fail(KEDR_ERR_INVALID, "KEDR_FLOW_MG_GATHER_PLANES = '%s': expected a "
                             "whole number of planes >= 2 (a split level's least planes on "
                             "every rank: thinner, it is gathered)", e);
        *planes = (int)v;
    }
    return KEDR_OK;
}

/* KEDR_FLOW_MG_HALO: the planes a smoothing exchange lends (2, default: one exchange for two
 * half-sweeps where every rank holds two planes of the level; 1: one exchange a half-sweep). */
static kedr_status halo_planes(int *out)
{
    const char *e = getenv("KEDR_FLOW_MG_HALO");
    *out = 2;
    if (!e || !*e || !strcmp(e, "2"))
        return KEDR_OK;
    if (!strcmp(e, "1")) {
        *out = 1;
        return KEDR_OK;
    }
    return kedr_fail(KEDR_ERR_INVALID, "KEDR_FLOW_MG_HALO = '%s': expected 1 (a smoothing "
                     "exchange a half-sweep) or 2 (one exchange of two planes for two "
                     "half-sweeps)", e);
}

/* The two-plane smoothing's buffers and views of split level l (every rank holds two planes
 * of it; deep3: three). */
static kedr_status ghost_setup(kedr_flow_poisson *ps, int l, int deep3)
{
    flow_rk_level *R = &ps->rk->lv[l];
    const flow_level *F = &ps->lv[l];
    int ax = ps->rk->axis;
    size_t layer = R->layer;
    /* t3lo, t3hi and their inverse diagonals, 3 planes each */
    KEDR_TRY(kedr_alloc(ps->ctx, (void **)&R->gbuf, 12 * layer * sizeof(double)));
    KEDR_TRY(kedr_memset(ps->ctx, R->gbuf, 0, 12 * layer * sizeof(double)));
    R->t3lo = R->gbuf;
    R->t3hi = R->gbuf + 3 * layer;
    double *idlo = R->gbuf + 6 * layer, *idhi = R->gbuf + 9 * layer;
    flow_level *v[4] = {&R->glo, &R->ghi, &R->glo3, &R->ghi3};
    double *id[4] = {idlo + layer, idhi, idlo, idhi};
    for (int i = 0; i < 4; i++) {
        flow_level *G = v[i];
        memset(G, 0, sizeof *G);
        for (int a = 0; a < 3; a++) {
            G->n[a] = F->n[a];
            G->ih2[a] = F->ih2[a];
            G->per[a] = F->per[a];
        }
        G->n[ax] = i < 2 ? 2 : 3;
        G->per[ax] = 0;
        G->N = (size_t)G->n[ax] * layer;
        G->idiag = id[i];
    }
    R->deep = 1;
    R->deep3 = deep3;
    return KEDR_OK;
}

/* i moved by a multiple of n into [lo, lo + n) */
static int unwrap(int i, int lo, int n)
{
    return lo + ((i - lo) % n + n) % n;
}

/* The split axis' tables of level l (this rank's planes), from the whole axis' (nf fine, nc
 * coarse planes): prolongation from the next level's slab with its ghosts (dist) or from the
 * whole gathered level, restriction into the next level's planes [co, co + ccnt) from the fine
 * slab with its ghosts. */
static kedr_status split_tables(kedr_flow_poisson *ps, int l, int nf, int nc, int coarsened,
                                int per, int co, int ccnt, int dist)
{
    flow_ranks *rk = ps->rk;
    const flow_rk_level *R = &rk->lv[l];
    int off = R->off, cnt = R->cnt, h = R->halo;
    int fbase = off - 2 * h, fext = cnt + 4 * h;
    int cbase = dist ? co - 2 * h : 0, cext = dist ? ccnt + 4 * h : nc;
    flow_axis_tables g, t;
    KEDR_TRY(flow_mg_axis_host(nf, nc, coarsened, per, &g));
    t.p_idx = malloc(2 * (size_t)cnt * sizeof(int));
    t.p_w = malloc(2 * (size_t)cnt * sizeof(double));
    t.r_cnt = calloc((size_t)ccnt + 1, sizeof(int));
    t.r_idx = calloc(4 * (size_t)ccnt + 1, sizeof(int));
    t.r_w = calloc(4 * (size_t)ccnt + 1, sizeof(double));
    kedr_status s = KEDR_OK;
    if (!t.p_idx || !t.p_w || !t.r_cnt || !t.r_idx || !t.r_w)
        s = kedr_fail(KEDR_ERR_NOMEM, "multigrid over ranks: tables of %d planes", cnt);
    for (int f = 0; f < cnt && s == KEDR_OK; f++) {
        int fg = off + f;
        for (int e = 0; e < 2; e++) {
            int I = g.p_idx[2 * fg + e];
            if (dist && per) /* a plane beyond the slab: the ghost next to it */
                I = unwrap(I, fg / 2 - 1, nc);
            int idx = I - cbase;
            if (idx < 0 || idx >= cext)
                s = kedr_fail(KEDR_ERR_INVALID, "multigrid over ranks: level %d plane %d reads "
                              "coarse plane %d outside [%d, %d)", l, fg, I, cbase, cbase + cext);
            t.p_idx[2 * f + e] = idx;
            t.p_w[2 * f + e] = g.p_w[2 * fg + e];
        }
    }
    for (int I = 0; I < ccnt && s == KEDR_OK; I++) {
        int Ig = co + I;
        t.r_cnt[I] = g.r_cnt[Ig];
        for (int e = 0; e < g.r_cnt[Ig]; e++) {
            int f = g.r_idx[4 * Ig + e];
            if (h && per)
                f = unwrap(f, 2 * Ig - 1, nf);
            int idx = f - fbase;
            if (idx < 0 || idx >= fext)
                s = kedr_fail(KEDR_ERR_INVALID, "multigrid over ranks: level %d coarse plane %d "
                              "reads plane %d outside [%d, %d)", l + 1, Ig, f, fbase,
                              fbase + fext);
            t.r_idx[4 * I + e] = idx;
            t.r_w[4 * I + e] = g.r_w[4 * Ig + e];
        }
    }
    if (s == KEDR_OK)
        s = flow_mg_axis_upload(ps->ctx, &ps->lv[l], rk->axis, cnt, ccnt, &t);
    flow_mg_axis_free(&g);
    flow_mg_axis_free(&t);
    return s;
}

static int min_planes(const int *offs, int nr)
{
    int m = offs[1] - offs[0];
    for (int r = 1; r < nr; r++)
        m = offs[r + 1] - offs[r] < m ? offs[r + 1] - offs[r] : m;
    return m;
}

static kedr_status alloc_planes(kedr_ctx *ctx, double **v, size_t planes, size_t layer)
{
    size_t n = planes * layer;
    return kedr_alloc(ctx, (void **)v, (n ? n : 1) * sizeof(double));
}

/* The levels over the ranks; offs: every rank's first plane (nr + 1 entries), work: as many. */
static kedr_status setup_levels(kedr_flow_poisson *ps, int *offs, int *next, double limit,
                                int planes, int deep)
{
    flow_ranks *rk = ps->rk;
    kedr_ctx *ctx = ps->ctx;
    int ax = rk->axis, nr = kedr_comm_size(rk->comm), me = kedr_comm_rank(rk->comm);
    /* the whole grid's level 0 */
    int gn[3], gper[3];
    double gih2[3], scale[3];
    for (int a = 0; a < 3; a++) {
        gn[a] = ps->lv[0].n[a];
        gper[a] = ps->lv[0].per[a];
        gih2[a] = ps->lv[0].ih2[a];
        scale[a] = 1;
    }
    gn[ax] = rk->gn;
    gper[ax] = rk->periodic;
    gih2[ax] = rk->gn > 1 ? rk->ih2 : 0.0;
    for (int l = 0;; l++) {
        flow_level *F = &ps->lv[l];
        flow_rk_level *R = &rk->lv[l];
        R->off = offs[me];
        R->cnt = offs[me + 1] - offs[me];
        R->layer = F->N / (size_t)R->cnt;
        R->ih2 = gih2[ax];
        int cf[3], nc[3];
        int more = flow_mg_next(gn, gper, cf, nc) && l + 1 < FLOW_MAX_LEVELS;
        if (!more || (cf[ax] && min_planes(offs, nr) < 2)) {
            /* the coarsest level, or slabs too thin to lend two planes: gathered here */
            memset(F->coarsened, 0, sizeof F->coarsened);
            rk->gather_at = l;
            rk->goff = R->off;
            rk->gcnt = R->cnt;
            rk->glayer = R->layer;
            break;
        }
        for (int r = 0; r <= nr; r++)
            next[r] = cf[ax] ? (offs[r] + 1) / 2 : offs[r];
        next[nr] = nc[ax];
        double cells = (double)nc[0] * nc[1] * nc[2];
        int dist = min_planes(next, nr) >= planes && cells > limit;
        memcpy(F->coarsened, cf, sizeof cf);
        R->halo = cf[ax];
        if (deep && nr > 1 && min_planes(offs, nr) >= 2) /* level l is split */
            KEDR_TRY(ghost_setup(ps, l, min_planes(offs, nr) >= 3));
        int co = next[me], ccnt = next[me + 1] - next[me];
        if (l > 0 || R->halo) {
            KEDR_TRY(alloc_planes(ctx, &R->rbase, (size_t)R->cnt + 4 * (size_t)R->halo,
                                  R->layer));
            R->r = R->rbase + 2 * (size_t)R->halo * R->layer;
        } else {
            R->r = F->r;
        }
        /* the other axes are the whole grid's: one rank's tables */
        for (int a = 0; a < 3; a++)
            if (a != ax) {
                flow_axis_tables t;
                KEDR_TRY(flow_mg_axis_host(F->n[a], nc[a], cf[a], F->per[a], &t));
                kedr_status s = flow_mg_axis_upload(ctx, F, a, F->n[a], nc[a], &t);
                flow_mg_axis_free(&t);
                KEDR_TRY(s);
            }
        KEDR_TRY(split_tables(ps, l, gn[ax], nc[ax], cf[ax], gper[ax], co, ccnt, dist));
        for (int a = 0; a < 3; a++) {
            gih2[a] = nc[a] > 1 ? (cf[a] ? gih2[a] / 4 : gih2[a]) : 0.0;
            scale[a] *= cf[a] ? 2 : 1;
            gn[a] = nc[a];
        }
        memcpy(offs, next, (size_t)(nr + 1) * sizeof *offs);
        if (!dist) { /* the next level is gathered */
            rk->gather_at = l + 1;
            rk->goff = co;
            rk->gcnt = ccnt;
            rk->glayer = (size_t)(cells / nc[ax]);
            KEDR_TRY(alloc_planes(ctx, &rk->gpart, (size_t)ccnt, rk->glayer));
            break;
        }
        flow_level *C = &ps->lv[l + 1];
        flow_rk_level *Rc = &rk->lv[l + 1];
        memset(C, 0, sizeof *C);
        C->N = 1;
        for (int a = 0; a < 3; a++) {
            C->n[a] = a == ax ? ccnt : nc[a];
            C->per[a] = a == ax ? 0 : gper[a];
            C->ih2[a] = gih2[a];
            C->N *= (size_t)C->n[a];
        }
        ps->nlevels = l + 2;
        double **v[] = {&C->diag, &C->idiag, &C->b};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            KEDR_TRY(kedr_alloc(ctx, (void **)v[i], C->N * sizeof(double)));
        KEDR_TRY(flow_level_diag(ctx, C));
        KEDR_TRY(flow_rk_end_diag(ps, C, C->N / (size_t)ccnt, gih2[ax]));
        /* the correction, with ghost planes where the prolongation reads the neighbours' */
        KEDR_TRY(alloc_planes(ctx, &Rc->xbase, (size_t)ccnt + 4 * (size_t)R->halo,
                              C->N / (size_t)ccnt));
        Rc->x = Rc->xbase + 2 * (size_t)R->halo * (C->N / (size_t)ccnt);
    }
    /* the one-rank solver of the gathered level: the cell sizes of that level (h doubled per
     * halving: 1/h^2 is then one rank's to the bit) */
    kedr_flow_poisson_opts so;
    kedr_flow_poisson_defaults(&so);
    for (int a = 0; a < 3; a++) {
        so.n[a] = gn[a];
        so.h[a] = ps->o.h[a] * scale[a];
        so.periodic[a] = gper[a];
    }
    so.method = KEDR_FLOW_METHOD_MG;
    so.steps = ps->o.steps;
    so.max_iter = 1;
    KEDR_TRY(kedr_flow_poisson_create(ctx, &so, &rk->sub));
    size_t Ng = rk->sub->lv[0].N;
    KEDR_TRY(kedr_alloc(ctx, (void **)&rk->gb, Ng * sizeof(double)));
    KEDR_TRY(kedr_alloc(ctx, (void **)&rk->gx, Ng * sizeof(double)));
    /* every rank's planes of the gathered level, and the gather's messages */
    rk->goffs = malloc(((size_t)nr + 1) * sizeof *rk->goffs);
    rk->gmsg = malloc(2 * (size_t)nr * sizeof *rk->gmsg);
    if (!rk->goffs || !rk->gmsg)
        return kedr_fail(KEDR_ERR_NOMEM, "multigrid over ranks: the gather's messages of %d "
                         "ranks", nr);
    memcpy(rk->goffs, offs, ((size_t)nr + 1) * sizeof *offs);
    return KEDR_OK;
}

kedr_status flow_rk_mg_setup(kedr_flow_poisson *ps)
{
    flow_ranks *rk = ps->rk;
    int nr = kedr_comm_size(rk->comm), me = kedr_comm_rank(rk->comm);
    double limit;
    int planes, halo;
    KEDR_TRY(gather_rule(ps->ctx, &limit, &planes));
    KEDR_TRY(halo_planes(&halo));
    int *offs = malloc(2 * ((size_t)nr + 1) * sizeof(int));
    if (!offs)
        return kedr_fail(KEDR_ERR_NOMEM, "multigrid over ranks: %d ranks", nr);
    for (int r = 0; r < nr; r++) {
        int cnt;
        flow_slab(rk->gn, r, nr, &offs[r], &cnt);
    }
    offs[nr] = rk->gn;
    kedr_status s = KEDR_OK;
    if (offs[me] != rk->lv[0].off || offs[me + 1] - offs[me] != rk->lv[0].cnt)
        s = kedr_fail(KEDR_ERR_INVALID, "multigrid over ranks: rank %d's slab [%d, +%d) is not "
                      "the split's [%d, +%d)", me, rk->lv[0].off, rk->lv[0].cnt, offs[me],
                      offs[me + 1] - offs[me]);
    if (s == KEDR_OK)
        s = setup_levels(ps, offs, offs + nr + 1, limit, planes, halo == 2);
    free(offs);
    return s;
}

void flow_rk_mg_free(kedr_flow_poisson *ps)
{
    flow_ranks *rk = ps->rk;
    if (!rk)
        return;
    for (int l = 0; l < FLOW_MAX_LEVELS; l++) {
        flow_rk_level *R = &rk->lv[l];
        kedr_free(ps->ctx, R->rbase);
        kedr_free(ps->ctx, R->xbase);
        kedr_free(ps->ctx, R->gbuf);
        R->rbase = R->xbase = R->r = R->x = R->gbuf = NULL;
        R->deep = R->deep3 = 0;
    }
    kedr_flow_poisson_destroy(rk->sub);
    kedr_free(ps->ctx, rk->gpart);
    kedr_free(ps->ctx, rk->gb);
    kedr_free(ps->ctx, rk->gx);
    kedr_comm_dev_release(rk->gdev);
    free(rk->goffs);
    free(rk->gmsg);
    rk->sub = NULL;
    rk->gdev = NULL;
    rk->goffs = NULL;
    rk->gmsg = NULL;
    rk->gpart = rk->gb = rk->gx = NULL;
}

/* One red-black half-sweep of level l's slab in the grid's colours, the neighbours' planes
 * below and above (next to its ends) added to the right-hand side of its end planes. */
static kedr_status sweep(kedr_flow_poisson *ps, int l, double *x, const double *b, int colour,
                         const double *below, const double *above)
{
    flow_ranks *rk = ps->rk;
    const flow_rk_level *R = &rk->lv[l];
    return flow_op_gs_ends(ps->ctx, &ps->lv[l], x, b, colour ^ (R->off & 1), R->layer, R->ih2,
                           rk->lo >= 0 ? below : NULL, rk->hi >= 0 ? above : NULL);
}

/* The same after a one-plane exchange of x's end planes (flow_rk_gs_halo: the interior rows
 * during the exchange with KEDR_FLOW_OVERLAP=1); zero: x is 0 (nothing to lend). */
static kedr_status rk_gs(kedr_flow_poisson *ps, int l, double *x, const double *b, int colour,
                         int zero)
{
    const flow_rk_level *R = &ps->rk->lv[l];
    const flow_level *L = &ps->lv[l];
    if (zero)
        return flow_op_gs(ps->ctx, L, x, b, colour ^ (R->off & 1));
    return flow_rk_gs_halo(ps, L, x, b, colour ^ (R->off & 1), R->layer, R->ih2);
}

/* Two half-sweeps, colour c then c ^ 1, after one exchange of two planes (and, the first time a
 * V-cycle visits the level, of b's: *have_b). The second half-sweep needs the neighbours' end
 * planes (G1) after their first: each rank computes those cells itself, from G1's other
 * colour, the plane beyond (E2), its own end plane and the neighbour's b and inverse diagonal,
 * in the order of the neighbour's own sums (the ghost view [E2 | G1] or [G1 | E2] puts E2
 * where the neighbour's slab has it, and this rank's end plane is added to the right-hand side
 * as the neighbour adds it): the same values to the bit. The view's sweep also writes E2's
 * cells of colour c (from a zero or unused right-hand side): never read before the next
 * exchange.
 * full (every rank holds three planes): three planes are lent, the first ghost half-sweep
 * covers E2 and G1 (view [E3 | E2 | G1]: E2 is then current in colour c too, as the neighbour
 * has it), and after this rank's own first half-sweep a second ghost half-sweep brings G1's
 * other colour up to date: G1 is then the neighbour's end plane after both half-sweeps, which
 * the residual reads without an exchange. */
#define TAG_PAIR 50
static kedr_status gs_pair(kedr_flow_poisson *ps, int l, double *x, const double *b, int c,
                           int *have_b, int full)
{
    flow_ranks *rk = ps->rk;
    flow_rk_level *R = &rk->lv[l];
    kedr_ctx *ctx = ps->ctx;
    int planes = full ? 3 : 2;
    size_t layer = R->layer, count = (size_t)planes * layer;
    size_t end = (size_t)(R->cnt - planes) * layer, mylast = (size_t)(R->cnt - 1) * layer;
    const double *first[2] = {x, b}, *last[2] = {x + end, b + end};
    /* KEDR_FLOW_OVERLAP: the first half-sweep on the planes neither sent nor next to a ghost
     * (planes .. cnt - planes - 1) runs on the side stream while the planes travel: colour c's
     * cells read colour c ^ 1 only, which nothing writes until the second half-sweep */
    size_t rpp = layer / (size_t)ps->lv[l].n[0]; /* rows a plane */
    int ovl = rk->overlap && R->cnt >= 2 * planes + 1;
    if (ovl) {
        KEDR_TRY(flow_op_fork(ctx, rk->side));
        KEDR_TRY(flow_op_gs_ends_rows(ctx, &ps->lv[l], x, b, c ^ (R->off & 1), layer, R->ih2,
                                      NULL, NULL, (size_t)planes * rpp,
                                      (size_t)(R->cnt - planes) * rpp, rk->side));
    }
    KEDR_TRY(flow_xch_halo(rk->xch, TAG_PAIR, *have_b ? 1 : 2, first, last, count, NULL, NULL));
    /* in place: below [(E3) | E2 | G1 | b's], above [G1 | E2 | (E3) | b's] */
    double *below = FLOW_XCH_BELOW(rk->xch), *above = FLOW_XCH_ABOVE(rk->xch);
    double *g1lo = below + (size_t)(planes - 1) * layer;
    if (!*have_b) { /* b's E2 and G1 into the views' right-hand sides */
        flow_copies cp = {{NULL}, {NULL}, 0};
        if (rk->lo >= 0) {
            cp.dst[cp.n] = R->t3lo + layer;
            cp.src[cp.n++] = below + count + (size_t)(planes - 2) * layer;
        }
        if (rk->hi >= 0) {
            cp.dst[cp.n] = R->t3hi;
            cp.src[cp.n++] = above + count;
        }
        KEDR_TRY(flow_op_copies(ctx, &cp, 2 * layer));
        *have_b = 1;
    }
    /* the neighbours' first half-sweep on their end planes (G1, and E2 when full) */
    if (rk->lo >= 0) /* G1 is the view's last plane, this rank's first plane above it */
        KEDR_TRY(flow_op_gs_ends(ctx, full ? &R->glo3 : &R->glo, below,
                                 full ? R->t3lo : R->t3lo + layer,
                                 c ^ ((R->off - planes) & 1), layer, R->ih2, NULL, x));
    if (rk->hi >= 0) /* G1 is the view's first plane, this rank's last plane below it */
        KEDR_TRY(flow_op_gs_ends(ctx, full ? &R->ghi3 : &R->ghi, above, R->t3hi,
                                 c ^ ((R->off + R->cnt) & 1), layer, R->ih2, x + mylast, NULL));
    if (ovl) { /* this rank's first half-sweep on the planes left, then the interior's joined */
        const double *lo = rk->lo >= 0 ? g1lo : NULL, *hi = rk->hi >= 0 ? above : NULL;
        int col = c ^ (R->off & 1);
        KEDR_TRY(flow_op_gs_ends_rows(ctx, &ps->lv[l], x, b, col, layer, R->ih2, lo, hi, 0,
                                      (size_t)planes * rpp, NULL));
        KEDR_TRY(flow_op_gs_ends_rows(ctx, &ps->lv[l], x, b, col, layer, R->ih2, lo, hi,
                                      (size_t)(R->cnt - planes) * rpp, (size_t)R->cnt * rpp,
                                      NULL));
        KEDR_TRY(flow_op_join(ctx, rk->side));
    } else {
        KEDR_TRY(sweep(ps, l, x, b, c, g1lo, above));
    }
    if (full) { /* their second half-sweep on G1, from E2 and this rank's plane after the first */
        if (rk->lo >= 0)
            KEDR_TRY(flow_op_gs_ends(ctx, &R->glo, below + layer, R->t3lo + layer,
                                     (c ^ 1) ^ ((R->off - 2) & 1), layer, R->ih2, NULL, x));
        if (rk->hi >= 0)
            KEDR_TRY(flow_op_gs_ends(ctx, &R->ghi, above, R->t3hi,
                                     (c ^ 1) ^ ((R->off + R->cnt) & 1), layer, R->ih2,
                                     x + mylast, NULL));
    }
    return sweep(ps, l, x, b, c ^ 1, g1lo, above);
}

/* 2 steps half-sweeps of level l in colours c, c ^ 1, c, ...; zero: from x = 0 (the first
 * half-sweep needs no exchange). Two at a time after one exchange where the level allows;
 * from zero (before the residual) on a level of three planes a rank, the last two after a
 * three-plane exchange, so that the neighbours' end planes are current here: *ghosts (then the
 * residual reads them from the exchange's receive areas, G1 at FLOW_XCH_BELOW + 2 planes and
 * FLOW_XCH_ABOVE). */
static kedr_status smooth(kedr_flow_poisson *ps, int l, double *x, const double *b, int c,
                          int zero, int *have_b, int *ghosts)
{
    const flow_rk_level *R = &ps->rk->lv[l];
    int n = 2 * ps->o.steps, pairs = ps->rk->deep && R->deep, full = zero && pairs && R->deep3;
    int h = zero, last_full = 0;
    if (zero)
        KEDR_TRY(rk_gs(ps, l, x, b, c, 1));
    if (full && (n - h) % 2) { /* the odd one first, so that a pair comes last */
        KEDR_TRY(rk_gs(ps, l, x, b, (c + h) & 1, 0));
        h++;
    }
    while (h < n) {
        int colour = (c + h) & 1;
        if (pairs && n - h >= 2) {
            last_full = full && n - h == 2;
            KEDR_TRY(gs_pair(ps, l, x, b, colour, have_b, last_full));
            h += 2;
        } else {
            KEDR_TRY(rk_gs(ps, l, x, b, colour, 0));
            last_full = 0;
            h++;
        }
    }
    *ghosts = last_full;
    return KEDR_OK;
}

kedr_status flow_rk_mg_ghosts(kedr_flow_poisson *ps)
{
    flow_ranks *rk = ps->rk;
    int planes;
    KEDR_TRY(halo_planes(&planes));
    int32_t want = planes == 2; /* on only where every rank asks for it */
    KEDR_TRY(kedr_comm_allreduce(rk->comm, KEDR_I32, KEDR_OP_MIN, &want, 1));
    rk->deep = want != 0;
    for (int l = 0; rk->deep && l < rk->gather_at; l++) {
        flow_rk_level *R = &rk->lv[l];
        if (!R->deep) /* the same levels on every rank: every rank's slab counts */
            continue;
        const flow_level *L = &ps->lv[l];
        size_t layer = R->layer;
        /* the neighbours' two end planes: lo [E2 | G1], hi [G1 | E2] */
        const double *first = L->idiag, *last = L->idiag + L->N - 2 * layer;
        double *lo = (double *)R->glo3.idiag + layer, *hi = (double *)R->ghi3.idiag;
        KEDR_TRY(flow_xch_halo(rk->xch, 60, 1, &first, &last, 2 * layer, &lo, &hi));
    }
    return KEDR_OK;
}

/* The two planes next to each end of a slab of cnt planes at v, into the ghost planes around
 * it (v - 2 layer .., v + cnt layer ..). */
static kedr_status halo2(kedr_flow_poisson *ps, double *v, int cnt, size_t layer)
{
    const double *first = v, *last = v + (size_t)(cnt - 2) * layer;
    double *below = v - 2 * layer, *above = v + (size_t)cnt * layer;
    return flow_xch_halo(ps->rk->xch, 30, 1, &first, &last, 2 * layer, &below, &above);
}

/* The gathered level's b on every rank, from each rank's planes of it (part): this rank's
 * planes into its own gb, then into every other rank's (registered: GPU to GPU where the ranks
 * allow), the others' planes arriving in its gb. */
#define TAG_GATHER 40
static kedr_status gather(kedr_flow_poisson *ps, const double *part)
{
    flow_ranks *rk = ps->rk;
    int nr = kedr_comm_size(rk->comm), me = kedr_comm_rank(rk->comm);
    size_t plane = rk->glayer * sizeof(double);
    if (flow_prof()) /* the time from here is the gather's */
        KEDR_TRY(kedr_ctx_sync(ps->ctx));
    double t0 = kedr_wall_seconds();
    size_t at = (size_t)rk->goff * plane, mine = (size_t)rk->gcnt * plane;
    if (mine)
        KEDR_TRY(flow_op_copy(ps->ctx, (char *)rk->gb + at, part, mine));
    kedr_comm_dev_msg *snd = rk->gmsg, *rcv = rk->gmsg + nr;
    int ns = 0, nrc = 0;
    for (int q = 0; q < nr; q++) {
        size_t cq = (size_t)(rk->goffs[q + 1] - rk->goffs[q]) * plane;
        if (q == me)
            continue;
        if (mine)
            snd[ns++] = (kedr_comm_dev_msg){q, TAG_GATHER, at, at, mine};
        if (cq)
            rcv[nrc++] = (kedr_comm_dev_msg){q, TAG_GATHER, 0, (size_t)rk->goffs[q] * plane, cq};
    }
    KEDR_TRY(kedr_comm_dev_sendrecv(rk->gdev, ns, snd, nrc, rcv));
    if (flow_prof()) /* ordered transfers complete on the device: their time to here */
        KEDR_TRY(kedr_ctx_sync(ps->ctx));
    rk->gather_seconds += kedr_wall_seconds() - t0;
    rk->gathers++;
    return KEDR_OK;
}

/* The gathered level's V-cycle, timed as the coarse solve. */
static kedr_status coarse(kedr_flow_poisson *ps)
{
    flow_part_mark m = flow_rk_part_begin(ps);
    KEDR_TRY(flow_mg_vcycle(ps->rk->sub, ps->rk->gb, ps->rk->gx));
    return flow_rk_part_end(ps, FLOW_PART_COARSE, m);
}

static kedr_status cycle(kedr_flow_poisson *ps, int l, const double *b, double *x)
{
    flow_ranks *rk = ps->rk;
    kedr_ctx *ctx = ps->ctx;
    const flow_rk_level *R = &rk->lv[l];
    const flow_level *L = &ps->lv[l];
    int ax = rk->axis;
    flow_part_mark m;
    if (l == rk->gather_at) { /* the whole level here: one rank's V-cycle, this slab kept */
        KEDR_TRY(gather(ps, b));
        KEDR_TRY(coarse(ps));
        m = flow_rk_part_begin(ps);
        KEDR_TRY(flow_op_copy(ctx, x, rk->gx + (size_t)R->off * R->layer, L->N * sizeof *x));
        return flow_rk_part_end(ps, FLOW_PART_TRANSFER, m);
    }
    m = flow_rk_part_begin(ps);
    KEDR_TRY(kedr_memset(ctx, x, 0, L->N * sizeof *x));
    int have_b = 0, ghosts; /* the neighbours' b lent; their end planes current here */
    KEDR_TRY(smooth(ps, l, x, b, 0, 1, &have_b, &ghosts));
    KEDR_TRY(flow_rk_part_end(ps, FLOW_PART_SMOOTH, m));
    m = flow_rk_part_begin(ps);
    if (ghosts) /* as flow_rk_residual_at, the neighbours' planes already here */
        KEDR_TRY(flow_op_apply_ends(ctx, L, x, b, R->r, R->layer, R->ih2,
                                    rk->lo >= 0 ? FLOW_XCH_BELOW(rk->xch) + 2 * R->layer : NULL,
                                    rk->hi >= 0 ? FLOW_XCH_ABOVE(rk->xch) : NULL));
    else
        KEDR_TRY(flow_rk_residual_at(ps, l, x, b, R->r));
    KEDR_TRY(flow_rk_part_end(ps, FLOW_PART_RESIDUAL, m));
    if (R->halo)
        KEDR_TRY(halo2(ps, R->r, R->cnt, R->layer));
    m = flow_rk_part_begin(ps);
    /* restriction into this rank's planes of the next level */
    int dist = l + 1 < ps->nlevels;
    flow_level Fx = *L, Cx = dist ? ps->lv[l + 1] : rk->sub->lv[0];
    Fx.n[ax] = R->cnt + 4 * R->halo;
    Fx.N = L->N / (size_t)R->cnt * (size_t)Fx.n[ax];
    double *cb = dist ? ps->lv[l + 1].b : rk->gpart;
    if (!dist) {
        Cx.N = Cx.N / (size_t)Cx.n[ax] * (size_t)rk->gcnt;
        Cx.n[ax] = rk->gcnt;
    }
    if (Cx.N > 0)
        KEDR_TRY(flow_op_restrict(ctx, &Fx, &Cx, R->halo ? R->rbase : R->r, cb));
    KEDR_TRY(flow_rk_part_end(ps, FLOW_PART_TRANSFER, m));
    /* the coarse correction and its prolongation */
    flow_level Cp;
    const double *xc;
    if (dist) {
        const flow_rk_level *Rc = &rk->lv[l + 1];
        KEDR_TRY(cycle(ps, l + 1, cb, Rc->x));
        if (R->halo)
            KEDR_TRY(halo2(ps, Rc->x, Rc->cnt, Rc->layer));
        Cp = ps->lv[l + 1];
        Cp.n[ax] = Rc->cnt + 4 * R->halo;
        Cp.N = Cp.N / (size_t)Rc->cnt * (size_t)Cp.n[ax];
        xc = R->halo ? Rc->xbase : Rc->x;
    } else {
        KEDR_TRY(gather(ps, rk->gpart));
        KEDR_TRY(coarse(ps));
        Cp = rk->sub->lv[0];
        xc = rk->gx;
    }
    m = flow_rk_part_begin(ps);
    KEDR_TRY(flow_op_prolong_add(ctx, L, &Cp, xc, x));
    KEDR_TRY(flow_rk_part_end(ps, FLOW_PART_TRANSFER, m));
    m = flow_rk_part_begin(ps);
    KEDR_TRY(smooth(ps, l, x, b, 1, 0, &have_b, &ghosts));
    return flow_rk_part_end(ps, FLOW_PART_SMOOTH, m);
}

kedr_status flow_rk_vcycle(kedr_flow_poisson *ps, const double *r, double *z)
{
    return cycle(ps, 0, r, z);
}
