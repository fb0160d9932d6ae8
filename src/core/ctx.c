/* Contexts, buffers and the scratch cache, for both back ends. */
#include "internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kedr_backend_name(kedr_backend b)
{
    switch (b) {
    case KEDR_BACKEND_CPU: return "cpu";
    case KEDR_BACKEND_CUDA: return "cuda";
    case KEDR_BACKEND_AUTO: return "auto";
    }
    return "?";
}

kedr_status kedr_backend_parse(const char *text, kedr_backend *out)
{
    static const kedr_backend all[] = {KEDR_BACKEND_CPU, KEDR_BACKEND_CUDA, KEDR_BACKEND_AUTO};
    for (size_t i = 0; text && i < sizeof all / sizeof all[0]; i++)
        if (strcmp(text, kedr_backend_name(all[i])) == 0) {
            *out = all[i];
            return KEDR_OK;
        }
    return kedr_fail(KEDR_ERR_INVALID, "unknown back end '%s' (expected cpu, cuda or auto)",
                     text ? text : "");
}

#ifdef KEDR_HAVE_CUDA
kedr_status kedr_cuda_status(cudaError_t err, const char *what, const char *file, int line)
{
    cudaGetLastError(); /* clear a sticky-free error so the next call starts clean */
    return kedr_fail(err == cudaErrorMemoryAllocation ? KEDR_ERR_NOMEM : KEDR_ERR_CUDA,
                     "%s failed: %s (%s:%d)", what, cudaGetErrorString(err), file, line);
}
#endif

int kedr_device_count(void)
{
#ifdef KEDR_HAVE_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
#else
    return 0;
#endif
}

kedr_status kedr_device_get_info(int device, kedr_device_info *info)
{
    memset(info, 0, sizeof *info);
    int count = kedr_device_count();
    if (device < 0 || device >= count)
        return kedr_fail(KEDR_ERR_INVALID, "device %d does not exist (%d GPU%s visible)", device,
                         count, count == 1 ? "" : "s");
#ifdef KEDR_HAVE_CUDA
    struct cudaDeviceProp p;
    KEDR_CUDA_TRY(cudaGetDeviceProperties(&p, device));
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->multiprocessors = p.multiProcessorCount;
    info->memory_bytes = p.totalGlobalMem;
    info->l2_bytes = (size_t)p.l2CacheSize;
    info->major = p.major;
    info->minor = p.minor;
    int clock = 0, bus = 0;
    cudaDeviceGetAttribute(&clock, cudaDevAttrMemoryClockRate, device);
    cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, device);
    info->memory_clock_khz = clock;
    info->memory_bus_bits = bus;
#endif
    return KEDR_OK;
}

int kedr_backend_available(kedr_backend b)
{
    switch (b) {
    case KEDR_BACKEND_CPU: return 1;
    case KEDR_BACKEND_CUDA: return kedr_device_count() > 0;
    case KEDR_BACKEND_AUTO: return 1;
    }
    return 0;
}

kedr_status kedr_ctx_create(kedr_ctx **out, kedr_backend backend, int device)
{
    *out = NULL;
    if (backend == KEDR_BACKEND_AUTO)
        backend = kedr_backend_available(KEDR_BACKEND_CUDA) ? KEDR_BACKEND_CUDA : KEDR_BACKEND_CPU;
    if (backend != KEDR_BACKEND_CPU && backend != KEDR_BACKEND_CUDA)
        return kedr_fail(KEDR_ERR_INVALID, "unknown back end %d", (int)backend);
    if (backend == KEDR_BACKEND_CUDA) {
#ifndef KEDR_HAVE_CUDA
        return kedr_fail(KEDR_ERR_UNSUPPORTED,
                         "the cuda back end is not built in (rebuild with the CUDA toolkit present)");
#else
        int count = kedr_device_count();
        if (count == 0)
            return kedr_fail(KEDR_ERR_UNSUPPORTED, "the cuda back end needs a GPU, and none is visible");
        if (device < 0 || device >= count)
            return kedr_fail(KEDR_ERR_INVALID, "--device %d: expected 0..%d", device, count - 1);
#endif
    }
    kedr_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_ctx_create: out of host memory");
    ctx->backend = backend;
    ctx->device = backend == KEDR_BACKEND_CUDA ? device : -1;
    ctx->threads = backend == KEDR_BACKEND_CPU ? omp_get_max_threads() : 1;
#ifdef KEDR_HAVE_CUDA
    if (backend == KEDR_BACKEND_CUDA) {
        cudaStream_t stream;
        kedr_status s = KEDR_OK;
        cudaError_t e = cudaSetDevice(device);
        if (e == cudaSuccess)
            e = cudaDeviceGetAttribute(&ctx->multiprocessors, cudaDevAttrMultiProcessorCount, device);
        if (e == cudaSuccess)
            e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        if (e != cudaSuccess) {
            s = kedr_cuda_status(e, "creating the cuda context", __FILE__, __LINE__);
            free(ctx);
            return s;
        }
        ctx->stream = stream;
        /* kedr_read_back's buffer; without it (pinned memory refused) reads are pageable */
        if (cudaMallocHost(&ctx->readback, KEDR_READBACK_BYTES) != cudaSuccess) {
            cudaGetLastError();
            ctx->readback = NULL;
        }
    }
#endif
    *out = ctx;
    return KEDR_OK;
}

void kedr_ctx_destroy(kedr_ctx *ctx)
{
    if (!ctx)
        return;
    kedr_scratch_trim(ctx);
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        cudaStreamSynchronize(KEDR_STREAM(ctx));
        cudaStreamDestroy(KEDR_STREAM(ctx));
        if (ctx->readback)
            cudaFreeHost(ctx->readback);
    }
#endif
    free(ctx);
}

kedr_backend kedr_ctx_backend(const kedr_ctx *ctx) { return ctx->backend; }
int kedr_ctx_device(const kedr_ctx *ctx) { return ctx->device; }
int kedr_ctx_threads(const kedr_ctx *ctx) { return ctx->threads; }

kedr_status kedr_ctx_sync(kedr_ctx *ctx)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        KEDR_CUDA_TRY(cudaStreamSynchronize(KEDR_STREAM(ctx)));
#else
    (void)ctx;
#endif
    return KEDR_OK;
}

kedr_status kedr_replay_run(kedr_ctx *ctx, kedr_replay *r, const uintptr_t key[4],
                            kedr_status (*work)(void *arg), void *arg)
{
#ifdef KEDR_HAVE_CUDA
    if (!KEDR_IS_CUDA(ctx))
        return work(arg);
    size_t kb = 4 * sizeof *key;
    if (r->exec && memcmp(r->key, key, kb)) { /* another key: recorded again when it repeats */
        if (!(r->have_miss && !memcmp(r->miss, key, kb))) {
            memcpy(r->miss, key, kb);
            r->have_miss = 1;
            return work(arg);
        }
        kedr_replay_clear(r);
    }
    cudaStream_t st = KEDR_STREAM(ctx);
    if (!r->exec) {
        KEDR_CUDA_TRY(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        kedr_status s = work(arg);
        cudaGraph_t g = NULL;
        cudaError_t e = cudaStreamEndCapture(st, &g);
        if (s != KEDR_OK || e != cudaSuccess) {
            if (g)
                cudaGraphDestroy(g);
            cudaGetLastError(); /* a failed capture's error, cleared: the status below says it */
            if (s != KEDR_OK)
                return s;
            return kedr_cuda_status(e, "cudaStreamEndCapture (work recorded for replay)",
                                    __FILE__, __LINE__);
        }
        cudaGraphExec_t x = NULL;
        e = cudaGraphInstantiate(&x, g, 0);
        cudaGraphDestroy(g);
        KEDR_CUDA_TRY(e);
        r->exec = x;
        memcpy(r->key, key, kb);
        r->have_miss = 0;
    }
    KEDR_CUDA_TRY(cudaGraphLaunch((cudaGraphExec_t)r->exec, st));
    return KEDR_OK;
#else
    (void)ctx;
    (void)r;
    (void)key;
    return work(arg);
#endif
}

void kedr_replay_clear(kedr_replay *r)
{
#ifdef KEDR_HAVE_CUDA
    if (r->exec)
        cudaGraphExecDestroy((cudaGraphExec_t)r->exec);
#endif
    memset(r, 0, sizeof *r);
}

/* Host memory of whole 64-byte lines, 64-byte aligned. */
static kedr_status host_aligned(void **ptr, size_t b)
{
    b = (b + 63) / 64 * 64;
    if (posix_memalign(ptr, 64, b) != 0) {
        *ptr = NULL;
        return kedr_fail(KEDR_ERR_NOMEM, "out of host memory: asked for %.3g GB", b / 1e9);
    }
    return KEDR_OK;
}

static kedr_status raw_alloc(kedr_ctx *ctx, void **ptr, size_t bytes)
{
    size_t b = bytes ? bytes : 1;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        cudaError_t e = cudaMalloc(ptr, b);
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            size_t free_b = 0, total_b = 0;
            cudaMemGetInfo(&free_b, &total_b);
            return kedr_fail(KEDR_ERR_NOMEM,
                             "out of GPU memory: asked for %.3g GB, %.3g GB free of %.3g GB",
                             b / 1e9, free_b / 1e9, total_b / 1e9);
        }
        KEDR_CUDA_TRY(e);
        return KEDR_OK;
    }
#endif
    (void)ctx;
    return host_aligned(ptr, b);
}

static void raw_free(kedr_ctx *ctx, void *ptr)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        cudaFree(ptr);
        return;
    }
#endif
    (void)ctx;
    free(ptr);
}

kedr_status kedr_alloc(kedr_ctx *ctx, void **ptr, size_t bytes)
{
    kedr_status s = raw_alloc(ctx, ptr, bytes);
    if (s == KEDR_ERR_NOMEM) { /* cached scratch may be what is missing */
        kedr_scratch_trim(ctx);
        s = raw_alloc(ctx, ptr, bytes);
    }
    return s;
}

void kedr_free(kedr_ctx *ctx, void *ptr)
{
    if (ptr)
        raw_free(ctx, ptr);
}

kedr_status kedr_host_alloc(kedr_ctx *ctx, void **ptr, size_t bytes)
{
    size_t b = bytes ? bytes : 1;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        cudaError_t e = cudaMallocHost(ptr, b);
        if (e != cudaSuccess) {
            cudaGetLastError();
            *ptr = NULL;
            return kedr_fail(KEDR_ERR_NOMEM, "out of pinned host memory: asked for %.3g GB (%s)",
                             b / 1e9, cudaGetErrorString(e));
        }
        return KEDR_OK;
    }
#endif
    (void)ctx;
    return host_aligned(ptr, b);
}

void kedr_host_free(kedr_ctx *ctx, void *ptr)
{
    if (!ptr)
        return;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        cudaFreeHost(ptr);
        return;
    }
#endif
    (void)ctx;
    free(ptr);
}

kedr_status kedr_upload(kedr_ctx *ctx, void *dst, const void *host_src, size_t bytes)
{
    if (!bytes)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        KEDR_CUDA_TRY(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, KEDR_STREAM(ctx)));
        KEDR_CUDA_TRY(cudaStreamSynchronize(KEDR_STREAM(ctx)));
        return KEDR_OK;
    }
#endif
    (void)ctx;
    memcpy(dst, host_src, bytes);
    return KEDR_OK;
}

kedr_status kedr_download(kedr_ctx *ctx, void *host_dst, const void *src, size_t bytes)
{
    if (!bytes)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        KEDR_CUDA_TRY(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, KEDR_STREAM(ctx)));
        KEDR_CUDA_TRY(cudaStreamSynchronize(KEDR_STREAM(ctx)));
        return KEDR_OK;
    }
#endif
    (void)ctx;
    memcpy(host_dst, src, bytes);
    return KEDR_OK;
}

kedr_status kedr_read_back(kedr_ctx *ctx, void *host_dst, const void *src, size_t bytes)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx) && ctx->readback && bytes && bytes <= KEDR_READBACK_BYTES) {
        KEDR_CUDA_TRY(cudaMemcpyAsync(ctx->readback, src, bytes, cudaMemcpyDeviceToHost,
                                      KEDR_STREAM(ctx)));
        KEDR_CUDA_TRY(cudaStreamSynchronize(KEDR_STREAM(ctx)));
        memcpy(host_dst, ctx->readback, bytes);
        return KEDR_OK;
    }
#endif
    return kedr_download(ctx, host_dst, src, bytes);
}

kedr_status kedr_copy(kedr_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (!bytes || dst == src)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        KEDR_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, KEDR_STREAM(ctx)));
        return KEDR_OK;
    }
#endif
    (void)ctx;
    /* Parallel copy: one thread cannot saturate the memory system of a multi-core host. */
    const size_t chunk = (size_t)1 << 20;
    long long nchunks = (long long)((bytes + chunk - 1) / chunk);
    /* one chunk: no parallel region (on a loaded host, opening one costs more than the copy) */
#pragma omp parallel for schedule(static) if (nchunks > 1)
    for (long long c = 0; c < nchunks; c++) {
        size_t off = (size_t)c * chunk;
        size_t len = bytes - off < chunk ? bytes - off : chunk;
        memmove((char *)dst + off, (const char *)src + off, len);
    }
    return KEDR_OK;
}

kedr_status kedr_memset(kedr_ctx *ctx, void *dst, int byte, size_t bytes)
{
    if (!bytes)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        KEDR_CUDA_TRY(cudaMemsetAsync(dst, byte, bytes, KEDR_STREAM(ctx)));
        return KEDR_OK;
    }
#endif
    (void)ctx;
    memset(dst, byte, bytes);
    return KEDR_OK;
}

/* The scratch cache: a handful of blocks; a request takes the smallest free block that is large
 * enough, else allocates a new one (dropping an unused block if every slot is taken). */
kedr_status kedr_scratch_get(kedr_ctx *ctx, void **ptr, size_t bytes)
{
    int best = -1, empty = -1;
    for (int i = 0; i < KEDR_SCRATCH_SLOTS; i++) {
        kedr_scratch_block *b = &ctx->scratch[i];
        if (!b->ptr) {
            if (empty < 0)
                empty = i;
        } else if (!b->in_use && b->bytes >= bytes &&
                   (best < 0 || b->bytes < ctx->scratch[best].bytes)) {
            best = i;
        }
    }
    if (best >= 0) {
        ctx->scratch[best].in_use = 1;
        *ptr = ctx->scratch[best].ptr;
        return KEDR_OK;
    }
    if (empty < 0) { /* every slot holds a block: free an unused one */
        for (int i = 0; i < KEDR_SCRATCH_SLOTS; i++)
            if (!ctx->scratch[i].in_use) {
                raw_free(ctx, ctx->scratch[i].ptr);
                ctx->scratch[i].ptr = NULL;
                empty = i;
                break;
            }
        if (empty < 0)
            return kedr_fail(KEDR_ERR_NOMEM, "scratch cache: all %d blocks are in use",
                             KEDR_SCRATCH_SLOTS);
    }
    kedr_status s = raw_alloc(ctx, ptr, bytes);
    if (s == KEDR_ERR_NOMEM) {
        for (int i = 0; i < KEDR_SCRATCH_SLOTS; i++)
            if (ctx->scratch[i].ptr && !ctx->scratch[i].in_use) {
                raw_free(ctx, ctx->scratch[i].ptr);
                ctx->scratch[i].ptr = NULL;
            }
        s = raw_alloc(ctx, ptr, bytes);
    }
    if (s != KEDR_OK)
        return s;
    ctx->scratch[empty] = (kedr_scratch_block){*ptr, bytes, 1};
    return KEDR_OK;
}

void kedr_scratch_put(kedr_ctx *ctx, void *ptr)
{
    for (int i = 0; i < KEDR_SCRATCH_SLOTS; i++)
        if (ctx->scratch[i].ptr == ptr && ptr) {
            ctx->scratch[i].in_use = 0;
            return;
        }
}

size_t kedr_scratch_held(const kedr_ctx *ctx)
{
    size_t bytes = 0;
    for (int i = 0; i < KEDR_SCRATCH_SLOTS; i++)
        if (ctx->scratch[i].ptr)
            bytes += ctx->scratch[i].bytes;
    return bytes;
}

void kedr_scratch_trim(kedr_ctx *ctx)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        cudaStreamSynchronize(KEDR_STREAM(ctx)); /* queued kernels may still use the blocks */
#endif
    for (int i = 0; i < KEDR_SCRATCH_SLOTS; i++)
        if (ctx->scratch[i].ptr && !ctx->scratch[i].in_use) {
            raw_free(ctx, ctx->scratch[i].ptr);
            ctx->scratch[i].ptr = NULL;
        }
}

const char *kedr_wait_policy(char *buf, size_t size)
{
    const char *policy = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
    if (policy && getenv(KEDR_WAIT_POLICY_MARK))
        snprintf(buf, size, "OMP_WAIT_POLICY=%s (kedr's default)", policy);
    else if (policy || spin)
        snprintf(buf, size, "%s%s%s%s%s (the user's)", policy ? "OMP_WAIT_POLICY=" : "",
                 policy ? policy : "", policy && spin ? " " : "", spin ? "GOMP_SPINCOUNT=" : "",
                 spin ? spin : "");
    else
        snprintf(buf, size, "the OpenMP runtime's default (spin, then sleep)");
    return buf;
}
