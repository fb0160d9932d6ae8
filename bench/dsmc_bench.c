/* kedr bench dsmc: particle-steps per second and the stage breakdown of the DSMC simulator.
 *
 * Cases:
 * - box: the counterpart of SPARTA's bench/in.collide: argon with VSS collisions (Bird 1994
 *   table A2) at 273.15 K and n = 7.07043e22 m^-3, at rest, 10 particles per cell, cells of
 *   1e-5 m, dt = 7e-9 s, specular (SPARTA: reflective) walls, no sampling; the steps move,
 *   index and collide. What differs: kedr's box is 2D planar (SPARTA's is 3D), so the cell count
 *   for a particle count is the same but the cells are squares of unit depth.
 * - box3d: the same gas in kedr's 3D mode, cubic cells of 1e-5 m as in SPARTA, at the largest
 *   particle count asked for.
 * - seed-test1, seed-test2: the two test cases of seed 003 (cases/dsmc/), every stage, timed
 *   after the flow has crossed the domain twice.
 * - sphere-air5: cases/dsmc/sphere-air5-3d.ini, a 3D sphere in reacting five-species air
 *   (rotation, vibration, TCE chemistry) at 7.5 km/s, refined as sphere_case does to the largest
 *   particle count asked for (1e8 on a GPU: cells of about 3 mm), every stage, timed after the
 *   shock layer has formed (on a GPU; a few steps on the cpu).
 * Bytes per particle: all the context memory the simulator holds after the timed steps
 * (kedr_dsmc_memory: particle slots at their capacity with the sort's buffers, per-cell arrays,
 * the scratch cache) over the particles in the domain. */
#include "bench.h"
#include "bench_util.h"

#include "dsmc/sim.h"

#ifndef KEDR_GIT_COMMIT
#define KEDR_GIT_COMMIT "unknown"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char name[48];
    size_t particles, cells;
    int steps;
    double seconds, psteps; /* timed wall time and particle-steps */
    double stage[KEDR_DSMC_NSTAGES];
    double bytes_per_particle;
    char status[16], message[256];
} dsmc_row;

/* The in.collide box with about n particles, planar (dims 2) or 3D; stretch times as long along
 * x (for runs over ranks: a cube of about n particles a rank). */
static kedr_dsmc_case box_case_x(size_t n, int dims, int stretch)
{
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "box");
    int side = (int)ceil(dims == 3 ? cbrt((double)n / 10.0) : sqrt((double)n / 10.0));
    side = side < 1 ? 1 : side;
    c.dims = dims;
    c.nx = c.ny = c.nz = side;
    c.nx = side * stretch;
    c.hi[0] = c.nx * 1e-5;
    c.hi[1] = c.hi[2] = side * 1e-5;
    for (int s = 0; s < 6; s++)
        c.side[s] = KEDR_DSMC_SPECULAR;
    c.nspecies = 1;
    kedr_dsmc_species ar = {"Ar", 66.3e-27, 4.17e-10, 0.81, 273, 1.40, 4.11e-10, 0, 1, 0, 0, 0, 0};
    c.species[0] = ar;
    c.fraction[0] = 1;
    c.model = KEDR_DSMC_VSS;
    c.number_density = 7.07043e22;
    c.temperature = c.wall_temperature = 273.15;
    c.fill = 1;
    c.dt = 7e-9;
    c.steps = 1000000;
    c.seed = 12345;
    c.weight = c.number_density * 1e-5 * 1e-5 * (dims == 3 ? 1e-5 : 1.0) / 10.0;
    c.sample_start = INT64_MAX / 2; /* no sampling, as in.collide */
    c.sample_every = 1;
    return c;
}

static kedr_dsmc_case box_case(size_t n, int dims) { return box_case_x(n, dims, 1); }

/* The 3D box with about n particles a rank, nranks cubes of them side by side along x, y and z:
 * each prime factor of nranks, largest first, multiplies the axis of fewest cubes (x first of
 * equals), so 2 ranks: 2 x 1 x 1 cubes, 4: 2 x 2 x 1, 8: 2 x 2 x 2. Recursive bisection gives
 * each rank a cube; columns along x give thinner slabs with more area between the ranks. */
static kedr_dsmc_case box_case_tiles(size_t n, int nranks)
{
    kedr_dsmc_case c = box_case_x(n, 3, 1);
    int f[3] = {1, 1, 1}, left = nranks;
    while (left > 1) {
        int p = left; /* the largest prime factor */
        for (int q = 2; q * q <= left; q++)
            while (p % q == 0 && p > q)
                p /= q;
        int a = f[1] < f[0] ? (f[2] < f[1] ? 2 : 1) : (f[2] < f[0] ? 2 : 0);
        f[a] *= p;
        left /= p;
    }
    int side = c.nx;
    c.nx = side * f[0];
    c.ny = side * f[1];
    c.nz = side * f[2];
    c.hi[0] = c.nx * 1e-5;
    c.hi[1] = c.ny * 1e-5;
    c.hi[2] = c.nz * 1e-5;
    return c;
}

static kedr_status sphere_case(const char *path, size_t particles, kedr_dsmc_case *c);

/* Runs warm steps, then timed steps of the stages in mask, into row. */
static kedr_status time_case(kedr_ctx *ctx, kedr_comm *comm, const kedr_dsmc_case *c,
                             unsigned mask, int warm, int steps, dsmc_row *row)
{
    kedr_dsmc *sim = NULL;
    kedr_scratch_trim(ctx); /* what an earlier case left cached is not this one's */
    KEDR_TRY(kedr_dsmc_create_on(ctx, c, comm, &sim));
    kedr_status s = KEDR_OK;
    for (int i = 0; i < warm && s == KEDR_OK; i++)
        s = kedr_dsmc_step_stages(sim, mask);
    kedr_dsmc_stats a, b;
    if (s == KEDR_OK)
        s = kedr_dsmc_get_stats(sim, &a);
    if (s == KEDR_OK)
        s = kedr_ctx_sync(ctx);
    if (comm && s == KEDR_OK)
        s = kedr_comm_barrier(comm); /* the ranks start the clock together */
    double t0 = kedr_wall_seconds(), psteps = 0;
    for (int i = 0; i < steps && s == KEDR_OK; i++) {
        psteps += (double)sim->n; /* the particles this step moves */
        s = kedr_dsmc_step_stages(sim, mask);
    }
    if (s == KEDR_OK)
        s = kedr_ctx_sync(ctx);
    if (comm)
        s = kedr_comm_agree(comm, s); /* and stop it when the last is done */
    double t1 = kedr_wall_seconds();
    if (comm && s == KEDR_OK) { /* every rank's particle-steps; the slowest rank's time */
        s = kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_SUM, &psteps, 1);
        double dt = t1 - t0;
        if (s == KEDR_OK)
            s = kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_MAX, &dt, 1);
        t1 = t0 + dt;
    }
    if (s == KEDR_OK) {
        s = kedr_dsmc_get_stats(sim, &b);
    }
    if (s == KEDR_OK) {
        row->particles = b.particles;
        row->cells = sim->ncells;
        row->steps = steps;
        row->seconds = t1 - t0;
        row->psteps = psteps;
        for (int k = 0; k < KEDR_DSMC_NSTAGES; k++)
            row->stage[k] = b.stage_seconds[k] - a.stage_seconds[k];
        size_t bytes = 0;
        s = kedr_dsmc_memory(sim, &bytes);
        /* over ranks: the largest of each rank's memory over its own particles */
        double bpp = sim->n ? (double)bytes / (double)sim->n : 0;
        if (comm && s == KEDR_OK)
            s = kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_MAX, &bpp, 1);
        row->bytes_per_particle = bpp;
    }
    kedr_dsmc_destroy(sim);
    return s;
}

static void print_row(const dsmc_row *r)
{
    if (strcmp(r->status, "ok") != 0) {
        printf("%-12s %s: %s\n", r->name, r->status, r->message);
        return;
    }
    double per = r->steps ? 1e3 / r->steps : 0, total = 0;
    for (int k = 0; k < KEDR_DSMC_NSTAGES; k++)
        total += r->stage[k];
    printf("%-12s %11zu %10zu %6d %10.3f %12.3e %8.1f\n", r->name, r->particles, r->cells,
           r->steps, r->seconds * per, r->psteps / r->seconds, r->bytes_per_particle);
    /* The stage breakdown, laid out like Tables 2-4 of seed 003. */
    for (int k = 0; k < KEDR_DSMC_NSTAGES; k++)
        if (r->stage[k] > 0)
            printf("    %-12s %10.3f ms/step %6.1f%%\n",
                   kedr_dsmc_stage_name((kedr_dsmc_stage)k), r->stage[k] * per,
                   total > 0 ? 100 * r->stage[k] / total : 0);
}

static kedr_status write_json(const char *path, kedr_ctx *ctx, const char *device,
                              const char *date, const dsmc_row *rows, int nrows)
{
    kedr_file_writer w;
    bench_meta m = {"dsmc", device, kedr_backend_name(kedr_ctx_backend(ctx)), date,
                    bench_commit(KEDR_GIT_COMMIT)};
    KEDR_TRY(bench_json_open(&w, path, &m));
    FILE *f = KEDR_FILE(&w);
    fputs(",\n  \"results\": [", f);
    for (int i = 0; i < nrows; i++) {
        const dsmc_row *r = &rows[i];
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        kedr_json_string(f, r->name);
        bench_json_status(f, r->status, r->message);
        if (strcmp(r->status, "ok") == 0) {
            fprintf(f, ", \"particles\": %zu, \"cells\": %zu, \"steps\": %d, \"ms_per_step\": "
                    "%.6g, \"particle_steps_per_s\": %.6g, \"bytes_per_particle\": %.4g, "
                    "\"stage_ms_per_step\": {", r->particles, r->cells, r->steps,
                    1e3 * r->seconds / r->steps, r->psteps / r->seconds, r->bytes_per_particle);
            for (int k = 0; k < KEDR_DSMC_NSTAGES; k++)
                fprintf(f, "%s\"%s\": %.6g", k ? ", " : "",
                        kedr_dsmc_stage_name((kedr_dsmc_stage)k), 1e3 * r->stage[k] / r->steps);
            fputc('}', f);
        }
        fputc('}', f);
    }
    return bench_json_close(&w);
}

/* One measurement; a failure (out of memory at a large count, a missing case file) is recorded
 * in its row and the others go on. */
/* A row for a case that could not be made: its name, "error" and the library's message. */
static void error_row(dsmc_row *row, const char *name)
{
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", name);
    snprintf(row->status, sizeof row->status, "error");
    snprintf(row->message, sizeof row->message, "%s", kedr_last_error());
    print_row(row);
}

static void measure_on(kedr_ctx *ctx, kedr_comm *comm, const kedr_dsmc_case *c,
                       const char *name, unsigned mask, int warm, int steps, dsmc_row *row)
{
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", name);
    kedr_status s = time_case(ctx, comm, c, mask, warm, steps, row);
    snprintf(row->status, sizeof row->status, "%s", s == KEDR_OK ? "ok" : kedr_status_name(s));
    if (s != KEDR_OK)
        snprintf(row->message, sizeof row->message, "%s", kedr_last_error());
    print_row(row);
    fflush(stdout);
}

static void measure(kedr_ctx *ctx, const kedr_dsmc_case *c, const char *name, unsigned mask,
                    int warm, int steps, dsmc_row *row)
{
    measure_on(ctx, NULL, c, name, mask, warm, steps, row);
}

kedr_status kedr_bench_dsmc(kedr_ctx *ctx, const kedr_bench_dsmc_opts *o)
{
    int gpu = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    size_t top = o->particles ? o->particles : gpu ? (size_t)100000000 : (size_t)1000000;
    if (gpu) { /* what fits: the closed boxes take 53.5 (2D) and 61.5 (3D) bytes a particle */
        kedr_device_info info;
        if (kedr_device_get_info(kedr_ctx_device(ctx), &info) == KEDR_OK &&
            top > info.memory_bytes / 72)
            top = info.memory_bytes / 72;
    }
    char device[300], date[32];
    bench_device_name(ctx, device, sizeof device);
    bench_utc_date(date, sizeof date);
    printf("kedr bench dsmc: %s (%s), %s\n", device, kedr_backend_name(kedr_ctx_backend(ctx)),
           date);
    double load;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *wait = getenv("OMP_WAIT_POLICY");
    if (!gpu && getloadavg(&load, 1) == 1) {
        /* Threads that spin at a barrier while the thread they wait for is descheduled make a
         * loaded machine look many times slower than it is (docs/performance.md). */
        printf("load average %.2f on %ld cpus, OMP_WAIT_POLICY=%s\n", load, cpus,
               wait ? wait : "(unset)");
        if (load > cpus && !(wait && strcasecmp(wait, "passive") == 0))
            printf("note: the machine is loaded; OpenMP threads spinning at barriers can make "
                   "these times many times too long: OMP_WAIT_POLICY=passive avoids it\n");
    }
    printf("%-12s %11s %10s %6s %10s %12s %8s\n", "case", "particles", "cells", "steps",
           "ms/step", "p-steps/s", "B/part");
    dsmc_row rows[16];
    int nrows = 0;
    unsigned box_mask = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) |
                        KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
    /* Box sizes: decades from 10^5 up to the largest asked for. */
    for (size_t n = 100000; nrows < 10; n *= 10) {
        size_t size = n < top ? n : top;
        kedr_dsmc_case c = box_case(size, 2);
        char name[48];
        snprintf(name, sizeof name, "box-%.0e", (double)size);
        int steps = gpu ? 50 : size > 1000000 ? 5 : 20;
        measure(ctx, &c, name, box_mask, 3, steps, &rows[nrows++]);
        if (size == top)
            break;
    }
    {
        kedr_dsmc_case c = box_case(top, 3);
        char name[48];
        snprintf(name, sizeof name, "box3d-%.0e", (double)top);
        measure(ctx, &c, name, box_mask, 3, gpu ? 50 : top > 1000000 ? 5 : 20, &rows[nrows++]);
    }
    static const char *const seeds[] = {"seed-test1", "seed-test2"};
    for (int k = 0; k < 2; k++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s.ini", o->cases ? o->cases : "cases/dsmc", seeds[k]);
        kedr_dsmc_case c;
        dsmc_row *row = &rows[nrows++];
        if (kedr_dsmc_case_load(path, &c) != KEDR_OK) {
            error_row(row, seeds[k]);
            continue;
        }
        c.sample_start = 0; /* sampling is part of the step being timed */
        c.dt = k == 0 ? 1e-5 : c.dt; /* test 1 at the paper's dt (the shipped case takes 1e-6) */
        /* The domain starts filled with freestream gas; on a GPU two flow-through times pass
         * before timing (the flow crosses the 2 m in 27 steps), fewer on the cpu. */
        int warm = gpu ? 60 : k == 0 ? 30 : 5, steps = gpu ? 100 : k == 0 ? 20 : 5;
        measure(ctx, &c, seeds[k], KEDR_DSMC_ALL_STAGES, warm, steps, row);
    }
    {
        /* Reacting air at 7.5 km/s: sphere-air5-3d.ini refined to the top count. dt shrinks
         * with the cells (1.5e-7 s at 1e8), so a molecule crosses the sphere's radius in about 90
         * steps; 300 warm steps (over three such times) let the shock layer form and the
         * reactions start before the timing. The cpu takes a few steps only, to show it runs. */
        char path[1100], name[48];
        snprintf(path, sizeof path, "%s/sphere-air5-3d.ini", o->cases ? o->cases : "cases/dsmc");
        snprintf(name, sizeof name, "sphere-air5-%.0e", (double)top);
        kedr_dsmc_case c;
        dsmc_row *row = &rows[nrows++];
        if (sphere_case(path, top, &c) != KEDR_OK)
            error_row(row, name);
        else
            measure(ctx, &c, name, KEDR_DSMC_ALL_STAGES, gpu ? 300 : 5, gpu ? 50 : 5, row);
    }
    kedr_status s = KEDR_OK;
    if (o->json) {
        s = write_json(o->json, ctx, device, date, rows, nrows);
        if (s == KEDR_OK)
            printf("wrote %s\n", o->json);
    }
    return s;
}

/* The 3D sphere of PATH with about `particles` particles: each side's cell count times k and the
 * weight divided by the cells' growth, so that a cell keeps its particles, with k the cube root
 * of particles over the case's own (free-stream density times the domain's volume over the
 * weight), and dt divided by k (a molecule still crosses about the same fraction of a cell a
 * step); sampling from the first step. */
static kedr_status sphere_case(const char *path, size_t particles, kedr_dsmc_case *c)
{
    KEDR_TRY(kedr_dsmc_case_load(path, c));
    double vol = 1;
    for (int a = 0; a < 3; a++)
        vol *= c->hi[a] - c->lo[a];
    double own = c->number_density * vol / c->weight;
    double k = cbrt((double)particles / own);
    int n0[3] = {c->nx, c->ny, c->nz};
    c->nx = (int)lround(c->nx * k);
    c->ny = (int)lround(c->ny * k);
    c->nz = (int)lround(c->nz * k);
    if (c->nx < 1 || c->ny < 1 || c->nz < 1)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu particles give a grid of %d x %d x %d", path,
                         particles, c->nx, c->ny, c->nz);
    c->weight /= (double)c->nx * c->ny * c->nz / ((double)n0[0] * n0[1] * n0[2]);
    c->dt /= k;
    c->sample_start = 0;
    return KEDR_OK;
}

/* Over the ranks of comm (kedr bench dsmc --ranks, under mpirun): weak scaling, a box3d of
 * about opts->particles a rank stretched along x so that each rank's columns make a cube (any
 * split gives slabs there), the same cubes tiled along x, y and z (box_case_tiles: there the
 * splits differ), and strong scaling, seed test 2 over the same ranks, each split as
 * opts->split says. Particle-steps are summed over the ranks and
 * the time is the slowest rank's; the stage rows are the slowest rank's too. */
kedr_status kedr_bench_dsmc_ranks(kedr_ctx *ctx, kedr_comm *comm, const kedr_bench_dsmc_opts *o)
{
    int gpu = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA, nranks = kedr_comm_size(comm);
    size_t per = o->particles ? o->particles : gpu ? (size_t)100000000 : (size_t)1000000;
    if (gpu) { /* what fits, with room for the exchange's buffers */
        kedr_device_info info;
        if (kedr_device_get_info(kedr_ctx_device(ctx), &info) == KEDR_OK &&
            per > info.memory_bytes / 80)
            per = info.memory_bytes / 80;
    }
    char device[300], date[32];
    bench_device_name(ctx, device, sizeof device);
    bench_utc_date(date, sizeof date);
    printf("kedr bench dsmc --ranks: %d rank%s, %s (%s) on rank 0, %s, split %s\n", nranks,
           nranks > 1 ? "s" : "", device, kedr_backend_name(kedr_ctx_backend(ctx)), date,
           o->split == KEDR_DSMC_SPLIT_X ? "x" : "rcb");
    printf("%-18s %11s %10s %6s %10s %12s %8s\n", "case", "particles", "cells", "steps",
           "ms/step", "p-steps/s", "B/part");
    dsmc_row rows[4];
    int nrows = 0;
    unsigned box_mask = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE) | KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) |
                        KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
    char name[48];
    kedr_dsmc_case box = box_case_x(per, 3, nranks);
    box.split = (kedr_dsmc_split)o->split;
    snprintf(name, sizeof name, "box3d-weak-np%d", nranks);
    measure_on(ctx, comm, &box, name, box_mask, 3, gpu ? 50 : 5, &rows[nrows++]);
    box = box_case_tiles(per, nranks);
    box.split = (kedr_dsmc_split)o->split;
    snprintf(name, sizeof name, "tiles3d-weak-np%d", nranks);
    measure_on(ctx, comm, &box, name, box_mask, 3, gpu ? 50 : 5, &rows[nrows++]);
    char path[1100];
    snprintf(path, sizeof path, "%s/seed-test2.ini", o->cases ? o->cases : "cases/dsmc");
    kedr_dsmc_case c;
    dsmc_row *row = &rows[nrows++];
    snprintf(name, sizeof name, "seed-test2-np%d", nranks);
    if (kedr_dsmc_case_load(path, &c) != KEDR_OK) {
        error_row(row, name);
    } else {
        c.sample_start = 0;
        c.split = (kedr_dsmc_split)o->split;
        measure_on(ctx, comm, &c, name, KEDR_DSMC_ALL_STAGES, gpu ? 60 : 5, gpu ? 100 : 5, row);
    }
    if (o->sphere) { /* strong scaling of a 3D body: sphere-3d refined to about o->sphere */
        snprintf(path, sizeof path, "%s/sphere-3d.ini", o->cases ? o->cases : "cases/dsmc");
        row = &rows[nrows++];
        snprintf(name, sizeof name, "sphere-strong-np%d", nranks);
        if (sphere_case(path, o->sphere, &c) != KEDR_OK) {
            error_row(row, name);
        } else {
            c.split = (kedr_dsmc_split)o->split;
            measure_on(ctx, comm, &c, name, KEDR_DSMC_ALL_STAGES, gpu ? 20 : 3, gpu ? 40 : 3,
                       row);
        }
    }
    kedr_status s = KEDR_OK;
    if (o->json && kedr_comm_rank(comm) == 0) {
        s = write_json(o->json, ctx, device, date, rows, nrows);
        if (s == KEDR_OK)
            printf("wrote %s\n", o->json);
    }
    return s;
}
