/* kedr adi: placeholder while the module is written (replaced by the module's own command). */
#include "cli.h"

#include <stdio.h>

int cmd_adi(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kedr adi: not available in this build yet\n");
    return CLI_EXIT_FAIL;
}

int cmd_bench_adi(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kedr bench adi: not available in this build yet\n");
    return CLI_EXIT_FAIL;
}
