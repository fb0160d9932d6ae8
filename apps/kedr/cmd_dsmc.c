/* kedr dsmc CASE.ini: runs a DSMC case, prints statistics and a stage timing table, writes the
 * time-averaged cell fields as CSV and VTK. Refuses a case whose estimated work would not finish
 * (unless --force), and on Ctrl-C or SIGTERM saves a checkpoint and what was sampled. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>


/* Output paths are DIR/NAME plus a suffix; both are bounded by their fields in the case. */
#define DSMC_PATH 1024
_Static_assert(sizeof(((kedr_dsmc_case *)0)->out_dir) + sizeof(((kedr_dsmc_case *)0)->name) + 32 <=
                   DSMC_PATH, "an output path always fits");

/* Refused without --force: a run estimated to take longer than this, or a step longer than
 * DSMC_STEP_LIMIT_S (kedr_dsmc_estimate and the rates below). */
#define DSMC_RUN_LIMIT_S (24.0 * 3600)
#define DSMC_STEP_LIMIT_S 600.0

typedef struct {
    const char *case_path, *out, *restart, *sample_start, *split;
    long long steps, seed, window;
    int force, check;
    cli_common com;
} dsmc_options;

/* Under mpirun, one simulator a rank (kedr_dsmc_create_on): rank 0 prints and writes the
 * fields; each rank writes its own checkpoint (cli_rank_path). */
static kedr_comm *dsmc_comm;
static int dsmc_rank, dsmc_nranks = 1;

static void help(void)
{
    printf("usage: kedr dsmc CASE.ini [options]\n\n"
           "Runs the direct simulation Monte Carlo case described by CASE.ini (keys: docs/dsmc.md),\n"
           "printing a statistics line every [output] stats_every steps and a stage timing table\n"
           "at the end, and writes the time-averaged cell fields to DIR/NAME.csv and DIR/NAME.vti;\n"
           "with bodies, also their surface (DIR/NAME-surface.csv, .vtp) and Cd, Cl per body.\n"
           "[output] vtk = binary writes the VTK files compressed; [output] stats_file a row of\n"
           "[output] stats_columns every stats_every steps (CSV, or JSON lines for .jsonl).\n"
           "A run that sampled nothing writes no fields. Ctrl-C or SIGTERM stops after the\n"
           "current step, writes DIR/NAME.chk and the fields sampled so far, and exits with 130\n"
           "(SIGTERM: 143; a second Ctrl-C stops at once).\n\n"
           "options:\n"
           "  --steps N      steps to run (overrides [run] steps)\n"
           "  --sample-start N|auto\n"
           "                 first sampled step, or once the flow is steady (overrides\n"
           "                 [sample] start)\n"
           "  --output-every N\n"
           "                 unsteady output: the fields of every N steps from the start of\n"
           "                 sampling to DIR/NAME-wSTEP.vti, listed in DIR/NAME.pvd for\n"
           "                 ParaView (overrides [output] window; 0: none)\n"
           "  --out DIR      output directory (overrides [output] dir; created if missing)\n"
           "  --seed S       random seed (overrides [run] seed)\n"
           "  --split rcb|x  over several ranks (mpirun): boxes by recursive coordinate bisection\n"
           "                 or columns along x (overrides [run] split; default rcb)\n"
           "  --restart FILE continue from a checkpoint written for this case, up to step N\n"
           "                 of --steps or [run] steps (steps count from the start of the run)\n"
           "  --force        run even when the estimated work or memory is beyond this machine\n"
           "  --check        load the case, print the estimate and the sampling plan, run nothing\n"
           CLI_COMMON_HELP);
}

static int fail(const char *what)
{
    fprintf(stderr, "kedr dsmc: %s%s%s\n", what ? what : "", what ? ": " : "", kedr_last_error());
    return CLI_EXIT_FAIL;
}

static int print_body(const kedr_dsmc_surface *sf, int b)
{
    if (sf->axisymmetric)
        return printf("body %d: Cd %.5g  (drag %.5g N along the axis, reference area %.5g m^2, "
                      "%lld steps sampled)\n", b + 1, sf->cd[b], sf->drag[b],
                      sf->reference_length[b], (long long)sf->steps);
    if (sf->dims == 3)
        return printf("body %d: Cd %.5g  Cl %.5g  (drag %.5g N, lift %.5g N, reference area "
                      "%.5g m^2, %lld steps sampled)\n", b + 1, sf->cd[b], sf->cl[b], sf->drag[b],
                      sf->lift[b], sf->reference_length[b], (long long)sf->steps);
    return printf("body %d: Cd %.5g  Cl %.5g  (drag %.5g N/m, lift %.5g N/m, reference length "
                  "%.5g m, %lld steps sampled)\n", b + 1, sf->cd[b], sf->cl[b], sf->drag[b],
                  sf->lift[b], sf->reference_length[b], (long long)sf->steps);
}

/* The surface files and, per body, the force coefficients (once the surface was sampled). */
static kedr_status write_surface(kedr_dsmc *sim, const kedr_dsmc_case *c)
{
    kedr_dsmc_surface sf;
    KEDR_TRY(kedr_dsmc_get_surface(sim, &sf));
    kedr_status s = KEDR_OK;
    if (sf.nelem > 0 && sf.steps > 0 && dsmc_rank == 0) {
        for (int b = 0; b < sf.nbodies; b++)
            print_body(&sf, b);
        char path[DSMC_PATH];
        if (c->write_csv) {
            snprintf(path, sizeof path, "%s/%s-surface.csv", c->out_dir, c->name);
            s = kedr_dsmc_write_surface_csv(&sf, path);
            if (s == KEDR_OK)
                printf("wrote %s\n", path);
        }
        if (s == KEDR_OK && c->write_vti) {
            snprintf(path, sizeof path, "%s/%s-surface.vtp", c->out_dir, c->name);
            s = kedr_dsmc_write_surface_vtp(&sf, path);
            if (s == KEDR_OK)
                printf("wrote %s\n", path);
        }
    }
    kedr_dsmc_surface_free(&sf);
    return s;
}

/* The cell fields: CSV, VTK and PNG maps. */
static kedr_status write_fields(const kedr_dsmc_case *c, const kedr_dsmc_fields *f)
{
    char path[DSMC_PATH];
    kedr_status s = KEDR_OK;
    if (c->write_csv && c->write_csv != KEDR_DSMC_WRITE_SURFACE) {
        snprintf(path, sizeof path, "%s/%s.csv", c->out_dir, c->name);
        s = kedr_dsmc_write_csv(c, f, path);
        if (s == KEDR_OK)
            printf("wrote %s\n", path);
    }
    if (s == KEDR_OK && c->write_vti && c->write_vti != KEDR_DSMC_WRITE_SURFACE) {
        snprintf(path, sizeof path, "%s/%s.vti", c->out_dir, c->name);
        s = kedr_dsmc_write_vti(c, f, path);
        if (s == KEDR_OK)
            printf("wrote %s\n", path);
    }
    if (s == KEDR_OK && c->write_png) {
        /* CSV and VTK are already written: a missing PLplot only costs the pictures. */
        s = kedr_dsmc_write_png(c, f, c->out_dir);
        if (s == KEDR_OK)
            printf("wrote %s/%s-{temperature,density,mach}.png\n", c->out_dir, c->name);
        else if (s == KEDR_ERR_UNSUPPORTED)
            fprintf(stderr, "kedr dsmc: warning: no PNG maps: %s\n", kedr_last_error());
        if (s == KEDR_ERR_UNSUPPORTED)
            s = KEDR_OK;
    }
    return s;
}

/* Why nothing was sampled, and what to change. */
static void explain_no_samples(const kedr_dsmc_case *c, const kedr_dsmc_stats *st)
{
    if (c->sample_auto)
        printf("note: nothing was sampled: the flow was not found steady by step %lld ([sample] "
               "start = auto, steady_window %lld, steady_tolerance %g); no fields written: run "
               "longer (--restart from the checkpoint) or give --sample-start N\n",
               (long long)st->step, (long long)c->steady_window, c->steady_tolerance);
    else
        printf("note: nothing was sampled: sampling starts at step %lld, after the last step "
               "(%lld); no fields written: give --sample-start N (N <= %lld) or more --steps\n",
               (long long)st->sample_start, (long long)st->step, (long long)st->step);
}

/* The fields and the surface when something was sampled; a note saying why not otherwise. */
static int write_outputs(kedr_dsmc *sim, const kedr_dsmc_case *c, double *seconds)
{
    double t0 = kedr_wall_seconds();
    kedr_dsmc_stats st;
    kedr_dsmc_get_stats(sim, &st);
    if (st.samples == 0) {
        explain_no_samples(c, &st);
        return 0;
    }
    if ((c->write_csv || c->write_vti || c->write_png) && cli_make_dirs(c->out_dir) != 0) {
        fprintf(stderr, "kedr dsmc: cannot create the output directory %s: %s\n", c->out_dir,
                strerror(errno));
        return CLI_EXIT_FAIL;
    }
    kedr_dsmc_fields f;
    if (kedr_dsmc_get_fields(sim, &f) != KEDR_OK)
        return fail(NULL);
    kedr_status s = dsmc_rank == 0 ? write_fields(c, &f) : KEDR_OK;
    kedr_dsmc_fields_free(&f);
    if (s == KEDR_OK)
        s = write_surface(sim, c);
    *seconds = kedr_wall_seconds() - t0;
    return s == KEDR_OK ? 0 : fail(NULL);
}

/* DIR/NAME.chk: written every [output] checkpoint_every steps, at the end, when memory runs
 * out and when the run is interrupted. */
static int checkpoint(kedr_dsmc *sim, const kedr_dsmc_case *c)
{
    char path[DSMC_PATH], base[DSMC_PATH];
    snprintf(base, sizeof base, "%s/%s.chk", c->out_dir, c->name);
    cli_rank_path(base, dsmc_rank, dsmc_nranks, path, sizeof path);
    if (cli_make_dirs(c->out_dir) != 0) {
        fprintf(stderr, "kedr dsmc: cannot create the output directory %s: %s\n", c->out_dir,
                strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (kedr_dsmc_write_checkpoint(sim, path) != KEDR_OK)
        return fail("checkpoint");
    kedr_dsmc_stats st;
    kedr_dsmc_get_stats(sim, &st);
    printf("wrote checkpoint %s (step %lld)\n", path, (long long)st.step);
    return 0;
}

/* A step ran out of memory: the state is still that before the step; keep it and say what fits. */
static int out_of_memory(kedr_dsmc *sim, const kedr_dsmc_case *c)
{
    char why[512];
    snprintf(why, sizeof why, "%s", kedr_last_error());
    size_t now = 0, fit = 0;
    kedr_dsmc_capacity(sim, &now, &fit);
    fprintf(stderr, "kedr dsmc: out of memory: %s\n"
            "kedr dsmc: about %zu particles fit in the memory available (the arrays hold %zu "
            "now); raise [run] weight or lower particles_per_cell, or run on a larger device\n",
            why, fit, now);
    checkpoint(sim, c);
    return CLI_EXIT_FAIL;
}

/* The stage table, laid out like Tables 2-4 of Kashkovsky, Shershnev & Ivanov (2012): time per
 * step in ms, and the share. */
static void print_timing(const kedr_dsmc_stats *st, double output_s, double wall_s)
{
    double steps = st->step > 0 ? (double)st->step : 1.0, total = output_s;
    for (int k = 0; k < KEDR_DSMC_NSTAGES; k++)
        total += st->stage_seconds[k];
    printf("\n%-12s %12s %12s %8s\n", "stage", "total [s]", "per step [ms]", "share");
    for (int k = 0; k <= KEDR_DSMC_NSTAGES; k++) {
        double t = k < KEDR_DSMC_NSTAGES ? st->stage_seconds[k] : output_s;
        if (k == KEDR_DSMC_EXCHANGE && dsmc_nranks <= 1)
            continue; /* no exchange on one rank */
        printf("%-12s %12.3f %12.3f %7.1f%%\n",
               k < KEDR_DSMC_NSTAGES ? kedr_dsmc_stage_name((kedr_dsmc_stage)k) : "output", t,
               1e3 * t / steps, total > 0 ? 100 * t / total : 0);
    }
    printf("%-12s %12.3f %12.3f %7.1f%%\n", "sum", total, 1e3 * total / steps, 100.0);
    printf("wall time %.3f s for %lld steps\n", wall_s, (long long)st->step);
}

static void parse_options(int argc, char **argv, dsmc_options *o)
{
    const char *cmd = "dsmc";
    memset(o, 0, sizeof *o);
    o->com.backend = KEDR_BACKEND_AUTO;
    o->steps = o->seed = o->window = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help();
            exit(0);
        }
        if (cli_common_option(argc, argv, &i, &o->com, cmd))
            continue;
        if (cli_is_option(a, "--steps"))
            o->steps = cli_int(cli_value(argc, argv, &i, cmd), 0, 4000000000L, "--steps", cmd);
        else if (cli_is_option(a, "--seed"))
            o->seed = cli_int(cli_value(argc, argv, &i, cmd), 0, INT64_MAX, "--seed", cmd);
        else if (cli_is_option(a, "--sample-start"))
            o->sample_start = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--output-every"))
            o->window = cli_int(cli_value(argc, argv, &i, cmd), 0, 4000000000L, "--output-every",
                                cmd);
        else if (cli_is_option(a, "--restart"))
            o->restart = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--out"))
            o->out = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--split")) {
            o->split = cli_value(argc, argv, &i, cmd);
            if (strcmp(o->split, "rcb") != 0 && strcmp(o->split, "x") != 0)
                cli_usage_error(cmd, "--split '%s': expected rcb or x", o->split);
        } else if (strcmp(a, "--force") == 0)
            o->force = 1;
        else if (strcmp(a, "--check") == 0)
            o->check = 1;
        else if (a[0] == '-')
            cli_usage_error(cmd, "unknown option '%s'", a);
        else if (o->case_path)
            cli_usage_error(cmd, "more than one case file ('%s' and '%s')", o->case_path, a);
        else
            o->case_path = a;
    }
    if (!o->case_path)
        cli_usage_error(cmd, "no case file given");
}

/* The command line's overrides of the case's keys. */
static void apply_options(const dsmc_options *o, kedr_dsmc_case *c)
{
    const char *cmd = "dsmc";
    if (o->steps >= 0)
        c->steps = o->steps;
    if (o->seed >= 0)
        c->seed = (uint64_t)o->seed;
    if (o->window >= 0)
        c->window = o->window;
    if (o->split)
        c->split = strcmp(o->split, "x") == 0 ? KEDR_DSMC_SPLIT_X : KEDR_DSMC_SPLIT_RCB;
    if (o->out) {
        if (strlen(o->out) >= sizeof c->out_dir)
            cli_usage_error(cmd, "--out: a path of %zu bytes; at most %zu", strlen(o->out),
                            sizeof c->out_dir - 1);
        strcpy(c->out_dir, o->out);
    }
    if (o->sample_start) {
        c->sample_auto = strcmp(o->sample_start, "auto") == 0;
        if (!c->sample_auto)
            c->sample_start = cli_int(o->sample_start, 0, 4000000000L, "--sample-start", cmd);
    }
}

/* Memory the back end has for the run: the GPU's, or the host's physical memory. */
static double memory_of(kedr_ctx *ctx)
{
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA) {
        kedr_device_info info;
        if (kedr_device_get_info(kedr_ctx_device(ctx), &info) == KEDR_OK)
            return (double)info.memory_bytes;
        return HUGE_VAL;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : HUGE_VAL;
}

/* Prints the estimated work and returns 0, or says why the run is refused and returns
 * CLI_EXIT_FAIL (unless force). The rates are rough: per cpu thread about 5e6 particle moves or
 * collision candidates a second, on a GPU about 1e9 of each (docs/dsmc.md, "Work estimate"). */
static int check_work(kedr_ctx *ctx, const kedr_dsmc_case *c, int64_t first, int force)
{
    kedr_dsmc_work w;
    if (kedr_dsmc_estimate(c, &w) != KEDR_OK)
        return fail(NULL);
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    double rate = cuda ? 1e9 : 5e6 * kedr_ctx_threads(ctx);
    double step_s = (w.particles + w.inflow + w.candidates_run) / rate;
    double run_s = step_s * (double)(c->steps > first ? c->steps - first : 0);
    double bytes = cuda ? w.bytes_cuda : w.bytes_cpu, have = memory_of(ctx);
    char run[32], step[32];
    cli_format_seconds(run_s, run, sizeof run);
    cli_format_seconds(step_s, step, sizeof step);
    printf("estimate: %.3g particles, %.3g collision candidates a step, %.3g GB; about %s for "
           "%lld steps on this back end\n", w.particles, w.candidates, bytes / 1e9, run,
           (long long)(c->steps - first));
    const char *why = NULL;
    if (w.cells_capped > 0)
        why = "cells would need more collision candidates a step than the most a cell tries "
              "(16777215), cutting their collisions short: the gas is too dense for this dt and "
              "cell size";
    else if (w.particles >= 4294967295.0)
        why = "more than 2^32 - 1 particles: raise [run] weight or lower particles_per_cell";
    else if (bytes > have)
        why = "more memory than this back end has: raise [run] weight or lower "
              "particles_per_cell";
    else if (step_s > DSMC_STEP_LIMIT_S || run_s > DSMC_RUN_LIMIT_S)
        why = "far longer than a run should take before it says anything: shorten --steps, "
              "coarsen the grid, raise [run] weight, or check dt and the density";
    if (!why)
        return 0;
    fprintf(stderr, "kedr dsmc: %s would take about %.3g collision candidates a step (%.3g "
            "particles, %.3g GB of %.3g GB), ~ %s a step and %s in all on this back end at "
            "~%.0e a second: %s; use --force to run anyway\n", c->name, w.candidates,
            w.particles, bytes / 1e9, have / 1e9, step, run, rate, why);
    return force ? 0 : CLI_EXIT_FAIL;
}

/* Says before the first step when the run will never sample, and what to change. */
static void warn_never_sampling(const kedr_dsmc_case *c, const kedr_dsmc_stats *st)
{
    if (st->samples > 0 || st->step >= c->steps)
        return;
    if (c->sample_auto && st->sample_start == INT64_MAX &&
        4 * c->steady_window > c->steps)
        printf("note: this run will never sample: [sample] start = auto needs at least 4 windows "
               "of %lld steps (%lld steps) to find the flow steady, and the run has %lld: give "
               "more --steps or --sample-start N\n", (long long)c->steady_window,
               (long long)(4 * c->steady_window), (long long)c->steps);
    else if (!c->sample_auto && st->sample_start > c->steps)
        printf("note: this run will never sample: sampling starts at step %lld, after the last "
               "step (%lld): give --sample-start N (N <= %lld) or more --steps; no fields will "
               "be written\n", (long long)st->sample_start, (long long)c->steps,
               (long long)c->steps);
}

static void print_header(const dsmc_options *o, kedr_ctx *ctx, const kedr_dsmc_case *c)
{
    char grid[64];
    if (c->dims == 3)
        snprintf(grid, sizeof grid, "%d x %d x %d", c->nx, c->ny, c->nz);
    else
        snprintf(grid, sizeof grid, "%d x %d%s", c->nx, c->ny,
                 c->axisymmetric ? c->radial_weighting ? " axisymmetric (radially weighted)"
                                                       : " axisymmetric" : "");
    printf("kedr dsmc %s on %s: %s cells, %d species (%s%s), %s collisions, weight %.4g, "
           "dt %.4g s, %lld steps, seed %llu\n",
           o->case_path, kedr_backend_name(kedr_ctx_backend(ctx)), grid, c->nspecies,
           c->species[0].name, c->nspecies > 1 ? ", ..." : "",
           c->scheme == KEDR_DSMC_MFS ? "MFS" : "NTC", c->weight, c->dt, (long long)c->steps,
           (unsigned long long)c->seed);
}

/* The start (or with --check the plan, before any particle exists) and the sampling. */
static void print_start(const dsmc_options *o, const kedr_dsmc_case *c, const kedr_dsmc_stats *st)
{
    if (o->restart)
        printf("restart from %s at step %lld (t = %.4e s; the checkpoint's seed)\n", o->restart,
               (long long)st->step, st->time);
    if (o->check && !o->restart)
        printf("plan: ");
    else
        printf("start: %zu particles; ", st->particles);
    if (c->sample_auto && st->sample_start == INT64_MAX)
        printf("sampling every %lld step(s) once the flow is steady (particle count and energy "
               "over 4 windows of %lld steps, tolerance %g)\n", (long long)c->sample_every,
               (long long)c->steady_window, c->steady_tolerance);
    else
        printf("sampling from step %lld every %lld\n", (long long)st->sample_start,
               (long long)c->sample_every);
    warn_never_sampling(c, st);
}

static void print_progress(const kedr_dsmc_case *c, const kedr_dsmc_stats *st, double run0,
                           int64_t first, double *t_last, double *psteps)
{
    double now = kedr_wall_seconds();
    double rate = now > *t_last ? *psteps / (now - *t_last) : 0;
    char eta[32];
    cli_format_seconds((now - run0) / (double)(st->step - first) * (double)(c->steps - st->step),
                   eta, sizeof eta);
    char react[64] = ""; /* a reacting gas: its reactions too */
    if (c->nreactions)
        snprintf(react, sizeof react, "reactions/step %llu%s  ",
                 (unsigned long long)st->reactions, st->reactions_lost ? " (some lost)" : "");
    printf("step %lld  t %.4e s  particles %zu  collisions/step %llu  %smcs/mfp %.3g  "
           "%.3g particle-steps/s  ETA %s\n",
           (long long)st->step, st->time, st->particles, (unsigned long long)st->collisions,
           react, st->mcs_mfp, rate, eta);
    fflush(stdout);
    *t_last = now;
    *psteps = 0;
}

/* [output] stats_file, on rank 0: a relative path lies in the output directory. A new run
 * writes the header (CSV) as a whole file, then appends a row at a time; a restart appends to
 * the file it finds. *stats is NULL without a stats file (and on other ranks). */
static int open_stats(const kedr_dsmc_case *c, int restart, FILE **stats)
{
    *stats = NULL;
    if (!c->stats_file[0] || dsmc_rank != 0)
        return 0;
    char path[DSMC_PATH];
    snprintf(path, sizeof path, "%s%s%s", c->stats_file[0] == '/' ? "" : c->out_dir,
             c->stats_file[0] == '/' ? "" : "/", c->stats_file);
    size_t len = strlen(path);
    int jsonl = len > 6 && strcmp(path + len - 6, ".jsonl") == 0;
    if (cli_make_dirs(c->out_dir) != 0) {
        fprintf(stderr, "kedr dsmc: cannot create the output directory %s: %s\n", c->out_dir,
                strerror(errno));
        return CLI_EXIT_FAIL;
    }
    struct stat sb;
    if (!restart || stat(path, &sb) != 0) {
        kedr_file_writer w;
        if (kedr_file_begin(&w, path) != KEDR_OK)
            return fail("stats_file");
        kedr_dsmc_stats_header(KEDR_FILE(&w), c, jsonl);
        if (kedr_file_commit(&w) != KEDR_OK)
            return fail("stats_file");
    } else if (kedr_file_check_writable(path) != KEDR_OK) {
        return fail("stats_file");
    }
    if (!(*stats = fopen(path, "a"))) {
        fprintf(stderr, "kedr dsmc: stats_file %s: %s\n", path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    printf("stats: %s every %lld steps (%s)\n", path, (long long)c->stats_every,
           jsonl ? "JSON lines" : "CSV");
    return 0;
}

/* A row of the stats file, flushed so that it can be followed while the run goes on. A write
 * error ends the stats file with a warning, not the run (nor, under mpirun, rank 0 alone). */
static void stats_row(FILE **stats, const kedr_dsmc_case *c, const kedr_dsmc_stats *st,
                      double wall)
{
    size_t len = strlen(c->stats_file);
    int jsonl = len > 6 && strcmp(c->stats_file + len - 6, ".jsonl") == 0;
    kedr_dsmc_stats_row(*stats, c, st, wall, jsonl);
    if (fflush(*stats) != 0 || ferror(*stats)) {
        fprintf(stderr, "kedr dsmc: warning: stats_file %s: write error: %s; no more rows\n",
                c->stats_file, strerror(errno));
        fclose(*stats);
        *stats = NULL;
    }
}

/* Unsteady output: the fields of the window that ends at this step (its N steps' samples) to
 * DIR/NAME-wSTEP.vti, the
 * series DIR/NAME.pvd written again (every window file of this run's windows found there, so a
 * restart keeps the earlier ones), and the next window marked. Collective. */
static int write_window(kedr_dsmc *sim, const kedr_dsmc_case *c, const kedr_dsmc_stats *st)
{
    kedr_dsmc_fields f;
    if (kedr_dsmc_get_window_fields(sim, &f) != KEDR_OK)
        return fail(NULL);
    kedr_status s = KEDR_OK;
    if (dsmc_rank == 0 && f.samples > 0) {
        char path[2 * DSMC_PATH], name[DSMC_PATH];
        if (cli_make_dirs(c->out_dir) != 0) {
            kedr_dsmc_fields_free(&f);
            fprintf(stderr, "kedr dsmc: cannot create the output directory %s: %s\n",
                    c->out_dir, strerror(errno));
            return CLI_EXIT_FAIL;
        }
        snprintf(path, sizeof path, "%s/%s-w%06lld.vti", c->out_dir, c->name,
                 (long long)st->step);
        s = kedr_dsmc_write_vti(c, &f, path);
        snprintf(path, sizeof path, "%s/%s.pvd", c->out_dir, c->name);
        FILE *pvd = s == KEDR_OK ? fopen(path, "w") : NULL;
        if (s == KEDR_OK && !pvd)
            s = kedr_fail(KEDR_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        if (pvd) {
            fprintf(pvd, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n"
                         "  <Collection>\n");
            int64_t first = st->sample_start > 0 ? st->sample_start : 0;
            for (int64_t k = first + c->window - 1; k <= st->step; k += c->window) {
                struct stat sb;
                snprintf(name, sizeof name, "%s-w%06lld.vti", c->name, (long long)k);
                snprintf(path, sizeof path, "%s/%s", c->out_dir, name);
                if (stat(path, &sb) == 0)
                    fprintf(pvd, "    <DataSet timestep=\"%.9g\" file=\"%s\"/>\n",
                            (double)k * c->dt, name);
            }
            fprintf(pvd, "  </Collection>\n</VTKFile>\n");
            if (fclose(pvd) != 0)
                s = kedr_fail(KEDR_ERR_IO, "%s/%s.pvd: write error", c->out_dir, c->name);
        }
    }
    kedr_dsmc_fields_free(&f);
    if (dsmc_nranks > 1)
        s = kedr_comm_agree(dsmc_comm, s);
    if (s == KEDR_OK)
        s = kedr_dsmc_mark_window(sim);
    return s == KEDR_OK ? 0 : fail(NULL);
}

/* The steps, to c->steps or the first interruption (*stopped: the signal's number); a row of
 * the stats file (when stats) with each statistics line. */
static int run_steps(kedr_dsmc *sim, const kedr_dsmc_case *c, FILE **stats, int *stopped)
{
    kedr_dsmc_stats st;
    kedr_dsmc_get_stats(sim, &st);
    double t_last = kedr_wall_seconds(), psteps = 0, run0 = t_last;
    int64_t first = st.step;
    int rc = 0;
    for (;;) {
        /* the ranks stop together, at the same step */
        int sig = kedr_interrupted();
        if (dsmc_nranks > 1 && kedr_comm_allreduce(dsmc_comm, KEDR_I32, KEDR_OP_MAX, &sig, 1))
            return fail(NULL);
        if (st.step >= c->steps || (*stopped = sig))
            break;
        kedr_status ss = kedr_dsmc_step(sim);
        if (ss == KEDR_ERR_NOMEM)
            return out_of_memory(sim, c);
        if (ss != KEDR_OK)
            return fail(NULL);
        int64_t start_before = st.sample_start;
        kedr_dsmc_get_stats(sim, &st);
        psteps += (double)st.particles;
        if (st.sample_start != start_before)
            printf("steady flow at step %lld: sampling from step %lld\n", (long long)st.step,
                   (long long)st.sample_start);
        if (c->stats_every > 0 && (st.step % c->stats_every == 0 || st.step == c->steps)) {
            if (*stats)
                stats_row(stats, c, &st, kedr_wall_seconds() - run0);
            print_progress(c, &st, run0, first, &t_last, &psteps);
        }
        /* windows of N sampled steps: sample_start .. sample_start + N - 1, and on */
        if (c->window > 0 && st.samples > 0 && st.step >= st.sample_start &&
            (st.step - st.sample_start + 1) % c->window == 0 &&
            (rc = write_window(sim, c, &st)) != 0)
            return rc;
        if (c->checkpoint_every > 0 && st.step % c->checkpoint_every == 0 && st.step < c->steps &&
            (rc = checkpoint(sim, c)) != 0)
            return rc;
    }
    return 0;
}

/* After an interruption: the checkpoint (always) and the fields sampled so far. */
static int save_interrupted(kedr_dsmc *sim, const kedr_dsmc_case *c, const char *path, int sig)
{
    kedr_dsmc_stats st;
    kedr_dsmc_get_stats(sim, &st);
    printf("interrupted (signal %d) after step %lld of %lld: saving\n", sig, (long long)st.step,
           (long long)c->steps);
    double output_s = 0;
    int rc = checkpoint(sim, c);
    if (write_outputs(sim, c, &output_s) != 0)
        rc = CLI_EXIT_FAIL;
    if (rc == 0)
        printf("stopped; continue with: kedr dsmc %s --restart %s/%s.chk (and the same options)\n",
               path, c->out_dir, c->name);
    return rc == 0 ? CLI_EXIT_INTERRUPTED : rc;
}

static int run_dsmc(dsmc_options *o);

int cmd_dsmc(int argc, char **argv)
{
    dsmc_options o;
    parse_options(argc, argv, &o);
    if (kedr_comm_init(NULL, NULL, &dsmc_comm) != KEDR_OK)
        return fail("MPI");
    dsmc_rank = kedr_comm_rank(dsmc_comm);
    dsmc_nranks = kedr_comm_size(dsmc_comm);
    int rc;
    {
        if (dsmc_nranks > 1) {
            /* one GPU a rank: the ranks of a host take its GPUs in turn */
            if (kedr_device_count() > 0)
                o.com.device = kedr_comm_device(dsmc_comm, kedr_device_count());
            if (dsmc_rank > 0 && !freopen("/dev/null", "w", stdout))
                return fail("stdout");
        }
        rc = run_dsmc(&o);
    }
    kedr_comm_finalize(dsmc_comm);
    return rc;
}

static int run_dsmc(dsmc_options *op)
{
    dsmc_options o = *op;
    kedr_dsmc_case c;
    if (kedr_dsmc_case_load(o.case_path, &c) != KEDR_OK)
        return fail(NULL);
    apply_options(&o, &c);
    if (kedr_dsmc_case_check(&c) != KEDR_OK)
        return fail(NULL);

    kedr_ctx *ctx = cli_context(&o.com, "dsmc");
    print_header(&o, ctx, &c);
    kedr_dsmc *sim = NULL;
    double wall0 = kedr_wall_seconds();
    int nfiles = 0;
    char **files = NULL;
    if (o.restart && cli_find_checkpoints("dsmc", o.restart, &nfiles, &files) != 0) {
        kedr_ctx_destroy(ctx);
        return CLI_EXIT_FAIL;
    }
    if (o.restart && nfiles != dsmc_nranks)
        printf("restart: gathering the checkpoints of a run over %d rank%s onto %d\n", nfiles,
               nfiles > 1 ? "s" : "", dsmc_nranks);
    kedr_status made = o.restart ? kedr_dsmc_restart_files(ctx, &c, dsmc_comm, nfiles,
                                                           (const char *const *)files, &sim)
                                 : KEDR_OK;
    cli_free_paths(nfiles, files);
    kedr_dsmc_stats st = {0};
    if (made == KEDR_OK && sim)
        kedr_dsmc_get_stats(sim, &st);
    int rc = made == KEDR_OK ? check_work(ctx, &c, st.step, o.force) : fail(NULL);
    if (rc == 0 && o.check) { /* the plan only: sampling as kedr_dsmc_create will set it */
        if (!sim)
            st.sample_start = c.sample_auto ? INT64_MAX
                                            : c.sample_start < 0 ? c.steps / 2 : c.sample_start;
        print_start(&o, &c, &st);
        kedr_dsmc_destroy(sim);
        kedr_ctx_destroy(ctx);
        return 0;
    }
    if (rc == 0 && !sim && kedr_dsmc_create_on(ctx, &c, dsmc_comm, &sim) != KEDR_OK)
        rc = fail(NULL);
    if (rc != 0) {
        kedr_dsmc_destroy(sim);
        kedr_ctx_destroy(ctx);
        return rc;
    }
    kedr_dsmc_get_stats(sim, &st);
    print_start(&o, &c, &st);
    if (dsmc_nranks > 1)
        printf("%d ranks, split %s\n", dsmc_nranks,
               c.split == KEDR_DSMC_SPLIT_X ? "x (columns along x)"
                                            : "rcb (boxes by recursive coordinate bisection)");

    kedr_interrupt_install();
    int stopped = 0;
    FILE *stats = NULL;
    rc = open_stats(&c, o.restart != NULL, &stats);
    int failed = rc != 0; /* rank 0's stats file: every rank stops, or none */
    if (dsmc_nranks > 1 && kedr_comm_allreduce(dsmc_comm, KEDR_I32, KEDR_OP_MAX, &failed, 1))
        rc = fail(NULL);
    else if (failed && rc == 0)
        rc = CLI_EXIT_FAIL;
    if (rc == 0)
        rc = run_steps(sim, &c, &stats, &stopped);
    if (stats)
        fclose(stats);
    double output_s = 0;
    if (rc == 0 && stopped)
        rc = save_interrupted(sim, &c, o.case_path, stopped);
    if (rc == 0 && c.checkpoint)
        rc = checkpoint(sim, &c);
    if (rc == 0)
        rc = write_outputs(sim, &c, &output_s);
    if (rc == 0) {
        kedr_dsmc_get_stats(sim, &st);
        printf("mean collision separation / mean free path over the run: %.4g\n",
               st.total_mcs_mfp);
        print_timing(&st, output_s, kedr_wall_seconds() - wall0);
    }
    kedr_dsmc_destroy(sim);
    kedr_ctx_destroy(ctx);
    return rc;
}
