/* render: the scene record (filled by scene.c from a scene file, obj.c and builtin.c) and the
 * optics the shading of whitted.h uses. */
#ifndef RENDER_SCENE_H
#define RENDER_SCENE_H

#include "kedr/render.h"
#include "render/geom.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { MAT_PHONG = 0, MAT_COOK_TORRANCE = 1 };

/* The seed's material parameters: local shading (ambient, diffuse, specular with a Phong
 * exponent or a Cook-Torrance roughness) and the reflected and transmitted fractions. */
typedef struct {
    char name[64];
    int model;
    rvec color;
    float ambient, diffuse, specular, shininess, roughness;
    float reflection, transmission, ior;
} render_material;

typedef struct {
    rvec pos, color;
} render_light;

typedef struct {
    rvec c;
    float r;
    int mat;
} render_sphere;

typedef struct {
    rvec n; /* unit normal */
    float d; /* n . p = d */
    int mat;
} render_plane;

/* A growing triangle soup with a material per triangle. */
typedef struct {
    float *v; /* 9 per triangle */
    int *mat;
    size_t n, cap;
} render_mesh;

struct kedr_render_scene {
    rvec eye, look, up;
    float fov; /* vertical, degrees */
    rvec background, ambient;
    render_material *mats;
    int nmats;
    render_light *lights;
    int nlights;
    render_sphere *spheres;
    int nspheres;
    render_plane *planes;
    int nplanes;
    render_mesh mesh;
    size_t skipped_nonfinite, skipped_degenerate;
    int width, height, spp, depth;
    kedr_accel_kind accel;
};

/* Appends a triangle; 0 when out of memory. Triangles with a NaN or infinite coordinate and
 * zero-area ones are counted in the scene and skipped (returns 1). */
int render_mesh_add(kedr_render_scene *s, const float *a, const float *b, const float *c, int mat);

/* An affine transform of mesh vertices: p' = M p + t. */
typedef struct {
    float m[9], t[3];
} render_xform;
void render_xform_apply(const render_xform *x, const float *p, float *out);

/* OBJ files: v and f (polygons as fans; v, v/vt, v//vn, v/vt/vn; negative indices), usemtl
 * naming a [material.NAME] section of the scene (else mat); other statements ignored. */
kedr_status render_obj_load(kedr_render_scene *s, const char *path, const render_xform *x,
                            int mat);

/* Built-in meshes (builtin.c): the teapot at a tessellation level (level x level quads per
 * patch), a fractal terrain of about `triangles` triangles, and a stadium of tiers. */
kedr_status render_builtin_teapot(kedr_render_scene *s, int level, const render_xform *x, int mat);
kedr_status render_builtin_terrain(kedr_render_scene *s, size_t triangles, uint64_t seed,
                                   const render_xform *x, int mat);
kedr_status render_builtin_stadium(kedr_render_scene *s, int segments, const render_xform *x,
                                   int mat);

#ifdef __cplusplus
}
#endif

/* ---- optics shared by the shading of both back ends (whitted.h) ------------------------ */

/* Mirror reflection of d about the unit normal n. */
RENDER_HD rvec render_reflect(rvec d, rvec n) { return rv_sub(d, rv_mul(n, 2 * rv_dot(d, n))); }
/* Refraction of the unit direction d through the unit normal n (facing d's origin) with
 * eta = n1 / n2 (Snell: n1 sin i = n2 sin t); returns 0 at total internal reflection. */
RENDER_HD int render_refract(rvec d, rvec n, float eta, rvec *out)
{
    float ci = -rv_dot(d, n), k = 1 - eta * eta * (1 - ci * ci);
    if (k < 0)
        return 0;
    *out = rv_add(rv_mul(d, eta), rv_mul(n, eta * ci - sqrtf(k)));
    return 1;
}
/* The Fresnel reflectance of unpolarized light at a smooth dielectric boundary, the mean of
 * the s and p reflectances (Born & Wolf), for the cosine of incidence ci and n1 -> n2; 1 at
 * total internal reflection. */
RENDER_HD float render_fresnel(float ci, float n1, float n2)
{
    float st2 = (n1 / n2) * (n1 / n2) * (1 - ci * ci);
    if (st2 >= 1)
        return 1;
    float ct = sqrtf(1 - st2);
    float rs = (n1 * ci - n2 * ct) / (n1 * ci + n2 * ct);
    float rp = (n2 * ci - n1 * ct) / (n2 * ci + n1 * ct);
    return 0.5f * (rs * rs + rp * rp);
}

#endif
