#!/usr/bin/env python3
"""Which layer-7 quotients of B_18 have the same Cayley graphs (docs/cayley.md, "Another basis of
layer 7").

B_15, B_16 and B_17 in the basis `burnside:K:ROWS` are B_18 / W, W = ker L the kernel of the
K - 14 rows L over Z_5 acting on the exponents (y14..y17) of a15..a18. B(2,5) is relatively free
on a1, a2, so every permutation of {a1, a2, a1^-1, a2^-1} that respects inverses is an
automorphism phi; it keeps the lower central series, so it acts on layer 7 by a matrix M, and it
maps B_18 / W onto B_18 / phi(W), phi(W) = ker(L M^-1), taking the generators S to phi(S):
 - the swap (a1 <-> a2) and the inversion (a1, a2 -> a1^-1, a2^-1) keep the diameter with
   {a1, a2} (the swap keeps S; a Cayley graph of S^-1 has the diameter of S's);
 - all eight (also a1 -> a2, a2 -> a1^-1 and the like) keep the diameter with
   {a1^+-1, a2^+-1}.
So diameters are constant on the orbits of these groups, and a search over the quotients needs
one quotient an orbit. This script computes the matrices by collection in the consistent pc
presentation (data/cayley/burnside-pc.txt, scripts/burnside/pc.py), prints the orbits of the
quotients for K = 15, 16, 17, and with --check K:GROUP:ROWS,... checks that a set of quotients
(e.g. those of one diameter) is a union of orbits of GROUP (plain: the swap and the inversion,
for diameters with {a1, a2}; signed: all eight, for diameters with {a1^+-1, a2^+-1}); -v lists
the orbits. It also checks what the matrices must satisfy: the inversion is -1 on layer 7 (odd
weight), the swap is an involution, and every phi maps layer 7 onto itself.

With --reps K:GROUP it prints one quotient an orbit instead, as `burnside:K:ROWS` lines, the
list that scripts/cayley/layer7-search.sh searches when given it as SPECS.

With --kuznetsov it prints the layer-7 exponents of every commutator [a_i, a_j] of weight 7
(a_i, a_j among a1..a14, Kuznetsov's generators there) with its multidegree in (a1, a2): they
lie in V(4,3) = span(a15, a16) or V(3,4) = span(a17, a18) of nq's basis. A basis of
commutators is homogeneous, so its B_17 kills a line of V(4,3) or of V(3,4), 6 orbits of the
swap in all, searched on GPUs: only [a14,a1]'s line gives the published (55, 34). Then it
prints the quotients of Kuznetsov's basis as reconstructed (docs/cayley.md, "Kuznetsov's
basis"): a15 = [a11,a2], a16 = [a9,a3], a17 = [a12,a2], a18 = [a14,a1], B_K = B_18 / span of
a_{K+1}..a18, as the `burnside:K:ROWS` specs that `kedr cayley burnside:K --basis kuznetsov`
searches.

    python3 scripts/cayley/layer7-symmetry.py [K ...] [-v] [--check 15:plain:1010,1011,...]
    python3 scripts/cayley/layer7-symmetry.py --reps 17:signed > b17-signed.txt
    python3 scripts/cayley/layer7-symmetry.py --kuznetsov
"""

import itertools
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'burnside'))
import pc  # noqa: E402

P = 5
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')


def definitions(path):
    """a_k = [a_i, a_j] for k = 3.. from the presentation file's comment (0-based)."""
    defs = {}
    rx = re.compile(r'^#\s+a(\d+) = \[a(\d+),a(\d+)\]')
    with open(path) as f:
        for line in f:
            m = rx.match(line)
            if m:
                defs[int(m.group(1)) - 1] = (int(m.group(2)) - 1, int(m.group(3)) - 1)
    return defs


class Group:
    def __init__(self, n=18):
        path = os.path.join(ROOT, 'data', 'cayley', 'burnside-pc.txt')
        self.g = pc.Presentation.load(path).truncate(n)
        self.defs = definitions(path)
        self.n = n

    def mul(self, x, y):
        return self.g.mul(x, y)

    def inv(self, x):  # exponent 5: x^-1 = x^4
        r = list(x)
        for _ in range(3):
            r = self.mul(r, x)
        return r

    def comm(self, x, y):  # [x, y] = x^-1 y^-1 x y
        return self.mul(self.mul(self.mul(self.inv(x), self.inv(y)), x), y)

    def images(self, a1, a2):
        """phi(a_k) for every pc generator, phi given by the images of a1 and a2."""
        im = {0: a1, 1: a2}
        for k in range(2, self.n):
            i, j = self.defs[k]
            im[k] = self.comm(im[i], im[j])
        return im

    def layer7_matrix(self, a1, a2):
        """M with column j = the layer-7 exponents of phi(a_{15+j})."""
        im = self.images(a1, a2)
        cols = []
        for k in range(14, 18):
            v = im[k]
            if any(v[:14]):
                raise ValueError('phi(a%d) is not in layer 7' % (k + 1))
            cols.append(v[14:18])
        return [[cols[j][i] for j in range(4)] for i in range(4)]


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) % P for j in range(len(b[0]))]
            for i in range(len(a))]


def inverse(m):
    n = len(m)
    a = [list(r) + [int(i == j) for j in range(n)] for i, r in enumerate(m)]
    for c in range(n):
        piv = next(r for r in range(c, n) if a[r][c])
        a[c], a[piv] = a[piv], a[c]
        s = pow(a[c][c], P - 2, P)
        a[c] = [x * s % P for x in a[c]]
        for r in range(n):
            if r != c and a[r][c]:
                f = a[r][c]
                a[r] = [(x - f * y) % P for x, y in zip(a[r], a[c])]
    return [r[n:] for r in a]


def rref(rows):
    rows = [list(r) for r in rows]
    out, col = [], 0
    for col in range(4):
        piv = next((r for r in rows if r[col]), None)
        if piv is None:
            continue
        rows.remove(piv)
        s = pow(piv[col], P - 2, P)
        piv = [x * s % P for x in piv]
        rows = [[(x - r[col] * y) % P for x, y in zip(r, piv)] for r in rows]
        out = [[(x - r[col] * y) % P for x, y in zip(r, piv)] for r in out]
        out.append(piv)
    return tuple(tuple(r) for r in sorted(out, key=lambda r: next(i for i, x in enumerate(r) if x)))


def spec(rows):
    return '/'.join(''.join(str(x) for x in r) for r in rows)


def parse(text):
    return rref([[int(c) for c in r] for r in text.split('/')])


def quotients(k):
    """Every W of dimension 18 - k, as the reduced row echelon form of the k - 14 rows whose
    kernel it is (the order of scripts/cayley/layer7-search.sh)."""
    rows, out = k - 14, []
    for pivots in itertools.combinations(range(4), rows):
        free = [(r, c) for r in range(rows) for c in range(4) if c > pivots[r] and c not in pivots]
        for vals in itertools.product(range(P), repeat=len(free)):
            m = [[1 if c == pivots[r] else 0 for c in range(4)] for r in range(rows)]
            for (r, c), v in zip(free, vals):
                m[r][c] = v
            out.append(rref(m))
    return sorted(set(out))


WEIGHT = [1, 1, 2, 3, 3, 4, 4, 4, 5, 5, 6, 6, 6, 6]
KUZNETSOV = [(11, 2), (9, 3), (12, 2), (14, 1)]  # a15..a18 as [a_i, a_j], 1-based


def degree(G, k):
    """(degree in a1, degree in a2) of a_k (0-based) from its definition."""
    if k < 2:
        return (1, 0) if k == 0 else (0, 1)
    i, j = G.defs[k]
    a, b = degree(G, i), degree(G, j)
    return (a[0] + b[0], a[1] + b[1])


def kernel_rows(vectors):
    """The reduced row echelon rows L with ker L = span(vectors) in Z_5^4."""
    basis = rref(vectors) if vectors else ()
    # the rows annihilating the span: the null space of the span's matrix
    rows = []
    for cand in itertools.product(range(P), repeat=4):
        if any(cand) and all(sum(c * v for c, v in zip(cand, b)) % P == 0 for b in basis):
            rows.append(cand)
    return rref(rows)


def kuznetsov(G):
    gen = [G.g.gen(k) for k in range(14)]
    print('weight-7 commutators of a1..a14: layer-7 exponents (a15..a18 of nq) and multidegree')
    vec = {}
    for i in range(14):
        for j in range(i):
            if WEIGHT[i] + WEIGHT[j] != 7:
                continue
            c = G.comm(gen[i], gen[j])
            if any(c[:14]):
                raise ValueError('[a%d,a%d] is not in layer 7' % (i + 1, j + 1))
            v = tuple(c[14:18])
            di, dj = degree(G, i), degree(G, j)
            deg = (di[0] + dj[0], di[1] + dj[1])
            part = 'V(4,3)' if v[2:] == (0, 0) else 'V(3,4)' if v[:2] == (0, 0) else 'mixed'
            if any(v) and part != ('V(%d,%d)' % deg):
                raise ValueError('[a%d,a%d] of degree %s lies in %s' % (i + 1, j + 1, deg, part))
            vec[(i + 1, j + 1)] = v
            print('  [a%d,a%d]  %s  degree %s  %s' % (i + 1, j + 1, ''.join(map(str, v)), deg,
                                                    part if any(v) else 'trivial'))
    basis = [vec[ij] for ij in KUZNETSOV]
    if len(rref(basis)) != 4:
        raise ValueError('the reconstructed a15..a18 are not a basis of layer 7')
    print("Kuznetsov's basis (reconstructed): " + ', '.join(
        'a%d = [a%d,a%d]' % (15 + n, i, j) for n, (i, j) in enumerate(KUZNETSOV)))
    for k in (15, 16, 17):
        rows = kernel_rows(basis[k - 14:])
        plain = rows == tuple(tuple(int(r == c) for c in range(4)) for r in range(k - 14))
        print('kuznetsov burnside:%d%s' % (k, '' if plain else ':' + spec(rows)))
    return 0


def main(argv):
    ks, checks, reps = [], [], None
    if '--kuznetsov' in argv:
        return kuznetsov(Group())
    i = 0
    while i < len(argv):
        if argv[i] == '--reps':
            kk, grp = argv[i + 1].split(':')
            if grp not in ('plain', 'signed') or kk not in ('15', '16', '17'):
                sys.exit('--reps %s: expected K:plain or K:signed, K = 15, 16 or 17' % argv[i + 1])
            reps = (int(kk), grp)
            i += 2
            continue
        if argv[i] == '--check':
            kk, grp, rows = argv[i + 1].split(':')
            if grp not in ('plain', 'signed'):
                sys.exit('--check %s: expected K:plain:ROWS or K:signed:ROWS' % argv[i + 1])
            checks.append((int(kk), grp, [parse(r) for r in rows.split(',')]))
            i += 2
        elif argv[i] == '-v':
            i += 1
        else:
            ks.append(int(argv[i]))
            i += 1
    G = Group()
    a1, a2 = G.g.gen(0), G.g.gen(1)
    i1, i2 = G.inv(a1), G.inv(a2)
    # generators of the two symmetry groups (images of a1, a2)
    plain = {'swap': (a2, a1), 'inverse': (i1, i2)}
    signed = dict(plain, turn=(a2, i1))
    mats = {name: G.layer7_matrix(*im) for name, im in signed.items()}
    for name, m in mats.items():
        print('%-8s M = %s' % (name, ' '.join(''.join(str(x) for x in r) for r in m)),
              file=sys.stderr if reps else sys.stdout)
    eye = [[int(i == j) for j in range(4)] for i in range(4)]
    bad = 0
    if mats['inverse'] != [[(P - 1) * x for x in r] for r in eye]:
        bad += 1
        print('the inversion is not -1 on layer 7')
    if matmul(mats['swap'], mats['swap']) != eye:
        bad += 1
        print('the swap is not an involution on layer 7')
    # phi maps ker L to ker (L M^-1)
    acts = {name: inverse(m) for name, m in mats.items()}

    def orbits(qs, names):
        left, out = set(qs), []
        while left:
            q = min(left)
            orb, todo = {q}, [q]
            while todo:
                x = todo.pop()
                for nm in names:
                    y = rref(matmul([list(r) for r in x], acts[nm]))
                    if y not in orb:
                        orb.add(y)
                        todo.append(y)
            out.append(sorted(orb))
            left -= orb
        return sorted(out)

    if reps:
        names = list(plain) if reps[1] == 'plain' else list(signed)
        for o in orbits(quotients(reps[0]), names):
            print('burnside:%d:%s' % (reps[0], spec(o[0])))
        return 1 if bad else 0
    for k in ks or [15, 16, 17]:
        qs = quotients(k)
        for label, names in (('{a1, a2}', list(plain)), ('{a1^+-1, a2^+-1}', list(signed))):
            orbs = orbits(qs, names)
            sizes = {}
            for o in orbs:
                sizes[len(o)] = sizes.get(len(o), 0) + 1
            print('K = %d, %s: %d quotients in %d orbits (sizes %s)' % (
                k, label, len(qs), len(orbs),
                ', '.join('%d x %d' % (c, s) for s, c in sorted(sizes.items()))))
            if '-v' in argv:
                for o in orbs:
                    print('  ' + ' '.join(spec(r) for r in o))
    for k, grp, rows in checks:
        names = list(plain) if grp == 'plain' else list(signed)
        given, split = set(rows), 0
        for o in orbits(quotients(k), names):
            inside = given & set(o)
            if inside and inside != set(o):
                split += 1
                print('check K = %d, %s: the orbit %s is only partly in the set (%s)' % (
                    k, grp, ' '.join(spec(r) for r in o), ' '.join(spec(r) for r in sorted(inside))))
        print('check K = %d, %s: %d quotients given, %s' % (
            k, grp, len(given), 'NOT a union of orbits' if split else 'a union of orbits'))
        bad += split
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
