/* kedr dsmc CASE.ini: runs a DSMC case, prints statistics and a stage timing table, writes the
 * time-averaged cell fields as CSV and VTK. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void help(void)
{
    printf("usage: kedr dsmc CASE.ini [options]\n\n"
           "Runs the direct simulation Monte Carlo case described by CASE.ini (keys: docs/dsmc.md),\n"
           "printing a statistics line every [output] stats_every steps and a stage timing table\n"
           "at the end, and writes the time-averaged cell fields to DIR/NAME.csv and DIR/NAME.vti;\n"
           "with bodies, also their surface (DIR/NAME-surface.csv, .vtp) and Cd, Cl per body.\n\n"
           "options:\n"
           "  --steps N      steps to run (overrides [run] steps)\n"
           "  --out DIR      output directory (overrides [output] dir; created if missing)\n"
           "  --seed S       random seed (overrides [run] seed)\n"
           "  --restart FILE continue from a checkpoint written for this case, up to step N\n"
           "                 of --steps or [run] steps (steps count from the start of the run)\n"
           CLI_COMMON_HELP);
}

/* mkdir -p. */
static int make_dirs(const char *path)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static void format_eta(double s, char *buf, size_t size)
{
    if (s < 60)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, size, "%d min %02d s", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, size, "%.1f h", s / 3600);
}

static int fail(const char *what)
{
    fprintf(stderr, "kedr dsmc: %s%s%s\n", what ? what : "", what ? ": " : "", kedr_last_error());
    return CLI_EXIT_FAIL;
}

/* The surface files and, per body, the force coefficients. */
static kedr_status write_surface(kedr_dsmc *sim, const kedr_dsmc_case *c)
{
    kedr_dsmc_surface sf;
    KEDR_TRY(kedr_dsmc_get_surface(sim, &sf));
    kedr_status s = KEDR_OK;
    if (sf.nelem > 0) {
        for (int b = 0; b < sf.nbodies; b++) {
            if (sf.steps == 0) {
                printf("body %d: no surface samples yet (sampling starts at step %lld)\n", b + 1,
                       (long long)c->sample_start);
                continue;
            }
            if (sf.axisymmetric)
                printf("body %d: Cd %.5g  (drag %.5g N along the axis, reference area %.5g m^2, "
                       "%lld steps sampled)\n", b + 1, sf.cd[b], sf.drag[b],
                       sf.reference_length[b], (long long)sf.steps);
            else if (sf.dims == 3)
                printf("body %d: Cd %.5g  Cl %.5g  (drag %.5g N, lift %.5g N, reference area "
                       "%.5g m^2, %lld steps sampled)\n", b + 1, sf.cd[b], sf.cl[b], sf.drag[b],
                       sf.lift[b], sf.reference_length[b], (long long)sf.steps);
            else
                printf("body %d: Cd %.5g  Cl %.5g  (drag %.5g N/m, lift %.5g N/m, reference "
                       "length %.5g m, %lld steps sampled)\n", b + 1, sf.cd[b], sf.cl[b],
                       sf.drag[b], sf.lift[b], sf.reference_length[b], (long long)sf.steps);
        }
        char path[1024];
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

static int write_outputs(kedr_dsmc *sim, const kedr_dsmc_case *c, double *seconds)
{
    double t0 = kedr_wall_seconds();
    kedr_dsmc_fields f;
    if (kedr_dsmc_get_fields(sim, &f) != KEDR_OK)
        return fail(NULL);
    if (f.samples == 0 && c->sample_auto)
        printf("note: no samples were taken: the flow did not become steady ([sample] start = "
               "auto, steady_window %lld, steady_tolerance %g); the fields are zero\n",
               (long long)c->steady_window, c->steady_tolerance);
    else if (f.samples == 0)
        printf("note: no samples were taken ([sample] start = %lld is after the last step); the "
               "fields are zero\n", (long long)c->sample_start);
    if ((c->write_csv || c->write_vti || c->write_png) && make_dirs(c->out_dir) != 0) {
        fprintf(stderr, "kedr dsmc: cannot create the output directory %s: %s\n", c->out_dir,
                strerror(errno));
        kedr_dsmc_fields_free(&f);
        return CLI_EXIT_FAIL;
    }
    char path[1024];
    kedr_status s = KEDR_OK;
    if (c->write_csv) {
        snprintf(path, sizeof path, "%s/%s.csv", c->out_dir, c->name);
        s = kedr_dsmc_write_csv(c, &f, path);
        if (s == KEDR_OK)
            printf("wrote %s\n", path);
    }
    if (s == KEDR_OK && c->write_vti) {
        snprintf(path, sizeof path, "%s/%s.vti", c->out_dir, c->name);
        s = kedr_dsmc_write_vti(c, &f, path);
        if (s == KEDR_OK)
            printf("wrote %s\n", path);
    }
    if (s == KEDR_OK && c->write_png) {
        /* CSV and VTK are already written: a missing PLplot only costs the pictures. */
        s = kedr_dsmc_write_png(c, &f, c->out_dir);
        if (s == KEDR_OK)
            printf("wrote %s/%s-{temperature,density,mach}.png\n", c->out_dir, c->name);
        else if (s == KEDR_ERR_UNSUPPORTED)
            fprintf(stderr, "kedr dsmc: warning: no PNG maps: %s\n", kedr_last_error());
        if (s == KEDR_ERR_UNSUPPORTED)
            s = KEDR_OK;
    }
    kedr_dsmc_fields_free(&f);
    if (s == KEDR_OK)
        s = write_surface(sim, c);
    *seconds = kedr_wall_seconds() - t0;
    return s == KEDR_OK ? 0 : fail(NULL);
}

/* DIR/NAME.chk: written every [output] checkpoint_every steps, at the end, and when memory runs
 * out. */
static int checkpoint(kedr_dsmc *sim, const kedr_dsmc_case *c)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.chk", c->out_dir, c->name);
    if (make_dirs(c->out_dir) != 0) {
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

/* The stage table, laid out like Tables 2-4 of seed 003: time per step in ms, and the share. */
static void print_timing(const kedr_dsmc_stats *st, double output_s, double wall_s)
{
    double steps = st->step > 0 ? (double)st->step : 1.0, total = output_s;
    for (int k = 0; k < KEDR_DSMC_NSTAGES; k++)
        total += st->stage_seconds[k];
    printf("\n%-12s %12s %12s %8s\n", "stage", "total [s]", "per step [ms]", "share");
    for (int k = 0; k <= KEDR_DSMC_NSTAGES; k++) {
        double t = k < KEDR_DSMC_NSTAGES ? st->stage_seconds[k] : output_s;
        printf("%-12s %12.3f %12.3f %7.1f%%\n",
               k < KEDR_DSMC_NSTAGES ? kedr_dsmc_stage_name((kedr_dsmc_stage)k) : "output", t,
               1e3 * t / steps, total > 0 ? 100 * t / total : 0);
    }
    printf("%-12s %12.3f %12.3f %7.1f%%\n", "sum", total, 1e3 * total / steps, 100.0);
    printf("wall time %.3f s for %lld steps\n", wall_s, (long long)st->step);
}

int cmd_dsmc(int argc, char **argv)
{
    const char *cmd = "dsmc", *case_path = NULL, *out = NULL, *restart = NULL;
    cli_common com = {KEDR_BACKEND_AUTO, 0};
    long long steps = -1, seed = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help();
            return 0;
        }
        if (cli_common_option(argc, argv, &i, &com, cmd))
            continue;
        if (strncmp(a, "--steps", 7) == 0 && (a[7] == 0 || a[7] == '='))
            steps = cli_int(cli_value(argc, argv, &i, cmd), 0, 4000000000L, "--steps", cmd);
        else if (strncmp(a, "--seed", 6) == 0 && (a[6] == 0 || a[6] == '='))
            seed = cli_int(cli_value(argc, argv, &i, cmd), 0, INT64_MAX, "--seed", cmd);
        else if (strncmp(a, "--restart", 9) == 0 && (a[9] == 0 || a[9] == '='))
            restart = cli_value(argc, argv, &i, cmd);
        else if (strncmp(a, "--out", 5) == 0 && (a[5] == 0 || a[5] == '='))
            out = cli_value(argc, argv, &i, cmd);
        else if (a[0] == '-')
            cli_usage_error(cmd, "unknown option '%s'", a);
        else if (case_path)
            cli_usage_error(cmd, "more than one case file ('%s' and '%s')", case_path, a);
        else
            case_path = a;
    }
    if (!case_path)
        cli_usage_error(cmd, "no case file given");

    kedr_dsmc_case c;
    if (kedr_dsmc_case_load(case_path, &c) != KEDR_OK)
        return fail(NULL);
    if (steps >= 0)
        c.steps = steps;
    if (seed >= 0)
        c.seed = (uint64_t)seed;
    if (out)
        snprintf(c.out_dir, sizeof c.out_dir, "%s", out);

    kedr_ctx *ctx = cli_context(&com, cmd);
    kedr_dsmc *sim = NULL;
    double wall0 = kedr_wall_seconds();
    kedr_status made = restart ? kedr_dsmc_restart(ctx, &c, restart, &sim)
                               : kedr_dsmc_create(ctx, &c, &sim);
    if (made != KEDR_OK) {
        int rc = fail(NULL);
        kedr_ctx_destroy(ctx);
        return rc;
    }
    kedr_dsmc_stats st;
    kedr_dsmc_get_stats(sim, &st);
    char grid[64];
    if (c.dims == 3)
        snprintf(grid, sizeof grid, "%d x %d x %d", c.nx, c.ny, c.nz);
    else
        snprintf(grid, sizeof grid, "%d x %d%s", c.nx, c.ny,
                 c.axisymmetric ? c.radial_weighting ? " axisymmetric (radially weighted)"
                                                     : " axisymmetric" : "");
    printf("kedr dsmc %s on %s: %s cells, %d species (%s%s), %s collisions, weight %.4g, "
           "dt %.4g s, %lld steps, seed %llu\n",
           case_path, kedr_backend_name(kedr_ctx_backend(ctx)), grid, c.nspecies,
           c.species[0].name, c.nspecies > 1 ? ", ..." : "",
           c.scheme == KEDR_DSMC_MFS ? "MFS" : "NTC", c.weight, c.dt, (long long)c.steps,
           (unsigned long long)c.seed);
    if (restart)
        printf("restart from %s at step %lld (t = %.4e s; the checkpoint's seed)\n", restart,
               (long long)st.step, st.time);
    if (c.sample_auto && st.sample_start == INT64_MAX)
        printf("start: %zu particles; sampling every %lld step(s) once the flow is steady (mean "
               "particle count of %lld-step windows within %g)\n", st.particles,
               (long long)c.sample_every, (long long)c.steady_window, c.steady_tolerance);
    else
        printf("start: %zu particles; sampling from step %lld every %lld\n", st.particles,
               (long long)st.sample_start, (long long)c.sample_every);

    int rc = 0;
    double t_last = kedr_wall_seconds(), psteps = 0, run0 = t_last;
    int64_t first = st.step;
    while (st.step < c.steps) {
        kedr_status ss = kedr_dsmc_step(sim);
        if (ss == KEDR_ERR_NOMEM) {
            rc = out_of_memory(sim, &c);
            break;
        }
        if (ss != KEDR_OK) {
            rc = fail(NULL);
            break;
        }
        int64_t start_before = st.sample_start;
        kedr_dsmc_get_stats(sim, &st);
        psteps += (double)st.particles;
        if (st.sample_start != start_before)
            printf("steady flow at step %lld: sampling from step %lld\n", (long long)st.step,
                   (long long)st.sample_start);
        if (c.stats_every > 0 && (st.step % c.stats_every == 0 || st.step == c.steps)) {
            double now = kedr_wall_seconds();
            double rate = now > t_last ? psteps / (now - t_last) : 0;
            char eta[32];
            format_eta((now - run0) / (double)(st.step - first) * (double)(c.steps - st.step), eta,
                       sizeof eta);
            printf("step %lld  t %.4e s  particles %zu  collisions/step %llu  mcs/mfp %.3g  "
                   "%.3g particle-steps/s  ETA %s\n",
                   (long long)st.step, st.time, st.particles, (unsigned long long)st.collisions,
                   st.mcs_mfp, rate, eta);
            fflush(stdout);
            t_last = now;
            psteps = 0;
        }
        if (c.checkpoint_every > 0 && st.step % c.checkpoint_every == 0 && st.step < c.steps &&
            (rc = checkpoint(sim, &c)) != 0)
            break;
    }
    if (rc == 0 && c.checkpoint)
        rc = checkpoint(sim, &c);
    double output_s = 0;
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
