/* kedr flow: placeholder while the module is written (replaced by the module's own command). */
#include "cli.h"

#include <stdio.h>

int cmd_flow(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kedr flow: not available in this build yet\n");
    return CLI_EXIT_FAIL;
}

int cmd_bench_flow(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kedr bench flow: not available in this build yet\n");
    return CLI_EXIT_FAIL;
}
