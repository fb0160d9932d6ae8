/* DSMC case files and species files: every key of docs/dsmc.md, read with kedr/ini.h, so every
 * error names the file, line, key and what was expected; the [body] sections are case_body.c's. */
#include "kedr/dsmc.h"
#include "kedr/ini.h"
#include "kedr/rng.h"

#include "chem.h"
#include "geometry.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(KEDR_DSMC_MAX_CANDIDATES == DSMC_MAX_CANDIDATES, "the public bound is the kernels'");

#define INF HUGE_VAL
#define REQ KEDR_INI_REQUIRED
#define POS (KEDR_INI_LO_OPEN) /* with lo = 0: strictly positive */

/* theta_v with Z_vib (constant) or Z_vib_C1 and Z_vib_C2 (Millikan-White, Bird's form): a
 * vibrating molecule; none of them: it does not vibrate. */
static kedr_status read_vibration(kedr_ini *ini, const char *name, kedr_dsmc_species *s)
{
    int has_t = kedr_ini_has(ini, name, "theta_v"), has_z = kedr_ini_has(ini, name, "Z_vib");
    int has_c1 = kedr_ini_has(ini, name, "Z_vib_C1"), has_c2 = kedr_ini_has(ini, name, "Z_vib_C2");
    KEDR_TRY(kedr_ini_double(ini, name, "theta_v", POS, 0, 1e5, &s->theta_v));
    KEDR_TRY(kedr_ini_double(ini, name, "Z_vib", 0, 1.0, 1e9, &s->z_vib));
    KEDR_TRY(kedr_ini_double(ini, name, "Z_vib_C1", POS, 0, 1e9, &s->zv_c1));
    KEDR_TRY(kedr_ini_double(ini, name, "Z_vib_C2", 0, 0.0, 1e4, &s->zv_c2));
    if (!has_t) {
        const char *key = has_z ? "Z_vib" : has_c1 ? "Z_vib_C1" : has_c2 ? "Z_vib_C2" : NULL;
        if (key)
            return kedr_ini_fail(ini, name, key, "given without theta_v: a vibrational relaxation "
                                 "number needs the species' characteristic vibrational "
                                 "temperature");
        return KEDR_OK;
    }
    if (s->rot_dof == 0)
        return kedr_ini_fail(ini, name, "theta_v", "%g K for a species without rotational degrees "
                             "of freedom (rot_dof 0): only molecules vibrate", s->theta_v);
    if (has_z && (has_c1 || has_c2))
        return kedr_ini_fail(ini, name, has_c1 ? "Z_vib_C1" : "Z_vib_C2",
                             "given with Z_vib: expected either a constant Z_vib or "
                             "Millikan-White's Z_vib_C1 and Z_vib_C2");
    if (!has_z && !(has_c1 && has_c2))
        return kedr_ini_fail(ini, name, "theta_v", "needs its relaxation: Z_vib (constant), or "
                             "Z_vib_C1 and Z_vib_C2 (Millikan-White)%s",
                             has_c1 ? "; Z_vib_C2 is missing" : has_c2 ? "; Z_vib_C1 is missing"
                                                                       : "");
    return KEDR_OK;
}

static kedr_status read_species(kedr_ini *ini, const char *name, kedr_dsmc_species *s)
{
    memset(s, 0, sizeof *s);
    if (strlen(name) >= sizeof s->name)
        return kedr_ini_fail(ini, name, NULL, "species name of %zu bytes: at most %zu",
                             strlen(name), sizeof s->name - 1);
    memcpy(s->name, name, strlen(name) + 1);
    int64_t dof = 0;
    s->alpha = 1;
    s->z_rot = 1;
    KEDR_TRY(kedr_ini_double(ini, name, "mass", REQ | POS, 0, 1e-20, &s->mass));
    KEDR_TRY(kedr_ini_double(ini, name, "d_ref", REQ | POS, 0, 1e-8, &s->d_ref));
    KEDR_TRY(kedr_ini_double(ini, name, "omega", REQ, 0.5, 1.0, &s->omega));
    KEDR_TRY(kedr_ini_double(ini, name, "T_ref", REQ | POS, 0, 1e6, &s->t_ref));
    KEDR_TRY(kedr_ini_double(ini, name, "alpha", 0, 1.0, 2.0, &s->alpha));
    s->d_ref_vss = s->d_ref;
    KEDR_TRY(kedr_ini_double(ini, name, "d_ref_vss", POS, 0, 1e-8, &s->d_ref_vss));
    KEDR_TRY(kedr_ini_int(ini, name, "rot_dof", 0, 0, 3, &dof));
    KEDR_TRY(kedr_ini_double(ini, name, "Z_rot", 0, 1.0, 1e6, &s->z_rot));
    if (dof == 1)
        return kedr_ini_fail(ini, name, "rot_dof", "1: expected 0, 2 (linear molecules) or 3");
    s->rot_dof = (int)dof;
    return read_vibration(ini, name, s);
}

/* "N2 0.78, O2 0.21, Ar 0.01": pairs of a species section and a mole fraction. */
static kedr_status read_mixture(kedr_ini *ini, const char *gas, kedr_dsmc_case *c)
{
    const char *text = NULL;
    KEDR_TRY(kedr_ini_string(ini, gas, "mixture", REQ, &text));
    char buf[512];
    if (strlen(text) >= sizeof buf)
        return kedr_ini_fail(ini, gas, "mixture", "%zu bytes: at most %zu", strlen(text),
                             sizeof buf - 1);
    memcpy(buf, text, strlen(text) + 1);
    double total = 0;
    c->nspecies = 0;
    for (char *save = NULL, *part = strtok_r(buf, ",", &save); part;
         part = strtok_r(NULL, ",", &save)) {
        char name[64];
        double x;
        char extra;
        if (sscanf(part, "%63s %lf %c", name, &x, &extra) != 2 || !(x > 0) || x > 1)
            return kedr_ini_fail(ini, gas, "mixture",
                                 "'%s': expected 'SPECIES FRACTION' pairs separated by commas, "
                                 "fractions in (0, 1]", part);
        if (!kedr_ini_has_section(ini, name))
            return kedr_ini_fail(ini, gas, "mixture", "species '%s' is not in this file", name);
        if (dsmc_species_index(c, name) >= 0)
            return kedr_ini_fail(ini, gas, "mixture", "species '%s' appears twice", name);
        if (c->nspecies == KEDR_DSMC_MAX_SPECIES)
            return kedr_ini_fail(ini, gas, "mixture", "more than %d species",
                                 KEDR_DSMC_MAX_SPECIES);
        KEDR_TRY(read_species(ini, name, &c->species[c->nspecies]));
        c->fraction[c->nspecies++] = x;
        total += x;
    }
    if (c->nspecies == 0)
        return kedr_ini_fail(ini, gas, "mixture", "no species given");
    for (int i = 0; i < c->nspecies; i++)
        c->fraction[i] /= total;
    return KEDR_OK;
}

kedr_status kedr_dsmc_species_load(const char *path, const char *gas, kedr_dsmc_case *c)
{
    kedr_ini *ini = NULL;
    KEDR_TRY(kedr_ini_load(path, &ini));
    kedr_status s = KEDR_OK;
    if (!kedr_ini_has_section(ini, gas)) {
        char known[512] = "";
        for (int i = 0; i < kedr_ini_sections(ini); i++) {
            size_t len = strlen(known);
            snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                     kedr_ini_section(ini, i));
        }
        s = kedr_fail(KEDR_ERR_PARSE, "%s: no species or mixture '%s' (the file has: %s)", path,
                      gas, known);
    } else if (kedr_ini_has(ini, gas, "mixture")) {
        s = read_mixture(ini, gas, c);
    } else {
        c->nspecies = 1;
        c->fraction[0] = 1;
        s = read_species(ini, gas, &c->species[0]);
    }
    /* The whole file is checked, so a typo in a species not used now is still caught. */
    for (int i = 0; s == KEDR_OK && i < kedr_ini_sections(ini); i++) {
        const char *sec = kedr_ini_section(ini, i);
        kedr_dsmc_case scratch;
        if (kedr_ini_has(ini, sec, "mixture"))
            s = read_mixture(ini, sec, &scratch);
        else
            s = read_species(ini, sec, &scratch.species[0]);
    }
    if (s == KEDR_OK)
        s = kedr_ini_finish(ini);
    kedr_ini_free(ini);
    return s;
}

static const char *const side_names[] = {"x_min", "x_max", "y_min", "y_max", "z_min", "z_max",
                                         NULL};

/* The downstream state of a case built in code or read (KEDR_ERR_INVALID names the field). */
static kedr_status check_downstream(const kedr_dsmc_case *c, const char *fn)
{
    const kedr_dsmc_downstream *d = &c->downstream;
    if (d->mode == KEDR_DSMC_DOWNSTREAM_NONE)
        return KEDR_OK;
    if ((unsigned)d->mode > KEDR_DSMC_RANKINE_HUGONIOT)
        return kedr_fail(KEDR_ERR_INVALID, "%s: downstream mode %d: expected a "
                         "kedr_dsmc_downstream_mode", fn, (int)d->mode);
    int nsides = c->dims == 3 ? 6 : 4;
    if (d->sides == 0 || d->sides >= (1u << nsides))
        return kedr_fail(KEDR_ERR_INVALID, "%s: downstream sides 0x%x: expected a nonempty set "
                         "of sides (bits 0 to %d)", fn, d->sides, nsides - 1);
    int count = 0, one = 0;
    for (int s = 0; s < nsides; s++)
        if (d->sides & (1u << s)) {
            if (c->side[s] != KEDR_DSMC_INFLOW)
                return kedr_fail(KEDR_ERR_INVALID, "%s: downstream side %s is not an inflow side",
                                 fn, side_names[s]);
            count++;
            one = s;
        }
    if (!(d->number_density > 0) || !(d->number_density <= 1e30) || !(d->temperature > 0) ||
        !(d->temperature <= 1e7))
        return kedr_fail(KEDR_ERR_INVALID, "%s: downstream n = %g, T = %g: expected n in "
                         "(0, 1e30] and T in (0, 1e7]", fn, d->number_density, d->temperature);
    for (int k = 0; k < 3; k++)
        if (!isfinite(d->velocity[k]))
            return kedr_fail(KEDR_ERR_INVALID, "%s: downstream velocity[%d] is not finite", fn, k);
    if (d->has_shock_position) {
        int axis = one / 2;
        if (count != 1 || !(d->shock_position >= c->lo[axis] && d->shock_position <= c->hi[axis]))
            return kedr_fail(KEDR_ERR_INVALID, "%s: downstream shock_position %g: expected one "
                             "downstream side and a position in [%g, %g]", fn, d->shock_position,
                             c->lo[axis], c->hi[axis]);
    }
    return KEDR_OK;
}

kedr_status kedr_dsmc_rankine_hugoniot(const kedr_dsmc_case *c, int side, double *number_density,
                                       double *temperature, double velocity[3])
{
    const char *fn = "kedr_dsmc_rankine_hugoniot";
    if (!c || !number_density || !temperature || !velocity)
        return kedr_fail(KEDR_ERR_INVALID, "%s: an argument is NULL", fn);
    int last = c && c->dims == 3 ? 5 : 3;
    if (side < 0 || side > last)
        return kedr_fail(KEDR_ERR_INVALID, "%s: side %d: expected 0 to %d", fn, side, last);
    if (c->nspecies < 1 || !(c->temperature > 0) || !(c->number_density > 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: the freestream needs a gas, T > 0 and n > 0", fn);
    double mass = 0, zeta = 0;
    for (int k = 0; k < c->nspecies; k++) {
        mass += c->fraction[k] * c->species[k].mass;
        zeta += c->fraction[k] * c->species[k].rot_dof;
    }
    double gamma = (5.0 + zeta) / (3.0 + zeta);
    int axis = side / 2;
    double toward = side % 2 ? 1.0 : -1.0; /* the side's outward normal */
    double un = toward * c->velocity[axis];
    double mach = un / sqrt(gamma * KEDR_BOLTZMANN * c->temperature / mass);
    if (!(mach > 1))
        return kedr_fail(KEDR_ERR_INVALID, "%s: the freestream's Mach number towards %s is %g: a "
                         "normal shock needs it above 1", fn, side_names[side], mach);
    double m2 = mach * mach;
    double rn = (gamma + 1) * m2 / ((gamma - 1) * m2 + 2);
    double rp = (2 * gamma * m2 - (gamma - 1)) / (gamma + 1);
    *number_density = c->number_density * rn;
    *temperature = c->temperature * rp / rn;
    for (int k = 0; k < 3; k++)
        velocity[k] = c->velocity[k];
    velocity[axis] = c->velocity[axis] / rn;
    return KEDR_OK;
}

/* Whether a body wall takes [wall] temperature: bare segments, or a body without its own. */
static int uses_wall_temperature(const kedr_dsmc_case *c)
{
    if (c->nbodies == 0)
        return c->nsegments > 0;
    for (int b = 0; b < c->nbodies; b++)
        if (!(c->body[b].temperature > 0))
            return 1;
    return 0;
}

/* The axisymmetric mode's rules (docs/dsmc.md): 2D, y >= 0 the radius, the axis side exactly
 * when y_min = 0, no radial periodicity, a flow along the axis. */
static kedr_status check_axisymmetric(const kedr_dsmc_case *c, const char *fn)
{
    for (int s = 0; s < (c->dims == 3 ? 6 : 4); s++)
        if (c->side[s] == KEDR_DSMC_AXIS && !(c->axisymmetric && s == KEDR_DSMC_YMIN))
            return kedr_fail(KEDR_ERR_INVALID, "%s: side %s is the axis: only y_min of an "
                             "axisymmetric case can be", fn, side_names[s]);
    if (!c->axisymmetric) {
        if (c->radial_weighting)
            return kedr_fail(KEDR_ERR_INVALID, "%s: radial weighting needs an axisymmetric case",
                             fn);
        return KEDR_OK;
    }
    if (c->dims == 3)
        return kedr_fail(KEDR_ERR_INVALID, "%s: an axisymmetric case is 2D (dims 2)", fn);
    if (!(c->lo[1] >= 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: y_min %g: the radius of an axisymmetric case "
                         "starts at 0 or above", fn, c->lo[1]);
    if ((c->lo[1] == 0) != (c->side[KEDR_DSMC_YMIN] == KEDR_DSMC_AXIS))
        return kedr_fail(KEDR_ERR_INVALID, "%s: y_min = %g with side y_min %s: the y_min side is "
                         "the axis exactly when y_min = 0", fn, c->lo[1],
                         c->side[KEDR_DSMC_YMIN] == KEDR_DSMC_AXIS ? "the axis" : "not the axis");
    if (c->side[KEDR_DSMC_YMIN] == KEDR_DSMC_PERIODIC)
        return kedr_fail(KEDR_ERR_INVALID, "%s: periodic y sides in an axisymmetric case: the "
                         "radial sides are cylinders", fn);
    if (c->velocity[1] != 0 || c->velocity[2] != 0 ||
        (c->downstream.mode != KEDR_DSMC_DOWNSTREAM_NONE &&
         (c->downstream.velocity[1] != 0 || c->downstream.velocity[2] != 0)))
        return kedr_fail(KEDR_ERR_INVALID, "%s: an axisymmetric flow moves along the axis: "
                         "expected velocity_y = 0 (and no swirl)", fn);
    return KEDR_OK;
}

kedr_status kedr_dsmc_case_check(const kedr_dsmc_case *c)
{
    const char *fn = "kedr_dsmc_case_check";
    if (c->dims != 0 && c->dims != 2 && c->dims != 3)
        return kedr_fail(KEDR_ERR_INVALID, "%s: dims %d: expected 2 or 3 (0: 2)", fn, c->dims);
    if (c->window < 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: window %lld: expected >= 0 steps", fn,
                         (long long)c->window);
    if (c->balance_every < 0 || !(c->balance_tolerance >= 0 && c->balance_tolerance <= 10))
        return kedr_fail(KEDR_ERR_INVALID, "%s: balance_every %lld, balance_tolerance %g: expected "
                         ">= 0 and 0 to 10", fn, (long long)c->balance_every,
                         c->balance_tolerance);
    if (c->split != KEDR_DSMC_SPLIT_RCB && c->split != KEDR_DSMC_SPLIT_X)
        return kedr_fail(KEDR_ERR_INVALID, "%s: split %d: expected KEDR_DSMC_SPLIT_RCB (0) or "
                         "KEDR_DSMC_SPLIT_X (1)", fn, (int)c->split);
    int three = c->dims == 3;
    if (!(c->hi[0] > c->lo[0]) || !(c->hi[1] > c->lo[1]))
        return kedr_fail(KEDR_ERR_INVALID, "%s: domain [%g, %g] x [%g, %g] is empty", fn, c->lo[0],
                         c->hi[0], c->lo[1], c->hi[1]);
    if (three && !(c->hi[2] > c->lo[2]))
        return kedr_fail(KEDR_ERR_INVALID, "%s: domain z extent [%g, %g] is empty", fn, c->lo[2],
                         c->hi[2]);
    if (c->nx < 1 || c->ny < 1 || (int64_t)c->nx * c->ny > ((int64_t)1 << 31))
        return kedr_fail(KEDR_ERR_INVALID, "%s: grid %d x %d: expected 1 to 2^31 cells", fn, c->nx,
                         c->ny);
    if (three && (c->nz < 1 || (int64_t)c->nx * c->ny * c->nz > ((int64_t)1 << 31)))
        return kedr_fail(KEDR_ERR_INVALID, "%s: grid %d x %d x %d: expected 1 to 2^31 cells", fn,
                         c->nx, c->ny, c->nz);
    if (c->nspecies < 1 || c->nspecies > KEDR_DSMC_MAX_SPECIES)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %d species: expected 1 to %d", fn, c->nspecies,
                         KEDR_DSMC_MAX_SPECIES);
    if (c->partner != KEDR_DSMC_PARTNER_RANDOM && c->partner != KEDR_DSMC_PARTNER_NEAREST &&
        c->partner != KEDR_DSMC_PARTNER_SUBCELL)
        return kedr_fail(KEDR_ERR_INVALID, "%s: collision partner %d: expected RANDOM, NEAREST "
                         "or SUBCELL", fn, (int)c->partner);
    if (c->subcells < 0 || c->subcells > KEDR_DSMC_MAX_SUBCELLS)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %d sub-cells a side: expected 1 to %d (0: 2)", fn,
                         c->subcells, KEDR_DSMC_MAX_SUBCELLS);
    if (c->scheme != KEDR_DSMC_NTC && c->scheme != KEDR_DSMC_MFS)
        return kedr_fail(KEDR_ERR_INVALID, "%s: collision scheme %d: expected NTC or MFS", fn,
                         (int)c->scheme);
    for (int i = 0; i < c->nspecies; i++) {
        const kedr_dsmc_species *s = &c->species[i];
        if (!(s->rot_dof == 0 || s->rot_dof == 2 || s->rot_dof == 3) || !(s->z_rot >= 1))
            return kedr_fail(KEDR_ERR_INVALID, "%s: species %d (%s): rot_dof %d, Z_rot %g: expected "
                             "rot_dof 0, 2 or 3 and Z_rot >= 1", fn, i, s->name, s->rot_dof,
                             s->z_rot);
        if (!(s->mass > 0) || !(s->d_ref > 0) || !(s->d_ref_vss > 0) || !(s->t_ref > 0) ||
            !(s->omega >= 0.5 && s->omega <= 1) || !(s->alpha >= 1 && s->alpha <= 2) ||
            !(c->fraction[i] >= 0))
            return kedr_fail(KEDR_ERR_INVALID,
                             "%s: species %d (%s): expected mass, d_ref, T_ref > 0, omega in "
                             "[0.5, 1], alpha in [1, 2], fraction >= 0",
                             fn, i, s->name);
        int mw = s->zv_c1 > 0;
        if (!(s->theta_v >= 0 && s->theta_v <= 1e5) ||
            (s->theta_v > 0 && (s->rot_dof == 0 || (s->z_vib > 0) == mw || !(s->z_vib == 0 ||
                                s->z_vib >= 1) || !(s->zv_c2 >= 0 && s->zv_c2 <= 1e4) ||
                                !(s->z_vib <= 1e9 && s->zv_c1 <= 1e9))) ||
            (s->theta_v == 0 && (s->z_vib != 0 || s->zv_c1 != 0 || s->zv_c2 != 0)))
            return kedr_fail(KEDR_ERR_INVALID,
                             "%s: species %d (%s): theta_v %g, Z_vib %g, Z_vib_C1 %g, Z_vib_C2 %g: "
                             "expected theta_v 0 (no vibration, no Z_vib) or in (0, 1e5] K for "
                             "a molecule (rot_dof 2 or 3) with either Z_vib in [1, 1e9] or "
                             "Z_vib_C1 in (0, 1e9] and Z_vib_C2 in [0, 1e4]",
                             fn, i, s->name, s->theta_v, s->z_vib, s->zv_c1, s->zv_c2);
    }
    KEDR_TRY(dsmc_check_reactions(c, fn));
    if (!(c->number_density >= 0) || !(c->temperature > 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: freestream n = %g, T = %g: expected n >= 0, T > 0",
                         fn, c->number_density, c->temperature);
    if (!(c->temperature_vib >= 0 && c->temperature_vib <= 1e6))
        return kedr_fail(KEDR_ERR_INVALID, "%s: freestream T_vib = %g: expected (0, 1e6] K, or 0 "
                         "for the freestream temperature", fn, c->temperature_vib);
    for (int d = 0; d < 3; d++)
        if (!isfinite(c->velocity[d]))
            return kedr_fail(KEDR_ERR_INVALID, "%s: velocity[%d] is not finite", fn, d);
    if (c->nsegments < 0 || c->nsegments > KEDR_DSMC_MAX_SEGMENTS)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %d body segments: expected 0 to %d", fn,
                         c->nsegments, KEDR_DSMC_MAX_SEGMENTS);
    int nsides = three ? 6 : 4;
    for (int s = 0; s < nsides; s++)
        if ((unsigned)c->side[s] > KEDR_DSMC_AXIS)
            return kedr_fail(KEDR_ERR_INVALID, "%s: side %d has unknown boundary %d", fn, s,
                             (int)c->side[s]);
    for (int s = 0; s < nsides; s += 2)
        if ((c->side[s] == KEDR_DSMC_PERIODIC) != (c->side[s + 1] == KEDR_DSMC_PERIODIC))
            return kedr_fail(KEDR_ERR_INVALID, "%s: periodic sides come in pairs (%s)", fn,
                             s == 0 ? "x_min and x_max" : s == 2 ? "y_min and y_max"
                                                                 : "z_min and z_max");
    KEDR_TRY(check_axisymmetric(c, fn));
    if (three && c->nsegments > 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %d body segments in a 3D case: 3D bodies are "
                         "spheres, cuboids, cones and stl surfaces", fn, c->nsegments);
    char msg[512];
    int bad = dsmc_body_problem(c, msg, sizeof msg);
    if (bad >= 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: body %d: %s", fn, bad + 1, msg);
    for (int b = 0; b < c->nbodies; b++) {
        const kedr_dsmc_body *bd = &c->body[b];
        if (!(bd->temperature >= 0 && bd->temperature <= 1e6))
            return kedr_fail(KEDR_ERR_INVALID, "%s: body %d: temperature %g: expected a wall "
                             "temperature in (0, 1e6] K, or 0 for the case's", fn, b + 1,
                             bd->temperature);
        if (bd->own_wall && ((unsigned)bd->wall_model > KEDR_DSMC_WALL_MAXWELL ||
                             !(bd->accommodation >= 0 && bd->accommodation <= 1)))
            return kedr_fail(KEDR_ERR_INVALID, "%s: body %d: wall model %d, accommodation %g: "
                             "expected a kedr_dsmc_wall and an accommodation in [0, 1]", fn,
                             b + 1, (int)bd->wall_model, bd->accommodation);
    }
    if (uses_wall_temperature(c) && !(c->wall_temperature > 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: wall temperature %g: expected > 0", fn,
                         c->wall_temperature);
    if ((unsigned)c->wall_model > KEDR_DSMC_WALL_MAXWELL ||
        !(c->accommodation >= 0 && c->accommodation <= 1))
        return kedr_fail(KEDR_ERR_INVALID, "%s: wall model %d, accommodation %g: expected a "
                         "kedr_dsmc_wall and an accommodation in [0, 1]", fn, (int)c->wall_model,
                         c->accommodation);
    if (!(c->reference_length >= 0) || !(c->element_size >= 0) || !(c->reference_area >= 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: reference_length %g, reference_area %g, "
                         "element_size %g: expected >= 0 (0: default)", fn, c->reference_length,
                         c->reference_area, c->element_size);
    if (!(c->dt > 0) || c->steps < 0 || !(c->weight > 0))
        return kedr_fail(KEDR_ERR_INVALID, "%s: dt %g, steps %lld, weight %g: expected dt > 0, "
                         "steps >= 0, weight > 0", fn, c->dt, (long long)c->steps, c->weight);
    if (c->sample_auto && (c->steady_window < 2 || !(c->steady_tolerance > 0) ||
                           !(c->steady_tolerance <= 1)))
        return kedr_fail(KEDR_ERR_INVALID, "%s: steady_window %lld, steady_tolerance %g: expected "
                         ">= 2 steps and a tolerance in (0, 1]", fn, (long long)c->steady_window,
                         c->steady_tolerance);
    if (c->sample_every < 1)
        return kedr_fail(KEDR_ERR_INVALID, "%s: sample_every %lld: expected >= 1", fn,
                         (long long)c->sample_every);
    if (c->nstats_columns < 0 || c->nstats_columns > KEDR_DSMC_NSTATS)
        return kedr_fail(KEDR_ERR_INVALID, "%s: nstats_columns %d: expected 0 to %d", fn,
                         c->nstats_columns, (int)KEDR_DSMC_NSTATS);
    for (int k = 0; k < c->nstats_columns; k++)
        if ((unsigned)c->stats_columns[k] >= KEDR_DSMC_NSTATS)
            return kedr_fail(KEDR_ERR_INVALID, "%s: stats_columns[%d] = %d: expected a "
                             "kedr_dsmc_stat", fn, k, (int)c->stats_columns[k]);
    if ((unsigned)c->vtk_format > KEDR_DSMC_VTK_RAW)
        return kedr_fail(KEDR_ERR_INVALID, "%s: vtk_format %d: expected a kedr_dsmc_vtk_format",
                         fn, (int)c->vtk_format);
    return check_downstream(c, fn);
}

/* dt = auto chooses dt; a given dt longer than the mean collision time or the cell transit
 * time is allowed (the seed cases do so) with a warning naming the line. */
static kedr_status check_dt(kedr_ini *ini, kedr_dsmc_case *c)
{
    double tc, tt;
    kedr_dsmc_time_scales(c, &tc, &tt);
    if (c->dt_auto) {
        c->dt = fmin(0.2 * tc, 0.5 * tt);
        kedr_log(KEDR_LOG_INFO, "%s:%d: [run] dt = auto: %.4g s (mean collision time %.4g s, "
                 "cell transit time %.4g s)", kedr_ini_name(ini), kedr_ini_line(ini, "run", "dt"),
                 c->dt, tc, tt);
        return KEDR_OK;
    }
    if (c->dt > tc || c->dt > tt)
        kedr_log(KEDR_LOG_WARN, "%s:%d: [run] dt = %g s exceeds the %s (%.3g s); dt = auto "
                 "would choose %.3g s", kedr_ini_name(ini), kedr_ini_line(ini, "run", "dt"), c->dt,
                 c->dt > tc ? "mean collision time" : "cell transit time", c->dt > tc ? tc : tt,
                 fmin(0.2 * tc, 0.5 * tt));
    return KEDR_OK;
}

static const char *const boundary_names[] = {"outflow", "inflow", "specular", "periodic", "axis",
                                             NULL};

/* [downstream] (docs/dsmc.md): the inflow sides named by `sides` take their own state, given
 * or computed by the Rankine-Hugoniot relations from the freestream. */
static kedr_status read_downstream(kedr_ini *ini, kedr_dsmc_case *c)
{
    const char *sec = "downstream";
    kedr_dsmc_downstream *d = &c->downstream;
    memset(d, 0, sizeof *d);
    if (!kedr_ini_has_section(ini, sec))
        return KEDR_OK;
    static const char *const states[] = {"explicit", "rankine-hugoniot", NULL};
    int state = 0;
    KEDR_TRY(kedr_ini_choice(ini, sec, "state", REQ, states, &state));
    d->mode = state ? KEDR_DSMC_RANKINE_HUGONIOT : KEDR_DSMC_DOWNSTREAM_EXPLICIT;
    const char *text = "x_max";
    KEDR_TRY(kedr_ini_string(ini, sec, "sides", 0, &text));
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return kedr_ini_fail(ini, sec, "sides", "%zu bytes: at most %zu", strlen(text),
                             sizeof buf - 1);
    memcpy(buf, text, strlen(text) + 1);
    int count = 0, one = KEDR_DSMC_XMAX, nsides = c->dims == 3 ? 6 : 4;
    for (char *save = NULL, *w = strtok_r(buf, ", \t", &save); w;
         w = strtok_r(NULL, ", \t", &save)) {
        int s = 0;
        while (s < nsides && strcmp(side_names[s], w) != 0)
            s++;
        if (s == nsides)
            return kedr_ini_fail(ini, sec, "sides", "'%s': expected side names x_min, x_max, "
                                 "y_min, y_max%s separated by commas", w,
                                 nsides == 6 ? ", z_min, z_max" : "");
        if (d->sides & (1u << s))
            return kedr_ini_fail(ini, sec, "sides", "%s appears twice", w);
        if (c->side[s] != KEDR_DSMC_INFLOW)
            return kedr_ini_fail(ini, sec, "sides", "%s is %s in [domain]: a downstream side "
                                 "must be an inflow side", w, boundary_names[c->side[s]]);
        d->sides |= 1u << s;
        one = s;
        count++;
    }
    if (count == 0)
        return kedr_ini_fail(ini, sec, "sides", "no side given");
    static const char *const given[] = {"number_density", "density", "temperature", "velocity_x",
                                        "velocity_y", "velocity_z", NULL};
    if (d->mode == KEDR_DSMC_RANKINE_HUGONIOT) {
        for (int k = 0; given[k]; k++)
            if (kedr_ini_line(ini, sec, given[k]))
                return kedr_ini_fail(ini, sec, given[k], "state = rankine-hugoniot computes it "
                                     "from [freestream]: remove it, or use state = explicit");
        if (count != 1)
            return kedr_ini_fail(ini, sec, "sides", "state = rankine-hugoniot needs exactly one "
                                 "side (the one the shock faces)");
        if (kedr_dsmc_rankine_hugoniot(c, one, &d->number_density, &d->temperature,
                                       d->velocity) != KEDR_OK) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", kedr_last_error());
            return kedr_ini_fail(ini, sec, "state", "%s", msg);
        }
    } else {
        int has_n = kedr_ini_has(ini, sec, "number_density");
        int has_rho = kedr_ini_has(ini, sec, "density");
        if (has_n == has_rho)
            return kedr_ini_fail(ini, sec, NULL, "state = explicit: give exactly one of "
                                 "number_density [m^-3] and density [kg/m^3]");
        KEDR_TRY(kedr_ini_double(ini, sec, "number_density", POS, 0, 1e30, &d->number_density));
        double rho = 0;
        KEDR_TRY(kedr_ini_double(ini, sec, "density", POS, 0, 1e6, &rho));
        if (has_rho) {
            double mean_mass = 0;
            for (int i = 0; i < c->nspecies; i++)
                mean_mass += c->fraction[i] * c->species[i].mass;
            d->number_density = rho / mean_mass;
        }
        KEDR_TRY(kedr_ini_double(ini, sec, "temperature", REQ | POS, 0, 1e6, &d->temperature));
        KEDR_TRY(kedr_ini_double(ini, sec, "velocity_x", 0, -1e6, 1e6, &d->velocity[0]));
        KEDR_TRY(kedr_ini_double(ini, sec, "velocity_y", 0, -1e6, 1e6, &d->velocity[1]));
        if (c->dims == 3)
            KEDR_TRY(kedr_ini_double(ini, sec, "velocity_z", 0, -1e6, 1e6, &d->velocity[2]));
    }
    if (kedr_ini_has(ini, sec, "shock_position")) {
        int axis = one / 2;
        if (count != 1)
            return kedr_ini_fail(ini, sec, "shock_position", "needs exactly one downstream side");
        if (!c->fill)
            return kedr_ini_fail(ini, sec, "shock_position", "places the initial fill, but "
                                 "[freestream] fill is false");
        KEDR_TRY(kedr_ini_double(ini, sec, "shock_position", 0, c->lo[axis], c->hi[axis],
                                 &d->shock_position));
        d->has_shock_position = 1;
    }
    return KEDR_OK;
}

/* The case's name, for its output files: the file's base name less its extension. */
static kedr_status case_name(const kedr_ini *ini, kedr_dsmc_case *c)
{
    const char *base = strrchr(kedr_ini_name(ini), '/');
    base = base ? base + 1 : kedr_ini_name(ini);
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    if (len >= sizeof c->name)
        return kedr_fail(KEDR_ERR_PARSE, "%s: the case name (the file name less its extension) "
                         "has %zu bytes; output files take names of at most %zu: rename the file",
                         kedr_ini_name(ini), len, sizeof c->name - 1);
    memcpy(c->name, base, len);
    c->name[len] = 0;
    return KEDR_OK;
}

/* A path relative to the case file's directory (absolute paths as they are), malloc'ed. */
static char *relative_path(const kedr_ini *ini, const char *file)
{
    const char *name = kedr_ini_name(ini), *slash = strrchr(name, '/');
    size_t dir = file[0] == '/' ? 0 : !slash ? 1 : slash == name ? 1 : (size_t)(slash - name);
    char *path = malloc(dir + strlen(file) + 2);
    if (!path)
        return NULL;
    if (file[0] == '/')
        strcpy(path, file);
    else
        sprintf(path, "%.*s/%s", (int)dir, slash ? name : ".", file);
    return path;
}

/* [species] gas from [species] file, a path relative to the case file's directory. */
static kedr_status read_gas(kedr_ini *ini, const char *file, const char *gas, kedr_dsmc_case *c)
{
    char *path = relative_path(ini, file);
    if (!path)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", kedr_ini_name(ini));
    kedr_status s = kedr_dsmc_species_load(path, gas, c);
    free(path);
    if (s != KEDR_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", kedr_last_error());
        return kedr_ini_fail(ini, "species", "gas", "%s", msg);
    }
    return KEDR_OK;
}

/* [domain]: dimensions, extent and the boundary of each side. */
static kedr_status read_domain(kedr_ini *ini, kedr_dsmc_case *c)
{
    int64_t dims = 2;
    KEDR_TRY(kedr_ini_int(ini, "domain", "dimensions", 0, 2, 3, &dims));
    c->dims = (int)dims;
    int three = dims == 3;
    /* z keys belong to 3D cases; in a 2D one they are an error naming their line */
    static const char *const zkeys[][2] = {{"domain", "z_min"}, {"domain", "z_max"},
                                           {"domain", "boundary_z_min"},
                                           {"domain", "boundary_z_max"}, {"grid", "nz"},
                                           {"freestream", "velocity_z"},
                                           {"surface", "reference_area"},
                                           {"downstream", "velocity_z"}};
    KEDR_TRY(kedr_ini_bool(ini, "domain", "axisymmetric", 0, &c->axisymmetric));
    if (three && c->axisymmetric)
        return kedr_ini_fail(ini, "domain", "axisymmetric", "an axisymmetric case is 2D: remove "
                             "dimensions = 3 or this key");
    for (size_t k = 0; k < sizeof zkeys / sizeof zkeys[0] && !three; k++)
        if (kedr_ini_line(ini, zkeys[k][0], zkeys[k][1]) &&
            !(c->axisymmetric && strcmp(zkeys[k][1], "reference_area") == 0))
            return kedr_ini_fail(ini, zkeys[k][0], zkeys[k][1], "only for 3D cases ([domain] "
                                 "dimensions = 3)%s", strcmp(zkeys[k][1], "reference_area") == 0
                                 ? " and axisymmetric ones" : "");
    KEDR_TRY(kedr_ini_double(ini, "domain", "x_min", REQ, -1e6, 1e6, &c->lo[0]));
    KEDR_TRY(kedr_ini_double(ini, "domain", "x_max", REQ, -1e6, 1e6, &c->hi[0]));
    KEDR_TRY(kedr_ini_double(ini, "domain", "y_min", REQ, -1e6, 1e6, &c->lo[1]));
    KEDR_TRY(kedr_ini_double(ini, "domain", "y_max", REQ, -1e6, 1e6, &c->hi[1]));
    if (!(c->hi[0] > c->lo[0]))
        return kedr_ini_fail(ini, "domain", "x_max", "%g: expected more than x_min = %g", c->hi[0],
                             c->lo[0]);
    if (!(c->hi[1] > c->lo[1]))
        return kedr_ini_fail(ini, "domain", "y_max", "%g: expected more than y_min = %g", c->hi[1],
                             c->lo[1]);
    if (three) {
        KEDR_TRY(kedr_ini_double(ini, "domain", "z_min", REQ, -1e6, 1e6, &c->lo[2]));
        KEDR_TRY(kedr_ini_double(ini, "domain", "z_max", REQ, -1e6, 1e6, &c->hi[2]));
        if (!(c->hi[2] > c->lo[2]))
            return kedr_ini_fail(ini, "domain", "z_max", "%g: expected more than z_min = %g",
                                 c->hi[2], c->lo[2]);
    }
    static const char *const sides[] = {"x_min", "x_max", "y_min", "y_max", "z_min", "z_max"};
    int bc[6] = {KEDR_DSMC_INFLOW, KEDR_DSMC_OUTFLOW, KEDR_DSMC_INFLOW, KEDR_DSMC_INFLOW,
                 KEDR_DSMC_INFLOW, KEDR_DSMC_INFLOW};
    if (c->axisymmetric && c->lo[1] < 0)
        return kedr_ini_fail(ini, "domain", "y_min", "%g: y is the radius in an axisymmetric case "
                             "(expected >= 0)", c->lo[1]);
    int axis = c->axisymmetric && c->lo[1] == 0;
    if (axis)
        bc[KEDR_DSMC_YMIN] = KEDR_DSMC_AXIS;
    int nsides = three ? 6 : 4;
    for (int s = 0; s < nsides; s++) {
        char key[32];
        snprintf(key, sizeof key, "boundary_%s", sides[s]);
        KEDR_TRY(kedr_ini_choice(ini, "domain", key, 0, boundary_names, &bc[s]));
        c->side[s] = (kedr_dsmc_boundary)bc[s];
        int want_axis = axis && s == KEDR_DSMC_YMIN;
        if ((bc[s] == KEDR_DSMC_AXIS) != want_axis)
            return kedr_ini_fail(ini, "domain", key, want_axis
                                 ? "y_min = 0 in an axisymmetric case is the axis: expected axis"
                                 : "axis: only boundary_y_min of an axisymmetric case with y_min = 0 "
                                   "is the axis");
    }
    for (int s = 0; s < nsides; s += 2)
        if ((bc[s] == KEDR_DSMC_PERIODIC) != (bc[s + 1] == KEDR_DSMC_PERIODIC)) {
            char key[32];
            snprintf(key, sizeof key, "boundary_%s", sides[bc[s] == KEDR_DSMC_PERIODIC ? s : s + 1]);
            return kedr_ini_fail(ini, "domain", key, "periodic sides come in pairs: set both "
                                 "boundary_%s and boundary_%s to periodic", sides[s], sides[s + 1]);
        }
    return KEDR_OK;
}

/* [grid]: the cells along each axis. */
static kedr_status read_grid(kedr_ini *ini, kedr_dsmc_case *c)
{
    int three = c->dims == 3;
    int64_t nx = 0, ny = 0;
    KEDR_TRY(kedr_ini_int(ini, "grid", "nx", REQ, 1, 1 << 24, &nx));
    KEDR_TRY(kedr_ini_int(ini, "grid", "ny", REQ, 1, 1 << 24, &ny));
    if (nx * ny > ((int64_t)1 << 31))
        return kedr_ini_fail(ini, "grid", "ny", "%lld x %lld cells: expected at most 2^31 in all",
                             (long long)nx, (long long)ny);
    c->nx = (int)nx;
    c->ny = (int)ny;
    if (three) {
        int64_t nz = 0;
        KEDR_TRY(kedr_ini_int(ini, "grid", "nz", REQ, 1, 1 << 24, &nz));
        if (nx * ny * nz > ((int64_t)1 << 31))
            return kedr_ini_fail(ini, "grid", "nz", "%lld x %lld x %lld cells: expected at most "
                                 "2^31 in all", (long long)nx, (long long)ny, (long long)nz);
        c->nz = (int)nz;
    }
    return KEDR_OK;
}

/* [species] and [collisions]: the gas, its molecular model and how pairs collide. */
static kedr_status read_gas_model(kedr_ini *ini, kedr_dsmc_case *c)
{
    const char *file = "species.ini", *gas = NULL;
    static const char *const models[] = {"vhs", "vss", NULL};
    int model = KEDR_DSMC_VHS;
    KEDR_TRY(kedr_ini_string(ini, "species", "file", 0, &file));
    KEDR_TRY(kedr_ini_string(ini, "species", "gas", REQ, &gas));
    KEDR_TRY(kedr_ini_choice(ini, "species", "model", 0, models, &model));
    c->model = (kedr_dsmc_model)model;
    static const char *const schemes[] = {"ntc", "mfs", NULL};
    int scheme = KEDR_DSMC_NTC;
    KEDR_TRY(kedr_ini_choice(ini, "collisions", "scheme", 0, schemes, &scheme));
    c->scheme = (kedr_dsmc_scheme)scheme;
    static const char *const partners[] = {"random", "nearest", "subcell", NULL};
    int partner = KEDR_DSMC_PARTNER_RANDOM;
    KEDR_TRY(kedr_ini_choice(ini, "collisions", "partner", 0, partners, &partner));
    c->partner = (kedr_dsmc_partner)partner;
    int64_t subcells = 2;
    KEDR_TRY(kedr_ini_int(ini, "collisions", "subcells", 0, 1, KEDR_DSMC_MAX_SUBCELLS, &subcells));
    c->subcells = (int)subcells;
    KEDR_TRY(read_gas(ini, file, gas, c));
    /* [species] vibration = no: the species' vibrational data unused (the gas does not
     * vibrate), as the seed 003 reproductions run */
    int vibration = 1;
    KEDR_TRY(kedr_ini_bool(ini, "species", "vibration", 0, &vibration));
    for (int k = 0; k < c->nspecies && !vibration; k++)
        c->species[k].theta_v = c->species[k].z_vib = c->species[k].zv_c1 =
            c->species[k].zv_c2 = 0;
    /* [species] reactions: a reaction file for the gas (docs/dsmc.md, "Chemistry") */
    const char *reactions = NULL;
    KEDR_TRY(kedr_ini_string(ini, "species", "reactions", 0, &reactions));
    c->nreactions = 0;
    if (reactions) {
        char *path = relative_path(ini, reactions);
        if (!path)
            return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", kedr_ini_name(ini));
        kedr_status s = kedr_dsmc_reactions_load(path, c);
        free(path);
        if (s != KEDR_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", kedr_last_error());
            return kedr_ini_fail(ini, "species", "reactions", "%s", msg);
        }
    }
    return KEDR_OK;
}

/* [freestream] and [downstream]: the gas states at the inflow sides and the fill. */
static kedr_status read_freestream(kedr_ini *ini, kedr_dsmc_case *c)
{
    int three = c->dims == 3;
    int has_n = kedr_ini_has(ini, "freestream", "number_density");
    int has_rho = kedr_ini_has(ini, "freestream", "density");
    if (has_n == has_rho) /* neither: name the key, so that a misspelling of it is found */
        return kedr_ini_fail(ini, "freestream", has_n ? NULL : "number_density",
                             "give exactly one of number_density [m^-3] and density [kg/m^3]");
    KEDR_TRY(kedr_ini_double(ini, "freestream", "number_density", 0, 0, 1e30, &c->number_density));
    double rho = 0;
    KEDR_TRY(kedr_ini_double(ini, "freestream", "density", 0, 0, 1e6, &rho));
    if (has_rho) {
        double mean_mass = 0;
        for (int i = 0; i < c->nspecies; i++)
            mean_mass += c->fraction[i] * c->species[i].mass;
        c->number_density = rho / mean_mass;
    }
    KEDR_TRY(kedr_ini_double(ini, "freestream", "temperature", REQ | POS, 0, 1e6, &c->temperature));
    KEDR_TRY(kedr_ini_double(ini, "freestream", "T_vib", POS, 0, 1e6, &c->temperature_vib));
    KEDR_TRY(kedr_ini_double(ini, "freestream", "velocity_x", 0, -1e6, 1e6, &c->velocity[0]));
    KEDR_TRY(kedr_ini_double(ini, "freestream", "velocity_y", 0, -1e6, 1e6, &c->velocity[1]));
    if (c->axisymmetric && c->velocity[1] != 0)
        return kedr_ini_fail(ini, "freestream", "velocity_y", "%g: an axisymmetric flow moves "
                             "along the axis (expected 0)", c->velocity[1]);
    if (three)
        KEDR_TRY(kedr_ini_double(ini, "freestream", "velocity_z", 0, -1e6, 1e6, &c->velocity[2]));
    c->fill = 1;
    KEDR_TRY(kedr_ini_bool(ini, "freestream", "fill", 0, &c->fill));
    KEDR_TRY(read_downstream(ini, c));
    return KEDR_OK;
}

/* [wall] and [surface]: the walls' model and temperature, the coefficients' reference sizes. */
static kedr_status read_walls(kedr_ini *ini, kedr_dsmc_case *c)
{
    int three = c->dims == 3;
    int wall = 0;
    KEDR_TRY(kedr_ini_choice(ini, "wall", "model", 0, dsmc_wall_names, &wall));
    c->wall_model = (kedr_dsmc_wall)wall;
    c->accommodation = 1;
    KEDR_TRY(kedr_ini_double(ini, "wall", "accommodation", 0, 0, 1, &c->accommodation));
    if (wall != KEDR_DSMC_WALL_MAXWELL && kedr_ini_line(ini, "wall", "accommodation"))
        return kedr_ini_fail(ini, "wall", "accommodation", "only the maxwell model has one");
    c->wall_temperature = c->temperature;
    int needs_tw = uses_wall_temperature(c);
    KEDR_TRY(kedr_ini_double(ini, "wall", "temperature", needs_tw ? REQ | POS : POS, 0, 1e6,
                             &c->wall_temperature));
    if ((three || c->axisymmetric) && kedr_ini_line(ini, "surface", "reference_length"))
        return kedr_ini_fail(ini, "surface", "reference_length", "%s cases take reference_area "
                             "(m^2)", three ? "3D" : "axisymmetric");
    KEDR_TRY(kedr_ini_double(ini, "surface", "reference_length", POS, 0, 1e6,
                             &c->reference_length));
    if (three || c->axisymmetric)
        KEDR_TRY(kedr_ini_double(ini, "surface", "reference_area", POS, 0, 1e12,
                                 &c->reference_area));
    KEDR_TRY(kedr_ini_double(ini, "surface", "element_size", POS, 0, 1e6, &c->element_size));
    return KEDR_OK;
}

/* [run]: time step, steps, seed, weight and limits (dt checked against the gas). */
static kedr_status read_run(kedr_ini *ini, kedr_dsmc_case *c)
{
    int three = c->dims == 3;
    int64_t steps = 0, seed = 1;
    const char *dt_text = NULL;
    KEDR_TRY(kedr_ini_string(ini, "run", "dt", REQ, &dt_text));
    c->dt_auto = strcmp(dt_text, "auto") == 0;
    if (!c->dt_auto)
        KEDR_TRY(kedr_ini_double(ini, "run", "dt", REQ | POS, 0, 1e3, &c->dt));
    KEDR_TRY(kedr_ini_int(ini, "run", "steps", REQ, 0, (int64_t)1 << 32, &steps));
    KEDR_TRY(kedr_ini_int(ini, "run", "seed", 0, 0, INT64_MAX, &seed));
    c->steps = steps;
    c->seed = (uint64_t)seed;
    int has_w = kedr_ini_has(ini, "run", "weight");
    int has_ppc = kedr_ini_has(ini, "run", "particles_per_cell");
    if (has_w && has_ppc)
        return kedr_ini_fail(ini, "run", "weight", "give weight or particles_per_cell, not both");
    double ppc = 20;
    KEDR_TRY(kedr_ini_double(ini, "run", "weight", POS, 0, 1e40, &c->weight));
    KEDR_TRY(kedr_ini_double(ini, "run", "particles_per_cell", POS, 0, 1e9, &ppc));
    c->radial_weighting = c->axisymmetric;
    if (!c->axisymmetric && kedr_ini_line(ini, "run", "radial_weighting"))
        return kedr_ini_fail(ini, "run", "radial_weighting", "only for axisymmetric cases "
                             "([domain] axisymmetric = yes)");
    KEDR_TRY(kedr_ini_bool(ini, "run", "radial_weighting", 0, &c->radial_weighting));
    if (!has_w) {
        double dx = (c->hi[0] - c->lo[0]) / c->nx, dy = (c->hi[1] - c->lo[1]) / c->ny;
        double volume = dx * dy;
        if (three)
            volume *= (c->hi[2] - c->lo[2]) / c->nz;
        if (c->axisymmetric) /* the ring of the outermost row, whose weight is `weight` */
            volume = 2.0 * M_PI * (c->lo[1] + (c->ny - 0.5) * dy) * dx * dy;
        if (!(c->number_density > 0))
            return kedr_ini_fail(ini, "run", NULL, "particles_per_cell needs a freestream density "
                                 "> 0; give weight instead");
        c->weight = c->number_density * volume / ppc;
    }
    int64_t max_particles = 0;
    KEDR_TRY(kedr_ini_int(ini, "run", "max_particles", 0, 0, INT64_MAX, &max_particles));
    c->max_particles = (size_t)max_particles;
    c->balance_every = 100;
    c->balance_tolerance = 0.05;
    KEDR_TRY(kedr_ini_int(ini, "run", "balance_every", 0, 0, INT64_MAX, &c->balance_every));
    KEDR_TRY(kedr_ini_double(ini, "run", "balance_tolerance", 0, 0, 10, &c->balance_tolerance));
    static const char *const split_names[] = {"rcb", "x", NULL}; /* kedr_dsmc_split's order */
    int split = KEDR_DSMC_SPLIT_RCB;
    KEDR_TRY(kedr_ini_choice(ini, "run", "split", 0, split_names, &split));
    c->split = (kedr_dsmc_split)split;
    KEDR_TRY(check_dt(ini, c));
    return KEDR_OK;
}

/* [sample]: when sampling starts (a step, or once the flow is steady) and how often. */
static kedr_status read_sample(kedr_ini *ini, kedr_dsmc_case *c)
{
    c->sample_start = -1;
    c->sample_every = 1;
    c->steady_window = kedr_dsmc_steady_window(c);
    c->steady_tolerance = 0.005;
    const char *start_text = NULL, *window_text = NULL;
    KEDR_TRY(kedr_ini_string(ini, "sample", "start", 0, &start_text));
    c->sample_auto = start_text && strcmp(start_text, "auto") == 0;
    if (!c->sample_auto)
        KEDR_TRY(kedr_ini_int(ini, "sample", "start", 0, 0, INT64_MAX, &c->sample_start));
    KEDR_TRY(kedr_ini_int(ini, "sample", "every", 0, 1, INT64_MAX, &c->sample_every));
    KEDR_TRY(kedr_ini_string(ini, "sample", "steady_window", 0, &window_text));
    if (window_text && strcmp(window_text, "auto") != 0)
        KEDR_TRY(kedr_ini_int(ini, "sample", "steady_window", 0, 2, 1000000, &c->steady_window));
    KEDR_TRY(kedr_ini_double(ini, "sample", "steady_tolerance", POS, 0, 1, &c->steady_tolerance));
    if (!c->sample_auto && (kedr_ini_line(ini, "sample", "steady_window") ||
                            kedr_ini_line(ini, "sample", "steady_tolerance")))
        return kedr_ini_fail(ini, "sample", kedr_ini_line(ini, "sample", "steady_window")
                                                ? "steady_window" : "steady_tolerance",
                             "applies to start = auto only");
    return KEDR_OK;
}

/* [output] stats_file and stats_columns: the file and its columns, names separated by commas
 * or spaces, each known and given once. */
static kedr_status read_stats_file(kedr_ini *ini, kedr_dsmc_case *c)
{
    static const kedr_dsmc_stat defaults[] = {
        KEDR_DSMC_STAT_STEP,       KEDR_DSMC_STAT_TIME,       KEDR_DSMC_STAT_PARTICLES,
        KEDR_DSMC_STAT_COLLISIONS, KEDR_DSMC_STAT_CANDIDATES, KEDR_DSMC_STAT_GENERATED,
        KEDR_DSMC_STAT_MCS_MFP,    KEDR_DSMC_STAT_WALL};
    c->nstats_columns = (int)(sizeof defaults / sizeof defaults[0]);
    memcpy(c->stats_columns, defaults, sizeof defaults);
    const char *file = "", *columns = NULL;
    KEDR_TRY(kedr_ini_string(ini, "output", "stats_file", 0, &file));
    KEDR_TRY(kedr_ini_string(ini, "output", "stats_columns", 0, &columns));
    if (strlen(file) >= sizeof c->stats_file)
        return kedr_ini_fail(ini, "output", "stats_file", "a path of %zu bytes: at most %zu",
                             strlen(file), sizeof c->stats_file - 1);
    memcpy(c->stats_file, file, strlen(file) + 1);
    if (columns && !file[0])
        return kedr_ini_fail(ini, "output", "stats_columns", "applies to a stats_file only");
    if (file[0] && c->stats_every <= 0)
        return kedr_ini_fail(ini, "output", "stats_file", "needs stats_every > 0 (a row every "
                             "stats_every steps)");
    if (!columns)
        return KEDR_OK;
    char valid[512] = "";
    for (int k = 0; k < KEDR_DSMC_NSTATS; k++)
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", k ? ", " : "",
                 kedr_dsmc_stat_name((kedr_dsmc_stat)k));
    c->nstats_columns = 0;
    for (const char *p = columns; *p;) {
        size_t len = strcspn(p, ", \t");
        if (len == 0) {
            p++;
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), p);
        int found = -1, best = 0;
        for (int k = 0; k < KEDR_DSMC_NSTATS; k++) {
            const char *known = kedr_dsmc_stat_name((kedr_dsmc_stat)k);
            if (len == strlen(known) && strncmp(p, known, len) == 0)
                found = k;
            if (kedr_ini_distance(name, known) <
                kedr_ini_distance(name, kedr_dsmc_stat_name((kedr_dsmc_stat)best)))
                best = k;
        }
        if (found < 0)
            return kedr_ini_fail(ini, "output", "stats_columns", "unknown column '%s' (did you "
                                 "mean '%s'?); the columns are: %s", name,
                                 kedr_dsmc_stat_name((kedr_dsmc_stat)best), valid);
        for (int k = 0; k < c->nstats_columns; k++)
            if (c->stats_columns[k] == (kedr_dsmc_stat)found)
                return kedr_ini_fail(ini, "output", "stats_columns", "column '%s' given twice",
                                     name);
        c->stats_columns[c->nstats_columns++] = (kedr_dsmc_stat)found;
        p += len;
    }
    if (c->nstats_columns == 0)
        return kedr_ini_fail(ini, "output", "stats_columns", "no column given; the columns "
                             "are: %s", valid);
    return KEDR_OK;
}

/* [output] csv and vti: a bool (the cells' and the bodies' files, or none) or `surface` (the
 * bodies' files only: KEDR_DSMC_WRITE_SURFACE), for 3D cases whose cell files run to GBs. */
static kedr_status read_output_files(kedr_ini *ini, const char *key, int *write)
{
    const char *v = NULL;
    KEDR_TRY(kedr_ini_string(ini, "output", key, 0, &v));
    if (v && strcmp(v, "surface") == 0) {
        *write = KEDR_DSMC_WRITE_SURFACE;
        return KEDR_OK;
    }
    if (kedr_ini_bool(ini, "output", key, 0, write) != KEDR_OK)
        return kedr_ini_fail(ini, "output", key, "'%s': expected true, false or surface", v);
    return KEDR_OK;
}

/* [output]: what is written, where and how often. */
static kedr_status read_output(kedr_ini *ini, kedr_dsmc_case *c)
{
    c->stats_every = 100;
    c->write_csv = c->write_vti = 1;
    const char *dir = ".";
    KEDR_TRY(kedr_ini_int(ini, "output", "stats_every", 0, 0, INT64_MAX, &c->stats_every));
    KEDR_TRY(kedr_ini_string(ini, "output", "dir", 0, &dir));
    KEDR_TRY(read_output_files(ini, "csv", &c->write_csv));
    KEDR_TRY(read_output_files(ini, "vti", &c->write_vti));
    static const char *const vtk_formats[] = {"ascii", "binary", "raw", NULL};
    int vtk = KEDR_DSMC_VTK_BINARY;
    KEDR_TRY(kedr_ini_choice(ini, "output", "vtk", 0, vtk_formats, &vtk));
    c->vtk_format = (kedr_dsmc_vtk_format)vtk;
    if (strlen(dir) >= sizeof c->out_dir)
        return kedr_ini_fail(ini, "output", "dir", "a path of %zu bytes: at most %zu",
                             strlen(dir), sizeof c->out_dir - 1);
    memcpy(c->out_dir, dir, strlen(dir) + 1);
    c->checkpoint = 1;
    KEDR_TRY(kedr_ini_bool(ini, "output", "png", 0, &c->write_png));
    KEDR_TRY(kedr_ini_bool(ini, "output", "checkpoint", 0, &c->checkpoint));
    KEDR_TRY(kedr_ini_int(ini, "output", "checkpoint_every", 0, 0, INT64_MAX,
                          &c->checkpoint_every));
    KEDR_TRY(kedr_ini_int(ini, "output", "window", 0, 0, INT64_MAX, &c->window));
    return read_stats_file(ini, c);
}

/* Every section in the order docs/dsmc.md lists them, so that the first error a file holds is
 * the one reported; then the keys no section asked for, and the checks that span sections. */
static kedr_status read_case(kedr_ini *ini, kedr_dsmc_case *c)
{
    memset(c, 0, sizeof *c);
    KEDR_TRY(case_name(ini, c));
    KEDR_TRY(read_domain(ini, c));
    KEDR_TRY(read_grid(ini, c));
    KEDR_TRY(read_gas_model(ini, c));
    KEDR_TRY(read_freestream(ini, c));
    KEDR_TRY(dsmc_case_read_bodies(ini, c));
    KEDR_TRY(read_walls(ini, c));
    KEDR_TRY(read_run(ini, c));
    KEDR_TRY(read_sample(ini, c));
    KEDR_TRY(read_output(ini, c));
    KEDR_TRY(kedr_ini_finish(ini));
    kedr_status st = kedr_dsmc_case_check(c);
    if (st != KEDR_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", kedr_last_error());
        return kedr_fail(KEDR_ERR_PARSE, "%s: %s", kedr_ini_name(ini), msg);
    }
    return KEDR_OK;
}

kedr_status kedr_dsmc_case_load(const char *path, kedr_dsmc_case *c)
{
    if (!path || !c)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_case_load: %s is NULL", path ? "c" : "path");
    kedr_ini *ini = NULL;
    KEDR_TRY(kedr_ini_load(path, &ini));
    kedr_status s = read_case(ini, c);
    kedr_ini_free(ini);
    return s;
}
