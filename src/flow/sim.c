/* The flow solver's time step (docs/flow.md): the right-hand side H = -div(u u) + nu lap u in
 * the conservative form of Morinishi et al. (1998), Adams–Bashforth 2, the intermediate velocity
 * with the old pressure gradient, the boundary conditions (walls, moving lids, slip, inflow
 * profiles, convective outflow with the flux balanced, periodic), and the projection:
 * A phi = -div(u~)/dt, u = u~ - dt grad phi, P += phi. The step is a sequence of box operations
 * (sim_ops.h) that run where the context lives; this file says which, on which boxes. */
#include "core/internal.h"
#include "flow/fft.h"
#include "flow/ibm.h"
#include "flow/ops.h"
#include "flow/sim.h"
#include "flow/sim_ops.h"
#include "kedr/comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- allocation -------------------------------------------------------------------------- */

/* What runs over ranks, and what does not yet. */
static kedr_status check_ranks(const kedr_flow_case *c, int nr)
{
    int ax = c->dims - 1;
    if (c->n[ax] < nr)
        return kedr_fail(KEDR_ERR_INVALID, "%s: the grid has %d cells along %c, fewer "
                         "than the %d ranks it is split over (a slab each along the last axis)",
                         c->path, c->n[ax], "xyz"[ax], nr);
    if (c->poisson.method == KEDR_FLOW_METHOD_FFT)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: [pressure] solver = fft is not supported over "
                         "several ranks yet: use solver = mg, or pcg with preconditioner = mg",
                         c->path);
    return KEDR_OK;
}

kedr_status flow_alloc(kedr_ctx *ctx, kedr_comm *comm, const kedr_flow_case *c,
                       struct kedr_flow **out)
{
    *out = NULL;
    KEDR_TRY(kedr_flow_case_check(c));
    int nr = comm ? kedr_comm_size(comm) : 1, rank = comm ? kedr_comm_rank(comm) : 0;
    if (nr > 1)
        KEDR_TRY(check_ranks(c, nr));
    if (!kedr_flow_backend_available(kedr_ctx_backend(ctx)))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr flow: the flow solver runs on the cpu back "
                         "end only in this build (asked for %s)",
                         kedr_backend_name(kedr_ctx_backend(ctx)));
    struct kedr_flow *f = calloc(1, sizeof *f);
    if (!f)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_flow_create: %zu bytes", sizeof *f);
    f->ctx = ctx;
    f->c = *c;
    f->dims = c->dims;
    f->cells = 1;
    f->comm = comm;
    f->rank = rank;
    f->nranks = nr;
    f->split = nr > 1 ? c->dims - 1 : -1;
    f->lo = f->hi = -1;
    kedr_status fs = flow_fuse_env(&f->fuse, KEDR_IS_CUDA(ctx));
    if (fs != KEDR_OK) {
        free(f);
        return fs;
    }
    int off = 0;
    for (int a = 0; a < 3; a++) {
        f->n[a] = a < c->dims ? c->n[a] : 1;
        f->h[a] = a < c->dims ? c->length[a] / c->n[a] : 1.0;
        if (a == f->split)
            flow_slab(c->n[a], rank, nr, &off, &f->n[a]);
        f->cells *= (size_t)f->n[a];
    }
    f->gcells = f->cells;
    if (f->split >= 0) {
        int ax = f->split, per = c->bc[2 * ax].kind == KEDR_FLOW_BC_PERIODIC;
        f->gcells = f->cells / (size_t)f->n[ax] * (size_t)c->n[ax];
        f->lo = rank > 0 ? rank - 1 : per ? nr - 1 : -1;
        f->hi = rank < nr - 1 ? rank + 1 : per ? 0 : -1;
        if (f->lo >= 0) /* an inner end: the neighbour's cells continue the grid */
            f->c.bc[2 * ax].kind = KEDR_FLOW_BC_PERIODIC;
        if (f->hi >= 0)
            f->c.bc[2 * ax + 1].kind = KEDR_FLOW_BC_PERIODIC;
    }
    f->kz = c->dims == 3 ? 1 : 0;
    f->s[0] = 1;
    f->s[1] = (size_t)f->n[0] + 2;
    f->s[2] = f->s[1] * ((size_t)f->n[1] + 2);
    f->padded = f->s[2] * (c->dims == 3 ? (size_t)f->n[2] + 2 : 1);
    flow_grid *g = &f->g;
    g->dims = c->dims;
    g->kz = f->kz;
    g->nu = c->nu;
    g->split = f->split;
    for (int face = 0; face < 6; face++)
        f->gkind[face] = c->bc[face].kind;
    if (f->split >= 0) {
        g->off[f->split] = off;
        g->nsplit = c->n[f->split];
        g->periodic_split = c->bc[2 * f->split].kind == KEDR_FLOW_BC_PERIODIC;
    }
    for (int a = 0; a < 3; a++) {
        g->n[a] = f->n[a];
        g->s[a] = f->s[a];
        g->h[a] = f->h[a];
        g->length[a] = c->length[a];
    }
    for (int face = 0; face < 6; face++) {
        g->kind[face] = f->c.bc[face].kind;
        g->parabolic[face] = c->bc[face].parabolic;
        for (int b = 0; b < 3; b++)
            g->vel[face][b] = c->bc[face].velocity[b];
    }
    kedr_status s = KEDR_OK;
    for (int a = 0; a < c->dims && s == KEDR_OK; a++) {
        double **v[] = {&f->q[a], &f->qt[a], &f->H[a], &f->Hold[a]};
        for (int i = 0; i < 4 && s == KEDR_OK; i++)
            if ((s = kedr_alloc(ctx, (void **)v[i], f->padded * sizeof(double))) == KEDR_OK)
                s = kedr_memset(ctx, *v[i], 0, f->padded * sizeof(double));
    }
    double **w[] = {&f->P, &f->phi, &f->rhs};
    for (int i = 0; i < 3 && s == KEDR_OK; i++)
        if ((s = kedr_alloc(ctx, (void **)w[i], f->cells * sizeof(double))) == KEDR_OK)
            s = kedr_memset(ctx, *w[i], 0, f->cells * sizeof(double));
    if (f->split >= 0) /* every rank goes on to the solver's set-up over ranks, or none */
        s = kedr_comm_agree(comm, s);
    if (s == KEDR_OK) {
        kedr_flow_poisson_opts o = c->poisson;
        for (int a = 0; a < 3; a++) {
            o.n[a] = f->n[a];
            o.h[a] = f->h[a];
            o.periodic[a] = a < c->dims && c->bc[2 * a].kind == KEDR_FLOW_BC_PERIODIC &&
                            a != f->split; /* the slab's ends: coupled by its halos */
        }
        s = kedr_flow_poisson_create(ctx, &o, &f->ps);
        if (f->split >= 0) { /* collective: every rank, or none */
            s = kedr_comm_agree(comm, s);
            if (s == KEDR_OK)
                s = flow_poisson_set_ranks(f->ps, comm, f->split, f->lo, f->hi, off,
                                           c->n[f->split],
                                           c->bc[2 * f->split].kind == KEDR_FLOW_BC_PERIODIC);
        }
    }
    if (s == KEDR_OK && f->split >= 0) {
        size_t layer = f->cells / (size_t)f->n[f->split];
        double **lay[] = {&f->below, &f->above, &f->below_P};
        for (int i = 0; i < 3 && s == KEDR_OK; i++)
            if ((s = kedr_alloc(ctx, (void **)lay[i], layer * sizeof(double))) == KEDR_OK)
                s = kedr_memset(ctx, *lay[i], 0, layer * sizeof(double));
        /* the halos: every velocity component's padded layer (larger than a layer of cells) */
        if (s == KEDR_OK)
            s = flow_xch_alloc(ctx, comm, f->lo, f->hi, (size_t)c->dims * f->s[f->split],
                               &f->xch);
    }
    if (f->split >= 0) { /* one rank out of memory stops them all */
        s = kedr_comm_agree(comm, s);
        if (s == KEDR_OK)
            s = flow_xch_register(f->xch);
    }
    if (s == KEDR_OK)
        s = flow_ibm_create(f, &f->ibm);
    if (f->split >= 0) { /* then the bodies' sums over ranks, registered by every rank */
        s = kedr_comm_agree(comm, s);
        if (s == KEDR_OK && f->ibm)
            s = flow_ibm_register(f);
    }
    if (s == KEDR_OK)
        s = flow_ibm_place(f, 0);
    if (s != KEDR_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", kedr_last_error());
        kedr_flow_destroy(f);
        if (s == KEDR_ERR_NOMEM) {
            char b[32];
            return kedr_fail(s, "%s: the grid needs about %s", why,
                             kedr_format_bytes(kedr_flow_bytes(c), b, sizeof b));
        }
        return kedr_fail(s, "%s", why);
    }
    *out = f;
    return KEDR_OK;
}

static void halo_time(const struct kedr_flow *f, double *seconds, int64_t *count);

/* The step's parts timed under KEDR_FLOW_PROF=1 (kedr_flow_destroy prints them). */
enum { FLOW_STEP_ADVANCE, FLOW_STEP_BODIES, FLOW_STEP_OUTFLOW, FLOW_STEP_FILL,
       FLOW_STEP_PRESSURE, FLOW_STEP_CORRECT, FLOW_STEP_UMAX, FLOW_STEP_PARTS };
static const char *const step_part_name[FLOW_STEP_PARTS] = {
    "advance", "bodies", "outflow", "fill", "pressure", "correct", "umax"};

void kedr_flow_destroy(kedr_flow *f)
{
    if (!f)
        return;
    if (flow_prof() && f->step > 0) { /* for bench/flow-ranks.sh: the step by part */
        char line[512];
        int at = snprintf(line, sizeof line, "kedr flow: rank %d: step by part, ms a step:",
                          f->rank);
        for (int p = 0; p < FLOW_STEP_PARTS && at > 0 && at < (int)sizeof line; p++)
            at += snprintf(line + at, sizeof line - (size_t)at, "%s %s %.3f", p ? "," : "",
                           step_part_name[p], 1e3 * f->sp[p] / (double)f->step);
        fprintf(stderr, "%s\n", line);
    }
    double sec = 0;
    int64_t n = 0;
    if (f->split >= 0)
        halo_time(f, &sec, &n);
    if (f->split >= 0 && flow_prof()) /* for bench/flow-ranks.sh */
        fprintf(stderr, "kedr flow: rank %d: %lld steps, %.6f s in steps, %.6f s in %lld halo "
                "exchanges and gathers (%s)\n", f->rank, (long long)f->step, f->seconds_step,
                sec, (long long)n,
                !kedr_comm_dev_direct(f->xch ? f->xch->dev : NULL, f->lo >= 0 ? f->lo : f->hi)
                    ? "through the host"
                    : f->xch->signal ? "GPU to GPU, signalled" : "GPU to GPU");
    const kedr_flow_poisson *ps = f->ps;
    if (ps && flow_prof() && f->step > 0) { /* the pressure solver's parts, ms a step */
        const flow_ranks *rk = ps->rk;
        double k = 1e3 / (double)f->step, pxch = rk ? rk->xch->seconds + rk->gather_seconds : 0;
        double sum = pxch;
        for (int p = 0; p < FLOW_PARTS; p++)
            sum += ps->part[p];
        fprintf(stderr, "kedr flow: rank %d: ms a step: smoothing %.3f, residual %.3f, "
                "transfers %.3f, coarse %.3f, reductions %.3f, operator %.3f, pressure "
                "exchanges %.3f (%lld a step), pressure other %.3f; step exchanges %.3f, "
                "bodies %.3f (sums %.3f, %.1f a step), step %.3f\n", f->rank,
                k * ps->part[FLOW_PART_SMOOTH], k * ps->part[FLOW_PART_RESIDUAL],
                k * ps->part[FLOW_PART_TRANSFER], k * ps->part[FLOW_PART_COARSE],
                k * ps->part[FLOW_PART_REDUCE], k * ps->part[FLOW_PART_OPERATOR], k * pxch,
                rk ? (long long)((rk->xch->count + rk->gathers) / f->step) : 0LL,
                k * (f->seconds_poisson - sum), k * sec, f->ibm ? k * f->ibm->seconds : 0,
                f->ibm ? k * f->ibm->sum_seconds : 0,
                f->ibm ? (double)f->ibm->sums / (double)f->step : 0, k * f->seconds_step);
    }
    for (int a = 0; a < 3; a++) {
        kedr_free(f->ctx, f->q[a]);
        kedr_free(f->ctx, f->qt[a]);
        kedr_free(f->ctx, f->H[a]);
        kedr_free(f->ctx, f->Hold[a]);
    }
    kedr_free(f->ctx, f->P);
    kedr_free(f->ctx, f->phi);
    kedr_free(f->ctx, f->rhs);
    kedr_flow_poisson_destroy(f->ps);
    flow_ibm_destroy(f->ibm);
    kedr_free(f->ctx, f->below);
    kedr_free(f->ctx, f->above);
    kedr_free(f->ctx, f->below_P);
    flow_xch_free(f->xch);
    free(f);
}

/* ---- host copies ---------------------------------------------------------------------- */

kedr_status flow_host_get(const struct kedr_flow *f, flow_host *h)
{
    memset(h, 0, sizeof *h);
    if (kedr_ctx_backend(f->ctx) == KEDR_BACKEND_CPU) {
        for (int a = 0; a < f->dims; a++) {
            h->q[a] = f->q[a];
            h->Hold[a] = f->Hold[a];
        }
        h->P = f->P;
        return KEDR_OK;
    }
    h->owned = 1;
    kedr_status s = KEDR_OK;
    for (int a = 0; a < f->dims && s == KEDR_OK; a++) {
        h->q[a] = malloc(f->padded * sizeof(double));
        h->Hold[a] = malloc(f->padded * sizeof(double));
        if (!h->q[a] || !h->Hold[a])
            s = kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes of host memory",
                          2 * f->padded * sizeof(double));
        if (s == KEDR_OK)
            s = kedr_download(f->ctx, h->q[a], f->q[a], f->padded * sizeof(double));
        if (s == KEDR_OK)
            s = kedr_download(f->ctx, h->Hold[a], f->Hold[a], f->padded * sizeof(double));
    }
    if (s == KEDR_OK && !(h->P = malloc(f->cells * sizeof(double))))
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes of host memory",
                      f->cells * sizeof(double));
    if (s == KEDR_OK)
        s = kedr_download(f->ctx, h->P, f->P, f->cells * sizeof(double));
    if (s != KEDR_OK)
        flow_host_free(h);
    return s;
}

kedr_status flow_host_put(struct kedr_flow *f, const flow_host *h)
{
    f->below_P_ok = 0; /* P may have been written (on the cpu: in place) */
    if (!h->owned)
        return KEDR_OK;
    for (int a = 0; a < f->dims; a++) {
        KEDR_TRY(kedr_upload(f->ctx, f->q[a], h->q[a], f->padded * sizeof(double)));
        KEDR_TRY(kedr_upload(f->ctx, f->Hold[a], h->Hold[a], f->padded * sizeof(double)));
    }
    return kedr_upload(f->ctx, f->P, h->P, f->cells * sizeof(double));
}

void flow_host_free(flow_host *h)
{
    if (h->owned) {
        for (int a = 0; a < 3; a++) {
            free(h->q[a]);
            free(h->Hold[a]);
        }
        free(h->P);
    }
    memset(h, 0, sizeof *h);
}

/* ---- boxes ------------------------------------------------------------------------------ */

/* The padded layer along axis a at index `at`, the other axes over their full padded range. */
static flow_box layer(const struct kedr_flow *f, int a, int at)
{
    flow_box b;
    for (int t = 0; t < 3; t++) {
        b.lo[t] = t == a ? at : 0;
        b.hi[t] = t == a ? at : t == 2 && f->dims == 2 ? 0 : f->n[t] + 1;
    }
    return b;
}

/* The faces of face (a, side) on the box: the layer limited to the box's points. */
static flow_box face_box(const struct kedr_flow *f, int a, int side)
{
    flow_box b;
    for (int t = 0; t < 3; t++) {
        b.lo[t] = t == a ? (side ? f->n[a] + 1 : 1) : t == 2 && f->dims == 2 ? 0 : 1;
        b.hi[t] = t == a ? b.lo[t] : t == 2 && f->dims == 2 ? 0 : f->n[t];
    }
    return b;
}

/* The unknown faces of component b: interior (and, periodic, the first) faces along b. */
static flow_box unknowns(const struct kedr_flow *f, int b)
{
    flow_box x;
    for (int t = 0; t < 3; t++) {
        if (t >= f->dims) {
            x.lo[t] = x.hi[t] = 0;
            continue;
        }
        x.lo[t] = t == b && f->c.bc[2 * t].kind != KEDR_FLOW_BC_PERIODIC ? 2 : 1;
        x.hi[t] = f->n[t];
    }
    return x;
}

/* Every face of component b on the box, both ends along b included. */
static flow_box all_faces(const struct kedr_flow *f, int b)
{
    flow_box x;
    for (int t = 0; t < 3; t++) {
        x.lo[t] = t >= f->dims ? 0 : 1;
        x.hi[t] = t >= f->dims ? 0 : f->n[t] + (t == b);
    }
    return x;
}

static flow_box cells_box(const struct kedr_flow *f)
{
    flow_box x;
    for (int t = 0; t < 3; t++) {
        x.lo[t] = t >= f->dims ? 0 : 1;
        x.hi[t] = t >= f->dims ? 0 : f->n[t];
    }
    return x;
}

static flow_args args_on(double *const q[3])
{
    flow_args A;
    memset(&A, 0, sizeof A);
    for (int a = 0; a < 3; a++)
        A.q[a] = q[a];
    return A;
}

/* ---- boundary conditions ---------------------------------------------------------------- */

kedr_status flow_fill_bc(struct kedr_flow *f, double *const q[3])
{
    flow_args A = args_on(q);
    for (int pass = 0; pass < 2; pass++) /* twice: the edges and corners agree */
        for (int a = 0; a < f->dims; a++) {
            A.axis = a;
            for (int side = 0; side < 2; side++) {
                A.side = side;
                int n = f->n[a];
                KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_BC_NORMAL,
                                      layer(f, a, side ? n + 1 : 1)));
                if (f->c.bc[2 * a].kind == KEDR_FLOW_BC_PERIODIC && !side)
                    KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_BC_PERIODIC_LO,
                                          layer(f, a, 0)));
                for (int b = 0; b < f->dims; b++) {
                    if (b == a)
                        continue;
                    A.other = b;
                    KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_BC_GHOST,
                                          layer(f, a, side ? n + 1 : 0)));
                }
            }
        }
    if (f->split < 0)
        return KEDR_OK;
    /* over ranks: the layers beyond the slab's inner ends are the neighbours' first and last
     * (whole padded layers, their ghosts included), tags 2b and 2b + 1 */
    int ax = f->split, n = f->n[ax];
    size_t L = f->s[ax];
    const double *first[3], *last[3];
    double *below[3], *above[3];
    for (int b = 0; b < f->dims; b++) { /* every component in one message each way */
        first[b] = q[b] + L;
        last[b] = q[b] + (size_t)n * L;
        below[b] = q[b];
        above[b] = q[b] + (size_t)(n + 1) * L;
    }
    return flow_xch_halo(f->xch, 0, f->dims, first, last, L, below, above);
}

/* Over ranks: f->below = the layer of cells of v below the slab (the neighbour's last). */
static kedr_status lend_below(struct kedr_flow *f, const double *v)
{
    if (f->split < 0)
        return KEDR_OK;
    size_t layer = f->cells / (size_t)f->n[f->split];
    const double *last = v + f->cells - layer;
    return flow_xch_halo(f->xch, 10, 1, &v, &last, layer, &f->below, &f->above);
}

/* Over ranks, before the step's right-hand side: the neighbour's last layer of P in f->below,
 * lent; or (KEDR_FLOW_FUSE=1) in f->below_P, lent only when not kept up to date since. */
static kedr_status below_P(struct kedr_flow *f)
{
    if (f->split < 0 || (f->fuse && f->below_P_ok))
        return KEDR_OK;
    KEDR_TRY(lend_below(f, f->P));
    if (!f->fuse)
        return KEDR_OK;
    KEDR_TRY(flow_op_copy(f->ctx, f->below_P, f->below,
                          f->cells / (size_t)f->n[f->split] * sizeof(double)));
    f->below_P_ok = 1;
    return KEDR_OK;
}

/* Over ranks: the sum or the largest of n values over every rank. */
static kedr_status all(const struct kedr_flow *f, kedr_op op, double *v, int n)
{
    return f->split < 0 ? KEDR_OK : kedr_comm_allreduce(f->comm, KEDR_F64, op, v, (size_t)n);
}

/* ---- the step ---------------------------------------------------------------------------- */

kedr_status flow_umax(const struct kedr_flow *f, double *const q[3], double umax[3])
{
    flow_args A = args_on(q);
    for (int a = 0; a < 3; a++)
        umax[a] = 0;
    for (int a = 0; a < f->dims; a++) {
        A.comp = a;
        KEDR_TRY(flow_sop_reduce(f->ctx, &f->g, &A, FLOW_RED_MAXABS, all_faces(f, a), &umax[a]));
    }
    /* walls moving and inflows count from the start */
    for (int face = 0; face < 2 * f->dims; face++)
        for (int a = 0; a < f->dims; a++) {
            const kedr_flow_bc *bc = &f->c.bc[face];
            if (bc->kind == KEDR_FLOW_BC_WALL || bc->kind == KEDR_FLOW_BC_INFLOW) {
                double v = fabs(bc->velocity[a]) *
                           (bc->parabolic ? (f->dims == 3 ? 2.25 : 1.5) : 1);
                umax[a] = v > umax[a] ? v : umax[a];
            }
        }
    /* and moving bodies, at their peak speed (a body must not cross a cell in a step) */
    for (int b = 0; f->ibm && b < f->c.nbodies; b++)
        for (int a = 0; a < f->dims; a++) {
            const kedr_flow_body *B = &f->c.body[b];
            double v = fabs(B->amplitude[a]) * 2 * M_PI * B->frequency + fabs(B->velocity[a]);
            umax[a] = v > umax[a] ? v : umax[a];
        }
    if (f->split >= 0) { /* the largest over ranks (a moving wall is one rank's); NaN anywhere stays NaN */
        double m[4] = {umax[0], umax[1], umax[2], isfinite(umax[0] + umax[1] + umax[2]) ? 0 : 1};
        KEDR_TRY(all(f, KEDR_OP_MAX, m, 4));
        for (int a = 0; a < 3; a++)
            umax[a] = m[3] > 0 ? NAN : m[a];
    }
    return KEDR_OK;
}

double kedr_flow_bytes(const kedr_flow_case *c)
{
    double padded = 1, cells = 1;
    int fn[3] = {1, 1, 1}; /* the FFT solver's grid */
    for (int a = 0; a < c->dims; a++) {
        fn[a] = c->n[a];
        padded *= c->n[a] + 2.0;
        cells *= c->n[a];
    }
    /* u, u~, H, H_old per component; P, phi, rhs; the solver's 9 vectors and its coarse
     * levels' 5 (at most a third of the cells in 2D, a seventh in 3D) */
    return 8 * ((4.0 * c->dims + (c->nbodies > 0)) * padded +
                (12 + 5.0 / (c->dims == 3 ? 7 : 3)) * cells) +
           (c->poisson.method == KEDR_FLOW_METHOD_FFT ? flow_fft_bytes(fn) : 0);
}

double kedr_flow_stable_dt(const kedr_flow_case *c, const double umax[3])
{
    double conv = 0, visc = 0;
    for (int a = 0; a < c->dims; a++) {
        double h = c->length[a] / c->n[a];
        conv += fabs(umax[a]) / h;
        visc += 4 * c->nu / (h * h);
    }
    double dc = conv > 0 ? 1 / conv : HUGE_VAL, dv = visc > 0 ? 1 / visc : HUGE_VAL;
    return dc < dv ? dc : dv;
}

/* The face's area (length in 2D). */
static double face_area(const struct kedr_flow *f, int a)
{
    double area = 1;
    for (int t = 0; t < f->dims; t++)
        area *= t == a ? 1 : f->h[t];
    return area;
}

/* The outflow faces: the convective condition d u/dt + Uc d u/dn = 0 for their normal
 * velocity, then one correction over all outflow faces so that the boundary's net flux is 0. */
static kedr_status outflow(struct kedr_flow *f, double dt)
{
    double influx = 0, outarea = 0, outflux = 0;
    flow_args A = args_on(f->q);
    for (int a = 0; a < 3; a++)
        A.qt[a] = f->qt[a];
    for (int face = 0; face < 2 * f->dims; face++) {
        int a = face / 2, side = face % 2;
        kedr_flow_bc_kind kind = f->c.bc[face].kind;
        if (kind == KEDR_FLOW_BC_PERIODIC)
            continue;
        flow_box b = face_box(f, a, side);
        double sum, area = face_area(f, a), count = 1;
        for (int t = 0; t < 3; t++)
            count *= b.hi[t] - b.lo[t] + 1;
        A.comp = a;
        KEDR_TRY(flow_sop_reduce(f->ctx, &f->g, &A, FLOW_RED_SUM, b, &sum));
        double out = (side ? sum : -sum) * area; /* outward */
        if (kind == KEDR_FLOW_BC_OUTFLOW) {
            outarea += count * area;
            outflux += out;
        } else {
            influx -= out;
        }
    }
    double sums[3] = {influx, outarea, outflux};
    KEDR_TRY(all(f, KEDR_OP_SUM, sums, 3));
    influx = sums[0];
    outarea = sums[1];
    outflux = sums[2];
    if (outarea == 0)
        return KEDR_OK;
    A.dt = dt;
    A.uc = influx > 0 ? influx / outarea : outflux > 0 ? outflux / outarea : 0;
    double flux = 0;
    for (int face = 0; face < 2 * f->dims; face++) {
        if (f->c.bc[face].kind != KEDR_FLOW_BC_OUTFLOW)
            continue;
        int a = face / 2, side = face % 2;
        double sum;
        A.axis = a;
        A.side = side;
        A.comp = a;
        KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_OUTFLOW, face_box(f, a, side)));
        flow_args T = args_on(f->qt);
        T.comp = a;
        KEDR_TRY(flow_sop_reduce(f->ctx, &f->g, &T, FLOW_RED_SUM, face_box(f, a, side), &sum));
        flux += (side ? sum : -sum) * face_area(f, a);
    }
    KEDR_TRY(all(f, KEDR_OP_SUM, &flux, 1));
    A.corr = (influx - flux) / outarea;
    for (int face = 0; face < 2 * f->dims; face++) {
        if (f->c.bc[face].kind != KEDR_FLOW_BC_OUTFLOW)
            continue;
        A.axis = face / 2;
        A.side = face % 2;
        KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_OUTFLOW_CORRECT,
                              face_box(f, face / 2, face % 2)));
    }
    return KEDR_OK;
}

/* The arrays of the step for the box operations. */
static flow_args step_args(struct kedr_flow *f)
{
    flow_args A = args_on(f->q);
    for (int a = 0; a < 3; a++) {
        A.qt[a] = f->qt[a];
        A.H[a] = f->H[a];
        A.Hold[a] = f->Hold[a];
    }
    A.P = f->P;
    A.phi = f->phi;
    A.rhs = f->rhs;
    return A;
}

/* An absolute floor for the solve: a divergence at rounding level of the velocity scale. */
static double poisson_atol(const struct kedr_flow *f, double dt)
{
    double u = 0, hmin = HUGE_VAL;
    for (int a = 0; a < f->dims; a++) {
        u = f->umax[a] > u ? f->umax[a] : u;
        hmin = f->h[a] < hmin ? f->h[a] : hmin;
    }
    return 1e-13 * (u > 0 ? u : 1) / (hmin * dt) * sqrt((double)f->gcells);
}

/* Solves A phi = -div(qt)/dt. */
static kedr_status project(struct kedr_flow *f, double dt)
{
    double t0 = kedr_wall_seconds();
    flow_args A = step_args(f);
    A.scale = 1.0 / dt;
    KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_DIV_RHS, cells_box(f)));
    KEDR_TRY(kedr_memset(f->ctx, f->phi, 0, f->cells * sizeof *f->phi));
    double atol = f->ps->o.atol;
    double floor = poisson_atol(f, dt);
    f->ps->o.atol = atol > floor ? atol : floor;
    kedr_status s = kedr_flow_poisson_solve(f->ps, f->phi, f->rhs, &f->last);
    f->ps->o.atol = atol;
    f->seconds_poisson += kedr_wall_seconds() - t0;
    f->poisson_iterations += f->last.iterations;
    return s;
}

/* q = qt - dt grad phi on the unknown faces; the boundary faces keep qt. */
static kedr_status correct(struct kedr_flow *f, double dt)
{
    flow_args A = step_args(f);
    A.dt = dt;
    KEDR_TRY(lend_below(f, f->phi));
    A.below = f->below;
    for (int b = 0; b < f->dims; b++) {
        KEDR_TRY(flow_op_copy(f->ctx, f->q[b], f->qt[b], f->padded * sizeof(double)));
        A.comp = b;
        KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_CORRECT, unknowns(f, b)));
    }
    return KEDR_OK;
}

int kedr_flow_failure(const kedr_flow *f) { return f->failure; }

/* Adds the time since *t to part (a device synchronisation first) and restarts *t. */
static void step_part(struct kedr_flow *f, int part, double *t)
{
    if (!flow_prof())
        return;
    kedr_ctx_sync(f->ctx); /* a failure shows at the next call */
    double now = kedr_wall_seconds();
    f->sp[part] += now - *t;
    *t = now;
}

static kedr_status step(kedr_flow *f)
{
    double t0 = kedr_wall_seconds();
    f->failure = 0;
    double *um = f->umax;
    double dt = f->c.dt > 0 ? f->c.dt : f->c.cfl * kedr_flow_stable_dt(&f->c, um);
    if (f->c.end_time > 0) {
        /* The run ends at end_time. Within four steps of it, the steps left are made equal
         * (as many as before, each at least 3/4 of dt): a sliver of a last step would divide the
         * bodies' forcing by a tiny dt and turn the previous step's slip into a wrong force. */
        double left = f->c.end_time - f->time;
        if (left < 4 * dt) {
            double n = ceil(left / dt - 1e-9);
            dt = left / (n > 1 ? n : 1);
        }
    }
    if (!(dt > 0) || !isfinite(dt))
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: step %lld: time step %g (the velocity is "
                         "%s)", (long long)f->step + 1, dt,
                         isfinite(um[0] + um[1] + um[2]) ? "finite" : "NaN or infinite");
    flow_args A = step_args(f);
    A.dt = dt;
    A.a1 = 1;
    A.a0 = 0;
    if (f->have_old) {
        A.a1 = 1 + dt / (2 * f->dt_old);
        A.a0 = -dt / (2 * f->dt_old);
    }
    double tp = kedr_wall_seconds();
    if (flow_prof())
        KEDR_TRY(kedr_ctx_sync(f->ctx));
    KEDR_TRY(below_P(f));
    A.below = f->split >= 0 && f->fuse ? f->below_P : f->below;
    for (int b = 0; b < f->dims; b++) {
        A.comp = b;
        flow_box u = unknowns(f, b);
        KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_RHS, u));
        KEDR_TRY(flow_op_copy(f->ctx, f->qt[b], f->q[b], f->padded * sizeof(double)));
        KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_PREDICT, u));
    }
    step_part(f, FLOW_STEP_ADVANCE, &tp);
    kedr_status s = flow_ibm_force(f, dt, f->time + dt);
    step_part(f, FLOW_STEP_BODIES, &tp);
    if (s != KEDR_OK) { /* the state is still that before the step */
        f->failure = s == KEDR_ERR_INVALID ? 4 : 3;
        f->seconds_step += kedr_wall_seconds() - t0;
        return s;
    }
    KEDR_TRY(outflow(f, dt));
    step_part(f, FLOW_STEP_OUTFLOW, &tp);
    KEDR_TRY(flow_fill_bc(f, f->qt));
    step_part(f, FLOW_STEP_FILL, &tp);
    s = project(f, dt);
    step_part(f, FLOW_STEP_PRESSURE, &tp);
    if (s == KEDR_OK && !f->last.converged) {
        f->failure = 1;
        f->seconds_step += kedr_wall_seconds() - t0;
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: step %lld: the pressure solve did not "
                         "converge in %d iterations (relative residual %.3g, tolerance %g)",
                         (long long)f->step + 1, f->last.iterations, f->last.residual,
                         f->c.poisson.tol);
    }
    if (s != KEDR_OK) {
        f->failure = 2; /* the right-hand side held NaN */
        f->seconds_step += kedr_wall_seconds() - t0;
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: the velocity became NaN or infinite at "
                         "step %lld (t = %.6g): the run is unstable; lower dt or cfl, or refine "
                         "the grid", (long long)f->step + 1, f->time + dt);
    }
    KEDR_TRY(correct(f, dt));
    KEDR_TRY(flow_sop_map(f->ctx, &f->g, &A, FLOW_OP_ADD_PHI, cells_box(f)));
    if (f->split >= 0 && f->fuse && f->below_P_ok) /* the neighbour's P += phi (f->below: phi's) */
        KEDR_TRY(flow_op_axpy(f->ctx, f->cells / (size_t)f->n[f->split], 1.0, f->below,
                              f->below_P));
    step_part(f, FLOW_STEP_CORRECT, &tp);
    KEDR_TRY(flow_fill_bc(f, f->q));
    step_part(f, FLOW_STEP_FILL, &tp);
    for (int b = 0; b < f->dims; b++) { /* H^n becomes H^{n-1} */
        double *t = f->Hold[b];
        f->Hold[b] = f->H[b];
        f->H[b] = t;
    }
    f->have_old = 1;
    f->dt_old = dt;
    f->last_dt = dt;
    f->step++;
    f->time += dt;
    KEDR_TRY(flow_umax(f, f->q, f->umax));
    step_part(f, FLOW_STEP_UMAX, &tp);
    f->seconds_step += kedr_wall_seconds() - t0;
    if (!isfinite(um[0] + um[1] + um[2])) {
        f->failure = 2;
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: the velocity became NaN or infinite at "
                         "step %lld (t = %.6g): the run is unstable; lower dt or cfl, or refine "
                         "the grid", (long long)f->step, f->time);
    }
    return KEDR_OK;
}

kedr_status kedr_flow_step(kedr_flow *f)
{
    kedr_status s = step(f);
    if (s != KEDR_OK && f->failure == 0 && s != KEDR_ERR_INVALID)
        f->failure = 3; /* a back-end error (CUDA, memory) */
    return s;
}

/* ---- creation ---------------------------------------------------------------------------- */

static kedr_status initial_velocity(struct kedr_flow *f)
{
    const kedr_flow_case *c = &f->c;
    flow_host h;
    KEDR_TRY(flow_host_get(f, &h));
    for (int b = 0; b < f->dims; b++) {
        int k1 = f->dims == 3 ? f->n[2] + 1 : 0;
        for (int k = f->kz; k <= k1; k++)
            for (int j = 1; j <= f->n[1] + 1; j++)
                for (int i = 1; i <= f->n[0] + 1; i++) {
                    int ijk[3] = {i, j, k};
                    double x[3], v = 0;
                    flow_g_coords(&f->g, b, ijk, x);
                    if (c->init == KEDR_FLOW_INIT_UNIFORM) {
                        v = c->init_velocity[b];
                    } else if (c->init == KEDR_FLOW_INIT_TAYLOR_GREEN) {
                        double kx = 2 * M_PI / c->length[0], ky = 2 * M_PI / c->length[1];
                        double cz = f->dims == 3 ? cos(2 * M_PI / c->length[2] * x[2]) : 1;
                        double A = c->tg_amplitude;
                        if (b == 0)
                            v = A * sin(kx * x[0]) * cos(ky * x[1]) * cz;
                        else if (b == 1)
                            v = -A * kx / ky * cos(kx * x[0]) * sin(ky * x[1]) * cz;
                    }
                    h.q[b][flow_at(f, i, j, k)] = v;
                }
    }
    if (c->init == KEDR_FLOW_INIT_TAYLOR_GREEN && f->dims == 2) {
        double kx = 2 * M_PI / c->length[0], ky = 2 * M_PI / c->length[1], A = c->tg_amplitude;
        for (int j = 1; j <= f->n[1]; j++)
            for (int i = 1; i <= f->n[0]; i++) {
                double x = (i - 0.5) * f->h[0], y = (j + f->g.off[1] - 0.5) * f->h[1];
                h.P[flow_cell(f, i, j, 0)] =
                    A * A / 4 * (cos(2 * kx * x) + kx * kx / (ky * ky) * cos(2 * ky * y));
            }
    }
    kedr_status s = flow_host_put(f, &h);
    flow_host_free(&h);
    if (s == KEDR_OK)
        s = flow_fill_bc(f, f->q);
    if (s == KEDR_OK)
        s = flow_umax(f, f->q, f->umax);
    return s;
}

/* A uniform start against walls is not divergence-free: project it once (dt = 1; the pressure
 * stays 0). */
static kedr_status project_start(struct kedr_flow *f)
{
    for (int b = 0; b < f->dims; b++)
        KEDR_TRY(flow_op_copy(f->ctx, f->qt[b], f->q[b], f->padded * sizeof(double)));
    KEDR_TRY(project(f, 1.0));
    if (!f->last.converged)
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: the projection of the initial velocity "
                         "did not converge (relative residual %.3g)", f->last.residual);
    KEDR_TRY(correct(f, 1.0));
    KEDR_TRY(kedr_memset(f->ctx, f->phi, 0, f->cells * sizeof *f->phi));
    KEDR_TRY(flow_fill_bc(f, f->q));
    f->poisson_iterations = 0;
    f->seconds_poisson = 0;
    return flow_umax(f, f->q, f->umax);
}

/* The exchanges of device data between ranks so far: their time and number; reset. */
static void halo_time(const struct kedr_flow *f, double *seconds, int64_t *count)
{
    *seconds = 0;
    *count = 0;
    const flow_ranks *rk = f->ps ? f->ps->rk : NULL;
    const flow_xch *x[2] = {f->xch, rk ? rk->xch : NULL};
    for (int i = 0; i < 2; i++)
        if (x[i]) {
            *seconds += x[i]->seconds;
            *count += x[i]->count;
        }
    if (rk) {
        *seconds += rk->gather_seconds;
        *count += rk->gathers;
    }
    if (f->ibm) {
        *seconds += f->ibm->sum_seconds;
        *count += f->ibm->sums;
    }
}

static void halo_reset(struct kedr_flow *f)
{
    flow_ranks *rk = f->ps ? f->ps->rk : NULL;
    flow_xch *x[2] = {f->xch, rk ? rk->xch : NULL};
    for (int i = 0; i < 2; i++)
        if (x[i]) {
            x[i]->seconds = 0;
            x[i]->count = 0;
        }
    if (rk) {
        rk->gather_seconds = 0;
        rk->gathers = 0;
    }
    if (f->ps)
        memset(f->ps->part, 0, sizeof f->ps->part);
    if (f->ibm) {
        f->ibm->sum_seconds = 0;
        f->ibm->sums = 0;
    }
}

kedr_status kedr_flow_create(kedr_ctx *ctx, const kedr_flow_case *c, kedr_flow **out)
{
    return kedr_flow_create_on(ctx, NULL, c, out);
}

kedr_status kedr_flow_create_on(kedr_ctx *ctx, kedr_comm *comm, const kedr_flow_case *c,
                                kedr_flow **out)
{
    struct kedr_flow *f;
    *out = NULL;
    KEDR_TRY(flow_alloc(ctx, comm, c, &f));
    kedr_status s = initial_velocity(f);
    if (s == KEDR_OK && c->init == KEDR_FLOW_INIT_UNIFORM)
        s = project_start(f);
    if (s != KEDR_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", kedr_last_error());
        kedr_flow_destroy(f);
        return kedr_fail(s, "%s", why);
    }
    halo_reset(f);
    *out = f;
    return KEDR_OK;
}

void kedr_flow_get_stats(const kedr_flow *f, kedr_flow_stats *st)
{
    memset(st, 0, sizeof *st);
    st->step = f->step;
    st->time = f->time;
    st->dt = f->last_dt;
    for (int a = 0; a < 3; a++)
        st->umax[a] = f->umax[a];
    double sdt = kedr_flow_stable_dt(&f->c, st->umax);
    st->cfl = f->last_dt > 0 ? f->last_dt / sdt : 0;
    double u = fmax(st->umax[0], fmax(st->umax[1], st->umax[2])), hmin = f->h[0];
    for (int a = 1; a < f->dims; a++)
        hmin = fmin(hmin, f->h[a]);
    flow_args A = args_on(f->q);
    double div = 0, e = 0;
    /* a failed reduction (a back-end error) leaves its figure NaN */
    if (flow_sop_reduce(f->ctx, &f->g, &A, FLOW_RED_MAXDIV, cells_box(f), &div) != KEDR_OK)
        div = NAN;
    if (all(f, KEDR_OP_MAX, &div, 1) != KEDR_OK)
        div = NAN;
    st->divergence = u > 0 ? div * hmin / u : 0;
    for (int b = 0; b < f->dims; b++) {
        double eb;
        A.comp = b;
        if (flow_sop_reduce(f->ctx, &f->g, &A, FLOW_RED_ENERGY, all_faces(f, b), &eb) != KEDR_OK)
            eb = NAN;
        e += eb;
    }
    if (all(f, KEDR_OP_SUM, &e, 1) != KEDR_OK)
        e = NAN;
    st->kinetic_energy = 0.5 * e / (double)f->gcells;
    st->poisson = f->last;
    st->poisson_iterations = f->poisson_iterations;
    st->seconds_step = f->seconds_step;
    st->seconds_poisson = f->seconds_poisson;
    halo_time(f, &st->seconds_halo, &st->halo_exchanges);
    if (f->ibm) {
        st->ibm_iterations = f->ibm->iterations;
        st->ibm_residual = f->ibm->residual;
        st->seconds_ibm = f->ibm->seconds;
    }
}
