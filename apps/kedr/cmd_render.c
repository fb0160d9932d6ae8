/* kedr render SCENE.ini: ray traces a scene (Whitted shading over a grid, kd-tree or BVH) into a
 * PNG image, prints the build and render times and rays per second, and with --json writes them
 * as a record. kedr bench render lives in bench/render_bench.c. */
#include "cli.h"

#include "kedr/render.h"
#include "render_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_BOTH 2

typedef struct {
    const char *scene, *out, *json;
    int width, height, spp, depth, accel_set, repeats;
    int kernel; /* KEDR_RENDER_MEGA, KEDR_RENDER_WAVE or KERNEL_BOTH */
    kedr_accel_kind accel;
    kedr_tri_test test;
    cli_common com;
} render_cli;

static void help(void)
{
    printf("usage: kedr render SCENE.ini [options]\n\n"
           "Ray traces the scene described by SCENE.ini (keys: docs/render.md) with Whitted\n"
           "shading: one shadow ray per light, reflection and refraction to --depth bounces.\n"
           "Writes a PNG image and prints the accelerator's build time and memory and the\n"
           "rays per second.\n\n"
           "options:\n"
           "  --accel grid|kdtree|kdtree-bf|bvh|lbvh|brute  the accelerator (overrides [render]\n"
           "                         accel; kdtree-bf: the kd-tree's branch-free traversal); the\n"
           "                         GPU traverses BVHs only: with another, auto means cpu\n"
           "  --test moller|woop     the ray-triangle test (default moller)\n"
           "  --size WxH             image size in pixels (overrides [render] width, height)\n"
           "  --spp N                samples per pixel (overrides [render] spp)\n"
           "  --depth N              reflection/refraction bounces (overrides [render] depth)\n"
           "  --out FILE.png         the image (default: the scene's name with .png, here)\n"
           "  --json FILE            the timings and ray counts as JSON\n"
           "  --kernel mega|wave|both  one kernel a frame (a thread follows a pixel's rays,\n"
           "                         the default), or waves of primary, shadow and secondary\n"
           "                         rays through queues; both: each in turn, their frame times\n"
           "                         and a check that the images are identical\n"
           "  --repeats N            frames a kernel (1 to 1000, default 1): the frame time\n"
           "                         printed is their median\n"
           CLI_COMMON_HELP);
}

static void parse(int argc, char **argv, render_cli *o)
{
    const char *cmd = "render";
    memset(o, 0, sizeof *o);
    o->com.backend = KEDR_BACKEND_AUTO;
    o->spp = o->depth = -1;
    o->repeats = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help();
            exit(0);
        }
        if (cli_common_option(argc, argv, &i, &o->com, cmd))
            continue;
        if (cli_is_option(a, "--accel")) {
            const char *v = cli_value(argc, argv, &i, cmd);
            if (kedr_accel_parse(v, &o->accel) != KEDR_OK)
                cli_usage_error(cmd, "--accel %s: expected grid, kdtree, kdtree-bf, bvh, lbvh or "
                                "brute", v);
            o->accel_set = 1;
        } else if (cli_is_option(a, "--test")) {
            const char *v = cli_value(argc, argv, &i, cmd);
            if (strcmp(v, "moller") == 0)
                o->test = KEDR_TRI_MOLLER;
            else if (strcmp(v, "woop") == 0)
                o->test = KEDR_TRI_WOOP;
            else
                cli_usage_error(cmd, "--test %s: expected moller or woop", v);
        } else if (cli_is_option(a, "--size")) {
            const char *v = cli_value(argc, argv, &i, cmd);
            char tail;
            if (sscanf(v, "%dx%d%c", &o->width, &o->height, &tail) != 2 || o->width < 1 ||
                o->height < 1 || o->width > 65536 || o->height > 65536)
                cli_usage_error(cmd, "--size %s: expected WxH, each 1 to 65536 (e.g. 1920x1080)",
                                v);
        } else if (cli_is_option(a, "--spp")) {
            o->spp = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 4096, "--spp", cmd);
        } else if (cli_is_option(a, "--depth")) {
            o->depth = (int)cli_int(cli_value(argc, argv, &i, cmd), 0, 64, "--depth", cmd);
        } else if (cli_is_option(a, "--kernel")) {
            const char *v = cli_value(argc, argv, &i, cmd);
            if (strcmp(v, "mega") == 0)
                o->kernel = KEDR_RENDER_MEGA;
            else if (strcmp(v, "wave") == 0)
                o->kernel = KEDR_RENDER_WAVE;
            else if (strcmp(v, "both") == 0)
                o->kernel = KERNEL_BOTH;
            else
                cli_usage_error(cmd, "--kernel %s: expected mega, wave or both", v);
        } else if (cli_is_option(a, "--repeats")) {
            o->repeats = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 1000, "--repeats", cmd);
        } else if (cli_is_option(a, "--out")) {
            o->out = cli_value(argc, argv, &i, cmd);
        } else if (cli_is_option(a, "--json")) {
            o->json = cli_value(argc, argv, &i, cmd);
        } else if (a[0] == '-') {
            cli_usage_error(cmd, "unknown option '%s'", a);
        } else if (o->scene) {
            cli_usage_error(cmd, "more than one scene ('%s' and '%s')", o->scene, a);
        } else {
            o->scene = a;
        }
    }
    if (!o->scene)
        cli_usage_error(cmd, "no scene file given");
}

/* SCENE.ini -> SCENE.png in the current directory. */
static void default_out(const char *scene, char *buf, size_t size)
{
    const char *base = strrchr(scene, '/');
    base = base ? base + 1 : scene;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".ini") == 0)
        n -= 4;
    snprintf(buf, size, "%.*s.png", (int)(n < 200 ? n : 200), base);
}

static int fail(const char *what)
{
    fprintf(stderr, "kedr render: %s%s%s\n", what ? what : "", what ? ": " : "", kedr_last_error());
    return CLI_EXIT_FAIL;
}

static const char *kernel_name(int k)
{
    return k == KEDR_RENDER_WAVE ? "wave" : "mega";
}

/* One kernel's frame: its time and rays/s (each kind's count over the whole frame's time). */
static void json_frame(FILE *f, int kernel, const kedr_render_stats *st)
{
    double t = st->frame_seconds;
    uint64_t rays = st->primary_rays + st->shadow_rays + st->secondary_rays;
    fprintf(f, "{\"kernel\": \"%s\", \"frame_s\": %.6g, \"rays_per_s\": %.6g, "
            "\"primary_per_s\": %.6g, \"shadow_per_s\": %.6g, \"secondary_per_s\": %.6g}",
            kernel_name(kernel), t, t > 0 ? rays / t : 0, t > 0 ? st->primary_rays / t : 0,
            t > 0 ? st->shadow_rays / t : 0, t > 0 ? st->secondary_rays / t : 0);
}

static int write_json(const render_cli *o, const kedr_render_options *ro, kedr_ctx *ctx,
                      const kedr_render_scene_info *si, const kedr_render_stats *st, int nk,
                      const int *kernels, int identical)
{
    kedr_file_writer w;
    if (kedr_file_begin(&w, o->json) != KEDR_OK)
        return fail(NULL);
    FILE *f = KEDR_FILE(&w);
    uint64_t rays = st->primary_rays + st->shadow_rays + st->secondary_rays;
    fprintf(f, "{\n  \"scene\": ");
    kedr_json_string(f, o->scene);
    fprintf(f, ",\n  \"backend\": \"%s\",\n  \"accel\": \"%s\",\n  \"triangle_test\": \"%s\",\n",
            kedr_backend_name(kedr_ctx_backend(ctx)), kedr_accel_name(ro->accel),
            ro->test == KEDR_TRI_WOOP ? "woop" : "moller");
    fprintf(f, "  \"width\": %d,\n  \"height\": %d,\n  \"spp\": %d,\n  \"depth\": %d,\n",
            ro->width, ro->height, ro->spp, ro->depth);
    fprintf(f, "  \"triangles\": %zu,\n  \"spheres\": %zu,\n  \"planes\": %zu,\n",
            si->triangles, si->spheres, si->planes);
    fprintf(f, "  \"lights\": %zu,\n", si->lights);
    fprintf(f, "  \"build_s\": %.6g,\n  \"accel_bytes\": %zu,\n  \"render_s\": %.6g,\n",
            st->build_seconds, st->accel_bytes, st->render_seconds);
    fprintf(f, "  \"rays\": {\"primary\": %llu, \"shadow\": %llu, \"secondary\": %llu},\n",
            (unsigned long long)st->primary_rays, (unsigned long long)st->shadow_rays,
            (unsigned long long)st->secondary_rays);
    fprintf(f, "  \"rays_per_s\": %.6g,\n",
            st->render_seconds > 0 ? (double)rays * o->repeats / st->render_seconds : 0);
    fprintf(f, "  \"repeats\": %d,\n  \"frame_clock\": \"%s\",\n  \"frames\": [", o->repeats,
            kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA
                ? "median of the repeats; CUDA events from the frame's first kernel to the "
                  "image in device memory (no upload, no download)"
                : "median of the repeats; wall clock of the frame");
    for (int k = 0; k < nk; k++) {
        fprintf(f, "%s\n    ", k ? "," : "");
        json_frame(f, kernels[k], &st[k]);
    }
    fprintf(f, "\n  ]");
    if (nk == 2)
        fprintf(f, ",\n  \"images_identical\": %s", identical ? "true" : "false");
    fprintf(f, "\n}\n");
    if (kedr_file_commit(&w) != KEDR_OK)
        return fail(NULL);
    return 0;
}

int cmd_render(int argc, char **argv)
{
    render_cli o;
    parse(argc, argv, &o);
    char out[256];
    if (!o.out) {
        default_out(o.scene, out, sizeof out);
        o.out = out;
    }
    if (kedr_file_check_writable(o.out) != KEDR_OK)
        return fail("--out");
    if (o.json && kedr_file_check_writable(o.json) != KEDR_OK)
        return fail("--json");
    kedr_render_scene *s = NULL;
    if (kedr_render_scene_load(o.scene, &s) != KEDR_OK)
        return fail(NULL);
    kedr_render_scene_info si;
    kedr_render_scene_get_info(s, &si);
    kedr_render_options ro = {si.width, si.height, si.spp, si.depth, si.accel, o.test,
                              KEDR_RENDER_MEGA, o.repeats};
    if (o.width)
        ro.width = o.width, ro.height = o.height;
    if (o.spp > 0)
        ro.spp = o.spp;
    if (o.depth >= 0)
        ro.depth = o.depth;
    if (o.accel_set)
        ro.accel = o.accel;
    size_t pixels = (size_t)ro.width * ro.height;
    int nk = o.kernel == KERNEL_BOTH ? 2 : 1;
    int kernels[2] = {o.kernel == KERNEL_BOTH ? KEDR_RENDER_MEGA : o.kernel, KEDR_RENDER_WAVE};
    float *rgb[2] = {malloc(pixels * 3 * sizeof(float)),
                     nk == 2 ? malloc(pixels * 3 * sizeof(float)) : NULL};
    if (!rgb[0] || (nk == 2 && !rgb[1])) {
        free(rgb[0]), free(rgb[1]);
        kedr_render_scene_destroy(s);
        fprintf(stderr, "kedr render: out of host memory for a %dx%d image\n", ro.width, ro.height);
        return CLI_EXIT_FAIL;
    }
    if (o.com.backend == KEDR_BACKEND_AUTO && ro.accel != KEDR_ACCEL_BVH &&
        ro.accel != KEDR_ACCEL_LBVH)
        o.com.backend = KEDR_BACKEND_CPU; /* the GPU traverses BVHs only */
    kedr_ctx *ctx = cli_context(&o.com, "render");
    printf("scene %s: %zu triangles, %zu spheres, %zu planes, %zu lights", o.scene, si.triangles,
           si.spheres, si.planes, si.lights);
    if (si.skipped_nonfinite || si.skipped_degenerate)
        printf(" (skipped: %zu faces with NaN or infinite vertices, %zu of zero area)",
               si.skipped_nonfinite, si.skipped_degenerate);
    printf("\nrendering %dx%d, %d spp, depth %d, %s (%s test) on %s\n", ro.width, ro.height, ro.spp,
           ro.depth, kedr_accel_name(ro.accel), ro.test == KEDR_TRI_WOOP ? "woop" : "moller",
           kedr_backend_name(kedr_ctx_backend(ctx)));
    fflush(stdout);
    kedr_render_stats st[2];
    int rc = 0, identical = 1;
    for (int k = 0; k < nk && rc == 0; k++) {
        ro.kernel = (kedr_render_kernel)kernels[k];
        if (kedr_render(ctx, s, &ro, rgb[k], NULL, &st[k]) != KEDR_OK) {
            rc = fail(NULL);
            break;
        }
        char mem[32];
        const kedr_render_stats *t = &st[k];
        uint64_t rays = t->primary_rays + t->shadow_rays + t->secondary_rays;
        if (k == 0)
            printf("build    %.3f s, %s\n", t->build_seconds,
                   kedr_format_bytes((double)t->accel_bytes, mem, sizeof mem));
        printf("render   %.3f s%s: %llu primary, %llu shadow, %llu secondary rays%s, %.3g rays/s\n",
               t->render_seconds, o.repeats > 1 ? " (every frame, uploads included)" : "",
               (unsigned long long)t->primary_rays, (unsigned long long)t->shadow_rays,
               (unsigned long long)t->secondary_rays, o.repeats > 1 ? " a frame" : "",
               t->render_seconds > 0 ? (double)rays * o.repeats / t->render_seconds : 0);
        double f = t->frame_seconds;
        printf("frame    %s: %.6f s (median of %d), %.3g rays/s: %.3g primary, %.3g shadow, "
               "%.3g secondary a second\n", kernel_name(kernels[k]), f, o.repeats,
               f > 0 ? rays / f : 0, f > 0 ? t->primary_rays / f : 0,
               f > 0 ? t->shadow_rays / f : 0, f > 0 ? t->secondary_rays / f : 0);
    }
    if (rc == 0 && nk == 2) {
        size_t diff = 0;
        for (size_t i = 0; i < pixels; i++)
            diff += memcmp(rgb[0] + 3 * i, rgb[1] + 3 * i, 3 * sizeof(float)) != 0;
        identical = diff == 0;
        if (identical) {
            printf("images   mega and wave identical, bit for bit; wave/mega frame time %.3f\n",
                   st[0].frame_seconds > 0 ? st[1].frame_seconds / st[0].frame_seconds : 0);
        } else {
            fprintf(stderr, "kedr render: the wave kernels' image differs from the megakernel's "
                    "on %zu of %zu pixels\n", diff, pixels);
            rc = CLI_EXIT_FAIL;
        }
    }
    if (rc == 0 || !identical) {
        if (kedr_render_write_png(o.out, rgb[0], ro.width, ro.height) != KEDR_OK)
            rc = fail(NULL);
        else
            printf("wrote %s\n", o.out);
        if (o.json && write_json(&o, &ro, ctx, &si, st, nk, kernels, identical) != 0)
            rc = CLI_EXIT_FAIL;
    }
    free(rgb[0]);
    free(rgb[1]);
    kedr_ctx_destroy(ctx);
    kedr_render_scene_destroy(s);
    return rc;
}

int cmd_bench_render(int argc, char **argv) { return render_bench_main(argc, argv); }
