/* The direct FFT / DCT Poisson solver on cuda (method fft), with cuFFT: the same transforms as
 * FFTW's on the cpu (fft.c), one axis at a time, each a batch of 1D transforms of the axis's
 * lines, in the context's stream, the data staying on the device. Each axis's output is in
 * FFTW's order and scaling, so the eigenvalues and the division are the cpu's.
 *
 * cuFFT has no DCT. A DCT-II of length n (FFTW's REDFT10, Y_k = 2 sum_j x_j cos(pi k (2j+1) /
 * (2n))) is one real FFT of length n of the reordered line v_m = x_{2m}, v_{n-1-m} = x_{2m+1}
 * and a twiddle: Y_k = 2 Re(e^{-i pi k / (2n)} V_k), V_{n-k} = conj(V_k) (Makhoul, "A fast
 * cosine transform in one and multiple dimensions", IEEE Trans. ASSP 28(1), 1980). Its inverse
 * up to 2n (REDFT01) runs the steps backwards: V_k = e^{i pi k / (2n)} (Y_k - i Y_{n-k}) with
 * Y_n = 0, for k = 0 .. n/2, one complex-to-real inverse FFT (unnormalised: 2n v), and the
 * reorder undone. A periodic axis is a real FFT whose n/2 + 1 complex outputs are packed as
 * FFTW's halfcomplex (R2HC: r_0 .. r_{n/2}, then i_{(n-1)/2} .. i_1 at n - k), and unpacked for
 * the inverse (HC2R). The per-element steps are in fft.h (shared with a host emulation of this
 * layout in test_flow_fft). Each axis's transforms run in place in one buffer of lines n/2 + 1
 * complex long (a real line padded to 2 (n/2 + 1)); the kernels before and after move the
 * axis's lines between the grid's order and the buffer's. */
#include "core/internal.h"
#include "flow/block_sum.cuh"
#include "flow/fft.h"

#include <cufft.h>
#include <stdlib.h>

#define FFT_THREADS 256

static unsigned blocks_for(size_t n)
{
    size_t b = (n + FFT_THREADS - 1) / FFT_THREADS;
    return b < 1 ? 1 : b > 65535u * 16 ? 65535u * 16 : (unsigned)b;
}
#define LAUNCH(n) blocks_for(n), FFT_THREADS, 0, KEDR_STREAM(ctx)

typedef flow_fft_axis fft_axis;

__global__ void k_fwd_pre(fft_axis A, size_t N, const double *in, double *buf)
{
    GRID_STRIDE(c, N)
    {
        size_t b;
        int m;
        flow_fft_line_of(&A, c, &b, &m);
        buf[b * A.pad + flow_fft_reorder(&A, m)] = in[c];
    }
}

__global__ void k_fwd_post(fft_axis A, size_t N, const double *buf, double *x)
{
    GRID_STRIDE(c, N)
    {
        size_t b;
        int k;
        flow_fft_line_of(&A, c, &b, &k);
        x[c] = flow_fft_forward_out(&A, buf + b * A.pad, k);
    }
}

__global__ void k_bwd_pre(fft_axis A, const double *x, double *buf)
{
    size_t h = (size_t)(A.n / 2 + 1);
    GRID_STRIDE(t, A.lines * h)
    {
        size_t b = t / h;
        int k = (int)(t - b * h);
        flow_fft_inverse_in(&A, x + flow_fft_line_start(&A, b), k, &buf[2 * t], &buf[2 * t + 1]);
    }
}

__global__ void k_bwd_post(fft_axis A, size_t N, const double *buf, double *x)
{
    GRID_STRIDE(c, N)
    {
        size_t b;
        int m;
        flow_fft_line_of(&A, c, &b, &m);
        x[c] = buf[b * A.pad + flow_fft_reorder(&A, m)];
    }
}

__global__ void k_divide(flow_level L, const double *lam0, const double *lam1,
                         const double *lam2, double scale, const double *in, double *x)
{
    GRID_STRIDE(c, L.N)
    {
        size_t row = c / (size_t)L.n[0];
        int i = (int)(c - row * (size_t)L.n[0]);
        int j = (int)(row % (size_t)L.n[1]), k = (int)(row / (size_t)L.n[1]);
        x[c] = flow_fft_divide(in[c], lam0[i] + lam1[j] + lam2[k], scale);
    }
}

struct flow_fft_cuda {
    fft_axis ax[3];
    int planned[3][2]; /* fwd[a], bwd[a] created */
    cufftHandle fwd[3], bwd[3];
    double *buf;       /* the lines' transforms, in place */
    void *work;        /* cuFFT's work area, shared by the plans (one stream: one at a time) */
    double *lam[3];
    double scale;
    size_t bytes;
};

static const char *cufft_error(cufftResult r)
{
    switch (r) {
    case CUFFT_ALLOC_FAILED: return "out of memory";
    case CUFFT_INVALID_VALUE: return "invalid value";
    case CUFFT_INVALID_SIZE: return "invalid size";
    case CUFFT_INTERNAL_ERROR: return "internal error";
    case CUFFT_EXEC_FAILED: return "execution failed";
    case CUFFT_SETUP_FAILED: return "setup failed (no CUDA device or library?)";
    default: return "error";
    }
}

#define CUFFT_TRY(call, what, a)                                                               \
    do {                                                                                      \
        cufftResult r_ = (call);                                                              \
        if (r_ != CUFFT_SUCCESS)                                                              \
            return kedr_fail(r_ == CUFFT_ALLOC_FAILED ? KEDR_ERR_NOMEM : KEDR_ERR_CUDA,        \
                             "kedr flow: cuFFT %s of %zu lines of %d cells (axis %c): %s "     \
                             "(cufftResult %d)", what, cu->ax[a].lines, cu->ax[a].n, "xyz"[a], \
                             cufft_error(r_), (int)r_);                                        \
    } while (0)

static kedr_status dev_alloc(kedr_ctx *ctx, void **p, size_t bytes, const char *what)
{
    if (kedr_alloc(ctx, p, bytes) == KEDR_OK)
        return KEDR_OK;
    char b[32];
    return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: the FFT Poisson solver's %s (%s) does not fit "
                     "in device memory: a smaller grid, or solver = mg", what,
                     kedr_format_bytes((double)bytes, b, sizeof b));
}

extern "C" kedr_status flow_fft_cuda_setup(kedr_ctx *ctx, const flow_level *L,
                                           double *const lam[3], double scale,
                                           struct flow_fft_cuda **out)
{
    struct flow_fft_cuda *cu = (struct flow_fft_cuda *)calloc(1, sizeof *cu);
    *out = cu; /* what is made is freed by flow_fft_cuda_free, also on failure */
    if (!cu)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr flow: cuda FFT solver record");
    cu->scale = scale;
    size_t complexes = 0, lo = 1, work = 0;
    for (int a = 0; a < 3; a++) {
        fft_axis *A = &cu->ax[a];
        A->n = L->n[a];
        A->per = L->per[a];
        A->lo = lo;
        A->lines = L->N / (size_t)A->n;
        A->pad = 2 * (size_t)(A->n / 2 + 1);
        lo *= (size_t)A->n;
        if (A->n > 1 && A->lines * (A->n / 2 + 1) > complexes)
            complexes = A->lines * (A->n / 2 + 1);
        KEDR_TRY(dev_alloc(ctx, (void **)&cu->lam[a], (size_t)A->n * sizeof(double),
                           "eigenvalues"));
        KEDR_TRY(kedr_upload(ctx, cu->lam[a], lam[a], (size_t)A->n * sizeof(double)));
        cu->bytes += (size_t)A->n * sizeof(double);
    }
    if (complexes) {
        KEDR_TRY(dev_alloc(ctx, (void **)&cu->buf, complexes * sizeof(double2),
                           "transform buffer"));
        cu->bytes += complexes * sizeof(double2);
    }
    for (int a = 0; a < 3; a++) {
        fft_axis *A = &cu->ax[a];
        if (A->n == 1)
            continue;
        long long n = A->n, h = A->n / 2 + 1, pad = (long long)A->pad;
        long long lines = (long long)A->lines;
        size_t wf = 0, wb = 0;
        CUFFT_TRY(cufftCreate(&cu->fwd[a]), "plan", a);
        cu->planned[a][0] = 1;
        CUFFT_TRY(cufftCreate(&cu->bwd[a]), "plan", a);
        cu->planned[a][1] = 1;
        CUFFT_TRY(cufftSetAutoAllocation(cu->fwd[a], 0), "plan", a);
        CUFFT_TRY(cufftSetAutoAllocation(cu->bwd[a], 0), "plan", a);
        CUFFT_TRY(cufftMakePlanMany64(cu->fwd[a], 1, &n, &pad, 1, pad, &h, 1, h, CUFFT_D2Z,
                                      lines, &wf), "real-to-complex plan", a);
        CUFFT_TRY(cufftMakePlanMany64(cu->bwd[a], 1, &n, &h, 1, h, &pad, 1, pad, CUFFT_Z2D,
                                      lines, &wb), "complex-to-real plan", a);
        CUFFT_TRY(cufftSetStream(cu->fwd[a], KEDR_STREAM(ctx)), "stream", a);
        CUFFT_TRY(cufftSetStream(cu->bwd[a], KEDR_STREAM(ctx)), "stream", a);
        work = wf > work ? wf : work;
        work = wb > work ? wb : work;
    }
    if (work) {
        KEDR_TRY(dev_alloc(ctx, &cu->work, work, "cuFFT work area"));
        cu->bytes += work;
        for (int a = 0; a < 3; a++)
            if (cu->ax[a].n > 1) {
                CUFFT_TRY(cufftSetWorkArea(cu->fwd[a], cu->work), "work area", a);
                CUFFT_TRY(cufftSetWorkArea(cu->bwd[a], cu->work), "work area", a);
            }
    }
    return KEDR_OK;
}

extern "C" void flow_fft_cuda_free(kedr_ctx *ctx, struct flow_fft_cuda *cu)
{
    if (!cu)
        return;
    for (int a = 0; a < 3; a++) {
        if (cu->planned[a][0])
            cufftDestroy(cu->fwd[a]);
        if (cu->planned[a][1])
            cufftDestroy(cu->bwd[a]);
        kedr_free(ctx, cu->lam[a]);
    }
    kedr_free(ctx, cu->buf);
    kedr_free(ctx, cu->work);
    free(cu);
}

extern "C" size_t flow_fft_cuda_bytes(const struct flow_fft_cuda *cu)
{
    return cu ? cu->bytes : 0;
}

extern "C" kedr_status flow_fft_cuda_solve(kedr_ctx *ctx, const flow_level *L,
                                           struct flow_fft_cuda *cu, const double *b, double *x)
{
    const double *in = b; /* the first transform reads b, the others x */
    for (int a = 0; a < 3; a++) {
        const fft_axis &A = cu->ax[a];
        if (A.n == 1)
            continue;
        k_fwd_pre<<<LAUNCH(L->N)>>>(A, L->N, in, cu->buf);
        KEDR_CUDA_LAUNCHED("k_fwd_pre");
        CUFFT_TRY(cufftExecD2Z(cu->fwd[a], cu->buf, (cufftDoubleComplex *)cu->buf),
                  "real-to-complex transform", a);
        k_fwd_post<<<LAUNCH(L->N)>>>(A, L->N, cu->buf, x);
        KEDR_CUDA_LAUNCHED("k_fwd_post");
        in = x;
    }
    k_divide<<<LAUNCH(L->N)>>>(*L, cu->lam[0], cu->lam[1], cu->lam[2], cu->scale, in, x);
    KEDR_CUDA_LAUNCHED("k_divide");
    for (int a = 0; a < 3; a++) {
        const fft_axis &A = cu->ax[a];
        if (A.n == 1)
            continue;
        k_bwd_pre<<<LAUNCH(A.lines * (size_t)(A.n / 2 + 1))>>>(A, x, cu->buf);
        KEDR_CUDA_LAUNCHED("k_bwd_pre");
        CUFFT_TRY(cufftExecZ2D(cu->bwd[a], (cufftDoubleComplex *)cu->buf, cu->buf),
                  "complex-to-real transform", a);
        k_bwd_post<<<LAUNCH(L->N)>>>(A, L->N, cu->buf, x);
        KEDR_CUDA_LAUNCHED("k_bwd_post");
    }
    return KEDR_OK;
}
