/* The cuda side of the exchange stage (exchange.c): the particles that leave this rank's
 * box of cells found, in order, without copying the particle arrays to the host; their records
 * packed for the host; and the holes they leave filled from the end of the arrays. */
#include "exchange.h"

#include "core/internal.h"
#include "kedr/prim.h"

#define XB 256   /* threads a block */
#define XTILE DSMC_XTILE /* particles a block of the selection */

/* Keys in the rank's terms (rank_terms: dsmc_key_of) mark the leavers themselves; a key of the
 * grid's cells leaves when its cell is another rank's (a walk of the owners' tree). */
static __device__ int leaves(uint32_t key, uint32_t ncells, int rank_terms, dsmc_owners o, int me)
{
    return rank_terms ? dsmc_key_leaves(key, ncells)
                      : key < ncells && dsmc_owner_of(o, key) != me;
}

/* The leaving particles of each tile of XTILE. */
static __global__ void k_count(const uint32_t *keys, size_t n, uint32_t ncells, int rank_terms,
                               dsmc_owners o, int me, uint32_t *tile_count)
{
    size_t t0 = (size_t)blockIdx.x * XTILE;
    int c = 0;
    for (int k = 0; k < XTILE; k += XB) {
        size_t i = t0 + k + threadIdx.x;
        int f = i < n && leaves(keys[i], ncells, rank_terms, o, me);
        c += __syncthreads_count(f);
    }
    if (threadIdx.x == 0)
        tile_count[blockIdx.x] = (uint32_t)c;
}

/* Their indices, in order: tile_off[t] (the exclusive scan of the counts) is where tile t
 * writes. Within a tile, each chunk of XB in turn: a warp's leavers by ballot, the warps' in
 * order through shared memory. */
static __global__ void k_write(const uint32_t *keys, size_t n, uint32_t ncells, int rank_terms,
                               dsmc_owners o, int me, const uint32_t *tile_off, uint32_t *idx)
{
    __shared__ uint32_t warp_total[XB / 32];
    __shared__ uint32_t base;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    size_t t0 = (size_t)blockIdx.x * XTILE;
    if (threadIdx.x == 0)
        base = tile_off[blockIdx.x];
    for (int k = 0; k < XTILE; k += XB) {
        size_t i = t0 + k + threadIdx.x;
        int f = i < n && leaves(keys[i], ncells, rank_terms, o, me);
        unsigned ballot = __ballot_sync(0xffffffffu, f);
        if (lane == 0)
            warp_total[warp] = (uint32_t)__popc(ballot);
        __syncthreads(); /* the totals, and base, written */
        uint32_t before = base, all = 0;
        for (int w = 0; w < XB / 32; w++) {
            before += w < warp ? warp_total[w] : 0;
            all += warp_total[w];
        }
        if (f)
            idx[before + (uint32_t)__popc(ballot & ((1u << lane) - 1u))] = (uint32_t)i;
        __syncthreads(); /* every thread has read the totals and base */
        if (threadIdx.x == 0)
            base += all; /* read after the next chunk's first barrier */
    }
}

/* Record j holds particle idx[j]'s fields side by side, in table order. */
static __global__ void k_pack(dsmc_xfields f, const uint32_t *idx, size_t m, unsigned char *out)
{
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < m;
         j += (size_t)gridDim.x * blockDim.x) {
        size_t i = idx[j];
        unsigned char *r = out + j * f.rec;
        for (int k = 0; k < f.nf; k++) {
            const unsigned char *src = f.ptr[k] + i * f.elem[k];
            for (int b = 0; b < f.elem[k]; b++)
                r[b] = src[b];
            r += f.elem[k];
        }
    }
}

/* Particle pair[2 j + 1] (and its key) moves into slot pair[2 j]. */
static __global__ void k_move(dsmc_xfields f, uint32_t *keys, const uint32_t *pair, size_t m)
{
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < m;
         j += (size_t)gridDim.x * blockDim.x) {
        size_t dst = pair[2 * j], src = pair[2 * j + 1];
        for (int k = 0; k < f.nf; k++) {
            unsigned char *p = f.ptr[k];
            for (int b = 0; b < f.elem[k]; b++)
                p[dst * f.elem[k] + b] = p[src * f.elem[k] + b];
        }
        keys[dst] = keys[src];
    }
}

/* Record j into slot at + j of each field (the inverse of k_pack). */
static __global__ void k_unpack(dsmc_xfields f, const unsigned char *in, size_t m, size_t at)
{
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < m;
         j += (size_t)gridDim.x * blockDim.x) {
        const unsigned char *r = in + j * f.rec;
        for (int k = 0; k < f.nf; k++) {
            unsigned char *dst = f.ptr[k] + (at + j) * f.elem[k];
            for (int b = 0; b < f.elem[k]; b++)
                dst[b] = r[b];
            r += f.elem[k];
        }
    }
}

static unsigned blocks_for(size_t m)
{
    size_t b = (m + XB - 1) / XB;
    return (unsigned)(b < 4096 ? (b ? b : 1) : 4096);
}

size_t dsmc_select_scratch_words(size_t n) { return (n + XTILE - 1) / XTILE + 1; }

kedr_status dsmc_count_leavers_cuda(kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                    uint32_t ncells, int rank_terms, dsmc_owners o, int me,
                                    uint32_t *tiles)
{
    size_t ntiles = (n + XTILE - 1) / XTILE;
    if (ntiles > 0x7fffffffu)
        return kedr_fail(KEDR_ERR_INVALID, "dsmc exchange: %zu particles", n);
    if (ntiles == 0)
        return KEDR_OK;
    k_count<<<(unsigned)ntiles, XB, 0, KEDR_STREAM(ctx)>>>(keys, n, ncells, rank_terms, o, me,
                                                           tiles);
    KEDR_CUDA_LAUNCHED("dsmc exchange count");
    return KEDR_OK;
}

kedr_status dsmc_select_leavers_cuda(kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                     uint32_t ncells, int rank_terms, dsmc_owners o, int me,
                                     uint32_t *tiles, int counted, uint32_t *idx, size_t *nleave)
{
    *nleave = 0;
    if (n == 0)
        return KEDR_OK;
    size_t ntiles = (n + XTILE - 1) / XTILE;
    if (ntiles > 0x7fffffffu)
        return kedr_fail(KEDR_ERR_INVALID, "dsmc exchange: %zu particles", n);
    cudaStream_t st = KEDR_STREAM(ctx);
    if (!counted)
        KEDR_TRY(dsmc_count_leavers_cuda(ctx, keys, n, ncells, rank_terms, o, me, tiles));
    uint32_t total = 0;
    KEDR_TRY(kedr_scan_exclusive(ctx, KEDR_U32, tiles, tiles, ntiles, &total));
    if (total) {
        k_write<<<(unsigned)ntiles, XB, 0, st>>>(keys, n, ncells, rank_terms, o, me, tiles, idx);
        KEDR_CUDA_LAUNCHED("dsmc exchange select");
    }
    *nleave = total;
    return KEDR_OK;
}

kedr_status dsmc_pack_cuda(kedr_ctx *ctx, const dsmc_xfields *f, const uint32_t *idx, size_t m,
                           void *out)
{
    if (m == 0)
        return KEDR_OK;
    k_pack<<<blocks_for(m), XB, 0, KEDR_STREAM(ctx)>>>(*f, idx, m, (unsigned char *)out);
    KEDR_CUDA_LAUNCHED("dsmc exchange pack");
    return KEDR_OK;
}

kedr_status dsmc_unpack_cuda(kedr_ctx *ctx, const dsmc_xfields *f, const void *in, size_t m,
                             size_t at)
{
    if (m == 0)
        return KEDR_OK;
    k_unpack<<<blocks_for(m), XB, 0, KEDR_STREAM(ctx)>>>(*f, (const unsigned char *)in, m, at);
    KEDR_CUDA_LAUNCHED("dsmc exchange unpack");
    return KEDR_OK;
}

kedr_status dsmc_move_slots_cuda(kedr_ctx *ctx, const dsmc_xfields *f, uint32_t *keys,
                                 const uint32_t *pairs, size_t m)
{
    if (m == 0)
        return KEDR_OK;
    k_move<<<blocks_for(m), XB, 0, KEDR_STREAM(ctx)>>>(*f, keys, pairs, m);
    KEDR_CUDA_LAUNCHED("dsmc exchange fill");
    return KEDR_OK;
}

/* dest[j]: the rank that owns leaver idx[j]'s cell (the key less base), by the owners' tree. */
static __global__ void k_dest(const uint32_t *keys, const uint32_t *idx, size_t m, uint32_t base,
                              dsmc_owners o, uint32_t *dest)
{
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < m;
         j += (size_t)gridDim.x * blockDim.x)
        dest[j] = (uint32_t)dsmc_owner_of(o, keys[idx[j]] - base);
}

/* start[r]: the first j with d[j] >= r (d ascending), r = 0 .. nranks. */
static __global__ void k_starts(const uint32_t *d, size_t m, int nranks, uint32_t *start)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r > nranks)
        return;
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d[mid] < (uint32_t)r)
            lo = mid + 1;
        else
            hi = mid;
    }
    start[r] = (uint32_t)lo;
}

kedr_status dsmc_group_leavers_cuda(kedr_ctx *ctx, const uint32_t *keys, const uint32_t *idx,
                                    size_t m, uint32_t base, dsmc_owners o, uint32_t *dest,
                                    uint32_t *dest_sorted, uint32_t *by_dest, uint32_t *start)
{
    cudaStream_t st = KEDR_STREAM(ctx);
    int nranks = o.nranks;
    if (m) {
        k_dest<<<blocks_for(m), XB, 0, st>>>(keys, idx, m, base, o, dest);
        KEDR_CUDA_LAUNCHED("dsmc exchange destinations");
        int bits = 1;
        while (bits < 31 && ((uint32_t)1 << bits) < (uint32_t)nranks)
            bits++;
        KEDR_TRY(kedr_sort_pairs(ctx, KEDR_U32, dest, dest_sorted, idx, by_dest, 4, m, 0, bits));
    }
    k_starts<<<(unsigned)((nranks + 1 + XB - 1) / XB), XB, 0, st>>>(dest_sorted, m, nranks, start);
    KEDR_CUDA_LAUNCHED("dsmc exchange group starts");
    return KEDR_OK;
}
