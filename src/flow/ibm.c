/* The immersed boundary method of Su, Lai & Lin (2007), Computers & Fluids 36: a force on the
 * Lagrangian points of every body's surface such that the velocity interpolated there after the
 * forcing is the body's velocity:
 *
 *   u~ = u^ + dt L* g,   (L L*) g = (U_b - L u^) / dt      (seed 000, eq. 12.20)
 *
 * with L the interpolation of one velocity component to the points and L* its adjoint, the
 * spreading (ibm_point.h). L L* is symmetric positive semidefinite; it is applied without being
 * stored (zero the points' stencils of a scratch grid, spread, interpolate), so a moving body's
 * system follows its points with nothing to rebuild but their positions. The scratch grid is
 * the bodies' box (the cells their stencils touch, in the whole grid), so that over ranks each
 * rank applies the whole operator and the force systems' iterations need no message.
 * Conjugate gradients solve it, one system per velocity component, from the last step's g.
 * The force on the fluid is rho h^d sum_l g_l (sum_x w_l(x) = 1). */
#include "core/internal.h"
#include "flow/ibm.h"
#include "flow/ops.h"
#include "flow/sim.h"
#include "kedr/comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the point operations ---------------------------------------------------------------- */

kedr_status flow_ibm_map(kedr_ctx *ctx, const flow_grid *g, const flow_ibm_args *A,
                         flow_ibm_op op, size_t n)
{
    if (n == 0)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return flow_cuda_ibm_map(ctx, g, A, op, n);
#else
    (void)ctx;
#endif
    if (op == FLOW_IBM_STENCIL || op == FLOW_IBM_INTERP || op == FLOW_IBM_INTERP_RHS) {
#pragma omp parallel for schedule(static) if (n >= 4096)
        for (size_t l = 0; l < n; l++)
            flow_ibm_point(g, A, op, l);
    } else { /* spreading: stencils overlap; one thread, in point order */
        for (size_t l = 0; l < n; l++)
            flow_ibm_point(g, A, op, l);
    }
    return KEDR_OK;
}

double flow_ibm_margin(kedr_flow_delta delta) { return 0.5 * flow_ibm_width(delta); }

/* ---- geometry ------------------------------------------------------------------------------ */

typedef struct {
    double *v;
    size_t n, cap;
} pts;

static kedr_status add(pts *p, double x, double y, double z)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        double *v = realloc(p->v, 3 * cap * sizeof *v);
        if (!v)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes for body points",
                             3 * cap * sizeof *v);
        p->v = v;
        p->cap = cap;
    }
    p->v[3 * p->n] = x;
    p->v[3 * p->n + 1] = y;
    p->v[3 * p->n + 2] = z;
    p->n++;
    return KEDR_OK;
}

static int count_over(double len, double ds)
{
    int m = (int)ceil(len / ds - 1e-9);
    return m < 1 ? 1 : m;
}

/* A ring of radius r about the axis `ax` at height t along it (3D), or the circle (2D). */
static kedr_status ring(pts *p, const double c[3], int ax, double r, double t, double ds,
                        int min)
{
    int m = count_over(2 * M_PI * r, ds);
    m = m < min ? min : m;
    int u = (ax + 1) % 3, v = (ax + 2) % 3;
    for (int l = 0; l < m; l++) {
        double th = 2 * M_PI * l / m, x[3];
        x[ax] = c[ax] + t;
        x[u] = c[u] + r * cos(th);
        x[v] = c[v] + r * sin(th);
        KEDR_TRY(add(p, x[0], x[1], x[2]));
    }
    return KEDR_OK;
}

/* A disc of radius R (a cylinder's cap): rings of radius R - i dr and its centre. */
static kedr_status disc(pts *p, const double c[3], int ax, double R, double t, double ds)
{
    int m = count_over(R, ds);
    double dr = R / m;
    for (int i = 1; i < m; i++)
        KEDR_TRY(ring(p, c, ax, R - i * dr, t, ds, 3));
    double x[3] = {c[0], c[1], c[2]};
    x[ax] += t;
    return add(p, x[0], x[1], x[2]);
}

static kedr_status read_points(const kedr_flow_body *b, int dims, pts *p)
{
    char *text = NULL;
    size_t len = 0;
    KEDR_TRY(kedr_file_read(b->file, (size_t)64 << 20, &text, &len));
    kedr_status s = KEDR_OK;
    int line = 0;
    for (char *at = text; at && *at && s == KEDR_OK; line++) {
        char *nl = strchr(at, '\n');
        if (nl)
            *nl = 0;
        char *hash = strchr(at, '#');
        if (hash)
            *hash = 0;
        double x[4];
        int k = 0;
        char *q = at;
        for (;;) {
            while (*q == ' ' || *q == '\t' || *q == ',' || *q == '\r')
                q++;
            if (!*q)
                break;
            char *end;
            double v = strtod(q, &end);
            if (end == q || k == 4 || !isfinite(v)) {
                s = kedr_fail(KEDR_ERR_PARSE, "%s:%d: '%s': expected %d numbers (x y%s) a line",
                              b->file, line + 1, at, dims, dims == 3 ? " z" : "");
                break;
            }
            x[k++] = v;
            q = end;
        }
        if (s == KEDR_OK && k != 0 && k != dims)
            s = kedr_fail(KEDR_ERR_PARSE, "%s:%d: %d numbers: expected %d (x y%s) a line",
                          b->file, line + 1, k, dims, dims == 3 ? " z" : "");
        if (s == KEDR_OK && k)
            s = add(p, x[0], x[1], dims == 3 ? x[2] : 0);
        at = nl ? nl + 1 : NULL;
    }
    free(text);
    if (s == KEDR_OK && p->n == 0)
        s = kedr_fail(KEDR_ERR_PARSE, "%s: no points (expected x y%s a line)", b->file,
                      dims == 3 ? " z" : "");
    return s;
}

kedr_status flow_ibm_body_points(const kedr_flow_body *b, int dims, const double length[3],
                                 double ds, double **xyz, size_t *count)
{
    pts p = {NULL, 0, 0};
    const double *c = b->center;
    double R = 0.5 * b->diameter;
    kedr_status s = KEDR_OK;
    *xyz = NULL;
    *count = 0;
    switch (b->shape) {
    case KEDR_FLOW_BODY_CIRCLE: s = ring(&p, c, 2, R, 0, ds, 8); break;
    case KEDR_FLOW_BODY_SPHERE: { /* a Fibonacci lattice: about one point per ds^2 */
        long m = lround(4 * M_PI * R * R / (ds * ds));
        m = m < 12 ? 12 : m;
        double golden = M_PI * (3 - sqrt(5.0));
        for (long l = 0; l < m && s == KEDR_OK; l++) {
            double z = 1 - (2.0 * l + 1) / m, r = sqrt(1 - z * z), th = golden * l;
            s = add(&p, c[0] + R * r * cos(th), c[1] + R * r * sin(th), c[2] + R * z);
        }
        break;
    }
    case KEDR_FLOW_BODY_RECTANGLE:
    case KEDR_FLOW_BODY_BOX: { /* the boundary nodes of a lattice of spacing <= ds */
        int m[3] = {1, 1, 0};
        for (int a = 0; a < dims; a++)
            m[a] = count_over(b->size[a], ds);
        for (int k = 0; k <= m[2] && s == KEDR_OK; k++)
            for (int j = 0; j <= m[1] && s == KEDR_OK; j++)
                for (int i = 0; i <= m[0] && s == KEDR_OK; i++) {
                    int on = i == 0 || i == m[0] || j == 0 || j == m[1] ||
                             (dims == 3 && (k == 0 || k == m[2]));
                    if (!on)
                        continue;
                    int ijk[3] = {i, j, k};
                    double x[3] = {c[0], c[1], dims == 3 ? c[2] : 0};
                    for (int a = 0; a < dims; a++)
                        x[a] += b->size[a] * ((double)ijk[a] / m[a] - 0.5);
                    s = add(&p, x[0], x[1], x[2]);
                }
        break;
    }
    case KEDR_FLOW_BODY_CYLINDER: {
        int ax = b->axis;
        if (b->length > 0) { /* rings from end to end, and the caps */
            int m = count_over(b->length, ds);
            for (int i = 0; i <= m && s == KEDR_OK; i++)
                s = ring(&p, c, ax, R, b->length * ((double)i / m - 0.5), ds, 8);
            for (int e = 0; e < 2 && s == KEDR_OK; e++)
                s = disc(&p, c, ax, R, (e ? 0.5 : -0.5) * b->length, ds);
        } else { /* the whole periodic axis: rings that tile it */
            int m = count_over(length[ax], ds);
            for (int i = 0; i < m && s == KEDR_OK; i++)
                s = ring(&p, c, ax, R, length[ax] * i / m - c[ax] + 0.5 * length[ax] / m, ds,
                         8);
        }
        break;
    }
    default: s = read_points(b, dims, &p);
    }
    if (s != KEDR_OK) {
        free(p.v);
        return s;
    }
    *xyz = p.v;
    *count = p.n;
    return KEDR_OK;
}

/* ---- creation ---------------------------------------------------------------------------- */

void flow_ibm_destroy(flow_ibm *ib)
{
    if (!ib)
        return;
    for (int a = 0; a < 3; a++) {
        kedr_free(ib->ctx, ib->X[a]);
        kedr_free(ib->ctx, ib->ub[a]);
        kedr_free(ib->ctx, ib->g[a]);
    }
    kedr_free(ib->ctx, ib->r);
    kedr_free(ib->ctx, ib->p);
    kedr_free(ib->ctx, ib->q);
    kedr_free(ib->ctx, ib->scratch);
    kedr_free(ib->ctx, ib->st);
    kedr_free(ib->ctx, ib->stb);
    kedr_free(ib->ctx, ib->bscratch);
    kedr_free(ib->ctx, ib->cg_state);
    kedr_free(ib->ctx, ib->cg_part);
    kedr_replay_clear(&ib->cg_graph);
    kedr_comm_dev_release(ib->sum_dev);
    kedr_free(ib->ctx, ib->sum);
    free(ib->body);
    free(ib->first);
    free(ib->X0);
    free(ib->Xh);
    free(ib->Uh);
    free(ib->gh);
    free(ib->state);
    free(ib);
}

static double hmin(const struct kedr_flow *f)
{
    double h = f->h[0];
    for (int a = 1; a < f->dims; a++)
        h = f->h[a] < h ? f->h[a] : h;
    return h;
}

kedr_status flow_ibm_create(struct kedr_flow *f, flow_ibm **out)
{
    *out = NULL;
    const kedr_flow_case *c = &f->c;
    if (c->nbodies <= 0)
        return KEDR_OK;
    if (!(f->c.ibm_tol > 0)) /* 0: the defaults */
        f->c.ibm_tol = 1e-8;
    if (f->c.ibm_max_iter <= 0)
        f->c.ibm_max_iter = 500;
    flow_ibm *ib = calloc(1, sizeof *ib);
    if (!ib)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes", sizeof *ib);
    ib->ctx = f->ctx;
    ib->nbodies = c->nbodies;
    ib->dims = f->dims;
    ib->time = -1;
    ib->st_mask = 0;
    kedr_status s = flow_fuse_env(&ib->fuse, KEDR_IS_CUDA(ib->ctx));
    if (s == KEDR_OK) /* 0: L L* on the slab, summed over the ranks each product */
        s = flow_env_switch("KEDR_FLOW_IBM_BOX", 1, "1 (the force systems on the bodies' box, "
                            "every rank the whole; the default) or 0 (on the slab, summed over "
                            "the ranks each product)", &ib->box_on);
    if (s == KEDR_OK)
        s = flow_env_switch("KEDR_FLOW_IBM_GRAPH", 1, "1 (on cuda, a batch of the force systems' "
                            "CG iterations recorded once as a CUDA graph and replayed, the "
                            "default) or 0 (launched kernel by kernel)", &ib->graph);
    ib->first = calloc((size_t)c->nbodies + 1, sizeof *ib->first);
    ib->state = calloc((size_t)c->nbodies, sizeof *ib->state);
    if (!ib->first || !ib->state)
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr flow: body records");
    for (int b = 0; b < c->nbodies && s == KEDR_OK; b++) {
        const kedr_flow_body *B = &c->body[b];
        double *xyz;
        size_t n;
        s = flow_ibm_body_points(B, f->dims, c->length, B->spacing * hmin(f), &xyz, &n);
        if (s != KEDR_OK)
            break;
        double *X0 = realloc(ib->X0, 3 * (ib->N + n) * sizeof *X0);
        if (!X0) {
            free(xyz);
            s = kedr_fail(KEDR_ERR_NOMEM, "kedr flow: body points");
            break;
        }
        ib->X0 = X0;
        memcpy(X0 + 3 * ib->N, xyz, 3 * n * sizeof *xyz);
        free(xyz);
        ib->N += n;
        ib->first[b + 1] = ib->N;
        ib->state[b].points = (int)n;
        for (int a = 0; a < 3; a++)
            if (B->frequency != 0 || B->velocity[a] != 0)
                ib->moving = 1;
    }
    size_t N = ib->N;
    if (s == KEDR_OK) {
        ib->body = malloc(N * sizeof *ib->body);
        ib->Xh = calloc(3 * N, sizeof *ib->Xh);
        ib->Uh = calloc(3 * N, sizeof *ib->Uh);
        ib->gh = calloc(3 * N, sizeof *ib->gh);
        if (!ib->body || !ib->Xh || !ib->Uh || !ib->gh)
            s = kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes of host memory for %zu body "
                          "points", 10 * N * sizeof(double), N);
    }
    for (int b = 0; b < c->nbodies && s == KEDR_OK; b++)
        for (size_t l = ib->first[b]; l < ib->first[b + 1]; l++)
            ib->body[l] = b;
    for (int a = 0; a < f->dims && s == KEDR_OK; a++) {
        double **v[] = {&ib->X[a], &ib->ub[a], &ib->g[a]};
        for (int i = 0; i < 3 && s == KEDR_OK; i++)
            if ((s = kedr_alloc(f->ctx, (void **)v[i], N * sizeof(double))) == KEDR_OK)
                s = kedr_memset(f->ctx, *v[i], 0, N * sizeof(double));
    }
    size_t DN = (size_t)f->dims * N; /* a point vector for every component */
    double **w[] = {&ib->r, &ib->p, &ib->q};
    for (int i = 0; i < 3 && s == KEDR_OK; i++)
        if ((s = kedr_alloc(f->ctx, (void **)w[i], DN * sizeof(double))) == KEDR_OK)
            s = kedr_memset(f->ctx, *w[i], 0, DN * sizeof(double));
    if (s == KEDR_OK)
        s = kedr_alloc(f->ctx, (void **)&ib->st, DN * sizeof(flow_ibm_stencil));
    if (s == KEDR_OK)
        s = kedr_alloc(f->ctx, (void **)&ib->stb, DN * sizeof(flow_ibm_stencil));
    if (s == KEDR_OK && KEDR_IS_CUDA(f->ctx)) {
        s = kedr_alloc(f->ctx, (void **)&ib->cg_state, sizeof(flow_ibm_cg_state));
        if (s == KEDR_OK)
            s = kedr_alloc(f->ctx, (void **)&ib->cg_part,
                           3 * FLOW_IBM_CG_BLOCKS * sizeof(double));
    }
    if (s == KEDR_OK && (s = kedr_alloc(f->ctx, (void **)&ib->scratch,
                                        f->padded * sizeof(double))) == KEDR_OK)
        s = kedr_memset(f->ctx, ib->scratch, 0, f->padded * sizeof(double));
    if (s == KEDR_OK && f->split >= 0)
        s = kedr_alloc(f->ctx, (void **)&ib->sum, (size_t)f->nranks * DN * sizeof(double));
    if (s != KEDR_OK) {
        flow_ibm_destroy(ib);
        return s;
    }
    *out = ib;
    return KEDR_OK;
}

kedr_status flow_ibm_register(struct kedr_flow *f)
{
    flow_ibm *ib = f->ibm;
    /* ordered: the slots are read by kernels on the context's stream only */
    return kedr_comm_dev_register_flags(f->comm, f->ctx, ib->sum,
                                        (size_t)f->nranks * f->dims * ib->N * sizeof(double),
                                        KEDR_COMM_DEV_ORDERED, &ib->sum_dev);
}

/* ---- motion ------------------------------------------------------------------------------ */

/* The displacement, velocity and acceleration of body B at time t. */
static void motion(const kedr_flow_body *B, double t, double d[3], double v[3], double acc[3])
{
    double w = 2 * M_PI * B->frequency, ph = w * t + B->phase;
    for (int a = 0; a < 3; a++) {
        d[a] = B->amplitude[a] * sin(ph) + B->velocity[a] * t;
        v[a] = B->amplitude[a] * w * cos(ph) + B->velocity[a];
        acc[a] = -B->amplitude[a] * w * w * sin(ph);
    }
}

/* The bodies' box for the positions in Xh: along each axis the whole grid's padded indices
 * first .. last that any point's stencil of any component can touch (the formula of
 * flow_ibm_stencil_at, one index wider each way against rounding), or the whole axis where a
 * periodic one wraps; kept only while its arrays are no larger than the whole padded grid
 * over the ranks plus 2^20 cells (the same choice on every rank: the old path sums over the
 * ranks, so all must take the same). */
static kedr_status box_place(struct kedr_flow *f)
{
    flow_ibm *ib = f->ibm;
    const flow_grid *g = &f->g;
    size_t N = ib->N;
    int W = flow_ibm_width(f->c.delta);
    flow_grid b = *g;
    double whole = 1, cells = 1;
    b.box = 1;
    b.split = -1;
    for (int a = 0; a < 3; a++) {
        int n = a == g->split ? g->nsplit : g->n[a], lo = 1, hi = 1;
        int periodic = f->gkind[2 * a] == KEDR_FLOW_BC_PERIODIC;
        if (a < f->dims) {
            lo = INT32_MAX;
            hi = INT32_MIN;
            for (size_t l = 0; l < N; l++)
                for (int comp = 0; comp < f->dims; comp++) {
                    double x = ib->Xh[a * N + l] / g->h[a] + (a == comp ? 1.0 : 0.5);
                    int i0 = (int)floor(x - 0.5 * W) + 1;
                    lo = i0 - 1 < lo ? i0 - 1 : lo;
                    hi = i0 + W > hi ? i0 + W : hi;
                }
            if (periodic && (lo < 1 || hi > n)) {
                lo = 1;
                hi = n;
            }
            whole *= n + 2.0;
        }
        b.bn[a] = n;
        b.bper[a] = periodic;
        b.off[a] = lo - 1;
        b.n[a] = hi - lo + 1;
    }
    b.s[0] = 1;
    b.s[1] = (size_t)b.n[0] + 1; /* box index 1 .. n an axis: index 0 unused */
    b.s[2] = b.s[1] * ((size_t)b.n[1] + 1);
    cells = (double)b.s[2] * (f->dims == 3 ? b.n[2] + 1.0 : 1.0);
    ib->have_box = ib->box_on &&
                   f->dims * cells <= whole / (f->nranks > 1 ? f->nranks : 1) + 1048576.0;
    if (!ib->have_box)
        return KEDR_OK;
    ib->gbox = b;
    ib->bcells = (size_t)cells;
    size_t need = (size_t)f->dims * ib->bcells;
    if (need > ib->bcap) {
        kedr_free(f->ctx, ib->bscratch);
        ib->bscratch = NULL;
        ib->bcap = 0;
        KEDR_TRY(kedr_alloc(f->ctx, (void **)&ib->bscratch, need * sizeof(double)));
        ib->bcap = need;
        /* zeroed once: every use clears its points' stencils first (FLOW_IBM_ZERO) and
         * reads nothing outside them */
        KEDR_TRY(kedr_memset(f->ctx, ib->bscratch, 0, need * sizeof(double)));
    }
    return KEDR_OK;
}

kedr_status flow_ibm_place(struct kedr_flow *f, double t)
{
    flow_ibm *ib = f->ibm;
    if (!ib || (ib->time >= 0 && (!ib->moving || ib->time == t)))
        return KEDR_OK;
    const kedr_flow_case *c = &f->c;
    size_t N = ib->N;
    double margin = flow_ibm_margin(c->delta);
    static const char *const faces[6] = {"x_min", "x_max", "y_min", "y_max", "z_min", "z_max"};
    for (int b = 0; b < ib->nbodies; b++) {
        const kedr_flow_body *B = &c->body[b];
        double d[3], v[3], acc[3];
        motion(B, t, d, v, acc);
        for (int a = 0; a < 3; a++) {
            ib->state[b].center[a] = B->center[a] + d[a];
            ib->state[b].velocity[a] = a < f->dims ? v[a] : 0;
        }
        for (size_t l = ib->first[b]; l < ib->first[b + 1]; l++)
            for (int a = 0; a < f->dims; a++) {
                double x = ib->X0[3 * l + a] + d[a];
                ib->Xh[a * N + l] = x;
                ib->Uh[a * N + l] = v[a];
                if (f->gkind[2 * a] == KEDR_FLOW_BC_PERIODIC) /* the whole grid's */
                    continue;
                double lo = margin * f->h[a], hi = c->length[a] - margin * f->h[a];
                if (x < lo * (1 - 1e-12) || x > hi + 1e-12 * c->length[a])
                    return kedr_fail(KEDR_ERR_INVALID, "kedr flow: body %s at t = %.6g: a "
                                     "surface point at %c = %.6g is within %g cells of the %s "
                                     "boundary (the delta's support must stay inside the box)",
                                     B->name, t, "xyz"[a], x, margin, faces[2 * a + (x > hi)]);
            }
    }
    for (int a = 0; a < f->dims; a++) {
        KEDR_TRY(kedr_upload(f->ctx, ib->X[a], ib->Xh + a * N, N * sizeof(double)));
        KEDR_TRY(kedr_upload(f->ctx, ib->ub[a], ib->Uh + a * N, N * sizeof(double)));
    }
    ib->time = t;
    ib->st_mask = 0; /* the stencils moved */
    return box_place(f);
}

/* ---- the force system ---------------------------------------------------------------------- */

static flow_ibm_args point_args(const struct kedr_flow *f, int comp)
{
    flow_ibm_args A;
    memset(&A, 0, sizeof A);
    for (int a = 0; a < 3; a++)
        A.X[a] = f->ibm->X[a];
    A.comp = comp;
    A.delta = f->c.delta;
    A.scale = 1;
    A.st = f->ibm->st_mask >> comp & 1 ? f->ibm->st + (size_t)comp * f->ibm->N : NULL;
    return A;
}

/* Over ranks: every slab interpolated its own part of each point's stencil; the sum over the
 * ranks is the whole (every rank then holds the same point vectors, and the force CG runs the
 * same on each). Each rank's vector goes to its slot of every rank's sum buffer (on the device:
 * GPU to GPU between the ranks of a host, through the host otherwise), and each rank adds the
 * slots in rank order on the device: the same sum on every rank. */
#define TAG_SUM 50
static kedr_status sum_ranks(struct kedr_flow *f, double *v, size_t N)
{
    if (f->split < 0)
        return KEDR_OK;
    flow_ibm *ib = f->ibm;
    size_t slot = N * sizeof(double); /* N: a component's N points, or every component's */
    int P = f->nranks, me = f->rank;
    kedr_comm_dev_msg m[2 * 64], *msg = m;
    if (P > 64 && !(msg = malloc(2 * (size_t)P * sizeof *msg)))
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: messages of %d ranks", P);
    int n = 0;
    for (int q = 0; q < P; q++)
        if (q != me) {
            msg[n] = (kedr_comm_dev_msg){q, TAG_SUM, me * slot, me * slot, slot};
            msg[P + n++] = (kedr_comm_dev_msg){q, TAG_SUM, 0, q * slot, slot};
        }
    kedr_status s = flow_prof() ? kedr_ctx_sync(f->ctx) : KEDR_OK;
    double t0 = kedr_wall_seconds();
    if (s == KEDR_OK)
        s = flow_op_copy(f->ctx, ib->sum + (size_t)me * N, v, slot);
    if (s == KEDR_OK)
        s = kedr_comm_dev_sendrecv(ib->sum_dev, n, msg, n, msg + P);
    if (msg != m)
        free(msg);
    if (s == KEDR_OK && flow_prof()) /* ordered transfers complete on the device */
        s = kedr_ctx_sync(f->ctx);
    KEDR_TRY(s);
    KEDR_TRY(flow_op_copy(f->ctx, v, ib->sum, slot));
    for (int q = 1; q < P; q++)
        KEDR_TRY(flow_op_axpy(f->ctx, N, 1.0, ib->sum + (size_t)q * N, v));
    ib->sum_seconds += kedr_wall_seconds() - t0;
    ib->sums++;
    return KEDR_OK;
}

/* y[c] = (L L*) x[c] for every component c in mask on the bodies' box: the whole product on
 * every rank, no sum over ranks (each box cell adds the same points' spreads in the same order
 * as the slabs' cells do). */
static kedr_status apply_box(struct kedr_flow *f, int mask, const double *const x[3],
                             double *const y[3])
{
    flow_ibm *ib = f->ibm;
    for (int c = 0; c < f->dims; c++) {
        if (!(mask >> c & 1))
            continue;
        flow_ibm_args A = point_args(f, c);
        A.st = ib->st_mask >> c & 1 ? ib->stb + (size_t)c * ib->N : NULL;
        A.field = ib->bscratch + (size_t)c * ib->bcells;
        A.in = x[c];
        A.out = y[c];
        KEDR_TRY(flow_ibm_map(f->ctx, &ib->gbox, &A, FLOW_IBM_ZERO, ib->N));
        KEDR_TRY(flow_ibm_map(f->ctx, &ib->gbox, &A, FLOW_IBM_SPREAD, ib->N));
        KEDR_TRY(flow_ibm_map(f->ctx, &ib->gbox, &A, FLOW_IBM_INTERP, ib->N));
    }
    return KEDR_OK;
}

kedr_status flow_ibm_apply(struct kedr_flow *f, int comp, const double *x, double *y)
{
    flow_ibm *ib = f->ibm;
    if (ib->have_box) {
        const double *xs[3] = {x, x, x};
        double *ys[3] = {y, y, y};
        return apply_box(f, 1 << comp, xs, ys);
    }
    flow_ibm_args A = point_args(f, comp);
    A.field = ib->scratch;
    A.in = x;
    A.out = y;
    KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_ZERO, ib->N));
    KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_SPREAD, ib->N));
    KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_INTERP, ib->N));
    return sum_ranks(f, y, ib->N);
}

/* y_c = (L L*) x_c for every component c in mask (x_c, y_c: N from c N), with one sum over
 * ranks for all (y of the components not in mask: not meaningful). Each component's interpolation
 * and each point's sum over the ranks are the same arithmetic as flow_ibm_apply's. */
static kedr_status apply_all(struct kedr_flow *f, int mask, const double *const x[3], double *y)
{
    flow_ibm *ib = f->ibm;
    size_t N = ib->N;
    if (ib->have_box) {
        double *ys[3] = {y, y + N, y + 2 * N};
        return apply_box(f, mask, x, ys);
    }
    for (int c = 0; c < f->dims; c++) {
        if (!(mask >> c & 1))
            continue;
        flow_ibm_args A = point_args(f, c);
        A.field = ib->scratch;
        A.in = x[c];
        A.out = y + (size_t)c * N;
        KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_ZERO, N));
        KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_SPREAD, N));
        KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_INTERP, N));
    }
    return sum_ranks(f, y, (size_t)f->dims * N);
}

/* Solves (L L*) g = r0 (in ib->r) by CG from the last step's g (the force changes little from
 * step to step), or from 0; the iterations and the residual relative to ||r0||. */
static kedr_status solve(struct kedr_flow *f, int comp, int *iters, double *res)
{
    flow_ibm *ib = f->ibm;
    size_t N = ib->N;
    double *g = ib->g[comp], rr, bb;
    KEDR_TRY(flow_op_dot(f->ctx, N, ib->r, ib->r, &bb));
    *iters = 0;
    *res = 0;
    if (!(bb > 0)) {
        KEDR_TRY(kedr_memset(f->ctx, g, 0, N * sizeof *g));
        return isfinite(bb) ? KEDR_OK : kedr_fail(KEDR_ERR_INVALID, "NaN");
    }
    rr = bb;
    if (ib->have_force) { /* r = r0 - (L L*) g */
        KEDR_TRY(flow_ibm_apply(f, comp, g, ib->q));
        KEDR_TRY(flow_op_axpy(f->ctx, N, -1.0, ib->q, ib->r));
        KEDR_TRY(flow_op_dot(f->ctx, N, ib->r, ib->r, &rr));
    } else {
        KEDR_TRY(kedr_memset(f->ctx, g, 0, N * sizeof *g));
    }
    double tol2 = f->c.ibm_tol * f->c.ibm_tol * bb;
    *res = sqrt(rr / bb);
    if (rr <= tol2)
        return isfinite(rr) ? KEDR_OK : kedr_fail(KEDR_ERR_INVALID, "NaN");
    KEDR_TRY(flow_op_copy(f->ctx, ib->p, ib->r, N * sizeof(double)));
    for (int it = 1; it <= f->c.ibm_max_iter; it++) {
        double pq;
        KEDR_TRY(flow_ibm_apply(f, comp, ib->p, ib->q));
        KEDR_TRY(flow_op_dot(f->ctx, N, ib->p, ib->q, &pq));
        if (!(pq > 0)) { /* p in the null space: r is as small as it gets */
            *res = sqrt(rr / bb);
            return isfinite(pq) ? KEDR_OK : kedr_fail(KEDR_ERR_INVALID, "NaN");
        }
        double alpha = rr / pq, rn;
        KEDR_TRY(flow_op_cg_update(f->ctx, N, g, ib->r, ib->p, ib->q, alpha, &rn));
        *iters = it;
        *res = sqrt(rn / bb);
        if (rn <= tol2)
            return KEDR_OK;
        KEDR_TRY(flow_op_xpby(f->ctx, N, ib->r, rn / rr, ib->p));
        rr = rn;
    }
    return KEDR_OK;
}

#ifdef KEDR_HAVE_CUDA
/* The iterations of solve_all below on the GPU, with the scalars on the device (ibm.cu:
 * flow_cuda_ibm_cg, the same steps: a component leaves where solve_all's would), so that an
 * iteration waits for no download: the state comes back every FLOW_IBM_CG_BATCH iterations (a
 * component done inside a batch is skipped by the rest). On the bodies' box only (no sum over
 * ranks inside). */
#define FLOW_IBM_CG_BATCH 8
typedef struct {
    struct kedr_flow *f;
    const flow_ibm_args *A;
    double *const *g, *const *r, *const *p, *const *q;
    int count;
} cg_batch;

static kedr_status cg_batch_work(void *arg)
{
    const cg_batch *b = arg;
    flow_ibm *ib = b->f->ibm;
    return flow_cuda_ibm_cg(b->f->ctx, &ib->gbox, b->A, b->f->dims, ib->N, b->g, b->r, b->p,
                            b->q, ib->cg_state, ib->cg_part, b->count);
}

/* One batch of the force CG's iterations: a whole batch of a fixed body's systems replayed from
 * its recording (the key: everything its kernels are given, hashed), any other launched. */
static kedr_status cg_batch_run(cg_batch *b)
{
    flow_ibm *ib = b->f->ibm;
    if (!ib->graph || ib->moving || b->count != FLOW_IBM_CG_BATCH)
        return cg_batch_work(b);
    uint64_t h = kedr_fnv1a(KEDR_FNV_START, &ib->gbox, sizeof ib->gbox);
    h = kedr_fnv1a(h, b->A, 3 * sizeof *b->A);
    const void *ptr[14] = {ib->cg_state, ib->cg_part};
    for (int c = 0; c < 3; c++) {
        ptr[2 + c] = b->g[c];
        ptr[5 + c] = b->r[c];
        ptr[8 + c] = b->p[c];
        ptr[11 + c] = b->q[c];
    }
    h = kedr_fnv1a(h, ptr, sizeof ptr);
    uintptr_t key[4] = {(uintptr_t)h, (uintptr_t)ib->N, (uintptr_t)b->f->dims,
                        (uintptr_t)b->count};
    return kedr_replay_run(b->f->ctx, &ib->cg_graph, key, cg_batch_work, b);
}

static kedr_status solve_dev(struct kedr_flow *f, int live, const double rr[3],
                             const double bb[3], const double tol2[3], int iters[3],
                             double res[3], int ok[3])
{
    flow_ibm *ib = f->ibm;
    size_t N = ib->N;
    flow_ibm_cg_state S;
    memset(&S, 0, sizeof S);
    flow_ibm_args A[3];
    double *g[3] = {NULL, NULL, NULL}, *r[3] = {NULL, NULL, NULL}, *p[3] = {NULL, NULL, NULL},
           *q[3] = {NULL, NULL, NULL};
    memset(A, 0, sizeof A);
    for (int c = 0; c < f->dims; c++) {
        S.rr[c] = rr[c];
        S.bb[c] = bb[c];
        S.tol2[c] = tol2[c];
        S.res[c] = res[c];
        S.iters[c] = iters[c];
        g[c] = ib->g[c];
        r[c] = ib->r + (size_t)c * N;
        p[c] = ib->p + (size_t)c * N;
        q[c] = ib->q + (size_t)c * N;
        A[c] = point_args(f, c);
        A[c].st = ib->st_mask >> c & 1 ? ib->stb + (size_t)c * N : NULL;
        A[c].field = ib->bscratch + (size_t)c * ib->bcells;
        A[c].in = p[c];
        A[c].out = q[c];
    }
    S.live = live;
    KEDR_TRY(kedr_upload(f->ctx, ib->cg_state, &S, sizeof S));
    for (int done = 0; done < f->c.ibm_max_iter && S.live; done += FLOW_IBM_CG_BATCH) {
        int left = f->c.ibm_max_iter - done;
        cg_batch b = {f, A, g, r, p, q, left < FLOW_IBM_CG_BATCH ? left : FLOW_IBM_CG_BATCH};
        KEDR_TRY(cg_batch_run(&b));
        KEDR_TRY(kedr_read_back(f->ctx, &S, ib->cg_state, sizeof S));
    }
    for (int c = 0; c < f->dims; c++) {
        iters[c] = S.iters[c];
        res[c] = S.res[c];
        if (S.nan >> c & 1)
            ok[c] = 0;
    }
    return KEDR_OK;
}
#endif

/* solve() for every component side by side (KEDR_FLOW_FUSE=1): each component's CG is
 * solve()'s, step for step, with its own scalars; a component leaves the loop where solve()
 * would have returned, and the products of the rest share one sum over ranks an iteration and
 * their dot products one download (two an iteration for all components, not two each).
 * ok[c] = 0: solve() would have failed (NaN). */
static kedr_status solve_all(struct kedr_flow *f, int iters[3], double res[3], int ok[3])
{
    flow_ibm *ib = f->ibm;
    size_t N = ib->N;
    int D = f->dims;
    double bb[3] = {0, 0, 0}, rr[3] = {0, 0, 0}, tol2[3] = {0, 0, 0};
    double *r[3] = {NULL, NULL, NULL}, *p[3] = {NULL, NULL, NULL}, *q[3] = {NULL, NULL, NULL};
    const double *x[3] = {NULL, NULL, NULL};
    for (int c = 0; c < D; c++) {
        r[c] = ib->r + (size_t)c * N;
        p[c] = ib->p + (size_t)c * N;
        q[c] = ib->q + (size_t)c * N;
        x[c] = p[c];
        iters[c] = 0;
        res[c] = 0;
        ok[c] = 1;
    }
    /* the components' reductions of a stage together: one download for all (flow_op_dots) */
    const double *ra[3], *rb[3];
    double out[3], alpha[3];
    int at[3], m = 0, live = 0, warm = 0;
    for (int c = 0; c < D; c++)
        ra[c] = r[c];
    KEDR_TRY(flow_op_dots(f->ctx, D, N, ra, ra, bb));
    for (int c = 0; c < D; c++) {
        if (!(bb[c] > 0)) {
            KEDR_TRY(kedr_memset(f->ctx, ib->g[c], 0, N * sizeof(double)));
            ok[c] = isfinite(bb[c]);
            continue;
        }
        rr[c] = bb[c];
        live |= 1 << c;
        if (ib->have_force)
            warm |= 1 << c;
        else
            KEDR_TRY(kedr_memset(f->ctx, ib->g[c], 0, N * sizeof(double)));
    }
    if (warm) { /* r = r0 - (L L*) g */
        const double *g[3] = {ib->g[0], ib->g[1], ib->g[2]};
        KEDR_TRY(apply_all(f, warm, g, ib->q));
        m = 0;
        for (int c = 0; c < D; c++)
            if (warm >> c & 1) {
                KEDR_TRY(flow_op_axpy(f->ctx, N, -1.0, q[c], r[c]));
                ra[m] = r[c];
                at[m++] = c;
            }
        KEDR_TRY(flow_op_dots(f->ctx, m, N, ra, ra, out));
        for (int i = 0; i < m; i++)
            rr[at[i]] = out[i];
    }
    for (int c = 0; c < D; c++) {
        if (!(live >> c & 1))
            continue;
        tol2[c] = f->c.ibm_tol * f->c.ibm_tol * bb[c];
        res[c] = sqrt(rr[c] / bb[c]);
        if (rr[c] <= tol2[c]) {
            ok[c] = isfinite(rr[c]);
            live &= ~(1 << c);
        } else {
            KEDR_TRY(flow_op_copy(f->ctx, p[c], r[c], N * sizeof(double)));
        }
    }
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(f->ctx) && ib->have_box && live)
        return solve_dev(f, live, rr, bb, tol2, iters, res, ok);
#endif
    for (int it = 1; it <= f->c.ibm_max_iter && live; it++) {
        KEDR_TRY(apply_all(f, live, x, ib->q));
        m = 0;
        for (int c = 0; c < D; c++)
            if (live >> c & 1) {
                ra[m] = p[c];
                rb[m] = q[c];
                at[m++] = c;
            }
        double pq[3];
        KEDR_TRY(flow_op_dots(f->ctx, m, N, ra, rb, pq));
        double *ux[3], *ur[3];
        const double *up[3], *uq[3];
        int n = 0, un[3];
        for (int i = 0; i < m; i++) {
            int c = at[i];
            if (!(pq[i] > 0)) { /* p in the null space: r is as small as it gets */
                res[c] = sqrt(rr[c] / bb[c]);
                ok[c] = isfinite(pq[i]);
                live &= ~(1 << c);
                continue;
            }
            ux[n] = ib->g[c];
            ur[n] = r[c];
            up[n] = p[c];
            uq[n] = q[c];
            alpha[n] = rr[c] / pq[i];
            un[n++] = c;
        }
        KEDR_TRY(flow_op_cg_updates(f->ctx, n, N, ux, ur, up, uq, alpha, out));
        for (int i = 0; i < n; i++) {
            int c = un[i];
            double rn = out[i];
            iters[c] = it;
            res[c] = sqrt(rn / bb[c]);
            if (rn <= tol2[c]) {
                live &= ~(1 << c);
                continue;
            }
            KEDR_TRY(flow_op_xpby(f->ctx, N, r[c], rn / rr[c], p[c]));
            rr[c] = rn;
        }
    }
    return KEDR_OK;
}

/* The bodies' forces and moments from g (host). */
static kedr_status body_forces(struct kedr_flow *f)
{
    flow_ibm *ib = f->ibm;
    const kedr_flow_case *c = &f->c;
    size_t N = ib->N;
    for (int a = 0; a < f->dims; a++)
        KEDR_TRY(kedr_download(f->ctx, ib->gh + a * N, ib->g[a], N * sizeof(double)));
    double hv = 1;
    for (int a = 0; a < f->dims; a++)
        hv *= f->h[a];
    for (int b = 0; b < ib->nbodies; b++) {
        const kedr_flow_body *B = &c->body[b];
        kedr_flow_body_state *st = &ib->state[b];
        double F[3] = {0, 0, 0}, M[3] = {0, 0, 0}, d[3], v[3], acc[3];
        motion(B, ib->time, d, v, acc);
        for (size_t l = ib->first[b]; l < ib->first[b + 1]; l++) {
            double gl[3] = {0, 0, 0}, r[3] = {0, 0, 0};
            for (int a = 0; a < f->dims; a++) {
                gl[a] = ib->gh[a * N + l];
                r[a] = ib->Xh[a * N + l] - st->center[a];
                F[a] += gl[a];
            }
            M[0] += r[1] * gl[2] - r[2] * gl[1];
            M[1] += r[2] * gl[0] - r[0] * gl[2];
            M[2] += r[0] * gl[1] - r[1] * gl[0];
        }
        double q = 0.5 * c->rho * B->ref_velocity * B->ref_velocity *
                   (f->dims == 3 ? B->ref_area : B->ref_length);
        for (int a = 0; a < 3; a++) {
            /* the fluid on the body: minus the force on the fluid, plus the inertia of the
             * fluid the body carries (Uhlmann 2005, J. Comput. Phys. 209, eq. 31) */
            st->force[a] = a < f->dims ? -c->rho * hv * F[a] + c->rho * B->volume * acc[a] : 0;
            st->moment[a] = -c->rho * hv * M[a];
        }
        if (f->dims == 2)
            st->moment[0] = st->moment[1] = 0;
        st->cd = st->force[0] / q;
        st->cl = st->force[1] / q;
        st->cs = st->force[2] / q;
    }
    ib->have_force = 1;
    return KEDR_OK;
}

/* Component b's stencils into its part of ib->st (A: its point_args, A->st set). */
static kedr_status stencils(struct kedr_flow *f, int b, flow_ibm_args *A)
{
    flow_ibm *ib = f->ibm;
    A->st = ib->st + (size_t)b * ib->N;
    KEDR_TRY(flow_ibm_map(f->ctx, &f->g, A, FLOW_IBM_STENCIL, ib->N));
    if (ib->have_box) {
        flow_ibm_args B = *A;
        B.st = ib->stb + (size_t)b * ib->N;
        KEDR_TRY(flow_ibm_map(f->ctx, &ib->gbox, &B, FLOW_IBM_STENCIL, ib->N));
    }
    ib->st_mask |= 1 << b;
    return KEDR_OK;
}

static kedr_status nan_error(int b)
{
    return kedr_fail(KEDR_ERR_INVALID, "kedr flow: the immersed-boundary force system of the %c "
                     "velocity holds NaN or infinite values", "uvw"[b]);
}

static kedr_status tol_error(const struct kedr_flow *f, int b, int it, double res)
{
    return kedr_fail(KEDR_ERR_INVALID, "kedr flow: the immersed-boundary force system of the %c "
                     "velocity did not converge in %d iterations (relative residual %.3g, "
                     "tolerance %g): raise [ibm] max_iter or tol, or space the points wider "
                     "([body] spacing)", "uvw"[b], it, res, f->c.ibm_tol);
}

/* The forcing with the components side by side (KEDR_FLOW_FUSE=1): the right-hand sides of
 * all components in one sum over ranks, their systems by solve_all, then, component by
 * component as the other path, the checks and the spreading. Spreading component b changes
 * qt[b] alone, which no other component's system reads: the same numbers as the other path. */
static kedr_status force_fused(struct kedr_flow *f, double dt)
{
    flow_ibm *ib = f->ibm;
    size_t N = ib->N;
    for (int b = 0; b < f->dims; b++) {
        flow_ibm_args A = point_args(f, b);
        if (!A.st)
            KEDR_TRY(stencils(f, b, &A));
        A.field = f->qt[b];
        A.ub = f->rank == 0 ? ib->ub[b] : NULL; /* over ranks, added once */
        A.out = ib->r + (size_t)b * N;
        A.scale = 1 / dt;
        KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_INTERP_RHS, N));
    }
    KEDR_TRY(sum_ranks(f, ib->r, (size_t)f->dims * N));
    int it[3], ok[3];
    double res[3];
    KEDR_TRY(solve_all(f, it, res, ok));
    for (int b = 0; b < f->dims; b++) {
        if (!ok[b])
            return nan_error(b);
        ib->iterations = it[b] > ib->iterations ? it[b] : ib->iterations;
        ib->residual = res[b] > ib->residual ? res[b] : ib->residual;
        if (res[b] > f->c.ibm_tol)
            return tol_error(f, b, it[b], res[b]);
        flow_ibm_args A = point_args(f, b);
        A.field = f->qt[b];
        A.in = ib->g[b];
        A.scale = dt;
        KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_SPREAD, N));
    }
    return KEDR_OK;
}

kedr_status flow_ibm_force(struct kedr_flow *f, double dt, double t)
{
    flow_ibm *ib = f->ibm;
    if (!ib)
        return KEDR_OK;
    double t0 = kedr_wall_seconds();
    KEDR_TRY(flow_ibm_place(f, t));
    ib->iterations = 0;
    ib->residual = 0;
    if (ib->fuse) {
        kedr_status s = force_fused(f, dt);
        if (s == KEDR_OK)
            s = body_forces(f);
        ib->seconds += kedr_wall_seconds() - t0;
        return s;
    }
    for (int b = 0; b < f->dims; b++) {
        flow_ibm_args A = point_args(f, b);
        if (!A.st) /* this component's stencils, once for the step's operations */
            KEDR_TRY(stencils(f, b, &A));
        A.field = f->qt[b];
        A.ub = f->rank == 0 ? ib->ub[b] : NULL; /* over ranks, added once */
        A.out = ib->r;
        A.scale = 1 / dt;
        KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_INTERP_RHS, ib->N));
        KEDR_TRY(sum_ranks(f, ib->r, ib->N));
        int it;
        double res;
        kedr_status s = solve(f, b, &it, &res);
        if (s != KEDR_OK)
            return nan_error(b);
        ib->iterations = it > ib->iterations ? it : ib->iterations;
        ib->residual = res > ib->residual ? res : ib->residual;
        if (res > f->c.ibm_tol)
            return tol_error(f, b, it, res);
        A.in = ib->g[b];
        A.scale = dt;
        KEDR_TRY(flow_ibm_map(f->ctx, &f->g, &A, FLOW_IBM_SPREAD, ib->N));
    }
    kedr_status s = body_forces(f);
    ib->seconds += kedr_wall_seconds() - t0;
    return s;
}

/* ---- the public getters ------------------------------------------------------------------- */

int kedr_flow_bodies(const kedr_flow *f) { return f->ibm ? f->ibm->nbodies : 0; }

kedr_status kedr_flow_body_get(const kedr_flow *f, int body, kedr_flow_body_state *st)
{
    if (body < 0 || body >= kedr_flow_bodies(f))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_flow_body_get: body %d of %d", body,
                         kedr_flow_bodies(f));
    *st = f->ibm->state[body];
    return KEDR_OK;
}

kedr_status kedr_flow_body_points(const kedr_flow *f, int body, double *xyz)
{
    if (body < 0 || body >= kedr_flow_bodies(f))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_flow_body_points: body %d of %d", body,
                         kedr_flow_bodies(f));
    const flow_ibm *ib = f->ibm;
    size_t n = ib->first[body + 1] - ib->first[body];
    memcpy(xyz, ib->X0 + 3 * ib->first[body], 3 * n * sizeof *xyz);
    return KEDR_OK;
}
