/* Chemistry of kedr dsmc: reaction files, their checks and the constants of the total collision
 * energy model (docs/dsmc.md, "Chemistry"; the per-collision code is dsmc_kernels.h:
 * dsmc_react). */
#include "kedr/dsmc.h"
#include "kedr/ini.h"

#include "chem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The elements of a species name read as a chemical formula ("N2", "NO", "CO2", "Ar"): an
 * upper-case letter, its lower-case letters, an optional count. Returns the number of distinct
 * elements (at most 8), or -1 when the name is not such a formula. */
#define CHEM_MAX_ELEMENTS 8
typedef struct {
    int n;
    char el[CHEM_MAX_ELEMENTS][4];
    int count[CHEM_MAX_ELEMENTS];
} chem_formula;

static int parse_formula(const char *name, chem_formula *f)
{
    memset(f, 0, sizeof *f);
    const char *s = name;
    if (!*s)
        return -1;
    while (*s) {
        if (!(*s >= 'A' && *s <= 'Z'))
            return -1;
        char el[4] = {*s++, 0, 0, 0};
        int len = 1;
        while (*s >= 'a' && *s <= 'z') {
            if (len == 3)
                return -1;
            el[len++] = *s++;
        }
        long count = 1;
        if (*s >= '0' && *s <= '9') {
            char *end;
            count = strtol(s, &end, 10);
            if (count < 1 || count > 1000)
                return -1;
            s = end;
        }
        int k = 0;
        while (k < f->n && strcmp(f->el[k], el) != 0)
            k++;
        if (k == f->n) {
            if (f->n == CHEM_MAX_ELEMENTS)
                return -1;
            memcpy(f->el[f->n++], el, sizeof el);
        }
        f->count[k] += (int)count;
    }
    return f->n;
}

/* Adds sign times species name's atoms into the tally t. */
static void tally(chem_formula *t, const chem_formula *f, int sign)
{
    for (int k = 0; k < f->n; k++) {
        int q = 0;
        while (q < t->n && strcmp(t->el[q], f->el[k]) != 0)
            q++;
        if (q == t->n && t->n < CHEM_MAX_ELEMENTS)
            memcpy(t->el[t->n++], f->el[k], sizeof f->el[k]);
        if (q < CHEM_MAX_ELEMENTS)
            t->count[q] += sign * f->count[k];
    }
}

/* The rotational degrees of freedom that take part in a collision of the pair. */
static int pair_zeta(const kedr_dsmc_case *c, const kedr_dsmc_reaction *r)
{
    return c->species[r->reactants[0]].rot_dof + c->species[r->reactants[1]].rot_dof;
}

/* Why reaction r of case c cannot be used (into msg), or NULL when it can. */
static const char *reaction_problem(const kedr_dsmc_case *c, const kedr_dsmc_reaction *r,
                                    char *msg, size_t size)
{
    int ns = c->nspecies;
    if (r->nproducts != 2 && r->nproducts != 3) {
        snprintf(msg, size, "%d products: expected 2 (exchange) or 3 (dissociation; "
                 "recombination is not modelled)", r->nproducts);
        return msg;
    }
    for (int k = 0; k < 2 + r->nproducts; k++) {
        int s = k < 2 ? r->reactants[k] : r->products[k - 2];
        if (s < 0 || s >= ns) {
            snprintf(msg, size, "species index %d: expected 0 to %d", s, ns - 1);
            return msg;
        }
    }
    const kedr_dsmc_species *sp = c->species;
    if (r->nproducts == 3 && r->products[2] != r->reactants[1]) {
        snprintf(msg, size, "a dissociation's third product must be its third body %s, "
                 "unchanged (found %s)", sp[r->reactants[1]].name, sp[r->products[2]].name);
        return msg;
    }
    if (!(r->a > 0 && r->a <= 1e-5) || !(r->eta >= -5 && r->eta <= 5) ||
        !(r->ea >= 0 && r->ea <= 1e6 * KEDR_BOLTZMANN)) {
        snprintf(msg, size, "A = %g m^3/s, eta = %g, Ea = %g K: expected A in (0, 1e-5] m^3/s, "
                 "eta in [-5, 5], Ea in [0, 1e6] K", r->a, r->eta, r->ea / KEDR_BOLTZMANN);
        return msg;
    }
    chem_formula t, f;
    memset(&t, 0, sizeof t);
    for (int k = 0; k < 2 + r->nproducts; k++) {
        int s = k < 2 ? r->reactants[k] : r->products[k - 2];
        if (parse_formula(sp[s].name, &f) < 0) {
            snprintf(msg, size, "species '%s' is not a chemical formula (elements and counts, "
                     "as N2, NO, O, CO2): its atoms cannot be balanced", sp[s].name);
            return msg;
        }
        tally(&t, &f, k < 2 ? 1 : -1);
    }
    for (int q = 0; q < t.n; q++)
        if (t.count[q]) {
            snprintf(msg, size, "the atoms do not balance: %d %s more in the reactants than in "
                     "the products", t.count[q], t.el[q]);
            return msg;
        }
    double mr = 0, mp = 0, fr = 0, fp = 0;
    for (int k = 0; k < 2; k++) {
        mr += sp[r->reactants[k]].mass;
        fr += c->formation[r->reactants[k]];
    }
    for (int k = 0; k < r->nproducts; k++) {
        mp += sp[r->products[k]].mass;
        fp += c->formation[r->products[k]];
    }
    if (!(fabs(mp - mr) <= 1e-2 * mr)) {
        snprintf(msg, size, "the products' mass %g kg differs from the reactants' %g kg by more "
                 "than 1%%: check the species masses", mp, mr);
        return msg;
    }
    if (!(r->ea >= fp - fr - 1e-9 * fabs(fp - fr))) {
        snprintf(msg, size, "Ea = %.6g K is below the energy the products need, %.6g K (their "
                 "energies of formation less the reactants'): a collision just above Ea would "
                 "lack the energy", r->ea / KEDR_BOLTZMANN, (fp - fr) / KEDR_BOLTZMANN);
        return msg;
    }
    double x = r->eta + 0.5 * pair_zeta(c, r) + 0.5;
    if (!(x > -1)) {
        snprintf(msg, size, "eta = %g with %d rotational degrees of freedom in the pair: the "
                 "total collision energy model needs eta + zeta/2 + 3/2 > 0", r->eta,
                 pair_zeta(c, r));
        return msg;
    }
    return NULL;
}

kedr_status dsmc_check_reactions(const kedr_dsmc_case *c, const char *fn)
{
    if (c->nreactions < 0 || c->nreactions > KEDR_DSMC_MAX_REACTIONS)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %d reactions: expected 0 to %d", fn,
                         c->nreactions, KEDR_DSMC_MAX_REACTIONS);
    for (int k = 0; k < c->nspecies && c->nreactions; k++)
        if (!isfinite(c->formation[k]) || fabs(c->formation[k]) > 1e7 * KEDR_BOLTZMANN)
            return kedr_fail(KEDR_ERR_INVALID, "%s: species %d (%s): energy of formation %g J: "
                             "expected within 1e7 K (times k)", fn, k, c->species[k].name,
                             c->formation[k]);
    char msg[512];
    for (int q = 0; q < c->nreactions; q++)
        if (reaction_problem(c, &c->reaction[q], msg, sizeof msg))
            return kedr_fail(KEDR_ERR_INVALID, "%s: reaction %d (%s): %s", fn, q,
                             c->reaction[q].name, msg);
    return KEDR_OK;
}

int dsmc_species_index(const kedr_dsmc_case *c, const char *name)
{
    for (int k = 0; k < c->nspecies; k++)
        if (strcmp(c->species[k].name, name) == 0)
            return k;
    return -1;
}

/* "N2 + O -> NO + N" into the reaction's species. */
static kedr_status read_equation(kedr_ini *ini, const char *sec, const kedr_dsmc_case *c,
                                 kedr_dsmc_reaction *r)
{
    const char *text = NULL;
    KEDR_TRY(kedr_ini_string(ini, sec, "equation", KEDR_INI_REQUIRED, &text));
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return kedr_ini_fail(ini, sec, "equation", "%zu bytes: at most %zu", strlen(text),
                             sizeof buf - 1);
    memcpy(buf, text, strlen(text) + 1);
    char *arrow = strstr(buf, "->");
    if (!arrow)
        return kedr_ini_fail(ini, sec, "equation", "'%s': expected 'A + B -> C + D' (exchange) or "
                             "'AB + M -> A + B + M' (dissociation)", text);
    *arrow = 0;
    char *side[2] = {buf, arrow + 2};
    int count[2] = {0, 0}, idx[2][4];
    for (int h = 0; h < 2; h++) {
        char *save = NULL;
        for (char *t = strtok_r(side[h], "+ \t", &save); t; t = strtok_r(NULL, "+ \t", &save)) {
            if (count[h] == (h ? 3 : 2))
                return kedr_ini_fail(ini, sec, "equation", "'%s': %s", text,
                                     h ? "more than 3 products (recombination and reactions of "
                                         "more bodies are not modelled)"
                                       : "more than 2 reactants: only binary collisions react");
            int s = dsmc_species_index(c, t);
            if (s < 0) {
                char known[256] = "";
                for (int k = 0; k < c->nspecies; k++) {
                    size_t len = strlen(known);
                    snprintf(known + len, sizeof known - len, "%s%s", k ? ", " : "",
                             c->species[k].name);
                }
                return kedr_ini_fail(ini, sec, "equation", "species '%s' is not in the gas (%s)",
                                     t, known);
            }
            idx[h][count[h]++] = s;
        }
    }
    if (count[0] != 2 || count[1] < 2)
        return kedr_ini_fail(ini, sec, "equation", "'%s': expected 2 reactants and 2 or 3 "
                             "products (recombination is not modelled)", text);
    r->nproducts = count[1];
    r->reactants[0] = idx[0][0];
    r->reactants[1] = idx[0][1];
    for (int k = 0; k < count[1]; k++)
        r->products[k] = idx[1][k];
    if (r->nproducts == 2) {
        r->products[2] = -1;
        return KEDR_OK;
    }
    /* dissociation: the third body is the reactant found unchanged among the products (the
     * second when both are), put last; the other reactant breaks */
    for (int t = 1; t >= 0; t--)
        for (int k = 2; k >= 0; k--)
            if (r->products[k] == r->reactants[t]) {
                int m = r->reactants[t], tmp = r->products[k];
                r->products[k] = r->products[2];
                r->products[2] = tmp;
                r->reactants[t] = r->reactants[1];
                r->reactants[1] = m;
                return KEDR_OK;
            }
    return kedr_ini_fail(ini, sec, "equation", "'%s': three products, but neither reactant comes "
                         "out unchanged: a dissociation is 'AB + M -> A + B + M'", text);
}

/* Whether species k takes part in one of c's reactions. */
static int reacts(const kedr_dsmc_case *c, int k)
{
    for (int q = 0; q < c->nreactions; q++)
        for (int t = 0; t < 2 + c->reaction[q].nproducts; t++)
            if ((t < 2 ? c->reaction[q].reactants[t] : c->reaction[q].products[t - 2]) == k)
                return 1;
    return 0;
}

kedr_status kedr_dsmc_reactions_load(const char *path, kedr_dsmc_case *c)
{
    kedr_ini *ini = NULL;
    KEDR_TRY(kedr_ini_load(path, &ini));
    kedr_status s = KEDR_OK;
    c->nreactions = 0;
    static const char *const types[] = {"exchange", "dissociation", NULL};
    for (int i = 0; s == KEDR_OK && i < kedr_ini_sections(ini); i++) {
        const char *sec = kedr_ini_section(ini, i);
        if (strcmp(sec, "formation") == 0)
            continue;
        if (c->nreactions == KEDR_DSMC_MAX_REACTIONS) {
            s = kedr_ini_fail(ini, sec, NULL, "more than %d reactions", KEDR_DSMC_MAX_REACTIONS);
            break;
        }
        kedr_dsmc_reaction *r = &c->reaction[c->nreactions];
        memset(r, 0, sizeof *r);
        if (strlen(sec) >= sizeof r->name) {
            s = kedr_ini_fail(ini, sec, NULL, "reaction name of %zu bytes: at most %zu",
                              strlen(sec), sizeof r->name - 1);
            break;
        }
        memcpy(r->name, sec, strlen(sec) + 1);
        double ea = 0;
        int type = -1;
        if ((s = read_equation(ini, sec, c, r)) != KEDR_OK ||
            (s = kedr_ini_double(ini, sec, "A", KEDR_INI_REQUIRED | KEDR_INI_LO_OPEN, 0, 1e-5,
                                 &r->a)) != KEDR_OK ||
            (s = kedr_ini_double(ini, sec, "eta", KEDR_INI_REQUIRED, -5, 5, &r->eta)) != KEDR_OK ||
            (s = kedr_ini_double(ini, sec, "Ea", KEDR_INI_REQUIRED, 0, 1e6, &ea)) != KEDR_OK ||
            (s = kedr_ini_choice(ini, sec, "type", 0, types, &type)) != KEDR_OK)
            break;
        r->ea = ea * KEDR_BOLTZMANN;
        if (type >= 0 && type != (r->nproducts == 3)) {
            s = kedr_ini_fail(ini, sec, "type", "%s, but the equation has %d products (%s)",
                              types[type], r->nproducts,
                              r->nproducts == 3 ? "a dissociation" : "an exchange");
            break;
        }
        c->nreactions++;
    }
    /* the energies of formation, K: required for the species that react */
    if (s == KEDR_OK && c->nreactions && !kedr_ini_has_section(ini, "formation"))
        s = kedr_fail(KEDR_ERR_PARSE, "%s: no [formation] section: the energy of formation (K) "
                      "of each species that reacts is needed", path);
    for (int k = 0; s == KEDR_OK && k < c->nspecies; k++) {
        double t = 0;
        s = kedr_ini_double(ini, "formation", c->species[k].name,
                            reacts(c, k) ? KEDR_INI_REQUIRED : 0, -1e7, 1e7, &t);
        c->formation[k] = t * KEDR_BOLTZMANN;
    }
    for (int q = 0; s == KEDR_OK && q < c->nreactions; q++) {
        char msg[512];
        if (reaction_problem(c, &c->reaction[q], msg, sizeof msg))
            s = kedr_ini_fail(ini, c->reaction[q].name, "equation", "%s", msg);
    }
    if (s == KEDR_OK && c->nreactions == 0)
        s = kedr_fail(KEDR_ERR_PARSE, "%s: no reactions (expected a section with equation, A, "
                      "eta and Ea for each)", path);
    if (s == KEDR_OK)
        s = kedr_ini_finish(ini);
    kedr_ini_free(ini);
    if (s != KEDR_OK)
        c->nreactions = 0;
    return s;
}

/* The reaction tables of dsmc_params (dsmc_kernels.h): for reaction r of reactants A, B with
 * Arrhenius rate k(T) = a T^eta exp(-E_a / kT), the TCE probability P(E_c) = C (E_c - E_a)^x /
 * E_c^y. The pair's collision energy E_c (relative translational plus rotational energies) is
 * Gamma distributed among collisions at equilibrium with shape s = b + zeta/2 (b = 5/2 - omega
 * the VHS relative translation's, zeta the pair's rotational degrees of freedom) and scale kT,
 * and the VHS collision rate coefficient is <sigma g> = sigma_a (2kT/m_r)^(1 - omega)
 * Gamma(b) / Gamma(3/2) (sigma = sigma_a g^(1 - 2 omega)), so that
 * <sigma g P> = <sigma g> C Gamma(x + 1) / Gamma(s) (kT)^(x + 1 - s) exp(-E_a / kT),
 * equal to k(T) at every T with x = eta + zeta/2 + 1/2, y = s - 1 and
 * C = eps a Gamma(3/2) Gamma(s) / (sigma_a (2k/m_r)^(1 - omega) Gamma(b) Gamma(x + 1)
 * k^(x + 1 - s)), eps = 2 for like reactants (half as many collisions per n^2) and 1 otherwise
 * (Bird 1994 section 6.6, in the form for VHS molecules and zeta internal degrees of freedom). */
void dsmc_chem_params(const kedr_dsmc_case *c, dsmc_params *p)
{
    p->rx.nreact = c->nreactions;
    for (int q = 0; q < c->nreactions; q++) {
        const kedr_dsmc_reaction *r = &c->reaction[q];
        int sa = r->reactants[0], sb = r->reactants[1], pair = sa * DSMC_MAXS + sb;
        p->rx.re_a[q] = (uint8_t)sa;
        p->rx.re_b[q] = (uint8_t)sb;
        p->rx.re_diss[q] = r->nproducts == 3;
        double de = -c->formation[sa] - c->formation[sb];
        for (int k = 0; k < 3; k++) {
            p->rx.re_p[q][k] = (uint8_t)(k < r->nproducts ? r->products[k] : 0);
            if (k < r->nproducts)
                de += c->formation[r->products[k]];
        }
        p->rx.re_de[q] = de;
        p->rx.re_ea[q] = r->ea;
        p->rx.pair_reacts[pair] = p->rx.pair_reacts[sb * DSMC_MAXS + sa] = 1;
        double e = p->sigma_e[pair], b = 2.0 + 0.5 * e, zeta = pair_zeta(c, r);
        double s = b + 0.5 * zeta, x = r->eta + 0.5 * zeta + 0.5;
        double mr = p->mass[sa] * p->mass[sb] / (p->mass[sa] + p->mass[sb]);
        double k = KEDR_BOLTZMANN;
        p->rx.re_x[q] = x;
        p->rx.re_y[q] = s - 1.0;
        p->rx.re_lc[q] = log(sa == sb ? 2.0 : 1.0) + log(r->a) + lgamma(1.5) + lgamma(s) -
                      log(p->sigma_a[pair]) - 0.5 * (e + 1.0) * log(2.0 * k / mr) - lgamma(b) -
                      lgamma(x + 1.0) - (x + 1.0 - s) * log(k);
    }
}

/* The largest reaction value sigma_R g = sigma g P_sum(E) (dsmc_react_select) of p's pairs
 * that have reactions, at relative translational energies E up to emax (J) and no rotational
 * energy, which for a given collision energy gives the largest sigma g: on a grid of 512
 * energies spaced geometrically from emax / 10^6 to emax (the value rises from the activation
 * energy to a peak, or to a limit for eta = 0, and grows as E^eta for eta > 0). */
double dsmc_chem_sg_max(const dsmc_params *p, double emax)
{
    double best = 0;
    for (int i = 0; i < p->nspecies; i++)
        for (int j = 0; j < p->nspecies; j++) {
            int pair = i * DSMC_MAXS + j;
            if (!p->rx.pair_reacts[pair])
                continue;
            double mr = p->mass[i] * p->mass[j] / (p->mass[i] + p->mass[j]);
            for (int k = 0; k < 512; k++) {
                double e = emax * pow(1e-6, k / 511.0), g = sqrt(2.0 * e / mr);
                double sg = p->sigma_a[pair] * pow(g, p->sigma_e[pair]) * g *
                            dsmc_react_sum(p, i, j, e);
                best = sg > best ? sg : best;
            }
        }
    return best;
}
