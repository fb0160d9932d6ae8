/* The chemistry of kedr dsmc (src/dsmc/chem.c, dsmc_kernels.h: dsmc_react), with the shipped
 * five-species air (cases/dsmc/species.ini [air5], cases/dsmc/air5.reactions):
 *  (a) energy and momentum: random pairs of every species (thermal to 30 eV relative energies,
 *      random rotational energies and vibrational levels) selected as the simulator selects them
 *      (dsmc_react_select) and collided through dsmc_cand_collide with the chemistry on; every
 *      reaction of the file occurs, pairs whose reaction cross-section exceeds their collision
 *      cross-section among them, and each collision keeps its
 *      total energy (kinetic + rotational + vibrational + energy of formation, the new molecule
 *      of a dissociation included) to 1e-13 of the pair's kinetic and internal energy, its
 *      momentum to 1e-13 of sum m |v| and its mass to 1e-15, its atoms exactly; and dsmc_react's
 *      choice (test_choice): an NO + O pair at a collision energy with reaction probabilities
 *      summing to S < 1 and at one with S > 1 makes each reaction in the share P_r / max(1, S)
 *      of 2e4 tries and none in 1 - S, within 5 standard errors;
 *  (b) rates: for every reaction and T = 5000, 7500, 10000, 15000 and 20000 K, a Monte Carlo
 *      over equilibrium pairs (Maxwellian velocities and Boltzmann rotational energies, drawn at
 *      a higher temperature and reweighted so that the rare pairs above E_a are sampled) of the
 *      simulator's selection value max(sigma, sigma_R) g (dsmc_cand_eval, dsmc_react_select)
 *      times the share of the collisions dsmc_react's choice gives the reaction, and of the TCE
 *      formula sigma g P written out here: both (1/2 of them for like reactants) within 5% of
 *      the Arrhenius rate the file gives for all 95 (reaction, T), the standard errors below
 *      1.5%, including the reactions whose probabilities sum above 1 (docs/dsmc.md);
 *  (c) heat baths on each back end: one cell of 1.2e5 molecules of the five species at 10000,
 *      15000 and 20000 K, a short collision step repeated from fresh equilibrium velocities with
 *      (sigma g)max a bound the step does not raise (test_bath): each reaction's count against
 *      its Arrhenius rate k(T) N_A N_B W dt / V (N_A (N_A - 1) for like reactants), within 5
 *      standard errors (Poisson) where 25 or more are expected, the sum within 5 of them plus
 *      2%, the collisions against the pairs' selection rates; over the step the particles'
 *      total energy, momentum and mass are kept (new atoms included), the atoms of each element
 *      counted the same, the particle count grown by the dissociations; the stats count the
 *      reactions;
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
#include "dsmc/chem.h"
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
    int bad_e = 0, bad_p = 0, bad_m = 0, bad_a = 0, bad_v = 0, big = 0;
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
        if (p->rx.pair_reacts[cd.pair]) /* as the selection leaves it (dsmc_try_pair) */
            big += dsmc_react_select(p, &cd, erot);
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
    printf("  conservation: %d collisions (%d with sigma_R > sigma), %llu reactions (%d of the "
           "%d kinds); worst relative energy change %.2e\n", collisions, big,
           (unsigned long long)total, seen, p->rx.nreact, worst);
    TU_CHECK(big > 0, "no collision with a reaction cross-section above the collision's");
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

/* Reaction q's TCE probability P_q = sigma_R / sigma at collision energy ec, written out here
 * (the formula of docs/dsmc.md with the constants of dsmc_chem_params), unbounded. */
static double tce_prob(const dsmc_params *p, int q, double ec)
{
    double d = ec - p->rx.re_ea[q];
    return d > 0 ? exp(p->rx.re_lc[q] + p->rx.re_x[q] * log(d) - p->rx.re_y[q] * log(ec)) : 0.0;
}

/* The share of the selected collisions of species a and b at energy ec that make reaction q, as
 * dsmc_react chooses: one uniform u times M = max(1, S) (S the pair's sum of P, file order)
 * against the running sum of P, so (min(sum up to q, M) - min(sum before q, M)) / M. */
static double share(const dsmc_params *p, int q, int a, int b, double ec)
{
    double s = 0, before = 0, upto = 0;
    for (int t = 0; t < p->rx.nreact; t++) {
        if (!((p->rx.re_a[t] == a && p->rx.re_b[t] == b) || (p->rx.re_a[t] == b && p->rx.re_b[t] == a)))
            continue;
        if (t == q)
            before = s;
        s += tce_prob(p, t, ec);
        if (t == q)
            upto = s;
    }
    double m = s > 1 ? s : 1;
    return ((upto < m ? upto : m) - (before < m ? before : m)) / m;
}

/* A Monte Carlo over equilibrium pairs of species a and b at temperature t (Maxwellian relative
 * velocities and Boltzmann rotational energies), drawn at ti >= t and reweighted, so that the
 * rare pairs above an activation energy are sampled: the means of
 *   k0: sigma g P_q, the TCE formula of reaction q (q < 0: none) written out here (tce_prob);
 *   k1: sigma_sel g share_q, the simulator's: its selection value (dsmc_cand_eval,
 *       dsmc_react_select) and the share of dsmc_react's choice;
 *   sel: sigma_sel g, the rate coefficient of the simulator's accepted collisions;
 * with their standard errors (k0 and k1 halved for like reactants: one event per pair). */
typedef struct {
    double k0, k1, sel, se0, se1, se_sel;
} pair_mc;

static pair_mc pair_sample(const dsmc_params *p, int a, int b, int q, double t, double ti,
                           int samples, uint64_t seed)
{
    double ma = p->mass[a], mb = p->mass[b], mr = ma * mb / (ma + mb);
    int za = p->rot_dof[a], zb = p->rot_dof[b];
    double vx[2] = {0, 0}, vy[2] = {0, 0}, vz[2] = {0, 0};
    uint8_t sp[2] = {(uint8_t)a, (uint8_t)b};
    double sum[3] = {0, 0, 0}, sum2[3] = {0, 0, 0}, sig = sqrt(K_B * ti / mr);
    uint64_t s = seed;
    for (int k = 0; k < samples; k++) {
        vx[0] = sig * gauss(&s);
        vy[0] = sig * gauss(&s);
        vz[0] = sig * gauss(&s);
        double g2 = vx[0] * vx[0] + vy[0] * vy[0] + vz[0] * vz[0];
        /* weight: the Maxwellian of relative velocities at t over that at ti */
        double w = pow(ti / t, 1.5) * exp(-0.5 * mr * g2 / K_B * (1 / t - 1 / ti));
        double ec = 0.5 * mr * g2;
        float er[2] = {0.0f, 0.0f};
        for (int m = 0; m < 2; m++) {
            int z = m ? zb : za;
            if (z == 0)
                continue;
            double e = K_B * ti * uexp(&s); /* Boltzmann at ti, 2 degrees of freedom */
            w *= ti / t * exp(-e / K_B * (1 / t - 1 / ti));
            er[m] = (float)e; /* the simulator keeps rotational energies as float */
            ec += (double)er[m];
        }
        dsmc_cand cd = dsmc_cand_eval(p, 0, 1, vx, vy, vz, sp);
        double sg = cd.sg;
        if (p->rx.pair_reacts[cd.pair] && dsmc_react_select(p, &cd, er))
            cd.sg *= cd.rsum;
        double f[3] = {q >= 0 ? w * sg * tce_prob(p, q, ec) : 0.0,
                       q >= 0 ? w * cd.sg * share(p, q, a, b, ec) : 0.0, w * cd.sg};
        for (int m = 0; m < 3; m++) {
            sum[m] += f[m];
            sum2[m] += f[m] * f[m];
        }
    }
    double mean[3], se[3];
    for (int m = 0; m < 3; m++) {
        mean[m] = sum[m] / samples;
        se[m] = sqrt(fmax(sum2[m] / samples - mean[m] * mean[m], 0.0) / samples);
    }
    double h = a == b ? 0.5 : 1.0;
    pair_mc r = {h * mean[0], h * mean[1], mean[2], h * se[0], h * se[1], se[2]};
    return r;
}

/* Reaction q's rate coefficients at temperature t (pair_sample, drawn at a temperature where
 * the pairs above E_a are common). */
static pair_mc tce_rate(const dsmc_params *p, const kedr_dsmc_reaction *re, int q, double t,
                        int samples)
{
    int za = p->rot_dof[re->reactants[0]], zb = p->rot_dof[re->reactants[1]];
    double shape = 2.2 + 0.5 * (za + zb), ti = re->ea / (K_B * shape);
    return pair_sample(p, re->reactants[0], re->reactants[1], q, t, ti > t ? ti : t, samples,
                       1234567 + 1000 * (uint64_t)q + (uint64_t)t);
}

/* dsmc_react's choice itself: a pair of NO and O (three reactions: dissociation of NO by O,
 * NO + O -> O2 + N, and none) at a collision energy where their probabilities sum to S < 1 and
 * at one where S > 1, reacted many times from the same state with different random streams:
 * reaction r in a share P_r / max(1, S) of them, none in 1 - S (S < 1), within 5 standard
 * errors of the binomial count. */
static void test_choice(kedr_ctx *ctx)
{
    kedr_dsmc_case c = air5_box(10000, 100, 1);
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    const dsmc_params *p = &sim->p;
    const int no = dsmc_species_index(&c, "NO"), o = dsmc_species_index(&c, "O");
    const double mr = p->mass[no] * p->mass[o] / (p->mass[no] + p->mass[o]);
    enum { ROOM = 4 };
    double x[2 + ROOM], y[2 + ROOM], vx[2 + ROOM], vy[2 + ROOM], vz[2 + ROOM];
    float erot[2 + ROOM];
    uint8_t vib[2 + ROOM], spc[2 + ROOM];
    uint32_t parent[ROOM];
    /* the energies: S from 0.3 to 0.7, and from 2 to 6 (scanning up from E_a of NO + O) */
    double es[2] = {0, 0};
    for (double e = 75500 * K_B; e < 1e7 * K_B && !(es[0] > 0 && es[1] > 0); e *= 1.01) {
        double sum = dsmc_react_sum(p, no, o, e);
        if (!(es[0] > 0) && sum > 0.3 && sum < 0.7)
            es[0] = e;
        if (!(es[1] > 0) && sum > 2 && sum < 6)
            es[1] = e;
    }
    TU_CHECK(es[0] > 0 && es[1] > 0, "NO + O: no energies with S in (0.3, 0.7) and (2, 6)");
    const int trials = tu_quick() ? 5000 : 20000;
    for (int k = 0; k < 2 && es[k] > 0; k++) {
        uint64_t counts[DSMC_MAXR + 2] = {0}, before[DSMC_MAXR] = {0};
        double seen[DSMC_MAXR + 1] = {0};
        double sum = 0, ec = 0;
        for (int n = 0; n < trials; n++) {
            memset(counts + DSMC_MAXR, 0, 2 * sizeof *counts); /* the slots, lost ones */
            spc[0] = (uint8_t)no;
            spc[1] = (uint8_t)o;
            x[0] = x[1] = y[0] = y[1] = 5e-4;
            vx[0] = sqrt(2 * es[k] / mr);
            vx[1] = vy[0] = vy[1] = vz[0] = vz[1] = 0;
            erot[0] = erot[1] = 0;
            vib[0] = vib[1] = 0;
            dsmc_chem ch = {x, y, NULL, vx, vy, vz, erot, spc, vib, parent,
                            &counts[DSMC_MAXR + 1], counts, 2, ROOM};
            dsmc_cand cd = dsmc_cand_eval(p, 0, 1, vx, vy, vz, spc);
            dsmc_react_select(p, &cd, erot);
            sum = cd.rsum;
            ec = dsmc_cand_ec(p, &cd, erot);
            dsmc_rng r = dsmc_candidate_rng(p, (uint32_t)n, (uint32_t)k);
            memcpy(before, counts, sizeof before);
            int made = dsmc_react(p, &cd, &r, &ch, vx, vy, vz, erot, vib), which = DSMC_MAXR;
            for (int t = 0; t < p->rx.nreact; t++)
                if (counts[t] != before[t])
                    which = t;
            TU_CHECK(made == (which < DSMC_MAXR), "dsmc_react returned %d, reaction %d", made,
                     which);
            seen[which]++;
        }
        double m = sum > 1 ? sum : 1, left = 1;
        for (int t = 0; t <= p->rx.nreact; t++) {
            int fwd, none = t == p->rx.nreact, at = none ? DSMC_MAXR : t;
            if (!none && !dsmc_react_of(p, t, no, o, &fwd)) {
                TU_CHECK(seen[t] == 0, "reaction %d of another pair made", t);
                continue;
            }
            double f = none ? fmax(left, 0.0) : tce_prob(p, t, ec) / m;
            left -= none ? 0 : f;
            const char *name = none ? "none" : c.reaction[t].name;
            double sd = sqrt(trials * f * (1 - f));
            printf("  choice NO + O, S = %.3f: %-14s %6.0f of %d, expected %8.1f\n", sum, name,
                   seen[at], trials, trials * f);
            TU_CHECK(fabs(seen[at] - trials * f) <= 5 * sd + 1, "S = %.3f: %s %g times, expected "
                     "%.1f", sum, name, seen[at], trials * f);
        }
    }
    kedr_dsmc_destroy(sim);
}

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
    double worst = 0, worst1 = 0, worst_se = 0;
    int within = 0;
    printf("  rates, (k / k_Arrhenius - 1) in %%: the TCE formula, the simulator's (se)\n");
    printf("  %-16s %23s %23s %23s %23s %23s\n", "reaction", "5000 K", "7500 K", "10000 K",
           "15000 K", "20000 K");
    for (int q = 0; q < c.nreactions; q++) {
        const kedr_dsmc_reaction *re = &c.reaction[q];
        char line[512];
        int at = snprintf(line, sizeof line, "  %-16s", re->name);
        for (int it = 0; it < 5; it++) {
            double t = temps[it];
            double karr = re->a * pow(t, re->eta) * exp(-re->ea / (K_B * t));
            /* the formula: the TCE constants reproduce every rate; the simulator's: the larger
             * of the two cross-sections selects, dsmc_react shares */
            pair_mc m = tce_rate(p, re, q, t, samples);
            double k0 = m.k0, se = m.se0, dev = k0 / karr - 1;
            double k1 = m.k1, se1 = m.se1, dev1 = k1 / karr - 1;
            worst = fabs(dev) > worst ? fabs(dev) : worst;
            worst1 = fabs(dev1) > worst1 ? fabs(dev1) : worst1;
            worst_se = se1 / karr > worst_se ? se1 / karr : worst_se;
            worst_se = se / karr > worst_se ? se / karr : worst_se;
            within += fabs(dev1) <= 0.05;
            TU_CHECK(fabs(dev) <= 0.05, "%s at %g K: TCE formula %.4e vs Arrhenius %.4e "
                     "(%+.2f%%, se %.2f%%)", re->name, t, k0, karr, 100 * dev, 100 * se / karr);
            TU_CHECK(fabs(dev1) <= 0.05, "%s at %g K: simulator %.4e vs Arrhenius %.4e "
                     "(%+.2f%%, se %.2f%%)", re->name, t, k1, karr, 100 * dev1, 100 * se1 / karr);
            TU_CHECK(se <= 0.015 * karr * dt_widen(200000.0 / samples) &&
                         se1 <= 0.015 * karr * dt_widen(200000.0 / samples),
                     "%s at %g K: standard error %.2f%%, %.2f%% too large to judge", re->name, t,
                     100 * se / karr, 100 * se1 / karr);
            at += snprintf(line + at, sizeof line - (size_t)at, "  %+6.2f %+6.2f (%4.2f)",
                           100 * dev, 100 * dev1, 100 * se1 / karr);
        }
        printf("%s\n", line);
    }
    printf("  rates: worst deviation of the formula %.2f%%, of the simulator %.2f%%, worst "
           "standard error %.2f%%; %d of %d (reaction, T) within 5%%\n", 100 * worst,
           100 * worst1, 100 * worst_se, within, 5 * c.nreactions);
    TU_CHECK(within == 5 * c.nreactions, "%d of %d rates within 5%%", within, 5 * c.nreactions);
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

/* An upper bound on the selection value sigma_sel g = max(sigma, sigma_R) g of any pair of the
 * particles q: sigma g grows with g, and for a given collision energy E the largest sigma_R g
 * has all of E translational, so the largest of max(1, P_sum(E)) sigma g over E up to the
 * largest translational plus twice the largest rotational energy, on a fine grid, widened. */
static double sel_bound(const dsmc_params *p, const dt_particles *q)
{
    double v2 = 0, er = 0, best = 0;
    for (size_t i = 0; i < q->n; i++) {
        double w = q->vx[i] * q->vx[i] + q->vy[i] * q->vy[i] + q->vz[i] * q->vz[i];
        v2 = w > v2 ? w : v2;
        er = q->erot[i] > er ? q->erot[i] : er;
    }
    for (int a = 0; a < p->nspecies; a++)
        for (int b = 0; b < p->nspecies; b++) {
            int pr = a * DSMC_MAXS + b;
            double mr = p->mass[a] * p->mass[b] / (p->mass[a] + p->mass[b]);
            double emax = 0.5 * mr * 4 * v2 + 2 * er, e0 = 1e-3 * emax;
            for (int k = 0; k <= 1000; k++) {
                double e = e0 * pow(emax / e0, k / 1000.0), g = sqrt(2 * e / mr);
                double sg = p->sigma_a[pr] * pow(g, p->sigma_e[pr]) * g, sr = 1;
                if (p->rx.pair_reacts[pr])
                    sr = dsmc_react_sum(p, a, b, e);
                sg *= sr > 1 ? sr : 1;
                best = sg > best ? sg : best;
            }
        }
    return 1.05 * best;
}

/* One cell of ppc particles of the five species at temperature T and one collision step of
 * dt = frac tau (tau the mean collision time), repeated: before each, the molecules (their
 * species, positions and vibrational levels those of the fill) get new Maxwellian velocities and
 * Boltzmann rotational energies at T, and (sigma g)max a bound on every pair's selection value
 * (sel_bound: the step never raises it, so it selects at the exact rates). The step is short
 * because reactions at rates near the collision rate eat the tail of energetic pairs they come
 * from, and endothermic ones cool the gas. Every reaction's count against its Arrhenius rate
 * k(T) N_A N_B W dt / V (N_A (N_A - 1) for like reactants), within 5 standard errors where 25 or
 * more are expected, all together within 5 of them plus 2%; the collisions (all accepted
 * candidates, reacting ones included) against the selection rates <sigma_sel g> (pair_sample);
 * energy, momentum, mass and atoms kept, the particle count grown by the dissociations. */
static void test_bath(kedr_ctx *ctx, double temperature, double frac, int repeats)
{
    const char *bk = kedr_backend_name(kedr_ctx_backend(ctx));
    const double ppc = tu_quick() ? 4e4 : 1.2e5;
    repeats = tu_quick() ? repeats / 4 : repeats;
    double expect[DSMC_MAXR] = {0}, got[DSMC_MAXR] = {0}, coll = 0, coll_expect = 0;
    double coll_var = 0, krate[DSMC_MAXR] = {0};
    double sel[DSMC_MAXS][DSMC_MAXS], sel_se[DSMC_MAXS][DSMC_MAXS];
    kedr_dsmc_case c = air5_box(temperature, ppc, 100);
    double tc = 0, tt = 0;
    kedr_dsmc_time_scales(&c, &tc, &tt);
    c.dt = frac * tc;
    const int nreact = c.nreactions;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    const dsmc_params *p = &sim->p;
    /* the simulator's selection rate of each pair of species */
    for (int a = 0; a < c.nspecies; a++)
        for (int b = a; b < c.nspecies; b++) {
            pair_mc m = pair_sample(p, a, b, -1, temperature, temperature,
                                    tu_quick() ? 20000 : 50000, 777 + 10 * (uint64_t)a + (uint64_t)b);
            sel[a][b] = sel[b][a] = m.sel;
            sel_se[a][b] = sel_se[b][a] = m.se_sel;
        }
    for (int r = 0; r < nreact; r++) { /* the Arrhenius rates ((b): the model's within 1.2%) */
        const kedr_dsmc_reaction *re = &c.reaction[r];
        krate[r] = re->a * pow(temperature, re->eta) * exp(-re->ea / (K_B * temperature));
    }
    dt_particles q = dt_get(sim); /* the fill: species, positions */
    size_t n0 = 0;
    uint8_t *lv = tu_host_alloc(q.n ? q.n : 1);
    TU_OK(kedr_dsmc_get_vib_levels(sim, q.n, &n0, lv));
    double cnt[DSMC_MAXS] = {0};
    for (size_t i = 0; i < q.n; i++)
        cnt[q.sp[i]]++;
    double volume = (c.hi[0] - c.lo[0]) * (c.hi[1] - c.lo[1]), wv = c.weight / volume;
    uint64_t s = 4242 + (uint64_t)temperature;
    for (int rep = 0; rep < repeats; rep++) {
        for (size_t i = 0; i < q.n; i++) {
            double sig = sqrt(K_B * temperature / p->mass[q.sp[i]]);
            q.vx[i] = sig * gauss(&s);
            q.vy[i] = sig * gauss(&s);
            q.vz[i] = sig * gauss(&s);
            q.erot[i] = p->rot_dof[q.sp[i]] ? (float)(K_B * temperature * uexp(&s)) : 0.0f;
        }
        TU_OK(kedr_dsmc_set_particles(sim, q.n, q.x, q.y, q.vx, q.vy, q.vz, q.erot, q.sp));
        TU_OK(kedr_dsmc_set_vib_levels(sim, q.n, lv));
        float sgm = dsmc_float_up(sel_bound(p, &q)), sgm1 = 0;
        TU_OK(kedr_upload(ctx, sim->sgmax, &sgm, sizeof sgm));
        for (int r = 0; r < nreact; r++) {
            int a = c.reaction[r].reactants[0], b = c.reaction[r].reactants[1];
            expect[r] += krate[r] * wv * c.dt * (a == b ? cnt[a] * (cnt[a] - 1) : cnt[a] * cnt[b]);
        }
        /* the collisions expected: 1/2 N_a N_b W/V <sigma_sel g> dt over ordered pairs */
        for (int a = 0; a < c.nspecies; a++)
            for (int b = 0; b < c.nspecies; b++) {
                double np = 0.5 * (a == b ? cnt[a] * (cnt[a] - 1) : cnt[a] * cnt[b]) * wv * c.dt;
                coll_expect += np * sel[a][b];
                coll_var += np * np * sel_se[a][b] * sel_se[a][b];
            }
        bath_sums b0 = bath_state(sim, &c);
        TU_OK(kedr_dsmc_step_stages(sim, KEDR_DSMC_STAGE_BIT(KEDR_DSMC_INDEX) |
                                             KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE)));
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        TU_OK(kedr_download(ctx, &sgm1, sim->sgmax, sizeof sgm1));
        TU_CHECK(sgm1 == sgm, "%s %g K: (sigma g)max %.6e raised to %.6e: the bound failed", bk,
                 temperature, (double)sgm, (double)sgm1);
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
        if (rep == repeats - 1) { /* new molecules inside the box, as the next step needs them */
            dt_particles q1 = dt_get(sim);
            int out = 0;
            for (size_t i = 0; i < q1.n; i++)
                out += !(q1.x[i] >= c.lo[0] && q1.x[i] <= c.hi[0] && q1.y[i] >= c.lo[1] &&
                         q1.y[i] <= c.hi[1]);
            dt_free(&q1);
            TU_CHECK(out == 0, "%d particles outside the box", out);
            TU_OK(kedr_dsmc_step(sim)); /* a full step with the new molecules */
        }
    }
    free(lv);
    dt_free(&q);
    kedr_dsmc_destroy(sim);
    double te = 0, tg = 0;
    int judged = 0;
    for (int r = 0; r < nreact; r++) {
        te += expect[r];
        tg += got[r];
        double z = (got[r] - expect[r]) / sqrt(expect[r] > 0 ? expect[r] : 1);
        printf("  heat bath %s %5.0f K %-16s %6.0f, Arrhenius %8.1f (%+6.1f%%, %+5.1f se)\n", bk,
               temperature, c.reaction[r].name, got[r], expect[r],
               100 * (got[r] / expect[r] - 1), z);
        if (expect[r] < 25)
            continue;
        judged++;
        TU_CHECK(fabs(z) <= 5, "%s %g K %s: %g reactions, expected %.1f (%.1f se)", bk,
                 temperature, c.reaction[r].name, got[r], expect[r], z);
    }
    double dev = tg / te - 1, cse = sqrt(coll_expect + coll_var), zc = (coll - coll_expect) / cse;
    printf("  heat bath %s %5.0f K, %d steps of %.3g tau: %d reactions judged; all reactions "
           "%.0f, Arrhenius %.1f (%+.2f%%); collisions %.0f, expected %.0f (%+.2f%%, %+.1f se)\n",
           bk, temperature, repeats, frac, judged, tg, te, 100 * dev, coll, coll_expect,
           100 * (coll / coll_expect - 1), zc);
    /* within 5 standard errors, and 2% for the gas the step's reactions change */
    TU_CHECK(fabs(tg - te) <= 5 * sqrt(te) + 0.02 * te, "%s %g K: %.0f reactions, expected %.1f",
             bk, temperature, tg, te);
    TU_CHECK(fabs(zc) <= 5, "%s %g K: collisions %.0f, expected %.0f (%.1f se)", bk, temperature,
             coll, coll_expect, zc);
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
    test_choice(cpu);
    test_rates(cpu);
    kedr_ctx_destroy(cpu);
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        if (list[b] == KEDR_BACKEND_CPU)
            ctx->threads = 1; /* one cell: a second thread would only wait */
        test_bath(ctx, 10000, 0.02, 40);
        test_bath(ctx, 15000, 0.005, 40);
        test_bath(ctx, 20000, 0.002, 40);
        kedr_ctx_destroy(ctx);
    }
    test_threads();
    return tu_finish("test_dsmc_chem");
}
