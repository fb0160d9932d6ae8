/* render: kedr_render, the image loop (a pinhole camera, samples per pixel, all threads) over
 * the shading of whitted.h, and the back-end dispatch. */
#include "render/accel.h"
#include "render/render_cuda.h"
#include "render/wave.h"

#include <stdlib.h>
#include <string.h>

#define FN "kedr_render"

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

static kedr_status check_options(const kedr_render_scene *s, const kedr_render_options *o)
{
    if (!s || !o)
        return kedr_fail(KEDR_ERR_INVALID, "%s: a NULL scene or options", FN);
    if (o->width < 1 || o->height < 1 || o->width > 65536 || o->height > 65536)
        return kedr_fail(KEDR_ERR_INVALID, "%s: size %dx%d: expected 1 to 65536 each", FN,
                         o->width, o->height);
    if (o->spp < 1 || o->spp > 4096)
        return kedr_fail(KEDR_ERR_INVALID, "%s: spp %d: expected 1 to 4096", FN, o->spp);
    if (o->depth < 0 || o->depth > RENDER_MAX_DEPTH)
        return kedr_fail(KEDR_ERR_INVALID, "%s: depth %d: expected 0 to %d", FN, o->depth,
                         RENDER_MAX_DEPTH);
    if ((unsigned)o->accel > KEDR_ACCEL_KDTREE_BF || (unsigned)o->test > KEDR_TRI_WOOP)
        return kedr_fail(KEDR_ERR_INVALID, "%s: unknown accelerator or triangle test", FN);
    if ((unsigned)o->kernel > KEDR_RENDER_WAVE)
        return kedr_fail(KEDR_ERR_INVALID, "%s: kernel %d: expected KEDR_RENDER_MEGA or "
                         "KEDR_RENDER_WAVE", FN, (int)o->kernel);
    if (o->repeats < 0 || o->repeats > 1000)
        return kedr_fail(KEDR_ERR_INVALID, "%s: repeats %d: expected 0 to 1000", FN, o->repeats);
    return KEDR_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double render_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static void render_cpu(const render_view *v, const render_camera_basis *camera,
                       const kedr_render_options *o, float *rgb, int32_t *ids,
                       kedr_render_stats *st)
{
    const render_camera_basis cam = *camera;
    unsigned long long shadow = 0, secondary = 0;
    float inv = 1.0f / o->spp;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : shadow, secondary)
    for (int y = 0; y < o->height; y++) {
        render_counts c = {0, 0};
        for (int x = 0; x < o->width; x++) {
            uint64_t pixel = (uint64_t)y * o->width + x;
            rvec sum = rv(0, 0, 0);
            for (int k = 0; k < o->spp; k++) {
                float sx, sy;
                render_sample(pixel, k, &sx, &sy);
                rvec d = render_camera_dir(&cam, x, y, sx, sy);
                sum = rv_add(sum, whitted(v, cam.eye, d, o->depth, &c));
                if (k == 0 && ids) {
                    float t;
                    rvec n;
                    int mat;
                    ids[pixel] = view_nearest(v, cam.eye, d, 0, INFINITY, &t, &n, &mat);
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
    KEDR_TRY(kedr_accel_build_on(ctx, o->accel, o->test, s->mesh.v, s->mesh.n, &accel));
    kedr_accel_info info;
    kedr_accel_get_info(accel, &info);
    st.build_seconds = info.build_seconds;
    st.accel_bytes = info.bytes;
    render_view v = {s->mats, s->lights, s->spheres, s->planes, s->mesh.mat, s->nlights,
                     s->nspheres, s->nplanes, s->nmats, (uint32_t)s->mesh.n, s->background,
                     s->ambient, 0,
                     {accel->bvh, accel->refs, accel->tris, accel->woop}, accel};
    for (int i = 0; i < s->nmats; i++)
        v.transparent |= s->mats[i].transmission > 0;
    render_camera_basis cam;
    render_camera(s, o->width, o->height, &cam);
    double t0 = kedr_wall_seconds();
    kedr_status status = KEDR_OK;
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA) {
#ifdef KEDR_HAVE_CUDA
        if (o->accel != KEDR_ACCEL_BVH && o->accel != KEDR_ACCEL_LBVH) {
            kedr_accel_destroy(accel);
            return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: the cuda back end traverses BVHs only "
                             "(--accel bvh or lbvh; grid and kdtree run on the cpu)", FN);
        }
        status = render_cuda(ctx, &v, &cam, o, rgb, ids, &st);
#else
        status = kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: this build has no cuda back end", FN);
#endif
    } else {
        int repeats = o->repeats > 1 ? o->repeats : 1;
        double times[1000];
        for (int r = 0; r < repeats && status == KEDR_OK; r++) {
            double f0 = kedr_wall_seconds();
            if (o->kernel == KEDR_RENDER_WAVE)
                status = render_wave_cpu(&v, &cam, o, rgb, ids, &st);
            else
                render_cpu(&v, &cam, o, rgb, ids, &st);
            times[r] = kedr_wall_seconds() - f0;
        }
        st.frame_seconds = render_median(times, repeats);
    }
    st.render_seconds = kedr_wall_seconds() - t0;
    st.primary_rays = (uint64_t)o->width * o->height * o->spp;
    kedr_accel_destroy(accel);
    if (stats)
        *stats = st;
    return status;
}
