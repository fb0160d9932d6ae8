/* render accelerators: the uniform grid, the kd-tree and the BVH against brute force, with both
 * triangle tests, on random rays over random and degenerate meshes at awkward sizes; the ray-
 * triangle, ray-sphere and slab tests against hand-worked cases.
 *
 * What "the same hit" means: the same triangle at the same distance, bit for bit (every
 * accelerator calls the same triangle test on the same numbers as brute force), or, where two
 * triangles are hit at once (a ray through a shared edge or vertex, coincident or coplanar
 * triangles), another triangle that the triangle test itself hits at a distance within 1e-5
 * (relative) of brute force's: which of tied triangles is reported is not specified. A hit
 * against a miss is a failure, except for a ray grazing the triangle brute force hits (see
 * GRAZE). Any-hit queries must agree with brute force's nearest hit (hit or not), with the same
 * exception. With KEDR_BACKEND selecting cuda, the GPU's BVH queries (kedr_accel_intersect_on,
 * kedr_accel_occluded_on) must return exactly the cpu BVH's results on every scene. */
#include "test_util.h"

#include "kedr/render.h"
#include "render/accel.h"

#define TIE_TOL 1e-5f

typedef struct {
    float *v; /* 9 per triangle */
    size_t n, cap;
} soup;

static void add_tri(soup *s, const float *a, const float *b, const float *c)
{
    if (s->n == s->cap) {
        s->cap = s->cap * 2 + 16;
        s->v = realloc(s->v, s->cap * 9 * sizeof(float));
        if (!s->v)
            exit(1);
    }
    float *t = s->v + s->n++ * 9;
    memcpy(t, a, 12);
    memcpy(t + 3, b, 12);
    memcpy(t + 6, c, 12);
}

static void rnd3(uint64_t *st, float *p, float lo, float hi)
{
    for (int k = 0; k < 3; k++)
        p[k] = lo + (hi - lo) * (float)tu_uniform(st);
}

/* n random triangles of size up to `size` in the unit cube */
static void random_tris(soup *s, size_t n, float size, uint64_t *st)
{
    for (size_t i = 0; i < n; i++) {
        float a[3], b[3], c[3];
        rnd3(st, a, 0, 1);
        for (int k = 0; k < 3; k++) {
            b[k] = a[k] + size * (float)(tu_uniform(st) - 0.5);
            c[k] = a[k] + size * (float)(tu_uniform(st) - 0.5);
        }
        add_tri(s, a, b, c);
    }
}

/* A regular grid of m x m squares (two triangles each) on the plane z = z0: coplanar
 * triangles sharing edges and vertices. */
static void plane_mesh(soup *s, int m, float z0)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            float x0 = (float)i / m, x1 = (float)(i + 1) / m, y0 = (float)j / m,
                  y1 = (float)(j + 1) / m;
            float a[3] = {x0, y0, z0}, b[3] = {x1, y0, z0}, c[3] = {x1, y1, z0},
                  d[3] = {x0, y1, z0};
            add_tri(s, a, b, c);
            add_tri(s, a, c, d);
        }
}

/* A closed UV sphere of radius 0.4 around (0.5, 0.5, 0.5). */
static void sphere_mesh(soup *s, int nu, int nv)
{
    for (int i = 0; i < nu; i++)
        for (int j = 0; j < nv; j++) {
            float p[4][3];
            for (int q = 0; q < 4; q++) {
                double th = M_PI * (j + (q >> 1)) / nv;
                double ph = 2 * M_PI * (i + ((q ^ (q >> 1)) & 1)) / nu;
                p[q][0] = (float)(0.5 + 0.4 * sin(th) * cos(ph));
                p[q][1] = (float)(0.5 + 0.4 * sin(th) * sin(ph));
                p[q][2] = (float)(0.5 + 0.4 * cos(th));
            }
            add_tri(s, p[0], p[1], p[2]);
            add_tri(s, p[0], p[2], p[3]);
        }
}

/* Thin slivers: long needles and near-degenerate and exactly degenerate triangles. */
static void slivers(soup *s, size_t n, uint64_t *st)
{
    for (size_t i = 0; i < n; i++) {
        float a[3], b[3], c[3];
        rnd3(st, a, 0, 1);
        rnd3(st, b, 0, 1);
        float w = i % 3 == 0 ? 0.0f : i % 3 == 1 ? 1e-6f : 1e-3f;
        for (int k = 0; k < 3; k++)
            c[k] = 0.5f * (a[k] + b[k]) + w * (float)(tu_uniform(st) - 0.5);
        if (i % 7 == 0)
            memcpy(c, a, 12); /* two equal vertices */
        add_tri(s, a, b, c);
    }
}

/* Rays: random ones, axis-parallel ones, and ones aimed at vertices, along edges and through
 * edge midpoints of the mesh. */
static void make_rays(const soup *s, kedr_ray *r, size_t n, uint64_t *st)
{
    for (size_t i = 0; i < n; i++) {
        float o[3], p[3], d[3];
        rnd3(st, o, -0.5f, 1.5f);
        int kind = s->n ? (int)(i % 6) : 0;
        const float *t = s->n ? s->v + (tu_next(st) % s->n) * 9 : NULL;
        switch (kind) {
        case 0: rnd3(st, p, 0, 1); break;
        case 1: memcpy(p, t + 3 * (i % 3), 12); break; /* a vertex */
        case 2: /* along an edge, from beyond its end */
            for (int k = 0; k < 3; k++) {
                o[k] = t[k] - 0.5f * (t[3 + k] - t[k]);
                p[k] = t[3 + k];
            }
            break;
        case 3:
            for (int k = 0; k < 3; k++)
                p[k] = 0.5f * (t[3 + k] + t[6 + k]);
            break;
        case 4: rnd3(st, p, 0, 1); p[i % 3] = o[i % 3]; break; /* axis-parallel component */
        default: /* exactly along an axis */
            rnd3(st, p, 0, 1);
            memcpy(o, p, 12);
            o[i % 3] = -0.5f;
            break;
        }
        for (int k = 0; k < 3; k++)
            d[k] = p[k] - o[k];
        if (d[0] == 0 && d[1] == 0 && d[2] == 0)
            d[0] = 1;
        memcpy(r[i].o, o, 12);
        memcpy(r[i].d, d, 12);
        r[i].tmin = i % 5 == 0 ? 0.3f : 0.0f;
        r[i].tmax = i % 4 == 0 ? 0.9f : INFINITY;
    }
}

/* |cos| between the ray and triangle p's plane (0 for a degenerate triangle). */
static float grazing_cos(const soup *s, const kedr_ray *r, int32_t p)
{
    const float *t = s->v + (size_t)p * 9;
    rvec n = rv_cross(rv_sub(rv_load(t + 3), rv_load(t)), rv_sub(rv_load(t + 6), rv_load(t)));
    float l = rv_len(n) * rv_len(rv_load(r->d));
    return l > 0 ? fabsf(rv_dot(n, rv_load(r->d))) / l : 0;
}

/* A ray that grazes the triangle it hits (within GRAZE of its plane, as a ray along an edge of
 * a curved mesh does for the neighbours of that edge) gets a distance from the triangle test
 * that rounding dominates: the computed hit point can lie outside the triangle's box, where an
 * accelerator never looks. For such rays the accelerator may return a farther true hit or a
 * miss instead; they are counted apart. */
#define GRAZE 1e-3f
static size_t grazing_seen;

static int same_hit(const soup *s, const kedr_accel *bf, const kedr_ray *r, kedr_hit x,
                    kedr_hit y)
{
    if (x.prim == y.prim)
        return x.prim < 0 || (x.t == y.t && x.u == y.u && x.v == y.v);
    float t, u, v;
    if (x.prim >= 0 && (!accel_tri(bf, (uint32_t)x.prim, rv_load(r->o), rv_load(r->d), r->tmin,
                                   r->tmax, &t, &u, &v) || t != x.t))
        return 0; /* not a hit of its triangle */
    if (y.prim >= 0 && grazing_cos(s, r, y.prim) < GRAZE && (x.prim < 0 || x.t >= y.t)) {
        grazing_seen++;
        return 1;
    }
    if (x.prim < 0 || y.prim < 0)
        return 0;
    return fabsf(x.t - y.t) <= TIE_TOL * fmaxf(1.0f, fabsf(y.t));
}

static size_t ties_seen;
/* The context of the batch queries on a context: cuda when KEDR_BACKEND selects it, else cpu. */
static kedr_ctx *gpu;

/* The LBVH built on the context (on cuda: by the GPU's kernels) must be the cpu's, node for
 * node: the same keys, the same stable sort, the same per-node code. */
static int grazes_any(const kedr_accel *a, const kedr_ray *r);

static void check_gpu(const char *name, kedr_accel *a, const kedr_ray *rays, size_t nray,
                      const kedr_hit *cpu_hits, const uint8_t *cpu_occ, int test);

/* The nearest hits of the context's queries of a (on cuda: the GPU's traversal of its device
 * arrays) against brute force's, by same_hit; returns the number that differ. */
static size_t against_brute(const soup *s, kedr_accel *a, const kedr_accel *bf,
                            const kedr_ray *rays, size_t nray, const kedr_hit *bf_hits)
{
    kedr_hit *hits = tu_host_alloc(nray * sizeof *hits);
    void *drays = tu_upload(gpu, rays, nray * sizeof *rays), *dhits = NULL;
    TU_OK(kedr_alloc(gpu, &dhits, nray * sizeof *hits));
    TU_OK(kedr_memset(gpu, dhits, TU_POISON_BYTE, nray * sizeof *hits));
    TU_OK(kedr_accel_intersect_on(gpu, a, drays, nray, dhits));
    TU_OK(kedr_download(gpu, hits, dhits, nray * sizeof *hits));
    size_t bad = 0;
    for (size_t i = 0; i < nray; i++)
        bad += !same_hit(s, bf, &rays[i], hits[i], bf_hits[i]);
    kedr_free(gpu, drays);
    kedr_free(gpu, dhits);
    free(hits);
    return bad;
}

/* bf and bf_hits (may be NULL): brute force and its nearest hits on the rays. */
static void check_lbvh_on(const char *name, const kedr_accel *ref, const soup *s, int test,
                          const kedr_ray *rays, size_t nray, const kedr_hit *cpu_hits,
                          const uint8_t *cpu_occ, const kedr_accel *bf, const kedr_hit *bf_hits)
{
    kedr_accel *a = NULL;
    TU_OK(kedr_accel_build_on(gpu, KEDR_ACCEL_LBVH, test, s->v, s->n, &a));
    if (!a)
        return;
    /* the GPU's queries of the tree it built, traced from its own arrays, against brute force
     * and against the cpu's LBVH */
    if (nray && bf) {
        size_t bad = against_brute(s, a, bf, rays, nray, bf_hits);
        TU_CHECK(bad == 0, "%s (%zu triangles), LBVH built on %s, %s: %zu of %zu rays differ "
                 "from brute force", name, s->n, kedr_backend_name(kedr_ctx_backend(gpu)),
                 test ? "woop" : "moller", bad, nray);
    }
    if (nray)
        check_gpu(name, a, rays, nray, cpu_hits, cpu_occ, test);
    /* then a cpu query: on cuda the tree is the GPU's until then, and the query makes the
     * host's copy (the binary tree: the same hits as the cpu's 4-wide one, but where a ray
     * grazes a triangle it hits) */
    kedr_hit *hits = tu_host_alloc((nray ? nray : 1) * sizeof *hits);
    TU_OK(kedr_accel_intersect(a, rays, nray, hits));
    size_t bad = 0;
    for (size_t i = 0; i < nray; i++) {
        int differ = hits[i].prim != cpu_hits[i].prim ||
                     (hits[i].prim >= 0 && hits[i].t != cpu_hits[i].t);
        bad += differ && !grazes_any(a, &rays[i]);
    }
    TU_CHECK(bad == 0, "%s: a cpu query of the LBVH built on %s: %zu of %zu rays differ from the "
             "cpu's LBVH", name, kedr_backend_name(kedr_ctx_backend(gpu)), bad, nray);
    free(hits);
    TU_OK(render_accel_host(a)); /* made already: a no-op */
    int same = a->nbvh == ref->nbvh && a->nrefs == ref->nrefs &&
               memcmp(a->bvh, ref->bvh, ref->nbvh * sizeof *a->bvh) == 0 &&
               memcmp(a->refs, ref->refs, ref->nrefs * sizeof *a->refs) == 0;
    TU_CHECK(same, "%s (%zu triangles): the LBVH built on %s differs from the cpu's", name, s->n,
             kedr_backend_name(kedr_ctx_backend(gpu)));
    /* the downloaded tree's own structure, whatever the comparison found */
    kedr_status st = render_bvh_check(a);
    TU_CHECK(st == KEDR_OK, "%s (%zu triangles): the LBVH built on %s: %s", name, s->n,
             kedr_backend_name(kedr_ctx_backend(gpu)), kedr_last_error());
    kedr_accel_info info;
    kedr_accel_get_info(a, &info);
    int on_gpu = kedr_ctx_backend(gpu) == KEDR_BACKEND_CUDA && s->n >= 2;
    TU_CHECK(on_gpu ? info.device_build_seconds > 0 : info.device_build_seconds == 0,
             "%s: device build time %g s for an LBVH built on %s", name,
             info.device_build_seconds, kedr_backend_name(kedr_ctx_backend(gpu)));
    kedr_accel_destroy(a);
}

/* Whether some triangle the ray hits (between tmin and tmax) is grazed by it (GRAZE). */
static int grazes_any(const kedr_accel *a, const kedr_ray *r)
{
    for (size_t p = 0; p < a->ntri; p++) {
        float t, u, v;
        if (!accel_tri(a, (uint32_t)p, rv_load(r->o), rv_load(r->d), r->tmin, r->tmax, &t, &u,
                       &v))
            continue;
        const float *q = a->tris + p * 9;
        rvec n = rv_cross(rv_sub(rv_load(q + 3), rv_load(q)), rv_sub(rv_load(q + 6), rv_load(q)));
        float l = rv_len(n) * rv_len(rv_load(r->d));
        if (!(l > 0) || fabsf(rv_dot(n, rv_load(r->d))) / l < GRAZE)
            return 1;
    }
    return 0;
}

/* The GPU's BVH queries on the same rays must return what the cpu's BVH returned: the cpu
 * traverses a 4-wide copy of the tree, the GPU the binary tree, with the same leaves, boxes and
 * tie rule, so the hits are the same bit for bit, except where the ray grazes a triangle it
 * hits: such a hit can lie outside the triangle's box, and whether a traversal finds it then
 * depends on the boxes it passes through and on the nearest hit so far (counted apart, and
 * allowed on at most 1 ray in 1000). */
static void check_gpu(const char *name, kedr_accel *a, const kedr_ray *rays, size_t nray,
                      const kedr_hit *cpu_hits, const uint8_t *cpu_occ, int test)
{
    kedr_hit *hits = tu_host_alloc(nray * sizeof *hits);
    uint8_t *occ = tu_host_alloc(nray);
    void *drays = tu_upload(gpu, rays, nray * sizeof *rays), *dhits = NULL, *docc = NULL;
    TU_OK(kedr_alloc(gpu, &dhits, nray * sizeof *hits));
    TU_OK(kedr_alloc(gpu, &docc, nray));
    TU_OK(kedr_memset(gpu, dhits, TU_POISON_BYTE, nray * sizeof *hits));
    TU_OK(kedr_accel_intersect_on(gpu, a, drays, nray, dhits));
    TU_OK(kedr_accel_occluded_on(gpu, a, drays, nray, docc));
    TU_OK(kedr_download(gpu, hits, dhits, nray * sizeof *hits));
    TU_OK(kedr_download(gpu, occ, docc, nray));
    size_t bad = 0, badocc = 0, grazed = 0;
    for (size_t i = 0; i < nray; i++) {
        int differ = hits[i].prim != cpu_hits[i].prim ||
                     (hits[i].prim >= 0 &&
                      (hits[i].t != cpu_hits[i].t || hits[i].u != cpu_hits[i].u ||
                       hits[i].v != cpu_hits[i].v));
        int differ_occ = occ[i] != cpu_occ[i];
        if ((differ || differ_occ) && grazes_any(a, &rays[i])) {
            grazed++;
            continue;
        }
        bad += differ;
        badocc += differ_occ;
    }
    TU_CHECK(bad == 0 && badocc == 0 && grazed * 1000 <= nray,
             "%s (%zu rays), %s bvh %s: %zu nearest and %zu any-hit results differ from the "
             "cpu's (and %zu grazing rays)", name, nray,
             kedr_backend_name(kedr_ctx_backend(gpu)), test ? "woop" : "moller", bad, badocc,
             grazed);
    kedr_free(gpu, drays);
    kedr_free(gpu, dhits);
    kedr_free(gpu, docc);
    free(hits);
    free(occ);
}

/* The kd-tree's structure: children inside the array, every node reached once from the root,
 * no leaf deeper than the build's limit, references valid and distinct in a leaf; and every
 * triangle listed in each leaf whose voxel its box (the padded box the build files it under)
 * overlaps with positive volume, found by walking down with the box. Returns the faults. */
static size_t kd_walk(const kedr_accel *a, uint32_t node, int depth, uint8_t *seen,
                      uint8_t *mark)
{
    if (node >= a->nkd || seen[node]++ || depth > RENDER_STACK - 8)
        return 1;
    const render_kd_node *nd = &a->kd[node];
    if ((nd->info & 3) != 3)
        return kd_walk(a, node + 1, depth + 1, seen, mark) +
               kd_walk(a, nd->info >> 2, depth + 1, seen, mark);
    size_t bad = 0, count = nd->info >> 2;
    const uint32_t *r = a->refs + nd->a.first;
    if (nd->a.first + count > a->nrefs)
        return 1;
    for (size_t i = 0; i < count; i++) {
        bad += r[i] >= a->ntri || mark[r[i]];
        if (r[i] < a->ntri)
            mark[r[i]] = 1;
    }
    for (size_t i = 0; i < count; i++)
        if (r[i] < a->ntri)
            mark[r[i]] = 0;
    return bad;
}
static size_t kd_missing(const kedr_accel *a, uint32_t node, const float *lo, const float *hi,
                         uint32_t p)
{
    const render_kd_node *nd = &a->kd[node];
    if ((nd->info & 3) == 3) {
        const uint32_t *r = a->refs + nd->a.first;
        for (uint32_t i = 0; i < nd->info >> 2; i++)
            if (r[i] == p)
                return 0;
        return 1;
    }
    int k = (int)(nd->info & 3);
    return (lo[k] < nd->a.split ? kd_missing(a, node + 1, lo, hi, p) : 0) +
           (hi[k] > nd->a.split ? kd_missing(a, nd->info >> 2, lo, hi, p) : 0);
}
static void check_kdtree(const char *name, const kedr_accel *a)
{
    if (!a->ntri)
        return;
    uint8_t *seen = calloc(a->nkd, 1), *mark = calloc(a->ntri, 1);
    size_t bad = kd_walk(a, 0, 0, seen, mark), unreached = 0, missing = 0;
    for (size_t i = 0; i < a->nkd; i++)
        unreached += !seen[i];
    if (!bad)
        for (size_t p = 0; p < a->ntri; p++) {
            float lo[3], hi[3];
            accel_tri_box(a, p, lo, hi);
            missing += kd_missing(a, 0, lo, hi, (uint32_t)p);
        }
    TU_CHECK(bad == 0 && unreached == 0 && missing == 0, "%s (%zu triangles): the kd-tree has "
             "%zu faults of structure, %zu of %zu nodes unreached, %zu (triangle, leaf) pairs "
             "missing", name, a->ntri, bad, unreached, a->nkd, missing);
    free(seen), free(mark);
}

static void check_scene(const char *name, const soup *s, size_t nray, uint64_t seed)
{
    uint64_t st = seed;
    kedr_ray *rays = tu_host_alloc(nray * sizeof *rays);
    kedr_hit *ref = tu_host_alloc(nray * sizeof *ref), *got = tu_host_alloc(nray * sizeof *got);
    kedr_hit *kd = tu_host_alloc(nray * sizeof *kd);
    uint8_t *occ = tu_host_alloc(nray), *kdocc = tu_host_alloc(nray);
    make_rays(s, rays, nray, &st);
    for (int test = KEDR_TRI_MOLLER; test <= KEDR_TRI_WOOP; test++) {
        kedr_accel *bf = NULL;
        TU_OK(kedr_accel_build(KEDR_ACCEL_BRUTE, test, s->v, s->n, &bf));
        if (!bf)
            continue;
        TU_OK(kedr_accel_intersect(bf, rays, nray, ref));
        size_t hits = 0;
        for (size_t i = 0; i < nray; i++)
            hits += ref[i].prim >= 0;
        /* the kd-tree's branch-free traversal last, after the stack traversal it must match */
        for (int kind = KEDR_ACCEL_GRID; kind <= KEDR_ACCEL_KDTREE_BF; kind++) {
            kedr_accel *a = NULL;
            TU_OK(kedr_accel_build(kind, test, s->v, s->n, &a));
            if (!a)
                continue;
            memset(got, TU_POISON_BYTE, nray * sizeof *got);
            memset(occ, TU_POISON_BYTE, nray);
            TU_OK(kedr_accel_intersect(a, rays, nray, got));
            TU_OK(kedr_accel_occluded(a, rays, nray, occ));
            size_t bad = 0, badocc = 0;
            for (size_t i = 0; i < nray; i++) {
                if (!same_hit(s, bf, &rays[i], got[i], ref[i])) {
                    if (bad++ < 3)
                        fprintf(stderr, "  %s %s/%s ray %zu: got prim %d t %.9g, brute force %d "
                                "t %.9g\n", name, kedr_accel_name(kind), test ? "woop" : "moller",
                                i, got[i].prim, got[i].t, ref[i].prim, ref[i].t);
                } else if (got[i].prim != ref[i].prim) {
                    ties_seen++;
                }
                /* any-hit: exact, but for a grazing brute-force hit */
                if (occ[i] != (ref[i].prim >= 0) &&
                    !(ref[i].prim >= 0 && grazing_cos(s, &rays[i], ref[i].prim) < GRAZE))
                    badocc++;
            }
            TU_CHECK(bad == 0, "%s (%zu triangles), %s, %s: %zu of %zu rays (%zu hits) differ",
                     name, s->n, kedr_accel_name(kind), test ? "woop" : "moller", bad, nray, hits);
            TU_CHECK(badocc == 0, "%s (%zu triangles), %s, %s: any-hit differs on %zu rays", name,
                     s->n, kedr_accel_name(kind), test ? "woop" : "moller", badocc);
            if (kind == KEDR_ACCEL_KDTREE) {
                check_kdtree(name, a);
                memcpy(kd, got, nray * sizeof *kd);
                memcpy(kdocc, occ, nray);
            } else if (kind == KEDR_ACCEL_KDTREE_BF) {
                /* the same leaves in the same order: the stack traversal's hits bit for bit */
                size_t differ = 0;
                for (size_t i = 0; i < nray; i++)
                    differ += memcmp(&got[i], &kd[i], sizeof *kd) != 0 || occ[i] != kdocc[i];
                TU_CHECK(differ == 0, "%s (%zu triangles), %s: kdtree-bf differs from kdtree's "
                         "stack traversal on %zu of %zu rays", name, s->n,
                         test ? "woop" : "moller", differ, nray);
            }
            if (kind == KEDR_ACCEL_BVH || kind == KEDR_ACCEL_LBVH) {
                kedr_status st = render_bvh_check(a);
                TU_CHECK(st == KEDR_OK, "%s (%zu triangles), %s: %s", name, s->n,
                         kedr_accel_name(kind), kedr_last_error());
                check_gpu(name, a, rays, nray, got, occ, test);
            }
            if (kind == KEDR_ACCEL_LBVH)
                check_lbvh_on(name, a, s, test, rays, nray, got, occ, bf, ref);
            kedr_accel_destroy(a);
        }
        kedr_accel_destroy(bf);
    }
    free(rays), free(ref), free(got), free(occ), free(kd), free(kdocc);
}

static void check_scenes(void)
{
    static const size_t sizes[] = {0, 1, 2, 3, 31, 33, 257, 1023, 4097};
    size_t nsz = tu_quick() ? 7 : sizeof sizes / sizeof sizes[0];
    size_t nray = tu_scale(3000, 800);
    uint64_t st = 17;
    for (size_t i = 0; i < nsz; i++) {
        soup s = {0};
        random_tris(&s, sizes[i], 0.2f, &st);
        check_scene("random", &s, nray, 100 + i);
        free(s.v);
        s = (soup){0};
        random_tris(&s, sizes[i], 2.0f, &st); /* large overlapping triangles */
        check_scene("large random", &s, nray, 200 + i);
        free(s.v);
        s = (soup){0};
        slivers(&s, sizes[i], &st);
        check_scene("slivers", &s, nray, 300 + i);
        free(s.v);
    }
    soup s = {0};
    plane_mesh(&s, tu_quick() ? 7 : 16, 0.5f);
    check_scene("coplanar grid", &s, nray, 400);
    plane_mesh(&s, 5, 0.5f); /* coincident with the first */
    plane_mesh(&s, 3, 0.25f);
    check_scene("coplanar overlapping", &s, nray, 401);
    free(s.v);
    s = (soup){0};
    sphere_mesh(&s, tu_quick() ? 12 : 40, tu_quick() ? 7 : 21);
    check_scene("closed sphere", &s, nray, 402);
    free(s.v);
    s = (soup){0};
    float a[3] = {0.2f, 0.2f, 0.5f}, b[3] = {0.8f, 0.3f, 0.5f}, c[3] = {0.4f, 0.9f, 0.5f};
    for (int i = 0; i < 40; i++)
        add_tri(&s, a, b, c); /* one triangle, many times: every hit a tie */
    check_scene("coincident", &s, nray, 403);
    free(s.v);
    s = (soup){0};
    /* the teapot in a stadium: a dense cluster inside large, sparse surroundings */
    random_tris(&s, tu_scale(3000, 600), 0.002f, &st);
    for (size_t i = 0; i < s.n * 9; i++)
        s.v[i] = 0.49f + 0.02f * s.v[i];
    soup big = {0};
    random_tris(&big, 50, 0.3f, &st);
    for (size_t i = 0; i < big.n; i++)
        add_tri(&s, big.v + i * 9, big.v + i * 9 + 3, big.v + i * 9 + 6);
    check_scene("dense in sparse", &s, nray, 404);
    free(s.v);
    free(big.v);
}

/* An LBVH of many triangles, beyond one block of the GPU's reduction and one tile of its sort:
 * random small triangles, and a quarter in one cluster smaller than a Morton cell (equal codes,
 * the tree split by index). Built on the context (the GPU with cuda) and on the cpu: the same
 * tree node for node, both valid, and the GPU's queries of its own tree as the cpu's. */
static void check_large(void)
{
    size_t n = tu_scale(60000, 20000);
    uint64_t st = 99;
    soup s = {0}, c = {0};
    random_tris(&s, n - n / 4, 0.01f, &st);
    random_tris(&c, n / 4, 0.5f, &st);
    for (size_t i = 0; i < c.n; i++) {
        for (int k = 0; k < 9; k++)
            c.v[i * 9 + k] = 0.3f + 1e-3f * c.v[i * 9 + k];
        add_tri(&s, c.v + i * 9, c.v + i * 9 + 3, c.v + i * 9 + 6);
    }
    size_t nray = tu_scale(4000, 1000);
    kedr_ray *rays = tu_host_alloc(nray * sizeof *rays);
    kedr_hit *hits = tu_host_alloc(nray * sizeof *hits);
    uint8_t *occ = tu_host_alloc(nray);
    make_rays(&s, rays, nray, &st);
    kedr_accel *a = NULL;
    TU_OK(kedr_accel_build(KEDR_ACCEL_LBVH, KEDR_TRI_MOLLER, s.v, s.n, &a));
    if (a) {
        kedr_status vs = render_bvh_check(a);
        TU_CHECK(vs == KEDR_OK, "large LBVH on the cpu: %s", kedr_last_error());
        TU_OK(kedr_accel_intersect(a, rays, nray, hits));
        TU_OK(kedr_accel_occluded(a, rays, nray, occ));
        check_lbvh_on("large", a, &s, KEDR_TRI_MOLLER, rays, nray, hits, occ, NULL, NULL);
        kedr_accel_destroy(a);
    }
    free(rays), free(hits), free(occ), free(s.v), free(c.v);
}

/* KEDR_LBVH_TREELET_MIN: a bad value refused, naming it; 0 (no treelets) and 7 (a treelet at
 * nearly every node: the GPU's restructuring exercised everywhere) give valid trees with brute
 * force's hits, different from each other, and the same on the context as on the cpu. */
static void check_treelet_env(void)
{
    uint64_t st = 31;
    soup s = {0};
    random_tris(&s, 1500, 0.1f, &st);
    size_t nray = tu_scale(2000, 600);
    kedr_ray *rays = tu_host_alloc(nray * sizeof *rays);
    kedr_hit *ref = tu_host_alloc(nray * sizeof *ref), *hits = tu_host_alloc(nray * sizeof *hits);
    uint8_t *occ = tu_host_alloc(nray);
    make_rays(&s, rays, nray, &st);
    kedr_accel *bf = NULL, *a = NULL, *off = NULL;
    TU_OK(kedr_accel_build(KEDR_ACCEL_BRUTE, KEDR_TRI_MOLLER, s.v, s.n, &bf));
    TU_OK(kedr_accel_intersect(bf, rays, nray, ref));
    setenv("KEDR_LBVH_TREELET_MIN", "12x", 1);
    TU_CHECK(kedr_accel_build(KEDR_ACCEL_LBVH, KEDR_TRI_MOLLER, s.v, s.n, &a) == KEDR_ERR_INVALID &&
             !a && strstr(kedr_last_error(), "KEDR_LBVH_TREELET_MIN=12x"),
             "a bad KEDR_LBVH_TREELET_MIN refused: %s", kedr_last_error());
    static const char *const values[] = {"0", "7"};
    for (int v = 0; v < 2; v++) {
        setenv("KEDR_LBVH_TREELET_MIN", values[v], 1);
        char name[64];
        snprintf(name, sizeof name, "treelets from %s", values[v]);
        a = NULL;
        TU_OK(kedr_accel_build(KEDR_ACCEL_LBVH, KEDR_TRI_MOLLER, s.v, s.n, &a));
        if (!a)
            continue;
        TU_CHECK(render_bvh_check(a) == KEDR_OK, "%s: %s", name, kedr_last_error());
        TU_OK(kedr_accel_intersect(a, rays, nray, hits));
        TU_OK(kedr_accel_occluded(a, rays, nray, occ));
        size_t bad = 0;
        for (size_t i = 0; i < nray; i++)
            bad += !same_hit(&s, bf, &rays[i], hits[i], ref[i]);
        TU_CHECK(bad == 0, "%s: %zu of %zu rays differ from brute force", name, bad, nray);
        check_lbvh_on(name, a, &s, KEDR_TRI_MOLLER, rays, nray, hits, occ, bf, ref);
        if (v == 0) {
            off = a;
            continue;
        }
        TU_CHECK(off && (off->nbvh != a->nbvh ||
                         memcmp(off->bvh, a->bvh, a->nbvh * sizeof *a->bvh) != 0),
                 "treelets from 7 triangles left the tree as it was without");
        kedr_accel_destroy(a);
    }
    unsetenv("KEDR_LBVH_TREELET_MIN");
    kedr_accel_destroy(off);
    kedr_accel_destroy(bf);
    free(rays), free(ref), free(hits), free(occ), free(s.v);
}

/* The tree check finds a reference in two leaves, a box that does not contain its child's, a
 * child outside the tree and a triangle in no leaf. */
static void check_validator(void)
{
    uint64_t st = 5;
    soup s = {0};
    random_tris(&s, 100, 0.1f, &st);
    for (int kind = KEDR_ACCEL_BVH; kind <= KEDR_ACCEL_LBVH; kind++) {
        kedr_accel *a = NULL;
        TU_OK(kedr_accel_build(kind, KEDR_TRI_MOLLER, s.v, s.n, &a));
        if (!a)
            continue;
        TU_CHECK(render_bvh_check(a) == KEDR_OK, "%s: a sound tree: %s", kedr_accel_name(kind),
                 kedr_last_error());
        uint32_t r0 = a->refs[0];
        a->refs[0] = a->refs[1];
        TU_CHECK(render_bvh_check(a) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "in two leaves"), "%s: a triangle twice: %s",
                 kedr_accel_name(kind), kedr_last_error());
        a->refs[0] = r0;
        uint32_t l = a->bvh[0].index;
        float lo = a->bvh[l].lo[1];
        a->bvh[l].lo[1] = a->bvh[0].lo[1] - 1;
        TU_CHECK(render_bvh_check(a) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "does not contain its child"),
                 "%s: a child's box outside: %s", kedr_accel_name(kind), kedr_last_error());
        a->bvh[l].lo[1] = lo;
        a->bvh[0].index = (uint32_t)a->nbvh - 1;
        TU_CHECK(render_bvh_check(a) == KEDR_ERR_INVALID && strstr(kedr_last_error(), "outside"),
                 "%s: a child outside the tree: %s", kedr_accel_name(kind), kedr_last_error());
        a->bvh[0].index = l;
        /* a leaf of the BVH (up to 8 triangles) that forgets its last: a triangle in no leaf */
        size_t leaf = a->nbvh;
        for (size_t i = 0; i < a->nbvh && leaf == a->nbvh; i++)
            if (a->bvh[i].count > 1)
                leaf = i;
        if (kind == KEDR_ACCEL_BVH) {
            TU_CHECK(leaf < a->nbvh, "a BVH leaf of several triangles");
            if (leaf < a->nbvh) {
                a->bvh[leaf].count--;
                TU_CHECK(render_bvh_check(a) == KEDR_ERR_INVALID &&
                         strstr(kedr_last_error(), "in no leaf"), "a triangle in no leaf: %s",
                         kedr_last_error());
                a->bvh[leaf].count++;
            }
        }
        TU_CHECK(render_bvh_check(a) == KEDR_OK, "%s: restored: %s", kedr_accel_name(kind),
                 kedr_last_error());
        kedr_accel_destroy(a);
    }
    free(s.v);
}

/* The GPU's scene box (render.cu): floats reduced as ordered words by atomicMin and atomicMax
 * in two passes, the pad from lbvh_pad_after. Here the same words reduced on the cpu, in a
 * shuffled order, must give accel.c's box and pad bit for bit; and the words must order floats
 * as < does (-0 below +0) and give each float back. */
static void check_device_frame(void)
{
    uint64_t st = 77;
    static const float special[] = {0.0f, -0.0f, 1e-45f, -1e-45f, 1.17549435e-38f, -3.4e38f,
                                    3.4e38f, 1.0f, -1.0f, INFINITY, -INFINITY};
    size_t nsp = sizeof special / sizeof special[0], bad = 0;
    for (size_t i = 0; i < 20000; i++) {
        float x = i < nsp * nsp ? special[i / nsp]
                                : (float)ldexp(tu_uniform(&st) - 0.5, (int)(tu_next(&st) % 80) - 40);
        float y = i < nsp * nsp ? special[i % nsp] : (float)(tu_uniform(&st) * 4 - 2);
        uint32_t wx = lbvh_ordered_word(x), wy = lbvh_ordered_word(y);
        float bx = lbvh_ordered_float(wx);
        int order = x < y ? wx < wy : x > y ? wx > wy : 1;
        int zero = !(x == 0 && y == 0) || (signbit(x) == signbit(y)) == (wx == wy);
        bad += !order || !zero || memcmp(&bx, &x, sizeof x) != 0;
    }
    TU_CHECK(bad == 0, "ordered words: %zu pairs of floats out of order or not given back", bad);
    static const size_t sizes[] = {1, 2, 7, 1000};
    for (int m = 0; m < 4; m++) {
        soup s = {0};
        random_tris(&s, sizes[m], 0.3f, &st);
        for (size_t i = 0; i < s.n * 9; i++) /* off the origin, some negative, some huge */
            s.v[i] = m == 3 ? 1000.0f * s.v[i] - 400.0f : s.v[i] - 0.5f;
        kedr_accel *a = NULL;
        TU_OK(kedr_accel_build(KEDR_ACCEL_BRUTE, KEDR_TRI_MOLLER, s.v, s.n, &a));
        if (!a) {
            free(s.v);
            continue;
        }
        lbvh_bounds b;
        memset(b.lo, 0xFF, sizeof b.lo);
        memset(b.hi, 0, sizeof b.hi);
        for (int pass = 0; pass < 2; pass++) {
            float pad = lbvh_pad_after(&b, pass);
            for (size_t j = 0; j < s.n; j++) {
                size_t i = (j * 7919 + 13) % s.n; /* not in index order */
                float lo[3], hi[3];
                tri_box_padded(a->tris + i * 9, pad, lo, hi);
                for (int k = 0; k < 3; k++) {
                    uint32_t wl = lbvh_ordered_word(lo[k]), wh = lbvh_ordered_word(hi[k]);
                    b.lo[pass][k] = wl < b.lo[pass][k] ? wl : b.lo[pass][k];
                    b.hi[pass][k] = wh > b.hi[pass][k] ? wh : b.hi[pass][k];
                }
            }
        }
        float lo[3], hi[3];
        lbvh_box_of_pass(&b, 1, lo, hi);
        float pad = lbvh_pad_after(&b, 2);
        int same = pad == a->pad;
        for (int k = 0; k < 3; k++)
            same &= lo[k] == a->lo[k] && hi[k] == a->hi[k];
        TU_CHECK(same, "%zu triangles: the GPU's scene box (%g %g %g) .. (%g %g %g) pad %g "
                 "differs from the cpu's (%g %g %g) .. (%g %g %g) pad %g", s.n, lo[0], lo[1],
                 lo[2], hi[0], hi[1], hi[2], pad, a->lo[0], a->lo[1], a->lo[2], a->hi[0],
                 a->hi[1], a->hi[2], a->pad);
        kedr_accel_destroy(a);
        free(s.v);
    }
}

/* The triangle tests on hand-worked cases. */
static void check_tests(void)
{
    float tri[9] = {0, 0, 0, 2, 0, 0, 0, 2, 0}, w[12];
    kedr_accel *a = NULL;
    TU_OK(kedr_accel_build(KEDR_ACCEL_BRUTE, KEDR_TRI_WOOP, tri, 1, &a));
    memcpy(w, a->woop, sizeof w);
    kedr_accel_destroy(a);
    /* the ray (0.5, 0.25, 3) - t z hits at t = 3, u = 0.25, v = 0.125 */
    rvec o = rv(0.5f, 0.25f, 3.0f), d = rv(0, 0, -1);
    float t = 0, u = 0, v = 0;
    TU_CHECK(tri_moller(tri, o, d, 0, INFINITY, &t, &u, &v) && t == 3 && u == 0.25f &&
             v == 0.125f, "moller: t %g u %g v %g", t, u, v);
    t = u = v = 0;
    TU_CHECK(tri_woop(w, o, d, 0, INFINITY, &t, &u, &v) && t == 3 && u == 0.25f && v == 0.125f,
             "woop: t %g u %g v %g", t, u, v);
    TU_CHECK(!tri_moller(tri, o, d, 0, 3, &t, &u, &v) && !tri_woop(w, o, d, 0, 3, &t, &u, &v),
             "t = tmax is not a hit");
    o = rv(1.5f, 1.5f, 3.0f); /* outside the hypotenuse */
    TU_CHECK(!tri_moller(tri, o, d, 0, INFINITY, &t, &u, &v) &&
             !tri_woop(w, o, d, 0, INFINITY, &t, &u, &v), "a miss beyond the hypotenuse");
    o = rv(-1, 0.5f, 0); /* in the triangle's plane */
    TU_CHECK(!tri_moller(tri, o, rv(1, 0, 0), 0, INFINITY, &t, &u, &v), "a ray in the plane");
    /* sphere: centre (0,0,5), r = 1, ray from the origin along z: t = 4 and, from inside, 6 */
    TU_CHECK(sphere_hit(rv(0, 0, 5), 1, rv(0, 0, 0), rv(0, 0, 1), 0, INFINITY, &t) && t == 4,
             "sphere near root %g", t);
    TU_CHECK(sphere_hit(rv(0, 0, 5), 1, rv(0, 0, 0), rv(0, 0, 1), 4.5f, INFINITY, &t) && t == 6,
             "sphere far root %g", t);
    TU_CHECK(!sphere_hit(rv(0, 0, 5), 1, rv(0, 1.01f, 0), rv(0, 0, 1), 0, INFINITY, &t),
             "sphere miss");
    /* a far sphere keeps its precision: r = 1 at distance 1e4, t = 1e4 - 1 */
    TU_CHECK(sphere_hit(rv(0, 0, 1e4f), 1, rv(0, 0, 0), rv(0, 0, 2), 0, INFINITY, &t) &&
             fabsf(t - 4999.5f) <= 1e-3f, "far sphere t %.7g", t);
    TU_CHECK(plane_hit(rv(0, 0, 2), 4, rv(0, 0, 0), rv(0, 0.5f, 1), 0, INFINITY, &t) && t == 2,
             "plane t %g", t);
    TU_CHECK(!plane_hit(rv(0, 0, 1), 2, rv(0, 0, 0), rv(1, 0, 0), 0, INFINITY, &t),
             "a ray parallel to a plane");
    /* slab: the unit box, a ray along x at y = 0.5: enters at 1, leaves at 2 */
    float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, tn, tf;
    o = rv(-1, 0.5f, 0.5f);
    TU_CHECK(box_hit(lo, hi, o, rv_inverse(rv(1, 0, 0)), 0, INFINITY, &tn, &tf) && tn == 1 &&
             tf >= 2 && tf < 2.00001f, "slab %g %g", tn, tf);
    o = rv(-1, 0, 0.5f); /* on the face y = 0, parallel to it: kept (conservative) */
    TU_CHECK(box_hit(lo, hi, o, rv_inverse(rv(1, 0, 0)), 0, INFINITY, &tn, &tf), "slab on a face");
    o = rv(-1, 1.5f, 0.5f);
    TU_CHECK(!box_hit(lo, hi, o, rv_inverse(rv(1, 0, 0)), 0, INFINITY, &tn, &tf), "slab miss");
}

static void check_errors(void)
{
    float tri[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    kedr_accel *a = NULL;
    tri[4] = NAN;
    TU_CHECK(kedr_accel_build(KEDR_ACCEL_BVH, KEDR_TRI_MOLLER, tri, 1, &a) == KEDR_ERR_INVALID &&
             !a && strstr(kedr_last_error(), "triangle 0, vertex 1 has a NaN"),
             "NaN vertex refused: %s", kedr_last_error());
    tri[4] = INFINITY;
    TU_CHECK(kedr_accel_build(KEDR_ACCEL_GRID, KEDR_TRI_MOLLER, tri, 1, &a) == KEDR_ERR_INVALID,
             "infinite vertex refused");
    kedr_accel_kind k;
    TU_CHECK(kedr_accel_parse("kd-tree", &k) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "kd-tree"), "unknown accelerator named");
    TU_CHECK(kedr_accel_parse("kdtree", &k) == KEDR_OK && k == KEDR_ACCEL_KDTREE, "kdtree parsed");
    TU_CHECK(kedr_accel_parse("kdtree-bf", &k) == KEDR_OK && k == KEDR_ACCEL_KDTREE_BF &&
             strcmp(kedr_accel_name(k), "kdtree-bf") == 0, "kdtree-bf parsed and named");
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++)
        if (list[b] == KEDR_BACKEND_CUDA)
            gpu = tu_ctx(KEDR_BACKEND_CUDA);
    if (!gpu)
        gpu = tu_ctx(KEDR_BACKEND_CPU);
    check_tests();
    check_errors();
    check_device_frame();
    check_scenes();
    check_validator();
    check_treelet_env();
    check_large();
    printf("ties at shared edges and coincident triangles: %zu rays; grazing hits: %zu rays\n",
           ties_seen, grazing_seen);
    if (kedr_ctx_backend(gpu) == KEDR_BACKEND_CUDA) {
        /* a grid on cuda is refused */
        kedr_accel *a = NULL;
        float tri[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
        TU_OK(kedr_accel_build(KEDR_ACCEL_GRID, KEDR_TRI_MOLLER, tri, 1, &a));
        kedr_hit h;
        TU_CHECK(kedr_accel_intersect_on(gpu, a, NULL, 0, &h) == KEDR_ERR_UNSUPPORTED,
                 "a grid on cuda refused");
        kedr_accel_destroy(a);
    }
    kedr_ctx_destroy(gpu);
    return tu_finish("test_render_accel");
}
