/* cayley: hostile checkpoints and interruption. Checkpoints whose checksum matches but whose
 * contents are not a state of the search (F(s) altered, the ended flag flipped, counts that
 * overflow, a level asking for a huge allocation in a tiny file, bits past the group order,
 * states that are not elements, unsorted layers) are refused with a message naming the file
 * and the problem; and a signal stops a search at a level boundary with its checkpoint saved,
 * from which a resumed run gives the uninterrupted result. */
#include "cayley_checksum.h"
#include "test_util.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[256], bad[256];

static unsigned char *read_all(const char *p, size_t *size)
{
    FILE *f = fopen(p, "rb");
    *size = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = tu_host_alloc(n > 0 ? (size_t)n : 1);
    *size = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static void write_all(const char *p, const unsigned char *buf, size_t size)
{
    FILE *f = fopen(p, "wb");
    TU_CHECK(f && fwrite(buf, 1, size, f) == size && fclose(f) == 0, "cannot write %s", p);
}

static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/* The checksum made to match an altered file; a dense file whose sizes disagree is a defect of
 * the test itself. */
static void fix_dense(unsigned char *b, size_t size)
{
    TU_CHECK(ck_fix_dense(b, size), "dense checkpoint of %zu bytes: its header's sizes disagree",
             size);
}

static void fix_sparse(unsigned char *b, size_t size) { ck_fix_sparse(b, size); }

static kedr_status run(kedr_ctx *ctx, const kedr_cayley_group *g, kedr_cayley_mode mode,
                       const char *write, const char *resume, int max_levels,
                       kedr_cayley_result *r)
{
    kedr_cayley_options opt = {.mode = mode, .checkpoint_path = write, .resume_path = resume,
                               .max_levels = max_levels, .checkpoint_every = 1e9};
    memset(r, TU_POISON_BYTE, sizeof *r);
    return kedr_cayley_growth(ctx, g, &opt, r);
}

/* Resuming g from `bad` (after the checksum is made to match, unless fix is NULL) must fail
 * with KEDR_ERR_PARSE and a message naming the file and containing text. */
static void expect_refused(kedr_ctx *ctx, const kedr_cayley_group *g, kedr_cayley_mode mode,
                           unsigned char *b, size_t size, void (*fix)(unsigned char *, size_t),
                           const char *text, const char *what)
{
    if (fix)
        fix(b, size);
    write_all(bad, b, size);
    kedr_cayley_result r;
    kedr_status st = run(ctx, g, mode, NULL, bad, 0, &r);
    TU_CHECK(st == KEDR_ERR_PARSE && strstr(kedr_last_error(), bad) &&
                 strstr(kedr_last_error(), text) && r.growth == NULL,
             "%s (%s): %s, '%s' (expected '%s')", what, g->spec, kedr_status_name(st),
             kedr_last_error(), text);
    if (st == KEDR_OK)
        kedr_cayley_result_free(&r);
}

/* A checkpoint of g stopped after `level` (0: ended) in a fresh buffer of *size bytes. */
static unsigned char *checkpoint_of(kedr_ctx *ctx, const kedr_cayley_group *g,
                                    kedr_cayley_mode mode, int level, size_t *size)
{
    kedr_cayley_result r;
    TU_OK(run(ctx, g, mode, path, NULL, level, &r));
    kedr_cayley_result_free(&r);
    return read_all(path, size);
}

/* Dense checkpoints (pancake:7 after level 3 and ended; abelian:5,7, whose bitmaps have bits
 * past the order): header at 0, F at 208, visited and frontier of B bytes, checksum. */
static void check_dense(kedr_ctx *ctx)
{
    kedr_cayley_group *g = NULL, *ab = NULL;
    TU_OK(kedr_cayley_parse("pancake:7", 0, &g));
    TU_OK(kedr_cayley_parse("abelian:5,7", 0, &ab));
    size_t size = 0, esize = 0, asize = 0;
    unsigned char *good = checkpoint_of(ctx, g, KEDR_CAYLEY_DENSE, 3, &size);
    unsigned char *ended = checkpoint_of(ctx, g, KEDR_CAYLEY_DENSE, 0, &esize);
    unsigned char *agood = checkpoint_of(ctx, ab, KEDR_CAYLEY_DENSE, 4, &asize);
    size_t B = kedr_cayley_dense_bytes(g) / 3, vis = 208 + 32, fr = vis + B;
    TU_CHECK(good && size == fr + B + 8 && ended && agood, "pancake:7 checkpoint: %zu bytes",
             size);
    if (!good || size != fr + B + 8 || !ended || !agood)
        return;
    unsigned char *b = tu_host_alloc(size + esize + asize);
    memcpy(b, good, size);
    put64(b + 208, 2);
    expect_refused(ctx, g, KEDR_CAYLEY_DENSE, b, size, fix_dense, "F(0) = 2, expected 1", "F(0)");
    memcpy(b, good, size);
    put64(b + 208 + 16, ck_get64(b + 208 + 16) + 1);
    expect_refused(ctx, g, KEDR_CAYLEY_DENSE, b, size, fix_dense,
                   "inconsistent: 186 elements visited where the sum of F(0..3) is 187",
                   "F(2) altered");
    memcpy(b, good, size);
    b[12] = 1;
    expect_refused(ctx, g, KEDR_CAYLEY_DENSE, b, size, fix_dense, "the search is marked ended",
                   "the ended flag set on a search that goes on");
    memcpy(b, ended, esize);
    b[12] = 0;
    expect_refused(ctx, g, KEDR_CAYLEY_DENSE, b, esize, fix_dense,
                   "F(level) says otherwise (or the ended flag is missing)",
                   "the ended flag cleared on an ended search");
    memcpy(b, good, size);
    memcpy(b + 180, &(uint32_t){4000}, 4); /* a level of 4000 in a file with room for 4 */
    expect_refused(ctx, g, KEDR_CAYLEY_DENSE, b, size, NULL, "truncated", "level 4000");
    memcpy(b, good, size);
    memcpy(b + 180, &(uint32_t){0xffffffffu}, 4);
    expect_refused(ctx, g, KEDR_CAYLEY_DENSE, b, size, NULL, "corrupt header (level 4294967295",
                   "level 2^32 - 1");
    /* an element moved from the visited bitmap to another place: counts still agree */
    int f = -1, u = -1;
    for (size_t i = 0; i < 8 * B && (f < 0 || u < 0); i++) {
        int in_vis = good[vis + i / 8] >> (i % 8) & 1, in_fr = good[fr + i / 8] >> (i % 8) & 1;
        if (in_fr && i > 0 && f < 0)
            f = (int)i;
        if (!in_vis && i < 5040 && u < 0)
            u = (int)i;
    }
    memcpy(b, good, size);
    b[vis + f / 8] ^= (unsigned char)(1u << (f % 8));
    b[vis + u / 8] ^= (unsigned char)(1u << (u % 8));
    expect_refused(ctx, g, KEDR_CAYLEY_DENSE, b, size, fix_dense, "is in the frontier but not "
                   "visited", "a frontier element not visited");
    memcpy(b, good, size);
    b[vis] ^= 1;
    b[vis + u / 8] ^= (unsigned char)(1u << (u % 8));
    expect_refused(ctx, g, KEDR_CAYLEY_DENSE, b, size, fix_dense, "the identity (rank 0) is not "
                   "visited", "the identity not visited");
    /* abelian:5,7 has 35 elements in 16-byte bitmaps: bit 100 is past the order */
    memcpy(b, agood, asize);
    b[208 + 40 + 12] |= 0x10;
    expect_refused(ctx, ab, KEDR_CAYLEY_DENSE, b, asize, fix_dense, "the visited bitmap has bits "
                   "set at or past the group order 35", "a bit past the order");
    free(b);
    free(good);
    free(ended);
    free(agood);
    kedr_cayley_group_free(g);
    kedr_cayley_group_free(ab);
}

/* Sparse header fields: version at 8, complete at 20, level at 184, order at 192, the counts of
 * prev, cur and visited at 200, 208, 216; F at 224, then the states. */
#define SCK_F 224
static void check_sparse_counts(kedr_ctx *ctx)
{
    /* an abelian group of order near 2^62 searched in sparse mode: counts that each pass, but
     * whose total in bytes wraps around 2^64, and a huge level in a tiny file */
    kedr_cayley_group *g = NULL;
    TU_OK(kedr_cayley_parse("abelian:2147483647,2147483647", 0, &g));
    size_t size = 0;
    unsigned char *good = checkpoint_of(ctx, g, KEDR_CAYLEY_SPARSE, 2, &size);
    if (!good || size < SCK_F + 24) {
        TU_CHECK(0, "abelian sparse checkpoint: %zu bytes", size);
        kedr_cayley_group_free(g);
        return;
    }
    unsigned char *b = tu_host_alloc(size);
    memcpy(b, good, size);
    put64(b + 208, (uint64_t)1 << 61);
    put64(b + 216, ((uint64_t)1 << 61) + 1); /* (2^62 + 1) states of 8 bytes: wraps */
    expect_refused(ctx, g, KEDR_CAYLEY_SPARSE, b, size, fix_sparse, "more than 2^64 bytes",
                   "counts whose size overflows");
    memcpy(b, good, size);
    memcpy(b + 184, &(int32_t){INT32_MAX - 1}, 4);
    expect_refused(ctx, g, KEDR_CAYLEY_SPARSE, b, size, fix_sparse, "truncated",
                   "a level of 2^31 - 2 in a tiny file");
    memcpy(b, good, size);
    put64(b + 208, 0);
    expect_refused(ctx, g, KEDR_CAYLEY_SPARSE, b, size, fix_sparse, "expected a current layer",
                   "an empty current layer");
    free(b);
    free(good);
    kedr_cayley_group_free(g);
}

/* Replaces state i of the one-word array at `at` (n states) by a state of the same kind,
 * between its neighbours and not in `avoid` (m states), so the file stays sorted; 0 if none. */
static int replace_state(unsigned char *b, size_t at, uint64_t n, uint64_t i, const uint64_t *all,
                         int nall, const unsigned char *avoid, uint64_t m)
{
    uint64_t lo = i ? ck_get64(b + at + 8 * (i - 1)) : 0;
    uint64_t hi = i + 1 < n ? ck_get64(b + at + 8 * (i + 1)) : UINT64_MAX;
    for (int k = 0; k < nall; k++) {
        int taken = all[k] == ck_get64(b + at + 8 * i);
        for (uint64_t j = 0; j < m && !taken; j++)
            taken = ck_get64(avoid + 8 * j) == all[k];
        if (!taken && all[k] > lo && all[k] < hi) {
            put64(b + at + 8 * i, all[k]);
            return 1;
        }
    }
    return 0;
}

/* perm:5 without inverse closure (cur and visited kept): F, the ended flag, states that are not
 * permutations, order, a current layer outside the visited set, the identity. */
static void check_sparse_layers(kedr_ctx *ctx)
{
    kedr_cayley_group *g = NULL, *cube = NULL;
    TU_OK(kedr_cayley_parse("perm:5:(1 2 3 4 5),(1 2)", 0, &g));
    TU_OK(kedr_cayley_parse("cube2", 0, &cube));
    size_t size = 0, zsize = 0, csize = 0;
    unsigned char *good = checkpoint_of(ctx, g, KEDR_CAYLEY_AUTO, 4, &size);
    unsigned char *zero = checkpoint_of(ctx, g, KEDR_CAYLEY_AUTO, 1, &zsize);
    unsigned char *cgood = checkpoint_of(ctx, cube, KEDR_CAYLEY_AUTO, 2, &csize);
    if (!good || !zero || !cgood || size < SCK_F + 48) {
        TU_CHECK(0, "perm:5 sparse checkpoints unreadable");
        return;
    }
    uint64_t ncur = ck_get64(good + 208), nvis = ck_get64(good + 216);
    size_t cur = SCK_F + 5 * 8, visited = cur + 8 * ncur;
    unsigned char *b = tu_host_alloc(size > csize ? size : csize);
    size_t cuts[] = {0, 100, 223, 224, cur + 4, size - 9, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        memcpy(b, good, size);
        expect_refused(ctx, g, KEDR_CAYLEY_AUTO, b, cuts[i], NULL, "truncated", "a cut file");
    }
    memcpy(b, good, size);
    put64(b + SCK_F + 8, 3);
    expect_refused(ctx, g, KEDR_CAYLEY_AUTO, b, size, fix_sparse,
                   "states in the visited set where F(0..4) says", "F(1) altered");
    memcpy(b, good, size);
    put64(b + SCK_F, 0);
    expect_refused(ctx, g, KEDR_CAYLEY_AUTO, b, size, fix_sparse, "F(0) = 0, expected 1", "F(0)");
    memcpy(b, good, size);
    b[20] = 1;
    expect_refused(ctx, g, KEDR_CAYLEY_AUTO, b, size, fix_sparse,
                   "marked as an ended search, but level 5 has", "the ended flag set early");
    memcpy(b, good, size);
    put64(b + cur, ck_get64(b + cur) | (uint64_t)1 << 40);
    expect_refused(ctx, g, KEDR_CAYLEY_AUTO, b, size, fix_sparse, "bits set past its last entry",
                   "a state with bits past its points");
    memcpy(b, good, size);
    put64(b + cur, 0); /* five times point 0 */
    expect_refused(ctx, g, KEDR_CAYLEY_AUTO, b, size, fix_sparse, "a repeated point",
                   "a state that is not a permutation");
    memcpy(b, good, size);
    uint64_t x = ck_get64(b + cur);
    put64(b + cur, ck_get64(b + cur + 8));
    put64(b + cur + 8, x);
    expect_refused(ctx, g, KEDR_CAYLEY_AUTO, b, size, fix_sparse,
                   "the current layer is not strictly sorted", "swapped states");
    /* every permutation of 5 points, packed: a current state replaced by one not visited */
    uint64_t all[120];
    int nall = 0;
    for (int p = 0; p < 3125; p++) {
        int d[5], seen = 0, ok = 1;
        for (int i = 0, q = p; i < 5; i++, q /= 5) {
            d[i] = q % 5;
            ok &= !(seen >> d[i] & 1);
            seen |= 1 << d[i];
        }
        uint64_t v = 0;
        for (int i = 0; ok && i < 5; i++)
            v |= (uint64_t)d[i] << (4 * i);
        if (ok)
            all[nall++] = v;
    }
    for (int i = 0; i < nall; i++) /* sorted, as the layers are */
        for (int j = i + 1; j < nall; j++)
            if (all[j] < all[i]) {
                uint64_t t = all[i];
                all[i] = all[j];
                all[j] = t;
            }
    memcpy(b, good, size);
    int replaced = 0;
    for (uint64_t i = 0; i < ncur && !replaced; i++)
        replaced = replace_state(b, cur, ncur, i, all, nall, b + visited, nvis);
    TU_CHECK(replaced, "no state to put in the current layer");
    expect_refused(ctx, g, KEDR_CAYLEY_AUTO, b, size, fix_sparse,
                   "a state of the current layer is not in the visited set", "a state not visited");
    /* level 1 with the identity replaced in the visited set */
    memcpy(b, zero, zsize);
    size_t zvis = SCK_F + 16 + 8 * ck_get64(zero + 208);
    uint64_t zn = ck_get64(zero + 216), id = 0;
    while (id < zn && ck_get64(b + zvis + 8 * id) != 0x43210) /* the identity, packed */
        id++;
    /* the identity is the largest packed permutation: its replacement goes first */
    TU_CHECK(id == zn - 1 && all[0] < ck_get64(b + zvis), "the identity is not last in %s", path);
    memmove(b + zvis + 8, b + zvis, 8 * (size_t)(zn - 1));
    put64(b + zvis, all[0]);
    expect_refused(ctx, g, KEDR_CAYLEY_AUTO, b, zsize, fix_sparse, "the identity is not in the "
                   "visited set", "no identity");
    /* cube2: a twist of 3 in a current state */
    memcpy(b, cgood, csize);
    size_t ccur = SCK_F + 24 + 8 * ck_get64(cgood + 200);
    put64(b + ccur, ck_get64(b + ccur) | (uint64_t)3 << 28);
    expect_refused(ctx, cube, KEDR_CAYLEY_AUTO, b, csize, fix_sparse, "not an element of cube2",
                   "a cube2 state with a twist of 3");
    free(b);
    free(good);
    free(zero);
    free(cgood);
    kedr_cayley_group_free(g);
    kedr_cayley_group_free(cube);
}

/* ---- interruption ---- */

static int stop_at; /* the on_level callback raises SIGINT after this level */

static void raise_at(const kedr_cayley_level *lv, void *user)
{
    (void)user;
    if (lv->level == stop_at)
        raise(SIGINT);
}

/* A signal after level `stop` (-1: before the search) stops the search there with
 * KEDR_ERR_INTERRUPTED, the levels done in the result and the checkpoint; resumed, it gives the
 * full result. */
static void check_interrupt(kedr_ctx *ctx, const char *spec, kedr_cayley_mode mode, int stop)
{
    kedr_cayley_group *g = NULL;
    TU_OK(kedr_cayley_parse(spec, 0, &g));
    kedr_cayley_result full, r;
    TU_OK(run(ctx, g, mode, NULL, NULL, 0, &full));
    remove(path);
    kedr_interrupt_install();
    if (stop < 0)
        raise(SIGINT);
    stop_at = stop;
    kedr_cayley_options opt = {.mode = mode, .checkpoint_path = path, .checkpoint_every = 1e9,
                               .on_level = raise_at};
    kedr_status st = kedr_cayley_growth(ctx, g, &opt, &r);
    int level = stop < 0 ? 0 : stop;
    TU_CHECK(st == KEDR_ERR_INTERRUPTED && strstr(kedr_last_error(), "interrupted by signal 2") &&
                 strstr(kedr_last_error(), path),
             "%s stopped at %d: %s, '%s'", spec, stop, kedr_status_name(st), kedr_last_error());
    if (st == KEDR_ERR_INTERRUPTED) {
        int same = r.diameter == level && !r.complete;
        for (int s = 0; same && s <= level; s++)
            same = r.growth[s] == full.growth[s];
        TU_CHECK(same, "%s stopped at %d: result of %d levels, complete %d", spec, stop,
                 r.diameter, r.complete);
        kedr_cayley_result_free(&r);
    } else if (st == KEDR_OK) {
        kedr_cayley_result_free(&r);
    }
    kedr_interrupt_clear();
    TU_CHECK(!kedr_interrupted(), "the flag stays set after kedr_interrupt_clear");
    st = run(ctx, g, mode, NULL, path, 0, &r);
    int same = st == KEDR_OK && r.resumed_from == level && r.complete &&
               r.diameter == full.diameter;
    for (int s = 0; same && s <= full.diameter; s++)
        same = r.growth[s] == full.growth[s];
    TU_CHECK(same, "%s resumed after a stop at %d: %s, '%s'", spec, stop, kedr_status_name(st),
             kedr_last_error());
    if (st == KEDR_OK)
        kedr_cayley_result_free(&r);
    /* without a checkpoint the result is still kept, and the message says nothing was saved */
    raise(SIGINT);
    opt.checkpoint_path = NULL;
    st = kedr_cayley_growth(ctx, g, &opt, &r);
    TU_CHECK(st == KEDR_ERR_INTERRUPTED && strstr(kedr_last_error(), "no --checkpoint") &&
                 r.diameter == 0 && r.growth && r.growth[0] == 1,
             "%s interrupted without a checkpoint: %s, '%s'", spec, kedr_status_name(st),
             kedr_last_error());
    if (st == KEDR_ERR_INTERRUPTED || st == KEDR_OK)
        kedr_cayley_result_free(&r);
    kedr_interrupt_clear();
    kedr_cayley_result_free(&full);
    kedr_cayley_group_free(g);
}

/* Files that are not regular are refused without being waited on. */
static void check_not_regular(kedr_ctx *ctx)
{
    kedr_cayley_group *g = NULL;
    TU_OK(kedr_cayley_parse("pancake:5", 0, &g));
    remove(bad);
    TU_CHECK(mkfifo(bad, 0600) == 0, "cannot make the FIFO %s", bad);
    kedr_cayley_result r;
    const char *paths[] = {bad, "/tmp"};
    for (int i = 0; i < 2; i++) {
        kedr_status st = run(ctx, g, KEDR_CAYLEY_AUTO, NULL, paths[i], 0, &r);
        TU_CHECK(st == KEDR_ERR_IO && strstr(kedr_last_error(), "not a regular file"),
                 "resume from %s: %s, '%s'", paths[i], kedr_status_name(st), kedr_last_error());
        st = run(ctx, g, KEDR_CAYLEY_SPARSE, NULL, paths[i], 0, &r);
        TU_CHECK(st == KEDR_ERR_IO && strstr(kedr_last_error(), "not a regular file"),
                 "sparse resume from %s: %s, '%s'", paths[i], kedr_status_name(st),
                 kedr_last_error());
    }
    kedr_status st = run(ctx, g, KEDR_CAYLEY_AUTO, "/dev/null", NULL, 0, &r);
    struct stat sb;
    TU_CHECK(st == KEDR_ERR_IO && stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode),
             "a checkpoint to /dev/null: %s, '%s'", kedr_status_name(st), kedr_last_error());
    remove(bad);
    kedr_cayley_group_free(g);
}

/* Format versions: a dense (version 1) or sparse-mode (versions 1, 2) checkpoint of a
 * permutation family was written when permutations were numbered from their first position, and
 * is refused as such; the same old versions of an abelian or burnside group, whose ranks did not
 * change, resume to the uninterrupted result. */
static void check_versions(kedr_ctx *ctx)
{
    static const struct {
        const char *spec;
        kedr_cayley_mode mode;
        uint32_t version;
        int refused;
    } cases[] = {{"pancake:7", KEDR_CAYLEY_DENSE, 1, 1},
                 {"burnt-pancake:4", KEDR_CAYLEY_DENSE, 1, 1},
                 {"star:6", KEDR_CAYLEY_SPARSE, 2, 1},
                 {"burnside:6", KEDR_CAYLEY_DENSE, 1, 0},
                 {"abelian:5,7", KEDR_CAYLEY_SPARSE, 2, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kedr_cayley_group *g = NULL;
        TU_OK(kedr_cayley_parse(cases[i].spec, 0, &g));
        if (!g)
            continue;
        kedr_cayley_result full, r;
        TU_OK(run(ctx, g, cases[i].mode, NULL, NULL, 0, &full));
        size_t size = 0;
        unsigned char *b = checkpoint_of(ctx, g, cases[i].mode, 3, &size);
        uint32_t now = 0;
        if (b && size > 16)
            memcpy(&now, b + 8, 4);
        TU_CHECK(b && now == (cases[i].mode == KEDR_CAYLEY_DENSE ? 2u : 3u),
                 "%s: checkpoint version %u", cases[i].spec, now);
        if (!b || size < 16) {
            kedr_cayley_result_free(&full);
            kedr_cayley_group_free(g);
            continue;
        }
        memcpy(b + 8, &cases[i].version, 4);
        void (*fix)(unsigned char *, size_t) =
            cases[i].mode == KEDR_CAYLEY_DENSE ? fix_dense : fix_sparse;
        if (cases[i].refused) {
            expect_refused(ctx, g, cases[i].mode, b, size, fix, "from their first position",
                           "an old checkpoint of a permutation family");
        } else {
            fix(b, size);
            write_all(bad, b, size);
            kedr_status st = run(ctx, g, cases[i].mode, NULL, bad, 0, &r);
            int same = st == KEDR_OK && r.diameter == full.diameter && r.resumed_from == 3;
            for (int s = 0; same && s <= full.diameter; s++)
                same = r.growth[s] == full.growth[s];
            TU_CHECK(same, "%s: version %u checkpoint resumed: %s, '%s'", cases[i].spec,
                     cases[i].version, kedr_status_name(st), kedr_last_error());
            if (st == KEDR_OK)
                kedr_cayley_result_free(&r);
        }
        free(b);
        kedr_cayley_result_free(&full);
        kedr_cayley_group_free(g);
    }
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/kedr_test_cayley_files_%d.ckpt", dir, (int)getpid());
    snprintf(bad, sizeof bad, "%s/kedr_test_cayley_files_%d_bad.ckpt", dir, (int)getpid());
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        check_dense(ctx);
        check_sparse_counts(ctx);
        check_sparse_layers(ctx);
        check_not_regular(ctx);
        check_versions(ctx);
        check_interrupt(ctx, "pancake:8", KEDR_CAYLEY_DENSE, 3);
        check_interrupt(ctx, "pancake:8", KEDR_CAYLEY_DENSE, -1);
        check_interrupt(ctx, "cube2", KEDR_CAYLEY_AUTO, 4);
        check_interrupt(ctx, "perm:6:(1 2 3 4 5 6),(1 2)", KEDR_CAYLEY_AUTO, 5);
        check_interrupt(ctx, "perm:6:(1 2 3 4 5 6),(1 2)", KEDR_CAYLEY_AUTO, -1);
        kedr_ctx_destroy(ctx);
    }
    remove(path);
    remove(bad);
    return tu_finish("test_cayley_files");
}
