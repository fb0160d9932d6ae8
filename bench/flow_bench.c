/* kedr bench flow: the pressure Poisson solvers (PCG with each preconditioner, multigrid alone)
 * on a 2D and a 3D homogeneous Neumann problem, a random zero-mean right-hand side solved from
 * x = 0 to a relative residual of 1e-8 (median of repeats after a warm-up; every row's residual
 * checked; the direct FFT/DCT solver too: on the cpu with FFTW, on cuda with cuFFT, and in a cuda
 * run the cpu's FFTW solve of the same problem beside it, the two x compared), the time step of
 * the projection
 * solver (a lid-driven box) and its pressure share,
 * and, on the cpu, the same Poisson problem through hypre (BoomerAMG-preconditioned CG) and
 * PETSc (CG with GAMG) when the build has them, over every MPI rank of the run (one process:
 * one rank; `mpirun -np P kedr bench flow --backend cpu --solvers hypre,petsc`: P ranks, each
 * a slab of planes, the way these libraries use all the cores of a host). */
#include "bench_util.h"
#include "flow_bench.h"

#include "kedr/flow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(KEDR_BENCH_HYPRE) || defined(KEDR_BENCH_PETSC)
#include <mpi.h>
#endif
#ifdef KEDR_BENCH_HYPRE
#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#endif
#ifdef KEDR_BENCH_PETSC
#include <petscksp.h>
#endif

#define FB_TOL 1e-8

/* The run's MPI rank and rank count while the yardsticks hold MPI (else 0 and 1): only rank 0
 * prints, checks and writes; the other ranks join the yardsticks' solves. */
static int fb_rank = 0, fb_ranks = 1;

int kedr_bench_flow_rank(void) { return fb_rank; }

const char *kedr_bench_flow_yardsticks(void)
{
#if defined(KEDR_BENCH_HYPRE) && defined(KEDR_BENCH_PETSC)
    return "hypre, PETSc";
#elif defined(KEDR_BENCH_HYPRE)
    return "hypre";
#elif defined(KEDR_BENCH_PETSC)
    return "PETSc";
#else
    return "none";
#endif
}

typedef struct {
    const char *name;
    kedr_flow_method method;
    kedr_flow_precond pc;
    int steps;
} variant;

static const variant variants[] = {
    {"cg", KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_NONE, 1},
    {"pcg-jacobi1", KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_JACOBI, 1},
    {"pcg-jacobi2", KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_JACOBI, 2},
    {"pcg-jacobi3", KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_JACOBI, 3},
    {"pcg-jacobi4", KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_JACOBI, 4},
    {"pcg-ssor1", KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_SSOR, 1},
    {"pcg-ssor2", KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_SSOR, 2},
    {"pcg-ainv", KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_AINV, 1},
    {"pcg-mg", KEDR_FLOW_METHOD_PCG, KEDR_FLOW_PC_MG, 2},
    {"mg", KEDR_FLOW_METHOD_MG, KEDR_FLOW_PC_NONE, 2},
    {"fft", KEDR_FLOW_METHOD_FFT, KEDR_FLOW_PC_NONE, 1}, /* cpu with FFTW, cuda with cuFFT */
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

typedef struct {
    char what[48], grid[32];
    double setup_s, solve_s;
    int iterations;
    double residual;
    const char *status;
} row;

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The problem: n cells a side, h = 1/n, Neumann ends; b random with zero mean. */
typedef struct {
    int n[3];
    double h[3];
    size_t N;
    double *b; /* host */
} problem;

static kedr_status make_problem(problem *p, int dims, int n)
{
    p->N = 1;
    for (int a = 0; a < 3; a++) {
        p->n[a] = a < dims ? n : 1;
        p->h[a] = 1.0 / n;
        p->N *= (size_t)p->n[a];
    }
    if (!(p->b = malloc(p->N * sizeof *p->b)))
        return kedr_fail(KEDR_ERR_NOMEM, "bench flow: %zu bytes", p->N * 8);
    double mean = 0;
    for (size_t i = 0; i < p->N; i++)
        mean += p->b[i] = (mix(i) >> 11) * 0x1p-53 - 0.5;
    mean /= (double)p->N;
    for (size_t i = 0; i < p->N; i++)
        p->b[i] -= mean;
    return KEDR_OK;
}

/* ||b - A x|| / ||b|| from the 7-point formula on the host (the check of every row). */
static double residual(const problem *p, const double *x)
{
    double rr = 0, bb = 0;
    for (int k = 0; k < p->n[2]; k++)
        for (int j = 0; j < p->n[1]; j++)
            for (int i = 0; i < p->n[0]; i++) {
                int at[3] = {i, j, k};
                size_t c = i + (size_t)p->n[0] * (j + (size_t)p->n[1] * k), st[3];
                st[0] = 1;
                st[1] = (size_t)p->n[0];
                st[2] = (size_t)p->n[0] * p->n[1];
                double s = 0;
                for (int a = 0; a < 3; a++) {
                    double w = 1 / (p->h[a] * p->h[a]);
                    if (at[a] > 0)
                        s += w * (x[c] - x[c - st[a]]);
                    if (at[a] < p->n[a] - 1)
                        s += w * (x[c] - x[c + st[a]]);
                }
                rr += (p->b[c] - s) * (p->b[c] - s);
                bb += p->b[c] * p->b[c];
            }
    return sqrt(rr / bb);
}

typedef struct {
    kedr_ctx *ctx;
    kedr_flow_poisson *ps;
    double *x, *b;
    size_t N;
    kedr_flow_poisson_info info;
} solve_arg;

static kedr_status solve_call(void *v)
{
    solve_arg *a = v;
    KEDR_TRY(kedr_memset(a->ctx, a->x, 0, a->N * sizeof *a->x));
    return kedr_flow_poisson_solve(a->ps, a->x, a->b, &a->info);
}

static kedr_status bench_variant(kedr_ctx *ctx, const problem *p, const variant *v, int repeats,
                                 double *dx, double *db, double *hx, row *r)
{
    kedr_flow_poisson_opts o;
    kedr_flow_poisson_defaults(&o);
    for (int a = 0; a < 3; a++) {
        o.n[a] = p->n[a];
        o.h[a] = p->h[a];
    }
    o.method = v->method;
    o.precond = v->pc;
    o.steps = v->steps;
    o.tol = FB_TOL;
    o.max_iter = 20000;
    double t0 = kedr_wall_seconds();
    solve_arg a = {ctx, NULL, dx, db, p->N, {0}};
    KEDR_TRY(kedr_flow_poisson_create(ctx, &o, &a.ps));
    r->setup_s = kedr_wall_seconds() - t0;
    kedr_status s = bench_time(ctx, solve_call, &a, repeats, &r->solve_s);
    if (s == KEDR_OK)
        s = kedr_download(ctx, hx, dx, p->N * sizeof *hx);
    kedr_flow_poisson_destroy(a.ps);
    KEDR_TRY(s);
    r->iterations = a.info.iterations;
    r->residual = residual(p, hx);
    r->status = a.info.converged && r->residual <= 1.01 * FB_TOL ? "ok" : "MISMATCH";
    snprintf(r->what, sizeof r->what, "kedr %s", v->name);
    return KEDR_OK;
}

#ifdef KEDR_HAVE_FFTW
/* In a cuda run: the same FFT solve on the cpu with FFTW (its own context), timed as a row of
 * its own; its x (the cuda row's is in hx) must equal the cuda one to 1e-12 of max |x|, else
 * both rows are marked MISMATCH. */
static kedr_status bench_fft_cpu(const problem *p, const variant *v, int repeats, double *hx,
                                 row *gpu, row *r)
{
    kedr_ctx *cpu = NULL;
    KEDR_TRY(kedr_ctx_create(&cpu, KEDR_BACKEND_CPU, 0));
    double *x = NULL, *b = NULL, *cx = malloc(p->N * sizeof *cx);
    kedr_status s = cx ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "bench flow: %zu bytes", p->N * 8);
    if (s == KEDR_OK)
        s = kedr_alloc(cpu, (void **)&x, p->N * sizeof *x);
    if (s == KEDR_OK)
        s = kedr_alloc(cpu, (void **)&b, p->N * sizeof *b);
    if (s == KEDR_OK)
        s = kedr_upload(cpu, b, p->b, p->N * sizeof *b);
    if (s == KEDR_OK)
        s = bench_variant(cpu, p, v, repeats, x, b, cx, r);
    if (s == KEDR_OK) {
        double d = 0, m = 0;
        for (size_t c = 0; c < p->N; c++) {
            d = fmax(d, fabs(cx[c] - hx[c]));
            m = fmax(m, fabs(cx[c]));
        }
        memcpy(r->grid, gpu->grid, sizeof r->grid);
        snprintf(r->what, sizeof r->what, "kedr fft (cpu, FFTW)");
        printf("fft: cuda's x against the cpu's: largest difference %.2e of max |x| %.3g\n", d,
               m);
        if (!(d <= 1e-12 * m))
            gpu->status = r->status = "MISMATCH";
    }
    kedr_free(cpu, x);
    kedr_free(cpu, b);
    free(cx);
    kedr_ctx_destroy(cpu);
    return s;
}
#endif

/* ---- yardsticks ------------------------------------------------------------------------- */

#if defined(KEDR_BENCH_HYPRE) || defined(KEDR_BENCH_PETSC)
/* Row c of the matrix: columns and values (at most 7). */
static int matrix_row(const problem *p, size_t c, long long *cols, double *vals)
{
    int at[3] = {(int)(c % (size_t)p->n[0]), (int)(c / (size_t)p->n[0] % (size_t)p->n[1]),
                 (int)(c / ((size_t)p->n[0] * p->n[1]))};
    long long st[3] = {1, p->n[0], (long long)p->n[0] * p->n[1]};
    int m = 1;
    double d = 0;
    for (int a = 0; a < 3; a++) {
        double w = 1 / (p->h[a] * p->h[a]);
        if (at[a] > 0) {
            cols[m] = (long long)c - st[a];
            vals[m++] = -w;
            d += w;
        }
        if (at[a] < p->n[a] - 1) {
            cols[m] = (long long)c + st[a];
            vals[m++] = -w;
            d += w;
        }
    }
    cols[0] = (long long)c;
    vals[0] = d;
    return m;
}

/* This rank's rows [*lo, *hi): whole planes of the slowest axis that is split (z in 3D, y in
 * 2D), as even as the plane count allows. */
static void slab(const problem *p, size_t *lo, size_t *hi)
{
    int ax = p->n[2] > 1 ? 2 : 1;
    size_t planes = (size_t)p->n[ax], per = p->N / planes;
    *lo = planes * (size_t)fb_rank / (size_t)fb_ranks * per;
    *hi = planes * (size_t)(fb_rank + 1) / (size_t)fb_ranks * per;
}

/* x (rows lo..hi-1 of every rank) gathered on rank 0 into hx, its mean removed there; then the
 * row's residual check on rank 0. */
static kedr_status gather_check(const problem *p, const double *x, size_t lo, size_t hi,
                                double *hx, row *r)
{
    int *counts = NULL, *displs = NULL;
    if (fb_rank == 0) {
        counts = malloc((size_t)fb_ranks * sizeof *counts);
        displs = malloc((size_t)fb_ranks * sizeof *displs);
        if (!counts || !displs) {
            free(counts);
            free(displs);
            return kedr_fail(KEDR_ERR_NOMEM, "bench flow: %d ranks' counts", fb_ranks);
        }
    }
    int mine = (int)(hi - lo), at = (int)lo;
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(&at, 1, MPI_INT, displs, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(x, mine, MPI_DOUBLE, hx, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    if (fb_rank > 0)
        return KEDR_OK;
    double mean = 0;
    for (size_t c = 0; c < p->N; c++)
        mean += hx[c];
    mean /= (double)p->N;
    for (size_t c = 0; c < p->N; c++)
        hx[c] -= mean;
    r->residual = residual(p, hx);
    r->status = r->residual <= 1.01 * FB_TOL ? "ok" : "MISMATCH";
    return KEDR_OK;
}

/* Seconds from t0 to now, the slowest rank's. */
static double ranks_seconds(double t0)
{
    double t = kedr_wall_seconds() - t0, most = t;
    MPI_Allreduce(&t, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return most;
}

/* A yardstick's row name: the library, and the ranks when more than one. */
static void yard_name(row *r, const char *what)
{
    if (fb_ranks > 1)
        snprintf(r->what, sizeof r->what, "%s (%d ranks)", what, fb_ranks);
    else
        snprintf(r->what, sizeof r->what, "%s", what);
}
#endif

#ifdef KEDR_BENCH_HYPRE
/* hypre's BoomerAMG-preconditioned CG over the ranks (IJ interface, each rank its slab), one
 * V-cycle a CG iteration; strong threshold 0.5 in 3D (hypre's advice for 3D Laplacians), the
 * library's defaults otherwise. Setup (assembly + AMG setup) once, the solve `repeats` times
 * from x = 0: the median. */
static kedr_status hypre_run(const problem *p, int repeats, double *hx, row *r)
{
    size_t lo, hi;
    slab(p, &lo, &hi);
    HYPRE_BigInt ilo = (HYPRE_BigInt)lo, ihi = (HYPRE_BigInt)hi - 1;
    size_t nloc = hi - lo;
    HYPRE_IJMatrix A;
    HYPRE_IJVector b, x;
    HYPRE_ParCSRMatrix pA;
    HYPRE_ParVector pb, px;
    HYPRE_Solver solver, amg;
    HYPRE_BigInt *idx = malloc((nloc + 1) * sizeof *idx);
    HYPRE_Complex *vals = malloc((nloc + 1) * sizeof *vals);
    double *times = malloc((size_t)repeats * sizeof *times);
    if (!idx || !vals || !times) {
        free(idx);
        free(vals);
        free(times);
        return kedr_fail(KEDR_ERR_NOMEM, "bench flow: hypre vectors of %zu rows", nloc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = kedr_wall_seconds();
    HYPRE_IJMatrixCreate(MPI_COMM_WORLD, ilo, ihi, ilo, ihi, &A);
    HYPRE_IJMatrixSetObjectType(A, HYPRE_PARCSR);
    HYPRE_IJMatrixInitialize(A);
    for (size_t c = lo; c < hi; c++) {
        long long cols[7];
        double v7[7];
        HYPRE_BigInt hc[7], row_i = (HYPRE_BigInt)c;
        HYPRE_Complex hv[7];
        HYPRE_Int m = matrix_row(p, c, cols, v7);
        for (int e = 0; e < m; e++) {
            hc[e] = (HYPRE_BigInt)cols[e];
            hv[e] = v7[e];
        }
        HYPRE_IJMatrixSetValues(A, 1, &m, &row_i, hc, hv);
    }
    HYPRE_IJMatrixAssemble(A);
    HYPRE_IJMatrixGetObject(A, (void **)&pA);
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, ilo, ihi, &b);
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, ilo, ihi, &x);
    HYPRE_IJVectorSetObjectType(b, HYPRE_PARCSR);
    HYPRE_IJVectorSetObjectType(x, HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(b);
    HYPRE_IJVectorInitialize(x);
    for (size_t c = lo; c < hi; c++) {
        idx[c - lo] = (HYPRE_BigInt)c;
        vals[c - lo] = p->b[c];
    }
    HYPRE_IJVectorSetValues(b, (HYPRE_Int)nloc, idx, vals);
    for (size_t c = 0; c < nloc; c++)
        vals[c] = 0;
    HYPRE_IJVectorSetValues(x, (HYPRE_Int)nloc, idx, vals);
    HYPRE_IJVectorAssemble(b);
    HYPRE_IJVectorAssemble(x);
    HYPRE_IJVectorGetObject(b, (void **)&pb);
    HYPRE_IJVectorGetObject(x, (void **)&px);
    HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &solver);
    HYPRE_PCGSetTol(solver, FB_TOL);
    HYPRE_PCGSetTwoNorm(solver, 1);
    HYPRE_PCGSetMaxIter(solver, 1000);
    HYPRE_BoomerAMGCreate(&amg);
    HYPRE_BoomerAMGSetTol(amg, 0.0);
    HYPRE_BoomerAMGSetMaxIter(amg, 1);
    HYPRE_BoomerAMGSetPrintLevel(amg, 0);
    if (p->n[2] > 1)
        HYPRE_BoomerAMGSetStrongThreshold(amg, 0.5);
    HYPRE_PCGSetPrecond(solver, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                        (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
    HYPRE_ParCSRPCGSetup(solver, pA, pb, px);
    r->setup_s = ranks_seconds(t0);
    for (int k = 0; k < repeats; k++) {
        HYPRE_ParVectorSetConstantValues(px, 0.0);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = kedr_wall_seconds();
        HYPRE_ParCSRPCGSolve(solver, pA, pb, px);
        times[k] = ranks_seconds(t0);
    }
    r->solve_s = bench_median(times, repeats);
    HYPRE_Int it = 0;
    HYPRE_PCGGetNumIterations(solver, &it);
    r->iterations = (int)it;
    HYPRE_IJVectorGetValues(x, (HYPRE_Int)nloc, idx, vals);
    kedr_status s = gather_check(p, vals, lo, hi, hx, r);
    HYPRE_ParCSRPCGDestroy(solver);
    HYPRE_BoomerAMGDestroy(amg);
    HYPRE_IJVectorDestroy(b);
    HYPRE_IJVectorDestroy(x);
    HYPRE_IJMatrixDestroy(A);
    free(idx);
    free(vals);
    free(times);
    yard_name(r, "hypre BoomerAMG-PCG");
    return s;
}
#endif

#ifdef KEDR_BENCH_PETSC
/* PETSc's CG with GAMG over the ranks (MPIAIJ, each rank its slab; the constant null space
 * attached), the library's defaults otherwise. Setup once, the solve `repeats` times from
 * x = 0: the median. */
static kedr_status petsc_run(const problem *p, int repeats, double *hx, row *r)
{
    size_t lo, hi;
    slab(p, &lo, &hi);
    PetscInt N = (PetscInt)p->N, nloc = (PetscInt)(hi - lo);
    Mat A;
    Vec b, x;
    KSP ksp;
    PC pc;
    MatNullSpace ns;
    double *times = malloc((size_t)repeats * sizeof *times);
    if (!times)
        return kedr_fail(KEDR_ERR_NOMEM, "bench flow: %d timings", repeats);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = kedr_wall_seconds();
    if (MatCreateAIJ(PETSC_COMM_WORLD, nloc, nloc, N, N, 7, NULL, 2, NULL, &A)) {
        free(times);
        return kedr_fail(KEDR_ERR_NOMEM, "bench flow: PETSc matrix of %zu rows", p->N);
    }
    for (size_t c = lo; c < hi; c++) {
        long long cols[7];
        double vals[7];
        PetscInt pc_[7], row_i = (PetscInt)c;
        PetscScalar pv[7];
        int m = matrix_row(p, c, cols, vals);
        for (int e = 0; e < m; e++) {
            pc_[e] = (PetscInt)cols[e];
            pv[e] = vals[e];
        }
        MatSetValues(A, 1, &row_i, m, pc_, pv, INSERT_VALUES);
    }
    MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY);
    MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
    MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &ns);
    MatSetNullSpace(A, ns);
    VecCreateMPI(PETSC_COMM_WORLD, nloc, N, &b);
    VecDuplicate(b, &x);
    PetscScalar *bv;
    VecGetArray(b, &bv);
    for (size_t c = lo; c < hi; c++)
        bv[c - lo] = p->b[c];
    VecRestoreArray(b, &bv);
    KSPCreate(PETSC_COMM_WORLD, &ksp);
    KSPSetOperators(ksp, A, A);
    KSPSetType(ksp, KSPCG);
    KSPGetPC(ksp, &pc);
    PCSetType(pc, PCGAMG);
    KSPSetTolerances(ksp, FB_TOL, 1e-300, 1e10, 1000);
    KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED);
    KSPSetUp(ksp);
    r->setup_s = ranks_seconds(t0);
    for (int k = 0; k < repeats; k++) {
        VecSet(x, 0.0);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = kedr_wall_seconds();
        KSPSolve(ksp, b, x);
        times[k] = ranks_seconds(t0);
    }
    r->solve_s = bench_median(times, repeats);
    PetscInt it = 0;
    KSPGetIterationNumber(ksp, &it);
    r->iterations = (int)it;
    const PetscScalar *xv;
    VecGetArrayRead(x, &xv);
    kedr_status s = gather_check(p, xv, lo, hi, hx, r);
    VecRestoreArrayRead(x, &xv);
    KSPDestroy(&ksp);
    VecDestroy(&b);
    VecDestroy(&x);
    MatNullSpaceDestroy(&ns);
    MatDestroy(&A);
    free(times);
    yard_name(r, "PETSc CG+GAMG");
    return s;
}
#endif

/* ---- the time step ------------------------------------------------------------------------ */

static kedr_status bench_step(kedr_ctx *ctx, int dims, int n, int steps, row *r)
{
    kedr_flow_case c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "bench");
    c.dims = dims;
    for (int a = 0; a < 3; a++) {
        c.n[a] = a < dims ? n : 1;
        c.length[a] = 1;
    }
    c.nu = 0.001;
    c.rho = 1;
    for (int f = 0; f < 6; f++)
        c.bc[f].kind = f < 2 * dims ? KEDR_FLOW_BC_WALL : KEDR_FLOW_BC_PERIODIC;
    c.bc[3].velocity[0] = 1;
    c.cfl = 0.5;
    c.steps = steps + 3;
    kedr_flow_poisson_defaults(&c.poisson);
    c.poisson.max_iter = 500;
    kedr_flow *f;
    KEDR_TRY(kedr_flow_create(ctx, &c, &f));
    kedr_status s = KEDR_OK;
    for (int i = 0; i < 3 && s == KEDR_OK; i++) /* warm-up */
        s = kedr_flow_step(f);
    kedr_flow_stats st0, st1;
    kedr_flow_get_stats(f, &st0);
    double t0 = kedr_wall_seconds();
    for (int i = 0; i < steps && s == KEDR_OK; i++)
        s = kedr_flow_step(f);
    if (s == KEDR_OK)
        s = kedr_ctx_sync(ctx);
    double t = kedr_wall_seconds() - t0;
    kedr_flow_get_stats(f, &st1);
    kedr_flow_destroy(f);
    KEDR_TRY(s);
    snprintf(r->what, sizeof r->what, "step (lid box, pcg-mg)");
    r->setup_s = (st1.seconds_poisson - st0.seconds_poisson) / steps; /* pressure per step */
    r->solve_s = t / steps;
    r->iterations = (int)((st1.poisson_iterations - st0.poisson_iterations) / steps);
    r->residual = st1.divergence;
    r->status = st1.divergence < 1e-6 ? "ok" : "MISMATCH";
    return KEDR_OK;
}

/* ---- the driver --------------------------------------------------------------------------- */

static void print_row(const row *r, int step)
{
    if (fb_rank > 0)
        return;
    if (step)
        printf("%-30s %-10s %10.3f ms/step %8.3f ms pressure %5d it/step  div %.1e  %s\n",
               r->what, r->grid, 1e3 * r->solve_s, 1e3 * r->setup_s, r->iterations, r->residual,
               r->status);
    else
        printf("%-30s %-10s %10.3f ms %8.3f ms/it %5d it  setup %8.3f ms  res %.2e  %s\n",
               r->what, r->grid, 1e3 * r->solve_s,
               r->iterations ? 1e3 * r->solve_s / r->iterations : 0.0, r->iterations,
               1e3 * r->setup_s, r->residual, r->status);
    fflush(stdout);
}

static void json_row(FILE *fp, const row *r, int first, int step)
{
    fprintf(fp, "%s\n    {\"kind\": \"%s\", \"what\": ", first ? "" : ",",
            step ? "step" : "poisson");
    kedr_json_string(fp, r->what);
    fprintf(fp, ", \"grid\": \"%s\", \"%s\": %.6g, \"%s\": %.6g, \"iterations\": %d, "
            "\"%s\": %.3g", r->grid, step ? "ms_per_step" : "solve_ms", 1e3 * r->solve_s,
            step ? "pressure_ms_per_step" : "setup_ms", 1e3 * r->setup_s, r->iterations,
            step ? "divergence" : "residual", r->residual);
    bench_json_status(fp, r->status, r->status[0] == 'o' ? NULL : "the residual check failed");
    fprintf(fp, "}");
}

/* Is `name` one of the yardsticks ("hypre", "petsc"), and is it in this build? */
static int yardstick_name(const char *name, size_t len, int *built)
{
#ifdef KEDR_BENCH_HYPRE
    const int hypre = 1;
#else
    const int hypre = 0;
#endif
#ifdef KEDR_BENCH_PETSC
    const int petsc = 1;
#else
    const int petsc = 0;
#endif
    if (len == 5 && strncmp(name, "hypre", len) == 0)
        *built = hypre;
    else if (len == 5 && strncmp(name, "petsc", len) == 0)
        *built = petsc;
    else
        return 0;
    return 1;
}

/* Every name of --solvers a solver's or a yardstick's in this build; *kedr_rows: whether it
 * names one of kedr's. */
static kedr_status check_solvers(const char *list, int *kedr_rows)
{
    *kedr_rows = !list;
    for (const char *q = list; q && *q;) {
        const char *end = strchr(q, ',');
        int l = end ? (int)(end - q) : (int)strlen(q), known = 0, built = 0;
        for (int v = 0; v < NVARIANTS; v++)
            known |= (int)strlen(variants[v].name) == l && !strncmp(q, variants[v].name, (size_t)l);
        *kedr_rows |= known;
        if (!known && yardstick_name(q, (size_t)l, &built)) {
            if (!built)
                return kedr_fail(KEDR_ERR_INVALID, "bench flow: --solvers: %.*s is not in this "
                                 "build (its yardsticks: %s; scripts/install-deps.sh --anchors "
                                 "installs hypre and PETSc)", l, q, kedr_bench_flow_yardsticks());
            known = 1;
        }
        if (!known)
            return kedr_fail(KEDR_ERR_INVALID, "bench flow: --solvers: unknown solver '%.*s': "
                             "expected a comma-separated list of cg, pcg-jacobi1..4, pcg-ssor1, "
                             "pcg-ssor2, pcg-ainv, pcg-mg, mg, fft, hypre, petsc", l, q);
        q += l + (end != NULL);
    }
    return KEDR_OK;
}

kedr_status kedr_bench_flow(kedr_ctx *ctx, const kedr_bench_flow_opts *o)
{
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    int n2 = o->n2d > 0 ? o->n2d : cuda ? 2048 : 256, n3 = o->n3d > 0 ? o->n3d : cuda ? 256 : 64;
    int repeats = o->repeats > 0 ? o->repeats : 3, steps = o->steps > 0 ? o->steps : 10;
    int fft_only = o->only && strcmp(o->only, "fft") == 0;
    int do_poisson = !o->only || strcmp(o->only, "poisson") == 0 || fft_only;
    int do_step = !o->only || strcmp(o->only, "step") == 0;
    int kedr_rows = 1;
    KEDR_TRY(check_solvers(o->solvers, &kedr_rows));
    row rows[2 * (NVARIANTS + 3) + 2];
    int nrows = 0, step_from = 0;
    char dev[256];
    bench_device_name(ctx, dev, sizeof dev);
#if defined(KEDR_BENCH_HYPRE) || defined(KEDR_BENCH_PETSC)
    int we_init = 0,
        yard = !o->no_yardsticks && do_poisson && !cuda && !fft_only &&
               (bench_in_list(o->solvers, "hypre") || bench_in_list(o->solvers, "petsc"));
    if (yard) {
        int inited = 0;
        MPI_Initialized(&inited);
        if (!inited && MPI_Init(NULL, NULL) == MPI_SUCCESS)
            we_init = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &fb_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &fb_ranks);
        if (fb_ranks > 1 && (kedr_rows || !o->only)) { /* the step would run too */
            if (we_init)
                MPI_Finalize();
            return kedr_fail(KEDR_ERR_INVALID, "bench flow over MPI ranks runs the yardsticks "
                             "alone: give --solvers hypre,petsc (or one of them) and --only "
                             "poisson; kedr's own rows run in one process");
        }
#ifdef KEDR_BENCH_PETSC
        PetscInitializeNoArguments();
#endif
#ifdef KEDR_BENCH_HYPRE
        HYPRE_Init();
#endif
    }
#else
    int yard = 0;
#endif
    if (fb_rank == 0)
        printf("kedr bench flow on %s (%s): relative residual %.0e from x = 0, Neumann box, "
               "median of %d; yardsticks: %s\n", dev, kedr_backend_name(kedr_ctx_backend(ctx)),
               FB_TOL, repeats,
               !yard ? (cuda ? "none (cpu runs only)" : "none")
                     : fb_ranks > 1 ? "over the MPI ranks" : kedr_bench_flow_yardsticks());
    kedr_status s = KEDR_OK;
    for (int d = 0; d < 2 && do_poisson && s == KEDR_OK; d++) {
        int dims = d ? 3 : 2, n = d ? n3 : n2;
        problem p;
        KEDR_TRY(make_problem(&p, dims, n));
        double *dx = NULL, *db = NULL, *hx = NULL;
        if (fb_rank == 0) {
            hx = malloc(p.N * sizeof *hx);
            s = hx ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "bench flow: %zu bytes", p.N * 8);
        }
        if (s == KEDR_OK && kedr_rows)
            s = kedr_alloc(ctx, (void **)&dx, p.N * sizeof *dx);
        if (s == KEDR_OK && kedr_rows)
            s = kedr_alloc(ctx, (void **)&db, p.N * sizeof *db);
        if (s == KEDR_OK && kedr_rows)
            s = kedr_upload(ctx, db, p.b, p.N * sizeof *db);
        for (int v = 0; v < NVARIANTS && s == KEDR_OK && kedr_rows; v++) {
            int fft = variants[v].method == KEDR_FLOW_METHOD_FFT;
            if ((fft_only && !fft) || !bench_in_list(o->solvers, variants[v].name))
                continue;
#ifndef KEDR_HAVE_FFTW
            if (fft && !cuda)
                continue;
#endif
            row *r = &rows[nrows++];
            snprintf(r->grid, sizeof r->grid, dims == 2 ? "%d^2" : "%d^3", n);
            s = bench_variant(ctx, &p, &variants[v], repeats, dx, db, hx, r);
            if (s == KEDR_OK)
                print_row(r, 0);
#ifdef KEDR_HAVE_FFTW
            if (s == KEDR_OK && fft && cuda) { /* the cpu's FFTW solve beside cuFFT's */
                row *rc = &rows[nrows++];
                if ((s = bench_fft_cpu(&p, &variants[v], repeats, hx, r, rc)) == KEDR_OK)
                    print_row(rc, 0);
            }
#endif
        }
#if defined(KEDR_BENCH_HYPRE) || defined(KEDR_BENCH_PETSC)
        if (yard) {
            int ax = dims == 3 ? 2 : 1;
            if (s == KEDR_OK && p.n[ax] < fb_ranks)
                s = kedr_fail(KEDR_ERR_INVALID, "bench flow: the %s grid has %d planes to split "
                              "over %d ranks: give a larger grid or fewer ranks",
                              dims == 2 ? "2D" : "3D", p.n[ax], fb_ranks);
            if (s == KEDR_OK && p.N > (size_t)INT32_MAX)
                s = kedr_fail(KEDR_ERR_INVALID, "bench flow: the yardsticks take at most 2^31 - 1 "
                              "unknowns (this grid: %zu)", p.N);
            int bad = s != KEDR_OK, any = bad; /* every rank goes on, or none */
            MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (any && s == KEDR_OK)
                s = kedr_fail(KEDR_ERR_INVALID, "bench flow: another rank failed");
#ifdef KEDR_BENCH_HYPRE
            if (bench_in_list(o->solvers, "hypre")) {
                row *r = &rows[nrows++];
                snprintf(r->grid, sizeof r->grid, dims == 2 ? "%d^2" : "%d^3", n);
                if (s == KEDR_OK && (s = hypre_run(&p, repeats, hx, r)) == KEDR_OK)
                    print_row(r, 0);
            }
#endif
#ifdef KEDR_BENCH_PETSC
            if (bench_in_list(o->solvers, "petsc")) {
                row *q = &rows[nrows++];
                snprintf(q->grid, sizeof q->grid, dims == 2 ? "%d^2" : "%d^3", n);
                if (s == KEDR_OK && (s = petsc_run(&p, repeats, hx, q)) == KEDR_OK)
                    print_row(q, 0);
            }
#endif
        }
#endif
        kedr_free(ctx, dx);
        kedr_free(ctx, db);
        free(hx);
        free(p.b);
    }
#if defined(KEDR_BENCH_HYPRE) || defined(KEDR_BENCH_PETSC)
    if (yard) {
#ifdef KEDR_BENCH_HYPRE
        HYPRE_Finalize();
#endif
#ifdef KEDR_BENCH_PETSC
        PetscFinalize();
#endif
        if (we_init)
            MPI_Finalize();
    }
#endif
    if (fb_rank > 0) /* the other ranks' part ends with the yardsticks */
        return s;
    step_from = nrows;
    for (int d = 0; d < 2 && do_step && s == KEDR_OK; d++) {
        row *r = &rows[nrows++];
        int n = d ? (n3 > 128 ? n3 / 2 : n3) : n2 / 2;
        snprintf(r->grid, sizeof r->grid, d ? "%d^3" : "%d^2", n);
        if ((s = bench_step(ctx, d ? 3 : 2, n, steps, r)) == KEDR_OK)
            print_row(r, 1);
    }
    if (s != KEDR_OK || !o->json)
        return s;
    char date[32];
    bench_utc_date(date, sizeof date);
    bench_meta m = {"flow", dev, kedr_backend_name(kedr_ctx_backend(ctx)), date,
                    bench_commit(KEDR_GIT_COMMIT)};
    kedr_file_writer w;
    KEDR_TRY(bench_json_open(&w, o->json, &m));
    FILE *fp = KEDR_FILE(&w);
    fprintf(fp, ",\n  \"tolerance\": %g, \"repeats\": %d,\n  \"results\": [", FB_TOL, repeats);
    for (int i = 0; i < nrows; i++)
        json_row(fp, &rows[i], i == 0, i >= step_from);
    return bench_json_close(&w);
}
