/* kedr cayley GROUP: growth function, diameter and average distance of a Cayley graph. Under
 * mpirun the dense search runs over the ranks (kedr_cayley_growth_on, one GPU a rank): rank 0
 * prints and writes, each rank writes its own checkpoint (NAME.rankRofN.chk). */
#include "cli.h"
#include "kedr/comm.h"
#include "kedr/plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *cmd = "cayley";
static kedr_comm *cay_comm;
static int cay_rank, cay_nranks = 1;

static void help(void)
{
    printf("usage: kedr cayley GROUP [options]\n\n"
           "Computes the growth function F(s) of the Cayley graph of GROUP (how many elements lie\n"
           "at distance s from the identity), its diameter and average distance, by a dense\n"
           "breadth-first search over ranked elements: 3 bits of memory per group element.\n\n"
           "groups:\n");
    char line[512];
    for (int i = 0; kedr_cayley_family_help(i, line, sizeof line); i++) {
        char *tab = strchr(line, '\t'), *text = tab ? tab + 1 : line;
        if (tab)
            *tab = 0;
        printf("  %-18s", tab ? line : "");
        for (char *nl; (nl = strchr(text, '\n')); text = nl + 1)
            printf(" %.*s\n%20s", (int)(nl - text), text, "");
        printf(" %s\n", text);
    }
    printf("\n"
           "options:\n"
           "  --inverses           add the inverse of each generator (abelian: -1 as well)\n"
           "  --metric htm|qtm     cube2: half-turn (default) or quarter-turn metric\n"
           "  --basis nq|kuznetsov burnside:K: the pc basis of B0(2,5) (default nq, kedr's\n"
           "                       own, K = 1..26); kuznetsov: the one behind Kuznetsov's\n"
           "                       published diameters (K = 1..18 and 22; it differs from\n"
           "                       nq at K = 15 and 17)\n"
           "  --mode M             auto (default), dense or sparse (sorted layers; also runs\n"
           "                       the ranked groups, to cross-check the two modes)\n"
           "  --json FILE          also write the results as JSON\n"
           "  --csv FILE           also write s, F(s) and the running total as CSV\n"
           "  --plot FILE.png      also draw F(s) on a log scale as a PNG\n"
           "  --devices N|all      cuda, dense mode: spread the search over N GPUs of this\n"
           "                       host (2 bits per element, split evenly between them)\n"
           "  --batch SIZE         over MPI ranks: a rank's outgoing batch of products, all\n"
           "                       destinations (default: as large as a rank's memory\n"
           "                       allows, less 1/16 of it, at most 1 GiB; a level takes\n"
           "                       several rounds when its products need them)\n"
           "  --dry-run            allocate nothing: print the split of the group over the\n"
           "                       ranks (--ranks N, default the ranks of this run), the\n"
           "                       memory each rank needs, and check the split's arithmetic\n"
           "  --ranks N            the rank count --dry-run plans for\n"
           "  --memory-limit SIZE  refuse runs needing more than SIZE bytes (e.g. 512M, 4G)\n"
           "  --checkpoint FILE    save the search at level boundaries (atomically) so that\n"
           "                       --resume can continue it after an interruption\n"
           "  --checkpoint-every SECONDS  at most one checkpoint per SECONDS (default 600;\n"
           "                       0: every level); the last level is always saved\n"
           "  --resume FILE        continue from a checkpoint (of the same GROUP and\n"
           "                       --inverses, written on any back end)\n"
           "  --max-levels K       stop after level K (with --checkpoint: resume later)\n"
           "  --word ELEMENT       a shortest word in the generators for ELEMENT (ranked\n"
           "                       groups): rank:R, or its entries separated by commas:\n"
           "                       permutations the images of 1..N, e.g. [3,1,2] (signed: a\n"
           "                       minus marks a flipped one, [-2,1]); abelian the\n"
           "                       coordinates; burnside:K the exponents of a1..aK (0..4)\n"
           "  --distance ELEMENT   the distance of ELEMENT from the identity\n"
           "  --farthest K         up to K elements at the diameter, each with a shortest word\n"
           "                       (the queries run their own search: 1 byte per element, on\n"
           "                       the host)\n"
           "  -q, --quiet          no progress lines on stderr\n" CLI_COMMON_HELP
           "\nUnder mpirun (mpirun -np N kedr cayley GROUP) the dense search runs over the N\n"
           "ranks, one GPU a rank (or one cpu process): each owns a contiguous slice of the\n"
           "elements' ranks at 2 bits an element; rank 0 prints and writes the outputs, each\n"
           "rank writes --checkpoint DIR/NAME.chk as DIR/NAME.rankRofN.chk, and --resume\n"
           "DIR/NAME.chk reads them back on any number of ranks (one included), or a\n"
           "checkpoint of a run of one process.\n"
           "\nCtrl-C or SIGTERM stops the search at the end of the level (a second one at once):\n"
           "it saves the checkpoint (with --checkpoint), prints and writes the levels done and\n"
           "exits with status 128 + the signal (130 for Ctrl-C, 143 for SIGTERM).\n"
           "\nexamples:\n"
           "  kedr cayley pancake:11\n"
           "  kedr cayley abelian:8,8,8 --inverses --json torus.json\n"
           "  kedr cayley pancake:13 --checkpoint p13.ckpt   (later: --resume p13.ckpt)\n"
           "  kedr cayley burnside:10 --inverses\n"
           "  kedr cayley burnside:15 --basis kuznetsov\n"
           "  mpirun -np 4 kedr cayley burnside:17 --json b17.json\n"
           "  kedr cayley burnside:18 --dry-run --ranks 8\n");
}

static void progress(const kedr_cayley_level *lv, void *user)
{
    const kedr_cayley_group *g = user;
    char mem[32];
    kedr_format_bytes((double)lv->memory_bytes, mem, sizeof mem);
    double rate = lv->level_seconds > 0 ? lv->edge_visits / lv->level_seconds : 0;
    fprintf(stderr, "kedr cayley: level %d: %llu new, %llu reached (%.3g%%), %.3f s, %.3g edge "
                    "visits/s, memory %s\n",
            lv->level, (unsigned long long)lv->new_elements, (unsigned long long)lv->reached,
            100.0 * (double)lv->reached / (double)g->order, lv->seconds, rate, mem);
    if (lv->checkpointed)
        fprintf(stderr, "kedr cayley: level %d saved to the checkpoint\n", lv->level);
}

static void print_table(const kedr_cayley_group *g, const kedr_cayley_result *r, kedr_ctx *ctx,
                        int interrupted)
{
    char mem[32];
    kedr_format_bytes((double)r->memory_bytes, mem, sizeof mem);
    printf("group              %s (%s)%s\n", g->spec, g->description,
           g->inverses ? " with inverses" : "");
    printf("order              %llu\n", (unsigned long long)g->order);
    printf("generators         %d, closed under inverses: %s\n", g->ngens,
           g->inverse_closed ? "yes" : "no");
    if (r->ranks > 0)
        printf("back end           %s, %d MPI rank%s (one %s a rank)\n",
               kedr_backend_name(kedr_ctx_backend(ctx)), r->ranks, r->ranks == 1 ? "" : "s",
               kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA ? "GPU" : "process");
    else if (r->devices > 0)
        printf("back end           cuda (%d GPU%s from GPU %d)\n", r->devices,
               r->devices == 1 ? "" : "s", kedr_ctx_device(ctx));
    else if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA)
        printf("back end           cuda (GPU %d)\n", kedr_ctx_device(ctx));
    else
        printf("back end           cpu (%d threads)\n", kedr_ctx_threads(ctx));
    if (r->mode == KEDR_CAYLEY_SPARSE)
        printf("memory             %s (sparse: sorted layers of %d-bit states)\n\n", mem,
               64 * (g->state_words > 1 ? g->state_words : 1));
    else if (r->ranks > 0)
        printf("memory             %s a rank (dense: 2 bits per element of its slice, and its "
               "batches)\n\n", mem);
    else if (r->devices > 0)
        printf("memory             %s (dense: 2 bits per element over %d GPU%s)\n\n", mem,
               r->devices, r->devices == 1 ? "" : "s");
    else
        printf("memory             %s (dense: 3 bitmaps of %llu bits)\n\n", mem,
               (unsigned long long)g->order);
    printf("%6s %20s %20s\n", "s", "F(s)", "reached");
    uint64_t total = 0;
    for (int s = 0; s <= r->diameter; s++) {
        total += r->growth[s];
        printf("%6d %20llu %20llu\n", s, (unsigned long long)r->growth[s],
               (unsigned long long)total);
    }
    if (r->resumed_from >= 0)
        printf("\nresumed            from level %d\n", r->resumed_from);
    if (r->complete)
        printf("\ndiameter           %d\n", r->diameter);
    else
        printf("\nstopped            after level %d (%s); not the diameter\n", r->diameter,
               interrupted ? "interrupted" : "--max-levels");
    printf("average distance   %.6f\n", r->average_distance);
    printf("elements reached   %llu of %llu\n", (unsigned long long)r->reached,
           (unsigned long long)g->order);
    printf("time               %.3f s, %.3g edge visits/s\n", r->seconds,
           r->seconds > 0 ? r->edge_visits / r->seconds : 0);
}

/* Writes the results as JSON through kedr_file_begin/commit (PATH.tmp renamed over a regular
 * PATH); every string goes through kedr_json_string. */
static kedr_status write_json(const char *path, const kedr_cayley_group *g,
                              const kedr_cayley_result *r, kedr_ctx *ctx, int interrupted)
{
    kedr_file_writer w;
    KEDR_TRY(kedr_file_begin(&w, path));
    FILE *f = KEDR_FILE(&w);
    fputs("{\n  \"group\": ", f);
    kedr_json_string(f, g->spec);
    fputs(",\n  \"description\": ", f);
    kedr_json_string(f, g->description);
    fprintf(f, ",\n  \"inverses\": %s,\n", g->inverses ? "true" : "false");
    fprintf(f, "  \"order\": %llu,\n  \"generators\": %d,\n  \"inverse_closed\": %s,\n",
            (unsigned long long)g->order, g->ngens, g->inverse_closed ? "true" : "false");
    fputs("  \"backend\": ", f);
    kedr_json_string(f, kedr_backend_name(kedr_ctx_backend(ctx)));
    fputs(",\n  \"mode\": ", f);
    kedr_json_string(f, r->mode == KEDR_CAYLEY_SPARSE ? "sparse" : "dense");
    if (r->ranks > 0) /* the search over ranks */
        fprintf(f, ",\n  \"ranks\": %d", r->ranks);
    fputs(",\n  \"growth\": [", f);
    for (int s = 0; s <= r->diameter; s++)
        fprintf(f, "%s%llu", s ? ", " : "", (unsigned long long)r->growth[s]);
    fprintf(f, "],\n  \"complete\": %s,\n  \"interrupted\": %s,\n  \"resumed_from\": ",
            r->complete ? "true" : "false", interrupted ? "true" : "false");
    if (r->resumed_from >= 0)
        fprintf(f, "%d,\n  \"diameter\": ", r->resumed_from);
    else
        fprintf(f, "null,\n  \"diameter\": ");
    if (r->complete)
        fprintf(f, "%d", r->diameter);
    else
        fprintf(f, "null");
    fprintf(f, ",\n  \"average_distance\": %.17g,\n  \"reached\": %llu,\n",
            r->average_distance, (unsigned long long)r->reached);
    fprintf(f, "  \"edge_visits\": %.17g,\n  \"seconds\": %.6f,\n  \"memory_bytes\": %zu\n}\n",
            r->edge_visits, r->seconds, r->memory_bytes);
    return kedr_file_commit(&w);
}

/* F(s) on a log scale; prints the error and returns 0 when the plot cannot be made. */
static int write_plot(const char *path, const kedr_cayley_group *g, const kedr_cayley_result *r)
{
    size_t n = (size_t)r->diameter + 1;
    double *xy = malloc(2 * n * sizeof *xy);
    if (!xy) {
        fprintf(stderr, "kedr %s: --plot %s: out of host memory\n", cmd, path);
        return 0;
    }
    for (size_t s = 0; s < n; s++) {
        xy[s] = (double)s;
        xy[n + s] = (double)r->growth[s];
    }
    char title[200];
    snprintf(title, sizeof title, "growth of %s%s", g->spec, g->inverses ? " with inverses" : "");
    kedr_plot_axes axes = {title, "distance s", "F(s)", 1};
    kedr_status st = kedr_plot_series(path, &axes, n, xy, xy + n);
    free(xy);
    if (st != KEDR_OK)
        fprintf(stderr, "kedr %s: --plot %s: %s\n", cmd, path, kedr_last_error());
    return st == KEDR_OK;
}

static kedr_status write_csv(const char *path, const kedr_cayley_result *r)
{
    kedr_file_writer w;
    KEDR_TRY(kedr_file_begin(&w, path));
    FILE *f = KEDR_FILE(&w);
    fprintf(f, "s,F,reached\n");
    uint64_t total = 0;
    for (int s = 0; s <= r->diameter; s++) {
        total += r->growth[s];
        fprintf(f, "%d,%llu,%llu\n", s, (unsigned long long)r->growth[s],
                (unsigned long long)total);
    }
    return kedr_file_commit(&w);
}

/* Prints "NAME ELEMENT (rank R)" then its distance and a shortest word. */
static int print_query(const kedr_cayley_group *g, const kedr_cayley_distances *t, uint64_t rank,
                       int with_word)
{
    char buf[600], name[160];
    kedr_cayley_element_format(g, rank, buf, sizeof buf);
    printf("element            %s (rank %llu)\n", buf, (unsigned long long)rank);
    int d = -1;
    if (kedr_cayley_distance(t, rank, &d) != KEDR_OK || d < 0) {
        fprintf(stderr, "kedr %s: %s is not reached from the identity by the generators of %s\n",
                cmd, buf, g->spec);
        return CLI_EXIT_FAIL;
    }
    printf("distance           %d\n", d);
    if (!with_word)
        return 0;
    int word[256], len = 0;
    if (kedr_cayley_word(t, rank, word, 256, &len) != KEDR_OK) {
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
        return CLI_EXIT_FAIL;
    }
    printf("word               %s", len ? "" : "(empty: the identity)");
    for (int i = 0; i < len; i++)
        printf("%s%s", i ? " " : "", kedr_cayley_generator_name(g, word[i], name, sizeof name));
    printf("\n");
    return 0;
}

/* --word, --distance and --farthest: one search for the distance table, then the answers. */
static int run_queries(kedr_ctx *ctx, const kedr_cayley_group *g, size_t memory_limit,
                       const char *word, const char *distance, long long farthest)
{
    uint64_t wr = 0, dr = 0;
    if (word && kedr_cayley_element_parse(g, word, &wr) != KEDR_OK)
        cli_usage_error(cmd, "--word: %s", kedr_last_error());
    if (distance && kedr_cayley_element_parse(g, distance, &dr) != KEDR_OK)
        cli_usage_error(cmd, "--distance: %s", kedr_last_error());
    kedr_cayley_distances *t = NULL;
    if (kedr_cayley_distances_build(ctx, g, memory_limit, &t) != KEDR_OK) {
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
        return CLI_EXIT_FAIL;
    }
    printf("group              %s (%s)%s\n", g->spec, g->description,
           g->inverses ? " with inverses" : "");
    printf("order              %llu\n", (unsigned long long)g->order);
    printf("diameter           %d\n", kedr_cayley_distances_diameter(t));
    int code = 0;
    if (distance) {
        printf("\n");
        code = print_query(g, t, dr, 0);
    }
    if (word && !code) {
        printf("\n");
        code = print_query(g, t, wr, 1);
    }
    if (farthest > 0 && !code) {
        uint64_t *ranks = malloc((size_t)farthest * sizeof *ranks), n = 0;
        if (!ranks || kedr_cayley_farthest(t, (uint64_t)farthest, ranks, &n) != KEDR_OK) {
            fprintf(stderr, "kedr %s: --farthest %lld: out of host memory\n", cmd, farthest);
            code = CLI_EXIT_FAIL;
        }
        for (uint64_t i = 0; i < n && !code; i++) {
            printf("\nfarthest %llu of %llu\n", (unsigned long long)i + 1, (unsigned long long)n);
            code = print_query(g, t, ranks[i], 1);
        }
        free(ranks);
    }
    kedr_cayley_distances_free(t);
    return code;
}

/* The ranks of GPUs of `gib` GiB that hold g (the least rank count whose plan fits), 0: none up
 * to KEDR_CAYLEY_MAX_RANKS. */
static int ranks_for(const kedr_cayley_group *g, size_t batch, double gib, int cuda)
{
    for (int n = 1; n <= KEDR_CAYLEY_MAX_RANKS; n++) {
        kedr_cayley_ranks_plan q;
        if (kedr_cayley_ranks_plan_fit(g, n, batch, (size_t)(gib * 1073741824.0), 0, cuda, &q) !=
            KEDR_OK)
            return 0;
        if ((double)(cuda ? q.gpu_bytes : q.cpu_bytes) <= gib * 1073741824.0)
            return n;
    }
    return 0;
}

/* --dry-run: the split of g over `ranks` ranks and what a rank needs; nothing allocated. The
 * default batches follow a rank's memory: the plan shown is that of --batch, else of
 * --memory-limit, else of an H100's 78 GiB, and a line a memory size gives the others. */
static int dry_run(const kedr_cayley_group *g, int ranks, size_t batch, size_t memory_limit)
{
    kedr_cayley_ranks_plan p;
    size_t h100 = (size_t)78 << 30, h200 = (size_t)139 << 30;
    size_t shown = memory_limit ? memory_limit : h100;
    if (kedr_cayley_ranks_plan_fit(g, ranks, batch, shown, 0, 1, &p) != KEDR_OK) {
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
        return CLI_EXIT_FAIL;
    }
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    printf("group              %s (%s)%s\n", g->spec, g->description,
           g->inverses ? " with inverses" : "");
    printf("order              %llu (ranks 0 to %llu, 64-bit)\n", (unsigned long long)g->order,
           (unsigned long long)g->order - 1);
    printf("ranks              %d: slices of %llu to %llu elements (whole blocks of %d but the "
           "last)\n\n", ranks, (unsigned long long)p.slice_min, (unsigned long long)p.slice_max,
           KEDR_CAYLEY_RANK_BLOCK);
    printf("%6s %20s %20s %20s\n", "rank", "first", "last", "elements");
    for (int r = 0; r < ranks; r++) {
        if (ranks > 8 && r == 4)
            printf("%6s\n", "...");
        if (ranks > 8 && r >= 4 && r < ranks - 4)
            continue;
        uint64_t lo = 0, hi = 0;
        kedr_cayley_rank_slice(g, ranks, r, &lo, &hi);
        printf("%6d %20llu %20llu %20llu\n", r, (unsigned long long)lo,
               (unsigned long long)hi - 1, (unsigned long long)(hi - lo));
    }
    char shown_s[32];
    kedr_format_bytes((double)shown, shown_s, sizeof shown_s);
    printf("\nrounds             blocks of %llu elements; a batch holds %llu products for one "
           "rank (%s)\n", (unsigned long long)p.block_elements,
           (unsigned long long)p.batch_entries,
           batch ? "--batch"
           : memory_limit ? "the default on cuda for --memory-limit"
                          : "the default on a GPU of 78 GiB free, an H100");
    if (!batch) {
        printf("default batches    as large as a rank's memory allows less 1/16 of it (at most 1 "
               "GiB), by the free memory a run finds (GPU: shared by the ranks on it; cpu: the "
               "host's available memory shared by its ranks); --batch SIZE sets them\n");
        size_t sizes[3] = {h100, h200, memory_limit};
        const char *names[3] = {"on a GPU of 78 GiB", "on a GPU of 139 GiB",
                                "--memory-limit"};
        for (int i = 0; i < 3; i++) {
            kedr_cayley_ranks_plan q;
            if (!sizes[i] || kedr_cayley_ranks_plan_fit(g, ranks, 0, sizes[i], 0, 1, &q) !=
                                 KEDR_OK)
                continue;
            char m[32], bb[32], nb[32];
            kedr_format_bytes((double)sizes[i], m, sizeof m);
            kedr_format_bytes((double)(q.batch_bytes + q.receive_bytes), bb, sizeof bb);
            kedr_format_bytes((double)q.gpu_bytes, nb, sizeof nb);
            printf("  %-19s %s: %llu products a batch, batches %s, %s of GPU memory a "
                   "rank%s\n", names[i], m, (unsigned long long)q.batch_entries, bb, nb,
                   q.gpu_bytes > sizes[i] ? " (does not fit)" : "");
        }
    }
    printf("memory a rank      codes %s (2 bits an element), batches %s, receiving up to %s\n",
           kedr_format_bytes((double)p.code_bytes, b1, sizeof b1),
           kedr_format_bytes((double)p.batch_bytes, b2, sizeof b2),
           kedr_format_bytes((double)p.receive_bytes, b3, sizeof b3));
    printf("                   cuda: %s of GPU memory and %s of host memory; cpu: %s of host "
           "memory\n", kedr_format_bytes((double)p.gpu_bytes, b4, sizeof b4),
           kedr_format_bytes((double)p.host_bytes, b5, sizeof b5),
           kedr_format_bytes((double)p.cpu_bytes, b6, sizeof b6));
    printf("whole search       %s of GPU memory over the %d ranks\n",
           kedr_format_bytes((double)p.gpu_bytes * ranks, b1, sizeof b1), ranks);
    static const struct { const char *name; double gib; } gpus[] = {
        {"H100 (78 GiB usable)", 78}, {"H200 (139 GiB usable)", 139}};
    for (int i = 0; i < 2; i++) {
        int n = ranks_for(g, batch, gpus[i].gib, 1);
        if (n)
            printf("fits               on %d GPU%s of an %s or more%s\n", n, n > 1 ? "s" : "",
                   gpus[i].name, n <= ranks ? "" : " (more ranks than planned here)");
        else
            printf("fits               on no number of %s up to %d\n", gpus[i].name,
                   KEDR_CAYLEY_MAX_RANKS);
    }
    printf("checked            the slices cover [0, %llu) in order, each nonempty and of whole "
           "blocks, and the owner of the first and last element of every slice (and of the next "
           "one's first) is computed right\n", (unsigned long long)g->order);
    return 0;
}

/* Whether BASE.rank0ofM.chk exists for some M: checkpoints of the search over ranks. */
static int rank_files_exist(const char *base)
{
    size_t len = strlen(base);
    int ext = len >= 4 && strcmp(base + len - 4, ".chk") == 0;
    char p[1100];
    for (int m = 1; m <= KEDR_CAYLEY_MAX_RANKS; m++) {
        snprintf(p, sizeof p, "%.*s.rank0of%d.chk", (int)(ext ? len - 4 : len), base, m);
        if (access(p, F_OK) == 0)
            return 1;
    }
    return 0;
}

static int run_cayley(int argc, char **argv);

int cmd_cayley(int argc, char **argv)
{
    if (kedr_comm_init(NULL, NULL, &cay_comm) != KEDR_OK) {
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
        return CLI_EXIT_FAIL;
    }
    cay_rank = kedr_comm_rank(cay_comm);
    cay_nranks = kedr_comm_size(cay_comm);
    int rc = 0;
    /* rank 0 prints; the others' errors are every rank's (agreed) and rank 0 says them */
    if (cay_rank > 0 && !freopen("/dev/null", "w", stdout)) {
        fprintf(stderr, "kedr %s: rank %d: cannot redirect stdout\n", cmd, cay_rank);
        rc = CLI_EXIT_FAIL;
    }
    if (rc == 0)
        rc = run_cayley(argc, argv);
    kedr_comm_finalize(cay_comm);
    return rc;
}

static int run_cayley(int argc, char **argv)
{
    cli_common c = {KEDR_BACKEND_AUTO, 0};
    const char *spec = NULL, *json = NULL, *csv = NULL, *plot = NULL, *metric = NULL;
    const char *word = NULL, *distance = NULL, *basis = NULL;
    long long farthest = 0;
    int inverses = 0, quiet = 0, mode_given = 0, dry = 0, plan_ranks = 0;
    kedr_cayley_options opt = {.on_level = progress, .mode = KEDR_CAYLEY_AUTO,
                               .checkpoint_every = 600};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help();
            return 0;
        }
        if (cli_common_option(argc, argv, &i, &c, cmd))
            continue;
        if (strcmp(a, "--inverses") == 0)
            inverses = 1;
        else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
            quiet = 1;
        else if (cli_is_option(a, "--json"))
            json = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--csv"))
            csv = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--metric"))
            metric = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--basis"))
            basis = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--word"))
            word = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--distance"))
            distance = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--farthest"))
            farthest = cli_int(cli_value(argc, argv, &i, cmd), 1, 1000000, "--farthest", cmd);
        else if (cli_is_option(a, "--mode")) {
            const char *m = cli_value(argc, argv, &i, cmd);
            mode_given = 1;
            if (strcmp(m, "auto") == 0)
                opt.mode = KEDR_CAYLEY_AUTO;
            else if (strcmp(m, "dense") == 0)
                opt.mode = KEDR_CAYLEY_DENSE;
            else if (strcmp(m, "sparse") == 0)
                opt.mode = KEDR_CAYLEY_SPARSE;
            else
                cli_usage_error(cmd, "--mode %s: expected auto, dense or sparse", m);
        } else if (cli_is_option(a, "--plot"))
            plot = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--checkpoint-every"))
            opt.checkpoint_every = (double)cli_int(cli_value(argc, argv, &i, cmd), 0, 1000000000,
                                                   "--checkpoint-every", cmd);
        else if (cli_is_option(a, "--checkpoint"))
            opt.checkpoint_path = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--resume"))
            opt.resume_path = cli_value(argc, argv, &i, cmd);
        else if (cli_is_option(a, "--max-levels"))
            opt.max_levels = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, 1 << 24,
                                          "--max-levels", cmd);
        else if (cli_is_option(a, "--devices")) {
            const char *v = cli_value(argc, argv, &i, cmd);
            opt.devices = strcmp(v, "all") == 0
                              ? -1
                              : (int)cli_int(v, 1, 1024, "--devices", cmd);
        } else if (cli_is_option(a, "--batch"))
            opt.batch_bytes = cli_size(cli_value(argc, argv, &i, cmd), "--batch", cmd);
        else if (strcmp(a, "--dry-run") == 0)
            dry = 1;
        else if (cli_is_option(a, "--ranks"))
            plan_ranks = (int)cli_int(cli_value(argc, argv, &i, cmd), 1, KEDR_CAYLEY_MAX_RANKS,
                                      "--ranks", cmd);
        else if (cli_is_option(a, "--memory-limit"))
            opt.memory_limit = cli_size(cli_value(argc, argv, &i, cmd), "--memory-limit", cmd);
        else if (a[0] == '-' && a[1] != 0)
            cli_usage_error(cmd, "unknown option '%s'", a);
        else if (spec)
            cli_usage_error(cmd, "one GROUP expected, got '%s' and '%s'", spec, a);
        else
            spec = a;
    }
    if (!spec)
        cli_usage_error(cmd, "missing GROUP (e.g. pancake:9 or abelian:4,4)");

    char cube[16];
    if (metric) {
        if (strcmp(spec, "cube2") != 0)
            cli_usage_error(cmd, "--metric applies to cube2 only (got '%s')", spec);
        if (strcmp(metric, "htm") != 0 && strcmp(metric, "qtm") != 0)
            cli_usage_error(cmd, "--metric %s: expected htm or qtm", metric);
        snprintf(cube, sizeof cube, "cube2:%s", metric);
        spec = cube;
    }
    kedr_cayley_group *g = NULL;
    if (kedr_cayley_parse_basis(spec, basis, inverses, &g) != KEDR_OK)
        cli_usage_error(cmd, "%s", kedr_last_error());
    if (quiet || cay_rank > 0)
        opt.on_level = NULL;
    opt.user = g;
    if (plan_ranks && !dry)
        cli_usage_error(cmd, "--ranks %d plans a --dry-run; a search runs over the ranks mpirun "
                        "starts (mpirun -np %d kedr cayley ...)", plan_ranks, plan_ranks);
    if (dry) {
        int code = dry_run(g, plan_ranks ? plan_ranks : cay_nranks, opt.batch_bytes,
                           opt.memory_limit);
        kedr_cayley_group_free(g);
        return code;
    }
    /* over ranks: under mpirun on several, or to resume the checkpoints of a search over ranks
     * (BASE.rankRofM.chk; on one rank too) */
    int over_ranks = cay_nranks > 1 || (opt.resume_path && access(opt.resume_path, F_OK) != 0 &&
                                        rank_files_exist(opt.resume_path));
    if (over_ranks) {
        const char *other = word ? "--word" : distance ? "--distance" : farthest ? "--farthest"
                            : opt.devices ? "--devices" : opt.mode == KEDR_CAYLEY_SPARSE
                            ? "--mode sparse" : NULL;
        if (other)
            cli_usage_error(cmd, "%s runs on one rank, not under mpirun over %d ranks (the "
                            "search over ranks is the dense one, one GPU a rank)", other,
                            cay_nranks);
        /* one GPU a rank: the ranks of a host take its GPUs in turn */
        if (cay_nranks > 1 && kedr_device_count() > 0)
            c.device = kedr_comm_device(cay_comm, kedr_device_count());
        if (cay_rank > 0) /* rank 0 writes the outputs */
            json = csv = plot = NULL;
    }

    if (word || distance || farthest) {
        /* the queries run their own search (query.c): the options of the growth search do
         * not apply to it */
        const char *other = opt.checkpoint_path ? "--checkpoint" : opt.resume_path ? "--resume"
                            : opt.max_levels   ? "--max-levels" : opt.devices ? "--devices"
                            : mode_given       ? "--mode" : json ? "--json" : csv ? "--csv"
                            : plot             ? "--plot" : NULL;
        if (other)
            cli_usage_error(cmd, "%s does not apply to --word, --distance or --farthest", other);
        if (!(g->kind == KEDR_CAYLEY_PERMUTATION || g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION ||
              g->kind == KEDR_CAYLEY_ABELIAN || g->kind == KEDR_CAYLEY_BURNSIDE))
            cli_usage_error(cmd, "--word, --distance and --farthest take the ranked groups "
                            "(pancake, burnt-pancake, bubble, star, transpositions, lrx, abelian, "
                            "burnside); %s has no ranking", g->spec);
        kedr_ctx *qctx = cli_context(&c, cmd);
        int code = run_queries(qctx, g, opt.memory_limit, word, distance, farthest);
        kedr_ctx_destroy(qctx);
        kedr_cayley_group_free(g);
        return code;
    }
    /* outputs that cannot be written are found before the search (and
     * before the context is made), not after it */
    const char *outputs[] = {opt.checkpoint_path, json, csv, plot};
    const char *names[] = {"--checkpoint", "--json", "--csv", "--plot"};
    for (int k = 0; k < 4; k++)
        if (outputs[k] && kedr_file_check_writable(outputs[k]) != KEDR_OK)
            cli_usage_error(cmd, "%s %s: %s", names[k], outputs[k], kedr_last_error());
    kedr_ctx *ctx = cli_context(&c, cmd);
    if (opt.devices && opt.mode == KEDR_CAYLEY_SPARSE)
        cli_usage_error(cmd, "--devices applies to the dense mode, not --mode sparse");
    if (opt.devices && kedr_ctx_backend(ctx) != KEDR_BACKEND_CUDA)
        cli_usage_error(cmd, "--devices needs the cuda back end (this run is on the cpu)");
    kedr_cayley_result r;
    int code = 0;
    kedr_interrupt_install();
    kedr_status s = over_ranks ? kedr_cayley_growth_on(ctx, cay_comm, g, &opt, &r)
                                   : kedr_cayley_growth(ctx, g, &opt, &r);
    char ck0[1100] = "";
    if (opt.checkpoint_path) { /* rank 0's file tells whether the checkpoints are there */
        size_t len = strlen(opt.checkpoint_path);
        int ext = len >= 4 && strcmp(opt.checkpoint_path + len - 4, ".chk") == 0;
        if (over_ranks)
            snprintf(ck0, sizeof ck0, "%.*s.rank0of%d.chk", (int)(ext ? len - 4 : len),
                     opt.checkpoint_path, cay_nranks);
        else
            snprintf(ck0, sizeof ck0, "%s", opt.checkpoint_path);
    }
    if (s != KEDR_OK && cay_rank > 0) /* the error is every rank's: rank 0 says it */
        code = s == KEDR_ERR_INTERRUPTED ? CLI_EXIT_INTERRUPTED : CLI_EXIT_FAIL;
    else if (s != KEDR_OK) {
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
        if (opt.checkpoint_path && access(ck0, R_OK) == 0)
            fprintf(stderr,
                    "kedr %s: the last checkpoint %s is intact: continue with --resume %s\n", cmd,
                    opt.checkpoint_path, opt.checkpoint_path);
        code = s == KEDR_ERR_INTERRUPTED ? CLI_EXIT_INTERRUPTED : CLI_EXIT_FAIL;
    }
    if (s == KEDR_OK || s == KEDR_ERR_INTERRUPTED) {
        /* an interrupted search still prints and writes the levels it completed */
        int stopped = s == KEDR_ERR_INTERRUPTED;
        print_table(g, &r, ctx, stopped);
        if (json && write_json(json, g, &r, ctx, stopped) != KEDR_OK) {
            fprintf(stderr, "kedr %s: --json %s: %s\n", cmd, json, kedr_last_error());
            code = code ? code : CLI_EXIT_FAIL;
        }
        if (csv && write_csv(csv, &r) != KEDR_OK) {
            fprintf(stderr, "kedr %s: --csv %s: %s\n", cmd, csv, kedr_last_error());
            code = code ? code : CLI_EXIT_FAIL;
        }
        if (r.complete && opt.checkpoint_path && !quiet && cay_rank == 0)
            fprintf(stderr, "kedr %s: the ended search saved to the checkpoint %s\n", cmd,
                    opt.checkpoint_path);
        if (!r.complete && opt.checkpoint_path && !stopped && cay_rank == 0)
            fprintf(stderr, "kedr %s: continue with --resume %s\n", cmd, opt.checkpoint_path);
        /* last: the plot needs an optional library, and its failure must not cost the rest */
        if (plot && !write_plot(plot, g, &r))
            code = code ? code : CLI_EXIT_FAIL;
        kedr_cayley_result_free(&r);
    }
    kedr_ctx_destroy(ctx);
    kedr_cayley_group_free(g);
    return code;
}
