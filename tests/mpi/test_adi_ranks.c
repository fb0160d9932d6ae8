/* kedr adi over several ranks (ctest runs it alone and under mpirun on 1 to 4 ranks): the grid
 * split along x between the ranks, the X sweep by the partitioned solver across them, against
 * one rank's run of the same case (Thomas along whole lines) on small awkward grids:
 * 1. a 13 x 9 x 7 box with an inflow, a free outflow, a moving wall and a heated wall
 *    (double, single, central advection, the Z sweep through the transposes): the fields of
 *    the N-rank run agree with the one-rank run to rounding (double 1e-12, single 2e-5; the
 *    partitioned solve adds and multiplies in another order), the step's statistics (sums over
 *    the ranks) within 1e-10 relative (single 1e-4), the global iterations the same;
 * 2. a masked box: solid blocks that cut x lines into segments across the ranks' borders and a
 *    solid plane on a border, at a fixed temperature;
 * 3. the partitioned X sweep on one rank ([solver] x_sweep = partitioned: the same arithmetic
 *    as Thomas there, the interface couplings being 0 between the box's faces) and through
 *    kedr_tridiag_part_reduce / _complete (x_sweep = prim) on one rank and over the ranks;
 * 4. per-rank checkpoints: 3 steps, a checkpoint, 3 more, against a restart from the checkpoint,
 *    bit for bit; another rank's file, or a one-rank run given a rank's file, is refused; a
 *    one-rank checkpoint of the format before the ranks is still read;
 * 5. more ranks than the grid's x planes allow (two each) is refused on every rank, saying how
 *    many are possible;
 * 6. [solver] x_sweep and x_interface read from a case file, a bad value named with its line;
 * 7. with a GPU (KEDR_BACKEND=all), the masked case's fields with the partitioned X sweep on
 *    cuda against the cpu's, within 1e-11 (its kernels, and on several ranks the halo packing),
 *    alone and under mpirun;
 * 8. over N ranks, the interface systems solved by their owners and gathered on every rank
 *    (x_interface = owner, gather): bit for bit the same on the cpu; on cuda (gathered: solved by
 *    the GPU's kernel) within the fields' tolerance, also with every message through the host
 *    (KEDR_COMM_IPC=0). */
#include "kedr/adi.h"
#include "kedr/comm.h"

#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

static kedr_comm *comm;
static int rank, size;

static void base_case(kedr_adi_case *c, int nx, int ny, int nz)
{
    kedr_adi_case_default(c);
    c->nx = nx;
    c->ny = ny;
    c->nz = nz;
    c->h = 0.1;
    c->re = 40;
    c->dt = 0.02;
    c->steps = 5;
    c->init_temperature = 1;
    c->face[KEDR_ADI_X_LO].kind = KEDR_ADI_INFLOW;
    c->face[KEDR_ADI_X_LO].velocity[0] = 0.3;
    c->face[KEDR_ADI_X_LO].velocity[1] = 0.05;
    c->face[KEDR_ADI_X_LO].temperature = 1.2;
    c->face[KEDR_ADI_X_HI].kind = KEDR_ADI_FREE;
    c->face[KEDR_ADI_Y_HI].velocity[0] = 0.2; /* a moving wall */
    c->face[KEDR_ADI_Z_LO].adiabatic = 0;     /* a heated wall */
    c->face[KEDR_ADI_Z_LO].temperature = 1.5;
    c->force[2] = 0.1;
}

typedef struct {
    double *f[4];
    kedr_adi_stats st;
} result;

static void free_result(result *r)
{
    for (int v = 0; v < 4; v++)
        free(r->f[v]);
}

/* Whether two results hold the same n values of every field, bit for bit (NaN where both are:
 * solid nodes). */
static int same_fields(const result *a, const result *b, size_t n)
{
    int same = 1;
    for (int v = 0; v < 4; v++)
        for (size_t i = 0; i < n; i++)
            same &= a->f[v][i] == b->f[v][i] || (isnan(a->f[v][i]) && isnan(b->f[v][i]));
    return same;
}

/* The case's steps on comm (NULL: one rank, this process alone); the fields on rank 0 (or on
 * every process for one rank). */
static int run(kedr_ctx *ctx, kedr_comm *on, const kedr_adi_case *c, result *r)
{
    size_t n = (size_t)c->nx * c->ny * c->nz;
    for (int v = 0; v < 4; v++)
        r->f[v] = tu_host_alloc(n * sizeof(double));
    kedr_adi *s = NULL;
    kedr_status st = kedr_adi_create_on(ctx, on, c, &s);
    for (int64_t k = 0; st == KEDR_OK && k < c->steps; k++)
        st = kedr_adi_step(s);
    if (st == KEDR_OK) {
        st = kedr_adi_get_fields(s, r->f[0], r->f[1], r->f[2], r->f[3]);
        kedr_adi_get_stats(s, &r->st);
    }
    kedr_adi_destroy(s);
    TU_CHECK(st == KEDR_OK, "run on %d ranks: %s", kedr_comm_size(on), kedr_last_error());
    return st == KEDR_OK;
}

/* Max |a - b| over the nodes (NaN where both are NaN: solid nodes). */
static double max_diff(const kedr_adi_case *c, const result *a, const result *b, double *scale)
{
    size_t n = (size_t)c->nx * c->ny * c->nz;
    double d = 0, m = 0;
    for (int v = 0; v < 4; v++)
        for (size_t i = 0; i < n; i++) {
            double x = a->f[v][i], y = b->f[v][i];
            if (isnan(x) && isnan(y))
                continue;
            double e = fabs(x - y);
            d = e > d || isnan(e) ? e : d;
            m = fabs(x) > m ? fabs(x) : m;
        }
    *scale = m;
    return d;
}

static double rel(double a, double b)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return m > 0 ? fabs(a - b) / m : 0;
}

/* The masked case's fields of each back end with x_sweep = partitioned on all the ranks (rank
 * 0), compared at the end when both ran: the partitioned X sweep's kernels on cuda against the
 * cpu. */
static result masked_fields[2];
static int masked_ran[2];

/* Case c on every rank of comm against one rank (and, with also_part, the one-rank
 * partitioned sweep against Thomas). */
static void compare(kedr_ctx *ctx, const kedr_adi_case *c, const char *name, int also_part)
{
    double tol = c->single ? 2e-5 : 1e-12, stol = c->single ? 1e-4 : 1e-10;
    result one, many;
    int ok = run(ctx, NULL, c, &one);
    ok &= run(ctx, comm, c, &many);
    if (ok && rank == 0) {
        double scale, d = max_diff(c, &one, &many, &scale);
        printf("%s, %d ranks: max difference %.3g against one rank (fields up to %.3g), "
               "continuity rms %.6g / %.6g\n", name, size, d, scale, one.st.continuity_rms,
               many.st.continuity_rms);
        TU_CHECK(d <= tol * (scale > 1 ? scale : 1), "%s: %d ranks differ from one by %g",
                 name, size, d);
        TU_CHECK(many.st.max_speed > 0.1, "%s: the flow moved (|u| up to %g)", name,
                 many.st.max_speed);
        /* the change of the last global iteration is rounding once it has converged: compared
         * as the fields are */
        TU_CHECK(rel(one.st.continuity_rms, many.st.continuity_rms) <= stol &&
                     rel(one.st.continuity_max, many.st.continuity_max) <= stol &&
                     rel(one.st.kinetic_energy, many.st.kinetic_energy) <= stol &&
                     rel(one.st.max_speed, many.st.max_speed) <= stol &&
                     fabs(one.st.change - many.st.change) <= tol * (scale > 1 ? scale : 1),
                 "%s: statistics: rms %.17g / %.17g, energy %.17g / %.17g, change %g / %g", name,
                 one.st.continuity_rms, many.st.continuity_rms, one.st.kinetic_energy,
                 many.st.kinetic_energy, one.st.change, many.st.change);
        TU_CHECK(one.st.global_iterations == many.st.global_iterations &&
                     one.st.step == many.st.step,
                 "%s: %d / %d global iterations", name, one.st.global_iterations,
                 many.st.global_iterations);
    }
    /* the interface systems solved by their owners (x_interface = owner) and gathered on every
     * rank (gather, on cuda by the GPU's kernel): the same Thomas arithmetic, so the same bits
     * on the cpu; on cuda within the tolerance, and said whether bit for bit */
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    for (int way = 1; also_part && ok && size > 1 && way <= 2 + cuda; way++) {
        kedr_adi_case p = *c;
        p.x_interface = way < 3 ? way : 2;
        result other;
        /* way 3 (cuda): gathered, every message through the host (KEDR_COMM_IPC=0) */
        if (way == 3)
            setenv("KEDR_COMM_IPC", "0", 1);
        int done = run(ctx, comm, &p, &other);
        if (way == 3)
            unsetenv("KEDR_COMM_IPC");
        if (done && rank == 0) {
            double scale, d = max_diff(c, &many, &other, &scale);
            int same = same_fields(&many, &other, (size_t)c->nx * c->ny * c->nz);
            printf("%s, %d ranks: x_interface = %s against auto: max difference %.3g (%s)\n",
                   name, size, way == 1 ? "owner" : way == 2 ? "gather" : "gather, through the host",
                   d, same ? "bit for bit" : "not bit for bit");
            TU_CHECK(cuda ? d <= tol * (scale > 1 ? scale : 1) : same,
                     "%s: x_interface = %d over %d ranks differs from auto by %g", name, way,
                     size, d);
            TU_CHECK(other.st.global_iterations == many.st.global_iterations,
                     "%s: x_interface = %d: %d / %d global iterations", name, way,
                     other.st.global_iterations, many.st.global_iterations);
        }
        free_result(&other);
    }
    /* x_sweep = partitioned (fused) and prim (kedr_tridiag_part_*) on one rank, and prim over
     * the ranks */
    for (int way = 1; also_part && ok && way <= 3; way++) {
        kedr_adi_case p = *c;
        p.x_partitioned = way == 1 ? 1 : 2;
        result part;
        if (run(ctx, way == 3 ? comm : NULL, &p, &part) && rank == 0) {
            double scale, d = max_diff(c, &one, &part, &scale);
            printf("%s, %d rank%s: x_sweep = %s against Thomas on one rank: max difference "
                   "%.3g\n", name, way == 3 ? size : 1, way == 3 && size > 1 ? "s" : "",
                   way == 1 ? "partitioned" : "prim", d);
            TU_CHECK(d <= tol * (scale > 1 ? scale : 1), "%s: x_sweep %d (%d ranks): %g", name,
                     p.x_partitioned, way == 3 ? size : 1, d);
        }
        free_result(&part);
    }
    free_result(&one);
    free_result(&many);
}

/* Solid blocks: x lines cut into two or three segments, a segment ending on each rank's
 * border for some lines, and a whole solid plane x = 6 with a gap. */
static void masked_case(kedr_adi_case *c)
{
    base_case(c, 13, 9, 7);
    c->wall_adiabatic = 0;
    c->wall_temperature = 0.8;
    size_t n = (size_t)c->nx * c->ny * c->nz;
    c->solid = tu_host_alloc(n);
    memset(c->solid, 0, n);
    for (int k = 0; k < c->nz; k++)
        for (int j = 0; j < c->ny; j++)
            for (int i = 0; i < c->nx; i++) {
                int block = (i >= 2 && i <= 3 && j >= 3 && j <= 5) ||
                            (i >= 9 && i <= 10 && k >= 3 && k <= 4) ||
                            (i == 6 && !(j >= 3 && j <= 5 && k >= 2 && k <= 4));
                c->solid[(size_t)i + c->nx * ((size_t)j + (size_t)c->ny * k)] =
                    (unsigned char)block;
            }
}

/* Steps 0-3, a checkpoint, 3-6; a restart from the checkpoint to 6: the same fields. */
static void check_restart(kedr_ctx *ctx, const kedr_adi_case *c0)
{
    kedr_adi_case c = *c0;
    /* files named by rank 0's process, apart from concurrent runs of this test */
    int32_t pid = (int32_t)getpid();
    TU_OK(kedr_comm_bcast(comm, &pid, sizeof pid, 0));
    char path[256], other[256], zero[256];
    snprintf(path, sizeof path, "test_adi_ranks_%d.rank%dof%d.chk", (int)pid, rank, size);
    snprintf(other, sizeof other, "test_adi_ranks_%d.rank%dof%d.chk", (int)pid,
             (rank + 1) % size, size);
    snprintf(zero, sizeof zero, "test_adi_ranks_%d.rank0of%d.chk", (int)pid, size);
    size_t n = (size_t)c.nx * c.ny * c.nz;
    result a, b;
    for (int v = 0; v < 4; v++) {
        a.f[v] = tu_host_alloc(n * sizeof(double));
        b.f[v] = tu_host_alloc(n * sizeof(double));
    }
    result c3;
    for (int v = 0; v < 4; v++)
        c3.f[v] = tu_host_alloc(n * sizeof(double));
    kedr_adi *s = NULL, *r = NULL;
    TU_OK(kedr_adi_create_on(ctx, comm, &c, &s));
    for (int k = 0; k < 3; k++)
        TU_OK(kedr_adi_step(s));
    TU_OK(kedr_adi_write_checkpoint(s, path));
    TU_OK(kedr_adi_get_fields(s, c3.f[0], c3.f[1], c3.f[2], c3.f[3]));
    for (int k = 0; k < 3; k++)
        TU_OK(kedr_adi_step(s));
    TU_OK(kedr_adi_get_fields(s, a.f[0], a.f[1], a.f[2], a.f[3]));
    TU_OK(kedr_comm_barrier(comm));
    TU_OK(kedr_adi_restart_on(ctx, comm, &c, path, &r));
    kedr_adi_stats st;
    kedr_adi_get_stats(r, &st);
    TU_CHECK(st.step == 3, "restart at step %lld", (long long)st.step);
    for (int k = 0; k < 3; k++)
        TU_OK(kedr_adi_step(r));
    TU_OK(kedr_adi_get_fields(r, b.f[0], b.f[1], b.f[2], b.f[3]));
    if (rank == 0) {
        int same = same_fields(&a, &b, n);
        TU_CHECK(same, "%d ranks: a restart from the checkpoints is the straight run, bit for "
                 "bit", size);
        size_t h1, h2;
        kedr_adi_history(s, &h1);
        kedr_adi_history(r, &h2);
        TU_CHECK(h1 == 6 && h2 == 6, "histories of %zu and %zu steps", h1, h2);
    }
    kedr_adi_destroy(r);
    r = NULL;
    if (size > 1) { /* another rank's file: refused on every rank */
        kedr_status e = kedr_adi_restart_on(ctx, comm, &c, other, &r);
        TU_CHECK(e != KEDR_OK && r == NULL && strstr(kedr_last_error(), "rank") != NULL,
                 "another rank's checkpoint refused: %s", kedr_last_error());
        /* one rank alone, given rank 0's file of several: it reads them all, the fields of
         * step 3 exactly */
        TU_OK(kedr_adi_restart(ctx, &c, zero, &r));
        kedr_adi_get_stats(r, &st);
        TU_CHECK(st.step == 3, "one rank from %d ranks' checkpoints: step %lld", size,
                 (long long)st.step);
        TU_OK(kedr_adi_get_fields(r, b.f[0], b.f[1], b.f[2], b.f[3]));
        if (rank == 0) {
            int same = same_fields(&c3, &b, n);
            TU_CHECK(same, "one rank from the checkpoints of %d: the fields of step 3, bit for "
                     "bit", size);
        }
        kedr_adi_destroy(r);
        r = NULL;
        /* a set with a file missing: refused, naming it */
        char gone[256];
        snprintf(gone, sizeof gone, "test_adi_ranks_%d.rank%dof%d.chk", (int)pid, size - 1, size);
        TU_OK(kedr_comm_barrier(comm));
        char saved[300];
        snprintf(saved, sizeof saved, "%s.away", gone);
        if (rank == 0)
            TU_CHECK(rename(gone, saved) == 0, "rename %s", gone);
        TU_OK(kedr_comm_barrier(comm));
        if (rank == 0) {
            e = kedr_adi_restart(ctx, &c, zero, &r);
            TU_CHECK(e != KEDR_OK && r == NULL && strstr(kedr_last_error(), gone) != NULL,
                     "a set without %s refused: %s", gone, kedr_last_error());
            TU_CHECK(rename(saved, gone) == 0, "rename back %s", gone);
        }
        TU_OK(kedr_comm_barrier(comm));
    }
    /* the other way: one rank's checkpoint of step 3 (this run's fields, written by rank 0
     * alone) read by every rank of this run */
    char one[256];
    snprintf(one, sizeof one, "test_adi_ranks_%d.one.chk", (int)pid);
    if (rank == 0) {
        kedr_adi *o1 = NULL;
        TU_OK(kedr_adi_create(ctx, &c, &o1));
        const double *in[4] = {c3.f[0], c3.f[1], c3.f[2], c3.f[3]};
        TU_OK(kedr_adi_set_fields(o1, in[0], in[1], in[2], in[3]));
        TU_OK(kedr_adi_write_checkpoint(o1, one));
        kedr_adi_destroy(o1);
    }
    TU_OK(kedr_comm_barrier(comm));
    TU_OK(kedr_adi_restart_on(ctx, comm, &c, one, &r));
    TU_OK(kedr_adi_get_fields(r, b.f[0], b.f[1], b.f[2], b.f[3]));
    if (rank == 0) {
        int same = same_fields(&c3, &b, n);
        TU_CHECK(same, "%d ranks from one rank's checkpoint: its fields, bit for bit", size);
    }
    kedr_adi_destroy(r);
    r = NULL;
    TU_OK(kedr_comm_barrier(comm));
    if (rank == 0)
        remove(one);
    free_result(&c3);
    kedr_adi_destroy(s);
    TU_OK(kedr_comm_barrier(comm));
    remove(path);
    free_result(&a);
    free_result(&b);
}

/* A one-rank checkpoint of the format before the ranks (KEDRADI1: the header without rank,
 * nranks, lo, hi) is still read: made here from a new one, restarted bit for bit. Each process
 * alone. */
static void check_v1_checkpoint(kedr_ctx *ctx, const kedr_adi_case *c)
{
    char path[128], old[128];
    snprintf(path, sizeof path, "test_adi_ranks_v2_%d.chk", (int)getpid());
    snprintf(old, sizeof old, "test_adi_ranks_v1_%d.chk", (int)getpid());
    size_t n = (size_t)c->nx * c->ny * c->nz;
    result a, b;
    for (int v = 0; v < 4; v++) {
        a.f[v] = tu_host_alloc(n * sizeof(double));
        b.f[v] = tu_host_alloc(n * sizeof(double));
    }
    kedr_adi *s = NULL, *r = NULL;
    TU_OK(kedr_adi_create(ctx, c, &s));
    for (int k = 0; k < 2; k++)
        TU_OK(kedr_adi_step(s));
    TU_OK(kedr_adi_write_checkpoint(s, path));
    TU_OK(kedr_adi_get_fields(s, a.f[0], a.f[1], a.f[2], a.f[3]));
    FILE *f = fopen(path, "rb");
    unsigned char *buf = tu_host_alloc(64 * n + 4096);
    size_t len = f ? fread(buf, 1, 64 * n + 4096, f) : 0;
    if (f)
        fclose(f);
    /* header v2: 56 bytes, then rank, nranks, lo, hi (16 bytes); the checksum last */
    TU_CHECK(len > 80 && memcmp(buf, "KEDRADI2", 8) == 0, "a new checkpoint (%zu bytes)", len);
    if (len > 80) {
        memcpy(buf, "KEDRADI1", 8);
        memmove(buf + 56, buf + 72, len - 72);
        len -= 16;
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i + 8 < len; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
        memcpy(buf + len - 8, &h, 8);
        f = fopen(old, "wb");
        TU_CHECK(f && fwrite(buf, 1, len, f) == len, "write %s", old);
        if (f)
            fclose(f);
        TU_OK(kedr_adi_restart(ctx, c, old, &r));
        if (r) {
            kedr_adi_stats st;
            kedr_adi_get_stats(r, &st);
            TU_OK(kedr_adi_get_fields(r, b.f[0], b.f[1], b.f[2], b.f[3]));
            int same = st.step == 2 && same_fields(&a, &b, n);
            TU_CHECK(same, "a checkpoint of the one-rank format (KEDRADI1) restarts the same "
                     "fields at step %lld", (long long)st.step);
        }
    }
    kedr_adi_destroy(r);
    kedr_adi_destroy(s);
    free(buf);
    remove(path);
    remove(old);
    free_result(&a);
    free_result(&b);
}

/* More ranks than the planes allow: every rank fails, told the limit. */
static void check_too_many(kedr_ctx *ctx)
{
    kedr_adi_case c;
    base_case(&c, 2 * size - 1 > 3 ? 2 * size - 1 : 3, 5, 5);
    kedr_adi *s = NULL;
    kedr_status e = kedr_adi_create_on(ctx, comm, &c, &s);
    if (size > 1) {
        char want[64];
        snprintf(want, sizeof want, "at most %d ranks", c.nx / 2);
        TU_CHECK(e == KEDR_ERR_INVALID && !s && strstr(kedr_last_error(), want),
                 "nx = %d on %d ranks refused: %s", c.nx, size, kedr_last_error());
    } else {
        TU_CHECK(e == KEDR_OK, "nx = 3 on one rank: %s", kedr_last_error());
    }
    kedr_adi_destroy(s);
    TU_CHECK(kedr_adi_max_ranks(&c) == c.nx / 2, "kedr_adi_max_ranks");
}

static void check_slabs(kedr_ctx *ctx)
{
    kedr_adi_case c;
    base_case(&c, 13, 4, 3);
    kedr_adi *s = NULL;
    TU_OK(kedr_adi_create_on(ctx, comm, &c, &s));
    if (!s)
        return;
    int lo, hi;
    int n = kedr_adi_slab(s, &lo, &hi);
    int32_t *b = calloc(2 * (size_t)size, sizeof *b);
    b[2 * rank] = lo;
    b[2 * rank + 1] = hi;
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_SUM, b, 2 * (size_t)size));
    int ok = n == size && b[0] == 0 && b[2 * size - 1] == c.nx;
    for (int r = 0; r < size; r++)
        ok &= b[2 * r + 1] - b[2 * r] >= 2 && (r == 0 || b[2 * r] == b[2 * r - 1]);
    TU_CHECK(ok, "the slabs cover the %d planes in order, two or more each", c.nx);
    free(b);
    kedr_adi_destroy(s);
}

/* Writes a small case with "KEY = VALUE" under [solver] and loads it into *c. */
static kedr_status load_solver_key(const char *path, const char *key, const char *value,
                                   kedr_adi_case *c)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return kedr_fail(KEDR_ERR_IO, "cannot write %s", path);
    fprintf(f, "[grid]\nnx = 8\nny = 5\nnz = 5\nh = 0.1\n[flow]\nre = 10\n[time]\n"
               "dt = 0.01\nsteps = 2\n[solver]\n%s = %s\n", key, value);
    fclose(f);
    return kedr_adi_case_load(path, c);
}

/* [solver] x_sweep in a case file: auto, partitioned, prim; anything else named with its line.
 * Then x_interface: auto, owner, gather; anything else likewise. */
static void check_case_key(void)
{
    static const char *const keys[2] = {"x_sweep", "x_interface"};
    static const char *const values[2][4] = {{"auto", "partitioned", "prim", "thomas"},
                                             {"auto", "owner", "gather", "chain"}};
    char path[128];
    snprintf(path, sizeof path, "test_adi_ranks_%d.ini", (int)getpid());
    for (int key = 0; key < 2; key++)
        for (int k = 0; k < 4; k++) {
            kedr_adi_case c;
            kedr_status st = load_solver_key(path, keys[key], values[key][k], &c);
            int got = st != KEDR_OK ? -1 : key ? (int)c.x_interface : (int)c.x_partitioned;
            if (k < 3)
                TU_CHECK(st == KEDR_OK && got == k, "%s = %s: %d (%s)", keys[key],
                         values[key][k], got, kedr_last_error());
            else
                TU_CHECK(st != KEDR_OK && strstr(kedr_last_error(), ":12:") &&
                             strstr(kedr_last_error(), keys[key]),
                         "%s = %s refused with the line and key: %s", keys[key], values[key][k],
                         kedr_last_error());
            if (st == KEDR_OK)
                kedr_adi_case_free(&c);
        }
    remove(path);
}

static void run_backend(kedr_backend be)
{
    kedr_ctx *ctx = NULL;
    int dev = be == KEDR_BACKEND_CUDA ? kedr_comm_device(comm, kedr_device_count()) : 0;
    if (kedr_ctx_create(&ctx, be, dev) != KEDR_OK) {
        TU_CHECK(0, "a %s context: %s", kedr_backend_name(be), kedr_last_error());
        return;
    }
    if (rank == 0)
        printf("back end: %s\n", kedr_backend_name(be));
    check_slabs(ctx);
    kedr_adi_case c;
    base_case(&c, 13, 9, 7);
    compare(ctx, &c, "box 13x9x7", 1);
    c.single = 1;
    compare(ctx, &c, "box 13x9x7 single", 1);
    c.single = 0;
    c.central = 1;
    c.z_transpose = 1;
    c.local_iterations = 3;
    compare(ctx, &c, "box 13x9x7 central, z transposed, 3 local iterations", 0);
    base_case(&c, 17, 6, 5);
    c.global_iterations = 10;
    c.continuity_tolerance = 0.05; /* a stop the ranks must take together */
    compare(ctx, &c, "box 17x6x5 with a continuity stop", 0);
    kedr_adi_case m;
    masked_case(&m);
    compare(ctx, &m, "masked 13x9x7", 1);
    /* the partitioned sweep on every rank count (also one), kept for cuda against cpu */
    int bi = be == KEDR_BACKEND_CUDA;
    kedr_adi_case mp = m;
    mp.x_partitioned = 1;
    masked_ran[bi] = run(ctx, comm, &mp, &masked_fields[bi]);
    if (!masked_ran[bi])
        free_result(&masked_fields[bi]);
    m.single = 1;
    compare(ctx, &m, "masked 13x9x7 single", 0);
    m.single = 0;
    check_restart(ctx, &m);
    check_v1_checkpoint(ctx, &m);
    kedr_adi_case_free(&m);
    check_too_many(ctx);
    kedr_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (kedr_comm_init(&argc, &argv, &comm) != KEDR_OK) {
        fprintf(stderr, "kedr_comm_init: %s\n", kedr_last_error());
        return 1;
    }
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    kedr_backend list[2];
    int nb = tu_backends(list);
    check_case_key();
    for (int i = 0; i < nb; i++)
        run_backend(list[i]);
    if (masked_ran[0] && masked_ran[1] && rank == 0) {
        kedr_adi_case m;
        masked_case(&m);
        double scale, d = max_diff(&m, &masked_fields[0], &masked_fields[1], &scale);
        printf("masked 13x9x7, x_sweep = partitioned, %d ranks: cuda against cpu: max "
               "difference %.3g\n", size, d);
        TU_CHECK(d <= 1e-11, "masked, %d ranks: cuda and cpu differ by %g", size, d);
        kedr_adi_case_free(&m);
    }
    for (int i = 0; i < 2; i++)
        if (masked_ran[i])
            free_result(&masked_fields[i]);
    uint64_t counts[2] = {(uint64_t)tu_passed, (uint64_t)tu_failed};
    kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, counts, 2);
    if (rank == 0)
        printf("test_adi_ranks (%d ranks): %llu passed, %llu failed\n", size,
               (unsigned long long)counts[0], (unsigned long long)counts[1]);
    kedr_comm_finalize(comm);
    return counts[1] ? 1 : 0;
}
