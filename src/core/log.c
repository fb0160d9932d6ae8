/* Logging to stderr, filtered by level (KEDR_LOG=error|warn|info|debug sets the start level). */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int level = -1;

static void init_level(void)
{
    if (level >= 0)
        return;
    level = KEDR_LOG_WARN;
    const char *env = getenv("KEDR_LOG");
    static const char *names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; env && i < 4; i++)
        if (strcmp(env, names[i]) == 0)
            level = i;
}

void kedr_log_set_level(kedr_log_level l) { level = (int)l; }

kedr_log_level kedr_log_get_level(void)
{
    init_level();
    return (kedr_log_level)level;
}

void kedr_log(kedr_log_level l, const char *fmt, ...)
{
    static const char *tags[] = {"error", "warning", "info", "debug"};
    init_level();
    if ((int)l > level)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kedr: %s: ", tags[l]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
