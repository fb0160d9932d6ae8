/* The exchange stage over ranks: which rank owns which box of cells, the split taken again as
 * the load moves (decomp.c), and the particles that crossed into another rank's box sent there
 * (exchange.c). */
#ifndef KEDR_DSMC_EXCHANGE_H
#define KEDR_DSMC_EXCHANGE_H

#include "kedr/comm.h"
#include "sim.h"

/* The decomposition (dsmc_decomp, a tree of cuts and a box a rank) is in sim.h. */
/* A split of the grid of n[0] x n[1] x n[2] cells (n[2] = 1 in 2D) between nranks ranks, of
 * about equal load (load[cell] >= 0 per cell of the grid: particles, or the work measured;
 * NULL: every cell alike). kind KEDR_DSMC_SPLIT_RCB: recursive coordinate bisection, each cut
 * along the axis of most cells across the box being cut, at the cell plane where the running
 * load crosses the share of the ranks below it (m / 2 of m); KEDR_DSMC_SPLIT_X: columns along
 * x (dsmc_decomp_columns on the columns' summed loads). Fails, with a message naming the rank
 * count and the grid, when some rank would have no cell. */
kedr_status dsmc_decomp_init(dsmc_decomp *d, int kind, const int n[3], int nranks,
                             const double *load);
/* Columns of about equal load (load[i] >= 0 per column; NULL: every column alike), each rank
 * at least one, as a tree of cuts along x. Fails when there are more ranks than columns. */
kedr_status dsmc_decomp_columns(dsmc_decomp *d, const int n[3], int nranks, const double *load);
/* The columns with the given starts (col0[0] = 0 < col0[1] < ... < col0[nranks] = n[0]). */
kedr_status dsmc_decomp_from(dsmc_decomp *d, const int n[3], int nranks, const int32_t *col0);
/* The split of a tree of nranks - 1 cuts (a checkpoint's): checked (every node reached once
 * from the root, every rank a leaf once, each cut inside its box), KEDR_ERR_PARSE naming `what`
 * otherwise; the ranks' boxes set. */
kedr_status dsmc_decomp_from_cuts(dsmc_decomp *d, int kind, const int n[3], int nranks,
                                  const dsmc_cut *cut, const char *what);
/* 1 when both give every rank the same box. */
int dsmc_decomp_same(const dsmc_decomp *a, const dsmc_decomp *b);
void dsmc_decomp_free(dsmc_decomp *d);
/* The owner lookup of d (host memory). */
static inline dsmc_owners dsmc_decomp_owners(const dsmc_decomp *d)
{
    dsmc_owners o = {d->cut, d->nranks, (uint32_t)d->n[0], (uint32_t)d->n[1]};
    return o;
}

typedef struct {
    size_t sent, received; /* particles this rank sent away and took in */
} dsmc_exchange_counts;

/* Sends every particle whose cell lies in another rank's box to that rank and appends the
 * ones that arrive (after this rank's staying particles, which keep their order), with their
 * cell keys: the indexing follows. Collective: every rank calls it, and all get the first
 * failure of any. One rank: nothing moves. */
kedr_status dsmc_exchange(struct kedr_dsmc *sim, kedr_comm *comm, const dsmc_decomp *d,
                          dsmc_exchange_counts *counts);

/* Balances the ranks (between steps, the particles indexed): a rank's load is its particles
 * plus one for each cell of its box; when the busiest rank holds more than (1 +
 * c.balance_tolerance) times the mean, the load of every cell (its particles plus one) is added
 * over the ranks, the grid split again by it (dsmc_decomp_init, of the case's kind c.split) and
 * the particles sent to their new owners (dsmc_exchange). The load is counted, not
 * timed, so that a run and its restart split alike. *moved: 1 when the split changed.
 * Collective. */
kedr_status dsmc_balance(struct kedr_dsmc *sim, int *moved);
/* After a restart over as many ranks as files: where the file's split is of another kind than
 * the case's (c.split), the grid is split anew, of the case's kind, by the cells' particles
 * (their counts where the particles are indexed, else every cell alike), and the cells and
 * particles handed over (dsmc_split_to). Collective; nothing when the kinds agree. */
kedr_status dsmc_split_kind(struct kedr_dsmc *sim);
/* Makes d the split of the ranks (taking its arrays; every rank passes the same): a cell
 * changing hands takes its (sigma g)max, sample sums and window mark to its new owner, and the
 * particles go to the ranks that own their cells now. Collective. */
kedr_status dsmc_split_to(struct kedr_dsmc *sim, dsmc_decomp *d);
/* Makes d the rank's split (taking its arrays; d is left empty), with room in the per-cell
 * arrays for its cells (dsmc_cells_room: what they held is the caller's to move). */
kedr_status dsmc_decomp_adopt(struct kedr_dsmc *sim, dsmc_decomp *d);

/* When the simulator goes: the exchange's staging buffers freed (and its device buffer's
 * registration released: not collective), and with KEDR_DSMC_XPROF=1 in the environment its
 * parts, timed, printed to stderr. */
void dsmc_exchange_release(struct kedr_dsmc *sim);

/* How the exchange's records travel between the ranks, chosen by the first exchange over several
 * ranks (collective, the same on every rank): GPU to GPU where the back end is cuda, every rank
 * runs on this host, every pair of ranks' GPUs reach each other (kedr_comm_dev_direct: peer
 * access, or one GPU shared) and neither KEDR_COMM_IPC=0 nor the test switch sim->xhost says
 * otherwise; through host memory and MPI otherwise. */
enum { DSMC_XPATH_NONE = 0, DSMC_XPATH_DEVICE = 1, DSMC_XPATH_HOST = 2 };
/* The path chosen (DSMC_XPATH_NONE before the first exchange over ranks), with the device
 * buffer's bytes and the times it grew (NULL: not wanted). */
int dsmc_exchange_path(const struct kedr_dsmc *sim, size_t *dbuf_bytes, long *grows);
/* Bytes of the back end's memory the exchange holds between steps (its device scratch and
 * buffer on cuda; 0 on one rank and on the cpu, whose buffers are made each exchange). */
size_t dsmc_exchange_bytes(const struct kedr_dsmc *sim);

/* Particles a tile of the GPU's selection of leavers (exchange.cu). */
#define DSMC_XTILE 2048

/* cuda, keys in the rank's terms: room in the exchange's scratch for the leavers' counts of
 * sim->n particles' tiles, zeroed, for the move to fill (*tiles; NULL where the move does not
 * count: the cpu, one rank, the whole grid, radial weighting, which adds copies after it). */
kedr_status dsmc_exchange_tiles(struct kedr_dsmc *sim, uint32_t **tiles);

/* The particle arrays as the GPU's exchange kernels see them (exchange.cu). */
typedef struct {
    unsigned char *ptr[DSMC_MAX_FIELDS];
    int elem[DSMC_MAX_FIELDS];
    int nf, rec; /* fields; bytes a record */
} dsmc_xfields;

#ifdef KEDR_HAVE_CUDA
#ifdef __cplusplus
extern "C" {
#endif
/* Words of scratch dsmc_select_leavers_cuda needs for n particles (device memory). */
size_t dsmc_select_scratch_words(size_t n);
/* The indices of the particles whose key lies in another rank's box, ascending, into idx
 * (device, room for n); *nleave their number (host). Keys of the grid's cells (rank_terms = 0:
 * the owner of the key's cell, by walking the tree of o (device memory), is not me), or in the
 * rank's terms (rank_terms = 1: dsmc_key_leaves).
 * counted: tiles already hold the leavers of each tile (the move counted them), and the first
 * pass is skipped. */
kedr_status dsmc_select_leavers_cuda(kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                     uint32_t ncells, int rank_terms, dsmc_owners o, int me,
                                     uint32_t *tiles, int counted, uint32_t *idx, size_t *nleave);
/* The first pass alone: the leavers of each tile into tiles (device, one word a tile). */
kedr_status dsmc_count_leavers_cuda(kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                    uint32_t ncells, int rank_terms, dsmc_owners o, int me,
                                    uint32_t *tiles);
/* The leavers idx[0..m) (ascending) grouped by destination rank (the owner of their key's
 * cell, key - base: base = ncells for keys in the rank's terms, else 0; the tree of o, device
 * memory), in particle order within one: into by_dest (device, m words); start (device,
 * o.nranks + 1 words) receives where each rank's group begins (start[nranks] = m). dest and
 * dest_sorted: device scratch of m words each. */
kedr_status dsmc_group_leavers_cuda(kedr_ctx *ctx, const uint32_t *keys, const uint32_t *idx,
                                    size_t m, uint32_t base, dsmc_owners o, uint32_t *dest, uint32_t *dest_sorted, uint32_t *by_dest,
                                    uint32_t *start);
/* Records of particles idx[0..m) into out (device, m * f->rec bytes). */
kedr_status dsmc_pack_cuda(kedr_ctx *ctx, const dsmc_xfields *f, const uint32_t *idx, size_t m,
                           void *out);
/* Records in[0..m) (device) into the particle slots at, at + 1, ... (the inverse of the pack). */
kedr_status dsmc_unpack_cuda(kedr_ctx *ctx, const dsmc_xfields *f, const void *in, size_t m,
                             size_t at);
/* Particle pairs[2 j + 1] and its key into slot pairs[2 j], j < m (device pairs). */
kedr_status dsmc_move_slots_cuda(kedr_ctx *ctx, const dsmc_xfields *f, uint32_t *keys,
                                 const uint32_t *pairs, size_t m);
#ifdef __cplusplus
}
#endif
#endif

#endif
