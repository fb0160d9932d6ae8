/* A sparse lower-triangular system L x = alpha b (Boreskov et al., "Parallel computing on GPU",
 * 2012, sec. 7.2): first the book's 4 x 4 example, L = [1; 2 3; 4 5 6; 7 8 9 1], b = [10 20 30
 * 40], alpha = 7, whose solution the book gives as x = [70, 0, -11.6667, -105]; then a large
 * random lower-triangular matrix with a known solution. The cpu solves by forward substitution
 * over the rows of the CSR matrix; the GPU by cuSPARSE's SpSV (the book's csrsv calls no longer
 * exist). Both are checked against the known solutions. */
#include "kedr/kedr.h"
#include "trsv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: example_sparse_trsv [--n N] [--per-row K]\n"
    "  solves the book's 4 x 4 system, then a random N x N lower-triangular system with up to K\n"
    "  entries a row below the diagonal (default N = 1000000, K = 8), on the cpu and, with a GPU,\n"
    "  by cuSPARSE SpSV; exits 1 unless every solution matches the known one\n";

typedef struct {
    int n, nnz;
    int *row_ptr, *col; /* CSR, zero-based, columns ascending in each row, diagonal last */
    double *val;
} csr;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* x = alpha L^-1 b, row by row: each x[i] needs the x[j] of the columns j < i of its row. */
static void forward_substitution(const csr *m, double alpha, const double *b, double *x)
{
    for (int i = 0; i < m->n; i++) {
        double s = alpha * b[i], diag = 0;
        for (int k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++) {
            if (m->col[k] < i)
                s -= m->val[k] * x[m->col[k]];
            else
                diag = m->val[k];
        }
        x[i] = s / diag;
    }
}

/* Solves on the cpu and, where there is one, the GPU; the largest difference from want. */
static int solve_and_check(const char *what, const csr *m, double alpha, const double *b,
                           const double *want, double tol, int print_x)
{
    double *x = xmalloc(sizeof(double) * (size_t)m->n), err = 0, scale = 0;
    double t0 = kedr_wall_seconds();
    forward_substitution(m, alpha, b, x);
    double cpu_s = kedr_wall_seconds() - t0;
    for (int i = 0; i < m->n; i++) {
        err = fmax(err, fabs(x[i] - want[i]));
        scale = fmax(scale, fabs(want[i]));
    }
    int bad = !(err <= tol * scale);
    printf("%s, cpu (forward substitution): max error %.1e, %.3f ms\n", what, err, 1e3 * cpu_s);
    if (print_x)
        printf("  x = [%.4f, %.4f, %.4f, %.4f]\n", x[0], x[1], x[2], x[3]);
#ifdef KEDR_HAVE_CUDA
    if (kedr_backend_available(KEDR_BACKEND_CUDA)) {
        char msg[256];
        double gpu_s = 0, gerr = 0;
        memset(x, 0, sizeof(double) * (size_t)m->n);
        if (trsv_cuda(m->n, m->nnz, m->row_ptr, m->col, m->val, alpha, b, x, &gpu_s, msg,
                      sizeof msg) != 0) {
            fprintf(stderr, "%s, GPU: %s\n", what, msg);
            bad = 1;
        } else {
            for (int i = 0; i < m->n; i++)
                gerr = fmax(gerr, fabs(x[i] - want[i]));
            printf("%s, GPU (cuSPARSE SpSV): max error %.1e, %.3f ms (the solve; analysis "
                   "apart)\n", what, gerr, 1e3 * gpu_s);
            bad |= !(gerr <= tol * scale);
        }
    }
#endif
    if (bad)
        fprintf(stderr, "%s: a solution differs from the known one by more than %.0e "
                "(relative)\n", what, tol);
    free(x);
    return bad;
}

static int book_example(void)
{
    /* The book's matrix in COO, row by row, turned into CSR by counting the entries of a row. */
    static const int rows[10] = {0, 1, 1, 2, 2, 2, 3, 3, 3, 3};
    static const int cols[10] = {0, 0, 1, 0, 1, 2, 0, 1, 2, 3};
    static const double vals[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1};
    int row_ptr[5] = {0}, col[10];
    double val[10];
    for (int k = 0; k < 10; k++)
        row_ptr[rows[k] + 1]++;
    for (int i = 0; i < 4; i++)
        row_ptr[i + 1] += row_ptr[i];
    memcpy(col, cols, sizeof col);
    memcpy(val, vals, sizeof val);
    csr m = {4, 10, row_ptr, col, val};
    double b[4] = {10, 20, 30, 40};
    double want[4] = {70, 0, -70.0 / 6, -105}; /* the book rounds x[2] to -11.6667 */
    return solve_and_check("the book's 4 x 4 system", &m, 7.0, b, want, 1e-12, 1);
}

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* A random lower-triangular matrix: up to k distinct columns below the diagonal in each row,
 * entries in [-1, 1], and a diagonal of 1 + the row's sum of |entries|, so that substitution is
 * stable; the solution x[i] = sin(i), and b = L x. */
static int random_example(int n, int k)
{
    csr m;
    m.n = n;
    m.row_ptr = xmalloc(sizeof(int) * ((size_t)n + 1));
    m.col = xmalloc(sizeof(int) * (size_t)n * (size_t)(k + 1));
    m.val = xmalloc(sizeof(double) * (size_t)n * (size_t)(k + 1));
    double *want = xmalloc(sizeof(double) * (size_t)n), *b = xmalloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++)
        want[i] = sin((double)i);
    uint64_t s = 42;
    int nnz = 0;
    for (int i = 0; i < n; i++) {
        m.row_ptr[i] = nnz;
        int picks = i < k ? i : k, start = nnz;
        for (int p = 0; p < picks; p++) {
            /* mostly near the diagonal, sometimes far: the dependencies a solver must follow */
            int reach = next(&s) % 4 ? (i < 64 ? i : 64) : i;
            m.col[nnz++] = i - 1 - (int)(next(&s) % (uint64_t)reach);
        }
        qsort(m.col + start, (size_t)(nnz - start), sizeof(int), cmp_int);
        int w = start; /* drop repeated columns */
        for (int q = start; q < nnz; q++)
            if (q == start || m.col[q] != m.col[w - 1])
                m.col[w++] = m.col[q];
        nnz = w;
        double off = 0, bi = 0;
        for (int q = start; q < nnz; q++) {
            m.val[q] = 2 * ((next(&s) >> 11) * 0x1p-53) - 1;
            off += fabs(m.val[q]);
            bi += m.val[q] * want[m.col[q]];
        }
        m.col[nnz] = i;
        m.val[nnz] = 1 + off;
        bi += m.val[nnz] * want[i];
        nnz++;
        b[i] = bi;
    }
    m.row_ptr[n] = nnz;
    m.nnz = nnz;
    /* The levels of the solve: row i can be finished once the rows it reads are, so its level is
     * one more than theirs. A GPU solves a level's rows together, one level after another: the
     * number of levels, not the number of rows, sets its time. */
    int *level = xmalloc(sizeof(int) * (size_t)n), levels = 0;
    for (int i = 0; i < n; i++) {
        int l = 0;
        for (int q = m.row_ptr[i]; q < m.row_ptr[i + 1]; q++)
            if (m.col[q] < i && level[m.col[q]] + 1 > l)
                l = level[m.col[q]] + 1;
        level[i] = l;
        if (l + 1 > levels)
            levels = l + 1;
    }
    free(level);
    char what[96];
    snprintf(what, sizeof what, "random %d x %d, %d nonzeros, %d levels", n, n, nnz, levels);
    int bad = solve_and_check(what, &m, 1.0, b, want, 1e-12, 0);
    free(m.row_ptr);
    free(m.col);
    free(m.val);
    free(want);
    free(b);
    return bad;
}

int main(int argc, char **argv)
{
    long n = 1000000, k = 8;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (i + 1 < argc && strcmp(argv[i], "--n") == 0) {
            n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 100000000) {
                fprintf(stderr, "--n %s: expected an integer from 1 to 100000000\n", argv[i]);
                return 2;
            }
        } else if (i + 1 < argc && strcmp(argv[i], "--per-row") == 0) {
            k = strtol(argv[++i], &end, 10);
            if (*end || k < 0 || k > 64) {
                fprintf(stderr, "--per-row %s: expected an integer from 0 to 64\n", argv[i]);
                return 2;
            }
        } else {
            fputs(usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (n * (k + 1) > 2000000000L) {
        fprintf(stderr, "--n %ld with --per-row %ld: more than 2^31 entries\n", n, k);
        return 2;
    }
    int bad = book_example();
    bad |= random_example((int)n, (int)k);
#ifndef KEDR_HAVE_CUDA
    printf("GPU path: not built (no CUDA toolkit)\n");
#endif
    return bad;
}
