/* The slab-end kernels of src/flow/ops.c and ops.cu, each one kernel where a copy and axpy's
 * were (and flow_op_copies, a halo's planes packed in one launch, against memcpy). flow_op_apply_ends: a slab's A x or b - A x plus the neighbour ranks' planes' share
 * (-1/h^2 or +1/h^2 times them) on its end planes (PCG's products and residuals, multigrid's
 * residuals over ranks), against a plain loop of flow_cell_apply and the additions.
 * flow_op_gs_ends: a red-black half-sweep of a slab whose neighbour
 * ranks' planes next to its ends are added to the right-hand side of its end planes, in one
 * kernel (multigrid smoothing and SSOR over ranks). Against a plain host loop: the right-hand
 * side t = b, plus 1/h^2 times the plane below on the first plane across the last axis, then
 * plus 1/h^2 times the plane above on the last, and the half-sweep over cells of the colour
 * with flow_cell_gs. Random x, b and neighbour planes, 2D and 3D levels of awkward sizes
 * (Neumann and periodic across the other axes, a slab of one plane whose one plane takes
 * both, a level of one row), either plane absent, both colours, on every back end. The cpu
 * must match bit for bit (the same additions in the same order); cuda within 1e-12 of the
 * largest |x| (it may fuse a multiply and an add; the terms are about 10 |x|).
 * flow_op_dots and flow_op_cg_updates (up to FLOW_BATCH reductions with one download) against
 * one call each of flow_op_dot and flow_op_cg_update: bit for bit on every back end.
 * flow_op_gs_ends_rows in two row ranges (one on the side stream) against flow_op_gs_ends bit
 * for bit; flow_op_apply_range split as KEDR_FLOW_OVERLAP runs it (interior on the side stream) against
 * flow_op_apply_ends bit for bit, and AINV over a slab (flow_op_ainv_range, split the same way)
 * against the one-grid AINV of the slab with its neighbour planes (check_ainv). */
#include "flow/ops.h"
#include "kedr/flow.h"
#include "test_util.h"

typedef struct {
    int n[3], per[3];
    int ax; /* the slab's last axis: 1 in 2D, 2 in 3D (a 3D slab of one plane: n[2] = 1) */
} shape;

static double fill(double *v, size_t n, uint64_t *st)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = tu_uniform(st) * 2 - 1;
        m = fmax(m, fabs(v[i]));
    }
    return m;
}

static void check(kedr_ctx *ctx, const shape *sh, int colour, int has_lo, int has_hi)
{
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    flow_level L;
    memset(&L, 0, sizeof L);
    L.N = 1;
    double h[3] = {0.3, 0.7, 0.45};
    for (int a = 0; a < 3; a++) {
        L.n[a] = sh->n[a];
        L.per[a] = sh->per[a];
        L.ih2[a] = sh->n[a] > 1 ? 1 / (h[a] * h[a]) : 0;
        L.N *= (size_t)sh->n[a];
    }
    int ax = sh->ax;
    size_t layer = L.N / (size_t)L.n[ax], N = L.N;
    double ih2 = 1 / (0.55 * 0.55);
    double *hx = malloc(N * sizeof *hx), *hb = malloc(N * sizeof *hb);
    double *hlo = malloc(layer * sizeof *hlo), *hhi = malloc(layer * sizeof *hhi);
    double *ref = malloc(N * sizeof *ref), *got = malloc(N * sizeof *got);
    double *hd = malloc(2 * N * sizeof *hd);
    uint64_t st = 0x9e5 + N * 31 + (uint64_t)colour * 7 + (uint64_t)has_lo * 3 + has_hi;
    double xmax = fill(hx, N, &st);
    fill(hb, N, &st);
    fill(hlo, layer, &st);
    fill(hhi, layer, &st);
    double *dx = NULL, *db = NULL, *dlo = NULL, *dhi = NULL;
    TU_OK(kedr_alloc(ctx, (void **)&L.diag, N * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&L.idiag, N * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&dx, N * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&db, N * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&dlo, layer * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&dhi, layer * sizeof(double)));
    TU_OK(flow_level_diag(ctx, &L));
    TU_OK(kedr_download(ctx, hd, L.diag, N * sizeof(double)));
    TU_OK(kedr_download(ctx, hd + N, L.idiag, N * sizeof(double)));
    TU_OK(kedr_upload(ctx, dx, hx, N * sizeof(double)));
    TU_OK(kedr_upload(ctx, db, hb, N * sizeof(double)));
    TU_OK(kedr_upload(ctx, dlo, hlo, layer * sizeof(double)));
    TU_OK(kedr_upload(ctx, dhi, hhi, layer * sizeof(double)));
    /* the plain reference on the host */
    flow_level H = L;
    H.diag = hd;
    H.idiag = hd + N;
    double *t = malloc(N * sizeof *t);
    memcpy(t, hb, N * sizeof *t);
    for (size_t c = 0; c < layer; c++) {
        if (has_lo)
            t[c] += ih2 * hlo[c];
    }
    for (size_t c = 0; c < layer; c++) {
        if (has_hi)
            t[N - layer + c] += ih2 * hhi[c];
    }
    memcpy(ref, hx, N * sizeof *ref);
    for (int k = 0; k < L.n[2]; k++)
        for (int j = 0; j < L.n[1]; j++)
            for (int i = 0; i < L.n[0]; i++)
                if (((i + j + k) & 1) == colour)
                    ref[flow_index(&H, i, j, k)] = flow_cell_gs(&H, ref, t, i, j, k);
    /* the product and the residual (colour 0: A x, colour 1: b - A x) with the ends' share */
    {
        const double *pb = colour ? hb : NULL;
        double a = colour ? ih2 : -ih2, amax = 0, da = 0;
        double *yref = malloc(N * sizeof *yref), *ygot = malloc(N * sizeof *ygot);
        double *dy = NULL;
        TU_OK(kedr_alloc(ctx, (void **)&dy, N * sizeof(double)));
        for (int k = 0; k < L.n[2]; k++)
            for (int j = 0; j < L.n[1]; j++)
                for (int i = 0; i < L.n[0]; i++) {
                    size_t c = flow_index(&H, i, j, k);
                    double ax = flow_cell_apply(&H, hx, i, j, k);
                    yref[c] = pb ? pb[c] - ax : ax;
                }
        for (size_t c = 0; c < layer; c++)
            if (has_lo)
                yref[c] += a * hlo[c];
        for (size_t c = 0; c < layer; c++)
            if (has_hi)
                yref[N - layer + c] += a * hhi[c];
        TU_OK(flow_op_apply_ends(ctx, &L, dx, colour ? db : NULL, dy, layer, a,
                                 has_lo ? dlo : NULL, has_hi ? dhi : NULL));
        TU_OK(kedr_download(ctx, ygot, dy, N * sizeof(double)));
        for (size_t c = 0; c < N; c++) {
            da = fmax(da, fabs(ygot[c] - yref[c]));
            amax = fmax(amax, fabs(yref[c]));
        }
        /* the same split as KEDR_FLOW_OVERLAP runs it: the interior planes on the side stream,
         * the end planes on the context's (a slab of one or two planes: the ranges overlap or
         * the interior is empty); the same bits as the one kernel */
        {
            void *side = NULL;
            TU_OK(flow_op_side_create(ctx, &side));
            TU_OK(kedr_memset(ctx, dy, 0, N * sizeof(double)));
            TU_OK(flow_op_fork(ctx, side));
            const double *lo = has_lo ? dlo : NULL, *hi = has_hi ? dhi : NULL;
            const double *bb = colour ? db : NULL;
            TU_OK(flow_op_apply_range(ctx, &L, dx, bb, dy, layer, a, lo, hi, layer,
                                      N > layer ? N - layer : 0, side));
            TU_OK(flow_op_apply_range(ctx, &L, dx, bb, dy, layer, a, lo, hi, 0, layer, NULL));
            TU_OK(flow_op_apply_range(ctx, &L, dx, bb, dy, layer, a, lo, hi, N - layer, N, NULL));
            TU_OK(flow_op_join(ctx, side));
            double *ysplit = malloc(N * sizeof *ysplit);
            TU_OK(kedr_download(ctx, ysplit, dy, N * sizeof(double)));
            TU_CHECK(memcmp(ysplit, ygot, N * sizeof(double)) == 0, "%s, %dx%dx%d: the split "
                     "product (side stream for the interior) differs from the one kernel",
                     kedr_backend_name(kedr_ctx_backend(ctx)), L.n[0], L.n[1], L.n[2]);
            free(ysplit);
            flow_op_side_free(ctx, side);
        }
        double tol = cuda ? 1e-13 * amax : 0;
        TU_CHECK(amax > 0 && da <= tol, "%s, %dx%dx%d, %s, below %d, above %d: differs from the "
                 "plain loop by %g of %g", kedr_backend_name(kedr_ctx_backend(ctx)), L.n[0],
                 L.n[1], L.n[2], colour ? "b - A x" : "A x", has_lo, has_hi, da, amax);
        free(yref);
        free(ygot);
        kedr_free(ctx, dy);
    }
    TU_OK(flow_op_gs_ends(ctx, &L, dx, db, colour, layer, ih2, has_lo ? dlo : NULL,
                          has_hi ? dhi : NULL));
    TU_OK(kedr_download(ctx, got, dx, N * sizeof(double)));
    /* the same half-sweep in two row ranges (flow_op_gs_ends_rows), the second on the side
     * stream as the overlapped smoothing runs it: the same bits */
    {
        size_t rows = (size_t)L.n[1] * L.n[2], mid = rows / 2;
        double *split = malloc(N * sizeof *split);
        void *side = NULL;
        TU_OK(flow_op_side_create(ctx, &side));
        TU_OK(kedr_upload(ctx, dx, hx, N * sizeof(double)));
        TU_OK(flow_op_fork(ctx, side));
        TU_OK(flow_op_gs_ends_rows(ctx, &L, dx, db, colour, layer, ih2, has_lo ? dlo : NULL,
                                   has_hi ? dhi : NULL, mid, rows, side));
        TU_OK(flow_op_gs_ends_rows(ctx, &L, dx, db, colour, layer, ih2, has_lo ? dlo : NULL,
                                   has_hi ? dhi : NULL, 0, mid, NULL));
        TU_OK(flow_op_join(ctx, side));
        TU_OK(kedr_download(ctx, split, dx, N * sizeof(double)));
        TU_CHECK(memcmp(split, got, N * sizeof(double)) == 0, "%s, %dx%dx%d, colour %d: the "
                 "half-sweep in two row ranges differs from the one kernel",
                 kedr_backend_name(kedr_ctx_backend(ctx)), L.n[0], L.n[1], L.n[2], colour);
        flow_op_side_free(ctx, side);
        free(split);
    }
    double d = 0;
    size_t changed = 0;
    for (size_t c = 0; c < N; c++) {
        d = fmax(d, fabs(got[c] - ref[c]));
        changed += got[c] != hx[c];
    }
    double tol = cuda ? 1e-14 * xmax * 1e2 : 0; /* |x| ~ 1; h^-2 ~ 10 */
    TU_CHECK(d <= tol && changed > 0, "%s, %dx%dx%d (per %d%d%d, slab axis %c), colour %d, "
             "below %d, above %d: differs from the plain loop by %g (tolerance %g), %zu cells "
             "changed", kedr_backend_name(kedr_ctx_backend(ctx)), L.n[0], L.n[1], L.n[2],
             L.per[0], L.per[1], L.per[2], "xyz"[ax], colour, has_lo, has_hi, d, tol, changed);
    free(hx);
    free(hb);
    free(hlo);
    free(hhi);
    free(ref);
    free(got);
    free(hd);
    free(t);
    kedr_free(ctx, L.diag);
    kedr_free(ctx, L.idiag);
    kedr_free(ctx, dx);
    kedr_free(ctx, db);
    kedr_free(ctx, dlo);
    kedr_free(ctx, dhi);
}

/* flow_op_ainv_range over a slab against the one-grid AINV (12.37) of a grid with one more plane
 * on each side (the neighbour ranks' planes, Neumann beyond), computed by a plain host loop of
 * flow_cell_ainv_upper and _lower: the slab's upper factor takes r's plane above (later in the
 * grid's order), its lower factor t's plane below and that plane's inverse diagonal (earlier);
 * the slab's end diagonals count the neighbours (as flow_rk_end_diag sets them). Run as
 * flow_rk_ainv runs it with KEDR_FLOW_OVERLAP: interiors on the side stream. Within 1e-12 of
 * the largest |z| (the slab's diagonal is summed in another order than the grid's). */
static void check_ainv(kedr_ctx *ctx, const shape *sh)
{
    int ax = sh->ax;
    flow_level G, L;
    memset(&G, 0, sizeof G);
    double h[3] = {0.3, 0.7, 0.45};
    G.N = 1;
    for (int a = 0; a < 3; a++) {
        G.n[a] = sh->n[a] + (a == ax ? 2 : 0);
        G.per[a] = a == ax ? 0 : sh->per[a];
        G.ih2[a] = G.n[a] > 1 ? 1 / (h[a] * h[a]) : 0;
        G.N *= (size_t)G.n[a];
    }
    size_t layer = G.N / (size_t)G.n[ax], N = G.N - 2 * layer;
    L = G;
    L.n[ax] = sh->n[ax];
    L.N = N;
    L.ih2[ax] = L.n[ax] > 1 ? G.ih2[ax] : 0;
    double *gd = malloc(2 * G.N * sizeof *gd), *r = malloc(G.N * sizeof *r);
    double *t = malloc(G.N * sizeof *t), *z = malloc(G.N * sizeof *z), *got = malloc(N * sizeof *got);
    uint64_t st = 0xa1e + G.N;
    fill(r, G.N, &st);
    /* the grid's diagonal on the host (flow_level_diag uploads to a context: the cpu's is host) */
    kedr_ctx *host = tu_ctx(KEDR_BACKEND_CPU);
    TU_OK(kedr_alloc(host, (void **)&G.diag, G.N * sizeof(double)));
    TU_OK(kedr_alloc(host, (void **)&G.idiag, G.N * sizeof(double)));
    TU_OK(flow_level_diag(host, &G));
    for (int k = 0; k < G.n[2]; k++)
        for (int j = 0; j < G.n[1]; j++)
            for (int i = 0; i < G.n[0]; i++)
                t[flow_index(&G, i, j, k)] = flow_cell_ainv_upper(&G, r, i, j, k);
    for (int k = 0; k < G.n[2]; k++)
        for (int j = 0; j < G.n[1]; j++)
            for (int i = 0; i < G.n[0]; i++)
                z[flow_index(&G, i, j, k)] = flow_cell_ainv_lower(&G, t, i, j, k);
    /* the slab: its diagonal with the neighbours counted, r, the lent planes */
    double *dr = NULL, *dt = NULL, *dz = NULL, *dhi = NULL, *dlo = NULL, *dlo_id = NULL;
    L.diag = L.idiag = NULL;
    TU_OK(kedr_alloc(ctx, (void **)&L.diag, N * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&L.idiag, N * sizeof(double)));
    TU_OK(flow_level_diag(ctx, &L));
    double *sd = malloc(2 * N * sizeof *sd);
    TU_OK(kedr_download(ctx, sd, L.diag, N * sizeof(double)));
    for (size_t c = 0; c < layer; c++) {
        sd[c] += G.ih2[ax];
        sd[N - layer + c] += G.ih2[ax];
    }
    for (size_t c = 0; c < N; c++)
        sd[N + c] = 1.0 / sd[c];
    TU_OK(kedr_upload(ctx, L.diag, sd, N * sizeof(double)));
    TU_OK(kedr_upload(ctx, L.idiag, sd + N, N * sizeof(double)));
    double **dv[] = {&dr, &dt, &dz};
    for (int v = 0; v < 3; v++)
        TU_OK(kedr_alloc(ctx, (void **)dv[v], N * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&dhi, layer * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&dlo, layer * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&dlo_id, layer * sizeof(double)));
    TU_OK(kedr_upload(ctx, dr, r + layer, N * sizeof(double)));
    TU_OK(kedr_upload(ctx, dhi, r + layer + N, layer * sizeof(double)));
    TU_OK(kedr_upload(ctx, dlo, t, layer * sizeof(double)));
    double *gid = malloc(layer * sizeof *gid);
    TU_OK(kedr_download(host, gid, G.idiag, layer * sizeof(double)));
    TU_OK(kedr_upload(ctx, dlo_id, gid, layer * sizeof(double)));
    flow_ainv_ends up = {layer, ax, G.ih2[ax], NULL, NULL, dhi, NULL};
    flow_ainv_ends dn = {layer, ax, G.ih2[ax], dlo, dlo_id, NULL, NULL};
    void *side = NULL;
    TU_OK(flow_op_side_create(ctx, &side));
    size_t in0 = layer, in1 = N > layer ? N - layer : 0;
    TU_OK(flow_op_fork(ctx, side));
    TU_OK(flow_op_ainv_range(ctx, &L, dr, dt, 1, &up, in0, in1, side));
    TU_OK(flow_op_side_mark(ctx, side));
    TU_OK(flow_op_ainv_range(ctx, &L, dr, dt, 1, &up, 0, layer, NULL));
    TU_OK(flow_op_ainv_range(ctx, &L, dr, dt, 1, &up, N - layer, N, NULL));
    TU_OK(flow_op_fork(ctx, side));
    TU_OK(flow_op_ainv_range(ctx, &L, dt, dz, 0, &dn, in0, in1, side));
    TU_OK(flow_op_side_wait(ctx, side));
    TU_OK(flow_op_ainv_range(ctx, &L, dt, dz, 0, &dn, 0, layer, NULL));
    TU_OK(flow_op_ainv_range(ctx, &L, dt, dz, 0, &dn, N - layer, N, NULL));
    TU_OK(flow_op_join(ctx, side));
    TU_OK(kedr_download(ctx, got, dz, N * sizeof(double)));
    double d = 0, m = 0;
    for (size_t c = 0; c < N; c++) {
        d = fmax(d, fabs(got[c] - z[layer + c]));
        m = fmax(m, fabs(z[layer + c]));
    }
    TU_CHECK(m > 0 && d <= 1e-12 * m, "%s, slab %dx%dx%d (axis %c): AINV over the slab differs "
             "from the grid's by %g of %g", kedr_backend_name(kedr_ctx_backend(ctx)), L.n[0],
             L.n[1], L.n[2], "xyz"[ax], d, m);
    flow_op_side_free(ctx, side);
    double *dfree[] = {L.diag, L.idiag, dr, dt, dz, dhi, dlo, dlo_id};
    for (int v = 0; v < 8; v++)
        kedr_free(ctx, dfree[v]);
    kedr_free(host, G.diag);
    kedr_free(host, G.idiag);
    kedr_ctx_destroy(host);
    free(gd);
    free(r);
    free(t);
    free(z);
    free(got);
    free(sd);
    free(gid);
}

/* flow_op_copies: n blocks of count doubles from one array into another, in one launch,
 * against the host's copy; the bytes around the blocks untouched. */
static void check_copies(kedr_ctx *ctx, int n, size_t count)
{
    size_t len = (size_t)FLOW_COPIES * (count + 3) + 5;
    double *hs = malloc(len * sizeof *hs), *hd = malloc(len * sizeof *hd);
    double *want = malloc(len * sizeof *want);
    double *ds = NULL, *dd = NULL;
    uint64_t st = 77 + (uint64_t)n * 13 + count;
    fill(hs, len, &st);
    for (size_t i = 0; i < len; i++)
        hd[i] = -1000.0 - (double)i;
    memcpy(want, hd, len * sizeof *want);
    TU_OK(kedr_alloc(ctx, (void **)&ds, len * sizeof(double)));
    TU_OK(kedr_alloc(ctx, (void **)&dd, len * sizeof(double)));
    TU_OK(kedr_upload(ctx, ds, hs, len * sizeof(double)));
    TU_OK(kedr_upload(ctx, dd, hd, len * sizeof(double)));
    flow_copies c = {{NULL}, {NULL}, n};
    for (int i = 0; i < n; i++) { /* block i from source place n - 1 - i, to place i + 1 */
        size_t from = (size_t)(n - 1 - i) * (count + 3) + 1, to = (size_t)i * (count + 3) + 2;
        c.src[i] = ds + from;
        c.dst[i] = dd + to;
        memcpy(want + to, hs + from, count * sizeof *want);
    }
    TU_OK(flow_op_copies(ctx, &c, count));
    TU_OK(kedr_download(ctx, hd, dd, len * sizeof(double)));
    TU_CHECK(memcmp(hd, want, len * sizeof *hd) == 0, "%s: %d blocks of %zu doubles copied "
             "wrong", kedr_backend_name(kedr_ctx_backend(ctx)), n, count);
    free(hs);
    free(hd);
    free(want);
    kedr_free(ctx, ds);
    kedr_free(ctx, dd);
}

/* flow_op_dots and flow_op_cg_updates (k at once, one download) against k calls of
 * flow_op_dot and flow_op_cg_update on copies: the same bits on every back end (the same
 * kernels and block counts on cuda), the updated x and r too. */
static void check_batch(kedr_ctx *ctx, int k, size_t n)
{
    const char *be = kedr_backend_name(kedr_ctx_backend(ctx));
    enum { V = 4 }; /* x, r, p, q of each system */
    double *h = malloc((size_t)V * n * sizeof *h), *got = malloc(2 * n * sizeof *got);
    double *want = malloc(2 * n * sizeof *want);
    double *d[2][FLOW_BATCH][V]; /* [batched, one by one][system][vector] */
    uint64_t st = 991 + (uint64_t)k * 7 + n;
    double alpha[FLOW_BATCH];
    for (int i = 0; i < k; i++) {
        fill(h, (size_t)V * n, &st);
        alpha[i] = 0.3 + 0.7 * tu_uniform(&st);
        for (int w = 0; w < 2; w++)
            for (int v = 0; v < V; v++) {
                TU_OK(kedr_alloc(ctx, (void **)&d[w][i][v], n * sizeof(double)));
                TU_OK(kedr_upload(ctx, d[w][i][v], h + (size_t)v * n, n * sizeof(double)));
            }
    }
    const double *a[FLOW_BATCH], *b[FLOW_BATCH], *p[FLOW_BATCH], *q[FLOW_BATCH];
    double *x[FLOW_BATCH], *r[FLOW_BATCH], dots[FLOW_BATCH], rr[FLOW_BATCH];
    for (int i = 0; i < k; i++) {
        a[i] = d[0][i][2];
        b[i] = d[0][i][3];
        x[i] = d[0][i][0];
        r[i] = d[0][i][1];
        p[i] = d[0][i][2];
        q[i] = d[0][i][3];
    }
    TU_OK(flow_op_dots(ctx, k, n, a, b, dots));
    TU_OK(flow_op_cg_updates(ctx, k, n, x, r, p, q, alpha, rr));
    for (int i = 0; i < k; i++) {
        double one, rone;
        TU_OK(flow_op_dot(ctx, n, d[1][i][2], d[1][i][3], &one));
        TU_OK(flow_op_cg_update(ctx, n, d[1][i][0], d[1][i][1], d[1][i][2], d[1][i][3],
                                alpha[i], &rone));
        TU_CHECK(dots[i] == one && rr[i] == rone, "%s: batch of %d, n = %zu, system %d: dot "
                 "%.17g vs %.17g, (r, r) %.17g vs %.17g", be, k, n, i, dots[i], one, rr[i],
                 rone);
        for (int w = 0; w < 2; w++) {
            TU_OK(kedr_download(ctx, w ? want : got, d[w][i][0], n * sizeof(double)));
            TU_OK(kedr_download(ctx, (w ? want : got) + n, d[w][i][1], n * sizeof(double)));
        }
        TU_CHECK(memcmp(got, want, 2 * n * sizeof *got) == 0, "%s: batch of %d, n = %zu, "
                 "system %d: x or r differ", be, k, n, i);
        for (int w = 0; w < 2; w++)
            for (int v = 0; v < V; v++)
                kedr_free(ctx, d[w][i][v]);
    }
    free(h);
    free(got);
    free(want);
}

int main(void)
{
    static const shape shapes[] = {
        /* periodic axes of even size only: red and black need two colours (an odd periodic
         * axis makes a cell touch one of its own colour, which kedr refuses for red-black
         * orderings; a GPU's half-sweep would then read it before or after its update) */
        {{7, 5, 4}, {0, 0, 0}, 2},   {{10, 6, 1}, {1, 0, 0}, 1}, {{6, 4, 6}, {1, 1, 0}, 2},
        {{6, 3, 1}, {0, 0, 0}, 2},   {{33, 18, 3}, {0, 1, 0}, 2}, {{1, 11, 1}, {0, 0, 0}, 1},
        {{65, 40, 9}, {0, 0, 0}, 2}, {{8, 1, 1}, {0, 0, 0}, 1},
    };
    kedr_backend bk[2];
    int nb = tu_backends(bk);
    for (int ib = 0; ib < nb; ib++) {
        if (!kedr_flow_backend_available(bk[ib]))
            continue;
        kedr_ctx *ctx = tu_ctx(bk[ib]);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int colour = 0; colour < 2; colour++)
                for (int ends = 0; ends < 4; ends++)
                    check(ctx, &shapes[s], colour, ends & 1, ends >> 1);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            check_ainv(ctx, &shapes[s]);
        static const size_t counts[] = {1, 7, 1001, 65537};
        for (int n = 0; n <= FLOW_COPIES; n++)
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
                check_copies(ctx, n, counts[k]);
        for (int k = 0; k <= FLOW_BATCH; k++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                check_batch(ctx, k, counts[c]);
        {
            double o[FLOW_BATCH + 1];
            const double *z[FLOW_BATCH + 1] = {NULL};
            kedr_status sb = flow_op_dots(ctx, FLOW_BATCH + 1, 1, z, z, o);
            TU_CHECK(sb == KEDR_ERR_INVALID && strstr(kedr_last_error(), "batch"),
                     "flow_op_dots with %d: %s", FLOW_BATCH + 1,
                     sb == KEDR_OK ? "accepted" : kedr_last_error());
        }
        flow_copies bad = {{NULL}, {NULL}, FLOW_COPIES + 1};
        kedr_status st = flow_op_copies(ctx, &bad, 1);
        TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), "blocks"),
                 "flow_op_copies with %d blocks: %s", FLOW_COPIES + 1,
                 st == KEDR_OK ? "accepted" : kedr_last_error());
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_flow_gs_ends");
}
