/* A DSMC simulation's state through the API, between steps: its statistics, vibrational
 * levels, capacity and memory, its particles in and out, and its sampled fields (whole run and
 * windows). The state and the step are sim.c's. */
#include "exchange.h"
#include "sim.h"

#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A vibrating gas: per species k, the sum of the particles' vibrational levels (sums[k]) and
 * their count (sums[DSMC_MAXS + k]), over every rank. Integers, so that the result does not
 * depend on the order of addition. */
static kedr_status vib_sums(const kedr_dsmc *sim, uint64_t sums[2 * DSMC_MAXS])
{
    memset(sums, 0, 2 * DSMC_MAXS * sizeof *sums);
    const dsmc_particles a = sim->a;
    size_t n = sim->n;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx)) {
        uint64_t *dev = sim->counters + 4;
        KEDR_TRY(kedr_memset(sim->ctx, dev, 0, 2 * DSMC_MAXS * sizeof *dev));
        KEDR_TRY(dsmc_vib_sums_cuda(sim->ctx, n, a, dev));
        KEDR_TRY(kedr_download(sim->ctx, sums, dev, 2 * DSMC_MAXS * sizeof *dev));
    } else
#endif
    {
#pragma omp parallel for schedule(static) num_threads(sim->ctx->threads) \
    reduction(+ : sums[:2 * DSMC_MAXS]) if (n > DSMC_OMP_MIN)
        for (size_t i = 0; i < n; i++) {
            int k = dsmc_species_of(a, i);
            sums[k] += a.vib[i];
            sums[DSMC_MAXS + k]++;
        }
    }
    return dsmc_sum_ranks(sim, KEDR_U64, sums, 2 * DSMC_MAXS);
}

kedr_status kedr_dsmc_get_stats(const kedr_dsmc *sim, kedr_dsmc_stats *st)
{
    if (!sim || !st)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_get_stats: %s is NULL", sim ? "stats" : "sim");
    memset(st, 0, sizeof *st);
    st->step = sim->step;
    st->time = sim->time;
    st->particles = sim->n;
    st->collisions = sim->collisions;
    st->candidates = sim->candidates;
    st->generated = sim->generated;
    st->total_collisions = sim->total_collisions;
    st->total_generated = sim->total_generated;
    st->samples = sim->samples;
    st->sample_start = sim->c.sample_start;
    st->mcs_mfp = sim->collisions ? sim->sep_mfp / (double)sim->collisions : 0;
    st->total_mcs_mfp =
        sim->total_collisions ? sim->total_sep_mfp / (double)sim->total_collisions : 0;
    memcpy(st->stage_seconds, sim->stage_seconds, sizeof st->stage_seconds);
    if (sim->nranks > 1) { /* every rank's counts; the slowest rank's stage times */
        uint64_t u[6] = {sim->n, sim->collisions, sim->candidates, sim->generated,
                         sim->total_collisions, sim->total_generated};
        double d[2] = {sim->sep_mfp, sim->total_sep_mfp};
        KEDR_TRY(kedr_comm_allreduce(sim->comm, KEDR_U64, KEDR_OP_SUM, u, 6));
        KEDR_TRY(kedr_comm_allreduce(sim->comm, KEDR_F64, KEDR_OP_SUM, d, 2));
        KEDR_TRY(kedr_comm_allreduce(sim->comm, KEDR_F64, KEDR_OP_MAX, st->stage_seconds,
                                     KEDR_DSMC_NSTAGES));
        st->particles = u[0];
        st->collisions = u[1];
        st->candidates = u[2];
        st->generated = u[3];
        st->total_collisions = u[4];
        st->total_generated = u[5];
        st->mcs_mfp = u[1] ? d[0] / (double)u[1] : 0;
        st->total_mcs_mfp = u[4] ? d[1] / (double)u[4] : 0;
    }
    if (sim->p.rx.nreact) { /* the last step's reactions, over every rank */
        uint64_t r[DSMC_MAXR + 1];
        memcpy(r, sim->reactions, sizeof r);
        KEDR_TRY(dsmc_sum_ranks(sim, KEDR_U64, r, DSMC_MAXR + 1));
        for (int q = 0; q < sim->p.rx.nreact; q++) {
            st->reaction[q] = r[q];
            st->reactions += r[q];
        }
        st->reactions_lost = r[DSMC_MAXR];
    }
    if (sim->p.vib) {
        uint64_t sums[2 * DSMC_MAXS];
        KEDR_TRY(vib_sums(sim, sums));
        double e = 0, nv = 0, th = 0;
        for (int k = 0; k < sim->p.nspecies; k++) {
            if (sim->p.theta_v[k] == 0)
                continue;
            e += dsmc_evib(&sim->p, k, 1) * (double)sums[k];
            nv += (double)sums[DSMC_MAXS + k];
            th += sim->p.theta_v[k] * (double)sums[DSMC_MAXS + k];
        }
        st->vib_energy = nv > 0 ? e / nv : 0;
        st->temperature_vib = nv > 0 ? dsmc_tvib(th / nv, e / nv) : 0;
    }
    return KEDR_OK;
}

kedr_status kedr_dsmc_get_vib_levels(kedr_dsmc *sim, size_t cap, size_t *n, uint8_t *level)
{
    const char *fn = "kedr_dsmc_get_vib_levels";
    if (!sim || !n || (!level && cap))
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s is NULL", fn, !sim ? "sim" : !n ? "n" : "level");
    if (!sim->p.vib)
        return kedr_fail(KEDR_ERR_INVALID, "%s: no species of this gas vibrates (theta_v)", fn);
    *n = sim->n;
    if (sim->n > cap)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu particles do not fit in cap = %zu", fn, sim->n,
                         cap);
    return sim->n ? kedr_download(sim->ctx, level, sim->a.vib, sim->n) : KEDR_OK;
}

kedr_status kedr_dsmc_set_vib_levels(kedr_dsmc *sim, size_t n, const uint8_t *level)
{
    const char *fn = "kedr_dsmc_set_vib_levels";
    if (!sim || (!level && n))
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s is NULL", fn, sim ? "level" : "sim");
    if (!sim->p.vib)
        return kedr_fail(KEDR_ERR_INVALID, "%s: no species of this gas vibrates (theta_v)", fn);
    if (n != sim->n)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %zu levels for %zu particles", fn, n, sim->n);
    if (n == 0)
        return KEDR_OK;
    uint8_t *sp = NULL;
    if (sim->a.sp) {
        if (!(sp = malloc(n)))
            return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
        kedr_status s = kedr_download(sim->ctx, sp, sim->a.sp, n);
        if (s != KEDR_OK) {
            free(sp);
            return s;
        }
    }
    for (size_t i = 0; i < n; i++) {
        int k = sp ? sp[i] : 0;
        if (level[i] && sim->p.theta_v[k] == 0) {
            kedr_status s = kedr_fail(KEDR_ERR_INVALID, "%s: particle %zu has level %u but its "
                                      "species %s does not vibrate", fn, i, level[i],
                                      sim->c.species[k].name);
            free(sp);
            return s;
        }
    }
    free(sp);
    return kedr_upload(sim->ctx, sim->a.vib, level, n);
}

kedr_status kedr_dsmc_capacity(const kedr_dsmc *sim, size_t *now, size_t *fit)
{
    if (!sim || !now || !fit)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_capacity: %s is NULL",
                         !sim ? "sim" : !now ? "now" : "fit");
    *now = sim->cap;
    /* What is free now plus what the arrays hold, at dsmc_slot_bytes and the counting sort's
     * look-back words (an eighth of a byte per slot on cuda) per particle. */
    double bytes = (double)dsmc_slot_bytes(&sim->p, !KEDR_IS_CUDA(sim->ctx));
    double avail = (double)sim->cap * bytes;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(sim->ctx)) {
        size_t free_b = 0, total_b = 0;
        KEDR_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
        avail += (double)free_b;
    } else
#endif
    {
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        avail += pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    }
    double f = avail / (bytes + 1);
    size_t limit = sim->c.max_particles ? sim->c.max_particles : ((size_t)1 << 32) - 1;
    *fit = f < (double)limit ? (size_t)f : limit;
    return KEDR_OK;
}

kedr_status kedr_dsmc_memory(const kedr_dsmc *sim, size_t *bytes)
{
    if (!sim || !bytes)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_memory: %s is NULL", !sim ? "sim" : "bytes");
    size_t slot = dsmc_slot_bytes(&sim->p, !KEDR_IS_CUDA(sim->ctx));
    /* the rank's own cells' arrays (room for cells_cap) and the grid's cut-cell gas fractions */
    size_t per_cell = dsmc_cell_slot_bytes(&sim->p, sim->acc != NULL);
    *bytes = sim->cap * slot + sim->sort_scratch_bytes + sim->cells_cap * per_cell +
             (sim->geo.gas ? 8 * sim->ncells : 0) +
             sim->offsets_bytes + 4 * sizeof(uint64_t) +
             (sim->geo.surf ? sim->geo.nelem * 8 * DSMC_NSURF : 0) + kedr_scratch_held(sim->ctx) +
             dsmc_exchange_bytes(sim);
    return KEDR_OK;
}

/* ---- particles in and out ----------------------------------------------------------------- */

kedr_status kedr_dsmc_set_particles(kedr_dsmc *sim, size_t n, const double *x, const double *y,
                                    const double *vx, const double *vy, const double *vz,
                                    const float *erot, const uint8_t *species)
{
    return kedr_dsmc_set_particles3(sim, n, x, y, NULL, vx, vy, vz, erot, species);
}

kedr_status kedr_dsmc_set_particles3(kedr_dsmc *sim, size_t n, const double *x, const double *y,
                                     const double *z, const double *vx, const double *vy,
                                     const double *vz, const float *erot, const uint8_t *species)
{
    const char *fn = "kedr_dsmc_set_particles";
    if (!sim)
        return kedr_fail(KEDR_ERR_INVALID, "%s: sim is NULL", fn);
    KEDR_TRY(kedr_check_ptr(x, n, fn, "x"));
    KEDR_TRY(kedr_check_ptr(y, n, fn, "y"));
    int three = sim->p.dims == 3;
    if (three)
        KEDR_TRY(kedr_check_ptr(z, n, fn, "z (the case is 3D: use kedr_dsmc_set_particles3)"));
    else if (z)
        return kedr_fail(KEDR_ERR_INVALID, "%s: z given for a 2D case (expected NULL)", fn);
    KEDR_TRY(kedr_check_ptr(vx, n, fn, "vx"));
    KEDR_TRY(kedr_check_ptr(vy, n, fn, "vy"));
    KEDR_TRY(kedr_check_ptr(vz, n, fn, "vz"));
    const kedr_dsmc_case *c = &sim->c;
    for (size_t i = 0; i < n; i++) {
        double zi = three ? z[i] : 0;
        int out = !(x[i] >= c->lo[0] && x[i] <= c->hi[0] && y[i] >= c->lo[1] && y[i] <= c->hi[1]) ||
                  (three && !(zi >= c->lo[2] && zi <= c->hi[2]));
        if (out || (three ? dsmc_inside_body3(&sim->p, x[i], y[i], zi)
                          : dsmc_inside_body(&sim->p, x[i], y[i]))) {
            char at[96];
            if (three)
                snprintf(at, sizeof at, "(%g, %g, %g)", x[i], y[i], zi);
            else
                snprintf(at, sizeof at, "(%g, %g)", x[i], y[i]);
            return kedr_fail(KEDR_ERR_INVALID, "%s: particle %zu at %s is %s", fn, i, at,
                             out ? "outside the domain" : "inside a body");
        }
        if (!isfinite(vx[i]) || !isfinite(vy[i]) || !isfinite(vz[i]))
            return kedr_fail(KEDR_ERR_INVALID, "%s: particle %zu has a non-finite velocity", fn, i);
        if (species && species[i] >= c->nspecies)
            return kedr_fail(KEDR_ERR_INVALID, "%s: particle %zu has species %u (the case has %d)",
                             fn, i, species[i], c->nspecies);
        if (erot && !(erot[i] >= 0 && isfinite(erot[i])))
            return kedr_fail(KEDR_ERR_INVALID, "%s: particle %zu has rotational energy %g: expected "
                             "a finite value >= 0", fn, i, erot[i]);
        if (erot && erot[i] != 0 && c->species[species ? species[i] : 0].rot_dof == 0)
            return kedr_fail(KEDR_ERR_INVALID, "%s: particle %zu has rotational energy %g but its "
                             "species %s has no rotational degrees of freedom", fn, i, erot[i],
                             c->species[species ? species[i] : 0].name);
    }
    sim->n = 0;
    KEDR_TRY(dsmc_reserve(sim, n));
    KEDR_TRY(kedr_upload(sim->ctx, sim->a.x, x, n * 8));
    KEDR_TRY(kedr_upload(sim->ctx, sim->a.y, y, n * 8));
    if (three)
        KEDR_TRY(kedr_upload(sim->ctx, sim->a.z, z, n * 8));
    KEDR_TRY(kedr_upload(sim->ctx, sim->a.vx, vx, n * 8));
    KEDR_TRY(kedr_upload(sim->ctx, sim->a.vy, vy, n * 8));
    KEDR_TRY(kedr_upload(sim->ctx, sim->a.vz, vz, n * 8));
    /* without these arrays every erot and species checked above is 0 */
    if (sim->a.erot && erot)
        KEDR_TRY(kedr_upload(sim->ctx, sim->a.erot, erot, n * 4));
    else if (sim->a.erot)
        KEDR_TRY(kedr_memset(sim->ctx, sim->a.erot, 0, n * 4));
    if (sim->a.sp && species)
        KEDR_TRY(kedr_upload(sim->ctx, sim->a.sp, species, n));
    else if (sim->a.sp)
        KEDR_TRY(kedr_memset(sim->ctx, sim->a.sp, 0, n));
    if (sim->a.vib) /* the ground level; kedr_dsmc_set_vib_levels sets others */
        KEDR_TRY(kedr_memset(sim->ctx, sim->a.vib, 0, n));
    sim->n = n;
    sim->sorted = sim->located = 0;
    return KEDR_OK;
}

kedr_status kedr_dsmc_get_particles(kedr_dsmc *sim, size_t cap, size_t *n, double *x, double *y,
                                    double *vx, double *vy, double *vz, float *erot,
                                    uint8_t *species)
{
    return kedr_dsmc_get_particles3(sim, cap, n, x, y, NULL, vx, vy, vz, erot, species);
}

kedr_status kedr_dsmc_get_particles3(kedr_dsmc *sim, size_t cap, size_t *n, double *x, double *y,
                                     double *z, double *vx, double *vy, double *vz, float *erot,
                                     uint8_t *species)
{
    if (!sim || !n)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_get_particles: %s is NULL", sim ? "n" : "sim");
    if (z && sim->p.dims != 3)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_get_particles: z given for a 2D case "
                         "(expected NULL)");
    *n = sim->n;
    if (sim->n > cap)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_get_particles: %zu particles do not fit in "
                         "cap = %zu", sim->n, cap);
    size_t b = sim->n * 8;
    if (x) KEDR_TRY(kedr_download(sim->ctx, x, sim->a.x, b));
    if (y) KEDR_TRY(kedr_download(sim->ctx, y, sim->a.y, b));
    if (z) KEDR_TRY(kedr_download(sim->ctx, z, sim->a.z, b));
    if (vx) KEDR_TRY(kedr_download(sim->ctx, vx, sim->a.vx, b));
    if (vy) KEDR_TRY(kedr_download(sim->ctx, vy, sim->a.vy, b));
    if (vz) KEDR_TRY(kedr_download(sim->ctx, vz, sim->a.vz, b));
    if (erot && sim->a.erot) KEDR_TRY(kedr_download(sim->ctx, erot, sim->a.erot, sim->n * 4));
    else if (erot) memset(erot, 0, sim->n * sizeof *erot);
    if (species && sim->a.sp) KEDR_TRY(kedr_download(sim->ctx, species, sim->a.sp, sim->n));
    else if (species) memset(species, 0, sim->n);
    return KEDR_OK;
}

/* ---- fields ------------------------------------------------------------------------------- */

kedr_status kedr_dsmc_reset_samples(kedr_dsmc *sim)
{
    if (!sim)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_reset_samples: sim is NULL");
    sim->samples = 0;
    free(sim->mark); /* the window starts again with the sums */
    sim->mark = NULL;
    sim->mark_samples = 0;
    sim->mark_step = sim->step;
    KEDR_TRY(dsmc_surface_reset(sim));
    size_t bytes = sim->nlocal * 8 * dsmc_nacc(&sim->p);
    return sim->acc ? kedr_memset(sim->ctx, sim->acc, 0, bytes) : KEDR_OK;
}

void kedr_dsmc_fields_free(kedr_dsmc_fields *f)
{
    if (!f)
        return;
    free(f->number_density); /* one block holds every field */
    memset(f, 0, sizeof *f);
}

/* The fields of the sums since the window's mark (window) or since sampling began; collective. */
static kedr_status get_fields(kedr_dsmc *sim, kedr_dsmc_fields *f, int window)
{
    if (!sim || !f)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_get_fields: %s is NULL", sim ? "f" : "sim");
    memset(f, 0, sizeof *f);
    KEDR_TRY(dsmc_sample_sums(sim));
    size_t nc = sim->ncells, nl = sim->nlocal, nacc = dsmc_nacc(&sim->p);
    const int vib = sim->p.vib, ns = (int)dsmc_acc_nspecies(&sim->p);
    const int ncols = (vib ? 13 : 12) + 2 * ns; /* then a mixture's densities and fractions */
    double *acc = calloc(nc * nacc, 8), *block = calloc(nc * (size_t)ncols, 8);
    double *mine = nl == nc ? acc : malloc((nl ? nl : 1) * nacc * 8);
    if (!acc || !block || !mine) {
        if (mine != acc)
            free(mine);
        free(acc);
        free(block);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_get_fields: out of host memory (%zu cells)", nc);
    }
    kedr_status s = kedr_download(sim->ctx, mine, sim->acc, nl * 8 * nacc);
    if (s == KEDR_OK && window && sim->mark) /* this rank's sums since the mark */
        for (size_t i = 0; i < nl * nacc; i++)
            mine[i] -= sim->mark[i];
    if (s == KEDR_OK && mine != acc) /* the rank's own cells into the grid's */
        dsmc_cells_to_grid(sim, mine, acc, 8, nacc);
    if (mine != acc)
        free(mine);
    if (s == KEDR_OK) /* each rank sampled its own cells */
        s = dsmc_sum_ranks(sim, KEDR_F64, acc, nc * nacc);
    if (s != KEDR_OK) {
        free(acc);
        free(block);
        return s;
    }
    f->nx = sim->c.nx;
    f->ny = sim->c.ny;
    f->nz = sim->p.nz;
    f->samples = sim->samples - (window ? sim->mark_samples : 0);
    double **cols[13] = {&f->number_density, &f->density, &f->ux,       &f->uy,
                         &f->uz,             &f->temperature, &f->temperature_rot,
                         &f->temperature_overall, &f->pressure, &f->mach, &f->particles,
                         &f->mfp_ratio, &f->temperature_vib};
    for (int k = 0; k < (vib ? 13 : 12); k++) /* temperature_vib only for a vibrating gas */
        *cols[k] = block + (size_t)k * nc;
    f->nspecies = ns;
    for (int k = 0; k < ns; k++) {
        f->species_density[k] = block + (size_t)(ncols - 2 * ns + k) * nc;
        f->mole_fraction[k] = block + (size_t)(ncols - ns + k) * nc;
    }
    const double *count = acc + dsmc_acc_species(&sim->p) * nc; /* a mixture's species rows */
    double dx = (sim->c.hi[0] - sim->c.lo[0]) / sim->c.nx;
    double dy = (sim->c.hi[1] - sim->c.lo[1]) / sim->c.ny, side = dx > dy ? dx : dy;
    side = sim->p.dims == 3 && sim->p.dz > side ? sim->p.dz : side;
    double samples = (double)f->samples, w = sim->c.weight;
    for (size_t c = 0; c < nc && samples > 0; c++) {
        double n = acc[DSMC_ACC_N * nc + c], m = acc[DSMC_ACC_M * nc + c];
        double v = sim->geo.gas_host[c]; /* densities use the gas volume of cut cells */
        f->particles[c] = n / samples;
        if (n == 0) { /* no molecule sampled: density and pressure 0 (that much was measured),
                       * velocity, temperatures, Mach and mean free path undefined (NaN, not
                       * 0 K); solid cells are NaN throughout (below) */
            double *undefined[] = {f->ux, f->uy, f->uz, f->temperature, f->temperature_rot,
                                   f->temperature_overall, f->mach, f->mfp_ratio};
            for (int k = 0; k < 8; k++)
                undefined[k][c] = NAN;
            if (vib)
                f->temperature_vib[c] = NAN;
            for (int k = 0; k < ns; k++)
                f->mole_fraction[k][c] = NAN;
            continue;
        }
        double px = acc[DSMC_ACC_MVX * nc + c], py = acc[DSMC_ACC_MVY * nc + c];
        double pz = acc[DSMC_ACC_MVZ * nc + c], e2 = acc[DSMC_ACC_MV2 * nc + c];
        double wc = w * dsmc_weight_factor(&sim->p, (uint32_t)c);
        f->number_density[c] = n * wc / (samples * v);
        f->density[c] = m * wc / (samples * v);
        for (int k = 0; k < ns; k++) {
            double nk = count[(size_t)k * nc + c];
            f->species_density[k][c] = nk * wc / (samples * v);
            f->mole_fraction[k][c] = nk / n;
        }
        f->ux[c] = px / m;
        f->uy[c] = py / m;
        f->uz[c] = pz / m;
        double t = (e2 - (px * px + py * py + pz * pz) / m) / (3.0 * KEDR_BOLTZMANN * n);
        f->temperature[c] = t > 0 ? t : 0;
        f->pressure[c] = f->number_density[c] * KEDR_BOLTZMANN * f->temperature[c];
        double zeta = acc[DSMC_ACC_ZETA * nc + c] / n;
        double erot = acc[DSMC_ACC_EROT * nc + c];
        f->temperature_rot[c] = zeta > 0 ? 2.0 * erot / (KEDR_BOLTZMANN * zeta * n) : 0;
        /* the modes weighted by their degrees of freedom, vibration's zeta_v = 2 <e_vib> /
         * (k T_vib) over all molecules (its effective degrees of freedom at T_vib) */
        double zv = 0, tv = 0;
        if (vib) {
            double ev = acc[DSMC_ACC_EVIB * nc + c], nv = acc[DSMC_ACC_NVIB * nc + c];
            tv = nv > 0 ? dsmc_tvib(acc[DSMC_ACC_THETA * nc + c] / nv, ev / nv) : 0;
            zv = tv > 0 ? 2.0 * ev / (KEDR_BOLTZMANN * tv * n) : 0;
            f->temperature_vib[c] = tv;
        }
        f->temperature_overall[c] =
            (3.0 * f->temperature[c] + zeta * f->temperature_rot[c] + zv * tv) /
            (3.0 + zeta + zv);
        double gamma = (5.0 + zeta) / (3.0 + zeta);
        double speed = sqrt(f->ux[c] * f->ux[c] + f->uy[c] * f->uy[c] + f->uz[c] * f->uz[c]);
        double a = sqrt(gamma * KEDR_BOLTZMANN * f->temperature_overall[c] / (m / n));
        f->mach[c] = a > 0 ? speed / a : 0;
        double inv_mfp = 0; /* a mixture: weighted by the cell's own mole fractions */
        for (int k = 0; k < sim->c.nspecies && t > 0; k++) {
            const kedr_dsmc_species *sp = &sim->c.species[k];
            double xk = f->nspecies ? f->mole_fraction[k][c] : sim->c.fraction[k];
            inv_mfp += xk * sqrt(2.0) * M_PI * sp->d_ref * sp->d_ref * f->number_density[c] *
                       pow(sp->t_ref / t, sp->omega - 0.5);
        }
        f->mfp_ratio[c] = inv_mfp > 0 ? 1.0 / (inv_mfp * side) : 0;
    }
    dsmc_fields_mask_solid(sim, f);
    free(acc);
    return KEDR_OK;
}

kedr_status kedr_dsmc_get_fields(kedr_dsmc *sim, kedr_dsmc_fields *f)
{
    return get_fields(sim, f, 0);
}

kedr_status kedr_dsmc_get_window_fields(kedr_dsmc *sim, kedr_dsmc_fields *f)
{
    return get_fields(sim, f, 1);
}

kedr_status kedr_dsmc_mark_window(kedr_dsmc *sim)
{
    if (!sim)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_mark_window: sim is NULL");
    KEDR_TRY(dsmc_sample_sums(sim));
    size_t bytes = sim->nlocal * 8 * dsmc_nacc(&sim->p);
    if (!sim->mark && !(sim->mark = malloc(bytes ? bytes : 8)))
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_mark_window: out of host memory (%zu bytes)",
                         bytes);
    KEDR_TRY(kedr_download(sim->ctx, sim->mark, sim->acc, bytes));
    sim->mark_samples = sim->samples;
    sim->mark_step = sim->step;
    return KEDR_OK;
}
