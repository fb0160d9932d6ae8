/* Private helpers shared by the benchmark drivers in bench/. */
#ifndef KEDR_BENCH_UTIL_H
#define KEDR_BENCH_UTIL_H

#include "kedr/kedr.h"

#include <stdio.h>

/* The GPU's name, or the CPU model and the context's thread count. */
void bench_device_name(kedr_ctx *ctx, char *buf, size_t size);
/* The current UTC time as 2026-11-23T05:46:25Z. */
void bench_utc_date(char *buf, size_t size);
/* The median of t[0..n) (sorts t). */
double bench_median(double *t, int n);
/* Whether `name` is one of the comma-separated names of `list` (every name when list is NULL). */
int bench_in_list(const char *list, const char *name);
/* A number, or null where there is none (JSON has no NaN). */
void bench_json_number(FILE *f, double x, int present);

/* What every benchmark record starts with. */
typedef struct {
    const char *suite; /* "prim", "dsmc", "cayley", "tridiag" */
    const char *device, *backend, *date, *commit;
} bench_meta;
/* The commit a record names: KEDR_COMMIT from the environment when set (a tree copied without its
 * history), else the one the program was built from. */
const char *bench_commit(const char *built_from);
/* Opens PATH (written whole, through kedr_file_begin) and writes the record's opening: suite,
 * device, back end, date, commit and the OpenMP wait policy; the caller goes on with its own
 * fields, then ",\n  \"results\": [" and the results. */
kedr_status bench_json_open(kedr_file_writer *w, const char *path, const bench_meta *m);
/* A result's "status" and, when it is not "ok", its "message". */
void bench_json_status(FILE *f, const char *status, const char *message);
/* Closes the results list and the record, and puts the file in place. */
kedr_status bench_json_close(kedr_file_writer *w);

/* Times call(arg) on ctx: one warm-up call, then the median of `repeats` timed calls (device
 * events on a GPU), in seconds. On a failure, waits for the queued work, so that the caller may
 * free what it uses. */
kedr_status bench_time(kedr_ctx *ctx, kedr_status (*call)(void *arg), void *arg, int repeats,
                       double *seconds);
/* bench_time that also gives the shortest of the timed calls in *best (NULL: not wanted), the
 * figure STREAM-style anchors report. */
kedr_status bench_time_best(kedr_ctx *ctx, kedr_status (*call)(void *arg), void *arg, int repeats,
                            double *seconds, double *best);

/* One kedr_copy of bytes from src to dst, as a call for bench_time. */
typedef struct {
    kedr_ctx *ctx;
    void *dst, *src;
    size_t bytes;
} bench_copy_args;
kedr_status bench_copy_once(void *arg);

/* Bytes read + written per second by kedr_copy of `bytes` bytes: the median of `repeats` after
 * a warm-up, for the fraction of copy bandwidth a benchmark reaches. */
kedr_status bench_copy_gbps(kedr_ctx *ctx, size_t bytes, int repeats, double *gbps);

#endif
