/* kedr render: placeholder while the module is written (replaced by the module's own command). */
#include "cli.h"

#include <stdio.h>

int cmd_render(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kedr render: not available in this build yet\n");
    return CLI_EXIT_FAIL;
}

int cmd_bench_render(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kedr bench render: not available in this build yet\n");
    return CLI_EXIT_FAIL;
}
