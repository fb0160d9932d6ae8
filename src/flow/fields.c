/* The flow's fields on the host: staggered velocities for validation, cell-centred velocity,
 * pressure and vorticity for output, and the centre-line profiles. */
#include "core/internal.h"
#include "flow/sim.h"
#include "kedr/comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t kedr_flow_staggered_count(const kedr_flow *f, int comp)
{
    size_t n = 1;
    for (int a = 0; a < f->dims; a++)
        n *= (size_t)f->n[a] + (a == comp);
    return n;
}

/* Visits the faces of component comp on the box (both ends along comp), in the order of the
 * host arrays: x fastest. */
#define FOR_FACES(f, comp, e, c)                                                             \
    for (int k_ = (f)->kz, e = 0; k_ <= ((f)->dims == 3 ? (f)->n[2] + ((comp) == 2) : 0); k_++) \
        for (int j_ = 1; j_ <= (f)->n[1] + ((comp) == 1); j_++)                              \
            for (int i_ = 1; i_ <= (f)->n[0] + ((comp) == 0); i_++, e++)                      \
                for (size_t c = flow_at(f, i_, j_, k_), once_ = 1; once_; once_ = 0)

kedr_status kedr_flow_get_staggered(const kedr_flow *f, int comp, double *host)
{
    if (comp < 0 || comp >= f->dims)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_flow_get_staggered: component %d of %d", comp,
                         f->dims);
    flow_host h;
    KEDR_TRY(flow_host_get(f, &h));
    FOR_FACES(f, comp, e, c)
    host[e] = h.q[comp][c];
    flow_host_free(&h);
    return KEDR_OK;
}

kedr_status kedr_flow_set_staggered(kedr_flow *f, int comp, const double *host)
{
    if (comp < 0 || comp >= f->dims)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_flow_set_staggered: component %d of %d", comp,
                         f->dims);
    flow_host h;
    KEDR_TRY(flow_host_get(f, &h));
    FOR_FACES(f, comp, e, c)
    h.q[comp][c] = host[e];
    kedr_status s = flow_host_put(f, &h);
    flow_host_free(&h);
    KEDR_TRY(s);
    KEDR_TRY(flow_fill_bc(f, f->q));
    return flow_umax(f, f->q, f->umax);
}

void kedr_flow_fields_free(kedr_flow_fields *fl)
{
    free(fl->u);
    free(fl->v);
    free(fl->w);
    free(fl->p);
    free(fl->vorticity);
    memset(fl, 0, sizeof *fl);
}

kedr_status kedr_flow_get_fields(const kedr_flow *f, kedr_flow_fields *fl)
{
    memset(fl, 0, sizeof *fl);
    fl->dims = f->dims;
    for (int a = 0; a < 3; a++) {
        fl->n[a] = f->n[a];
        fl->h[a] = f->h[a];
    }
    fl->time = f->time;
    fl->step = f->step;
    size_t N = f->cells;
    flow_host h;
    KEDR_TRY(flow_host_get(f, &h));
    double **arr[] = {&fl->u, &fl->v, &fl->p, &fl->vorticity, &fl->w};
    for (int i = 0; i < (f->dims == 3 ? 5 : 4); i++)
        if (!(*arr[i] = malloc(N * sizeof(double)))) {
            kedr_flow_fields_free(fl);
            flow_host_free(&h);
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_flow_get_fields: %zu bytes", N * 8);
        }
    double *uc[3] = {fl->u, fl->v, fl->w};
    int k1 = f->dims == 3 ? f->n[2] : 0;
    for (int k = f->kz; k <= k1; k++)
        for (int j = 1; j <= f->n[1]; j++)
            for (int i = 1; i <= f->n[0]; i++) {
                size_t c = flow_at(f, i, j, k), cc = flow_cell(f, i, j, k);
                for (int a = 0; a < f->dims; a++)
                    uc[a][cc] = 0.5 * (h.q[a][c] + h.q[a][c + f->s[a]]);
                fl->p[cc] = f->c.rho * h.P[cc];
            }
    /* vorticity at cell centres: each curl component omega_t = d q_b/d x_a - d q_a/d x_b lives
     * on the cell edges along t; the cell's value is the mean of its four edges (2D: omega_z;
     * 3D: the magnitude of the curl) */
    for (int k = f->kz; k <= k1; k++)
        for (int j = 1; j <= f->n[1]; j++)
            for (int i = 1; i <= f->n[0]; i++) {
                size_t cc = flow_cell(f, i, j, k);
                double om[3] = {0, 0, 0};
                for (int t = 0; t < 3; t++) {
                    int a = (t + 1) % 3, b = (t + 2) % 3; /* omega_t = d q_b/d x_a - d q_a/d x_b */
                    if (a >= f->dims || b >= f->dims)
                        continue;
                    double s = 0;
                    for (int da = 0; da < 2; da++)
                        for (int db = 0; db < 2; db++) {
                            /* the edge at the low corner (+da along a, +db along b) of the cell */
                            int ijk[3] = {i, j, k};
                            ijk[a] += da;
                            ijk[b] += db;
                            size_t e = flow_at(f, ijk[0], ijk[1], ijk[2]);
                            double dqb = (h.q[b][e] - h.q[b][e - f->s[a]]) / f->h[a];
                            double dqa = (h.q[a][e] - h.q[a][e - f->s[b]]) / f->h[b];
                            s += dqb - dqa;
                        }
                    om[t] = 0.25 * s; /* the edges along t pass through the centre */
                }
                fl->vorticity[cc] = f->dims == 2 ? om[2]
                                                 : sqrt(om[0] * om[0] + om[1] * om[1] +
                                                        om[2] * om[2]);
            }
    flow_host_free(&h);
    return KEDR_OK;
}

/* u(y) on the vertical line x = Lx/2 and v(x) on the horizontal line y = Ly/2 (z = Lz/2 in
 * 3D), interpolated linearly between the staggered values; the wall values included. */
static kedr_status profiles(const struct kedr_flow *f, const flow_host *hp, const char *path)
{
    const flow_host h = *hp;
    kedr_file_writer w;
    KEDR_TRY(kedr_file_begin(&w, path));
    FILE *fp = KEDR_FILE(&w);
    int kmid = f->dims == 3 ? f->n[2] / 2 + 1 : 0;
    double wk = f->dims == 3 && f->n[2] % 2 == 0 ? 0.5 : 0; /* weight of the layer below */
    fprintf(fp, "line,coordinate,velocity\n");
    /* u at x = Lx/2: face index nx/2 + 1 when nx is even, else the two faces around */
    for (int line = 0; line < 2; line++) {
        int a = line, b = 1 - line; /* the component (u or v) and the axis it varies along */
        int n = f->n[a];
        int f0 = n / 2 + 1; /* the face at the middle (n even) or just past it (n odd) */
        double wf = n % 2 ? 0.5 : 0; /* weight of face f0 - 1 */
        for (int m = 0; m <= f->n[b] + 1; m++) {
            double coord = m == 0 ? 0 : m == f->n[b] + 1 ? f->c.length[b] : (m - 0.5) * f->h[b];
            double v = 0;
            for (int dk = 0; dk < (wk > 0 ? 2 : 1); dk++) {
                double wz = wk > 0 ? 0.5 : 1;
                int ijk[3] = {0, 0, kmid - dk};
                ijk[a] = f0;
                ijk[b] = m;
                double val;
                if (m == 0 || m == f->n[b] + 1) { /* on the wall: mean of ghost and first cell */
                    int in = m == 0 ? 1 : f->n[b];
                    int ijk2[3] = {ijk[0], ijk[1], ijk[2]};
                    ijk2[b] = in;
                    size_t c1 = flow_at(f, ijk[0], ijk[1], ijk[2]);
                    size_t c2 = flow_at(f, ijk2[0], ijk2[1], ijk2[2]);
                    double s1 = 0.5 * (h.q[a][c1] + h.q[a][c2]);
                    double s0 = 0.5 * (h.q[a][c1 - f->s[a]] + h.q[a][c2 - f->s[a]]);
                    val = (1 - wf) * s1 + wf * s0;
                } else {
                    size_t c = flow_at(f, ijk[0], ijk[1], ijk[2]);
                    val = (1 - wf) * h.q[a][c] + wf * h.q[a][c - f->s[a]];
                }
                v += wz * val;
            }
            fprintf(fp, "%s,%.10g,%.10g\n", line == 0 ? "u_vertical" : "v_horizontal", coord, v);
        }
    }
    if (ferror(fp)) {
        kedr_file_abort(&w);
        return kedr_fail(KEDR_ERR_IO, "%s: write failed", path);
    }
    return kedr_file_commit(&w);
}

/* Over ranks: u and v of the whole padded grid on rank 0, the slabs' layers in rank order (the
 * first rank's lower ghost layer and the last rank's upper one included), and there a view of
 * the whole grid to write the profiles from. */
static kedr_status gathered_profiles(const struct kedr_flow *f, const flow_host *h,
                                     const char *path)
{
    int ax = f->split, n = f->n[ax];
    size_t L = f->s[ax];
    int first = f->rank == 0 ? 0 : 1, last = f->rank == f->nranks - 1 ? n + 1 : n;
    size_t bytes = (size_t)(last - first + 1) * L * sizeof(double);
    size_t *counts = f->rank == 0 ? malloc((size_t)f->nranks * sizeof *counts) : NULL;
    struct kedr_flow *g = f->rank == 0 ? malloc(sizeof *g) : NULL;
    kedr_status s = f->rank == 0 && (!counts || !g)
                        ? kedr_fail(KEDR_ERR_NOMEM, "kedr_flow_write_profiles: host memory")
                        : KEDR_OK;
    s = kedr_comm_agree(f->comm, s);
    flow_host all;
    memset(&all, 0, sizeof all);
    for (int a = 0; a < 2 && s == KEDR_OK; a++) {
        void *buf = NULL;
        s = kedr_comm_gatherv(f->comm, h->q[a] + (size_t)first * L, bytes, 0, counts, &buf);
        all.q[a] = buf;
    }
    if (s == KEDR_OK && f->rank == 0) {
        *g = *f; /* the whole grid's sizes; its storage: the gathered arrays */
        g->n[ax] = f->c.n[ax];
        g->s[2] = g->s[1] * ((size_t)g->n[1] + 2);
        s = profiles(g, &all, path);
    }
    s = kedr_comm_agree(f->comm, s);
    free(all.q[0]);
    free(all.q[1]);
    free(counts);
    free(g);
    return s;
}

kedr_status kedr_flow_write_profiles(const kedr_flow *f, const char *path)
{
    flow_host h;
    kedr_status s = flow_host_get(f, &h);
    if (f->split >= 0) {
        s = kedr_comm_agree(f->comm, s);
        if (s == KEDR_OK)
            s = gathered_profiles(f, &h, path);
    } else if (s == KEDR_OK) {
        s = profiles(f, &h, path);
    }
    flow_host_free(&h);
    return s;
}

kedr_status kedr_flow_gather_fields(const kedr_flow *f, int root, kedr_flow_fields *fl)
{
    if (f->split < 0)
        return kedr_flow_get_fields(f, fl);
    KEDR_TRY(kedr_comm_agree(f->comm, kedr_flow_get_fields(f, fl)));
    /* the slabs follow each other along the last (slowest) axis: rank order is the grid's */
    double **arr[] = {&fl->u, &fl->v, &fl->w, &fl->p, &fl->vorticity};
    kedr_status s = KEDR_OK;
    size_t *counts = f->rank == root ? malloc((size_t)f->nranks * sizeof *counts) : NULL;
    if (f->rank == root && !counts)
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr_flow_gather_fields: %d counts", f->nranks);
    s = kedr_comm_agree(f->comm, s);
    for (size_t i = 0; i < sizeof arr / sizeof arr[0] && s == KEDR_OK; i++) {
        if (!*arr[i])
            continue;
        void *all = NULL;
        s = kedr_comm_gatherv(f->comm, *arr[i], f->cells * sizeof(double), root, counts, &all);
        free(*arr[i]);
        *arr[i] = all; /* NULL on the other ranks */
    }
    free(counts);
    if (s != KEDR_OK) {
        kedr_flow_fields_free(fl);
        return s;
    }
    fl->n[f->split] = f->c.n[f->split];
    return KEDR_OK;
}

int kedr_flow_rank_slab(const kedr_flow *f, int *first, int *count)
{
    int ax = f->dims - 1;
    if (first)
        *first = f->g.off[ax];
    if (count)
        *count = f->n[ax];
    return f->nranks;
}
