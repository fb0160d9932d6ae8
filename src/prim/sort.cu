/* Radix sort and counting sort on the GPU.
 *
 * The radix sort is a stable LSD sort with 8-bit digits after Onesweep (Adinets & Merrill 2022).
 * One kernel counts the digits of every pass in a single read of the keys; then each pass is one
 * kernel. A block takes the next tile (ids from an atomic counter, so every tile it waits on is
 * already running), counts the tile's digits and publishes the counts at once, ranks its keys per
 * digit within each warp (a warp-level multisplit), learns the tile's global offset for each digit
 * by decoupled look-back over the tiles before it (Merrill & Garland 2016), reorders the tile by
 * digit in shared memory and writes each digit's keys as one contiguous run, so the scatter is
 * mostly coalesced.
 *
 * The counting sort sorts the pairs (key, index) by the bits that the keys below nkeys need, the
 * indices made on the fly by the first pass; its last pass leaves the other keys out. For few
 * keys (up to 16 bits) the starts and counts come from atomic counts; for more, the last pass
 * writes no keys but finds each key's start itself (STARTS in prim_onesweep). */
#include "core/internal.h"
#include "prim/sort_cuda.h"
#include "prim/tile_cuda.h"

#include <cuda_runtime.h>
#include <type_traits>

#define RADIX 256
#define MAX_PASSES 8
#define SORT_BLOCK 384
#define SORT_WARPS (SORT_BLOCK / 32)
#define HIST_BLOCK 512
#define SCAN_BLOCK 256
#define SCAN_ITEMS 16
#define FULL_MASK 0xFFFFFFFFu

/* Look-back status words: 2 flag bits over a count; 0 means not yet published. The words are
 * 32 bits while every count fits in their 30 bits (n < 2^30), half the memory to clear and
 * write each pass; 64 bits above. */
#define ST_AGGREGATE 1u /* the tile's own count of the digit */
#define ST_PREFIX 2u    /* the count over this tile and every tile before it */
#define STATUS32_MAX_N ((size_t)1 << 30)

template <typename S>
__device__ __forceinline__ S status_word(unsigned flag, unsigned long long value)
{
    return ((S)flag << (sizeof(S) * 8 - 2)) | (S)value;
}

static size_t status_word_bytes(size_t n)
{
    return n < STATUS32_MAX_N ? 4 : 8;
}

/* How a key becomes its order-preserving bits (seed 002, "flipFloat"). */
enum { KM_NONE, KM_SIGN, KM_FLOAT, KM_CLAMP };
/* Where values come from: none, loaded, or the item's index (counting sort, first pass). */
enum { VM_NONE, VM_LOAD, VM_INDEX };

template <typename K, int KM>
__device__ __forceinline__ K ordered_bits(K k, K clamp)
{
    const K top = (K)1 << (sizeof(K) * 8 - 1);
    if (KM == KM_SIGN)
        return k ^ top;
    if (KM == KM_FLOAT)
        return k ^ ((k & top) ? ~(K)0 : top);
    if (KM == KM_CLAMP)
        return k < clamp ? k : clamp;
    return k;
}

template <typename K, int KM>
__device__ __forceinline__ unsigned digit_of(K k, K clamp, int shift, unsigned mask)
{
    return (unsigned)(ordered_bits<K, KM>(k, clamp) >> shift) & mask;
}

/* Items per thread of a sort tile, and blocks per SM. 4-byte keys alone: 16 items, 3 blocks;
 * 4-byte keys and values: 20 items, 2 blocks; 8-byte keys alone: 15 items, 2 blocks (a 45 KB
 * exchange buffer, near the 48 KB of static shared memory); else 8 items, 2 blocks. For 2^28
 * items on an H100: u32 keys 6.58 ms with 16 items and 3 blocks against 6.82 with 20 and 2;
 * u32 pairs 10.06 against 10.22 with 16; u64 keys 17.80 against 18.78 with 10 and 3 blocks. */
template <typename K, typename V, int VM>
__host__ __device__ constexpr int sort_items()
{
    return sizeof(K) == 4 && VM == VM_NONE                    ? 16
           : sizeof(K) == 4 && sizeof(V) == 4                 ? 20
           : sizeof(K) == 8 && VM == VM_NONE                  ? 15
                                                               : 8;
}

template <typename K, typename V, int VM>
__host__ __device__ constexpr int sort_min_blocks()
{
    return sizeof(K) == 4 && VM == VM_NONE ? 3 : 2;
}

/* One key into a block's digit counters, h[pass][digit]: its ordered bits from begin_bit up to
 * end_bit (low), a byte per pass; the last pass leaves out a dropped key (counting sort). */
template <typename K, int KM>
__device__ __forceinline__ void count_digits(unsigned *h, K k, K clamp, int begin_bit, K low,
                                             int npass, int drop)
{
    const K f = ordered_bits<K, KM>(k, clamp) >> begin_bit & low;
    const int counted = KM == KM_CLAMP && drop && k >= clamp ? npass - 1 : npass;
#pragma unroll
    for (int p = 0; p < (int)sizeof(K); p++)
        if (p < counted)
            atomicAdd(&h[p * RADIX + (unsigned)(f >> 8 * p & 0xFF)], 1u);
}

/* Every pass's digit counts in one read of the keys: shared-memory counters per block, added to
 * hist[pass][digit] at the end. Four loads in flight per thread: with one, the kernel waited on
 * memory (221 against 125 us for 2^26 u32 keys on an H100). drop: the last pass does not count
 * keys >= clamp, which it leaves out (counting sort). */
template <typename K, int KM>
__global__ void __launch_bounds__(HIST_BLOCK)
    prim_sort_histogram(const K *keys, size_t n, K clamp, int begin_bit, int end_bit, int npass,
                        int drop, unsigned long long *hist)
{
    __shared__ unsigned h[MAX_PASSES * RADIX];
    for (int i = threadIdx.x; i < npass * RADIX; i += HIST_BLOCK)
        h[i] = 0;
    __syncthreads();
    const int width = end_bit - begin_bit;
    const K low = width >= (int)sizeof(K) * 8 ? ~(K)0 : ((K)1 << width) - 1;
    const size_t stride = (size_t)gridDim.x * HIST_BLOCK;
    size_t i = (size_t)blockIdx.x * HIST_BLOCK + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        K k[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            k[u] = keys[i + u * stride];
#pragma unroll
        for (int u = 0; u < 4; u++)
            count_digits<K, KM>(h, k[u], clamp, begin_bit, low, npass, drop);
    }
    for (; i < n; i += stride)
        count_digits<K, KM>(h, keys[i], clamp, begin_bit, low, npass, drop);
    __syncthreads();
    for (int j = threadIdx.x; j < npass * RADIX; j += HIST_BLOCK)
        if (h[j])
            atomicAdd(&hist[j], (unsigned long long)h[j]);
}

/* One block of RADIX threads per pass: digit counts -> exclusive offsets, in place. The last
 * pass's total goes to *last_total unless NULL. */
__global__ void __launch_bounds__(RADIX)
    prim_sort_digit_offsets(unsigned long long *hist, unsigned long long *last_total)
{
    __shared__ unsigned long long s[RADIX];
    unsigned long long *h = hist + (size_t)blockIdx.x * RADIX;
    int t = threadIdx.x;
    s[t] = h[t];
    __syncthreads();
    for (int o = 1; o < RADIX; o <<= 1) {
        unsigned long long x = t >= o ? s[t - o] : 0;
        __syncthreads();
        s[t] += x;
        __syncthreads();
    }
    h[t] = t ? s[t - 1] : 0;
    if (last_total && blockIdx.x == gridDim.x - 1 && t == RADIX - 1)
        *last_total = s[t];
}

template <typename K, typename V>
struct pass_args {
    const K *keys_in;
    K *keys_out;
    const V *vals_in;
    V *vals_out;
    size_t n;
    K clamp;   /* KM_CLAMP: keys >= clamp count as clamp */
    int drop;  /* items with keys >= clamp take no place (last pass of the counting sort) */
    int shift; /* the digit is bits [shift, shift + popc(mask)) */
    unsigned mask;
    const unsigned long long *digit_off; /* where each digit starts in the output */
    void *status;                        /* look-back words, RADIX per tile, zeroed */
    unsigned *tile_counter;              /* zeroed */
    /* The counting sort's last pass when it finds the key starts itself (STARTS below). */
    unsigned *starts;                     /* starts[k], k < clamp */
    const unsigned long long *total;      /* the number of items kept */
};

/* Shared memory of a pass: the ranking's match words and per-warp digit offsets, then the
 * tile reordered by digit (keys, then values) in the same bytes. Column RADIX takes the items
 * that have no place (past n, or dropped), so that every item ranks without a branch. */
template <int XBYTES>
union pass_shared {
    unsigned char exchange[XBYTES];
    struct {
        unsigned match[SORT_WARPS][RADIX + 1];
        unsigned offset[SORT_WARPS][RADIX + 1];
    } rank;
};

/* The look-back words of a STARTS pass (64 bits): 2 flag bits, then the key of the digit's last
 * item so far (its bits below the digit, at most 30), then the count (32 bits, n < 2^32). The
 * key means something only where the count is not 0. */
#define SK_KEY_SHIFT 32
#define SK_KEY_MASK 0x3FFFFFFFull

__device__ __forceinline__ unsigned long long starts_word(unsigned flag, unsigned low_key,
                                                          unsigned count)
{
    return (unsigned long long)flag << 62 | (unsigned long long)low_key << SK_KEY_SHIFT | count;
}

/* STARTS: the item in tile slot j, of key k, goes to place p; the slot before it (if of the same
 * digit) or first_lo[digit] gives the first key it starts. */
__device__ __forceinline__ void start_keys(unsigned *starts, const unsigned *xk,
                                           const unsigned *first_lo, unsigned j, unsigned k,
                                           int shift, unsigned p)
{
    const unsigned d = k >> shift;
    unsigned lo = first_lo[d];
    if (j > 0) {
        const unsigned kp = xk[j - 1];
        if (kp >> shift == d)
            lo = kp + 1;
    }
    for (unsigned x = lo; x <= k; x++)
        starts[x] = p;
}

/* One tile per block. The tile's digit counts come first (a shared atomic per key) and are
 * published at once, so that later tiles find them while this one ranks; its own look-back
 * waits until its keys are ranked and in shared memory, by when the tiles before it have mostly
 * published their prefixes (as CUB's "early counts"). S: the look-back word, unsigned or
 * unsigned long long; global offsets are taken modulo its width.
 *
 * STARTS (the counting sort's last pass, u32 keys, all kept keys below clamp = nkeys): the pass
 * writes no keys but each key's start, starts[k] = the first place of key k or of a larger one.
 * Within a digit the output follows the key (the bits below the digit are sorted already), so
 * the place before an item holds the key just below it: the slot before it in the tile, or for
 * the tile's first item of a digit the last item of that digit in the tiles before, whose key
 * the look-back carries with the count (64-bit words, starts_word; the tile publishes its
 * count and last key once its keys are ranked, not before). An item of key k whose place p
 * follows key k' writes starts[k' + 1 .. k] = p; the first item of a digit writes from the
 * digit's first key on; the tile holding a digit's last item writes the keys after it up to the
 * digit's end; keys of digits without items are left to prim_key_counts_last. The global places
 * are 32 bits (n < 2^32).
 *
 * LATE_VALUES: the values are loaded once the keys are ranked and in shared memory, not with
 * the keys, so that fewer registers are live while ranking (the STARTS pass: 2.39 -> 2.31 ms at
 * 2^28 items on an H100; no gain in a pass that writes its keys, 2.29 either way).
 *
 * BY_INDEX (a counting sort in the caller's memory after its first pass): the values are the
 * items' indices into the unsorted keys, keys_in, and each item's key is read through its
 * index rather than from a key buffer of the pass before, which therefore holds no keys.
 *
 * The stages are the device functions of onesweep; prim_onesweep calls them in order. */
template <typename K, int KM, typename V, int VM, int IPT, typename S, bool STARTS,
          bool LATE_VALUES, bool BY_INDEX>
struct onesweep {
    /* global offsets: 32 bits for STARTS (n < 2^32), else the look-back word's width */
    typedef typename std::conditional<STARTS, unsigned, S>::type D;
    static constexpr int TILE = SORT_BLOCK * IPT;
    static constexpr int XBYTES = sizeof(K) > sizeof(V) ? sizeof(K) : sizeof(V);
    static constexpr int NS = STARTS ? RADIX : 1;

    /* The block's shared memory, which the kernel declares: the ranking, then the tile
     * reordered by digit (sm); where slot j of digit d goes, global_off[d] + j modulo
     * 2^(8 sizeof(D)); STARTS: the end of each digit's slots in the tile (an entry past RADIX
     * that no slot matches, for the items without a place), the key of each digit's last slot,
     * and the first key that the digit's first slot starts. Separate variables rather than one
     * struct, which the compiler would lay out whole: that cost the counting sort's passes up
     * to 20 bytes of spills. */
    struct smem {
        pass_shared<TILE * XBYTES> &sm;
        D *global_off;
        unsigned *scan_tmp;
        unsigned &tile_s, &ranked_s;
        unsigned *tile_end_s, *last_key_s, *first_lo_s;
    };

    const pass_args<K, V> &a;
    const smem sh;
    const int tid, lane, warp;
    size_t tile, tile_base, warp_base;
    unsigned in_warp; /* the items of the warp's run below n */

    __device__ __forceinline__ onesweep(const pass_args<K, V> &a_, const smem &sh_)
        : a(a_), sh(sh_), tid(threadIdx.x), lane(tid & 31), warp(tid >> 5)
    {
    }

    __device__ __forceinline__ volatile S *my_status() const
    {
        return (S *)a.status + tile * RADIX;
    }

    /* The next tile by ticket, the ranking's counters cleared. Each warp owns 32 * IPT
     * consecutive items in tile_cuda.h's warp-striped arrangement: item i of a lane is 32 i +
     * lane, so ranking round by round follows the input order, which makes the sort stable. */
    __device__ __forceinline__ void take_tile()
    {
        if (tid == 0)
            sh.tile_s = atomicAdd(a.tile_counter, 1u);
        for (int i = tid; i < 2 * SORT_WARPS * (RADIX + 1) / 4; i += SORT_BLOCK)
            ((uint4 *)&sh.sm.rank)[i] = make_uint4(0, 0, 0, 0);
        __syncthreads();
        tile = sh.tile_s;
        tile_base = tile * TILE;
        warp_base = tile_base + (size_t)warp * 32 * IPT;
        in_warp = warp_base >= a.n ? 0u : (unsigned)min(a.n - warp_base, (size_t)32 * IPT);
    }

    __device__ __forceinline__ void load_values(V *val) const
    {
        if constexpr (VM == VM_LOAD)
            tile_load_wstriped<IPT>(val, a.vals_in, warp_base, in_warp, false, (V)0);
    }

    /* The lane's keys, and its values unless LATE_VALUES; 0 past the end. */
    __device__ __forceinline__ void load(K *key, V *val) const
    {
        if constexpr (BY_INDEX) {
            load_values(val);
#pragma unroll
            for (int i = 0; i < IPT; i++)
                key[i] = 32 * i + lane < in_warp ? a.keys_in[val[i]] : (K)0;
        } else {
            tile_load_wstriped<IPT>(key, a.keys_in, warp_base, in_warp, tile_base + TILE <= a.n,
                                    (K)0);
            if constexpr (!LATE_VALUES)
                load_values(val);
        }
    }

    /* The items' digits (RADIX for the items without a place), counted in the warps' counters;
     * returns the kept bits: bit i, item i takes a place (in range, and not dropped by the
     * counting sort). */
    __device__ __forceinline__ unsigned digits(const K *key, unsigned *digit) const
    {
        unsigned kept = 0;
#pragma unroll
        for (int i = 0; i < IPT; i++)
            if (32 * i + lane < in_warp && !(KM == KM_CLAMP && a.drop && key[i] >= a.clamp))
                kept |= 1u << i;
        unsigned *offset = sh.sm.rank.offset[warp];
#pragma unroll
        for (int i = 0; i < IPT; i++) {
            digit[i] = kept >> i & 1 ? digit_of<K, KM>(key[i], a.clamp, a.shift, a.mask) : RADIX;
            atomicAdd(&offset[digit[i]], 1u);
        }
        __syncthreads();
        return kept;
    }

    /* One thread per digit: the tile's count of it, published at once (but by STARTS, which
     * publishes it with its last key once ranked), and where the digit starts in the tile (a
     * scan over digits), *start; each warp's counter then starts at its first slot. Returns the
     * count. */
    __device__ __forceinline__ unsigned tile_counts(unsigned *start_out) const
    {
        unsigned count = 0, start = 0, incl = 0;
        if (tid < RADIX) {
#pragma unroll
            for (int w = 0; w < SORT_WARPS; w++)
                count += sh.sm.rank.offset[w][tid];
            if (!STARTS)
                my_status()[tid] = status_word<S>(tile == 0 ? ST_PREFIX : ST_AGGREGATE, count);
            incl = count;
            for (int o = 1; o < 32; o <<= 1) {
                unsigned y = __shfl_up_sync(FULL_MASK, incl, o);
                if (lane >= o)
                    incl += y;
            }
            if (lane == 31)
                sh.scan_tmp[warp] = incl;
        }
        __syncthreads();
        if (tid < RADIX) {
            start = incl - count;
            for (int w = 0; w < warp; w++)
                start += sh.scan_tmp[w];
            unsigned run = start;
#pragma unroll
            for (int w = 0; w < SORT_WARPS; w++) {
                unsigned c = sh.sm.rank.offset[w][tid];
                sh.sm.rank.offset[w][tid] = run;
                run += c;
            }
            if (tid == RADIX - 1)
                sh.ranked_s = run; /* the tile's items less the dropped ones */
            if (STARTS) {
                sh.tile_end_s[tid] = start + count;
                if (tid == 0)
                    sh.tile_end_s[NS] = ~0u;
            }
        }
        __syncthreads();
        *start_out = start;
        return count;
    }

    /* Rank within the warp: each lane ORs its bit into its warp's match word of its digit, so
     * that the word read back names its peers, the lanes with the same digit (as CUB's "match
     * atomic or" ranking). The highest peer takes their number of slots from the warp's counter
     * of the digit, clears the word, and hands the first slot to the others, each adding its
     * peers in lower lanes; rounds follow the input order, which makes the ranks stable. The
     * slots are places in the tile; items without a place rank in column RADIX, unused. */
    __device__ __forceinline__ void rank(const K *key, const unsigned *digit, unsigned *pos) const
    {
        unsigned *match = sh.sm.rank.match[warp], *offset = sh.sm.rank.offset[warp];
        const unsigned lanes_below = (1u << lane) - 1;
#pragma unroll
        for (int i = 0; i < IPT; i++) {
            const unsigned d = digit[i];
            atomicOr(&match[d], 1u << lane);
            __syncwarp();
            const unsigned peers = match[d];
            const int leader = 31 - __clz(peers);
            unsigned first = 0;
            if (lane == leader)
                first = atomicAdd(&offset[d], (unsigned)__popc(peers));
            __syncwarp(); /* every peer has read the match word */
            if (lane == leader)
                match[d] = 0;
            __syncwarp(); /* cleared before the next round's ORs */
            first = __shfl_sync(FULL_MASK, first, leader);
            pos[i] = first + __popc(peers & lanes_below);
            if (STARTS && pos[i] + 1 == sh.tile_end_s[STARTS ? d : 0])
                sh.last_key_s[STARTS ? d : 0] = (unsigned)key[i];
        }
        __syncthreads();
    }

    /* The kept keys to their slots: the tile reordered by digit in shared memory. */
    __device__ __forceinline__ void exchange_keys(const K *key, unsigned kept,
                                                  const unsigned *pos) const
    {
        K *xk = (K *)sh.sm.exchange;
#pragma unroll
        for (int i = 0; i < IPT; i++)
            if (kept >> i & 1)
                xk[pos[i]] = key[i];
    }

    /* One thread per digit: the tile's global offset for it, by decoupled look-back over the
     * tiles before it; the tile's prefix published. */
    __device__ __forceinline__ void lookback(unsigned count, unsigned start) const
    {
        if (tid < RADIX) {
            const unsigned long long base = a.digit_off[tid];
            unsigned long long excl = 0;
            if (tile > 0) {
                constexpr int SHIFT = sizeof(S) * 8 - 2;
                const volatile S *st = (const S *)a.status;
                /* Tile 0 publishes its prefix first thing, so walks end there at the latest. */
                for (size_t t = tile - 1;; t--) {
                    S w;
                    do
                        w = st[t * RADIX + tid];
                    while ((w >> SHIFT) == 0);
                    excl += w & (((S)1 << SHIFT) - 1);
                    if ((w >> SHIFT) == ST_PREFIX)
                        break;
                }
                my_status()[tid] = status_word<S>(ST_PREFIX, excl + count);
            }
            sh.global_off[tid] = (D)(base + excl - start);
        }
    }

    /* STARTS: the tile's count and last key of each digit, once ranked. */
    __device__ __forceinline__ void publish_starts(unsigned count) const
    {
        const unsigned low_mask = (1u << a.shift) - 1; /* STARTS: shift <= 24 */
        if (tid < RADIX)
            my_status()[tid] = starts_word(tile == 0 ? ST_PREFIX : ST_AGGREGATE,
                                           count ? sh.last_key_s[tid] & low_mask : 0, count);
    }

    /* STARTS: the look-back, which also brings the last key of the digit before the tile; the
     * first key the digit's first slot starts; the keys after the digit's last item up to the
     * digit's end, by the tile that holds it. */
    __device__ __forceinline__ void lookback_starts(unsigned count, unsigned start) const
    {
        if (tid >= RADIX)
            return;
        const unsigned low_mask = (1u << a.shift) - 1;
        const int d = tid;
        const unsigned base = (unsigned)a.digit_off[tid];
        unsigned excl = 0, low = 0;
        /* Tile 0 publishes its prefix once ranked, so walks end there at the latest. */
        if (tile > 0) {
            const volatile S *st = (const S *)a.status;
            bool have = false;
            for (size_t t = tile - 1;; t--) {
                S w;
                do
                    w = st[t * RADIX + tid];
                while ((w >> 62) == 0);
                const unsigned c = (unsigned)w;
                if (!have && c) { /* the nearest tile with the digit: its last key */
                    low = (unsigned)(w >> SK_KEY_SHIFT & SK_KEY_MASK);
                    have = true;
                }
                excl += c;
                if ((w >> 62) == ST_PREFIX)
                    break;
            }
            my_status()[tid] = starts_word(ST_PREFIX, count ? sh.last_key_s[d] & low_mask : low,
                                           excl + count);
        }
        const unsigned first_key = (unsigned)tid << a.shift;
        sh.first_lo_s[d] = excl ? (first_key | low) + 1 : first_key;
        sh.global_off[tid] = (D)(base + excl - start);
        const unsigned end = (unsigned)(tid < RADIX - 1 ? a.digit_off[tid + 1] : *a.total);
        if (count && base + excl + count == end) {
            const unsigned hi = min((unsigned)a.clamp - 1, first_key | low_mask);
            for (unsigned k = sh.last_key_s[d] + 1; k <= hi; k++)
                a.starts[k] = end;
        }
    }

    /* STARTS: each slot's key starts (a loop of its own: fewer registers live than beside the
     * scatter's dst). */
    __device__ __forceinline__ void write_starts(unsigned ranked) const
    {
        const unsigned *xk = (const unsigned *)sh.sm.exchange;
#pragma unroll 4
        for (int r = 0; r < IPT; r++) {
            const unsigned j = r * SORT_BLOCK + tid;
            if (ranked == TILE || j < ranked) {
                const unsigned k = xk[j];
                start_keys(a.starts, xk, sh.first_lo_s, j, k, a.shift,
                           sh.global_off[k >> a.shift] + j);
            }
        }
    }

    /* The tile out: consecutive threads write consecutive slots of one digit's run; dst[r]: where
     * slot r * SORT_BLOCK + tid goes. A full tile (all but the last) takes a loop without bounds
     * checks. */
    __device__ __forceinline__ void scatter_keys(unsigned ranked, D *dst) const
    {
        const K *xk = (const K *)sh.sm.exchange;
        if (ranked == TILE) {
#pragma unroll
            for (int r = 0; r < IPT; r++) {
                const unsigned j = r * SORT_BLOCK + tid;
                const K k = xk[j];
                dst[r] = sh.global_off[digit_of<K, KM>(k, a.clamp, a.shift, a.mask)] + j;
                if (!STARTS && a.keys_out)
                    a.keys_out[dst[r]] = k;
            }
        } else {
#pragma unroll
            for (int r = 0; r < IPT; r++) {
                const unsigned j = r * SORT_BLOCK + tid;
                if (j < ranked) {
                    const K k = xk[j];
                    dst[r] = sh.global_off[digit_of<K, KM>(k, a.clamp, a.shift, a.mask)] + j;
                    if (!STARTS && a.keys_out)
                        a.keys_out[dst[r]] = k;
                }
            }
        }
    }

    /* The values through the same slots as their keys, to the same places. */
    __device__ __forceinline__ void scatter_values(unsigned ranked, unsigned kept,
                                                   const unsigned *pos, const V *val,
                                                   const D *dst) const
    {
        V *xv = (V *)sh.sm.exchange;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < IPT; i++)
            if (kept >> i & 1)
                xv[pos[i]] = VM == VM_INDEX ? (V)(warp_base + 32 * i + lane)
                                            : val[VM == VM_LOAD ? i : 0];
        __syncthreads();
        if (ranked == TILE) {
#pragma unroll
            for (int r = 0; r < IPT; r++)
                a.vals_out[dst[r]] = xv[r * SORT_BLOCK + tid];
        } else {
#pragma unroll
            for (int r = 0; r < IPT; r++)
                if (r * SORT_BLOCK + tid < ranked)
                    a.vals_out[dst[r]] = xv[r * SORT_BLOCK + tid];
        }
    }
};

template <typename K, int KM, typename V, int VM, int IPT, int MINB, typename S,
          bool STARTS = false, bool LATE_VALUES = false, bool BY_INDEX = false>
__global__ void __launch_bounds__(SORT_BLOCK, MINB) prim_onesweep(pass_args<K, V> a)
{
    static_assert(!STARTS || (sizeof(K) == 4 && KM == KM_CLAMP && sizeof(S) == 8),
                  "STARTS: u32 keys below a clamp, 64-bit look-back words");
    static_assert(!BY_INDEX || (VM == VM_LOAD && !LATE_VALUES),
                  "BY_INDEX: the values are the indices, loaded before the keys");
    typedef onesweep<K, KM, V, VM, IPT, S, STARTS, LATE_VALUES, BY_INDEX> pass;
    __shared__ __align__(16) pass_shared<pass::TILE * pass::XBYTES> sm;
    __shared__ typename pass::D global_off[RADIX];
    __shared__ unsigned scan_tmp[RADIX / 32];
    __shared__ unsigned tile_s, ranked_s;
    __shared__ unsigned tile_end_s[pass::NS + 1], last_key_s[pass::NS], first_lo_s[pass::NS];
    pass p(a, {sm, global_off, scan_tmp, tile_s, ranked_s, tile_end_s, last_key_s, first_lo_s});
    p.take_tile();
    K key[IPT];
    V val[VM == VM_LOAD ? IPT : 1];
    p.load(key, val);
    unsigned digit[IPT];
    const unsigned kept = p.digits(key, digit);
    unsigned start;
    const unsigned count = p.tile_counts(&start);
    unsigned pos[IPT];
    p.rank(key, digit, pos);

    /* Reorder the tile by digit in shared memory; meanwhile one thread per digit learns the
     * tile's global offset for it by decoupled look-back over the tiles before it. */
    if constexpr (STARTS)
        p.publish_starts(count);
    p.exchange_keys(key, kept, pos);
    if constexpr (LATE_VALUES)
        p.load_values(val);
    if constexpr (STARTS)
        p.lookback_starts(count, start);
    else
        p.lookback(count, start);
    __syncthreads();

    const unsigned ranked = ranked_s;
    if constexpr (STARTS)
        p.write_starts(ranked);
    typename pass::D dst[IPT];
    p.scatter_keys(ranked, dst);
    if constexpr (VM != VM_NONE)
        p.scatter_values(ranked, kept, pos, val, dst);
}

template <typename K, int KM, typename V, int VM, typename S, bool BY_INDEX>
static kedr_status launch_onesweep(kedr_ctx *ctx, const pass_args<K, V> &a, size_t tiles)
{
    prim_onesweep<K, KM, V, VM, sort_items<K, V, VM>(), sort_min_blocks<K, V, VM>(), S, false,
                  false, BY_INDEX><<<(unsigned)tiles, SORT_BLOCK, 0, KEDR_STREAM(ctx)>>>(a);
    KEDR_CUDA_LAUNCHED("prim_onesweep");
    return KEDR_OK;
}

template <typename K, int KM, typename V, int VM, bool BY_INDEX = false>
static kedr_status launch_pass(kedr_ctx *ctx, const pass_args<K, V> &a, size_t tiles)
{
    if (status_word_bytes(a.n) == 4)
        return launch_onesweep<K, KM, V, VM, unsigned, BY_INDEX>(ctx, a, tiles);
    return launch_onesweep<K, KM, V, VM, unsigned long long, BY_INDEX>(ctx, a, tiles);
}

/* The caller's memory for a counting sort (kedr_counting_sort_in): the look-back words and a
 * second value buffer of n items. Its passes after the first read the keys through the item
 * indices (BY_INDEX), so it needs no second key buffer and leaves the keys as they were. */
struct sort_ext {
    void *meta;
    void *vals_alt;
};

/* Digit offsets of every pass, the tile counter (padded) and the look-back words. */
static size_t sort_meta_bytes(size_t n, size_t tiles)
{
    return ((size_t)MAX_PASSES * RADIX + 2) * sizeof(unsigned long long) +
           tiles * RADIX * status_word_bytes(n);
}

/* Sorts n > 0 keys by bits [begin_bit, end_bit) of their ordered form. The last pass writes
 * keys_out/vals_out; earlier ones alternate between scratch and the output.
 * counting (the counting sort): values are the item indices, made by the first pass (vals_in is
 * not read); the last pass leaves out the items with keys >= clamp and writes the others' keys
 * to keys_out, or no keys when keys_out is NULL, which needs npass <= 2: with 3 passes or more,
 * keys_out also serves as the second key buffer. The number of items kept goes to *kept
 * (device memory) unless NULL. ext (counting, keys_out NULL): the caller's memory, no key
 * buffers. */
template <typename K, int KM, typename V, int VM>
static kedr_status radix_sort(kedr_ctx *ctx, const K *keys_in, K *keys_out, const V *vals_in,
                              V *vals_out, size_t n, int begin_bit, int end_bit, K clamp,
                              int counting, unsigned long long *kept,
                              const sort_ext *ext = NULL)
{
    cudaStream_t stream = KEDR_STREAM(ctx);
    const size_t vsize = VM == VM_NONE ? 0 : sizeof(V);
    const int npass = (end_bit - begin_bit + 7) / 8;
    if (npass == 0) {
        KEDR_TRY(kedr_copy(ctx, keys_out, keys_in, n * sizeof(K)));
        return vsize ? kedr_copy(ctx, vals_out, vals_in, n * vsize) : KEDR_OK;
    }
    const size_t tile_items = (size_t)SORT_BLOCK * sort_items<K, V, VM>();
    const size_t tiles = (n + tile_items - 1) / tile_items;
    /* meta: digit offsets of every pass, the tile counter (padded), the look-back words. */
    const size_t hist_words = (size_t)MAX_PASSES * RADIX;
    void *meta = NULL, *kb1 = NULL, *vb1 = NULL;
    kedr_status s = KEDR_OK;
    if (ext) {
        meta = ext->meta;
        vb1 = ext->vals_alt;
    } else {
        s = kedr_scratch_get(ctx, &meta, sort_meta_bytes(n, tiles));
        if (s == KEDR_OK && npass >= 2) {
            s = kedr_scratch_get(ctx, &kb1, n * sizeof(K));
            if (s == KEDR_OK && vsize)
                s = kedr_scratch_get(ctx, &vb1, n * vsize);
        }
    }
    if (s == KEDR_OK) {
        unsigned long long *hist = (unsigned long long *)meta;
        unsigned *counter = (unsigned *)(hist + hist_words);
        void *status = hist + hist_words + 2;
        /* Pass p writes the final buffers when npass - 1 - p is even, the others when it is odd,
         * so the last pass lands in the final ones and no pass writes what it reads. */
        K *kfinal = keys_out, *kother = (K *)kb1;
        s = [&]() -> kedr_status {
            KEDR_CUDA_TRY(cudaMemsetAsync(hist, 0, (size_t)npass * RADIX * 8, stream));
            size_t blocks = (n + HIST_BLOCK - 1) / HIST_BLOCK;
            size_t cap = (size_t)ctx->multiprocessors * 4;
            prim_sort_histogram<K, KM><<<(unsigned)(blocks < cap ? blocks : cap), HIST_BLOCK, 0,
                                         stream>>>(keys_in, n, clamp, begin_bit, end_bit, npass,
                                                   counting, hist);
            KEDR_CUDA_LAUNCHED("prim_sort_histogram");
            prim_sort_digit_offsets<<<npass, RADIX, 0, stream>>>(hist, kept);
            KEDR_CUDA_LAUNCHED("prim_sort_digit_offsets");
            const K *ksrc = keys_in;
            const V *vsrc = vals_in;
            for (int p = 0; p < npass; p++) {
                int last = p == npass - 1;
                int to_final = (npass - 1 - p) % 2 == 0;
                pass_args<K, V> a;
                a.keys_in = ext ? keys_in : ksrc;
                a.vals_in = vsrc;
                a.keys_out = last || ext ? keys_out : to_final ? kfinal : kother;
                a.vals_out = to_final ? vals_out : (V *)vb1;
                a.n = n;
                a.clamp = clamp;
                a.drop = counting && last;
                a.shift = begin_bit + 8 * p;
                a.mask = (1u << min(8, end_bit - a.shift)) - 1;
                a.digit_off = hist + (size_t)p * RADIX;
                a.status = status;
                a.tile_counter = counter;
                a.starts = NULL;
                a.total = NULL;
                KEDR_CUDA_TRY(cudaMemsetAsync(
                    counter, 0, 2 * sizeof *hist + tiles * RADIX * status_word_bytes(n), stream));
                if constexpr (VM != VM_NONE) {
                    static_assert(sort_items<K, V, VM_INDEX>() == sort_items<K, V, VM>(),
                                  "the passes of a counting sort share their tiles");
                    constexpr bool may_ext = KM == KM_CLAMP && std::is_same<V, unsigned>::value;
                    if (counting && p == 0)
                        KEDR_TRY((launch_pass<K, KM, V, VM_INDEX>(ctx, a, tiles)));
                    else if (may_ext && ext)
                        KEDR_TRY((launch_pass<K, KM, V, VM, may_ext>(ctx, a, tiles)));
                    else
                        KEDR_TRY((launch_pass<K, KM, V, VM>(ctx, a, tiles)));
                } else {
                    KEDR_TRY((launch_pass<K, KM, V, VM>(ctx, a, tiles)));
                }
                ksrc = a.keys_out;
                vsrc = a.vals_out;
            }
            return KEDR_OK;
        }();
    }
    if (!ext) {
        kedr_scratch_put(ctx, kb1);
        kedr_scratch_put(ctx, vb1);
        kedr_scratch_put(ctx, meta);
    }
    return s;
}

template <typename K, int KM>
static kedr_status sort_values(kedr_ctx *ctx, const void *ki, void *ko, const void *vi, void *vo,
                               size_t vsize, size_t n, int b, int e)
{
    if (vsize == 4)
        return radix_sort<K, KM, unsigned, VM_LOAD>(ctx, (const K *)ki, (K *)ko,
                                                    (const unsigned *)vi, (unsigned *)vo, n, b, e,
                                                    0, 0, NULL);
    if (vsize == 8)
        return radix_sort<K, KM, unsigned long long, VM_LOAD>(
            ctx, (const K *)ki, (K *)ko, (const unsigned long long *)vi, (unsigned long long *)vo,
            n, b, e, 0, 0, NULL);
    return radix_sort<K, KM, unsigned, VM_NONE>(ctx, (const K *)ki, (K *)ko, NULL, NULL, n, b, e,
                                                0, 0, NULL);
}

extern "C" kedr_status prim_sort_cuda(kedr_ctx *ctx, kedr_dtype t, const void *keys_in,
                                      void *keys_out, const void *vals_in, void *vals_out,
                                      size_t vsize, size_t n, int begin_bit, int end_bit)
{
    typedef unsigned long long u64;
    switch (t) {
    case KEDR_U32:
        return sort_values<unsigned, KM_NONE>(ctx, keys_in, keys_out, vals_in, vals_out, vsize, n,
                                              begin_bit, end_bit);
    case KEDR_I32:
        return sort_values<unsigned, KM_SIGN>(ctx, keys_in, keys_out, vals_in, vals_out, vsize, n,
                                              begin_bit, end_bit);
    case KEDR_F32:
        return sort_values<unsigned, KM_FLOAT>(ctx, keys_in, keys_out, vals_in, vals_out, vsize,
                                               n, begin_bit, end_bit);
    case KEDR_U64:
        return sort_values<u64, KM_NONE>(ctx, keys_in, keys_out, vals_in, vals_out, vsize, n,
                                         begin_bit, end_bit);
    case KEDR_F64:
        return sort_values<u64, KM_FLOAT>(ctx, keys_in, keys_out, vals_in, vals_out, vsize, n,
                                          begin_bit, end_bit);
    }
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "prim_sort_cuda: key type %d", (int)t);
}

/* ---- counting sort ------------------------------------------------------------------------ */

/* counts[k] += number of keys equal to k (< nkeys). Lanes holding the same key add once, as a
 * group (match), so that many equal keys do not serialise on one counter. SHARED: per-block
 * counters in shared memory (nkeys small), flushed at the end. */
template <bool SHARED>
__global__ void __launch_bounds__(SCAN_BLOCK)
    prim_count_keys(const unsigned *keys, size_t n, unsigned nkeys, unsigned *counts)
{
    extern __shared__ unsigned local[];
    unsigned *h = SHARED ? local : counts;
    const int lane = threadIdx.x & 31;
    if (SHARED) {
        for (unsigned i = threadIdx.x; i < nkeys; i += SCAN_BLOCK)
            local[i] = 0;
        __syncthreads();
    }
    size_t stride = (size_t)gridDim.x * SCAN_BLOCK;
    /* The loop bound is the same for the whole warp, as the match needs. */
    for (size_t base = (size_t)blockIdx.x * SCAN_BLOCK + (threadIdx.x & ~31u); base < n;
         base += stride) {
        size_t i = base + lane;
        unsigned k = i < n ? keys[i] : nkeys;
        bool ok = k < nkeys;
        unsigned active = __ballot_sync(FULL_MASK, ok);
        if (ok) {
            unsigned peers = __match_any_sync(active, k);
            if (lane == __ffs(peers) - 1)
                atomicAdd(&h[k], (unsigned)__popc(peers));
        }
    }
    if (SHARED) {
        __syncthreads();
        for (unsigned i = threadIdx.x; i < nkeys; i += SCAN_BLOCK)
            if (local[i])
                atomicAdd(&counts[i], local[i]);
    }
}

/* Exclusive scan over the block (SCAN_BLOCK threads or 1024); tmp holds 32 words. */
__device__ unsigned block_exclusive_u32(unsigned x, unsigned *tmp, unsigned *total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    unsigned inc = x;
    for (int o = 1; o < 32; o <<= 1) {
        unsigned y = __shfl_up_sync(FULL_MASK, inc, o);
        if (lane >= o)
            inc += y;
    }
    if (lane == 31)
        tmp[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        unsigned w = lane < nwarps ? tmp[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            unsigned y = __shfl_up_sync(FULL_MASK, w, o);
            if (lane >= o)
                w += y;
        }
        tmp[lane] = w;
    }
    __syncthreads();
    unsigned excl = inc - x + (warp ? tmp[warp - 1] : 0);
    *total = tmp[nwarps - 1];
    __syncthreads();
    return excl;
}

#define SCAN_TILE (SCAN_BLOCK * SCAN_ITEMS)

/* Scan of u32 counts in three steps: tile sums, their scan (one block), each tile again. */
__global__ void __launch_bounds__(SCAN_BLOCK)
    prim_scan_tile_sums(const unsigned *in, size_t n, unsigned *sums)
{
    __shared__ unsigned tmp[32];
    size_t base = (size_t)blockIdx.x * SCAN_TILE;
    unsigned s = 0, total;
    for (int r = 0; r < SCAN_ITEMS; r++) {
        size_t i = base + (size_t)r * SCAN_BLOCK + threadIdx.x;
        if (i < n)
            s += in[i];
    }
    block_exclusive_u32(s, tmp, &total);
    if (threadIdx.x == 0)
        sums[blockIdx.x] = total;
}

__global__ void __launch_bounds__(1024) prim_scan_sums(unsigned *sums, size_t ntiles,
                                                        unsigned *grand_total)
{
    __shared__ unsigned tmp[32];
    size_t per = (ntiles + 1023) / 1024;
    size_t lo = threadIdx.x * per, hi = lo + per < ntiles ? lo + per : ntiles;
    unsigned s = 0, total;
    for (size_t i = lo; i < hi; i++)
        s += sums[i];
    unsigned run = block_exclusive_u32(s, tmp, &total);
    for (size_t i = lo; i < hi; i++) {
        unsigned c = sums[i];
        sums[i] = run;
        run += c;
    }
    if (threadIdx.x == 0)
        *grand_total = total;
}

__global__ void __launch_bounds__(SCAN_BLOCK)
    prim_scan_tiles(const unsigned *in, size_t n, const unsigned *carry, unsigned *out)
{
    __shared__ unsigned tmp[32];
    size_t base = (size_t)blockIdx.x * SCAN_TILE + (size_t)threadIdx.x * SCAN_ITEMS;
    unsigned v[SCAN_ITEMS], s = 0, total;
#pragma unroll
    for (int r = 0; r < SCAN_ITEMS; r++) {
        v[r] = base + r < n ? in[base + r] : 0;
        s += v[r];
    }
    unsigned run = carry[blockIdx.x] + block_exclusive_u32(s, tmp, &total);
#pragma unroll
    for (int r = 0; r < SCAN_ITEMS; r++)
        if (base + r < n) {
            out[base + r] = run;
            run += v[r];
        }
}

/* Per-block shared counters when the histogram fits in 32 KB. */
#define SHARED_KEYS 8192

/* After a STARTS pass: the keys of digits without items (which no item started) start where
 * the digit does, and counts[k] = starts[k + 1] - starts[k], with the kept total past the last
 * key. digit_off: the last pass's digit offsets; shift: its first bit. */
__global__ void __launch_bounds__(SCAN_BLOCK)
    prim_key_counts_last(unsigned *starts, const unsigned long long *digit_off,
                         const unsigned long long *kept, unsigned nkeys, int shift,
                         unsigned *counts)
{
    __shared__ unsigned off[RADIX + 1];
    for (int d = threadIdx.x; d <= RADIX; d += SCAN_BLOCK)
        off[d] = (unsigned)(d < RADIX ? digit_off[d] : *kept);
    __syncthreads();
    for (size_t k = (size_t)blockIdx.x * SCAN_BLOCK + threadIdx.x; k < nkeys;
         k += (size_t)gridDim.x * SCAN_BLOCK) {
        const unsigned d = (unsigned)k >> shift;
        unsigned s0;
        if (off[d] == off[d + 1]) {
            s0 = off[d];
            starts[k] = s0;
        } else {
            s0 = starts[k];
        }
        unsigned s1 = off[RADIX];
        if (k + 1 < nkeys) {
            const unsigned d1 = (unsigned)(k + 1) >> shift;
            s1 = off[d1] == off[d1 + 1] ? off[d1] : starts[k + 1];
        }
        counts[k] = s1 - s0;
    }
}

/* Up to 2 passes (nkeys <= 2^16) the keys are counted with atomics and the counts scanned (with
 * more, counting_by_last_pass). */
static kedr_status counting_by_atomics(kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                       uint32_t nkeys, int bits, uint32_t *perm, uint32_t *starts,
                                       uint32_t *counts, size_t *n_kept, const sort_ext *ext,
                                       void *small)
{
    cudaStream_t stream = KEDR_STREAM(ctx);
    KEDR_CUDA_TRY(cudaMemsetAsync(counts, 0, (size_t)nkeys * sizeof *counts, stream));
    size_t blocks = (n + SCAN_BLOCK - 1) / SCAN_BLOCK;
    size_t cap = (size_t)ctx->multiprocessors * 8;
    unsigned grid = (unsigned)(blocks < cap ? blocks : cap);
    if (nkeys <= SHARED_KEYS)
        prim_count_keys<true><<<grid, SCAN_BLOCK, nkeys * sizeof(unsigned), stream>>>(
            keys, n, nkeys, counts);
    else
        prim_count_keys<false><<<grid, SCAN_BLOCK, 0, stream>>>(keys, n, nkeys, counts);
    KEDR_CUDA_LAUNCHED("prim_count_keys");
    size_t ntiles = ((size_t)nkeys + SCAN_TILE - 1) / SCAN_TILE;
    void *tmp = small;
    if (!ext)
        KEDR_TRY(kedr_scratch_get(ctx, &tmp, (ntiles + 1) * sizeof(unsigned)));
    unsigned *sums = (unsigned *)tmp, *total = sums + ntiles;
    kedr_status s = [&]() -> kedr_status {
        prim_scan_tile_sums<<<(unsigned)ntiles, SCAN_BLOCK, 0, stream>>>(counts, nkeys, sums);
        KEDR_CUDA_LAUNCHED("prim_scan_tile_sums");
        prim_scan_sums<<<1, 1024, 0, stream>>>(sums, ntiles, total);
        KEDR_CUDA_LAUNCHED("prim_scan_sums");
        prim_scan_tiles<<<(unsigned)ntiles, SCAN_BLOCK, 0, stream>>>(counts, nkeys, sums, starts);
        KEDR_CUDA_LAUNCHED("prim_scan_tiles");
        KEDR_TRY((radix_sort<unsigned, KM_CLAMP, unsigned, VM_LOAD>(
            ctx, keys, NULL, NULL, perm, n, 0, bits, nkeys, 1, NULL, ext)));
        if (n_kept) {
            unsigned kept = 0;
            KEDR_CUDA_TRY(cudaMemcpyAsync(&kept, total, sizeof kept, cudaMemcpyDeviceToHost, stream));
            KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
            *n_kept = kept;
        }
        return KEDR_OK;
    }();
    if (!ext)
        kedr_scratch_put(ctx, tmp);
    return s;
}

/* The STARTS pass keeps its tile counter and look-back words (256 bytes, then 64-bit words) in
 * the key buffer that it does not read, free by then, from a 256-byte boundary; where that
 * buffer is too small (a single tile of under 650 or so items) in the meta scratch, whose
 * look-back area holds at least one tile of 64-bit words. */
static size_t last_pass_bytes(size_t tiles)
{
    return 256 + tiles * RADIX * sizeof(unsigned long long);
}

static int last_pass_in_keys(size_t n, size_t tiles)
{
    return last_pass_bytes(tiles) + 252 <= n * sizeof(unsigned);
}

/* Digit offsets of every pass, the tile counter (padded) and the look-back words of the
 * passes before the last, or of the last (64 bits) for a single small tile or in the caller's
 * memory (last_here). */
static size_t counting_sort_meta_bytes(size_t n, size_t tiles, int last_here)
{
    const size_t words = tiles * RADIX * (last_here ? 8 : status_word_bytes(n));
    const size_t one_tile = RADIX * sizeof(unsigned long long);
    return ((size_t)MAX_PASSES * RADIX + 2) * sizeof(unsigned long long) +
           (words > one_tile ? words : one_tile);
}

/* The counting sort's first pass makes the indices and loads no values, so it takes tiles of 24
 * items a thread (2.28 -> 2.14 ms at 2^28 items on an H100, against 20; 24 in the passes that
 * load values was slower); with 64-bit look-back words (n >= 2^30), the common 20. */
#define COUNTING_FIRST_ITEMS 24

template <int VM, typename S, bool STARTS, bool LATE_VALUES, int IPT, bool BY_INDEX = false>
static kedr_status launch_counting_pass(kedr_ctx *ctx, const pass_args<unsigned, unsigned> &a)
{
    const size_t tiles = (a.n + (size_t)SORT_BLOCK * IPT - 1) / ((size_t)SORT_BLOCK * IPT);
    prim_onesweep<unsigned, KM_CLAMP, unsigned, VM, IPT, 2, S, STARTS, LATE_VALUES, BY_INDEX>
        <<<(unsigned)tiles, SORT_BLOCK, 0, KEDR_STREAM(ctx)>>>(a);
    KEDR_CUDA_LAUNCHED("prim_onesweep");
    return KEDR_OK;
}

/* More than 16 bits: a radix sort of (key, index) on the bits the keys need, whose last pass
 * writes the permutation and each key's start but no keys (STARTS); then the empty digits'
 * starts and every count. Atomic counts on 2^24 counters at random took as long as the whole
 * sort (12 ms for 2^28 keys on an H100). Key buffers: the passes alternate between kb[0] and
 * kb[1]; in the caller's memory there are none, the passes after the first read the keys
 * through the indices (BY_INDEX), and the last pass keeps its look-back words in meta. */
static kedr_status counting_by_last_pass(kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                         uint32_t nkeys, int bits, uint32_t *perm,
                                         uint32_t *starts, uint32_t *counts, size_t *n_kept,
                                         const sort_ext *ext, void *small)
{
    typedef unsigned long long u64;
    cudaStream_t stream = KEDR_STREAM(ctx);
    const int npass = (bits + 7) / 8;
    const size_t tile_items = (size_t)SORT_BLOCK * sort_items<unsigned, unsigned, VM_LOAD>();
    const size_t tiles = (n + tile_items - 1) / tile_items;
    void *meta = NULL, *kb[2] = {NULL, NULL}, *vb1 = NULL, *kept = small;
    kedr_status s = KEDR_OK;
    if (ext) {
        meta = ext->meta;
        vb1 = ext->vals_alt;
    } else {
        s = kedr_scratch_get(ctx, &meta, counting_sort_meta_bytes(n, tiles, 0));
        for (int i = 0; i < 2 && s == KEDR_OK; i++)
            s = kedr_scratch_get(ctx, &kb[i], n * sizeof(unsigned));
        if (s == KEDR_OK)
            s = kedr_scratch_get(ctx, &vb1, n * sizeof(unsigned));
        if (s == KEDR_OK)
            s = kedr_scratch_get(ctx, &kept, sizeof(u64));
    }
    if (s == KEDR_OK)
        s = [&]() -> kedr_status {
            const size_t hist_words = (size_t)MAX_PASSES * RADIX;
            u64 *hist = (u64 *)meta, *total = (u64 *)kept;
            unsigned *counter = (unsigned *)(hist + hist_words);
            void *status = hist + hist_words + 2;
            const size_t status_bytes = tiles * RADIX * status_word_bytes(n);
            KEDR_CUDA_TRY(cudaMemsetAsync(hist, 0, (size_t)npass * RADIX * sizeof(u64), stream));
            size_t blocks = (n + HIST_BLOCK - 1) / HIST_BLOCK;
            size_t cap = (size_t)ctx->multiprocessors * 4;
            prim_sort_histogram<unsigned, KM_CLAMP>
                <<<(unsigned)(blocks < cap ? blocks : cap), HIST_BLOCK, 0, stream>>>(
                    keys, n, nkeys, 0, bits, npass, 1, hist);
            KEDR_CUDA_LAUNCHED("prim_sort_histogram");
            prim_sort_digit_offsets<<<npass, RADIX, 0, stream>>>(hist, total);
            KEDR_CUDA_LAUNCHED("prim_sort_digit_offsets");
            for (int p = 0; p < npass; p++) {
                const int last = p == npass - 1;
                pass_args<unsigned, unsigned> a;
                a.keys_in = p && !ext ? (const unsigned *)kb[(p - 1) % 2] : keys;
                a.keys_out = last || ext ? NULL : (unsigned *)kb[p % 2];
                /* The values land in perm after the last pass, so in perm after every other. */
                a.vals_in = p ? ((npass - p) % 2 == 0 ? perm : (unsigned *)vb1) : NULL;
                a.vals_out = (npass - 1 - p) % 2 == 0 ? perm : (unsigned *)vb1;
                a.n = n;
                a.clamp = nkeys;
                a.drop = last;
                a.shift = 8 * p;
                a.mask = (1u << min(8, bits - a.shift)) - 1;
                a.digit_off = hist + (size_t)p * RADIX;
                a.status = status;
                a.tile_counter = counter;
                a.starts = starts;
                a.total = total;
                if (!last) {
                    KEDR_CUDA_TRY(cudaMemsetAsync(counter, 0, 2 * sizeof(u64) + status_bytes,
                                                  stream));
                    if (p == 0 && status_word_bytes(n) == 4)
                        KEDR_TRY((launch_counting_pass<VM_INDEX, unsigned, false, false,
                                                       COUNTING_FIRST_ITEMS>(ctx, a)));
                    else if (p == 0)
                        KEDR_TRY((launch_pass<unsigned, KM_CLAMP, unsigned, VM_INDEX>(ctx, a,
                                                                                      tiles)));
                    else if (ext)
                        KEDR_TRY((launch_pass<unsigned, KM_CLAMP, unsigned, VM_LOAD, true>(
                            ctx, a, tiles)));
                    else
                        KEDR_TRY((launch_pass<unsigned, KM_CLAMP, unsigned, VM_LOAD>(ctx, a,
                                                                                     tiles)));
                    continue;
                }
                char *region;
                if (!ext && last_pass_in_keys(n, tiles)) {
                    uintptr_t free_keys = (uintptr_t)kb[p % 2];
                    region = (char *)((free_keys + 255) & ~(uintptr_t)255);
                    a.tile_counter = (unsigned *)region;
                    a.status = region + 256;
                } else {
                    region = (char *)counter;
                }
                KEDR_CUDA_TRY(cudaMemsetAsync(
                    region, 0, (char *)a.status - region + tiles * RADIX * sizeof(u64), stream));
                constexpr int items = sort_items<unsigned, unsigned, VM_LOAD>();
                if (ext)
                    KEDR_TRY((launch_counting_pass<VM_LOAD, u64, true, false, items, true>(ctx, a)));
                else
                    KEDR_TRY((launch_counting_pass<VM_LOAD, u64, true, true, items>(ctx, a)));
            }
            size_t blocks2 = ((size_t)nkeys + SCAN_BLOCK - 1) / SCAN_BLOCK;
            size_t cap2 = (size_t)ctx->multiprocessors * 16;
            prim_key_counts_last<<<(unsigned)(blocks2 < cap2 ? blocks2 : cap2), SCAN_BLOCK, 0,
                                   stream>>>(starts, hist + (size_t)(npass - 1) * RADIX, total,
                                             nkeys, 8 * (npass - 1), counts);
            KEDR_CUDA_LAUNCHED("prim_key_counts_last");
            if (n_kept) {
                u64 h = 0;
                KEDR_CUDA_TRY(cudaMemcpyAsync(&h, total, sizeof h, cudaMemcpyDeviceToHost, stream));
                KEDR_CUDA_TRY(cudaStreamSynchronize(stream));
                *n_kept = (size_t)h;
            }
            return KEDR_OK;
        }();
    if (!ext) {
        kedr_scratch_put(ctx, kept);
        kedr_scratch_put(ctx, vb1);
        kedr_scratch_put(ctx, kb[1]);
        kedr_scratch_put(ctx, kb[0]);
        kedr_scratch_put(ctx, meta);
    }
    return s;
}

/* The caller's scratch of kedr_counting_sort_in, in 256-byte aligned parts: the look-back
 * words (the last pass's too), and the scan's tile sums or the kept count (the second value
 * buffer is its work block). */
#define EXT_ALIGN(b) (((b) + 255) & ~(size_t)255)
static size_t counting_small_bytes(uint32_t nkeys)
{
    size_t sums = ((size_t)nkeys + SCAN_TILE - 1) / SCAN_TILE + 1;
    return EXT_ALIGN(sums * sizeof(unsigned) > 8 ? sums * sizeof(unsigned) : 8);
}

static size_t counting_meta_bytes(size_t n)
{
    const size_t tile_items = (size_t)SORT_BLOCK * sort_items<unsigned, unsigned, VM_LOAD>();
    return EXT_ALIGN(counting_sort_meta_bytes(n, (n + tile_items - 1) / tile_items, 1));
}

extern "C" size_t prim_counting_sort_scratch_cuda(size_t n, uint32_t nkeys)
{
    return counting_meta_bytes(n) + counting_small_bytes(nkeys);
}

extern "C" kedr_status prim_counting_sort_cuda(kedr_ctx *ctx, const uint32_t *keys, size_t n,
                                               uint32_t nkeys, uint32_t *perm, uint32_t *starts,
                                               uint32_t *counts, size_t *n_kept, void *work,
                                               void *scratch)
{
    if (n == 0) {
        cudaStream_t stream = KEDR_STREAM(ctx);
        KEDR_CUDA_TRY(cudaMemsetAsync(counts, 0, (size_t)nkeys * sizeof *counts, stream));
        KEDR_CUDA_TRY(cudaMemsetAsync(starts, 0, (size_t)nkeys * sizeof *starts, stream));
        if (n_kept)
            *n_kept = 0;
        return KEDR_OK;
    }
    /* The bits of the largest key kept (at least 1); the last pass leaves the others out. */
    int bits = nkeys > 2 ? 32 - __builtin_clz(nkeys - 1) : 1;
    sort_ext ext_mem, *ext = NULL;
    void *small = NULL;
    if (work) {
        ext_mem.meta = scratch;
        small = (char *)scratch + counting_meta_bytes(n);
        ext_mem.vals_alt = work;
        ext = &ext_mem;
    }
    if (bits <= 16)
        return counting_by_atomics(ctx, keys, n, nkeys, bits, perm, starts, counts, n_kept, ext,
                                   small);
    return counting_by_last_pass(ctx, keys, n, nkeys, bits, perm, starts, counts, n_kept, ext,
                                 small);
}
