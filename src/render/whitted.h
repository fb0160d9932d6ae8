/* render: Whitted ray tracing (Whitted, "An improved illumination model for shaded display",
 * 1980, as Boreskov et al. ch. 13 lay it out), compiled for the cpu (render.c) and the GPU
 * (render.cu) from this one text. At the nearest hit: local shading by every point light that a
 * shadow ray reaches, coloured by the transparent surfaces it passes through; then the reflected
 * and refracted rays, to the given depth. The recursion is a loop over a stack of pending rays,
 * each with the weight its colour adds with (no recursion on the GPU, the same order of sums on
 * both back ends). Local shading is Phong's ("Illumination for computer generated pictures",
 * 1975) or Cook & Torrance's ("A reflectance model for computer graphics", 1982: Beckmann
 * distribution, their geometric attenuation, Schlick's Fresnel approximation, normalised by
 * 4 (N.L)(N.V)). A transparent material splits light between reflection and refraction by the
 * exact dielectric Fresnel reflectance. */
#ifndef RENDER_WHITTED_H
#define RENDER_WHITTED_H

#include "render/bvh_trace.h"
#include "render/scene.h"

#ifndef __CUDA_ARCH__
#include "render/accel.h"
#endif

/* Shadow rays pass through at most this many transparent surfaces. */
#define SHADOW_LAYERS 32
/* The deepest bounce (kedr_render's depth) and the stack it needs: depth + 1 pending rays. */
#define RENDER_MAX_DEPTH 64
/* A ray whose weight falls below this in every channel adds nothing visible and is dropped. */
#define RENDER_MIN_WEIGHT 1e-4f

/* The scene as plain arrays (host memory on the cpu, device memory on the GPU). */
typedef struct {
    const render_material *mats;
    const render_light *lights;
    const render_sphere *spheres;
    const render_plane *planes;
    const int *tri_mat;
    int nlights, nspheres, nplanes, nmats;
    uint32_t ntri;
    rvec background, ambient;
    int transparent;         /* some material transmits: shadow rays need nearest hits */
    render_bvh_view bvh;     /* tris (normals) always; the BVH on the GPU */
    const kedr_accel *accel; /* the cpu's accelerator, any kind */
} render_view;

typedef struct {
    unsigned long long shadow, secondary;
} render_counts;

RENDER_HD int view_triangles(const render_view *v, rvec o, rvec d, float tmin, float tmax,
                             kedr_hit *h, int any)
{
    h->t = tmax;
    h->prim = -1;
    if (!v->ntri)
        return 0;
#ifdef __CUDA_ARCH__
    return bvh_trace_hd(&v->bvh, o, d, tmin, h, any);
#else
    kedr_ray r = {{o.x, o.y, o.z}, tmin, {d.x, d.y, d.z}, tmax};
    return render_trace(v->accel, &r, h, any);
#endif
}

/* The first object along a ray: its id (a triangle's index, then ntri + sphere, then ntri +
 * spheres + plane; -1 for none), distance, geometric normal and material. */
RENDER_HD int view_nearest(const render_view *v, rvec o, rvec d, float tmin, float tmax, float *t,
                           rvec *n, int *mat)
{
    int id = -1;
    float best = tmax;
    kedr_hit h;
    if (view_triangles(v, o, d, tmin, tmax, &h, 0)) {
        id = h.prim;
        best = h.t;
        const float *tri = v->bvh.tris + (size_t)h.prim * 9;
        *n = rv_norm(rv_cross(rv_sub(rv_load(tri + 3), rv_load(tri)),
                              rv_sub(rv_load(tri + 6), rv_load(tri))));
        *mat = v->tri_mat[h.prim];
    }
    for (int i = 0; i < v->nspheres; i++) {
        float tt;
        if (sphere_hit(v->spheres[i].c, v->spheres[i].r, o, d, tmin, best, &tt)) {
            best = tt;
            id = (int)v->ntri + i;
            *n = rv_norm(rv_sub(rv_add(o, rv_mul(d, tt)), v->spheres[i].c));
            *mat = v->spheres[i].mat;
        }
    }
    for (int i = 0; i < v->nplanes; i++) {
        float tt;
        if (plane_hit(v->planes[i].n, v->planes[i].d, o, d, tmin, best, &tt)) {
            best = tt;
            id = (int)v->ntri + v->nspheres + i;
            *n = v->planes[i].n;
            *mat = v->planes[i].mat;
        }
    }
    *t = best;
    return id;
}

RENDER_HD int view_occluded(const render_view *v, rvec o, rvec d, float tmax)
{
    float t;
    for (int i = 0; i < v->nplanes; i++)
        if (plane_hit(v->planes[i].n, v->planes[i].d, o, d, 0, tmax, &t))
            return 1;
    for (int i = 0; i < v->nspheres; i++)
        if (sphere_hit(v->spheres[i].c, v->spheres[i].r, o, d, 0, tmax, &t))
            return 1;
    kedr_hit h;
    return view_triangles(v, o, d, 0, tmax, &h, 1);
}

/* An offset that lifts a point off its surface past float rounding at its coordinates. */
RENDER_HD float offset_eps(rvec p)
{
    return 1e-4f * (1 + rmax(fabsf(p.x), rmax(fabsf(p.y), fabsf(p.z))));
}

/* The light reaching p from a light dist away along unit l: 1, 0, or the product of the colours
 * and transmissions of the transparent surfaces crossed. */
RENDER_HD rvec transmittance(const render_view *v, rvec p, rvec l, float dist, render_counts *c)
{
    if (!v->transparent) {
        c->shadow++;
        return view_occluded(v, p, l, dist) ? rv(0, 0, 0) : rv(1, 1, 1);
    }
    rvec tr = rv(1, 1, 1);
    for (int layer = 0; layer < SHADOW_LAYERS; layer++) {
        float t;
        rvec n;
        int mat;
        c->shadow++;
        if (view_nearest(v, p, l, 0, dist, &t, &n, &mat) < 0)
            return tr;
        const render_material *m = &v->mats[mat];
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

RENDER_HD rvec local_shade(const render_material *m, rvec n, rvec view, rvec l, float ndl)
{
    rvec diffuse = rv_mul(m->color, m->diffuse * ndl);
    float spec = 0;
    if (m->model == MAT_PHONG) {
        rvec r = render_reflect(rv_mul(l, -1), n);
        float rdv = rv_dot(r, view);
        spec = rdv > 0 ? m->specular * powf(rdv, m->shininess) : 0;
    } else {
        rvec h = rv_norm(rv_add(l, view));
        float nh = rv_dot(n, h), nv = rv_dot(n, view), vh = rv_dot(view, h);
        if (nh > 0 && nv > 0 && vh > 0) {
            float m2 = m->roughness * m->roughness, nh2 = nh * nh;
            float dist = expf((nh2 - 1) / (m2 * nh2)) / ((float)M_PI * m2 * nh2 * nh2);
            float g = rmin(1, rmin(2 * nh * nv / vh, 2 * nh * ndl / vh));
            float f0 = (m->ior - 1) / (m->ior + 1);
            f0 *= f0;
            float f = f0 + (1 - f0) * powf(1 - vh, 5);
            spec = m->specular * dist * f * g / (4 * nv); /* times N.L over 4 (N.L)(N.V) */
        }
    }
    return rv_add(diffuse, rv(spec, spec, spec));
}

typedef struct {
    rvec o, d, w;
    int depth;
} render_task;

/* A ray's nearest hit as shading sees it: the unit direction, the view vector, the point, the
 * normal facing the ray, whether the ray comes from inside, and the point lifted off the
 * surface by e. The one-kernel loop (whitted) and the wavefront's kernels (wave.h) shade
 * through these same functions, so both give the same colours bit for bit. */
typedef struct {
    rvec dn, view, p, n, above;
    float e;
    int inside;
} render_surface;

RENDER_HD void whitted_surface(rvec o, rvec d, float t, rvec n, render_surface *s)
{
    s->dn = rv_norm(d);
    s->view = rv_mul(s->dn, -1);
    s->p = rv_add(o, rv_mul(d, t));
    s->inside = rv_dot(n, s->dn) > 0;
    if (s->inside)
        n = rv_mul(n, -1);
    s->n = n;
    s->e = offset_eps(s->p);
    s->above = rv_add(s->p, rv_mul(n, s->e));
}

/* The ambient term of material m. */
RENDER_HD rvec whitted_ambient(const render_view *v, const render_material *m)
{
    return rv_mul(rv_hadamard(v->ambient, m->color), m->ambient);
}

/* Light i seen from the surface: 1 with the unit direction l to it, its distance and N.L when
 * it can light the surface (then a shadow ray is traced), else 0. */
RENDER_HD int whitted_light(const render_view *v, const render_surface *s, int i, rvec *l,
                            float *dist, float *ndl)
{
    rvec d = rv_sub(v->lights[i].pos, s->above);
    float len = rv_len(d);
    if (!(len > 0))
        return 0;
    d = rv_mul(d, 1 / len);
    float c = rv_dot(s->n, d);
    if (c <= 0)
        return 0;
    *l = d;
    *dist = len;
    *ndl = c;
    return 1;
}

/* What light i adds, given the transmittance tr of its shadow ray (not zero) and the local
 * shading. */
RENDER_HD rvec whitted_light_term(const render_view *v, int i, rvec tr, rvec shade)
{
    return rv_hadamard(rv_hadamard(tr, v->lights[i].color), shade);
}

/* The rays a hit spawns (none when depth <= 0): the refracted ray, then the reflected one, in the
 * order whitted pushes them on its stack (so the reflected one is traced first). Returns how many
 * of out[0..1] were written. */
RENDER_HD int whitted_bounces(const render_material *m, const render_surface *s, rvec w,
                              int depth, render_task *out)
{
    if (depth <= 0)
        return 0;
    int k = 0;
    float kr = m->reflection, kt = m->transmission;
    float n1 = s->inside ? m->ior : 1, n2 = s->inside ? 1 : m->ior;
    rvec refr = rv(0, 0, 0);
    if (kt > 0) {
        float f = render_fresnel(rv_dot(s->view, s->n), n1, n2);
        if (!render_refract(s->dn, s->n, n1 / n2, &refr))
            f = 1;
        kr += kt * f;
        kt *= 1 - f;
    }
    rvec wt = rv_mul(rv_hadamard(w, m->color), kt), wr = rv_mul(w, kr);
    if (kt > 0 && rmax(wt.x, rmax(wt.y, wt.z)) >= RENDER_MIN_WEIGHT) {
        out[k].o = rv_sub(s->p, rv_mul(s->n, s->e));
        out[k].d = refr;
        out[k].w = wt;
        out[k++].depth = depth - 1;
    }
    if (kr > 0 && rmax(wr.x, rmax(wr.y, wr.z)) >= RENDER_MIN_WEIGHT) {
        out[k].o = s->above;
        out[k].d = render_reflect(s->dn, s->n);
        out[k].w = wr;
        out[k++].depth = depth - 1;
    }
    return k;
}

/* The colour seen along o + t d, with depth bounces (at most RENDER_MAX_DEPTH). */
RENDER_HD rvec whitted(const render_view *v, rvec o, rvec d, int depth, render_counts *c)
{
    render_task stack[RENDER_MAX_DEPTH + 2];
    int sp = 0;
    rvec color = rv(0, 0, 0);
    stack[sp].o = o;
    stack[sp].d = d;
    stack[sp].w = rv(1, 1, 1);
    stack[sp++].depth = depth;
    while (sp) {
        render_task k = stack[--sp];
        float t;
        rvec n = rv(0, 0, 0); /* set by view_nearest on a hit */
        int mat;
        if (view_nearest(v, k.o, k.d, 0, INFINITY, &t, &n, &mat) < 0) {
            color = rv_add(color, rv_hadamard(k.w, v->background));
            continue;
        }
        const render_material *m = &v->mats[mat];
        render_surface s;
        whitted_surface(k.o, k.d, t, n, &s);
        rvec local = whitted_ambient(v, m);
        for (int i = 0; i < v->nlights; i++) {
            rvec l;
            float dist, ndl;
            if (!whitted_light(v, &s, i, &l, &dist, &ndl))
                continue;
            rvec tr = transmittance(v, s.above, l, dist, c);
            if (tr.x == 0 && tr.y == 0 && tr.z == 0)
                continue;
            local = rv_add(local, whitted_light_term(v, i, tr, local_shade(m, s.n, s.view, l, ndl)));
        }
        color = rv_add(color, rv_hadamard(k.w, local));
        int nb = whitted_bounces(m, &s, k.w, k.depth, stack + sp);
        c->secondary += nb;
        sp += nb;
    }
    return color;
}

#endif
