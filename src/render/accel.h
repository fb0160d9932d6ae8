/* render: the accelerator record shared by the builders (bvh.c, grid.c, kdtree.c), the cpu
 * traversals and the cuda back end, and the single-ray queries the shading code calls. */
#ifndef RENDER_ACCEL_H
#define RENDER_ACCEL_H

#include <pthread.h>
#include "core/internal.h"
#include "kedr/render.h"
#include "render/bvh_trace.h"
#include "render/lbvh.h"
#include "render/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kd-tree node (8 bytes): inner nodes keep the split position and, in `info`, the axis (low 2
 * bits) and the right child's index (the left child follows); a leaf has axis bits 3, its
 * count in the upper bits and its first reference in `first`. */
typedef struct {
    union {
        float split;
        uint32_t first;
    } a;
    uint32_t info;
} render_kd_node;


/* 4-wide BVH node (128 bytes) for the cpu: the boxes of four children by axis, so that one
 * SSE slab test covers all four. Child i is a leaf of refs[child[i] .. child[i] + count[i]) when
 * count[i] > 0, an inner node child[i] of the 4-wide tree when count[i] = 0, and absent when
 * count[i] = BVH4_EMPTY. */
#define BVH4_EMPTY UINT32_MAX
typedef struct {
    float lo[3][4], hi[3][4];
    uint32_t child[4], count[4];
} render_bvh4_node;

/* Four triangles for one SSE Moller-Trumbore test: v0, e1 = v1 - v0, e2 = v2 - v0 by
 * coordinate, and their indices (UINT32_MAX, with zero edges, in a leaf's unused lanes). */
typedef struct {
    float v0[3][4], e1[3][4], e2[3][4];
    uint32_t id[4];
} render_tri4;

struct kedr_accel {
    kedr_accel_kind kind;
    kedr_tri_test test;
    size_t ntri;
    float *tris; /* 9 floats per triangle */
    float *woop; /* 12 floats per triangle (KEDR_TRI_WOOP), else NULL */
    float lo[3], hi[3]; /* the union of the triangles' boxes (accel_tri_box) */
    float pad;
    kedr_accel_info info;
    /* bvh */
    render_bvh_node *bvh;
    size_t nbvh;
    /* the cpu's 4-wide copy of the BVH or LBVH (bvh4.c), traced instead of it on the cpu */
    render_bvh4_node *bvh4;
    size_t nbvh4;
    /* the cpu's leaves' triangles: for Woop's test its 12 floats in leaf order (refs[i]'s at
     * i); for Moller-Trumbore blocks of four (render_tri4), a leaf's child[] naming its first
     * block */
    float *leaf_tris;
    size_t nleaf_tris; /* floats */
    /* kd-tree */
    render_kd_node *kd;
    size_t nkd;
    /* grid: cells x + res[0] * (y + res[1] * z); cell c holds refs[start[c] .. start[c+1]) */
    int res[3];
    float cell[3], inv_cell[3];
    uint32_t *start;
    /* the references of the BVH leaves, kd-tree leaves or grid cells */
    uint32_t *refs;
    size_t nrefs;
    /* an LBVH built on a GPU keeps its tree there: the host's copy (bvh, refs) is made by the
     * first cpu query (render_accel_host), under host_lock */
    int host_pending;
    pthread_mutex_t host_lock;
    /* the BVH's copy on a GPU (render.cu), made by the first query on a cuda context */
    void *device;
};

/* The per-triangle test the accelerator was built with. */
static inline int accel_tri(const kedr_accel *a, uint32_t p, rvec o, rvec d, float tmin,
                            float tmax, float *t, float *u, float *v)
{
    if (a->woop)
        return tri_woop(a->woop + (size_t)p * 12, o, d, tmin, tmax, t, u, v);
    return tri_moller(a->tris + (size_t)p * 9, o, d, tmin, tmax, t, u, v);
}

/* Tests refs[first .. first+count) against the ray, narrowing *h (h->t is the current tmax);
 * with any = 1 returns 1 at the first hit. */
static inline int accel_leaf(const kedr_accel *a, const uint32_t *refs, size_t count, rvec o,
                             rvec d, float tmin, kedr_hit *h, int any)
{
    int found = 0;
    for (size_t i = 0; i < count; i++) {
        float t, u, v;
        uint32_t p = refs[i];
        if (accel_tri(a, p, o, d, tmin, h->t, &t, &u, &v)) {
            h->t = t;
            h->u = u;
            h->v = v;
            h->prim = (int32_t)p;
            found = 1;
            if (any)
                return 1;
        }
    }
    return found;
}

/* Single-ray queries: the nearest hit (h->prim = -1 and h->t = tmax for a miss); with any = 1,
 * stops at the first hit found (for shadow rays) and returns whether there was one. */
int render_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any);
int render_bvh_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any);
int render_grid_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any);
int render_kd_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any);
/* The kd-tree's branch-free traversal (KEDR_ACCEL_KDTREE_BF): render_kd_trace's leaves in its
 * order, the next node chosen by selects. */
int render_kd_trace_bf(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any);
/* The 4-wide copy of a->bvh (bvh4.c), and its traversal (the nearest hit as bvh_trace_hd
 * defines it, ties to the lowest triangle index). */
kedr_status render_bvh4_build(kedr_accel *a);
/* The host's copy of the tree of an LBVH built on a GPU, made once (a no-op otherwise): every cpu
 * query calls it first. */
kedr_status render_accel_host(const kedr_accel *a);
int render_bvh4_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any);
/* Checks a BVH's or an LBVH's binary tree (bvh_check.c; the host's copy, made first for a tree
 * built on a GPU): every node reached once from the root, every triangle in one leaf, every box
 * finite and containing its children's (a leaf's: its triangles' padded boxes), no path deeper
 * than RENDER_STACK. KEDR_ERR_INVALID names the first fault. */
kedr_status render_bvh_check(const kedr_accel *a);
/* The BVH traversal of bvh_trace.h as the GPU runs it (scalar slab tests), for the tests that
 * check the cpu's vectorized traversal against it; sets up h like render_trace. */
int render_bvh_trace_scalar(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any);

#ifdef KEDR_HAVE_CUDA
/* Batch queries on the GPU (render.cu): rays and results in device memory. */
kedr_status render_cuda_trace(kedr_ctx *ctx, kedr_accel *a, const kedr_ray *rays, size_t n,
                              kedr_hit *hits, uint8_t *occluded);
void render_cuda_release(kedr_accel *a);
/* The host's copy of a tree built on a GPU (bvh, refs from its device arrays). */
kedr_status render_cuda_host_copy(kedr_accel *a);
#endif

/* Builders: fill the kind's fields of a (tris, woop, lo, hi and ntri already set). */
kedr_status render_bvh_build(kedr_accel *a);
kedr_status render_grid_build(kedr_accel *a);
kedr_status render_kd_build(kedr_accel *a);
/* The LBVH on the cpu (lbvh.c), or on the context's GPU (render.cu: every step on the device,
 * the tree left there until a cpu query copies it back, render_accel_host). */
kedr_status render_lbvh_build(kedr_accel *a, kedr_ctx *ctx);
#ifdef KEDR_HAVE_CUDA
kedr_status render_lbvh_build_cuda(kedr_accel *a, kedr_ctx *ctx, uint32_t treelet_min);
#endif
/* The smallest LBVH node whose treelet is restructured (lbvh.h): LBVH_TREELET_MIN, or the
 * environment's KEDR_LBVH_TREELET_MIN (0: none); KEDR_ERR_INVALID names a bad value. */
kedr_status render_lbvh_treelet_min(uint32_t *out);

/* The box every accelerator files triangle i under (tri_box_padded): its bounding box widened
 * by RENDER_PAD of its own size plus a->pad (RENDER_PAD of the scene's size times 0.01). The
 * triangle tests round: a ray passing a vertex or an edge can be reported to hit a triangle at a
 * point just outside its exact box, and an accelerator must still find that hit where brute
 * force does. */
static inline void accel_tri_box(const kedr_accel *a, size_t i, float lo[3], float hi[3])
{
    tri_box_padded(a->tris + i * 9, a->pad, lo, hi);
}

#ifdef __cplusplus
}
#endif
#endif
