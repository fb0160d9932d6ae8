/* The DSMC exchange stage on any number of ranks (ctest runs it alone and under mpirun on 1 to
 * 4): column decompositions of random loads; then, on every back end, a box's particles dealt
 * round-robin to the ranks, exchanged, moved and exchanged again. After each exchange every
 * particle lies in a column of its rank, its cell key is right, and all ranks together hold
 * exactly the particles they held before, bit for bit (2D with two species and rotational
 * energies, and 3D). Then whole simulators over the ranks (kedr_dsmc_create_on) against one,
 * and each rank's own cells against every rank walking the whole grid; and the exchange's records
 * GPU to GPU against through the host. */
#include "kedr/comm.h"
#include "dsmc/exchange.h"
#include "validation/test_dsmc_util.h"

#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static kedr_comm *comm;
static int rank, size;

static void check_decomp(void)
{
    uint64_t st = 99;
    for (int trial = 0; trial < 200; trial++) {
        int nx = 1 + (int)(tu_next(&st) % 40);
        int nr = 1 + (int)(tu_next(&st) % (nx < 9 ? nx : 9));
        double load[40], total = 0, top = 0;
        int uniform = trial % 4 == 0;
        for (int i = 0; i < nx; i++) {
            load[i] = trial % 5 == 1 ? (i == nx / 2 ? 100.0 : 0.0) : tu_uniform(&st) * 10;
            total += load[i];
            top = load[i] > top ? load[i] : top;
        }
        if (uniform)
            total = nx, top = 1;
        dsmc_decomp d;
        int n[3] = {nx, 1 + trial % 3, 1};
        TU_OK(dsmc_decomp_columns(&d, n, nr, uniform ? NULL : load));
        dsmc_owners o = dsmc_decomp_owners(&d);
        int good = d.box[0].lo[0] == 0 && d.box[nr - 1].hi[0] == nx;
        double worst = 0;
        for (int r = 0; r < nr; r++) {
            /* contiguous, one column at least, every row */
            good &= d.box[r].hi[0] > d.box[r].lo[0] && (r == 0 || d.box[r].lo[0] == d.box[r - 1].hi[0]);
            good &= d.box[r].lo[1] == 0 && d.box[r].hi[1] == n[1] && d.box[r].lo[2] == 0 &&
                    d.box[r].hi[2] == 1;
            double l = 0;
            for (int i = d.box[r].lo[0]; i < d.box[r].hi[0]; i++) {
                for (int j = 0; j < n[1]; j++)
                    good &= dsmc_owner_of(o, (uint32_t)(i + nx * j)) == r;
                l += uniform ? 1 : load[i];
            }
            worst = l > worst ? l : worst;
        }
        /* no rank holds more than its share and two columns' load (the greedy cut's bound) */
        TU_CHECK(good && worst <= total / nr + 2 * top + 1e-9,
                 "decomposition of %d columns over %d ranks: worst load %g of total %g", nx, nr,
                 worst, total);
        dsmc_decomp_free(&d);
    }
    dsmc_decomp d;
    int n3[3] = {3, 5, 1};
    TU_CHECK(dsmc_decomp_init(&d, KEDR_DSMC_SPLIT_X, n3, 4, NULL) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "at most 3 ranks") &&
                 strstr(kedr_last_error(), "3 x 5 x 1"),
             "more ranks than columns: %s", kedr_last_error());
}

/* A particle as bytes, for comparing sets: x, y, z, vx, vy, vz, erot, species. */
typedef struct {
    double v[6];
    float erot;
    uint8_t sp;
    uint8_t pad[3];
} rec;

static int rec_cmp(const void *a, const void *b) { return memcmp(a, b, sizeof(rec)); }

static rec *get_all(kedr_dsmc *sim, size_t *n)
{
    /* the count: the call with no room fails and says how many there are */
    *n = 0;
    kedr_dsmc_get_particles3(sim, 0, n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    size_t m = *n ? *n : 1;
    double *a[6];
    for (int k = 0; k < 6; k++)
        a[k] = tu_host_alloc(m * 8);
    float *erot = tu_host_alloc(m * 4);
    uint8_t *sp = tu_host_alloc(m);
    TU_OK(kedr_dsmc_get_particles3(sim, *n, n, a[0], a[1], sim->p.dims == 3 ? a[2] : NULL, a[3],
                                   a[4], a[5], erot, sp));
    rec *r = calloc(m, sizeof *r);
    for (size_t i = 0; i < *n; i++) {
        for (int k = 0; k < 6; k++)
            r[i].v[k] = k == 2 && sim->p.dims != 3 ? 0.0 : a[k][i];
        r[i].erot = erot[i];
        r[i].sp = sp[i];
    }
    for (int k = 0; k < 6; k++)
        free(a[k]);
    free(erot);
    free(sp);
    return r;
}

/* Every rank's particles gathered and sorted on rank 0; NULL elsewhere. */
static rec *gather_sorted(kedr_dsmc *sim, size_t *total)
{
    size_t n;
    rec *mine = get_all(sim, &n);
    size_t *counts = calloc((size_t)size, sizeof *counts);
    void *all = NULL;
    TU_OK(kedr_comm_gatherv(comm, mine, n * sizeof(rec), 0, counts, &all));
    free(mine);
    *total = 0;
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            *total += counts[r] / sizeof(rec);
        qsort(all, *total, sizeof(rec), rec_cmp);
    }
    free(counts);
    return all;
}

/* Every particle of this rank in its box (by the tree's walk and by the box), and its cell key
 * the cell of its position (its local cell where the exchange left the keys local for the
 * rank's own cells). */
static int check_owned(kedr_dsmc *sim, const dsmc_decomp *d, const char *what)
{
    size_t n;
    rec *r = get_all(sim, &n);
    uint32_t *keys = NULL;
    TU_OK(dsmc_locate(sim, &keys));
    uint32_t *hk = tu_download(sim->ctx, keys, (n ? n : 1) * 4);
    size_t bad_owner = 0, bad_key = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cell = sim->p.dims == 3 ? dsmc_cell_of3(&sim->p, r[i].v[0], r[i].v[1], r[i].v[2])
                                         : dsmc_cell_of(&sim->p, r[i].v[0], r[i].v[1]);
        const dsmc_cellbox *bx = &d->box[rank];
        uint32_t nx = (uint32_t)sim->p.nx, ny = (uint32_t)sim->p.ny;
        int ci = (int)(cell % nx), cj = (int)(cell / nx % ny), ck = (int)(cell / nx / ny);
        bad_owner += dsmc_owner_of(dsmc_decomp_owners(d), cell) != rank || ci < bx->lo[0] ||
                     ci >= bx->hi[0] || cj < bx->lo[1] || cj >= bx->hi[1] || ck < bx->lo[2] ||
                     ck >= bx->hi[2];
        bad_key += hk[i] != (sim->keys_local ? dsmc_key_of(sim->cmap, cell,
                                                           (uint32_t)sim->ncells)
                                             : cell);
    }
    TU_CHECK(bad_owner == 0 && bad_key == 0, "%s: rank %d holds %zu particles, %zu outside its "
             "box, %zu with a wrong cell key", what, rank, n, bad_owner, bad_key);
    free(r);
    free(hk);
    return bad_owner == 0;
}

static void run_case(kedr_backend b, kedr_dsmc_case c, int kind, const char *name)
{
    kedr_ctx *ctx = tu_ctx(b);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim)); /* the same fill on every rank */
    size_t n_all;
    rec *all = get_all(sim, &n_all);
    /* deal them round-robin: rank r keeps particles r, r + size, ... */
    size_t m = 0;
    double *a[6];
    for (int k = 0; k < 6; k++)
        a[k] = tu_host_alloc((n_all ? n_all : 1) * 8);
    float *erot = tu_host_alloc((n_all ? n_all : 1) * 4);
    uint8_t *sp = tu_host_alloc(n_all ? n_all : 1);
    for (size_t i = (size_t)rank; i < n_all; i += (size_t)size, m++) {
        for (int k = 0; k < 6; k++)
            a[k][m] = all[i].v[k];
        erot[m] = all[i].erot;
        sp[m] = all[i].sp;
    }
    TU_OK(kedr_dsmc_set_particles3(sim, m, a[0], a[1], c.dims == 3 ? a[2] : NULL, a[3], a[4],
                                   a[5], erot, sp));
    int n[3] = {c.nx, c.ny, c.dims == 3 ? c.nz : 1};
    size_t ncells = (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
    double *load = tu_host_alloc(ncells * sizeof *load);
    for (size_t i = 0; i < ncells; i++)
        load[i] = 1 + (double)(i % 3 + i % 7); /* uneven boxes */
    dsmc_decomp d;
    TU_OK(dsmc_decomp_init(&d, kind, n, size, load));
    qsort(all, n_all, sizeof(rec), rec_cmp);
    for (int round = 0; round < 3; round++) {
        if (round > 0) /* a move: particles cross into other ranks' columns */
            TU_OK(kedr_dsmc_step_stages(sim, KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE)));
        dsmc_exchange_counts cnt;
        TU_OK(dsmc_exchange(sim, comm, &d, &cnt));
        uint64_t moved[2] = {cnt.sent, cnt.received};
        TU_OK(kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, moved, 2));
        char what[96];
        snprintf(what, sizeof what, "%s on %s, split %s, round %d", name,
                 b == KEDR_BACKEND_CUDA ? "cuda" : "cpu", kind == KEDR_DSMC_SPLIT_X ? "x" : "rcb",
                 round);
        TU_CHECK(n_all > 1000 && moved[0] == moved[1] && (size == 1 || round > 0 || moved[0] > 0),
                 "%s: %llu sent, %llu received", what, (unsigned long long)moved[0],
                 (unsigned long long)moved[1]);
        check_owned(sim, &d, what);
        size_t n_now;
        rec *now = gather_sorted(sim, &n_now);
        if (rank == 0 && round == 0)
            TU_CHECK(n_now == n_all && memcmp(now, all, n_all * sizeof(rec)) == 0,
                     "%s: the ranks hold the particles they were dealt (%zu of %zu)", what, n_now,
                     n_all);
        if (rank == 0 && round > 0)
            TU_CHECK(n_now == n_all, "%s: a closed box keeps its %zu particles (%zu)", what,
                     n_all, n_now);
        free(now);
        /* the indexing takes the exchanged particles as they are */
        TU_OK(kedr_dsmc_step_stages(sim, KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX)));
    }
    dsmc_decomp_free(&d);
    for (int k = 0; k < 6; k++)
        free(a[k]);
    free(erot);
    free(sp);
    free(load);
    free(all);
    kedr_dsmc_destroy(sim);
    kedr_ctx_destroy(ctx);
}

/* kedr_dsmc_create_on: the ranks' fills together put as many molecules in every cell as one
 * rank's fill (each cell draws its own count); an inflow channel over the ranks generates exactly the molecules
 * one rank would (each face too), and keeps about as many. */
static void check_create_on(kedr_backend b)
{
    kedr_ctx *ctx = tu_ctx(b);
    kedr_dsmc_case c = dt_box(1e-3, 17, 1e21, 300, 12, 2e-7);
    kedr_dsmc *one = NULL, *many = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &one));
    TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &many));
    size_t n_one, n_many;
    rec *a = get_all(one, &n_one);
    qsort(a, n_one, sizeof(rec), rec_cmp);
    rec *all = gather_sorted(many, &n_many);
    if (rank == 0) { /* the same molecules in every cell (their draws are numbered otherwise) */
        size_t nc = (size_t)c.nx * (size_t)c.ny, diff = 0;
        int *h = calloc(nc, sizeof *h);
        for (size_t i = 0; i < n_one; i++)
            h[dsmc_cell_of(&one->p, a[i].v[0], a[i].v[1])]++;
        for (size_t i = 0; i < n_many; i++)
            h[dsmc_cell_of(&one->p, all[i].v[0], all[i].v[1])]--;
        for (size_t i = 0; i < nc; i++)
            diff += h[i] != 0;
        TU_CHECK(n_many == n_one && diff == 0, "the fill over %d ranks: %zu particles, one "
                 "rank's %zu; %zu cells hold other counts", size, n_many, n_one, diff);
        free(h);
    }
    free(a);
    free(all);
    kedr_dsmc_destroy(one);
    kedr_dsmc_destroy(many);

    /* a channel: inflow at x_min, outflow at x_max, specular sides */
    c.side[0] = KEDR_DSMC_INFLOW;
    c.side[1] = KEDR_DSMC_OUTFLOW;
    c.velocity[0] = 800;
    c.fill = 1;
    int steps = (int)tu_scale(60, 30);
    TU_OK(kedr_dsmc_create(ctx, &c, &one));
    TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &many));
    for (int k = 0; k < steps; k++) {
        TU_OK(kedr_dsmc_step(one));
        TU_OK(kedr_dsmc_step(many));
    }
    kedr_dsmc_stats s1, sp;
    TU_OK(kedr_dsmc_get_stats(one, &s1));
    TU_OK(kedr_dsmc_get_stats(many, &sp));
    TU_CHECK(sp.total_generated == s1.total_generated,
             "inflow over %d ranks: %llu molecules generated, one rank %llu", size,
             (unsigned long long)sp.total_generated, (unsigned long long)s1.total_generated);
    double tol = 6 * sqrt((double)s1.particles);
    TU_CHECK(fabs((double)sp.particles - (double)s1.particles) < tol,
             "inflow channel over %d ranks after %d steps: %zu particles, one rank %zu (within "
             "%.0f)", size, steps, sp.particles, s1.particles, tol);
    /* the fields are sums over the ranks: the mean number of particles a cell */
    kedr_dsmc_fields f1, fp;
    TU_OK(kedr_dsmc_get_fields(one, &f1));
    TU_OK(kedr_dsmc_get_fields(many, &fp));
    double m1 = 0, mp = 0;
    for (int i = 0; i < c.nx * c.ny; i++) {
        m1 += f1.particles[i];
        mp += fp.particles[i];
    }
    TU_CHECK(fabs(mp - m1) < 0.02 * m1, "sampled particles over %d ranks %.1f, one rank %.1f",
             size, mp, m1);
    kedr_dsmc_fields_free(&f1);
    kedr_dsmc_fields_free(&fp);
    kedr_dsmc_destroy(one);
    kedr_dsmc_destroy(many);
    kedr_ctx_destroy(ctx);
}


/* Balancing: a channel whose inflow crowds the first columns splits them again (every 5 steps)
 * without losing a particle, and a run restarted from its ranks' checkpoints after a balance
 * continues bit for bit (the files hold the split). Gathering: one rank's checkpoint restarted
 * over all the ranks holds the same molecules and the same sample sums. */
static void check_balance_restart(kedr_backend b)
{
    kedr_ctx *ctx = tu_ctx(b);
    kedr_dsmc_case c = dt_box(1e-3, 23, 1e21, 300, 8, 2e-7);
    c.side[0] = KEDR_DSMC_INFLOW;
    c.side[1] = KEDR_DSMC_OUTFLOW;
    c.velocity[0] = 600;
    c.fill = 0; /* the inflow fills the first columns first */
    c.balance_every = 5;
    c.balance_tolerance = 0.02;
    c.sample_start = 0;
    c.sample_every = 1;
    char dir[] = "/tmp/kedr-balance-XXXXXX", path[128];
    int ok = rank != 0 || mkdtemp(dir) != NULL;
    TU_CHECK(ok, "a temporary folder");
    TU_OK(kedr_comm_bcast(comm, dir, sizeof dir, 0));
    snprintf(path, sizeof path, "%s/r%dof%d.chk", dir, rank, size);
    /* straight: 20 steps; split: 10, checkpoint, restart, 10 */
    kedr_dsmc *a = NULL, *bsim = NULL, *r = NULL;
    TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &a));
    TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &bsim));
    dsmc_cellbox box0[8];
    int nbox = size < 8 ? size : 8;
    for (int k = 0; k < nbox; k++)
        box0[k] = size > 1 ? a->decomp.box[k] : box0[0];
    int changed = 0;
    for (int k = 0; k < 20; k++) {
        TU_OK(kedr_dsmc_step(a));
        for (int j = 0; size > 1 && j < nbox; j++)
            changed |= memcmp(&box0[j], &a->decomp.box[j], sizeof box0[j]) != 0;
    }
    TU_CHECK(size == 1 || changed, "a crowded inflow over %d ranks: the split changed", size);
    for (int k = 0; k < 10; k++)
        TU_OK(kedr_dsmc_step(bsim));
    TU_OK(kedr_dsmc_write_checkpoint(bsim, path));
    kedr_dsmc_destroy(bsim);
    TU_OK(kedr_comm_barrier(comm));
    /* every rank its own file: as many files as ranks */
    char **files = calloc((size_t)size, sizeof *files);
    for (int k = 0; k < size; k++) {
        files[k] = malloc(128);
        snprintf(files[k], 128, "%s/r%dof%d.chk", dir, k, size);
    }
    TU_OK(kedr_dsmc_restart_files(ctx, &c, comm, size, (const char *const *)files, &r));
    for (int k = 0; k < 10; k++)
        TU_OK(kedr_dsmc_step(r));
    size_t na, nr;
    rec *pa = get_all(a, &na), *pr = get_all(r, &nr);
    int same = na == nr && memcmp(pa, pr, na * sizeof(rec)) == 0;
    same &= size == 1 || dsmc_decomp_same(&a->decomp, &r->decomp);
    TU_CHECK(same, "rank %d: 20 steps against 10, a checkpoint and 10 more, balancing every 5: "
             "%zu and %zu particles%s", rank, na, nr, na == nr ? ", other values or split" : "");
    free(pa);
    free(pr);
    kedr_dsmc_destroy(r);
    kedr_dsmc_destroy(a);

    /* rank 0 alone runs 12 steps and writes one file; every rank gathers it */
    snprintf(path, sizeof path, "%s/one.chk", dir);
    kedr_dsmc *solo = NULL, *g = NULL;
    size_t n1 = 0;
    rec *p1 = NULL;
    kedr_dsmc_fields f1, fg, w1, wg;
    memset(&f1, 0, sizeof f1);
    memset(&w1, 0, sizeof w1);
    if (rank == 0) { /* with a window marked at step 6 */
        TU_OK(kedr_dsmc_create(ctx, &c, &solo));
        for (int k = 0; k < 12; k++) {
            TU_OK(kedr_dsmc_step(solo));
            if (k == 5)
                TU_OK(kedr_dsmc_mark_window(solo));
        }
        TU_OK(kedr_dsmc_get_window_fields(solo, &w1));
        TU_OK(kedr_dsmc_write_checkpoint(solo, path));
        p1 = get_all(solo, &n1);
        qsort(p1, n1, sizeof(rec), rec_cmp);
        TU_OK(kedr_dsmc_get_fields(solo, &f1));
    }
    TU_OK(kedr_comm_barrier(comm));
    const char *single[1] = {path};
    TU_OK(kedr_dsmc_restart_files(ctx, &c, comm, 1, single, &g));
    if (size > 1)
        check_owned(g, &g->decomp, "gathered");
    size_t ng;
    rec *pg = gather_sorted(g, &ng);
    TU_OK(kedr_dsmc_get_fields(g, &fg));
    TU_OK(kedr_dsmc_get_window_fields(g, &wg));
    kedr_dsmc_stats sg;
    TU_OK(kedr_dsmc_get_stats(g, &sg));
    if (rank == 0) {
        TU_CHECK(ng == n1 && memcmp(pg, p1, n1 * sizeof(rec)) == 0,
                 "one rank's checkpoint over %d ranks: %zu particles, %zu written, or other "
                 "values", size, ng, n1);
        size_t nc = (size_t)c.nx * (size_t)c.ny;
        TU_CHECK(memcmp(f1.particles, fg.particles, nc * sizeof *fg.particles) == 0 &&
                     memcmp(f1.temperature, fg.temperature, nc * sizeof *fg.temperature) == 0,
                 "one rank's sample sums over %d ranks: other fields", size);
        TU_CHECK(sg.step == 12 && sg.samples == f1.samples, "gathered: step %lld, %lld samples",
                 (long long)sg.step, (long long)sg.samples);
        TU_CHECK(w1.samples == 6 && wg.samples == 6 &&
                     memcmp(w1.particles, wg.particles, nc * sizeof *wg.particles) == 0,
                 "one rank's window over %d ranks: %lld samples (%lld written), or other fields",
                 size, (long long)wg.samples, (long long)w1.samples);
        kedr_dsmc_fields_free(&f1);
        kedr_dsmc_fields_free(&w1);
    }
    kedr_dsmc_fields_free(&fg);
    kedr_dsmc_fields_free(&wg);
    for (int k = 0; k < 5; k++) /* and it goes on */
        TU_OK(kedr_dsmc_step(g));
    free(pg);
    free(p1);
    kedr_dsmc_destroy(g);
    kedr_dsmc_destroy(solo);
    /* a file of another case is refused on every rank */
    kedr_dsmc_case other = c;
    other.nx += 1;
    kedr_dsmc *bad = NULL;
    TU_CHECK(kedr_dsmc_restart_files(ctx, &other, comm, 1, single, &bad) == KEDR_ERR_PARSE &&
                 bad == NULL, "another case's checkpoint is refused");
    TU_OK(kedr_comm_barrier(comm));
    if (rank == 0) {
        for (int k = 0; k < size; k++)
            unlink(files[k]);
        unlink(path);
        rmdir(dir);
    }
    for (int k = 0; k < size; k++)
        free(files[k]);
    free(files);
    kedr_ctx_destroy(ctx);
}

/* Every particle of local cell c (its range of the sorted arrays) in global cell
 * dsmc_cell_global(cmap, c), and the counts adding up to the particles. */
static int check_local_ranges(kedr_dsmc *sim, const char *what)
{
    size_t n, nl = sim->nlocal;
    rec *r = get_all(sim, &n);
    uint32_t *st = tu_download(sim->ctx, sim->starts, (nl ? nl : 1) * 4);
    uint32_t *ct = tu_download(sim->ctx, sim->counts, (nl ? nl : 1) * 4);
    size_t bad = 0, total = 0;
    for (size_t c = 0; c < nl; c++) {
        bad += st[c] != total;
        total += ct[c];
        uint32_t g = dsmc_cell_global(sim->cmap, (uint32_t)c);
        for (uint32_t i = st[c]; i < st[c] + ct[c] && i < n; i++) {
            uint32_t cell = sim->p.dims == 3
                                ? dsmc_cell_of3(&sim->p, r[i].v[0], r[i].v[1], r[i].v[2])
                                : dsmc_cell_of(&sim->p, r[i].v[0], r[i].v[1]);
            bad += cell != g;
        }
    }
    TU_CHECK(bad == 0 && total == n, "%s: rank %d's %zu own cells hold %zu particles of %zu, %zu "
             "misplaced", what, rank, nl, total, n, bad);
    free(r);
    free(st);
    free(ct);
    return bad == 0 && total == n;
}

static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb, ca = 0, cb = 0;
    while (same && (ca = fgetc(fa)) != EOF) {
        cb = fgetc(fb);
        same = ca == cb;
    }
    same = same && fgetc(fb) == EOF;
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* Each rank's own cells (indexing, collisions and sampling over its columns only, in a local
 * numbering) against every rank walking the whole grid with the other ranks' cells empty, as
 * before ranks had cells of their own: the same particles in the same order on every rank, the
 * same collisions and fields, byte for byte the same checkpoints, through inflow, balancing
 * (every 5 steps) and sampling (on cuda with the fuller cells collided a warp each, and the
 * leavers the move counted checked against the selection's count); and a restart from the
 * checkpoints that samples before it moves (the cell ranges read from the files) goes on as the
 * straight run. */
static void check_local_cells(kedr_backend b, kedr_dsmc_case c, const char *name)
{
    kedr_ctx *ctx = tu_ctx(b);
    char dir[] = "/tmp/kedr-cells-XXXXXX", pl[160], pw[160];
    int ok = rank != 0 || mkdtemp(dir) != NULL;
    TU_CHECK(ok, "a temporary folder");
    TU_OK(kedr_comm_bcast(comm, dir, sizeof dir, 0));
    snprintf(pl, sizeof pl, "%s/local%dof%d.chk", dir, rank, size);
    snprintf(pw, sizeof pw, "%s/whole%dof%d.chk", dir, rank, size);
    kedr_dsmc *loc = NULL, *whole = NULL, *r = NULL;
    TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &loc));
    TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &whole));
    whole->whole_grid = 1;
    dsmc_cells_mine(whole);
    TU_OK(dsmc_cells_room(whole));
    loc->crowded_min = whole->crowded_min = 12; /* cuda: cells of 12 or more a warp each */
    loc->xcheck = 1; /* cuda: the move's counts of leavers checked against the selection's */
    char what[128];
    snprintf(what, sizeof what, "%s on %s over %d ranks", name,
             b == KEDR_BACKEND_CUDA ? "cuda" : "cpu", size);
    TU_CHECK(whole->nlocal == whole->ncells &&
                 (size == 1 || loc->nlocal == (size_t)loc->cmap.wx * loc->cmap.wy * loc->cmap.wz) &&
                 (size == 1 || loc->nlocal < loc->ncells),
             "%s: rank %d: %zu own cells of %zu (a box of %u x %u x %u from %u, %u, %u)", what,
             rank, loc->nlocal, loc->ncells, loc->cmap.wx, loc->cmap.wy, loc->cmap.wz,
             loc->cmap.x0, loc->cmap.y0, loc->cmap.z0);
    int same = 1, steps = 12;
    for (int k = 0; k < steps; k++) {
        TU_OK(kedr_dsmc_step(loc));
        TU_OK(kedr_dsmc_step(whole));
        if (loc->sorted)
            same &= check_local_ranges(loc, what);
    }
    size_t nl, nw;
    rec *a = get_all(loc, &nl), *w = get_all(whole, &nw);
    kedr_dsmc_stats sl, sw;
    TU_OK(kedr_dsmc_get_stats(loc, &sl));
    TU_OK(kedr_dsmc_get_stats(whole, &sw));
    same &= nl == nw && memcmp(a, w, nl * sizeof(rec)) == 0;
    TU_CHECK(same && sl.total_collisions == sw.total_collisions && sl.particles == sw.particles,
             "%s: rank %d: %zu particles against %zu over the whole grid (or other values, or "
             "order); %llu collisions against %llu", what, rank, nl, nw,
             (unsigned long long)sl.total_collisions, (unsigned long long)sw.total_collisions);
    free(a);
    free(w);
    kedr_dsmc_fields fl, fw;
    TU_OK(kedr_dsmc_get_fields(loc, &fl));
    TU_OK(kedr_dsmc_get_fields(whole, &fw));
    size_t nc = loc->ncells;
    TU_CHECK(fl.samples == fw.samples && fl.samples > 0 &&
                 memcmp(fl.particles, fw.particles, nc * sizeof *fl.particles) == 0 &&
                 memcmp(fl.temperature, fw.temperature, nc * sizeof *fl.temperature) == 0,
             "%s: the fields of %lld samples differ from the whole grid's", what,
             (long long)fl.samples);
    kedr_dsmc_fields_free(&fl);
    kedr_dsmc_fields_free(&fw);
    /* the checkpoints, written from the rank's own cells, are the whole grid's */
    TU_CHECK(loc->sorted, "%s: indexed after step %d", what, steps);
    TU_OK(kedr_dsmc_write_checkpoint(loc, pl));
    TU_OK(kedr_dsmc_write_checkpoint(whole, pw));
    TU_CHECK(same_file(pl, pw), "%s: rank %d: %s and %s differ", what, rank, pl, pw);
    TU_OK(kedr_comm_barrier(comm));
    /* restarted from them: a sample straight away reads the cell ranges of the files */
    char **files = calloc((size_t)size, sizeof *files);
    for (int k = 0; k < size; k++) {
        files[k] = malloc(160);
        snprintf(files[k], 160, "%s/local%dof%d.chk", dir, k, size);
    }
    TU_OK(kedr_dsmc_restart_files(ctx, &c, comm, size, (const char *const *)files, &r));
    r->crowded_min = loc->crowded_min;
    TU_CHECK(r->nlocal == loc->nlocal && memcmp(&r->cmap, &loc->cmap, sizeof r->cmap) == 0,
             "%s: the restart's own cells %zu from %u, %u, %u (%zu from %u, %u, %u written)",
             what, r->nlocal, r->cmap.x0, r->cmap.y0, r->cmap.z0, loc->nlocal, loc->cmap.x0,
             loc->cmap.y0, loc->cmap.z0);
    unsigned sample = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_SAMPLE);
    TU_OK(kedr_dsmc_step_stages(loc, sample));
    TU_OK(kedr_dsmc_step_stages(r, sample));
    for (int k = 0; k < 3; k++) {
        TU_OK(kedr_dsmc_step(loc));
        TU_OK(kedr_dsmc_step(r));
    }
    TU_OK(kedr_dsmc_get_fields(loc, &fl));
    TU_OK(kedr_dsmc_get_fields(r, &fw));
    a = get_all(loc, &nl);
    w = get_all(r, &nw);
    TU_CHECK(nl == nw && memcmp(a, w, nl * sizeof(rec)) == 0 && fl.samples == fw.samples &&
                 memcmp(fl.particles, fw.particles, nc * sizeof *fl.particles) == 0,
             "%s: rank %d: restarted, %zu particles against %zu (or other values or fields)",
             what, rank, nw, nl);
    free(a);
    free(w);
    kedr_dsmc_fields_free(&fl);
    kedr_dsmc_fields_free(&fw);
    kedr_dsmc_destroy(r);
    kedr_dsmc_destroy(loc);
    kedr_dsmc_destroy(whole);
    TU_OK(kedr_comm_barrier(comm));
    if (rank == 0)
        for (int k = 0; k < size; k++) {
            unlink(files[k]);
            snprintf(pw, sizeof pw, "%s/whole%dof%d.chk", dir, k, size);
            unlink(pw);
        }
    if (rank == 0)
        rmdir(dir);
    for (int k = 0; k < size; k++)
        free(files[k]);
    free(files);
    kedr_ctx_destroy(ctx);
}

/* The exchange's two ways (exchange.h: dsmc_exchange_path): on cuda over the ranks of one host
 * the records go GPU to GPU (CUDA IPC, ranks sharing one GPU included), against through the host
 * (the test switch xhost) and with KEDR_COMM_IPC=0 in the environment: after every exchange, and
 * after the indexing, collisions and sampling that follow it, each rank holds the same particles
 * in the same order, bit for bit, through inflow and balancing (every 5 steps), with a device
 * buffer that starts at 4 KB and so must grow (records that do not fit wait in the scratch). On
 * the cpu the first takes the same registered buffers, layout and growth (the test switch
 * xdev_force; their copies go through MPI), the others the host path. */
static void check_paths(kedr_backend b, kedr_dsmc_case c, const char *name)
{
    kedr_ctx *ctx = tu_ctx(b);
    int cuda = b == KEDR_BACKEND_CUDA;
    const char *was = getenv("KEDR_COMM_IPC");
    char saved[16] = "";
    if (was)
        snprintf(saved, sizeof saved, "%s", was);
    kedr_dsmc *sim[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++)
        TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &sim[k]));
    if (!sim[0] || !sim[1] || !sim[2]) {
        for (int k = 0; k < 3; k++)
            kedr_dsmc_destroy(sim[k]);
        kedr_ctx_destroy(ctx);
        return;
    }
    sim[0]->xdev_first = 4096; /* GPU to GPU where it can: a small buffer, grown */
    sim[0]->xdev_force = !cuda; /* the cpu: the same buffers, copied by MPI */
    sim[1]->xhost = 1;         /* through the host */
    unsigned move = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE),
             rest = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE) |
                    KEDR_DSMC_STAGE_BIT(KEDR_DSMC_SAMPLE);
    char what[128];
    snprintf(what, sizeof what, "%s on %s over %d ranks", name, cuda ? "cuda" : "cpu", size);
    int same = 1, steps = 10;
    size_t worst_n = 0;
    for (int k = 0; k < steps && same; k++)
        for (int half = 0; half < 2 && same; half++) {
            for (int j = 0; j < 3; j++) {
                if (j == 2) /* read at its first exchange */
                    setenv("KEDR_COMM_IPC", "0", 1);
                TU_OK(kedr_dsmc_step_stages(sim[j], half ? rest : move));
                if (j == 2 && was)
                    setenv("KEDR_COMM_IPC", saved, 1);
                else if (j == 2)
                    unsetenv("KEDR_COMM_IPC");
            }
            size_t n[3];
            rec *r[3];
            for (int j = 0; j < 3; j++)
                r[j] = get_all(sim[j], &n[j]);
            for (int j = 1; j < 3; j++) {
                int eq = n[j] == n[0] && memcmp(r[j], r[0], n[0] * sizeof(rec)) == 0;
                TU_CHECK(eq, "%s: rank %d, step %d, after the %s: %zu particles %s, %zu %s "
                         "(or other values or order)", what, rank, k,
                         half ? "indexing and collisions" : "exchange", n[0],
                         cuda ? "GPU to GPU where it can" : "through registered buffers", n[j],
                         j == 1 ? "through the host" : "with KEDR_COMM_IPC=0");
                same &= eq;
            }
            worst_n = n[0] > worst_n ? n[0] : worst_n;
            for (int j = 0; j < 3; j++)
                free(r[j]);
        }
    kedr_dsmc_stats st[3];
    for (int j = 0; j < 3; j++)
        TU_OK(kedr_dsmc_get_stats(sim[j], &st[j]));
    TU_CHECK(st[0].total_collisions == st[1].total_collisions &&
                 st[0].total_collisions == st[2].total_collisions && st[0].total_collisions > 0 &&
                 worst_n > 100,
             "%s: %llu, %llu and %llu collisions, up to %zu particles a rank", what,
             (unsigned long long)st[0].total_collisions,
             (unsigned long long)st[1].total_collisions,
             (unsigned long long)st[2].total_collisions, worst_n);
    /* the ways taken: GPU to GPU where every rank is on this host and on one GPU (peer access
     * between several GPUs is the host's to give), unless the environment says otherwise */
    int dev = cuda ? kedr_comm_device(comm, kedr_device_count()) : 0;
    int32_t span[3] = {dev, -dev, 1};
    for (int q = 0; q < size; q++)
        span[2] &= kedr_comm_same_host(comm, q);
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MAX, span, 2));
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MIN, span + 2, 1));
    int one_gpu = span[0] == -span[1] && span[2];
    size_t dbytes = 0;
    long grows = 0;
    int p0 = dsmc_exchange_path(sim[0], &dbytes, &grows), p1 = dsmc_exchange_path(sim[1], NULL, NULL),
        p2 = dsmc_exchange_path(sim[2], NULL, NULL);
    int ipc_off = was && !strcmp(saved, "0");
    if (size == 1)
        TU_CHECK(p0 == DSMC_XPATH_NONE && p1 == DSMC_XPATH_NONE && p2 == DSMC_XPATH_NONE,
                 "%s: one rank chose ways %d %d %d for no exchange", what, p0, p1, p2);
    else
        TU_CHECK(p1 == DSMC_XPATH_HOST && p2 == DSMC_XPATH_HOST &&
                     (cuda && one_gpu && !ipc_off ? p0 == DSMC_XPATH_DEVICE
                                                  : p0 != DSMC_XPATH_NONE) &&
                     (cuda || p0 == DSMC_XPATH_DEVICE) &&
                     (p0 != DSMC_XPATH_DEVICE || (grows > 0 && dbytes > 4096)),
                 "%s: ways %d (GPU to GPU wanted%s), %d (through the host), %d (KEDR_COMM_IPC=0); "
                 "the device buffer %zu bytes, grown %ld times", what, p0,
                 cuda && one_gpu && !ipc_off ? ", and possible" : "", p1, p2, dbytes, grows);
    if (rank == 0 && size > 1)
        printf("%s: the exchange %s (its buffer %zu bytes, grown %ld times)\n", what,
               p0 != DSMC_XPATH_DEVICE ? "through the host"
               : cuda                  ? "GPU to GPU"
                                       : "through registered buffers",
               dbytes, grows);
    /* the exchange's device buffers count in the simulator's memory */
    size_t m0 = 0;
    TU_OK(kedr_dsmc_memory(sim[0], &m0));
    TU_CHECK(p0 != DSMC_XPATH_DEVICE || m0 >= dbytes, "%s: %zu bytes held, device buffer %zu",
             what, m0, dbytes);
    for (int k = 0; k < 3; k++)
        kedr_dsmc_destroy(sim[k]);
    kedr_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    TU_OK(kedr_comm_init(&argc, &argv, &comm));
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    check_decomp();
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int bi = 0; bi < nb; bi++) {
        /* 2D: nitrogen (rotational energies) and a hard-sphere gas (two species) */
        kedr_dsmc_case c = dt_box(1e-3, 13, 1e21, 300, 20, 2e-7);
        c.nspecies = 2;
        c.species[1] = dt_nitrogen();
        c.fraction[0] = 0.3;
        c.fraction[1] = 0.7;
        run_case(list[bi], c, KEDR_DSMC_SPLIT_RCB, "2D box, two species");
        run_case(list[bi], c, KEDR_DSMC_SPLIT_X, "2D box, two species");
        /* 3D, one species */
        kedr_dsmc_case c3 = dt_box(1e-3, 9, 1e21, 300, 8, 2e-7);
        c3.dims = 3;
        c3.nz = 7;
        c3.hi[2] = 1e-3;
        c3.weight *= 1e-3 / 7; /* 8 particles a cell of volume dx dy dz */
        for (int s = 4; s < 6; s++)
            c3.side[s] = KEDR_DSMC_SPECULAR;
        run_case(list[bi], c3, KEDR_DSMC_SPLIT_RCB, "3D box");
        run_case(list[bi], c3, KEDR_DSMC_SPLIT_X, "3D box");
        check_create_on(list[bi]);
        check_balance_restart(list[bi]);
        /* own cells: a 2D channel of two species whose inflow crowds the first columns
         * (balancing), and a 3D channel */
        kedr_dsmc_case ch = c;
        ch.side[0] = KEDR_DSMC_INFLOW;
        ch.side[1] = KEDR_DSMC_OUTFLOW;
        ch.velocity[0] = 700;
        ch.balance_every = 5;
        ch.balance_tolerance = 0.02;
        ch.sample_start = 2;
        ch.sample_every = 1;
        check_local_cells(list[bi], ch, "2D channel, two species, rcb");
        kedr_dsmc_case chx = ch;
        chx.split = KEDR_DSMC_SPLIT_X;
        check_local_cells(list[bi], chx, "2D channel, two species, columns");
        kedr_dsmc_case ch3 = c3;
        ch3.side[0] = KEDR_DSMC_INFLOW;
        ch3.side[1] = KEDR_DSMC_OUTFLOW;
        ch3.velocity[0] = 700;
        ch3.sample_start = 2;
        ch3.sample_every = 1;
        check_local_cells(list[bi], ch3, "3D channel");
        /* the exchange GPU to GPU against through the host: the 2D channel and the 3D one */
        check_paths(list[bi], ch, "2D channel, two species");
        check_paths(list[bi], ch3, "3D channel");
    }
    int failed = tu_failed;
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MAX, &failed, 1));
    int rc = tu_finish("test_dsmc_exchange");
    kedr_comm_finalize(comm);
    return rc ? rc : failed != 0;
}
