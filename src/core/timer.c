/* Timers: CUDA events on the GPU (they time the stream, not the host), the monotonic clock on
 * the cpu. */
#include "internal.h"

#include <stdlib.h>
#include <time.h>

struct kedr_timer {
    kedr_ctx *ctx;
    double t0;
#ifdef KEDR_HAVE_CUDA
    cudaEvent_t start, stop;
#endif
};

double kedr_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

kedr_status kedr_timer_create(kedr_ctx *ctx, kedr_timer **out)
{
    kedr_timer *t = calloc(1, sizeof *t);
    if (!t)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_timer_create: out of host memory");
    t->ctx = ctx;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        cudaError_t e = cudaEventCreate(&t->start);
        if (e == cudaSuccess)
            e = cudaEventCreate(&t->stop);
        if (e != cudaSuccess) {
            free(t);
            return kedr_cuda_status(e, "cudaEventCreate", __FILE__, __LINE__);
        }
    }
#endif
    *out = t;
    return KEDR_OK;
}

void kedr_timer_destroy(kedr_timer *t)
{
    if (!t)
        return;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(t->ctx)) {
        cudaEventDestroy(t->start);
        cudaEventDestroy(t->stop);
    }
#endif
    free(t);
}

kedr_status kedr_timer_start(kedr_timer *t)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(t->ctx)) {
        KEDR_CUDA_TRY(cudaEventRecord(t->start, KEDR_STREAM(t->ctx)));
        return KEDR_OK;
    }
#endif
    t->t0 = kedr_wall_seconds();
    return KEDR_OK;
}

kedr_status kedr_timer_stop(kedr_timer *t, double *seconds)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(t->ctx)) {
        float ms = 0;
        KEDR_CUDA_TRY(cudaEventRecord(t->stop, KEDR_STREAM(t->ctx)));
        KEDR_CUDA_TRY(cudaEventSynchronize(t->stop));
        KEDR_CUDA_TRY(cudaEventElapsedTime(&ms, t->start, t->stop));
        *seconds = 1e-3 * ms;
        return KEDR_OK;
    }
#endif
    *seconds = kedr_wall_seconds() - t->t0;
    return KEDR_OK;
}
