/* The kinetic theory of a case (Bird, Molecular Gas Dynamics and the Direct Simulation of Gas
 * Flows, 1994): its time scales and dt = auto, the steady-state window, the inflow flux, and the
 * work a case asks for (kedr_dsmc_estimate), all from the case alone, before anything runs. */
#include "kedr/dsmc.h"
#include "kedr/rng.h" /* KEDR_BOLTZMANN */

#include <math.h>
#include <string.h>

/* The time scales of one gas state (n, T, u) of the case's gas. */
static void state_scales(const kedr_dsmc_case *c, double n, double temperature, const double *u,
                         double *collision_time, double *transit_time)
{
    /* Collision rate per molecule of a VHS mixture (Bird 1994 eq. 4.76, summed over partners
     * and averaged over species; eq. 4.64 for one species) at the state's temperature. */
    double nu = 0, cm = 0, speed = 0;
    for (int p = 0; p < c->nspecies; p++) {
        const kedr_dsmc_species *a = &c->species[p];
        for (int q = 0; q < c->nspecies; q++) {
            const kedr_dsmc_species *b = &c->species[q];
            double d = 0.5 * (a->d_ref + b->d_ref), w = 0.5 * (a->omega + b->omega);
            double tr = 0.5 * (a->t_ref + b->t_ref), mr = a->mass * b->mass / (a->mass + b->mass);
            nu += c->fraction[p] * 2.0 * sqrt(M_PI) * d * d * n * c->fraction[q] *
                  pow(temperature / tr, 1.0 - w) * sqrt(2.0 * KEDR_BOLTZMANN * tr / mr);
        }
        double cp = sqrt(2.0 * KEDR_BOLTZMANN * temperature / a->mass);
        cm = cp > cm ? cp : cm;
    }
    for (int d = 0; d < 3; d++)
        speed += u[d] * u[d];
    double dx = (c->hi[0] - c->lo[0]) / c->nx, dy = (c->hi[1] - c->lo[1]) / c->ny;
    if (c->dims == 3) {
        double dz = (c->hi[2] - c->lo[2]) / c->nz;
        dx = dz < dx ? dz : dx;
    }
    *collision_time = nu > 0 ? 1.0 / nu : HUGE_VAL;
    /* The fastest common particles: the state's speed plus three most probable thermal speeds
     * of the lightest species. */
    *transit_time = (dx < dy ? dx : dy) / (sqrt(speed) + 3.0 * cm);
}

void kedr_dsmc_time_scales(const kedr_dsmc_case *c, double *collision_time, double *transit_time)
{
    state_scales(c, c->number_density, c->temperature, c->velocity, collision_time, transit_time);
    const kedr_dsmc_downstream *d = &c->downstream;
    if (d->mode != KEDR_DSMC_DOWNSTREAM_NONE) {
        double tc, tt;
        state_scales(c, d->number_density, d->temperature, d->velocity, &tc, &tt);
        *collision_time = fmin(*collision_time, tc);
        *transit_time = fmin(*transit_time, tt);
    }
}

double kedr_dsmc_auto_dt(const kedr_dsmc_case *c)
{
    double tc, tt;
    kedr_dsmc_time_scales(c, &tc, &tt);
    return fmin(0.2 * tc, 0.5 * tt);
}

int64_t kedr_dsmc_steady_window(const kedr_dsmc_case *c)
{
    double extent = 0, speed = 0, cm = 0;
    for (int d = 0; d < (c->dims == 3 ? 3 : 2); d++) {
        extent = fmax(extent, c->hi[d] - c->lo[d]);
        speed += c->velocity[d] * c->velocity[d];
    }
    for (int k = 0; k < c->nspecies; k++)
        cm = fmax(cm, sqrt(2.0 * KEDR_BOLTZMANN * c->temperature / c->species[k].mass));
    double steps = extent / (sqrt(speed) + cm) / c->dt;
    return !(steps > 50) ? 50 : steps < 1e6 ? (int64_t)ceil(steps) : 1000000;
}

/* The largest sigma g of the case's pairs at three most probable relative speeds of the
 * hottest gas state or wall: the (sigma g)max every cell starts from (as kedr_dsmc_create sets
 * it), VHS/VSS sigma_T = pi d^2 (2 k T_ref / (m_r g^2))^(omega - 1/2) / Gamma(5/2 - omega). */
static double initial_sgmax(const kedr_dsmc_case *c)
{
    double t_hot = fmax(c->temperature, c->downstream.mode ? c->downstream.temperature : 0);
    t_hot = fmax(t_hot, c->wall_temperature);
    for (int b = 0; b < c->nbodies; b++)
        t_hot = fmax(t_hot, c->body[b].temperature);
    double sg = 0;
    for (int i = 0; i < c->nspecies; i++)
        for (int j = 0; j < c->nspecies; j++) {
            const kedr_dsmc_species *a = &c->species[i], *b = &c->species[j];
            int vss = c->model == KEDR_DSMC_VSS;
            double d = 0.5 * (vss ? a->d_ref_vss + b->d_ref_vss : a->d_ref + b->d_ref);
            double w = 0.5 * (a->omega + b->omega), tr = 0.5 * (a->t_ref + b->t_ref);
            double mr = a->mass * b->mass / (a->mass + b->mass);
            double g = 3.0 * sqrt(2.0 * KEDR_BOLTZMANN * t_hot / mr);
            double sigma = M_PI * d * d * pow(2.0 * KEDR_BOLTZMANN * tr / (mr * g * g), w - 0.5) /
                           tgamma(2.5 - w);
            sg = fmax(sg, sigma * g);
        }
    return sg;
}

/* Particles entering per step through the inflow sides, each side's face area at the flux of its
 * state (the planar flow 1 m deep; axisymmetric sides as rings and cylinders, under radial
 * weighting at the outermost row's weight, which overestimates the inner rings' molecules). */
static double inflow_per_step(const kedr_dsmc_case *c)
{
    const kedr_dsmc_downstream *d = &c->downstream;
    double ext[3] = {c->hi[0] - c->lo[0], c->hi[1] - c->lo[1],
                     c->dims == 3 ? c->hi[2] - c->lo[2] : 1.0};
    double total = 0;
    for (int s = 0; s < (c->dims == 3 ? 6 : 4); s++) {
        if (c->side[s] != KEDR_DSMC_INFLOW)
            continue;
        int axis = s / 2, down = d->mode && (d->sides & (1u << s));
        double area = ext[(axis + 1) % 3] * ext[(axis + 2) % 3];
        if (c->axisymmetric)
            area = axis == 0 ? M_PI * (c->hi[1] * c->hi[1] - c->lo[1] * c->lo[1])
                             : 2.0 * M_PI * (s == KEDR_DSMC_YMIN ? c->lo[1] : c->hi[1]) * ext[0];
        const double *u = down ? d->velocity : c->velocity;
        double inward = s % 2 ? -u[axis] : u[axis];
        for (int k = 0; k < c->nspecies; k++)
            total += kedr_dsmc_inflow_flux((down ? d->number_density : c->number_density) *
                                           c->fraction[k], down ? d->temperature : c->temperature,
                                           c->species[k].mass, inward) * area * c->dt / c->weight;
    }
    return total;
}

kedr_status kedr_dsmc_estimate(const kedr_dsmc_case *c, kedr_dsmc_work *w)
{
    if (!c || !w)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_estimate: %s is NULL", c ? "w" : "c");
    KEDR_TRY(kedr_dsmc_case_check(c));
    memset(w, 0, sizeof *w);
    double n = c->number_density, tc, tt;
    if (c->downstream.mode != KEDR_DSMC_DOWNSTREAM_NONE)
        n = fmax(n, c->downstream.number_density);
    kedr_dsmc_time_scales(c, &tc, &tt);
    double dx = (c->hi[0] - c->lo[0]) / c->nx, dy = (c->hi[1] - c->lo[1]) / c->ny;
    double nz = c->dims == 3 ? c->nz : 1, dz = c->dims == 3 ? (c->hi[2] - c->lo[2]) / c->nz : 1;
    double sg = initial_sgmax(c), r_out = c->lo[1] + (c->ny - 0.5) * dy;
    w->cells = (double)c->nx * c->ny * nz;
    /* Row by row: axisymmetric rows differ in volume and, radially weighted, in weight. */
    for (int j = 0; j < c->ny; j++) {
        double r = c->lo[1] + (j + 0.5) * dy, volume = dx * dy * dz, weight = c->weight;
        if (c->axisymmetric)
            volume = 2.0 * M_PI * r * dx * dy;
        if (c->radial_weighting)
            weight *= r / r_out;
        double per_cell = n * volume / weight, row = (double)c->nx * nz;
        /* NTC: 1/2 N^2 W (sigma g)max dt / V = 1/2 N n (sigma g)max dt; MFS the same mean */
        double cand = 0.5 * per_cell * n * sg * c->dt, cap = KEDR_DSMC_MAX_CANDIDATES;
        w->particles += row * per_cell;
        w->candidates += row * cand;
        w->candidates_run += row * fmin(cand, cap);
        w->cells_capped += cand >= cap ? row : 0;
        w->collisions += row * (tc < HUGE_VAL ? 0.5 * per_cell * c->dt / tc : 0);
    }
    w->inflow = inflow_per_step(c);
    w->steps = (double)c->steps;
    /* dsmc_slot_bytes: the particle arrays (doubles x, y, (z), vx, vy, vz; erot when a species
     * rotates; species when there are several), twice on the cpu, a spare word and the sort's
     * permutation; per cell starts, counts, (sigma g)max, the sample sums and a gas volume. */
    int rot = 0;
    for (int k = 0; k < c->nspecies; k++)
        rot |= c->species[k].rot_dof != 0;
    double pb = 8.0 * (c->dims == 3 ? 6 : 5) + (rot ? 4 : 0) + (c->nspecies > 1 ? 1 : 0);
    double cell_bytes = 12.0 + 64.0 + (c->nbodies || c->nsegments ? 8.0 : 0.0);
    w->bytes_cpu = w->particles * (2.0 * pb + 12.0) + w->cells * cell_bytes;
    w->bytes_cuda = w->particles * (pb + 12.125) + w->cells * cell_bytes;
    return KEDR_OK;
}

double kedr_dsmc_inflow_flux(double n, double temperature, double mass, double u_normal)
{
    double cm = sqrt(2.0 * KEDR_BOLTZMANN * temperature / mass); /* most probable speed */
    double s = u_normal / cm;
    return n * cm / (2.0 * sqrt(M_PI)) * (exp(-s * s) + sqrt(M_PI) * s * (1.0 + erf(s)));
}
