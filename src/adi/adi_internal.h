/* Private to the adi module: the solver record, the sweep parameters both back ends read, and
 * the back-end table. A rank holds the x planes lo .. hi-1 of the grid (all of them on one rank)
 * and one more plane on each side: local plane l is the grid's plane lo - 1 + l, l = 0 .. nxl-1;
 * the outer two are halos, copies of the neighbouring ranks' planes (at the grid's ends, planes
 * outside the box, solid, that no unknown reads). Device arrays are stored z fastest, node
 * (l, j, k) at k + nz (j + ny l), as in the book; the transposed layout of the Z sweep puts z
 * slowest: (l ny + j) + nxl ny k. */
#ifndef KEDR_ADI_INTERNAL_H
#define KEDR_ADI_INTERNAL_H

#include "kedr/adi.h"
#include "kedr/comm.h"

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
    float value_f[4];           /* value in single precision (read by the single-precision
                                 * sweeps without a conversion a node) */
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

/* The partitioned X sweep (over several ranks, or [solver] x_sweep = partitioned): work
 * arrays in context memory and host buffers for the interface rows, made with the solver. */
typedef struct {
    void *rs;         /* fused (part_line): R and S of the velocity and temperature, own each */
    void *abc;        /* through prim: a, b, c of the velocity rows, then of the temperature
                       * rows, own each */
    void *dw;         /* through prim: for each field its right sides (own), a gap (own) and
                       * the part solver's work (2 own): kedr_tridiag_part_reduce takes w to
                       * reach 2 own past d, and w must not overlap d */
    void *iface;      /* interface rows: 11 units of 2 plane (ADI_IF_*) */
    void *x;          /* the interface unknowns of the four fields: 2 plane each */
    void *halo;       /* halo planes: [send lo, send hi, recv lo, recv hi] x 4 fields x plane */
    void *h_iface;    /* host: ADI_IF_SENT units of 2 plane, as downloaded */
    void *h_send, *h_recv; /* host messages: the interface rows out and in, then the x back */
    double *h_sys;    /* host: the interface systems of this rank's lines, 4 x 2 nranks each */
    void *h_x;        /* host: the interface unknowns of every line (4 x 2 plane) */
    kedr_comm_halo *msg; /* the interface solve's messages: 2 nranks */
    void *gather;     /* x_interface = gather: every rank's interface rows, slot p (ADI_IF_SENT
                       * units of 2 plane, as in iface) from rank p */
    kedr_comm_dev *halo_dev, *gather_dev; /* halo and gather registered with the comm layer:
                       * GPU to GPU between the ranks of a host where the GPUs allow */
    kedr_comm_dev_msg *dmsg; /* their messages: 2 nranks */
    int pinned;       /* h_iface and h_x are page-locked (cuda) */
    int gathered;     /* the interface systems gathered on every rank (x_interface) */
    int direct;       /* every pair of ranks copies GPU to GPU (kedr_comm_dev_direct) */
} adi_parts;

/* The most ranks whose interface systems the GPU solves (x_interface = gather): 2 rows a rank
 * in a thread's local memory. */
#define ADI_GATHER_MAX_RANKS 32

/* Interface units (2 plane reals each): what is sent, then scratch that is not. */
enum { ADI_IF_AU, ADI_IF_CU, ADI_IF_AT, ADI_IF_CT, ADI_IF_D0, ADI_IF_SENT = ADI_IF_D0 + 4,
       ADI_IF_B = ADI_IF_SENT, ADI_IF_AJ, ADI_IF_CJ, ADI_IF_UNITS };

struct kedr_adi {
    kedr_ctx *ctx;
    kedr_comm *comm;       /* NULL: one rank */
    int rank, nranks;
    int lo, hi;            /* this rank's planes of the grid */
    int nxl;               /* local planes: hi - lo + 2 */
    int partitioned;       /* the X sweep by the partitioned solver: 0 no (Thomas), 1 fused
                            * into the sweep (part_line), 2 through kedr_tridiag_part_* */
    size_t plane;          /* nodes of a plane: ny nz */
    size_t gnodes;         /* nodes of the grid */
    adi_parts parts;
    double halo_seconds, iface_seconds; /* wall time in exchange_halos, in the interface solves */
    kedr_adi_case c;       /* a copy; c.solid is not kept (the mask is) */
    size_t nodes;          /* local nodes: nxl plane */
    int real_size;         /* 4 or 8 */
    int transpose_z;
    adi_params p, pt;      /* the normal and the transposed layout */
    unsigned char *mask, *mask_t;   /* context memory, local */
    unsigned char *mask_host;       /* the grid's, x fastest, host */
    int64_t unknowns;               /* of the grid */
    adi_state state[ADI_NSTATES];
    int u;                 /* the state holding U^n */
    void *cp;              /* cuda: the Thomas scratch, 2 reals a node */
    void *measure_buf;     /* cuda: 6 doubles per node for the reductions */
    kedr_adi_stats st;
    int diverged;          /* the last step diverged (and was undone) */
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
/* The sweep's path, from the environment at each sweep: KEDR_ADI_SWEEP = thomas (the default:
 * a thread a line, c' through global scratch) or chip (the line's elimination on chip in chunks
 * of KEDR_ADI_CHIP_LEN nodes, 1 to 32, default 8; sweep_impl.h, chip_forward); *lines: the GPU's
 * lines a block from KEDR_ADI_CHIP_LINES (0: chosen from the line length). A bad value is an
 * error naming the variable. */
#define ADI_CHIP_LEN_DEFAULT 8
#define ADI_CHIP_Q 8       /* values a node in the store: c'u, c't, s'u, s't, d'0..3 */
#define ADI_CHIP_ROW 10    /* values of an interface row: lo[2], di[2], up[2], rhs[4] */
#define ADI_CHIP_MAXLEN 32 /* a chunk's fluid flags are one 32-bit word */
/* KEDR_ADI_SWEEP = reg: the chunk's store in its thread's registers, the interface systems by
 * cyclic reduction (sweep_impl.h, reg_forward); chunks of KEDR_ADI_REG_LEN nodes, 2, 4, 8 or
 * 16 (unset or 0: 4), the lines a block as for chip. */
enum { ADI_SWEEP_THOMAS, ADI_SWEEP_CHIP, ADI_SWEEP_REG };
#define ADI_REG_MAXLEN 16
kedr_status adi_sweep_choice(int *path, int *len, int *lines, int *reg_len);
/* The register sweep's chunk length for reals of real_size bytes and lines of ni interior
 * nodes (reg_len: the variable's value, 0 for the default): halved, down to 2, while longer
 * than the line (a chunk holds L whole nodes of the line). */
int adi_reg_len(int reg_len, int real_size, int ni);
/* The on-chip sweep (as adi_cpu_sweep), chunks of len nodes. */
kedr_status adi_cpu_chip_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                               const adi_state *out, const adi_state *old, const adi_state *coef,
                               int len);
/* The register sweep (as adi_cpu_sweep), chunks of len nodes. */
kedr_status adi_cpu_reg_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                              const adi_state *out, const adi_state *old, const adi_state *coef,
                              int len);
/* The partitioned X sweep's rows at the own planes: s->parts.abc, and the right sides in
 * s->parts.dw. */
kedr_status adi_cpu_part_rows(kedr_adi *s, const adi_state *out, const adi_state *old,
                              const adi_state *coef);
/* The fused partitioned X sweep: every line's part reduced (part_line) into the interface units
 * of s->parts.iface; then, with the interface unknowns in s->parts.x, completed. */
kedr_status adi_cpu_part_lines(kedr_adi *s, const adi_state *out, const adi_state *old,
                               const adi_state *coef);
kedr_status adi_cpu_part_finish(kedr_adi *s, const adi_state *out);
/* Halo planes of nf fields f (layout p): pack copies planes 1 and nxl-2 into s->parts.halo's
 * send units, unpack the receive units into planes 0 and nxl-1 (either side may be skipped:
 * lo, hi). */
kedr_status adi_cpu_halo(kedr_adi *s, const adi_params *p, void *const *f, int nf, int pack,
                         int lo, int hi);
#ifdef KEDR_HAVE_CUDA
kedr_status adi_cuda_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask, int d,
                           const adi_state *out, const adi_state *old, const adi_state *coef);
kedr_status adi_cuda_measure(kedr_adi *s, const adi_state *g, const adi_state *prev,
                             adi_measure *m);
kedr_status adi_cuda_chip_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask,
                                int d, const adi_state *out, const adi_state *old,
                                const adi_state *coef, int len, int lines);
kedr_status adi_cuda_reg_sweep(kedr_adi *s, const adi_params *p, const unsigned char *mask,
                               int d, const adi_state *out, const adi_state *old,
                               const adi_state *coef, int len, int lines);
kedr_status adi_cuda_part_rows(kedr_adi *s, const adi_state *out, const adi_state *old,
                               const adi_state *coef);
kedr_status adi_cuda_part_lines(kedr_adi *s, const adi_state *out, const adi_state *old,
                                const adi_state *coef);
kedr_status adi_cuda_part_finish(kedr_adi *s, const adi_state *out);
/* x_interface = gather: the interface systems of every line from s->parts.gather, by Thomas in
 * double precision (as the host's solve), the unknowns of this rank's rows to s->parts.x. */
kedr_status adi_cuda_iface_solve(kedr_adi *s);
/* Page-locked host memory, for the buffers that go between host and GPU every sweep. */
kedr_status adi_cuda_host_alloc(void **p, size_t bytes);
void adi_cuda_host_free(void *p);
kedr_status adi_cuda_halo(kedr_adi *s, const adi_params *p, void *const *f, int nf, int pack,
                          int lo, int hi);
#endif

/* Node index of the device layout (z fastest) of local plane l. */
static inline size_t adi_index(const kedr_adi_case *c, int l, int j, int k)
{
    return (size_t)k + (size_t)c->nz * ((size_t)j + (size_t)c->ny * (size_t)l);
}

/* The mask codes of c, x fastest on the host (kedr_adi_case_check's classification). */
kedr_status adi_classify(const kedr_adi_case *c, unsigned char *codes, int64_t *unknowns);
/* The sweep parameters of c for the layout with strides s and nxl planes along x. */
void adi_params_init(const kedr_adi_case *c, int nxl, const int64_t s[3], adi_params *p);
/* The planes [*lo, *hi) of rank r of n: n <= nx / 2 ranks, each at least 2 planes. */
void adi_slab(int nx, int r, int n, int *lo, int *hi);
/* Over several ranks (ranks.c): the halo planes of fields first .. first+nf-1 of st (layout p)
 * from the neighbouring ranks; the X sweep by the partitioned solver; its buffers (this rank's,
 * then, collectively, those shared with the other ranks). */
kedr_status adi_exchange_halos(kedr_adi *s, const adi_params *p, const adi_state *st, int first,
                               int nf);
kedr_status adi_part_sweep(kedr_adi *s, const adi_state *out, const adi_state *old,
                           const adi_state *coef);
kedr_status adi_parts_allocate(kedr_adi *s);
kedr_status adi_parts_connect(kedr_adi *s);
/* x_interface = gather: the interface systems of every line from the nranks slots of
 * s->parts.gather solved on s's back end, the unknowns of rank s->rank's rows to s->parts.x. The
 * cpu reads nothing else of s but ctx, nranks, rank, plane and real_size, and uses
 * s->parts.h_send (8 nranks plane reals) and h_sys (4 nranks plane doubles); cuda reads the
 * same but those two. */
kedr_status adi_iface_solve(kedr_adi *s);
void adi_parts_free(kedr_adi *s);

/* Element i of a host array of reals of rs bytes. */
static inline double adi_get_real(const void *b, size_t i, int rs)
{
    return rs == 4 ? (double)((const float *)b)[i] : ((const double *)b)[i];
}

static inline void adi_put_real(void *b, size_t i, int rs, double x)
{
    if (rs == 4)
        ((float *)b)[i] = (float)x;
    else
        ((double *)b)[i] = x;
}

/* The fields of the own planes to and from host arrays of doubles, x fastest over the own
 * planes ((i - lo) + (hi - lo) (j + ny k)); set also copies them into every state, fills the
 * halos and measures. */
kedr_status adi_get_local(kedr_adi *s, double *const f[4]);
kedr_status adi_set_local(kedr_adi *s, const double *const f[4]);

#ifdef __cplusplus
}
#endif
#endif
