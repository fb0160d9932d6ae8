/* render: the wavefront renderer on the cpu, wave.h's steps as loops over all threads. The same
 * passes, waves and queues as the GPU's (render.cu), so that the cpu checks the wavefront's
 * bookkeeping where there is no GPU: its image must be render_cpu's bit for bit
 * (test_render_wave). */
#include "render/wave.h"
#include "render/accel.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define FN "kedr_render (waves)"

/* Rays a pass: WAVE_PATHS, or the environment's KEDR_RENDER_WAVE_PATHS (1 to 2^30: small values
 * let the tests cut a frame into many passes). */
kedr_status render_wave_paths(size_t *paths)
{
    const char *e = getenv("KEDR_RENDER_WAVE_PATHS");
    *paths = WAVE_PATHS;
    if (!e)
        return KEDR_OK;
    char *end;
    errno = 0;
    long long x = strtoll(e, &end, 10);
    if (errno || end == e || *end || x < 1 || x > (1ll << 30))
        return kedr_fail(KEDR_ERR_INVALID, "KEDR_RENDER_WAVE_PATHS=%s: expected an integer from "
                         "1 to 2^30 (rays a pass of the wavefront renderer)", e);
    *paths = (size_t)x;
    return KEDR_OK;
}

/* Pixels a pass: `paths` rays, fewer for scenes of many lights (the first wave queues up to one
 * shadow ray a light a ray); at least one pixel. */
size_t render_wave_pass_pixels(size_t paths, int nlights, int spp)
{
    size_t by_lights = WAVE_SHADOW_SLOTS / (size_t)(nlights > 1 ? nlights : 1);
    if (by_lights < paths)
        paths = by_lights;
    size_t p = paths / (size_t)spp;
    return p ? p : 1;
}

/* The sizes a wave of n rays needs, starting at record base: an error naming what does not fit
 * in the 32-bit indices of the queues. */
kedr_status render_wave_check(size_t base, size_t n, int nlights)
{
    if (base + 3 * n > INT32_MAX || (size_t)nlights * n > UINT32_MAX)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: a wave of %zu rays after %zu (with %d lights) "
                         "overflows the queues' 32-bit indices: use fewer samples per pixel or "
                         "a smaller depth", FN, n, base, nlights);
    return KEDR_OK;
}

static kedr_status grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap && *p)
        return KEDR_OK;
    size_t n = need + need / 2 + 1;
    void *q = realloc(*p, n * size);
    if (!q)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory for %zu queue entries of %zu "
                         "bytes", FN, n, size);
    *p = q;
    *cap = n;
    return KEDR_OK;
}

typedef struct {
    render_task *queue[2];
    wave_hit *hits;
    wave_local *locals;
    wave_shadow *shadows;
    wave_record *records;
    size_t cap_queue[2], cap_hits, cap_locals, cap_shadows, cap_records;
} wave_buffers;

/* One pass: pixels first .. first + np. */
static kedr_status pass(const render_view *v, const render_camera_basis *cam,
                        const kedr_render_options *o, size_t first, size_t np, float *rgb,
                        int32_t *ids, wave_buffers *b, uint64_t *shadow_rays, uint64_t *secondary)
{
    const int spp = o->spp;
    size_t n = np * (size_t)spp, base = 0;
    KEDR_TRY(grow((void **)&b->queue[0], &b->cap_queue[0], n, sizeof(render_task)));
    render_task *q0 = b->queue[0];
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        q0[i] = wave_primary(cam, first, spp, o->depth, i);
    int cur = 0;
    for (int wave = 0; n; wave++) {
        KEDR_TRY(render_wave_check(base, n, v->nlights));
        KEDR_TRY(grow((void **)&b->hits, &b->cap_hits, n, sizeof(wave_hit)));
        KEDR_TRY(grow((void **)&b->locals, &b->cap_locals, n, sizeof(wave_local)));
        KEDR_TRY(grow((void **)&b->queue[1 - cur], &b->cap_queue[1 - cur], 2 * n,
                      sizeof(render_task)));
        KEDR_TRY(grow((void **)&b->shadows, &b->cap_shadows, (size_t)v->nlights * n,
                      sizeof(wave_shadow)));
        KEDR_TRY(grow((void **)&b->records, &b->cap_records, base + n, sizeof(wave_record)));
        const render_task *q = b->queue[cur];
        render_task *next = b->queue[1 - cur];
        wave_hit *hits = b->hits;
        wave_local *locals = b->locals;
        wave_shadow *shadows = b->shadows;
        wave_record *rec = b->records + base;
#pragma omp parallel for schedule(dynamic, 64)
        for (size_t i = 0; i < n; i++)
            wave_trace(v, &q[i], &hits[i]);
        if (wave == 0 && ids)
            for (size_t i = 0; i < n; i += (size_t)spp)
                ids[first + i / (size_t)spp] = hits[i].id;
        uint32_t nshadow = 0, nnext = 0;
        uint32_t next_base = (uint32_t)(base + n);
#pragma omp parallel for schedule(dynamic, 64)
        for (size_t i = 0; i < n; i++)
            wave_shade(v, &q[i], &hits[i], &locals[i], &rec[i], shadows, &nshadow, next, &nnext,
                       next_base);
        unsigned long long traced = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : traced)
        for (size_t j = 0; j < nshadow; j++)
            traced += wave_shadow_trace(v, &shadows[j]);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            wave_gather(v, &q[i], &hits[i], &locals[i], shadows, &rec[i]);
        *shadow_rays += traced;
        *secondary += nnext;
        base += n;
        n = nnext;
        cur = 1 - cur;
    }
    const wave_record *records = b->records;
#pragma omp parallel for schedule(static)
    for (size_t p = 0; p < np; p++)
        wave_pixel(records, p, spp, rgb + (first + p) * 3);
    return KEDR_OK;
}

kedr_status render_wave_cpu(const render_view *v, const render_camera_basis *cam,
                            const kedr_render_options *o, float *rgb, int32_t *ids,
                            kedr_render_stats *st)
{
    size_t pixels = (size_t)o->width * o->height;
    size_t paths;
    KEDR_TRY(render_wave_paths(&paths));
    size_t per = render_wave_pass_pixels(paths, v->nlights, o->spp);
    wave_buffers b = {{NULL, NULL}, NULL, NULL, NULL, NULL, {0, 0}, 0, 0, 0, 0};
    uint64_t shadow = 0, secondary = 0;
    kedr_status s = KEDR_OK;
    for (size_t first = 0; first < pixels && s == KEDR_OK; first += per)
        s = pass(v, cam, o, first, pixels - first < per ? pixels - first : per, rgb, ids, &b,
                 &shadow, &secondary);
    free(b.queue[0]), free(b.queue[1]), free(b.hits), free(b.locals), free(b.shadows);
    free(b.records);
    st->shadow_rays = shadow;
    st->secondary_rays = secondary;
    return s;
}
