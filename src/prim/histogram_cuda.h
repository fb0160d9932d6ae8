/* Private to prim: the bin computation of kedr_histogram_even, shared word for word by the cpu
 * code (histogram.c) and the cuda code (histogram.cu) so that both count identically, and the
 * entry point of the cuda version. */
#ifndef PRIM_HISTOGRAM_CUDA_H
#define PRIM_HISTOGRAM_CUDA_H

#include "kedr/prim.h"

#ifdef __CUDACC__
#define PRIM_HD __host__ __device__ __forceinline__
#else
#define PRIM_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* How an integer sample becomes a bin. bin = floor(off * bins / range) with off = x - lo is
 * computed on the reduced fraction bins' / range' (divided by their gcd), which is the same
 * number, with the cheapest arithmetic that is exact for every off < range. */
typedef enum {
    PRIM_HIST_SHIFT,  /* range' = 2^shift, (range - 1) * bins' < 2^64: (off * bins') >> shift */
    PRIM_HIST_MUL32,  /* (range - 1) * bins' < 2^32: 32-bit product and reciprocal division */
    PRIM_HIST_MUL64,  /* (range - 1) * bins' < 2^64: the same in 64 bits */
    PRIM_HIST_MUL128, /* anything else: 128-bit product and division */
    PRIM_HIST_REAL    /* float samples: floor((x - lo) * scale) clamped to bins - 1 */
} prim_hist_mode;

typedef struct {
    prim_hist_mode mode;
    uint32_t bins;
    /* integer samples: counted when 0 <= x - lo < range */
    int64_t lo;
    uint64_t range;
    uint64_t num;   /* bins' */
    uint64_t den;   /* range' */
    uint64_t recip; /* floor((2^32 - 1) / den) or floor((2^64 - 1) / den) */
    int shift;
    /* float samples: counted when flo <= x < fhi; scale = bins / (fhi - flo) */
    double flo, fhi, scale;
} prim_hist_spec;

PRIM_HD uint64_t prim_mulhi64(uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#endif
}

/* x - lo as an unsigned offset; it is below range exactly when lo <= x < lo + range (a negative
 * difference wraps to a huge value). No overflow: |x| < 2^32 and |lo| <= 2^53. */
PRIM_HD uint64_t prim_hist_offset(int64_t x, const prim_hist_spec *h)
{
    return (uint64_t)(x - h->lo);
}

PRIM_HD uint32_t prim_hist_shift(int64_t x, const prim_hist_spec *h)
{
    uint64_t off = prim_hist_offset(x, h);
    return off < h->range ? (uint32_t)(off * h->num >> h->shift) : h->bins;
}

/* q = floor(p / den) from q0 = mulhi(p, recip): q0 is q, q - 1 or q - 2, since
 * recip > 2^w / den - 1 and p < 2^w; two conditional steps finish it. */
PRIM_HD uint32_t prim_hist_mul32(int64_t x, const prim_hist_spec *h)
{
    uint64_t off = prim_hist_offset(x, h);
    if (off >= h->range)
        return h->bins;
    uint32_t p = (uint32_t)off * (uint32_t)h->num, d = (uint32_t)h->den;
#ifdef __CUDA_ARCH__
    uint32_t q = __umulhi(p, (uint32_t)h->recip);
#else
    uint32_t q = (uint32_t)(((uint64_t)p * (uint32_t)h->recip) >> 32);
#endif
    uint32_t r = p - q * d;
    if (r >= d) {
        q++;
        r -= d;
    }
    if (r >= d)
        q++;
    return q;
}

PRIM_HD uint32_t prim_hist_mul64(int64_t x, const prim_hist_spec *h)
{
    uint64_t off = prim_hist_offset(x, h);
    if (off >= h->range)
        return h->bins;
    uint64_t p = off * h->num, d = h->den;
    uint64_t q = prim_mulhi64(p, h->recip);
    uint64_t r = p - q * d;
    if (r >= d) {
        q++;
        r -= d;
    }
    if (r >= d)
        q++;
    return (uint32_t)q;
}

PRIM_HD uint32_t prim_hist_mul128(int64_t x, const prim_hist_spec *h)
{
    uint64_t off = prim_hist_offset(x, h);
    if (off >= h->range)
        return h->bins;
    return (uint32_t)((unsigned __int128)off * h->num / h->den);
}

/* The comparisons reject NaN. (x - lo) * scale is rounded step by step on both back ends (no
 * fused multiply-add on the device), so the bins agree bit for bit. x - lo may overflow to +inf,
 * which the clamp sends to the last bin. */
PRIM_HD uint32_t prim_hist_real(double x, const prim_hist_spec *h)
{
    if (!(x >= h->flo && x < h->fhi))
        return h->bins;
#ifdef __CUDA_ARCH__
    double t = __dmul_rn(__dsub_rn(x, h->flo), h->scale);
#else
    double t = (x - h->flo) * h->scale;
#endif
    return t < (double)h->bins ? (uint32_t)t : h->bins - 1;
}

#ifdef KEDR_HAVE_CUDA
/* counts[0..bins) over in[0..n), n > 0; the spec is prepared and checked by the caller. */
kedr_status prim_histogram_cuda(kedr_ctx *ctx, kedr_dtype t, const void *in, size_t n,
                                const prim_hist_spec *spec, uint32_t *counts);
#endif

#ifdef __cplusplus
}
#endif
#endif
