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
