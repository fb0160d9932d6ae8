/* The cayley checkpoint readers on any file: the first byte picks a fixed small group and mode
 * (dense bitmaps; sparse layers of ranks, of packed permutations with a visited set, of cube2
 * positions, and of base images in two and three words), the rest is the checkpoint, resumed
 * to the end of the search (cube2: read only, its search would take seconds). With the first
 * byte's top bit set the harness first makes the checksum match the mutated contents, so that
 * the checks behind the checksum see crafted files. Seeds are real checkpoints written by small
 * searches at seed time, stopped at a level and ended. */
#include "fuzz.h"

#include "cayley/sparse_checkpoint.h"
#include "cayley_checksum.h"
#include "kedr/cayley.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
    const char *spec;
    kedr_cayley_mode mode;
    int search;    /* resume and run to the end (else read only) */
    int all_base;  /* perm:N, N > 16: every point in the base (wider states) */
    int stops[3];  /* seeds: stopped after these levels (0: run to the end) */
} target;

static const target targets[] = {
    {"pancake:6", KEDR_CAYLEY_DENSE, 1, 0, {1, 4, 0}},
    {"abelian:5,7", KEDR_CAYLEY_DENSE, 1, 0, {2, 6, 0}},
    {"pancake:6", KEDR_CAYLEY_SPARSE, 1, 0, {1, 4, 0}},
    {"perm:5:(1 2 3 4 5),(1 2)", KEDR_CAYLEY_AUTO, 1, 0, {1, 5, 0}},
    {"cube2", KEDR_CAYLEY_AUTO, 0, 0, {1, 3, 5}},
    {"perm:18:(1 2 3),(17 18),(4 5 6 7)", KEDR_CAYLEY_AUTO, 1, 1, {1, 3, 0}},
    {"perm:26:(1 2 3),(25 26),(13 14)", KEDR_CAYLEY_AUTO, 1, 1, {1, 2, 0}},
};
#define NTARGETS ((int)(sizeof targets / sizeof targets[0]))

static kedr_ctx *ctx;
static kedr_cayley_group *groups[NTARGETS];

static int setup(void)
{
    if (ctx)
        return 1;
#ifdef _OPENMP
    omp_set_num_threads(1); /* tiny searches: threads would only wait on each other */
#endif
    if (kedr_ctx_create(&ctx, KEDR_BACKEND_CPU, 0) != KEDR_OK)
        return 0;
    for (int t = 0; t < NTARGETS; t++) {
        if (kedr_cayley_parse(targets[t].spec, 0, &groups[t]) != KEDR_OK)
            return 0;
        if (targets[t].all_base) {
            uint8_t base[KEDR_CAYLEY_MAX_POINTS];
            for (int i = 0; i < groups[t]->n; i++)
                base[i] = (uint8_t)i;
            if (cayley_perm_set_base(groups[t], base, groups[t]->n) != KEDR_OK)
                return 0;
        }
    }
    return 1;
}

static kedr_status run(int t, const char *resume, const char *write, int max_levels)
{
    kedr_cayley_options opt = {.memory_limit = (size_t)64 << 20, .mode = targets[t].mode,
                               .resume_path = resume, .checkpoint_path = write,
                               .max_levels = max_levels};
    kedr_cayley_result r;
    kedr_status s = kedr_cayley_growth(ctx, groups[t], &opt, &r);
    if (s == KEDR_OK || s == KEDR_ERR_INTERRUPTED)
        kedr_cayley_result_free(&r);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || !setup())
        return 0;
    int t = (data[0] & 0x7f) % NTARGETS;
    const char *path;
    if (data[0] & 0x80) {
        unsigned char *b = malloc(size);
        if (!b)
            return 0;
        memcpy(b, data + 1, size - 1);
        if (targets[t].mode == KEDR_CAYLEY_DENSE)
            ck_fix_dense(b, size - 1);
        else
            ck_fix_sparse(b, size - 1);
        path = kedr_fuzz_write("checkpoint", b, size - 1);
        free(b);
    } else {
        path = kedr_fuzz_write("checkpoint", data + 1, size - 1);
    }
    if (!path)
        return 0;
    if (targets[t].search) {
        run(t, path, NULL, 0);
    } else {
        cayley_sck ck;
        memset(&ck, 0, sizeof ck);
        ck.closed = groups[t]->inverse_closed;
        ck.words = groups[t]->state_words > 1 ? groups[t]->state_words : 1;
        if (cayley_sck_read(groups[t], path, &ck) == KEDR_OK)
            cayley_sck_free(&ck);
    }
    return 0;
}

void kedr_fuzz_seeds(void (*add)(const void *data, size_t size))
{
    if (!setup() || !kedr_fuzz_dir())
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s/seed", kedr_fuzz_dir());
    for (int t = 0; t < NTARGETS; t++)
        for (int k = 0; k < 3; k++) {
            if (run(t, NULL, path, targets[t].stops[k]) != KEDR_OK)
                continue;
            FILE *f = fopen(path, "rb");
            unsigned char *buf = malloc((1u << 20) + 1);
            size_t n = f && buf ? fread(buf + 1, 1, 1u << 20, f) : 0;
            if (f)
                fclose(f);
            if (buf && n > 0 && n < (1u << 20)) {
                buf[0] = (unsigned char)t;
                add(buf, n + 1);
                buf[0] |= 0x80; /* the same with the checksum made to match */
                add(buf, n + 1);
            }
            free(buf);
        }
}
