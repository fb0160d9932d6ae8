/* Private to probe: the cuda versions of the measurement kernels and measurements. Arguments are
 * checked by the callers in probe.c, transpose.c and gpu.c. */
#ifndef PROBE_CUDA_H
#define PROBE_CUDA_H

#include "core/internal.h"
#include "kedr/probe.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef KEDR_HAVE_CUDA
/* A CUDA result as a kedr status: KEDR_OK for cudaSuccess, else the message naming the call
 * (kedr_cuda_status makes a failure of whatever it is given). */
static inline kedr_status probe_cuda_check(cudaError_t e, const char *what, const char *file,
                                           int line)
{
    return e == cudaSuccess ? KEDR_OK : kedr_cuda_status(e, what, file, line);
}

kedr_status probe_stream_cuda(kedr_ctx *ctx, kedr_dtype t, kedr_probe_stream_op op, size_t n,
                              void *a, void *b, void *c, double scalar, double *dot);
kedr_status probe_limit_cuda(kedr_ctx *ctx, kedr_probe_limit_kind k, int fast, float *a,
                             const float *b, size_t n, float x, int flag);
kedr_status probe_offset_cuda(kedr_ctx *ctx, kedr_dtype t, void *a, size_t n, size_t offset);
kedr_status probe_stride_cuda(kedr_ctx *ctx, kedr_dtype t, void *a, size_t n, size_t stride);
kedr_status probe_stride_read_cuda(kedr_ctx *ctx, kedr_dtype t, const void *a, void *b, size_t n,
                                   size_t stride, int readonly);
kedr_status probe_transpose_cuda(kedr_ctx *ctx, kedr_probe_transpose_kind k, const float *in,
                                 float *out, size_t rows, size_t cols);
kedr_status probe_copy_launch_cuda(kedr_ctx *ctx, kedr_dtype t, void *out, const void *in,
                                   size_t n, const kedr_probe_launch *launch);
kedr_status probe_occupancy_cuda(kedr_ctx *ctx, kedr_dtype t, const kedr_probe_launch *launch,
                                 double *occupancy, size_t *shared_bytes);
kedr_status probe_transfer_cuda(kedr_ctx *ctx, size_t bytes, int pinned, int repeats,
                                double *h2d_seconds, double *d2h_seconds);
kedr_status probe_overlap_cuda(kedr_ctx *ctx, size_t n, int streams, int repeats,
                               kedr_probe_overlap_result *r);
kedr_status probe_peer_access_cuda(int src, int dst, int *can_access);
kedr_status probe_peer_copy_cuda(int src, int dst, size_t bytes, int peer, int repeats,
                                 double *seconds);
/* rows of width bytes from src (pitch spitch) to dst (pitch dpitch), device memory (a peer's
 * mapped memory too), on the context's stream */
kedr_status probe_copy2d_cuda(kedr_ctx *ctx, void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t rows);
/* CUDA IPC: a handle (PROBE_IPC_BYTES) for memory of cudaMalloc, another process's memory
 * opened from its handle, and closed */
#define PROBE_IPC_BYTES 64
kedr_status probe_ipc_handle(void *ptr, unsigned char handle[PROBE_IPC_BYTES]);
kedr_status probe_ipc_open(const unsigned char handle[PROBE_IPC_BYTES], void **ptr);
void probe_ipc_close(void *ptr);
kedr_status probe_reduce_cuda(kedr_ctx *ctx, int variant, const int32_t *in, size_t n,
                              int32_t *sum);
kedr_status probe_scan_cuda(kedr_ctx *ctx, int variant, const float *in, float *out, size_t n);
kedr_status probe_matmul_cuda(kedr_ctx *ctx, kedr_probe_matmul_kind k, const float *a,
                              const float *b, float *c, size_t n);
#endif

#ifdef __cplusplus
}
#endif
#endif
