/* The on-chip sweeps (KEDR_ADI_SWEEP=chip: each line cut into chunks, each chunk eliminated on
 * its own with the chunk before's last unknown as a parameter, a small interface system a line,
 * then the back substitution; sweep_impl.h, chip_forward; and KEDR_ADI_SWEEP=reg, the same with
 * each chunk in its thread's registers and the interface systems by cyclic reduction, chunks
 * of 2, 4, 8, 16 and the default; reg_forward) against the cpu's Thomas sweep, the
 * reference: on random masks (solid nodes scattered at random, so that lines hold many segments
 * of every length from 2 nodes up, and segments end inside chunks, on their first and on their
 * last node), lines of 2, 31, 33 and 257 unknowns, chunks of 1, 3, 8 and 32 nodes (lines shorter
 * and longer than a chunk, a chunk count that does not divide the line), upwind and central
 * advection, both precisions; on cuda also the GPU's blocks of 1, 3 and the default number of
 * lines, and the Z sweep through the transposes. Five steps each; the fields must agree within
 * the tolerance of the cpu/cuda comparison of test_adi_mask (1e-11 in double, 1e-4 in single).
 * An unknown KEDR_ADI_SWEEP or chunk length (KEDR_ADI_CHIP_LEN, KEDR_ADI_REG_LEN) is an error
 * naming the variable. */
#define _POSIX_C_SOURCE 200809L
#include "kedr/adi.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* A random mask of about `density` solid nodes, then fluid nodes alone between two solid
 * neighbours (or the box's edge) along some axis made solid until none is left (a segment of
 * one node is not a valid case: kedr_adi_case_check). */
static unsigned char *random_mask(int nx, int ny, int nz, double density)
{
    size_t n = (size_t)nx * ny * nz;
    unsigned char *s = tu_host_alloc(n);
    for (size_t m = 0; m < n; m++)
        s[m] = uniform() < density;
    const int nn[3] = {nx, ny, nz};
    const size_t st[3] = {1, (size_t)nx, (size_t)nx * ny};
    for (int changed = 1; changed;) {
        changed = 0;
        for (int k = 0; k < nz; k++)
            for (int j = 0; j < ny; j++)
                for (int i = 0; i < nx; i++) {
                    size_t m = i + nx * (j + (size_t)ny * k);
                    if (s[m])
                        continue;
                    const int at[3] = {i, j, k};
                    for (int e = 0; e < 3; e++) {
                        int lo_solid = at[e] == 0 || s[m - st[e]];
                        int hi_solid = at[e] == nn[e] - 1 || s[m + st[e]];
                        if (lo_solid && hi_solid) {
                            s[m] = 1;
                            changed = 1;
                            break;
                        }
                    }
                }
    }
    return s;
}

static void make_case(kedr_adi_case *c, int nx, int ny, int nz, int single, int central)
{
    kedr_adi_case_default(c);
    c->nx = nx;
    c->ny = ny;
    c->nz = nz;
    c->h = 0.1;
    c->re = 50;
    c->dt = 0.01;
    c->steps = 5;
    c->single = single;
    c->central = central;
    c->face[KEDR_ADI_X_LO].kind = KEDR_ADI_INFLOW;
    c->face[KEDR_ADI_X_LO].velocity[0] = 1;
    c->face[KEDR_ADI_X_LO].velocity[1] = -0.4;
    c->face[KEDR_ADI_X_LO].velocity[2] = 0.3;
    c->face[KEDR_ADI_X_LO].temperature = 2;
    c->face[KEDR_ADI_X_HI].kind = KEDR_ADI_FREE;
    c->face[KEDR_ADI_Z_HI].kind = KEDR_ADI_FREE;
    c->face[KEDR_ADI_Y_HI].velocity[0] = 0.5; /* a moving lid */
    c->face[KEDR_ADI_Y_LO].adiabatic = 0;
    c->face[KEDR_ADI_Y_LO].temperature = 1.5;
    c->wall_adiabatic = 0;
    c->wall_temperature = 0.5;
    c->force[1] = 0.7;
}

/* Runs c's steps with the sweep path of the environment; the fields into f. */
static int run(kedr_ctx *ctx, const kedr_adi_case *c, double *f[4])
{
    kedr_adi *s = NULL;
    kedr_status st = kedr_adi_create(ctx, c, &s);
    for (int64_t k = 0; st == KEDR_OK && k < c->steps; k++)
        st = kedr_adi_step(s);
    if (st == KEDR_OK)
        st = kedr_adi_get_fields(s, f[0], f[1], f[2], f[3]);
    kedr_adi_destroy(s);
    TU_CHECK(st == KEDR_OK, "run: %s", kedr_last_error());
    return st == KEDR_OK;
}

/* path chip: chunks of len in KEDR_ADI_CHIP_LEN; reg: in KEDR_ADI_REG_LEN (0: the default) */
static void set_path(const char *path, int len, int lines)
{
    char b[32];
    int reg = strcmp(path, "reg") == 0;
    setenv("KEDR_ADI_SWEEP", path, 1);
    snprintf(b, sizeof b, "%d", reg ? 8 : len);
    setenv("KEDR_ADI_CHIP_LEN", b, 1);
    snprintf(b, sizeof b, "%d", reg ? len : 0);
    setenv("KEDR_ADI_REG_LEN", b, 1);
    snprintf(b, sizeof b, "%d", lines);
    setenv("KEDR_ADI_CHIP_LINES", b, 1);
}

/* The largest difference between the fields of fluid nodes (NaN on solid ones). */
static double difference(double *const a[4], double *const b[4], size_t n, double *amax)
{
    double worst = 0;
    *amax = 0;
    for (int v = 0; v < 4; v++)
        for (size_t m = 0; m < n; m++)
            if (!isnan(a[v][m])) {
                double d = fabs(a[v][m] - b[v][m]);
                worst = d > worst || isnan(d) ? (isnan(d) ? INFINITY : d) : worst;
                if (v < 3 && fabs(a[v][m]) > *amax)
                    *amax = fabs(a[v][m]);
            }
    return worst;
}

static const int grids[][3] = {
    {35, 33, 4},  /* lines of 33, 31 and 2 unknowns */
    {259, 6, 5},  /* 257 along x */
    {5, 259, 6},  /* along y */
    {6, 5, 259},  /* along z (the transposed sweep on cuda) */
};

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    kedr_ctx *ctx[2] = {NULL, NULL};
    for (int b = 0; b < nb; b++)
        ctx[b] = tu_ctx(list[b]);
    kedr_ctx *cpu = tu_ctx(KEDR_BACKEND_CPU);
    /* the chip path's chunk lengths, then the register path's (0: its default, 4) */
    const char *paths[] = {"chip", "chip", "chip", "chip", "reg", "reg", "reg", "reg", "reg"};
    const int lens[] = {1, 3, 8, 32, 2, 4, 8, 16, 0};
    int cases = 0;
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        int nx = grids[g][0], ny = grids[g][1], nz = grids[g][2];
        size_t n = (size_t)nx * ny * nz;
        unsigned char *mask = random_mask(nx, ny, nz, 0.15);
        for (int single = 0; single < 2; single++)
            for (int central = 0; central < 2; central++) {
                kedr_adi_case c;
                make_case(&c, nx, ny, nz, single, central);
                c.solid = mask;
                c.z_transpose = 0;
                double *ref[4], *got[4];
                for (int v = 0; v < 4; v++) {
                    ref[v] = tu_host_alloc(n * sizeof(double));
                    got[v] = tu_host_alloc(n * sizeof(double));
                }
                set_path("thomas", 8, 0);
                if (!run(cpu, &c, ref))
                    goto next;
                double tol = single ? 1e-4 : 1e-11;
                for (int b = 0; b < nb; b++) {
                    int cuda = list[b] == KEDR_BACKEND_CUDA;
                    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
                        for (int w = 0; w < (cuda ? 3 : 1); w++) {
                            /* the sanitizers' run: chip's chunks of 3, reg's of 2 and 16 */
                            if (tu_quick() && !(l == 1 || l == 4 || l == 7))
                                continue;
                            /* the default lines a block with the Z sweep transposed, one
                             * line (a warp across its chunks) with Z direct, and 3 (lines
                             * split across warps); 3 lines of 257 chunks of 1 would exceed
                             * the kernel's 512 threads a block */
                            const int lines[3] = {0, 1, 3};
                            if (w == 2 && lens[l] == 1)
                                continue;
                            c.z_transpose = cuda && w != 1;
                            set_path(paths[l], lens[l], lines[w]);
                            if (!run(ctx[b], &c, got))
                                continue;
                            double amax, diff = difference(ref, got, n, &amax);
                            cases++;
                            TU_CHECK(amax > 0.1, "grid %dx%dx%d: the flow did not move", nx, ny,
                                     nz);
                            TU_CHECK(diff <= tol,
                                     "grid %dx%dx%d, %s, %s, %s: %s sweep (chunks of %d, %d "
                                     "lines a block) differs from the cpu's Thomas by %.3g",
                                     nx, ny, nz, kedr_backend_name(list[b]),
                                     single ? "single" : "double", central ? "central" : "upwind",
                                     paths[l], lens[l], lines[w], diff);
                            if ((l == 2 || l == 8) && w == 0)
                                printf("%dx%dx%d, %s, %s, %s: %s against the cpu's Thomas: "
                                       "max difference %.3g (|u| up to %.3g)\n",
                                       nx, ny, nz, kedr_backend_name(list[b]),
                                       single ? "single" : "double",
                                       central ? "central" : "upwind", paths[l], diff, amax);
                        }
                    if (cuda) { /* the Thomas kernel on the same case, for comparison */
                        set_path("thomas", 8, 0);
                        c.z_transpose = 1;
                        if (run(ctx[b], &c, got)) {
                            double amax, diff = difference(ref, got, n, &amax);
                            TU_CHECK(diff <= tol, "cuda Thomas differs from the cpu's by %.3g",
                                     diff);
                        }
                    }
                }
            next:
                for (int v = 0; v < 4; v++) {
                    free(ref[v]);
                    free(got[v]);
                }
            }
        free(mask);
    }
    printf("%d chip and reg runs compared\n", cases);
    /* Bad values of the variables: an error naming the variable, on every back end. */
    kedr_adi_case c;
    make_case(&c, 8, 7, 6, 0, 0);
    c.steps = 1;
    const char *bad[5][2] = {{"KEDR_ADI_SWEEP", "fast"},
                             {"KEDR_ADI_CHIP_LEN", "33"},
                             {"KEDR_ADI_CHIP_LINES", "x"},
                             {"KEDR_ADI_REG_LEN", "6"},
                             {"KEDR_ADI_REG_LEN", "32"}};
    for (int k = 0; k < 5; k++)
        for (int b = 0; b < nb; b++) {
            set_path(k < 3 ? "chip" : "reg", k < 3 ? 8 : 0, 0);
            setenv(bad[k][0], bad[k][1], 1);
            kedr_adi *s = NULL;
            kedr_status st = kedr_adi_create(ctx[b], &c, &s);
            if (st == KEDR_OK)
                st = kedr_adi_step(s);
            kedr_adi_destroy(s);
            TU_CHECK(st == KEDR_ERR_INVALID && strstr(kedr_last_error(), bad[k][0]) &&
                         strstr(kedr_last_error(), bad[k][1]),
                     "%s=%s on %s: status %s, message '%s'", bad[k][0], bad[k][1],
                     kedr_backend_name(list[b]), kedr_status_name(st), kedr_last_error());
        }
    unsetenv("KEDR_ADI_SWEEP");
    unsetenv("KEDR_ADI_CHIP_LEN");
    unsetenv("KEDR_ADI_CHIP_LINES");
    unsetenv("KEDR_ADI_REG_LEN");
    for (int b = 0; b < nb; b++)
        kedr_ctx_destroy(ctx[b]);
    kedr_ctx_destroy(cpu);
    return tu_finish("test_adi_chip");
}
