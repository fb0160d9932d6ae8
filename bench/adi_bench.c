/* kedr bench adi: each sweep of the ADI solver (X, Y, and Z directly or through the transposes
 * that make it coalesced), the transposes alone, and whole time steps, in single and double
 * precision, on a box_pipe grid (an inflow face, a free face, four walls), laid out as Table 12.1
 * of Boreskov et al. (2015). A sweep must at least read the old values and the coefficient fields
 * (4 + 4) and write the new ones (4): 12 values a node, against which the copy bandwidth is set. */
#include "adi_bench.h"
#include "bench_util.h"

#include "kedr/adi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_X, T_Y, T_Z, T_ZT, T_TRANS, T_STEP, T_STEP_T, NTIMES };
static const char *const time_names[NTIMES] = {"x", "y", "z", "z_transposed", "transposes",
                                               "step", "step_transposed"};

typedef struct {
    kedr_adi *s;
    int axis, transposed;
} sweep_arg;

static kedr_status sweep_call(void *p)
{
    sweep_arg *a = p;
    return kedr_adi_sweep_once(a->s, a->axis, a->transposed);
}

static kedr_status trans_call(void *p) { return kedr_adi_transposes(((sweep_arg *)p)->s); }
static kedr_status step_call(void *p) { return kedr_adi_step(((sweep_arg *)p)->s); }

static void bench_case(kedr_adi_case *c, int n, int single, int transpose)
{
    kedr_adi_case_default(c);
    strcpy(c->name, "box_pipe");
    c->nx = c->ny = c->nz = n;
    c->h = 1.0 / (n - 1);
    c->dt = 0.01;
    c->single = single;
    c->z_transpose = transpose;
    c->face[KEDR_ADI_X_LO].kind = KEDR_ADI_INFLOW;
    c->face[KEDR_ADI_X_LO].velocity[0] = 1;
    c->face[KEDR_ADI_X_HI].kind = KEDR_ADI_FREE;
}

/* The times of one precision, in seconds. */
static kedr_status run_precision(kedr_ctx *ctx, int n, int single, int repeats, double t[NTIMES])
{
    for (int transpose = 0; transpose < 2; transpose++) {
        kedr_adi_case c;
        bench_case(&c, n, single, transpose);
        sweep_arg a = {NULL, 0, 0};
        KEDR_TRY(kedr_adi_create(ctx, &c, &a.s));
        kedr_status st = kedr_adi_step(a.s); /* a developing flow, not the initial rest */
        if (st == KEDR_OK)
            st = bench_time(ctx, step_call, &a, repeats, &t[transpose ? T_STEP_T : T_STEP]);
        for (int k = 0; k < 3 && st == KEDR_OK && !transpose; k++) {
            a.axis = k;
            st = bench_time(ctx, sweep_call, &a, repeats, &t[T_X + k]);
        }
        if (st == KEDR_OK && transpose) {
            a.axis = 2;
            a.transposed = 1;
            st = bench_time(ctx, sweep_call, &a, repeats, &t[T_ZT]);
            if (st == KEDR_OK)
                st = bench_time(ctx, trans_call, &a, repeats, &t[T_TRANS]);
        }
        kedr_adi_destroy(a.s);
        KEDR_TRY(st);
    }
    return KEDR_OK;
}

kedr_status kedr_bench_adi(kedr_ctx *ctx, const kedr_bench_adi_opts *o)
{
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    int n = o->n > 0 ? o->n : cuda ? 256 : 64, repeats = o->repeats > 0 ? o->repeats : 5;
    double nodes = (double)n * n * n, t[2][NTIMES], gbps = 0;
    char device[256], date[64];
    bench_device_name(ctx, device, sizeof device);
    bench_utc_date(date, sizeof date);
    KEDR_TRY(bench_copy_gbps(ctx, (size_t)nodes * 8, repeats, &gbps));
    printf("kedr bench adi on %s (%s): box_pipe %d^3 nodes, median of %d; copy %.1f GB/s\n",
           device, kedr_backend_name(kedr_ctx_backend(ctx)), n, repeats, gbps);
    /* the sweep path, read by every sweep from the environment (docs/adi.md) */
    const char *path = getenv("KEDR_ADI_SWEEP"), *len = getenv("KEDR_ADI_CHIP_LEN");
    const char *lines = getenv("KEDR_ADI_CHIP_LINES");
    printf("sweep path: KEDR_ADI_SWEEP=%s", path && *path ? path : "thomas (default)");
    if (path && strcmp(path, "chip") == 0)
        printf(", KEDR_ADI_CHIP_LEN=%s, KEDR_ADI_CHIP_LINES=%s", len && *len ? len : "8",
               lines && *lines ? lines : "0 (auto)");
    printf("\n");
    for (int p = 0; p < 2; p++)
        KEDR_TRY(run_precision(ctx, n, p == 0, repeats, t[p]));
    /* Table 12.1: ms per sweep of the four fields (one local iteration). */
    printf("\n%-10s %10s %10s %8s %10s %10s %8s\n", "sweep [ms]", "f32 orig", "f32 transp",
           "speedup", "f64 orig", "f64 transp", "speedup");
    const char *rows[5] = {"X dir", "Y dir", "Z dir", "transpose", "total"};
    for (int r = 0; r < 5; r++) {
        printf("%-10s", rows[r]);
        for (int p = 0; p < 2; p++) {
            double orig = r < 3 ? t[p][T_X + r] : r == 4 ? t[p][T_X] + t[p][T_Y] + t[p][T_Z] : NAN;
            double tr = r < 2 ? t[p][T_X + r] : r == 2 ? t[p][T_ZT] - t[p][T_TRANS]
                        : r == 3 ? t[p][T_TRANS] : t[p][T_X] + t[p][T_Y] + t[p][T_ZT];
            if (isnan(orig))
                printf(" %10s %10.3f %8s", "", 1e3 * tr, "");
            else
                printf(" %10.3f %10.3f %7.2fx", 1e3 * orig, 1e3 * tr, orig / tr);
        }
        printf("\n");
    }
    printf("(Z dir with the transpose: the sweep alone; the transposes there and back are the "
           "'transpose' row)\n\n");
    /* Tables 12.2 and 12.3: tridiagonal systems solved a second (a line's segment for one
     * field is a system; here each line is one segment), the fastest Z variant. */
    double systems = 4.0 * (n - 2) * (n - 2);
    printf("%-10s %14s %14s\n", "direction", "f32 [M sys/s]", "f64 [M sys/s]");
    const char *dirs[4] = {"X", "Y", "Z", "all"};
    for (int r = 0; r < 4; r++) {
        printf("%-10s", dirs[r]);
        for (int p = 0; p < 2; p++) {
            double z = fmin(t[p][T_Z], t[p][T_ZT]);
            double sec = r < 2 ? t[p][T_X + r] : r == 2 ? z : (t[p][T_X] + t[p][T_Y] + z) / 3;
            printf(" %14.3f", systems / sec / 1e6);
        }
        printf("\n");
    }
    printf("\n");
    for (int p = 0; p < 2; p++)
        for (int tr = 0; tr < 2; tr++) {
            double sec = t[p][tr ? T_STEP_T : T_STEP];
            double bytes = 4.0 * 3 * 2 * 12 * nodes * (p == 0 ? 4 : 8); /* 4 global x 3 x 2 local */
            printf("whole step, %s, Z %s: %.3f ms, %.3g node-steps/s, %.1f GB/s = %.0f%% of copy\n",
                   p == 0 ? "f32" : "f64", tr ? "transposed" : "direct", 1e3 * sec, nodes / sec,
                   bytes / sec / 1e9, 100 * bytes / sec / 1e9 / gbps);
        }
    if (!o->json)
        return KEDR_OK;
    kedr_file_writer w;
    bench_meta m = {"adi", device, kedr_backend_name(kedr_ctx_backend(ctx)), date,
                    bench_commit(KEDR_GIT_COMMIT)};
    KEDR_TRY(bench_json_open(&w, o->json, &m));
    FILE *f = KEDR_FILE(&w);
    fprintf(f, ",\n  \"grid\": [%d, %d, %d],\n  \"repeats\": %d,\n  \"copy_gbps\": ", n, n, n,
            repeats);
    bench_json_number(f, gbps, 1);
    int chip = path && strcmp(path, "chip") == 0;
    fprintf(f, ",\n  \"sweep\": \"%s\"", chip ? "chip" : "thomas");
    if (chip)
        fprintf(f, ",\n  \"chip_len\": %d,\n  \"chip_lines\": %d", len && *len ? atoi(len) : 8,
                lines && *lines ? atoi(lines) : 0);
    fputs(",\n  \"results\": [", f);
    for (int p = 0; p < 2; p++)
        for (int k = 0; k < NTIMES; k++) {
            fprintf(f, "%s\n    {\"type\": \"%s\", \"what\": \"%s\", \"ms\": ",
                    p || k ? "," : "", p == 0 ? "f32" : "f64", time_names[k]);
            bench_json_number(f, 1e3 * t[p][k], 1);
            bench_json_status(f, "ok", NULL);
            fputs("}", f);
        }
    return bench_json_close(&w);
}
