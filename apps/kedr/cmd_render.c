/* kedr render SCENE.ini: ray traces a scene (Whitted shading over a grid, kd-tree or BVH) into a
 * PNG image, prints the build and render times and rays per second, and with --json writes them
 * as a record. kedr bench render lives in bench/render_bench.c. */
#include "cli.h"

#include "kedr/render.h"
#include "render_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *scene, *out, *json;
    int width, height, spp, depth, accel_set;
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
           "  --accel grid|kdtree|bvh|lbvh|brute  the accelerator (overrides [render] accel); the\n"
           "                         GPU traverses BVHs only: with another, auto means cpu\n"
           "  --test moller|woop     the ray-triangle test (default moller)\n"
           "  --size WxH             image size in pixels (overrides [render] width, height)\n"
           "  --spp N                samples per pixel (overrides [render] spp)\n"
           "  --depth N              reflection/refraction bounces (overrides [render] depth)\n"
           "  --out FILE.png         the image (default: the scene's name with .png, here)\n"
           "  --json FILE            the timings and ray counts as JSON\n"
           CLI_COMMON_HELP);
}

static int is_opt(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == 0 || a[n] == '=');
}

static void parse(int argc, char **argv, render_cli *o)
{
    const char *cmd = "render";
    memset(o, 0, sizeof *o);
    o->com.backend = KEDR_BACKEND_AUTO;
    o->spp = o->depth = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help();
            exit(0);
        }
        if (cli_common_option(argc, argv, &i, &o->com, cmd))
            continue;
        if (is_opt(a, "--accel")) {
            const char *v = cli_value(argc, argv, &i, cmd);
            if (kedr_accel_parse(v, &o->accel) != KEDR_OK)
                cli_usage_error(cmd, "--accel %s: expected grid, kdtree, bvh, lbvh or brute", v);
            o->accel_set = 1;
        } else if (is_opt(a, "--test")) {
            const char *v = cli_value(argc, argv, &i, cmd);
            if (strcmp(v, "moller") == 0)
                o->test = KEDR_TRI_MOLLER;
            else if (strcmp(v, "woop") == 0)
                o->test = KEDR_TRI_WOOP;
            else
                cli_usage_error(cmd, "--test %s: expected moller or woop", v);
        } else if (is_opt(a, "--size")) {
            const char *v = cli_value(argc, argv, &i, cmd);
            char tail;
            if (sscanf(v, "%dx%d%c", &o->width, &o->height, &tail) != 2 || o->width < 1 ||
                o->height < 1 || o->width > 65536 || o->height > 65536)
                cli_usage_error(cmd, "--size %s: expected WxH, each 1 to 65536 (e.g. 1920x1080)",
                                v);
        } else if (is_opt(a, "--spp")) {
            o->spp = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 4096, "--spp", cmd);
        } else if (is_opt(a, "--depth")) {
            o->depth = (int)cli_int(cli_value(argc, argv, &i, cmd), 0, 64, "--depth", cmd);
        } else if (is_opt(a, "--out")) {
            o->out = cli_value(argc, argv, &i, cmd);
        } else if (is_opt(a, "--json")) {
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

static int write_json(const render_cli *o, const kedr_render_options *ro, kedr_ctx *ctx,
                      const kedr_render_scene_info *si, const kedr_render_stats *st)
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
    fprintf(f, "  \"rays_per_s\": %.6g\n}\n",
            st->render_seconds > 0 ? rays / st->render_seconds : 0);
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
    kedr_render_options ro = {si.width, si.height, si.spp, si.depth, si.accel, o.test};
    if (o.width)
        ro.width = o.width, ro.height = o.height;
    if (o.spp > 0)
        ro.spp = o.spp;
    if (o.depth >= 0)
        ro.depth = o.depth;
    if (o.accel_set)
        ro.accel = o.accel;
    size_t pixels = (size_t)ro.width * ro.height;
    float *rgb = malloc(pixels * 3 * sizeof *rgb);
    if (!rgb) {
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
    kedr_render_stats st;
    int rc = 0;
    if (kedr_render(ctx, s, &ro, rgb, NULL, &st) != KEDR_OK) {
        rc = fail(NULL);
    } else {
        char mem[32];
        uint64_t rays = st.primary_rays + st.shadow_rays + st.secondary_rays;
        printf("build    %.3f s, %s\n", st.build_seconds,
               kedr_format_bytes((double)st.accel_bytes, mem, sizeof mem));
        printf("render   %.3f s: %llu primary, %llu shadow, %llu secondary rays, %.3g rays/s\n",
               st.render_seconds, (unsigned long long)st.primary_rays,
               (unsigned long long)st.shadow_rays, (unsigned long long)st.secondary_rays,
               st.render_seconds > 0 ? rays / st.render_seconds : 0);
        if (kedr_render_write_png(o.out, rgb, ro.width, ro.height) != KEDR_OK)
            rc = fail(NULL);
        else
            printf("wrote %s\n", o.out);
        if (rc == 0 && o.json)
            rc = write_json(&o, &ro, ctx, &si, &st);
    }
    free(rgb);
    kedr_ctx_destroy(ctx);
    kedr_render_scene_destroy(s);
    return rc;
}

int cmd_bench_render(int argc, char **argv) { return render_bench_main(argc, argv); }
