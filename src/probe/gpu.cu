/* The GPU-only measurements of kedr probe: host <-> device transfers from pageable and pinned
 * memory, the overlap of copies and kernels over streams, and peer copies between GPUs
 * (Ruetsch & Fatica, 2013, sec. 3.1 and ch. 4). Each is timed by CUDA events, a warm-up first and
 * the median of the repeats, and each checks the data it moved. */
#include "core/internal.h"
#include "probe/probe_cuda.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Events and the times of the repeats, freed together. */
typedef struct {
    cudaEvent_t start, stop;
    double *t;
} timing;

static kedr_status timing_open(timing *tm, int repeats)
{
    tm->start = tm->stop = NULL;
    tm->t = (double *)malloc(sizeof(double) * (size_t)repeats);
    if (!tm->t)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr probe: %d timings", repeats);
    KEDR_CUDA_TRY(cudaEventCreate(&tm->start));
    KEDR_CUDA_TRY(cudaEventCreate(&tm->stop));
    return KEDR_OK;
}

static void timing_close(timing *tm)
{
    if (tm->start)
        cudaEventDestroy(tm->start);
    if (tm->stop)
        cudaEventDestroy(tm->stop);
    free(tm->t);
}

static kedr_status elapsed(timing *tm, cudaStream_t st, double *seconds)
{
    float ms = 0;
    KEDR_CUDA_TRY(cudaEventRecord(tm->stop, st));
    KEDR_CUDA_TRY(cudaEventSynchronize(tm->stop));
    KEDR_CUDA_TRY(cudaEventElapsedTime(&ms, tm->start, tm->stop));
    *seconds = 1e-3 * ms;
    return KEDR_OK;
}

/* ---- transfers ------------------------------------------------------------------------------- */

typedef struct {
    unsigned char *src, *back, *dev;
    int pinned;
} transfer_buffers;

static void transfer_free(transfer_buffers *b)
{
    if (b->pinned) {
        cudaFreeHost(b->src);
        cudaFreeHost(b->back);
    } else {
        free(b->src);
        free(b->back);
    }
    cudaFree(b->dev);
}

static kedr_status transfer_run(transfer_buffers *b, size_t bytes, int repeats, double *h2d,
                                double *d2h)
{
    if (b->pinned) {
        KEDR_CUDA_TRY(cudaMallocHost((void **)&b->src, bytes));
        KEDR_CUDA_TRY(cudaMallocHost((void **)&b->back, bytes));
    } else {
        b->src = (unsigned char *)malloc(bytes);
        b->back = (unsigned char *)malloc(bytes);
        if (!b->src || !b->back)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_probe_transfer: 2 x %zu bytes of host memory",
                             bytes);
    }
    KEDR_CUDA_TRY(cudaMalloc((void **)&b->dev, bytes));
    for (size_t i = 0; i < bytes; i++)
        b->src[i] = (unsigned char)(i * 7 + (i >> 12));
    memset(b->back, 0, bytes);
    timing tm;
    kedr_status s = timing_open(&tm, repeats);
    /* The copies go through cudaMemcpy, as the book's test does: synchronous, on the legacy
     * default stream, where the events are recorded too. */
    for (int dir = 0; dir < 2 && s == KEDR_OK; dir++) {
        for (int r = -1; r < repeats && s == KEDR_OK; r++) {
            double sec = 0;
            cudaError_t e = cudaEventRecord(tm.start, 0);
            if (e == cudaSuccess)
                e = dir == 0 ? cudaMemcpy(b->dev, b->src, bytes, cudaMemcpyHostToDevice)
                             : cudaMemcpy(b->back, b->dev, bytes, cudaMemcpyDeviceToHost);
            s = e == cudaSuccess ? elapsed(&tm, 0, &sec)
                                 : kedr_cuda_status(e, "cudaMemcpy", __FILE__, __LINE__);
            if (r >= 0)
                tm.t[r] = sec;
        }
        if (s == KEDR_OK)
            *(dir == 0 ? h2d : d2h) = median(tm.t, repeats);
    }
    timing_close(&tm);
    if (s == KEDR_OK && memcmp(b->src, b->back, bytes) != 0)
        s = kedr_fail(KEDR_ERR_CUDA, "kedr_probe_transfer: the %zu bytes that came back differ "
                      "from those sent", bytes);
    return s;
}

extern "C" kedr_status probe_transfer_cuda(kedr_ctx *ctx, size_t bytes, int pinned, int repeats,
                                           double *h2d_seconds, double *d2h_seconds)
{
    (void)ctx;
    transfer_buffers b = {NULL, NULL, NULL, pinned};
    kedr_status s = transfer_run(&b, bytes, repeats, h2d_seconds, d2h_seconds);
    transfer_free(&b);
    return s;
}

/* ---- overlap of transfers and kernels ------------------------------------------------------- */

#define OVERLAP_BLOCK 256

/* a[i] += sqrt(sin(x)^2 + cos(x)^2) with x = i: adds 1, with enough arithmetic that the kernel
 * takes about as long as the copies did on the book's GPUs. */
__global__ void overlap_kernel(float *a, int offset)
{
    int i = offset + threadIdx.x + blockIdx.x * blockDim.x;
    float x = (float)i, s = sinf(x), c = cosf(x);
    a[i] = a[i] + sqrtf(s * s + c * c);
}

typedef struct {
    float *host, *dev;
    cudaStream_t *stream;
    cudaEvent_t dummy;
    int streams;
    size_t n;
} overlap_state;

/* Submits one version; the caller records the events around it. */
static kedr_status overlap_submit(overlap_state *o, kedr_probe_overlap_version v)
{
    size_t n = o->n, chunk = n / o->streams, bytes = chunk * sizeof(float);
    unsigned grid = (unsigned)(chunk / OVERLAP_BLOCK);
    if (v == KEDR_PROBE_SEQUENTIAL) {
        KEDR_CUDA_TRY(cudaMemcpy(o->dev, o->host, n * sizeof(float), cudaMemcpyHostToDevice));
        overlap_kernel<<<(unsigned)(n / OVERLAP_BLOCK), OVERLAP_BLOCK>>>(o->dev, 0);
        KEDR_CUDA_LAUNCHED("overlap_kernel");
        KEDR_CUDA_TRY(cudaMemcpy(o->host, o->dev, n * sizeof(float), cudaMemcpyDeviceToHost));
        return KEDR_OK;
    }
    for (int s = 0; s < o->streams; s++) {
        size_t off = (size_t)s * chunk;
        KEDR_CUDA_TRY(cudaMemcpyAsync(o->dev + off, o->host + off, bytes, cudaMemcpyHostToDevice,
                                      o->stream[s]));
        if (v == KEDR_PROBE_ASYNC_V1) {
            overlap_kernel<<<grid, OVERLAP_BLOCK, 0, o->stream[s]>>>(o->dev, (int)off);
            KEDR_CUDA_LAUNCHED("overlap_kernel");
            KEDR_CUDA_TRY(cudaMemcpyAsync(o->host + off, o->dev + off, bytes,
                                          cudaMemcpyDeviceToHost, o->stream[s]));
        }
    }
    if (v == KEDR_PROBE_ASYNC_V1)
        return KEDR_OK;
    for (int s = 0; s < o->streams; s++) {
        overlap_kernel<<<grid, OVERLAP_BLOCK, 0, o->stream[s]>>>(o->dev, (int)((size_t)s * chunk));
        KEDR_CUDA_LAUNCHED("overlap_kernel");
        if (v == KEDR_PROBE_ASYNC_V3)
            KEDR_CUDA_TRY(cudaEventRecord(o->dummy, o->stream[s]));
    }
    for (int s = 0; s < o->streams; s++) {
        size_t off = (size_t)s * chunk;
        KEDR_CUDA_TRY(cudaMemcpyAsync(o->host + off, o->dev + off, bytes, cudaMemcpyDeviceToHost,
                                      o->stream[s]));
    }
    return KEDR_OK;
}

/* One stage of the whole array alone: 0 copy in, 1 kernel, 2 copy out. */
static kedr_status overlap_stage(overlap_state *o, int stage)
{
    size_t bytes = o->n * sizeof(float);
    if (stage == 0)
        KEDR_CUDA_TRY(cudaMemcpyAsync(o->dev, o->host, bytes, cudaMemcpyHostToDevice, 0));
    else if (stage == 2)
        KEDR_CUDA_TRY(cudaMemcpyAsync(o->host, o->dev, bytes, cudaMemcpyDeviceToHost, 0));
    else {
        overlap_kernel<<<(unsigned)(o->n / OVERLAP_BLOCK), OVERLAP_BLOCK>>>(o->dev, 0);
        KEDR_CUDA_LAUNCHED("overlap_kernel");
    }
    return KEDR_OK;
}

static kedr_status overlap_run(overlap_state *o, int repeats, kedr_probe_overlap_result *r)
{
    KEDR_CUDA_TRY(cudaMallocHost((void **)&o->host, o->n * sizeof(float)));
    KEDR_CUDA_TRY(cudaMalloc((void **)&o->dev, o->n * sizeof(float)));
    KEDR_CUDA_TRY(cudaEventCreate(&o->dummy));
    for (int s = 0; s < o->streams; s++)
        KEDR_CUDA_TRY(cudaStreamCreate(&o->stream[s]));
    timing tm;
    kedr_status st = timing_open(&tm, repeats);
    for (int v = 0; v < KEDR_PROBE_OVERLAP_COUNT && st == KEDR_OK; v++) {
        /* The first run is the warm-up and the check: a starts at 0 and must come back as 1. */
        for (int rep = -1; rep < repeats && st == KEDR_OK; rep++) {
            memset(o->host, 0, o->n * sizeof(float));
            double sec = 0;
            cudaError_t e = cudaEventRecord(tm.start, 0);
            st = e == cudaSuccess ? overlap_submit(o, (kedr_probe_overlap_version)v)
                                  : kedr_cuda_status(e, "cudaEventRecord", __FILE__, __LINE__);
            if (st == KEDR_OK)
                st = elapsed(&tm, 0, &sec);
            if (st == KEDR_OK && rep < 0) {
                double err = 0;
                for (size_t i = 0; i < o->n; i++)
                    err = fmax(err, fabs((double)o->host[i] - 1.0));
                r->max_error[v] = err;
                if (!(err < 1e-5))
                    st = kedr_fail(KEDR_ERR_CUDA, "kedr_probe_overlap: %s gave max |a - 1| = %g",
                                   kedr_probe_overlap_name((kedr_probe_overlap_version)v), err);
            }
            if (rep >= 0)
                tm.t[rep] = sec;
        }
        if (st == KEDR_OK)
            r->seconds[v] = median(tm.t, repeats);
    }
    double *stage[3] = {&r->h2d, &r->kernel, &r->d2h};
    for (int k = 0; k < 3 && st == KEDR_OK; k++) {
        for (int rep = -1; rep < repeats && st == KEDR_OK; rep++) {
            double sec = 0;
            cudaError_t e = cudaEventRecord(tm.start, 0);
            st = e == cudaSuccess ? overlap_stage(o, k)
                                  : kedr_cuda_status(e, "cudaEventRecord", __FILE__, __LINE__);
            if (st == KEDR_OK)
                st = elapsed(&tm, 0, &sec);
            if (rep >= 0)
                tm.t[rep] = sec;
        }
        if (st == KEDR_OK)
            *stage[k] = median(tm.t, repeats);
    }
    timing_close(&tm);
    return st;
}

extern "C" kedr_status probe_overlap_cuda(kedr_ctx *ctx, size_t n, int streams, int repeats,
                                          kedr_probe_overlap_result *r)
{
    cudaStream_t stream[64] = {0};
    overlap_state o = {NULL, NULL, stream, NULL, streams, n};
    memset(r, 0, sizeof *r);
    KEDR_CUDA_TRY(cudaDeviceGetAttribute(&r->copy_engines, cudaDevAttrAsyncEngineCount,
                                         ctx->device));
    kedr_status s = overlap_run(&o, repeats, r);
    cudaDeviceSynchronize();
    for (int k = 0; k < streams; k++)
        if (stream[k])
            cudaStreamDestroy(stream[k]);
    if (o.dummy)
        cudaEventDestroy(o.dummy);
    cudaFreeHost(o.host);
    cudaFree(o.dev);
    return s;
}

/* ---- peer copies ----------------------------------------------------------------------------- */

extern "C" kedr_status probe_peer_access_cuda(int src, int dst, int *can_access)
{
    KEDR_CUDA_TRY(cudaDeviceCanAccessPeer(can_access, src, dst));
    return KEDR_OK;
}

/* Enables (or disables) the access of device `from` to device `to`, whichever it was before;
 * where the pair cannot have it, there is nothing to disable. */
static kedr_status set_peer(int from, int to, int enable)
{
    int can = 0;
    KEDR_CUDA_TRY(cudaDeviceCanAccessPeer(&can, from, to));
    if (!can)
        return KEDR_OK;
    KEDR_CUDA_TRY(cudaSetDevice(from));
    cudaError_t e = enable ? cudaDeviceEnablePeerAccess(to, 0) : cudaDeviceDisablePeerAccess(to);
    if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled) {
        cudaGetLastError(); /* not an error here: the state is the one asked for */
        e = cudaSuccess;
    }
    KEDR_CUDA_TRY(e);
    return KEDR_OK;
}

typedef struct {
    unsigned char *a, *b, *host;
} peer_buffers;

static kedr_status peer_run(peer_buffers *p, int src, int dst, size_t bytes, int peer,
                            int repeats, double *seconds)
{
    KEDR_TRY(set_peer(src, dst, peer));
    KEDR_TRY(set_peer(dst, src, peer));
    p->host = (unsigned char *)malloc(bytes);
    if (!p->host)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_probe_peer_copy: %zu bytes of host memory", bytes);
    for (size_t i = 0; i < bytes; i++)
        p->host[i] = (unsigned char)(i * 13 + 1);
    KEDR_CUDA_TRY(cudaSetDevice(dst));
    KEDR_CUDA_TRY(cudaMalloc((void **)&p->b, bytes));
    KEDR_CUDA_TRY(cudaMemset(p->b, 0, bytes));
    KEDR_CUDA_TRY(cudaSetDevice(src));
    KEDR_CUDA_TRY(cudaMalloc((void **)&p->a, bytes));
    KEDR_CUDA_TRY(cudaMemcpy(p->a, p->host, bytes, cudaMemcpyHostToDevice));
    timing tm;
    kedr_status s = timing_open(&tm, repeats);
    for (int r = -1; r < repeats && s == KEDR_OK; r++) {
        double sec = 0;
        cudaError_t e = cudaEventRecord(tm.start, 0);
        if (e == cudaSuccess)
            e = cudaMemcpyPeer(p->b, dst, p->a, src, bytes);
        s = e == cudaSuccess ? elapsed(&tm, 0, &sec)
                             : kedr_cuda_status(e, "cudaMemcpyPeer", __FILE__, __LINE__);
        if (r >= 0)
            tm.t[r] = sec;
    }
    if (s == KEDR_OK)
        *seconds = median(tm.t, repeats);
    timing_close(&tm);
    if (s == KEDR_OK) {
        memset(p->host, 0, bytes);
        cudaError_t e = cudaMemcpy(p->host, p->b, bytes, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess)
            return kedr_cuda_status(e, "cudaMemcpy", __FILE__, __LINE__);
        for (size_t i = 0; i < bytes; i++)
            if (p->host[i] != (unsigned char)(i * 13 + 1))
                return kedr_fail(KEDR_ERR_CUDA, "kedr_probe_peer_copy: byte %zu on GPU %d differs "
                                 "from GPU %d's", i, dst, src);
    }
    return s;
}

extern "C" kedr_status probe_peer_copy_cuda(int src, int dst, size_t bytes, int peer, int repeats,
                                            double *seconds)
{
    int current = 0;
    KEDR_CUDA_TRY(cudaGetDevice(&current));
    peer_buffers p = {NULL, NULL, NULL};
    kedr_status s = peer_run(&p, src, dst, bytes, peer, repeats, seconds);
    if (p.a) {
        cudaSetDevice(src);
        cudaFree(p.a);
    }
    if (p.b) {
        cudaSetDevice(dst);
        cudaFree(p.b);
    }
    free(p.host);
    cudaSetDevice(current);
    return s;
}

extern "C" kedr_status probe_copy2d_cuda(kedr_ctx *ctx, void *dst, size_t dpitch, const void *src,
                                         size_t spitch, size_t width, size_t rows)
{
    if (!width || !rows)
        return KEDR_OK;
    KEDR_CUDA_TRY(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDefault,
                                    KEDR_STREAM(ctx)));
    return KEDR_OK;
}

extern "C" kedr_status probe_ipc_handle(void *ptr, unsigned char handle[PROBE_IPC_BYTES])
{
    static_assert(sizeof(cudaIpcMemHandle_t) == PROBE_IPC_BYTES, "CUDA IPC handle size");
    cudaIpcMemHandle_t h;
    KEDR_CUDA_TRY(cudaIpcGetMemHandle(&h, ptr));
    memcpy(handle, &h, sizeof h);
    return KEDR_OK;
}

extern "C" kedr_status probe_ipc_open(const unsigned char handle[PROBE_IPC_BYTES], void **ptr)
{
    cudaIpcMemHandle_t h;
    memcpy(&h, handle, sizeof h);
    KEDR_CUDA_TRY(cudaIpcOpenMemHandle(ptr, h, cudaIpcMemLazyEnablePeerAccess));
    return KEDR_OK;
}

extern "C" void probe_ipc_close(void *ptr)
{
    if (ptr)
        cudaIpcCloseMemHandle(ptr);
}
