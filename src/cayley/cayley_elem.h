/* Ranks and products of group elements, shared by the cpu and cuda back ends (host and device
 * code), so that both compute exactly the same neighbours.
 *
 * A permutation of n <= 16 points is packed into 64 bits, 4 bits per position (nibble i = the
 * element at position i). Its rank is the lexicographic Lehmer rank (kedr/cayley.h); ranking and
 * unranking take O(n) steps with popcounts and a nibble list of the unused elements. */
#ifndef CAYLEY_ELEM_H
#define CAYLEY_ELEM_H

#include "kedr/cayley.h"

#ifdef __CUDACC__
#define CAYLEY_HD static __host__ __device__ __forceinline__
#else
#define CAYLEY_HD static inline
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

/* Lehmer rank: Horner's rule over the digits c_i = x[i] - #{j < i : x[j] < x[i]}. */
CAYLEY_HD uint64_t cayley_perm_rank(uint64_t p, int n)
{
    uint32_t used = 0;
    uint64_t r = 0;
    for (int i = 0; i < n; i++) {
        uint32_t v = cayley_nibble(p, i);
        uint32_t c = v - (uint32_t)cayley_popcount16(used & ((1u << v) - 1u));
        used |= 1u << v;
        r = r * (uint64_t)(n - i) + c;
    }
    return r;
}

/* Inverse of cayley_perm_rank: the digits come out from the last (radix 1, 2, ...), are kept as
 * nibbles, and then select from the list of unused elements from the first position. Division
 * is in 32 bits once the remaining rank fits, which it does for the last 12 digits at least. */
CAYLEY_HD uint64_t cayley_perm_unrank(uint64_t r, int n)
{
    uint64_t digits = 0;
    for (int i = n - 1; i >= 0; i--) {
        uint32_t radix = (uint32_t)(n - i), c;
        if (r >> 32) {
            uint64_t q = r / radix;
            c = (uint32_t)(r - q * radix);
            r = q;
        } else {
            uint32_t r32 = (uint32_t)r, q = r32 / radix;
            c = r32 - q * radix;
            r = q;
        }
        digits |= (uint64_t)c << (4 * i);
    }
    uint64_t unused = CAYLEY_NIBBLE_IOTA, p = 0;
    for (int i = 0; i < n; i++) {
        int c = (int)cayley_nibble(digits, i);
        p |= (uint64_t)cayley_nibble(unused, c) << (4 * i);
        /* drop nibble c; the double shift keeps the count below 64 when c = 15 */
        uint64_t low = unused & ((1ull << (4 * c)) - 1ull);
        unused = low | (((unused >> (4 * c)) >> 4) << (4 * c));
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

/* An element unranked once, ready for all its products. */
typedef struct {
    uint64_t rank;
    uint64_t p;  /* packed permutation */
    uint32_t s;  /* signs */
} cayley_elem;

CAYLEY_HD cayley_elem cayley_load(const kedr_cayley_group *g, uint64_t rank)
{
    cayley_elem e;
    e.rank = rank;
    e.p = 0;
    e.s = 0;
    if (g->kind == KEDR_CAYLEY_PERMUTATION) {
        e.p = cayley_perm_unrank(rank, g->n);
    } else if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION) {
        e.s = (uint32_t)(rank & ((1ull << g->n) - 1ull));
        e.p = cayley_perm_unrank(rank >> g->n, g->n);
    }
    return e;
}

/* The rank of e * generator k. */
CAYLEY_HD uint64_t cayley_neighbour(const kedr_cayley_group *g, const cayley_elem *e, int k)
{
    int n = g->n;
    if (g->kind == KEDR_CAYLEY_PERMUTATION)
        return cayley_perm_rank(cayley_perm_apply(e->p, g->perm[k], n), n);
    if (g->kind == KEDR_CAYLEY_SIGNED_PERMUTATION) {
        uint64_t q = cayley_perm_apply(e->p, g->perm[k], n);
        uint32_t t = cayley_signs_apply(e->s, g->perm[k], n) ^ g->flip[k];
        return (cayley_perm_rank(q, n) << n) | t;
    }
    /* abelian: step one coordinate, wrapping around */
    int d = g->dim[k];
    uint64_t stride = g->stride[d], m = g->moduli[d];
    uint64_t x = (e->rank / stride) % m;
    if (g->step[k] > 0)
        return x == m - 1 ? e->rank - (m - 1) * stride : e->rank + stride;
    return x == 0 ? e->rank + (m - 1) * stride : e->rank - stride;
}

#endif
