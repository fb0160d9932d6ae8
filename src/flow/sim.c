/* The flow solver's time step on the cpu (docs/flow.md): the right-hand side H = -div(u u) +
 * nu lap u in the conservative form of Morinishi et al. (1998), Adams–Bashforth 2, the
 * intermediate velocity with the old pressure gradient, the boundary conditions (walls, moving
 * lids, slip, inflow profiles, convective outflow with the flux balanced, periodic), and the
 * projection: A phi = -div(u~)/dt, u = u~ - dt grad phi, P += phi. */
#include "core/internal.h"
#include "flow/poisson_impl.h"
#include "flow/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_OMP_MIN 16384

/* ---- allocation -------------------------------------------------------------------------- */

kedr_status flow_alloc(kedr_ctx *ctx, const kedr_flow_case *c, struct kedr_flow **out)
{
    *out = NULL;
    KEDR_TRY(kedr_flow_case_check(c));
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
    for (int a = 0; a < 3; a++) {
        f->n[a] = a < c->dims ? c->n[a] : 1;
        f->h[a] = a < c->dims ? c->length[a] / c->n[a] : 1.0;
        f->cells *= (size_t)f->n[a];
    }
    f->kz = c->dims == 3 ? 1 : 0;
    f->s[0] = 1;
    f->s[1] = (size_t)f->n[0] + 2;
    f->s[2] = f->s[1] * ((size_t)f->n[1] + 2);
    f->padded = f->s[2] * (c->dims == 3 ? (size_t)f->n[2] + 2 : 1);
    kedr_status s = KEDR_OK;
    for (int a = 0; a < c->dims && s == KEDR_OK; a++) {
        double **v[] = {&f->q[a], &f->qt[a], &f->H[a], &f->Hold[a]};
        for (int i = 0; i < 4 && s == KEDR_OK; i++)
            if ((s = kedr_alloc(ctx, (void **)v[i], f->padded * sizeof(double))) == KEDR_OK)
                memset(*v[i], 0, f->padded * sizeof(double));
    }
    double **w[] = {&f->P, &f->phi, &f->rhs};
    for (int i = 0; i < 3 && s == KEDR_OK; i++)
        if ((s = kedr_alloc(ctx, (void **)w[i], f->cells * sizeof(double))) == KEDR_OK)
            memset(*w[i], 0, f->cells * sizeof(double));
    if (s == KEDR_OK) {
        kedr_flow_poisson_opts o = c->poisson;
        for (int a = 0; a < 3; a++) {
            o.n[a] = f->n[a];
            o.h[a] = f->h[a];
            o.periodic[a] = a < c->dims && c->bc[2 * a].kind == KEDR_FLOW_BC_PERIODIC;
        }
        s = kedr_flow_poisson_create(ctx, &o, &f->ps);
    }
    if (s != KEDR_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", kedr_last_error());
        kedr_flow_destroy(f);
        if (s == KEDR_ERR_NOMEM) {
            double bytes = (4.0 * c->dims * (double)f->padded + 12.0 * (double)f->cells) * 8;
            char b[32];
            return kedr_fail(s, "%s: the grid needs about %s", why,
                             kedr_format_bytes(bytes, b, sizeof b));
        }
        return kedr_fail(s, "%s", why);
    }
    *out = f;
    return KEDR_OK;
}

void kedr_flow_destroy(kedr_flow *f)
{
    if (!f)
        return;
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
    free(f);
}

/* ---- boundary conditions ---------------------------------------------------------------- */

/* The inflow velocity's component b at the face centre (x, y, z) of face `face`. */
static double inflow_value(const struct kedr_flow *f, int face, int b, const double x[3])
{
    const kedr_flow_bc *bc = &f->c.bc[face];
    double v = bc->velocity[b];
    if (!bc->parabolic)
        return v;
    int a = face / 2;
    for (int t = 0; t < f->dims; t++)
        if (t != a) {
            double s = x[t] / f->c.length[t];
            v *= 1.5 * 4 * s * (1 - s);
        }
    return v;
}

/* The coordinates of padded point (i, j, k) of component comp (comp = -1: a cell centre). */
static void coords(const struct kedr_flow *f, int comp, const int ijk[3], double x[3])
{
    for (int t = 0; t < 3; t++) {
        int idx = t == 2 && f->dims == 2 ? 1 : ijk[t];
        x[t] = (idx - (t == comp ? 1.0 : 0.5)) * f->h[t];
    }
}

/* Visits the points of the padded layer along axis a at index `at` (all other indices over
 * their full padded range). */
#define FOR_LAYER(f, a, at, I)                                                                \
    for (int I##2 = (a) == 2 ? (at) : 0;                                                      \
         I##2 <= ((a) == 2 ? (at) : (f)->dims == 3 ? (f)->n[2] + 1 : 0); I##2++)              \
        for (int I##1 = (a) == 1 ? (at) : 0; I##1 <= ((a) == 1 ? (at) : (f)->n[1] + 1); I##1++) \
            for (int I##0 = (a) == 0 ? (at) : 0; I##0 <= ((a) == 0 ? (at) : (f)->n[0] + 1);    \
                 I##0++)

static void fill_axis(struct kedr_flow *f, double *const q[3], int a)
{
    const int n = f->n[a];
    const size_t sa = f->s[a];
    const kedr_flow_bc *lo = &f->c.bc[2 * a], *hi = &f->c.bc[2 * a + 1];
    for (int side = 0; side < 2; side++) {
        const kedr_flow_bc *bc = side ? hi : lo;
        int face = 2 * a + side;
        /* normal faces on the boundary: index 1 (lo) or n + 1 (hi); ghosts: 0 or n + 1 */
        int nf = side ? n + 1 : 1, g = side ? n + 1 : 0, in = side ? n : 1;
        FOR_LAYER(f, a, nf, P)
        {
            int ijk[3] = {P0, P1, P2};
            size_t c = flow_at(f, P0, P1, P2);
            if (bc->kind == KEDR_FLOW_BC_PERIODIC) {
                if (side) /* face n + 1 is face 1; face 0 is face n */
                    q[a][c] = q[a][c - (size_t)n * sa];
            } else if (bc->kind == KEDR_FLOW_BC_WALL || bc->kind == KEDR_FLOW_BC_SLIP) {
                q[a][c] = 0;
            } else if (bc->kind == KEDR_FLOW_BC_INFLOW) {
                double x[3];
                coords(f, a, ijk, x);
                q[a][c] = inflow_value(f, face, a, x);
            } /* outflow: set in the step */
        }
        if (bc->kind == KEDR_FLOW_BC_PERIODIC && !side) {
            FOR_LAYER(f, a, 0, P)
            {
                size_t c = flow_at(f, P0, P1, P2);
                q[a][c] = q[a][c + (size_t)n * sa];
            }
        }
        for (int b = 0; b < f->dims; b++) {
            if (b == a)
                continue;
            FOR_LAYER(f, a, g, P)
            {
                int ijk[3] = {P0, P1, P2};
                size_t c = flow_at(f, P0, P1, P2);
                size_t ci = side ? c - sa : c + sa; /* the box's first layer inside */
                switch (bc->kind) {
                case KEDR_FLOW_BC_PERIODIC:
                    q[b][c] = side ? q[b][c - (size_t)n * sa] : q[b][c + (size_t)n * sa];
                    break;
                case KEDR_FLOW_BC_WALL: q[b][c] = 2 * bc->velocity[b] - q[b][ci]; break;
                case KEDR_FLOW_BC_SLIP:
                case KEDR_FLOW_BC_OUTFLOW: q[b][c] = q[b][ci]; break;
                case KEDR_FLOW_BC_INFLOW: {
                    double x[3];
                    ijk[a] = in;
                    coords(f, b, ijk, x);
                    x[a] = side ? f->c.length[a] : 0;
                    q[b][c] = 2 * inflow_value(f, face, b, x) - q[b][ci];
                    break;
                }
                }
            }
        }
    }
}

void flow_fill_bc(struct kedr_flow *f, double *const q[3])
{
    for (int pass = 0; pass < 2; pass++) /* twice: the edges and corners agree */
        for (int a = 0; a < f->dims; a++)
            fill_axis(f, q, a);
}

/* ---- the right-hand side H --------------------------------------------------------------- */

/* The range of unknown faces of component b along axis t: [lo, hi]. */
static void face_range(const struct kedr_flow *f, int b, int t, int *lo, int *hi)
{
    if (t >= f->dims) {
        *lo = *hi = 0;
        return;
    }
    *lo = 1;
    *hi = f->n[t];
    if (t == b && f->c.bc[2 * t].kind != KEDR_FLOW_BC_PERIODIC)
        *lo = 2; /* faces 1 and n + 1 are boundary faces */
}

static void rhs_component(const struct kedr_flow *f, double *const q[3], int b, double *H)
{
    int lo[3], hi[3];
    for (int t = 0; t < 3; t++)
        face_range(f, b, t, &lo[t], &hi[t]);
    const double nu = f->c.nu;
    const int dims = f->dims;
#pragma omp parallel for collapse(2) schedule(static) if (f->cells >= SIM_OMP_MIN)
    for (int k = lo[2]; k <= hi[2]; k++)
        for (int j = lo[1]; j <= hi[1]; j++)
            for (int i = lo[0]; i <= hi[0]; i++) {
                size_t c = flow_at(f, i, j, k);
                const double *qb = q[b];
                double conv = 0, diff = 0;
                for (int a = 0; a < dims; a++) {
                    size_t sa = f->s[a], sb = f->s[b];
                    double ih = 1.0 / f->h[a];
                    if (a == b) {
                        double up = 0.5 * (qb[c] + qb[c + sa]), dn = 0.5 * (qb[c - sa] + qb[c]);
                        conv += (up * up - dn * dn) * ih;
                    } else {
                        const double *qa = q[a];
                        double up = 0.5 * (qa[c + sa] + qa[c + sa - sb]) * 0.5 * (qb[c] + qb[c + sa]);
                        double dn = 0.5 * (qa[c] + qa[c - sb]) * 0.5 * (qb[c - sa] + qb[c]);
                        conv += (up - dn) * ih;
                    }
                    diff += (qb[c + sa] - 2 * qb[c] + qb[c - sa]) * ih * ih;
                }
                H[c] = -conv + nu * diff;
            }
}

/* ---- the step ---------------------------------------------------------------------------- */

void flow_umax(const struct kedr_flow *f, double *const q[3], double umax[3])
{
    for (int a = 0; a < 3; a++)
        umax[a] = 0;
    for (int a = 0; a < f->dims; a++) {
        double m = 0;
        int k0 = f->kz, k1 = f->dims == 3 ? f->n[2] + (a == 2) : 0;
#pragma omp parallel for collapse(2) reduction(max : m) if (f->cells >= SIM_OMP_MIN)
        for (int k = k0; k <= k1; k++)
            for (int j = 1; j <= f->n[1] + (a == 1); j++)
                for (int i = 1; i <= f->n[0] + (a == 0); i++) {
                    double v = fabs(q[a][flow_at(f, i, j, k)]);
                    m = v > m || v != v ? v : m; /* NaN wins */
                }
        umax[a] = m;
    }
    /* walls moving and inflows count from the start */
    for (int face = 0; face < 2 * f->dims; face++)
        for (int a = 0; a < f->dims; a++) {
            const kedr_flow_bc *bc = &f->c.bc[face];
            if (bc->kind == KEDR_FLOW_BC_WALL || bc->kind == KEDR_FLOW_BC_INFLOW) {
                double v = fabs(bc->velocity[a]) * (bc->parabolic ? (f->dims == 3 ? 2.25 : 1.5) : 1);
                umax[a] = v > umax[a] ? v : umax[a];
            }
        }
}

double flow_max_div(const struct kedr_flow *f, double *const q[3])
{
    double m = 0;
    int k0 = f->kz, k1 = f->dims == 3 ? f->n[2] : 0;
#pragma omp parallel for collapse(2) reduction(max : m) if (f->cells >= SIM_OMP_MIN)
    for (int k = k0; k <= k1; k++)
        for (int j = 1; j <= f->n[1]; j++)
            for (int i = 1; i <= f->n[0]; i++) {
                size_t c = flow_at(f, i, j, k);
                double d = 0;
                for (int a = 0; a < f->dims; a++)
                    d += (q[a][c + f->s[a]] - q[a][c]) / f->h[a];
                m = fabs(d) > m ? fabs(d) : m;
            }
    return m;
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

/* The outflow faces: the convective condition d u/dt + Uc d u/dn = 0 for their normal
 * velocity, then one correction over all outflow faces so that the boundary's net flux is 0. */
static void outflow(struct kedr_flow *f, double *const q[3], double *const qn[3], double dt)
{
    double influx = 0, outarea = 0, outflux = 0;
    for (int face = 0; face < 2 * f->dims; face++) {
        int a = face / 2, side = face % 2, nf = side ? f->n[a] + 1 : 1;
        kedr_flow_bc_kind kind = f->c.bc[face].kind;
        if (kind == KEDR_FLOW_BC_PERIODIC)
            continue;
        double area = 1;
        for (int t = 0; t < f->dims; t++)
            area *= t == a ? 1 : f->h[t];
        FOR_LAYER(f, a, nf, P)
        {
            if (P0 < 1 || P0 > f->n[0] + (a == 0) || P1 < 1 || P1 > f->n[1] + (a == 1) ||
                (f->dims == 3 && (P2 < 1 || P2 > f->n[2] + (a == 2))))
                continue;
            size_t c = flow_at(f, P0, P1, P2);
            double out = side ? q[a][c] : -q[a][c]; /* outward normal velocity */
            if (kind == KEDR_FLOW_BC_OUTFLOW) {
                outarea += area;
                outflux += out * area;
            } else {
                influx -= out * area;
            }
        }
    }
    if (outarea == 0)
        return;
    double uc = influx > 0 ? influx / outarea : outflux > 0 ? outflux / outarea : 0;
    double flux = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int face = 0; face < 2 * f->dims; face++) {
            if (f->c.bc[face].kind != KEDR_FLOW_BC_OUTFLOW)
                continue;
            int a = face / 2, side = face % 2, nf = side ? f->n[a] + 1 : 1;
            size_t inward = f->s[a];
            double area = 1, corr = (influx - flux) / outarea;
            for (int t = 0; t < f->dims; t++)
                area *= t == a ? 1 : f->h[t];
            FOR_LAYER(f, a, nf, P)
            {
                if (P0 < 1 || P0 > f->n[0] + (a == 0) || P1 < 1 || P1 > f->n[1] + (a == 1) ||
                    (f->dims == 3 && (P2 < 1 || P2 > f->n[2] + (a == 2))))
                    continue;
                size_t c = flow_at(f, P0, P1, P2);
                if (pass == 0) {
                    double inner = side ? q[a][c - inward] : q[a][c + inward];
                    qn[a][c] = q[a][c] - dt * uc * (q[a][c] - inner) / f->h[a];
                    flux += (side ? qn[a][c] : -qn[a][c]) * area;
                } else {
                    qn[a][c] += side ? corr : -corr;
                }
            }
        }
}

/* u~ = u + dt (a1 H^n + a0 H^{n-1} - grad P) on the unknown faces. */
static void predict(struct kedr_flow *f, int b, double dt, double a1, double a0)
{
    int lo[3], hi[3];
    for (int t = 0; t < 3; t++)
        face_range(f, b, t, &lo[t], &hi[t]);
    double *qt = f->qt[b];
    const double *q = f->q[b], *H = f->H[b], *Ho = f->Hold[b], *P = f->P;
    const int nb = f->n[b];
    const size_t sb = b == 0 ? 1 : b == 1 ? (size_t)f->n[0] : (size_t)f->n[0] * f->n[1];
    const double ih = 1.0 / f->h[b];
#pragma omp parallel for collapse(2) schedule(static) if (f->cells >= SIM_OMP_MIN)
    for (int k = lo[2]; k <= hi[2]; k++)
        for (int j = lo[1]; j <= hi[1]; j++)
            for (int i = lo[0]; i <= hi[0]; i++) {
                size_t c = flow_at(f, i, j, k), cc = flow_cell(f, i, j, k);
                int along = b == 0 ? i : b == 1 ? j : k;
                size_t lo_cell = along > 1 ? cc - sb : cc + (size_t)(nb - 1) * sb;
                double g = (P[cc] - P[lo_cell]) * ih;
                qt[c] = q[c] + dt * (a1 * H[c] + a0 * Ho[c] - g);
            }
}

/* u = u~ - dt grad phi on the unknown faces; the boundary faces keep u~. */
static void correct(struct kedr_flow *f, int b, double dt)
{
    int lo[3], hi[3];
    for (int t = 0; t < 3; t++)
        face_range(f, b, t, &lo[t], &hi[t]);
    double *q = f->q[b];
    const double *qt = f->qt[b], *phi = f->phi;
    const int nb = f->n[b];
    const size_t sb = b == 0 ? 1 : b == 1 ? (size_t)f->n[0] : (size_t)f->n[0] * f->n[1];
    const double ih = 1.0 / f->h[b];
    memcpy(q, qt, f->padded * sizeof *q);
#pragma omp parallel for collapse(2) schedule(static) if (f->cells >= SIM_OMP_MIN)
    for (int k = lo[2]; k <= hi[2]; k++)
        for (int j = lo[1]; j <= hi[1]; j++)
            for (int i = lo[0]; i <= hi[0]; i++) {
                size_t c = flow_at(f, i, j, k), cc = flow_cell(f, i, j, k);
                int along = b == 0 ? i : b == 1 ? j : k;
                size_t lo_cell = along > 1 ? cc - sb : cc + (size_t)(nb - 1) * sb;
                q[c] = qt[c] - dt * (phi[cc] - phi[lo_cell]) * ih;
            }
}

/* rhs = -div(q) / dt (A = -Laplacian). */
static void divergence_rhs(struct kedr_flow *f, double *const q[3], double scale)
{
    int k0 = f->kz, k1 = f->dims == 3 ? f->n[2] : 0;
#pragma omp parallel for collapse(2) schedule(static) if (f->cells >= SIM_OMP_MIN)
    for (int k = k0; k <= k1; k++)
        for (int j = 1; j <= f->n[1]; j++)
            for (int i = 1; i <= f->n[0]; i++) {
                size_t c = flow_at(f, i, j, k);
                double d = 0;
                for (int a = 0; a < f->dims; a++)
                    d += (q[a][c + f->s[a]] - q[a][c]) / f->h[a];
                f->rhs[flow_cell(f, i, j, k)] = -d * scale;
            }
}

/* An absolute floor for the solve: a divergence at rounding level of the velocity scale. */
static double poisson_atol(const struct kedr_flow *f, double dt)
{
    double um[3], u = 0, hmin = HUGE_VAL;
    flow_umax(f, (double *const *)f->q, um);
    for (int a = 0; a < f->dims; a++) {
        u = um[a] > u ? um[a] : u;
        hmin = f->h[a] < hmin ? f->h[a] : hmin;
    }
    return 1e-13 * (u > 0 ? u : 1) / (hmin * dt) * sqrt((double)f->cells);
}

/* Solves for phi and projects qt into q; 0 on success. */
static kedr_status project(struct kedr_flow *f, double dt)
{
    double t0 = kedr_wall_seconds();
    divergence_rhs(f, f->qt, 1.0 / dt);
    memset(f->phi, 0, f->cells * sizeof *f->phi);
    double atol = f->ps->o.atol;
    double floor = poisson_atol(f, dt);
    f->ps->o.atol = atol > floor ? atol : floor;
    kedr_status s = kedr_flow_poisson_solve(f->ps, f->phi, f->rhs, &f->last);
    f->ps->o.atol = atol;
    f->seconds_poisson += kedr_wall_seconds() - t0;
    f->poisson_iterations += f->last.iterations;
    return s;
}

int kedr_flow_failure(const kedr_flow *f) { return f->failure; }

kedr_status kedr_flow_step(kedr_flow *f)
{
    double t0 = kedr_wall_seconds();
    f->failure = 0;
    double um[3];
    flow_umax(f, f->q, um);
    double dt = f->c.dt > 0 ? f->c.dt : f->c.cfl * kedr_flow_stable_dt(&f->c, um);
    if (f->c.end_time > 0 && f->time + dt > f->c.end_time)
        dt = f->c.end_time - f->time;
    if (!(dt > 0) || !isfinite(dt))
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: step %lld: time step %g (the velocity is "
                         "%s)", (long long)f->step + 1, dt,
                         isfinite(um[0] + um[1] + um[2]) ? "finite" : "NaN or infinite");
    double a1 = 1, a0 = 0;
    if (f->have_old) {
        a1 = 1 + dt / (2 * f->dt_old);
        a0 = -dt / (2 * f->dt_old);
    }
    for (int b = 0; b < f->dims; b++) {
        rhs_component(f, f->q, b, f->H[b]);
        memcpy(f->qt[b], f->q[b], f->padded * sizeof(double));
        predict(f, b, dt, a1, a0);
    }
    outflow(f, f->q, f->qt, dt);
    flow_fill_bc(f, f->qt);
    kedr_status s = project(f, dt);
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
    for (int b = 0; b < f->dims; b++)
        correct(f, b, dt);
#pragma omp parallel for schedule(static) if (f->cells >= SIM_OMP_MIN)
    for (size_t c = 0; c < f->cells; c++)
        f->P[c] += f->phi[c];
    flow_fill_bc(f, f->q);
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
    flow_umax(f, f->q, um);
    f->seconds_step += kedr_wall_seconds() - t0;
    if (!isfinite(um[0] + um[1] + um[2])) {
        f->failure = 2;
        return kedr_fail(KEDR_ERR_INVALID, "kedr flow: the velocity became NaN or infinite at "
                         "step %lld (t = %.6g): the run is unstable; lower dt or cfl, or refine "
                         "the grid", (long long)f->step, f->time);
    }
    return KEDR_OK;
}

/* ---- creation ---------------------------------------------------------------------------- */

static void initial_velocity(struct kedr_flow *f)
{
    const kedr_flow_case *c = &f->c;
    for (int b = 0; b < f->dims; b++) {
        int k1 = f->dims == 3 ? f->n[2] + 1 : 0;
        for (int k = f->kz; k <= k1; k++)
            for (int j = 1; j <= f->n[1] + 1; j++)
                for (int i = 1; i <= f->n[0] + 1; i++) {
                    int ijk[3] = {i, j, k};
                    double x[3], v = 0;
                    coords(f, b, ijk, x);
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
                    f->q[b][flow_at(f, i, j, k)] = v;
                }
    }
    if (c->init == KEDR_FLOW_INIT_TAYLOR_GREEN && f->dims == 2) {
        double kx = 2 * M_PI / c->length[0], ky = 2 * M_PI / c->length[1], A = c->tg_amplitude;
        for (int j = 1; j <= f->n[1]; j++)
            for (int i = 1; i <= f->n[0]; i++) {
                double x = (i - 0.5) * f->h[0], y = (j - 0.5) * f->h[1];
                f->P[flow_cell(f, i, j, 0)] =
                    A * A / 4 * (cos(2 * kx * x) + kx * kx / (ky * ky) * cos(2 * ky * y));
            }
    }
}

kedr_status kedr_flow_create(kedr_ctx *ctx, const kedr_flow_case *c, kedr_flow **out)
{
    struct kedr_flow *f;
    KEDR_TRY(flow_alloc(ctx, c, &f));
    initial_velocity(f);
    flow_fill_bc(f, f->q);
    /* A uniform start against walls is not divergence-free: project it once (dt = 1; the
     * pressure stays 0). */
    if (c->init == KEDR_FLOW_INIT_UNIFORM) {
        for (int b = 0; b < f->dims; b++)
            memcpy(f->qt[b], f->q[b], f->padded * sizeof(double));
        kedr_status s = project(f, 1.0);
        if (s == KEDR_OK && !f->last.converged)
            s = kedr_fail(KEDR_ERR_INVALID, "kedr flow: the projection of the initial velocity "
                          "did not converge (relative residual %.3g)", f->last.residual);
        if (s != KEDR_OK) {
            kedr_flow_destroy(f);
            return s;
        }
        for (int b = 0; b < f->dims; b++)
            correct(f, b, 1.0);
        memset(f->phi, 0, f->cells * sizeof *f->phi);
        flow_fill_bc(f, f->q);
        f->poisson_iterations = 0;
        f->seconds_poisson = 0;
    }
    *out = f;
    return KEDR_OK;
}

void kedr_flow_get_stats(const kedr_flow *f, kedr_flow_stats *st)
{
    memset(st, 0, sizeof *st);
    st->step = f->step;
    st->time = f->time;
    st->dt = f->last_dt;
    flow_umax(f, (double *const *)f->q, st->umax);
    double sdt = kedr_flow_stable_dt(&f->c, st->umax);
    st->cfl = f->last_dt > 0 ? f->last_dt / sdt : 0;
    double u = fmax(st->umax[0], fmax(st->umax[1], st->umax[2])), hmin = f->h[0];
    for (int a = 1; a < f->dims; a++)
        hmin = fmin(hmin, f->h[a]);
    st->divergence = u > 0 ? flow_max_div(f, (double *const *)f->q) * hmin / u : 0;
    double e = 0;
    for (int b = 0; b < f->dims; b++) {
        int k1 = f->dims == 3 ? f->n[2] + (b == 2) : 0;
        for (int k = f->kz; k <= k1; k++)
            for (int j = 1; j <= f->n[1] + (b == 1); j++)
                for (int i = 1; i <= f->n[0] + (b == 0); i++) {
                    int along = b == 0 ? i : b == 1 ? j : k;
                    /* a face on the box's end is half inside (periodic: counted once) */
                    double w = along == f->n[b] + 1 ? (f->c.bc[2 * b].kind ==
                                                       KEDR_FLOW_BC_PERIODIC ? 0 : 0.5)
                               : along == 1 && f->c.bc[2 * b].kind != KEDR_FLOW_BC_PERIODIC
                                   ? 0.5 : 1;
                    double v = f->q[b][flow_at(f, i, j, k)];
                    e += w * v * v;
                }
    }
    st->kinetic_energy = 0.5 * e / (double)f->cells;
    st->poisson = f->last;
    st->poisson_iterations = f->poisson_iterations;
    st->seconds_step = f->seconds_step;
    st->seconds_poisson = f->seconds_poisson;
}
