/* A rank's per-cell arrays over ranks (ctest runs it alone and under mpirun on 1 to 4): each rank
 * holds the ranges, (sigma g)max and sample sums of its own cells only, so the bytes a rank holds
 * for cells shrink with the rank count and kedr_dsmc_memory counts them; a new split hands every
 * cell's (sigma g)max, sample sums (a mixture's per-species counts among them) and window mark
 * to its new owner, so that the fields and the grid's (sigma g)max are bit for bit those before
 * it; and checkpoints carry them by the grid's cells, to as many ranks and to one. */
#include "kedr/comm.h"
#include "dsmc/exchange.h"
#include "validation/test_dsmc_util.h"

#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static kedr_comm *comm;
static int rank, size;

/* The grid's (sigma g)max, each cell from the rank that owns it (host memory, every rank). */
static float *grid_sgmax(kedr_dsmc *sim)
{
    size_t nc = sim->ncells, nl = sim->nlocal;
    float *g = calloc(nc, sizeof *g), *l = malloc((nl ? nl : 1) * sizeof *l);
    TU_OK(kedr_download(sim->ctx, l, sim->sgmax, nl * sizeof *l));
    dsmc_cells_to_grid(sim, l, g, sizeof *g, 1);
    TU_OK(kedr_comm_allreduce(sim->nranks > 1 ? comm : NULL, KEDR_F32, KEDR_OP_MAX, g, nc));
    free(l);
    return g;
}

/* Every field of the two sets, bit for bit (the columns lie in one block). */
static int same_fields(const kedr_dsmc_fields *a, const kedr_dsmc_fields *b, int ncols)
{
    size_t nc = (size_t)a->nx * (size_t)a->ny * (size_t)a->nz;
    return a->samples == b->samples && a->nx == b->nx && a->ny == b->ny && a->nz == b->nz &&
           a->nspecies == b->nspecies &&
           (!a->nspecies || a->species_density[0] == a->number_density + nc * (size_t)(ncols -
                                                         2 * a->nspecies)) &&
           memcmp(a->number_density, b->number_density, nc * (size_t)ncols * 8) == 0;
}

/* The bytes of the per-cell arrays: each rank's cells only, together the grid's. */
static void check_bytes(kedr_backend b, kedr_dsmc_case c, const char *name)
{
    kedr_ctx *ctx = tu_ctx(b);
    kedr_dsmc *sim = NULL, *solo = NULL;
    TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &sim));
    TU_OK(kedr_dsmc_create(ctx, &c, &solo));
    for (int sums = 0; sums < 2; sums++) {
        size_t before = 0, after = 0;
        TU_OK(kedr_dsmc_memory(sim, &before));
        if (sums) { /* the sample sums: counted as allocated, for the rank's cells */
            TU_OK(dsmc_sample_sums(sim));
            TU_OK(dsmc_sample_sums(solo));
            TU_OK(kedr_dsmc_memory(sim, &after));
            TU_CHECK(after - before == sim->cells_cap * 8 * dsmc_nacc(&sim->p),
                     "%s: rank %d: the sample sums add %zu bytes to kedr_dsmc_memory: expected "
                     "%zu cells of %zu", name, rank, after - before, sim->cells_cap,
                     (size_t)(8 * dsmc_nacc(&sim->p)));
        }
        size_t per = dsmc_cell_slot_bytes(&sim->p, sums);
        double mine = (double)(sim->cells_cap * per), all = mine;
        double one = (double)(solo->cells_cap * per);
        TU_OK(kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_SUM, &all, 1));
        /* a rank's box: at most its share of the grid's cells and a plane of cells across x
         * (the cuts' rounding: about a plane at each; columns: ceil(nx / ranks) of nx) */
        double share = (double)solo->ncells / size + (double)solo->ncells / c.nx;
        TU_CHECK(sim->cells_cap == sim->nlocal && all == one &&
                     mine <= one / (double)solo->ncells * share && (size == 1 || mine < one),
                 "%s over %d ranks%s: rank %d holds %.0f bytes for its %zu cells (room for "
                 "%zu), the ranks %.0f; one rank holds %.0f for the grid's %zu", name, size,
                 sums ? ", sampling" : "", rank, mine, sim->nlocal, sim->cells_cap, all, one,
                 solo->ncells);
        if (rank == 0)
            printf("%s over %d ranks%s: %.0f bytes for a rank's cells, %.0f on one rank\n", name,
                   size, sums ? ", sampling" : "", mine, one);
    }
    kedr_dsmc_destroy(solo);
    kedr_dsmc_destroy(sim);
    kedr_ctx_destroy(ctx);
}

/* A new split (columns, then boxes) carries the cells' (sigma g)max, sums and mark;
 * checkpoints carry them. */
static void check_handover(kedr_backend b, kedr_dsmc_case c, const char *name)
{
    kedr_ctx *ctx = tu_ctx(b);
    kedr_dsmc *sim = NULL;
    c.sample_start = 0;
    c.sample_every = 1;
    c.balance_every = 0; /* the splits below only */
    TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &sim));
    /* the fields' block: 12 columns (13 in a vibrating gas), then a mixture's species
     * densities and fractions */
    const int ncols = (sim->p.vib ? 13 : 12) + 2 * (int)dsmc_acc_nspecies(&sim->p);
    /* a (sigma g)max of its own in every cell, so that a cell given the wrong one shows */
    {
        size_t nl = sim->nlocal;
        float *l = malloc((nl ? nl : 1) * sizeof *l);
        for (size_t k = 0; k < nl; k++)
            l[k] = sim->sg_init * (1.0f + (float)dsmc_cell_global(sim->cmap, (uint32_t)k) /
                                              (float)sim->ncells);
        TU_OK(kedr_upload(ctx, sim->sgmax, l, nl * sizeof *l));
        free(l);
    }
    for (int k = 0; k < 8; k++) {
        TU_OK(kedr_dsmc_step(sim));
        if (k == 3)
            TU_OK(kedr_dsmc_mark_window(sim));
    }
    char what[160];
    snprintf(what, sizeof what, "%s on %s over %d ranks", name,
             b == KEDR_BACKEND_CUDA ? "cuda" : "cpu", size);
    kedr_dsmc_fields f0, w0, f1, w1;
    TU_OK(kedr_dsmc_get_fields(sim, &f0));
    TU_OK(kedr_dsmc_get_window_fields(sim, &w0));
    float *g0 = grid_sgmax(sim);
    /* split again: columns by a load that grows along x (the last ranks get fewer), then boxes
     * (recursive bisection) by a load that falls along x and grows along y */
    int splits = size > 1 ? 2 : 0;
    int n[3] = {c.nx, c.ny, c.dims == 3 ? c.nz : 1};
    for (int t = 0; t < splits; t++) {
        double *load = malloc(sim->ncells * sizeof *load);
        for (size_t g = 0; g < sim->ncells; g++) {
            int i = (int)(g % (size_t)c.nx), j = (int)(g / (size_t)c.nx % (size_t)c.ny);
            load[g] = t == 0 ? 1.0 + i * i : 1.0 + (c.nx - i) * (c.nx - i) + 3 * j * j;
        }
        dsmc_decomp d;
        TU_OK(dsmc_decomp_init(&d, t == 0 ? KEDR_DSMC_SPLIT_X : KEDR_DSMC_SPLIT_RCB, n, size,
                               load));
        free(load);
        dsmc_cellbox want = d.box[rank];
        TU_OK(dsmc_split_to(sim, &d));
        dsmc_cellmap m = sim->cmap;
        TU_CHECK((int)m.x0 == want.lo[0] && (int)m.y0 == want.lo[1] && (int)m.z0 == want.lo[2] &&
                     (int)(m.x0 + m.wx) == want.hi[0] && (int)(m.y0 + m.wy) == want.hi[1] &&
                     (int)(m.z0 + m.wz) == want.hi[2] &&
                     sim->nlocal == (size_t)m.wx * m.wy * m.wz && sim->cells_cap >= sim->nlocal,
                 "%s, split %d: rank %d has cells from %u, %u, %u, %u x %u x %u (%zu cells, room "
                 "for %zu): expected %d, %d, %d to %d, %d, %d", what, t, rank, m.x0, m.y0, m.z0,
                 m.wx, m.wy, m.wz, sim->nlocal, sim->cells_cap, want.lo[0], want.lo[1],
                 want.lo[2], want.hi[0], want.hi[1], want.hi[2]);
        TU_OK(kedr_dsmc_get_fields(sim, &f1));
        TU_OK(kedr_dsmc_get_window_fields(sim, &w1));
        float *g1 = grid_sgmax(sim);
        TU_CHECK(same_fields(&f0, &f1, ncols) && same_fields(&w0, &w1, ncols),
                 "%s, split %d: the fields (since the start and since the mark) are not those "
                 "before the split", what, t);
        TU_CHECK(memcmp(g0, g1, sim->ncells * sizeof *g0) == 0,
                 "%s, split %d: the grid's (sigma g)max is not that before the split", what, t);
        kedr_dsmc_fields_free(&f1);
        kedr_dsmc_fields_free(&w1);
        free(g1);
    }
    /* a step on the new split, then its checkpoint: over as many ranks and over one */
    TU_OK(kedr_dsmc_step(sim));
    kedr_dsmc_fields_free(&f0);
    kedr_dsmc_fields_free(&w0);
    free(g0);
    TU_OK(kedr_dsmc_get_fields(sim, &f0));
    TU_OK(kedr_dsmc_get_window_fields(sim, &w0));
    g0 = grid_sgmax(sim);
    char dir[] = "/tmp/kedr-cells-XXXXXX", path[160];
    int ok = rank != 0 || mkdtemp(dir) != NULL;
    TU_CHECK(ok, "a temporary folder");
    TU_OK(kedr_comm_bcast(comm, dir, sizeof dir, 0));
    snprintf(path, sizeof path, "%s/r%dof%d.chk", dir, rank, size);
    TU_OK(kedr_dsmc_write_checkpoint(sim, path));
    TU_OK(kedr_comm_barrier(comm));
    char **files = calloc((size_t)size, sizeof *files);
    for (int k = 0; k < size; k++) {
        files[k] = malloc(160);
        snprintf(files[k], 160, "%s/r%dof%d.chk", dir, k, size);
    }
    kedr_dsmc *r = NULL;
    TU_OK(kedr_dsmc_restart_files(ctx, &c, comm, size, (const char *const *)files, &r));
    TU_OK(kedr_dsmc_get_fields(r, &f1));
    TU_OK(kedr_dsmc_get_window_fields(r, &w1));
    float *g1 = grid_sgmax(r);
    TU_CHECK(r->nlocal == sim->nlocal && memcmp(&r->cmap, &sim->cmap, sizeof r->cmap) == 0 &&
                 same_fields(&f0, &f1, ncols) && same_fields(&w0, &w1, ncols) &&
                 memcmp(g0, g1, sim->ncells * sizeof *g0) == 0,
             "%s: restarted over as many ranks: other fields, (sigma g)max or split", what);
    kedr_dsmc_fields_free(&f1);
    kedr_dsmc_fields_free(&w1);
    free(g1);
    kedr_dsmc_destroy(r);
    if (rank == 0) { /* every rank's file gathered on one */
        kedr_dsmc *one = NULL;
        TU_OK(kedr_dsmc_restart_files(ctx, &c, NULL, size, (const char *const *)files, &one));
        TU_OK(kedr_dsmc_get_fields(one, &f1));
        TU_OK(kedr_dsmc_get_window_fields(one, &w1));
        float *gs = malloc(one->ncells * sizeof *gs);
        TU_OK(kedr_download(ctx, gs, one->sgmax, one->ncells * sizeof *gs));
        TU_CHECK(one->nlocal == one->ncells && same_fields(&f0, &f1, ncols) &&
                     same_fields(&w0, &w1, ncols) &&
                     memcmp(g0, gs, one->ncells * sizeof *g0) == 0,
                 "%s: the %d files gathered on one rank: other fields or (sigma g)max", what,
                 size);
        kedr_dsmc_fields_free(&f1);
        kedr_dsmc_fields_free(&w1);
        free(gs);
        kedr_dsmc_destroy(one);
    }
    TU_OK(kedr_comm_barrier(comm));
    if (rank == 0) {
        for (int k = 0; k < size; k++)
            unlink(files[k]);
        rmdir(dir);
    }
    for (int k = 0; k < size; k++)
        free(files[k]);
    free(files);
    kedr_dsmc_fields_free(&f0);
    kedr_dsmc_fields_free(&w0);
    free(g0);
    kedr_dsmc_destroy(sim);
    kedr_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    TU_OK(kedr_comm_init(&argc, &argv, &comm));
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int bi = 0; bi < nb; bi++) {
        /* 2D: a channel of nitrogen and a hard-sphere gas whose inflow crowds the first columns */
        kedr_dsmc_case c = dt_box(1e-3, 13, 1e21, 300, 20, 2e-7);
        c.nspecies = 2;
        c.species[1] = dt_nitrogen();
        c.fraction[0] = 0.3;
        c.fraction[1] = 0.7;
        c.side[0] = KEDR_DSMC_INFLOW;
        c.side[1] = KEDR_DSMC_OUTFLOW;
        c.velocity[0] = 700;
        check_bytes(list[bi], c, "2D channel");
        check_handover(list[bi], c, "2D channel");
        /* 3D, one species */
        kedr_dsmc_case c3 = dt_box(1e-3, 9, 1e21, 300, 8, 2e-7);
        c3.dims = 3;
        c3.nz = 7;
        c3.hi[2] = 1e-3;
        c3.weight *= 1e-3 / 7;
        for (int s = 4; s < 6; s++)
            c3.side[s] = KEDR_DSMC_SPECULAR;
        c3.side[0] = KEDR_DSMC_INFLOW;
        c3.side[1] = KEDR_DSMC_OUTFLOW;
        c3.velocity[0] = 700;
        check_bytes(list[bi], c3, "3D channel");
        check_handover(list[bi], c3, "3D channel");
    }
    int failed = tu_failed;
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MAX, &failed, 1));
    int rc = tu_finish("test_dsmc_cells");
    kedr_comm_finalize(comm);
    return rc ? rc : failed != 0;
}
