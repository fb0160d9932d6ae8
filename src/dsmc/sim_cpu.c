/* The DSMC simulator's cpu back end: OpenMP loops over the inline physics of dsmc_kernels.h,
 * called by the step driver (sim.c) where the cuda back end (sim.cu) runs the same physics in
 * kernels. */
#include "chem.h"
#include "sim.h"

#include "core/internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#ifdef __AVX2__
#include <immintrin.h>
#endif

/* A thread's items are consecutive, so after a binary search for its first item it finds the
 * group of the next by walking forward: the same group as dsmc_group_of (the last one starting
 * at or before e), without a search per item. */
void dsmc_generate_cpu(kedr_ctx *ctx, const dsmc_params *p, int fill, const uint32_t *offsets,
                       const uint32_t *gid, uint32_t ngroups, size_t base, size_t count,
                       dsmc_particles a)
{
#pragma omp parallel num_threads(ctx->threads) if (count > DSMC_OMP_MIN)
    {
        uint32_t g = UINT32_MAX;
#pragma omp for schedule(static)
        for (size_t e = 0; e < count; e++) {
            if (g == UINT32_MAX)
                g = dsmc_group_of(offsets, ngroups, (uint32_t)e);
            while (offsets[g + 1] <= e)
                g++;
            dsmc_generate_slot(p, p->dims == 3, fill, gid ? gid[g] : g, e, a, base + e);
        }
    }
}

/* The moves' dsmc_box: around the body walls in 2D (segments and circles), around the
 * solids in 3D, widened by a margin far above the rounding of the crossing tests. */
dsmc_box dsmc_far_box(const dsmc_params *p)
{
    dsmc_box b;
    for (int d = 0; d < 3; d++) {
        b.lo[d] = HUGE_VAL;
        b.hi[d] = -HUGE_VAL;
    }
    if (p->dims == 3) {
        for (int j = 0; j < p->nsolids; j++) {
            const double *s = p->solid[j];
            for (int d = 0; d < 3; d++) {
                double lo, hi;
                if (p->solid_type[j] == KEDR_DSMC_BODY_SPHERE) {
                    lo = s[d] - s[3];
                    hi = s[d] + s[3];
                } else if (p->solid_type[j] == KEDR_DSMC_BODY_CUBOID) {
                    lo = s[d];
                    hi = s[3 + d];
                } else { /* cone: apex to base along x, the base radius across */
                    lo = d == 0 ? s[0] : s[d] - s[5];
                    hi = d == 0 ? s[0] + s[4] : s[d] + s[5];
                }
                b.lo[d] = fmin(b.lo[d], lo);
                b.hi[d] = fmax(b.hi[d], hi);
            }
        }
    } else {
        for (int k = 0; k < p->nsegments; k++)
            for (int e = 0; e < 2; e++)
                for (int d = 0; d < 2; d++) {
                    b.lo[d] = fmin(b.lo[d], p->seg[k][2 * e + d]);
                    b.hi[d] = fmax(b.hi[d], p->seg[k][2 * e + d]);
                }
        for (int j = 0; j < p->ncircles; j++)
            for (int d = 0; d < 2; d++) {
                b.lo[d] = fmin(b.lo[d], p->circle[j][d] - p->circle[j][2]);
                b.hi[d] = fmax(b.hi[d], p->circle[j][d] + p->circle[j][2]);
            }
        if (p->nlbodies) /* the outline segments' box */
            for (int d = 0; d < 2; d++) {
                b.lo[d] = fmin(b.lo[d], p->lines.box[d]);
                b.hi[d] = fmax(b.hi[d], p->lines.box[2 + d]);
            }
        if (p->nsegments + p->ncircles + p->nlbodies > 0) { /* z unbounded: only x and y can miss */
            b.lo[2] = -HUGE_VAL;
            b.hi[2] = HUGE_VAL;
        }
    }
    double margin = 1e-6 * (p->dx + p->dy + (p->dims == 3 ? p->dz : 0));
    for (int d = 0; d < 3; d++) {
        b.lo[d] -= margin;
        b.hi[d] += margin;
    }
    return b;
}

#ifdef __AVX2__
/* The straight flight of the cpu's moves for four particles at once: the constants of
 * move_cpu's and move3_cpu's loops. */
typedef struct {
    double t, lo[3], hi[3], blo[3], bhi[3], inv[3];
    int n[3];
} dsmc_flight;

static dsmc_flight flight_of(const dsmc_params *p, dsmc_box box)
{
    dsmc_flight f;
    f.t = p->dt;
    const double inv[3] = {p->inv_dx, p->inv_dy, p->inv_dz};
    const int n[3] = {p->nx, p->ny, p->nz};
    for (int d = 0; d < 3; d++) {
        f.lo[d] = p->lo[d];
        f.hi[d] = p->hi[d];
        f.blo[d] = box.lo[d];
        f.bhi[d] = box.hi[d];
        f.inv[d] = inv[d];
        f.n[d] = n[d];
    }
    return f;
}

/* Particles i..i + 3 (none new in this step) in dims dimensions: when all four fly the whole
 * step without meeting a side or coming near a solid (the far box), their positions and cells
 * as the scalar loops write them (the same tests and arithmetic, so the same bits), and 1;
 * otherwise nothing written and 0. */
static inline int flights4(const dsmc_flight *f, dsmc_particles a, size_t i, uint32_t *cell,
                           int dims)
{
    double *pos[3] = {a.x, a.y, a.z};
    const double *vel[3] = {a.vx, a.vy, a.vz};
    const __m256d t = _mm256_set1_pd(f->t);
    __m256d q[3], inside = _mm256_castsi256_pd(_mm256_set1_epi64x(-1)), far = _mm256_setzero_pd();
    for (int d = 0; d < dims; d++) {
        __m256d pp = _mm256_loadu_pd(pos[d] + i);
        q[d] = _mm256_add_pd(pp, _mm256_mul_pd(_mm256_loadu_pd(vel[d] + i), t));
        inside = _mm256_and_pd(inside, _mm256_cmp_pd(q[d], _mm256_set1_pd(f->lo[d]), _CMP_GE_OQ));
        inside = _mm256_and_pd(inside, _mm256_cmp_pd(q[d], _mm256_set1_pd(f->hi[d]), _CMP_LE_OQ));
        /* max(p, q) and min(p, q) as the scalar p > q ? p : q and p < q ? p : q */
        far = _mm256_or_pd(far, _mm256_cmp_pd(_mm256_max_pd(pp, q[d]),
                                              _mm256_set1_pd(f->blo[d]), _CMP_LT_OQ));
        far = _mm256_or_pd(far, _mm256_cmp_pd(_mm256_min_pd(pp, q[d]),
                                              _mm256_set1_pd(f->bhi[d]), _CMP_GT_OQ));
    }
    if (_mm256_movemask_pd(_mm256_and_pd(inside, far)) != 15)
        return 0;
    __m128i key = _mm_setzero_si128();
    for (int d = dims - 1; d >= 0; d--) { /* ((iz ny + iy) nx + ix), as the scalar code */
        _mm256_storeu_pd(pos[d] + i, q[d]);
        __m128i k = _mm256_cvttpd_epi32(
            _mm256_mul_pd(_mm256_sub_pd(q[d], _mm256_set1_pd(f->lo[d])), _mm256_set1_pd(f->inv[d])));
        k = _mm_min_epi32(k, _mm_set1_epi32(f->n[d] - 1));
        key = d == dims - 1 ? k : _mm_add_epi32(_mm_mullo_epi32(key, _mm_set1_epi32(f->n[d])), k);
    }
    _mm_storeu_si128((__m128i *)(cell + i), key);
    return 1;
}
#endif

/* move_cpu's loop in 3D, with the same shortcut for molecules that meet no side and no solid
 * (the expressions of dsmc_move_one3, so the same bits). */
static void move3_cpu(const dsmc_params *p, size_t n, size_t n_old, dsmc_particles a,
                      uint32_t *cell, double *partial, size_t nsum, int threads)
{
    dsmc_box box = dsmc_far_box(p);
#pragma omp parallel num_threads(threads) if (n > DSMC_OMP_MIN)
    {
        dsmc_params local = *p;
        if (p->surf)
            local.surf = partial + nsum * (size_t)omp_get_thread_num();
        const double t = p->dt, xlo = p->lo[0], xhi = p->hi[0], ylo = p->lo[1];
        const double yhi = p->hi[1], zlo = p->lo[2], zhi = p->hi[2];
        const double bx0 = box.lo[0], by0 = box.lo[1], bz0 = box.lo[2], bx1 = box.hi[0];
        const double by1 = box.hi[1], bz1 = box.hi[2];
        const double idx = p->inv_dx, idy = p->inv_dy, idz = p->inv_dz;
        const int nx = p->nx, ny = p->ny, nz = p->nz;
#ifdef __AVX2__
        const dsmc_flight fl = flight_of(p, box);
#endif
#pragma omp for schedule(static)
        for (size_t g = 0; g < (n + 3) / 4; g++) {
#ifdef __AVX2__
            if (4 * g + 4 <= n_old && flights4(&fl, a, 4 * g, cell, 3))
                continue;
#endif
            for (size_t i = 4 * g; i < 4 * g + 4 && i < n; i++) {
                double px = a.x[i], py = a.y[i], pz = a.z[i];
                double qx = px + a.vx[i] * t, qy = py + a.vy[i] * t, qz = pz + a.vz[i] * t;
                int inside = qx >= xlo && qx <= xhi && qy >= ylo && qy <= yhi && qz >= zlo &&
                             qz <= zhi;
                int far = (px > qx ? px : qx) < bx0 || (px < qx ? px : qx) > bx1 ||
                          (py > qy ? py : qy) < by0 || (py < qy ? py : qy) > by1 ||
                          (pz > qz ? pz : qz) < bz0 || (pz < qz ? pz : qz) > bz1;
                if (i < n_old && inside && far) {
                    a.x[i] = qx;
                    a.y[i] = qy;
                    a.z[i] = qz;
                    /* dsmc_cell_of3 inside the domain: no index below 0, the far faces clamped */
                    int ix = (int)((qx - xlo) * idx), iy = (int)((qy - ylo) * idy);
                    int iz = (int)((qz - zlo) * idz);
                    ix = ix < nx ? ix : nx - 1;
                    iy = iy < ny ? iy : ny - 1;
                    iz = iz < nz ? iz : nz - 1;
                    cell[i] = ((uint32_t)iz * (uint32_t)ny + (uint32_t)iy) * (uint32_t)nx +
                              (uint32_t)ix;
                } else {
                    cell[i] = dsmc_move_slot(&local, 1, a, i, i >= n_old);
                }
            }
        }
    }
}

/* The axisymmetric move (dsmc_move_axi) of every particle: each one's extra copies under radial
 * weighting in copies[i], their sum returned. */
static uint64_t move_axi_cpu(const dsmc_params *p, size_t n, size_t n_old, dsmc_particles a,
                             uint32_t *cell, uint32_t *copies, double *partial, size_t nsum,
                             int threads)
{
    uint64_t extra = 0;
#pragma omp parallel num_threads(threads) if (n > DSMC_OMP_MIN) reduction(+ : extra)
    {
        dsmc_params local = *p;
        if (p->surf)
            local.surf = partial + nsum * (size_t)omp_get_thread_num();
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++) {
            cell[i] = dsmc_move_slot_axi(&local, a, i, i >= n_old, &copies[i]);
            extra += copies[i];
        }
    }
    return extra;
}

/* Surface sums go to one set per thread (partial), added up in thread order afterwards, so
 * the cpu result does not depend on timing.
 * Most molecules fly the whole step without meeting a side or a wall. For them the loop does
 * here what dsmc_move_one would do (the same expressions, so the same bits: a straight flight
 * for dt, no random draw) without its event search; the rest, and this step's new molecules,
 * go through dsmc_move_one. */
uint64_t dsmc_move_cpu(kedr_ctx *ctx, const dsmc_params *p, size_t n, size_t n_old,
                       dsmc_particles a, uint32_t *cell, uint32_t *copies, double *partial)
{
    size_t nsum = (size_t)p->nelem * DSMC_NSURF;
    int threads = ctx->threads > 0 ? ctx->threads : 1;
    uint64_t extra = 0;
    if (p->surf)
        memset(partial, 0, nsum * (size_t)threads * sizeof(double));
    if (p->axisym) {
        extra = move_axi_cpu(p, n, n_old, a, cell, copies, partial, nsum, threads);
    } else if (p->dims == 3) {
        move3_cpu(p, n, n_old, a, cell, partial, nsum, threads);
    } else {
        dsmc_box box = dsmc_far_box(p);
#pragma omp parallel num_threads(threads) if (n > DSMC_OMP_MIN)
        {
            dsmc_params local = *p;
            if (p->surf)
                local.surf = partial + nsum * (size_t)omp_get_thread_num();
            const double t = p->dt, xlo = p->lo[0], xhi = p->hi[0];
            const double ylo = p->lo[1], yhi = p->hi[1];
            const double bx0 = box.lo[0], by0 = box.lo[1], bx1 = box.hi[0], by1 = box.hi[1];
            const double idx = p->inv_dx, idy = p->inv_dy;
            const int nx = p->nx, ny = p->ny;
#ifdef __AVX2__
            const dsmc_flight fl = flight_of(p, box);
#endif
#pragma omp for schedule(static)
            for (size_t g = 0; g < (n + 3) / 4; g++) {
#ifdef __AVX2__
                if (4 * g + 4 <= n_old && flights4(&fl, a, 4 * g, cell, 2))
                    continue;
#endif
                for (size_t i = 4 * g; i < 4 * g + 4 && i < n; i++) {
                    double px = a.x[i], py = a.y[i];
                    double qx = px + a.vx[i] * t, qy = py + a.vy[i] * t;
                    int inside = qx >= xlo && qx <= xhi && qy >= ylo && qy <= yhi;
                    int far = (px > qx ? px : qx) < bx0 || (px < qx ? px : qx) > bx1 ||
                              (py > qy ? py : qy) < by0 || (py < qy ? py : qy) > by1;
                    if (i < n_old && inside && far) {
                        a.x[i] = qx;
                        a.y[i] = qy;
                        /* dsmc_cell_of inside the domain: no index below 0, the far faces clamped */
                        int ix = (int)((qx - xlo) * idx), iy = (int)((qy - ylo) * idy);
                        ix = ix < nx ? ix : nx - 1;
                        iy = iy < ny ? iy : ny - 1;
                        cell[i] = (uint32_t)iy * (uint32_t)nx + (uint32_t)ix;
                    } else {
                        cell[i] = dsmc_move_slot(&local, 0, a, i, i >= n_old);
                    }
                }
            }
        }
    }
    if (p->surf)
        for (int t = 0; t < threads; t++)
            for (size_t k = 0; k < nsum; k++)
                p->surf[k] += partial[nsum * (size_t)t + k];
    return extra;
}

/* Radial weighting: after the move, particle i of the n asked for the number of extra copies
 * that incl[i] - incl[i - 1] now holds (incl: their inclusive scan); the copies go to the slots
 * from n on in that order, in the same cell. */
void dsmc_clone_cpu(kedr_ctx *ctx, size_t n, const uint32_t *incl, dsmc_particles a,
                    uint32_t *cell)
{
#pragma omp parallel for schedule(static) num_threads(ctx->threads) if (n > DSMC_OMP_MIN)
    for (size_t i = 0; i < n; i++) {
        uint32_t first = i ? incl[i - 1] : 0;
        for (size_t j = n + first; j < n + incl[i]; j++)
            dsmc_copy_particle(a, cell, i, j);
    }
}

void dsmc_locate_cpu(kedr_ctx *ctx, const dsmc_params *p, size_t n, dsmc_particles a,
                     uint32_t *cell)
{
#pragma omp parallel for schedule(static) num_threads(ctx->threads) if (n > DSMC_OMP_MIN)
    for (size_t i = 0; i < n; i++)
        cell[i] = p->dims == 3 ? dsmc_cell_of3(p, a.x[i], a.y[i], a.z[i])
                               : dsmc_cell_of(p, a.x[i], a.y[i]);
}

/* The cpu puts the particles in cell order out of place: to[j] = from[perm[j]] for every array
 * at once, so that perm is read once and a cell's molecules arrive together. The molecules of a
 * cell come from nearby slots, but in 3D the slots of the next plane of cells lie beyond the
 * caches, and a gather that waits for each of those loads in turn ran at a third of the core's
 * bandwidth: the sources are prefetched DSMC_GATHER_AHEAD slots ahead (128 took the 3D box's
 * indexing at 10^6 molecules from 15.5 to 9.5 ms a step on one core; 16 to 256 were measured). */
#define DSMC_GATHER_AHEAD 128
static inline void gather_range(const dsmc_params *p, const uint32_t *perm, size_t lo, size_t hi,
                                size_t n, dsmc_particles from, dsmc_particles to)
{ /* perm is read up to n (the prefetch), the slots [lo, hi) are written */
    const int three = to.z != NULL;
    for (size_t j = lo; j < hi; j++) {
        if (j + DSMC_GATHER_AHEAD < n) {
            uint32_t q = perm[j + DSMC_GATHER_AHEAD];
            __builtin_prefetch(&from.x[q]);
            __builtin_prefetch(&from.y[q]);
            __builtin_prefetch(&from.vx[q]);
            __builtin_prefetch(&from.vy[q]);
            __builtin_prefetch(&from.vz[q]);
            if (three)
                __builtin_prefetch(&from.z[q]);
        }
        uint32_t q = perm[j];
        to.x[j] = from.x[q];
        to.y[j] = from.y[q];
        to.vx[j] = from.vx[q];
        to.vy[j] = from.vy[q];
        to.vz[j] = from.vz[q];
        if (three)
            to.z[j] = from.z[q];
    }
    /* the arrays of dsmc_particle_fields after those doubles (rotational energies, species,
     * vibrational levels: those the gas keeps), each in a pass of its own */
    dsmc_field fs[DSMC_MAX_FIELDS], ft[DSMC_MAX_FIELDS];
    int nf = dsmc_particle_fields(&from, p, fs);
    dsmc_particle_fields(&to, p, ft);
    for (int k = three ? 6 : 5; k < nf; k++) {
        const char *src = *fs[k].ptr;
        char *dst = *ft[k].ptr;
        size_t w = fs[k].elem;
        if (w == 4) /* memcpy of a constant 4 bytes: one load and store, any element type */
            for (size_t j = lo; j < hi; j++)
                memcpy(dst + 4 * j, src + 4 * (size_t)perm[j], 4);
        else if (w == 1)
            for (size_t j = lo; j < hi; j++)
                dst[j] = src[perm[j]];
        else
            for (size_t j = lo; j < hi; j++)
                memcpy(dst + j * w, src + (size_t)perm[j] * w, w);
    }
}

/* The whole gather, when no collision stage does it cell by cell. */
void dsmc_gather_cpu(kedr_ctx *ctx, const dsmc_params *p, const uint32_t *perm, size_t n,
                     dsmc_particles from, dsmc_particles to)
{
    const size_t chunk = 4096; /* slots a pass of gather_range takes, within the caches */
#pragma omp parallel for schedule(static) num_threads(ctx->threads) if (n > DSMC_OMP_MIN)
    for (size_t lo = 0; lo < n; lo += chunk)
        gather_range(p, perm, lo, lo + chunk < n ? lo + chunk : n, n, from, to);
}

/* NTC collisions of the cells [c0, c1) on the cpu: dsmc_collide_cell's work with the random
 * blocks that do not depend on the collisions (each cell's candidate count, each candidate's
 * pair and its first block of scattering) drawn beforehand, many at once (kedr_rng_draw_many,
 * vector code): the same numbers in the same order, so the same result, bit for bit. */
#define DSMC_CELL_BLOCK 64 /* cells */
#define DSMC_CAND_BATCH 128 /* candidates whose draws are made together */
typedef struct {
    uint64_t coll, cand, sep;
} collide_sums;

/* The deflections (dsmc_deflection) of candidates whose scattering streams begin with the
 * blocks w[0..q): each one's first two uniforms, which dsmc_cand_collide draws first when no
 * molecule rotates and the partner is not chosen by sub-cell. Four at a time in vector code
 * where the compiler targets AVX2, with the same bits as the scalar code. */
static void deflect_many(double ia, const kedr_u32x4 *w, uint32_t q, dsmc_defl *out)
{
    double u[DSMC_CAND_BATCH], v[DSMC_CAND_BATCH];
    for (uint32_t t = 0; t < q; t++) {
        u[t] = kedr_u01_f64(w[t].v[2], w[t].v[3]); /* the order of dsmc_u01's draws */
        v[t] = kedr_u01_f64(w[t].v[0], w[t].v[1]);
    }
    uint32_t t = 0;
#ifdef DSMC_MATH_AVX2
    const __m256d one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0);
    for (; t + 4 <= q; t += 4) {
        __m256d uu = _mm256_loadu_pd(u + t), s, c;
        __m256d cosx = _mm256_sub_pd(_mm256_mul_pd(two, ia == 1.0 ? uu : dsmc_pow4(uu, ia)), one);
        __m256d sin2 = _mm256_sub_pd(one, _mm256_mul_pd(cosx, cosx));
        __m256d sinx = _mm256_and_pd(_mm256_cmp_pd(sin2, _mm256_setzero_pd(), _CMP_GT_OQ),
                                     _mm256_sqrt_pd(sin2));
        dsmc_sincos_2pi4(_mm256_loadu_pd(v + t), &s, &c);
        /* four (cosx, sinx, s, c) records: a 4 x 4 transpose */
        __m256d a = _mm256_unpacklo_pd(cosx, sinx), b = _mm256_unpackhi_pd(cosx, sinx);
        __m256d e = _mm256_unpacklo_pd(s, c), f = _mm256_unpackhi_pd(s, c);
        _mm256_storeu_pd(&out[t].cosx, _mm256_permute2f128_pd(a, e, 0x20));
        _mm256_storeu_pd(&out[t + 1].cosx, _mm256_permute2f128_pd(b, f, 0x20));
        _mm256_storeu_pd(&out[t + 2].cosx, _mm256_permute2f128_pd(a, e, 0x31));
        _mm256_storeu_pd(&out[t + 3].cosx, _mm256_permute2f128_pd(b, f, 0x31));
    }
#endif
    for (; t < q; t++)
        out[t] = dsmc_deflection(ia, u[t], v[t]);
}

/* The mcs/mfp statistic's sum for the cells of a block with collisions: their separations sep
 * over their mean free paths (dsmc_inv_mfp), a simple gas's powers of the temperature made
 * together (dsmc_pow_many). */
static uint64_t sep_over_mfp(const dsmc_params *p, uint32_t nc, const uint32_t *cell,
                             const uint32_t *ncoll, const double *sep, const double *weight,
                             const double *volume, const uint32_t *starts, const uint32_t *counts,
                             dsmc_particles a)
{
    uint64_t sum = 0;
    if (p->nspecies != 1) {
        for (uint32_t j = 0; j < nc; j++) {
            uint32_t c = cell[j];
            if (ncoll[j])
                sum += dsmc_sep_fixed(sep[j] * dsmc_inv_mfp(p, weight[j], volume[j], starts[c],
                                                            counts[c], a.vx, a.vy, a.vz, a.sp));
        }
        return sum;
    }
    double t[DSMC_CELL_BLOCK], pw[DSMC_CELL_BLOCK];
    uint32_t at[DSMC_CELL_BLOCK], nt = 0;
    for (uint32_t j = 0; j < nc; j++) {
        if (!ncoll[j])
            continue;
        t[nt] = dsmc_temp_simple(p, starts[cell[j]], counts[cell[j]], a.vx, a.vy, a.vz);
        at[nt] = j;
        nt += t[nt] > 0; /* 1 / lambda = 0 otherwise */
    }
    dsmc_pow_many(t, p->lam_e[0], pw, nt);
    for (uint32_t k = 0; k < nt; k++) {
        uint32_t j = at[k];
        sum += dsmc_sep_fixed(
            sep[j] * dsmc_inv_mfp_simple(p, weight[j], volume[j], counts[cell[j]], pw[k]));
    }
    return sum;
}

/* Local cells c0 .. c1 - 1 (cell[]: their local numbers, for starts, counts and (sigma g)max;
 * gcell[]: their global ones, for the draws). */
static void collide_ntc_block(const dsmc_params *p, dsmc_cellmap cm, size_t c0, size_t c1,
                              const uint32_t *starts, const uint32_t *counts, dsmc_particles a,
                              uint32_t *last, float *sgmax_cell, const dsmc_sg_bounds *sgb,
                              const dsmc_chem *ch, collide_sums *sum)
{
    uint32_t cell[DSMC_CELL_BLOCK], gcell[DSMC_CELL_BLOCK], m[DSMC_CELL_BLOCK];
    uint32_t ncoll[DSMC_CELL_BLOCK], nc = 0;
    double sgmax[DSMC_CELL_BLOCK], volume[DSMC_CELL_BLOCK], weight[DSMC_CELL_BLOCK];
    double rate[DSMC_CELL_BLOCK], sep[DSMC_CELL_BLOCK], tcell[DSMC_CELL_BLOCK];
    uint64_t entity[2 * DSMC_CAND_BATCH];
    uint32_t purpose[2 * DSMC_CAND_BATCH];
    kedr_u32x4 drawn[2 * DSMC_CAND_BATCH];
    /* a simple gas without rotation: the deflections in vector code, a batch at a time (not
     * with sub-cell partners, whose choice takes the candidate's first uniform) */
    const int pre = p->nspecies == 1 && !p->rot_dof[0] &&
                    p->partner != KEDR_DSMC_PARTNER_SUBCELL;
    dsmc_defl defl[DSMC_CAND_BATCH];
    for (size_t c = c0; c < c1; c++) {
        uint32_t b = nc, g = dsmc_cell_global(cm, (uint32_t)c);
        if (!dsmc_cell_rates(p, g, counts[c], &volume[b], &weight[b], &rate[b]))
            continue; /* fewer than two molecules or no gas */
        cell[b] = (uint32_t)c;
        gcell[b] = g;
        sgmax[b] = sgmax_cell[c];
        sep[b] = 0;
        ncoll[b] = 0;
        tcell[b] = dsmc_vib_tcell(p, starts[c], counts[c], a.vx, a.vy, a.vz, a.sp, a.vib);
        entity[b] = g;
        purpose[b] = DSMC_PURPOSE(DSMC_P_COLLIDE, 0);
        if (p->partner == KEDR_DSMC_PARTNER_NEAREST)
            for (uint32_t k = starts[c]; k < starts[c] + counts[c]; k++)
                last[k] = UINT32_MAX; /* no collision yet in this step */
        nc++;
    }
    /* the candidate counts (the first uniform of each cell's DSMC_P_COLLIDE stream) */
    kedr_rng_draw_many(p->seed, entity, p->step, purpose, nc, drawn);
    for (uint32_t b = 0; b < nc; b++)
        m[b] = dsmc_ntc_count(p, rate[b], sgmax[b], kedr_u01_f64(drawn[b].v[2], drawn[b].v[3]));
    /* the candidates in cell order, DSMC_CAND_BATCH at a time: candidate k of a cell draws
     * block k of the cell's DSMC_P_PAIR stream and starts its own stream (dsmc_candidate_rng) */
    uint32_t b = 0, k = 0, qb[DSMC_CAND_BATCH];
    while (b < nc) {
        uint32_t q = 0;
        while (b < nc && q < DSMC_CAND_BATCH) {
            if (k == m[b]) { /* the cell's candidates are all in */
                b++;
                k = 0;
                continue;
            }
            qb[q] = b;
            entity[q] = gcell[b];
            purpose[q] = DSMC_PURPOSE(DSMC_P_PAIR, k);
            entity[DSMC_CAND_BATCH + q] = ((uint64_t)k << 32) | gcell[b];
            purpose[DSMC_CAND_BATCH + q] = DSMC_PURPOSE(DSMC_P_SCATTER, 0);
            q++;
            k++;
        }
        kedr_rng_draw_many(p->seed, entity, p->step, purpose, q, drawn);
        kedr_rng_draw_many(p->seed, entity + DSMC_CAND_BATCH, p->step,
                           purpose + DSMC_CAND_BATCH, q, drawn + DSMC_CAND_BATCH);
        if (pre)
            deflect_many(p->inv_alpha[0], drawn + DSMC_CAND_BATCH, q, defl);
        for (uint32_t t = 0; t < q; t++) {
            uint32_t j = qb[t], c = cell[j];
            dsmc_rng r = dsmc_rng_drawn(p->seed, entity[DSMC_CAND_BATCH + t], p->step,
                                        DSMC_P_SCATTER, drawn[DSMC_CAND_BATCH + t]);
            ncoll[j] += dsmc_try_pair(p, r, starts[c], counts[c], &sgmax[j], drawn[t], a.x, a.y,
                                      a.z, a.vx, a.vy, a.vz, a.erot, a.vib, a.sp, last, &sep[j],
                                      sgb, pre ? &defl[t] : NULL, tcell[j], ch);
        }
    }
    for (uint32_t j = 0; j < nc; j++) {
        sgmax_cell[cell[j]] = dsmc_float_up(sgmax[j]);
        sum->cand += m[j];
        sum->coll += ncoll[j];
    }
    sum->sep += sep_over_mfp(p, nc, cell, ncoll, sep, weight, volume, starts, counts, a);
}

/* With from non-NULL the molecules of each cell are first gathered from *from through perm
 * (perm[j] the slot in from of sorted particle j) into a; perm then serves as the scratch of
 * the collisions (each molecule's last partner), the cell's part of it read before. NTC takes
 * blocks of cells (collide_ntc_block); the majorant frequency scheme, and every cell when plain
 * (a test's reference), one cell at a time (dsmc_collide_cell). */
void dsmc_collide_cpu(kedr_ctx *ctx, const dsmc_params *p, dsmc_cellmap cm, size_t ncells,
                      const uint32_t *starts, const uint32_t *counts, dsmc_particles a,
                      const dsmc_particles *from,
                      size_t n, uint32_t *perm, float *sgmax, const dsmc_sg_bounds *sgb,
                      int plain, const dsmc_chem *ch, uint64_t *ncoll, uint64_t *ncand,
                      double *nsep)
{
    uint64_t coll = 0, cand = 0, sep = 0;
    size_t nblocks = (ncells + DSMC_CELL_BLOCK - 1) / DSMC_CELL_BLOCK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(ctx->threads) \
    reduction(+ : coll, cand, sep) if (ncells > DSMC_OMP_MIN / 16)
    for (size_t blk = 0; blk < nblocks; blk++) {
        size_t c0 = blk * DSMC_CELL_BLOCK;
        size_t c1 = c0 + DSMC_CELL_BLOCK < ncells ? c0 + DSMC_CELL_BLOCK : ncells;
        size_t lo = starts[c0], hi = (size_t)starts[c1 - 1] + counts[c1 - 1];
        /* nearest partners overwrite perm in a block's cells (their scratch), perhaps in
         * another thread's block: the prefetch then looks no further than this block */
        if (from)
            gather_range(p, perm, lo, hi, p->partner == KEDR_DSMC_PARTNER_NEAREST ? hi : n, *from,
                         a);
        collide_sums s = {0, 0, 0};
        if (p->scheme == KEDR_DSMC_NTC && !plain) {
            collide_ntc_block(p, cm, c0, c1, starts, counts, a, perm, sgmax, sgb, ch, &s);
        } else {
            for (size_t c = c0; c < c1; c++) {
                uint32_t m = 0;
                double sc = 0;
                s.coll += dsmc_collide_cell(p, dsmc_cell_global(cm, (uint32_t)c), starts[c],
                                            counts[c], a.x, a.y, a.z, a.vx, a.vy, a.vz, a.erot,
                                            a.vib, a.sp, perm, sgmax + c, &m, &sc, sgb, ch);
                s.cand += m;
                s.sep += dsmc_sep_fixed(sc);
            }
        }
        coll += s.coll;
        cand += s.cand;
        sep += s.sep;
    }
    *ncoll = coll;
    *ncand = cand;
    *nsep = (double)sep / DSMC_SEP_UNIT;
}

/* The nlocal cells into acc (rows of nlocal, by local cell). */
void dsmc_sample_cpu(kedr_ctx *ctx, const dsmc_params *p, size_t nlocal,
                     const uint32_t *starts, const uint32_t *counts, dsmc_particles a,
                     double *acc)
{
#pragma omp parallel for schedule(static) num_threads(ctx->threads) if (nlocal > DSMC_OMP_MIN / 4)
    for (size_t c = 0; c < nlocal; c++)
        dsmc_sample_cell(p, (uint32_t)c, nlocal, starts[c], counts[c], a.vx, a.vy, a.vz, a.erot,
                         a.vib, a.sp, acc);
}
