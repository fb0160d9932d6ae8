/* kedr_sum_parts: a floating-point sum over OpenMP threads whose bits do not depend on the
 * order in which the threads finish (core/internal.h). */
#include "core/internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* at most this many parts: more threads than this take no part in the sum */
#define SUM_PARTS_MOST 256

double kedr_sum_parts(size_t n, size_t min, double (*part)(size_t lo, size_t hi, void *arg),
                      void *arg)
{
#ifdef _OPENMP
    int want = omp_get_max_threads();
    if (n >= min && want > 1 && !omp_in_parallel()) {
        double sums[SUM_PARTS_MOST];
        int used = 1;
        if (want > SUM_PARTS_MOST)
            want = SUM_PARTS_MOST;
#pragma omp parallel num_threads(want)
        {
            int t = omp_get_thread_num(), m = omp_get_num_threads();
            sums[t] = part(n / m * t + n % m * t / m, n / m * (t + 1) + n % m * (t + 1) / m, arg);
            if (t == 0)
                used = m;
        }
        double s = 0;
        for (int t = 0; t < used; t++)
            s += sums[t];
        return s;
    }
#else
    (void)min;
#endif
    return part(0, n, arg);
}
