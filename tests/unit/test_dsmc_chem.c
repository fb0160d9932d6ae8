/* The chemistry of kedr dsmc (src/dsmc/chem.c, dsmc_kernels.h: dsmc_react), with the shipped
 * five-species air (cases/dsmc/species.ini [air5], cases/dsmc/air5.reactions):
 *  (a) energy and momentum: random pairs of every species (thermal to 30 eV relative energies,
 *      random rotational energies and vibrational levels) collided through dsmc_cand_collide
 *      with the chemistry on; every reaction of the file occurs, and each collision keeps its
 *      total energy (kinetic + rotational + vibrational + energy of formation, the new molecule
 *      of a dissociation included) to 1e-13 of the pair's kinetic and internal energy, its
 *      momentum to 1e-13 of sum m |v| and its mass to 1e-15, its atoms exactly;
 *  (b) rates: for every reaction and T = 5000, 7500, 10000, 15000 and 20000 K, a Monte Carlo
 *      over equilibrium pairs (Maxwellian velocities and Boltzmann rotational energies, drawn at
 *      a higher temperature and reweighted so that the rare pairs above E_a are sampled) of
 *      sigma g P, with the simulator's cross-section (dsmc_cand_eval) and reaction probability
 *      (dsmc_react_prob): k_MC = <sigma g P> (1/2 of it for like reactants) within 5% of the
 *      Arrhenius rate the file gives, the Monte Carlo's standard error below 1%;
 *      The Arrhenius rates of some shipped reactions need a probability above 1 somewhere
 *      (docs/dsmc.md): the formula is checked for every one, the simulator's bounded
 *      probability for the others;
 *  (c) a heat bath on each back end: one cell of 1.2e5 particles of the five species at 10000 K
 *      and 20000 K, one collision step of dt = tau / 20, repeated: each reaction's count against
 *      k(T) N_A N_B W dt / V (N_A (N_A - 1) for like reactants), k the model's rate ((b): the
 *      Arrhenius rate where P <= 1 suffices), every one within 5 standard errors (Poisson) and
 *      the sum within 5 of them plus 2%; over the step the particles' total energy, momentum
 *      and mass are kept (new atoms included), the atoms of each element counted the same, the
 *      particle count grown by the dissociations; the stats count the reactions;
 *  (d) the new molecules' order does not depend on the cpu's thread count (1 and 2 threads give
 *      the same particles bit for bit);
 *  (e) bad reaction files refused with file, line and reason: unknown species, atoms that do not
 *      balance, four products, one reactant, recombination, no arrow, a dissociation without its
 *      third body, Ea below the products' energy, a missing [formation] entry, A out of range,
 *      a misspelt key, a type that contradicts the equation, a species name that is not a
 *      formula, masses that do not balance; kedr_dsmc_case_check refuses bad reactions built
 *      in code; the shipped case loads with its 19 reactions. */
#include "validation/test_dsmc_util.h"

#include "core/internal.h"
#include "dsmc/sim.h"

#include <unistd.h>

static char species_file[1300], reactions_file[1300], case_dir[1250];

static void find_files(void)
{
    char base[1200];
    snprintf(base, sizeof base, "%s", __FILE__);
    char *at = strstr(base, "tests/unit/test_dsmc_chem.c");
    if (at)
        *at = 0;
    else
        snprintf(base, sizeof base, "./");
    snprintf(case_dir, sizeof case_dir, "%scases/dsmc", base);
    snprintf(species_file, sizeof species_file, "%s/species.ini", case_dir);
    snprintf(reactions_file, sizeof reactions_file, "%s/air5.reactions", case_dir);
}

/* A closed box of one cell holding the shipped five-species air at T, equal mole fractions. */
static kedr_dsmc_case air5_box(double temperature, double particles, uint64_t seed)
{
    double len = 1e-3, n = 1e22;
    kedr_dsmc_case c = dt_box(len, 1, n, temperature, particles, 1e-9);
    TU_OK(kedr_dsmc_species_load(species_file, "air5", &c));
    TU_OK(kedr_dsmc_reactions_load(reactions_file, &c));
    for (int k = 0; k < c.nspecies; k++)
        c.fraction[k] = 1.0 / c.nspecies;
    c.seed = seed;
    return c;
}

static double formation_of(const kedr_dsmc_case *c, int s) { return c->formation[s]; }

/* ---- (a) ------------------------------------------------------------------------------------ */

static void test_conservation(kedr_ctx *ctx)
{
    kedr_dsmc_case c = air5_box(10000, 100, 1);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    const dsmc_params *p = &sim->p;
    TU_CHECK(p->rx.nreact == 19 && p->vib, "air5: %d reactions, vib %d", p->rx.nreact, p->vib);
    enum { N = 61, ROOM = 1 << 16 };
    static double x[N + ROOM], y[N + ROOM], vx[N + ROOM], vy[N + ROOM], vz[N + ROOM];
    static float erot[N + ROOM];
    static uint8_t vib[N + ROOM], spc[N + ROOM];
    static uint32_t parent[ROOM];
    uint64_t counts[DSMC_MAXR + 2] = {0};
    dsmc_chem ch = {x, y, NULL, vx, vy, vz, erot, spc, vib, parent, &counts[DSMC_MAXR + 1],
                    counts, N, ROOM};
    uint64_t s = 987654321;
    const int collisions = tu_quick() ? 30000 : 200000;
    int bad_e = 0, bad_p = 0, bad_m = 0, bad_a = 0, bad_v = 0;
    double worst = 0;
    for (int n = 0; n < collisions; n++) {
        if (n % 500 == 0)
            for (int k = 0; k < N; k++) {
                s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                double u = (double)(s >> 11) * 0x1p-53;
                int sp = (int)((s >> 7) % 5);
                spc[k] = (uint8_t)sp;
                double v = 300 * pow(60.0, u); /* 300 m/s to 18 km/s */
                vx[k] = v * cos(7.0 * k + n);
                vy[k] = v * sin(3.0 * k + n);
                vz[k] = v * cos(5.0 * k);
                erot[k] = p->rot_dof[sp] ? (float)(K_B * 20000 * u * (k % 5)) : 0.0f;
                vib[k] = p->theta_v[sp] > 0 ? (uint8_t)((k * 13 + n) % 20) : 0;
                x[k] = 1e-4 * k;
                y[k] = 2e-4 * u;
            }
        int i = n % N, j = (n * 7 + 3) % N;
        if (j == i)
            j = (j + 1) % N;
        dsmc_cand cd = dsmc_cand_eval(p, (uint32_t)i, (uint32_t)j, vx, vy, vz, spc);
        if (!(cd.g > 0))
            continue;
        uint64_t made0 = counts[DSMC_MAXR + 1];
        /* before: the pair */
        double e0 = 0, scale_e = 0, m0 = 0, p0[3] = {0, 0, 0}, scale_p = 0;
        int atoms0[2] = {0, 0}; /* N, O */
        int q[3] = {i, j, -1};
        for (int t = 0; t < 2; t++) {
            int k = q[t], sp = spc[k];
            double m = p->mass[sp], v2 = vx[k] * vx[k] + vy[k] * vy[k] + vz[k] * vz[k];
            double in = 0.5 * m * v2 + (double)erot[k] + dsmc_evib(p, sp, vib[k]);
            e0 += in + formation_of(&c, sp);
            scale_e += in;
            m0 += m;
            p0[0] += m * vx[k];
            p0[1] += m * vy[k];
            p0[2] += m * vz[k];
            scale_p += m * sqrt(v2);
            const char *nm = c.species[sp].name;
            atoms0[0] += (int)(strchr(nm, 'N') != NULL) * (strcmp(nm, "N2") == 0 ? 2 : 1);
            atoms0[1] += (int)(strchr(nm, 'O') != NULL) * (strcmp(nm, "O2") == 0 ? 2 : 1);
        }
        dsmc_rng r = dsmc_candidate_rng(p, (uint32_t)n, 0);
        double sep = 0;
        double tcell = dsmc_vib_tcell(p, 0, N, vx, vy, vz, spc, vib);
        dsmc_cand_collide(p, &cd, &r, NULL, tcell, x, y, NULL, vx, vy, vz, erot, vib, NULL, &sep,
                          &ch);
        if (counts[DSMC_MAXR + 1] != made0)
            q[2] = (int)(N + counts[DSMC_MAXR + 1] - 1);
        double e1 = 0, m1 = 0, p1[3] = {0, 0, 0};
        int atoms1[2] = {0, 0};
        for (int t = 0; t < 3; t++) {
            int k = q[t];
            if (k < 0)
                continue;
            int sp = spc[k];
            double m = p->mass[sp], v2 = vx[k] * vx[k] + vy[k] * vy[k] + vz[k] * vz[k];
            e1 += 0.5 * m * v2 + (double)erot[k] + dsmc_evib(p, sp, vib[k]) + formation_of(&c, sp);
            m1 += m;
            p1[0] += m * vx[k];
            p1[1] += m * vy[k];
            p1[2] += m * vz[k];
            const char *nm = c.species[sp].name;
            atoms1[0] += (int)(strchr(nm, 'N') != NULL) * (strcmp(nm, "N2") == 0 ? 2 : 1);
            atoms1[1] += (int)(strchr(nm, 'O') != NULL) * (strcmp(nm, "O2") == 0 ? 2 : 1);
            bad_v += !isfinite(vx[k]) || !(erot[k] >= 0) ||
                     (p->rot_dof[sp] == 0 && erot[k] != 0) || (p->theta_v[sp] == 0 && vib[k]);
        }
        double rel = fabs(e1 - e0) / scale_e;
        worst = rel > worst ? rel : worst;
        bad_e += !(rel <= 1e-13);
        for (int d = 0; d < 3; d++)
            bad_p += !(fabs(p1[d] - p0[d]) <= 1e-13 * scale_p);
        bad_m += !(fabs(m1 - m0) <= 1e-15 * m0);
        bad_a += atoms0[0] != atoms1[0] || atoms0[1] != atoms1[1];
        if (q[2] >= 0) { /* keep the pair's slots: the new molecule goes back among them */
            int k = q[2];
            TU_CHECK(x[k] == x[parent[k - N]] && y[k] == y[parent[k - N]],
                     "a new molecule away from its parent");
            if (counts[DSMC_MAXR + 1] >= ROOM - 1)
                counts[DSMC_MAXR + 1] = 0;
        }
    }
    uint64_t total = 0;
    int seen = 0;
    for (int t = 0; t < p->rx.nreact; t++) {
        total += counts[t];
        seen += counts[t] > 0;
    }
    printf("  conservation: %d collisions, %llu reactions (%d of the %d kinds); worst relative "
           "energy change %.2e\n", collisions, (unsigned long long)total, seen, p->rx.nreact, worst);
    TU_CHECK(seen == p->rx.nreact, "only %d of %d reactions occurred", seen, p->rx.nreact);
    TU_CHECK(bad_e == 0, "%d collisions changed the energy (worst %.3e)", bad_e, worst);
    TU_CHECK(bad_p == 0, "%d momentum components changed", bad_p);
    TU_CHECK(bad_m == 0, "%d collisions changed the mass", bad_m);
    TU_CHECK(bad_a == 0, "%d collisions changed the atoms", bad_a);
    TU_CHECK(bad_v == 0, "%d molecules with bad energies after a collision", bad_v);
    TU_CHECK(counts[DSMC_MAXR] == 0, "dissociations without room: %llu",
             (unsigned long long)counts[DSMC_MAXR]);
    kedr_dsmc_destroy(sim);
}

/* ---- (b) ------------------------------------------------------------------------------------ */

static double gauss(uint64_t *s)
{
    double u[2];
    for (int t = 0; t < 2; t++) {
        *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
        u[t] = ((double)(*s >> 11) + 0.5) * 0x1p-53;
    }
    return sqrt(-2 * log(u[0])) * cos(2 * DSMC_PI * u[1]);
}
static double uexp(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return -log(((double)(*s >> 11) + 0.5) * 0x1p-53);
}

/* The share of a collision of energy ec between species a and b that makes reaction q, as
 * dsmc_react chooses (the pair's reactions in file order, one uniform against their running sum
 * of probabilities): clamp = 1; clamp = 0: the TCE formula of reaction q alone, unbounded. */
static double share(const dsmc_params *p, int q, int a, int b, double ec, int clamp)
{
    if (!clamp) {
        double d = ec - p->rx.re_ea[q];
        return d > 0 ? exp(p->rx.re_lc[q] + p->rx.re_x[q] * log(d) - p->rx.re_y[q] * log(ec)) : 0.0;
    }
    double sum = 0, before = 0;
    for (int t = 0; t < p->rx.nreact; t++) {
        if (!((p->rx.re_a[t] == a && p->rx.re_b[t] == b) || (p->rx.re_a[t] == b && p->rx.re_b[t] == a)))
            continue;
        before = sum < 1 ? sum : 1;
        sum += dsmc_react_prob(p, t, ec);
        if (t == q)
            return (sum < 1 ? sum : 1) - before;
    }
    return 0;
}

/* Reaction q's rate coefficient at temperature t by Monte Carlo over equilibrium pairs (see
 * the file's header), *se its standard error. */
static double tce_rate(const dsmc_params *p, const kedr_dsmc_reaction *re, int q, double t,
                       int samples, int clamp, double *se)
{
    int a = re->reactants[0], b = re->reactants[1];
    double ma = p->mass[a], mb = p->mass[b], mr = ma * mb / (ma + mb);
    int za = p->rot_dof[a], zb = p->rot_dof[b];
    /* the pairs at a temperature ti where those above E_a are common, reweighted */
    double shape = 2.2 + 0.5 * (za + zb), ti = re->ea / (K_B * shape);
    ti = ti > t ? ti : t;
    double vx[2] = {0, 0}, vy[2] = {0, 0}, vz[2] = {0, 0};
    uint8_t sp[2] = {(uint8_t)a, (uint8_t)b};
    double sum = 0, sum2 = 0, sig = sqrt(K_B * ti / mr);
    uint64_t s = 1234567 + 1000 * (uint64_t)q + (uint64_t)t;
    for (int k = 0; k < samples; k++) {
        vx[0] = sig * gauss(&s);
        vy[0] = sig * gauss(&s);
        vz[0] = sig * gauss(&s);
        double g2 = vx[0] * vx[0] + vy[0] * vy[0] + vz[0] * vz[0];
        /* weight: the Maxwellian of relative velocities at t over that at ti */
        double w = pow(ti / t, 1.5) * exp(-0.5 * mr * g2 / K_B * (1 / t - 1 / ti));
        double ec = 0.5 * mr * g2;
        for (int m = 0; m < 2; m++) {
            int z = m ? zb : za;
            if (z == 0)
                continue;
            double e = K_B * ti * uexp(&s); /* Boltzmann at ti, 2 degrees of freedom */
            w *= ti / t * exp(-e / K_B * (1 / t - 1 / ti));
            ec += (double)(float)e; /* the simulator keeps rotational energies as float */
        }
        dsmc_cand cd = dsmc_cand_eval(p, 0, 1, vx, vy, vz, sp);
        double f = w * cd.sg * share(p, q, a, b, ec, clamp);
        sum += f;
        sum2 += f * f;
    }
    double mean = sum / samples, f = a == b ? 0.5 : 1.0;
    *se = f * sqrt((sum2 / samples - mean * mean) / samples);
    return f * mean;
}

/* Which (reaction, temperature) the shipped rates cannot reach: their Arrhenius rate needs
 * a TCE probability above 1 (docs/dsmc.md lists them); 1 bit per temperature. */
static int unreachable[DSMC_MAXR];

static void test_rates(kedr_ctx *ctx)
{
    kedr_dsmc_case c = air5_box(10000, 100, 1);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    const dsmc_params *p = &sim->p;
    const double temps[5] = {5000, 7500, 10000, 15000, 20000};
    const int samples = tu_quick() ? 40000 : 200000;
    double worst = 0, worst_se = 0;
    int reached = 0, capped = 0;
    for (int q = 0; q < c.nreactions; q++) {
        const kedr_dsmc_reaction *re = &c.reaction[q];
        for (int it = 0; it < 5; it++) {
            double t = temps[it], se = 0, se1 = 0;
            double karr = re->a * pow(t, re->eta) * exp(-re->ea / (K_B * t));
            /* the formula unbounded: the TCE constants reproduce every rate */
            double k0 = tce_rate(p, re, q, t, samples, 0, &se);
            double dev = k0 / karr - 1;
            worst = fabs(dev) > worst ? fabs(dev) : worst;
            worst_se = se / karr > worst_se ? se / karr : worst_se;
            TU_CHECK(fabs(dev) <= 0.05, "%s at %g K: TCE formula %.4e vs Arrhenius %.4e "
                     "(%+.2f%%, se %.2f%%)", re->name, t, k0, karr, 100 * dev, 100 * se / karr);
            TU_CHECK(se <= 0.015 * karr * dt_widen(200000.0 / samples), "%s at %g K: standard "
                     "error %.2f%% too large to judge", re->name, t, 100 * se / karr);
            /* the simulator's: probabilities at most 1, shared among the pair's reactions */
            double k1 = tce_rate(p, re, q, t, samples, 1, &se1), dev1 = k1 / karr - 1;
            if (k1 >= 0.99 * k0) { /* no probability needed above 1 */
                reached++;
                TU_CHECK(fabs(dev1) <= 0.05, "%s at %g K: simulator %.4e vs Arrhenius %.4e "
                         "(%+.2f%%)", re->name, t, k1, karr, 100 * dev1);
            } else {
                capped++;
                unreachable[q] |= 1 << it;
                TU_CHECK(k1 < k0, "%s at %g K: capped above the formula", re->name, t);
            }
            if (it == 0 || it == 4 || k1 < 0.99 * k0)
                printf("  rate %-16s %6.0f K: TCE / Arrhenius - 1 = %+.2f%% (se %.2f%%); with "
                       "P <= 1: %+.2f%%\n", re->name, t, 100 * dev, 100 * se / karr, 100 * dev1);
        }
    }
    printf("  rates: worst deviation of the formula %.2f%%, worst standard error %.2f%%; %d of "
           "%d reached with P <= 1, %d need P > 1\n", 100 * worst, 100 * worst_se, reached,
           reached + capped, capped);
    kedr_dsmc_destroy(sim);
}

/* ---- (c), (d) ------------------------------------------------------------------------------- */

typedef struct {
    double e, m, px, py, pz;
    long atoms[2];
    size_t n;
} bath_sums;

static bath_sums bath_state(kedr_dsmc *sim, const kedr_dsmc_case *c)
{
    bath_sums b;
    memset(&b, 0, sizeof b);
    dt_particles q = dt_get(sim);
    uint8_t *lv = tu_host_alloc(q.n ? q.n : 1);
    size_t n = 0;
    TU_OK(kedr_dsmc_get_vib_levels(sim, q.n, &n, lv));
    const dsmc_params *p = &sim->p;
    for (size_t i = 0; i < q.n; i++) {
        int s = q.sp[i];
        double m = p->mass[s];
        b.e += 0.5 * m * (q.vx[i] * q.vx[i] + q.vy[i] * q.vy[i] + q.vz[i] * q.vz[i]) +
               (double)q.erot[i] + dsmc_evib(p, s, lv[i]) + c->formation[s];
        b.m += m;
        b.px += m * q.vx[i];
        b.py += m * q.vy[i];
        b.pz += m * q.vz[i];
        const char *nm = c->species[s].name;
        b.atoms[0] += (strchr(nm, 'N') != NULL) * (strcmp(nm, "N2") == 0 ? 2 : 1);
        b.atoms[1] += (strchr(nm, 'O') != NULL) * (strcmp(nm, "O2") == 0 ? 2 : 1);
    }
    b.n = q.n;
    free(lv);
    dt_free(&q);
    return b;
}

static void test_bath(kedr_ctx *ctx, double temperature)
{
    const char *bk = kedr_backend_name(kedr_ctx_backend(ctx));
    const int repeats = tu_quick() ? 3 : 10;
    const double ppc = tu_quick() ? 4e4 : 1.2e5;
    double expect[DSMC_MAXR] = {0}, got[DSMC_MAXR] = {0}, coll = 0, coll_expect = 0;
    double krate[DSMC_MAXR] = {0}, kse = 0;
    int nreact = 0;
    for (int rep = 0; rep < repeats; rep++) {
        kedr_dsmc_case c = air5_box(temperature, ppc, 100 + (uint64_t)rep);
        /* a twentieth of a mean collision time: the step's reactions change the gas it starts
         * from (its composition, and its energy, which endothermic reactions take) little */
        double tc = 0, tt = 0;
        kedr_dsmc_time_scales(&c, &tc, &tt);
        c.dt = 0.05 * tc;
        nreact = c.nreactions;
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        if (!sim)
            return;
        const dsmc_params *p = &sim->p;
        /* the populations the collisions start from */
        dt_particles q = dt_get(sim);
        double cnt[DSMC_MAXS] = {0};
        for (size_t i = 0; i < q.n; i++)
            cnt[q.sp[i]]++;
        dt_free(&q);
        double volume = (c.hi[0] - c.lo[0]) * (c.hi[1] - c.lo[1]), wv = c.weight / volume;
        for (int r = 0; r < nreact; r++) {
            const kedr_dsmc_reaction *re = &c.reaction[r];
            int a = re->reactants[0], b = re->reactants[1];
            if (rep == 0) /* the rate the model gives (the Arrhenius rate where P <= 1: (b)) */
                krate[r] = tce_rate(p, re, r, temperature, tu_quick() ? 40000 : 100000, 1, &kse);
            expect[r] += krate[r] * wv * c.dt * (a == b ? cnt[a] * (cnt[a] - 1) : cnt[a] * cnt[b]);
        }
        /* the VHS collisions expected: 1/2 N_a N_b W/V <sigma g> dt (twice for unlike pairs) */
        for (int a = 0; a < c.nspecies; a++)
            for (int b = 0; b < c.nspecies; b++) {
                int pr = a * DSMC_MAXS + b;
                double mr = p->mass[a] * p->mass[b] / (p->mass[a] + p->mass[b]);
                double e = p->sigma_e[pr];
                double sg = p->sigma_a[pr] * pow(2 * K_B * temperature / mr, 0.5 * (e + 1)) *
                            tgamma(2 + 0.5 * e) / tgamma(1.5);
                coll_expect += 0.5 * (a == b ? cnt[a] * (cnt[a] - 1) : cnt[a] * cnt[b]) * wv *
                               sg * c.dt;
            }
        /* (sigma g)max three times the start's: the start's bound is met by the fastest
         * pairs, whose collisions would be undercounted in a first step, and they react most */
        float sgm = 0;
        TU_OK(kedr_download(ctx, &sgm, sim->sgmax, sizeof sgm));
        sgm *= 3;
        TU_OK(kedr_upload(ctx, sim->sgmax, &sgm, sizeof sgm));
        bath_sums b0 = bath_state(sim, &c);
        TU_OK(kedr_dsmc_step_stages(sim, KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) |
                                             KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE)));
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        bath_sums b1 = bath_state(sim, &c);
        uint64_t total = 0, diss = 0;
        for (int r = 0; r < nreact; r++) {
            got[r] += (double)st.reaction[r];
            total += st.reaction[r];
            diss += c.reaction[r].nproducts == 3 ? st.reaction[r] : 0;
        }
        coll += (double)st.collisions;
        TU_CHECK(st.reactions == total, "stats: reactions %llu, the sum of the kinds %llu",
                 (unsigned long long)st.reactions, (unsigned long long)total);
        TU_CHECK(st.reactions_lost == 0, "%llu dissociations without room",
                 (unsigned long long)st.reactions_lost);
        TU_CHECK(b1.n == b0.n + diss, "%s: particles %zu -> %zu with %llu dissociations", bk,
                 b0.n, b1.n, (unsigned long long)diss);
        double escale = fabs(b0.e) + 1e-300, pscale = b0.m * sqrt(3 * K_B * temperature / (b0.m / b0.n));
        TU_CHECK(fabs(b1.e - b0.e) <= 1e-11 * escale, "%s: energy %.15e -> %.15e", bk, b0.e, b1.e);
        TU_CHECK(fabs(b1.px - b0.px) <= 1e-11 * pscale && fabs(b1.py - b0.py) <= 1e-11 * pscale &&
                     fabs(b1.pz - b0.pz) <= 1e-11 * pscale,
                 "%s: momentum changed", bk);
        TU_CHECK(fabs(b1.m - b0.m) <= 1e-13 * b0.m, "%s: mass %.15e -> %.15e", bk, b0.m, b1.m);
        TU_CHECK(b1.atoms[0] == b0.atoms[0] && b1.atoms[1] == b0.atoms[1],
                 "%s: atoms N %ld -> %ld, O %ld -> %ld", bk, b0.atoms[0], b1.atoms[0],
                 b0.atoms[1], b1.atoms[1]);
        if (rep == 0) { /* new molecules inside the box, as the next step needs them */
            dt_particles q1 = dt_get(sim);
            int out = 0;
            for (size_t i = 0; i < q1.n; i++)
                out += !(q1.x[i] >= c.lo[0] && q1.x[i] <= c.hi[0] && q1.y[i] >= c.lo[1] &&
                         q1.y[i] <= c.hi[1]);
            dt_free(&q1);
            TU_CHECK(out == 0, "%d particles outside the box", out);
            TU_OK(kedr_dsmc_step(sim)); /* a full step with the new molecules */
        }
        kedr_dsmc_destroy(sim);
    }
    double te = 0, tg = 0;
    int judged = 0;
    for (int r = 0; r < nreact; r++) {
        te += expect[r];
        tg += got[r];
        if (expect[r] < 25)
            continue;
        judged++;
        double z = (got[r] - expect[r]) / sqrt(expect[r]);
        TU_CHECK(fabs(z) <= 5, "%s %g K reaction %d: %g reactions, expected %.1f (%.1f se)", bk,
                 temperature, r, got[r], expect[r], z);
    }
    double dev = tg / te - 1, zc = (coll - coll_expect) / sqrt(coll_expect);
    printf("  heat bath %s %5.0f K: %d reactions judged; all reactions %.0f, expected %.1f "
           "(%+.2f%%); collisions %.0f, expected %.0f (%+.2f%%)\n", bk, temperature, judged, tg,
           te, 100 * dev, coll, coll_expect, 100 * (coll / coll_expect - 1));
    /* within 5 standard errors, and 2% for the gas the step's reactions change */
    TU_CHECK(fabs(tg - te) <= 5 * sqrt(te) + 0.02 * te, "%s %g K: %.0f reactions, expected %.1f",
             bk, temperature, tg, te);
    TU_CHECK(fabs(zc) <= 5 + 0.01 * sqrt(coll_expect), "%s: collisions %.0f, expected %.0f", bk,
             coll, coll_expect);
}

static void test_threads(void)
{
    double *out[2] = {NULL, NULL};
    size_t count[2] = {0, 0};
    uint8_t *spc[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++) {
        kedr_ctx *ctx = tu_ctx(KEDR_BACKEND_CPU);
        ctx->threads = t + 1;
        kedr_dsmc_case c = air5_box(20000, 3000, 5);
        c.nx = c.ny = 8; /* many cells, so both threads collide some */
        c.weight /= 64;
        double tc = 0, tt = 0;
        kedr_dsmc_time_scales(&c, &tc, &tt);
        c.dt = 0.2 * tc;
        kedr_dsmc *sim = NULL;
        TU_OK(kedr_dsmc_create(ctx, &c, &sim));
        for (int s = 0; s < 3 && sim; s++)
            TU_OK(kedr_dsmc_step(sim));
        dt_particles q = dt_get(sim);
        count[t] = q.n;
        out[t] = tu_host_alloc(4 * (q.n ? q.n : 1) * sizeof(double));
        spc[t] = tu_host_alloc(q.n ? q.n : 1);
        for (size_t i = 0; i < q.n; i++) {
            out[t][4 * i] = q.x[i];
            out[t][4 * i + 1] = q.vx[i];
            out[t][4 * i + 2] = q.vy[i];
            out[t][4 * i + 3] = q.erot[i];
            spc[t][i] = q.sp[i];
        }
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        if (t == 0)
            printf("  threads: %zu particles after 3 steps, %llu reactions in the last\n", q.n,
                   (unsigned long long)st.reactions);
        TU_CHECK(st.reactions > 0, "no reactions to order");
        dt_free(&q);
        kedr_dsmc_destroy(sim);
        kedr_ctx_destroy(ctx);
    }
    TU_CHECK(count[0] == count[1] &&
                 memcmp(out[0], out[1], 4 * count[0] * sizeof(double)) == 0 &&
                 memcmp(spc[0], spc[1], count[0]) == 0,
             "1 and 2 threads differ (%zu and %zu particles)", count[0], count[1]);
    for (int t = 0; t < 2; t++) {
        free(out[t]);
        free(spc[t]);
    }
}

/* ---- (e) ------------------------------------------------------------------------------------ */

static const char *formation_ok = "[formation]\nN2 = 0\nO2 = 0\nNO = 10850\nN = 56600\nO = 29750\n";

/* Writes text to a file and loads it as the reactions of the air5 gas: the status, the message
 * in msg. */
static kedr_status load_text(const char *text, char *msg, size_t size)
{
    char path[] = "/tmp/kedr_test_chem_XXXXXX";
    int fd = mkstemp(path);
    TU_CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return KEDR_ERR_IO;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    TU_OK(kedr_dsmc_species_load(species_file, "air5", &c));
    kedr_status s = kedr_dsmc_reactions_load(path, &c);
    snprintf(msg, size, "%s", s == KEDR_OK ? "" : kedr_last_error());
    unlink(path);
    return s;
}

static void test_bad_files(void)
{
    static const struct {
        const char *body, *want;
        int line;
    } bad[] = {
        {"[r]\nequation = N2 + Q -> N + N + Q\nA = 1e-8\neta = 0\nEa = 1e5\n", "'Q' is not in the gas", 2},
        {"[r]\nequation = N2 + O -> NO + O\nA = 1e-12\neta = 0\nEa = 38400\n", "do not balance", 2},
        {"[r]\nequation = N2 + O -> N + N + O + O\nA = 1e-12\neta = 0\nEa = 38400\n", "more than 3 products", 2},
        {"[r]\nequation = N2 -> N + N\nA = 1e-12\neta = 0\nEa = 38400\n", "expected 2 reactants", 2},
        {"[r]\nequation = N + N -> N2\nA = 1e-12\neta = 0\nEa = 0\n", "recombination", 2},
        {"[r]\nequation = N2 + O = NO + N\nA = 1e-12\neta = 0\nEa = 38400\n", "expected 'A + B -> C + D'", 2},
        {"[r]\nequation = N2 + O2 -> N + N + O + O\nA = 1e-12\neta = 0\nEa = 38400\n", "more than 3", 2},
        {"[r]\nequation = NO + O2 -> N + O + O\nA = 1e-12\neta = 0\nEa = 38400\n", "neither reactant", 2},
        {"[r]\nequation = N2 + O -> NO + N\nA = 1e-12\neta = -1\nEa = 30000\n", "below the energy the products need", 2},
        {"[r]\nequation = N2 + O -> NO + N\nA = -1e-12\neta = -1\nEa = 38400\n", "A", 3},
        {"[r]\nequation = N2 + O -> NO + N\nA = 1e-12\neta = -1\nEa = 38400\nEA = 1\n", "unknown key", 6},
        {"[r]\nequation = N2 + O -> NO + N\nA = 1e-12\neta = -1\nEa = 38400\ntype = dissociation\n", "an exchange", 6},
        {"[r]\nequation = N2 + O -> NO + N\nA = 1e-12\neta = -9\nEa = 38400\n", "eta", 4},
        {"[r]\nequation = N2 + O -> NO + N\nA = 1e-12\neta = -2.5\nEa = 38400\n", "eta + zeta/2 + 3/2 > 0", 2},
        {"[r]\nequation = N2 + O -> NO + N\neta = -1\nEa = 38400\n", "A", 0},
    };
    char msg[1024], text[2048];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(text, sizeof text, "%s%s", bad[k].body, formation_ok);
        kedr_status s = load_text(text, msg, sizeof msg);
        char line[32];
        snprintf(line, sizeof line, ":%d:", bad[k].line);
        TU_CHECK(s == KEDR_ERR_PARSE && strstr(msg, bad[k].want) &&
                     (bad[k].line == 0 || strstr(msg, line)),
                 "bad file %zu: status %d, message '%s' (expected '%s' at line %d)", k, (int)s,
                 msg, bad[k].want, bad[k].line);
        if (k == 0)
            printf("  e.g. %s\n", msg);
    }
    /* a species that reacts without its energy of formation, no [formation] at all */
    kedr_status s = load_text("[r]\nequation = N2 + O -> NO + N\nA = 1e-12\neta = -1\nEa = 38400\n"
                              "[formation]\nN2 = 0\nO2 = 0\nN = 56600\nO = 29750\n",
                              msg, sizeof msg);
    TU_CHECK(s == KEDR_ERR_PARSE && strstr(msg, "NO"), "missing NO formation: '%s'", msg);
    s = load_text("[r]\nequation = N2 + O -> NO + N\nA = 1e-12\neta = -1\nEa = 38400\n", msg,
                  sizeof msg);
    TU_CHECK(s == KEDR_ERR_PARSE && strstr(msg, "[formation]"), "no formation: '%s'", msg);
    s = load_text(formation_ok, msg, sizeof msg);
    TU_CHECK(s == KEDR_ERR_PARSE && strstr(msg, "no reactions"), "no reactions: '%s'", msg);
    /* the good one, and a species that is not a formula */
    snprintf(text, sizeof text, "%s%s", "[r]\nequation = N2 + O -> NO + N\nA = 1e-12\neta = -1\n"
             "Ea = 38400\ntype = exchange\n", formation_ok);
    TU_CHECK(load_text(text, msg, sizeof msg) == KEDR_OK, "a good reaction refused: %s", msg);
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    TU_OK(kedr_dsmc_species_load(species_file, "air5", &c));
    snprintf(c.species[2].name, sizeof c.species[2].name, "nitric");
    char path[] = "/tmp/kedr_test_chem_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "[r]\nequation = N2 + O -> nitric + N\nA = 1e-12\neta = -1\nEa = 38400\n"
               "[formation]\nN2 = 0\nO2 = 0\nnitric = 10850\nN = 56600\nO = 29750\n");
    fclose(f);
    s = kedr_dsmc_reactions_load(path, &c);
    TU_CHECK(s == KEDR_ERR_PARSE && strstr(kedr_last_error(), "not a chemical formula"),
             "a name that is not a formula: '%s'", kedr_last_error());
    unlink(path);

    /* cases built in code */
    kedr_dsmc_case g = air5_box(300, 10, 1);
    TU_OK(kedr_dsmc_case_check(&g));
    TU_CHECK(g.nreactions == 19, "the shipped file: %d reactions", g.nreactions);
    kedr_dsmc_case b = g;
    b.reaction[3].products[0] = 1; /* O2 instead of N: atoms off */
    TU_CHECK(kedr_dsmc_case_check(&b) == KEDR_ERR_INVALID && strstr(kedr_last_error(), "balance"),
             "unbalanced reaction in code: %s", kedr_last_error());
    b = g;
    b.reaction[0].reactants[1] = 9;
    TU_CHECK(kedr_dsmc_case_check(&b) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "species index 9"),
             "species index out of range: %s", kedr_last_error());
    b = g;
    b.species[3].mass *= 1.05; /* N: N2 -> N + N no longer keeps mass */
    TU_CHECK(kedr_dsmc_case_check(&b) == KEDR_ERR_INVALID && strstr(kedr_last_error(), "mass"),
             "masses that do not balance: %s", kedr_last_error());
    b = g;
    b.reaction[0].nproducts = 1;
    TU_CHECK(kedr_dsmc_case_check(&b) == KEDR_ERR_INVALID && strstr(kedr_last_error(), "products"),
             "one product: %s", kedr_last_error());
    b = g;
    b.formation[2] = NAN;
    TU_CHECK(kedr_dsmc_case_check(&b) == KEDR_ERR_INVALID && strstr(kedr_last_error(), "formation"),
             "NaN formation: %s", kedr_last_error());
    /* the shipped case file */
    char casef[1400];
    snprintf(casef, sizeof casef, "%s/air5-bath.ini", case_dir);
    kedr_dsmc_case k;
    memset(&k, 0, sizeof k);
    TU_OK(kedr_dsmc_case_load(casef, &k));
    TU_CHECK(k.nreactions == 19 && k.nspecies == 5, "air5-bath.ini: %d reactions, %d species",
             k.nreactions, k.nspecies);
}

int main(void)
{
    find_files();
    kedr_ctx *cpu = tu_ctx(KEDR_BACKEND_CPU);
    test_bad_files();
    test_conservation(cpu);
    test_rates(cpu);
    kedr_ctx_destroy(cpu);
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        test_bath(ctx, 10000);
        test_bath(ctx, 20000);
        kedr_ctx_destroy(ctx);
    }
    test_threads();
    return tu_finish("test_dsmc_chem");
}
