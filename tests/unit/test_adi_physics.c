/* The explicit terms of the ADI model, one step at a time: the viscous dissipation of the
 * temperature equation (the book's Phi = Phi_x + Phi_y + Phi_z, eq. 12.5, whose sum is the usual
 * 2 (u_x^2 + v_y^2 + w_z^2) + (u_y + v_x)^2 + (u_z + w_x)^2 + (v_z + w_y)^2) for a velocity
 * field with all nine gradients non-zero; the temperature standing for the pressure (eq. 12.2:
 * u_t = -grad T); and the body force. With one global and one local iteration the coefficients
 * are the old fields, so one implicit Euler step of a spatially constant source adds dt times
 * it, away from the faces (the implicit diffusion carries the faces' influence about
 * sqrt(kappa dt) = 0.003 h inward). On every back end, both precisions; on cuda both sweep
 * paths (KEDR_ADI_SWEEP=thomas, chip and reg; thomas and reg on the cpu). */
#define _POSIX_C_SOURCE 200809L
#include "kedr/adi.h"
#include "test_util.h"

#include <stdlib.h>

#define N 9

static void setup(kedr_adi_case *c, int single)
{
    kedr_adi_case_default(c);
    c->nx = c->ny = c->nz = N;
    c->h = 0.1;
    c->re = 100;
    c->pr = 0.7;
    c->gamma = 1.4;
    c->dt = 1e-5;
    c->steps = 1;
    c->single = single;
    c->global_iterations = c->local_iterations = 1;
    for (int f = 0; f < 6; f++)
        c->face[f].kind = KEDR_ADI_FREE;
}

/* One step from fields f (u, v, w, T as functions of x, y, z), the result in out. */
static void one_step(kedr_ctx *ctx, const kedr_adi_case *c,
                     void (*field)(double x, double y, double z, double o[4]), double *out[4])
{
    size_t n = (size_t)N * N * N;
    double *in[4];
    for (int v = 0; v < 4; v++)
        in[v] = tu_host_alloc(n * sizeof(double));
    for (int k = 0; k < N; k++)
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                double o[4];
                field(i * c->h, j * c->h, k * c->h, o);
                for (int v = 0; v < 4; v++)
                    in[v][i + N * (j + N * k)] = o[v];
            }
    kedr_adi *s = NULL;
    TU_OK(kedr_adi_create(ctx, c, &s));
    if (s) {
        TU_OK(kedr_adi_set_fields(s, in[0], in[1], in[2], in[3]));
        TU_OK(kedr_adi_step(s));
        TU_OK(kedr_adi_get_fields(s, out[0], out[1], out[2], out[3]));
    }
    kedr_adi_destroy(s);
    for (int v = 0; v < 4; v++) {
        for (size_t m = 0; m < n; m++)
            out[v][m] -= in[v][m]; /* the change */
        free(in[v]);
    }
}

/* Gradients g[c][e] = du_c/dx_e, all different and non-zero. */
static const double G[3][3] = {{0.3, -0.7, 0.5}, {0.4, 0.2, -0.6}, {-0.8, 0.9, -0.5}};

static void linear(double x, double y, double z, double o[4])
{
    for (int c = 0; c < 3; c++)
        o[c] = G[c][0] * x + G[c][1] * y + G[c][2] * z;
    o[3] = 0; /* only differences of T enter; 0 keeps single precision's rounding small */
}

static void tilted(double x, double y, double z, double o[4])
{
    o[0] = o[1] = o[2] = 0;
    o[3] = 1 + 0.3 * x - 0.2 * y + 0.1 * z;
}

/* The largest relative deviation of the change of field v from want over the nodes at least 3
 * away from the faces. */
static double deviation(double *const d[4], int v, double want)
{
    double worst = 0;
    for (int k = 3; k < N - 3; k++)
        for (int j = 3; j < N - 3; j++)
            for (int i = 3; i < N - 3; i++) {
                double got = d[v][i + N * (j + N * k)];
                double e = want != 0 ? fabs(got / want - 1) : fabs(got);
                worst = e > worst ? e : worst;
            }
    return worst;
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    size_t n = (size_t)N * N * N;
    double *d[4];
    for (int v = 0; v < 4; v++)
        d[v] = tu_host_alloc(n * sizeof(double));
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        /* every sweep path (KEDR_ADI_SWEEP) on cuda; thomas and reg on the cpu */
        const char *paths[3] = {"thomas", "reg", "chip"};
        for (int path = 0; path < (list[b] == KEDR_BACKEND_CUDA ? 3 : 2); path++) {
            setenv("KEDR_ADI_SWEEP", paths[path], 1);
            for (int single = 0; single < 2; single++) {
                double tol = single ? 1e-4 : 1e-6;
                kedr_adi_case c;
                setup(&c, single);
                /* Dissipation. */
                one_step(ctx, &c, linear, d);
                double phi = 2 * (G[0][0] * G[0][0] + G[1][1] * G[1][1] + G[2][2] * G[2][2]) +
                             pow(G[0][1] + G[1][0], 2) + pow(G[0][2] + G[2][0], 2) +
                             pow(G[1][2] + G[2][1], 2);
                double want = c.dt * (c.gamma - 1) / (c.gamma * c.re) * phi;
                double e = deviation(d, 3, want);
                printf("%s: dissipation: dT %.6g per step (expected %.6g), deviation %.2g\n",
                       single ? "single" : "double", d[3][4 + N * (4 + N * 4)], want, e);
                TU_CHECK(e <= tol, "dissipation: relative deviation %.3g > %.1g", e, tol);
                /* The temperature as pressure: du_c = -dt dT/dx_c. */
                one_step(ctx, &c, tilted, d);
                const double slope[3] = {0.3, -0.2, 0.1};
                for (int v = 0; v < 3; v++) {
                    e = deviation(d, v, -c.dt * slope[v]);
                    TU_CHECK(e <= tol, "pressure term of component %d: deviation %.3g > %.1g",
                             v, e, tol);
                }
                /* The body force: du_c = dt f_c. */
                c.force[0] = 2;
                c.force[1] = -1;
                c.force[2] = 0.5;
                one_step(ctx, &c, linear, d);
                for (int v = 0; v < 3; v++) {
                    /* linear's own advection u . grad u adds dt (G u)_c: subtract it. */
                    double x = 0.4, dv = 0;
                    for (int e2 = 0; e2 < 3; e2++) {
                        double ue = (G[e2][0] + G[e2][1] + G[e2][2]) * x;
                        dv += G[v][e2] * ue;
                    }
                    double got = d[v][4 + N * (4 + N * 4)];
                    double want_v = c.dt * (c.force[v] - dv);
                    double tol_v = (single ? 2e-3 : 2e-4) * fabs(c.dt * c.force[v]);
                    TU_CHECK(fabs(got - want_v) <= tol_v,
                             "body force on component %d: change %.6g, expected %.6g", v, got,
                             want_v);
                }
            }
        }
        unsetenv("KEDR_ADI_SWEEP");
        kedr_ctx_destroy(ctx);
    }
    for (int v = 0; v < 4; v++)
        free(d[v]);
    return tu_finish("test_adi_physics");
}
