/* The exchange stage over ranks (exchange.c): which rank owns which columns of cells, and the
 * particles that crossed into another rank's columns sent there. */
#ifndef KEDR_DSMC_EXCHANGE_H
#define KEDR_DSMC_EXCHANGE_H

#include "kedr/comm.h"
#include "sim.h"

/* The decomposition (dsmc_decomp) is in sim.h. */
/* Ranges of about equal load (load[i] >= 0 per column: particles, or the work measured; NULL:
 * every column alike), each at least one column. Fails when there are more ranks than columns. */
kedr_status dsmc_decomp_init(dsmc_decomp *d, int nx, int nranks, const double *load);
void dsmc_decomp_free(dsmc_decomp *d);

typedef struct {
    size_t sent, received; /* particles this rank sent away and took in */
} dsmc_exchange_counts;

/* Sends every particle whose cell lies in another rank's columns to that rank and appends the
 * ones that arrive (after this rank's staying particles, which keep their order), with their
 * cell keys: the indexing follows. Collective: every rank calls it, and all get the first
 * failure of any. One rank: nothing moves. */
kedr_status dsmc_exchange(struct kedr_dsmc *sim, kedr_comm *comm, const dsmc_decomp *d,
                          dsmc_exchange_counts *counts);

#endif
