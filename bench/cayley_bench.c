/* kedr bench cayley: times the dense breadth-first search of a list of groups (docs/cayley.md).
 *
 * For each group: the search runs once, and when it took under 2 s twice more, and the median
 * time is reported; every run must give the same growth function. Rates:
 *  - edge visits per second: products computed (unrank, multiply by a generator, rank) with
 *    their membership tests, F(s) * generators summed over the expanded levels, per second;
 *  - bytes moved, a model of the memory traffic: each level streams the bitmaps four times
 *    (the sweep reads the frontier; the merge reads next and reads and writes visited), and
 *    each edge visit reads one 32-byte sector of visited at a random place. Compared with the
 *    copy bandwidth measured in the same run (bytes read + written by kedr_copy), as
 *    `kedr bench prim` does. */
#include "bench.h"
#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KEDR_GIT_COMMIT
#define KEDR_GIT_COMMIT "unknown"
#endif

const char *const kedr_bench_cayley_cpu_groups[] = {
    "pancake:10", "bubble:10", "burnt-pancake:7", "abelian:1024,1024", "burnside:10", "cube2",
    NULL};
/* The cuda list starts with the cpu list, so that the two back ends meet on the same groups. */
const char *const kedr_bench_cayley_cuda_groups[] = {
    "pancake:10",   "bubble:10",    "burnt-pancake:7", "abelian:1024,1024", "burnside:10",
    "cube2",        "pancake:12",   "pancake:13",      "pancake:14",        "burnt-pancake:10",
    "star:12",      "burnside:12",  "burnside:13",     "burnside:14",       "burnside:15",
    "burnside:16",  NULL};

#define CB_MAX_GROUPS 64
#define CB_SMALL_SECONDS 2.0 /* a group faster than this is run `repeats` times */
#define CB_SECTOR 32.0       /* bytes of a random membership test */

typedef struct {
    char spec[160];
    uint64_t elements;
    int levels, diameter, runs;
    double seconds, edge_visits, bytes;
    size_t memory_bytes;
    const char *status; /* "ok", "MISMATCH" (runs disagreed) or "error" */
    char message[320];
} cb_row;

/* Runs one group into row; KEDR_OK or the first error (also recorded in the row). */
static kedr_status bench_group(kedr_ctx *ctx, const char *spec, int repeats, cb_row *row)
{
    memset(row, 0, sizeof *row);
    snprintf(row->spec, sizeof row->spec, "%s", spec);
    row->status = "error";
    kedr_cayley_group *g = NULL;
    kedr_cayley_result first, again;
    double t[16];
    kedr_status s = kedr_cayley_parse(spec, 0, &g);
    if (s == KEDR_OK)
        s = kedr_cayley_growth(ctx, g, NULL, &first);
    if (s != KEDR_OK) {
        snprintf(row->message, sizeof row->message, "%s", kedr_last_error());
        kedr_cayley_group_free(g);
        return s;
    }
    t[0] = first.seconds;
    row->runs = 1;
    int same = 1;
    if (first.seconds < CB_SMALL_SECONDS)
        while (row->runs < repeats && row->runs < 16 && s == KEDR_OK) {
            s = kedr_cayley_growth(ctx, g, NULL, &again);
            if (s != KEDR_OK)
                break;
            t[row->runs++] = again.seconds;
            same &= again.diameter == first.diameter &&
                    memcmp(again.growth, first.growth, 8 * ((size_t)first.diameter + 1)) == 0;
            kedr_cayley_result_free(&again);
        }
    if (s != KEDR_OK) {
        snprintf(row->message, sizeof row->message, "%s", kedr_last_error());
    } else if (!same) {
        row->status = "MISMATCH";
        snprintf(row->message, sizeof row->message, "%s: runs gave different growth functions",
                 spec);
        s = kedr_fail(KEDR_ERR_INVALID, "%s", row->message);
    } else {
        row->status = "ok";
    }
    row->elements = first.reached;
    row->levels = first.diameter + 1;
    row->diameter = first.diameter;
    row->seconds = bench_median(t, row->runs);
    row->edge_visits = first.edge_visits;
    row->memory_bytes = first.memory_bytes;
    /* levels + 1 sweeps: the last, empty level is expanded too. The model is the dense
     * search's; a sparse search (sorting) has none here. */
    row->bytes = first.mode == KEDR_CAYLEY_SPARSE
                     ? NAN
                     : 4.0 * (double)(first.memory_bytes / 3) * (row->levels + 1) +
                           CB_SECTOR * first.edge_visits;
    kedr_cayley_result_free(&first);
    kedr_cayley_group_free(g);
    return s;
}

typedef struct {
    char device[320];
    const char *backend, *commit;
    char date[32];
    double copy_gbps;
    int repeats;
} cb_header;

static kedr_status write_json(const char *path, const cb_header *h, const cb_row *rows, int nrows)
{
    kedr_file_writer w;
    bench_meta m = {"cayley", h->device, h->backend, h->date, h->commit};
    KEDR_TRY(bench_json_open(&w, path, &m));
    FILE *f = KEDR_FILE(&w);
    fprintf(f, ",\n  \"repeats\": %d,\n  \"copy_gbps\": ", h->repeats);
    bench_json_number(f, h->copy_gbps, 1);
    fputs(",\n  \"results\": [", f);
    for (int i = 0; i < nrows; i++) {
        const cb_row *r = &rows[i];
        int ok = strcmp(r->status, "ok") == 0;
        fprintf(f, "%s\n    {\"group\": ", i ? "," : "");
        kedr_json_string(f, r->spec);
        fprintf(f, ", \"elements\": %llu, \"levels\": %d, \"diameter\": %d, \"runs\": %d, "
                   "\"memory_bytes\": %zu, \"seconds\": ",
                (unsigned long long)r->elements, r->levels, r->diameter, r->runs, r->memory_bytes);
        bench_json_number(f, r->seconds, ok);
        fputs(", \"edge_visits\": ", f);
        bench_json_number(f, r->edge_visits, ok);
        fputs(", \"edge_visits_per_s\": ", f);
        bench_json_number(f, r->edge_visits / r->seconds, ok);
        int modelled = ok && !isnan(r->bytes);
        fputs(", \"bytes\": ", f);
        bench_json_number(f, r->bytes, modelled);
        fputs(", \"gbps\": ", f);
        bench_json_number(f, r->bytes / r->seconds / 1e9, modelled);
        fputs(", \"frac_copy\": ", f);
        bench_json_number(f, r->bytes / r->seconds / 1e9 / h->copy_gbps, modelled);
        bench_json_status(f, r->status, r->message);
        fputc('}', f);
    }
    return bench_json_close(&w);
}

static void print_row(const cb_row *r, double copy_gbps)
{
    if (strcmp(r->status, "ok") != 0) {
        printf("%-20s  %s\n", r->spec, r->status);
    } else {
        double gbps = r->bytes / r->seconds / 1e9;
        printf("%-20s %14llu %6d %8d %4d %10.4f %10.3g", r->spec, (unsigned long long)r->elements,
               r->levels, r->diameter, r->runs, r->seconds, r->edge_visits / r->seconds);
        if (isnan(gbps))
            printf(" %9s %7s\n", "-", "-");
        else
            printf(" %9.1f %7.2f\n", gbps, gbps / copy_gbps);
    }
    fflush(stdout);
}

/* Splits text into specs at spaces and ';'. Returns how many, or -1 when there are too many. */
static int split_groups(char *text, const char **specs)
{
    int n = 0;
    for (char *tok = strtok(text, " ;\t\n"); tok; tok = strtok(NULL, " ;\t\n")) {
        if (n == CB_MAX_GROUPS)
            return -1;
        specs[n++] = tok;
    }
    return n;
}

kedr_status kedr_bench_cayley(kedr_ctx *ctx, const kedr_bench_cayley_opts *opts)
{
    if (!ctx || !opts)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_bench_cayley: %s is NULL", ctx ? "opts" : "ctx");
    if (opts->repeats < 1 || opts->repeats > 16)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_bench_cayley: repeats = %d: expected 1 to 16",
                         opts->repeats);
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    const char *specs[CB_MAX_GROUPS];
    char *list = NULL;
    int ngroups = 0;
    if (opts->groups) {
        list = strdup(opts->groups);
        if (!list)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_bench_cayley: out of host memory");
        ngroups = split_groups(list, specs);
        if (ngroups <= 0) {
            free(list);
            return kedr_fail(KEDR_ERR_INVALID, "kedr_bench_cayley: --groups '%s': expected 1 to %d "
                             "group specs separated by spaces or ';'", opts->groups, CB_MAX_GROUPS);
        }
    } else {
        const char *const *d = cuda ? kedr_bench_cayley_cuda_groups : kedr_bench_cayley_cpu_groups;
        while (d[ngroups] && ngroups < CB_MAX_GROUPS) {
            specs[ngroups] = d[ngroups];
            ngroups++;
        }
    }
    /* every spec must parse before anything runs */
    for (int i = 0; i < ngroups; i++) {
        kedr_cayley_group *g = NULL;
        if (kedr_cayley_parse(specs[i], 0, &g) != KEDR_OK) {
            char why[320]; /* kedr_fail must not format from its own message buffer */
            snprintf(why, sizeof why, "%s", kedr_last_error());
            kedr_status s = kedr_fail(KEDR_ERR_INVALID, "--groups: %s", why);
            free(list);
            return s;
        }
        kedr_cayley_group_free(g);
    }

    cb_header h;
    memset(&h, 0, sizeof h);
    bench_device_name(ctx, h.device, sizeof h.device);
    h.backend = kedr_backend_name(kedr_ctx_backend(ctx));
    h.commit = bench_commit(KEDR_GIT_COMMIT);
    bench_utc_date(h.date, sizeof h.date);
    h.repeats = opts->repeats;
    printf("kedr bench cayley: %s (%s), %s, commit %s\n", h.device, h.backend, h.date, h.commit);
    size_t n = cuda ? (size_t)1 << 28 : (size_t)1 << 25;
    kedr_status s = bench_copy_gbps(ctx, n * 4, 5, &h.copy_gbps);
    if (s != KEDR_OK) {
        free(list);
        return s;
    }
    printf("copy bandwidth %.1f GB/s (n = %zu u32, read + written)\n\n", h.copy_gbps, n);
    /* a warm-up, so that the first group does not pay for loading the kernels */
    kedr_cayley_group *warm = NULL;
    kedr_cayley_result wr;
    s = kedr_cayley_parse("pancake:6", 0, &warm);
    if (s == KEDR_OK)
        s = kedr_cayley_growth(ctx, warm, NULL, &wr);
    if (s == KEDR_OK)
        kedr_cayley_result_free(&wr);
    kedr_cayley_group_free(warm);
    if (s != KEDR_OK) {
        free(list);
        return s;
    }
    printf("%-20s %14s %6s %8s %4s %10s %10s %9s %7s\n", "group", "elements", "levels", "diameter",
           "runs", "seconds", "edges/s", "GB/s", "of copy");
    fflush(stdout);

    cb_row *rows = calloc((size_t)ngroups, sizeof *rows);
    if (!rows) {
        free(list);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_bench_cayley: out of host memory");
    }
    int nrows = 0, nfailed = 0;
    kedr_status first = KEDR_OK;
    char names[256] = "";
    for (int i = 0; i < ngroups; i++) {
        cb_row *r = &rows[nrows++];
        kedr_status bs = bench_group(ctx, specs[i], opts->repeats, r);
        if (bs != KEDR_OK) {
            fflush(stdout);
            fprintf(stderr, "kedr bench cayley: %s\n", r->message);
            if (first == KEDR_OK)
                first = bs;
            nfailed++;
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s%s", nfailed > 1 ? ", " : "", specs[i]);
        }
        print_row(r, h.copy_gbps);
        if (bs == KEDR_ERR_CUDA) { /* the GPU context is likely broken: stop here */
            fprintf(stderr, "kedr bench cayley: stopping after a CUDA error\n");
            break;
        }
    }
    printf("\nseconds: the search, median of the runs; edges/s: edge visits (one product and one\n"
           "membership test) per second; GB/s: modelled bytes (4 bitmap passes a level, 32 bytes\n"
           "a membership test) per second; of copy: that / copy bandwidth\n");
    if (opts->json) {
        s = write_json(opts->json, &h, rows, nrows);
        if (s == KEDR_OK)
            printf("wrote %s\n", opts->json);
    }
    free(rows);
    free(list);
    if (s != KEDR_OK)
        return s;
    if (nfailed)
        return kedr_fail(first, "%d of %d groups failed: %s", nfailed, nrows, names);
    return KEDR_OK;
}
