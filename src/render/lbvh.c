/* render: building the LBVH of lbvh.h on the cpu (all threads), or handing it to the GPU. The
 * keys are sorted by kedr_sort_pairs, the same stable radix sort on both back ends, so that both
 * build the same tree. */
#include "kedr/prim.h"
#include "render/accel.h"

#include <stdlib.h>
#include <string.h>

kedr_status render_lbvh_treelet_min(uint32_t *out)
{
    const char *env = getenv("KEDR_LBVH_TREELET_MIN");
    *out = LBVH_TREELET_MIN;
    if (!env || !*env)
        return KEDR_OK;
    char *end = NULL;
    unsigned long v = strtoul(env, &end, 10);
    if (*end || env[0] == '-' || v > UINT32_MAX)
        return kedr_fail(KEDR_ERR_INVALID, "KEDR_LBVH_TREELET_MIN=%s: expected a whole number of "
                         "triangles, 0 (no treelets) to %u", env, UINT32_MAX);
    *out = (uint32_t)v;
    return KEDR_OK;
}

static kedr_status lbvh_cpu(kedr_accel *a, uint32_t treelet_min)
{
    size_t n = a->ntri, nslots = 2 * n - 1;
    lbvh_code_t *codes = malloc(n * sizeof *codes), *sorted = malloc(n * sizeof *sorted);
    uint32_t *ids = malloc(n * sizeof *ids);
    uint32_t *parent_leaf = malloc(n * sizeof *parent_leaf);
    uint32_t *parent_node = malloc(n * sizeof *parent_node);
    uint32_t *span = malloc(2 * n * sizeof *span);
    float *cost = malloc(nslots * sizeof *cost);
    uint32_t *height = malloc(nslots * sizeof *height);
    unsigned *flags = calloc(n, sizeof *flags);
    a->bvh = calloc(nslots, sizeof *a->bvh);
    a->refs = malloc(n * sizeof *a->refs);
    kedr_status s = KEDR_OK;
    kedr_ctx *cpu = NULL;
    if (!codes || !sorted || !ids || !parent_leaf || !parent_node || !span || !cost || !height || !flags ||
        !a->bvh || !a->refs)
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the LBVH of "
                      "%zu triangles", n);
    if (s == KEDR_OK)
        s = kedr_ctx_create(&cpu, KEDR_BACKEND_CPU, 0);
    if (s == KEDR_OK) {
        float lo[3], inv[3];
        lbvh_frame(a->lo, a->hi, lo, inv);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) {
            codes[i] = lbvh_code(a->tris, (uint32_t)i, a->pad, lo, inv);
            ids[i] = (uint32_t)i;
        }
        s = kedr_sort_pairs(cpu, LBVH_CODE_DTYPE, codes, sorted, ids, a->refs, sizeof *ids, n, 0,
                            LBVH_BITS);
    }
    if (s == KEDR_OK) {
        if (n == 1) {
            a->bvh[0].index = 0;
            a->bvh[0].count = 1;
            parent_leaf[0] = 0;
        }
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n - 1; i++)
            lbvh_internal(sorted, a->refs, (int64_t)n, (int64_t)i, a->bvh, parent_leaf,
                          parent_node, span);
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < n; k++)
            lbvh_climb(a->tris, a->pad, (uint32_t)k, a->refs[k], a->bvh, parent_leaf,
                       parent_node, span, cost, height, flags, treelet_min);
        a->nbvh = nslots;
        a->nrefs = n;
    }
    kedr_ctx_destroy(cpu);
    free(codes), free(sorted), free(ids), free(parent_leaf), free(parent_node), free(span);
    free(cost), free(height), free(flags);
    return s;
}

kedr_status render_lbvh_build(kedr_accel *a, kedr_ctx *ctx)
{
    if (!a->ntri) {
        a->bvh = calloc(1, sizeof *a->bvh);
        a->refs = malloc(sizeof *a->refs);
        a->nbvh = 1;
        return a->bvh && a->refs ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "out of host memory");
    }
    uint32_t treelet_min;
    kedr_status s = render_lbvh_treelet_min(&treelet_min);
    if (s != KEDR_OK)
        return s;
#ifdef KEDR_HAVE_CUDA
    if (ctx && kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA)
        s = render_lbvh_build_cuda(a, ctx, treelet_min);
    else
#endif
        s = lbvh_cpu(a, treelet_min);
    (void)ctx;
    if (s != KEDR_OK)
        return s;
    /* the depth, for the traversal stack's bound: keys of 63 bits of code and 32 of index make
     * at most 96 levels (RENDER_STACK is 128) */
    a->info.nodes = a->nbvh;
    a->info.depth = 0;
    return KEDR_OK;
}
