/* DSMC validation 6: a stationary Mach 8 normal shock in argon (cases/dsmc/shock-ar-m8.ini).
 *
 * The freestream (300 K, Mach 8) enters at x_min and the Rankine-Hugoniot state behind the shock
 * enters at x_max ([downstream] state = rankine-hugoniot); the domain starts with the two states
 * on either side of x = 0. Nothing holds the shock in place: its position is a random walk. So
 * the cell fields are sampled over windows of steps; each window's shock position is the
 * position of the equivalent discontinuity (the x_s with integral of n over the domain equal to
 * n1 (x_s - x_min) + n2 (x_max - x_s)), and the windows' profiles are shifted by whole cells to
 * a common shock position before they are averaged. Checks:
 *  (a) the Rankine-Hugoniot jump: density, temperature and velocity of the aligned profile's
 *      downstream plateau against n2, T2, u2, within 1% (batch standard errors 0.04-0.3%);
 *  (b) the reciprocal density thickness lambda_1 / delta, delta = (n2 - n1) / max(dn/dx) on the
 *      aligned profile (slopes by least squares over lambda_1 / 2 on either side), lambda_1 =
 *      16 mu_1 / (5 rho_1 sqrt(2 pi R T_1)) the upstream mean free path of the shock-thickness
 *      literature (mu_1 the VHS viscosity, Bird 1994 eq. 4.62), against the value measured in argon at Mach 8 by
 *      H. Alsmeyer, J. Fluid Mech. 74 (1976) 497-513 (see docs/validation.md for the number and
 *      the tolerance).
 * The CI run is the shipped case coarsened to cells of lambda_1 / 3; `--full` runs the case file
 * as it is and prints the aligned profile as CSV. */
#include "test_dsmc_util.h"

#include <omp.h>
#include <unistd.h>

/* Alsmeyer (1976), argon at Mach 8: reciprocal maximum-slope density thickness lambda_1 / delta
 * (docs/validation.md). */
#define PUBLISHED_INV_THICKNESS 0.20

static char root[1024];

static void find_root(void)
{
    snprintf(root, sizeof root, "%s", __FILE__);
    char *p = strstr(root, "tests/validation/test_dsmc_shock.c");
    if (p)
        *p = 0;
    else
        snprintf(root, sizeof root, "./");
}

/* VHS viscosity (Bird 1994 eq. 4.62): mu = 15 sqrt(pi m k T_ref) (T / T_ref)^omega /
 * (2 (5 - 2 omega) (7 - 2 omega) pi d_ref^2). */
static double vhs_viscosity(const kedr_dsmc_species *s, double t)
{
    return 15.0 * sqrt(M_PI * s->mass * K_B * s->t_ref) * pow(t / s->t_ref, s->omega) /
           (2.0 * (5 - 2 * s->omega) * (7 - 2 * s->omega) * M_PI * s->d_ref * s->d_ref);
}

/* The upstream mean free path of shock-structure data: 16 mu / (5 rho sqrt(2 pi R T)), the
 * hard-sphere mean free path of a gas of the same viscosity. */
static double lambda_upstream(const kedr_dsmc_case *c)
{
    const kedr_dsmc_species *s = &c->species[0];
    double rho = c->number_density * s->mass;
    return 16.0 * vhs_viscosity(s, c->temperature) /
           (5.0 * rho * sqrt(2 * M_PI * K_B / s->mass * c->temperature));
}

#define MAX_BATCHES 8

typedef struct {
    size_t filled;                          /* particles of the initial fill */
    uint64_t generated;                     /* particles that entered, all steps */
    double inv_thickness, inv_thickness_sd; /* lambda_1 / delta and its batch standard error */
    double n2, t2, u2, n2_sd, t2_sd, u2_sd; /* the downstream plateau, and standard errors */
    double wander;                          /* largest shock displacement seen, m */
    double mcs_mfp;
} shock_result;

typedef struct {
    int nx;
    double *n, *t, *u; /* aligned sums per cell */
    double *count;
} profile;

static profile profile_new(int nx)
{
    profile p = {nx, NULL, NULL, NULL, NULL};
    p.n = tu_host_alloc(4 * (size_t)nx * sizeof(double));
    memset(p.n, 0, 4 * (size_t)nx * sizeof(double));
    p.t = p.n + nx;
    p.u = p.t + nx;
    p.count = p.u + nx;
    return p;
}

/* lambda_1 / delta and the downstream plateau of an aligned profile; the plateau is the mean
 * over cells whose centre lies from x_ref + from to x_ref + to. */
static void analyse(const kedr_dsmc_case *c, const profile *p, double n1, double n2, double lam1,
                    double from, double to, double *inv, double *pn, double *pt, double *pu)
{
    double dx = (c->hi[0] - c->lo[0]) / c->nx, most = 0, slope = 0;
    for (int i = 0; i < p->nx; i++)
        most = p->count[i] > most ? p->count[i] : most;
    /* The slope at cell i: the least-squares line through cells i - half .. i + half, half
     * cells making about lambda_1 / 2 (at least 1). The maximum of noisy slopes is biased
     * upwards; the regression keeps that bias small, and for a tanh profile of thickness delta
     * it lowers the maximum by a^2 / (5 w^2), a = half dx, w = delta / 2: 0.9% here. */
    int half = (int)lround(0.5 * lam1 / dx);
    half = half < 1 ? 1 : half;
    for (int i = half; i + half < p->nx; i++) {
        double sxy = 0, sxx = 0;
        int ok = 1;
        for (int j = -half; j <= half; j++) {
            ok &= p->count[i + j] >= 0.5 * most;
            sxy += j * dx * (ok ? p->n[i + j] / p->count[i + j] : 0);
            sxx += j * dx * j * dx;
        }
        if (ok)
            slope = sxy / sxx > slope ? sxy / sxx : slope;
    }
    *inv = slope > 0 ? lam1 * slope / (n2 - n1) : 0;
    double sn = 0, st = 0, su = 0, k = 0;
    for (int i = 0; i < p->nx; i++) {
        double x = c->lo[0] + (i + 0.5) * dx - c->downstream.shock_position;
        if (x >= from && x <= to && p->count[i] >= 0.5 * most) {
            sn += p->n[i] / p->count[i];
            st += p->t[i] / p->count[i];
            su += p->u[i] / p->count[i];
            k++;
        }
    }
    *pn = k ? sn / k : 0;
    *pt = k ? st / k : 0;
    *pu = k ? su / k : 0;
}

static double mean_sd(const double *v, int n, double *sd)
{
    double m = 0, s = 0;
    for (int i = 0; i < n; i++)
        m += v[i] / n;
    for (int i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m) / (n - 1);
    *sd = sqrt(s / n);
    return m;
}

/* Runs the case: settle steps, then nwin windows of win steps in nb batches. */
static void run_shock(kedr_ctx *ctx, const kedr_dsmc_case *c, int64_t settle, int64_t win,
                      int nwin, int nb, int print_csv, shock_result *r)
{
    memset(r, 0, sizeof *r);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, c, &sim));
    if (!sim)
        return;
    double n1 = c->number_density, n2 = c->downstream.number_density;
    double dx = (c->hi[0] - c->lo[0]) / c->nx, lam1 = lambda_upstream(c);
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    r->filled = st.particles;
    /* The fill: n2 in the cells whose centre lies past the shock position, n1 before it; each
     * cell's count is rounded at random (variance at most 1/4). */
    double expect = 0, volume = dx * (c->hi[1] - c->lo[1]) / c->ny;
    for (int i = 0; i < c->nx; i++)
        expect += (c->lo[0] + (i + 0.5) * dx >= c->downstream.shock_position ? n2 : n1) * volume *
                  c->ny / c->weight;
    TU_CHECK(fabs((double)st.particles - expect) < 5 * 0.5 * sqrt((double)c->nx * c->ny),
             "initial fill: %zu particles, expected %.1f", st.particles, expect);
    for (int64_t s = 0; s < settle; s++)
        TU_OK(kedr_dsmc_step_stages(sim, KEDR_DSMC_ALL_STAGES &
                                             ~KEDR_DSMC_STAGE_BIT(KEDR_DSMC_SAMPLE)));
    profile all = profile_new(c->nx), batch[MAX_BATCHES];
    for (int b = 0; b < nb; b++)
        batch[b] = profile_new(c->nx);
    TU_OK(kedr_dsmc_reset_samples(sim));
    for (int w = 0; w < nwin; w++) {
        for (int64_t s = 0; s < win; s++)
            TU_OK(kedr_dsmc_step(sim));
        kedr_dsmc_fields f;
        TU_OK(kedr_dsmc_get_fields(sim, &f));
        if (!f.number_density)
            break;
        /* The equivalent discontinuity of this window (ny cells per column averaged). */
        double integral = 0;
        for (int i = 0; i < c->nx; i++)
            for (int j = 0; j < c->ny; j++)
                integral += f.number_density[(size_t)j * c->nx + i] * dx / c->ny;
        double xs = (n2 * c->hi[0] - n1 * c->lo[0] - integral) / (n2 - n1);
        double moved = xs - c->downstream.shock_position;
        r->wander = fabs(moved) > r->wander ? fabs(moved) : r->wander;
        int shift = (int)lround(moved / dx);
        profile *into[2] = {&all, &batch[w * nb / nwin]};
        for (int i = 0; i < c->nx; i++) {
            int to = i - shift;
            if (to < 0 || to >= c->nx)
                continue;
            double sn = 0, st = 0, su = 0;
            for (int j = 0; j < c->ny; j++) {
                size_t cell = (size_t)j * c->nx + i;
                sn += f.number_density[cell] / c->ny;
                st += f.temperature[cell] / c->ny;
                su += f.ux[cell] / c->ny;
            }
            for (int k = 0; k < 2; k++) {
                into[k]->n[to] += sn;
                into[k]->t[to] += st;
                into[k]->u[to] += su;
                into[k]->count[to] += 1;
            }
        }
        kedr_dsmc_fields_free(&f);
        TU_OK(kedr_dsmc_reset_samples(sim));
    }
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    r->mcs_mfp = st.total_mcs_mfp;
    r->generated = st.total_generated;
    /* The downstream plateau: from 6 lambda_1 behind the shock (past the temperature's tail) to
     * 2 lambda_1 before the x_max side. */
    double from = 6 * lam1, to = c->hi[0] - c->downstream.shock_position - 2 * lam1;
    double inv[MAX_BATCHES], pn[MAX_BATCHES], pt[MAX_BATCHES], pu[MAX_BATCHES];
    for (int b = 0; b < nb; b++)
        analyse(c, &batch[b], n1, n2, lam1, from, to, &inv[b], &pn[b], &pt[b], &pu[b]);
    analyse(c, &all, n1, n2, lam1, from, to, &r->inv_thickness, &r->n2, &r->t2, &r->u2);
    mean_sd(inv, nb, &r->inv_thickness_sd);
    mean_sd(pn, nb, &r->n2_sd);
    mean_sd(pt, nb, &r->t2_sd);
    mean_sd(pu, nb, &r->u2_sd);
    if (print_csv) {
        printf("x_over_lambda1,n_over_n1,T_over_T1,ux_over_u1\n");
        for (int i = 0; i < c->nx; i++)
            if (all.count[i] > 0)
                printf("%.4f,%.5f,%.5f,%.5f\n",
                       (c->lo[0] + (i + 0.5) * dx - c->downstream.shock_position) / lam1,
                       all.n[i] / all.count[i] / n1, all.t[i] / all.count[i] / c->temperature,
                       all.u[i] / all.count[i] / c->velocity[0]);
    }
    free(all.n);
    for (int b = 0; b < nb; b++)
        free(batch[b].n);
    kedr_dsmc_destroy(sim);
}

/* Checkpoints of a case with a downstream state: 2N steps equal N + restart + N, bit for bit,
 * and a checkpoint is refused by a case whose downstream density or temperature differs (the
 * case hash covers them). */
static void test_checkpoint(kedr_ctx *ctx, const kedr_dsmc_case *c)
{
    const int n = 60;
    char dir[] = "/tmp/kedr-test-shock-XXXXXX", path[600];
    if (!mkdtemp(dir)) {
        TU_CHECK(0, "mkdtemp failed");
        return;
    }
    snprintf(path, sizeof path, "%s/shock.chk", dir);
    kedr_dsmc *whole = NULL, *half = NULL, *again = NULL;
    TU_OK(kedr_dsmc_create(ctx, c, &whole));
    TU_OK(kedr_dsmc_create(ctx, c, &half));
    for (int s = 0; s < 2 * n && whole; s++)
        TU_OK(kedr_dsmc_step(whole));
    for (int s = 0; s < n && half; s++)
        TU_OK(kedr_dsmc_step(half));
    if (half)
        TU_OK(kedr_dsmc_write_checkpoint(half, path));
    TU_OK(kedr_dsmc_restart(ctx, c, path, &again));
    for (int s = 0; s < n && again; s++)
        TU_OK(kedr_dsmc_step(again));
    if (whole && again) {
        dt_particles a = dt_get(whole), b = dt_get(again);
        TU_CHECK(a.n == b.n && a.n > 0 && memcmp(a.x, b.x, a.n * 8) == 0 &&
                     memcmp(a.vx, b.vx, a.n * 8) == 0 && memcmp(a.vz, b.vz, a.n * 8) == 0,
                 "2N steps vs N + restart + N: %zu vs %zu particles", a.n, b.n);
        dt_free(&a);
        dt_free(&b);
    }
    for (int k = 0; k < 2; k++) {
        kedr_dsmc_case d = *c;
        if (k == 0)
            d.downstream.number_density *= 1.01;
        else
            d.downstream.temperature *= 1.01;
        kedr_dsmc *other = NULL;
        TU_CHECK(kedr_dsmc_restart(ctx, &d, path, &other) == KEDR_ERR_PARSE && !other &&
                     strstr(kedr_last_error(), "another case"),
                 "a checkpoint restarted with another downstream %s: %s",
                 k ? "temperature" : "density", kedr_last_error());
        kedr_dsmc_destroy(other);
    }
    kedr_dsmc_destroy(whole);
    kedr_dsmc_destroy(half);
    kedr_dsmc_destroy(again);
    remove(path);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    find_root();
    int full = argc > 1 && strcmp(argv[1], "--full") == 0;
    char path[1200];
    snprintf(path, sizeof path, "%scases/dsmc/shock-ar-m8.ini", root);
    kedr_dsmc_case c;
    TU_OK(kedr_dsmc_case_load(path, &c));
    if (tu_failed)
        return tu_finish("test_dsmc_shock");
    double lam1 = lambda_upstream(&c);
    int64_t settle, win;
    int nwin, nb = 5;
    if (full) {
        settle = c.sample_start;
        win = 200;
        nwin = (int)((c.steps - settle) / win);
    } else {
        /* CI: cells of about lambda_1 / 3, 27 molecules in an upstream cell. */
        c.nx = 120;
        c.hi[1] = (c.hi[0] - c.lo[0]) / c.nx;
        c.weight = c.number_density * (c.hi[1] - c.lo[1]) * (c.hi[1] - c.lo[1]) / 27;
        c.dt = kedr_dsmc_auto_dt(&c);
        c.sample_start = 0;
        /* 22 000 steps of 9000 molecules: per step, starting thread teams (the counting sort
         * runs several) costs more than the work, and far more on a loaded machine, so the CI
         * run uses one thread (the cpu results do not depend on the thread count). */
        omp_set_num_threads(1);
        settle = 2000;
        win = 100;
        nwin = 200;
        if (tu_quick()) {
            /* the same cells and molecules (the same discretisation), a shorter settling (the
             * shock forms within a few hundred steps) and 30 windows: 6.7x fewer samples */
            settle = 1000;
            nwin = 30;
        }
    }
    /* quick: the statistical bounds widen by sqrt(200 / 30); the thickness tolerance (the
     * experiment's and the cells', far above the batch error) stays */
    const double w = full ? 1 : dt_widen(200.0 / 30);
    printf("  Mach 8 argon shock: lambda_1 = %.4g m, cell = lambda_1 / %.2f, dt = %.3g s, "
           "n2/n1 = %.4f, T2/T1 = %.4f\n", lam1, lam1 / ((c.hi[0] - c.lo[0]) / c.nx), c.dt,
           c.downstream.number_density / c.number_density,
           c.downstream.temperature / c.temperature);
    kedr_backend list[2];
    int nbk = tu_backends(list);
    shock_result first = {0}; /* set by the first back end, read by the second */
    for (int b = 0; b < nbk; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        if (!full)
            test_checkpoint(ctx, &c);
        shock_result r;
        double t0 = kedr_wall_seconds();
        run_shock(ctx, &c, settle, win, nwin, nb, full, &r);
        const kedr_dsmc_downstream *d = &c.downstream;
        /* (a) the jump: 1%, with batch standard errors of 0.04-0.3% (required below 0.5%, so
         * that the check can fail). */
        double dn = r.n2 / d->number_density - 1, dt = r.t2 / d->temperature - 1;
        double du = r.u2 / d->velocity[0] - 1;
        TU_CHECK(fabs(dn) < 0.01 * w && fabs(dt) < 0.01 * w && fabs(du) < 0.01 * w,
                 "downstream plateau vs Rankine-Hugoniot: n %+.4f, T %+.4f, u %+.4f", dn, dt, du);
        TU_CHECK(r.n2_sd < 0.005 * w * d->number_density && r.t2_sd < 0.005 * w * d->temperature &&
                 r.u2_sd < 0.005 * w * d->velocity[0], "plateau standard errors too large");
        /* (b) the thickness (tolerance: docs/validation.md). */
        double tol = full ? 0.02 : 0.035;
        TU_CHECK(fabs(r.inv_thickness - PUBLISHED_INV_THICKNESS) < tol,
                 "lambda_1/delta = %.4f, published %.2f +- %.2f", r.inv_thickness,
                 PUBLISHED_INV_THICKNESS, tol);
        TU_CHECK(r.inv_thickness_sd < 0.01 * w, "lambda_1/delta standard error %.4f",
                 r.inv_thickness_sd);
        /* The shock stays well inside the domain. */
        TU_CHECK(r.wander < 5 * lam1, "the shock moved %.2f lambda_1", r.wander / lam1);
        /* Fill and inflow counts come from the same draws on the host: equal on every back end. */
        if (b == 0)
            first = r;
        else
            TU_CHECK(r.filled == first.filled && r.generated == first.generated,
                     "fill %zu / inflow %llu on this back end, %zu / %llu on the first", r.filled,
                     (unsigned long long)r.generated, first.filled,
                     (unsigned long long)first.generated);
        printf("  %s: lambda_1/delta = %.4f +- %.4f; downstream n/n2 = %.4f +- %.4f, T/T2 = "
               "%.4f +- %.4f, u/u2 = %.4f +- %.4f; shock moved up to %.2f lambda_1; mcs/mfp "
               "%.3f; %.1f s\n",
               kedr_backend_name(list[b]), r.inv_thickness, r.inv_thickness_sd,
               r.n2 / c.downstream.number_density, r.n2_sd / c.downstream.number_density,
               r.t2 / c.downstream.temperature, r.t2_sd / c.downstream.temperature,
               r.u2 / c.downstream.velocity[0], r.u2_sd / c.downstream.velocity[0],
               r.wander / lam1, r.mcs_mfp, kedr_wall_seconds() - t0);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_dsmc_shock");
}
