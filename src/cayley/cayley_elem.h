/* Ranks and products of group elements, shared by the cpu and cuda back ends (host and device
 * code), so that both compute exactly the same neighbours.
 *
 * A permutation of n <= 16 points is packed into 64 bits, 4 bits per position (nibble i = the
 * element at position i). Its rank counts inversions position by position from the last
 * (kedr/cayley.h); ranking and unranking take O(n) steps with popcounts and a nibble list of the
 * unused elements. */
#ifndef CAYLEY_ELEM_H
#define CAYLEY_ELEM_H

#include "kedr/cayley.h"

#ifdef __CUDACC__
#define CAYLEY_HD static __host__ __device__ __forceinline__
#else
#define CAYLEY_HD static inline
#endif

#ifdef __CUDA_ARCH__
#define CAYLEY_UNROLL _Pragma("unroll")
#else
#define CAYLEY_UNROLL
#endif

#include "burnside_hall.h"

#ifndef __CUDACC__
/* KEDR_ERR_INVALID naming `who` unless g looks like a group made by kedr_cayley_parse: a kind
 * this code knows, an order and a generator count in range (group.c). */
kedr_status cayley_check_group(const kedr_cayley_group *g, const char *who);
/* Replaces each generator of g (a kind made by kedr_cayley_parse) by its inverse (group.c). */
void cayley_invert_generators(kedr_cayley_group *g);
#endif

/* Nibbles 0..15 in order: the list of unused elements before any is taken. */
#define CAYLEY_NIBBLE_IOTA 0xFEDCBA9876543210ull

/* Bits set in a 16-bit value; on the host without a library call (Hacker's Delight 5-2). */
CAYLEY_HD int cayley_popcount16(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return __popc(x);
#else
    x = x - ((x >> 1) & 0x5555u);
    x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
    x = (x + (x >> 4)) & 0x0F0Fu;
    return (int)((x + (x >> 8)) & 0x1Fu);
#endif
}

CAYLEY_HD uint32_t cayley_nibble(uint64_t p, int i) { return (uint32_t)(p >> (4 * i)) & 15u; }

/* Rank of a permutation: position i has the digit d_i = #{j < i : x[j] > x[i]} (0..i, the
 * inversions that end at i) of weight i!, so the last position is the most significant and the
 * identity has rank 0 (kedr/cayley.h). A product that leaves positions k..n-1 unchanged (a
 * prefix reversal of length k, a transposition of two positions below k) leaves rank / k!
 * unchanged, which keeps most products of the prefix-reversal families on their MPI rank
 * (docs/cayley.md, "Which positions choose the rank"). Horner's rule from the last position on
 * the complements v = n - 1 - x[i]: the values at later positions are `used`, and
 * d_i = v - #{used complements below v}. */
CAYLEY_HD uint64_t cayley_perm_rank(uint64_t p, int n)
{
    uint32_t used = 0;
    uint64_t r = 0;
    for (int i = n - 1; i >= 0; i--) {
        uint32_t v = (uint32_t)(n - 1) - cayley_nibble(p, i);
        uint32_t d = v - (uint32_t)cayley_popcount16(used & ((1u << v) - 1u));
        used |= 1u << v;
        r = r * (uint64_t)(i + 1) + d;
    }
    return r;
}

/* Inverse of cayley_perm_rank: the digits come out from the lowest (position i, radix i + 1),
 * are kept as nibbles, and then select from the list of unused complements from the last
 * position (x[i] is the d_i-th largest value not at a later position). Division is in 32 bits
 * once the remaining rank fits, which it does for the last 12 digits at least. */
CAYLEY_HD uint64_t cayley_perm_unrank(uint64_t r, int n)
{
    uint64_t digits = 0;
    for (int i = 0; i < n; i++) {
        uint32_t radix = (uint32_t)(i + 1), d;
        if (r >> 32) {
            uint64_t q = r / radix;
            d = (uint32_t)(r - q * radix);
            r = q;
        } else {
            uint32_t r32 = (uint32_t)r, q = r32 / radix;
            d = r32 - q * radix;
            r = q;
        }
        digits |= (uint64_t)d << (4 * i);
    }
    uint64_t unused = CAYLEY_NIBBLE_IOTA, p = 0;
    for (int i = n - 1; i >= 0; i--) {
        int d = (int)cayley_nibble(digits, i);
        p |= (uint64_t)((uint32_t)(n - 1) - cayley_nibble(unused, d)) << (4 * i);
        /* drop nibble d; the double shift keeps the count below 64 when d = 15 */
        uint64_t low = unused & ((1ull << (4 * d)) - 1ull);
        unused = low | (((unused >> (4 * d)) >> 4) << (4 * d));
    }
    return p;
}

/* y[i] = x[perm[i]] */
CAYLEY_HD uint64_t cayley_perm_apply(uint64_t p, const uint8_t *perm, int n)
{
    uint64_t q = 0;
    for (int i = 0; i < n; i++)
        q |= (uint64_t)cayley_nibble(p, perm[i]) << (4 * i);
    return q;
}

/* The same permutation of positions applied to sign bits. */
CAYLEY_HD uint32_t cayley_signs_apply(uint32_t s, const uint8_t *perm, int n)
{
    uint32_t t = 0;
    for (int i = 0; i < n; i++)
        t |= ((s >> perm[i]) & 1u) << i;
    return t;
}

/* B_K: ranks are base-5 numbers of K digits. 5^13 < 2^32, so a rank splits into two halves of
 * at most 13 digits each that are worked in 32 bits (one 64-bit division at most); K <= 26
 * keeps the order 5^K below 2^62. Loops run to a constant bound, so that on the GPU they unroll
 * and the digits live in registers. */
#define CAYLEY_BURNSIDE_HALF 13
#define CAYLEY_BURNSIDE_POW_HALF 1220703125u /* 5^13 */
#define CAYLEY_BURNSIDE_LIMIT BURNSIDE_MAX_K /* at most 26: the generator's RANK_K */

/* y[0..k) = the base-5 digits of rank < 5^k. */
CAYLEY_HD void cayley_burnside_digits(uint64_t rank, int k, uint32_t *y)
{
    uint32_t lo, hi;
    if (rank >> 32) {
        uint64_t q = rank / CAYLEY_BURNSIDE_POW_HALF;
        lo = (uint32_t)(rank - q * CAYLEY_BURNSIDE_POW_HALF);
        hi = (uint32_t)q;
    } else {
        uint32_t r = (uint32_t)rank;
        hi = r / CAYLEY_BURNSIDE_POW_HALF;
        lo = r - hi * CAYLEY_BURNSIDE_POW_HALF;
    }
    CAYLEY_UNROLL
    for (int i = 0; i < CAYLEY_BURNSIDE_LIMIT; i++) {
        if (i < k) {
            if (i == CAYLEY_BURNSIDE_HALF)
                lo = hi;
            uint32_t q = lo / 5u;
            y[i] = lo - 5u * q;
            lo = q;
        }
    }
}

/* sum z[i] 5^i for i < k, from the lowest digit up, so that each z[i] is dead once added (on
 * the GPU they need not all be held in registers at once). */
CAYLEY_HD uint64_t cayley_burnside_rank(const uint32_t *z, int k)
{
    uint32_t lo = 0, hi = 0, w = 1;
    CAYLEY_UNROLL
    for (int i = 0; i < CAYLEY_BURNSIDE_LIMIT; i++) {
        if (i < k) {
            if (i == CAYLEY_BURNSIDE_HALF)
                w = 1;
            if (i >= CAYLEY_BURNSIDE_HALF)
                hi += z[i] * w;
            else
                lo += z[i] * w;
            w *= 5u;
        }
    }
    return (uint64_t)hi * CAYLEY_BURNSIDE_POW_HALF + lo;
}

/* a2^+-1 on B_K with a chosen basis of layer 7 (burnside:K:ROWS, K = 15..17). Components
 * 14..17 (a15..a18) are central modulo layer 8, and a2 adds to them P(y0..y13), polynomials of
 * the lower components only: z_i = y_i + P_i for i = 14..17. So the K - 14 coordinates
 * c = L (y14..y17) of the quotient by ker L move by L P, where P is computed by the Hall
 * polynomials of components 14..17 with y14..y17 = 0; a2^-1 first undoes a2 on the lower
 * components (y = a2^-1 z there), then subtracts L P(y). */
CAYLEY_HD uint64_t cayley_burnside_layer7_neighbour(const kedr_cayley_group *g, uint64_t rank,
                                                    int up)
{
    uint32_t y[CAYLEY_BURNSIDE_LIMIT] = {0}, z[CAYLEY_BURNSIDE_LIMIT] = {0};
    uint32_t c[3] = {0, 0, 0};
    const int rows = g->layer7_rows;
    cayley_burnside_digits(rank, g->n, y);
    for (int r = 0; r < 3; r++)
        if (r < rows) {
            c[r] = y[14 + r];
            y[14 + r] = 0;
        }
    if (up) {
        burnside_a2(y, z, 18); /* z[0..14): the new lower part; z[14..18): P(y0..y13) */
    } else {
        burnside_a2_inverse(y, z, 14); /* z[0..14): the lower part of the preimage */
        for (int i = 0; i < 14; i++)
            y[i] = z[i];
        burnside_a2(y, z, 18); /* z[14..18): P of the preimage; z[0..14) is not used */
        for (int i = 0; i < 14; i++)
            z[i] = y[i];
    }
    for (int r = 0; r < 3; r++)
        if (r < rows) {
            uint32_t lp = 0;
            for (int j = 0; j < 4; j++)
                lp += (uint32_t)g->layer7[r][j] * z[14 + j];
            lp %= 5u;
            z[14 + r] = (c[r] + (up ? lp : 5u - lp)) % 5u;
        }
    return cayley_burnside_rank(z, g->n);
}

/* The rank of y * generator k of B_K. a1 only changes the lowest digit, y0 = rank mod 5, taken
 * from the two 32-bit halves of the rank since 2^32 = 1 (mod 5). */
CAYLEY_HD uint64_t cayley_burnside_neighbour(const kedr_cayley_group *g, uint64_t rank, int k)
{
    if (g->dim[k] == 0) {
        uint32_t y0 = ((uint32_t)rank % 5u + (uint32_t)(rank >> 32) % 5u) % 5u;
        if (g->step[k] > 0)
            return y0 == 4 ? rank - 4 : rank + 1;
        return y0 == 0 ? rank + 4 : rank - 1;
    }
    if (g->layer7_rows)
        return cayley_burnside_layer7_neighbour(g, rank, g->step[k] > 0);
    /* zeroed only to quiet -Wmaybe-uninitialized: entries from g->n on are never read */
    uint32_t y[CAYLEY_BURNSIDE_LIMIT] = {0}, z[CAYLEY_BURNSIDE_LIMIT] = {0};
    cayley_burnside_digits(rank, g->n, y);
    if (g->step[k] > 0)
        burnside_a2(y, z, g->n);
    else
        burnside_a2_inverse(y, z, g->n);
    return cayley_burnside_rank(z, g->n);
}

/* Whether kind has ranks (the dense search, kedr_cayley_rank); the others are the sparse kinds. */
CAYLEY_HD int cayley_ranked_kind(kedr_cayley_kind kind)
{
    return kind == KEDR_CAYLEY_PERMUTATION || kind == KEDR_CAYLEY_SIGNED_PERMUTATION ||
           kind == KEDR_CAYLEY_ABELIAN || kind == KEDR_CAYLEY_BURNSIDE;
}

/* An element unranked once, ready for all its products. */
typedef struct {
    uint64_t rank;
    uint64_t p;  /* packed permutation */
    uint32_t s;  /* signs */
} cayley_elem;

/* The _as forms take the kind as an argument: called with a constant, as the cuda sweep kernel
 * does (one instance per kind), the code of the other kinds drops out, and with it their
 * registers. */
CAYLEY_HD cayley_elem cayley_load_as(const kedr_cayley_group *g, uint64_t rank,
                                     kedr_cayley_kind kind)
{
    cayley_elem e;
    e.rank = rank;
    e.p = 0;
    e.s = 0;
    if (kind == KEDR_CAYLEY_PERMUTATION) {
        e.p = cayley_perm_unrank(rank, g->n);
    } else if (kind == KEDR_CAYLEY_SIGNED_PERMUTATION) {
        e.s = (uint32_t)(rank & ((1ull << g->n) - 1ull));
        e.p = cayley_perm_unrank(rank >> g->n, g->n);
    }
    return e;
}

/* The rank of e * generator k. */
CAYLEY_HD uint64_t cayley_neighbour_as(const kedr_cayley_group *g, const cayley_elem *e, int k,
                                       kedr_cayley_kind kind)
{
    int n = g->n;
    if (kind == KEDR_CAYLEY_PERMUTATION)
        return cayley_perm_rank(cayley_perm_apply(e->p, g->perm[k], n), n);
    if (kind == KEDR_CAYLEY_SIGNED_PERMUTATION) {
        uint64_t q = cayley_perm_apply(e->p, g->perm[k], n);
        uint32_t t = cayley_signs_apply(e->s, g->perm[k], n) ^ g->flip[k];
        return (cayley_perm_rank(q, n) << n) | t;
    }
    if (kind == KEDR_CAYLEY_BURNSIDE)
        return cayley_burnside_neighbour(g, e->rank, k);
    if (kind == KEDR_CAYLEY_ABELIAN) { /* step one coordinate, wrapping around */
        int d = g->dim[k];
        uint64_t stride = g->stride[d], m = g->moduli[d];
        uint64_t x = (e->rank / stride) % m;
        if (g->step[k] > 0)
            return x == m - 1 ? e->rank - (m - 1) * stride : e->rank + stride;
        return x == 0 ? e->rank + (m - 1) * stride : e->rank - stride;
    }
    /* no other kind gets here: cayley_check_group refuses a kind that is not ranked before any
     * search or query begins */
    return e->rank;
}

CAYLEY_HD cayley_elem cayley_load(const kedr_cayley_group *g, uint64_t rank)
{
    return cayley_load_as(g, rank, g->kind);
}

CAYLEY_HD uint64_t cayley_neighbour(const kedr_cayley_group *g, const cayley_elem *e, int k)
{
    return cayley_neighbour_as(g, e, k, g->kind);
}

#endif
