/* The cpu back end of the sweeps and measures: OpenMP over batches of lines of a sweep (each
 * thread with its own Thomas scratch), and over the nodes of a measure. */
#include "adi/adi_internal.h"
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
/* Subnormal numbers flushed to zero while a thread sweeps: a flow front decays into subnormal
 * values ahead of it (in single precision within a few dozen nodes), and the processor's slow
 * path for them made whole sweeps several times slower. Their size (below 1e-38 in single,
 * 1e-308 in double precision) is far below any tolerance. */
#define ADI_FTZ_BEGIN unsigned adi_csr_ = _mm_getcsr(); _mm_setcsr(adi_csr_ | 0x8040u);
#define ADI_FTZ_END _mm_setcsr(adi_csr_);
#else
#define ADI_FTZ_BEGIN
#define ADI_FTZ_END
#endif

#define ADI_HD static inline
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

/* Grids smaller than this run on one thread: a parallel region costs more than their sweep
 * (and on a loaded machine, far more: a barrier waits for every descheduled thread). */
#define ADI_PARALLEL_NODES 65536

/* The two axes other than d: lo the one with the smaller stride (the fastest between lines). */
static void other_axes(const adi_params *p, int d, int *lo, int *hi)
{
    int a = (d + 1) % 3, b = (d + 2) % 3;
    *lo = p->s[a] < p->s[b] ? a : b;
    *hi = p->s[a] < p->s[b] ? b : a;
}

/* Lines a thread eliminates in lockstep, node by node: their chains of dependent steps
 * overlap, and neighbouring lines share cache lines (lines along x and y are numbered with z,
 * the stride-1 axis, fastest). */
#define ADI_BATCH 8

/* The arrays a (of precision T) of the states out, old and coef, and the row constants k of
 * a sweep along axis D. */
#define ADI_CPU_ARRAYS(T, SUF, P, D)                                                           \
    arrays_##SUF a;                                                                            \
    for (int v = 0; v < 4; v++) {                                                              \
        a.out[v] = (T *)out->f[v];                                                             \
        a.old[v] = (const T *)old->f[v];                                                       \
        a.coef[v] = (const T *)coef->f[v];                                                     \
    }                                                                                          \
    row_consts_##SUF k;                                                                        \
    row_consts_init_##SUF(P, D, &a, &k)

/* What every cpu sweep begins with: the arrays and row constants, the two other axes (lo, hi)
 * and the lines (nlo of them along lo); failed for the threads' scratch. */
#define ADI_CPU_LINES(T, SUF)                                                                  \
    ADI_CPU_ARRAYS(T, SUF, p, d);                                                              \
    int lo, hi, failed = 0, n = p->n[d];                                                       \
    other_axes(p, d, &lo, &hi);                                                                \
    int64_t nlo = p->n[lo] - 2, lines = nlo * (p->n[hi] - 2);

#define ADI_CPU_SWEEP(NAME, T, SUF)                                                             \
    static kedr_status NAME(const adi_params *p, const unsigned char *mask, int d,             \
                            const adi_state *out, const adi_state *old, const adi_state *coef) \
    {                                                                                          \
        ADI_CPU_LINES(T, SUF)                                                                  \
        int par = lines * n >= ADI_PARALLEL_NODES;                                             \
        _Pragma("omp parallel if (par)")                                                       \
        {                                                                                      \
            ADI_FTZ_BEGIN                                                                      \
            T *cp = malloc(ADI_BATCH * 2 * (size_t)n * sizeof *cp);                            \
            if (!cp) {                                                                         \
                _Pragma("omp atomic write") failed = 1;                                        \
            } else {                                                                           \
                _Pragma("omp for schedule(static)")                                            \
                for (int64_t t0 = 0; t0 < lines; t0 += ADI_BATCH) {                            \
                    int nb = lines - t0 < ADI_BATCH ? (int)(lines - t0) : ADI_BATCH;           \
                    int64_t base[ADI_BATCH];                                                   \
                    line_state_##SUF ls[ADI_BATCH];                                            \
                    for (int b = 0; b < nb; b++) {                                             \
                        int64_t t = t0 + b;                                                    \
                        base[b] = (1 + t % nlo) * p->s[lo] + (1 + t / nlo) * p->s[hi];         \
                        memset(&ls[b], 0, sizeof ls[b]);                                       \
                    }                                                                          \
                    for (int m = 1; m < n - 1; m++)                                            \
                        for (int b = 0; b < nb; b++)                                           \
                            sweep_node_##SUF(p, &k, mask, d, base[b], m, &a,                   \
                                             cp + (size_t)b * 2 * n, 1, &ls[b]);               \
                }                                                                              \
            }                                                                                  \
            free(cp);                                                                          \
            ADI_FTZ_END                                                                        \
        }                                                                                      \
        return failed ? kedr_fail(KEDR_ERR_NOMEM, "adi sweep: out of host memory") : KEDR_OK;  \
    }

ADI_CPU_SWEEP(sweep_f32, float, f32)
ADI_CPU_SWEEP(sweep_f64, double, f64)

kedr_status adi_cpu_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                          const adi_state *out, const adi_state *old, const adi_state *coef)
{
    return s->real_size == 4 ? sweep_f32(p, mask, d, out, old, coef)
                             : sweep_f64(p, mask, d, out, old, coef);
}

/* The on-chip scheme on the cpu (KEDR_ADI_SWEEP=chip): a line at a time (chip_line), each
 * thread with its own store; the reference for the GPU's blocks, which run the same steps. */
#define ADI_CPU_CHIP(NAME, T, SUF)                                                              \
    static kedr_status NAME(const adi_params *p, const unsigned char *mask, int d,             \
                            const adi_state *out, const adi_state *old, const adi_state *coef, \
                            int len)                                                           \
    {                                                                                          \
        ADI_CPU_LINES(T, SUF)                                                                  \
        int ni = n - 2, P = (ni + len - 1) / len;                                              \
        if (lines <= 0 || ni <= 0)                                                             \
            return KEDR_OK;                                                                    \
        int par = lines * n >= ADI_PARALLEL_NODES;                                             \
        _Pragma("omp parallel if (par)")                                                       \
        {                                                                                      \
            ADI_FTZ_BEGIN                                                                      \
            size_t nst = (size_t)ADI_CHIP_Q * len * P, nh = 8 * (size_t)P;                     \
            T *st = malloc((nst + nh + ADI_CHIP_ROW * (size_t)P) * sizeof *st);                \
            unsigned *fl = malloc((size_t)P * sizeof *fl);                                     \
            if (!st || !fl) {                                                                  \
                _Pragma("omp atomic write") failed = 1;                                        \
            } else {                                                                           \
                _Pragma("omp for schedule(static)")                                            \
                for (int64_t t = 0; t < lines; t++) {                                          \
                    int64_t base = (1 + t % nlo) * p->s[lo] + (1 + t / nlo) * p->s[hi];        \
                    chip_line_##SUF(p, &k, mask, d, base, len, &a, st, st + nst,               \
                                    st + nst + nh, fl);                                        \
                }                                                                              \
            }                                                                                  \
            free(st);                                                                          \
            free(fl);                                                                          \
            ADI_FTZ_END                                                                        \
        }                                                                                      \
        return failed ? kedr_fail(KEDR_ERR_NOMEM, "adi sweep: out of host memory") : KEDR_OK;  \
    }

ADI_CPU_CHIP(chip_f32, float, f32)
ADI_CPU_CHIP(chip_f64, double, f64)

kedr_status adi_cpu_chip_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask,
                               int d, const adi_state *out, const adi_state *old, const adi_state *coef,
                               int len)
{
    return s->real_size == 4 ? chip_f32(p, mask, d, out, old, coef, len)
                             : chip_f64(p, mask, d, out, old, coef, len);
}

/* The register sweep on the cpu (KEDR_ADI_SWEEP=reg): a line at a time, its chunks' steps in the
 * order of the GPU's barriers (every chunk's elimination and head, then every chunk's interface
 * row, then each step of cyclic reduction for every row from the rows of the step before, then
 * every chunk's back substitution), so that it computes what a GPU block computes. */
#define ADI_CPU_REG(NAME, T, SUF)                                                               \
    static void NAME##_line(const adi_params *p, const row_consts_##SUF *k,                    \
                            const unsigned char *mask, int d, int64_t base, int L,             \
                            const arrays_##SUF *a, T *st, T *rows, T *prev, unsigned *fl)      \
    {                                                                                          \
        int ni = p->n[d] - 2, P = (ni + L - 1) / L, m0, o;                                     \
        for (int c = 0; c < P; c++) {                                                          \
            T *sc = st + (size_t)8 * L * c;                                                    \
            reg_chunk_##SUF(c, L, ni, &m0, &o);                                                \
            fl[c] = reg_forward_##SUF(p, k, mask, d, base, m0, o, L, a, sc);                   \
            reg_head_##SUF(sc, o, L, prev + 10 * c);                                           \
        }                                                                                      \
        for (int c = 0; c < P; c++)                                                            \
            reg_row_##SUF(st + (size_t)8 * L * c, L, c + 1 < P,                                \
                          c + 1 < P ? prev + 10 * (c + 1) : prev, rows + 10 * c);              \
        T unit[10];                                                                            \
        reg_unit_row_##SUF(unit);                                                              \
        for (int s = 1; s < P; s *= 2) {                                                       \
            memcpy(prev, rows, (size_t)10 * P * sizeof *prev);                                 \
            for (int c = 0; c < P; c++)                                                        \
                reg_pcr_##SUF(rows + 10 * c, c >= s ? prev + 10 * (c - s) : unit,              \
                              c + s < P ? prev + 10 * (c + s) : unit);                         \
        }                                                                                      \
        for (int c = 0; c < P; c++) /* z_c of field v into rows[10 c + 6 + v] */               \
            for (int v = 0; v < 4; v++)                                                        \
                rows[10 * c + 6 + v] /= rows[10 * c + 2 + (v == 3)];                           \
        const T zero[4] = {0, 0, 0, 0};                                                        \
        for (int c = 0; c < P; c++) {                                                          \
            reg_chunk_##SUF(c, L, ni, &m0, &o);                                                \
            reg_back_##SUF(a, base, k->sd, m0, o, L, st + (size_t)8 * L * c, fl[c],            \
                           c ? rows + 10 * (c - 1) + 6 : zero, rows + 10 * c + 6);             \
        }                                                                                      \
    }                                                                                          \
    static kedr_status NAME(const adi_params *p, const unsigned char *mask, int d,             \
                            const adi_state *out, const adi_state *old, const adi_state *coef, \
                            int L)                                                             \
    {                                                                                          \
        ADI_CPU_LINES(T, SUF)                                                                  \
        int ni = n - 2, P = (ni + L - 1) / L;                                                  \
        if (lines <= 0 || ni <= 0)                                                             \
            return KEDR_OK;                                                                    \
        int par = lines * n >= ADI_PARALLEL_NODES;                                             \
        _Pragma("omp parallel if (par)")                                                       \
        {                                                                                      \
            ADI_FTZ_BEGIN                                                                      \
            T *st = malloc(((size_t)8 * L + 20) * P * sizeof *st);                             \
            unsigned *fl = malloc((size_t)P * sizeof *fl);                                     \
            if (!st || !fl) {                                                                  \
                _Pragma("omp atomic write") failed = 1;                                        \
            } else {                                                                           \
                T *rows = st + (size_t)8 * L * P, *prev = rows + (size_t)10 * P;               \
                _Pragma("omp for schedule(static)")                                            \
                for (int64_t t = 0; t < lines; t++) {                                          \
                    int64_t base = (1 + t % nlo) * p->s[lo] + (1 + t / nlo) * p->s[hi];        \
                    NAME##_line(p, &k, mask, d, base, L, &a, st, rows, prev, fl);              \
                }                                                                              \
            }                                                                                  \
            free(st);                                                                          \
            free(fl);                                                                          \
            ADI_FTZ_END                                                                        \
        }                                                                                      \
        return failed ? kedr_fail(KEDR_ERR_NOMEM, "adi sweep: out of host memory") : KEDR_OK;  \
    }

ADI_CPU_REG(reg_f32, float, f32)
ADI_CPU_REG(reg_f64, double, f64)

kedr_status adi_cpu_reg_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                              const adi_state *out, const adi_state *old, const adi_state *coef,
                              int len)
{
    return s->real_size == 4 ? reg_f32(p, mask, d, out, old, coef, len)
                             : reg_f64(p, mask, d, out, old, coef, len);
}

/* The measure over the nodes in kedr_parts' parts, each part's six results kept and combined in
 * part order (sums added, maxima taken), so that the residuals, and the global iterations they
 * end, repeat bit for bit from run to run at any thread count. */
typedef struct {
    const adi_params *p;
    const unsigned char *mask;
    const void *gf[4], *pf[4];
    size_t begin;
    int prev;
    double out[KEDR_PARTS_MOST][6]; /* div2, divmax, change, speed2, energy, bad */
} adi_measure_parts;

#define ADI_CPU_MEASURE(NAME, T, SUF)                                                           \
    static void NAME##_part(size_t lo, size_t hi, int t, void *arg)                            \
    {                                                                                          \
        adi_measure_parts *u = (adi_measure_parts *)arg;                                       \
        const T *gf[4], *pf[4];                                                                \
        for (int v = 0; v < 4; v++) {                                                          \
            gf[v] = (const T *)u->gf[v];                                                       \
            pf[v] = (const T *)u->pf[v];                                                       \
        }                                                                                      \
        double a[6] = {0, 0, 0, 0, 0, 0};                                                      \
        for (size_t i = u->begin + lo; i < u->begin + hi; i++) {                               \
            if (u->mask[i] != ADI_FLUID)                                                       \
                continue;                                                                      \
            double o[6];                                                                       \
            measure_node_##SUF(u->p, u->mask, gf, u->prev ? pf : NULL, (int64_t)i, o);         \
            a[0] += o[0];                                                                      \
            a[1] = o[1] > a[1] ? o[1] : a[1];                                                  \
            a[2] = o[2] > a[2] ? o[2] : a[2];                                                  \
            a[3] = o[3] > a[3] ? o[3] : a[3];                                                  \
            a[4] += o[4];                                                                      \
            a[5] += o[5];                                                                      \
        }                                                                                      \
        memcpy(u->out[t], a, sizeof a);                                                        \
    }                                                                                          \
    static void NAME(const adi_params *p, const unsigned char *mask, size_t begin, size_t end,  \
                     const adi_state *g, const adi_state *prev, adi_measure *m)                \
    {                                                                                          \
        adi_measure_parts parts_of, *u = &parts_of; /* 12 kB: a slot a part */               \
        u->p = p;                                                                              \
        u->mask = mask;                                                                        \
        u->begin = begin;                                                                      \
        u->prev = prev != NULL;                                                                \
        for (int v = 0; v < 4; v++) {                                                          \
            u->gf[v] = g->f[v];                                                                \
            u->pf[v] = prev ? prev->f[v] : NULL;                                               \
        }                                                                                      \
        int parts = kedr_parts(end - begin, ADI_PARALLEL_NODES, NAME##_part, u);               \
        double r[6] = {0, 0, 0, 0, 0, 0};                                                      \
        for (int t = 0; t < parts; t++) {                                                      \
            r[0] += u->out[t][0];                                                              \
            for (int k = 1; k < 4; k++)                                                        \
                r[k] = u->out[t][k] > r[k] ? u->out[t][k] : r[k];                              \
            r[4] += u->out[t][4];                                                              \
            r[5] += u->out[t][5];                                                              \
        }                                                                                      \
        m->div2 = r[0];                                                                        \
        m->divmax = r[1];                                                                      \
        m->change = r[2];                                                                      \
        m->speed2max = r[3];                                                                   \
        m->energy = r[4];                                                                      \
        m->nonfinite = r[5];                                                                   \
    }

ADI_CPU_MEASURE(measure_f32, float, f32)
ADI_CPU_MEASURE(measure_f64, double, f64)

kedr_status adi_cpu_measure(kedr_adi *s, const adi_state *g, const adi_state *prev,
                            adi_measure *m)
{
    /* the own planes: not the halos, which are other ranks' */
    size_t begin = s->plane, end = s->nodes - s->plane;
    if (s->real_size == 4)
        measure_f32(&s->p, s->mask, begin, end, g, prev, m);
    else
        measure_f64(&s->p, s->mask, begin, end, g, prev, m);
    return KEDR_OK;
}

/* The partitioned X sweep's rows, node by node over the own planes. */
#define ADI_CPU_PART_ROWS(NAME, T, SUF)                                                         \
    static void NAME(kedr_adi *s, const adi_state *out, const adi_state *old,                  \
                     const adi_state *coef)                                                    \
    {                                                                                          \
        ADI_CPU_ARRAYS(T, SUF, &s->p, 0);                                                      \
        int64_t plane = (int64_t)s->plane, n = (int64_t)(s->hi - s->lo) * plane;               \
        T *abc = (T *)s->parts.abc, *dw = (T *)s->parts.dw;                                    \
        const adi_params *p = &s->p;                                                           \
        const unsigned char *mask = s->mask;                                                   \
        int par = n >= ADI_PARALLEL_NODES;                                                     \
        _Pragma("omp parallel if (par)")                                                       \
        {                                                                                      \
            ADI_FTZ_BEGIN                                                                      \
            _Pragma("omp for schedule(static)")                                                \
            for (int64_t e = 0; e < n; e++)                                                    \
                part_node_##SUF(p, &k, mask, plane + e, &a, abc, n, e, dw, 4 * n);             \
            ADI_FTZ_END                                                                        \
        }                                                                                      \
    }

ADI_CPU_PART_ROWS(part_rows_f32, float, f32)
ADI_CPU_PART_ROWS(part_rows_f64, double, f64)

kedr_status adi_cpu_part_rows(kedr_adi *s, const adi_state *out, const adi_state *old,
                              const adi_state *coef)
{
    if (s->real_size == 4)
        part_rows_f32(s, out, old, coef);
    else
        part_rows_f64(s, out, old, coef);
    return KEDR_OK;
}

#define ADI_CPU_PART(LINES, FINISH, T, SUF)                                                     \
    static void LINES(kedr_adi *s, const adi_state *out, const adi_state *old,                 \
                      const adi_state *coef)                                                   \
    {                                                                                          \
        ADI_CPU_ARRAYS(T, SUF, &s->p, 0);                                                      \
        int64_t plane = (int64_t)s->plane, ws = (int64_t)(s->hi - s->lo) * plane;              \
        int n = s->hi - s->lo;                                                                 \
        const adi_params *p = &s->p;                                                           \
        const unsigned char *mask = s->mask;                                                   \
        T *w = (T *)s->parts.rs, *ifc = (T *)s->parts.iface;                                   \
        int par = ws >= ADI_PARALLEL_NODES;                                                    \
        _Pragma("omp parallel if (par)")                                                       \
        {                                                                                      \
            ADI_FTZ_BEGIN                                                                      \
            _Pragma("omp for schedule(static)")                                                \
            for (int64_t t = 0; t < plane; t++)                                                \
                part_line_##SUF(p, &k, mask, t, n, plane, &a, w, ws, ifc);                     \
            ADI_FTZ_END                                                                        \
        }                                                                                      \
    }                                                                                          \
    static void FINISH(kedr_adi *s, const adi_state *out)                                      \
    {                                                                                          \
        arrays_##SUF a;                                                                        \
        for (int v = 0; v < 4; v++)                                                            \
            a.out[v] = (T *)out->f[v];                                                         \
        int64_t plane = (int64_t)s->plane, ws = (int64_t)(s->hi - s->lo) * plane;              \
        int n = s->hi - s->lo;                                                                 \
        const T *w = (const T *)s->parts.rs, *x = (const T *)s->parts.x;                       \
        int par = ws >= ADI_PARALLEL_NODES;                                                    \
        _Pragma("omp parallel for schedule(static) if (par)")                                  \
        for (int64_t e = 0; e < ws; e++)                                                       \
            part_finish_##SUF(&a, w, ws, x, e, n, plane);                                      \
    }

ADI_CPU_PART(part_lines_f32, part_finish_f32_, float, f32)
ADI_CPU_PART(part_lines_f64, part_finish_f64_, double, f64)

kedr_status adi_cpu_part_lines(kedr_adi *s, const adi_state *out, const adi_state *old,
                               const adi_state *coef)
{
    if (s->real_size == 4)
        part_lines_f32(s, out, old, coef);
    else
        part_lines_f64(s, out, old, coef);
    return KEDR_OK;
}

kedr_status adi_cpu_part_finish(kedr_adi *s, const adi_state *out)
{
    if (s->real_size == 4)
        part_finish_f32_(s, out);
    else
        part_finish_f64_(s, out);
    return KEDR_OK;
}

kedr_status adi_cpu_halo(kedr_adi *s, const adi_params *p, void *const *f, int nf, int pack,
                         int lo, int hi)
{
    size_t rs = (size_t)s->real_size, plane = s->plane;
    int ny = p->n[1], nz = p->n[2];
    for (int side = 0; side < 2; side++) {
        if (!(side ? hi : lo))
            continue;
        int64_t l = pack ? (side ? s->nxl - 2 : 1) : (side ? s->nxl - 1 : 0);
        char *b = (char *)s->parts.halo + ((pack ? 0 : 2) + side) * 4 * plane * rs;
        for (int v = 0; v < nf; v++)
            for (int j = 0; j < ny; j++)
                for (int k = 0; k < nz; k++) {
                    char *x = (char *)f[v] + (l * p->s[0] + j * p->s[1] + k * p->s[2]) * rs;
                    char *y = b + ((size_t)v * plane + (size_t)j * nz + k) * rs;
                    memcpy(pack ? y : x, pack ? x : y, rs);
                }
    }
    return KEDR_OK;
}
