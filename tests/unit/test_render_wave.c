/* kedr_render's two ways of organising a frame's rays -- one kernel (KEDR_RENDER_MEGA: a pixel's
 * rays on one thread's stack) and waves (KEDR_RENDER_WAVE: queues of primary, shadow and
 * secondary rays, wave.h) -- must give the same image bit for bit, the same first hits and the
 * same ray counts, on every back end (on cuda: the GPU's two kernels against each other; on the
 * cpu: the cpu's waves, which check the wavefront's bookkeeping where there is no GPU). Scenes:
 * transparent (shadow rays through glass: nearest-hit shadow rays, both children at a glass
 * surface), opaque (any-hit shadow rays), two facing mirrors with a glass ball (deep trees: depth
 * 12), no light at all; awkward image sizes, 1 to 3 samples a pixel, depths 0 to 12, and frames
 * cut into many passes (KEDR_RENDER_WAVE_PATHS, some passes smaller than a pixel's samples). A
 * malformed KEDR_RENDER_WAVE_PATHS and a bad kernel are refused. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "kedr/render.h"

#include <stdlib.h>
#include <unistd.h>

static const char *glass_scene =
    "[camera]\neye = 0 4 9\nlook_at = 0 1.2 0\nfov = 45\n"
    "[render]\nambient = 0.2\nbackground = 0.1 0.1 0.2\n"
    "[material.copper]\nmodel = cook-torrance\ncolor = 0.95 0.64 0.54\nroughness = 0.3\n"
    "specular = 0.8\nreflection = 0.2\n"
    "[material.floor]\ncolor = 0.7\nreflection = 0.3\nspecular = 0.3\nshininess = 40\n"
    "[material.glass]\ncolor = 0.9 1 0.95\ndiffuse = 0\ntransmission = 0.9\nior = 1.5\n"
    "[material.mirror]\ncolor = 0.9\nreflection = 0.8\ndiffuse = 0.1\n"
    "[light.key]\nposition = 5 8 6\n"
    "[light.area]\ncorner = -4 6 -1\nedge1 = 1 0 0\nedge2 = 0 0 1\nsamples = 2\ncolor = 0.5\n"
    "[mesh.teapot]\nbuiltin = teapot\nlevel = 4\nrotate = -90 0 0\nmaterial = copper\n"
    "[sphere.glass]\ncenter = 2.2 1 2\nradius = 0.9\nmaterial = glass\n"
    "[sphere.mirror]\ncenter = -2.6 1.2 -1\nradius = 1.1\nmaterial = mirror\n"
    "[plane.floor]\nnormal = 0 1 0\nmaterial = floor\n";

static const char *opaque_scene =
    "[camera]\neye = 1 3 8\nlook_at = 0 1 0\nfov = 50\n"
    "[render]\nambient = 0.1\nbackground = 0.3 0.4 0.5\n"
    "[material.red]\ncolor = 0.8 0.2 0.2\nreflection = 0.4\n"
    "[material.floor]\nmodel = cook-torrance\ncolor = 0.6\nreflection = 0.5\nroughness = 0.2\n"
    "[light.a]\nposition = 4 6 4\n[light.b]\nposition = -5 3 2\ncolor = 0.4 0.4 0.8\n"
    "[mesh.teapot]\nbuiltin = teapot\nlevel = 3\nrotate = -90 0 0\nmaterial = red\n"
    "[sphere.s]\ncenter = -2 1 0\nradius = 1\nmaterial = red\n"
    "[plane.floor]\nnormal = 0 1 0\nmaterial = floor\n";

/* Two mirrors facing each other with a glass ball between: rays bounce to the full depth and
 * split at the glass, the deepest trees whitted's stack holds. */
static const char *mirrors_scene =
    "[camera]\neye = 0.5 0.3 3\nlook_at = 0 0 0\nfov = 60\n"
    "[render]\nambient = 0.3\nbackground = 0.2 0.5 0.2\n"
    "[material.mirror]\ncolor = 0.95 0.9 0.95\nreflection = 0.95\ndiffuse = 0.05\n"
    "[material.glass]\ncolor = 1 0.95 0.9\ndiffuse = 0\ntransmission = 0.8\nreflection = 0.1\n"
    "ior = 1.33\n"
    "[light.a]\nposition = 0 3 0\n"
    "[sphere.g]\ncenter = 0 0 0\nradius = 0.6\nmaterial = glass\n"
    "[plane.left]\nnormal = 1 0 0\npoint = -2 0 0\nmaterial = mirror\n"
    "[plane.right]\nnormal = -1 0 0\npoint = 2 0 0\nmaterial = mirror\n";

static const char *dark_scene =
    "[camera]\neye = 0 0 5\nlook_at = 0 0 0\n"
    "[render]\nambient = 0.5\nbackground = 0.2 0.3 0.4\n"
    "[material.m]\ncolor = 0.5 0.6 0.7\nreflection = 0.5\n"
    "[sphere.s]\ncenter = 0 0 0\nradius = 1\nmaterial = m\n";

static kedr_render_scene *load(const char *dir, const char *name, const char *text)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s.ini", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        return NULL;
    kedr_render_scene *s = NULL;
    TU_OK(kedr_render_scene_load(path, &s));
    return s;
}

static int compare_runs(kedr_ctx *ctx, const char *what, const kedr_render_scene *s,
                        kedr_render_options o)
{
    size_t pixels = (size_t)o.width * o.height;
    float *rgb[2];
    int32_t *ids[2];
    kedr_render_stats st[2];
    for (int k = 0; k < 2; k++) {
        rgb[k] = tu_host_alloc(pixels * 3 * sizeof(float));
        ids[k] = tu_host_alloc(pixels * sizeof(int32_t));
        memset(rgb[k], TU_POISON_BYTE, pixels * 3 * sizeof(float));
        memset(ids[k], TU_POISON_BYTE, pixels * sizeof(int32_t));
        o.kernel = k ? KEDR_RENDER_WAVE : KEDR_RENDER_MEGA;
        kedr_status r = kedr_render(ctx, s, &o, rgb[k], ids[k], &st[k]);
        TU_CHECK(r == KEDR_OK, "%s, kernel %d: %s", what, k, kedr_last_error());
        if (r != KEDR_OK) {
            free(rgb[0]), free(ids[0]), free(rgb[1]), free(ids[1]);
            return 0;
        }
    }
    size_t rgb_diff = 0, id_diff = 0, first = pixels;
    for (size_t i = 0; i < pixels; i++) {
        int d = memcmp(rgb[0] + 3 * i, rgb[1] + 3 * i, 3 * sizeof(float)) != 0;
        rgb_diff += d;
        id_diff += ids[0][i] != ids[1][i];
        if (d && first == pixels)
            first = i;
    }
    printf("%-44s %zu px: %llu shadow, %llu secondary rays; %zu colours, %zu ids differ\n", what,
           pixels, (unsigned long long)st[0].shadow_rays, (unsigned long long)st[0].secondary_rays,
           rgb_diff, id_diff);
    TU_CHECK(rgb_diff == 0, "%s: wave's colours differ from the megakernel's on %zu of %zu "
             "pixels (first: pixel %zu, %.9g %.9g %.9g against %.9g %.9g %.9g)", what, rgb_diff,
             pixels, first, first < pixels ? rgb[1][3 * first] : 0.0,
             first < pixels ? rgb[1][3 * first + 1] : 0.0,
             first < pixels ? rgb[1][3 * first + 2] : 0.0, first < pixels ? rgb[0][3 * first] : 0.0,
             first < pixels ? rgb[0][3 * first + 1] : 0.0,
             first < pixels ? rgb[0][3 * first + 2] : 0.0);
    TU_CHECK(id_diff == 0, "%s: first hits differ on %zu pixels", what, id_diff);
    TU_CHECK(st[0].primary_rays == st[1].primary_rays && st[0].shadow_rays == st[1].shadow_rays &&
             st[0].secondary_rays == st[1].secondary_rays,
             "%s: ray counts mega %llu/%llu/%llu, wave %llu/%llu/%llu", what,
             (unsigned long long)st[0].primary_rays, (unsigned long long)st[0].shadow_rays,
             (unsigned long long)st[0].secondary_rays, (unsigned long long)st[1].primary_rays,
             (unsigned long long)st[1].shadow_rays, (unsigned long long)st[1].secondary_rays);
    TU_CHECK(st[1].frame_seconds > 0, "%s: frame time %g", what, st[1].frame_seconds);
    int secondary = st[0].secondary_rays > 0;
    free(rgb[0]), free(ids[0]), free(rgb[1]), free(ids[1]);
    return secondary;
}

int main(void)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/kedr_render_wave_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    kedr_render_scene *glass = load(dir, "glass", glass_scene);
    kedr_render_scene *opaque = load(dir, "opaque", opaque_scene);
    kedr_render_scene *mirrors = load(dir, "mirrors", mirrors_scene);
    kedr_render_scene *dark = load(dir, "dark", dark_scene);
    if (!glass || !opaque || !mirrors || !dark)
        return tu_finish("test_render_wave");

    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        const char *be = kedr_backend_name(list[b]);
        char what[96];
        struct {
            const char *name;
            kedr_render_scene *s;
            int w, h, spp, depth;
            kedr_accel_kind accel;
        } runs[] = {
            {"glass", glass, (int)tu_scale(97, 41), (int)tu_scale(61, 29), 2, 4, KEDR_ACCEL_BVH},
            {"glass", glass, 33, 17, 3, 0, KEDR_ACCEL_BVH},
            {"glass", glass, 45, 31, 1, 7, KEDR_ACCEL_LBVH},
            {"opaque", opaque, (int)tu_scale(83, 37), (int)tu_scale(47, 23), 2, 3, KEDR_ACCEL_BVH},
            {"mirrors", mirrors, (int)tu_scale(64, 32), (int)tu_scale(48, 24), 1, 12,
             KEDR_ACCEL_BVH},
            {"dark", dark, 19, 13, 2, 5, KEDR_ACCEL_BVH},
        };
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            kedr_render_options o = {runs[r].w, runs[r].h, runs[r].spp, runs[r].depth,
                                     runs[r].accel, KEDR_TRI_MOLLER, KEDR_RENDER_MEGA, 1};
            snprintf(what, sizeof what, "%s %s %dx%d spp %d depth %d %s", be, runs[r].name,
                     o.width, o.height, o.spp, o.depth, kedr_accel_name(o.accel));
            int sec = compare_runs(ctx, what, runs[r].s, o);
            if (o.depth > 0 && runs[r].s != dark)
                TU_CHECK(sec, "%s: no secondary rays: the test would not exercise the waves",
                         what);
        }
        /* many passes: 5 rays a pass with 3 samples a pixel (one pixel a pass), and 1 */
        const char *paths[] = {"5", "1", "64"};
        for (int p = 0; p < 3; p++) {
            setenv("KEDR_RENDER_WAVE_PATHS", paths[p], 1);
            kedr_render_options o = {23, 11, p == 0 ? 3 : 2, 4, KEDR_ACCEL_BVH, KEDR_TRI_MOLLER,
                                     KEDR_RENDER_MEGA, 0};
            snprintf(what, sizeof what, "%s glass, passes of %s rays", be, paths[p]);
            compare_runs(ctx, what, glass, o);
        }
        /* bad input */
        float rgb[3 * 4];
        const char *bad[] = {"0", "x", "12x", "-3", "2000000000"};
        for (int k = 0; k < 5; k++) {
            setenv("KEDR_RENDER_WAVE_PATHS", bad[k], 1);
            kedr_render_options o = {2, 2, 1, 1, KEDR_ACCEL_BVH, KEDR_TRI_MOLLER, KEDR_RENDER_WAVE,
                                     1};
            kedr_status r = kedr_render(ctx, dark, &o, rgb, NULL, NULL);
            TU_CHECK(r == KEDR_ERR_INVALID && strstr(kedr_last_error(), "KEDR_RENDER_WAVE_PATHS"),
                     "KEDR_RENDER_WAVE_PATHS=%s refused: %d %s", bad[k], (int)r,
                     kedr_last_error());
        }
        unsetenv("KEDR_RENDER_WAVE_PATHS");
        kedr_render_options o = {2, 2, 1, 1, KEDR_ACCEL_BVH, KEDR_TRI_MOLLER,
                                 (kedr_render_kernel)7, 1};
        TU_CHECK(kedr_render(ctx, dark, &o, rgb, NULL, NULL) == KEDR_ERR_INVALID &&
                     strstr(kedr_last_error(), "kernel 7"),
                 "kernel 7 refused: %s", kedr_last_error());
        o.kernel = KEDR_RENDER_WAVE;
        o.repeats = 1001;
        TU_CHECK(kedr_render(ctx, dark, &o, rgb, NULL, NULL) == KEDR_ERR_INVALID &&
                     strstr(kedr_last_error(), "repeats 1001"),
                 "repeats 1001 refused: %s", kedr_last_error());
        kedr_ctx_destroy(ctx);
    }
    kedr_render_scene_destroy(glass);
    kedr_render_scene_destroy(opaque);
    kedr_render_scene_destroy(mirrors);
    kedr_render_scene_destroy(dark);
    tu_remove_dir(dir);
    return tu_finish("test_render_wave");
}
