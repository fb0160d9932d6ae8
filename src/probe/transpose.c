/* The matrix copy and transpose variants of Ruetsch & Fatica (sec. 3.4): argument checks, the cpu
 * versions and the dispatch. On the cpu a "tile" is a 32 x 32 local array that a thread fills
 * along rows of in and empties along rows of out, the access pattern of the GPU kernels; the
 * naive transpose writes with a stride of a whole row, which the cpu's caches also punish. */
#include "core/internal.h"
#include "probe/probe_cuda.h"

#include <stdint.h>
#include <string.h>

#define T 32

const char *kedr_probe_transpose_name(kedr_probe_transpose_kind k)
{
    static const char *names[] = {"copy", "copy-shared", "naive", "coalesced", "no-bank-conflicts",
                                  "diagonal"};
    return (unsigned)k < KEDR_PROBE_T_COUNT ? names[k] : "(invalid)";
}

/* Tile (tr, tc) of a grid of tiles: the blocks' order of the diagonal variant, in which block b
 * of a launch takes the tiles of one diagonal after another (Ruetsch & Fatica, eq. of sec. 3.4.1,
 * for any grid shape). */
static void diagonal_tile(size_t b, size_t grid_r, size_t grid_c, size_t *tr, size_t *tc)
{
    size_t r = b % grid_r;
    *tr = r;
    *tc = (b / grid_r + r) % grid_c;
}

static void tile_pass(kedr_probe_transpose_kind k, const float *in, float *out, size_t rows,
                      size_t cols, size_t tr, size_t tc)
{
    float tile[T][T];
    size_t r0 = tr * T, c0 = tc * T;
    size_t nr = rows - r0 < T ? rows - r0 : T, nc = cols - c0 < T ? cols - c0 : T;
    for (size_t i = 0; i < nr; i++)
        for (size_t j = 0; j < nc; j++)
            tile[i][j] = in[(r0 + i) * cols + c0 + j];
    if (k == KEDR_PROBE_T_COPY_SHARED) {
        for (size_t i = 0; i < nr; i++)
            for (size_t j = 0; j < nc; j++)
                out[(r0 + i) * cols + c0 + j] = tile[i][j];
        return;
    }
    for (size_t j = 0; j < nc; j++) /* row c0 + j of out */
        for (size_t i = 0; i < nr; i++)
            out[(c0 + j) * rows + r0 + i] = tile[i][j];
}

kedr_status kedr_probe_transpose(kedr_ctx *ctx, kedr_probe_transpose_kind k, const float *in,
                                 float *out, size_t rows, size_t cols)
{
    const char *fn = "kedr_probe_transpose";
    if (!ctx)
        return kedr_fail(KEDR_ERR_INVALID, "%s: ctx is NULL", fn);
    if ((unsigned)k >= KEDR_PROBE_T_COUNT)
        return kedr_fail(KEDR_ERR_INVALID, "%s: variant %d: expected 0 to %d", fn, (int)k,
                         KEDR_PROBE_T_COUNT - 1);
    if (rows && cols > SIZE_MAX / sizeof(float) / rows)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu x %zu overflows", fn, rows, cols);
    size_t n = rows * cols;
    KEDR_TRY(kedr_check_ptr(in, n, fn, "in"));
    KEDR_TRY(kedr_check_ptr(out, n, fn, "out"));
    if (n == 0)
        return KEDR_OK;
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)out, bytes = n * sizeof(float);
    if (a < b + bytes && b < a + bytes)
        return kedr_fail(KEDR_ERR_INVALID, "%s: out overlaps in", fn);
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx))
        return probe_transpose_cuda(ctx, k, in, out, rows, cols);
#endif
    long long lr = (long long)rows;
    if (k == KEDR_PROBE_T_COPY) {
#pragma omp parallel for schedule(static)
        for (long long r = 0; r < lr; r++)
            memcpy(out + (size_t)r * cols, in + (size_t)r * cols, cols * sizeof(float));
        return KEDR_OK;
    }
    if (k == KEDR_PROBE_T_NAIVE) {
#pragma omp parallel for schedule(static)
        for (long long r = 0; r < lr; r++)
            for (size_t c = 0; c < cols; c++)
                out[c * rows + (size_t)r] = in[(size_t)r * cols + c];
        return KEDR_OK;
    }
    /* The tiled variants: the cpu has no shared-memory banks, so coalesced and no-bank-conflicts
     * are the same loop here; diagonal takes the tiles in the GPU kernel's order. */
    size_t grid_r = (rows + T - 1) / T, grid_c = (cols + T - 1) / T;
    long long tiles = (long long)(grid_r * grid_c);
#pragma omp parallel for schedule(static)
    for (long long t = 0; t < tiles; t++) {
        size_t tr = (size_t)t / grid_c, tc = (size_t)t % grid_c;
        if (k == KEDR_PROBE_T_DIAGONAL)
            diagonal_tile((size_t)t, grid_r, grid_c, &tr, &tc);
        tile_pass(k, in, out, rows, cols, tr, tc);
    }
    return KEDR_OK;
}
