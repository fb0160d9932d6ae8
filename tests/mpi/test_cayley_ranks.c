/* kedr cayley over MPI ranks (ctest runs it alone and under mpirun on 1 to 4 ranks): the dense
 * search split into slices of the element ranks, against the one-context dense search
 * (kedr_cayley_growth) on every back end:
 * 1. the partition: for groups of awkward orders and every rank count they allow, the slices
 *    cover [0, order) in whole blocks and kedr_cayley_rank_owner names the slice of every
 *    element (all of them for small groups); B_18 (5^18, past 2^32 elements a slice) for every
 *    rank count up to KEDR_CAYLEY_MAX_RANKS; too many ranks refused naming the most;
 * 2. growth functions over the ranks equal to one context's, F(s) by F(s), on Burnside
 *    quotients, pancake and burnt pancake, bubble, star, transpositions, lrx and abelian groups
 *    (orders not divisible by the rank count), with the default batches, with the smallest
 *    (a level in many rounds) and with the default sized by a memory limit between the two
 *    (kedr_cayley_ranks_plan_fit: the rank's memory within the limit less its headroom), and
 *    with products sent in 8 bytes (slices of 2^40 elements or more) instead of 5; the sizing
 *    itself (1b) for 1-4 ranks and memory sizes from 1 kB to 64 GB;
 * 3. per-rank checkpoints: stopped by max_levels then resumed = the straight run; a SIGINT on
 *    rank 0 alone stops every rank at the same level, saved, and the resumed run is the straight
 *    one; the checkpoints of N ranks taken up by one, and one rank's by N, and a checkpoint of
 *    one process's search (kedr_cayley_growth's format) by N; another rank's file, a damaged file and a file whose checksum matches but whose codes
 *    disagree with F are refused on every rank;
 * 4. refusals: a memory limit below a rank's need (saying how much), on every rank or on one
 *    rank only (every rank returns that rank's error; likewise a checkpoint one rank cannot
 *    write, and a failure in a round on one rank, KEDR_CAYLEY_RANKS_FAIL), the sparse kinds,
 *    mode sparse, devices;
 * 5. the products sent between the ranks, exactly those whose owner differs, and under a
 *    quarter of all for pancake, burnt pancake and star (the permutations' ranks keep prefix
 *    reversals on their rank); every element's code in the slices at level 4 against its
 *    distance in the element queries' table;
 * 6. the batches' path (kedr_comm_dev): GPU to GPU with the other ranks of the host on cuda,
 *    through host memory on the cpu and with KEDR_COMM_IPC=0; both give the same results, as
 *    do transfers ordered by CUDA IPC events (KEDR_CAYLEY_RANKS_ORDERED=1). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "kedr/cayley.h"
#include "kedr/comm.h"
#include "cayley/ck_file.h"
#include "cayley/ranks.h"

#include "test_util.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

static kedr_comm *comm;
static int rank, size;

static kedr_cayley_group *parse(const char *spec, int inverses)
{
    kedr_cayley_group *g = NULL;
    kedr_status s = kedr_cayley_parse(spec, inverses, &g);
    TU_CHECK(s == KEDR_OK, "parse %s: %s", spec, kedr_last_error());
    return g;
}

/* 1b. the default batches sized by a rank's memory (kedr_cayley_ranks_plan_fit): within the
 * memory less its headroom whenever the least batches fit, never fewer products than the least
 * (a block's worst case) nor more than a whole slice's, growing with the memory; --batch wins;
 * no memory known: the fixed default; on cuda the host's staging copy fits the host memory */
static void check_plan_fit(void)
{
    static const char *specs[] = {"pancake:9", "burnside:8", "abelian:7,11,29", "star:8"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        kedr_cayley_group *g = parse(specs[i], i == 1);
        if (!g)
            continue;
        int ok = 1;
        char why[160] = "";
        for (int n = 1; n <= 4 && ok; n++)
            for (int cuda = 0; cuda <= 1 && ok; cuda++) {
                kedr_cayley_ranks_plan least, most, fixed, q, prev = {0};
                ok &= kedr_cayley_ranks_plan_make(g, n, 1, &least) == KEDR_OK &&
                      kedr_cayley_ranks_plan_make(g, n, SIZE_MAX / 64, &most) == KEDR_OK &&
                      kedr_cayley_ranks_plan_make(g, n, 0, &fixed) == KEDR_OK;
                size_t lneed = cuda ? least.gpu_bytes : least.cpu_bytes;
                for (size_t mem = 1024; mem < ((size_t)1 << 36) && ok; mem = mem * 3 / 2) {
                    ok &= kedr_cayley_ranks_plan_fit(g, n, 0, mem, 0, cuda, &q) == KEDR_OK;
                    size_t need = cuda ? q.gpu_bytes : q.cpu_bytes;
                    size_t room = mem - kedr_cayley_ranks_headroom(mem);
                    int fits = need <= room || (need == lneed && lneed > room);
                    int bounds = q.batch_entries >= least.batch_entries &&
                                 q.batch_entries <= most.batch_entries &&
                                 q.batch_entries >= prev.batch_entries;
                    /* all the room that is left is less than one more entry of every batch */
                    uint64_t per = 3 * (uint64_t)(n > 1 ? n - 1 : 1) * (uint64_t)q.entry_bytes;
                    int full = n == 1 || q.batch_entries == most.batch_entries || need > room ||
                               room - need < per;
                    if (!(fits && bounds && full)) {
                        snprintf(why, sizeof why, "%d ranks, %s, memory %zu: %zu needed, %llu "
                                 "products a batch (least %llu, most %llu)", n,
                                 cuda ? "cuda" : "cpu", mem, need,
                                 (unsigned long long)q.batch_entries,
                                 (unsigned long long)least.batch_entries,
                                 (unsigned long long)most.batch_entries);
                        ok = 0;
                    }
                    prev = q;
                }
                /* the user's batches, and no memory known */
                ok &= kedr_cayley_ranks_plan_fit(g, n, 12345, (size_t)1 << 30, 0, cuda, &q) ==
                          KEDR_OK &&
                      kedr_cayley_ranks_plan_make(g, n, 12345, &prev) == KEDR_OK &&
                      q.batch_entries == prev.batch_entries && q.gpu_bytes == prev.gpu_bytes;
                ok &= kedr_cayley_ranks_plan_fit(g, n, 0, 0, 0, cuda, &q) == KEDR_OK &&
                      q.batch_entries == fixed.batch_entries;
                /* cuda: a host too small for the staging copy lowers the batches */
                if (cuda && n > 1) {
                    size_t host = least.host_bytes * 3;
                    ok &= kedr_cayley_ranks_plan_fit(g, n, 0, (size_t)1 << 34, host, 1, &q) ==
                              KEDR_OK &&
                          q.host_bytes <= host - kedr_cayley_ranks_headroom(host) &&
                          (q.batch_entries > least.batch_entries ||
                           most.batch_entries == least.batch_entries);
                }
                if (!ok && !why[0])
                    snprintf(why, sizeof why, "%d ranks, %s: --batch, no memory or the host",
                             n, cuda ? "cuda" : "cpu");
            }
        TU_CHECK(ok, "%s: batches sized by the memory: %s", specs[i], why);
        kedr_cayley_group_free(g);
    }
}

/* 1. the partition */
static void check_partition(void)
{
    static const char *specs[] = {"abelian:7,11,29", "pancake:7", "burnside:6", "bubble:8",
                                  "burnt-pancake:5"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        kedr_cayley_group *g = parse(specs[i], 0);
        if (!g)
            continue;
        uint64_t units = (g->order + KEDR_CAYLEY_RANK_BLOCK - 1) / KEDR_CAYLEY_RANK_BLOCK;
        int ok = 1;
        for (int n = 1; n <= (int)units && ok; n++) {
            kedr_cayley_ranks_plan p;
            ok &= kedr_cayley_ranks_plan_make(g, n, 0, &p) == KEDR_OK;
            uint64_t next = 0;
            for (int r = 0; r < n && ok; r++) {
                uint64_t lo, hi;
                ok &= kedr_cayley_rank_slice(g, n, r, &lo, &hi) == KEDR_OK && lo == next &&
                      hi > lo && lo % KEDR_CAYLEY_RANK_BLOCK == 0;
                for (uint64_t x = lo; x < hi && ok; x++) /* every element */
                    ok &= kedr_cayley_rank_owner(g, n, x) == r;
                next = hi;
            }
            ok &= next == g->order;
        }
        TU_CHECK(ok, "%s: the slices over 1..%llu ranks and every element's owner", specs[i],
                 (unsigned long long)units);
        kedr_cayley_ranks_plan p;
        kedr_status s = kedr_cayley_ranks_plan_make(g, (int)units + 1, 0, &p);
        char want[64];
        snprintf(want, sizeof want, "at most %llu", (unsigned long long)units);
        TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), want),
                 "%s over %llu ranks refused saying '%s': %s", specs[i],
                 (unsigned long long)units + 1, want, kedr_last_error());
        kedr_cayley_group_free(g);
    }
    /* B_18: every rank count up to the most, the plan's own checks (both ends of every slice)
     * and its memory: 2 bits an element of the largest slice */
    kedr_cayley_group *g = parse("burnside:18", 0);
    if (!g)
        return;
    int ok = 1, worst = 0;
    for (int n = 1; n <= KEDR_CAYLEY_MAX_RANKS && ok; n++) {
        kedr_cayley_ranks_plan p;
        ok &= kedr_cayley_ranks_plan_make(g, n, 0, &p) == KEDR_OK;
        uint64_t blocks = (p.slice_max + p.block_elements - 1) / p.block_elements;
        ok &= p.code_bytes == blocks * p.block_elements / 4 && p.slice_max - p.slice_min <= 512 &&
              blocks <= ((uint64_t)1 << 20) && p.code_bytes >= p.slice_max / 4;
        uint64_t lo, hi;
        ok &= kedr_cayley_rank_slice(g, n, n - 1, &lo, &hi) == KEDR_OK && hi == g->order;
        ok &= kedr_cayley_rank_owner(g, n, g->order - 1) == n - 1 &&
              kedr_cayley_rank_owner(g, n, 0) == 0;
        worst = n;
    }
    TU_CHECK(ok && g->order == 3814697265625ull, "burnside:18 over 1..%d ranks (stopped at %d): "
             "%s", KEDR_CAYLEY_MAX_RANKS, worst, kedr_last_error());
    kedr_cayley_ranks_plan p8;
    TU_OK(kedr_cayley_ranks_plan_make(g, 8, 0, &p8));
    TU_CHECK(p8.slice_max > ((uint64_t)1 << 32) && p8.code_bytes > (size_t)119e9 &&
                 p8.code_bytes < (size_t)120e9,
             "B_18 over 8 ranks: slices of %llu elements, %zu bytes of codes a rank",
             (unsigned long long)p8.slice_max, p8.code_bytes);
    kedr_status s = kedr_cayley_ranks_plan_make(g, KEDR_CAYLEY_MAX_RANKS + 1, 0, &p8);
    TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), "at most 1024"),
             "more than %d ranks refused: %s", KEDR_CAYLEY_MAX_RANKS, kedr_last_error());
    kedr_cayley_group_free(g);
    /* the entries products travel in: offsets up to a slice of 2^40 - 1 elements in 5 bytes,
     * any 64-bit value in 8, the bytes after an entry untouched */
    static const uint64_t values[] = {0, 1, 255, 256, 0xFFFFFFFFull, 0x100000000ull,
                                      ((uint64_t)1 << 40) - 1, 0x123456789Aull,
                                      0xFEDCBA9876543210ull, UINT64_MAX};
    int packed = 1;
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        for (int bytes = 5; bytes <= 8; bytes += 3) {
            if (bytes == 5 && values[i] >> 40)
                continue;
            unsigned char buf[10];
            memset(buf, 0xA5, sizeof buf);
            cayley_ranks_put(buf + 1, values[i], bytes);
            packed &= cayley_ranks_get(buf + 1, bytes) == values[i] && buf[0] == 0xA5 &&
                      buf[1 + bytes] == 0xA5;
        }
    TU_CHECK(packed, "5- and 8-byte entries round trip");
    check_plan_fit();
}

static int same_result(const kedr_cayley_result *a, const kedr_cayley_result *b)
{
    if (a->diameter != b->diameter || a->reached != b->reached || a->complete != b->complete ||
        a->average_distance != b->average_distance || a->edge_visits != b->edge_visits)
        return 0;
    for (int s = 0; s <= a->diameter; s++)
        if (a->growth[s] != b->growth[s])
            return 0;
    return 1;
}

/* 2. growth over the ranks against one context's dense search (wide: products sent in 8 bytes,
 * as for slices of 2^40 elements or more, instead of 5) */
static void check_growth(kedr_ctx *ctx, const char *spec, int inverses, int wide, int sized)
{
    kedr_cayley_group *g = parse(spec, inverses);
    if (!g)
        return;
    uint64_t units = (g->order + KEDR_CAYLEY_RANK_BLOCK - 1) / KEDR_CAYLEY_RANK_BLOCK;
    if (units < (uint64_t)size) { /* refused; checked in check_partition */
        kedr_cayley_group_free(g);
        return;
    }
    kedr_cayley_result one, many;
    kedr_cayley_options dense = {.mode = KEDR_CAYLEY_DENSE};
    TU_OK(kedr_cayley_growth(ctx, g, &dense, &one));
    /* the default batches, the smallest (a level in many rounds), and the default sized by a
     * memory limit half way between the least batches' need and the largest's */
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA;
    kedr_cayley_ranks_plan least, most;
    TU_OK(kedr_cayley_ranks_plan_make(g, size, 1, &least));
    TU_OK(kedr_cayley_ranks_plan_make(g, size, SIZE_MAX / 64, &most));
    size_t lneed = cuda ? least.gpu_bytes : least.cpu_bytes;
    size_t half = (lneed + (cuda ? most.gpu_bytes : most.cpu_bytes)) / 2;
    size_t limit = half + half / 15;
    for (int small = 0; small <= (sized ? 2 : 1); small++) {
        kedr_cayley_options opt = {.batch_bytes = small == 1 ? 1 : 0,
                                   .memory_limit = small == 2 ? limit : 0};
        if (wide)
            setenv("KEDR_CAYLEY_RANKS_WIDE", "1", 1);
        kedr_status s = kedr_cayley_growth_on(ctx, comm, g, &opt, &many);
        unsetenv("KEDR_CAYLEY_RANKS_WIDE");
        TU_CHECK(s == KEDR_OK, "%s%s over %d ranks: %s", spec, inverses ? " with inverses" : "",
                 size, kedr_last_error());
        if (s != KEDR_OK)
            continue;
        TU_CHECK(same_result(&one, &many) && many.complete && many.reached == g->order &&
                     many.ranks == size && many.mode == KEDR_CAYLEY_DENSE,
                 "%s%s over %d ranks (%s batches): diameter %d / %d, reached %llu / %llu", spec,
                 inverses ? " with inverses" : "", size,
                 small == 1 ? "the smallest" : small ? "memory-sized" : "default", one.diameter,
                 many.diameter, (unsigned long long)one.reached,
                 (unsigned long long)many.reached);
        if (small == 2 && size > 1)
            TU_CHECK(many.memory_bytes <= limit - kedr_cayley_ranks_headroom(limit) &&
                         (many.memory_bytes > lneed || most.batch_entries == least.batch_entries),
                     "%s over %d ranks, a limit of %zu: %zu bytes a rank (least %zu)", spec,
                     size, limit, many.memory_bytes, lneed);
        kedr_cayley_result_free(&many);
    }
    if (rank == 0)
        printf("%-22s%s: diameter %d, %llu elements, %d ranks agree with one context%s\n", spec,
               inverses ? " (inverses)" : "", one.diameter, (unsigned long long)one.reached, size,
               wide ? " (8-byte entries)" : "");
    kedr_cayley_result_free(&one);
    kedr_cayley_group_free(g);
}

static unsigned char *read_all(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    *n = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = tu_host_alloc(len > 0 ? (size_t)len : 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

static void write_all(const char *p, const unsigned char *b, size_t n)
{
    FILE *f = fopen(p, "wb");
    TU_CHECK(f && fwrite(b, 1, n, f) == n && fclose(f) == 0, "cannot write %s", p);
}

static int stop_at = -1;
static void raise_at(const kedr_cayley_level *lv, void *user)
{
    (void)user;
    if (lv->level == stop_at && rank == 0)
        raise(SIGINT);
}

/* The resume of base fails on every rank with status want and a message holding text. */
static void refused(kedr_ctx *ctx, const kedr_cayley_group *g, const char *base, kedr_status want,
                    const char *text, const char *what)
{
    kedr_cayley_result r;
    kedr_cayley_options opt = {.resume_path = base};
    kedr_status s = kedr_cayley_growth_on(ctx, comm, g, &opt, &r);
    TU_CHECK(s == want && strstr(kedr_last_error(), text) != NULL,
             "%s: expected %s and '%s', got %s: %s", what, kedr_status_name(want), text,
             kedr_status_name(s), kedr_last_error());
    if (s == KEDR_OK)
        kedr_cayley_result_free(&r);
}

/* 3. checkpoints */
static void check_checkpoints(kedr_ctx *ctx)
{
    kedr_cayley_group *g = parse("burnside:7", 1);
    if (!g)
        return;
    int32_t pid = (int32_t)getpid();
    TU_OK(kedr_comm_bcast(comm, &pid, sizeof pid, 0));
    char base[128], mine[160], other[160];
    snprintf(base, sizeof base, "test_cayley_ranks_%d.chk", (int)pid);
    snprintf(mine, sizeof mine, "test_cayley_ranks_%d.rank%dof%d.chk", (int)pid, rank, size);
    snprintf(other, sizeof other, "test_cayley_ranks_%d.rank%dof%d.chk", (int)pid,
             (rank + 1) % size, size);
    kedr_cayley_result straight, part, rest;
    kedr_cayley_options o = {.batch_bytes = 1};
    TU_OK(kedr_cayley_growth_on(ctx, comm, g, &o, &straight));
    /* max_levels 9, then the rest */
    kedr_cayley_options a = {.checkpoint_path = base, .max_levels = 9, .batch_bytes = 1,
                             .checkpoint_every = 1e9};
    TU_OK(kedr_cayley_growth_on(ctx, comm, g, &a, &part));
    TU_CHECK(!part.complete && part.diameter == 9 && access(mine, R_OK) == 0,
             "stopped after level %d (complete %d), %s written", part.diameter, part.complete,
             mine);
    kedr_cayley_options b = {.resume_path = base, .checkpoint_path = base};
    TU_OK(kedr_cayley_growth_on(ctx, comm, g, &b, &rest));
    TU_CHECK(rest.resumed_from == 9 && rest.complete && rest.diameter == straight.diameter &&
                 memcmp(rest.growth, straight.growth, 8 * ((size_t)rest.diameter + 1)) == 0,
             "%d ranks: resumed from level %d: diameter %d / %d", size, rest.resumed_from,
             rest.diameter, straight.diameter);
    kedr_cayley_result_free(&part);
    kedr_cayley_result_free(&rest);
    /* the ended search's checkpoint resumes to the same result at once */
    TU_OK(kedr_cayley_growth_on(ctx, comm, g, &b, &rest));
    TU_CHECK(rest.complete && rest.resumed_from == straight.diameter &&
                 rest.diameter == straight.diameter,
             "the ended checkpoint resumed: from %d, diameter %d", rest.resumed_from,
             rest.diameter);
    kedr_cayley_result_free(&rest);

    /* a signal on rank 0 alone: every rank stops after the same level, saved */
    kedr_interrupt_install();
    stop_at = 6;
    kedr_cayley_options c = {.checkpoint_path = base, .checkpoint_every = 1e9,
                             .on_level = raise_at};
    kedr_status s = kedr_cayley_growth_on(ctx, comm, g, &c, &part);
    TU_CHECK(s == KEDR_ERR_INTERRUPTED && part.diameter == 6 && !part.complete,
             "rank %d: interrupted after level %d (%s): %s", rank, part.diameter,
             kedr_status_name(s), kedr_last_error());
    if (s == KEDR_OK || s == KEDR_ERR_INTERRUPTED)
        kedr_cayley_result_free(&part);
    kedr_interrupt_clear();
    stop_at = -1;
    TU_OK(kedr_cayley_growth_on(ctx, comm, g, &b, &rest));
    TU_CHECK(rest.resumed_from == 6 && rest.diameter == straight.diameter &&
                 memcmp(rest.growth, straight.growth, 8 * ((size_t)rest.diameter + 1)) == 0,
             "after the signal: resumed from %d, diameter %d", rest.resumed_from, rest.diameter);
    kedr_cayley_result_free(&rest);

    /* another rank count: each process alone (comm NULL: one rank) takes up the checkpoints
     * of the N ranks, and the N ranks take up those of one process alone */
    kedr_cayley_options stop9 = {.checkpoint_path = base, .max_levels = 9,
                                 .checkpoint_every = 1e9};
    TU_OK(kedr_cayley_growth_on(ctx, comm, g, &stop9, &part));
    kedr_cayley_result_free(&part);
    TU_OK(kedr_comm_barrier(comm));
    kedr_cayley_options on1 = {.resume_path = base};
    s = kedr_cayley_growth_on(ctx, NULL, g, &on1, &rest);
    TU_CHECK(s == KEDR_OK && rest.resumed_from == 9 && rest.diameter == straight.diameter &&
                 memcmp(rest.growth, straight.growth, 8 * ((size_t)rest.diameter + 1)) == 0,
             "the checkpoints of %d ranks on one: %s", size, kedr_last_error());
    if (s == KEDR_OK)
        kedr_cayley_result_free(&rest);
    TU_OK(kedr_comm_barrier(comm));
    char alone[128], alone_file[160];
    snprintf(alone, sizeof alone, "test_cayley_ranks_%d_alone.chk", (int)pid);
    snprintf(alone_file, sizeof alone_file, "test_cayley_ranks_%d_alone.rank0of1.chk", (int)pid);
    if (rank == 0) { /* rank 0's process alone writes them */
        kedr_cayley_options w1 = {.checkpoint_path = alone, .max_levels = 7,
                                  .checkpoint_every = 1e9};
        TU_OK(kedr_cayley_growth_on(ctx, NULL, g, &w1, &part));
        kedr_cayley_result_free(&part);
    }
    TU_OK(kedr_comm_barrier(comm));
    kedr_cayley_options onN = {.resume_path = alone};
    s = kedr_cayley_growth_on(ctx, comm, g, &onN, &rest);
    TU_CHECK(s == KEDR_OK && rest.resumed_from == 7 && rest.diameter == straight.diameter &&
                 memcmp(rest.growth, straight.growth, 8 * ((size_t)rest.diameter + 1)) == 0,
             "the checkpoint of one rank on %d: %s", size, kedr_last_error());
    if (s == KEDR_OK)
        kedr_cayley_result_free(&rest);
    TU_OK(kedr_comm_barrier(comm));
    if (rank == 0)
        remove(alone_file);

    /* a checkpoint of one process's search (kedr_cayley_growth, this context's back end),
     * stopped and ended, taken up by the N ranks; damaged, refused */
    char dense[128];
    snprintf(dense, sizeof dense, "test_cayley_ranks_%d_dense.chk", (int)pid);
    for (int ended = 0; ended <= 1; ended++) {
        if (rank == 0) {
            kedr_cayley_options w = {.checkpoint_path = dense, .max_levels = ended ? 0 : 8,
                                     .checkpoint_every = 1e9, .mode = KEDR_CAYLEY_DENSE};
            TU_OK(kedr_cayley_growth(ctx, g, &w, &part));
            kedr_cayley_result_free(&part);
        }
        TU_OK(kedr_comm_barrier(comm));
        kedr_cayley_options rd = {.resume_path = dense};
        s = kedr_cayley_growth_on(ctx, comm, g, &rd, &rest);
        int from = ended ? straight.diameter : 8;
        TU_CHECK(s == KEDR_OK && rest.resumed_from == from && rest.complete &&
                     rest.diameter == straight.diameter &&
                     memcmp(rest.growth, straight.growth, 8 * ((size_t)rest.diameter + 1)) == 0,
                 "one process's checkpoint (%s) on %d ranks: %s", ended ? "ended" : "level 8",
                 size, kedr_last_error());
        if (s == KEDR_OK)
            kedr_cayley_result_free(&rest);
        TU_OK(kedr_comm_barrier(comm));
    }
    if (rank == 0) {
        size_t dn = 0;
        unsigned char *d = read_all(dense, &dn);
        if (d && dn > 300) {
            d[dn - 100] ^= 0x01;
            write_all(dense, d, dn);
        }
        free(d);
    }
    TU_OK(kedr_comm_barrier(comm));
    refused(ctx, g, dense, KEDR_ERR_PARSE, "checksum", "a damaged checkpoint of one process");
    TU_OK(kedr_comm_barrier(comm));
    if (rank == 0)
        remove(dense);

    /* stop at level 9 again for the damaged files */
    TU_OK(kedr_cayley_growth_on(ctx, comm, g, &a, &part));
    kedr_cayley_result_free(&part);
    size_t n = 0;
    unsigned char *good = read_all(mine, &n);
    TU_CHECK(good && n > 300, "read %s (%zu bytes)", mine, n);
    if (!good || n <= 300) {
        kedr_cayley_group_free(g);
        return;
    }
    TU_OK(kedr_comm_barrier(comm));
    /* another rank's file in this rank's place */
    if (size > 1) {
        size_t m = 0;
        unsigned char *theirs = read_all(other, &m);
        TU_OK(kedr_comm_barrier(comm));
        write_all(mine, theirs, m);
        TU_OK(kedr_comm_barrier(comm));
        refused(ctx, g, base, KEDR_ERR_PARSE, "was expected", "another rank's file");
        free(theirs);
        write_all(mine, good, n);
    }
    /* a flipped byte on the last rank: the checksum, on every rank */
    unsigned char *bad = tu_host_alloc(n);
    memcpy(bad, good, n);
    if (rank == size - 1) {
        bad[n - 20] ^= 0x10;
        write_all(mine, bad, n);
    }
    TU_OK(kedr_comm_barrier(comm));
    refused(ctx, g, base, KEDR_ERR_PARSE, "checksum", "a damaged file");
    /* the checksum made to match, an unreached element (code 0, past the identity) marked
     * expanded on rank 0: the counts over the ranks disagree with F */
    memcpy(bad, good, n);
    if (rank == 0) {
        size_t codes = 232 + 8 * 10, bytes = n - codes - 8;
        for (size_t i = codes; i < codes + bytes; i++) /* the first code 0 */
            if ((bad[i] & 3) == 0) {
                bad[i] |= 3;
                break;
            } else if ((bad[i] & 0x0c) == 0) {
                bad[i] |= 0x0c;
                break;
            }
        uint64_t sum = 0, ones = 0;
        cayley_ck_sum(&sum, &ones, bad, 232);
        cayley_ck_sum(&sum, &ones, bad + 232, 80);
        cayley_ck_sum(&sum, &ones, bad + codes, bytes);
        memcpy(bad + n - 8, &sum, 8);
    }
    write_all(mine, bad, n);
    TU_OK(kedr_comm_barrier(comm));
    refused(ctx, g, base, KEDR_ERR_PARSE, "inconsistent", "codes against F");
    /* another group's checkpoint */
    write_all(mine, good, n);
    TU_OK(kedr_comm_barrier(comm));
    kedr_cayley_group *h = parse("burnside:7", 0);
    if (h)
        refused(ctx, h, base, KEDR_ERR_PARSE, "--inverses", "without inverses");
    kedr_cayley_group_free(h);
    free(bad);
    free(good);
    kedr_cayley_result_free(&straight);
    TU_OK(kedr_comm_barrier(comm));
    remove(mine);
    kedr_cayley_group_free(g);
}

/* 4. refusals */
static void check_refusals(kedr_ctx *ctx)
{
    kedr_cayley_group *g = parse("pancake:8", 0);
    kedr_cayley_result r;
    /* one rank's failure is every rank's, with that rank's message, and nobody waits: the last
     * rank alone short of memory; the last rank alone unable to write its checkpoint */
    kedr_cayley_options one = {.memory_limit = rank == size - 1 ? 4096 : 0};
    kedr_status s = kedr_cayley_growth_on(ctx, comm, g, &one, &r);
    char who[32];
    snprintf(who, sizeof who, "rank %d: ", size - 1);
    TU_CHECK(s == KEDR_ERR_NOMEM && (size == 1 || strstr(kedr_last_error(), who)),
             "rank %d short of memory, seen on rank %d: %s: %s", size - 1, rank,
             kedr_status_name(s), kedr_last_error());
    int32_t pid = (int32_t)getpid();
    TU_OK(kedr_comm_bcast(comm, &pid, sizeof pid, 0));
    char base[96], blocked[128];
    snprintf(base, sizeof base, "test_cayley_ranks_w%d.chk", (int)pid);
    snprintf(blocked, sizeof blocked, "test_cayley_ranks_w%d.rank%dof%d.chk", (int)pid, size - 1,
             size);
    if (rank == size - 1)
        TU_CHECK(mkdir(blocked, 0700) == 0, "mkdir %s", blocked);
    TU_OK(kedr_comm_barrier(comm));
    kedr_cayley_options ck = {.checkpoint_path = base, .max_levels = 3};
    s = kedr_cayley_growth_on(ctx, comm, g, &ck, &r);
    TU_CHECK(s == KEDR_ERR_IO && strstr(kedr_last_error(), blocked),
             "rank %d cannot write its checkpoint, seen on rank %d: %s: %s", size - 1, rank,
             kedr_status_name(s), kedr_last_error());
    TU_OK(kedr_comm_barrier(comm));
    char mine[128];
    snprintf(mine, sizeof mine, "test_cayley_ranks_w%d.rank%dof%d.chk", (int)pid, rank, size);
    if (rank == size - 1)
        rmdir(blocked);
    else
        remove(mine);
    kedr_cayley_options o = {.memory_limit = 4096};
    s = kedr_cayley_growth_on(ctx, comm, g, &o, &r);
    TU_CHECK(s == KEDR_ERR_NOMEM && strstr(kedr_last_error(), "a rank") &&
                 strstr(kedr_last_error(), "needs"),
             "a memory limit below a rank's need: %s: %s", kedr_status_name(s),
             kedr_last_error());
    /* a failure in a round on one rank (the round's notes carry it): every rank returns that
     * rank's error, in the 1st round and in a later one (smallest batches: many rounds), and the
     * ranks are still in step for the next search */
    for (int k = 1; k <= 7; k += 6) {
        char knob[32];
        snprintf(knob, sizeof knob, "%d:%d", size - 1, k);
        setenv("KEDR_CAYLEY_RANKS_FAIL", knob, 1);
        kedr_cayley_options small = {.batch_bytes = 1};
        s = kedr_cayley_growth_on(ctx, comm, g, &small, &r);
        unsetenv("KEDR_CAYLEY_RANKS_FAIL");
        TU_CHECK(s == KEDR_ERR_INVALID && (size == 1 || strstr(kedr_last_error(), who)) &&
                     strstr(kedr_last_error(), "KEDR_CAYLEY_RANKS_FAIL"),
                 "rank %d failing in round %d, seen on rank %d: %s: %s", size - 1, k, rank,
                 kedr_status_name(s), kedr_last_error());
    }
    kedr_cayley_result after, ref;
    kedr_cayley_options dense = {.mode = KEDR_CAYLEY_DENSE};
    TU_OK(kedr_cayley_growth_on(ctx, comm, g, NULL, &after));
    TU_OK(kedr_cayley_growth(ctx, g, &dense, &ref));
    TU_CHECK(same_result(&after, &ref), "the search after failed ones, over %d ranks", size);
    kedr_cayley_result_free(&after);
    kedr_cayley_result_free(&ref);
    kedr_cayley_options sp = {.mode = KEDR_CAYLEY_SPARSE};
    s = kedr_cayley_growth_on(ctx, comm, g, &sp, &r);
    TU_CHECK(s == KEDR_ERR_UNSUPPORTED, "mode sparse over ranks: %s", kedr_last_error());
    kedr_cayley_options dv = {.devices = 2};
    s = kedr_cayley_growth_on(ctx, comm, g, &dv, &r);
    TU_CHECK(s == KEDR_ERR_INVALID && strstr(kedr_last_error(), "devices"),
             "devices over ranks: %s", kedr_last_error());
    kedr_cayley_group_free(g);
    kedr_cayley_group *c = parse("cube2", 0);
    s = kedr_cayley_growth_on(ctx, comm, c, NULL, &r);
    TU_CHECK(s == KEDR_ERR_UNSUPPORTED && strstr(kedr_last_error(), "no ranking"),
             "cube2 over ranks: %s", kedr_last_error());
    kedr_cayley_group_free(c);
}

/* 5. which products leave their rank. Permutations are ranked with the last position the most
 * significant, so a prefix reversal of length k < n keeps rank / k! and mostly its owner. For
 * each group: the products sent (summed over the ranks) equal the products x * s, counted here
 * from the generators' definition and kedr_cayley_rank_owner, whose owner is not x's (every
 * element is expanded once); for the prefix-reversal families and star, under a quarter of all
 * products over 2 to 4 ranks (the first-position-first ranking sent 49-83%: docs/cayley.md).
 * Then the elements themselves: a search over the ranks stopped after level 4 leaves in each
 * rank's checkpoint the code of every element of its slice, 3 below distance 4 and 1 at
 * distance 4 (0 beyond), checked element by element against the distance table of the element
 * queries (one process), so that the ranks search and the queries number the elements alike. */
static void check_locality(kedr_ctx *ctx)
{
    static const struct {
        const char *spec;
        double bound; /* of the fraction of products sent; 0: none */
    } cases[] = {{"pancake:8", 0.25}, {"burnt-pancake:6", 0.25}, {"star:8", 0.25},
                 {"lrx:7", 0}};
    int32_t pid = (int32_t)getpid();
    TU_OK(kedr_comm_bcast(comm, &pid, sizeof pid, 0));
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        kedr_cayley_group *g = parse(cases[c].spec, 0);
        if (!g)
            continue;
        int n = g->n, signed_ = g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION;
        uint64_t cross = 0, bad = 0;
        for (uint64_t x = 0; x < g->order; x++) {
            uint32_t e[32], f[32];
            uint64_t y = 0;
            bad += kedr_cayley_unrank(g, x, e) != KEDR_OK;
            int ox = kedr_cayley_rank_owner(g, size, x);
            for (int k = 0; k < g->ngens; k++) {
                for (int i = 0; i < n; i++) {
                    f[i] = e[g->perm[k][i]];
                    if (signed_)
                        f[n + i] = e[n + g->perm[k][i]] ^ ((g->flip[k] >> i) & 1u);
                }
                bad += kedr_cayley_rank(g, f, &y) != KEDR_OK;
                cross += kedr_cayley_rank_owner(g, size, y) != ox;
            }
        }
        TU_CHECK(bad == 0, "%s: %llu elements or products not ranked", cases[c].spec,
                 (unsigned long long)bad);
        kedr_cayley_result r;
        TU_OK(kedr_cayley_growth_on(ctx, comm, g, NULL, &r));
        double all = (double)g->order * g->ngens, frac = (double)cross / all;
        TU_CHECK(r.products_sent == (double)cross && r.edge_visits == all,
                 "%s over %d ranks: %.0f products sent, %llu leave their rank (of %.0f / %.0f)",
                 cases[c].spec, size, r.products_sent, (unsigned long long)cross, r.edge_visits,
                 all);
        TU_CHECK(cases[c].bound == 0 || frac < cases[c].bound,
                 "%s over %d ranks: %.1f%% of the products leave their rank (expected under "
                 "%.0f%%)", cases[c].spec, size, 100 * frac, 100 * cases[c].bound);
        if (rank == 0)
            printf("%-22s: %5.1f%% of the products leave their rank over %d ranks\n",
                   cases[c].spec, 100 * frac, size);
        kedr_cayley_result_free(&r);

        /* the elements of each slice at level 4, against the distance table */
        char base[128], mine[160];
        snprintf(base, sizeof base, "test_cayley_ranks_%d_loc.chk", (int)pid);
        snprintf(mine, sizeof mine, "test_cayley_ranks_%d_loc.rank%dof%d.chk", (int)pid, rank,
                 size);
        kedr_cayley_options stop = {.checkpoint_path = base, .max_levels = 4,
                                    .checkpoint_every = 1e9};
        TU_OK(kedr_cayley_growth_on(ctx, comm, g, &stop, &r));
        kedr_cayley_result_free(&r);
        kedr_cayley_distances *t = NULL;
        TU_OK(kedr_cayley_distances_build(ctx, g, 0, &t));
        size_t len = 0;
        unsigned char *b = read_all(mine, &len);
        uint64_t lo = 0, hi = 0, wrong = 0, at4 = 0;
        TU_OK(kedr_cayley_rank_slice(g, size, rank, &lo, &hi));
        size_t codes = 232 + 8 * 5;
        TU_CHECK(b && len >= codes + (hi - lo + 15) / 16 * 4 && get32(b + 180) == 4,
                 "%s: %s (%zu bytes) is not a checkpoint at level 4", cases[c].spec, mine, len);
        for (uint64_t x = lo; t && b && len >= codes + (hi - lo + 15) / 16 * 4 && x < hi; x++) {
            uint32_t w = get32(b + codes + 4 * ((x - lo) / 16));
            unsigned code = (w >> (2 * ((x - lo) % 16))) & 3u;
            int d = -1;
            kedr_cayley_distance(t, x, &d);
            wrong += code != (d < 4 ? 3u : d == 4 ? 1u : 0u);
            at4 += d == 4;
        }
        uint64_t sums[2] = {wrong, at4};
        TU_OK(kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, sums, 2));
        TU_CHECK(sums[0] == 0 && sums[1] > 0, "%s over %d ranks: %llu elements' codes at level 4 "
                 "disagree with their distances (%llu at distance 4)", cases[c].spec, size,
                 (unsigned long long)sums[0], (unsigned long long)sums[1]);
        free(b);
        remove(mine);
        kedr_cayley_distances_free(t);
        kedr_cayley_group_free(g);
    }
}

/* 6. the batches' path: by default GPU to GPU (kedr_comm_dev, CUDA IPC) with every other rank
 * of this host on cuda (the test hosts: ranks sharing one GPU, or GPUs with peer access), through
 * host memory on the cpu; with KEDR_COMM_IPC=0 through host memory everywhere. Both paths give
 * one context's growth function bit for bit, and send the same products. */
static void check_paths(kedr_ctx *ctx)
{
    static const struct {
        const char *spec;
        int inverses;
        size_t batch;
    } cases[] = {{"pancake:8", 0, 0}, {"burnside:7", 1, 1}, {"burnt-pancake:5", 0, 1}};
    int cuda = kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA, local = 0;
    for (int r = 0; r < size; r++)
        local += r != rank && kedr_comm_same_host(comm, r);
    const char *was = getenv("KEDR_COMM_IPC");
    char keep[16] = "";
    if (was)
        snprintf(keep, sizeof keep, "%s", was);
    int ipc_on = !(was && !strcmp(was, "0"));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kedr_cayley_group *g = parse(cases[i].spec, cases[i].inverses);
        if (!g)
            continue;
        kedr_cayley_result one, dflt, host;
        kedr_cayley_options dense = {.mode = KEDR_CAYLEY_DENSE}, opt = {.batch_bytes =
                                                                            cases[i].batch};
        TU_OK(kedr_cayley_growth(ctx, g, &dense, &one));
        kedr_status s1 = kedr_cayley_growth_on(ctx, comm, g, &opt, &dflt);
        setenv("KEDR_COMM_IPC", "0", 1);
        kedr_status s2 = kedr_cayley_growth_on(ctx, comm, g, &opt, &host);
        if (was)
            setenv("KEDR_COMM_IPC", keep, 1);
        else
            unsetenv("KEDR_COMM_IPC");
        TU_CHECK(s1 == KEDR_OK && s2 == KEDR_OK, "%s over %d ranks, default and KEDR_COMM_IPC=0: "
                 "%s", cases[i].spec, size, kedr_last_error());
        if (s1 == KEDR_OK && s2 == KEDR_OK) {
            int want = cuda && ipc_on ? local : 0;
            TU_CHECK(same_result(&one, &dflt) && same_result(&one, &host) &&
                         dflt.products_sent == host.products_sent,
                     "%s over %d ranks: the default path (diameter %d, %.0f products sent) and "
                     "the host path (%d, %.0f) against one context (%d)", cases[i].spec, size,
                     dflt.diameter, dflt.products_sent, host.diameter, host.products_sent,
                     one.diameter);
            TU_CHECK(dflt.direct_ranks == want && host.direct_ranks == 0,
                     "%s on rank %d of %d (%s): batches GPU to GPU with %d ranks by default "
                     "(expected %d, the other ranks of this host on cuda), %d with "
                     "KEDR_COMM_IPC=0 (expected 0)", cases[i].spec, rank, size,
                     kedr_backend_name(kedr_ctx_backend(ctx)), dflt.direct_ranks, want,
                     host.direct_ranks);
            if (rank == 0 && i == 0)
                printf("batches GPU to GPU with %d of %d other ranks by default, 0 with "
                       "KEDR_COMM_IPC=0; same growth functions\n", dflt.direct_ranks, size - 1);
        }
        /* the transfers ordered by CUDA IPC events (KEDR_CAYLEY_RANKS_ORDERED=1; on the cpu
         * the same path as by default), with the smallest batches: many rounds, each slot
         * reused every other round */
        setenv("KEDR_CAYLEY_RANKS_ORDERED", "1", 1);
        kedr_cayley_options tiny = {.batch_bytes = 1};
        kedr_cayley_result ord;
        kedr_status s3 = kedr_cayley_growth_on(ctx, comm, g, &tiny, &ord);
        unsetenv("KEDR_CAYLEY_RANKS_ORDERED");
        TU_CHECK(s3 == KEDR_OK, "%s over %d ranks, KEDR_CAYLEY_RANKS_ORDERED=1: %s",
                 cases[i].spec, size, kedr_last_error());
        if (s3 == KEDR_OK) {
            TU_CHECK(same_result(&one, &ord) && (s1 != KEDR_OK ||
                                                 ord.products_sent == dflt.products_sent),
                     "%s over %d ranks, ordered transfers: diameter %d, %.0f products sent",
                     cases[i].spec, size, ord.diameter, ord.products_sent);
            kedr_cayley_result_free(&ord);
        }
        if (s1 == KEDR_OK)
            kedr_cayley_result_free(&dflt);
        if (s2 == KEDR_OK)
            kedr_cayley_result_free(&host);
        kedr_cayley_result_free(&one);
        kedr_cayley_group_free(g);
    }
}

static void run_backend(kedr_backend be)
{
    kedr_ctx *ctx = NULL;
    int dev = be == KEDR_BACKEND_CUDA ? kedr_comm_device(comm, kedr_device_count()) : 0;
    if (kedr_ctx_create(&ctx, be, dev) != KEDR_OK) {
        TU_CHECK(0, "a %s context: %s", kedr_backend_name(be), kedr_last_error());
        return;
    }
    if (rank == 0)
        printf("back end: %s\n", kedr_backend_name(be));
    static const struct {
        const char *spec;
        int inverses;
        int sized; /* also with the batches sized by a memory limit */
    } cases[] = {{"burnside:5", 0, 0},       {"burnside:6", 1, 1},  {"burnside:7", 0, 0},
                 {"burnside:8", 1, 0},       {"pancake:7", 0, 0},   {"pancake:8", 0, 1},
                 {"burnt-pancake:5", 0, 1},  {"bubble:7", 0, 0},    {"star:7", 1, 1},
                 {"transpositions:7", 0, 0}, {"lrx:8", 0, 1},       {"abelian:7,11,29", 1, 1},
                 {"abelian:3,5,7,11,2", 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_growth(ctx, cases[i].spec, cases[i].inverses, 0, cases[i].sized);
    check_growth(ctx, "burnside:7", 1, 1, 0);
    check_growth(ctx, "burnt-pancake:5", 0, 1, 0);
    check_paths(ctx);
    check_checkpoints(ctx);
    check_refusals(ctx);
    check_locality(ctx);
    kedr_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (kedr_comm_init(&argc, &argv, &comm) != KEDR_OK) {
        fprintf(stderr, "kedr_comm_init: %s\n", kedr_last_error());
        return 1;
    }
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    kedr_backend list[2];
    int nb = tu_backends(list);
    if (rank == 0)
        check_partition();
    for (int i = 0; i < nb; i++)
        run_backend(list[i]);
    uint64_t counts[2] = {(uint64_t)tu_passed, (uint64_t)tu_failed};
    kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, counts, 2);
    if (rank == 0)
        printf("test_cayley_ranks (%d ranks): %llu passed, %llu failed\n", size,
               (unsigned long long)counts[0], (unsigned long long)counts[1]);
    kedr_comm_finalize(comm);
    return counts[1] ? 1 : 0;
}
