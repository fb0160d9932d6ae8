/* Sorting key-value pairs and timing the load and the save (Boreskov et al., "Parallel computing
 * on GPU", 2012, sec. 8.1.8): 128M pairs of int keys and values, sorted by kedr_sort_pairs on the
 * cpu and, with a GPU, on cuda, where the pairs must first be copied in (load) and back (save).
 * The book's Thrust figures for 128M pairs: Core 2 Quad Q6600 35.17 s; Tesla C2050 load 0.66 s,
 * sort 0.41 s, save 0.30 s. Each result is checked: keys in order, and every pair still together
 * (a value is the index its key was drawn at, so the key can be drawn again from it). */
#include "kedr/kedr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: example_sort_by_key [--n N]\n"
    "  sorts N (default 134217728 = 128M) int keys with int values on the cpu and, with a GPU, on\n"
    "  cuda, printing load, sort and save times; exits 1 unless every result is sorted and whole\n";

/* The key of pair i: a hash of i, so that it can be recomputed from the value. */
static int32_t key_of(uint32_t i)
{
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    return (int32_t)(uint32_t)((z ^ (z >> 27)) >> 32);
}

#define TRY(call)                                                                         \
    do {                                                                                  \
        if ((call) != KEDR_OK) {                                                          \
            fprintf(stderr, "%s: %s\n", #call, kedr_last_error());                        \
            goto done;                                                                    \
        }                                                                                 \
    } while (0)

static int run(kedr_backend b, size_t n, const int32_t *keys, const uint32_t *vals,
               int32_t *keys_out, uint32_t *vals_out)
{
    kedr_ctx *ctx = NULL;
    if (kedr_ctx_create(&ctx, b, 0) != KEDR_OK) {
        fprintf(stderr, "%s: %s\n", kedr_backend_name(b), kedr_last_error());
        return 1;
    }
    int gpu = b == KEDR_BACKEND_CUDA, bad = 1;
    size_t bytes = n * 4;
    void *k_in = NULL, *v_in = NULL, *k_out = NULL, *v_out = NULL;
    double t0, t1, t2, t3;
    TRY(kedr_alloc(ctx, &k_in, bytes));
    TRY(kedr_alloc(ctx, &v_in, bytes));
    TRY(kedr_alloc(ctx, &k_out, bytes));
    TRY(kedr_alloc(ctx, &v_out, bytes));
    t0 = kedr_wall_seconds();
    TRY(kedr_upload(ctx, k_in, keys, bytes));
    TRY(kedr_upload(ctx, v_in, vals, bytes));
    TRY(kedr_ctx_sync(ctx));
    t1 = kedr_wall_seconds();
    TRY(kedr_sort_pairs(ctx, KEDR_I32, k_in, k_out, v_in, v_out, 4, n, 0, 0));
    TRY(kedr_ctx_sync(ctx));
    t2 = kedr_wall_seconds();
    TRY(kedr_download(ctx, keys_out, k_out, bytes));
    TRY(kedr_download(ctx, vals_out, v_out, bytes));
    t3 = kedr_wall_seconds();
    /* Sorted, each pair whole, and each value once (a permutation: its sum and count). */
    size_t disorder = 0, broken = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        disorder += i && keys_out[i] < keys_out[i - 1];
        broken += vals_out[i] >= n || key_of(vals_out[i]) != keys_out[i];
        sum += vals_out[i];
    }
    bad = disorder || broken || sum != (uint64_t)n * (n - 1) / 2;
    /* On the cpu the pairs are already in its memory: the copies are plain memcpy. */
    printf("%-5s load %.3f s, sort %.3f s, save %.3f s%s\n", kedr_backend_name(b),
           gpu ? t1 - t0 : 0.0, t2 - t1, gpu ? t3 - t2 : 0.0, bad ? "  WRONG" : "");
    if (bad)
        fprintf(stderr, "%s: %zu keys out of order, %zu pairs broken\n", kedr_backend_name(b),
                disorder, broken);
done:
    kedr_free(ctx, k_in);
    kedr_free(ctx, v_in);
    kedr_free(ctx, k_out);
    kedr_free(ctx, v_out);
    kedr_ctx_destroy(ctx);
    return bad;
}

int main(int argc, char **argv)
{
    size_t n = (size_t)128 << 20;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (i + 1 < argc && strcmp(argv[i], "--n") == 0) {
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (*end || argv[i][0] == '-' || v < 1 || v > (1ull << 31)) {
                fprintf(stderr, "--n %s: expected an integer from 1 to 2^31\n", argv[i]);
                return 2;
            }
            n = (size_t)v;
        } else {
            fputs(usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    int32_t *keys = malloc(n * 4), *keys_out = malloc(n * 4);
    uint32_t *vals = malloc(n * 4), *vals_out = malloc(n * 4);
    if (!keys || !vals || !keys_out || !vals_out) {
        fprintf(stderr, "out of memory for %zu pairs\n", n);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        keys[i] = key_of((uint32_t)i);
        vals[i] = (uint32_t)i;
    }
    printf("sort by key: %zu pairs of int keys and values\n", n);
    int bad = run(KEDR_BACKEND_CPU, n, keys, vals, keys_out, vals_out);
    if (kedr_backend_available(KEDR_BACKEND_CUDA))
        bad |= run(KEDR_BACKEND_CUDA, n, keys, vals, keys_out, vals_out);
    else
        printf("cuda: no GPU here\n");
    free(keys);
    free(vals);
    free(keys_out);
    free(vals_out);
    return bad;
}
