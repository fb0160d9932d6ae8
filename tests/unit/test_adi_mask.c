/* Solid nodes and layouts of the ADI solver:
 * 1. Walls made of solid nodes are the walls of the box's faces: a duct whose walls are solid
 *    layers inside a larger box gives the fields of the duct whose walls are the box's faces,
 *    node for node (the wall lies on the first solid node, as on a face node), to rounding.
 * 2. Lines cut into several segments: a box crossed by solid blocks (every axis meets lines of
 *    two and three segments) runs the same with the z sweep direct and through the transposes,
 *    bit for bit on the cpu, where the arithmetic is the same (and within rounding on cuda),
 *    with moving-wall, inflow, free and fixed-temperature faces and solid nodes at a fixed
 *    temperature; a node far downstream, which the inflow cannot reach in five steps, stays
 *    near rest; and the cuda fields agree with the cpu's within 1e-11 (single: 1e-4), the
 *    step's statistics (the reductions) within 1e-10 relative. On cuda, with both sweep paths
 *    (KEDR_ADI_SWEEP=thomas, chip and reg). */
#define _POSIX_C_SOURCE 200809L
#include "kedr/adi.h"
#include "test_util.h"

#include <stdlib.h>

#define N 12

static void base_case(kedr_adi_case *c, int nx, int ny, int nz)
{
    kedr_adi_case_default(c);
    c->nx = nx;
    c->ny = ny;
    c->nz = nz;
    c->h = 0.1;
    c->re = 50;
    c->dt = 0.01;
    c->steps = 5;
}

/* The statistics of the last run (the measures' kernels on cuda). */
static kedr_adi_stats last_stats;

static int run(kedr_ctx *ctx, const kedr_adi_case *c, double *f[4])
{
    kedr_adi *s = NULL;
    kedr_status st = kedr_adi_create(ctx, c, &s);
    for (int64_t k = 0; st == KEDR_OK && k < c->steps; k++)
        st = kedr_adi_step(s);
    if (st == KEDR_OK) {
        st = kedr_adi_get_fields(s, f[0], f[1], f[2], f[3]);
        kedr_adi_get_stats(s, &last_stats);
    }
    kedr_adi_destroy(s);
    TU_CHECK(st == KEDR_OK, "run: %s", kedr_last_error());
    return st == KEDR_OK;
}

static double **fields(size_t n)
{
    double **f = tu_host_alloc(4 * sizeof *f);
    for (int v = 0; v < 4; v++)
        f[v] = tu_host_alloc(n * sizeof(double));
    return f;
}

static void free_fields(double **f)
{
    for (int v = 0; v < 4; v++)
        free(f[v]);
    free(f);
}

/* 1: a duct driven by a force, walls by faces (N + 1 nodes across y and z) or by solid layers
 * two nodes thick inside a box of N + 5. */
static void solid_walls(kedr_ctx *ctx, int single)
{
    kedr_adi_case a, b;
    base_case(&a, 6, N + 1, N + 1);
    base_case(&b, 6, N + 5, N + 5);
    a.single = b.single = single;
    a.force[0] = b.force[0] = 1;
    a.init_temperature = b.init_temperature = 0;
    a.face[KEDR_ADI_X_LO].kind = a.face[KEDR_ADI_X_HI].kind = KEDR_ADI_FREE;
    b.face[KEDR_ADI_X_LO].kind = b.face[KEDR_ADI_X_HI].kind = KEDR_ADI_FREE;
    size_t nb = (size_t)b.nx * b.ny * b.nz, na = (size_t)a.nx * a.ny * a.nz;
    b.solid = tu_host_alloc(nb);
    for (int k = 0; k < b.nz; k++)
        for (int j = 0; j < b.ny; j++)
            for (int i = 0; i < b.nx; i++)
                b.solid[i + b.nx * (j + (size_t)b.ny * k)] =
                    j <= 2 || j >= N + 2 || k <= 2 || k >= N + 2;
    double **fa = fields(na), **fb = fields(nb);
    if (run(ctx, &a, fa) && run(ctx, &b, fb)) {
        double worst = 0, umax = 0;
        for (int k = 1; k < N; k++)
            for (int j = 1; j < N; j++)
                for (int i = 1; i < a.nx - 1; i++)
                    for (int v = 0; v < 4; v++) {
                        double x = fa[v][i + a.nx * (j + (size_t)a.ny * k)];
                        double y = fb[v][i + b.nx * (j + 2 + (size_t)b.ny * (k + 2))];
                        worst = fmax(worst, fabs(x - y));
                        umax = fmax(umax, fabs(x));
                    }
        printf("%s: solid walls against face walls: max difference %.3g (|u| up to %.3g)\n",
               single ? "single" : "double", worst, umax);
        TU_CHECK(umax > 0.01, "the duct did not move");
        TU_CHECK(worst <= (single ? 1e-6 : 1e-14), "solid walls differ from face walls by %.3g",
                 worst);
        /* Solid nodes read NaN. */
        TU_CHECK(isnan(fb[0][0]) && isnan(fb[3][3 + b.nx * (1 + (size_t)b.ny * 5)]),
                 "solid nodes are not NaN");
    }
    free(b.solid);
    free_fields(fa);
    free_fields(fb);
}

/* The cpu's fields and statistics of the blocks case, per precision, for the cuda run. */
static double **cpu_blocks[2];
static kedr_adi_stats cpu_stats[2];

/* 2: blocks across an inflow box; z direct and transposed; cuda against cpu. */
static void blocks(kedr_ctx *ctx, kedr_backend backend, int single)
{
    kedr_adi_case c;
    base_case(&c, 17, 13, 11);
    c.single = single;
    c.face[KEDR_ADI_X_LO].kind = KEDR_ADI_INFLOW;
    c.face[KEDR_ADI_X_LO].velocity[0] = 1;
    c.face[KEDR_ADI_X_LO].velocity[2] = 0.3;
    c.face[KEDR_ADI_X_LO].temperature = 2;
    c.face[KEDR_ADI_X_HI].kind = KEDR_ADI_FREE;
    c.face[KEDR_ADI_Z_HI].kind = KEDR_ADI_FREE;
    c.face[KEDR_ADI_Y_HI].velocity[0] = 0.5; /* a moving lid */
    c.face[KEDR_ADI_Y_LO].adiabatic = 0;
    c.face[KEDR_ADI_Y_LO].temperature = 1.5;
    c.wall_adiabatic = 0;
    c.wall_temperature = 0.5;
    size_t n = (size_t)c.nx * c.ny * c.nz;
    c.solid = tu_host_alloc(n);
    for (int k = 0; k < c.nz; k++)
        for (int j = 0; j < c.ny; j++)
            for (int i = 0; i < c.nx; i++) {
                int in1 = i >= 5 && i <= 7 && j >= 3 && j <= 8 && k >= 2 && k <= 6;
                int in2 = i >= 11 && i <= 12 && j >= 6 && j <= 10 && k >= 4 && k <= 8;
                c.solid[i + c.nx * (j + (size_t)c.ny * k)] = in1 || in2;
            }
    TU_OK(kedr_adi_case_check(&c));
    double **f0 = fields(n), **f1 = fields(n);
    c.z_transpose = 0;
    int ok = run(ctx, &c, f0);
    c.z_transpose = 1;
    ok = ok && run(ctx, &c, f1);
    if (ok) {
        double worst = 0, tmax = 0;
        for (int v = 0; v < 4; v++)
            for (size_t m = 0; m < n; m++)
                if (!isnan(f0[v][m])) {
                    worst = fmax(worst, fabs(f0[v][m] - f1[v][m]));
                    if (v == 3)
                        tmax = fmax(tmax, f0[v][m]);
                }
        double tol = backend == KEDR_BACKEND_CPU ? 0 : single ? 1e-5 : 1e-12;
        printf("%s, %s: blocks, z direct against transposed: max difference %.3g\n",
               kedr_backend_name(backend), single ? "single" : "double", worst);
        TU_CHECK(worst <= tol, "z sweep direct and transposed differ by %.3g", worst);
        TU_CHECK(tmax > 1.4 && tmax <= 2 + 1e-6, "temperatures of the faces not seen (max %g)",
                 tmax);
        /* Fluid nodes downstream of a block, out of the inflow's reach in 5 steps of 0.01 at
         * h = 0.1 and Re 50 (a diffusion length of 0.03, a third of a node), stay near rest. */
        double far = fabs(f0[0][15 + c.nx * (5 + (size_t)c.ny * 4)]);
        TU_CHECK(far < 0.05, "the flow crossed the box in 5 steps: u = %g", far);
        /* The nonlinear terms, dissipation and every kind of ghost, on both back ends: the
         * same arithmetic, up to the GPU's fused multiply-adds. */
        if (backend == KEDR_BACKEND_CPU) {
            cpu_blocks[single] = f0;
            cpu_stats[single] = last_stats;
            f0 = NULL;
        } else if (cpu_blocks[single]) {
            const kedr_adi_stats *x = &cpu_stats[single], *y = &last_stats;
            double sx[5] = {x->continuity_rms, x->continuity_max, x->max_speed,
                            x->kinetic_energy, x->change};
            double sy[5] = {y->continuity_rms, y->continuity_max, y->max_speed,
                            y->kinetic_energy, y->change};
            for (int k = 0; k < 4; k++) /* the change is a difference: absolute */
                TU_CHECK(fabs(sx[k] - sy[k]) <= (single ? 1e-4 : 1e-10) * fabs(sx[k]),
                         "blocks: statistic %d on cuda %.10g, cpu %.10g", k, sy[k], sx[k]);
            TU_CHECK(fabs(sx[4] - sy[4]) <= (single ? 1e-4 : 1e-10),
                     "blocks: change on cuda %.10g, cpu %.10g", sy[4], sx[4]);
            TU_CHECK(x->global_iterations == y->global_iterations,
                     "blocks: %d global iterations on cuda, %d on cpu", y->global_iterations,
                     x->global_iterations);
            double diff = 0;
            for (int v = 0; v < 4; v++)
                for (size_t m = 0; m < n; m++)
                    if (!isnan(f0[v][m]))
                        diff = fmax(diff, fabs(f0[v][m] - cpu_blocks[single][v][m]));
            printf("blocks, %s: cuda against cpu: max difference %.3g\n",
                   single ? "single" : "double", diff);
            TU_CHECK(diff <= (single ? 1e-4 : 1e-11), "blocks: cuda and cpu differ by %.3g", diff);
        }
    }
    free(c.solid);
    if (f0)
        free_fields(f0);
    free_fields(f1);
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        /* on cuda every sweep path (KEDR_ADI_SWEEP) against the cpu's Thomas */
        int cuda = list[b] == KEDR_BACKEND_CUDA;
        const char *paths[3] = {"thomas", "chip", "reg"};
        for (int path = 0; path < (cuda ? 3 : 1); path++) {
            setenv("KEDR_ADI_SWEEP", paths[path], 1);
            printf("%s, sweep path %s\n", kedr_backend_name(list[b]), paths[path]);
            for (int single = 0; single < 2; single++) {
                solid_walls(ctx, single);
                blocks(ctx, list[b], single);
            }
        }
        unsetenv("KEDR_ADI_SWEEP");
        kedr_ctx_destroy(ctx);
    }
    for (int single = 0; single < 2; single++)
        if (cpu_blocks[single])
            free_fields(cpu_blocks[single]);
    return tu_finish("test_adi_mask");
}
