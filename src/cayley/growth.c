/* kedr_cayley_growth: the entry point above the dense (dense.c) and sparse (sparse.c) searches.
 * It checks the arguments, chooses the mode, checks the memory the search needs against what
 * the back end allows, and runs the search; the level loop both searches share is here too
 * (growth.h). */
#include "growth.h"
#include "dense.h"
#include "sparse.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t cayley_host_memory(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                fclose(f);
                return (size_t)kb * 1024;
            }
        fclose(f);
    }
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : SIZE_MAX;
}

kedr_status cayley_memory_allowed(kedr_ctx *ctx, const kedr_cayley_options *opt, size_t *limit,
                                  const char **where)
{
    *limit = opt ? opt->memory_limit : 0;
    *where = "memory allowed by the limit";
    if (*limit)
        return KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(ctx)) {
        *where = "GPU memory free";
        return cayley_cuda_free_memory(ctx, limit);
    }
#else
    (void)ctx;
#endif
    *where = "host memory available";
    *limit = cayley_host_memory();
    return KEDR_OK;
}

/* KEDR_OK when the single-context dense search fits; else, on the GPU, *devices = 1 when the
 * 2-bit search fits on this GPU alone; else KEDR_ERR_NOMEM saying what would fit. */
static kedr_status check_memory(kedr_ctx *ctx, const kedr_cayley_group *g,
                                const kedr_cayley_options *opt, size_t need, int *devices)
{
    size_t limit;
    const char *where;
    KEDR_TRY(cayley_memory_allowed(ctx, opt, &limit, &where));
    if (need <= limit)
        return KEDR_OK;
    /* 2 bits per element instead of 3, with 1/64 to spare */
    if (KEDR_IS_CUDA(ctx) && kedr_cayley_multi_bytes(g) + limit / 64 <= limit) {
        kedr_log(KEDR_LOG_INFO, "%s: 3 bits per element do not fit in the %s; searching with "
                 "2 bits per element (the search over GPUs, on this GPU alone)", g->spec, where);
        *devices = 1;
        return KEDR_OK;
    }
    char need_s[32], limit_s[32];
    kedr_format_bytes((double)need, need_s, sizeof need_s);
    kedr_format_bytes((double)limit, limit_s, sizeof limit_s);
    /* What would fit instead: the search over several GPUs at 2 bits per element, or the sparse
     * mode, whose memory follows the widest levels (about 48 bytes a state, docs/cayley.md). */
    if (!KEDR_IS_CUDA(ctx))
        return kedr_fail(KEDR_ERR_NOMEM,
                         "%s needs %s in dense mode (3 bitmaps of %llu bits, one bit per element), "
                         "more than the %s of %s; --mode sparse fits while the widest levels hold "
                         "under about %.2g states", g->spec, need_s, (unsigned long long)g->order,
                         limit_s, where, (double)limit / 48.0);
    double gpus = ceil((double)kedr_cayley_multi_bytes(g) / (double)(limit ? limit : 1));
    return kedr_fail(KEDR_ERR_NOMEM,
                     "%s needs %s in dense mode (3 bitmaps of %llu bits, one bit per element), "
                     "more than the %s of %s: over GPUs at 2 bits per element it would take "
                     "%.0f GPU%s of this size (--devices %.0f); --mode sparse fits while the "
                     "widest levels hold under about %.2g states",
                     g->spec, need_s, (unsigned long long)g->order, limit_s, where, gpus,
                     gpus == 1 ? "" : "s", gpus, (double)limit / 48.0);
}

/* The search over GPUs: cuda only, a device count the host has, and within the memory limit
 * (each GPU's free memory is checked when it is set up). *devices: -1 becomes the count. */
static kedr_status check_devices(kedr_ctx *ctx, const kedr_cayley_group *g,
                                 const kedr_cayley_options *opt, int *devices)
{
    if (!KEDR_IS_CUDA(ctx))
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: devices = %d needs the cuda back "
                         "end (this context is cpu)", *devices);
    if (*devices < -1)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: devices = %d: expected -1 (all), "
                         "0 (one GPU, 3 bits per element) or a GPU count", *devices);
#ifdef KEDR_HAVE_CUDA
    if (*devices == -1)
        KEDR_TRY(cayley_multi_devices(devices));
#endif
    size_t need = kedr_cayley_multi_bytes(g);
    if (opt->memory_limit && need > opt->memory_limit) {
        char need_s[32], limit_s[32];
        kedr_format_bytes((double)need, need_s, sizeof need_s);
        kedr_format_bytes((double)opt->memory_limit, limit_s, sizeof limit_s);
        return kedr_fail(KEDR_ERR_NOMEM, "%s needs %s over GPUs (2 bits per element), more than "
                         "the memory limit of %s", g->spec, need_s, limit_s);
    }
    return KEDR_OK;
}

kedr_status cayley_push_level(kedr_cayley_result *res, size_t *len, size_t *cap, uint64_t f)
{
    if (*len == *cap) {
        size_t ncap = *cap ? 2 * *cap : 64;
        uint64_t *p = realloc(res->growth, ncap * sizeof *p);
        if (!p)
            return kedr_fail(KEDR_ERR_NOMEM, "kedr_cayley_growth: out of host memory for %zu levels",
                             ncap);
        res->growth = p;
        *cap = ncap;
    }
    res->growth[(*len)++] = f;
    return KEDR_OK;
}

/* ---- the level loop ---- */

/* Writes a checkpoint when one is asked for and due (or `force`); *last is when the last was,
 * *written says whether this call wrote one. */
static kedr_status maybe_checkpoint(const cayley_search *S, const kedr_cayley_options *opt,
                                    const kedr_cayley_result *res, int complete, int force,
                                    double *last, int *written)
{
    *written = 0;
    if (!opt || !opt->checkpoint_path)
        return KEDR_OK;
    double now = kedr_wall_seconds();
    int due = force || now - *last >= opt->checkpoint_every;
    if (S->agree_max && (due = S->agree_max(S->self, due)) < 0) /* every rank or none */
        return KEDR_ERR_IO;
    if (!due)
        return KEDR_OK;
    KEDR_TRY(S->checkpoint(S->self, opt->checkpoint_path, res, complete));
    *last = kedr_wall_seconds();
    *written = 1;
    return KEDR_OK;
}

/* Stops at a level boundary after a signal: saves the state (unless the last level's
 * checkpoint holds it) and says so. */
static kedr_status stop_interrupted(const cayley_search *S, const kedr_cayley_options *opt,
                                    const kedr_cayley_result *res, int saved, int signal)
{
    const char *path = opt ? opt->checkpoint_path : NULL;
    if (path && !saved)
        KEDR_TRY(S->checkpoint(S->self, path, res, 0));
    return kedr_fail(KEDR_ERR_INTERRUPTED, "%s: interrupted by signal %d after level %d%s%s",
                     S->g->spec, signal, res->diameter,
                     path ? "; saved to the checkpoint " : " (no --checkpoint to save it to)",
                     path ? path : "");
}

/* What the levels so far give: reached, the average distance, the time and the memory. */
static void finish(const cayley_search *S, kedr_cayley_result *res, double t0)
{
    double weighted = 0; /* sum s F(s) */
    res->reached = 0;
    for (int s = 0; s <= res->diameter; s++) {
        res->reached += res->growth[s];
        weighted += (double)s * (double)res->growth[s];
    }
    res->seconds = kedr_wall_seconds() - t0;
    res->average_distance = weighted / (double)res->reached;
    res->memory_bytes = S->memory(S->self);
}

kedr_status cayley_run_levels(const cayley_search *S, const kedr_cayley_options *opt,
                              kedr_cayley_result *res)
{
    const kedr_cayley_group *g = S->g;
    double t0 = kedr_wall_seconds(), last_checkpoint = t0;
    int max_levels = opt ? opt->max_levels : 0;
    res->resumed_from = -1;
    res->complete = 0;
    KEDR_TRY(S->start(S->self, opt, res));
    if (opt && opt->resume_path)
        res->resumed_from = res->diameter;
    size_t len = (size_t)res->diameter + 1, cap = len;
    finish(S, res, t0);
    kedr_cayley_level lv = {.level = res->diameter,
                            .new_elements = res->growth[res->diameter],
                            .reached = res->reached,
                            .memory_bytes = res->memory_bytes};
    if (res->resumed_from < 0 && opt && opt->on_level)
        opt->on_level(&lv, opt->user);
    if (res->complete && res->resumed_from >= 0 && g->ngens > 0 && S->confirm_ended)
        KEDR_TRY(S->confirm_ended(S->self, opt, res));
    /* a checkpoint of an ended search has nothing left to expand; it is still written out */
    if (res->complete)
        KEDR_TRY(maybe_checkpoint(S, opt, res, 1, 1, &last_checkpoint, &lv.checkpointed));
    for (int s = res->diameter + 1; !res->complete && (max_levels <= 0 || s <= max_levels); s++) {
        /* a signal stops the search between two levels, the only point where its state is
         * whole (on every back end: this loop drives the cpu, cuda and multi-GPU levels) */
        int signal = kedr_interrupted();
        if (S->agree_max && (signal = S->agree_max(S->self, signal)) < 0)
            return KEDR_ERR_IO;
        if (signal) {
            finish(S, res, t0);
            return stop_interrupted(S, opt, res, lv.checkpointed, signal);
        }
        double t = kedr_wall_seconds();
        uint64_t count = 0;
        if (g->ngens > 0) { /* no generators: the identity is all there is */
            kedr_status st = S->level(S->self, s, res, &count);
            if (st == KEDR_ERR_INTERRUPTED) {
                finish(S, res, t0);
                return stop_interrupted(S, opt, res, lv.checkpointed, kedr_interrupted());
            }
            KEDR_TRY(st);
        }
        double visits = (double)res->growth[s - 1] * g->ngens;
        res->edge_visits += visits;
        if (count == 0) {
            res->complete = 1;
            KEDR_TRY(maybe_checkpoint(S, opt, res, 1, 1, &last_checkpoint, &lv.checkpointed));
            break;
        }
        if (count > g->order - res->reached) /* would otherwise never end */
            return kedr_fail(KEDR_ERR_INVALID,
                             "kedr_cayley_growth: internal error: level %d of %s found %llu new "
                             "elements with only %llu left", s, g->spec, (unsigned long long)count,
                             (unsigned long long)(g->order - res->reached));
        KEDR_TRY(cayley_push_level(res, &len, &cap, count));
        res->diameter = s;
        res->reached += count;
        double now = kedr_wall_seconds();
        lv.level = s;
        lv.new_elements = count;
        lv.reached = res->reached;
        lv.edge_visits = visits;
        lv.memory_bytes = S->memory(S->self);
        lv.seconds = now - t0;
        lv.level_seconds = now - t;
        /* the last level of a run stopped by max_levels is always written */
        KEDR_TRY(maybe_checkpoint(S, opt, res, 0, s == max_levels, &last_checkpoint,
                                  &lv.checkpointed));
        if (opt && opt->on_level)
            opt->on_level(&lv, opt->user);
    }
    finish(S, res, t0);
    return KEDR_OK;
}

/* ---- the entry point ---- */

kedr_status kedr_cayley_growth(kedr_ctx *ctx, const kedr_cayley_group *g,
                               const kedr_cayley_options *opt, kedr_cayley_result *result)
{
    if (!ctx || !g || !result)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: %s is NULL",
                         !ctx ? "ctx" : !g ? "g" : "result");
    memset(result, 0, sizeof *result);
    KEDR_TRY(cayley_check_group(g, "kedr_cayley_growth"));
    if (opt && (!(opt->checkpoint_every >= 0) || opt->max_levels < 0))
        return kedr_fail(KEDR_ERR_INVALID,
                         "kedr_cayley_growth: checkpoint_every %g, max_levels %d: expected both >= 0",
                         opt->checkpoint_every, opt->max_levels);
    int sparse = 0;
    KEDR_TRY(cayley_sparse_chosen(g, opt, &sparse));
    if (sparse && opt && opt->devices != 0)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_cayley_growth: devices = %d applies to the dense "
                         "mode; %s runs in sparse mode", opt->devices, g->spec);
    kedr_status s;
    if (sparse) {
        s = cayley_sparse_growth(ctx, g, opt, result);
    } else {
        int devices = opt ? opt->devices : 0;
        if (devices != 0)
            KEDR_TRY(check_devices(ctx, g, opt, &devices));
        else
            KEDR_TRY(check_memory(ctx, g, opt, kedr_cayley_dense_bytes(g), &devices));
        s = cayley_dense_growth(ctx, g, opt, devices, result);
    }
    /* interrupted: the result holds the levels done */
    if (s != KEDR_OK && s != KEDR_ERR_INTERRUPTED)
        kedr_cayley_result_free(result);
    return s;
}

void kedr_cayley_result_free(kedr_cayley_result *result)
{
    if (!result)
        return;
    free(result->growth);
    memset(result, 0, sizeof *result);
}
