/* render: the wavefront renderer's steps, compiled for the cpu (wave.c) and the GPU (render.cu)
 * from this one text. Instead of one thread following a pixel's rays through its stack (whitted
 * in whitted.h, the "megakernel"), the rays of every pixel travel in waves: all primary rays are
 * traced, then all their hits shaded (which queues one shadow ray per light that can reach the
 * point, and the reflected and refracted rays for the next wave), then the shadow queue is
 * traced, then each hit's local colour gathered from its shadow rays in light order; then the
 * next wave, until no ray is left. A ray is a record; its children are records of the next wave,
 * linked from it. At the end each pixel walks its samples' trees of records in the order whitted
 * pops its stack (the reflected ray's subtree before the refracted one's), adding the same terms
 * in the same order: the image is the megakernel's bit for bit. The shading goes through
 * whitted.h's functions, the traversal through the same view_nearest and transmittance. */
#ifndef RENDER_WAVE_H
#define RENDER_WAVE_H

#include "render/render_cuda.h"

#ifdef __CUDACC__
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
#endif

/* A pass's rays (pixels x samples) by default: the buffers of a pass are sized from it. */
#define WAVE_PATHS (1u << 22)
/* The shadow queue's entries per pass at most, for the first wave: a scene of many lights renders
 * in passes of fewer pixels. */
#define WAVE_SHADOW_SLOTS (1u << 24)

/* The nearest hit of a ray of the current wave. */
typedef struct {
    float t;
    rvec n;
    int mat, id; /* id: view_nearest's, -1 for a miss */
} wave_hit;

/* A hit's shading before its shadow rays come back: the ambient term and its shadow rays. */
typedef struct {
    rvec local;
    uint32_t shadow_first, shadow_count;
} wave_local;

/* A shadow ray; once traced, shade holds what its light adds, or light is -1 (blocked). */
typedef struct {
    rvec p, l, shade;
    float dist;
    int light;
} wave_shadow;

/* What a ray adds to its pixel, and its children (records of the next wave, -1 for none) in the
 * order whitted pushes them: child[1] is traced first. */
typedef struct {
    rvec term;
    int32_t child[2];
} wave_record;

/* Claims n consecutive slots of a queue whose counter is *counter; returns the first. On the GPU
 * the lanes of a warp that claim together add their total with one atomic and share it by their
 * prefix sums (one atomic a thread on one address would serialise millions of them). */
RENDER_HD uint32_t wave_claim(uint32_t *counter, uint32_t n)
{
#ifdef __CUDA_ARCH__
    namespace cg = cooperative_groups;
    cg::coalesced_group g = cg::coalesced_threads();
    uint32_t prefix = cg::exclusive_scan(g, n);
    uint32_t total = g.shfl(prefix + n, g.size() - 1);
    uint32_t base = 0;
    if (g.thread_rank() == 0)
        base = atomicAdd(counter, total);
    return g.shfl(base, 0) + prefix;
#else
    return __atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
#endif
}

/* Path i of a pass starting at pixel first: the camera ray of pixel first + i / spp, sample
 * i % spp (whitted's first task). */
RENDER_HD render_task wave_primary(const render_camera_basis *cam, uint64_t first, int spp,
                                   int depth, size_t i)
{
    uint64_t pixel = first + i / (unsigned)spp;
    int k = (int)(i % (unsigned)spp);
    int x = (int)(pixel % (unsigned)cam->width), y = (int)(pixel / (unsigned)cam->width);
    float sx, sy;
    render_sample(pixel, k, &sx, &sy);
    render_task r;
    r.o = cam->eye;
    r.d = render_camera_dir(cam, x, y, sx, sy);
    r.w = rv(1, 1, 1);
    r.depth = depth;
    return r;
}

RENDER_HD void wave_trace(const render_view *v, const render_task *r, wave_hit *h)
{
    h->id = view_nearest(v, r->o, r->d, 0, INFINITY, &h->t, &h->n, &h->mat);
}

/* Shades hit h of ray r (record `self`): the ambient term, the shadow rays in light order into
 * shadows[*nshadow ...] (claimed together, so they stay in order), the children into
 * next[*nnext ...] (records next_base + slot) and their links into rec. A miss shades nothing. */
RENDER_HD void wave_shade(const render_view *v, const render_task *r, const wave_hit *h,
                          wave_local *loc, wave_record *rec, wave_shadow *shadows,
                          uint32_t *nshadow, render_task *next, uint32_t *nnext,
                          uint32_t next_base)
{
    rec->child[0] = rec->child[1] = -1;
    loc->shadow_first = loc->shadow_count = 0;
    if (h->id < 0)
        return;
    const render_material *m = &v->mats[h->mat];
    render_surface s;
    whitted_surface(r->o, r->d, h->t, h->n, &s);
    loc->local = whitted_ambient(v, m);
    uint32_t count = 0;
    for (int i = 0; i < v->nlights; i++) {
        rvec l;
        float dist, ndl;
        count += (uint32_t)whitted_light(v, &s, i, &l, &dist, &ndl);
    }
    if (count) {
        uint32_t j = wave_claim(nshadow, count);
        loc->shadow_first = j;
        loc->shadow_count = count;
        for (int i = 0; i < v->nlights; i++) {
            rvec l;
            float dist, ndl;
            if (!whitted_light(v, &s, i, &l, &dist, &ndl))
                continue;
            wave_shadow *q = &shadows[j++];
            q->p = s.above;
            q->l = l;
            q->dist = dist;
            q->light = i;
            q->shade = local_shade(m, s.n, s.view, l, ndl);
        }
    }
    render_task kids[2];
    int nb = whitted_bounces(m, &s, r->w, r->depth, kids);
    if (nb) {
        uint32_t slot = wave_claim(nnext, (uint32_t)nb);
        for (int k = 0; k < nb; k++) {
            next[slot + k] = kids[k];
            rec->child[k] = (int32_t)(next_base + slot + k);
        }
    }
}

/* Traces a shadow ray (through transparent surfaces as whitted does) and turns it into what its
 * light adds; returns the rays traced. */
RENDER_HD unsigned wave_shadow_trace(const render_view *v, wave_shadow *q)
{
    render_counts c = {0, 0};
    rvec tr = transmittance(v, q->p, q->l, q->dist, &c);
    if (tr.x == 0 && tr.y == 0 && tr.z == 0)
        q->light = -1;
    else
        q->shade = whitted_light_term(v, q->light, tr, q->shade);
    return (unsigned)c.shadow;
}

/* The term ray r adds to its pixel: the background's for a miss, else the ambient term plus its
 * lights' in light order, times the ray's weight. */
RENDER_HD void wave_gather(const render_view *v, const render_task *r, const wave_hit *h,
                           const wave_local *loc, const wave_shadow *shadows, wave_record *rec)
{
    if (h->id < 0) {
        rec->term = rv_hadamard(r->w, v->background);
        return;
    }
    rvec local = loc->local;
    for (uint32_t j = loc->shadow_first; j < loc->shadow_first + loc->shadow_count; j++)
        if (shadows[j].light >= 0)
            local = rv_add(local, shadows[j].shade);
    rec->term = rv_hadamard(r->w, local);
}

/* Pixel p of a pass (its samples are records p * spp + k): each sample's terms added in the
 * order whitted pops its stack, the samples in order, divided by spp as render_cpu does. */
RENDER_HD void wave_pixel(const wave_record *rec, size_t p, int spp, float *rgb)
{
    rvec sum = rv(0, 0, 0);
    for (int k = 0; k < spp; k++) {
        int32_t stack[RENDER_MAX_DEPTH + 2];
        int sp = 0;
        rvec color = rv(0, 0, 0);
        stack[sp++] = (int32_t)(p * (unsigned)spp + k);
        while (sp) {
            const wave_record *r = &rec[stack[--sp]];
            color = rv_add(color, r->term);
            if (r->child[0] >= 0)
                stack[sp++] = r->child[0];
            if (r->child[1] >= 0)
                stack[sp++] = r->child[1];
        }
        sum = rv_add(sum, color);
    }
    float inv = 1.0f / spp;
    rgb[0] = sum.x * inv;
    rgb[1] = sum.y * inv;
    rgb[2] = sum.z * inv;
}

#ifdef __cplusplus
extern "C" {
#endif
/* The pixels of a pass (wave.c), the check that a wave's indices fit in 32 bits, and the cpu's
 * wavefront renderer (render_cpu's image, bit for bit). */
kedr_status render_wave_paths(size_t *paths);
size_t render_wave_pass_pixels(size_t paths, int nlights, int spp);
kedr_status render_wave_check(size_t base, size_t n, int nlights);
kedr_status render_wave_cpu(const render_view *v, const render_camera_basis *cam,
                            const kedr_render_options *o, float *rgb, int32_t *ids,
                            kedr_render_stats *st);
#ifdef __cplusplus
}
#endif

#endif
