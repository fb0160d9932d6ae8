/* The grid split into boxes by recursive coordinate bisection ([run] split = rcb), on any number
 * of ranks (ctest runs it alone and under mpirun on 1 to 4). First the trees themselves, on
 * random grids and loads: every cell in exactly one rank's box, the walk of the tree giving that
 * rank, every rank a cell, the tree read back from its cuts, bad trees refused, the cuts at the
 * planes the loads call for, the shapes of known cases, and a clear message for rank counts
 * that cannot split a grid. Then whole simulators against one rank: a 3D sphere (cut in z, x)
 * and an axisymmetric sphere (a 2D grid cut in x and y) fill every cell with as many molecules
 * as one rank, generate exactly as many inflow molecules, keep about as many and sample about
 * the same fields, every particle in its rank's box. Last, checkpoints of one kind of split
 * restarted with the other. */
#include "kedr/comm.h"
#include "dsmc/exchange.h"
#include "validation/test_dsmc_util.h"

#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static kedr_comm *comm;
static int rank, size;
static char root[1024];

static int in_box(const dsmc_cellbox *b, int i, int j, int k)
{
    return i >= b->lo[0] && i < b->hi[0] && j >= b->lo[1] && j < b->hi[1] && k >= b->lo[2] &&
           k < b->hi[2];
}

/* Every cell in one box, the walk naming its rank, a cell a rank; the boxes' loads into out. */
static int check_partition(const dsmc_decomp *d, const double *load, double *out)
{
    dsmc_owners o = dsmc_decomp_owners(d);
    int good = 1;
    for (int r = 0; r < d->nranks; r++)
        out[r] = 0;
    int *cells = calloc((size_t)d->nranks, sizeof *cells);
    for (int k = 0; k < d->n[2]; k++)
        for (int j = 0; j < d->n[1]; j++)
            for (int i = 0; i < d->n[0]; i++) {
                uint32_t g = (uint32_t)(i + d->n[0] * (j + d->n[1] * k));
                int r = dsmc_owner_of(o, g), boxes = 0;
                for (int q = 0; q < d->nranks; q++)
                    boxes += in_box(&d->box[q], i, j, k);
                good &= r >= 0 && r < d->nranks && boxes == 1 && in_box(&d->box[r], i, j, k);
                if (r >= 0 && r < d->nranks) {
                    cells[r]++;
                    out[r] += load ? load[g] : 1.0;
                }
            }
    for (int r = 0; r < d->nranks; r++)
        good &= cells[r] >= 1;
    free(cells);
    return good;
}

static void check_trees(void)
{
    uint64_t st = 2027;
    int failed_splits = 0;
    for (int trial = 0; trial < 300; trial++) {
        int three = trial % 2, n[3];
        n[0] = 1 + (int)(tu_next(&st) % 20);
        n[1] = 1 + (int)(tu_next(&st) % 20);
        n[2] = three ? 1 + (int)(tu_next(&st) % 12) : 1;
        int cells = n[0] * n[1] * n[2], nr = 1 + (int)(tu_next(&st) % 9);
        nr = nr > cells ? cells : nr;
        int mode = trial % 3; /* every cell alike, random loads, one hot cell */
        double *load = malloc((size_t)cells * sizeof *load), total = 0, top = 0;
        int hot = (int)(tu_next(&st) % (uint64_t)cells);
        for (int g = 0; g < cells; g++) {
            load[g] = mode == 0 ? 1.0 : mode == 1 ? tu_uniform(&st) * 10 : g == hot ? 500.0 : 1.0;
            total += load[g];
            top = load[g] > top ? load[g] : top;
        }
        for (int kind = 0; kind < 2; kind++) {
            if (kind == KEDR_DSMC_SPLIT_X && nr > n[0])
                continue;
            dsmc_decomp d;
            kedr_status s = dsmc_decomp_init(&d, kind, n, nr, mode ? load : NULL);
            if (s != KEDR_OK) { /* only for a grid too small for the ranks, saying so */
                char grid[64];
                snprintf(grid, sizeof grid, "%d x %d x %d", n[0], n[1], n[2]);
                TU_CHECK(kind == KEDR_DSMC_SPLIT_RCB && s == KEDR_ERR_INVALID &&
                             strstr(kedr_last_error(), grid) && 2 * nr > cells,
                         "%d ranks over %s cells (kind %d): %s", nr, grid, kind,
                         kedr_last_error());
                failed_splits++;
                continue;
            }
            double got[9], worst = 0, plane = 0;
            int good = check_partition(&d, load, got);
            for (int r = 0; r < nr; r++)
                worst = got[r] > worst ? got[r] : worst;
            for (int a = 0; a < 3; a++) /* the most cells of one plane across an axis */
                plane = (double)cells / n[a] > plane ? (double)cells / n[a] : plane;
            /* columns span y and z; the tree read back from its cuts gives the same boxes */
            for (int r = 0; kind == KEDR_DSMC_SPLIT_X && r < nr; r++)
                good &= d.box[r].lo[1] == 0 && d.box[r].hi[1] == n[1] && d.box[r].lo[2] == 0 &&
                        d.box[r].hi[2] == n[2];
            dsmc_decomp e;
            TU_OK(dsmc_decomp_from_cuts(&e, kind, n, nr, d.cut, "the test's tree"));
            good &= dsmc_decomp_same(&d, &e) && e.kind == kind;
            dsmc_decomp_free(&e);
            /* alike cells: no rank above its share by more than a plane's cells a level of the
             * tree (each cut rounds to a plane) */
            int levels = 0;
            while ((1 << levels) < nr)
                levels++;
            TU_CHECK(good && (mode != 0 || worst <= total / nr + levels * plane + 1e-9),
                     "trial %d: %d ranks over %d x %d x %d cells (kind %d, loads %d): %s, worst "
                     "load %g of %g", trial, nr, n[0], n[1], n[2], kind, mode,
                     good ? "a partition" : "not a partition", worst, total);
            dsmc_decomp_free(&d);
        }
        free(load);
    }
    TU_CHECK(failed_splits < 30, "%d of 600 random splits refused", failed_splits);

    /* known shapes: 4 ranks on 20 x 20 cut x then y; 8 on 8^3 in cubes (x, y, z cut); 3 on
     * 12 x 9: 1 rank on a third along x, 2 on the rest (8 x 9) cut along y, where the running
     * load first passes half of it by more than half a plane */
    dsmc_decomp d;
    int sq[3] = {20, 20, 1}, cube[3] = {8, 8, 8}, strip[3] = {12, 9, 1};
    TU_OK(dsmc_decomp_init(&d, KEDR_DSMC_SPLIT_RCB, sq, 4, NULL));
    int good = 1;
    for (int r = 0; r < 4; r++)
        good &= d.box[r].hi[0] - d.box[r].lo[0] == 10 && d.box[r].hi[1] - d.box[r].lo[1] == 10;
    TU_CHECK(good && d.cut[0].axis == 0 && d.cut[1].axis == 1,
             "4 ranks on 20 x 20: not four 10 x 10 boxes cut in x, then y");
    dsmc_decomp_free(&d);
    TU_OK(dsmc_decomp_init(&d, KEDR_DSMC_SPLIT_RCB, cube, 8, NULL));
    good = 1;
    int axes = 0;
    for (int r = 0; r < 8; r++)
        for (int a = 0; a < 3; a++)
            good &= d.box[r].hi[a] - d.box[r].lo[a] == 4;
    for (int k = 0; k < 7; k++)
        axes |= 1 << d.cut[k].axis;
    TU_CHECK(good && axes == 7, "8 ranks on 8^3: not eight 4^3 boxes cut in x, y and z");
    dsmc_decomp_free(&d);
    TU_OK(dsmc_decomp_init(&d, KEDR_DSMC_SPLIT_RCB, strip, 3, NULL));
    dsmc_cellbox want[3] = {{{0, 0, 0}, {4, 9, 1}}, {{4, 0, 0}, {12, 5, 1}}, {{4, 5, 0}, {12, 9, 1}}};
    TU_CHECK(memcmp(d.box, want, sizeof want) == 0, "3 ranks on 12 x 9: rank 0 [%d, %d) x [%d, "
             "%d), rank 1 [%d, %d) x [%d, %d)", d.box[0].lo[0], d.box[0].hi[0], d.box[0].lo[1],
             d.box[0].hi[1], d.box[1].lo[0], d.box[1].hi[0], d.box[1].lo[1], d.box[1].hi[1]);
    /* bad trees: a cut outside its box, a rank twice, a node reached twice */
    dsmc_cut bad[2];
    memcpy(bad, d.cut, sizeof bad);
    bad[1].cut = 0;
    dsmc_decomp e;
    TU_CHECK(dsmc_decomp_from_cuts(&e, 0, strip, 3, bad, "t") == KEDR_ERR_PARSE &&
                 strstr(kedr_last_error(), "inside its box"), "a cut outside its box: %s",
             kedr_last_error());
    memcpy(bad, d.cut, sizeof bad);
    bad[1].hi = bad[1].lo;
    TU_CHECK(dsmc_decomp_from_cuts(&e, 0, strip, 3, bad, "t") == KEDR_ERR_PARSE &&
                 strstr(kedr_last_error(), "twice"), "a rank twice: %s", kedr_last_error());
    memcpy(bad, d.cut, sizeof bad);
    bad[1].lo = 0;
    TU_CHECK(dsmc_decomp_from_cuts(&e, 0, strip, 3, bad, "t") == KEDR_ERR_PARSE,
             "a node reached twice: %s", kedr_last_error());
    dsmc_decomp_free(&d);
    /* loads: a hot third along x of 16 x 16 (ten times the rest) takes a narrower share */
    int n16[3] = {16, 16, 1};
    double hot[256];
    for (int g = 0; g < 256; g++)
        hot[g] = g % 16 < 5 ? 10.0 : 1.0;
    TU_OK(dsmc_decomp_init(&d, KEDR_DSMC_SPLIT_RCB, n16, 2, hot));
    TU_CHECK(d.cut[0].axis == 0 && d.cut[0].cut == 3,
             "2 ranks on 16 x 16, the first 5 columns ten times as busy: cut axis %d at %d, "
             "expected x at 3", d.cut[0].axis, d.cut[0].cut);
    dsmc_decomp_free(&d);
    /* rank counts that cannot split a grid, named with the grid */
    int n22[3] = {2, 2, 1}, n33[3] = {3, 3, 1};
    TU_CHECK(dsmc_decomp_init(&d, KEDR_DSMC_SPLIT_RCB, n22, 5, NULL) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "5 ranks") && strstr(kedr_last_error(), "2 x 2 x 1"),
             "5 ranks on 4 cells: %s", kedr_last_error());
    TU_CHECK(dsmc_decomp_init(&d, KEDR_DSMC_SPLIT_RCB, n33, 8, NULL) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "8 ranks cannot split") &&
                 strstr(kedr_last_error(), "3 x 3 x 1"),
             "8 ranks on 3 x 3: %s", kedr_last_error());
}

/* This rank's particles' positions, x y z each (z 0 in 2D); *n their number. */
static double *positions(kedr_dsmc *sim, size_t *n)
{
    kedr_dsmc_get_particles3(sim, 0, n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    size_t m = *n ? *n : 1;
    double *a[6];
    for (int k = 0; k < 6; k++)
        a[k] = tu_host_alloc(m * 8);
    float *erot = tu_host_alloc(m * 4);
    uint8_t *sp = tu_host_alloc(m);
    TU_OK(kedr_dsmc_get_particles3(sim, *n, n, a[0], a[1], sim->p.dims == 3 ? a[2] : NULL, a[3],
                                   a[4], a[5], erot, sp));
    double *xyz = malloc(m * 3 * sizeof *xyz);
    for (size_t i = 0; i < *n; i++)
        for (int k = 0; k < 3; k++)
            xyz[3 * i + k] = k == 2 && sim->p.dims != 3 ? 0.0 : a[k][i];
    for (int k = 0; k < 6; k++)
        free(a[k]);
    free(erot);
    free(sp);
    return xyz;
}

/* The positions of every rank's particles on rank 0 (x, y, z each; *n their number). */
static double *gather_positions(kedr_dsmc *sim, size_t *n)
{
    size_t m = 0;
    double *mine = positions(sim, &m);
    void *all = NULL;
    size_t *counts = calloc((size_t)size, sizeof *counts);
    TU_OK(kedr_comm_gatherv(comm, mine, m * 3 * sizeof *mine, 0, counts, &all));
    *n = 0;
    for (int r = 0; rank == 0 && r < size; r++)
        *n += counts[r] / (3 * sizeof(double));
    free(counts);
    free(mine);
    return all;
}

static int cmp3(const void *a, const void *b) { return memcmp(a, b, 3 * sizeof(double)); }

static uint32_t cell_at(const kedr_dsmc *sim, const double *x)
{
    return sim->p.dims == 3 ? dsmc_cell_of3(&sim->p, x[0], x[1], x[2])
                            : dsmc_cell_of(&sim->p, x[0], x[1]);
}

/* Every particle of this rank in its box: the count of those outside. */
static size_t outside(kedr_dsmc *sim)
{
    size_t n = 0, bad = 0;
    double *x = positions(sim, &n);
    for (size_t i = 0; i < n; i++)
        bad += !dsmc_owns_cell(sim, cell_at(sim, x + 3 * i));
    free(x);
    return bad;
}

/* The case over the ranks split by rcb against one rank: the fill, the inflow, the particles
 * and fields after `steps`; axes: the axes some rank's box must not span (a bit an axis). */
static void compare_one(kedr_backend b, kedr_dsmc_case c, const char *name, int steps,
                        unsigned axes)
{
    kedr_ctx *ctx = tu_ctx(b);
    char what[160];
    snprintf(what, sizeof what, "%s on %s over %d ranks", name,
             b == KEDR_BACKEND_CUDA ? "cuda" : "cpu", size);
    c.split = KEDR_DSMC_SPLIT_RCB;
    kedr_dsmc *one = NULL, *many = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &one));
    TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &many));
    unsigned cut = 0;
    for (int r = 0; size > 1 && r < size; r++)
        for (int a = 0; a < 3; a++)
            if (many->decomp.box[r].hi[a] - many->decomp.box[r].lo[a] != many->decomp.n[a])
                cut |= 1u << a;
    TU_CHECK(size == 1 || (cut & axes) == axes, "%s: the boxes are cut along axes %#x; "
             "expected %#x among them", what, cut, axes);
    size_t n_many = 0, n_one = 0;
    double *all = gather_positions(many, &n_many);
    double *p1 = positions(one, &n_one);
    if (rank == 0) { /* every cell holds as many molecules as on one rank */
        int *h = calloc(one->ncells, sizeof *h);
        for (size_t i = 0; i < n_one; i++)
            h[cell_at(one, p1 + 3 * i)]++;
        for (size_t i = 0; i < n_many; i++)
            h[cell_at(one, all + 3 * i)]--;
        size_t diff = 0;
        for (size_t i = 0; i < one->ncells; i++)
            diff += h[i] != 0;
        TU_CHECK(n_many == n_one && n_one > 1000 && diff == 0,
                 "%s: the fill: %zu particles, one rank %zu; %zu cells hold other counts", what,
                 n_many, n_one, diff);
        free(h);
    }
    free(p1);
    free(all);
    /* each rank feeds only the inflow faces of its own box: an empty domain's first inflow,
     * before any move, lies in the ranks' own cells */
    kedr_dsmc_case empty = c;
    empty.fill = 0;
    kedr_dsmc *gen = NULL;
    TU_OK(kedr_dsmc_create_on(ctx, &empty, comm, &gen));
    TU_OK(kedr_dsmc_step_stages(gen, KEDR_DSMC_STAGE_BIT(KEDR_DSMC_GENERATE)));
    size_t fed = 0, stray = outside(gen);
    kedr_dsmc_get_particles3(gen, 0, &fed, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    uint64_t fed_all[2] = {fed, stray};
    TU_OK(kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, fed_all, 2));
    TU_CHECK(fed_all[0] > 20 && fed_all[1] == 0, "%s: the first inflow: %llu molecules, %llu "
             "of them outside their rank's box", what, (unsigned long long)fed_all[0],
             (unsigned long long)fed_all[1]);
    kedr_dsmc_destroy(gen);
    for (int k = 0; k < steps; k++) {
        TU_OK(kedr_dsmc_step(one));
        TU_OK(kedr_dsmc_step(many));
    }
    kedr_dsmc_stats s1, sp;
    TU_OK(kedr_dsmc_get_stats(one, &s1));
    TU_OK(kedr_dsmc_get_stats(many, &sp));
    double tol = 6 * sqrt((double)s1.particles);
    TU_CHECK(sp.total_generated == s1.total_generated && s1.total_generated > 0,
             "%s: %llu molecules generated by the inflow, one rank %llu", what,
             (unsigned long long)sp.total_generated, (unsigned long long)s1.total_generated);
    TU_CHECK(fabs((double)sp.particles - (double)s1.particles) < tol,
             "%s after %d steps: %zu particles, one rank %zu (within %.0f)", what, steps,
             sp.particles, s1.particles, tol);
    size_t bad = outside(many);
    TU_CHECK(bad == 0, "%s: rank %d holds %zu particles outside its box", what, rank, bad);
    kedr_dsmc_fields f1, fp;
    TU_OK(kedr_dsmc_get_fields(one, &f1));
    TU_OK(kedr_dsmc_get_fields(many, &fp));
    double m1 = 0, mp = 0, t1 = 0, tp = 0;
    for (size_t i = 0; i < one->ncells; i++) {
        if (!(f1.particles[i] > 0) || !(fp.particles[i] > 0)) /* in the body, or empty */
            continue;
        m1 += f1.particles[i];
        mp += fp.particles[i];
        t1 += f1.particles[i] * f1.temperature[i];
        tp += fp.particles[i] * fp.temperature[i];
    }
    TU_CHECK(fp.samples == f1.samples && f1.samples > 0 && fabs(mp - m1) < 0.03 * m1 &&
                 fabs(tp / mp - t1 / m1) < 0.06 * (t1 / m1),
             "%s: %lld samples (%lld): mean particles %.1f (one rank %.1f), temperature %.1f "
             "(%.1f)", what, (long long)fp.samples, (long long)f1.samples, mp, m1, tp / mp,
             t1 / m1);
    kedr_dsmc_fields_free(&f1);
    kedr_dsmc_fields_free(&fp);
    kedr_dsmc_destroy(one);
    kedr_dsmc_destroy(many);
    kedr_ctx_destroy(ctx);
}

/* A case file of cases/dsmc with its grid made coarser by f along each axis, at the same
 * particles a cell. */
static kedr_dsmc_case coarse(const char *file, int f, double volume_ratio)
{
    char path[1200];
    snprintf(path, sizeof path, "%scases/dsmc/%s", root, file);
    kedr_dsmc_case c;
    TU_OK(kedr_dsmc_case_load(path, &c));
    c.nx /= f;
    c.ny /= f;
    if (c.dims == 3)
        c.nz /= f;
    c.weight *= volume_ratio;
    return c;
}

/* Every rank's file with its split's first cut moved onto its box's edge (the checksum made to
 * match) is refused on every rank, naming a file and what was expected. */
static void check_forged_split(kedr_ctx *ctx, const kedr_dsmc_case *c, kedr_dsmc *a,
                               char **files)
{
    FILE *f = fopen(files[rank], "rb");
    TU_CHECK(f != NULL, "open %s", files[rank]);
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n);
    TU_CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n, "read %s", files[rank]);
    fclose(f);
    /* the split: its kind and a zero, then the cuts (docs/dsmc.md, the checkpoint layout) */
    unsigned char want[8 + sizeof(dsmc_cut)];
    int32_t kind[2] = {a->decomp.kind, 0};
    memcpy(want, kind, 8);
    memcpy(want + 8, &a->decomp.cut[0], sizeof(dsmc_cut));
    long at = -1;
    for (long i = 0; at < 0 && i + (long)sizeof want <= n; i++)
        if (memcmp(buf + i, want, sizeof want) == 0)
            at = i;
    TU_CHECK(at > 0, "%s: the split not found", files[rank]);
    char bad[200];
    snprintf(bad, sizeof bad, "%s.bad", files[rank]);
    if (at > 0) {
        dsmc_cut edge = a->decomp.cut[0];
        edge.cut = 0; /* on the grid's lower face: no plane inside the box */
        memcpy(buf + at + 8, &edge, sizeof edge);
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of all but the last 16 bytes */
        for (long i = 0; i + 16 < n; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
        memcpy(buf + n - 16, &h, 8);
        f = fopen(bad, "wb");
        TU_CHECK(f && fwrite(buf, 1, (size_t)n, f) == (size_t)n, "write %s", bad);
        if (f)
            fclose(f);
    }
    free(buf);
    TU_OK(kedr_comm_barrier(comm));
    char **list = calloc((size_t)size, sizeof *list);
    for (int k = 0; k < size; k++) {
        list[k] = malloc(200);
        snprintf(list[k], 200, "%s.bad", files[k]);
    }
    kedr_dsmc *r = NULL;
    kedr_status st = kedr_dsmc_restart_files(ctx, c, comm, size, (const char *const *)list, &r);
    /* every rank reports the first failure (rank 0's file) */
    TU_CHECK(st == KEDR_ERR_PARSE && r == NULL && strstr(kedr_last_error(), "of") &&
                 strstr(kedr_last_error(), ".chk.bad") &&
                 strstr(kedr_last_error(), "inside its box"),
             "a split's cut outside its box: status %d, '%s'", (int)st, kedr_last_error());
    TU_OK(kedr_comm_barrier(comm));
    unlink(bad);
    for (int k = 0; k < size; k++)
        free(list[k]);
    free(list);
}

/* Checkpoints of one kind of split restarted with the other, over as many ranks: the same
 * particles, now split as the case says, and the run goes on. */
static void check_restart_kinds(kedr_backend b)
{
    kedr_ctx *ctx = tu_ctx(b);
    kedr_dsmc_case c = dt_box(1e-3, 14, 1e21, 300, 10, 2e-7);
    c.side[0] = KEDR_DSMC_INFLOW;
    c.side[1] = KEDR_DSMC_OUTFLOW;
    c.velocity[0] = 700;
    c.sample_start = 0;
    c.sample_every = 1;
    char dir[] = "/tmp/kedr-rcb-XXXXXX";
    int ok = rank != 0 || mkdtemp(dir) != NULL;
    TU_CHECK(ok, "a temporary folder");
    TU_OK(kedr_comm_bcast(comm, dir, sizeof dir, 0));
    char **files = calloc((size_t)size, sizeof *files);
    for (int k = 0; k < size; k++) {
        files[k] = malloc(160);
        snprintf(files[k], 160, "%s/r%dof%d.chk", dir, k, size);
    }
    for (int kind = 0; kind < 2; kind++) {
        c.split = (kedr_dsmc_split)kind;
        kedr_dsmc *a = NULL, *r = NULL;
        TU_OK(kedr_dsmc_create_on(ctx, &c, comm, &a));
        for (int k = 0; k < 6; k++)
            TU_OK(kedr_dsmc_step(a));
        TU_OK(kedr_dsmc_write_checkpoint(a, files[rank]));
        TU_OK(kedr_comm_barrier(comm));
        size_t na = 0, nr = 0;
        double *pa = gather_positions(a, &na);
        kedr_dsmc_case other = c;
        other.split = kind == 0 ? KEDR_DSMC_SPLIT_X : KEDR_DSMC_SPLIT_RCB;
        TU_OK(kedr_dsmc_restart_files(ctx, &other, comm, size, (const char *const *)files, &r));
        double *pr = gather_positions(r, &nr);
        int xs = 1; /* columns: every box spans y */
        for (int q = 0; size > 1 && q < size; q++)
            xs &= r->decomp.box[q].lo[1] == 0 && r->decomp.box[q].hi[1] == c.ny;
        /* columns span y; boxes of 3 ranks or more on a square grid are cut in y too */
        TU_CHECK(size == 1 || (r->decomp.kind == (int)other.split &&
                               (other.split == KEDR_DSMC_SPLIT_X ? xs : size < 3 || !xs)),
                 "a checkpoint split %s restarted as %s over %d ranks: the split is of kind %d",
                 kind ? "x" : "rcb", kind ? "rcb" : "x", size, r->decomp.kind);
        size_t bad = outside(r);
        TU_CHECK(bad == 0, "restarted with the other split: rank %d holds %zu particles outside "
                 "its box", rank, bad);
        if (rank == 0) { /* the same particles (positions, sorted) */
            qsort(pa, na, 3 * sizeof *pa, cmp3);
            qsort(pr, nr, 3 * sizeof *pr, cmp3);
            TU_CHECK(na == nr && na > 0 && memcmp(pa, pr, na * 3 * sizeof *pa) == 0,
                     "a checkpoint split %s restarted as %s over %d ranks: %zu particles, %zu "
                     "written, or other positions", kind ? "x" : "rcb", kind ? "rcb" : "x",
                     size, nr, na);
        }
        kedr_dsmc_stats sa, sr;
        TU_OK(kedr_dsmc_get_stats(a, &sa));
        TU_OK(kedr_dsmc_get_stats(r, &sr));
        TU_CHECK(sr.step == sa.step && sr.samples == sa.samples, "restarted at step %lld with "
                 "%lld samples, written at %lld with %lld", (long long)sr.step,
                 (long long)sr.samples, (long long)sa.step, (long long)sa.samples);
        for (int k = 0; k < 4; k++)
            TU_OK(kedr_dsmc_step(r));
        if (kind == 0 && size > 1)
            check_forged_split(ctx, &c, a, files);
        free(pa);
        free(pr);
        kedr_dsmc_destroy(a);
        kedr_dsmc_destroy(r);
        TU_OK(kedr_comm_barrier(comm));
    }
    if (rank == 0) {
        for (int k = 0; k < size; k++)
            unlink(files[k]);
        rmdir(dir);
    }
    for (int k = 0; k < size; k++)
        free(files[k]);
    free(files);
    kedr_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    TU_OK(kedr_comm_init(&argc, &argv, &comm));
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    snprintf(root, sizeof root, "%s", __FILE__);
    char *at = strstr(root, "tests/mpi/test_dsmc_rcb.c");
    if (at)
        *at = 0;
    else
        snprintf(root, sizeof root, "./");
    check_trees();
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int bi = 0; bi < nb; bi++) {
        /* the 3D sphere at 12 x 10 x 15 cells (z the longest: cut first), 10 a cell */
        kedr_dsmc_case s3 = coarse("sphere-3d.ini", 1, 1.0);
        s3.nx = 12;
        s3.ny = 10;
        s3.nz = 15;
        s3.weight *= (80.0 / 12) * (60.0 / 10) * (60.0 / 15);
        s3.sample_start = 10;
        compare_one(list[bi], s3, "3D sphere", (int)tu_scale(24, 16),
                    size == 1 ? 0u : size == 2 ? 4u : 5u);
        /* the axisymmetric sphere at 32 x 24 cells: 2D, cut in x, then y */
        kedr_dsmc_case ax = coarse("sphere-axi.ini", 5, 25.0);
        ax.sample_start = 10;
        compare_one(list[bi], ax, "axisymmetric sphere", (int)tu_scale(30, 20),
                    size == 1 ? 0u : size == 2 ? 1u : 3u);
        check_restart_kinds(list[bi]);
    }
    int failed = tu_failed;
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MAX, &failed, 1));
    int rc = tu_finish("test_dsmc_rcb");
    kedr_comm_finalize(comm);
    return rc ? rc : failed != 0;
}
