/* Bodies of type outline when a simulator is built: the segments from their files, one or more
 * surface elements each, binned into the bins their boxes meet (a grid of k x k bins a cell
 * around the bodies; the move then tests only the segments of the bins its path's box meets:
 * dsmc_lines.h), the bins classed as gas or inside, and the gas volume of the cells the bodies
 * take (the clipped area, or in an axisymmetric case the volume of revolution, as for the polygon
 * bodies). Host code, run once. */
#include "outline.h"
#include "sim.h"

#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dsmc_outline_body_box(const kedr_dsmc_body *b, int axi, double box[4], char *msg,
                          size_t size)
{
    if (!(b->scale > 0) || !isfinite(b->scale)) {
        snprintf(msg, size, "scale %g: expected a number > 0", b->scale);
        return -1;
    }
    if (!isfinite(b->rotate[2]) || !isfinite(b->translate[0]) || !isfinite(b->translate[1]) ||
        b->rotate[0] != 0 || b->rotate[1] != 0 || b->translate[2] != 0) {
        snprintf(msg, size, "rotate and translate: expected finite numbers, a rotation about z "
                 "and a translation in x and y only");
        return -1;
    }
    if (!b->file[0]) {
        snprintf(msg, size, "no outline file given");
        return -1;
    }
    dsmc_outline o;
    if (dsmc_outline_load(b->file, b->scale, b->rotate[2], b->translate, axi, &o) != KEDR_OK) {
        snprintf(msg, size, "%s", kedr_last_error());
        return -1;
    }
    dsmc_outline_box(&o, box);
    dsmc_outline_free(&o);
    return 0;
}

kedr_status dsmc_lines_add(kedr_dsmc *sim, int j, size_t *ne, double size)
{
    const kedr_dsmc_body *b = &sim->geo.body[j];
    dsmc_geometry *g = &sim->geo;
    dsmc_params *p = &sim->p;
    dsmc_outline o;
    kedr_status st = dsmc_outline_load(b->file, b->scale, b->rotate[2], b->translate, p->axisym,
                                       &o);
    if (st != KEDR_OK)
        return kedr_fail(st, "kedr_dsmc_create: body %d: %s", j + 1, kedr_last_error());
    size_t first = g->line_nseg, n = first + o.n;
    if (n > (size_t)1 << 30) {
        dsmc_outline_free(&o);
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_create: body %d: %zu outline segments in "
                         "all: at most %zu", j + 1, n, (size_t)1 << 30);
    }
    double *seg = realloc(g->line_seg, n * 4 * sizeof(double));
    if (seg)
        g->line_seg = seg;
    uint32_t *elem = seg ? realloc(g->line_elem, n * 2 * sizeof(uint32_t)) : NULL;
    if (elem)
        g->line_elem = elem;
    if (!seg || !elem) {
        dsmc_outline_free(&o);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory for %zu outline "
                         "segments", n);
    }
    int q = p->nlbodies++;
    p->lb_body[q] = (uint8_t)j;
    p->lb_first[q] = (uint32_t)first;
    p->lb_count[q] = (uint32_t)o.n;
    /* counter-clockwise outlines have the outside on the right of each segment (seg_out) */
    double area = dsmc_outline_area(&o);
    p->lb_out[q] = area > 0 ? -1 : 1;
    p->body_u[j][0] = b->velocity[0];
    p->body_u[j][1] = b->velocity[1];
    kedr_log(KEDR_LOG_INFO, "body %d: %s: %zu segments, %s (the outside on their %s)", j + 1,
             b->file, o.n, area > 0 ? "counter-clockwise" : "clockwise",
             area > 0 ? "right" : "left");
    for (size_t k = 0; k < o.n; k++) {
        double *s = seg + 4 * (first + k);
        size_t next = (k + 1) % o.n;
        s[0] = o.xy[2 * k];
        s[1] = o.xy[2 * k + 1];
        s[2] = o.xy[2 * next];
        s[3] = o.xy[2 * next + 1];
        double m = ceil(hypot(s[2] - s[0], s[3] - s[1]) / size);
        uint32_t *e = elem + 2 * (first + k);
        e[1] = m < 1 ? 1 : m > 1e6 ? 1000000 : (uint32_t)m;
        if (p->axisym && s[1] == 0 && s[3] == 0)
            e[1] = 0; /* on the axis: no surface */
        if (*ne + e[1] > UINT32_MAX) {
            dsmc_outline_free(&o);
            return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_create: body %d: more than %u surface "
                             "elements", j + 1, UINT32_MAX);
        }
        e[0] = (uint32_t)*ne;
        *ne += e[1];
    }
    g->line_nseg = n;
    dsmc_outline_free(&o);
    return KEDR_OK;
}

void dsmc_lines_elements(kedr_dsmc *sim, int q)
{
    dsmc_geometry *g = &sim->geo;
    const dsmc_params *p = &sim->p;
    double sign = p->lb_out[q];
    for (uint32_t k = p->lb_first[q]; k < p->lb_first[q] + p->lb_count[q]; k++) {
        const double *s = g->line_seg + 4 * (size_t)k;
        double dx = s[2] - s[0], dy = s[3] - s[1], len = hypot(dx, dy);
        uint32_t n = g->line_elem[2 * (size_t)k + 1];
        for (uint32_t m = 0; m < n; m++) { /* as the polygon bodies' elements (geometry.c) */
            size_t e = g->line_elem[2 * (size_t)k] + m;
            g->ex[e] = s[0] + dx * (m + 0.5) / n;
            g->ey[e] = s[1] + dy * (m + 0.5) / n;
            g->enx[e] = -sign * dy / len;
            g->eny[e] = sign * dx / len;
            g->elen[e] = len / n;
            if (p->axisym) /* a conical band: pi (r_a + r_b) length */
                g->elen[e] *= 2.0 * DSMC_PI * g->ey[e];
            g->ebody[e] = p->lb_body[q];
        }
    }
}

/* ---- binning ------------------------------------------------------------------------------ */

/* Bins at most: 5 bytes each (start, class), 84 MB. */
#define MAX_BINS ((size_t)1 << 24)

/* The bins: the DSMC cells around every outline body (their box, one cell wider on each side,
 * within the grid), each split k times along each axis, k near the larger cell side over twice
 * the segments' mean length, so that a bin holds a few; at most 16, and fewer while the bins
 * would pass MAX_BINS. */
static void bin_grid(const kedr_dsmc *sim, dsmc_lines *L, int lo[2], int cells[2], int *k)
{
    const dsmc_params *p = &sim->p;
    const dsmc_geometry *g = &sim->geo;
    const double inv[2] = {p->inv_dx, p->inv_dy}, h[2] = {p->dx, p->dy};
    const int n[2] = {p->nx, p->ny};
    double length = 0;
    L->box[0] = L->box[1] = HUGE_VAL;
    L->box[2] = L->box[3] = -HUGE_VAL;
    for (size_t t = 0; t < g->line_nseg; t++) {
        const double *s = g->line_seg + 4 * t;
        for (int d = 0; d < 2; d++) {
            L->box[d] = fmin(L->box[d], fmin(s[d], s[2 + d]));
            L->box[2 + d] = fmax(L->box[2 + d], fmax(s[d], s[2 + d]));
        }
        length += hypot(s[2] - s[0], s[3] - s[1]);
    }
    for (int d = 0; d < 2; d++) {
        int a = (int)floor((L->box[d] - p->lo[d]) * inv[d]) - 1;
        int b = (int)floor((L->box[2 + d] - p->lo[d]) * inv[d]) + 1;
        lo[d] = a < 0 ? 0 : a;
        cells[d] = (b >= n[d] ? n[d] - 1 : b) - lo[d] + 1;
    }
    double kk = ceil(fmax(p->dx, p->dy) / (2.0 * length / (double)g->line_nseg));
    *k = kk < 1 ? 1 : kk > 16 ? 16 : (int)kk;
    while (*k > 1 && (size_t)cells[0] * cells[1] * (size_t)(*k * *k) > MAX_BINS)
        (*k)--;
    for (int d = 0; d < 2; d++) {
        L->n[d] = cells[d] * *k;
        L->h[d] = h[d] / *k;
        L->inv[d] = *k * inv[d];
        L->o[d] = p->lo[d] + lo[d] * h[d];
    }
}

/* Segment t into every bin its box (widened by a millionth of a bin) meets: counts (list NULL)
 * or the list. */
static void bin_segment(const dsmc_lines *L, const double *s, uint32_t t, uint32_t *at,
                        uint32_t *list)
{
    int a0 = dsmc_lines_bin(L, 0, fmin(s[0], s[2]), -1e-6);
    int a1 = dsmc_lines_bin(L, 0, fmax(s[0], s[2]), 1e-6);
    int b0 = dsmc_lines_bin(L, 1, fmin(s[1], s[3]), -1e-6);
    int b1 = dsmc_lines_bin(L, 1, fmax(s[1], s[3]), 1e-6);
    for (int b = b0; b <= b1; b++)
        for (int a = a0; a <= a1; a++) {
            size_t c = (size_t)b * L->n[0] + a;
            if (list)
                list[at[c]++] = t;
            else
                at[c]++;
        }
}

static kedr_status bin(kedr_dsmc *sim, dsmc_lines *L)
{
    dsmc_geometry *g = &sim->geo;
    size_t nb = (size_t)L->n[0] * L->n[1];
    g->line_start = calloc(nb + 1, sizeof(uint32_t));
    g->line_cls = calloc(nb, 1);
    uint32_t *at = calloc(nb + 1, sizeof(uint32_t));
    if (!g->line_start || !g->line_cls || !at) {
        free(at);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory for the %zu bins "
                         "around the outline bodies", nb);
    }
    for (size_t t = 0; t < g->line_nseg; t++)
        bin_segment(L, g->line_seg + 4 * t, (uint32_t)t, at, NULL);
    uint64_t total = 0;
    for (size_t c = 0; c < nb; c++) {
        g->line_start[c] = (uint32_t)total;
        total += at[c];
        at[c] = g->line_start[c];
    }
    if (total > UINT32_MAX) {
        free(at);
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_create: the outline segments meet %llu "
                         "bins (counted once per segment): at most %u",
                         (unsigned long long)total, UINT32_MAX);
    }
    g->line_start[nb] = (uint32_t)total;
    g->line_list = malloc((total ? total : 1) * sizeof(uint32_t));
    if (!g->line_list) {
        free(at);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory for %llu "
                         "bin-segment pairs", (unsigned long long)total);
    }
    for (size_t t = 0; t < g->line_nseg; t++)
        bin_segment(L, g->line_seg + 4 * t, (uint32_t)t, at, g->line_list);
    free(at);
    return KEDR_OK;
}

/* The bins that no segment meets are wholly in the gas or in a body: the crossing number of
 * the ray from the centre (dsmc_inside_lines before cls is set), the same along a row of bins
 * until a met one lies between. */
static void class_bins(kedr_dsmc *sim, const dsmc_params *hp)
{
    dsmc_geometry *g = &sim->geo;
    const dsmc_lines *L = &hp->lines_host;
#pragma omp parallel for schedule(dynamic, 4)
    for (int b = 0; b < L->n[1]; b++) {
        int known = 0;
        uint8_t state = 0;
        for (int a = 0; a < L->n[0]; a++) {
            size_t c = (size_t)b * L->n[0] + a;
            if (g->line_start[c] != g->line_start[c + 1]) {
                known = 0;
                continue;
            }
            if (!known) {
                state = (uint8_t)dsmc_inside_lines(hp, L->o[0] + (a + 0.5) * L->h[0],
                                                   L->o[1] + (b + 0.5) * L->h[1]);
                known = 1;
            }
            g->line_cls[c] = state;
        }
    }
}

/* Whether cell (ix, j) holds a bin that a segment meets; its first bin in *first. */
static int cut_cell(const kedr_dsmc *sim, const dsmc_lines *L, int k, int ix, int j, size_t *first)
{
    const dsmc_params *p = &sim->p;
    const uint32_t *start = sim->geo.line_start;
    /* the cell's bins (the bins' grid covers the bodies' boxes with a cell to spare) */
    int ba = (int)lround((p->lo[0] + ix * p->dx - L->o[0]) * L->inv[0]);
    int bb = (int)lround((p->lo[1] + j * p->dy - L->o[1]) * L->inv[1]);
    *first = (size_t)bb * L->n[0] + ba;
    for (int m = 0; m < k * k; m++) {
        size_t c = (size_t)(bb + m / k) * L->n[0] + (size_t)(ba + m % k);
        if (start[c] != start[c + 1])
            return 1;
    }
    return 0;
}

/* The cells of each outline body's box, a column at a time: a cell that holds a bin some
 * segment meets loses the body's area in it (the outline clipped to the cell's column once, then
 * to the cell: the polygon bodies' clipping, the same operations in the same order), or in an
 * axisymmetric case 2 pi times its integral of y; a cell wholly inside a body is solid. */
static kedr_status cell_volumes(kedr_dsmc *sim, const dsmc_params *hp, int k, int *cut)
{
    dsmc_geometry *g = &sim->geo;
    const dsmc_params *p = &sim->p;
    const dsmc_lines *L = &hp->lines_host;
    for (int q = 0; q < p->nlbodies; q++) {
        uint32_t first = p->lb_first[q], n = p->lb_count[q];
        double *xy = malloc((size_t)n * 2 * sizeof(double)), box[4] = {HUGE_VAL, HUGE_VAL,
                                                                       -HUGE_VAL, -HUGE_VAL};
        if (!xy)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory");
        for (uint32_t i = 0; i < n; i++)
            for (int d = 0; d < 2; d++) {
                xy[2 * i + d] = g->line_seg[4 * (size_t)(first + i) + d];
                box[d] = fmin(box[d], xy[2 * i + d]);
                box[2 + d] = fmax(box[2 + d], xy[2 * i + d]);
            }
        /* the cells of the box, as geometry.c takes a polygon body's */
        int i0 = (int)floor((box[0] - p->lo[0]) * p->inv_dx), i1 = (int)((box[2] - p->lo[0]) * p->inv_dx);
        int j0 = (int)floor((box[1] - p->lo[1]) * p->inv_dy), j1 = (int)((box[3] - p->lo[1]) * p->inv_dy);
        i0 = i0 < 0 ? 0 : i0;
        j0 = j0 < 0 ? 0 : j0;
        i1 = i1 >= p->nx ? p->nx - 1 : i1;
        j1 = j1 >= p->ny ? p->ny - 1 : j1;
        size_t work = 2 * (4 * (size_t)n + 16);
        int failed = 0;
#pragma omp parallel reduction(| : failed)
        {
            double *buf = malloc(4 * work * sizeof(double));
            failed |= buf == NULL;
#pragma omp for schedule(dynamic, 1)
            for (int ix = i0; ix <= i1; ix++) {
                if (!buf)
                    continue;
                double *col = buf, *a = buf + work, *b = buf + 2 * work;
                int m = -1; /* the column's polygon, clipped when a cut cell first needs it */
                double x0 = p->lo[0] + ix * p->dx;
                for (int j = j0; j <= j1; j++) {
                    size_t bin, cell = (size_t)j * p->nx + ix;
                    double *v = &g->gas_host[cell];
                    if (!cut_cell(sim, L, k, ix, j, &bin)) {
                        if (g->line_cls[bin])
                            *v = 0;
                        continue;
                    }
                    if (m < 0)
                        m = dsmc_polygon_clip_column(xy, (int)n, x0, x0 + p->dx, col,
                                                     buf + 3 * work);
                    double y0 = p->lo[1] + j * p->dy;
                    double vol = dsmc_polygon_column_cell(col, m, y0, y0 + p->dy, p->axisym, a, b);
                    if (p->axisym)
                        vol *= 2.0 * M_PI;
                    if (vol > 0) {
                        *v -= vol;
                        *v = *v < DSMC_SOLID * dsmc_cell_full_volume(p, cell) ? 0.0 : *v;
                    }
                }
            }
            free(buf);
        }
        free(xy);
        if (failed)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_create: out of host memory clipping "
                             "body %d's outline", p->lb_body[q] + 1);
    }
    *cut = 1; /* a closed outline inside the domain always cuts some cell */
    return KEDR_OK;
}

static kedr_status to_ctx(kedr_ctx *ctx, void **dst, const void *src, size_t bytes)
{
    KEDR_TRY(kedr_alloc(ctx, dst, bytes ? bytes : 1));
    return bytes ? kedr_upload(ctx, *dst, src, bytes) : KEDR_OK;
}

kedr_status dsmc_lines_finish(kedr_dsmc *sim, int *cut)
{
    dsmc_geometry *g = &sim->geo;
    dsmc_params *p = &sim->p;
    if (g->line_nseg == 0)
        return KEDR_OK;
    dsmc_lines L;
    memset(&L, 0, sizeof L);
    int lo[2], cells[2], k;
    bin_grid(sim, &L, lo, cells, &k);
    KEDR_TRY(bin(sim, &L));
    L.nseg = (uint32_t)g->line_nseg;
    L.seg = g->line_seg;
    L.elem = g->line_elem;
    L.start = g->line_start;
    L.list = g->line_list;
    L.cls = NULL; /* classed below: until then every bin counts crossings */
    L.hash = kedr_fnv1a(KEDR_FNV_START, g->line_seg, g->line_nseg * 4 * sizeof(double));
    p->lines_host = L;
    class_bins(sim, p);
    p->lines_host.cls = g->line_cls;
    KEDR_TRY(cell_volumes(sim, p, k, cut));
    size_t nb = (size_t)L.n[0] * L.n[1];
    kedr_log(KEDR_LOG_INFO, "outline bodies: %zu segments in %d x %d bins (%d a cell side), %u "
             "bin-segment pairs", g->line_nseg, L.n[0], L.n[1], k, g->line_start[nb]);
    kedr_ctx *ctx = sim->ctx;
    KEDR_TRY(to_ctx(ctx, &g->ctx_lseg, g->line_seg, g->line_nseg * 4 * sizeof(double)));
    KEDR_TRY(to_ctx(ctx, &g->ctx_lelem, g->line_elem, g->line_nseg * 2 * sizeof(uint32_t)));
    KEDR_TRY(to_ctx(ctx, &g->ctx_lstart, g->line_start, (nb + 1) * sizeof(uint32_t)));
    KEDR_TRY(to_ctx(ctx, &g->ctx_llist, g->line_list, g->line_start[nb] * sizeof(uint32_t)));
    KEDR_TRY(to_ctx(ctx, &g->ctx_lcls, g->line_cls, nb));
    p->lines = p->lines_host;
    p->lines.seg = g->ctx_lseg;
    p->lines.elem = g->ctx_lelem;
    p->lines.start = g->ctx_lstart;
    p->lines.list = g->ctx_llist;
    p->lines.cls = g->ctx_lcls;
    return KEDR_OK;
}

void dsmc_lines_free(kedr_dsmc *sim)
{
    dsmc_geometry *g = &sim->geo;
    kedr_free(sim->ctx, g->ctx_lseg);
    kedr_free(sim->ctx, g->ctx_lelem);
    kedr_free(sim->ctx, g->ctx_lstart);
    kedr_free(sim->ctx, g->ctx_llist);
    kedr_free(sim->ctx, g->ctx_lcls);
    free(g->line_seg);
    free(g->line_elem);
    free(g->line_start);
    free(g->line_list);
    free(g->line_cls);
}
