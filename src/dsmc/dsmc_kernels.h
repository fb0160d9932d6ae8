/* Private: the DSMC physics of one particle, one new particle or one cell, as inline code that
 * both back ends compile (C with OpenMP loops in sim_cpu.c, CUDA kernels in sim.cu). Keeping a
 * single copy of the physics is what makes the two back ends draw the same random numbers and
 * follow the same logic. */
#ifndef DSMC_KERNELS_H
#define DSMC_KERNELS_H

#include "kedr/dsmc.h"
#include "kedr/prim.h"
#include "kedr/rng.h"

#include "dsmc_math.h"

#include <math.h>
#include <string.h>

#ifdef __CUDACC__
#define DSMC_HD __host__ __device__ static inline
#else
#define DSMC_HD static inline
#endif

#define DSMC_MAXS KEDR_DSMC_MAX_SPECIES
#define DSMC_MAXR KEDR_DSMC_MAX_REACTIONS
#define DSMC_DROP KEDR_KEY_DROP
/* Wall and body events followed in one move before a particle is left where it is. */
#define DSMC_MAX_EVENTS 16
#define DSMC_PI 3.14159265358979323846

/* Random-number purposes: the high byte of the Philox purpose word; the low 24 bits count the
 * draws of one stream. */
enum {
    DSMC_P_FILL_COUNT = 1, /* entity: cell; low bits: species */
    DSMC_P_FILL = 2,       /* entity: new particle in the fill batch */
    DSMC_P_INFLOW_COUNT = 3, /* entity: boundary face; low bits: species */
    DSMC_P_INFLOW = 4,     /* entity: new particle in this step's inflow batch */
    DSMC_P_MOVE = 5,       /* entity: particle index before the move */
    DSMC_P_COLLIDE = 6,    /* entity: cell */
    DSMC_P_FILL_ROT = 7,   /* entity: new particle in the fill batch (rotational energy) */
    DSMC_P_INFLOW_ROT = 8, /* entity: new particle in this step's inflow batch (same) */
    DSMC_P_PAIR = 9,       /* entity: cell; low bits: candidate pair (its choice) */
    DSMC_P_SCATTER = 10,   /* entity: cell + 2^32 candidate pair (its partner and scattering) */
    DSMC_P_FILL_VIB = 11,  /* entity: new particle in the fill batch (vibrational level) */
    DSMC_P_INFLOW_VIB = 12 /* entity: new particle in this step's inflow batch (same) */
};
#define DSMC_PURPOSE(base, k) (((uint32_t)(base) << 24) | (uint32_t)(k))

/* The triangles of the 3D bodies of type stl (mesh.c, dsmc_mesh.h), binned into a grid of
 * bins around every stl body: the DSMC cells there, each split in k^3 bins (k from the
 * triangles' size, so that a bin holds a few), n[d] bins along axis d from o[d], of size h[d]
 * (inv[d] = 1 / h[d]). Triangle t: tri[12 t ...] its vertex a, edges b - a and c - a, and unit
 * outward normal; the triangles that cut bin c (x fastest): list[start[c] .. start[c + 1]).
 * ntri 0 and NULL pointers without stl bodies. */
typedef struct {
    const double *tri;
    const uint32_t *start, *list;
    /* per bin that no triangle cuts: 1 + the stl solid it lies in, 0 in the gas */
    const uint8_t *solid;
    uint32_t ntri;
    int n[3];
    double o[3], h[3], inv[3];
    uint64_t hash; /* FNV-1a of tri: a checkpoint's case hash covers every vertex */
} dsmc_mesh;

/* The segments of the 2D and axisymmetric bodies of type outline (lines.c, dsmc_lines.h),
 * binned as the stl triangles are: a grid of n[0] x n[1] bins from o (size h, inv = 1 / h)
 * around every outline body, each DSMC cell there split in k x k. Segment k: seg[4 k ...] its
 * ends x0 y0 x1 y1 (in the file's order), elem[2 k] its first surface element and elem[2 k + 1]
 * their count (0 for a segment on the axis of an axisymmetric case: no surface); the segments
 * whose box (widened by a millionth of a bin) meets bin c: list[start[c] .. start[c + 1]); per
 * bin that none meets, cls: 1 inside an outline body, 0 in the gas. box: the segments' own
 * bounding box. nseg 0 and NULL pointers without outline bodies. */
typedef struct {
    const double *seg;
    const uint32_t *elem;
    const uint32_t *start, *list;
    const uint8_t *cls;
    uint32_t nseg;
    int n[2];
    double o[2], h[2], inv[2], box[4];
    uint64_t hash; /* FNV-1a of seg: a checkpoint's case hash covers every point */
} dsmc_lines;

/* Chemistry (the total collision energy model, docs/dsmc.md): nreact reactions (0: the gas
 * does not react); pair_reacts[pair] is 1 when species pair (either order) has one. Reaction r:
 * reactant re_a[r] (the one that breaks, or exchanges into re_p[r][0]) meets re_b[r] (exchange:
 * becomes re_p[r][1]; dissociation: the third body, re_p[r][2]); dissociation (re_diss) makes a
 * new molecule of re_p[r][1]. Its probability in a collision of energy E_c > re_ea is
 * exp(re_lc) (E_c - re_ea)^re_x / E_c^re_y (dsmc_react_prob); re_de is the products' energy of
 * formation less the reactants'. */
typedef struct {
    int nreact;
    uint8_t pair_reacts[DSMC_MAXS * DSMC_MAXS];
    uint8_t re_a[DSMC_MAXR], re_b[DSMC_MAXR], re_p[DSMC_MAXR][3], re_diss[DSMC_MAXR];
    double re_ea[DSMC_MAXR], re_de[DSMC_MAXR], re_lc[DSMC_MAXR], re_x[DSMC_MAXR], re_y[DSMC_MAXR];
} dsmc_reactions;

/* Everything the per-particle and per-cell code reads; passed by value to CUDA kernels (sim.cu
 * checks its size against the kernel-parameter limit). */
typedef struct {
    int dims;                  /* 2 or 3 */
    double lo[3], hi[3];
    double dx, dy, dz, inv_dx, inv_dy, inv_dz, cell_volume;
    int nx, ny, nz;
    /* Axisymmetric (2D): x is the axis, y the radius. radial: radial weighting, a particle of
     * cell row j stands for weight (lo[1] + (j + 1/2) dy) wr_inv molecules (dsmc_weight_factor). */
    int axisym, radial;
    double wr_inv;
    int side[6];
    int nsegments;
    /* 2D segments, or (3D, no segments there) the solids: sphere: centre, radius; cuboid: lo x y
     * z, hi x y z; cone: apex x y z, tan(half angle), length, base radius. */
    union {
        double seg[KEDR_DSMC_MAX_SEGMENTS][4];
        double solid[KEDR_DSMC_MAX_BODIES][8];
    };
    /* 3D solids: type (kedr_dsmc_body_type), body, first surface element and the element grid
     * (sphere: bands, azimuths; cuboid: elements along x, y, z; cone: bands, azimuths, rings;
     * stl: its first triangle in mesh and its triangle count, one element each). An stl solid's
     * params are laid out as a cone's box reads them (box lo x, centre y, centre z, unused, x
     * length, half the larger of the y and z widths), so that a cone's bounding box, as
     * dsmc_far_box (sim_cpu.c) takes it, covers it. */
    int nsolids;
    int8_t solid_type[KEDR_DSMC_MAX_BODIES];
    uint8_t solid_body[KEDR_DSMC_MAX_BODIES];
    uint32_t solid_elem[KEDR_DSMC_MAX_BODIES], solid_n[KEDR_DSMC_MAX_BODIES][3];
    /* Bodies (geometry.c): seg_out[k] is 0 for a two-sided segment (a plate), else +1 or -1,
     * the sign that turns the segment's left normal (-dy, dx) into the outward one. Surface
     * elements: segment k owns seg_nelem[k] per side from seg_elem[k]; circle j likewise. */
    int8_t seg_out[KEDR_DSMC_MAX_SEGMENTS];
    uint32_t seg_elem[KEDR_DSMC_MAX_SEGMENTS], seg_nelem[KEDR_DSMC_MAX_SEGMENTS];
    int ncircles;
    double circle[KEDR_DSMC_MAX_BODIES][3]; /* centre x, y, radius */
    uint32_t circ_elem[KEDR_DSMC_MAX_BODIES], circ_nelem[KEDR_DSMC_MAX_BODIES];
    /* Walls: segment k belongs to body seg_body[k], circle j to circ_body[j]; body b moves with
     * body_u[b], has the wall temperature body_t[b], the wall model body_wall[b] (a
     * kedr_dsmc_wall) and the accommodation body_acc[b] (the last entry: the bare segments, at
     * rest). */
    uint8_t seg_body[KEDR_DSMC_MAX_SEGMENTS], circ_body[KEDR_DSMC_MAX_BODIES];
    double body_u[KEDR_DSMC_MAX_BODIES + 1][2];
    double body_t[KEDR_DSMC_MAX_BODIES + 1];
    int body_wall[KEDR_DSMC_MAX_BODIES + 1];
    double body_acc[KEDR_DSMC_MAX_BODIES + 1];
    /* the stl triangles in the back end's memory, and in host memory for host code (the same
     * arrays on the cpu): dsmc_mesh_of picks */
    dsmc_mesh mesh, mesh_host;
    uint32_t nelem;
    double nudge;              /* distance a reflected molecule is put off the wall */
    const double *gas_volume;  /* per cell, context memory; NULL: every cell is cell_volume */
    double *surf;              /* DSMC_NSURF x nelem sums, context memory; NULL: not sampling */
    int nspecies;
    double mass[DSMC_MAXS];
    /* Pair (p, q) at p * DSMC_MAXS + q: total cross-section sigma = a g^e, and 1/alpha. */
    double sigma_a[DSMC_MAXS * DSMC_MAXS];
    double sigma_e[DSMC_MAXS * DSMC_MAXS];
    double inv_alpha[DSMC_MAXS * DSMC_MAXS];
    double fraction[DSMC_MAXS];
    int scheme;                /* KEDR_DSMC_NTC or KEDR_DSMC_MFS */
    int partner;               /* KEDR_DSMC_PARTNER_RANDOM, _NEAREST or _SUBCELL */
    int subcells;              /* sub-cells along each axis of a cell (partner = subcell) */
    int rot_dof[DSMC_MAXS];    /* 0, 2 or 3 */
    double rot_prob[DSMC_MAXS]; /* 1 / Z_rot */
    /* Vibration (quantised harmonic oscillator, docs/dsmc.md): vib is 1 when a species
     * vibrates (then every particle keeps a level); theta_v[k] (0: species k does not), its
     * relaxation number zv_const[k] (> 0: constant) or Millikan-White's zv_c1[k], zv_c2[k] with
     * the species' own omega zv_omega[k]. */
    int vib;
    double theta_v[DSMC_MAXS], zv_const[DSMC_MAXS], zv_c1[DSMC_MAXS], zv_c2[DSMC_MAXS];
    double zv_omega[DSMC_MAXS];
    /* Simple-gas VHS mean free path (Bird 1994 eq. 4.65): 1/lambda = n lam_a T^lam_e. */
    double lam_a[DSMC_MAXS], lam_e[DSMC_MAXS];
    double dt, weight;
    uint64_t seed;
    uint32_t step;
    /* Inflow faces: side s owns global faces [face_start[s], face_start[s + 1]). In 2D the z
     * sides own none. */
    uint32_t face_start[7];
    /* Gas states of new molecules: 0 the freestream, 1 the [downstream] state. Inflow side s
     * draws from state side_state[s]; the initial fill takes state 1 in the cells whose index
     * along fill_axis lies in [fill_from, fill_to) (fill_axis < 0: none). Cell indices, not
     * coordinates, so that host and device cannot round a cell to different states. gas_n is
     * used on the host (counts); it is here so that the checkpoint's case hash covers it. */
    double gas_n[2], gas_t[2], gas_u[2][3];
    double gas_tv[2]; /* the states' vibrational temperatures */
    uint8_t side_state[6];
    int fill_axis, fill_from, fill_to;
    /* Last, so that a checkpoint's hash of the parameters of a gas that does not react covers
     * what it covered before chemistry (checkpoint.c: case_hash). */
    dsmc_reactions rx;
    /* The 2D bodies of type outline, after rx for the same reason (case_hash covers them when
     * there are some): outline body q is body lb_body[q], its segments [lb_first[q],
     * lb_first[q] + lb_count[q]) of lines, lb_out[q] as seg_out for all of them. */
    int nlbodies;
    uint8_t lb_body[KEDR_DSMC_MAX_BODIES];
    int8_t lb_out[KEDR_DSMC_MAX_BODIES];
    uint32_t lb_first[KEDR_DSMC_MAX_BODIES], lb_count[KEDR_DSMC_MAX_BODIES];
    dsmc_lines lines, lines_host; /* the back end's arrays, the host's (dsmc_lines_of picks) */
    /* The DSMC cells of the stl bins' box (mesh.c), each mesh_k^3 bins: 1 where a triangle cuts
     * one of the cell's bins, else 0 (x fastest; the back end's array, the host's). A path whose
     * cells are all 0 meets no triangle (dsmc_mesh_hit). Derived from the triangles, which the
     * mesh's hash covers: after everything case_hash takes, and left out of it. */
    const uint8_t *mesh_cut, *mesh_cut_host;
    int mesh_k;
} dsmc_params;

/* Collision separations over the mean free path are summed in fixed point (units of 2^-24):
 * integer sums do not depend on the order of addition, so the statistic is the same for any
 * thread count and on both back ends, and a restarted run matches an uninterrupted one. */
#define DSMC_SEP_UNIT 16777216.0
DSMC_HD uint64_t dsmc_sep_fixed(double sep_over_mfp)
{
    return (uint64_t)(sep_over_mfp * DSMC_SEP_UNIT + 0.5);
}

/* A stream of uniforms for one entity and purpose: two doubles per Philox draw. */
typedef struct {
    uint64_t seed, entity;
    uint32_t step, purpose;
    kedr_u32x4 w;
    int left;
} dsmc_rng;

DSMC_HD dsmc_rng dsmc_rng_make(uint64_t seed, uint64_t entity, uint32_t step, uint32_t base)
{
    dsmc_rng r;
    r.seed = seed;
    r.entity = entity;
    r.step = step;
    r.purpose = DSMC_PURPOSE(base, 0);
    r.left = 0;
    r.w.v[0] = r.w.v[1] = r.w.v[2] = r.w.v[3] = 0;
    return r;
}

/* The stream whose first block (purpose DSMC_PURPOSE(base, 0)) was drawn already: the same
 * numbers as dsmc_rng_make's (the cpu draws many first blocks at once: kedr_rng_draw_many). */
DSMC_HD dsmc_rng dsmc_rng_drawn(uint64_t seed, uint64_t entity, uint32_t step, uint32_t base,
                                kedr_u32x4 first)
{
    dsmc_rng r = dsmc_rng_make(seed, entity, step, base);
    r.w = first;
    r.left = 2;
    r.purpose++;
    return r;
}

/* Uniform in (0, 1). */
DSMC_HD double dsmc_u01(dsmc_rng *r)
{
    if (r->left == 0) {
        r->w = kedr_rng_draw(r->seed, r->entity, r->step, r->purpose++);
        r->left = 2;
    }
    r->left--;
    return kedr_u01_f64(r->w.v[2 * r->left], r->w.v[2 * r->left + 1]);
}

/* A fresh block of four words of the stream (the rest of the current block is skipped). */
DSMC_HD kedr_u32x4 dsmc_draw4(dsmc_rng *r)
{
    r->left = 0;
    return kedr_rng_draw(r->seed, r->entity, r->step, r->purpose++);
}

/* x^y for x > 0 as exp(y log x): a few ulps from pow (where a probability or a power-law cross
 * section needs no more) at less than half its cost on the cpu. */
DSMC_HD double dsmc_pow(double x, double y)
{
    return exp(y * log(x));
}

/* The same power where the cpu also evaluates batches of it in vector code (the VSS deflection,
 * the mean free path of a simple gas): there its own exp and log (dsmc_math.h), which give the
 * same bits in scalar and in vector code; on CUDA dsmc_pow. */
DSMC_HD double dsmc_powv(double x, double y)
{
#ifdef __CUDA_ARCH__
    return exp(y * log(x));
#else
    return dsmc_pow_cpu(x, y);
#endif
}

/* sin and cos of 2 pi u, u in [0, 1) (a fraction of a turn) */
DSMC_HD void dsmc_sincos_2pi(double u, double *s, double *c)
{
#ifdef __CUDA_ARCH__
    sincospi(2.0 * u, s, c);
#else
    dsmc_sincos_2pi_cpu(u, s, c); /* dsmc_math.h */
#endif
}

/* A standard normal deviate (Box-Muller, one of the pair). */
DSMC_HD double dsmc_normal(dsmc_rng *r)
{
    double u1 = dsmc_u01(r), u2 = dsmc_u01(r), s, c;
    dsmc_sincos_2pi(u2, &s, &c);
    return sqrt(-2.0 * log(u1)) * c;
}

/* z = beta v_n of a molecule crossing a surface from a Maxwellian drifting with speed ratio
 * s = beta u_n along the surface normal (beta = sqrt(m / 2kT)): density proportional to
 * z exp(-(z - s)^2) on z > 0, sampled exactly. With w = z - s the density is (w + s) exp(-w^2)
 * on w > -s. For s >= 0 the proposal (|w| + s) exp(-w^2) is a mixture of |w| exp(-w^2) (sampled
 * by inversion) and s exp(-w^2) (a truncated normal), accepted with (w + s) / (|w| + s); for
 * s < 0 the proposal w exp(-w^2) on w > -s is sampled by inversion and accepted with
 * (w + s) / w. (The same target as Bird 1994 section 12.3 and Garcia & Wagner, J. Comput. Phys.
 * 217 (2006) 693; this decomposition is ours.) */
DSMC_HD double dsmc_flux_normal(dsmc_rng *r, double s)
{
    if (s < 0) {
        for (;;) {
            double w = sqrt(s * s - log(dsmc_u01(r)));
            if (dsmc_u01(r) * w < w + s)
                return w + s;
        }
    }
    double neg = -expm1(-s * s);     /* 1 - exp(-s^2): twice the weight of the w < 0 part */
    double wa = 0.5 + 0.5 * neg;     /* integral of |w| exp(-w^2) over w > -s */
    double wb = 0.5 * sqrt(DSMC_PI) * s * (1.0 + erf(s));
    for (;;) {
        double w;
        if (dsmc_u01(r) * (wa + wb) < wa) {
            if (dsmc_u01(r) * wa < 0.5)
                w = sqrt(-log(dsmc_u01(r)));
            else
                w = -sqrt(-log1p(-dsmc_u01(r) * neg));
        } else {
            do
                w = dsmc_normal(r) * 0.70710678118654752440;
            while (w <= -s);
        }
        if (w >= 0 || dsmc_u01(r) * (s - w) < w + s)
            return w + s;
    }
}

DSMC_HD double dsmc_gas_volume(const dsmc_params *p, uint32_t cell)
{
    return p->gas_volume ? p->gas_volume[cell] : p->cell_volume;
}

/* The molecules a particle of `cell` stands for, over p->weight: under radial weighting the
 * radius of its row's centre over that of the outermost row, else 1. */
DSMC_HD double dsmc_weight_factor(const dsmc_params *p, uint32_t cell)
{
    if (!p->radial)
        return 1.0;
    uint32_t row = cell / (uint32_t)p->nx;
    return (p->lo[1] + ((double)row + 0.5) * p->dy) * p->wr_inv;
}

/* A radius drawn uniformly over the volume of the ring r0 <= r <= r0 + dr of an axisymmetric
 * case (density proportional to r), from u in (0, 1). */
DSMC_HD double dsmc_ring_radius(double r0, double dr, double u)
{
    double r1 = r0 + dr;
    return sqrt(r0 * r0 + u * (r1 * r1 - r0 * r0));
}

#include "dsmc_lines.h" /* the 2D bodies of type outline, of any number of segments */

/* Whether (x, y) lies inside a closed body: inside a circle, or inside the closed polygons by
 * the crossing-number rule over all their segments (bodies do not overlap), or inside an
 * outline body. */
DSMC_HD int dsmc_inside_body(const dsmc_params *p, double x, double y)
{
    if (p->nlbodies && dsmc_inside_lines(p, x, y))
        return 1;
    for (int j = 0; j < p->ncircles; j++) {
        double dx = x - p->circle[j][0], dy = y - p->circle[j][1], r = p->circle[j][2];
        if (dx * dx + dy * dy < r * r)
            return 1;
    }
    int in = 0;
    for (int k = 0; k < p->nsegments; k++) {
        if (p->seg_out[k] == 0)
            continue;
        double x0 = p->seg[k][0], y0 = p->seg[k][1], x1 = p->seg[k][2], y1 = p->seg[k][3];
        if ((y0 > y) != (y1 > y) && x < x0 + (y - y0) * (x1 - x0) / (y1 - y0))
            in = !in;
    }
    return in;
}

DSMC_HD uint32_t dsmc_cell_of(const dsmc_params *p, double x, double y)
{
    int ix = (int)((x - p->lo[0]) * p->inv_dx), iy = (int)((y - p->lo[1]) * p->inv_dy);
    ix = ix < 0 ? 0 : ix >= p->nx ? p->nx - 1 : ix;
    iy = iy < 0 ? 0 : iy >= p->ny ? p->ny - 1 : iy;
    return (uint32_t)iy * (uint32_t)p->nx + (uint32_t)ix;
}

/* ---- generation --------------------------------------------------------------------------- */

/* The gas state (0 freestream, 1 downstream) of the initial fill in a cell. */
DSMC_HD int dsmc_fill_state(const dsmc_params *p, uint32_t cell)
{
    if (p->fill_axis < 0)
        return 0;
    uint32_t nx = (uint32_t)p->nx, ny = (uint32_t)p->ny; /* 2D: cell / nx < ny */
    int i = (int)(p->fill_axis == 0 ? cell % nx : p->fill_axis == 1 ? cell / nx % ny
                                                                    : cell / nx / ny);
    return i >= p->fill_from && i < p->fill_to ? 1 : 0;
}

/* The side that owns inflow face `face`. */
DSMC_HD int dsmc_face_side(const dsmc_params *p, uint32_t face)
{
    int side = 0; /* 2D: the z sides own no faces, so this stops at 3 at most */
    while (side < 5 && face >= p->face_start[side + 1])
        side++;
    return side;
}

/* New particle e of the initial fill, in cell group g = cell * nspecies + species. */
DSMC_HD void dsmc_fill_one(const dsmc_params *p, uint32_t g, uint64_t e, double *x, double *y,
                           double *vx, double *vy, double *vz, uint8_t *sp)
{
    uint32_t cell = g / (uint32_t)p->nspecies, k = g % (uint32_t)p->nspecies;
    dsmc_rng r = dsmc_rng_make(p->seed, e, p->step, DSMC_P_FILL);
    /* Rejection keeps molecules out of bodies; the fill skips cells with under DSMC_MIN_GAS of
     * gas, so the tries almost never run out (probability below exp(-20)). */
    for (int tries = 0; tries < 20000; tries++) {
        *x = p->lo[0] + ((double)(cell % (uint32_t)p->nx) + dsmc_u01(&r)) * p->dx;
        double row = (double)(cell / (uint32_t)p->nx), u = dsmc_u01(&r);
        *y = p->axisym ? dsmc_ring_radius(p->lo[1] + row * p->dy, p->dy, u)
                       : p->lo[1] + (row + u) * p->dy;
        if (p->gas_volume == NULL || !dsmc_inside_body(p, *x, *y))
            break;
    }
    int st = dsmc_fill_state(p, cell);
    double sigma = sqrt(KEDR_BOLTZMANN * p->gas_t[st] / p->mass[k]);
    *vx = p->gas_u[st][0] + sigma * dsmc_normal(&r);
    *vy = p->gas_u[st][1] + sigma * dsmc_normal(&r);
    *vz = p->gas_u[st][2] + sigma * dsmc_normal(&r);
    *sp = (uint8_t)k;
}

/* New particle e of this step's inflow, from face group g = face * nspecies + species: placed on
 * the face with the flux-weighted velocity distribution. The move then advances it by a random
 * fraction of the step, as if it had entered uniformly in time. */
DSMC_HD void dsmc_inflow_one(const dsmc_params *p, uint32_t g, uint64_t e, double *x, double *y,
                             double *vx, double *vy, double *vz, uint8_t *sp)
{
    uint32_t face = g / (uint32_t)p->nspecies, k = g % (uint32_t)p->nspecies;
    int side = dsmc_face_side(p, face);
    double local = (double)(face - p->face_start[side]);
    dsmc_rng r = dsmc_rng_make(p->seed, e, p->step, DSMC_P_INFLOW);
    double m = p->mass[k];
    const double *u = p->gas_u[p->side_state[side]];
    double sigma = sqrt(KEDR_BOLTZMANN * p->gas_t[p->side_state[side]] / m);
    double beta = 1.0 / (sigma * 1.4142135623730951);
    int axis = side / 2;                              /* 0: an x side, 1: a y side */
    double inward = side % 2 == 0 ? 1.0 : -1.0;
    double vn = dsmc_flux_normal(&r, beta * inward * u[axis]) / beta * inward;
    double uf = dsmc_u01(&r), along = (local + uf) * (axis == 0 ? p->dy : p->dx);
    double t1 = u[1 - axis] + sigma * dsmc_normal(&r);
    double t2 = u[2] + sigma * dsmc_normal(&r);
    double wall = side % 2 == 0 ? p->lo[axis] : p->hi[axis];
    if (axis == 0) { /* axisymmetric: the face is a ring */
        *x = wall;
        *y = p->axisym ? dsmc_ring_radius(p->lo[1] + local * p->dy, p->dy, uf) : p->lo[1] + along;
        *vx = vn;
        *vy = t1;
    } else {
        *x = p->lo[0] + along;
        *y = wall;
        *vx = t1;
        *vy = vn;
    }
    *vz = t2;
    *sp = (uint8_t)k;
}

/* ---- rotational energy -------------------------------------------------------------------- */

/* A rotational energy [J] from the equilibrium distribution at temperature t for zeta degrees of
 * freedom: kT times a Gamma(zeta / 2) deviate, that is an exponential for zeta = 2 and an
 * exponential plus half a squared normal for zeta = 3 (zeta square terms of a Boltzmann
 * distribution, each a half squared normal times kT). */
DSMC_HD double dsmc_erot_equilibrium(int zeta, double t, dsmc_rng *r)
{
    if (zeta == 0)
        return 0;
    double e = -log(dsmc_u01(r));
    if (zeta == 3) {
        double z = dsmc_normal(r);
        e += 0.5 * z * z;
    }
    return KEDR_BOLTZMANN * t * e;
}

/* The rotational energy of new particle e (fill or inflow batch, group g as for dsmc_fill_one
 * and dsmc_inflow_one) of species k at the temperature of its gas state, from its own random
 * stream so that the velocity draws stay as they were. */
DSMC_HD float dsmc_erot_new(const dsmc_params *p, int fill, uint32_t g, uint64_t e, int k)
{
    if (p->rot_dof[k] == 0)
        return 0.0f;
    uint32_t at = g / (uint32_t)p->nspecies; /* the cell or the face */
    int st = fill ? dsmc_fill_state(p, at) : p->side_state[dsmc_face_side(p, at)];
    dsmc_rng r = dsmc_rng_make(p->seed, e, p->step, fill ? DSMC_P_FILL_ROT : DSMC_P_INFLOW_ROT);
    return (float)dsmc_erot_equilibrium(p->rot_dof[k], p->gas_t[st], &r);
}

/* Larsen-Borgnakke energy split (Borgnakke & Larsen, J. Comput. Phys. 18 (1975) 405; Bird 1994
 * section 5.3, eqs. 5.44 and 5.45): the fraction x = e_rot / E_c that a molecule with zeta
 * rotational degrees of freedom takes of the collision energy E_c = (relative translational) +
 * e_rot samples the distribution of the ratio of two modes with zeta / 2 and b = 5/2 - omega
 * "half degrees of freedom" (b: the VHS relative translational energy of colliding pairs),
 * density x^(zeta/2 - 1) (1 - x)^(b - 1).
 * For zeta = 2 it inverts in closed form, x = 1 - u^(1/b); for zeta = 3 it is sampled by
 * acceptance against the maximum at x = (zeta/2 - 1) / (zeta/2 + b - 2). */
DSMC_HD double dsmc_lb_fraction(int zeta, double b, dsmc_rng *r)
{
    if (zeta == 2)
        return 1.0 - dsmc_pow(dsmc_u01(r), 1.0 / b);
    double am = 0.5 * zeta - 1.0, bm = b - 1.0, xm = am / (am + bm);
    for (;;) {
        double x = dsmc_u01(r);
        if (dsmc_u01(r) < dsmc_pow(x / xm, am) * dsmc_pow((1.0 - x) / (1.0 - xm), bm))
            return x;
    }
}

/* One molecule (species k, rotational energy *erot) of a collision with relative translational
 * energy et: with probability 1 / Z_rot it exchanges by Larsen-Borgnakke. Returns the new et.
 * The stored energy is rounded to float first and et takes the exact remainder, so the pair's
 * total energy is conserved to double rounding. */
DSMC_HD double dsmc_lb_one(const dsmc_params *p, int k, double b, double et, float *erot,
                           dsmc_rng *r)
{
    int zeta = p->rot_dof[k];
    if (zeta == 0 || dsmc_u01(r) >= p->rot_prob[k])
        return et;
    double ec = et + (double)*erot;
    float e = (float)(ec * dsmc_lb_fraction(zeta, b, r));
    if ((double)e > ec)
        e = nextafterf(e, 0.0f);
    *erot = e;
    return ec - (double)e;
}

/* ---- vibrational energy ------------------------------------------------------------------- */

/* Levels are bytes: 255 quanta of the softest vibrating molecule of the species files (O2,
 * 2256 K) are 5.8e5 K, far past dissociation (59500 K), so a level that reaches the cap has met
 * a collision energy no air flow gives; the exchange then picks among the levels up to it. */
#define DSMC_VIB_MAX 255

/* The vibrational energy [J] of a molecule of species k at level v. */
DSMC_HD double dsmc_evib(const dsmc_params *p, int k, int v)
{
    return (double)v * KEDR_BOLTZMANN * p->theta_v[k];
}

/* The same of a molecule whose level is *v, or 0 where the gas does not vibrate (v NULL: the
 * moves and collisions take NULL there, so that code for a gas without vibration, where the
 * pointer is known NULL, compiles to what it was before: sim.cu's VIB kernels). */
DSMC_HD double dsmc_evib_at(const dsmc_params *p, int k, const uint8_t *v)
{
    return v ? dsmc_evib(p, k, *v) : 0.0;
}

/* A level from the equilibrium distribution of a harmonic oscillator of characteristic
 * temperature theta at temperature t, P(i) = (1 - x) x^i with x = exp(-theta / t): the
 * geometric deviate floor(-ln u t / theta), so that P(i >= j) = x^j (capped at DSMC_VIB_MAX, a
 * probability below x^255). */
DSMC_HD int dsmc_vib_equilibrium(double theta, double t, dsmc_rng *r)
{
    if (!(theta > 0) || !(t > 0))
        return 0;
    double i = floor(-log(dsmc_u01(r)) * t / theta);
    return i < DSMC_VIB_MAX ? (int)i : DSMC_VIB_MAX;
}

/* The level of new particle e (as dsmc_erot_new) at the vibrational temperature of its gas
 * state, from a stream of its own so that the other draws stay as they were. */
DSMC_HD uint8_t dsmc_vib_new(const dsmc_params *p, int fill, uint32_t g, uint64_t e, int k)
{
    if (p->theta_v[k] == 0)
        return 0;
    uint32_t at = g / (uint32_t)p->nspecies;
    int st = fill ? dsmc_fill_state(p, at) : p->side_state[dsmc_face_side(p, at)];
    dsmc_rng r = dsmc_rng_make(p->seed, e, p->step, fill ? DSMC_P_FILL_VIB : DSMC_P_INFLOW_VIB);
    return (uint8_t)dsmc_vib_equilibrium(p->theta_v[k], p->gas_tv[st], &r);
}

/* The vibrational relaxation number of species k at temperature tc, the translational
 * temperature of the collision's cell (dsmc_vib_tcell): the constant, or Millikan-White in the
 * form of Bird 1994 eq. 6.53, Z = (C1 / tc^omega) exp(C2 tc^(-1/3)), at least 1 (tc = 0 gives
 * infinity: no exchange). */
DSMC_HD double dsmc_zvib(const dsmc_params *p, int k, double tc)
{
    if (p->zv_const[k] > 0)
        return p->zv_const[k];
    if (!(tc > 0))
        return INFINITY; /* no energy to exchange (and no 0 * inf when C2 = 0) */
    double z = p->zv_c1[k] * dsmc_pow(tc, -p->zv_omega[k]) *
               exp(p->zv_c2[k] * dsmc_pow(tc, -1.0 / 3.0));
    return z > 1 ? z : 1;
}

/* The temperature at which a cell's collisions evaluate Z_vib: the translational temperature
 * of its molecules [start, start + n) (mass-weighted mean velocity) before the step's first
 * collision in the cell, the same for every pair of the step. Evaluated at the pair's own
 * collision energy instead, the selection probability 1 / Z favours the energetic pairs, and
 * the quantised Larsen-Borgnakke exchange no longer keeps the equilibrium distribution
 * (detailed balance): five-species air at 15000 K without reactions went to T_tr 12000 K and
 * T_vib(N2) 21600 K in 200 steps (tests/unit/test_dsmc_vib_bath.c). A temperature of the cell,
 * the same for all its pairs, keeps it (Bird 2013 "The DSMC Method" selects with the cell's
 * macroscopic temperature; on particle- against cell-based relaxation numbers see Haas, Hash,
 * Bird, Lumpkin & Hassan, Phys. Fluids 6 (1994) 2191 and Gimelshein, Gimelshein & Levin,
 * Phys. Fluids 14 (2002) 4452). 0 when the gas does not vibrate (vib NULL) or every vibrating
 * species has a constant Z (the value is then not used); sp NULL for a simple gas. */
DSMC_HD double dsmc_vib_tcell(const dsmc_params *p, uint32_t start, uint32_t n, const double *vx,
                              const double *vy, const double *vz, const uint8_t *sp,
                              const uint8_t *vib)
{
    int variable = 0;
    for (int k = 0; k < p->nspecies; k++)
        variable |= p->theta_v[k] > 0 && !(p->zv_const[k] > 0);
    if (!vib || !variable || n < 2)
        return 0;
    double sm = 0, smx = 0, smy = 0, smz = 0, sm2 = 0;
    for (uint32_t i = start; i < start + n; i++) {
        double m = p->mass[sp ? sp[i] : 0];
        sm += m;
        smx += m * vx[i];
        smy += m * vy[i];
        smz += m * vz[i];
        sm2 += m * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
    }
    double t = (sm2 - (smx * smx + smy * smy + smz * smz) / sm) / (3.0 * KEDR_BOLTZMANN * n);
    return t > 0 ? t : 0;
}

/* One molecule (species k, level *v) of a collision with relative translational energy et in a
 * cell of translational temperature tc: with probability 1 / Z_vib(tc) it exchanges by the
 * quantised Larsen-Borgnakke procedure for a harmonic oscillator (Borgnakke & Larsen 1975
 * with discrete levels, as in Bird 1994 ch. 5 and Bird 2013 "The DSMC Method"): the collision
 * energy E_c = et + v k theta, a level i drawn uniformly from 0 .. floor(E_c / k theta) and accepted with (1 - i k theta / E_c)^(b - 1),
 * b = 5/2 - omega, which samples P(i) proportional to (E_c - i k theta)^(b - 1), the share of
 * the translational mode's states that leave it the rest. Returns the new et = E_c - i k theta,
 * exact to the rounding of one subtraction. dsmc_vib_level is the draw of the level alone, for
 * collision energy ec. */
DSMC_HD int dsmc_vib_level(const dsmc_params *p, int k, double b, double ec, dsmc_rng *r)
{
    double q = KEDR_BOLTZMANN * p->theta_v[k], top = floor(ec / q);
    int imax = top < DSMC_VIB_MAX ? (int)top : DSMC_VIB_MAX, i = 0;
    while (imax > 0) {
        i = (int)(dsmc_u01(r) * (imax + 1));
        i = i < imax ? i : imax;
        if (dsmc_u01(r) < dsmc_pow(1.0 - (double)i * q / ec, b - 1.0))
            break;
    }
    while (i > 0 && (double)i * q > ec) /* floor(ec / q) rounded up */
        i--;
    return i;
}
DSMC_HD double dsmc_vib_one(const dsmc_params *p, int k, double b, double tc, double et,
                            uint8_t *v, dsmc_rng *r)
{
    double th = p->theta_v[k];
    if (th == 0 || dsmc_u01(r) * dsmc_zvib(p, k, tc) >= 1.0)
        return et;
    double q = KEDR_BOLTZMANN * th, ec = et + (double)*v * q;
    int i = dsmc_vib_level(p, k, b, ec, r);
    *v = (uint8_t)i;
    return ec - (double)i * q;
}

/* ---- move --------------------------------------------------------------------------------- */

/* Surface sums per element, structure of arrays: DSMC_NSURF rows of nelem. Momentum and energy
 * are of simulated molecules (the weight is applied when they are read). */
enum {
    DSMC_SURF_HITS = 0,
    DSMC_SURF_PIN,   /* normal momentum brought, m (-u.n) */
    DSMC_SURF_POUT,  /* normal momentum taken away, m (u'.n) */
    DSMC_SURF_SHEAR, /* tangential momentum given to the wall, m (u - u').t, t = (-ny, nx) */
    DSMC_SURF_EIN,   /* kinetic energy brought */
    DSMC_SURF_EOUT,  /* kinetic energy taken away */
    DSMC_SURF_FX,    /* force components on the wall, m (u - u') */
    DSMC_SURF_FY,
    DSMC_SURF_FZ,
    DSMC_NSURF
};

/* The minimum gas fraction of a cell that the initial fill puts molecules in, and below which
 * a cut cell counts as solid. */
#define DSMC_MIN_GAS 1e-3
#define DSMC_SOLID 1e-12

DSMC_HD void dsmc_surf_add(double *a, double v)
{
#ifdef __CUDA_ARCH__
    atomicAdd(a, v);
#else
    *a += v;
#endif
}

/* THE place where a molecule leaving a body wall gets its new velocity: (nx, ny) is the unit
 * normal into the gas on the side it came from, b the body (its velocity, temperature and wall
 * model). Specular reflection mirrors the normal component; diffuse reflection (with
 * probability `accommodation` under Maxwell's model, always under the diffuse one) draws a
 * full-accommodation molecule at the wall temperature: the normal speed from the flux-weighted
 * (Rayleigh) distribution, the tangential ones Gaussian. Returns whether it was diffuse (the
 * caller then draws the internal energy at the wall temperature). */
DSMC_HD int dsmc_wall_reflect(const dsmc_params *p, int b, double nx, double ny, double m,
                              dsmc_rng *r, double *ux, double *uy, double *uz)
{
    const double *wall_u = p->body_u[b];
    int model = p->body_wall[b];
    int diffuse = model == KEDR_DSMC_WALL_DIFFUSE ||
                  (model == KEDR_DSMC_WALL_MAXWELL && dsmc_u01(r) < p->body_acc[b]);
    if (!diffuse) { /* mirror the velocity relative to the wall */
        double un = (*ux - wall_u[0]) * nx + (*uy - wall_u[1]) * ny;
        *ux -= 2.0 * un * nx;
        *uy -= 2.0 * un * ny;
        return 0;
    }
    double sigma = sqrt(KEDR_BOLTZMANN * p->body_t[b] / m);
    double cn = sigma * 1.4142135623730951 * sqrt(-log(dsmc_u01(r)));
    double ct = sigma * dsmc_normal(r);
    *ux = cn * nx - ct * ny + wall_u[0];
    *uy = cn * ny + ct * nx + wall_u[1];
    *uz = sigma * dsmc_normal(r);
    return 1;
}

/* A molecule at (*px, *py) on body wall w (segment w, circle w - nsegments, or outline segment
 * w - nsegments - ncircles) moving with (ux, uy): the normal into the gas on its side, its
 * surface element, and its position moved p->nudge off the wall into the gas, so rounding
 * cannot carry it into the body. */
DSMC_HD void dsmc_wall_at(const dsmc_params *p, int w, double *px, double *py, double ux,
                          double uy, double *nx, double *ny, uint32_t *elem)
{
    int nw = p->nsegments + p->ncircles;
    if (w < p->nsegments || w >= nw) {
        const double *sg;
        uint32_t ne, e0;
        int out;
        if (w < p->nsegments) {
            sg = p->seg[w];
            ne = p->seg_nelem[w];
            e0 = p->seg_elem[w];
            out = p->seg_out[w];
        } else {
            const dsmc_lines *L = dsmc_lines_of(p);
            uint32_t q = (uint32_t)(w - nw);
            sg = L->seg + 4 * (size_t)q;
            e0 = L->elem[2 * (size_t)q];
            ne = L->elem[2 * (size_t)q + 1];
            out = p->lb_out[dsmc_line_slot(p, q)];
        }
        double dx = sg[2] - sg[0], dy = sg[3] - sg[1], len2 = dx * dx + dy * dy;
        double len = sqrt(len2), lx = -dy / len, ly = dx / len;
        double s = ((*px - sg[0]) * dx + (*py - sg[1]) * dy) / len2;
        uint32_t k = s <= 0 ? 0 : (uint32_t)(s * ne);
        k = k < ne ? k : ne - 1;
        int side = ux * lx + uy * ly < 0 ? 0 : 1; /* 0: it came from the left side */
        *nx = side ? -lx : lx;
        *ny = side ? -ly : ly;
        *elem = e0 + (out == 0 ? (uint32_t)side * ne : 0) + k;
        *px += *nx * p->nudge;
        *py += *ny * p->nudge;
    } else {
        int j = w - p->nsegments;
        double cx = p->circle[j][0], cy = p->circle[j][1], r = p->circle[j][2];
        double dx = *px - cx, dy = *py - cy, d = sqrt(dx * dx + dy * dy);
        *nx = d > 0 ? dx / d : 1.0;
        *ny = d > 0 ? dy / d : 0.0;
        /* the angle from +x as a fraction of the circle (axisymmetric: of its upper half, the
         * sphere's meridian) */
        double a = atan2(*ny, *nx) * ((p->axisym ? 1.0 : 0.5) / DSMC_PI); /* |a| <= 1/2, 1 */
        a = a < 0 ? a + 1.0 : a;
        uint32_t ne = p->circ_nelem[j], k = (uint32_t)(a * ne);
        *elem = p->circ_elem[j] + (k < ne ? k : ne - 1);
        *px = cx + (r + p->nudge) * *nx;
        *py = cy + (r + p->nudge) * *ny;
    }
}

/* w: the molecules the particle stands for over p->weight (radial weighting; 1 otherwise). */
DSMC_HD void dsmc_surface_hit(const dsmc_params *p, uint32_t e, double nx, double ny, double m,
                              double ax, double ay, double az, double bx, double by, double bz,
                              double erot_in, double erot_out, double w)
{
    double *s = p->surf;
    size_t ne = p->nelem;
    m *= w;
    erot_in *= w;
    erot_out *= w;
    dsmc_surf_add(&s[DSMC_SURF_HITS * ne + e], w);
    dsmc_surf_add(&s[DSMC_SURF_PIN * ne + e], -m * (ax * nx + ay * ny));
    dsmc_surf_add(&s[DSMC_SURF_POUT * ne + e], m * (bx * nx + by * ny));
    dsmc_surf_add(&s[DSMC_SURF_SHEAR * ne + e], m * (-(ax - bx) * ny + (ay - by) * nx));
    dsmc_surf_add(&s[DSMC_SURF_EIN * ne + e], 0.5 * m * (ax * ax + ay * ay + az * az) + erot_in);
    dsmc_surf_add(&s[DSMC_SURF_EOUT * ne + e],
                  0.5 * m * (bx * bx + by * by + bz * bz) + erot_out);
    dsmc_surf_add(&s[DSMC_SURF_FX * ne + e], m * (ax - bx));
    dsmc_surf_add(&s[DSMC_SURF_FY * ne + e], m * (ay - by));
    dsmc_surf_add(&s[DSMC_SURF_FZ * ne + e], m * (az - bz));
}

/* Whether a molecule at x = px moving with ux reaches an x side within t and before *tev: then
 * *tev becomes the time it takes and *what the side. */
DSMC_HD void dsmc_x_event(const dsmc_params *p, double px, double ux, double t, double *tev,
                          int *what)
{
    if (ux < 0 && px + ux * t < p->lo[0] && (p->lo[0] - px) / ux < *tev)
        *tev = (p->lo[0] - px) / ux, *what = KEDR_DSMC_XMIN;
    if (ux > 0 && px + ux * t > p->hi[0] && (p->hi[0] - px) / ux < *tev)
        *tev = (p->hi[0] - px) / ux, *what = KEDR_DSMC_XMAX;
}

/* A molecule reaching x side `what` (specular or periodic) is put exactly on it, or on its
 * periodic image, so that rounding cannot carry it out; a specular side reverses ux. */
DSMC_HD void dsmc_x_side(const dsmc_params *p, int what, double *px, double *ux)
{
    int at_lo = what == KEDR_DSMC_XMIN;
    if (p->side[what] == KEDR_DSMC_PERIODIC) {
        *px = at_lo ? p->hi[0] : p->lo[0];
    } else {
        *px = at_lo ? p->lo[0] : p->hi[0];
        *ux = -*ux;
    }
}

/* A molecule of `species` meeting body wall w (segment w, or circle w - nsegments) at (*px, *py)
 * with velocity (*ux, *uy, *uz): put off the wall and reflected by its body's wall model (a
 * diffuse reflection accommodates the internal energy fully as well: *erot and, where the gas
 * vibrates (vib non-NULL), the level *vib); from [sample] start on the hit adds to its surface
 * element, standing for f molecules over p->weight. */
DSMC_HD void dsmc_hit_wall(const dsmc_params *p, int w, int species, double f, dsmc_rng *r,
                           double *px, double *py, double *ux, double *uy, double *uz,
                           float *erot, uint8_t *vib)
{
    double nx, ny, ax = *ux, ay = *uy, az = *uz, m = p->mass[species];
    double ea = *erot + dsmc_evib_at(p, species, vib);
    uint32_t e;
    dsmc_wall_at(p, w, px, py, *ux, *uy, &nx, &ny, &e);
    int nw = p->nsegments + p->ncircles;
    int b = w < p->nsegments ? p->seg_body[w]
            : w < nw         ? p->circ_body[w - p->nsegments]
                             : p->lb_body[dsmc_line_slot(p, (uint32_t)(w - nw))];
    if (dsmc_wall_reflect(p, b, nx, ny, m, r, ux, uy, uz)) {
        *erot = (float)dsmc_erot_equilibrium(p->rot_dof[species], p->body_t[b], r);
        if (vib)
            *vib = (uint8_t)dsmc_vib_equilibrium(p->theta_v[species], p->body_t[b], r);
    }
    if (p->surf)
        dsmc_surface_hit(p, e, nx, ny, m, ax, ay, az, *ux, *uy, *uz, ea,
                         *erot + dsmc_evib_at(p, species, vib), f);
}

/* Moves particle i for the step (fresh: for a random fraction of it, as particles that entered
 * in this step had, on average, entered uniformly in time), following specular and periodic
 * sides and body walls; returns its new cell, or DSMC_DROP when it left through an outflow or
 * inflow side. Wall hits are added to the surface sums when p->surf is set. */
DSMC_HD uint32_t dsmc_move_one(const dsmc_params *p, uint64_t i, int fresh, double *x, double *y,
                               double *vx, double *vy, double *vz, float *erot, uint8_t *vib,
                               int species)
{
    double px = *x, py = *y, ux = *vx, uy = *vy, uz = *vz, t = p->dt;
    int skip = -1;
    dsmc_rng r = dsmc_rng_make(p->seed, i, p->step, DSMC_P_MOVE);
    if (fresh)
        t *= dsmc_u01(&r);
    for (int ev = 0; ev < DSMC_MAX_EVENTS && t > 0; ev++) {
        double tev = t;
        int what = -1; /* < 0: none; 0..3: a side; 4 + w: wall w (segments, then circles) */
        dsmc_x_event(p, px, ux, t, &tev, &what);
        if (uy < 0 && py + uy * t < p->lo[1] && (p->lo[1] - py) / uy < tev)
            tev = (p->lo[1] - py) / uy, what = KEDR_DSMC_YMIN;
        if (uy > 0 && py + uy * t > p->hi[1] && (p->hi[1] - py) / uy < tev)
            tev = (p->hi[1] - py) / uy, what = KEDR_DSMC_YMAX;
        for (int k = 0; k < p->nsegments; k++) {
            if (k == skip)
                continue; /* a straight wall cannot be hit twice in a row */
            double dx = p->seg[k][2] - p->seg[k][0], dy = p->seg[k][3] - p->seg[k][1];
            double den = ux * dy - uy * dx;
            if (den == 0)
                continue;
            double qx = p->seg[k][0] - px, qy = p->seg[k][1] - py;
            double th = (qx * dy - qy * dx) / den, s = (qx * uy - qy * ux) / den;
            if (th > 0 && th < tev && s >= 0 && s <= 1)
                tev = th, what = 4 + k;
        }
        for (int j = 0; j < p->ncircles; j++) {
            if (p->nsegments + j == skip)
                continue; /* nor a circle left outward */
            /* |d + u t| = r with d from the centre: the first root, for a molecule outside
             * (c > 0) moving towards the centre (b < 0). */
            double dx = px - p->circle[j][0], dy = py - p->circle[j][1], rr = p->circle[j][2];
            double a = ux * ux + uy * uy, b = dx * ux + dy * uy, c = dx * dx + dy * dy - rr * rr;
            double disc = b * b - a * c;
            if (c <= 0 || b >= 0 || disc <= 0)
                continue;
            double th = c / (-b + sqrt(disc)); /* = (-b - sqrt(disc)) / a, without cancellation */
            if (th > 0 && th < tev)
                tev = th, what = 4 + p->nsegments + j;
        }
        if (p->nlbodies) /* outline segments near the path, after the circles */
            dsmc_lines_hit(p, px, py, ux, uy, skip - (p->nsegments + p->ncircles),
                           4 + p->nsegments + p->ncircles, &tev, &what);
        if (what < 0) {
            px += ux * t;
            py += uy * t;
            break;
        }
        px += ux * tev;
        py += uy * tev;
        t -= tev;
        if (what < 4) {
            int bc = p->side[what];
            if (bc != KEDR_DSMC_SPECULAR && bc != KEDR_DSMC_PERIODIC)
                return DSMC_DROP;
            /* Land exactly on the wall (or its periodic image) so rounding cannot leave. */
            if (what < 2) {
                dsmc_x_side(p, what, &px, &ux);
            } else {
                int at_lo = what == KEDR_DSMC_YMIN;
                if (bc == KEDR_DSMC_PERIODIC) {
                    py = at_lo ? p->hi[1] : p->lo[1];
                } else {
                    py = at_lo ? p->lo[1] : p->hi[1];
                    uy = -uy;
                }
            }
            skip = -1;
        } else {
            dsmc_hit_wall(p, what - 4, species, 1.0, &r, &px, &py, &ux, &uy, &uz, erot, vib);
            skip = what - 4;
        }
    }
    /* A particle past its event budget stays where it is; keep it inside the domain. */
    px = px < p->lo[0] ? p->lo[0] : px > p->hi[0] ? p->hi[0] : px;
    py = py < p->lo[1] ? p->lo[1] : py > p->hi[1] ? p->hi[1] : py;
    *x = px;
    *y = py;
    *vx = ux;
    *vy = uy;
    *vz = uz;
    return dsmc_cell_of(p, px, py);
}

/* ---- axisymmetric ------------------------------------------------------------------------- */

/* In an axisymmetric case a particle is kept in its meridional plane: (x, y) = (x, r) with
 * velocity (vx, vy, vz) = (axial, radial, circumferential). It flies straight in 3D: after a
 * time t it is at radius R(t) = sqrt((r + vr t)^2 + (vt t)^2), where the velocity is turned into
 * the new meridional plane (Bird 1994 section 15.1). Bodies are surfaces of revolution of the
 * segments (cones, cylinders, discs) and of circles centred on the axis (spheres); every
 * intersection is solved exactly on the straight 3D path. */

/* The first time in (0, tmax) at which the path of a molecule at (x, r) with velocity
 * (vx, vr, vt) meets the surface of revolution of segment k, or -1. The segment's line,
 * D (R - r0) = E (X - x0) with D = x1 - x0 and E = r1 - r0, squared, (D R)^2 = L(t)^2 with
 * L = D r0 + E (X - x0), is a quadratic in t; roots on the mirror cone (L / D < 0) or beyond the
 * segment's ends are discarded. A molecule that has just left the surface was put off it into
 * the gas, so the root of that reflection lies at t < 0. */
DSMC_HD double dsmc_cone_hit_seg(const double *s, double x, double r, double vx, double vr,
                                 double vt, double tmax)
{
    double D = s[2] - s[0], E = s[3] - s[1], roots[2];
    int nroots = 0;
    if (D == 0) { /* a disc or annulus normal to the axis: the plane x = x0 */
        if (vx != 0)
            roots[nroots++] = (s[0] - x) / vx;
    } else {
        double L0 = D * s[1] + E * (x - s[0]);
        double h0 = D * (r - s[1]) - E * (x - s[0]); /* D r - L0, without cancellation */
        double A = D * D * (vr * vr + vt * vt) - E * E * vx * vx;
        double B = D * D * r * vr - L0 * E * vx;
        double C = h0 * (D * r + L0);
        if (A == 0) {
            if (B != 0)
                roots[nroots++] = -C / (2.0 * B);
        } else {
            double disc = B * B - A * C;
            if (disc < 0)
                return -1;
            double q = -(B + copysign(sqrt(disc), B));
            if (q != 0) {
                roots[nroots++] = q / A;
                roots[nroots++] = C / q;
            }
        }
    }
    double best = -1;
    for (int m = 0; m < nroots; m++) {
        double t = roots[m];
        if (!(t > 0 && t < tmax) || (best > 0 && t >= best))
            continue;
        double X = x + vx * t, Y = r + vr * t, Z = vt * t, R = sqrt(Y * Y + Z * Z);
        if (D != 0 && (D * s[1] + E * (X - s[0])) * D < 0)
            continue; /* the mirror cone */
        double f = fabs(D) >= fabs(E) ? (X - s[0]) / D : (R - s[1]) / E;
        if (f >= 0 && f <= 1)
            best = t;
    }
    return best;
}

DSMC_HD double dsmc_cone_hit(const dsmc_params *p, int k, double x, double r, double vx,
                             double vr, double vt, double tmax)
{
    return dsmc_cone_hit_seg(p->seg[k], x, r, vx, vr, vt, tmax);
}

/* dsmc_move_one in an axisymmetric case: ends x_min and x_max, the cylinder r = y_max, the
 * cylinder r = y_min when y_min > 0 (the axis otherwise, which nothing crosses), bodies of
 * revolution. Under radial weighting the particle then keeps its weight by chance: moving to a
 * row of smaller weight factor it asks for floor(f_old / f_new + u) - 1 copies of itself
 * (*copies), to a larger one it survives with probability f_old / f_new (Bird 1994 section
 * 15.2); its wall hits count with f_old. */
DSMC_HD uint32_t dsmc_move_axi(const dsmc_params *p, uint64_t i, int fresh, double *x, double *y,
                               double *vx, double *vy, double *vz, float *erot, uint8_t *vib,
                               int species, uint32_t *copies)
{
    double px = *x, pr = *y, ux = *vx, ur = *vy, ut = *vz, t = p->dt;
    double f0 = dsmc_weight_factor(p, dsmc_cell_of(p, px, pr));
    double rin = p->lo[1], rout = p->hi[1];
    *copies = 0;
    dsmc_rng r = dsmc_rng_make(p->seed, i, p->step, DSMC_P_MOVE);
    if (fresh)
        t *= dsmc_u01(&r);
    for (int ev = 0; ev < DSMC_MAX_EVENTS && t > 0; ev++) {
        double tev = t;
        int what = -1; /* < 0: none; 0..3: a side; 4 + w: wall w (segments, then spheres) */
        dsmc_x_event(p, px, ux, t, &tev, &what);
        /* R(t)^2 = a t^2 + 2 b t + r^2 is convex in t: the path is beyond rout at some time
         * within the step exactly when it is at the end of it. */
        double a = ur * ur + ut * ut, b = pr * ur;
        double ye = pr + ur * t, ze = ut * t;
        if (a > 0 && ye * ye + ze * ze > rout * rout) {
            double c = fmin(pr * pr - rout * rout, 0.0), sq = sqrt(b * b - a * c);
            double th = b > 0 ? -c / (b + sq) : (sq - b) / a; /* the root after now */
            if (th < tev)
                tev = th, what = KEDR_DSMC_YMAX;
        }
        if (rin > 0 && b < 0) { /* inward, towards the inner cylinder */
            double c = fmax(pr * pr - rin * rin, 0.0), disc = b * b - a * c;
            if (disc > 0) {
                double th = c / (sqrt(disc) - b);
                if (th < tev)
                    tev = th, what = KEDR_DSMC_YMIN;
            }
        }
        for (int k = 0; k < p->nsegments; k++) {
            if (p->seg_nelem[k] == 0)
                continue; /* a segment on the axis: no surface */
            double th = dsmc_cone_hit(p, k, px, pr, ux, ur, ut, tev);
            if (th > 0)
                tev = th, what = 4 + k;
        }
        for (int j = 0; j < p->ncircles; j++) { /* spheres centred on the axis */
            double dx = px - p->circle[j][0], rr = p->circle[j][2];
            double A = ux * ux + a, B = dx * ux + pr * ur, C = dx * dx + pr * pr - rr * rr;
            double disc = B * B - A * C;
            if (C <= 0 || B >= 0 || disc <= 0)
                continue;
            double th = C / (-B + sqrt(disc));
            if (th > 0 && th < tev)
                tev = th, what = 4 + p->nsegments + j;
        }
        if (p->nlbodies) /* outline segments near the path, after the spheres */
            dsmc_lines_hit_axi(p, px, pr, ux, ur, ut, 4 + p->nsegments + p->ncircles, &tev,
                               &what);
        double tt = what < 0 ? t : tev;
        double Y = pr + ur * tt, Z = ut * tt, R = sqrt(Y * Y + Z * Z);
        px += ux * tt;
        if (R > 0) { /* into the meridional plane of the new position */
            double cs = Y / R, sn = Z / R, nr = ur * cs + ut * sn;
            ut = ut * cs - ur * sn;
            ur = nr;
        }
        pr = R;
        if (what < 0)
            break;
        t -= tev;
        if (what < 4) {
            int bc = p->side[what];
            if (bc != KEDR_DSMC_SPECULAR && bc != KEDR_DSMC_PERIODIC)
                return DSMC_DROP;
            if (what < 2) {
                dsmc_x_side(p, what, &px, &ux);
            } else { /* a specular cylinder (the radial sides are never periodic) */
                pr = what == KEDR_DSMC_YMIN ? rin : rout;
                ur = -ur;
            }
        } else { /* the wall's normal lies in the meridional plane, ut is tangential */
            dsmc_hit_wall(p, what - 4, species, f0, &r, &px, &pr, &ux, &ur, &ut, erot, vib);
        }
    }
    px = px < p->lo[0] ? p->lo[0] : px > p->hi[0] ? p->hi[0] : px;
    pr = pr < rin ? rin : pr > rout ? rout : pr;
    *x = px;
    *y = pr;
    *vx = ux;
    *vy = ur;
    *vz = ut;
    uint32_t cell = dsmc_cell_of(p, px, pr);
    if (p->radial) {
        double ratio = f0 / dsmc_weight_factor(p, cell), u = dsmc_u01(&r);
        if (ratio < 1.0) {
            if (u >= ratio)
                return DSMC_DROP;
        } else {
            *copies = (uint32_t)floor(ratio + u) - 1;
        }
    }
    return cell;
}

/* ---- 3D ----------------------------------------------------------------------------------- */

/* The 3D stages mirror the 2D ones above (same random streams and purposes, same order of
 * draws where the physics is the same); they are separate functions so that the 2D paths stay
 * exactly as they were. Every built-in 3D body is convex, so a molecule just reflected off one
 * cannot meet it again before another event; a body of type stl may be concave, and there only
 * the triangle just left is skipped. */

#include "dsmc_mesh.h" /* the bodies of type stl, which need not be convex */

/* Whether (x, y, z) lies strictly inside solid j. */
DSMC_HD int dsmc_inside_solid(const dsmc_params *p, int j, double x, double y, double z)
{
    const double *s = p->solid[j];
    if (p->solid_type[j] == KEDR_DSMC_BODY_STL)
        return dsmc_inside_mesh(p, j, x, y, z);
    if (p->solid_type[j] == KEDR_DSMC_BODY_SPHERE) {
        double dx = x - s[0], dy = y - s[1], dz = z - s[2];
        return dx * dx + dy * dy + dz * dz < s[3] * s[3];
    }
    if (p->solid_type[j] == KEDR_DSMC_BODY_CUBOID)
        return x > s[0] && x < s[3] && y > s[1] && y < s[4] && z > s[2] && z < s[5];
    double a = x - s[0], dy = y - s[1], dz = z - s[2]; /* cone */
    return a > 0 && a < s[4] && dy * dy + dz * dz < a * a * s[3] * s[3];
}

DSMC_HD int dsmc_inside_body3(const dsmc_params *p, double x, double y, double z)
{
    for (int j = 0; j < p->nsolids; j++)
        if (dsmc_inside_solid(p, j, x, y, z))
            return 1;
    return 0;
}

/* Cell x + nx (y + ny z). */
DSMC_HD uint32_t dsmc_cell_of3(const dsmc_params *p, double x, double y, double z)
{
    int ix = (int)((x - p->lo[0]) * p->inv_dx), iy = (int)((y - p->lo[1]) * p->inv_dy);
    int iz = (int)((z - p->lo[2]) * p->inv_dz);
    ix = ix < 0 ? 0 : ix >= p->nx ? p->nx - 1 : ix;
    iy = iy < 0 ? 0 : iy >= p->ny ? p->ny - 1 : iy;
    iz = iz < 0 ? 0 : iz >= p->nz ? p->nz - 1 : iz;
    return ((uint32_t)iz * (uint32_t)p->ny + (uint32_t)iy) * (uint32_t)p->nx + (uint32_t)ix;
}

/* dsmc_fill_one in 3D. */
DSMC_HD void dsmc_fill_one3(const dsmc_params *p, uint32_t g, uint64_t e, double *x, double *y,
                            double *z, double *vx, double *vy, double *vz, uint8_t *sp)
{
    uint32_t cell = g / (uint32_t)p->nspecies, k = g % (uint32_t)p->nspecies;
    uint32_t nx = (uint32_t)p->nx, ny = (uint32_t)p->ny;
    uint32_t ix = cell % nx, iy = cell / nx % ny, iz = cell / nx / ny;
    dsmc_rng r = dsmc_rng_make(p->seed, e, p->step, DSMC_P_FILL);
    for (int tries = 0; tries < 20000; tries++) {
        *x = p->lo[0] + ((double)ix + dsmc_u01(&r)) * p->dx;
        *y = p->lo[1] + ((double)iy + dsmc_u01(&r)) * p->dy;
        *z = p->lo[2] + ((double)iz + dsmc_u01(&r)) * p->dz;
        if (p->gas_volume == NULL || !dsmc_inside_body3(p, *x, *y, *z))
            break;
    }
    int st = dsmc_fill_state(p, cell);
    double sigma = sqrt(KEDR_BOLTZMANN * p->gas_t[st] / p->mass[k]);
    *vx = p->gas_u[st][0] + sigma * dsmc_normal(&r);
    *vy = p->gas_u[st][1] + sigma * dsmc_normal(&r);
    *vz = p->gas_u[st][2] + sigma * dsmc_normal(&r);
    *sp = (uint8_t)k;
}

/* dsmc_inflow_one in 3D: side s (0..5) of axis a = s / 2 has one face per cell of the two
 * other axes b < c, numbered ib + n_b ic. */
DSMC_HD void dsmc_inflow_one3(const dsmc_params *p, uint32_t g, uint64_t e, double *x, double *y,
                              double *z, double *vx, double *vy, double *vz, uint8_t *sp)
{
    uint32_t face = g / (uint32_t)p->nspecies, k = g % (uint32_t)p->nspecies;
    int side = dsmc_face_side(p, face);
    uint32_t local = face - p->face_start[side];
    dsmc_rng r = dsmc_rng_make(p->seed, e, p->step, DSMC_P_INFLOW);
    double m = p->mass[k];
    const double *u = p->gas_u[p->side_state[side]];
    double sigma = sqrt(KEDR_BOLTZMANN * p->gas_t[p->side_state[side]] / m);
    double beta = 1.0 / (sigma * 1.4142135623730951);
    int axis = side / 2, b = axis == 0 ? 1 : 0, c = axis == 2 ? 1 : 2;
    uint32_t nb = (uint32_t)(b == 0 ? p->nx : p->ny);
    double db = b == 0 ? p->dx : p->dy, dc = c == 1 ? p->dy : p->dz;
    double inward = side % 2 == 0 ? 1.0 : -1.0;
    double vn = dsmc_flux_normal(&r, beta * inward * u[axis]) / beta * inward;
    double pb = p->lo[b] + ((double)(local % nb) + dsmc_u01(&r)) * db;
    double vb = u[b] + sigma * dsmc_normal(&r);
    double vc = u[c] + sigma * dsmc_normal(&r);
    double pc = p->lo[c] + ((double)(local / nb) + dsmc_u01(&r)) * dc;
    double pa = side % 2 == 0 ? p->lo[axis] : p->hi[axis];
    /* selects rather than arrays indexed by axis, so CUDA keeps them in registers */
    *x = axis == 0 ? pa : pb;
    *y = axis == 1 ? pa : b == 1 ? pb : pc;
    *z = axis == 2 ? pa : pc;
    *vx = axis == 0 ? vn : vb;
    *vy = axis == 1 ? vn : b == 1 ? vb : vc;
    *vz = axis == 2 ? vn : vc;
    *sp = (uint8_t)k;
}

/* dsmc_wall_reflect for a 3D unit normal n into the gas of body b (at rest; its wall model and
 * temperature): specular mirrors the normal component; diffuse draws the normal speed from the
 * flux-weighted distribution and two Gaussian tangential components along an orthonormal
 * tangent pair. */
DSMC_HD int dsmc_wall_reflect3(const dsmc_params *p, int b, const double *n, double m,
                               dsmc_rng *r, double *u)
{
    int model = p->body_wall[b];
    int diffuse = model == KEDR_DSMC_WALL_DIFFUSE ||
                  (model == KEDR_DSMC_WALL_MAXWELL && dsmc_u01(r) < p->body_acc[b]);
    if (!diffuse) {
        double un = u[0] * n[0] + u[1] * n[1] + u[2] * n[2];
        for (int d = 0; d < 3; d++)
            u[d] -= 2.0 * un * n[d];
        return 0;
    }
    double sigma = sqrt(KEDR_BOLTZMANN * p->body_t[b] / m);
    double cn = sigma * 1.4142135623730951 * sqrt(-log(dsmc_u01(r)));
    double c1 = sigma * dsmc_normal(r), c2 = sigma * dsmc_normal(r);
    /* t1: the coordinate axis least aligned with n, made orthogonal to it; t2 = n x t1 */
    int ax = fabs(n[0]) < 0.9;
    double t1[3] = {ax ? 1.0 : 0.0, ax ? 0.0 : 1.0, 0.0}, t2[3];
    double dot = t1[0] * n[0] + t1[1] * n[1] + t1[2] * n[2], len = 0;
    for (int d = 0; d < 3; d++) {
        t1[d] -= dot * n[d];
        len += t1[d] * t1[d];
    }
    len = sqrt(len);
    for (int d = 0; d < 3; d++)
        t1[d] /= len;
    t2[0] = n[1] * t1[2] - n[2] * t1[1];
    t2[1] = n[2] * t1[0] - n[0] * t1[2];
    t2[2] = n[0] * t1[1] - n[1] * t1[0];
    for (int d = 0; d < 3; d++)
        u[d] = cn * n[d] + c1 * t1[d] + c2 * t2[d];
    return 1;
}

/* The time *th (0 < *th < tmax) at which a molecule at pos moving with u enters solid j from
 * outside; returns the face entered (sphere: 0; cuboid: 2 axis + 1 for the upper face; cone: 0
 * the lateral surface, 1 the base), or -1 when it does not within tmax. */
DSMC_HD int dsmc_solid_hit(const dsmc_params *p, int j, const double *pos, const double *u,
                           double tmax, double *th)
{
    const double *s = p->solid[j];
    if (p->solid_type[j] == KEDR_DSMC_BODY_SPHERE) { /* as the circle of the 2D move */
        double dx = pos[0] - s[0], dy = pos[1] - s[1], dz = pos[2] - s[2];
        double a = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
        double b = dx * u[0] + dy * u[1] + dz * u[2];
        double c = dx * dx + dy * dy + dz * dz - s[3] * s[3];
        double disc = b * b - a * c;
        if (c <= 0 || b >= 0 || disc <= 0)
            return -1;
        double t = c / (-b + sqrt(disc));
        if (!(t > 0 && t < tmax))
            return -1;
        *th = t;
        return 0;
    }
    /* Cuboid and cone: the ray's parameter interval [tin, tout] inside the convex solid, as
     * the intersection of the intervals of its pieces; the entry face is the piece that set tin. */
    double tin = -HUGE_VAL, tout = HUGE_VAL;
    int face = -1;
    if (p->solid_type[j] == KEDR_DSMC_BODY_CUBOID) {
        for (int d = 0; d < 3; d++) {
            if (u[d] == 0) {
                if (pos[d] <= s[d] || pos[d] >= s[3 + d])
                    return -1;
                continue;
            }
            double t0 = (s[d] - pos[d]) / u[d], t1 = (s[3 + d] - pos[d]) / u[d];
            int f = 2 * d;
            if (t0 > t1) {
                double t = t0;
                t0 = t1;
                t1 = t;
                f = 2 * d + 1;
            }
            if (t0 > tin)
                tin = t0, face = f;
            tout = t1 < tout ? t1 : tout;
        }
    } else {
        /* Cone: q(t) = rho^2 - tan^2 (x - apex)^2 <= 0 on the nappe x >= apex, then x <= base.
         * q(t) = A t^2 + 2 B t + C. */
        double a0 = pos[0] - s[0], dy = pos[1] - s[1], dz = pos[2] - s[2], t2 = s[3] * s[3];
        double A = u[1] * u[1] + u[2] * u[2] - t2 * u[0] * u[0];
        double B = dy * u[1] + dz * u[2] - t2 * a0 * u[0];
        double C = dy * dy + dz * dz - t2 * a0 * a0;
        double disc = B * B - A * C;
        if (A > 0) { /* the ray crosses the double cone in one segment */
            if (disc <= 0)
                return -1;
            double sq = sqrt(disc), r1 = (-B - sq) / A, r2 = (-B + sq) / A;
            if (a0 + u[0] * 0.5 * (r1 + r2) < 0)
                return -1; /* the other nappe */
            tin = r1;
            tout = r2;
        } else if (A < 0) { /* inside for large |t|: the piece on the x >= apex side */
            if (disc <= 0) {
                double ta = -a0 / u[0];
                tin = u[0] > 0 ? ta : -HUGE_VAL;
                tout = u[0] > 0 ? HUGE_VAL : ta;
            } else {
                double sq = sqrt(disc), r1 = (-B - sq) / A, r2 = (-B + sq) / A;
                double lo = r1 < r2 ? r1 : r2, hi = r1 < r2 ? r2 : r1;
                tin = u[0] > 0 ? hi : -HUGE_VAL;
                tout = u[0] > 0 ? HUGE_VAL : lo;
            }
        } else {
            return -1; /* parallel to a generator: a set of measure zero */
        }
        face = 0;
        double lb = s[4] - a0; /* x - apex <= length */
        if (u[0] == 0) {
            if (lb <= 0)
                return -1;
        } else if (u[0] > 0) {
            double t = lb / u[0];
            tout = t < tout ? t : tout;
        } else {
            double t = lb / u[0];
            if (t > tin)
                tin = t, face = 1;
        }
    }
    if (face < 0 || !(tin < tout) || !(tin > 0) || !(tin < tmax))
        return -1;
    *th = tin;
    return face;
}

/* Index in [0, n) of a fraction f (clamped). */
DSMC_HD uint32_t dsmc_bin(double f, uint32_t n)
{
    uint32_t k = f <= 0 ? 0 : (uint32_t)(f * n);
    return k < n ? k : n - 1;
}

/* Azimuth about the x axis, as a fraction of a turn in [0, 1). */
DSMC_HD double dsmc_azimuth(double dy, double dz)
{
    double a = atan2(dz, dy) * (0.5 / DSMC_PI);
    return a < 0 ? a + 1.0 : a;
}

/* A molecule at pos on face `face` of solid j: the unit normal into the gas, the position moved
 * p->nudge off the wall, and the surface element (returned). Elements: sphere, bands of equal
 * width in n_x (equal areas, Archimedes) times equal azimuths about x; cuboid, per face
 * (x-, x+, y-, y+, z-, z+) a grid of the two other axes (the lower axis fastest); cone, bands of
 * equal area on the lateral surface (equal steps of (x - apex)^2) times azimuths, then rings of
 * equal area on the base (equal steps of r^2) times azimuths. */
DSMC_HD uint32_t dsmc_solid_at(const dsmc_params *p, int j, int face, double *pos, double *n)
{
    const double *s = p->solid[j];
    const uint32_t *ne = p->solid_n[j];
    uint32_t e = 0;
    if (p->solid_type[j] == KEDR_DSMC_BODY_STL) { /* face: the triangle within the body */
        const double *T = dsmc_mesh_of(p)->tri + 12 * ((size_t)ne[0] + (uint32_t)face);
        for (int k = 0; k < 3; k++) {
            n[k] = T[9 + k];
            pos[k] += p->nudge * n[k];
        }
        e = (uint32_t)face;
    } else if (p->solid_type[j] == KEDR_DSMC_BODY_SPHERE) {
        double d[3] = {pos[0] - s[0], pos[1] - s[1], pos[2] - s[2]};
        double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        for (int k = 0; k < 3; k++) {
            n[k] = len > 0 ? d[k] / len : k == 0;
            pos[k] = s[k] + (s[3] + p->nudge) * n[k];
        }
        e = dsmc_bin(0.5 * (n[0] + 1.0), ne[0]) * ne[1] + dsmc_bin(dsmc_azimuth(n[1], n[2]), ne[1]);
    } else if (p->solid_type[j] == KEDR_DSMC_BODY_CUBOID) {
        int d = face / 2, up = face % 2, b = (d + 1) % 3, c = (d + 2) % 3;
        int lo_ax = b < c ? b : c, hi_ax = b < c ? c : b;
        double plo = 0, phi = 0;
        for (int k = 0; k < 3; k++) { /* unrolled: pos and n stay in registers on CUDA */
            n[k] = k != d ? 0.0 : up ? 1.0 : -1.0;
            if (k == d)
                pos[k] = up ? s[3 + k] + p->nudge : s[k] - p->nudge;
            if (k < d)
                e += 2 * ne[(k + 1) % 3] * ne[(k + 2) % 3];
            plo = k == lo_ax ? pos[k] : plo;
            phi = k == hi_ax ? pos[k] : phi;
        }
        e += (uint32_t)up * ne[b] * ne[c];
        uint32_t i0 = dsmc_bin((plo - s[lo_ax]) / (s[3 + lo_ax] - s[lo_ax]), ne[lo_ax]);
        uint32_t i1 = dsmc_bin((phi - s[hi_ax]) / (s[3 + hi_ax] - s[hi_ax]), ne[hi_ax]);
        e += i1 * ne[lo_ax] + i0;
    } else {
        double a = pos[0] - s[0], dy = pos[1] - s[1], dz = pos[2] - s[2];
        uint32_t az = dsmc_bin(dsmc_azimuth(dy, dz), ne[1]);
        if (face == 1) {
            n[0] = 1.0;
            n[1] = n[2] = 0;
            pos[0] = s[0] + s[4] + p->nudge;
            double rr = (dy * dy + dz * dz) / (s[5] * s[5]);
            e = ne[0] * ne[1] + dsmc_bin(rr, ne[2]) * ne[1] + az;
        } else {
            double t2 = s[3] * s[3], gx = -t2 * a, len = sqrt(gx * gx + dy * dy + dz * dz);
            n[0] = len > 0 ? gx / len : -1.0;
            n[1] = len > 0 ? dy / len : 0.0;
            n[2] = len > 0 ? dz / len : 0.0;
            for (int k = 0; k < 3; k++)
                pos[k] += p->nudge * n[k];
            e = dsmc_bin(a * a / (s[4] * s[4]), ne[0]) * ne[1] + az;
        }
    }
    return p->solid_elem[j] + e;
}

DSMC_HD void dsmc_surface_hit3(const dsmc_params *p, uint32_t e, const double *n, double m,
                               const double *a, const double *b, double erot_in, double erot_out)
{
    double *s = p->surf;
    size_t ne = p->nelem;
    double an = a[0] * n[0] + a[1] * n[1] + a[2] * n[2];
    double bn = b[0] * n[0] + b[1] * n[1] + b[2] * n[2];
    dsmc_surf_add(&s[DSMC_SURF_HITS * ne + e], 1.0);
    dsmc_surf_add(&s[DSMC_SURF_PIN * ne + e], -m * an);
    dsmc_surf_add(&s[DSMC_SURF_POUT * ne + e], m * bn);
    dsmc_surf_add(&s[DSMC_SURF_EIN * ne + e],
                  0.5 * m * (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]) + erot_in);
    dsmc_surf_add(&s[DSMC_SURF_EOUT * ne + e],
                  0.5 * m * (b[0] * b[0] + b[1] * b[1] + b[2] * b[2]) + erot_out);
    dsmc_surf_add(&s[DSMC_SURF_FX * ne + e], m * (a[0] - b[0]));
    dsmc_surf_add(&s[DSMC_SURF_FY * ne + e], m * (a[1] - b[1]));
    dsmc_surf_add(&s[DSMC_SURF_FZ * ne + e], m * (a[2] - b[2]));
}

/* dsmc_move_one in 3D: six sides and the solids. */
DSMC_HD uint32_t dsmc_move_one3(const dsmc_params *p, uint64_t i, int fresh, double *x, double *y,
                                double *z, double *vx, double *vy, double *vz, float *erot,
                                uint8_t *vib, int species)
{
    double pos[3] = {*x, *y, *z}, u[3] = {*vx, *vy, *vz}, t = p->dt;
    int skip = -1;
    int64_t skip_tri = -1; /* the stl triangle just left */
    dsmc_rng r = dsmc_rng_make(p->seed, i, p->step, DSMC_P_MOVE);
    if (fresh)
        t *= dsmc_u01(&r);
    for (int ev = 0; ev < DSMC_MAX_EVENTS && t > 0; ev++) {
        double tev = t;
        int what = -1, face = -1; /* what: < 0 none; 0..5 a side; 6 + j solid j */
        for (int d = 0; d < 3; d++) {
            if (u[d] < 0 && pos[d] + u[d] * t < p->lo[d] && (p->lo[d] - pos[d]) / u[d] < tev)
                tev = (p->lo[d] - pos[d]) / u[d], what = 2 * d;
            if (u[d] > 0 && pos[d] + u[d] * t > p->hi[d] && (p->hi[d] - pos[d]) / u[d] < tev)
                tev = (p->hi[d] - pos[d]) / u[d], what = 2 * d + 1;
        }
        for (int j = 0; j < p->nsolids; j++) {
            double th = 0;
            int f = j == skip || p->solid_type[j] == KEDR_DSMC_BODY_STL
                        ? -1
                        : dsmc_solid_hit(p, j, pos, u, tev, &th);
            if (f >= 0)
                tev = th, what = 6 + j, face = f;
        }
        if (p->mesh.ntri) { /* every stl body at once, through the bins the path crosses */
            double th = 0;
            int64_t tri = dsmc_mesh_hit(p, pos, u, tev, 1, skip_tri, &th);
            int j = tri >= 0 ? dsmc_mesh_solid(p, (uint32_t)tri) : -1;
            if (j >= 0)
                tev = th, what = 6 + j, face = (int)((uint32_t)tri - p->solid_n[j][0]);
        }
        if (what < 0) {
            for (int d = 0; d < 3; d++)
                pos[d] += u[d] * t;
            break;
        }
        for (int d = 0; d < 3; d++)
            pos[d] += u[d] * tev;
        t -= tev;
        if (what < 6) {
            int at_lo = what % 2 == 0, bc = p->side[what];
            if (bc != KEDR_DSMC_SPECULAR && bc != KEDR_DSMC_PERIODIC)
                return DSMC_DROP;
            for (int d = 0; d < 3; d++) { /* d == what / 2 (unrolled: no indexed arrays) */
                if (d != what / 2)
                    continue;
                if (bc == KEDR_DSMC_PERIODIC) {
                    pos[d] = at_lo ? p->hi[d] : p->lo[d];
                } else {
                    pos[d] = at_lo ? p->lo[d] : p->hi[d];
                    u[d] = -u[d];
                }
            }
            skip = -1;
            skip_tri = -1;
        } else {
            int j = what - 6;
            double n[3], a[3] = {u[0], u[1], u[2]}, m = p->mass[species];
            double ea = *erot + dsmc_evib_at(p, species, vib);
            uint32_t e = dsmc_solid_at(p, j, face, pos, n);
            int b = p->solid_body[j];
            if (dsmc_wall_reflect3(p, b, n, m, &r, u)) {
                *erot = (float)dsmc_erot_equilibrium(p->rot_dof[species], p->body_t[b], &r);
                if (vib)
                    *vib = (uint8_t)dsmc_vib_equilibrium(p->theta_v[species], p->body_t[b], &r);
            }
            if (p->surf)
                dsmc_surface_hit3(p, e, n, m, a, u, ea, *erot + dsmc_evib_at(p, species, vib));
            int stl = p->solid_type[j] == KEDR_DSMC_BODY_STL;
            skip = stl ? -1 : j;
            skip_tri = stl ? (int64_t)p->solid_n[j][0] + face : -1;
        }
    }
    for (int d = 0; d < 3; d++)
        pos[d] = pos[d] < p->lo[d] ? p->lo[d] : pos[d] > p->hi[d] ? p->hi[d] : pos[d];
    *x = pos[0];
    *y = pos[1];
    *z = pos[2];
    *vx = u[0];
    *vy = u[1];
    *vz = u[2];
    return dsmc_cell_of3(p, pos[0], pos[1], pos[2]);
}

/* ---- collisions --------------------------------------------------------------------------- */

/* The part, of s along one axis, of a cell that a coordinate u (in cell widths from the
 * domain's low side) falls in; the cell clamped as dsmc_cell_of clamps it, so that a position
 * on the domain's far face counts in its last cell's last part. */
DSMC_HD uint32_t dsmc_sub_axis(double u, int cells, uint32_t s)
{
    double c = floor(u);
    c = c < 0 ? 0 : c > cells - 1 ? cells - 1 : c;
    double f = (u - c) * s;
    uint32_t k = f > 0 ? (uint32_t)f : 0;
    return k < s ? k : s - 1;
}

/* The sub-cell of a molecule at (x, y, z) within its cell: s parts along each axis (z ignored
 * in 2D and axisymmetric runs), numbered x fastest. */
DSMC_HD uint32_t dsmc_subcell(const dsmc_params *p, double x, double y, double z)
{
    uint32_t s = (uint32_t)p->subcells;
    uint32_t id = dsmc_sub_axis((y - p->lo[1]) * p->inv_dy, p->ny, s) * s +
                  dsmc_sub_axis((x - p->lo[0]) * p->inv_dx, p->nx, s);
    if (p->dims == 3)
        id += dsmc_sub_axis((z - p->lo[2]) * p->inv_dz, p->nz, s) * s * s;
    return id;
}

/* A candidate pair of a cell and what its acceptance needs. */
typedef struct {
    uint32_t i, j;       /* the molecules (indices into the sorted arrays) */
    int si, sj, pair;    /* their species and the pair's row of the cross-section tables */
    double gx, gy, gz, g2, g; /* relative velocity v_i - v_j, its square and its magnitude */
    double sg;           /* sigma g, 0 when g = 0; a reacting pair's selection value where its
                          * reactions' cross-section exceeds sigma (dsmc_react_select) */
    double rsum;         /* a reacting gas: the sum of the pair's reaction probabilities
                          * (dsmc_react_sum), 0 for a pair without reactions */
} dsmc_cand;

/* The stream of candidate number k of a cell (its partner and scattering draws): every candidate
 * has its own, so its draws do not depend on what earlier candidates did, and candidates that
 * share no molecule can be tried together with the result of trying them one after the other
 * (the cuda back end does so in crowded cells). */
DSMC_HD dsmc_rng dsmc_candidate_rng(const dsmc_params *p, uint32_t cell, uint32_t k)
{
    return dsmc_rng_make(p->seed, ((uint64_t)k << 32) | cell, p->step, DSMC_P_SCATTER);
}

/* The pair of a candidate among the cell's particles [start, start + n), n >= 2, from its draw w
 * of the cell's DSMC_P_PAIR stream: the ordered pair (i, j != i), i from the first 32 bits
 * scaled to [0, n), j from the next 32 scaled to [0, n - 1) and moved past i (each with a bias
 * below n / 2^32); then, for nearest or sub-cell partners, j replaced by the
 * partner of i. r: the candidate's own stream. */
DSMC_HD void dsmc_pick_pair(const dsmc_params *p, uint32_t start, uint32_t n, kedr_u32x4 w,
                            dsmc_rng *r, const double *x, const double *y, const double *z,
                            const uint32_t *last, uint32_t *pi, uint32_t *pj)
{
    uint32_t i = (uint32_t)(((uint64_t)w.v[0] * n) >> 32); /* two products, no division */
    uint32_t j = (uint32_t)(((uint64_t)w.v[1] * (n - 1)) >> 32);
    j += j >= i;
    i += start;
    j += start;
    if (p->partner == KEDR_DSMC_PARTNER_NEAREST && n > 2) {
        /* the nearest other molecule of the cell (the first of equals), instead of j, but not
         * the one i last collided with in this step: molecules do not move during the
         * collisions, so i would otherwise meet the same partner every time it is drawn (Bird's
         * prohibition of repeated collisions) */
        double best = HUGE_VAL;
        if (z) { /* 3D (z is NULL in 2D) */
            for (uint32_t k = start; k < start + n; k++) {
                double dx = x[k] - x[i], dy = y[k] - y[i], dz = z[k] - z[i];
                double d2 = dx * dx + dy * dy + dz * dz;
                if (k != i && k != last[i] && d2 < best) {
                    best = d2;
                    j = k;
                }
            }
        } else {
            for (uint32_t k = start; k < start + n; k++) {
                double dx = x[k] - x[i], dy = y[k] - y[i], d2 = dx * dx + dy * dy;
                if (k != i && k != last[i] && d2 < best) {
                    best = d2;
                    j = k;
                }
            }
        }
    }
    if (p->partner == KEDR_DSMC_PARTNER_SUBCELL && n > 2) {
        /* Bird 1994 section 11.1: the partner is any other molecule of the first one's sub-cell,
         * each with the same chance, or, when it holds no other, the random j above */
        double zi = z ? z[i] : 0.0;
        uint32_t si = dsmc_subcell(p, x[i], y[i], zi), same = 0;
        for (uint32_t k = start; k < start + n; k++)
            same += k != i && dsmc_subcell(p, x[k], y[k], z ? z[k] : 0.0) == si;
        if (same) {
            uint32_t pick = (uint32_t)(dsmc_u01(r) * same);
            pick = pick < same ? pick : same - 1;
            for (uint32_t k = start; k < start + n; k++)
                if (k != i && dsmc_subcell(p, x[k], y[k], z ? z[k] : 0.0) == si && pick-- == 0) {
                    j = k;
                    break;
                }
        }
    }
    *pi = i;
    *pj = j;
}

/* Candidate (i, j)'s relative velocity at the particles' current velocities (sg left 0). */
DSMC_HD dsmc_cand dsmc_cand_rel(const dsmc_params *p, uint32_t i, uint32_t j, const double *vx,
                                const double *vy, const double *vz, const uint8_t *sp)
{
    dsmc_cand c;
    c.i = i;
    c.j = j;
    c.si = sp ? sp[i] : 0; /* sp is NULL for a simple gas */
    c.sj = sp ? sp[j] : 0;
    c.pair = c.si * DSMC_MAXS + c.sj;
    c.gx = vx[i] - vx[j];
    c.gy = vy[i] - vy[j];
    c.gz = vz[i] - vz[j];
    c.g2 = c.gx * c.gx + c.gy * c.gy + c.gz * c.gz;
    c.g = c.g2 > 0 ? sqrt(c.g2) : 0;
    c.sg = 0;
    c.rsum = 0;
    (void)p;
    return c;
}

/* Its sigma g = a g^e g (0 when g = 0). */
DSMC_HD void dsmc_cand_sg(const dsmc_params *p, dsmc_cand *c)
{
    if (c->g2 > 0) {
        double se = p->sigma_e[c->pair];
        c->sg = p->sigma_a[c->pair] * (se == 0 ? 1.0 : dsmc_pow(c->g, se)) * c->g;
    }
}

/* Candidate (i, j)'s relative velocity and sigma g. */
DSMC_HD dsmc_cand dsmc_cand_eval(const dsmc_params *p, uint32_t i, uint32_t j, const double *vx,
                                 const double *vy, const double *vz, const uint8_t *sp)
{
    dsmc_cand c = dsmc_cand_rel(p, i, j, vx, vy, vz, sp);
    dsmc_cand_sg(p, &c);
    return c;
}

/* Bounds on sigma g that settle most acceptances without the power g^e, whose exp and log cost
 * a cpu more than the rest of a rejected candidate (the cuda back end does without). They are
 * taken from g^2, so that the verdict need not wait for the square root: sigma g = a g^e g =
 * a (g^2)^h with h = (e + 1) / 2, and for a pair with e != 0 and g^2 = 2^k m, m in [1, 2):
 * (g^2)^h = 2^(k h) m^h, 2^(k h) is scale[k + DSMC_SGB_EXP] and m^h lies between frac[b] and
 * frac[b + 1], b the bin of m. The tables come from pow (within an ulp), and the sigma g of
 * dsmc_cand_sg, exp(e log g) g with g the rounded square root, is within a few ulps of
 * a (g^2)^h, so the bounds widened by 1e-9 hold it; what they cannot settle is left to it. */
#define DSMC_SGB_EXP 60   /* 2^-60 <= g^2 < 2^60 m^2/s^2; other speeds take the exact path */
#define DSMC_SGB_BITS 6 /* the leading bits of m's mantissa that name its bin */
#define DSMC_SGB_BINS (1 << DSMC_SGB_BITS)
typedef struct {
    double scale[2 * DSMC_SGB_EXP];
    double frac[DSMC_SGB_BINS + 1];
} dsmc_sg_bounds;

/* Candidate c (dsmc_cand_rel) with uniform u against (sigma g)max: 1 when it is accepted and
 * leaves (sigma g)max as it is, 0 when it is rejected, -1 when only the exact sigma g can say.
 * b: DSMC_MAXS^2 tables indexed by pair, or NULL. */
DSMC_HD int dsmc_sg_verdict(const dsmc_params *p, const dsmc_sg_bounds *b, const dsmc_cand *c,
                            double u, double sgmax)
{
#ifdef __CUDA_ARCH__
    (void)p, (void)b, (void)c, (void)u, (void)sgmax;
    return -1;
#else
    if (!(c->g2 > 0))
        return 0; /* sigma g = 0: always rejected */
    double e = p->sigma_e[c->pair];
    if (!b || e == 0)
        return -1;
    uint64_t bits;
    memcpy(&bits, &c->g2, sizeof bits);
    int k = (int)((bits >> 52) & 0x7ff) - 1023;
    if (k < -DSMC_SGB_EXP || k >= DSMC_SGB_EXP)
        return -1;
    const dsmc_sg_bounds *t = &b[c->pair];
    uint32_t bin = (uint32_t)(bits >> (52 - DSMC_SGB_BITS)) & (DSMC_SGB_BINS - 1);
    double f0 = t->frac[bin], f1 = t->frac[bin + 1];
    double s = p->sigma_a[c->pair] * t->scale[k + DSMC_SGB_EXP];
    double hi = s * (f0 > f1 ? f0 : f1) * (1 + 1e-9), lo = s * (f0 > f1 ? f1 : f0) * (1 - 1e-9);
    double us = u * sgmax;
    if (us >= hi)
        return 0;
    if (us < lo && hi <= sgmax)
        return 1;
    return -1;
#endif
}

/* A collision's deflection: cos and sin of the deflection angle chi and of the azimuth. */
typedef struct {
    double cosx, sinx, s, c;
} dsmc_defl;

/* The deflection from two uniforms: u for chi (1/alpha = ia; VHS, ia = 1: isotropic,
 * cos chi = 2u - 1; VSS (Koura & Matsumoto 1991): b/d = sqrt(u) and
 * chi = 2 acos((b/d)^(1/alpha)), that is cos chi = 2 u^(1/alpha) - 1), v for the azimuth 2 pi v. */
DSMC_HD dsmc_defl dsmc_deflection(double ia, double u, double v)
{
    dsmc_defl d;
    d.cosx = ia == 1.0 ? 2.0 * u - 1.0 : 2.0 * dsmc_powv(u, ia) - 1.0;
    double sin2 = 1.0 - d.cosx * d.cosx;
    d.sinx = sin2 > 0 ? sqrt(sin2) : 0.0;
    dsmc_sincos_2pi(v, &d.s, &d.c);
    return d;
}

/* ---- chemistry ---------------------------------------------------------------------------- */

/* What the collisions of a reacting gas write besides the pair (NULL for a gas that does not
 * react): the particle arrays, into whose slots base .. base + room - 1 dissociations put their
 * new molecules (claimed with *slots, which counts past room when the room runs out); parent[k]
 * the molecule whose dissociation made slot base + k (sim.c puts the new molecules in the order
 * of their parents after the collisions, so that a run does not depend on the order in which
 * threads claimed slots); counts[r] the reactions r made, counts[DSMC_MAXR] the dissociations
 * not made for want of room. */
typedef struct {
    double *x, *y, *z, *vx, *vy, *vz;
    float *erot;
    uint8_t *sp, *vib;
    uint32_t *parent;
    uint64_t *slots, *counts;
    uint64_t base, room;
} dsmc_chem;

DSMC_HD uint64_t dsmc_atomic_add(uint64_t *a, uint64_t v)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)atomicAdd((unsigned long long *)a, (unsigned long long)v);
#else
    return __atomic_fetch_add(a, v, __ATOMIC_RELAXED);
#endif
}

/* The probability that a collision of reaction r's reactants with collision energy ec (their
 * relative translational energy plus their rotational energies, J) makes reaction r: the total
 * collision energy model (Bird 1994 section 6.6, in its form for VHS molecules), zero
 * up to the activation energy E_a, then C (E_c - E_a)^x / E_c^y with x = eta + zeta/2 + 1/2,
 * y = zeta/2 + 3/2 - omega (zeta the pair's rotational degrees of freedom) and C such that a
 * gas in equilibrium at any T reacts at the Arrhenius rate a T^eta exp(-E_a / kT)
 * (chem.c: dsmc_chem_params). It is the ratio sigma_R / sigma of the reaction's cross-section
 * to the collision's and is not bounded by 1 (dsmc_react_select). */
DSMC_HD double dsmc_react_prob(const dsmc_params *p, int r, double ec)
{
    double d = ec - p->rx.re_ea[r];
    if (!(d > 0))
        return 0;
    return exp(p->rx.re_lc[r] + p->rx.re_x[r] * log(d) - p->rx.re_y[r] * log(ec));
}

/* Candidate k's collision energy (J): its relative translational energy and the rotational
 * energies of both molecules (erot NULL: none rotates). */
DSMC_HD double dsmc_cand_ec(const dsmc_params *p, const dsmc_cand *k, const float *erot)
{
    const double m1 = p->mass[k->si], m2 = p->mass[k->sj], mr = m1 * m2 / (m1 + m2);
    return 0.5 * mr * k->g2 + (erot ? (double)erot[k->i] + (double)erot[k->j] : 0.0);
}

/* Whether reaction t has the species si and sj as its reactants (in either order; *fwd: 1 when
 * si is the one that breaks or exchanges). */
DSMC_HD int dsmc_react_of(const dsmc_params *p, int t, int si, int sj, int *fwd)
{
    *fwd = p->rx.re_a[t] == si && p->rx.re_b[t] == sj;
    return *fwd || (p->rx.re_a[t] == sj && p->rx.re_b[t] == si);
}

/* The sum of dsmc_react_prob over the reactions of the species pair (si, sj), in the order of
 * the reaction file: the pair's total reaction cross-section over its collision cross-section
 * sigma_R / sigma at collision energy ec. */
DSMC_HD double dsmc_react_sum(const dsmc_params *p, int si, int sj, double ec)
{
    double sum = 0;
    int fwd;
    for (int t = 0; t < p->rx.nreact; t++)
        if (dsmc_react_of(p, t, si, sj, &fwd))
            sum += dsmc_react_prob(p, t, ec);
    return sum;
}

/* Candidate k of a pair that has reactions, before its acceptance: k->rsum = sigma_R / sigma
 * (dsmc_react_sum at its collision energy). The pair is selected with the larger of the two
 * cross-sections, max(sigma, sigma_R) (docs/dsmc.md, Chemistry): returns 1 when sigma_R is the
 * larger, and then the caller multiplies its sigma g by k->rsum before comparing with (and
 * raising) (sigma g)max; 0 when sigma is, and the candidate is accepted as in a gas that does
 * not react. dsmc_react then makes reaction r with probability P_r / max(1, rsum), so that
 * reaction r happens at the rate sigma P_r g and the collision without reaction at the rate
 * (sigma - sigma_R) g where that is positive, 0 otherwise. */
DSMC_HD int dsmc_react_select(const dsmc_params *p, dsmc_cand *k, const float *erot)
{
    k->rsum = dsmc_react_sum(p, k->si, k->sj, dsmc_cand_ec(p, k, erot));
    return k->rsum > 1;
}

/* A relative velocity of magnitude g in a random direction (two uniforms of r). */
DSMC_HD void dsmc_iso(dsmc_rng *r, double g, double h[3])
{
    double c = 2.0 * dsmc_u01(r) - 1.0, s2 = 1.0 - c * c, s = s2 > 0 ? sqrt(s2) : 0.0, sn, cs;
    dsmc_sincos_2pi(dsmc_u01(r), &sn, &cs);
    h[0] = g * c;
    h[1] = g * s * cs;
    h[2] = g * s * sn;
}

/* The internal energy of a product molecule of species s from the pool e (J), by
 * Larsen-Borgnakke with every mode exchanging: a vibrational level (dsmc_vib_level, where the
 * gas vibrates), then the rotational energy. Returns the pool left. */
DSMC_HD double dsmc_product_internal(const dsmc_params *p, int s, double b, double e,
                                     float *erot, uint8_t *vib, dsmc_rng *r)
{
    *erot = 0.0f;
    *vib = 0;
    if (p->theta_v[s] > 0 && e > 0) {
        int v = dsmc_vib_level(p, s, b, e, r);
        *vib = (uint8_t)v;
        e -= (double)v * KEDR_BOLTZMANN * p->theta_v[s];
    }
    if (p->rot_dof[s] && e > 0) {
        float f = (float)(e * dsmc_lb_fraction(p->rot_dof[s], b, r));
        if ((double)f > e)
            f = nextafterf(f, 0.0f);
        *erot = f;
        e -= (double)f;
    }
    return e;
}

/* An accepted candidate k of a reacting gas (k->rsum from dsmc_react_select): one uniform u of
 * r chooses among the reactions of its pair, each with probability dsmc_react_prob /
 * max(1, k->rsum), taken in the order of the reaction file (u max(1, rsum) against their
 * running sum; none when it exceeds the sum). A reaction replaces the collision: the energy
 * of the pair (its
 * kinetic energy in the centre-of-mass frame, rotational and vibrational energies) less the
 * energy of formation the products gain, with the change of the centre of mass's kinetic
 * energy when the products' masses differ from the reactants' by rounding or data, is
 * redistributed: each product's internal modes by dsmc_product_internal, the rest as relative
 * translation in random directions (a dissociation splits it between the fragments and the
 * third body with the Larsen-Borgnakke fraction of three degrees of freedom), the centre of
 * mass moving with the pair's momentum. Energy and momentum are conserved to rounding.
 * Returns 1 when the pair reacted. */
DSMC_HD int dsmc_react(const dsmc_params *p, const dsmc_cand *k, dsmc_rng *r, const dsmc_chem *ch,
                       double *vx, double *vy, double *vz, float *erot, uint8_t *vib)
{
    const uint32_t i = k->i, j = k->j;
    const double m1 = p->mass[k->si], m2 = p->mass[k->sj], mt = m1 + m2;
    const double ec = dsmc_cand_ec(p, k, erot);
    double u = dsmc_u01(r), sum = 0;
    if (k->rsum > 1)
        u *= k->rsum; /* the pair reacts for sure: sigma_R is its selection cross-section */
    int q = -1, fwd = 1, last = -1, lastf = 1;
    for (int t = 0; t < p->rx.nreact; t++) {
        int f;
        if (!dsmc_react_of(p, t, k->si, k->sj, &f))
            continue;
        double pr = dsmc_react_prob(p, t, ec);
        sum += pr;
        if (pr > 0) {
            last = t;
            lastf = f;
        }
        if (u < sum) {
            q = t;
            fwd = f;
            break;
        }
    }
    if (q < 0 && k->rsum > 1) { /* u rsum rounded up to the sum itself */
        q = last;
        fwd = lastf;
    }
    if (q < 0)
        return 0;
    const uint32_t a = fwd ? i : j, bm = fwd ? j : i; /* the reactant that breaks, the other */
    const int diss = p->rx.re_diss[q], s0 = p->rx.re_p[q][0], s1 = p->rx.re_p[q][1], s2 = p->rx.re_p[q][2];
    const double ma = p->mass[s0], mn = diss ? p->mass[s1] : 0.0, mb = p->mass[diss ? s2 : s1];
    const double mp = ma + mn + mb;
    double px = m1 * vx[i] + m2 * vx[j], py = m1 * vy[i] + m2 * vy[j], pz = m1 * vz[i] + m2 * vz[j];
    double p2 = px * px + py * py + pz * pz;
    double ev = vib ? dsmc_evib(p, k->si, vib[i]) + dsmc_evib(p, k->sj, vib[j]) : 0.0;
    double e = ec + ev - p->rx.re_de[q] + 0.5 * p2 * (1.0 / mt - 1.0 / mp);
    if (!(e > 0))
        return 0; /* only where the masses do not balance: no energy for the products */
    uint64_t slot = 0;
    if (diss) {
        slot = dsmc_atomic_add(ch->slots, 1);
        if (slot >= ch->room) {
            dsmc_atomic_add(&ch->counts[DSMC_MAXR], 1);
            return 0;
        }
    }
    const double b = 2.0 + 0.5 * p->sigma_e[k->pair];
    float ra = 0.0f, rb = 0.0f, rn = 0.0f;
    uint8_t va = 0, vb = 0, vn = 0;
    e = dsmc_product_internal(p, s0, b, e, &ra, &va, r);
    if (diss)
        e = dsmc_product_internal(p, s1, b, e, &rn, &vn, r);
    e = dsmc_product_internal(p, diss ? s2 : s1, b, e, &rb, &vb, r);
    if (e < 0)
        e = 0;
    const double cx = px / mp, cy = py / mp, cz = pz / mp;
    double h[3], w[3] = {0, 0, 0};
    double e1 = e, e2 = 0;
    if (diss) {
        e2 = e * dsmc_lb_fraction(3, b, r); /* the fragments' relative translation */
        e1 = e - e2;
    }
    const double mf = ma + mn; /* the fragments (or the first product) as one body */
    dsmc_iso(r, sqrt(2.0 * e1 * mp / (mf * mb)), h);
    if (diss)
        dsmc_iso(r, sqrt(2.0 * e2 * mf / (ma * mn)), w);
    double fx = cx + mb / mp * h[0], fy = cy + mb / mp * h[1], fz = cz + mb / mp * h[2];
    vx[bm] = cx - mf / mp * h[0];
    vy[bm] = cy - mf / mp * h[1];
    vz[bm] = cz - mf / mp * h[2];
    vx[a] = fx + mn / mf * w[0];
    vy[a] = fy + mn / mf * w[1];
    vz[a] = fz + mn / mf * w[2];
    ch->sp[a] = (uint8_t)s0;
    ch->sp[bm] = (uint8_t)(diss ? s2 : s1);
    if (erot) {
        erot[a] = ra;
        erot[bm] = rb;
    }
    if (vib) {
        vib[a] = va;
        vib[bm] = vb;
    }
    if (diss) {
        uint64_t nslot = ch->base + slot;
        ch->x[nslot] = ch->x[a];
        ch->y[nslot] = ch->y[a];
        if (ch->z)
            ch->z[nslot] = ch->z[a];
        ch->vx[nslot] = fx - ma / mf * w[0];
        ch->vy[nslot] = fy - ma / mf * w[1];
        ch->vz[nslot] = fz - ma / mf * w[2];
        ch->sp[nslot] = (uint8_t)s1;
        if (ch->erot)
            ch->erot[nslot] = rn;
        if (ch->vib)
            ch->vib[nslot] = vn;
        ch->parent[slot] = a;
    }
    dsmc_atomic_add(&ch->counts[q], 1);
    return 1;
}

/* The collision of candidate k without reaction: internal exchange and scattering (see
 * dsmc_cand_collide). */
DSMC_HD void dsmc_scatter(const dsmc_params *p, const dsmc_cand *k, dsmc_rng *r,
                          const dsmc_defl *pre, double tcell, double *vx, double *vy, double *vz,
                          float *erot, uint8_t *vib)
{
    const uint32_t i = k->i, j = k->j;
    const double gx = k->gx, gy = k->gy, gz = k->gz, g = k->g;

    double m1 = p->mass[k->si], m2 = p->mass[k->sj], mt = m1 + m2;
    double cx = (m1 * vx[i] + m2 * vx[j]) / mt;
    double cy = (m1 * vy[i] + m2 * vy[j]) / mt;
    double cz = (m1 * vz[i] + m2 * vz[j]) / mt;
    double scale = 1.0;
    if (p->rot_dof[k->si] || p->rot_dof[k->sj]) {
        /* sigma_e = 1 - 2 omega, so b = 5/2 - omega = 2 + sigma_e / 2 */
        double mr = m1 * m2 / mt, b = 2.0 + 0.5 * p->sigma_e[k->pair], et = 0.5 * mr * k->g2;
        if (vib) {
            /* Z_vib at the cell's temperature, not the pair's energy (dsmc_vib_tcell) */
            et = dsmc_vib_one(p, k->si, b, tcell, et, &vib[i], r);
            et = dsmc_lb_one(p, k->si, b, et, &erot[i], r);
            et = dsmc_vib_one(p, k->sj, b, tcell, et, &vib[j], r);
            et = dsmc_lb_one(p, k->sj, b, et, &erot[j], r);
        } else {
            et = dsmc_lb_one(p, k->si, b, et, &erot[i], r);
            et = dsmc_lb_one(p, k->sj, b, et, &erot[j], r);
        }
        scale = sqrt(2.0 * et / mr) / g;
    }
    double ia = p->inv_alpha[k->pair], hx, hy, hz;
    dsmc_defl d;
    if (pre) {
        d = *pre;
    } else {
        double u = dsmc_u01(r), v = dsmc_u01(r);
        d = dsmc_deflection(ia, u, v);
    }
    const double cosx = d.cosx, sinx = d.sinx, s = d.s, c2 = d.c;
    double gp = sqrt(gy * gy + gz * gz);
    if (ia == 1.0 || gp < 1e-12 * g) { /* isotropic, or g along x: any azimuth frame will do */
        hx = cosx * g;
        hy = sinx * c2 * g;
        hz = sinx * s * g;
    } else { /* rotate g by chi about a random azimuth (Bird 1994 eq. 2.22) */
        hx = cosx * gx + sinx * s * gp;
        hy = cosx * gy + sinx * (g * gz * c2 - gx * gy * s) / gp;
        hz = cosx * gz - sinx * (g * gy * c2 + gx * gz * s) / gp;
    }
    hx *= scale;
    hy *= scale;
    hz *= scale;
    vx[i] = cx + m2 / mt * hx;
    vy[i] = cy + m2 / mt * hy;
    vz[i] = cz + m2 / mt * hz;
    vx[j] = cx - m1 / mt * hx;
    vy[j] = cy - m1 / mt * hy;
    vz[j] = cz - m1 / mt * hz;
}

/* An accepted candidate collides: first it exchanges internal energy (serial
 * Larsen-Borgnakke: for one molecule, then the other, the vibrational exchange dsmc_vib_one
 * where the gas vibrates (vib non-NULL), then the rotational dsmc_lb_one), then it scatters
 * (dsmc_deflection, from the next two uniforms of r, or from pre when the caller drew them
 * already: the cpu computes a batch of deflections in vector code when no molecule rotates),
 * with the relative speed rescaled to the translational energy left (dsmc_scatter). In a
 * reacting gas (ch non-NULL) a pair that has reactions may react instead (dsmc_react, with
 * k->rsum from dsmc_react_select).
 * Momentum and total energy are conserved. Adds the pair's separation to *sep. */
DSMC_HD void dsmc_cand_collide(const dsmc_params *p, const dsmc_cand *k, dsmc_rng *r,
                               const dsmc_defl *pre, double tcell, const double *x,
                               const double *y, const double *z, double *vx, double *vy,
                               double *vz, float *erot, uint8_t *vib, uint32_t *last, double *sep,
                               const dsmc_chem *ch)
{
    const uint32_t i = k->i, j = k->j;
    if (!(ch && p->rx.pair_reacts[k->pair] && dsmc_react(p, k, r, ch, vx, vy, vz, erot, vib)))
        dsmc_scatter(p, k, r, pre, tcell, vx, vy, vz, erot, vib);
    double dx = x[i] - x[j], dy = y[i] - y[j];
    if (z) {
        double dz = z[i] - z[j];
        *sep += sqrt(dx * dx + dy * dy + dz * dz);
    } else {
        *sep += sqrt(dx * dx + dy * dy);
    }
    if (p->partner == KEDR_DSMC_PARTNER_NEAREST) {
        last[i] = j;
        last[j] = i;
    }
}

/* A candidate of the cell's particles [start, start + n), r its stream (dsmc_candidate_rng):
 * its pair chosen uniformly (dsmc_pick_pair, from w, its draw of the cell's DSMC_P_PAIR stream),
 * accepted with
 * sigma g / (sigma g)max (raising *sgmax when exceeded; in a reacting gas sigma_R g where the
 * pair's reaction cross-section sigma_R is the larger, dsmc_react_select), then collided
 * (dsmc_cand_collide).
 * sgb: the cpu's bounds on sigma g (dsmc_sg_verdict), or NULL; pre: the deflection from r's
 * first two uniforms, made already (dsmc_cand_collide), or NULL.
 * Returns 1 when it collided. */
DSMC_HD int dsmc_try_pair(const dsmc_params *p, dsmc_rng r, uint32_t start,
                          uint32_t n, double *sgmax, kedr_u32x4 w, const double *x,
                          const double *y, const double *z, double *vx, double *vy, double *vz,
                          float *erot, uint8_t *vib, const uint8_t *sp, uint32_t *last,
                          double *sep, const dsmc_sg_bounds *sgb, const dsmc_defl *pre,
                          double tcell, const dsmc_chem *ch)
{
    uint32_t i, j;
    dsmc_pick_pair(p, start, n, w, &r, x, y, z, last, &i, &j);
    dsmc_cand c = dsmc_cand_rel(p, i, j, vx, vy, vz, sp);
    double u = kedr_u01_f64(w.v[2], w.v[3]);
    /* a pair whose reaction cross-section exceeds its collision cross-section is selected with
     * the former (dsmc_react_select), which the bounds on sigma g do not know */
    const int rsel = ch && p->rx.pair_reacts[c.pair] && dsmc_react_select(p, &c, erot);
    int verdict = rsel ? -1 : dsmc_sg_verdict(p, sgb, &c, u, *sgmax);
    if (verdict < 0) {
        dsmc_cand_sg(p, &c);
        if (rsel)
            c.sg *= c.rsum;
        if (c.sg > *sgmax)
            *sgmax = c.sg;
        verdict = u * *sgmax < c.sg; /* never when g = 0 */
    }
    if (!verdict)
        return 0;
    dsmc_cand_collide(p, &c, &r, pre, tcell, x, y, z, vx, vy, vz, erot, vib, last, sep, ch);
    return 1;
}

/* The translational temperature of a cell of a simple gas, particles [start, start + n). */
DSMC_HD double dsmc_temp_simple(const dsmc_params *p, uint32_t start, uint32_t n,
                                const double *vx, const double *vy, const double *vz)
{
    double sx = 0, sy = 0, sz = 0, s2 = 0;
    for (uint32_t i = start; i < start + n; i++) {
        sx += vx[i];
        sy += vy[i];
        sz += vz[i];
        s2 += vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i];
    }
    return p->mass[0] * (s2 - (sx * sx + sy * sy + sz * sz) / n) / (3.0 * KEDR_BOLTZMANN * n);
}

/* 1 / lambda of a simple gas at the cell's number density and temperature t > 0, with
 * pw = t^lam_e (the cpu makes a block's powers together). */
DSMC_HD double dsmc_inv_mfp_simple(const dsmc_params *p, double weight, double volume,
                                   uint32_t n, double pw)
{
    double density = (double)n * weight / volume;
    return density * p->lam_a[0] * pw;
}

/* 1 / lambda in a cell of n particles [start, start + n), each standing for `weight` molecules:
 * the mole-fraction average of the simple-gas VHS values at the cell's number density and
 * translational temperature. */
DSMC_HD double dsmc_inv_mfp(const dsmc_params *p, double weight, double volume, uint32_t start,
                            uint32_t n, const double *vx, const double *vy, const double *vz,
                            const uint8_t *sp)
{
    if (p->nspecies == 1) { /* a simple gas: no masses to weigh by */
        double t = dsmc_temp_simple(p, start, n, vx, vy, vz);
        return t > 0 ? dsmc_inv_mfp_simple(p, weight, volume, n, dsmc_powv(t, p->lam_e[0])) : 0;
    }
    double density = (double)n * weight / volume;
    double sm = 0, smx = 0, smy = 0, smz = 0, sm2 = 0;
    uint32_t count[DSMC_MAXS] = {0};
    for (uint32_t i = start; i < start + n; i++) {
        double m = p->mass[sp[i]];
        sm += m;
        smx += m * vx[i];
        smy += m * vy[i];
        smz += m * vz[i];
        sm2 += m * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
        count[sp[i]]++;
    }
    double t = (sm2 - (smx * smx + smy * smy + smz * smz) / sm) / (3.0 * KEDR_BOLTZMANN * n);
    if (!(t > 0))
        return 0;
    double s = 0;
    for (int k = 0; k < p->nspecies; k++)
        if (count[k])
            s += (double)count[k] / n * p->lam_a[k] * dsmc_pow(t, p->lam_e[k]);
    return density * s;
}

/* The per-cell (sigma g)max is stored in single precision (4 bytes a cell), rounded up so that
 * the stored bound never falls below a value it has seen. */
DSMC_HD float dsmc_float_up(double x)
{
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}

/* The most candidates a cell tries in one step: candidate k draws from counter k of the cell's
 * DSMC_P_PAIR stream, whose low 24 bits count draws. Only absurd cases reach it (thousands of
 * molecules in a cell and a dt far above the mean collision time). */
#define DSMC_MAX_CANDIDATES ((1u << 24) - 1)

/* What a cell's collisions start from: its gas volume, its molecules' weight and the pair rate
 * 1/2 n (n - 1) W / V. 0 when it has no collisions (fewer than two molecules, no gas). */
DSMC_HD int dsmc_cell_rates(const dsmc_params *p, uint32_t cell, uint32_t n, double *volume,
                            double *weight, double *pairs_rate)
{
    *volume = dsmc_gas_volume(p, cell); /* the true gas volume of a cut cell */
    if (n < 2 || !(*volume > 0))
        return 0;
    *weight = p->weight * dsmc_weight_factor(p, cell);
    *pairs_rate = 0.5 * (double)n * (double)(n - 1) * *weight / *volume;
    return 1;
}

/* NTC's candidates in a step, floor(pairs_rate (sigma g)max dt + u) with u from the cell's
 * DSMC_P_COLLIDE stream r. */
DSMC_HD uint32_t dsmc_ntc_count(const dsmc_params *p, double pairs_rate, double sgmax, double u)
{
    double mf = floor(pairs_rate * sgmax * p->dt + u);
    return mf < (double)DSMC_MAX_CANDIDATES ? (uint32_t)mf : DSMC_MAX_CANDIDATES;
}
DSMC_HD uint32_t dsmc_ntc_candidates(const dsmc_params *p, double pairs_rate, double sgmax,
                                     dsmc_rng *r)
{
    return dsmc_ntc_count(p, pairs_rate, sgmax, dsmc_u01(r));
}

/* Collisions in one cell, particles [start, start + n) of the sorted arrays.
 * NTC, Bird's no-time-counter scheme (Bird 1994 section 11.1): 1/2 n (n - 1) W (sigma g)max dt / V
 * candidate pairs, rounded up or down at random so that the expectation is exact.
 * MFS, the majorant frequency scheme (Ivanov & Rogasinsky, Sov. J. Numer. Anal. Math. Modelling
 * 3 (1988) 453): the cell's clock starts at 0 and advances after every candidate by an exponential
 * interval of mean 1 / nu, nu = 1/2 n (n - 1) W (sigma g)max / V the majorant collision frequency
 * (with the (sigma g)max of the moment); candidates are taken while the clock is within dt, so
 * their number is Poisson with mean nu dt.
 * Either way each candidate is accepted with sigma g / (sigma g)max and the cell's (sigma g)max
 * grows when a larger value is met. Returns the collisions; *cand the candidates, *sep_mfp the sum
 * of the collided pairs' separations over the cell's mean free path. last: one word per particle
 * of scratch, where nearest-partner collisions keep each molecule's last partner of the step. */
DSMC_HD uint32_t dsmc_collide_cell(const dsmc_params *p, uint32_t cell, uint32_t start, uint32_t n,
                                   const double *x, const double *y, const double *z, double *vx,
                                   double *vy, double *vz, float *erot, uint8_t *vib,
                                   const uint8_t *sp, uint32_t *last, float *sgmax_at,
                                   uint32_t *cand,
                                   double *sep_mfp, const dsmc_sg_bounds *sgb,
                                   const dsmc_chem *ch)
{
    *cand = 0;
    *sep_mfp = 0;
    double volume, weight, pairs_rate;
    if (!dsmc_cell_rates(p, cell, n, &volume, &weight, &pairs_rate))
        return 0;
    dsmc_rng r = dsmc_rng_make(p->seed, cell, p->step, DSMC_P_COLLIDE);
    double sgmax = *sgmax_at, sep = 0;
    const double tcell = dsmc_vib_tcell(p, start, n, vx, vy, vz, sp, vib);
    if (p->partner == KEDR_DSMC_PARTNER_NEAREST)
        for (uint32_t k = start; k < start + n; k++)
            last[k] = UINT32_MAX; /* no collision yet in this step */
    uint32_t m = 0, ncoll = 0;
    /* The candidates' choices come from a stream of their own, one draw each, and the draw of
     * the next candidate is made before this one is tried: it depends on nothing the pair
     * does, so a cpu overlaps the two chains of dependent arithmetic. */
    dsmc_rng pick = dsmc_rng_make(p->seed, cell, p->step, DSMC_P_PAIR);
    if (p->scheme == KEDR_DSMC_MFS) {
        double clock = -log(dsmc_u01(&r)) / (pairs_rate * sgmax);
        kedr_u32x4 w = dsmc_draw4(&pick);
        while (clock < p->dt && m < DSMC_MAX_CANDIDATES) {
            kedr_u32x4 next = dsmc_draw4(&pick);
            ncoll += dsmc_try_pair(p, dsmc_candidate_rng(p, cell, m), start, n, &sgmax, w, x, y,
                                   z, vx, vy, vz, erot, vib, sp, last, &sep, sgb, NULL, tcell,
                                   ch);
            w = next;
            m++;
            clock += -log(dsmc_u01(&r)) / (pairs_rate * sgmax);
        }
    } else {
        m = dsmc_ntc_candidates(p, pairs_rate, sgmax, &r);
        kedr_u32x4 w = {{0, 0, 0, 0}};
        if (m)
            w = dsmc_draw4(&pick);
        for (uint32_t c = 0; c < m; c++) {
            kedr_u32x4 next = c + 1 < m ? dsmc_draw4(&pick) : w;
            ncoll += dsmc_try_pair(p, dsmc_candidate_rng(p, cell, c), start, n, &sgmax, w, x, y,
                                   z, vx, vy, vz, erot, vib, sp, last, &sep, sgb, NULL, tcell,
                                   ch);
            w = next;
        }
    }
    *sgmax_at = dsmc_float_up(sgmax);
    *cand = m;
    if (ncoll)
        *sep_mfp = sep * dsmc_inv_mfp(p, weight, volume, start, n, vx, vy, vz, sp);
    return ncoll;
}

/* ---- sampling ----------------------------------------------------------------------------- */

/* Accumulators per cell, structure of arrays: dsmc_nacc(p) rows of ncells. DSMC_ACC_EVIB,
 * NVIB and THETA only where the gas vibrates (the vibrational energy, the vibrating molecules
 * and the sum of their theta_v); then, in a mixture only, one row per species from
 * dsmc_acc_species(p) on (its molecules). A simple gas keeps neither. */
enum { DSMC_ACC_N = 0, DSMC_ACC_M, DSMC_ACC_MVX, DSMC_ACC_MVY, DSMC_ACC_MVZ, DSMC_ACC_MV2,
       DSMC_ACC_EROT, DSMC_ACC_ZETA, DSMC_ACC_EVIB, DSMC_ACC_NVIB, DSMC_ACC_THETA,
       DSMC_NACC_MAX };
DSMC_HD size_t dsmc_acc_species(const dsmc_params *p)
{
    return p->vib ? DSMC_NACC_MAX : DSMC_ACC_EVIB;
}
/* The species rows: a mixture's, none for a simple gas. */
DSMC_HD size_t dsmc_acc_nspecies(const dsmc_params *p)
{
    return p->nspecies > 1 ? (size_t)p->nspecies : 0;
}
DSMC_HD size_t dsmc_nacc(const dsmc_params *p)
{
    return dsmc_acc_species(p) + dsmc_acc_nspecies(p);
}

DSMC_HD void dsmc_sample_cell(const dsmc_params *p, uint32_t cell, size_t ncells, uint32_t start,
                              uint32_t n, const double *vx, const double *vy, const double *vz,
                              const float *erot, const uint8_t *vib, const uint8_t *sp,
                              double *acc)
{
    double sm = 0, smx = 0, smy = 0, smz = 0, sm2 = 0, se = 0, sz = 0;
    for (uint32_t i = start; i < start + n; i++) {
        int k = sp ? sp[i] : 0; /* NULL for a simple gas, as erot for a monatomic one */
        se += erot ? (double)erot[i] : 0.0;
        sz += p->rot_dof[k];
        double m = p->mass[k];
        sm += m;
        smx += m * vx[i];
        smy += m * vy[i];
        smz += m * vz[i];
        sm2 += m * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
    }
    acc[DSMC_ACC_N * ncells + cell] += n;
    acc[DSMC_ACC_M * ncells + cell] += sm;
    acc[DSMC_ACC_MVX * ncells + cell] += smx;
    acc[DSMC_ACC_MVY * ncells + cell] += smy;
    acc[DSMC_ACC_MVZ * ncells + cell] += smz;
    acc[DSMC_ACC_MV2 * ncells + cell] += sm2;
    acc[DSMC_ACC_EROT * ncells + cell] += se;
    acc[DSMC_ACC_ZETA * ncells + cell] += sz;
    if (vib) {
        double ev = 0, nv = 0, th = 0;
        for (uint32_t i = start; i < start + n; i++) {
            int k = sp ? sp[i] : 0;
            ev += dsmc_evib(p, k, vib[i]);
            nv += p->theta_v[k] > 0;
            th += p->theta_v[k];
        }
        acc[DSMC_ACC_EVIB * ncells + cell] += ev;
        acc[DSMC_ACC_NVIB * ncells + cell] += nv;
        acc[DSMC_ACC_THETA * ncells + cell] += th;
    }
    if (sp && dsmc_acc_nspecies(p)) { /* a mixture: each species' molecules in its own row */
        double *count = acc + dsmc_acc_species(p) * ncells + cell;
        for (uint32_t i = start; i < start + n; i++)
            count[(size_t)sp[i] * ncells] += 1.0;
    }
}

/* The vibrational temperature of molecules whose mean quantum is k theta (theta the mean
 * theta_v of the vibrating ones) and mean vibrational energy e: the harmonic oscillator's
 * e = k theta / (exp(theta / T) - 1) solved for T (exact for one vibrating species); 0 when
 * e = 0. */
DSMC_HD double dsmc_tvib(double theta, double e)
{
    return e > 0 && theta > 0 ? theta / log1p(KEDR_BOLTZMANN * theta / e) : 0.0;
}

/* This step's new molecules of inflow group g (face g / ns, species g % ns) whose expected
 * number is expect: floor(expect + u), u the group's own uniform of the step (the same draw on
 * every back end and every rank count). expect < 2^31 (inflow_groups, sim.c). */
DSMC_HD uint32_t dsmc_inflow_count(const dsmc_params *p, uint32_t g, double expect)
{
    uint32_t ns = (uint32_t)p->nspecies;
    kedr_u32x4 u = kedr_rng_draw(p->seed, g / ns, p->step, DSMC_PURPOSE(DSMC_P_INFLOW_COUNT, g % ns));
    return (uint32_t)floor(expect + kedr_u01_f64(u.v[0], u.v[1]));
}

/* Index of the group owning item e: the last g with offsets[g] <= e (offsets ascending,
 * offsets[0] = 0, ngroups + 1 entries, offsets[ngroups] > e). */
DSMC_HD uint32_t dsmc_group_of(const uint32_t *offsets, uint32_t ngroups, uint32_t e)
{
    uint32_t lo = 0, hi = ngroups; /* invariant: offsets[lo] <= e < offsets[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (offsets[mid] <= e)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

#endif
