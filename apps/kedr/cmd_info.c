/* kedr info: what this build can run on. */
#include "cli.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: kedr info [options]\n\n"
    "Prints the version, the back ends built in, each GPU (name, SMs, memory) and the CPU\n"
    "threads the cpu back end uses (set OMP_NUM_THREADS to change them) and how they wait\n"
    "for each other (kedr's default OMP_WAIT_POLICY=passive, unless OMP_WAIT_POLICY or\n"
    "GOMP_SPINCOUNT is set).\n\noptions:\n" CLI_COMMON_HELP;

/* How the OpenMP threads wait at barriers, as the runtime read it when it was loaded. */
static void print_wait_policy(void)
{
    char policy[128];
    kedr_wait_policy(policy, sizeof policy);
    printf("cpu: wait policy %s%s\n", policy,
           getenv(KEDR_WAIT_POLICY_MARK) ? "; set OMP_WAIT_POLICY or GOMP_SPINCOUNT to choose" : "");
}

int cmd_info(int argc, char **argv)
{
    cli_common c = {KEDR_BACKEND_AUTO, 0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(help, stdout);
            return 0;
        }
        if (!cli_common_option(argc, argv, &i, &c, "info"))
            cli_usage_error("info", "unknown option '%s'", argv[i]);
    }
    printf("kedr %s\n", KEDR_VERSION);
#ifdef KEDR_HAVE_CUDA
    printf("back ends built in: cpu cuda\n");
#else
    printf("back ends built in: cpu\n");
#endif
    printf("cpu: %d OpenMP threads\n", omp_get_max_threads());
    print_wait_policy();
    int n = kedr_device_count();
    printf("GPUs: %d\n", n);
    for (int d = 0; d < n; d++) {
        kedr_device_info info;
        if (kedr_device_get_info(d, &info) != KEDR_OK) {
            fprintf(stderr, "kedr info: GPU %d: %s\n", d, kedr_last_error());
            return CLI_EXIT_FAIL;
        }
        double peak = 2.0 * info.memory_clock_khz * 1e3 * info.memory_bus_bits / 8 / 1e9;
        printf("  GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, L2 %.0f MiB, "
               "memory bus %d bits (nominal %.0f GB/s)\n",
               d, info.name, info.major, info.minor, info.multiprocessors,
               info.memory_bytes / 1073741824.0, info.l2_bytes / 1048576.0, info.memory_bus_bits,
               peak);
    }
    kedr_backend b = c.backend;
    if (b == KEDR_BACKEND_AUTO)
        b = kedr_backend_available(KEDR_BACKEND_CUDA) ? KEDR_BACKEND_CUDA : KEDR_BACKEND_CPU;
    printf("default back end here: %s\n", kedr_backend_name(b));
    return 0;
}
