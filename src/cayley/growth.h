/* What the entry point (growth.c) gives the dense and sparse searches: the memory the back end
 * allows, the growth function's storage, and the level loop they share.
 *
 * kedr_cayley_growth (growth.c) validates the options, chooses the mode and checks the memory,
 * then calls cayley_dense_growth or cayley_sparse_growth, which set up their state and hand a
 * cayley_search to cayley_run_levels: that loop does the per-level bookkeeping (F(s), reached,
 * edge visits, the level report, checkpoints when due, signals at level boundaries) and calls
 * back into the search only for what differs between them. Neither search includes the other. */
#ifndef CAYLEY_GROWTH_H
#define CAYLEY_GROWTH_H

#include "kedr/cayley.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The hooks of one search. self is the search's state. */
typedef struct {
    const kedr_cayley_group *g;
    void *self;
    /* The starting state: the identity alone (res->growth = {1}, diameter 0), or the checkpoint
     * opt->resume_path (growth, diameter, complete; resumed_from is set by the loop). */
    kedr_status (*start)(void *self, const kedr_cayley_options *opt, kedr_cayley_result *res);
    /* Optional: a resumed checkpoint marked as an ended search is checked before it is
     * believed. */
    kedr_status (*confirm_ended)(void *self, const kedr_cayley_options *opt,
                                 const kedr_cayley_result *res);
    /* Level s: *count = F(s), the elements found at distance s, which become the frontier when
     * there are any. res->growth holds F(0..s-1). May return KEDR_ERR_INTERRUPTED with the state
     * still that of level s - 1. */
    kedr_status (*level)(void *self, int s, const kedr_cayley_result *res, uint64_t *count);
    /* Writes the state at the end of level res->diameter to path. */
    kedr_status (*checkpoint)(void *self, const char *path, const kedr_cayley_result *res,
                              int complete);
    /* Bytes held by the search (reported per level and in the result). */
    size_t (*memory)(void *self);
    /* Optional (the search over ranks): the largest of `local` over the ranks, so that every
     * rank takes the same decisions (a signal, a checkpoint due by the clock); -1 when the
     * ranks cannot agree (an MPI failure, in kedr_last_error()). */
    int (*agree_max)(void *self, int local);
} cayley_search;

/* Runs the levels of S from its starting state until the search ends, opt->max_levels, a
 * signal (KEDR_ERR_INTERRUPTED, the result holding the levels done) or an error. */
kedr_status cayley_run_levels(const cayley_search *S, const kedr_cayley_options *opt,
                              kedr_cayley_result *res);

/* Appends F(s) to res->growth (len entries of cap), growing it by doubling. */
kedr_status cayley_push_level(kedr_cayley_result *res, size_t *len, size_t *cap, uint64_t f);

/* What a search may use: opt->memory_limit, else the free memory of ctx's GPU, else the host's
 * available memory; *where names it for messages. */
kedr_status cayley_memory_allowed(kedr_ctx *ctx, const kedr_cayley_options *opt, size_t *limit,
                                  const char **where);

/* The host's available memory (MemAvailable), else its physical memory. */
size_t cayley_host_memory(void);

/* The two searches, called by kedr_cayley_growth once the mode is chosen and the memory
 * checked. devices: 0 the one-context dense search, else the 2-bit search over that many GPUs. */
kedr_status cayley_dense_growth(kedr_ctx *ctx, const kedr_cayley_group *g,
                                const kedr_cayley_options *opt, int devices,
                                kedr_cayley_result *result);
kedr_status cayley_sparse_growth(kedr_ctx *ctx, const kedr_cayley_group *g,
                                 const kedr_cayley_options *opt, kedr_cayley_result *result);

#ifdef __cplusplus
}
#endif
#endif
