/* kedr flow over several ranks (ctest runs it alone and under mpirun on 1 to 4 ranks): the grid
 * split into slabs along its last axis, against one rank's run of the same case on every rank
 * (kedr_flow_create without a communicator), on small awkward grids:
 * 1. 2D Taylor–Green, 30 x 22, periodic both ways (two ranks: the same neighbour both ways),
 *    PCG with red-black SSOR (m = 2: the colours are the grid's, whatever a slab's first row);
 * 2. 2D lid-driven cavity, 23 x 17, walls, the lid at y max (the last rank's);
 * 3. 3D 12 x 10 x 9: walls at z (a moving one), periodic x, slip y, from a uniform start
 *    (projected: the Poisson solve over the ranks at creation); Jacobi with m = 3 steps (its
 *    residuals over the ranks) and the cheap convergence test;
 * 4. 3D 12 x 10 x 9 channel: a parabolic inflow at x min, an outflow at x max (sums of the
 *    fluxes over the ranks), periodic z; CG without a preconditioner;
 *    and a 2D channel 14 x 11 along y, the split axis (the inflow on the first slab, the
 *    outflow on the last);
 *    immersed bodies: a circle oscillating across the slabs' borders (2D 23 x 21) and a fixed
 *    sphere in a uniform stream (3D 12 x 10 x 9): the points' stencils split between slabs, the
 *    interpolations summed over ranks; fields and body forces within the tolerance;
 *    and in each, the centre-line profiles (gathered on rank 0) within 1e-9;
 * 5. per-rank checkpoints: 4 steps, a checkpoint, a restart and 4 more is the straight run of 8
 *    bit for bit (the cavity with the oscillating circle: velocities and the body's force);
 *    and multigrid over ranks: V-cycles alone (a cavity 24 x 26), PCG + V-cycle (a periodic
 *    Taylor–Green 32 x 44, the 3D box 12 x 10 x 14), the split levels as deep as they go;
 *    test_flow_mg_ranks checks the solver itself;
 * 6. what is not supported over ranks is refused on every rank, naming the key: FFT,
 *    more ranks than cells along the last axis;
 * 7. the messages through the host (KEDR_COMM_IPC=0) give the default path's run bit for bit
 *    (GPU to GPU on cuda with the ranks on one host), and the exchanges are counted and timed;
 *    with a body on cuda (spreading by atomic adds, whose order may vary) within 1e-9.
 * Tolerance: the fields gathered on rank 0 agree with the one-rank run within 1e-9 of the
 * largest velocity (pressure: of the largest |p|). The arithmetic of a step is the same; the
 * Poisson solve's dot products and sums are added slab by slab and then over ranks, another
 * order than one rank's, and PCG amplifies that rounding: with tol 1e-11, measured differences
 * are about 1e-13 .. 1e-11 relative. The statistics (energy, CG iterations) agree too. */
#include "kedr/comm.h"
#include "kedr/flow.h"

#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static kedr_comm *comm;
static int rank, size;

static const char *const tg2d =
    "[domain]\ndimensions = 2\nlength = 6.283185307179586 4.6\n"
    "boundary_x_min = periodic\nboundary_x_max = periodic\n"
    "boundary_y_min = periodic\nboundary_y_max = periodic\n"
    "[grid]\nnx = 30\nny = 22\n[fluid]\nnu = 0.02\n"
    "[initial]\nstate = taylor_green\namplitude = 1\n"
    "[time]\ndt = 0.02\nsteps = 12\n"
    "[pressure]\nsolver = pcg\npreconditioner = ssor\nsteps = 2\ntol = 1e-11\n";

static const char *const cavity =
    "[domain]\ndimensions = 2\nlength = 1 1\n"
    "boundary_x_min = wall\nboundary_x_max = wall\nboundary_y_min = wall\nboundary_y_max = wall\n"
    "[boundary]\ny_max_velocity = 1 0\n"
    "[grid]\nnx = 23\nny = 17\n[fluid]\nnu = 0.01\n"
    "[time]\ndt = auto\ncfl = 0.5\nsteps = 15\n"
    "[pressure]\nsolver = pcg\npreconditioner = jacobi\ntol = 1e-11\n";

static const char *const box3d =
    "[domain]\ndimensions = 3\nlength = 1.2 1 0.9\n"
    "boundary_x_min = periodic\nboundary_x_max = periodic\n"
    "boundary_y_min = slip\nboundary_y_max = slip\n"
    "boundary_z_min = wall\nboundary_z_max = wall\n"
    "[boundary]\nz_max_velocity = 0.5 0.2 0\n"
    "[grid]\nnx = 12\nny = 10\nnz = 9\n[fluid]\nnu = 0.02\n"
    "[initial]\nstate = uniform\nvelocity = 0.3 0 0.1\n"
    "[time]\ndt = auto\ncfl = 0.5\nsteps = 6\n"
    "[pressure]\nsolver = pcg\npreconditioner = jacobi\nsteps = 3\ncheap_check = true\n"
    "tol = 1e-11\n";

static const char *const channel3d =
    "[domain]\ndimensions = 3\nlength = 2.4 1 0.9\n"
    "boundary_x_min = inflow\nboundary_x_max = outflow\n"
    "boundary_y_min = wall\nboundary_y_max = wall\n"
    "boundary_z_min = periodic\nboundary_z_max = periodic\n"
    "[boundary]\nx_min_velocity = 1 0 0\nx_min_profile = parabolic\n"
    "[grid]\nnx = 12\nny = 10\nnz = 9\n[fluid]\nnu = 0.05\n"
    "[time]\ndt = auto\ncfl = 0.5\nsteps = 6\n"
    "[pressure]\nsolver = pcg\npreconditioner = none\ntol = 1e-11\n";

/* AINV (12.37) over ranks: the factors read the neighbour slabs' planes in the whole grid's
 * order, with the periodic wrap (Taylor–Green 31 x 22, periodic both ways, an odd periodic x;
 * the 3D channel with 13 periodic planes along z) and walls (the box: slabs of two planes on 4
 * ranks take the path without overlap) */
static const char *const tg2d_ainv =
    "[domain]\ndimensions = 2\nlength = 6.283185307179586 4.6\n"
    "boundary_x_min = periodic\nboundary_x_max = periodic\n"
    "boundary_y_min = periodic\nboundary_y_max = periodic\n"
    "[grid]\nnx = 31\nny = 22\n[fluid]\nnu = 0.02\n"
    "[initial]\nstate = taylor_green\namplitude = 1\n"
    "[time]\ndt = 0.02\nsteps = 8\n"
    "[pressure]\nsolver = pcg\npreconditioner = ainv\ntol = 1e-11\n";

static const char *const channel3d_ainv =
    "[domain]\ndimensions = 3\nlength = 2.4 1 1.3\n"
    "boundary_x_min = inflow\nboundary_x_max = outflow\n"
    "boundary_y_min = wall\nboundary_y_max = wall\n"
    "boundary_z_min = periodic\nboundary_z_max = periodic\n"
    "[boundary]\nx_min_velocity = 1 0 0\nx_min_profile = parabolic\n"
    "[grid]\nnx = 12\nny = 10\nnz = 13\n[fluid]\nnu = 0.05\n"
    "[time]\ndt = auto\ncfl = 0.5\nsteps = 5\n"
    "[pressure]\nsolver = pcg\npreconditioner = ainv\ntol = 1e-11\n";

static const char *const box3d_ainv =
    "[domain]\ndimensions = 3\nlength = 1.2 1 0.9\n"
    "boundary_x_min = periodic\nboundary_x_max = periodic\n"
    "boundary_y_min = slip\nboundary_y_max = slip\n"
    "boundary_z_min = wall\nboundary_z_max = wall\n"
    "[boundary]\nz_max_velocity = 0.5 0.2 0\n"
    "[grid]\nnx = 12\nny = 10\nnz = 9\n[fluid]\nnu = 0.02\n"
    "[initial]\nstate = uniform\nvelocity = 0.3 0 0.1\n"
    "[time]\ndt = auto\ncfl = 0.5\nsteps = 5\n"
    "[pressure]\nsolver = pcg\npreconditioner = ainv\ntol = 1e-11\n";

/* the flow along the split axis: the inflow on the first rank's slab, the outflow on the last's */
static const char *const channel_y =
    "[domain]\ndimensions = 2\nlength = 1 2.2\n"
    "boundary_x_min = wall\nboundary_x_max = wall\n"
    "boundary_y_min = inflow\nboundary_y_max = outflow\n"
    "[boundary]\ny_min_velocity = 0 1\ny_min_profile = parabolic\n"
    "[grid]\nnx = 14\nny = 11\n[fluid]\nnu = 0.05\n"
    "[time]\ndt = auto\ncfl = 0.5\nsteps = 10\n"
    "[pressure]\nsolver = pcg\npreconditioner = jacobi\ntol = 1e-11\n";

/* multigrid over ranks (src/flow/mg_ranks.c): V-cycles alone on a cavity whose 26 rows 3 and 4
 * ranks do not divide evenly; PCG + V-cycle on a periodic Taylor–Green (44 rows: halved once
 * across the slabs, then kept) and on the 3D box with 14 planes; the split levels as deep as
 * they go (KEDR_FLOW_MG_GATHER=0, set in main) */
static const char *const cavity_mg =
    "[domain]\ndimensions = 2\nlength = 1 1\n"
    "boundary_x_min = wall\nboundary_x_max = wall\nboundary_y_min = wall\nboundary_y_max = wall\n"
    "[boundary]\ny_max_velocity = 1 0\n"
    "[grid]\nnx = 24\nny = 26\n[fluid]\nnu = 0.01\n"
    "[time]\ndt = auto\ncfl = 0.5\nsteps = 15\n"
    "[pressure]\nsolver = mg\ntol = 1e-11\n";

static const char *const tg_mg =
    "[domain]\ndimensions = 2\nlength = 6.283185307179586 6.283185307179586\n"
    "boundary_x_min = periodic\nboundary_x_max = periodic\n"
    "boundary_y_min = periodic\nboundary_y_max = periodic\n"
    "[grid]\nnx = 32\nny = 44\n[fluid]\nnu = 0.02\n"
    "[initial]\nstate = taylor_green\namplitude = 1\n"
    "[time]\ndt = 0.02\nsteps = 8\n"
    "[pressure]\nsolver = pcg\npreconditioner = mg\ntol = 1e-11\n";

static const char *const box_mg =
    "[domain]\ndimensions = 3\nlength = 1.2 1 1.4\n"
    "boundary_x_min = periodic\nboundary_x_max = periodic\n"
    "boundary_y_min = slip\nboundary_y_max = slip\n"
    "boundary_z_min = wall\nboundary_z_max = wall\n"
    "[boundary]\nz_max_velocity = 0.5 0.2 0\n"
    "[grid]\nnx = 12\nny = 10\nnz = 14\n[fluid]\nnu = 0.02\n"
    "[initial]\nstate = uniform\nvelocity = 0.3 0 0.1\n"
    "[time]\ndt = auto\ncfl = 0.5\nsteps = 5\n"
    "[pressure]\nsolver = pcg\npreconditioner = mg\ncheap_check = true\ntol = 1e-11\n";

/* immersed bodies: a circle oscillating across the slabs' borders, a fixed sphere */
static const char *const circle2d =
    "[domain]\ndimensions = 2\nlength = 1 1\n"
    "boundary_x_min = wall\nboundary_x_max = wall\nboundary_y_min = wall\nboundary_y_max = wall\n"
    "[boundary]\ny_max_velocity = 1 0\n"
    "[grid]\nnx = 23\nny = 21\n[fluid]\nnu = 0.01\n"
    "[time]\ndt = 0.004\nsteps = 10\n"
    "[pressure]\nsolver = pcg\npreconditioner = jacobi\ntol = 1e-11\n"
    "[ibm]\ntol = 1e-12\n"
    "[body]\nshape = circle\ncenter = 0.45 0.5\ndiameter = 0.3\namplitude = 0 0.1\n"
    "frequency = 2\n";

static const char *const sphere3d =
    "[domain]\ndimensions = 3\nlength = 1.2 1 0.9\n"
    "boundary_x_min = periodic\nboundary_x_max = periodic\n"
    "boundary_y_min = slip\nboundary_y_max = slip\n"
    "boundary_z_min = wall\nboundary_z_max = wall\n"
    "[grid]\nnx = 12\nny = 10\nnz = 9\n[fluid]\nnu = 0.02\n"
    "[initial]\nstate = uniform\nvelocity = 0.3 0 0\n"
    "[time]\ndt = 0.01\nsteps = 5\n"
    "[pressure]\nsolver = pcg\npreconditioner = jacobi\ntol = 1e-11\n"
    "[ibm]\ntol = 1e-12\n"
    "[body]\nshape = sphere\ncenter = 0.6 0.5 0.45\ndiameter = 0.4\n";

/* the sphere with PCG + V-cycle, the test of (r, r) merged into (r, z)'s allreduce */
static const char *const sphere_mg =
    "[domain]\ndimensions = 3\nlength = 1.2 1 1.6\n"
    "boundary_x_min = inflow\nboundary_x_max = outflow\n"
    "boundary_y_min = slip\nboundary_y_max = slip\n"
    "boundary_z_min = slip\nboundary_z_max = slip\n"
    "[boundary]\nx_min_velocity = 0.3 0 0\n"
    "[grid]\nnx = 12\nny = 10\nnz = 16\n[fluid]\nnu = 0.02\n"
    "[initial]\nstate = uniform\nvelocity = 0.3 0 0\n"
    "[time]\ndt = auto\ncfl = 0.5\nsteps = 5\n"
    "[pressure]\nsolver = pcg\npreconditioner = mg\ntol = 1e-11\n"
    "[ibm]\ntol = 1e-12\n"
    "[body]\nshape = sphere\ncenter = 0.5 0.5 0.8\ndiameter = 0.4\n";

static double maxabs(const double *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i]));
    return m;
}

static double maxdiff(const double *a, const double *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

/* The largest difference of the numbers of two profile files (line,coordinate,velocity rows);
 * -1 when they do not have the same rows. */
static double profile_diff(const char *p1, const char *p2)
{
    FILE *a = fopen(p1, "r"), *b = fopen(p2, "r");
    double d = a && b ? 0 : -1;
    char la[256], lb[256];
    int rows = 0;
    while (d >= 0 && a && b && fgets(la, sizeof la, a)) {
        if (!fgets(lb, sizeof lb, b)) {
            d = -1;
            break;
        }
        if (rows++ == 0)
            continue; /* the header */
        char *ca = strchr(la, ','), *cb = strchr(lb, ',');
        if (!ca || !cb || ca - la != cb - lb || strncmp(la, lb, (size_t)(ca - la)) != 0) {
            d = -1;
            break;
        }
        double xa, va, xb, vb;
        if (sscanf(ca + 1, "%lf,%lf", &xa, &va) != 2 || sscanf(cb + 1, "%lf,%lf", &xb, &vb) != 2) {
            d = -1;
            break;
        }
        d = fmax(d, fmax(fabs(xa - xb), fabs(va - vb)));
    }
    if (a && b && d >= 0 && (fgets(lb, sizeof lb, b) || rows < 10))
        d = -1;
    if (a)
        fclose(a);
    if (b)
        fclose(b);
    return d;
}

static void compare(kedr_backend be, const char *name, const char *text)
{
    kedr_flow_case c;
    TU_OK(kedr_flow_case_parse(text, name, &c));
    kedr_ctx *ctx = tu_ctx(be);
    kedr_flow *one = NULL, *all = NULL;
    TU_OK(kedr_flow_create(ctx, &c, &one));
    TU_OK(kedr_flow_create_on(ctx, comm, &c, &all));
    if (!one || !all) {
        kedr_flow_destroy(one);
        kedr_flow_destroy(all);
        kedr_ctx_destroy(ctx);
        return;
    }
    int first, count;
    TU_CHECK(kedr_flow_rank_slab(all, &first, &count) == size, "%s: rank count", name);
    int ax = c.dims - 1, sum = count;
    kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_SUM, &sum, 1);
    TU_CHECK(sum == c.n[ax] && count >= c.n[ax] / size && count <= c.n[ax] / size + 1,
             "%s: slab %d cells of %d on rank %d", name, count, c.n[ax], rank);
    for (int64_t s = 0; s < c.steps; s++) {
        TU_OK(kedr_flow_step(one));
        TU_OK(kedr_flow_step(all));
    }
    kedr_flow_stats s1, sn;
    kedr_flow_get_stats(one, &s1);
    kedr_flow_get_stats(all, &sn);
    /* the centre-line profiles: gathered over the ranks and written by rank 0 */
    char p1[128], pn[128];
    snprintf(p1, sizeof p1, "/tmp/test_flow_ranks_%ld_one.csv", (long)getpid());
    snprintf(pn, sizeof pn, "/tmp/test_flow_ranks_%ld_all.csv", (long)getpid());
    if (rank == 0)
        TU_OK(kedr_flow_write_profiles(one, p1));
    kedr_comm_bcast(comm, pn, sizeof pn, 0); /* rank 0's name */
    TU_OK(kedr_flow_write_profiles(all, pn));
    if (rank == 0) {
        double dprof = profile_diff(p1, pn);
        TU_CHECK(dprof >= 0 && dprof <= 1e-9, "%s: profiles differ by %g (-1: rows)", name, dprof);
        remove(p1);
        remove(pn);
    }
    kedr_flow_fields f1, fn;
    TU_OK(kedr_flow_get_fields(one, &f1));
    TU_OK(kedr_flow_gather_fields(all, 0, &fn));
    if (rank == 0) {
        size_t N = (size_t)c.n[0] * c.n[1] * (c.dims == 3 ? c.n[2] : 1);
        double *a1[] = {f1.u, f1.v, f1.w}, *an[] = {fn.u, fn.v, fn.w};
        double umax = 0, du = 0;
        for (int b = 0; b < c.dims; b++) {
            umax = fmax(umax, maxabs(a1[b], N));
            du = fmax(du, maxdiff(a1[b], an[b], N));
        }
        double dp = maxdiff(f1.p, fn.p, N) / maxabs(f1.p, N);
        double dw = maxdiff(f1.vorticity, fn.vorticity, N) / maxabs(f1.vorticity, N);
        double de = fabs(s1.kinetic_energy - sn.kinetic_energy) / s1.kinetic_energy;
        printf("%s on %s, %d ranks: velocity %.2e, pressure %.2e, vorticity %.2e, energy %.2e "
               "(relative); CG iterations %lld and %lld; divergence %.1e\n",
               name, kedr_backend_name(be), size, du / umax, dp, dw, de,
               (long long)s1.poisson_iterations, (long long)sn.poisson_iterations,
               sn.divergence);
        TU_CHECK(fn.n[ax] == c.n[ax], "%s: gathered n", name);
        TU_CHECK(umax > 0.05, "%s: the flow moves (%g)", name, umax);
        TU_CHECK(du <= 1e-9 * umax, "%s: velocity differs by %g of %g", name, du, umax);
        TU_CHECK(dp <= 1e-9 && dw <= 1e-9, "%s: pressure %g, vorticity %g", name, dp, dw);
        TU_CHECK(de <= 1e-10, "%s: energy %.15g vs %.15g", name, sn.kinetic_energy,
                 s1.kinetic_energy);
        TU_CHECK(fabs(s1.time - sn.time) <= 1e-12 * s1.time, "%s: time", name);
        TU_CHECK(llabs((long long)(s1.poisson_iterations - sn.poisson_iterations)) <=
                     c.steps + 1, "%s: iterations %lld vs %lld", name,
                 (long long)s1.poisson_iterations, (long long)sn.poisson_iterations);
        /* multigrid over ranks: one rank's iterations, not more */
        TU_CHECK(!strstr(name, "mg") || sn.poisson_iterations == s1.poisson_iterations,
                 "%s: multigrid iterations %lld over ranks, %lld on one", name,
                 (long long)sn.poisson_iterations, (long long)s1.poisson_iterations);
        TU_CHECK(sn.divergence < 1e-8, "%s: divergence %g", name, sn.divergence);
        for (int b = 0; b < kedr_flow_bodies(one); b++) {
            kedr_flow_body_state b1, bn;
            TU_OK(kedr_flow_body_get(one, b, &b1));
            TU_OK(kedr_flow_body_get(all, b, &bn));
            double fm = 0, df = 0;
            for (int a = 0; a < 3; a++) {
                fm = fmax(fm, fabs(b1.force[a]));
                df = fmax(df, fabs(b1.force[a] - bn.force[a]));
            }
            printf("  body %d: force (%.6g, %.6g), difference %.2e relative\n", b,
                   b1.force[0], b1.force[1], df / fm);
            TU_CHECK(fm > 0 && df <= 1e-8 * fm, "%s: body force differs by %g of %g", name, df,
                     fm);
            TU_CHECK(bn.points == b1.points, "%s: body points", name);
        }
    } else {
        TU_CHECK(fn.u == NULL, "%s: fields only on rank 0", name);
    }
    kedr_flow_fields_free(&f1);
    kedr_flow_fields_free(&fn);
    kedr_flow_destroy(one);
    kedr_flow_destroy(all);
    kedr_ctx_destroy(ctx);
}

/* Over several ranks, another path chosen by env = value gives the default path's run bit for
 * bit: the gathered fields, the energy and the iterations; and the exchanges are counted and
 * timed (kedr_flow_stats). KEDR_COMM_IPC=0: the messages through the host (on cuda with the
 * ranks on one host, the default path copies GPU to GPU by CUDA IPC; on the cpu both are the
 * host path), the same exchanges. KEDR_FLOW_FUSE=0: PCG's (r, r) in an allreduce of its own,
 * the bodies' force systems one component after the other and the pressure's layer lent every
 * step; the default path has strictly fewer exchanges (P lent once; with a body, one sum over
 * ranks an iteration for all components). */
static void path_vs(kedr_backend be, const char *name, const char *text, const char *env,
                    const char *value)
{
    if (size == 1)
        return;
    kedr_flow_case c;
    TU_OK(kedr_flow_case_parse(text, name, &c));
    kedr_ctx *ctx = tu_ctx(be);
    kedr_flow *run[2] = {NULL, NULL}; /* the default path, the host path */
    const char *was = getenv(env);
    char keep[16] = "";
    if (was)
        snprintf(keep, sizeof keep, "%s", was);
    setenv(env, value, 1);
    TU_OK(kedr_flow_create_on(ctx, comm, &c, &run[1]));
    if (was)
        setenv(env, keep, 1);
    else
        unsetenv(env);
    TU_OK(kedr_flow_create_on(ctx, comm, &c, &run[0]));
    kedr_flow_fields f[2] = {{0}};
    kedr_flow_stats st[2];
    for (int k = 0; k < 2 && run[0] && run[1]; k++) {
        for (int64_t s = 0; s < c.steps; s++)
            TU_OK(kedr_flow_step(run[k]));
        kedr_flow_get_stats(run[k], &st[k]);
        TU_OK(kedr_flow_gather_fields(run[k], 0, &f[k]));
        TU_CHECK(st[k].halo_exchanges > c.steps && st[k].seconds_halo > 0 &&
                     st[k].seconds_halo < st[k].seconds_step,
                 "%s: %lld halo exchanges in %g s of %g s in steps", name,
                 (long long)st[k].halo_exchanges, st[k].seconds_halo, st[k].seconds_step);
    }
    /* on cuda the bodies' spreading adds with atomics, in an order that may change from run
     * to run: there the fields agree within 1e-9 of their largest value, as N ranks and one;
     * so do the force systems on the bodies' box and on the slabs (KEDR_FLOW_IBM_BOX=0: each
     * product summed over the ranks, in another order) */
    int box = !strcmp(env, "KEDR_FLOW_IBM_BOX");
    int exact = !box && !(be == KEDR_BACKEND_CUDA && c.nbodies > 0);
    if (rank == 0 && f[0].u && f[1].u) {
        size_t N = (size_t)c.n[0] * c.n[1] * (c.dims == 3 ? c.n[2] : 1);
        int same = 1;
        double worst = 0;
        const double *a[] = {f[0].u, f[0].v, f[0].w, f[0].p}, *b[] = {f[1].u, f[1].v, f[1].w,
                                                                     f[1].p};
        for (int k = 0; k < 4; k++)
            if (k == 3 || k < c.dims) {
                same &= memcmp(a[k], b[k], N * sizeof(double)) == 0;
                worst = fmax(worst, maxdiff(a[k], b[k], N) / fmax(maxabs(a[k], N), 1e-300));
            }
        int fuse = !strcmp(env, "KEDR_FLOW_FUSE");
        printf("%s on %s, %d ranks: the default path against %s=%s: %s (%.1e); %lld and %lld "
               "exchanges, %.3f ms of %.3f ms in steps\n", name, kedr_backend_name(be), size,
               env, value, same ? "bit for bit" : exact ? "DIFFERENT" : "within", worst,
               (long long)st[0].halo_exchanges, (long long)st[1].halo_exchanges,
               1e3 * st[0].seconds_halo, 1e3 * st[0].seconds_step);
        TU_CHECK(exact ? same : worst <= 1e-9, "%s: the fields differ between the default and "
                 "%s=%s by %g of their largest", name, env, value, worst);
        TU_CHECK(!exact || (st[0].poisson_iterations == st[1].poisson_iterations &&
                            st[0].kinetic_energy == st[1].kinetic_energy &&
                            st[0].ibm_iterations == st[1].ibm_iterations &&
                            st[0].ibm_residual == st[1].ibm_residual),
                 "%s: iterations %lld and %lld, energy %.17g and %.17g, body iterations %d and "
                 "%d (default, %s=%s)", name, (long long)st[0].poisson_iterations,
                 (long long)st[1].poisson_iterations, st[0].kinetic_energy,
                 st[1].kinetic_energy, st[0].ibm_iterations, st[1].ibm_iterations, env, value);
        if (fuse || box) /* P lent once, not every step; the bodies' sums merged (fuse), or
                            none in the force systems' iterations (box) */
            TU_CHECK(st[0].halo_exchanges < st[1].halo_exchanges, "%s: exchanges %lld fused, "
                     "%lld not", name, (long long)st[0].halo_exchanges,
                     (long long)st[1].halo_exchanges);
        else
            TU_CHECK(!exact || st[0].halo_exchanges == st[1].halo_exchanges,
                     "%s: exchanges %lld and %lld (default, %s=%s)", name,
                     (long long)st[0].halo_exchanges, (long long)st[1].halo_exchanges, env,
                     value);
    }
    for (int k = 0; k < 2; k++) {
        kedr_flow_fields_free(&f[k]);
        kedr_flow_destroy(run[k]);
    }
    kedr_ctx_destroy(ctx);
}

/* 4 steps, a checkpoint, a restart, 4 more: bit for bit the straight run of 8 (the cavity
 * with the oscillating circle: the checkpoint holds the point forces of the warm start). */
static void restart(kedr_backend be)
{
    kedr_flow_case c;
    TU_OK(kedr_flow_case_parse(circle2d, "circle", &c)); /* the forces' warm start too */
    kedr_ctx *ctx = tu_ctx(be);
    char path[256];
    snprintf(path, sizeof path, "/tmp/test_flow_ranks_%ld.rank%dof%d.chk",
             (long)getpid(), rank, size);
    kedr_flow *a = NULL, *b = NULL;
    TU_OK(kedr_flow_create_on(ctx, comm, &c, &a));
    for (int s = 0; s < 8 && a; s++) {
        TU_OK(kedr_flow_step(a));
        if (s == 3)
            TU_OK(kedr_flow_write_checkpoint(a, path));
    }
    TU_OK(kedr_flow_restart_on(ctx, comm, &c, path, &b));
    for (int s = 0; s < 4 && b; s++)
        TU_OK(kedr_flow_step(b));
    if (a && b) {
        int nv = 0;
        for (int comp = 0; comp < 2; comp++) {
            size_t n = kedr_flow_staggered_count(a, comp);
            double *x = malloc(n * 8), *y = malloc(n * 8);
            TU_OK(kedr_flow_get_staggered(a, comp, x));
            TU_OK(kedr_flow_get_staggered(b, comp, y));
            nv += memcmp(x, y, n * 8) != 0;
            free(x);
            free(y);
        }
        TU_CHECK(nv == 0, "restart on rank %d of %d: not bit for bit", rank, size);
        kedr_flow_body_state ba, bb;
        TU_OK(kedr_flow_body_get(a, 0, &ba));
        TU_OK(kedr_flow_body_get(b, 0, &bb));
        TU_CHECK(memcmp(ba.force, bb.force, sizeof ba.force) == 0, "restart: body force");
    }
    remove(path);
    kedr_flow_destroy(a);
    kedr_flow_destroy(b);
    kedr_ctx_destroy(ctx);
}

/* Refusals: every rank fails, naming what to change. */
static void refuse(const char *what, const char *text, const char *expect)
{
    kedr_flow_case c;
    TU_OK(kedr_flow_case_parse(text, what, &c));
    kedr_ctx *ctx = tu_ctx(KEDR_BACKEND_CPU);
    kedr_flow *f = NULL;
    kedr_status s = kedr_flow_create_on(ctx, comm, &c, &f);
    TU_CHECK(s != KEDR_OK && strstr(kedr_last_error(), expect), "%s: %s", what,
             s == KEDR_OK ? "accepted" : kedr_last_error());
    kedr_flow_destroy(f);
    kedr_ctx_destroy(ctx);
}

/* The cavity with another [pressure] section, ny and more sections. */
static void cavity_with(char *text, size_t size_, const char *pressure, int ny, const char *more)
{
    snprintf(text, size_, "[domain]\ndimensions = 2\nlength = 1 1\nboundary_x_min = wall\n"
             "boundary_x_max = wall\nboundary_y_min = wall\nboundary_y_max = wall\n"
             "[boundary]\ny_max_velocity = 1 0\n[grid]\nnx = 23\nny = %d\n[fluid]\nnu = 0.01\n"
             "[time]\ndt = 0.001\nsteps = 2\n[pressure]\n%s\n%s", ny, pressure, more);
}

static void refusals(void)
{
    char text[4096];
    if (size < 2)
        return;
#ifdef KEDR_HAVE_FFTW
    cavity_with(text, sizeof text, "solver = pcg\npreconditioner = jacobi", 17, "");
    setenv("KEDR_FLOW_OVERLAP", "2", 1);
    refuse("KEDR_FLOW_OVERLAP=2", text, "KEDR_FLOW_OVERLAP = '2': expected 1");
    setenv("KEDR_FLOW_OVERLAP", "1", 1);
    setenv("KEDR_FLOW_XCH_SIGNAL", "yes", 1);
    refuse("KEDR_FLOW_XCH_SIGNAL=yes", text, "KEDR_FLOW_XCH_SIGNAL = 'yes': expected 0 or 1");
    unsetenv("KEDR_FLOW_XCH_SIGNAL");
    cavity_with(text, sizeof text, "solver = fft", 17, "");
    refuse("fft solver", text, "solver = fft is not supported over several ranks yet");
#endif
    if (size >= 3) {
        cavity_with(text, sizeof text, "solver = pcg\npreconditioner = jacobi", size - 1, "");
        refuse("too many ranks", text, "fewer than the");
    }
    /* and the one-rank path of the same case still runs it */
    cavity_with(text, sizeof text, "solver = pcg\npreconditioner = mg", 17, "");
    kedr_flow_case c;
    TU_OK(kedr_flow_case_parse(text, "cavity mg", &c));
    kedr_ctx *ctx = tu_ctx(KEDR_BACKEND_CPU);
    kedr_flow *f = NULL;
    TU_OK(kedr_flow_create(ctx, &c, &f));
    TU_OK(kedr_flow_step(f));
    kedr_flow_destroy(f);
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
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++) {
        compare(list[i], "taylor_green 30x22", tg2d);
        compare(list[i], "cavity 23x17", cavity);
        compare(list[i], "box 12x10x9", box3d);
        compare(list[i], "channel 12x10x9", channel3d);
        compare(list[i], "channel along y 14x11", channel_y);
        compare(list[i], "oscillating circle 23x21", circle2d);
        compare(list[i], "sphere 12x10x9", sphere3d);
        compare(list[i], "taylor_green 31x22, ainv", tg2d_ainv);
        compare(list[i], "channel 12x10x13, ainv", channel3d_ainv);
        compare(list[i], "box 12x10x9, ainv", box3d_ainv);
        setenv("KEDR_FLOW_MG_GATHER", "0", 1);
        compare(list[i], "cavity 24x26, mg alone", cavity_mg);
        compare(list[i], "taylor_green 32x44, pcg + mg", tg_mg);
        compare(list[i], "box 12x10x14, pcg + mg", box_mg);
        unsetenv("KEDR_FLOW_MG_GATHER");
        /* the same over the host and GPU to GPU: SSOR with the same neighbour both ways (two
         * ranks), PCG + V-cycles with a gathered coarse level, a body */
        path_vs(list[i], "taylor_green 30x22", tg2d, "KEDR_COMM_IPC", "0");
        path_vs(list[i], "box 12x10x14, pcg + mg", box_mg, "KEDR_COMM_IPC", "0");
        path_vs(list[i], "sphere 12x10x9", sphere3d, "KEDR_COMM_IPC", "0");
        /* the merged reductions and body sums against a message for each */
        /* (under KEDR_TEST_QUICK, the sanitizers' run, one case of each) */
        int all = !tu_quick();
        path_vs(list[i], "sphere 12x10x9", sphere3d, "KEDR_FLOW_FUSE", "0");
        path_vs(list[i], "sphere 12x10x9", sphere3d, "KEDR_FLOW_IBM_BOX", "0");
        if (all) {
            path_vs(list[i], "oscillating circle 23x21", circle2d, "KEDR_FLOW_FUSE", "0");
            path_vs(list[i], "oscillating circle 23x21", circle2d, "KEDR_FLOW_IBM_BOX", "0");
            path_vs(list[i], "sphere 12x10x16, pcg + mg", sphere_mg, "KEDR_FLOW_FUSE", "0");
            path_vs(list[i], "taylor_green 32x44, pcg + mg", tg_mg, "KEDR_FLOW_FUSE", "0");
        }
        /* interior planes while the halo travels against the whole slab after it (slabs of
         * three planes or more; the thinner ones and coarse levels take the earlier path) */
        if (all)
            path_vs(list[i], "taylor_green 30x22", tg2d, "KEDR_FLOW_OVERLAP", "0");
        path_vs(list[i], "sphere 12x10x16, pcg + mg", sphere_mg, "KEDR_FLOW_OVERLAP", "0");
        if (all) {
            path_vs(list[i], "taylor_green 32x44, pcg + mg", tg_mg, "KEDR_FLOW_OVERLAP", "0");
            path_vs(list[i], "taylor_green 31x22, ainv", tg2d_ainv, "KEDR_FLOW_OVERLAP", "0");
        }
        path_vs(list[i], "channel 12x10x13, ainv", channel3d_ainv, "KEDR_FLOW_OVERLAP", "0");
        /* cuda, ranks on GPUs of their own: halos written by kernels into the neighbours'
         * memory and ordered by signal words against copies ordered by IPC events (on the cpu,
         * or ranks sharing a GPU, both are the earlier path): SSOR with the same neighbour both
         * ways (two ranks), PCG + V-cycles, AINV's two halos, a body's step */
        if (list[i] == KEDR_BACKEND_CUDA) {
            path_vs(list[i], "taylor_green 30x22", tg2d, "KEDR_FLOW_XCH_SIGNAL", "0");
            path_vs(list[i], "box 12x10x14, pcg + mg", box_mg, "KEDR_FLOW_XCH_SIGNAL", "0");
            path_vs(list[i], "channel 12x10x13, ainv", channel3d_ainv, "KEDR_FLOW_XCH_SIGNAL",
                    "0");
            path_vs(list[i], "sphere 12x10x16, pcg + mg", sphere_mg, "KEDR_FLOW_XCH_SIGNAL",
                    "0");
        }
        restart(list[i]);
    }
    refusals();
    uint64_t counts[2] = {(uint64_t)tu_passed, (uint64_t)tu_failed};
    kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, counts, 2);
    if (rank == 0)
        printf("test_flow_ranks (%d ranks): %llu passed, %llu failed\n", size,
               (unsigned long long)counts[0], (unsigned long long)counts[1]);
    kedr_comm_finalize(comm);
    return counts[1] ? 1 : 0;
}
