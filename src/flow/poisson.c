/* The pressure Poisson solvers: A = -Laplacian (second order, Neumann or periodic ends),
 * preconditioned conjugate gradients in the form of Boreskov et al. (12.21)-(12.27) with
 * m-step Jacobi (12.29), red-black symmetric Gauss–Seidel (12.30)-(12.36) and the approximate
 * inverse (12.37), and multigrid V-cycles (mg.c) as a preconditioner or alone.
 *
 * The null space: A's is the constants. b is replaced by b - mean(b) (the compatibility
 * condition of the Neumann problem), every preconditioned residual has its mean removed (so
 * that the search directions stay in A's range) and x is returned with zero mean. */
#include "core/internal.h"
#include "flow/ops.h"
#include "flow/fft.h"
#include "kedr/comm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const precond_names[KEDR_FLOW_NPRECONDS] = {"none", "jacobi", "ssor", "ainv",
                                                                "mg"};

const char *kedr_flow_precond_name(kedr_flow_precond p)
{
    return (unsigned)p < KEDR_FLOW_NPRECONDS ? precond_names[p] : "?";
}

kedr_status kedr_flow_precond_parse(const char *text, kedr_flow_precond *p)
{
    for (int i = 0; i < KEDR_FLOW_NPRECONDS; i++)
        if (strcmp(text, precond_names[i]) == 0) {
            *p = (kedr_flow_precond)i;
            return KEDR_OK;
        }
    return kedr_fail(KEDR_ERR_INVALID, "preconditioner '%s': expected none, jacobi, ssor, ainv "
                     "or mg", text);
}

void kedr_flow_poisson_defaults(kedr_flow_poisson_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int a = 0; a < 3; a++) {
        o->n[a] = 1;
        o->h[a] = 1.0;
    }
    o->method = KEDR_FLOW_METHOD_PCG;
    o->precond = KEDR_FLOW_PC_MG;
    o->steps = 2;
    o->tol = 1e-8;
    o->max_iter = 1000;
}

int kedr_flow_backend_available(kedr_backend b)
{
    if (b == KEDR_BACKEND_CPU)
        return 1;
#ifdef KEDR_HAVE_CUDA
    return b == KEDR_BACKEND_CUDA && kedr_backend_available(KEDR_BACKEND_CUDA);
#else
    return 0;
#endif
}

/* ---- preconditioners ------------------------------------------------------------------- */

/* x -= mean(x) */
static kedr_status project_mean(kedr_flow_poisson *ps, const flow_level *L, double *x)
{
    double s;
    KEDR_TRY(flow_rk_sum(ps, L->N, x, &s));
    return flow_op_shift(ps->ctx, L->N, x, -s / (ps->rk ? ps->rk->gN : (double)L->N));
}

/* (12.28) with (12.29): z^{i+1} = z^i + omega D^-1 (r - A z^i) from z^0 = 0, m steps. */
static kedr_status jacobi(kedr_flow_poisson *ps, const double *r, double *z)
{
    const flow_level *L = &ps->lv[0];
    KEDR_TRY(flow_op_jacobi(ps->ctx, L, r, z, ps->omega, 0));
    for (int s = 1; s < ps->o.steps; s++) {
        KEDR_TRY(flow_rk_residual(ps, L, z, r, ps->t));
        KEDR_TRY(flow_op_jacobi(ps->ctx, L, ps->t, z, ps->omega, 1));
    }
    return KEDR_OK;
}

/* m steps of symmetric Gauss–Seidel in red-black order from z = 0: forward red, black; backward
 * black, red. The backward black half-sweep repeats the forward one (same red values), and the
 * next step's red repeats the backward red: m steps are 2m + 1 half-sweeps, red first. */
static kedr_status ssor(kedr_flow_poisson *ps, const double *r, double *z)
{
    const flow_level *L = &ps->lv[0];
    KEDR_TRY(kedr_memset(ps->ctx, z, 0, L->N * sizeof *z));
    for (int h = 0; h < 2 * ps->o.steps + 1; h++)
        KEDR_TRY(flow_op_gs(ps->ctx, L, z, r, h & 1));
    return KEDR_OK;
}

/* z = M^-1 r with its mean removed. */
static kedr_status precondition(kedr_flow_poisson *ps, const double *r, double *z)
{
    const flow_level *L = &ps->lv[0];
    switch (ps->o.precond) {
    case KEDR_FLOW_PC_NONE: KEDR_TRY(flow_op_copy(ps->ctx, z, r, L->N * sizeof *z)); break;
    case KEDR_FLOW_PC_JACOBI: KEDR_TRY(jacobi(ps, r, z)); break;
    case KEDR_FLOW_PC_SSOR: KEDR_TRY(ps->rk ? flow_rk_ssor(ps, r, z) : ssor(ps, r, z)); break;
    case KEDR_FLOW_PC_AINV:
        KEDR_TRY(ps->rk ? flow_rk_ainv(ps, r, ps->t, z) : flow_op_ainv(ps->ctx, L, r, ps->t, z));
        break;
    case KEDR_FLOW_PC_MG: KEDR_TRY(flow_mg_vcycle(ps, r, z)); break;
    default: abort(); /* create() admits only the kinds above */
    }
    return project_mean(ps, L, z);
}

/* ---- setup ----------------------------------------------------------------------------- */

kedr_status flow_level_diag(kedr_ctx *ctx, flow_level *L)
{
    double *d = malloc(2 * L->N * sizeof *d);
    if (!d)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: %zu bytes of host memory", 16 * L->N);
    for (int k = 0; k < L->n[2]; k++)
        for (int j = 0; j < L->n[1]; j++)
            for (int i = 0; i < L->n[0]; i++) {
                size_t c = flow_index(L, i, j, k);
                flow_nb nb;
                flow_neighbours(L, i, j, k, c, &nb);
                double s = 0;
                for (int m = 0; m < 6; m++)
                    s += nb.w[m];
                d[c] = s;
                d[L->N + c] = s > 0 ? 1.0 / s : 0.0;
            }
    kedr_status s = kedr_upload(ctx, L->diag, d, L->N * sizeof *d);
    if (s == KEDR_OK)
        s = kedr_upload(ctx, L->idiag, d + L->N, L->N * sizeof *d);
    free(d);
    return s;
}

static kedr_status check_opts(const kedr_flow_poisson_opts *o)
{
    const char *fn = "kedr_flow_poisson_create";
    double cells = 1;
    for (int a = 0; a < 3; a++) {
        if (o->n[a] < 1)
            return kedr_fail(KEDR_ERR_INVALID, "%s: n[%d] = %d: expected at least 1", fn, a,
                             o->n[a]);
        if (!(o->h[a] > 0) || !isfinite(o->h[a]))
            return kedr_fail(KEDR_ERR_INVALID, "%s: h[%d] = %g: expected a positive size", fn, a,
                             o->h[a]);
        cells *= o->n[a];
    }
    if (cells > 4e9)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %.3g cells: at most 4e9", fn, cells);
    if (o->method != KEDR_FLOW_METHOD_PCG && o->method != KEDR_FLOW_METHOD_MG &&
        o->method != KEDR_FLOW_METHOD_FFT)
        return kedr_fail(KEDR_ERR_INVALID, "%s: unknown method %d", fn, (int)o->method);
    if ((unsigned)o->precond >= KEDR_FLOW_NPRECONDS)
        return kedr_fail(KEDR_ERR_INVALID, "%s: unknown preconditioner %d", fn, (int)o->precond);
    int max_steps = o->method == KEDR_FLOW_METHOD_PCG && o->precond == KEDR_FLOW_PC_JACOBI ? 4 : 8;
    if (o->steps < 1 || o->steps > max_steps)
        return kedr_fail(KEDR_ERR_INVALID, "%s: steps = %d: expected 1 to %d", fn, o->steps,
                         max_steps);
    if (!(o->omega >= 0 && o->omega < 2))
        return kedr_fail(KEDR_ERR_INVALID, "%s: omega = %g: expected 0 (default) or (0, 2)", fn,
                         o->omega);
    if (!(o->tol >= 0 && o->tol < 1) || !(o->atol >= 0) || (o->tol == 0 && o->atol == 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: tol = %g, atol = %g: expected tol in [0, 1), "
                         "atol >= 0, not both 0", fn, o->tol, o->atol);
    if (o->max_iter < 1)
        return kedr_fail(KEDR_ERR_INVALID, "%s: max_iter = %d: expected at least 1", fn,
                         o->max_iter);
    /* Red-black orderings need two colours: an odd periodic axis makes a cell touch its own
     * colour across the seam. */
    int redblack = o->method == KEDR_FLOW_METHOD_MG ||
                   (o->method == KEDR_FLOW_METHOD_PCG &&
                    (o->precond == KEDR_FLOW_PC_SSOR || o->precond == KEDR_FLOW_PC_MG));
    for (int a = 0; a < 3; a++)
        if (redblack && o->periodic[a] && o->n[a] > 1 && o->n[a] % 2)
            return kedr_fail(KEDR_ERR_INVALID, "%s: red-black %s needs an even number of cells "
                             "along a periodic axis (axis %c has %d): use jacobi or ainv", fn,
                             o->method == KEDR_FLOW_METHOD_MG || o->precond == KEDR_FLOW_PC_MG
                                 ? "multigrid smoothing" : "SSOR", "xyz"[a], o->n[a]);
    return KEDR_OK;
}

static kedr_status alloc_vec(kedr_flow_poisson *ps, double **v, size_t n)
{
    return kedr_alloc(ps->ctx, (void **)v, (n ? n : 1) * sizeof **v);
}

kedr_status kedr_flow_poisson_create(kedr_ctx *ctx, const kedr_flow_poisson_opts *o,
                                     kedr_flow_poisson **out)
{
    *out = NULL;
    if (!ctx || !o)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_flow_poisson_create: NULL argument");
    KEDR_TRY(check_opts(o));
    if (o->method == KEDR_FLOW_METHOD_FFT)
        KEDR_TRY(flow_fft_check(ctx)); /* cpu with FFTW, cuda with cuFFT (fft.c) */
    if (!kedr_flow_backend_available(kedr_ctx_backend(ctx)))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "kedr flow: the Poisson solvers run on the cpu "
                         "back end only in this build (asked for %s)",
                         kedr_backend_name(kedr_ctx_backend(ctx)));
    kedr_flow_poisson *ps = calloc(1, sizeof *ps);
    if (!ps)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_flow_poisson_create: %zu bytes", sizeof *ps);
    ps->ctx = ctx;
    ps->o = *o;
    ps->omega = o->omega > 0 ? o->omega : o->steps % 2 ? 1.0 : 0.8;
    kedr_status fs = flow_fuse_env(&ps->fuse, KEDR_IS_CUDA(ctx));
    if (fs == KEDR_OK)
        fs = flow_env_switch("KEDR_FLOW_MG_GRAPH", 1, "1 (a one-rank V-cycle recorded once as a "
                             "CUDA graph and replayed, the default) or 0 (launched kernel by "
                             "kernel)", &ps->graph);
    if (fs != KEDR_OK) {
        free(ps);
        return fs;
    }
    flow_level *L = &ps->lv[0];
    L->N = 1;
    for (int a = 0; a < 3; a++) {
        L->n[a] = o->n[a];
        L->per[a] = o->periodic[a] != 0;
        L->ih2[a] = o->n[a] > 1 ? 1.0 / (o->h[a] * o->h[a]) : 0.0;
        L->N *= (size_t)o->n[a];
    }
    ps->nlevels = 1;
    size_t N = L->N;
    kedr_status s = KEDR_OK;
    double **vecs[] = {&L->diag, &L->idiag, &L->r, &ps->r, &ps->z, &ps->p, &ps->q, &ps->t, &ps->bb};
    for (size_t v = 0; v < sizeof vecs / sizeof vecs[0] && s == KEDR_OK; v++)
        s = alloc_vec(ps, vecs[v], N);
    ps->history_cap = o->max_iter + 1;
    if (s == KEDR_OK && !(ps->history = malloc((size_t)ps->history_cap * sizeof(double))))
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr_flow_poisson_create: residual history of %d",
                      ps->history_cap);
    if (s == KEDR_OK) {
        s = flow_level_diag(ctx, L);
        if (s == KEDR_OK && o->method == KEDR_FLOW_METHOD_FFT)
            s = flow_fft_setup(ps);
        else
        if (s == KEDR_OK &&
                 (o->method == KEDR_FLOW_METHOD_MG || o->precond == KEDR_FLOW_PC_MG))
            s = flow_mg_setup(ps);
    }
    if (s != KEDR_OK) {
        kedr_flow_poisson_destroy(ps);
        return s;
    }
    *out = ps;
    return KEDR_OK;
}

void kedr_flow_poisson_destroy(kedr_flow_poisson *ps)
{
    if (!ps)
        return;
    flow_mg_free(ps);
    flow_fft_free(ps);
    flow_level *L = &ps->lv[0];
    double *vecs[] = {L->diag, L->idiag, L->r, ps->r, ps->z, ps->p, ps->q, ps->t, ps->bb};
    for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; v++)
        kedr_free(ps->ctx, vecs[v]);
    free(ps->history);
    flow_rk_free(ps);
    free(ps);
}

int kedr_flow_poisson_levels(const kedr_flow_poisson *ps, int coarsest[3])
{
    if (ps->rk && ps->rk->sub) /* over ranks: the split levels, then the gathered ones */
        return ps->rk->gather_at + kedr_flow_poisson_levels(ps->rk->sub, coarsest);
    if (coarsest)
        for (int a = 0; a < 3; a++)
            coarsest[a] = ps->lv[ps->nlevels - 1].n[a];
    return ps->nlevels;
}

kedr_status kedr_flow_poisson_apply(kedr_flow_poisson *ps, const double *x, double *y)
{
    return flow_rk_apply(ps, &ps->lv[0], x, y);
}

kedr_status kedr_flow_poisson_precondition(kedr_flow_poisson *ps, const double *x, double *y)
{
    const flow_level *L = &ps->lv[0];
    KEDR_TRY(flow_op_copy(ps->ctx, ps->bb, x, L->N * sizeof *x));
    KEDR_TRY(project_mean(ps, L, ps->bb));
    if (ps->o.method == KEDR_FLOW_METHOD_FFT) /* the exact inverse on A's range */
        return flow_fft_solve(ps, ps->bb, y);
    if (ps->o.method == KEDR_FLOW_METHOD_MG) {
        KEDR_TRY(flow_mg_vcycle(ps, ps->bb, y));
        return project_mean(ps, L, y);
    }
    return precondition(ps, ps->bb, y);
}

/* ---- the solvers ----------------------------------------------------------------------- */

/* The tolerance test; *rr is ||r||^2. */
static int converged(const kedr_flow_poisson *ps, double rr, double bnorm)
{
    double r = sqrt(rr);
    return r <= ps->o.tol * bnorm || r <= ps->o.atol;
}

/* (12.21)-(12.27), with alpha's sign as usual (x += alpha p, r -= alpha A p). */
static kedr_status pcg(kedr_flow_poisson *ps, double *x, const double *b, double bnorm,
                       kedr_flow_poisson_info *info)
{
    kedr_ctx *ctx = ps->ctx;
    const flow_level *L = &ps->lv[0];
    size_t N = L->N;
    double *r = ps->r, *z = ps->z, *p = ps->p, *q = ps->q;
    double rr, rz, pq;
    KEDR_TRY(flow_rk_residual(ps, L, x, b, r));
    KEDR_TRY(flow_rk_dot(ps, N, r, r, &rr));
    ps->history[info->history_len++] = sqrt(rr) / bnorm;
    if (converged(ps, rr, bnorm)) {
        info->converged = 1;
        return KEDR_OK;
    }
    KEDR_TRY(precondition(ps, r, z));
    KEDR_TRY(flow_rk_dot(ps, N, r, z, &rz));
    KEDR_TRY(flow_op_copy(ctx, p, z, N * sizeof *p));
    double rz0 = rz, rr0 = rr;
    int cheap = ps->o.cheap_check;
    for (int it = 1; it <= ps->o.max_iter; it++) {
        KEDR_TRY(flow_rk_apply(ps, L, p, q));
        KEDR_TRY(flow_rk_dot(ps, N, p, q, &pq));
        if (!(pq > 0) || !(rz > 0)) /* an indefinite preconditioner, or NaN in the input */
            break;
        double alpha = rz / pq;
        KEDR_TRY(flow_op_cg_update(ctx, N, x, r, p, q, alpha, cheap ? NULL : &rr));
        /* (r, r) of this slab: the sum over ranks, alone, or (fused) with (r, z) below: its
         * first use is after the preconditioner */
        int merge = ps->rk && !cheap && ps->fuse;
        if (ps->rk && !cheap && !merge)
            KEDR_TRY(kedr_comm_allreduce(ps->rk->comm, KEDR_F64, KEDR_OP_SUM, &rr, 1));
        info->iterations = it;
        KEDR_TRY(precondition(ps, r, z));
        double rz_new;
        if (merge)
            KEDR_TRY(flow_rk_dot_rr(ps, N, r, z, &rz_new, &rr));
        else
            KEDR_TRY(flow_rk_dot(ps, N, r, z, &rz_new));
        /* The seed's cheaper test: (z, r), which the next step needs anyway, scaled by its
         * first ratio to ||r||^2, against the tolerance; ||r|| only when that passes (and
         * every 16th step, for atol). */
        if (cheap && (rz_new <= rz0 / rr0 * (ps->o.tol * bnorm) * (ps->o.tol * bnorm) * 4 ||
                      it % 16 == 0))
            KEDR_TRY(flow_rk_dot(ps, N, r, r, &rr));
        else if (cheap)
            rr = NAN; /* not computed this iteration */
        ps->history[info->history_len++] = sqrt(rr) / bnorm;
        if (rr == rr && converged(ps, rr, bnorm)) {
            info->converged = 1;
            return KEDR_OK;
        }
        double beta = rz_new / rz;
        rz = rz_new;
        KEDR_TRY(flow_op_xpby(ctx, N, z, beta, p));
    }
    return KEDR_OK;
}

/* V-cycles alone: x += V(b - A x). */
static kedr_status mg_solve(kedr_flow_poisson *ps, double *x, const double *b, double bnorm,
                            kedr_flow_poisson_info *info)
{
    const flow_level *L = &ps->lv[0];
    size_t N = L->N;
    for (int it = 0;; it++) {
        double rr;
        KEDR_TRY(flow_rk_residual(ps, L, x, b, ps->r));
        KEDR_TRY(flow_rk_dot(ps, N, ps->r, ps->r, &rr));
        ps->history[info->history_len++] = sqrt(rr) / bnorm;
        if (converged(ps, rr, bnorm)) {
            info->converged = 1;
            return KEDR_OK;
        }
        if (it == ps->o.max_iter || !isfinite(rr))
            return KEDR_OK;
        KEDR_TRY(flow_mg_vcycle(ps, ps->r, ps->z));
        KEDR_TRY(flow_op_axpy(ps->ctx, N, 1.0, ps->z, x));
        info->iterations = it + 1;
    }
}

kedr_status kedr_flow_poisson_solve(kedr_flow_poisson *ps, double *x, const double *b,
                                    kedr_flow_poisson_info *info)
{
    kedr_flow_poisson_info dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    double t0 = kedr_wall_seconds();
    const flow_level *L = &ps->lv[0];
    size_t N = L->N;
    KEDR_TRY(flow_op_copy(ps->ctx, ps->bb, b, N * sizeof *b));
    KEDR_TRY(project_mean(ps, L, ps->bb));
    double bb;
    KEDR_TRY(flow_rk_dot(ps, N, ps->bb, ps->bb, &bb));
    double bnorm = sqrt(bb);
    info->rhs_norm = bnorm;
    info->history = ps->history;
    if (!isfinite(bnorm))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_flow_poisson_solve: the right-hand side holds "
                         "NaN or infinity");
    if (bnorm == 0 || (N == 1 && !ps->rk)) {
        KEDR_TRY(kedr_memset(ps->ctx, x, 0, N * sizeof *x));
        info->converged = 1;
        ps->history[info->history_len++] = 0;
        info->seconds = kedr_wall_seconds() - t0;
        return KEDR_OK;
    }
    KEDR_TRY(project_mean(ps, L, x));
    if (ps->o.method == KEDR_FLOW_METHOD_FFT) {
        KEDR_TRY(flow_fft_solve(ps, ps->bb, x));
        info->converged = 1; /* direct: the history holds the residual of the result */
    } else
    if (ps->o.method == KEDR_FLOW_METHOD_MG)
        KEDR_TRY(mg_solve(ps, x, ps->bb, bnorm, info));
    else
        KEDR_TRY(pcg(ps, x, ps->bb, bnorm, info));
    KEDR_TRY(project_mean(ps, L, x));
    /* the residual of the x returned */
    double rr;
    KEDR_TRY(flow_rk_residual(ps, L, x, ps->bb, ps->r));
    KEDR_TRY(flow_rk_dot(ps, N, ps->r, ps->r, &rr));
    info->residual = sqrt(rr) / bnorm;
    if (ps->o.method == KEDR_FLOW_METHOD_FFT)
        ps->history[info->history_len++] = info->residual;
    info->seconds = kedr_wall_seconds() - t0;
    return KEDR_OK;
}
