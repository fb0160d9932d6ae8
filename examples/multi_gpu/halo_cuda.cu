/* Several GPUs from one host thread (Boreskov et al., 2012, sec. 10.1) with halo exchange by
 * peer copies (sec. 11.1, table 11.1): a grid split into slabs of rows, one slab per GPU (round
 * robin when there are more slabs than GPUs), a Jacobi sweep per step on every GPU, launched one
 * after the other by this thread, then the slabs' edge rows copied into their neighbours' halo
 * rows, by cudaMemcpyPeer one copy after the other or by cudaMemcpyPeerAsync on each slab's
 * stream, all at once. */
#include "halo.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#define MAX_PARTS 64

typedef struct {
    int dev, lo, hi;       /* global rows lo .. hi - 1; local row 0 and hi - lo + 1 are halos */
    double *cur, *next;    /* (hi - lo + 2) x nx each */
    cudaStream_t stream;
    cudaEvent_t start, stop;
} slab;

static double now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + 1e-6 * tv.tv_usec;
}

/* One Jacobi sweep of a slab's rows: the mean of the four neighbours, boundary rows and columns
 * of the whole grid kept. The sums run in the order the cpu's loop uses. */
__global__ void sweep(const double *cur, double *next, int nx, int ny, int lo, int rows)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y + 1; /* local row 1 .. rows */
    if (j >= nx || r > rows)
        return;
    int g = lo + r - 1;
    size_t i = (size_t)r * nx + j;
    if (g == 0 || g == ny - 1 || j == 0 || j == nx - 1)
        next[i] = cur[i];
    else
        next[i] = 0.25 * (((cur[i - nx] + cur[i + nx]) + cur[i - 1]) + cur[i + 1]);
}

#define CUDA_OK(call)                                                                    \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            snprintf(err, (size_t)errlen, "%s: %s", #call, cudaGetErrorString(e_));      \
            return -1;                                                                   \
        }                                                                                \
    } while (0)

/* Copies each slab's first and last rows into its neighbours' halos. */
static int exchange(slab *s, int parts, int nx, int async, char *err, int errlen)
{
    size_t row = (size_t)nx * sizeof(double);
    for (int p = 0; p < parts; p++) {
        int h = s[p].hi - s[p].lo;
        if (p > 0) { /* my first row -> the bottom halo of p - 1 */
            int hq = s[p - 1].hi - s[p - 1].lo;
            double *dst = s[p - 1].cur + (size_t)(hq + 1) * nx, *src = s[p].cur + nx;
            if (async)
                CUDA_OK(cudaMemcpyPeerAsync(dst, s[p - 1].dev, src, s[p].dev, row, s[p].stream));
            else
                CUDA_OK(cudaMemcpyPeer(dst, s[p - 1].dev, src, s[p].dev, row));
        }
        if (p < parts - 1) { /* my last row -> the top halo of p + 1 */
            double *dst = s[p + 1].cur, *src = s[p].cur + (size_t)h * nx;
            if (async)
                CUDA_OK(cudaMemcpyPeerAsync(dst, s[p + 1].dev, src, s[p].dev, row, s[p].stream));
            else
                CUDA_OK(cudaMemcpyPeer(dst, s[p + 1].dev, src, s[p].dev, row));
        }
    }
    for (int p = 0; p < parts; p++) {
        CUDA_OK(cudaSetDevice(s[p].dev));
        CUDA_OK(cudaDeviceSynchronize());
    }
    return 0;
}

static int run(slab *s, int nx, int ny, int parts, int steps, int async, double *u, int repeats,
               halo_timing *t, char *err, int errlen)
{
    int ndev = 0;
    CUDA_OK(cudaGetDeviceCount(&ndev));
    t->devices = ndev < parts ? ndev : parts;
    for (int a = 0; a < t->devices; a++) /* peer access between every pair used, where possible */
        for (int b = 0; b < t->devices; b++) {
            int can = 0;
            if (a == b || cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can)
                continue;
            CUDA_OK(cudaSetDevice(a));
            if (cudaDeviceEnablePeerAccess(b, 0) != cudaSuccess)
                cudaGetLastError(); /* already enabled */
        }
    for (int p = 0; p < parts; p++) {
        size_t bytes = (size_t)(s[p].hi - s[p].lo + 2) * nx * sizeof(double);
        CUDA_OK(cudaSetDevice(s[p].dev));
        CUDA_OK(cudaMalloc((void **)&s[p].cur, bytes));
        CUDA_OK(cudaMalloc((void **)&s[p].next, bytes));
        CUDA_OK(cudaStreamCreate(&s[p].stream));
        CUDA_OK(cudaEventCreate(&s[p].start));
        CUDA_OK(cudaEventCreate(&s[p].stop));
        /* The slab's rows and the halo rows that exist. */
        int first = s[p].lo > 0 ? s[p].lo - 1 : s[p].lo, last = s[p].hi < ny ? s[p].hi : ny - 1;
        double *at = s[p].cur + (size_t)(first - (s[p].lo - 1)) * nx;
        CUDA_OK(cudaMemcpy(at, u + (size_t)first * nx, (size_t)(last - first + 1) * nx * sizeof(double),
                           cudaMemcpyHostToDevice));
    }
    for (int step = 0; step < steps; step++) {
        double t0 = now();
        for (int p = 0; p < parts; p++) {
            int rows = s[p].hi - s[p].lo;
            CUDA_OK(cudaSetDevice(s[p].dev));
            CUDA_OK(cudaEventRecord(s[p].start, s[p].stream));
            sweep<<<dim3((nx + 127) / 128, rows), 128, 0, s[p].stream>>>(s[p].cur, s[p].next, nx,
                                                                       ny, s[p].lo, rows);
            CUDA_OK(cudaGetLastError());
            CUDA_OK(cudaEventRecord(s[p].stop, s[p].stream));
        }
        for (int p = 0; p < parts; p++) {
            float ms = 0;
            CUDA_OK(cudaSetDevice(s[p].dev));
            CUDA_OK(cudaEventSynchronize(s[p].stop));
            CUDA_OK(cudaEventElapsedTime(&ms, s[p].start, s[p].stop));
            t->step_seconds[p] = 1e-3 * ms;
            double *tmp = s[p].cur;
            s[p].cur = s[p].next;
            s[p].next = tmp;
        }
        t->all_seconds = now() - t0;
        if (exchange(s, parts, nx, async, err, errlen) != 0)
            return -1;
    }
    for (int p = 0; p < parts; p++) {
        CUDA_OK(cudaSetDevice(s[p].dev));
        CUDA_OK(cudaMemcpy(u + (size_t)s[p].lo * nx, s[p].cur + nx,
                           (size_t)(s[p].hi - s[p].lo) * nx * sizeof(double),
                           cudaMemcpyDeviceToHost));
    }
    /* The exchanges alone, each way (table 11.1). */
    for (int mode = 0; mode < 2; mode++) {
        double t0 = now();
        for (int r = 0; r < repeats; r++)
            if (exchange(s, parts, nx, mode, err, errlen) != 0)
                return -1;
        *(mode ? &t->exchange_async : &t->exchange_sync) = (now() - t0) / repeats;
    }
    return 0;
}

extern "C" int halo_cuda(int nx, int ny, int parts, int steps, int async, double *u, int repeats,
                         halo_timing *t, char *err, int errlen)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        snprintf(err, (size_t)errlen, "no GPU");
        return -1;
    }
    if (parts < 1 || parts > MAX_PARTS || parts > ny) {
        snprintf(err, (size_t)errlen, "parts %d: expected 1 to %d, at most ny", parts, MAX_PARTS);
        return -1;
    }
    slab s[MAX_PARTS] = {};
    for (int p = 0; p < parts; p++) {
        s[p].dev = p % ndev;
        s[p].lo = (int)((long)ny * p / parts);
        s[p].hi = (int)((long)ny * (p + 1) / parts);
    }
    int rc = run(s, nx, ny, parts, steps, async, u, repeats, t, err, errlen);
    for (int p = 0; p < parts; p++) {
        cudaSetDevice(s[p].dev);
        cudaFree(s[p].cur);
        cudaFree(s[p].next);
        if (s[p].stream)
            cudaStreamDestroy(s[p].stream);
        if (s[p].start)
            cudaEventDestroy(s[p].start);
        if (s[p].stop)
            cudaEventDestroy(s[p].stop);
    }
    cudaSetDevice(0);
    return rc;
}
