/* Unsteady sampling (kedr_dsmc_mark_window, kedr_dsmc_get_window_fields): the windows of a run
 * average to its time average; a run checkpointed in the middle of a window and restarted gives
 * that window's fields bit for bit; resetting the samples starts the window again. Every back
 * end. */
#include "test_util.h"
#include "validation/test_dsmc_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t cells(const kedr_dsmc_fields *f) { return (size_t)f->nx * f->ny * f->nz; }

/* Steps to `to`, marking a window every `every` steps (counted from step 0) and keeping the
 * window fields of each window in win[k] (NULL: not kept). */
static void run_windows(kedr_dsmc *sim, int64_t to, int64_t every, kedr_dsmc_fields *win,
                        int *nwin)
{
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    for (int64_t k = st.step; k < to; k++) {
        TU_OK(kedr_dsmc_step(sim));
        if ((k + 1) % every == 0) {
            if (win)
                TU_OK(kedr_dsmc_get_window_fields(sim, &win[(*nwin)++]));
            TU_OK(kedr_dsmc_mark_window(sim));
        }
    }
}

static void check_backend(kedr_backend b)
{
    kedr_ctx *ctx = tu_ctx(b);
    kedr_dsmc_case c = dt_box(1e-3, 9, 1e21, 300, 30, 2e-7);
    c.side[0] = KEDR_DSMC_INFLOW; /* a flow, so that windows differ */
    c.side[1] = KEDR_DSMC_OUTFLOW;
    c.velocity[0] = 500;
    c.sample_start = 0;
    c.sample_every = 1;
    c.steps = 30;
    const char *bn = kedr_backend_name(b);

    /* three windows of 10 steps average to the 30-step time average */
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    kedr_dsmc_fields w[4], all;
    int nw = 0;
    run_windows(sim, 30, 10, w, &nw);
    TU_OK(kedr_dsmc_get_fields(sim, &all));
    TU_CHECK(nw == 3 && w[0].samples == 10 && w[1].samples == 10 && w[2].samples == 10 &&
                 all.samples == 30, "%s: 3 windows of 10 samples (%d: %lld, %lld, %lld), 30 in all",
             bn, nw, (long long)w[0].samples, (long long)w[1].samples, (long long)w[2].samples);
    double worst = 0;
    int differ = 0;
    for (size_t i = 0; i < cells(&all); i++) {
        double mean = (w[0].particles[i] + w[1].particles[i] + w[2].particles[i]) / 3;
        worst = fmax(worst, fabs(mean - all.particles[i]) / fmax(all.particles[i], 1e-300));
        double nd = (w[0].number_density[i] + w[1].number_density[i] +
                     w[2].number_density[i]) / 3;
        worst = fmax(worst, fabs(nd - all.number_density[i]) /
                                fmax(all.number_density[i], 1e-300));
        differ |= w[0].particles[i] != w[2].particles[i];
    }
    TU_CHECK(worst < 1e-12, "%s: the windows' mean against the time average: %.3g", bn, worst);
    TU_CHECK(differ, "%s: the first and last windows differ (a flow fills the box)", bn);
    for (int k = 0; k < nw; k++)
        kedr_dsmc_fields_free(&w[k]);
    kedr_dsmc_fields_free(&all);
    kedr_dsmc_destroy(sim);

    /* straight to 30 against 25, a checkpoint, a restart and 5 more: the last window alike */
    char dir[] = "/tmp/kedr-window-XXXXXX", path[64];
    TU_CHECK(mkdtemp(dir) != NULL, "a temporary folder");
    snprintf(path, sizeof path, "%s/w.chk", dir);
    kedr_dsmc *a = NULL, *r = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &a));
    run_windows(a, 29, 10, NULL, NULL);
    TU_OK(kedr_dsmc_step(a));
    kedr_dsmc_fields fa, fr;
    TU_OK(kedr_dsmc_get_window_fields(a, &fa));
    kedr_dsmc *h = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &h));
    run_windows(h, 25, 10, NULL, NULL);
    TU_OK(kedr_dsmc_write_checkpoint(h, path));
    kedr_dsmc_destroy(h);
    TU_OK(kedr_dsmc_restart(ctx, &c, path, &r));
    for (int k = 25; k < 30; k++)
        TU_OK(kedr_dsmc_step(r));
    TU_OK(kedr_dsmc_get_window_fields(r, &fr));
    size_t nc = cells(&fa);
    TU_CHECK(fa.samples == 10 && fr.samples == 10 &&
                 memcmp(fa.particles, fr.particles, nc * sizeof(double)) == 0 &&
                 memcmp(fa.temperature, fr.temperature, nc * sizeof(double)) == 0,
             "%s: the window across a restart: %lld and %lld samples, or other fields", bn,
             (long long)fa.samples, (long long)fr.samples);
    kedr_dsmc_fields_free(&fa);
    kedr_dsmc_fields_free(&fr);

    /* resetting the samples starts the window with them */
    TU_OK(kedr_dsmc_reset_samples(r));
    TU_OK(kedr_dsmc_step(r));
    kedr_dsmc_fields f1;
    TU_OK(kedr_dsmc_get_window_fields(r, &f1));
    TU_CHECK(f1.samples == 1, "%s: a window after a reset holds its one sample (%lld)", bn,
             (long long)f1.samples);
    kedr_dsmc_fields_free(&f1);
    kedr_dsmc_destroy(r);
    kedr_dsmc_destroy(a);
    tu_remove_dir(dir);
    kedr_ctx_destroy(ctx);
}

int main(void)
{
    kedr_backend list[2];
    int n = tu_backends(list);
    for (int i = 0; i < n; i++)
        check_backend(list[i]);
    return tu_finish("test_dsmc_window");
}
