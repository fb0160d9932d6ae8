/* Geometric multigrid for the cell-centred Poisson problem (cpu): each level halves every axis
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
#include "flow/poisson_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t cell(const flow_level *L, int i, int j, int k)
{
    return (size_t)i + (size_t)L->n[0] * ((size_t)j + (size_t)L->n[1] * (size_t)k);
}

/* The transfer tables of axis a between fine level F and coarse level C. */
static kedr_status axis_tables(flow_level *F, const flow_level *C, int a)
{
    int nf = F->n[a], nc = C->n[a];
    F->p_idx[a] = malloc(2 * (size_t)nf * sizeof(int));
    F->p_w[a] = malloc(2 * (size_t)nf * sizeof(double));
    F->r_cnt[a] = calloc((size_t)nc, sizeof(int));
    F->r_idx[a] = malloc(4 * (size_t)nc * sizeof(int));
    F->r_w[a] = malloc(4 * (size_t)nc * sizeof(double));
    if (!F->p_idx[a] || !F->p_w[a] || !F->r_cnt[a] || !F->r_idx[a] || !F->r_w[a])
        return kedr_fail(KEDR_ERR_NOMEM, "multigrid transfer tables of %d cells", nf);
    for (int f = 0; f < nf; f++) {
        int *idx = F->p_idx[a] + 2 * f;
        double *w = F->p_w[a] + 2 * f;
        if (!F->coarsened[a]) {
            idx[0] = idx[1] = f;
            w[0] = 1;
            w[1] = 0;
            continue;
        }
        int I = f / 2, other = f % 2 ? I + 1 : I - 1;
        if (other < 0 || other >= nc)
            other = F->per[a] ? (other + nc) % nc : I;
        idx[0] = I;
        idx[1] = other;
        w[0] = 0.75;
        w[1] = 0.25;
    }
    /* the transpose, fine cells merged per coarse cell */
    for (int f = 0; f < nf; f++)
        for (int s = 0; s < 2; s++) {
            int I = F->p_idx[a][2 * f + s];
            double w = F->p_w[a][2 * f + s];
            if (w == 0)
                continue;
            int *cnt = &F->r_cnt[a][I], e = 0;
            while (e < *cnt && F->r_idx[a][4 * I + e] != f)
                e++;
            if (e == *cnt) {
                if (*cnt == 4)
                    return kedr_fail(KEDR_ERR_INVALID, "multigrid: more than 4 fine cells for "
                                     "one coarse cell"); /* cannot happen with 2:1 coarsening */
                F->r_idx[a][4 * I + e] = f;
                F->r_w[a][4 * I + e] = 0;
                (*cnt)++;
            }
            F->r_w[a][4 * I + e] += F->coarsened[a] ? 0.5 * w : w;
        }
    return KEDR_OK;
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
                size_t c = cell(L, i, j, k);
                flow_nb nb;
                flow_neighbours(L, i, j, k, c, &nb);
                A[c * N + c] += L->diag[c];
                for (int m = 0; m < 6; m++)
                    A[c * N + nb.at[m]] -= nb.w[m];
                s += L->diag[c];
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
    ps->chol = A;
    return KEDR_OK;
}

kedr_status flow_mg_setup(kedr_flow_poisson *ps)
{
    while (ps->nlevels < FLOW_MAX_LEVELS) {
        flow_level *F = &ps->lv[ps->nlevels - 1], *C = &ps->lv[ps->nlevels];
        int any = 0;
        memset(C, 0, sizeof *C);
        C->N = 1;
        for (int a = 0; a < 3; a++) {
            /* a periodic axis only to an even size (or 1): red-black needs two colours */
            F->coarsened[a] = F->n[a] > 1 && F->n[a] % 2 == 0 &&
                              (!F->per[a] || F->n[a] == 2 || F->n[a] % 4 == 0);
            any |= F->coarsened[a];
            C->n[a] = F->coarsened[a] ? F->n[a] / 2 : F->n[a];
            C->per[a] = F->per[a];
            C->ih2[a] = C->n[a] > 1 ? (F->coarsened[a] ? F->ih2[a] / 4 : F->ih2[a]) : 0.0;
            C->N *= (size_t)C->n[a];
        }
        if (!any || F->N <= 8)
            break;
        ps->nlevels++;
        double **v[] = {&C->diag, &C->idiag, &C->x, &C->b, &C->r};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            KEDR_TRY(kedr_alloc(ps->ctx, (void **)v[i], C->N * sizeof(double)));
        flow_level_diag(C);
        for (int a = 0; a < 3; a++)
            KEDR_TRY(axis_tables(F, C, a));
    }
    memset(ps->lv[ps->nlevels - 1].coarsened, 0, sizeof ps->lv[0].coarsened);
    return dense_setup(ps);
}

void flow_mg_free(kedr_flow_poisson *ps)
{
    for (int l = 0; l < FLOW_MAX_LEVELS; l++) {
        flow_level *L = &ps->lv[l];
        for (int a = 0; a < 3; a++) {
            free(L->p_idx[a]);
            free(L->p_w[a]);
            free(L->r_cnt[a]);
            free(L->r_idx[a]);
            free(L->r_w[a]);
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
    free(ps->chol);
    ps->chol = NULL;
}

/* b_coarse = R r_fine. */
static void restrict_to(const flow_level *F, const flow_level *C, const double *r, double *b)
{
#pragma omp parallel for collapse(2) schedule(static) if (F->N >= FLOW_OMP_MIN)
    for (int K = 0; K < C->n[2]; K++)
        for (int J = 0; J < C->n[1]; J++)
            for (int I = 0; I < C->n[0]; I++) {
                double s = 0;
                for (int ek = 0; ek < F->r_cnt[2][K]; ek++) {
                    int k = F->r_idx[2][4 * K + ek];
                    double wk = F->r_w[2][4 * K + ek];
                    for (int ej = 0; ej < F->r_cnt[1][J]; ej++) {
                        int j = F->r_idx[1][4 * J + ej];
                        double wjk = wk * F->r_w[1][4 * J + ej];
                        const double *row = r + cell(F, 0, j, k);
                        for (int ei = 0; ei < F->r_cnt[0][I]; ei++)
                            s += wjk * F->r_w[0][4 * I + ei] * row[F->r_idx[0][4 * I + ei]];
                    }
                }
                b[cell(C, I, J, K)] = s;
            }
}

/* x_fine += P x_coarse. */
static void prolong_add(const flow_level *F, const flow_level *C, const double *xc, double *x)
{
#pragma omp parallel for collapse(2) schedule(static) if (F->N >= FLOW_OMP_MIN)
    for (int k = 0; k < F->n[2]; k++)
        for (int j = 0; j < F->n[1]; j++)
            for (int i = 0; i < F->n[0]; i++) {
                double s = 0;
                for (int sk = 0; sk < 2; sk++) {
                    double wk = F->p_w[2][2 * k + sk];
                    if (wk == 0)
                        continue;
                    int K = F->p_idx[2][2 * k + sk];
                    for (int sj = 0; sj < 2; sj++) {
                        double wjk = wk * F->p_w[1][2 * j + sj];
                        if (wjk == 0)
                            continue;
                        const double *row = xc + cell(C, 0, F->p_idx[1][2 * j + sj], K);
                        s += wjk * (F->p_w[0][2 * i] * row[F->p_idx[0][2 * i]] +
                                    F->p_w[0][2 * i + 1] * row[F->p_idx[0][2 * i + 1]]);
                    }
                }
                x[cell(F, i, j, k)] += s;
            }
}

static void coarse_solve(const kedr_flow_poisson *ps, const flow_level *L, const double *b,
                         double *x)
{
    size_t N = L->N;
    if (N == 1) {
        x[0] = 0;
        return;
    }
    if (ps->chol) {
        const double *A = ps->chol;
        double mean = 0;
        for (size_t i = 0; i < N; i++)
            mean += b[i];
        mean /= (double)N;
        for (size_t i = 0; i < N; i++) { /* L y = b - mean */
            double v = b[i] - mean;
            for (size_t k = 0; k < i; k++)
                v -= A[i * N + k] * x[k];
            x[i] = v / A[i * N + i];
        }
        for (size_t i = N; i-- > 0;) { /* L^T x = y */
            double v = x[i];
            for (size_t k = i + 1; k < N; k++)
                v -= A[k * N + i] * x[k];
            x[i] = v / A[i * N + i];
        }
        return;
    }
    memset(x, 0, N * sizeof *x);
    for (int s = 0; s < ps->coarse_sweeps; s++) {
        flow_gs_colour(L, x, b, 0);
        flow_gs_colour(L, x, b, 1);
    }
    for (int s = 0; s < ps->coarse_sweeps; s++) {
        flow_gs_colour(L, x, b, 1);
        flow_gs_colour(L, x, b, 0);
    }
}

static void vcycle(kedr_flow_poisson *ps, int l, const double *b, double *x)
{
    const flow_level *L = &ps->lv[l];
    if (l == ps->nlevels - 1) {
        coarse_solve(ps, L, b, x);
        return;
    }
    const flow_level *C = &ps->lv[l + 1];
    memset(x, 0, L->N * sizeof *x);
    for (int s = 0; s < ps->o.steps; s++) {
        flow_gs_colour(L, x, b, 0);
        flow_gs_colour(L, x, b, 1);
    }
    flow_residual(L, x, b, L->r);
    restrict_to(L, C, L->r, C->b);
    vcycle(ps, l + 1, C->b, C->x);
    prolong_add(L, C, C->x, x);
    for (int s = 0; s < ps->o.steps; s++) {
        flow_gs_colour(L, x, b, 1);
        flow_gs_colour(L, x, b, 0);
    }
}

void flow_mg_vcycle(kedr_flow_poisson *ps, const double *r, double *z)
{
    vcycle(ps, 0, r, z);
}
