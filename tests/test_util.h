/* Shared by the test programs: back-end selection, awkward sizes, seeded inputs, poisoned
 * outputs and failure counting. A test program runs its checks on every back end selected by
 * KEDR_BACKEND (cpu, cuda, or all = every available one, the default) and ends with a line
 * "N passed, N failed"; its exit code is non-zero when anything failed. */
#ifndef KEDR_TEST_UTIL_H
#define KEDR_TEST_UTIL_H

#include "kedr/kedr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tu_passed, tu_failed, tu_reported;

/* Records one check; prints the first few failures with where they happened. */
#define TU_CHECK(cond, ...)                                                        \
    do {                                                                           \
        if (cond) {                                                                \
            tu_passed++;                                                           \
        } else {                                                                   \
            tu_failed++;                                                           \
            if (tu_reported++ < 20) {                                              \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);               \
                fprintf(stderr, __VA_ARGS__);                                      \
                fputc('\n', stderr);                                               \
            }                                                                      \
        }                                                                          \
    } while (0)

/* A kedr call that must succeed. */
#define TU_OK(call)                                                                \
    do {                                                                           \
        kedr_status tu_s_ = (call);                                                \
        TU_CHECK(tu_s_ == KEDR_OK, "%s -> %s: %s", #call, kedr_status_name(tu_s_), \
                 kedr_last_error());                                               \
    } while (0)

static inline int tu_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, tu_passed, tu_failed);
    return tu_failed ? 1 : 0;
}

/* Removes a test's temporary directory (made with mkdtemp) and everything in it. */
static inline void tu_remove_dir(const char *dir)
{
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* KEDR_TEST_QUICK=1 (any value but 0) asks for small inputs, for runs under checkers that
 * make every access dozens of times slower (compute-sanitizer, AddressSanitizer): the awkward
 * sizes up to 65537 and a large size of a few dozen tiles, which still spans many GPU blocks
 * and cpu chunks. A test takes it for its own sizes through tu_scale. */
static inline int tu_quick(void)
{
    const char *env = getenv("KEDR_TEST_QUICK");
    return env && *env && strcmp(env, "0") != 0;
}

/* full when the test runs at its normal size, quick under KEDR_TEST_QUICK. */
static inline size_t tu_scale(size_t full, size_t quick) { return tu_quick() ? quick : full; }

/* The sizes every primitive is checked at; the quick run stops before 2^20 - 1. */
static const size_t tu_sizes[] = {0, 1, 2, 31, 32, 33, 1023, 1025, 4095, 65537,
                                  (1u << 20) - 1, (1u << 20) + 1};
#define TU_NSIZES (tu_quick() ? (size_t)10 : sizeof tu_sizes / sizeof tu_sizes[0])
/* One large size, beyond what one GPU block or one cpu chunk handles. */
#define TU_LARGE tu_scale(((size_t)1 << 24) + 3, ((size_t)1 << 18) + 3)

/* Back ends to test: KEDR_BACKEND=cpu|cuda|all (default all available). Returns how many were
 * written to list. Asking for cuda where none is available fails the test, loudly. */
static inline int tu_backends(kedr_backend list[2])
{
    const char *env = getenv("KEDR_BACKEND");
    int n = 0;
    if (!env || !*env || strcmp(env, "all") == 0) {
        list[n++] = KEDR_BACKEND_CPU;
        if (kedr_backend_available(KEDR_BACKEND_CUDA))
            list[n++] = KEDR_BACKEND_CUDA;
    } else if (strcmp(env, "cpu") == 0) {
        list[n++] = KEDR_BACKEND_CPU;
    } else if (strcmp(env, "cuda") == 0) {
        list[n++] = KEDR_BACKEND_CUDA;
    } else {
        fprintf(stderr, "KEDR_BACKEND=%s: expected cpu, cuda or all\n", env);
        exit(2);
    }
    return n;
}

static inline kedr_ctx *tu_ctx(kedr_backend b)
{
    kedr_ctx *ctx = NULL;
    if (kedr_ctx_create(&ctx, b, 0) != KEDR_OK) {
        fprintf(stderr, "cannot create a %s context: %s\n", kedr_backend_name(b), kedr_last_error());
        exit(1);
    }
    printf("back end: %s\n", kedr_backend_name(b));
    return ctx;
}

/* splitmix64: seeded test inputs, independent of the library's own generator. */
static inline uint64_t tu_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline double tu_uniform(uint64_t *state) { return (tu_next(state) >> 11) * 0x1p-53; }

/* Stores element i of a host array of type t: integers from u (truncated), floats from f. */
static inline void tu_store(kedr_dtype t, void *buf, size_t i, uint64_t u, double f)
{
    switch (t) {
    case KEDR_U32: ((uint32_t *)buf)[i] = (uint32_t)u; break;
    case KEDR_U64: ((uint64_t *)buf)[i] = u; break;
    case KEDR_I32: ((int32_t *)buf)[i] = (int32_t)(uint32_t)u; break;
    case KEDR_F32: ((float *)buf)[i] = (float)f; break;
    case KEDR_F64: ((double *)buf)[i] = f; break;
    }
}

static inline void *tu_host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* A buffer in the context's memory holding a copy of host data. */
static inline void *tu_upload(kedr_ctx *ctx, const void *host, size_t bytes)
{
    void *d = NULL;
    if (kedr_alloc(ctx, &d, bytes) != KEDR_OK || kedr_upload(ctx, d, host, bytes) != KEDR_OK) {
        fprintf(stderr, "tu_upload: %s\n", kedr_last_error());
        exit(1);
    }
    return d;
}

#define TU_POISON_BYTE 0xA5
/* A buffer in the context's memory filled with a poison pattern, so unwritten elements show. */
static inline void *tu_poisoned(kedr_ctx *ctx, size_t bytes)
{
    void *d = NULL;
    if (kedr_alloc(ctx, &d, bytes) != KEDR_OK || kedr_memset(ctx, d, TU_POISON_BYTE, bytes) != KEDR_OK) {
        fprintf(stderr, "tu_poisoned: %s\n", kedr_last_error());
        exit(1);
    }
    return d;
}

/* A host copy of a buffer in the context's memory (free() it). */
static inline void *tu_download(kedr_ctx *ctx, const void *d, size_t bytes)
{
    void *h = tu_host_alloc(bytes);
    if (kedr_download(ctx, h, d, bytes) != KEDR_OK) {
        fprintf(stderr, "tu_download: %s\n", kedr_last_error());
        exit(1);
    }
    return h;
}

#endif
