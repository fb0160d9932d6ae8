/* The immersed boundary of kedr flow (src/flow/ibm.c):
 * - both discrete deltas at random offsets: sum phi(r - i) = 1, sum (r - i) phi(r - i) = 0, and
 *   Peskin's sum phi^2 = 3/8; through the staggered stencils of every component, weights that
 *   sum to 1 and whose first moment is the point's position (also across a periodic end);
 * - spreading random point forces keeps their sum and their moment on the grid; interpolation
 *   and spreading are adjoint, (L u, g) = (u, L* g);
 * - the forcing: after it the velocity interpolated at the points is the body's (to the solve's
 *   tolerance), for a circle, rectangle, sphere, box, cylinder and points across a periodic end;
 * - L L* on the bodies' box (the force systems' path) equals L L* on the whole grid's scratch
 *   array (bit for bit on the cpu, within 1e-13 on cuda), periodic ends included;
 *   KEDR_FLOW_IBM_BOX=0 makes no box, a bad value is refused by name;
 * - the force CG's batches replayed from a recording (KEDR_FLOW_IBM_GRAPH=1) against launched
 *   (0): a fixed sphere's flow the same (to the spreading's atomics on cuda), a bad value refused;
 * - a body at rest in fluid at rest feels no force; a body carried by a uniform periodic flow at
 *   the flow's speed feels none (to rounding) while it crosses the periodic ends;
 * - a fixed body in a channel on every back end against the cpu (velocities within 1e-9 of the
 *   largest, forces within 1e-7 relative).
 * The checks run on every back end (KEDR_BACKEND). */
#define _DEFAULT_SOURCE
#include "flow/ibm.h"
#include "flow/sim.h"
#include "kedr/flow.h"
#include "test_util.h"

static void body_defaults(kedr_flow_body *b, const char *name, kedr_flow_body_shape shape,
                          int dims)
{
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    b->shape = shape;
    b->spacing = dims == 3 ? 1.5 : 1; /* the case file's defaults */
    b->ref_velocity = b->ref_length = b->ref_area = 1;
}

/* A 3D sphere of diameter d about (x, y, z), the case file's defaults otherwise. */
static void sphere_at(kedr_flow_body *b, const char *name, double x, double y, double z,
                      double d)
{
    body_defaults(b, name, KEDR_FLOW_BODY_SPHERE, 3);
    b->center[0] = x;
    b->center[1] = y;
    b->center[2] = z;
    b->diameter = d;
}

static kedr_flow_case box_case(int dims, const int n[3], int periodic)
{
    kedr_flow_case c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "ibm");
    c.dims = dims;
    for (int a = 0; a < 3; a++) {
        c.n[a] = a < dims ? n[a] : 1;
        c.length[a] = a < dims ? n[a] * 0.1 : 1; /* h = 0.1 */
    }
    for (int f = 0; f < 6; f++)
        c.bc[f].kind = f < 2 * dims && !periodic ? KEDR_FLOW_BC_WALL : KEDR_FLOW_BC_PERIODIC;
    c.nu = 0.01;
    c.rho = 1.3;
    c.cfl = 0.5;
    c.steps = 10;
    kedr_flow_poisson_defaults(&c.poisson);
    c.poisson.tol = 1e-10;
    c.ibm_tol = 1e-12;
    c.ibm_max_iter = 1000;
    return c;
}

/* ---- the deltas ---------------------------------------------------------------------------- */

static void check_deltas(void)
{
    uint64_t seed = 42;
    for (int d = 0; d < 2; d++) {
        double e0 = 0, e1 = 0, e2 = 0, neg = 0;
        for (int t = 0; t < 2000; t++) {
            double r = 20 * tu_uniform(&seed) - 10, s0 = 0, s1 = 0, s2 = 0;
            for (int i = -15; i <= 15; i++) {
                double p = flow_ibm_phi(d, r - i);
                s0 += p;
                s1 += (r - i) * p;
                s2 += p * p;
                neg = fmin(neg, p);
            }
            e0 = fmax(e0, fabs(s0 - 1));
            e1 = fmax(e1, fabs(s1));
            e2 = fmax(e2, fabs(s2 - 0.375));
        }
        printf("delta %s: |sum phi - 1| %.2e, |first moment| %.2e, |sum phi^2 - 3/8| %.2e\n",
               d ? "roma3" : "peskin4", e0, e1, e2);
        TU_CHECK(e0 < 1e-14 && e1 < 1e-14 && neg >= 0, "delta %d: moments %.3g %.3g, min %.3g",
                 d, e0, e1, neg);
        if (d == KEDR_FLOW_DELTA_PESKIN4)
            TU_CHECK(e2 < 1e-14, "peskin4: sum phi^2 off 3/8 by %.3g", e2);
        /* support and continuity: 0 at and beyond the half-width, no jump inside */
        double W = 0.5 * flow_ibm_width(d), jump = 0;
        for (double r = 0; r < W + 0.5; r += 1e-3)
            jump = fmax(jump, fabs(flow_ibm_phi(d, r + 1e-7) - flow_ibm_phi(d, r)));
        TU_CHECK(flow_ibm_phi(d, W) == 0 && flow_ibm_phi(d, -W - 0.3) == 0 && jump < 1e-5,
                 "delta %d: support or continuity (jump %.3g)", d, jump);
    }
}

/* The staggered stencils of random points: weights sum to 1; first moments give the point. */
static void check_stencils(void)
{
    uint64_t seed = 7;
    for (int dims = 2; dims <= 3; dims++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int d = 0; d < 2; d++) {
                int n[3] = {13, 11, 9};
                kedr_flow_case c = box_case(dims, n, periodic);
                flow_grid gg;
                memset(&gg, 0, sizeof gg);
                gg.split = -1; /* one rank */
                flow_grid *g = &gg;
                g->dims = dims;
                for (int a = 0; a < 3; a++) {
                    g->n[a] = c.n[a];
                    g->h[a] = c.length[a] / c.n[a];
                    g->length[a] = c.length[a];
                }
                for (int face = 0; face < 6; face++)
                    g->kind[face] = c.bc[face].kind;
                double e0 = 0, e1 = 0;
                for (int t = 0; t < 500; t++)
                    for (int comp = 0; comp < dims; comp++) {
                        double X[3] = {0, 0, 0};
                        for (int a = 0; a < dims; a++) {
                            double m = periodic ? -1 : 2.0, L = c.length[a];
                            X[a] = periodic ? (3 * tu_uniform(&seed) - 1) * L
                                            : m * g->h[a] + tu_uniform(&seed) * (L - 2 * m * g->h[a]);
                        }
                        flow_ibm_stencil st;
                        flow_ibm_stencil_at(g, d, comp, X, &st);
                        double s0 = 1;
                        for (int a = 0; a < dims; a++) {
                            double sa = 0, m1 = 0;
                            for (int m = 0; m < st.cnt[a]; m++) {
                                int i = st.idx[a][m];
                                TU_CHECK(i >= 1 && i <= c.n[a] + (a == comp),
                                         "stencil index %d off the box on axis %d", i, a);
                                sa += st.w[a][m];
                                /* the grid position, unwrapped to the point's period */
                                double x = (i - (a == comp ? 1.0 : 0.5)) * g->h[a];
                                x += c.length[a] * round((X[a] - x) / c.length[a]);
                                m1 += st.w[a][m] * (x - X[a]);
                            }
                            s0 *= sa;
                            e1 = fmax(e1, fabs(m1) / g->h[a]);
                        }
                        e0 = fmax(e0, fabs(s0 - 1));
                    }
                TU_CHECK(e0 < 1e-13 && e1 < 1e-12, "%dD %s delta %d: stencil sum off by %.3g, "
                         "moment by %.3g cells", dims, periodic ? "periodic" : "walls", d, e0,
                         e1);
            }
}

/* ---- spreading and interpolation on a flow ------------------------------------------------ */

static kedr_flow_case body_case(int dims, int periodic, int shape, int delta)
{
    int n[3] = {24, 20, 18};
    kedr_flow_case c = box_case(dims, n, periodic);
    c.delta = delta;
    c.nbodies = 1;
    kedr_flow_body *b = &c.body[0];
    body_defaults(b, "b", shape, dims);
    b->center[0] = 1.21;
    b->center[1] = 0.97;
    b->center[2] = dims == 3 ? 0.88 : 0;
    b->diameter = 0.8;
    b->size[0] = 0.9;
    b->size[1] = 0.7;
    b->size[2] = 0.6;
    b->axis = 1;
    b->length = periodic ? 0 : 1.2;
    if (periodic) /* across the x ends */
        b->center[0] = 0.1;
    return c;
}

static void check_spread(kedr_ctx *ctx)
{
    const int shapes2[] = {KEDR_FLOW_BODY_CIRCLE, KEDR_FLOW_BODY_RECTANGLE};
    const int shapes3[] = {KEDR_FLOW_BODY_SPHERE, KEDR_FLOW_BODY_BOX, KEDR_FLOW_BODY_CYLINDER};
    uint64_t seed = 99;
    for (int dims = 2; dims <= 3; dims++)
        for (int si = 0; si < (dims == 2 ? 2 : 3); si++)
            for (int periodic = 0; periodic < 2; periodic++) {
                int shape = dims == 2 ? shapes2[si] : shapes3[si];
                int delta = (si + periodic) % 2;
                kedr_flow_case c = body_case(dims, periodic, shape, delta);
                kedr_flow *f = NULL;
                TU_OK(kedr_flow_create(ctx, &c, &f));
                if (!f)
                    continue;
                flow_ibm *ib = f->ibm;
                size_t N = ib->N, P = f->padded;
                double *gp = tu_host_alloc(N * sizeof *gp), *u = tu_host_alloc(P * sizeof *u);
                double *fld = tu_host_alloc(P * sizeof *fld), *Lu = tu_host_alloc(N * sizeof *Lu);
                double *dg = tu_upload(ctx, gp, N * sizeof *gp);
                double *du = tu_upload(ctx, u, P * sizeof *u);
                double *dLu = tu_upload(ctx, Lu, N * sizeof *Lu);
                double worst_sum = 0, worst_mom = 0, worst_adj = 0;
                for (int comp = 0; comp < dims; comp++) {
                    double sum = 0, mom[3] = {0, 0, 0};
                    for (size_t l = 0; l < N; l++) {
                        gp[l] = 2 * tu_uniform(&seed) - 1;
                        sum += gp[l];
                        for (int a = 0; a < dims; a++)
                            mom[a] += gp[l] * ib->Xh[a * N + l];
                    }
                    for (size_t i = 0; i < P; i++)
                        u[i] = 2 * tu_uniform(&seed) - 1;
                    TU_OK(kedr_upload(ctx, dg, gp, N * sizeof *gp));
                    TU_OK(kedr_upload(ctx, du, u, P * sizeof *u));
                    TU_OK(kedr_memset(ctx, ib->scratch, 0, P * sizeof(double)));
                    flow_ibm_args A;
                    memset(&A, 0, sizeof A);
                    for (int a = 0; a < 3; a++)
                        A.X[a] = ib->X[a];
                    A.comp = comp;
                    A.delta = delta;
                    A.scale = 1;
                    A.in = dg;
                    A.field = ib->scratch;
                    TU_OK(flow_ibm_map(ctx, &f->g, &A, FLOW_IBM_SPREAD, N));
                    A.field = du;
                    A.out = dLu;
                    TU_OK(flow_ibm_map(ctx, &f->g, &A, FLOW_IBM_INTERP, N));
                    TU_OK(kedr_download(ctx, fld, ib->scratch, P * sizeof *fld));
                    TU_OK(kedr_download(ctx, Lu, dLu, N * sizeof *Lu));
                    /* the grid's sum and moment; (u, L* g) */
                    double gs = 0, gm[3] = {0, 0, 0}, ug = 0, Lg = 0, scale = 0;
                    int k1 = dims == 3 ? f->n[2] + 1 : 0;
                    for (int k = 0; k <= k1; k++)
                        for (int j = 0; j <= f->n[1] + 1; j++)
                            for (int i = 0; i <= f->n[0] + 1; i++) {
                                double v = fld[flow_at(f, i, j, k)];
                                if (v == 0)
                                    continue;
                                int ijk[3] = {i, j, k};
                                double x[3];
                                flow_g_coords(&f->g, comp, ijk, x);
                                gs += v;
                                for (int a = 0; a < dims; a++) {
                                    /* periodic: the image nearest the body's points */
                                    double L = c.length[a];
                                    if (c.bc[2 * a].kind == KEDR_FLOW_BC_PERIODIC)
                                        x[a] += L * round((c.body[0].center[a] - x[a]) / L);
                                    gm[a] += v * x[a];
                                }
                                ug += v * u[flow_at(f, i, j, k)];
                            }
                    for (size_t l = 0; l < N; l++) {
                        Lg += Lu[l] * gp[l];
                        scale += fabs(gp[l]);
                    }
                    worst_sum = fmax(worst_sum, fabs(gs - sum) / scale);
                    for (int a = 0; a < dims; a++) /* not along a tube spanning a period */
                        if (!(shape == KEDR_FLOW_BODY_CYLINDER && periodic && a == 1))
                            worst_mom = fmax(worst_mom,
                                             fabs(gm[a] - mom[a]) / (scale * c.length[a]));
                    worst_adj = fmax(worst_adj, fabs(ug - Lg) / scale);
                }
                printf("%dD shape %d %s delta %d, %zu points: spread sum %.2e, moment %.2e, "
                       "adjoint %.2e\n", dims, shape, periodic ? "periodic" : "walls", delta, N,
                       worst_sum, worst_mom, worst_adj);
                TU_CHECK(worst_sum < 1e-13 && worst_mom < 1e-13 && worst_adj < 1e-13,
                         "%dD shape %d: spreading loses force (%.3g), moment (%.3g) or is not "
                         "the adjoint (%.3g)", dims, shape, worst_sum, worst_mom, worst_adj);

                /* the forcing on a random qt: afterwards L qt = U_b */
                for (int comp = 0; comp < dims; comp++) {
                    for (size_t i = 0; i < P; i++)
                        u[i] = 2 * tu_uniform(&seed) - 1;
                    TU_OK(kedr_upload(ctx, f->qt[comp], u, P * sizeof *u));
                }
                double dt = 0.01;
                TU_OK(flow_ibm_force(f, dt, 0.0));
                double err = 0;
                for (int comp = 0; comp < dims; comp++) {
                    flow_ibm_args A;
                    memset(&A, 0, sizeof A);
                    for (int a = 0; a < 3; a++)
                        A.X[a] = ib->X[a];
                    A.comp = comp;
                    A.delta = delta;
                    A.field = f->qt[comp];
                    A.out = dLu;
                    TU_OK(flow_ibm_map(ctx, &f->g, &A, FLOW_IBM_INTERP, N));
                    TU_OK(kedr_download(ctx, Lu, dLu, N * sizeof *Lu));
                    for (size_t l = 0; l < N; l++)
                        err = fmax(err, fabs(Lu[l] - ib->Uh[comp * N + l]));
                }
                printf("  forcing: %d CG iterations, |L u~ - U_b| %.2e\n", ib->iterations, err);
                TU_CHECK(err < 1e-8 && ib->iterations > 0,
                         "%dD shape %d: after the forcing the points move at %.3g off the body",
                         dims, shape, err);

                /* L L* on the bodies' box (the force systems' path) against the scratch grid
                 * of the whole slab (KEDR_FLOW_IBM_BOX=0's): the same sums in the same order,
                 * so bit for bit on the cpu; on cuda the spreading's atomics add in any order */
                TU_CHECK(ib->have_box, "%dD shape %d: the bodies' box was not made", dims, shape);
                double worst_box = 0;
                for (int comp = 0; comp < dims && ib->have_box; comp++) {
                    for (size_t l = 0; l < N; l++)
                        gp[l] = 2 * tu_uniform(&seed) - 1;
                    TU_OK(kedr_upload(ctx, dg, gp, N * sizeof *gp));
                    TU_OK(flow_ibm_apply(f, comp, dg, dLu));
                    TU_OK(kedr_download(ctx, Lu, dLu, N * sizeof *Lu));
                    ib->have_box = 0;
                    TU_OK(kedr_memset(ctx, ib->scratch, 0, P * sizeof(double)));
                    TU_OK(flow_ibm_apply(f, comp, dg, dLu));
                    ib->have_box = 1;
                    TU_OK(kedr_download(ctx, u, dLu, N * sizeof *u));
                    double big = 0, d = 0;
                    for (size_t l = 0; l < N; l++) {
                        big = fmax(big, fabs(u[l]));
                        d = fmax(d, fabs(Lu[l] - u[l]));
                    }
                    worst_box = fmax(worst_box, d / fmax(big, 1e-300));
                }
                printf("  L L* on the box against the slab: %.2e of the largest (box %d x %d x "
                       "%d cells)\n", worst_box, ib->gbox.n[0], ib->gbox.n[1], ib->gbox.n[2]);
                TU_CHECK(worst_box <= (kedr_ctx_backend(ctx) == KEDR_BACKEND_CPU ? 0 : 1e-13),
                         "%dD shape %d: L L* on the bodies' box differs from the slab's by %.3g",
                         dims, shape, worst_box);
                kedr_free(ctx, dg);
                kedr_free(ctx, du);
                kedr_free(ctx, dLu);
                free(gp);
                free(u);
                free(fld);
                free(Lu);
                kedr_flow_destroy(f);
            }
}

/* KEDR_FLOW_IBM_BOX: 0 takes the slab's scratch grid (no box), anything but 0 or 1 is refused
 * by name. */
static void check_box_env(kedr_ctx *ctx)
{
    kedr_flow_case c = body_case(2, 0, KEDR_FLOW_BODY_CIRCLE, 0);
    kedr_flow *f = NULL;
    for (int on = 0; on < 2; on++) { /* a step places the points (and makes the box) */
        setenv("KEDR_FLOW_IBM_BOX", on ? "1" : "0", 1);
        TU_OK(kedr_flow_create(ctx, &c, &f));
        if (f)
            TU_OK(kedr_flow_step(f));
        TU_CHECK(f && f->ibm && f->ibm->have_box == on, "KEDR_FLOW_IBM_BOX=%d: box %d", on,
                 f && f->ibm ? f->ibm->have_box : -1);
        kedr_flow_destroy(f);
    }
    f = NULL;
    setenv("KEDR_FLOW_IBM_BOX", "yes", 1);
    kedr_status s = kedr_flow_create(ctx, &c, &f);
    TU_CHECK(s != KEDR_OK && !f && strstr(kedr_last_error(), "KEDR_FLOW_IBM_BOX = 'yes'"),
             "KEDR_FLOW_IBM_BOX=yes: %s", s == KEDR_OK ? "accepted" : kedr_last_error());
    kedr_flow_destroy(f);
    unsetenv("KEDR_FLOW_IBM_BOX");
}

/* KEDR_FLOW_IBM_GRAPH: a fixed sphere in a stream, 6 steps, with the force CG's batches replayed
 * from a recording (1) and launched kernel by kernel (0): on cuda the recording is made and the
 * two agree (the spreading's atomics add in any order: to 1e-12 of the largest velocity, 1e-9
 * of the force); anything but 0 or 1 is refused by name. */
static void check_graph_env(kedr_ctx *ctx)
{
    int n[3] = {28, 16, 16};
    kedr_flow_case c = box_case(3, n, 0);
    c.bc[0].kind = KEDR_FLOW_BC_INFLOW;
    c.bc[0].velocity[0] = 1;
    c.bc[1].kind = KEDR_FLOW_BC_OUTFLOW;
    c.nu = 0.02;
    c.nbodies = 1;
    sphere_at(&c.body[0], "sphere", 0.6, 0.47, 0.52, 0.4);
    c.delta = KEDR_FLOW_DELTA_PESKIN4;
    c.ibm_tol = 1e-12; /* several batches a step */
    double *q[2] = {NULL, NULL}, F[2][3];
    size_t total = 0;
    int iters[2] = {0, 0};
    for (int on = 0; on < 2; on++) {
        setenv("KEDR_FLOW_IBM_GRAPH", on ? "1" : "0", 1);
        kedr_flow *f = NULL;
        TU_OK(kedr_flow_create(ctx, &c, &f));
        if (!f)
            break;
        for (int st = 0; st < 6; st++)
            TU_OK(kedr_flow_step(f));
        int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
        TU_CHECK(!!f->ibm->cg_graph.exec == (cuda && on), "KEDR_FLOW_IBM_GRAPH=%d on %s: "
                 "recording %s", on, kedr_backend_name(kedr_ctx_backend(ctx)),
                 f->ibm->cg_graph.exec ? "made" : "not made");
        iters[on] = f->ibm->iterations;
        kedr_flow_body_state bs;
        TU_OK(kedr_flow_body_get(f, 0, &bs));
        memcpy(F[on], bs.force, sizeof bs.force);
        total = 0;
        for (int a = 0; a < 3; a++)
            total += kedr_flow_staggered_count(f, a);
        q[on] = tu_host_alloc(total * sizeof *q[on]);
        double *at = q[on];
        for (int a = 0; a < 3; a++) {
            TU_OK(kedr_flow_get_staggered(f, a, at));
            at += kedr_flow_staggered_count(f, a);
        }
        kedr_flow_destroy(f);
    }
    if (q[0] && q[1]) {
        double d = 0, m = 0, df = 0, mf = 0;
        for (size_t i = 0; i < total; i++) {
            d = fmax(d, fabs(q[1][i] - q[0][i]));
            m = fmax(m, fabs(q[0][i]));
        }
        for (int a = 0; a < 3; a++) {
            df = fmax(df, fabs(F[1][a] - F[0][a]));
            mf = fmax(mf, fabs(F[0][a]));
        }
        printf("force CG replayed against launched: %d and %d iterations (last step), velocity "
               "%.2e of the largest, force %.2e\n", iters[1], iters[0], d / m, df / mf);
        TU_CHECK(iters[0] > 8 && d <= 1e-12 * m && df <= 1e-9 * mf,
                 "KEDR_FLOW_IBM_GRAPH=1 differs from 0: %d iterations, velocity %.3g, force "
                 "%.3g", iters[0], d / m, df / mf);
    }
    free(q[0]);
    free(q[1]);
    setenv("KEDR_FLOW_IBM_GRAPH", "2", 1);
    kedr_flow *f = NULL;
    kedr_status s = kedr_flow_create(ctx, &c, &f);
    TU_CHECK(s != KEDR_OK && !f && strstr(kedr_last_error(), "KEDR_FLOW_IBM_GRAPH = '2'"),
             "KEDR_FLOW_IBM_GRAPH=2: %s", s == KEDR_OK ? "accepted" : kedr_last_error());
    kedr_flow_destroy(f);
    unsetenv("KEDR_FLOW_IBM_GRAPH");
}

/* A body of points across a periodic end, read from a file. */
static void check_points_file(kedr_ctx *ctx)
{
    char path[] = "/tmp/kedr_ibm_pointsXXXXXX";
    int fd = mkstemp(path);
    TU_CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    FILE *fp = fdopen(fd, "w");
    fprintf(fp, "# an ellipse\n");
    for (int l = 0; l < 40; l++)
        fprintf(fp, "%.17g %.17g\n", 0.05 + 0.5 * cos(2 * M_PI * l / 40),
                1.0 + 0.3 * sin(2 * M_PI * l / 40));
    fclose(fp);
    int n[3] = {24, 20, 1};
    kedr_flow_case c = box_case(2, n, 1);
    c.nbodies = 1;
    body_defaults(&c.body[0], "ellipse", KEDR_FLOW_BODY_POINTS, 2);
    snprintf(c.body[0].file, sizeof c.body[0].file, "%s", path);
    kedr_flow *f = NULL;
    TU_OK(kedr_flow_create(ctx, &c, &f));
    if (f) {
        kedr_flow_body_state st;
        TU_OK(kedr_flow_body_get(f, 0, &st));
        TU_CHECK(st.points == 40, "points read: %d", st.points);
        double xyz[120];
        TU_OK(kedr_flow_body_points(f, 0, xyz));
        TU_CHECK(fabs(xyz[3 * 10 + 1] - 1.3) < 1e-15, "point 10: %g", xyz[3 * 10 + 1]);
        kedr_flow_destroy(f);
    }
    remove(path);
}

/* ---- forces in simple flows ---------------------------------------------------------------- */

static void check_rest_and_carried(kedr_ctx *ctx)
{
    /* a circle at rest in a closed box at rest: exactly no force */
    int n[3] = {24, 20, 18};
    kedr_flow_case c = box_case(2, n, 0);
    c.nbodies = 1;
    body_defaults(&c.body[0], "still", KEDR_FLOW_BODY_CIRCLE, 2);
    c.body[0].center[0] = 1.2;
    c.body[0].center[1] = 1.0;
    c.body[0].diameter = 0.6;
    c.dt = 0.01;
    kedr_flow *f = NULL;
    TU_OK(kedr_flow_create(ctx, &c, &f));
    if (f) {
        double worst = 0;
        for (int s = 0; s < 5; s++) {
            TU_OK(kedr_flow_step(f));
            kedr_flow_body_state st;
            TU_OK(kedr_flow_body_get(f, 0, &st));
            for (int a = 0; a < 3; a++)
                worst = fmax(worst, fabs(st.force[a]) + fabs(st.moment[a]));
        }
        TU_CHECK(worst == 0, "a body at rest in fluid at rest: force %.3g", worst);
        kedr_flow_destroy(f);
    }
    /* a sphere carried by a uniform periodic flow at its speed, crossing the x ends */
    int n3[3] = {16, 14, 12};
    c = box_case(3, n3, 1);
    c.init = KEDR_FLOW_INIT_UNIFORM;
    c.init_velocity[0] = 0.7;
    c.init_velocity[1] = -0.2;
    c.init_velocity[2] = 0.1;
    c.nbodies = 1;
    sphere_at(&c.body[0], "carried", 1.4, 0.7, 0.6, 0.5);
    c.body[0].volume = M_PI / 6 * 0.125;
    for (int a = 0; a < 3; a++)
        c.body[0].velocity[a] = c.init_velocity[a];
    c.dt = 0.02;
    TU_OK(kedr_flow_create(ctx, &c, &f));
    if (f) {
        double worst = 0, umax = 0;
        for (int s = 0; s < 25; s++) {
            TU_OK(kedr_flow_step(f));
            kedr_flow_body_state st;
            TU_OK(kedr_flow_body_get(f, 0, &st));
            for (int a = 0; a < 3; a++)
                worst = fmax(worst, fabs(st.cd) + fabs(st.cl) + fabs(st.cs));
        }
        kedr_flow_stats fs;
        kedr_flow_get_stats(f, &fs);
        kedr_flow_body_state st;
        TU_OK(kedr_flow_body_get(f, 0, &st));
        umax = fabs(fs.umax[0] - 0.7);
        printf("carried sphere: centre x %.4f after t = %.2f, largest |coefficient| %.2e, "
               "|u - U| %.2e\n", st.center[0], fs.time, worst, umax);
        TU_CHECK(st.center[0] > 1.6 && worst < 1e-10 && umax < 1e-12,
                 "a body carried by the flow: coefficients %.3g, velocity change %.3g", worst,
                 umax);
        kedr_flow_destroy(f);
    }
}

/* A fixed cylinder in a channel (2D) and a box in a duct (3D); the run's velocities and forces. */
static double *channel_run(kedr_ctx *ctx, int dims, size_t *len, double force[3])
{
    int n[3] = {40, 16, 10};
    kedr_flow_case c = box_case(dims, n, 0);
    c.bc[0].kind = KEDR_FLOW_BC_INFLOW;
    c.bc[0].velocity[0] = 1;
    c.bc[0].parabolic = 1;
    c.bc[1].kind = KEDR_FLOW_BC_OUTFLOW;
    c.nu = 0.02;
    c.nbodies = 1;
    body_defaults(&c.body[0], "obstacle",
                  dims == 2 ? KEDR_FLOW_BODY_CIRCLE : KEDR_FLOW_BODY_SPHERE, dims);
    c.body[0].center[0] = 1.0;
    c.body[0].center[1] = 0.83;
    c.body[0].center[2] = 0.5;
    c.body[0].diameter = 0.55;
    c.body[0].amplitude[1] = 0.1; /* and it oscillates across */
    c.body[0].frequency = 2;
    c.body[0].volume = 0.1;
    c.delta = dims == 2 ? KEDR_FLOW_DELTA_PESKIN4 : KEDR_FLOW_DELTA_ROMA3;
    c.steps = 15;
    kedr_flow *f = NULL;
    TU_OK(kedr_flow_create(ctx, &c, &f));
    if (!f)
        return NULL;
    for (int s = 0; s < c.steps; s++)
        TU_OK(kedr_flow_step(f));
    kedr_flow_body_state st;
    TU_OK(kedr_flow_body_get(f, 0, &st));
    memcpy(force, st.force, sizeof st.force);
    size_t total = 0;
    for (int a = 0; a < dims; a++)
        total += kedr_flow_staggered_count(f, a);
    double *q = tu_host_alloc(total * sizeof *q), *at = q;
    for (int a = 0; a < dims; a++) {
        TU_OK(kedr_flow_get_staggered(f, a, at));
        at += kedr_flow_staggered_count(f, a);
    }
    *len = total;
    kedr_flow_destroy(f);
    return q;
}

int main(void)
{
    check_deltas();
    check_stencils();
    kedr_backend bk[2];
    int nb = tu_backends(bk);
    double *ref[2] = {NULL, NULL}, refF[2][3];
    size_t reflen[2] = {0, 0};
    for (int ib = 0; ib < nb; ib++) {
        if (!kedr_flow_backend_available(bk[ib])) {
            printf("flow: no %s back end in this build; skipped\n", kedr_backend_name(bk[ib]));
            continue;
        }
        kedr_ctx *ctx = tu_ctx(bk[ib]);
        check_spread(ctx);
        check_box_env(ctx);
        check_graph_env(ctx);
        check_points_file(ctx);
        check_rest_and_carried(ctx);
        for (int dims = 2; dims <= 3; dims++) {
            size_t len;
            double F[3];
            double *q = channel_run(ctx, dims, &len, F);
            if (!q)
                continue;
            printf("%dD channel: force %.6g %.6g %.6g\n", dims, F[0], F[1], F[2]);
            TU_CHECK(F[0] > 0, "%dD channel: the drag %.3g is not downstream", dims, F[0]);
            if (!ref[dims - 2]) {
                ref[dims - 2] = q;
                reflen[dims - 2] = len;
                memcpy(refF[dims - 2], F, sizeof F);
                continue;
            }
            double d = 0, m = 0, df = 0, mf = 0;
            for (size_t i = 0; i < len && len == reflen[dims - 2]; i++) {
                d = fmax(d, fabs(q[i] - ref[dims - 2][i]));
                m = fmax(m, fabs(ref[dims - 2][i]));
            }
            for (int a = 0; a < dims; a++) {
                df = fmax(df, fabs(F[a] - refF[dims - 2][a]));
                mf = fmax(mf, fabs(refF[dims - 2][a]));
            }
            printf("%dD channel: %s differs from cpu by %.2e in velocity (largest %.3g), %.2e in "
                   "force\n", dims, kedr_backend_name(bk[ib]), d, m, df / mf);
            TU_CHECK(len == reflen[dims - 2] && d <= 1e-9 * m && df <= 1e-7 * mf,
                     "%dD channel: %s differs from the cpu by %.3g (velocity), %.3g (force)",
                     dims, kedr_backend_name(bk[ib]), d, df / mf);
            free(q);
        }
        kedr_ctx_destroy(ctx);
    }
    free(ref[0]);
    free(ref[1]);
    return tu_finish("test_flow_ibm");
}
