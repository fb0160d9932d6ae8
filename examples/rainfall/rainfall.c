/* Rainfall per site from sensor readings (Boreskov et al., "Parallel computing on GPU", 2012,
 * sec. 7.4.1 and 8.1.7): every site reports a reading each day, uniform in [-50, 50]; readings of
 * zero or below mean no rain and are dropped (compaction); the rest are sorted by site (sort by
 * key) and summed per site (reduce by key). Each step is a kedr primitive, run on the cpu and,
 * with a GPU, on cuda; the totals are checked against a plain loop.
 *
 * The book's CUDA version sizes its output by counting the readings > 0 (thrust::count_if with
 * is_positive) but compacts with remove_copy_if(measurement_is_negative), which keeps the zeros
 * too: every zero reading is one element written past the end of the three output vectors. A
 * compaction that returns its own count, as kedr_select_flagged does, cannot disagree with it;
 * here one predicate (reading > 0) decides both. Its readings also come from
 * curand() % (2 * 50) - 50, which spans [-50, 49], not [-50, 50]. */
#include "kedr/kedr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: example_rainfall [--days D] [--sites S]\n"
    "  total rainfall at each of S sites over D days of readings (default 365 x 10000), by\n"
    "  kedr_select_flagged, kedr_sort_pairs and kedr_reduce_by_key on the cpu and, with a GPU,\n"
    "  on cuda; exits 1 unless every total matches a plain loop's\n";

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef struct {
    size_t n;              /* days x sites readings */
    int32_t *site, *value; /* host: reading i is of day i / sites, site i % sites */
    uint8_t *rained;             /* value > 0 */
} readings;

#define TRY(call)                                                                         \
    do {                                                                                  \
        if ((call) != KEDR_OK) {                                                          \
            fprintf(stderr, "%s: %s\n", #call, kedr_last_error());                        \
            goto done;                                                                    \
        }                                                                                 \
    } while (0)

/* Runs the three steps on one back end and compares the totals with want[site]. */
static int run(kedr_backend b, const readings *r, int sites, const int64_t *want)
{
    kedr_ctx *ctx = NULL;
    if (kedr_ctx_create(&ctx, b, 0) != KEDR_OK) {
        fprintf(stderr, "%s: %s\n", kedr_backend_name(b), kedr_last_error());
        return 1;
    }
    size_t n = r->n, bytes = n * sizeof(int32_t), kept = 0, kept2 = 0, runs = 0;
    int32_t *d_site = NULL, *d_value = NULL, *s_site = NULL, *s_value = NULL;
    int32_t *k_site = NULL, *k_value = NULL, *u_site = NULL, *u_total = NULL;
    uint8_t *d_flags = NULL;
    int32_t *h_site = NULL, *h_total = NULL;
    int bad = 1;
    double t[4];
    TRY(kedr_alloc(ctx, (void **)&d_site, bytes));
    TRY(kedr_alloc(ctx, (void **)&d_value, bytes));
    TRY(kedr_alloc(ctx, (void **)&d_flags, n));
    TRY(kedr_alloc(ctx, (void **)&k_site, bytes));
    TRY(kedr_alloc(ctx, (void **)&k_value, bytes));
    TRY(kedr_alloc(ctx, (void **)&s_site, bytes));
    TRY(kedr_alloc(ctx, (void **)&s_value, bytes));
    TRY(kedr_alloc(ctx, (void **)&u_site, bytes));
    TRY(kedr_alloc(ctx, (void **)&u_total, bytes));
    t[0] = kedr_wall_seconds();
    TRY(kedr_upload(ctx, d_site, r->site, bytes));
    TRY(kedr_upload(ctx, d_value, r->value, bytes));
    TRY(kedr_upload(ctx, d_flags, r->rained, n));
    TRY(kedr_ctx_sync(ctx));
    t[1] = kedr_wall_seconds();
    /* compaction: the readings with rain, sites and values by the same flags */
    TRY(kedr_select_flagged(ctx, 4, d_site, d_flags, k_site, n, &kept));
    TRY(kedr_select_flagged(ctx, 4, d_value, d_flags, k_value, n, &kept2));
    if (kept != kept2) {
        fprintf(stderr, "the two compactions kept %zu and %zu readings\n", kept, kept2);
        goto done;
    }
    /* sort by site, then one sum per run of equal sites */
    TRY(kedr_sort_pairs(ctx, KEDR_I32, k_site, s_site, k_value, s_value, 4, kept, 0, 0));
    TRY(kedr_reduce_by_key(ctx, KEDR_I32, s_site, KEDR_I32, s_value, kept, KEDR_OP_SUM, u_site,
                           u_total, &runs));
    TRY(kedr_ctx_sync(ctx));
    t[2] = kedr_wall_seconds();
    h_site = malloc(runs * sizeof *h_site + 1);
    h_total = malloc(runs * sizeof *h_total + 1);
    if (!h_site || !h_total) {
        fprintf(stderr, "out of memory\n");
        goto done;
    }
    TRY(kedr_download(ctx, h_site, u_site, runs * sizeof *h_site));
    TRY(kedr_download(ctx, h_total, u_total, runs * sizeof *h_total));
    t[3] = kedr_wall_seconds();
    /* Every site with rain once, in order, with the plain loop's total; no other site. */
    size_t wrong = 0, with_rain = 0;
    for (int s = 0; s < sites; s++)
        with_rain += want[s] > 0;
    for (size_t k = 0; k < runs; k++)
        wrong += h_site[k] < 0 || h_site[k] >= sites || (k && h_site[k] <= h_site[k - 1]) ||
                 h_total[k] != want[h_site[k]];
    bad = wrong || runs != with_rain;
    printf("%-5s %zu readings, %zu with rain, %zu sites with rain: load %.3f s, compact + sort + "
           "reduce %.3f s, save %.3f s%s\n",
           kedr_backend_name(b), n, kept, runs, t[1] - t[0], t[2] - t[1], t[3] - t[2],
           bad ? "  WRONG" : "");
    if (bad)
        fprintf(stderr, "%s: %zu site totals differ from the plain loop's (%zu sites, expected "
                "%zu)\n", kedr_backend_name(b), wrong, runs, with_rain);
done:
    free(h_site);
    free(h_total);
    kedr_free(ctx, d_site);
    kedr_free(ctx, d_value);
    kedr_free(ctx, d_flags);
    kedr_free(ctx, k_site);
    kedr_free(ctx, k_value);
    kedr_free(ctx, s_site);
    kedr_free(ctx, s_value);
    kedr_free(ctx, u_site);
    kedr_free(ctx, u_total);
    kedr_ctx_destroy(ctx);
    return bad;
}

int main(int argc, char **argv)
{
    long days = 365, sites = 10000;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long *dst = i + 1 < argc && strcmp(argv[i], "--days") == 0    ? &days
                    : i + 1 < argc && strcmp(argv[i], "--sites") == 0 ? &sites
                                                                      : NULL;
        if (!dst) {
            fputs(usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
        const char *opt = argv[i];
        *dst = strtol(argv[++i], &end, 10);
        if (*end || *dst < 1 || *dst > 1000000) {
            fprintf(stderr, "%s %s: expected an integer from 1 to 1000000\n", opt, argv[i]);
            return 2;
        }
    }
    if (days * sites > 400000000L) {
        fprintf(stderr, "--days %ld x --sites %ld: at most 4e8 readings\n", days, sites);
        return 2;
    }
    readings r;
    r.n = (size_t)(days * sites);
    r.site = malloc(r.n * sizeof(int32_t));
    r.value = malloc(r.n * sizeof(int32_t));
    r.rained = malloc(r.n);
    int64_t *want = calloc((size_t)sites, sizeof *want);
    if (!r.site || !r.value || !r.rained || !want) {
        fprintf(stderr, "out of memory for %zu readings\n", r.n);
        return 1;
    }
    uint64_t s = 7;
    for (size_t i = 0; i < r.n; i++) {
        r.site[i] = (int32_t)(i % (size_t)sites);
        r.value[i] = (int32_t)(next(&s) % 101) - 50; /* [-50, 50] */
        r.rained[i] = r.value[i] > 0;
        if (r.rained[i])
            want[r.site[i]] += r.value[i];
    }
    printf("rainfall: %ld days x %ld sites, readings uniform in [-50, 50], rain when > 0\n", days,
           sites);
    int bad = run(KEDR_BACKEND_CPU, &r, (int)sites, want);
    if (kedr_backend_available(KEDR_BACKEND_CUDA))
        bad |= run(KEDR_BACKEND_CUDA, &r, (int)sites, want);
    else
        printf("cuda: no GPU here\n");
    free(r.site);
    free(r.value);
    free(r.rained);
    free(want);
    return bad;
}
