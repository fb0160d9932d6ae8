/* A decaying shear wave, an exact solution of the Navier-Stokes equations (the advection
 * u . grad u vanishes): component c = sin(k x_a) exp(-nu k^2 t), a != c, between no-slip walls
 * at x_a = 0 and pi/k (k = pi: a unit gap), the other faces free. It checks the diffusion of
 * each sweep and the scheme's orders of accuracy (docs/adi.md: first order in time, second in
 * space), each against a reference that removes the other error exactly:
 *  - in time: the grid's own decay rate nu lambda_h, lambda_h = (4/h^2) sin^2(k h/2), so that
 *    the error left is that of implicit Euler, O(dt);
 *  - in space: implicit Euler's own amplitude (1 + nu k^2 dt)^-n, so that the error left is
 *    that of the central second difference, O(h^2).
 * A scheme of the wrong order, a wrong viscosity or a sweep that skips an axis fails. */
#include "test_adi_util.h"

#define K M_PI
#define NU 0.1
#define T_END 0.5

/* The error of a run against amplitude amp at the nodes of the wave's axis: max over the line
 * of |c - sin(k x) amp|. Wave of component c along axis a with n + 1 nodes across the gap. */
static double run_wave(kedr_ctx *ctx, int c, int a, int n, int steps, int single, double amp,
                       ta_fields *keep)
{
    kedr_adi_case cs;
    int dims[3] = {4, 4, 4};
    dims[a] = n + 1;
    ta_case(&cs, dims[0], dims[1], dims[2], 1.0 / n, 1 / NU, T_END / steps, steps);
    cs.single = single;
    cs.face[2 * a].kind = cs.face[2 * a + 1].kind = KEDR_ADI_WALL;
    ta_fields init, out;
    ta_alloc(&init, &cs);
    ta_alloc(&out, &cs);
    for (int k = 0; k < cs.nz; k++)
        for (int j = 0; j < cs.ny; j++)
            for (int i = 0; i < cs.nx; i++) {
                int x[3] = {i, j, k};
                size_t id = ta_at(&cs, i, j, k);
                for (int v = 0; v < 3; v++)
                    init.f[v][id] = v == c ? sin(K * x[a] * cs.h) : 0;
                init.f[3][id] = 1;
            }
    double err = INFINITY;
    if (ta_run(ctx, &cs, &init, &out) == 0) {
        err = 0;
        for (int m = 0; m <= n; m++) {
            int x[3] = {2, 2, 2};
            x[a] = m;
            double got = out.f[c][ta_at(&cs, x[0], x[1], x[2])];
            double e = fabs(got - sin(K * m * cs.h) * amp);
            err = e > err ? e : err;
        }
        /* The other components stay 0 and the temperature 1. */
        double other = 0;
        for (size_t id = 0; id < out.n; id++)
            for (int v = 0; v < 4; v++)
                if (v != c)
                    other = fmax(other, fabs(out.f[v][id] - (v == 3)));
        TU_CHECK(other <= (single ? 1e-5 : 1e-13), "wave %d along %d: other fields moved by %.3g",
                 c, a, other);
    }
    if (keep) {
        *keep = out;
    } else {
        ta_free(&out);
    }
    ta_free(&init);
    return err;
}

static double lambda_h(int n)
{
    double h = 1.0 / n, s = sin(K * h / 2);
    return 4 * s * s / (h * h);
}

static void orders(kedr_ctx *ctx)
{
    /* Time: n = 32, dt = 0.05, 0.025, 0.0125. */
    double et[3];
    for (int r = 0; r < 3; r++)
        et[r] = run_wave(ctx, 0, 1, 32, 10 << r, 0, exp(-NU * lambda_h(32) * T_END), NULL);
    double pt1 = log2(et[0] / et[1]), pt2 = log2(et[1] / et[2]);
    printf("time:  errors %.4g %.4g %.4g, observed orders %.3f %.3f (scheme: 1)\n", et[0], et[1],
           et[2], pt1, pt2);
    TU_CHECK(fabs(pt1 - 1) < 0.15 && fabs(pt2 - 1) < 0.15, "order in time %.3f, %.3f: expected 1",
             pt1, pt2);
    /* Space: dt = 0.05, n = 8, 16, 32. */
    double es[3], euler = pow(1 + NU * K * K * 0.05, -10);
    for (int r = 0; r < 3; r++)
        es[r] = run_wave(ctx, 0, 1, 8 << r, 10, 0, euler, NULL);
    double ps1 = log2(es[0] / es[1]), ps2 = log2(es[1] / es[2]);
    printf("space: errors %.4g %.4g %.4g, observed orders %.3f %.3f (scheme: 2)\n", es[0], es[1],
           es[2], ps1, ps2);
    TU_CHECK(fabs(ps1 - 2) < 0.15 && fabs(ps2 - 2) < 0.15,
             "order in space %.3f, %.3f: expected 2", ps1, ps2);
    /* Against the exact solution at n = 32, dt = 0.0125: implicit Euler's O(dt) error,
     * (nu k^2)^2 dt t / 2 exp(-nu k^2 t) = 0.0018. */
    double exact = exp(-NU * K * K * T_END);
    double e = run_wave(ctx, 0, 1, 32, 40, 0, exact, NULL);
    printf("against the exact wave: max error %.4g (tolerance 0.0025)\n", e);
    TU_CHECK(e < 0.0025, "error against the exact wave %.4g >= 0.0025", e);
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    ta_fields cpu[3][2];
    int have_cpu = 0;
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        orders(ctx);
        /* The wave turned: v along z, w along x (each sweep's diffusion), in both precisions;
         * the same error as u along y. */
        int turns[3][2] = {{0, 1}, {1, 2}, {2, 0}};
        for (int single = 0; single < 2; single++) {
            double ref = -1;
            for (int t = 0; t < 3; t++) {
                ta_fields out;
                double e = run_wave(ctx, turns[t][0], turns[t][1], 16, 10, single,
                                    pow(1 + NU * K * K * 0.05, -10), &out);
                if (ref < 0)
                    ref = e;
                TU_CHECK(fabs(e - ref) <= (single ? 1e-5 : 1e-12),
                         "component %d along axis %d (%s): error %.6g, u along y %.6g",
                         turns[t][0], turns[t][1], single ? "single" : "double", e, ref);
                if (list[b] == KEDR_BACKEND_CPU) {
                    cpu[t][single] = out;
                    have_cpu = ta_have_cpu = 1;
                } else {
                    ta_agree("shear wave", list[b], have_cpu ? &cpu[t][single] : NULL, &out,
                             single);
                    ta_free(&out);
                }
            }
        }
        kedr_ctx_destroy(ctx);
    }
    if (have_cpu)
        for (int t = 0; t < 3; t++)
            for (int single = 0; single < 2; single++)
                ta_free(&cpu[t][single]);
    return tu_finish("test_adi_shear");
}
