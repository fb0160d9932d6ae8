/* render: building an accelerator (argument checks, the Woop transforms, the scene box), brute
 * force, and the batch queries over all threads. */
#include "render/accel.h"

#include <stdlib.h>
#include <string.h>

#define FN "kedr_accel_build"

static const char *const accel_names[] = {"brute", "grid", "kdtree", "bvh", "lbvh", "kdtree-bf",
                                           NULL};

const char *kedr_accel_name(kedr_accel_kind k)
{
    return (unsigned)k <= KEDR_ACCEL_KDTREE_BF ? accel_names[k] : "unknown";
}

kedr_status kedr_accel_parse(const char *text, kedr_accel_kind *out)
{
    for (int i = 0; text && accel_names[i]; i++)
        if (strcmp(text, accel_names[i]) == 0) {
            *out = (kedr_accel_kind)i;
            return KEDR_OK;
        }
    return kedr_fail(KEDR_ERR_INVALID,
                     "accelerator '%s': expected grid, kdtree, kdtree-bf, bvh, lbvh or brute",
                     text ? text : "(null)");
}

/* Whether a triangle has no area to within rounding: |e1 x e2| <= 2^-20 |e1| |e2| (the sine of
 * its angle at v0 below 1e-6), in double. */
static int tri_degenerate(const float *t)
{
    double e1[3], e2[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = (double)t[3 + k] - t[k];
        e2[k] = (double)t[6 + k] - t[k];
    }
    double n0 = e1[1] * e2[2] - e1[2] * e2[1], n1 = e1[2] * e2[0] - e1[0] * e2[2],
           n2 = e1[0] * e2[1] - e1[1] * e2[0];
    double nn = n0 * n0 + n1 * n1 + n2 * n2;
    double l1 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
    double l2 = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
    return !(nn > 0x1p-32 * l1 * l2);
}

/* Woop's rows: M = [e1 e2 n] with origin v0 maps the unit triangle onto the triangle; its
 * inverse (computed in double) maps world space into the unit triangle's space. */
static void woop_rows(const float *t, float *w)
{
    double v0[3], e1[3], e2[3], n[3];
    for (int k = 0; k < 3; k++) {
        v0[k] = t[k];
        e1[k] = (double)t[3 + k] - t[k];
        e2[k] = (double)t[6 + k] - t[k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    /* rows of the inverse of the matrix with columns e1, e2, n: cross products over det */
    double c0[3] = {e2[1] * n[2] - e2[2] * n[1], e2[2] * n[0] - e2[0] * n[2],
                    e2[0] * n[1] - e2[1] * n[0]};
    double c1[3] = {n[1] * e1[2] - n[2] * e1[1], n[2] * e1[0] - n[0] * e1[2],
                    n[0] * e1[1] - n[1] * e1[0]};
    double det = e1[0] * c0[0] + e1[1] * c0[1] + e1[2] * c0[2];
    memset(w, 0, 12 * sizeof *w);
    if (!(det != 0.0) || !isfinite(1.0 / det))
        return; /* degenerate: never hit */
    const double *rows[3] = {c0, c1, n};
    double nn = n[0] * n[0] + n[1] * n[1] + n[2] * n[2]; /* det = |n|^2 */
    for (int r = 0; r < 3; r++) {
        double s = r < 2 ? 1.0 / det : 1.0 / nn, off = 0;
        for (int k = 0; k < 3; k++) {
            w[r * 4 + k] = (float)(rows[r][k] * s);
            off -= rows[r][k] * s * v0[k];
        }
        w[r * 4 + 3] = (float)off;
    }
}

kedr_status kedr_accel_build(kedr_accel_kind kind, kedr_tri_test test, const float *tris,
                             size_t ntri, kedr_accel **out)
{
    return kedr_accel_build_on(NULL, kind, test, tris, ntri, out);
}

kedr_status kedr_accel_build_on(kedr_ctx *ctx, kedr_accel_kind kind, kedr_tri_test test,
                                const float *tris, size_t ntri, kedr_accel **out)
{
    if (!out)
        return kedr_fail(KEDR_ERR_INVALID, "%s: out is NULL", FN);
    *out = NULL;
    if (ntri && !tris)
        return kedr_fail(KEDR_ERR_INVALID, "%s: tris is NULL with %zu triangles", FN, ntri);
    if ((unsigned)kind > KEDR_ACCEL_KDTREE_BF || (unsigned)test > KEDR_TRI_WOOP)
        return kedr_fail(KEDR_ERR_INVALID, "%s: unknown accelerator %d or test %d", FN, (int)kind,
                         (int)test);
    if (ntri >= UINT32_MAX / 4)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu triangles: at most %u", FN, ntri,
                         UINT32_MAX / 4 - 1);
    /* the first coordinate that is not finite (the loops over the triangles run on every core:
     * a GPU's build of 10^7 triangles waits for them) */
    int64_t ncoord = (int64_t)(ntri * 9), bad = ncoord;
#pragma omp parallel for schedule(static) reduction(min : bad) if (ncoord > 65536)
    for (int64_t i = 0; i < ncoord; i++)
        if (!isfinite(tris[i]) && i < bad)
            bad = i;
    if (bad < ncoord)
        return kedr_fail(KEDR_ERR_INVALID, "%s: triangle %zu, vertex %zu has a %s coordinate",
                         FN, (size_t)bad / 9, (size_t)bad % 9 / 3,
                         isnan(tris[bad]) ? "NaN" : "infinite");
    double t0 = kedr_wall_seconds();
    kedr_accel *a = calloc(1, sizeof *a);
    if (!a)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", FN);
    a->kind = kind;
    a->test = test;
    a->ntri = ntri;
    pthread_mutex_init(&a->host_lock, NULL);
    size_t bytes = ntri * 9 * sizeof(float);
    a->tris = malloc(bytes ? bytes : 1);
    if (test == KEDR_TRI_WOOP)
        a->woop = malloc(ntri ? ntri * 12 * sizeof(float) : 1);
    if (!a->tris || (test == KEDR_TRI_WOOP && !a->woop)) {
        char b[32];
        kedr_accel_destroy(a);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for %zu triangles (%s)", FN,
                         ntri, kedr_format_bytes((double)bytes * (test ? 7 : 3) / 3, b, sizeof b));
    }
    /* degenerate triangles (zero area to within rounding) are collapsed to their first vertex,
     * which neither test ever hits: their normals, and so their hits, would be noise */
    int64_t nt = (int64_t)ntri, degenerate = 0;
#pragma omp parallel for schedule(static) reduction(+ : degenerate) if (nt > 8192)
    for (int64_t i = 0; i < nt; i++) {
        float *t = a->tris + i * 9;
        memcpy(t, tris + i * 9, 9 * sizeof(float));
        if (tri_degenerate(t)) {
            memcpy(t + 3, t, 3 * sizeof(float));
            memcpy(t + 6, t, 3 * sizeof(float));
            degenerate++;
        }
    }
    a->info.degenerate = (size_t)degenerate;
    float ext = 0;
    for (int pass = 0; pass < 2; pass++) {
        float l0 = INFINITY, l1 = INFINITY, l2 = INFINITY;
        float h0 = -INFINITY, h1 = -INFINITY, h2 = -INFINITY;
#pragma omp parallel for schedule(static) reduction(min : l0, l1, l2) reduction(max : h0, h1, h2) \
    if (nt > 8192)
        for (int64_t i = 0; i < nt; i++) {
            float lo[3], hi[3];
            accel_tri_box(a, (size_t)i, lo, hi);
            l0 = rmin(l0, lo[0]), l1 = rmin(l1, lo[1]), l2 = rmin(l2, lo[2]);
            h0 = rmax(h0, hi[0]), h1 = rmax(h1, hi[1]), h2 = rmax(h2, hi[2]);
        }
        float l[3] = {l0, l1, l2}, h[3] = {h0, h1, h2};
        for (int k = 0; k < 3; k++) {
            a->lo[k] = ntri ? l[k] : 0;
            a->hi[k] = ntri ? h[k] : 0;
        }
        a->pad = lbvh_pad_update(&ext, a->lo, a->hi); /* the second pass widens every box by it */
    }
    if (a->woop) {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < ntri; i++)
            woop_rows(a->tris + i * 9, a->woop + i * 12);
    }
    kedr_status s = KEDR_OK;
    switch (kind) {
    case KEDR_ACCEL_BRUTE: break;
    case KEDR_ACCEL_GRID: s = render_grid_build(a); break;
    case KEDR_ACCEL_KDTREE:
    case KEDR_ACCEL_KDTREE_BF: s = render_kd_build(a); break;
    case KEDR_ACCEL_BVH: s = render_bvh_build(a); break;
    case KEDR_ACCEL_LBVH: s = render_lbvh_build(a, ctx); break;
    }
    /* the cpu's 4-wide copy; an LBVH built on a GPU is traced there, and a cpu query of it
     * walks the binary tree (the same answers) rather than wait for a collapse on the host */
    int on_gpu = ctx && kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    if (s == KEDR_OK && (kind == KEDR_ACCEL_BVH || (kind == KEDR_ACCEL_LBVH && !on_gpu)))
        s = render_bvh4_build(a);
    if (s != KEDR_OK) {
        kedr_accel_destroy(a);
        return s;
    }
    a->info.build_seconds = kedr_wall_seconds() - t0;
    a->info.bytes = sizeof *a + ntri * (a->woop ? 21 : 9) * sizeof(float) +
                    a->nleaf_tris * sizeof(float) +
                    a->nbvh * sizeof(render_bvh_node) + a->nbvh4 * sizeof(render_bvh4_node) +
                    a->nkd * sizeof(render_kd_node) +
                    a->nrefs * sizeof(uint32_t) +
                    (a->start ? ((size_t)a->res[0] * a->res[1] * a->res[2] + 1) * 4 : 0);
    a->info.refs = a->nrefs;
    *out = a;
    return KEDR_OK;
}

void kedr_accel_destroy(kedr_accel *a)
{
    if (!a)
        return;
#ifdef KEDR_HAVE_CUDA
    render_cuda_release(a);
#endif
    free(a->tris);
    free(a->woop);
    free(a->bvh);
    free(a->bvh4);
    free(a->leaf_tris);
    free(a->kd);
    free(a->start);
    free(a->refs);
    pthread_mutex_destroy(&a->host_lock);
    free(a);
}

kedr_status render_accel_host(const kedr_accel *ca)
{
    kedr_accel *a = (kedr_accel *)ca; /* the copy is a cache: the tree does not change */
    if (!a || !__atomic_load_n(&a->host_pending, __ATOMIC_ACQUIRE))
        return KEDR_OK;
    kedr_status s = KEDR_OK;
    pthread_mutex_lock(&a->host_lock);
    if (a->host_pending) {
#ifdef KEDR_HAVE_CUDA
        s = render_cuda_host_copy(a);
#else
        s = kedr_fail(KEDR_ERR_INVALID, "render: a GPU's tree in a build without cuda");
#endif
        if (s == KEDR_OK)
            __atomic_store_n(&a->host_pending, 0, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&a->host_lock);
    return s;
}

void kedr_accel_get_info(const kedr_accel *a, kedr_accel_info *info) { *info = a->info; }

static int brute_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    rvec o = rv_load(r->o), d = rv_load(r->d);
    int found = 0;
    for (size_t i = 0; i < a->ntri; i++) {
        uint32_t p = (uint32_t)i;
        if (accel_leaf(a, &p, 1, o, d, r->tmin, h, any)) {
            found = 1;
            if (any)
                break;
        }
    }
    return found;
}

int render_trace(const kedr_accel *a, const kedr_ray *r, kedr_hit *h, int any)
{
    h->t = r->tmax;
    h->u = h->v = 0;
    h->prim = -1;
    if (!a->ntri)
        return 0;
    switch (a->kind) {
    case KEDR_ACCEL_BRUTE: return brute_trace(a, r, h, any);
    case KEDR_ACCEL_GRID: return render_grid_trace(a, r, h, any);
    case KEDR_ACCEL_KDTREE: return render_kd_trace(a, r, h, any);
    case KEDR_ACCEL_KDTREE_BF: return render_kd_trace_bf(a, r, h, any);
    case KEDR_ACCEL_BVH:
    case KEDR_ACCEL_LBVH: return render_bvh_trace(a, r, h, any);
    }
    return 0;
}

kedr_status kedr_accel_intersect(const kedr_accel *a, const kedr_ray *rays, size_t n,
                                 kedr_hit *hits)
{
    if (!a || (n && (!rays || !hits)))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_accel_intersect: a NULL argument");
    KEDR_TRY(render_accel_host(a));
#pragma omp parallel for schedule(dynamic, 1024)
    for (size_t i = 0; i < n; i++)
        render_trace(a, &rays[i], &hits[i], 0);
    return KEDR_OK;
}

kedr_status kedr_accel_occluded(const kedr_accel *a, const kedr_ray *rays, size_t n,
                                uint8_t *occluded)
{
    if (!a || (n && (!rays || !occluded)))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_accel_occluded: a NULL argument");
    KEDR_TRY(render_accel_host(a));
#pragma omp parallel for schedule(dynamic, 1024)
    for (size_t i = 0; i < n; i++) {
        kedr_hit h;
        occluded[i] = (uint8_t)render_trace(a, &rays[i], &h, 1);
    }
    return KEDR_OK;
}

static kedr_status query_on(kedr_ctx *ctx, kedr_accel *a, const kedr_ray *rays, size_t n,
                            kedr_hit *hits, uint8_t *occluded, const char *fn)
{
    if (!ctx || !a || (n && (!rays || (!hits && !occluded))))
        return kedr_fail(KEDR_ERR_INVALID, "%s: a NULL argument", fn);
    if (kedr_ctx_backend(ctx) != KEDR_BACKEND_CUDA)
        return hits ? kedr_accel_intersect(a, rays, n, hits)
                    : kedr_accel_occluded(a, rays, n, occluded);
#ifdef KEDR_HAVE_CUDA
    if (a->kind != KEDR_ACCEL_BVH && a->kind != KEDR_ACCEL_LBVH)
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: the cuda back end traverses BVHs only, not "
                         "a %s", fn, kedr_accel_name(a->kind));
    return render_cuda_trace(ctx, a, rays, n, hits, occluded);
#else
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: this build has no cuda back end", fn);
#endif
}

kedr_status kedr_accel_intersect_on(kedr_ctx *ctx, kedr_accel *a, const kedr_ray *rays, size_t n,
                                    kedr_hit *hits)
{
    return query_on(ctx, a, rays, n, hits, NULL, "kedr_accel_intersect_on");
}

kedr_status kedr_accel_occluded_on(kedr_ctx *ctx, kedr_accel *a, const kedr_ray *rays, size_t n,
                                   uint8_t *occluded)
{
    if (!occluded && n)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_accel_occluded_on: occluded is NULL");
    return query_on(ctx, a, rays, n, NULL, occluded, "kedr_accel_occluded_on");
}
