/* kedr_render on every back end and accelerator against the cpu's BVH image of the same scene
 * (the teapot, mirror and glass spheres, a plane, Phong and Cook-Torrance materials, a point
 * and an area light; reflection and refraction 4 bounces deep, 2 samples a pixel):
 * - the first hit of each pixel's central ray (kedr_render's ids) must be the same object,
 *   except at ties (a ray through a shared edge), allowed on at most MAX_ID_DIFF of the pixels;
 * - colours must agree within COLOR_TOL on all but MAX_COLOR_DIFF of the pixels: the shading is
 *   one text for both back ends (whitted.h) with no fused multiply-adds, but powf and expf of
 *   the GPU's library differ from the cpu's in the last bits, and a tie on a secondary ray
 *   changes that pixel's colour.
 * On a machine without a GPU (KEDR_BACKEND=cpu), the grid, the kd-tree and the LBVH are compared
 * with the BVH, and both triangle tests; with cuda, the GPU's traversal of the BVH and of the
 * LBVH it builds itself, with both tests, and a grid or kd-tree on cuda must be refused. The
 * BVH and LBVH also render in waves (KEDR_RENDER_WAVE), held to the same tolerances against the
 * cpu's one-kernel image (test_render_wave checks waves against one kernel bit for bit). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "kedr/render.h"

#include <stdlib.h>
#include <unistd.h>

#define MAX_ID_DIFF 0.002
#define COLOR_TOL 2e-3f
#define MAX_COLOR_DIFF 0.01

static const char *scene_text =
    "[camera]\neye = 0 4 9\nlook_at = 0 1.2 0\nfov = 45\n"
    "[render]\nambient = 0.2\nbackground = 0.1 0.1 0.2\n"
    "[material.copper]\nmodel = cook-torrance\ncolor = 0.95 0.64 0.54\nroughness = 0.3\n"
    "specular = 0.8\nreflection = 0.2\n"
    "[material.floor]\ncolor = 0.7\nreflection = 0.3\nspecular = 0.3\nshininess = 40\n"
    "[material.glass]\ncolor = 0.9 1 0.95\ndiffuse = 0\ntransmission = 0.9\nior = 1.5\n"
    "[material.mirror]\ncolor = 0.9\nreflection = 0.8\ndiffuse = 0.1\n"
    "[light.key]\nposition = 5 8 6\n"
    "[light.area]\ncorner = -4 6 -1\nedge1 = 1 0 0\nedge2 = 0 0 1\nsamples = 2\ncolor = 0.5\n"
    "[mesh.teapot]\nbuiltin = teapot\nlevel = 6\nrotate = -90 0 0\nmaterial = copper\n"
    "[sphere.glass]\ncenter = 2.2 1 2\nradius = 0.9\nmaterial = glass\n"
    "[sphere.mirror]\ncenter = -2.6 1.2 -1\nradius = 1.1\nmaterial = mirror\n"
    "[plane.floor]\nnormal = 0 1 0\nmaterial = floor\n";

typedef struct {
    float *rgb;
    int32_t *ids;
} image;

static void compare(const char *what, const image *ref, const image *got, size_t pixels)
{
    size_t id_diff = 0, color_diff = 0;
    float worst = 0;
    for (size_t i = 0; i < pixels; i++) {
        id_diff += got->ids[i] != ref->ids[i];
        float d = 0;
        for (int c = 0; c < 3; c++)
            d = fmaxf(d, fabsf(got->rgb[i * 3 + c] - ref->rgb[i * 3 + c]));
        if (!(d <= COLOR_TOL))
            color_diff++;
        if (d > worst || d != d)
            worst = d;
    }
    printf("%-28s ids differ on %zu, colours on %zu of %zu pixels (worst %.3g)\n", what, id_diff,
           color_diff, pixels, worst);
    TU_CHECK(id_diff <= MAX_ID_DIFF * pixels, "%s: first hits differ on %zu of %zu pixels", what,
             id_diff, pixels);
    TU_CHECK(color_diff <= MAX_COLOR_DIFF * pixels, "%s: colours differ by more than %g on %zu "
             "of %zu pixels", what, COLOR_TOL, color_diff, pixels);
}

int main(void)
{
    char dir[64], path[128];
    snprintf(dir, sizeof dir, "/tmp/kedr_render_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/scene.ini", dir);
    FILE *f = fopen(path, "w");
    if (!f || fputs(scene_text, f) < 0 || fclose(f) != 0)
        return 1;
    kedr_render_scene *s = NULL;
    TU_OK(kedr_render_scene_load(path, &s));
    if (!s)
        return tu_finish("test_render_backends");
    const int w = (int)tu_scale(200, 96), h = (int)tu_scale(150, 72);
    size_t pixels = (size_t)w * h;
    image ref = {tu_host_alloc(pixels * 3 * sizeof(float)), tu_host_alloc(pixels * 4)};
    image got = {tu_host_alloc(pixels * 3 * sizeof(float)), tu_host_alloc(pixels * 4)};
    kedr_render_options o = {w, h, 2, 4, KEDR_ACCEL_BVH, KEDR_TRI_MOLLER, KEDR_RENDER_MEGA, 1};
    kedr_ctx *cpu = tu_ctx(KEDR_BACKEND_CPU);
    TU_OK(kedr_render(cpu, s, &o, ref.rgb, ref.ids, NULL));
    size_t hit = 0;
    for (size_t i = 0; i < pixels; i++)
        hit += ref.ids[i] >= 0 && ref.ids[i] < 2000;
    TU_CHECK(hit > pixels / 20, "the teapot covers %zu pixels", hit);

    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = list[b] == KEDR_BACKEND_CPU ? cpu : tu_ctx(list[b]);
        for (int a = KEDR_ACCEL_GRID; a <= KEDR_ACCEL_LBVH; a++)
            for (int t = KEDR_TRI_MOLLER; t <= KEDR_TRI_WOOP; t++)
                for (int k = KEDR_RENDER_MEGA; k <= KEDR_RENDER_WAVE; k++) {
                    if (k == KEDR_RENDER_WAVE && (a < KEDR_ACCEL_BVH || t != KEDR_TRI_MOLLER))
                        continue; /* waves: on the BVHs, one test (more: test_render_wave) */
                    char what[64];
                    snprintf(what, sizeof what, "%s %s %s%s", kedr_backend_name(list[b]),
                             kedr_accel_name(a), t ? "woop" : "moller", k ? " waves" : "");
                    o.accel = a;
                    o.test = t;
                    o.kernel = (kedr_render_kernel)k;
                    memset(got.rgb, TU_POISON_BYTE, pixels * 3 * sizeof(float));
                    memset(got.ids, TU_POISON_BYTE, pixels * 4);
                    kedr_render_stats st = {0};
                    kedr_status r = kedr_render(ctx, s, &o, got.rgb, got.ids, &st);
                    if (list[b] == KEDR_BACKEND_CUDA && a < KEDR_ACCEL_BVH) {
                        TU_CHECK(r == KEDR_ERR_UNSUPPORTED, "%s: refused (%s)", what,
                                 kedr_last_error());
                        continue;
                    }
                    TU_CHECK(r == KEDR_OK, "%s: %s", what, kedr_last_error());
                    if (r != KEDR_OK)
                        continue;
                    TU_CHECK(st.primary_rays == pixels * 2 && st.shadow_rays > pixels &&
                             st.secondary_rays > pixels / 10, "%s: ray counts %llu %llu %llu", what,
                             (unsigned long long)st.primary_rays, (unsigned long long)st.shadow_rays,
                             (unsigned long long)st.secondary_rays);
                    compare(what, &ref, &got, pixels);
                }
        if (ctx != cpu)
            kedr_ctx_destroy(ctx);
    }
    kedr_ctx_destroy(cpu);
    kedr_render_scene_destroy(s);
    free(ref.rgb), free(ref.ids), free(got.rgb), free(got.ids);
    tu_remove_dir(dir);
    return tu_finish("test_render_backends");
}
