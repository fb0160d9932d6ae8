/* kedr bench render: build time and rays per second of primary, shadow and secondary
 * (reflection) rays for each accelerator, on procedural terrains of 10^3 to 10^6 triangles
 * (--max-triangles for more) seen from above at 1920x1080; the GPU's BVH traversal on the same
 * rays when a GPU is there, of the cpu's BVH (its build time the cpu's) and of the LBVH the GPU
 * builds (with the GPU's build alone, by CUDA events, in the column 'device s'); and
 * Embree 3 on the same rays and all cores where the build has it (the yardstick of
 * docs/render.md). Every kind of ray is timed as one batch: the median of --repeats after a
 * warm-up (device events on the GPU, so its times exclude copies).
 *
 * With --frames DIR: whole frames of kedr_render instead, for every scene file in DIR (the
 * shipped ones: cases/render), each rendered by one kernel (KEDR_RENDER_MEGA) and in waves
 * (KEDR_RENDER_WAVE), the median frame time of --repeats, rays/s of each kind, and the two
 * images compared bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include "render_bench.h"

#include "bench_util.h"
#include "kedr/render.h"
#include "render/accel.h"
#include "render/scene.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef KEDR_HAVE_EMBREE
#include <embree3/rtcore.h>
#endif

typedef struct {
    kedr_ray *primary, *shadow, *secondary;
    kedr_hit *hits;
    uint8_t *occ;
    size_t n;
} ray_set;

typedef struct {
    kedr_ctx *ctx;
    kedr_accel *a;
    const ray_set *r; /* in the context's memory */
    int kind;         /* 0 primary, 1 shadow, 2 secondary */
} trace_job;

/* With --cpu-time: the median of the calling thread's cpu time over repeats, after a warm-up
 * (one thread: the parallel loops run on the caller). On a machine shared with other work the
 * wall clock measures the others' load as much as the code; the thread's cpu time does not. */
static kedr_status time_cpu(kedr_status (*call)(void *), void *arg, int repeats, double *seconds)
{
    double t[64];
    repeats = repeats < 64 ? repeats : 64;
    kedr_status s = call(arg);
    for (int r = 0; r < repeats && s == KEDR_OK; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        s = call(arg);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        t[r] = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    }
    if (s == KEDR_OK)
        *seconds = bench_median(t, repeats);
    return s;
}

static kedr_status run_job(void *arg)
{
    trace_job *j = arg;
    if (j->kind == 1)
        return kedr_accel_occluded_on(j->ctx, j->a, j->r->shadow, j->r->n, j->r->occ);
    return kedr_accel_intersect_on(j->ctx, j->a, j->kind ? j->r->secondary : j->r->primary,
                                   j->r->n, j->r->hits);
}

/* The ray set's copy on a GPU. */
static kedr_status to_device(kedr_ctx *g, const ray_set *h, ray_set *d)
{
    size_t rb = h->n * sizeof(kedr_ray);
    memset(d, 0, sizeof *d);
    d->n = h->n;
    KEDR_TRY(kedr_alloc(g, (void **)&d->primary, rb));
    KEDR_TRY(kedr_alloc(g, (void **)&d->shadow, rb));
    KEDR_TRY(kedr_alloc(g, (void **)&d->secondary, rb));
    KEDR_TRY(kedr_alloc(g, (void **)&d->hits, h->n * sizeof(kedr_hit)));
    KEDR_TRY(kedr_alloc(g, (void **)&d->occ, h->n));
    KEDR_TRY(kedr_upload(g, d->primary, h->primary, rb));
    KEDR_TRY(kedr_upload(g, d->shadow, h->shadow, rb));
    return kedr_upload(g, d->secondary, h->secondary, rb);
}

static void free_device(kedr_ctx *g, ray_set *d)
{
    kedr_free(g, d->primary), kedr_free(g, d->shadow), kedr_free(g, d->secondary);
    kedr_free(g, d->hits), kedr_free(g, d->occ);
}

/* Primary rays of a camera above the terrain; shadow and reflection rays from their hits (rays
 * that miss keep a copy of the primary ray, so every batch has n rays). */
static void make_rays(const kedr_accel *a, const float *tris, int stadium, int w, int h,
                      ray_set *r)
{
    rvec eye = rv(-0.2f, 0.6f, -0.2f), look = rv(0.5f, 0, 0.5f), up = rv(0, 1, 0);
    if (stadium) { /* the teapot fills the middle of the picture, the stands the rest */
        eye = rv(0, 5, 12);
        look = rv(0, 1, 0);
    }
    rvec f = rv_norm(rv_sub(look, eye)), right = rv_norm(rv_cross(f, up)), u = rv_cross(right, f);
    float th = tanf(25 * (float)M_PI / 180);
    rvec light = stadium ? rv(40, 60, 40) : rv(-3, 4, 2);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float px = (2 * (x + 0.5f) / w - 1) * th * w / h, py = (1 - 2 * (y + 0.5f) / h) * th;
            rvec d = rv_add(f, rv_add(rv_mul(right, px), rv_mul(u, py)));
            r->primary[(size_t)y * w + x] = (kedr_ray){{eye.x, eye.y, eye.z}, 0, {d.x, d.y, d.z},
                                                       INFINITY};
        }
    kedr_accel_intersect(a, r->primary, r->n, r->hits);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < r->n; i++) {
        r->shadow[i] = r->secondary[i] = r->primary[i];
        if (r->hits[i].prim < 0)
            continue;
        const kedr_ray *p = &r->primary[i];
        const float *t = tris + (size_t)r->hits[i].prim * 9;
        rvec n = rv_norm(rv_cross(rv_sub(rv_load(t + 3), rv_load(t)),
                                  rv_sub(rv_load(t + 6), rv_load(t))));
        rvec d = rv_load(p->d);
        if (rv_dot(n, d) > 0)
            n = rv_mul(n, -1);
        rvec q = rv_add(rv_add(rv_load(p->o), rv_mul(d, r->hits[i].t)), rv_mul(n, 1e-4f));
        rvec l = rv_sub(light, q), refl = render_reflect(d, rv_norm(n));
        r->shadow[i] = (kedr_ray){{q.x, q.y, q.z}, 0, {l.x, l.y, l.z}, 1};
        r->secondary[i] = (kedr_ray){{q.x, q.y, q.z}, 0, {refl.x, refl.y, refl.z}, INFINITY};
    }
}

#ifdef KEDR_HAVE_EMBREE
typedef struct {
    RTCScene scene;
    const ray_set *r;
    int kind;
} embree_job;

static kedr_status embree_run(void *arg)
{
    embree_job *j = arg;
    const kedr_ray *rays = j->kind == 0 ? j->r->primary : j->kind == 1 ? j->r->shadow
                                                                        : j->r->secondary;
#pragma omp parallel for schedule(dynamic, 1024)
    for (size_t i = 0; i < j->r->n; i++) {
        struct RTCIntersectContext c;
        rtcInitIntersectContext(&c);
        struct RTCRayHit rh;
        const kedr_ray *q = &rays[i];
        rh.ray.org_x = q->o[0], rh.ray.org_y = q->o[1], rh.ray.org_z = q->o[2];
        rh.ray.dir_x = q->d[0], rh.ray.dir_y = q->d[1], rh.ray.dir_z = q->d[2];
        rh.ray.tnear = q->tmin, rh.ray.tfar = q->tmax, rh.ray.time = 0;
        rh.ray.mask = 0xFFFFFFFFu, rh.ray.id = 0, rh.ray.flags = 0;
        if (j->kind == 1) {
            rtcOccluded1(j->scene, &c, &rh.ray);
            j->r->occ[i] = rh.ray.tfar < 0;
        } else {
            rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
            rtcIntersect1(j->scene, &c, &rh);
            j->r->hits[i].prim = rh.hit.geomID == RTC_INVALID_GEOMETRY_ID ? -1 : (int)rh.hit.primID;
            j->r->hits[i].t = rh.ray.tfar;
        }
    }
    return KEDR_OK;
}

static RTCScene embree_scene(RTCDevice dev, const float *tris, size_t n, double *build_s)
{
    double t0 = kedr_wall_seconds();
    RTCScene scene = rtcNewScene(dev);
    RTCGeometry g = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_TRIANGLE);
    float *v = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                       3 * sizeof(float), n * 3);
    unsigned *idx = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                            3 * sizeof(unsigned), n);
    memcpy(v, tris, n * 9 * sizeof(float));
    for (size_t i = 0; i < n * 3; i++)
        idx[i] = (unsigned)i;
    rtcCommitGeometry(g);
    rtcAttachGeometry(scene, g);
    rtcReleaseGeometry(g);
    rtcCommitScene(scene);
    *build_s = kedr_wall_seconds() - t0;
    return scene;
}
#endif

/* The GPU's LBVH build alone (kedr_accel_info.device_build_seconds: CUDA events from the
 * triangles in device memory to the tree there), the median of `repeats` builds after a first
 * (which fills the context's scratch cache). */
static kedr_status device_build_time(kedr_ctx *gpu, const float *tris, size_t n, int repeats,
                                     double *seconds)
{
    double t[64];
    repeats = repeats < 64 ? repeats : 64;
    for (int r = -1; r < repeats; r++) {
        kedr_accel *a = NULL;
        KEDR_TRY(kedr_accel_build_on(gpu, KEDR_ACCEL_LBVH, KEDR_TRI_MOLLER, tris, n, &a));
        kedr_accel_info info;
        kedr_accel_get_info(a, &info);
        kedr_accel_destroy(a);
        if (r >= 0)
            t[r] = info.device_build_seconds;
    }
    *seconds = bench_median(t, repeats);
    return KEDR_OK;
}

static void help(void)
{
    printf("usage: kedr bench render [options]\n\n"
           "Build time and primary, shadow and secondary rays per second of the grid, kd-tree\n"
           "(stack and branch-free traversals), BVH and LBVH on procedural terrains of\n"
           "10^3 .. --max-triangles triangles and on the teapot in a stadium, and of Embree on\n"
           "the same rays where this build has it.\n\n"
           "options:\n"
           "  --max-triangles N  the largest scene (default 1000000; 10^7 needs ~6 GB)\n"
           "  --min-triangles N  the smallest terrain (default 1000): the terrains are\n"
           "                     N, 10 N, .. up to --max-triangles\n"
           "  --size WxH         rays per batch as an image (default 1920x1080)\n"
           "  --repeats N        timed repeats, the median reported (default 3)\n"
           "  --accel LIST       the cpu accelerators to time, e.g. kdtree,kdtree-bf (default\n"
           "                     all: grid, kdtree, kdtree-bf, bvh, lbvh)\n"
           "  --backend cpu|cuda|auto  with cuda (auto: when a GPU is present), also the GPU's\n"
           "                     traversal of the cpu's BVH (bvh-cuda) and of the LBVH it builds\n"
           "                     itself (lbvh-cuda) on the same rays; for lbvh-cuda the\n"
           "                     column 'device s' is the GPU's build alone (CUDA events, the\n"
           "                     triangles in device memory in, the tree there out), the\n"
           "                     median of --repeats builds after a first\n"
           "  --cpu-time         the cpu rows and Embree on one thread, timed by that thread's\n"
           "                     cpu time (for a machine shared with other work)\n"
           "  --json FILE        the record\n"
           "  --frames DIR       whole frames instead: every DIR/*.ini scene (e.g.\n"
           "                     cases/render) rendered at --size by one kernel and in waves\n"
           "                     (kedr render --kernel), the median frame time of --repeats,\n"
           "                     rays/s of each kind, the images compared bit for bit; on the\n"
           "                     GPU with --backend cuda or auto, with the BVH (the scene's\n"
           "                     accel if lbvh)\n");
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --frames: returns 0, 1 (a failed render, or images that differ) or 2 (no scene). */
static int frames_bench(const char *dir, int w, int h, int repeats, kedr_backend backend,
                        const char *json)
{
    char *names[256];
    int nn = 0;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "kedr bench render: --frames %s: cannot open the directory\n", dir);
        return 2;
    }
    for (struct dirent *e; (e = readdir(d)) && nn < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".ini") == 0)
            names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)nn, sizeof names[0], cmp_names);
    if (!nn) {
        fprintf(stderr, "kedr bench render: --frames %s: no .ini scene file there\n", dir);
        return 2;
    }
    if (backend == KEDR_BACKEND_AUTO)
        backend = kedr_backend_available(KEDR_BACKEND_CUDA) ? KEDR_BACKEND_CUDA : KEDR_BACKEND_CPU;
    kedr_ctx *ctx = NULL;
    if (kedr_ctx_create(&ctx, backend, 0) != KEDR_OK) {
        fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
        for (int i = 0; i < nn; i++)
            free(names[i]);
        return 1;
    }
    char device[256], date[64];
    bench_device_name(ctx, device, sizeof device);
    bench_utc_date(date, sizeof date);
    kedr_file_writer jw;
    FILE *jf = NULL;
    int rc = 0, first = 1;
    if (json) {
        bench_meta m = {"render-frames", device, kedr_backend_name(backend), date,
                        bench_commit(KEDR_GIT_COMMIT)};
        if (bench_json_open(&jw, json, &m) != KEDR_OK) {
            fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
            rc = 1;
        } else {
            jf = KEDR_FILE(&jw);
            fprintf(jf, ",\n  \"width\": %d,\n  \"height\": %d,\n  \"repeats\": %d,\n"
                    "  \"frame_clock\": \"kedr_render_stats.frame_seconds, the median of the "
                    "repeats: on cuda CUDA events from a frame's first kernel to its image in "
                    "device memory; on the cpu the frame's wall time\",\n  \"results\": [",
                    w, h, repeats);
        }
    }
    printf("kedr bench render --frames %s on %s (%s), %dx%d, median of %d frames\n", dir, device,
           kedr_backend_name(backend), w, h, repeats);
    printf("%-12s %9s %5s %4s %-5s %10s %11s %11s %11s %11s %s\n", "scene", "triangles", "spp",
           "dep", "kern", "frame s", "rays/s", "primary/s", "shadow/s", "second./s", "image");
    size_t pixels = (size_t)w * h;
    float *rgb[2] = {malloc(pixels * 3 * sizeof(float)), malloc(pixels * 3 * sizeof(float))};
    if (!rgb[0] || !rgb[1]) {
        fprintf(stderr, "kedr bench render: out of host memory for a %dx%d image\n", w, h);
        rc = 1;
    }
    for (int i = 0; i < nn && rc != 2 && rgb[0] && rgb[1]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        kedr_render_scene *s = NULL;
        if (kedr_render_scene_load(path, &s) != KEDR_OK) {
            fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
            rc = 1;
            continue;
        }
        kedr_render_scene_info si;
        kedr_render_scene_get_info(s, &si);
        kedr_accel_kind accel = si.accel == KEDR_ACCEL_LBVH ? KEDR_ACCEL_LBVH : KEDR_ACCEL_BVH;
        kedr_render_stats st[2];
        int ok = 1;
        for (int k = 0; k < 2 && ok; k++) {
            kedr_render_options o = {w, h, si.spp, si.depth, accel, KEDR_TRI_MOLLER,
                                     (kedr_render_kernel)k, repeats};
            if (kedr_render(ctx, s, &o, rgb[k], NULL, &st[k]) != KEDR_OK) {
                fprintf(stderr, "kedr bench render: %s: %s\n", path, kedr_last_error());
                ok = 0;
                rc = 1;
            }
        }
        size_t diff = 0;
        for (size_t p = 0; ok && p < pixels; p++)
            diff += memcmp(rgb[0] + 3 * p, rgb[1] + 3 * p, 3 * sizeof(float)) != 0;
        if (diff)
            rc = 1;
        for (int k = 0; k < 2 && ok; k++) {
            const kedr_render_stats *t = &st[k];
            double f = t->frame_seconds;
            uint64_t rays = t->primary_rays + t->shadow_rays + t->secondary_rays;
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(strlen(names[i]) - 4), names[i]);
            char verdict[64] = "";
            if (k == 1)
                snprintf(verdict, sizeof verdict, diff ? "%zu pixels differ" : "identical", diff);
            printf("%-12s %9zu %5d %4d %-5s %10.5f %11.4g %11.4g %11.4g %11.4g %s\n", name,
                   si.triangles, si.spp, si.depth, k ? "wave" : "mega", f,
                   f > 0 ? rays / f : 0, f > 0 ? t->primary_rays / f : 0,
                   f > 0 ? t->shadow_rays / f : 0, f > 0 ? t->secondary_rays / f : 0, verdict);
            if (jf) {
                fprintf(jf, "%s\n    {\"scene\": \"%s\", \"triangles\": %zu, \"spp\": %d, "
                        "\"depth\": %d, \"accel\": \"%s\", \"kernel\": \"%s\", "
                        "\"build_s\": %.6g, \"frame_s\": %.6g, \"primary\": %llu, "
                        "\"shadow\": %llu, \"secondary\": %llu, \"rays_per_s\": %.6g, "
                        "\"images_identical\": %s", first ? "" : ",", name, si.triangles, si.spp,
                        si.depth, kedr_accel_name(accel), k ? "wave" : "mega", t->build_seconds,
                        f, (unsigned long long)t->primary_rays,
                        (unsigned long long)t->shadow_rays,
                        (unsigned long long)t->secondary_rays, f > 0 ? rays / f : 0,
                        diff ? "false" : "true");
                bench_json_status(jf, diff ? "fail" : "ok", diff ? "images differ" : NULL);
                fprintf(jf, "}");
                first = 0;
            }
        }
        fflush(stdout);
        kedr_render_scene_destroy(s);
    }
    if (jf && bench_json_close(&jw) != KEDR_OK) {
        fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
        rc = 1;
    }
    free(rgb[0]), free(rgb[1]);
    for (int i = 0; i < nn; i++)
        free(names[i]);
    kedr_ctx_destroy(ctx);
    return rc;
}

int render_bench_main(int argc, char **argv)
{
    size_t max_tris = 1000000, min_tris = 1000;
    int w = 1920, h = 1080, repeats = 3, cpu_time = 0;
    const char *json = NULL, *frames = NULL;
    kedr_backend backend = KEDR_BACKEND_AUTO;
    int want[KEDR_ACCEL_KDTREE_BF + 1] = {0, 1, 1, 1, 1, 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            return 0;
        } else if (!strcmp(a, "--max-triangles") && i + 1 < argc) {
            max_tris = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--min-triangles") && i + 1 < argc) {
            min_tris = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--size") && i + 1 < argc) {
            if (sscanf(argv[++i], "%dx%d", &w, &h) != 2 || w < 1 || h < 1 || w > 16384 ||
                h > 16384) {
                fprintf(stderr, "kedr bench render: --size %s: expected WxH\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--repeats") && i + 1 < argc) {
            repeats = atoi(argv[++i]);
        } else if (!strcmp(a, "--accel") && i + 1 < argc) {
            char list[256], *save = NULL;
            snprintf(list, sizeof list, "%s", argv[++i]);
            memset(want, 0, sizeof want);
            for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                kedr_accel_kind k;
                if (kedr_accel_parse(t, &k) != KEDR_OK) {
                    fprintf(stderr, "kedr bench render: --accel: %s\n", kedr_last_error());
                    return 2;
                }
                want[k] = 1;
            }
        } else if (!strcmp(a, "--backend") && i + 1 < argc) {
            if (kedr_backend_parse(argv[++i], &backend) != KEDR_OK) {
                fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
                return 2;
            }
        } else if (!strcmp(a, "--cpu-time")) {
            cpu_time = 1;
        } else if (!strcmp(a, "--json") && i + 1 < argc) {
            json = argv[++i];
        } else if (!strcmp(a, "--frames") && i + 1 < argc) {
            frames = argv[++i];
        } else {
            fprintf(stderr, "kedr bench render: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (repeats < 1 || max_tris < 1000 || min_tris < 1000 || min_tris > max_tris) {
        fprintf(stderr, "kedr bench render: --repeats >= 1 and 1000 <= --min-triangles <= "
                "--max-triangles expected\n");
        return 2;
    }
    if (frames) {
        if (repeats > 1000) {
            fprintf(stderr, "kedr bench render: --repeats %d: at most 1000 with --frames\n",
                    repeats);
            return 2;
        }
        return frames_bench(frames, w, h, repeats, backend, json);
    }
    uint32_t treelet_min = 0;
    if (render_lbvh_treelet_min(&treelet_min) != KEDR_OK) {
        fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
        return 2;
    }
#ifdef _OPENMP
    if (cpu_time)
        omp_set_num_threads(1);
#endif
    kedr_ctx *ctx = NULL;
    if (kedr_ctx_create(&ctx, KEDR_BACKEND_CPU, 0) != KEDR_OK) {
        fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
        return 1;
    }
    kedr_ctx *gpu = NULL;
    if (backend == KEDR_BACKEND_CUDA ||
        (backend == KEDR_BACKEND_AUTO && kedr_backend_available(KEDR_BACKEND_CUDA))) {
        if (kedr_ctx_create(&gpu, KEDR_BACKEND_CUDA, 0) != KEDR_OK) {
            fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
            kedr_ctx_destroy(ctx);
            return 1;
        }
    }
    char device[256], date[64], gpu_name[256] = "";
    bench_device_name(ctx, device, sizeof device);
    if (gpu)
        bench_device_name(gpu, gpu_name, sizeof gpu_name);
    bench_utc_date(date, sizeof date);
    kedr_file_writer jw;
    FILE *jf = NULL;
    if (json) {
        bench_meta m = {"render", device, gpu ? "cpu+cuda" : "cpu", date,
                        bench_commit(KEDR_GIT_COMMIT)};
        if (bench_json_open(&jw, json, &m) != KEDR_OK) {
            fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
            kedr_ctx_destroy(gpu);
            kedr_ctx_destroy(ctx);
            return 1;
        }
        jf = KEDR_FILE(&jw);
        fprintf(jf, ",\n  \"width\": %d,\n  \"height\": %d,\n  \"clock\": \"%s\",\n"
                "  \"build_clock\": \"build_s: kedr_accel_build_on's wall time (input checks, "
                "host copy, upload and build); device_build_s (lbvh-cuda): the GPU's LBVH build "
                "alone, CUDA events from the triangles in device memory to the tree in device "
                "memory, the median of %d builds after a first\",\n"
                "  \"lbvh_treelet_min\": %u,\n  \"gpu\": ",
                w, h, cpu_time ? "thread-cpu (one thread)" : "wall", repeats, treelet_min);
        kedr_json_string(jf, gpu ? gpu_name : "");
        fprintf(jf, ",\n  \"results\": [");
    }
    ray_set r = {0};
    r.n = (size_t)w * h;
    r.primary = malloc(r.n * sizeof(kedr_ray));
    r.shadow = malloc(r.n * sizeof(kedr_ray));
    r.secondary = malloc(r.n * sizeof(kedr_ray));
    r.hits = malloc(r.n * sizeof(kedr_hit));
    r.occ = malloc(r.n);
    if (!r.primary || !r.shadow || !r.secondary || !r.hits || !r.occ) {
        fprintf(stderr, "kedr bench render: out of host memory for %zu rays\n", r.n);
        kedr_ctx_destroy(gpu);
        kedr_ctx_destroy(ctx);
        return 1;
    }
    char treelets[64] = "off";
    if (treelet_min)
        snprintf(treelets, sizeof treelets, "from %u triangles", treelet_min);
    printf("kedr bench render on %s%s%s, %dx%d rays a batch, median of %d%s; LBVH treelets %s "
           "(KEDR_LBVH_TREELET_MIN)\n", device, gpu ? " and " : "", gpu_name, w, h, repeats,
           cpu_time ? " (cpu rows and Embree: one thread, its cpu time)" : "", treelets);
    printf("%-10s %-9s %10s %10s %10s %12s %12s %12s\n", "triangles", "accel", "build s",
           "device s", "memory", "primary/s", "shadow/s", "second./s");
    int first = 1, rc = 0;
#ifdef KEDR_HAVE_EMBREE
    RTCDevice dev = rtcNewDevice(NULL);
#endif
    /* terrains of 10^3 .. max_tris triangles, then the teapot in a stadium (n = 0) */
    size_t sizes[16];
    int nsizes = 0;
    for (size_t n = min_tris; n <= max_tris && nsizes < 15; n *= 10)
        sizes[nsizes++] = n;
    sizes[nsizes++] = 0;
    for (int si = 0; si < nsizes && rc == 0; si++) {
        size_t n = sizes[si];
        kedr_render_scene *s = calloc(1, sizeof *s);
        render_xform x = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};
        render_xform pot = {{1, 0, 0, 0, 0, 1, 0, -1, 0}, {0, 0, 0}}; /* z up to y up */
        kedr_status made = !s ? KEDR_ERR_NOMEM
                           : n ? render_builtin_terrain(s, n, 7, &x, 0)
                               : render_builtin_stadium(s, 128, &x, 0);
        if (made == KEDR_OK && !n)
            made = render_builtin_teapot(s, 16, &pot, 0);
        if (made != KEDR_OK) {
            fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
            kedr_render_scene_destroy(s);
            rc = 1;
            break;
        }
        kedr_accel *ref = NULL;
        if (kedr_accel_build(KEDR_ACCEL_BVH, KEDR_TRI_MOLLER, s->mesh.v, s->mesh.n, &ref) !=
            KEDR_OK) {
            rc = 1;
            kedr_render_scene_destroy(s);
            break;
        }
        make_rays(ref, s->mesh.v, n == 0, w, h, &r);
        kedr_accel_destroy(ref);
        ray_set dr = {0};
        if (gpu && to_device(gpu, &r, &dr) != KEDR_OK) {
            fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
            rc = 1;
        }
        /* rows: grid, kd-tree (stack and branch-free traversals), BVH, LBVH on the cpu; the
         * cpu-built BVH and the GPU-built LBVH traced on the GPU; Embree */
        static const kedr_accel_kind row_kind[] = {KEDR_ACCEL_GRID, KEDR_ACCEL_KDTREE,
                                                   KEDR_ACCEL_KDTREE_BF, KEDR_ACCEL_BVH,
                                                   KEDR_ACCEL_LBVH, KEDR_ACCEL_BVH, KEDR_ACCEL_LBVH};
        for (int row = 0; row <= 7 && rc == 0; row++) {
            double build = 0, device_build = 0, rate[3] = {0, 0, 0};
            size_t bytes = 0;
            const char *name;
            if (row <= 6) {
                kedr_accel *a = NULL;
                int on_gpu = row >= 5;
                kedr_accel_kind ak = row_kind[row];
                if ((on_gpu && !gpu) || (!on_gpu && !want[ak]))
                    continue;
                name = row == 5 ? "bvh-cuda" : row == 6 ? "lbvh-cuda" : kedr_accel_name(ak);
                if (kedr_accel_build_on(row == 6 ? gpu : NULL, ak, KEDR_TRI_MOLLER, s->mesh.v,
                                        s->mesh.n, &a) != KEDR_OK) {
                    printf("%-10zu %-8s %s\n", s->mesh.n, name, kedr_last_error());
                    continue;
                }
                kedr_accel_info info;
                kedr_accel_get_info(a, &info);
                build = info.build_seconds;
                bytes = info.bytes;
                if (row == 6 && device_build_time(gpu, s->mesh.v, s->mesh.n, repeats,
                                                  &device_build) != KEDR_OK)
                    fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
                for (int k = 0; k < 3; k++) {
                    trace_job j = {on_gpu ? gpu : ctx, a, on_gpu ? &dr : &r, k};
                    double sec;
                    kedr_status ts = cpu_time && !on_gpu
                                         ? time_cpu(run_job, &j, repeats, &sec)
                                         : bench_time(j.ctx, run_job, &j, repeats, &sec);
                    if (ts == KEDR_OK)
                        rate[k] = r.n / sec;
                    else
                        fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
                }
                kedr_accel_destroy(a);
            } else {
#ifdef KEDR_HAVE_EMBREE
                name = "embree";
                RTCScene scene = embree_scene(dev, s->mesh.v, s->mesh.n, &build);
                for (int k = 0; k < 3; k++) {
                    embree_job j = {scene, &r, k};
                    double sec;
                    if ((cpu_time ? time_cpu(embree_run, &j, repeats, &sec)
                                  : bench_time(ctx, embree_run, &j, repeats, &sec)) == KEDR_OK)
                        rate[k] = r.n / sec;
                }
                rtcReleaseScene(scene);
#else
                continue;
#endif
            }
            char mem[32];
            char dev[32] = "-";
            if (device_build > 0)
                snprintf(dev, sizeof dev, "%.5f", device_build);
            printf("%-10zu %-9s %10.4f %10s %10s %12.4g %12.4g %12.4g%s\n", s->mesh.n, name,
                   build, dev, bytes ? kedr_format_bytes((double)bytes, mem, sizeof mem) : "-",
                   rate[0], rate[1], rate[2], n ? "" : "  (teapot in a stadium)");
            fflush(stdout);
            if (jf) {
                fprintf(jf, "%s\n    {\"scene\": \"%s\", \"triangles\": %zu, \"accel\": \"%s\", "
                        "\"build_s\": %.6g, \"device_build_s\": %.6g, "
                        "\"bytes\": %zu, \"primary_per_s\": %.6g, \"shadow_per_s\": %.6g, "
                        "\"secondary_per_s\": %.6g", first ? "" : ",", n ? "terrain" : "stadium",
                        s->mesh.n, name, build, device_build,
                        bytes, rate[0], rate[1], rate[2]);
                bench_json_status(jf, "ok", NULL);
                fprintf(jf, "}");
                first = 0;
            }
        }
        if (gpu)
            free_device(gpu, &dr);
        kedr_render_scene_destroy(s);
    }
#ifdef KEDR_HAVE_EMBREE
    rtcReleaseDevice(dev);
#else
    printf("(Embree: not in this build; cmake/deps/render.cmake finds it)\n");
#endif
    if (jf && bench_json_close(&jw) != KEDR_OK) {
        fprintf(stderr, "kedr bench render: %s\n", kedr_last_error());
        rc = 1;
    }
    free(r.primary), free(r.shadow), free(r.secondary), free(r.hits), free(r.occ);
    kedr_ctx_destroy(gpu);
    kedr_ctx_destroy(ctx);
    return rc;
}
