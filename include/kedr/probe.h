/* kedr probe: the kernels that measure how well a processor moves data, after Ruetsch & Fatica,
 * "CUDA Fortran for Scientists and Engineers" (2013), ch. 2-4, and the BabelStream kernel set
 * (Deakin et al., 2016). Every kernel gives a result that can be checked (the copied or
 * transposed data, the dot product), so that a measurement is only taken of a kernel that works.
 * Pointers named a, b, c, in, out live in the context's memory. The timing is the caller's
 * (bench_time: a warm-up, then the median of repeats, CUDA events on a GPU); the transfer,
 * overlap and peer measurements time themselves, since they need streams and pinned memory. */
#ifndef KEDR_PROBE_H
#define KEDR_PROBE_H

#include "kedr/comm.h"
#include "kedr/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- STREAM-style kernels (F32 or F64) ------------------------------------------------------ */

typedef enum {
    KEDR_PROBE_COPY,  /* c = a            2 arrays move */
    KEDR_PROBE_SCALE, /* b = s c          2 */
    KEDR_PROBE_ADD,   /* c = a + b        3 */
    KEDR_PROBE_TRIAD, /* a = b + s c      3 */
    KEDR_PROBE_DOT    /* *dot = sum a b   2 */
} kedr_probe_stream_op;

const char *kedr_probe_stream_name(kedr_probe_stream_op op);
/* Arrays that one call reads and writes (2 or 3): bytes moved = arrays * n * element size. */
int kedr_probe_stream_arrays(kedr_probe_stream_op op);
/* One kernel over n elements of a, b, c; dot (host, may be NULL unless op is DOT) receives the
 * dot product, summed in double. */
kedr_status kedr_probe_stream(kedr_ctx *ctx, kedr_dtype t, kedr_probe_stream_op op, size_t n,
                              void *a, void *b, void *c, double scalar, double *dot);

/* ---- the limiting-factor study (Ruetsch & Fatica, sec. 2.2) --------------------------------- */

typedef enum {
    KEDR_PROBE_BASE,   /* a[i] = sin(b[i]): the whole kernel */
    KEDR_PROBE_MEMORY, /* a[i] = b[i]: its memory traffic only */
    KEDR_PROBE_MATH    /* v = sin(x); a[i] = v only if v * flag == 1: its arithmetic only */
} kedr_probe_limit_kind;

const char *kedr_probe_limit_name(kedr_probe_limit_kind k);
/* fast: the GPU's hardware sine (__sinf, as -use_fast_math would give); the cpu has one sine.
 * The math kernel takes x and flag as arguments, so the compiler cannot remove the sine; with
 * flag = 0 it writes nothing. */
kedr_status kedr_probe_limit(kedr_ctx *ctx, kedr_probe_limit_kind k, int fast, float *a,
                             const float *b, size_t n, float x, int flag);

/* ---- misaligned and strided access (Ruetsch & Fatica, sec. 3.2.2) --------------------------- */

/* a[i + offset] += 1 for i < n; a holds n + offset elements (F32 or F64). */
kedr_status kedr_probe_offset(kedr_ctx *ctx, kedr_dtype t, void *a, size_t n, size_t offset);
/* a[i * stride] += 1 for i < n; a holds (n - 1) * stride + 1 elements at least. */
kedr_status kedr_probe_stride(kedr_ctx *ctx, kedr_dtype t, void *a, size_t n, size_t stride);
/* b[i] = a[i * stride] for i < n (F32 or F64; a holds (n - 1) * stride + 1 elements, b n):
 * strided reads, coalesced writes. readonly: on cuda the loads go through the read-only data
 * (texture) cache (__ldg), the path of Ruetsch & Fatica's fig. 3.18; the cpu ignores it. */
kedr_status kedr_probe_stride_read(kedr_ctx *ctx, kedr_dtype t, const void *a, void *b, size_t n,
                                   size_t stride, int readonly);

/* ---- matrix copy and transpose variants (Ruetsch & Fatica, sec. 3.4) ------------------------ */

typedef enum {
    KEDR_PROBE_T_COPY,        /* out = in, one element a thread: the yardstick */
    KEDR_PROBE_T_COPY_SHARED, /* out = in through a shared-memory tile */
    KEDR_PROBE_T_NAIVE,       /* reads coalesced, writes with a stride of a row */
    KEDR_PROBE_T_COALESCED,   /* through a 32 x 32 tile: both coalesced, bank conflicts */
    KEDR_PROBE_T_NO_BANK,     /* the tile padded by a column: no bank conflicts */
    KEDR_PROBE_T_DIAGONAL,    /* tiles visited along diagonals (partition camping) */
    KEDR_PROBE_T_COUNT
} kedr_probe_transpose_kind;

const char *kedr_probe_transpose_name(kedr_probe_transpose_kind k);
/* in is rows x cols floats (row-major). The copies write out as rows x cols, the transposes as
 * cols x rows. Any shape; in and out must not overlap. On the cpu, the variants are the same
 * access patterns with a tile in a local array. */
kedr_status kedr_probe_transpose(kedr_ctx *ctx, kedr_probe_transpose_kind k, const float *in,
                                 float *out, size_t rows, size_t cols);

/* ---- execution configuration (Ruetsch & Fatica, sec. 3.5) ----------------------------------- */

typedef struct {
    int threads;         /* per block, 32 to 1024 */
    int ilp;             /* elements each thread loads before it stores: 1 to 8 */
    int one_block_per_sm; /* ask for most of an SM's shared memory, so one block fits on an SM */
} kedr_probe_launch;

/* out = in (n elements of F32 or F64) with the given launch; the cpu ignores the launch. */
kedr_status kedr_probe_copy_launch(kedr_ctx *ctx, kedr_dtype t, void *out, const void *in,
                                   size_t n, const kedr_probe_launch *launch);
/* The launch's theoretical occupancy (resident warps / the SM's maximum) and the dynamic shared
 * memory it asks per block. KEDR_ERR_UNSUPPORTED on the cpu. */
kedr_status kedr_probe_occupancy(kedr_ctx *ctx, kedr_dtype t, const kedr_probe_launch *launch,
                                 double *occupancy, size_t *shared_bytes);

/* ---- host <-> device transfers (Ruetsch & Fatica, sec. 3.1) --------------------------------- */

/* Seconds for one host-to-device and one device-to-host copy of `bytes` bytes from pageable
 * (malloc) or pinned host memory: a warm-up, then the median of repeats, timed by events. The
 * data that comes back is compared with what went. KEDR_ERR_UNSUPPORTED on the cpu. */
kedr_status kedr_probe_transfer(kedr_ctx *ctx, size_t bytes, int pinned, int repeats,
                                double *h2d_seconds, double *d2h_seconds);

/* ---- overlapping transfers and kernels (Ruetsch & Fatica, sec. 3.1.3) ----------------------- */

typedef enum {
    KEDR_PROBE_SEQUENTIAL, /* copy in, kernel, copy out, on one stream */
    KEDR_PROBE_ASYNC_V1,   /* per stream: {copy in, kernel, copy out} */
    KEDR_PROBE_ASYNC_V2,   /* all copies in, all kernels, all copies out */
    KEDR_PROBE_ASYNC_V3,   /* as V2, with an event recorded after each kernel */
    KEDR_PROBE_OVERLAP_COUNT
} kedr_probe_overlap_version;

const char *kedr_probe_overlap_name(kedr_probe_overlap_version v);

typedef struct {
    double seconds[KEDR_PROBE_OVERLAP_COUNT];   /* median of repeats */
    double max_error[KEDR_PROBE_OVERLAP_COUNT]; /* max |a - 1| after each version */
    double h2d, kernel, d2h; /* the three stages of the whole array, timed alone */
    int copy_engines;        /* cudaDeviceProp.asyncEngineCount */
} kedr_probe_overlap_result;

/* n floats (a multiple of 256 * streams) start at 0 on the host (pinned); each version copies
 * them in, adds sqrt(sin^2 + cos^2) = 1 to each, and copies them back. */
kedr_status kedr_probe_overlap(kedr_ctx *ctx, size_t n, int streams, int repeats,
                               kedr_probe_overlap_result *r);

/* The time a version takes by the engine model of Ruetsch & Fatica (fig. 3.4): each engine (one
 * copy engine for both directions or one each, and one kernel engine) runs what it is given in
 * the order it was submitted, each operation after the one before it in its stream; the stages
 * of the whole array take h2d, kernel and d2h seconds and each of the `streams` chunks a share.
 * kernels_batched: the completion of kernels submitted back to back is signalled only after the
 * last one (Fermi), which holds back every copy out. */
double kedr_probe_overlap_model(kedr_probe_overlap_version v, int streams, int copy_engines,
                                int kernels_batched, double h2d, double kernel, double d2h);

/* ---- peer-to-peer copies (Ruetsch & Fatica, ch. 4) ------------------------------------------ */

/* Whether device src can access device dst's memory directly. */
kedr_status kedr_probe_peer_access(int src, int dst, int *can_access);
/* Seconds for cudaMemcpyPeer of `bytes` bytes from device src to dst (median of repeats after a
 * warm-up), with peer access enabled when `peer` and possible, else staged through the host.
 * The data is checked at dst. */
kedr_status kedr_probe_peer_copy(int src, int dst, size_t bytes, int peer, int repeats,
                                 double *seconds);

/* ---- the textbook's kernel variants (Boreskov et al., ch. 3 and 5) ------------------------- */

/* *sum (host) = in[0] + ... + in[n-1] modulo 2^32, by the book's reduction kernel reduce1..5
 * (variant 1 to 5; table 5.1): 1 interleaved pairs with a divergent test, 2 strided indices
 * (bank conflicts), 3 sequential addressing, 4 the first add during the load, 5 the last warp
 * unrolled. Blocks of 512 threads sum their part; passes repeat until few partials remain,
 * which the host adds. The cpu runs one plain loop for every variant. */
kedr_status kedr_probe_textbook_reduce(kedr_ctx *ctx, int variant, const int32_t *in, size_t n,
                                       int32_t *sum);
/* out = the exclusive prefix sum of in (floats), by the book's scan1 (the work-efficient tree
 * over 512-element blocks) or scan2 (its shared memory padded against bank conflicts), variant 1
 * or 2 (table 5.2); the blocks' sums are scanned the same way and added back. out != in. The cpu
 * sums in double and rounds each prefix once. */
kedr_status kedr_probe_textbook_scan(kedr_ctx *ctx, int variant, const float *in, float *out,
                                     size_t n);

typedef enum {
    KEDR_PROBE_MM_NAIVE,      /* C = A B, each thread a dot product from global memory */
    KEDR_PROBE_MM_TILED,      /* C = A B, 16 x 16 tiles of A and B in shared memory (table 3.3) */
    KEDR_PROBE_MM_AAT,        /* C = A A^T through 16 x 16 tiles, the tile of A^T read down its
                                 columns: bank conflicts (table 3.4) */
    KEDR_PROBE_MM_AAT_PADDED, /* the same with the tile padded by a column */
    KEDR_PROBE_MM_COUNT
} kedr_probe_matmul_kind;

const char *kedr_probe_matmul_name(kedr_probe_matmul_kind k);
/* c = a b (b ignored for the A A^T variants), n x n floats, row-major; c must not overlap a or b. */
kedr_status kedr_probe_textbook_matmul(kedr_ctx *ctx, kedr_probe_matmul_kind k, const float *a,
                                       const float *b, float *c, size_t n);

/* ---- the distributed transpose (Ruetsch & Fatica, sec. 4.1.3 and 4.2) ---------------------- */

/* An n x n float matrix spread over the ranks of comm in horizontal strips (rank r: rows
 * r n/N .. (r+1) n/N - 1), transposed into strips of the transpose: each rank transposes its
 * strip locally (kedr_probe_transpose), whereupon the block bound for rank q is contiguous, and
 * the blocks travel by the method below, each landing in its column band of the receiver's
 * strip. STAGED: through host memory and MPI (cpu: host memory throughout); GPU_AWARE: MPI given
 * GPU memory (UNSUPPORTED where the MPI library is not CUDA-aware); PEER: each rank copies its
 * blocks straight from the other ranks' GPU memory (CUDA IPC; UNSUPPORTED unless every rank is on
 * one host and on a GPU). The result is checked on every rank (KEDR_ERR_INVALID when wrong).
 * *seconds: the median over repeats of the slowest rank's time for one transpose. n must be a
 * multiple of the rank count. Collective. */
typedef enum {
    KEDR_PROBE_DIST_STAGED = 0,
    KEDR_PROBE_DIST_GPU_AWARE,
    KEDR_PROBE_DIST_PEER,
    KEDR_PROBE_DIST_COUNT
} kedr_probe_dist_method;
const char *kedr_probe_dist_name(kedr_probe_dist_method m);
kedr_status kedr_probe_dist_transpose(kedr_ctx *ctx, kedr_comm *comm, kedr_probe_dist_method m,
                                      size_t n, int repeats, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
