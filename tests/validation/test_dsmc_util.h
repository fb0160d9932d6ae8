/* Shared by the DSMC validation tests: gases and closed boxes built in code, and moments of the
 * particles. */
#ifndef TEST_DSMC_UTIL_H
#define TEST_DSMC_UTIL_H

#include "test_util.h"

#define K_B 1.380649e-23

/* Under KEDR_TEST_QUICK a statistical check draws `ratio` times fewer samples: its tolerance
 * widens by sqrt(ratio), as a standard error grows. 1 at full size (the tolerance unchanged). */
static inline double dt_widen(double ratio) { return tu_quick() ? sqrt(ratio) : 1.0; }

/* Hard-sphere argon-like gas (omega = 0.5). */
static inline kedr_dsmc_species dt_hard_sphere(void)
{
    kedr_dsmc_species s = {"HS", 66.3e-27, 4.17e-10, 0.5, 273, 1.0, 4.17e-10, 0, 1, 0, 0, 0, 0};
    return s;
}

/* VHS nitrogen of Bird (1994) table A1, VSS values of table A2. */
static inline kedr_dsmc_species dt_nitrogen(void)
{
    kedr_dsmc_species s = {"N2", 46.5e-27, 4.17e-10, 0.74, 273, 1.36, 4.11e-10, 2, 5, 0, 0, 0, 0};
    return s;
}

/* A closed box of side len with specular walls, nx x nx cells, filled with gas at n, T. */
static inline kedr_dsmc_case dt_box(double len, int nx, double n, double temperature, double ppc,
                                    double dt)
{
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "box");
    c.hi[0] = c.hi[1] = len;
    c.nx = c.ny = nx;
    for (int s = 0; s < 4; s++)
        c.side[s] = KEDR_DSMC_SPECULAR;
    c.nspecies = 1;
    c.species[0] = dt_hard_sphere();
    c.fraction[0] = 1;
    c.number_density = n;
    c.temperature = c.wall_temperature = temperature;
    c.fill = 1;
    c.dt = dt;
    c.steps = 1000;
    c.seed = 7;
    c.weight = n * (len / nx) * (len / nx) / ppc;
    c.sample_start = 0;
    c.sample_every = 1;
    return c;
}

typedef struct {
    size_t n;
    double *x, *y, *vx, *vy, *vz;
    float *erot;
    uint8_t *sp;
} dt_particles;

static inline dt_particles dt_get(kedr_dsmc *sim)
{
    dt_particles p = {0};
    kedr_dsmc_get_particles(sim, 0, &p.n, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    size_t b = (p.n ? p.n : 1) * sizeof(double);
    p.x = tu_host_alloc(b);
    p.y = tu_host_alloc(b);
    p.vx = tu_host_alloc(b);
    p.vy = tu_host_alloc(b);
    p.vz = tu_host_alloc(b);
    p.erot = tu_host_alloc((p.n ? p.n : 1) * sizeof(float));
    p.sp = tu_host_alloc(p.n ? p.n : 1);
    size_t n = 0;
    TU_OK(kedr_dsmc_get_particles(sim, p.n, &n, p.x, p.y, p.vx, p.vy, p.vz, p.erot, p.sp));
    return p;
}

static inline void dt_free(dt_particles *p)
{
    free(p->x);
    free(p->y);
    free(p->vx);
    free(p->vy);
    free(p->vz);
    free(p->erot);
    free(p->sp);
}

/* Momentum (per unit mass scale: sum m v), total energy (sum m v^2 / 2 + e_rot) and the sum of
 * m |v| used to scale rounding tolerances. */
static inline void dt_totals(const kedr_dsmc_case *c, const dt_particles *p, double mom[3],
                             double *energy, double *scale)
{
    mom[0] = mom[1] = mom[2] = *energy = *scale = 0;
    for (size_t i = 0; i < p->n; i++) {
        double m = c->species[p->sp[i]].mass;
        mom[0] += m * p->vx[i];
        mom[1] += m * p->vy[i];
        mom[2] += m * p->vz[i];
        double v2 = p->vx[i] * p->vx[i] + p->vy[i] * p->vy[i] + p->vz[i] * p->vz[i];
        *energy += 0.5 * m * v2 + (double)p->erot[i];
        *scale += m * sqrt(v2);
    }
}

/* Rotational temperature of a particle set whose molecules have zeta rotational degrees of
 * freedom each: 2 <e_rot> / (zeta k). */
static inline double dt_temperature_rot(int zeta, const dt_particles *p)
{
    double s = 0;
    for (size_t i = 0; i < p->n; i++)
        s += (double)p->erot[i];
    return 2.0 * s / ((double)zeta * K_B * (double)p->n);
}

/* The fill and the first step's inflow counts of case c on the b-th back end tested: the first
 * one records them in first, the others must match them exactly (they come from the same host
 * draws). Returns the simulator after that step, or NULL. */
static inline kedr_dsmc *dt_counts_match(kedr_ctx *ctx, const kedr_dsmc_case *c, int b,
                                         size_t first[2])
{
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, c, &sim));
    if (!sim)
        return NULL;
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    size_t fill = st.particles;
    TU_OK(kedr_dsmc_step(sim));
    TU_OK(kedr_dsmc_get_stats(sim, &st));
    if (b == 0) {
        first[0] = fill;
        first[1] = st.generated;
    } else {
        TU_CHECK(fill == first[0] && st.generated == first[1], "fill %zu / inflow %llu, first "
                 "back end %zu / %zu", fill, (unsigned long long)st.generated, first[0],
                 first[1]);
    }
    return sim;
}

/* Collisions over `steps` steps that run the stages in mask. */
static inline double dt_count_collisions(kedr_dsmc *sim, unsigned mask, int steps)
{
    double total = 0;
    for (int s = 0; s < steps; s++) {
        TU_OK(kedr_dsmc_step_stages(sim, mask));
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        total += (double)st.collisions;
    }
    return total;
}

/* Free-molecular flow, diffuse walls (Schaaf & Chambre, "Flow of Rarefied Gases", 1961; Bird
 * 1994 section 7.6), speed ratio s, wall over gas temperature tr. A sphere's Cd on pi r^2: */
static inline double dt_cd_sphere(double s, double tr)
{
    double s2 = s * s, s4 = s2 * s2;
    return (2 * s2 + 1) / (sqrt(M_PI) * s2 * s) * exp(-s2) + (4 * s4 + 4 * s2 - 1) / (2 * s4) *
           erf(s) + 2 * sqrt(M_PI) / (3 * s) * sqrt(tr);
}

/* The local pressure coefficient of an element (T_w = T) whose surface meets the flow at theta,
 * sn = s sin(theta); and its shear coefficient over cos(theta). */
static inline double dt_fm_cp(double s, double sn)
{
    double e = exp(-sn * sn), g = 1 + erf(sn);
    return (sn / sqrt(M_PI) * e + (0.5 + sn * sn) * g) / (s * s) +
           (e + sqrt(M_PI) * sn * g) / (2 * s * s);
}

static inline double dt_fm_cf(double s, double sn)
{
    return (exp(-sn * sn) + sqrt(M_PI) * sn * (1 + erf(sn))) / (sqrt(M_PI) * s);
}

/* Modified Bessel function I_n(x) = 1/pi integral_0^pi exp(x cos t) cos(n t) dt (midpoint rule,
 * converged far below 1e-12 for the x of these tests). */
static inline double dt_bessel_i(int n, double x)
{
    const int m = 4000;
    double sum = 0;
    for (int k = 0; k < m; k++) {
        double t = M_PI * (k + 0.5) / m;
        sum += exp(x * cos(t)) * cos(n * t);
    }
    return sum / m;
}

/* Circular cylinder in free-molecular flow, diffuse, reference length the diameter:
 * Cd = sqrt(pi) / s exp(-s^2/2) [(s^2 + 3/2) I0(s^2/2) + (s^2 + 1/2) I1(s^2/2)]
 *      + pi^(3/2) / (4 s) sqrt(tr). */
static inline double dt_cd_cylinder(double s, double tr)
{
    double x = 0.5 * s * s;
    return sqrt(M_PI) / s * exp(-x) * ((s * s + 1.5) * dt_bessel_i(0, x) + (s * s + 0.5) *
           dt_bessel_i(1, x)) + pow(M_PI, 1.5) / (4.0 * s) * sqrt(tr);
}

/* A cone along the flow (half angle a, base included, reference area its base) in the same
 * flow: every lateral element meets the flow at a, the base faces away from it. */
static inline double dt_cd_cone(double s, double a)
{
    double sn = s * sin(a);
    return dt_fm_cp(s, sn) + dt_fm_cf(s, sn) * cos(a) / tan(a) - dt_fm_cp(s, -s);
}

/* Translational temperature of a single-species particle set (about its mean velocity). */
static inline double dt_temperature(double mass, const dt_particles *p)
{
    double s[3] = {0}, s2 = 0;
    for (size_t i = 0; i < p->n; i++) {
        s[0] += p->vx[i];
        s[1] += p->vy[i];
        s[2] += p->vz[i];
        s2 += p->vx[i] * p->vx[i] + p->vy[i] * p->vy[i] + p->vz[i] * p->vz[i];
    }
    double n = (double)p->n;
    return mass * (s2 - (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]) / n) / (3.0 * K_B * n);
}

#endif
