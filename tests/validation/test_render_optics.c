/* kedr render against geometry and optics known exactly:
 * - a sphere's pixel coverage against the area of its projected disc: a sphere of radius r at
 *   distance D from a pinhole subtends a cone of half-angle asin(r / D), which meets the image
 *   plane in a disc of radius tan(asin(r / D)) / tan(fov / 2) half-heights. The pixels whose
 *   centres it covers differ from its area by less than half its perimeter in pixels (a pixel
 *   counts or not only within half a pixel of the edge); the sphere is also rendered as a
 *   tessellated mesh with every accelerator, whose coverage must agree with the inscribed
 *   polygon's.
 * - a shadow's position: a point light on the axis above a sphere over a plane casts a round
 *   shadow of radius H tan(asin(r / (H - h))) on the plane; pixels seeing the plane more than
 *   SHADOW_MARGIN inside it must show only ambient light, and pixels more than SHADOW_MARGIN
 *   outside it must be lit.
 * - reflection and refraction: the mirror direction keeps the angle to the normal, the
 *   refracted direction obeys Snell's law n1 sin i = n2 sin t (total internal reflection past
 *   the critical angle), and the Fresnel reflectance matches the s and p formulas evaluated in
 *   double, ((n1 - n2) / (n1 + n2))^2 at normal incidence and zero p reflectance at Brewster's
 *   angle (Born & Wolf, Principles of Optics, sec. 1.5). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "kedr/render.h"
#include "render/render_cuda.h"
#include "render/scene.h"

#include <stdlib.h>
#include <unistd.h>

#define SHADOW_MARGIN 0.05

static char dir[64];

static kedr_render_scene *load(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    kedr_render_scene *s = NULL;
    TU_OK(kedr_render_scene_load(path, &s));
    if (!s)
        exit(1);
    return s;
}

static void check_sphere_coverage(kedr_ctx *ctx)
{
    const int w = (int)tu_scale(400, 160), h = w;
    kedr_render_scene *s = load("sphere.ini", "[camera]\neye = 0 0 10\nlook_at = 0 0 0\nfov = 30\n"
                                              "[material.m]\n[sphere.s]\ncenter = 0 0 0\n"
                                              "radius = 1\nmaterial = m\n"
                                              "[light.l]\nposition = 5 5 5\n");
    float *rgb = tu_host_alloc((size_t)w * h * 3 * sizeof(float));
    int32_t *ids = tu_host_alloc((size_t)w * h * sizeof(int32_t));
    kedr_render_options o = {.width = w, .height = h, .spp = 1, .depth = 0, .accel = KEDR_ACCEL_BVH, .test = KEDR_TRI_MOLLER};
    TU_OK(kedr_render(ctx, s, &o, rgb, ids, NULL));
    size_t count = 0;
    for (size_t i = 0; i < (size_t)w * h; i++)
        count += ids[i] == 0;
    double rho = tan(asin(1.0 / 10)) / tan(15 * M_PI / 180) * h / 2;
    double area = M_PI * rho * rho;
    TU_CHECK(fabs(count - area) <= M_PI * rho, "sphere covers %zu pixels, its disc %.1f (+- %.1f)",
             count, area, M_PI * rho);
    printf("sphere: %zu pixels against %.1f\n", count, area);
    kedr_render_scene_destroy(s);

    /* the same sphere as a mesh: a UV sphere of m x m quads, every accelerator */
    int m = 32, wm = 160;
    char obj[] = "sphere.obj";
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, obj);
    FILE *f = fopen(path, "w");
    for (int j = 0; j <= m; j++)
        for (int i = 0; i < 2 * m; i++) {
            double th = M_PI * j / m, ph = M_PI * i / m;
            fprintf(f, "v %.9f %.9f %.9f\n", sin(th) * cos(ph), cos(th), sin(th) * sin(ph));
        }
    for (int j = 0; j < m; j++)
        for (int i = 0; i < 2 * m; i++) {
            int a = j * 2 * m + i + 1, b = j * 2 * m + (i + 1) % (2 * m) + 1;
            fprintf(f, "f %d %d %d %d\n", a, b, b + 2 * m, a + 2 * m);
        }
    fclose(f);
    s = load("mesh.ini", "[camera]\neye = 0 0 10\nlook_at = 0 0 0\nfov = 30\n[material.m]\n"
                         "[mesh.s]\nfile = sphere.obj\nmaterial = m\n");
    o.width = o.height = wm;
    rho *= (double)wm / h;
    area = M_PI * rho * rho;
    kedr_render_scene_info si;
    kedr_render_scene_get_info(s, &si);
    TU_CHECK(si.skipped_degenerate == (size_t)4 * m, "the poles' %zu zero-area triangles skipped",
             si.skipped_degenerate);
    int32_t *ref = tu_host_alloc((size_t)w * h * sizeof(int32_t));
    /* the silhouette lies between the inscribed polygon (radius cos(pi / 2m) at worst) and 1 */
    double rin = tan(asin(cos(M_PI / (2 * m)) / 10)) / tan(15 * M_PI / 180) * wm / 2;
    for (int a = KEDR_ACCEL_BRUTE; a <= KEDR_ACCEL_LBVH; a++) {
        o.accel = a;
        TU_OK(kedr_render(ctx, s, &o, rgb, a == KEDR_ACCEL_BRUTE ? ref : ids, NULL));
        size_t c = 0, differ = 0;
        for (size_t i = 0; i < (size_t)wm * wm; i++) {
            int32_t id = a == KEDR_ACCEL_BRUTE ? ref[i] : ids[i];
            c += id >= 0;
            differ += a != KEDR_ACCEL_BRUTE && (ids[i] >= 0) != (ref[i] >= 0);
        }
        TU_CHECK(c >= M_PI * rin * rin - M_PI * rin && c <= area + M_PI * rho,
                 "%s: mesh sphere covers %zu pixels, expected %.1f .. %.1f", kedr_accel_name(a), c,
                 M_PI * rin * rin - M_PI * rin, area + M_PI * rho);
        TU_CHECK(differ == 0, "%s: %zu pixels hit where brute force misses or back",
                 kedr_accel_name(a), differ);
    }
    free(ref);
    free(rgb);
    free(ids);
    kedr_render_scene_destroy(s);
}

static void check_shadow(kedr_ctx *ctx)
{
    const int w = (int)tu_scale(320, 160), h = (int)tu_scale(240, 120);
    /* H = 10 (the light), sphere centre at h = 2 with r = 1, the plane y = 0 */
    kedr_render_scene *s = load("shadow.ini", "[camera]\neye = 0 9 9\nlook_at = 0 0 0\nfov = 40\n"
                                              "[render]\nambient = 1\n"
                                              "[material.m]\ncolor = 1\nambient = 0.2\n"
                                              "diffuse = 0.8\nspecular = 0\n"
                                              "[sphere.s]\ncenter = 0 2 0\nradius = 1\n"
                                              "material = m\n"
                                              "[plane.p]\nnormal = 0 1 0\nmaterial = m\n"
                                              "[light.l]\nposition = 0 10 0\n");
    float *rgb = tu_host_alloc((size_t)w * h * 3 * sizeof(float));
    int32_t *ids = tu_host_alloc((size_t)w * h * sizeof(int32_t));
    kedr_render_options o = {.width = w, .height = h, .spp = 1, .depth = 0, .accel = KEDR_ACCEL_BVH, .test = KEDR_TRI_MOLLER};
    TU_OK(kedr_render(ctx, s, &o, rgb, ids, NULL));
    render_camera_basis cam;
    render_camera(s, w, h, &cam);
    double radius = 10 * tan(asin(1.0 / 8));
    size_t inside = 0, outside = 0, bad = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t p = (size_t)y * w + x;
            if (ids[p] != 1) /* the plane: after the one sphere */
                continue;
            rvec d = render_camera_dir(&cam, x, y, 0.5f, 0.5f);
            double t = -(double)cam.eye.y / d.y;
            double px = cam.eye.x + t * d.x, pz = cam.eye.z + t * d.z, r = sqrt(px * px + pz * pz);
            float g = rgb[p * 3 + 1];
            if (r < radius - SHADOW_MARGIN) {
                inside++;
                bad += fabsf(g - 0.2f) > 1e-5f;
            } else if (r > radius + SHADOW_MARGIN) {
                outside++;
                bad += !(g > 0.2f + 0.05f);
            }
        }
    TU_CHECK(inside > 50 && outside > 1000 && bad == 0, "shadow radius %.4f: %zu pixels inside, "
             "%zu outside, %zu on the wrong side", radius, inside, outside, bad);
    printf("shadow: %zu pixels inside, %zu outside the predicted disc\n", inside, outside);
    free(rgb);
    free(ids);
    kedr_render_scene_destroy(s);
}

static double fresnel_ref(double ci, double n1, double n2)
{
    double st = n1 / n2 * sqrt(1 - ci * ci);
    if (st >= 1)
        return 1;
    double ct = sqrt(1 - st * st);
    double rs = (n1 * ci - n2 * ct) / (n1 * ci + n2 * ct);
    double rp = (n1 * ct - n2 * ci) / (n1 * ct + n2 * ci);
    return (rs * rs + rp * rp) / 2;
}

static void check_optics(void)
{
    uint64_t st = 5;
    double worst_snell = 0, worst_fresnel = 0;
    size_t tir = 0;
    for (int k = 0; k < 2000; k++) {
        rvec n = rv_norm(rv((float)tu_uniform(&st) - 0.5f, (float)tu_uniform(&st) - 0.5f,
                            (float)tu_uniform(&st) - 0.5f));
        rvec d = rv_norm(rv((float)tu_uniform(&st) - 0.5f, (float)tu_uniform(&st) - 0.5f,
                            (float)tu_uniform(&st) - 0.5f));
        if (rv_dot(d, n) > 0)
            n = rv_mul(n, -1);
        float ci = -rv_dot(d, n);
        rvec r = render_reflect(d, n);
        TU_CHECK(fabsf(rv_dot(r, n) - ci) < 1e-5f && fabsf(rv_len(r) - 1) < 1e-5f &&
                 rv_len(rv_cross(rv_cross(d, n), rv_cross(r, n))) < 1e-5f,
                 "reflection: angle or plane of incidence wrong");
        float n1 = k % 2 ? 1.0f : 1.5f, n2 = k % 2 ? 1.5f : 1.0f;
        rvec t;
        double si = sqrt(1 - (double)ci * ci);
        if (render_refract(d, n, n1 / n2, &t)) {
            double snell = fabs(n1 * si - n2 * rv_len(rv_cross(t, n)) / rv_len(t));
            worst_snell = fmax(worst_snell, snell);
            TU_CHECK(snell < 1e-5 && rv_dot(t, n) < 0, "Snell: n1 sin i - n2 sin t = %g", snell);
        } else {
            tir++;
            TU_CHECK(n1 * si >= n2 * (1 - 1e-6), "total internal reflection below the critical "
                     "angle (sin i = %g)", si);
        }
        double f = render_fresnel(ci, n1, n2), fr = fresnel_ref(ci, n1, n2);
        worst_fresnel = fmax(worst_fresnel, fabs(f - fr));
        TU_CHECK(fabs(f - fr) < 1e-5, "Fresnel %g against %g at cos i %g", f, fr, ci);
    }
    TU_CHECK(tir > 100, "some rays met total internal reflection (%zu)", tir);
    float r0 = render_fresnel(1, 1, 1.5f);
    TU_CHECK(fabsf(r0 - 0.04f) < 1e-6f, "normal incidence 1 -> 1.5: %g, expected 0.04", r0);
    double brewster = atan(1.5), ci = cos(brewster), ct = cos(asin(sin(brewster) / 1.5));
    double rs = (ci - 1.5 * ct) / (ci + 1.5 * ct);
    TU_CHECK(fabs(render_fresnel((float)ci, 1, 1.5f) - rs * rs / 2) < 1e-6,
             "Brewster's angle: only the s part reflects");
    printf("optics: worst Snell residual %.2g, worst Fresnel difference %.2g, %zu TIR\n",
           worst_snell, worst_fresnel, tir);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kedr_render_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    check_optics();
    kedr_ctx *ctx = tu_ctx(KEDR_BACKEND_CPU);
    check_sphere_coverage(ctx);
    check_shadow(ctx);
    kedr_ctx_destroy(ctx);
    tu_remove_dir(dir);
    return tu_finish("test_render_optics");
}
