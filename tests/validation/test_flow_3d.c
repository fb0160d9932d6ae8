/* The 3D solver on exact solutions: the Taylor–Green vortex of test_flow_taylor_green, uniform
 * along the third axis, in each of the three coordinate planes of a periodic box (the third
 * axis 4 cells, so that every term of the 3D stencils runs). The error must fall at an observed
 * order >= 1.9 from 16 to 32 cells across the plane (nu = 0.02, t = 1, dt = 0.2 h), the third
 * component must stay 0 to rounding, and the xy-plane run must equal the 2D solver's to 1e-12
 * (the same arithmetic, the third axis's terms being zero). */
#include "kedr/flow.h"
#include "test_util.h"

static kedr_flow_case box_case(int dims, int plane, int n)
{
    kedr_flow_case c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "tg3");
    c.dims = dims;
    for (int a = 0; a < 3; a++) {
        int in = a != (plane + 2) % 3; /* the plane's two axes: plane, plane + 1 */
        c.n[a] = dims == 2 && a == 2 ? 1 : in ? n : 4;
        c.length[a] = in ? 2 * M_PI : 1.0;
    }
    c.nu = 0.02;
    c.rho = 1;
    for (int f = 0; f < 6; f++)
        c.bc[f].kind = KEDR_FLOW_BC_PERIODIC;
    c.dt = 0.2 * 2 * M_PI / n;
    c.cfl = 0.5;
    c.end_time = 1;
    c.steps = 100000;
    kedr_flow_poisson_defaults(&c.poisson);
    c.poisson.tol = 1e-10;
    return c;
}

/* TG in plane (a, b) = (plane, plane + 1): q_a = sin(x_a) cos(x_b) d, q_b = -cos(x_a) sin(x_b) d */
static double exact(int comp, int plane, const double x[3], double d)
{
    int a = plane, b = (plane + 1) % 3;
    if (comp == a)
        return sin(x[a]) * cos(x[b]) * d;
    if (comp == b)
        return -cos(x[a]) * sin(x[b]) * d;
    return 0;
}

static int a_third(int plane) { return (plane + 2) % 3; }

/* Fills (set = 1) or compares (set = 0, returns the max error) the staggered velocity. */
static double visit(kedr_flow *f, const kedr_flow_case *c, int plane, int set, double d,
                    double *third)
{
    double err = 0;
    *third = 0;
    for (int comp = 0; comp < c->dims; comp++) {
        size_t cnt = kedr_flow_staggered_count(f, comp);
        double *q = malloc(cnt * sizeof *q);
        if (!set)
            TU_OK(kedr_flow_get_staggered(f, comp, q));
        int m[3];
        for (int a = 0; a < 3; a++)
            m[a] = c->n[a] + (a == comp);
        for (size_t e = 0; e < cnt; e++) {
            int ijk[3] = {(int)(e % (size_t)m[0]), (int)(e / (size_t)m[0] % (size_t)m[1]),
                          (int)(e / ((size_t)m[0] * m[1]))};
            double x[3];
            for (int a = 0; a < 3; a++)
                x[a] = (ijk[a] + (a == comp ? 0.0 : 0.5)) * c->length[a] / c->n[a];
            double v = exact(comp, plane, x, d);
            if (set)
                q[e] = v;
            else if (comp == a_third(plane))
                *third = fmax(*third, fabs(q[e]));
            else
                err = fmax(err, fabs(q[e] - v));
        }
        if (set)
            TU_OK(kedr_flow_set_staggered(f, comp, q));
        free(q);
    }
    return err;
}

/* Runs to t = 1; the largest error of the plane's components and of the third. */
static double run(kedr_ctx *ctx, int dims, int plane, int n, double *third, double **keep)
{
    kedr_flow_case c = box_case(dims, plane, n);
    kedr_flow *f = NULL;
    TU_OK(kedr_flow_create(ctx, &c, &f));
    if (!f)
        return NAN;
    visit(f, &c, plane, 1, 1.0, third);
    kedr_flow_stats st;
    do {
        TU_OK(kedr_flow_step(f));
        kedr_flow_get_stats(f, &st);
    } while (st.time < c.end_time - 1e-12 && kedr_flow_failure(f) == 0);
    double err = visit(f, &c, plane, 0, exp(-2 * c.nu * st.time), third);
    if (keep) { /* u in the xy plane, for the 2D-3D comparison: the k = 0 layer */
        size_t cnt = kedr_flow_staggered_count(f, 0);
        *keep = malloc(cnt * sizeof **keep);
        TU_OK(kedr_flow_get_staggered(f, 0, *keep));
    }
    printf("  %dD plane %c%c %2d cells: max error %.4e, third component %.1e, %lld steps\n", dims,
           "xyz"[plane], "xyz"[(plane + 1) % 3], n, err, *third, (long long)st.step);
    kedr_flow_destroy(f);
    return err;
}

int main(void)
{
    kedr_backend bk[2];
    int nb = tu_backends(bk);
    for (int ib = 0; ib < nb; ib++) {
        if (!kedr_flow_backend_available(bk[ib])) {
            printf("flow: no %s back end in this build; skipped\n", kedr_backend_name(bk[ib]));
            continue;
        }
        kedr_ctx *ctx = tu_ctx(bk[ib]);
        for (int plane = 0; plane < 3; plane++) {
            double t1, t2;
            double e16 = run(ctx, 3, plane, 16, &t1, NULL), e32 = run(ctx, 3, plane, 32, &t2, NULL);
            double order = log2(e16 / e32);
            printf("plane %d: observed order %.3f\n", plane, order);
            TU_CHECK(order >= 1.9, "plane %d: order %.3f (errors %.3e, %.3e)", plane, order, e16,
                     e32);
            TU_CHECK(t1 < 1e-12 && t2 < 1e-12, "plane %d: third component %.3g, %.3g", plane, t1,
                     t2);
        }
        double t, *u2 = NULL, *u3 = NULL;
        run(ctx, 2, 0, 16, &t, &u2);
        run(ctx, 3, 0, 16, &t, &u3);
        double d = 0;
        for (size_t e = 0; u2 && u3 && e < 17 * 16; e++)
            d = fmax(d, fabs(u2[e] - u3[e]));
        TU_CHECK(u2 && u3 && d < 1e-12, "2D and 3D runs differ by %.3g", d);
        free(u2);
        free(u3);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_flow_3d");
}
