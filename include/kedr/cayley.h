/* kedr cayley: growth functions, diameters and average distances of Cayley graphs.
 *
 * A group G with a generating set S gives the Cayley graph on the elements of G, with an edge
 * from x to x*s for every s in S. The growth function F(s) counts the elements at distance s
 * from the identity (their word length in S); the diameter D is the largest s with F(s) > 0 and
 * the average distance is sum s F(s) / (elements reached).
 *
 * Dense mode (this version): every element has a rank in [0, |G|) and a level-synchronous
 * breadth-first search keeps three bitmaps of |G| bits (visited, frontier, next), so memory is
 * 3 bits per element whatever the size of the largest sphere. See docs/cayley.md.
 *
 * Groups (the spec strings kedr_cayley_parse accepts):
 *   pancake:N          S_N, prefix reversals of length 2..N                    (N = 2..16)
 *   burnt-pancake:N    signed permutations (order 2^N N!), prefix reversals of length 1..N
 *                      that also flip the sign of each reversed element          (N = 1..16)
 *   bubble:N           S_N, adjacent transpositions (i i+1)                      (N = 2..16)
 *   star:N             S_N, transpositions (1 i), i = 2..N                       (N = 2..16)
 *   transpositions:N   S_N, all transpositions (i j)                             (N = 2..16)
 *   lrx:N              S_N, left cyclic shift, right cyclic shift, swap of positions 1 and 2
 *   abelian:M1,M2,...  Z_M1 x Z_M2 x ..., +1 in each coordinate (M = 2..2^32-1, at most 64
 *                      factors, order at most 2^62)
 *   burnside:K         B_K = B0(2,5)/<a_{K+1},...,a_34>, order 5^K, generators a1 and a2 in the
 *                      pc basis of A. A. Kuznetsov (Prikl. Diskr. Mat. 3(33), 2016), K = 1 to
 *                      the number of Hall polynomials available (BURNSIDE_MAX_K, 14 so far)
 * With inverses set, the inverse of every generator is added (for abelian groups: -1 in each
 * coordinate); generators that coincide are kept once.
 *
 * Ranks. Permutations are ranked lexicographically by their Lehmer code: the permutation
 * x[0..n-1] (x[i] = the element at position i) has rank sum c_i (n-1-i)!, where c_i counts the
 * j > i with x[j] < x[i]; the identity has rank 0. A signed permutation has rank
 * rank(x) * 2^n + signs, bit i of signs being the sign (1 = burnt side up) at position i. An
 * element of Z_M1 x ... x Z_Mk has the mixed-radix rank x_1 + M1 (x_2 + M2 (x_3 + ...)).
 * An element a1^y0 a2^y1 ... of B_K has the base-5 rank y0 + 5 y1 + 25 y2 + ...; generator a1
 * adds 1 to y0 and a2 maps y by the Hall polynomials of data/cayley/burnside-a2.txt (dim[g] is
 * 0 for a1^+-1 and 1 for a2^+-1, step[g] the sign of the exponent).
 * Generators act on positions: applying generator g to x gives y[i] = x[perm[g][i]] (and for
 * signed permutations sign_y[i] = sign_x[perm[g][i]] ^ bit i of flip[g]). */
#ifndef KEDR_CAYLEY_H
#define KEDR_CAYLEY_H

#include "kedr/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KEDR_CAYLEY_MAX_POINTS 16
#define KEDR_CAYLEY_MAX_FACTORS 64
#define KEDR_CAYLEY_MAX_GENERATORS 128

typedef enum {
    KEDR_CAYLEY_PERMUTATION,        /* S_n */
    KEDR_CAYLEY_SIGNED_PERMUTATION, /* the hyperoctahedral group 2^n n! */
    KEDR_CAYLEY_ABELIAN,            /* Z_M1 x ... x Z_Mk */
    KEDR_CAYLEY_BURNSIDE            /* B_K, a quotient of order 5^K of B0(2,5) */
} kedr_cayley_kind;

/* A group with its generating set, made by kedr_cayley_parse. Read-only for callers. */
typedef struct {
    char spec[160];        /* canonical spec, e.g. "pancake:9" */
    char description[96];  /* e.g. "prefix reversals" */
    kedr_cayley_kind kind;
    int n;                 /* points (permutation kinds), factors (abelian) or K (Burnside) */
    uint64_t order;        /* |G| */
    int inverses;          /* inverses were asked for */
    int inverse_closed;    /* the generating set contains the inverse of each of its members */
    int ngens;
    /* permutation kinds: generator g maps x to y with y[i] = x[perm[g][i]] */
    uint8_t perm[KEDR_CAYLEY_MAX_GENERATORS][KEDR_CAYLEY_MAX_POINTS];
    uint16_t flip[KEDR_CAYLEY_MAX_GENERATORS]; /* signed: positions whose sign toggles */
    /* abelian: generator g adds step[g] (+1 or -1) to coordinate dim[g]; Burnside: see above */
    uint8_t dim[KEDR_CAYLEY_MAX_GENERATORS];
    int8_t step[KEDR_CAYLEY_MAX_GENERATORS];
    uint32_t moduli[KEDR_CAYLEY_MAX_FACTORS];
    uint64_t stride[KEDR_CAYLEY_MAX_FACTORS]; /* M1 ... M(i-1): weight of coordinate i in a rank */
} kedr_cayley_group;

/* Parses a group spec (see above). inverses != 0 adds the inverses of the generators.
 * KEDR_ERR_INVALID with a message naming the spec and what was expected, e.g.
 * "pancake:x: expected an integer N from 2 to 16". Free *g with kedr_cayley_group_free. */
kedr_status kedr_cayley_parse(const char *spec, int inverses, kedr_cayley_group **g);
void kedr_cayley_group_free(kedr_cayley_group *g);

/* Entries of an element as kedr_cayley_rank and kedr_cayley_unrank see it: n for permutations
 * (x[i] = the element at position i) and abelian groups (the coordinates), 2n for signed
 * permutations (x[0..n-1] the permutation, x[n+i] the sign 0 or 1 at position i); K for B_K
 * (the exponents y0..y(K-1), each 0..4). */
int kedr_cayley_element_size(const kedr_cayley_group *g);
/* The rank of element x; KEDR_ERR_INVALID when x is not an element of g. */
kedr_status kedr_cayley_rank(const kedr_cayley_group *g, const uint32_t *x, uint64_t *rank);
/* The element of rank `rank`; KEDR_ERR_INVALID when rank >= order. */
kedr_status kedr_cayley_unrank(const kedr_cayley_group *g, uint64_t rank, uint32_t *x);

/* Bytes the dense search needs: three bitmaps of |G| bits (each rounded up to 16 bytes). */
size_t kedr_cayley_dense_bytes(const kedr_cayley_group *g);

/* What kedr_cayley_growth reports after each level. */
typedef struct {
    int level;             /* s */
    uint64_t new_elements; /* F(s) */
    uint64_t reached;      /* F(0) + ... + F(s) */
    double seconds;        /* since the search began */
    double level_seconds;  /* spent on this level */
    double edge_visits;    /* products computed for this level (F(s-1) * generators) */
    size_t memory_bytes;   /* held by the search */
} kedr_cayley_level;

typedef struct {
    /* Refuse to run when the search needs more than this many bytes; 0: what the back end has
     * (free GPU memory, or the host's available memory). */
    size_t memory_limit;
    /* Called after each level when not NULL (from the calling thread). */
    void (*on_level)(const kedr_cayley_level *level, void *user);
    void *user;
} kedr_cayley_options;

typedef struct {
    uint64_t order;          /* |G| */
    uint64_t *growth;        /* F(0..diameter) (malloc'd; kedr_cayley_result_free) */
    int diameter;            /* D */
    uint64_t reached;        /* sum of F(s): equals order when S generates G */
    double average_distance; /* sum s F(s) / reached */
    double edge_visits;      /* products computed: reached * generators */
    double seconds;
    size_t memory_bytes;     /* held by the search */
} kedr_cayley_result;

/* Computes the growth function of g by a dense breadth-first search on ctx's back end. cpu and
 * cuda give identical results. opt may be NULL (defaults). KEDR_ERR_NOMEM, before anything is
 * allocated, when the search needs more memory than it may use: the message says how much. */
kedr_status kedr_cayley_growth(kedr_ctx *ctx, const kedr_cayley_group *g,
                               const kedr_cayley_options *opt, kedr_cayley_result *result);
void kedr_cayley_result_free(kedr_cayley_result *result);

#ifdef __cplusplus
}
#endif
#endif
