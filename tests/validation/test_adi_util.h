/* Shared by the ADI validation tests: a case in code, a run from initial fields, and the
 * comparison of the back ends (cpu and cuda agree within a stated tolerance on every case). */
#ifndef TEST_ADI_UTIL_H
#define TEST_ADI_UTIL_H

#include "kedr/adi.h"
#include "test_util.h"

/* A box of nx x ny x nz nodes of spacing h, every face free, no heating (gamma 1), Re re. */
static inline void ta_case(kedr_adi_case *c, int nx, int ny, int nz, double h, double re,
                           double dt, int64_t steps)
{
    kedr_adi_case_default(c);
    c->nx = nx;
    c->ny = ny;
    c->nz = nz;
    c->h = h;
    c->re = re;
    c->gamma = 1;
    c->dt = dt;
    c->steps = steps;
    c->change_tolerance = 1e-13;
    for (int f = 0; f < 6; f++)
        c->face[f].kind = KEDR_ADI_FREE;
}

typedef struct {
    size_t n;
    double *f[4]; /* u, v, w, T, x fastest */
} ta_fields;

static inline void ta_alloc(ta_fields *t, const kedr_adi_case *c)
{
    t->n = (size_t)c->nx * c->ny * c->nz;
    for (int v = 0; v < 4; v++)
        t->f[v] = (double *)tu_host_alloc(t->n * sizeof(double));
}

static inline void ta_free(ta_fields *t)
{
    for (int v = 0; v < 4; v++)
        free(t->f[v]);
}

static inline size_t ta_at(const kedr_adi_case *c, int i, int j, int k)
{
    return (size_t)i + (size_t)c->nx * ((size_t)j + (size_t)c->ny * k);
}

/* Runs c->steps steps from the fields in `init` (NULL: the case's initial fields) and leaves
 * the fields of the last step in out. Returns 0, or 1 after reporting a failure. */
static inline int ta_run(kedr_ctx *ctx, const kedr_adi_case *c, const ta_fields *init,
                         ta_fields *out)
{
    kedr_adi *s = NULL;
    kedr_status st = kedr_adi_create(ctx, c, &s);
    if (st == KEDR_OK && init)
        st = kedr_adi_set_fields(s, init->f[0], init->f[1], init->f[2], init->f[3]);
    for (int64_t k = 0; st == KEDR_OK && k < c->steps; k++)
        st = kedr_adi_step(s);
    if (st == KEDR_OK)
        st = kedr_adi_get_fields(s, out->f[0], out->f[1], out->f[2], out->f[3]);
    kedr_adi_destroy(s);
    TU_CHECK(st == KEDR_OK, "run: %s", kedr_last_error());
    return st != KEDR_OK;
}

/* max |a - b| over the nodes where both are numbers (NaN marks solid nodes in both). */
static inline double ta_maxdiff(const ta_fields *a, const ta_fields *b, int var)
{
    double m = 0;
    for (size_t i = 0; i < a->n; i++) {
        double x = a->f[var][i], y = b->f[var][i];
        if (isnan(x) != isnan(y))
            return INFINITY;
        if (!isnan(x))
            m = fabs(x - y) > m ? fabs(x - y) : m;
    }
    return m;
}

/* Set once the cpu back end has run (it runs first): its fields are kept for comparison. */
static int ta_have_cpu;

/* The cuda fields against the cpu's of the same case (nothing when the cpu did not run). */
static inline void ta_agree(const char *what, kedr_backend b, const ta_fields *cpu,
                            const ta_fields *now, int single)
{
    if (b == KEDR_BACKEND_CPU || !cpu || !ta_have_cpu)
        return;
    /* The same arithmetic in the same order; only the compilers' rounding of a few operations
     * (division, fused products on the GPU) may differ. */
    double tol = single ? 2e-5 : 1e-11;
    for (int v = 0; v < 4; v++) {
        double d = ta_maxdiff(cpu, now, v);
        TU_CHECK(d <= tol, "%s: cuda against cpu, field %d: max difference %.3g > %.1g", what, v,
                 d, tol);
    }
}

#endif
