/* kedr probe: how well this GPU (or cpu) moves data, measured as Ruetsch & Fatica, "CUDA Fortran
 * for Scientists and Engineers" (2013), measure it, and printed beside their figures. Every kernel
 * is run once and its result checked against a host reference before it is timed (a warm-up,
 * then the median of repeats, CUDA events on a GPU); effective bandwidth counts the bytes that
 * must move, read plus written, in units of 10^9 bytes per second (their eq. of sec. 2.3.2). */
#include "bench_util.h"
#ifdef KEDR_HAVE_CUDA
#include "cub_ref.h"
#endif
#include "cli.h"
#include "kedr/plot.h"
#include "kedr/probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KEDR_GIT_COMMIT
#define KEDR_GIT_COMMIT "unknown"
#endif

/* The measurement needs what this machine lacks (a GPU, a second GPU). */
#define PROBE_EXIT_UNAVAILABLE 3

static const char help[] =
    "usage: kedr probe SUBCOMMAND [options]\n\n"
    "Measures this machine as Ruetsch & Fatica (2013) measure GPUs, and prints their published\n"
    "figures beside: every kernel is checked against a host reference, then timed (a warm-up,\n"
    "then the median of repeats; CUDA events on a GPU). Effective bandwidth = bytes read + written\n"
    "/ time, in GB/s (10^9 bytes/s).\n\n"
    "subcommands:\n"
    "  bandwidth   the copy kernel (their table 2.1), the limiting-factor study at 8M floats\n"
    "              (base / memory / math, with and without fast math), and copy, scale, add,\n"
    "              triad, dot (the BabelStream set)                                 cpu or GPU\n"
    "  offset      a[i + offset] += 1, offsets 0..32, fp32, fp64 (figs. 3.6, 3.10)  cpu or GPU\n"
    "  stride      a[i * stride] += 1, strides 1..32, fp32, fp64 (figs. 3.14-3.17) cpu or GPU\n"
    "  transpose   copy, shared-memory copy, naive, coalesced, no-bank-conflicts and diagonal\n"
    "              transposes of N x N floats (their tables of sec. 3.4)            cpu or GPU\n"
    "  transfer    host <-> device copies, pageable and pinned, 4 kB to 1 GB\n"
    "              (figs. 3.2-3.3)                                                  GPU\n"
    "  overlap     copies and kernels over 4 streams, three orders (sec. 3.1.3), and the\n"
    "              engine model's prediction from the stages' own times             GPU\n"
    "  occupancy   the copy kernel over threads per block, with one block per SM, and ILP = 4\n"
    "              (sec. 3.5)                                                       GPU\n"
    "  p2p         peer copies between GPUs and the bandwidth matrix (ch. 4)       2+ GPUs\n"
    "  mpi-transpose  under mpirun, one GPU a rank: the N x N transpose spread over the\n"
    "              ranks (sec. 4.1.3, 4.2), host-staged MPI, CUDA-aware MPI where the\n"
    "              library is, and peer copies (CUDA IPC) between the ranks of a host\n"
    "              (default N 2048, their case)                                     cpu or GPU\n"
    "  textbook    Boreskov et al. (2012): reduce1..reduce5 (table 5.1), scan1, scan2 (table\n"
    "              5.2) and the matrix products of ch. 3 (tables 3.3, 3.4), beside kedr_reduce\n"
    "              and kedr_scan_exclusive                                          cpu or GPU\n\n"
    "options:\n"
    "  --n N            elements (bandwidth: 2^25, the limit study 8M; offset, stride: 16M\n"
    "                   on a GPU, 4M on the cpu; occupancy: 2^25 doubles; overlap: 4194304;\n"
    "                   p2p: bytes, 16M; textbook: reduce 8M, scan 16M)\n"
    "  --matrix N       textbook: the matrix products' N (default 2048 on a GPU, 512 on the cpu)\n"
    "  --sizes LIST     transpose: N of the N x N matrices (default 1024,4096);\n"
    "                   transfer: largest size in bytes (default 1G)\n"
    "  --type f32|f64|both  offset, stride (default both); bandwidth's STREAM set (default f64)\n"
    "  --repeats R      timed repeats after the warm-up (default 10)\n"
    "  --json FILE      write the results as JSON\n"
    "  --plot FILE.png  offset, stride, transfer: the curves as PNG (FILE-SERIES.png when more\n"
    "                   than one)\n" CLI_COMMON_HELP
    "\nexit status: 0 done, 1 a run failed (a kernel gave a wrong result), 2 a bad command line,\n"
    "3 the measurement needs hardware this machine lacks (a GPU; a second GPU for p2p).\n";

/* ---- options --------------------------------------------------------------------------------- */

typedef struct {
    cli_common c;
    const char *sub, *json, *plot, *sizes;
    size_t n, matrix;
    int n_set, repeats, types; /* types: bit 0 f32, bit 1 f64 */
} probe_opts;

static const char *cmdname = "probe";

static void parse(int argc, char **argv, probe_opts *o)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(help, stdout);
            exit(0);
        } else if (cli_common_option(argc, argv, &i, &o->c, cmdname)) {
        } else if (cli_is_option(a, "--n")) {
            o->n = cli_size(cli_value(argc, argv, &i, cmdname), "--n", cmdname);
            o->n_set = 1;
        } else if (cli_is_option(a, "--matrix")) {
            o->matrix = cli_size(cli_value(argc, argv, &i, cmdname), "--matrix", cmdname);
            if (o->matrix > 16384)
                cli_usage_error(cmdname, "--matrix %zu: expected N up to 16384", o->matrix);
        } else if (cli_is_option(a, "--sizes")) {
            o->sizes = cli_value(argc, argv, &i, cmdname);
        } else if (cli_is_option(a, "--repeats")) {
            o->repeats = (int)cli_int(cli_value(argc, argv, &i, cmdname), 1, 10000, "--repeats",
                                      cmdname);
        } else if (cli_is_option(a, "--json")) {
            o->json = cli_value(argc, argv, &i, cmdname);
        } else if (cli_is_option(a, "--plot")) {
            o->plot = cli_value(argc, argv, &i, cmdname);
        } else if (cli_is_option(a, "--type")) {
            const char *v = cli_value(argc, argv, &i, cmdname);
            o->types = strcmp(v, "f32") == 0 ? 1 : strcmp(v, "f64") == 0 ? 2
                     : strcmp(v, "both") == 0 ? 3 : 0;
            if (!o->types)
                cli_usage_error(cmdname, "--type %s: expected f32, f64 or both", v);
        } else {
            cli_usage_error(cmdname, "unknown option '%s'", a);
        }
    }
}

/* ---- results: a table printed, written as JSON, plotted -------------------------------------- */

typedef struct {
    char name[48];   /* the kernel or case */
    char series[24]; /* the curve it belongs to in a plot */
    double x;        /* size, offset, stride ... */
    double seconds, gbps;
    char seed[112]; /* the book's figure for the same case, with the GPU */
    const char *unit; /* of the rate: "GB/s" (bytes moved), "GFLOP/s" (matrix products) */
} probe_row;

typedef struct {
    probe_row *rows;
    int n, cap;
    const char *xname;  /* what x is */
    const char *source; /* whose figures are quoted; NULL: Ruetsch & Fatica (2013) */
} probe_table;

static probe_row *add_row(probe_table *t, const char *name, const char *series, double x,
                          double seconds, double bytes, const char *seed)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        probe_row *r = realloc(t->rows, (size_t)cap * sizeof *r);
        if (!r) {
            fprintf(stderr, "kedr probe: out of host memory\n");
            exit(CLI_EXIT_FAIL);
        }
        t->rows = r;
        t->cap = cap;
    }
    probe_row *r = &t->rows[t->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->series, sizeof r->series, "%s", series ? series : "");
    r->x = x;
    r->seconds = seconds;
    r->gbps = bytes > 0 && seconds > 0 ? bytes / seconds / 1e9 : 0;
    snprintf(r->seed, sizeof r->seed, "%s", seed ? seed : "");
    r->unit = "GB/s";
    return r;
}

static void print_row(const probe_row *r)
{
    char size[32];
    snprintf(size, sizeof size, "%.0f", r->x);
    if (r->gbps > 0)
        printf("  %-30s %12s %11.4f ms %9.1f %-7s %s\n", r->name, size, 1e3 * r->seconds,
               r->gbps, r->unit, r->seed);
    else
        printf("  %-30s %12s %11.4f ms %17s %s\n", r->name, size, 1e3 * r->seconds, "", r->seed);
}

static void print_header(const probe_table *t)
{
    printf("  %-30s %12s %14s %17s %s\n", "kernel", t->xname, "time", "rate     ",
           t->source ? t->source : "Ruetsch & Fatica (2013)");
}

static int write_json(const probe_opts *o, kedr_ctx *ctx, const probe_table *t)
{
    if (!o->json)
        return 0;
    char device[300], date[32], suite[48];
    bench_device_name(ctx, device, sizeof device);
    bench_utc_date(date, sizeof date);
    snprintf(suite, sizeof suite, "probe-%s", o->sub);
    bench_meta m = {suite, device, kedr_backend_name(kedr_ctx_backend(ctx)), date,
                    bench_commit(KEDR_GIT_COMMIT)};
    kedr_file_writer w;
    if (bench_json_open(&w, o->json, &m) != KEDR_OK) {
        fprintf(stderr, "kedr probe: %s\n", kedr_last_error());
        return CLI_EXIT_FAIL;
    }
    FILE *f = KEDR_FILE(&w);
    fprintf(f, ",\n  \"repeats\": %d,\n  \"x\": ", o->repeats);
    kedr_json_string(f, t->xname);
    fputs(",\n  \"results\": [", f);
    for (int i = 0; i < t->n; i++) {
        const probe_row *r = &t->rows[i];
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        kedr_json_string(f, r->name);
        fputs(", \"series\": ", f);
        kedr_json_string(f, r->series);
        fprintf(f, ", \"x\": %.17g, \"seconds\": %.9g, \"gbps\": ", r->x, r->seconds);
        bench_json_number(f, r->gbps, r->gbps > 0);
        fputs(", \"unit\": ", f);
        kedr_json_string(f, r->unit);
        fputs(", \"published\": ", f);
        kedr_json_string(f, r->seed);
        fputc('}', f);
    }
    if (bench_json_close(&w) != KEDR_OK) {
        fprintf(stderr, "kedr probe: %s\n", kedr_last_error());
        return CLI_EXIT_FAIL;
    }
    printf("wrote %s\n", o->json);
    return 0;
}

/* One PNG per series: FILE.png when there is one, FILE-SERIES.png for each when there are more. */
static int write_plots(const probe_opts *o, const probe_table *t, const char *title,
                       const char *xlabel)
{
    if (!o->plot)
        return 0;
    char names[16][24];
    int ns = 0;
    for (int i = 0; i < t->n; i++) {
        int k = 0;
        while (k < ns && strcmp(names[k], t->rows[i].series) != 0)
            k++;
        if (k == ns && ns < 16)
            snprintf(names[ns++], sizeof names[0], "%s", t->rows[i].series);
    }
    double *x = malloc(sizeof(double) * (size_t)(t->n + 1));
    double *y = malloc(sizeof(double) * (size_t)(t->n + 1));
    int rc = 0;
    for (int k = 0; k < ns && rc == 0 && x && y; k++) {
        size_t m = 0;
        for (int i = 0; i < t->n; i++)
            if (strcmp(t->rows[i].series, names[k]) == 0) {
                x[m] = strcmp(t->xname, "bytes") == 0 ? log2(t->rows[i].x) : t->rows[i].x;
                y[m++] = t->rows[i].gbps;
            }
        char path[1024], full[512];
        const char *dot = strrchr(o->plot, '.');
        size_t stem = dot && strcmp(dot, ".png") == 0 ? (size_t)(dot - o->plot) : strlen(o->plot);
        if (ns == 1)
            snprintf(path, sizeof path, "%s", o->plot);
        else
            snprintf(path, sizeof path, "%.*s-%s.png", (int)stem, o->plot, names[k]);
        snprintf(full, sizeof full, "%s (%s)", title, names[k]);
        kedr_plot_axes axes = {full, xlabel, "effective bandwidth (GB/s)", 0};
        if (kedr_plot_series(path, &axes, m, x, y) != KEDR_OK) {
            fprintf(stderr, "kedr probe: %s\n", kedr_last_error());
            rc = CLI_EXIT_FAIL;
        } else {
            printf("wrote %s\n", path);
        }
    }
    free(x);
    free(y);
    return rc;
}

/* ---- shared helpers -------------------------------------------------------------------------- */

static int fail(const char *what)
{
    fprintf(stderr, "kedr %s: %s\n", cmdname, what);
    return CLI_EXIT_FAIL;
}

static int fail_status(void)
{
    fprintf(stderr, "kedr %s: %s\n", cmdname, kedr_last_error());
    return CLI_EXIT_FAIL;
}

/* A buffer in the context's memory, or exit 1 saying how much was asked. */
static void *dev_alloc(kedr_ctx *ctx, size_t bytes)
{
    void *p = NULL;
    if (kedr_alloc(ctx, &p, bytes) != KEDR_OK) {
        fprintf(stderr, "kedr %s: %s\n", cmdname, kedr_last_error());
        exit(CLI_EXIT_FAIL);
    }
    return p;
}

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        char b[32];
        fprintf(stderr, "kedr %s: out of host memory (%s)\n", cmdname,
                kedr_format_bytes((double)bytes, b, sizeof b));
        exit(CLI_EXIT_FAIL);
    }
    return p;
}

/* The GPU's nominal memory bandwidth in GB/s (0 on the cpu). */
static double nominal_peak(kedr_ctx *ctx)
{
    kedr_device_info info;
    if (kedr_ctx_backend(ctx) != KEDR_BACKEND_CUDA ||
        kedr_device_get_info(kedr_ctx_device(ctx), &info) != KEDR_OK)
        return 0;
    return 2.0 * info.memory_clock_khz * 1e3 * info.memory_bus_bits / 8 / 1e9;
}

static void print_title(kedr_ctx *ctx, const char *what)
{
    char device[300];
    bench_device_name(ctx, device, sizeof device);
    printf("kedr probe %s on %s (%s back end)\n", what, device,
           kedr_backend_name(kedr_ctx_backend(ctx)));
    double peak = nominal_peak(ctx);
    if (peak > 0)
        printf("nominal memory bandwidth %.0f GB/s (kedr info)\n", peak);
}

/* ---- timing: a call through bench_time ------------------------------------------------------- */

typedef struct {
    kedr_ctx *ctx;
    int what; /* which of the calls below */
    kedr_dtype t;
    int op, fast;
    size_t n, m, k;
    void *a, *b, *c;
    double dot;
    int32_t isum;
    kedr_probe_launch launch;
    struct cub_ref *cub; /* CALL_CUB_*: CUB, the reference of the reductions and scans */
} call_args;

enum {
    CALL_STREAM, CALL_LIMIT, CALL_OFFSET, CALL_STRIDE, CALL_STRIDE_READ, CALL_TRANSPOSE, CALL_COPY,
    CALL_REDUCE, CALL_KEDR_REDUCE, CALL_SCAN, CALL_KEDR_SCAN, CALL_MATMUL, CALL_CUB_REDUCE,
    CALL_CUB_SCAN
};

static kedr_status call_once(void *p)
{
    call_args *c = p;
    switch (c->what) {
    case CALL_STREAM:
        return kedr_probe_stream(c->ctx, c->t, c->op, c->n, c->a, c->b, c->c, 0.4, &c->dot);
    case CALL_LIMIT:
        return kedr_probe_limit(c->ctx, c->op, c->fast, c->a, c->b, c->n, 1.0f, 0);
    case CALL_OFFSET:
        return kedr_probe_offset(c->ctx, c->t, c->a, c->n, c->k);
    case CALL_STRIDE:
        return kedr_probe_stride(c->ctx, c->t, c->a, c->n, c->k);
    case CALL_STRIDE_READ: /* op: the read-only (texture) path */
        return kedr_probe_stride_read(c->ctx, c->t, c->a, c->b, c->n, c->k, c->op);
    case CALL_TRANSPOSE:
        return kedr_probe_transpose(c->ctx, c->op, c->a, c->b, c->n, c->m);
    case CALL_COPY:
        return kedr_probe_copy_launch(c->ctx, c->t, c->b, c->a, c->n, &c->launch);
    case CALL_REDUCE:
        return kedr_probe_textbook_reduce(c->ctx, c->op, c->a, c->n, &c->isum);
    case CALL_KEDR_REDUCE:
        return kedr_reduce(c->ctx, KEDR_I32, KEDR_OP_SUM, c->a, c->n, &c->isum);
    case CALL_SCAN:
        return kedr_probe_textbook_scan(c->ctx, c->op, c->a, c->b, c->n);
    case CALL_KEDR_SCAN:
        return kedr_scan_exclusive(c->ctx, KEDR_F32, c->a, c->b, c->n, NULL);
    case CALL_MATMUL:
        return kedr_probe_textbook_matmul(c->ctx, c->op, c->a, c->b, c->c, c->n);
#ifdef KEDR_HAVE_CUDA
    case CALL_CUB_REDUCE:
        return cub_ref_reduce_sum_u32(c->cub, c->a, c->n, (uint32_t *)&c->isum);
    case CALL_CUB_SCAN:
        return cub_ref_scan_exclusive_f32(c->cub, c->a, c->b, c->n);
#endif
    }
    return kedr_fail(KEDR_ERR_INVALID, "kedr probe: unknown call %d", c->what);
}

static int time_call(call_args *c, int repeats, double *seconds)
{
    if (bench_time(c->ctx, call_once, c, repeats, seconds) != KEDR_OK)
        return fail_status();
    return 0;
}

/* ---- bandwidth ------------------------------------------------------------------------------- */

/* Ruetsch & Fatica, sec. 2.2 (profiler times at n = 8 x 1024^2 floats, microseconds). */
static const char *limit_seed[2][3] = {
    {"C2050 850.9 us, K20 529.6 us", "C2050 625.9 us, K20 473.8 us", "C2050 784.4 us, K20 273.3 us"},
    {"C2050 635.4 us, K20 481.6 us", "C2050 626.3 us, K20 474.8 us", "C2050 261.3 us, K20 210.6 us"}};

/* Host values that stay exact in float: 1 + (i % 7) / 8 and so on. */
static double pattern(int array, size_t i) { return 1 + array + (double)(i % 7) / 8; }

static void fill_host(kedr_dtype t, void *h, size_t n, int array)
{
    for (size_t i = 0; i < n; i++) {
        if (t == KEDR_F32)
            ((float *)h)[i] = (float)pattern(array, i);
        else
            ((double *)h)[i] = pattern(array, i);
    }
}

/* Runs a STREAM kernel once on known inputs and compares its output with the host's arithmetic. */
static int check_stream(kedr_ctx *ctx, kedr_dtype t, kedr_probe_stream_op op, size_t n, void *d[3])
{
    size_t e = kedr_dtype_size(t), bytes = n * e;
    void *h = host_alloc(bytes);
    for (int k = 0; k < 3; k++) {
        fill_host(t, h, n, k);
        if (kedr_upload(ctx, d[k], h, bytes) != KEDR_OK)
            return fail_status();
    }
    double dot = 0;
    if (kedr_probe_stream(ctx, t, op, n, d[0], d[1], d[2], 0.4, &dot) != KEDR_OK)
        return fail_status();
    int out = op == KEDR_PROBE_SCALE ? 1 : op == KEDR_PROBE_TRIAD ? 0 : 2;
    if (op != KEDR_PROBE_DOT && kedr_download(ctx, h, d[out], bytes) != KEDR_OK)
        return fail_status();
    size_t bad = 0;
    double want_dot = 0;
    for (size_t i = 0; i < n; i++) {
        double a = pattern(0, i), b = pattern(1, i), c = pattern(2, i), want;
        double s = t == KEDR_F32 ? (double)0.4f : 0.4;
        switch (op) {
        case KEDR_PROBE_COPY: want = a; break;
        case KEDR_PROBE_SCALE: want = s * c; break;
        case KEDR_PROBE_ADD: want = a + b; break;
        case KEDR_PROBE_TRIAD: want = b + s * c; break;
        default: want_dot += a * b; continue;
        }
        double got = t == KEDR_F32 ? ((float *)h)[i] : ((double *)h)[i];
        bad += fabs(got - want) > 1e-6 * fabs(want);
    }
    free(h);
    if (bad || (op == KEDR_PROBE_DOT && fabs(dot - want_dot) > 1e-9 * want_dot)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s %s gave a wrong result (%zu elements; dot %.17g against "
                 "%.17g): not timed", kedr_probe_stream_name(op), kedr_dtype_name(t), bad, dot,
                 want_dot);
        return fail(msg);
    }
    return 0;
}

static int limit_study(kedr_ctx *ctx, const probe_opts *o, probe_table *tab, double out[2][3])
{
    size_t n = o->n_set ? o->n : (size_t)8 << 20, bytes = n * sizeof(float);
    float *h = host_alloc(bytes), *a = dev_alloc(ctx, bytes), *b = dev_alloc(ctx, bytes);
    for (size_t i = 0; i < n; i++)
        h[i] = (float)(i % 1000) * 0.003f - 1.5f;
    int rc = kedr_upload(ctx, b, h, bytes) == KEDR_OK ? 0 : fail_status();
    for (int fast = 0; fast < 2 && rc == 0; fast++)
        for (int k = KEDR_PROBE_BASE; k <= KEDR_PROBE_MATH && rc == 0; k++) {
            call_args c = {.ctx = ctx, .what = CALL_LIMIT, .op = k, .fast = fast, .n = n, .a = a,
                           .b = b};
            /* Checked first: base must give the sine, memory the copy, math nothing. */
            if (kedr_memset(ctx, a, 0, bytes) != KEDR_OK || call_once(&c) != KEDR_OK)
                return fail_status();
            float *got = host_alloc(bytes);
            if (kedr_download(ctx, got, a, bytes) != KEDR_OK)
                return fail_status();
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                double want = k == KEDR_PROBE_BASE ? sin(h[i]) : k == KEDR_PROBE_MEMORY ? h[i] : 0;
                bad += fabs(got[i] - want) > 2e-6;
            }
            free(got);
            if (bad)
                return fail("a limiting-factor kernel gave a wrong result: not timed");
            double sec;
            if ((rc = time_call(&c, o->repeats, &sec)) != 0)
                break;
            char name[48];
            snprintf(name, sizeof name, "%s%s", kedr_probe_limit_name(k), fast ? " (fast math)" : "");
            add_row(tab, name, "limit", (double)n, sec, k == KEDR_PROBE_MATH ? 0 : 2.0 * bytes,
                    limit_seed[fast][k]);
            out[fast][k] = sec;
        }
    free(h);
    kedr_free(ctx, a);
    kedr_free(ctx, b);
    return rc;
}

/* The book's reading of the three times: overlap of math and memory, and which bounds the base. */
static void explain_limit(const double t[3], const char *label)
{
    double base = t[0], mem = t[1], math = t[2];
    const char *verdict = base < 1.1 * mem ? "memory-bound (base ~ memory: the math is hidden)"
                          : base < 1.1 * math ? "math-bound (base ~ math)"
                          : mem + math > base ? "bound by memory and math together"
                                              : "latency-bound (little overlap of math and memory)";
    printf("  %s: memory %.0f%%, math %.0f%% of base: %s\n", label, 100 * mem / base,
           100 * math / base, verdict);
}

/* The fastest copy kedr has, to set beside the anchors' best (BabelStream's kernel, nvbandwidth's
 * copy-engine memcpy): the copy kernel of 1024-thread blocks with 1, 2 and 4 loads a thread in
 * flight, and kedr_copy (cudaMemcpyAsync on a GPU: the copy engine). Each is checked, then timed:
 * median and best of the repeats. */
static int best_copies(kedr_ctx *ctx, const probe_opts *o, size_t n, probe_table *tab)
{
    size_t bytes = n * sizeof(double);
    double *h = host_alloc(bytes), *got = host_alloc(bytes);
    for (size_t i = 0; i < n; i++)
        h[i] = (double)i * 0.25;
    double *in = dev_alloc(ctx, bytes), *out = dev_alloc(ctx, bytes);
    int rc = kedr_upload(ctx, in, h, bytes) == KEDR_OK ? 0 : fail_status();
    printf("\nthe fastest copies, f64, n = %zu (bytes read + written; median and best of %d)\n", n,
           o->repeats);
    for (int v = 0; v < 4 && rc == 0; v++) {
        kedr_probe_launch l = {1024, v < 3 ? 1 << v : 1, 0};
        call_args c = {.ctx = ctx, .what = CALL_COPY, .t = KEDR_F64, .n = n, .a = in, .b = out,
                       .launch = l};
        bench_copy_args e = {ctx, out, in, bytes};
        kedr_status (*call)(void *) = v < 3 ? call_once : bench_copy_once;
        void *arg = v < 3 ? (void *)&c : (void *)&e;
        if (kedr_memset(ctx, out, 0, bytes) != KEDR_OK || call(arg) != KEDR_OK ||
            kedr_download(ctx, got, out, bytes) != KEDR_OK) {
            rc = fail_status();
            break;
        }
        if (memcmp(got, h, bytes) != 0) {
            rc = fail("a copy gave a wrong result: not timed");
            break;
        }
        double sec, best;
        if (bench_time_best(ctx, call, arg, o->repeats, &sec, &best) != KEDR_OK) {
            rc = fail_status();
            break;
        }
        char name[48];
        if (v < 3)
            snprintf(name, sizeof name, "copy f64, 1024 threads, ILP %d", l.ilp);
        else
            snprintf(name, sizeof name, "copy f64, kedr_copy");
        probe_row *r = add_row(tab, name, "f64-copies", (double)n, sec, 2.0 * bytes,
                               v < 3 ? "" : "cudaMemcpyAsync on a GPU: the copy engine");
        print_row(r);
        printf("      best %.1f GB/s\n", 2.0 * bytes / best / 1e9);
    }
    free(h);
    free(got);
    kedr_free(ctx, in);
    kedr_free(ctx, out);
    return rc;
}

static int cmd_bandwidth(kedr_ctx *ctx, probe_opts *o)
{
    size_t n = o->n_set ? o->n : (size_t)1 << 25;
    int types = o->types ? o->types : 2;
    probe_table tab = {NULL, 0, 0, "elements", NULL};
    print_title(ctx, "bandwidth");
    printf("\nthe STREAM set (BabelStream's kernels), n = %zu; the copy is Ruetsch & Fatica's "
           "table 2.1 kernel\n", n);
    print_header(&tab);
    int rc = 0;
    double copy_best = 0;
    /* the shortest of the repeats too: BabelStream and STREAM report their best time */
    char best_line[512] = "";
    size_t best_len = 0;
    for (int ti = 0; ti < 2 && rc == 0; ti++) {
        if (!(types & (1 << ti)))
            continue;
        kedr_dtype t = ti ? KEDR_F64 : KEDR_F32;
        size_t bytes = n * kedr_dtype_size(t);
        void *d[3];
        for (int k = 0; k < 3; k++)
            d[k] = dev_alloc(ctx, bytes);
        for (int op = KEDR_PROBE_COPY; op <= KEDR_PROBE_DOT && rc == 0; op++) {
            if ((rc = check_stream(ctx, t, op, n, d)) != 0)
                break;
            call_args c = {.ctx = ctx, .what = CALL_STREAM, .t = t, .op = op, .n = n, .a = d[0],
                           .b = d[1], .c = d[2]};
            double sec, best;
            if (bench_time_best(ctx, call_once, &c, o->repeats, &sec, &best) != KEDR_OK) {
                rc = fail_status();
                break;
            }
            char name[48];
            snprintf(name, sizeof name, "%s %s", kedr_probe_stream_name(op), kedr_dtype_name(t));
            if (best_len < sizeof best_line)
                best_len += (size_t)snprintf(best_line + best_len, sizeof best_line - best_len,
                                             "%s %s %.0f", best_len ? "," : "", name,
                                             (double)kedr_probe_stream_arrays(op) * bytes / best / 1e9);
            probe_row *r = add_row(&tab, name, kedr_dtype_name(t), (double)n, sec,
                                   (double)kedr_probe_stream_arrays(op) * bytes,
                                   op == KEDR_PROBE_COPY ? "best copy: C870 65, C1060 78, C2050 "
                                                           "119 (ECC on 107), K20 164 (145) GB/s"
                                                         : "");
            print_row(r);
            if (op == KEDR_PROBE_COPY && r->gbps > copy_best)
                copy_best = r->gbps;
        }
        for (int k = 0; k < 3; k++)
            kedr_free(ctx, d[k]);
    }
    if (rc)
        return rc;
    printf("  best of %d (the figure BabelStream prints), GB/s:%s\n", o->repeats, best_line);
    if (types & 2)
        rc = best_copies(ctx, o, n, &tab);
    if (rc)
        return rc;
    double peak = nominal_peak(ctx);
    if (peak > 0) {
        printf("  of the nominal %.0f GB/s:", peak);
        for (int i = 0; i < tab.n; i++)
            printf(" %s %.0f%%%s", tab.rows[i].name, 100 * tab.rows[i].gbps / peak,
                   i + 1 < tab.n ? "," : "\n");
        printf("  copy reaches %.0f%%: these kernels are bound by the memory bandwidth\n",
               100 * copy_best / peak);
    }
    printf("\nthe limiting-factor study (sec. 2.2): a[i] = sin(b[i]), n = %zu floats%s\n",
           o->n_set ? o->n : (size_t)8 << 20,
           kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA
               ? ""
               : " (the cpu has one sine: fast math is the same)");
    print_header(&tab);
    double t[2][3] = {{0}};
    int first = tab.n;
    if ((rc = limit_study(ctx, o, &tab, t)) != 0)
        return rc;
    for (int i = first; i < tab.n; i++)
        print_row(&tab.rows[i]);
    explain_limit(t[0], "sinf");
    explain_limit(t[1], "fast math");
    rc = write_json(o, ctx, &tab);
    free(tab.rows);
    return rc;
}

/* ---- offset and stride ----------------------------------------------------------------------- */

static int cmd_access(kedr_ctx *ctx, probe_opts *o, int stride)
{
    int gpu = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    size_t n = o->n_set ? o->n : (size_t)(gpu ? 16 : 4) << 20;
    int types = o->types ? o->types : 3;
    probe_table tab = {NULL, 0, 0, stride ? "stride" : "offset", NULL};
    print_title(ctx, stride ? "stride" : "offset");
    printf("\n%s, n = %zu elements, each read and written once\n",
           stride ? "a[i * stride] += 1" : "a[i + offset] += 1", n);
    print_header(&tab);
    int rc = 0;
    for (int ti = 0; ti < 2 && rc == 0; ti++) {
        if (!(types & (1 << ti)))
            continue;
        kedr_dtype t = ti ? KEDR_F64 : KEDR_F32;
        /* The check runs on the first m elements' worth of the array (the whole of it up to
         * 2^20 elements), so that it stays quick at strides of 32 over a large n; the same
         * kernel is then timed over all n. */
        size_t e = kedr_dtype_size(t), len = stride ? (n - 1) * 32 + 1 : n + 32;
        size_t m = n < ((size_t)1 << 20) ? n : (size_t)1 << 20;
        size_t mlen = stride ? (m - 1) * 32 + 1 : m + 32;
        void *a = dev_alloc(ctx, len * e);
        unsigned char *h = host_alloc(mlen * e);
        for (size_t k = stride ? 1 : 0; k <= 32 && rc == 0; k++) {
            call_args c = {.ctx = ctx, .what = stride ? CALL_STRIDE : CALL_OFFSET, .t = t, .n = m,
                           .k = k, .a = a};
            /* Checked first: exactly the m elements addressed became 1. */
            if (kedr_memset(ctx, a, 0, mlen * e) != KEDR_OK || call_once(&c) != KEDR_OK ||
                kedr_download(ctx, h, a, mlen * e) != KEDR_OK) {
                rc = fail_status();
                break;
            }
            size_t bad = 0;
            for (size_t i = 0; i < mlen; i++) {
                double v = t == KEDR_F32 ? ((float *)h)[i] : ((double *)h)[i];
                int hit = stride ? i % k == 0 && i / k < m : i >= k && i < k + m;
                bad += v != hit;
            }
            if (bad) {
                rc = fail("the kernel updated the wrong elements: not timed");
                break;
            }
            c.n = n;
            double sec;
            if ((rc = time_call(&c, o->repeats, &sec)) != 0)
                break;
            char name[48];
            snprintf(name, sizeof name, "%s %zu %s", stride ? "stride" : "offset", k,
                     kedr_dtype_name(t));
            print_row(add_row(&tab, name, kedr_dtype_name(t), (double)k, sec, 2.0 * n * e,
                              k == (stride ? 1 : 0) ? (stride ? "figs. 3.14-3.17 (curves); "
                                                               "C870 ~53 GB/s at stride 1, < 10 "
                                                               "beyond"
                                                             : "figs. 3.6, 3.10 (curves only)")
                                                    : ""));
        }
        free(h);
        kedr_free(ctx, a);
    }
    /* Fig. 3.18: strided reads b[i] = a[i * stride], plain loads against the read-only data
     * (texture) cache; checked on the first m elements, then timed over all n. */
    for (int ti = 0; stride && ti < 2 && rc == 0; ti++) {
        if (!(types & (1 << ti)))
            continue;
        kedr_dtype t = ti ? KEDR_F64 : KEDR_F32;
        size_t e = kedr_dtype_size(t), len = (n - 1) * 32 + 1;
        size_t m = n < ((size_t)1 << 20) ? n : (size_t)1 << 20, mlen = (m - 1) * 32 + 1;
        void *a = dev_alloc(ctx, len * e), *b = dev_alloc(ctx, n * e);
        unsigned char *h = host_alloc(mlen * e), *got = host_alloc(m * e);
        for (size_t i = 0; i < mlen; i++) { /* a[j] = j mod 2^20 + 1/2: exact in f32 */
            double v = (double)(i & 0xfffff) + 0.5;
            if (t == KEDR_F32)
                ((float *)h)[i] = (float)v;
            else
                ((double *)h)[i] = v;
        }
        for (int ro = 0; ro < (gpu ? 2 : 1) && rc == 0; ro++) /* the cpu has one load path */
            for (size_t k = 1; k <= 32 && rc == 0; k++) {
                call_args c = {.ctx = ctx, .what = CALL_STRIDE_READ, .t = t, .n = m, .k = k,
                               .op = ro, .a = a, .b = b};
                if (kedr_upload(ctx, a, h, mlen * e) != KEDR_OK ||
                    kedr_memset(ctx, b, 0xA5, m * e) != KEDR_OK || call_once(&c) != KEDR_OK) {
                    rc = fail_status();
                    break;
                }
                size_t bad = 0;
                if (kedr_download(ctx, got, b, m * e) != KEDR_OK) {
                    rc = fail_status();
                    break;
                }
                for (size_t i = 0; i < m; i++) {
                    double v = t == KEDR_F32 ? ((float *)got)[i] : ((double *)got)[i];
                    bad += v != (double)((i * k) & 0xfffff) + 0.5;
                }
                if (bad) {
                    rc = fail("the strided read returned wrong elements: not timed");
                    break;
                }
                c.n = n;
                double sec;
                if ((rc = time_call(&c, o->repeats, &sec)) != 0)
                    break;
                char name[48], series[24];
                snprintf(series, sizeof series, "%s-%s", kedr_dtype_name(t),
                         ro ? "read-ldg" : "read");
                snprintf(name, sizeof name, "read %zu %s%s", k, kedr_dtype_name(t),
                         ro ? " ldg" : "");
                print_row(add_row(&tab, name, series, (double)k, sec, 2.0 * n * e,
                                  k == 1 ? (ro ? "fig. 3.18: the texture path (curve only)"
                                               : "fig. 3.18's plain-load curve")
                                         : ""));
            }
        free(h);
        free(got);
        kedr_free(ctx, a);
        kedr_free(ctx, b);
    }
    if (rc)
        return rc;
    if (gpu)
        printf("  %s\n", stride ? "each stride multiplies the 32-byte sectors fetched per useful "
                                  "element until every thread of a warp has its own sector: "
                                  "bound by the sector traffic, not the bandwidth; the reads "
                                  "through the read-only (texture) cache fetch the same "
                                  "sectors, so they track the plain loads, where a C2050's "
                                  "texture cache gained at small strides"
                                : "a misaligned warp touches one more 32-byte sector: with caches "
                                  "the cost is small; bound by the memory bandwidth");
    else
        printf("  %s\n", stride ? "each stride multiplies the 64-byte cache lines moved per useful "
                                  "element until every element has a line of its own (stride 16 "
                                  "in f32, 8 in f64)"
                                : "misaligned vectors cost little on the cpu: bound by the memory "
                                  "bandwidth");
    rc = write_json(o, ctx, &tab);
    if (rc == 0)
        rc = write_plots(o, &tab, stride ? "strided access" : "misaligned access",
                         stride ? "stride (elements)" : "offset (elements)");
    free(tab.rows);
    return rc;
}

/* ---- transpose ------------------------------------------------------------------------------- */

/* Ruetsch & Fatica, sec. 3.4, 1024 x 1024 floats, ECC on (GB/s): C870, C1060, C2050, K10, K20. */
static const char *transpose_seed[KEDR_PROBE_T_COUNT] = {
    "",
    "C870 61.2, C1060 71.3, C2050 101.4, K10 118.8, K20 149.6",
    "C870 3.9, C1060 3.2, C2050 18.5, K10 6.5, K20 54.6",
    "C870 36.6, C1060 23.6, C2050 51.6, K10 65.8, K20 90.4",
    "C870 45.6, C1060 23.6, C2050 96.1, K10 94.0, K20 137.6",
    "C870 44.2, C1060 64.3, C2050 90.3, K10 110.4, K20 128.7"};

/* Parses a comma-separated list of counts into v (at most max); exits 2 on a bad one. */
static int parse_list(const char *text, const char *option, size_t *v, int max)
{
    int n = 0;
    for (const char *p = text;; p++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char tok[64];
        if (len == 0 || len >= sizeof tok)
            cli_usage_error(cmdname, "%s '%s': expected a comma-separated list of sizes such as "
                            "1024,4096", option, text);
        if (n == max)
            cli_usage_error(cmdname, "%s %s: at most %d values", option, text, max);
        memcpy(tok, p, len);
        tok[len] = 0;
        v[n++] = cli_size(tok, option, cmdname);
        if (!end)
            break;
        p = end;
    }
    return n;
}

static int cmd_transpose(kedr_ctx *ctx, probe_opts *o)
{
    size_t sizes[8];
    int ns = parse_list(o->sizes ? o->sizes : "1024,4096", "--sizes", sizes, 8);
    for (int s = 0; s < ns; s++)
        if (sizes[s] > 65536)
            cli_usage_error(cmdname, "--sizes: %zu: expected N up to 65536 (an N x N matrix)",
                            sizes[s]);
    probe_table tab = {NULL, 0, 0, "N", NULL};
    print_title(ctx, "transpose");
    printf("\nN x N floats, 32 x 32 tiles, blocks of 32 x 8 threads; bandwidth = 2 N^2 x 4 bytes "
           "/ time\n");
    print_header(&tab);
    int rc = 0;
    for (int s = 0; s < ns && rc == 0; s++) {
        size_t N = sizes[s], n = N * N, bytes = n * sizeof(float);
        float *h = host_alloc(bytes), *got = host_alloc(bytes);
        for (size_t i = 0; i < n; i++)
            h[i] = (float)(i % 16777216);
        float *in = dev_alloc(ctx, bytes), *out = dev_alloc(ctx, bytes);
        if (kedr_upload(ctx, in, h, bytes) != KEDR_OK)
            rc = fail_status();
        for (int k = 0; k < KEDR_PROBE_T_COUNT && rc == 0; k++) {
            call_args c = {.ctx = ctx, .what = CALL_TRANSPOSE, .op = k, .n = N, .m = N, .a = in,
                           .b = out};
            if (kedr_memset(ctx, out, 0xff, bytes) != KEDR_OK || call_once(&c) != KEDR_OK ||
                kedr_download(ctx, got, out, bytes) != KEDR_OK) {
                rc = fail_status();
                break;
            }
            int copy = k <= KEDR_PROBE_T_COPY_SHARED;
            size_t bad = 0;
            for (size_t r = 0; r < N; r++)
                for (size_t q = 0; q < N; q++)
                    bad += (copy ? got[r * N + q] : got[q * N + r]) != h[r * N + q];
            if (bad) {
                rc = fail("a transpose variant gave a wrong matrix: not timed");
                break;
            }
            double sec;
            if ((rc = time_call(&c, o->repeats, &sec)) != 0)
                break;
            print_row(add_row(&tab, kedr_probe_transpose_name(k), "transpose", (double)N, sec,
                              2.0 * bytes, N == 1024 ? transpose_seed[k] : ""));
        }
        free(h);
        free(got);
        kedr_free(ctx, in);
        kedr_free(ctx, out);
    }
    if (rc)
        return rc;
    printf("  the copies bound the transposes; naive pays for writes a row apart, coalesced for "
           "32-way bank conflicts in the tile\n  (none on the cpu); a 1024^2 matrix (4 MB) fits "
           "in an H100's 50 MB L2, so its figures are L2's, not HBM's\n");
    rc = write_json(o, ctx, &tab);
    free(tab.rows);
    return rc;
}

/* ---- the GPU-only measurements --------------------------------------------------------------- */

/* Why the cuda back end cannot run here, or NULL when it can. */
static const char *no_gpu_reason(void)
{
#ifdef KEDR_HAVE_CUDA
    return kedr_backend_available(KEDR_BACKEND_CUDA) ? NULL : "no GPU is visible";
#else
    return "this build has no cuda back end (the CUDA toolkit was not found)";
#endif
}

/* Exit status 3 with what is missing, for a GPU measurement that cannot run here. */
static int unavailable(const char *sub, const char *why)
{
    fprintf(stderr, "kedr probe %s: measures a GPU, and %s; on the cpu, run kedr probe bandwidth, "
            "offset, stride or transpose\n", sub, why);
    return PROBE_EXIT_UNAVAILABLE;
}

static int cmd_transfer(kedr_ctx *ctx, probe_opts *o)
{
    size_t max = (size_t)1 << 30;
    if (o->sizes)
        parse_list(o->sizes, "--sizes", &max, 1);
    if (max < 4096)
        cli_usage_error(cmdname, "--sizes %zu: expected a largest transfer of at least 4k", max);
    probe_table tab = {NULL, 0, 0, "bytes", NULL};
    print_title(ctx, "transfer");
    printf("\nhost <-> device cudaMemcpy, 4 kB to %zu bytes, pageable (malloc) and pinned\n", max);
    print_header(&tab);
    for (size_t bytes = 4096; bytes <= max; bytes *= 4) {
        for (int pinned = 0; pinned < 2; pinned++) {
            double h2d, d2h;
            if (kedr_probe_transfer(ctx, bytes, pinned, o->repeats, &h2d, &d2h) != KEDR_OK)
                return fail_status();
            const char *kind = pinned ? "pinned" : "pageable";
            char name[48], series[24], seed[112] = "";
            int at16 = bytes == 16u << 20;
            snprintf(name, sizeof name, "%s host to device", kind);
            snprintf(series, sizeof series, "%s-h2d", kind);
            if (at16)
                snprintf(seed, sizeof seed, "16 MB, K20: %s", pinned ? "5.75 (E5540), 6.21 (E5-2667)"
                                                                    : "1.66 (E5540), 3.25 (E5-2667)");
            print_row(add_row(&tab, name, series, (double)bytes, h2d, (double)bytes, seed));
            snprintf(name, sizeof name, "%s device to host", kind);
            snprintf(series, sizeof series, "%s-d2h", kind);
            if (at16)
                snprintf(seed, sizeof seed, "16 MB, K20: %s", pinned ? "6.57 (E5540), 6.61 (E5-2667)"
                                                                    : "1.59 (E5540), 3.30 (E5-2667)");
            print_row(add_row(&tab, name, series, (double)bytes, d2h, (double)bytes, seed));
        }
        if (bytes > max / 4)
            break;
    }
    printf("  small copies are bound by the latency of a call (microseconds), large ones by the "
           "link (PCIe 5 x16: 64 GB/s a direction nominal);\n  pageable copies also by the host's "
           "copy into a pinned staging buffer\n");
    int rc = write_json(o, ctx, &tab);
    if (rc == 0)
        rc = write_plots(o, &tab, "host-device transfers", "log2 of the size in bytes");
    free(tab.rows);
    return rc;
}

static int cmd_overlap(kedr_ctx *ctx, probe_opts *o)
{
    const int streams = 4;
    size_t n = o->n_set ? o->n : 4194304;
    if (n % (256 * streams))
        cli_usage_error(cmdname, "--n %zu: expected a multiple of 1024 (256 threads x 4 streams)",
                        n);
    kedr_probe_overlap_result r;
    print_title(ctx, "overlap");
    if (kedr_probe_overlap(ctx, n, streams, o->repeats, &r) != KEDR_OK)
        return fail_status();
    probe_table tab = {NULL, 0, 0, "elements", NULL};
    static const char *seed[KEDR_PROBE_OVERLAP_COUNT] = {
        "C1060 12.92, C2050 9.98, K20 7.96 ms", "C1060 13.64, C2050 5.74, K20 5.61 ms",
        "C1060 8.85, C2050 7.60, K20 5.65 ms", "C1060 9.00, C2050 5.74, K20 5.51 ms"};
    printf("\nn = %zu floats over %d streams; pinned host memory; %d copy engine%s\n", n, streams,
           r.copy_engines, r.copy_engines == 1 ? "" : "s");
    printf("stages of the whole array alone: copy in %.3f ms, kernel %.3f ms, copy out %.3f ms\n",
           1e3 * r.h2d, 1e3 * r.kernel, 1e3 * r.d2h);
    printf("  %-30s %12s %14s %14s   %s\n", "version", "n", "time", "model", "Ruetsch & Fatica");
    for (int v = 0; v < KEDR_PROBE_OVERLAP_COUNT; v++) {
        double model = kedr_probe_overlap_model(v, streams, r.copy_engines > 1 ? 2 : 1, 0, r.h2d,
                                                r.kernel, r.d2h);
        probe_row *row = add_row(&tab, kedr_probe_overlap_name(v), "overlap", (double)n,
                                 r.seconds[v], 2.0 * n * sizeof(float), seed[v]);
        printf("  %-30s %12zu %11.4f ms %11.4f ms   %s  (max error %.1e)\n", row->name, n,
               1e3 * row->seconds, 1e3 * model, seed[v], r.max_error[v]);
        char name[48];
        snprintf(name, sizeof name, "%s, model", kedr_probe_overlap_name(v));
        add_row(&tab, name, "model", (double)n, model, 2.0 * n * sizeof(float), "");
    }
    static const char *stage[3] = {"copy in alone", "kernel alone", "copy out alone"};
    double stage_s[3] = {r.h2d, r.kernel, r.d2h};
    for (int k = 0; k < 3; k++)
        add_row(&tab, stage[k], "stage", (double)n, stage_s[k], k == 1 ? 0 : 4.0 * n, "");
    double longest = fmax(r.h2d, fmax(r.kernel, r.d2h));
    printf("  the pipeline is bound by its longest stage (%s, %.3f ms): with independent queues "
           "per stream (Hyper-Q) and one copy engine each way, every order overlaps alike\n",
           longest == r.kernel ? "the kernel" : longest == r.h2d ? "copy in" : "copy out",
           1e3 * longest);
    int rc = write_json(o, ctx, &tab);
    free(tab.rows);
    return rc;
}

/* Ruetsch & Fatica, sec. 3.5, Tesla K20, double precision (occupancy, GB/s). */
static const char *occ_seed[6][3] = {
    {"K20 0.25 96; C2050 0.167 55", "K20 0.016 8", "K20 26"},
    {"K20 0.5 125; C2050 0.333 82", "K20 0.031 15", "K20 50"},
    {"K20 1.0 136; C2050 0.667 103", "K20 0.063 29", "K20 90"},
    {"K20 1.0 137; C2050 1.0 102", "K20 0.125 53", "K20 125"},
    {"K20 1.0 137; C2050 1.0 103", "K20 0.25 91", "K20 140"},
    {"K20 1.0 133; C2050 0.667 98", "K20 0.5 123", "K20 139"}};

static int cmd_occupancy(kedr_ctx *ctx, probe_opts *o)
{
    size_t n = o->n_set ? o->n : (size_t)1 << 25, bytes = n * sizeof(double);
    print_title(ctx, "occupancy");
    printf("\ncopy of n = %zu doubles; 'one block/SM' asks for most of an SM's shared memory\n", n);
    double *h = host_alloc(bytes), *got = host_alloc(bytes);
    for (size_t i = 0; i < n; i++)
        h[i] = (double)i * 0.5;
    double *in = dev_alloc(ctx, bytes), *out = dev_alloc(ctx, bytes);
    int rc = kedr_upload(ctx, in, h, bytes) == KEDR_OK ? 0 : fail_status();
    probe_table tab = {NULL, 0, 0, "threads", NULL};
    printf("  %-30s %12s %10s %14s   %s\n", "launch", "threads", "occupancy", "bandwidth",
           "Ruetsch & Fatica: occupancy, GB/s");
    static const char *label[3] = {"all blocks", "one block/SM", "one block/SM, ILP 4"};
    for (int cfg = 0; cfg < 3 && rc == 0; cfg++)
        for (int ti = 0; ti < 6 && rc == 0; ti++) {
            kedr_probe_launch l = {32 << ti, cfg == 2 ? 4 : 1, cfg > 0};
            double occ = 0;
            size_t shared = 0;
            call_args c = {.ctx = ctx, .what = CALL_COPY, .t = KEDR_F64, .n = n, .a = in, .b = out,
                           .launch = l};
            if (kedr_probe_occupancy(ctx, KEDR_F64, &l, &occ, &shared) != KEDR_OK ||
                kedr_memset(ctx, out, 0, bytes) != KEDR_OK || call_once(&c) != KEDR_OK ||
                kedr_download(ctx, got, out, bytes) != KEDR_OK) {
                rc = fail_status();
                break;
            }
            if (memcmp(got, h, bytes) != 0) {
                rc = fail("the copy kernel gave a wrong result: not timed");
                break;
            }
            double sec;
            if ((rc = time_call(&c, o->repeats, &sec)) != 0)
                break;
            probe_row *r = add_row(&tab, label[cfg], label[cfg], (double)l.threads, sec,
                                   2.0 * bytes, occ_seed[ti][cfg]);
            printf("  %-30s %12d %10.3f %9.1f GB/s   %s\n", r->name, l.threads, occ, r->gbps,
                   r->seed);
        }
    free(h);
    free(got);
    kedr_free(ctx, in);
    kedr_free(ctx, out);
    if (rc == 0) {
        printf("  a copy is bound by the memory bandwidth once enough loads are in flight: low "
               "occupancy starves it, ILP puts more loads in flight per thread\n");
        rc = write_json(o, ctx, &tab);
    }
    free(tab.rows);
    return rc;
}

static int cmd_p2p(kedr_ctx *ctx, probe_opts *o)
{
    int count = kedr_device_count();
    print_title(ctx, "p2p");
    if (count < 2) {
        fprintf(stderr, "kedr probe p2p: peer copies need two GPUs; this machine has %d\n", count);
        return PROBE_EXIT_UNAVAILABLE;
    }
    size_t bytes = o->n_set ? o->n : (size_t)16 << 20;
    probe_table tab = {NULL, 0, 0, "bytes", NULL};
    printf("\ncudaMemcpyPeer of %zu bytes; rows send, columns receive (GB/s); peer access on "
           "where the pair supports it\n", bytes);
    printf("Ruetsch & Fatica: M2050 pair 5.30 (3.48 without P2P); two K10 boards 11.6-11.7 within "
           "a board, 9.5-9.9 across; S2050 6.61 / 5.25\n\nS\\R ");
    for (int j = 0; j < count; j++)
        printf(" %8d", j);
    printf("\n");
    for (int i = 0; i < count; i++) {
        printf("%3d ", i);
        for (int j = 0; j < count; j++) {
            if (i == j) {
                printf(" %8s", "-");
                continue;
            }
            double sec = 0;
            if (kedr_probe_peer_copy(i, j, bytes, 1, o->repeats, &sec) != KEDR_OK)
                return fail_status();
            char name[48];
            snprintf(name, sizeof name, "%d -> %d", i, j);
            printf(" %8.1f", add_row(&tab, name, "peer", (double)bytes, sec, (double)bytes, "")->gbps);
        }
        printf("\n");
    }
    double sec = 0;
    if (kedr_probe_peer_copy(0, 1, bytes, 0, o->repeats, &sec) != KEDR_OK)
        return fail_status();
    printf("0 -> 1 with peer access off (staged through the host): %.1f GB/s\n",
           add_row(&tab, "0 -> 1 without P2P", "staged", (double)bytes, sec, (double)bytes,
                   "M2050 3.48, K10 8.25 GB/s")->gbps);
    printf("  peer copies are bound by the link between the GPUs (NVLink on an H100 SXM board, "
           "PCIe otherwise)\n");
    int rc = write_json(o, ctx, &tab);
    free(tab.rows);
    return rc;
}

/* ---- the distributed transpose ------------------------------------------------------------ */

/* Under mpirun (one GPU a rank): each method of kedr_probe_dist_transpose; rank 0 prints. */
static int cmd_mpi_transpose(kedr_ctx *ctx, kedr_comm *comm, probe_opts *o)
{
    int size = kedr_comm_size(comm);
    size_t n = o->n_set ? o->n : 2048;
    probe_table tab = {NULL, 0, 0, "n", NULL};
    print_title(ctx, "mpi-transpose");
    printf("\n%zu x %zu floats over %d rank%s (%d on this host); effective bandwidth 2 n^2 x 4 "
           "bytes / time\nRuetsch & Fatica, 2048 x 2048 on two M2050: peer copies 16.43 (29.73 "
           "asynchronous, one host thread), MPI host-staged 7.37, CUDA-aware MVAPICH 18.06 GB/s\n\n",
           n, n, size, size > 1 ? "s" : "", kedr_comm_local_size(comm));
    static const char *seed[KEDR_PROBE_DIST_COUNT] = {"2 x M2050 7.37 GB/s",
                                                      "2 x M2050 18.06 GB/s (MVAPICH)",
                                                      "2 x M2050 16.43 / 29.73 GB/s (async)"};
    for (int m = 0; m < KEDR_PROBE_DIST_COUNT; m++) {
        double sec = 0;
        kedr_status s = kedr_probe_dist_transpose(ctx, comm, (kedr_probe_dist_method)m, n,
                                                  o->repeats, &sec);
        const char *name = kedr_probe_dist_name((kedr_probe_dist_method)m);
        if (s == KEDR_ERR_UNSUPPORTED) {
            printf("%-20s not here: %s\n", name, kedr_last_error());
            continue;
        }
        if (s != KEDR_OK)
            return fail_status();
        double bytes = 2.0 * (double)n * (double)n * sizeof(float);
        printf("%-20s %10.3f ms %10.1f GB/s\n", name, 1e3 * sec,
               add_row(&tab, name, "dist", (double)n, sec, bytes, seed[m])->gbps);
    }
    printf("  host-staged: bound by the copies to and from the host and the MPI library's "
           "shared memory; peer copies by the link between the GPUs (NVLink or PCIe)\n");
    /* rank 0 writes the file (every rank has the same table: the times are the slowest
     * rank's); two ranks renaming one temporary file would race */
    int rc = kedr_comm_rank(comm) == 0 ? write_json(o, ctx, &tab) : 0;
    free(tab.rows);
    return rc;
}

/* ---- the textbook's variants ----------------------------------------------------------------- */

/* Boreskov et al. (2012): table 5.1 (8M ints, Tesla C2070; the cpu a Xeon E5620), table 5.2 (16M
 * floats, C2070), tables 3.3 and 3.4 (2048 x 2048 floats, C2070). */
static const char *reduce_seed[5] = {"C2070 5.28 ms", "C2070 2.52 ms", "C2070 1.88 ms",
                                     "C2070 0.99 ms", "C2070 0.65 ms"};
static const char *matmul_seed[KEDR_PROBE_MM_COUNT] = {
    "2048: C2070 324.63 ms", "2048: C2070 93.26 ms (CUBLAS 30.84)",
    "2048: C2070 596.60 ms", "2048: C2070 92.50 ms (CUBLAS 30.77)"};

/* CUB beside the seed's variants and kedr's primitive on a GPU; NULL on the cpu. */
static struct cub_ref *textbook_cub(kedr_ctx *ctx, int *rc)
{
    struct cub_ref *cub = NULL;
#ifdef KEDR_HAVE_CUDA
    if (*rc == 0 && kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA && cub_ref_create(ctx, &cub) != KEDR_OK)
        *rc = fail_status();
#else
    (void)ctx;
    (void)rc;
#endif
    return cub;
}

static void textbook_cub_free(struct cub_ref *cub)
{
#ifdef KEDR_HAVE_CUDA
    cub_ref_destroy(cub);
#else
    (void)cub;
#endif
}

static int textbook_reduce(kedr_ctx *ctx, const probe_opts *o, probe_table *tab)
{
    size_t n = o->n_set ? o->n : (size_t)8 << 20, bytes = n * sizeof(int32_t);
    int32_t *h = host_alloc(bytes), *d = dev_alloc(ctx, bytes);
    uint32_t want = 0;
    for (size_t i = 0; i < n; i++) {
        h[i] = (int32_t)((i * 2654435761u) >> 25); /* 0..127: the sum of 8M fits in an int */
        want += (uint32_t)h[i];
    }
    int rc = kedr_upload(ctx, d, h, bytes) == KEDR_OK ? 0 : fail_status();
    printf("\nsum of n = %zu ints (table 5.1: 8M ints)\n", n);
    print_header(tab);
    struct cub_ref *cub = textbook_cub(ctx, &rc);
    for (int v = 1; v <= (cub ? 7 : 6) && rc == 0; v++) {
        call_args c = {.ctx = ctx,
                       .what = v <= 5 ? CALL_REDUCE : v == 6 ? CALL_KEDR_REDUCE : CALL_CUB_REDUCE,
                       .op = v, .n = n, .a = d, .cub = cub};
        if (call_once(&c) != KEDR_OK) {
            rc = fail_status();
            break;
        }
        if ((uint32_t)c.isum != want) {
            rc = fail("a reduction gave a wrong sum: not timed");
            break;
        }
        double sec;
        if ((rc = time_call(&c, o->repeats, &sec)) != 0)
            break;
        char name[48];
        snprintf(name, sizeof name, v <= 5 ? "reduce%d" : v == 6 ? "kedr_reduce" : "CUB DeviceReduce",
                 v);
        print_row(add_row(tab, name, "reduce", (double)n, sec, (double)bytes,
                          v <= 5   ? reduce_seed[v - 1]
                          : v == 6 ? "Xeon E5620: serial 6.92 ms, OpenMP 2.34 ms"
                                   : "the CUDA toolkit's CUB"));
    }
    textbook_cub_free(cub);
    free(h);
    kedr_free(ctx, d);
    return rc;
}

static int textbook_scan(kedr_ctx *ctx, const probe_opts *o, probe_table *tab)
{
    size_t n = o->n_set ? o->n : (size_t)16 << 20, bytes = n * sizeof(float);
    float *h = host_alloc(bytes), *got = host_alloc(bytes);
    double *ref = host_alloc(n * sizeof(double)), s = 0;
    for (size_t i = 0; i < n; i++) {
        h[i] = (float)(i % 1000) / 1000;
        ref[i] = s;
        s += h[i];
    }
    float *in = dev_alloc(ctx, bytes), *out = dev_alloc(ctx, bytes);
    int rc = kedr_upload(ctx, in, h, bytes) == KEDR_OK ? 0 : fail_status();
    printf("\nexclusive prefix sum of n = %zu floats (table 5.2: 16M floats)\n", n);
    print_header(tab);
    struct cub_ref *cub = textbook_cub(ctx, &rc);
    for (int v = 1; v <= (cub ? 4 : 3) && rc == 0; v++) {
        call_args c = {.ctx = ctx,
                       .what = v <= 2 ? CALL_SCAN : v == 3 ? CALL_KEDR_SCAN : CALL_CUB_SCAN,
                       .op = v, .n = n, .a = in, .b = out, .cub = cub};
        if (kedr_memset(ctx, out, 0xff, bytes) != KEDR_OK || call_once(&c) != KEDR_OK ||
            kedr_download(ctx, got, out, bytes) != KEDR_OK) {
            rc = fail_status();
            break;
        }
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += !(fabs(got[i] - ref[i]) <= 1e-5 * ref[i] + 1e-6);
        if (bad) {
            rc = fail("a scan gave wrong prefix sums: not timed");
            break;
        }
        double sec;
        if ((rc = time_call(&c, o->repeats, &sec)) != 0)
            break;
        char name[48];
        snprintf(name, sizeof name,
                 v <= 2 ? "scan%d" : v == 3 ? "kedr_scan_exclusive" : "CUB DeviceScan", v);
        print_row(add_row(tab, name, "scan", (double)n, sec, 2.0 * bytes,
                          v == 1   ? "C2070 11.60 ms"
                          : v == 2 ? "C2070 9.49 ms"
                          : v == 3 ? "CUDPP on C2070 2.87 ms"
                                   : "the CUDA toolkit's CUB"));
    }
    textbook_cub_free(cub);
    free(h);
    free(got);
    free(ref);
    kedr_free(ctx, in);
    kedr_free(ctx, out);
    return rc;
}

static int textbook_matmul(kedr_ctx *ctx, const probe_opts *o, size_t n, probe_table *tab)
{
    size_t nn = n * n, bytes = nn * sizeof(float);
    float *a = host_alloc(bytes), *b = host_alloc(bytes), *c = host_alloc(bytes);
    for (size_t i = 0; i < nn; i++) {
        a[i] = (float)((i * 7919) % 2001) / 1000 - 1;
        b[i] = (float)((i * 104729) % 1999) / 1000 - 1;
    }
    float *da = dev_alloc(ctx, bytes), *db = dev_alloc(ctx, bytes), *dc = dev_alloc(ctx, bytes);
    int rc = kedr_upload(ctx, da, a, bytes) == KEDR_OK && kedr_upload(ctx, db, b, bytes) == KEDR_OK
                 ? 0 : fail_status();
    printf("\nmatrix products of %zu x %zu floats (tables 3.3, 3.4: 2048 x 2048); 2 n^3 flops\n",
           n, n);
    print_header(tab);
    for (int k = 0; k < KEDR_PROBE_MM_COUNT && rc == 0; k++) {
        call_args cl = {.ctx = ctx, .what = CALL_MATMUL, .op = k, .n = n, .a = da, .b = db, .c = dc};
        if (kedr_memset(ctx, dc, 0xff, bytes) != KEDR_OK || call_once(&cl) != KEDR_OK ||
            kedr_download(ctx, c, dc, bytes) != KEDR_OK) {
            rc = fail_status();
            break;
        }
        /* 97 entries checked in double: a full product on the host would take longer than all
         * the timing. */
        int ab = k <= KEDR_PROBE_MM_TILED, bad = 0;
        for (size_t t = 0; t < 97; t++) {
            size_t i = t * 7919 % n, j = t * 104729 % n;
            double s = 0, mag = 0;
            for (size_t q = 0; q < n; q++) {
                double x = a[i * n + q], y = ab ? b[q * n + j] : a[j * n + q];
                s += x * y;
                mag += fabs(x * y);
            }
            bad += !(fabs(c[i * n + j] - s) <= 1.2e-7 * (n + 2) * mag + 1e-30);
        }
        if (bad) {
            rc = fail("a matrix product gave wrong entries: not timed");
            break;
        }
        double sec;
        if ((rc = time_call(&cl, o->repeats, &sec)) != 0)
            break;
        probe_row *r = add_row(tab, kedr_probe_matmul_name(k), "matmul", (double)n, sec,
                               2.0 * nn * n, n == 2048 ? matmul_seed[k] : "");
        r->unit = "GFLOP/s";
        print_row(r);
    }
    free(a);
    free(b);
    free(c);
    kedr_free(ctx, da);
    kedr_free(ctx, db);
    kedr_free(ctx, dc);
    return rc;
}

static int cmd_textbook(kedr_ctx *ctx, probe_opts *o, size_t matrix)
{
    int gpu = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    probe_table tab = {NULL, 0, 0, "n", "Boreskov et al. (2012)"};
    print_title(ctx, "textbook");
    printf("Boreskov et al. (2012), the variants as the book numbers them, each checked, then "
           "timed%s\n", gpu ? "" : "; on the cpu every variant is the same plain loop");
    int rc = textbook_reduce(ctx, o, &tab);
    if (rc == 0)
        rc = textbook_scan(ctx, o, &tab);
    if (rc == 0)
        rc = textbook_matmul(ctx, o, matrix ? matrix : gpu ? 2048 : 512, &tab);
    if (rc == 0) {
        printf("  reduce and scan are bound by memory bandwidth once the tree steps stop wasting "
               "threads and banks;\n  the tiled products by shared-memory traffic (tensor-core "
               "libraries go past both)\n");
        rc = write_json(o, ctx, &tab);
    }
    free(tab.rows);
    return rc;
}

/* ---- dispatch -------------------------------------------------------------------------------- */

int cmd_probe(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : 0;
    }
    static const char *subs[] = {"bandwidth", "offset",    "stride", "transpose", "transfer",
                                 "overlap",   "occupancy", "p2p",    "textbook", "mpi-transpose"};
    int sub = -1;
    for (int k = 0; k < 10; k++)
        if (strcmp(argv[1], subs[k]) == 0)
            sub = k;
    if (sub < 0)
        cli_usage_error("probe", "unknown subcommand '%s': expected bandwidth, offset, stride, "
                        "transpose, transfer, overlap, occupancy, p2p, textbook or mpi-transpose",
                        argv[1]);
    probe_opts o = {{KEDR_BACKEND_AUTO, 0}, argv[1], NULL, NULL, NULL, 0, 0, 0, 10, 0};
    static char full[32];
    snprintf(full, sizeof full, "probe %s", subs[sub]);
    cmdname = full;
    parse(argc, argv, &o);
    if (o.plot && sub != 1 && sub != 2 && sub != 4)
        cli_usage_error(cmdname, "--plot: only offset, stride and transfer have a figure in "
                        "Ruetsch & Fatica to plot");
    if (o.sizes && sub != 3 && sub != 4)
        cli_usage_error(cmdname, "--sizes applies to transpose and transfer");
    if (o.types && sub > 2)
        cli_usage_error(cmdname, "--type applies to bandwidth, offset and stride");
    if (o.plot && kedr_plot_available() != KEDR_OK)
        cli_usage_error(cmdname, "--plot: %s", kedr_last_error());
    if (o.json && kedr_file_check_writable(o.json) != KEDR_OK)
        cli_usage_error(cmdname, "--json: %s", kedr_last_error());
    const char *why = no_gpu_reason();
    if (o.matrix && sub != 8)
        cli_usage_error(cmdname, "--matrix applies to textbook");
    int gpu_only = sub >= 4 && sub <= 7;
    if (gpu_only && o.c.backend == KEDR_BACKEND_CPU)
        return unavailable(subs[sub], "--backend cpu was chosen");
    if (why && (gpu_only || o.c.backend == KEDR_BACKEND_CUDA))
        return unavailable(subs[sub], why);
    if (sub == 9) { /* one rank a GPU: a host's ranks take its GPUs in turn */
        kedr_comm *comm = NULL;
        if (kedr_comm_init(NULL, NULL, &comm) != KEDR_OK)
            return fail_status();
        if (o.c.backend != KEDR_BACKEND_CPU && kedr_device_count() > 0)
            o.c.device = kedr_comm_device(comm, kedr_device_count());
        if (kedr_comm_rank(comm) > 0 && !freopen("/dev/null", "w", stdout))
            return CLI_EXIT_FAIL;
        kedr_ctx *ctx = cli_context(&o.c, cmdname);
        int rc = cmd_mpi_transpose(ctx, comm, &o);
        kedr_ctx_destroy(ctx);
        kedr_comm_finalize(comm);
        return rc;
    }
    kedr_ctx *ctx = cli_context(&o.c, cmdname);
    int rc;
    switch (sub) {
    case 0: rc = cmd_bandwidth(ctx, &o); break;
    case 1: rc = cmd_access(ctx, &o, 0); break;
    case 2: rc = cmd_access(ctx, &o, 1); break;
    case 3: rc = cmd_transpose(ctx, &o); break;
    case 4: rc = cmd_transfer(ctx, &o); break;
    case 5: rc = cmd_overlap(ctx, &o); break;
    case 6: rc = cmd_occupancy(ctx, &o); break;
    case 7: rc = cmd_p2p(ctx, &o); break;
    default: rc = cmd_textbook(ctx, &o, o.matrix); break;
    }
    kedr_ctx_destroy(ctx);
    return rc;
}
