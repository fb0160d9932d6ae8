/* Unsteady sampling (kedr_dsmc_mark_window, kedr_dsmc_get_window_fields): the windows of a run
 * average to its time average; a run checkpointed in the middle of a window and restarted gives
 * that window's fields bit for bit; resetting the samples starts the window again. In a simple
 * gas and in a mixture, whose per-species densities go through the same windows and restart.
 * Species densities of a mixture at rest: each cell's counts of one sample are the molecules
 * the cell holds, species by species, the densities add up to number_density and the fractions
 * to 1, and over the box each species' share is its set fraction. Every back end. */
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

/* A gas of three species at mole fractions 0.6, 0.3 and 0.1 in case c. */
static void three_species(kedr_dsmc_case *c)
{
    c->nspecies = 3;
    c->species[1] = dt_nitrogen();
    c->species[2] = dt_hard_sphere();
    snprintf(c->species[2].name, sizeof c->species[2].name, "Light");
    c->species[2].mass = 20e-27;
    c->fraction[0] = 0.6;
    c->fraction[1] = 0.3;
    c->fraction[2] = 0.1;
}

/* Species fields against number_density and mole fractions against 1, cell by cell; the worst
 * relative difference (0 for a simple gas, which must have none). */
static double species_sums(const kedr_dsmc_fields *f)
{
    double worst = 0;
    for (size_t i = 0; i < cells(f) && f->nspecies; i++) {
        double n = 0, x = 0;
        for (int k = 0; k < f->nspecies; k++) {
            n += f->species_density[k][i];
            x += f->mole_fraction[k][i];
        }
        worst = fmax(worst, fabs(n - f->number_density[i]) / f->number_density[i]);
        worst = fmax(worst, fabs(x - 1));
    }
    return worst;
}

/* A mixture at rest in a closed box: one sample's counts against the molecules in each cell
 * (a plain count of kedr_dsmc_get_particles), then 20 samples' shares against the set fractions
 * and a simple gas without species fields. */
static void check_at_rest(kedr_ctx *ctx, const char *bn)
{
    const int nx = 12;
    const double len = 1e-3, n0 = 1e21;
    kedr_dsmc_case c = dt_box(len, nx, n0, 300, 60, 2e-7);
    three_species(&c);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    TU_OK(kedr_dsmc_step(sim));
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    size_t np = (size_t)st.particles, got = 0, nc = (size_t)nx * nx;
    double *x = malloc(np * sizeof *x), *y = malloc(np * sizeof *y);
    double *v = malloc(3 * np * sizeof *v), *ref = calloc(3 * nc, sizeof *ref);
    uint8_t *sp = malloc(np);
    TU_CHECK(x && y && v && ref && sp, "host memory");
    TU_OK(kedr_dsmc_get_particles(sim, np, &got, x, y, v, v + np, v + 2 * np, NULL, sp));
    for (size_t i = 0; i < got; i++) {
        int ci = (int)(x[i] / (len / nx)), cj = (int)(y[i] / (len / nx));
        ref[(size_t)sp[i] * nc + (size_t)cj * nx + ci] += 1;
    }
    kedr_dsmc_fields f;
    TU_OK(kedr_dsmc_get_fields(sim, &f));
    double per = c.weight / ((len / nx) * (len / nx)); /* density of one molecule a cell */
    double worst = 0;
    TU_CHECK(f.nspecies == 3 && f.samples == 1, "%s: 3 species fields of 1 sample (%d, %lld)", bn,
             f.nspecies, (long long)f.samples);
    for (int k = 0; k < f.nspecies; k++)
        for (size_t i = 0; i < nc; i++)
            worst = fmax(worst, fabs(f.species_density[k][i] / per - ref[(size_t)k * nc + i]));
    TU_CHECK(got == np && worst < 1e-9, "%s: one sample's species counts against the molecules "
             "in each cell: off by %.3g", bn, worst);
    kedr_dsmc_fields_free(&f);
    for (int k = 0; k < 19; k++)
        TU_OK(kedr_dsmc_step(sim));
    TU_OK(kedr_dsmc_get_fields(sim, &f));
    double sum = species_sums(&f), total = 0, share[3] = {0, 0, 0};
    TU_CHECK(f.samples == 20 && sum < 1e-13, "%s: species densities against number_density, "
             "fractions against 1: %.3g", bn, sum);
    for (size_t i = 0; i < nc; i++) {
        total += f.number_density[i];
        for (int k = 0; k < 3; k++)
            share[k] += f.species_density[k][i];
    }
    /* the mean free path over the cell side: the VHS sum over species (Bird 1994 eq. 4.65) with
     * the cell's own mole fractions */
    int wrong_mfp = 0;
    for (size_t i = 0; i < nc; i++) {
        double inv = 0, t = f.temperature[i];
        for (int k = 0; k < 3; k++)
            inv += f.mole_fraction[k][i] * sqrt(2.0) * M_PI * c.species[k].d_ref *
                   c.species[k].d_ref * f.number_density[i] *
                   pow(c.species[k].t_ref / t, c.species[k].omega - 0.5);
        double want = 1 / (inv * (len / nx));
        wrong_mfp += !(fabs(f.mfp_ratio[i] - want) <= 1e-12 * want);
    }
    TU_CHECK(wrong_mfp == 0, "%s: %d cells whose mfp_over_cell is not that of their own mole "
             "fractions", bn, wrong_mfp);
    for (int k = 0; k < 3; k++) { /* the box keeps its molecules: binomial noise of the fill */
        double err = sqrt(c.fraction[k] * (1 - c.fraction[k]) / (double)np);
        TU_CHECK(fabs(share[k] / total - c.fraction[k]) < 5 * err, "%s: %s's share %.4f, set "
                 "%.2f +- %.4f (5 standard errors)", bn, c.species[k].name, share[k] / total,
                 c.fraction[k], 5 * err);
    }
    kedr_dsmc_fields_free(&f);
    kedr_dsmc_destroy(sim);
    free(x);
    free(y);
    free(v);
    free(ref);
    free(sp);

    kedr_dsmc_case one = dt_box(len, nx, n0, 300, 10, 2e-7); /* a simple gas: no species */
    TU_OK(kedr_dsmc_create(ctx, &one, &sim));
    TU_OK(kedr_dsmc_step(sim));
    TU_OK(kedr_dsmc_get_fields(sim, &f));
    TU_CHECK(f.nspecies == 0 && !f.species_density[0] && !f.mole_fraction[0],
             "%s: a simple gas's fields have no species (%d)", bn, f.nspecies);
    kedr_dsmc_fields_free(&f);
    kedr_dsmc_destroy(sim);
}

static void check_backend(kedr_backend b, int mixture)
{
    kedr_ctx *ctx = tu_ctx(b);
    kedr_dsmc_case c = dt_box(1e-3, 9, 1e21, 300, 30, 2e-7);
    c.side[0] = KEDR_DSMC_INFLOW; /* a flow, so that windows differ */
    c.side[1] = KEDR_DSMC_OUTFLOW;
    c.velocity[0] = 500;
    c.sample_start = 0;
    c.sample_every = 1;
    c.steps = 30;
    if (mixture)
        three_species(&c);
    char bn[64];
    snprintf(bn, sizeof bn, "%s, %s", kedr_backend_name(b), mixture ? "mixture" : "simple gas");

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
        for (int k = 0; k < all.nspecies; k++) {
            double sk = (w[0].species_density[k][i] + w[1].species_density[k][i] +
                         w[2].species_density[k][i]) / 3;
            worst = fmax(worst, fabs(sk - all.species_density[k][i]) /
                                    fmax(all.species_density[k][i], 1e-300));
        }
    }
    TU_CHECK(worst < 1e-12, "%s: the windows' mean against the time average: %.3g", bn, worst);
    TU_CHECK(differ, "%s: the first and last windows differ (a flow fills the box)", bn);
    TU_CHECK(all.nspecies == (mixture ? 3 : 0) && w[1].nspecies == all.nspecies &&
                 species_sums(&all) < 1e-13 && species_sums(&w[1]) < 1e-13,
             "%s: species fields (%d), adding up to number_density", bn, all.nspecies);
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
    kedr_dsmc_fields fa, fr, fa2;
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
    int same = fr.nspecies == fa.nspecies;
    for (int k = 0; k < fa.nspecies && same; k++) /* per-species sums and marks restarted */
        same = memcmp(fa.species_density[k], fr.species_density[k], nc * sizeof(double)) == 0 &&
               memcmp(fa.mole_fraction[k], fr.mole_fraction[k], nc * sizeof(double)) == 0;
    TU_CHECK(fa.samples == 10 && fr.samples == 10 && same &&
                 memcmp(fa.particles, fr.particles, nc * sizeof(double)) == 0 &&
                 memcmp(fa.temperature, fr.temperature, nc * sizeof(double)) == 0,
             "%s: the window across a restart: %lld and %lld samples, or other fields", bn,
             (long long)fa.samples, (long long)fr.samples);
    kedr_dsmc_fields fs;
    TU_OK(kedr_dsmc_get_fields(r, &fs)); /* and the sums since sampling began */
    TU_OK(kedr_dsmc_get_fields(a, &fa2));
    same = fs.samples == 30 && fa2.samples == 30;
    for (int k = 0; k < fa.nspecies && same; k++)
        same = memcmp(fa2.species_density[k], fs.species_density[k], nc * sizeof(double)) == 0;
    TU_CHECK(same, "%s: the sums across a restart (%lld and %lld samples)", bn,
             (long long)fa2.samples, (long long)fs.samples);
    kedr_dsmc_fields_free(&fs);
    kedr_dsmc_fields_free(&fa2);
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
    if (mixture)
        check_at_rest(ctx, kedr_backend_name(b));
    kedr_ctx_destroy(ctx);
}

int main(void)
{
    kedr_backend list[2];
    int n = tu_backends(list);
    for (int i = 0; i < n; i++) {
        check_backend(list[i], 0);
        check_backend(list[i], 1);
    }
    return tu_finish("test_dsmc_window");
}
