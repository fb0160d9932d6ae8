/* The GPU sweeps' prefetches (KEDR_ADI_PREFETCH, sweep_impl.h) change no value: a box of awkward
 * size with walls, a solid block (lines cut into segments, some of one node's neighbours solid)
 * and heating on, run a few steps with prefetching off, one node ahead, the default, into L1
 * and far ahead (past the lines' ends), in both precisions, must give the same fields bit for
 * bit. A malformed setting is refused naming the variable. On the cpu the setting is not read
 * (the cpu sweeps do not prefetch): the same runs agree there too. */
#include "kedr/adi.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define NX 37
#define NY 19
#define NZ 23

static void setup(kedr_adi_case *c, int single)
{
    kedr_adi_case_default(c);
    c->nx = NX;
    c->ny = NY;
    c->nz = NZ;
    c->h = 0.05;
    c->re = 50;
    c->pr = 0.72;
    c->gamma = 1.4;
    c->dt = 2e-3;
    c->steps = 3;
    c->single = single;
    c->face[KEDR_ADI_X_LO].kind = KEDR_ADI_INFLOW;
    c->face[KEDR_ADI_X_LO].velocity[0] = 1;
    c->face[KEDR_ADI_X_HI].kind = KEDR_ADI_FREE;
    c->solid = calloc((size_t)NX * NY * NZ, 1);
    for (int k = 7; k < 15; k++)
        for (int j = 5; j < 11; j++)
            for (int i = 10; i < 17; i++)
                c->solid[i + (size_t)NX * (j + (size_t)NY * k)] = 1;
    c->solid[25 + (size_t)NX * (9 + (size_t)NY * 11)] = 1; /* one solid node alone */
}

/* Runs the case with KEDR_ADI_PREFETCH = setting (NULL: unset); the fields into f[4]. */
static kedr_status run(kedr_ctx *ctx, const kedr_adi_case *c, const char *setting, double *f[4])
{
    if (setting)
        setenv("KEDR_ADI_PREFETCH", setting, 1);
    else
        unsetenv("KEDR_ADI_PREFETCH");
    kedr_adi *s = NULL;
    kedr_status st = kedr_adi_create(ctx, c, &s);
    for (int64_t k = 0; st == KEDR_OK && k < c->steps; k++)
        st = kedr_adi_step(s);
    if (st == KEDR_OK)
        st = kedr_adi_get_fields(s, f[0], f[1], f[2], f[3]);
    kedr_adi_destroy(s);
    unsetenv("KEDR_ADI_PREFETCH");
    return st;
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    size_t n = (size_t)NX * NY * NZ;
    static const char *const settings[] = {"0", "1", NULL, "5,l1", "64"};
    static const char *const bad[] = {"abc", "-1", "65", "8,l2", "8x"};
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        if (!ctx)
            return 1;
        for (int single = 0; single < 2; single++) {
            kedr_adi_case c;
            setup(&c, single);
            double *ref[4], *got[4];
            for (int v = 0; v < 4; v++) {
                ref[v] = tu_host_alloc(n * sizeof(double));
                got[v] = tu_host_alloc(n * sizeof(double));
            }
            kedr_status st = run(ctx, &c, settings[0], ref);
            TU_CHECK(st == KEDR_OK, "%s, prefetch off: %s", kedr_backend_name(list[b]),
                     kedr_last_error());
            for (size_t i = 1; st == KEDR_OK && i < sizeof settings / sizeof *settings; i++) {
                const char *set = settings[i] ? settings[i] : "(default)";
                kedr_status r = run(ctx, &c, settings[i], got);
                TU_CHECK(r == KEDR_OK, "%s, KEDR_ADI_PREFETCH=%s: %s",
                         kedr_backend_name(list[b]), set, kedr_last_error());
                for (int v = 0; r == KEDR_OK && v < 4; v++)
                    TU_CHECK(memcmp(ref[v], got[v], n * sizeof(double)) == 0,
                             "%s %s, KEDR_ADI_PREFETCH=%s: field %d differs from prefetch off",
                             kedr_backend_name(list[b]), single ? "f32" : "f64", set, v);
            }
            if (list[b] == KEDR_BACKEND_CUDA)
                for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                    kedr_status r = run(ctx, &c, bad[i], got);
                    TU_CHECK(r == KEDR_ERR_INVALID &&
                                 strstr(kedr_last_error(), "KEDR_ADI_PREFETCH") &&
                                 strstr(kedr_last_error(), bad[i]),
                             "KEDR_ADI_PREFETCH=%s: status %d, '%s'", bad[i], (int)r,
                             kedr_last_error());
                }
            for (int v = 0; v < 4; v++) {
                free(ref[v]);
                free(got[v]);
            }
            kedr_adi_case_free(&c);
        }
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_adi_prefetch");
}
