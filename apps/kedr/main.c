/* kedr: the command-line program. `kedr <command> [options]`; `kedr <command> --help`. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"info", cmd_info, "version, back ends, GPUs and CPU threads"},
    {"bench", cmd_bench, "benchmarks (kedr bench prim)"},
    {"cayley", cmd_cayley, "growth function, diameter, average distance of Cayley graphs"},
    {"dsmc", cmd_dsmc, "rarefied gas flow by direct simulation Monte Carlo"},
    {"adi", cmd_adi, "3D viscous flow by alternating-direction implicit sweeps"},
    {"flow", cmd_flow, "incompressible flow: projection, PCG and immersed boundaries"},
    {"render", cmd_render, "ray tracing of scenes (uniform grid, kd-tree, BVH)"},
    {"probe", cmd_probe, "GPU and host measurements (bandwidth, transfers, ...)"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "kedr %s: scientific computing on GPUs\n\n"
               "usage: kedr <command> [options]\n\ncommands:\n", KEDR_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\noptions every command takes:\n" CLI_COMMON_HELP
               "\n  --version                print the version\n"
               "\n'kedr <command> --help' describes a command.\n");
}

/* At a barrier, GNU OpenMP's threads spin before they sleep by default; on a machine shared with
 * other jobs a spinning thread holds the core that the thread it waits for needs, and kedr runs
 * many times slower (docs/performance.md, "The cpu back end"). So when the user has set neither
 * OMP_WAIT_POLICY nor GOMP_SPINCOUNT, kedr runs itself again with OMP_WAIT_POLICY=passive: the
 * OpenMP runtime reads them once, when it is loaded, before main. KEDR_WAIT_POLICY_MARK tells the
 * second run (and kedr info, and the benchmarks) that the policy is kedr's, and stops a loop. */
static void default_wait_policy(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv(KEDR_WAIT_POLICY_MARK))
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) == 0 && setenv(KEDR_WAIT_POLICY_MARK, "1", 1) == 0)
        execv("/proc/self/exe", argv);
    /* No /proc (or no exec): run on under the runtime's default, and say nothing false. */
    unsetenv("OMP_WAIT_POLICY");
    unsetenv(KEDR_WAIT_POLICY_MARK);
}

int main(int argc, char **argv)
{
    default_wait_policy(argv);
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("kedr %s (commit %s)\n", KEDR_VERSION, KEDR_GIT_COMMIT);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "kedr: unknown command '%s'\n", cmd);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
