/* kedr_parts and kedr_sum_parts: work over OpenMP threads in static parts whose results are
 * combined in part order, so that a floating-point sum does not depend on the order in which
 * the threads finish (core/internal.h). */
#include "core/internal.h"

#include <omp.h>

int kedr_parts(size_t n, size_t min, void (*part)(size_t lo, size_t hi, int t, void *arg),
               void *arg)
{
    int want = omp_get_max_threads();
    if (n < min || want < 2 || omp_in_parallel()) {
        part(0, n, 0, arg);
        return 1;
    }
    if (want > KEDR_PARTS_MOST)
        want = KEDR_PARTS_MOST;
    int used = 1;
#pragma omp parallel num_threads(want)
    {
        int t = omp_get_thread_num(), m = omp_get_num_threads();
        /* [floor(n t / m), floor(n (t + 1) / m)) without overflow */
        part(n / m * t + n % m * t / m, n / m * (t + 1) + n % m * (t + 1) / m, t, arg);
        if (t == 0)
            used = m;
    }
    return used;
}

typedef struct {
    double (*part)(size_t lo, size_t hi, void *arg);
    void *arg;
    double sums[KEDR_PARTS_MOST];
} sum_parts;

static void sum_part(size_t lo, size_t hi, int t, void *arg)
{
    sum_parts *s = (sum_parts *)arg;
    s->sums[t] = s->part(lo, hi, s->arg);
}

double kedr_sum_parts(size_t n, size_t min, double (*part)(size_t lo, size_t hi, void *arg),
                      void *arg)
{
    sum_parts s;
    s.part = part;
    s.arg = arg;
    int used = kedr_parts(n, min, sum_part, &s);
    double total = 0;
    for (int t = 0; t < used; t++)
        total += s.sums[t];
    return total;
}
