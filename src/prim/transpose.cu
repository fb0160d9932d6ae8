/* kedr_transpose on the GPU: the tiled transpose with a padded shared-memory tile (Boreskov et
 * al., ch. 3; Ruetsch & Fatica, ch. 3). A block of 32 x 8 threads reads a 32 x 32 tile of in
 * along its rows, so that loads are coalesced, and writes it to out along the rows of out, so
 * that stores are coalesced too; the tile's extra column puts the elements of a tile column in
 * different shared-memory banks. Blocks loop over the tiles, so any shape fits in one launch.
 * Thin matrices, where most of a tile would be empty, take a path of their own. */
#include "core/internal.h"
#include "prim/transpose_cuda.h"

#define TILE 32
#define TILE_ROWS 8 /* threadIdx.y steps; each thread moves TILE / TILE_ROWS elements each way */

template <typename T>
__global__ void __launch_bounds__(TILE * TILE_ROWS)
    prim_transpose_kernel(const T *__restrict__ in, T *__restrict__ out, size_t rows, size_t cols,
                          size_t tile_cols, size_t tiles)
{
    __shared__ T tile[TILE][TILE + 1];
    for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        size_t r0 = t / tile_cols * TILE, c0 = t % tile_cols * TILE;
        size_t c = c0 + threadIdx.x;
        if (c < cols) {
#pragma unroll
            for (int k = 0; k < TILE; k += TILE_ROWS) {
                int j = threadIdx.y + k;
                if (r0 + j < rows)
                    tile[j][threadIdx.x] = in[(r0 + j) * cols + c];
            }
        }
        __syncthreads();
        size_t r = r0 + threadIdx.x; /* the column of out this thread writes */
        if (r < rows) {
#pragma unroll
            for (int k = 0; k < TILE; k += TILE_ROWS) {
                int j = threadIdx.y + k;
                if (c0 + j < cols)
                    out[(c0 + j) * rows + r] = tile[threadIdx.x][j];
            }
        }
        __syncthreads(); /* the tile is refilled by the next iteration */
    }
}

/* A matrix with at most TRANSPOSE_THIN rows or columns (the short side), where most of a square
 * tile would be empty. A block takes THIN_SPAN indices along the long side: the short-side-many
 * rows of in that they cover are one contiguous run (when in is long x short) or short runs of
 * THIN_SPAN elements (when in is short x long), and the same holds for out the other way round;
 * the block reads its part of in with coalesced loads into a shared tile, and writes its part of
 * out with coalesced stores from it. The tile rows are padded by one element, which puts the
 * elements of a tile column in different banks. */
#define TRANSPOSE_THIN 16
#define THIN_SPAN 256

template <typename T>
__global__ void __launch_bounds__(THIN_SPAN)
    prim_transpose_thin_kernel(const T *__restrict__ in, T *__restrict__ out, size_t rows,
                               size_t cols)
{
    __shared__ T tile[TRANSPOSE_THIN][THIN_SPAN + 1];
    int long_rows = cols <= rows; /* in is long x short */
    uint32_t across = (uint32_t)(long_rows ? cols : rows);
    size_t len = long_rows ? rows : cols;
    for (size_t l0 = (size_t)blockIdx.x * THIN_SPAN; l0 < len; l0 += (size_t)gridDim.x * THIN_SPAN) {
        uint32_t count = (uint32_t)(len - l0 < THIN_SPAN ? len - l0 : THIN_SPAN);
        uint32_t t = threadIdx.x;
        if (long_rows) {
            const T *src = in + l0 * cols; /* rows l0 .. l0 + count of in, back to back */
#pragma unroll 4
            for (uint32_t idx = t; idx < count * across; idx += THIN_SPAN)
                tile[idx % across][idx / across] = src[idx];
            __syncthreads();
            if (t < count) {
#pragma unroll 4
                for (uint32_t k = 0; k < across; k++)
                    out[k * rows + l0 + t] = tile[k][t];
            }
        } else {
            if (t < count) {
#pragma unroll 4
                for (uint32_t k = 0; k < across; k++)
                    tile[k][t] = in[k * cols + l0 + t];
            }
            __syncthreads();
            T *dst = out + l0 * rows; /* rows l0 .. l0 + count of out, back to back */
#pragma unroll 4
            for (uint32_t idx = t; idx < count * across; idx += THIN_SPAN)
                dst[idx] = tile[idx % across][idx / across];
        }
        __syncthreads(); /* the tile is refilled by the next iteration */
    }
}

/* Blocks in flight at most; beyond, blocks take several tiles each. */
#define TRANSPOSE_MAX_GRID ((size_t)1 << 20)

template <typename T>
static kedr_status transpose_launch(kedr_ctx *ctx, const T *in, T *out, size_t rows, size_t cols)
{
    if (rows <= TRANSPOSE_THIN || cols <= TRANSPOSE_THIN) {
        size_t len = rows > cols ? rows : cols, grid = (len + THIN_SPAN - 1) / THIN_SPAN;
        size_t full = (size_t)ctx->multiprocessors * 16;
        prim_transpose_thin_kernel<T><<<(unsigned)(grid < full ? grid : full), THIN_SPAN, 0,
                                        KEDR_STREAM(ctx)>>>(in, out, rows, cols);
        KEDR_CUDA_LAUNCHED("prim_transpose_thin_kernel");
        return KEDR_OK;
    }
    size_t tile_cols = (cols + TILE - 1) / TILE;
    size_t tiles = (rows + TILE - 1) / TILE * tile_cols;
    size_t grid = tiles < TRANSPOSE_MAX_GRID ? tiles : TRANSPOSE_MAX_GRID;
    dim3 block(TILE, TILE_ROWS);
    prim_transpose_kernel<T><<<(unsigned)grid, block, 0, KEDR_STREAM(ctx)>>>(in, out, rows, cols,
                                                                            tile_cols, tiles);
    KEDR_CUDA_LAUNCHED("prim_transpose_kernel");
    return KEDR_OK;
}

extern "C" kedr_status prim_transpose_cuda(kedr_ctx *ctx, size_t elem_size, const void *in,
                                           void *out, size_t rows, size_t cols)
{
    if (elem_size == 4)
        return transpose_launch(ctx, (const uint32_t *)in, (uint32_t *)out, rows, cols);
    return transpose_launch(ctx, (const uint64_t *)in, (uint64_t *)out, rows, cols);
}
