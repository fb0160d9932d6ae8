/* Private: the chemistry of kedr dsmc (chem.c). */
#ifndef DSMC_CHEM_H
#define DSMC_CHEM_H

#include "dsmc_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* KEDR_ERR_INVALID naming fn, the reaction and what is wrong with it (unknown species, atoms that
 * do not balance, values out of range, an activation energy below the products' needs). */
kedr_status dsmc_check_reactions(const kedr_dsmc_case *c, const char *fn);
/* The index of the species called name in c, or -1. */
int dsmc_species_index(const kedr_dsmc_case *c, const char *name);
/* The reaction tables of p (after its species and pair constants). */
void dsmc_chem_params(const kedr_dsmc_case *c, dsmc_params *p);
/* The largest reaction value sigma_R g of p's reacting pairs at relative translational energies
 * up to emax (J): a cell's (sigma g)max starts from it (emax = 9 k T_hot) where it exceeds the
 * collisions' value, and a checkpoint's (sigma g)max may reach it. */
double dsmc_chem_sg_max(const dsmc_params *p, double emax);

#ifdef __cplusplus
}
#endif
#endif
