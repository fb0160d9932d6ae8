/* The measurements that only a GPU has (host <-> device transfers, overlap of copies and kernels,
 * peer copies): argument checks and the dispatch; and the engine model that predicts the overlap,
 * which is plain arithmetic and runs anywhere. */
#include "core/internal.h"
#include "probe/probe_cuda.h"

#include <stdint.h>

static kedr_status need_gpu(kedr_ctx *ctx, const char *fn)
{
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
    if (!KEDR_IS_CUDA(ctx))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: needs a GPU (a cuda context); this context "
                         "is on the cpu", fn);
    return KEDR_OK;
}

static kedr_status check_repeats(int repeats, const char *fn)
{
    if (repeats < 1 || repeats > 100000)
        return kedr_fail(KEDR_ERR_INVALID, "%s: repeats %d: expected 1 to 100000", fn, repeats);
    return KEDR_OK;
}

kedr_status kedr_probe_transfer(kedr_ctx *ctx, size_t bytes, int pinned, int repeats,
                                double *h2d_seconds, double *d2h_seconds)
{
    const char *fn = "kedr_probe_transfer";
    KEDR_TRY(need_gpu(ctx, fn));
    KEDR_TRY(check_repeats(repeats, fn));
    if (bytes == 0 || !h2d_seconds || !d2h_seconds)
        return kedr_fail(KEDR_ERR_INVALID, "%s: expected bytes >= 1 and two result pointers", fn);
#ifdef KEDR_HAVE_CUDA
    return probe_transfer_cuda(ctx, bytes, pinned, repeats, h2d_seconds, d2h_seconds);
#else
    (void)pinned;
    return KEDR_ERR_UNSUPPORTED;
#endif
}

const char *kedr_probe_overlap_name(kedr_probe_overlap_version v)
{
    static const char *names[] = {"sequential", "async V1", "async V2", "async V3"};
    return (unsigned)v < KEDR_PROBE_OVERLAP_COUNT ? names[v] : "(invalid)";
}

kedr_status kedr_probe_overlap(kedr_ctx *ctx, size_t n, int streams, int repeats,
                               kedr_probe_overlap_result *r)
{
    const char *fn = "kedr_probe_overlap";
    KEDR_TRY(need_gpu(ctx, fn));
    KEDR_TRY(check_repeats(repeats, fn));
    if (streams < 1 || streams > 64)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %d streams: expected 1 to 64", fn, streams);
    if (n == 0 || n % (256 * (size_t)streams) || n > ((size_t)1 << 31))
        return kedr_fail(KEDR_ERR_INVALID, "%s: n = %zu: expected a multiple of 256 x %d streams, "
                         "at most 2^31", fn, n, streams);
    if (!r)
        return kedr_fail(KEDR_ERR_INVALID, "%s: result is NULL", fn);
#ifdef KEDR_HAVE_CUDA
    return probe_overlap_cuda(ctx, n, streams, repeats, r);
#else
    return KEDR_ERR_UNSUPPORTED;
#endif
}

/* ---- the engine model ------------------------------------------------------------------------ */

enum { ENGINE_H2D, ENGINE_KERNEL, ENGINE_D2H };

typedef struct {
    double engine_free[3]; /* when each engine is next free (H2D and D2H share one engine when
                              there is one copy engine) */
    double stream_done[64];
    int copy_engines;
} model_state;

static double run_op(model_state *m, int engine, int stream, double duration, double ready)
{
    int e = engine == ENGINE_D2H && m->copy_engines < 2 ? ENGINE_H2D : engine;
    double start = m->engine_free[e];
    if (m->stream_done[stream] > start)
        start = m->stream_done[stream];
    if (ready > start)
        start = ready;
    m->engine_free[e] = m->stream_done[stream] = start + duration;
    return start + duration;
}

double kedr_probe_overlap_model(kedr_probe_overlap_version v, int streams, int copy_engines,
                                int kernels_batched, double h2d, double kernel, double d2h)
{
    if (v == KEDR_PROBE_SEQUENTIAL)
        return h2d + kernel + d2h;
    if (streams < 1 || streams > 64 || (unsigned)v >= KEDR_PROBE_OVERLAP_COUNT)
        return -1;
    model_state m = {{0, 0, 0}, {0}, copy_engines};
    double h = h2d / streams, k = kernel / streams, d = d2h / streams, end = 0;
    if (v == KEDR_PROBE_ASYNC_V1) {
        for (int s = 0; s < streams; s++) {
            run_op(&m, ENGINE_H2D, s, h, 0);
            run_op(&m, ENGINE_KERNEL, s, k, 0);
            double t = run_op(&m, ENGINE_D2H, s, d, 0);
            end = t > end ? t : end;
        }
        return end;
    }
    for (int s = 0; s < streams; s++)
        run_op(&m, ENGINE_H2D, s, h, 0);
    double last_kernel = 0;
    for (int s = 0; s < streams; s++)
        last_kernel = run_op(&m, ENGINE_KERNEL, s, k, 0);
    /* V2 on a GPU that batches the completion of concurrent kernels: no copy out starts before
     * the last kernel ends. The event recorded after each kernel in V3 prevents the batching. */
    double ready = v == KEDR_PROBE_ASYNC_V2 && kernels_batched ? last_kernel : 0;
    for (int s = 0; s < streams; s++) {
        double t = run_op(&m, ENGINE_D2H, s, d, ready);
        end = t > end ? t : end;
    }
    return end;
}

/* ---- peer copies ----------------------------------------------------------------------------- */

static kedr_status check_devices(int src, int dst, const char *fn)
{
    int count = kedr_device_count();
    if (count < 2)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: peer copies need two GPUs; this machine has "
                         "%d", fn, count);
    if (src < 0 || dst < 0 || src >= count || dst >= count || src == dst)
        return kedr_fail(KEDR_ERR_INVALID, "%s: devices %d and %d: expected two different GPUs "
                         "from 0 to %d", fn, src, dst, count - 1);
    return KEDR_OK;
}

kedr_status kedr_probe_peer_access(int src, int dst, int *can_access)
{
    const char *fn = "kedr_probe_peer_access";
    KEDR_TRY(check_devices(src, dst, fn));
    if (!can_access)
        return kedr_fail(KEDR_ERR_INVALID, "%s: can_access is NULL", fn);
#ifdef KEDR_HAVE_CUDA
    return probe_peer_access_cuda(src, dst, can_access);
#else
    return KEDR_ERR_UNSUPPORTED;
#endif
}

kedr_status kedr_probe_peer_copy(int src, int dst, size_t bytes, int peer, int repeats,
                                 double *seconds)
{
    const char *fn = "kedr_probe_peer_copy";
    KEDR_TRY(check_devices(src, dst, fn));
    KEDR_TRY(check_repeats(repeats, fn));
    if (bytes == 0 || !seconds)
        return kedr_fail(KEDR_ERR_INVALID, "%s: expected bytes >= 1 and a result pointer", fn);
#ifdef KEDR_HAVE_CUDA
    return probe_peer_copy_cuda(src, dst, bytes, peer, repeats, seconds);
#else
    (void)peer;
    return KEDR_ERR_UNSUPPORTED;
#endif
}
