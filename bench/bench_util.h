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
/* A number, or null where there is none (JSON has no NaN). */
void bench_json_number(FILE *f, double x, int present);

#endif
