/* The split of a DSMC grid between ranks (dsmc_decomp, sim.h): the tree of cuts (recursive
 * coordinate bisection, or columns along x), this rank's cells and the per-cell arrays sized
 * for them, and a new split taken when the load moves (dsmc_balance) or the case asks for
 * another kind (dsmc_split_kind): each rank's cells handed over, the particles sent by the
 * exchange (exchange.c). */
#include "exchange.h"

#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for a split of nranks over the grid n (kind), its arrays unset. */
static kedr_status decomp_alloc(dsmc_decomp *d, int kind, const int n[3], int nranks)
{
    memset(d, 0, sizeof *d);
    if (nranks < 1 || n[0] < 1 || n[1] < 1 || n[2] < 1)
        return kedr_fail(KEDR_ERR_INVALID, "dsmc_decomp: %d ranks over a grid of %d x %d x %d "
                         "cells", nranks, n[0], n[1], n[2]);
    d->cut = nranks > 1 ? malloc((size_t)(nranks - 1) * sizeof *d->cut) : NULL;
    d->box = malloc((size_t)nranks * sizeof *d->box);
    if ((nranks > 1 && !d->cut) || !d->box) {
        dsmc_decomp_free(d);
        return kedr_fail(KEDR_ERR_NOMEM, "dsmc_decomp: no memory for %d ranks", nranks);
    }
    d->nranks = nranks;
    d->kind = kind;
    for (int a = 0; a < 3; a++)
        d->n[a] = n[a];
    return KEDR_OK;
}

static dsmc_cellbox grid_box(const int n[3])
{
    dsmc_cellbox b = {{0, 0, 0}, {n[0], n[1], n[2]}};
    return b;
}

/* Slabs: ranks r0 .. r0 + m - 1 own the columns col0[r0] .. col0[r0 + m] - 1, cut in halves of
 * the rank count (so that the walk takes about log2 m steps). *code: the node or leaf made. */
static void slab_tree(dsmc_decomp *d, const int32_t *col0, int r0, int m, int *next, int32_t *code)
{
    if (m == 1) {
        dsmc_cellbox b = grid_box(d->n);
        b.lo[0] = col0[r0];
        b.hi[0] = col0[r0 + 1];
        d->box[r0] = b;
        *code = -1 - r0;
        return;
    }
    int node = (*next)++, half = m / 2;
    d->cut[node].axis = 0;
    d->cut[node].cut = col0[r0 + half];
    slab_tree(d, col0, r0, half, next, &d->cut[node].lo);
    slab_tree(d, col0, r0 + half, m - half, next, &d->cut[node].hi);
    *code = node;
}

kedr_status dsmc_decomp_from(dsmc_decomp *d, const int n[3], int nranks, const int32_t *col0)
{
    KEDR_TRY(decomp_alloc(d, KEDR_DSMC_SPLIT_X, n, nranks));
    for (int r = 0; r < nranks; r++)
        if (col0[r] < (r ? 1 : 0) || col0[r + 1] <= col0[r] || col0[nranks] != n[0] ||
            col0[0] != 0) {
            dsmc_decomp_free(d);
            return kedr_fail(KEDR_ERR_INVALID, "dsmc_decomp_from: column starts of rank %d: %d to "
                             "%d of %d columns", r, col0[r], col0[r + 1], n[0]);
        }
    int next = 0;
    int32_t root;
    slab_tree(d, col0, 0, nranks, &next, &root);
    return KEDR_OK;
}

kedr_status dsmc_decomp_columns(dsmc_decomp *d, const int n[3], int nranks, const double *load)
{
    memset(d, 0, sizeof *d);
    int nx = n[0];
    if (nranks > nx)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc: %d ranks but the grid (%d x %d x %d cells) "
                         "has %d columns of cells along x: [run] split = x needs at most %d "
                         "ranks; use fewer ranks, a finer grid or split = rcb", nranks, n[0], n[1],
                         n[2], nx, nx);
    if (nranks < 1 || nx < 1)
        return kedr_fail(KEDR_ERR_INVALID, "dsmc_decomp_columns: %d ranks over %d columns",
                         nranks, nx);
    int32_t *col0 = malloc((size_t)(nranks + 1) * sizeof *col0);
    if (!col0)
        return kedr_fail(KEDR_ERR_NOMEM, "dsmc_decomp: no memory for %d ranks", nranks);
    double total = 0;
    for (int i = 0; i < nx; i++)
        total += load ? (load[i] > 0 ? load[i] : 0) : 1.0;
    /* Rank r ends where the running load first reaches (r + 1) / nranks of the total, leaving
     * at least one column to each rank after it. */
    col0[0] = 0;
    double run = 0;
    int col = 0;
    for (int r = 0; r < nranks - 1; r++) {
        double target = total * (r + 1) / nranks;
        int last = nx - (nranks - 1 - r); /* the first column rank r must leave to the others */
        if (col < col0[r] + 1)
            run += load ? (load[col] > 0 ? load[col] : 0) : 1.0, col++; /* one column at least */
        while (col < last && run + (load ? (load[col] > 0 ? load[col] : 0) : 1.0) / 2 <= target)
            run += load ? (load[col] > 0 ? load[col] : 0) : 1.0, col++;
        col0[r + 1] = col;
    }
    col0[nranks] = nx;
    kedr_status s = dsmc_decomp_from(d, n, nranks, col0);
    free(col0);
    return s;
}

/* The load of cell (i, j, k): load[cell], never below 0; every cell 1 without loads. */
static double cell_load(const double *load, const int n[3], int i, int j, int k)
{
    if (!load)
        return 1.0;
    double v = load[(size_t)i + (size_t)n[0] * ((size_t)j + (size_t)n[1] * (size_t)k)];
    return v > 0 ? v : 0.0;
}

/* Recursive coordinate bisection of box b between ranks r0 .. r0 + m - 1: m / 2 ranks below
 * the cut and the rest above it; the axis is the one of most cells across the box (the lowest
 * of equals), else the next that can be cut so that each side has at least a cell a rank; the
 * cut is the cell plane where the running load along that axis comes nearest to m / 2 / m of
 * the box's load (a plane goes below while half of it stays under that share). */
static kedr_status rcb(dsmc_decomp *d, dsmc_cellbox b, int r0, int m, const double *load,
                       double *plane, int *next, int32_t *code)
{
    if (m == 1) {
        d->box[r0] = b;
        *code = -1 - r0;
        return KEDR_OK;
    }
    int ml = m / 2, mr = m - ml, ext[3], order[3] = {0, 1, 2};
    for (int a = 0; a < 3; a++)
        ext[a] = b.hi[a] - b.lo[a];
    for (int x = 0; x < 3; x++) /* by extent, largest first; stable */
        for (int y = 2; y > x; y--)
            if (ext[order[y]] > ext[order[y - 1]]) {
                int t = order[y];
                order[y] = order[y - 1];
                order[y - 1] = t;
            }
    int64_t cells = (int64_t)ext[0] * ext[1] * ext[2];
    for (int o = 0; o < 3; o++) {
        int a = order[o];
        if (ext[a] < 2)
            continue;
        int64_t across = cells / ext[a]; /* cells of one plane */
        int pmin = (int)((ml + across - 1) / across), pmax = ext[a] - (int)((mr + across - 1) / across);
        if (pmin > pmax)
            continue;
        double total = 0;
        for (int p = 0; p < ext[a]; p++)
            plane[p] = 0;
        for (int k = b.lo[2]; k < b.hi[2]; k++)
            for (int j = b.lo[1]; j < b.hi[1]; j++)
                for (int i = b.lo[0]; i < b.hi[0]; i++) {
                    int idx[3] = {i, j, k};
                    plane[idx[a] - b.lo[a]] += cell_load(load, d->n, i, j, k);
                }
        for (int p = 0; p < ext[a]; p++)
            total += plane[p];
        double target = total * ml / m, run = 0;
        int p = 0;
        while (p < pmax && (p < pmin || run + plane[p] / 2 <= target))
            run += plane[p++];
        int node = (*next)++;
        d->cut[node].axis = a;
        d->cut[node].cut = b.lo[a] + p;
        dsmc_cellbox lo = b, hi = b;
        lo.hi[a] = hi.lo[a] = b.lo[a] + p;
        KEDR_TRY(rcb(d, lo, r0, ml, load, plane, next, &d->cut[node].lo));
        KEDR_TRY(rcb(d, hi, r0 + ml, mr, load, plane, next, &d->cut[node].hi));
        *code = node;
        return KEDR_OK;
    }
    return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc: %d ranks cannot split the grid of %d x %d x %d "
                     "cells by recursive bisection ([run] split = rcb): a box of %d x %d x %d "
                     "cells is left to %d ranks and cannot be cut so that each has a cell; use "
                     "fewer ranks or a finer grid", d->nranks, d->n[0], d->n[1], d->n[2], ext[0],
                     ext[1], ext[2], m);
}

kedr_status dsmc_decomp_init(dsmc_decomp *d, int kind, const int n[3], int nranks,
                             const double *load)
{
    memset(d, 0, sizeof *d);
    if (kind == KEDR_DSMC_SPLIT_X) {
        double *col = NULL;
        if (load) { /* the cells' loads summed per column */
            col = calloc((size_t)n[0], sizeof *col);
            if (!col)
                return kedr_fail(KEDR_ERR_NOMEM, "dsmc_decomp: no memory for %d columns", n[0]);
            for (int k = 0; k < n[2]; k++)
                for (int j = 0; j < n[1]; j++)
                    for (int i = 0; i < n[0]; i++)
                        col[i] += cell_load(load, n, i, j, k);
        }
        kedr_status s = dsmc_decomp_columns(d, n, nranks, col);
        free(col);
        return s;
    }
    if (kind != KEDR_DSMC_SPLIT_RCB)
        return kedr_fail(KEDR_ERR_INVALID, "dsmc_decomp_init: split kind %d", kind);
    int64_t cells = (int64_t)n[0] * n[1] * n[2];
    if (n[0] >= 1 && n[1] >= 1 && n[2] >= 1 && nranks > cells)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc: %d ranks but the grid has %lld cells (%d x "
                         "%d x %d): each rank needs a cell at least; use at most %lld ranks, or a "
                         "finer grid", nranks, (long long)cells, n[0], n[1], n[2],
                         (long long)cells);
    KEDR_TRY(decomp_alloc(d, KEDR_DSMC_SPLIT_RCB, n, nranks));
    int most = n[0] > n[1] ? n[0] : n[1];
    most = most > n[2] ? most : n[2];
    double *plane = malloc((size_t)most * sizeof *plane);
    if (!plane) {
        dsmc_decomp_free(d);
        return kedr_fail(KEDR_ERR_NOMEM, "dsmc_decomp: no memory");
    }
    int next = 0;
    int32_t root;
    kedr_status s = rcb(d, grid_box(n), 0, nranks, load, plane, &next, &root);
    free(plane);
    if (s != KEDR_OK)
        dsmc_decomp_free(d);
    return s;
}

/* Checks node `node` of the tree within box b (seen: nodes and ranks met so far) and sets the
 * boxes of its ranks. */
static kedr_status check_node(dsmc_decomp *d, int32_t code, dsmc_cellbox b, char *seen,
                              const char *what)
{
    int nr = d->nranks;
    if (code < 0) {
        int64_t r = -1 - (int64_t)code;
        if (r >= nr || seen[nr - 1 + r])
            return kedr_fail(KEDR_ERR_PARSE, "%s: the split names rank %lld %s", what,
                             (long long)r, r >= nr ? "beyond the rank count" : "twice");
        seen[nr - 1 + r] = 1;
        d->box[r] = b;
        return KEDR_OK;
    }
    if (code >= nr - 1 || seen[code])
        return kedr_fail(KEDR_ERR_PARSE, "%s: the split's node %d %s", what, code,
                         code >= nr - 1 ? "is beyond its nodes" : "is reached twice");
    seen[code] = 1;
    dsmc_cut c = d->cut[code];
    if (c.axis < 0 || c.axis > 2 || c.cut <= b.lo[c.axis] || c.cut >= b.hi[c.axis])
        return kedr_fail(KEDR_ERR_PARSE, "%s: the split's node %d cuts axis %d at cell %d: expected "
                         "an axis 0 to 2 and a plane inside its box of cells (%d to %d)", what,
                         code, c.axis, c.cut, c.axis >= 0 && c.axis <= 2 ? b.lo[c.axis] + 1 : 0,
                         c.axis >= 0 && c.axis <= 2 ? b.hi[c.axis] - 1 : 0);
    dsmc_cellbox lo = b, hi = b;
    lo.hi[c.axis] = hi.lo[c.axis] = c.cut;
    KEDR_TRY(check_node(d, c.lo, lo, seen, what));
    return check_node(d, c.hi, hi, seen, what);
}

kedr_status dsmc_decomp_from_cuts(dsmc_decomp *d, int kind, const int n[3], int nranks,
                                  const dsmc_cut *cut, const char *what)
{
    KEDR_TRY(decomp_alloc(d, kind, n, nranks));
    if (nranks == 1) {
        d->box[0] = grid_box(n);
        return KEDR_OK;
    }
    memcpy(d->cut, cut, (size_t)(nranks - 1) * sizeof *cut);
    char *seen = calloc((size_t)(2 * nranks), 1);
    kedr_status s = seen ? check_node(d, 0, grid_box(n), seen, what)
                         : kedr_fail(KEDR_ERR_NOMEM, "dsmc_decomp: no memory");
    for (int k = 0; s == KEDR_OK && k < 2 * nranks - 1; k++)
        if (!seen[k])
            s = kedr_fail(KEDR_ERR_PARSE, "%s: the split leaves %s %d out", what,
                          k < nranks - 1 ? "node" : "rank", k < nranks - 1 ? k : k - nranks + 1);
    free(seen);
    if (s != KEDR_OK)
        dsmc_decomp_free(d);
    return s;
}

int dsmc_decomp_same(const dsmc_decomp *a, const dsmc_decomp *b)
{
    if (a->nranks != b->nranks || memcmp(a->n, b->n, sizeof a->n) != 0)
        return 0;
    for (int r = 0; r < a->nranks; r++)
        if (memcmp(&a->box[r], &b->box[r], sizeof a->box[r]) != 0)
            return 0;
    return 1;
}

void dsmc_decomp_free(dsmc_decomp *d)
{
    free(d->cut);
    free(d->box);
    memset(d, 0, sizeof *d);
}

void dsmc_cells_mine(kedr_dsmc *sim)
{
    uint32_t nx = (uint32_t)sim->p.nx, ny = (uint32_t)sim->p.ny, nz = (uint32_t)sim->p.nz;
    sim->cmap = (dsmc_cellmap){0, 0, 0, nx, ny, nz, nx, ny, 1};
    if (sim->nranks > 1 && !sim->whole_grid && sim->decomp.box) {
        const dsmc_cellbox *b = &sim->decomp.box[sim->rank];
        sim->cmap.x0 = (uint32_t)b->lo[0];
        sim->cmap.y0 = (uint32_t)b->lo[1];
        sim->cmap.z0 = (uint32_t)b->lo[2];
        sim->cmap.wx = (uint32_t)(b->hi[0] - b->lo[0]);
        sim->cmap.wy = (uint32_t)(b->hi[1] - b->lo[1]);
        sim->cmap.wz = (uint32_t)(b->hi[2] - b->lo[2]);
        sim->cmap.all = sim->cmap.wx == nx && sim->cmap.wy == ny && sim->cmap.wz == nz;
    }
    sim->nlocal = (size_t)sim->cmap.wx * sim->cmap.wy * sim->cmap.wz;
    if (sim->keys_local) /* keys made local to another split: located again when needed */
        sim->located = 0;
    sim->keys_local = 0;
    sim->xtiles_n = 0;
}

kedr_status dsmc_cells_room(kedr_dsmc *sim)
{
    size_t nl = sim->nlocal ? sim->nlocal : 1;
    if (nl <= sim->cells_cap && sim->starts)
        return KEDR_OK;
    kedr_ctx *ctx = sim->ctx;
    int sums = sim->acc != NULL;
    size_t nacc = dsmc_nacc(&sim->p);
    kedr_free(ctx, sim->starts);
    kedr_free(ctx, sim->counts);
    kedr_free(ctx, sim->sgmax);
    kedr_free(ctx, sim->acc);
    free(sim->mark);
    sim->starts = sim->counts = NULL;
    sim->sgmax = NULL;
    sim->acc = sim->mark = NULL;
    sim->cells_cap = 0;
    float *h = malloc(nl * sizeof *h);
    kedr_status s = h ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: out of host memory for "
                                            "%zu cells", nl);
    if (s == KEDR_OK) s = kedr_alloc(ctx, (void **)&sim->starts, nl * 4);
    if (s == KEDR_OK) s = kedr_alloc(ctx, (void **)&sim->counts, nl * 4);
    if (s == KEDR_OK) s = kedr_alloc(ctx, (void **)&sim->sgmax, nl * sizeof *sim->sgmax);
    if (s == KEDR_OK) {
        for (size_t i = 0; i < nl; i++)
            h[i] = sim->sg_init;
        s = kedr_upload(ctx, sim->sgmax, h, nl * sizeof *h);
    }
    free(h);
    if (s == KEDR_OK && sums)
        s = kedr_alloc(ctx, (void **)&sim->acc, nl * 8 * nacc);
    if (s == KEDR_OK && sums)
        s = kedr_memset(ctx, sim->acc, 0, nl * 8 * nacc);
    if (s == KEDR_OK)
        sim->cells_cap = nl;
    return s;
}

void dsmc_cells_to_grid(const kedr_dsmc *sim, const void *local, void *grid, size_t elem,
                        size_t rows)
{
    size_t nc = sim->ncells, nl = sim->nlocal;
    for (size_t k = 0; k < rows; k++)
        for (size_t c = 0; c < nl; c++) {
            uint32_t g = dsmc_cell_global(sim->cmap, (uint32_t)c);
            if (dsmc_owns_cell(sim, g))
                memcpy((char *)grid + (k * nc + g) * elem, (const char *)local + (k * nl + c) * elem,
                       elem);
        }
}

void dsmc_cells_from_grid(const kedr_dsmc *sim, const void *grid, void *local, size_t elem,
                          size_t rows, int own_only)
{
    size_t nc = sim->ncells, nl = sim->nlocal;
    for (size_t k = 0; k < rows; k++)
        for (size_t c = 0; c < nl; c++) {
            uint32_t g = dsmc_cell_global(sim->cmap, (uint32_t)c);
            char *to = (char *)local + (k * nl + c) * elem;
            if (own_only && !dsmc_owns_cell(sim, g))
                memset(to, 0, elem);
            else
                memcpy(to, (const char *)grid + (k * nc + g) * elem, elem);
        }
}

kedr_status dsmc_decomp_adopt(kedr_dsmc *sim, dsmc_decomp *d)
{
    dsmc_decomp_free(&sim->decomp);
    sim->decomp = *d;
    memset(d, 0, sizeof *d);
    dsmc_cells_mine(sim);
    if (sim->xowner) { /* the GPU's copy of the owners is made again when next needed */
        kedr_free(sim->ctx, sim->xowner);
        sim->xowner = NULL;
    }
    return dsmc_cells_room(sim);
}

/* A new split d for the rank's per-cell arrays: every rank puts its own cells' (sigma g)max,
 * sample sums and window mark into arrays of the grid (the other cells at sg_init and zero),
 * which are combined over the ranks (the largest and the sum: each cell is one rank's), and
 * takes its cells of the new split from them. Collective. */
static kedr_status cells_handover(kedr_dsmc *sim, dsmc_decomp *d)
{
    size_t nc = sim->ncells, nl = sim->nlocal, nacc = dsmc_nacc(&sim->p);
    int sums = sim->acc != NULL, marked = sim->mark != NULL;
    size_t most = nl > nc ? nl : nc;
    float *sg = malloc(nc * sizeof *sg);
    double *acc = sums ? calloc(nc * nacc, sizeof *acc) : NULL;
    double *mark = marked ? calloc(nc * nacc, sizeof *mark) : NULL;
    void *loc = malloc(most * nacc * sizeof(double));
    kedr_status s = sg && loc && (acc || !sums) && (mark || !marked)
                        ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "dsmc_balance: no host memory for "
                                              "the sums of %zu cells", nc);
    if (s == KEDR_OK) {
        for (size_t i = 0; i < nc; i++)
            sg[i] = sim->sg_init;
        s = kedr_download(sim->ctx, loc, sim->sgmax, nl * sizeof *sg);
    }
    if (s == KEDR_OK) {
        dsmc_cells_to_grid(sim, loc, sg, sizeof *sg, 1);
        if (sums)
            s = kedr_download(sim->ctx, loc, sim->acc, nl * nacc * sizeof *acc);
    }
    if (s == KEDR_OK && sums)
        dsmc_cells_to_grid(sim, loc, acc, sizeof *acc, nacc);
    if (s == KEDR_OK && marked)
        dsmc_cells_to_grid(sim, sim->mark, mark, sizeof *mark, nacc);
    s = kedr_comm_agree(sim->comm, s);
    if (s == KEDR_OK)
        s = kedr_comm_allreduce(sim->comm, KEDR_F32, KEDR_OP_MAX, sg, nc);
    if (s == KEDR_OK && sums)
        s = kedr_comm_allreduce(sim->comm, KEDR_F64, KEDR_OP_SUM, acc, nc * nacc);
    if (s == KEDR_OK && marked)
        s = kedr_comm_allreduce(sim->comm, KEDR_F64, KEDR_OP_SUM, mark, nc * nacc);
    if (s == KEDR_OK)
        s = dsmc_decomp_adopt(sim, d);
    else
        dsmc_decomp_free(d);
    nl = sim->nlocal;
    if (s == KEDR_OK) {
        dsmc_cells_from_grid(sim, sg, loc, sizeof *sg, 1, 0);
        s = kedr_upload(sim->ctx, sim->sgmax, loc, nl * sizeof *sg);
    }
    if (s == KEDR_OK && sums && !sim->acc)
        s = dsmc_sample_sums(sim);
    if (s == KEDR_OK && sums) {
        dsmc_cells_from_grid(sim, acc, loc, sizeof *acc, nacc, 1);
        s = kedr_upload(sim->ctx, sim->acc, loc, nl * nacc * sizeof *acc);
    }
    if (s == KEDR_OK && marked) {
        double *m = realloc(sim->mark, (nl ? nl : 1) * nacc * sizeof *m);
        s = m ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "dsmc_balance: no host memory for the "
                                    "window's mark");
        if (m) {
            sim->mark = m;
            dsmc_cells_from_grid(sim, mark, m, sizeof *m, nacc, 1);
        }
    }
    free(sg);
    free(acc);
    free(mark);
    free(loc);
    return s;
}

/* The load of every cell of the grid, added over the ranks (collective): its particles
 * (counts: the rank's local cells' counts, or NULL: none known) plus one. */
static kedr_status cell_loads(kedr_dsmc *sim, const uint32_t *counts, double **out)
{
    size_t nc = sim->ncells;
    double *load = calloc(nc, sizeof *load);
    kedr_status s = load ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: no host memory for "
                                               "the loads of %zu cells", nc);
    for (size_t i = 0; s == KEDR_OK && counts && i < sim->nlocal; i++)
        load[dsmc_cell_global(sim->cmap, (uint32_t)i)] += counts[i];
    s = kedr_comm_agree(sim->comm, s);
    if (s == KEDR_OK && counts)
        s = kedr_comm_allreduce(sim->comm, KEDR_F64, KEDR_OP_SUM, load, nc);
    for (size_t i = 0; s == KEDR_OK && i < nc; i++)
        load[i] += 1.0;
    if (s != KEDR_OK) {
        free(load);
        load = NULL;
    }
    *out = load;
    return s;
}

kedr_status dsmc_split_kind(kedr_dsmc *sim)
{
    if (sim->nranks <= 1 || sim->decomp.kind == (int)sim->c.split)
        return KEDR_OK;
    size_t nl = sim->nlocal;
    int indexed = dsmc_indexed_all(sim);
    uint32_t *counts = indexed ? malloc((nl ? nl : 1) * sizeof *counts) : NULL;
    kedr_status s = counts || !indexed ? KEDR_OK
                                       : kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc: no host memory "
                                                   "for %zu cells", nl);
    if (s == KEDR_OK && indexed)
        s = kedr_download(sim->ctx, counts, sim->counts, nl * sizeof *counts);
    int32_t all = indexed && s == KEDR_OK; /* loads from the counts where every rank has them */
    s = kedr_comm_agree(sim->comm, s);
    if (s == KEDR_OK)
        s = kedr_comm_allreduce(sim->comm, KEDR_I32, KEDR_OP_MIN, &all, 1);
    double *load = NULL;
    if (s == KEDR_OK)
        s = cell_loads(sim, all ? counts : NULL, &load);
    free(counts);
    dsmc_decomp d;
    memset(&d, 0, sizeof d);
    if (s == KEDR_OK)
        s = dsmc_decomp_init(&d, (int)sim->c.split, sim->decomp.n, sim->nranks, load);
    free(load);
    s = kedr_comm_agree(sim->comm, s);
    if (s != KEDR_OK) {
        dsmc_decomp_free(&d);
        return s;
    }
    return dsmc_split_to(sim, &d);
}

kedr_status dsmc_balance(kedr_dsmc *sim, int *moved)
{
    *moved = 0;
    if (sim->nranks <= 1)
        return KEDR_OK;
    if (!sim->sorted)
        return kedr_fail(KEDR_ERR_INVALID, "dsmc_balance: the particles are not indexed");
    int nranks = sim->nranks;
    size_t nl = sim->nlocal;
    uint32_t *counts = malloc((nl ? nl : 1) * sizeof *counts);
    double *rank_load = calloc((size_t)nranks, sizeof *rank_load), *load = NULL;
    kedr_status s = counts && rank_load ? KEDR_OK
                                        : kedr_fail(KEDR_ERR_NOMEM, "dsmc_balance: no host "
                                                    "memory for %zu cells", nl);
    if (s == KEDR_OK)
        s = kedr_download(sim->ctx, counts, sim->counts, nl * sizeof *counts);
    /* each rank's load: its particles, plus one for each cell of its box (a cell's own work:
     * about one particle's); added over the ranks (integers: exact in any order) */
    if (s == KEDR_OK) {
        for (size_t i = 0; i < nl; i++)
            rank_load[sim->rank] += counts[i];
        s = kedr_comm_allreduce(sim->comm, KEDR_F64, KEDR_OP_SUM, rank_load, (size_t)nranks);
    }
    s = kedr_comm_agree(sim->comm, s);
    int unbalanced = 0;
    if (s == KEDR_OK) {
        double total = 0, most = 0;
        for (int r = 0; r < nranks; r++) {
            const dsmc_cellbox *b = &sim->decomp.box[r];
            rank_load[r] += (double)(b->hi[0] - b->lo[0]) * (double)(b->hi[1] - b->lo[1]) *
                            (double)(b->hi[2] - b->lo[2]);
            total += rank_load[r];
            most = rank_load[r] > most ? rank_load[r] : most;
        }
        unbalanced = most > total / nranks * (1 + sim->c.balance_tolerance);
    }
    /* only then the load of every cell of the grid, over the ranks, and a split by it */
    dsmc_decomp d;
    memset(&d, 0, sizeof d);
    int change = 0;
    if (s == KEDR_OK && unbalanced) {
        s = cell_loads(sim, counts, &load);
        if (s == KEDR_OK) {
            s = dsmc_decomp_init(&d, (int)sim->c.split, sim->decomp.n, nranks, load);
            if (s == KEDR_ERR_INVALID) /* no split of these loads gives each rank a cell (the
                                        * first split did): the ranks keep theirs */
                s = KEDR_OK;
        }
        change = s == KEDR_OK && d.box && !dsmc_decomp_same(&d, &sim->decomp);
    }
    free(counts);
    free(rank_load);
    free(load);
    if (s != KEDR_OK || !change) {
        dsmc_decomp_free(&d);
        return s;
    }
    /* every rank computed the same split from the same sums */
    s = dsmc_split_to(sim, &d);
    if (s == KEDR_OK)
        *moved = 1;
    return s;
}

kedr_status dsmc_split_to(kedr_dsmc *sim, dsmc_decomp *d)
{
    kedr_status s = cells_handover(sim, d);
    s = kedr_comm_agree(sim->comm, s);
    if (s == KEDR_OK)
        s = dsmc_exchange(sim, sim->comm, &sim->decomp, NULL);
    return s;
}
