/* The dense search's state, shared by its cpu code (dense.c) and cuda code (dense.cu). */
#ifndef CAYLEY_DENSE_H
#define CAYLEY_DENSE_H

#include "kedr/cayley.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Three bitmaps of order bits in the context's memory, bit r of word r / W standing for the
 * element of rank r (W = 64 on the cpu, 32 on the GPU; the layout in bytes is the same). */
typedef struct {
    kedr_ctx *ctx;
    const kedr_cayley_group *g;
    void *visited;   /* every element found so far */
    void *frontier;  /* the elements at distance s */
    void *next;      /* the elements at distance s + 1 being found; zero between levels */
    size_t bitmap_bytes;
    void *counters;  /* cuda: the tile counter and the new-element count of a level */
    /* cuda over kedr_cayley_options.devices GPUs (multi.cu): 2-bit codes instead of the three
     * bitmaps, which are then NULL; bitmap_bytes still sizes the checkpoint's bitmaps */
    struct cayley_multi *multi;
    int devices;         /* 0: one context's search; else the GPUs of the search over GPUs */
    size_t memory_bytes; /* held by the search */
    const struct cayley_dense_backend *backend; /* chosen once, by cayley_dense_growth */
} cayley_dense;

typedef struct cayley_multi cayley_multi;

/* What a back end (cpu, one GPU, several GPUs) does for the dense search. begin allocates and
 * sets the starting state (the identity); end frees whatever begin got, even after it failed. */
typedef struct cayley_dense_backend {
    kedr_status (*begin)(cayley_dense *d);
    /* One level: next = neighbours of frontier not in visited; visited |= next; *count =
     * |next|; then frontier and next swap. frontier_size (F(s)) sizes the work. */
    kedr_status (*level)(cayley_dense *d, uint64_t frontier_size, uint64_t *count);
    void (*end)(cayley_dense *d);
    kedr_status (*download)(cayley_dense *d, int which, size_t off, void *buf, size_t n);
    kedr_status (*upload)(cayley_dense *d, int which, size_t off, const void *buf, size_t n,
                          int level);
} cayley_dense_backend;

/* Copies bytes [off, off + n) of the visited (which = 0) or frontier (1) bitmap, in the layout
 * of the cpu and single-GPU searches, to or from host memory (checkpoints). An upload sets the
 * frontier's level (the multi-GPU layout needs it): visited first, then frontier. */
kedr_status cayley_dense_download(cayley_dense *d, int which, size_t off, void *buf, size_t n);
kedr_status cayley_dense_upload(cayley_dense *d, int which, size_t off, const void *buf, size_t n,
                                int level);

#ifdef KEDR_HAVE_CUDA
/* The search over several GPUs (multi.cu). */
kedr_status cayley_multi_devices(int *count);
kedr_status cayley_multi_begin(cayley_dense *d, int ndev);
kedr_status cayley_multi_level(cayley_dense *d, uint64_t *count);
void cayley_multi_end(cayley_dense *d);
kedr_status cayley_multi_download(cayley_dense *d, int which, size_t off, void *buf, size_t n);
kedr_status cayley_multi_upload(cayley_dense *d, int which, size_t off, const void *buf, size_t n,
                                int level);
/* Free GPU memory of ctx's device. */
kedr_status cayley_cuda_free_memory(kedr_ctx *ctx, size_t *bytes);
kedr_status cayley_cuda_begin(cayley_dense *d);
/* One level: next = neighbours of frontier not in visited; visited |= next; *count = |next|;
 * then frontier and next swap, so that next is zero again. */
kedr_status cayley_cuda_level(cayley_dense *d, uint64_t *count);
void cayley_cuda_end(cayley_dense *d);
#endif

#ifdef __cplusplus
}
#endif
#endif
