/* Private to prim: the Thomas algorithm for one tridiagonal system, shared word for word by the
 * cpu code (tridiag.c) and the cuda code (tridiag.cu), and the entry point of the cuda version
 * of kedr_tridiag_solve. */
#ifndef PRIM_TRIDIAG_CUDA_H
#define PRIM_TRIDIAG_CUDA_H

#include "kedr/prim.h"

#ifdef __CUDACC__
#define PRIM_TRIDIAG_HD __host__ __device__ __forceinline__
#else
#define PRIM_TRIDIAG_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The Thomas algorithm (Gaussian elimination without pivoting; Thomas 1949, as given by Conte &
 * de Boor, Elementary Numerical Analysis, 1980, sec. 3.6) on one system of n unknowns whose
 * element i is at [i * st] of every array. d: right side in, x out. cp receives c' (the
 * eliminated upper diagonal, rows 0 .. n-3 at most). Periodic systems are bordered: the leading
 * m = n - 1 rows are solved for y (right side d) and for z (right side -a_0 e_0 - c_{n-2}
 * e_{m-1}), then x_{n-1} = (d_{n-1} - a_{n-1} y_{m-1} - c_{n-1} y_0) /
 * (b_{n-1} + a_{n-1} z_{m-1} + c_{n-1} z_0) and x_i = y_i + x_{n-1} z_i; zp holds z. Elimination
 * of the leading rows keeps the diagonal dominance of a dominant system, unlike the
 * Sherman-Morrison form, which changes b_0. cp may be c and zp may be a (the shared-memory tile
 * overwrites its copies): each is read at row i before row i is written, and the last row,
 * which is read at the end, is never written. */
#define PRIM_TRIDIAG_THOMAS(NAME, T)                                                          \
    PRIM_TRIDIAG_HD void NAME(const T *a, const T *b, const T *c, T *d, T *cp, T *zp,          \
                              size_t n, size_t st, int periodic)                               \
    {                                                                                          \
        if (n == 1) {                                                                          \
            d[0] = d[0] / (periodic ? a[0] + b[0] + c[0] : b[0]);                              \
            return;                                                                            \
        }                                                                                      \
        size_t m = periodic ? n - 1 : n;                                                       \
        T r = (T)1 / b[0], c0 = c[0];                                                          \
        T cprev = c0 * r, y = d[0] * r, z = 0;                                                 \
        d[0] = y;                                                                              \
        if (periodic) {                                                                        \
            z = (-a[0] - (m == 1 ? c0 : (T)0)) * r;                                            \
            zp[0] = z;                                                                         \
        }                                                                                      \
        if (m > 1)                                                                             \
            cp[0] = cprev;                                                                     \
        for (size_t i = 1; i < m; i++) {                                                       \
            size_t k = i * st;                                                                 \
            T ai = a[k], ci = c[k];                                                            \
            r = (T)1 / (b[k] - ai * cprev);                                                    \
            y = (d[k] - ai * y) * r;                                                           \
            d[k] = y;                                                                          \
            if (periodic) {                                                                    \
                z = ((i == m - 1 ? -ci : (T)0) - ai * z) * r;                                  \
                zp[k] = z;                                                                     \
            }                                                                                  \
            cprev = ci * r;                                                                    \
            if (i + 1 < m)                                                                     \
                cp[k] = cprev;                                                                 \
        }                                                                                      \
        T ylast = y, zlast = z;                                                                \
        for (size_t i = m - 1; i-- > 0;) {                                                     \
            size_t k = i * st;                                                                 \
            T ck = cp[k];                                                                      \
            y = d[k] - ck * y;                                                                 \
            d[k] = y;                                                                          \
            if (periodic) {                                                                    \
                z = zp[k] - ck * z;                                                            \
                zp[k] = z;                                                                     \
            }                                                                                  \
        }                                                                                      \
        if (!periodic)                                                                         \
            return;                                                                            \
        size_t l = (n - 1) * st;                                                               \
        T xl = (d[l] - a[l] * ylast - c[l] * y) / (b[l] + a[l] * zlast + c[l] * z);            \
        d[l] = xl;                                                                             \
        for (size_t i = 0; i < m; i++)                                                         \
            d[i * st] += xl * zp[i * st];                                                      \
    }

PRIM_TRIDIAG_THOMAS(prim_tridiag_thomas_f32, float)
PRIM_TRIDIAG_THOMAS(prim_tridiag_thomas_f64, double)

#ifdef KEDR_HAVE_CUDA
/* The cuda version: arguments checked by the caller, n >= 1, count >= 1. Queued on the
 * context's stream. */
kedr_status prim_tridiag_cuda(kedr_ctx *ctx, kedr_dtype t, const kedr_tridiag_desc *desc,
                              const void *a, const void *b, const void *c, void *d);
#endif

#ifdef __cplusplus
}
#endif
#endif
