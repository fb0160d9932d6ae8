/* The DSMC checkpoint reader on any file. The case is fixed and small: cases/dsmc/quick.ini (a
 * plate in a Mach 5 flow, so surface sums exist) with air, a rotating mixture of three species
 * (so the rotational energies and species bytes are stored), on a 10 x 5 grid of about 300
 * particles, sampling from step 4, on the cpu. The first input byte steers the harness, the rest
 * is the file: bit 0 clear, the harness first makes the checksum match the mutated contents, so
 * that the checks behind the checksum see crafted files; bit 1 clear, the file restarts a new
 * simulator (kedr_dsmc_restart), set, it is read into a running one (kedr_dsmc_read_checkpoint),
 * which a refused file must leave as it was. An accepted file runs two steps and yields its
 * fields: a state that cannot (a step that never ends, a crash) is a finding. Seeds are real
 * checkpoints written at seed time: after the fill (particles not yet in cell order), after two
 * steps (no samples yet) and after six (sampling). */
#include "fuzz.h"

#include "kedr/dsmc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kedr_ctx *ctx;
static kedr_dsmc_case c;

static int setup(void)
{
    if (ctx)
        return 1;
    kedr_log_set_level(KEDR_LOG_ERROR);
    if (kedr_dsmc_case_load(KEDR_SOURCE_DIR "/cases/dsmc/quick.ini", &c) != KEDR_OK ||
        kedr_dsmc_species_load(KEDR_SOURCE_DIR "/cases/dsmc/species.ini", "air", &c) != KEDR_OK)
        return 0;
    c.nx = 10;
    c.ny = 5;
    /* about 6 particles a cell */
    c.weight = c.number_density * (c.hi[0] - c.lo[0]) / c.nx * (c.hi[1] - c.lo[1]) / c.ny / 6;
    c.sample_start = 4;
    c.sample_every = 1;
    c.stats_every = 0;
    if (kedr_dsmc_case_check(&c) != KEDR_OK)
        return 0;
    return kedr_ctx_create(&ctx, KEDR_BACKEND_CPU, 0) == KEDR_OK;
}

/* The checkpoint's checksum: FNV-1a of everything before the last 16 bytes (the checksum and
 * KEDR-END), as src/dsmc/checkpoint.c writes it. */
static void fix_checksum(unsigned char *b, size_t size)
{
    if (size < 16)
        return;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size - 16; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    memcpy(b + size - 16, &h, 8);
}

/* An accepted state must be usable: two steps and the fields. */
static void use(kedr_dsmc *sim)
{
    for (int s = 0; s < 2; s++)
        if (kedr_dsmc_step(sim) != KEDR_OK)
            return;
    kedr_dsmc_fields f;
    if (kedr_dsmc_get_fields(sim, &f) == KEDR_OK)
        kedr_dsmc_fields_free(&f);
}

/* Read into a running simulator: a refused file leaves it as it was. */
static void read_into_running(const char *path)
{
    kedr_dsmc *sim = NULL;
    if (kedr_dsmc_create(ctx, &c, &sim) != KEDR_OK)
        return;
    kedr_dsmc_stats before, after;
    kedr_dsmc_get_stats(sim, &before);
    if (kedr_dsmc_read_checkpoint(sim, path) == KEDR_OK) {
        use(sim);
    } else {
        kedr_dsmc_get_stats(sim, &after);
        if (after.step != before.step || after.particles != before.particles ||
            after.samples != before.samples) {
            fprintf(stderr, "fuzz_dsmc_checkpoint: a refused file changed the simulator (%s)\n",
                    kedr_last_error());
            abort();
        }
    }
    kedr_dsmc_destroy(sim);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || !setup())
        return 0;
    unsigned char *b = malloc(size);
    if (!b)
        return 0;
    memcpy(b, data + 1, size - 1);
    if (!(data[0] & 1))
        fix_checksum(b, size - 1);
    const char *path = kedr_fuzz_write("in.chk", b, size - 1);
    free(b);
    if (!path)
        return 0;
    if (data[0] & 2) {
        read_into_running(path);
        return 0;
    }
    kedr_dsmc *sim = NULL;
    if (kedr_dsmc_restart(ctx, &c, path, &sim) == KEDR_OK) {
        use(sim);
        kedr_dsmc_destroy(sim);
    }
    return 0;
}

/* The file at path as a seed, with each steering byte. */
static void add_file(const char *path, void (*add)(const void *data, size_t size))
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc((1u << 20) + 1);
    size_t n = f && buf ? fread(buf + 1, 1, 1u << 20, f) : 0;
    if (f)
        fclose(f);
    if (buf && n > 0 && n < (1u << 20)) {
        static const unsigned char steer[3] = {0, 2, 1};
        for (int k = 0; k < 3; k++) {
            buf[0] = steer[k];
            add(buf, n + 1);
        }
    }
    free(buf);
}

void kedr_fuzz_seeds(void (*add)(const void *data, size_t size))
{
    if (!setup() || !kedr_fuzz_dir())
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s/seed.chk", kedr_fuzz_dir());
    kedr_dsmc *sim = NULL;
    if (kedr_dsmc_create(ctx, &c, &sim) != KEDR_OK)
        return;
    static const int after[3] = {0, 2, 6};
    for (int k = 0, done = 0; k < 3; k++) {
        while (done < after[k] && kedr_dsmc_step(sim) == KEDR_OK)
            done++;
        if (kedr_dsmc_write_checkpoint(sim, path) == KEDR_OK)
            add_file(path, add);
    }
    kedr_dsmc_destroy(sim);
}
