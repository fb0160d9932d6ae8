/* Option parsing shared by the commands. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kedr %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nsee 'kedr %s --help'\n", cmd);
    va_end(ap);
    exit(CLI_EXIT_USAGE);
}

const char *cli_value(int argc, char **argv, int *i, const char *cmd)
{
    const char *opt = argv[*i];
    const char *eq = strchr(opt, '=');
    if (eq && strncmp(opt, "--", 2) == 0)
        return eq + 1;
    if (*i + 1 >= argc)
        cli_usage_error(cmd, "option %s needs a value", opt);
    return argv[++*i];
}

int cli_is_option(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(arg, name, len) == 0 && (arg[len] == 0 || arg[len] == '=');
}

void cli_rank_path(const char *path, int rank, int nranks, char *out, size_t size)
{
    size_t len = strlen(path);
    if (nranks <= 1) {
        snprintf(out, size, "%s", path);
        return;
    }
    int ext = len >= 4 && strcmp(path + len - 4, ".chk") == 0;
    snprintf(out, size, "%.*s.rank%dof%d.chk", (int)(ext ? len - 4 : len), path, rank, nranks);
}

int cli_common_option(int argc, char **argv, int *i, cli_common *c, const char *cmd)
{
    const char *a = argv[*i];
    if (cli_is_option(a, "--backend")) {
        const char *v = cli_value(argc, argv, i, cmd);
        if (kedr_backend_parse(v, &c->backend) != KEDR_OK)
            cli_usage_error(cmd, "--backend %s: expected cpu, cuda or auto", v);
        return 1;
    }
    if (cli_is_option(a, "--device")) {
        c->device = (int)cli_int(cli_value(argc, argv, i, cmd), 0, 1023, "--device", cmd);
        return 1;
    }
    if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
        kedr_log_set_level(kedr_log_get_level() < KEDR_LOG_INFO ? KEDR_LOG_INFO : KEDR_LOG_DEBUG);
        return 1;
    }
    if (strcmp(a, "-vv") == 0) {
        kedr_log_set_level(KEDR_LOG_DEBUG);
        return 1;
    }
    return 0;
}

long cli_int(const char *text, long lo, long hi, const char *option, const char *cmd)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        cli_usage_error(cmd, "%s %s: expected an integer from %ld to %ld", option, text, lo, hi);
    return v;
}

size_t cli_size(const char *text, const char *option, const char *cmd)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = 0;
    if (strncmp(text, "2^", 2) == 0) {
        unsigned long long k = strtoull(text + 2, &end, 10);
        if (end == text + 2 || *end || k > 40)
            cli_usage_error(cmd, "%s %s: expected 2^K with K from 0 to 40", option, text);
        v = 1ull << k;
    } else if (text[0] != '-' && text[strspn(text, "0123456789")] != 0 &&
               strchr(".eE", text[strspn(text, "0123456789")])) {
        /* decimal notation: 2e7, 2.5e7 (a whole number, at most 2^53) */
        double d = strtod(text, &end);
        if (errno || end == text || *end || !(d >= 0) || d > 9007199254740992.0 ||
            d != (double)(unsigned long long)d)
            cli_usage_error(cmd, "%s %s: expected a positive whole count such as 1000000, 1e6, "
                            "2.5e7, 64M or 2^26", option, text);
        v = (unsigned long long)d;
    } else {
        v = strtoull(text, &end, 10);
        if (errno || end == text || text[0] == '-')
            cli_usage_error(cmd, "%s %s: expected a positive count such as 1000000, 64M or 2^26",
                            option, text);
        unsigned long long mult = 1;
        if (*end == 'k' || *end == 'K')
            mult = 1ull << 10, end++;
        else if (*end == 'M')
            mult = 1ull << 20, end++;
        else if (*end == 'G')
            mult = 1ull << 30, end++;
        if (*end)
            cli_usage_error(cmd, "%s %s: expected a positive count such as 1000000, 64M or 2^26",
                            option, text);
        if (v > ULLONG_MAX / mult)
            cli_usage_error(cmd, "%s %s: too large", option, text);
        v *= mult;
    }
    if (v == 0)
        cli_usage_error(cmd, "%s %s: expected a count of at least 1", option, text);
    return (size_t)v;
}

kedr_ctx *cli_context(const cli_common *c, const char *cmd)
{
    kedr_ctx *ctx = NULL;
    if (kedr_ctx_create(&ctx, c->backend, c->device) != KEDR_OK) {
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
        exit(CLI_EXIT_FAIL);
    }
    return ctx;
}

int cli_make_dirs(const char *path)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(buf, path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

void cli_format_seconds(double s, char *buf, size_t size)
{
    if (!isfinite(s))
        snprintf(buf, size, "?");
    else if (s < 60)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, size, "%d min %02d s", (int)(s / 60), (int)s % 60);
    else if (s < 48 * 3600)
        snprintf(buf, size, "%.1f h", s / 3600);
    else if (s < 3 * 365.25 * 86400)
        snprintf(buf, size, "%.0f days", s / 86400);
    else
        snprintf(buf, size, "%.2g years", s / (365.25 * 86400));
}

/* A regular file's modification time in seconds, or -1 when there is none. */
static double mtime_of(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return -1;
    return (double)sb.st_mtim.tv_sec + 1e-9 * sb.st_mtim.tv_nsec;
}

int cli_find_checkpoints(const char *cmd, const char *path, int *nfiles, char ***paths)
{
    char base[CLI_PATH], dir[CLI_PATH], name[CLI_PATH];
    size_t len = strlen(path);
    int r = -1, m = 0, at = 0;
    snprintf(base, sizeof base, "%s", path);
    /* NAME.rankRofM.chk: the set of M */
    const char *dot = len > 4 ? strstr(path, ".rank") : NULL;
    while (dot && strstr(dot + 1, ".rank"))
        dot = strstr(dot + 1, ".rank");
    if (dot && sscanf(dot, ".rank%dof%d.chk%n", &r, &m, &at) == 2 && dot[at] == 0 && m >= 1 &&
        r >= 0 && r < m)
        snprintf(base, sizeof base, "%.*s.chk", (int)(dot - path), path);
    else
        m = 0;
    len = strlen(base);
    int ext = len >= 4 && strcmp(base + len - 4, ".chk") == 0;
    const char *slash = strrchr(base, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - base) : 1, slash ? base : ".");
    snprintf(name, sizeof name, "%.*s", (int)((ext ? len - 4 : len) - (slash ? slash + 1 - base : 0)),
             slash ? slash + 1 : base);
    if (m == 0) { /* the newest of PATH and each NAME.rank0ofM.chk */
        double newest = mtime_of(base);
        if (newest >= 0)
            m = 1;
        DIR *d = opendir(dir);
        struct dirent *e;
        size_t nl = strlen(name);
        while (d && (e = readdir(d))) {
            int mm = 0, n = 0;
            if (strncmp(e->d_name, name, nl) != 0 ||
                sscanf(e->d_name + nl, ".rank0of%d.chk%n", &mm, &n) != 1 || e->d_name[nl + n] ||
                mm < 2)
                continue;
            char f[2 * CLI_PATH];
            snprintf(f, sizeof f, "%s/%s", dir, e->d_name);
            double t = mtime_of(f);
            if (t > newest) {
                newest = t;
                m = mm;
            }
        }
        if (d)
            closedir(d);
        if (m == 0) {
            fprintf(stderr, "kedr %s: --restart %s: cannot open: no such checkpoint (nor "
                    "%s/%s.rank0ofN.chk of a run over N ranks)\n", cmd, path, dir, name);
            return 1;
        }
    }
    char **list = calloc((size_t)m, sizeof *list);
    for (int k = 0; list && k < m; k++) {
        list[k] = malloc(2 * CLI_PATH);
        if (!list[k])
            break;
        if (m == 1)
            snprintf(list[k], 2 * CLI_PATH, "%s", base);
        else
            snprintf(list[k], 2 * CLI_PATH, "%s/%s.rank%dof%d.chk", dir, name, k, m);
    }
    if (!list || !list[m - 1]) {
        fprintf(stderr, "kedr %s: out of memory\n", cmd);
        return 1;
    }
    *nfiles = m;
    *paths = list;
    return 0;
}

void cli_free_paths(int n, char **paths)
{
    for (int k = 0; paths && k < n; k++)
        free(paths[k]);
    free(paths);
}
