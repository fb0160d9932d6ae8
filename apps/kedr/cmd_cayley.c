/* kedr cayley GROUP: growth function, diameter and average distance of a Cayley graph. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char *cmd = "cayley";

static void help(void)
{
    printf("usage: kedr cayley GROUP [options]\n\n"
           "Computes the growth function F(s) of the Cayley graph of GROUP (how many elements lie\n"
           "at distance s from the identity), its diameter and average distance, by a dense\n"
           "breadth-first search over ranked elements: 3 bits of memory per group element.\n\n"
           "groups:\n"
           "  pancake:N          S_N, prefix reversals of length 2..N (N = 2..16)\n"
           "  burnt-pancake:N    signed permutations (order 2^N N!), signed prefix reversals\n"
           "                     (N = 1..16)\n"
           "  bubble:N           S_N, adjacent transpositions (N = 2..16)\n"
           "  star:N             S_N, transpositions (1 i) (N = 2..16)\n"
           "  transpositions:N   S_N, all transpositions (N = 2..16)\n"
           "  lrx:N              S_N, left shift, right shift, swap of positions 1 and 2\n"
           "  abelian:M1,M2,...  Z_M1 x Z_M2 x ..., +1 in each coordinate (rings, tori,\n"
           "                     hypercubes; M = 2..4294967295)\n"
           "  burnside:K         B_K = B0(2,5)/<a_{K+1},...,a_34>, order 5^K, generators a1, a2\n"
           "                     (K = 1..14, Hall polynomials in Kuznetsov's basis)\n\n"
           "options:\n"
           "  --inverses           add the inverse of each generator (abelian: -1 as well)\n"
           "  --json FILE          also write the results as JSON\n"
           "  --csv FILE           also write s, F(s) and the running total as CSV\n"
           "  --memory-limit SIZE  refuse runs needing more than SIZE bytes (e.g. 512M, 4G)\n"
           "  -q, --quiet          no progress lines on stderr\n" CLI_COMMON_HELP
           "\nexamples:\n"
           "  kedr cayley pancake:11\n"
           "  kedr cayley abelian:8,8,8 --inverses --json torus.json\n"
           "  kedr cayley burnside:10 --inverses\n");
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
}

static void print_table(const kedr_cayley_group *g, const kedr_cayley_result *r, kedr_ctx *ctx)
{
    char mem[32];
    kedr_format_bytes((double)r->memory_bytes, mem, sizeof mem);
    printf("group              %s (%s)%s\n", g->spec, g->description,
           g->inverses ? " with inverses" : "");
    printf("order              %llu\n", (unsigned long long)g->order);
    printf("generators         %d, closed under inverses: %s\n", g->ngens,
           g->inverse_closed ? "yes" : "no");
    if (kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA)
        printf("back end           cuda (GPU %d)\n", kedr_ctx_device(ctx));
    else
        printf("back end           cpu (%d threads)\n", kedr_ctx_threads(ctx));
    printf("memory             %s (dense: 3 bitmaps of %llu bits)\n\n", mem,
           (unsigned long long)g->order);
    printf("%6s %20s %20s\n", "s", "F(s)", "reached");
    uint64_t total = 0;
    for (int s = 0; s <= r->diameter; s++) {
        total += r->growth[s];
        printf("%6d %20llu %20llu\n", s, (unsigned long long)r->growth[s],
               (unsigned long long)total);
    }
    printf("\ndiameter           %d\n", r->diameter);
    printf("average distance   %.6f\n", r->average_distance);
    printf("elements reached   %llu of %llu\n", (unsigned long long)r->reached,
           (unsigned long long)g->order);
    printf("time               %.3f s, %.3g edge visits/s\n", r->seconds,
           r->seconds > 0 ? r->edge_visits / r->seconds : 0);
}

static int write_json(const char *path, const kedr_cayley_group *g, const kedr_cayley_result *r,
                      kedr_ctx *ctx)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    fprintf(f, "{\n  \"group\": \"%s\",\n  \"description\": \"%s\",\n  \"inverses\": %s,\n", g->spec,
            g->description, g->inverses ? "true" : "false");
    fprintf(f, "  \"order\": %llu,\n  \"generators\": %d,\n  \"inverse_closed\": %s,\n",
            (unsigned long long)g->order, g->ngens, g->inverse_closed ? "true" : "false");
    fprintf(f, "  \"backend\": \"%s\",\n  \"mode\": \"dense\",\n  \"growth\": [",
            kedr_backend_name(kedr_ctx_backend(ctx)));
    for (int s = 0; s <= r->diameter; s++)
        fprintf(f, "%s%llu", s ? ", " : "", (unsigned long long)r->growth[s]);
    fprintf(f, "],\n  \"diameter\": %d,\n  \"average_distance\": %.17g,\n  \"reached\": %llu,\n",
            r->diameter, r->average_distance, (unsigned long long)r->reached);
    fprintf(f, "  \"edge_visits\": %.17g,\n  \"seconds\": %.6f,\n  \"memory_bytes\": %zu\n}\n",
            r->edge_visits, r->seconds, r->memory_bytes);
    return fclose(f) == 0;
}

static int write_csv(const char *path, const kedr_cayley_result *r)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    fprintf(f, "s,F,reached\n");
    uint64_t total = 0;
    for (int s = 0; s <= r->diameter; s++) {
        total += r->growth[s];
        fprintf(f, "%d,%llu,%llu\n", s, (unsigned long long)r->growth[s],
                (unsigned long long)total);
    }
    return fclose(f) == 0;
}

/* Matches "--name" and "--name=value". */
static int is_option(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(arg, name, len) == 0 && (arg[len] == 0 || arg[len] == '=');
}

int cmd_cayley(int argc, char **argv)
{
    cli_common c = {KEDR_BACKEND_AUTO, 0};
    const char *spec = NULL, *json = NULL, *csv = NULL;
    int inverses = 0, quiet = 0;
    kedr_cayley_options opt = {0, progress, NULL};
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
        else if (is_option(a, "--json"))
            json = cli_value(argc, argv, &i, cmd);
        else if (is_option(a, "--csv"))
            csv = cli_value(argc, argv, &i, cmd);
        else if (is_option(a, "--memory-limit"))
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

    kedr_cayley_group *g = NULL;
    if (kedr_cayley_parse(spec, inverses, &g) != KEDR_OK)
        cli_usage_error(cmd, "%s", kedr_last_error());
    if (quiet)
        opt.on_level = NULL;
    opt.user = g;

    kedr_ctx *ctx = cli_context(&c, cmd);
    kedr_cayley_result r;
    int code = 0;
    kedr_status s = kedr_cayley_growth(ctx, g, &opt, &r);
    if (s != KEDR_OK) {
        fprintf(stderr, "kedr %s: %s\n", cmd, kedr_last_error());
        code = CLI_EXIT_FAIL;
    } else {
        print_table(g, &r, ctx);
        if (json && !write_json(json, g, &r, ctx)) {
            fprintf(stderr, "kedr %s: --json %s: cannot write the file\n", cmd, json);
            code = CLI_EXIT_FAIL;
        }
        if (csv && !write_csv(csv, &r)) {
            fprintf(stderr, "kedr %s: --csv %s: cannot write the file\n", cmd, csv);
            code = CLI_EXIT_FAIL;
        }
        kedr_cayley_result_free(&r);
    }
    kedr_ctx_destroy(ctx);
    kedr_cayley_group_free(g);
    return code;
}
