/* kedr render: ray tracing of triangle scenes (Whitted shading) with a uniform grid, an SAH
 * kd-tree or a BVH (docs/render.md).
 *
 * The geometry API: a triangle soup (nine floats per triangle: three vertices x, y, z) is built
 * into an accelerator, which answers nearest-hit and any-hit (shadow) queries for batches of
 * rays. Every accelerator returns the hit brute force over all triangles returns: the same
 * triangle and distance, except where two triangles are hit at the same distance (a ray through
 * a shared edge or vertex, coplanar overlaps), when either may be returned. */
#ifndef KEDR_RENDER_H
#define KEDR_RENDER_H

#include "kedr/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A ray o + t d for tmin < t < tmax (d need not be unit length). */
typedef struct {
    float o[3], tmin;
    float d[3], tmax;
} kedr_ray;

/* A nearest hit: prim is the triangle's index in the soup, -1 for a miss (t is then tmax);
 * (u, v) are the barycentric coordinates of the hit point p = (1-u-v) v0 + u v1 + v v2. */
typedef struct {
    float t, u, v;
    int32_t prim;
} kedr_hit;

typedef enum {
    KEDR_ACCEL_BRUTE = 0, /* every triangle for every ray: the reference */
    KEDR_ACCEL_GRID,      /* uniform grid, 3D-DDA traversal */
    KEDR_ACCEL_KDTREE,    /* SAH kd-tree, O(N log N) build, stack traversal */
    KEDR_ACCEL_BVH,       /* binned-SAH bounding volume hierarchy, stack traversal */
    KEDR_ACCEL_LBVH,      /* BVH over Morton order (Karras 2012): a fast parallel build, on the
                             GPU with kedr_accel_build_on; the same traversal as the BVH */
    KEDR_ACCEL_KDTREE_BF  /* the SAH kd-tree with its branch-free traversal (selects choose the
                             next node): the same tree and the same hits as KEDR_ACCEL_KDTREE */
} kedr_accel_kind;

/* The ray-triangle test: Moller & Trumbore (1997), or Woop's affine transform of the ray into
 * the unit triangle's space (Woop 2004), which keeps 12 precomputed floats per triangle. */
typedef enum { KEDR_TRI_MOLLER = 0, KEDR_TRI_WOOP } kedr_tri_test;

const char *kedr_accel_name(kedr_accel_kind k);
/* Parses "brute", "grid", "kdtree", "kdtree-bf", "bvh" or "lbvh"; KEDR_ERR_INVALID names the
 * text otherwise. */
kedr_status kedr_accel_parse(const char *text, kedr_accel_kind *out);

typedef struct kedr_accel kedr_accel;

typedef struct {
    double build_seconds;
    size_t bytes;  /* the structure's memory, triangles included */
    size_t nodes;  /* BVH or kd-tree nodes, grid cells */
    size_t refs;   /* triangle references in leaves or cells */
    int depth;     /* the deepest leaf (0 for the grid, brute force and the LBVH) */
    size_t degenerate; /* triangles of no area (to within rounding), never hit */
    /* an LBVH built on a GPU (kedr_accel_build_on, cuda): the device's build alone, timed by
     * CUDA events from the triangles in its memory to the tree in its memory (the checks, the
     * copy and the upload before are in build_seconds only); 0 for every other build */
    double device_build_seconds;
} kedr_accel_info;

/* Builds an accelerator over ntri triangles (tris: 9 floats each, copied). Triangles with a
 * NaN or infinite coordinate are refused (KEDR_ERR_INVALID naming the first); degenerate
 * triangles (|e1 x e2| <= 2^-20 |e1| |e2|: collinear vertices, a repeated vertex) are kept in
 * the numbering, never hit, and counted in kedr_accel_info.degenerate. */
kedr_status kedr_accel_build(kedr_accel_kind kind, kedr_tri_test test, const float *tris,
                             size_t ntri, kedr_accel **out);
/* The same on a context: an LBVH on a cuda context is built on its GPU, every step there (the
 * scene box, the Morton codes, the sort, the hierarchy and its boxes), and kept there; a cpu
 * query copies it back once. Every other kind is built on the cpu. */
kedr_status kedr_accel_build_on(kedr_ctx *ctx, kedr_accel_kind kind, kedr_tri_test test,
                                const float *tris, size_t ntri, kedr_accel **out);
void kedr_accel_destroy(kedr_accel *a);
void kedr_accel_get_info(const kedr_accel *a, kedr_accel_info *info);
/* Nearest hits of n rays (all threads). */
kedr_status kedr_accel_intersect(const kedr_accel *a, const kedr_ray *rays, size_t n,
                                 kedr_hit *hits);
/* Any hit: occluded[i] = 1 when some triangle lies on ray i within (tmin, tmax), else 0. */
kedr_status kedr_accel_occluded(const kedr_accel *a, const kedr_ray *rays, size_t n,
                                uint8_t *occluded);
/* The same queries on a context, with rays, hits and occluded in its memory (kedr_alloc: host
 * memory for cpu, device memory for cuda). On cuda the accelerator must be a BVH or an LBVH: it
 * is copied
 * to that GPU at the first call and kept there until kedr_accel_destroy (one GPU at a time);
 * the GPU returns the hits the cpu's traversal returns (the same code, rounded alike). */
kedr_status kedr_accel_intersect_on(kedr_ctx *ctx, kedr_accel *a, const kedr_ray *rays, size_t n,
                                    kedr_hit *hits);
kedr_status kedr_accel_occluded_on(kedr_ctx *ctx, kedr_accel *a, const kedr_ray *rays, size_t n,
                                   uint8_t *occluded);

/* ---- scenes and images ------------------------------------------------------------------- */

/* A scene: camera, point lights (area lights are sampled as grids of point lights), materials
 * (Phong or Cook-Torrance, with reflection and refraction), spheres, planes and triangle meshes
 * (OBJ files or the built-in teapot, terrain and stadium). Scene files: docs/render.md. */
typedef struct kedr_render_scene kedr_render_scene;

/* Reads a scene file; KEDR_ERR_PARSE "FILE:LINE: [section] key: ..." for a bad scene or OBJ
 * file (the OBJ file's own name and line), KEDR_ERR_IO for an unreadable one. */
kedr_status kedr_render_scene_load(const char *path, kedr_render_scene **out);
void kedr_render_scene_destroy(kedr_render_scene *s);

typedef struct {
    size_t triangles, spheres, planes, lights, materials;
    size_t skipped_nonfinite;  /* OBJ faces with a NaN or infinite vertex: reported, skipped */
    size_t skipped_degenerate; /* zero-area triangles: reported, skipped */
    int width, height, spp, depth; /* the file's [render] values (or the defaults) */
    kedr_accel_kind accel;
} kedr_render_scene_info;
void kedr_render_scene_get_info(const kedr_render_scene *s, kedr_render_scene_info *info);

/* How a frame's rays are organised: one kernel (one thread a pixel follows its primary, shadow
 * and secondary rays: the default), or waves (all primary rays, then their shading, the queue of
 * shadow rays, the queue of secondary rays, wave after wave). Both give the same image bit for
 * bit; on the cpu too (the waves there serve to check them). */
typedef enum { KEDR_RENDER_MEGA = 0, KEDR_RENDER_WAVE = 1 } kedr_render_kernel;

typedef struct {
    int width, height; /* pixels */
    int spp;           /* samples per pixel: the first at the pixel's centre, then jittered */
    int depth;         /* reflection and refraction bounces (0: local shading only) */
    kedr_accel_kind accel;
    kedr_tri_test test;
    kedr_render_kernel kernel; /* 0: KEDR_RENDER_MEGA */
    int repeats;               /* frames rendered (the same image), 0 or 1: one; at most 1000 */
} kedr_render_options;

typedef struct {
    double build_seconds, render_seconds;
    size_t accel_bytes;
    uint64_t primary_rays, shadow_rays, secondary_rays; /* of one frame */
    /* One frame, the median of the repeats: on cuda, CUDA events from the first kernel to the
     * image in device memory (not the scene's upload nor the image's download); on the cpu the
     * wall time of the frame. */
    double frame_seconds;
} kedr_render_stats;

/* Renders the scene: rgb gets width * height * 3 linear floats, rows from the top. ids (may be
 * NULL) gets, per pixel, what the ray through its centre hits first: a triangle's index, then
 * triangles + sphere index, then triangles + spheres + plane index, or -1. */
kedr_status kedr_render(kedr_ctx *ctx, const kedr_render_scene *s, const kedr_render_options *o,
                        float *rgb, int32_t *ids, kedr_render_stats *stats);

/* Writes linear rgb (clamped to [0, 1], sRGB-encoded) as an 8-bit PNG, replacing the file whole
 * (kedr_file_begin/commit). */
kedr_status kedr_render_write_png(const char *path, const float *rgb, int width, int height);

#ifdef __cplusplus
}
#endif
#endif
