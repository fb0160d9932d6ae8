/* kedr bench <suite>: benchmark drivers (bench/). */
#include "bench.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>

static void help_prim(void)
{
    printf("usage: kedr bench prim [options]\n\n"
           "Times each primitive (median of repeats after a warm-up) and prints size, time,\n"
           "Gelem/s, GB/s, the fraction of the measured copy bandwidth and, on the GPU, the\n"
           "ratio to CUB measured in the same run.\n\noptions:\n"
           "  --n N          elements per input (default 2^28 on a GPU, 2^26 on the cpu);\n"
           "                 also 64M or 2^26\n"
           "  --repeats R    timed repeats (default 20)\n"
           "  --only LIST    comma-separated benchmarks:");
    for (int i = 0; kedr_bench_prim_names[i]; i++)
        printf("%s%s", i ? "," : " ", kedr_bench_prim_names[i]);
    printf("\n  --json FILE    also write the results as JSON\n" CLI_COMMON_HELP);
}

static int bench_prim(int argc, char **argv)
{
    cli_common c = {KEDR_BACKEND_AUTO, 0};
    kedr_bench_prim_opts o = {0, 20, NULL, NULL};
    const char *cmd = "bench prim";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help_prim();
            return 0;
        }
        if (cli_common_option(argc, argv, &i, &c, cmd))
            continue;
        if (cli_is_option(a, "--n"))
            o.n = cli_size(cli_value(argc, argv, &i, cmd), "--n", cmd);
        else if (cli_is_option(a, "--repeats"))
            o.repeats = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 100000, "--repeats", cmd);
        else if (cli_is_option(a, "--json"))
            o.json = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--only"))
            o.only = cli_value(argc, argv, &i, cmd);
        else
            cli_usage_error(cmd, "unknown option '%s'", a);
    }
    if (o.only) { /* every listed name must be known */
        char buf[512];
        snprintf(buf, sizeof buf, "%s", o.only);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            int known = 0;
            for (int k = 0; kedr_bench_prim_names[k]; k++)
                known |= strcmp(tok, kedr_bench_prim_names[k]) == 0;
            if (!known)
                cli_usage_error(cmd, "--only: unknown benchmark '%s'", tok);
        }
    }
    kedr_ctx *ctx = cli_context(&c, cmd);
    if (o.n == 0)
        o.n = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA ? (size_t)1 << 28 : (size_t)1 << 26;
    kedr_status s = kedr_bench_prim(ctx, &o);
    if (s != KEDR_OK)
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
    kedr_ctx_destroy(ctx);
    return s == KEDR_OK ? 0 : CLI_EXIT_FAIL;
}

static int bench_dsmc(int argc, char **argv)
{
    cli_common c = {KEDR_BACKEND_AUTO, 0};
    kedr_bench_dsmc_opts o = {0, NULL, NULL, 0, 0};
    const char *cmd = "bench dsmc";
    int ranks = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("usage: kedr bench dsmc [options]\n\n"
                   "Times the DSMC simulator: an argon VSS box at 10 particles per cell (SPARTA's\n"
                   "bench/in.collide) at sizes up to --particles, both seed 003 cases and a 3D\n"
                   "sphere in reacting air at 7.5 km/s (sphere-air5-3d.ini) refined to\n"
                   "--particles; prints particle-steps/s, the stage breakdown and bytes per\n"
                   "particle.\n\noptions:\n"
                   "  --particles N  largest box (default 10^8 on a GPU, capped by its memory;\n"
                   "                 10^6 on the cpu); also 64M or 2^26\n"
                   "  --cases DIR    folder with seed-test1.ini, seed-test2.ini, sphere-air5-3d.ini\n"
                   "                 (cases/dsmc)\n"
                   "  --ranks        under mpirun: the box at --particles a rank (weak scaling)\n"
                   "                 and seed test 2 (strong scaling) over the ranks, one GPU\n"
                   "                 a rank (bench/dsmc-ranks.sh runs 1, 2, ... ranks)\n"
                   "  --sphere N     with --ranks: also the 3D sphere (sphere-3d.ini) refined\n"
                   "                 to about N particles (strong scaling; e.g. 4e8)\n"
                   "  --split rcb|x  over ranks: boxes by recursive coordinate bisection (the\n"
                   "                 default) or columns along x ([run] split, docs/dsmc.md)\n"
                   "  --json FILE    also write the results as JSON\n" CLI_COMMON_HELP);
            return 0;
        }
        if (cli_common_option(argc, argv, &i, &c, cmd))
            continue;
        if (cli_is_option(a, "--particles"))
            o.particles = cli_size(cli_value(argc, argv, &i, cmd), "--particles", cmd);
        else if (cli_is_option(a, "--json"))
            o.json = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--cases"))
            o.cases = cli_value(argc, argv, &i, cmd);
        else if (strcmp(a, "--ranks") == 0)
            ranks = 1;
        else if (cli_is_option(a, "--sphere"))
            o.sphere = cli_size(cli_value(argc, argv, &i, cmd), "--sphere", cmd);
        else if (cli_is_option(a, "--split")) {
            const char *v = cli_value(argc, argv, &i, cmd);
            if (strcmp(v, "rcb") != 0 && strcmp(v, "x") != 0)
                cli_usage_error(cmd, "--split '%s': expected rcb or x", v);
            o.split = strcmp(v, "x") == 0 ? KEDR_DSMC_SPLIT_X : KEDR_DSMC_SPLIT_RCB;
        }
        else
            cli_usage_error(cmd, "unknown option '%s'", a);
    }
    if (ranks) {
        kedr_comm *comm = NULL;
        if (kedr_comm_init(NULL, NULL, &comm) != KEDR_OK) {
            fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
            return CLI_EXIT_FAIL;
        }
        if (kedr_device_count() > 0) /* one GPU a rank: a host's ranks take its GPUs in turn */
            c.device = kedr_comm_device(comm, kedr_device_count());
        if (kedr_comm_rank(comm) > 0 && !freopen("/dev/null", "w", stdout))
            return CLI_EXIT_FAIL;
        kedr_ctx *ctx = cli_context(&c, cmd);
        kedr_status s = kedr_bench_dsmc_ranks(ctx, comm, &o);
        if (s != KEDR_OK)
            fprintf(stderr, "kedr %s: rank %d: %s\n", cmd, kedr_comm_rank(comm),
                    kedr_last_error());
        kedr_ctx_destroy(ctx);
        kedr_comm_finalize(comm);
        return s == KEDR_OK ? 0 : CLI_EXIT_FAIL;
    }
    kedr_ctx *ctx = cli_context(&c, cmd);
    kedr_status s = kedr_bench_dsmc(ctx, &o);
    if (s != KEDR_OK)
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
    kedr_ctx_destroy(ctx);
    return s == KEDR_OK ? 0 : CLI_EXIT_FAIL;
}

static void help_cayley(void)
{
    printf("usage: kedr bench cayley [options]\n\n"
           "Times the dense breadth-first search of each group (median of the runs for groups\n"
           "under 2 s, one run for bigger ones) and prints elements, levels, diameter, seconds,\n"
           "edge visits per second, and modelled bytes moved against the copy bandwidth.\n\n"
           "options:\n"
           "  --groups LIST  group specs separated by spaces or ';' (default cpu:");
    for (int i = 0; kedr_bench_cayley_cpu_groups[i]; i++)
        printf(" %s", kedr_bench_cayley_cpu_groups[i]);
    printf(";\n                 cuda:");
    for (int i = 0; kedr_bench_cayley_cuda_groups[i]; i++)
        printf(" %s", kedr_bench_cayley_cuda_groups[i]);
    printf(")\n  --repeats R    runs of a group under 2 s (default 3, at most 16)\n"
           "  --json FILE    also write the results as JSON\n" CLI_COMMON_HELP);
}

static int bench_cayley(int argc, char **argv)
{
    cli_common c = {KEDR_BACKEND_AUTO, 0};
    kedr_bench_cayley_opts o = {NULL, 3, NULL};
    const char *cmd = "bench cayley";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help_cayley();
            return 0;
        }
        if (cli_common_option(argc, argv, &i, &c, cmd))
            continue;
        if (cli_is_option(a, "--groups"))
            o.groups = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--repeats"))
            o.repeats = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 16, "--repeats", cmd);
        else if (cli_is_option(a, "--json"))
            o.json = cli_value(argc, argv, &i, cmd);
        else
            cli_usage_error(cmd, "unknown option '%s'", a);
    }
    kedr_ctx *ctx = cli_context(&c, cmd);
    kedr_status s = kedr_bench_cayley(ctx, &o);
    if (s != KEDR_OK)
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
    kedr_ctx_destroy(ctx);
    return s == KEDR_OK ? 0 : s == KEDR_ERR_INVALID && o.groups ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

static int bench_tridiag(int argc, char **argv)
{
    cli_common c = {KEDR_BACKEND_AUTO, 0};
    kedr_bench_tridiag_opts o = {0, NULL, 20, NULL, KEDR_TRIDIAG_AUTO};
    const char *cmd = "bench tridiag";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("usage: kedr bench tridiag [options]\n\n"
                   "Times kedr_tridiag_solve on diagonally dominant batches, per layout\n"
                   "(contiguous, interleaved), type (f32, f64), system length and periodicity\n"
                   "(median of repeats after a warm-up); prints G unknowns/s, GB/s, the fraction\n"
                   "of the measured copy bandwidth and the ratio to a reference measured in the\n"
                   "same run: cuSPARSE (gtsv2StridedBatch, gtsvInterleavedBatch) on the GPU,\n"
                   "LAPACK gtsv (LAPACKE) on the cpu.\n\n"
                   "options:\n"
                   "  --n N          unknowns a call (default 2^24 on a GPU, 2^22 on the cpu);\n"
                   "                 also 16M or 2^24\n"
                   "  --lengths L    comma-separated system lengths (default 64,256,1024)\n"
                   "  --algorithm A  auto (default), thomas, cr, pcr, cr_pcr, partitioned,\n"
                   "                 chunked or pcr_thomas\n"
                   "  --repeats R    timed repeats (default 20)\n"
                   "  --json FILE    also write the results as JSON\n" CLI_COMMON_HELP);
            return 0;
        }
        if (cli_common_option(argc, argv, &i, &c, cmd))
            continue;
        if (cli_is_option(a, "--n"))
            o.n = cli_size(cli_value(argc, argv, &i, cmd), "--n", cmd);
        else if (cli_is_option(a, "--algorithm")) {
            static const char *const names[] = {"auto", "thomas", "cr", "pcr", "cr_pcr",
                                                "partitioned", "chunked", "pcr_thomas"};
            const char *v = cli_value(argc, argv, &i, cmd);
            int k = 0;
            while (k < 8 && strcmp(v, names[k]) != 0)
                k++;
            if (k == 8)
                cli_usage_error(cmd, "--algorithm '%s': expected auto, thomas, cr, pcr, cr_pcr, "
                                "partitioned, chunked or pcr_thomas", v);
            o.algorithm = (kedr_tridiag_algorithm)k;
        } else if (cli_is_option(a, "--lengths"))
            o.lengths = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--repeats"))
            o.repeats = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 100000, "--repeats", cmd);
        else if (cli_is_option(a, "--json"))
            o.json = cli_value(argc, argv, &i, cmd);
        else
            cli_usage_error(cmd, "unknown option '%s'", a);
    }
    kedr_ctx *ctx = cli_context(&c, cmd);
    if (o.n == 0)
        o.n = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA ? (size_t)1 << 24 : (size_t)1 << 22;
    kedr_status s = kedr_bench_tridiag(ctx, &o);
    if (s != KEDR_OK)
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
    kedr_ctx_destroy(ctx);
    return s == KEDR_OK ? 0 : s == KEDR_ERR_INVALID && o.lengths ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} suites[] = {
    {"prim", bench_prim, "parallel primitives against CUB"},
    {"dsmc", bench_dsmc, "the DSMC simulator (particle-steps/s, stage breakdown)"},
    {"cayley", bench_cayley, "breadth-first search of Cayley graphs (kedr cayley)"},
    {"tridiag", bench_tridiag, "batched tridiagonal solvers against cuSPARSE and LAPACK"},
    {"adi", cmd_bench_adi, "the ADI flow solver's sweeps and time steps (kedr adi)"},
    {"flow", cmd_bench_flow, "the projection solver and its Poisson solvers (kedr flow)"},
    {"render", cmd_bench_render, "rays/s and build times of the ray tracer (kedr render)"},
};
#define NSUITES (sizeof suites / sizeof suites[0])

int cmd_bench(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        printf("usage: kedr bench <suite> [options]\n\nsuites:\n");
        for (size_t i = 0; i < NSUITES; i++)
            printf("  %-8s %s\n", suites[i].name, suites[i].summary);
        printf("\n'kedr bench <suite> --help' describes a suite.\n");
        return argc < 2 ? CLI_EXIT_USAGE : 0;
    }
    for (size_t i = 0; i < NSUITES; i++)
        if (strcmp(argv[1], suites[i].name) == 0)
            return suites[i].run(argc - 1, argv + 1);
    cli_usage_error("bench", "unknown suite '%s' (kedr bench --help lists them)", argv[1]);
}
