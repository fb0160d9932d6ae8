/* The distributed transpose of Ruetsch & Fatica (sec. 4.1.3 with peer copies from one host thread,
 * sec. 4.2 over MPI ranks, host-staged and through a CUDA-aware MPI), as MPI ranks with one GPU
 * each: a local transpose makes every block bound for another rank contiguous, the blocks travel,
 * and each lands in its column band of the receiver's strip. */
#include "core/internal.h"
#include "kedr/probe.h"
#include "probe/probe_cuda.h"

#include <stdlib.h>
#include <string.h>

const char *kedr_probe_dist_name(kedr_probe_dist_method m)
{
    static const char *const names[] = {"host-staged MPI", "CUDA-aware MPI", "peer copies (IPC)"};
    return (unsigned)m < KEDR_PROBE_DIST_COUNT ? names[m] : "?";
}

/* Element (row j, column i) of the global matrix: exact in a float. */
static float entry(size_t j, size_t i) { return (float)((j * 131 + i * 7) % 65521); }

typedef struct {
    kedr_ctx *ctx;
    kedr_comm *comm;
    kedr_probe_dist_method m;
    int gpu, rank, size;
    size_t n, h;          /* matrix side, rows a rank */
    float *a, *at, *b, *r; /* strip, its transpose, the result strip, received blocks (ctx) */
    float *hs, *hr;       /* host staging (cuda, staged) */
    void **peer;          /* peer: the other ranks' `at`, mapped (NULL: this rank's own) */
} dist;

static void dist_free(dist *d)
{
    if (d->peer) {
#ifdef KEDR_HAVE_CUDA
        for (int p = 0; p < d->size; p++)
            if (d->peer[p] && p != d->rank)
                probe_ipc_close(d->peer[p]);
#endif
        free(d->peer);
    }
    kedr_free(d->ctx, d->a);
    kedr_free(d->ctx, d->at);
    kedr_free(d->ctx, d->b);
    kedr_free(d->ctx, d->r);
    free(d->hs);
    free(d->hr);
}

/* rows of h floats at src (pitch h) into dst's columns from col (pitch n) */
static kedr_status band_copy(dist *d, float *dst, size_t col, const float *src)
{
#ifdef KEDR_HAVE_CUDA
    if (d->gpu)
        return probe_copy2d_cuda(d->ctx, dst + col, d->n * sizeof(float), src,
                                 d->h * sizeof(float), d->h * sizeof(float), d->h);
#endif
    for (size_t i = 0; i < d->h; i++)
        memcpy(dst + i * d->n + col, src + i * d->h, d->h * sizeof(float));
    return KEDR_OK;
}

/* One transpose: the strip a becomes the strip b. */
static kedr_status dist_once(dist *d)
{
    size_t hh = d->h * d->h, blk = hh * sizeof(float);
    KEDR_TRY(kedr_probe_transpose(d->ctx, KEDR_PROBE_T_NO_BANK, d->a, d->at, d->h, d->n));
    if (d->m == KEDR_PROBE_DIST_PEER) {
        /* every rank's transpose done before any rank reads it */
        KEDR_TRY(kedr_ctx_sync(d->ctx));
        KEDR_TRY(kedr_comm_barrier(d->comm));
        for (int p = 0; p < d->size; p++) {
            const float *src = p == d->rank ? d->at : (const float *)d->peer[p];
            KEDR_TRY(band_copy(d, d->b, (size_t)p * d->h, src + (size_t)d->rank * hh));
        }
        KEDR_TRY(kedr_ctx_sync(d->ctx));
        return kedr_comm_barrier(d->comm); /* and none overwrites it while another reads */
    }
    float *send = d->at, *recv = d->r;
    if (d->gpu && d->m == KEDR_PROBE_DIST_STAGED) {
        KEDR_TRY(kedr_download(d->ctx, d->hs, d->at, d->n * d->h * sizeof(float)));
        send = d->hs;
        recv = d->hr;
    } else if (d->gpu) {
        KEDR_TRY(kedr_ctx_sync(d->ctx)); /* MPI reads the GPU memory itself */
    }
    kedr_comm_halo *sr = malloc(2 * (size_t)d->size * sizeof *sr);
    if (!sr)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_probe_dist_transpose: out of host memory");
    for (int q = 0; q < d->size; q++) {
        sr[q] = (kedr_comm_halo){q, 0, send + (size_t)q * hh, blk};
        sr[d->size + q] = (kedr_comm_halo){q, 0, recv + (size_t)q * hh, blk};
    }
    kedr_status s = kedr_comm_sendrecv(d->comm, d->size, sr, d->size, sr + d->size);
    free(sr);
    KEDR_TRY(s);
    if (recv == d->hr)
        KEDR_TRY(kedr_upload(d->ctx, d->r, d->hr, (size_t)d->size * blk));
    for (int p = 0; p < d->size; p++)
        KEDR_TRY(band_copy(d, d->b, (size_t)p * d->h, d->r + (size_t)p * hh));
    return kedr_ctx_sync(d->ctx);
}

static kedr_status dist_setup(dist *d)
{
    const char *fn = "kedr_probe_dist_transpose";
    size_t strip = d->n * d->h * sizeof(float);
    KEDR_TRY(kedr_alloc(d->ctx, (void **)&d->a, strip));
    KEDR_TRY(kedr_alloc(d->ctx, (void **)&d->at, strip));
    KEDR_TRY(kedr_alloc(d->ctx, (void **)&d->b, strip));
    KEDR_TRY(kedr_alloc(d->ctx, (void **)&d->r, strip));
    float *host = malloc(strip);
    if (!host)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu bytes)", fn, strip);
    for (size_t j = 0; j < d->h; j++)
        for (size_t i = 0; i < d->n; i++)
            host[j * d->n + i] = entry((size_t)d->rank * d->h + j, i);
    kedr_status s = kedr_upload(d->ctx, d->a, host, strip);
    free(host);
    KEDR_TRY(s);
    if (d->gpu && d->m == KEDR_PROBE_DIST_STAGED) {
        d->hs = malloc(strip);
        d->hr = malloc(strip);
        if (!d->hs || !d->hr)
            return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu bytes)", fn, 2 * strip);
    }
#ifdef KEDR_HAVE_CUDA
    if (d->m == KEDR_PROBE_DIST_PEER) { /* every rank learns every rank's handle */
        unsigned char *all = calloc((size_t)d->size, PROBE_IPC_BYTES), mine[PROBE_IPC_BYTES];
        d->peer = calloc((size_t)d->size, sizeof *d->peer);
        if (!all || !d->peer) {
            free(all);
            return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
        }
        s = probe_ipc_handle(d->at, mine);
        s = kedr_comm_agree(d->comm, s);
        void *got = NULL;
        size_t *counts = calloc((size_t)d->size, sizeof *counts);
        if (s == KEDR_OK)
            s = kedr_comm_gatherv(d->comm, mine, sizeof mine, 0, counts, &got);
        if (s == KEDR_OK && d->rank == 0)
            memcpy(all, got, (size_t)d->size * PROBE_IPC_BYTES);
        free(got);
        free(counts);
        if (s == KEDR_OK)
            s = kedr_comm_bcast(d->comm, all, (size_t)d->size * PROBE_IPC_BYTES, 0);
        for (int p = 0; p < d->size && s == KEDR_OK; p++)
            if (p != d->rank)
                s = probe_ipc_open(all + (size_t)p * PROBE_IPC_BYTES, &d->peer[p]);
        free(all);
        KEDR_TRY(s);
    }
#endif
    return KEDR_OK;
}

/* Every element of this rank's result strip against the matrix it transposes. */
static kedr_status dist_check(dist *d)
{
    size_t strip = d->n * d->h;
    float *host = malloc(strip * sizeof *host);
    if (!host)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_probe_dist_transpose: out of host memory");
    kedr_status s = kedr_download(d->ctx, host, d->b, strip * sizeof *host);
    for (size_t i = 0; i < d->h && s == KEDR_OK; i++)
        for (size_t j = 0; j < d->n; j++)
            if (host[i * d->n + j] != entry(j, (size_t)d->rank * d->h + i)) {
                s = kedr_fail(KEDR_ERR_INVALID, "kedr_probe_dist_transpose (%s): rank %d: element "
                              "(%zu, %zu) of the transpose is %g, expected %g",
                              kedr_probe_dist_name(d->m), d->rank, (size_t)d->rank * d->h + i, j,
                              host[i * d->n + j], entry(j, (size_t)d->rank * d->h + i));
                break;
            }
    free(host);
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

kedr_status kedr_probe_dist_transpose(kedr_ctx *ctx, kedr_comm *comm, kedr_probe_dist_method m,
                                      size_t n, int repeats, double *seconds)
{
    const char *fn = "kedr_probe_dist_transpose";
    KEDR_TRY(kedr_check_ptr(ctx, 1, fn, "ctx"));
    if (!seconds || (unsigned)m >= KEDR_PROBE_DIST_COUNT || repeats < 1)
        return kedr_fail(KEDR_ERR_INVALID, "%s: method %d, %d repeats%s", fn, (int)m, repeats,
                         seconds ? "" : ", seconds NULL");
    dist d;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    d.comm = comm;
    d.m = m;
    d.gpu = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    d.rank = kedr_comm_rank(comm);
    d.size = kedr_comm_size(comm);
    d.n = n;
    if (n == 0 || n % (size_t)d.size != 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: a matrix of side %zu over %d ranks: expected a "
                         "positive multiple of the rank count", fn, n, d.size);
    d.h = n / (size_t)d.size;
    if (m == KEDR_PROBE_DIST_GPU_AWARE && (!d.gpu || !kedr_comm_gpu_aware(comm)))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: %s", fn, !d.gpu
                         ? "CUDA-aware MPI needs the cuda back end"
                         : "the MPI library is not CUDA-aware (kedr_comm_gpu_aware)");
    if (m == KEDR_PROBE_DIST_PEER && (!d.gpu || kedr_comm_local_size(comm) != d.size))
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: %s", fn, !d.gpu
                         ? "peer copies need the cuda back end"
                         : "peer copies need every rank on one host");
    double *t = calloc((size_t)repeats, sizeof *t);
    kedr_status s = t ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
    if (s == KEDR_OK)
        s = dist_setup(&d);
    s = kedr_comm_agree(comm, s);
    for (int k = -1; k < repeats && s == KEDR_OK; k++) { /* k = -1: warm-up */
        s = kedr_comm_barrier(comm);
        double t0 = kedr_wall_seconds();
        if (s == KEDR_OK)
            s = dist_once(&d);
        double dt = kedr_wall_seconds() - t0;
        s = kedr_comm_agree(comm, s);
        if (s == KEDR_OK)
            s = kedr_comm_allreduce(comm, KEDR_F64, KEDR_OP_MAX, &dt, 1);
        if (k >= 0)
            t[k] = dt;
    }
    if (s == KEDR_OK)
        s = kedr_comm_agree(comm, dist_check(&d));
    if (s == KEDR_OK) {
        qsort(t, (size_t)repeats, sizeof *t, cmp_double);
        *seconds = repeats % 2 ? t[repeats / 2] : 0.5 * (t[repeats / 2 - 1] + t[repeats / 2]);
    }
    free(t);
    kedr_comm_barrier(comm); /* no rank unmaps or frees what another still reads */
    dist_free(&d);
    return s;
}
