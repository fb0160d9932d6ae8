/* render: building the LBVH of lbvh.h on the cpu (all threads), or handing it to the GPU. The
 * keys are sorted by kedr_sort_keys, the same stable radix sort on both back ends, so that both
 * build the same tree. */
#include "kedr/prim.h"
#include "render/accel.h"

#include <stdlib.h>
#include <string.h>

/* The scene box the Morton codes quantise (a->lo, a->hi), as lo and 1 / extent. */
static void key_frame(const kedr_accel *a, float lo[3], float inv_ext[3])
{
    for (int k = 0; k < 3; k++) {
        float e = a->hi[k] - a->lo[k];
        lo[k] = a->lo[k];
        inv_ext[k] = e > 0 ? 1 / e : 0;
    }
}

static kedr_status lbvh_cpu(kedr_accel *a)
{
    size_t n = a->ntri, nslots = 2 * n - 1;
    uint64_t *keys = malloc(n * sizeof *keys), *sorted = malloc(n * sizeof *sorted);
    uint32_t *parent_leaf = malloc(n * sizeof *parent_leaf);
    uint32_t *parent_node = malloc(n * sizeof *parent_node);
    unsigned *flags = calloc(n, sizeof *flags);
    a->bvh = calloc(nslots, sizeof *a->bvh);
    a->refs = malloc(n * sizeof *a->refs);
    kedr_status s = KEDR_OK;
    kedr_ctx *cpu = NULL;
    if (!keys || !sorted || !parent_leaf || !parent_node || !flags || !a->bvh || !a->refs)
        s = kedr_fail(KEDR_ERR_NOMEM, "kedr_accel_build: out of host memory for the LBVH of "
                      "%zu triangles", n);
    if (s == KEDR_OK)
        s = kedr_ctx_create(&cpu, KEDR_BACKEND_CPU, 0);
    if (s == KEDR_OK) {
        float lo[3], inv[3];
        key_frame(a, lo, inv);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            keys[i] = lbvh_key(a->tris, (uint32_t)i, a->pad, lo, inv);
        s = kedr_sort_keys(cpu, KEDR_U64, keys, sorted, n, 0, 0);
    }
    if (s == KEDR_OK) {
        parent_node[0] = 0;
        if (n == 1) {
            a->bvh[0].index = 0;
            a->bvh[0].count = 1;
            parent_leaf[0] = 0;
        }
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n - 1; i++)
            lbvh_internal(sorted, (int64_t)n, (int64_t)i, a->bvh, parent_leaf, parent_node);
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < n; k++) {
            a->refs[k] = (uint32_t)sorted[k];
            lbvh_climb(a->tris, a->pad, (uint32_t)k, (uint32_t)sorted[k], a->bvh, parent_leaf,
                       parent_node, flags);
        }
        a->nbvh = nslots;
        a->nrefs = n;
    }
    kedr_ctx_destroy(cpu);
    free(keys), free(sorted), free(parent_leaf), free(parent_node), free(flags);
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
    kedr_status s;
#ifdef KEDR_HAVE_CUDA
    if (ctx && kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA)
        s = render_lbvh_build_cuda(a, ctx);
    else
#endif
        s = lbvh_cpu(a);
    (void)ctx;
    if (s != KEDR_OK)
        return s;
    /* the depth, for the traversal stack's bound: Morton codes of 30 bits plus 32 bits of index
     * make at most 62 levels */
    a->info.nodes = a->nbvh;
    a->info.depth = 0;
    return KEDR_OK;
}
