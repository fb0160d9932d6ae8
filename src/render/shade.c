/* render: Whitted ray tracing (Whitted, "An improved illumination model for shaded display",
 * 1980, as Boreskov et al. ch. 13 lay it out): at the nearest hit, local shading by every point
 * light that a shadow ray reaches (coloured by the transparent objects it passes through), plus
 * the reflected and refracted rays' colours, recursively to the given depth. Local shading is
 * Phong's (Phong, "Illumination for computer generated pictures", 1975) or Cook & Torrance's
 * ("A reflectance model for computer graphics", 1982: Beckmann distribution, their geometric
 * attenuation, Schlick's Fresnel approximation, normalised by 4 (N.L)(N.V)). Transparent
 * materials split light between reflection and refraction by the exact dielectric Fresnel
 * reflectance. */
#include "render/accel.h"
#include "render/scene.h"

#include <float.h>

/* Shadow rays pass through at most this many transparent surfaces. */
#define SHADOW_LAYERS 32

int render_nearest(const render_view *v, rvec o, rvec d, float tmin, float tmax, float *t,
                   rvec *n, int *mat)
{
    const kedr_render_scene *s = v->s;
    int id = -1;
    float best = tmax;
    if (s->mesh.n) {
        kedr_ray r = {{o.x, o.y, o.z}, tmin, {d.x, d.y, d.z}, tmax};
        kedr_hit h;
        if (render_trace(v->accel, &r, &h, 0)) {
            id = h.prim;
            best = h.t;
            const float *tri = s->mesh.v + (size_t)h.prim * 9;
            *n = rv_norm(rv_cross(rv_sub(rv_load(tri + 3), rv_load(tri)),
                                  rv_sub(rv_load(tri + 6), rv_load(tri))));
            *mat = s->mesh.mat[h.prim];
        }
    }
    for (int i = 0; i < s->nspheres; i++) {
        float tt;
        if (sphere_hit(s->spheres[i].c, s->spheres[i].r, o, d, tmin, best, &tt)) {
            best = tt;
            id = (int)s->mesh.n + i;
            *n = rv_norm(rv_sub(rv_add(o, rv_mul(d, tt)), s->spheres[i].c));
            *mat = s->spheres[i].mat;
        }
    }
    for (int i = 0; i < s->nplanes; i++) {
        float tt;
        if (plane_hit(s->planes[i].n, s->planes[i].d, o, d, tmin, best, &tt)) {
            best = tt;
            id = (int)s->mesh.n + s->nspheres + i;
            *n = s->planes[i].n;
            *mat = s->planes[i].mat;
        }
    }
    *t = best;
    return id;
}

/* Any opaque or transparent surface on the segment (used when no material transmits). */
static int occluded(const render_view *v, rvec o, rvec d, float tmax)
{
    const kedr_render_scene *s = v->s;
    float t;
    for (int i = 0; i < s->nplanes; i++)
        if (plane_hit(s->planes[i].n, s->planes[i].d, o, d, 0, tmax, &t))
            return 1;
    for (int i = 0; i < s->nspheres; i++)
        if (sphere_hit(s->spheres[i].c, s->spheres[i].r, o, d, 0, tmax, &t))
            return 1;
    if (!s->mesh.n)
        return 0;
    kedr_ray r = {{o.x, o.y, o.z}, 0, {d.x, d.y, d.z}, tmax};
    kedr_hit h;
    return render_trace(v->accel, &r, &h, 1);
}

/* An offset that lifts a point off its surface past float rounding at its coordinates. */
static float offset_eps(rvec p)
{
    return 1e-4f * (1 + fmaxf(fabsf(p.x), fmaxf(fabsf(p.y), fabsf(p.z))));
}

/* The light reaching p from a light dist away along unit l: 1, 0, or the product of the colours
 * and transmissions of the transparent surfaces crossed (each surface crossing counts once). */
static rvec transmittance(const render_view *v, rvec p, rvec l, float dist, render_counts *c)
{
    if (!v->transparent) {
        c->shadow++;
        return occluded(v, p, l, dist) ? rv(0, 0, 0) : rv(1, 1, 1);
    }
    rvec tr = rv(1, 1, 1);
    for (int layer = 0; layer < SHADOW_LAYERS; layer++) {
        float t;
        rvec n;
        int mat;
        c->shadow++;
        if (render_nearest(v, p, l, 0, dist, &t, &n, &mat) < 0)
            return tr;
        const render_material *m = &v->s->mats[mat];
        if (m->transmission <= 0)
            return rv(0, 0, 0);
        tr = rv_mul(rv_hadamard(tr, m->color), m->transmission);
        p = rv_add(p, rv_mul(l, t));
        float e = offset_eps(p);
        p = rv_add(p, rv_mul(l, e));
        dist -= t + e;
        if (!(dist > 0))
            return tr;
    }
    return rv(0, 0, 0);
}

static rvec local_shade(const render_material *m, rvec n, rvec view, rvec l, float ndl)
{
    rvec diffuse = rv_mul(m->color, m->diffuse * ndl);
    float spec = 0;
    if (m->model == MAT_PHONG) {
        rvec r = render_reflect(rv_mul(l, -1), n);
        float rv_ = rv_dot(r, view);
        spec = rv_ > 0 ? m->specular * powf(rv_, m->shininess) : 0;
    } else {
        rvec h = rv_norm(rv_add(l, view));
        float nh = rv_dot(n, h), nv = rv_dot(n, view), vh = rv_dot(view, h);
        if (nh > 0 && nv > 0 && vh > 0) {
            float m2 = m->roughness * m->roughness, nh2 = nh * nh;
            float dist = expf((nh2 - 1) / (m2 * nh2)) / ((float)M_PI * m2 * nh2 * nh2);
            float g = fminf(1, fminf(2 * nh * nv / vh, 2 * nh * ndl / vh));
            float f0 = (m->ior - 1) / (m->ior + 1);
            f0 *= f0;
            float f = f0 + (1 - f0) * powf(1 - vh, 5);
            spec = m->specular * dist * f * g / (4 * nv); /* times N.L over 4 (N.L)(N.V) */
        }
    }
    return rv_add(diffuse, rv(spec, spec, spec));
}

rvec render_shade(const render_view *v, rvec o, rvec d, int depth, render_counts *c)
{
    const kedr_render_scene *s = v->s;
    float t;
    rvec n;
    int mat;
    if (render_nearest(v, o, d, 0, INFINITY, &t, &n, &mat) < 0)
        return s->background;
    const render_material *m = &s->mats[mat];
    rvec dn = rv_norm(d), view = rv_mul(dn, -1), p = rv_add(o, rv_mul(d, t));
    int inside = rv_dot(n, dn) > 0;
    if (inside)
        n = rv_mul(n, -1);
    float e = offset_eps(p);
    rvec above = rv_add(p, rv_mul(n, e));
    rvec color = rv_mul(rv_hadamard(s->ambient, m->color), m->ambient);
    for (int i = 0; i < s->nlights; i++) {
        rvec l = rv_sub(s->lights[i].pos, above);
        float dist = rv_len(l);
        if (!(dist > 0))
            continue;
        l = rv_mul(l, 1 / dist);
        float ndl = rv_dot(n, l);
        if (ndl <= 0)
            continue;
        rvec tr = transmittance(v, above, l, dist, c);
        if (tr.x == 0 && tr.y == 0 && tr.z == 0)
            continue;
        color = rv_add(color, rv_hadamard(rv_hadamard(tr, s->lights[i].color),
                                          local_shade(m, n, view, l, ndl)));
    }
    if (depth <= 0)
        return color;
    float kr = m->reflection, kt = m->transmission;
    float n1 = inside ? m->ior : 1, n2 = inside ? 1 : m->ior;
    rvec refr = rv(0, 0, 0);
    if (kt > 0) {
        float f = render_fresnel(rv_dot(view, n), n1, n2);
        if (!render_refract(dn, n, n1 / n2, &refr))
            f = 1;
        kr += kt * f;
        kt *= 1 - f;
    }
    if (kr > 0) {
        c->secondary++;
        rvec rc = render_shade(v, above, render_reflect(dn, n), depth - 1, c);
        color = rv_add(color, rv_mul(rc, kr));
    }
    if (kt > 0) {
        c->secondary++;
        rvec tc = render_shade(v, rv_sub(p, rv_mul(n, e)), refr, depth - 1, c);
        color = rv_add(color, rv_mul(rv_hadamard(tc, m->color), kt));
    }
    return color;
}
