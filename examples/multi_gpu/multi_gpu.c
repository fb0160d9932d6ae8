/* Several GPUs driven by one host thread, with the halos between them exchanged by peer copies
 * (Boreskov et al., "Parallel computing on GPU", 2012, sec. 10.1 and 11.1). A Jacobi iteration
 * for Laplace's equation on an nx x ny grid is split into slabs of rows; every step, each slab is
 * swept on its GPU (the launches go out one after the other from this thread, and run at once)
 * and then sends its first and last rows to its neighbours' halo rows. The book's table 10.1:
 * 0.165 s on each of eight S1060s and 0.166 s in all, so one thread keeps eight GPUs busy; its
 * table 11.1: the halo exchange of a Navier-Stokes solver on eight M2050s took 8.25 ms with
 * cudaMemcpyPeer and 1.77 ms with cudaMemcpyPeerAsync (4.7x).
 *
 * The cpu path runs the same slabs with memcpy for the halos and checks them against one sweep
 * of the whole grid: the split must not change a bit. The GPU path (more slabs than GPUs go
 * round robin, so one GPU works too) is checked against the cpu's result. */
#include "halo.h"
#include "kedr/kedr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: example_multi_gpu [--nx NX] [--ny NY] [--parts P] [--steps S]\n"
    "  S Jacobi steps on an NX x NY grid split into P slabs of rows (default 4096 x 4096, P = the\n"
    "  GPUs present or 8, S = 100), on the cpu and, with a GPU, on every GPU of this host; exits\n"
    "  1 unless the split and the GPUs give the whole grid's values\n";

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* One sweep of the rows [lo, hi) of a slab, whose arrays hold row g at local row g - lo + 1 with a
 * halo row above and below; the sums in the order the GPU kernel uses. */
static void sweep_rows(const double *cur, double *next, int nx, int ny, int lo, int hi)
{
    for (int g = lo; g < hi; g++)
        for (int j = 0; j < nx; j++) {
            size_t i = (size_t)(g - lo + 1) * nx + j;
            if (g == 0 || g == ny - 1 || j == 0 || j == nx - 1)
                next[i] = cur[i];
            else
                next[i] = 0.25 * (((cur[i - nx] + cur[i + nx]) + cur[i - 1]) + cur[i + 1]);
        }
}

/* The whole grid as one slab (rows 0 .. ny - 1, with halo rows that are never read). */
static void jacobi_whole(double *u, int nx, int ny, int steps)
{
    size_t n = (size_t)(ny + 2) * nx;
    double *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b);
    memset(a, 0, n * sizeof *a);
    memcpy(a + nx, u, (size_t)ny * nx * sizeof *u);
    for (int s = 0; s < steps; s++) {
        sweep_rows(a, b, nx, ny, 0, ny);
        double *t = a;
        a = b;
        b = t;
    }
    memcpy(u, a + nx, (size_t)ny * nx * sizeof *u);
    free(a);
    free(b);
}

/* The same in slabs, with halos copied between them after every step. */
static void jacobi_slabs(double *u, int nx, int ny, int parts, int steps)
{
    double *cur[64], *next[64];
    int lo[64], hi[64];
    size_t row = (size_t)nx * sizeof(double);
    for (int p = 0; p < parts; p++) {
        lo[p] = (int)((long)ny * p / parts);
        hi[p] = (int)((long)ny * (p + 1) / parts);
        size_t n = (size_t)(hi[p] - lo[p] + 2) * nx;
        cur[p] = xmalloc(n * sizeof(double));
        next[p] = xmalloc(n * sizeof(double));
        memset(cur[p], 0, n * sizeof(double));
        memset(next[p], 0, n * sizeof(double));
        int first = lo[p] > 0 ? lo[p] - 1 : 0, last = hi[p] < ny ? hi[p] : ny - 1;
        memcpy(cur[p] + (size_t)(first - lo[p] + 1) * nx, u + (size_t)first * nx,
               (size_t)(last - first + 1) * row);
    }
    for (int s = 0; s < steps; s++) {
        for (int p = 0; p < parts; p++) {
            sweep_rows(cur[p], next[p], nx, ny, lo[p], hi[p]);
            double *t = cur[p];
            cur[p] = next[p];
            next[p] = t;
        }
        for (int p = 0; p < parts; p++) {
            int h = hi[p] - lo[p];
            if (p > 0)
                memcpy(cur[p - 1] + (size_t)(hi[p - 1] - lo[p - 1] + 1) * nx, cur[p] + nx, row);
            if (p < parts - 1)
                memcpy(cur[p + 1], cur[p] + (size_t)h * nx, row);
        }
    }
    for (int p = 0; p < parts; p++) {
        memcpy(u + (size_t)lo[p] * nx, cur[p] + nx, (size_t)(hi[p] - lo[p]) * row);
        free(cur[p]);
        free(next[p]);
    }
}

static double max_diff(const double *a, const double *b, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

int main(int argc, char **argv)
{
    long nx = 4096, ny = 4096, steps = 100, parts = 0;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long *dst = NULL, lo = 1, hi = 0;
        if (i + 1 < argc && strcmp(argv[i], "--nx") == 0)
            dst = &nx, lo = 3, hi = 1 << 20;
        else if (i + 1 < argc && strcmp(argv[i], "--ny") == 0)
            dst = &ny, lo = 3, hi = 65535;
        else if (i + 1 < argc && strcmp(argv[i], "--parts") == 0)
            dst = &parts, lo = 1, hi = 64;
        else if (i + 1 < argc && strcmp(argv[i], "--steps") == 0)
            dst = &steps, lo = 1, hi = 100000;
        if (!dst) {
            fputs(usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
        const char *opt = argv[i];
        *dst = strtol(argv[++i], &end, 10);
        if (*end || *dst < lo || *dst > hi) {
            fprintf(stderr, "%s %s: expected an integer from %ld to %ld\n", opt, argv[i], lo, hi);
            return 2;
        }
    }
    int gpus = kedr_device_count();
    if (parts == 0)
        parts = gpus > 1 ? gpus : 8;
    if (parts > ny) {
        fprintf(stderr, "--parts %ld: at most --ny (%ld) slabs\n", parts, ny);
        return 2;
    }
    size_t n = (size_t)nx * ny;
    double *u0 = xmalloc(n * sizeof *u0), *whole = xmalloc(n * sizeof *whole);
    double *split = xmalloc(n * sizeof *split);
    uint64_t s = 5;
    for (size_t i = 0; i < n; i++) { /* row 0 held at 1, the rest of the edge at 0, inside noise */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        size_t g = i / (size_t)nx, j = i % (size_t)nx;
        u0[i] = g == 0 ? 1 : g == (size_t)ny - 1 || j == 0 || j == (size_t)nx - 1 ? 0
                                                                                : (s >> 11) * 0x1p-53;
    }
    memcpy(whole, u0, n * sizeof *u0);
    memcpy(split, u0, n * sizeof *u0);
    double t0 = kedr_wall_seconds();
    jacobi_whole(whole, (int)nx, (int)ny, (int)steps);
    double t1 = kedr_wall_seconds();
    jacobi_slabs(split, (int)nx, (int)ny, (int)parts, (int)steps);
    double t2 = kedr_wall_seconds();
    double d = max_diff(whole, split, n);
    printf("Jacobi, %ld x %ld grid, %ld steps, %ld slabs\n", nx, ny, steps, parts);
    printf("cpu: whole grid %.3f s, in slabs %.3f s, max difference %.1e\n", t1 - t0, t2 - t1, d);
    int bad = d != 0;
#ifdef KEDR_HAVE_CUDA
    if (gpus > 0) {
        for (int async = 0; async < 2 && !bad; async++) {
            char err[256];
            halo_timing tm;
            memcpy(split, u0, n * sizeof *u0);
            if (halo_cuda((int)nx, (int)ny, (int)parts, (int)steps, async, split, 20, &tm, err,
                          sizeof err) != 0) {
                fprintf(stderr, "GPU: %s\n", err);
                return 1;
            }
            double g = max_diff(whole, split, n);
            bad |= !(g <= 1e-12);
            printf("GPU, %d GPU%s, %s halos: max difference from the cpu %.1e\n", tm.devices,
                   tm.devices == 1 ? "" : "s", async ? "asynchronous" : "synchronous", g);
            if (async) {
                double slowest = 0;
                for (long p = 0; p < parts; p++)
                    slowest = fmax(slowest, tm.step_seconds[p]);
                printf("last step: the slowest slab %.3f ms, all slabs from the first launch %.3f "
                       "ms (table 10.1: 165.1-165.3 ms each, 165.7 ms all, 8 S1060s)\n",
                       1e3 * slowest, 1e3 * tm.all_seconds);
                printf("one halo exchange: cudaMemcpyPeer %.3f ms, cudaMemcpyPeerAsync %.3f ms, "
                       "%.1fx (table 11.1: 8.25 and 1.77 ms, 4.7x, 8 M2050s)\n",
                       1e3 * tm.exchange_sync, 1e3 * tm.exchange_async,
                       tm.exchange_sync / tm.exchange_async);
            }
        }
    } else {
        printf("GPU path: no GPU here\n");
    }
#else
    printf("GPU path: not built (no CUDA toolkit)\n");
#endif
    if (bad)
        fprintf(stderr, "the slabs' result differs from the whole grid's\n");
    free(u0);
    free(whole);
    free(split);
    return bad;
}
