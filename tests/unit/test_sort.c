/* kedr_sort_keys, kedr_sort_pairs and kedr_counting_sort against plain references: a qsort of
 * (compared key bits, input index) for the radix sort, whose order is the one stable order, and
 * a sequential counting sort. Every element of every output is compared, outputs poisoned. */
#include "test_util.h"

static const kedr_dtype key_types[] = {KEDR_U32, KEDR_U64, KEDR_I32, KEDR_F32, KEDR_F64};
#define NTYPES 5

enum { D_RANDOM, D_FEW, D_EQUAL, D_SORTED, D_REVERSED, D_SPECIAL, NDIST };
static const char *dist_name[] = {"random", "few-distinct", "all-equal",
                                  "sorted", "reversed",     "special"};

/* The order-preserving bits of a key (seed 002). */
static uint64_t ordered(kedr_dtype t, uint64_t k)
{
    switch (t) {
    case KEDR_I32: return k ^ 0x80000000u;
    case KEDR_F32: return k ^ ((k >> 31) ? 0xFFFFFFFFu : 0x80000000u);
    case KEDR_F64: return k ^ ((k >> 63) ? UINT64_MAX : (uint64_t)1 << 63);
    default: return k;
    }
}

/* The inverse: the key whose ordered bits are o. */
static uint64_t unordered(kedr_dtype t, uint64_t o)
{
    switch (t) {
    case KEDR_I32: return o ^ 0x80000000u;
    case KEDR_F32: return o ^ ((o >> 31) ? 0x80000000u : 0xFFFFFFFFu);
    case KEDR_F64: return o ^ ((o >> 63) ? (uint64_t)1 << 63 : UINT64_MAX);
    default: return o;
    }
}

static uint64_t get_key(kedr_dtype t, const void *keys, size_t i)
{
    return kedr_dtype_size(t) == 4 ? ((const uint32_t *)keys)[i] : ((const uint64_t *)keys)[i];
}

static void set_key(kedr_dtype t, void *keys, size_t i, uint64_t k)
{
    if (kedr_dtype_size(t) == 4)
        ((uint32_t *)keys)[i] = (uint32_t)k;
    else
        ((uint64_t *)keys)[i] = k;
}

/* Keys as raw bits of type t. "special" mixes negative and positive floats, -0.0, +0.0, +-inf
 * (small signed values for the integer types). */
static void make_keys(kedr_dtype t, int dist, void *keys, size_t n, uint64_t seed)
{
    int width = (int)kedr_dtype_size(t) * 8;
    uint64_t full = width == 32 ? 0xFFFFFFFFu : UINT64_MAX;
    uint64_t rng = seed, few[5];
    for (int j = 0; j < 5; j++)
        few[j] = tu_next(&rng) & full;
    uint64_t step = n ? full / (n + 1) : 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = 0;
        switch (dist) {
        case D_RANDOM: k = tu_next(&rng) & full; break;
        case D_FEW: k = few[tu_next(&rng) % 5]; break;
        case D_EQUAL: k = few[0]; break;
        case D_SORTED: k = unordered(t, (i + 1) * step); break;
        case D_REVERSED: k = unordered(t, (n - i) * step); break;
        case D_SPECIAL: {
            uint64_t r = tu_next(&rng);
            if (t == KEDR_F32) {
                static const float f[] = {-0.0f, 0.0f, INFINITY, -INFINITY, -1.5f, 2.25f, -1e-30f};
                float x = r % 3 ? f[r % 7] : (float)(tu_uniform(&rng) * 200 - 100);
                uint32_t b;
                memcpy(&b, &x, 4);
                k = b;
            } else if (t == KEDR_F64) {
                static const double f[] = {-0.0, 0.0, INFINITY, -INFINITY, -1.5, 2.25, -1e-300};
                double x = r % 3 ? f[r % 7] : tu_uniform(&rng) * 200 - 100;
                memcpy(&k, &x, 8);
            } else {
                k = (uint64_t)(int64_t)((int)(r % 7) - 3) & full;
            }
            break;
        }
        }
        set_key(t, keys, i, k);
    }
}

typedef struct {
    uint64_t key; /* the compared bits */
    size_t index;
} ref_item;

static int ref_cmp(const void *a, const void *b)
{
    const ref_item *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The stable order of keys by bits [begin, end) of their ordered form. */
static ref_item *reference_order(kedr_dtype t, const void *keys, size_t n, int begin, int end)
{
    int width = (int)kedr_dtype_size(t) * 8;
    if (end == 0)
        end = width;
    uint64_t mask = end - begin >= 64 ? UINT64_MAX : ((uint64_t)1 << (end - begin)) - 1;
    ref_item *r = tu_host_alloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++) {
        r[i].key = begin >= 64 ? 0 : (ordered(t, get_key(t, keys, i)) >> begin) & mask;
        r[i].index = i;
    }
    qsort(r, n, sizeof *r, ref_cmp);
    return r;
}

/* Elements by which check_sort shifts its outputs from the start of their allocations, to move
 * them off cache-line boundaries. */
static size_t out_shift;

/* One sort call on ctx, checked in full. vsize 0: keys only. */
static void check_sort(kedr_ctx *ctx, kedr_dtype t, int dist, size_t n, size_t vsize, int begin,
                       int end, uint64_t seed)
{
    size_t ks = kedr_dtype_size(t);
    void *keys = tu_host_alloc(n * ks);
    uint64_t *vals = tu_host_alloc(n * 8);
    make_keys(t, dist, keys, n, seed);
    uint64_t rng = seed ^ 0x5555;
    for (size_t i = 0; i < n; i++)
        vals[i] = tu_next(&rng);
    if (vsize == 4) /* pack as u32 */
        for (size_t i = 0; i < n; i++)
            ((uint32_t *)vals)[i] = (uint32_t)vals[i];

    void *d_keys = tu_upload(ctx, keys, n * ks);
    void *d_out_base = tu_poisoned(ctx, (n + out_shift) * ks);
    void *d_out = (char *)d_out_base + out_shift * ks;
    void *d_vals = vsize ? tu_upload(ctx, vals, n * vsize) : NULL;
    void *d_vout_base = vsize ? tu_poisoned(ctx, (n + out_shift) * vsize) : NULL;
    void *d_vout = vsize ? (char *)d_vout_base + out_shift * vsize : NULL;
    if (vsize)
        TU_OK(kedr_sort_pairs(ctx, t, d_keys, d_out, d_vals, d_vout, vsize, n, begin, end));
    else
        TU_OK(kedr_sort_keys(ctx, t, d_keys, d_out, n, begin, end));

    ref_item *ref = reference_order(t, keys, n, begin, end);
    void *got = tu_download(ctx, d_out, n * ks);
    void *kin = tu_download(ctx, d_keys, n * ks);
    size_t bad = 0, first = 0;
    for (size_t j = 0; j < n; j++)
        if (get_key(t, got, j) != get_key(t, keys, ref[j].index) && bad++ == 0)
            first = j;
    TU_CHECK(bad == 0,
             "%s sort %s %s n=%zu vsize=%zu bits [%d,%d): %zu keys wrong, first at %zu "
             "(got %016llx, want %016llx)",
             kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t), dist_name[dist], n,
             vsize, begin, end, bad, first, (unsigned long long)get_key(t, got, first),
             (unsigned long long)(n ? get_key(t, keys, ref[first].index) : 0));
    TU_CHECK(memcmp(kin, keys, n * ks) == 0, "%s sort %s n=%zu: keys_in was modified",
             kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t), n);
    if (vsize) {
        void *vgot = tu_download(ctx, d_vout, n * vsize);
        bad = 0;
        for (size_t j = 0; j < n; j++) {
            size_t i = ref[j].index;
            int ok = vsize == 4 ? ((uint32_t *)vgot)[j] == ((uint32_t *)vals)[i]
                                : ((uint64_t *)vgot)[j] == vals[i];
            if (!ok && bad++ == 0)
                first = j;
        }
        TU_CHECK(bad == 0, "%s sort %s %s n=%zu vsize=%zu bits [%d,%d): %zu values out of place, first at %zu",
                 kedr_backend_name(kedr_ctx_backend(ctx)), kedr_dtype_name(t), dist_name[dist], n,
                 vsize, begin, end, bad, first);
        free(vgot);
    }
    free(ref);
    free(got);
    free(kin);
    free(keys);
    free(vals);
    kedr_free(ctx, d_keys);
    kedr_free(ctx, d_out_base);
    kedr_free(ctx, d_vals);
    kedr_free(ctx, d_vout_base);
}

static void test_sorts(kedr_ctx *ctx)
{
    uint64_t seed = 1;
    for (size_t s = 0; s < TU_NSIZES; s++) {
        size_t n = tu_sizes[s];
        int big = n > 100000;
        for (int ti = 0; ti < NTYPES; ti++)
            for (int dist = 0; dist < NDIST; dist++) {
                /* Large sizes: one distribution per type and size, to keep the test quick. */
                if (big && dist != (ti + (int)s) % NDIST)
                    continue;
                size_t vsize = (size_t)((dist + ti + s) % 3) * 4; /* 0, 4 or 8 */
                check_sort(ctx, key_types[ti], dist, n, vsize, 0, 0, seed++);
            }
    }
    /* Bit ranges, on the transformed key; the other bits ride along in input order. */
    static const int ranges[][2] = {{0, 8}, {4, 12}, {8, 32}, {3, 3}, {0, 1}, {7, 23}, {31, 32}};
    for (int ti = 0; ti < NTYPES; ti++)
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
            for (int dist = 0; dist < NDIST; dist += 1 + (int)r % 2)
                check_sort(ctx, key_types[ti], dist, 65537, (r % 3) * 4, ranges[r][0],
                           ranges[r][1], seed++);
    static const int ranges64[][2] = {{40, 0}, {16, 48}, {60, 64}, {0, 64}};
    for (int ti = 0; ti < NTYPES; ti++)
        if (kedr_dtype_size(key_types[ti]) == 8)
            for (size_t r = 0; r < 4; r++)
                check_sort(ctx, key_types[ti], D_RANDOM, 33000, 8, ranges64[r][0],
                           ranges64[r][1], seed++);
    /* Several seeds at an awkward size, then the large size once with values. */
    for (int k = 0; k < 4; k++)
        check_sort(ctx, key_types[k % NTYPES], D_RANDOM, 4095, 4, 0, 0, 1000 + k);
    check_sort(ctx, KEDR_U32, D_RANDOM, TU_LARGE, 4, 0, 0, seed++);
    check_sort(ctx, KEDR_F32, D_SPECIAL, tu_scale((1u << 20) + 1, 65537), 0, 0, 0, seed++);
    /* Outputs off their alignment, the first large enough for the cpu's streaming stores. */
    for (out_shift = 1; out_shift < 4; out_shift += 2) {
        check_sort(ctx, KEDR_U32, D_RANDOM, tu_scale((1u << 20) + 1, (1u << 19) + 1), 8, 0, 0,
                   seed++);
        check_sort(ctx, KEDR_U64, D_FEW, tu_scale((1u << 19) + 3, 32771), 4, 0, 0, seed++);
        check_sort(ctx, KEDR_F32, D_RANDOM, 1025, 4, 0, 0, seed++);
    }
    out_shift = 0;
}

/* A cuda context on a GPU with 40 GiB or more: room for the 2^30-item tests (not in the quick
 * run: minutes under compute-sanitizer). */
static int big_gpu(kedr_ctx *ctx)
{
    kedr_device_info info;
    return !tu_quick() && kedr_ctx_backend(ctx) == KEDR_BACKEND_CUDA &&
           kedr_device_get_info(kedr_ctx_device(ctx), &info) == KEDR_OK &&
           info.memory_bytes >= ((size_t)40 << 30);
}

/* n >= 2^30 (cuda, with 40 GiB of device memory): the look-back words are 64 bits there. Keys
 * i * M mod 2^32 (M odd, so all distinct) with the indices as values: each output pair must be
 * an input pair, key from index, and the keys must rise strictly, so the output is the sorted
 * permutation. Keys alone are checked the same way through M's inverse. */
static void test_sort_huge(kedr_ctx *ctx)
{
    if (!big_gpu(ctx))
        return;
    const size_t n = ((size_t)1 << 30) + 5;
    const uint32_t mul = 2654435761u;
    uint32_t inv = mul; /* Newton: each step doubles the correct low bits */
    for (int i = 0; i < 5; i++)
        inv *= 2 - mul * inv;
    uint32_t *h = tu_host_alloc(n * 4);
    for (size_t i = 0; i < n; i++)
        h[i] = (uint32_t)i * mul;
    uint32_t *d_keys = tu_upload(ctx, h, n * 4);
    for (size_t i = 0; i < n; i++)
        h[i] = (uint32_t)i;
    uint32_t *d_vals = tu_upload(ctx, h, n * 4);
    free(h);
    uint32_t *d_out = tu_poisoned(ctx, n * 4), *d_vout = tu_poisoned(ctx, n * 4);
    for (int pairs = 1; pairs >= 0; pairs--) {
        if (pairs)
            TU_OK(kedr_sort_pairs(ctx, KEDR_U32, d_keys, d_out, d_vals, d_vout, 4, n, 0, 0));
        else
            TU_OK(kedr_sort_keys(ctx, KEDR_U32, d_keys, d_out, n, 0, 0));
        uint32_t *k = tu_download(ctx, d_out, n * 4);
        uint32_t *v = pairs ? tu_download(ctx, d_vout, n * 4) : NULL;
        size_t bad = n;
        for (size_t j = 0; j < n && bad == n; j++) {
            size_t index = pairs ? v[j] : (uint32_t)(k[j] * inv);
            if (index >= n || (uint32_t)index * mul != k[j] || (j && k[j - 1] >= k[j]))
                bad = j;
        }
        TU_CHECK(bad == n, "cuda sort %s n=%zu: output %zu is wrong (key %08x)",
                 pairs ? "pairs" : "keys", n, bad, bad < n ? k[bad] : 0);
        free(k);
        free(v);
    }
    kedr_free(ctx, d_keys);
    kedr_free(ctx, d_vals);
    kedr_free(ctx, d_out);
    kedr_free(ctx, d_vout);
}

static void test_sort_errors(kedr_ctx *ctx)
{
    uint32_t *k = NULL, *o = NULL, *v = NULL, *vo = NULL;
    TU_OK(kedr_alloc(ctx, (void **)&k, 64));
    TU_OK(kedr_alloc(ctx, (void **)&o, 64));
    TU_OK(kedr_alloc(ctx, (void **)&v, 64));
    TU_OK(kedr_alloc(ctx, (void **)&vo, 64));
    struct {
        kedr_status got, want;
        const char *what;
    } cases[] = {
        {kedr_sort_keys(ctx, KEDR_U32, NULL, o, 5, 0, 0), KEDR_ERR_INVALID, "NULL keys_in"},
        {kedr_sort_keys(ctx, KEDR_U32, k, NULL, 5, 0, 0), KEDR_ERR_INVALID, "NULL keys_out"},
        {kedr_sort_keys(ctx, (kedr_dtype)9, k, o, 5, 0, 0), KEDR_ERR_UNSUPPORTED, "bad type"},
        {kedr_sort_keys(ctx, KEDR_U32, k, o, 5, 0, 40), KEDR_ERR_INVALID, "end_bit 40 > 32"},
        {kedr_sort_keys(ctx, KEDR_U64, k, o, 5, 0, 65), KEDR_ERR_INVALID, "end_bit 65 > 64"},
        {kedr_sort_keys(ctx, KEDR_U32, k, o, 5, 12, 8), KEDR_ERR_INVALID, "begin > end"},
        {kedr_sort_keys(ctx, KEDR_U32, k, o, 5, -1, 8), KEDR_ERR_INVALID, "negative begin"},
        {kedr_sort_keys(ctx, KEDR_U32, k, k + 2, 5, 0, 0), KEDR_ERR_INVALID, "overlap"},
        {kedr_sort_pairs(ctx, KEDR_U32, k, o, v, vo, 3, 5, 0, 0), KEDR_ERR_INVALID, "val_size 3"},
        {kedr_sort_pairs(ctx, KEDR_U32, k, o, NULL, vo, 4, 5, 0, 0), KEDR_ERR_INVALID,
         "NULL vals_in"},
        {kedr_sort_pairs(ctx, KEDR_U32, k, o, v, NULL, 4, 5, 0, 0), KEDR_ERR_INVALID,
         "NULL vals_out"},
        {kedr_counting_sort(ctx, NULL, 5, 4, v, o, vo, NULL), KEDR_ERR_INVALID, "NULL keys"},
        {kedr_counting_sort(ctx, k, 5, 4, NULL, o, vo, NULL), KEDR_ERR_INVALID, "NULL perm"},
        {kedr_counting_sort(ctx, k, 5, 4, v, NULL, vo, NULL), KEDR_ERR_INVALID, "NULL starts"},
        {kedr_counting_sort(ctx, k, 5, 4, v, o, NULL, NULL), KEDR_ERR_INVALID, "NULL counts"},
        {kedr_counting_sort(ctx, k, (size_t)1 << 32, 4, v, o, vo, NULL), KEDR_ERR_INVALID,
         "n >= 2^32"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        TU_CHECK(cases[i].got == cases[i].want && kedr_last_error()[0],
                 "%s: got %s, want %s (message '%s')", cases[i].what,
                 kedr_status_name(cases[i].got), kedr_status_name(cases[i].want),
                 kedr_last_error());
    /* n = 0 needs no buffers; nkeys = 0 drops everything. */
    TU_OK(kedr_sort_keys(ctx, KEDR_F64, NULL, NULL, 0, 0, 0));
    TU_OK(kedr_sort_pairs(ctx, KEDR_I32, NULL, NULL, NULL, NULL, 8, 0, 0, 0));
    size_t kept = 99;
    TU_OK(kedr_counting_sort(ctx, NULL, 0, 0, NULL, NULL, NULL, &kept));
    TU_CHECK(kept == 0, "n = 0: n_kept %zu", kept);
    kedr_free(ctx, k);
    kedr_free(ctx, o);
    kedr_free(ctx, v);
    kedr_free(ctx, vo);
}

/* ---- counting sort ------------------------------------------------------------------------ */

/* C_DROPPED (every key dropped) is checked on its own, outside the loop over NCDIST. */
enum { C_UNIFORM, C_ONE_KEY, C_SORTED, C_REVERSED, C_FEW, NCDIST, C_DROPPED = NCDIST };

/* in: through kedr_counting_sort_in, with poisoned work and scratch of exactly the sizes it
 * asks for; the keys must stay as they were. */
static void check_counting(kedr_ctx *ctx, size_t n, uint32_t nkeys, int dist, int drops,
                           uint64_t seed, int in)
{
    uint32_t *keys = tu_host_alloc(n * 4);
    uint64_t rng = seed;
    uint32_t one = (uint32_t)(tu_next(&rng) % nkeys);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = 0;
        switch (dist) {
        case C_UNIFORM: k = (uint32_t)(tu_next(&rng) % nkeys); break;
        case C_ONE_KEY: k = one; break;
        case C_SORTED: k = (uint32_t)((uint64_t)i * nkeys / (n ? n : 1)); break;
        case C_REVERSED: k = nkeys - 1 - (uint32_t)((uint64_t)i * nkeys / (n ? n : 1)); break;
        case C_FEW: k = (uint32_t)(tu_next(&rng) % 3 * (nkeys / 3)); break; /* random order */
        case C_DROPPED: /* nkeys and just above, or KEDR_KEY_DROP where that wraps */
            k = nkeys + (uint32_t)(i % 3);
            k = k < nkeys ? KEDR_KEY_DROP : k;
            break;
        }
        /* Dropped: KEDR_KEY_DROP, nkeys itself, or just above it. */
        if (drops && tu_next(&rng) % 8 == 0) {
            static const uint32_t extra[] = {0, 1, 12345};
            uint64_t r = tu_next(&rng) % 4;
            k = r == 3 ? KEDR_KEY_DROP : nkeys + extra[r] < nkeys ? KEDR_KEY_DROP : nkeys + extra[r];
        }
        keys[i] = k;
    }
    /* The sequential reference of seed 003: count, scan, place. */
    uint32_t *rc = calloc(nkeys, 4), *rs = tu_host_alloc((size_t)nkeys * 4),
             *fill = calloc(nkeys, 4), *rp = tu_host_alloc(n * 4);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (keys[i] < nkeys)
            rc[keys[i]]++;
    for (uint32_t k = 0; k < nkeys; k++) {
        rs[k] = (uint32_t)kept;
        kept += rc[k];
    }
    for (size_t i = 0; i < n; i++)
        if (keys[i] < nkeys)
            rp[rs[keys[i]] + fill[keys[i]]++] = (uint32_t)i;

    uint32_t *d_keys = tu_upload(ctx, keys, n * 4);
    uint32_t *d_perm = tu_poisoned(ctx, n * 4);
    uint32_t *d_starts = tu_poisoned(ctx, (size_t)nkeys * 4);
    uint32_t *d_counts = tu_poisoned(ctx, (size_t)nkeys * 4);
    size_t got_kept = (size_t)-1, scratch_bytes = kedr_counting_sort_scratch(ctx, n, nkeys);
    void *d_scratch = in && scratch_bytes ? tu_poisoned(ctx, scratch_bytes) : NULL;
    void *d_work = in && scratch_bytes ? tu_poisoned(ctx, n * 4 + 4) : NULL;
    if (in)
        TU_OK(kedr_counting_sort_in(ctx, d_keys, n, nkeys, d_perm, d_starts, d_counts, &got_kept,
                                    d_work, d_scratch, scratch_bytes));
    else
        TU_OK(kedr_counting_sort(ctx, d_keys, n, nkeys, d_perm, d_starts, d_counts, &got_kept));
    uint32_t *perm = tu_download(ctx, d_perm, n * 4);
    uint32_t *starts = tu_download(ctx, d_starts, (size_t)nkeys * 4);
    uint32_t *counts = tu_download(ctx, d_counts, (size_t)nkeys * 4);
    uint32_t *keys_after = tu_download(ctx, d_keys, n * 4);
    const char *be = kedr_backend_name(kedr_ctx_backend(ctx));
    TU_CHECK(n == 0 || memcmp(keys_after, keys, n * 4) == 0,
             "%s counting%s n=%zu nkeys=%u dist %d: the keys changed", be, in ? "_in" : "", n,
             nkeys, dist);
    TU_CHECK(got_kept == kept, "%s counting%s n=%zu nkeys=%u dist %d: n_kept %zu, want %zu", be,
             in ? "_in" : "", n, nkeys, dist, got_kept, kept);
    size_t bad_c = 0, bad_p = 0, first = 0;
    for (uint32_t k = 0; k < nkeys; k++)
        bad_c += counts[k] != rc[k] || starts[k] != rs[k];
    for (size_t j = 0; j < kept; j++)
        if (perm[j] != rp[j] && bad_p++ == 0)
            first = j;
    TU_CHECK(bad_c == 0, "%s counting%s n=%zu nkeys=%u dist %d drops %d: %zu keys with wrong count/start",
             be, in ? "_in" : "", n, nkeys, dist, drops, bad_c);
    TU_CHECK(bad_p == 0,
             "%s counting%s n=%zu nkeys=%u dist %d drops %d: %zu perm entries wrong, first at %zu (got %u, want %u)",
             be, in ? "_in" : "", n, nkeys, dist, drops, bad_p, first, bad_p ? perm[first] : 0,
             bad_p ? rp[first] : 0);
    free(keys);
    free(keys_after);
    free(rc);
    free(rs);
    free(fill);
    free(rp);
    free(perm);
    free(starts);
    free(counts);
    kedr_free(ctx, d_keys);
    kedr_free(ctx, d_perm);
    kedr_free(ctx, d_starts);
    kedr_free(ctx, d_counts);
    kedr_free(ctx, d_scratch);
    kedr_free(ctx, d_work);
}

static void test_counting(kedr_ctx *ctx)
{
    static const uint32_t nkeys_list[] = {1, 2, 7, 1000, 65536, 1u << 20};
    uint64_t seed = 77;
    for (size_t s = 0; s < TU_NSIZES; s++)
        for (size_t k = 0; k < sizeof nkeys_list / sizeof nkeys_list[0]; k++)
            for (int dist = 0; dist < NCDIST; dist++) {
                if (tu_sizes[s] > 100000 && dist != (int)(k + s) % NCDIST)
                    continue;
                check_counting(ctx, tu_sizes[s], nkeys_list[k], dist, (dist + (int)k) % 2,
                               seed, (int)(seed % 2));
                seed++;
            }
    for (int in = 0; in < 2; in++) { /* 2, 3 and 4 passes over large inputs */
        check_counting(ctx, TU_LARGE, 20000, C_UNIFORM, 1, seed++, in);
        check_counting(ctx, 100000, 10000000, C_UNIFORM, 1, seed++, in);
        check_counting(ctx, 5000, (1u << 24) + 1, C_UNIFORM, 1, seed++, in); /* 25 bits */
        /* The cuda sort's last pass finds the starts (3 passes and more): about 16 items a key
         * over many tiles, as DSMC's cells; keys in the top digit of a full last pass; few keys
         * far apart (digits without items between); every key dropped. */
        check_counting(ctx, TU_LARGE, 1u << 20, C_UNIFORM, 1, seed++, in);
        check_counting(ctx, 100000, 1u << 24, C_SORTED, 1, seed++, in);
        check_counting(ctx, 65537, 1u << 24, C_FEW, 1, seed++, in);
        check_counting(ctx, 70000, 70000, C_DROPPED, 0, seed++, in);
        check_counting(ctx, 300, 1u << 20, C_DROPPED, 0, seed++, in);
    }
    /* kedr_counting_sort_in refuses scratch below what it needs (cuda; the cpu needs none). */
    size_t need = kedr_counting_sort_scratch(ctx, 1000, 100);
    if (need) {
        uint32_t *k = tu_poisoned(ctx, 4000), *p = tu_poisoned(ctx, 4000);
        uint32_t *st = tu_poisoned(ctx, 400), *c = tu_poisoned(ctx, 400);
        void *sc = tu_poisoned(ctx, need), *w = tu_poisoned(ctx, 4000);
        TU_CHECK(kedr_counting_sort_in(ctx, k, 1000, 100, p, st, c, NULL, w, sc, need - 1) ==
                     KEDR_ERR_INVALID, "counting_sort_in took %zu bytes of scratch, needs %zu",
                 need - 1, need);
        TU_CHECK(kedr_counting_sort_in(ctx, k, 1000, 100, p, st, c, NULL, w, NULL, need) ==
                     KEDR_ERR_INVALID, "counting_sort_in took NULL scratch");
        TU_CHECK(kedr_counting_sort_in(ctx, k, 1000, 100, p, st, c, NULL, NULL, sc, need) ==
                     KEDR_ERR_INVALID, "counting_sort_in took NULL work");
        kedr_free(ctx, w);
        kedr_free(ctx, k);
        kedr_free(ctx, p);
        kedr_free(ctx, st);
        kedr_free(ctx, c);
        kedr_free(ctx, sc);
    }
}

/* cuda, n >= 2^30: the passes' 64-bit look-back words; 4 passes through kedr_counting_sort,
 * 3 through kedr_counting_sort_in (keys read through the indices). */
static void test_counting_huge(kedr_ctx *ctx)
{
    if (!big_gpu(ctx))
        return;
    const size_t n = ((size_t)1 << 30) + 5;
    check_counting(ctx, n, 3u << 23, C_UNIFORM, 1, 901, 0);
    check_counting(ctx, n, 1u << 24, C_SORTED, 1, 902, 1);
}

int main(void)
{
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int b = 0; b < nb; b++) {
        kedr_ctx *ctx = tu_ctx(list[b]);
        test_sort_errors(ctx);
        test_sorts(ctx);
        test_sort_huge(ctx);
        test_counting(ctx);
        test_counting_huge(ctx);
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_sort");
}
