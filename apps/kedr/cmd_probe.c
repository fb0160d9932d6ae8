/* kedr probe: placeholder while the module is written (replaced by the module's own command). */
#include "cli.h"

#include <stdio.h>

int cmd_probe(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kedr probe: not available in this build yet\n");
    return CLI_EXIT_FAIL;
}
