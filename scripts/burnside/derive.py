#!/usr/bin/env python3
"""Derive the Hall polynomials of left multiplication by a2 (and a2^-1) in
B0(2,5) from the pc presentation data/cayley/burnside-pc.txt, by interpolation
over Z_5, and check components 0..13 against seed 004 (seed004.txt).

usage (from the repository root): python3 scripts/burnside/derive.py [--slack S]

For g = a2^s * y (s = 1 or 4) each component z_i is a function Z_5^34 -> Z_5,
hence a polynomial of degree < 5 in each variable. Written in the binomial
basis prod_j C(y_j, e_j), its coefficient at e is the finite difference
(Delta^e z_i)(0), which needs z_i only at the points d <= e (Newton's forward
differences). The points used are the exponent vectors e with e_j <= 4 and
sum_j e_j w(a_j) <= 12 + slack, a downward-closed set; the coefficients found
there are exact. The weight bound (a term prod y_j^e_j occurs in z_i only if
sum e_j w(a_j) <= w(a_i)) is not assumed: every coefficient in the slack band
above w(a_i), and every coefficient of a variable y_j, j > i, other than the
term y_i itself, must come out zero, or the script fails. check.py then
compares the polynomials with collection on random elements.
"""

import os
import sys
import time

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
P = pc.P


def points(weights, bound):
    """All exponent vectors with entries < 5 and weighted degree <= bound."""
    n = len(weights)
    out = []

    def rec(j, e, w):
        if j == n:
            out.append(tuple(e))
            return
        for x in range(P):
            if w + x * weights[j] > bound:
                break
            e.append(x)
            rec(j + 1, e, w + x * weights[j])
            e.pop()
    rec(0, [], 0)
    return out


def newton(values, pts, n):
    """In place: values[e] := (Delta^e f)(0) for all e in the downward-closed pts."""
    by_var = []
    for j in range(n):
        by_var.append(sorted((e for e in pts if e[j]), key=lambda e: -e[j]))
    for j in range(n):
        for t in range(1, P):
            for e in by_var[j]:
                if e[j] < t:
                    break
                d = e[:j] + (e[j] - 1,) + e[j + 1:]
                values[e] = [(a - b) % P for a, b in zip(values[e], values[d])]


def binomial_poly():
    """C(y, k) over Z_5 as coefficient lists in y, k = 0..4."""
    polys = []
    for k in range(P):
        c = [1]
        for m in range(k):            # multiply by (y - m)
            c = [((c[i - 1] if i else 0) - m * (c[i] if i < len(c) else 0)) % P
                 for i in range(len(c) + 1)]
        fact = 1
        for m in range(2, k + 1):
            fact *= m
        inv = pow(fact, P - 2, P)
        polys.append([x * inv % P for x in c])
    return polys


def to_monomials(coeffs, n):
    """{binomial exponent e: c} -> {monomial exponent: c} over Z_5."""
    bp = binomial_poly()
    out = {}
    for e, c in coeffs.items():
        terms = {(): c}
        for j in range(n):
            if not e[j]:
                continue
            nt = {}
            for mono, a in terms.items():
                for m, b in enumerate(bp[e[j]]):
                    if b:
                        k = mono + ((j, m),) if m else mono
                        nt[k] = (nt.get(k, 0) + a * b) % P
            terms = nt
        for mono, a in terms.items():
            v = [0] * n
            for j, m in mono:
                v[j] = m
            k = tuple(v)
            out[k] = (out.get(k, 0) + a) % P
    return {k: c for k, c in out.items() if c}


def derive(pres, power, slack):
    n = pres.n
    w = pres.weights
    pts = points(w, max(w) + slack)
    left = pres.gen(1, power)
    t0 = time.time()
    values = {e: pres.mul(left, list(e)) for e in pts}
    print('  %d products by collection in %.0f s' % (len(pts), time.time() - t0), file=sys.stderr)
    newton(values, pts, n)
    polys = []
    for i in range(n):
        coeffs = {}
        for e in pts:
            c = values[e][i]
            if not c:
                continue
            wd = sum(x * w[j] for j, x in enumerate(e))
            later = any(e[j] for j in range(i + 1, n))
            if wd > w[i] or later:
                sys.exit('derive.py: z%d has a term %s beyond the weight bound (weight %d > %d)'
                         ' or in a later variable' % (i, e, wd, w[i]))
            coeffs[e] = c
        polys.append(to_monomials(coeffs, n))
    return polys


def write(path, polys, header):
    with open(path, 'w') as f:
        for line in header:
            f.write('# ' + line + '\n' if line else '#\n')
        for i, poly in enumerate(polys):
            f.write('z%d = %s\n' % (i, pc.format_poly(i, poly)))


HEADER = [
    'Hall polynomials of B0(2,5): the normal form z of %s, for',
    'y = a1^y0 a2^y1 ... a34^y33 in the pc presentation data/cayley/burnside-pc.txt',
    '(basis of seed 004 for a1..a14, extended by the same commutator rule to a34).',
    'Arithmetic over Z_5. Generated by scripts/burnside/derive.py; do not edit.',
    'One line per component i = 0..33; component i depends on y0..yi only, so the',
    'first k lines give the product in B_k = B0(2,5)/<a_{k+1},...,a_34>.',
    'Term order: y_i first, then the constant, then by total degree, then by the',
    'exponent vector (e_0, e_1, ...) in decreasing lexicographic order.',
]


def main():
    slack = 2
    args = sys.argv[1:]
    if args[:1] == ['--slack'] and len(args) == 2:
        slack = int(args[1])
    elif args:
        sys.exit('usage: derive.py [--slack S]')
    pres = pc.Presentation.load(os.path.join(ROOT, 'data/cayley/burnside-pc.txt'))
    seed = pc.load_polys(os.path.join(HERE, 'seed004.txt'), pres.n)

    print('deriving a2 * y (slack %d)' % slack, file=sys.stderr)
    a2 = derive(pres, 1, slack)
    for i, poly in enumerate(seed):
        if a2[i] != poly:
            sys.exit('derive.py: z%d differs from seed 004:\n  derived %s\n  seed    %s'
                     % (i, pc.format_poly(i, a2[i]), pc.format_poly(i, poly)))
    print('components 0..%d equal seed 004' % (len(seed) - 1), file=sys.stderr)
    write(os.path.join(ROOT, 'data/cayley/burnside-a2.txt'), a2,
          [HEADER[0] % 'a2 * y'] + HEADER[1:])

    print('deriving a2^-1 * y', file=sys.stderr)
    a2inv = derive(pres, P - 1, slack)
    write(os.path.join(ROOT, 'data/cayley/burnside-a2inv.txt'), a2inv,
          [HEADER[0] % 'a2^-1 * y'] + HEADER[1:])
    print('wrote data/cayley/burnside-a2.txt and burnside-a2inv.txt', file=sys.stderr)


if __name__ == '__main__':
    main()
