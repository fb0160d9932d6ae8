/* render: the camera shared by the cpu image loop and the cuda back end, and the cuda back end's
 * entry point (render.cu). */
#ifndef RENDER_CUDA_H
#define RENDER_CUDA_H

#include "render/scene.h"

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
rvec render_camera_dir(const render_camera_basis *c, int x, int y, float sx, float sy);

#ifdef KEDR_HAVE_CUDA
/* Renders on the context's GPU with the accelerator the cpu built (v->accel). */
kedr_status render_cuda(kedr_ctx *ctx, const render_view *v, const kedr_render_options *o,
                        float *rgb, int32_t *ids, kedr_render_stats *st);
#endif

#ifdef __cplusplus
}
#endif
#endif
