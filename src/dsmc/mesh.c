/* Bodies of type stl when a simulator is built: the triangles from their files, binned into the
 * bins they cut (a grid of k^3 bins a cell around the bodies; the move then tests only the
 * triangles of the bins a path crosses: dsmc_mesh.h), checked for crossings, the bins classed
 * as gas or inside, the gas volume of the cut cells, and one surface element per triangle.
 * Host code, run once. */
#include "sim.h"
#include "stl.h"

#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dsmc_stl_body_box(const kedr_dsmc_body *b, double box[6], char *msg, size_t size)
{
    if (!(b->scale > 0) || !isfinite(b->scale)) {
        snprintf(msg, size, "scale %g: expected a number > 0", b->scale);
        return -1;
    }
    for (int k = 0; k < 3; k++)
        if (!isfinite(b->rotate[k]) || !isfinite(b->translate[k])) {
            snprintf(msg, size, "rotate and translate: expected finite numbers");
            return -1;
        }
    if (!b->file[0]) {
        snprintf(msg, size, "no STL file given");
        return -1;
    }
    dsmc_stl_mesh m;
    if (dsmc_stl_load(b->file, b->scale, b->rotate, b->translate, &m) != KEDR_OK) {
        snprintf(msg, size, "%s", kedr_last_error());
        return -1;
    }
    dsmc_stl_box(&m, box);
    dsmc_stl_free(&m);
    return 0;
}

kedr_status dsmc_mesh_add(kedr_dsmc *sim, int j, size_t *ne)
{
    const kedr_dsmc_body *b = &sim->geo.body[j];
    dsmc_geometry *g = &sim->geo;
    dsmc_params *p = &sim->p;
    dsmc_stl_mesh m;
    kedr_status st = dsmc_stl_load(b->file, b->scale, b->rotate, b->translate, &m);
    if (st != KEDR_OK)
        return kedr_fail(st, "kedr_dsmc_create: body %d: %s", j + 1, kedr_last_error());
    size_t first = g->mesh_ntri, n = first + m.ntri;
    if (n > UINT32_MAX / 2 || *ne + m.ntri > UINT32_MAX) {
        dsmc_stl_free(&m);
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_create: body %d: %zu triangles in all: at "
                         "most %u", j + 1, n, UINT32_MAX / 2);
    }
    double *tri = realloc(g->mesh_tri, n * 12 * sizeof(double));
    if (tri)
        g->mesh_tri = tri;
    double *vert = tri ? realloc(g->mesh_vert, n * 9 * sizeof(double)) : NULL;
    if (vert)
        g->mesh_vert = vert;
    if (!tri || !vert) {
        dsmc_stl_free(&m);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory for %zu "
                         "triangles", n);
    }
    memcpy(vert + 9 * first, m.v, m.ntri * 9 * sizeof(double));
    for (size_t t = 0; t < m.ntri; t++) {
        const double *v = m.v + 9 * t;
        double *T = tri + 12 * (first + t), nn[3];
        for (int k = 0; k < 3; k++) {
            T[k] = v[k];
            T[3 + k] = v[3 + k] - v[k];
            T[6 + k] = v[6 + k] - v[k];
        }
        nn[0] = T[4] * T[8] - T[5] * T[7];
        nn[1] = T[5] * T[6] - T[3] * T[8];
        nn[2] = T[3] * T[7] - T[4] * T[6];
        double len = sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
        for (int k = 0; k < 3; k++)
            T[9 + k] = nn[k] / len; /* len > 0: stl.c refuses degenerate triangles */
    }
    double box[6];
    dsmc_stl_box(&m, box);
    dsmc_stl_free(&m);
    g->mesh_ntri = n;
    double *s = p->solid[j];
    s[0] = box[0];
    s[1] = 0.5 * (box[1] + box[4]);
    s[2] = 0.5 * (box[2] + box[5]);
    s[3] = 0;
    s[4] = box[3] - box[0];
    s[5] = 0.5 * fmax(box[4] - box[1], box[5] - box[2]);
    p->solid_type[j] = (int8_t)KEDR_DSMC_BODY_STL;
    p->solid_body[j] = (uint8_t)j;
    p->solid_elem[j] = (uint32_t)*ne;
    p->solid_n[j][0] = (uint32_t)first;
    p->solid_n[j][1] = (uint32_t)(n - first);
    p->solid_n[j][2] = 0;
    *ne += n - first;
    return KEDR_OK;
}

void dsmc_mesh_elements(kedr_dsmc *sim, int j)
{
    dsmc_geometry *g = &sim->geo;
    const dsmc_params *p = &sim->p;
    for (uint32_t k = 0; k < p->solid_n[j][1]; k++) {
        size_t t = p->solid_n[j][0] + k, e = p->solid_elem[j] + k;
        const double *v = g->mesh_vert + 9 * t, *T = g->mesh_tri + 12 * t;
        double cx = T[4] * T[8] - T[5] * T[7], cy = T[5] * T[6] - T[3] * T[8];
        double cz = T[3] * T[7] - T[4] * T[6];
        g->ex[e] = (v[0] + v[3] + v[6]) / 3.0;
        g->ey[e] = (v[1] + v[4] + v[7]) / 3.0;
        g->ez[e] = (v[2] + v[5] + v[8]) / 3.0;
        g->enx[e] = T[9];
        g->eny[e] = T[10];
        g->enz[e] = T[11];
        g->elen[e] = 0.5 * sqrt(cx * cx + cy * cy + cz * cz);
        g->ebody[e] = j;
        memcpy(g->corners + 12 * e, v, 9 * sizeof(double));
        for (int q = 9; q < 12; q++) /* a triangle: no 4th corner (kedr_dsmc_surface) */
            g->corners[12 * e + q] = NAN;
    }
}

/* ---- binning ------------------------------------------------------------------------------ */

/* Whether triangle v (9 doubles) meets the box of centre c and half sizes h: no separating axis
 * among the box's 3, the triangle's normal and the 9 products of their edges (the separating
 * axis theorem, as in Akenine-Moeller, "Fast 3D triangle-box overlap testing", J. Graphics Tools
 * 6 (2001) 29). */
static int tri_box(const double *v, const double *c, const double *h)
{
    double a[3][3], f[3][3];
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < 3; d++)
            a[k][d] = v[3 * k + d] - c[d];
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < 3; d++)
            f[k][d] = a[(k + 1) % 3][d] - a[k][d];
    double axes[13][3];
    int na = 0;
    for (int d = 0; d < 3; d++, na++) {
        axes[na][0] = axes[na][1] = axes[na][2] = 0;
        axes[na][d] = 1;
    }
    axes[na][0] = f[0][1] * f[1][2] - f[0][2] * f[1][1];
    axes[na][1] = f[0][2] * f[1][0] - f[0][0] * f[1][2];
    axes[na][2] = f[0][0] * f[1][1] - f[0][1] * f[1][0];
    na++;
    for (int d = 0; d < 3; d++)
        for (int k = 0; k < 3; k++, na++) { /* e_d x f_k */
            int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
            axes[na][d] = 0;
            axes[na][d1] = -f[k][d2];
            axes[na][d2] = f[k][d1];
        }
    for (int x = 0; x < na; x++) {
        const double *ax = axes[x];
        double r = h[0] * fabs(ax[0]) + h[1] * fabs(ax[1]) + h[2] * fabs(ax[2]);
        double lo = HUGE_VAL, hi = -HUGE_VAL;
        for (int k = 0; k < 3; k++) {
            double q = ax[0] * a[k][0] + ax[1] * a[k][1] + ax[2] * a[k][2];
            lo = fmin(lo, q);
            hi = fmax(hi, q);
        }
        if (lo > r || hi < -r)
            return 0;
    }
    return 1;
}

/* Bins at most: 5 bytes each (start, class), 168 MB. */
#define MAX_BINS ((size_t)1 << 25)

/* The bins: the DSMC cells around every stl body (their box, one cell wider on each side,
 * within the grid: cells lo[d] .. lo[d] + cells[d] - 1), each split k times along each axis, k
 * near the cell's side over twice the triangles' mean size (sqrt of the mean area), so that a
 * bin holds a few triangles; at most 16, and fewer while the bins would pass MAX_BINS. */
static void bin_grid(const kedr_dsmc *sim, dsmc_mesh *m, int lo[3], int cells[3], int *k)
{
    const dsmc_params *p = &sim->p;
    const double inv[3] = {p->inv_dx, p->inv_dy, p->inv_dz}, h[3] = {p->dx, p->dy, p->dz};
    const int n[3] = {p->nx, p->ny, p->nz};
    double blo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, bhi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    const dsmc_geometry *g = &sim->geo;
    double area = 0;
    for (size_t t = 0; t < g->mesh_ntri; t++) {
        const double *v = g->mesh_vert + 9 * t, *T = g->mesh_tri + 12 * t;
        for (int q = 0; q < 3; q++)
            for (int d = 0; d < 3; d++) {
                blo[d] = fmin(blo[d], v[3 * q + d]);
                bhi[d] = fmax(bhi[d], v[3 * q + d]);
            }
        double cx = T[4] * T[8] - T[5] * T[7], cy = T[5] * T[6] - T[3] * T[8];
        double cz = T[3] * T[7] - T[4] * T[6];
        area += 0.5 * sqrt(cx * cx + cy * cy + cz * cz);
    }
    for (int d = 0; d < 3; d++) {
        int a = (int)floor((blo[d] - p->lo[d]) * inv[d]) - 1;
        int b = (int)floor((bhi[d] - p->lo[d]) * inv[d]) + 1;
        lo[d] = a < 0 ? 0 : a;
        cells[d] = (b >= n[d] ? n[d] - 1 : b) - lo[d] + 1;
    }
    double side = fmax(p->dx, fmax(p->dy, p->dz));
    double kk = ceil(side / (2.0 * sqrt(area / (double)g->mesh_ntri)));
    *k = kk < 1 ? 1 : kk > 16 ? 16 : (int)kk;
    while (*k > 1 && (size_t)cells[0] * cells[1] * cells[2] * (size_t)(*k * *k * *k) > MAX_BINS)
        (*k)--;
    for (int d = 0; d < 3; d++) {
        m->n[d] = cells[d] * *k;
        m->h[d] = h[d] / *k;
        m->inv[d] = *k * inv[d];
        m->o[d] = p->lo[d] + lo[d] * h[d];
    }
}

/* Triangle t into every bin it meets (bin boxes widened by a millionth, so that a triangle on
 * a bin's face is listed on both sides): counts (list NULL) or the list. */
static void bin_triangle(const kedr_dsmc *sim, const dsmc_mesh *m, size_t t, uint32_t *at,
                         uint32_t *list)
{
    const double *h = m->h, *v = sim->geo.mesh_vert + 9 * t;
    int i0[3], i1[3];
    for (int d = 0; d < 3; d++) {
        double lo = fmin(v[d], fmin(v[3 + d], v[6 + d])), hi = fmax(v[d], fmax(v[3 + d], v[6 + d]));
        double e = 1e-6 * h[d];
        i0[d] = (int)floor((lo - e - m->o[d]) * m->inv[d]);
        i1[d] = (int)floor((hi + e - m->o[d]) * m->inv[d]);
        i0[d] = i0[d] < 0 ? 0 : i0[d];
        i1[d] = i1[d] >= m->n[d] ? m->n[d] - 1 : i1[d];
    }
    for (int c = i0[2]; c <= i1[2]; c++)
        for (int b = i0[1]; b <= i1[1]; b++)
            for (int a = i0[0]; a <= i1[0]; a++) {
                int k[3] = {a, b, c};
                double ctr[3], half[3];
                for (int d = 0; d < 3; d++) {
                    ctr[d] = m->o[d] + (k[d] + 0.5) * h[d];
                    half[d] = (0.5 + 1e-6) * h[d];
                }
                if (!tri_box(v, ctr, half))
                    continue;
                size_t sc = ((size_t)c * m->n[1] + b) * m->n[0] + a;
                if (list)
                    list[at[sc]++] = (uint32_t)t;
                else
                    at[sc]++;
            }
}

static kedr_status bin(kedr_dsmc *sim, dsmc_mesh *m)
{
    dsmc_geometry *g = &sim->geo;
    size_t nsub = (size_t)m->n[0] * m->n[1] * m->n[2];
    g->mesh_start = calloc(nsub + 1, sizeof(uint32_t));
    g->mesh_solid = calloc(nsub, 1);
    uint32_t *at = calloc(nsub + 1, sizeof(uint32_t));
    if (!g->mesh_start || !g->mesh_solid || !at) {
        free(at);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory for the %zu bins "
                         "around the stl bodies", nsub);
    }
    for (size_t t = 0; t < g->mesh_ntri; t++)
        bin_triangle(sim, m, t, at, NULL);
    uint64_t total = 0;
    for (size_t c = 0; c < nsub; c++) {
        g->mesh_start[c] = (uint32_t)total;
        total += at[c];
        at[c] = g->mesh_start[c];
    }
    if (total > UINT32_MAX) {
        free(at);
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_create: the stl triangles meet %llu bins "
                         "(counted once per triangle): at most %u", (unsigned long long)total,
                         UINT32_MAX);
    }
    g->mesh_start[nsub] = (uint32_t)total;
    g->mesh_list = malloc((total ? total : 1) * sizeof(uint32_t));
    if (!g->mesh_list) {
        free(at);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory for %llu "
                         "cell-triangle pairs", (unsigned long long)total);
    }
    for (size_t t = 0; t < g->mesh_ntri; t++)
        bin_triangle(sim, m, t, at, g->mesh_list);
    free(at);
    return KEDR_OK;
}

/* ---- self-intersection -------------------------------------------------------------------- */

static int same_point(const double *a, const double *b)
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* Whether triangles a and b (indices) share a vertex, or an edge of one passes through the
 * other. */
static int touch(const dsmc_params *hp, const double *vert, uint32_t a, uint32_t b, int *shared)
{
    const double *va = vert + 9 * (size_t)a, *vb = vert + 9 * (size_t)b;
    *shared = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            *shared = *shared || same_point(va + 3 * i, vb + 3 * j);
    if (*shared)
        return 0;
    const double *tri = hp->mesh_host.tri;
    for (int side = 0; side < 2; side++) {
        const double *v = side ? vb : va, *T = tri + 12 * (size_t)(side ? a : b);
        for (int e = 0; e < 3; e++) {
            const double *p0 = v + 3 * e, *p1 = v + 3 * ((e + 1) % 3);
            double u[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
            if (dsmc_tri_hit(T, p0, u, 0, 1.0) < 1.0)
                return 1;
        }
    }
    return 0;
}

/* Two triangles that share no vertex but cross: the surface intersects itself (and molecules
 * could be caught inside). Only triangles listed in one bin can meet, so the pairs of each bin
 * are tested; the first pair (in triangle order) is named. Triangles that share a vertex and
 * cross elsewhere, and coplanar overlaps, are not found. */
static kedr_status crossings(kedr_dsmc *sim, const dsmc_params *hp)
{
    const dsmc_geometry *g = &sim->geo;
    const dsmc_mesh *m = &hp->mesh_host;
    long long nbins = (long long)m->n[0] * m->n[1] * m->n[2];
    uint64_t first = UINT64_MAX; /* a << 32 | b of the first crossing pair */
#pragma omp parallel for schedule(dynamic, 256)
    for (long long c = 0; c < nbins; c++) {
        for (uint32_t i = g->mesh_start[c]; i < g->mesh_start[c + 1]; i++)
            for (uint32_t k = i + 1; k < g->mesh_start[c + 1]; k++) {
                uint32_t a = g->mesh_list[i], b = g->mesh_list[k];
                int shared;
                if (!touch(hp, g->mesh_vert, a, b, &shared))
                    continue;
                uint64_t key = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
#pragma omp critical(dsmc_mesh_crossing)
                first = key < first ? key : first;
            }
    }
    if (first == UINT64_MAX)
        return KEDR_OK;
    /* one body's: the bounding boxes of two bodies do not meet (dsmc_body_problem) */
    uint32_t a = (uint32_t)(first >> 32), b = (uint32_t)first;
    int ja = dsmc_mesh_solid(hp, a);
    return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_create: body %d: %s: triangles %u and %u cross "
                     "each other: the surface intersects itself", ja + 1, g->body[ja].file,
                     a - hp->solid_n[ja][0] + 1, b - hp->solid_n[ja][0] + 1);
}

/* ---- cells -------------------------------------------------------------------------------- */

/* The length of the line from (x0, y, z) to x1 along +x that lies inside the stl bodies: the
 * crossings one after the other, each seen from behind (leaving a body) or from the front. */
static double inside_length(const dsmc_params *p, double x0, double y, double z, double x1)
{
    const double u[3] = {1, 0, 0};
    double pos[3] = {x0, y, z}, len = 0, reach = p->hi[0] - p->lo[0] + p->dx;
    const dsmc_mesh *m = &p->mesh_host;
    for (int k = 0; k < 256; k++) {
        double th = 0;
        int64_t t = dsmc_mesh_hit(p, pos, u, reach, 0, -1, &th);
        double xe = t < 0 ? HUGE_VAL : pos[0] + th;
        if (t >= 0 && m->tri[12 * t + 9] > 0)
            len += fmin(xe, x1) - pos[0];
        if (xe >= x1)
            break;
        pos[0] = xe + 1e-9 * p->dx; /* past the crossing, and any twin on a shared edge */
    }
    return len;
}

/* Lines along x per cut cell, SUB x SUB over its y-z face: the gas volume by the midpoint rule
 * over the lines, each clipped exactly at the triangles. */
#define SUB 16

/* The bins that no triangle cuts are wholly in the gas or in one body: a ray from the centre,
 * the first triangle it meets seen from behind, is the body's; along a row of bins the same as
 * the last uncut one unless a cut one lies between. */
static void class_bins(kedr_dsmc *sim, const dsmc_params *hp)
{
    dsmc_geometry *g = &sim->geo;
    const dsmc_params *p = &sim->p;
    const dsmc_mesh *m = &hp->mesh_host;
    const double u[3] = {0.5773502691896258, 0.6154574548966637, 0.5366563145999495};
    double reach = (p->hi[0] - p->lo[0]) + (p->hi[1] - p->lo[1]) + (p->hi[2] - p->lo[2]);
    int nrow = m->n[1] * m->n[2];
#pragma omp parallel for schedule(dynamic, 16)
    for (int row = 0; row < nrow; row++) {
        int b = row % m->n[1], c = row / m->n[1], known = 0;
        uint8_t state = 0;
        for (int a = 0; a < m->n[0]; a++) {
            size_t sc = ((size_t)c * m->n[1] + b) * m->n[0] + a;
            if (g->mesh_start[sc] != g->mesh_start[sc + 1]) {
                known = 0;
                continue;
            }
            if (!known) {
                double pos[3] = {m->o[0] + (a + 0.5) * m->h[0], m->o[1] + (b + 0.5) * m->h[1],
                                 m->o[2] + (c + 0.5) * m->h[2]}, th;
                int64_t t = dsmc_mesh_hit(hp, pos, u, reach, 0, -1, &th);
                const double *T = t >= 0 ? m->tri + 12 * t : NULL;
                state = T && u[0] * T[9] + u[1] * T[10] + u[2] * T[11] > 0
                            ? (uint8_t)(1 + dsmc_mesh_solid(hp, (uint32_t)t))
                            : 0;
                known = 1;
            }
            g->mesh_solid[sc] = state;
        }
    }
}

/* Which DSMC cells of the bins' box (cells, k as bin_grid made them) hold a bin that a triangle
 * cuts: dsmc_params.mesh_cut, set on the host's parameters (the walks of the checks below use
 * it too). */
static kedr_status cut_cells(kedr_dsmc *sim, dsmc_params *hp, const int *cells, int k)
{
    dsmc_geometry *g = &sim->geo;
    const dsmc_mesh *m = &hp->mesh_host;
    size_t ncell = (size_t)cells[0] * cells[1] * cells[2];
    g->mesh_cut = calloc(ncell ? ncell : 1, 1);
    if (!g->mesh_cut)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory for the %zu cells "
                         "around the stl bodies", ncell);
    for (int c = 0; c < m->n[2]; c++)
        for (int b = 0; b < m->n[1]; b++)
            for (int a = 0; a < m->n[0]; a++) {
                size_t sc = ((size_t)c * m->n[1] + b) * m->n[0] + a;
                if (g->mesh_start[sc] != g->mesh_start[sc + 1])
                    g->mesh_cut[((size_t)(c / k) * cells[1] + b / k) * cells[0] + a / k] = 1;
            }
    hp->mesh_cut_host = g->mesh_cut;
    hp->mesh_k = k;
    return KEDR_OK;
}

/* The DSMC cells of the bins' box (lo, cells, k as bin_grid made them): a cut cell (cut_cells)
 * loses what its lines find inside the bodies; one of uncut bins inside a body is solid. */
static void cell_volumes(kedr_dsmc *sim, const dsmc_params *hp, const int *lo, const int *cells,
                         int k, int *cut)
{
    dsmc_geometry *g = &sim->geo;
    const dsmc_params *p = &sim->p;
    const dsmc_mesh *m = &hp->mesh_host;
    const double h[3] = {p->dx, p->dy, p->dz};
    int ncell = cells[0] * cells[1] * cells[2];
#pragma omp parallel for schedule(dynamic, 4)
    for (int i = 0; i < ncell; i++) {
        int a = i % cells[0], b = i / cells[0] % cells[1], c = i / cells[0] / cells[1];
        int ix = lo[0] + a, iy = lo[1] + b, iz = lo[2] + c, any = g->mesh_cut[i];
        size_t first = ((size_t)(c * k) * m->n[1] + (size_t)(b * k)) * m->n[0] + (size_t)(a * k);
        size_t cell = ((size_t)iz * p->ny + iy) * p->nx + ix;
        double *gv = &g->gas_host[cell];
        if (!any) {
            if (g->mesh_solid[first])
                *gv = 0;
            continue;
        }
        double c0[3] = {p->lo[0] + ix * h[0], p->lo[1] + iy * h[1], p->lo[2] + iz * h[2]}, len = 0;
        for (int q = 0; q < SUB * SUB; q++)
            len += inside_length(hp, c0[0], c0[1] + (q % SUB + 0.5) * h[1] / SUB,
                                 c0[2] + (q / SUB + 0.5) * h[2] / SUB, c0[0] + h[0]);
        double v = len * h[1] * h[2] / (SUB * SUB);
        if (v > 0) {
            *gv -= fmin(v, p->cell_volume);
            *gv = *gv < DSMC_SOLID * p->cell_volume ? 0.0 : *gv;
        }
    }
    *cut = 1; /* a closed surface inside the domain always cuts some cell */
}

static kedr_status to_ctx(kedr_ctx *ctx, void **dst, const void *src, size_t bytes)
{
    KEDR_TRY(kedr_alloc(ctx, dst, bytes ? bytes : 1));
    return bytes ? kedr_upload(ctx, *dst, src, bytes) : KEDR_OK;
}

kedr_status dsmc_mesh_finish(kedr_dsmc *sim, int *cut)
{
    dsmc_geometry *g = &sim->geo;
    dsmc_params *p = &sim->p;
    dsmc_mesh m;
    memset(&m, 0, sizeof m);
    int lo[3], cells[3], k;
    bin_grid(sim, &m, lo, cells, &k);
    KEDR_TRY(bin(sim, &m));
    m.ntri = (uint32_t)g->mesh_ntri;
    m.tri = g->mesh_tri;
    m.hash = kedr_fnv1a(KEDR_FNV_START, g->mesh_tri, g->mesh_ntri * 12 * sizeof(double));
    m.start = g->mesh_start;
    m.list = g->mesh_list;
    m.solid = NULL; /* classed below: until then every bin asks the rays */
    p->mesh_host = m;
    KEDR_TRY(cut_cells(sim, p, cells, k));
    KEDR_TRY(crossings(sim, p));
    class_bins(sim, p);
    p->mesh_host.solid = g->mesh_solid;
    cell_volumes(sim, p, lo, cells, k, cut);
    kedr_log(KEDR_LOG_INFO, "stl bodies: %zu triangles in %d x %d x %d bins (%d a cell side), "
             "%u bin-triangle pairs", g->mesh_ntri, m.n[0], m.n[1], m.n[2], k,
             g->mesh_start[(size_t)m.n[0] * m.n[1] * m.n[2]]);
    size_t nsub = (size_t)m.n[0] * m.n[1] * m.n[2];
    kedr_ctx *ctx = sim->ctx;
    KEDR_TRY(to_ctx(ctx, &g->ctx_tri, g->mesh_tri, g->mesh_ntri * 12 * sizeof(double)));
    KEDR_TRY(to_ctx(ctx, &g->ctx_start, g->mesh_start, (nsub + 1) * sizeof(uint32_t)));
    KEDR_TRY(to_ctx(ctx, &g->ctx_list, g->mesh_list, g->mesh_start[nsub] * sizeof(uint32_t)));
    KEDR_TRY(to_ctx(ctx, &g->ctx_solid, g->mesh_solid, nsub));
    KEDR_TRY(to_ctx(ctx, &g->ctx_cut, g->mesh_cut, (size_t)cells[0] * cells[1] * cells[2]));
    p->mesh = p->mesh_host;
    p->mesh.tri = g->ctx_tri;
    p->mesh.start = g->ctx_start;
    p->mesh.list = g->ctx_list;
    p->mesh.solid = g->ctx_solid;
    p->mesh_cut = g->ctx_cut;
    free(g->mesh_vert);
    g->mesh_vert = NULL;
    return KEDR_OK;
}

void dsmc_mesh_free(kedr_dsmc *sim)
{
    dsmc_geometry *g = &sim->geo;
    kedr_free(sim->ctx, g->ctx_tri);
    kedr_free(sim->ctx, g->ctx_start);
    kedr_free(sim->ctx, g->ctx_list);
    kedr_free(sim->ctx, g->ctx_solid);
    kedr_free(sim->ctx, g->ctx_cut);
    free(g->mesh_tri);
    free(g->mesh_vert);
    free(g->mesh_start);
    free(g->mesh_list);
    free(g->mesh_solid);
    free(g->mesh_cut);
}
