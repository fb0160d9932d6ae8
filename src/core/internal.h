/* Private to the library: the context layout and helpers shared by the cpu and cuda code. */
#ifndef KEDR_INTERNAL_H
#define KEDR_INTERNAL_H

#include "kedr/comm.h"
#include "kedr/core.h"

#ifdef KEDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define KEDR_SCRATCH_SLOTS 16

typedef struct {
    void *ptr;
    size_t bytes;
    int in_use;
} kedr_scratch_block;

struct kedr_ctx {
    kedr_backend backend;
    int device;
    int threads;          /* OpenMP threads (cpu) */
    int multiprocessors;  /* SMs (cuda) */
    void *stream;         /* cudaStream_t (cuda) */
    kedr_scratch_block scratch[KEDR_SCRATCH_SLOTS];
    void *readback;       /* cuda: KEDR_READBACK_BYTES of pinned host memory for
                             kedr_read_back (NULL where pinned memory was refused) */
};
/* A few results (sums, counts, a solver's state: at most KEDR_READBACK_BYTES) read back to the
 * host, as kedr_download, through the context's pinned buffer: the wait is the copy's own, not
 * the driver's staging of a pageable destination as well. A context serves one host thread at
 * a time (its stream, scratch and this buffer are its own). */
#define KEDR_READBACK_BYTES 4096
kedr_status kedr_read_back(kedr_ctx *ctx, void *host_dst, const void *src, size_t bytes);

#ifdef KEDR_HAVE_CUDA
/* Turns a CUDA error into a kedr status with a message naming the call and where it was made. */
kedr_status kedr_cuda_status(cudaError_t err, const char *what, const char *file, int line);
#define KEDR_CUDA_TRY(call)                                                        \
    do {                                                                           \
        cudaError_t kedr_cuda_e_ = (call);                                         \
        if (kedr_cuda_e_ != cudaSuccess)                                           \
            return kedr_cuda_status(kedr_cuda_e_, #call, __FILE__, __LINE__);      \
    } while (0)
/* After a kernel launch: reports a bad launch configuration at once. */
#define KEDR_CUDA_LAUNCHED(name) KEDR_CUDA_TRY(cudaPeekAtLastError())
#define KEDR_STREAM(ctx) ((cudaStream_t)(ctx)->stream)
/* kedr_comm_dev_signal's kernel (comm_signal.cu): stores value at sig[i], then waits until
 * every *wait[j] >= value. */
typedef struct {
    unsigned long long *sig[KEDR_COMM_SIGNALS_MOST];
    const unsigned long long *wait[KEDR_COMM_SIGNALS_MOST];
    int nsig, nwait;
} kedr_signal_set;
kedr_status kedr_comm_signal_cuda(kedr_ctx *ctx, const kedr_signal_set *set, uint64_t value);
#endif

/* Work queued on the context's stream, recorded once and replayed: on cuda a CUDA graph captured
 * from the stream (a sequence of small kernels then costs one launch, and the GPU runs them
 * without the gaps between separate launches); the cpu runs the work at every call. The work
 * must queue the same operations on the same memory at every call with the same key (the
 * pointers and sizes it depends on), must not wait for the GPU, read results back or allocate.
 * A call whose key differs from the recorded one runs the work unrecorded; the same new key
 * twice in a row records it again. */
typedef struct {
    void *exec;          /* cudaGraphExec_t, NULL before the first recording */
    uintptr_t key[4];    /* the recorded work's key */
    uintptr_t miss[4];   /* the last key that differed from it */
    int have_miss;
} kedr_replay;
kedr_status kedr_replay_run(kedr_ctx *ctx, kedr_replay *r, const uintptr_t key[4],
                            kedr_status (*work)(void *arg), void *arg);
/* Frees a recording (r zeroed; a zeroed r is a valid empty one). */
void kedr_replay_clear(kedr_replay *r);

/* 64-bit FNV-1a of len bytes, going on from h (KEDR_FNV_START to begin): the checksums of the
 * checkpoint files, the hashes of cases and surfaces, the keys of recordings. */
#define KEDR_FNV_START 0xcbf29ce484222325ull
static inline uint64_t kedr_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *b = (const unsigned char *)data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* True when the context runs on the GPU; dispatch code tests it inside #ifdef KEDR_HAVE_CUDA. */
#define KEDR_IS_CUDA(ctx) ((ctx)->backend == KEDR_BACKEND_CUDA)

/* Argument checks shared by the primitives. */
/* Work over [0, n) cut into one static part a thread (OpenMP; one part when n < min, with one
 * thread, or inside a parallel region): part t (0 <= t < KEDR_PARTS_MOST) gets [lo, hi), the
 * parts in order; returns the number of parts. A caller that adds the parts' results in part
 * order gets the same bits on every run with the same thread count, which OpenMP's reduction
 * clause does not give: it adds the threads' sums in the order they finish, so with three
 * threads or more the last bits can change from run to run. */
#define KEDR_PARTS_MOST 256
int kedr_parts(size_t n, size_t min, void (*part)(size_t lo, size_t hi, int t, void *arg),
               void *arg);
/* The sum over [0, n) of part(lo, hi, arg) over kedr_parts' parts, added in part order. */
double kedr_sum_parts(size_t n, size_t min, double (*part)(size_t lo, size_t hi, void *arg),
                      void *arg);
kedr_status kedr_check_ptr(const void *p, size_t n, const char *fn, const char *name);
kedr_status kedr_check_dtype(kedr_dtype t, unsigned allowed_mask, const char *fn, const char *arg);
#define KEDR_TYPE_BIT(t) (1u << (t))
#define KEDR_TYPES_ALL                                                                        \
    (KEDR_TYPE_BIT(KEDR_U32) | KEDR_TYPE_BIT(KEDR_U64) | KEDR_TYPE_BIT(KEDR_I32) |            \
     KEDR_TYPE_BIT(KEDR_F32) | KEDR_TYPE_BIT(KEDR_F64))
#define KEDR_TYPES_INT (KEDR_TYPE_BIT(KEDR_U32) | KEDR_TYPE_BIT(KEDR_U64) | KEDR_TYPE_BIT(KEDR_I32))

/* kedr_plot_map's figure (without title and colour-bar label) drawn by the same renderer into
 * rgb, KEDR_PLOT_WIDTH x KEDR_PLOT_HEIGHT pixels of 3 bytes, rows from the top: for the tests,
 * which read back its colours. */
#define KEDR_PLOT_WIDTH 1200
#define KEDR_PLOT_HEIGHT 720
kedr_status kedr_plot_map_rgb(unsigned char *rgb, int nx, int ny, const double lo[2],
                              const double hi[2], const double *values, int log_scale);

#ifdef __cplusplus
}
#endif
#endif
