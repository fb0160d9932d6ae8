/* Geometric multigrid for the cell-centred Poisson problem: each level halves every axis
 * whose cell count is even (an odd axis is kept: semi-coarsening), the operator is discretized
 * again on the coarse grid (h doubled), prolongation is the cell-centred (bi/tri)linear
 * interpolation (weights 3/4 and 1/4 per axis, the coarse cell itself past a Neumann end, the
 * other side across a periodic seam), restriction is its transpose scaled by 1/2 per halved
 * axis (a weighted average), and the smoother is red-black Gauss–Seidel: red then black before
 * the coarse correction, black then red after it, so that the V-cycle is a symmetric operator
 * and can precondition conjugate gradients. The coarsest grid is solved exactly (dense Cholesky
 * of A + s 1 1^T / N, which fixes the null space) up to FLOW_DENSE_MAX cells, else by a fixed
 * number of symmetric sweeps (grids whose sizes have few factors of 2). */
#include "core/internal.h"
#include "flow/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The transfer tables of one axis of nf fine and nc coarse cells, on the host (malloc'ed):
 * prolongation p_idx/p_w (2 a fine cell), restriction r_cnt (a coarse cell), r_idx/r_w (4 a
 * coarse cell). */
kedr_status flow_mg_axis_host(int nf, int nc, int coarsened, int per, flow_axis_tables *t)
{
    int *p_idx = malloc(2 * (size_t)nf * sizeof(int)), *r_cnt = calloc((size_t)nc, sizeof(int));
    int *r_idx = calloc(4 * (size_t)nc, sizeof(int));
    double *p_w = malloc(2 * (size_t)nf * sizeof(double));
    double *r_w = calloc(4 * (size_t)nc, sizeof(double));
    *t = (flow_axis_tables){p_idx, p_w, r_cnt, r_idx, r_w};
    kedr_status s = KEDR_OK;
    if (!p_idx || !p_w || !r_cnt || !r_idx || !r_w)
        s = kedr_fail(KEDR_ERR_NOMEM, "multigrid transfer tables of %d cells", nf);
    for (int f = 0; f < nf && s == KEDR_OK; f++) {
        int *idx = p_idx + 2 * f;
        double *w = p_w + 2 * f;
        if (!coarsened) {
            idx[0] = idx[1] = f;
            w[0] = 1;
            w[1] = 0;
            continue;
        }
        int I = f / 2, other = f % 2 ? I + 1 : I - 1;
        if (other < 0 || other >= nc)
            other = per ? (other + nc) % nc : I;
        idx[0] = I;
        idx[1] = other;
        w[0] = 0.75;
        w[1] = 0.25;
    }
    /* the transpose, fine cells merged per coarse cell */
    for (int f = 0; f < nf && s == KEDR_OK; f++)
        for (int e2 = 0; e2 < 2; e2++) {
            int I = p_idx[2 * f + e2];
            double w = p_w[2 * f + e2];
            if (w == 0)
                continue;
            int *cnt = &r_cnt[I], e = 0;
            while (e < *cnt && r_idx[4 * I + e] != f)
                e++;
            if (e == *cnt) {
                if (*cnt == 4) { /* cannot happen with 2:1 coarsening */
                    s = kedr_fail(KEDR_ERR_INVALID, "multigrid: more than 4 fine cells for one "
                                  "coarse cell");
                    break;
                }
                r_idx[4 * I + e] = f;
                r_w[4 * I + e] = 0;
                (*cnt)++;
            }
            r_w[4 * I + e] += coarsened ? 0.5 * w : w;
        }
    if (s != KEDR_OK)
        flow_mg_axis_free(t);
    return s;
}

void flow_mg_axis_free(flow_axis_tables *t)
{
    free(t->p_idx);
    free(t->p_w);
    free(t->r_cnt);
    free(t->r_idx);
    free(t->r_w);
    memset(t, 0, sizeof *t);
}

/* Copies host tables (nf fine, nc coarse cells) to axis a of level F in the context's memory. */
kedr_status flow_mg_axis_upload(kedr_ctx *ctx, flow_level *F, int a, int nf, int nc,
                                const flow_axis_tables *t)
{
    struct {
        void **dst;
        const void *src;
        size_t bytes;
    } up[5] = {{(void **)&F->p_idx[a], t->p_idx, 2 * (size_t)nf * sizeof(int)},
               {(void **)&F->p_w[a], t->p_w, 2 * (size_t)nf * sizeof(double)},
               {(void **)&F->r_cnt[a], t->r_cnt, (size_t)nc * sizeof(int)},
               {(void **)&F->r_idx[a], t->r_idx, 4 * (size_t)nc * sizeof(int)},
               {(void **)&F->r_w[a], t->r_w, 4 * (size_t)nc * sizeof(double)}};
    for (int u = 0; u < 5; u++) {
        /* at least one element: a slab's coarse part may be empty over ranks */
        KEDR_TRY(kedr_alloc(ctx, up[u].dst, up[u].bytes ? up[u].bytes : sizeof(double)));
        KEDR_TRY(kedr_upload(ctx, *up[u].dst, up[u].src, up[u].bytes));
    }
    return KEDR_OK;
}

/* The transfer tables of axis a between fine level F and coarse level C. */
static kedr_status axis_tables(kedr_ctx *ctx, flow_level *F, const flow_level *C, int a)
{
    flow_axis_tables t;
    KEDR_TRY(flow_mg_axis_host(F->n[a], C->n[a], F->coarsened[a], F->per[a], &t));
    kedr_status s = flow_mg_axis_upload(ctx, F, a, F->n[a], C->n[a], &t);
    flow_mg_axis_free(&t);
    return s;
}

int flow_mg_next(const int n[3], const int per[3], int coarsened[3], int nc[3])
{
    int any = 0;
    size_t N = 1;
    for (int a = 0; a < 3; a++) {
        /* a periodic axis only to an even size (or 1): red-black needs two colours */
        coarsened[a] = n[a] > 1 && n[a] % 2 == 0 && (!per[a] || n[a] == 2 || n[a] % 4 == 0);
        any |= coarsened[a];
        nc[a] = coarsened[a] ? n[a] / 2 : n[a];
        N *= (size_t)n[a];
    }
    return any && N > 8;
}

static kedr_status dense_setup(kedr_flow_poisson *ps)
{
    flow_level *L = &ps->lv[ps->nlevels - 1];
    size_t N = L->N;
    if (N == 1)
        return KEDR_OK; /* A = 0: the zero-mean solution is 0 */
    if (N > FLOW_DENSE_MAX) {
        int m = L->n[0] > L->n[1] ? L->n[0] : L->n[1];
        m = m > L->n[2] ? m : L->n[2];
        ps->coarse_sweeps = 2 * m < 200 ? 2 * m : 200;
        return KEDR_OK;
    }
    double *A = calloc(N * N, sizeof *A);
    if (!A)
        return kedr_fail(KEDR_ERR_NOMEM, "multigrid coarsest grid: %zu bytes", N * N * 8);
    double s = 0;
    for (int k = 0; k < L->n[2]; k++)
        for (int j = 0; j < L->n[1]; j++)
            for (int i = 0; i < L->n[0]; i++) {
                size_t c = flow_index(L, i, j, k);
                flow_nb nb;
                flow_neighbours(L, i, j, k, c, &nb);
                for (int m = 0; m < 6; m++) {
                    A[c * N + c] += nb.w[m];
                    A[c * N + nb.at[m]] -= nb.w[m];
                    s += nb.w[m];
                }
            }
    s /= (double)N * (double)N;
    for (size_t e = 0; e < N * N; e++)
        A[e] += s;
    /* Cholesky, lower triangle */
    for (size_t j = 0; j < N; j++) {
        double d = A[j * N + j];
        for (size_t k = 0; k < j; k++)
            d -= A[j * N + k] * A[j * N + k];
        if (!(d > 0)) {
            free(A);
            return kedr_fail(KEDR_ERR_INVALID, "multigrid: the coarsest matrix is not positive "
                             "definite (pivot %zu)", j);
        }
        d = sqrt(d);
        A[j * N + j] = d;
        for (size_t i = j + 1; i < N; i++) {
            double v = A[i * N + j];
            for (size_t k = 0; k < j; k++)
                v -= A[i * N + k] * A[j * N + k];
            A[i * N + j] = v / d;
        }
    }
    /* M = (A + s)^-1 (I - 1 1^T / N): column k of the inverse from L L^T m = e_k, then each
     * row less its mean (the right-hand side's mean taken out, as the singular A needs) */
    double *M = malloc(N * N * sizeof *M), *y = malloc(N * sizeof *y);
    if (!M || !y) {
        free(A);
        free(M);
        free(y);
        return kedr_fail(KEDR_ERR_NOMEM, "multigrid coarsest grid: %zu bytes", N * N * 8);
    }
    for (size_t c = 0; c < N; c++) {
        for (size_t i = 0; i < N; i++) { /* L y = e_c */
            double v = i == c ? 1.0 : 0.0;
            for (size_t k = 0; k < i; k++)
                v -= A[i * N + k] * y[k];
            y[i] = v / A[i * N + i];
        }
        for (size_t i = N; i-- > 0;) { /* L^T m = y */
            double v = y[i];
            for (size_t k = i + 1; k < N; k++)
                v -= A[k * N + i] * y[k];
            y[i] = v / A[i * N + i];
        }
        for (size_t i = 0; i < N; i++)
            M[i * N + c] = y[i];
    }
    for (size_t i = 0; i < N; i++) {
        double mean = 0;
        for (size_t c = 0; c < N; c++)
            mean += M[i * N + c];
        mean /= (double)N;
        for (size_t c = 0; c < N; c++)
            M[i * N + c] -= mean;
    }
    free(A);
    free(y);
    kedr_status st = kedr_alloc(ps->ctx, (void **)&ps->coarse_inv, N * N * sizeof *M);
    if (st == KEDR_OK)
        st = kedr_upload(ps->ctx, ps->coarse_inv, M, N * N * sizeof *M);
    free(M);
    return st;
}

kedr_status flow_mg_setup(kedr_flow_poisson *ps)
{
    while (ps->nlevels < FLOW_MAX_LEVELS) {
        flow_level *F = &ps->lv[ps->nlevels - 1], *C = &ps->lv[ps->nlevels];
        memset(C, 0, sizeof *C);
        if (!flow_mg_next(F->n, F->per, F->coarsened, C->n))
            break;
        C->N = 1;
        for (int a = 0; a < 3; a++) {
            C->per[a] = F->per[a];
            C->ih2[a] = C->n[a] > 1 ? (F->coarsened[a] ? F->ih2[a] / 4 : F->ih2[a]) : 0.0;
            C->N *= (size_t)C->n[a];
        }
        ps->nlevels++;
        double **v[] = {&C->diag, &C->idiag, &C->x, &C->b, &C->r};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            KEDR_TRY(kedr_alloc(ps->ctx, (void **)v[i], C->N * sizeof(double)));
        KEDR_TRY(flow_level_diag(ps->ctx, C));
        for (int a = 0; a < 3; a++)
            KEDR_TRY(axis_tables(ps->ctx, F, C, a));
    }
    memset(ps->lv[ps->nlevels - 1].coarsened, 0, sizeof ps->lv[0].coarsened);
    return dense_setup(ps);
}

void flow_mg_free(kedr_flow_poisson *ps)
{
    flow_rk_mg_free(ps);
    for (int l = 0; l < FLOW_MAX_LEVELS; l++) {
        flow_level *L = &ps->lv[l];
        for (int a = 0; a < 3; a++) {
            void *v[5] = {L->p_idx[a], L->p_w[a], L->r_cnt[a], L->r_idx[a], L->r_w[a]};
            for (int i = 0; i < 5; i++)
                kedr_free(ps->ctx, v[i]);
            L->p_idx[a] = L->r_cnt[a] = L->r_idx[a] = NULL;
            L->p_w[a] = L->r_w[a] = NULL;
        }
        if (l > 0) {
            double *v[] = {L->diag, L->idiag, L->x, L->b, L->r};
            for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
                kedr_free(ps->ctx, v[i]);
            L->diag = L->idiag = L->x = L->b = L->r = NULL;
        }
    }
    kedr_free(ps->ctx, ps->coarse_inv);
    ps->coarse_inv = NULL;
    kedr_replay_clear(&ps->vc);
}

/* The coarsest grid: the dense inverse's product (the grid is small), or symmetric sweeps. */
static kedr_status coarse_solve(kedr_flow_poisson *ps, const flow_level *L, const double *b,
                                double *x)
{
    size_t N = L->N;
    if (N == 1)
        return kedr_memset(ps->ctx, x, 0, sizeof *x);
    if (ps->coarse_inv)
        return flow_op_dense(ps->ctx, N, ps->coarse_inv, b, x);
    KEDR_TRY(kedr_memset(ps->ctx, x, 0, N * sizeof *x));
    for (int s = 0; s < ps->coarse_sweeps; s++) {
        KEDR_TRY(flow_op_gs(ps->ctx, L, x, b, 0));
        KEDR_TRY(flow_op_gs(ps->ctx, L, x, b, 1));
    }
    for (int s = 0; s < ps->coarse_sweeps; s++) {
        KEDR_TRY(flow_op_gs(ps->ctx, L, x, b, 1));
        KEDR_TRY(flow_op_gs(ps->ctx, L, x, b, 0));
    }
    return KEDR_OK;
}

/* One rank's V-cycle; its parts timed as the ranks' are (flow_rk_part_*: with
 * KEDR_FLOW_PROF=1 only, here). */
static kedr_status vcycle(kedr_flow_poisson *ps, int l, const double *b, double *x)
{
    const flow_level *L = &ps->lv[l];
    flow_part_mark m = flow_rk_part_begin(ps);
    if (l == ps->nlevels - 1) {
        KEDR_TRY(coarse_solve(ps, L, b, x));
        return flow_rk_part_end(ps, FLOW_PART_COARSE, m);
    }
    const flow_level *C = &ps->lv[l + 1];
    KEDR_TRY(kedr_memset(ps->ctx, x, 0, L->N * sizeof *x));
    for (int s = 0; s < ps->o.steps; s++) {
        KEDR_TRY(flow_op_gs(ps->ctx, L, x, b, 0));
        KEDR_TRY(flow_op_gs(ps->ctx, L, x, b, 1));
    }
    KEDR_TRY(flow_rk_part_end(ps, FLOW_PART_SMOOTH, m));
    m = flow_rk_part_begin(ps);
    KEDR_TRY(flow_op_residual(ps->ctx, L, x, b, L->r));
    KEDR_TRY(flow_rk_part_end(ps, FLOW_PART_RESIDUAL, m));
    m = flow_rk_part_begin(ps);
    KEDR_TRY(flow_op_restrict(ps->ctx, L, C, L->r, C->b));
    KEDR_TRY(flow_rk_part_end(ps, FLOW_PART_TRANSFER, m));
    KEDR_TRY(vcycle(ps, l + 1, C->b, C->x));
    m = flow_rk_part_begin(ps);
    KEDR_TRY(flow_op_prolong_add(ps->ctx, L, C, C->x, x));
    KEDR_TRY(flow_rk_part_end(ps, FLOW_PART_TRANSFER, m));
    m = flow_rk_part_begin(ps);
    for (int s = 0; s < ps->o.steps; s++) {
        KEDR_TRY(flow_op_gs(ps->ctx, L, x, b, 1));
        KEDR_TRY(flow_op_gs(ps->ctx, L, x, b, 0));
    }
    return flow_rk_part_end(ps, FLOW_PART_SMOOTH, m);
}

typedef struct {
    kedr_flow_poisson *ps;
    const double *r;
    double *z;
} vcycle_args;

static kedr_status vcycle_work(void *arg)
{
    vcycle_args *a = arg;
    return vcycle(a->ps, 0, a->r, a->z);
}

/* On one rank on cuda (KEDR_FLOW_MG_GRAPH=1, and not timing parts: KEDR_FLOW_PROF=1
 * synchronises inside) the V-cycle's kernels, about a dozen a level, are recorded once for
 * each (r, z) and replayed as one CUDA graph: the coarse levels' kernels are short, and their
 * launches, not their cells, set their time. The gathered coarse levels of multigrid over
 * ranks are such a V-cycle (mg_ranks.c). */
kedr_status flow_mg_vcycle(kedr_flow_poisson *ps, const double *r, double *z)
{
    if (ps->rk)
        return flow_rk_vcycle(ps, r, z);
    if (!ps->graph || !KEDR_IS_CUDA(ps->ctx) || flow_prof())
        return vcycle(ps, 0, r, z);
    vcycle_args a = {ps, r, z};
    uintptr_t key[4] = {(uintptr_t)r, (uintptr_t)z, 0, 0};
    return kedr_replay_run(ps->ctx, &ps->vc, key, vcycle_work, &a);
}
