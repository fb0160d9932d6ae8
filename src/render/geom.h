/* render: the geometric tests every back end shares (compiled by the C compiler and by nvcc):
 * ray-triangle (Moller-Trumbore; Woop's unit-triangle transform), ray-sphere, ray-plane and the
 * slab ray-box test. Comparisons are written so that NaN fails them: a degenerate triangle or a
 * ray parallel to a plane yields NaN or infinity somewhere and is simply not hit. */
#ifndef RENDER_GEOM_H
#define RENDER_GEOM_H

#include <math.h>
#include <stdint.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#ifdef __CUDACC__
#define RENDER_HD __host__ __device__ __forceinline__
#else
#define RENDER_HD static inline
#endif

typedef struct {
    float x, y, z;
} rvec;

/* min and max of finite floats, inlined (fminf and fmaxf become library calls without
 * -ffinite-math-only, and the builders call them hundreds of millions of times). */
RENDER_HD float rmin(float a, float b) { return a < b ? a : b; }
RENDER_HD float rmax(float a, float b) { return a > b ? a : b; }

RENDER_HD rvec rv(float x, float y, float z)
{
    rvec r = {x, y, z};
    return r;
}
RENDER_HD rvec rv_add(rvec a, rvec b) { return rv(a.x + b.x, a.y + b.y, a.z + b.z); }
RENDER_HD rvec rv_sub(rvec a, rvec b) { return rv(a.x - b.x, a.y - b.y, a.z - b.z); }
RENDER_HD rvec rv_mul(rvec a, float s) { return rv(a.x * s, a.y * s, a.z * s); }
RENDER_HD rvec rv_hadamard(rvec a, rvec b) { return rv(a.x * b.x, a.y * b.y, a.z * b.z); }
RENDER_HD float rv_dot(rvec a, rvec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
RENDER_HD rvec rv_cross(rvec a, rvec b)
{
    return rv(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
RENDER_HD float rv_len(rvec a) { return sqrtf(rv_dot(a, a)); }
RENDER_HD rvec rv_norm(rvec a)
{
    float l = rv_len(a);
    return l > 0 ? rv_mul(a, 1.0f / l) : a;
}
RENDER_HD rvec rv_load(const float *p) { return rv(p[0], p[1], p[2]); }
RENDER_HD float rv_at(rvec a, int k) { return k == 0 ? a.x : k == 1 ? a.y : a.z; }

/* Moller & Trumbore (1997), "Fast, minimum storage ray-triangle intersection": t and the
 * barycentrics (u, v) from Cramer's rule on o + t d = v0 + u e1 + v e2, with no stored data.
 * Returns 1 for a hit with tmin < t < tmax. Edges are inclusive (u, v >= 0, u + v <= 1). */
RENDER_HD int tri_moller(const float *tri, rvec o, rvec d, float tmin, float tmax, float *t,
                         float *u, float *v)
{
    rvec v0 = rv_load(tri), e1 = rv_sub(rv_load(tri + 3), v0), e2 = rv_sub(rv_load(tri + 6), v0);
    rvec p = rv_cross(d, e2);
    float det = rv_dot(e1, p);
    if (det == 0.0f)
        return 0;
    float inv = 1.0f / det;
    rvec s = rv_sub(o, v0);
    float uu = rv_dot(s, p) * inv;
    if (!(uu >= 0.0f && uu <= 1.0f))
        return 0;
    rvec q = rv_cross(s, e1);
    float vv = rv_dot(d, q) * inv;
    if (!(vv >= 0.0f && uu + vv <= 1.0f))
        return 0;
    float tt = rv_dot(e2, q) * inv;
    if (!(tt > tmin && tt < tmax))
        return 0;
    *t = tt;
    *u = uu;
    *v = vv;
    return 1;
}

/* Woop (2004), "A ray tracing hardware architecture for dynamic scenes": the affine map M^-1
 * that takes the triangle to the unit triangle (0,0,0), (1,0,0), (0,1,0), with the normal
 * e1 x e2 as third axis, is stored as three rows of 4 floats. The ray is transformed (two dot
 * products each for origin and direction per row) and hits where z' = 0 inside the unit
 * triangle. A degenerate triangle has all rows zero: t = 0/0 fails every comparison. */
RENDER_HD int tri_woop(const float *w, rvec o, rvec d, float tmin, float tmax, float *t,
                       float *u, float *v)
{
    float oz = w[11] + w[8] * o.x + w[9] * o.y + w[10] * o.z;
    float dz = w[8] * d.x + w[9] * d.y + w[10] * d.z;
    float tt = -oz / dz;
    if (!(tt > tmin && tt < tmax))
        return 0;
    float uu = w[3] + w[0] * (o.x + tt * d.x) + w[1] * (o.y + tt * d.y) + w[2] * (o.z + tt * d.z);
    if (!(uu >= 0.0f && uu <= 1.0f))
        return 0;
    float vv = w[7] + w[4] * (o.x + tt * d.x) + w[5] * (o.y + tt * d.y) + w[6] * (o.z + tt * d.z);
    if (!(vv >= 0.0f && uu + vv <= 1.0f))
        return 0;
    *t = tt;
    *u = uu;
    *v = vv;
    return 1;
}

/* Sphere |p - c| = r: the nearer root of |o + t d - c|^2 = r^2 inside (tmin, tmax), else the
 * farther one (a ray from inside). b' = d.(o - c) form, with the discriminant from
 * |(o - c) - (b'/|d|^2) d|, which loses less precision for far spheres (Haines et al., "Precision
 * improvements for ray/sphere intersection", Ray Tracing Gems, 2019). */
RENDER_HD int sphere_hit(rvec c, float r, rvec o, rvec d, float tmin, float tmax, float *t)
{
    rvec f = rv_sub(o, c);
    float a = rv_dot(d, d), b = -rv_dot(f, d);
    rvec l = rv_add(f, rv_mul(d, b / a));
    float disc = r * r - rv_dot(l, l);
    if (!(disc >= 0.0f) || !(a > 0.0f))
        return 0;
    float root = sqrtf(a * disc);
    float q = b + (b >= 0 ? root : -root); /* the root without cancellation */
    float t0 = q / a, t1 = (rv_dot(f, f) - r * r) / q;
    if (t0 > t1) {
        float s = t0;
        t0 = t1;
        t1 = s;
    }
    if (t0 > tmin && t0 < tmax) {
        *t = t0;
        return 1;
    }
    if (t1 > tmin && t1 < tmax) {
        *t = t1;
        return 1;
    }
    return 0;
}

/* Plane n.p = dist (n need not be unit length). */
RENDER_HD int plane_hit(rvec n, float dist, rvec o, rvec d, float tmin, float tmax, float *t)
{
    float tt = (dist - rv_dot(n, o)) / rv_dot(n, d);
    if (!(tt > tmin && tt < tmax))
        return 0;
    *t = tt;
    return 1;
}

/* The slab test (Kay & Kajiya 1986) with the reciprocal direction inv = 1/d: the ray's interval
 * inside the box lo..hi, clipped to (t0, t1). A zero direction component gives an infinite
 * reciprocal, and an origin exactly on that slab's face 0 * inf = NaN: the selects below keep
 * the interval as it was for a NaN (the slab does not bound the ray), the right answer for a ray
 * in a face. Each slab's far distance is widened by 1 + 2 gamma_3 so that rounding never loses a
 * box the ray touches (Ize, "Robust BVH ray traversal", JCGT 2013). */
RENDER_HD int box_hit(const float *lo, const float *hi, rvec o, rvec inv, float t0, float t1,
                      float *enter, float *leave)
{
    for (int k = 0; k < 3; k++) {
        float ok = rv_at(o, k), ik = rv_at(inv, k);
        float a = (lo[k] - ok) * ik, b = (hi[k] - ok) * ik;
        if (a > b) {
            float s = a;
            a = b;
            b = s;
        }
        b *= 1.0000004f;
        t0 = a > t0 ? a : t0;
        t1 = b < t1 ? b : t1;
    }
    *enter = t0;
    *leave = t1;
    return t0 <= t1;
}

RENDER_HD rvec rv_inverse(rvec d) { return rv(1.0f / d.x, 1.0f / d.y, 1.0f / d.z); }

#endif
