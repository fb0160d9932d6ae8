/* DSMC checkpoints: a run of 2N steps equals, bit for bit on the same back end, N steps +
 * checkpoint + restart + N steps (particles, cell fields, counters); a cpu checkpoint restarts on
 * cuda when present; corrupt, truncated, wrong-version and foreign files are refused with the
 * file's name and leave the simulator as it was, and so are forged files (a valid checksum over
 * values no run writes: each field out of its range, sizes that do not match the file); writes
 * onto a FIFO or a directory are refused and leave it; cells no molecule entered are missing
 * values in CSV and VTK; running out of room ([run] max_particles, the
 * path a full GPU takes) leaves the state of before the step, which checkpoints and continues. */
#include "test_dsmc_util.h"

#include <sys/stat.h>
#include <unistd.h>

#define N_STEPS 12

static char root[1024], dir[256];

static void find_root(void)
{
    snprintf(root, sizeof root, "%s", __FILE__);
    char *p = strstr(root, "tests/validation/test_dsmc_checkpoint.c");
    if (p)
        *p = 0;
    else
        snprintf(root, sizeof root, "./");
}

/* The quick case (inflow, outflow, a plate, sampling in both halves of the run). */
static kedr_dsmc_case quick_case(void)
{
    char path[1200];
    kedr_dsmc_case c;
    snprintf(path, sizeof path, "%scases/dsmc/quick.ini", root);
    TU_OK(kedr_dsmc_case_load(path, &c));
    c.sample_start = N_STEPS / 2;
    c.steps = 2 * N_STEPS;
    return c;
}

static void run_steps(kedr_dsmc *sim, int steps)
{
    for (int s = 0; s < steps; s++)
        TU_OK(kedr_dsmc_step(sim));
}

static int same_bits(const void *a, const void *b, size_t bytes)
{
    return bytes == 0 || memcmp(a, b, bytes) == 0;
}

/* Two simulators in the same state: particles, fields and counters, bit for bit. */
static void check_same(kedr_dsmc *a, kedr_dsmc *b, const char *what)
{
    kedr_dsmc_stats sa, sb;
    TU_OK(kedr_dsmc_get_stats(a, &sa));
    TU_OK(kedr_dsmc_get_stats(b, &sb));
    TU_CHECK(sa.step == sb.step && sa.particles == sb.particles && sa.samples == sb.samples &&
                 sa.total_collisions == sb.total_collisions &&
                 sa.total_generated == sb.total_generated && sa.collisions == sb.collisions &&
                 memcmp(&sa.time, &sb.time, sizeof sa.time) == 0,
             "%s: step %lld/%lld particles %zu/%zu collisions %llu/%llu", what,
             (long long)sa.step, (long long)sb.step, sa.particles, sb.particles,
             (unsigned long long)sa.total_collisions, (unsigned long long)sb.total_collisions);
    dt_particles pa = dt_get(a), pb = dt_get(b);
    size_t n = pa.n == pb.n ? pa.n : 0, bad = 0;
    bad += !same_bits(pa.x, pb.x, n * 8) + !same_bits(pa.y, pb.y, n * 8);
    bad += !same_bits(pa.vx, pb.vx, n * 8) + !same_bits(pa.vy, pb.vy, n * 8);
    bad += !same_bits(pa.vz, pb.vz, n * 8) + !same_bits(pa.sp, pb.sp, n);
    TU_CHECK(pa.n == pb.n && bad == 0, "%s: %zu vs %zu particles, %zu arrays differ", what, pa.n,
             pb.n, bad);
    dt_free(&pa);
    dt_free(&pb);
    kedr_dsmc_fields fa, fb;
    TU_OK(kedr_dsmc_get_fields(a, &fa));
    TU_OK(kedr_dsmc_get_fields(b, &fb));
    size_t nc = (size_t)fa.nx * fa.ny;
    TU_CHECK(fa.samples == fb.samples && fa.samples > 0 &&
                 same_bits(fa.number_density, fb.number_density, 9 * nc * 8),
             "%s: cell fields differ (%lld / %lld samples)", what, (long long)fa.samples,
             (long long)fb.samples);
    kedr_dsmc_fields_free(&fa);
    kedr_dsmc_fields_free(&fb);
}

static void test_restart(kedr_ctx *ctx)
{
    kedr_dsmc_case c = quick_case();
    char path[512];
    snprintf(path, sizeof path, "%s/quick.chk", dir);
    kedr_dsmc *whole = NULL, *half = NULL, *again = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &whole));
    TU_OK(kedr_dsmc_create(ctx, &c, &half));
    if (!whole || !half)
        return;
    run_steps(whole, 2 * N_STEPS);
    run_steps(half, N_STEPS);
    TU_OK(kedr_dsmc_write_checkpoint(half, path));
    kedr_dsmc_destroy(half);
    TU_OK(kedr_dsmc_restart(ctx, &c, path, &again));
    if (!again)
        return;
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(again, &st));
    TU_CHECK(st.step == N_STEPS && st.particles > 1000, "restart: step %lld, %zu particles",
             (long long)st.step, st.particles);
    run_steps(again, N_STEPS);
    check_same(whole, again, "2N vs N + restart + N");

    /* Reading into a running simulator also works, and a rewritten file is the same file. */
    TU_OK(kedr_dsmc_write_checkpoint(again, path));
    TU_OK(kedr_dsmc_read_checkpoint(whole, path));
    check_same(whole, again, "read into a running simulator");
    kedr_dsmc_destroy(whole);
    kedr_dsmc_destroy(again);
}

/* A checkpoint written on the cpu restarts on cuda: the same particles, then it runs on. */
static void test_cross_backend(void)
{
    if (!kedr_backend_available(KEDR_BACKEND_CUDA))
        return;
    kedr_ctx *cpu = tu_ctx(KEDR_BACKEND_CPU), *gpu = tu_ctx(KEDR_BACKEND_CUDA);
    kedr_dsmc_case c = quick_case();
    char path[512];
    snprintf(path, sizeof path, "%s/cross.chk", dir);
    kedr_dsmc *a = NULL, *b = NULL;
    TU_OK(kedr_dsmc_create(cpu, &c, &a));
    if (a) {
        run_steps(a, N_STEPS);
        TU_OK(kedr_dsmc_write_checkpoint(a, path));
        TU_OK(kedr_dsmc_restart(gpu, &c, path, &b));
    }
    if (a && b) {
        dt_particles pa = dt_get(a), pb = dt_get(b);
        size_t n = pa.n == pb.n ? pa.n : 0;
        TU_CHECK(pa.n == pb.n && same_bits(pa.x, pb.x, n * 8) && same_bits(pa.vz, pb.vz, n * 8) &&
                     same_bits(pa.sp, pb.sp, n),
                 "cpu checkpoint on cuda: %zu vs %zu particles or values differ", pa.n, pb.n);
        dt_free(&pa);
        dt_free(&pb);
        run_steps(a, N_STEPS);
        run_steps(b, N_STEPS);
        kedr_dsmc_stats sa, sb;
        TU_OK(kedr_dsmc_get_stats(a, &sa));
        TU_OK(kedr_dsmc_get_stats(b, &sb));
        TU_CHECK(sb.step == 2 * N_STEPS &&
                     fabs((double)sa.particles - (double)sb.particles) < 0.05 * sa.particles,
                 "cuda after a cpu checkpoint: step %lld, %zu particles (cpu %zu)",
                 (long long)sb.step, sb.particles, sa.particles);
    }
    kedr_dsmc_destroy(a);
    kedr_dsmc_destroy(b);
    kedr_ctx_destroy(cpu);
    kedr_ctx_destroy(gpu);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* Copies src to dst with the bytes [at, at + len) replaced by with (or cut there if with is
 * NULL). */
static void damaged_copy(const char *src, const char *dst, long at, const void *with, size_t len)
{
    long n = file_size(src);
    char *buf = malloc((size_t)n);
    FILE *f = fopen(src, "rb");
    TU_CHECK(f && fread(buf, 1, (size_t)n, f) == (size_t)n, "read %s", src);
    if (f)
        fclose(f);
    if (with)
        memcpy(buf + at, with, len);
    f = fopen(dst, "wb");
    TU_CHECK(f && fwrite(buf, 1, with ? (size_t)n : (size_t)at, f) == (with ? (size_t)n : (size_t)at),
             "write %s", dst);
    if (f)
        fclose(f);
    free(buf);
}

/* Loading path into sim must fail with a message naming the file and holding frag, leaving sim
 * as it was. */
static void expect_refused(kedr_dsmc *sim, const char *path, const char *frag)
{
    kedr_dsmc_stats before, after;
    TU_OK(kedr_dsmc_get_stats(sim, &before));
    kedr_status s = kedr_dsmc_read_checkpoint(sim, path);
    TU_CHECK(s == KEDR_ERR_PARSE || s == KEDR_ERR_IO, "%s accepted (%s)", path,
             kedr_status_name(s));
    const char *msg = kedr_last_error();
    TU_CHECK(strstr(msg, path) && strstr(msg, frag), "%s: message '%s' lacks '%s'", path, msg,
             frag);
    TU_OK(kedr_dsmc_get_stats(sim, &after));
    TU_CHECK(after.step == before.step && after.particles == before.particles,
             "%s: the simulator changed", path);
}

static void test_bad_files(kedr_ctx *ctx)
{
    kedr_dsmc_case c = quick_case();
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    run_steps(sim, 3);
    char good[512], bad[512];
    snprintf(good, sizeof good, "%s/good.chk", dir);
    snprintf(bad, sizeof bad, "%s/bad.chk", dir);
    TU_OK(kedr_dsmc_write_checkpoint(sim, good));
    TU_CHECK(access(good, F_OK) == 0, "no checkpoint file");
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", good);
    TU_CHECK(access(tmp, F_OK) != 0, "%s left behind", tmp);
    long n = file_size(good);
    kedr_dsmc *other = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &other));
    if (!other) {
        kedr_dsmc_destroy(sim);
        return;
    }
    run_steps(other, 1);

    damaged_copy(good, bad, n / 2, NULL, 0);
    expect_refused(other, bad, "truncated");
    damaged_copy(good, bad, 100, NULL, 0);
    expect_refused(other, bad, "truncated");
    unsigned char flip = 0x5a;
    damaged_copy(good, bad, n / 2, &flip, 1);
    expect_refused(other, bad, "corrupt");
    damaged_copy(good, bad, n - 12, &flip, 1); /* in the checksum */
    expect_refused(other, bad, "corrupt");
    uint32_t version = 99;
    damaged_copy(good, bad, 8, &version, 4);
    expect_refused(other, bad, "version 99");
    damaged_copy(good, bad, 0, "NOTKEDR!", 8);
    expect_refused(other, bad, "not a kedr DSMC checkpoint");
    FILE *f = fopen(bad, "wb");
    if (f)
        fclose(f);
    expect_refused(other, bad, "not a kedr DSMC checkpoint");
    snprintf(bad, sizeof bad, "%s/missing.chk", dir);
    expect_refused(other, bad, "cannot open");

    /* The same file read by a simulator of another case (another dt). */
    kedr_dsmc_case d = c;
    d.dt *= 1.5;
    kedr_dsmc *foreign = NULL;
    TU_OK(kedr_dsmc_create(ctx, &d, &foreign));
    if (foreign)
        expect_refused(foreign, good, "another case");
    kedr_dsmc_destroy(foreign);
    TU_CHECK(kedr_dsmc_restart(ctx, &d, good, &foreign) == KEDR_ERR_PARSE && !foreign,
             "restart of another case");
    /* ... or another wall temperature of a body ([body] temperature). */
    d = c;
    d.body[0].temperature = 400;
    TU_OK(kedr_dsmc_create(ctx, &d, &foreign));
    if (foreign)
        expect_refused(foreign, good, "another case");
    kedr_dsmc_destroy(foreign);

    /* A file with data after its end. */
    snprintf(bad, sizeof bad, "%s/long.chk", dir);
    damaged_copy(good, bad, 0, "KEDRDSMC", 8);
    f = fopen(bad, "ab");
    if (f) {
        fputc(0, f);
        fclose(f);
    }
    expect_refused(other, bad, "corrupt");

    TU_CHECK(kedr_dsmc_write_checkpoint(sim, "/no/such/dir/x.chk") == KEDR_ERR_IO &&
                 strstr(kedr_last_error(), "/no/such/dir/x.chk.tmp"),
             "unwritable: %s", kedr_last_error());
    /* A step that fails after moving the particles leaves no state to continue exactly: no
     * checkpoint of it, until a whole step succeeds again. */
    unsigned move_collide = KEDR_DSMC_STAGE_BIT(KEDR_DSMC_MOVE) |
                            KEDR_DSMC_STAGE_BIT(KEDR_DSMC_COLLIDE);
    TU_CHECK(kedr_dsmc_step_stages(sim, move_collide) == KEDR_ERR_INVALID, "move + collide");
    TU_CHECK(kedr_dsmc_write_checkpoint(sim, good) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "cannot be continued exactly") &&
                 strstr(kedr_last_error(), good),
             "mid-step checkpoint: %s", kedr_last_error());
    TU_OK(kedr_dsmc_step(sim));
    TU_OK(kedr_dsmc_write_checkpoint(sim, good));
    TU_CHECK(kedr_dsmc_write_checkpoint(NULL, good) == KEDR_ERR_INVALID, "NULL sim");
    TU_CHECK(kedr_dsmc_read_checkpoint(sim, NULL) == KEDR_ERR_INVALID, "NULL path");
    kedr_dsmc_destroy(sim);
    kedr_dsmc_destroy(other);
}

/* ---- forged files: a valid checksum over values no run writes ---------------------------- */

/* The checksum as the writer makes it: FNV-1a of everything before the last 16 bytes. */
static void fix_checksum(unsigned char *b, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i + 16 < size; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    memcpy(b + size - 16, &h, 8);
}

/* Copies src to dst with len bytes at `at` replaced by with, and the checksum made to match. */
static void forge(const char *src, const char *dst, long at, const void *with, size_t len)
{
    long n = file_size(src);
    unsigned char *buf = malloc((size_t)n);
    FILE *f = fopen(src, "rb");
    TU_CHECK(f && fread(buf, 1, (size_t)n, f) == (size_t)n, "read %s", src);
    if (f)
        fclose(f);
    memcpy(buf + at, with, len);
    fix_checksum(buf, (size_t)n);
    f = fopen(dst, "wb");
    TU_CHECK(f && fwrite(buf, 1, (size_t)n, f) == (size_t)n, "write %s", dst);
    if (f)
        fclose(f);
    free(buf);
}

/* Where the arrays of a checkpoint lie (docs/dsmc.md, Checkpoints): the header's counts are at
 * fixed offsets, the particle arrays (each a 24-byte record, then n elements) follow the header,
 * then the cell arrays and the surface sums, then 16 bytes. */
typedef struct {
    long n, ncells, nelem, nacc, header;
    long field[8]; /* each particle array's first element */
    long starts, counts, sgmax, acc, surf;
} chk_map;

static chk_map map_file(const char *path, const size_t *elems, int nf)
{
    chk_map m;
    memset(&m, 0, sizeof m);
    uint64_t v[3] = {0, 0, 0};
    FILE *f = fopen(path, "rb");
    long offs[3] = {104, 112, 144}; /* n, cells, surface elements */
    for (int k = 0; k < 3 && f; k++)
        TU_CHECK(fseek(f, offs[k], SEEK_SET) == 0 && fread(&v[k], 8, 1, f) == 1, "%s header",
                 path);
    uint32_t nacc = 0; /* sample sums a cell: 8, a mixture's one more per species */
    TU_CHECK(f && fseek(f, 124, SEEK_SET) == 0 && fread(&nacc, 4, 1, f) == 1, "%s header", path);
    if (f)
        fclose(f);
    m.n = (long)v[0], m.ncells = (long)v[1], m.nelem = (long)v[2], m.nacc = (long)nacc;
    long body = 0;
    for (int k = 0; k < nf; k++)
        body += 24 + m.n * (long)elems[k];
    long cells = m.ncells * (4 + 4 + 4 + 8 * m.nacc), surf = m.nelem * 8 * 9;
    m.header = file_size(path) - body - cells - surf - 16;
    long at = m.header;
    for (int k = 0; k < nf; k++) {
        m.field[k] = at + 24;
        at += 24 + m.n * (long)elems[k];
    }
    m.starts = at;
    m.counts = at + 4 * m.ncells;
    m.sgmax = at + 8 * m.ncells;
    m.acc = at + 12 * m.ncells;
    m.surf = m.acc + 8 * m.nacc * m.ncells;
    return m;
}

/* A forged file is refused with a message naming the file, the array or field, the index and
 * the value, and the simulator is left as it was. */
static void expect_forged(kedr_dsmc *sim, const char *good, const char *bad, long at,
                          const void *with, size_t len, const char *field, const char *index)
{
    forge(good, bad, at, with, len);
    expect_refused(sim, bad, field);
    TU_CHECK(!index || strstr(kedr_last_error(), index), "'%s' lacks '%s'", kedr_last_error(),
             index);
}

static void test_forged(kedr_ctx *ctx)
{
    kedr_dsmc_case c = quick_case();
    kedr_dsmc *sim = NULL, *other = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    TU_OK(kedr_dsmc_create(ctx, &c, &other));
    if (!sim || !other) {
        kedr_dsmc_destroy(sim);
        kedr_dsmc_destroy(other);
        return;
    }
    run_steps(sim, N_STEPS / 2 + 3); /* sampling, so the sample sums hold data */
    run_steps(other, 1);
    char good[512], bad[512];
    snprintf(good, sizeof good, "%s/forge-good.chk", dir);
    snprintf(bad, sizeof bad, "%s/forge-bad.chk", dir);
    TU_OK(kedr_dsmc_write_checkpoint(sim, good));
    const size_t elems[5] = {8, 8, 8, 8, 8}; /* argon: x, y, vx, vy, vz */
    chk_map m = map_file(good, elems, 5);
    TU_CHECK(m.n > 1000 && m.ncells == 50 * 25 && m.nelem > 0 && m.header > 168,
             "%s: %ld particles, %ld cells, %ld elements, header %ld", good, m.n, m.ncells,
             m.nelem, m.header);
    /* The forger itself: the file unchanged but for its checksum is accepted. */
    char same[8];
    FILE *f = fopen(good, "rb");
    TU_CHECK(f && fseek(f, m.field[0], SEEK_SET) == 0 && fread(same, 8, 1, f) == 1, "read x");
    if (f)
        fclose(f);
    forge(good, bad, m.field[0], same, 8);
    TU_OK(kedr_dsmc_read_checkpoint(other, bad));
    kedr_dsmc_destroy(other);
    TU_OK(kedr_dsmc_create(ctx, &c, &other));

    /* (sigma g)max: each would ask for endless or no collisions. */
    float sg[4] = {-1.0f, NAN, INFINITY, 3e38f};
    for (int k = 0; k < 4; k++)
        expect_forged(other, good, bad, m.sgmax + 4 * 3, &sg[k], 4, "(sigma g)max", "cell 3:");
    /* Positions and velocities. */
    double d[3] = {NAN, 1e300, -0.25};
    for (int k = 0; k < 3; k++)
        expect_forged(other, good, bad, m.field[0] + 8 * 5, &d[k], 8, "x = ", "particle 5:");
    expect_forged(other, good, bad, m.field[1] + 8 * 6, &d[1], 8, "y = ", "particle 6:");
    double fast[2] = {1e300, 2e6};
    for (int k = 0; k < 2; k++)
        expect_forged(other, good, bad, m.field[2] + 8 * 7, &fast[k], 8, "vx = ", "particle 7:");
    expect_forged(other, good, bad, m.field[4], &d[0], 8, "vz = ", "particle 0:");
    /* Cell ranges: a start off by one, a count too many, a start past the end. */
    uint32_t u;
    f = fopen(good, "rb");
    TU_CHECK(f && fseek(f, m.starts + 4 * 600, SEEK_SET) == 0 && fread(&u, 4, 1, f) == 1, "start");
    if (f)
        fclose(f);
    u += 1;
    expect_forged(other, good, bad, m.starts + 4 * 600, &u, 4, "start", "cell 600:");
    f = fopen(good, "rb");
    TU_CHECK(f && fseek(f, m.counts + 4 * 600, SEEK_SET) == 0 && fread(&u, 4, 1, f) == 1, "count");
    if (f)
        fclose(f);
    u += 1;
    expect_forged(other, good, bad, m.counts + 4 * 600, &u, 4, "start", "cell 601:");
    u = 0xffffffffu;
    expect_forged(other, good, bad, m.counts + 4 * (m.ncells - 1), &u, 4, "count", NULL);
    /* Sample and surface sums. */
    double minus = -1;
    expect_forged(other, good, bad, m.acc + 8 * 10, &minus, 8, "sampled particles", "cell 10:");
    expect_forged(other, good, bad, m.acc + 8 * (2 * m.ncells + 11), &d[0], 8,
                  "sampled momentum x", "cell 11:");
    expect_forged(other, good, bad, m.surf + 8 * 2, &d[0], 8, "surface hits", "element 2:");
    double inf = INFINITY;
    expect_forged(other, good, bad, m.surf + 8 * (6 * m.nelem + 1), &inf, 8, "surface force x",
                  "element 1:");
    /* Header fields: step, samples, time; huge and impossible particle counts. */
    int64_t i64 = -1;
    expect_forged(other, good, bad, 32, &i64, 8, "step = -1", NULL);
    i64 = 1000;
    expect_forged(other, good, bad, 40, &i64, 8, "samples = 1000", NULL);
    expect_forged(other, good, bad, 48, &d[0], 8, "time = nan", NULL);
    uint64_t big = (uint64_t)1 << 31;
    expect_forged(other, good, bad, 104, &big, 8, "truncated", "2147483648 particles");
    big = (uint64_t)1 << 40;
    expect_forged(other, good, bad, 104, &big, 8, "n = 1099511627776", NULL);
    big = (uint64_t)m.n - 1; /* one particle fewer than the file holds */
    expect_forged(other, good, bad, 104, &big, 8, "corrupt", NULL);
    kedr_dsmc_destroy(sim);
    kedr_dsmc_destroy(other);
}

/* A gas of several rotating species stores rotational energies and species bytes: each is
 * checked too. */
static void test_forged_mixture(kedr_ctx *ctx)
{
    kedr_dsmc_case c = quick_case();
    char species[1200];
    snprintf(species, sizeof species, "%scases/dsmc/species.ini", root);
    TU_OK(kedr_dsmc_species_load(species, "air", &c));
    for (int k = 0; k < c.nspecies; k++) /* the map below has no vibrational levels */
        c.species[k].theta_v = c.species[k].z_vib = c.species[k].zv_c1 = c.species[k].zv_c2 = 0;
    kedr_dsmc *sim = NULL, *other = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    TU_OK(kedr_dsmc_create(ctx, &c, &other));
    if (sim && other) {
        run_steps(sim, 2);
        char good[512], bad[512];
        snprintf(good, sizeof good, "%s/air-good.chk", dir);
        snprintf(bad, sizeof bad, "%s/air-bad.chk", dir);
        TU_OK(kedr_dsmc_write_checkpoint(sim, good));
        const size_t elems[7] = {8, 8, 8, 8, 8, 4, 1}; /* ..., erot, species */
        chk_map m = map_file(good, elems, 7);
        uint8_t sp[2] = {3, 255};
        for (int k = 0; k < 2; k++)
            expect_forged(other, good, bad, m.field[6] + 9, &sp[k], 1, "species = ",
                          "particle 9:");
        float e[3] = {-1.0f, NAN, 1e30f};
        for (int k = 0; k < 3; k++)
            expect_forged(other, good, bad, m.field[5] + 4 * 4, &e[k], 4, "erot = ",
                          "particle 4:");
        double minus = -1; /* the sums of each species' molecules follow the 8 others */
        TU_CHECK(m.nacc == 8 + c.nspecies, "%s: %ld sums a cell, expected %d", good, m.nacc,
                 8 + c.nspecies);
        expect_forged(other, good, bad, m.acc + 8 * (9 * m.ncells + 5), &minus, 8,
                      "sampled molecules of O2 = -1", "cell 5:");
        TU_OK(kedr_dsmc_read_checkpoint(other, good));
        run_steps(other, 1);
    }
    kedr_dsmc_destroy(sim);
    kedr_dsmc_destroy(other);
}

/* Writes never replace what is not a regular file: a FIFO (what /dev/null would be to root) or
 * a directory given as the checkpoint or output path is refused and left as it was. */
static void test_special_targets(kedr_ctx *ctx)
{
    kedr_dsmc_case c = quick_case();
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    run_steps(sim, 1);
    kedr_dsmc_fields fl;
    kedr_dsmc_surface sf;
    TU_OK(kedr_dsmc_get_fields(sim, &fl));
    TU_OK(kedr_dsmc_get_surface(sim, &sf));
    char fifo[512], sub[512], tmp[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    TU_CHECK(mkfifo(fifo, 0600) == 0 && mkdir(sub, 0700) == 0, "mkfifo / mkdir");
    const char *targets[2] = {fifo, sub};
    for (int k = 0; k < 2; k++) {
        const char *t = targets[k];
        kedr_status s[5] = {kedr_dsmc_write_checkpoint(sim, t), kedr_dsmc_write_csv(&c, &fl, t),
                            kedr_dsmc_write_vti(&c, &fl, t), kedr_dsmc_write_surface_csv(&sf, t),
                            kedr_dsmc_write_surface_vtp(&sf, t)};
        for (int w = 0; w < 5; w++)
            TU_CHECK(s[w] == KEDR_ERR_IO, "write %d onto %s: %s", w, t, kedr_status_name(s[w]));
        TU_CHECK(strstr(kedr_last_error(), t) != NULL, "message '%s'", kedr_last_error());
        struct stat st;
        snprintf(tmp, sizeof tmp, "%s.tmp", t);
        TU_CHECK(stat(t, &st) == 0 && (k ? S_ISDIR(st.st_mode) : S_ISFIFO(st.st_mode)) &&
                     access(tmp, F_OK) != 0,
                 "%s was replaced or left a .tmp", t);
        /* ... and a FIFO is not a checkpoint to read (nor waited on) */
        expect_refused(sim, t, "regular file");
    }
    unlink(fifo);
    rmdir(sub);
    kedr_dsmc_surface_free(&sf);
    kedr_dsmc_fields_free(&fl);
    kedr_dsmc_destroy(sim);
}

/* Cells that no molecule entered while sampling are missing values in the outputs, not a gas at
 * 0 K: empty CSV fields and NaN in VTK, with a particle count of 0. An empty domain filled only
 * from its inflow sides for two steps leaves most cells so. */
static void test_missing_cells(kedr_ctx *ctx)
{
    kedr_dsmc_case c = quick_case();
    c.fill = 0;
    c.sample_start = 1;
    c.vtk_format = KEDR_DSMC_VTK_ASCII; /* the check below reads the .vti as text */
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    run_steps(sim, 2);
    kedr_dsmc_fields fl;
    TU_OK(kedr_dsmc_get_fields(sim, &fl));
    size_t nc = (size_t)c.nx * c.ny, empty = nc, full = nc;
    for (size_t k = 0; k < nc; k++) {
        if (fl.particles[k] == 0 && empty == nc)
            empty = k;
        if (fl.particles[k] > 0 && full == nc)
            full = k;
    }
    TU_CHECK(empty < nc && full < nc, "cells with and without molecules: %zu, %zu", empty, full);
    char csv[512], vti[512];
    snprintf(csv, sizeof csv, "%s/missing.csv", dir);
    snprintf(vti, sizeof vti, "%s/missing.vti", dir);
    TU_OK(kedr_dsmc_write_csv(&c, &fl, csv));
    TU_OK(kedr_dsmc_write_vti(&c, &fl, vti));
    /* CSV row empty + 2: i, j, x, y, then 12 fields of which only particles_per_cell (the 11th)
     * has a value. */
    FILE *f = fopen(csv, "r");
    char line[4096] = "", want[64];
    for (size_t r = 0; f && r <= empty + 1 && fgets(line, sizeof line, f); r++)
        ;
    if (f)
        fclose(f);
    snprintf(want, sizeof want, ",,,,,,,,,,0,\n");
    TU_CHECK(strlen(line) > strlen(want) && strcmp(line + strlen(line) - strlen(want), want) == 0,
             "CSV row of empty cell %zu: '%s'", empty, line);
    /* VTK: the temperature array's entry of that cell is nan. */
    f = fopen(vti, "r");
    size_t row = 0;
    int in_t = 0, found = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, "Name=\"temperature\"")) {
            in_t = 1;
            continue;
        }
        if (in_t && row++ == empty) {
            found = strcmp(line, "nan\n") == 0;
            break;
        }
    }
    if (f)
        fclose(f);
    TU_CHECK(found, "VTK temperature of empty cell %zu is not nan", empty);
    kedr_dsmc_fields_free(&fl);
    kedr_dsmc_destroy(sim);
}

/* Running out of room: the failed step leaves the state of before it; its checkpoint restarts
 * with room enough and ends where the unlimited run ends. */
static void test_out_of_room(kedr_ctx *ctx)
{
    kedr_dsmc_case c = quick_case();
    c.fill = 0; /* the domain fills from the inflow sides: the count grows every step */
    kedr_dsmc *free_run = NULL, *tight = NULL, *again = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &free_run));
    if (!free_run)
        return;
    run_steps(free_run, N_STEPS / 2);
    kedr_dsmc_stats st;
    TU_OK(kedr_dsmc_get_stats(free_run, &st));
    run_steps(free_run, 2 * N_STEPS - N_STEPS / 2);
    kedr_dsmc_case small = c;
    small.max_particles = st.particles + 1; /* room for the first N/2 steps, not one more */
    TU_OK(kedr_dsmc_create(ctx, &small, &tight));
    if (!tight) {
        kedr_dsmc_destroy(free_run);
        return;
    }
    kedr_status s = KEDR_OK;
    int steps = 0;
    while (steps < 2 * N_STEPS && (s = kedr_dsmc_step(tight)) == KEDR_OK)
        steps++;
    TU_CHECK(s == KEDR_ERR_NOMEM && steps == N_STEPS / 2, "limit: %s after %d steps",
             kedr_status_name(s), steps);
    TU_CHECK(strstr(kedr_last_error(), "max_particles") != NULL, "%s", kedr_last_error());
    size_t now = 0, fit = 0;
    TU_OK(kedr_dsmc_capacity(tight, &now, &fit));
    TU_CHECK(now <= small.max_particles && fit == small.max_particles, "capacity %zu, fit %zu",
             now, fit);
    kedr_dsmc_stats ts;
    TU_OK(kedr_dsmc_get_stats(tight, &ts));
    TU_CHECK(ts.step == N_STEPS / 2 && ts.particles == st.particles, "after the failed step: step "
             "%lld, %zu particles (expected %d, %zu)", (long long)ts.step, ts.particles,
             N_STEPS / 2, st.particles);
    char path[512];
    snprintf(path, sizeof path, "%s/full.chk", dir);
    TU_OK(kedr_dsmc_write_checkpoint(tight, path));
    kedr_dsmc_destroy(tight);
    TU_OK(kedr_dsmc_restart(ctx, &c, path, &again)); /* no limit now */
    if (again) {
        run_steps(again, 2 * N_STEPS - N_STEPS / 2);
        check_same(free_run, again, "out of room, checkpoint, restart");
    }
    kedr_dsmc_destroy(again);
    kedr_dsmc_destroy(free_run);
}

/* The memory goal: at most 64 bytes of GPU memory per particle in all (sort buffers and
 * per-cell arrays included) in a closed box at 10 particles per cell before sampling starts, in
 * 2D and 3D for a simple monatomic gas and in 2D for a mixture of rotating species; sampling then
 * adds its per-cell sums. The least a slot can hold: the doubles, the 8-byte gather spare and
 * the permutation, and the rotational energy and species byte where the gas has them
 * (docs/dsmc.md, Memory). The cpu holds the particle arrays twice, and no more. Slots follow the
 * particle count. */
static void memory_case(kedr_ctx *ctx, const char *what, kedr_dsmc_case c, double least)
{
    const char *be = kedr_backend_name(kedr_ctx_backend(ctx));
    double second = kedr_ctx_backend(ctx) == KEDR_BACKEND_CPU ? least - 12 : 0;
    least += second;
    c.sample_start = 4;
    kedr_dsmc *sim = NULL;
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    if (!sim)
        return;
    size_t bytes[2] = {0, 0}, cells = (size_t)c.nx * c.ny * (c.dims == 3 ? c.nz : 1);
    for (int k = 0; k < 2; k++) {
        run_steps(sim, 3);
        kedr_dsmc_stats st;
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        TU_OK(kedr_dsmc_memory(sim, &bytes[k]));
        double per = (double)bytes[k] / (double)st.particles;
        printf("%s, %s: %zu particles, %zu bytes (%.1f per particle) %s sampling\n", be, what,
               st.particles, bytes[k], per, k ? "with" : "without");
        TU_CHECK(st.particles > 8 * cells && per >= least && per <= (k ? 72 : 64) + second,
                 "%s, %s: %.1f bytes per particle %s sampling (%zu particles; at least %.0f)", be,
                 what, per, k ? "with" : "without", st.particles, least);
    }
    size_t sums = 64 + (c.nspecies > 1 ? 8 * (size_t)c.nspecies : 0); /* a mixture: species */
    TU_CHECK(bytes[1] == bytes[0] + cells * sums,
             "%s, %s: sampling took %zu bytes, expected the %zu-byte sums of %zu cells", be, what,
             bytes[1] - bytes[0], sums, cells);
    kedr_dsmc_destroy(sim);
}

static void test_memory(kedr_ctx *ctx)
{
    memory_case(ctx, "planar", dt_box(0.02, 100, 1e21, 300, 10, 1e-7), 5 * 8 + 8 + 4);
    kedr_dsmc_case c = dt_box(0.02, 22, 1e21, 300, 10, 1e-7);
    c.dims = 3;
    c.hi[2] = 0.02;
    c.nz = 22;
    for (int s = 0; s < 6; s++)
        c.side[s] = KEDR_DSMC_SPECULAR;
    c.weight = c.number_density * pow(0.02 / 22, 3) / 10;
    memory_case(ctx, "3D", c, 6 * 8 + 8 + 4);
    c = dt_box(0.02, 100, 1e21, 300, 10, 1e-7);
    c.nspecies = 2;
    c.species[1] = dt_nitrogen();
    c.fraction[0] = c.fraction[1] = 0.5;
    memory_case(ctx, "planar mixture with rotation", c, 5 * 8 + 8 + 4 + 4 + 1);
}

int main(void)
{
    find_root();
    snprintf(dir, sizeof dir, "/tmp/kedr-test-chk-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        test_restart(ctx);
        test_bad_files(ctx);
        test_forged(ctx);
        test_forged_mixture(ctx);
        test_special_targets(ctx);
        test_missing_cells(ctx);
        test_out_of_room(ctx);
        test_memory(ctx);
        kedr_ctx_destroy(ctx);
    }
    test_cross_backend();
    tu_remove_dir(dir);
    return tu_finish("test_dsmc_checkpoint");
}
