/* Multigrid over ranks (ctest runs it alone and under mpirun on 1 to 4 ranks): the pressure
 * Poisson problem of a grid split into slabs along its last axis (src/flow/mg_ranks.c) against
 * the one-rank solver of the whole grid, run on every rank, with the same right-hand side
 * (seeded, the same on every rank), on every back end:
 * 1. one V-cycle (kedr_flow_poisson_precondition) agrees with one rank's within 1e-12 of its
 *    largest value: the smoothing, residuals and transfers are one rank's arithmetic except the
 *    order of a few additions at a slab's ends (the neighbours' share of a cell's sum added to
 *    its right-hand side first) and the mean removed by a sum over ranks, so the differences
 *    are of the order of the rounding (measured: printed);
 * 2. multigrid alone and PCG preconditioned by a V-cycle, solved to a relative residual of
 *    1e-10 from zero: the same number of iterations as one rank, the residual histories (each
 *    ||r|| / ||b||) within 1e-12 of each other, and x within 1e-9 of its largest value. The
 *    residuals are differences of nearly equal numbers (r = b - A x, ||r|| down to 1e-10
 *    ||b||), so their rounding, about 1e-16 ||b||, is a large part of the last ones: hence a
 *    bound on the difference, not on the ratio (measured: x about 1e-15 of its largest,
 *    histories 1e-16 .. 1e-15 of ||b||, printed);
 * 3. the same number of levels and the same coarsest grid as one rank;
 * 4. over several ranks, the messages through the host (KEDR_COMM_IPC=0) give the default
 *    path's results bit for bit: one V-cycle, x, the iterations and residual history (on cuda
 *    with the ranks on one host the default path copies GPU to GPU by CUDA IPC: the test says
 *    which path it took).
 * Grids with plane counts that the ranks do not divide evenly (and odd first planes), 2D and
 * 3D, Neumann and periodic along the split axis, semi-coarsening (an axis of odd size), a split
 * axis that is never halved (odd), slabs of one plane (4 ranks on 6 planes: the whole problem
 * gathered at once), a split axis halved across the slabs level after level (64 and 48
 * planes, Neumann and periodic); each with the split levels as deep as they go (KEDR_FLOW_MG_GATHER=0) and
 * with the default gathering (small grids: level 1 gathered). Then the red-black check of a
 * periodic split axis of odd size. */
#include "kedr/comm.h"
#include "kedr/flow.h"

#include "flow/poisson_impl.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kedr_comm *comm;
static int rank, size;

typedef struct {
    const char *name;
    int n[3];
    int periodic[3];
    double length[3];
} grid_case;

static double maxabs(const double *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i]));
    return m;
}

/* The slab solver of this rank (ax the last axis with more than one cell). */
static kedr_status slab_solver(kedr_ctx *ctx, const kedr_flow_poisson_opts *whole, int ax,
                               int *first, int *count, kedr_flow_poisson **out)
{
    kedr_flow_poisson_opts o = *whole;
    flow_slab(whole->n[ax], rank, size, first, count);
    if (size == 1) /* one rank: the plain solver, as kedr_flow_create makes it */
        return kedr_flow_poisson_create(ctx, &o, out);
    o.n[ax] = *count;
    o.periodic[ax] = 0; /* the slab's ends: coupled through the neighbours */
    KEDR_TRY(kedr_flow_poisson_create(ctx, &o, out));
    int per = whole->periodic[ax];
    int lo = rank > 0 ? rank - 1 : per ? size - 1 : -1;
    int hi = rank < size - 1 ? rank + 1 : per ? 0 : -1;
    kedr_status s = flow_poisson_set_ranks(*out, comm, ax, lo, hi, *first, whole->n[ax], per);
    if (s != KEDR_OK) { /* as kedr_flow_create: nothing half made is handed out */
        kedr_flow_poisson_destroy(*out);
        *out = NULL;
    }
    return s;
}

/* The messages through the host (KEDR_COMM_IPC=0) give what the default path gave (GPU to GPU
 * by CUDA IPC between the ranks of a host on cuda; the same host path on the cpu) bit for bit:
 * one V-cycle, and the solve of sb (own values a rank) whose x (hx, downloaded) and info (in)
 * the default path gave. */
/* The default path against another, chosen by env=0 in the environment: KEDR_COMM_IPC (every
 * message through the host) or KEDR_COMM_IPC_EVENTS (GPU to GPU, but each exchange synchronised
 * through MPI instead of ordered on the streams by CUDA IPC events). */
static void ipc_vs_host(kedr_ctx *ctx, const kedr_flow_poisson_opts *o, int ax, const char *what,
                        const double *sb, size_t own, const double *hx,
                        const kedr_flow_poisson_info *in, const char *env, const char *value)
{
    const char *was = getenv(env);
    char keep[16] = "";
    if (was)
        snprintf(keep, sizeof keep, "%s", was);
    setenv(env, value, 1);
    kedr_flow_poisson *ipc = NULL, *host = NULL;
    int first, count;
    TU_OK(slab_solver(ctx, o, ax, &first, &count, &host));
    if (was)
        setenv(env, keep, 1);
    else
        unsetenv(env);
    int events = !strcmp(env, "KEDR_COMM_IPC_EVENTS"), halo = !strcmp(env, "KEDR_FLOW_MG_HALO");
    int ovl = !strcmp(env, "KEDR_FLOW_OVERLAP");
    TU_OK(slab_solver(ctx, o, ax, &first, &count, &ipc));
    double *sx = NULL, *sz = NULL, *hy = malloc(2 * own * sizeof *hy);
    TU_OK(kedr_alloc(ctx, (void **)&sx, own * sizeof *sx));
    TU_OK(kedr_alloc(ctx, (void **)&sz, own * sizeof *sz));
    if (!ipc || !host || !sx || !sz || !hy)
        goto out;
    const flow_ranks *rk = ipc->rk, *hk = host->rk;
    int partner = rk->lo >= 0 ? rk->lo : rk->hi;
    int direct = kedr_comm_dev_direct(rk->xch->dev, partner);
    int deep = 0; /* some split level smooths with two-plane exchanges */
    for (int l = 0; l < rk->gather_at; l++)
        deep |= rk->lv[l].deep && rk->deep;
    if (ovl)
        TU_CHECK(!hk->overlap && rk->overlap, "%s: overlap %d, with KEDR_FLOW_OVERLAP=0 %d",
                 what, rk->overlap, hk->overlap);
    else if (halo)
        TU_CHECK(!hk->deep && rk->deep, "%s: two-plane smoothing %d, with "
                 "KEDR_FLOW_MG_HALO=1 %d", what, rk->deep, hk->deep);
    else if (!events)
        TU_CHECK(!kedr_comm_dev_direct(hk->xch->dev, partner) &&
                 (!hk->gdev || !kedr_comm_dev_direct(hk->gdev, partner)),
                 "%s: KEDR_COMM_IPC=0 still copies GPU to GPU", what);
    else
        TU_CHECK(!kedr_comm_dev_ordered(hk->xch->dev) &&
                 (!hk->gdev || !kedr_comm_dev_ordered(hk->gdev)),
                 "%s: KEDR_COMM_IPC_EVENTS=0 still orders by events", what);
    /* the default: ordered on the streams on cuda (unless the caller's environment said no) */
    const char *ev = getenv("KEDR_COMM_IPC_EVENTS");
    int want = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA && !(ev && !strcmp(ev, "0"));
    TU_CHECK(kedr_comm_dev_ordered(rk->xch->dev) == want &&
             (!rk->gdev || kedr_comm_dev_ordered(rk->gdev) == want),
             "%s: the solver's registrations ordered %d, expected %d", what,
             kedr_comm_dev_ordered(rk->xch->dev), want);
    int ordered = kedr_comm_dev_ordered(rk->xch->dev);
    /* one V-cycle each */
    TU_OK(kedr_flow_poisson_precondition(ipc, sb, sz));
    TU_OK(kedr_download(ctx, hy, sz, own * sizeof *hy));
    TU_OK(kedr_flow_poisson_precondition(host, sb, sz));
    TU_OK(kedr_download(ctx, hy + own, sz, own * sizeof *hy));
    int same_v = memcmp(hy, hy + own, own * sizeof *hy) == 0;
    /* the solve through the host */
    kedr_flow_poisson_info ih;
    TU_OK(kedr_memset(ctx, sx, 0, own * sizeof *sx));
    TU_OK(kedr_flow_poisson_solve(host, sx, sb, &ih));
    TU_OK(kedr_download(ctx, hy, sx, own * sizeof *hy));
    int same_x = memcmp(hy, hx, own * sizeof *hy) == 0;
    int same_h = ih.iterations == in->iterations && ih.history_len == in->history_len &&
                 memcmp(ih.history, in->history, (size_t)ih.history_len * sizeof(double)) == 0;
    if (halo) /* the same solves with fewer exchanges where a level smooths two at a time */
        TU_CHECK(deep ? rk->xch->count < hk->xch->count : rk->xch->count <= hk->xch->count,
                 "%s: %lld exchanges, %lld with KEDR_FLOW_MG_HALO=1 (two-plane levels: %d)",
                 what, (long long)rk->xch->count, (long long)hk->xch->count, deep);
    /* a result of every rank: any rank's difference fails all */
    int bad[3] = {!same_v, !same_x, !same_h};
    kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MAX, bad, 3);
    const char *other = ovl ? "KEDR_FLOW_OVERLAP=0 (no interior work during the exchanges)"
                        : halo ? "one-plane smoothing exchanges"
                        : events ? "the synchronised path" : "the host path";
    if (rank == 0)
        printf("%s: default path (%s%s) against %s: %s\n", what,
               direct ? "GPU to GPU" : "through the host",
               ordered ? ", ordered by events" : "", other,
               bad[0] || bad[1] || bad[2] ? "DIFFERENT" : "bit for bit");
    TU_CHECK(!bad[0], "%s: one V-cycle differs between the default and %s", what, other);
    TU_CHECK(!bad[1], "%s: x differs between the default and %s", what, other);
    TU_CHECK(!bad[2], "%s: iterations or residual history differ between the default and %s",
             what, other);
out:
    free(hy);
    kedr_free(ctx, sx);
    kedr_free(ctx, sz);
    kedr_flow_poisson_destroy(ipc);
    kedr_flow_poisson_destroy(host);
}

static void run(kedr_backend be, const grid_case *g, kedr_flow_method method, const char *gather)
{
    if (gather)
        setenv("KEDR_FLOW_MG_GATHER", gather, 1);
    else
        unsetenv("KEDR_FLOW_MG_GATHER");
    int ax = g->n[2] > 1 ? 2 : 1;
    if (g->n[ax] < size)
        return;
    char what[160];
    const char *planes = getenv("KEDR_FLOW_MG_GATHER_PLANES");
    snprintf(what, sizeof what, "%s, %s, gather %s%s%s", g->name,
             method == KEDR_FLOW_METHOD_MG ? "mg alone" : "pcg + mg", gather ? gather : "default",
             planes ? ", planes " : "", planes ? planes : "");
    kedr_flow_poisson_opts o;
    kedr_flow_poisson_defaults(&o);
    for (int a = 0; a < 3; a++) {
        o.n[a] = g->n[a];
        o.h[a] = g->length[a] / g->n[a];
        o.periodic[a] = g->periodic[a];
    }
    o.method = method;
    o.precond = KEDR_FLOW_PC_MG;
    o.tol = 1e-10;
    o.max_iter = 200;
    size_t N = (size_t)g->n[0] * g->n[1] * g->n[2];
    kedr_ctx *ctx = tu_ctx(be);
    kedr_flow_poisson *one = NULL, *all = NULL;
    int first = 0, count = 0;
    TU_OK(kedr_flow_poisson_create(ctx, &o, &one));
    TU_OK(slab_solver(ctx, &o, ax, &first, &count, &all));
    double *hb = malloc(N * sizeof *hb), *hx1 = malloc(N * sizeof *hx1);
    double *hz1 = malloc(N * sizeof *hz1), *hxn = malloc(N * sizeof *hxn);
    double *hist1 = malloc(256 * sizeof *hist1);
    double *db = NULL, *dx = NULL, *sb = NULL, *sx = NULL;
    size_t layer = N / (size_t)g->n[ax], own = layer * (size_t)count;
    TU_OK(kedr_alloc(ctx, (void **)&db, N * sizeof *db));
    TU_OK(kedr_alloc(ctx, (void **)&dx, N * sizeof *dx));
    TU_OK(kedr_alloc(ctx, (void **)&sb, own * sizeof *sb));
    TU_OK(kedr_alloc(ctx, (void **)&sx, own * sizeof *sx));
    if (!one || !all || !hb || !hx1 || !hz1 || !hxn || !hist1 || !db || !dx || !sb || !sx)
        goto out;
    uint64_t st = 0x5eed + (uint64_t)N;
    for (size_t i = 0; i < N; i++)
        hb[i] = tu_uniform(&st) * 2 - 1;
    TU_OK(kedr_upload(ctx, db, hb, N * sizeof *hb));
    TU_OK(kedr_upload(ctx, sb, hb + layer * (size_t)first, own * sizeof *hb));
    /* the levels */
    int c1[3], cn[3];
    int l1 = kedr_flow_poisson_levels(one, c1), ln = kedr_flow_poisson_levels(all, cn);
    TU_CHECK(l1 == ln && memcmp(c1, cn, sizeof c1) == 0, "%s: levels %d (%dx%dx%d) over %d ranks,"
             " %d (%dx%dx%d) on one", what, ln, cn[0], cn[1], cn[2], size, l1, c1[0], c1[1],
             c1[2]);
    /* one V-cycle */
    TU_OK(kedr_flow_poisson_precondition(one, db, dx));
    TU_OK(kedr_download(ctx, hz1, dx, N * sizeof *hz1));
    /* the parts' times and the exchanges' so far (the set-up's exchanges) */
    double parts0 = all->rk ? all->rk->xch->seconds + all->rk->gather_seconds : 0;
    for (int p = 0; all->rk && p < FLOW_PARTS; p++)
        parts0 += all->part[p];
    double t_solve = kedr_wall_seconds();
    TU_OK(kedr_flow_poisson_precondition(all, sb, sx));
    TU_OK(kedr_download(ctx, hxn, sx, own * sizeof *hxn));
    t_solve = kedr_wall_seconds() - t_solve;
    double zmax = maxabs(hz1, N), dz = 0;
    for (size_t i = 0; i < own; i++)
        dz = fmax(dz, fabs(hxn[i] - hz1[layer * (size_t)first + i]));
    kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_MAX, &dz, 1);
    TU_CHECK(zmax > 0 && dz <= 1e-12 * zmax, "%s: one V-cycle differs by %g of %g", what, dz,
             zmax);
    /* the solves */
    kedr_flow_poisson_info i1, in;
    TU_OK(kedr_memset(ctx, dx, 0, N * sizeof *dx));
    TU_OK(kedr_flow_poisson_solve(one, dx, db, &i1));
    memcpy(hist1, i1.history, (size_t)(i1.history_len < 256 ? i1.history_len : 256) * 8);
    TU_OK(kedr_download(ctx, hx1, dx, N * sizeof *hx1));
    TU_OK(kedr_memset(ctx, sx, 0, own * sizeof *sx));
    double t0 = kedr_wall_seconds();
    TU_OK(kedr_flow_poisson_solve(all, sx, sb, &in));
    t_solve += kedr_wall_seconds() - t0;
    TU_OK(kedr_download(ctx, hxn, sx, own * sizeof *hxn));
    double xmax = maxabs(hx1, N), dxm = 0, dh = 0;
    for (size_t i = 0; i < own; i++)
        dxm = fmax(dxm, fabs(hxn[i] - hx1[layer * (size_t)first + i]));
    for (int i = 0; i < i1.history_len && i < in.history_len && i < 256; i++)
        dh = fmax(dh, fabs(in.history[i] - hist1[i]));
    kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_MAX, &dxm, 1);
    if (rank == 0)
        printf("%s on %s, %d ranks: %d levels; V-cycle %.1e, x %.1e (of the largest), "
               "history %.1e (of ||b||); iterations %d and %d (one rank)\n", what,
               kedr_backend_name(be), size, ln, dz / zmax, dxm / xmax, dh, in.iterations,
               i1.iterations);
    TU_CHECK(i1.converged && in.converged, "%s: converged %d (one) %d (ranks)", what,
             i1.converged, in.converged);
    TU_CHECK(in.iterations == i1.iterations, "%s: %d iterations over %d ranks, %d on one", what,
             in.iterations, size, i1.iterations);
    TU_CHECK(in.history_len == i1.history_len && dh <= 1e-12, "%s: residual histories differ by "
             "%g of ||b|| (lengths %d, %d)", what, dh, in.history_len, i1.history_len);
    TU_CHECK(xmax > 0 && dxm <= 1e-9 * xmax, "%s: x differs by %g of %g", what, dxm, xmax);
    TU_CHECK(in.residual <= 1e-10 && fabs(in.residual - i1.residual) <= 1e-3 * i1.residual,
             "%s: final residual %g (one rank %g)", what, in.residual, i1.residual);
    if (size > 1) {
        /* the parts' times (KEDR_FLOW_PROF): each timed part ran, and they and the exchanges
         * fit in the wall time of the V-cycle and the solve */
        const flow_ranks *rk = all->rk;
        const double *part = all->part;
        double parts = rk->xch->seconds + rk->gather_seconds - parts0;
        for (int p = 0; p < FLOW_PARTS; p++)
            parts += part[p];
        int split = rk->gather_at > 0;
        TU_CHECK(part[FLOW_PART_COARSE] > 0 && part[FLOW_PART_REDUCE] > 0 &&
                 part[FLOW_PART_TRANSFER] > 0 &&
                 (!split || (part[FLOW_PART_SMOOTH] > 0 &&
                             part[FLOW_PART_RESIDUAL] > 0)) &&
                 (method == KEDR_FLOW_METHOD_MG || part[FLOW_PART_OPERATOR] > 0) &&
                 parts <= t_solve, "%s: parts' times smoothing %g, residual %g, transfers %g, "
                 "coarse %g, reductions %g, operator %g; with exchanges %g s of %g s", what,
                 part[FLOW_PART_SMOOTH], part[FLOW_PART_RESIDUAL],
                 part[FLOW_PART_TRANSFER], part[FLOW_PART_COARSE],
                 part[FLOW_PART_REDUCE], part[FLOW_PART_OPERATOR], parts, t_solve);
        ipc_vs_host(ctx, &o, ax, what, sb, own, hxn, &in, "KEDR_COMM_IPC", "0");
        /* the events order only cuda's copies (on the cpu both are the host path) */
        if (be == KEDR_BACKEND_CUDA)
            ipc_vs_host(ctx, &o, ax, what, sb, own, hxn, &in, "KEDR_COMM_IPC_EVENTS", "0");
        /* split as deep as the planes allow: the most levels smoothed two at a time */
        if (gather && !strcmp(gather, "0"))
            ipc_vs_host(ctx, &o, ax, what, sb, own, hxn, &in, "KEDR_FLOW_MG_HALO", "1");
        /* the interiors of the products, residuals and two-plane smoothing during the
         * exchanges against after them */
        ipc_vs_host(ctx, &o, ax, what, sb, own, hxn, &in, "KEDR_FLOW_OVERLAP", "0");
    }
out:
    free(hb);
    free(hx1);
    free(hz1);
    free(hxn);
    free(hist1);
    kedr_free(ctx, db);
    kedr_free(ctx, dx);
    kedr_free(ctx, sb);
    kedr_free(ctx, sx);
    kedr_flow_poisson_destroy(one);
    kedr_flow_poisson_destroy(all);
    kedr_ctx_destroy(ctx);
}

/* A bad KEDR_FLOW_MG_GATHER and red-black on an odd periodic split axis are refused. */
/* KEDR_FLOW_OVERLAP's default: on for the cpu; on cuda from FLOW_OVERLAP_AUTO_CELLS cells a
 * rank; 0 and 1 as asked; anything else refused (any rank count). */
static void overlap_default(void)
{
    const char *was = getenv("KEDR_FLOW_OVERLAP");
    char keep[16] = "";
    if (was)
        snprintf(keep, sizeof keep, "%s", was);
    unsetenv("KEDR_FLOW_OVERLAP");
    const struct { int cuda; double cells; const char *env; int want; } ov[] = {
        {0, 10, NULL, 1}, {1, 10, NULL, 0}, {1, FLOW_OVERLAP_AUTO_CELLS - 1, NULL, 0},
        {1, FLOW_OVERLAP_AUTO_CELLS, NULL, 1}, {1, 1e9, "0", 0}, {0, 10, "0", 0},
        {1, 10, "1", 1}};
    for (size_t i = 0; i < sizeof ov / sizeof ov[0]; i++) {
        if (ov[i].env)
            setenv("KEDR_FLOW_OVERLAP", ov[i].env, 1);
        else
            unsetenv("KEDR_FLOW_OVERLAP");
        int on = -1;
        TU_OK(flow_overlap_env(&on, ov[i].cuda, ov[i].cells));
        TU_CHECK(on == ov[i].want, "KEDR_FLOW_OVERLAP=%s, cuda %d, %.0f cells a rank: %d, "
                 "expected %d", ov[i].env ? ov[i].env : "(unset)", ov[i].cuda, ov[i].cells, on,
                 ov[i].want);
    }
    setenv("KEDR_FLOW_OVERLAP", "yes", 1);
    int on = -1;
    kedr_status s = flow_overlap_env(&on, 1, 10);
    TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), "KEDR_FLOW_OVERLAP = 'yes'"),
             "KEDR_FLOW_OVERLAP=yes: %s", s == KEDR_OK ? "accepted" : kedr_last_error());
    if (was)
        setenv("KEDR_FLOW_OVERLAP", keep, 1);
    else
        unsetenv("KEDR_FLOW_OVERLAP");
}

static void refusals(void)
{
    if (size < 2)
        return;
    kedr_ctx *ctx = tu_ctx(KEDR_BACKEND_CPU);
    kedr_flow_poisson_opts o;
    kedr_flow_poisson_defaults(&o);
    o.n[0] = 8;
    o.n[1] = 13;
    o.periodic[1] = 1;
    kedr_flow_poisson *ps = NULL;
    int first, count;
    kedr_status s = slab_solver(ctx, &o, 1, &first, &count, &ps);
    TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), "axis y has 13"),
             "odd periodic split axis: %s", s == KEDR_OK ? "accepted" : kedr_last_error());
    kedr_flow_poisson_destroy(ps);
    ps = NULL;
    o.n[1] = 16;
    setenv("KEDR_FLOW_MG_GATHER", "many", 1);
    s = slab_solver(ctx, &o, 1, &first, &count, &ps);
    TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), "KEDR_FLOW_MG_GATHER = 'many'"),
             "bad KEDR_FLOW_MG_GATHER: %s", s == KEDR_OK ? "accepted" : kedr_last_error());
    unsetenv("KEDR_FLOW_MG_GATHER");
    kedr_flow_poisson_destroy(ps);
    ps = NULL;
    setenv("KEDR_FLOW_MG_GATHER_PLANES", "1", 1);
    s = slab_solver(ctx, &o, 1, &first, &count, &ps);
    TU_CHECK(s == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "KEDR_FLOW_MG_GATHER_PLANES = '1'"),
             "KEDR_FLOW_MG_GATHER_PLANES=1: %s", s == KEDR_OK ? "accepted" : kedr_last_error());
    unsetenv("KEDR_FLOW_MG_GATHER_PLANES");
    kedr_flow_poisson_destroy(ps);
    ps = NULL;
    setenv("KEDR_FLOW_MG_HALO", "3", 1);
    s = slab_solver(ctx, &o, 1, &first, &count, &ps);
    TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), "KEDR_FLOW_MG_HALO = '3'"),
             "KEDR_FLOW_MG_HALO=3: %s", s == KEDR_OK ? "accepted" : kedr_last_error());
    unsetenv("KEDR_FLOW_MG_HALO");
    kedr_flow_poisson_destroy(ps);
    kedr_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (kedr_comm_init(&argc, &argv, &comm) != KEDR_OK) {
        fprintf(stderr, "kedr_comm_init: %s\n", kedr_last_error());
        return 1;
    }
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    /* the merged reductions and the overlap are what these tests compare with the earlier
     * paths: on for every back end here (cuda's default is off until they pass on GPUs) */
    setenv("KEDR_FLOW_FUSE", "1", 0);
    setenv("KEDR_FLOW_OVERLAP", "1", 0);
    static const grid_case cases[] = {
        /* 2D, Neumann: 38 planes (19 after one halving: the split axis then kept) */
        {"2D 24x38 Neumann", {24, 38, 1}, {0, 0, 0}, {1.0, 1.5, 1}},
        /* 2D, periodic along the split axis (44 -> 22, then kept: 22 is not a multiple of 4),
         * odd x (semi-coarsening along y only) */
        {"2D 15x44 periodic y", {15, 44, 1}, {0, 1, 0}, {1.0, 2.0, 1}},
        /* the split axis odd: never halved; x halved */
        {"2D 32x27 Neumann", {32, 27, 1}, {0, 0, 0}, {1.0, 1.0, 1}},
        /* 4 ranks on 6 planes: slabs of one plane */
        {"2D 16x6 Neumann", {16, 6, 1}, {0, 0, 0}, {1.0, 0.4, 1}},
        /* 3D: 26 planes (13 after one halving), periodic x */
        {"3D 12x10x26 periodic x", {12, 10, 26}, {1, 0, 0}, {1.2, 1.0, 2.6}},
        /* 3D periodic z: 28 planes, 7 a rank on 4 (odd first planes) */
        {"3D 8x6x28 periodic z", {8, 6, 28}, {0, 0, 1}, {1.0, 0.7, 3.0}},
        /* the split axis halved level after level across the slabs: 64 -> 32 -> 16 -> 8 (3
         * ranks: 22/21/21 planes, then 11/11/10, 6/5/5, and the coarsest 1 x 1 x 8, 3/3/2,
         * gathered) */
        {"3D 8x8x64 Neumann", {8, 8, 64}, {0, 0, 0}, {0.8, 0.8, 6.4}},
        /* ... and periodic: 48 -> 24 -> 12 -> 6 */
        {"2D 10x48 periodic y", {10, 48, 1}, {0, 1, 0}, {1.0, 4.8, 1}},
    };
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            if (tu_quick() && c % 2) /* the sanitizers' run: every other case */
                continue;
            /* cuda: each solver made over ranks opens its neighbours' buffers (CUDA IPC), and
             * these grids are tiny, so the 8 cases take minutes there; a GPU runs the four
             * that cover the distinct splits (2D Neumann, one-plane slabs, odd periodic
             * planes, split levels halved across the slabs); the cpu runs all of them */
            if (list[i] == KEDR_BACKEND_CUDA && !(c == 0 || c == 3 || c == 5 || c == 6))
                continue;
            run(list[i], &cases[c], KEDR_FLOW_METHOD_MG, "0");
            run(list[i], &cases[c], KEDR_FLOW_METHOD_PCG, "0");
            run(list[i], &cases[c], KEDR_FLOW_METHOD_MG, NULL);
            run(list[i], &cases[c], KEDR_FLOW_METHOD_PCG, NULL);
            if (c >= 6) { /* split levels kept to 4 planes a rank, the rest gathered */
                setenv("KEDR_FLOW_MG_GATHER_PLANES", "4", 1);
                run(list[i], &cases[c], KEDR_FLOW_METHOD_PCG, "0");
                unsetenv("KEDR_FLOW_MG_GATHER_PLANES");
            }
        }
    overlap_default();
    refusals();
    uint64_t counts[2] = {(uint64_t)tu_passed, (uint64_t)tu_failed};
    kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, counts, 2);
    if (rank == 0)
        printf("test_flow_mg_ranks (%d ranks): %llu passed, %llu failed\n", size,
               (unsigned long long)counts[0], (unsigned long long)counts[1]);
    kedr_comm_finalize(comm);
    return counts[1] ? 1 : 0;
}
