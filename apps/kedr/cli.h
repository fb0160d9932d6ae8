/* Shared by the kedr commands: the global options and small parsing helpers. Exit codes: 0 done,
 * 1 a run failed, 2 a bad command line, 128 + the signal for a run stopped by Ctrl-C (130) or
 * SIGTERM (143) after saving what it had. */
#ifndef KEDR_CLI_H
#define KEDR_CLI_H

#include "kedr/kedr.h"

#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2
/* A run that kedr_interrupted() stopped: 128 + the signal, as a shell reports a program that the
 * signal ended. */
#define CLI_EXIT_INTERRUPTED (128 + kedr_interrupted())

typedef struct {
    kedr_backend backend;
    int device;
} cli_common;

/* Help for the options every command takes. */
#define CLI_COMMON_HELP                                                                  \
    "  --backend cpu|cuda|auto  where to run (default auto: cuda when a GPU is present)\n" \
    "  --device N               which GPU (default 0)\n"                                  \
    "  -v, --verbose            more messages (-vv: debug)\n"                             \
    "  -h, --help               this help\n"

/* If argv[*i] is a common option, consumes it (and its value) and returns 1; returns 0 if it is
 * not one; on a bad value prints the error and exits 2. */
int cli_common_option(int argc, char **argv, int *i, cli_common *c, const char *cmd);
/* The value of option argv[*i] (advancing *i), or exit 2 naming the option. */
const char *cli_value(int argc, char **argv, int *i, const char *cmd);
/* Whether arg is the option name ("--name") or carries its value ("--name=value"). */
int cli_is_option(const char *arg, const char *name);
/* A checkpoint's file for a rank: DIR/NAME.chk on one rank, DIR/NAME.rankRofN.chk on rank R
 * of N (the path's .chk, if any, replaced). */
void cli_rank_path(const char *path, int rank, int nranks, char *out, size_t size);
/* A positive count: digits, optional k/M/G suffix (powers of 1024) or 2^K. Exit 2 otherwise. */
size_t cli_size(const char *text, const char *option, const char *cmd);
long cli_int(const char *text, long lo, long hi, const char *option, const char *cmd);
/* Prints "kedr CMD: message" and "see 'kedr CMD --help'" and exits 2. */
void cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;
/* mkdir -p: 0, or -1 with errno set. */
int cli_make_dirs(const char *path);
/* A duration as a person reads it: "42 s", "3 min 05 s", "1.5 h", "12 days", "3.1 years"; "?"
 * when it is not known (not finite). */
void cli_format_seconds(double s, char *buf, size_t size);
/* The checkpoint files that --restart PATH names: PATH itself (a run on one rank), or the
 * files DIR/NAME.rankRofM.chk of a run over M ranks (a PATH that names one of them names them
 * all; PATH = DIR/NAME.chk finds them too); when both kinds are there, the newest set. *paths:
 * *nfiles malloc'ed strings in rank order (cli_free_paths). Prints why not ("kedr CMD: ...")
 * and returns 1 when there is none. */
#define CLI_PATH 1024
int cli_find_checkpoints(const char *cmd, const char *path, int *nfiles, char ***paths);
void cli_free_paths(int n, char **paths);
/* Creates the context for the chosen back end or prints why not and exits 1. */
kedr_ctx *cli_context(const cli_common *c, const char *cmd);

int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_cayley(int argc, char **argv);
int cmd_dsmc(int argc, char **argv);
int cmd_adi(int argc, char **argv);
int cmd_flow(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_probe(int argc, char **argv);
/* `kedr bench adi|flow|render` (argv[0] is the suite's name), beside their commands. */
int cmd_bench_adi(int argc, char **argv);
int cmd_bench_flow(int argc, char **argv);
int cmd_bench_render(int argc, char **argv);

#endif
