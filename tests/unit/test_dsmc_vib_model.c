/* The vibrational model of kedr dsmc (src/dsmc/dsmc_kernels.h), one collision at a time, and the
 * species data that feed it:
 *  (a) energy: random N2, O2, NO and Ar pairs (every collision exchanging, Z_vib = Z_rot = 1, and
 *      a second gas with Millikan-White Z_vib), from thermal to 20 eV relative energies and
 *      levels up to the cap, keep each collision's total energy (translational + rotational +
 *      vibrational) to 1e-13 of the pair's and its momentum to 1e-13 of m |v|; levels stay in
 *      0..255 and the translational energy left is never negative;
 *  (b) the quantised Larsen-Borgnakke draw (dsmc_vib_one at a fixed collision energy) against
 *      the exact P(i) proportional to (E_c - i k theta)^(b - 1) for i k theta <= E_c, every level
 *      within 5 standard errors of 4e5 draws, and the energy it returns exact;
 *  (c) the equilibrium draw (dsmc_vib_equilibrium) against the harmonic oscillator's
 *      P(i) = (1 - x) x^i, x = exp(-theta / T), and its mean against k theta / (exp(theta/T) - 1);
 *  (d) Millikan-White's Z (dsmc_zvib) against the formula, the constant as given, never below 1;
 *  (e) bad species data refused with the file, line and key: Z_vib without theta_v, theta_v
 *      without a relaxation number, an atom with theta_v, both Z forms, a C1 without C2, values
 *      out of range; a case built in code with bad values refused by kedr_dsmc_case_check; the
 *      shipped species file's N2, O2 and NO vibrate and Ar does not; seed-test1.ini
 *      ([species] vibration = no) does not vibrate and plate-n2-vib.ini does. */
#include "validation/test_dsmc_util.h"

#include "dsmc/sim.h"

#include <float.h>
#include <unistd.h>

/* A 2D box of the given species (no steps are run: only its dsmc_params are used). */
static kedr_dsmc *params_sim(kedr_ctx *ctx, const kedr_dsmc_species *sp, int ns)
{
    kedr_dsmc_case c = dt_box(1e-3, 2, 1e20, 300, 4, 1e-7);
    c.nspecies = ns;
    for (int k = 0; k < ns; k++) {
        c.species[k] = sp[k];
        c.fraction[k] = 1.0 / ns;
    }
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    return sim;
}

static kedr_dsmc_species vib_species(const char *name, double mass, double d, double omega,
                                     double theta, double zv, double c1, double c2)
{
    kedr_dsmc_species s = {"", mass, d, omega, 273, 1.0, d, 2, 1.0, theta, zv, c1, c2};
    snprintf(s.name, sizeof s.name, "%s", name);
    return s;
}

static double pair_energy(const dsmc_params *p, const uint8_t *sp, const double *vx,
                          const double *vy, const double *vz, const float *erot,
                          const uint8_t *vib, int i, int j)
{
    double e = 0;
    int q[2] = {i, j};
    for (int t = 0; t < 2; t++) {
        int k = q[t], s = sp[k];
        e += 0.5 * p->mass[s] * (vx[k] * vx[k] + vy[k] * vy[k] + vz[k] * vz[k]) +
             (double)erot[k] + dsmc_evib(p, s, vib[k]);
    }
    return e;
}

static void test_energy(kedr_ctx *ctx, int millikan_white)
{
    kedr_dsmc_species sp[4] = {
        vib_species("N2", 46.5e-27, 4.17e-10, 0.74, 3371, 1, 0, 0),
        vib_species("O2", 53.12e-27, 4.07e-10, 0.77, 2256, 1, 0, 0),
        vib_species("NO", 49.88e-27, 4.20e-10, 0.79, 2719, 1, 0, 0),
        {"Ar", 66.3e-27, 4.17e-10, 0.81, 273, 1.0, 4.17e-10, 0, 1, 0, 0, 0, 0}};
    if (millikan_white)
        for (int k = 0; k < 3; k++) {
            sp[k].z_vib = 0;
            sp[k].zv_c1 = 10.8;
            sp[k].zv_c2 = 217.8;
        }
    kedr_dsmc *sim = params_sim(ctx, sp, 4);
    if (!sim)
        return;
    const dsmc_params *p = &sim->p;
    TU_CHECK(p->vib == 1, "the gas should vibrate");
    enum { N = 64 };
    double x[N] = {0}, y[N] = {0}, vx[N], vy[N], vz[N];
    float erot[N];
    uint8_t vib[N], spc[N];
    uint64_t s = 12345;
    const int collisions = tu_quick() ? 20000 : 200000;
    int bad_e = 0, bad_p = 0, bad_t = 0, exchanged = 0, capped = 0;
    double worst = 0;
    for (int n = 0; n < collisions; n++) {
        if (n % 1000 == 0) { /* new molecules: speeds from 100 m/s to 20 eV pairs */
            for (int k = 0; k < N; k++) {
                s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                double u = (double)(s >> 11) * 0x1p-53;
                spc[k] = (uint8_t)(k % 4);
                double v = 100 * pow(100.0, u);
                vx[k] = v * cos(7.0 * k + n);
                vy[k] = v * sin(3.0 * k + n);
                vz[k] = v * cos(5.0 * k);
                erot[k] = spc[k] == 3 ? 0.0f : (float)(K_B * 3000 * u * (k % 7));
                vib[k] = spc[k] == 3 ? 0 : (uint8_t)((k * 37 + n) % 256);
            }
        }
        int i = n % N, j = (n * 7 + 3) % N;
        if (j == i)
            j = (j + 1) % N;
        dsmc_cand c = dsmc_cand_eval(p, (uint32_t)i, (uint32_t)j, vx, vy, vz, spc);
        if (!(c.g > 0))
            continue;
        double e0 = pair_energy(p, spc, vx, vy, vz, erot, vib, i, j);
        double mi = p->mass[spc[i]], mj = p->mass[spc[j]];
        double p0[3] = {mi * vx[i] + mj * vx[j], mi * vy[i] + mj * vy[j], mi * vz[i] + mj * vz[j]};
        double scale = mi * sqrt(vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]) +
                       mj * sqrt(vx[j] * vx[j] + vy[j] * vy[j] + vz[j] * vz[j]);
        uint8_t l0[2] = {vib[i], vib[j]};
        dsmc_rng r = dsmc_candidate_rng(p, (uint32_t)n, 0);
        double sep = 0;
        /* Z_vib at the temperature of the N molecules as one cell (dsmc_vib_tcell) */
        double tcell = dsmc_vib_tcell(p, 0, N, vx, vy, vz, spc, vib);
        dsmc_cand_collide(p, &c, &r, NULL, tcell, x, y, NULL, vx, vy, vz, erot, vib, NULL, &sep,
                          NULL);
        double e1 = pair_energy(p, spc, vx, vy, vz, erot, vib, i, j);
        double rel = fabs(e1 - e0) / e0;
        worst = rel > worst ? rel : worst;
        bad_e += !(rel <= 1e-13);
        double p1[3] = {mi * vx[i] + mj * vx[j], mi * vy[i] + mj * vy[j], mi * vz[i] + mj * vz[j]};
        for (int d = 0; d < 3; d++)
            bad_p += !(fabs(p1[d] - p0[d]) <= 1e-13 * scale);
        bad_t += !isfinite(vx[i]) || !isfinite(vx[j]) || erot[i] < 0 || erot[j] < 0;
        exchanged += vib[i] != l0[0] || vib[j] != l0[1];
        capped += vib[i] == DSMC_VIB_MAX || vib[j] == DSMC_VIB_MAX;
    }
    printf("  energy (%s): %d collisions, %d changed a level, %d at the cap; worst relative "
           "energy change %.2e\n", millikan_white ? "Millikan-White" : "Z_vib = 1", collisions,
           exchanged, capped, worst);
    TU_CHECK(bad_e == 0, "%d collisions changed the energy by more than 1e-13 (worst %.3g)", bad_e,
             worst);
    TU_CHECK(bad_p == 0 && bad_t == 0, "%d momentum components off, %d non-finite or negative",
             bad_p, bad_t);
    TU_CHECK(exchanged > collisions / 10, "only %d of %d collisions changed a level", exchanged,
             collisions);
    kedr_dsmc_destroy(sim);
}

/* (b) the draw at a fixed collision energy: E_c = 7.3 quanta, from level 2 and et = 5.3 quanta */
static void test_lb_levels(kedr_ctx *ctx)
{
    kedr_dsmc_species n2 = vib_species("N2", 46.5e-27, 4.17e-10, 0.74, 3371, 1, 0, 0);
    kedr_dsmc *sim = params_sim(ctx, &n2, 1);
    if (!sim)
        return;
    const dsmc_params *p = &sim->p;
    double q = K_B * 3371, b = 2.5 - 0.74, ec = 7.3 * q, expect[8], norm = 0;
    for (int i = 0; i < 8; i++)
        norm += expect[i] = pow(1 - i * q / ec, b - 1);
    const int draws = tu_quick() ? 40000 : 400000;
    double count[256] = {0};
    int inexact = 0;
    for (int n = 0; n < draws; n++) {
        dsmc_rng r = dsmc_rng_make(99, (uint64_t)n, 1, DSMC_P_SCATTER);
        uint8_t v = 2;
        double et = dsmc_vib_one(p, 0, b, 5000, ec - 2 * q, &v, &r);
        count[v]++;
        inexact += fabs(et + v * q - ec) > 4 * DBL_EPSILON * ec;
    }
    int bad = 0;
    for (int i = 0; i < 256; i++) {
        double pe = i < 8 ? expect[i] / norm : 0, se = sqrt(pe * (1 - pe) / draws);
        if (fabs(count[i] / draws - pe) > 5 * se + (pe == 0 ? 0 : 1e-12)) {
            bad++;
            printf("    level %d: %.5f, expected %.5f +- %.5f\n", i, count[i] / draws, pe, se);
        }
    }
    printf("  quantised LB at E_c = 7.3 k theta: P(0) %.4f (exact %.4f), P(7) %.4f (exact %.4f)\n",
           count[0] / draws, expect[0] / norm, count[7] / draws, expect[7] / norm);
    TU_CHECK(bad == 0 && inexact == 0, "quantised LB: %d levels off, %d energies inexact", bad,
             inexact);
    kedr_dsmc_destroy(sim);
}

/* (c) equilibrium levels; (d) Millikan-White's Z */
static void test_equilibrium_draw(void)
{
    const double theta = 3371, t = 4000, x = exp(-theta / t);
    const int draws = tu_quick() ? 40000 : 400000;
    double count[8] = {0}, sum = 0;
    for (int n = 0; n < draws; n++) {
        dsmc_rng r = dsmc_rng_make(5, (uint64_t)n, 3, DSMC_P_FILL_VIB);
        int v = dsmc_vib_equilibrium(theta, t, &r);
        sum += v;
        if (v < 8)
            count[v]++;
    }
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        double pe = (1 - x) * pow(x, i), se = sqrt(pe * (1 - pe) / draws);
        bad += fabs(count[i] / draws - pe) > 5 * se;
    }
    double mean = sum / draws, me = x / (1 - x), sd = sqrt(x) / (1 - x) / sqrt(draws);
    printf("  equilibrium levels at T = theta / 0.843: mean %.5f (SHO %.5f +- %.5f)\n", mean, me,
           sd);
    TU_CHECK(bad == 0 && fabs(mean - me) < 5 * sd, "equilibrium draw: %d levels off, mean %.5f "
             "vs %.5f", bad, mean, me);
    dsmc_rng r = dsmc_rng_make(5, 0, 3, DSMC_P_FILL_VIB);
    TU_CHECK(dsmc_vib_equilibrium(0, t, &r) == 0 && dsmc_vib_equilibrium(theta, 0, &r) == 0,
             "no vibration or T = 0: level 0");
}

static void test_zvib(kedr_ctx *ctx)
{
    kedr_dsmc_species sp[2] = {vib_species("A", 46.5e-27, 4.17e-10, 0.74, 3371, 0, 10.8, 217.8),
                               vib_species("B", 46.5e-27, 4.17e-10, 0.74, 3371, 37.5, 0, 0)};
    kedr_dsmc *sim = params_sim(ctx, sp, 2);
    if (!sim)
        return;
    int bad = 0;
    for (double t = 500; t < 1e5; t *= 1.7) {
        double z = 10.8 / pow(t, 0.74) * exp(217.8 * pow(t, -1.0 / 3)), zz = z > 1 ? z : 1;
        bad += fabs(dsmc_zvib(&sim->p, 0, t) / zz - 1) > 1e-12;
        bad += dsmc_zvib(&sim->p, 1, t) != 37.5;
    }
    TU_CHECK(bad == 0 && dsmc_zvib(&sim->p, 0, 1e9) == 1 && isinf(dsmc_zvib(&sim->p, 0, 0)),
             "Millikan-White Z: %d values off", bad);
    kedr_dsmc_destroy(sim);
}

/* (e) species files */
static void expect_refused(const char *body, const char *want, const char *key)
{
    char path[] = "/tmp/kedr_vib_species_XXXXXX";
    int fd = mkstemp(path);
    TU_CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "[Ar]\nmass = 66.3e-27\nd_ref = 4.17e-10\nomega = 0.81\nT_ref = 273\n\n%s", body);
    fclose(f);
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    kedr_status s = kedr_dsmc_species_load(path, "X", &c);
    const char *msg = kedr_last_error();
    TU_CHECK(s != KEDR_OK && strstr(msg, path) && strstr(msg, want) && strstr(msg, key),
             "species '%s': status %d, message '%s' (expected the file, '%s', key '%s')", body,
             (int)s, s != KEDR_OK ? msg : "", want, key);
    unlink(path);
}

static void test_species_files(void)
{
    const char *base = "[X]\nmass = 46.5e-27\nd_ref = 4.17e-10\nomega = 0.74\nT_ref = 273\n";
    struct {
        const char *extra, *want, *key;
    } cases[] = {
        {"rot_dof = 2\nZ_vib = 50\n", "without theta_v", "Z_vib"},
        {"rot_dof = 2\nZ_vib_C2 = 220\n", "without theta_v", "Z_vib_C2"},
        {"rot_dof = 2\ntheta_v = 3371\n", "needs its relaxation", "theta_v"},
        {"rot_dof = 2\ntheta_v = 3371\nZ_vib_C1 = 9.1\n", "Z_vib_C2 is missing", "theta_v"},
        {"rot_dof = 0\ntheta_v = 3371\nZ_vib = 50\n", "only molecules vibrate", "theta_v"},
        {"rot_dof = 2\ntheta_v = 3371\nZ_vib = 50\nZ_vib_C1 = 9\nZ_vib_C2 = 220\n",
         "either a constant", "Z_vib_C1"},
        {"rot_dof = 2\ntheta_v = -5\nZ_vib = 50\n", ":13", "theta_v"},
        {"rot_dof = 2\ntheta_v = 3371\nZ_vib = 0.5\n", ":14", "Z_vib"},
        {"rot_dof = 2\ntheta_v = 2e5\nZ_vib = 50\n", ":13", "theta_v"},
        {"rot_dof = 2\ntheta_v = 3371\nZ_vib_C1 = 0\nZ_vib_C2 = 220\n", ":14", "Z_vib_C1"},
        {"rot_dof = 2\ntheta_v = 3371\nZ_vib_C1 = 9\nZ_vib_C2 = -1\n", ":15", "Z_vib_C2"},
        {"rot_dof = 2\ntheta_v = 3371\nZ_vib = 50\ntheta_vib = 3\n", "theta_vib", "theta_v"},
    };
    char body[512];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(body, sizeof body, "%s%s", base, cases[k].extra);
        expect_refused(body, cases[k].want, cases[k].key);
    }
    /* built in code */
    kedr_dsmc_case c = dt_box(1e-3, 2, 1e20, 300, 4, 1e-7);
    c.species[0] = vib_species("N2", 46.5e-27, 4.17e-10, 0.74, 3371, 50, 0, 0);
    TU_OK(kedr_dsmc_case_check(&c));
    kedr_dsmc_species bad[4] = {vib_species("N2", 46.5e-27, 4.17e-10, 0.74, 3371, 0, 0, 0),
                                vib_species("N2", 46.5e-27, 4.17e-10, 0.74, 3371, 50, 9, 220),
                                vib_species("N2", 46.5e-27, 4.17e-10, 0.74, 0, 50, 0, 0),
                                vib_species("N2", 46.5e-27, 4.17e-10, 0.74, 3371, 0.5, 0, 0)};
    for (int k = 0; k < 4; k++) {
        c.species[0] = bad[k];
        kedr_status s = kedr_dsmc_case_check(&c);
        TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), "theta_v"),
                 "bad vibrational data %d accepted (%d)", k, (int)s);
    }
    c.species[0] = vib_species("N2", 46.5e-27, 4.17e-10, 0.74, 3371, 50, 0, 0);
    c.temperature_vib = -1;
    TU_CHECK(kedr_dsmc_case_check(&c) == KEDR_ERR_INVALID && strstr(kedr_last_error(), "T_vib"),
             "a negative T_vib accepted");
    /* the shipped file */
    char file[1200];
    snprintf(file, sizeof file, "%s", __FILE__); /* tests/unit/ -> the source tree */
    char *at = strstr(file, "tests/unit/test_dsmc_vib_model.c");
    snprintf(at ? at : file, sizeof file - (size_t)(at ? at - file : 0), "%scases/dsmc/species.ini",
             at ? "" : "./");
    const char *names[4] = {"N2", "O2", "NO", "Ar"};
    for (int k = 0; k < 4; k++) {
        kedr_dsmc_case g;
        memset(&g, 0, sizeof g);
        TU_OK(kedr_dsmc_species_load(file, names[k], &g));
        const kedr_dsmc_species *s = &g.species[0];
        int vibrates = s->theta_v > 0 && s->zv_c1 > 0 && s->zv_c2 > 0;
        TU_CHECK(vibrates == (k < 3), "%s: theta_v %g, C1 %g, C2 %g", names[k], s->theta_v,
                 s->zv_c1, s->zv_c2);
    }
    /* [species] vibration: the seed 003 cases switch it off, plate-n2-vib.ini keeps it */
    const char *shipped[2] = {"seed-test1.ini", "plate-n2-vib.ini"};
    for (int k = 0; k < 2; k++) {
        char path[1200];
        snprintf(path, sizeof path, "%s", file);
        char *slash = strrchr(path, '/');
        snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
                 "%s", shipped[k]);
        kedr_dsmc_case g;
        TU_OK(kedr_dsmc_case_load(path, &g));
        TU_CHECK(g.species[0].theta_v == (k ? 3371 : 0) && (g.species[0].zv_c1 > 0) == k,
                 "%s: theta_v %g", shipped[k], g.species[0].theta_v);
    }
}

int main(void)
{
    kedr_ctx *ctx = tu_ctx(KEDR_BACKEND_CPU); /* the host code of the kernels */
    test_energy(ctx, 0);
    test_energy(ctx, 1);
    test_lb_levels(ctx);
    test_equilibrium_draw();
    test_zvib(ctx);
    test_species_files();
    kedr_ctx_destroy(ctx);
    return tu_finish("test_dsmc_vib_model");
}
