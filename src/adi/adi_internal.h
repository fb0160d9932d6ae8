/* Private to the adi module: the solver record, the sweep parameters both back ends read, and
 * the back-end table. Device arrays are stored z fastest, node (i, j, k) at k + nz (j + ny i),
 * as in the book; the transposed layout of the Z sweep puts z slowest: (i ny + j) + nx ny k. */
#ifndef KEDR_ADI_INTERNAL_H
#define KEDR_ADI_INTERNAL_H

#include "kedr/adi.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Node codes of the mask: solid, an unknown, or a boundary node of face f (ADI_FACE + f). */
#define ADI_SOLID 0
#define ADI_FLUID 1
#define ADI_FACE 2

/* A ghost's rule for one variable: Dirichlet (the value) or extrapolated (the end node's). */
typedef struct {
    unsigned char dirichlet[4]; /* u, v, w, T */
    double value[4];
} adi_ghost;

/* Everything a sweep kernel reads besides the arrays, for one layout. */
typedef struct {
    int n[3];          /* nodes along x, y, z */
    int64_t s[3];      /* strides of i, j, k */
    double h, dt;
    double kappa_u, kappa_t; /* 1/Re, 1/(Re Pr) */
    double dissipation;      /* (gamma - 1) / (gamma Re) */
    double force[3];
    int central;
    adi_ghost ghost[8]; /* by mask code: [ADI_SOLID], [ADI_FACE + f]; [ADI_FLUID] unused */
} adi_params;

/* The sums and maxima of a state over the unknowns. */
typedef struct {
    double div2, divmax, change, speed2max, energy, nonfinite;
} adi_measure;

/* A state: the four fields u, v, w, T (device arrays of the solver's precision). */
typedef struct {
    void *f[4];
} adi_state;

#define ADI_NSTATES 6

struct kedr_adi {
    kedr_ctx *ctx;
    kedr_adi_case c;       /* a copy; c.solid is not kept (the mask is) */
    size_t nodes;
    int real_size;         /* 4 or 8 */
    int transpose_z;
    adi_params p, pt;      /* the normal and the transposed layout */
    unsigned char *mask, *mask_t;   /* context memory */
    unsigned char *mask_host;       /* x fastest, host */
    int64_t unknowns;
    adi_state state[ADI_NSTATES];
    int u;                 /* the state holding U^n */
    void *cp;              /* cuda: the Thomas scratch, 2 reals a node */
    void *measure_buf;     /* cuda: 6 doubles per node for the reductions */
    kedr_adi_stats st;
    kedr_adi_stats *history;
    size_t nhistory, cap_history;
};

/* The back ends. sweep: out = the fractional step along axis d from old with the coefficients
 * of coef, in the layout of p (mask in the same layout); lines enumerated so that neighbouring
 * lines have neighbouring addresses where the layout allows. measure: sums over the unknowns
 * of g, with the change against prev (prev may be NULL: change 0). */
kedr_status adi_cpu_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                          const adi_state *out, const adi_state *old, const adi_state *coef);
kedr_status adi_cpu_measure(kedr_adi *s, const adi_state *g, const adi_state *prev,
                            adi_measure *m);
#ifdef KEDR_HAVE_CUDA
kedr_status adi_cuda_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                           const adi_state *out, const adi_state *old, const adi_state *coef);
kedr_status adi_cuda_measure(kedr_adi *s, const adi_state *g, const adi_state *prev,
                             adi_measure *m);
#endif

/* Node index of the device layout (z fastest). */
static inline size_t adi_index(const kedr_adi_case *c, int i, int j, int k)
{
    return (size_t)k + (size_t)c->nz * ((size_t)j + (size_t)c->ny * (size_t)i);
}

/* The mask codes of c, x fastest on the host (kedr_adi_case_check's classification). */
kedr_status adi_classify(const kedr_adi_case *c, unsigned char *codes, int64_t *unknowns);
/* The sweep parameters of c for the layout with strides s. */
void adi_params_init(const kedr_adi_case *c, const int64_t s[3], adi_params *p);

#ifdef __cplusplus
}
#endif
#endif
