/* kedr adi CASE.ini: runs an ADI flow case (docs/adi.md), printing a progress line with the
 * residuals and the ETA, and writes the fields (VTK), a PNG slice, the per-step residuals (CSV)
 * and a checkpoint. A diverging run stops at the step that diverged, keeping the fields of the
 * last good step in its checkpoint; Ctrl-C or SIGTERM saves and exits with 128 + the signal.
 * Under mpirun the grid is split along x between the ranks (one GPU a rank): rank 0 prints and
 * writes the outputs, each rank writes its own checkpoint (NAME.rankRofN.chk).
 * `kedr bench adi` (cmd_bench_adi) lives here too. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "kedr/adi.h"

#include "adi_bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ADI_PATH 1024
_Static_assert(sizeof(((kedr_adi_case *)0)->out_dir) + sizeof(((kedr_adi_case *)0)->name) + 32 <=
                   ADI_PATH, "an output path always fits");

typedef struct {
    const char *case_path, *out, *restart;
    long long steps;
    int check;
    cli_common com;
} adi_options;

static kedr_comm *adi_comm;
static int adi_rank, adi_nranks = 1;

static void help(void)
{
    printf("usage: kedr adi CASE.ini [options]\n\n"
           "Runs the viscous flow case described by CASE.ini (keys: docs/adi.md) by\n"
           "alternating-direction implicit sweeps, printing a line every [output] stats_every\n"
           "steps (residuals, ETA), and writes DIR/NAME.vti (the fields), DIR/NAME.png (the speed\n"
           "on an x-y plane), DIR/NAME.csv (the residuals of every step) and DIR/NAME.chk (a\n"
           "checkpoint). A run that diverges stops at that step and keeps the last good step's\n"
           "fields in the checkpoint. Ctrl-C or SIGTERM stops after the current step, saves, and\n"
           "exits with 130 (SIGTERM: 143).\n\n"
           "Under mpirun (mpirun -np N kedr adi CASE.ini) the grid is split along x between the\n"
           "ranks, one GPU a rank (or one cpu process), at least two x planes a rank; rank 0\n"
           "prints and writes the outputs, each rank writes DIR/NAME.rankRofN.chk, and a restart\n"
           "(--restart DIR/NAME.chk: the newest set, of any number of ranks) runs on any number.\n\n"
           "options:\n"
           "  --steps N      the run's last step (overrides [time] steps)\n"
           "  --out DIR      output directory (overrides [output] dir; created if missing)\n"
           "  --restart FILE continue from a checkpoint of this case\n"
           "  --check        load the case, print the grid and the memory it needs, run nothing\n"
           CLI_COMMON_HELP);
}

/* Errors of collective calls are every rank's (kedr_comm_agree): rank 0 says them. */
static int fail(const char *what)
{
    if (adi_rank == 0)
        fprintf(stderr, "kedr adi: %s%s%s\n", what ? what : "", what ? ": " : "",
                kedr_last_error());
    return CLI_EXIT_FAIL;
}

static void parse_options(int argc, char **argv, adi_options *o)
{
    const char *cmd = "adi";
    memset(o, 0, sizeof *o);
    o->com.backend = KEDR_BACKEND_AUTO;
    o->steps = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help();
            exit(0);
        }
        if (cli_common_option(argc, argv, &i, &o->com, cmd))
            continue;
        if (cli_is_option(a, "--steps"))
            o->steps = cli_int(cli_value(argc, argv, &i, cmd), 0, 1000000000000L, "--steps", cmd);
        else if (cli_is_option(a, "--restart"))
            o->restart = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--out"))
            o->out = cli_value(argc, argv, &i, cmd);
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

static void apply_options(const adi_options *o, kedr_adi_case *c)
{
    if (o->steps >= 0)
        c->steps = o->steps;
    if (o->out) {
        if (strlen(o->out) >= sizeof c->out_dir)
            cli_usage_error("adi", "--out: a path of %zu bytes; at most %zu", strlen(o->out),
                            sizeof c->out_dir - 1);
        strcpy(c->out_dir, o->out);
    }
}

/* Memory the back end has: the GPU's, or the host's physical memory. */
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

/* Refuses a grid that does not fit, saying how much it needs. */
static int check_memory(kedr_ctx *ctx, const kedr_adi_case *c)
{
    kedr_backend b = kedr_ctx_backend(ctx);
    if (adi_nranks > kedr_adi_max_ranks(c)) {
        if (adi_rank == 0)
            fprintf(stderr, "kedr adi: a grid of %d planes along x can be split between at most "
                    "%d ranks (two planes each); this run has %d: run on %d or fewer (mpirun -np "
                    "%d), or refine the grid along x\n", c->nx, kedr_adi_max_ranks(c),
                    adi_nranks, kedr_adi_max_ranks(c), kedr_adi_max_ranks(c));
        return CLI_EXIT_FAIL;
    }
    /* A rank's part; on the cpu the ranks of a host share its memory. */
    double need = kedr_adi_rank_bytes(c, b, adi_nranks), have = memory_of(ctx);
    double sharing = b == KEDR_BACKEND_CPU ? kedr_comm_local_size(adi_comm) : 1;
    /* The host also holds the mask and, while writing, the fields in double. */
    double host = (double)c->nx * c->ny * c->nz * (b == KEDR_BACKEND_CUDA ? 40 : 34);
    char n1[32], n2[32], ranks[64] = "";
    if (adi_nranks > 1)
        snprintf(ranks, sizeof ranks, " a rank, %d ranks", adi_nranks);
    printf("grid %d x %d x %d nodes: %s of %s memory (%s precision%s)\n", c->nx, c->ny, c->nz,
           kedr_format_bytes(need, n1, sizeof n1), b == KEDR_BACKEND_CUDA ? "GPU" : "host",
           c->single ? "single" : "double", ranks);
    if (adi_nranks > 1)
        printf("split along x: %d to %d planes a rank (at most %d ranks for this grid)\n",
               c->nx / adi_nranks, (c->nx + adi_nranks - 1) / adi_nranks,
               kedr_adi_max_ranks(c));
    if (sharing * need + (b == KEDR_BACKEND_CPU ? host : 0) <= have)
        return 0;
    char shared[64] = "";
    if (sharing > 1)
        snprintf(shared, sizeof shared, " for its %d ranks", (int)sharing);
    if (adi_rank == 0)
        fprintf(stderr, "kedr adi: grid too large: %d x %d x %d nodes need %s of %s memory%s "
                "(%d bytes a node in %s precision); this back end has %s%s: coarsen the "
                "grid%s\n", c->nx, c->ny, c->nz, kedr_format_bytes(need, n1, sizeof n1),
                b == KEDR_BACKEND_CUDA ? "GPU" : "host", ranks,
                (int)(need * adi_nranks / ((double)c->nx * c->ny * c->nz)),
                c->single ? "single" : "double", kedr_format_bytes(have, n2, sizeof n2), shared,
                c->single ? "" : " or use precision = single");
    return CLI_EXIT_FAIL;
}

/* Every rank or none: a directory made on one rank and not on another stops all. */
static int make_dirs(const kedr_adi_case *c)
{
    int bad = cli_make_dirs(c->out_dir) != 0;
    if (bad)
        fprintf(stderr, "kedr adi: cannot create the output directory %s: %s\n", c->out_dir,
                strerror(errno));
    if (adi_nranks > 1 && kedr_comm_allreduce(adi_comm, KEDR_I32, KEDR_OP_MAX, &bad, 1))
        return fail("MPI");
    return bad ? CLI_EXIT_FAIL : 0;
}

static int checkpoint(kedr_adi *s, const kedr_adi_case *c, const char *what)
{
    char base[ADI_PATH], path[ADI_PATH + 32];
    snprintf(base, sizeof base, "%s/%s.chk", c->out_dir, c->name);
    cli_rank_path(base, adi_rank, adi_nranks, path, sizeof path);
    if (make_dirs(c) != 0)
        return CLI_EXIT_FAIL;
    if (kedr_adi_write_checkpoint(s, path) != KEDR_OK)
        return fail("checkpoint");
    kedr_adi_stats st;
    kedr_adi_get_stats(s, &st);
    if (adi_nranks > 1)
        printf("wrote %scheckpoints %s/%s.rank*of%d.chk (step %lld)\n", what, c->out_dir,
               c->name, adi_nranks, (long long)st.step);
    else
        printf("wrote %scheckpoint %s (step %lld)\n", what, path, (long long)st.step);
    return 0;
}

/* The residuals' CSV (also after a failure: it says how the run went there). */
static int write_csv(kedr_adi *s, const kedr_adi_case *c)
{
    if (!c->write_csv)
        return 0;
    char path[ADI_PATH];
    snprintf(path, sizeof path, "%s/%s.csv", c->out_dir, c->name);
    if (make_dirs(c) != 0)
        return CLI_EXIT_FAIL;
    if (kedr_adi_write_csv(s, path) != KEDR_OK)
        return fail("csv");
    printf("wrote %s\n", path);
    return 0;
}

static int write_outputs(kedr_adi *s, const kedr_adi_case *c)
{
    char path[ADI_PATH];
    if (make_dirs(c) != 0)
        return CLI_EXIT_FAIL;
    if (write_csv(s, c) != 0)
        return CLI_EXIT_FAIL;
    if (c->write_vti) {
        snprintf(path, sizeof path, "%s/%s.vti", c->out_dir, c->name);
        if (kedr_adi_write_vti(s, path) != KEDR_OK)
            return fail("vti");
        printf("wrote %s\n", path);
    }
    if (c->write_png) {
        snprintf(path, sizeof path, "%s/%s.png", c->out_dir, c->name);
        kedr_status st = kedr_adi_write_png(s, path);
        if (st == KEDR_OK)
            printf("wrote %s\n", path);
        else if (st == KEDR_ERR_UNSUPPORTED && adi_rank == 0)
            fprintf(stderr, "kedr adi: warning: no PNG: %s\n", kedr_last_error());
        else if (st != KEDR_ERR_UNSUPPORTED)
            return fail("png");
    }
    return 0;
}

static void print_progress(const kedr_adi_stats *st, const kedr_adi_case *c, double run0,
                           int64_t first, double nodes)
{
    double now = kedr_wall_seconds(), done = (double)(st->step - first);
    char eta[32];
    cli_format_seconds((now - run0) / done * (double)(c->steps - st->step), eta, sizeof eta);
    printf("step %lld  t %.5g  global %d  change %.3g  div rms %.3g max %.3g  |u|max %.4g  "
           "%.3g node-steps/s  ETA %s\n", (long long)st->step, st->time, st->global_iterations,
           st->change, st->continuity_rms, st->continuity_max, st->max_speed,
           done * nodes / (now - run0 > 0 ? now - run0 : 1e-9), eta);
    fflush(stdout);
}

/* The steps to c->steps, an interruption (*stopped) or a failure. */
static int run_steps(kedr_adi *s, const kedr_adi_case *c, int *stopped)
{
    kedr_adi_stats st;
    kedr_adi_get_stats(s, &st);
    int64_t first = st.step;
    double run0 = kedr_wall_seconds(), nodes = (double)c->nx * c->ny * c->nz;
    for (;;) {
        /* the ranks stop together, at the same step */
        int sig = kedr_interrupted();
        if (adi_nranks > 1 && kedr_comm_allreduce(adi_comm, KEDR_I32, KEDR_OP_MAX, &sig, 1))
            return fail("MPI");
        if (st.step >= c->steps || (*stopped = sig))
            break;
        kedr_status r = kedr_adi_step(s);
        if (r != KEDR_OK && kedr_adi_diverged(s)) {
            /* every rank's (the residuals are reduced over them); the last good step is still
             * there */
            if (adi_rank == 0)
                fprintf(stderr, "kedr adi: %s\n", kedr_last_error());
            checkpoint(s, c, "the last good step's ");
            write_csv(s, c);
            return CLI_EXIT_FAIL;
        }
        if (r != KEDR_OK) {
            /* possibly this rank's alone, the others waiting for it: under mpirun it exits at
             * once, which makes mpirun end the others */
            if (adi_nranks > 1) {
                fprintf(stderr, "kedr adi: rank %d: %s\n", adi_rank, kedr_last_error());
                fflush(stdout);
                _exit(CLI_EXIT_FAIL);
            }
            fprintf(stderr, "kedr adi: %s\n", kedr_last_error());
            return CLI_EXIT_FAIL;
        }
        kedr_adi_get_stats(s, &st);
        if (c->stats_every > 0 && (st.step % c->stats_every == 0 || st.step == c->steps))
            print_progress(&st, c, run0, first, nodes);
        if (c->checkpoint_every > 0 && st.step % c->checkpoint_every == 0 &&
            st.step < c->steps && checkpoint(s, c, "") != 0)
            return CLI_EXIT_FAIL;
    }
    return 0;
}

static void print_header(const adi_options *o, kedr_ctx *ctx, const kedr_adi_case *c)
{
    char ranks[64] = "";
    if (adi_nranks > 1)
        snprintf(ranks, sizeof ranks, " x %d ranks (split along x)", adi_nranks);
    printf("kedr adi %s on %s%s: Re %g, Pr %g, gamma %g, h %g, dt %g, %lld steps, %d global x %d "
           "local iterations, %s advection, %s precision%s%s\n", o->case_path,
           kedr_backend_name(kedr_ctx_backend(ctx)), ranks, c->re, c->pr, c->gamma, c->h, c->dt,
           (long long)c->steps, c->global_iterations, c->local_iterations,
           c->central ? "central" : "upwind", c->single ? "single" : "double",
           c->mask_path[0] ? ", mask " : "", c->mask_path);
}

static int run_adi(adi_options *o);

int cmd_adi(int argc, char **argv)
{
    adi_options o;
    parse_options(argc, argv, &o);
    if (kedr_comm_init(NULL, NULL, &adi_comm) != KEDR_OK)
        return fail("MPI");
    adi_rank = kedr_comm_rank(adi_comm);
    adi_nranks = kedr_comm_size(adi_comm);
    int rc = 0;
    if (adi_nranks > 1) {
        /* one GPU a rank: the ranks of a host take its GPUs in turn */
        if (kedr_device_count() > 0)
            o.com.device = kedr_comm_device(adi_comm, kedr_device_count());
        int ndev = kedr_device_count(), local = kedr_comm_local_size(adi_comm);
        if (adi_rank == 0 && ndev > 0 && local > ndev && o.com.backend != KEDR_BACKEND_CPU)
            fprintf(stderr, "kedr adi: note: %d ranks on this host share its %d GPU%s\n", local,
                    ndev, ndev > 1 ? "s" : "");
        if (adi_rank > 0 && !freopen("/dev/null", "w", stdout))
            rc = fail("stdout");
    }
    if (rc == 0)
        rc = run_adi(&o);
    kedr_comm_finalize(adi_comm);
    return rc;
}

static int run_adi(adi_options *op)
{
    adi_options o = *op;
    kedr_adi_case c;
    if (kedr_adi_case_load(o.case_path, &c) != KEDR_OK)
        return fail(NULL);
    apply_options(&o, &c);
    kedr_ctx *ctx = cli_context(&o.com, "adi");
    print_header(&o, ctx, &c);
    int rc = check_memory(ctx, &c);
    if (adi_nranks > 1 && kedr_comm_allreduce(adi_comm, KEDR_I32, KEDR_OP_MAX, &rc, 1))
        rc = fail("MPI");
    kedr_adi *s = NULL;
    if (rc == 0 && !o.check) {
        /* the newest set of checkpoints: each rank its own file when as many ranks wrote them,
         * else each rank the files that hold its planes (named from the first) */
        int nfiles = 0;
        char **files = NULL;
        if (o.restart && cli_find_checkpoints("adi", o.restart, &nfiles, &files) != 0)
            rc = CLI_EXIT_FAIL;
        if (adi_nranks > 1 && kedr_comm_allreduce(adi_comm, KEDR_I32, KEDR_OP_MAX, &rc, 1))
            rc = fail("MPI");
        if (rc == 0 && o.restart && nfiles != adi_nranks)
            printf("restart: the checkpoints of a run over %d rank%s, read by %d\n", nfiles,
                   nfiles > 1 ? "s" : "", adi_nranks);
        kedr_status made = rc != 0 ? KEDR_ERR_INVALID
                           : o.restart ? kedr_adi_restart_on(ctx, adi_comm, &c,
                                                             files[nfiles == adi_nranks ? adi_rank : 0], &s)
                                       : kedr_adi_create_on(ctx, adi_comm, &c, &s);
        cli_free_paths(nfiles, files);
        if (rc == 0 && made != KEDR_OK)
            rc = fail(NULL);
    }
    if (rc != 0 || o.check) {
        kedr_adi_case_free(&c);
        kedr_ctx_destroy(ctx);
        return rc;
    }
    kedr_adi_stats st;
    kedr_adi_get_stats(s, &st);
    if (o.restart)
        printf("restart from %s at step %lld (t = %.6g)\n", o.restart, (long long)st.step,
               st.time);
    double wall0 = kedr_wall_seconds();
    int64_t first = st.step;
    kedr_interrupt_install();
    int stopped = 0;
    rc = run_steps(s, &c, &stopped);
    double run_s = kedr_wall_seconds() - wall0;
    if (rc == 0 && stopped) {
        kedr_adi_get_stats(s, &st);
        printf("interrupted (signal %d) after step %lld of %lld: saving\n", stopped,
               (long long)st.step, (long long)c.steps);
        rc = checkpoint(s, &c, "");
        if (rc == 0)
            rc = write_outputs(s, &c);
        if (rc == 0) {
            char np[32] = "";
            if (adi_nranks > 1)
                snprintf(np, sizeof np, "mpirun -np %d ", adi_nranks);
            printf("stopped; continue with: %skedr adi %s --restart %s/%s.chk\n", np,
                   o.case_path, c.out_dir, c.name);
            rc = CLI_EXIT_INTERRUPTED;
        }
    } else if (rc == 0) {
        if (c.checkpoint)
            rc = checkpoint(s, &c, "");
        if (rc == 0)
            rc = write_outputs(s, &c);
        kedr_adi_get_stats(s, &st);
        double steps = (double)(st.step - first);
        if (rc == 0 && steps > 0)
            printf("%lld steps in %.3f s: %.3f ms a step, %.3g node-steps/s\n",
                   (long long)(st.step - first), run_s, 1e3 * run_s / steps,
                   steps * c.nx * c.ny * (double)c.nz / run_s);
        double halo_s, iface_s;
        kedr_adi_get_timing(s, &halo_s, &iface_s);
        if (rc == 0 && steps > 0 && (adi_nranks > 1 || c.x_partitioned))
            printf("rank 0: %.3f ms a step in the halo exchanges, %.3f in the X sweep's "
                   "interface systems (their rows' exchange and solve; kedr adi -v says which way)\n",
                   1e3 * halo_s / steps, 1e3 * iface_s / steps);
    }
    kedr_adi_destroy(s);
    kedr_adi_case_free(&c);
    kedr_ctx_destroy(ctx);
    return rc;
}

int cmd_bench_adi(int argc, char **argv)
{
    const char *cmd = "bench adi";
    cli_common com = {KEDR_BACKEND_AUTO, 0};
    kedr_bench_adi_opts o = {0, 0, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("usage: kedr bench adi [--n N] [--repeats R] [--json FILE]\n\n"
                   "Times the sweeps of kedr adi (X, Y, Z with and without the transpose), the\n"
                   "transposes and whole steps in single and double precision on a box_pipe grid\n"
                   "of N^3 nodes (default 256 on a GPU, 64 on the cpu), as Table 12.1 of Boreskov\n"
                   "et al. (2015), and the fraction of copy bandwidth a step reaches.\n\n"
                   "options:\n"
                   "  --n N          grid side (3 to 2048)\n"
                   "  --repeats R    timed repeats after a warm-up (median; default 5)\n"
                   "  --json FILE    write the results as JSON\n" CLI_COMMON_HELP);
            return 0;
        }
        if (cli_common_option(argc, argv, &i, &com, cmd))
            continue;
        if (cli_is_option(a, "--n"))
            o.n = (int)cli_int(cli_value(argc, argv, &i, cmd), 3, 2048, "--n", cmd);
        else if (cli_is_option(a, "--repeats"))
            o.repeats = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 100000, "--repeats", cmd);
        else if (cli_is_option(a, "--json"))
            o.json = cli_value(argc, argv, &i, cmd);
        else
            cli_usage_error(cmd, "unknown option '%s'", a);
    }
    kedr_ctx *ctx = cli_context(&com, cmd);
    kedr_status s = kedr_bench_adi(ctx, &o);
    if (s != KEDR_OK)
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
    kedr_ctx_destroy(ctx);
    return s == KEDR_OK ? 0 : CLI_EXIT_FAIL;
}
