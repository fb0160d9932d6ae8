/* kedr flow CASE.ini: runs an incompressible flow case (docs/flow.md), printing a progress line
 * every [output] stats_every steps, and writes the cell fields (CSV, VTK, PNG), the centre-line
 * profiles and a checkpoint. A pressure solve that does not converge stops the run with its
 * residual history and the checkpoint of the state before that step; a velocity that becomes
 * NaN stops it at that step, keeping the last checkpoint written. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "flow_bench.h"
#include "kedr/comm.h"
#include "kedr/flow.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLOW_PATH (KEDR_FLOW_PATH_MAX + KEDR_FLOW_NAME_MAX + KEDR_FLOW_BODY_NAME_MAX + 32)

/* Under mpirun, the grid is split over the ranks (kedr_flow_create_on): rank 0 prints and
 * writes the fields, gathered; each rank writes its own checkpoint (cli_rank_path). */
static kedr_comm *flow_comm;
static int flow_rank, flow_nranks = 1;

/* Every rank's status agreed (one rank: its own). */
static kedr_status agree(kedr_status s)
{
    return flow_nranks > 1 ? kedr_comm_agree(flow_comm, s) : s;
}

typedef struct {
    const char *case_path, *out, *restart;
    long long steps;
    cli_common com;
} flow_options;

static void help(void)
{
    printf("usage: kedr flow CASE.ini [options]\n\n"
           "Runs the incompressible flow case described by CASE.ini (keys: docs/flow.md) and\n"
           "writes DIR/NAME.csv, .vti, -{speed,pressure,vorticity}.png, -profiles.csv (u on the\n"
           "vertical and v on the horizontal centre line) and the checkpoint DIR/NAME.chk.\n"
           "A pressure solve that does not converge stops the run with its residual history and\n"
           "a checkpoint of the last good step; a velocity that becomes NaN stops it at once.\n"
           "Each immersed body's force and moment history goes to DIR/NAME-BODY.csv (every\n"
           "[output] forces_every steps; a restart keeps the rows up to its step).\n"
           "Ctrl-C or SIGTERM stops after the current step, saves, and exits with 130 (143).\n"
           "Under mpirun the grid is split over the ranks along its last axis (one GPU a rank;\n"
           "every pressure solver but fft; rank 0 writes the fields; each rank its\n"
           "checkpoint DIR/NAME.rankRofN.chk, restarted with --restart DIR/NAME.chk on as\n"
           "many ranks).\n\n"
           "options:\n"
           "  --steps N      steps to run (overrides [time] steps; counted from the start)\n"
           "  --out DIR      output directory (overrides [output] dir; created if missing)\n"
           "  --restart FILE continue from a checkpoint written for this case\n"
           CLI_COMMON_HELP);
}

static int fail(const char *what)
{
    if (flow_rank > 0) /* the ranks fail together (agree); rank 0 says why */
        return CLI_EXIT_FAIL;
    fprintf(stderr, "kedr flow: %s%s%s\n", what ? what : "", what ? ": " : "", kedr_last_error());
    return CLI_EXIT_FAIL;
}

static void parse_options(int argc, char **argv, flow_options *o)
{
    const char *cmd = "flow";
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
            o->steps = cli_int(cli_value(argc, argv, &i, cmd), 0, 4000000000L, "--steps", cmd);
        else if (cli_is_option(a, "--restart"))
            o->restart = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--out"))
            o->out = cli_value(argc, argv, &i, cmd);
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

static int checkpoint(kedr_flow *f, const kedr_flow_case *c)
{
    char base[FLOW_PATH], path[FLOW_PATH + 32];
    snprintf(base, sizeof base, "%s/%s.chk", c->out_dir, c->name);
    cli_rank_path(base, flow_rank, flow_nranks, path, sizeof path);
    kedr_status s = KEDR_OK;
    if (cli_make_dirs(c->out_dir) != 0)
        s = kedr_fail(KEDR_ERR_IO, "cannot create the output directory %s: %s", c->out_dir,
                      strerror(errno));
    if (s == KEDR_OK)
        s = kedr_flow_write_checkpoint(f, path);
    if (agree(s) != KEDR_OK)
        return fail("checkpoint");
    if (flow_nranks > 1)
        snprintf(path, sizeof path, "%s/%s.rank*of%d.chk", c->out_dir, c->name, flow_nranks);
    kedr_flow_stats st;
    kedr_flow_get_stats(f, &st);
    printf("wrote checkpoint %s (step %lld, t = %.6g s)\n", path, (long long)st.step, st.time);
    return 0;
}

static int write_outputs(kedr_flow *f, const kedr_flow_case *c)
{
    kedr_flow_fields fl;
    if (kedr_flow_gather_fields(f, 0, &fl) != KEDR_OK)
        return fail(NULL);
    /* the profiles first: over ranks every rank takes part */
    char ppath[FLOW_PATH];
    snprintf(ppath, sizeof ppath, "%s/%s-profiles.csv", c->out_dir, c->name);
    kedr_status sp = KEDR_OK;
    if (c->write_csv) {
        sp = cli_make_dirs(c->out_dir) == 0 || flow_rank > 0
                 ? KEDR_OK
                 : kedr_fail(KEDR_ERR_IO, "cannot create the output directory %s: %s",
                             c->out_dir, strerror(errno));
        sp = agree(sp);
        if (sp == KEDR_OK)
            sp = kedr_flow_write_profiles(f, ppath);
        if (sp != KEDR_OK) {
            kedr_flow_fields_free(&fl);
            return fail(NULL);
        }
    }
    if (flow_rank > 0) { /* rank 0 writes the gathered fields */
        kedr_flow_fields_free(&fl);
        return agree(KEDR_OK) == KEDR_OK ? 0 : CLI_EXIT_FAIL;
    }
    if (cli_make_dirs(c->out_dir) != 0) {
        fprintf(stderr, "kedr flow: cannot create the output directory %s: %s\n", c->out_dir,
                strerror(errno));
        kedr_flow_fields_free(&fl);
        agree(KEDR_ERR_IO);
        return CLI_EXIT_FAIL;
    }
    char path[FLOW_PATH];
    kedr_status s = KEDR_OK;
    if (c->write_csv) {
        snprintf(path, sizeof path, "%s/%s.csv", c->out_dir, c->name);
        if ((s = kedr_flow_write_csv(&fl, path)) == KEDR_OK)
            printf("wrote %s\n", path);
    }
    if (s == KEDR_OK && c->write_vti) {
        snprintf(path, sizeof path, "%s/%s.vti", c->out_dir, c->name);
        if ((s = kedr_flow_write_vti(&fl, path)) == KEDR_OK)
            printf("wrote %s\n", path);
    }
    if (s == KEDR_OK && c->write_csv)
        printf("wrote %s\n", ppath);
    if (s == KEDR_OK && c->write_png) {
        s = kedr_flow_write_png(&fl, c->out_dir, c->name);
        if (s == KEDR_OK)
            printf("wrote %s/%s-{speed,pressure,vorticity}.png\n", c->out_dir, c->name);
        else if (s == KEDR_ERR_UNSUPPORTED)
            fprintf(stderr, "kedr flow: warning: no PNG maps: %s\n", kedr_last_error());
        if (s == KEDR_ERR_UNSUPPORTED)
            s = KEDR_OK;
    }
    kedr_flow_fields_free(&fl);
    int rc = s == KEDR_OK ? 0 : fail(NULL);
    agree(s); /* the other ranks wait for rank 0's verdict */
    return rc;
}

/* ---- force histories ---------------------------------------------------------------------- */

typedef struct {
    FILE *fp[KEDR_FLOW_MAX_BODIES];
    int n;
} body_files;

static void body_path(const kedr_flow_case *c, int b, char *path, size_t size)
{
    snprintf(path, size, "%s/%s-%s.csv", c->out_dir, c->name, c->body[b].name);
}

/* Keeps the header and the rows of steps up to `step` of an existing history (a restart). */
static int trim_history(const char *path, long long step)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return 0; /* none yet: a new one */
    char tmp[FLOW_PATH + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        fclose(in);
        return -1;
    }
    char line[1024];
    int first = 1;
    while (fgets(line, sizeof line, in)) {
        if (first || strtoll(line, NULL, 10) <= step)
            fputs(line, out);
        first = 0;
    }
    fclose(in);
    if (fclose(out) != 0 || rename(tmp, path) != 0)
        return -1;
    return 1;
}

static int open_histories(kedr_flow *f, const kedr_flow_case *c, int restart, body_files *bf)
{
    memset(bf, 0, sizeof *bf);
    kedr_flow_stats st; /* (every rank: the statistics are sums over the ranks) */
    kedr_flow_get_stats(f, &st);
    if (!c->nbodies || !c->forces_every || flow_rank > 0) /* rank 0 writes the histories */
        return 0;
    if (cli_make_dirs(c->out_dir) != 0) {
        fprintf(stderr, "kedr flow: cannot create the output directory %s: %s\n", c->out_dir,
                strerror(errno));
        return CLI_EXIT_FAIL;
    }
    for (int b = 0; b < c->nbodies; b++) {
        char path[FLOW_PATH];
        body_path(c, b, path, sizeof path);
        int kept = restart ? trim_history(path, (long long)st.step) : 0;
        if (kept >= 0)
            bf->fp[b] = fopen(path, kept ? "a" : "w");
        if (kept < 0 || !bf->fp[b]) {
            fprintf(stderr, "kedr flow: cannot write %s: %s\n", path, strerror(errno));
            return CLI_EXIT_FAIL;
        }
        bf->n = b + 1;
        if (!kept)
            fprintf(bf->fp[b], c->dims == 3
                    ? "step,time,x,y,z,u,v,w,fx,fy,fz,mx,my,mz,cd,cl,cs\n"
                    : "step,time,x,y,u,v,fx,fy,mz,cd,cl\n");
    }
    return 0;
}

static void write_forces(kedr_flow *f, const kedr_flow_case *c, const kedr_flow_stats *stp,
                         body_files *bf)
{
    kedr_flow_stats st = *stp;
    for (int b = 0; b < bf->n; b++) {
        kedr_flow_body_state bs;
        if (kedr_flow_body_get(f, b, &bs) != KEDR_OK)
            continue;
        FILE *fp = bf->fp[b];
        fprintf(fp, "%lld,%.9g", (long long)st.step, st.time);
        if (c->dims == 3)
            fprintf(fp, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,"
                    "%.9g\n", bs.center[0], bs.center[1], bs.center[2], bs.velocity[0],
                    bs.velocity[1], bs.velocity[2], bs.force[0], bs.force[1], bs.force[2],
                    bs.moment[0], bs.moment[1], bs.moment[2], bs.cd, bs.cl, bs.cs);
        else
            fprintf(fp, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", bs.center[0],
                    bs.center[1], bs.velocity[0], bs.velocity[1], bs.force[0], bs.force[1],
                    bs.moment[2], bs.cd, bs.cl);
    }
}

static int close_histories(const kedr_flow_case *c, body_files *bf)
{
    int rc = 0;
    for (int b = 0; b < bf->n; b++) {
        char path[FLOW_PATH];
        body_path(c, b, path, sizeof path);
        if (fclose(bf->fp[b]) != 0) {
            fprintf(stderr, "kedr flow: writing %s failed: %s\n", path, strerror(errno));
            rc = CLI_EXIT_FAIL;
        } else {
            printf("wrote %s\n", path);
        }
    }
    bf->n = 0;
    return rc;
}

static void print_history(const kedr_flow_stats *st)
{
    const kedr_flow_poisson_info *p = &st->poisson;
    fprintf(stderr, "kedr flow: residual history (relative, every iteration; %d in all):",
            p->history_len);
    for (int i = 0; i < p->history_len; i++) {
        if (p->history_len > 40 && i == 20) {
            fprintf(stderr, "\n  ... %d more ...", p->history_len - 40);
            i = p->history_len - 20;
        }
        fprintf(stderr, "%s%.3e", i % 8 ? " " : "\n  ", p->history[i]);
    }
    fprintf(stderr, "\nkedr flow: raise [pressure] max_iter or tol, choose another solver, or "
            "lower dt\n");
}

/* Warns when a fixed step is beyond Adams–Bashforth 2's stable step for the boundary and
 * initial velocities. */
static void warn_dt(kedr_flow *f, const kedr_flow_case *c)
{
    if (!(c->dt > 0))
        return;
    kedr_flow_stats st;
    kedr_flow_get_stats(f, &st);
    double lim = kedr_flow_stable_dt(c, st.umax);
    if (c->dt > lim && flow_rank == 0)
        fprintf(stderr, "kedr flow: warning: dt = %g is above the stable limit %.4g for the "
                "velocities now present (|u| up to %.4g, nu = %g): the run will likely blow up; "
                "use [time] dt = auto or dt <= %.4g\n", c->dt, lim,
                fmax(st.umax[0], fmax(st.umax[1], st.umax[2])), c->nu, lim);
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

/* Refuses a grid that cannot fit, saying how much it needs. */
static int check_memory(kedr_ctx *ctx, const kedr_flow_case *c)
{
    double need = kedr_flow_bytes(c) / flow_nranks, have = memory_of(ctx); /* a slab a rank */
    if (need <= have)
        return 0;
    char a[32], b[32];
    fprintf(stderr, "kedr flow: %s: the grid (%d x %d x %d cells) needs about %s, and this back "
            "end has %s: coarsen the grid or run on a larger device\n", c->path, c->n[0],
            c->n[1], c->dims == 3 ? c->n[2] : 1, kedr_format_bytes(need, a, sizeof a),
            kedr_format_bytes(have, b, sizeof b));
    return CLI_EXIT_FAIL;
}

static void progress_line(const kedr_flow_stats *st, const kedr_flow_case *c, double run0,
                          int64_t first)
{
    double now = kedr_wall_seconds(), per = (now - run0) / (double)(st->step - first);
    double left = (double)(c->steps - st->step);
    if (c->end_time > 0 && st->dt > 0) {
        double by_time = (c->end_time - st->time) / st->dt;
        left = by_time < left ? by_time : left;
    }
    char eta[32];
    cli_format_seconds(per * left, eta, sizeof eta);
    char ibm[48] = "";
    if (c->nbodies)
        snprintf(ibm, sizeof ibm, "  bodies %d it", st->ibm_iterations);
    printf("step %lld  t %.5g  dt %.3g (cfl %.2f)  |u|max %.4g  ke %.5g  div %.1e  pressure %d "
           "it (res %.1e)%s  %.3g ms/step  ETA %s\n", (long long)st->step, st->time, st->dt,
           st->cfl, fmax(st->umax[0], fmax(st->umax[1], st->umax[2])), st->kinetic_energy,
           st->divergence, st->poisson.iterations, st->poisson.residual, ibm, 1e3 * per, eta);
    fflush(stdout);
}

static int run(kedr_flow *f, const kedr_flow_case *c, int *stopped, body_files *bf)
{
    kedr_flow_stats st;
    kedr_flow_get_stats(f, &st);
    int64_t first = st.step;
    double run0 = kedr_wall_seconds();
    for (;;) {
        if (st.step >= c->steps || (c->end_time > 0 && st.time >= c->end_time * (1 - 1e-12)))
            break;
        int sig = kedr_interrupted();
        /* the ranks stop together, at the same step */
        if (flow_nranks > 1 && kedr_comm_allreduce(flow_comm, KEDR_I32, KEDR_OP_MAX, &sig, 1))
            return fail("MPI");
        if ((*stopped = sig) != 0)
            break;
        if (kedr_flow_step(f) != KEDR_OK) {
            int why = kedr_flow_failure(f);
            char msg[600];
            snprintf(msg, sizeof msg, "%s", kedr_last_error());
            int say = flow_rank == 0; /* the ranks fail together: rank 0 says why */
            const char *why_text = strncmp(msg, "kedr flow: ", 11) == 0 ? msg + 11 : msg;
            if (say)
                fprintf(stderr, "kedr flow: %s\n", why_text);
            kedr_flow_get_stats(f, &st);
            if (why == 1 || why == 4) {
                if (why == 1 && say)
                    print_history(&st);
                if (say)
                    fprintf(stderr, "kedr flow: saving the state before the failed step\n");
                checkpoint(f, c);
            } else if (say) {
                fprintf(stderr, "kedr flow: stopped at step %lld; the last checkpoint written "
                        "(if any) holds the last good state\n", (long long)st.step);
            }
            return CLI_EXIT_FAIL;
        }
        kedr_flow_get_stats(f, &st);
        if (bf->n && st.step % c->forces_every == 0)
            write_forces(f, c, &st, bf);
        int last = st.step >= c->steps || (c->end_time > 0 && st.time >= c->end_time * (1 - 1e-12));
        if (c->stats_every > 0 && (st.step % c->stats_every == 0 || last))
            progress_line(&st, c, run0, first);
        if (c->checkpoint_every > 0 && st.step % c->checkpoint_every == 0 && !last) {
            int rc = checkpoint(f, c);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int run_flow(flow_options *op);

int cmd_flow(int argc, char **argv)
{
    flow_options o;
    parse_options(argc, argv, &o);
    if (kedr_comm_init(NULL, NULL, &flow_comm) != KEDR_OK)
        return fail("MPI");
    flow_rank = kedr_comm_rank(flow_comm);
    flow_nranks = kedr_comm_size(flow_comm);
    if (flow_nranks > 1) {
        /* one GPU a rank: the ranks of a host take its GPUs in turn */
        if (kedr_device_count() > 0)
            o.com.device = kedr_comm_device(flow_comm, kedr_device_count());
        if (flow_rank > 0 && !freopen("/dev/null", "w", stdout))
            return fail("stdout");
    }
    int rc = run_flow(&o);
    kedr_comm_finalize(flow_comm);
    return rc;
}

static int run_flow(flow_options *op)
{
    flow_options o = *op;
    kedr_flow_case c;
    if (kedr_flow_case_load(o.case_path, &c) != KEDR_OK)
        return fail(NULL);
    if (o.steps >= 0)
        c.steps = o.steps;
    if (o.out) {
        if (strlen(o.out) >= sizeof c.out_dir)
            cli_usage_error("flow", "--out: a path of %zu bytes; at most %zu", strlen(o.out),
                            sizeof c.out_dir - 1);
        strcpy(c.out_dir, o.out);
    }
    kedr_ctx *ctx = cli_context(&o.com, "flow");
    char grid[64];
    if (c.dims == 3)
        snprintf(grid, sizeof grid, "%d x %d x %d", c.n[0], c.n[1], c.n[2]);
    else
        snprintf(grid, sizeof grid, "%d x %d", c.n[0], c.n[1]);
    int pcg = c.poisson.method == KEDR_FLOW_METHOD_PCG;
    char ranks[48] = "";
    if (flow_nranks > 1)
        snprintf(ranks, sizeof ranks, " (x %d ranks: slabs along %c)", flow_nranks,
                 "xyz"[c.dims - 1]);
    printf("kedr flow %s on %s%s: %s cells, nu %g, dt %s, pressure: %s%s%s (tol %g)\n",
           o.case_path, kedr_backend_name(kedr_ctx_backend(ctx)), ranks, grid, c.nu,
           c.dt > 0 ? "fixed" : "from cfl",
           pcg ? "PCG" : c.poisson.method == KEDR_FLOW_METHOD_MG ? "multigrid" : "FFT/DCT (direct)",
           pcg ? " + " : "", pcg ? kedr_flow_precond_name(c.poisson.precond) : "", c.poisson.tol);
    int short_of_memory = check_memory(ctx, &c) != 0;
    if (flow_nranks > 1 && /* one rank's device too small stops all */
        kedr_comm_allreduce(flow_comm, KEDR_I32, KEDR_OP_MAX, &short_of_memory, 1) != KEDR_OK)
        short_of_memory = 1;
    if (short_of_memory) {
        kedr_ctx_destroy(ctx);
        return CLI_EXIT_FAIL;
    }
    kedr_flow *f = NULL;
    char rpath[FLOW_PATH + 32] = "";
    if (o.restart)
        cli_rank_path(o.restart, flow_rank, flow_nranks, rpath, sizeof rpath);
    kedr_status s = o.restart ? kedr_flow_restart_on(ctx, flow_comm, &c, rpath, &f)
                              : kedr_flow_create_on(ctx, flow_comm, &c, &f);
    s = agree(s);
    if (s != KEDR_OK) {
        kedr_flow_destroy(f);
        int rc = fail(o.restart ? "restart" : NULL);
        kedr_ctx_destroy(ctx);
        return rc;
    }
    if (o.restart) {
        kedr_flow_stats st;
        kedr_flow_get_stats(f, &st);
        printf("restart from %s at step %lld (t = %.6g s)\n", o.restart, (long long)st.step,
               st.time);
    }
    for (int b = 0; b < c.nbodies; b++) {
        static const char *const shapes[] = {"circle", "rectangle", "sphere", "box", "cylinder",
                                             "points"};
        kedr_flow_body_state bs;
        if (kedr_flow_body_get(f, b, &bs) == KEDR_OK)
            printf("body %s: %s, %d points (spacing %.3g cells), %s; coefficients over rho U^2 "
                   "%s / 2 with U = %g, %s = %g\n", c.body[b].name, shapes[c.body[b].shape],
                   bs.points, c.body[b].spacing,
                   c.body[b].frequency > 0 || c.body[b].velocity[0] != 0 ||
                           c.body[b].velocity[1] != 0 || c.body[b].velocity[2] != 0
                       ? "moving" : "fixed",
                   c.dims == 3 ? "A" : "L", c.body[b].ref_velocity, c.dims == 3 ? "A" : "L",
                   c.dims == 3 ? c.body[b].ref_area : c.body[b].ref_length);
    }
    warn_dt(f, &c);
    body_files bf;
    int rc = open_histories(f, &c, o.restart != NULL, &bf);
    if (flow_nranks > 1 && kedr_comm_allreduce(flow_comm, KEDR_I32, KEDR_OP_MAX, &rc, 1))
        rc = CLI_EXIT_FAIL;
    if (rc) {
        close_histories(&c, &bf);
        kedr_flow_destroy(f);
        kedr_ctx_destroy(ctx);
        return rc;
    }
    kedr_interrupt_install();
    int stopped = 0;
    rc = run(f, &c, &stopped, &bf);
    int rh = close_histories(&c, &bf);
    rc = rc ? rc : rh;
    if (rc == 0 && (c.checkpoint || stopped))
        rc = checkpoint(f, &c);
    if (rc == 0)
        rc = write_outputs(f, &c);
    if (rc == 0) {
        kedr_flow_stats st;
        kedr_flow_get_stats(f, &st);
        printf("%lld steps, t = %.6g s; %.3f s in steps, of which %.3f s in the pressure solve "
               "(%.2f iterations a step)", (long long)st.step, st.time, st.seconds_step,
               st.seconds_poisson, st.step ? (double)st.poisson_iterations / st.step : 0.0);
        if (c.nbodies)
            printf(" and %.3f s in the immersed boundaries", st.seconds_ibm);
        printf("\n");
        if (stopped)
            printf("stopped; continue with: kedr flow %s --restart %s/%s.chk\n", o.case_path,
                   c.out_dir, c.name);
    }
    kedr_flow_destroy(f);
    kedr_ctx_destroy(ctx);
    return rc == 0 && stopped ? CLI_EXIT_INTERRUPTED : rc;
}

int cmd_bench_flow(int argc, char **argv)
{
    const char *cmd = "bench flow";
    kedr_bench_flow_opts o;
    memset(&o, 0, sizeof o);
    cli_common com = {KEDR_BACKEND_AUTO, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("usage: kedr bench flow [options]\n\n"
                   "Times the pressure Poisson solvers (CG, PCG with Jacobi m = 1..4, red-black\n"
                   "SSOR m = 1, 2, the approximate inverse and multigrid, multigrid alone) to a\n"
                   "relative residual of 1e-8 on a 2D and a 3D Neumann box, and the time step of\n"
                   "a lid-driven box; on the cpu also hypre (BoomerAMG-PCG) and PETSc (CG+GAMG)\n"
                   "on the same problem when built with them (this build: %s).\n\n"
                   "options:\n"
                   "  --n2d N          the 2D grid N x N (default 256 cpu, 2048 cuda)\n"
                   "  --n3d N          the 3D grid N^3 (default 64 cpu, 256 cuda)\n"
                   "  --repeats R      timed solves per row, median (default 3)\n"
                   "  --steps S        timed time steps (default 10)\n"
                   "  --only poisson|step|fft  (fft: the direct solver alone; in a cuda run\n"
                   "                   the cpu's FFTW solve beside it, the two compared)\n"
                   "  --solvers LIST   the Poisson rows of these solvers only, comma-separated\n"
                   "                   (cg, pcg-jacobi1..4, pcg-ssor1, pcg-ssor2, pcg-ainv,\n"
                   "                   pcg-mg, mg, fft, and the yardsticks hypre, petsc;\n"
                   "                   default all)\n"
                   "  --no-yardsticks  skip hypre and PETSc\n"
                   "  --json FILE      write the record\n" CLI_COMMON_HELP
                   "\nUnder mpirun the yardsticks run over every rank, a slab of planes each, as\n"
                   "they use all the cores of a host: mpirun -np P kedr bench flow --backend cpu\n"
                   "--only poisson --solvers hypre,petsc (kedr's own rows: one process).\n",
                   kedr_bench_flow_yardsticks());
            return 0;
        }
        if (cli_common_option(argc, argv, &i, &com, cmd))
            continue;
        if (strcmp(a, "--n2d") == 0)
            o.n2d = (int)cli_int(cli_value(argc, argv, &i, cmd), 2, 1 << 15, "--n2d", cmd);
        else if (strcmp(a, "--n3d") == 0)
            o.n3d = (int)cli_int(cli_value(argc, argv, &i, cmd), 2, 2048, "--n3d", cmd);
        else if (strcmp(a, "--repeats") == 0)
            o.repeats = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 1000, "--repeats", cmd);
        else if (strcmp(a, "--steps") == 0)
            o.steps = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 100000, "--steps", cmd);
        else if (strcmp(a, "--json") == 0)
            o.json = cli_value(argc, argv, &i, cmd);
        else if (strcmp(a, "--solvers") == 0)
            o.solvers = cli_value(argc, argv, &i, cmd);
        else if (strcmp(a, "--no-yardsticks") == 0)
            o.no_yardsticks = 1;
        else if (strcmp(a, "--only") == 0) {
            o.only = cli_value(argc, argv, &i, cmd);
            if (strcmp(o.only, "poisson") != 0 && strcmp(o.only, "step") != 0 &&
                strcmp(o.only, "fft") != 0)
                cli_usage_error(cmd, "--only %s: expected poisson, step or fft", o.only);
        } else
            cli_usage_error(cmd, "unknown option '%s'", a);
    }
    if (o.json && kedr_file_check_writable(o.json) != KEDR_OK)
        cli_usage_error(cmd, "--json: %s", kedr_last_error());
    kedr_ctx *ctx = cli_context(&com, cmd);
    kedr_status s = kedr_bench_flow(ctx, &o);
    kedr_ctx_destroy(ctx);
    if (kedr_bench_flow_rank() > 0) /* the yardsticks over ranks: rank 0 reports */
        return s == KEDR_OK ? 0 : CLI_EXIT_FAIL;
    if (s != KEDR_OK) {
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
        return CLI_EXIT_FAIL;
    }
    if (o.json)
        printf("wrote %s\n", o.json);
    return 0;
}
