/* The ADI solver: creation, the time step (global iterations of the x, y and z fractional steps,
 * each with its local iterations), the residuals, and the fields between host and back end;
 * over several ranks, the halo planes, the partitioned X sweep and the reductions. */
#include "adi/adi_internal.h"
#include "core/internal.h"
#include "kedr/prim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A positive integer of the environment variable name in lo .. hi into *v (unset: unchanged). */
static kedr_status env_int(const char *name, int lo, int hi, int *v)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return KEDR_OK;
    char *end;
    long x = strtol(e, &end, 10);
    if (*end || x < lo || x > hi)
        return kedr_fail(KEDR_ERR_INVALID, "%s=%s: expected an integer from %d to %d", name, e,
                         lo, hi);
    *v = (int)x;
    return KEDR_OK;
}

kedr_status adi_sweep_choice(int *path, int *len, int *lines, int *reg_len)
{
    const char *e = getenv("KEDR_ADI_SWEEP");
    *path = ADI_SWEEP_THOMAS;
    *len = ADI_CHIP_LEN_DEFAULT;
    *lines = 0;
    *reg_len = 0;
    if (e && *e && strcmp(e, "thomas") != 0) {
        if (strcmp(e, "chip") == 0)
            *path = ADI_SWEEP_CHIP;
        else if (strcmp(e, "reg") == 0)
            *path = ADI_SWEEP_REG;
        else
            return kedr_fail(KEDR_ERR_INVALID, "KEDR_ADI_SWEEP=%s: expected thomas, chip or reg",
                             e);
    }
    KEDR_TRY(env_int("KEDR_ADI_CHIP_LEN", 1, ADI_CHIP_MAXLEN, len));
    KEDR_TRY(env_int("KEDR_ADI_REG_LEN", 0, ADI_REG_MAXLEN, reg_len));
    if (*reg_len != 0 && *reg_len != 2 && *reg_len != 4 && *reg_len != 8 && *reg_len != 16)
        return kedr_fail(KEDR_ERR_INVALID, "KEDR_ADI_REG_LEN=%s: expected 0 (the default), 2, 4, "
                         "8 or 16", getenv("KEDR_ADI_REG_LEN"));
    return env_int("KEDR_ADI_CHIP_LINES", 0, 32, lines);
}

int adi_reg_len(int reg_len, int real_size, int ni)
{
    (void)real_size; /* one default for both precisions until measured (docs/adi.md) */
    int L = reg_len ? reg_len : 4;
    while (L > 2 && L > ni)
        L /= 2;
    return L;
}

static kedr_status do_sweep(kedr_adi *s, int transposed, int d, const adi_state *out,
                            const adi_state *old, const adi_state *coef)
{
    if (d == 0 && s->partitioned)
        return adi_part_sweep(s, out, old, coef);
    const adi_params *p = transposed ? &s->pt : &s->p;
    const unsigned char *mask = transposed ? s->mask_t : s->mask;
    int path, len, lines, reg_len;
    KEDR_TRY(adi_sweep_choice(&path, &len, &lines, &reg_len));
    int ni = p->n[d] - 2, rl = adi_reg_len(reg_len, s->real_size, ni);
    if (path == ADI_SWEEP_REG && ni < rl) /* lines of one interior node: no chunks to cut */
        path = ADI_SWEEP_THOMAS;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(s->ctx))
        return path == ADI_SWEEP_REG    ? adi_cuda_reg_sweep(s, p, mask, d, out, old, coef, rl,
                                                             lines)
               : path == ADI_SWEEP_CHIP ? adi_cuda_chip_sweep(s, p, mask, d, out, old, coef, len,
                                                              lines)
                                        : adi_cuda_sweep(s, p, mask, d, out, old, coef);
#endif
    return path == ADI_SWEEP_REG    ? adi_cpu_reg_sweep(s, p, mask, d, out, old, coef, rl)
           : path == ADI_SWEEP_CHIP ? adi_cpu_chip_sweep(s, p, mask, d, out, old, coef, len)
                                    : adi_cpu_sweep(s, p, mask, d, out, old, coef);
}

/* The measures of g over the grid: this rank's own planes, then the sums and maxima over the
 * ranks. */
static kedr_status do_measure(kedr_adi *s, const adi_state *g, const adi_state *prev,
                              adi_measure *m)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(s->ctx))
        KEDR_TRY(adi_cuda_measure(s, g, prev, m));
    else
#endif
        KEDR_TRY(adi_cpu_measure(s, g, prev, m));
    if (s->nranks == 1)
        return KEDR_OK;
    double sum[3] = {m->div2, m->energy, m->nonfinite}, max[3] = {m->divmax, m->change,
                                                                  m->speed2max};
    KEDR_TRY(kedr_comm_allreduce(s->comm, KEDR_F64, KEDR_OP_SUM, sum, 3));
    KEDR_TRY(kedr_comm_allreduce(s->comm, KEDR_F64, KEDR_OP_MAX, max, 3));
    m->div2 = sum[0];
    m->energy = sum[1];
    m->nonfinite = sum[2];
    m->divmax = max[0];
    m->change = max[1];
    m->speed2max = max[2];
    return KEDR_OK;
}

/* The four fields of a state from the normal layout ([nx ny] x [nz]) into the transposed one
 * ([nz] x [nx ny]), or back. */
static kedr_status transpose_state(kedr_adi *s, const adi_state *in, const adi_state *out,
                                   int back)
{
    kedr_dtype t = s->real_size == 4 ? KEDR_F32 : KEDR_F64;
    size_t plane = (size_t)s->nxl * s->c.ny, nz = (size_t)s->c.nz;
    for (int v = 0; v < 4; v++)
        KEDR_TRY(kedr_transpose(s->ctx, t, in->f[v], out->f[v], back ? nz : plane,
                                back ? plane : nz));
    return KEDR_OK;
}

/* The first state not among used[0..n). */
static int free_state(const int *used, int n)
{
    for (int k = 0; k < ADI_NSTATES; k++) {
        int taken = 0;
        for (int i = 0; i < n; i++)
            taken |= used[i] == k;
        if (!taken)
            return k;
    }
    return -1; /* cannot happen: at most 5 states are in use (docs/adi.md) */
}

/* One fractional step along d: from state f (old values) with the first coefficients from
 * state g; the result's state in *res. */
static kedr_status fractional(kedr_adi *s, int d, int f, int g, int *res)
{
    adi_state *st = s->state;
    int used[6] = {s->u, g, f};
    int a = free_state(used, 3);
    used[3] = a;
    int b = free_state(used, 4);
    used[4] = b;
    int transposed = d == 2 && s->transpose_z;
    int old = f, coef = g, x = a, y = b;
    if (transposed) { /* old and the first coefficients in the transposed layout */
        int c = free_state(used, 5);
        KEDR_TRY(transpose_state(s, &st[f], &st[a], 0));
        KEDR_TRY(transpose_state(s, &st[g], &st[b], 0));
        old = a;
        coef = b;
        x = c;
        y = b; /* free once the first local iteration has read it */
    }
    int out = x;
    for (int l = 0; l < s->c.local_iterations; l++) {
        out = l % 2 == 0 ? x : y;
        KEDR_TRY(do_sweep(s, transposed, d, &st[out], &st[old], &st[coef]));
        coef = out;
        /* The next local iteration's coefficients read across the x planes: the X sweep's all
         * four fields, the others' own component (in the dissipation's du_d/dx). */
        if (l + 1 < s->c.local_iterations)
            KEDR_TRY(adi_exchange_halos(s, transposed ? &s->pt : &s->p, &st[out], d == 0 ? 0 : d,
                                    d == 0 ? 4 : 1));
    }
    if (transposed) { /* back into the transposed old values' state, free now */
        KEDR_TRY(transpose_state(s, &st[out], &st[old], 1));
        out = old;
    }
    *res = out;
    return KEDR_OK;
}

static int diverged(const kedr_adi *s, const adi_measure *m)
{
    return m->nonfinite > 0 || !(sqrt(m->speed2max) <= s->c.velocity_limit);
}

static kedr_status record(kedr_adi *s)
{
    if (s->nhistory == s->cap_history) {
        size_t cap = s->cap_history ? 2 * s->cap_history : 256;
        kedr_adi_stats *h = realloc(s->history, cap * sizeof *h);
        if (!h)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_step: out of host memory for the history");
        s->history = h;
        s->cap_history = cap;
    }
    s->history[s->nhistory++] = s->st;
    return KEDR_OK;
}

kedr_status kedr_adi_step(kedr_adi *s)
{
    if (!s)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_adi_step: s is NULL");
    int g = s->u;
    adi_measure m = {0};
    int done = 0;
    for (int it = 0; it < s->c.global_iterations; it++) {
        int f = s->u;
        for (int d = 0; d < 3; d++)
            KEDR_TRY(fractional(s, d, f, g, &f));
        KEDR_TRY(adi_exchange_halos(s, &s->p, &s->state[f], 0, 4));
        KEDR_TRY(do_measure(s, &s->state[f], &s->state[g], &m));
        g = f;
        done = it + 1;
        double rms = s->unknowns ? sqrt(m.div2 / (double)s->unknowns) : 0;
        if (diverged(s, &m) || rms < s->c.continuity_tolerance ||
            m.change < s->c.change_tolerance)
            break;
    }
    s->diverged = diverged(s, &m);
    if (s->diverged)
        return kedr_fail(KEDR_ERR_INVALID, "the run diverged at step %lld (t = %.6g): %s; the "
                         "fields are kept at step %lld: lower [time] dt, or refine the grid",
                         (long long)s->st.step + 1, s->st.time + s->c.dt,
                         m.nonfinite > 0 ? "non-finite values (NaN or infinity)"
                                         : "the speed passed [solver] velocity_limit",
                         (long long)s->st.step);
    s->u = g;
    s->st.step++;
    s->st.time += s->c.dt;
    s->st.global_iterations = done;
    s->st.change = m.change;
    s->st.continuity_rms = s->unknowns ? sqrt(m.div2 / (double)s->unknowns) : 0;
    s->st.continuity_max = m.divmax;
    s->st.max_speed = sqrt(m.speed2max);
    s->st.kinetic_energy = m.energy;
    return record(s);
}

void kedr_adi_get_stats(const kedr_adi *s, kedr_adi_stats *st) { *st = s->st; }

int kedr_adi_diverged(const kedr_adi *s) { return s->diverged; }

const kedr_adi_stats *kedr_adi_history(const kedr_adi *s, size_t *n)
{
    *n = s->nhistory;
    return s->history;
}

/* ---- fields between host and back end --------------------------------------------------- */

static size_t host_index(const kedr_adi_case *c, int i, int j, int k)
{
    return (size_t)i + (size_t)c->nx * ((size_t)j + (size_t)c->ny * (size_t)k);
}

/* Boundary nodes from their rules, solid nodes NaN, on host fields f[v] (x fastest). A free
 * (or adiabatic) value is its inward neighbour's along the face's normal, taken in passes so
 * that edges and corners follow the faces they touch. */
static void fill_boundaries(const kedr_adi *s, double *const f[4])
{
    const kedr_adi_case *c = &s->c;
    const unsigned char *code = s->mask_host;
    size_t off[6] = {1, (size_t)-1, (size_t)c->nx, (size_t)-c->nx, (size_t)c->nx * c->ny,
                     (size_t)-(c->nx * c->ny)};
    for (int pass = 0; pass < 3; pass++)
        for (int k = 0; k < c->nz; k++)
            for (int j = 0; j < c->ny; j++)
                for (int i = 0; i < c->nx; i++) {
                    size_t n = host_index(c, i, j, k);
                    unsigned char t = code[n];
                    if (t == ADI_FLUID)
                        continue;
                    for (int v = 0; v < 4; v++) {
                        if (!f[v])
                            continue;
                        if (t == ADI_SOLID) {
                            f[v][n] = NAN;
                            continue;
                        }
                        const adi_ghost *g = &s->p.ghost[t];
                        size_t in = n + off[t - ADI_FACE];
                        f[v][n] = g->dirichlet[v] ? g->value[v]
                                  : code[in] == ADI_SOLID ? NAN
                                                          : f[v][in];
                    }
                }
}

kedr_status adi_get_local(kedr_adi *s, double *const f[4])
{
    const kedr_adi_case *c = &s->c;
    int own = s->hi - s->lo;
    size_t rs = (size_t)s->real_size, bytes = (size_t)own * s->plane * rs;
    void *buf = malloc(bytes ? bytes : 1);
    if (!buf)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_get_fields: out of host memory (%zu bytes)",
                         bytes);
    kedr_status st = KEDR_OK;
    for (int var = 0; var < 4 && st == KEDR_OK; var++) {
        if (!f[var])
            continue;
        st = kedr_download(s->ctx, buf, (char *)s->state[s->u].f[var] + s->plane * rs, bytes);
        for (int l = 0; st == KEDR_OK && l < own; l++)
            for (int j = 0; j < c->ny; j++)
                for (int k = 0; k < c->nz; k++) {
                    size_t d = adi_index(c, l, j, k);
                    f[var][(size_t)l + (size_t)own * ((size_t)j + (size_t)c->ny * k)] =
                        s->real_size == 4 ? (double)((float *)buf)[d] : ((double *)buf)[d];
                }
    }
    free(buf);
    return st;
}

kedr_status kedr_adi_get_fields(kedr_adi *s, double *u, double *v, double *w, double *t)
{
    double *out[4] = {u, v, w, t};
    if (s->nranks == 1) {
        KEDR_TRY(adi_get_local(s, out));
        fill_boundaries(s, out);
        return KEDR_OK;
    }
    /* Field by field: each rank's planes gathered on rank 0, put in place there. */
    const kedr_adi_case *c = &s->c;
    unsigned char want[4];
    for (int k = 0; k < 4; k++)
        want[k] = out[k] != NULL;
    KEDR_TRY(kedr_comm_bcast(s->comm, want, sizeof want, 0));
    size_t own = (size_t)(s->hi - s->lo) * s->plane;
    double *slab = malloc((own ? own : 1) * sizeof *slab);
    size_t *counts = s->rank == 0 ? malloc((size_t)s->nranks * sizeof *counts) : NULL;
    kedr_status st = slab && (s->rank != 0 || counts)
                         ? KEDR_OK
                         : kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_get_fields: out of host memory");
    for (int var = 0; var < 4; var++) {
        if (!want[var])
            continue;
        double *one[4] = {NULL, NULL, NULL, NULL};
        one[var] = slab;
        if (st == KEDR_OK)
            st = adi_get_local(s, one);
        void *all = NULL;
        if ((st = kedr_comm_agree(s->comm, st)) == KEDR_OK)
            st = kedr_comm_gatherv(s->comm, slab, own * sizeof *slab, 0, counts, &all);
        if ((st = kedr_comm_agree(s->comm, st)) != KEDR_OK)
            break;
        const double *block = all;
        for (int r = 0; s->rank == 0 && r < s->nranks; r++) {
            int lo, hi;
            adi_slab(c->nx, r, s->nranks, &lo, &hi);
            size_t n = (size_t)(hi - lo);
            for (int k = 0; k < c->nz; k++)
                for (int j = 0; j < c->ny; j++)
                    for (size_t i = 0; i < n; i++)
                        out[var][host_index(c, lo + (int)i, j, k)] =
                            block[i + n * ((size_t)j + (size_t)c->ny * k)];
            block += n * s->plane;
        }
        free(all);
    }
    free(slab);
    free(counts);
    if (st == KEDR_OK && s->rank == 0)
        fill_boundaries(s, out);
    return st;
}

kedr_status adi_set_local(kedr_adi *s, const double *const in[4])
{
    const kedr_adi_case *c = &s->c;
    int own = s->hi - s->lo;
    size_t rs = (size_t)s->real_size, bytes = s->nodes * rs;
    void *buf = calloc(s->nodes ? s->nodes : 1, rs); /* the halo planes: 0 until exchanged */
    kedr_status st = buf ? KEDR_OK
                         : kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_set_fields: out of host memory "
                                     "(%zu bytes)", bytes);
    for (int var = 0; var < 4 && st == KEDR_OK; var++) {
        if (!in[var])
            continue;
        for (int l = 0; l < own; l++)
            for (int j = 0; j < c->ny; j++)
                for (int k = 0; k < c->nz; k++) {
                    size_t h = (size_t)l + (size_t)own * ((size_t)j + (size_t)c->ny * k);
                    double x = s->mask_host[host_index(c, s->lo + l, j, k)] == ADI_FLUID
                                   ? in[var][h] : 0;
                    adi_put_real(buf, adi_index(c, l + 1, j, k), s->real_size, x);
                }
        st = kedr_upload(s->ctx, s->state[s->u].f[var], buf, bytes);
    }
    free(buf);
    KEDR_TRY(kedr_comm_agree(s->comm, st));
    KEDR_TRY(adi_exchange_halos(s, &s->p, &s->state[s->u], 0, 4));
    for (int k = 0; k < ADI_NSTATES; k++) /* every state holds finite values */
        for (int var = 0; var < 4; var++)
            if (k != s->u)
                KEDR_TRY(kedr_copy(s->ctx, s->state[k].f[var], s->state[s->u].f[var], bytes));
    adi_measure m;
    KEDR_TRY(do_measure(s, &s->state[s->u], NULL, &m));
    s->st.continuity_rms = s->unknowns ? sqrt(m.div2 / (double)s->unknowns) : 0;
    s->st.continuity_max = m.divmax;
    s->st.max_speed = sqrt(m.speed2max);
    s->st.kinetic_energy = m.energy;
    return KEDR_OK;
}

kedr_status kedr_adi_set_fields(kedr_adi *s, const double *u, const double *v, const double *w,
                                const double *t)
{
    const double *in[4] = {u, v, w, t};
    if (s->nranks == 1)
        return adi_set_local(s, in);
    const kedr_adi_case *c = &s->c;
    size_t n = (size_t)(s->hi - s->lo);
    double *slab[4] = {NULL, NULL, NULL, NULL};
    kedr_status st = KEDR_OK;
    for (int var = 0; var < 4 && st == KEDR_OK; var++) {
        if (!in[var])
            continue;
        if (!(slab[var] = malloc((n * s->plane > 0 ? n * s->plane : 1) * sizeof(double)))) {
            st = kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_set_fields: out of host memory");
            break;
        }
        for (int k = 0; k < c->nz; k++)
            for (int j = 0; j < c->ny; j++)
                for (size_t i = 0; i < n; i++)
                    slab[var][i + n * ((size_t)j + (size_t)c->ny * k)] =
                        in[var][host_index(c, s->lo + (int)i, j, k)];
    }
    if ((st = kedr_comm_agree(s->comm, st)) == KEDR_OK)
        st = adi_set_local(s, (const double *const *)slab);
    for (int var = 0; var < 4; var++)
        free(slab[var]);
    return st;
}

/* ---- creation ---------------------------------------------------------------------------- */

void kedr_adi_destroy(kedr_adi *s)
{
    if (!s)
        return;
    for (int k = 0; k < ADI_NSTATES; k++)
        for (int v = 0; v < 4; v++)
            kedr_free(s->ctx, s->state[k].f[v]);
    kedr_free(s->ctx, s->mask);
    kedr_free(s->ctx, s->mask_t);
    kedr_free(s->ctx, s->cp);
    kedr_free(s->ctx, s->measure_buf);
    adi_parts_free(s);
    free(s->mask_host);
    free(s->history);
    free(s);
}

/* The masks of the local planes in both layouts in context memory (planes outside the box:
 * solid). */
static kedr_status upload_masks(kedr_adi *s)
{
    const kedr_adi_case *c = &s->c;
    unsigned char *a = malloc(s->nodes), *b = malloc(s->nodes);
    kedr_status st = a && b ? KEDR_OK
                            : kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_create: out of host memory");
    for (int l = 0; st == KEDR_OK && l < s->nxl; l++) {
        int i = s->lo - 1 + l;
        for (int j = 0; j < c->ny; j++)
            for (int k = 0; k < c->nz; k++) {
                unsigned char code = i < 0 || i >= c->nx ? ADI_SOLID
                                                         : s->mask_host[host_index(c, i, j, k)];
                a[adi_index(c, l, j, k)] = code;
                b[(size_t)l * c->ny + j + (size_t)s->nxl * c->ny * k] = code;
            }
    }
    if (st == KEDR_OK)
        st = kedr_upload(s->ctx, s->mask, a, s->nodes);
    if (st == KEDR_OK)
        st = kedr_upload(s->ctx, s->mask_t, b, s->nodes);
    free(a);
    free(b);
    return st;
}

static kedr_status allocate_local(kedr_adi *s)
{
    size_t bytes = s->nodes * (size_t)s->real_size;
    for (int k = 0; k < ADI_NSTATES; k++)
        for (int v = 0; v < 4; v++)
            KEDR_TRY(kedr_alloc(s->ctx, &s->state[k].f[v], bytes));
    KEDR_TRY(kedr_alloc(s->ctx, (void **)&s->mask, s->nodes));
    KEDR_TRY(kedr_alloc(s->ctx, (void **)&s->mask_t, s->nodes));
    if (KEDR_IS_CUDA(s->ctx)) {
        KEDR_TRY(kedr_alloc(s->ctx, &s->cp, 2 * bytes));
        KEDR_TRY(kedr_alloc(s->ctx, &s->measure_buf, s->nodes * 6 * sizeof(double)));
    }
    return adi_parts_allocate(s);
}

/* The arrays of every rank, then (all ranks having them) the buffers the ranks share. */
static kedr_status allocate(kedr_adi *s)
{
    KEDR_TRY(kedr_comm_agree(s->comm, allocate_local(s)));
    return adi_parts_connect(s);
}

kedr_status kedr_adi_create(kedr_ctx *ctx, const kedr_adi_case *c, kedr_adi **out)
{
    return kedr_adi_create_on(ctx, NULL, c, out);
}

kedr_status kedr_adi_create_on(kedr_ctx *ctx, kedr_comm *comm, const kedr_adi_case *c,
                               kedr_adi **out)
{
    if (!ctx || !c || !out)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_adi_create: an argument is NULL");
    *out = NULL;
    KEDR_TRY(kedr_adi_case_check(c));
    int nranks = kedr_comm_size(comm);
    if (nranks > kedr_adi_max_ranks(c))
        return kedr_fail(KEDR_ERR_INVALID, "a grid of %d planes along x can be split between at "
                         "most %d ranks (two planes each); this run has %d ranks: run on %d or "
                         "fewer, or refine the grid along x", c->nx, kedr_adi_max_ranks(c),
                         nranks, kedr_adi_max_ranks(c));
    kedr_adi *s = calloc(1, sizeof *s);
    if (!s)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_create: out of host memory");
    s->ctx = ctx;
    s->comm = comm;
    s->nranks = nranks;
    s->rank = kedr_comm_rank(comm);
    adi_slab(c->nx, s->rank, nranks, &s->lo, &s->hi);
    s->nxl = s->hi - s->lo + 2;
    s->partitioned = c->x_partitioned ? c->x_partitioned : nranks > 1;
    s->c = *c;
    s->c.solid = NULL;
    s->plane = (size_t)c->ny * c->nz;
    s->gnodes = (size_t)c->nx * s->plane;
    s->nodes = (size_t)s->nxl * s->plane;
    s->real_size = c->single ? 4 : 8;
    s->transpose_z = c->z_transpose < 0 ? KEDR_IS_CUDA(ctx) : c->z_transpose;
    if (s->c.slice < 0)
        s->c.slice = c->nz / 2;
    int64_t sn[3] = {(int64_t)s->plane, c->nz, 1};
    int64_t st[3] = {c->ny, 1, (int64_t)s->nxl * c->ny};
    adi_params_init(c, s->nxl, sn, &s->p);
    adi_params_init(c, s->nxl, st, &s->pt);
    s->mask_host = malloc(s->gnodes);
    if (!s->mask_host) {
        kedr_adi_destroy(s);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_create: out of host memory (%zu bytes)",
                         s->gnodes);
    }
    adi_classify(c, s->mask_host, &s->unknowns);
    kedr_status r = allocate(s);
    if (r == KEDR_ERR_NOMEM) {
        char need[32], why[512], part[96] = "";
        snprintf(why, sizeof why, "%s", kedr_last_error());
        if (nranks > 1)
            snprintf(part, sizeof part, " split between %d ranks (x planes %d to %d here)",
                     nranks, s->lo, s->hi - 1);
        r = kedr_fail(KEDR_ERR_NOMEM, "a grid of %d x %d x %d nodes%s needs %s of %s memory%s: "
                      "%s", c->nx, c->ny, c->nz, part,
                      kedr_format_bytes(kedr_adi_rank_bytes(c, kedr_ctx_backend(ctx), nranks),
                                        need, sizeof need),
                      KEDR_IS_CUDA(ctx) ? "GPU" : "host", nranks > 1 ? " a rank" : "", why);
    }
    if (r == KEDR_OK)
        r = upload_masks(s);
    r = kedr_comm_agree(comm, r);
    size_t own = (size_t)(s->hi - s->lo) * s->plane;
    double *init = r == KEDR_OK ? malloc((own ? own : 1) * 4 * sizeof *init) : NULL;
    if (r == KEDR_OK && !init)
        r = kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_create: out of host memory");
    if (r == KEDR_OK) {
        for (int v = 0; v < 4; v++)
            for (size_t n = 0; n < own; n++)
                init[v * own + n] = v < 3 ? c->init_velocity[v] : c->init_temperature;
        const double *in[4] = {init, init + own, init + 2 * own, init + 3 * own};
        r = adi_set_local(s, in);
    }
    free(init);
    if (r != KEDR_OK) {
        kedr_adi_destroy(s);
        return r;
    }
    *out = s;
    return KEDR_OK;
}

void kedr_adi_get_timing(const kedr_adi *s, double *halo_seconds, double *interface_seconds)
{
    *halo_seconds = s->halo_seconds;
    *interface_seconds = s->iface_seconds;
}

int kedr_adi_slab(const kedr_adi *s, int *lo, int *hi)
{
    *lo = s->lo;
    *hi = s->hi;
    return s->nranks;
}

/* ---- for the benchmark ------------------------------------------------------------------- */

kedr_status kedr_adi_sweep_once(kedr_adi *s, int axis, int transposed)
{
    if (!s || axis < 0 || axis > 2)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_adi_sweep_once: axis %d: expected 0, 1 or 2",
                         axis);
    int save = s->transpose_z, res;
    s->transpose_z = transposed && axis == 2;
    int lit = s->c.local_iterations;
    s->c.local_iterations = 1;
    kedr_status r = fractional(s, axis, s->u, s->u, &res);
    s->c.local_iterations = lit;
    s->transpose_z = save;
    return r;
}

kedr_status kedr_adi_transposes(kedr_adi *s)
{
    /* As a transposed Z step: the old values and the coefficients there, the result back. */
    int a = (s->u + 1) % ADI_NSTATES, b = (s->u + 2) % ADI_NSTATES;
    KEDR_TRY(transpose_state(s, &s->state[s->u], &s->state[a], 0));
    KEDR_TRY(transpose_state(s, &s->state[s->u], &s->state[b], 0));
    return transpose_state(s, &s->state[a], &s->state[b], 1);
}
