/* Private to the Poisson solvers: the grid levels, the stencil of A = -Laplacian with Neumann or
 * periodic ends, and the solver record. */
#ifndef KEDR_FLOW_POISSON_IMPL_H
#define KEDR_FLOW_POISSON_IMPL_H

#include "core/internal.h"
#include "kedr/comm.h"
#include "kedr/flow.h"

#include <stddef.h>

/* Loops over fewer cells than this run on one thread: a parallel region costs more than the
 * loop on small grids (and the coarse multigrid levels). */
#define FLOW_OMP_MIN 32768

/* One grid: the finest (the problem's) or a multigrid level. */
typedef struct {
    int n[3];
    double ih2[3];   /* 1 / h^2 along active axes (n > 1), 0 along inactive ones */
    int per[3];
    size_t N;
    double *diag;    /* A's diagonal */
    double *idiag;   /* its inverse (0 where the diagonal is 0: a one-cell grid) */
    double *x, *b, *r; /* multigrid work (level >= 1: x, b, r; level 0: r only) */
    /* transfer to the next coarser level, per axis: coarsened or not, and the tables */
    int coarsened[3];
    int *p_idx[3];   /* prolongation: fine cell f takes p_w[2f], p_w[2f+1] of coarse p_idx[2f..] */
    double *p_w[3];
    int *r_cnt[3];   /* restriction: coarse cell I gathers r_cnt[I] fine cells r_idx[4I..] */
    int *r_idx[3];
    double *r_w[3];
} flow_level;

#ifdef __CUDACC__
#define FLOW_HD __host__ __device__ __forceinline__
#else
#define FLOW_HD static inline
#endif

/* The neighbours of cell (i, j, k) at index c: weight w[m] (1/h^2, or 0 where the neighbour
 * is outside a Neumann end or the axis is inactive) and index at[m], for m = x-, x+, y-, y+,
 * z-, z+. Branch-free, so that the loops over a row vectorize. */
typedef struct {
    double w[6];
    size_t at[6];
} flow_nb;

FLOW_HD void flow_neighbours(const flow_level *L, int i, int j, int k, size_t c, flow_nb *nb)
{
    const int nx = L->n[0], ny = L->n[1], nz = L->n[2];
    const size_t sy = (size_t)nx, sz = (size_t)nx * (size_t)ny;
    nb->w[0] = (i > 0 || L->per[0]) ? L->ih2[0] : 0.0;
    nb->w[1] = (i < nx - 1 || L->per[0]) ? L->ih2[0] : 0.0;
    nb->w[2] = (j > 0 || L->per[1]) ? L->ih2[1] : 0.0;
    nb->w[3] = (j < ny - 1 || L->per[1]) ? L->ih2[1] : 0.0;
    nb->w[4] = (k > 0 || L->per[2]) ? L->ih2[2] : 0.0;
    nb->w[5] = (k < nz - 1 || L->per[2]) ? L->ih2[2] : 0.0;
    nb->at[0] = i > 0 ? c - 1 : c + (size_t)(nx - 1);
    nb->at[1] = i < nx - 1 ? c + 1 : c - (size_t)(nx - 1);
    nb->at[2] = j > 0 ? c - sy : c + (size_t)(ny - 1) * sy;
    nb->at[3] = j < ny - 1 ? c + sy : c - (size_t)(ny - 1) * sy;
    nb->at[4] = k > 0 ? c - sz : c + (size_t)(nz - 1) * sz;
    nb->at[5] = k < nz - 1 ? c + sz : c - (size_t)(nz - 1) * sz;
}

FLOW_HD size_t flow_index(const flow_level *L, int i, int j, int k)
{
    return (size_t)i + (size_t)L->n[0] * ((size_t)j + (size_t)L->n[1] * (size_t)k);
}

/* The per-cell operations, the same for the cpu loops and the cuda kernels. */

/* (A x)_c */
FLOW_HD double flow_cell_apply(const flow_level *L, const double *x, int i, int j, int k)
{
    size_t c = flow_index(L, i, j, k);
    flow_nb nb;
    flow_neighbours(L, i, j, k, c, &nb);
    double s = L->diag[c] * x[c];
    for (int m = 0; m < 6; m++)
        s -= nb.w[m] * x[nb.at[m]];
    return s;
}

/* A slab's (b - A x)_c, or (A x)_c where b is NULL, then plus a times the neighbour rank's cell
 * across its first plane (below, where given) and then across its last plane (above), as
 * axpy's on the product would add them (layer: the cells of a plane across the last axis). */
FLOW_HD double flow_cell_apply_ends(const flow_level *L, const double *x, const double *b,
                                    size_t layer, double a, const double *below,
                                    const double *above, int i, int j, int k)
{
    size_t c = flow_index(L, i, j, k), last = L->N - layer;
    double ax = flow_cell_apply(L, x, i, j, k);
    double v = b ? b[c] - ax : ax;
    if (below && c < layer)
        v += a * below[c];
    if (above && c >= last)
        v += a * above[c - last];
    return v;
}

/* Gauss–Seidel's new x_c, (12.35)/(12.36): (b_c + sum of neighbours) / D_c. */
FLOW_HD double flow_cell_gs(const flow_level *L, const double *x, const double *b, int i, int j,
                            int k)
{
    size_t c = flow_index(L, i, j, k);
    flow_nb nb;
    flow_neighbours(L, i, j, k, c, &nb);
    double s = b[c];
    for (int m = 0; m < 6; m++)
        s += nb.w[m] * x[nb.at[m]];
    return s * L->idiag[c];
}

/* The same with the right-hand side of a slab's cell: b_c, plus ih2 times the neighbour rank's
 * cell across the slab's first plane (below, where given) and then across its last plane
 * (above): the plane of `layer` cells next to the slab along its last axis. The additions in the
 * order of b + ih2 below then + ih2 above, as axpy's on a copy of b would make them. */
FLOW_HD double flow_cell_gs_ends(const flow_level *L, const double *x, const double *b,
                                 size_t layer, double ih2, const double *below,
                                 const double *above, int i, int j, int k)
{
    size_t c = flow_index(L, i, j, k), last = L->N - layer;
    flow_nb nb;
    flow_neighbours(L, i, j, k, c, &nb);
    double s = b[c];
    if (below && c < layer)
        s += ih2 * below[c];
    if (above && c >= last)
        s += ih2 * above[c - last];
    for (int m = 0; m < 6; m++)
        s += nb.w[m] * x[nb.at[m]];
    return s * L->idiag[c];
}

/* (12.37), first factor applied: ((I - D^-1 L^T) r)_c = r_c + D_c^-1 sum_{later m} r_m / h^2 */
FLOW_HD double flow_cell_ainv_upper(const flow_level *L, const double *r, int i, int j, int k)
{
    size_t c = flow_index(L, i, j, k);
    flow_nb nb;
    flow_neighbours(L, i, j, k, c, &nb);
    double s = 0;
    for (int m = 0; m < 6; m++)
        s += nb.at[m] > c ? nb.w[m] * r[nb.at[m]] : 0.0;
    return r[c] + L->idiag[c] * s;
}

/* second factor: ((I - L D^-1) t)_c = t_c + sum_{earlier m} t_m D_m^-1 / h^2 */
FLOW_HD double flow_cell_ainv_lower(const flow_level *L, const double *t, int i, int j, int k)
{
    size_t c = flow_index(L, i, j, k);
    flow_nb nb;
    flow_neighbours(L, i, j, k, c, &nb);
    double s = 0;
    for (int m = 0; m < 6; m++)
        s += nb.at[m] < c ? nb.w[m] * t[nb.at[m]] * L->idiag[nb.at[m]] : 0.0;
    return t[c] + s;
}

/* A slab's factors of (12.37) over ranks (split along axis, layer cells a plane): as the two
 * above, the neighbour rank's cell across the first plane (lo) or the last (hi) taking the
 * place of the split axis's neighbour m = 2 axis or 2 axis + 1 in the same sum, where given:
 * the caller gives those that come later in the whole grid's order (upper: r's planes) or
 * earlier (lower: t's planes, with the neighbours' inverse diagonals lo_id, hi_id). Cells off
 * the end planes read no neighbour rank. */
FLOW_HD double flow_cell_ainv_upper_ends(const flow_level *L, const double *r, size_t layer,
                                         int axis, double ih2, const double *lo,
                                         const double *hi, int i, int j, int k)
{
    size_t c = flow_index(L, i, j, k), last = L->N - layer;
    flow_nb nb;
    flow_neighbours(L, i, j, k, c, &nb);
    double s = 0;
    for (int m = 0; m < 6; m++) {
        double v = nb.at[m] > c ? nb.w[m] * r[nb.at[m]] : 0.0;
        if (m == 2 * axis && lo && c < layer)
            v = ih2 * lo[c];
        if (m == 2 * axis + 1 && hi && c >= last)
            v = ih2 * hi[c - last];
        s += v;
    }
    return r[c] + L->idiag[c] * s;
}

FLOW_HD double flow_cell_ainv_lower_ends(const flow_level *L, const double *t, size_t layer,
                                         int axis, double ih2, const double *lo,
                                         const double *lo_id, const double *hi,
                                         const double *hi_id, int i, int j, int k)
{
    size_t c = flow_index(L, i, j, k), last = L->N - layer;
    flow_nb nb;
    flow_neighbours(L, i, j, k, c, &nb);
    double s = 0;
    for (int m = 0; m < 6; m++) {
        double v = nb.at[m] < c ? nb.w[m] * t[nb.at[m]] * L->idiag[nb.at[m]] : 0.0;
        if (m == 2 * axis && lo && c < layer)
            v = ih2 * lo[c] * lo_id[c];
        if (m == 2 * axis + 1 && hi && c >= last)
            v = ih2 * hi[c - last] * hi_id[c - last];
        s += v;
    }
    return t[c] + s;
}

/* Restriction to coarse cell (I, J, K) from the fine level F (F's tables). */
FLOW_HD double flow_cell_restrict(const flow_level *F, const double *r, int I, int J, int K)
{
    double s = 0;
    for (int ek = 0; ek < F->r_cnt[2][K]; ek++) {
        int k = F->r_idx[2][4 * K + ek];
        double wk = F->r_w[2][4 * K + ek];
        for (int ej = 0; ej < F->r_cnt[1][J]; ej++) {
            int j = F->r_idx[1][4 * J + ej];
            double wjk = wk * F->r_w[1][4 * J + ej];
            const double *row = r + flow_index(F, 0, j, k);
            for (int ei = 0; ei < F->r_cnt[0][I]; ei++)
                s += wjk * F->r_w[0][4 * I + ei] * row[F->r_idx[0][4 * I + ei]];
        }
    }
    return s;
}

/* Prolongation to fine cell (i, j, k) from the coarse level C. */
FLOW_HD double flow_cell_prolong(const flow_level *F, const flow_level *C, const double *xc,
                                 int i, int j, int k)
{
    double s = 0;
    for (int sk = 0; sk < 2; sk++) {
        double wk = F->p_w[2][2 * k + sk];
        if (wk == 0)
            continue;
        int K = F->p_idx[2][2 * k + sk];
        for (int sj = 0; sj < 2; sj++) {
            double wjk = wk * F->p_w[1][2 * j + sj];
            if (wjk == 0)
                continue;
            const double *row = xc + flow_index(C, 0, F->p_idx[1][2 * j + sj], K);
            s += wjk * (F->p_w[0][2 * i] * row[F->p_idx[0][2 * i]] +
                        F->p_w[0][2 * i + 1] * row[F->p_idx[0][2 * i + 1]]);
        }
    }
    return s;
}

#define FLOW_MAX_LEVELS 24

/* Multigrid over ranks (mg_ranks.c): a level's part of the slab along the split axis. */
typedef struct {
    int off, cnt;      /* this rank's first plane of the level and its planes */
    size_t layer;      /* cells of one plane */
    double ih2;        /* 1 / h^2 along the split axis */
    int halo;          /* the transfer to the next level halves the split axis: it reads two
                          neighbour planes on each side (restriction: of r; prolongation: of
                          the next level's x) */
    double *r, *x;     /* the level's residual and (levels >= 1) correction: inside rbase and
                          xbase, after their two lower ghost planes where the transfers read
                          them */
    double *rbase, *xbase;
    /* two-plane smoothing (KEDR_FLOW_MG_HALO=2, mg_ranks.c): every rank holds at least two
     * planes of the level, so one exchange of two planes serves two half-sweeps: the
     * neighbours' end planes (ghosts) get the first half-sweep here too, as their ranks compute
     * it. glo and ghi view the lower ghost pair [E2 | G1] and the upper one [G1 | E2] (E2 the
     * plane beyond the ghost G1) in the exchange's receive areas; where every rank holds three
     * planes (deep3), the last pair before the residual lends three planes and glo3, ghi3 view
     * [E3 | E2 | G1] and [G1 | E2 | E3], so that both half-sweeps reach G1 and the residual
     * needs no exchange. Their right-hand sides t3lo = [0 | b E2 | b G1], t3hi = [b G1 | b E2 |
     * 0] (the neighbours' b, lent once a V-cycle) and inverse diagonals (the neighbours' own, 0
     * on E3) in gbuf; the two-plane views use their last (lo) or first (hi) two planes */
    int deep, deep3;
    double *gbuf, *t3lo, *t3hi;
    flow_level glo, ghi, glo3, ghi3;
} flow_rk_level;

/* A halo exchange between a slab and its neighbours (ranks.c): one buffer of the context's
 * memory, [send lo | send hi | recv lo | recv hi] of cap doubles each (the same cap on every
 * rank), then two 64-bit signal words (from the rank below, from the rank above), registered with
 * the comm layer (kedr_comm_dev: GPU to GPU between the ranks of a host, through host memory
 * otherwise). An exchange packs the end planes of its fields into the send areas on the device,
 * sends both neighbours theirs in one kedr_comm_dev_sendrecv and copies the received planes out
 * where asked (or they are read in place).
 * Signalled (KEDR_FLOW_XCH_SIGNAL=1, the default where every rank's neighbours are on other GPUs
 * of the host, GPU to GPU): no host in an exchange. Exchange number s writes the end planes
 * straight into the neighbours' receive areas of parity s mod 2 (parity 0 the areas above,
 * parity 1 the send areas, unused on this path), then kedr_comm_dev_signal stores s into their
 * signal words and waits for theirs. Two sets of areas in turn: a neighbour writes this rank's
 * areas of parity s only after its own wait of exchange s - 1, which follows every read this
 * rank queued of exchange s - 2's planes (the exchanges are symmetric, each rank's work on its
 * one stream in order). */
typedef struct flow_xch {
    struct kedr_comm *comm;
    kedr_ctx *ctx;
    kedr_comm_dev *dev;
    double *buf;
    size_t cap;
    int lo, hi;        /* the neighbour ranks (-1: none) */
    double seconds;    /* wall time in exchanges (from a synchronised device with flow_prof) */
    int64_t count;     /* exchanges */
    int signal;        /* signalled exchanges (above) */
    int par;           /* the receive areas of the last exchange: 0 or 1 (signalled only) */
    uint64_t seq;      /* signalled: exchanges so far (never reset, unlike count) */
    double *peer_lo, *peer_hi; /* signalled: the neighbours' buffers as mapped here */
} flow_xch;
/* KEDR_FLOW_PROF=1 in the environment: each exchange first synchronises the device, so that its
 * time is its own (not the queued work's before it), and kedr_flow_destroy prints the times. */
int flow_prof(void);
/* A switch from the environment: *on = 1 or 0 as variable name says, def where it is unset or
 * empty; any other value refused, naming it and what is expected (choices). */
kedr_status flow_env_switch(const char *name, int def, const char *choices, int *on);
/* KEDR_FLOW_FUSE (read at creation): 1 (the default on both back ends) merges what the step and
 * the solver over ranks may merge without changing a bit: PCG's (r, r) travels in the allreduce
 * of (r, z), and the immersed bodies' three force systems run side by side; 0: the earlier path
 * (a message for each). Anything else is refused. */
kedr_status flow_fuse_env(int *on, int cuda);
/* KEDR_FLOW_OVERLAP (read when a solver is set over ranks): 1 computes a slab's interior planes
 * of a product A x or residual b - A x, of AINV's two factors and of the smoothing's half-sweeps
 * after an exchange (multigrid, SSOR) while the halo travels (cuda: on a second stream), then
 * the end planes; 0: the whole slab after the halo. The same bits either way. Unset: 1 on the
 * cpu, and on cuda where the whole grid's cells over the ranks (slab_cells) reach
 * FLOW_OVERLAP_AUTO_CELLS (measured: the 512^3 sphere on 4 GPUs 2.7% faster with it; tiny
 * test grids slower, the second stream's events costing more than they hide). Anything else
 * is refused. */
#define FLOW_OVERLAP_AUTO_CELLS 4194304.0
kedr_status flow_overlap_env(int *on, int cuda, double slab_cells);
/* Where the last exchange's planes from below and from above are. */
#define FLOW_XCH_BELOW(x) ((x)->buf + ((x)->par ? 0 : 2) * (x)->cap)
#define FLOW_XCH_ABOVE(x) ((x)->buf + ((x)->par ? 1 : 3) * (x)->cap)
/* Local: the record and its buffer. Collective (every rank, after agreeing that all made
 * theirs): the registration. */
kedr_status flow_xch_alloc(kedr_ctx *ctx, struct kedr_comm *comm, int lo, int hi, size_t cap,
                           flow_xch **out);
kedr_status flow_xch_register(flow_xch *x);
void flow_xch_free(flow_xch *x);
/* Sends the nf fields' count doubles at first[f] to rank lo and at last[f] to rank hi, and
 * receives lo's last ones and hi's first ones (nf count <= cap); field f's planes are copied to
 * below[f] and above[f], or read in place at FLOW_XCH_BELOW/ABOVE + f count where those are
 * NULL (until the next exchange). Tags tag and tag + 1. */
kedr_status flow_xch_halo(flow_xch *x, int tag, int nf, const double *const *first,
                          const double *const *last, size_t count, double *const *below,
                          double *const *above);

/* The parts of the solver over ranks that KEDR_FLOW_PROF times (flow_ranks.part): multigrid
 * smoothing (and SSOR), the multigrid residuals, restriction and prolongation (and the copies
 * in and out of the gathered level), the gathered levels' V-cycle (coarse solve), the dot
 * products and sums over ranks (device reduction, download, MPI allreduce), and PCG's products
 * A p and residuals b - A x. */
enum { FLOW_PART_SMOOTH, FLOW_PART_RESIDUAL, FLOW_PART_TRANSFER, FLOW_PART_COARSE,
       FLOW_PART_REDUCE, FLOW_PART_OPERATOR, FLOW_PARTS };

/* The Poisson problem of one slab of a grid split over ranks along its last axis (ranks.c):
 * the neighbour ranks below and above (-1 at a Neumann end), the layers they lend (in the
 * context's memory), and the global cell count for means. */
typedef struct flow_ranks {
    struct kedr_comm *comm;
    int lo, hi;
    int axis;          /* the split axis (1 in 2D, 2 in 3D) */
    int gn, periodic;  /* the whole grid's cells along it, and whether it is periodic */
    size_t layer;      /* cells of one layer across it */
    double gN;         /* cells of the whole grid */
    double ih2;        /* 1 / h^2 along the split axis */
    flow_xch *xch;     /* the halos (two planes of level 0 at most) */
    int parity;        /* the slab's first layer's index in the grid, mod 2 (red-black) */
    /* multigrid: levels 0 .. nlevels - 1 of ps are this rank's slabs of the grid's levels; the
     * level gather_at (nlevels - 1: the coarsest one here; nlevels: the one after it) is
     * gathered whole on every rank and its V-cycle run there by sub, a one-rank solver */
    flow_rk_level lv[FLOW_MAX_LEVELS];
    int gather_at;
    struct kedr_flow_poisson *sub;
    int goff, gcnt;    /* this rank's planes of the gathered level */
    size_t glayer;
    int *goffs;        /* every rank's first plane of the gathered level (ranks + 1) */
    double *gpart;     /* this rank's part of the gathered level's b (gather_at = nlevels) */
    double *gb, *gx;   /* the whole gathered level's b and x (the context's memory); gb is
                          registered (gdev): each rank copies its part into the others' */
    kedr_comm_dev *gdev;
    kedr_comm_dev_msg *gmsg; /* the gather's messages: 2 ranks */
    double gather_seconds;
    int64_t gathers;
    int deep;          /* two-plane smoothing in force (KEDR_FLOW_MG_HALO=2 on every rank) */
    int overlap;       /* KEDR_FLOW_OVERLAP (flow_overlap_env) */
    void *side;        /* the side stream of the overlapped products (flow_op_side_create) */
    /* AINV (12.37) over ranks: which neighbour planes come later in the whole grid's order
     * (the upper factor's) or earlier (the lower's): below is later only at the grid's first
     * plane of a periodic axis, above earlier only at its last; the neighbours' inverse
     * diagonals across the end planes [below | above] (layer each), lent once */
    int below_later, above_earlier;
    double *ainv_id;
} flow_ranks;
struct kedr_flow_poisson {
    kedr_ctx *ctx;
    flow_ranks *rk;         /* NULL: the whole grid is here */
    kedr_flow_poisson_opts o;
    int fuse;               /* KEDR_FLOW_FUSE (flow_fuse_env) */
    int graph;              /* KEDR_FLOW_MG_GRAPH: a one-rank V-cycle replayed (mg.c) */
    kedr_replay vc;         /* the recorded V-cycle */
    int nlevels;
    flow_level lv[FLOW_MAX_LEVELS];
    /* the coarsest level: x = M b with M = (A + s 1 1^T)^-1 (I - 1 1^T / N), a dense N x N
     * matrix in the context's memory (N <= FLOW_DENSE_MAX: one product on the device, no
     * wait for the host), or (larger) a fixed number of symmetric Gauss–Seidel sweeps */
    double *coarse_inv;
    int coarse_sweeps;
    double omega;           /* Jacobi relaxation in force */
    /* PCG vectors on the finest grid */
    double *r, *z, *p, *q, *t, *bb;
    double *history;
    int history_cap;
    struct flow_fft *fft;   /* method fft (fft.c) */
    /* the wall time by part of the solver (flow_rk_part_*: over ranks, or on one rank with
     * KEDR_FLOW_PROF=1; the exchanges inside a part not counted in it: they are the ranks'
     * xch->seconds and gather_seconds) */
    double part[FLOW_PARTS];
};

/* Over ranks (ranks.c): sets up ps for its slab (the diagonal of the slab's end layers counts
 * the neighbour's cells); PCG with Jacobi, red-black SSOR, multigrid or none, or multigrid
 * alone. The whole grid has gn cells along axis (periodic or not); this slab starts at first. */
kedr_status flow_poisson_set_ranks(kedr_flow_poisson *ps, struct kedr_comm *comm, int axis,
                                   int lo, int hi, int first, int gn, int periodic);
/* A part's wall time (ranks.c): flow_rk_part_begin at its start (a device synchronisation first
 * with KEDR_FLOW_PROF=1), flow_rk_part_end at its end adds the time since, less the exchanges'
 * time in between, to ps->part[part]. No-ops on one rank (rk NULL) without KEDR_FLOW_PROF=1. */
typedef struct {
    double t, xch;
} flow_part_mark;
flow_part_mark flow_rk_part_begin(kedr_flow_poisson *ps);
kedr_status flow_rk_part_end(kedr_flow_poisson *ps, int part, flow_part_mark m);
/* The slab of rank r of nr along an axis of n cells: its first cell and cell count (ranks.c). */
void flow_slab(int n, int r, int nr, int *off, int *count);
/* The end planes' diagonal of a slab level counts the neighbours' cells (ranks.c). */
kedr_status flow_rk_end_diag(kedr_flow_poisson *ps, flow_level *L, size_t layer, double ih2);
/* r = b - A x on level l's slab, the neighbours' planes lent (ranks.c). */
kedr_status flow_rk_residual_at(kedr_flow_poisson *ps, int l, const double *x, const double *b,
                                double *r);
/* Multigrid over ranks (mg_ranks.c): the levels, their transfers and the gathered coarse
 * solver; one V-cycle; freeing what the setup made. */
kedr_status flow_rk_mg_setup(kedr_flow_poisson *ps);
/* Collective, once the halo buffer is registered: agrees on the two-plane smoothing and lends
 * the neighbours' inverse diagonals it needs. */
kedr_status flow_rk_mg_ghosts(kedr_flow_poisson *ps);
kedr_status flow_rk_vcycle(kedr_flow_poisson *ps, const double *r, double *z);
void flow_rk_mg_free(kedr_flow_poisson *ps);
/* z = (I - L D^-1)(I - D^-1 L^T) r over the ranks (ranks.c), t a work vector: two halos (r's,
 * then t's), each overlapped with the factor's interior planes under KEDR_FLOW_OVERLAP=1. */
kedr_status flow_rk_ainv(kedr_flow_poisson *ps, const double *r, double *t, double *z);
/* One red-black half-sweep (colour in the slab's own indices) after a one-plane exchange of x's
 * end planes (ranks.c); KEDR_FLOW_OVERLAP=1 and three planes or more: the interior rows on the
 * side stream while the planes travel. SSOR over ranks and multigrid's one-plane smoothing. */
kedr_status flow_rk_gs_halo(kedr_flow_poisson *ps, const flow_level *L, double *x,
                            const double *b, int colour, size_t layer, double ih2);
/* m steps of red-black SSOR from z = 0 over the ranks (ranks.c). */
kedr_status flow_rk_ssor(kedr_flow_poisson *ps, const double *r, double *z);
void flow_rk_free(kedr_flow_poisson *ps);
/* The dot product, sum, y = A x and r = b - A x over every rank (plain on one). */
kedr_status flow_rk_dot(kedr_flow_poisson *ps, size_t n, const double *a, const double *b,
                        double *out);
kedr_status flow_rk_sum(kedr_flow_poisson *ps, size_t n, const double *a, double *out);
/* Over ranks: *out = (a, b) and *rr (this slab's part on entry) summed over every rank in one
 * allreduce. */
kedr_status flow_rk_dot_rr(kedr_flow_poisson *ps, size_t n, const double *a, const double *b,
                           double *out, double *rr);
kedr_status flow_rk_apply(kedr_flow_poisson *ps, const flow_level *L, const double *x, double *y);
kedr_status flow_rk_residual(kedr_flow_poisson *ps, const flow_level *L, const double *x,
                             const double *b, double *r);

/* The coarsest multigrid grid solved directly up to this many cells. */
#define FLOW_DENSE_MAX 512

/* The transfer tables of one axis (mg.c), on the host; the rule that picks the axes a level
 * halves (returns 0 when the level is the coarsest), as one rank builds the levels. */
typedef struct {
    int *p_idx;
    double *p_w;
    int *r_cnt, *r_idx;
    double *r_w;
} flow_axis_tables;
kedr_status flow_mg_axis_host(int nf, int nc, int coarsened, int per, flow_axis_tables *t);
void flow_mg_axis_free(flow_axis_tables *t);
kedr_status flow_mg_axis_upload(kedr_ctx *ctx, flow_level *F, int a, int nf, int nc,
                                const flow_axis_tables *t);
int flow_mg_next(const int n[3], const int per[3], int coarsened[3], int nc[3]);

/* The level's diagonal and its inverse (computed on the host, copied to the context). */
kedr_status flow_level_diag(kedr_ctx *ctx, flow_level *L);

/* The direct FFT / DCT solver (fft.c, with FFTW): plans and eigenvalues; x = A^+ b. */
kedr_status flow_fft_setup(kedr_flow_poisson *ps);
void flow_fft_free(kedr_flow_poisson *ps);
kedr_status flow_fft_solve(kedr_flow_poisson *ps, const double *b, double *x);

/* Multigrid (mg.c): the levels below the finest and their transfers; one V-cycle from zero,
 * z = V(r), a symmetric operator, on the finest level. */
kedr_status flow_mg_setup(kedr_flow_poisson *ps);
void flow_mg_free(kedr_flow_poisson *ps);
kedr_status flow_mg_vcycle(kedr_flow_poisson *ps, const double *r, double *z);

#endif
