/* render: kedr_render, the image loop (a pinhole camera, samples per pixel, all threads) over
 * the shading of shade.c, and the back-end dispatch. */
#include "render/accel.h"
#include "render/render_cuda.h"
#include "render/scene.h"

#include <stdlib.h>
#include <string.h>

#define FN "kedr_render"

/* A sample's offset in its pixel: the centre for sample 0, else hashed from (pixel, sample)
 * so that any back end and any thread order give the same image. */
static void sample_offset(uint64_t pixel, int sample, float *sx, float *sy)
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

void render_camera(const kedr_render_scene *s, int width, int height, render_camera_basis *cam)
{
    rvec f = rv_norm(rv_sub(s->look, s->eye));
    rvec r = rv_norm(rv_cross(f, s->up));
    rvec u = rv_cross(r, f);
    float th = tanf(s->fov * (float)M_PI / 360);
    cam->eye = s->eye;
    cam->forward = f;
    cam->right = rv_mul(r, th * (float)width / (float)height);
    cam->up = rv_mul(u, th);
    cam->width = width;
    cam->height = height;
}

/* The direction through image point (x + sx, y + sy), rows from the top. */
rvec render_camera_dir(const render_camera_basis *c, int x, int y, float sx, float sy)
{
    float px = 2 * (x + sx) / c->width - 1, py = 1 - 2 * (y + sy) / c->height;
    return rv_add(c->forward, rv_add(rv_mul(c->right, px), rv_mul(c->up, py)));
}

static kedr_status check_options(const kedr_render_scene *s, const kedr_render_options *o)
{
    if (!s || !o)
        return kedr_fail(KEDR_ERR_INVALID, "%s: a NULL scene or options", FN);
    if (o->width < 1 || o->height < 1 || o->width > 65536 || o->height > 65536)
        return kedr_fail(KEDR_ERR_INVALID, "%s: size %dx%d: expected 1 to 65536 each", FN,
                         o->width, o->height);
    if (o->spp < 1 || o->spp > 4096)
        return kedr_fail(KEDR_ERR_INVALID, "%s: spp %d: expected 1 to 4096", FN, o->spp);
    if (o->depth < 0 || o->depth > 64)
        return kedr_fail(KEDR_ERR_INVALID, "%s: depth %d: expected 0 to 64", FN, o->depth);
    if ((unsigned)o->accel > KEDR_ACCEL_BVH || (unsigned)o->test > KEDR_TRI_WOOP)
        return kedr_fail(KEDR_ERR_INVALID, "%s: unknown accelerator or triangle test", FN);
    return KEDR_OK;
}

static void render_cpu(const render_view *v, const kedr_render_options *o, float *rgb,
                       int32_t *ids, kedr_render_stats *st)
{
    render_camera_basis cam;
    render_camera(v->s, o->width, o->height, &cam);
    uint64_t shadow = 0, secondary = 0;
    float inv = 1.0f / o->spp;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : shadow, secondary)
    for (int y = 0; y < o->height; y++) {
        render_counts c = {0, 0};
        for (int x = 0; x < o->width; x++) {
            uint64_t pixel = (uint64_t)y * o->width + x;
            rvec sum = rv(0, 0, 0);
            for (int k = 0; k < o->spp; k++) {
                float sx, sy;
                sample_offset(pixel, k, &sx, &sy);
                rvec d = render_camera_dir(&cam, x, y, sx, sy);
                sum = rv_add(sum, render_shade(v, cam.eye, d, o->depth, &c));
                if (k == 0 && ids) {
                    float t;
                    rvec n;
                    int mat;
                    ids[pixel] = render_nearest(v, cam.eye, d, 0, INFINITY, &t, &n, &mat);
                }
            }
            rgb[pixel * 3] = sum.x * inv;
            rgb[pixel * 3 + 1] = sum.y * inv;
            rgb[pixel * 3 + 2] = sum.z * inv;
        }
        shadow += c.shadow;
        secondary += c.secondary;
    }
    st->shadow_rays = shadow;
    st->secondary_rays = secondary;
}

kedr_status kedr_render(kedr_ctx *ctx, const kedr_render_scene *s, const kedr_render_options *o,
                        float *rgb, int32_t *ids, kedr_render_stats *stats)
{
    KEDR_TRY(check_options(s, o));
    if (!ctx || !rgb)
        return kedr_fail(KEDR_ERR_INVALID, "%s: a NULL context or image", FN);
    kedr_render_stats st = {0};
    kedr_accel *accel = NULL;
    KEDR_TRY(kedr_accel_build(o->accel, o->test, s->mesh.v, s->mesh.n, &accel));
    kedr_accel_info info;
    kedr_accel_get_info(accel, &info);
    st.build_seconds = info.build_seconds;
    st.accel_bytes = info.bytes;
    render_view v = {s, accel, 0};
    for (int i = 0; i < s->nmats; i++)
        v.transparent |= s->mats[i].transmission > 0;
    double t0 = kedr_wall_seconds();
    kedr_status status = KEDR_OK;
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA) {
#ifdef KEDR_HAVE_CUDA
        status = render_cuda(ctx, &v, o, rgb, ids, &st);
#else
        status = kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: this build has no cuda back end", FN);
#endif
    } else {
        render_cpu(&v, o, rgb, ids, &st);
    }
    st.render_seconds = kedr_wall_seconds() - t0;
    st.primary_rays = (uint64_t)o->width * o->height * o->spp;
    kedr_accel_destroy(accel);
    if (stats)
        *stats = st;
    return status;
}
