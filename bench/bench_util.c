/* Helpers shared by the benchmark drivers (bench_util.h). */
#include "bench_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void bench_device_name(kedr_ctx *ctx, char *buf, size_t size)
{
    kedr_device_info info;
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA &&
        kedr_device_get_info(kedr_ctx_device(ctx), &info) == KEDR_OK) {
        snprintf(buf, size, "%s", info.name);
        return;
    }
    char line[512], model[256] = "cpu";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = 0;
            break;
        }
    if (f)
        fclose(f);
    snprintf(buf, size, "%s, %d threads", model, kedr_ctx_threads(ctx));
}

void bench_utc_date(char *buf, size_t size)
{
    time_t now = time(NULL);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

void bench_json_number(FILE *f, double x, int present)
{
    if (present && isfinite(x))
        fprintf(f, "%.6g", x);
    else
        fputs("null", f);
}

const char *bench_commit(const char *built_from)
{
    const char *env = getenv("KEDR_COMMIT");
    return env && *env ? env : built_from;
}

kedr_status bench_json_open(kedr_file_writer *w, const char *path, const bench_meta *m)
{
    KEDR_TRY(kedr_file_begin(w, path));
    FILE *f = KEDR_FILE(w);
    char policy[128];
    fputs("{\n  \"suite\": ", f);
    kedr_json_string(f, m->suite);
    fputs(",\n  \"device\": ", f);
    kedr_json_string(f, m->device);
    fputs(",\n  \"backend\": ", f);
    kedr_json_string(f, m->backend);
    fputs(",\n  \"date\": ", f);
    kedr_json_string(f, m->date);
    fputs(",\n  \"commit\": ", f);
    kedr_json_string(f, m->commit);
    fputs(",\n  \"omp_wait_policy\": ", f);
    kedr_json_string(f, kedr_wait_policy(policy, sizeof policy));
    return KEDR_OK;
}

void bench_json_status(FILE *f, const char *status, const char *message)
{
    fputs(", \"status\": ", f);
    kedr_json_string(f, status);
    if (strcmp(status, "ok") != 0) {
        fputs(", \"message\": ", f);
        kedr_json_string(f, message);
    }
}

kedr_status bench_json_close(kedr_file_writer *w)
{
    fputs("\n  ]\n}\n", KEDR_FILE(w));
    return kedr_file_commit(w);
}

kedr_status bench_time(kedr_ctx *ctx, kedr_status (*call)(void *arg), void *arg, int repeats,
                       double *seconds)
{
    return bench_time_best(ctx, call, arg, repeats, seconds, NULL);
}

kedr_status bench_time_best(kedr_ctx *ctx, kedr_status (*call)(void *arg), void *arg, int repeats,
                            double *seconds, double *best)
{
    double *t = malloc((size_t)(repeats > 0 ? repeats : 1) * sizeof *t);
    kedr_timer *timer = NULL;
    if (!t)
        return kedr_fail(KEDR_ERR_NOMEM, "bench_time: out of host memory");
    kedr_status s = kedr_timer_create(ctx, &timer);
    if (s == KEDR_OK)
        s = call(arg);
    for (int r = 0; r < repeats && s == KEDR_OK; r++) {
        s = kedr_timer_start(timer);
        if (s == KEDR_OK)
            s = call(arg);
        if (s == KEDR_OK)
            s = kedr_timer_stop(timer, &t[r]);
    }
    if (s == KEDR_OK && best) {
        *best = t[0];
        for (int r = 1; r < repeats; r++)
            if (t[r] < *best)
                *best = t[r];
    }
    if (s == KEDR_OK)
        *seconds = bench_median(t, repeats);
    else
        kedr_ctx_sync(ctx); /* nothing queued may outlive the caller's buffers */
    kedr_timer_destroy(timer);
    free(t);
    return s;
}

kedr_status bench_copy_once(void *arg)
{
    bench_copy_args *c = arg;
    return kedr_copy(c->ctx, c->dst, c->src, c->bytes);
}

kedr_status bench_copy_gbps(kedr_ctx *ctx, size_t bytes, int repeats, double *gbps)
{
    bench_copy_args c = {ctx, NULL, NULL, bytes};
    double sec = 0;
    kedr_status s = kedr_alloc(ctx, &c.src, bytes);
    if (s == KEDR_OK)
        s = kedr_alloc(ctx, &c.dst, bytes);
    if (s == KEDR_OK)
        s = kedr_memset(ctx, c.src, 0x5A, bytes);
    if (s == KEDR_OK)
        s = bench_time(ctx, bench_copy_once, &c, repeats, &sec);
    if (s == KEDR_OK)
        *gbps = 2.0 * (double)bytes / sec / 1e9;
    kedr_ctx_sync(ctx);
    kedr_free(ctx, c.src);
    kedr_free(ctx, c.dst);
    return s;
}

int bench_in_list(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l == len && strncmp(p, name, len) == 0)
            return 1;
        p += l + (end != NULL);
    }
    return 0;
}
