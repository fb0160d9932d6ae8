/* The cuda back end of the sweeps and measures. A sweep is one thread per grid line, running
 * the same row building and Thomas elimination as the cpu (sweep_impl.h), with its c' scratch
 * interleaved across the lines (element m of line t at m * lines + t), so that the threads of a
 * warp touch neighbouring addresses. Lines are numbered with the other axis of smaller stride
 * fastest: along x and y that is z (stride 1 in the book's layout), so neighbouring threads read
 * neighbouring nodes; along z the sweep runs in the transposed layout (z slowest, y of stride 1),
 * which gives the same pattern (solver.c transposes the fields there and back). */
#include "adi/adi_internal.h"
#include "core/internal.h"
#include "kedr/prim.h"

#include <cuda_runtime.h>
#include <math.h>

#define ADI_HD static __host__ __device__ __forceinline__
#define ADI_UNROLL _Pragma("unroll")
#define REAL float
#define ADI_FN(name) name##_f32
#include "adi/sweep_impl.h"
#undef REAL
#undef ADI_FN
#define REAL double
#define ADI_FN(name) name##_f64
#include "adi/sweep_impl.h"
#undef REAL
#undef ADI_FN

#define ADI_BLOCK 128

__global__ void sweep_kernel_f32(adi_params p, const unsigned char *mask, int d, int lo, int hi,
                                 int64_t nlo, int64_t lines, arrays_f32 a, float *cp)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= lines)
        return;
    int64_t base = (1 + t % nlo) * p.s[lo] + (1 + t / nlo) * p.s[hi];
    sweep_line_f32(&p, mask, d, base, &a, cp + t, lines);
}

__global__ void sweep_kernel_f64(adi_params p, const unsigned char *mask, int d, int lo, int hi,
                                 int64_t nlo, int64_t lines, arrays_f64 a, double *cp)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= lines)
        return;
    int64_t base = (1 + t % nlo) * p.s[lo] + (1 + t / nlo) * p.s[hi];
    sweep_line_f64(&p, mask, d, base, &a, cp + t, lines);
}

template <typename T, typename A>
static void fill_arrays(A *a, const adi_state *out, const adi_state *old, const adi_state *coef)
{
    for (int v = 0; v < 4; v++) {
        a->out[v] = (T *)out->f[v];
        a->old[v] = (const T *)old->f[v];
        a->coef[v] = (const T *)coef->f[v];
    }
}

kedr_status adi_cuda_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                           const adi_state *out, const adi_state *old, const adi_state *coef)
{
    int a1 = (d + 1) % 3, a2 = (d + 2) % 3;
    int lo = p->s[a1] < p->s[a2] ? a1 : a2, hi = p->s[a1] < p->s[a2] ? a2 : a1;
    int64_t nlo = p->n[lo] - 2, lines = nlo * (p->n[hi] - 2);
    if (lines <= 0)
        return KEDR_OK;
    unsigned blocks = (unsigned)((lines + ADI_BLOCK - 1) / ADI_BLOCK);
    cudaStream_t stream = KEDR_STREAM(s->ctx);
    if (s->real_size == 4) {
        arrays_f32 a;
        fill_arrays<float>(&a, out, old, coef);
        sweep_kernel_f32<<<blocks, ADI_BLOCK, 0, stream>>>(*p, mask, d, lo, hi, nlo, lines, a,
                                                           (float *)s->cp);
    } else {
        arrays_f64 a;
        fill_arrays<double>(&a, out, old, coef);
        sweep_kernel_f64<<<blocks, ADI_BLOCK, 0, stream>>>(*p, mask, d, lo, hi, nlo, lines, a,
                                                           (double *)s->cp);
    }
    KEDR_CUDA_LAUNCHED("adi sweep");
    return KEDR_OK;
}

/* The on-chip sweep (KEDR_ADI_SWEEP=chip; the scheme: sweep_impl.h, chip_forward). A block
 * holds W neighbouring lines (threadIdx.x, so that a warp's loads of one chunk node are
 * neighbouring addresses, as the Thomas kernel's) and P chunks of L nodes a line
 * (threadIdx.y); the store of every node's c', s', d' (8 values), the chunks' heads (8) and
 * interface rows (10) are shared memory, value q of thread tid at q T + tid (T = W P threads:
 * consecutive threads, consecutive words). Each thread eliminates its chunk and finds its head;
 * after a barrier, its interface row; one thread a line solves the line's P interface rows;
 * then each thread substitutes back over its chunk, writing each result once. */
static __device__ __forceinline__ void chip_consts(const adi_params *p, int d, const arrays_f32 *a,
                                                   row_consts_f32 *k)
{
    row_consts_init_f32(p, d, a, k);
}
static __device__ __forceinline__ void chip_consts(const adi_params *p, int d, const arrays_f64 *a,
                                                   row_consts_f64 *k)
{
    row_consts_init_f64(p, d, a, k);
}
static __device__ __forceinline__ unsigned chip_fwd(const adi_params *p, const row_consts_f32 *k,
                                                    const unsigned char *mask, int d, int64_t base,
                                                    int m0, int len, const arrays_f32 *a,
                                                    float *st, int64_t ss)
{
    return chip_forward_f32(p, k, mask, d, base, m0, len, a, st, ss);
}
static __device__ __forceinline__ unsigned chip_fwd(const adi_params *p, const row_consts_f64 *k,
                                                    const unsigned char *mask, int d, int64_t base,
                                                    int m0, int len, const arrays_f64 *a,
                                                    double *st, int64_t ss)
{
    return chip_forward_f64(p, k, mask, d, base, m0, len, a, st, ss);
}
static __device__ __forceinline__ void chip_hd(const float *st, int64_t ss, int len, float *h,
                                               int64_t hs)
{
    chip_head_f32(st, ss, len, h, hs);
}
static __device__ __forceinline__ void chip_hd(const double *st, int64_t ss, int len, double *h,
                                               int64_t hs)
{
    chip_head_f64(st, ss, len, h, hs);
}
static __device__ __forceinline__ void chip_rw(const float *st, int64_t ss, int len,
                                               const float *next, int64_t ns, float *row,
                                               int64_t rs)
{
    chip_row_f32(st, ss, len, next, ns, row, rs);
}
static __device__ __forceinline__ void chip_rw(const double *st, int64_t ss, int len,
                                               const double *next, int64_t ns, double *row,
                                               int64_t rs)
{
    chip_row_f64(st, ss, len, next, ns, row, rs);
}
static __device__ __forceinline__ void chip_if(float *rows, int64_t kstep, int64_t rs, int P)
{
    chip_iface_f32(rows, kstep, rs, P);
}
static __device__ __forceinline__ void chip_if(double *rows, int64_t kstep, int64_t rs, int P)
{
    chip_iface_f64(rows, kstep, rs, P);
}
static __device__ __forceinline__ void chip_bk(const arrays_f32 *a, int64_t base, int64_t sd,
                                               int m0, int len, const float *st, int64_t ss,
                                               unsigned fluid, const float zp[4],
                                               const float zk[4])
{
    chip_back_f32(a, base, sd, m0, len, st, ss, fluid, zp, zk);
}
static __device__ __forceinline__ void chip_bk(const arrays_f64 *a, int64_t base, int64_t sd,
                                               int m0, int len, const double *st, int64_t ss,
                                               unsigned fluid, const double zp[4],
                                               const double zk[4])
{
    chip_back_f64(a, base, sd, m0, len, st, ss, fluid, zp, zk);
}

/* A block's threads at most: the kernel then keeps within 128 registers a thread. */
#define ADI_CHIP_THREADS 512

template <typename T, typename A, typename K>
__global__ void __launch_bounds__(ADI_CHIP_THREADS)
    chip_kernel(adi_params p, const unsigned char *mask, int d, int lo, int hi, int64_t nlo,
                int64_t lines, int L, A a)
{
    extern __shared__ __align__(16) unsigned char chip_smem[];
    T *sm = (T *)chip_smem;
    const int W = blockDim.x, P = blockDim.y, x = threadIdx.x, y = threadIdx.y;
    const int T_ = W * P, tid = y * W + x;
    T *st = sm, *heads = sm + (size_t)ADI_CHIP_Q * L * T_, *rows = heads + 8 * (size_t)T_;
    int64_t t = (int64_t)blockIdx.x * W + x;
    /* every thread reaches the barriers; those past the last line do no work */
    const bool active = t < lines;
    int64_t base = active ? (1 + t % nlo) * p.s[lo] + (1 + t / nlo) * p.s[hi] : 0;
    int ni = p.n[d] - 2, m0 = 1 + y * L, len = ni - y * L < L ? ni - y * L : L;
    K k;
    chip_consts(&p, d, &a, &k);
    unsigned fluid = 0;
    if (active) {
        fluid = chip_fwd(&p, &k, mask, d, base, m0, len, &a, st + tid, T_);
        chip_hd(st + tid, T_, len, heads + tid, T_);
    }
    __syncthreads();
    if (active)
        chip_rw(st + tid, T_, len, y + 1 < P ? heads + tid + W : (const T *)NULL, T_, rows + tid,
                T_);
    __syncthreads();
    if (active && y == 0)
        chip_if(rows + x, W, T_, P);
    __syncthreads();
    if (active) {
        T zp[4], zk[4];
        for (int v = 0; v < 4; v++) {
            zk[v] = rows[(6 + v) * T_ + tid];
            zp[v] = y ? rows[(6 + v) * T_ + tid - W] : (T)0;
        }
        chip_bk(&a, base, k.sd, m0, len, st + tid, T_, fluid, zp, zk);
    }
}

/* Lines a block (W) and the launch of chip_kernel; 0 with the error recorded when a block cannot
 * hold W lines of P chunks. */
template <typename T, typename A, typename K>
static kedr_status chip_launch(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                               int lo, int hi, int64_t nlo, int64_t lines, int len, int P,
                               int want_lines, const A &a)
{
    auto kern = chip_kernel<T, A, K>;
    cudaFuncAttributes fa;
    int dev = 0, optin = 0;
    if (cudaFuncGetAttributes(&fa, kern) != cudaSuccess || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
            cudaSuccess) {
        cudaGetLastError();
        return kedr_fail(KEDR_ERR_CUDA, "adi chip sweep: cannot query the kernel's limits");
    }
    /* shared memory a line: the store, the heads and the interface rows of its P chunks */
    size_t line_bytes = (ADI_CHIP_Q * (size_t)len + 8 + ADI_CHIP_ROW) * P * sizeof(T);
    size_t max_threads = (size_t)fa.maxThreadsPerBlock; /* within ADI_CHIP_THREADS */
    /* W lines a block: as many as keep a block within 96 KiB (two blocks an SM of an H100)
     * and the kernel's threads a block, at most 32 */
    size_t W = want_lines > 0 ? (size_t)want_lines : 32;
    if (want_lines <= 0)
        while (W > 1 && (W * P > max_threads || W * line_bytes > 96 * 1024))
            W /= 2;
    if (W * P > max_threads || W * line_bytes > (size_t)optin)
        return kedr_fail(KEDR_ERR_INVALID, "adi chip sweep: %zu line%s of %d unknowns in chunks "
                         "of %d a block need %zu threads and %zu bytes of shared memory; this "
                         "GPU and kernel allow %zu and %d (expected a smaller KEDR_ADI_CHIP_LINES, "
                         "a longer KEDR_ADI_CHIP_LEN up to %d, or KEDR_ADI_SWEEP=thomas)",
                         W, W > 1 ? "s" : "", p->n[d] - 2, len, W * P, W * line_bytes,
                         max_threads, optin, ADI_CHIP_MAXLEN);
    size_t bytes = W * line_bytes;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return kedr_fail(KEDR_ERR_CUDA, "adi chip sweep: %zu bytes of shared memory a block: %s",
                         bytes, cudaGetErrorString(e));
    }
    dim3 block((unsigned)W, (unsigned)P);
    unsigned blocks = (unsigned)((lines + (int64_t)W - 1) / (int64_t)W);
    kern<<<blocks, block, bytes, KEDR_STREAM(s->ctx)>>>(*p, mask, d, lo, hi, nlo, lines, len, a);
    KEDR_CUDA_LAUNCHED("adi chip sweep");
    return KEDR_OK;
}

kedr_status adi_cuda_chip_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask,
                                int d, const adi_state *out, const adi_state *old,
                                const adi_state *coef, int len, int want_lines)
{
    int a1 = (d + 1) % 3, a2 = (d + 2) % 3;
    int lo = p->s[a1] < p->s[a2] ? a1 : a2, hi = p->s[a1] < p->s[a2] ? a2 : a1;
    int64_t nlo = p->n[lo] - 2, lines = nlo * (p->n[hi] - 2);
    int ni = p->n[d] - 2;
    if (lines <= 0 || ni <= 0)
        return KEDR_OK;
    int P = (ni + len - 1) / len;
    if (s->real_size == 4) {
        arrays_f32 a;
        fill_arrays<float>(&a, out, old, coef);
        return chip_launch<float, arrays_f32, row_consts_f32>(s, p, mask, d, lo, hi, nlo, lines,
                                                               len, P, want_lines, a);
    }
    arrays_f64 a;
    fill_arrays<double>(&a, out, old, coef);
    return chip_launch<double, arrays_f64, row_consts_f64>(s, p, mask, d, lo, hi, nlo, lines, len,
                                                            P, want_lines, a);
}

/* The register sweep (KEDR_ADI_SWEEP=reg; the scheme: sweep_impl.h, reg_forward). A block holds
 * W lines (threadIdx.x) times P chunks of L nodes a line (threadIdx.y), one thread a chunk, the
 * chunk's c', s', d' (8 L values) in the thread's registers. Lines are numbered over the whole
 * row of the lo axis, its two boundary positions included (those threads only join the
 * barriers), so that a block's W lines start on the same 32-byte sector boundary in every row
 * when a row's bytes are a multiple of 32: W = 32 bytes / the real's size fills whole sectors.
 * Shared memory, two buffers of 10 values a thread (value q of thread tid at q T + tid,
 * T = W P), holds the chunks' heads, then their interface rows through the steps of cyclic
 * reduction, then their unknowns z. The forward phase writes no global memory, so a chunk's loads are all free to be
 * in flight at once. */
#define ADI_REG_THREADS 512

/* The C names of sweep_impl.h's functions for each real type. */
#define ADI_REG_WRAP(T, SUF)                                                                    \
    static __device__ __forceinline__ void reg_consts(const adi_params *p, int d,              \
                                                      const arrays_##SUF *a,                   \
                                                      row_consts_##SUF *k)                     \
    {                                                                                          \
        row_consts_init_##SUF(p, d, a, k);                                                     \
    }                                                                                          \
    static __device__ __forceinline__ unsigned reg_fwd(                                        \
        const adi_params *p, const row_consts_##SUF *k, const unsigned char *mask, int d,      \
        int64_t base, int m0, int o, int L, const arrays_##SUF *a, T *st)                      \
    {                                                                                          \
        return reg_forward_##SUF(p, k, mask, d, base, m0, o, L, a, st);                        \
    }                                                                                          \
    static __device__ __forceinline__ void reg_hd(const T *st, int o, int L, T *h)             \
    {                                                                                          \
        reg_head_##SUF(st, o, L, h);                                                           \
    }                                                                                          \
    static __device__ __forceinline__ void reg_rw(const T *st, int L, int has_next,            \
                                                  const T *next, T *row)                       \
    {                                                                                          \
        reg_row_##SUF(st, L, has_next, next, row);                                             \
    }                                                                                          \
    static __device__ __forceinline__ void reg_unit(T *row) { reg_unit_row_##SUF(row); }       \
    static __device__ __forceinline__ void reg_step(T *row, const T *lo, const T *hi)          \
    {                                                                                          \
        reg_pcr_##SUF(row, lo, hi);                                                            \
    }                                                                                          \
    static __device__ __forceinline__ void reg_bk(const arrays_##SUF *a, int64_t base,         \
                                                  int64_t sd, int m0, int o, int L,            \
                                                  const T *st, unsigned fluid, const T *zp,    \
                                                  const T *zk)                                 \
    {                                                                                          \
        reg_back_##SUF(a, base, sd, m0, o, L, st, fluid, zp, zk);                              \
    }
ADI_REG_WRAP(float, f32)
ADI_REG_WRAP(double, f64)
/* (the same for both types) */
static __device__ __forceinline__ void reg_ck(int c, int L, int ni, int *m0, int *o)
{
    reg_chunk_f32(c, L, ni, m0, o);
}

template <typename T, typename A, typename K, int L, int d>
__global__ void __launch_bounds__(ADI_REG_THREADS)
    reg_kernel(adi_params p, const unsigned char *mask, int lo, int hi, int64_t lines, A a)
{
    extern __shared__ __align__(16) unsigned char reg_smem[];
    T *sm = (T *)reg_smem;
    const int W = blockDim.x, P = blockDim.y, x = threadIdx.x, y = threadIdx.y;
    const int T_ = W * P, tid = y * W + x;
    const int64_t nrow = p.n[lo];
    int64_t t = (int64_t)blockIdx.x * W + x, clo = t % nrow;
    /* every thread reaches the barriers; the boundary positions and those past the last line
     * do no work */
    const bool active = t < lines && clo >= 1 && clo <= nrow - 2;
    int64_t base = active ? clo * p.s[lo] + (1 + t / nrow) * p.s[hi] : 0;
    int ni = p.n[d] - 2, m0, o;
    reg_ck(y, L, ni, &m0, &o);
    K k;
    reg_consts(&p, d, &a, &k);
    T st[8 * L], row[10], nb[10];
    unsigned fluid = 0;
    if (active) {
        fluid = reg_fwd(&p, &k, mask, d, base, m0, o, L, &a, st);
        reg_hd(st, o, L, nb);
        for (int q = 0; q < 8; q++)
            sm[q * T_ + tid] = nb[q];
    }
    __syncthreads();
    if (active) {
        int has_next = y + 1 < P;
        for (int q = 0; q < 8; q++)
            nb[q] = has_next ? sm[q * T_ + tid + (has_next ? W : 0)] : (T)0;
        reg_rw(st, L, has_next, nb, row);
    }
    /* Two buffers of 10 T values: the heads are in buffer 0; each step of cyclic reduction
     * writes its rows into the other buffer than the step before read (b), so one barrier a
     * step suffices: a thread writes buffer b only after the barrier of the step before, which
     * every thread passed after its last read of b (two steps ago, or the heads). */
    int b = 1;
    for (int s = 1; s < P; s *= 2, b ^= 1) {
        T *buf = sm + (size_t)b * 10 * T_;
        if (active)
            for (int q = 0; q < 10; q++)
                buf[q * T_ + tid] = row[q];
        __syncthreads();
        if (active) {
            T up[10];
            if (y >= s)
                for (int q = 0; q < 10; q++)
                    nb[q] = buf[q * T_ + tid - s * W];
            else
                reg_unit(nb);
            if (y + s < P)
                for (int q = 0; q < 10; q++)
                    up[q] = buf[q * T_ + tid + s * W];
            else
                reg_unit(up);
            reg_step(row, nb, up);
        }
    }
    T zk[4], zp[4];
    for (int v = 0; v < 4; v++)
        zk[v] = row[6 + v] / row[2 + (v == 3)];
    T *zb = sm + (size_t)b * 10 * T_; /* the buffer no thread reads now */
    if (active)
        for (int v = 0; v < 4; v++)
            zb[v * T_ + tid] = zk[v];
    __syncthreads();
    if (active) {
        for (int v = 0; v < 4; v++)
            zp[v] = y ? zb[v * T_ + tid - (y ? W : 0)] : (T)0;
        reg_bk(&a, base, k.sd, m0, o, L, st, fluid, zp, zk);
    }
}

/* The launch of reg_kernel<L, d>: W lines a block (want_lines, or 32 bytes of reals, halved
 * while a block would pass ADI_REG_THREADS threads). The axis is a template argument, so that
 * the choices among the fields by axis (the advecting velocity, the dissipation's terms) are
 * made when compiling and no branch separates a chunk's loads. */
template <typename T, typename A, typename K, int L, int d>
static kedr_status reg_launch(kedr_adi *s, const adi_params *p, const unsigned char *mask,
                              int lo, int hi, int want_lines, const A &a)
{
    int ni = p->n[d] - 2, P = (ni + L - 1) / L;
    int64_t lines = (int64_t)p->n[lo] * (p->n[hi] - 2);
    if (L > ni) /* adi_reg_len keeps chunks within the line */
        return kedr_fail(KEDR_ERR_INVALID, "adi reg sweep: chunks of %d nodes on lines of %d",
                         L, ni);
    int W = want_lines > 0 ? want_lines : 32 / (int)sizeof(T);
    if (want_lines <= 0) /* whole 32-byte sectors a warp's load first, then fewer lines */
        while (W > 1 && (int64_t)W * P > ADI_REG_THREADS)
            W /= 2;
    if ((int64_t)W * P > ADI_REG_THREADS)
        return kedr_fail(KEDR_ERR_INVALID, "adi reg sweep: %d line%s of %d unknowns in chunks of "
                         "%d a block need %lld threads; the kernel allows %d (expected a smaller "
                         "KEDR_ADI_CHIP_LINES, a longer KEDR_ADI_REG_LEN up to %d, or "
                         "KEDR_ADI_SWEEP=thomas)", W, W > 1 ? "s" : "", ni, L,
                         (long long)W * P, ADI_REG_THREADS, ADI_REG_MAXLEN);
    size_t bytes = (size_t)20 * W * P * sizeof(T); /* two buffers of 10 values a thread */
    auto kern = reg_kernel<T, A, K, L, d>;
    if (bytes > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)bytes);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return kedr_fail(KEDR_ERR_CUDA, "adi reg sweep: %zu bytes of shared memory a "
                             "block: %s", bytes, cudaGetErrorString(e));
        }
    }
    dim3 block((unsigned)W, (unsigned)P);
    unsigned blocks = (unsigned)((lines + W - 1) / W);
    kern<<<blocks, block, bytes, KEDR_STREAM(s->ctx)>>>(*p, mask, lo, hi, lines, a);
    KEDR_CUDA_LAUNCHED("adi reg sweep");
    return KEDR_OK;
}

template <typename T, typename A, typename K, int L>
static kedr_status reg_axis(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                            int lo, int hi, int want_lines, const A &a)
{
    return d == 0   ? reg_launch<T, A, K, L, 0>(s, p, mask, lo, hi, want_lines, a)
           : d == 1 ? reg_launch<T, A, K, L, 1>(s, p, mask, lo, hi, want_lines, a)
                    : reg_launch<T, A, K, L, 2>(s, p, mask, lo, hi, want_lines, a);
}

template <typename T, typename A, typename K>
static kedr_status reg_dispatch(kedr_adi *s, const adi_params *p, const unsigned char *mask,
                                int d, int lo, int hi, int len, int want_lines, const A &a)
{
    switch (len) {
    case 2:
        return reg_axis<T, A, K, 2>(s, p, mask, d, lo, hi, want_lines, a);
    case 4:
        return reg_axis<T, A, K, 4>(s, p, mask, d, lo, hi, want_lines, a);
    case 8:
        return reg_axis<T, A, K, 8>(s, p, mask, d, lo, hi, want_lines, a);
    case 16:
        return reg_axis<T, A, K, 16>(s, p, mask, d, lo, hi, want_lines, a);
    }
    return kedr_fail(KEDR_ERR_INVALID, "adi reg sweep: chunks of %d nodes: expected 2, 4, 8 or "
                     "16", len);
}

kedr_status adi_cuda_reg_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask,
                               int d, const adi_state *out, const adi_state *old,
                               const adi_state *coef, int len, int want_lines)
{
    int a1 = (d + 1) % 3, a2 = (d + 2) % 3;
    int lo = p->s[a1] < p->s[a2] ? a1 : a2, hi = p->s[a1] < p->s[a2] ? a2 : a1;
    if (p->n[lo] - 2 <= 0 || p->n[hi] - 2 <= 0 || p->n[d] - 2 <= 0)
        return KEDR_OK;
    if (s->real_size == 4) {
        arrays_f32 a;
        fill_arrays<float>(&a, out, old, coef);
        return reg_dispatch<float, arrays_f32, row_consts_f32>(s, p, mask, d, lo, hi, len,
                                                                want_lines, a);
    }
    arrays_f64 a;
    fill_arrays<double>(&a, out, old, coef);
    return reg_dispatch<double, arrays_f64, row_consts_f64>(s, p, mask, d, lo, hi, len,
                                                             want_lines, a);
}

/* The six measures of the nodes, reduced over each block of ADI_MEASURE_BLOCK nodes (warp
 * shuffles, then the block's warps) into buf (measure k of block b at k * blocks + b; sums for
 * k = 0, 4, 5, maxima for the others; 0 off the unknowns), then by measure_final_kernel.
 * Writing one value a node and measure instead would move 96 bytes a node, twice the traffic of
 * the measure's own reads in single precision. */
#define ADI_MEASURE_BLOCK 256

static __device__ __forceinline__ double measure_combine(int k, double a, double b)
{
    return k == 0 || k == 4 || k == 5 ? a + b : fmax(a, b);
}

template <typename T>
__global__ void __launch_bounds__(ADI_MEASURE_BLOCK)
    measure_kernel(adi_params p, const unsigned char *mask, size_t nodes, size_t plane,
                   const T *g0, const T *g1, const T *g2, const T *g3, const T *p0, const T *p1,
                   const T *p2, double *buf)
{
    __shared__ double part[6][ADI_MEASURE_BLOCK / 32];
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    double o[6] = {0, 0, 0, 0, 0, 0};
    /* the own planes: not the halos, which are other ranks' */
    if (i < nodes && mask[i] == ADI_FLUID && i >= plane && i < nodes - plane) {
        const T *g[4] = {g0, g1, g2, g3}, *pr[4] = {p0, p1, p2, NULL};
        if (sizeof(T) == 4)
            measure_node_f32(&p, mask, (const float *const *)g,
                             p0 ? (const float *const *)pr : NULL, (int64_t)i, o);
        else
            measure_node_f64(&p, mask, (const double *const *)g,
                             p0 ? (const double *const *)pr : NULL, (int64_t)i, o);
    }
    for (int k = 0; k < 6; k++)
        for (int off = 16; off > 0; off /= 2)
            o[k] = measure_combine(k, o[k], __shfl_down_sync(0xffffffffu, o[k], off));
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    if (lane == 0)
        for (int k = 0; k < 6; k++)
            part[k][warp] = o[k];
    __syncthreads();
    if (threadIdx.x < 6) {
        int k = threadIdx.x;
        double r = part[k][0];
        for (int w = 1; w < warps; w++)
            r = measure_combine(k, r, part[k][w]);
        buf[(size_t)k * gridDim.x + blockIdx.x] = r;
    }
}

/* The blocks' partial measures (k of block b at k * blocks + b) reduced: block k of this
 * kernel reduces measure k into out[k]. One launch and one download for the six, instead of a
 * reduction with its own wait for each. */
__global__ void __launch_bounds__(ADI_MEASURE_BLOCK)
    measure_final_kernel(const double *part, unsigned blocks, double *out)
{
    __shared__ double red[ADI_MEASURE_BLOCK / 32];
    int k = blockIdx.x;
    double r = 0; /* neutral for the sums and for the maxima (of non-negative measures) */
    for (unsigned b = threadIdx.x; b < blocks; b += blockDim.x)
        r = measure_combine(k, r, part[(size_t)k * blocks + b]);
    for (int off = 16; off > 0; off /= 2)
        r = measure_combine(k, r, __shfl_down_sync(0xffffffffu, r, off));
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = r;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)blockDim.x / 32; w++)
            r = measure_combine(k, r, red[w]);
        out[k] = r;
    }
}

kedr_status adi_cuda_measure(kedr_adi *s, const adi_state *g, const adi_state *prev,
                             adi_measure *m)
{
    size_t n = s->nodes;
    unsigned blocks = (unsigned)((n + ADI_MEASURE_BLOCK - 1) / ADI_MEASURE_BLOCK);
    double *buf = (double *)s->measure_buf;
    cudaStream_t stream = KEDR_STREAM(s->ctx);
    if (s->real_size == 4) {
        const float *pv[3] = {NULL, NULL, NULL};
        for (int v = 0; prev && v < 3; v++)
            pv[v] = (const float *)prev->f[v];
        measure_kernel<float><<<blocks, ADI_MEASURE_BLOCK, 0, stream>>>(
            s->p, s->mask, n, s->plane, (const float *)g->f[0], (const float *)g->f[1],
            (const float *)g->f[2], (const float *)g->f[3], pv[0], pv[1], pv[2], buf);
    } else {
        const double *pv[3] = {NULL, NULL, NULL};
        for (int v = 0; prev && v < 3; v++)
            pv[v] = (const double *)prev->f[v];
        measure_kernel<double><<<blocks, ADI_MEASURE_BLOCK, 0, stream>>>(
            s->p, s->mask, n, s->plane, (const double *)g->f[0], (const double *)g->f[1],
            (const double *)g->f[2], (const double *)g->f[3], pv[0], pv[1], pv[2], buf);
    }
    KEDR_CUDA_LAUNCHED("adi measure");
    double r[6], *out = buf + (size_t)6 * blocks; /* within the buffer's 6 doubles a node */
    measure_final_kernel<<<6, ADI_MEASURE_BLOCK, 0, stream>>>(buf, blocks, out);
    KEDR_CUDA_LAUNCHED("adi measure reduction");
    KEDR_TRY(kedr_download(s->ctx, r, out, sizeof r));
    m->div2 = r[0];
    m->divmax = r[1];
    m->change = r[2];
    m->speed2max = r[3];
    m->energy = r[4];
    m->nonfinite = r[5];
    return KEDR_OK;
}

/* The partitioned X sweep's rows: a thread a node of the own planes. */
template <typename T, typename A>
__global__ void part_rows_kernel(adi_params p, const unsigned char *mask, int64_t plane,
                                 int64_t n, A a, T *abc, T *dw)
{
    int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n)
        return;
    if (sizeof(T) == 4) {
        row_consts_f32 k;
        row_consts_init_f32(&p, 0, (const arrays_f32 *)&a, &k);
        part_node_f32(&p, &k, mask, plane + e, (const arrays_f32 *)&a, (float *)abc, n, e,
                      (float *)dw, 4 * n);
    } else {
        row_consts_f64 k;
        row_consts_init_f64(&p, 0, (const arrays_f64 *)&a, &k);
        part_node_f64(&p, &k, mask, plane + e, (const arrays_f64 *)&a, (double *)abc, n, e,
                      (double *)dw, 4 * n);
    }
}

kedr_status adi_cuda_part_rows(kedr_adi *s, const adi_state *out, const adi_state *old,
                               const adi_state *coef)
{
    int64_t plane = (int64_t)s->plane, n = (int64_t)(s->hi - s->lo) * plane;
    if (n <= 0)
        return KEDR_OK;
    unsigned blocks = (unsigned)((n + ADI_BLOCK - 1) / ADI_BLOCK);
    cudaStream_t stream = KEDR_STREAM(s->ctx);
    if (s->real_size == 4) {
        arrays_f32 a;
        fill_arrays<float>(&a, out, old, coef);
        part_rows_kernel<float><<<blocks, ADI_BLOCK, 0, stream>>>(
            s->p, s->mask, plane, n, a, (float *)s->parts.abc, (float *)s->parts.dw);
    } else {
        arrays_f64 a;
        fill_arrays<double>(&a, out, old, coef);
        part_rows_kernel<double><<<blocks, ADI_BLOCK, 0, stream>>>(
            s->p, s->mask, plane, n, a, (double *)s->parts.abc, (double *)s->parts.dw);
    }
    KEDR_CUDA_LAUNCHED("adi partitioned rows");
    return KEDR_OK;
}

/* The fused partitioned X sweep: a thread a line (part_line), then a thread a node
 * (part_finish). */
template <typename T, typename A>
__global__ void part_lines_kernel(adi_params p, const unsigned char *mask, int64_t plane, int n,
                                  A a, T *w, int64_t ws, T *ifc)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= plane)
        return;
    if (sizeof(T) == 4) {
        row_consts_f32 k;
        row_consts_init_f32(&p, 0, (const arrays_f32 *)&a, &k);
        part_line_f32(&p, &k, mask, t, n, plane, (const arrays_f32 *)&a, (float *)w, ws,
                      (float *)ifc);
    } else {
        row_consts_f64 k;
        row_consts_init_f64(&p, 0, (const arrays_f64 *)&a, &k);
        part_line_f64(&p, &k, mask, t, n, plane, (const arrays_f64 *)&a, (double *)w, ws,
                      (double *)ifc);
    }
}

template <typename T, typename A>
__global__ void part_finish_kernel(A a, const T *w, int64_t ws, const T *x, int n,
                                   int64_t plane)
{
    int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ws)
        return;
    if (sizeof(T) == 4)
        part_finish_f32((const arrays_f32 *)&a, (const float *)w, ws, (const float *)x, e, n,
                        plane);
    else
        part_finish_f64((const arrays_f64 *)&a, (const double *)w, ws, (const double *)x, e, n,
                        plane);
}

kedr_status adi_cuda_part_lines(kedr_adi *s, const adi_state *out, const adi_state *old,
                                const adi_state *coef)
{
    int64_t plane = (int64_t)s->plane, n = s->hi - s->lo, ws = n * plane;
    unsigned blocks = (unsigned)((plane + ADI_BLOCK - 1) / ADI_BLOCK);
    cudaStream_t stream = KEDR_STREAM(s->ctx);
    if (s->real_size == 4) {
        arrays_f32 a;
        fill_arrays<float>(&a, out, old, coef);
        part_lines_kernel<float><<<blocks, ADI_BLOCK, 0, stream>>>(
            s->p, s->mask, plane, (int)n, a, (float *)s->parts.rs, ws, (float *)s->parts.iface);
    } else {
        arrays_f64 a;
        fill_arrays<double>(&a, out, old, coef);
        part_lines_kernel<double><<<blocks, ADI_BLOCK, 0, stream>>>(
            s->p, s->mask, plane, (int)n, a, (double *)s->parts.rs, ws,
            (double *)s->parts.iface);
    }
    KEDR_CUDA_LAUNCHED("adi partitioned lines");
    return KEDR_OK;
}

kedr_status adi_cuda_part_finish(kedr_adi *s, const adi_state *out)
{
    int64_t plane = (int64_t)s->plane, n = s->hi - s->lo, ws = n * plane;
    unsigned blocks = (unsigned)((ws + 255) / 256);
    cudaStream_t stream = KEDR_STREAM(s->ctx);
    if (s->real_size == 4) {
        arrays_f32 a;
        fill_arrays<float>(&a, out, out, out);
        part_finish_kernel<float><<<blocks, 256, 0, stream>>>(
            a, (const float *)s->parts.rs, ws, (const float *)s->parts.x, (int)n, plane);
    } else {
        arrays_f64 a;
        fill_arrays<double>(&a, out, out, out);
        part_finish_kernel<double><<<blocks, 256, 0, stream>>>(
            a, (const double *)s->parts.rs, ws, (const double *)s->parts.x, (int)n, plane);
    }
    KEDR_CUDA_LAUNCHED("adi partitioned completion");
    return KEDR_OK;
}

/* x_interface = gather: a thread a line and field (e = v plane + t), solving field v's
 * interface system of line t: 2 P rows, rank p's rows 2 p + j from slot p of g (unit u, row j of
 * line t at (2 u + j) plane + t), by Thomas in double precision with the host's arithmetic
 * (ranks.c; no fused multiply-adds here), so that the two agree bit for bit. The first row's a
 * and the last row's c couple to nothing. Only the unknowns of this rank's rows 2 rank + j go to
 * x (field v's row j at (2 v + j) plane + t). The scratch, RMAX >= 2 P doubles twice, is the
 * thread's local memory. */
template <typename T, int RMAX>
__global__ void iface_solve_kernel(const T *g, int64_t plane, int P, int rank, T *x)
{
    int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= 4 * plane)
        return;
    int v = (int)(e / plane), R = 2 * P;
    int64_t t = e % plane, unit = 2 * plane, slot = ADI_IF_SENT * unit;
    int64_t ua = (v == 3 ? ADI_IF_AT : ADI_IF_AU) * unit;
    int64_t uc = (v == 3 ? ADI_IF_CT : ADI_IF_CU) * unit, ud = (ADI_IF_D0 + v) * unit;
    double c[RMAX], d[RMAX];
    for (int r = 0; r < R; r++) {
        const T *m = g + (r / 2) * slot + (r % 2) * plane + t;
        double last = r == R - 1 ? 0 : 1;
        if (r == 0) {
            c[0] = last * (double)m[uc];
            d[0] = (double)m[ud];
        } else {
            double a = (double)m[ua], piv = 1 / (1 - a * c[r - 1]);
            c[r] = last * (double)m[uc] * piv;
            d[r] = ((double)m[ud] - a * d[r - 1]) * piv;
        }
    }
    for (int r = R - 1; r >= 2 * rank; r--) {
        if (r < R - 1)
            d[r] -= c[r] * d[r + 1];
        if (r / 2 == rank)
            x[(2 * v + r % 2) * plane + t] = (T)d[r];
    }
}

template <typename T>
static void iface_solve_launch(kedr_adi *s, unsigned blocks, cudaStream_t stream)
{
    const T *g = (const T *)s->parts.gather;
    T *x = (T *)s->parts.x;
    int64_t plane = (int64_t)s->plane;
    if (s->nranks <= 4)
        iface_solve_kernel<T, 8><<<blocks, ADI_BLOCK, 0, stream>>>(g, plane, s->nranks, s->rank,
                                                                  x);
    else
        iface_solve_kernel<T, 2 * ADI_GATHER_MAX_RANKS><<<blocks, ADI_BLOCK, 0, stream>>>(
            g, plane, s->nranks, s->rank, x);
}

kedr_status adi_cuda_iface_solve(kedr_adi *s)
{
    if (s->nranks > ADI_GATHER_MAX_RANKS)
        return kedr_fail(KEDR_ERR_INVALID, "adi: the gathered interface solve takes at most %d "
                         "ranks on cuda; this run has %d", ADI_GATHER_MAX_RANKS, s->nranks);
    int64_t n = 4 * (int64_t)s->plane;
    unsigned blocks = (unsigned)((n + ADI_BLOCK - 1) / ADI_BLOCK);
    cudaStream_t stream = KEDR_STREAM(s->ctx);
    if (s->real_size == 4)
        iface_solve_launch<float>(s, blocks, stream);
    else
        iface_solve_launch<double>(s, blocks, stream);
    KEDR_CUDA_LAUNCHED("adi gathered interface solve");
    return KEDR_OK;
}

/* Copies plane l of nf fields (layout strides s0, s1, s2) to or from the units of buf: a thread
 * an element (v, j, k). */
template <typename T>
__global__ void halo_kernel(T *f0, T *f1, T *f2, T *f3, int nf, int64_t l, int64_t s0,
                            int64_t s1, int64_t s2, int ny, int nz, T *buf, int pack)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, plane = (int64_t)ny * nz;
    if (t >= nf * plane)
        return;
    int v = (int)(t / plane);
    int64_t e = t % plane, j = e / nz, k = e % nz;
    T *f = v == 0 ? f0 : v == 1 ? f1 : v == 2 ? f2 : f3;
    int64_t idx = l * s0 + j * s1 + k * s2;
    if (pack)
        buf[t] = f[idx];
    else
        f[idx] = buf[t];
}

kedr_status adi_cuda_halo(kedr_adi *s, const adi_params *p, void *const *f, int nf, int pack,
                          int lo, int hi)
{
    size_t plane = s->plane, rs = (size_t)s->real_size;
    int64_t total = (int64_t)nf * (int64_t)plane;
    if (total <= 0)
        return KEDR_OK;
    unsigned blocks = (unsigned)((total + 255) / 256);
    cudaStream_t stream = KEDR_STREAM(s->ctx);
    void *g[4] = {f[0], nf > 1 ? f[1] : NULL, nf > 2 ? f[2] : NULL, nf > 3 ? f[3] : NULL};
    for (int side = 0; side < 2; side++) {
        if (!(side ? hi : lo))
            continue;
        int64_t l = pack ? (side ? s->nxl - 2 : 1) : (side ? s->nxl - 1 : 0);
        char *b = (char *)s->parts.halo + ((pack ? 0 : 2) + side) * 4 * plane * rs;
        if (rs == 4)
            halo_kernel<float><<<blocks, 256, 0, stream>>>(
                (float *)g[0], (float *)g[1], (float *)g[2], (float *)g[3], nf, l, p->s[0],
                p->s[1], p->s[2], p->n[1], p->n[2], (float *)b, pack);
        else
            halo_kernel<double><<<blocks, 256, 0, stream>>>(
                (double *)g[0], (double *)g[1], (double *)g[2], (double *)g[3], nf, l, p->s[0],
                p->s[1], p->s[2], p->n[1], p->n[2], (double *)b, pack);
        KEDR_CUDA_LAUNCHED("adi halo planes");
    }
    return KEDR_OK;
}

kedr_status adi_cuda_host_alloc(void **p, size_t bytes)
{
    if (cudaMallocHost(p, bytes ? bytes : 1) != cudaSuccess) {
        cudaGetLastError();
        *p = NULL;
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_create: out of page-locked host memory "
                         "(%zu bytes)", bytes);
    }
    return KEDR_OK;
}

void adi_cuda_host_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}
