/* kedr_cayley_parse on any text: the first byte says whether inverses are added and whether
 * the rest is a spec or a generator file (perm:N:@FILE, N from the second byte). A group that
 * parses is ranked and unranked at its ends, and searched when it is small. */
#include "fuzz.h"

#include "kedr/cayley.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SEARCHED_ORDER 5000 /* groups up to this order are searched (milliseconds) */

static kedr_ctx *ctx;

/* Ranks and unranks of the first and last elements, and a search of a small group. */
static void exercise(const kedr_cayley_group *g)
{
    uint32_t x[4 * KEDR_CAYLEY_MAX_POINTS];
    uint64_t r = 0;
    if (kedr_cayley_element_size(g) > (int)(sizeof x / sizeof x[0]))
        abort(); /* the element does not fit what the header promises */
    uint64_t ends[2] = {0, g->order - 1};
    for (int i = 0; i < 2; i++)
        if (kedr_cayley_unrank(g, ends[i], x) == KEDR_OK &&
            (kedr_cayley_rank(g, x, &r) != KEDR_OK || r != ends[i]))
            abort(); /* rank(unrank(r)) must be r */
    if (g->order > SEARCHED_ORDER)
        return;
    if (!ctx) {
#ifdef _OPENMP
        omp_set_num_threads(1); /* tiny searches: threads would only wait on each other */
#endif
        if (kedr_ctx_create(&ctx, KEDR_BACKEND_CPU, 0) != KEDR_OK)
            return;
    }
    kedr_cayley_options opt = {.memory_limit = (size_t)64 << 20};
    kedr_cayley_result res;
    if (kedr_cayley_growth(ctx, g, &opt, &res) == KEDR_OK) {
        if (res.complete && res.reached != g->order)
            abort(); /* the generators generate the group kedr_cayley_parse says */
        kedr_cayley_result_free(&res);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int inverses = data[0] & 1, file = data[0] & 2;
    char *spec = malloc(size + 4200);
    if (!spec)
        return 0;
    if (file) {
        const char *path = kedr_fuzz_write("gens.txt", data + 2, size - 2);
        if (!path) {
            free(spec);
            return 0;
        }
        snprintf(spec, size + 4200, "perm:%d:@%s", 1 + data[1] % 33, path);
    } else {
        memcpy(spec, data + 1, size - 1);
        spec[size - 1] = 0;
    }
    kedr_cayley_group *g = NULL;
    if (kedr_cayley_parse(spec, inverses, &g) == KEDR_OK) {
        exercise(g);
        kedr_cayley_group_free(g);
    }
    free(spec);
    return 0;
}

void kedr_fuzz_seeds(void (*add)(const void *data, size_t size))
{
    static const char *const specs[] = {
        "pancake:6", "pancake:16", "burnt-pancake:3", "burnt-pancake:16", "bubble:5",
        "star:6", "transpositions:4", "lrx:5", "abelian:4,4", "abelian:3,5,7",
        "abelian:4294967295", "abelian:2,2,2,2,2,2,2,2", "burnside:3", "burnside:10", "cube2",
        "cube2:htm", "cube2:qtm", "perm:5:(1 2 3 4 5),(1 2)", "perm:6:[2,1,3,4,5,6],[3,2,1,4,5,6]",
        "perm:4:(1 2)(3 4), (1 3)", "perm:1:()", "perm:8:(1 2 3 4 5 6 7 8),[2,1,3,4,5,6,7,8]",
        "perm:24:(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24),(1 2)",
        "perm:32:(1 32),(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 "
        "28 29 30 31 32)",
        "perm:21:(1 2),(1 2 3),(4 5),(4 5 6),(7 8),(7 8 9),(10 11),(10 11 12),(13 14),(13 14 15)"};
    char buf[512];
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
        for (int inv = 0; inv < 2; inv++) {
            buf[0] = (char)inv;
            size_t n = strlen(specs[i]);
            memcpy(buf + 1, specs[i], n);
            add(buf, n + 1);
        }
    static const char *const files[] = {"(1 2 3 4 5)\n# a comment\n(1 2)\n",
                                        "[2,1,3,4,5]\n\n(1 3)\n(1 4)(2 3), (1 5)(2 4)\n",
                                        "(1 2)\r\n(1 2 3)\r\n"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        buf[0] = 2;
        buf[1] = 4; /* N = 5 */
        size_t n = strlen(files[i]);
        memcpy(buf + 2, files[i], n);
        add(buf, n + 2);
    }
}
