/* Private, included by dsmc_kernels.h only: the triangles of the 3D bodies of type stl, as
 * inline code both back ends compile (dsmc_params.mesh holds them, binned by mesh.c). A path is
 * followed through the bins it crosses, each testing only its own triangles, so a move costs
 * what the triangles near the molecule cost, not the whole mesh. */
#ifndef DSMC_MESH_H
#define DSMC_MESH_H

/* The mesh as the code running reads it: on a GPU the device arrays, on the host the host
 * arrays (the cpu back end's, or the host copies of the cuda back end's). */
DSMC_HD const dsmc_mesh *dsmc_mesh_of(const dsmc_params *p)
{
#ifdef __CUDA_ARCH__
    return &p->mesh;
#else
    return &p->mesh_host;
#endif
}

/* A hit within this fraction of a triangle's size beyond its edges still counts: the two
 * triangles of an edge round its crossing differently, and no molecule may slip between them. */
#define DSMC_MESH_EDGE 1e-9

/* The time t > 0, below best, at which the path pos + u t crosses triangle T (12 doubles: vertex
 * a, edges e1 and e2, normal n), or best when it does not; front: only from the normal's side
 * (u.n < 0). Moeller & Trumbore, "Fast, minimum storage ray/triangle intersection", J. Graphics
 * Tools 2 (1997) 21: barycentric coordinates (bu, bv) and t from one 3x3 solve by Cramer's rule. */
DSMC_HD double dsmc_tri_hit(const double *T, const double *pos, const double *u, int front,
                            double best)
{
    double un = u[0] * T[9] + u[1] * T[10] + u[2] * T[11];
    if (front ? !(un < 0) : un == 0)
        return best;
    double pv[3] = {u[1] * T[8] - u[2] * T[7], u[2] * T[6] - u[0] * T[8],
                    u[0] * T[7] - u[1] * T[6]};
    double det = T[3] * pv[0] + T[4] * pv[1] + T[5] * pv[2];
    if (det == 0)
        return best;
    double inv = 1.0 / det, s[3] = {pos[0] - T[0], pos[1] - T[1], pos[2] - T[2]};
    double bu = (s[0] * pv[0] + s[1] * pv[1] + s[2] * pv[2]) * inv;
    if (bu < -DSMC_MESH_EDGE || bu > 1.0 + DSMC_MESH_EDGE)
        return best;
    double q[3] = {s[1] * T[5] - s[2] * T[4], s[2] * T[3] - s[0] * T[5],
                   s[0] * T[4] - s[1] * T[3]};
    double bv = (u[0] * q[0] + u[1] * q[1] + u[2] * q[2]) * inv;
    if (bv < -DSMC_MESH_EDGE || bu + bv > 1.0 + DSMC_MESH_EDGE)
        return best;
    double t = (T[6] * q[0] + T[7] * q[1] + T[8] * q[2]) * inv;
    return t > 0 && t < best ? t : best;
}

/* The first triangle that the path pos + u t, 0 < t < tmax, meets (front: from the gas side
 * only), other than `skip`: its index, with the time in *th; -1 when none. The path is clipped
 * to the bins' box, then walked bin by bin in the order it crosses them (Amanatides & Woo, "A
 * fast voxel traversal algorithm for ray tracing", Eurographics 1987), testing each bin's
 * triangles, until a hit lies before the bin's exit. A triangle listed in several bins is
 * tested in each: the nearest hit is the same. */
DSMC_HD int64_t dsmc_mesh_hit(const dsmc_params *p, const double *pos, const double *u,
                              double tmax, int front, int64_t skip, double *th)
{
    const dsmc_mesh *m = dsmc_mesh_of(p);
    const double *h = m->h, *inv = m->inv, *blo = m->o;
    double t0 = 0, t1 = tmax;
    for (int d = 0; d < 3; d++) {
        double bhi = blo[d] + m->n[d] * h[d];
        if (u[d] == 0) {
            if (pos[d] < blo[d] || pos[d] > bhi)
                return -1;
            continue;
        }
        double ta = (blo[d] - pos[d]) / u[d], tb = (bhi - pos[d]) / u[d];
        t0 = fmax(t0, fmin(ta, tb));
        t1 = fmin(t1, fmax(ta, tb));
    }
    if (!(t0 <= t1))
        return -1;
#ifdef __CUDA_ARCH__
    const uint8_t *cut = p->mesh_cut;
#else
    const uint8_t *cut = p->mesh_cut_host;
#endif
    if (cut) { /* the cells about the path's bins (one bin wider each way): none cut, no hit */
        int lo[3], hi[3], span = 1, k = p->mesh_k;
        for (int d = 0; d < 3; d++) {
            double a = (pos[d] + u[d] * t0 - blo[d]) * inv[d];
            double b = (pos[d] + u[d] * t1 - blo[d]) * inv[d];
            int ia = (int)floor(fmin(a, b)) - 1, ib = (int)floor(fmax(a, b)) + 1;
            lo[d] = (ia < 0 ? 0 : ia) / k;
            hi[d] = (ib >= m->n[d] ? m->n[d] - 1 : ib) / k;
            span *= hi[d] - lo[d] + 1;
        }
        if (span <= 27) {
            int nc0 = m->n[0] / k, nc1 = m->n[1] / k, any = 0;
            for (int c = lo[2]; c <= hi[2] && !any; c++)
                for (int b = lo[1]; b <= hi[1] && !any; b++)
                    for (int a = lo[0]; a <= hi[0] && !any; a++)
                        any = cut[((size_t)c * nc1 + b) * nc0 + a];
            if (!any)
                return -1;
        }
    }
    int i[3], step[3];
    double next[3], delta[3];
    for (int d = 0; d < 3; d++) {
        double x = (pos[d] + u[d] * t0 - blo[d]) * inv[d];
        int k = (int)floor(x);
        i[d] = k < 0 ? 0 : k >= m->n[d] ? m->n[d] - 1 : k;
        step[d] = u[d] > 0 ? 1 : u[d] < 0 ? -1 : 0;
        double wall = blo[d] + (i[d] + (u[d] > 0)) * h[d];
        next[d] = u[d] != 0 ? (wall - pos[d]) / u[d] : HUGE_VAL;
        delta[d] = u[d] != 0 ? h[d] / fabs(u[d]) : HUGE_VAL;
    }
    double best = tmax;
    int64_t hit = -1;
    for (;;) {
        uint32_t c = ((uint32_t)i[2] * (uint32_t)m->n[1] + (uint32_t)i[1]) * (uint32_t)m->n[0] +
                     (uint32_t)i[0];
        for (uint32_t k = m->start[c]; k < m->start[c + 1]; k++) {
            uint32_t t = m->list[k];
            if ((int64_t)t == skip)
                continue;
            double b = dsmc_tri_hit(m->tri + 12 * (size_t)t, pos, u, front, best);
            if (b < best)
                best = b, hit = t;
        }
        int d = next[0] < next[1] ? (next[0] < next[2] ? 0 : 2) : (next[1] < next[2] ? 1 : 2);
        double exit = fmin(next[0], fmin(next[1], next[2]));
        if (best <= exit || exit >= t1)
            break;
        int out = 0;
        for (int q = 0; q < 3; q++) { /* q == d, unrolled: the arrays stay in registers */
            if (q != d)
                continue;
            i[q] += step[q];
            out = i[q] < 0 || i[q] >= m->n[q];
            next[q] += delta[q];
        }
        if (out)
            break;
    }
    if (hit >= 0)
        *th = best;
    return hit;
}

/* The stl solid that owns triangle t. */
DSMC_HD int dsmc_mesh_solid(const dsmc_params *p, uint32_t t)
{
    for (int j = 0; j < p->nsolids; j++)
        if (p->solid_type[j] == KEDR_DSMC_BODY_STL && t >= p->solid_n[j][0] &&
            t - p->solid_n[j][0] < p->solid_n[j][1])
            return j;
    return -1;
}

/* Whether (x, y, z) lies inside stl solid j. In a bin that no triangle cuts, the bin's class
 * (mesh.c) answers; in a cut bin, the first triangle a ray from the point meets is seen from
 * behind (the surface is closed and oriented outward: stl.c checks it) and is j's. */
DSMC_HD int dsmc_inside_mesh(const dsmc_params *p, int j, double x, double y, double z)
{
    const double *s = p->solid[j], pos[3] = {x, y, z};
    if (x < s[0] || x > s[0] + s[4] || fabs(y - s[1]) > s[5] || fabs(z - s[2]) > s[5])
        return 0;
    const dsmc_mesh *m = dsmc_mesh_of(p);
    int a = (int)floor((x - m->o[0]) * m->inv[0]), b = (int)floor((y - m->o[1]) * m->inv[1]);
    int c = (int)floor((z - m->o[2]) * m->inv[2]);
    if (a < 0 || a >= m->n[0] || b < 0 || b >= m->n[1] || c < 0 || c >= m->n[2])
        return 0;
    uint32_t sc = ((uint32_t)c * (uint32_t)m->n[1] + (uint32_t)b) * (uint32_t)m->n[0] +
                  (uint32_t)a;
    if (m->start[sc] == m->start[sc + 1] && m->solid)
        return m->solid[sc] == j + 1;
    /* a direction no face of a grid-aligned or symmetric body lies along */
    const double u[3] = {0.5773502691896258, 0.6154574548966637, 0.5366563145999495};
    double th, reach = (p->hi[0] - p->lo[0]) + (p->hi[1] - p->lo[1]) + (p->hi[2] - p->lo[2]);
    int64_t t = dsmc_mesh_hit(p, pos, u, reach, 0, -1, &th);
    if (t < 0)
        return 0;
    const double *T = m->tri + 12 * (size_t)t;
    return u[0] * T[9] + u[1] * T[10] + u[2] * T[11] > 0 && dsmc_mesh_solid(p, (uint32_t)t) == j;
}

#endif
