/* render: the uniform grid. Cells of equal size, about GRID_DENSITY triangles' worth per cell
 * (the resolution rule of Wald, Ize, Kensler, Knoll & Parker, "Ray tracing animated scenes using
 * coherent grid traversal", 2006: n_k = d_k (lambda N / V)^(1/3)), each listing the triangles
 * whose box (accel_tri_box: widened a little, so that rounding never loses a triangle at a
 * cell face) overlaps it. Traversal steps from cell to cell along the ray by 3D-DDA
 * (Amanatides & Woo, "A fast voxel traversal algorithm for ray tracing", 1987).
 *
 * The grid's known weaknesses show in its statistics: a triangle spanning many cells is listed
 * (and may be tested) in each of them, and a small dense object in a large sparse scene (the
 * teapot in a stadium) lands in a handful of cells. The cell count is capped at GRID_MAX_CELLS. */
#include "render/accel.h"

#include <stdlib.h>
#include <string.h>

#define GRID_DENSITY 4.0
#define GRID_MAX_CELLS ((size_t)1 << 24)
#define GRID_MAX_AXIS 1024

static void cell_range(const kedr_accel *a, const float *lo, const float *hi, int c0[3], int c1[3])
{
    for (int k = 0; k < 3; k++) {
        float x0 = (lo[k] - a->lo[k]) * a->inv_cell[k];
        float x1 = (hi[k] - a->lo[k]) * a->inv_cell[k];
        c0[k] = x0 < 0 ? 0 : x0 >= a->res[k] ? a->res[k] - 1 : (int)x0;
        c1[k] = x1 < 0 ? 0 : x1 >= a->res[k] ? a->res[k] - 1 : (int)x1;
    }
}

kedr_status render_grid_build(kedr_accel *a)
{
    size_t n = a->ntri;
    double ext[3], maxext = 0, vol = 1;
    for (int k = 0; k < 3; k++) {
        ext[k] = (double)a->hi[k] - a->lo[k];
        maxext = ext[k] > maxext ? ext[k] : maxext;
    }
    for (int k = 0; k < 3; k++) {
        /* a flat scene still gets a grid of some thickness */
        ext[k] = fmax(ext[k], 1e-3 * maxext);
        if (!(ext[k] > 0))
            ext[k] = 1;
        a->hi[k] = a->lo[k] + (float)ext[k];
        ext[k] = (double)a->hi[k] - a->lo[k];
        vol *= ext[k];
    }
    double density = cbrt(GRID_DENSITY * (double)(n ? n : 1) / vol);
    size_t cells;
    for (;;) {
        cells = 1;
        for (int k = 0; k < 3; k++) {
            double r = ceil(ext[k] * density);
            a->res[k] = r < 1 ? 1 : r > GRID_MAX_AXIS ? GRID_MAX_AXIS : (int)r;
            cells *= (size_t)a->res[k];
        }
        if (cells <= GRID_MAX_CELLS)
            break;
        density *= 0.8;
    }
    for (int k = 0; k < 3; k++) {
        a->cell[k] = (float)(ext[k] / a->res[k]);
        a->inv_cell[k] = (float)(a->res[k] / ext[k]);
    }
    a->start = calloc(cells + 1, sizeof *a->start);
    if (!a->start)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for a grid of "
                         "%zu cells", cells);
    /* count, prefix sum, fill */
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        float lo[3], hi[3];
        int c0[3], c1[3];
        accel_tri_box(a, i, lo, hi);
        cell_range(a, lo, hi, c0, c1);
        for (int z = c0[2]; z <= c1[2]; z++)
            for (int y = c0[1]; y <= c1[1]; y++)
                for (int x = c0[0]; x <= c1[0]; x++)
                    a->start[(size_t)x + a->res[0] * ((size_t)y + (size_t)a->res[1] * z)]++;
        total += (size_t)(c1[0] - c0[0] + 1) * (c1[1] - c0[1] + 1) * (c1[2] - c0[2] + 1);
    }
    if (total >= UINT32_MAX) {
        char b[32];
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: the grid needs %zu triangle references "
                         "(%s), more than it can index; use the kd-tree or the BVH", total,
                         kedr_format_bytes(total * 4.0, b, sizeof b));
    }
    uint32_t sum = 0;
    for (size_t c = 0; c <= cells; c++) {
        uint32_t k = c < cells ? a->start[c] : 0;
        a->start[c] = sum;
        sum += k;
    }
    a->refs = malloc((total ? total : 1) * sizeof *a->refs);
    uint32_t *fill = malloc(cells * sizeof *fill);
    if (!a->refs || !fill) {
        char b[32];
        free(fill);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the grid's "
                         "%zu references (%s)", total, kedr_format_bytes(total * 4.0, b, sizeof b));
    }
    memcpy(fill, a->start, cells * sizeof *fill);
    for (size_t i = 0; i < n; i++) {
        float lo[3], hi[3];
        int c0[3], c1[3];
        accel_tri_box(a, i, lo, hi);
        cell_range(a, lo, hi, c0, c1);
        for (int z = c0[2]; z <= c1[2]; z++)
            for (int y = c0[1]; y <= c1[1]; y++)
                for (int x = c0[0]; x <= c1[0]; x++)
                    a->refs[fill[(size_t)x + a->res[0] * ((size_t)y + (size_t)a->res[1] * z)]++] =
                        (uint32_t)i;
    }
    free(fill);
    a->nrefs = total;
    a->info.nodes = cells;
    return KEDR_OK;
}

int render_grid_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    rvec o = rv_load(r->o), d = rv_load(r->d), inv = rv_inverse(d);
    float t0, t1;
    if (!box_hit(a->lo, a->hi, o, inv, r->tmin, h->t, &t0, &t1))
        return 0;
    int cell[3], step[3];
    float next[3], delta[3];
    for (int k = 0; k < 3; k++) {
        float ok = rv_at(o, k), dk = rv_at(d, k), ik = rv_at(inv, k);
        float x = (ok + t0 * dk - a->lo[k]) * a->inv_cell[k];
        cell[k] = x < 0 ? 0 : x >= a->res[k] ? a->res[k] - 1 : (int)x;
        if (dk > 0) {
            step[k] = 1;
            next[k] = (a->lo[k] + (cell[k] + 1) * a->cell[k] - ok) * ik;
            delta[k] = a->cell[k] * ik;
        } else if (dk < 0) {
            step[k] = -1;
            next[k] = (a->lo[k] + cell[k] * a->cell[k] - ok) * ik;
            delta[k] = -a->cell[k] * ik;
        } else {
            step[k] = 0;
            next[k] = INFINITY;
            delta[k] = 0;
        }
    }
    int found = 0;
    for (;;) {
        size_t c = (size_t)cell[0] + a->res[0] * ((size_t)cell[1] + (size_t)a->res[1] * cell[2]);
        if (accel_leaf(a, a->refs + a->start[c], a->start[c + 1] - a->start[c], o, d, r->tmin, h,
                       any)) {
            found = 1;
            if (any)
                return 1;
        }
        int k = next[0] < next[1] ? (next[0] < next[2] ? 0 : 2) : (next[1] < next[2] ? 1 : 2);
        /* a hit before the cell's exit is nearer than anything in the cells beyond */
        if (found && h->t <= next[k])
            return 1;
        if (!step[k] || next[k] > t1)
            return found;
        cell[k] += step[k];
        if (cell[k] < 0 || cell[k] >= a->res[k])
            return found;
        next[k] += delta[k];
    }
}
