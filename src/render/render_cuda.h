/* render: the camera shared by the cpu image loop and the cuda back end, and the cuda back end's
 * entry point (render.cu). */
#ifndef RENDER_CUDA_H
#define RENDER_CUDA_H

#include "render/whitted.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pinhole camera: the ray through image point (px, py) in [-1, 1]^2 has the direction
 * forward + px right + py up (right and up scaled by the field of view and aspect). */
typedef struct {
    rvec eye, forward, right, up;
    int width, height;
} render_camera_basis;

void render_camera(const kedr_render_scene *s, int width, int height, render_camera_basis *cam);

/* The direction through image point (x + sx, y + sy), rows from the top. */
RENDER_HD rvec render_camera_dir(const render_camera_basis *c, int x, int y, float sx, float sy)
{
    float px = 2 * (x + sx) / c->width - 1, py = 1 - 2 * (y + sy) / c->height;
    return rv_add(c->forward, rv_add(rv_mul(c->right, px), rv_mul(c->up, py)));
}

/* A sample's offset in its pixel: the centre for sample 0, else hashed from (pixel, sample),
 * so that any back end and any thread order give the same image. */
RENDER_HD void render_sample(uint64_t pixel, int sample, float *sx, float *sy)
{
    if (sample == 0) {
        *sx = *sy = 0.5f;
        return;
    }
    uint64_t z = pixel * 0x9E3779B97F4A7C15ull + (uint64_t)sample * 0xD1B54A32D192ED03ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    *sx = (float)(z >> 40) * 0x1p-24f;
    *sy = (float)((z >> 16) & 0xFFFFFF) * 0x1p-24f;
}

/* The median of n > 0 times (sorted in place). */
double render_median(double *t, int n);

#ifdef KEDR_HAVE_CUDA
/* Renders o->repeats frames (at least one) on the context's GPU with the accelerator the cpu
 * built (v->accel), one kernel or in waves (o->kernel); st gets the rays of one frame and the
 * median frame time. */
kedr_status render_cuda(kedr_ctx *ctx, const render_view *v, const render_camera_basis *cam,
                        const kedr_render_options *o, float *rgb, int32_t *ids,
                        kedr_render_stats *st);
#endif

#ifdef __cplusplus
}
#endif
#endif
