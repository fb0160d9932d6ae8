/* kedr_transpose: every element of out checked against in, for every element type, on shapes
 * with ragged tile edges, thin shapes (1 x N, N x 1 at the awkward sizes), empty shapes and one
 * large matrix; outputs poisoned; argument errors. */
#include "test_util.h"

static const kedr_dtype types[] = {KEDR_F32, KEDR_F64, KEDR_U32, KEDR_I32, KEDR_U64};
#define NTYPES (sizeof types / sizeof types[0])

static long long checked;

static void check_shape(kedr_ctx *ctx, kedr_dtype t, size_t rows, size_t cols, uint64_t seed)
{
    size_t es = kedr_dtype_size(t), n = rows * cols;
    unsigned char *h_in = tu_host_alloc(n * es);
    uint64_t rs = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = tu_next(&rs);
        memcpy(h_in + i * es, &bits, es); /* raw bits: NaN patterns must travel unchanged too */
    }
    void *d_in = tu_upload(ctx, h_in, n * es);
    void *d_out = tu_poisoned(ctx, n * es);
    TU_OK(kedr_transpose(ctx, t, d_in, d_out, rows, cols));
    unsigned char *got = tu_download(ctx, d_out, n * es);
    /* Compared in 64 x 64 blocks, so that the strided side stays in the cache. */
    size_t bad = 0, first_r = 0, first_c = 0;
    for (size_t r0 = 0; r0 < rows; r0 += 64)
        for (size_t c0 = 0; c0 < cols; c0 += 64)
            for (size_t c = c0; c < cols && c < c0 + 64; c++)
                for (size_t r = r0; r < rows && r < r0 + 64; r++) {
                    size_t i = r * cols + c, o = c * rows + r;
                    int same = es == 4 ? ((uint32_t *)got)[o] == ((uint32_t *)h_in)[i]
                                       : ((uint64_t *)got)[o] == ((uint64_t *)h_in)[i];
                    if (!same && bad++ == 0) {
                        first_r = r;
                        first_c = c;
                    }
                }
    TU_CHECK(bad == 0, "%s %s %zu x %zu: %zu elements wrong, first in[%zu][%zu]",
             kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t), rows, cols, bad,
             first_r, first_c);
    /* The input is left unchanged (checked where that is cheap). */
    if (n <= ((size_t)1 << 20)) {
        unsigned char *again = tu_download(ctx, d_in, n * es);
        TU_CHECK(n == 0 || memcmp(again, h_in, n * es) == 0, "%s %zu x %zu: input modified",
                 kedr_dtype_name(t), rows, cols);
        free(again);
    }
    checked++;
    free(got);
    free(h_in);
    kedr_free(ctx, d_in);
    kedr_free(ctx, d_out);
}

static void check_errors(kedr_ctx *ctx)
{
    float *d = tu_poisoned(ctx, 64 * sizeof *d);
    struct {
        kedr_dtype t;
        const void *in;
        void *out;
        size_t rows, cols;
        kedr_status want;
        const char *what;
    } cases[] = {
        {KEDR_F32, NULL, d + 32, 4, 8, KEDR_ERR_INVALID, "in NULL"},
        {KEDR_F32, d, NULL, 4, 8, KEDR_ERR_INVALID, "out NULL"},
        {KEDR_F32, d, d, 4, 8, KEDR_ERR_INVALID, "in place"},
        {KEDR_F32, d, d + 16, 4, 8, KEDR_ERR_INVALID, "overlap"},
        {KEDR_F64, d, d + 32, 4, 8, KEDR_ERR_INVALID, "overlap (8-byte elements)"},
        {KEDR_F32, d, d + 32, SIZE_MAX / 2, 3, KEDR_ERR_INVALID, "size overflow"},
        {(kedr_dtype)42, d, d + 32, 4, 8, KEDR_ERR_UNSUPPORTED, "bad dtype"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kedr_fail(KEDR_OK, "%s", "");
        kedr_status s = kedr_transpose(ctx, cases[k].t, cases[k].in, cases[k].out, cases[k].rows,
                                       cases[k].cols);
        TU_CHECK(s == cases[k].want && kedr_last_error()[0], "%s: got %s (%s)", cases[k].what,
                 kedr_status_name(s), kedr_last_error());
    }
    TU_CHECK(kedr_transpose(NULL, KEDR_F32, d, d + 32, 4, 8) == KEDR_ERR_INVALID,
             "ctx NULL accepted");
    /* Empty shapes need no pointers. */
    TU_OK(kedr_transpose(ctx, KEDR_F32, NULL, NULL, 0, 5));
    TU_OK(kedr_transpose(ctx, KEDR_U64, NULL, NULL, 7, 0));
    /* Adjacent, non-overlapping buffers are fine. */
    TU_OK(kedr_transpose(ctx, KEDR_F32, d, d + 32, 4, 8));
    kedr_free(ctx, d);
}

int main(void)
{
    static const size_t shapes[][2] = {{1, 1},     {1, 1000},   {1000, 1},   {31, 33},
                                       {32, 32},   {33, 31},    {2, 3},      {64, 65},
                                       {1000, 1025}, {4097, 4095}, {3, 70000}, {70000, 3},
                                       {16, 5001},   {17, 5001},  {5001, 16}, {5001, 17}};
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int bi = 0; bi < nb; bi++) {
        kedr_ctx *ctx = tu_ctx(list[bi]);
        uint64_t seed = 7;
        checked = 0;
        for (size_t ti = 0; ti < NTYPES; ti++) {
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
                check_shape(ctx, types[ti], shapes[k][0], shapes[k][1], seed++);
            /* Thin matrices at the awkward sizes, both ways round. */
            for (size_t si = 0; si < TU_NSIZES; si++) {
                check_shape(ctx, types[ti], 1, tu_sizes[si], seed++);
                check_shape(ctx, types[ti], tu_sizes[si], 1, seed++);
            }
            check_shape(ctx, types[ti], 0, 0, seed++);
        }
        check_shape(ctx, KEDR_F32, tu_scale(8192, 1024), tu_scale(4096, 1000), seed++);
        check_shape(ctx, KEDR_F64, tu_scale(4099, 1027), tu_scale(4093, 1021), seed++);
        printf("  %lld transposes checked\n", checked);
        check_errors(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_transpose");
}
