/* The CUB yardstick behind bench/cub_ref.h. C++ only because CUB is; benchmarks alone use it. */
#include "cub_ref.h"

#include "core/internal.h"

#include <climits>
#include <cub/cub.cuh>
#include <cuda/std/functional>

struct cub_ref {
    kedr_ctx *ctx;
    void *temp; /* CUB's temporary storage, grown on demand and kept */
    size_t temp_bytes;
    long long *d_count; /* counts (or the sum) CUB writes on the device ... */
    long long *h_count; /* ... and their pinned host copy */
};

static kedr_status cuda_check(cudaError_t e, const char *what)
{
    return e == cudaSuccess ? KEDR_OK : kedr_cuda_status(e, what, __FILE__, __LINE__);
}

extern "C" kedr_status cub_ref_create(kedr_ctx *ctx, cub_ref **out)
{
    *out = NULL;
    if (!KEDR_IS_CUDA(ctx))
        return kedr_fail(KEDR_ERR_INVALID, "cub_ref_create: the context is not a cuda context");
    cub_ref *r = (cub_ref *)calloc(1, sizeof *r);
    if (!r)
        return kedr_fail(KEDR_ERR_NOMEM, "cub_ref_create: out of host memory");
    r->ctx = ctx;
    kedr_status s = kedr_alloc(ctx, (void **)&r->d_count, sizeof(long long));
    if (s == KEDR_OK)
        s = cuda_check(cudaMallocHost((void **)&r->h_count, sizeof(long long)), "cudaMallocHost");
    if (s != KEDR_OK) {
        cub_ref_destroy(r);
        return s;
    }
    *out = r;
    return KEDR_OK;
}

extern "C" void cub_ref_trim(cub_ref *r)
{
    if (!r)
        return;
    kedr_free(r->ctx, r->temp); /* cudaFree waits for the work that may still use it */
    r->temp = NULL;
    r->temp_bytes = 0;
}

extern "C" void cub_ref_destroy(cub_ref *r)
{
    if (!r)
        return;
    cub_ref_trim(r);
    kedr_free(r->ctx, r->d_count);
    if (r->h_count)
        cudaFreeHost(r->h_count);
    free(r);
}

/* Runs a CUB device-wide call: first its size query, then (with enough temporary storage) the
 * call itself. call(temp, bytes) returns CUB's cudaError_t. */
template <typename Call>
static kedr_status run(cub_ref *r, const char *what, size_t n, Call call)
{
    if (n > (size_t)INT_MAX)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: n = %zu exceeds INT_MAX, the offsets used here",
                         what, n);
    size_t bytes = 0;
    KEDR_TRY(cuda_check(call(NULL, bytes), what));
    if (bytes > r->temp_bytes) {
        cub_ref_trim(r);
        KEDR_TRY(kedr_alloc(r->ctx, &r->temp, bytes));
        r->temp_bytes = bytes;
    }
    KEDR_TRY(cuda_check(call(r->temp, bytes), what));
    return cuda_check(cudaPeekAtLastError(), what);
}

/* Brings the count CUB wrote to the host, as the kedr API does. */
static kedr_status fetch_count(cub_ref *r, size_t *out)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    KEDR_CUDA_TRY(cudaMemcpyAsync(r->h_count, r->d_count, sizeof(long long),
                                  cudaMemcpyDeviceToHost, st));
    KEDR_CUDA_TRY(cudaStreamSynchronize(st));
    *out = (size_t)*r->h_count;
    return KEDR_OK;
}

struct less_than {
    uint32_t bound;
    __host__ __device__ bool operator()(const uint32_t &x) const { return x < bound; }
};

extern "C" kedr_status cub_ref_reduce_sum_u32(cub_ref *r, const uint32_t *in, size_t n,
                                              uint32_t *sum)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    uint32_t *d_sum = (uint32_t *)r->d_count;
    KEDR_TRY(run(r, "cub::DeviceReduce::Sum", n, [&](void *t, size_t &b) {
        return cub::DeviceReduce::Sum(t, b, in, d_sum, (int)n, st);
    }));
    KEDR_CUDA_TRY(cudaMemcpyAsync(r->h_count, d_sum, sizeof *d_sum, cudaMemcpyDeviceToHost, st));
    KEDR_CUDA_TRY(cudaStreamSynchronize(st));
    *sum = *(uint32_t *)r->h_count;
    return KEDR_OK;
}

extern "C" kedr_status cub_ref_scan_exclusive_u32(cub_ref *r, const uint32_t *in, uint32_t *out,
                                                  size_t n)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    return run(r, "cub::DeviceScan::ExclusiveSum", n, [&](void *t, size_t &b) {
        return cub::DeviceScan::ExclusiveSum(t, b, in, out, (int)n, st);
    });
}

extern "C" kedr_status cub_ref_scan_exclusive_f32(cub_ref *r, const float *in, float *out,
                                                  size_t n)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    return run(r, "cub::DeviceScan::ExclusiveSum", n, [&](void *t, size_t &b) {
        return cub::DeviceScan::ExclusiveSum(t, b, in, out, (int)n, st);
    });
}

extern "C" kedr_status cub_ref_select_lt_u32(cub_ref *r, const uint32_t *in, uint32_t *out,
                                             size_t n, uint32_t bound, size_t *n_out)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    long long *d_n = r->d_count;
    KEDR_TRY(run(r, "cub::DeviceSelect::If", n, [&](void *t, size_t &b) {
        return cub::DeviceSelect::If(t, b, in, out, d_n, (int)n, less_than{bound}, st);
    }));
    return fetch_count(r, n_out);
}

extern "C" kedr_status cub_ref_partition_lt_u32(cub_ref *r, const uint32_t *in, uint32_t *out,
                                                size_t n, uint32_t bound, size_t *n_true)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    long long *d_n = r->d_count;
    KEDR_TRY(run(r, "cub::DevicePartition::If", n, [&](void *t, size_t &b) {
        return cub::DevicePartition::If(t, b, in, out, d_n, (int)n, less_than{bound}, st);
    }));
    return fetch_count(r, n_true);
}

extern "C" kedr_status cub_ref_histogram_u32(cub_ref *r, const uint32_t *in, size_t n, int bins,
                                             uint32_t *counts)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    /* Levels in double: bins / 2^32 is a power of two for the 256 bins benchmarked, so CUB's
     * (x - lo) * (bins / range) is exact and agrees with kedr's integer binning. It is CUB's
     * fast path: 64-bit integer levels cost a division per sample (on an H100 at 2^28, about
     * 200 Gelem/s against 730 with double levels). */
    return run(r, "cub::DeviceHistogram::HistogramEven", n, [&](void *t, size_t &b) {
        return cub::DeviceHistogram::HistogramEven(t, b, in, counts, bins + 1, 0.0, 4294967296.0,
                                                   (int)n, st);
    });
}

extern "C" kedr_status cub_ref_sort_keys_u32(cub_ref *r, const uint32_t *in, uint32_t *out,
                                             size_t n, int end_bit)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    return run(r, "cub::DeviceRadixSort::SortKeys", n, [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortKeys(t, b, in, out, (int)n, 0, end_bit, st);
    });
}

extern "C" kedr_status cub_ref_sort_keys_u64(cub_ref *r, const uint64_t *in, uint64_t *out,
                                             size_t n)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    return run(r, "cub::DeviceRadixSort::SortKeys (u64)", n, [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortKeys(t, b, in, out, (int)n, 0, 64, st);
    });
}

extern "C" kedr_status cub_ref_sort_pairs_u32(cub_ref *r, const uint32_t *keys_in,
                                              uint32_t *keys_out, const uint32_t *vals_in,
                                              uint32_t *vals_out, size_t n, int end_bit)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    return run(r, "cub::DeviceRadixSort::SortPairs", n, [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortPairs(t, b, keys_in, keys_out, vals_in, vals_out, (int)n,
                                               0, end_bit, st);
    });
}

extern "C" kedr_status cub_ref_rle_u32(cub_ref *r, const uint32_t *in, size_t n, uint32_t *unique,
                                       uint32_t *counts, size_t *n_runs)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    long long *d_n = r->d_count;
    KEDR_TRY(run(r, "cub::DeviceRunLengthEncode::Encode", n, [&](void *t, size_t &b) {
        return cub::DeviceRunLengthEncode::Encode(t, b, in, unique, counts, d_n, (int)n, st);
    }));
    return fetch_count(r, n_runs);
}

extern "C" kedr_status cub_ref_reduce_by_key_u32(cub_ref *r, const uint32_t *keys_in,
                                                 const uint32_t *vals_in, size_t n,
                                                 uint32_t *keys_out, uint32_t *vals_out,
                                                 size_t *n_runs)
{
    cudaStream_t st = KEDR_STREAM(r->ctx);
    long long *d_n = r->d_count;
    KEDR_TRY(run(r, "cub::DeviceReduce::ReduceByKey", n, [&](void *t, size_t &b) {
        return cub::DeviceReduce::ReduceByKey(t, b, keys_in, keys_out, vals_in, vals_out, d_n,
                                              cuda::std::plus<uint32_t>{}, (int)n, st);
    }));
    return fetch_count(r, n_runs);
}
