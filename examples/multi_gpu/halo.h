/* The multi-GPU example's GPU path (halo_cuda.cu), called from multi_gpu.c. */
#ifndef HALO_H
#define HALO_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double step_seconds[64];  /* each part's kernel time of the last step (table 10.1) */
    double all_seconds;       /* the last step from its first launch to its last finish */
    double exchange_sync;     /* mean seconds of one halo exchange by cudaMemcpyPeer */
    double exchange_async;    /* ... by cudaMemcpyPeerAsync, all pairs at once */
    int devices;              /* GPUs used */
} halo_timing;

/* `steps` Jacobi sweeps of the nx x ny grid u (host, row-major, boundary rows and columns fixed)
 * split into `parts` slabs of rows, slab p on GPU p % (GPUs visible), all driven by this one
 * thread; halos exchanged by peer copies (async when `async`). u receives the result. Then times
 * `repeats` exchanges each way. Returns 0, or -1 with a message in err. */
int halo_cuda(int nx, int ny, int parts, int steps, int async, double *u, int repeats,
              halo_timing *t, char *err, int errlen);

#ifdef __cplusplus
}
#endif
#endif
