/* The cuda back end of the DSMC simulator: one thread per particle (generation, move, gather)
 * or per cell (collisions, sampling), each running the same inline physics as the cpu back end
 * (dsmc_kernels.h). Cells own contiguous ranges of the sorted particle arrays, so no two threads
 * write the same particle and no atomics touch particle data. */
#include "sim.h"

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
 * kernels compile to what they were before the 3D mode, without its registers and stack. */
template <int THREE>
static __global__ void k_generate(dsmc_params p, int fill, const uint32_t *offsets,
                                  uint32_t ngroups, size_t base, size_t count, dsmc_particles a)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (size_t)gridDim.x * blockDim.x) {
        uint32_t g = dsmc_group_of(offsets, ngroups, (uint32_t)e);
        dsmc_generate_slot(&p, THREE, fill, g, e, a, base + e);
    }
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
template <int THREE>
static __global__ void __launch_bounds__(DSMC_BLOCK)
    k_move_straight(dsmc_params p, size_t n, size_t n_old, dsmc_particles a, uint32_t *cell,
                    uint32_t *rest, unsigned long long *nrest, dsmc_box fb)
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
                cell[i] = THREE ? dsmc_cell_of3(&p, qx, qy, qz) : dsmc_cell_of(&p, qx, qy);
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
template <int THREE>
static __global__ void k_move_rest(dsmc_params p, size_t n_old, dsmc_particles a, uint32_t *cell,
                                   const uint32_t *rest, const unsigned long long *nrest)
{
    const size_t count = *nrest;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < count;
         k += (size_t)gridDim.x * blockDim.x) {
        const size_t i = rest[k];
        cell[i] = dsmc_move_slot(&p, THREE, a, i, i >= n_old);
    }
}

/* The axisymmetric move, which writes each particle's extra copies under radial weighting and
 * adds their sum to *extra. */
static __global__ void k_move_axi(dsmc_params p, size_t n, size_t n_old, dsmc_particles a,
                                  uint32_t *cell, uint32_t *copies, unsigned long long *extra)
{
    unsigned long long sum = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t k;
        cell[i] = dsmc_move_slot_axi(&p, a, i, i >= n_old, &k);
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
 * 5.5 ms, the seed cases' 2.5% more (H100, A/B in one run, 2026-11-25). */
template <int THREE>
static __global__ void __launch_bounds__(DSMC_BLOCK, 2)
    k_collide(dsmc_params p, size_t ncells, const uint32_t *starts, const uint32_t *counts,
              dsmc_particles a, uint32_t *last, float *sgmax, unsigned long long *counters)
{
    unsigned long long coll = 0, cand = 0, sep = 0;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < ncells;
         c += (size_t)gridDim.x * blockDim.x) {
        uint32_t m = 0;
        double sc = 0;
        coll += dsmc_collide_cell(&p, (uint32_t)c, starts[c], counts[c], a.x, a.y,
                                  THREE ? a.z : NULL, a.vx, a.vy, a.vz, a.erot, a.sp, last, sgmax,
                                  &m, &sc);
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

static __global__ void k_sample(dsmc_params p, size_t ncells, const uint32_t *starts,
                                const uint32_t *counts, dsmc_particles a, double *acc)
{
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < ncells;
         c += (size_t)gridDim.x * blockDim.x)
        dsmc_sample_cell(&p, (uint32_t)c, ncells, starts[c], counts[c], a.vx, a.vy, a.vz, a.erot,
                         a.sp, acc);
}

extern "C" kedr_status dsmc_generate_cuda(kedr_ctx *ctx, const dsmc_params *p, int fill,
                                          const uint32_t *offsets, uint32_t ngroups, size_t base,
                                          size_t count, dsmc_particles a)
{
    if (count == 0)
        return KEDR_OK;
    if (p->dims == 3)
        k_generate<1><<<grid_for(ctx, count), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            *p, fill, offsets, ngroups, base, count, a);
    else
        k_generate<0><<<grid_for(ctx, count), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            *p, fill, offsets, ngroups, base, count, a);
    KEDR_CUDA_LAUNCHED("k_generate");
    return KEDR_OK;
}

extern "C" kedr_status dsmc_move_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t n, size_t n_old,
                                      dsmc_particles a, uint32_t *cell, uint32_t *copies,
                                      uint64_t *counters, dsmc_box far)
{
    if (n == 0)
        return KEDR_OK;
    unsigned long long *extra = (unsigned long long *)counters;
    if (p->axisym) {
        k_move_axi<<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(*p, n, n_old, a, cell,
                                                                         copies, extra);
        KEDR_CUDA_LAUNCHED("k_move_axi");
    } else {
        /* the list goes to copies (the sort permutation, free until the next indexing), its
         * length to counters[0] */
        KEDR_CUDA_TRY(cudaMemsetAsync(extra, 0, sizeof *extra, KEDR_STREAM(ctx)));
        if (p->dims == 3)
            k_move_straight<1><<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
                *p, n, n_old, a, cell, copies, extra, far);
        else
            k_move_straight<0><<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
                *p, n, n_old, a, cell, copies, extra, far);
        KEDR_CUDA_LAUNCHED("k_move_straight");
        if (p->dims == 3)
            k_move_rest<1><<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
                *p, n_old, a, cell, copies, extra);
        else
            k_move_rest<0><<<grid_for(ctx, n), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
                *p, n_old, a, cell, copies, extra);
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

extern "C" kedr_status dsmc_collide_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t ncells,
                                         const uint32_t *starts, const uint32_t *counts,
                                         dsmc_particles a, uint32_t *last, float *sgmax,
                                         uint64_t *counters)
{
    if (ncells == 0)
        return KEDR_OK;
    if (p->dims == 3)
        k_collide<1><<<grid_for(ctx, ncells), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            *p, ncells, starts, counts, a, last, sgmax, (unsigned long long *)counters);
    else
        k_collide<0><<<grid_for(ctx, ncells), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(
            *p, ncells, starts, counts, a, last, sgmax, (unsigned long long *)counters);
    KEDR_CUDA_LAUNCHED("k_collide");
    return KEDR_OK;
}

extern "C" kedr_status dsmc_sample_cuda(kedr_ctx *ctx, const dsmc_params *p, size_t ncells,
                                        const uint32_t *starts, const uint32_t *counts,
                                        dsmc_particles a, double *acc)
{
    if (ncells == 0)
        return KEDR_OK;
    k_sample<<<grid_for(ctx, ncells), DSMC_BLOCK, 0, KEDR_STREAM(ctx)>>>(*p, ncells, starts, counts,
                                                                         a, acc);
    KEDR_CUDA_LAUNCHED("k_sample");
    return KEDR_OK;
}
