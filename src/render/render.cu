/* render: the cuda back end of kedr_render, of the batch queries (kedr_accel_intersect_on,
 * kedr_accel_occluded_on: one thread per ray over the BVH) and of the LBVH build (lbvh.h). A
 * BVH built on the cpu (bvh.c) is copied to the GPU with the scene's arrays; one thread per pixel
 * runs the Whitted loop of whitted.h (the same text as the cpu's, compiled without fused
 * multiply-adds, see cmake/deps/render.cmake), tracing its primary, shadow and secondary rays
 * with bvh_trace.h. One kernel does all three kinds of rays (an uber-kernel in the seed's terms):
 * the pending rays of a pixel stay in its thread's stack, with no queues between waves. Or, with
 * KEDR_RENDER_WAVE, the rays travel in waves (wave.h): a kernel traces a wave's rays (the
 * primary rays first) into hit records, a kernel shades the hits and queues the shadow rays and
 * the next wave's rays (slots claimed by atomic counters), a kernel traces the shadow queue, a
 * kernel gathers each hit's colour, and the next wave follows until none is left; a last kernel
 * adds each pixel's terms in the megakernel's order, so both give the same image bit for bit. */
#include "core/internal.h"
#include "render/accel.h"
#include "render/render_cuda.h"
#include "render/wave.h"
#include "kedr/prim.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <stddef.h>

#define RENDER_THREADS 128

__global__ void __launch_bounds__(RENDER_THREADS)
    render_kernel(render_view v, render_camera_basis cam, int spp, int depth, float *rgb,
                  int32_t *ids, unsigned long long *counts)
{
    int x = blockIdx.x * 16 + threadIdx.x % 16, y = blockIdx.y * 8 + threadIdx.x / 16;
    if (x >= cam.width || y >= cam.height)
        return;
    uint64_t pixel = (uint64_t)y * cam.width + x;
    render_counts c = {0, 0};
    rvec sum = rv(0, 0, 0);
    for (int k = 0; k < spp; k++) {
        float sx, sy;
        render_sample(pixel, k, &sx, &sy);
        rvec d = render_camera_dir(&cam, x, y, sx, sy);
        sum = rv_add(sum, whitted(&v, cam.eye, d, depth, &c));
        if (k == 0 && ids) {
            float t;
            rvec n;
            int mat;
            ids[pixel] = view_nearest(&v, cam.eye, d, 0, INFINITY, &t, &n, &mat);
        }
    }
    float inv = 1.0f / spp;
    rgb[pixel * 3] = sum.x * inv;
    rgb[pixel * 3 + 1] = sum.y * inv;
    rgb[pixel * 3 + 2] = sum.z * inv;
    /* one atomic a warp: a thread's each on the same two words would serialise */
    namespace cg = cooperative_groups;
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned long long shadow = cg::reduce(g, c.shadow, cg::plus<unsigned long long>());
    unsigned long long secondary = cg::reduce(g, c.secondary, cg::plus<unsigned long long>());
    if (g.thread_rank() == 0) {
        atomicAdd(&counts[0], shadow);
        atomicAdd(&counts[1], secondary);
    }
}

/* ---- the wavefront renderer's kernels (wave.h: one thread a ray, a shadow ray or a pixel) ---- */

#define WAVE_THREADS 128

/* Traces wave q's n rays; the first wave's are the camera's rays of the pass's paths, written to
 * q for the shading, and its hits give the pixels' ids. */
__global__ void __launch_bounds__(WAVE_THREADS)
    wave_trace_kernel(render_view v, render_task *q, uint32_t n, wave_hit *hits, int primary,
                      render_camera_basis cam, uint64_t first, int spp, int depth, int32_t *ids)
{
    uint32_t i = blockIdx.x * WAVE_THREADS + threadIdx.x;
    if (i >= n)
        return;
    render_task r;
    if (primary) {
        r = wave_primary(&cam, first, spp, depth, i);
        q[i] = r;
    } else {
        r = q[i];
    }
    wave_hit h;
    wave_trace(&v, &r, &h);
    hits[i] = h;
    if (primary && ids && i % (unsigned)spp == 0)
        ids[first + i / (unsigned)spp] = h.id;
}

/* counters[0]: shadow rays queued, counters[1]: rays queued for the next wave. */
__global__ void __launch_bounds__(WAVE_THREADS)
    wave_shade_kernel(render_view v, const render_task *q, const wave_hit *hits, uint32_t n,
                      wave_local *loc, wave_record *rec, wave_shadow *shadows, uint32_t *counters,
                      render_task *next, uint32_t next_base)
{
    uint32_t i = blockIdx.x * WAVE_THREADS + threadIdx.x;
    if (i >= n)
        return;
    wave_shade(&v, &q[i], &hits[i], &loc[i], &rec[i], shadows, &counters[0], next, &counters[1],
               next_base);
}

/* Every thread reaches the warp's sum (none returns early); one atomic a warp. */
__global__ void __launch_bounds__(WAVE_THREADS)
    wave_shadow_kernel(render_view v, wave_shadow *shadows, uint32_t n, unsigned long long *traced)
{
    uint32_t i = blockIdx.x * WAVE_THREADS + threadIdx.x;
    unsigned c = i < n ? wave_shadow_trace(&v, &shadows[i]) : 0;
    for (int o = 16; o > 0; o >>= 1)
        c += __shfl_xor_sync(0xFFFFFFFFu, c, o);
    if ((threadIdx.x & 31) == 0 && c)
        atomicAdd(traced, (unsigned long long)c);
}

__global__ void __launch_bounds__(WAVE_THREADS)
    wave_gather_kernel(render_view v, const render_task *q, const wave_hit *hits,
                       const wave_local *loc, const wave_shadow *shadows, uint32_t n,
                       wave_record *rec)
{
    uint32_t i = blockIdx.x * WAVE_THREADS + threadIdx.x;
    if (i >= n)
        return;
    wave_gather(&v, &q[i], &hits[i], &loc[i], shadows, &rec[i]);
}

__global__ void __launch_bounds__(WAVE_THREADS)
    wave_pixel_kernel(const wave_record *rec, uint32_t np, int spp, float *rgb)
{
    uint32_t p = blockIdx.x * WAVE_THREADS + threadIdx.x;
    if (p >= np)
        return;
    wave_pixel(rec, p, spp, rgb + (size_t)p * 3);
}

/* Batch queries: one thread per ray, the nearest hit or any hit. */
__global__ void __launch_bounds__(RENDER_THREADS)
    trace_kernel(render_bvh_view b, uint32_t ntri, const kedr_ray *rays, size_t n, kedr_hit *hits,
                 uint8_t *occluded)
{
    size_t i = (size_t)blockIdx.x * RENDER_THREADS + threadIdx.x;
    if (i >= n)
        return;
    kedr_ray r = rays[i];
    kedr_hit h;
    h.t = r.tmax;
    h.u = h.v = 0;
    h.prim = -1;
    int any = hits == NULL;
    int found = ntri ? bvh_trace_hd(&b, rv_load(r.o), rv_load(r.d), r.tmin, &h, any) : 0;
    if (any)
        occluded[i] = (uint8_t)found;
    else
        hits[i] = h;
}

/* The BVH's arrays on the GPU of the context that first asked (kedr_accel.device). */
typedef struct {
    kedr_ctx *ctx;
    void *nodes, *refs, *tris, *woop;
} device_bvh;

void render_cuda_release(kedr_accel *a)
{
    device_bvh *d = (device_bvh *)a->device;
    if (!d)
        return;
    kedr_free(d->ctx, d->nodes);
    kedr_free(d->ctx, d->refs);
    kedr_free(d->ctx, d->tris);
    kedr_free(d->ctx, d->woop);
    free(d);
    a->device = NULL;
}

static kedr_status upload(kedr_ctx *ctx, const void *host, size_t bytes, void **dev)
{
    KEDR_TRY(kedr_alloc(ctx, dev, bytes));
    if (bytes)
        KEDR_TRY(kedr_upload(ctx, *dev, host, bytes));
    return KEDR_OK;
}

kedr_status render_cuda_trace(kedr_ctx *ctx, kedr_accel *a, const kedr_ray *rays, size_t n,
                              kedr_hit *hits, uint8_t *occluded)
{
    device_bvh *d = (device_bvh *)a->device;
    if (d && d->ctx != ctx) { /* another GPU's copy: the host's first, if only it has the tree */
        KEDR_TRY(render_accel_host(a));
        render_cuda_release(a), d = NULL;
    }
    if (!d) {
        d = (device_bvh *)calloc(1, sizeof *d);
        if (!d)
            return kedr_fail(KEDR_ERR_NOMEM, "out of host memory");
        d->ctx = ctx;
        a->device = d;
        size_t nodes = a->ntri ? a->nbvh : 0;
        kedr_status s = upload(ctx, a->bvh, nodes * sizeof(render_bvh_node), &d->nodes);
        if (s == KEDR_OK)
            s = upload(ctx, a->refs, a->nrefs * sizeof(uint32_t), &d->refs);
        if (s == KEDR_OK)
            s = upload(ctx, a->tris, a->ntri * 9 * sizeof(float), &d->tris);
        if (s == KEDR_OK && a->woop)
            s = upload(ctx, a->woop, a->ntri * 12 * sizeof(float), &d->woop);
        if (s != KEDR_OK) {
            render_cuda_release(a);
            return s;
        }
    }
    if (!n)
        return KEDR_OK;
    render_bvh_view b = {(const render_bvh_node *)d->nodes, (const uint32_t *)d->refs,
                         (const float *)d->tris, a->woop ? (const float *)d->woop : NULL};
    unsigned blocks = (unsigned)((n + RENDER_THREADS - 1) / RENDER_THREADS);
    trace_kernel<<<blocks, RENDER_THREADS, 0, KEDR_STREAM(ctx)>>>(b, (uint32_t)a->ntri, rays, n,
                                                                  hits, occluded);
    KEDR_CUDA_LAUNCHED("trace_kernel");
    return KEDR_OK;
}

/* ---- the LBVH built on the GPU (lbvh.h) ----------------------------------------------------
 *
 * The whole build runs on the device from the triangles in its memory, with no copy to or from
 * the host in between: the scene box by two reductions (accel.c's two passes: the boxes, then
 * the boxes widened by the pad the first pass gives), the Morton codes, kedr's radix sort of the
 * (code, index) pairs, every internal node of the radix tree on its own thread, and, climbing
 * from the leaves, the boxes, the treelets' restructuring and the SAH's collapse of small
 * subtrees into leaves. The same arithmetic as the cpu's build (lbvh.c), so the same tree, node
 * for node. */

#define LBVH_BLOCK 256
#define LBVH_FULL_MASK 0xFFFFFFFFu

/* Pass `pass` of the scene box: the union of the triangles' boxes widened by the pad of the
 * passes before, reduced in each thread, then in each warp, then by one atomic per warp and
 * axis (min and max are exact: any order gives the same box). */
__global__ void __launch_bounds__(LBVH_BLOCK)
    lbvh_bounds_kernel(const float *tris, uint32_t n, int pass, lbvh_bounds *b)
{
    float pad = lbvh_pad_after(b, pass);
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    size_t stride = (size_t)gridDim.x * LBVH_BLOCK;
    for (size_t i = (size_t)blockIdx.x * LBVH_BLOCK + threadIdx.x; i < n; i += stride) {
        float tlo[3], thi[3];
        tri_box_padded(tris + i * 9, pad, tlo, thi);
        for (int k = 0; k < 3; k++) {
            lo[k] = rmin(lo[k], tlo[k]);
            hi[k] = rmax(hi[k], thi[k]);
        }
    }
    for (int o = 16; o > 0; o >>= 1)
        for (int k = 0; k < 3; k++) {
            lo[k] = rmin(lo[k], __shfl_xor_sync(LBVH_FULL_MASK, lo[k], o));
            hi[k] = rmax(hi[k], __shfl_xor_sync(LBVH_FULL_MASK, hi[k], o));
        }
    if ((threadIdx.x & 31) == 0)
        for (int k = 0; k < 3; k++) {
            atomicMin(&b->lo[pass][k], lbvh_ordered_word(lo[k]));
            atomicMax(&b->hi[pass][k], lbvh_ordered_word(hi[k]));
        }
}

/* The Morton code of every triangle in the second pass's scene box, and its index. */
__global__ void __launch_bounds__(LBVH_BLOCK)
    lbvh_codes_kernel(const float *tris, uint32_t n, const lbvh_bounds *b, lbvh_code_t *codes,
                      uint32_t *ids)
{
    uint32_t i = blockIdx.x * LBVH_BLOCK + threadIdx.x;
    if (i >= n)
        return;
    float lo[3], hi[3], flo[3], inv[3];
    lbvh_box_of_pass(b, 1, lo, hi);
    lbvh_frame(lo, hi, flo, inv);
    codes[i] = lbvh_code(tris, i, lbvh_pad_after(b, 2), flo, inv);
    ids[i] = i;
}

__global__ void __launch_bounds__(LBVH_BLOCK)
    lbvh_internal_kernel(const lbvh_code_t *codes, const uint32_t *ids, uint32_t n,
                         render_bvh_node *slots, uint32_t *parent_leaf, uint32_t *parent_node,
                         uint32_t *span)
{
    uint32_t i = blockIdx.x * LBVH_BLOCK + threadIdx.x;
    if (i + 1 < n)
        lbvh_internal(codes, ids, n, i, slots, parent_leaf, parent_node, span);
}

__global__ void __launch_bounds__(LBVH_BLOCK)
    lbvh_climb_kernel(const float *tris, const lbvh_bounds *b, uint32_t n, const uint32_t *refs,
                      render_bvh_node *slots, const uint32_t *parent_leaf,
                      const uint32_t *parent_node, const uint32_t *span, float *cost,
                      uint32_t *height, unsigned *flags, uint32_t treelet_min)
{
    uint32_t k = blockIdx.x * LBVH_BLOCK + threadIdx.x;
    if (k >= n)
        return;
    lbvh_climb(tris, lbvh_pad_after(b, 2), k, refs[k], slots, parent_leaf, parent_node, span,
               cost, height, flags, treelet_min);
}

/* The build's scratch in one block of the context's cache: the scene box words, the arrival
 * counters, the codes and the sorted codes, the indices, the two parent links, the spans (2
 * words a node), the SAH costs and the heights (one a slot). */
static size_t lbvh_round(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

static size_t lbvh_scratch_bytes(size_t n)
{
    return lbvh_round(sizeof(lbvh_bounds)) + 4 * lbvh_round(n * sizeof(uint32_t)) +
           2 * lbvh_round(n * sizeof(lbvh_code_t)) + lbvh_round(2 * n * sizeof(uint32_t)) +
           lbvh_round(2 * n * sizeof(float)) + lbvh_round(2 * n * sizeof(uint32_t));
}

/* The device build: tris (n >= 2 triangles, 9 floats each) in, nodes (2n - 1) and refs (n) out,
 * all in the context's memory; scratch holds lbvh_scratch_bytes(n). Queued on the context's
 * stream, nothing waited for. */
static kedr_status lbvh_device_build(kedr_ctx *ctx, const float *tris, uint32_t n, void *scratch,
                                     render_bvh_node *nodes, uint32_t *refs,
                                     uint32_t treelet_min)
{
    cudaStream_t st = KEDR_STREAM(ctx);
    char *p = (char *)scratch;
    size_t words = lbvh_round((size_t)n * sizeof(uint32_t));
    size_t cwords = lbvh_round((size_t)n * sizeof(lbvh_code_t));
    lbvh_bounds *b = (lbvh_bounds *)p;
    unsigned *flags = (unsigned *)(p + lbvh_round(sizeof(lbvh_bounds)));
    lbvh_code_t *codes = (lbvh_code_t *)((char *)flags + words);
    lbvh_code_t *sorted = (lbvh_code_t *)((char *)codes + cwords);
    uint32_t *ids = (uint32_t *)((char *)sorted + cwords);
    uint32_t *pl = (uint32_t *)((char *)ids + words);
    uint32_t *pn = (uint32_t *)((char *)pl + words);
    uint32_t *span = (uint32_t *)((char *)pn + words);
    float *cost = (float *)((char *)span + lbvh_round(2 * (size_t)n * sizeof(uint32_t)));
    uint32_t *height = (uint32_t *)((char *)cost + lbvh_round(2 * (size_t)n * sizeof(float)));
    /* b is device memory: its fields' addresses by offset, nothing read on the host */
    KEDR_CUDA_TRY(cudaMemsetAsync(p + offsetof(lbvh_bounds, lo), 0xFF, sizeof b->lo, st));
    KEDR_CUDA_TRY(cudaMemsetAsync(p + offsetof(lbvh_bounds, hi), 0, sizeof b->hi, st));
    KEDR_CUDA_TRY(cudaMemsetAsync(flags, 0, n * sizeof(unsigned), st));
    unsigned blocks = (n + LBVH_BLOCK - 1) / LBVH_BLOCK;
    unsigned rblocks = (unsigned)ctx->multiprocessors * 8;
    rblocks = rblocks < 1 ? 1 : rblocks < blocks ? rblocks : blocks;
    for (int pass = 0; pass < 2; pass++) {
        lbvh_bounds_kernel<<<rblocks, LBVH_BLOCK, 0, st>>>(tris, n, pass, b);
        KEDR_CUDA_LAUNCHED("lbvh_bounds_kernel");
    }
    lbvh_codes_kernel<<<blocks, LBVH_BLOCK, 0, st>>>(tris, n, b, codes, ids);
    KEDR_CUDA_LAUNCHED("lbvh_codes_kernel");
    KEDR_TRY(kedr_sort_pairs(ctx, LBVH_CODE_DTYPE, codes, sorted, ids, refs, sizeof(uint32_t), n, 0,
                             LBVH_BITS));
    lbvh_internal_kernel<<<blocks, LBVH_BLOCK, 0, st>>>(sorted, refs, n, nodes, pl, pn, span);
    KEDR_CUDA_LAUNCHED("lbvh_internal_kernel");
    lbvh_climb_kernel<<<blocks, LBVH_BLOCK, 0, st>>>(tris, b, n, refs, nodes, pl, pn, span, cost,
                                                     height, flags, treelet_min);
    KEDR_CUDA_LAUNCHED("lbvh_climb_kernel");
    return KEDR_OK;
}

/* The accelerator's arrays on the GPU, the build timed by events from the triangles in device
 * memory to the tree there (the upload and the allocations before, outside the time). */
static kedr_status lbvh_gpu(kedr_accel *a, kedr_ctx *ctx, device_bvh *d, void **scratch,
                            kedr_timer *timer, uint32_t treelet_min)
{
    uint32_t n = (uint32_t)a->ntri;
    size_t nslots = 2 * (size_t)n - 1;
    KEDR_TRY(upload(ctx, a->tris, (size_t)n * 9 * sizeof(float), &d->tris));
    if (a->woop)
        KEDR_TRY(upload(ctx, a->woop, (size_t)n * 12 * sizeof(float), &d->woop));
    KEDR_TRY(kedr_alloc(ctx, &d->nodes, nslots * sizeof(render_bvh_node)));
    KEDR_TRY(kedr_alloc(ctx, &d->refs, n * sizeof(uint32_t)));
    KEDR_TRY(kedr_scratch_get(ctx, scratch, lbvh_scratch_bytes(n)));
    KEDR_TRY(kedr_timer_start(timer));
    KEDR_TRY(lbvh_device_build(ctx, (const float *)d->tris, n, *scratch,
                               (render_bvh_node *)d->nodes, (uint32_t *)d->refs, treelet_min));
    /* waits for the build: a kernel's fault is reported here, by this call */
    double seconds = 0;
    KEDR_TRY(kedr_timer_stop(timer, &seconds));
    KEDR_TRY(kedr_ctx_sync(ctx));
    a->info.device_build_seconds = seconds;
    /* the host's copy, for cpu queries and for comparison, is made when one asks for it
     * (render_accel_host): copying 32 bytes a node back would cost the build more than its
     * kernels */
    a->nbvh = nslots;
    a->nrefs = n;
    a->host_pending = 1;
    return KEDR_OK;
}

kedr_status render_cuda_host_copy(kedr_accel *a)
{
    device_bvh *d = (device_bvh *)a->device;
    if (!d || !d->nodes)
        return kedr_fail(KEDR_ERR_INVALID, "render: the GPU's tree is gone before its host copy");
    free(a->bvh);
    free(a->refs);
    a->bvh = (render_bvh_node *)malloc((a->nbvh ? a->nbvh : 1) * sizeof(render_bvh_node));
    a->refs = (uint32_t *)malloc((a->nrefs ? a->nrefs : 1) * sizeof(uint32_t));
    if (!a->bvh || !a->refs)
        return kedr_fail(KEDR_ERR_NOMEM, "out of host memory for the copy of an LBVH of %zu "
                         "triangles", a->ntri);
    KEDR_TRY(kedr_download(d->ctx, a->bvh, d->nodes, a->nbvh * sizeof(render_bvh_node)));
    KEDR_TRY(kedr_download(d->ctx, a->refs, d->refs, a->nrefs * sizeof(uint32_t)));
    return kedr_ctx_sync(d->ctx);
}

kedr_status render_lbvh_build_cuda(kedr_accel *a, kedr_ctx *ctx, uint32_t treelet_min)
{
    if (a->ntri < 2) /* a single leaf: nothing to build in parallel */
        return render_lbvh_build(a, NULL);
    device_bvh *d = (device_bvh *)calloc(1, sizeof *d);
    if (!d)
        return kedr_fail(KEDR_ERR_NOMEM, "out of host memory");
    d->ctx = ctx;
    a->device = d;
    void *scratch = NULL;
    kedr_timer *timer = NULL;
    kedr_status s = kedr_timer_create(ctx, &timer);
    if (s == KEDR_OK)
        s = lbvh_gpu(a, ctx, d, &scratch, timer, treelet_min);
    kedr_ctx_sync(ctx);
    kedr_timer_destroy(timer);
    kedr_scratch_put(ctx, scratch);
    if (s != KEDR_OK)
        render_cuda_release(a);
    return s;
}

/* Device copies of the view's arrays, freed together. */
typedef struct {
    void *ptr[16];
    int n;
} device_arrays;

static kedr_status put(kedr_ctx *ctx, device_arrays *da, const void *host, size_t bytes,
                       const void **dev)
{
    void *p = NULL;
    *dev = NULL;
    if (!host || !bytes)
        return KEDR_OK;
    KEDR_TRY(kedr_alloc(ctx, &p, bytes));
    da->ptr[da->n++] = p;
    KEDR_TRY(kedr_upload(ctx, p, host, bytes));
    *dev = p;
    return KEDR_OK;
}

/* One frame by the megakernel: one thread a pixel. */
static kedr_status mega_frame(kedr_ctx *ctx, const render_view *v, const render_camera_basis *cam,
                              const kedr_render_options *o, float *drgb, int32_t *dids,
                              unsigned long long *dcounts, uint64_t *shadow, uint64_t *secondary)
{
    KEDR_TRY(kedr_memset(ctx, dcounts, 0, 2 * sizeof(unsigned long long)));
    dim3 grid((o->width + 15) / 16, (o->height + 7) / 8);
    render_kernel<<<grid, RENDER_THREADS, 0, KEDR_STREAM(ctx)>>>(*v, *cam, o->spp, o->depth, drgb,
                                                                 dids, dcounts);
    KEDR_CUDA_LAUNCHED("render_kernel");
    unsigned long long counts[2];
    KEDR_TRY(kedr_download(ctx, counts, dcounts, sizeof counts));
    KEDR_TRY(kedr_ctx_sync(ctx));
    *shadow = counts[0];
    *secondary = counts[1];
    return KEDR_OK;
}

/* The wavefront's buffers on the GPU, kept from frame to frame and grown as waves need. */
typedef struct {
    void *queue[2], *hits, *locals, *shadows, *records, *counters;
    size_t cap_queue[2], cap_hits, cap_locals, cap_shadows, cap_records;
    kedr_timer *timer;
} wave_device;

static void wave_device_free(kedr_ctx *ctx, wave_device *w)
{
    kedr_free(ctx, w->queue[0]);
    kedr_free(ctx, w->queue[1]);
    kedr_free(ctx, w->hits);
    kedr_free(ctx, w->locals);
    kedr_free(ctx, w->shadows);
    kedr_free(ctx, w->records);
    kedr_free(ctx, w->counters);
    kedr_timer_destroy(w->timer);
}

/* Makes *p hold at least `need` entries of `size` bytes, keeping the first `keep`. */
static kedr_status dgrow(kedr_ctx *ctx, void **p, size_t *cap, size_t need, size_t size,
                         size_t keep)
{
    if (need <= *cap && *p)
        return KEDR_OK;
    size_t n = need + need / 2 + 1;
    void *q = NULL;
    KEDR_TRY(kedr_alloc(ctx, &q, n * size));
    if (keep) {
        kedr_status s = kedr_copy(ctx, q, *p, keep * size);
        if (s != KEDR_OK) {
            kedr_free(ctx, q);
            return s;
        }
    }
    kedr_free(ctx, *p);
    *p = q;
    *cap = n;
    return KEDR_OK;
}

/* One frame in waves (wave.h), pass after pass of at most render_wave_pass_pixels pixels: the
 * host reads the two queue counters after each wave's shading (to size the shadow kernel and the
 * next wave), nothing else until the image is done. */
static kedr_status wave_frame(kedr_ctx *ctx, const render_view *v, const render_camera_basis *cam,
                              const kedr_render_options *o, float *drgb, int32_t *dids,
                              wave_device *w, uint64_t *shadow, uint64_t *secondary)
{
    cudaStream_t st = KEDR_STREAM(ctx);
    size_t pixels = (size_t)o->width * o->height, paths;
    KEDR_TRY(render_wave_paths(&paths));
    size_t per = render_wave_pass_pixels(paths, v->nlights, o->spp);
    if (!w->counters)
        KEDR_TRY(kedr_alloc(ctx, &w->counters, 2 * sizeof(uint32_t) + sizeof(unsigned long long)));
    uint32_t *counters = (uint32_t *)w->counters;
    unsigned long long *traced = (unsigned long long *)((char *)w->counters + 8);
    KEDR_TRY(kedr_memset(ctx, traced, 0, sizeof *traced));
    uint64_t nsec = 0;
    for (size_t first = 0; first < pixels; first += per) {
        size_t np = pixels - first < per ? pixels - first : per;
        size_t n = np * (size_t)o->spp, base = 0;
        int cur = 0;
        for (int wave = 0; n; wave++) {
            KEDR_TRY(render_wave_check(base, n, v->nlights));
            if (wave == 0)
                KEDR_TRY(dgrow(ctx, &w->queue[0], &w->cap_queue[0], n, sizeof(render_task), 0));
            KEDR_TRY(dgrow(ctx, &w->queue[1 - cur], &w->cap_queue[1 - cur], 2 * n,
                           sizeof(render_task), 0));
            KEDR_TRY(dgrow(ctx, &w->hits, &w->cap_hits, n, sizeof(wave_hit), 0));
            KEDR_TRY(dgrow(ctx, &w->locals, &w->cap_locals, n, sizeof(wave_local), 0));
            KEDR_TRY(dgrow(ctx, &w->shadows, &w->cap_shadows, (size_t)v->nlights * n,
                           sizeof(wave_shadow), 0));
            KEDR_TRY(dgrow(ctx, &w->records, &w->cap_records, base + n, sizeof(wave_record),
                           base));
            render_task *q = (render_task *)w->queue[cur], *next = (render_task *)w->queue[1 - cur];
            wave_hit *hits = (wave_hit *)w->hits;
            wave_local *loc = (wave_local *)w->locals;
            wave_shadow *shadows = (wave_shadow *)w->shadows;
            wave_record *rec = (wave_record *)w->records + base;
            unsigned blocks = (unsigned)((n + WAVE_THREADS - 1) / WAVE_THREADS);
            KEDR_TRY(kedr_memset(ctx, counters, 0, 2 * sizeof(uint32_t)));
            wave_trace_kernel<<<blocks, WAVE_THREADS, 0, st>>>(*v, q, (uint32_t)n, hits, wave == 0,
                                                              *cam, first, o->spp, o->depth,
                                                              dids);
            KEDR_CUDA_LAUNCHED("wave_trace_kernel");
            wave_shade_kernel<<<blocks, WAVE_THREADS, 0, st>>>(*v, q, hits, (uint32_t)n, loc, rec,
                                                              shadows, counters, next,
                                                              (uint32_t)(base + n));
            KEDR_CUDA_LAUNCHED("wave_shade_kernel");
            uint32_t c[2];
            KEDR_TRY(kedr_download(ctx, c, counters, sizeof c));
            KEDR_TRY(kedr_ctx_sync(ctx));
            if (c[0]) {
                unsigned sblocks = (unsigned)(((size_t)c[0] + WAVE_THREADS - 1) / WAVE_THREADS);
                wave_shadow_kernel<<<sblocks, WAVE_THREADS, 0, st>>>(*v, shadows, c[0], traced);
                KEDR_CUDA_LAUNCHED("wave_shadow_kernel");
            }
            wave_gather_kernel<<<blocks, WAVE_THREADS, 0, st>>>(*v, q, hits, loc, shadows,
                                                               (uint32_t)n, rec);
            KEDR_CUDA_LAUNCHED("wave_gather_kernel");
            nsec += c[1];
            base += n;
            n = c[1];
            cur = 1 - cur;
        }
        unsigned pblocks = (unsigned)((np + WAVE_THREADS - 1) / WAVE_THREADS);
        wave_pixel_kernel<<<pblocks, WAVE_THREADS, 0, st>>>((const wave_record *)w->records,
                                                           (uint32_t)np, o->spp, drgb + first * 3);
        KEDR_CUDA_LAUNCHED("wave_pixel_kernel");
    }
    unsigned long long nshadow = 0;
    KEDR_TRY(kedr_download(ctx, &nshadow, traced, sizeof nshadow));
    KEDR_TRY(kedr_ctx_sync(ctx));
    *shadow = nshadow;
    *secondary = nsec;
    return KEDR_OK;
}

static kedr_status run(kedr_ctx *ctx, device_arrays *da, wave_device *wd,
                       const render_view *hv, const render_camera_basis *cam,
                       const kedr_render_options *o, float *rgb, int32_t *ids,
                       kedr_render_stats *st)
{
    const kedr_accel *a = hv->accel;
    render_view v = *hv;
    size_t pixels = (size_t)o->width * o->height;
    const void *p;
    KEDR_TRY(put(ctx, da, hv->mats, hv->nmats * sizeof(render_material), &p));
    v.mats = (const render_material *)p;
    KEDR_TRY(put(ctx, da, hv->lights, hv->nlights * sizeof(render_light), &p));
    v.lights = (const render_light *)p;
    KEDR_TRY(put(ctx, da, hv->spheres, hv->nspheres * sizeof(render_sphere), &p));
    v.spheres = (const render_sphere *)p;
    KEDR_TRY(put(ctx, da, hv->planes, hv->nplanes * sizeof(render_plane), &p));
    v.planes = (const render_plane *)p;
    KEDR_TRY(put(ctx, da, hv->tri_mat, hv->ntri * sizeof(int), &p));
    v.tri_mat = (const int *)p;
    const device_bvh *d = (const device_bvh *)a->device;
    if (d && d->ctx == ctx && d->nodes) { /* the tree this GPU holds (built or traced there) */
        v.bvh.tris = (const float *)d->tris;
        v.bvh.woop = a->woop ? (const float *)d->woop : NULL;
        v.bvh.nodes = (const render_bvh_node *)d->nodes;
        v.bvh.refs = (const uint32_t *)d->refs;
    } else {
        KEDR_TRY(render_accel_host(a));
        KEDR_TRY(put(ctx, da, a->tris, a->ntri * 9 * sizeof(float), &p));
        v.bvh.tris = (const float *)p;
        KEDR_TRY(put(ctx, da, a->woop, a->woop ? a->ntri * 12 * sizeof(float) : 0, &p));
        v.bvh.woop = (const float *)p;
        KEDR_TRY(put(ctx, da, a->bvh, a->ntri ? a->nbvh * sizeof(render_bvh_node) : 0, &p));
        v.bvh.nodes = (const render_bvh_node *)p;
        KEDR_TRY(put(ctx, da, a->refs, a->nrefs * sizeof(uint32_t), &p));
        v.bvh.refs = (const uint32_t *)p;
    }
    v.accel = NULL;
    void *drgb = NULL, *dids = NULL, *dcounts = NULL;
    KEDR_TRY(kedr_alloc(ctx, &drgb, pixels * 3 * sizeof(float)));
    da->ptr[da->n++] = drgb;
    if (ids) {
        KEDR_TRY(kedr_alloc(ctx, &dids, pixels * sizeof(int32_t)));
        da->ptr[da->n++] = dids;
    }
    KEDR_TRY(kedr_alloc(ctx, &dcounts, 2 * sizeof(unsigned long long)));
    da->ptr[da->n++] = dcounts;
    int repeats = o->repeats > 1 ? o->repeats : 1;
    double times[1000];
    for (int r = 0; r < repeats; r++) {
        uint64_t shadow = 0, secondary = 0;
        KEDR_TRY(kedr_timer_start(wd->timer));
        if (o->kernel == KEDR_RENDER_WAVE)
            KEDR_TRY(wave_frame(ctx, &v, cam, o, (float *)drgb, (int32_t *)dids, wd, &shadow,
                                &secondary));
        else
            KEDR_TRY(mega_frame(ctx, &v, cam, o, (float *)drgb, (int32_t *)dids,
                                (unsigned long long *)dcounts, &shadow, &secondary));
        KEDR_TRY(kedr_timer_stop(wd->timer, &times[r]));
        st->shadow_rays = shadow;
        st->secondary_rays = secondary;
    }
    st->frame_seconds = render_median(times, repeats);
    KEDR_TRY(kedr_download(ctx, rgb, drgb, pixels * 3 * sizeof(float)));
    if (ids)
        KEDR_TRY(kedr_download(ctx, ids, dids, pixels * sizeof(int32_t)));
    KEDR_TRY(kedr_ctx_sync(ctx));
    return KEDR_OK;
}

kedr_status render_cuda(kedr_ctx *ctx, const render_view *v, const render_camera_basis *cam,
                        const kedr_render_options *o, float *rgb, int32_t *ids,
                        kedr_render_stats *st)
{
    device_arrays da;
    da.n = 0;
    wave_device wd;
    memset(&wd, 0, sizeof wd);
    kedr_status s = kedr_timer_create(ctx, &wd.timer);
    if (s == KEDR_OK)
        s = run(ctx, &da, &wd, v, cam, o, rgb, ids, st);
    kedr_ctx_sync(ctx);
    for (int i = 0; i < da.n; i++)
        kedr_free(ctx, da.ptr[i]);
    wave_device_free(ctx, &wd);
    return s;
}
