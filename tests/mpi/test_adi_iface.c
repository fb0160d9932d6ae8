/* The gathered interface systems of adi's partitioned X sweep (x_interface = gather,
 * adi_iface_solve: on the GPU one thread a line and field) against a plain reference: random
 * interface rows of N ranks (2N rows a line; |a| + |c| < 0.9 as the sweep's strictly dominant
 * rows give), awkward counts of lines (1, 31, 33, 1000) and ranks (2, 3, 4, 5, 17, 32: both of
 * the GPU kernel's scratch sizes), every rank's place (first, middle, last), single and double
 * precision, the output poisoned first. The reference solves each system by Thomas in long
 * double: the unknowns of the solving rank's two rows must agree within 1e-13 (double) or the
 * float's rounding, 1.2e-7 (single), of |x| + 1; with both back ends, cuda must equal the cpu bit for bit (the same
 * arithmetic in the same order, no fused multiply-adds). ctest runs it alone and under mpirun
 * (every rank does the same). */
#include "adi/adi_internal.h"
#include "kedr/comm.h"

#include "test_util.h"

#include <math.h>
#include <stdint.h>

static uint64_t rng_state;

static double uniform(void) /* in [0, 1) */
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* Element (slot p, unit u, row j, line t) of the gathered rows, reals of rs bytes. */
static size_t at(size_t plane, int p, int u, int j, size_t t)
{
    return (size_t)p * ADI_IF_SENT * 2 * plane + ((size_t)u * 2 + (size_t)j) * plane + t;
}

static double get(const void *b, size_t i, int rs)
{
    return rs == 4 ? (double)((const float *)b)[i] : ((const double *)b)[i];
}

/* Field v's unknowns of rows 2 rank + j of line t, by Thomas in long double. */
static void reference(const void *g, size_t plane, int P, int rs, int v, size_t t, int rank,
                      long double x[2])
{
    int R = 2 * P, ua = v == 3 ? ADI_IF_AT : ADI_IF_AU, uc = v == 3 ? ADI_IF_CT : ADI_IF_CU;
    long double c[64], d[64];
    for (int r = 0; r < R; r++) {
        long double a = r ? get(g, at(plane, r / 2, ua, r % 2, t), rs) : 0;
        long double cc = r < R - 1 ? get(g, at(plane, r / 2, uc, r % 2, t), rs) : 0;
        long double dd = get(g, at(plane, r / 2, ADI_IF_D0 + v, r % 2, t), rs);
        long double piv = 1 / (1 - (r ? a * c[r - 1] : 0));
        c[r] = cc * piv;
        d[r] = (dd - (r ? a * d[r - 1] : 0)) * piv;
    }
    for (int r = R - 2; r >= 0; r--)
        d[r] -= c[r] * d[r + 1];
    x[0] = d[2 * rank];
    x[1] = d[2 * rank + 1];
}

/* One case on one back end: the unknowns of every field and row of this rank into out (8 plane
 * doubles, field v's row j of line t at (2 v + j) plane + t); 1 if it ran. */
static int solve(kedr_ctx *ctx, const void *g, size_t plane, int P, int rs, int rank,
                 double *out)
{
    kedr_adi *s = calloc(1, sizeof *s);
    size_t slots = (size_t)P * ADI_IF_SENT * 2 * plane * (size_t)rs, xb = 8 * plane * (size_t)rs;
    void *hx = malloc(xb);
    s->ctx = ctx;
    s->nranks = P;
    s->rank = rank;
    s->plane = plane;
    s->real_size = rs;
    kedr_status st = kedr_alloc(ctx, &s->parts.gather, slots);
    if (st == KEDR_OK)
        st = kedr_alloc(ctx, &s->parts.x, xb);
    if (st == KEDR_OK)
        st = kedr_upload(ctx, s->parts.gather, g, slots);
    memset(hx, 0xFF, xb); /* NaN in both precisions */
    if (st == KEDR_OK)
        st = kedr_upload(ctx, s->parts.x, hx, xb);
    s->parts.h_send = malloc((size_t)P * xb);
    s->parts.h_sys = malloc(4 * (size_t)P * plane * sizeof(double));
    if (st == KEDR_OK)
        st = adi_iface_solve(s);
    if (st == KEDR_OK)
        st = kedr_download(ctx, hx, s->parts.x, xb);
    TU_CHECK(st == KEDR_OK, "%s: %d ranks, %zu lines: %s", kedr_backend_name(
                 kedr_ctx_backend(ctx)), P, plane, kedr_last_error());
    for (size_t i = 0; st == KEDR_OK && i < 8 * plane; i++)
        out[i] = get(hx, i, rs);
    kedr_free(ctx, s->parts.gather);
    kedr_free(ctx, s->parts.x);
    free(s->parts.h_send);
    free(s->parts.h_sys);
    free(s);
    free(hx);
    return st == KEDR_OK;
}

int main(int argc, char **argv)
{
    kedr_comm *comm = NULL;
    if (kedr_comm_init(&argc, &argv, &comm) != KEDR_OK) {
        fprintf(stderr, "kedr_comm_init: %s\n", kedr_last_error());
        return 1;
    }
    static const int ranks[] = {2, 3, 4, 5, 17, ADI_GATHER_MAX_RANKS};
    static const size_t lines[] = {1, 31, 33, 1000};
    kedr_backend list[2];
    int nb = tu_backends(list);
    kedr_ctx *ctx[2] = {NULL, NULL};
    for (int b = 0; b < nb; b++) {
        int dev = list[b] == KEDR_BACKEND_CUDA ? kedr_comm_device(comm, kedr_device_count()) : 0;
        TU_OK(kedr_ctx_create(&ctx[b], list[b], dev));
    }
    long cases = 0, same = 0, compared = 0;
    double worst[2] = {0, 0};
    for (int pi = 0; pi < (int)(sizeof ranks / sizeof *ranks); pi++)
        for (int li = 0; li < (int)(sizeof lines / sizeof *lines); li++)
            for (int rs = 4; rs <= 8; rs += 4)
                for (int which = 0; which < 3; which++) {
                    int P = ranks[pi], rank = which == 0 ? 0 : which == 1 ? P / 2 : P - 1;
                    size_t plane = lines[li], n = (size_t)P * ADI_IF_SENT * 2 * plane;
                    rng_state = 0x9E3779B97F4A7C15u ^ (uint64_t)(P * 1000003 + (int)plane * 7 +
                                                                  rs * 13 + which);
                    void *g = malloc(n * (size_t)rs);
                    for (size_t i = 0; i < n; i++) {
                        size_t u = i / plane % (2 * ADI_IF_SENT) / 2;
                        /* a and c in (-0.45, 0.45), d in (-1, 1) */
                        double x = u < ADI_IF_D0 ? 0.9 * uniform() - 0.45 : 2 * uniform() - 1;
                        if (rs == 4)
                            ((float *)g)[i] = (float)x;
                        else
                            ((double *)g)[i] = x;
                    }
                    double *out[2] = {malloc(8 * plane * sizeof(double)),
                                      malloc(8 * plane * sizeof(double))};
                    int ran[2] = {0, 0};
                    for (int b = 0; b < nb; b++) {
                        if (!ctx[b])
                            continue;
                        ran[b] = solve(ctx[b], g, plane, P, rs, rank, out[b]);
                        if (!ran[b])
                            continue;
                        double err = 0;
                        for (int v = 0; v < 4; v++)
                            for (size_t t = 0; t < plane; t++) {
                                long double x[2];
                                reference(g, plane, P, rs, v, t, rank, x);
                                for (int j = 0; j < 2; j++) {
                                    /* unknowns are of order 1: relative, and absolute
                                     * near 0 */
                                    double y = out[b][(2 * (size_t)v + j) * plane + t];
                                    double e = fabs(y - (double)x[j]) / (fabs((double)x[j]) + 1);
                                    if (isnan(y))
                                        e = INFINITY;
                                    err = e > err ? e : err;
                                }
                            }
                        double tol = rs == 4 ? 1.2e-7 : 1e-13;
                        TU_CHECK(err <= tol, "%s, %s: %d ranks, rank %d, %zu lines: error %g "
                                 "of |x| + 1 against long double (tolerance %g)",
                                 kedr_backend_name(list[b]), rs == 4 ? "single" : "double", P,
                                 rank, plane, err, tol);
                        worst[rs == 8] = err > worst[rs == 8] ? err : worst[rs == 8];
                    }
                    if (ran[0] && ran[1]) {
                        compared++;
                        same += !memcmp(out[0], out[1], 8 * plane * sizeof(double));
                    }
                    cases++;
                    free(out[0]);
                    free(out[1]);
                    free(g);
                }
    TU_CHECK(same == compared, "cuda equals cpu bit for bit in %ld of %ld cases", same, compared);
    if (kedr_comm_rank(comm) == 0)
        printf("%ld cases on %d back end%s: worst error %.3g (single), %.3g (double) of |x| + 1; "
               "cuda and cpu bit for bit in %ld of %ld\n", cases, nb, nb > 1 ? "s" : "",
               worst[0], worst[1], same, compared);
    for (int b = 0; b < nb; b++)
        kedr_ctx_destroy(ctx[b]);
    uint64_t counts[2] = {(uint64_t)tu_passed, (uint64_t)tu_failed};
    kedr_comm_allreduce(comm, KEDR_U64, KEDR_OP_SUM, counts, 2);
    if (kedr_comm_rank(comm) == 0)
        printf("test_adi_iface (%d ranks): %llu passed, %llu failed\n", kedr_comm_size(comm),
               (unsigned long long)counts[0], (unsigned long long)counts[1]);
    kedr_comm_finalize(comm);
    return counts[1] ? 1 : 0;
}
