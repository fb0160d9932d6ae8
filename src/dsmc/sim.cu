/* The cuda back end of the DSMC simulator: one thread per particle (generation, move, gather)
 * or per cell (collisions, sampling), each running the same inline physics as the cpu back end
 * (dsmc_kernels.h). Cells own contiguous ranges of the sorted particle arrays, so no two threads
 * write the same particle and no atomics touch particle data. */
#include "sim.h"
#include "exchange.h"

#include "core/internal.h"

#define DSMC_BLOCK 256

/* dsmc_params is passed by value to kernels: up to 32764 bytes of parameters since CUDA 12.1
 * (sm_70 and later; the cayley kernels rely on it too), 4 KB before. */
static_assert(sizeof(dsmc_params) <= 32764, "dsmc_params is passed by value to kernels");

/* Enough blocks to fill the GPU a few times over; kernels loop with a grid stride. */
static unsigned grid_for(const kedr_ctx *ctx, size_t n)
{
    size_t blocks = (n + DSMC_BLOCK - 1) / DSMC_BLOCK;
    size_t cap = (size_t)(ctx->multiprocessors > 0 ? ctx->multiprocessors : 1) * 16;
    return (unsigned)(blocks < cap ? (blocks ? blocks : 1) : cap);
}

/* The kernels that differ between 2D and 3D are instantiated per dimension (THREE), so the 2D
 * kernels compile to what they were before the 3D mode, without its registers and stack. Those
 * that move or collide molecules are also instantiated per whether the gas vibrates (VIB): for a
 * gas that does not, a.vib is set to NULL in the kernel, the vibration code (behind tests of
 * that pointer) compiles away, and the kernel is what it was before vibration. */
#define DSMC_LAUNCH(kernel, three, vib, grid, block, ...)                                         \
    do {                                                                                        \
        if (three && vib)                                                                       \
            kernel<1, 1><<<grid, block, 0, KEDR_STREAM(ctx)>>>(__VA_ARGS__);                    \
        else if (three)                                                                         \
            kernel<1, 0><<<grid, block, 0, KEDR_STREAM(ctx)>>>(__VA_ARGS__);                    \
        else if (vib)                                                                           \
            kernel<0, 1><<<grid, block, 0, KEDR_STREAM(ctx)>>>(__VA_ARGS__);                    \
        else                                                                                    \
            kernel<0, 0><<<grid, block, 0, KEDR_STREAM(ctx)>>>(__VA_ARGS__);                    \
    } while (0)
/* The collision kernels are also instantiated per whether the gas reacts (CHEM): for one that
 * does not, the chemistry pointer is NULL in the kernel and its code compiles away. */
#define DSMC_LAUNCH_3(kernel, three, vib, C, grid, block, ...)                                   \
    do {                                                                                        \
        if ((three) && (vib))                                                                   \
            kernel<1, 1, C><<<grid, block, 0, KEDR_STREAM(ctx)>>>(__VA_ARGS__);                 \
        else if (three)                                                                         \
            kernel<1, 0, C><<<grid, block, 0, KEDR_STREAM(ctx)>>>(__VA_ARGS__);                 \
        else if (vib)                                                                           \
            kernel<0, 1, C><<<grid, block, 0, KEDR_STREAM(ctx)>>>(__VA_ARGS__);                 \
        else                                                                                    \
            kernel<0, 0, C><<<grid, block, 0, KEDR_STREAM(ctx)>>>(__VA_ARGS__);                 \
    } while (0)
#define DSMC_LAUNCH_CHEM(kernel, three, vib, chem, grid, block, ...)                              \
    do {                                                                                        \
        if (chem)                                                                               \
            DSMC_LAUNCH_3(kernel, three, vib, 1, grid, block, __VA_ARGS__);                     \
        else                                                                                    \
            DSMC_LAUNCH_3(kernel, three, vib, 0, grid, block, __VA_ARGS__);                     \
    } while (0)
template <int THREE>
static __global__ void k_generate(dsmc_params p, int fill, const uint32_t *offsets,
                                  const uint32_t *gid, uint32_t ngroups, size_t base, size_t count,
                                  dsmc_particles a)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (size_t)gridDim.x * blockDim.x) {
        uint32_t g = dsmc_group_of(offsets, ngroups, (uint32_t)e);
        dsmc_generate_slot(&p, THREE, fill, gid ? gid[g] : g, e, a, base + e);
    }
}

static __global__ void k_inflow_counts(dsmc_params p, uint32_t m, const uint32_t *gid,
                                       const double *expect, uint32_t *counts)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i <= m;
         i += (size_t)gridDim.x * blockDim.x)
        counts[i] = i < m ? dsmc_inflow_count(&p, gid[i], expect[i]) : 0u;
}

static __device__ unsigned long long warp_sum(unsigned long long v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

/* The planar and 3D moves in two kernels. k_move_straight moves every molecule whose straight
 * step stays in the domain and misses the box around the bodies (fb), with the expressions of
 * dsmc_move_one / dsmc_move_one3 (so the same bits) and without their event search, as the cpu
 * does (sim.c); it lists the others, and this step's new molecules, in rest (*nrest of them, a
 * warp's at once) for k_move_rest. The straight kernel needs 32 registers (38 in 3D) against the
 * event search's 68 (74), and its warps do not wait on a lane at a wall. On an H100 the 10^8
 * box's move took 2.54 ms with the shortcut as a branch in front of the event search, 1.88 ms
 * so; the 3D box's 6.4 ms with the event search for every molecule (the branch made it 6.9),
 * 2.83 ms so. */
/* Particle i's cell key in the rank's terms; a leaver counted in its selection tile (tiles
 * non-NULL: exchange.h, DSMC_XTILE). */
static __device__ __forceinline__ void put_key(uint32_t *cell, size_t i, uint32_t c,
                                               dsmc_cellmap cm, uint32_t ncells, uint32_t *tiles)
{
    uint32_t k = dsmc_key_of(cm, c, ncells);
    cell[i] = k;
    if (tiles && dsmc_key_leaves(k, ncells))
        atomicAdd(&tiles[i / DSMC_XTILE], 1u);
}

template <int THREE>
static __global__ void __launch_bounds__(DSMC_BLOCK)
    k_move_straight(dsmc_params p, size_t n, size_t n_old, dsmc_particles a, uint32_t *cell,
                    uint32_t *rest, unsigned long long *nrest, dsmc_box fb, dsmc_cellmap cm,
                    uint32_t ncells, uint32_t *tiles)
{
    const unsigned lane = threadIdx.x & 31;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    /* whole warps go round the loop together, as the ballot needs */
    for (size_t base = (size_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < n;
         base += stride) {
        const size_t i = base + lane;
        bool listed = i < n;
        if (i < n_old) {
            double px = a.x[i], py = a.y[i], pz = THREE ? a.z[i] : 0.0;
            double qx = px + a.vx[i] * p.dt, qy = py + a.vy[i] * p.dt;
            double qz = THREE ? pz + a.vz[i] * p.dt : 0.0;
            bool inside = qx >= p.lo[0] && qx <= p.hi[0] && qy >= p.lo[1] && qy <= p.hi[1] &&
                          (!THREE || (qz >= p.lo[2] && qz <= p.hi[2]));
            bool far = (px > qx ? px : qx) < fb.lo[0] || (px < qx ? px : qx) > fb.hi[0] ||
                       (py > qy ? py : qy) < fb.lo[1] || (py < qy ? py : qy) > fb.hi[1] ||
                       (THREE && ((pz > qz ? pz : qz) < fb.lo[2] || (pz < qz ? pz : qz) > fb.hi[2]));
            if (inside && far) {
                a.x[i] = qx;
                a.y[i] = qy;
                if (THREE)
                    a.z[i] = qz;
                put_key(cell, i, THREE ? dsmc_cell_of3(&p, qx, qy, qz) : dsmc_cell_of(&p, qx, qy),
                        cm, ncells, tiles);
                listed = false;
            }
        }
        const unsigned m = __ballot_sync(0xffffffffu, listed);
        if (m) {
            unsigned long long first = 0;
            if (lane == 0)
                first = atomicAdd(nrest, (unsigned long long)__popc(m));
            first = __shfl_sync(0xffffffffu, first, 0);
            if (listed)
                rest[first + __popc(m & ((1u << lane) - 1))] = (uint32_t)i;
        }
    }
}

/* The molecules that k_move_straight listed, through the event search. */
template <int THREE, int VIB>
static __global__ void k_move_rest(dsmc_params p, size_t n_old, dsmc_particles a, uint32_t *cell,
                                   const uint32_t *rest, const unsigned long long *nrest,
                                   dsmc_cellmap cm, uint32_t ncells, uint32_t *tiles)
{
    if (!VIB)
        a.vib = NULL;
    const size_t count = *nrest;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < count;
         k += (size_t)gridDim.x * blockDim.x) {
        const size_t i = rest[k];
        put_key(cell, i, dsmc_move_slot(&p, THREE, a, i, i >= n_old), cm, ncells, tiles);
    }
}

/* The axisymmetric move, which writes each particle's extra copies under radial weighting and
 * adds their sum to *extra. */
template <int VIB>
static __global__ void k_move_axi(dsmc_params p, size_t n, size_t n_old, dsmc_particles a,
                                  uint32_t *cell, uint32_t *copies, unsigned long long *extra,
                                  dsmc_cellmap cm, uint32_t ncells, uint32_t *tiles)
{
    if (!VIB)
        a.vib = NULL;
    unsigned long long sum = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t k;
        put_key(cell, i, dsmc_move_slot_axi(&p, a, i, i >= n_old, &k), cm, ncells, tiles);
        if (p.radial)
            copies[i] = k;
        sum += k;
    }
    if (p.radial) { /* every lane of the warp reaches here */
        sum = warp_sum(sum);
        if ((threadIdx.x & 31) == 0 && sum)
            atomicAdd(extra, sum);
    }
}

static __global__ void k_clone(size_t n, const uint32_t *incl, dsmc_particles a, uint32_t *cell)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t first = i ? incl[i - 1] : 0;
        for (size_t j = n + first; j < n + incl[i]; j++)
            dsmc_copy_particle(a, cell, i, j);
    }
}

static __global__ void k_locate(dsmc_params p, size_t n, dsmc_particles a, uint32_t *cell)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        cell[i] = p.dims == 3 ? dsmc_cell_of3(&p, a.x[i], a.y[i], a.z[i])
                              : dsmc_cell_of(&p, a.x[i], a.y[i]);
}

static __global__ void k_gather_f64(const uint32_t *perm, size_t n, const double *src,
                                    double *dst)
{
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (size_t)gridDim.x * blockDim.x)
        dst[j] = src[perm[j]];
}

static __global__ void k_gather_u32(const uint32_t *perm, size_t n, const uint32_t *src,
                                    uint32_t *dst)
{
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (size_t)gridDim.x * blockDim.x)
        dst[j] = src[perm[j]];
}

static __global__ void k_gather_u8(const uint32_t *perm, size_t n, const uint8_t *src,
                                   uint8_t *dst)
{
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (size_t)gridDim.x * blockDim.x)
        dst[j] = src[perm[j]];
}

/* Two blocks of 256 per SM: at 136 registers (the radial weight factor added 8) there was room
 * for one. Held to 128 (48 bytes of spills), the 10^8 box's collisions take 4.2 instead of
 * 5.5 ms, the seed cases' 2.5% more (H100, A/B in one run, 2026-11-25).
 * One thread per cell; cells of at least crowded_min molecules are only listed (in crowded,
 * *ncrowded of them) for k_collide_crowded. */
template <int THREE, int VIB, int CHEM>
static __global__ void __launch_bounds__(DSMC_BLOCK, 2)
    k_collide(dsmc_params p, dsmc_cellmap cm, size_t nlocal, const uint32_t *starts,
              const uint32_t *counts, dsmc_particles a, uint32_t *last, float *sgmax,
              unsigned long long *counters, uint32_t crowded_min, uint32_t *crowded,
              unsigned long long *ncrowded, dsmc_chem chem)
{
    if (!VIB)
        a.vib = NULL;
    const dsmc_chem *ch = CHEM ? &chem : NULL;
    unsigned long long coll = 0, cand = 0, sep = 0;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < nlocal;
         c += (size_t)gridDim.x * blockDim.x) {
        uint32_t n = counts[c];
        if (n >= crowded_min) {
            crowded[atomicAdd(ncrowded, 1ull)] = (uint32_t)c;
            continue;
        }
        uint32_t m = 0;
        double sc = 0;
        coll += dsmc_collide_cell(&p, dsmc_cell_global(cm, (uint32_t)c), starts[c], n, a.x, a.y,
                                  THREE ? a.z : NULL, a.vx, a.vy, a.vz, a.erot, a.vib, a.sp, last,
                                  sgmax + c, &m, &sc, NULL, ch);
        cand += m;
        sep += dsmc_sep_fixed(sc);
    }
    /* Every thread of the warp reaches here (the loop above has no early exit). */
    coll = warp_sum(coll);
    cand = warp_sum(cand);
    sep = warp_sum(sep);
    if ((threadIdx.x & 31) == 0 && (coll || cand)) {
        atomicAdd(&counters[0], coll);
        atomicAdd(&counters[1], cand);
        atomicAdd(&counters[2], sep);
    }
}

/* The crowded cells that k_collide listed, a warp each: NTC with random or sub-cell partners,
 * whose candidates each have their own draws (dsmc_candidate_rng). One thread per cell tries a
 * full cell's candidates one after the other, each a long chain of dependent arithmetic, and
 * the step waited for the fullest cells. Here the lanes take the next 32 candidates at once: the
 * leading ones that share no molecule with an earlier one of them are tried together (the rest
 * wait for the next round), with the cell's (sigma g)max as their running maximum, so the
 * result is bit for bit that of dsmc_collide_cell on the same device: the same pairs, the same
 * acceptances and collisions, and the separations added in candidate order. */
#define DSMC_CROWD_BLOCK 128
template <int THREE, int VIB, int CHEM>
static __global__ void __launch_bounds__(DSMC_CROWD_BLOCK)
    k_collide_crowded(dsmc_params p, dsmc_cellmap cm, const uint32_t *starts,
                      const uint32_t *counts, dsmc_particles a, float *sgmax_cell,
                      unsigned long long *counters, const uint32_t *crowded,
                      const unsigned long long *ncrowded, dsmc_chem chem)
{
    if (!VIB)
        a.vib = NULL;
    const dsmc_chem *ch = CHEM ? &chem : NULL;
    const unsigned full = 0xffffffffu, lane = threadIdx.x & 31;
    const size_t nwarps = ((size_t)gridDim.x * blockDim.x) >> 5;
    const size_t total = *ncrowded;
    const double *z = THREE ? a.z : NULL;
    unsigned long long coll = 0, cand = 0, sepfix = 0;
    for (size_t h = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; h < total;
         h += nwarps) {
        const uint32_t lc = crowded[h], start = starts[lc], n = counts[lc];
        const uint32_t cell = dsmc_cell_global(cm, lc);
        double volume, weight, rate;
        if (!dsmc_cell_rates(&p, cell, n, &volume, &weight, &rate))
            continue;
        dsmc_rng r = dsmc_rng_make(p.seed, cell, p.step, DSMC_P_COLLIDE);
        double sgmax = sgmax_cell[lc], sep = 0;
        /* every lane sums the cell in the same order: the value of dsmc_collide_cell */
        const double tcell = dsmc_vib_tcell(&p, start, n, a.vx, a.vy, a.vz, a.sp, a.vib);
        const uint32_t m = dsmc_ntc_candidates(&p, rate, sgmax, &r);
        uint32_t ncoll = 0;
        for (uint32_t base = 0; base < m;) {
            const uint32_t k = base + lane;
            const bool live = k < m;
            uint32_t i = 0, j = 0;
            kedr_u32x4 w = {{0, 0, 0, 0}};
            dsmc_rng cr = dsmc_candidate_rng(&p, cell, k);
            if (live) {
                w = kedr_rng_draw(p.seed, cell, p.step, DSMC_PURPOSE(DSMC_P_PAIR, k));
                dsmc_pick_pair(&p, start, n, w, &cr, a.x, a.y, z, NULL, &i, &j);
            }
            bool clash = false; /* a molecule of an earlier lane's pair */
            for (unsigned l = 0; l < 31; l++) {
                uint32_t il = __shfl_sync(full, i, l), jl = __shfl_sync(full, j, l);
                clash |= l < lane && (il == i || il == j || jl == i || jl == j);
            }
            const unsigned held = __ballot_sync(full, clash || !live);
            const unsigned go = held ? __ffs(held) - 1 : 32; /* lane 0 always goes */
            dsmc_cand c;
            c.sg = 0;
            double u = 1;
            if (lane < go) {
                c = dsmc_cand_eval(&p, i, j, a.vx, a.vy, a.vz, a.sp);
                /* selected with the reaction cross-section where it is the larger (as
                 * dsmc_try_pair) */
                if (CHEM && p.rx.pair_reacts[c.pair] && dsmc_react_select(&p, &c, a.erot))
                    c.sg *= c.rsum;
                u = kedr_u01_f64(w.v[2], w.v[3]);
            }
            double run = c.sg > sgmax ? c.sg : sgmax; /* (sigma g)max as lane's candidate sees it */
            for (unsigned d = 1; d < 32; d <<= 1) {
                double o = __shfl_up_sync(full, run, d);
                if (lane >= d && o > run)
                    run = o;
            }
            const bool hit = lane < go && !(u * run >= c.sg);
            double s = 0;
            if (hit)
                dsmc_cand_collide(&p, &c, &cr, NULL, tcell, a.x, a.y, z, a.vx, a.vy, a.vz,
                                  a.erot, a.vib, NULL, &s, ch);
            const unsigned hits = __ballot_sync(full, hit);
            for (unsigned l = 0; l < go; l++) {
                double sl = __shfl_sync(full, s, l);
                if (hits >> l & 1)
                    sep += sl;
            }
            ncoll += __popc(hits);
            sgmax = __shfl_sync(full, run, go - 1);
            base += go;
            __syncwarp(); /* this round's velocities before the next round reads them */
        }
        if (lane == 0) {
            sgmax_cell[lc] = dsmc_float_up(sgmax);
            coll += ncoll;
            cand += m;
            if (ncoll)
                sepfix += dsmc_sep_fixed(
                    sep * dsmc_inv_mfp(&p, weight, volume, start, n, a.vx, a.vy, a.vz, a.sp));
        }
    }
    if (lane == 0 && (coll || cand)) {
        atomicAdd(&counters[0], coll);
        atomicAdd(&counters[1], cand);
        atomicAdd(&counters[2], sepfix);
    }
}

template <int VIB>
static __global__ void k_sample(dsmc_params p, size_t nlocal, const uint32_t *starts,
                                const uint32_t *counts, dsmc_particles a, double *acc)
{
    if (!VIB)
        a.vib = NULL;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < nlocal;
         c += (size_t)gridDim.x * blockDim.x)
        dsmc_sample_cell(&p, (uint32_t)c, nlocal, starts[c], counts[c], a.vx, a.vy, a.vz,
                         a.erot, a.vib, a.sp, acc);
}

extern "C" kedr_status dsmc_generate_cuda(kedr_ctx *ctx, const dsmc_params *p, int fill,
                                          const uint32_t *offsets, const uint32_t *gid,
                                          uint32_t ngroups, size_t base, size_t count,
                                          dsmc_particles a)
{
    if (count == 0)
        return KEDR_OK;
    if (p->dims == 3)
        k_generate<1><<<grid_for(ctx, count), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            *p, fill, offsets, gid, ngroups, base, count, a);
    else
        k_generate<0><<<grid_for(ctx, count), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            *p, fill, offsets, gid, ngroups, base, count, a);
    KEDR_CUDA_LAUNCHED("k_generate");
    return KEDR_OK;
}

extern "C" kedr_status dsmc_inflow_counts_cuda(kedr_ctx *ctx, const dsmc_params *p, uint32_t m,
                                               const uint32_t *gid, const double *expect,
                                               uint32_t *counts)
{
    k_inflow_counts<<<grid_for(ctx, (size_t)m + 1), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
        *p, m, gid, expect, counts);
    KEDR_CUDA_LAUNCHED("k_inflow_counts");
    return KEDR_OK;
}

extern "C" kedr_status dsmc_move_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t n, size_t n_old,
                                      dsmc_particles a, uint32_t *cell, uint32_t *copies,
                                      uint64_t *counters, dsmc_box far, dsmc_cellmap m,
                                      uint32_t ncells, uint32_t *tiles)
{
    if (n == 0)
        return KEDR_OK;
    unsigned long long *extra = (unsigned long long *)counters;
    if (p->axisym) {
        if (a.vib)
            k_move_axi<1><<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
                *p, n, n_old, a, cell, copies, extra, m, ncells, tiles);
        else
            k_move_axi<0><<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
                *p, n, n_old, a, cell, copies, extra, m, ncells, tiles);
        KEDR_CUDA_LAUNCHED("k_move_axi");
    } else {
        /* the list goes to copies (the sort permutation, free until the next indexing), its
         * length to counters[0] */
        KEDR_CUDA_TRY(cudaMemsetAsync(extra, 0, sizeof *extra, KEDR_STREAM(ctx)));
        if (p->dims == 3)
            k_move_straight<1><<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
                *p, n, n_old, a, cell, copies, extra, far, m, ncells, tiles);
        else
            k_move_straight<0><<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
                *p, n, n_old, a, cell, copies, extra, far, m, ncells, tiles);
        KEDR_CUDA_LAUNCHED("k_move_straight");
        DSMC_LAUNCH(k_move_rest, p->dims == 3, a.vib != NULL, grid_for(ctx, n), DSMC_BLOCK, *p,
                    n_old, a, cell, copies, extra, m, ncells, tiles);
        KEDR_CUDA_LAUNCHED("k_move_rest");
    }
    return KEDR_OK;
}

extern "C" kedr_status dsmc_clone_cuda(kedr_ctx *ctx, size_t n, const uint32_t *incl,
                                       dsmc_particles a, uint32_t *cell)
{
    if (n == 0)
        return KEDR_OK;
    k_clone<<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(n, incl, a, cell);
    KEDR_CUDA_LAUNCHED("k_clone");
    return KEDR_OK;
}

extern "C" kedr_status dsmc_locate_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t n,
                                        dsmc_particles a, uint32_t *cell)
{
    if (n == 0)
        return KEDR_OK;
    k_locate<<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(*p, n, a, cell);
    KEDR_CUDA_LAUNCHED("k_locate");
    return KEDR_OK;
}

extern "C" kedr_status dsmc_gather_cuda(kedr_ctx *ctx, const uint32_t *perm, size_t n,
                                        const void *src, void *dst, size_t elem)
{
    if (n == 0)
        return KEDR_OK;
    if (elem == 8)
        k_gather_f64<<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            perm, n, (const double *)src, (double *)dst);
    else if (elem == 4)
        k_gather_u32<<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            perm, n, (const uint32_t *)src, (uint32_t *)dst);
    else
        k_gather_u8<<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            perm, n, (const uint8_t *)src, (uint8_t *)dst);
    KEDR_CUDA_LAUNCHED("k_gather");
    return KEDR_OK;
}

extern "C" kedr_status dsmc_collide_cuda(kedr_ctx *ctx, const dsmc_params *p, dsmc_cellmap m,
                                         size_t nlocal, const uint32_t *starts,
                                         const uint32_t *counts, dsmc_particles a, uint32_t *last,
                                         float *sgmax, uint64_t *counters, uint32_t crowded_min,
                                         const dsmc_chem *ch)
{
    if (nlocal == 0)
        return KEDR_OK;
    unsigned long long *cnt = (unsigned long long *)counters;
    /* the crowded cells' list goes to last (the sort permutation: each listed cell holds at least
     * two of its slots), its length to counters[3]; nearest partners keep their last partner
     * there and have a serial dependence between candidates, MFS between their clocks */
    if (p->scheme != KEDR_DSMC_NTC || p->partner == KEDR_DSMC_PARTNER_NEAREST || crowded_min < 2)
        crowded_min = UINT32_MAX;
    dsmc_chem chem;
    memset(&chem, 0, sizeof chem);
    if (ch)
        chem = *ch;
    DSMC_LAUNCH_CHEM(k_collide, p->dims == 3, a.vib != NULL, ch != NULL, grid_for(ctx, nlocal),
                     DSMC_BLOCK, *p, m, nlocal, starts, counts, a, last, sgmax, cnt, crowded_min,
                     last, cnt + 3, chem);
    KEDR_CUDA_LAUNCHED("k_collide");
    if (crowded_min == UINT32_MAX)
        return KEDR_OK;
    unsigned blocks = (unsigned)(ctx->multiprocessors > 0 ? ctx->multiprocessors : 1) * 8;
    DSMC_LAUNCH_CHEM(k_collide_crowded, p->dims == 3, a.vib != NULL, ch != NULL, blocks,
                     DSMC_CROWD_BLOCK, *p, m, starts, counts, a, sgmax, cnt, last, cnt + 3, chem);
    KEDR_CUDA_LAUNCHED("k_collide_crowded");
    return KEDR_OK;
}

extern "C" kedr_status dsmc_sample_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t nlocal,
                                        const uint32_t *starts, const uint32_t *counts,
                                        dsmc_particles a, double *acc)
{
    if (nlocal == 0)
        return KEDR_OK;
    if (a.vib)
        k_sample<1><<<grid_for(ctx, nlocal), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            *p, nlocal, starts, counts, a, acc);
    else
        k_sample<0><<<grid_for(ctx, nlocal), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            *p, nlocal, starts, counts, a, acc);
    KEDR_CUDA_LAUNCHED("k_sample");
    return KEDR_OK;
}

static __global__ void k_keys_local(uint32_t *keys, size_t n, dsmc_cellmap m, uint32_t ncells)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        keys[i] = dsmc_key_of(m, keys[i], ncells);
}

extern "C" kedr_status dsmc_keys_local_cuda(kedr_ctx *ctx, uint32_t *keys, size_t n,
                                            dsmc_cellmap m, uint32_t ncells)
{
    if (n == 0)
        return KEDR_OK;
    k_keys_local<<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(keys, n, m, ncells);
    KEDR_CUDA_LAUNCHED("k_keys_local");
    return KEDR_OK;
}

/* The sums of the vibrational levels and the counts per species (dsmc_vib_sums_cuda): each
 * thread sums its particles, a warp adds its lanes', and lane 0 adds them to sums. */
static __global__ void k_vib_sums(size_t n, dsmc_particles a, unsigned long long *sums)
{
    unsigned long long level[DSMC_MAXS] = {0}, count[DSMC_MAXS] = {0};
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        int k = dsmc_species_of(a, i);
        for (int q = 0; q < DSMC_MAXS; q++) { /* registers, not local memory */
            level[q] += q == k ? a.vib[i] : 0;
            count[q] += q == k;
        }
    }
    for (int q = 0; q < DSMC_MAXS; q++) {
        unsigned long long l = warp_sum(level[q]), c = warp_sum(count[q]);
        if ((threadIdx.x & 31) == 0 && c) {
            atomicAdd(&sums[q], l);
            atomicAdd(&sums[DSMC_MAXS + q], c);
        }
    }
}

extern "C" kedr_status dsmc_vib_sums_cuda(kedr_ctx *ctx, size_t n, dsmc_particles a,
                                          uint64_t *sums)
{
    if (n == 0)
        return KEDR_OK;
    k_vib_sums<<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
        n, a, (unsigned long long *)sums);
    KEDR_CUDA_LAUNCHED("k_vib_sums");
    return KEDR_OK;
}
